// The model-file workflow shared by the demo page's Web Worker and the Node scripts (examples/
// export-*.mjs, examples/start.mjs, tools/trace_oracle.mjs): check a model file, make inputs at
// other shapes, train, trace, summarise and verify. One implementation for both; the format and
// every function are documented in docs/demo.md.
//
//   const file = checkModelFile(await import('./zoo/mlp.mjs'));
//   await trainModel(file, { onStep: (step, loss) => console.log(step, loss) });
//   const traced = traceModel(file);
//   const summary = summarizeTraced(traced);
//   const report = await verifyTraced(file, traced);   // { ok, maxError, checks: [...] }
//   traced.dispose();
//   disposeModelFile(file);
//
// Browser-safe: no Node APIs; it imports only onemodel and the trace oracle (./oracle.mjs, which
// loads onnxruntime-web on first use).
import * as om from 'onemodel';
import { drawLike, otherShapes, tracedChecks } from './oracle.mjs';

const FORMAT = '{ title?, model, inputs, outputNames?, train? }';
const TRAIN_FORMAT = '{ steps, optimizer(params), batch(step) -> { inputs: [Tensor, ...], target }, loss(output, target), parameters? }';
const DTYPE_BYTES = { float32: 4, int64: 8, bool: 1 };

/** An OmError of kind InvalidArgument: what the workflow throws for a bad model file or shape. */
function invalid(message) {
  return new om.OmError('InvalidArgument', message);
}

/** A value for an error message: its type, or a short JSON form. */
function show(v) {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (v instanceof om.Tensor) return `a ${v.dtype} Tensor of shape [${v.shape}]`;
  if (typeof v === 'function') return 'a function';
  if (Array.isArray(v)) return `an array of length ${v.length}`;
  if (typeof v === 'object') return `an object with keys (${Object.keys(v).join(', ')})`;
  return JSON.stringify(v);
}

