// 1-D pools (maxPool1d, avgPool1d, adaptiveAvgPool1d: the 2-D ops over [N, C, 1, L]) and
// instanceNorm (groupNorm with a group per channel) against PyTorch
// (tests/js/fixtures/pytorch/ops/pools_norms.json, written by tools/pytorch_composites.py): values
// and gradients; the modules; argument errors; traced with a symbolic length and batch and run in
// onnxruntime-web and the Session at other sizes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, vals, near, throwsKind, withTraced, checkPyTorchCase } from './helpers.mjs';

memoryHooks();
const F = () => om.nn.functional;
const FIXTURE = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/pools_norms.json', import.meta.url), 'utf8'));

function call(c, xs) {
  const { kernelSize, outputSize, weight, bias, ...o } = c.args;
  if (c.op === 'adaptiveAvgPool1d') return F().adaptiveAvgPool1d(xs[0], outputSize);
  if (c.op === 'instanceNorm') return F().instanceNorm(xs[0], { ...o, ...(weight ? { weight: xs[1], bias: xs[2] } : {}) });
  return F()[c.op](xs[0], kernelSize, o);
}

describe('1-D pools and instance norm against PyTorch', () => {
  for (const [k, c] of FIXTURE.cases.entries()) {
    test(`${c.op} ${JSON.stringify(c.args)} on [${c.inputs[0].shape}] (case ${k})`, () => om.tidy(() => checkPyTorchCase(c, (xs) => call(c, xs))));
  }

  test('modules: the functions with their options; InstanceNorm affine parameters as PyTorch names them', () => om.tidy(() => {
    const x = om.randn([2, 3, 9], { seed: 1 });
    const same = (a, b) => near(vals(a), vals(b), 0, 'module');
    same(new om.nn.MaxPool1d(3, { stride: 2, padding: 1 }).forward(x), F().maxPool1d(x, 3, { stride: 2, padding: 1 }));
    same(new om.nn.AvgPool1d(2, { ceilMode: true }).forward(x), F().avgPool1d(x, 2, { ceilMode: true }));
    same(new om.nn.AdaptiveAvgPool1d(4).forward(x), F().adaptiveAvgPool1d(x, 4));
    same(new om.nn.AdaptiveAvgPool1d(null).forward(x), x);
    const n1 = new om.nn.InstanceNorm1d(3, { affine: true });
    assert.deepEqual(Object.keys(n1.stateDict()), ['weight', 'bias']);
    same(n1.forward(x), F().instanceNorm(x));
    assert.deepEqual(Object.keys(new om.nn.InstanceNorm2d(3).stateDict()), []);
    assert.deepEqual(new om.nn.InstanceNorm2d(3).forward(om.randn([3, 4, 5], { seed: 2 })).shape, [3, 4, 5]); // unbatched
    assert.deepEqual(F().maxPool1d(om.randn([3, 8], { seed: 3 }), 2).shape, [3, 4]);
  }));

  test('argument errors', () => om.tidy(() => {
    const x = om.randn([2, 3, 9], { seed: 1 });
    throwsKind(() => F().maxPool1d(om.ones([1, 1, 2, 2]), 2), 'InvalidArgument', /maxPool1d: takes \[N, C, L\] or \[C, L\], got \[1,1,2,2\]/);
    throwsKind(() => F().maxPool1d(x, [2, 2]), 'InvalidArgument', /maxPool1d: kernelSize must be an integer or 1 integer, got 2/);
    throwsKind(() => F().avgPool1d(x, 2, { divisorOverride: 3 }), 'InvalidArgument', /avgPool1d: unknown option 'divisorOverride'/);
    throwsKind(() => F().adaptiveAvgPool1d(x, [2, 3]), 'InvalidArgument', /adaptiveAvgPool1d: outputSize must be an integer, got 2 of them/);
    throwsKind(() => new om.nn.AdaptiveAvgPool1d(0), 'InvalidArgument', /AdaptiveAvgPool1d: outputSize must be a positive integer/);
    throwsKind(() => new om.nn.InstanceNorm1d(3, { trackRunningStats: true }), 'InvalidArgument', /InstanceNorm1d: trackRunningStats is not supported/);
    throwsKind(() => new om.nn.InstanceNorm2d(3).forward(om.ones([3, 9])), 'InvalidArgument', /InstanceNorm2d: takes 4-D input \[N, C, \.\.\.\] \(or 3-D without the batch\), got \[3,9\]/);
    throwsKind(() => new om.nn.InstanceNorm1d(4, { affine: true }).forward(x), 'InvalidArgument', /InstanceNorm1d: the input has 3 channels, the module 4 \(numFeatures\)/);
    throwsKind(() => F().instanceNorm(x, { runningMean: om.zeros([3]) }), 'InvalidArgument', /instanceNorm: running statistics are not supported/);
  }));
});

describe('traced with a symbolic batch and length', () => {
  test('a 1-D conv net: conv1d, instance norm, max pool with ceil mode, adaptive average pool', () => withTraced((keep, trace) => {
    const conv = new om.nn.Conv1d(2, 4, 3, { padding: 1 }), norm = new om.nn.InstanceNorm1d(4, { affine: true });
    try {
      const fn = (x) => F().adaptiveAvgPool1d(F().maxPool1d(norm.forward(conv.forward(x)).relu(), 3, { stride: 2, ceilMode: true }), 3);
      trace(fn, { x: [om.randn([2, 2, 17], { seed: 4 }), ['B', null, 'L']] });
    } finally {
      conv.dispose();
      norm.dispose();
    }
  }));
});
