/* A loop over a size rolled into an ONNX Loop (docs/symbolic-axes.md, "Loops over a size").
 * When the model makes more calls at every larger size of a symbol (runs.c, om__run_loop),
 * branch.c traces it with that symbol's axes fixed at one size and hands the model here: its
 * longest block of nodes that repeats (the same ops and attributes; each input the same value
 * defined before the block, a value the block before wrote, or an integer constant that moves
 * by the same step every time: a select's index) becomes the body of a Loop run size - c times,
 * c the fixed size less the repeats. What the block before wrote is loop-carried, what precedes
 * the loop is read from the outer scope, the moving constants are computed from the iteration
 * number (from the axis's end where they count down). The Loop's outputs are of two kinds
 * (loop_out): the loop-carried values as the last repeat left them, and the steps a Concat after
 * the repeats joins (om.stack), collected as scan outputs and put back where the Concat had
 * them. Then the longest block left, for Loops in sequence. branch.c runs the rolled graph at
 * sizes across the range against the model run eagerly (om__loop_agrees) and keeps it only where
 * every one agrees. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

#define OM_LOOP_INTS 16 /* the most elements of a constant that moves with the iteration */

/* What input i of a node of the block reads. */
typedef enum { IN_NONE, IN_BODY, IN_CARRIED, IN_OUTER, IN_MOVES } in_kind;
typedef struct slot {
  in_kind kind;
  int r, o;   /* IN_BODY, IN_CARRIED: output o of the block's node r (this block's, the one before's) */
  int v, v0;  /* IN_OUTER: the value; IN_MOVES: the constant in the block's second repeat (v) and first (v0) */
  int first;  /* IN_CARRIED: what the first repeat reads instead (defined before the loop) */
} slot;

#define OM_LOOP_SCANS 8 /* the most collected values (scan outputs) one loop gives */

/* A value of the block that every repeat writes and a Concat after the repeats joins, one input
 * per repeat in order (om.stack(outs, axis), om.cat of unsqueezed steps): the Loop collects it as
 * a scan output (ONNX stacks those along a new axis 0), and a Transpose puts that axis where the
 * Concat had it. */
typedef struct scan_out {
  int r, o;      /* output o of the block's node r */
  int cat, at;   /* the Concat node, and its input of the first repeat's (the last's when reversed) */
  int axis;      /* the Concat's axis, of size 1 in each step */
  bool wrapped;  /* each step read through its own Unsqueeze at axis after the repeats (dropped: the body
                    collects the value itself); else read directly (the body squeezes the axis) */
  bool reversed; /* joined from the last repeat to the first (a loop that runs backwards, its steps in time order) */
} scan_out;

/* The repeats: m of p nodes from node s; slots[at[r] + i] for input i of the block's node r; the
 * values the Concats after them collect. */
typedef struct region {
  int s, p, m;
  int64_t size; /* the symbol's size in the graph rolled */
  char pre[16]; /* the prefix of the names the Loop writes ("Loop/", "Loop1/" for a second loop in the graph) */
  bool guard;   /* the Loop runs at least once (put_loop): its indices kept in range for that run */
  bool loose;   /* for the refusal only: a read of another constant of the same type and shape in each repeat matches */
  int loose_r;  /* then the block's node that read one (-1: none did) */
  slot *slots;
  int *at;
  int n_scans;
  scan_out scans[OM_LOOP_SCANS];
} region;

/* What the Loop gives, in its output order: each loop-carried value as the last repeat left it
 * (the state after the loop), then each scan output. */
typedef enum { OUT_CARRIED, OUT_SCAN } out_kind;
typedef struct loop_out {
  out_kind kind;
  int r, o;             /* the block's node r, output o */
  const scan_out *scan; /* OUT_SCAN: how it is collected */
} loop_out;

static int out_index(const om_gnode *n, int v) {
  for (int j = 0; j < n->n_out; j++)
    if (n->out[j] == v) return j;
  return -1;
}

/* Whether nodes a and b are the same op with the same attributes (no subgraph, no tensor). */
static bool same_op(const om_gnode *a, const om_gnode *b) {
  if (strcmp(a->op_type, b->op_type) || a->n_in != b->n_in || a->n_out != b->n_out || a->n_attrs != b->n_attrs) return false;
  for (int k = 0; k < a->n_attrs; k++)
    if (!om__same_attr(&a->attrs[k], &b->attrs[k])) return false;
  return true;
}

/* The elements of value v when it is an int64 initializer of at most OM_LOOP_INTS (their count), else -1. */
static int int_const(const om_graph *g, int v, int64_t *vals) {
  const om_gvalue *val = &g->values.v[v];
  if (val->init < 0 || val->dtype != OM_INT64) return -1;
  const om_tensor *t = g->inits.v[val->init].tensor;
  int64_t n = t ? om_tensor_numel(t) : OM_LOOP_INTS + 1;
  if (n > OM_LOOP_INTS) return -1;
  for (int64_t e = 0; e < n; e++) vals[e] = (int64_t)om__get_flat(t, e);
  return (int)n;
}

/* Whether constants a (repeat 0), b (repeat 1) and c (repeat t) move by the same step. */
static bool moves_evenly(const om_graph *g, int a, int b, int c, int64_t t) {
  int64_t va[OM_LOOP_INTS], vb[OM_LOOP_INTS], vc[OM_LOOP_INTS];
  int n = int_const(g, a, va);
  if (n < 0 || int_const(g, b, vb) != n || int_const(g, c, vc) != n) return false;
  const om_gvalue *x = &g->values.v[a], *y = &g->values.v[c];
  if (x->dtype != y->dtype || x->ndim != y->ndim || memcmp(x->shape, y->shape, sizeof(int64_t) * (size_t)x->ndim)) return false;
  for (int e = 0; e < n; e++) {
    int64_t step, by, at;
    if (__builtin_sub_overflow(vb[e], va[e], &step) || __builtin_mul_overflow(step, t, &by) ||
        __builtin_add_overflow(va[e], by, &at) || at != vc[e])
      return false;
  }
  return true;
}

/* Whether values a and b are both initializers of the same type and shape. */
static bool alike_consts(const om_graph *g, int a, int b) {
  const om_gvalue *x = &g->values.v[a], *y = &g->values.v[b];
  return a >= 0 && b >= 0 && x->init >= 0 && y->init >= 0 && x->dtype == y->dtype && x->ndim == y->ndim &&
         !memcmp(x->shape, y->shape, sizeof(int64_t) * (size_t)x->ndim);
}

/* Whether repeat t of region rg (slots filled from repeat 1) reads as the slots say. */
static bool repeat_matches(const om_graph *g, region *rg, int t) {
  int s = rg->s, p = rg->p;
  for (int r = 0; r < p; r++) {
    const om_gnode *a = &g->nodes.v[s + t * p + r], *b = &g->nodes.v[s + p + r];
    if (!same_op(a, b)) return false;
    for (int i = 0; i < a->n_in; i++) {
      slot *sl = &rg->slots[rg->at[r] + i];
      int va = a->in[i], pa = va >= 0 ? g->values.v[va].producer : -1;
      switch (sl->kind) {
        case IN_NONE: if (va >= 0) return false; break;
        case IN_BODY: if (pa != s + t * p + sl->r || out_index(&g->nodes.v[pa], va) != sl->o) return false; break;
        case IN_CARRIED:
          if (t == 0 && (va < 0 || pa >= s)) return false;
          if (t == 0 && sl->first >= 0 && sl->first != va) return false;
          if (t == 0) sl->first = va;
          if (t > 0 && (pa != s + (t - 1) * p + sl->r || out_index(&g->nodes.v[pa], va) != sl->o)) return false;
          break;
        case IN_OUTER:
          if (va != sl->v && !(rg->loose && alike_consts(g, va, sl->v))) return false;
          if (va != sl->v) rg->loose_r = r;
          break;
        case IN_MOVES:
          if (t == 0) sl->v0 = va;
          else if (!moves_evenly(g, sl->v0, sl->v, va, t)) return false;
          break;
      }
    }
  }
  return true;
}

/* How many inputs the block's nodes read in all (the slots of rg). */
static int slot_count(const om_graph *g, const region *rg) { return rg->at[rg->p - 1] + g->nodes.v[rg->s + 2 * rg->p - 1].n_in; }

/* The slots of repeat 1 of the block of p nodes from s (into rg), then how many repeats from s
 * read alike (0 when repeat 0 does not: the block starts elsewhere). */
static int repeats(const om_graph *g, region *rg, int s, int p) {
  rg->s = s, rg->p = p, rg->loose_r = -1;
  int n_slots = 0;
  for (int r = 0; r < p; r++) {
    const om_gnode *b = &g->nodes.v[s + p + r];
    rg->at[r] = n_slots;
    for (int i = 0; i < b->n_in; i++) {
      slot *sl = &rg->slots[n_slots++];
      int vb = b->in[i], pb = vb >= 0 ? g->values.v[vb].producer : -1;
      *sl = (slot){.kind = IN_OUTER, .v = vb, .v0 = -1, .first = -1};
      int64_t ints[OM_LOOP_INTS];
      if (vb < 0) sl->kind = IN_NONE;
      else if (pb >= s) sl->kind = pb >= s + p ? IN_BODY : IN_CARRIED, sl->r = pb - (pb >= s + p ? s + p : s), sl->o = out_index(&g->nodes.v[pb], vb);
      else if (int_const(g, vb, ints) >= 0) sl->kind = IN_MOVES;
    }
  }
  if (!repeat_matches(g, rg, 0)) return 0;
  for (int q = 0; q < slot_count(g, rg); q++) /* a constant the same in both: read from outside */
    if (rg->slots[q].kind == IN_MOVES && rg->slots[q].v0 == rg->slots[q].v) rg->slots[q].kind = IN_OUTER;
  int m = 2;
  while (s + (m + 1) * p <= g->nodes.n && repeat_matches(g, rg, m)) m++;
  return m;
}

