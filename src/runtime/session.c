/* The Session (spec 4, docs/graph-runtime.md): runs a graph (a traced model's, or one the ONNX
 * reader made) with the library's own kernels.
 *
 * Planning, once per input-shape signature: the graph's inputs become planned buffers of the
 * signature's shapes (storages whose data is not there yet), and each node goes through its rule
 * in the ONNX op table (src/runtime/onnx_ops.c), which calls the library's ops. om__apply sees a
 * planned input and records the call as a step (its attributes canonical, its outputs planned
 * buffers, a view's strides computed) instead of running it; a call on constants alone runs at
 * once, so everything computed from shapes and constants (a Shape, Gather, Concat chain, a
 * weight's Transpose) is a constant of the plan, folded for free. Then each buffer's lifetime
 * (from the step that writes it to the last step that reads it or a view of it) places it in one
 * arena, buffers whose lifetimes do not meet sharing bytes; a view lies in its buffer, so it
 * needs no step when the plan runs. Running a plan copies the inputs into their buffers, runs each
 * step's forward kernel on the buffers, and copies the outputs out: nothing else is allocated
 * (kernels' own scratch aside). Plans are kept per signature, the most recent first.
 *
 * Values that decide shapes (a Reshape's shape, a Slice's bounds fed as graph inputs or computed
 * from them): when a rule needs the values of an operand computed when the graph runs, the session
 * takes inputs by value from then on, first its int64 and bool inputs, then (when that is not
 * enough) every input: such an input is a constant of the plan, its elements part of the
 * signature, so a plan is made per shape and per those values, and what is computed from them
 * is folded while planning.
 *
 * Sequences and optionals (om_seq, src/runtime/onnx_ops.h): a value may be a list of the plan's
 * tensors instead of one (vals and seqs, one of the two set per value id), or an optional holding
 * nothing. A graph input that is one is fed as its tensors with their count
 * (om_session_run_values); the count and each element's shape are part of the signature, as a
 * tensor's shape is, and a graph output that is one gives its tensors likewise.
 *
 * Strings (ONNX's STRING element type: om_strings, which no library dtype holds) are values of
 * that kind too (an om_seq holding them). A graph input of strings is always a constant of the
 * plan, its elements part of the signature, so the string rules of the table run while the plan
 * is made and what they compute is folded like any constant; a string rule given an operand
 * computed when the graph runs (a Cast to STRING of a planned buffer) asks for values as a
 * Reshape's shape does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/onnx_ops.h"
#include "runtime/plan.h"

#define OM_PLANS_KEPT 8 /* signatures a session keeps plans for; the least recent goes first */
#define OM_ARENA_ALIGN 64
/* Nodes of subgraphs a plan may bind (each If's branch, each iteration of a Loop or Scan body,
 * unrolled into the plan's steps): a trip count from a tensor or a huge M ends here, not in a
 * hang or an exhausted heap. */
#define OM_SUBGRAPH_NODES_MAX ((int64_t)1 << 20)
/* Tensors a run may feed (graph inputs, and the elements of the sequences among them). */
#define OM_SESSION_INPUTS_MAX 65536

struct om_session {
  om_graph g;
  om_traced_sym *symbols; /* the ranges a traced model holds for (in g's arena); none from ONNX */
  int n_symbols;
  om_session_options options;
  const om_onnx_rule **rules; /* each node's row of the ONNX op table */
  int *readers;               /* each value: how many node inputs and graph outputs read it */
  int *types;                 /* each value: its ONNX element type (src/runtime/elem_types.c), set as plans are made */
  om_plan *plans;
  int n_plans;
  int by_value; /* the inputs plans take by value: 0 none, 1 int64 and bool ones, 2 all */
  /* each value's ONNX element type, rank (-1: not one tensor there) and shape (OM_MAX_DIMS each)
   * as om_session_plan's binding left them; NULL before the first */
  int *value_types, *value_ndims;
  int64_t *value_shapes;
  bool declared; /* the last plan made failed where a node output contradicts what the graph declares for it */
};

/* A run's inputs: the tensors fed, each graph input's count of them (om_session_run_values's
 * counts; NULL: one tensor each) and where its first one is (at, one per graph input and the end). */
typedef struct om_feeds {
  const char *who; /* the C function's name for messages: session_run, session_plan */
  om_tensor *const *tensors;
  const int *counts;
  om_strings *const *strings; /* each graph input's where its count is OM_SESSION_STRINGS */
  int n_tensors;
  const int *at;
} om_feeds;

/* The plan being made on this thread: the context of its capture (om_capture_hook), which
 * make_plan installs on the thread while it binds the nodes. */
typedef struct om_capture {
  om_capture_hook hook; /* what the thread's capture points to while this plan is made */
  om_plan *plan;
  bool fast;
  bool declared; /* a node output contradicted the type or shape the graph declares for it (bind_node) */
  int64_t subgraph_nodes; /* bound so far (OM_SUBGRAPH_NODES_MAX) */
} om_capture;

/* The plan being made on this thread, NULL when none. */
static om_capture *capturing(void) {
  const om_capture_hook *h = om__state()->capture;
  return h ? h->ctx : NULL;
}

/* A new planned buffer for meta and a tensor on it (a new reference). */
static om_tensor *planned_tensor(om_plan *p, const om_meta *meta, int first, const char *who) {
  int64_t n = om__numel(meta->shape, meta->ndim, who); /* at most INT64_MAX / 8 elements: the bytes fit in 64 bits */
  uint64_t nbytes = n >= 0 ? (uint64_t)n * om__dtype_size(meta->dtype) : 0;
  om_storage *s = n >= 0 && om__block_fits(nbytes, who) ? om__alloc(sizeof *s, who) : NULL;
  om_buffer *b = s ? OM_VEC_PUSH_SLOT(p->buffers) : NULL;
  if (!b) return free(s), NULL;
  *s = (om_storage){.refcount = 1, .nbytes = (size_t)nbytes, .planned = true, .buffer = p->buffers.n - 1};
  *b = (om_buffer){.storage = s, .first = first};
  om_tensor *t = om__tensor_on(s, meta, who);
  om__storage_release(s); /* the tensor holds it */
  if (!t) p->buffers.n--;
  return t;
}

/* The capture's call (om_capture_hook, called from om__apply): call c becomes a step of the plan. */
static bool capture_call(void *ctx, const om_op_def *def, om_call *c) {
  om_plan *p = ((om_capture *)ctx)->plan;
  om_step *st = OM_VEC_PUSH_SLOT(p->steps);
  if (!st) return false;
  *st = (om_step){.op = c->op, .node = p->binding, .n_in = c->n_in, .n_out = c->n_out, .attrs = c->attrs};
  memcpy(st->out_meta, c->out_meta, sizeof st->out_meta);
  st->in = om__alloc(sizeof(om_tensor *) * (size_t)(c->n_in ? c->n_in : 1), def->name);
  bool ok = st->in != NULL;
  for (int k = 0; ok && k < c->n_in; k++) {
    st->in[k] = om_tensor_retain(c->in[k]);
    if (c->in[k] && c->in[k]->storage->planned) p->buffers.v[c->in[k]->storage->buffer].readers++;
  }
  if (!ok) return p->steps.n--, false;
  for (int j = 0; ok && j < c->n_out; j++) {
    if (def->view) { /* a header on its input's buffer: forward only computes strides and offset */
      c->out[j] = om__alias(c->in[0]);
      if ((ok = c->out[j] != NULL)) {
        c->out[j]->ndim = c->out_meta[j].ndim;
        memcpy(c->out[j]->shape, c->out_meta[j].shape, sizeof c->out[j]->shape);
      }
    } else {
      ok = (c->out[j] = planned_tensor(p, &c->out_meta[j], p->steps.n - 1, def->name)) != NULL;
    }
  }
  ok = ok && (!def->view || def->forward(c));
  for (int j = 0; j < c->n_out; j++) st->out[j] = ok ? om_tensor_retain(c->out[j]) : NULL;
  if (!ok) {
    om__release_all(c->out, c->n_out);
    memset(c->out, 0, sizeof c->out);
  }
  return ok; /* a failed step stays, holding what it holds, and goes with the plan */
}

/* ---- plans ---- */

static void plan_free(om_plan *p) {
  if (!p) return;
  for (int k = 0; k < p->steps.n; k++) {
    om__release_all(p->steps.v[k].in, p->steps.v[k].n_in);
    free(p->steps.v[k].in);
    om__release_all(p->steps.v[k].out, p->steps.v[k].n_out);
  }
  if (p->inputs) om__release_all(p->inputs, p->n_inputs);
  if (p->outputs) om__release_all(p->outputs, p->n_outputs);
  for (int j = 0; p->out_strings && j < p->n_out_strings; j++) om_strings_release(p->out_strings[j]);
  free(p->out_strings);
  free(p->inputs);
  free(p->outputs);
  free(p->out_counts);
  free(p->steps.v);
  free(p->buffers.v);
  free(p->signature);
  free(p->arena);
  free(p);
}

static uint64_t aligned(const om_buffer *b) {
  return ((uint64_t)b->storage->nbytes + OM_ARENA_ALIGN - 1) / OM_ARENA_ALIGN * OM_ARENA_ALIGN;
}

/* A buffer under a sort key (qsort's comparisons then need no context): ascending, then by index. */
typedef struct keyed {
  uint64_t key;
  int b;
} keyed;
static int by_key(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  return x->key != y->key ? (x->key > y->key) - (x->key < y->key) : x->b - y->b;
}

/* The arena of top bytes (64 bits: wasm32's size_t would wrap 4 GiB to nothing, om__alloc refuses
 * it) and every buffer's data in it at its offset. */
static bool make_arena(om_plan *p, uint64_t top) {
  p->arena_bytes = (size_t)top;
  p->arena = om__alloc(top ? top : OM_ARENA_ALIGN, "session");
  for (int b = 0; p->arena && b < p->buffers.n; b++) p->buffers.v[b].storage->data = (char *)p->arena + p->buffers.v[b].offset;
  return p->arena != NULL;
}

/* Above this many (times the buffers) pairs of a time and a buffer alive then, a graph is too wide
 * for place_buffers (a Concat of 100,000 branches: each branch alive until the Concat meets every
 * other, 5 * 10^9 pairs) and place_in_time places it. */
#define OM_PLACE_BUDGET 64

