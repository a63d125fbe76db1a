// F.gridSample (the op grid_sample, src/ops/grid.c) against PyTorch
// (tests/js/fixtures/pytorch/ops/grid_sample.json, written by tools/pytorch_conv_grid.py): 4-D
// modes bilinear, nearest and bicubic, 5-D modes bilinear (trilinear) and nearest, padding zeros,
// border and reflection, alignCorners both ways, points outside the input, sizes of 1; the
// gradients to the input and the grid (PyTorch's and finite differences); non-finite coordinates
// (4-D and 5-D, where PyTorch's kernels differ); argument errors (kind and message); traced as
// one GridSample node and run in onnxruntime-web and the Session with a symbolic batch, and with
// the input's height and width and the grid's sizes symbolic, affineGrid feeding it (a spatial
// transformer's sampler).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, throwsKind, withTraced, checkPyTorchCase, gradcheck } from './helpers.mjs';

memoryHooks();
const F = () => om.nn.functional;
const FIXTURE = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/grid_sample.json', import.meta.url), 'utf8'));

describe('gridSample against PyTorch', () => {
  for (const [k, c] of FIXTURE.cases.entries()) {
    test(`${JSON.stringify(c.args)} (case ${k})`, () => om.tidy(() => checkPyTorchCase(c, (xs) => F().gridSample(xs[0], xs[1], c.args), { value: 1e-5, grad: 1e-4 })));
  }

  test('nearest: the grid gets no gradient (PyTorch\'s is zeros), the input its picked points\' ', () => om.tidy(() => {
    const x = om.randn([1, 1, 3, 3], { seed: 6 }), grid = om.tensor([-1, -1, 0.1, 0.05, 2, 0], { shape: [1, 1, 3, 2] });
    x.requiresGrad = true;
    grid.requiresGrad = true;
    F().gridSample(x, grid, { mode: 'nearest', alignCorners: true }).sum().backward();
    assert.equal(grid.grad, null);
    assert.deepEqual(Array.from(x.grad.toArray()), [1, 0, 0, 0, 1, 0, 0, 0, 0]); // (0, 0), (1, 1); (3, 1) lies outside
  }));

  test('gradients by finite differences (points away from the cells\' edges)', () => om.tidy(() => {
    const x = () => om.randn([1, 2, 3, 4], { seed: 1 }); // fresh leaves: gradcheck reads each one's .grad
    const grid = () => om.tensor([-0.61, 0.23, 0.37, -0.52, 0.84, 0.71, -0.28, -0.93, 1.17, 0.13, -1.21, 0.48], { shape: [1, 2, 3, 2] });
    for (const paddingMode of ['zeros', 'border', 'reflection']) {
      gradcheck((a, g) => F().gridSample(a, g, { paddingMode }), x(), grid());
      const fixed = grid();
      gradcheck((a) => F().gridSample(a, fixed, { mode: 'nearest', paddingMode, alignCorners: true }), x());
    }
  }));

  test('bicubic and 5-D: gradients by finite differences (points away from the cells\' edges)', () => om.tidy(() => {
    const grid = () => om.tensor([-0.61, 0.23, 0.37, -0.52, 0.84, 0.71, -0.28, -0.93, 1.17, 0.13, -1.21, 0.48], { shape: [1, 2, 3, 2] });
    const grid5 = () => om.tensor([-0.61, 0.23, 0.37, -0.52, 0.84, 0.71, -0.28, -0.93, 1.17, 0.13, -1.21, 0.48], { shape: [1, 2, 1, 2, 3] });
    for (const paddingMode of ['zeros', 'border', 'reflection']) {
      gradcheck((a, g) => F().gridSample(a, g, { mode: 'bicubic', paddingMode }), om.randn([1, 2, 3, 4], { seed: 1 }), grid());
      gradcheck((a, g) => F().gridSample(a, g, { paddingMode, alignCorners: true }), om.randn([1, 2, 2, 3, 4], { seed: 8 }), grid5());
    }
  }));

  test('an empty grid samples nothing, in PyTorch\'s shapes, and gives the input a zero gradient', () => om.tidy(() => {
    for (const mode of ['bilinear', 'nearest', 'bicubic']) {
      const x = om.randn([1, 2, 3, 4], { seed: 12 });
      x.requiresGrad = true;
      const y = F().gridSample(x, om.zeros([1, 0, 3, 2]), { mode });
      assert.deepEqual(y.shape, [1, 2, 0, 3]);
      y.sum().backward();
      assert.deepEqual(Array.from(x.grad.toArray()), new Array(24).fill(0));
    }
    assert.deepEqual(F().gridSample(om.randn([1, 2, 3, 4, 5], { seed: 13 }), om.zeros([1, 2, 0, 1, 3])).shape, [1, 2, 2, 0, 1]);
    assert.deepEqual(F().gridSample(om.zeros([0, 2, 3, 4]), om.zeros([0, 2, 3, 2])).shape, [0, 2, 2, 3]); // PyTorch's too
    assert.deepEqual(F().gridSample(om.zeros([1, 0, 3, 4]), om.zeros([1, 2, 3, 2])).shape, [1, 0, 2, 3]);
  }));

  // PyTorch 1.13 (F.grid_sample on the CPU, zeros padding): a point with a NaN or infinite
  // coordinate is NaN in bilinear mode (its weights are NaN, and the masked value 0 times NaN is
  // NaN) and 0 in nearest mode; RAFT's sampler divides by a pyramid level's width - 1, which is 0
  // where the level is one column wide. The other points are what they are without it.
  test('zeros padding: a non-finite coordinate gives NaN (bilinear) or 0 (nearest), as PyTorch', () => om.tidy(() => {
    const x = om.randn([1, 2, 3, 4], { seed: 8 });
    const finite = [0.3, -0.4, 0.8, 0.1, -0.2, 0.5, 0.6, -0.9];
    for (const bad of [NaN, Infinity, -Infinity]) {
      for (const alignCorners of [true, false]) {
        const grid = om.tensor([...finite, bad, 0.2, -0.1, bad], { shape: [1, 1, 6, 2] });
        const fine = om.tensor(finite, { shape: [1, 1, 4, 2] });
        for (const mode of ['bilinear', 'nearest']) {
          const y = F().gridSample(x, grid, { mode, alignCorners }).toArray(), ok = F().gridSample(x, fine, { mode, alignCorners }).toArray();
          for (let ch = 0; ch < 2; ch++) {
            assert.deepEqual(Array.from(y.slice(ch * 6, ch * 6 + 4)), Array.from(ok.slice(ch * 4, ch * 4 + 4)), `${mode}, ${bad}: the finite points`);
            for (const k of [4, 5]) assert.ok(mode === 'bilinear' ? Number.isNaN(y[ch * 6 + k]) : y[ch * 6 + k] === 0, `${mode}, ${bad}, alignCorners ${alignCorners}: point ${k} is ${y[ch * 6 + k]}`);
          }
        }
      }
    }
  }));

  // PyTorch 1.13's CPU kernels differ here, and the op follows each: over 2 axes (its vectorized
  // kernel) border and reflection take a NaN coordinate to the first pixel; over 3 (its scalar
  // kernel) a coordinate that is not finite reads 0 with zeros padding in either mode, and border
  // takes NaN to the last pixel, reflection NaN and both infinities (tools/pytorch_conv_grid.py's
  // cases hold finite grids; these are the values /usr/bin/python3's torch gave).
  test('non-finite coordinates with each padding, 4-D and 5-D, as PyTorch\'s kernels', () => om.tidy(() => {
    const like = { // per padding and rank: the grid value a NaN, +inf and -inf x reads as (null: the point is 0)
      zeros: { 4: null, 5: [null, null, null] }, border: { 4: [-1, 1, -1], 5: [1, 1, -1] }, reflection: { 4: [-1, -1, -1], 5: [1, 1, 1] },
    };
    for (const rank of [4, 5]) {
      const x = om.randn(rank === 4 ? [1, 2, 3, 4] : [1, 2, 2, 3, 4], { seed: 16 }), rest = rank === 4 ? [0.1] : [0.1, 0.2];
      const at = (v) => om.tensor([v, ...rest], { shape: [1, 1, ...(rank === 5 ? [1] : []), 1, rank - 2] });
      for (const [paddingMode, by] of Object.entries(like)) {
        for (const [k, bad] of [NaN, Infinity, -Infinity].entries()) {
          for (const mode of ['bilinear', 'nearest']) {
            for (const alignCorners of [true, false]) {
              const y = Array.from(F().gridSample(x, at(bad), { mode, paddingMode, alignCorners }).toArray()), what = `${rank}-D ${paddingMode} ${mode} ${alignCorners}: x ${bad}`;
              const v = rank === 4 && paddingMode === 'zeros' ? (mode === 'nearest' ? 0 : NaN) : by[rank][k];
              if (v === null || v === 0) assert.deepEqual(y, [0, 0], what);
              else if (Number.isNaN(v)) assert.ok(y.every(Number.isNaN), `${what}: ${y}`);
              else assert.deepEqual(y, Array.from(F().gridSample(x, at(v), { mode, paddingMode, alignCorners }).toArray()), what);
            }
          }
        }
      }
    }
  }));

  test('argument errors', () => om.tidy(() => {
    const x = om.randn([2, 3, 4, 5], { seed: 2 }), grid = om.zeros([2, 3, 3, 2]);
    throwsKind(() => F().gridSample(x, grid, { mode: 'trilinear' }), 'InvalidArgument', /^gridSample: mode must be 'bilinear', 'nearest' or 'bicubic', got a string \("trilinear"\)/);
    throwsKind(() => F().gridSample(x.unsqueeze(2), om.zeros([2, 1, 3, 3, 3]), { mode: 'bicubic' }), 'InvalidArgument',
      /^gridSample: bicubic interpolation only supports 4-D input, got \[2,3,1,4,5\]$/);
    const shapes = /^gridSample: takes input \[N, C, H, W\] with grid \[N, Ho, Wo, 2\], or input \[N, C, D, H, W\] with grid \[N, Do, Ho, Wo, 3\], got /;
    throwsKind(() => F().gridSample(x.unsqueeze(2), om.zeros([2, 1, 3, 3, 2])), 'ShapeMismatch', new RegExp(`${shapes.source}\\[2,3,1,4,5\\] and \\[2,1,3,3,2\\]$`));
    throwsKind(() => F().gridSample(x, grid, { paddingMode: 'circular' }), 'InvalidArgument', /^gridSample: paddingMode must be 'zeros', 'border' or 'reflection'/);
    throwsKind(() => F().gridSample(x, grid, { alignCorners: 'no' }), 'InvalidArgument', /^gridSample: alignCorners must be a boolean/);
    throwsKind(() => F().gridSample(x, grid, { align: true }), 'InvalidArgument', /^gridSample: unknown option 'align'/);
    throwsKind(() => F().gridSample(x, om.zeros([2, 3, 3, 3])), 'ShapeMismatch', new RegExp(`${shapes.source}\\[2,3,4,5\\] and \\[2,3,3,3\\]$`));
    throwsKind(() => F().gridSample(x.unsqueeze(2), grid), 'ShapeMismatch', shapes);
    throwsKind(() => F().gridSample(x.sum(0), grid), 'ShapeMismatch', shapes);
    throwsKind(() => F().gridSample(x, om.zeros([1, 3, 3, 2])), 'ShapeMismatch',
      /^gridSample: expected grid and input to have same batch size, but got input with sizes \[2,3,4,5\] and grid with sizes \[1,3,3,2\]$/);
    throwsKind(() => F().gridSample(x.long(), grid), 'DtypeMismatch', /^gridSample: takes float32 input and grid, got int64 and float32$/);
    throwsKind(() => F().gridSample(x, grid.long()), 'DtypeMismatch', /^gridSample: takes float32 input and grid, got float32 and int64$/);
    throwsKind(() => F().gridSample(om.zeros([2, 3, 4, 0]), grid), 'InvalidArgument', // PyTorch's refusal
      /^gridSample: expected input to have non-empty spatial dimensions, but input has sizes \[2,3,4,0\] with dimension 3 being empty$/);
    throwsKind(() => F().gridSample(x, 'grid'), 'InvalidArgument', /^gridSample: grid must be a Tensor/);
  }));
});

