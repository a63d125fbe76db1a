/* Storages and tensors: lifetime, metadata, creation, element access and in-place writes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const dtype_names[] = {"float32", "int64", "bool", "float64"};
static const size_t dtype_sizes[] = {4, 8, 1, 8};

const char *om_dtype_name(int dtype) { return dtype >= 0 && dtype <= OM_FLOAT64 ? dtype_names[dtype] : NULL; }
size_t om_dtype_size(int dtype) { return dtype >= 0 && dtype <= OM_FLOAT64 ? dtype_sizes[dtype] : 0; }
size_t om__dtype_size(om_dtype dtype) { return dtype_sizes[dtype]; }

/* ---- allocation ---- */

#ifndef OM_MAX_BLOCK /* the fuzzing build lowers it (tools/fuzz_onnx.sh): a plan's huge tensor is then OutOfMemory */
#ifdef __EMSCRIPTEN__
/* One block above 2 GiB in WASM succeeds or fails depending on the heap's history (emcc's
 * dlmalloc grows the heap by a signed increment), so the limit is made a rule instead. */
#define OM_MAX_BLOCK ((uint64_t)INT32_MAX)
#else
#define OM_MAX_BLOCK ((uint64_t)SIZE_MAX)
#endif
#endif

bool om__block_fits(uint64_t nbytes, const char *who) {
  return nbytes <= OM_MAX_BLOCK || om__fail(OM_ERR_OUT_OF_MEMORY, "%s: out of memory allocating %llu bytes (one block is limited to 2 GiB in WASM)",
                                            who, (unsigned long long)nbytes);
}

void *om__alloc(uint64_t nbytes, const char *who) {
  /* Sizes are computed in 64 bits: wasm32's size_t would silently wrap a 5 GB request. */
  if (!om__block_fits(nbytes, who)) return NULL;
  void *p = malloc(nbytes ? (size_t)nbytes : 1);
  if (!p) om__fail(OM_ERR_OUT_OF_MEMORY, "%s: out of memory allocating %llu bytes", who, (unsigned long long)nbytes);
  return p;
}

/* ---- the block cache ----
 * Eager code frees and remakes the same sizes on every step (a model's intermediates and their
 * headers). Freed tensor headers, storage records and data blocks of up to OM_CACHE_BLOCK_MAX
 * bytes wait in this thread's lists (om_block_cache) for the next request of their size class,
 * so a steady-state step runs without malloc and free. A data block is allocated at its class's
 * size: 64 bytes, or the size rounded up to a quarter of its power of two (at most 25% more).
 * The lists hold OM_CACHE_BYTES at most and are emptied when the thread's last tensor is
 * released (or the thread ends), so a program that releases its tensors leaves nothing allocated. Under ASan a
 * cached block, and a data block's tail past its size, are poisoned (use after free and
 * overruns are still caught). */
#define OM_CACHE_BLOCK_MAX ((uint64_t)1 << 20)
#define OM_CACHE_BYTES ((int64_t)16 << 20)

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#endif

/* The kernels' scratch kept between jobs, in all (om__scratch): the per-thread panels and
 * padded images of the products and convolutions that a model calls again on every step. */
#define OM_SCRATCH_KEEP ((int64_t)16 << 20)

/* The size class of a data block of nbytes (its allocated size in *size), or -1 when too big. */
static int size_class(uint64_t nbytes, uint64_t *size) {
  if (nbytes > OM_CACHE_BLOCK_MAX) return -1;
  if (nbytes <= 64) return *size = 64, 0;
  int k = 63 - __builtin_clzll(nbytes - 1); /* 2^k < nbytes <= 2^(k+1), k >= 6 */
  uint64_t quarter = (uint64_t)1 << (k - 2);
  *size = (nbytes + quarter - 1) & ~(quarter - 1); /* 5 to 8 quarters */
  return 1 + (k - 6) * 4 + (int)(*size >> (k - 2)) - 5;
}

/* A block of `size` bytes from a cache list, or NULL when the list is empty. */
static void *cache_take(void **list, size_t size) {
  void *p = *list;
  if (!p) return NULL;
  ASAN_UNPOISON_MEMORY_REGION(p, sizeof(void *));
  *list = *(void **)p;
  ASAN_UNPOISON_MEMORY_REGION(p, size);
  om__state()->cache.bytes -= (int64_t)size;
  return p;
}

static void cache_flush(void);

#ifdef OM_THREADS
#include <pthread.h>
/* A thread that ends while tensors it made live on (handed to another thread) never sees its
 * last tensor released, so its cache would stay allocated: a key's destructor, set when the
 * cache first keeps something on the thread, flushes it when the thread exits. */
