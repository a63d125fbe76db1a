// Training utilities against PyTorch 1.13 (tests/js/fixtures/pytorch/ops/training.json, written by
// tools/pytorch_training.py): every om.optim.lrScheduler scheduler's learning rates (and OneCycleLR's
// momenta) over 30 steps on an optimizer with two parameter groups, om.nn.utils.clipGradNorm_ /
// clipGradValue_, RMSprop, Adagrad, SGD with parameter groups and Adam's amsgrad/maximize, and a
// short training loop with a scheduler and clipping; then state dicts and the error paths.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { vals, memoryHooks, collectGarbage } from './helpers.mjs';

memoryHooks();
const FX = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/training.json', import.meta.url), 'utf8'));
const S = om.optim.lrScheduler;
const kindIs = (kind, re) => (e) => e instanceof om.OmError && e.kind === kind && re.test(e.message);

/** Within rel of PyTorch's value (relative, at least 1 in magnitude). */
function close(got, want, rel, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  got.forEach((g, i) => assert.ok(Math.abs(g - want[i]) <= rel * Math.max(1, Math.abs(want[i])), `${what}[${i}]: ${g} vs PyTorch ${want[i]}`));
}

/** The fixture's optimizer: two groups (lr 0.1 over 2 zeros, lr 0.01 over 3), SGD with momentum 0.9 or Adam. */
function twoGroups(kind, keep) {
  const a = keep(om.zeros([2])), b = keep(om.zeros([3]));
  a.requiresGrad = true;
  b.requiresGrad = true;
  const groups = [{ params: [a], lr: 0.1 }, { params: [b], lr: 0.01 }];
  return kind === 'adam' ? new om.optim.Adam(groups) : new om.optim.SGD(groups, { lr: 0.5, momentum: 0.9 });
}

/** Runs fn(keep) and disposes what keep() was given. */
function owning(fn) {
  const kept = [];
  try {
    return fn((t) => (kept.push(t), t));
  } finally {
    om.dispose(kept);
  }
}

// the fixture's schedulers, in the two argument styles (positional + options, one options object)
const SCHEDULERS = {
  StepLR: ['sgd', (o) => new S.StepLR(o, 7, { gamma: 0.5 })],
  MultiStepLR: ['sgd', (o) => new S.MultiStepLR(o, { milestones: [10, 3, 20, 10], gamma: 0.3 })],
  ExponentialLR: ['sgd', (o) => new S.ExponentialLR(o, 0.9)],
  CosineAnnealingLR: ['sgd', (o) => new S.CosineAnnealingLR(o, 10, { etaMin: 0.001 })],
  LambdaLR: ['sgd', (o) => new S.LambdaLR(o, [(e) => 1 / (e + 1), (e) => 0.9 ** e])],
  MultiplicativeLR: ['sgd', (o) => new S.MultiplicativeLR(o, () => 0.95)],
  LinearLR: ['sgd', (o) => new S.LinearLR(o, { startFactor: 0.25, endFactor: 1, totalIters: 8 })],
  ConstantLR: ['sgd', (o) => new S.ConstantLR(o, { factor: 0.5, totalIters: 4 })],
  PolynomialLR: ['sgd', (o) => new S.PolynomialLR(o, { totalIters: 12, power: 2 })],
  OneCycleLR: ['sgd', (o) => new S.OneCycleLR(o, [1, 0.1], { totalSteps: 31 })],
  'OneCycleLR-three-phase-linear-adam': ['adam', (o) => new S.OneCycleLR(o, 0.05, {
    epochs: 4, stepsPerEpoch: 8, pctStart: 0.25, annealStrategy: 'linear', threePhase: true, divFactor: 10,
  })],
  CosineAnnealingWarmRestarts: ['sgd', (o) => new S.CosineAnnealingWarmRestarts(o, 4, { tMult: 2, etaMin: 0.01 })],
  'CosineAnnealingWarmRestarts-mult-1': ['sgd', (o) => new S.CosineAnnealingWarmRestarts(o, { t0: 5 })],
  SequentialLR: ['sgd', (o) => new S.SequentialLR(o, [new S.ConstantLR(o, { factor: 0.1, totalIters: 2 }), new S.ExponentialLR(o, 0.9),
    new S.StepLR(o, 5, { gamma: 0.5 })], [2, 12])],
  'SequentialLR-warmup-cosine': ['sgd', (o) => new S.SequentialLR(o, [new S.LinearLR(o, { startFactor: 0.1, totalIters: 5 }),
    new S.CosineAnnealingLR(o, 20)], [5])],
};
const PLATEAU = {
  ReduceLROnPlateau: { mode: 'min', factor: 0.5, patience: 2, threshold: 0.01, cooldown: 1, minLr: [0.005, 0.001] },
  'ReduceLROnPlateau-max-abs': { mode: 'max', factor: 0.2, patience: 1, threshold: 0.05, thresholdMode: 'abs' },
};
const momentumOf = (g) => (g.betas ? g.betas[0] : g.momentum);

