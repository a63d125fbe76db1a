/* The kernels' thread pool: om__parallel runs the parts of one job on the calling thread and up
 * to om_get_num_threads() - 1 worker threads, which start on first use; between jobs each
 * watches for the next one for SPIN_US, then sleeps on a condition variable. A worker joins a job
 * only while it is open: once the caller has taken the last part it closes the job and waits for
 * the workers that joined, so a worker still waking costs a small job nothing (the caller runs
 * its parts). A kernel splits its work into parts that each write their own outputs, summed in
 * the serial order whatever the split (which may depend on the thread count: a product is one
 * block on one thread, and its blocks shrink with the threads), so results have the same bits
 * for any thread count.
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

/* The job word `post`: the jobs posted so far, the workers offered the last one (ids 1 .. that),
 * whether it is closed (its caller has finished its own parts) and how many workers joined it
 * before that. One word, so that a worker joins a job with one compare-and-swap that fails once
 * the job is closed or another posted: a worker that wakes late takes no part, and the caller
 * waits only for the workers that joined, never for one still asleep. */
#define POST_JOB(p) ((p) >> 24)
#define POST_OFFERED(p) ((int)(((p) >> 16) & 0xff))
#define POST_CLOSED 0x8000ull
#define POST_JOINED(p) ((int)((p) & 0xff))
static struct {
  pthread_mutex_t mu; /* guards the fields below but threads, post and finished, and the writes of post that post a job */
  pthread_cond_t start, done;
  pthread_t tid[OM_MAX_THREADS - 1];
  unsigned long long seen0[OM_MAX_THREADS - 1]; /* the job count when worker i + 1 was started */
  int started;                                  /* workers running (ids 1 .. started) */
  int sleeping;                                 /* workers waiting on start */
  atomic_int threads;                           /* om_set_num_threads; 0: not set, the default (no lock:
                                                   every op of a model reads it) */
  atomic_ullong post; /* see POST_JOB; a job's fields are written before it is posted */
  atomic_int finished; /* workers of the job that joined and are done */
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

/* Whether worker id joined job `job` (offered to it, still open): then it reads the job's fields,
 * which its caller keeps until every worker that joined is done. */
static bool join(unsigned long long job, int id) {
  unsigned long long p = atomic_load(&pool.post);
  do {
    if (POST_JOB(p) != job || (p & POST_CLOSED) || id > POST_OFFERED(p)) return false;
  } while (!atomic_compare_exchange_weak(&pool.post, &p, p + 1));
  return true;
}

static void *worker_main(void *arg) {
  int id = (int)(intptr_t)arg;
  pthread_mutex_lock(&pool.mu);
  unsigned long long seen = pool.seen0[id - 1], post;
  pthread_mutex_unlock(&pool.mu);
  for (;;) {
    post = atomic_load(&pool.post);
    for (double t0 = now_us(); POST_JOB(post) == seen && now_us() - t0 < SPIN_US; post = atomic_load(&pool.post)) pause_briefly();
    if (POST_JOB(post) == seen) {
      pthread_mutex_lock(&pool.mu);
      pool.sleeping++;
      while (POST_JOB(post = atomic_load(&pool.post)) == seen) pthread_cond_wait(&pool.start, &pool.mu);
      pool.sleeping--;
      pthread_mutex_unlock(&pool.mu);
    }
    seen = POST_JOB(post);
    if (!join(seen, id)) continue;
    take_parts(id);
    atomic_fetch_add(&pool.finished, 1);
    /* the caller, once it closed the job, waits for `finished` to reach the joined count (a
     * closed word tells that it may be waiting): mu taken and released first, so the caller is
     * either before its test under mu (and sees the count) or waiting (and gets the signal) */
    post = atomic_load(&pool.post);
    if ((post & POST_CLOSED) && atomic_load(&pool.finished) == POST_JOINED(post)) {
      pthread_mutex_lock(&pool.mu);
      pthread_mutex_unlock(&pool.mu);
      pthread_cond_signal(&pool.done);
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
  int t = n > OM_MAX_THREADS ? OM_MAX_THREADS : n;
  atomic_store(&pool.threads, t);
  return t;
}

int om_get_num_threads(void) {
  int t = atomic_load(&pool.threads), unset = 0;
  if (!t && !atomic_compare_exchange_strong(&pool.threads, &unset, t = default_threads())) t = unset; /* set meanwhile */
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
    pool.seen0[pool.started] = POST_JOB(atomic_load(&pool.post));
    if (pthread_create(&pool.tid[pool.started], NULL, worker_main, (void *)(intptr_t)(pool.started + 1)) != 0) break;
    pool.started++;
  }
  if (t > pool.started + 1) t = pool.started + 1;
  pool.fn = fn, pool.ctx = ctx, pool.parts = parts;
  atomic_store(&pool.next, 0);
  atomic_store(&pool.finished, 0);
  atomic_store(&pool.post, (POST_JOB(atomic_load(&pool.post)) + 1) << 24 | (unsigned long long)(t - 1) << 16);
  /* wake the sleeping workers after unlocking: woken under the lock, each would block on it at
   * once, and the unlock would have to wake them again (a futex call each: 12% of the calling
   * thread's time in a CNN's training step at two threads in WASM); the job was posted under the
   * lock, so a worker going to sleep either sees it or is woken */
  bool wake = pool.sleeping > 0;
  pthread_mutex_unlock(&pool.mu);
  if (wake) pthread_cond_broadcast(&pool.start);
  take_parts(0);
  /* the parts are all taken: close the job to workers not in it yet, then wait for those in it */
  int joined = POST_JOINED(atomic_fetch_or(&pool.post, POST_CLOSED));
  for (double t0 = now_us(); atomic_load(&pool.finished) < joined && now_us() - t0 < SPIN_US;) pause_briefly();
  if (atomic_load(&pool.finished) < joined) {
    pthread_mutex_lock(&pool.mu);
    while (atomic_load(&pool.finished) < joined) pthread_cond_wait(&pool.done, &pool.mu);
    pthread_mutex_unlock(&pool.mu);
  }
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
