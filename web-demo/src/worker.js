// The page's Web Worker: everything that runs the user's model (loading it, training, tracing,
// verifying with onnxruntime-web, laying out the graph) happens here, so the page never blocks.
// The model-file workflow itself is examples/lib/workflow.mjs, shared with the Node scripts.
//
// The user's code is imported as a module from a Blob URL after its 'onemodel' import is
// pointed at the URL this bundle imports onemodel from (see build.mjs), so both share one
// onemodel instance: tensors pass between them, and one wasm memory holds everything.
//
// Protocol (jobs.js is the other side): the page posts { id, type, file, base, ...payload } (file:
// the name messages give the user's code, default model.mjs; base: the URL a zoo file is served
// from, which its relative imports and import.meta.url resolve against, null otherwise), or
// { type: 'stop' } (the training run ends after its step); the worker
// answers with any number of { id, type: 'progress', ... } and then one { id, type: 'done',
// result } or { id, type: 'error', error: { name, kind, message, line, column } }.
import * as om from 'onemodel';
import * as ort from 'onnxruntime-web';
import * as wf from '../../examples/lib/workflow.mjs';
import { runOnnx, withSession } from '../../examples/lib/oracle.mjs';
import { blobSource, openGraph, readGraph } from './graphfile.js';
import { feedsFor, defaultSizes } from './feeds.js';
import { inferredShapes, withInferred } from './shapes.js';
import { SourceError, declaredTitle, errorPlace, linkModelCode } from './source.js';

/* global ONEMODEL_URL */ // defined by build.mjs: the URL the bundle imports onemodel from
const onemodelUrl = new URL(ONEMODEL_URL, self.location.href).href;
ort.env.wasm.wasmPaths = new URL('/ort/', self.location.href).href;
Error.stackTraceLimit = 100; // the user's frame can sit below many of onemodel's own

/**
 * The loaded model file: { source, base, urls, file }: the user's code, served from base (a zoo
 * file's URL; null for code of the person's own), and the Blob URLs it and the modules it
 * imports by relative URL were imported from.
 */
let loaded = null;
/** The last traced model: { model (TracedModel), inputs (what it was traced on), onnx (its .onnx, a Blob) }. */
let traced = null;
/** The Blob URL of the module being loaded or last loaded (for error places). */
let moduleUrl = null;
/** [URL, Blob URL] of the modules it imports by relative URL: a message names each by its URL, not its Blob URL. */
let moduleUrls = [];
/** Set by a 'stop' message: the training run ends after its current step (jobs.js stop()). */
let stopping = false;
/**
 * The file opened last (an .onnx or .om): { name, blob (the page's File), bytes (the whole file,
 * Uint8Array; null until its first run reads it: opening reads a file's structure alone), graph
 * (readGraph's), session (its om.InferenceSession, made on its first run) }.
 */
let opened = null;

function dropTraced() {
  if (!traced) return;
  traced.model.dispose();
  wf.disposeInputs(traced.inputs);
  traced = null;
}

function unload() {
  dropTraced();
  if (!loaded) return;
  wf.disposeModelFile(loaded.file);
  revoke(loaded.urls);
  loaded = null;
}

const revoke = (urls) => urls.forEach((url) => URL.revokeObjectURL(url));

/** The text at url (a module a zoo file imports); an HTTP error says its status. */
async function fetchText(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return res.text();
}

/**
 * The model file for this source served from base (null: the person's own code): the loaded one
 * when both are the same, else a fresh import.
 */
async function load(source, base) {
  await om.ready();
  if (loaded?.source === source && loaded.base === base) return loaded.file;
  unload();
  const urls = [];   // every Blob URL this load makes (the code's and its modules'): revoked when it fails or is unloaded
  const blobUrl = (code) => {
    urls.push(URL.createObjectURL(new Blob([code], { type: 'text/javascript' })));
    return urls.at(-1);
  };
  try {
    const { code, modules } = await linkModelCode(source, { url: onemodelUrl, exports: new Set(Object.keys(om)), base, fetchText, moduleUrl: blobUrl });
    moduleUrl = blobUrl(code);
    moduleUrls = modules;
    const file = wf.checkModelFile(await import(moduleUrl), 'your model');
    loaded = { source, base, urls, file };
    return file;
  } catch (e) {
    revoke(urls);
    throw e;
  }
}