/* The op table's bound on a variadic op's inputs (Concat, Sum, Max, ...: its rows' MANY), where
 * ONNX sets none: past it a node is not taken (Unsupported), not malformed. */
#define OM_VARIADIC_MAX 4096

/* The first size class at or above c holding a free block, or -1: a segment tree over the m
 * classes (tree[1] the root, leaves at m2 + class), each node the free blocks below it. */
static int first_free(const int *tree, int m2, int c) {
  int v = m2 + c;
  if (tree[v]) return c;
  while (v > 1) { /* up until a right sibling (a larger class) holds one */
    if (!(v & 1) && tree[v + 1]) {
      v++;
      while (v < m2) v = tree[2 * v] ? 2 * v : 2 * v + 1; /* down to its smallest class */
      return v - m2;
    }
    v >>= 1;
  }
  return -1;
}

/* Places wide graphs in O(n log n): in time order, a buffer whose life ends gives its block back,
 * and one whose life begins takes the smallest free block that holds it (blocks keep the size
 * class they were made for: never split, never merged), or a new block at the top. The arena can
 * come out larger than place_buffers's, never quadratic to make. */
static bool place_in_time(om_plan *p, uint64_t *arena) {
  int nb = p->buffers.n, ns = p->steps.n, nt = ns + 2;
  keyed *cls = malloc(sizeof *cls * (size_t)(nb + 1));
  uint64_t *csize = malloc(sizeof *csize * (size_t)(nb + 1)), top = 0;
  /* each buffer's class and block; each block's class and the next free block of its class */
  int *klass = malloc(sizeof(int) * (size_t)(nb + 1)), *block_of = malloc(sizeof(int) * (size_t)(nb + 1));
  int *bclass = malloc(sizeof(int) * (size_t)(nb + 1)), *next = malloc(sizeof(int) * (size_t)(nb + 1));
  uint64_t *boff = malloc(sizeof *boff * (size_t)(nb + 1));
  int *by_first = calloc((size_t)nt + 2, sizeof(int)), *by_last = calloc((size_t)nt + 2, sizeof(int));
  int *starts = malloc(sizeof(int) * (size_t)(nb + 1)), *ends = malloc(sizeof(int) * (size_t)(nb + 1)), *head = NULL, *tree = NULL;
  bool ok = cls && csize && klass && block_of && bclass && next && boff && by_first && by_last && starts && ends;
  int m = 0, m2 = 1, n_blocks = 0;
  for (int b = 0; ok && b < nb; b++) cls[b] = (keyed){aligned(&p->buffers.v[b]), b};
  if (ok) qsort(cls, (size_t)nb, sizeof *cls, by_key); /* by size: the classes */
  for (int q = 0; ok && q < nb; q++) {
    if (!q || cls[q].key != cls[q - 1].key) csize[m++] = cls[q].key;
    klass[cls[q].b] = m - 1;
  }
  while (m2 < m) m2 *= 2;
  ok = ok && (head = malloc(sizeof(int) * (size_t)m2)) && (tree = calloc(2 * (size_t)m2, sizeof(int)));
  for (int c = 0; ok && c < m2; c++) head[c] = -1;
  /* the buffers by the time their life begins and by the time it ends (counting sorts; times -1 to ns) */
  for (int b = 0; ok && b < nb; b++) by_first[p->buffers.v[b].first + 2]++, by_last[p->buffers.v[b].last + 2]++;
  for (int t = 0; ok && t <= nt; t++) by_first[t + 1] += by_first[t], by_last[t + 1] += by_last[t];
  for (int b = 0; ok && b < nb; b++) starts[by_first[p->buffers.v[b].first + 1]++] = b, ends[by_last[p->buffers.v[b].last + 1]++] = b;
  if (!ok) om__fail(OM_ERR_OUT_OF_MEMORY, "session: out of memory planning %d buffers", nb);
  for (int t = -1, q = 0, e = 0; ok && t <= ns; t++) {
    for (; e < nb && p->buffers.v[ends[e]].last < t; e++) { /* lives that ended before t: their blocks are free */
      int k = block_of[ends[e]], c = bclass[k];
      next[k] = head[c], head[c] = k;
      for (int v = m2 + c; v; v >>= 1) tree[v]++;
    }
    for (; q < nb && p->buffers.v[starts[q]].first == t; q++) { /* lives that begin at t */
      int b = starts[q], c = first_free(tree, m2, klass[b]), k;
      if (c >= 0) { /* the smallest free block that holds it */
        k = head[c], head[c] = next[k];
        for (int v = m2 + c; v; v >>= 1) tree[v]--;
      } else { /* a new block at the top */
        c = klass[b], k = n_blocks++;
        if (csize[c] > UINT64_MAX - top) {
          ok = om__fail(OM_ERR_OUT_OF_MEMORY, "session: the plan's buffers need more than 2^64 bytes");
          break;
        }
        bclass[k] = c, boff[k] = top, top += csize[c];
      }
      block_of[b] = k;
      p->buffers.v[b].offset = (size_t)boff[k]; /* below top, which the arena's block check bounds */
    }
  }
  *arena = top;
  free(cls), free(csize), free(klass), free(block_of), free(bclass), free(next), free(boff);
  free(by_first), free(by_last), free(starts), free(ends), free(head), free(tree);
  return ok;
}

/* Each buffer's lifetime, then its place in the arena: largest first, each at the lowest offset
 * where it meets no placed buffer alive at the same time. The placed buffers are listed under
 * each step they are alive at, so a buffer meets only those alive during its own lifetime (not
 * every placed one): planning is O(n) for a chain of n steps, and O(n w log w) for a graph whose
 * widest point holds w buffers at once. Sizes are summed in 64 bits and the arena is one block
 * (OutOfMemory past what the heap can hold). */
static bool place_buffers(om_plan *p) {
  int nb = p->buffers.n, ns = p->steps.n, nt = ns + 2; /* times -1 (the inputs) to ns (the outputs) */
  for (int b = 0; b < nb; b++) p->buffers.v[b].last = p->buffers.v[b].first; /* an output nothing reads lives at its step */
  for (int k = 0; k < ns; k++)
    for (int i = 0; i < p->steps.v[k].n_in; i++) {
      const om_storage *st = p->steps.v[k].in[i]->storage;
      if (st->planned) p->buffers.v[st->buffer].last = k;
    }
  for (int j = 0; j < p->n_outputs; j++)
    if (p->outputs[j]->storage->planned) p->buffers.v[p->outputs[j]->storage->buffer].last = ns;
  /* at[t] .. at[t] + n_at[t]: the placed buffers alive at time t - 1, in alive (room for all of
   * them); from[t] .. from[t] + n_from[t]: those whose life begins then, in starts */
  int64_t *at = calloc((size_t)nt + 1, sizeof *at), total = 0;
  int *n_at = calloc((size_t)nt + 1, sizeof *n_at), *from = calloc((size_t)nt + 2, sizeof *from), *n_from = calloc((size_t)nt + 1, sizeof *n_from);
  int *starts = malloc(sizeof(int) * (size_t)(nb + 1)), *alive = NULL;
  keyed *order = malloc(sizeof *order * (size_t)(nb + 1)), *meets = malloc(sizeof *meets * (size_t)(nb + 1));
  bool ok = at && n_at && from && n_from && starts && order && meets;
  for (int b = 0; ok && b < nb; b++) { /* each time's room: a difference array, summed below */
    at[p->buffers.v[b].first + 1]++;
    at[p->buffers.v[b].last + 2]--;
    from[p->buffers.v[b].first + 2]++;
  }
  for (int t = 0, live = 0; ok && t < nt; t++) {
    live += (int)at[t];
    at[t] = total;
    total += live;
    from[t + 1] += from[t];
  }
  if (!ok) om__fail(OM_ERR_OUT_OF_MEMORY, "session: out of memory planning %d buffers", nb);
  if (ok && total > OM_PLACE_BUDGET * (int64_t)nb + 65536) { /* wide: the placement below would be quadratic */
    free(at), free(n_at), free(from), free(n_from), free(starts), free(order), free(meets);
    uint64_t top;
    return place_in_time(p, &top) && make_arena(p, top);
  }
  ok = ok && (alive = om__alloc(sizeof(int) * (uint64_t)(total + 1), "session"));
  for (int b = 0; ok && b < nb; b++) order[b] = (keyed){UINT64_MAX - aligned(&p->buffers.v[b]), b}; /* largest first */
  if (ok) qsort(order, (size_t)nb, sizeof *order, by_key);
  uint64_t top = 0;
  for (int a = 0; ok && a < nb; a++) {
    om_buffer *b = &p->buffers.v[order[a].b];
    /* the placed buffers its life meets: those alive when it begins, and those that begin later
     * in it, each once (reading every time of its life instead cost a Loop's plan its steps
     * times the buffers alive: 1024 steps stacked at the end, seconds) */
    int n = 0, t0 = b->first + 1;
    for (int q = 0; q < n_at[t0]; q++) {
      int o = alive[at[t0] + q];
      meets[n++] = (keyed){p->buffers.v[o].offset, o};
    }
    for (int t = t0 + 1; t <= b->last + 1; t++)
      for (int q = 0; q < n_from[t]; q++) {
        int o = starts[from[t] + q];
        meets[n++] = (keyed){p->buffers.v[o].offset, o};
      }
    qsort(meets, (size_t)n, sizeof *meets, by_key); /* by offset */
    uint64_t size = aligned(b), off = 0;
    for (int q = 0; q < n; q++) { /* the first gap between the buffers it meets that holds it */
      const om_buffer *o = &p->buffers.v[meets[q].b];
      if (off + size <= o->offset) break;
      if (o->offset + aligned(o) > off) off = o->offset + aligned(o);
    }
    if (size > UINT64_MAX - off) ok = om__fail(OM_ERR_OUT_OF_MEMORY, "session: the plan's buffers need more than 2^64 bytes");
    b->offset = (size_t)off; /* below top, which the arena's block check bounds */
    if (off + size > top) top = off + size;
    for (int t = t0; t <= b->last + 1; t++) alive[at[t] + n_at[t]++] = order[a].b;
    starts[from[t0] + n_from[t0]++] = order[a].b;
  }
  free(at), free(n_at), free(from), free(n_from), free(starts), free(order), free(meets), free(alive);
  return ok && make_arena(p, top);
}