static pthread_key_t exit_key;
static bool exit_key_made;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static void flush_at_exit(void *unused) {
  (void)unused;
  cache_flush();
}
static void make_exit_key(void) { exit_key_made = pthread_key_create(&exit_key, flush_at_exit) == 0; }
static void hook_exit(om_block_cache *c) {
  if (c->exit_hook) return;
  c->exit_hook = true;
  pthread_once(&exit_once, make_exit_key);
  if (exit_key_made) pthread_setspecific(exit_key, c); /* any value but NULL runs the destructor */
}
#else
static void hook_exit(om_block_cache *c) { (void)c; } /* one thread: nothing ends before the program */
#endif

/* Keeps a freed block of `size` bytes on a cache list, or frees it when the cache is full. */
static void cache_put(void **list, void *p, size_t size) {
  om_block_cache *c = &om__state()->cache;
  hook_exit(c);
  if (c->bytes + (int64_t)size > OM_CACHE_BYTES) {
    free(p);
    return;
  }
  *(void **)p = *list;
  *list = p;
  c->bytes += (int64_t)size;
  ASAN_POISON_MEMORY_REGION(p, size);
}

/* The allocated size of size class k's data blocks (size_class's inverse). */
static size_t class_size(int k) {
  return k == 0 ? 64 : (size_t)((k - 1) % 4 + 5) << (6 + (k - 1) / 4 - 2);
}

static void cache_free_list(void **list, size_t size) {
  while (*list) free(cache_take(list, size));
}

/* Frees the kernels' scratch. */
static void scratch_free(om_block_cache *c) {
  for (int i = 0; i < OM_SCRATCH_SLOTS; i++) free(c->scratch[i]), c->scratch[i] = NULL, c->scratch_floats[i] = 0;
}

/* Frees every block the cache holds. */
static void cache_flush(void) {
  om_block_cache *c = &om__state()->cache;
  for (int k = 0; k < OM_CACHE_CLASSES; k++) cache_free_list(&c->data[k], class_size(k));
  cache_free_list(&c->tensors, sizeof(om_tensor));
  cache_free_list(&c->storages, sizeof(om_storage));
  scratch_free(c);
}

float *om__alloc_floats(int64_t n, const char *who) {
  if (n < 0 || n >= (INT64_C(1) << 60)) return om__fail(OM_ERR_OUT_OF_MEMORY, "%s: %lld floats of scratch is too much", who, (long long)n), NULL;
  return om__alloc((uint64_t)(n + 1) * sizeof(float), who);
}

float *om__scratch(int slot, int64_t floats, const char *who) {
  om_block_cache *c = &om__state()->cache;
  hook_exit(c);
  if (!c->scratch[slot] || c->scratch_floats[slot] < floats || floats < 0) { /* grown, not kept: its contents are not the caller's */
    free(c->scratch[slot]);
    c->scratch_floats[slot] = 0;
    if (!(c->scratch[slot] = om__alloc_floats(floats, who))) return NULL;
    c->scratch_floats[slot] = floats;
  }
  ASAN_UNPOISON_MEMORY_REGION(c->scratch[slot], (size_t)(floats + 1) * sizeof(float));
  return c->scratch[slot];
}

void om__scratch_done(void) {
  om_block_cache *c = &om__state()->cache;
  int64_t held = 0;
  for (int i = 0; i < OM_SCRATCH_SLOTS; i++) held += c->scratch_floats[i];
  if (held * (int64_t)sizeof(float) > OM_SCRATCH_KEEP) {
    scratch_free(c);
    return;
  }
  for (int i = 0; i < OM_SCRATCH_SLOTS; i++) /* kept: a read of it before the next om__scratch is a bug ASan reports */
    if (c->scratch[i]) ASAN_POISON_MEMORY_REGION(c->scratch[i], (size_t)(c->scratch_floats[i] + 1) * sizeof(float));
}

/* A data block for nbytes: from the cache when one of its class is there. */
static void *data_new(uint64_t nbytes, const char *who) {
  uint64_t size;
  int k = size_class(nbytes, &size);
  if (k < 0) return om__alloc(nbytes, who);
  void *p = cache_take(&om__state()->cache.data[k], (size_t)size);
  if (!p) p = om__alloc(size, who);
  if (p) ASAN_POISON_MEMORY_REGION((char *)p + nbytes, (size_t)(size - nbytes));
  return p;
}

static void data_free(void *p, uint64_t nbytes) {
  uint64_t size;
  int k = size_class(nbytes, &size);
  if (k < 0) {
    free(p);
    return;
  }
  ASAN_UNPOISON_MEMORY_REGION(p, (size_t)size);
  cache_put(&om__state()->cache.data[k], p, (size_t)size);
}

