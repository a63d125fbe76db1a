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
      const tol = { nearest: 0, bilinear: 1e-6, bicubic: 4e-6 }[c.mode];
      assert.ok(worst(vals(y), c.output.data) <= tol, `values: ${worst(vals(y), c.output.data)}`);
      y.mul(om.tensor(c.g.data, { shape: c.g.shape })).sum().backward();
      assert.ok(worst(vals(x.grad), c.grad.data) <= 1e-5, `gradient: ${worst(vals(x.grad), c.grad.data)}`);
    }));
  }

  test('the fixture covers every mode, both alignments, sizes and scales', () => {
    const kinds = new Set(FIXTURE.cases.map((c) => `${c.mode}/${c.align_corners}/${c.size ? 'size' : 'scale'}`));
    for (const k of ['nearest/null/size', 'nearest/null/scale', 'bilinear/false/size', 'bilinear/true/scale', 'bicubic/false/size',
      'bicubic/false/scale', 'bicubic/true/size', 'bicubic/true/scale']) assert.ok(kinds.has(k), k);
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
    throwsKind(() => F().interpolate(x, { size: 4, mode: 'trilinear' }), 'InvalidArgument', /mode must be 'nearest', 'bilinear' or 'bicubic', got a string \("trilinear"\)/);
    throwsKind(() => F().interpolate(x, { size: 4, alignCorners: false }), 'InvalidArgument', /alignCorners can only be set with mode 'bilinear' or 'bicubic', not 'nearest'/);
    const up = new om.nn.Upsample({ scaleFactor: 2, mode: 'bicubic', alignCorners: true });
    assert.deepEqual(up.forward(x).shape, [1, 1, 4, 4]);
  }));
});

describe('bicubic traced with symbolic height and width: one Resize (cubic), right at other sizes', () => {
  const HW = ['batch', null, 'h', 'w'];
  const ops = (tm) => tm.graph().nodes.map((n) => n.opType).filter((o) => o !== 'Constant');
  test('by a scale factor 2 and 4, to 2h x 3w, align_corners by sizes, down by 2', () => withTraced((keep, trace) => {
    const x0 = om.randn([2, 3, 4, 6], { seed: 3 });
    const forms = [
      (x) => F().interpolate(x, { scaleFactor: 2, mode: 'bicubic' }),
      (x) => F().interpolate(x, { scaleFactor: [4, 0.5], mode: 'bicubic' }),
      (x) => F().interpolate(x, { size: [2 * x.shape[2], 3 * x.shape[3]], mode: 'bicubic' }),
      (x) => F().interpolate(x, { size: [2 * x.shape[2], x.shape[3]], mode: 'bicubic', alignCorners: true }),
    ];
    for (const fn of forms) {
      const tm = trace(fn, { x: [x0, HW] });
      assert.deepEqual(ops(tm), ['Resize']);
      const resize = readGraph(tm.toOnnx()).nodes.find((n) => n.opType === 'Resize');
      const attr = (name) => resize.attributes.find((a) => a.name === name)?.value;
      assert.equal(attr('mode'), 'cubic');
      assert.equal(attr('cubic_coeff_a'), -0.75);
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
});
