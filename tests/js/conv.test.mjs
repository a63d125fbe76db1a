// Convolutions and pooling from JS: om.nn.functional against plain-JS reference loops written
// from PyTorch's definitions, gradients, the nn modules (shapes, state-dict names, PyTorch's
// default initialisation), argument errors, and traced vs eager through onnxruntime-web: each op
// in the configurations that take a different lowering, and a LeNet-style CNN with a symbolic
// batch run at other batch sizes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { near, memoryHooks, withTraced } from './helpers.mjs';

memoryHooks();
const F = om.nn.functional;

// ---- reference loops (flat row-major arrays) ----------------------------------------------------

/** PyTorch's conv2d: x [N, C, H, W], w [O, C/g, kH, kW], b [O] | null. */
function refConv2d(x, xs, w, ws, b, { stride = [1, 1], padding = [0, 0], dilation = [1, 1], groups = 1 } = {}) {
  const [N, C, H, W] = xs, [O, Cg, KH, KW] = ws;
  const OH = Math.floor((H + 2 * padding[0] - dilation[0] * (KH - 1) - 1) / stride[0]) + 1;
  const OW = Math.floor((W + 2 * padding[1] - dilation[1] * (KW - 1) - 1) / stride[1]) + 1;
  const out = new Array(N * O * OH * OW).fill(0);
  const Og = O / groups;
  for (let n = 0; n < N; n++) for (let o = 0; o < O; o++) for (let y = 0; y < OH; y++) for (let xo = 0; xo < OW; xo++) {
    let s = b ? b[o] : 0;
    const g = Math.floor(o / Og);
    for (let c = 0; c < Cg; c++) for (let i = 0; i < KH; i++) for (let j = 0; j < KW; j++) {
      const iy = y * stride[0] - padding[0] + i * dilation[0], ix = xo * stride[1] - padding[1] + j * dilation[1];
      if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
      s += x[((n * C + g * Cg + c) * H + iy) * W + ix] * w[((o * Cg + c) * KH + i) * KW + j];
    }
    out[((n * O + o) * OH + y) * OW + xo] = s;
  }
  return { shape: [N, O, OH, OW], values: out };
}

/** PyTorch's conv_transpose2d: x [N, C, H, W], w [C, O/g, kH, kW]: every input scatters its kernel. */
function refConvT2d(x, xs, w, ws, b, { stride = [1, 1], padding = [0, 0], outputPadding = [0, 0], dilation = [1, 1], groups = 1 } = {}) {
  const [N, C, H, W] = xs, [, Og, KH, KW] = ws, O = Og * groups, Cg = C / groups;
  const OH = (H - 1) * stride[0] - 2 * padding[0] + dilation[0] * (KH - 1) + outputPadding[0] + 1;
  const OW = (W - 1) * stride[1] - 2 * padding[1] + dilation[1] * (KW - 1) + outputPadding[1] + 1;
  const out = new Array(N * O * OH * OW).fill(0);
  for (let n = 0; n < N; n++) for (let c = 0; c < C; c++) for (let y = 0; y < H; y++) for (let xi = 0; xi < W; xi++) {
    const g = Math.floor(c / Cg), v = x[((n * C + c) * H + y) * W + xi];
    for (let o = 0; o < Og; o++) for (let i = 0; i < KH; i++) for (let j = 0; j < KW; j++) {
      const oy = y * stride[0] - padding[0] + i * dilation[0], ox = xi * stride[1] - padding[1] + j * dilation[1];
      if (oy < 0 || oy >= OH || ox < 0 || ox >= OW) continue;
      out[((n * O + g * Og + o) * OH + oy) * OW + ox] += v * w[((c * Og + o) * KH + i) * KW + j];
    }
  }
  if (b) for (let k = 0; k < out.length; k++) out[k] += b[Math.floor(k / (OH * OW)) % O];
  return { shape: [N, O, OH, OW], values: out };
}

/** PyTorch's pooling_output_shape. */
function poolOut(n, k, s, p, d, ceil) {
  let o = Math.floor((n + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0)) / s) + 1;
  if (ceil && (o - 1) * s >= n + p) o--;
  return o;
}

/** max_pool2d (dilation d) or avg_pool2d (PyTorch's divisor rules) on x [N, C, H, W]. */
function refPool(kind, x, xs, k, s, p, { d = [1, 1], ceil = false, cip = true } = {}) {
  const [N, C, H, W] = xs;
  const OH = poolOut(H, k[0], s[0], p[0], d[0], ceil), OW = poolOut(W, k[1], s[1], p[1], d[1], ceil);
  const out = [];
  for (let pl = 0; pl < N * C; pl++) for (let y = 0; y < OH; y++) for (let xo = 0; xo < OW; xo++) {
    if (kind === 'max') {
      let m = -Infinity;
      for (let i = 0; i < k[0]; i++) for (let j = 0; j < k[1]; j++) {
        const iy = y * s[0] - p[0] + i * d[0], ix = xo * s[1] - p[1] + j * d[1];
        if (iy >= 0 && iy < H && ix >= 0 && ix < W) m = Math.max(m, x[(pl * H + iy) * W + ix]);
      }
      out.push(m);
      continue;
    }
    const h0 = y * s[0] - p[0], w0 = xo * s[1] - p[1];
    const h1 = Math.min(h0 + k[0], H + p[0]), w1 = Math.min(w0 + k[1], W + p[1]);
    const pool = (h1 - h0) * (w1 - w0);
    let sum = 0, count = 0;
    for (let iy = Math.max(h0, 0); iy < Math.min(h1, H); iy++) {
      for (let ix = Math.max(w0, 0); ix < Math.min(w1, W); ix++, count++) sum += x[(pl * H + iy) * W + ix];
    }
    out.push(sum / (cip ? pool : count));
  }
  return { shape: [N, C, OH, OW], values: out };
}