describe('lrScheduler: the learning rates PyTorch sets, 30 steps, two parameter groups', () => {
  test('every scheduler of the fixture is tested', () => {
    assert.deepEqual(Object.keys(FX.schedulers).sort(), [...Object.keys(SCHEDULERS), ...Object.keys(PLATEAU)].sort());
  });
  for (const [name, [kind, make]] of Object.entries(SCHEDULERS)) {
    test(name, () => owning((keep) => {
      const opt = twoGroups(kind, keep);
      const sched = make(opt);
      const want = FX.schedulers[name];
      const lrs = [sched.getLastLr()], momenta = [opt.paramGroups.map(momentumOf)];
      for (let i = 0; i < FX.steps; i++) {
        opt.step();
        sched.step();
        lrs.push(sched.getLastLr());
        momenta.push(opt.paramGroups.map(momentumOf));
      }
      close(lrs.flat(), want.lrs.flat(), 1e-12, `${name} lrs`);
      assert.deepEqual(opt.paramGroups.map((g) => g.lr), lrs.at(-1), 'the groups hold the last lrs');
      if (want.momenta) close(momenta.flat(), want.momenta.flat(), 1e-12, `${name} momenta`);
      opt.dispose();
    }));
  }
  for (const [name, options] of Object.entries(PLATEAU)) {
    test(name, () => owning((keep) => {
      const opt = twoGroups('sgd', keep);
      const sched = new S.ReduceLROnPlateau(opt, options);
      const want = FX.schedulers[name];
      const lrs = [opt.paramGroups.map((g) => g.lr)];
      for (const [i, m] of want.metrics.entries()) {
        opt.step();
        sched.step(i % 2 ? keep(om.tensor(m)) : m); // a 0-d loss tensor, as PyTorch's float() takes
        lrs.push(opt.paramGroups.map((g) => g.lr));
      }
      close(lrs.flat(), want.lrs.flat(), 1e-12, name);
      assert.deepEqual(sched.getLastLr(), lrs.at(-1));
      opt.dispose();
    }));
  }

  test('stateDict / loadStateDict: a scheduler resumed at step 12 continues as the one that ran on', () => owning((keep) => {
    for (const name of ['CosineAnnealingLR', 'OneCycleLR', 'CosineAnnealingWarmRestarts', 'SequentialLR', 'LambdaLR']) {
      const [kind, make] = SCHEDULERS[name];
      const optA = twoGroups(kind, keep), a = make(optA);
      for (let i = 0; i < 12; i++) a.step();
      const saved = JSON.parse(JSON.stringify({ opt: optA.stateDict(), sched: a.stateDict() })); // plain data: it survives JSON
      const optB = twoGroups(kind, keep), b = make(optB);
      optB.loadStateDict(saved.opt);
      b.loadStateDict(saved.sched);
      for (let i = 0; i < 10; i++) {
        a.step();
        b.step();
        assert.deepEqual(b.getLastLr(), a.getLastLr(), `${name} after ${13 + i} steps`);
      }
      optA.dispose();
      optB.dispose();
    }
  }));

  test('step(epoch) jumps with the closed form; schedulers on one optimizer compose (chainable)', () => owning((keep) => {
    const opt = twoGroups('sgd', keep);
    const s = new S.StepLR(opt, 3, { gamma: 0.5 });
    s.step(7);
    close(s.getLastLr(), [0.1 * 0.25, 0.01 * 0.25], 1e-15, 'StepLR at epoch 7');
    opt.dispose();
    const opt2 = twoGroups('sgd', keep);
    const e = new S.ExponentialLR(opt2, 0.5), m = new S.MultiStepLR(opt2, [2], { gamma: 0.1 });
    for (let i = 0; i < 3; i++) [e, m].forEach((x) => x.step());
    close(m.getLastLr(), [0.1 * 0.5 ** 3 * 0.1, 0.01 * 0.5 ** 3 * 0.1], 1e-15, 'exponential then multistep');
    opt2.dispose();
  }));
});

