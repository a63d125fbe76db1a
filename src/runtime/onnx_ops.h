/* The ONNX op table of the graph layer (src/runtime/onnx_ops.c): one row per ONNX op type, whose
 * rule computes a node with the library's ops. Internal. */
#ifndef OM_ONNX_OPS_H
#define OM_ONNX_OPS_H

#include "ir/graph.h"

#define OM_BIND_MAX_OUT 8

/* A sequence, or an optional holding nothing, while a plan is made (src/runtime/onnx_ops.c): a
 * sequence's tensors, in order, are planned buffers or constants like any value's, so its length
 * and each element's shape are known when planning (a plan per length, as per shape). An optional
 * holding a tensor or a sequence is that value itself. Refcounted as tensors are. */
/* The most tensors a sequence holds: each SequenceInsert or SequenceErase makes a new list, so a
 * Loop growing one copies as its length squared while the plan is made; this bounds that work. */
#define OM_SEQ_MAX (1 << 14)
typedef struct om_seq {
  int64_t refcount;
  bool none;      /* an optional holding nothing (n 0) */
  om_dtype dtype; /* the elements' dtype (an empty sequence's too) */
  int n;
  om_tensor **t;  /* n references */
  om_strings *str; /* not a sequence but a tensor of strings (n 0; a reference): ONNX's STRING, which no library dtype holds */
} om_seq;

/** A new sequence of n elements (t zeroed, for the caller to fill) of dtype, or an optional holding
 *  nothing (none; n 0); refcount 1, NULL with OutOfMemory. */
om_seq *om__seq_new(int n, om_dtype dtype, bool none);
/** s with one more reference (NULL stays NULL). */
om_seq *om__seq_retain(om_seq *s);
/** Drops a reference; the last releases the elements (NULL is a no-op). */
void om__seq_release(om_seq *s);
/** Releases n sequences of a (NULL entries skipped) and sets them to NULL. */
void om__seq_release_all(om_seq **a, int n);
/** A value holding the tensor of strings t (a reference, taken over; NULL stays NULL). */
om_seq *om__seq_strings(om_strings *t);

/* Tensors of strings (src/runtime/strings.c), for the string rules. */
/** x's numbers written as ONNX's Cast to STRING writes them (integers in decimal, floats as the
 *  shortest decimal that reads back, "NaN", "INF", "-INF"); a new tensor of strings, NULL with an error. */
om_strings *om__strings_format(const om_tensor *x);
/** t's strings read as numbers of dtype d (the whole string: "NaN", "INF" and strtod's forms for
 *  floats, decimal integers); a new tensor, NULL with InvalidArgument naming the element (who). */
om_tensor *om__strings_parse(const om_strings *t, om_dtype d, const char *who);
/* RegexFullMatch's matcher (src/runtime/regex.c): a subset of RE2's syntax run as a Pike VM. */
typedef struct om_regex om_regex;
/** pattern compiled (who names the node in errors); NULL with Unsupported naming a construct
 *  outside the subset, or Format for a pattern that is not one. Freed with om__regex_free. */
om_regex *om__regex_compile(const char *pattern, const char *who);
void om__regex_free(om_regex *re);
/** Whether re matches all of s[0..len) (its code points: UTF-8, a stray byte as itself): 1 or 0,
 *  -1 with OutOfMemory. */
int om__regex_full_match(const om_regex *re, const char *s, size_t len);
/** s[0..len) with its letters in upper (up) or lower case into out (room for 2 len bytes: no
 *  mapping is longer than twice its source); returns the bytes written. */
size_t om__str_case(char *out, const char *s, size_t len, bool up);

/* One node being bound: its inputs' tensors (borrowed; NULL for an omitted optional input), and
 * its outputs to write (new references; NULL leaves an output nothing reads uncomputed). While a
 * plan is made the inputs are planned buffers or constants, and each library op a rule calls
 * is recorded (on buffers) or run at once (on constants). */
typedef struct om_bind {
  const om_gnode *node;
  om_tensor **in;
  om_tensor **out;
  om_seq **seq_in;   /* each input that is a sequence or an optional holding nothing (then in[i] is NULL), else NULL; borrowed */
  om_seq **seq_out;  /* outputs that are such a value (new references; out[j] then NULL) */
  bool fast;          /* fast mode: a rule may pick a faster kernel (Gelu's erf) */
  bool needs_values;  /* set by a rule failing because an operand's values are not known when planning */
  const int *types;   /* each value's ONNX element type (src/runtime/elem_types.c), for rules whose result depends on it */
} om_bind;

/* A row: the op type, how many inputs and outputs a node of it may have, the attributes it takes
 * (opset 20's, and ai.onnx.ml's last), its rule, and what it runs as (the library's ops, and what it
 * refuses: docs/graph-runtime.md's table).
 *
 * attrs lists each attribute as name, ':' (optional) or '!' (required), and its type: i INT, f FLOAT,
 * s STRING, t TENSOR, g GRAPH, I INTS, F FLOATS, S STRINGS, o one the reader keeps by name only
 * (SPARSE_TENSOR, TYPE_PROTO), u a TENSOR that may hold strings (the reader gives those as STRINGS);
 * a string's letter may be followed by '=' and the values ONNX defines for it, '|' between them
 * ("auto_pad:s=NOTSET|SAME_UPPER|SAME_LOWER|VALID"); space-separated, "" for none. The session
 * checks every node against it when it is made (an attribute not listed, of another type, a
 * string outside its values, or a required one missing: Format naming the node), as
 * ONNX's checker and onnxruntime do, so no rule reads an attribute a file misspelt as its default. */