om_storage *om__storage_new(uint64_t nbytes, bool zero, const char *who) {
  om_thread_state *st = om__state();
  if (st->bytes_cap && (st->live_bytes >= st->bytes_cap || nbytes > (uint64_t)(st->bytes_cap - st->live_bytes))) {
    st->cap_hit = true;
    return om__fail(OM_ERR_OUT_OF_MEMORY, "%s: %llu bytes would pass the %lld MB the tracer lets a run at sizes other than the example's use",
                    who, (unsigned long long)nbytes, (long long)(st->bytes_cap >> 20)), NULL;
  }
  om_storage *s = cache_take(&st->cache.storages, sizeof *s);
  if (!s && !(s = om__alloc(sizeof *s, who))) return NULL;
  s->data = data_new(nbytes, who);
  if (!s->data) {
    cache_put(&om__state()->cache.storages, s, sizeof *s);
    return NULL;
  }
  if (zero) memset(s->data, 0, (size_t)nbytes);
  s->refcount = 1;
  s->version = 0;
  s->nbytes = (size_t)nbytes;
  s->snapshots = NULL;
  s->planned = false;
  s->grad_lost = false;
  om__state()->live_bytes += (int64_t)nbytes;
  return s;
}

void om__storage_release(om_storage *s) {
  if (!s || --s->refcount > 0) return;
  if (!s->planned) {
    om__state()->live_bytes -= (int64_t)s->nbytes;
    data_free(s->data, s->nbytes);
  }
  cache_put(&om__state()->cache.storages, s, sizeof *s);
}

/* ---- shapes ---- */

int64_t om__numel(const int64_t *shape, int ndim, const char *who) {
  if (ndim < 0 || ndim > OM_MAX_DIMS) {
    om__fail(OM_ERR_INVALID_ARGUMENT, "%s: %d dims (at most %d)", who, ndim, OM_MAX_DIMS);
    return -1;
  }
  if (ndim > 0 && !shape) {
    om__fail(OM_ERR_INVALID_ARGUMENT, "%s: shape is NULL", who);
    return -1;
  }
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0) {
      char buf[OM_SHAPE_STR_LEN];
      om__fail(OM_ERR_INVALID_ARGUMENT, "%s: negative size %lld in shape %s", who,
               (long long)shape[d], om__shape_str(buf, sizeof buf, shape, ndim));
      return -1;
    }
    /* more than INT64_MAX / 8 elements is too many; below 2^29 times 2^31 there cannot be, so
     * the common case costs no 64-bit division (every op checks its outputs' shapes) */
    if (shape[d] && (n >= (int64_t)1 << 29 || shape[d] >= (int64_t)1 << 31) && n > (INT64_MAX / 8) / shape[d]) {
      char buf[OM_SHAPE_STR_LEN];
      om__fail(OM_ERR_OUT_OF_MEMORY, "%s: shape %s has too many elements", who,
               om__shape_str(buf, sizeof buf, shape, ndim));
      return -1;
    }
    n *= shape[d];
  }
  return n;
}

void om__contiguous_strides(const int64_t *shape, int ndim, int64_t *strides) {
  int64_t s = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    strides[d] = s;
    s *= shape[d] ? shape[d] : 1;
  }
}

int om__wrap_dim(int64_t dim, int ndim, const char *who) {
  int64_t n = ndim ? ndim : 1; /* a 0-d tensor takes dim 0 / -1, as in PyTorch */
  if (dim < -n || dim >= n) {
    om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "%s: dim %lld is out of range for %d dims", who,
             (long long)dim, ndim);
    return -1;
  }
  return (int)(dim < 0 ? dim + n : dim);
}

/* ---- tensors ---- */

static om_tensor *tensor_header(om_storage *s, om_dtype dtype, const char *who) {
  om_tensor *t = cache_take(&om__state()->cache.tensors, sizeof *t);
  if (!t && !(t = om__alloc(sizeof *t, who))) return NULL;
  memset(t, 0, sizeof *t);
  t->refcount = 1;
  t->storage = s;
  t->dtype = dtype;
  om__state()->live_tensors++;
  return t;
}

om_tensor *om__tensor_new(const om_meta *meta, bool zero, const char *who) {
  int64_t n = om__numel(meta->shape, meta->ndim, who);
  if (n < 0) return NULL;
  om_storage *s = om__storage_new((uint64_t)n * om__dtype_size(meta->dtype), zero, who);
  if (!s) return NULL;
  om_tensor *t = tensor_header(s, meta->dtype, who);
  if (!t) {
    om__storage_release(s);
    return NULL;
  }
  t->ndim = meta->ndim;
  memcpy(t->shape, meta->shape, sizeof(int64_t) * (size_t)meta->ndim);
  om__contiguous_strides(t->shape, t->ndim, t->strides);
  return t;
}

om_tensor *om__tensor_on(om_storage *s, const om_meta *meta, const char *who) {
  om_tensor *t = tensor_header(s, meta->dtype, who);
  if (!t) return NULL;
  s->refcount++;
  t->ndim = meta->ndim;
  memcpy(t->shape, meta->shape, sizeof(int64_t) * (size_t)meta->ndim);
  om__contiguous_strides(t->shape, t->ndim, t->strides);
  return t;
}

