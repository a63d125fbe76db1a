/* Tensors of strings (om_strings: ONNX's STRING element type, which the graph layer alone takes;
 * docs/graph-runtime.md, "Strings") and what the string rules of the ONNX op table
 * (src/runtime/onnx_ops.c) compute on them: numbers written and read as ONNX's Cast does, and
 * case mapping. A tensor of strings is immutable once made, so values share it by reference.
 * Every count and length comes from input: each is checked against OM_STRINGS_MAX before a
 * block is allocated. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/onnx_ops.h"

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

/* ---- numbers as strings (Cast to and from STRING) ---- */

/* x written as ONNX's reference writes a float or a double (numpy's shortest decimal that reads
 * back as the same value), in "%g"'s notation: "%.*g" at the least precision that round-trips
 * ("0.6048455", "1e-05"; onnxruntime writes "%.8g", "0.60484552", which ONNX's test data refuses);
 * NaN as "NaN", infinities as "INF" and "-INF". */
static int format_float(char *buf, size_t room, double x, bool wide) {
  if (x != x) return snprintf(buf, room, "NaN");
  if (x - x != 0) return snprintf(buf, room, x > 0 ? "INF" : "-INF"); /* inf - inf is NaN */
  int n = 0;
  for (int p = 1; p <= (wide ? 17 : 9); p++) {
    n = snprintf(buf, room, "%.*g", p, x);
    if (wide ? strtod(buf, NULL) == x : strtof(buf, NULL) == (float)x) break;
  }
  return n;
}

om_strings *om__strings_format(const om_tensor *x) {
  om_tensor *d = om_contiguous((om_tensor *)x);
  if (!d) return NULL;
  int64_t n = om_tensor_numel(d);
  const char *v = om__data(d);
  char buf[64];
  uint64_t bytes = 0;
  for (int pass = 0; pass < 2; pass++) { /* the bytes counted, then written */
    om_strings *t = pass ? om__strings_alloc(d->ndim, d->shape, bytes, "Cast") : NULL;
    if (pass && !t) break;
    for (int64_t k = 0; k < n; k++) {
      int len;
      if (d->dtype == OM_FLOAT32) len = format_float(buf, sizeof buf, ((const float *)v)[k], false);
      else if (d->dtype == OM_FLOAT64) len = format_float(buf, sizeof buf, ((const double *)v)[k], true);
      else if (d->dtype == OM_BOOL) len = snprintf(buf, sizeof buf, "%d", ((const uint8_t *)v)[k] != 0);
      else len = snprintf(buf, sizeof buf, "%lld", (long long)((const int64_t *)v)[k]);
      if (pass) om__strings_put(t, k, buf, (size_t)len);
      else bytes += (uint64_t)len;
    }
    if (pass) return om_tensor_release(d), t;
  }
  om_tensor_release(d);
  return NULL;
}

/* s read as a number of a float type: ONNX's "NaN", "INF", "+INF", "-INF" (any case) and what
 * strtod reads, the whole string. */
static bool same_word(const char *s, const char *lower) {
  while (*lower && (*s | 0x20) == *lower) s++, lower++;
  return !*s && !*lower;
}
static bool parse_float(const char *s, bool wide, double *v) {
  const char *p = s + (*s == '+' || *s == '-');
  char *end;
  if (same_word(p, "nan")) return *v = NAN, true;
  if (same_word(p, "inf") || same_word(p, "infinity")) return *v = *s == '-' ? -INFINITY : INFINITY, true;
  *v = wide ? strtod(s, &end) : (double)strtof(s, &end);
  return *s && !*end;
}

om_tensor *om__strings_parse(const om_strings *t, om_dtype d, const char *who) {
  om_meta m = {.dtype = d, .ndim = t->ndim};
  memcpy(m.shape, t->shape, sizeof m.shape);
  om_tensor *r = om__tensor_new(&m, false, who);
  char *o = r ? om__data(r) : NULL;
  for (int64_t k = 0; r && k < t->n; k++) {
    const char *s = t->s[k];
    char *end = NULL;
    double f = 0;
    bool ok = strlen(s) == t->len[k]; /* a NUL inside is no number */
    if (d == OM_FLOAT32 || d == OM_FLOAT64) ok = ok && parse_float(s, d == OM_FLOAT64, &f);
    if (d == OM_FLOAT32) ((float *)o)[k] = (float)f;
    else if (d == OM_FLOAT64) ((double *)o)[k] = f;
    else {
      long long i = ok ? strtoll(s, &end, 10) : 0;
      ok = ok && *s && !*end;
      if (d == OM_BOOL) ((uint8_t *)o)[k] = i != 0;
      else ((int64_t *)o)[k] = i;
    }
    if (!ok) {
      om_tensor_release(r);
      return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: element %lld, \"%.40s\", is not a number of %s", who, (long long)k, s, om_dtype_name(d)), NULL;
    }
  }
  return r;
}

/* ---- case mapping (StringNormalizer) ---- */

/* Code point c in the other case (upper when up): ASCII, Latin-1, Greek and Cyrillic's basic
 * letters, as en_US.UTF-8's towupper/towlower map them; any other code point is its own. */
static uint32_t change_case(uint32_t c, bool up) {
  uint32_t base = 0;
  if (up) {
    if ((c >= 'a' && c <= 'z') || (c >= 0xe0 && c <= 0xfe && c != 0xf7) || (c >= 0x3b1 && c <= 0x3c9 && c != 0x3c2) || (c >= 0x430 && c <= 0x44f)) base = 32;
    else if (c == 0xff) return 0x178;
    else if (c >= 0x450 && c <= 0x45f) return c - 80;
    return c - base;
  }
  if ((c >= 'A' && c <= 'Z') || (c >= 0xc0 && c <= 0xde && c != 0xd7) || (c >= 0x391 && c <= 0x3a9 && c != 0x3a2) || (c >= 0x410 && c <= 0x42f)) base = 32;
  else if (c == 0x178) return 0xff;
  else if (c >= 0x400 && c <= 0x40f) return c + 80;
  return c + base;
}

size_t om__str_case(char *out, const char *s, size_t len, bool up) {
  size_t o = 0;
  for (size_t k = 0; k < len;) {
    const unsigned char *p = (const unsigned char *)s + k;
    uint32_t c = p[0];
    size_t n = 1;
    if (c >= 0xc0 && c < 0xe0 && k + 1 < len && (p[1] & 0xc0) == 0x80) c = (c & 0x1f) << 6 | (p[1] & 0x3f), n = 2;
    if (n == 1 && c >= 0x80) { /* another byte (a longer sequence, or not UTF-8): copied as it is */
      out[o++] = s[k++];
      continue;
    }
    uint32_t m = change_case(c, up);
    if (m < 0x80) out[o++] = (char)m;
    else out[o++] = (char)(0xc0 | m >> 6), out[o++] = (char)(0x80 | (m & 0x3f)); /* every mapped code point is below 0x800 */
    k += n;
  }
  return o;
}
