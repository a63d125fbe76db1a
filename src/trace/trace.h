/* The tracer's internal state, shared by src/trace/: recording (tracer.c), the runs at other
 * sizes (runs.c), size expressions (expr.c), fitting the integers a model computes (fit.c), the
 * outputs' extents (probe.c), lowering (hooks.c; its constants in consts.c, its helpers in
 * emit.c), finish (finish.c) and its merging of identical nodes (merge.c). */
#ifndef OM_TRACE_H
#define OM_TRACE_H

#include <string.h>

#include "ir/graph.h"

/* ---- size expressions (expr.c; docs/symbolic-axes.md) ---- */

#define OM_X_MAX_TERMS 16
#define OM_X_MAX_DEG 6
#define OM_X_MAX_PERIOD 4096 /* om__x_same's grid: residue classes per variable */
#define OM_X_MAX_GRID 65536  /* and points in all */

/* coef times a product of factors (ids into om_trace.fs, ascending, repeats for powers). */
typedef struct om_xterm {
  int64_t coef;
  int n;
  int32_t f[OM_X_MAX_DEG];
} om_xterm;

/* A canonical polynomial in factors: c0 + the terms (sorted by factor list, merged, no zero). */
typedef struct om_poly {
  int64_t c0;
  int n;
  om_xterm t[OM_X_MAX_TERMS];
} om_poly;

/* An interned expression. */
typedef struct om_xexpr {
  int64_t c0;
  int n;
  om_xterm *t;      /* arena */
  uint64_t hash;
  uint64_t syms;    /* bit k: depends on symbol k */
  int deg;          /* the largest term degree (a floor counts its numerator's) */
  const char *name; /* its dim_param ("batch*seq", "floor((h+1)/2)"), made when first asked */
  bool extent;      /* some value's extent (in om_trace.extents) */
} om_xexpr;

/* A factor: symbol var's free variable, floor(num / den) of expression num, min(num, den)
 * (the last piece of a split at a fixed size, which is a whole piece at larger sizes), or
 * floor(double(num) * scale) computed in IEEE double (an extent an op rounds from a double it is
 * given: interpolate's floor(H * 0.7), which no floor division of integers is at every H). */
enum { OM_XF_FLOOR = -1, OM_XF_MIN = -2, OM_XF_FMUL = -3 };
typedef struct om_xfactor {
  int var;         /* >= 0: the variable of symbol var; OM_XF_FLOOR, OM_XF_MIN or OM_XF_FMUL */
  int num;
  int64_t den;     /* OM_XF_FMUL: 0 */
  double scale;    /* OM_XF_FMUL: the double (positive, finite), else 0 */
  int deg;
  uint64_t syms;
  int64_t period;  /* it repeats (minus a polynomial) every period steps of each variable */
} om_xfactor;

/* An integer argument k of the record run's call (its index) as the graph writes it: expression x.
 * A run at other sizes that makes the same calls must give it x's value there (a slice's end
 * fitted as its start plus its length, as_length: the run's end taken so too, om__slice_end). */
typedef struct om_kept_arg {
  int64_t call;
  int k, x;
  bool as_length;
} om_kept_arg;

/* A float argument k of the record run's call that moves with the sizes, as the graph computes
 * it (a full's value 1 / sqrt(T); an arange's start, form x). */
typedef struct om_xfloat {
  int x, fn; /* a * fn(x) + b, fn 0: x, 1: 1 / x, 2: sqrt(x), 3: 1 / sqrt(x) */
  double a, b;
} om_xfloat;
typedef struct om_kept_float {
  int64_t call;
  int k;
  om_xfloat f;
} om_kept_float;

/* Axis d of output j of the record run's call (its index) as the graph has it: expression x, or
 * (x -1) the fixed size. A run at other sizes that makes the same calls must give the axis that
 * size there: what follows in the graph (a shape operand, an adaptive pool's cells) is computed
 * with it. */
typedef struct om_kept_ext {
  int64_t call, size;
  int j, d, x;
} om_kept_ext;

/* ---- symbols ---- */

/* A call of the model in a run: its index (0-based) in the run at the variables v. A refusal
 * that names the call is raised there (the run made again, stopped at it: refuse_at_call), so
 * that in JS it carries the model's source line. */
typedef struct om_site {
  int64_t call;
  int64_t v[64];
} om_site;

/* A declared symbolic axis: s = multiple * v, v its free variable, min <= s <= max. */
typedef struct om_symbol {
  const char *name;  /* arena string */
  int64_t size;      /* the example's */
  int64_t multiple, min, max; /* declared (om_trace_dim), min and max narrowed by what the model needs */
  int64_t vmin, vmax;         /* the variable's range */
  int64_t decl_vmin, decl_vmax; /* the variable's range as declared (never narrowed) */
  const char *min_why, *max_why; /* the call that narrowed the range, NULL when declared */
  const om_site *min_site, *max_site; /* where that call is (om__run_site), NULL when the why names none */
  int64_t checked_min, checked_max; /* the sizes the runs checked the trace over (runs.c, check_range) */
  const char *runs_max_why;  /* max_why when om__run_failed set it: the largest size a run returned at, not the end */
  int var_factor;    /* its factor in om_trace.fs, -1 until used */
  /* Its run-time size as an int64 [1] value: Shape(graph input, start=axis, end=axis+1), made
   * once for the whole graph; node is -1 until then (and the pair is checked against the
   * graph, since a rollback may have dropped the node). */
  int extent_node, extent_value;
} om_symbol;

