// The base of om.optim's optimizers: the parameter list, per-parameter state tensors, zeroGrad()
// and dispose(). Subclasses implement update(p, grad, state) for one parameter; step() runs it
// for every parameter that has a gradient, with recording off and every temporary freed.
import { OmError, invalid } from '../errors.js';
import { Tensor, noGrad, tidy, zeros } from '../tensor.js';
import { describe } from '../convert.js';
import { scopes } from '../runtime.js';

export class Optimizer {
  #state = new Map(); // parameter -> { name: Tensor | number }

  /** params: an array (or iterable) of leaf float32 Tensors, e.g. module.parameters(). */
  constructor(params, who) {
    if (params === null || typeof params !== 'object' || typeof params[Symbol.iterator] !== 'function' || params instanceof Tensor) {
      throw invalid(`${who}: params must be an array of Tensors (module.parameters()), got ${describe(params)}`);
    }
    const list = Array.from(params);
    if (list.length === 0) throw invalid(`${who}: got an empty parameter list`);
    list.forEach((p, i) => {
      if (!(p instanceof Tensor)) throw invalid(`${who}: params[${i}] must be a Tensor, got ${describe(p)}`);
      if (p.isDisposed) throw new OmError('Disposed', `${who}: params[${i}] was disposed`);
      if (p.dtype !== 'float32') throw new OmError('DtypeMismatch', `${who}: params[${i}] is ${p.dtype}; only float32 tensors can be optimized`);
      if (!p.isLeaf) throw invalid(`${who}: params[${i}] is not a leaf (the result of an op); optimize the tensors you made`);
    });
    if (new Set(list).size !== list.length) throw invalid(`${who}: a parameter appears more than once`);
    /** The parameters, in the order given. */
    this.params = list;
    this.who = who;
  }

  /** The state of parameter p (made on first use): an object of named Tensors and numbers. */
  state(p) {
    let s = this.#state.get(p);
    if (!s) this.#state.set(p, (s = {}));
    return s;
  }

  /** A zero state tensor shaped like p, owned by the optimizer: no om.tidy scope tracks it, so
   *  it lives until dispose() even when step() runs inside the caller's tidy. */
  zerosLike(p) {
    const open = scopes.splice(0);
    try {
      return zeros(p.shape);
    } finally {
      scopes.push(...open);
    }
  }

  /**
   * One update of every parameter with a gradient (parameters without one are skipped, as in
   * PyTorch). Runs under no-grad; temporaries are freed, state tensors are updated in place.
   */
  step() {
    if (this.params === null) throw new OmError('Disposed', `${this.who}.step: the optimizer was disposed`);
    noGrad(() => tidy(() => {
      for (const p of this.params) {
        const g = p.grad;
        if (g !== null) this.update(p, g, this.state(p));
      }
    }));
  }

  /** Drops every parameter's gradient (PyTorch's zero_grad(set_to_none=True)). */
  zeroGrad() {
    if (this.params === null) throw new OmError('Disposed', `${this.who}.zeroGrad: the optimizer was disposed`);
    for (const p of this.params) p.zeroGrad();
  }

  /** Frees the state tensors (not the parameters). Idempotent. */
  dispose() {
    for (const s of this.#state.values()) for (const v of Object.values(s)) if (v instanceof Tensor) v.dispose();
    this.#state.clear();
    this.params = null;
  }
}

/** A number option in [lo, hi) (hi exclusive when open), with the optimizer's name in errors. */
export function numberOption(value, who, what, lo = 0, hi = Infinity, open = false) {
  if (typeof value !== 'number' || Number.isNaN(value) || value < lo || (open ? value >= hi : value > hi)) {
    throw invalid(`${who}: ${what} must be a number in [${lo}, ${hi}${open ? ')' : ']'}, got ${describe(value)}`);
  }
  return value;
}