/* Whether value v is written by the repeats of rg: repeat *k, the block's node *r, output *o. */
static bool step_of(const om_graph *g, const region *rg, int v, int *k, int *r, int *o) {
  int pv = v >= 0 ? g->values.v[v].producer : -1;
  if (pv < rg->s || pv >= rg->s + rg->m * rg->p) return false;
  *k = (pv - rg->s) / rg->p, *r = (pv - rg->s) % rg->p, *o = out_index(&g->nodes.v[pv], v);
  return true;
}

/* Whether input j of Concat node c (along axis) is a step of the repeats: repeat *k's output o of
 * node r, read directly (its axis of size 1) or through an Unsqueeze after the repeats at that
 * axis (*wrap: that node, else -1). */
static bool collected(const om_graph *g, const region *rg, const om_gnode *c, int axis, int j, int *k, int *r, int *o, int *wrap) {
  int v = c->in[j], pv = v >= 0 ? g->values.v[v].producer : -1;
  const om_gnode *u = pv >= rg->s + rg->m * rg->p ? &g->nodes.v[pv] : NULL;
  int64_t ax[OM_LOOP_INTS];
  *wrap = -1;
  if (u && !strcmp(u->op_type, "Unsqueeze") && u->n_in == 2 && int_const(g, u->in[1], ax) == 1 &&
      (ax[0] < 0 ? ax[0] + g->values.v[v].ndim : ax[0]) == axis)
    *wrap = pv, v = u->in[0];
  else if (v < 0 || g->values.v[v].ndim <= axis || g->values.v[v].shape[axis] != 1)
    return false;
  return step_of(g, rg, v, k, r, o);
}

/* The runs of rg's steps that the Concats after the repeats join (rg->scans): one input per
 * repeat, first to last or last to first, each the same output of the block, all read alike.
 * false when there are more than OM_LOOP_SCANS. */
static bool find_scans(const om_graph *g, region *rg) {
  rg->n_scans = 0;
  for (int n = rg->s + rg->m * rg->p; n < g->nodes.n; n++) {
    const om_gnode *c = &g->nodes.v[n];
    if (strcmp(c->op_type, "Concat") || c->n_attrs != 1 || c->attrs[0].type != OM_GATTR_INT) continue;
    int rank = g->values.v[c->out[0]].ndim, axis = (int)(c->attrs[0].i < 0 ? c->attrs[0].i + rank : c->attrs[0].i);
    for (int j = 0; j + rg->m <= c->n_in; j++) {
      int k, r, o, w;
      if (!collected(g, rg, c, axis, j, &k, &r, &o, &w) || (k != 0 && k != rg->m - 1)) continue;
      bool reversed = k != 0, run = true;
      for (int e = 1; run && e < rg->m; e++) {
        int k2, r2, o2, w2;
        run = collected(g, rg, c, axis, j + e, &k2, &r2, &o2, &w2) && r2 == r && o2 == o && (w2 < 0) == (w < 0) &&
              k2 == (reversed ? k - e : e);
      }
      if (!run) continue;
      if (rg->n_scans == OM_LOOP_SCANS) return false;
      rg->scans[rg->n_scans++] = (scan_out){.r = r, .o = o, .cat = n, .at = j, .axis = axis, .wrapped = w >= 0, .reversed = reversed};
      j += rg->m - 1;
    }
  }
  return true;
}

/* The scan of rg whose run reads input i of node n (its Concat), else -1. */
static int scan_slot(const region *rg, int n, int i) {
  for (int q = 0; q < rg->n_scans; q++)
    if (rg->scans[q].cat == n && i >= rg->scans[q].at && i < rg->scans[q].at + rg->m) return q;
  return -1;
}

/* The scan of rg one of whose steps node n unsqueezes (a node dropped with the repeats), else -1. */
static int wrapper_scan(const om_graph *g, const region *rg, int n) {
  for (int q = 0; q < rg->n_scans; q++) {
    const scan_out *sc = &rg->scans[q];
    for (int e = 0; sc->wrapped && e < rg->m; e++)
      if (g->values.v[g->nodes.v[sc->cat].in[sc->at + e]].producer == n) return q;
  }
  return -1;
}

/* Whether what follows the repeats reads of them only the last one's loop-carried values and
 * the steps the scans collect (their Unsqueezes read only by their Concats). */
static bool sealed(const om_graph *g, const region *rg) {
  int end = rg->s + rg->m * rg->p, last = end - rg->p;
  for (int n = end; n <= g->nodes.n; n++) {
    const int *in = n < g->nodes.n ? g->nodes.v[n].in : g->outputs.v;
    int n_in = n < g->nodes.n ? g->nodes.v[n].n_in : g->outputs.n;
    bool wrapper = n < g->nodes.n && wrapper_scan(g, rg, n) >= 0;
    for (int i = 0; i < n_in; i++) {
      int pv = in[i] >= 0 ? g->values.v[in[i]].producer : -1;
      int slot_of = n < g->nodes.n ? scan_slot(rg, n, i) : -1;
      if (pv >= end && pv < g->nodes.n && wrapper_scan(g, rg, pv) >= 0) {
        if (slot_of < 0) return false; /* a step's Unsqueeze read elsewhere too */
        continue;
      }
      if (pv < rg->s || pv >= end || (wrapper && i == 0) || slot_of >= 0) continue;
      bool carried = false;
      for (int q = 0; pv >= last && q < slot_count(g, rg); q++)
        carried |= rg->slots[q].kind == IN_CARRIED && rg->slots[q].r == pv - last && rg->slots[q].o == out_index(&g->nodes.v[pv], in[i]);
      if (!carried) return false;
    }
  }
  return true;
}

/* The longest repeats in g (the most nodes covered; at least 3 repeats), into best (its slots
 * the caller's, room for every input of the graph's nodes). false when none. */
static bool find_region(const om_graph *g, region *best, region *scratch) {
  int n = g->nodes.n;
  best->m = 0;
  for (int p = 1; 3 * p <= n; p++)
    for (int s = 0; s + 3 * p <= n; s++) {
      bool alike = true;
      for (int r = 0; r < p && alike; r++) alike = same_op(&g->nodes.v[s + r], &g->nodes.v[s + p + r]);
      if (!alike) continue;
      int m = repeats(g, scratch, s, p);
      scratch->m = m;
      if (m < 3 || m * p <= best->m * best->p || !find_scans(g, scratch) || !sealed(g, scratch)) continue;
      memcpy(best->slots, scratch->slots, sizeof *best->slots * (size_t)slot_count(g, scratch));
      memcpy(best->at, scratch->at, sizeof *best->at * (size_t)p);
      memcpy(best->scans, scratch->scans, sizeof best->scans);
      best->s = s, best->p = p, best->m = m, best->n_scans = scratch->n_scans, best->loose_r = scratch->loose_r;
    }
  return best->m > 0;
}

/* ---- the graphs ---- */

/* A value of g named prefix + name like value like (dtype, shape and dim_params); -1 with OutOfMemory. */
static int value_like(om_graph *g, const char *prefix, const om_gvalue *like) {
  int v = om__graph_value(g, like->dtype, like->ndim, like->shape);
  if (v < 0 || !(g->values.v[v].name = om__arena_printf(&g->arena, "%s%s", prefix, like->name))) return -1;
  for (int d = 0; d < like->ndim; d++)
    if (like->dim_param[d] && !(g->values.v[v].dim_param[d] = om__arena_strdup(&g->arena, like->dim_param[d]))) return -1;
  return v;
}

/* A generated int64 initializer of g: shape [n] (or [] when scalar), the values vals. -1 on error. */
static int int_init(om_graph *g, const char *name, const int64_t *vals, int64_t n, bool scalar) {
  om_tensor *t = om_from_data(vals, &n, 1, OM_INT64), *r = t && scalar ? om_reshape(t, NULL, 0) : om_tensor_retain(t);
  om_tensor_release(t);
  int v = r ? om__graph_value(g, OM_INT64, r->ndim, r->shape) : -1;
  om_ginit *init = v >= 0 ? OM_VEC_PUSH_SLOT(g->inits) : NULL;
  if (!init || !(g->values.v[v].name = om__arena_strdup(&g->arena, name))) return om_tensor_release(r), -1;
  *init = (om_ginit){.value = v, .tensor = r, .first_use = (om_op)-1, .generated = true};
  g->values.v[v].init = g->inits.n - 1;
  return v;
}

/* The body's value of the moving constant of slot sl (m's constants v0, v): base + step * i,
 * Mul and Add written only where they change something; an element that moves down from an
 * index of the axis (size its extent in g) is written from the end (ONNX Gather counts a
 * negative index from the end, as select does), so that a loop backwards over the size starts
 * at its last element at every size. -1 on error. */
