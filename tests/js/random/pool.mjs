// Worker threads that run random-model cases (runner.mjs runCase), one case at a time each, with
// a hang guard: a case that gives no result in time is a crash ('hang'), and its worker is
// replaced. So is a worker after a crash or an onnxruntime abort (a WebAssembly trap can leave
// onemodel's or ORT's instance unusable), and a worker that dies takes only its case with it.
// A case is given to a worker (and its time starts) once the worker says it is ready, so a slow
// start on a loaded machine never counts as a hang.
//
//   const pool = new Pool({ workers: 1, timeoutMs: 60000, caseOptions: { checkSuggestions: true } });
//   const record = await pool.run(source, { id, family, tags });
//   const other = await pool.run(source, { id }, { timeoutMs: 5000, caseOptions: { checkElements: 2000 } });
//   await pool.close();
//
// This file is also the workers' entry (they load it with workerData.role set).
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const ROLE = 'random-model-runner';
const READY = 'ready'; /* a worker's first message, once it has loaded onemodel and the runner */

export class Pool {
  /** workers: threads (each loads onemodel and onnxruntime-web once); timeoutMs: per case;
   *  caseOptions: runCase's options for every case. */
  constructor({ workers = 1, timeoutMs = 60000, caseOptions = {} } = {}) {
    this.timeoutMs = timeoutMs;
    this.caseOptions = caseOptions;
    this.queue = [];
    this.slots = Array.from({ length: workers }, () => ({ worker: null, ready: false, job: null, timer: null }));
    this.closed = false;
  }

  /** Runs one case (its source and the meta copied into the record); resolves to its record.
   *  caseOptions and timeoutMs, when given, replace the pool's for this case alone. */
  run(source, meta = {}, { caseOptions = this.caseOptions, timeoutMs = this.timeoutMs } = {}) {
    if (this.closed) return Promise.reject(new Error('Pool: closed'));
    return new Promise((resolve) => {
      this.queue.push({ source, meta, caseOptions, timeoutMs, resolve });
      this.#dispatch();
    });
  }

  /** Stops every worker (a queued case still waiting resolves as a crash). */
  async close() {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.resolve({ ...job.meta, class: 'crash', message: 'the pool was closed' });
    await Promise.all(this.slots.map((s) => this.#stop(s)));
  }

  #spawn(slot) {
    const worker = new Worker(new URL(import.meta.url), { workerData: { role: ROLE } });
    slot.worker = worker;
    slot.ready = false;
    worker.on('message', (record) => {
      if (slot.worker !== worker) return;
      if (record === READY) {
        slot.ready = true;
        worker.unref(); /* from now on a case's timer keeps the process alive while it runs */
        this.#dispatch();
        return;
      }
      if (!slot.job) return;
      const restart = record.class === 'crash' || record.ortAborted;
      this.#finish(slot, record);
      if (restart) this.#replace(slot);
      else this.#dispatch();
    });
    const died = (what) => {
      if (slot.worker !== worker) return;
      slot.worker = null;
      if (slot.job) this.#finish(slot, { ...slot.job.meta, class: 'crash', message: `the worker died: ${what}` });
      else if (!slot.ready && this.queue.length) { /* dying as it starts: the next case goes with it, or it would start again and again */
        const job = this.queue.shift();
        job.resolve({ ...job.meta, class: 'crash', message: `the worker died as it started: ${what}` });
      }
      this.#dispatch();
    };
    worker.on('error', (e) => died(e?.stack ?? String(e)));
    worker.on('exit', (code) => died(`exit code ${code}`));
  }

  #finish(slot, record) {
    clearTimeout(slot.timer);
    const job = slot.job;
    slot.job = null;
    job.resolve(record);
  }

  async #stop(slot) {
    const w = slot.worker;
    slot.worker = null;
    if (w) await w.terminate();
  }

  #replace(slot) {
    this.#stop(slot).then(() => this.#dispatch());
  }

  #dispatch() {
    for (const slot of this.slots) {
      if (slot.job || !this.queue.length || this.closed) continue;
      if (!slot.worker) this.#spawn(slot);
      if (!slot.ready) continue; /* its READY dispatches again */
      const job = this.queue.shift();
      slot.job = job;
      slot.timer = setTimeout(() => {
        if (slot.job !== job) return;
        this.#finish(slot, { ...job.meta, class: 'crash', at: 'hang', message: `no result within ${job.timeoutMs / 1000} s (the worker was stopped)` });
        this.#replace(slot);
      }, job.timeoutMs);
      slot.worker.postMessage({ source: job.source, meta: job.meta, options: job.caseOptions });
    }
  }
}

if (!isMainThread && workerData?.role === ROLE) {
  const om = await import('onemodel');
  const { runCase } = await import('./runner.mjs');
  await om.ready();
  parentPort.on('message', async ({ source, meta, options }) => {
    parentPort.postMessage(await runCase(source, meta, options));
  });
  parentPort.postMessage(READY);
}
