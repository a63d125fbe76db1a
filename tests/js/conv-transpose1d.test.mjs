// F.convTranspose1d and nn.ConvTranspose1d against PyTorch (tests/js/fixtures/pytorch/ops/
// conv_transpose1d.json, written by tools/pytorch_conv_grid.py): values and gradients of the
// input, weight and bias; finite differences; the module's weight, bias and state dict; argument
// errors; traced and run in onnxruntime-web and the Session, also at other sizes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, vals, near, throwsKind, withTraced, checkPyTorchCase, gradcheck } from './helpers.mjs';

memoryHooks();
const F = () => om.nn.functional;
const FIXTURE = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/conv_transpose1d.json', import.meta.url), 'utf8'));

describe('convTranspose1d against PyTorch', () => {
  for (const [k, c] of FIXTURE.cases.entries()) {
    const { bias, ...o } = c.args;
    test(`${JSON.stringify(c.args)} on [${c.inputs[0].shape}] (case ${k})`, () => om.tidy(() => checkPyTorchCase(c, (xs) => F().convTranspose1d(xs[0], xs[1], bias ? xs[2] : null, o))));
  }

  test('gradients by finite differences', () => om.tidy(() => {
    gradcheck((a, w, b) => F().convTranspose1d(a, w, b, { stride: 2, padding: 1, outputPadding: 1, groups: 2, dilation: 2 }),
      om.randn([1, 2, 4], { seed: 1 }), om.randn([2, 2, 2], { seed: 2 }), om.randn([4], { seed: 3 }));
  }));

  test('nn.ConvTranspose1d: PyTorch\'s weight layout, bias, state dict, and the function', () => om.tidy(() => {
    om.manualSeed(5);
    const m = new om.nn.ConvTranspose1d(4, 6, 3, { stride: 2, outputPadding: 1, groups: 2 });
    try {
      assert.deepEqual(m.weight.shape, [4, 3, 3]);
      assert.deepEqual(m.bias.shape, [6]);
      assert.deepEqual(Object.keys(m.stateDict()), ['weight', 'bias']);
      assert.deepEqual([m.stride, m.padding, m.outputPadding, m.dilation, m.groups], [[2], [0], [1], [1], 2]);
      // PyTorch's init: uniform in +-1/sqrt(fan_in), fan_in = outChannels/groups * k = 9
      assert.ok(vals(m.weight).every((v) => Math.abs(v) <= 1 / 3));
      const x = om.randn([2, 4, 5], { seed: 6 });
      const y = m.forward(x);
      assert.deepEqual(y.shape, [2, 6, 12]); // (5 - 1) 2 + 3 + 1
      near(vals(y), vals(F().convTranspose1d(x, m.weight, m.bias, { stride: 2, outputPadding: 1, groups: 2 })), 0, 'module');
      assert.deepEqual(new om.nn.ConvTranspose1d(2, 2, { kernelSize: 2, bias: false }).bias, null);
    } finally {
      m.dispose();
    }
  }));

  test('argument errors', () => om.tidy(() => {
    const x = om.randn([1, 2, 5], { seed: 7 }), w = om.randn([2, 3, 2], { seed: 8 });
    throwsKind(() => F().convTranspose1d(x, w.unsqueeze(2)), 'InvalidArgument', /^convTranspose1d: weight must be \[C, O\/groups, k\], got \[2,3,1,2\]$/);
    throwsKind(() => F().convTranspose1d(x.unsqueeze(0), w), 'InvalidArgument', /^convTranspose1d: takes \[N, C, L\] or \[C, L\], got \[1,1,2,5\]$/);
    throwsKind(() => F().convTranspose1d(x, w, null, { stride: [1, 2] }), 'InvalidArgument', /^convTranspose1d: stride must be an integer or 1 integer, got 2$/);
    // the checks of the 2-D op it runs (as the 1-D pools'), which names itself and the unit height
    throwsKind(() => F().convTranspose1d(x, w, null, { stride: 2, outputPadding: 2 }), 'InvalidArgument', /^convTranspose2d: output_padding 2 must be smaller than either stride \(2\) or dilation \(1\)$/);
    throwsKind(() => F().convTranspose1d(x, w, null, { outputPad: 1 }), 'InvalidArgument', /^convTranspose1d: unknown option 'outputPad'/);
    throwsKind(() => F().convTranspose1d(x, om.randn([3, 3, 2], { seed: 9 })), 'ShapeMismatch', /^convTranspose2d: input \[1,2,1,5\] has 2 channels, weight \[3,3,1,2\] expects 3/);
  }));
});

describe('traced, run in onnxruntime-web and the Session', () => {
  test('convTranspose1d with a symbolic batch and length (odd, 1), groups, dilation, output padding; the module', () => withTraced((keep, trace) => {
    const w = om.randn([4, 3, 3], { seed: 10 }), b = om.randn([6], { seed: 11 });
    trace((x) => F().convTranspose1d(x, w, b, { stride: 2, padding: 1, outputPadding: 1, groups: 2, dilation: 2 }), { x: [om.randn([2, 4, 7], { seed: 12 }), ['B', null, 'L']] });
    trace((x) => F().convTranspose1d(x, w.narrow(0, 0, 2), null, { stride: 3 }), { x: [om.randn([2, 2, 5], { seed: 13 }), ['B', null, 'L']] });
    om.manualSeed(14);
    const m = new om.nn.ConvTranspose1d(3, 2, 2, { stride: 2 });
    try {
      trace(m, { x: [om.randn([2, 3, 4], { seed: 15 }), ['B', null, 'L']] });
    } finally {
      m.dispose();
    }
  }));
});