const randn = (shape, seed) => om.randn(shape, { seed });

function checkRef(t, ref, tol = 1e-4) {
  assert.deepEqual(t.shape, ref.shape, 'shape');
  near(t.toArray(), ref.values, tol);
}

// ---- values -----------------------------------------------------------------------------------

describe('functional: values against reference loops', () => {
  test('conv2d with stride, padding, dilation, groups and bias (ints and pairs)', () => {
    om.tidy(() => {
      const x = randn([2, 4, 7, 8], 1), w = randn([6, 2, 3, 2], 2), b = randn([6], 3);
      const opts = { stride: [2, 1], padding: [1, 2], dilation: [1, 2], groups: 2 };
      checkRef(F.conv2d(x, w, b, opts), refConv2d(x.toArray(), x.shape, w.toArray(), w.shape, b.toArray(), opts));
      const w1 = randn([3, 4, 3, 3], 4);
      checkRef(F.conv2d(x, w1, null, { stride: 2, padding: 1 }),
        refConv2d(x.toArray(), x.shape, w1.toArray(), w1.shape, null, { stride: [2, 2], padding: [1, 1] }));
      checkRef(F.conv2d(x, w1), refConv2d(x.toArray(), x.shape, w1.toArray(), w1.shape, null));
      // bias may be skipped: the options object in its place
      checkRef(F.conv2d(x, w1, { padding: 'same' }), refConv2d(x.toArray(), x.shape, w1.toArray(), w1.shape, null, { padding: [1, 1] }));
      checkRef(F.conv2d(x, w1, null, { padding: 'valid' }), refConv2d(x.toArray(), x.shape, w1.toArray(), w1.shape, null));
    });
  });

  test("padding 'same' where PyTorch pads unevenly: the extra one at the end (the symmetric reference, cropped)", () => {
    om.tidy(() => {
      const x = randn([2, 4, 7, 8], 40), b = randn([6], 41);
      // kernel [2, 4] dilated [3, 1]: 3 in all along both dims (1 before, 2 after), so the output is
      // the reference's with 2 on both sides from its second row and column on
      for (const [ws, dilation, off] of [[[6, 2, 2, 4], [3, 1], [1, 1]], [[6, 2, 3, 2], [1, 1], [0, 1]]]) {
        const w = randn(ws, 42);
        const ref = refConv2d(x.toArray(), x.shape, w.toArray(), w.shape, b.toArray(),
          { padding: ws.slice(2).map((k, i) => Math.ceil((dilation[i] * (k - 1)) / 2)), dilation, groups: 2 });
        const [N, O, RH, RW] = ref.shape;
        const values = [];
        for (let n = 0; n < N * O; n++) for (let i = 0; i < 7; i++) for (let j = 0; j < 8; j++) values.push(ref.values[(n * RH + i + off[0]) * RW + j + off[1]]);
        checkRef(F.conv2d(x, w, b, { padding: 'same', dilation, groups: 2 }), { shape: [2, 6, 7, 8], values });
      }
      // conv1d: kernel 4, 3 in all: [1, 2]; its input gradient flows through the pad
      const x1 = randn([1, 2, 6], 43), w1 = randn([3, 2, 4], 44);
      x1.requiresGrad = true;
      const y1 = F.conv1d(x1, w1, null, { padding: 'same' });
      assert.deepEqual(y1.shape, [1, 3, 6]);
      const ref1 = refConv2d(x1.toArray(), [1, 2, 1, 6], w1.toArray(), [3, 2, 1, 4], null, { padding: [0, 2] });
      near(y1.toArray(), ref1.values.filter((_, k) => k % 7 !== 0), 1e-4);
      y1.sum().backward();
      assert.deepEqual(x1.grad.shape, [1, 2, 6]);
      x1.grad.dispose();
    });
  });

  test('conv1d is conv2d on a unit height', () => {
    om.tidy(() => {
      const x = randn([2, 4, 11], 5), w = randn([6, 2, 3], 6), b = randn([6], 7);
      const y = F.conv1d(x, w, b, { stride: 2, padding: 2, dilation: 2, groups: 2 });
      const ref = refConv2d(x.toArray(), [2, 4, 1, 11], w.toArray(), [6, 2, 1, 3], b.toArray(),
        { stride: [1, 2], padding: [0, 2], dilation: [1, 2], groups: 2 });
      assert.deepEqual(y.shape, [2, 6, ref.shape[3]]);
      near(y.toArray(), ref.values, 1e-4);
    });
  });

  test('convTranspose2d with stride, padding, outputPadding, dilation, groups and bias', () => {
    om.tidy(() => {
      const x = randn([2, 4, 3, 4], 8), w = randn([4, 3, 3, 2], 9), b = randn([6], 10);
      const opts = { stride: [2, 3], padding: [1, 0], outputPadding: [1, 2], dilation: [1, 2], groups: 2 };
      checkRef(F.convTranspose2d(x, w, b, opts), refConvT2d(x.toArray(), x.shape, w.toArray(), w.shape, b.toArray(), opts));
    });
  });

  test('maxPool2d: stride defaults to the kernel, padding, dilation, ceilMode (dropping a window that starts in the padding)', () => {
    om.tidy(() => {
      const x = randn([2, 3, 7, 6], 11), xs = x.toArray();
      checkRef(F.maxPool2d(x, 2), refPool('max', xs, x.shape, [2, 2], [2, 2], [0, 0]));
      checkRef(F.maxPool2d(x, [3, 2], { stride: 2, padding: 1, ceilMode: true }), refPool('max', xs, x.shape, [3, 2], [2, 2], [1, 1], { ceil: true }));
      checkRef(F.maxPool2d(x, 3, { stride: [1, 2], padding: 1, dilation: 2 }), refPool('max', xs, x.shape, [3, 3], [1, 2], [1, 1], { d: [2, 2] }));
      const r = om.arange(1, 6, { dtype: 'float32' }).reshape(1, 1, 1, 5);
      assert.deepEqual(F.maxPool2d(r, [1, 2], { padding: [0, 1], ceilMode: true }).toArray(), Float32Array.from([1, 3, 5]));
    });
  });

  test('avgPool2d: countIncludePad true and false, with and without ceilMode', () => {
    om.tidy(() => {
      const x = randn([1, 2, 6, 7], 12), xs = x.toArray();
      for (const ceil of [false, true]) {
        for (const cip of [true, false]) {
          checkRef(F.avgPool2d(x, 3, { stride: 2, padding: 1, ceilMode: ceil, countIncludePad: cip }),
            refPool('avg', xs, x.shape, [3, 3], [2, 2], [1, 1], { ceil, cip }));
        }
      }
      checkRef(F.avgPool2d(x, [2, 3]), refPool('avg', xs, x.shape, [2, 3], [2, 3], [0, 0]));
    });
  });

  test('adaptiveAvgPool2d: PyTorch cells (uneven, overlapping), an integer, null keeps a size', () => {
    om.tidy(() => {
      const x = om.arange(1, 11, { dtype: 'float32' }).reshape(1, 1, 2, 5);
      assert.deepEqual(F.adaptiveAvgPool2d(x, [1, 3]).toArray(), Float32Array.from([(1 + 2 + 6 + 7) / 4, (2 + 3 + 4 + 7 + 8 + 9) / 6, (4 + 5 + 9 + 10) / 4]));
      assert.deepEqual(F.adaptiveAvgPool2d(x, 1).toArray(), Float32Array.from([5.5]));
      const k = F.adaptiveAvgPool2d(x, [null, 1]);
      assert.deepEqual(k.shape, [1, 1, 2, 1]);
      assert.deepEqual(k.toArray(), Float32Array.from([3, 8]));
    });
  });
});