/* Whether plans take input t by value (a constant of the plan, its elements in the signature). */
static bool by_value(const om_session *s, const om_tensor *t) {
  return s->by_value > 1 || (s->by_value == 1 && t->dtype != OM_FLOAT32);
}

/* Says which node failed, in the graph's terms, unless the error names it already: the library
 * op a rule called ("index_select: " leading its message) means nothing to whoever sent the graph. */
static void blame(const om_gnode *n) {
  const char *m = om_last_error_message();
  char quoted[160];
  snprintf(quoted, sizeof quoted, "'%s'", n->name); /* the session's own messages: node 'name' */
  size_t len = strlen(n->name);
  if (strstr(m, quoted) || (!strncmp(m, n->name, len) && !strncmp(m + len, " (", 2))) return;
  size_t k = 0;
  while ((m[k] >= 'a' && m[k] <= 'z') || (k && ((m[k] >= '0' && m[k] <= '9') || m[k] == '_'))) k++;
  if (k && m[k] == ':' && m[k + 1] == ' ') m += k + 2;
  char msg[512];
  snprintf(msg, sizeof msg, "%s (%s): %s", n->name, n->op_type, m);
  om__fail(om_last_error(), "%s", msg);
}

/* Runs node n of g through its rule on the values computed so far (vals: a tensor per value id,
 * seqs: a sequence or an optional holding nothing where the value is one, references; readers:
 * how many read each value; types: each value's element type, set for n's outputs here);
 * *needs_values is set when it failed for want of an operand's values. The values its subgraphs
 * capture follow its inputs in the rule's. */
static bool bind_node(const om_graph *g, const om_gnode *n, const om_onnx_rule *rule, const int *readers, bool fast,
                      int *types, om_tensor **vals, om_seq **seqs, bool *needs_values) {
  int n_ops = n->n_in + n->n_cap;
  om_tensor **in = calloc((size_t)n_ops + 1, sizeof *in), *out[OM_BIND_MAX_OUT] = {0};
  om_seq **seq_in = in ? calloc((size_t)n_ops + 1, sizeof *seq_in) : NULL, *seq_out[OM_BIND_MAX_OUT] = {0};
  if (!seq_in) return free(in), om__fail(OM_ERR_OUT_OF_MEMORY, "session: out of memory binding node '%s'", n->name);
  bool ok = true;
  for (int i = 0; ok && i < n_ops; i++) {
    int v = i < n->n_in ? n->in[i] : n->cap[i - n->n_in];
    if (v < 0) continue;
    in[i] = vals[v], seq_in[i] = seqs[v];
    if (!in[i] && !seq_in[i])
      ok = om__fail(OM_ERR_FORMAT, "session: node '%s' (%s) reads '%s', which no node before it computed", n->name, n->op_type,
                    g->values.v[v].name);
    else if (seq_in[i] && !seq_in[i]->str && i < n->n_in && !om__onnx_takes_sequence(n->op_type, i))
      ok = om__fail(OM_ERR_FORMAT, "session: node '%s' (%s): input %d ('%s') is %s; %s takes a tensor there", n->name, n->op_type, i,
                    g->values.v[v].name, seq_in[i]->none ? "an optional holding nothing" : "a sequence", n->op_type);
  }
  om_bind b = {.node = n, .in = in, .out = out, .seq_in = seq_in, .seq_out = seq_out, .fast = fast, .types = types};
  int strings = -1; /* an input that holds strings: the row's string rule computes the node */
  for (int i = 0; i < n->n_in && strings < 0; i++)
    if (seq_in[i] && seq_in[i]->str) strings = i;
  bool (*bind)(om_bind *) = strings >= 0 ? om__onnx_string_rule(n->op_type) : rule->bind;
  if (ok && !bind)
    ok = om__fail(OM_ERR_UNSUPPORTED, "session: node '%s' (%s): input %d ('%s') holds strings, which %s does not take", n->name, n->op_type,
                  strings, g->values.v[n->in[strings]].name, n->op_type);
  ok = ok && om__elem_check_inputs(n, types, (const om_tensor *const *)in) && bind(&b);
  *needs_values = !ok && b.needs_values;
  for (int j = n->n_out; j < OM_BIND_MAX_OUT; j++) /* a rule's outputs past those the node lists (DynamicQuantizeLinear's three for one): nothing reads them */
    om_tensor_release(out[j]), om__seq_release(seq_out[j]), out[j] = NULL, seq_out[j] = NULL;
  for (int j = 0; ok && j < n->n_out; j++)
    if (!out[j] && !seq_out[j] && readers[n->out[j]])
      ok = om__fail(OM_ERR_UNSUPPORTED, "session: node '%s' (%s): output %d ('%s') is not supported", n->name, n->op_type, j,
                    g->values.v[n->out[j]].name);
  for (int j = 0; ok && j < n->n_out; j++) { /* each output's element type, and its values narrowed to it (a sequence's are already) */
    const om_gvalue *v = &g->values.v[n->out[j]];
    int t = seq_out[j] && seq_out[j]->str ? OM_ONNX_STRING
            : out[j] || seq_out[j] ? om__elem_type_out(n, j, out[j] ? out[j]->dtype : seq_out[j]->dtype, types, (const om_tensor *const *)in) : 0;
    if (out[j] && v->etype && om__elem_holds(out[j]->dtype, v->etype)) t = v->etype; /* a graph output's declared type, where it fits */
    bool contradicts = out[j] && v->etype && t != v->etype;
    if (contradicts) /* where it does not, the file contradicts the graph (onnxruntime refuses it) */
      ok = om__fail(OM_ERR_FORMAT, "session: node '%s' (%s): output %d ('%s') is %s, and the graph declares it %s", n->name, n->op_type, j,
                    v->name, om__elem_name(t), om__elem_name(v->etype));
    bool fits = ok && out[j] && v->decl_shape ? out[j]->ndim == v->decl_ndim : true;
    for (int d = 0; fits && out[j] && v->decl_shape && d < v->decl_ndim; d++) fits = v->decl_shape[d] < 0 || v->decl_shape[d] == out[j]->shape[d];
    contradicts |= !fits;
    if (contradicts && capturing()) capturing()->declared = true;
    if (!fits) {
      char have[96], declared[96];
      ok = om__fail(OM_ERR_FORMAT, "session: node '%s' (%s): output %d ('%s') has shape %s, and the graph declares %s (-1: any size)", n->name,
                    n->op_type, j, v->name, om__shape_str(have, sizeof have, out[j]->shape, out[j]->ndim),
                    om__shape_str(declared, sizeof declared, v->decl_shape, v->decl_ndim));
    }
    types[n->out[j]] = t;
    if (out[j] && !(out[j] = om__elem_narrow(out[j], t, n->op_type))) ok = false;
  }
  for (int j = 0; j < n->n_out; j++) {
    if (ok) vals[n->out[j]] = out[j], seqs[n->out[j]] = seq_out[j];
    else om_tensor_release(out[j]), om__seq_release(seq_out[j]);
  }
  free(in);
  free(seq_in);
  if (!ok) blame(n);
  return ok;
}

/* How many node inputs, node captures and graph outputs read each value of g (calloc'd). */
static int *count_readers(const om_graph *g) {
  int *r = calloc((size_t)g->values.n + 1, sizeof(int));
  if (!r) return om__fail(OM_ERR_OUT_OF_MEMORY, "session: out of memory for %d values", g->values.n), NULL;
  for (int j = 0; j < g->outputs.n; j++) r[g->outputs.v[j]]++;
  for (int k = 0; k < g->nodes.n; k++) {
    const om_gnode *n = &g->nodes.v[k];
    for (int i = 0; i < n->n_in; i++)
      if (n->in[i] >= 0) r[n->in[i]]++;
    for (int c = 0; c < n->n_cap; c++) r[n->cap[c]]++;
  }
  return r;
}

/* The element type a value of g starts with: as declared, else what its tensor or sequence holds. */
static int start_type(const om_gvalue *v, const om_tensor *t, const om_seq *sq) {
  return v->etype ? v->etype : om__elem_own(t ? t->dtype : sq ? sq->dtype : v->dtype);
}

/* Initializer k of g into the values being bound (a tensor, or strings); false with OutOfMemory. */
static bool init_value(const om_graph *g, int k, om_tensor **vals, om_seq **seqs) {
  const om_ginit *in = &g->inits.v[k];
  if (in->str) return (seqs[in->value] = om__seq_strings(om_strings_retain(in->str))) != NULL;
  vals[in->value] = om_tensor_retain(in->tensor);
  return true;
}

/* Releases the values of a graph being bound (n each of vals and seqs) and frees the arrays. */
static void values_free(om_tensor **vals, om_seq **seqs, int n) {
  if (vals) om__release_all(vals, n);
  if (seqs) om__seq_release_all(seqs, n);
  free(vals);
  free(seqs);
}