static int moving(om_graph *b, const om_graph *g, const slot *sl, int64_t size, const char *pre, int iter, int q) {
  int64_t base[OM_LOOP_INTS], one[OM_LOOP_INTS], step[OM_LOOP_INTS];
  int n = int_const(g, sl->v0, base);
  int_const(g, sl->v, one);
  bool unit = true, zero = true;
  for (int e = 0; e < n; e++) {
    step[e] = one[e] - base[e];
    if (step[e] < 0 && base[e] >= 0 && base[e] < size) base[e] -= size; /* counts down from the end (t = T - 1, ..., 0): from the end at every size */
    unit &= step[e] == 1, zero &= base[e] == 0;
  }
  const om_gvalue *c = &g->values.v[sl->v];
  char name[64];
  int x = iter;
  for (int op = 0; op < 2; op++) { /* x * step, then + base */
    if (op == 0 ? unit && c->ndim == 0 : zero) continue;
    snprintf(name, sizeof name, op ? "%sbase%d" : "%sstep%d", pre, q);
    int k = int_init(b, name, op ? base : step, n, c->ndim == 0);
    snprintf(name, sizeof name, op ? "%sat%d" : "%sby%d", pre, q);
    int y = k >= 0 ? om__graph_value(b, c->dtype, c->ndim, c->shape) : -1;
    if (y < 0 || !(b->values.v[y].name = om__arena_strdup(&b->arena, name)) ||
        om__graph_add_node(b, op ? "Add" : "Mul", name, (int[]){x, k}, 2, &y, 1, NULL, 0) < 0)
      return -1;
    x = y;
  }
  return x;
}

/* The loop-carried values of rg: (r, o) pairs of the block's nodes, each once, into rc (their
 * count). A slot's index into them: carried_of. */
static int carried_of(const region *rg, int n_slots, int r, int o) {
  int c = 0;
  for (int q = 0; q < n_slots; q++) {
    const slot *sl = &rg->slots[q];
    if (sl->kind != IN_CARRIED) continue;
    bool before = false;
    for (int e = 0; e < q && !before; e++) before = rg->slots[e].kind == IN_CARRIED && rg->slots[e].r == sl->r && rg->slots[e].o == sl->o;
    if (before) continue;
    if (sl->r == r && sl->o == o) return c;
    c++;
  }
  return c; /* the count, for a pair none has */
}

/* The Loop's outputs of rg in their order (n_carried loop-carried values, then rg's scans) into outs. */
static void loop_outputs(const region *rg, int n_slots, int n_carried, loop_out *outs) {
  for (int c = 0; c < n_carried; c++) {
    outs[c] = (loop_out){.kind = OUT_CARRIED, .r = -1};
    for (int q = 0; q < n_slots && outs[c].r < 0; q++)
      if (rg->slots[q].kind == IN_CARRIED && carried_of(rg, n_slots, rg->slots[q].r, rg->slots[q].o) == c)
        outs[c].r = rg->slots[q].r, outs[c].o = rg->slots[q].o;
  }
  for (int q = 0; q < rg->n_scans; q++)
    outs[n_carried + q] = (loop_out){.kind = OUT_SCAN, .r = rg->scans[q].r, .o = rg->scans[q].o, .scan = &rg->scans[q]};
}

/* A new value of g of like's type, shape and dim_params named name; -1 on error. like may be
 * one of g's values: it is copied before g's values grow. */
static int named_value(om_graph *g, const om_gvalue *like_in, const char *name) {
  const om_gvalue like = *like_in;
  int v = om__graph_value(g, like.dtype, like.ndim, like.shape);
  if (v < 0 || !(g->values.v[v].name = om__arena_strdup(&g->arena, name))) return -1;
  for (int d = 0; d < like.ndim; d++)
    if (like.dim_param[d] && !(g->values.v[v].dim_param[d] = om__arena_strdup(&g->arena, like.dim_param[d]))) return -1;
  return v;
}

/* A step read directly by its Concat, in the body: value x of g with the Concat's axis (of size 1)
 * dropped, so that the Loop's stacking gives the steps along axis 0 alone (a Squeeze named
 * name, its axes an initializer). -1 on error. */
static int squeezed(om_graph *g, int x, int axis, const char *name) {
  om_gvalue like = g->values.v[x];
  int64_t ax = axis;
  char nm[96];
  snprintf(nm, sizeof nm, "%s/axes", name);
  int k = int_init(g, nm, &ax, 1, false);
  memmove(like.shape + axis, like.shape + axis + 1, sizeof(int64_t) * (size_t)(like.ndim - axis - 1));
  memmove(like.dim_param + axis, like.dim_param + axis + 1, sizeof *like.dim_param * (size_t)(like.ndim - axis - 1));
  like.ndim--;
  int y = k >= 0 ? named_value(g, &like, name) : -1;
  return y >= 0 && om__graph_add_node(g, "Squeeze", name, (int[]){x, k}, 2, &y, 1, NULL, 0) >= 0 ? y : -1;
}

/* Scan output x of g (the steps along axis 0) put where its Concat had them: reversed along
 * axis 0 first when the Concat joined them from the last (a Slice), then axis 0 moved to axis (a
 * Transpose); the last node written writes into when that is a value (the Concat's own output,
 * where the steps were all it joined), else a new one. The result, x itself when nothing is
 * written; -1 on error. */
static int put_steps(om_graph *g, int x, int axis, bool reversed, int into, const char *name) {
  om_gvalue like = g->values.v[x];
  char nm[96];
  if (reversed) { /* Slice(starts -1, ends INT64_MIN, axes 0, steps -1) */
    int64_t b[4] = {-1, INT64_MIN, 0, -1};
    int k[4], y;
    for (int q = 0; q < 4; q++) {
      snprintf(nm, sizeof nm, "%s/%s", name, (const char *[]){"starts", "ends", "axes", "steps"}[q]);
      if ((k[q] = int_init(g, nm, &b[q], 1, false)) < 0) return -1;
    }
    snprintf(nm, sizeof nm, "%s/reversed", name);
    if ((y = axis == 0 && into >= 0 ? into : named_value(g, &like, nm)) < 0 ||
        om__graph_add_node(g, "Slice", nm, (int[]){x, k[0], k[1], k[2], k[3]}, 5, &y, 1, NULL, 0) < 0)
      return -1;
    x = y;
  }
  if (axis == 0) return x;
  int64_t *perm = om__arena_alloc(&g->arena, sizeof *perm * (size_t)like.ndim); /* the node borrows it */
  if (!perm) return -1;
  for (int d = 0; d < like.ndim; d++) {
    perm[d] = d < axis ? d + 1 : d == axis ? 0 : d;
    like.shape[d] = g->values.v[x].shape[perm[d]], like.dim_param[d] = g->values.v[x].dim_param[perm[d]];
  }
  om_gattr at = OM_ATTR_INTS("perm", perm, like.ndim);
  snprintf(nm, sizeof nm, "%s/put", name);
  int y = into >= 0 ? into : named_value(g, &like, nm);
  return y >= 0 && om__graph_add_node(g, "Transpose", nm, &x, 1, &y, 1, &at, 1) >= 0 ? y : -1;
}

/* Index idx of Gather node src (its data the body's value data) kept at most the last of its
 * axis: Min(idx, Shape(data)[axis] - 1). For a guarded Loop's one run where it should run none:
 * an index past the end there (a loop from 1 at T = 1) would fail the whole graph, while in every
 * run that counts the index is in range and unchanged. -1 on error. */
static int in_range(om_graph *b, int data, const om_gnode *src, int idx, const char *pre, int q) {
  int64_t axis = 0, one = 1;
  for (int a = 0; a < src->n_attrs; a++)
    if (!strcmp(src->attrs[a].name, "axis") && src->attrs[a].type == OM_GATTR_INT) axis = src->attrs[a].i;
  if (axis < 0) axis += b->values.v[data].ndim;
  om_gattr at[2] = {OM_ATTR_INT("start", axis), OM_ATTR_INT("end", axis + 1)};
  om_gvalue v1 = {.dtype = OM_INT64, .ndim = 1, .shape = {1}}, v0 = {.dtype = OM_INT64};
  const om_gvalue ix = b->values.v[idx];
  char nm[64], kn[72];
  snprintf(nm, sizeof nm, "%sinrange%d", pre, q);
  snprintf(kn, sizeof kn, "%s/one", nm);
  int k = int_init(b, kn, &one, 1, false);
  snprintf(kn, sizeof kn, "%s/extent", nm);
  int e = k >= 0 ? named_value(b, &v1, kn) : -1;
  if (e < 0 || om__graph_add_node(b, "Shape", kn, &data, 1, &e, 1, at, 2) < 0) return -1;
  snprintf(kn, sizeof kn, "%s/last", nm);
  int l = named_value(b, &v1, kn);
  if (l < 0 || om__graph_add_node(b, "Sub", kn, (int[]){e, k}, 2, &l, 1, NULL, 0) < 0) return -1;
  if (ix.ndim == 0) { /* a 0-d index stays 0-d (select drops the axis) */
    snprintf(kn, sizeof kn, "%s/last0", nm);
    int l0 = named_value(b, &v0, kn);
    if (l0 < 0 || om__graph_add_node(b, "Squeeze", kn, &l, 1, &l0, 1, NULL, 0) < 0) return -1;
    l = l0;
  }
  int y = named_value(b, &ix, nm);
  return y >= 0 && om__graph_add_node(b, "Min", nm, (int[]){idx, l}, 2, &y, 1, NULL, 0) >= 0 ? y : -1;
}

/* The Loop's body: iteration number, condition, one input per loop-carried value (first the
 * value each reads in the first repeat), the block's nodes, the condition and the Loop's outputs
 * (outs, n_outs: the loop-carried values, then the scanned steps). Captured values name g's (ids
 * as g has them now). NULL on error. */