function isPlainObject(v) {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * Checks the axis names of one input of the given shape: one entry per dim, each a symbol name,
 * an om.Dim (a symbol with its sizes declared) or null (null/undefined axes: all fixed). `sizes`
 * (Map symbol -> { size, where }) collects the symbols across inputs, so one symbol has one
 * size. Returns the names (null for fixed axes).
 */
function readAxes(axes, shape, name, sizes, where) {
  const at = `${where}: input ${JSON.stringify(name)}`;
  const list = axes === null || axes === undefined ? shape.map(() => null) : axes;
  if (!Array.isArray(list) || list.length !== shape.length) {
    throw invalid(`${at}: axisNames must have one entry per dim (${shape.length}: a symbol name, an om.Dim or null), got ${show(axes)}`);
  }
  return Array.from(list, (entry, d) => {
    if (entry === null || entry === undefined) return null;
    const a = entry instanceof om.Dim ? entry.name : entry;
    if (typeof a !== 'string' || a === '') throw invalid(`${at}: axisNames[${d}] must be a symbol name (a non-empty string), an om.Dim or null, got ${show(a)}`);
    const here = `input ${JSON.stringify(name)} axis ${d}`;
    const seen = sizes.get(a);
    if (seen && seen.size !== shape[d]) {
      throw invalid(`${where}: symbol ${JSON.stringify(a)} is ${seen.size} on ${seen.where} but ${shape[d]} on ${here}; one symbol has one size`);
    }
    sizes.set(a, { size: shape[d], where: here });
    return a;
  });
}

/**
 * Checks an om.trace-style inputs object ({ name: Tensor | [Tensor, axisNames] }) and returns
 * it as [{ name, example, axes }]. `where` starts the messages.
 */
function readInputs(inputs, where) {
  if (!isPlainObject(inputs) || !Object.keys(inputs).length) {
    throw invalid(`${where}: inputs must be a non-empty object of name -> Tensor or [Tensor, axisNames] (e.g. { x: [example, ['batch', null]] }), got ${show(inputs)}`);
  }
  const sizes = new Map();
  return Object.entries(inputs).map(([name, v]) => {
    const at = `${where}: input ${JSON.stringify(name)}`;
    if (Array.isArray(v) && (v.length < 1 || v.length > 2)) throw invalid(`${at} must be a Tensor or [Tensor, axisNames], got ${show(v)}`);
    const [example, axes = null] = Array.isArray(v) ? v : [v];
    if (!(example instanceof om.Tensor)) throw invalid(`${at} must be a Tensor or [Tensor, axisNames], got ${show(example)} as its example`);
    if (example.isDisposed) throw new om.OmError('Disposed', `${at}: the example tensor was disposed`);
    return { name, example, axes: readAxes(axes, example.shape, name, sizes, where) };
  });
}

/**
 * Checks a model file and returns it normalised as { title, model, inputs, outputNames, train }
 * (outputNames and train null when absent). `exported` is the module (what import() gives) or its
 * default export; `name` (e.g. the file name) starts every message. Throws OmError
 * InvalidArgument naming what is wrong.
 */
export function checkModelFile(exported, name = 'model file') {
  let spec = exported;
  if (Object.prototype.toString.call(spec) === '[object Module]') {
    if (!('default' in spec)) throw invalid(`${name}: the module has no default export; export default ${FORMAT}`);
    spec = spec.default;
  }
  if (!isPlainObject(spec)) {
    throw invalid(`${name}: the default export must be an object ${FORMAT}, got ${show(spec)}`);
  }
  const known = new Set(['title', 'model', 'inputs', 'outputNames', 'train']);
  const unknown = Object.keys(spec).filter((k) => !known.has(k));
  if (unknown.length) throw invalid(`${name}: unknown key${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} in the default export; expected ${FORMAT}`);
  const { title = name, model, inputs, outputNames = null, train = null } = spec;
  if (typeof title !== 'string') throw invalid(`${name}: title must be a string, got ${show(title)}`);
  if (model === undefined) throw invalid(`${name}: the default export has no model; expected ${FORMAT}`);
  if (typeof model !== 'function' && !(model !== null && typeof model === 'object' && typeof model.forward === 'function')) {
    throw invalid(`${name}: model must be a function or an nn.Module (an object with forward()), got ${show(model)}`);
  }
  if (inputs === undefined) throw invalid(`${name}: the default export has no inputs; expected ${FORMAT}`);
  readInputs(inputs, name);
  if (outputNames !== null && (!Array.isArray(outputNames) || !outputNames.length || outputNames.some((n) => typeof n !== 'string' || n === ''))) {
    throw invalid(`${name}: outputNames must be a non-empty array of non-empty strings, got ${show(outputNames)}`);
  }
  if (train !== null) checkTrain(train, model, name);
  return { title, model, inputs, outputNames, train };
}

/** Checks a model file's train section (see TRAIN_FORMAT). */
function checkTrain(train, model, name) {
  const at = `${name}: train`;
  if (!isPlainObject(train)) throw invalid(`${at} must be an object ${TRAIN_FORMAT}, got ${show(train)}`);
  const unknown = Object.keys(train).filter((k) => !['steps', 'optimizer', 'batch', 'loss', 'parameters'].includes(k));
  if (unknown.length) throw invalid(`${at}: unknown key${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; expected ${TRAIN_FORMAT}`);
  if (!Number.isInteger(train.steps) || train.steps < 1) throw invalid(`${at}.steps must be a positive integer, got ${show(train.steps)}`);
  for (const f of ['optimizer', 'batch', 'loss']) {
    if (typeof train[f] !== 'function') throw invalid(`${at}.${f} must be a function, got ${show(train[f])}; expected ${TRAIN_FORMAT}`);
  }
  if (train.parameters !== undefined) {
    if (!Array.isArray(train.parameters) || !train.parameters.every((p) => p instanceof om.Tensor)) {
      throw invalid(`${at}.parameters must be an array of Tensors, got ${show(train.parameters)}`);
    }
  } else if (typeof model.parameters !== 'function') {
    throw invalid(`${at}: the model is a function, so train.parameters must list the tensors to train`);
  }
}

/**
 * The inputs of an om.trace-style inputs object as the page shows and edits them:
 * [{ name, dtype, shape, axes }] (axes one entry per dim: a symbol name, a declared symbol as
 * plain data { name, multipleOf, min, max } (an om.Dim's fields), or null).
 */
export function describeInputs(inputs) {
  return readInputs(inputs, 'describeInputs').map(({ name, example, axes }) => {
    const given = Array.isArray(inputs[name]) ? inputs[name][1] : null;
    const declared = (d) => (given?.[d] instanceof om.Dim ? { name: given[d].name, multipleOf: given[d].multipleOf, min: given[d].min, max: given[d].max } : null);
    return { name, dtype: example.dtype, shape: example.shape, axes: axes.map((a, d) => declared(d) ?? a) };
  });
}

/**
 * An axis entry of makeInputs' specs as om.trace takes it: a declared symbol given as plain data
 * ({ name, multipleOf?, min?, max? }, what describeInputs gives and the page posts) becomes an
 * om.Dim, which checks the numbers (an OmError InvalidArgument names a bad one).
 */
function axisEntry(a, d, at) {
  if (a === null || a === undefined || typeof a !== 'object' || a instanceof om.Dim) return a ?? null;
  const { name, ...sizes } = a;
  try {
    return om.Dim(name, sizes);
  } catch (e) {
    throw invalid(`${at}: axes[${d}]: ${e.message}`);
  }
}

/**
 * New example inputs for file at the shapes and symbolic axes in specs ([{ name, shape, axes }],
 * as describeInputs gives them, for every input of the file): om.trace-style
 * { name: [Tensor, axes] } with values drawn like the file's examples (drawLike: float inputs
 * random normal, int64/bool inputs drawn from the example's values). Throws OmError
 * InvalidArgument naming a missing or unknown input, a bad shape or axis, or a symbol given two
 * sizes. The caller disposes the tensors (disposeInputs).
 */
export function makeInputs(file, specs, seed = 1) {
  const where = 'makeInputs';
  const files = readInputs(file.inputs, where);
  if (!Array.isArray(specs)) throw invalid(`${where}: specs must be an array of { name, shape, axes } (as describeInputs gives), got ${show(specs)}`);
  const byName = new Map();
  for (const s of specs) {
    if (!isPlainObject(s) || typeof s.name !== 'string') throw invalid(`${where}: every spec must be { name, shape, axes }, got ${show(s)}`);
    if (!files.some((f) => f.name === s.name)) throw invalid(`${where}: the model has no input ${JSON.stringify(s.name)} (its inputs: ${files.map((f) => f.name).join(', ')})`);
    byName.set(s.name, s);
  }
  const checked = files.map(({ name, example }) => {
    const s = byName.get(name);
    if (!s) throw invalid(`${where}: no shape given for input ${JSON.stringify(name)}`);
    const at = `${where}: input ${JSON.stringify(name)}`;
    if (!Array.isArray(s.shape) || s.shape.length !== example.ndim || !s.shape.every((n) => Number.isInteger(n) && n >= 1)) {
      throw invalid(`${at}: shape must be ${example.ndim} positive integers (the example is [${example.shape}]), got ${JSON.stringify(s.shape)}`);
    }
    return { name, example, shape: s.shape, axes: Array.isArray(s.axes) ? Array.from(s.axes, (a, d) => axisEntry(a, d, at)) : s.axes ?? null };
  });
  const sizes = new Map();
  for (const c of checked) { // names for fixed axes and plain symbols, the om.Dims as they are
    c.axes = readAxes(c.axes, c.shape, c.name, sizes, where).map((a, d) => (c.axes?.[d] instanceof om.Dim ? c.axes[d] : a));
  }
  const out = {};
  try {
    checked.forEach((c, i) => { out[c.name] = [drawLike(c.example, c.shape, seed + i), c.axes]; });
  } catch (e) {
    disposeInputs(out);
    throw e;
  }
  return out;
}

/** Disposes the example tensors of an om.trace-style inputs object (e.g. from makeInputs). */
export function disposeInputs(inputs) {
  om.dispose(Object.values(inputs).map((v) => (Array.isArray(v) ? v[0] : v)));
}

/** Disposes what a model file made: the model (an nn.Module's weights), its example inputs and train.parameters. */
export function disposeModelFile(file) {
  if (typeof file.model.dispose === 'function') file.model.dispose();
  disposeInputs(file.inputs);
  if (file.train?.parameters) om.dispose(file.train.parameters);
}

/** The zoo: examples/zoo/<name>.mjs for each name, in the order the page and `npm start` list them. */
export const ZOO = ['mlp', 'lenet', 'resnet', 'unet', 'lstm', 'gpt', 'vit'];

/**
 * The zoo's real ports: examples/zoo/<name>.mjs for each name, a model file that imports a port
 * of examples/transformers or examples/torchvision and loads the weights PyTorch wrote for it
 * (no train section: the weights are the checkpoint's). The page lists them after ZOO.
 */
export const ZOO_PORTS = ['gpt2'];

/** One eager run of a model file's model on positional inputs. */
export function runModel(file, xs) {
  return typeof file.model === 'function' ? file.model(...xs) : file.model.forward(...xs);
}

/** Training (true) or evaluation mode, for an nn.Module (a function model has no mode). */
function setTraining(model, on) {
  if (typeof model.train === 'function') model.train(on);
}

/**
 * Lets the host's event loop run between steps, so a long run does not starve it (a page's
 * repaints when run on the main thread, a server's I/O in Node). Stopping is the host's: the
 * demo page terminates its worker, as a running wasm call cannot be interrupted anyway.
 */
function breathe() {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Trains file's model for `steps` steps (default file.train.steps) in training mode, with a new
 * optimizer from file.train.optimizer; back in eval mode when it returns. Each step: batch(step),
 * the model on batch.inputs, loss(output, target), backward, optimizer step; everything a step
 * makes is freed. onStep(step, loss) is called after each step; between steps the event loop
 * runs, and then a true shouldStop() ends the run there (the weights keep the steps done).
 * Resolves to { losses: number[] } (fewer than steps when stopped). Throws OmError InvalidArgument when the file has no train
 * section or a train function returns the wrong thing; errors of the model or the train
 * functions propagate as they are.
 */
export async function trainModel(file, { steps = file.train?.steps, onStep, shouldStop } = {}) {
  const { train, model } = file;
  if (!train) throw invalid(`trainModel: ${file.title} has no train section ${TRAIN_FORMAT}`);
  if (!Number.isInteger(steps) || steps < 0) throw invalid(`trainModel: steps must be a non-negative integer, got ${show(steps)}`);
  const losses = [];
  let opt = null;
  try {
    opt = train.optimizer(train.parameters ?? model.parameters());
    if (!(opt && typeof opt.step === 'function' && typeof opt.zeroGrad === 'function')) {
      throw invalid(`trainModel: train.optimizer(params) must return an optimizer (e.g. new om.optim.Adam(params, { lr: 1e-2 })), got ${show(opt)}`);
    }
    setTraining(model, true);
    for (let step = 0; step < steps; step++) {
      const loss = om.tidy(() => {
        opt.zeroGrad();
        const b = train.batch(step);
        if (!isPlainObject(b) || !Array.isArray(b.inputs) || !b.inputs.every((t) => t instanceof om.Tensor) || !('target' in b)) {
          throw invalid(`trainModel: train.batch(${step}) must return { inputs: [Tensor, ...], target }, got ${show(b)}`);
        }
        const l = train.loss(runModel(file, b.inputs), b.target);
        if (!(l instanceof om.Tensor) || l.ndim !== 0 || l.dtype !== 'float32') {
          throw invalid(`trainModel: train.loss(output, target) must return a float32 scalar Tensor, got ${show(l)}`);
        }
        l.backward();
        opt.step();
        return l.item();
      });
      losses.push(loss);
      onStep?.(step, loss);
      await breathe();
      if (shouldStop?.()) break; // asked between steps (the pause above let the request in): the weights stay as trained
    }
  } finally {
    if (typeof opt?.zeroGrad === 'function') opt.zeroGrad();
    if (typeof opt?.dispose === 'function') opt.dispose();
    setTraining(model, false);
  }
  return { losses };
}

/**
 * Traces file's model in eval mode (dropout off, batch norm on its running statistics) on inputs
 * (om.trace form; default the file's own, e.g. makeInputs' result for edited shapes and axes),
 * with the file's outputNames. Returns the TracedModel (the caller disposes it). Trace errors
 * propagate as om.TraceError, so their stack names the line of the model that made the call.
 */
export function traceModel(file, inputs = file.inputs, { onProgress } = {}) {
  readInputs(inputs, 'traceModel');
  setTraining(file.model, false);
  return om.trace(file.model, inputs, { ...(file.outputNames ? { outputNames: file.outputNames } : {}), onProgress });
}

/** The shape of a value as text: [batch, 3, 28, 28]. */
export function shapeText(shape) {
  return `[${shape.join(', ')}]`;
}

/**
 * What the page shows of a traced model, as plain data (it crosses postMessage):
 *   { inputs, outputs: [{ name, dtype, shape }] (a symbolic dim as its name), symbols: [name],
 *     ranges: [{ name, multipleOf, min, max, narrowedBy }] (the sizes the graph holds for:
 *     traced.symbols in the order of symbols; narrowedBy null where the declaration, not the model, set them),
 *     nodeCount, opCounts: [{ opType, count }] (most frequent first),
 *     initializers: [{ name, dtype, shape, bytes }], initializerBytes, onnxBytes,
 *     graph: { nodes: [{ id, kind, label, ... }], edges: [{ from, to, value }] } }
 * graph.nodes: kind 'input' | 'initializer' | 'output' ({ name, dtype, shape, bytes? }) and 'op'
 * ({ opType, inputs, outputs }: value names); ids 'input:<name>', 'initializer:<name>',
 * 'output:<name>', 'op:<index>'. An edge runs from the node that makes a value to each node
 * that reads it. bytes: the .onnx (a Uint8Array or a Blob; default traced.toOnnx()), for its size.
 */
export function summarizeTraced(traced, bytes = traced.toOnnx()) {
  const { nodes, initializers } = traced.graph();
  const inputs = traced.inputs;
  const outputs = traced.outputs;
  const count = new Map();
  for (const n of nodes) count.set(n.opType, (count.get(n.opType) ?? 0) + 1);
  const inits = initializers.map((i) => ({ ...i, bytes: DTYPE_BYTES[i.dtype] * i.shape.reduce((a, b) => a * b, 1) }));
  const symbols = [...new Set([...inputs, ...outputs].flatMap((v) => v.shape.filter((d) => typeof d === 'string')))];
  const maker = new Map(); // value name -> node id
  const gnodes = [];
  for (const v of inputs) { gnodes.push({ id: `input:${v.name}`, kind: 'input', label: v.name, ...v }); maker.set(v.name, `input:${v.name}`); }
  for (const v of inits) { gnodes.push({ id: `initializer:${v.name}`, kind: 'initializer', label: v.name, ...v }); maker.set(v.name, `initializer:${v.name}`); }
  const edges = [];
  nodes.forEach((n, k) => {
    const id = `op:${k}`;
    gnodes.push({ id, kind: 'op', label: n.opType, opType: n.opType, inputs: n.inputs, outputs: n.outputs });
    for (const v of n.inputs) if (maker.has(v)) edges.push({ from: maker.get(v), to: id, value: v });
    for (const v of n.outputs) if (v) maker.set(v, id);
  });
  for (const v of outputs) {
    gnodes.push({ id: `output:${v.name}`, kind: 'output', label: v.name, ...v });
    if (maker.has(v.name)) edges.push({ from: maker.get(v.name), to: `output:${v.name}`, value: v.name });
  }
  return {
    inputs,
    outputs,
    symbols,
    ranges: traced.symbols.map(({ name, multipleOf, min, max, narrowedBy }) => ({ name, multipleOf, min, max, narrowedBy }))
      .sort((a, b) => symbols.indexOf(a.name) - symbols.indexOf(b.name)),
    nodeCount: nodes.length,
    opCounts: [...count].map(([opType, n]) => ({ opType, count: n })).sort((a, b) => b.count - a.count || (a.opType < b.opType ? -1 : 1)),
    initializers: inits,
    initializerBytes: inits.reduce((a, i) => a + i.bytes, 0),
    onnxBytes: bytes instanceof Blob ? bytes.size : bytes.length,
    graph: { nodes: gnodes, edges },
  };
}

/** The largest of xs (NaN when xs is empty or holds a NaN). */
function maxOf(xs) {
  return xs.length ? Math.max(...xs) : NaN;
}

/** The size of each symbol at feeds ({ name: Tensor }), read through inputs' axis names. */
function symbolsAt(inputs, feeds) {
  const out = {};
  for (const { name, axes } of readInputs(inputs, 'verifyTraced')) {
    axes.forEach((a, d) => { if (a) out[a] = feeds[name].shape[d]; });
  }
  return out;
}

/**
 * Runs traced's .onnx in onnxruntime-web, and its graph in the library's own Session, and
 * compares both with the eager model (eval mode, no grad) at the traced shapes and at three other
 * sizes of every symbol (its smallest, s + m and 2s + m within the sizes the graph holds for: the
 * trace oracle's otherShapes), each output to tol * max(1, max|eager|). inputs: what was traced
 * (default the file's). Resolves to { ok, maxError, sessionMaxError, checks: [{ symbols: { name:
 * size }, shapes: { input: [dims] }, ok, maxError, sessionMaxError, outputs: [{ name, dtype,
 * shape, maxError, bound }], session: [the same for the Session], error? }] } (maxError:
 * onnxruntime-web's): a disagreement, or a run that fails (in either engine or eager), is a check
 * with ok false and its error message, not a rejection. onCheck(check, index, total) follows each
 * check.
 */
export async function verifyTraced(file, traced, { inputs = file.inputs, tol = 1e-5, onCheck } = {}) {
  const examples = Object.fromEntries(readInputs(inputs, 'verifyTraced').map(({ name, example }) => [name, example]));
  const others = otherShapes(inputs, traced.symbols);
  const sets = [examples, ...others];
  const checks = [];
  // every size in one Session and one onnxruntime-web session (creating one costs more than a run)
  const oracle = tracedChecks(traced, { tol });
  setTraining(file.model, false);
  try {
    const pending = sets.map((feeds) => {
      let eager = null;
      try {
        eager = om.tidy(() => om.noGrad(() => runModel(file, Object.values(feeds))));
        return oracle.check(feeds, eager);
      } catch (e) {
        return Promise.reject(e);
      } finally {
        om.dispose(eager);
      }
    });
    for (const p of pending) p.catch(() => {}); // each awaited below, once run() has run it
    await oracle.run();
    for (const [k, feeds] of sets.entries()) {
      const check = {
        symbols: symbolsAt(inputs, feeds),
        shapes: Object.fromEntries(Object.entries(feeds).map(([n, t]) => [n, t.shape])),
        ok: false, maxError: NaN, sessionMaxError: NaN, outputs: [], session: [],
      };
      try {
        const report = await pending[k];
        check.outputs = report.outputs;
        check.session = report.session;
        check.ok = true;
      } catch (e) {
        if (e.report) check.outputs = e.report.outputs, check.session = e.report.session;
        check.error = e instanceof om.OmError ? `${e.name} ${e.kind}: ${e.message}` : e.message;
      }
      check.maxError = maxOf(check.outputs.map((o) => o.maxError));
      check.sessionMaxError = maxOf(check.session.map((o) => o.maxError));
      checks.push(check);
      onCheck?.(check, checks.length - 1, sets.length);
      await breathe();
    }
  } finally {
    oracle.dispose();
    om.dispose(others);
  }
  const maxError = maxOf(checks.map((c) => c.maxError));
  return { ok: checks.every((c) => c.ok), maxError, sessionMaxError: maxOf(checks.map((c) => c.sessionMaxError)), checks };
}