bool om__bind_subgraph(om_bind *b, const om_graph *g, om_tensor *const *inputs, om_seq *const *seq_inputs, int n, om_tensor **outs,
                       om_seq **seq_outs) {
  om_capture *cap = capturing();
  if (!cap) return om__fail(OM_ERR_INVALID_ARGUMENT, "session: %s (%s): a subgraph is bound only while a plan is made", b->node->name, b->node->op_type);
  if (n != g->inputs.n)
    return om__fail(OM_ERR_FORMAT, "session: %s (%s): its subgraph takes %d inputs, given %d", b->node->name, b->node->op_type, g->inputs.n, n);
  if ((cap->subgraph_nodes += g->nodes.n) > OM_SUBGRAPH_NODES_MAX)
    return om__fail(OM_ERR_OUT_OF_MEMORY, "session: %s (%s): the plan binds more than %lld nodes of subgraphs (branches and iterations "
                    "unrolled); the graph layer plans at most that many", b->node->name, b->node->op_type, (long long)OM_SUBGRAPH_NODES_MAX);
  om_tensor **vals = calloc((size_t)g->values.n + 1, sizeof *vals);
  om_seq **seqs = vals ? calloc((size_t)g->values.n + 1, sizeof *seqs) : NULL;
  int *readers = seqs ? count_readers(g) : NULL, *types = readers ? calloc((size_t)g->values.n + 1, sizeof *types) : NULL;
  bool ok = types != NULL, needs = false;
  if (!ok) om__fail(OM_ERR_OUT_OF_MEMORY, "session: out of memory binding a subgraph of '%s'", b->node->name);
  /* element types: as declared, else what the values hold; a capture's is the enclosing graph's */
  for (int k = 0; ok && k < g->inits.n; k++) {
    int v = g->inits.v[k].value;
    ok = init_value(g, k, vals, seqs);
    types[v] = start_type(&g->values.v[v], vals[v], seqs[v]);
  }
  for (int k = 0; ok && k < n; k++) {
    int v = g->inputs.v[k];
    vals[v] = om_tensor_retain(inputs[k]), seqs[v] = seq_inputs ? om__seq_retain(seq_inputs[k]) : NULL;
    types[v] = start_type(&g->values.v[v], vals[v], seqs[v]);
  }
  for (int c = 0; ok && c < g->captured.n; c++) { /* the enclosing graph's values, given after the node's inputs */
    int v = g->captured.v[c], q = 0;
    while (q < b->node->n_cap && b->node->cap[q] != g->values.v[v].outer) q++;
    if (q < b->node->n_cap) vals[v] = om_tensor_retain(b->in[b->node->n_in + q]), seqs[v] = om__seq_retain(b->seq_in[b->node->n_in + q]);
    types[v] = q < b->node->n_cap && b->types ? b->types[b->node->cap[q]] : start_type(&g->values.v[v], vals[v], seqs[v]);
  }
  for (int k = 0; ok && k < g->nodes.n; k++) {
    const om_gnode *node = &g->nodes.v[k];
    const om_onnx_rule *rule = om__onnx_rule(node->op_type); /* every one found when the session was made */
    ok = bind_node(g, node, rule, readers, cap->fast, types, vals, seqs, &needs);
  }
  b->needs_values |= needs;
  for (int j = 0; j < g->outputs.n; j++) {
    outs[j] = NULL;
    if (seq_outs) seq_outs[j] = NULL;
  }
  for (int j = 0; ok && j < g->outputs.n; j++) {
    int v = g->outputs.v[j];
    if (seqs[v] && !seq_outs)
      ok = om__fail(OM_ERR_UNSUPPORTED, "session: %s (%s): its subgraph's output '%s' is a sequence or an optional, which it takes only as a tensor",
                    b->node->name, b->node->op_type, g->values.v[v].name);
    else if (!(outs[j] = om_tensor_retain(vals[v])) && !(seq_outs[j] = om__seq_retain(seqs[v])))
      ok = om__fail(OM_ERR_FORMAT, "session: %s (%s): its subgraph's output '%s' is computed by no node", b->node->name, b->node->op_type,
                    g->values.v[v].name);
  }
  if (!ok) om__release_all(outs, g->outputs.n);
  if (!ok && seq_outs) om__seq_release_all(seq_outs, g->outputs.n);
  values_free(vals, seqs, g->values.n);
  free(readers);
  free(types);
  return ok;
}

/* Graph input v's value from its fed tensors (count as om_session_run_values's): p->inputs[at ..]
 * become the plan's (planned buffers, or constants when taken by value), and v's value a tensor
 * narrowed to its type, a sequence of them, or an optional holding nothing. */
static bool bind_input(om_session *s, om_plan *p, int v, om_tensor *const *fed, int count, int at, om_tensor **vals, om_seq **seqs) {
  const om_gvalue *gv = &s->g.values.v[v];
  if (count == OM_SESSION_DEFAULT) return true; /* left to its default: the initializer, bound already */
  if (gv->init >= 0) om_tensor_release(vals[v]), vals[v] = NULL; /* a feed overrides the default */
  int n = count < 0 ? 1 : count;
  om_seq *sq = count >= 0 || count == OM_SESSION_NONE ? om__seq_new(n * (count >= 0), gv->dtype, count == OM_SESSION_NONE) : NULL;
  if (count != -1 && !sq) return false;
  s->types[v] = gv->etype ? gv->etype : om__elem_own(gv->dtype);
  for (int e = 0; count != OM_SESSION_NONE && e < n; e++) { /* an input of a narrower type is narrowed first (a C caller's int64 may be out of its range) */
    om_meta m = {.dtype = fed[e]->dtype, .ndim = fed[e]->ndim};
    memcpy(m.shape, fed[e]->shape, sizeof m.shape);
    om_tensor *t = p->inputs[at + e] = by_value(s, fed[e]) ? om_clone(fed[e]) : planned_tensor(p, &m, -1, "session");
    if (!(t = t ? om__elem_narrow(om_tensor_retain(t), s->types[v], NULL) : NULL)) return om__seq_release(sq), false;
    if (sq) sq->t[e] = t;
    else vals[v] = t;
  }
  seqs[v] = sq;
  return true;
}

/* Keeps each value's type and shape as binding left them in vals, for om_session_value_info:
 * what the plan's steps keep is only the buffers and constants they use. */
static bool keep_value_shapes(om_session *s, om_tensor *const *vals) {
  size_t n = (size_t)s->g.values.n + 1;
  if (!s->value_types) {
    s->value_types = calloc(n, sizeof *s->value_types);
    s->value_ndims = calloc(n, sizeof *s->value_ndims);
    s->value_shapes = calloc(n * OM_MAX_DIMS, sizeof *s->value_shapes);
  }
  if (!s->value_types || !s->value_ndims || !s->value_shapes) return om__fail(OM_ERR_OUT_OF_MEMORY, "session_plan: out of memory");
  for (int v = 0; v < s->g.values.n; v++) {
    const om_tensor *t = vals[v];
    s->value_ndims[v] = t ? t->ndim : -1;
    s->value_types[v] = t ? s->types[v] : 0;
    if (t) memcpy(s->value_shapes + (size_t)v * OM_MAX_DIMS, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  }
  return true;
}

/* The plan for inputs' shapes (and the values of those taken by value): every node bound on
 * planned inputs, then the buffers placed. *needs_values as bind_node's. shapes_only
 * (om_session_plan): every value's shape kept in s instead, and no passes or buffers: a plan no
 * run will use, which the caller frees. */
static om_plan *make_plan(om_session *s, const om_feeds *f, const int64_t *sig, int n_sig, bool *needs_values, bool shapes_only) {
  om_thread_state *st = om__state();
  if (st->capture) return om__fail(OM_ERR_INVALID_ARGUMENT, "session: a plan is already being made on this thread"), NULL;
  om_graph *g = &s->g;
  om_plan *p = om__alloc(sizeof *p, "session");
  if (!p) return NULL;
  memset(p, 0, sizeof *p);
  om_tensor **vals = calloc((size_t)g->values.n + 1, sizeof *vals);
  om_seq **seqs = calloc((size_t)g->values.n + 1, sizeof *seqs);
  p->inputs = calloc((size_t)f->n_tensors + 1, sizeof *p->inputs);
  p->n_inputs = f->n_tensors;
  p->out_counts = calloc((size_t)g->outputs.n + 1, sizeof *p->out_counts);
  p->signature = om__alloc(sizeof(int64_t) * (size_t)(n_sig + 1), "session");
  bool ok = vals && seqs && p->inputs && p->out_counts && p->signature;
  if (!ok) om__fail(OM_ERR_OUT_OF_MEMORY, "session: out of memory making a plan");
  if (ok) memcpy(p->signature, sig, sizeof(int64_t) * (size_t)n_sig), p->n_sig = n_sig;
  om_capture cap = {.hook = {.call = capture_call}, .plan = p, .fast = s->options.mode == OM_SESSION_FAST};
  cap.hook.ctx = &cap;
  bool grad = om_is_grad_enabled();
  om_set_grad_enabled(false);
  st->capture = &cap.hook;
  for (int k = 0; ok && k < g->inits.n; k++) {
    const om_gvalue *v = &g->values.v[g->inits.v[k].value];
    ok = init_value(g, k, vals, seqs);
    s->types[g->inits.v[k].value] = v->etype ? v->etype : om__elem_own(v->dtype);
  }
  for (int k = 0; ok && k < g->inputs.n; k++) {
    int c = f->counts ? f->counts[k] : -1, v = g->inputs.v[k];
    if (c == OM_SESSION_STRINGS) ok = (seqs[v] = om__seq_strings(om_strings_retain(f->strings[k]))) != NULL, s->types[v] = OM_ONNX_STRING;
    else ok = bind_input(s, p, v, f->tensors + f->at[k], c, f->at[k], vals, seqs);
  }
  for (int k = 0; ok && k < g->nodes.n; k++)
    p->binding = k, ok = bind_node(g, &g->nodes.v[k], s->rules[k], s->readers, cap.fast, s->types, vals, seqs, needs_values);
  int n_out = 0; /* each output's tensors, one after the other */
  for (int j = 0; ok && j < g->outputs.n; j++) {
    int v = g->outputs.v[j];
    if (!vals[v] && !seqs[v]) {
      ok = om__fail(OM_ERR_FORMAT, "session: graph output '%s' is computed by no node", g->values.v[v].name);
      break;
    }
    p->out_counts[j] = vals[v] ? -1 : seqs[v]->str ? OM_SESSION_STRINGS : seqs[v]->none ? OM_SESSION_NONE : seqs[v]->n;
    n_out += vals[v] ? 1 : seqs[v]->n;
  }
  ok = ok && (p->outputs = calloc((size_t)n_out + 1, sizeof *p->outputs)) && (p->out_strings = calloc((size_t)g->outputs.n + 1, sizeof *p->out_strings));
  if (ok) p->n_out_strings = g->outputs.n;
  for (int j = 0; ok && j < g->outputs.n; j++)
    if (seqs[g->outputs.v[j]] && seqs[g->outputs.v[j]]->str) p->out_strings[j] = om_strings_retain(seqs[g->outputs.v[j]]->str);
  for (int j = 0; ok && j < g->outputs.n; j++) {
    const om_seq *sq = seqs[g->outputs.v[j]];
    for (int e = 0; e < (sq ? sq->n : 1); e++) {
      om_tensor *t = p->outputs[p->n_outputs++] = om_tensor_retain(sq ? sq->t[e] : vals[g->outputs.v[j]]);
      if (t->storage->planned) p->buffers.v[t->storage->buffer].readers++;
    }
  }
  s->declared = cap.declared;
  if (shapes_only) ok = ok && keep_value_shapes(s, vals);
  else if (ok && s->options.mode == OM_SESSION_FAST) ok = om__plan_passes(p);
  st->capture = NULL;
  om_set_grad_enabled(grad);
  values_free(vals, seqs, g->values.n);
  ok = ok && (shapes_only || place_buffers(p));
  if (!ok) plan_free(p), p = NULL;
  return p;
}

/* ---- the session ---- */

/* Both modes run exact kernels today (fixed summation orders, no fused multiply-add, the
 * library's own exp, log, tanh, erf and pow: src/core/math.c), so a graph gives the same bits
 * natively and in WASM on any machine in either mode. Fast mode also lets rules fuse nodes
 * (BatchNormalization into Conv, attention: the passes of src/runtime/passes.c); faster arithmetic
 * (relaxed SIMD) will go there too, and exact mode will then refuse at create a node that only
 * has such a kernel. */
static bool check_options(const om_session_options *o) {
  if (o && o->mode != OM_SESSION_FAST && o->mode != OM_SESSION_EXACT)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "session: mode %d (0 fast, 1 exact)", (int)o->mode);
  return true;
}

