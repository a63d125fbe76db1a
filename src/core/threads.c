/* The kernels' thread pool: om__parallel runs the parts of one job on the calling thread and up
 * to om_get_num_threads() - 1 worker threads, which start on first use; between jobs each
 * watches for the next one for SPIN_US, then sleeps on a condition variable. A kernel splits its work into parts that each write their
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
#include <emscripten/emscripten.h>
#include <emscripten/threading.h>
#else
#include <time.h>
#include <unistd.h>
#endif

/* How long (microseconds) a worker watches for the next job before it sleeps. Waking a sleeping
 * worker took 230 to 270 us a job on this project's 2-vCPU VM (whose host parks an idle vCPU), a
 * sixteenth of a 4 ms convolution; a job posted within this time starts at once. An idle pool
 * sleeps after it, as onnxruntime's and pthreadpool's spin a while and then block. */
#define SPIN_US 50.0

static double now_us(void) {
#ifdef __EMSCRIPTEN__
  return emscripten_get_now() * 1000.0;
#else
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
#endif
}

/* A worker waits SPIN_US for a job, watching `post` (no lock), then sleeps on `start`. */
static void pause_briefly(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause(); /* natively: spare the core's other hyperthread */
#endif
}

static struct {
  pthread_mutex_t mu; /* guards the fields below but next, and the writes of post */
  pthread_cond_t start, done;
  pthread_t tid[OM_MAX_THREADS - 1];
  unsigned long long seen0[OM_MAX_THREADS - 1]; /* the job count when worker i + 1 was started */
  int started;                                  /* workers running (ids 1 .. started) */
  int threads;                                  /* om_set_num_threads; 0: not set, the default */
  /* the jobs posted so far << 8 | the workers taking part in the last (ids 1 .. that): one word,
   * so a worker watching it without the lock reads the two of one job; written after the job's
   * fields, so a worker that sees a job sees them */
  atomic_ullong post;
  atomic_int pending; /* workers of the job not done yet */
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

/* A worker takes part in a job only after every job before it that it took part in is done (the
 * caller waits for them), so the job it reads in post is the one its parts belong to. */
static void *worker_main(void *arg) {
  int id = (int)(intptr_t)arg;
  pthread_mutex_lock(&pool.mu);
  unsigned long long seen = pool.seen0[id - 1], post;
  pthread_mutex_unlock(&pool.mu);
  for (;;) {
    post = atomic_load(&pool.post);
    for (double t0 = now_us(); post >> 8 == seen && now_us() - t0 < SPIN_US; post = atomic_load(&pool.post)) pause_briefly();
    if (post >> 8 == seen) {
      pthread_mutex_lock(&pool.mu);
      while ((post = atomic_load(&pool.post)) >> 8 == seen) pthread_cond_wait(&pool.start, &pool.mu);
      pthread_mutex_unlock(&pool.mu);
    }
    seen = post >> 8;
    if (id > (int)(post & 0xff)) continue;
    take_parts(id);
    if (atomic_fetch_sub(&pool.pending, 1) == 1) { /* the last: wake the caller, under mu so it cannot miss it */
      pthread_mutex_lock(&pool.mu);
      pthread_cond_signal(&pool.done);
      pthread_mutex_unlock(&pool.mu);
    }
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
    pool.seen0[pool.started] = atomic_load(&pool.post) >> 8;
    if (pthread_create(&pool.tid[pool.started], NULL, worker_main, (void *)(intptr_t)(pool.started + 1)) != 0) break;
    pool.started++;
  }
  if (t > pool.started + 1) t = pool.started + 1;
  pool.fn = fn, pool.ctx = ctx, pool.parts = parts;
  atomic_store(&pool.next, 0);
  atomic_store(&pool.pending, t - 1);
  atomic_store(&pool.post, ((atomic_load(&pool.post) >> 8) + 1) << 8 | (unsigned long long)(t - 1));
  pthread_cond_broadcast(&pool.start);
  pthread_mutex_unlock(&pool.mu);
  take_parts(0);
  for (double t0 = now_us(); atomic_load(&pool.pending) && now_us() - t0 < SPIN_US;) pause_briefly(); /* the workers' last parts */
  pthread_mutex_lock(&pool.mu);
  while (atomic_load(&pool.pending)) pthread_cond_wait(&pool.done, &pool.mu);
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