/* ---- the runs at other sizes (runs.c) ---- */

/* What kind of event a logged call is: an op (its om_op) or a creation (OM_OP_COUNT + om_created). */
#define OM_RUN_CREATED(kind) (OM_OP_COUNT + (int)(kind))

/* The most runs at other sizes a trace makes (runs.c): those the fits ask for, and apart from
 * them those at a float product's edges (om__run_more_edge), which a model with many windows or
 * strides would otherwise spend the fits' budget on. */
#define OM_RUNS_FIT 64
#define OM_RUNS_EDGE 24
#define OM_RUNS_MAX (OM_RUNS_FIT + OM_RUNS_EDGE)
#define OM_ROUNDS_FIT 8  /* how often the record run may begin again for the fits' runs */
#define OM_ROUNDS_EDGE 4 /* and for the edges' runs alone */
#define OM_AT_MAX 8 /* the runs one fit may ask for where forms that fit differ */

/* One call as a run saw it. Its data in the run's pool: from at, the given int attrs (n_i,
 * values) and the float attrs (n_f, values as bits); from in, its tensor inputs (n, then a
 * kind and a value each: 0 and the origin of a tensor the run made, 1 and the address of one
 * from outside the run); from out (-1: none), the outputs (n_out, then each one's ndim and
 * sizes). */
typedef struct om_runcall {
  int op;
  int at, in, out;
  int rank;          /* its place among the run's live calls (those the outputs need), -1 dead */
  const char *error; /* the call failed there, with this message (arena) */
} om_runcall;

typedef struct om_run {
  int64_t v[64];      /* the symbols' variables */
  OM_VEC(om_runcall) calls;
  OM_VEC(int64_t) pool;
  OM_VEC(int) live;   /* the live calls' indices, in order (when the run returned) */
  int n_outputs;      /* what the model returned, -1 when it failed */
  int out;            /* pool offset of the outputs' origins (kind, value each), -1 none */
  int64_t prefix;     /* a run that failed is matched to the record run call by call: the
                       * first calls it has in common with the base run */
  bool dropped;       /* a run below the example that failed or parted: not used further */
  bool far;           /* a far run (runs.c far_sizes): where the model fails it narrows nothing */
  bool looped;        /* it parted from the base run by whole repeats of a block of calls (a loop
                       * over a size making more steps there: runs.c part_paths) */
  uint32_t serial;    /* om_trace.serial while it ran: the tensors it made carry it */
  char error[320];    /* the error that ended it */
} om_run;

/* Whether run r's calls are matched to the record run's by liveness (both it and the base run
 * returned), else by index. */
bool om__run_by_liveness(const om_trace *tr, const om_run *run);
/* Frees the trace's runs' logs (the base run, the runs, the spare ones). */
void om__runs_free(om_trace *tr);
/* Gives run (it returned) the live calls of the base run it lacks where lacking them is making
 * them with a neutral argument (a pad by 0, a slice of the whole axis, an interpolate to the same
 * size: absent.c); leaves it as it was otherwise. */
void om__run_neutral(om_trace *tr, om_run *run);
/* The elements the live calls of run (it returned) make, summed: what tracing the model at its
 * sizes costs, in memory and time, next to another run's (saturates at INT64_MAX). */
int64_t om__run_elements(const om_run *run);

typedef enum om_trace_phase {
  OM_PHASE_MANUAL,  /* om_trace_begin .. om_trace_finish without om_trace_run */
  OM_PHASE_OTHER,   /* om_trace_run: a run at other sizes (shape only, nothing lowered) */
  OM_PHASE_RECORD,  /* om_trace_run: the run on the inputs, checked against the others */
  OM_PHASE_RAN,     /* om_trace_run returned: only om_trace_finish (or abort) is left */
} om_trace_phase;

/* ---- the recording ---- */

/* A constant named by om_trace_parameter. */
typedef struct om_param {
  const char *name;
  om_tensor *view; /* header on the tensor's storage and view (keeps the storage, so it is not reused) */
} om_param;

/* A graph input: its traced tensor, and the example's storage that other handles (the example
 * itself) share. */
typedef struct om_input {
  const char *name;
  om_tensor *traced;   /* a reference: what om_trace_run hands the model */
  om_storage *storage; /* a reference, so the address is not reused while the trace lives */
} om_input;

