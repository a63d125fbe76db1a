// om.optim.lrScheduler: PyTorch 1.13's torch.optim.lr_scheduler, setting the learning rate of each of
// an optimizer's paramGroups. As in PyTorch, constructing a scheduler records each group's lr as
// its initialLr (the base), takes the first step (epoch 0) at once, and each step() moves one
// epoch on with the chainable rule (the new lr from the group's current lr, so schedulers made on
// one optimizer compose); step(epoch) jumps to an epoch with the closed form where the scheduler has
// one. Arguments are PyTorch's, camelCased: the required ones positionally and the rest in a trailing
// options object (`new StepLR(opt, 30, { gamma: 0.1 })`), or all in one object (`new StepLR(opt,
// { stepSize: 30, gamma: 0.1 })`).
//
//   const sched = new om.optim.lrScheduler.CosineAnnealingLR(opt, 100);
//   for (...) { ...; opt.step(); sched.step(); }
import { invalid } from '../errors.js';
import { describe } from '../convert.js';
import { Optimizer } from './optimizer.js';

const isPlain = (v) => v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype;
/** Python's a % b (the sign of b), which PyTorch's cosine rule relies on for negative a. */
const pyMod = (a, b) => ((a % b) + b) % b;

/**
 * The arguments after the optimizer: required names positionally (or every argument in one options
 * object), the optional ones with their defaults in a trailing options object; unknown names refused.
 */
function parseArgs(who, args, required, optional) {
  const known = [...required, ...Object.keys(optional)];
  let named;
  if (args.length === 1 && isPlain(args[0]) && required.length > 0) named = args[0];
  else {
    if (args.length > required.length + 1) throw invalid(`${who}: expected ${known.length ? `(optimizer, ${required.join(', ')}${required.length ? ', ' : ''}options)` : '(optimizer)'}, got ${args.length + 1} arguments`);
    const opts = args[required.length];
    if (opts !== undefined && !isPlain(opts)) throw invalid(`${who}: options must be an object, got ${describe(opts)}`);
    named = { ...opts };
    for (const [i, k] of required.entries()) {
      if (k in named) throw invalid(`${who}: ${k} is given twice (positionally and in the options)`);
      named[k] = args[i];
    }
  }
  for (const k of Object.keys(named)) if (!known.includes(k)) throw invalid(`${who}: unknown option '${k}' (expected ${known.join(', ')})`);
  for (const k of required) if (named[k] === undefined) throw invalid(`${who}: ${k} is required`);
  return { ...optional, ...named };
}

function number(v, who, what, ok = () => true, rule = 'a finite number') {
  if (typeof v !== 'number' || !Number.isFinite(v) || !ok(v)) throw invalid(`${who}: ${what} must be ${rule}, got ${describe(v)}`);
  return v;
}
const integer = (v, who, what, min) => number(v, who, what, (x) => Number.isInteger(x) && x >= min, `an integer >= ${min}`);

function optimizerArg(optimizer, who) {
  if (!(optimizer instanceof Optimizer)) throw invalid(`${who}: optimizer must be an om.optim optimizer, got ${describe(optimizer)}`);
  if (optimizer.paramGroups === null) throw invalid(`${who}: the optimizer was disposed`);
  return optimizer;
}

/** A value per parameter group: one number for all, or an array of one per group (PyTorch's _format_param). */
function perGroup(v, optimizer, who, what) {
  const n = optimizer.paramGroups.length;
  if (Array.isArray(v)) {
    if (v.length !== n) throw invalid(`${who}: expected ${n} values for ${what}, got ${v.length}`);
    return v.map((x, i) => number(x, who, `${what}[${i}]`));
  }
  return Array(n).fill(number(v, who, what));
}

/** Own fields as plain data (arrays and objects copied), without the optimizer and functions. */
function plainState(obj, skip = []) {
  const copy = (v) => (Array.isArray(v) ? v.map(copy) : isPlain(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copy(x)])) : v);
  return Object.fromEntries(Object.entries(obj).filter(([k, v]) => k !== 'optimizer' && typeof v !== 'function' && !skip.includes(k)).map(([k, v]) => [k, copy(v)]));
}

