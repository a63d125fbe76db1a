/* The kernels' thread pool: om__parallel runs the parts of one job on the calling thread and up
 * to om_get_num_threads() - 1 worker threads, which start on first use and then sleep on a
 * condition variable between jobs. A kernel splits its work into parts that each write their
 * own outputs, summed in the serial order whatever the split (which may depend on the thread
 * count: a product is one block on one thread, and its blocks shrink with the threads), so
 * results have the same bits for any thread count.
 *
 * Workers run only the parts' arithmetic: they never allocate through om__alloc, set an error,
 * record autograd or trace (all per-thread state, src/core/error.c), so the caller's state is
 * the only state a call touches. One job runs at a time: a second thread calling om__parallel
 * meanwhile (or a part calling it) runs its parts itself, with the same bits.
 *
 * Built with OM_THREADS (native builds, and the threaded WASM build compiled with -pthread);
 * without it (the single-thread WASM build) every job runs on the caller and the count is 1. */
#include "internal.h"

#ifdef OM_THREADS
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#ifdef __EMSCRIPTEN__
#include <emscripten/threading.h>
#else
#include <unistd.h>
#endif

static struct {
  pthread_mutex_t mu; /* guards the fields below but next */
  pthread_cond_t start, done;
  pthread_t tid[OM_MAX_THREADS - 1];
  unsigned long seen0[OM_MAX_THREADS - 1]; /* the job count when worker i + 1 was started */
  int started;                             /* workers running (ids 1 .. started) */
  int threads;                             /* om_set_num_threads; 0: not set, the default */
  unsigned long jobs;                      /* jobs posted so far; a worker waits for the next */
  int active, pending;                     /* workers with ids 1 .. active take part; not yet done */
  om__part_fn fn;
  void *ctx;
  int64_t parts;
  atomic_llong next; /* the next part to take */
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .start = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};

/* Held by the thread whose job the pool runs. */
static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER;

static void take_parts(int worker) {
  for (int64_t p; (p = atomic_fetch_add(&pool.next, 1)) < pool.parts;) pool.fn(pool.ctx, p, worker);
}

static void *worker_main(void *arg) {
  int id = (int)(intptr_t)arg;
  pthread_mutex_lock(&pool.mu);
  unsigned long seen = pool.seen0[id - 1];
  for (;;) {
    while (pool.jobs == seen) pthread_cond_wait(&pool.start, &pool.mu);
    seen = pool.jobs;
    if (id > pool.active) continue;
    pthread_mutex_unlock(&pool.mu);
    take_parts(id);
    pthread_mutex_lock(&pool.mu);
    if (--pool.pending == 0) pthread_cond_signal(&pool.done);
  }
  return NULL;
}

/* The cores this process may use, capped at OM_MAX_THREADS. */
static int default_threads(void) {
#ifdef __EMSCRIPTEN__
  long n = emscripten_num_logical_cores();
#else
  long n = sysconf(_SC_NPROCESSORS_ONLN);
#endif
  return n < 1 ? 1 : n > OM_MAX_THREADS ? OM_MAX_THREADS : (int)n;
}

int om_set_num_threads(int n) {
  if (n < 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "om_set_num_threads: needs at least 1 thread, got %d", n), 0;
  pthread_mutex_lock(&pool.mu);
  pool.threads = n > OM_MAX_THREADS ? OM_MAX_THREADS : n;
  int t = pool.threads;
  pthread_mutex_unlock(&pool.mu);
  return t;
}

int om_get_num_threads(void) {
  pthread_mutex_lock(&pool.mu);
  if (!pool.threads) pool.threads = default_threads();
  int t = pool.threads;
  pthread_mutex_unlock(&pool.mu);
  return t;
}

int om__parallel(int64_t parts, int most, om__part_fn fn, void *ctx) {
  int t = most <= 1 || parts <= 1 ? 1 : om_get_num_threads(); /* a small job (most 1) takes no lock */
  if (t > parts) t = parts;
  if (t > most) t = most;
  if (t <= 1 || pthread_mutex_trylock(&busy) != 0) {
    for (int64_t p = 0; p < parts; p++) fn(ctx, p, 0);
    return 1;
  }
  pthread_mutex_lock(&pool.mu);
  while (pool.started < t - 1) { /* a worker that cannot start leaves its parts to the others */
    pool.seen0[pool.started] = pool.jobs;
    if (pthread_create(&pool.tid[pool.started], NULL, worker_main, (void *)(intptr_t)(pool.started + 1)) != 0) break;
    pool.started++;
  }
  if (t > pool.started + 1) t = pool.started + 1;
  pool.fn = fn, pool.ctx = ctx, pool.parts = parts;
  atomic_store(&pool.next, 0);
  pool.active = pool.pending = t - 1;
  pool.jobs++;
  pthread_cond_broadcast(&pool.start);
  pthread_mutex_unlock(&pool.mu);
  take_parts(0);
  pthread_mutex_lock(&pool.mu);
  while (pool.pending) pthread_cond_wait(&pool.done, &pool.mu);
  pthread_mutex_unlock(&pool.mu);
  pthread_mutex_unlock(&busy);
  return t;
}

#else /* one thread: the single-thread WASM build */

int om_set_num_threads(int n) {
  if (n < 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "om_set_num_threads: needs at least 1 thread, got %d", n), 0;
  return 1;
}

int om_get_num_threads(void) { return 1; }

int om__parallel(int64_t parts, int most, om__part_fn fn, void *ctx) {
  (void)most;
  for (int64_t p = 0; p < parts; p++) fn(ctx, p, 0);
  return 1;
}

#endif
