// F.interpolate against PyTorch (tests/js/fixtures/pytorch/ops/interpolate.json, written by
// tools/pytorch_interpolate.py): nearest, bilinear and bicubic (align_corners false and true) by
// sizes and scale factors that upsample, downsample, keep a size, and reach 1; the values and
// the gradients of (output * g).sum(); bicubic's gradient by central differences too; bicubic
// traced with symbolic height and width, run in onnxruntime-web and the Session at other sizes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, vals, gradcheck, throwsKind, withTraced } from './helpers.mjs';
import { readGraph } from '../../web-demo/src/graphfile.js';

memoryHooks();
const F = () => om.nn.functional;
const FIXTURE = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/interpolate.json', import.meta.url), 'utf8'));

/** The largest difference of got from want, relative to 1 + |want|. */
function worst(got, want) {
  let m = 0;
  for (let i = 0; i < want.length; i++) m = Math.max(m, Math.abs(got[i] - want[i]) / (1 + Math.abs(want[i])));
  return m;
}

describe('interpolate against PyTorch', () => {
  for (const c of FIXTURE.cases) {
    const arg = c.size ? `size ${c.size}` : `scale ${c.scale_factor}`;
    const name = `${c.mode}${c.align_corners === null ? '' : ` alignCorners ${c.align_corners}`}, [${c.input.shape.slice(2)}] by ${arg}`;
    test(name, () => om.tidy(() => {
      const x = om.tensor(c.input.data, { shape: c.input.shape });
      x.requiresGrad = true;
      const opts = { mode: c.mode, ...(c.size ? { size: c.size } : { scaleFactor: c.scale_factor }) };
      if (c.align_corners !== null) opts.alignCorners = c.align_corners;
      const y = F().interpolate(x, opts);
      assert.deepEqual(y.shape, c.output.shape);
      // nearest picks PyTorch's pixels (the same bits); bilinear's blends and bicubic's four
      // weights a row (Keys' polynomial in float) are within a few float32 roundings of PyTorch's
      const tol = { nearest: 0, linear: 1e-6, bilinear: 1e-6, bicubic: 4e-6, area: 1e-6 }[c.mode];
      assert.ok(worst(vals(y), c.output.data) <= tol, `values: ${worst(vals(y), c.output.data)}`);
      y.mul(om.tensor(c.g.data, { shape: c.g.shape })).sum().backward();
      assert.ok(worst(vals(x.grad), c.grad.data) <= 1e-5, `gradient: ${worst(vals(x.grad), c.grad.data)}`);
    }));
  }

  test('the fixture covers every mode, both alignments, sizes and scales', () => {
    const kinds = new Set(FIXTURE.cases.map((c) => `${c.mode}/${c.align_corners}/${c.size ? 'size' : 'scale'}`));
    for (const k of ['nearest/null/size', 'nearest/null/scale', 'bilinear/false/size', 'bilinear/true/scale', 'bicubic/false/size',
      'bicubic/false/scale', 'bicubic/true/size', 'bicubic/true/scale', 'linear/false/size', 'linear/true/scale', 'area/null/size',
      'area/null/scale']) assert.ok(kinds.has(k), k);
    assert.ok(FIXTURE.cases.some((c) => c.mode === 'nearest' && c.input.shape.length === 3), 'nearest on [N, C, L]');
    assert.ok(FIXTURE.cases.some((c) => c.mode === 'area' && c.input.shape.length === 3), 'area on [N, C, L]');
  });

  test('bicubic: gradients by central differences, the edges repeated, values overshoot', () => om.tidy(() => {
    gradcheck((x) => F().interpolate(x, { size: [5, 3], mode: 'bicubic' }), om.randn([1, 2, 3, 4], { seed: 1 }));
    gradcheck((x) => F().interpolate(x, { scaleFactor: 2, mode: 'bicubic', alignCorners: true }), om.randn([1, 1, 3, 2], { seed: 2 }));
    // a step overshoots (Keys' kernel is negative at distance 1 to 2), as in PyTorch: values are not clamped
    const y = vals(F().interpolate(om.tensor([[[[0, 0, 1, 1]]]]), { size: [1, 8], mode: 'bicubic' }));
    assert.ok(Math.min(...y) < 0 && Math.max(...y) > 1, `${y}`);
    // a constant image stays constant (the weights sum to 1 up to rounding)
    for (const v of vals(F().interpolate(om.full([1, 1, 3, 5], 2), { size: [7, 4], mode: 'bicubic' }))) assert.ok(Math.abs(v - 2) < 1e-6);
  }));

  test('argument errors name the modes', () => om.tidy(() => {
    const x = om.ones([1, 1, 2, 2]);
    throwsKind(() => F().interpolate(x, { size: 4, mode: 'trilinear' }), 'InvalidArgument',
      /mode must be 'nearest', 'linear' \(3-D\), 'bilinear', 'bicubic' \(4-D\) or 'area', got a string \("trilinear"\)/);
    throwsKind(() => F().interpolate(x, { size: 4, alignCorners: false }), 'InvalidArgument', /alignCorners can only be set with mode 'linear', 'bilinear' or 'bicubic', not 'nearest'/);
    throwsKind(() => F().interpolate(x, { size: 4, mode: 'area', alignCorners: true }), 'InvalidArgument', /not 'area'/);
    throwsKind(() => F().interpolate(x, { size: 4, mode: 'linear' }), 'InvalidArgument', /mode 'linear' takes a 3-D input \[N, C, L\], got \[1,1,2,2\] \(use 'bilinear'\)/);
    const row = om.ones([1, 2, 5]);
    throwsKind(() => F().interpolate(row, { size: 4, mode: 'bilinear' }), 'InvalidArgument', /a 3-D input \[N, C, L\] takes mode 'nearest', 'linear' or 'area', not 'bilinear'/);
    throwsKind(() => F().interpolate(row, { size: [4, 4], mode: 'linear' }), 'InvalidArgument', /size of a 3-D input must be a number or 1 number \(L\)/);
    throwsKind(() => F().interpolate(row, { scaleFactor: [2, 2] }), 'InvalidArgument', /scaleFactor of a 3-D input must be a number or 1 number \(L\)/);
    throwsKind(() => F().interpolate(row, { mode: 'area' }), 'InvalidArgument', /give exactly one of size and scaleFactor/);
    throwsKind(() => F().interpolate(om.ones([1, 1, 2, 2, 2]), { size: 4 }), 'ShapeMismatch', /takes a 3-D input \[N, C, L\] or a 4-D input \[N, C, H, W\], got \[1,1,2,2,2\]/);
    const up = new om.nn.Upsample({ scaleFactor: 2, mode: 'bicubic', alignCorners: true });
    assert.deepEqual(up.forward(x).shape, [1, 1, 4, 4]);
  }));

  test('[N, C, L] traced with a symbolic length: linear to the input\'s length after a strided conv, by 3 with alignCorners, nearest by 2; area to a fixed size', () => withTraced((keep, trace) => {
    const w = om.randn([3, 2, 3], { seed: 9 });
    const forms = [
      (x) => F().interpolate(F().conv1d(x, w, null, { stride: 2, padding: 1 }), { size: x.shape[2], mode: 'linear' }),
      (x) => F().interpolate(x, { scaleFactor: 3, mode: 'linear', alignCorners: true }),
      (x) => F().interpolate(x, { scaleFactor: 2 }),
      (x) => F().interpolate(x, { size: 4, mode: 'area' }),
    ];
    for (const fn of forms) {
      const tm = trace(fn, { x: [om.randn([2, 2, 9], { seed: 10 }), ['batch', null, 'len']] });
      for (const len of [1, 2, 4, 8, 31, 500]) {
        if (len < 4 && fn === forms[3]) continue; // PyTorch's adaptive pooling takes any size; kept to where windows are whole
        const x = om.randn([3, 2, len], { seed: len });
        keep(tm, { x }, fn(x), `at len ${len}`);
      }
    }
  }));
});