describe('clipGradNorm_ and clipGradValue_ as torch.nn.utils', () => {
  const params = (keep) => FX.clip.grads.map((g) => {
    const p = keep(om.zeros(g.shape));
    p.requiresGrad = true;
    om.tidy(() => p.mul(om.tensor(g.data, { shape: g.shape })).sum().backward()); // p.grad = g
    return p;
  });
  for (const c of FX.clip.norm) {
    test(`maxNorm ${c.maxNorm}, normType ${c.normType}`, () => owning((keep) => {
      const ps = params(keep);
      const total = keep(om.nn.utils.clipGradNorm_(ps, c.maxNorm, c.normType === 'inf' ? Infinity : c.normType));
      assert.equal(total.dtype, 'float32');
      assert.deepEqual(total.shape, []);
      close([total.item()], [c.total], 2e-6, 'total norm');
      ps.forEach((p, i) => close(vals(p.grad), c.grads[i].data, 2e-6, `grad ${i}`));
    }));
  }
  test("normType 'inf' is Infinity; no gradient gives 0 and changes nothing", () => owning((keep) => {
    const ps = params(keep);
    close([keep(om.nn.utils.clipGradNorm_(ps, 2.5, 'inf')).item()], [FX.clip.norm[1].total], 2e-6, "'inf'");
    const bare = keep(om.zeros([3]));
    assert.equal(keep(om.nn.utils.clipGradNorm_([bare], 1)).item(), 0);
    assert.equal(bare.grad, null);
  }));
  for (const c of FX.clip.value) {
    test(`clipGradValue_ ${c.clipValue}`, () => owning((keep) => {
      const ps = params(keep);
      om.nn.utils.clipGradValue_(ps, c.clipValue);
      ps.forEach((p, i) => close(vals(p.grad), c.grads[i].data, 0, `grad ${i}`));
    }));
  }
  test('errorIfNonfinite: a NaN or infinite total is an error and the gradients stay', () => owning((keep) => {
    const p = keep(om.zeros([2]));
    p.requiresGrad = true;
    om.tidy(() => p.mul(om.tensor([Infinity, 1])).sum().backward());
    assert.throws(() => om.nn.utils.clipGradNorm_([p], 1, 2, { errorIfNonfinite: true }),
      kindIs('InvalidArgument', /clipGradNorm_: the total norm of order 2 for gradients from parameters is non-finite \(Infinity\)/));
    assert.deepEqual(vals(p.grad), [Infinity, 1]);
    // without it, PyTorch's rule scales by max / (inf + 1e-6) = 0: inf * 0 is NaN, 1 * 0 is 0
    assert.equal(keep(om.nn.utils.clipGradNorm_([p], 1)).item(), Infinity);
    assert.ok(Number.isNaN(vals(p.grad)[0]) && vals(p.grad)[1] === 0);
  }));
  test('parametersToVector / vectorToParameters round trip', () => owning((keep) => {
    const a = keep(om.tensor([[1, 2], [3, 4]])), b = keep(om.tensor([5, 6, 7]));
    const v = keep(om.nn.utils.parametersToVector([a, b]));
    assert.deepEqual(vals(v), [1, 2, 3, 4, 5, 6, 7]);
    om.nn.utils.vectorToParameters(keep(v.mul(-1)), [a, b]);
    assert.deepEqual(vals(a), [-1, -2, -3, -4]);
    assert.deepEqual(a.shape, [2, 2]);
    assert.deepEqual(vals(b), [-5, -6, -7]);
    assert.throws(() => om.nn.utils.vectorToParameters(keep(om.zeros([6])), [a, b]), kindIs('ShapeMismatch', /vectorToParameters: vec has 6 elements, the parameters 7/));
    assert.throws(() => om.nn.utils.vectorToParameters(keep(om.zeros([7, 1])), [a, b]), kindIs('InvalidArgument', /vectorToParameters: vec must be 1-D, got 2 dims/));
    assert.throws(() => om.nn.utils.parametersToVector([a, keep(om.tensor([1n]))]), kindIs('DtypeMismatch', /parametersToVector: parameters\[1\] is int64, parameters\[0\] float32/));
  }));
  test('errors: kinds and messages', () => owning((keep) => {
    const p = keep(om.zeros([2]));
    const U = om.nn.utils;
    assert.throws(() => U.clipGradNorm_(p, '1'), kindIs('InvalidArgument', /clipGradNorm_: maxNorm must be a number, got/));
    assert.throws(() => U.clipGradNorm_(p, 1, -1), kindIs('InvalidArgument', /clipGradNorm_: normType must be a number >= 0, Infinity, -Infinity or 'inf', got -1/));
    assert.throws(() => U.clipGradNorm_(p, 1, 2, { errorIfNonFinite: true }), kindIs('InvalidArgument', /clipGradNorm_: unknown option 'errorIfNonFinite' \(expected errorIfNonfinite\)/));
    assert.throws(() => U.clipGradNorm_(3, 1), kindIs('InvalidArgument', /clipGradNorm_: parameters must be a Tensor or an array of Tensors/));
    assert.throws(() => U.clipGradValue_([p, 2], 1), kindIs('InvalidArgument', /clipGradValue_: parameters\[1\] must be a Tensor, got 2/));
    assert.throws(() => U.clipGradValue_([p], NaN), kindIs('InvalidArgument', /clipGradValue_: clipValue must be a number, got NaN/));
    const gone = om.zeros([1]);
    gone.dispose();
    assert.throws(() => U.clipGradNorm_([gone], 1), kindIs('Disposed', /clipGradNorm_: parameters\[0\] was disposed/));
  }));
});

