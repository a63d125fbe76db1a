// F.affineGrid against PyTorch (tests/js/fixtures/pytorch/ops/affine_grid.json, written by
// tools/pytorch_conv_grid.py): 2-D and 3-D grids, alignCorners both ways, sizes of 1; the
// gradient to theta (PyTorch's and finite differences); argument errors; traced and run in
// onnxruntime-web and the Session with a symbolic batch.
import { test, describe } from 'node:test';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, throwsKind, withTraced, checkPyTorchCase, gradcheck } from './helpers.mjs';

memoryHooks();
const F = () => om.nn.functional;
const FIXTURE = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/affine_grid.json', import.meta.url), 'utf8'));

describe('affineGrid against PyTorch', () => {
  for (const [k, c] of FIXTURE.cases.entries()) {
    test(`${JSON.stringify(c.args)} (case ${k})`, () => om.tidy(() => checkPyTorchCase(c, (xs) => F().affineGrid(xs[0], c.args.size, { alignCorners: c.args.alignCorners }))));
  }

  test('the gradient to theta by finite differences', () => om.tidy(() => {
    gradcheck((t) => F().affineGrid(t, [2, 1, 3, 4]), om.randn([2, 2, 3], { seed: 1 }));
    gradcheck((t) => F().affineGrid(t, [1, 1, 2, 3, 2], { alignCorners: true }), om.randn([1, 3, 4], { seed: 2 }));
  }));

  test('argument errors', () => om.tidy(() => {
    const theta = om.randn([2, 2, 3], { seed: 3 });
    throwsKind(() => F().affineGrid(theta, [2, 1, 4]), 'InvalidArgument', /^affineGrid: affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively\. Got size an array of length 3/);
    throwsKind(() => F().affineGrid(theta, [2, 1, 0, 4]), 'InvalidArgument', /^affineGrid: expected non-zero, positive output size\. Got \[2,1,0,4\]/);
    throwsKind(() => F().affineGrid(theta, [3, 1, 4, 4]), 'InvalidArgument', /^affineGrid: expected a batch of 2D affine matrices of shape Nx2x3 for size \[3,1,4,4\]\. Got \[2,2,3\] float32/);
    throwsKind(() => F().affineGrid(theta, [2, 1, 2, 4, 4]), 'InvalidArgument', /^affineGrid: expected a batch of 3D affine matrices of shape Nx3x4/);
    throwsKind(() => F().affineGrid(theta, [2, 1, 4, 4], { alignCorners: 1 }), 'InvalidArgument', /^affineGrid: alignCorners must be a boolean, got 1/);
    throwsKind(() => F().affineGrid(theta, [2, 1, 4, 4], { align: true }), 'InvalidArgument', /^affineGrid: unknown option 'align'/);
  }));
});

describe('traced, run in onnxruntime-web and the Session', () => {
  test('affineGrid with a symbolic batch (the size from theta), 2-D and 3-D', () => withTraced((keep, trace) => {
    trace((t) => F().affineGrid(t, [t.shape[0], 3, 5, 7]), { t: [om.randn([2, 2, 3], { seed: 4 }), ['N', null, null]] });
    trace((t) => F().affineGrid(t, [t.shape[0], 1, 3, 2, 4], { alignCorners: true }), { t: [om.randn([2, 3, 4], { seed: 5 }), ['N', null, null]] });
  }));
});