describe('unbatched inputs (PyTorch: [C, H, W], [C, L])', () => {
  test('equal the batch-of-one result without its batch dim, for every function and a module', () => {
    om.tidy(() => {
      const x = randn([2, 6, 7], 17), x4 = x.unsqueeze(0);
      const w = randn([4, 2, 3, 3], 18), wt = randn([2, 3, 2, 2], 19), w1 = randn([3, 2, 2], 20);
      const same = (a, b) => {
        assert.deepEqual(a.shape, b.shape.slice(1));
        assert.deepEqual(a.toArray(), b.toArray());
      };
      same(F.conv2d(x, w, null, { padding: 1 }), F.conv2d(x4, w, null, { padding: 1 }));
      same(F.convTranspose2d(x, wt, null, { stride: 2 }), F.convTranspose2d(x4, wt, null, { stride: 2 }));
      same(F.maxPool2d(x, 2, { ceilMode: true }), F.maxPool2d(x4, 2, { ceilMode: true }));
      same(F.avgPool2d(x, 3, { stride: 2, padding: 1 }), F.avgPool2d(x4, 3, { stride: 2, padding: 1 }));
      same(F.adaptiveAvgPool2d(x, [3, 2]), F.adaptiveAvgPool2d(x4, [3, 2]));
      const l = x.select(1, 0);
      same(F.conv1d(l, w1), F.conv1d(l.unsqueeze(0), w1));
      const conv = new om.nn.Conv2d(2, 3, 3);
      same(conv.forward(x), conv.forward(x4));
      conv.dispose();
    });
  });

  test('traced: Unsqueeze, the op, Squeeze, through onnxruntime-web', async () => {
    await withTraced((keep, trace) => {
      const w = randn([4, 2, 3, 3], 18);
      const tm = trace((v) => F.maxPool2d(F.conv2d(v, w, null, { padding: 1 }), 2), { x: randn([2, 6, 7], 21) });
      assert.deepEqual(tm.graph().nodes.map((n) => n.opType), ['Unsqueeze', 'Conv', 'Squeeze', 'Unsqueeze', 'MaxPool', 'Squeeze']);
    });
  });
});

// ---- gradients --------------------------------------------------------------------------------