om_tensor *om__dense(om_tensor *t, const char *who) {
  if (om_tensor_is_contiguous(t)) return om_tensor_retain(t);
  om_meta m = {.dtype = t->dtype, .ndim = t->ndim};
  memcpy(m.shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  om_tensor *d = om__tensor_new(&m, false, who);
  if (d) om__copy_into(d, t);
  return d;
}

om_tensor *om__alias(const om_tensor *t) {
  om_tensor *a = tensor_header(t->storage, t->dtype, "alias");
  if (!a) return NULL;
  t->storage->refcount++;
  a->ndim = t->ndim;
  memcpy(a->shape, t->shape, sizeof a->shape);
  memcpy(a->strides, t->strides, sizeof a->strides);
  a->offset = t->offset;
  a->trace_run = t->trace_run; /* the same value, for the runs of om_trace_run */
  a->trace_origin = t->trace_origin;
  return a;
}

om_tensor *om_tensor_retain(om_tensor *t) {
  if (t) t->refcount++;
  return t;
}

void om_tensor_release(om_tensor *t) {
  if (!t || --t->refcount > 0) return;
  om_thread_state *st = om__state();
  st->live_tensors--;
  om_tensor_release(t->grad);
  om__record_release(t->grad_fn);
  om_tensor_release(t->base);
  if (t->view) om__view_link_free(t->view);
  om__storage_release(t->storage);
  cache_put(&st->cache.tensors, t, sizeof *t);
  if (st->live_tensors <= 0) cache_flush(); /* the thread's last tensor: nothing is left allocated */
}

void om__release_all(om_tensor **ts, int n) {
  for (int k = 0; k < n; k++) {
    om_tensor_release(ts[k]);
    ts[k] = NULL;
  }
}

om_dtype om_tensor_dtype(const om_tensor *t) { return t ? t->dtype : OM_FLOAT32; }
int om_tensor_ndim(const om_tensor *t) { return t ? t->ndim : 0; }
const int64_t *om_tensor_shape(const om_tensor *t) { return t ? t->shape : NULL; }
const int64_t *om_tensor_strides(const om_tensor *t) { return t ? t->strides : NULL; }
uint64_t om_tensor_version(const om_tensor *t) { return t ? t->storage->version : 0; }
bool om_tensor_shares_storage(const om_tensor *t, const om_tensor *u) { return t && u && t->storage == u->storage; }
int64_t om_live_tensors(void) { return om__state()->live_tensors; }
int64_t om_live_bytes(void) { return om__state()->live_bytes; }

int64_t om_tensor_numel(const om_tensor *t) {
  if (!t) return 0;
  int64_t n = 1;
  for (int d = 0; d < t->ndim; d++) n *= t->shape[d];
  return n;
}

bool om_tensor_is_contiguous(const om_tensor *t) {
  if (!t) return false;
  if (om_tensor_numel(t) == 0) return true;
  int64_t s = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    if (t->shape[d] != 1 && t->strides[d] != s) return false;
    s *= t->shape[d];
  }
  return true;
}

/* ---- creation ---- */

static bool check_dtype(int dtype, const char *who) {
  if (dtype >= OM_FLOAT32 && dtype <= OM_FLOAT64) return true;
  return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: unknown dtype %d", who, dtype);
}

static bool make_meta(om_meta *m, const int64_t *shape, int ndim, int dtype, const char *who) {
  if (!check_dtype(dtype, who) || om__numel(shape, ndim, who) < 0) return false;
  m->dtype = (om_dtype)dtype;
  m->ndim = ndim;
  if (ndim) memcpy(m->shape, shape, sizeof(int64_t) * (size_t)ndim);
  return true;
}

/* Stores value into element k of a contiguous buffer of dtype. */
static void store(void *data, om_dtype dtype, int64_t k, double v) {
  switch (dtype) {
    case OM_FLOAT32: ((float *)data)[k] = (float)v; break;
    case OM_INT64: ((int64_t *)data)[k] = (int64_t)v; break;
    case OM_BOOL: ((uint8_t *)data)[k] = v != 0; break;
    case OM_FLOAT64: ((double *)data)[k] = v; break;
  }
}

static bool check_value(om_dtype dtype, double value, const char *who) {
  if (dtype != OM_INT64 || fabs(value) < 9.2e18) return true;
  return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: %g does not fit int64", who, value);
}

/* full under the name of the public function the caller used. */
static om_tensor *full_named(const int64_t *shape, int ndim, om_dtype dtype, double value, const char *who) {
  om_meta m;
  if (!make_meta(&m, shape, ndim, dtype, who) || !check_value(dtype, value, who)) return NULL;
  if (om__trace_shape_only(&m)) return om__trace_created(om__trace_phantom(&m), OM_CREATED_FULL, &value, 1, who);
  bool zero = value == 0 && !signbit(value); /* -0.0 is not all-zero bytes */
  om_tensor *t = om__tensor_new(&m, zero, who);
  if (t && !zero) {
    int64_t n = om_tensor_numel(t);
    for (int64_t k = 0; k < n; k++) store(t->storage->data, dtype, k, value);
  }
  return om__trace_created(t, OM_CREATED_FULL, &value, 1, who);
}