function loadPlain(obj, sd, who) {
  if (!isPlain(sd)) throw invalid(`${who}: expected a scheduler's stateDict() (an object), got ${describe(sd)}`);
  for (const k of Object.keys(sd)) if (!(k in obj) || k === 'optimizer') throw invalid(`${who}: unknown key '${k}' in the state dict`);
  Object.assign(obj, plainState(sd));
}

/** The base of the epoch-counting schedulers (PyTorch's _LRScheduler). */
export class LRScheduler {
  constructor(optimizer, lastEpoch, who) {
    this.optimizer = optimizerArg(optimizer, who);
    this.lastEpoch = integer(lastEpoch, who, 'lastEpoch', -1);
    Object.defineProperty(this, 'who', { value: who, enumerable: false });
    const groups = optimizer.paramGroups;
    if (lastEpoch === -1) {
      for (const g of groups) if (g.initialLr === undefined) g.initialLr = g.lr;
    } else {
      groups.forEach((g, i) => {
        if (g.initialLr === undefined) throw invalid(`${who}: param 'initialLr' is not specified in paramGroups[${i}] when resuming an optimizer`);
      });
    }
    /** Each group's initialLr when the scheduler was made. */
    this.baseLrs = groups.map((g) => g.initialLr);
    this.stepCount = 0;
  }

  /** PyTorch's _initial_step: the subclass calls it once its fields are set. */
  initialStep() {
    this.stepCount = 0;
    this.step();
  }

  /** The lrs the last step set, one per parameter group. */
  getLastLr() {
    return [...this.lastLr];
  }

  /** One epoch on (step()), or to an epoch (step(epoch): the closed form where there is one). */
  step(epoch) {
    if (this.optimizer.paramGroups === null) throw invalid(`${this.who}.step: the optimizer was disposed`);
    this.stepCount += 1;
    let values;
    if (epoch === undefined) {
      this.lastEpoch += 1;
      values = this.getLr();
    } else {
      this.lastEpoch = integer(epoch, `${this.who}.step`, 'epoch', 0);
      values = this.closedFormLr ? this.closedFormLr() : this.getLr();
    }
    this.optimizer.paramGroups.forEach((g, i) => { g.lr = values[i]; });
    this.lastLr = this.optimizer.paramGroups.map((g) => g.lr);
  }

  /** The scheduler's state as plain data (PyTorch's state_dict(): every field but the optimizer). */
  stateDict() {
    return plainState(this);
  }

  /** Restores a stateDict() of a scheduler of the same kind. */
  loadStateDict(sd) {
    loadPlain(this, sd, `${this.who}.loadStateDict`);
  }

  /** The groups' current lrs (for the chainable rules). */
  get groupLrs() {
    return this.optimizer.paramGroups.map((g) => g.lr);
  }
}

/** StepLR(optimizer, stepSize, { gamma = 0.1, lastEpoch = -1 }): lr times gamma every stepSize epochs. */
export class StepLR extends LRScheduler {
  constructor(optimizer, ...args) {
    const who = 'StepLR';
    const o = parseArgs(who, args, ['stepSize'], { gamma: 0.1, lastEpoch: -1 });
    super(optimizer, o.lastEpoch, who);
    this.stepSize = integer(o.stepSize, who, 'stepSize', 1);
    this.gamma = number(o.gamma, who, 'gamma');
    this.initialStep();
  }

  getLr() {
    if (this.lastEpoch === 0 || this.lastEpoch % this.stepSize !== 0) return this.groupLrs;
    return this.groupLrs.map((lr) => lr * this.gamma);
  }

  closedFormLr() {
    return this.baseLrs.map((b) => b * this.gamma ** Math.floor(this.lastEpoch / this.stepSize));
  }
}

/** MultiStepLR(optimizer, milestones, { gamma = 0.1, lastEpoch = -1 }): lr times gamma at each milestone (a repeated one counts twice). */
export class MultiStepLR extends LRScheduler {
  constructor(optimizer, ...args) {
    const who = 'MultiStepLR';
    const o = parseArgs(who, args, ['milestones'], { gamma: 0.1, lastEpoch: -1 });
    super(optimizer, o.lastEpoch, who);
    if (!Array.isArray(o.milestones)) throw invalid(`${who}: milestones must be an array of integers, got ${describe(o.milestones)}`);
    this.milestones = o.milestones.map((m, i) => integer(m, who, `milestones[${i}]`, 0)).sort((a, b) => a - b);
    this.gamma = number(o.gamma, who, 'gamma');
    this.initialStep();
  }