/** tools/pytorch_training.py's loss_of: sum((p - linspace(-1, 1)) ** 2 * (i + 1)) + sum(sin(3 p)) over the parameters. */
const lossOf = (ps) => ps.reduce((acc, p, i) => {
  // torch.linspace(-1, 1, n) as the target
  const n = p.numel(), target = om.tensor(Array.from({ length: n }, (_, k) => (n === 1 ? -1 : -1 + (2 * k) / (n - 1))), { shape: p.shape });
  const term = p.sub(target).pow(2).mul(i + 1).sum().add(p.mul(3).sin().sum());
  return acc === null ? term : acc.add(term);
}, null);

describe('optimizers against PyTorch: 5 steps on a fixed loss', () => {
  const MAKE = {
    RMSprop: (ps) => new om.optim.RMSprop(ps, { lr: 0.01, alpha: 0.9, eps: 1e-6, weightDecay: 0.1, momentum: 0.5, centered: true }),
    'RMSprop-plain': (ps) => new om.optim.RMSprop(ps),
    Adagrad: (ps) => new om.optim.Adagrad(ps, { lr: 0.1, lrDecay: 0.05, weightDecay: 0.01, initialAccumulatorValue: 0.1 }),
    'SGD-groups': (ps) => new om.optim.SGD([{ params: ps.slice(0, 1), nesterov: true, momentum: 0.9 },
      { params: ps.slice(1), lr: 0.05, weightDecay: 0.1 }], { lr: 0.02, momentum: 0.5 }),
    'Adam-amsgrad-maximize': (ps) => new om.optim.Adam(ps, { lr: 0.05, amsgrad: true, maximize: true, weightDecay: 0.01 }),
  };
  test('every optimizer of the fixture is tested', () => assert.deepEqual(Object.keys(FX.optimizers.cases).sort(), Object.keys(MAKE).sort()));
  for (const [name, make] of Object.entries(MAKE)) {
    test(name, () => owning((keep) => {
      const ps = FX.optimizers.init.map((t) => {
        const p = keep(om.tensor(t.data, { shape: t.shape }));
        p.requiresGrad = true;
        return p;
      });
      const opt = make(ps);
      FX.optimizers.cases[name].forEach((want, step) => {
        opt.zeroGrad();
        om.tidy(() => lossOf(ps).backward());
        opt.step();
        ps.forEach((p, i) => close(vals(p), want[i].data, 5e-6, `${name} step ${step + 1} param ${i}`));
      });
      opt.dispose();
    }));
  }
});

