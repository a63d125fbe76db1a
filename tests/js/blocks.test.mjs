// torchvision's building blocks in om.nn (js/nn/blocks.js): state-dict keys and outputs against
// PyTorch's (tests/js/fixtures/pytorch/blocks/, written by tools/blocks_reference.py from
// torchvision 0.14 itself), traced with symbolic batch and spatial axes and run in
// onnxruntime-web; the defaults torchvision documents, StochasticDepth's modes and the errors.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, withTraced, vals } from './helpers.mjs';
import { densenet121, DenseNet } from './no-tidy-models.mjs';

memoryHooks();
const nn = om.nn;
const fx = JSON.parse(readFileSync(new URL('./fixtures/pytorch/blocks/blocks.json', import.meta.url), 'utf8'));

const fromEntry = (e) => om.tensor(e.dtype === 'int64' ? e.data.map(BigInt) : e.data, { dtype: e.dtype, shape: e.shape });

/** tools/blocks_reference.py's Blocks, written as its PyTorch source is. */
class Blocks extends nn.Module {
  constructor() {
    super();
    this.stem = new nn.Conv2dNormActivation(3, 8, 3, { stride: 2 });
    this.dw = new nn.Conv2dNormActivation(8, 8, 3, {
      groups: 8, normLayer: (c) => new nn.BatchNorm2d(c, { eps: 1e-3 }), activationLayer: nn.Hardswish,
    });
    this.se = new nn.SqueezeExcitation(8, 4, { activation: nn.SiLU, scaleActivation: nn.Hardsigmoid });
    this.pw = new nn.Conv2dNormActivation(8, 6, 1, { normLayer: null, activationLayer: null });
    this.dil = new nn.Conv2dNormActivation(6, 6, [3, 5], { dilation: 2, normLayer: nn.LayerNorm2d, activationLayer: nn.GELU });
    this.ln = new nn.LayerNorm2d(6, { eps: 1e-6 });
    this.sd = new nn.StochasticDepth(0.3, 'row');
    this.perm = new nn.Permute([0, 2, 3, 1]);
    this.mlp = new nn.MLP(6, [10, 5], { normLayer: nn.LayerNorm, activationLayer: nn.GELU, dropout: 0.1 });
  }

  forward(x) {
    const h = this.se.forward(this.dw.forward(this.stem.forward(x)));
    const g = this.ln.forward(this.dil.forward(this.pw.forward(h)));
    return this.mlp.forward(this.perm.forward(this.sd.forward(g)));
  }
}

function maxError(t, ref) {
  assert.deepEqual(t.shape, ref.shape);
  const a = t.toArray();
  const err = Math.max(...ref.data.map((v, i) => Math.abs(a[i] - v)));
  const scale = Math.max(1, ...ref.data.map(Math.abs));
  assert.ok(err <= 1e-5 * scale, `max |ours - PyTorch| = ${err}`);
  return err;
}

describe('torchvision blocks against PyTorch', () => {
  test(`${fx.model}: keys, outputs at two sizes, traced`, (t) => withTraced((keep, trace) => {
    om.manualSeed(0);
    const net = new Blocks();
    try {
      const own = net.stateDict();
      assert.deepEqual(Object.keys(own), Object.keys(fx.state_dict), 'state-dict keys, in order');
      for (const [k, e] of Object.entries(fx.state_dict)) assert.deepEqual([own[k].shape, own[k].dtype], [e.shape, e.dtype], k);
      const state = Object.fromEntries(Object.entries(fx.state_dict).map(([k, e]) => [k, fromEntry(e)]));
      assert.deepEqual(net.loadStateDict(state), { missingKeys: [], unexpectedKeys: [] });
      net.eval();
      const [x, x2] = fx.inputs.map(fromEntry);
      const errs = fx.outputs.map((ref, i) => maxError(net.forward([x, x2][i]), ref));
      t.diagnostic(`max |ours - PyTorch|: ${errs.map((e) => e.toExponential(2)).join(', ')}`);
      trace(net, { x: [x, ['batch', null, 'h', 'w']] });
    } finally {
      net.dispose();
    }
  }));
});

describe('DenseNet as torchvision writes it (named Sequential, ModuleDict, addModule)', () => {
  test('densenet121: the state-dict keys and shapes of torchvision\'s, in order', () => {
    const keys = JSON.parse(readFileSync(new URL('./fixtures/pytorch/blocks/densenet121_keys.json', import.meta.url), 'utf8'));
    const net = densenet121();
    try {
      assert.deepEqual(Object.entries(net.stateDict()).map(([k, t]) => [k, t.shape]), keys);
    } finally {
      net.dispose();
    }
  });

  test('a small DenseNet runs, and a forward leaves only its result', () => {
    const net = new DenseNet({ growthRate: 4, blockConfig: [2, 2], numInitFeatures: 8, bnSize: 2, numClasses: 3 }).eval();
    const x = om.randn([2, 3, 32, 32], { seed: 4 });
    try {
      const before = om.memory().tensors;
      const y = om.noGrad(() => net.forward(x));
      assert.deepEqual(y.shape, [2, 3]);
      assert.equal(om.memory().tensors, before + 1);
      y.dispose();
      assert.deepEqual(Object.keys(net.features).filter((k) => net.features[k] instanceof nn.Module),
        ['conv0', 'norm0', 'relu0', 'pool0', 'denseblock1', 'transition1', 'denseblock2', 'norm5']);
    } finally {
      net.dispose();
      x.dispose();
    }
  });
});

