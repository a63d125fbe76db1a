// Calls a model makes only at some residues of a size (docs/symbolic-axes.md, "Calls made only at
// some residues"): Hugging Face Swin pads to a multiple of the patch only where the size is not
// one and slices back only where it padded, MobileViT interpolates to a multiple of the patch only
// where the size is not one. Leaving such a call out is making it with a neutral argument (a pad
// by 0, a slice of the whole axis, an interpolate to the same size), so the trace writes the call
// at every size with its argument computed ((p - W % p) % p), one graph right at every size. Each
// model is traced at one size (a residue where it makes the calls, and a multiple where it does
// not) and run in onnxruntime-web and the Session at every residue, at 1, and far above, against
// its eager runs there.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced } from './helpers.mjs';

memoryHooks();

const F = om.nn.functional;
const ops = (tm) => tm.graph().nodes.map((n) => n.opType);
const fn = (f) => new (class extends om.nn.Module { forward(...xs) { return f(...xs); } })();

/** HF SwinEmbeddings.maybe_pad: pads the width, then the height, to a multiple of p where not one. */
const embeddingsPad = (p) => (x) => {
  const [, , H, W] = x.shape;
  let y = x;
  if (W % p !== 0) y = F.pad(y, [0, p - (W % p)]);
  if (H % p !== 0) y = F.pad(y, [0, 0, 0, p - (H % p)]);
  return y.mul(2);
};

/** HF SwinLayer: pads [B, H, W, C] to a multiple of the window w, and slices back where it padded. */
const layerPad = (w) => (x) => {
  const [, H, W] = x.shape;
  const padRight = (w - (W % w)) % w, padBottom = (w - (H % w)) % w;
  let y = F.pad(x, [0, 0, 0, padRight, 0, padBottom]).relu();
  if (padRight > 0 || padBottom > 0) y = y.slice(1, 0, H).slice(2, 0, W);
  return y;
};

/** MobileViTLayer.unfolding / folding: to a multiple of the patch where not one, and back. */
const mobilevit = (p) => (x) => {
  const [, , H, W] = x.shape;
  const nh = Math.ceil(H / p) * p, nw = Math.ceil(W / p) * p;
  const moved = nh !== H || nw !== W;
  let y = moved ? F.interpolate(x, { size: [nh, nw], mode: 'bilinear', alignCorners: false }) : x;
  y = y.reshape([y.shape[0], y.shape[1], nh / p, p, nw / p, p]).sum(3).sum(4).relu(); // something per patch
  y = y.repeatInterleave(p, 2).repeatInterleave(p, 3).mul(y.shape[2]);
  return moved ? F.interpolate(y, { size: [H, W], mode: 'bilinear', alignCorners: false }) : y;
};

/**
 * HF Longformer's _pad_to_window_size and the unpad at the end of its forward: pads the sequence
 * to a multiple of the attention window aw, attends within windows (a softmax over each here),
 * and slices back with a count from the end, `x[:, :-padding_len]`, only where it padded.
 */
const longformer = (aw) => (x) => {
  const T = x.shape[1];
  const paddingLen = (aw - (T % aw)) % aw;
  let y = paddingLen > 0 ? F.pad(x, [0, 0, 0, paddingLen]) : x;
  const [B, Tp, C] = y.shape;
  y = y.reshape([B, Tp / aw, aw, C]).softmax(2).reshape([B, Tp, C]);
  return paddingLen > 0 ? y.slice(1, 0, -paddingLen) : y;
};

/** The rows past the last multiple of k dropped with a count from the end, where there are any. */
const dropRest = (k) => (x) => {
  const rest = x.shape[1] % k;
  return (rest > 0 ? x.slice(1, 0, -rest) : x).tanh();
};

/** The pad written by hand: the width to a multiple of 4 where it is not one. */
const handPad = (x) => {
  const W = x.shape[3];
  return (W % 4 !== 0 ? F.pad(x, [0, 4 - (W % 4)]) : x).sigmoid();
};

/** Sizes across every residue of p (from p + 1 on), 1, the example's, and far above it (3 and 10 times). */
const sizesFor = (p, ex) => [...new Set([1, ...Array.from({ length: p }, (_, i) => p + 1 + i), ex, 3 * ex + 1, 10 * ex + 3])];