static om_graph *body_graph(const om_graph *g, const region *rg, int n_slots, int n_carried, const int *first, const loop_out *outs,
                            int n_outs) {
  om_graph *b = calloc(1, sizeof *b);
  int *map = calloc((size_t)g->values.n + 1, sizeof *map), *carried_in = calloc((size_t)n_carried + 1, sizeof *carried_in);
  bool ok = b && map && carried_in;
  for (int v = 0; ok && v < g->values.n; v++) map[v] = -1;
  om_gvalue scalar_i = {.name = "i", .dtype = OM_INT64}, scalar_c = {.name = "cond", .dtype = OM_BOOL};
  int iter = ok ? value_like(b, rg->pre, &scalar_i) : -1, cond = iter >= 0 ? value_like(b, rg->pre, &scalar_c) : -1;
  ok = cond >= 0;
  int *slot_in = ok ? OM_VEC_PUSH_SLOT(b->inputs) : NULL;
  if (slot_in) *slot_in = iter;
  ok = slot_in && (slot_in = OM_VEC_PUSH_SLOT(b->inputs));
  if (ok) *slot_in = cond;
  for (int c = 0; ok && c < n_carried; c++) {
    char prefix[32];
    snprintf(prefix, sizeof prefix, "%sin%d/", rg->pre, c);
    ok = (carried_in[c] = value_like(b, prefix, &g->values.v[first[c]])) >= 0 && (slot_in = OM_VEC_PUSH_SLOT(b->inputs));
    if (ok) *slot_in = carried_in[c];
  }
  int cond_out = ok ? value_like(b, rg->pre, &(om_gvalue){.name = "cond_out", .dtype = OM_BOOL}) : -1;
  const char *cond_name = ok ? om__arena_printf(&b->arena, "%scond", rg->pre) : NULL;
  ok = cond_name && om__graph_add_node(b, "Identity", cond_name, &cond, 1, &cond_out, 1, NULL, 0) >= 0;
  int *out_slot = ok ? OM_VEC_PUSH_SLOT(b->outputs) : NULL;
  if ((ok = out_slot != NULL)) *out_slot = cond_out;
  for (int r = 0; ok && r < rg->p; r++) {
    const om_gnode *src = &g->nodes.v[rg->s + rg->p + r];
    int *in = malloc(sizeof(int) * ((size_t)(src->n_in + src->n_out) + 1)), *out = in ? in + src->n_in : NULL;
    ok = in != NULL;
    for (int i = 0; ok && i < src->n_in; i++) {
      const slot *sl = &rg->slots[rg->at[r] + i];
      switch (sl->kind) {
        case IN_NONE: in[i] = -1; break;
        case IN_BODY: in[i] = map[src->in[i]]; break;
        case IN_CARRIED: in[i] = carried_in[carried_of(rg, n_slots, sl->r, sl->o)]; break;
        case IN_OUTER:
          if (map[sl->v] < 0) { /* read from the outer scope, once */
            int v = value_like(b, "", &g->values.v[sl->v]), *cap = v >= 0 ? OM_VEC_PUSH_SLOT(b->captured) : NULL;
            if ((ok = cap != NULL)) *cap = v, b->values.v[v].outer = sl->v, map[sl->v] = v;
          }
          in[i] = map[sl->v];
          break;
        case IN_MOVES:
          ok = (in[i] = moving(b, g, sl, rg->size, rg->pre, iter, rg->at[r] + i)) >= 0;
          if (ok && rg->guard && i == 1 && !strcmp(src->op_type, "Gather")) ok = (in[i] = in_range(b, in[0], src, in[1], rg->pre, rg->at[r] + i)) >= 0;
          break;
      }
    }
    for (int j = 0; ok && j < src->n_out; j++) ok = (map[src->out[j]] = out[j] = value_like(b, rg->pre, &g->values.v[src->out[j]])) >= 0;
    const char *name = ok ? om__arena_printf(&b->arena, "%s%s", rg->pre, src->name) : NULL;
    ok = name && om__graph_add_node(b, om__arena_strdup(&b->arena, src->op_type), name, in, src->n_in, out, src->n_out, src->attrs, src->n_attrs) >= 0;
    free(in);
  }
  for (int q = 0; ok && q < n_outs; q++) { /* the Loop's outputs, as the block writes them */
    const loop_out *lo = &outs[q];
    int v = map[g->nodes.v[rg->s + rg->p + lo->r].out[lo->o]], *slot;
    if (lo->kind == OUT_SCAN && !lo->scan->wrapped) { /* the Concat's axis of size 1 dropped: the Loop stacks the rest */
      char nm[48];
      snprintf(nm, sizeof nm, "%sscan%d/step", rg->pre, q - n_carried);
      ok = (v = squeezed(b, v, lo->scan->axis, nm)) >= 0;
    }
    if (ok && (ok = (slot = OM_VEC_PUSH_SLOT(b->outputs)) != NULL)) *slot = v;
  }
  free(map);
  free(carried_in);
  if (ok) return b;
  if (b) om__graph_free(b), free(b);
  return om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), NULL;
}

/* Drops the values of g nothing defines or reads any more, and the initializers nothing reads
 * (the moving constants of the repeats rolled up), renumbering the rest; false with OutOfMemory. */
static bool prune(om_graph *g) {
  int *map = malloc(sizeof *map * ((size_t)g->values.n + 1));
  if (!map) return false;
  for (int v = 0; v < g->values.n; v++) map[v] = -1;
  for (int k = 0; k < g->inputs.n; k++) map[g->inputs.v[k]] = 0;
  for (int k = 0; k < g->outputs.n; k++) map[g->outputs.v[k]] = 0;
  for (int n = 0; n < g->nodes.n; n++) {
    const om_gnode *node = &g->nodes.v[n];
    for (int i = 0; i < node->n_in; i++)
      if (node->in[i] >= 0) map[node->in[i]] = 0;
    for (int j = 0; j < node->n_out; j++) map[node->out[j]] = 0;
    for (int c = 0; c < node->n_cap; c++) map[node->cap[c]] = 0;
  }
  int kept = 0;
  for (int v = 0; v < g->values.n; v++)
    if (map[v] == 0) g->values.v[kept] = g->values.v[v], map[v] = kept++;
  int inits = 0;
  for (int k = 0; k < g->inits.n; k++) {
    om_ginit *init = &g->inits.v[k];
    if (map[init->value] < 0) {
      om__snapshot_drop(init->snap);
      om_tensor_release(init->tensor);
      continue;
    }
    init->value = map[init->value];
    g->values.v[init->value].init = inits;
    g->inits.v[inits++] = *init;
  }
  g->inits.n = inits;
  g->values.n = kept;
  for (int k = 0; k < g->inputs.n; k++) g->inputs.v[k] = map[g->inputs.v[k]];
  for (int k = 0; k < g->outputs.n; k++) g->outputs.v[k] = map[g->outputs.v[k]];
  for (int n = 0; n < g->nodes.n; n++) {
    om_gnode *node = &g->nodes.v[n];
    for (int i = 0; i < node->n_in; i++)
      if (node->in[i] >= 0) node->in[i] = map[node->in[i]];
    for (int j = 0; j < node->n_out; j++) g->values.v[node->out[j] = map[node->out[j]]].producer = n;
    for (int c = 0; c < node->n_cap; c++) node->cap[c] = map[node->cap[c]];
    for (int a = 0; a < node->n_attrs; a++) {
      om_graph *sub = node->attrs[a].type == OM_GATTR_GRAPH ? node->attrs[a].g : NULL;
      for (int c = 0; sub && c < sub->captured.n; c++) {
        om_gvalue *cv = &sub->values.v[sub->captured.v[c]];
        cv->outer = map[cv->outer];
      }
    }
  }
  free(map);
  return true;
}

/* The Loop of region rg into model t (a copy of m's graph, ids alike): the size of axis d of
 * graph input i (at most form->cap, where that is set) times form->per, less c, divided by form->div as the trip count, the first repeat's reads as the loop-carried values'
 * start; its outputs (loop_outputs) the last repeat's loop-carried values (the same ids: what
 * reads them after the loop is unchanged) and the scanned steps, each put where its Concat had
 * them in place of the run of inputs it read; the repeats' nodes and the steps' Unsqueezes
 * dropped. false on error (set). */