describe("PyTorch's optimizer state_dict(): loaded, continued, written back", () => {
  // tools/pytorch_optim_state.py: 3 steps in PyTorch, its state_dict() as JSON (param_groups,
  // numbers, nulls) and safetensors (the state's tensors as <case>/state.<i>.<name>), then 2 steps
  const OS = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/optim_state.json', import.meta.url), 'utf8'));
  const BYTES = readFileSync(new URL('./fixtures/pytorch/ops/optim_state.safetensors', import.meta.url));
  // each made with options other than PyTorch's: the loaded param_groups must bring them
  const OTHER = {
    RMSprop: (ps) => new om.optim.RMSprop(ps),
    'RMSprop-plain': (ps) => new om.optim.RMSprop(ps, { lr: 0.5, centered: true }),
    Adagrad: (ps) => new om.optim.Adagrad(ps),
    'SGD-groups': (ps) => new om.optim.SGD([{ params: ps.slice(0, 1) }, { params: ps.slice(1) }]),
    'Adam-amsgrad-maximize': (ps) => new om.optim.Adam(ps),
    AdamW: (ps) => new om.optim.AdamW(ps),
  };
  const IMPLEMENTATION = ['foreach', 'fused', 'capturable', 'differentiable'];
  const sortedEntries = (o) => Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1));

  /** Case name's state dict as a user assembles it: the JSON's groups and numbers, the file's tensors. */
  function torchStateDict(name, tensors) {
    const c = OS.cases[name], state = structuredClone(c.state);
    for (const [key, t] of Object.entries(tensors)) {
      const m = key.match(/^(.*)\/state\.(\d+)\.(\w+)$/);
      if (m[1] === name) state[m[2]][m[3]] = t;
    }
    return { state, param_groups: c.param_groups };
  }

  test('every case of the fixture is tested', () => assert.deepEqual(Object.keys(OS.cases).sort(), Object.keys(OTHER).sort()));
  for (const [name, make] of Object.entries(OTHER)) {
    test(name, () => owning((keep) => {
      const { tensors } = om.safetensors.load(BYTES);
      Object.values(tensors).forEach(keep);
      const c = OS.cases[name];
      const ps = c.params.map((t) => {
        const p = keep(om.tensor(t.data, { shape: t.shape }));
        p.requiresGrad = true;
        return p;
      });
      const opt = make(ps), sd = torchStateDict(name, tensors);
      opt.loadStateDict(sd);
      c.later.forEach((want, step) => {
        opt.zeroGrad();
        om.tidy(() => lossOf(ps).backward());
        opt.step();
        ps.forEach((p, i) => close(vals(p), want[i].data, 5e-6, `${name} step ${4 + step} param ${i}`));
      });
      // written back in PyTorch's shape: its names and options (less the implementation's switches)
      const back = opt.stateDict({ format: 'pytorch' });
      back.param_groups.forEach((g, i) => {
        const want = Object.fromEntries(Object.entries(c.param_groups[i]).filter(([k]) => !IMPLEMENTATION.includes(k)));
        assert.deepEqual(sortedEntries(g), sortedEntries(want), `${name} param_groups[${i}]`);
      });
      for (const [i, s] of Object.entries(sd.state)) {
        const names = Object.keys(s).filter((k) => s[k] !== null).sort();
        assert.deepEqual(Object.keys(back.state[i] ?? {}).sort(), names, `${name} state ${i}: PyTorch's names`);
        if (names.includes('step')) assert.equal(back.state[i].step, 5, `${name} state ${i}: step after 3 + 2`);
      }
      // it loads again, also into itself (its own tensors, copied before the old state is freed)
      const values = (sd) => Object.entries(sd.state).map(([i, s]) => [i, Object.entries(s).map(([k, v]) => [k, v instanceof om.Tensor ? vals(v) : v])]);
      const before = values(back);
      opt.loadStateDict(back);
      assert.deepEqual(values(opt.stateDict({ format: 'pytorch' })), before, `${name}: its own state dict loaded into itself`);
      opt.dispose();
    }));
  }
  test('refusals: kinds and messages, and a refused load changes nothing', () => owning((keep) => {
    const { tensors } = om.safetensors.load(BYTES);
    Object.values(tensors).forEach(keep);
    const ps = OS.cases.AdamW.params.map((t) => keep(om.tensor(t.data, { shape: t.shape })));
    const opt = new om.optim.AdamW(ps, { lr: 0.3 });
    const sd = torchStateDict('AdamW', tensors);
    const refused = (changed, kind, re) => assert.throws(() => opt.loadStateDict(changed), kindIs(kind, re));
    refused({ ...sd, param_groups: [{ ...sd.param_groups[0], momentum: 0.9 }] },
      'InvalidArgument', /AdamW.loadStateDict: param_groups\[0\] has an option 'momentum' that AdamW does not have \(expected lr, betas, eps, weight_decay, amsgrad, maximize\)/);
    refused({ ...sd, state: { ...sd.state, 0: { ...sd.state[0], exp_avgs: sd.state[0].exp_avg } } },
      'InvalidArgument', /AdamW.loadStateDict: state 0 has an entry 'expAvgs' that AdamW does not keep \(expected step, expAvg, expAvgSq, maxExpAvgSq\)/);
    refused({ ...sd, state: { ...sd.state, 1: { ...sd.state[1], step: sd.state[1].exp_avg } } },
      'ShapeMismatch', /AdamW.loadStateDict: state 1.step must be one number \(a 0-dim tensor\), got shape \[4\]/);
    refused({ ...sd, state: { ...sd.state, 1: { ...sd.state[1], step: 2.5 } } },
      'InvalidArgument', /AdamW.loadStateDict: state 1.step must be a whole number >= 0, got 2.5/);
    refused({ ...sd, state: { ...sd.state, 0: { ...sd.state[0], exp_avg: sd.state[1].exp_avg } } },
      'ShapeMismatch', /AdamW.loadStateDict: state 0.expAvg has shape \[4\], the parameter \[2, 3\]/);
    refused({ ...sd, extra: 1 }, 'InvalidArgument', /AdamW.loadStateDict: PyTorch state dict has an unknown key 'extra' \(expected state, param_groups\)/);
    refused({ state: [], param_groups: sd.param_groups }, 'InvalidArgument', /AdamW.loadStateDict: expected PyTorch's \{ state, param_groups \}/);
    refused({ ...sd, param_groups: [1] }, 'InvalidArgument', /AdamW.loadStateDict: param_groups\[0\] must be an object, got 1/);
    const gone = om.zeros([]);
    gone.dispose();
    refused({ ...sd, state: { ...sd.state, 0: { ...sd.state[0], step: gone } } }, 'Disposed', /AdamW.loadStateDict: state 0.step was disposed/);
    assert.equal(opt.paramGroups[0].lr, 0.3, 'the refused loads changed nothing');
    assert.deepEqual(opt.stateDict().state, {});
    assert.throws(() => opt.stateDict({ format: 'torch' }), kindIs('InvalidArgument', /AdamW.stateDict: format must be 'onemodel' or 'pytorch', got a string \("torch"\)/));
    assert.throws(() => opt.stateDict({ keys: 'snake' }), kindIs('InvalidArgument', /AdamW.stateDict: unknown option 'keys' \(expected format\)/));
    assert.throws(() => opt.stateDict('pytorch'), kindIs('InvalidArgument', /AdamW.stateDict: options must be an object/));
    opt.dispose();
  }));
});