  getLr() {
    const hits = this.milestones.filter((m) => m === this.lastEpoch).length;
    if (hits === 0) return this.groupLrs;
    return this.groupLrs.map((lr) => lr * this.gamma ** hits);
  }

  closedFormLr() {
    const passed = this.milestones.filter((m) => m <= this.lastEpoch).length;
    return this.baseLrs.map((b) => b * this.gamma ** passed);
  }
}

/** ConstantLR(optimizer, { factor = 1/3, totalIters = 5, lastEpoch = -1 }): lr times factor until totalIters. */
export class ConstantLR extends LRScheduler {
  constructor(optimizer, ...args) {
    const who = 'ConstantLR';
    const o = parseArgs(who, args, [], { factor: 1 / 3, totalIters: 5, lastEpoch: -1 });
    super(optimizer, o.lastEpoch, who);
    this.factor = number(o.factor, who, 'factor', (f) => f >= 0 && f <= 1, 'a number in [0, 1]');
    this.totalIters = integer(o.totalIters, who, 'totalIters', 0);
    this.initialStep();
  }

  getLr() {
    if (this.lastEpoch === 0) return this.groupLrs.map((lr) => lr * this.factor);
    if (this.lastEpoch !== this.totalIters) return this.groupLrs;
    return this.groupLrs.map((lr) => lr * (1 / this.factor));
  }

  closedFormLr() {
    return this.baseLrs.map((b) => b * (this.factor + (this.lastEpoch >= this.totalIters ? 1 : 0) * (1 - this.factor)));
  }
}

/** LinearLR(optimizer, { startFactor = 1/3, endFactor = 1, totalIters = 5, lastEpoch = -1 }): the factor moves linearly over totalIters. */
export class LinearLR extends LRScheduler {
  constructor(optimizer, ...args) {
    const who = 'LinearLR';
    const o = parseArgs(who, args, [], { startFactor: 1 / 3, endFactor: 1, totalIters: 5, lastEpoch: -1 });
    super(optimizer, o.lastEpoch, who);
    this.startFactor = number(o.startFactor, who, 'startFactor', (f) => f > 0 && f <= 1, 'a number in (0, 1]');
    this.endFactor = number(o.endFactor, who, 'endFactor', (f) => f >= 0 && f <= 1, 'a number in [0, 1]');
    this.totalIters = integer(o.totalIters, who, 'totalIters', 1);
    this.initialStep();
  }

  getLr() {
    const { startFactor: s, endFactor: e, totalIters: n, lastEpoch: t } = this;
    if (t === 0) return this.groupLrs.map((lr) => lr * s);
    if (t > n) return this.groupLrs;
    return this.groupLrs.map((lr) => lr * (1 + (e - s) / (n * s + (t - 1) * (e - s))));
  }

  closedFormLr() {
    const { startFactor: s, endFactor: e, totalIters: n, lastEpoch: t } = this;
    return this.baseLrs.map((b) => b * (s + ((e - s) * Math.min(n, t)) / n));
  }
}

/** ExponentialLR(optimizer, gamma, { lastEpoch = -1 }): lr times gamma every epoch. */
export class ExponentialLR extends LRScheduler {
  constructor(optimizer, ...args) {
    const who = 'ExponentialLR';
    const o = parseArgs(who, args, ['gamma'], { lastEpoch: -1 });
    super(optimizer, o.lastEpoch, who);
    this.gamma = number(o.gamma, who, 'gamma');
    this.initialStep();
  }

  getLr() {
    if (this.lastEpoch === 0) return this.groupLrs;
    return this.groupLrs.map((lr) => lr * this.gamma);
  }

  closedFormLr() {
    return this.baseLrs.map((b) => b * this.gamma ** this.lastEpoch);
  }
}

