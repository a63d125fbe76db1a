// om.nn.init (js/nn/init.js): PyTorch's torch.nn.init. Each initialiser writes its distribution into
// the tensor in place (checked by the sample's mean, spread and bounds over 18,432 values at a
// fixed seed), returns it, records nothing for autograd, and takes PyTorch's arguments
// positionally or as options; bad arguments are InvalidArgument with PyTorch's messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks } from './helpers.mjs';

memoryHooks();
const { init } = om.nn;

/** [mean, std, min, max] of a tensor's values. */
function stats(t) {
  const a = t.toArray();
  const mean = a.reduce((x, y) => x + y, 0) / a.length;
  const std = Math.sqrt(a.reduce((x, y) => x + (y - mean) ** 2, 0) / a.length);
  return [mean, std, Math.min(...a), Math.max(...a)];
}

/** Asserts a sample's mean and std are within 3% of the spread (about 4 standard errors at this size) of the distribution's. */
function assertDistribution(t, mean, std, label) {
  const [m, s] = stats(t);
  assert.ok(Math.abs(m - mean) <= 0.03 * std, `${label}: mean ${m}, expected ${mean}`);
  assert.ok(Math.abs(s - std) <= 0.03 * std, `${label}: std ${s}, expected ${std}`);
}

test('each initialiser draws its distribution in place, unrecorded, and returns the tensor', () => {
  om.manualSeed(3);
  const conv = new om.nn.Conv2d(32, 64, 3); // weight [64, 32, 3, 3]: fan_in 288, fan_out 576
  const w = conv.weight;
  try {
    const uniformStd = (b) => b / Math.sqrt(3); // of uniform in [-b, b]
    assert.equal(init.kaimingNormal_(w, { mode: 'fan_out', nonlinearity: 'relu' }), w);
    assertDistribution(w, 0, Math.sqrt(2 / 576), 'kaimingNormal_ fan_out relu');
    init.kaimingNormal_(w); // leaky_relu with a = 0 over fan_in
    assertDistribution(w, 0, Math.sqrt(2 / 288), 'kaimingNormal_ defaults');
    init.kaimingUniform_(w, Math.sqrt(5)); // nn.Conv2d's own reset_parameters: bound 1 / sqrt(fan_in)
    assertDistribution(w, 0, uniformStd(1 / Math.sqrt(288)), 'kaimingUniform_(a = sqrt(5))');
    assert.ok(stats(w)[2] >= -1 / Math.sqrt(288) && stats(w)[3] <= 1 / Math.sqrt(288));
    init.xavierUniform_(w, { gain: 2 });
    assertDistribution(w, 0, uniformStd(2 * Math.sqrt(6 / (288 + 576))), 'xavierUniform_ gain 2');
    init.xavierNormal_(w);
    assertDistribution(w, 0, Math.sqrt(2 / (288 + 576)), 'xavierNormal_');
    init.normal_(w, 1, 0.5);
    assertDistribution(w, 1, 0.5, 'normal_(1, 0.5)');
    init.uniform_(w, { a: -3, b: 1 });
    assertDistribution(w, -1, uniformStd(2), 'uniform_(-3, 1)');
    assert.ok(stats(w)[2] >= -3 && stats(w)[3] < 1);
    init.truncNormal_(w, { std: 0.02 }); // as ViT's and MaxViT's init: the bounds +-2 hold every draw
    assertDistribution(w, 0, 0.02, 'truncNormal_ std 0.02');
    init.truncNormal_(w, 0, 1, -0.5, 0.5); // the middle of a unit normal: std 0.2841
    const [m, s, lo, hi] = stats(w);
    assert.ok(lo >= -0.5 && hi <= 0.5 && Math.abs(m) < 0.01 && Math.abs(s - 0.2841) < 0.01, `truncNormal_ in [-0.5, 0.5]: ${[m, s, lo, hi]}`);
    for (const [f, v] of [[init.zeros_, 0], [init.ones_, 1], [(t) => init.constant_(t, -2.5), -2.5]]) {
      assert.equal(f(w), w);
      assert.deepEqual(stats(w), [v, 0, v, v]);
    }
    assert.ok(w.requiresGrad && w.isLeaf && w.grad === null, 'still a leaf parameter, no gradient');
    om.tidy(() => conv.forward(om.randn([1, 32, 3, 3], { seed: 1 })).sum().backward()); // the writes left no graph: backward reaches w as a leaf
    assert.deepEqual(w.grad.shape, [64, 32, 3, 3]);
  } finally {
    conv.dispose();
  }
});