test('a training loop with StepLR and clipGradNorm_ follows PyTorch for 20 steps', () => owning((keep) => {
  const L = FX.loop;
  om.manualSeed(0);
  const net = new om.nn.Sequential(new om.nn.Linear(4, 3), new om.nn.Tanh(), new om.nn.Linear(3, 2));
  net.loadStateDict(Object.fromEntries(Object.entries(L.init).map(([k, t]) => [k, Float32Array.from(t.data)])));
  const x = keep(om.tensor(L.x.data, { shape: L.x.shape })), y = keep(om.tensor(L.y.data, { shape: L.y.shape }));
  const opt = new om.optim.SGD(net.parameters(), { lr: 0.4, momentum: 0.9, weightDecay: 1e-3 });
  const sched = new S.StepLR(opt, { stepSize: 5, gamma: 0.5 });
  const losses = [], norms = [], lrs = [];
  for (let i = 0; i < 20; i++) {
    opt.zeroGrad();
    const loss = om.tidy(() => om.nn.functional.mseLoss(net.forward(x), y));
    loss.backward();
    const total = om.nn.utils.clipGradNorm_(net.parameters(), 0.5);
    norms.push(total.item());
    opt.step();
    sched.step();
    losses.push(loss.item());
    lrs.push(sched.getLastLr()[0]);
    om.dispose([loss, total]);
  }
  close(losses, L.losses, 2e-5, 'losses');
  close(norms, L.norms, 2e-5, 'total norms');
  close(lrs, L.lrs, 1e-15, 'lrs');
  const sd = net.stateDict();
  for (const [k, t] of Object.entries(L.final)) close(vals(sd[k]), t.data, 5e-5, `final ${k}`);
  opt.dispose();
  net.dispose();
}));

test('a PyTorch-style loop without tidy (clipGradNorm_, OneCycleLR, parameter groups) stays flat', async () => {
  om.manualSeed(1);
  const net = new om.nn.Sequential(new om.nn.Linear(4, 8), new om.nn.Tanh(), new om.nn.Linear(8, 2));
  const x = om.randn([16, 4], { seed: 1 }), y = om.randn([16, 2], { seed: 2 });
  const opt = new om.optim.SGD([{ params: net[0].parameters() }, { params: net[2].parameters(), lr: 0.05 }], { lr: 0.1, momentum: 0.9 });
  const sched = new S.OneCycleLR(opt, [0.1, 0.05], { totalSteps: 200 });
  const step = () => { // no om.tidy, no dispose: the loss and the total norm are dropped each step
    opt.zeroGrad();
    const loss = om.nn.functional.mseLoss(net.forward(x), y);
    loss.backward();
    om.nn.utils.clipGradNorm_(net.parameters(), 0.5);
    opt.step();
    sched.step();
    return loss.item();
  };
  const first = step();
  for (let i = 0; i < 9; i++) step();
  await collectGarbage();
  const base = om.memory();
  let last;
  for (let w = 0; w < 3; w++) {
    for (let i = 0; i < 50; i++) last = step();
    await collectGarbage();
    const m = om.memory();
    assert.equal(m.tensors, base.tensors, `live tensors after window ${w + 1}`);
    assert.equal(m.bytes, base.bytes, `live bytes after window ${w + 1}`);
  }
  assert.ok(last < first, `it trained: ${first} -> ${last}`);
  om.dispose([x, y]);
  opt.dispose();
  net.dispose();
  await collectGarbage();
});