static bool put_loop(om_graph *t, const region *rg, int n_slots, int n_carried, const int *first, int i, int d, const om_loop_trips *form,
                     int64_t c, bool guard) {
  int n_outs = n_carried + rg->n_scans;
  loop_out *lo = malloc(sizeof *lo * ((size_t)n_outs + 1));
  if (!lo) return om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
  loop_outputs(rg, n_slots, n_carried, lo);
  om_graph *body = body_graph(t, rg, n_slots, n_carried, first, lo, n_outs);
  if (!body) return free(lo), false;
  int end = rg->s + rg->m * rg->p, last = end - rg->p, n_after = t->nodes.n - end;
  om_gnode *after = malloc(sizeof *after * ((size_t)n_after + 1));
  bool *dropped = calloc((size_t)n_after + 1, sizeof *dropped);
  int *ins = malloc(sizeof(int) * ((size_t)n_carried + 2)), *outs = malloc(sizeof(int) * ((size_t)(n_outs + n_carried) + 1));
  if (!after || !ins || !outs || !dropped) {
    free(after), free(ins), free(outs), free(dropped), free(lo);
    om__graph_free(body), free(body);
    return om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
  }
  for (int q = 0; q < n_carried; q++) /* before the repeats' nodes are written over */
    ins[2 + q] = first[q], outs[q] = t->nodes.v[last + lo[q].r].out[lo[q].o];
  int *state = outs + n_outs; /* guarded: the values the loop-carried ones are read as after it */
  memcpy(state, outs, sizeof *state * (size_t)n_carried);
  for (int k = 0; k < n_after; k++) dropped[k] = wrapper_scan(t, rg, end + k) >= 0;
  memcpy(after, t->nodes.v + end, sizeof *after * (size_t)n_after);
  t->nodes.n = rg->s;
  int64_t one = 1;
  om_gattr at[2] = {OM_ATTR_INT("start", d), OM_ATTR_INT("end", d + 1)};
  om_gvalue size1 = {.name = "size", .dtype = OM_INT64, .ndim = 1, .shape = {1}}, trips = size1, m = {.name = "M", .dtype = OM_INT64};
  trips.name = "trips";
  char nm[48];
  const char *pre = rg->pre;
  int size = value_like(t, pre, &size1);
  snprintf(nm, sizeof nm, "%sShape", pre);
  bool ok = size >= 0 && om__graph_add_node(t, "Shape", nm, &t->inputs.v[i], 1, &size, 1, at, 2) >= 0;
  ins[0] = size;
  if (ok && form->cap > 0) { /* a loop that stops at a size: min(S, cap) */
    snprintf(nm, sizeof nm, "%scap", pre);
    int k = int_init(t, nm, &form->cap, one, false);
    ins[0] = k >= 0 ? value_like(t, pre, &(om_gvalue){.name = "capped", .dtype = OM_INT64, .ndim = 1, .shape = {1}}) : -1;
    snprintf(nm, sizeof nm, "%sMin", pre);
    ok = ins[0] >= 0 && om__graph_add_node(t, "Min", nm, (int[]){size, k}, 2, &ins[0], 1, NULL, 0) >= 0;
    size = ins[0];
  }
  int64_t per = form->per, div = form->div;
  if (ok && per != 1) { /* per trips a size */
    snprintf(nm, sizeof nm, "%sper", pre);
    int k = int_init(t, nm, &per, one, false);
    ins[0] = k >= 0 ? value_like(t, pre, &(om_gvalue){.name = "times", .dtype = OM_INT64, .ndim = 1, .shape = {1}}) : -1;
    snprintf(nm, sizeof nm, "%sMul", pre);
    ok = ins[0] >= 0 && om__graph_add_node(t, "Mul", nm, (int[]){size, k}, 2, &ins[0], 1, NULL, 0) >= 0;
    size = ins[0];
  }
  if (ok && c) {
    snprintf(nm, sizeof nm, "%sless", pre);
    int k = int_init(t, nm, &c, one, false);
    ins[0] = k >= 0 ? value_like(t, pre, &trips) : -1;
    snprintf(nm, sizeof nm, "%sSub", pre);
    ok = ins[0] >= 0 && om__graph_add_node(t, "Sub", nm, (int[]){size, k}, 2, &ins[0], 1, NULL, 0) >= 0;
  }
  if (ok && div != 1) { /* a trip every div sizes: S - c is at least 0 here (roll_one), so ONNX's integer Div is the floor */
    snprintf(nm, sizeof nm, "%sdiv", pre);
    int k = int_init(t, nm, &div, one, false), x = ins[0];
    ins[0] = k >= 0 ? value_like(t, pre, &(om_gvalue){.name = "steps", .dtype = OM_INT64, .ndim = 1, .shape = {1}}) : -1;
    snprintf(nm, sizeof nm, "%sDiv", pre);
    ok = ins[0] >= 0 && om__graph_add_node(t, "Div", nm, (int[]){x, k}, 2, &ins[0], 1, NULL, 0) >= 0;
  }
  int mv = ok ? value_like(t, pre, &m) : -1;
  snprintf(nm, sizeof nm, "%sSqueeze", pre);
  ok = mv >= 0 && om__graph_add_node(t, "Squeeze", nm, &ins[0], 1, &mv, 1, NULL, 0) >= 0;
  int trips1 = ins[0], ran = -1; /* the trip count as [1]; guarded: whether the Loop should have run */
  ins[0] = mv, ins[1] = -1;
  /* A Loop of no iterations has no element shape for its scan outputs (the Session refuses it, and
   * ONNX leaves it to the runtime): where the trip count reaches 0 in the range and the Loop
   * collects steps, it runs at least once, its scan outputs are cut back to the trip count, and
   * its loop-carried values are read as their starts where it should not have run. */
  if (ok && guard) {
    int64_t vals[2] = {1, 0};
    om_gvalue i64 = {.dtype = OM_INT64}, b = {.dtype = OM_BOOL};
    snprintf(nm, sizeof nm, "%sonce", pre);
    int k1 = int_init(t, nm, &vals[0], 1, true);
    snprintf(nm, sizeof nm, "%snone", pre);
    int k0 = k1 >= 0 ? int_init(t, nm, &vals[1], 1, true) : -1;
    snprintf(nm, sizeof nm, "%sran", pre);
    ok = k0 >= 0 && (ran = named_value(t, &b, nm)) >= 0 && om__graph_add_node(t, "Greater", nm, (int[]){mv, k0}, 2, &ran, 1, NULL, 0) >= 0;
    snprintf(nm, sizeof nm, "%sM1", pre);
    ok = ok && (ins[0] = named_value(t, &i64, nm)) >= 0 && om__graph_add_node(t, "Max", nm, (int[]){mv, k1}, 2, &ins[0], 1, NULL, 0) >= 0;
    for (int q = 0; ok && q < n_carried; q++) {
      snprintf(nm, sizeof nm, "%sstate%d", pre, q);
      ok = (outs[q] = named_value(t, &t->values.v[state[q]], nm)) >= 0;
    }
  }
  for (int q = n_carried; ok && q < n_outs; q++) { /* a scan output: the steps' values along a new axis 0 */
    const scan_out *sc = lo[q].scan;
    const om_gnode *cat = &after[sc->cat - end];
    const om_gvalue *step = &body->values.v[body->outputs.v[1 + q]];
    om_gvalue like = {.dtype = step->dtype, .ndim = step->ndim + 1, .shape = {rg->m}};
    memcpy(like.shape + 1, step->shape, sizeof(int64_t) * (size_t)step->ndim);
    memcpy(like.dim_param + 1, step->dim_param, sizeof *like.dim_param * (size_t)step->ndim);
    snprintf(nm, sizeof nm, "%sscan%d", pre, q - n_carried);
    /* the Concat's own output where the steps were all it joined and stand as it had them */
    outs[q] = !guard && cat->n_in == rg->m && sc->axis == 0 && !sc->reversed ? cat->out[0] : named_value(t, &like, nm);
    ok = outs[q] >= 0;
  }
  om_gattr ba = {.name = "body", .type = OM_GATTR_GRAPH, .g = body};
  snprintf(nm, sizeof nm, "%.*s", (int)strlen(pre) - 1, pre); /* the node: the prefix without its slash */
  int node = ok ? om__graph_add_node(t, "Loop", nm, ins, n_carried + 2, outs, n_outs, &ba, 1) : -1;
  if (node >= 0) body = NULL; /* the node's now */
  ok = node >= 0 && om__graph_node_captures(t, &t->nodes.v[node]);
  for (int q = 0; ok && guard && q < n_carried; q++) { /* Where(ran, the Loop's, its start), where read after the loop */
    bool read = false;
    for (int k = 0; k < n_after && !read; k++)
      for (int e = 0; !dropped[k] && e < after[k].n_in; e++) read |= after[k].in[e] == state[q];
    for (int e = 0; e < t->outputs.n; e++) read |= t->outputs.v[e] == state[q];
    if (!read) continue;
    snprintf(nm, sizeof nm, "%sstate%d/kept", pre, q);
    ok = om__graph_add_node(t, "Where", nm, (int[]){ran, outs[q], first[q]}, 3, &state[q], 1, NULL, 0) >= 0;
  }
  for (int q = n_carried; ok && q < n_outs; q++) { /* each where its Concat had the steps, in place of their run */
    const scan_out *sc = lo[q].scan;
    om_gnode *cat = &after[sc->cat - end];
    bool all = cat->n_in == rg->m; /* the steps were all it joined: the Concat goes */
    snprintf(nm, sizeof nm, "%sscan%d", pre, q - n_carried);
    int v = outs[q];
    if (guard) { /* the steps the trip count asks for: Slice(starts 0, ends trips, axes 0) */
      int64_t zero = 0;
      char kn[64];
      snprintf(kn, sizeof kn, "%s/cut0", nm);
      int k0 = int_init(t, kn, &zero, 1, false);
      bool direct = all && sc->axis == 0 && !sc->reversed; /* nothing to put: the Slice writes the Concat's output */
      snprintf(kn, sizeof kn, "%s/cut", nm);
      int y = k0 >= 0 ? (direct ? cat->out[0] : named_value(t, &t->values.v[v], kn)) : -1;
      v = y >= 0 && om__graph_add_node(t, "Slice", kn, (int[]){v, k0, trips1, k0}, 4, &y, 1, NULL, 0) >= 0 ? y : -1;
    }
    if (v >= 0 && v != cat->out[0]) v = put_steps(t, v, sc->axis, sc->reversed, all ? cat->out[0] : -1, nm);
    int n_in = cat->n_in - rg->m + 1, *in = v >= 0 && !all ? om__arena_alloc(&t->arena, sizeof(int) * (size_t)n_in) : NULL;
    if (!(ok = v >= 0 && (all || in))) break;
    dropped[sc->cat - end] |= all;
    if (all) continue;
    memcpy(in, cat->in, sizeof(int) * (size_t)sc->at);
    in[sc->at] = v;
    memcpy(in + sc->at + 1, cat->in + sc->at + rg->m, sizeof(int) * (size_t)(cat->n_in - sc->at - rg->m));
    cat->in = in, cat->n_in = n_in;
  }
  for (int k = 0; ok && k < n_after; k++) {
    om_gnode *slot = dropped[k] ? NULL : OM_VEC_PUSH_SLOT(t->nodes);
    if (!dropped[k] && (ok = slot != NULL)) *slot = after[k];
  }
  if (body) om__graph_free(body), free(body);
  free(after), free(ins), free(outs), free(dropped), free(lo);
  return ok && prune(t) ? true : (om_last_error() == OM_ERR_OK ? om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory") : false);
}

/* The longest repeats of g that fit a Loop (each loop-carried value starts as it goes on, no
 * fewer than 0 trips at min, some output) rolled into one in g, run floor((per * S - c) / div)
 * times (S the size at run time, c what makes that the repeats at size; where div > 1, the one
 * c of trips->at modulo div), its names prefixed pre: 1; 0 when
 * none do (g unchanged); -1 on error (set). */
static int roll_one(om_graph *g, int64_t size, int64_t min, int i, int d, const om_loop_trips *trips, const char *pre, char *why,
                    size_t n_why) {
  int total = 0;
  for (int n = 0; n < g->nodes.n; n++) total += g->nodes.v[n].n_in;
  region best = {.slots = calloc((size_t)total + 1, sizeof(slot)), .at = calloc((size_t)g->nodes.n + 1, sizeof(int)), .size = size};
  region scratch = {.slots = calloc((size_t)total + 1, sizeof(slot)), .at = calloc((size_t)g->nodes.n + 1, sizeof(int))};
  int *first = calloc((size_t)total + 1, sizeof(int)), rolled = 0;
  bool ok = best.slots && best.at && scratch.slots && scratch.at && first;
  if (!ok) om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
  for (int q = 0; ok && q <= total; q++) first[q] = -1;
  snprintf(best.pre, sizeof best.pre, "%s", pre);
  if (ok && find_region(g, &best, &scratch)) {
    int n_slots = slot_count(g, &best), n_carried = carried_of(&best, n_slots, -1, -1);
    int64_t per = trips->per, div = trips->div, c = per * size - div * best.m; /* the trip count (per * S - c) / div */
    if (div > 1) c -= ((c - trips->at) % div + div) % div; /* per * S - c from div * m to div * m + div - 1, c = at (mod div) */
    bool fits = c <= per * min; /* no fewer than 0 trips at the smallest size (and per * S - c >= 0 at every size: Div is the floor) */
    for (int e = 0; e < n_slots; e++) { /* each loop-carried value starts as it goes on: its type and shape */
      const slot *sl = &best.slots[e];
      if (sl->kind != IN_CARRIED) continue;
      int q = carried_of(&best, n_slots, sl->r, sl->o);
      const om_gvalue *a = &g->values.v[sl->first], *b = &g->values.v[g->nodes.v[best.s + sl->r].out[sl->o]];
      fits &= first[q] < 0 || first[q] == sl->first; /* every read of it starts alike */
      first[q] = sl->first;
      fits &= a->dtype == b->dtype && a->ndim == b->ndim && !memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim);
      for (int x = 0; x < a->ndim; x++) fits &= (!a->dim_param[x] && !b->dim_param[x]) || (a->dim_param[x] && b->dim_param[x] && !strcmp(a->dim_param[x], b->dim_param[x]));
    }
    fits &= n_carried + best.n_scans > 0; /* a loop with no output writes nothing the graph needs */
    best.guard = per * min - c < div && best.n_scans > 0; /* no trips at the smallest size, and steps to collect */
    if (fits) rolled = put_loop(g, &best, n_slots, n_carried, first, i, d, trips, c, best.guard) ? 1 : -1;
  }
  if (!rolled && ok && why && !why[0]) { /* none rolled: longer repeats that differ only by the constants they read tell why */
    int covered = best.m * best.p;
    best.loose = scratch.loose = true;
    if (find_region(g, &best, &scratch) && best.loose_r >= 0 && best.m * best.p > covered)
      snprintf(why, n_why, "; its steps read other constants at %s (made from the size before the loop, as a mask of om.zeros "
               "filled in place: held at one size only)", om_op_name(g->nodes.v[best.s + best.p + best.loose_r].op));
  }
  free(best.slots), free(best.at), free(scratch.slots), free(scratch.at), free(first);
  return ok ? rolled : -1;
}