/* A session on graph g (taken over: freed with the session, or here on failure) and the symbols'
 * ranges (n in syms: copied into g's arena). */
static bool check_nodes(const om_graph *g, const om_onnx_rule **rules);
static bool plan_at_create(om_session *s);

static om_session *session_on(om_graph *g, const om_traced_sym *syms, int n_syms, const om_session_options *options) {
  om_session *s = om__alloc(sizeof *s, "session_create");
  if (!s) return om__graph_free(g), NULL;
  memset(s, 0, sizeof *s);
  s->g = *g;
  s->symbols = om__arena_alloc(&s->g.arena, sizeof *s->symbols * (size_t)(n_syms + 1));
  s->n_symbols = s->symbols ? n_syms : 0;
  for (int k = 0; k < s->n_symbols; k++) {
    s->symbols[k] = syms[k];
    bool ok = true;
    const char **strs[3] = {&s->symbols[k].name, &s->symbols[k].min_why, &s->symbols[k].max_why};
    for (int q = 0; q < 3; q++)
      if (*strs[q]) ok &= (*strs[q] = om__arena_strdup(&s->g.arena, *strs[q])) != NULL;
    int64_t *b = syms[k].n_branches ? om__arena_alloc(&s->g.arena, sizeof *b * 2 * (size_t)syms[k].n_branches) : NULL;
    if (b) memcpy(b, syms[k].branches, sizeof *b * 2 * (size_t)syms[k].n_branches);
    s->symbols[k].branches = b; /* the model's arena may go before the session */
    ok &= b || !syms[k].n_branches;
    if (!ok) s->symbols = NULL;
  }
  if (options) s->options = *options;
  s->rules = om__alloc(sizeof *s->rules * (size_t)(g->nodes.n + 1), "session_create");
  s->readers = calloc((size_t)g->values.n + 1, sizeof(int));
  s->types = calloc((size_t)g->values.n + 1, sizeof(int));
  bool ok = s->rules && s->readers && s->types && s->symbols;
  if (!ok) om__fail(OM_ERR_OUT_OF_MEMORY, "session_create: out of memory for %d nodes", g->nodes.n);
  int n_out = 0; /* an output the graph lists twice is one output: results are named by it */
  for (int j = 0; ok && j < g->outputs.n; j++)
    if (!s->readers[g->outputs.v[j]]++) s->g.outputs.v[n_out++] = g->outputs.v[j];
  s->g.outputs.n = n_out;
  for (int k = 0; ok && k < g->nodes.n; k++) {
    for (int i = 0; i < g->nodes.v[k].n_in; i++)
      if (g->nodes.v[k].in[i] >= 0) s->readers[g->nodes.v[k].in[i]]++;
    for (int c = 0; c < g->nodes.v[k].n_cap; c++) s->readers[g->nodes.v[k].cap[c]]++;
  }
  ok = ok && check_nodes(&s->g, s->rules) && plan_at_create(s);
  if (!ok) om_session_release(s), s = NULL;
  return s;
}

/* The letter of an attribute's type in a row's attrs (src/runtime/onnx_ops.h), and its name for messages. */
static const char attr_letters[] = {[OM_GATTR_INT] = 'i', [OM_GATTR_FLOAT] = 'f', [OM_GATTR_INTS] = 'I', [OM_GATTR_FLOATS] = 'F',
                                    [OM_GATTR_STRING] = 's', [OM_GATTR_TENSOR] = 't', [OM_GATTR_OTHER] = 'o', [OM_GATTR_GRAPH] = 'g',
                                    [OM_GATTR_STRINGS] = 'S'};
static const char *attr_type_name(char letter) {
  switch (letter) {
    case 'i': return "an int";
    case 'f': return "a float";
    case 'I': return "ints";
    case 'F': return "floats";
    case 's': return "a string";
    case 't': case 'u': return "a tensor";
    case 'g': return "a graph";
    case 'S': return "strings";
    default: return "a sparse tensor or a type";
  }
}

/* One entry of a row's attrs (src/runtime/onnx_ops.h): the attribute's name, whether it is
 * required, its type letter, and for a string the values ONNX defines ('|' between them; NULL:
 * any string). */
typedef struct attr_spec {
  const char *name, *values;
  int name_len, values_len;
  char letter;
  bool required;
} attr_spec;

/* The entry at p (a well-formed row's) into e; returns where the next one starts (the NUL at the end). */
static const char *next_attr(const char *p, attr_spec *e) {
  const char *end = p + strcspn(p, ":!");
  *e = (attr_spec){.name = p, .name_len = (int)(end - p), .required = *end == '!', .letter = end[1]};
  p = end + 2;
  if (*p == '=') e->values = p + 1, e->values_len = (int)strcspn(p + 1, " "), p += 1 + e->values_len;
  while (*p == ' ') p++;
  return p;
}

/* The entry of attribute name in a row's attrs; false when the row does not list it. */
static bool attr_entry(const char *attrs, const char *name, attr_spec *e) {
  size_t len = strlen(name);
  for (const char *p = attrs; *p;) {
    p = next_attr(p, e);
    if ((size_t)e->name_len == len && !memcmp(e->name, name, len)) return true;
  }
  return false;
}

/* Whether s is one of an entry's values ('|'-separated). */
static bool value_listed(const attr_spec *e, const char *s) {
  size_t len = strlen(s);
  for (const char *v = e->values, *stop = e->values + e->values_len; v < stop;) {
    size_t n = strcspn(v, "| ");
    if (n == len && !memcmp(v, s, len)) return true;
    v += n + (v[n] == '|');
  }
  return false;
}

/* Node n's attributes against its row's list, as ONNX's checker and onnxruntime check them when a
 * model is loaded: a name the op does not define (Relu's alpha, a misspelt kernel_shpe) would be
 * ignored and a wrong type read as the default, each a silent wrong answer, so both are refused
 * here, as are a required attribute left out and a string outside the values ONNX defines for it
 * (MaxPool's auto_pad 'NOTWET', which onnxruntime refuses when it loads the model, and which a
 * rule would refuse only when a plan reads it). */
static bool check_attrs(const om_gnode *n, const om_onnx_rule *rule) {
  attr_spec e;
  for (int a = 0; a < n->n_attrs; a++) {
    const om_gattr *at = &n->attrs[a];
    if (!*at->name) continue; /* OM_SCAN8_MARK: the version pass's, which no file can hold */
    if (!attr_entry(rule->attrs, at->name, &e)) {
      char names[512] = "none"; /* the names the row lists, for the message */
      size_t w = 0;
      for (const char *p = rule->attrs; *p && w + 2 < sizeof names;) {
        p = next_attr(p, &e);
        w += (size_t)snprintf(names + w, sizeof names - w, "%s%.*s", w ? ", " : "", e.name_len, e.name);
      }
      return om__fail(OM_ERR_FORMAT, "session: node '%s' (%s) has attribute %s, which %s does not take (it takes %s)", n->name, n->op_type,
                      at->name, n->op_type, names);
    }
    char have = attr_letters[at->type];
    if (have != e.letter && !(e.letter == 'u' && (have == 't' || have == 'S')))
      return om__fail(OM_ERR_FORMAT, "session: node '%s' (%s): attribute %s must be %s, it is %s", n->name, n->op_type, at->name,
                      attr_type_name(e.letter), attr_type_name(have));
    if (e.values && !value_listed(&e, at->s))
      return om__fail(OM_ERR_FORMAT, "session: node '%s' (%s): attribute %s is '%s', which ONNX does not define (%.*s)", n->name, n->op_type,
                      at->name, at->s, e.values_len, e.values);
  }
  for (const char *p = rule->attrs; *p;) { /* the required ones */
    p = next_attr(p, &e);
    bool given = !e.required;
    for (int a = 0; !given && a < n->n_attrs; a++) given = strlen(n->attrs[a].name) == (size_t)e.name_len && !memcmp(n->attrs[a].name, e.name, (size_t)e.name_len);
    if (!given)
      return om__fail(OM_ERR_FORMAT, "session: node '%s' (%s) has no attribute %.*s, which %s requires", n->name, n->op_type, e.name_len, e.name,
                      n->op_type);
  }
  return true;
}

/* Every node of g (and of its subgraphs) has a row whose counts of inputs and outputs it keeps,
 * its required inputs and attributes given once, and its subgraphs the shape its op needs:
 * checked when the session is made, not at the first run. rules (NULL for a subgraph) gets
 * each node's row. */
