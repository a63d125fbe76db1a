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

/** The integer index i of a container of n items, checked (negative counts from the end, as PyTorch's). */
function position(c, i, n, who, end = false) {
  if (!Number.isInteger(i)) throw invalid(`${who}: index must be an integer, got ${describe(i)}`);
  const k = i < 0 ? i + n : i;
  if (k < 0 || k > n || (k === n && !end)) {
    throw invalid(`${who}: index ${i} is out of range for ${n} ${c.constructor.itemKind === Tensor ? 'parameters' : 'modules'}`);
  }
  return k;
}

/**
 * Python's slice(start, stop, step).indices(n) as the list of positions it picks: a missing
 * (undefined or null) bound is the whole side, negative bounds count from the end, out-of-range
 * bounds clamp, a negative step walks backwards.
 */
function slicePositions(n, start, stop, step, who) {
  const bound = (v, name) => {
    if (v !== undefined && v !== null && !Number.isInteger(v)) throw invalid(`${who}: ${name} must be an integer or omitted, got ${describe(v)}`);
    return v ?? undefined;
  };
  const by = bound(step, 'step') ?? 1;
  if (by === 0) throw invalid(`${who}: slice step cannot be zero`);
  const clamp = (v, dflt) => {
    if (v === undefined) return dflt;
    const k = v < 0 ? v + n : v;
    return by > 0 ? Math.min(Math.max(k, 0), n) : Math.min(Math.max(k, -1), n - 1);
  };
  const from = clamp(bound(start, 'start'), by > 0 ? 0 : n - 1), to = clamp(bound(stop, 'stop'), by > 0 ? n : -1);
  const out = [];
  for (let k = from; by > 0 ? k < to : k > to; k += by) out.push(k);
  return out;
}

/**
 * Replaces the items of c by `list`, named '0', '1', ... in order: PyTorch renumbers a list (and a
 * Sequential, named or not) after a deletion or an insertion, so the state-dict keys after
 * `pop(1)` are '0.weight', '1.weight', ... as there. Fields that are not items are kept.
 */
function renumber(c, list) {
  for (const [k] of items(c)) delete c[k];
  list.forEach((v, i) => { c[String(i)] = v; });
}

/** Items in fields '0', '1', ...: length, at(i), slice, append, insert, pop, extend and iteration over the items. */
class Indexed extends Module {
  get length() { return items(this).length; }

  /** The item at index i (negative counts from the end), as PyTorch's container[i]. */
  at(i) {
    const all = items(this);
    return all[position(this, i, all.length, `${this.constructor.name}.at`)][1];
  }

  /**
   * Replaces the item at index i (negative counts from the end) under its name, PyTorch's
   * container[i] = item. (A field set as container[-1] = item would add an item named '-1'
   * instead: use set for a negative index.) Returns this.
   */
  set(i, item) {
    const who = `${this.constructor.name}.set`, all = items(this);
    const [name] = all[position(this, i, all.length, who)];
    setItem(this, name, item, who);
    return this;
  }

  /**
   * PyTorch's container[start:stop:step] (bounds as Python's: omitted, negative, clamped): a new
   * container of this class sharing the items (the same modules and parameters, not copies). A
   * Sequential's slice keeps the items' names (PyTorch's Sequential(OrderedDict(items[idx]))), a
   * ModuleList's and a ParameterList's are numbered from '0' again, as PyTorch's.
   */
  slice(start, stop, step) {
    const all = items(this), who = `${this.constructor.name}.slice`;
    const picked = slicePositions(all.length, start, stop, step, who).map((k) => all[k]);
    return this.constructor.fromItems(picked);
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

  /**
   * Inserts item before index i (0..length; negative counts from the end, -1 is before the last),
   * the later items moving up one name, as PyTorch's insert. Items named otherwise than '0', '1', ...
   * (a named Sequential) are refused: PyTorch's insert moves items by their numbered names and
   * fails there too. Returns this.
   */
  insert(i, item) {
    const who = `${this.constructor.name}.insert`, all = items(this);
    const k = position(this, i, all.length, who, true);
    const named = all.find(([name], j) => name !== String(j));
    if (named) throw invalid(`${who}: the items are named ('${named[0]}'), not numbered '0', '1', ...: insert moves items by their numbers (PyTorch's fails here too); build a new container instead`);
    const kind = this.constructor.itemKind;
    if (!(item instanceof kind)) throw invalid(`${who}: item must be ${kind === Tensor ? 'a Tensor' : 'an om.nn.Module'}, got ${describe(item)}`);
    setItem(this, String(all.length), item, who); // checked and made a parameter as any item
    const list = all.map((e) => e[1]);
    list.splice(k, 0, item);
    renumber(this, list);
    return this;
  }

  /**
   * Removes the item at index i (the last by default; negative counts from the end) and returns
   * it; the items are numbered '0', '1', ... again, as PyTorch's pop and del (a named Sequential's
   * names too). The container no longer holds it: the caller owns it.
   */
  pop(i = -1) {
    const all = items(this), k = position(this, i, all.length, `${this.constructor.name}.pop`);
    const [, item] = all[k];
    renumber(this, all.filter((_, j) => j !== k).map((e) => e[1]));
    return item;
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
    for (const [name, v] of new.target.namedEntries(entries, who)) setItem(this, name, v, who);
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
  /** [name, item] pairs, PyTorch's items() (the same as entries()). */
  items() { return items(this); }
  /** Removes every item (PyTorch's clear); the caller owns them. */
  clear() {
    for (const [k] of items(this)) delete this[k];
  }

  /**
   * Sets each [name, item] of an object, a Map, another container of this kind or an array of
   * pairs, overwriting items of the same name (PyTorch's update). All are checked first: a bad
   * entry sets none. Returns this.
   */
  update(entries) {
    const who = `${this.constructor.name}.update`;
    const pairs = entries instanceof this.constructor ? entries.entries() : this.constructor.namedEntries(entries, who);
    const kind = this.constructor.itemKind;
    for (const [name, v] of pairs) {
      fieldName(this, String(name), who);
      if (!(v instanceof kind)) throw invalid(`${who}: item ${name} must be ${kind === Tensor ? 'a Tensor' : 'an om.nn.Module'}, got ${describe(v)}`);
    }
    for (const [name, v] of pairs) setItem(this, String(name), v, who);
    return this;
  }

  /** The [name, item] pairs a constructor or update takes from entries (an object's in field order). */
  static namedEntries(entries, who) { return namedArg(entries, who); }

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

  /** A Sequential of [name, module] pairs, keeping the names (slice's, as PyTorch's). */
  static fromItems(pairs) { return new this(new Map(pairs)); }

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

  /** A list of the items of [name, item] pairs, numbered from '0' (slice's, as PyTorch's). */
  static fromItems(pairs) { return new this(pairs.map((e) => e[1])); }
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
 * are taken sorted and a Map's or pairs' in their order, so the state dict lists them as PyTorch's;
 * update(tensors) takes them the same way.
 */
export class ParameterDict extends Keyed {
  static itemKind = Tensor;

  constructor(tensors = {}) {
    super(tensors, 'ParameterDict');
  }

  static namedEntries(entries, who) {
    const plain = entries !== null && typeof entries === 'object' && !(entries instanceof Map) && !Array.isArray(entries)
      && !(entries instanceof Module) && !(entries instanceof Tensor);
    return namedArg(plain ? Object.entries(entries).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) : entries, who);
  }
}
