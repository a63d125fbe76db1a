// Containers in PyTorch's shape: nn.Sequential chains modules, nn.ModuleList and nn.ModuleDict
// hold them, nn.ParameterList and nn.ParameterDict hold parameters. Each keeps its items in its
// own fields, named '0', '1', ... or by the names given, so parameters are named as PyTorch names
// them ('0.weight', 'layers.1.bias', 'features.conv0.weight') and a PyTorch state dict loads as it is.
//
//   const net = new om.nn.Sequential(new om.nn.Linear(2, 16), new om.nn.Linear(16, 3));
//   net.stateDict();                        // { '0.weight', '0.bias', '1.weight', '1.bias' }
//   const y = net.forward(x);               // intermediate results are freed (every forward's scope)
//   new om.nn.Sequential({ conv0: ..., norm0: ... });   // nn.Sequential(OrderedDict(...)): 'conv0.weight'
import { invalid } from '../errors.js';
import { Tensor } from '../tensor.js';
import { describe } from '../convert.js';
import { Module, fieldName } from './module.js';

/**
 * A container's items: its fields holding a Module (a Tensor for the parameter containers), in
 * field order (a JS object's: names that are integers first, in increasing order, then the others
 * as they were added).
 */
function items(c) {
  const kind = c.constructor.itemKind;
  return Object.entries(c).filter(([, v]) => v instanceof kind);
}

/** Sets item `name` of container c: a module, or a tensor made a parameter (requiresGrad, as nn.Parameter). */
function setItem(c, name, value, who) {
  fieldName(c, name, who);
  const kind = c.constructor.itemKind;
  if (!(value instanceof kind)) {
    throw invalid(`${who}: item ${name} must be ${kind === Tensor ? 'a Tensor' : 'an om.nn.Module'}, got ${describe(value)}`);
  }
  if (kind === Tensor && value.dtype === 'float32' && value.isLeaf && !value.requiresGrad) value.requiresGrad = true;
  c[name] = value;
}

/** Whether a JS object lists name k before the others: an array index ('0', '1', ... below 2^32 - 1). */
const isIndex = (k) => /^(0|[1-9]\d*)$/.test(k) && Number(k) < 2 ** 32 - 1;

/**
 * [name, value] pairs from an object, a Map or an array of pairs. A container keeps its items in
 * its own fields, which a JS object lists integer names first (in increasing order), then the
 * others as added: pairs given in another order (an OrderedDict's [['fc', a], ['0', b]]) would run
 * and save in that order instead of PyTorch's, so they are refused, naming the first name moved.
 */
function namedArg(x, who) {
  if (x instanceof Map || Array.isArray(x)) {
    const pairs = [...x];
    pairs.forEach((p, i) => {
      if (!Array.isArray(p) || p.length !== 2) throw invalid(`${who}: entry ${i} must be a [name, value] pair, got ${describe(p)}`);
    });
    const names = pairs.map((p) => String(p[0]));
    const listed = [...names.filter(isIndex).sort((a, b) => a - b), ...names.filter((k) => !isIndex(k))];
    const moved = names.findIndex((k, i) => k !== listed[i]);
    if (moved >= 0 && new Set(names).size === names.length) {
      throw invalid(`${who}: name '${listed[moved]}' would come before '${names[moved]}': its fields list integer names first, in increasing order, `
        + 'so the modules would not keep the order given (PyTorch\'s); rename them or give the integer names first, in increasing order');
    }
    return pairs;
  }
  if (x === null || typeof x !== 'object' || x instanceof Module || x instanceof Tensor) {
    throw invalid(`${who}: expected an object, a Map or an array of [name, value] pairs, got ${describe(x)}`);
  }
  return Object.entries(x);
}

/** Items in fields '0', '1', ...: length, at(i), append and iteration over the items. */
class Indexed extends Module {
  get length() { return items(this).length; }

  /** The item at index i (negative counts from the end), as PyTorch's container[i]. */
  at(i) {
    const who = `${this.constructor.name}.at`;
    if (!Number.isInteger(i)) throw invalid(`${who}: index must be an integer, got ${describe(i)}`);
    const all = items(this);
    const k = i < 0 ? i + all.length : i;
    if (k < 0 || k >= all.length) {
      throw invalid(`${who}: index ${i} is out of range for ${all.length} ${this.constructor.itemKind === Tensor ? 'parameters' : 'modules'}`);
    }
    return all[k][1];
  }

  /** Adds an item at the end, named by the count before it (PyTorch's str(len(self))). Returns this. */
  append(item) {
    const who = `${this.constructor.name}.append`, all = items(this), name = String(all.length);
    // PyTorch names it len(self) and runs it last; a JS object lists an integer name before the
    // other names (a named Sequential's 'conv0'), where it would run first: refused
    const after = all.find(([k]) => !isIndex(k) || Number(k) > all.length);
    if (after) throw invalid(`${who}: its name '${name}' would be listed before '${after[0]}' (integer names come first in a JS object), so it would not run last; use addModule(name, module) with a name that is not an integer`);
    setItem(this, name, item, who);
    return this;
  }

