// The page's side of the worker: one job at a time, each a request with an id answered by
// progress messages and one result or error. Cancel terminates the worker (a running wasm call
// cannot be interrupted otherwise) and starts a fresh one, so the page goes on working; so does
// an error the worker did not catch. The fresh worker has no loaded or trained model, which the
// next job loads again.
export class CancelledError extends Error {
  constructor() {
    super('cancelled');
    this.name = 'CancelledError';
  }
}

export class Jobs {
  /** workerUrl: the worker bundle's URL; onRestart() runs when a fresh worker replaced the old one. */
  constructor(workerUrl, onRestart = () => {}) {
    this.workerUrl = workerUrl;
    this.onRestart = onRestart;
    this.nextId = 1;
    this.current = null;   // { id, resolve, reject, onEvent }
    this.#start();
  }

  #start() {
    const worker = new Worker(this.workerUrl, { type: 'module' });
    this.worker = worker;
    // A replaced worker's events are dropped: one it had queued before terminate() may still be
    // delivered, and must not end (or restart) the fresh worker's job.
    worker.onmessage = ({ data }) => {
      const job = this.current;
      if (worker !== this.worker || !job || data.id !== job.id) return;
      if (data.type === 'progress') return job.onEvent(data);
      this.current = null;
      if (data.type === 'done') job.resolve(data.result);
      else job.reject(Object.assign(new Error(data.error.message), data.error));
    };
    // An error the worker did not catch (the user's code threw from a timer, the bundle did not
    // load) fails the running job; the worker, which may still be running that job, is replaced.
    // With no job running there is nothing to fail and no state a job depends on.
    worker.onerror = (e) => {
      e.preventDefault();
      const job = this.current;
      if (worker !== this.worker || !job) return;
      this.#restart();
      job.reject(Object.assign(new Error(e.message || 'the worker failed'), { kind: 'Worker' }));
    };
  }

  get busy() {
    return this.current !== null;
  }

  /** Runs a job in the worker; onEvent gets its progress messages. */
  run(type, payload = {}, onEvent = () => {}) {
    if (this.current) return Promise.reject(new Error(`a ${this.current.type} job is still running`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.current = { id, type, resolve, reject, onEvent };
      this.worker.postMessage({ id, type, ...payload });
    });
  }

  /**
   * Asks the running job to end at its next pause and resolve with what it has (a training run
   * keeps the weights of the steps done); unlike cancel(), the worker and what it holds stay.
   */
  stop() {
    if (this.current) this.worker.postMessage({ type: 'stop' });
  }

  /** Stops the running job (its promise rejects with CancelledError) and starts a fresh worker. */
  cancel() {
    const job = this.current;
    this.#restart();
    job?.reject(new CancelledError());
  }

  #restart() {
    this.current = null;
    this.worker.terminate();
    this.#start();
    this.onRestart();
  }
}