typedef struct om_onnx_rule {
  const char *op_type;
  int min_in, max_in, max_out;
  const char *attrs;
  bool (*bind)(om_bind *b); /* false with an error set (Unsupported for a value it does not take) */
  const char *doc;
} om_onnx_rule;

/** The row of op_type, or NULL when the graph layer has no rule for it. */
const om_onnx_rule *om__onnx_rule(const char *op_type);
/** Whether input i of a node of op_type may be a sequence or an optional holding nothing (the
 *  Sequence and Optional rows, Identity, Loop's loop-carried values); other inputs are tensors. */
bool om__onnx_takes_sequence(const char *op_type, int i);
/** The rule for a node of op_type with an input of strings (docs/graph-runtime.md, "Strings"), or
 *  NULL when its row takes no strings. */
bool (*om__onnx_string_rule(const char *op_type))(om_bind *b);
/** The number of rows and row i (for docs/graph-runtime.md's list and its test). */
int om__onnx_rule_count(void);
const om_onnx_rule *om__onnx_rule_at(int i);

/** Binds subgraph g (an attribute of b's node) on inputs (n, borrowed; each a tensor, or a sequence
 *  in seq_inputs, which may be NULL when none is) and the values it captures (b->in and b->seq_in
 *  after the node's inputs) while a plan is made (src/runtime/session.c): its nodes' steps join
 *  the plan. Its outputs into outs and seq_outs (g->outputs.n each, new references, one of the
 *  two set per output); false with an error set (b->needs_values set as a rule's, OutOfMemory past
 *  the nodes a plan may bind). */
bool om__bind_subgraph(om_bind *b, const om_graph *g, om_tensor *const *inputs, om_seq *const *seq_inputs, int n, om_tensor **outs,
                       om_seq **seq_outs);
/** ONNX's checker's rules for n's subgraphs (If's branches, Loop's and Scan's body: present, their
 *  inputs and outputs counted); false with a Format error naming the node. */
bool om__onnx_check_subgraphs(const om_gnode *n);
/** Whether n (borrowed) is a Scan of opset 8's form, which the version pass marked. */
bool om__onnx_scan8(const om_gnode *n);

/* The attribute the version import pass gives an opset-8 Scan (its value 8): that version's batch
 * axis and sequence_lens input (which opset 9 dropped; moved from the first input to the last) are
 * read by the same row. No file can hold it: the reader refuses an attribute without a name. */
#define OM_SCAN8_MARK ""

/** The version import pass (src/runtime/versions.c): g's nodes, read from a file of default-domain
 *  opset `opset` (7 to 20), rewritten in place into the opset-20 forms the table's rows read.
 *  false with a Format or Unsupported error naming the node (g is then the caller's to free). */
bool om__upgrade_nodes(om_graph *g, int opset);

/** g's shapes inferred with symbolic dims from the inputs' declared ones (src/runtime/shapes.c):
 *  false with a Format error naming the node where its inputs contradict each other at every size,
 *  or naming the node and the output where a declared output is contradicted at every size (only
 *  with shapes), or naming the node and its body where a subgraph's types are not the node's
 *  (If, Loop, Scan; always). */
bool om__check_shapes(const om_graph *g, bool shapes);

/* Element types (src/runtime/elem_types.c): ONNX's TensorProto.DataType numbers. */
#define OM_ONNX_STRING 8 /* held by no dtype: a value of strings is an om_seq holding an om_strings */
/** The ONNX type that is dtype's own (FLOAT, INT64, BOOL). */
int om__elem_own(om_dtype d);
/** ONNX's name of element type t (TensorProto.DataType: "FLOAT", "INT64"), for messages. */
const char *om__elem_name(int t);
/** Whether dtype holds ONNX type t (FLOAT16 and BFLOAT16 in float32, the integers in int64: UINT64 as its bits). */
bool om__elem_holds(om_dtype dtype, int t);
/** Whether node n takes the element types of its inputs (in, borrowed; types per value id): false
 *  with Format for inputs that ONNX gives one type but the file two held in two dtypes (Add of FLOAT
 *  and INT64), or Unsupported for a UINT64 input of an op that would read it as signed. */
bool om__elem_check_inputs(const om_gnode *n, const int *types, const om_tensor *const *in);
/** The ONNX type of node n's output j, which its rule gave in dtype, from the types of the
 *  values (types, per value id) its inputs (in, borrowed) hold. */
int om__elem_type_out(const om_gnode *n, int j, om_dtype dtype, const int *types, const om_tensor *const *in);
/** t (a reference, taken over) narrowed to ONNX type `type`: itself when dtype's own type is it or
 *  op_type only moves values (NULL: a graph input), else a narrowing cast; NULL with an error. */
om_tensor *om__elem_narrow(om_tensor *t, int type, const char *op_type);

#endif /* OM_ONNX_OPS_H */