describe('gradients', () => {
  test('conv2d: dx is the transposed conv of dy, dw and db match reference sums', () => {
    om.tidy(() => {
      const x = randn([2, 4, 6, 7], 13), w = randn([6, 2, 3, 3], 14), b = randn([6], 15);
      for (const t of [x, w, b]) t.requiresGrad = true;
      const opts = { stride: 2, padding: 1, groups: 2 };
      const y = F.conv2d(x, w, b, opts), g = randn(y.shape, 16);
      y.mul(g).sum().backward();
      // dx = convTranspose2d(g, w) with the output padding that gives back 6x7 (H: 3 -> 5 + 1, W: 4 -> 7 + 0)
      near(x.grad.toArray(), F.convTranspose2d(g, w, null, { ...opts, outputPadding: [1, 0] }).toArray(), 1e-4, 'dx');
      near(b.grad.toArray(), g.sum([0, 2, 3]).toArray(), 1e-4, 'db');
      // dw[o, c, i, j] = sum over n, y, x of g[n, o, y, x] * x[n, g*2 + c, 2y - 1 + i, 2x - 1 + j]
      const gs = g.toArray(), xs = x.toArray(), [, , OH, OW] = y.shape, dw = [];
      for (let o = 0; o < 6; o++) for (let c = 0; c < 2; c++) for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) {
        let s = 0;
        for (let n = 0; n < 2; n++) for (let oy = 0; oy < OH; oy++) for (let ox = 0; ox < OW; ox++) {
          const iy = 2 * oy - 1 + i, ix = 2 * ox - 1 + j;
          if (iy >= 0 && iy < 6 && ix >= 0 && ix < 7) s += gs[((n * 6 + o) * OH + oy) * OW + ox] * xs[((n * 4 + Math.floor(o / 3) * 2 + c) * 6 + iy) * 7 + ix];
        }
        dw.push(s);
      }
      near(w.grad.toArray(), dw, 1e-4, 'dw');
      for (const t of [x, w, b]) t.zeroGrad();
    });
  });

  test('maxPool2d routes to the first maximum; avgPool2d spreads by the divisor', () => {
    om.tidy(() => {
      const x = om.tensor([[[[1, 3, 3], [0, 2, 3]]]]);
      x.requiresGrad = true;
      F.maxPool2d(x, 2, { stride: 1 }).sum().backward();
      assert.deepEqual(x.grad.toArray(), Float32Array.from([0, 2, 0, 0, 0, 0]));
      x.zeroGrad();
      F.avgPool2d(x, [2, 3], { stride: 1, padding: [1, 1], countIncludePad: false }).sum().backward();
      // three output rows x three columns; each input gets 1/count from every window holding it
      assert.equal(x.grad.shape.join(), '1,1,2,3');
      near(x.grad.sum().toArray(), [9], 1e-5);
      x.zeroGrad();
    });
  });
});

// ---- modules ----------------------------------------------------------------------------------

describe('nn modules', () => {
  test("new om.nn.Conv2d(1, 6, 5, { padding: 2 }): PyTorch's names, shapes and init bounds", () => {
    om.manualSeed(3);
    const conv = new om.nn.Conv2d(1, 6, 5, { padding: 2 });
    try {
      assert.deepEqual(Object.keys(conv.stateDict()), ['weight', 'bias']);
      assert.deepEqual(conv.weight.shape, [6, 1, 5, 5]);
      assert.deepEqual(conv.bias.shape, [6]);
      assert.deepEqual([conv.kernelSize, conv.stride, conv.padding, conv.dilation, conv.groups], [[5, 5], [1, 1], [2, 2], [1, 1], 1]);
      const bound = 1 / Math.sqrt(25); // kaiming_uniform(a = sqrt(5)): 1/sqrt(fan_in), fan_in = 1 * 5 * 5
      for (const t of [conv.weight, conv.bias]) {
        const v = Array.from(t.toArray());
        assert.ok(v.every((e) => Math.abs(e) <= bound), 'inside the bound');
        assert.ok(Math.max(...v.map(Math.abs)) > bound / 2, 'spread over the bound');
      }
      assert.ok(conv.weight.requiresGrad && conv.bias.requiresGrad);
      om.tidy(() => assert.deepEqual(conv.forward(om.zeros([2, 1, 28, 28])).shape, [2, 6, 28, 28]));
    } finally {
      conv.dispose();
    }
  });

  test('Conv1d, ConvTranspose2d (weight [in, out/groups, k, k], fan_in from it), pools', () => {
    const c1 = new om.nn.Conv1d(4, 8, 3, { stride: 2, groups: 2, bias: false });
    const ct = new om.nn.ConvTranspose2d(4, 6, [3, 2], { stride: 2, padding: 1, outputPadding: 1, groups: 2 });
    try {
      assert.deepEqual(c1.weight.shape, [8, 2, 3]);
      assert.equal(c1.bias, null);
      assert.deepEqual(Object.keys(ct.stateDict()), ['weight', 'bias']);
      assert.deepEqual(ct.weight.shape, [4, 3, 3, 2]);
      const bound = 1 / Math.sqrt(3 * 3 * 2);
      assert.ok(Array.from(ct.weight.toArray()).every((e) => Math.abs(e) <= bound));
      om.tidy(() => {
        assert.deepEqual(c1.forward(om.zeros([1, 4, 9])).shape, [1, 8, 4]);
        assert.deepEqual(ct.forward(om.zeros([1, 4, 5, 5])).shape, [1, 6, 10, 9]);
        const x = randn([1, 2, 7, 7], 20);
        near(new om.nn.MaxPool2d(3, { stride: 2, ceilMode: true }).forward(x).toArray(), F.maxPool2d(x, 3, { stride: 2, ceilMode: true }).toArray(), 0);
        near(new om.nn.AvgPool2d(2, { countIncludePad: false, padding: 1 }).forward(x).toArray(),
          F.avgPool2d(x, 2, { countIncludePad: false, padding: 1 }).toArray(), 0);
        assert.deepEqual(new om.nn.AdaptiveAvgPool2d([2, null]).forward(x).shape, [1, 2, 2, 7]);
      });
    } finally {
      c1.dispose();
      ct.dispose();
    }
  });
});

