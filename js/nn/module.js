// om.nn: modules in PyTorch's shape. A Module's parameters are its Tensor-valued fields, found by
// walking its own fields in order (submodules and arrays of them recursively, as `layers.0.weight`);
// buffers are Tensors registered with registerBuffer(), in the state dict but not in parameters().
// As in PyTorch, a module lists its own parameters, then its own buffers, then its submodules'.
//
//   class Net extends om.nn.Module {
//     constructor() { super(); this.fc1 = new om.nn.Linear(4, 16); this.fc2 = new om.nn.Linear(16, 3); }
//     forward(x) { return this.fc2.forward(this.fc1.forward(x).relu()); }
//   }
//   const net = new Net();                 // om.manualSeed(n) first makes the weights reproducible
//   net.stateDict();                        // { 'fc1.weight': Tensor, 'fc1.bias': ..., 'fc2.weight': ..., ... }
//   net.dispose();                          // frees every parameter and buffer (and state it stored)
//
// Parameters are ordinary tensors: made inside om.tidy(), they are freed when it returns.
import { OmError, invalid } from '../errors.js';
import { Tensor, rand, tidy, noGrad, tensor, optionsArg, inScope, keep } from '../tensor.js';
import { linear } from '../ops/linalg.js';
import { describe, toI32 } from '../convert.js';

/** The floating dtypes loadStateDict converts between, as PyTorch's copy_ does. */
const FLOATING = new Set(['float32', 'float64']);

let walkModule; // (module, prefix, out, path) -> out, set in Module's static block
let persistence; // (module, field) -> undefined (not a buffer), true or false, set there too

/** The base class of every layer and model. */
export class Module {
  #buffers = new Map(); // field name -> persistent (in the state dict), for fields registered as buffers

  constructor() {
    /** Training mode (true) or evaluation mode; set by train() / eval() on the whole tree. */
    this.training = true;
    // The class's forward, called in a scope (forwardScope); an own property that the field walks
    // skip (not enumerable). A subclass's super.forward() runs in the caller's scope.
    const forward = this.forward;
    Object.defineProperty(this, 'forward', {
      value: (...args) => forwardScope(this, forward, args), writable: true, configurable: true,
    });
  }

  /** The computation; subclasses implement it. */
  forward() {
    throw new OmError('InvalidArgument', `forward: ${this.constructor.name} does not implement forward()`);
  }

  /**
   * Sets field `name` to tensor (or null) and marks it a buffer: not a parameter; saved in
   * stateDict() (and named when traced) unless { persistent: false }, as PyTorch's
   * register_buffer. Returns the tensor.
   */
  registerBuffer(name, tensor, options) {
    const who = 'registerBuffer';
    fieldName(this, name, who);
    if (tensor !== null && !(tensor instanceof Tensor)) throw invalid(`${who}: tensor must be a Tensor or null, got ${describe(tensor)}`);
    const { persistent = true } = optionsArg(options, who, ['persistent']);
    if (typeof persistent !== 'boolean') throw invalid(`${who}: persistent must be a boolean, got ${describe(persistent)}`);
    this.#buffers.set(name, persistent);
    this[name] = tensor;
    return tensor;
  }

  /** Sets field `name` to module (or null), PyTorch's add_module / register_module. Returns the module. */
  addModule(name, module) {
    fieldName(this, name, 'addModule');
    if (module !== null && !(module instanceof Module)) throw invalid(`addModule: module must be an om.nn.Module or null, got ${describe(module)}`);
    this[name] = module;
    return module;
  }

