/* The tracer's internal state, shared by src/trace/ (recording, lowering, finish). */
#ifndef OM_TRACE_H
#define OM_TRACE_H

#include <string.h>

#include "graph/graph.h"

/* A symbolic axis name and its example size. */
typedef struct om_symbol {
  const char *name; /* arena string; values' dim_param point here, so symbols compare by pointer */
  int64_t size;
  /* Its run-time extent as an int64 [1] value: Shape(graph input, start=axis, end=axis+1),
   * made once for the whole graph by om__lower_symbol_extent; node is -1 until then (and the
   * pair is checked against the graph, since a rollback may have dropped the node). */
  int extent_node, extent_value;
  /* A derived atom (spec 4): an extent an op computed (cat along a symbolic axis), named
   * "<op>#<n>", whose run-time value is read off the value and axis that carry it. */
  bool derived;
  int carrier, carrier_axis;
  /* What determined a derived atom (the op, its attrs as given, the output axis, the inputs'
   * sizes and extents; an arena copy): a call with the same signature derives the same extent
   * at every size, so it gets this atom again. */
  const unsigned char *signature;
  size_t signature_len;
} om_symbol;

/* A constant named by om_trace_parameter. */
typedef struct om_param {
  const char *name;
  om_tensor *view; /* header on the tensor's storage and view (keeps the storage, so it is not reused) */
} om_param;

/* A graph input's storage: the example's, which other handles (the example itself) share. */
typedef struct om_input_storage {
  const char *name;
  om_storage *storage; /* a reference, so the address is not reused while the trace lives */
} om_input_storage;

/* The recording on one thread. */
struct om_trace {
  uint32_t id; /* tensors with this trace_id are its values */
  om_graph g;
  OM_VEC(om_param) params;
  OM_VEC(om_symbol) symbols; /* at most 64: an extent's atoms are a bit mask over them */
  OM_VEC(om_extent) extents; /* the interned products (single symbols are not listed) */
  OM_VEC(om_input_storage) input_storages;
  /* Hash index of g.inits (slot = initializer index + 1, 0 empty; capacity a power of 2):
   * finding a constant again is O(1) however many the model has. */
  int *index;
  size_t index_cap;
};

/* One op call being lowered. */
struct om_lower {
  om_trace *tr;
  om_call *c;
  const om_attrs *given;
  const char *who;                                  /* the op's or creation function's name, for messages */
  int *in;                                          /* the inputs' values (NULL while a call on constants is checked) */
  const char *out_sym[OM_MAX_OUTPUTS][OM_MAX_DIMS]; /* symbols of the outputs' axes */
};

/** Frees a recording (not the thread's pointer to it). */
void om__trace_free(om_trace *tr);
/** The active recording; when none, sets the error (the one that ended the last recording, or
 *  InvalidUsage naming who) and returns NULL. */
om_trace *om__need_trace(const char *who);

/** Refuses (InvalidUsage, ending the trace) an empty name or one an input or parameter has. */
bool om__trace_check_name(om_trace *tr, const char *name, const char *who);

/* True when a and b are the same view: one storage, offset, dtype, shape and strides. */
static inline bool om__same_view(const om_tensor *a, const om_tensor *b) {
  return a->storage == b->storage && a->offset == b->offset && a->dtype == b->dtype && a->ndim == b->ndim &&
         !memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim) &&
         !memcmp(a->strides, b->strides, sizeof(int64_t) * (size_t)a->ndim);
}

#endif /* OM_TRACE_H */