// ---- errors -----------------------------------------------------------------------------------

describe('errors are OmErrors with their kind', () => {
  const kind = (k, re) => (e) => e instanceof om.OmError && e.kind === k && re.test(e.message);

  test('bad arguments', () => {
    om.tidy(() => {
      const x = om.zeros([1, 3, 8, 8]), w = om.zeros([6, 3, 3, 3]);
      assert.throws(() => F.conv2d(x, om.zeros([6, 4, 5, 5])), kind('ShapeMismatch', /conv2d: input \[1,3,8,8\] has 3 channels, weight \[6,4,5,5\] expects 4/));
      assert.throws(() => F.conv2d(x, w, null, { groups: 2 }), kind('InvalidArgument', /groups 2 does not divide the 3 input channels/));
      assert.throws(() => F.conv2d(x, w, null, { stride: 0 }), kind('InvalidArgument', /stride must be positive, got 0/));
      assert.throws(() => F.conv2d(x, w, null, { stride: 'two' }), kind('InvalidArgument', /conv2d: stride must be an integer/));
      assert.throws(() => F.conv2d(x, w, null, { stride: [1, 1, 1] }), kind('InvalidArgument', /stride must be an integer or 2 integers, got 3/));
      assert.throws(() => F.conv2d(x, w, null, { strides: 1 }), kind('InvalidArgument', /unknown option 'strides'/));
      assert.throws(() => F.conv2d(x, w, null, { padding: 'same', stride: 2 }), kind('InvalidArgument', /'same' needs stride 1/));
      assert.throws(() => F.conv2d(x, w, null, { padding: 'full' }), kind('InvalidArgument', /conv2d: padding must be an integer/));
      assert.throws(() => F.conv2d('x', om.zeros([6, 3, 2, 2]), null, { padding: 'same' }), kind('InvalidArgument', /conv2d: input must be a Tensor/));
      assert.throws(() => F.conv2d(x, om.zeros([6, 3, 9, 9])), kind('ShapeMismatch', /larger than the padded input/));
      assert.throws(() => F.conv2d(x, 3), kind('InvalidArgument', /conv2d: weight must be a Tensor/));
      assert.throws(() => F.conv1d(x, w), kind('ShapeMismatch', /conv1d: input \[1,3,8,8\] must have 3 dims/));
      assert.throws(() => F.convTranspose2d(x, om.zeros([3, 2, 3, 3]), null, { stride: 2, outputPadding: 2 }),
        kind('InvalidArgument', /output_padding 2 must be smaller than either stride \(2\) or dilation \(1\)/));
      assert.throws(() => F.maxPool2d(x, 2, { padding: 2 }), kind('InvalidArgument', /padding 2 must be between 0 and half the kernel size 2/));
      assert.throws(() => F.conv2d(x, w, null, { padding: 2 ** 40 }), kind('InvalidArgument', /conv2d: integer attribute 2 is 1099511627776, above 2\^31-1/));
      assert.throws(() => F.maxPool2d(x, 2, { stride: Infinity }), kind('InvalidArgument', /above 2\^31-1/));
      assert.throws(() => F.maxPool2d(x, 2, { returnIndices: 'yes' }), kind('InvalidArgument', /maxPool2d: returnIndices must be a boolean, got a string/));
      assert.throws(() => F.maxPool2d(x, 2, { ceilMode: 1 }), kind('InvalidArgument', /ceilMode must be a boolean/));
      assert.throws(() => F.avgPool2d(x, 2, { divisorOverride: 3 }), kind('InvalidArgument', /divisorOverride is not supported/));
      assert.throws(() => F.avgPool2d(x, 9), kind('ShapeMismatch', /too small for kernel 9x9/));
      assert.throws(() => F.adaptiveAvgPool2d(x, [0, 2]), kind('InvalidArgument', /outputSize must be positive/));
      assert.throws(() => F.adaptiveAvgPool2d(x, [1, 2, 3]), kind('InvalidArgument', /outputSize must be an integer or 2/));
      // empty inputs: only the batch may be 0 in a pool (PyTorch's check); a batch of 0 pools to nothing
      for (const e of [[1, 0, 8, 8], [1, 3, 0, 8], [0, 3, 8, 0], [3, 0, 8]]) {
        const re = new RegExp(`input \\[${e.length === 3 ? [1, ...e] : e}\\] has an empty channel, height or width dim \\(only the batch may be 0, as PyTorch\\)`);
        assert.throws(() => F.maxPool2d(om.zeros(e), 2), kind('ShapeMismatch', re));
        assert.throws(() => F.avgPool2d(om.zeros(e), 2), kind('ShapeMismatch', re));
        assert.throws(() => F.adaptiveAvgPool2d(om.zeros(e), 2), kind('ShapeMismatch', re));
      }
      assert.deepEqual(F.maxPool2d(om.zeros([0, 3, 8, 8]), 2).shape, [0, 3, 4, 4]);
      assert.deepEqual(F.adaptiveAvgPool2d(om.zeros([0, 3, 8, 8]), 3).shape, [0, 3, 3, 3]);
      assert.throws(() => new om.nn.Conv2d(3, 6, 3, { groups: 2 }), kind('InvalidArgument', /groups 2 must be positive and divide/));
      assert.throws(() => new om.nn.Conv2d(3, 6, 3, { paddingMode: 'reflect' }), kind('InvalidArgument', /paddingMode 'reflect'|paddingMode a string/));
      assert.throws(() => new om.nn.Conv2d(3, 6, 0), kind('InvalidArgument', /kernelSize must be positive/));
      assert.throws(() => new om.nn.AdaptiveAvgPool2d(0), kind('InvalidArgument', /outputSize must be a positive integer/));
      const d = om.zeros([1, 3, 8, 8]);
      d.dispose();
      assert.throws(() => F.conv2d(d, w), kind('Disposed', /conv2d/));
      assert.throws(() => F.maxPool2d(d, 2), kind('Disposed', /maxPool2d/));
    });
  });
});