/** Throws unless got ({ dims, data }) is want's shape and values within 1e-5 of its largest magnitude. */
function agree(got, want, what) {
  assert.deepEqual(Array.from(got.dims, Number), Array.from(want.dims), `${what}: shape`);
  const bound = 1e-5 * Math.max(1, ...Array.from(want.data, Math.abs));
  for (let i = 0; i < want.data.length; i++) {
    const a = Number(got.data[i]), e = want.data[i];
    assert.ok(Math.abs(a - e) <= bound || (Number.isNaN(a) && Number.isNaN(e)), `${what} [${i}]: ${a} vs ${e}`);
  }
}

/** The .onnx files to run in onnxruntime-web, each with its cases: { label, bytes, cases: [{ x, want }] }. */
let forOrt = [];

/**
 * Traces model on x of shape(h, w) with the symbolic axes axes, at the example (h, w), keeps it
 * for the usual oracle at the example and at other sizes, and runs it in the Session (now) and
 * in onnxruntime-web (ortAgrees, one session for all) at each size of sizes along the symbolic
 * axes (both symbolic: h at each and w one more, so every residue of each; and each alone at 1),
 * against eager runs there. Returns the TracedModel.
 */
function traceAt(keep, model, shape, axes, [h, w], sizes) {
  const ex = om.randn(shape(h, w), { seed: h * 100 + w });
  const tm = om.trace(fn(model), { x: [ex, axes] });
  keep(tm, { x: ex }, model(ex), undefined, fn(model));
  const both = axes.filter((a) => a !== null).length === 2;
  const pairs = new Set();
  for (const s of sizes) for (const pair of both ? [[s, s + 1], ...(s === 1 ? [[s, w], [h, s]] : [])] : [[h, s]]) pairs.add(pair.join(','));
  const session = tm.session();
  const cases = [];
  try {
    for (const pair of pairs) {
      const [a, b] = pair.split(',').map(Number);
      const x = om.randn(shape(a, b), { seed: a * 1000 + b });
      const y = model(x);
      const want = { dims: y.shape, data: Float32Array.from(y.toArray()) };
      const got = Object.values(session.run({ x }))[0];
      agree({ dims: got.shape, data: got.toArray() }, want, `the Session at ${a}x${b}`);
      cases.push({ label: `${a}x${b}`, x: { dims: x.shape, data: Float32Array.from(x.toArray()) }, want });
    }
  } finally {
    session.dispose();
  }
  forOrt.push({ bytes: tm.toOnnx(), cases });
  return tm;
}

/** Runs every .onnx traceAt kept in onnxruntime-web at its cases, against the eager outputs. */
async function ortAgrees() {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  const todo = forOrt;
  forOrt = [];
  for (const { bytes, cases } of todo) {
    const s = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
    try {
      for (const { label, x, want } of cases) {
        const out = await s.run({ [s.inputNames[0]]: new ort.Tensor('float32', x.data, x.dims) });
        agree(out[s.outputNames[0]], want, `onnxruntime-web at ${label}`);
      }
    } finally {
      await s.release();
    }
  }
}

const nchw = (h, w) => [1, 2, h, w];
const nhwc = (h, w) => [1, h, w, 3];