/** PolynomialLR(optimizer, { totalIters = 5, power = 1, lastEpoch = -1 }): lr times (1 - t / totalIters)^power. */
export class PolynomialLR extends LRScheduler {
  constructor(optimizer, ...args) {
    const who = 'PolynomialLR';
    const o = parseArgs(who, args, [], { totalIters: 5, power: 1, lastEpoch: -1 });
    super(optimizer, o.lastEpoch, who);
    this.totalIters = integer(o.totalIters, who, 'totalIters', 1);
    this.power = number(o.power, who, 'power');
    this.initialStep();
  }

  getLr() {
    const { totalIters: n, lastEpoch: t } = this;
    if (t === 0 || t > n) return this.groupLrs;
    const decay = ((1 - t / n) / (1 - (t - 1) / n)) ** this.power;
    return this.groupLrs.map((lr) => lr * decay);
  }

  closedFormLr() {
    return this.baseLrs.map((b) => b * (1 - Math.min(this.totalIters, this.lastEpoch) / this.totalIters) ** this.power);
  }
}

/** CosineAnnealingLR(optimizer, tMax, { etaMin = 0, lastEpoch = -1 }): half a cosine from the base lr to etaMin over tMax epochs (and back up after). */
export class CosineAnnealingLR extends LRScheduler {
  constructor(optimizer, ...args) {
    const who = 'CosineAnnealingLR';
    const o = parseArgs(who, args, ['tMax'], { etaMin: 0, lastEpoch: -1 });
    super(optimizer, o.lastEpoch, who);
    this.tMax = number(o.tMax, who, 'tMax', (t) => t > 0, 'a number > 0'); // PyTorch takes a float too
    this.etaMin = number(o.etaMin, who, 'etaMin');
    this.initialStep();
  }

  getLr() {
    const { tMax: T, etaMin: eta, lastEpoch: t } = this;
    const lrs = this.groupLrs;
    if (t === 0) return lrs;
    // the first step of a scheduler resumed at lastEpoch > 0 has no previous lr to go on from
    if (this.stepCount === 1 && t > 0) return this.baseLrs.map((b) => eta + ((b - eta) * (1 + Math.cos((t * Math.PI) / T))) / 2);
    if (pyMod(t - 1 - T, 2 * T) === 0) return lrs.map((lr, i) => lr + ((this.baseLrs[i] - eta) * (1 - Math.cos(Math.PI / T))) / 2);
    return lrs.map((lr) => ((1 + Math.cos((Math.PI * t) / T)) / (1 + Math.cos((Math.PI * (t - 1)) / T))) * (lr - eta) + eta);
  }

  closedFormLr() {
    return this.baseLrs.map((b) => this.etaMin + ((b - this.etaMin) * (1 + Math.cos((Math.PI * this.lastEpoch) / this.tMax))) / 2);
  }
}

/** The lambdas of LambdaLR and MultiplicativeLR: one function for every group, or one per group. */
function lambdas(f, optimizer, who) {
  const n = optimizer.paramGroups.length;
  const list = Array.isArray(f) ? f : Array(n).fill(f);
  if (list.length !== n) throw invalid(`${who}: expected ${n} lrLambdas, got ${list.length}`);
  list.forEach((g, i) => {
    if (typeof g !== 'function') throw invalid(`${who}: lrLambda${Array.isArray(f) ? `[${i}]` : ''} must be a function of the epoch, got ${describe(g)}`);
  });
  return list;
}

/** A lambda's factor, checked: a function returning anything but a finite number would set a silent NaN lr. */
function factorOf(fn, epoch, who, i) {
  const v = fn(epoch);
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(`${who}: lrLambda (group ${i}) returned ${describe(v)} at epoch ${epoch}; expected a finite number`);
  return v;
}

/** The constructor LambdaLR and MultiplicativeLR share: (optimizer, lrLambda, { lastEpoch = -1 }). */
class LambdaScheduler extends LRScheduler {
  constructor(optimizer, args, who) {
    const o = parseArgs(who, args, ['lrLambda'], { lastEpoch: -1 });
    super(optimizer, o.lastEpoch, who);
    Object.defineProperty(this, 'lrLambdas', { value: lambdas(o.lrLambda, optimizer, who), enumerable: false });
    this.initialStep();
  }
}