/* Node n of g and, first, the nodes placed right before it (next: each one's next in before's
 * list, in g's order), each as placed, into order (at *k). */
static void place(const om_graph *g, const int *before, const int *next, int n, int *order, int *k) {
  for (int x = before[n]; x >= 0; x = next[x]) place(g, before, next, x, order, k);
  order[(*k)++] = n;
}

/* g's nodes reordered so that each node whose outputs one later node alone reads (as inputs: no
 * body's, no graph output), and that reads only what others read too (or the graph's inputs and
 * constants), comes right before that node: the steps x.unbind(1) cuts before a loop, each next
 * to its step's nodes; what a step alone reads stays where it is. false with OutOfMemory. */
static bool sink_single_reads(om_graph *g) {
  int n_nodes = g->nodes.n, n_vals = g->values.n;
  int *reader = malloc(sizeof(int) * ((size_t)n_vals + 1)), *before = malloc(sizeof(int) * ((size_t)n_nodes + 1));
  int *next = malloc(sizeof(int) * ((size_t)n_nodes + 1)), *order = malloc(sizeof(int) * ((size_t)n_nodes + 1));
  om_gnode *nodes = malloc(sizeof *nodes * ((size_t)n_nodes + 1));
  if (!reader || !before || !next || !order || !nodes) {
    free(reader), free(before), free(next), free(order), free(nodes);
    return om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
  }
  for (int v = 0; v < n_vals; v++) reader[v] = -1; /* -1 none, -2 more than one (or a body, or the graph's output) */
  for (int n = 0; n < n_nodes; n++) {
    const om_gnode *x = &g->nodes.v[n];
    for (int i = 0; i < x->n_in; i++)
      if (x->in[i] >= 0) reader[x->in[i]] = reader[x->in[i]] == -1 || reader[x->in[i]] == n ? n : -2;
    for (int c = 0; c < x->n_cap; c++) reader[x->cap[c]] = -2;
  }
  for (int j = 0; j < g->outputs.n; j++) reader[g->outputs.v[j]] = -2;
  int *last = order; /* (scratch until placed: each node's last node placed before it) */
  for (int n = 0; n < n_nodes; n++) before[n] = next[n] = last[n] = -1;
  for (int n = 0; n < n_nodes; n++) {
    const om_gnode *x = &g->nodes.v[n];
    int to = x->n_out ? reader[x->out[0]] : -1;
    for (int j = 1; j < x->n_out && to >= 0; j++) to = reader[x->out[j]] == to || reader[x->out[j]] == -1 ? to : -2;
    for (int i = 0; i < x->n_in && to >= 0; i++) /* what it reads: the graph's, or shared (a cut of a value others read too) */
      to = x->in[i] < 0 || g->values.v[x->in[i]].producer < 0 || reader[x->in[i]] == -2 ? to : -1;
    if (to < 0) continue; /* read by none or by several, or reading what it alone reads */
    if (last[to] < 0) before[to] = n;
    else next[last[to]] = n;
    last[to] = n;
  }
  bool *sunk = calloc((size_t)n_nodes + 1, sizeof *sunk);
  if (!sunk) {
    free(reader), free(before), free(next), free(order), free(nodes);
    return om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
  }
  for (int n = 0; n < n_nodes; n++)
    for (int x = before[n]; x >= 0; x = next[x]) sunk[x] = true;
  int k = 0;
  for (int n = 0; n < n_nodes; n++)
    if (!sunk[n]) place(g, before, next, n, order, &k);
  memcpy(nodes, g->nodes.v, sizeof *nodes * (size_t)n_nodes);
  for (int q = 0; q < n_nodes; q++) {
    g->nodes.v[q] = nodes[order[q]];
    for (int j = 0; j < g->nodes.v[q].n_out; j++) g->values.v[g->nodes.v[q].out[j]].producer = q;
  }
  free(reader), free(before), free(next), free(order), free(nodes), free(sunk);
  return true;
}

om_traced_model *om__loop_roll(const om_traced_model *m, const char *name, int64_t size, int64_t min, const int (*syms)[OM_MAX_DIMS],
                               int k, int i, int d, int loops, const om_loop_trips *trips, char *why, size_t n_why) {
  om_traced_model *t = calloc(1, sizeof *t);
  bool ok = t && om__graph_copy(&t->g, &m->g);
  if (!ok) om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
  for (int q = 0; ok && q < t->g.inputs.n; q++)
    for (int x = 0; ok && x < t->g.values.v[t->g.inputs.v[q]].ndim; x++)
      if (syms[q][x] == k && !(t->g.values.v[t->g.inputs.v[q]].dim_param[x] = om__arena_strdup(&t->g.arena, name)))
        ok = om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
  int rolled = 0;
  for (int l = 0; ok && l < loops; l++) { /* loops in sequence: each the longest left */
    char pre[16];
    snprintf(pre, sizeof pre, l ? "Loop%d/" : "Loop/", l);
    int r = roll_one(&t->g, size, min, i, d, trips, pre, why, n_why);
    /* none rolled: the steps may be cut before the loop (x.unbind(1), or a list of selects made
     * first), each read once by its repeat; placed next to their readers, they repeat with them */
    if (r == 0 && l == 0) r = sink_single_reads(&t->g) ? roll_one(&t->g, size, min, i, d, trips, pre, why, n_why) : -1;
    if (r <= 0) {
      ok = r == 0;
      break;
    }
    rolled++;
  }
  if (!ok || rolled < loops) om_traced_release(t), t = NULL;
  return t;
}