  /** Appends each item of an iterable in order (PyTorch's extend). Checked first: a bad item adds none. Returns this. */
  extend(list) {
    const who = `${this.constructor.name}.extend`, kind = this.constructor.itemKind;
    if (list === null || typeof list !== 'object' || typeof list[Symbol.iterator] !== 'function' || list instanceof Tensor) {
      throw invalid(`${who}: should be called with an iterable, but got ${describe(list)}`);
    }
    const all = [...list];
    all.forEach((v, i) => {
      if (!(v instanceof kind)) throw invalid(`${who}: item ${i} must be ${kind === Tensor ? 'a Tensor' : 'an om.nn.Module'}, got ${describe(v)}`);
    });
    for (const v of all) this.append(v);
    return this;
  }

  *[Symbol.iterator]() {
    for (const [, v] of items(this)) yield v;
  }
}

/** Items by name: get, set, has, pop, keys, values, entries, length; iteration gives the names. */
class Keyed extends Module {
  constructor(entries, who) {
    super();
    for (const [name, v] of namedArg(entries, who)) setItem(this, name, v, who);
  }

  get length() { return items(this).length; }
  /** The item named key, or undefined. */
  get(key) { return items(this).find(([k]) => k === key)?.[1]; }
  /** Sets item key (PyTorch's dict[key] = value). Returns this. */
  set(key, value) { setItem(this, key, value, `${this.constructor.name}.set`); return this; }
  has(key) { return items(this).some(([k]) => k === key); }
  /** Removes item key and returns it (undefined when there is none). */
  pop(key) {
    const v = this.get(key);
    if (v !== undefined) delete this[key];
    return v;
  }
  keys() { return items(this).map((e) => e[0]); }
  values() { return items(this).map((e) => e[1]); }
  entries() { return items(this); }
  [Symbol.iterator]() { return this.keys()[Symbol.iterator](); }
}

/**
 * nn.Sequential(...modules), or nn.Sequential(named) with an object or a Map of name -> module
 * (PyTorch's nn.Sequential(OrderedDict(...)): the names are the state-dict keys' parts).
 * forward(x) runs each module on the previous one's result.
 */
export class Sequential extends Indexed {
  static itemKind = Module;

  constructor(...modules) {
    super();
    const named = modules.length === 1 && !(modules[0] instanceof Module);
    const entries = named ? namedArg(modules[0], 'Sequential') : modules.map((m, i) => [String(i), m]);
    for (const [name, m] of entries) setItem(this, name, m, 'Sequential');
  }

  /** x through every module in order; the intermediate results are freed, the last is returned. */
  forward(x) {
    let h = x;
    for (const m of this) h = m.forward(h);
    return h;
  }
}

/** The constructor ModuleList and ParameterList share: an array of items, named '0', '1', ... */
class List extends Indexed {
  constructor(list, who, arg, kind) {
    super();
    if (!Array.isArray(list)) throw invalid(`${who}: ${arg} must be an array of ${kind}, got ${describe(list)}`);
    list.forEach((v, i) => setItem(this, String(i), v, who));
  }
}

/** nn.ModuleList(modules): an indexable list of modules (no forward of its own). */
export class ModuleList extends List {
  static itemKind = Module;

  constructor(modules = []) {
    super(modules, 'ModuleList', 'modules', 'modules');
  }
}

/** nn.ModuleDict(modules): modules by name (an object, a Map or [name, module] pairs). */
export class ModuleDict extends Keyed {
  static itemKind = Module;

  constructor(modules = {}) {
    super(modules, 'ModuleDict');
  }
}

/** nn.ParameterList(tensors): parameters '0', '1', ... (a float32 leaf gets requiresGrad, as nn.Parameter). */
export class ParameterList extends List {
  static itemKind = Tensor;

  constructor(tensors = []) {
    super(tensors, 'ParameterList', 'tensors', 'Tensors');
  }
}

/**
 * nn.ParameterDict(tensors): parameters by name (an object, a Map or [name, tensor] pairs). As
 * PyTorch's, which sorts a plain dict's names (an OrderedDict keeps its order), an object's names
 * are taken sorted and a Map's or pairs' in their order, so the state dict lists them as PyTorch's.
 */
export class ParameterDict extends Keyed {
  static itemKind = Tensor;

  constructor(tensors = {}) {
    const plain = tensors !== null && typeof tensors === 'object' && !(tensors instanceof Map) && !Array.isArray(tensors)
      && !(tensors instanceof Module) && !(tensors instanceof Tensor);
    super(plain ? Object.entries(tensors).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) : tensors, 'ParameterDict');
  }
}
