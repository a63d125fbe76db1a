// The base of om.optim's optimizers: parameter groups (PyTorch's param_groups: each a list of
// parameters with its own copy of every option, so a scheduler or the user can change one group's
// lr), per-parameter state tensors, zeroGrad(), stateDict()/loadStateDict() and dispose().
// Subclasses declare their options (defaults and a check of one value) and implement
// update(p, grad, state, group) for one parameter; step() runs it for every parameter that has a
// gradient, with recording off and every temporary freed.
import { OmError, invalid } from '../errors.js';
import { Tensor, noGrad, tidy, zeros } from '../tensor.js';
import { describe } from '../convert.js';
import { scopes } from '../runtime.js';

const isPlain = (v) => v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype;

/** PyTorch's snake_case name in this package's camelCase (exp_avg_sq -> expAvgSq, initial_lr -> initialLr). */
const camel = (k) => k.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
/** This package's camelCase name in PyTorch's snake_case (expAvgSq -> exp_avg_sq). */
const snake = (k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** An options argument: undefined or a plain object. */
function optionsOf(options, who) {
  if (options === undefined) return {};
  if (!isPlain(options)) throw invalid(`${who}: options must be an object, got ${describe(options)}`);
  return options;
}

// Keys of PyTorch's param_groups that pick an implementation of the same update (for-each and
// fused kernels, CUDA graphs, autograd through step()), not its numbers: nothing here to load.
const IMPLEMENTATION = new Set(['foreach', 'fused', 'capturable', 'differentiable']);
// Keys the schedulers keep in a group (PyTorch's too, as initial_lr, max_lr, ...): loaded as they are.
const SCHEDULED = new Set(['initialLr', 'maxLr', 'minLr', 'maxMomentum', 'baseMomentum']);

export class Optimizer {
  #state = new Map(); // parameter -> { name: Tensor | number }
  #options;

  /**
   * params: an iterable of leaf float32 Tensors (module.parameters()), or an array of groups
   * `{ params, ...options }` whose options override `options` for their parameters.
   * spec: { name: [default, check(value, who, what) -> value] } for each option the subclass has;
   * stateNames: the names update() keeps in a parameter's state (null: any, unchecked).
   */
  constructor(params, options, who, spec, stateNames = null) {
    this.who = who;
    this.#options = spec;
    /** The names of a parameter's state entries (a loaded state dict may have no others). */
    this.stateNames = stateNames;
    if (params === null || typeof params !== 'object' || typeof params[Symbol.iterator] !== 'function' || params instanceof Tensor) {
      throw invalid(`${who}: params must be an array of Tensors (module.parameters()) or of parameter groups, got ${describe(params)}`);
    }
    const list = Array.from(params);
    if (list.length === 0) throw invalid(`${who}: got an empty parameter list`);
    const grouped = isPlain(list[0]);
    const prefix = (i) => (grouped ? `group ${i} ` : '');
    // the tensors first (their errors are the likelier ones), each group's read once (it may be a generator)
    const groups = (grouped ? list : [{ params: list }]).map((g, i) => {
      if (!isPlain(g)) throw invalid(`${who}: params[${i}] must be a parameter group { params, ...options } like params[0], got ${describe(g)}`);
      return { ...g, params: this.#paramList(g.params, prefix(i)) };
    });
    const names = Object.keys(spec);
    if (options !== undefined && options !== null && !isPlain(options)) throw invalid(`${who}: options must be an object, got ${describe(options)}`);
    for (const k of Object.keys(options ?? {})) {
      if (!names.includes(k)) throw invalid(`${who}: unknown option '${k}' (expected ${names.join(', ')})`);
    }
    /** The options of a group that gives none of its own (PyTorch's defaults), checked. */
    this.defaults = this.#checked({ ...Object.fromEntries(names.map((k) => [k, spec[k][0]])), ...options }, who);
    /** The parameter groups: { params, ...every option }; change a group's lr (or another option) between steps. */
    this.paramGroups = [];
    groups.forEach((g, i) => this.#add(g, prefix(i)));
  }

  /** The options of one group checked (subclasses' rules), with the optimizer's name in errors. */
  #checked(group, who) {
    const out = { ...group };
    for (const [k, [, check]] of Object.entries(this.#options)) out[k] = check(group[k], who, k);
    this.checkGroup?.(out, who);
    return out;
  }

  /** PyTorch's add_param_group: a group { params, ...options }, the defaults filling the options it omits. */
  addParamGroup(group) {
    this.#live('addParamGroup');
    if (!isPlain(group)) throw invalid(`${this.who}.addParamGroup: a group must be an object { params, ...options }, got ${describe(group)}`);
    this.#add(group, `group ${this.paramGroups.length} `);
  }

  /** The tensors of a group's params (a Tensor or an iterable of them), checked. */
  #paramList(params, prefix) {
    const who = this.who;
    let list;
    if (params instanceof Tensor) list = [params];
    else if (params !== null && typeof params === 'object' && typeof params[Symbol.iterator] === 'function') list = Array.from(params);
    else throw invalid(`${who}: ${prefix}params must be a Tensor or an array of Tensors, got ${describe(params)}`);
    list.forEach((p, i) => {
      const where = `${prefix}params[${i}]`;
      if (!(p instanceof Tensor)) throw invalid(`${who}: ${where} must be a Tensor, got ${describe(p)}`);
      if (p.isDisposed) throw new OmError('Disposed', `${who}: ${where} was disposed`);
      if (p.dtype !== 'float32') throw new OmError('DtypeMismatch', `${who}: ${where} is ${p.dtype}; only float32 tensors can be optimized`);
      if (!p.isLeaf) throw invalid(`${who}: ${where} is not a leaf (the result of an op); optimize the tensors you made`);
    });
    return list;
  }

  #add(group, prefix) {
    const who = this.who;
    const { params, ...options } = group;
    const list = this.#paramList(params, prefix);
    const at = this.paramGroups.length;
    if (new Set(list).size !== list.length) throw invalid(`${who}: a parameter appears more than once`);
    const seen = new Set(this.paramGroups.flatMap((g) => g.params));
    if (list.some((p) => seen.has(p))) throw invalid(`${who}: some parameters appear in more than one parameter group`);
    const names = Object.keys(this.#options);
    for (const k of Object.keys(options)) {
      if (!names.includes(k)) throw invalid(`${who}: parameter group ${at}: unknown option '${k}' (expected params, ${names.join(', ')})`);
    }
    this.paramGroups.push({ params: list, ...this.#checked({ ...this.defaults, ...options }, who) });
  }

  /** Every parameter, group after group (null after dispose()). */
  get params() {
    return this.paramGroups === null ? null : this.paramGroups.flatMap((g) => g.params);
  }

  /** The first group's learning rate; setting it sets every group's (a schedule written by hand). */
  get lr() {
    return this.paramGroups === null ? undefined : this.paramGroups[0].lr;
  }

  set lr(value) {
    if (this.paramGroups === null) throw new OmError('Disposed', `${this.who}.lr: the optimizer was disposed`);
    const lr = this.#options.lr[1](value, this.who, 'lr');
    for (const g of this.paramGroups) g.lr = lr;
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
    return this.owned(() => zeros(p.shape));
  }

  /** The result of fn() made outside every om.tidy scope (a tensor the optimizer owns). */
  owned(fn) {
    const open = scopes.splice(0);
    try {
      return fn();
    } finally {
      scopes.push(...open);
    }
  }

  #live(what) {
    if (this.paramGroups === null) throw new OmError('Disposed', `${this.who}.${what}: the optimizer was disposed`);
  }

  /**
   * One update of every parameter with a gradient (parameters without one are skipped, as in
   * PyTorch), each with its group's options (checked again: a scheduler or the user may have
   * changed them). Runs under no-grad; temporaries are freed, state tensors are updated in place.
   * With a closure (PyTorch's step(closure): it zeroes the gradients, computes the loss, calls
   * backward and returns the loss), calls it first, with grad as the caller has it, and returns
   * what it returned; a closure ignored would leave the update on stale gradients.
   */
  step(closure) {
    this.#live('step');
    if (closure !== undefined && typeof closure !== 'function') {
      throw invalid(`${this.who}.step: closure must be a function, got ${describe(closure)}`);
    }
    const groups = this.paramGroups.map((g) => this.#checked(g, `${this.who}.step`));
    const loss = closure?.();
    noGrad(() => tidy(() => {
      for (const group of groups) {
        for (const p of group.params) {
          const g = p.grad;
          if (g !== null) this.update(p, g, this.state(p), group);
        }
      }
    }));
    return loss;
  }

  /**
   * PyTorch's zero_grad(set_to_none=True): drops every parameter's gradient; with
   * { setToNone: false } the gradients stay and are filled with zeros.
   */
  zeroGrad(options) {
    this.#live('zeroGrad');
    if (options !== undefined && !isPlain(options)) throw invalid(`${this.who}.zeroGrad: options must be an object, got ${describe(options)}`);
    const { setToNone = true, ...rest } = options ?? {};
    for (const k of Object.keys(rest)) throw invalid(`${this.who}.zeroGrad: unknown option '${k}' (expected setToNone)`);
    if (typeof setToNone !== 'boolean') throw invalid(`${this.who}.zeroGrad: setToNone must be a boolean, got ${describe(setToNone)}`);
    for (const p of this.params) {
      if (setToNone) p.zeroGrad();
      else p.grad?.zero_();
    }
  }

  /**
   * PyTorch's state_dict(): { state: { index: { name: Tensor | number } }, paramGroups: [{ ...options,
   * params: [index, ...] }] }, parameters numbered across the groups in order. The state tensors are
   * the optimizer's own (read or save them; loadStateDict copies, so do not dispose them).
   * { format: 'pytorch' } gives PyTorch's own shape and names instead ({ state, param_groups },
   * exp_avg_sq, weight_decay, ...: what torch.optim's load_state_dict takes).
   */
  stateDict(options) {
    this.#live('stateDict');
    const who = `${this.who}.stateDict`;
    const { format = 'onemodel', ...rest } = optionsOf(options, who);
    for (const k of Object.keys(rest)) throw invalid(`${who}: unknown option '${k}' (expected format)`);
    if (format !== 'onemodel' && format !== 'pytorch') throw invalid(`${who}: format must be 'onemodel' or 'pytorch', got ${describe(format)}`);
    const names = format === 'pytorch' ? snake : (k) => k;
    const state = {};
    let i = 0;
    const groups = this.paramGroups.map(({ params, ...options }) => ({
      ...Object.fromEntries(Object.entries(options).map(([k, v]) => [names(k), v])),
      params: params.map((p) => {
        const s = this.#state.get(p);
        if (s && Object.keys(s).length) state[i] = Object.fromEntries(Object.entries(s).map(([k, v]) => [names(k), v]));
        return i++;
      }),
    }));
    return format === 'pytorch' ? { state, param_groups: groups } : { state, paramGroups: groups };
  }

  /**
   * PyTorch's load_state_dict(): the groups' options and each parameter's state from a stateDict()
   * of an optimizer of the same kind over parameters of the same shapes (tensors copied, so the
   * source stays the caller's), or from PyTorch's own state_dict() shape ({ state, param_groups },
   * snake_case names, step a number or a 0-dim tensor; see #fromPyTorch). Checked before any
   * change: a mismatch changes nothing.
   */
  loadStateDict(sd) {
    const who = `${this.who}.loadStateDict`;
    this.#live('loadStateDict');
    if (isPlain(sd) && 'param_groups' in sd) sd = this.#fromPyTorch(sd, who);
    if (!isPlain(sd) || !isPlain(sd.state) || !Array.isArray(sd.paramGroups)) {
      throw invalid(`${who}: expected { state, paramGroups } (an optimizer's stateDict()) or PyTorch's { state, param_groups }, got ${describe(sd)}`);
    }
    if (sd.paramGroups.length !== this.paramGroups.length) {
      throw invalid(`${who}: loaded state dict has a different number of parameter groups (${sd.paramGroups.length}, the optimizer has ${this.paramGroups.length})`);
    }
    const byIndex = new Map();
    const groups = sd.paramGroups.map((g, gi) => {
      const mine = this.paramGroups[gi].params;
      if (!isPlain(g) || !Array.isArray(g.params) || g.params.length !== mine.length) {
        throw invalid(`${who}: loaded state dict contains a parameter group that doesn't match the size of optimizer's group (group ${gi}: ${Array.isArray(g?.params) ? g.params.length : describe(g?.params)} parameters, the optimizer's has ${mine.length})`);
      }
      for (const k of Object.keys(g)) this.#knownGroupKey(k, k, gi, who, (n) => n);
      g.params.forEach((idx, k) => byIndex.set(String(idx), mine[k]));
      const { params: _, ...options } = g;
      return this.#checked({ ...this.paramGroups[gi], ...options, params: mine }, who);
    });
    const states = [];
    for (const [idx, s] of Object.entries(sd.state)) {
      const p = byIndex.get(idx);
      if (!p) throw invalid(`${who}: state of parameter ${idx}, which no parameter group lists`);
      if (!isPlain(s)) throw invalid(`${who}: state of parameter ${idx} must be an object, got ${describe(s)}`);
      for (const [k, v] of Object.entries(s)) {
        // a name update() does not read would be dropped, and its state restarted from zero: refused
        if (this.stateNames && !this.stateNames.includes(k)) throw invalid(`${who}: state ${idx} has an entry '${k}' that ${this.who} does not keep (expected ${this.stateNames.join(', ')})`);
        if (k === 'step' && !(Number.isInteger(v) && v >= 0)) throw invalid(`${who}: state ${idx}.step must be a whole number >= 0, got ${describe(v)}`);
        if (v instanceof Tensor) {
          if (v.isDisposed) throw new OmError('Disposed', `${who}: state ${idx}.${k} was disposed`);
          if (v.shape.join() !== p.shape.join()) {
            throw new OmError('ShapeMismatch', `${who}: state ${idx}.${k} has shape [${v.shape.join(', ')}], the parameter [${p.shape.join(', ')}]`);
          }
        } else if (typeof v !== 'number') throw invalid(`${who}: state ${idx}.${k} must be a Tensor or a number, got ${describe(v)}`);
      }
      states.push([p, s]);
    }
    // the copies first: sd may hold this optimizer's own tensors (opt.loadStateDict(opt.stateDict()))
    const copies = states.map(([p, s]) => [p, Object.fromEntries(Object.entries(s).map(([k, v]) => [k, v instanceof Tensor ? this.owned(() => noGrad(() => v.clone())) : v]))]);
    for (const s of this.#state.values()) for (const v of Object.values(s)) if (v instanceof Tensor) v.dispose();
    this.#state = new Map(copies);
    this.paramGroups = groups;
  }

  /**
   * PyTorch's { state: { index: { snake_name: Tensor | number | null } }, param_groups: [{ ...options,
   * params }] } as this package's { state, paramGroups }: names camelCased (exp_avg_sq -> expAvgSq,
   * weight_decay -> weightDecay, initial_lr -> initialLr), a 0-dim step tensor read as its number,
   * a null entry (SGD's momentum_buffer before any momentum) left out, and the keys that only pick
   * PyTorch's implementation (IMPLEMENTATION) dropped. Any other key is refused by name: loading
   * one as if it were absent would continue a different run without a word.
   */
  #fromPyTorch(sd, who) {
    const { state, param_groups: groups, ...rest } = sd;
    for (const k of Object.keys(rest)) throw invalid(`${who}: PyTorch state dict has an unknown key '${k}' (expected state, param_groups)`);
    if (!isPlain(state) || !Array.isArray(groups)) {
      throw invalid(`${who}: expected PyTorch's { state, param_groups } (an object and an array), got ${describe(sd)}`);
    }
    const paramGroups = groups.map((g, gi) => {
      if (!isPlain(g)) throw invalid(`${who}: param_groups[${gi}] must be an object, got ${describe(g)}`);
      const out = {};
      for (const [k, v] of Object.entries(g)) {
        if (IMPLEMENTATION.has(k)) continue;
        const name = camel(k);
        this.#knownGroupKey(k, name, gi, who, snake);
        out[name] = v;
      }
      return out;
    });
    const states = Object.entries(state).map(([idx, s]) => {
      if (!isPlain(s)) throw invalid(`${who}: state of parameter ${idx} must be an object, got ${describe(s)}`);
      const entries = Object.entries(s).filter(([, v]) => v !== null).map(([k, v]) => {
        if (k !== 'step' || !(v instanceof Tensor)) return [camel(k), v];
        if (v.isDisposed) throw new OmError('Disposed', `${who}: state ${idx}.step was disposed`);
        if (v.numel() !== 1) throw new OmError('ShapeMismatch', `${who}: state ${idx}.step must be one number (a 0-dim tensor), got shape [${v.shape.join(', ')}]`);
        return ['step', v.item()];
      });
      return [idx, Object.fromEntries(entries)];
    });
    return { state: Object.fromEntries(states), paramGroups };
  }

  /**
   * Refuses key k of loaded group gi (name: k in this package's camelCase) unless it is params, an
   * option of this optimizer or a scheduler's (SCHEDULED): loading it as if absent would go on with
   * another run's settings without a word (PyTorch's own load_state_dict keeps such a key unread).
   * One rule for both formats; the message spells the group and the options as the dict did
   * (spell: a camelCase name in the dict's spelling).
   */
  #knownGroupKey(k, name, gi, who, spell) {
    const options = Object.keys(this.#options);
    if (name === 'params' || options.includes(name) || SCHEDULED.has(name)) return;
    const groups = spell === snake ? 'param_groups' : 'paramGroups';
    throw invalid(`${who}: ${groups}[${gi}] has an option '${k}' that ${this.who} does not have (expected ${options.map(spell).join(', ')})`);
  }

  /** Frees the state tensors (not the parameters). Idempotent. */
  dispose() {
    for (const s of this.#state.values()) for (const v of Object.values(s)) if (v instanceof Tensor) v.dispose();
    this.#state.clear();
    this.paramGroups = null;
  }
}

/** A number option in [lo, hi) (hi exclusive when open), with the optimizer's name in errors. */
export function numberOption(value, who, what, lo = 0, hi = Infinity, open = false) {
  if (typeof value !== 'number' || Number.isNaN(value) || value < lo || (open ? value >= hi : value > hi)) {
    throw invalid(`${who}: ${what} must be a number in [${lo}, ${hi}${open ? ')' : ']'}, got ${describe(value)}`);
  }
  return value;
}

/** An option check: a number in [lo, hi] (hi exclusive when open). */
export const num = (lo = 0, hi = Infinity, open = false) => (v, who, what) => numberOption(v, who, what, lo, hi, open);

/** An option check: a boolean. */
export const bool = (v, who, what) => {
  if (typeof v !== 'boolean') throw invalid(`${who}: ${what} must be a boolean, got ${describe(v)}`);
  return v;
};