/* The recording on one thread. */
struct om_trace {
  uint32_t id; /* tensors with this trace_id are its values (in a run at other sizes: its phantoms) */
  om_graph g;
  OM_VEC(om_param) params;
  OM_VEC(om_symbol) symbols; /* at most 64: an expression's symbols are a bit mask */
  OM_VEC(om_input) inputs;
  OM_VEC(om_xexpr) xs;       /* interned expressions */
  OM_VEC(om_xfactor) fs;     /* interned factors */
  OM_VEC(int) extents;       /* the expressions that are some value's extent, for fit.c's pool (not
                              * every expression interned: a fit's tries are not sizes the model reads) */
  int *xindex;               /* hash index of xs (slot = id + 1) */
  size_t xindex_cap;
  /* Hash index of g.inits (slot = initializer index + 1, 0 empty; capacity a power of 2):
   * finding a constant again is O(1) however many the model has. */
  int *index;
  size_t index_cap;
  /* the runs (runs.c) */
  om_trace_phase phase;
  OM_VEC(om_run) runs;       /* the runs at other sizes */
  om_run base;               /* the run at the example's sizes, shape only: which calls are live */
  om_run *cur;               /* the one going on (OM_PHASE_OTHER) */
  /* the runs of the trace before it began again (runs.c, begin_again), their v as sizes (the
   * multiples may change): a run at the same sizes is taken from here, not made again */
  OM_VEC(om_run) spare;
  uint32_t serial;           /* of the run going on: tensors it made carry it (trace_run) */
  bool dead;                 /* the record run's call going on is not live: computed, not recorded */
  bool more;                 /* the record run wants more runs (a fit the runs cannot decide): it
                              * unwinds, and om_trace_run runs the model at more sizes, then again */
  uint64_t extended;         /* the symbols om__run_more moved: not again */
  uint64_t more_syms;        /* the symbols they move */
  int64_t more_at[OM_AT_MAX][64]; /* om__run_more_at's runs (more_at_n), their variables */
  bool more_at_edge[OM_AT_MAX]; /* which are om__run_more_edge's */
  int more_at_n, rounds;     /* rounds: how often the record run began again */
  int edge_runs, edge_rounds; /* of runs.n and rounds, those for a float product's edges alone */
  const char *answers;       /* the first range the record run narrowed where the model works (om__run_answers) */
  const om_site *answers_site; /* the call it names, NULL none */
  int64_t answers_v[64];     /* the variables of the run where it answers (a cut below the minimum must hold there) */
  uint64_t answers_syms;     /* the symbols below their examples in every run where it did (om__branch_below) */
  uint64_t answers_any;      /* the symbols below their examples in some run where it did (om__branch_below) */
  /* a fit that no form holds once runs below the example narrowed a range where the model works
   * (om__run_narrowed_again): the trace begins again in the narrowed ranges, and those answers
   * are kept, so that where it then holds it is refused naming that declaration (refuse_answers) */
  bool again;
  const om_symbol *again_from; /* the ranges the record run began with (om_trace_run's record ranges) */
  const char *again_answers;
  const om_site *again_site;
  uint64_t again_syms, again_any;
  const char *far_parted;    /* a run above the example the record run parted from (the refusal, if the range check finds no threshold) */
  const om_site *far_site;   /* the call where it parted */
  /* a refusal where the model itself fails (om__run_fails_at): the record run unwinds and
   * om_trace_run looks for the sizes where the model answers, to trace again with those */
  const char *fail_msg, *fail_why; /* the refusal, and the range's reason when it narrows */
  int64_t fail_at[64];       /* the variables where it fails */
  const om_site *fail_site;  /* the call that refused (its source line), NULL none */
  int narrowings;            /* how often the trace began again with narrowed ranges */
  int64_t calls;             /* calls made in the run going on */
  om_storage *phantom;       /* the storage every phantom shares (no data) */
  int depth;                 /* > 0 inside a call already logged (a lowering's own constants, backward) */
  const om_runcall *rc[OM_RUNS_MAX]; /* the call going on, in each run at other sizes (the record
                                      * run; NULL where a run has no such call) */
  /* the probe's assignments of the variables (probe.c), made when the record run starts */
  int n_probes, cap_probes;
  int64_t (*probes)[64];
  bool *probe_small;         /* below the example: a failure there narrows a symbol's minimum */
  OM_VEC(int64_t) same;      /* pairs of expressions proven equal everywhere (a << 32 | b), for om__x_same */
  OM_VEC(om_kept_arg) kept;  /* the record run's integer arguments as the graph has them */
  OM_VEC(om_kept_float) kept_f; /* and its float arguments that move */
  OM_VEC(om_kept_ext) kept_ext; /* and its calls' output extents, in call order */
  /* the runs over the declared range (runs.c, check_range) */
  bool sweeping;             /* a run of them goes on: large constants are phantoms too */
  bool over_budget;          /* and it made more calls than OM_RANGE_CALLS allows (runs.c) */
  bool made_phantom;         /* and it made a constant shape only: its values failed nothing (runs.c) */
  /* thresholds written as branches (branch.c) */
  int pieces;                /* the most pieces this trace may be cut into (OM_BRANCH_PIECES; fewer in a piece) */
  int split_sym;             /* the range check found a threshold of this symbol to cut at (-1: none) */
  int64_t split_at;          /* the first variable of the upper piece */
  bool split_first;          /* the cut is on the first of two symbols narrowed where the model answers (om__branch_below) */
  bool split_parted;         /* and its pieces were refused as one graph (other output counts, types or ranks: join) */
  om_traced_model *branched; /* the model of the pieces, which om_trace_finish returns */
  const om_graph_runner *runner; /* what runs a rolled graph to check it (om__trace_run's), NULL: none */
  /* calls made only at some sizes (absent.c): a run that makes identity-able calls the example's
   * run lacks names sizes where the model makes them, to trace at instead (once: not in a trace
   * begun so) */
  bool reexample;            /* a run at reexample_v made them */
  bool reexampled;           /* this trace is the one traced at such sizes */
  int64_t reexample_v[64];
  int reexample_calls;       /* the live calls of the run at reexample_v */
  int64_t reexample_cost;    /* its elements (om__run_elements): of the runs with the most calls, the least */
  char reexample_msg[512];   /* the SymbolicShape refusal of the trace at reexample_v that names a
                              * declaration: said instead of this trace's own refusal, which is at
                              * a call such a run lacks, not where the model changes */
  int64_t stop_call;         /* in the run going on, the call that ends the trace with stop_msg (a */
  const char *stop_msg;      /* threshold, refused at the model's own call: it has its source line) */
};