describe('calls made only at some residues: one graph, right at every size', () => {
  test('Swin embeddings maybe_pad, patches 4 and 7 traced where it pads, 5 where it does not', async () => {
    await withTraced((keep) => {
      for (const [p, at] of [[4, [6, 5]], [7, [9, 10]], [5, [10, 15]]]) {
        {
          const tm = traceAt(keep, embeddingsPad(p), nchw, [null, null, 'H', 'W'], at, sizesFor(p, at[1]));
          assert.equal(ops(tm).filter((o) => o === 'Pad').length, 2, `${p} at ${at}: ${ops(tm)}`);
          assert.ok(!ops(tm).includes('If'), `${p} at ${at}: no branch, ${ops(tm)}`);
          for (const s of tm.symbols) assert.deepEqual([s.min, s.max, s.multipleOf, s.narrowedBy], [1, Infinity, 1, null]);
        }
      }
    });
    await ortAgrees();
  });

  test('Swin layer: pad to a multiple of the window, slice back only where it padded, windows 7 (traced where it pads) and 5 (where it does not)', async () => {
    await withTraced((keep) => {
      for (const [w, at] of [[7, [10, 9]], [5, [5, 10]]]) {
        {
          const tm = traceAt(keep, layerPad(w), nhwc, [null, 'H', 'W', null], at, sizesFor(w, at[1]));
          assert.deepEqual(ops(tm).filter((o) => o === 'Pad' || o === 'Slice' || o === 'If'), ['Pad', 'Slice', 'Slice'], `${w} at ${at}`);
        }
      }
    });
    await ortAgrees();
  });

  test('MobileViT: interpolate to a multiple of the patch and back only where the size is not one, patches 2 (traced where it interpolates) and 3 (where it does not)', async () => {
    await withTraced((keep) => {
      for (const [p, at] of [[2, [5, 7]], [3, [6, 9]]]) {
        {
          const tm = traceAt(keep, mobilevit(p), nchw, [null, null, 'H', 'W'], at, sizesFor(p, at[1]));
          // bilinear to ceil(H / p) * p: the eager taps (no Resize: its coordinates round otherwise
          // at large sizes), and a copy where the size is kept (a Where on the two sizes)
          assert.ok(!ops(tm).includes('Resize') && ops(tm).filter((o) => o === 'Where').length === 4, `${p} at ${at}: ${ops(tm)}`);
          assert.ok(!ops(tm).includes('If'));
        }
      }
    });
    await ortAgrees();
  });

  test('Longformer: pad to a multiple of the window, and x[:, :-padding_len] only where it padded, windows 6 (traced where it pads) and 10 (where it does not)', async () => {
    // the end counts from the end where the call is made and the call is left out at the
    // multiples: the graph writes the end the slice takes (T), one Slice right at every size
    await withTraced((keep) => {
      for (const [aw, at] of [[6, [0, 9]], [10, [0, 20]]]) {
        const tm = traceAt(keep, longformer(aw), (h, t) => [2, t, 3], [null, 'T', null], at, sizesFor(aw, at[1]));
        assert.deepEqual(ops(tm).filter((o) => o === 'Pad' || o === 'Slice' || o === 'If'), ['Pad', 'Slice'], `${aw} at ${at}`);
        assert.deepEqual([tm.symbols[0].min, tm.symbols[0].max, tm.symbols[0].narrowedBy], [1, Infinity, null]);
      }
      for (const [k, at] of [[4, [0, 7]], [9, [0, 18]]]) {
        const tm = traceAt(keep, dropRest(k), (h, t) => [2, t, 3], [null, 'T', null], at, sizesFor(k, at[1]));
        assert.ok(!ops(tm).includes('If'), `${k} at ${at}: ${ops(tm)}`);
      }
    });
    await ortAgrees();
  });

  test('the pad written by hand: W % 4 !== 0 ? pad(x, [0, 4 - W % 4]) : x', async () => {
    await withTraced((keep) => {
      for (const at of [[3, 10], [3, 12]]) {
        const tm = traceAt(keep, handPad, nchw, [null, null, null, 'W'], at, sizesFor(4, at[1]));
        assert.ok(ops(tm).includes('Pad') && !ops(tm).includes('If'), ops(tm).join());
      }
    });
    await ortAgrees();
  });

  test('the graph\'s interpolate to its own size, where the model leaves its interpolate out, is the identity bit for bit: -0, inf and NaN kept (onnxruntime-web: -0 as +0)', async () => {
    // where the graph keeps MobileViT's interpolate at a multiple, eager makes no call
    const model = (x) => {
      const [, , H, W] = x.shape;
      const nh = Math.ceil(H / 2) * 2, nw = Math.ceil(W / 2) * 2;
      return nh !== H || nw !== W ? F.interpolate(x, { size: [nh, nw], mode: 'bilinear', alignCorners: false }) : x;
    };
    const vals = [-0, Infinity, NaN, 1.5, -Infinity, 0, 2, -3];
    const data = Float32Array.from({ length: 32 }, (_, i) => vals[i % 8]);
    const bits = (a) => Array.from(new Uint32Array(Float32Array.from(a).buffer));
    const { bytes, session } = om.tidy(() => {
      const x = om.tensor(data).reshape([1, 1, 4, 8]);
      const tm = om.trace(fn(model), { x: [om.randn([1, 1, 5, 7], { seed: 3 }), [null, null, 'H', 'W']] });
      try {
        assert.ok(ops(tm).includes('Where'), ops(tm).join());
        const sess = tm.session();
        try {
          return {
            bytes: tm.toOnnx(),
            session: Array.from(Object.values(sess.run({ x }))[0].toArray()),
          };
        } finally {
          sess.dispose();
        }
      } finally {
        tm.dispose();
      }
    });
    assert.deepEqual(bits(session), bits(data), 'the Session');
    const ort = await import('onnxruntime-web');
    ort.env.wasm.numThreads = 1;
    const s = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
    try {
      const out = await s.run({ x: new ort.Tensor('float32', data, [1, 1, 4, 8]) });
      // onnxruntime-web's Where gives -0 as +0 (a Where picking it alone does: checked by hand);
      // inf and NaN come through, and every other number bit for bit
      const unsigned = (a) => Array.from(a, (v) => (v === 0 ? 0 : v));
      assert.deepEqual(bits(unsigned(out[s.outputNames[0]].data)), bits(unsigned(data)), 'onnxruntime-web');
    } finally {
      await s.release();
    }
  });
});