const jobs = {
  /**
   * What the page shows at the start: the zoo in order, then the real ports (wf.ZOO_PORTS), each
   * { name (examples/zoo/<name>.mjs, served at /zoo/), title (the one the file declares, or null) },
   * and how many threads compute here.
   */
  async zoo() {
    await om.ready();
    const zoo = await Promise.all([...wf.ZOO, ...wf.ZOO_PORTS].map(async (name) => {
      const res = await fetch(new URL(`/zoo/${name}.mjs`, self.location.href)).catch(() => null);
      return { name, title: res?.ok ? declaredTitle(await res.text()) : null };
    }));
    return { zoo, threads: om.numThreads() };
  },

  /** What the page shows before a run: the title, the inputs to edit, the default training. */
  async inspect({ source, base }) {
    const file = await load(source, base);
    return { title: file.title, inputs: wf.describeInputs(file.inputs), trainSteps: file.train?.steps ?? null };
  },

  /**
   * Trains `steps` steps, or fewer when a 'stop' message comes (stopped: true; the weights keep
   * the steps done); a progress message per step carries its loss.
   */
  async train({ source, base, steps }, progress) {
    stopping = false;
    const file = await load(source, base);
    dropTraced(); // a trace of the untrained weights would be stale
    const { losses } = await wf.trainModel(file, {
      steps,
      onStep: (step, loss) => progress({ done: step + 1, total: steps, loss }),
      shouldStop: () => stopping,
    });
    return { steps: losses.length, loss: losses[losses.length - 1] ?? null, stopped: losses.length < steps };
  },

  /**
   * Traces at the given input shapes and axes: the summary, the graph (graphfile.js's, read from
   * traced.save(): every value's shape, symbolic dims by name) and the .onnx as a
   * Blob (toBlob: no copy of the file in this worker's memory; posting a Blob copies no bytes).
   * Progress messages: { stage: 'trace', done, total } (the recording run's steps), then
   * { stage: 'export', done, total } (bytes written).
   */
  async trace({ source, base, shapes }, progress) {
    const file = await load(source, base);
    dropTraced();
    const inputs = wf.makeInputs(file, shapes);
    let model;
    try {
      model = wf.traceModel(file, inputs, { onProgress: ({ done, total }) => progress({ stage: 'trace', done, total }) });
    } catch (e) {
      wf.disposeInputs(inputs);
      throw e;
    }
    traced = { model, inputs, onnx: null };
    traced.onnx = model.toBlob({ onProgress: ({ written, total }) => progress({ stage: 'export', done: written, total }) });
    const summary = wf.summarizeTraced(model, traced.onnx);
    return { summary, graph: readGraph(model.save()), onnx: traced.onnx };
  },

  /**
   * Runs the last traced model in onnxruntime-web against the eager model at several shapes
   * ({ report }), and once more on the inputs it was traced on ({ run: { inputs, outputs } },
   * each { name: { dtype, dims, data } }), for the page to show what the .onnx computes.
   */
  async verify({ source, base }, progress) {
    const file = await load(source, base);
    if (!traced) throw new om.OmError('InvalidArgument', 'verify: trace the model first');
    const report = await wf.verifyTraced(file, traced.model, {
      inputs: traced.inputs,
      onCheck: (check, index, total) => progress({ done: index + 1, total, check }),
    });
    const feeds = Object.fromEntries(Object.entries(traced.inputs).map(([name, [t]]) => [name, t]));
    const inputs = Object.fromEntries(Object.entries(feeds).map(([name, t]) =>
      [name, { dtype: t.dtype, dims: t.shape, data: Array.from(t.toArray(), Number) }]));
    return { report, run: { inputs, outputs: await runOnnx(new Uint8Array(await traced.onnx.arrayBuffer()), feeds) } };
  },

  /**
   * Opens an .onnx or .om file (blob: the page's File) to view and run: its graph. Either is
   * read in pieces, its structure without its weights' bytes (graphfile.js's openGraph): a run
   * reads the whole file.
   */
  async open({ name, blob }) {
    await om.ready();
    const { graph: read, light, bytes } = await openGraph(blobSource(blob));
    const { sizes, values, error } = await inferOpened(read, light);
    const graph = { ...withInferred(read, values), inferred: { sizes, error } };
    opened?.session?.dispose();
    opened = { name, blob, bytes, graph, session: null };
    return { graph };
  },

  /**
   * Runs the opened file on generated inputs (symbols at `sizes`; feeds.js) or on `uploaded` ones
   * in the library's Session and (an .onnx) in onnxruntime-web, each once to warm up and once
   * timed: { inputs: { name: { dtype, dims } }, engines: { session, ort: { ms, outputs: { name:
   * { dtype, dims, data } } } | { error } | null (an .om, which it does not read) }, diffs
   * ({ output: max |session - ort| }) and maxDiff (their largest), null without both engines' outputs }.
   */
  async runFile({ sizes, uploaded }) {
    if (!opened) throw new om.OmError('InvalidArgument', 'run: open a .onnx or .om file first');
    opened.bytes ??= await wholeFile(opened);
    const feeds = feedsFor(opened.graph.inputs, sizes, uploaded);
    const inputs = Object.fromEntries(Object.entries(feeds).map(([k, v]) => [k, { dtype: v.dtype, dims: v.dims }]));
    const engines = {
      session: await engine(async () => {
        opened.session ??= await om.InferenceSession.create(opened.bytes);
        return timedRun(() => om.tidy(() => Object.fromEntries(Object.entries(opened.session.run(feeds)).map(([k, t]) =>
          [k, { dtype: t.dtype, dims: t.shape, data: Array.from(t.toArray(), Number) }]))));
      }),
      ort: opened.graph.format === 'om' ? null : await engine(() => withSession(opened.bytes, (run) => timedRun(() => run(feeds)))),
    };
    const diffs = differences(engines.session.outputs, engines.ort?.outputs);
    return { inputs, engines, diffs, maxDiff: diffs && Math.max(...Object.values(diffs)) };
  },
};