bool om__loop_agrees(const om_traced_model *m, const om_graph_runner *r, void *h, om_tensor *const *in, int n_in, om_tensor *const *want, int n_want,
                     int64_t size, om_loop_axes *axes) {
  om_tensor **got = calloc((size_t)n_want + 1, sizeof *got);
  if (!got) return om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
  int n = r->run(h, in, n_in, got, n_want);
  bool same = n == n_want && n == m->g.outputs.n;
  for (int j = 0; same && j < n; j++) {
    const om_tensor *a = got[j], *b = want[j];
    same = a->dtype == b->dtype && a->ndim == b->ndim && !memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim) &&
           b->ndim == m->g.values.v[m->g.outputs.v[j]].ndim;
    for (int d = 0; same && d < b->ndim; d++) { /* what the axis does across the sizes */
      om_loop_axes *x = &axes[j];
      if (!x->seen) x->first[d] = b->shape[d], x->is_size[d] = true;
      x->moved[d] |= b->shape[d] != x->first[d];
      x->is_size[d] &= b->shape[d] == size;
    }
    axes[j].seen = true;
    int64_t count = same ? om_tensor_numel(b) : 0;
    double scale = 1;
    for (int64_t e = 0; e < count; e++) {
      double y = om__get_flat(b, e);
      if (y > scale || -y > scale) scale = y > 0 ? y : -y;
    }
    bool exact = b->dtype != OM_FLOAT32 && b->dtype != OM_FLOAT64;
    for (int64_t e = 0; same && e < count; e++) {
      double x = om__get_flat(a, e), y = om__get_flat(b, e), diff = x > y ? x - y : y - x;
      /* the layers sum in other orders (spec 5); the same infinity (a running product past float's range) is the same */
      same = exact ? x == y : x == y || (x != x && y != y) || diff <= 1e-4 * scale;
    }
  }
  if (n > 0) om__release_all(got, n);
  free(got);
  if (n < 0) om_clear_error(); /* the graph fails where the model answers: it does not hold */
  return same;
}

bool om__loop_name_axes(om_traced_model *m, const om_loop_axes *axes, const char *name) {
  om_graph *g = &m->g;
  for (int j = 0; j < g->outputs.n; j++) {
    om_gvalue *v = &g->values.v[g->outputs.v[j]];
    for (int d = 0; d < v->ndim; d++) {
      if (v->dim_param[d] || !axes[j].moved[d]) continue; /* another symbol's, or fixed */
      if (!axes[j].is_size[d]) v->shape[d] = -1; /* moves otherwise: no size or name holds */
      else if (!(v->dim_param[d] = om__arena_strdup(&g->arena, name))) return false;
    }
  }
  return true;
}

/* ---- two rolled graphs alike ---- */

#define OM_LOOP_SIZED 16 /* the most reads of constants that differ between two rolled graphs (the size beside the loop) */

/* A read of a constant of the outer graph that differs between two rolled graphs: input in of node
 * n, constant va of one graph and vb of the other. */
typedef struct sized_read {
  int n, in, va, vb;
  bool fill; /* constants of one value throughout whose shapes differ (om.full([N, 1, 1], 0.5)), else int64 ones alike in shape */
} sized_read;

/* The graphs compared at one depth (a Loop's body inside the graph), and the scope around them;
 * at the outer depth, where reads of int64 constants may differ (sized, n_sized: noted there, at
 * most OM_LOOP_SIZED), or NULL where every constant must be the same. */
typedef struct scope {
  const om_graph *a, *b;
  const struct scope *up;
  sized_read *sized;
  int *n_sized;
} scope;

static bool same_graph(const scope *sc);

/* Whether tensors x and y hold the same dtype, shape and elements (NaN as NaN). */
static bool same_elements(const om_tensor *x, const om_tensor *y) {
  if (!x || !y) return x == y;
  if (x->dtype != y->dtype || x->ndim != y->ndim || memcmp(x->shape, y->shape, sizeof(int64_t) * (size_t)x->ndim)) return false;
  for (int64_t e = 0, n = om_tensor_numel(x); e < n; e++) {
    double p = om__get_flat(x, e), q = om__get_flat(y, e);
    if (p != q && (p == p || q == q)) return false;
  }
  return true;
}

/* The position of value v among g's inputs, -1 when it is none of them. */
static int input_index(const om_graph *g, int v) {
  for (int i = 0; i < g->inputs.n; i++)
    if (g->inputs.v[i] == v) return i;
  return -1;
}

/* Whether value va of sc->a and vb of sc->b are the same: both absent, the same input, an
 * initializer of the same elements, the same output of the same node, or (in a body) the same
 * value of the scope around. The sizes the values had in the traced runs are not compared: they
 * are the pieces' fixed sizes. */
static bool same_value(const scope *sc, int va, int vb) {
  if (va < 0 || vb < 0) return va == vb;
  const om_gvalue *x = &sc->a->values.v[va], *y = &sc->b->values.v[vb];
  if (x->dtype != y->dtype || x->ndim != y->ndim) return false;
  if (x->outer >= 0 || y->outer >= 0) {
    const scope up = sc->up ? *sc->up : (scope){0};
    return x->outer >= 0 && y->outer >= 0 && sc->up && same_value(&up, x->outer, y->outer);
  }
  if (x->init >= 0 || y->init >= 0)
    return x->init >= 0 && y->init >= 0 && same_elements(sc->a->inits.v[x->init].tensor, sc->b->inits.v[y->init].tensor);
  if (x->producer >= 0 || y->producer >= 0)
    return x->producer == y->producer && out_index(&sc->a->nodes.v[x->producer], va) == out_index(&sc->b->nodes.v[y->producer], vb);
  int i = input_index(sc->a, va);
  return i >= 0 && i == input_index(sc->b, vb);
}

/* Whether attributes p (of a node of sc->a) and q (of sc->b) are the same; a body compared as a graph. */
static bool same_attr_in(const scope *sc, const om_gattr *p, const om_gattr *q) {
  if (p->type == OM_GATTR_GRAPH && q->type == OM_GATTR_GRAPH && !strcmp(p->name, q->name))
    return same_graph(&(scope){.a = p->g, .b = q->g, .up = sc});
  if (p->type == OM_GATTR_TENSOR && q->type == OM_GATTR_TENSOR && !strcmp(p->name, q->name)) return p->i == q->i && same_elements(p->t, q->t);
  return om__same_attr(p, q);
}

/* The one value every element of tensor t holds (*v), where it holds one and has some; false otherwise. */
static bool one_value(const om_tensor *t, double *v) {
  int64_t n = t ? om_tensor_numel(t) : 0;
  *v = n ? om__get_flat(t, 0) : 0;
  for (int64_t e = 1; e < n; e++)
    if (om__get_flat(t, e) != *v) return false;
  return n > 0 && *v == *v;
}

/* Whether input i of node n reads constants in sc's two graphs that may differ with the size, at
 * the outer depth where they may: int64 ones of the same shape, or ones of one value throughout
 * (the same in both) whose shapes differ (a tensor made at the size). Noted in sc->sized (false
 * when that is full). */
static bool sized_read_of(const scope *sc, int n, int i) {
  int va = sc->a->nodes.v[n].in[i], vb = sc->b->nodes.v[n].in[i];
  if (!sc->sized || *sc->n_sized >= OM_LOOP_SIZED || va < 0 || vb < 0) return false;
  const om_gvalue *p = &sc->a->values.v[va], *q = &sc->b->values.v[vb];
  if (p->init < 0 || q->init < 0 || p->dtype != q->dtype || p->ndim != q->ndim) return false;
  bool alike = !memcmp(p->shape, q->shape, sizeof(int64_t) * (size_t)p->ndim);
  int64_t x[OM_LOOP_INTS], y[OM_LOOP_INTS];
  double u, w;
  bool fill = !alike && p->ndim > 0 && p->ndim <= OM_LOOP_INTS && one_value(sc->a->inits.v[p->init].tensor, &u) &&
              one_value(sc->b->inits.v[q->init].tensor, &w) && u == w;
  if (!fill && (!alike || int_const(sc->a, va, x) < 0 || int_const(sc->b, vb, y) < 0)) return false;
  sc->sized[(*sc->n_sized)++] = (sized_read){.n = n, .in = i, .va = va, .vb = vb, .fill = fill};
  return true;
}

static bool same_graph(const scope *sc) {
  const om_graph *a = sc->a, *b = sc->b;
  if (a->nodes.n != b->nodes.n || a->inputs.n != b->inputs.n || a->outputs.n != b->outputs.n) return false;
  for (int n = 0; n < a->nodes.n; n++) {
    const om_gnode *x = &a->nodes.v[n], *y = &b->nodes.v[n];
    if (strcmp(x->op_type, y->op_type) || x->n_in != y->n_in || x->n_out != y->n_out || x->n_attrs != y->n_attrs) return false;
    for (int k = 0; k < x->n_attrs; k++)
      if (!same_attr_in(sc, &x->attrs[k], &y->attrs[k])) return false;
    for (int i = 0; i < x->n_in; i++)
      if (!same_value(sc, x->in[i], y->in[i]) && !sized_read_of(sc, n, i)) return false;
  }
  for (int j = 0; j < a->outputs.n; j++)
    if (!same_value(sc, a->outputs.v[j], b->outputs.v[j])) return false;
  return true;
}

bool om__loop_same(const om_traced_model *a, const om_traced_model *b) { return same_graph(&(scope){.a = &a->g, .b = &b->g}); }

/* The value of g computing base + S * step elementwise (S the size: value size, Shape's [1]
 * output), base and step fitted from elements x (n, at size sa) and y (at sb), shaped ndim, shape
 * (a scalar where ndim is 0); each element must move by a whole step a size. Written with Mul and
 * Add only where they change something; names from q. -2 where an element does not fit (nothing
 * written), -1 on error (set). */