/* One op call being lowered. */
struct om_lower {
  om_trace *tr;
  om_call *c;
  const om_attrs *given;
  om_attrs given_end; /* given, with a slice's end as its start plus its length (hooks.c fit_args) */
  const char *who;                         /* the op's or creation function's name, for messages */
  int *in;                                 /* the inputs' values */
  int arg[OM_MAX_IATTRS];                  /* the given int attrs as expressions */
  om_xfloat farg[OM_MAX_FATTRS];           /* the given float attrs that move (fmoves), as computed */
  unsigned fmoves;                         /* bit k: float attr k changes with the sizes */
  bool moves;                              /* some arg changes with the sizes */
  int out_ext[OM_MAX_OUTPUTS][OM_MAX_DIMS]; /* the outputs' extents: expression ids, -1 fixed */
  /* candidates for the outputs' extents (probe.c): an op's extents rule adds its own first */
  int cand[OM_MAX_OUTPUTS][OM_MAX_DIMS][20];
  int n_cand[OM_MAX_OUTPUTS][OM_MAX_DIMS];
  const om_runcall *rc[OM_RUNS_MAX];       /* this call in each run at other sizes (NULL: none) */
};

/** Frees a recording (not the thread's pointer to it). */
void om__trace_free(om_trace *tr);
/** Whether two node attributes are equal: name, type and value (merge.c). */
bool om__same_attr(const om_gattr *a, const om_gattr *b);
/** Common-subexpression elimination over g before it is written (merge.c): a live node equal to
 *  an earlier one (op type, inputs, attributes) is merged into it, its readers reading the
 *  earlier one's outputs, and is left unread for mark_live to drop; false with OutOfMemory. */
bool om__merge_nodes(om_graph *g);
/** Constant folding of one form (merge.c): a live Where choosing between two 0-d constants by a
 *  constant, or by a chain of Slices (each read by nothing else) of a constant, is computed on the
 *  whole constant now (a new initializer) and the chain slices that instead; the Where is left
 *  unread. So a causal-mask buffer's additive form is one constant, not a Where computed at
 *  every run. false with OutOfMemory. */
bool om__fold_where(om_graph *g);
/** A matmul of rows flattened and unflattened (merge.c): Reshape to [N, k], MatMul by a [k, m]
 *  matrix (plus a bias of rank 0 or 1), Reshape back to the rows' own leading extents and m
 *  (equal expressions: at every size) becomes MatMul on the original rank, the Reshapes left
 *  unread; false with OutOfMemory. */
bool om__unflatten_matmuls(om_graph *g);
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

/* ---- expressions (expr.c): ids >= 0; -1 on error, the trace then has ended ---- */
/** The id of canonical polynomial p. */
int om__x_poly(om_trace *tr, const om_poly *p);
/** The polynomial of id (a copy). */
void om__x_get(const om_trace *tr, int id, om_poly *p);
/** The constant c. */
int om__x_const(om_trace *tr, int64_t c);
/** Symbol k's size, multiple * v. */
int om__x_sym(om_trace *tr, int k);
/** ca * a + cb * b + c (a or b -1 for none). */
int om__x_lin(om_trace *tr, int64_t ca, int a, int64_t cb, int b, int64_t c);
/** a * b. */
int om__x_mul(om_trace *tr, int a, int b);
/** floor(a / d), d >= 1. */
int om__x_floordiv(om_trace *tr, int a, int64_t d);
/** floor(double(a) * s) as IEEE double computes it (s > 0 and finite; who: the op, for a
 *  refusal), exact while a is below 2^53 (om__x_eval fails above); a constant when a is one.
 *  SymbolicShape where a symbol's declared maximum lets a reach 2^53. */
int om__x_fmul(om_trace *tr, int a, double s, const char *who);
/** min(a, c); a itself when it is never above c, c when never below. */
int om__x_minc(om_trace *tr, int a, int64_t c);
/** a / b when b is a constant or one monomial dividing every term of a, else -1 (no error). */
int om__x_divexact(om_trace *tr, int a, int b);
/** True when a is a constant (its value to *c when c is not NULL). */
bool om__x_is_const(const om_trace *tr, int a, int64_t *c);
/** a at the variables v (per symbol); false on overflow. */
bool om__x_eval(const om_trace *tr, int a, const int64_t *v, int64_t *out);
/** The smallest value of a over the symbols' ranges when its form shows a never decreases (then
 *  at the smallest sizes), to *out; false when its form does not show it (or on overflow). */
bool om__x_min(const om_trace *tr, int a, int64_t *out);
/** 1 when a and b agree at every size (with mult: every size where variable k is a multiple of
 *  mult[k]), 0 when they differ (a point where they do in at), -1 undecided (too large a grid). */
int om__x_same(om_trace *tr, int a, int b, const int64_t *mult, int64_t *at);
/** The values a takes at every size (sorted, into vals) when it takes finitely many, cap at most:
 *  a remainder, a split's last piece (B - 3 * floor((B - 1) / 3) is 1, 2 or 3). Their count; 0
 *  when a is a constant, takes more values, or its period is too long to tell. */
int om__x_values(const om_trace *tr, int a, int64_t *vals, int cap);
/** Forgets every expression and factor (the symbols' multiples changed: a variable is another
 *  size now), the symbols' variable factors with them. */
void om__x_reset(om_trace *tr);
/** Records expression x (-1: none) as some value's extent. */
void om__x_extent(om_trace *tr, int x);
/** a written in the symbols' names (its dim_param), an arena string; NULL on OutOfMemory. */
const char *om__x_name(om_trace *tr, int a);