// ---- traced vs eager in onnxruntime-web -----------------------------------------------------------

describe('traced vs eager in onnxruntime-web', () => {
  test('each op in the configurations that lower differently', async () => {
    await withTraced((keep, trace) => {
      const x = randn([2, 3, 9, 10], 30), x1 = randn([2, 4, 11], 31);
      const w = randn([4, 3, 3, 3], 32), w1 = randn([6, 2, 3], 33), wt = randn([3, 2, 3, 3], 34);
      const B = ['batch', null, null, null];
      trace((v) => F.conv2d(v, w, null, { stride: [2, 1], padding: [0, 2], dilation: [1, 2] }), { x: [x, B] });
      trace((v) => F.conv1d(v, w1, null, { padding: 'same', groups: 2 }), { x: [x1, ['batch', null, null]] });
      // 'same' padded unevenly (Pad, Conv) with symbolic spatial axes
      const uneven = trace((v) => F.conv2d(v, randn([4, 3, 2, 4], 35), null, { padding: 'same', dilation: [3, 1] }), { x: [x, ['batch', null, 'h', 'w']] });
      assert.deepEqual(uneven.graph().nodes.map((nd) => nd.opType).filter((t) => t !== 'Constant'), ['Pad', 'Conv']);
      assert.deepEqual(uneven.outputs[0].shape, ['batch', 4, 'h', 'w']);
      trace((v) => F.convTranspose2d(v, wt, null, { stride: 3, padding: [1, 2], outputPadding: [2, 0] }), { x: [x, B] });
      for (const [k, s, p, ceilMode] of [[3, 2, 1, true], [2, 2, 1, true], [[3, 2], [2, 3], [0, 1], true], [3, 3, 0, false]]) {
        trace((v) => F.maxPool2d(v, k, { stride: s, padding: p, ceilMode }), { x: [x, B] });
        for (const countIncludePad of [true, false]) {
          trace((v) => F.avgPool2d(v, k, { stride: s, padding: p, ceilMode, countIncludePad }), { x: [x, B] });
        }
      }
      trace((v) => F.maxPool2d(v, 3, { stride: 1, dilation: [2, 3] }), { x: [x, B] });
      const global = trace((v) => F.adaptiveAvgPool2d(v, 1), { x: [x, B] });
      assert.deepEqual(global.graph().nodes.map((n) => n.opType), ['GlobalAveragePool']);
      const even = trace((v) => F.adaptiveAvgPool2d(v, [3, 5]), { x: [x, B] });
      assert.deepEqual(even.graph().nodes.map((n) => n.opType), ['AveragePool']);
      const c1 = trace((v) => F.conv1d(v, w1, null, { groups: 2 }), { x: x1 });
      assert.deepEqual(c1.graph().nodes.map((n) => n.opType), ['Conv']); // a 1-D Conv: its weight stays [6, 2, 3]
      assert.deepEqual(c1.graph().initializers.map((i) => i.shape), [[6, 2, 3]]);
    });
  });

  // Found by a sweep (every width 1-8, kernel 1-4, stride 1-3, padding 0-2, dilation 1-3, ceil
  // mode on and off; for the transposed conv also output_padding 0-2, groups and bias): the one
  // node the lowering wrote was refused or ran differently in onnxruntime-web in these cases.
  test('configurations onnxruntime refuses or runs differently as one node: rewritten, and agreeing', async () => {
    await withTraced((keep, trace) => {
      const ops = (tm) => tm.graph().nodes.map((n) => n.opType);
      const B = ['batch', null, null, null];
      // max_pool2d, dilated ceil_mode: width 7, kernel 4, stride 3, padding 2, dilation 2 makes 3
      // windows, whose end padding (3 - 1) * 3 + 7 - 7 - 2 = 4 is not below the kernel: ORT's
      // MaxPool refuses the model ("Pad should be smaller than kernel"). Pad with -inf, MaxPool.
      const x7 = randn([2, 3, 4, 7], 60);
      const mp = trace((v) => F.maxPool2d(v, [2, 4], { stride: [1, 3], padding: [1, 2], dilation: [1, 2], ceilMode: true }), { x: [x7, B] });
      assert.deepEqual(ops(mp), ['Pad', 'MaxPool']);
      // a window of padding taps only: width 2, kernel 2, dilation 3, padding 1 has one window,
      // taps -1 and 2. PyTorch's max of no taps is -inf; ORT's MaxPool with pads gives it its
      // initial value, the lowest float (-3.4e38); the max of the -inf values a Pad wrote is -inf.
      const x2 = randn([2, 3, 3, 2], 61);
      for (const ceilMode of [false, true]) {
        const f = (v) => F.maxPool2d(v, [1, 2], { stride: 1, padding: [0, 1], dilation: [1, 3], ceilMode });
        const tm = trace(f, { x: [x2, B] });
        assert.deepEqual(ops(tm), ['Pad', 'MaxPool']);
        assert.deepEqual(Array.from(f(x2).toArray()), Array(18).fill(-Infinity), 'eager: -inf, as PyTorch');
      }
      // ... and where that happens only at another size of a symbolic axis: height 7 has no such
      // window, height 2 (below the dilation 3) has; the graph holds at both
      const fn = (v) => F.maxPool2d(v, [2, 3], { stride: 1, padding: 1, dilation: [3, 1] });
      const sym = trace(fn, { x: [randn([2, 3, 7, 5], 62), [null, null, 'h', null]] });
      assert.deepEqual(ops(sym), ['Pad', 'MaxPool']);
      const short = randn([2, 3, 2, 5], 63);
      assert.ok(Array.from(fn(short).toArray()).includes(-Infinity), 'height 2: a window of padding only');
      keep(sym, { x: short }, fn(short));
      assert.deepEqual(ops(trace((v) => F.maxPool2d(v, 3, { stride: 2, padding: 1, dilation: 2 }), { x: [randn([2, 3, 9, 10], 64), B] })), ['MaxPool']);
      // conv_transpose2d, output_padding >= stride (PyTorch allows it below the dilation); ORT:
      // "output_padding (1) may be too large for stride (1)". Folded into pads_end = padding -
      // output_padding when it is at most the padding: one ConvTranspose, no output_padding.
      const x = randn([2, 4, 3, 5], 65), w = randn([4, 3, 2, 3], 66), b = randn([6], 67);
      const folded = trace((v) => F.convTranspose2d(v, w, b, { stride: [2, 1], padding: [1, 2], outputPadding: [1, 1], dilation: [1, 2], groups: 2 }), { x: [x, B] });
      assert.deepEqual(ops(folded), ['ConvTranspose']); // ORT refuses it with output_padding 1 on the width
      // beyond the padding the rows past the uncropped output are zeros plus the bias:
      // ConvTranspose without bias, Pad (crop the start, zeros at the end), Add of the bias
      for (const [opts, bias] of [
        [{ stride: 1, padding: [0, 1], outputPadding: [1, 2], dilation: 3, groups: 2 }, b],
        [{ stride: [2, 1], padding: [0, 1], outputPadding: [1, 2], dilation: 3, groups: 2 }, null],
        [{ stride: 2, padding: 1, outputPadding: 2, dilation: 3, groups: 2 }, b],
      ]) {
        const tm = trace((v) => F.convTranspose2d(v, w, bias, opts), { x: [x, B] });
        assert.deepEqual(ops(tm), bias ? ['ConvTranspose', 'Pad', 'Reshape', 'Add'] : ['ConvTranspose', 'Pad']);
      }
      const k1 = randn([4, 3, 1, 1], 68), x1 = randn([2, 4, 1, 1], 69); // uncropped output 1 wide, padding 1, output_padding 2
      const tiny = trace((v) => F.convTranspose2d(v, k1, b.slice(0, 0, 3), { stride: 1, padding: 1, outputPadding: 2, dilation: 3 }), { x: [x1, B] });
      assert.deepEqual(tiny.outputs[0].shape, ['batch', 3, 1, 1]);
    });
  });

  test('a symbolic spatial axis: ceil_mode pools and adaptive pooling to a fixed size are expressed, and agree at other sizes', async () => {
    await withTraced((keep, trace) => {
      const ops = (tm) => tm.graph().nodes.map((n) => n.opType);
      const x = randn([2, 3, 8, 9], 41), H = [null, null, 'height', null];
      // the node's own ceil_mode (opset 19 on defines it as PyTorch: a last window that starts
      // in the right padding is dropped): one node at every size
      for (const fn of [(v) => F.maxPool2d(v, 3, { stride: 2, ceilMode: true }), (v) => F.avgPool2d(v, 3, { stride: 2, padding: 1, ceilMode: true })]) {
        assert.deepEqual(ops(trace(fn, { x: [x, H] })).filter((o) => o !== 'Constant'), [fn(x).shape[2] === 4 ? 'MaxPool' : 'AveragePool']);
      }
      // dilated with padding, whose windows can hold only padding below the dilation: Pad with
      // -inf, its end padding computed from the height, MaxPool
      const dil = trace((v) => F.maxPool2d(v, 2, { stride: 2, padding: 1, dilation: 2, ceilMode: true }), { x: [x, H] });
      assert.deepEqual(ops(dil).slice(-3), ['Max', 'Pad', 'MaxPool']);
      assert.equal(ops(dil).filter((o) => o === 'Shape').length, 1);
      // adaptive to 2x3 of a symbolic height: the cells' rows computed from it (Range, compare)
      const ad = trace((v) => F.adaptiveAvgPool2d(v, [2, 3]), { x: [x, H] });
      assert.deepEqual(ad.outputs[0].shape, [2, 3, 2, 3]);
      assert.ok(ops(ad).includes('Range') && ops(ad).filter((o) => o === 'MatMul').length === 2, ops(ad).join(' '));
      const w = randn([4, 3, 3, 3], 42); // made before the trace: random values of a symbol's size are refused in it
      // channels symbolic where the weight takes 3: eager answers at 3 alone, so c is fixed there
      const fixed = trace((v) => F.conv2d(v, w), { x: [x, [null, 'c', null, null]] });
      assert.deepEqual([fixed.symbols[0].min, fixed.symbols[0].max], [3, 3]);
      assert.match(fixed.symbols[0].narrowedBy, /conv2d/);
    });
  });

  // No ONNX pooling has PyTorch's uneven, overlapping cells (9 -> 4: rows [0,3) [2,5) [4,7)
  // [6,9)); the cell sums are MatMuls with 0/1 matrices of the cells, divided by their sizes.
  test('adaptiveAvgPool2d to a size that does not divide the input: MatMul, MatMul, Div, agreeing', async () => {
    await withTraced((keep, trace) => {
      const B = ['batch', 'channels', null, null];
      for (const [shape, out] of [[[2, 3, 9, 10], [4, 4]], [[3, 2, 4, 3], [3, 2]], [[2, 3, 5, 7], [7, 1]], [[2, 3, 6, 5], [4, null]]]) {
        const tm = trace((v) => F.adaptiveAvgPool2d(v, out), { x: [randn(shape, 40), B] });
        assert.deepEqual(tm.graph().nodes.map((n) => n.opType).filter((t) => t !== 'Reshape' && t !== 'Cast'), ['MatMul', 'MatMul', 'Div']);
      }
    });
  });

  test('LeNet-style CNN (conv-relu-pool twice, then linear) with a symbolic batch, also at batch 1 and 5', async () => {
    class LeNet extends om.nn.Module {
      constructor() {
        super();
        this.conv1 = new om.nn.Conv2d(1, 6, 5, { padding: 2 });
        this.pool = new om.nn.MaxPool2d(2);
        this.conv2 = new om.nn.Conv2d(6, 16, 5);
        this.fc1 = new om.nn.Linear(16 * 5 * 5, 120);
        this.fc2 = new om.nn.Linear(120, 84);
        this.fc3 = new om.nn.Linear(84, 10);
      }

      forward(x) {
        let h = this.pool.forward(this.conv1.forward(x).relu());
        h = this.pool.forward(this.conv2.forward(h).relu());
        h = h.reshape(h.shape[0], 16 * 5 * 5);
        return this.fc3.forward(this.fc2.forward(this.fc1.forward(h).relu()).relu());
      }
    }
    om.manualSeed(7);
    const net = new LeNet().eval();
    try {
      await withTraced((keep, trace) => {
        const tm = trace(net, { x: [randn([3, 1, 28, 28], 50), ['batch', null, null, null]] });
        assert.deepEqual(tm.inputs[0].shape, ['batch', 1, 28, 28]);
        assert.deepEqual(tm.outputs[0].shape, ['batch', 10]);
        assert.deepEqual(tm.graph().nodes.map((n) => n.opType).filter((t) => t !== 'Relu'),
          ['Conv', 'MaxPool', 'Conv', 'MaxPool', 'Reshape', 'Gemm', 'Gemm', 'Gemm']);
        assert.deepEqual(tm.graph().initializers.map((i) => i.name).filter((n) => n.startsWith('conv')).sort(),
          ['conv1.bias', 'conv1.weight', 'conv2.bias', 'conv2.weight']);
        for (const [n, seed] of [[1, 51], [5, 52]]) {
          const x = randn([n, 1, 28, 28], seed);
          keep(tm, { x }, net.forward(x));
        }
      });
    } finally {
      net.dispose();
    }
  });

});