/** LambdaLR(optimizer, lrLambda, { lastEpoch = -1 }): lr = initialLr * lrLambda(epoch) (a function, or one per group). */
export class LambdaLR extends LambdaScheduler {
  constructor(optimizer, ...args) {
    super(optimizer, args, 'LambdaLR');
  }

  getLr() {
    return this.baseLrs.map((b, i) => b * factorOf(this.lrLambdas[i], this.lastEpoch, this.who, i));
  }
}

/** MultiplicativeLR(optimizer, lrLambda, { lastEpoch = -1 }): lr times lrLambda(epoch) every epoch after the first. */
export class MultiplicativeLR extends LambdaScheduler {
  constructor(optimizer, ...args) {
    super(optimizer, args, 'MultiplicativeLR');
  }

  getLr() {
    if (this.lastEpoch <= 0) return this.groupLrs;
    return this.groupLrs.map((lr, i) => lr * factorOf(this.lrLambdas[i], this.lastEpoch, this.who, i));
  }
}

/**
 * OneCycleLR(optimizer, maxLr, { totalSteps | epochs and stepsPerEpoch, pctStart = 0.3, annealStrategy
 * = 'cos', cycleMomentum = true, baseMomentum = 0.85, maxMomentum = 0.95, divFactor = 25,
 * finalDivFactor = 1e4, threePhase = false, lastEpoch = -1 }): the 1cycle policy, stepped once per
 * batch; cycles the momentum (SGD's, RMSprop's) or beta1 (Adam's) inversely.
 */
export class OneCycleLR extends LRScheduler {
  constructor(optimizer, ...args) {
    const who = 'OneCycleLR';
    const o = parseArgs(who, args, ['maxLr'], {
      totalSteps: undefined, epochs: undefined, stepsPerEpoch: undefined, pctStart: 0.3, annealStrategy: 'cos', cycleMomentum: true,
      baseMomentum: 0.85, maxMomentum: 0.95, divFactor: 25, finalDivFactor: 1e4, threePhase: false, lastEpoch: -1,
    });
    optimizerArg(optimizer, who);
    let total;
    if (o.totalSteps !== undefined) total = integer(o.totalSteps, who, 'totalSteps', 1);
    else if (o.epochs !== undefined && o.stepsPerEpoch !== undefined) {
      total = integer(o.epochs, who, 'epochs', 1) * integer(o.stepsPerEpoch, who, 'stepsPerEpoch', 1);
    } else throw invalid(`${who}: give either totalSteps or (epochs and stepsPerEpoch)`);
    const pct = number(o.pctStart, who, 'pctStart', (p) => p >= 0 && p <= 1, 'a number in [0, 1]');
    if (o.annealStrategy !== 'cos' && o.annealStrategy !== 'linear') throw invalid(`${who}: annealStrategy must be 'cos' or 'linear', got ${describe(o.annealStrategy)}`);
    for (const k of ['cycleMomentum', 'threePhase']) if (typeof o[k] !== 'boolean') throw invalid(`${who}: ${k} must be a boolean, got ${describe(o[k])}`);
    const div = number(o.divFactor, who, 'divFactor', (d) => d > 0, 'a number > 0');
    const finalDiv = number(o.finalDivFactor, who, 'finalDivFactor', (d) => d > 0, 'a number > 0');
    const lastEpoch = integer(o.lastEpoch, who, 'lastEpoch', -1);
    const maxLrs = perGroup(o.maxLr, optimizer, who, 'maxLr');
    const groups = optimizer.paramGroups;
    const useBeta1 = 'betas' in optimizer.defaults;
    if (o.cycleMomentum && !useBeta1 && !('momentum' in optimizer.defaults)) {
      throw invalid(`${who}: the optimizer has no momentum (nor betas) to cycle; pass { cycleMomentum: false }`);
    }
    const maxM = o.cycleMomentum ? perGroup(o.maxMomentum, optimizer, who, 'maxMomentum') : null;
    const baseM = o.cycleMomentum ? perGroup(o.baseMomentum, optimizer, who, 'baseMomentum') : null;
    // all checks done: now the groups change (PyTorch writes these before its base class's init)
    if (lastEpoch === -1) {
      groups.forEach((g, i) => {
        g.initialLr = maxLrs[i] / div;
        g.maxLr = maxLrs[i];
        g.minLr = g.initialLr / finalDiv;
        if (o.cycleMomentum) {
          if (useBeta1) g.betas = [maxM[i], g.betas[1]];
          else g.momentum = maxM[i];
          g.maxMomentum = maxM[i];
          g.baseMomentum = baseM[i];
        }
      });
    }
    super(optimizer, lastEpoch, who);
    this.totalSteps = total;
    this.annealStrategy = o.annealStrategy;
    this.cycleMomentum = o.cycleMomentum;
    this.useBeta1 = useBeta1;
    const p = pct * total;
    this.phases = o.threePhase
      ? [
        { endStep: p - 1, startLr: 'initialLr', endLr: 'maxLr', startMomentum: 'maxMomentum', endMomentum: 'baseMomentum' },
        { endStep: 2 * p - 2, startLr: 'maxLr', endLr: 'initialLr', startMomentum: 'baseMomentum', endMomentum: 'maxMomentum' },
        { endStep: total - 1, startLr: 'initialLr', endLr: 'minLr', startMomentum: 'maxMomentum', endMomentum: 'maxMomentum' },
      ]
      : [
        { endStep: p - 1, startLr: 'initialLr', endLr: 'maxLr', startMomentum: 'maxMomentum', endMomentum: 'baseMomentum' },
        { endStep: total - 1, startLr: 'maxLr', endLr: 'minLr', startMomentum: 'baseMomentum', endMomentum: 'maxMomentum' },
      ];
    this.initialStep();
  }