describe('traced, run in onnxruntime-web and the Session', () => {
  test('gridSample in each mode and padding (4-D and 5-D) with a symbolic batch; affineGrid feeding it', () => withTraced((keep, trace) => {
    const grid = om.rand([2, 3, 4, 2], { seed: 3 }).mul(2.6).sub(1.3);
    // one GridSample node (not the old composition's gathers), with its guard of elementwise nodes for grid values
    // that are not finite (src/ops/grid.c lower_grid_sample)
    const oneNode = (tm) => {
      const ops = tm.graph().nodes.map((n) => n.opType);
      assert.equal(ops.filter((t) => t === 'GridSample').length, 1, `${ops}`);
      assert.ok(ops.every((t) => ['GridSample', 'Mul', 'IsNaN', 'Where', 'Sign', 'Clip', 'ReduceSum', 'Transpose'].includes(t)), `${ops}`);
    };
    for (const mode of ['bilinear', 'nearest']) {
      for (const paddingMode of ['zeros', 'border', 'reflection']) {
        oneNode(trace((x, g) => F().gridSample(x, g, { mode, paddingMode, alignCorners: paddingMode === 'border' }), {
          x: [om.randn([2, 3, 5, 6], { seed: 4 }), ['N', null, null, null]], g: [grid, ['N', null, null, null]],
        }));
      }
    }
    trace((x, g) => F().gridSample(x, g, { paddingMode: 'reflection' }), { // the grid's sizes symbolic too
      x: [om.randn([2, 3, 5, 6], { seed: 6 }), ['N', null, null, null]], g: [grid, ['N', 'Ho', 'Wo', null]],
    });
    // the input's H and W symbolic (RAFT samples correlation volumes whose sizes follow the image's):
    // the sampler's bounds are computed from them, and each graph is checked at other sizes, 1 among them
    // (each padding's bounds; reflection's both ways: with alignCorners an If at H or W of 1, where it reflects into a point)
    const modes = [['bilinear', 'zeros', true], ['bilinear', 'border', false], ['bilinear', 'reflection', true], ['bilinear', 'reflection', false], ['nearest', 'zeros', false], ['bicubic', 'zeros', false], ['bicubic', 'border', true]];
    for (const [mode, paddingMode, alignCorners] of modes) { // and the grid's Ho and Wo: every size symbolic
      oneNode(trace((x, g) => F().gridSample(x, g, { mode, paddingMode, alignCorners }), {
        x: [om.randn([2, 3, 5, 6], { seed: 7 }), ['N', null, 'H', 'W']], g: [grid, ['N', 'Ho', 'Wo', null]],
      }));
    }
    oneNode(trace((x, g) => F().gridSample(x, g, { paddingMode: 'border' }), { // 5-D with D, H, W and the grid's sizes symbolic
      x: [om.randn([2, 2, 3, 4, 5], { seed: 14 }), ['N', null, 'D', 'H', 'W']],
      g: [om.rand([2, 2, 3, 2, 3], { seed: 15 }).mul(2.6).sub(1.3), ['N', 'Do', 'Ho', 'Wo', null]],
    }));
    for (const paddingMode of ['zeros', 'border', 'reflection']) { // bicubic; 5-D (trilinear) and nearest
      trace((x, g) => F().gridSample(x, g, { mode: 'bicubic', paddingMode, alignCorners: paddingMode === 'reflection' }), {
        x: [om.randn([2, 3, 5, 6], { seed: 9 }), ['N', null, null, null]], g: [grid, ['N', 'Ho', null, null]],
      });
      const grid5 = om.rand([2, 2, 3, 2, 3], { seed: 10 }).mul(2.6).sub(1.3);
      trace((x, g) => [F().gridSample(x, g, { paddingMode }), F().gridSample(x, g, { mode: 'nearest', paddingMode, alignCorners: true })], {
        x: [om.randn([2, 2, 3, 4, 5], { seed: 11 }), ['N', null, null, null, null]], g: [grid5, ['N', null, 'Ho', null, null]],
      });
    }
    // grid values that are not finite or huge: onnxruntime reads some pixel there, PyTorch (eager, the Session)
    // follows its kernels' rules, which the trace's guard writes (reflection, and bicubic with border, keep
    // finite values below 1e9: beyond, onnxruntime reflects otherwise; nearest with reflection keeps no
    // ties outside the input, which onnxruntime rounds before reflecting; docs/operators.md)
    const odd = [NaN, Infinity, -Infinity, 1e30, -1e30, 3e9, 0.5, -0.5, 2.5, 1.5, 0.3, -0.7];
    for (const rank of [4, 5]) {
      for (const mode of rank === 4 ? ['bilinear', 'nearest', 'bicubic'] : ['bilinear', 'nearest']) {
        for (const paddingMode of ['zeros', 'border', 'reflection']) {
          const huge = paddingMode === 'zeros' || (paddingMode === 'border' && mode !== 'bicubic');
          const vals = [];
          const tie = (v) => mode === 'nearest' && paddingMode === 'reflection' && Math.abs(v) >= 1 && Math.abs(v) < 1e9 && v % 0.5 === 0;
          for (const [k, v] of odd.entries()) if ((huge || Math.abs(v) < 1e9) && !tie(v)) vals.push(...Array.from({ length: rank - 2 }, (_, a) => (a === k % (rank - 2) ? v : 0.3 - 0.2 * a)));
          const n = vals.length / (rank - 2), g = om.tensor(vals, { shape: rank === 4 ? [1, 1, n, 2] : [1, 1, 1, n, 3] });
          const x = om.randn(rank === 4 ? [1, 2, 3, 4] : [1, 2, 2, 3, 4], { seed: 17 });
          const tm = om.trace((a, b) => [true, false].map((alignCorners) => F().gridSample(a, b, { mode, paddingMode, alignCorners })), { a: x, b: g });
          keep(tm, { a: x, b: g }, [true, false].map((alignCorners) => F().gridSample(x, g, { mode, paddingMode, alignCorners })), `${rank}-D ${mode} ${paddingMode}`);
        }
      }
    }
    const theta = om.tensor([0.9, -0.2, 0.1, 0.3, 1.1, -0.05], { shape: [1, 2, 3] });
    trace((x) => F().gridSample(x, F().affineGrid(theta.expand([x.shape[0], 2, 3]), [x.shape[0], 3, 4, 4])), {
      x: [om.randn([2, 3, 5, 6], { seed: 5 }), ['N', null, null, null]],
    });
  }));
});