describe('optimizer parameter groups, zeroGrad, stateDict', () => {
  test('groups: options per group, defaults for the rest, lr setter for all, addParamGroup', () => owning((keep) => {
    const [a, b, c] = [keep(om.ones([2])), keep(om.ones([2])), keep(om.ones([1]))];
    for (const t of [a, b, c]) t.requiresGrad = true;
    const opt = new om.optim.SGD([{ params: [a] }, { params: b, lr: 0.5, momentum: 0.9 }], { lr: 0.1 });
    assert.deepEqual(opt.paramGroups.map((g) => [g.lr, g.momentum, g.params.length]), [[0.1, 0, 1], [0.5, 0.9, 1]]);
    assert.equal(opt.defaults.lr, 0.1);
    opt.addParamGroup({ params: [c], weightDecay: 0.1 });
    assert.deepEqual(opt.params, [a, b, c]);
    om.tidy(() => a.add(b).sum().add(c.sum()).backward());
    opt.step();
    close(vals(a), [0.9, 0.9], 1e-7, 'a');
    close(vals(b), [0.5, 0.5], 1e-7, 'b');
    close(vals(c), [1 - 0.1 * 1.1], 1e-7, 'c');
    opt.lr = 0.2;
    assert.deepEqual(opt.paramGroups.map((g) => g.lr), [0.2, 0.2, 0.2]);
    assert.throws(() => opt.addParamGroup({ params: [a] }), kindIs('InvalidArgument', /SGD: some parameters appear in more than one parameter group/));
    assert.throws(() => opt.addParamGroup({ params: [keep(om.zeros([1]))], lr: -1 }), kindIs('InvalidArgument', /SGD: lr must be a number in \[0, Infinity\], got -1/));
    assert.throws(() => opt.addParamGroup({ params: [keep(om.zeros([1]))], betas: [0.9, 0.9] }), kindIs('InvalidArgument', /SGD: parameter group 3: unknown option 'betas'/));
    opt.paramGroups[1].lr = 'fast';
    assert.throws(() => opt.step(), kindIs('InvalidArgument', /SGD.step: lr must be a number in \[0, Infinity\], got a string \("fast"\)/));
    opt.dispose();
  }));
  test('zeroGrad(): gradients dropped; zeroGrad({ setToNone: false }): kept, as zeros', () => owning((keep) => {
    const a = keep(om.ones([2]));
    a.requiresGrad = true;
    const opt = new om.optim.Adam([a]);
    om.tidy(() => a.mul(3).sum().backward());
    opt.zeroGrad({ setToNone: false });
    assert.deepEqual(vals(a.grad), [0, 0]);
    om.tidy(() => a.mul(2).sum().backward());
    assert.deepEqual(vals(a.grad), [2, 2], 'backward accumulates into the zeroed gradient');
    opt.zeroGrad();
    assert.equal(a.grad, null);
    assert.throws(() => opt.zeroGrad({ setToNone: 1 }), kindIs('InvalidArgument', /Adam.zeroGrad: setToNone must be a boolean, got 1/));
    assert.throws(() => opt.zeroGrad({ set_to_none: true }), kindIs('InvalidArgument', /Adam.zeroGrad: unknown option 'set_to_none'/));
    opt.dispose();
  }));
  test('loadStateDict: copies the state, refuses a mismatch and changes nothing then', () => owning((keep) => {
    const mk = () => {
      const p = keep(om.tensor([1, -2]));
      p.requiresGrad = true;
      return p;
    };
    const p = mk(), q = mk();
    const a = new om.optim.Adam([p], { lr: 0.1 }), b = new om.optim.Adam([q], { lr: 0.3 });
    for (let i = 0; i < 3; i++) {
      a.zeroGrad();
      om.tidy(() => p.pow(2).sum().backward());
      a.step();
    }
    const sd = a.stateDict();
    assert.deepEqual(Object.keys(sd.state[0]).sort(), ['expAvg', 'expAvgSq', 'step']);
    assert.deepEqual(sd.paramGroups[0].params, [0]);
    b.loadStateDict(sd);
    assert.equal(b.paramGroups[0].lr, 0.1);
    om.noGrad(() => q.copy_(p));
    a.zeroGrad();
    om.tidy(() => p.pow(2).sum().backward());
    om.tidy(() => q.pow(2).sum().backward());
    a.step();
    b.step();
    assert.deepEqual(vals(q), vals(p));
    const bad = { state: { 0: { expAvg: keep(om.zeros([3])) } }, paramGroups: [{ ...sd.paramGroups[0] }] };
    assert.throws(() => b.loadStateDict(bad), kindIs('ShapeMismatch', /Adam.loadStateDict: state 0.expAvg has shape \[3\], the parameter \[2\]/));
    assert.throws(() => b.loadStateDict({ state: {}, paramGroups: [] }), kindIs('InvalidArgument', /different number of parameter groups \(0, the optimizer has 1\)/));
    // an unknown group key is refused by name, as in PyTorch's format (one rule for both), also a
    // PyTorch spelling of a real option (loading it as absent would keep this optimizer's value)
    assert.throws(() => b.loadStateDict({ ...sd, paramGroups: [{ ...sd.paramGroups[0], foo: 1 }] }), kindIs('InvalidArgument',
      /^Adam\.loadStateDict: paramGroups\[0\] has an option 'foo' that Adam does not have \(expected lr, betas, eps, weightDecay, amsgrad, maximize\)$/));
    assert.throws(() => b.loadStateDict({ ...sd, paramGroups: [{ ...sd.paramGroups[0], weight_decay: 0.5 }] }), kindIs('InvalidArgument',
      /^Adam\.loadStateDict: paramGroups\[0\] has an option 'weight_decay' that Adam does not have/));
    assert.equal(b.stateDict().state[0].step, 4, 'the failed loads changed nothing');
    assert.equal(b.paramGroups[0].foo, undefined);
    // what a scheduler keeps in a group is part of a stateDict() and loads back
    b.loadStateDict({ ...sd, paramGroups: [{ ...sd.paramGroups[0], initialLr: 0.25 }] });
    assert.equal(b.paramGroups[0].initialLr, 0.25);
    a.dispose();
    b.dispose();
  }));
  test('RMSprop and Adagrad: option checks and disposal', () => owning((keep) => {
    const p = keep(om.zeros([1]));
    assert.throws(() => new om.optim.RMSprop([p], { alpha: -1 }), kindIs('InvalidArgument', /RMSprop: alpha must be a number in \[0, Infinity\], got -1/));
    assert.throws(() => new om.optim.Adagrad([p], { lr_decay: 0.1 }), kindIs('InvalidArgument', /Adagrad: unknown option 'lr_decay'/));
    const opt = new om.optim.Adagrad([p]);
    opt.dispose();
    assert.throws(() => opt.step(), kindIs('Disposed', /Adagrad.step: the optimizer was disposed/));
  }));
});