// Resize's coordinates are the eager kernel's by powers of two only; other scales and
// align_corners are the eager taps (tests/js/graph-economy.test.mjs checks them up to 771 wide).
describe('bicubic traced with symbolic height and width: one Resize (cubic) by powers of two, else the eager taps', () => {
  const HW = ['batch', null, 'h', 'w'];
  const ops = (tm) => tm.graph().nodes.map((n) => n.opType).filter((o) => o !== 'Constant');
  test('by a scale factor 2 and (4, 1/2), to 2h x 4w: Resize; to 2h x 3w, align_corners by sizes: Gathers', () => withTraced((keep, trace) => {
    const x0 = om.randn([2, 3, 4, 6], { seed: 3 });
    const forms = [
      [true, (x) => F().interpolate(x, { scaleFactor: 2, mode: 'bicubic' })],
      [true, (x) => F().interpolate(x, { scaleFactor: [4, 0.5], mode: 'bicubic' })],
      [true, (x) => F().interpolate(x, { size: [2 * x.shape[2], 4 * x.shape[3]], mode: 'bicubic' })],
      [false, (x) => F().interpolate(x, { size: [2 * x.shape[2], 3 * x.shape[3]], mode: 'bicubic' })],
      [false, (x) => F().interpolate(x, { size: [2 * x.shape[2], x.shape[3]], mode: 'bicubic', alignCorners: true })],
    ];
    for (const [resized, fn] of forms) {
      const tm = trace(fn, { x: [x0, HW] });
      if (resized) {
        assert.deepEqual(ops(tm), ['Resize']);
        const resize = readGraph(tm.toOnnx()).nodes.find((n) => n.opType === 'Resize');
        const attr = (name) => resize.attributes.find((a) => a.name === name)?.value;
        assert.equal(attr('mode'), 'cubic');
        assert.equal(attr('cubic_coeff_a'), -0.75);
      } else {
        assert.ok(!ops(tm).includes('Resize') && ops(tm).includes('Gather'), ops(tm).join(','));
      }
      for (const [h, w] of [[1, 2], [3, 5], [7, 2], [16, 10], [33, 14]]) {
        const x = om.randn([1, 3, h, w], { seed: h * 100 + w });
        keep(tm, { x }, fn(x), `at ${h}x${w}`);
      }
    }
  }));

  test('ViT-style position embeddings: a fixed grid resized bicubic to the image\'s patch grid', () => withTraced((keep, trace) => {
    const pos = om.randn([1, 8, 4, 4], { seed: 4 });
    const fn = (x) => {
      const gh = Math.floor(x.shape[2] / 4), gw = Math.floor(x.shape[3] / 4);
      const p = F().interpolate(pos, { size: [gh, gw], mode: 'bicubic', alignCorners: false });
      return F().avgPool2d(x, 4).add(p);
    };
    const tm = trace(fn, { x: [om.randn([1, 8, 16, 24], { seed: 5 }), [null, null, 'H', 'W']] });
    for (const [h, w] of [[4, 4], [8, 20], [28, 12], [64, 36]]) {
      const x = om.randn([1, 8, h, w], { seed: h + w });
      keep(tm, { x }, fn(x), `at ${h}x${w}`);
    }
  }));

  // The scale factor moves with the sizes: the probe that finds the table's extents must run infer
  // with each size's own scale (floor(4 * (h0 + 0.1) / 4) = h0), not the traced one (which gave a
  // fixed 6 rows, and the add refused at H = 28 with shapes [.., 7, 5] and [.., 6, 5]); the graph
  // samples at (dst + 0.5) * (float)(1 / scale) - 0.5 with 1 / scale computed in double as PyTorch.
  test('DINO\'s position embeddings: resized bicubic by scale_factor (h0 + 0.1) / 4 of the patch grid', () => withTraced((keep, trace) => {
    const pos = om.randn([1, 8, 4, 4], { seed: 6 });
    const fn = (x) => { // the patch grid first, as ViT's patch embedding: its extents are what the scale is fitted to
      const patches = F().avgPool2d(x, 4);
      const h0 = patches.shape[2] + 0.1, w0 = patches.shape[3] + 0.1;
      const p = F().interpolate(pos, { scaleFactor: [h0 / Math.sqrt(16), w0 / Math.sqrt(16)], mode: 'bicubic', alignCorners: false });
      return patches.add(p);
    };
    const tm = trace(fn, { x: [om.randn([1, 8, 24, 20], { seed: 7 }), [null, null, 'H', 'W']] });
    assert.ok(!ops(tm).includes('Resize') && ops(tm).includes('Gather'), ops(tm).join(','));
    for (const [h, w] of [[4, 4], [16, 16], [28, 20], [29, 13], [64, 36], [403, 9]]) {
      const x = om.randn([1, 8, h, w], { seed: h + w });
      keep(tm, { x }, fn(x), `at ${h}x${w}`);
    }
  }));

  test('nearest by a scale factor computed from a size: SymbolicShape, asking for the size', () => om.tidy(() => {
    const pos = om.randn([1, 2, 4, 4], { seed: 8 });
    const fn = (x) => {
      const patches = F().avgPool2d(x, 4);
      const p = F().interpolate(pos, { scaleFactor: [(patches.shape[2] + 0.1) / 4, 1], mode: 'nearest' });
      return patches.add(p.slice(3, 0, 1));
    };
    throwsKind(() => om.trace(fn, { x: [om.randn([1, 2, 24, 4], { seed: 9 }), [null, null, 'H', null]] }), 'SymbolicShape',
      /^interpolate: a nearest scale factor that changes with the sizes \(1\.525 here\) is not traced \(give the output size instead\)/);
  }));
});