static bool check_nodes(const om_graph *g, const om_onnx_rule **rules) {
  bool ok = true;
  for (int k = 0; ok && k < g->nodes.n; k++) {
    const om_gnode *n = &g->nodes.v[k];
    const om_onnx_rule *rule = om__onnx_rule(n->op_type);
    if (rules) rules[k] = rule;
    if (!rule)
      ok = om__fail(OM_ERR_UNSUPPORTED, "session: node '%s' is %s, which the graph layer has no kernel for (docs/graph-runtime.md lists the ops it runs)",
                    n->name, n->op_type);
    else if (n->n_in > rule->max_in && rule->max_in >= OM_VARIADIC_MAX) /* ONNX sets a variadic op no bound */
      ok = om__fail(OM_ERR_UNSUPPORTED, "session: node '%s' (%s) has %d inputs; the graph layer takes at most %d", n->name, n->op_type, n->n_in,
                    rule->max_in);
    else if (n->n_in < rule->min_in || n->n_in > rule->max_in)
      ok = om__fail(OM_ERR_FORMAT, "session: node '%s' (%s) has %d inputs; %s takes %d to %d", n->name, n->op_type, n->n_in,
                    n->op_type, rule->min_in, rule->max_in);
    else if (n->n_out < 1 || n->n_out > rule->max_out)
      ok = om__fail(OM_ERR_FORMAT, "session: node '%s' (%s) has %d outputs; %s gives 1 to %d", n->name, n->op_type, n->n_out,
                    n->op_type, rule->max_out);
    for (int i = 0; ok && i < rule->min_in; i++) /* rules read the inputs a node must have without checking */
      if (n->in[i] < 0) ok = om__fail(OM_ERR_FORMAT, "session: node '%s' (%s): input %d is required, and the node leaves it out", n->name, n->op_type, i);
    for (int a = 0; ok && a < n->n_attrs; a++) /* as ONNX's checker: a rule would read the first and ignore the rest */
      for (int b = 0; ok && b < a; b++)
        if (!strcmp(n->attrs[a].name, n->attrs[b].name))
          ok = om__fail(OM_ERR_FORMAT, "session: node '%s' (%s) has attribute %s twice", n->name, n->op_type, n->attrs[a].name);
    ok = ok && check_attrs(n, rule) && om__onnx_check_subgraphs(n);
    for (int a = 0; ok && a < n->n_attrs; a++)
      if (n->attrs[a].type == OM_GATTR_GRAPH) ok = check_nodes(n->attrs[a].g, NULL);
  }
  return ok;
}

om_session *om_session_create(const om_traced_model *m, const om_session_options *options) {
  if (!m) return om__fail(OM_ERR_INVALID_ARGUMENT, "session_create: the model is NULL"), NULL;
  if (!check_options(options)) return NULL;
  om_graph g;
  return om__graph_copy(&g, &m->g) ? session_on(&g, m->symbols, m->n_symbols, options) : NULL;
}

om_session *om_session_open(const void *bytes, size_t n, const om_session_options *options) {
  if (!check_options(options)) return NULL;
  if (!bytes && n) return om__fail(OM_ERR_INVALID_ARGUMENT, "session_open: no bytes given"), NULL;
  om_graph g;
  om_traced_sym *syms = NULL;
  int n_syms = 0;
  if (om__format_is(bytes, n)) return om__format_read(bytes, n, &g, &syms, &n_syms) ? session_on(&g, syms, n_syms, options) : NULL;
  int opset = 0;
  if (!om__onnx_read(bytes, n, &g, &opset)) return NULL;
  if (!om__upgrade_nodes(&g, opset)) return om__graph_free(&g), NULL;
  return session_on(&g, NULL, 0, options);
}

void om_session_release(om_session *s) {
  if (!s) return;
  for (om_plan *p = s->plans, *next; p; p = next) {
    next = p->next;
    plan_free(p);
  }
  free(s->rules);
  free(s->readers);
  free(s->types);
  free(s->value_types);
  free(s->value_ndims);
  free(s->value_shapes);
  om__graph_free(&s->g);
  free(s);
}

/* Checks tensor t fed for graph input v (its k-th) against the graph's: dtype, then its shape
 * (bind_shape); appends its shape to the signature. */
static bool bind_shape(const om_session *s, const om_feeds *f, int k, int ndim, const int64_t *shape, int64_t *sig, int *n_sig);
static bool bind_tensor(const om_session *s, const om_feeds *f, int k, const om_tensor *t, int64_t *sig, int *n_sig) {
  const om_graph *g = &s->g;
  const om_gvalue *v = &g->values.v[g->inputs.v[k]];
  if (t->dtype != v->dtype)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: input '%s' is %s, the graph takes %s", f->who, v->name, om_dtype_name(t->dtype),
                    om_dtype_name(v->dtype));
  if (v->kind != OM_GKIND_TENSOR && v->kind != OM_GKIND_OPTIONAL) { /* a sequence's element: any shape */
    for (int d = 0, n = sig[(*n_sig)++] = t->ndim; d < n; d++) sig[(*n_sig)++] = t->shape[d];
    return true;
  }
  return bind_shape(s, f, k, t->ndim, t->shape, sig, n_sig);
}

/* Whether size is in one of sy's branches (the pieces of a graph that is an If on its size),
 * which may leave sizes out between them (a size 1 and n). */
static bool in_branches(const om_traced_sym *sy, int64_t size) {
  for (int q = 0; q < sy->n_branches; q++)
    if (size >= sy->branches[2 * q] && size <= sy->branches[2 * q + 1]) return true;
  return !sy->n_branches;
}

/* The sizes sy's branches admit, "at 1 or 7", "at 1, 5 to 9 or 12", into buf (returned). */
static const char *admitted_sizes(const om_traced_sym *sy, char *buf, size_t cap) {
  size_t n = 0;
  for (int q = 0; q < sy->n_branches && n < cap; q++) {
    long long lo = (long long)sy->branches[2 * q], hi = (long long)sy->branches[2 * q + 1];
    const char *sep = !q ? "at " : q == sy->n_branches - 1 ? " or " : ", ";
    if (lo == hi) n += (size_t)snprintf(buf + n, cap - n, "%s%lld", sep, lo);
    else if (hi == INT64_MAX) n += (size_t)snprintf(buf + n, cap - n, "%sfrom %lld", sep, lo);
    else n += (size_t)snprintf(buf + n, cap - n, "%s%lld to %lld", sep, lo, hi);
  }
  return buf;
}

/* Checks the shape fed for graph input k (a tensor's, or strings') against the graph's: rank, fixed
 * sizes, each named axis bound to one size across the tensor inputs; appends it to the signature. */
static bool bind_shape(const om_session *s, const om_feeds *f, int k, int ndim, const int64_t *shape, int64_t *sig, int *n_sig) {
  const om_graph *g = &s->g;
  const om_gvalue *v = &g->values.v[g->inputs.v[k]];
  char a[OM_SHAPE_STR_LEN];
  if (ndim != v->ndim)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: input '%s' has shape %s; the graph takes %d dims", f->who, v->name,
                    om__shape_str(a, sizeof a, shape, ndim), v->ndim);
  for (int d = 0; d < v->ndim; d++) {
    int64_t size = shape[d];
    sig[(*n_sig)++] = size;
    if (!v->dim_param[d]) {
      if (size != v->shape[d])
        return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: input '%s' has size %lld at dim %d, the graph takes %lld (shape %s)", f->who,
                        v->name, (long long)size, d, (long long)v->shape[d], om__shape_str(a, sizeof a, shape, ndim));
      continue;
    }
    if (!strcmp(v->dim_param[d], "?")) continue; /* unnamed: any size */
    for (int q = 0; q < s->n_symbols; q++) { /* a traced model's range */
      const om_traced_sym *sy = &s->symbols[q];
      if (strcmp(sy->name, v->dim_param[d]) || (size >= sy->min && size <= sy->max && size % sy->multiple == 0 && in_branches(sy, size)))
        continue;
      char range[200], why[200] = "";
      if (sy->max == INT64_MAX) snprintf(range, sizeof range, "from %lld", (long long)sy->min);
      else snprintf(range, sizeof range, "from %lld to %lld", (long long)sy->min, (long long)sy->max);
      if (sy->multiple > 1) snprintf(range + strlen(range), sizeof range - strlen(range), " in multiples of %lld", (long long)sy->multiple);
      if (!in_branches(sy, size)) admitted_sizes(sy, range, sizeof range);
      const char *because = size > sy->max && sy->max_why ? sy->max_why : size < sy->min && sy->min_why ? sy->min_why
                            : !in_branches(sy, size) ? (sy->max_why ? sy->max_why : sy->min_why) : NULL;
      if (because) snprintf(why, sizeof why, " (narrowed by %s)", because);
      return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: axis '%s' is %lld at dim %d of input '%s'; the traced graph holds for %s %s%s", f->who,
                      sy->name, (long long)size, d, v->name, sy->name, range, why);
    }
    for (int k2 = 0; k2 <= k; k2++) { /* the first axis of the same name fixes its size */
      const om_gvalue *w = &g->values.v[g->inputs.v[k2]];
      const om_tensor *t2 = f->tensors[f->at[k2]];
      if (f->counts && f->counts[k2] != -1) continue;
      for (int d2 = 0; d2 < (k2 == k ? d : w->ndim); d2++)
        if (w->dim_param[d2] && !strcmp(w->dim_param[d2], v->dim_param[d]) && t2->shape[d2] != size)
          return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: axis '%s' is %lld at dim %d of input '%s' but %lld at dim %d of input '%s'", f->who,
                          v->dim_param[d], (long long)t2->shape[d2], d2, w->name, (long long)size, d, v->name);
    }
  }
  return true;
}

/* The signature words of strings t: each element's length, then its bytes, 8 to a word. */
static int64_t string_words(const om_strings *t) {
  int64_t w = t->n;
  for (int64_t k = 0; k < t->n; k++) w += ((int64_t)t->len[k] + 7) / 8;
  return w;
}
static void append_strings(const om_strings *t, int64_t *sig, int *n) {
  for (int64_t k = 0; k < t->n; k++) {
    sig[(*n)++] = (int64_t)t->len[k];
    for (size_t at = 0; at < t->len[k]; at += 8) {
      int64_t w = 0;
      memcpy(&w, t->s[k] + at, t->len[k] - at < 8 ? t->len[k] - at : 8);
      sig[(*n)++] = w;
    }
  }
}

/* Checks the feeds against the graph's inputs: each a tensor, a sequence, an optional holding
 * nothing or strings as the input's kind and type take (a tensor by bind_tensor); writes the
 * signature (each input's count, then its tensors' shapes, then a strings input's shape and
 * elements). */
