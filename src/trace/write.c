/* In-place writes while a trace records (docs/tracing.md, "Writes into tensors"): PyTorch's
 * functionalization. A view made while a trace records is linked to what it views (the view op
 * and its attrs). A write into a view is recorded as functional ops that make its base anew: the
 * written value goes up the chain of views (slice_scatter into a slice's parent, select_scatter
 * into a select's, the inverse reshape or permute), and the base takes the result's traced
 * identity (its graph value, and its origin in the runs at other sizes, so the runs see every
 * later read of the base read the write). A view whose parent's identity changed since it was
 * made is made again from the parent (the view op, recorded) when next read (om__trace_sync),
 * so every view of the base sees the written values. The write is also made eagerly, so the
 * record run's values stay the model's. Every run at other sizes makes the same calls, since
 * a write is always recorded this way while a trace records, whatever it writes into. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

struct om_view_link {
  om_tensor *parent; /* what the view was made from (owned reference) */
  om_op op;
  om_attrs given, canon; /* as passed, and as infer canonicalised them */
  /* the parent's identity when the view's own was last made from it */
  uint32_t id, run;
  int32_t value, origin;
};

static void note_parent(om_view_link *k) {
  k->id = k->parent->trace_id;
  k->run = k->parent->trace_run;
  k->value = k->parent->trace_value;
  k->origin = k->parent->trace_origin;
}

static bool parent_changed(const om_view_link *k) {
  const om_tensor *p = k->parent;
  return k->id != p->trace_id || k->run != p->trace_run || k->value != p->trace_value || k->origin != p->trace_origin;
}

/* t stands for the value of `from` from now on: in the graph and in the runs. */
static void take_identity(om_tensor *t, const om_tensor *from) {
  t->trace_id = from->trace_id;
  t->trace_value = from->trace_value;
  t->trace_run = from->trace_run;
  t->trace_origin = from->trace_origin;
}

bool om__trace_link_view(const om_call *c, const om_attrs *given) {
  for (int j = 0; j < c->n_out; j++) {
    om_view_link *k = om__alloc(sizeof *k, om_op_name(c->op));
    if (!k) return false;
    *k = (om_view_link){.parent = om_tensor_retain(c->in[0]), .op = c->op, .given = *given, .canon = c->attrs};
    note_parent(k);
    c->out[j]->view = k;
  }
  return true;
}

void om__view_link_free(om_view_link *link) {
  om_tensor_release(link->parent);
  free(link);
}

bool om__trace_sync(om_tensor *t) {
  om_view_link *k = t->view;
  if (!k || !om__state()->trace) return true;
  if (!om__trace_sync(k->parent)) return false;
  if (!parent_changed(k)) return true;
  om_tensor *again = om__apply1(k->op, &k->parent, 1, &k->given);
  if (!again) return false;
  take_identity(t, again);
  note_parent(k);
  om_tensor_release(again);
  return true;
}

bool om__trace_sync_all(om_tensor *const *ts, int n) {
  for (int k = 0; k < n; k++)
    if (ts[k] && !om__trace_sync(ts[k])) return false;
  return true;
}

/* The new value of view link k's parent, now that the view's value is to be v: v put back
 * where the view op took it from. NULL on error (InPlaceMutation for a view that overlaps
 * itself). */