/* ---- the runs (runs.c) ---- */
/** The variables of the example (per symbol). */
void om__run_example(const om_trace *tr, int64_t *v);
/** "batch=3, seq=8": the symbols of mask at the variables v, into buf (returned). */
const char *om__run_sizes(const om_trace *tr, const int64_t *v, uint64_t mask, char *buf, size_t cap);
/** Reads a logged call's data: given attrs (n_i, i) and float attrs (n_f, f); its outputs' shapes. */
void om__runcall_attrs(const om_run *run, const om_runcall *rc, om_attrs *a);
bool om__runcall_output(const om_run *run, const om_runcall *rc, int j, int *ndim, int64_t *shape);
/** The end of a slice (op, attrs a: dim, start, end, step) whose output has shape (nd, out), as
 *  its start plus its length, into *end: the end it takes, clamped to the axis and never
 *  negative. false for another op, a step other than 1 or a start counted from the end. */
bool om__slice_end(int op, const om_attrs *a, int nd, const int64_t *out, int64_t *end);
/** At the start of a call of kind op (an om_op or OM_RUN_CREATED) with attrs on tensors in
 *  (n_in): in a run at other sizes (or the base run), logs it (returns its index); in the record
 *  run, finds it in every other run (rc, one per run, NULL where a run has no such call), checks
 *  the model made the same call on the same values there (SymbolicShape otherwise, ending the
 *  trace: -2), and sets tr->dead when the call is not live (the outputs do not need it). -1:
 *  not logged (no runs, or inside a logged call). */
int64_t om__run_call(om_trace *tr, int op, const om_attrs *attrs, om_tensor *const *in, int n_in, const om_runcall **rc);
/** After a logged call: stamps its outputs with their origin in the run; in a run at other
 *  sizes logs their shapes (or, ok false, that it failed). */
void om__run_call_done(om_trace *tr, int64_t index, om_tensor *const *out, int n_out, bool ok);
/** Run r failed (why says where and how, at the record run's call index, -1 none: the site of a
 *  range it narrows) where nothing narrowed the range past it: a far run is dropped (no range to
 *  narrow to); below the example it is dropped (om__run_drop); above, each symbol it has above its example that no run
 *  which returned took at that size or more gets as its maximum the largest size such a run
 *  took below it (the model works there: its table of positions ends between). false, with
 *  nothing changed, when that cannot say which symbol ends or no size above the example is known
 *  to work: the caller refuses. */
bool om__run_failed(om_trace *tr, int r, const char *why, int64_t index);
/** For the record run: when the symbols in syms did not move through more runs yet, asks for
 *  them (tr->more: runs that move each of the first two such symbols alone through 16 more
 *  sizes around the example, while there is room for them) and fails the call going on with an
 *  error that unwinds the model (the trace goes on); returns true then. false when they were
 *  made: the caller refuses. */
bool om__run_more(om_trace *tr, uint64_t syms);
/** The same for a run at the variables v (where two fits that agree in every run differ; up to
 *  OM_AT_MAX asked for at once): false when no such run can be made (there is one, or the runs
 *  are as many as they may be); true when it is asked for already. */
bool om__run_more_at(om_trace *tr, const int64_t *v);
/** om__run_more_at for a float product's edge (om__fit_float_edges): counted apart from the
 *  fits' runs (OM_RUNS_EDGE, OM_ROUNDS_EDGE), so checking edges never leaves a fit without the
 *  runs it needs. */
bool om__run_more_edge(om_trace *tr, const int64_t *v);
/** When run r failed at sizes that are not multiples of some m where every run that returned
 *  has multiples: "; it holds when 'h' is a multiple of 2: declare om.Dim('h', ...) ...", for a
 *  refusal, into buf (returned; "" when none). */
const char *om__run_hint(const om_trace *tr, int r, char *buf, size_t cap);
/** Notes that the record run narrowed a range where the model works (why: where first, at site,
 *  NULL none; v: the variables of the run where it does): the trace is cut there
 *  (om__branch_below) or refused when the record run ends, with the declaration of the narrowed
 *  ranges, at the call site names. */
void om__run_answers(om_trace *tr, const char *why, const int64_t *v, const om_site *site);
/** A fit at the record run's call found no form and the call is refused next (nothing else is
 *  tried: not a slice's end before it is read as a length), with a range narrowed where the
 *  model works (tr->answers): the runs spent on sizes now outside it say nothing more, so the
 *  record run unwinds and om_trace_run begins again in the narrowed ranges, with new runs (again
 *  where those narrow further, up to OM_NARROWINGS in all). The narrowed ranges are the record
 *  runs' alone: the declaration stays as it was for the range check, the cut below (an If whose
 *  lower piece is traced over the declared sizes) and the pieces, and where no piece is cut the
 *  trace is refused naming the narrowed ranges (the declaration that holds). true when it
 *  unwinds (the error set); false when not (no such range, or none narrowed since the record run
 *  began). */
bool om__run_narrowed_again(om_trace *tr);
/** The site of call index (0-based; -1: none, NULL) in a run at the variables v (NULL: the
 *  example's, where the record run's calls have the same index), in the trace's arena (NULL
 *  when out of memory: the refusal is then raised without the model's line). */