static bool bind_inputs(const om_session *s, const om_feeds *f, int64_t *sig, int *n_sig) {
  const om_graph *g = &s->g;
  static const char *const kinds[] = {"a tensor", "a sequence", "an optional tensor", "an optional sequence"};
  *n_sig = 0;
  for (int k = 0; k < g->inputs.n; k++) {
    const om_gvalue *v = &g->values.v[g->inputs.v[k]];
    int c = f->counts ? f->counts[k] : -1;
    if ((c == OM_SESSION_STRINGS) != (v->etype == OM_ONNX_STRING))
      return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: input '%s' is %s, given %s", f->who, v->name,
                      v->etype == OM_ONNX_STRING ? "a tensor of strings" : kinds[v->kind], c == OM_SESSION_STRINGS ? "strings" : "no strings");
    if (c == OM_SESSION_STRINGS) {
      sig[(*n_sig)++] = c;
      if (!bind_shape(s, f, k, f->strings[k]->ndim, f->strings[k]->shape, sig, n_sig)) return false;
      append_strings(f->strings[k], sig, n_sig);
      continue;
    }
    if (c == OM_SESSION_DEFAULT) { /* its initializer, a constant of the plan (feeds_call checked it has one) */
      sig[(*n_sig)++] = c;
      continue;
    }
    bool seq = v->kind == OM_GKIND_SEQUENCE || v->kind == OM_GKIND_OPTIONAL_SEQUENCE, opt = v->kind >= OM_GKIND_OPTIONAL;
    if ((c == -1 && seq) || (c >= 0 && !seq) || (c == OM_SESSION_NONE && !opt) || c < OM_SESSION_NONE)
      return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: input '%s' is %s, given %s", f->who, v->name, kinds[v->kind],
                      c == -1 ? "a tensor" : c >= 0 ? "a sequence" : c == OM_SESSION_NONE ? "nothing" : "an unknown count");
    sig[(*n_sig)++] = c;
    for (int e = 0; e < (c < 0 ? c == -1 : c); e++)
      if (!bind_tensor(s, f, k, f->tensors[f->at[k] + e], sig, n_sig)) return false;
  }
  return true;
}

/* The plan for the signature: a kept one (moved to the front) or a new one. */
static om_plan *plan_for(om_session *s, const om_feeds *f, const int64_t *sig, int n_sig, bool *needs_values) {
  for (om_plan **pp = &s->plans; *pp; pp = &(*pp)->next) {
    om_plan *p = *pp;
    if (p->n_sig != n_sig || (n_sig && memcmp(p->signature, sig, sizeof(int64_t) * (size_t)n_sig))) continue;
    *pp = p->next;
    p->next = s->plans;
    s->plans = p;
    return p;
  }
  om_plan *p = make_plan(s, f, sig, n_sig, needs_values, false);
  if (!p) return NULL;
  p->next = s->plans;
  s->plans = p;
  if (++s->n_plans > OM_PLANS_KEPT) {
    om_plan **pp = &s->plans;
    while ((*pp)->next) pp = &(*pp)->next;
    plan_free(*pp);
    *pp = NULL;
    s->n_plans--;
  }
  return p;
}

/* The elements of t, each as the low bytes of a 64-bit word, at sig + *n (a signature's values). */
static bool append_values(const om_tensor *t, int64_t *sig, int *n) {
  om_tensor *d = om_contiguous((om_tensor *)t);
  if (!d) return false;
  size_t es = om__dtype_size(d->dtype);
  const char *v = om__data(d);
  for (int64_t q = 0, numel = om_tensor_numel(d); q < numel; q++) {
    int64_t w = 0;
    memcpy(&w, v + (size_t)q * es, es);
    sig[(*n)++] = w;
  }
  om_tensor_release(d);
  return true;
}

/* The plan for the feeds: their signature (counts and shapes, then the values of the tensors taken
 * by value) bound, then a plan found or made; a plan that needed values not known at its level
 * takes more inputs by value and is tried again. shapes_only: make_plan's, the plan not kept (the
 * caller frees it). */
static om_plan *plan_inputs(om_session *s, const om_feeds *f, bool shapes_only) {
  for (;;) {
    int64_t stack[64 * OM_MAX_DIMS], *sig = stack, words = (int64_t)s->g.inputs.n + (int64_t)f->n_tensors * (OM_MAX_DIMS + 1);
    for (int k = 0; s->by_value && k < f->n_tensors; k++)
      if (by_value(s, f->tensors[k])) words += om_tensor_numel(f->tensors[k]);
    for (int k = 0; f->counts && k < s->g.inputs.n && words <= INT32_MAX; k++)
      if (f->counts[k] == OM_SESSION_STRINGS) words += OM_MAX_DIMS + string_words(f->strings[k]);
    if (words > INT32_MAX) return om__fail(OM_ERR_OUT_OF_MEMORY, "%s: the inputs taken by value hold too many elements", f->who), NULL;
    if (words > 64 * OM_MAX_DIMS && !(sig = om__alloc(sizeof(int64_t) * (size_t)words, f->who))) return NULL;
    int n_sig = 0;
    bool ok = bind_inputs(s, f, sig, &n_sig), needs = false;
    for (int k = 0; ok && k < f->n_tensors; k++)
      if (by_value(s, f->tensors[k])) ok = append_values(f->tensors[k], sig, &n_sig);
    om_plan *p = !ok ? NULL : shapes_only ? make_plan(s, f, sig, n_sig, &needs, true) : plan_for(s, f, sig, n_sig, &needs);
    if (sig != stack) free(sig);
    if (p || !needs || s->by_value == 2) return p;
    bool other = false; /* level 1 takes the int64 and bool inputs: none, then every input at once */
    for (int k = 0; k < f->n_tensors; k++) other |= f->tensors[k]->dtype != OM_FLOAT32;
    s->by_value = s->by_value == 0 && other ? 1 : 2;
  }
}

/* A graph whose inputs' declared shapes decide every size (every input a tensor of fixed sizes,
 * or left to its default) is checked when the session is made, as ONNX's checker (with shape
 * inference) and onnxruntime check it when they load a model: every run has that one signature,
 * and its plan, made here on inputs of those shapes (their values unknown, as planning needs
 * none), is the first run's, kept. A plan that fails because the graph contradicts itself at
 * those shapes (a graph output declared of another type or shape than its node gives, a Squeeze
 * of an axis of size 2, a Conv whose kernel_shape is not its weight's, a Gather of constant
 * indices out of range, a MatMul of unequal inner sizes: the library's shape, index and argument
 * errors, and the rules' Format) refuses the session with Format, naming the node and the
 * mismatch; the first run would only meet the same error. One that fails otherwise is dropped,
 * its error cleared, and the first run meets it as before: a rule needing an input's values
 * (a Reshape's shape fed as an input: not known here), an op or element type the runtime does
 * not take (Unsupported, DtypeMismatch: the file may be valid), a size past the heap
 * (OutOfMemory). A graph with a symbolic input size has its shapes inferred with symbolic dims
 * instead (src/runtime/shapes.c): a node whose inputs contradict each other at every size, or a
 * declaration contradicted at every size, is refused now, and each new signature's plan keeps the
 * checks for the rest. */
static bool plan_at_create(om_session *s) {
  const om_graph *g = &s->g;
  bool fixed = true;
  for (int k = 0; fixed && k < g->inputs.n; k++) {
    const om_gvalue *v = &g->values.v[g->inputs.v[k]];
    fixed = v->kind == OM_GKIND_TENSOR && v->etype != OM_ONNX_STRING;
    for (int d = 0; fixed && d < v->ndim; d++) fixed = !v->dim_param[d];
  }
  if (om__state()->trace) return true; /* a trace recording on this thread: the first run refuses that */
  if (!om__check_shapes(g, !fixed)) return false; /* fixed: the subgraphs' types only (the plan below checks the shapes) */
  if (!fixed) return true;
  s->declared = false;
  om_tensor **fed = calloc((size_t)g->inputs.n + 1, sizeof *fed);
  int *at = calloc((size_t)g->inputs.n + 1, sizeof *at), *counts = calloc((size_t)g->inputs.n + 1, sizeof *counts), n_fed = 0;
  int64_t *sig = calloc((size_t)g->inputs.n * (OM_MAX_DIMS + 2) + 1, sizeof *sig);
  bool ok = fed && at && counts && sig, needs = false;
  for (int k = 0; ok && k < g->inputs.n; k++) { /* a value of the input's dtype broadcast to its shape: no data of that size */
    const om_gvalue *v = &g->values.v[g->inputs.v[k]];
    counts[k] = v->init >= 0 ? OM_SESSION_DEFAULT : -1; /* one with a default: left to it */
    if (v->init < 0) {
      om_tensor *one = om_scalar(0, v->dtype);
      ok = one && (fed[n_fed++] = om_expand(one, v->shape, v->ndim)) != NULL;
      om_tensor_release(one);
    }
    at[k + 1] = n_fed;
  }
  om_feeds f = {.who = "session_create", .tensors = fed, .counts = counts, .n_tensors = n_fed, .at = at};
  int n_sig = 0;
  bool bound = ok && bind_inputs(s, &f, sig, &n_sig);
  om_plan *p = bound ? make_plan(s, &f, sig, n_sig, &needs, false) : NULL;
  om_error_kind kind = p ? OM_ERR_OK : om_last_error();
  bool invalid = !p && bound && !needs &&
                 (kind == OM_ERR_SHAPE_MISMATCH || kind == OM_ERR_INDEX_OUT_OF_RANGE || kind == OM_ERR_INVALID_ARGUMENT || kind == OM_ERR_FORMAT);
  bool refuse = !p && (s->declared || invalid);
  if (p) p->next = s->plans, s->plans = p, s->n_plans++;
  else if (!refuse) om_clear_error();
  else if (!s->declared) { /* the node's error, as the file's fault: Format, its own kind kept in the words */
    char msg[512];
    snprintf(msg, sizeof msg, "%s", om_last_error_message());
    om__fail(OM_ERR_FORMAT, "session_create: the graph is invalid at the input shapes it declares (%s): %s", om_error_kind_name(kind), msg);
  }
  if (fed) om__release_all(fed, n_fed);
  free(fed), free(at), free(counts), free(sig);
  return !refuse;
}

/* Names the graph output whose copy out failed (p->outputs[n]: a sequence gives several tensors,
 * strings and nothing none), in place of the library op that made the copy: an output the plan
 * holds as a view (Expand's broadcast, Reshape) costs nothing until it is copied out, so a run can
 * get that far before it meets a size the heap cannot hold. */
static void copy_failed(const om_session *s, const om_plan *p, const char *who, int n) {
  int j = 0;
  for (int at = 0; j < s->g.outputs.n; j++) {
    int c = p->out_counts[j];
    if ((at += c == -1 ? 1 : c > 0 ? c : 0) > n) break;
  }
  const char *m = om_last_error_message();
  if (!strncmp(m, "clone: ", 7)) m += 7;
  char msg[512];
  snprintf(msg, sizeof msg, "%s: output '%s': %s", who, s->g.values.v[s->g.outputs.v[j < s->g.outputs.n ? j : 0]].name, m);
  om__fail(om_last_error(), "%s", msg);
}