static om_tensor *put_back(const om_view_link *k, om_tensor *v, const char *who) {
  const int64_t *g = k->given.i, *c = k->canon.i;
  om_tensor *p = k->parent;
  switch (k->op) {
    case OM_OP_slice: return om_slice_scatter(p, v, (int)g[0], g[1], g[2], g[3]);
    case OM_OP_select: return om_select_scatter(p, v, (int)g[0], g[1]);
    case OM_OP_diagonal: return om__diagonal_scatter(p, v, c[0], (int)c[1], (int)c[2]);
    case OM_OP_unsqueeze: return om_squeeze(v, c, 1);
    case OM_OP_reshape:
    case OM_OP_squeeze: return om_reshape(v, p->shape, p->ndim);
    case OM_OP_permute: {
      int64_t inverse[OM_MAX_DIMS];
      for (int d = 0; d < k->canon.n_i; d++) inverse[c[d]] = d;
      return om_permute(v, inverse, k->canon.n_i);
    }
    case OM_OP_as_strided: { /* storage positions; as_strided_scatter counts p's elements from its offset */
      int nd = (k->canon.n_i - 1) / 2;
      if (!om_tensor_is_contiguous(p))
        return om__trace_fail(OM_ERR_TRACE_IN_PLACE_MUTATION, "%s: writes into an as_strided view of a tensor whose "
                              "elements are not contiguous; write into a contiguous copy instead", who), NULL;
      return om_as_strided_scatter(p, v, c, c + nd, nd, c[2 * nd] - p->offset);
    }
    default: /* expand: its elements overlap, as PyTorch refuses */
      return om__trace_fail(OM_ERR_TRACE_IN_PLACE_MUTATION, "%s: writes into a view made by %s, whose elements "
                            "overlap; write into the tensor it expands instead", who, om_op_name(k->op)), NULL;
  }
}

/* src as dst's values: converted to its dtype, broadcast to its shape (a new reference). The
 * broadcast is a where on a true constant with dst: no size in it, so it holds at every size
 * (an expand would take dst's sizes as numbers, clamped at sizes where the view is empty). */
static om_tensor *as_written(om_tensor *dst, om_tensor *src) {
  om_tensor *v = src->dtype == dst->dtype ? om_tensor_retain(src) : om_cast(src, dst->dtype);
  bool same = v && v->ndim == dst->ndim && !memcmp(v->shape, dst->shape, sizeof(int64_t) * (size_t)dst->ndim);
  if (!v || same) return v;
  om_tensor *yes = om_full(NULL, 0, OM_BOOL, 1);
  om_tensor *w = yes ? om_where(yes, v, dst) : NULL;
  om_tensor_release(yes);
  om_tensor_release(v);
  return w;
}

/* A write the graph cannot hold, refused as InPlaceMutation by the op that records it (op:
 * slice_scatter's lowering, a stepped write into a slice empty at some sizes), is refused at the
 * user's call: the message names it (who: fill_), not the op the user did not call. */
static void at_the_call(const char *who, const char *op) {
  om_thread_state *st = om__state();
  size_t n = strlen(op);
  if (st->err_kind != OM_ERR_TRACE_IN_PLACE_MUTATION || strncmp(st->err_msg, op, n) || st->err_msg[n] != ':') return;
  char msg[sizeof st->err_msg];
  snprintf(msg, sizeof msg, "%s%s", who, st->err_msg + n);
  snprintf(st->err_msg, sizeof st->err_msg, "%s", msg);
  if (st->trace_end_kind == st->err_kind) snprintf(st->trace_end_msg, sizeof st->trace_end_msg, "%s", msg);
}

bool om__trace_write(om_tensor *dst, const om_tensor *src_in, const char *who) {
  om_trace *tr = om__state()->trace;
  om_tensor *src = (om_tensor *)src_in;
  if (!om__trace_sync(dst) || !om__trace_sync(src) || (!om__traced(src) && !om__trace_check_read(src, who))) return false;
  om_tensor *base = dst;
  while (base->view) base = base->view->parent;
  if (!om__trace_check_write(base, who)) return false;
  if (base->requires_grad && om_is_grad_enabled())
    return om__fail(OM_ERR_AUTOGRAD, "%s: in-place change of a tensor that requires grad; do it inside a no-grad scope", who);
  /* the value up the chain of views, each parent's new value from its view's */
  om_tensor *v = as_written(dst, src);
  for (const om_tensor *t = dst; v && t->view; t = t->view->parent) {
    om_tensor *up = put_back(t->view, v, who);
    om_tensor_release(v);
    v = up;
  }
  if (!v) return at_the_call(who, "slice_scatter"), false;
  /* the eager write (after the ops above read the old values); a phantom has no data */
  bool phantom = tr->phantom && (dst->storage == tr->phantom || src->storage == tr->phantom);
  bool ok = phantom || om__write_values(dst, src, who);
  if (ok) take_identity(base, v);
  om_tensor_release(v);
  return ok;
}