describe('training', () => {
  test('a small CNN trains: the loss falls over a few SGD steps', () => {
    om.manualSeed(11);
    const conv = new om.nn.Conv2d(1, 4, 3, { padding: 1 }), fc = new om.nn.Linear(4 * 4 * 4, 2);
    const params = [...conv.parameters(), ...fc.parameters()];
    const x = randn([8, 1, 8, 8], 60);
    const target = om.tensor([[1, 0], [0, 1], [1, 0], [0, 1], [1, 0], [0, 1], [1, 0], [0, 1]]);
    const losses = [];
    try {
      for (let step = 0; step < 20; step++) {
        om.tidy(() => {
          const h = F.avgPool2d(F.maxPool2d(conv.forward(x).relu(), 2), 3, { stride: 1, padding: 1, ceilMode: true });
          const loss = fc.forward(h.reshape(8, 64)).sub(target).pow(2).mean();
          loss.backward();
          losses.push(loss.item());
          om.noGrad(() => {
            for (const p of params) p.copy_(p.sub(p.grad.mul(0.05)));
          });
          for (const p of params) p.zeroGrad();
        });
      }
      assert.ok(losses[19] < losses[0] * 0.7, `loss ${losses[0]} -> ${losses[19]}`);
    } finally {
      conv.dispose();
      fc.dispose();
      om.dispose([x, target]);
    }
  });
});