om_tensor *om_full(const int64_t *shape, int ndim, om_dtype dtype, double value) {
  return full_named(shape, ndim, dtype, value, "full");
}
om_tensor *om_zeros(const int64_t *shape, int ndim, om_dtype dtype) { return full_named(shape, ndim, dtype, 0, "zeros"); }
om_tensor *om_ones(const int64_t *shape, int ndim, om_dtype dtype) { return full_named(shape, ndim, dtype, 1, "ones"); }
om_tensor *om_scalar(double value, om_dtype dtype) { return full_named(NULL, 0, dtype, value, "scalar"); }

om_tensor *om_from_data(const void *data, const int64_t *shape, int ndim, om_dtype dtype) {
  om_meta m;
  if (!make_meta(&m, shape, ndim, dtype, "from_data")) return NULL;
  om_tensor *t = om__tensor_new(&m, false, "from_data");
  if (!t) return NULL;
  if (t->storage->nbytes && !data) {
    om_tensor_release(t);
    return om__fail(OM_ERR_INVALID_ARGUMENT, "from_data: data is NULL"), NULL;
  }
  if (t->storage->nbytes) memcpy(t->storage->data, data, t->storage->nbytes);
  if (dtype == OM_BOOL) /* normalise to 0/1 so comparisons and where see canonical bools */
    for (size_t k = 0; k < t->storage->nbytes; k++) ((uint8_t *)t->storage->data)[k] = ((uint8_t *)t->storage->data)[k] != 0;
  if (!om__state()->trace) return t;
  /* a trace compares the data with the other runs': one element by value, more by a hash */
  uint64_t h = 0xcbf29ce484222325u;
  for (size_t k = 0; k < t->storage->nbytes; k++) h = (h ^ ((uint8_t *)t->storage->data)[k]) * 0x100000001b3u;
  double arg = om_tensor_numel(t) == 1 ? om__get_flat(t, 0) : (double)(h >> 11);
  return om__trace_created(t, OM_CREATED_DATA, &arg, 1, "from_data");
}

om_tensor *om_arange(double start, double end, double step, om_dtype dtype) {
  if (!check_dtype(dtype, "arange")) return NULL;
  if (dtype == OM_BOOL) return om__fail(OM_ERR_DTYPE_MISMATCH, "arange: bool is not a numeric dtype"), NULL;
  if (step == 0 || !isfinite(start) || !isfinite(end) || !isfinite(step))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "arange: start %g, end %g, step %g do not make a range", start, end, step), NULL;
  double count = ceil((end - start) / step);
  if (count < 0) count = 0;
  if (count > 1e15) return om__fail(OM_ERR_OUT_OF_MEMORY, "arange: %g elements", count), NULL;
  int64_t n = (int64_t)count;
  if (n && (!check_value(dtype, start, "arange") || !check_value(dtype, start + (double)(n - 1) * step, "arange")))
    return NULL;
  om_meta m = {.dtype = dtype, .ndim = 1, .shape = {n}};
  if (om__trace_shape_only(&m))
    return om__trace_created(om__trace_phantom(&m), OM_CREATED_ARANGE, (double[]){start, end, step}, 3, "arange");
  om_tensor *t = om__tensor_new(&m, false, "arange");
  for (int64_t k = 0; t && k < n; k++) store(t->storage->data, dtype, k, start + (double)k * step);
  return om__trace_created(t, OM_CREATED_ARANGE, (double[]){start, end, step}, 3, "arange");
}

/* Element k of linspace(start, end, n) in float32 (start and end as floats, step the float32
 * step, 0 for n < 2): torch.linspace's CPU kernel, whose halves meet in the middle, so both ends
 * are exact. The product of a float32 step and an index below 2^29 is exact in double, so the
 * sum rounds to double once and then to float (PyTorch's fused multiply-add rounds once: the two
 * differ only where the double lands on a float32 tie). -ffp-contract=off keeps this unfused. */
static float linspace_at(float s, float e, double step, int64_t n, int64_t k) {
  return n == 1 || k < n / 2 ? (float)((double)s + step * (double)k) : (float)((double)e - step * (double)(n - 1 - k));
}

om_tensor *om_linspace(double start, double end, int64_t steps, om_dtype dtype) {
  if (!check_dtype(dtype, "linspace")) return NULL;
  if (steps < 0) return om__fail(OM_ERR_INVALID_ARGUMENT, "linspace: number of steps must be non-negative"), NULL;
  om_meta m = {.dtype = dtype, .ndim = 1, .shape = {steps}};
  if (om__trace_shape_only(&m))
    return om__trace_created(om__trace_phantom(&m), OM_CREATED_LINSPACE, (double[]){start, end}, 2, "linspace");
  om_tensor *t = om__tensor_new(&m, false, "linspace");
  float s = (float)start, e = (float)end;
  double step = steps > 1 ? (float)((double)(float)((double)e - (double)s) / (double)(steps - 1)) : 0;
  for (int64_t k = 0; t && k < steps; k++) store(t->storage->data, dtype, k, linspace_at(s, e, step, steps, k));
  return om__trace_created(t, OM_CREATED_LINSPACE, (double[]){start, end}, 2, "linspace");
}

