// Containers in PyTorch's shape: nn.Sequential chains modules, nn.ModuleList holds them. Both
// keep their modules in fields '0', '1', ..., so parameters are named as PyTorch names them
// ('0.weight', 'layers.1.bias') and a PyTorch state dict loads as it is.
//
//   const net = new om.nn.Sequential(new om.nn.Linear(2, 16), new om.nn.Linear(16, 3));
//   net.stateDict();                        // { '0.weight', '0.bias', '1.weight', '1.bias' }
//   const y = net.forward(x);               // intermediate results are freed (om.tidy)
import { invalid } from '../errors.js';
import { tidy } from '../tensor.js';
import { describe } from '../convert.js';
import { Module } from './module.js';

function checkModule(m, who, i) {
  if (!(m instanceof Module)) throw invalid(`${who}: item ${i} must be an om.nn.Module, got ${describe(m)}`);
  return m;
}

/** Modules in fields '0', '1', ...; length, at(i) and iteration, shared by both containers. */
class Indexed extends Module {
  #n = 0;

  get length() { return this.#n; }

  /** The module at index i (negative counts from the end), as PyTorch's container[i]. */
  at(i) {
    const who = `${this.constructor.name}.at`;
    if (!Number.isInteger(i)) throw invalid(`${who}: index must be an integer, got ${describe(i)}`);
    const k = i < 0 ? i + this.#n : i;
    if (k < 0 || k >= this.#n) throw invalid(`${who}: index ${i} is out of range for ${this.#n} modules`);
    return this[k];
  }

  /** Adds a module at the end (named by its index). Returns this. */
  append(module) {
    this[this.#n] = checkModule(module, `${this.constructor.name}.append`, this.#n);
    this.#n++;
    return this;
  }

  *[Symbol.iterator]() {
    for (let i = 0; i < this.#n; i++) yield this[i];
  }
}

/**
 * nn.Sequential(...modules): forward(x) runs each module on the previous one's result. A
 * module that takes functions is fine too: wrap it in a Module with a forward.
 */
export class Sequential extends Indexed {
  constructor(...modules) {
    super();
    modules.forEach((m, i) => checkModule(m, 'Sequential', i));
    for (const m of modules) this.append(m);
  }

  /** x through every module in order; the intermediate results are freed, the last is returned. */
  forward(x) {
    return tidy(() => {
      let h = x;
      for (const m of this) h = m.forward(h);
      return h;
    });
  }
}

/** nn.ModuleList(modules): an indexable list of modules (no forward of its own). */
export class ModuleList extends Indexed {
  constructor(modules = []) {
    super();
    if (!Array.isArray(modules)) throw invalid(`ModuleList: modules must be an array of modules, got ${describe(modules)}`);
    modules.forEach((m, i) => checkModule(m, 'ModuleList', i));
    for (const m of modules) this.append(m);
  }
}