  #anneal(start, end, pct) {
    if (this.annealStrategy === 'linear') return (end - start) * pct + start;
    return end + ((start - end) / 2) * (Math.cos(Math.PI * pct) + 1);
  }

  getLr() {
    const t = this.lastEpoch;
    if (t > this.totalSteps) {
      throw invalid(`${this.who}: tried to step ${t + 1} times; the specified number of total steps is ${this.totalSteps}`);
    }
    return this.optimizer.paramGroups.map((g) => {
      let start = 0;
      for (const [i, ph] of this.phases.entries()) {
        if (t <= ph.endStep || i === this.phases.length - 1) {
          const pct = (t - start) / (ph.endStep - start);
          if (this.cycleMomentum) {
            const m = this.#anneal(g[ph.startMomentum], g[ph.endMomentum], pct);
            if (this.useBeta1) g.betas = [m, g.betas[1]];
            else g.momentum = m;
          }
          return this.#anneal(g[ph.startLr], g[ph.endLr], pct);
        }
        start = ph.endStep;
      }
      return g.lr; // not reached: the last phase always matches
    });
  }
}

/**
 * CosineAnnealingWarmRestarts(optimizer, t0, { tMult = 1, etaMin = 0, lastEpoch = -1 }): SGDR, the
 * cosine from the base lr to etaMin over t0 epochs, restarted, each period tMult times the last.
 */
export class CosineAnnealingWarmRestarts extends LRScheduler {
  constructor(optimizer, ...args) {
    const who = 'CosineAnnealingWarmRestarts';
    const o = parseArgs(who, args, ['t0'], { tMult: 1, etaMin: 0, lastEpoch: -1 });
    super(optimizer, o.lastEpoch, who);
    this.t0 = integer(o.t0, who, 't0', 1);
    this.tMult = integer(o.tMult, who, 'tMult', 1);
    this.etaMin = number(o.etaMin, who, 'etaMin');
    this.tI = this.t0;
    this.tCur = this.lastEpoch;
    this.initialStep();
  }

  getLr() {
    return this.baseLrs.map((b) => this.etaMin + ((b - this.etaMin) * (1 + Math.cos((Math.PI * this.tCur) / this.tI))) / 2);
  }