/* ---- element access ---- */

/* Byte offset of logical element k (row-major) within t's storage view. */
static int64_t flat_offset(const om_tensor *t, int64_t k) {
  int64_t off = 0;
  for (int d = t->ndim - 1; d >= 0; d--) {
    off += (k % t->shape[d]) * t->strides[d];
    k /= t->shape[d];
  }
  return off;
}

static double load(const char *p, om_dtype dtype) {
  switch (dtype) {
    case OM_FLOAT32: return *(const float *)p;
    case OM_INT64: return (double)*(const int64_t *)p;
    case OM_BOOL: return *(const uint8_t *)p;
    case OM_FLOAT64: return *(const double *)p;
  }
  return 0;
}

double om__get_flat(const om_tensor *t, int64_t k) {
  size_t es = om__dtype_size(t->dtype);
  return load(om__data(t) + flat_offset(t, k) * (int64_t)es, t->dtype);
}

bool om_tensor_read(const om_tensor *t, void *dst) {
  if (!om__check_inputs("read", (om_tensor *const[]){(om_tensor *)t}, 1) || !om__trace_check_read(t, "read")) return false;
  if (!dst) return om__fail(OM_ERR_INVALID_ARGUMENT, "read: destination is NULL");
  om_tensor view = {.storage = &(om_storage){.data = dst}, .dtype = t->dtype, .ndim = t->ndim};
  memcpy(view.shape, t->shape, sizeof view.shape);
  om__contiguous_strides(view.shape, view.ndim, view.strides);
  om__copy_into(&view, t);
  return true;
}

static bool check_index(const om_tensor *t, const int64_t *index, const char *who, int64_t *off) {
  *off = 0;
  for (int d = 0; d < t->ndim; d++) {
    if (index[d] < 0 || index[d] >= t->shape[d]) {
      char buf[OM_SHAPE_STR_LEN];
      return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "%s: index %lld is out of range for dim %d of shape %s",
                      who, (long long)index[d], d, om__shape_str(buf, sizeof buf, t->shape, t->ndim));
    }
    *off += index[d] * t->strides[d];
  }
  return true;
}

bool om_tensor_get(const om_tensor *t, const int64_t *index, double *out) {
  int64_t off;
  if (!om__check_inputs("get", (om_tensor *const[]){(om_tensor *)t}, 1) || !om__trace_check_read(t, "get")) return false;
  if (t->ndim && !index) return om__fail(OM_ERR_INVALID_ARGUMENT, "get: index is NULL");
  if (!check_index(t, index, "get", &off)) return false;
  *out = load(om__data(t) + off * (int64_t)om__dtype_size(t->dtype), t->dtype);
  return true;
}

bool om_tensor_item(const om_tensor *t, double *out) {
  if (!om__check_inputs("item", (om_tensor *const[]){(om_tensor *)t}, 1) || !om__trace_check_read(t, "item")) return false;
  if (om_tensor_numel(t) != 1) {
    char buf[OM_SHAPE_STR_LEN];
    return om__fail(OM_ERR_INVALID_ARGUMENT, "item: tensor of shape %s has %lld elements, not 1",
                    om__shape_str(buf, sizeof buf, t->shape, t->ndim), (long long)om_tensor_numel(t));
  }
  *out = om__get_flat(t, 0);
  return true;
}

/* In-place writes. Outside a trace, refused on tensors autograd tracks while grad mode is on,
 * since the recorded graph would silently hold the new values. While a trace records they are
 * recorded as functional ops (om__trace_write: the written base made anew, spec 3's
 * InPlaceMutation for inputs and parameters) and made eagerly too. A traced model reading t's
 * storage in place first gets its own copy. */
/* Whether autograd tracks t itself (a leaf that requires grad, or a result of a record), not only
 * through values written into its storage (grad_lost). */
static bool tracked(const om_tensor *t) { return t->requires_grad || t->grad_fn; }

static bool check_writable(om_tensor *t, const char *who) {
  if (tracked(t) && om_is_grad_enabled())
    return om__fail(OM_ERR_AUTOGRAD,
                    "%s: in-place change of a tensor that requires grad; do it inside a no-grad scope", who);
  return true;
}

bool om__write_values(om_tensor *dst, const om_tensor *src, const char *who) {
  if (!om__storage_will_change(dst->storage, who)) return false;
  /* Overlapping views of one storage: read from a copy so no element is overwritten first. */
  om_tensor *from = (om_tensor *)src;
  if (dst->storage == src->storage) {
    om_meta m = {.dtype = src->dtype, .ndim = src->ndim};
    memcpy(m.shape, src->shape, sizeof(int64_t) * (size_t)src->ndim);
    if (!(from = om__tensor_new(&m, false, who))) return false;
    om__copy_into(from, src);
  }
  om__copy_into(dst, from);
  if (from != src) om_tensor_release(from);
  dst->storage->version++;
  return true;
}