describe('lrScheduler errors: kinds and messages', () => {
  const cases = [
    ['not an optimizer', () => new S.StepLR({}, 3), /StepLR: optimizer must be an om.optim optimizer/],
    ['stepSize 0', (o) => new S.StepLR(o, 0), /StepLR: stepSize must be an integer >= 1, got 0/],
    ['stepSize missing', (o) => new S.StepLR(o, { gamma: 0.5 }), /StepLR: stepSize is required/],
    ['unknown option', (o) => new S.StepLR(o, 3, { step_size: 3 }), /StepLR: unknown option 'step_size' \(expected stepSize, gamma, lastEpoch\)/],
    ['milestones not an array', (o) => new S.MultiStepLR(o, 3), /MultiStepLR: milestones must be an array of integers, got 3/],
    ['ConstantLR factor > 1', (o) => new S.ConstantLR(o, { factor: 2 }), /ConstantLR: factor must be a number in \[0, 1\], got 2/],
    ['LinearLR startFactor 0', (o) => new S.LinearLR(o, { startFactor: 0 }), /LinearLR: startFactor must be a number in \(0, 1\], got 0/],
    ['lambdas of the wrong count', (o) => new S.LambdaLR(o, [() => 1]), /LambdaLR: expected 2 lrLambdas, got 1/],
    ['a lambda returning NaN', (o) => new S.LambdaLR(o, () => NaN), /LambdaLR: lrLambda \(group 0\) returned NaN at epoch 0; expected a finite number/],
    ['OneCycleLR without a length', (o) => new S.OneCycleLR(o, 0.1), /OneCycleLR: give either totalSteps or \(epochs and stepsPerEpoch\)/],
    ['OneCycleLR anneal', (o) => new S.OneCycleLR(o, 0.1, { totalSteps: 5, annealStrategy: 'cosine' }), /OneCycleLR: annealStrategy must be 'cos' or 'linear', got a string \("cosine"\)/],
    ['OneCycleLR maxLr per group', (o) => new S.OneCycleLR(o, [0.1], { totalSteps: 5 }), /OneCycleLR: expected 2 values for maxLr, got 1/],
    ['cosine tMax 0', (o) => new S.CosineAnnealingLR(o, 0), /CosineAnnealingLR: tMax must be a number > 0, got 0/],
    ['warm restarts tMult 0', (o) => new S.CosineAnnealingWarmRestarts(o, 3, { tMult: 0 }), /CosineAnnealingWarmRestarts: tMult must be an integer >= 1, got 0/],
    ['SequentialLR milestones', (o) => new S.SequentialLR(o, [new S.StepLR(o, 2)], [3]), /SequentialLR: expected one milestone fewer than schedulers, got 1 schedulers and 1 milestones/],
    ['plateau factor 1', (o) => new S.ReduceLROnPlateau(o, { factor: 1 }), /ReduceLROnPlateau: factor must be a number in \[0, 1\), got 1/],
    ['plateau mode', (o) => new S.ReduceLROnPlateau(o, { mode: 'minimum' }), /ReduceLROnPlateau: mode must be 'min' or 'max', got a string \("minimum"\)/],
    ['resume without initialLr', (o) => new S.StepLR(o, 2, { lastEpoch: 4 }), /StepLR: param 'initialLr' is not specified in paramGroups\[0\] when resuming an optimizer/],
  ];
  for (const [what, make, re] of cases) {
    test(what, () => owning((keep) => {
      const opt = twoGroups('sgd', keep);
      assert.throws(() => make(opt), kindIs('InvalidArgument', re));
      opt.dispose();
    }));
  }
  test('OneCycleLR past totalSteps; a scheduler on another optimizer in SequentialLR; a non-number metric', () => owning((keep) => {
    const opt = twoGroups('sgd', keep), other = twoGroups('sgd', keep);
    const s = new S.OneCycleLR(opt, 0.1, { totalSteps: 2 });
    s.step();
    s.step();
    assert.throws(() => s.step(), kindIs('InvalidArgument', /OneCycleLR: tried to step 4 times; the specified number of total steps is 2/));
    assert.throws(() => new S.SequentialLR(opt, [new S.StepLR(opt, 2), new S.StepLR(other, 2)], [3]),
      kindIs('InvalidArgument', /SequentialLR: schedulers\[1\] belongs to another optimizer than the one given/));
    const p = new S.ReduceLROnPlateau(opt);
    assert.throws(() => p.step('0.5'), kindIs('InvalidArgument', /ReduceLROnPlateau.step: metric must be a number \(or a 1-element Tensor\), got a string \("0.5"\)/));
    opt.dispose();
    other.dispose();
  }));
});
