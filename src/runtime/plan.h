/* A session's plan (src/runtime/session.c makes and runs it; src/runtime/passes.c rewrites its
 * steps): the calls of the library's ops that a graph's nodes made on planned buffers, in order,
 * and the buffers they read and write. Internal. */
#ifndef OM_PLAN_H
#define OM_PLAN_H

#include "ir/graph.h"

/* One call of a plan: what om__apply gave the op's forward. */
typedef struct om_step {
  om_op op;
  int node;        /* the graph node whose rule recorded it (a fusion: the run's last), named by its errors */
  int n_in, n_out;
  om_tensor **in;  /* references: planned buffers' tensors or constants */
  om_attrs attrs;  /* canonical, as infer left them */
  om_meta out_meta[OM_MAX_OUTPUTS];
  om_tensor *out[OM_MAX_OUTPUTS]; /* references, on planned buffers */
  bool dead;       /* removed by a pass: compacted away before the buffers are placed */
} om_step;

/* A planned buffer (its storage's `buffer` is its index): the step that writes it (-1: a graph
 * input), the last that reads it, and how many step inputs and graph outputs read it (or a view
 * of it). */
typedef struct om_buffer {
  om_storage *storage; /* borrowed: the tensors on it hold it; NULL once a pass removed its step */
  int first, last, readers;
  size_t offset;
} om_buffer;

typedef struct om_plan {
  struct om_plan *next;
  int64_t *signature; /* every input's shape, one after the other */
  int n_sig;
  int binding; /* the node being bound while the plan is made */
  OM_VEC(om_step) steps;
  OM_VEC(om_buffer) buffers;
  om_tensor **inputs;  /* the tensors fed (planned buffers, or constants when taken by value): each graph input's one, or a sequence's each */
  int n_inputs;
  om_tensor **outputs; /* the graph outputs' tensors (planned, constants or inputs): each output's one, or a sequence's each */
  int n_outputs;
  int *out_counts;     /* each graph output's: -1 one tensor, n >= 0 a sequence of n, OM_SESSION_NONE an optional holding nothing,
                          OM_SESSION_STRINGS strings */
  om_strings **out_strings; /* each graph output's strings where its count says so (references), else NULL */
  int n_out_strings;
  void *arena;
  size_t arena_bytes;
} om_plan;

/** Fast mode's passes over p's steps (src/runtime/passes.c), run while p is being made, after every
 *  node is bound and before its buffers are placed: the fusions, each rewriting a run of steps
 *  into one step of the same values (dead steps are marked, then compacted away). false with an
 *  error set (p then goes). */
bool om__plan_passes(om_plan *p);

/** The plan s ran last (borrowed: s owns it), or NULL before the first run: for the tests that look
 *  at its steps. */
const om_plan *om__session_plan(const om_session *s);

#endif /* OM_PLAN_H */