static int line_expr(om_graph *g, const int64_t *x, const int64_t *y, int n, int ndim, const int64_t *shape, int64_t sa, int64_t sb,
                     int size, int q) {
  int64_t step[OM_LOOP_INTS], base[OM_LOOP_INTS];
  bool unit = true, zero = true;
  for (int e = 0; e < n; e++) {
    int64_t by, dv = y[e] - x[e]; /* (the graphs' constants are sizes and indices: far from overflowing) */
    if (dv % (sb - sa)) return -2; /* no whole step a size: no line through both */
    step[e] = dv / (sb - sa);
    if (__builtin_mul_overflow(step[e], sa, &by) || __builtin_sub_overflow(x[e], by, &base[e])) return -2;
    unit &= step[e] == 1, zero &= base[e] == 0;
  }
  bool scalar = ndim == 0, shaped = !scalar && (ndim != 1 || shape[0] != 1);
  char nm[48];
  int v = size;
  if (scalar) { /* S as a scalar */
    snprintf(nm, sizeof nm, "LoopSize/%d/scalar", q);
    int s = value_like(g, "", &(om_gvalue){.name = nm, .dtype = OM_INT64});
    if (s < 0 || om__graph_add_node(g, "Squeeze", nm, &v, 1, &s, 1, NULL, 0) < 0) return -1;
    v = s;
  }
  /* times the step where it is not 1; plus the base where it is not 0, or where S ([1]) alone
   * would not have the constant's shape (an Add of zeros broadcasts it) */
  const bool need[2] = {!unit, !zero || (shaped && unit)};
  for (int k = 0; k < 2; k++) {
    if (!need[k]) continue;
    snprintf(nm, sizeof nm, "LoopSize/%d/%s", q, k ? "base" : "step");
    int c = int_init(g, nm, k ? base : step, n, scalar);
    om_ginit *init = c >= 0 ? &g->inits.v[g->values.v[c].init] : NULL;
    om_tensor *r = init && shaped ? om_reshape(init->tensor, shape, ndim) : NULL;
    if (!init || (shaped && !r)) return -1;
    if (r) { /* the constant's own shape ([2, 1] of a Reshape's operand) */
      om_tensor_release(init->tensor);
      init->tensor = r;
      g->values.v[c].ndim = ndim;
      memcpy(g->values.v[c].shape, shape, sizeof(int64_t) * (size_t)ndim);
    }
    snprintf(nm, sizeof nm, "LoopSize/%d/%s", q, k ? "Add" : "Mul");
    int out = value_like(g, "", &(om_gvalue){.name = nm, .dtype = OM_INT64, .ndim = ndim});
    if (out >= 0) memcpy(g->values.v[out].shape, shape, sizeof(int64_t) * (size_t)ndim);
    if (out < 0 || om__graph_add_node(g, k ? "Add" : "Mul", nm, (int[]){v, c}, 2, &out, 1, NULL, 0) < 0) return -1;
    v = out;
  }
  return v;
}

/* The value of g computing the constant that read rd noted, as the size S (value size) makes it:
 * its elements (int64) or, for a fill, its shape, on the line through g's (at sa) and b's (at sb),
 * a fill then its one value expanded to that shape (Expand). -2 where it does not fit (nothing
 * written), -1 on error (set). */
static int size_expr(om_graph *g, const om_graph *b, const sized_read *rd, int64_t sa, int64_t sb, int size, int q) {
  const om_gvalue kept = g->values.v[rd->va]; /* a copy: g's values move as it grows */
  int64_t x[OM_LOOP_INTS], y[OM_LOOP_INTS];
  if (!rd->fill) {
    int n = int_const(g, rd->va, x);
    int_const(b, rd->vb, y);
    return line_expr(g, x, y, n, kept.ndim, kept.shape, sa, sb, size, q);
  }
  int n = kept.ndim;
  memcpy(x, kept.shape, sizeof(int64_t) * (size_t)n);
  memcpy(y, b->values.v[rd->vb].shape, sizeof(int64_t) * (size_t)n);
  int shape = line_expr(g, x, y, n, 1, (int64_t[]){n}, sa, sb, size, q);
  if (shape < 0) return shape;
  char nm[48];
  snprintf(nm, sizeof nm, "LoopSize/%d/value", q);
  om_tensor *one = om_full(NULL, 0, kept.dtype, om__get_flat(g->inits.v[kept.init].tensor, 0));
  int v = one ? om__graph_value(g, kept.dtype, 0, NULL) : -1;
  om_ginit *init = v >= 0 ? OM_VEC_PUSH_SLOT(g->inits) : NULL;
  if (!init || !(g->values.v[v].name = om__arena_strdup(&g->arena, nm))) return om_tensor_release(one), -1;
  *init = (om_ginit){.value = v, .tensor = one, .first_use = (om_op)-1, .generated = true};
  g->values.v[v].init = g->inits.n - 1;
  snprintf(nm, sizeof nm, "LoopSize/%d/Expand", q);
  int out = value_like(g, "", &(om_gvalue){.name = nm, .dtype = kept.dtype, .ndim = n});
  if (out >= 0) memcpy(g->values.v[out].shape, kept.shape, sizeof(int64_t) * (size_t)n);
  if (out < 0 || om__graph_add_node(g, "Expand", nm, (int[]){v, shape}, 2, &out, 1, NULL, 0) < 0) return -1;
  return out;
}

/* Whether node x is a Shape of the same input with the same attributes as node y. */
static bool same_shape(const om_gnode *x, const om_gnode *y) {
  bool same = !strcmp(x->op_type, "Shape") && x->n_in == 1 && x->in[0] == y->in[0] && x->n_attrs == y->n_attrs;
  for (int k = 0; same && k < x->n_attrs; k++) same = om__same_attr(&x->attrs[k], &y->attrs[k]);
  return same;
}

/* Value v's readers in g (node inputs, and the values a body reads from g) read value by instead. */
static void read_instead(om_graph *g, int v, int by) {
  for (int m = 0; m < g->nodes.n; m++) {
    om_gnode *y = &g->nodes.v[m];
    for (int i = 0; i < y->n_in; i++) y->in[i] = y->in[i] == v ? by : y->in[i];
    for (int c = 0; c < y->n_cap; c++) y->cap[c] = y->cap[c] == v ? by : y->cap[c];
    for (int a = 0; a < y->n_attrs; a++)
      for (int c = 0; y->attrs[a].type == OM_GATTR_GRAPH && c < y->attrs[a].g->captured.n; c++) {
        om_gvalue *cv = &y->attrs[a].g->values.v[y->attrs[a].g->captured.v[c]];
        cv->outer = cv->outer == v ? by : cv->outer;
      }
  }
}

/* The Shape nodes of g after its first (writing value size) that read the same input with the
 * same attributes (the Loop's trip count's), none a graph output, dropped, their readers reading
 * size: one Shape of the size. */
static void same_shape_once(om_graph *g, int size) {
  int kept = 1;
  for (int n = 1; n < g->nodes.n; n++) {
    const om_gnode x = g->nodes.v[n];
    bool drop = same_shape(&x, &g->nodes.v[0]);
    for (int j = 0; drop && j < g->outputs.n; j++) drop = g->outputs.v[j] != x.out[0];
    if (drop) read_instead(g, x.out[0], size);
    else g->nodes.v[kept++] = x;
  }
  g->nodes.n = kept;
}

int om__loop_sizes(om_traced_model *a, const om_traced_model *b, int64_t sa, int64_t sb, int i, int d) {
  sized_read rd[OM_LOOP_SIZED];
  int n_rd = 0;
  if (!same_graph(&(scope){.a = &a->g, .b = &b->g, .sized = rd, .n_sized = &n_rd})) return 0;
  if (!n_rd) return 1;
  if (sa == sb) return 0;
  om_graph *g = &a->g;
  int first = g->nodes.n, size = -1, made[OM_LOOP_SIZED];
  om_gattr at[2] = {OM_ATTR_INT("start", d), OM_ATTR_INT("end", d + 1)};
  size = value_like(g, "", &(om_gvalue){.name = "LoopSize/size", .dtype = OM_INT64, .ndim = 1, .shape = {1}});
  if (size < 0 || om__graph_add_node(g, "Shape", "LoopSize/Shape", &g->inputs.v[i], 1, &size, 1, at, 2) < 0) return -1;
  for (int q = 0; q < n_rd; q++) {
    made[q] = -1;
    for (int p = 0; p < q && made[q] < 0; p++) /* the same two constants read again: the same value */
      if (rd[p].va == rd[q].va && rd[p].vb == rd[q].vb) made[q] = made[p];
    if (made[q] < 0 && (made[q] = size_expr(g, &b->g, &rd[q], sa, sb, size, q)) < 0) {
      if (made[q] == -1) return -1;
      g->nodes.n = first; /* (what was written stays unread: prune drops it with the graph's next roll) */
      return 0;
    }
  }
  for (int q = 0; q < n_rd; q++) g->nodes.v[rd[q].n].in[rd[q].in] = made[q];
  /* the new nodes first (they read only a graph input and constants), the rest after */
  int added = g->nodes.n - first;
  om_gnode *moved = malloc(sizeof *moved * (size_t)added);
  if (!moved) return om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), -1;
  memcpy(moved, g->nodes.v + first, sizeof *moved * (size_t)added);
  memmove(g->nodes.v + added, g->nodes.v, sizeof *moved * (size_t)first);
  memcpy(g->nodes.v, moved, sizeof *moved * (size_t)added);
  free(moved);
  same_shape_once(g, size);
  return prune(g) ? 2 : (om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), -1);
}