/* Whether a write of src into dst, a non-leaf autograd tracks, can give dst src's place in the
 * graph, as PyTorch rebases an in-place result (`scores += bias`): nothing shares dst's storage
 * (no view of it, no saved alias), nothing refers to dst but its handle and src's own record (no
 * other op read the old value, so no gradient of it is lost), and src is made by a record and
 * has dst's shape and dtype. Otherwise the write stays refused (check_writable) or is followed
 * by write_through: a source without a record (fill_, a constant copied in) keeps dst tracked,
 * as PyTorch's FillBackward (`y = x * 2; y.fill_(1)` still requires grad and sends x zeros),
 * so it is never a rebase that would turn dst into a constant. */
static bool can_rebase(const om_tensor *dst, const om_tensor *src) {
  if (!dst->grad_fn || dst == src) return false;
  /* dst's own record may hold its output's storage for its backward (softmax, exp, tanh): that
   * alias is checked by version, so the backward through it fails loudly after the write (as
   * PyTorch's `y = x.softmax(-1); y.masked_fill_(m, 0)`, DeBERTa's XSoftmax); any other holder
   * (a view, another record's saved value) still blocks it */
  int64_t holders = 1;
  for (int j = 0; j < dst->grad_fn->n_out; j++) holders += dst->grad_fn->saved[j] && dst->grad_fn->saved[j]->storage == dst->storage;
  if (dst->storage->refcount != holders) return false;
  if (!src->grad_fn) return false;
  if (src->dtype != dst->dtype || src->ndim != dst->ndim || memcmp(src->shape, dst->shape, sizeof(int64_t) * (size_t)dst->ndim))
    return false;
  int64_t refs = 1;
  for (int k = 0; k < src->grad_fn->n_in; k++) refs += src->grad_fn->in[k] == dst;
  return dst->refcount == refs;
}

/* The write of can_rebase: dst takes src's values and its record; src's record reads dst's old
 * value through an alias holding dst's old record (its backward's saved values are checked by
 * version as any, so a backward that needs the overwritten values fails loudly). */
static bool rebase(om_tensor *dst, const om_tensor *src, const char *who) {
  om_record *r = src->grad_fn;
  om_tensor *old = r ? om__alias(dst) : NULL;
  if (r && !old) return false;
  if (!om__write_values(dst, src, who)) {
    om_tensor_release(old);
    return false;
  }
  if (old) {
    old->grad_fn = dst->grad_fn;
    old->output_index = dst->output_index;
    dst->grad_fn->refcount++;
    for (int k = 0; k < r->n_in; k++) {
      if (r->in[k] != dst) continue;
      r->in[k] = om_tensor_retain(old);
      om_tensor_release(dst);
    }
    r->refcount++;
  }
  om_record *prev = dst->grad_fn;
  dst->grad_fn = r;
  dst->output_index = src->output_index;
  om__record_release(prev);
  om_tensor_release(old);
  return true;
}

/* A write of src into dst, a tensor or a view of one (base), that autograd follows as PyTorch's
 * CopySlices: the base's new value is an as_strided_scatter of src into its old value (a record
 * reading an alias that keeps the old record), dst and the base's other views read it through
 * as_strided (om__view_sync). Records made before the write keep their edges to the old value.
 * Refused, with PyTorch's words, into a leaf that requires grad or a view of one. false with
 * *done unset when the write is not one of these (another dtype, a base whose elements are not
 * contiguous: the older rules below apply). */
static bool write_through(om_tensor *dst, const om_tensor *src, const char *who, bool *done) {
  om_tensor *b = dst->base ? dst->base : dst;
  if (b->requires_grad || dst->requires_grad) {
    *done = true;
    return om__fail(OM_ERR_AUTOGRAD, "%s: a %sleaf Variable that requires grad is being used in an in-place operation", who,
                    b == dst || dst->requires_grad ? "" : "view of a ");
  }
  if (dst->dtype != OM_FLOAT32 || !om_tensor_is_contiguous(b)) return true;
  *done = true;
  om_tensor *s = src->dtype == OM_FLOAT32 ? om_tensor_retain((om_tensor *)src) : om_cast((om_tensor *)src, OM_FLOAT32);
  bool same = s && s->ndim == dst->ndim && !memcmp(s->shape, dst->shape, sizeof(int64_t) * (size_t)dst->ndim);
  om_tensor *e = same || !s ? om_tensor_retain(s) : om_expand(s, dst->shape, dst->ndim);
  om_tensor *old = e ? om__alias(b) : NULL;
  bool ok = old && om__write_values(dst, src, who);
  if (ok) {
    old->grad_fn = b->grad_fn;
    old->output_index = b->output_index;
    if (old->grad_fn) old->grad_fn->refcount++;
    om_attrs a = {.n_i = 2 * dst->ndim + 1};
    memcpy(a.i, dst->shape, sizeof(int64_t) * (size_t)dst->ndim);
    memcpy(a.i + dst->ndim, dst->strides, sizeof(int64_t) * (size_t)dst->ndim);
    a.i[2 * dst->ndim] = dst->offset - b->offset; /* b is contiguous: its elements from its offset on */
    ok = om__record_write(OM_OP_as_strided_scatter, (om_tensor *[]){old, e}, 2, &a, b);
    if (ok) b->output_index = 0;
    b->write_gen++; /* the values changed: views re-read them even if the record failed */
    if (ok && dst != b) ok = om__view_sync(dst);
  }
  om_tensor_release(old);
  om_tensor_release(e);
  om_tensor_release(s);
  return ok;
}