describe('Conv2dNormActivation', () => {
  test('padding keeps the size ((k - 1) / 2 * dilation); a conv bias only without a norm layer', () => om.tidy(() => {
    const a = new nn.Conv2dNormActivation(2, 4, 5, { dilation: 2 });
    assert.deepEqual(a.at(0).padding, [4, 4]);
    assert.equal(a.at(0).bias, null);
    assert.deepEqual(Object.keys(a.stateDict()), ['0.weight', '1.weight', '1.bias', '1.running_mean', '1.running_var', '1.num_batches_tracked']);
    assert.ok(a.at(2) instanceof nn.ReLU);
    assert.equal(a.outChannels, 4);
    assert.deepEqual(a.forward(om.zeros([1, 2, 7, 7])).shape, [1, 4, 7, 7]);
    const b = new nn.Conv2dNormActivation(2, 4, [1, 3], { normLayer: null, padding: 0 });
    assert.deepEqual([b.length, b.at(0).padding, b.at(0).bias.shape], [2, [0, 0], [4]]);
    const c = new nn.Conv2dNormActivation(2, 4, 3, { bias: true, activationLayer: null });
    assert.deepEqual([c.length, c.at(0).bias.shape], [2, [4]]);
    om.dispose([a, b, c].map((m) => m.stateDict()));
  }));

  test('a layer option that is not a Module class or a function returning a Module is InvalidArgument (nothing is left made)', () => {
    assert.throws(() => new nn.Conv2dNormActivation(2, 4, 3, { normLayer: 'bn' }),
      { kind: 'InvalidArgument', message: /normLayer must be a Module class, a function returning a Module, or null, got a string \("bn"\)/ });
    assert.throws(() => new nn.Conv2dNormActivation(2, 4, 3, { normLayer: null, activationLayer: () => 3 }),
      { kind: 'InvalidArgument', message: /Conv2dNormActivation: activationLayer returned 3, not an om.nn.Module/ });
    assert.throws(() => new nn.Conv2dNormActivation(2, 4, 3, { stride: 1, colour: 1 }), { kind: 'InvalidArgument', message: /unknown option 'colour'/ });
    assert.throws(() => new nn.MLP(4, [8, 2], { normLayer: () => null }), { kind: 'InvalidArgument', message: /MLP: normLayer returned null/ });
    assert.throws(() => new nn.SqueezeExcitation(4, 2, { scaleActivation: 'sigmoid' }), { kind: 'InvalidArgument', message: /SqueezeExcitation: scaleActivation must be/ });
    assert.throws(() => new nn.MLP(4, []), { kind: 'InvalidArgument', message: /MLP: hiddenChannels must be a non-empty array/ });
    assert.throws(() => new nn.Permute(2), { kind: 'InvalidArgument', message: /Permute: dims must be an array/ });
  });
});

describe('StochasticDepth', () => {
  test('identity in eval mode and for p = 0; rows dropped or scaled by 1 / (1 - p) in training', () => om.tidy(() => {
    const x = om.ones([64, 3]);
    const sd = new nn.StochasticDepth(0.5, 'row').eval();
    assert.equal(sd.forward(x), x);
    assert.equal(nn.functional.stochasticDepth(x, 0, 'batch'), x);
    sd.train();
    om.manualSeed(3);
    const rows = vals(sd.forward(x));
    const kept = [];
    for (let r = 0; r < 64; r++) {
      const row = rows.slice(3 * r, 3 * r + 3);
      assert.ok(row.every((v) => v === row[0]) && (row[0] === 0 || row[0] === 2), `row ${r}: ${row}`);
      kept.push(row[0] === 2);
    }
    const n = kept.filter(Boolean).length;
    assert.ok(n > 16 && n < 48, `${n} of 64 rows kept at p = 0.5`);
    const batch = new nn.StochasticDepth(0.25, 'batch');
    const seen = new Set();
    for (let i = 0; i < 20; i++) {
      const v = vals(batch.forward(x));
      assert.ok(v.every((e) => e === v[0]), 'the whole batch together');
      seen.add(v[0]);
    }
    assert.deepEqual([...seen].sort(), [0, Math.fround(4 / 3)], 'dropped (0) or kept and scaled by 1 / 0.75');
    assert.deepEqual(vals(nn.functional.stochasticDepth(x, 1, 'row')), Array(192).fill(0));
  }));

  test('p outside [0, 1] or an unknown mode is InvalidArgument', () => {
    assert.throws(() => new nn.StochasticDepth(1.5, 'row'), { kind: 'InvalidArgument', message: /drop probability has to be between 0 and 1, but got 1.5/ });
    assert.throws(() => new nn.StochasticDepth(0.1, 'col'), { kind: 'InvalidArgument', message: /mode has to be either 'batch' or 'row'/ });
  });
});