const om_site *om__run_site(om_trace *tr, const int64_t *v, int64_t call);
/** The trace is refused (SymbolicShape, the message fmt) because the model fails at the
 *  variables v (why: where and how, the narrowed range's reason), at the record run's call index
 *  (-1: none). Unless a run at v cannot say more (the base run failed, or the trace began again
 *  too often), the refusal waits: the record run unwinds and om_trace_run runs the model at the
 *  sizes around, and where the sizes it answers at are ones a declaration gives (a range, a
 *  multiple, one size) and exclude v, traces again with them (docs/symbolic-axes.md). false. */
bool om__run_fails_at(om_trace *tr, const int64_t *v, int64_t index, const char *why, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/** A run above the example parted from the record run at its call index (why: the refusal, if
 *  the range check finds no threshold): notes the first (tr->far_parted, tr->far_site). */
void om__run_far_parted(om_trace *tr, const char *why, int64_t index);
/** The largest variable of symbol k below every run that parted from the record run by a loop's
 *  more steps (om_run.looped) when k is that loop's symbol (every such run has k above the
 *  example, and no run with k above it took the record run's path), else k's maximum: past there
 *  the record run's graph holds only once the range check rolls the loop. Borrows tr. */
int64_t om__run_loop_end(const om_trace *tr, int k);
/** Whether run r has a symbol below its example size. */
bool om__run_small(const om_trace *tr, int r);
/** When run r is below the example in some symbol: drops it (not used further) and narrows
 *  each such symbol's minimum to the sizes above it, why saying where; true (where the model
 *  returned there, om__run_answers: the trace is refused at the end). Else false. */
bool om__run_drop(om_trace *tr, int r, const char *why);
/** A phantom of meta (shape only, on the trace's data-less storage) for a run at other sizes. */
om_tensor *om__phantom(om_trace *tr, const om_meta *meta);

/** Whether s is one of the model's fixed sizes (its inputs' fixed axes, its parameters' axes). */
bool om__run_fixed_size(const om_trace *tr, int64_t s);

/* ---- thresholds as branches (branch.c; docs/symbolic-axes.md) ---- */
#define OM_LOOP_SIZES 5 /* the sizes om__run_loop runs a symbol at */
#define OM_LOOP_DIV 16  /* the largest divisor of a size a loop's trip count may have (Math.floor(T / 16)) */
/** How a rolled loop's trip count follows its symbol's variable v: floor((per * v - c) / div),
 *  c fitted to the repeats of a graph traced at one size; where div > 1 (per and div coprime, per
 *  the trips a period of div sizes adds), c is at modulo div (which fixes c). */
typedef struct om_loop_trips {
  int64_t per, div, at;
  int64_t cap; /* where > 0, v is taken as min(v, cap): a loop that stops at a constant (if (t >= maxLen) break) */
} om_loop_trips;
/** Whether the model's live calls grow at each of up to OM_LOOP_SIZES sizes of symbol k from its
 *  example, four in a row at least (the others at theirs; shape-only runs, the random generator
 *  at seed, offset): a loop over the size, unrolled, which no graph without ONNX Loop holds at
 *  every size; or, where they grow unevenly, whether the growths repeat every div sizes in a
 *  row, at most OM_LOOP_DIV (a loop of Math.floor(per * T / div) trips; trips->per, div, at); where
 *  they grow evenly and then stop, the size they stop at (a loop that breaks at a constant
 *  above the example; trips->cap). 1
 *  when they do, with the counts in calls at the variables sizes (-1 past the last run; both
 *  arrays the caller's, OM_LOOP_SIZES long); 0 when not, or when k's range is too short to tell;
 *  -1 when the trace ended (the error set). */
int om__run_loop(om_trace *tr, int k, om_trace_fn fn, void *ctx, int max_outputs, uint64_t seed, uint64_t offset,
                 int64_t *calls, int64_t *sizes, om_loop_trips *trips);

#define OM_BRANCH_PIECES 8 /* the most pieces a symbol's range is cut into */
#define OM_ONE_SIZE_PIECES 8 /* a piece refused as one, of at most this many sizes, is one piece per size */
#define OM_ONE_SIZE_SPAN 32 /* or of at most this many, where the model answers at OM_ONE_SIZE_PIECES of them at most */
/** The range check found that at the variables bad (a step from good; up: above the example)
 *  the model does another thing than the trace, the symbols of mask making the difference:
 *  when that is one symbol and the trace may be cut there, notes the cut (tr->split_sym) and
 *  returns true (the check ends, om_trace_run traces the pieces); false: refused as before. */
bool om__branch_split(om_trace *tr, uint64_t mask, const int64_t *good, const int64_t *bad, bool up);
/** The record run raised a symbol's minimum where the model answers below it (tr->answers), the
 *  one narrowed symbol every such run had below its example (tr->answers_syms): notes the cut
 *  there as om__branch_split does (true), so the sizes below are a piece of their own; false
 *  (refused as before) when no one symbol is, its maximum was lowered or no cut may be made. */
bool om__branch_below(om_trace *tr, const om_symbol *declared);
/** Traces each piece of the cut tr noted as a trace of its own (the thread's trace put aside
 *  meanwhile; the random generator at seed, offset for each) and joins them into an If
 *  (tr->branched). declared: the symbols as declared; outputs: the record run's n outputs,
 *  released and replaced by the example piece's, stamped as values of tr. Their count; -1 when
 *  a piece is refused (its error ends tr). */
int om__branch_run(om_trace *tr, const om_symbol *declared, om_trace_fn fn, void *ctx, om_tensor **outputs, int max_outputs,
                   int n, uint64_t seed, uint64_t offset);
/** The example's run lacks calls a run at tr->reexample_v makes, calls that are the identity
 *  where they are left out (absent.c): traces the model again over the declared ranges as a trace
 *  of its own with the example's inputs repeated or cut to those sizes (so the record run makes
 *  them and the runs that lack them are given them), and where that trace holds, it is the model
 *  (tr->branched) and outputs the model's eager outputs at the example (the record run's n
 *  released; -1: before the record run, none): their count. 0 where it does not hold (the caller goes on as before, no error
 *  set), -1 on OutOfMemory. */
int om__branch_reexample(om_trace *tr, const om_symbol *declared, om_trace_fn fn, void *ctx, om_tensor **outputs,
                         int max_outputs, int n, uint64_t seed, uint64_t offset);
/** om_trace_finish of a trace written as branches: its outputs (those om__branch_run returned)
 *  named; returns the model (new) and ends the trace; NULL on error. */
om_traced_model *om__branch_finish(om_trace *tr, om_tensor *const *outputs, const char *const *names, int n);

/* ---- loops over a size (loop.c; docs/symbolic-axes.md, "Loops over a size") ---- */
/** The loops over symbol k (name) that model m (borrowed; traced with k's axes fixed at size)
 *  unrolls, rolled into ONNX Loops: its longest block of nodes repeated at least three times
 *  alike (the same ops and attributes, each input the same value from before the block, what the
 *  block before wrote, or an integer constant moving by the same step each time) is the body, run
 *  floor((per * S - c) / div) times (trips; S: axis d of graph input i; c: per * size less div
 *  times the repeats, at most per * min, min the smallest size; where div > 1, less what makes c
 *  trips->at modulo div), its outputs the loop-carried values the last repeat left and the steps a Concat after
 *  the repeats joins; then the longest left, up to loops Loops in sequence. Graph input axes of k
 *  (syms) named name. A new model (no symbols: the caller's), NULL when fewer than loops roll
 *  (no error set; where none rolls because the repeats read other constants, why, n_why long,
 *  says so when still empty) or on error (set). */
om_traced_model *om__loop_roll(const om_traced_model *m, const char *name, int64_t size, int64_t min, const int (*syms)[OM_MAX_DIMS],
                               int k, int i, int d, int loops, const om_loop_trips *trips, char *why, size_t n_why);
/* What each axis of an output of a rolled loop did across the sizes it was checked at. */
typedef struct om_loop_axes {
  bool seen;
  int64_t first[OM_MAX_DIMS];  /* its size at the first */
  bool moved[OM_MAX_DIMS];     /* another size at some other */
  bool is_size[OM_MAX_DIMS];   /* the symbol's size at each */
} om_loop_axes;
/** Whether runner h (r's, om_graph_runner) of model m run on in (n_in, borrowed; the symbol at size) gives want
 *  (n_want, borrowed: the model run eagerly): the same types and shapes, integers equal, floats
 *  within 1e-4 of the largest magnitude; notes what each output axis did in axes (one per
 *  output). false also where the runner fails (its error cleared); with OutOfMemory set. */
bool om__loop_agrees(const om_traced_model *m, const om_graph_runner *r, void *h, om_tensor *const *in, int n_in, om_tensor *const *want, int n_want,
                     int64_t size, om_loop_axes *axes);
/** Whether rolled graphs a and b (of pieces at two sizes of the loop's symbol) are the same: the
 *  same nodes, attributes and constants, the sizes the values had in the runs aside. Where the
 *  symbol's size reaches the graph other than as the Loop's trip count (Math.max(T, B) beside a
 *  loop over B: the piece's fixed B baked into a pad amount), a constant differs. */
bool om__loop_same(const om_traced_model *a, const om_traced_model *b);
/** Whether rolled graphs a and b (of pieces at sizes sa and sb of the loop's symbol) are the same
 *  but for int64 constants read by the outer graph's nodes that move by a whole step a size: a
 *  crop to the size beside the loop (upstream Mamba's conv1d(x)[..., :seq_len]), which a piece
 *  holds as its fixed size. Those reads of a become expressions of the size (axis d of graph
 *  input i: Shape, Mul, Add), fitted as a line through the two (the caller checks a third piece
 *  against it). 1 when the same, 2 when alike so (a rewritten), 0 where they differ otherwise (a
 *  then unfit for use), -1 on error (set). */
int om__loop_sizes(om_traced_model *a, const om_traced_model *b, int64_t sa, int64_t sb, int i, int d);
/** The output axes of m that moved with the symbol (axes, as om__loop_agrees noted them) named
 *  name where they were its size, else of no known size. false with OutOfMemory. */
bool om__loop_name_axes(om_traced_model *m, const om_loop_axes *axes, const char *name);

/* ---- constants (consts.c) ---- */
/** The value of constant t read by op: one initializer per view (spec 1), so a weight used twice,
 *  or tied, is stored once (t borrowed; the initializer holds its own view). -1 on error. */
int om__const_capture(om_trace *tr, om_tensor *t, om_op op);
/** The value of a generated initializer of dtype holding data (count elements: 1-D, or 0-d when
 *  ndim is 0; data copied), first read by op, deduplicated by value. -1 on error. */
int om__const_generated(om_trace *tr, const void *data, int64_t count, int ndim, om_dtype dtype, om_op op);
/** Drops what the graph gained since mark (values, nodes, initializers: mark[0..3)). */
void om__trace_rollback(om_trace *tr, const int *mark);

/* ---- lowering helpers (emit.c) ---- */
/** Whether the lowering's trace is still recording (a trace error inside it ended it; l borrowed). */
bool om__lower_alive(const om_lower *l);

/* ---- writes (write.c) ---- */
/** om__trace_sync on each of the model's outputs ts (n; none when n < 0): a view it returns
 *  that a write changed is its view of the written value. false on error. */
bool om__trace_sync_all(om_tensor *const *ts, int n);

/* ---- fitting (fit.c) ---- */
/* What om__fit_int gives where it gives no expression (an expression id is >= 0). Only
 * OM_FIT_ERROR sets an error. */
typedef enum {
  OM_FIT_ERROR = -1,     /* an error is set (out of memory) */
  OM_FIT_NONE = -2,      /* no form fits every run */
  OM_FIT_AMBIGUOUS = -3, /* forms fit that differ at some sizes: runs there tell them apart */
  OM_FIT_UNDECIDED = -4, /* a floor division fits that the runs cannot pin down (too few, a residue missing) */
} om_fit_miss;
/** The expression of an integer the caller computed: a0 here, the logged values in the other
 *  runs (vals[r] for each run r with a partner call, l->rc[r]), written as what it is (a size, a multiple, a sum, a product, a
 *  floor division), or an om_fit_miss: OM_FIT_AMBIGUOUS with the variables where the forms differ in at (n_at of them,
 *  at most OM_AT_MAX). *floored: the form is a floor division,
 *  which a few runs cannot tell from one by a larger divisor, or affine in sizes the runs took
 *  at only some residues mod 2 or 3 (fit_int asks for more runs). */
int om__fit_int(om_lower *l, int64_t a0, const int64_t *vals, bool *floored, int64_t (*at)[64], int *n_at);
/** Where om__fit_int found no form for a call that is refused next: the sizes where the coarsest
 *  size the values are a function of (of the call's inputs' extents, the symbols and the trace's
 *  extents, the one with the fewest values at the points: a stage's padded height, which the
 *  consecutive sizes the runs take move through a few values only) takes values the points did
 *  not, each of its symbols alone moved from the example, into at (for om__run_more_at, within
 *  its budget); their count (OM_AT_MAX at most; 0: none). */
int om__fit_new_values(om_lower *l, int64_t a0, const int64_t *vals, int64_t (*at)[64]);
/** The room a refusal gives the list of values it saw (om__fit_seen's cap): with the longest fixed
 *  text beside it, the whole message fits the thread's 512-byte error message. */
#define OM_SEEN_CAP 240
/** Describes the values of an integer across the runs for a refusal: "7 here, 8 at seq=8, ...";
 *  writes into buf (borrowed, cap bytes), returns buf. */
const char *om__fit_seen(om_lower *l, int64_t a0, const int64_t *vals, char *buf, size_t cap);
/** Appends piece to the list in buf (n bytes so far, shown pieces) if it fits whole with room for
 *  ", ..." and fewer than six are shown; else appends ", ..." and returns false. */
bool om__seen_append(char *buf, size_t cap, size_t *n, int *shown, const char *piece);
/** The sizes either side of each switch of a minimum min(N, c) (where N reaches c, one symbol of N
 *  moved from the example) in x or the sizes call l reads that no run
 *  has seen, into at (OM_AT_MAX at most): a value fitted over runs on one side only (a pad of
 *  max(L, 6) as one of L, from runs at L = 1 and L >= 6) is checked at both. Their count. */
int om__fit_switches(om_lower *l, int x, int64_t (*at)[64]);
/** The sizes where a floor division by k (not a power of two) in x of c * E + b, E one symbol,
 *  sits on an edge a float product moves (the exact c * E / k an integer or a half, and the size
 *  times c / k as a double not it: 62.99999999999999 = 90 * 0.7), the first two of each kind no
 *  run has seen, into at (OM_AT_MAX at most): a model computing Math.floor(T * 0.7) gives 62 at
 *  T = 90 where floor(7T / 10) is 63, and the runs there tell which. Their count. */
int om__fit_float_edges(om_lower *l, int x, int64_t (*at)[64]);
/** The form of a float scalar (v0 here, vals[r] in run r) into out; false when none fits. */
bool om__fit_float(om_lower *l, double v0, const double *vals, om_xfloat *out);
/** f at the variables v (per symbol) into *out; false on overflow. */
bool om__xfloat_eval(const om_trace *tr, const om_xfloat *f, const int64_t *v, double *out);
/** A float32 0-d value of a scalar computed from a size (emit.c): Cast of the size, then its
 *  function, scale and shift, each only where it changes something. -1 on error. */
int om__lower_xfloat(om_lower *l, const om_xfloat *f);

/* ---- the outputs' extents (probe.c) ---- */
/** Makes the probe's assignments (at the start of the record run). false on OutOfMemory. */
bool om__probe_init(om_trace *tr);
/** Adds expression x (or -1: the output's fixed size) as a candidate for output j's axis d. */
void om__probe_candidate(om_lower *l, int j, int d, int x);
/** Chooses every output axis's extent among its candidates (and the generic ones: fixed, an
 *  input axis's extent, a function of one input axis for ops that derive extents), checked by
 *  running infer at the probe's assignments; narrows a symbol's range where the call needs it,
 *  refuses (SymbolicShape) what holds only for some sizes. false when refused. */
bool om__probe_extents(om_lower *l);

#endif /* OM_TRACE_H */