  /**
   * Every Tensor under this module as [path, tensor, isBuffer, persistent], depth first in
   * PyTorch's order: the module's own parameters, then its own buffers, each in field order, then
   * its other fields (submodules, arrays) in field order. A module reached again through a cycle
   * is skipped; one shared by two fields appears under both paths (as in PyTorch's state dict).
   */
  #walk(prefix, out, path) {
    path.add(this);
    const rank = ([key, value]) => (value instanceof Tensor ? (this.#buffers.has(key) ? 1 : 0) : 2);
    for (const [key, value] of Object.entries(this).sort((a, b) => rank(a) - rank(b))) { // a stable sort
      const buffer = this.#buffers.get(key);
      visit(value, prefix + key, buffer !== undefined, buffer !== false, out, path);
    }
    path.delete(this);
    return out;
  }

  static {
    walkModule = (m, prefix, out, path) => m.#walk(prefix, out, path);
    persistence = (m, key) => m.#buffers.get(key);
  }

  /** [path, Tensor] for every parameter, in field order; a tensor reachable twice is listed once. */
  namedParameters() {
    return unique(this.#walk('', [], new Set()).filter((e) => !e[2]));
  }

  /** The parameters (each once). */
  parameters() {
    return this.namedParameters().map((e) => e[1]);
  }

  /** [path, Tensor] for every buffer, in field order (each once). */
  namedBuffers() {
    return unique(this.#walk('', [], new Set()).filter((e) => e[2]));
  }

  /** The buffers (each once). */
  buffers() {
    return this.namedBuffers().map((e) => e[1]);
  }

  /**
   * A plain object path -> Tensor of every parameter and persistent buffer in field order (tied
   * tensors under each path).
   */
  stateDict() {
    const dict = {};
    for (const [path, t, , persistent] of this.#walk('', [], new Set())) if (persistent) dict[path] = t;
    return dict;
  }

  /**
   * Copies state[path] into each parameter and buffer in place (PyTorch's load_state_dict).
   * Values are Tensors, nested arrays or typed arrays (a flat typed array of the right length
   * takes the parameter's shape), or scalars for 0-d ones (num_batches_tracked). Every key, shape and dtype is checked before anything is
   * written, so a failure changes nothing. With strict (the default), missing and unexpected
   * keys are an error; without, they are skipped. Returns { missingKeys, unexpectedKeys }.
   */
  loadStateDict(state, options = {}) {
    return loadState(this, state, options);
  }

  /** [path, Module] for this module ('') and every submodule (each once), depth first. */
  namedModules() {
    const out = [];
    const seen = new Set();
    const go = (m, prefix) => {
      if (seen.has(m)) return;
      seen.add(m);
      out.push([prefix, m]);
      for (const [name, c] of m.namedChildren()) go(c, prefix ? `${prefix}.${name}` : name);
    };
    go(this, '');
    return out;
  }

  /** This module and every submodule (each once), depth first. */
  modules() {
    return this.namedModules().map((e) => e[1]);
  }

  /**
   * [name, Module] for each direct submodule: Module fields, and modules in array fields as
   * `name.i`; a module under two names is listed once, by its first (PyTorch's named_children).
   */
  namedChildren() {
    const out = [];
    for (const [k, v] of Object.entries(this)) {
      if (v instanceof Module) out.push([k, v]);
      else if (Array.isArray(v)) flatModules(v, k, out);
    }
    const seen = new Set();
    return out.filter(([, m]) => !seen.has(m) && seen.add(m));
  }

  /** The direct submodules. */
  children() {
    return this.namedChildren().map((e) => e[1]);
  }

  /**
   * Calls fn(module) on each child's tree, then on this: PyTorch's apply, so a module that two
   * parents hold is visited under each (its children() lists it once per parent), and
   * initialisations that draw random numbers draw as many. A module that holds one of its own
   * ancestors (a cycle, which PyTorch recurses into forever) is not entered again. Returns this.
   */
  apply(fn) {
    if (typeof fn !== 'function') throw invalid(`apply: fn must be a function, got ${describe(fn)}`);
    const path = new Set(); // the modules being visited, this one's ancestors
    const go = (m) => {
      if (path.has(m)) return;
      path.add(m);
      for (const [, c] of m.namedChildren()) go(c);
      path.delete(m);
      fn(m);
    };
    go(this);
    return this;
  }

  /** Training mode on (or off with false) for this module and every submodule. Returns this. */
  train(mode = true) {
    if (typeof mode !== 'boolean') throw invalid(`train: mode must be a boolean, got ${describe(mode)}`);
    for (const [, m] of this.namedModules()) m.training = mode;
    return this;
  }

  /** Evaluation mode: train(false). Returns this. */
  eval() {
    return this.train(false);
  }

  /** Drops every parameter's gradient. */
  zeroGrad() {
    for (const p of this.parameters()) p.zeroGrad();
  }

  /**
   * Disposes every parameter and buffer, and the tensors the modules hold in their other fields
   * (arrays, plain objects, Maps, Sets: state a forward stored, such as a cache per size, which
   * forward's scope keeps as the module's). Idempotent.
   */
  dispose() {
    const state = new Set();
    for (const [, m] of this.namedModules()) {
      const seen = new Set();
      for (const v of Object.values(m)) if (!(v instanceof Tensor)) held(v, state, seen);
    }
    for (const [, t] of this.#walk('', [], new Set())) t.dispose();
    for (const t of state) t.dispose();
  }
}

/**
 * module.forward(...args) in a scope: when it returns, the tensors made during the call are
 * disposed except those it hands on, found in its result and in the module's own fields (through
 * arrays, plain objects, Maps, Sets and other class instances, but not inside other Modules, whose
 * own forward calls keep what they store) and those om.keep() took. Kept tensors of the result go
 * to the caller's scope, or, at the top level, to user code (dispose() or the collector frees
 * them). A tensor the call stored in the module's fields is the module's state (a buffer a forward
 * registers, as Hugging Face's rotary caches grow: `self.register_buffer('cos_cached', ...)`), so
 * it leaves every scope, as om.keep(), and the collector frees it once the module drops it.
 * Autograd's records hold their own references, so a saved value outlives its JS Tensor. An async
 * forward (its result a Promise) keeps all it made before its first await.
 */
function forwardScope(module, forward, args) {
  return inScope(() => forward.apply(module, args), (result, made) => {
    if (made.length === 1 && made[0] === result) return result; // the common case: only the result
    if (typeof result?.then === 'function') return new Set(made); // async: code after an await may use them
    const kept = new Set(), stored = new Set(), seen = new Set();
    held(result, kept, new Set());
    for (const v of Object.values(module)) held(v, stored, seen);
    for (const t of stored) {
      if (made.includes(t)) keep(t);
      kept.add(t);
    }
    return kept;
  });
}

/** Adds the tensors reachable from x to out (see forwardScope for where it looks). */
function held(x, out, seen) {
  if (x instanceof Tensor) {
    out.add(x);
    return;
  }
  if (x === null || typeof x !== 'object' || x instanceof Module || ArrayBuffer.isView(x) || seen.has(x)) return;
  seen.add(x);
  const values = x instanceof Map ? x.values() : Array.isArray(x) || x instanceof Set ? x : Object.values(x);
  for (const v of values) held(v, out, seen);
}

function shapeStr(shape) {
  return `[${shape.join(', ')}]`;
}

/**
 * The unexpected keys of state, by PyTorch's rule (Module._load_from_state_dict): each module on
 * the load's walk (its children in field order, a tied one under each name, an array field as
 * PyTorch's ModuleList) reports the keys under its prefix whose next part names none of its
 * children and none of its parameters or persistent buffers, in the state dict's order. So a key
 * below a parameter ('fc.weight.x') or naming a child ('blocks') is not reported, as in PyTorch,
 * while a non-persistent buffer's or a bias-free layer's 'bias' is.
 */
function unexpected(module, keys) {
  const out = [];
  const go = (node, prefix, ancestors) => {
    const local = new Set(), children = [];
    const fields = Array.isArray(node) ? node.map((v, i) => [String(i), v]) : Object.entries(node);
    for (const [k, v] of fields) {
      if (v instanceof Tensor) {
        if (Array.isArray(node) || persistence(node, k) !== false) local.add(k);
      } else if ((v instanceof Module && !ancestors.has(v)) || Array.isArray(v)) {
        children.push([k, v]);
      }
    }
    const childNames = new Set(children.map((c) => c[0]));
    for (const key of keys) {
      if (!key.startsWith(prefix)) continue;
      const name = key.slice(prefix.length).split('.')[0];
      if (!local.has(name) && !childNames.has(name)) out.push(key);
    }
    ancestors.add(node);
    for (const [k, v] of children) go(v, `${prefix}${k}.`, ancestors);
    ancestors.delete(node);
  };
  go(module, '', new Set());
  return out;
}

const quoted = (keys) => keys.map((k) => `"${k}"`).join(', ');

function loadState(module, state, options) {
  const who = 'loadStateDict';
  if (state === null || typeof state !== 'object' || Array.isArray(state) || state instanceof Tensor) {
    throw invalid(`${who}: state must be an object of path -> Tensor or array, got ${describe(state)}`);
  }
  const { strict = true } = optionsArg(options, who, ['strict']);
  if (typeof strict !== 'boolean') throw invalid(`${who}: strict must be a boolean, got ${describe(strict)}`);
  const own = module.stateDict();
  const missingKeys = Object.keys(own).filter((k) => !Object.hasOwn(state, k));
  const unexpectedKeys = unexpected(module, Object.keys(state).filter((k) => !Object.hasOwn(own, k)));
  // PyTorch's report: every missing and unexpected key (when strict) and every size mismatch, in one error
  const errors = [];
  if (strict && missingKeys.length) errors.push(`Missing key(s) in state_dict: ${quoted(missingKeys)}. `);
  if (strict && unexpectedKeys.length) errors.push(`Unexpected key(s) in state_dict: ${quoted(unexpectedKeys)}. `);
  const sizeErrors = errors.length;
  const temps = [];
  try {
    const pairs = [];
    for (const key of Object.keys(own).filter((k) => Object.hasOwn(state, k))) {
      const dst = own[key];
      let src = state[key];
      const mismatch = (what) => errors.push(`size mismatch for ${key}: copying a param with ${what} from checkpoint, the shape in current model is ${shapeStr(dst.shape)}.`);
      if (!(src instanceof Tensor)) {
        const scalar = typeof src === 'number' || typeof src === 'bigint' || typeof src === 'boolean'; // a 0-d value (PyTorch's tolist())
        if (!scalar && !Array.isArray(src) && !(ArrayBuffer.isView(src) && !(src instanceof DataView))) {
          throw invalid(`${who}: ${key} must be a Tensor, an array, a typed array or (0-d) a scalar, got ${describe(src)}`);
        }
        const flat = ArrayBuffer.isView(src);
        if (flat && src.length !== dst.numel()) {
          mismatch(`${src.length} values`);
          continue;
        }
        try {
          src = tensor(src, flat ? { dtype: dst.dtype, shape: dst.shape } : { dtype: dst.dtype });
        } catch (e) {
          throw e instanceof OmError ? new OmError(e.kind, `${who}: ${key}: ${e.message}`) : e;
        }
        temps.push(src);
      } else if (src.dtype !== dst.dtype) {
        // PyTorch's copy_ converts; float64 <-> float32 rounds as it does, other pairs are refused
        // (an int64 or bool tensor where the model holds floats is more likely a wrong key)
        if (!FLOATING.has(src.dtype) || !FLOATING.has(dst.dtype)) {
          throw new OmError('DtypeMismatch', `${who}: ${key} is ${src.dtype} in the state dict but ${dst.dtype} in the model`);
        }
        src = src.to(dst.dtype);
        temps.push(src);
      }
      if (src.shape.length !== dst.shape.length || src.shape.some((d, i) => d !== dst.shape[i])) {
        mismatch(`shape ${shapeStr(src.shape)}`);
        continue;
      }
      pairs.push([dst, src]);
    }
    if (errors.length) {
      const kind = errors.length > sizeErrors ? 'ShapeMismatch' : 'InvalidArgument';
      const e = new OmError(kind, `${who}: Error(s) in loading state_dict for ${module.constructor.name}:\n\t${errors.join('\n\t')}`);
      Object.assign(e, { missingKeys, unexpectedKeys }); // PyTorch's report, also on the error
      throw e;
    }
    noGrad(() => { for (const [dst, src] of pairs) dst.copy_(src); });
  } finally {
    for (const t of temps) t.dispose();
  }
  return { missingKeys: strict ? [] : missingKeys, unexpectedKeys: strict ? [] : unexpectedKeys };
}

function visit(value, path, isBuffer, persistent, out, ancestors) {
  if (value instanceof Tensor) {
    out.push([path, value, isBuffer, persistent]);
  } else if (value instanceof Module) {
    if (!ancestors.has(value)) walkModule(value, `${path}.`, out, ancestors);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => visit(v, `${path}.${i}`, isBuffer, persistent, out, ancestors));
  }
}

/** The modules in a (nested) array field as [`prefix.i`, Module], as the state dict names them. */
function flatModules(list, prefix, out) {
  list.forEach((v, i) => {
    if (v instanceof Module) out.push([`${prefix}.${i}`, v]);
    else if (Array.isArray(v)) flatModules(v, `${prefix}.${i}`, out);
  });
}

/** Checks a field name given to registerBuffer / addModule: a non-empty string without '.', not a method or accessor. */
export function fieldName(module, name, who) {
  if (typeof name !== 'string' || name === '' || name.includes('.')) {
    throw invalid(`${who}: name must be a non-empty string without '.', got ${describe(name)}`);
  }
  const cur = module[name]; // a field holding a Tensor, a Module or null may be set again
  if (name in module && !(Object.hasOwn(module, name) && (cur === null || cur instanceof Tensor || cur instanceof Module))) {
    throw invalid(`${who}: '${name}' is already a member of ${module.constructor.name}`);
  }
}

function unique(entries) {
  const seen = new Set();
  return entries.filter(([, t]) => !seen.has(t) && seen.add(t)).map(([p, t]) => [p, t]);
}

/**
 * y = x W^T + b, as PyTorch's nn.Linear: weight [outFeatures, inFeatures] and bias [outFeatures],
 * both uniform in ±1/sqrt(inFeatures) from the default generator (om.manualSeed).
 */
export class Linear extends Module {
  constructor(inFeatures, outFeatures, options = {}) {
    super();
    const who = 'Linear';
    const nIn = toI32(inFeatures, who, 'inFeatures');
    const nOut = toI32(outFeatures, who, 'outFeatures');
    if (nIn < 1 || nOut < 1) throw invalid(`${who}: inFeatures and outFeatures must be positive, got ${nIn} and ${nOut}`);
    const { bias = true } = optionsArg(options, who, ['bias']);
    if (typeof bias !== 'boolean') throw invalid(`${who}: bias must be a boolean, got ${describe(bias)}`);
    this.inFeatures = nIn;
    this.outFeatures = nOut;
    const bound = 1 / Math.sqrt(nIn);
    const uniform = (shape) => {
      const t = tidy(() => rand(shape).mul(2 * bound).sub(bound));
      t.requiresGrad = true;
      return t;
    };
    /** [outFeatures, inFeatures]. */
    this.weight = uniform([nOut, nIn]);
    /** [outFeatures], or null without bias. */
    this.bias = bias ? uniform([nOut]) : null;
  }

  /** x [..., inFeatures] -> [..., outFeatures]; traces to one Gemm on the weight as stored. */
  forward(x) {
    return linear(x, this.weight, this.bias);
  }
}