describe('a window\'s padding of a pooled width, at any batch', () => {
  // SAM's window_partition after a patch embedding: (5 - w % 5) % 5 of w = floor(W / 8). Traced at
  // batch 3 (5, 7) with symbolic batch, height and width it was refused, at batch 2 it traced: the
  // batch's smallest run made its run's other sizes near ones (one far width fewer), and the more
  // runs went first to the batch and the height, which looked like what the pad is a function of
  // (every run moving another symbol alone repeats their example sizes). Now one graph at every
  // batch, right in both engines at batches 1 to 7 and every residue of w mod 5.
  const windowPad = (x) => {
    const y = F.avgPool2d(x, 8);
    return F.pad(y, [0, (5 - (y.shape[3] % 5)) % 5]);
  };
  test('F.pad(F.avgPool2d(x, 8), [0, (5 - w % 5) % 5]) traced at batches 2, 3, 5 and 7', async () => {
    await withTraced((keep) => {
      for (const b0 of [2, 3, 5, 7]) {
        const ex = om.randn([b0, 1, 9, 17], { seed: b0 });
        const tm = om.trace(fn(windowPad), { x: [ex, ['B', null, 'H', 'W']] });
        assert.deepEqual(ops(tm).filter((o) => o === 'Pad' || o === 'If'), ['Pad'], `batch ${b0}`);
        keep(tm, { x: ex }, windowPad(ex), `batch ${b0}: the example`, fn(windowPad));
        for (const b of [1, 2, 3, 5, 7]) {
          for (const w of [40, 8, 16, 24, 32, 47]) { // w = floor(W / 8): every residue mod 5, and 5 at 47
            const x = om.randn([b, 1, 8 + (w % 3), w], { seed: b * 100 + w });
            keep(tm, { x }, windowPad(x), `batch ${b0}: at ${x.shape}`);
          }
        }
      }
    });
  });
});

describe('chunk and split along a symbolic axis', () => {
  test('x.chunk(3, 3): traced over the range, pieces of ceil(W / 3), right where there are fewer pieces too', async () => {
    await withTraced((keep) => {
      const model = (x) => om.cat(x.chunk(3, 3).reverse(), 3).relu();
      const tm = traceAt(keep, model, nchw, [null, null, null, 'W'], [3, 10], sizesFor(3, 10));
      assert.equal(tm.symbols[0].min, 1);
      // declared so that every size has three pieces: one graph, no If
      const ex = om.randn([1, 2, 3, 10], { seed: 5 });
      const tm2 = om.trace(fn(model), { x: [ex, [null, null, null, om.Dim('W', { min: 5 })]] });
      keep(tm2, { x: ex }, model(ex), undefined, fn(model));
      assert.ok(!ops(tm2).includes('If'), ops(tm2).join());
      for (const s of [5, 7, 31]) {
        const x = om.randn([1, 2, 3, s], { seed: s });
        keep(tm2, { x }, model(x), `declared, at W=${s}`);
      }
    });
    await ortAgrees();
  });

  test('a piece of x.chunk(3, 3) the model takes: the range begins where it exists', async () => {
    await withTraced((keep) => {
      const model = (x) => x.chunk(3, 3)[1].relu();
      const tm = traceAt(keep, model, nchw, [null, null, null, 'W'], [3, 10], sizesFor(3, 10).filter((s) => s > 1));
      assert.equal(tm.symbols[0].min, 2);
      assert.match(tm.symbols[0].narrowedBy, /W=1/);
    });
    await ortAgrees();
  });
});

