/* Tensors of strings (om_strings: ONNX's STRING element type, which the graph layer alone takes;
 * docs/graph-runtime.md, "Strings"): made, shared and read. They sit beside tensors, below the
 * graph IR that holds them as initializers and the reader that makes them, so neither reaches up
 * into the runtime; what the runtime computes on them is src/runtime/strings.c. A tensor of
 * strings is immutable once made, so values share it by reference. Every count and length comes
 * from input: each is checked against OM_STRINGS_MAX before a block is allocated. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

om_strings *om__strings_alloc(int ndim, const int64_t *shape, uint64_t bytes, const char *who) {
  if (ndim < 0 || ndim > OM_MAX_DIMS || (ndim && !shape))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: a tensor of strings of %d dims (at most %d)", who, ndim, OM_MAX_DIMS), NULL;
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: size %lld at dim %d", who, (long long)shape[d], d), NULL;
    if (shape[d] > OM_STRINGS_MAX) n = OM_STRINGS_MAX + 1;
    else if (n <= OM_STRINGS_MAX) n *= shape[d];
  }
  if (n > OM_STRINGS_MAX || bytes > (uint64_t)OM_STRINGS_MAX)
    return om__fail(OM_ERR_OUT_OF_MEMORY, "%s: a tensor of strings holds at most %lld elements and %lld bytes", who, (long long)OM_STRINGS_MAX,
                    (long long)OM_STRINGS_MAX), NULL;
  om_strings *t = om__alloc(sizeof *t, who);
  if (!t) return NULL;
  *t = (om_strings){.refcount = 1, .ndim = ndim, .n = n};
  if (ndim) memcpy(t->shape, shape, sizeof(int64_t) * (size_t)ndim);
  t->len = om__alloc(sizeof(size_t) * (uint64_t)(n + 1), who);
  t->s = t->len ? om__alloc(sizeof(char *) * (uint64_t)(n + 1), who) : NULL;
  t->bytes = t->s ? om__alloc(bytes + (uint64_t)n + 1, who) : NULL; /* each element's bytes and its NUL */
  if (!t->bytes) return om_strings_release(t), NULL;
  if (n) t->s[0] = t->bytes;
  return t;
}

void om__strings_put(om_strings *t, int64_t k, const char *s, size_t len) {
  if (len) memcpy(t->s[k], s, len);
  t->s[k][len] = 0;
  t->len[k] = len;
  if (k + 1 < t->n) t->s[k + 1] = t->s[k] + len + 1;
}

om_strings *om_strings_new(int ndim, const int64_t *shape, const char *const *s, const size_t *len) {
  int64_t n = 1;
  for (int d = 0; d >= 0 && d < ndim && d < OM_MAX_DIMS && shape; d++) n = shape[d] >= 0 && shape[d] <= OM_STRINGS_MAX && n <= OM_STRINGS_MAX ? n * shape[d] : -1;
  uint64_t bytes = 0;
  for (int64_t k = 0; n > 0 && n <= OM_STRINGS_MAX && k < n; k++) {
    if (!s || !s[k]) return om__fail(OM_ERR_INVALID_ARGUMENT, "strings_new: element %lld is NULL", (long long)k), NULL;
    bytes += len ? len[k] : strlen(s[k]);
    if (bytes > (uint64_t)OM_STRINGS_MAX) break; /* om__strings_alloc refuses it */
  }
  om_strings *t = om__strings_alloc(ndim, shape, bytes, "strings_new");
  for (int64_t k = 0; t && k < t->n; k++) om__strings_put(t, k, s[k], len ? len[k] : strlen(s[k]));
  return t;
}

om_strings *om_strings_retain(om_strings *t) {
  if (t) t->refcount++;
  return t;
}

void om_strings_release(om_strings *t) {
  if (!t || --t->refcount) return;
  free(t->len);
  free(t->s);
  free(t->bytes);
  free(t);
}

int om_strings_shape(const om_strings *t, int64_t *shape) {
  if (!t) return om__fail(OM_ERR_INVALID_ARGUMENT, "strings_shape: the tensor is NULL"), -1;
  if (shape && t->ndim) memcpy(shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  return t->ndim;
}

int64_t om_strings_count(const om_strings *t) {
  if (!t) return om__fail(OM_ERR_INVALID_ARGUMENT, "strings_count: the tensor is NULL"), -1;
  return t->n;
}

const char *om_strings_at(const om_strings *t, int64_t k, size_t *len) {
  if (!t) return om__fail(OM_ERR_INVALID_ARGUMENT, "strings_at: the tensor is NULL"), NULL;
  if (k < 0 || k >= t->n) return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "strings_at: element %lld of %lld", (long long)k, (long long)t->n), NULL;
  if (len) *len = t->len[k];
  return t->s[k];
}