test('calculateGain is PyTorch\'s table', () => {
  for (const n of ['linear', 'conv1d', 'conv2d', 'conv3d', 'conv_transpose1d', 'conv_transpose2d', 'conv_transpose3d', 'sigmoid']) {
    assert.equal(init.calculateGain(n), 1, n);
  }
  assert.equal(init.calculateGain('tanh'), 5 / 3);
  assert.equal(init.calculateGain('relu'), Math.sqrt(2));
  assert.equal(init.calculateGain('selu'), 3 / 4);
  assert.equal(init.calculateGain('leaky_relu'), Math.sqrt(2 / (1 + 0.01 ** 2)));
  assert.equal(init.calculateGain('leaky_relu', 0.2), Math.sqrt(2 / (1 + 0.04)));
});

test('bad arguments are InvalidArgument with PyTorch\'s messages, and write nothing', () => {
  const w = om.ones([4, 3]);
  const v = om.ones([3]);
  const i = om.zeros([2, 2], { dtype: 'int64' });
  const bad = (re) => (e) => e instanceof om.OmError && e.kind === 'InvalidArgument' && re.test(e.message);
  try {
    assert.throws(() => init.kaimingNormal_(v), bad(/^kaimingNormal_: Fan in and fan out can not be computed for tensor with fewer than 2 dimensions$/));
    assert.throws(() => init.xavierUniform_(v), bad(/^xavierUniform_: Fan in and fan out can not be computed/));
    assert.throws(() => init.kaimingUniform_(w, { mode: 'fan' }), bad(/^kaimingUniform_: Mode fan not supported, please use one of fan_in, fan_out$/));
    assert.throws(() => init.kaimingNormal_(w, 0, 'fan_in', 'softmax'), bad(/^calculateGain: Unsupported nonlinearity softmax$/));
    assert.throws(() => init.calculateGain('leaky_relu', '0.2'), bad(/^calculateGain: negative_slope a string \("0.2"\) not a valid number$/));
    assert.throws(() => init.normal_(w, '1'), bad(/^normal_: mean must be a number, got a string \("1"\)$/));
    assert.throws(() => init.normal_(w, { sd: 1 }), bad(/^normal_: unknown option 'sd' \(expected 'mean', 'std'\)$/));
    assert.throws(() => init.uniform_(w, 0, 1, 2), bad(/^uniform_: takes at most 3 arguments, got 4$/));
    assert.throws(() => init.truncNormal_(w, 0, 1, 2, 1), bad(/^truncNormal_: the bounds must satisfy a < b, got a = 2, b = 1$/));
    assert.throws(() => init.truncNormal_(w, 0, -1), bad(/^truncNormal_: std must be at least 0, got -1$/));
    assert.throws(() => init.truncNormal_(w, 0, 1, 9, 10), bad(/^truncNormal_: \[9, 10\] holds too little of normal\(0, 1\) to draw from$/));
    assert.throws(() => init.zeros_(i), bad(/^constant_: tensor must be float32, got int64$/));
    assert.throws(() => init.constant_(w, null), bad(/^constant_: val must be a number, got null$/));
    assert.throws(() => init.ones_([1, 2]), bad(/^constant_: tensor must be an om.Tensor, got /));
    assert.deepEqual(stats(w), [1, 0, 1, 1], 'nothing written');
  } finally {
    om.dispose([w, v, i]);
  }
});