describe('refusals', () => {
  test('a call present only at some residues that is not the identity where absent: SymbolicShape naming the multiple', () => om.tidy(() => {
    // relu only where W % 3 != 0: absent is not relu of anything
    const model = (x) => (x.shape[3] % 3 !== 0 ? x.relu() : x).mul(2);
    const ex = om.randn([1, 2, 3, 10], { seed: 1 });
    assert.throws(() => om.trace(fn(model), { x: [ex, [null, null, null, 'W']] }), (e) => {
      assert.ok(e instanceof om.TraceError);
      assert.equal(e.kind, 'SymbolicShape');
      assert.match(e.message, /relu|mul/);
      assert.match(e.message, /multipleOf: 3/);
      return true;
    });
  }));

  test('declared a multiple of the patch, the pad is never made: traced, and other sizes refused by the Session', async () => {
    await withTraced((keep) => {
      const model = embeddingsPad(4);
      const ex = om.randn([1, 2, 8, 12], { seed: 2 });
      const tm = om.trace(fn(model), { x: [ex, [null, null, om.Dim('H', { multipleOf: 4 }), om.Dim('W', { multipleOf: 4 })]] });
      keep(tm, { x: ex }, model(ex), undefined, fn(model));
      assert.ok(!ops(tm).includes('Pad'));
      // the .onnx records the multiple (metadata_props, as narrowed ranges are recorded)
      const text = Buffer.from(tm.toOnnx()).toString('latin1');
      assert.match(text, /onemodel\.symbol\.W[^{]*\{"min":\d+,"max":null,"multipleOf":4,/);
      for (const [h, w] of [[4, 4], [16, 40]]) {
        const x = om.randn([1, 2, h, w], { seed: h + w });
        keep(tm, { x }, model(x), `at ${h}x${w}`);
      }
      const session = tm.session();
      try {
        assert.throws(() => session.run({ x: om.randn([1, 2, 8, 13]) }), (e) => {
          assert.ok(e instanceof om.OmError);
          assert.match(e.message, /'W' is 13 .* in multiples of 4/);
          return true;
        });
      } finally {
        session.dispose();
      }
    });
  });

  test('pads of either side left out at some residues, then a threshold on min(H, W) (HF Swin\'s set_shift_and_window_size): cut on H, its piece above cut on W, right on every side', async () => {
    // A run that lacks the height's pad also takes the other path: it was compared pad by pad
    // (the width's with the height's: "passes 3 integer arguments here and 5") instead of at the
    // threshold. Windows 11 and 6 (other constants than the ports'). Traced undeclared at sizes on
    // either side, one graph (nested Ifs) holds from 1 on both sides of the threshold.
    for (const [t, ex, other] of [[11, [15, 21], [16, 25]], [6, [9, 7], [8, 13]]]) {
      const model = (x) => {
        let y = x;
        const [H, W] = x.shape.slice(2);
        if (W % 2 !== 0) y = F.pad(y, [0, 1]);
        if (H % 2 !== 0) y = F.pad(y, [0, 0, 0, 1]);
        return Math.min(H, W) > t ? y.relu() : y.neg();
      };
      const sides = [{ min: 1, max: t }, { min: t + 1, max: Infinity }];
      for (const at of [ex, other]) {
        await withTraced((keep) => {
          const x = om.randn([1, 2, ...at], { seed: 2 });
          const tm = om.trace(fn(model), { x: [x, [null, null, 'H', 'W']] });
          assert.deepEqual(tm.symbols.map((s) => [s.name, s.min, s.max, s.branches]), [['H', 1, Infinity, sides], ['W', 1, Infinity, sides]]);
          keep(tm, { x }, model(x), `window ${t} at ${at}`, fn(model));
          for (const [h, w] of [[1, 1], [t, t], [t, t + 1], [t + 1, t], [t + 1, t + 1], [t + 2, 5 * t], [8 * t + 1, t + 4], [3, 4 * t + 1]]) {
            const y = om.randn([1, 2, h, w], { seed: h * w });
            keep(tm, { x: y }, model(y), `window ${t} at ${h}x${w}`);
          }
        });
      }
    }
  });

  test('split(4, 3) along a symbolic axis: ceil(W / 4) pieces, the last one shorter, rolled into a Loop right at every size', () => withTraced((keep) => {
    const model = fn((x) => om.cat(x.split(4, 3).map((p) => p.sum(3, true)), 3));
    const ex = om.randn([1, 2, 3, 10], { seed: 1 });
    const tm = om.trace(model, { x: [ex, [null, null, null, 'W']] });
    assert.ok(tm.graph().nodes.some((n) => n.opType === 'Loop'));
    assert.deepEqual([tm.symbols[0].min, tm.symbols[0].max, tm.symbols[0].narrowedBy], [1, Infinity, null]);
    keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
    for (const w of [1, 3, 4, 5, 8, 13, 40]) {
      const x = om.randn([1, 2, 3, w], { seed: w });
      keep(tm, { x }, [model.forward(x)]);
    }
  }));
});
