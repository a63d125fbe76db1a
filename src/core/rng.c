/* Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11): element i of a call is a
 * pure function of (seed, offset + i), so the numbers are the same natively and in WASM, and
 * do not depend on how the work is split. Uniforms use 24 bits so every value is exact in
 * float32; normals are Box-Muller in double, rounded once to float32. */
#include <math.h>

#include "internal.h"

typedef struct { uint32_t v[4]; } ctr4;

static ctr4 philox(uint64_t counter, uint64_t seed) {
  uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int round = 0; round < 10; round++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint32_t)p1;
    c3 = (uint32_t)p0;
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return (ctr4){{c0, c1, c2, c3}};
}

float om__uniform(uint64_t seed, uint64_t counter) {
  return (float)(philox(counter, seed).v[0] >> 8) * (1.0f / 16777216.0f);
}

void om__rng_take(uint64_t n, uint64_t *seed, uint64_t *offset) {
  *seed = om__state()->rng_seed;
  *offset = om__state()->rng_offset;
  om__state()->rng_offset += n;
}

void om_manual_seed(uint64_t seed) {
  om__state()->rng_seed = seed;
  om__state()->rng_offset = 0;
}

static om_tensor *random_tensor(const int64_t *shape, int ndim, uint64_t seed, bool has_seed, bool normal) {
  const char *who = normal ? "randn" : "rand";
  om_meta m = {.dtype = OM_FLOAT32, .ndim = ndim};
  int64_t n = om__numel(shape, ndim, who);
  if (n < 0) return NULL;
  if (ndim) for (int d = 0; d < ndim; d++) m.shape[d] = shape[d];
  om_tensor *t = om__tensor_new(&m, false, who);
  if (!t) return NULL;
  uint64_t offset = 0;
  if (!has_seed) om__rng_take((uint64_t)n, &seed, &offset); /* the thread's default generator */
  float *out = t->storage->data;
  for (int64_t i = 0; i < n; i++) {
    if (!normal) {
      out[i] = om__uniform(seed, offset + (uint64_t)i);
    } else {
      ctr4 r = philox(offset + (uint64_t)i, seed);
      double u1 = ((double)r.v[0] + 1.0) * (1.0 / 4294967296.0); /* (0, 1]: log is finite */
      double u2 = (double)r.v[1] * (1.0 / 4294967296.0);
      out[i] = (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
    }
  }
  return om__trace_created(t, OM_CREATED_RANDOM, NULL, 0, who);
}

om_tensor *om_rand(const int64_t *shape, int ndim, uint64_t seed, bool has_seed) {
  return random_tensor(shape, ndim, seed, has_seed, false);
}

om_tensor *om_randn(const int64_t *shape, int ndim, uint64_t seed, bool has_seed) {
  return random_tensor(shape, ndim, seed, has_seed, true);
}