  /** step(): one epoch on; step(epoch): to a (possibly fractional) epoch, as PyTorch's per-batch use does. */
  step(epoch) {
    if (this.optimizer.paramGroups === null) throw invalid(`${this.who}.step: the optimizer was disposed`);
    this.stepCount += 1;
    if (epoch === undefined && this.lastEpoch < 0) epoch = 0;
    if (epoch === undefined) {
      epoch = this.lastEpoch + 1;
      this.tCur += 1;
      if (this.tCur >= this.tI) {
        this.tCur -= this.tI;
        this.tI *= this.tMult;
      }
    } else {
      number(epoch, `${this.who}.step`, 'epoch', (e) => e >= 0, 'a number >= 0');
      if (epoch >= this.t0) {
        if (this.tMult === 1) this.tCur = epoch % this.t0;
        else {
          const n = Math.floor(Math.log((epoch / this.t0) * (this.tMult - 1) + 1) / Math.log(this.tMult));
          this.tCur = epoch - (this.t0 * (this.tMult ** n - 1)) / (this.tMult - 1);
          this.tI = this.t0 * this.tMult ** n;
        }
      } else {
        this.tI = this.t0;
        this.tCur = epoch;
      }
    }
    this.lastEpoch = Math.floor(epoch);
    const values = this.getLr();
    this.optimizer.paramGroups.forEach((g, i) => { g.lr = values[i]; });
    this.lastLr = this.optimizer.paramGroups.map((g) => g.lr);
  }
}

/**
 * SequentialLR(optimizer, schedulers, milestones, { lastEpoch = -1 }): schedulers[i] runs from
 * milestones[i - 1] on (restarted at its epoch 0 there). The schedulers must be on this optimizer.
 */
export class SequentialLR extends LRScheduler {
  constructor(optimizer, ...args) {
    const who = 'SequentialLR';
    const o = parseArgs(who, args, ['schedulers', 'milestones'], { lastEpoch: -1 });
    optimizerArg(optimizer, who);
    if (!Array.isArray(o.schedulers) || o.schedulers.length === 0) throw invalid(`${who}: schedulers must be a non-empty array of schedulers, got ${describe(o.schedulers)}`);
    o.schedulers.forEach((s, i) => {
      if (!(s instanceof LRScheduler)) throw invalid(`${who}: schedulers[${i}] must be an om.optim.lrScheduler scheduler (not ReduceLROnPlateau), got ${describe(s)}`);
      if (s.optimizer !== optimizer) throw invalid(`${who}: schedulers[${i}] belongs to another optimizer than the one given; all must belong to it`);
    });
    if (!Array.isArray(o.milestones)) throw invalid(`${who}: milestones must be an array of integers, got ${describe(o.milestones)}`);
    if (o.milestones.length !== o.schedulers.length - 1) {
      throw invalid(`${who}: expected one milestone fewer than schedulers, got ${o.schedulers.length} schedulers and ${o.milestones.length} milestones`);
    }
    const milestones = o.milestones.map((m, i) => integer(m, who, `milestones[${i}]`, 0));
    if (milestones.some((m, i) => i > 0 && m < milestones[i - 1])) throw invalid(`${who}: milestones must not decrease, got [${milestones.join(', ')}]`);
    super(optimizer, o.lastEpoch, who);
    Object.defineProperty(this, 'schedulers', { value: o.schedulers, enumerable: false });
    this.milestones = milestones;
    this.lastEpoch = o.lastEpoch + 1;
    // as PyTorch 1.13: back to the initial lrs, each scheduler's own first step undone, and only the
    // first one's taken again (the others start when their milestone comes)
    for (const g of optimizer.paramGroups) g.lr = g.initialLr;
    for (const s of this.schedulers) s.lastEpoch -= 1;
    this.schedulers[0].initialStep();
    this.lastLr = this.schedulers[0].getLastLr();
  }

  step() {
    this.lastEpoch += 1;
    let idx = 0;
    while (idx < this.milestones.length && this.milestones[idx] <= this.lastEpoch) idx++;
    const s = this.schedulers[idx];
    if (idx > 0 && this.milestones[idx - 1] === this.lastEpoch) s.step(0);
    else s.step();
    this.lastLr = s.getLastLr();
  }

  /** Its own fields and each scheduler's state (schedulers: [stateDict, ...]). */
  stateDict() {
    return { ...plainState(this), schedulers: this.schedulers.map((s) => s.stateDict()) };
  }

