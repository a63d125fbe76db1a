/* The graph IR: what a trace records and the ONNX writer reads. Values (graph inputs,
 * initializers, node outputs), ONNX nodes in execution order, and initializers that hold
 * tensors. Strings, node operand lists and attributes live in the graph's arena and are freed
 * with it in one call. Internal: nothing here is public API. */
#ifndef OM_GRAPH_H
#define OM_GRAPH_H

#include "internal.h"

/* A bump allocator: blocks freed all at once. */
typedef struct om_arena_block om_arena_block;
typedef struct om_arena {
  om_arena_block *head;
} om_arena;
/** n zeroed bytes from the arena; NULL with OutOfMemory. */
void *om__arena_alloc(om_arena *a, size_t n);
/** A copy of s in the arena; NULL with OutOfMemory. */
char *om__arena_strdup(om_arena *a, const char *s);
/** A printf-formatted string in the arena; NULL with OutOfMemory. */
char *om__arena_printf(om_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Frees every block. */
void om__arena_free(om_arena *a);

/* What an imported graph's value is (ONNX's TypeProto): a tensor (all a trace makes), a sequence of
 * tensors, or an optional holding one or nothing. */
typedef enum om_gkind { OM_GKIND_TENSOR, OM_GKIND_SEQUENCE, OM_GKIND_OPTIONAL, OM_GKIND_OPTIONAL_SEQUENCE } om_gkind;

/* One value: a graph input, an initializer or a node output. */
typedef struct om_gvalue {
  const char *name;                   /* arena string; generated names are given at finish */
  om_dtype dtype;
  int etype;                          /* an imported graph's ONNX element type (TensorProto.DataType) where dtype holds a
                                         narrower one (INT8 in int64, FLOAT16 in float32: docs/graph-runtime.md), else 0;
                                         a node output's: the type the file declares for it as a graph output, 0 for none */
  int ndim;
  int64_t shape[OM_MAX_DIMS];         /* sizes in the traced run */
  const int64_t *decl_shape;          /* an imported node output's sizes as the file declares them for a graph output
                                         (arena; -1 where symbolic; decl_ndim of them), NULL for none: the session
                                         refuses a plan whose computed shape contradicts it, as onnxruntime does */
  int decl_ndim;
  const char *dim_param[OM_MAX_DIMS]; /* each axis's extent written out ("batch", "floor((h+1)/2)"), NULL when fixed */
  int ext[OM_MAX_DIMS];               /* while tracing: each axis's extent (an expression id), -1 when fixed */
  int producer;                       /* the node that writes it, -1 for inputs and initializers */
  int init;                           /* its initializer, -1 otherwise */
  bool live;                          /* scratch for pruning */
  /* computed from the inputs' shapes and from constants only (a Shape node, a Range or a
   * causal mask on it): the tracer writes each such computation once (om__emit) */
  bool shape_only;
  /* 0, 1, ..., n - 1 along its one axis of extent n (an expression id), every other axis of size
   * 1 (the Range the tracer writes for arange(n) at a symbolic size, unsqueezed), else -1: a
   * Gather of it is a Slice */
  int iota;
  /* in a subgraph: the enclosing graph's value this one names (ONNX's outer scope), else -1 */
  int outer;
  om_gkind kind; /* a graph input's (its dtype and etype: a sequence's elements'; no shape), else a tensor */
  int decl_type; /* a subgraph input's element type as the file declares it (TensorProto.DataType), 0 where it leaves
                    it out (its node gives it): the session checks it against the node's at create */
} om_gvalue;

/* One ONNX node. */
typedef struct om_gnode {
  const char *op_type; /* static string (the reader's: in the arena) */
  const char *name;    /* given at finish */
  om_op op;            /* the library op whose lowering wrote it */
  int n_in, n_out, n_attrs;
  int *in;             /* value ids, -1 for an omitted optional input */
  int *out;
  om_gattr *attrs;     /* INTS arrays copied into the arena */
  int n_cap;           /* the values of this graph its subgraphs read (outer scope): ordered after */
  int *cap;
} om_gnode;

/* An initializer: a tensor whose logical elements (row-major) are the values. */
typedef struct om_ginit {
  int value;
  om_tensor *tensor;   /* owned header on the captured view's storage (or on a lowering's constant); NULL for strings */
  om_strings *str;     /* an imported STRING initializer's elements (a reference), else NULL */
  uint64_t version;    /* its storage's version when captured */
  om_op first_use;     /* the op that first read it, for messages */
  bool generated;      /* made by a lowering (shape operands), deduplicated by value */
  om_snapshot *snap;   /* in a finished model: its entry on the storage's copy-on-write list */
  const char **aliases; /* the other state-dict names it holds (tied weights, equal contents stored once), in the
                           graph's arena; what the inspector and a reader show beside its name */
  int n_aliases;
} om_ginit;

/* A growable array of T: items, count, capacity. */
#define OM_VEC(T) struct { T *v; int n, cap; }

typedef struct om_graph {
  om_arena arena;
  OM_VEC(om_gvalue) values;
  OM_VEC(om_gnode) nodes;
  OM_VEC(om_ginit) inits;
  OM_VEC(int) inputs;  /* value ids of the graph inputs, in declaration order */
  OM_VEC(int) outputs; /* value ids of the graph outputs, in the requested order */
  OM_VEC(int) captured; /* a subgraph's values that name an enclosing graph's (their `outer`) */
} om_graph;

/** Room for one more item in a vec (grows by doubling); false with OutOfMemory. */
bool om__vec_grow(void **items, int *cap, int n, size_t item_size);
#define OM_VEC_PUSH_SLOT(vec) \
  ((vec).n < (vec).cap || om__vec_grow((void **)&(vec).v, &(vec).cap, (vec).n, sizeof *(vec).v) ? &(vec).v[(vec).n++] : NULL)

/** A new value of the given type; returns its id, -1 with OutOfMemory. */
int om__graph_value(om_graph *g, om_dtype dtype, int ndim, const int64_t *shape);
/** Appends a node to g: op_type (static, or in g's arena), name (copied; NULL none), reading in
 *  (n_in), writing out (n_out: their producer set), with attrs (copied; what they point to
 *  borrowed). Its index; -1 with OutOfMemory. */
int om__graph_add_node(om_graph *g, const char *op_type, const char *name, const int *in, int n_in, const int *out, int n_out,
                       const om_gattr *attrs, int n_attrs);
/** Sets node n's captures (n->cap, n->n_cap; in g's arena): the values of g its graph attributes
 *  read (their captured values' outer ids), each once. false with OutOfMemory. */
bool om__graph_node_captures(om_graph *g, om_gnode *n);
/** Init's aliases (from, borrowed) copied into g's arena as init's; false with OutOfMemory. */
bool om__ginit_aliases(om_graph *g, om_ginit *init, const om_ginit *from);
/** A deep copy of src into dst (its own arena and arrays; constants are new headers on the same
 *  storages, each registered for a copy on write where src's are); false with OutOfMemory (dst
 *  then holds nothing). */
bool om__graph_copy(om_graph *dst, const om_graph *src);
/** The graph of an ONNX ModelProto's bytes (borrowed) into g (src/onnx/reader.c), its nodes as
 *  the file's opset has them, and that default-domain opset into *opset; false with a Format or
 *  Unsupported error naming what is wrong (g then holds nothing). */
bool om__onnx_read(const void *bytes, size_t n, om_graph *g, int *opset);
/** Frees everything the graph holds (releases initializer tensors, unlinks snapshots). */
void om__graph_free(om_graph *g);

/* A symbolic axis of a finished trace: the sizes the graph is exact for (docs/symbolic-axes.md). */
typedef struct om_traced_symbol {
  const char *name;
  int64_t multiple, min, max;    /* max INT64_MAX: no bound */
  const char *min_why, *max_why; /* the call that narrowed the range, NULL when declared */
  int64_t checked_min, checked_max; /* the sizes the runs checked the graph over (not in the library format) */
  int n_branches;                /* the graph is an If on this symbol's size: its pieces, 0 when none */
  int64_t *branches;             /* (min, max) each, in order (in the model's arena; in the library format since v3) */
} om_traced_sym;

/** Whether bytes[0..n) begin as the library format does (src/ir/format.c). */
bool om__format_is(const void *bytes, size_t n);
/** Streams g and its symbols (borrowed) as the library format v1 through write; false on error
 *  (the sink's refusal is InvalidArgument). */
bool om__format_write(const om_graph *g, const om_traced_sym *syms, int n_syms, om_write_fn write, void *ctx);
/** The exact size om__format_write writes; 0 on error. */
size_t om__format_size(const om_graph *g, const om_traced_sym *syms, int n_syms);
/** The graph of format v1 bytes (borrowed) into g, its symbols into *syms (in g's arena); false
 *  with a Format (or Unsupported: another version) error naming what is wrong, g holding nothing. */
bool om__format_read(const void *bytes, size_t n, om_graph *g, om_traced_sym **syms, int *n_syms);

/* A finished trace: the pruned, named graph. */
struct om_traced_model {
  om_graph g;
  int n_symbols;
  om_traced_sym *symbols; /* in the graph's arena */
  int pieces;             /* the pieces of a symbol's range it is written as (src/trace/branch.c); 0: one */
};

#endif /* OM_GRAPH_H */
