/* What the string rules of the ONNX op table (src/runtime/onnx_ops.c) compute on tensors of
 * strings (src/tensor/strings.c; docs/graph-runtime.md, "Strings"): numbers written and read as
 * ONNX's Cast does, and case mapping. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/onnx_ops.h"

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