  loadStateDict(sd) {
    const who = `${this.who}.loadStateDict`;
    if (!isPlain(sd) || !Array.isArray(sd.schedulers) || sd.schedulers.length !== this.schedulers.length) {
      throw invalid(`${who}: expected a SequentialLR's stateDict() with ${this.schedulers.length} schedulers, got ${describe(sd)}`);
    }
    const { schedulers, ...own } = sd;
    loadPlain(this, own, who);
    schedulers.forEach((s, i) => this.schedulers[i].loadStateDict(s));
  }
}

/**
 * ReduceLROnPlateau(optimizer, { mode = 'min', factor = 0.1, patience = 10, threshold = 1e-4,
 * thresholdMode = 'rel', cooldown = 0, minLr = 0, eps = 1e-8 }): step(metric) after each epoch; the
 * lr times factor once the metric has not improved for more than patience epochs.
 */
export class ReduceLROnPlateau {
  constructor(optimizer, options) {
    const who = 'ReduceLROnPlateau';
    const o = parseArgs(who, options === undefined ? [] : [options], [], {
      mode: 'min', factor: 0.1, patience: 10, threshold: 1e-4, thresholdMode: 'rel', cooldown: 0, minLr: 0, eps: 1e-8,
    });
    this.optimizer = optimizerArg(optimizer, who);
    Object.defineProperty(this, 'who', { value: who, enumerable: false });
    this.factor = number(o.factor, who, 'factor', (f) => f >= 0 && f < 1, 'a number in [0, 1)');
    this.minLrs = perGroup(o.minLr, optimizer, who, 'minLr');
    this.patience = integer(o.patience, who, 'patience', 0);
    this.cooldown = integer(o.cooldown, who, 'cooldown', 0);
    this.threshold = number(o.threshold, who, 'threshold');
    this.eps = number(o.eps, who, 'eps');
    if (o.mode !== 'min' && o.mode !== 'max') throw invalid(`${who}: mode must be 'min' or 'max', got ${describe(o.mode)}`);
    if (o.thresholdMode !== 'rel' && o.thresholdMode !== 'abs') throw invalid(`${who}: thresholdMode must be 'rel' or 'abs', got ${describe(o.thresholdMode)}`);
    this.mode = o.mode;
    this.thresholdMode = o.thresholdMode;
    this.best = o.mode === 'min' ? Infinity : -Infinity;
    this.numBadEpochs = 0;
    this.cooldownCounter = 0;
    this.lastEpoch = 0;
    this.lastLr = optimizer.paramGroups.map((g) => g.lr);
  }

  #better(a) {
    const { best, threshold: th } = this;
    if (this.mode === 'min') return this.thresholdMode === 'rel' ? a < best * (1 - th) : a < best - th;
    return this.thresholdMode === 'rel' ? a > best * (th + 1) : a > best + th;
  }

  /** One epoch's metric (a number, or a 1-element Tensor read with item()). */
  step(metric) {
    if (this.optimizer.paramGroups === null) throw invalid(`${this.who}.step: the optimizer was disposed`);
    const v = typeof metric === 'object' && metric !== null && typeof metric.item === 'function' ? metric.item() : metric;
    // NaN and infinities are numbers PyTorch compares too (a NaN is never better: a bad epoch)
    if (typeof v !== 'number') throw invalid(`${this.who}.step: metric must be a number (or a 1-element Tensor), got ${describe(metric)}`);
    const current = v;
    this.lastEpoch += 1;
    if (this.#better(current)) {
      this.best = current;
      this.numBadEpochs = 0;
    } else this.numBadEpochs += 1;
    if (this.cooldownCounter > 0) {
      this.cooldownCounter -= 1;
      this.numBadEpochs = 0;
    }
    if (this.numBadEpochs > this.patience) {
      this.optimizer.paramGroups.forEach((g, i) => {
        const next = Math.max(g.lr * this.factor, this.minLrs[i]);
        if (g.lr - next > this.eps) g.lr = next;
      });
      this.cooldownCounter = this.cooldown;
      this.numBadEpochs = 0;
    }
    this.lastLr = this.optimizer.paramGroups.map((g) => g.lr);
  }

  getLastLr() {
    return [...this.lastLr];
  }

  stateDict() {
    return plainState(this);
  }

  loadStateDict(sd) {
    loadPlain(this, sd, `${this.who}.loadStateDict`);
  }
}