/* A write of src into dst: recorded while a trace records, else checked and made (a non-leaf
 * autograd tracks rebased where that is exact: can_rebase; other writes that autograd must
 * follow: write_through). */
static bool write(om_tensor *dst, const om_tensor *src, const char *who) {
  if (om__state()->trace) return om__trace_write(dst, src, who);
  if (om__needs_grad(dst) && om_is_grad_enabled() && can_rebase(dst, src)) return rebase(dst, src, who);
  om_tensor *b = dst->base ? dst->base : dst;
  if (om_is_grad_enabled() && !dst->storage->grad_lost && (om__needs_grad(src) || tracked(b) || tracked(dst))) {
    bool done = false, ok = write_through(dst, src, who, &done);
    if (done || !ok) return ok;
  }
  /* src's values into a tensor (or a view of one) autograd does not track, where write_through
   * does not apply (a base that is not contiguous): PyTorch makes the written tensor track them;
   * here the values are written and the storage marked, so that ops on it still record and a
   * backward that reaches it fails (om_storage.grad_lost) rather than giving the source no gradient */
  if (dst->storage->grad_lost && om_is_grad_enabled()) /* again (a view made since records): the mark holds */
    return om__write_values(dst, src, who);
  if (om__needs_grad(src) && !tracked(dst) && om_is_grad_enabled()) {
    if (!om__write_values(dst, src, who)) return false;
    dst->storage->grad_lost = true;
    return true;
  }
  return check_writable(dst, who) && om__write_values(dst, src, who);
}

bool om_tensor_fill(om_tensor *t, double value) {
  if (!om__check_inputs("fill", (om_tensor *const[]){t}, 1) || !check_value(t->dtype, value, "fill")) return false;
  om_tensor *v = full_named(NULL, 0, t->dtype, value, "fill");
  bool ok = v && write(t, v, "fill");
  om_tensor_release(v);
  return ok;
}

bool om_tensor_set(om_tensor *t, const int64_t *index, double value) {
  int64_t off;
  if (!om__check_inputs("set", (om_tensor *const[]){t}, 1) || !check_value(t->dtype, value, "set")) return false;
  if (t->ndim && !index) return om__fail(OM_ERR_INVALID_ARGUMENT, "set: index is NULL");
  if (!check_index(t, index, "set", &off)) return false;
  if (om__state()->trace) { /* the element as a view (select by select), filled */
    om_tensor *e = om_tensor_retain(t);
    for (int d = 0; e && d < t->ndim; d++) {
      om_tensor *next = om_select(e, 0, index[d]);
      om_tensor_release(e);
      e = next;
    }
    om_tensor *v = e ? full_named(NULL, 0, t->dtype, value, "set") : NULL;
    bool ok = v && write(e, v, "set");
    om_tensor_release(v);
    om_tensor_release(e);
    return ok;
  }
  if (!check_writable(t, "set") || !om__storage_will_change(t->storage, "set")) return false;
  store(om__data(t), t->dtype, off, value);
  t->storage->version++;
  return true;
}

bool om_tensor_copy_from(om_tensor *dst, const om_tensor *src) {
  if (!om__check_inputs("copy_from", (om_tensor *const[]){dst, (om_tensor *)src}, 2)) return false;
  om_meta m = {.dtype = dst->dtype};
  if (!om__broadcast_shapes((om_tensor *const[]){dst, (om_tensor *)src}, 2, &m, "copy_from")) return false;
  if (m.ndim != dst->ndim || memcmp(m.shape, dst->shape, sizeof(int64_t) * (size_t)m.ndim)) {
    char a[OM_SHAPE_STR_LEN], b[OM_SHAPE_STR_LEN];
    return om__fail(OM_ERR_SHAPE_MISMATCH, "copy_from: source shape %s does not broadcast to %s",
                    om__shape_str(a, sizeof a, src->shape, src->ndim), om__shape_str(b, sizeof b, dst->shape, dst->ndim));
  }
  return write(dst, src, "copy_from");
}