/* Runs the plan for the feeds f (om_session_run_values, its arguments checked). */
static int run_feeds(om_session *s, const om_feeds *f, om_tensor **outputs, int max_outputs, int *out_counts, om_strings **out_strings) {
  om_plan *p = plan_inputs(s, f, false);
  if (!p) return -1;
  for (int j = 0; j < s->g.outputs.n; j++)
    if ((!out_counts && p->out_counts[j] != -1) || (!out_strings && p->out_counts[j] == OM_SESSION_STRINGS))
      return om__fail(OM_ERR_INVALID_ARGUMENT, "session_run: output '%s' is %s; om_session_run_values gives it%s", s->g.values.v[s->g.outputs.v[j]].name,
                      p->out_counts[j] == OM_SESSION_STRINGS ? "a tensor of strings" : "a sequence or an optional",
                      p->out_counts[j] == OM_SESSION_STRINGS ? " with room for strings" : ""), -1;
  if (p->n_outputs > max_outputs) return p->n_outputs; /* nothing runs: the caller makes room */
  for (int k = 0; k < f->n_tensors; k++) /* an input taken by value is in the plan already */
    if (p->inputs[k]->storage->planned) om__copy_into(p->inputs[k], f->tensors[k]);
  for (int k = 0; k < p->steps.n; k++) {
    const om_step *st = &p->steps.v[k];
    const om_op_def *def = om__ops[st->op];
    if (def->view) continue; /* its header was computed with the plan */
    om_call c = {.op = st->op, .n_in = st->n_in, .n_out = st->n_out, .in = st->in, .attrs = st->attrs};
    memcpy(c.out_meta, st->out_meta, sizeof c.out_meta);
    memcpy(c.out, st->out, sizeof c.out);
    if (!def->forward(&c)) return blame(&s->g.nodes.v[st->node]), -1;
  }
  bool grad = om_is_grad_enabled();
  om_set_grad_enabled(false);
  int n = 0;
  for (; n < p->n_outputs; n++)
    if (!(outputs[n] = om_clone(p->outputs[n]))) break;
  om_set_grad_enabled(grad);
  if (n < p->n_outputs) return copy_failed(s, p, f->who, n), om__release_all(outputs, n), -1;
  if (out_counts) memcpy(out_counts, p->out_counts, sizeof(int) * (size_t)s->g.outputs.n);
  for (int j = 0; out_strings && j < s->g.outputs.n; j++) out_strings[j] = om_strings_retain(p->out_strings[j]); /* immutable: shared */
  return n;
}

/* The feeds of om_session_run_values's arguments (who: the C function's name for messages): checked,
 * then planned and, unless plan_only, run. */
static int feeds_call(const char *who, bool plan_only, om_session *s, om_tensor *const *inputs, const int *counts, om_strings *const *strings,
                      int n_inputs, om_tensor **outputs, int max_outputs, int *out_counts, om_strings **out_strings) {
  if (!s) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: the session is NULL", who), -1;
  if ((!outputs && max_outputs) || max_outputs < 0) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: no room for the outputs given", who), -1;
  if (om__state()->trace) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: a trace is recording on this thread", who), -1;
  if (n_inputs != s->g.inputs.n)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: %d inputs given, the graph takes %d", who, n_inputs, s->g.inputs.n), -1;
  int *at = om__alloc(sizeof(int) * ((size_t)n_inputs + 1), who);
  if (!at) return -1;
  at[0] = 0;
  for (int k = 0; k < n_inputs; k++) { /* where each input's tensors begin: a sequence's count of them, nothing's none */
    int c = counts ? counts[k] : -1;
    if (c == OM_SESSION_STRINGS && (!strings || !strings[k]))
      return free(at), om__fail(OM_ERR_INVALID_ARGUMENT, "%s: input %d is given as strings, but no strings are given", who, k), -1;
    if (c == OM_SESSION_DEFAULT && s->g.values.v[s->g.inputs.v[k]].init < 0)
      return free(at), om__fail(OM_ERR_INVALID_ARGUMENT, "%s: input %d ('%s') is left to its default, and it has none", who, k,
                                s->g.values.v[s->g.inputs.v[k]].name), -1;
    int64_t next = (int64_t)at[k] + (c == -1 ? 1 : c > 0 ? c : 0);
    if (next > OM_SESSION_INPUTS_MAX)
      return free(at), om__fail(OM_ERR_INVALID_ARGUMENT, "%s: the inputs hold more than %d tensors", who, OM_SESSION_INPUTS_MAX), -1;
    at[k + 1] = (int)next;
  }
  om_feeds f = {.who = who, .tensors = inputs, .counts = counts, .strings = strings, .n_tensors = at[n_inputs], .at = at};
  int n = -1;
  if (!om__check_inputs(who, inputs, f.n_tensors)) n = -1;
  else if (!plan_only) n = run_feeds(s, &f, outputs, max_outputs, out_counts, out_strings);
  else {
    om_plan *p = plan_inputs(s, &f, true);
    n = p ? 0 : -1;
    plan_free(p);
    for (int v = 0; n < 0 && s->value_ndims && v < s->g.values.n; v++) s->value_ndims[v] = -1; /* no shapes of an earlier call's */
  }
  free(at);
  return n;
}

int om_session_run_values(om_session *s, om_tensor *const *inputs, const int *counts, om_strings *const *strings, int n_inputs,
                          om_tensor **outputs, int max_outputs, int *out_counts, om_strings **out_strings) {
  return feeds_call("session_run", false, s, inputs, counts, strings, n_inputs, outputs, max_outputs, out_counts, out_strings);
}

bool om_session_plan(om_session *s, om_tensor *const *inputs, const int *counts, om_strings *const *strings, int n_inputs) {
  return feeds_call("session_plan", true, s, inputs, counts, strings, n_inputs, NULL, 0, NULL, NULL) == 0;
}

int om_session_run(om_session *s, om_tensor *const *inputs, int n_inputs, om_tensor **outputs, int max_outputs) {
  if (s && (!outputs || max_outputs < s->g.outputs.n))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "session_run: room for %d outputs, the graph has %d", max_outputs, s->g.outputs.n), -1;
  return om_session_run_values(s, inputs, NULL, NULL, n_inputs, outputs, max_outputs, NULL, NULL);
}

int om_session_count(const om_session *s, bool outputs) {
  if (!s) return om__fail(OM_ERR_INVALID_ARGUMENT, "session_count: the session is NULL"), -1;
  return outputs ? s->g.outputs.n : s->g.inputs.n;
}

const char *om_session_name(const om_session *s, bool outputs, int i) {
  int n = om_session_count(s, outputs);
  if (n < 0) return NULL;
  if (i < 0 || i >= n) return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "session_name: %s %d of %d", outputs ? "output" : "input", i, n), NULL;
  return s->g.values.v[(outputs ? s->g.outputs.v : s->g.inputs.v)[i]].name;
}

bool om_session_input_info(const om_session *s, int i, om_dtype *dtype, int *ndim, int64_t *shape, const char **dim_params) {
  int n = om_session_count(s, false);
  if (n < 0) return false;
  if (i < 0 || i >= n) return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "session_input_info: input %d of %d", i, n);
  const om_gvalue *v = &s->g.values.v[s->g.inputs.v[i]];
  if (dtype) *dtype = v->dtype;
  if (ndim) *ndim = v->ndim;
  for (int d = 0; d < v->ndim; d++) {
    if (shape) shape[d] = v->dim_param[d] ? -1 : v->shape[d];
    if (dim_params) dim_params[d] = v->dim_param[d];
  }
  return true;
}

int om_session_input_default(const om_session *s, int i) {
  int n = om_session_count(s, false);
  if (n < 0) return -1;
  if (i < 0 || i >= n) return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "session_input_default: input %d of %d", i, n), -1;
  return s->g.values.v[s->g.inputs.v[i]].init >= 0;
}

int om_session_elem_type(const om_session *s, bool outputs, int i) {
  int n = om_session_count(s, outputs);
  if (n < 0) return -1;
  if (i < 0 || i >= n) return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "session_elem_type: %s %d of %d", outputs ? "output" : "input", i, n), -1;
  int v = (outputs ? s->g.outputs.v : s->g.inputs.v)[i];
  const om_gvalue *gv = &s->g.values.v[v];
  if (s->types[v]) return s->types[v];
  return gv->producer >= 0 ? gv->etype : gv->etype ? gv->etype : om__elem_own(gv->dtype); /* a node output before the first run: as declared */
}

const om_plan *om__session_plan(const om_session *s) { return s ? s->plans : NULL; }

int om_session_value_count(const om_session *s) {
  if (!s) return om__fail(OM_ERR_INVALID_ARGUMENT, "session_value_count: the session is NULL"), -1;
  return s->g.values.n;
}

bool om_session_value_info(const om_session *s, int i, const char **name, int *elem_type, int *ndim, int64_t *shape) {
  int n = om_session_value_count(s);
  if (n < 0) return false;
  if (i < 0 || i >= n) return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "session_value_info: value %d of %d", i, n);
  int rank = s->value_ndims ? s->value_ndims[i] : -1;
  if (name) *name = s->g.values.v[i].name;
  if (elem_type) *elem_type = s->value_types ? s->value_types[i] : 0;
  if (ndim) *ndim = rank;
  if (shape && rank > 0) memcpy(shape, s->value_shapes + (size_t)i * OM_MAX_DIMS, sizeof(int64_t) * (size_t)rank);
  return true;
}

int64_t om_session_plan_bytes(const om_session *s) {
  if (!s) return om__fail(OM_ERR_INVALID_ARGUMENT, "session_plan_bytes: the session is NULL"), -1;
  return s->plans ? (int64_t)s->plans->arena_bytes : 0;
}

int om_session_plan_kernels(const om_session *s, const char **names, int max) {
  if (!s || (!names && max > 0)) return om__fail(OM_ERR_INVALID_ARGUMENT, "session_plan_kernels: the session is NULL, or no room given"), -1;
  int n = 0;
  for (int k = 0; s->plans && k < s->plans->steps.n; k++) {
    om_op op = s->plans->steps.v[k].op;
    if (om__ops[op]->view) continue; /* no kernel: its header was computed with the plan */
    if (n < max) names[n] = om_op_name(op);
    n++;
  }
  return n;
}