/**
 * The whole of the opened file, read for its first run. A File the browser can no longer read as
 * it was (changed or removed on disk since it was opened: NotReadableError) is an OmError.
 */
async function wholeFile({ name, blob }) {
  try {
    return new Uint8Array(await blob.arrayBuffer());
  } catch (e) {
    throw new om.OmError('InvalidArgument', `run: cannot read ${name} again (${e?.name ?? 'Error'}: ${e?.message ?? e}); it may have changed since it was opened: open it again`);
  }
}

/**
 * The shapes the Session infers for an opened file's values at the symbols' default sizes
 * (shapes.js): { sizes, values, error }. A session of its own, released at once: the plans it
 * makes at the doubled sizes would otherwise stay with the one runs use. It opens the file without
 * its weights (`light`: openGraph's withoutWeights; shapes never read them), which copying into
 * wasm memory and decoding made most of a 100 MB file's opening; a run opens the whole file.
 */
async function inferOpened(graph, light) {
  const sizes = defaultSizes(graph.inputs);
  let session = null;
  try {
    session = await om.InferenceSession.create(light, { mode: 'exact' });
    return { sizes, ...inferredShapes(session, graph, sizes) };
  } catch (e) {
    return { sizes, values: {}, error: `the Session cannot open it: ${e?.kind ? `${e.kind}: ` : ''}${e?.message ?? e}` };
  } finally {
    session?.dispose();
  }
}

/** Runs once to warm up, then once more timed: { ms, outputs }. */
async function timedRun(run) {
  await run();
  const t0 = performance.now();
  const outputs = await run();
  return { ms: performance.now() - t0, outputs };
}

/** What an engine's run gave, or { error } (it cannot read or run the file). */
async function engine(fn) {
  try {
    return await fn();
  } catch (e) {
    return { error: `${e?.kind ? `${e.kind}: ` : ''}${e?.message ?? e}` };
  }
}

/** Per output both engines gave, the largest |a - b| (NaN when their sizes differ); null without both. */
function differences(a, b) {
  if (!a || !b) return null;
  return Object.fromEntries(Object.entries(a).map(([name, x]) => {
    const y = b[name];
    if (!y || x.data.length !== y.data.length) return [name, NaN];
    let max = 0;
    for (let i = 0; i < x.data.length; i++) max = Math.max(max, Math.abs(x.data[i] - y.data[i]));
    return [name, max];
  }));
}

/**
 * An error as the page shows it: its class, kind, message and place in the user's code. The
 * module's Blob URL in a message (a place the tracer added, a failed import) becomes `file`, the
 * name the page gives the code: mlp.mjs:7:7.
 */
function describeError(e, file) {
  const place = e instanceof SourceError ? { line: e.line, column: e.column } : (moduleUrl && errorPlace(e, moduleUrl));
  const message = e?.message ?? String(e);
  return {
    name: e?.name ?? 'Error',
    kind: e?.kind ?? null,
    message: moduleUrls.reduce((m, [url, blob]) => m.replaceAll(blob, url), moduleUrl ? message.replaceAll(moduleUrl, file) : message),
    line: place?.line ?? null,
    column: place?.column ?? null,
  };
}

self.onmessage = async ({ data: { id, type, file = 'model.mjs', base = null, ...payload } }) => {
  if (type === 'stop') { // not a job: a request to the running one
    stopping = true;
    return;
  }
  const progress = (p) => self.postMessage({ id, type: 'progress', ...p });
  try {
    if (!Object.hasOwn(jobs, type)) throw new Error(`worker: unknown job ${JSON.stringify(type)}`);
    self.postMessage({ id, type: 'done', result: await jobs[type]({ ...payload, base }, progress) });
  } catch (e) {
    self.postMessage({ id, type: 'error', error: describeError(e, file) });
  }
};
