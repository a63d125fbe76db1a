// Size thresholds written as an ONNX If (docs/symbolic-axes.md, "Thresholds become branches"):
// a model that does another thing from some size of one symbol on traces to an If on that size,
// each branch traced on its own piece of the range. Every model runs in onnxruntime-web and the
// Session (from the traced model, from its .onnx and from the library format) on both sides of
// each threshold, at it and one above, and far above, against eager runs there.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced, startOracle } from './helpers.mjs';

memoryHooks();

const ops = (tm) => tm.graph().nodes.map((n) => n.opType);

/** A Module from a function of its inputs. */
const fn = (f) => new (class extends om.nn.Module { forward(...xs) { return f(...xs); } })();

/** Floats of t, for comparisons. */
const data = (t) => Array.from(t.toArray());

/**
 * Keeps tm for the oracle (onnxruntime-web and the Session) at each seq size of sizes (inputs of
 * shape(s)) against model's eager runs there, and returns what sessionsAgree checks: the .onnx
 * and library-format bytes, the inputs and the eager outputs.
 */
function atSizes(keep, tm, model, sizes, shape = (s) => [2, s, 4]) {
  const cases = sizes.map((s) => {
    const x = om.randn(shape(s), { seed: 100 + s });
    const y = model.forward(x);
    const want = Array.isArray(y) ? y : [y];
    keep(tm, { x }, want, `at seq=${s}`);
    return { s, x: { data: Float32Array.from(x.toArray()), dims: x.shape, type: 'float32' }, want: want.map((w) => ({ dims: w.shape, data: data(w) })) };
  });
  return { bytes: [tm.toOnnx(), tm.save()], cases };
}

/** The Session made from each of the bytes gives the eager outputs at every case. */
async function sessionsAgree({ bytes, cases }) {
  for (const [k, b] of bytes.entries()) {
    const session = await om.InferenceSession.create(b);
    try {
      for (const { s, x, want } of cases) {
        const got = Object.values(session.runData({ x }));
        assert.equal(got.length, want.length);
        got.forEach((g, j) => {
          const what = `${k ? 'library format' : '.onnx'} at seq=${s}, output ${j}`;
          assert.deepEqual(Array.from(g.dims), want[j].dims, what);
          const a = Array.from(g.data), e = want[j].data;
          for (let i = 0; i < a.length; i++) assert.ok(Math.abs(Number(a[i]) - e[i]) <= 1e-5 * (1 + Math.abs(e[i])), `${what} [${i}]: ${a[i]} vs ${e[i]}`);
        });
      }
    } finally {
      session.dispose();
    }
  }
}

/** Traces model on x ([2, seq, 4] with batch and seq symbolic), keeps it with its example. */
function traceSeq(keep, model, seq = 8, axes = ['batch', 'seq', null]) {
  const ex = om.randn([2, seq, 4], { seed: seq });
  const tm = om.trace(model, { x: [ex, axes] });
  const y = model.forward(ex);
  keep(tm, { x: ex }, Array.isArray(y) ? y : [y], undefined, model);
  return tm;
}

const seqOf = (tm) => tm.symbols.find((s) => s.name === 'seq');

/** The line of this file that calls it. */
const lineHere = () => Number(/:(\d+):\d+\)?$/.exec(new Error().stack.split('\n')[2])[1]);

describe('size thresholds become an If', () => {
  test('T > c ? a : b for several c: an If on seq, each piece right on its side, at c and c + 1, and far above', async () => {
    const checks = await withTraced((keep) => [9, 32, 321, 1000].map((c) => {
      const model = fn((x) => (x.shape[1] > c ? x.sigmoid() : x.abs()));
      const tm = traceSeq(keep, model);
      assert.deepEqual(ops(tm), ['Shape', 'Less', 'If']);
      assert.deepEqual(seqOf(tm).branches, [{ min: 1, max: c }, { min: c + 1, max: Infinity }]);
      assert.equal(seqOf(tm).max, Infinity);
      assert.equal(tm.symbols.find((s) => s.name === 'batch').branches, undefined);
      return atSizes(keep, tm, model, [1, 2, c - 1, c, c + 1, c + 2, 4 * c + 7]);
    }));
    for (const c of checks) await sessionsAgree(c);
  });

  test('the example above the threshold: the piece below is traced at an example of its own', async () => {
    await sessionsAgree(await withTraced((keep) => {
      const model = fn((x) => (x.shape[1] > 20 ? x.relu() : x.neg()));
      const tm = traceSeq(keep, model, 40);
      assert.deepEqual(seqOf(tm).branches, [{ min: 1, max: 20 }, { min: 21, max: Infinity }]);
      return atSizes(keep, tm, model, [1, 3, 20, 21, 40, 300]);
    }));
  });

  test('a branch that makes more calls, and one that changes an argument (a pad amount, a slice end)', async () => {
    const more = fn((x) => (x.shape[1] > 12 ? x.relu().mul(x.sigmoid()).add(1) : x.neg()));
    const pad = fn((x) => om.nn.functional.pad(x, [0, 0, 0, x.shape[1] > 30 ? 3 : 1]).mul(2));
    const slice = fn((x) => x.narrow(1, 0, x.shape[1] >= 100 ? 2 : 1).exp());
    const checks = await withTraced((keep) => [[more, 12], [pad, 30], [slice, 99]].map(([model, c]) => {
      const tm = traceSeq(keep, model);
      assert.deepEqual(seqOf(tm).branches, [{ min: 1, max: c }, { min: c + 1, max: Infinity }]);
      return atSizes(keep, tm, model, [1, 5, c, c + 1, 3 * c]);
    }));
    for (const c of checks) await sessionsAgree(c);
  });

  test('branches that both begin with a scalar (mul by one, add another): the run across the threshold parts at the op, not at the scalar', async () => {
    // BigBird-style switch by length whose two sides each make a scalar first: the far run
    // (8 x the example + 5) lies past the threshold and its first call, the scalar, holds another
    // value than the record run's; that is another path, not a value the sizes compute
    const checks = await withTraced((keep) => [[30, 2, 1], [60, -0.5, 3], [100, 7, 0.25]].map(([c, m, a]) => {
      const model = fn((x) => (x.shape[1] > c ? x.mul(m) : x.add(a)));
      const tm = traceSeq(keep, model);
      assert.deepEqual(seqOf(tm).branches, [{ min: 1, max: c }, { min: c + 1, max: Infinity }]);
      return atSizes(keep, tm, model, [1, 7, c, c + 1, 2 * c + 3]);
    }));
    for (const c of checks) await sessionsAgree(c);
  });

  test('two thresholds: three pieces, nested Ifs', async () => {
    await sessionsAgree(await withTraced((keep) => {
      const model = fn((x) => (x.shape[1] > 50 ? x.relu() : x.shape[1] > 10 ? x.neg() : x.abs()));
      const tm = traceSeq(keep, model);
      assert.deepEqual(seqOf(tm).branches, [{ min: 1, max: 10 }, { min: 11, max: 50 }, { min: 51, max: Infinity }]);
      return atSizes(keep, tm, model, [1, 10, 11, 50, 51, 400]);
    }));
  });

  test("LLaMA's T > 1 causal mask: the piece of one size is traced with that axis fixed", async () => {
    await sessionsAgree(await withTraced((keep) => {
      const model = fn((x) => {
        const T = x.shape[1];
        let s = x.matmul(x.transpose(1, 2));
        if (T > 1) s = s.add(om.ones([T, T]).triu(1).mul(-1e9));
        return s.softmax(-1).matmul(x);
      });
      const tm = traceSeq(keep, model);
      assert.deepEqual(seqOf(tm).branches, [{ min: 1, max: 1 }, { min: 2, max: Infinity }]);
      return atSizes(keep, tm, model, [1, 2, 3, 8, 100]);
    }));
  });

  test('a piece whose graph holds from one size above its cut: the size between is a piece of its own', async () => {
    // pad to max(a, T) rows, the second of split(w)'s pieces (fixed at w from T = 2w on), a mask
    // of its rows written in place up to t - q: the upper piece's probe of the Add fails where
    // the piece is one row shorter than w, and the model answers there (random model 21:2894)
    const F = om.nn.functional;
    const checks = await withTraced((keep) => [[6, 5, 4, 10], [8, 6, 3, 13]].map(([a, w, q, seq]) => {
      const model = fn((x) => {
        const v = F.pad(x, [0, 0, 0, Math.max(a, x.shape[1]) - x.shape[1]]).split(w, 1)[1];
        const t = v.shape[1];
        const m = om.zeros([t]);
        m.slice(0, 0, t - q).add_(1);
        return v.add(m.reshape(1, -1, 1));
      });
      const tm = traceSeq(keep, model, seq);
      assert.equal(seqOf(tm).min, 1);
      assert.equal(seqOf(tm).narrowedBy, null);
      return atSizes(keep, tm, model, [1, 2, a - 1, a, a + 1, 2 * w - 2, 2 * w - 1, 2 * w, 2 * w + 1, 7 * w + 2]);
    }));
    for (const c of checks) await sessionsAgree(c);
  });

  test('a minimum raised where the model answers on one symbol, another raised where it fails: cut on the first', async () => {
    // a reflect pad of p columns and one row (W > p, H > 1: the model fails below) and columns a
    // to W + p, an end that clamps below the example: at a small W the model computes another
    // size and answers there, so the trace is cut on W (random model 21:414), while H's minimum,
    // raised where the pad fails, stays in each piece
    const F = om.nn.functional;
    const checks = await withTraced((keep) => [[3, 5, 9, 7], [4, 6, 11, 5]].map(([p, a, w, h]) => {
      const model = fn((x) => F.pad(x, [p, 0, 1, 1], 'reflect').slice(3, a, w + p).flatten(1));
      const ex = om.randn([3, 1, h, w], { seed: p });
      const tm = om.trace(model, { x: [ex, [null, null, 'H', 'W']] });
      keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
      const [H, W] = tm.symbols;
      assert.deepEqual([H.min, H.max, H.branches], [2, Infinity, undefined]);
      assert.match(H.narrowedBy, /^pad/);
      assert.equal(W.min, p + 1);
      assert.deepEqual(W.branches, [{ min: p + 1, max: w - 1 }, { min: w, max: Infinity }]);
      const atW = atSizes(keep, tm, model, [p + 1, p + 2, a + 1, w - 1, w, w + 1, 2 * w + 3, 61], (s) => [3, 1, 3, s]);
      const atH = atSizes(keep, tm, model, [2, 3, h + 4, 40], (s) => [3, 1, s, a + 2]);
      return { bytes: atW.bytes, cases: [...atW.cases, ...atH.cases.map((c) => ({ ...c, s: `H ${c.s}` }))] };
    }));
    for (const c of checks) await sessionsAgree(c);
  });

  test('three pieces, a pad and a max-pool after a mask of zeros in the one-size piece: onnxruntime-web with its default optimizations and the Session agree on every side of each threshold', async () => {
    // the piece N = 1 adds a constant mask of zeros: onnxruntime's NoopElimination drops that
    // Add, and its PadFusion then folded the Pad of 0 into the MaxPool's pads (padding that never
    // wins), wrong wherever a window's values are all negative (random model 21:54928); every Pad
    // now names its axes, which PadFusion skips. Checked with onnxruntime-web's default
    // optimizations (the oracle's) and the Session.
    const F = om.nn.functional;
    const checks = await withTraced((keep) => [[6, 4, [1, 2]], [9, 12, [2, 0]]].map(([c, n0, pads]) => {
      const model = fn((x) => {
        const N = x.shape[0];
        const m = om.zeros([N]);
        if (N > 1) m.slice(0, 0, N - 1).add_(-1.5);
        const y = N > c ? x.mul(0.5) : x;
        return F.maxPool2d(F.pad(y.abs().neg(), pads).add(m.reshape(-1, 1, 1, 1)), 3, { stride: 2, padding: 1 });
      });
      const shape = (n) => [n, 2, 5, 6];
      const ex = om.randn(shape(n0), { seed: c });
      const tm = om.trace(model, { x: [ex, ['N', null, null, null]] });
      keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
      assert.deepEqual(tm.symbols[0].branches, [{ min: 1, max: 1 }, { min: 2, max: c }, { min: c + 1, max: Infinity }]);
      return atSizes(keep, tm, model, [1, 2, 3, c - 1, c, c + 1, c + 2, 5 * c], shape);
    }));
    for (const c of checks) await sessionsAgree(c);
  });

  test('a model that does something else at each small size: one piece per size below the first threshold, at small and large examples', async () => {
    // another op at each of the sizes 1 to c - 1 (3 to 5 one-size pieces), a mask of N - c rows
    // written in place (empty at N = 1 and from N = c on, until it is not), and a pad whose amount
    // is a table of the small sizes: the piece below a threshold, refused as one piece (its own
    // thresholds, more than the pieces left), is traced size by size, each an If on its size, but
    // where every size of a piece has been run, an argument that fits them all is one piece (the
    // mask's end N - 3 at N = 1 and 2, the pad 7 - 3N there)
    const F = om.nn.functional;
    const unary = [(v) => v.abs(), (v) => v.neg().add(0.25), (v) => v.exp(), (v) => v.relu().mul(3), (v) => v.sin()];
    const byOp = (c) => fn((x) => (x.shape[0] < c ? unary[x.shape[0] - 1](x) : x.tanh()));
    const masked = (c) => fn((x) => {
      const N = x.shape[0], m = om.zeros([N]);
      m.slice(0, 0, N - c).add_(2);
      return x.mul(m.reshape(-1, 1).add(0.5)).sum(0);
    });
    const padded = (table) => fn((x) => F.pad(x, [0, 0, 0, table[x.shape[0] - 1] ?? 0]).mul(2));
    const cases = [ // model, its pieces (the first size of each), example sizes
      [byOp(4), [1, 2, 3, 4], [2, 9, 50]],
      [byOp(6), [1, 2, 3, 4, 5, 6], [3, 9]],
      [masked(3), [1, 3], [5, 40]],
      [padded([4, 1, 2]), [1, 3], [3]],
    ];
    const checks = await withTraced((keep) => cases.flatMap(([model, starts, examples]) => examples.map((n) => {
      const shape = (s) => [s, 3];
      const ex = om.randn(shape(n), { seed: n });
      const tm = om.trace(model, { x: [ex, ['N', null]] });
      keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
      const branches = tm.symbols[0].branches;
      assert.deepEqual(branches.map((b) => b.min), starts, JSON.stringify(branches));
      assert.equal(branches[branches.length - 1].max, Infinity);
      const last = starts[starts.length - 1];
      return atSizes(keep, tm, model, [...Array.from({ length: last + 2 }, (_, i) => i + 1), 97], shape);
    })));
    for (const c of checks) await sessionsAgree(c);
  });

  test('a one-size piece where the model fails is left out: the range ends there, with the reason', () => withTraced((keep) => {
    // squeeze drops the axis at L = 1, and the slice of axis 1 after it fails there: a threshold
    // at 2 whose piece below is the one size where eager has no answer (random model 21:1106)
    const model = fn((x) => x.squeeze().logSoftmax(-1).slice(1, 0, x.shape[2] - 1).flatten(0, 1));
    for (const l of [4, 10]) {
      const ex = om.randn([5, 1, l], { seed: l });
      const tm = om.trace(model, { x: [ex, [null, null, 'L']] });
      keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
      assert.equal(tm.symbols[0].min, 2);
      assert.match(tm.symbols[0].narrowedBy, /^trace: at L=1 the model fails \(slice: dim 1 is out of range for 1 dims\)/);
      for (const s of [2, 3, 31]) keep(tm, { x: om.randn([5, 1, s], { seed: s }) }, [model.forward(om.randn([5, 1, s], { seed: s }))], `at L=${s}`);
      ex.dispose();
    }
  }));

  test('a Pad of 0, an Add of 0 or a Mul by 1, then a max-pool: every Pad names its axes, and onnxruntime-web agrees with its default optimizations', () => withTraced((keep, trace) => {
    const F = om.nn.functional;
    const x = om.randn([2, 3, 6, 7], { seed: 4 }).abs().neg(); // all negative: the zero padding wins at the edges
    for (const mid of [(p) => p.add(om.zeros([1, 1, 1, 1])), (p) => p.mul(om.ones([1, 3, 1, 1])), (p) => p.sub(0)]) {
      const tm = trace((v) => F.maxPool2d(mid(F.pad(v, [2, 1, 1, 0])), 3, { stride: 2 }), { x });
      const pads = tm.graph().nodes.filter((n) => n.opType === 'Pad');
      assert.equal(pads.length, 1);
      assert.equal(pads[0].inputs.length, 4, 'the axes input');
    }
  }));

  test("torchvision Swin's shift of 0 where the padded height is at most the window, the batch symbolic too: an If on H, the batch's range whole", async () => {
    // shifted_window_attention pads H to a multiple of the window, then `if window_size >= pad_H:
    // shift = 0`: a roll by another amount below the example. The runs at a small batch and a
    // large H roll as the example does; they were dropped with the small H ones, and the batch's
    // minimum rose for nothing (a refusal naming om.Dim('B', { min: ... }))
    const F = om.nn.functional;
    const swinShift = (ws, shift) => fn((x) => {
      const H = x.shape[1];
      const y = F.pad(x, [0, 0, 0, (ws - (H % ws)) % ws]);
      const s = ws >= y.shape[1] ? 0 : shift;
      // a running sum between the rolls, so the shift changes the values (a roll, an elementwise
      // op and the roll back would be one graph: the pieces compute the same values)
      return y.roll(-s, 1).cumsum(1).roll(s, 1).slice(1, 0, H);
    });
    const checks = await withTraced((keep) => [[5, 2, 3, 9], [4, 1, 2, 6]].map(([ws, shift, b, h]) => {
      const model = swinShift(ws, shift);
      const ex = om.randn([b, h, 4], { seed: ws });
      const tm = om.trace(model, { x: [ex, ['B', 'H', null]] });
      keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
      const [B, H] = tm.symbols;
      assert.deepEqual([B.min, B.max, B.narrowedBy, B.branches], [1, Infinity, null, undefined]);
      assert.deepEqual(H.branches, [{ min: 1, max: ws }, { min: ws + 1, max: Infinity }]);
      assert.ok(ops(tm).includes('If'), ops(tm).join());
      const atH = atSizes(keep, tm, model, [1, 2, ws - 1, ws, ws + 1, ws + 2, 2 * ws + 1, 10 * h + 3, 50 * h + 1]);
      const atB = atSizes(keep, tm, model, [1, ws, ws + 1, 23], (s) => [1, s, 4]);
      return { bytes: atH.bytes, cases: [...atH.cases, ...atB.cases.map((c) => ({ ...c, s: `B 1, ${c.s}` }))] };
    }));
    for (const c of checks) await sessionsAgree(c);
  });

  test('a threshold below the example and a slice\'s end read as a length above it (BigBird\'s pad and unpad): an If over the whole declared range, no range narrowed', async () => {
    // above th the sequence is padded to a multiple of b and sliced back by a count from the end
    // where it padded: the end's fit finds no form (-pad here, the whole axis where no pad is
    // made) before it is read as a length, while the runs below th (another op from the first
    // call) had narrowed seq where the model answers. Beginning the trace again in that narrowed
    // range there (om__run_narrowed_again, meant for a call refused next) raised seq's minimum
    // step by step and took it for the declaration: traced, seq from 7 with no narrowedBy and the
    // If's lower piece 7..th, where eager answers from 1 (BigBird traced at 31)
    const F = om.nn.functional;
    const checks = await withTraced((keep) => [[14, 2, 31], [9, 3, 25]].map(([th, b, seq]) => {
      const model = fn((x) => {
        const [B, T, C] = x.shape;
        if (T <= th) return x.softmax(1).mul(3);
        const pad = (b - (T % b)) % b;
        const Tp = T + pad;
        const y = F.pad(x, [0, 0, 0, pad]).reshape([B, Tp / b, b, C]).softmax(2).reshape([B, Tp, C]);
        return (pad > 0 ? y.slice(1, 0, -pad) : y).mul(2);
      });
      const tm = traceSeq(keep, model, seq);
      const s = seqOf(tm);
      assert.deepEqual([s.min, s.max, s.narrowedBy, s.checked.min], [1, Infinity, null, 1]);
      assert.deepEqual(s.branches, [{ min: 1, max: th }, { min: th + 1, max: Infinity }]);
      return atSizes(keep, tm, model, [1, 2, 7, th, th + 1, th + 2, th + b + 1, 10 * seq + 1]);
    }));
    for (const c of checks) await sessionsAgree(c);
  });

  test('thresholds on two symbols: cut on the first, its piece cut on the second (nested Ifs), right on every side of both', async () => {
    const pts = [[1, 1], [3, 8], [6, 20], [6, 21], [7, 20], [7, 21], [2, 97], [40, 3], [13, 13]];
    await sessionsAgree(await withTraced((keep) => {
      const model = fn((x) => (x.shape[0] > 6 ? x.relu() : x.shape[1] > 20 ? x.neg() : x.abs()));
      const ex = om.randn([3, 8, 4], { seed: 5 });
      const tm = om.trace(model, { x: [ex, ['batch', 'seq', null]] });
      keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
      const [batch, seq] = tm.symbols;
      assert.deepEqual([batch.min, batch.max, batch.branches], [1, Infinity, [{ min: 1, max: 6 }, { min: 7, max: Infinity }]]);
      assert.deepEqual([seq.min, seq.max, seq.branches], [1, Infinity, [{ min: 1, max: 20 }, { min: 21, max: Infinity }]]);
      return atSizes(keep, tm, model, pts.map((_, i) => i), (i) => [...pts[i], 4]);
    }));
  });

  test('a threshold on Math.min(H, W): cut on H, the piece above cut on W, right on each side, at the thresholds, at odd sizes and at 1', async () => {
    for (const [c, h, w] of [[6, 10, 11], [6, 3, 11], [6, 11, 3], [30, 40, 31]]) {
      const pts = [[1, 1], [1, 57], [57, 1], [c, c], [c, c + 1], [c + 1, c], [c + 1, c + 1], [3, 40], [41, 3], [97, 33]];
      await sessionsAgree(await withTraced((keep) => {
        const model = fn((x) => (Math.min(x.shape[1], x.shape[2]) > c ? x.relu().mul(2) : x.sigmoid()));
        const ex = om.randn([2, h, w], { seed: c + h });
        const tm = om.trace(model, { x: [ex, ['b', 'H', 'W']] });
        keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
        const sides = [{ min: 1, max: c }, { min: c + 1, max: Infinity }];
        assert.deepEqual(tm.symbols.map((s) => [s.name, s.min, s.max, s.branches]), [['b', 1, Infinity, undefined], ['H', 1, Infinity, sides], ['W', 1, Infinity, sides]]);
        return atSizes(keep, tm, model, pts.map((_, i) => i), (i) => [1, ...pts[i]]);
      }));
    }
  });

  test('a piece with no size that can be an example (all below 2) is refused, with the declaration', () => {
    const ex = om.randn([2, 8, 4], { seed: 7 });
    assert.throws(() => om.trace(fn((x) => (x.shape[1] > 1 ? x.relu() : x.neg())), { x: [ex, ['batch', om.Dim('seq', { min: 0 }), null]] }),
      (e) => e instanceof om.TraceError && e.kind === 'SymbolicShape' &&
        /changes at a size threshold of 'seq' \(at 2\), and no size below it can be an example to trace that piece at: declare om\.Dim\('seq', \{ min: 2 \}\)/.test(e.message));
    ex.dispose();
  });

  test('a piece the model fails at (at its end too) is refused with the declaration of the example\'s piece', async () => {
    for (const c of [4, 6]) {
      // at most c rows: a reshape to 2 rows summed against 6 columns answers only at B = 2
      const line = lineHere() + 1; // the model's: the refusal names it, not om.trace's caller
      const model = fn((x) => (x.shape[0] > c ? x.relu() : x.slice(0, 0, 1).add(x.reshape(2, -1).sum(0))));
      const ex = om.randn([c + 3, 6], { seed: c });
      assert.throws(() => om.trace(model, { x: [ex, ['B', null]] }), (e) => {
        assert.ok(e instanceof om.TraceError && e.kind === 'SymbolicShape', String(e));
        assert.match(e.message, new RegExp(`threshold of 'B' \\(at ${c + 1}\\), and fails at B=${c}, in a piece: add: shapes \\[1,6\\] and \\[${3 * c}\\] do not broadcast.*; declare om\\.Dim\\('B', \\{ min: ${c + 1} \\}\\) for the graph from there`));
        assert.match(e.message, new RegExp(`\\(at file://\\S+/symbolic-branches\\.test\\.mjs:${line}:\\d+\\)$`));
        return true;
      });
      await sessionsAgree(await withTraced((keep) => {
        const tm = om.trace(model, { x: [ex, [om.Dim('B', { min: c + 1 }), null]] });
        keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
        return atSizes(keep, tm, model, [c + 1, 3 * c], (s) => [s, 6]);
      }));
      ex.dispose();
    }
  });

  test('a loop over a size (more calls at every larger size) that does not roll is refused as a loop, with the one size that traces', () => withTraced((keep) => {
    // each size unrolls the loop to other calls: no number of pieces holds it; a loop that rolls
    // is an ONNX Loop (symbolic-loop.test.mjs), one that fails at B = 1 (select(0, 1)) is not:
    // refused at once, naming the counts the runs saw
    const loop = (x) => { let v = x.select(0, 1); for (let i = 2; i < x.shape[0] - 1; i++) v = v.sub(x.select(0, i).mul(3)); return v; };
    // one that collects its steps (unbind, then stack) rolls: its cuts are placed by their steps
    const collect = fn((x) => om.stack(x.unbind(0).map((r) => r.mul(0.25)), 1));
    const c3 = om.randn([3, 6], { seed: 3 });
    const rolled = om.trace(collect, { x: [c3, ['B', null]] });
    assert.ok(rolled.graph().nodes.some((n) => n.opType === 'Loop'));
    keep(rolled, { x: c3 }, [collect.forward(c3)], undefined, collect);
    for (const b of [1, 2, 8, 21]) {
      const x = om.randn([b, 6], { seed: 30 + b });
      keep(rolled, { x }, [collect.forward(x)]);
    }
    for (const [f, b] of [[loop, 5], [loop, 7]]) {
      const model = fn(f), ex = om.randn([b, 6], { seed: b });
      assert.throws(() => om.trace(model, { x: [ex, ['B', null]] }), (e) => {
        assert.ok(e instanceof om.TraceError && e.kind === 'SymbolicShape', String(e));
        assert.match(e.message, new RegExp(`^trace: the model makes more calls at every larger size of 'B' \\(calls its outputs need: \\d+ at B=${b}, \\d+ at B=${b + 1}, \\d+ at B=${b + 2}, \\d+ at B=${b + 3}, \\d+ at B=${b + 8}\\): a loop over the size, unrolled, which no graph without ONNX Loop holds at every size; declare om\\.Dim\\('B', \\{ min: ${b}, max: ${b} \\}\\) for the graph at the traced size`));
        const counts = [...e.message.matchAll(/(\d+) at B=/g)].map((m) => Number(m[1]));
        assert.ok(counts.every((c, i) => !i || c > counts[i - 1]), `more calls at each size: ${counts}`);
        return true;
      });
      const tm = om.trace(model, { x: [ex, [om.Dim('B', { min: b, max: b }), null]] }); // as it says
      keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
      assert.deepEqual([tm.symbols[0].min, tm.symbols[0].max], [b, b]);
      ex.dispose();
    }
  }));

  test('in a piece cut on one symbol, another symbol\'s minimum raised where the model answers: that piece cut on it, right where the model answers', async () => {
    for (const [a, c] of [[2, 20], [3, 30]]) {
      // cut on h at c; rows a to a + 1 of the batch, empty below a + 1, against every row: answers
      // at N = 1 (empty), fails from 2 to a, answers from a + 1
      const model = fn((x) => { const y = x.shape[2] > c ? x.relu() : x.neg(); return y.slice(0, a, a + 1).mul(2).sub(y); });
      const pts = [[1, 3], [1, c + 1], [a + 1, c], [a + 1, c + 1], [a + 4, 1], [a + 4, 2 * c]];
      await sessionsAgree(await withTraced((keep) => {
        const ex = om.randn([a + 3, 1, 6, 5], { seed: a });
        const tm = om.trace(model, { x: [ex, ['N', null, 'h', 'w']] });
        keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
        const [N, h] = tm.symbols;
        assert.deepEqual(N.branches, [{ min: 1, max: 1 }, { min: a + 1, max: Infinity }]);
        assert.deepEqual(h.branches, [{ min: 1, max: c }, { min: c + 1, max: Infinity }]);
        return atSizes(keep, tm, model, pts.map((_, i) => i), (i) => [pts[i][0], 1, pts[i][1], 5]);
      }));
    }
  });

  test('branches that return different counts, element types or ranks are refused, with the declaration of the example\'s side', () => withTraced((keep) => {
    const threshold = 'the model changes at a size threshold of \'seq\' \\(at 21\\) and ';
    const holds = (decl) => `: the two cannot be one graph; the trace holds on the example's side: declare om\\.Dim\\('seq', \\{ ${decl} \\}\\)`;
    const cases = [ // the model, the example's seq, what differs, the declaration the message names
      [(x) => (x.shape[1] > 20 ? [x.relu(), x.neg()] : [x.abs()]), 8, 'returns 1 outputs below it, 2 from it', 'min: 1, max: 20'],
      [(x) => (x.shape[1] > 20 ? x.gt(0) : x.relu()), 8, 'its output 0 is float32 of rank 3 below it, bool of rank 3 from it', 'min: 1, max: 20'],
      [(x) => (x.shape[1] > 20 ? x.sum(1) : x.relu()), 8, 'its output 0 is float32 of rank 3 below it, float32 of rank 2 from it', 'min: 1, max: 20'],
      [(x) => (x.shape[1] > 20 ? x.sum(1) : x.relu()), 30, 'its output 0 is float32 of rank 3 below it, float32 of rank 2 from it', 'min: 21'],
    ];
    for (const [f, seq, what, decl] of cases) {
      const model = fn(f), ex = om.randn([2, seq, 4], { seed: 6 });
      assert.throws(() => om.trace(model, { x: [ex, ['batch', 'seq', null]] }), (e) => {
        assert.ok(e instanceof om.TraceError && e.kind === 'SymbolicShape', String(e));
        assert.match(e.message, new RegExp(threshold + what + holds(decl)));
        return true;
      });
      assert.equal(om.Tracer.active, false);
      // the declaration named traces, and the graph holds across that side
      const [min, max] = [Number(/min: (\d+)/.exec(decl)[1]), Number(/max: (\d+)/.exec(decl)?.[1] ?? Infinity)];
      const tm = traceSeq(keep, model, seq, ['batch', om.Dim('seq', max === Infinity ? { min } : { min, max }), null]);
      assert.deepEqual([seqOf(tm).min, seqOf(tm).max, seqOf(tm).branches], [min, max, undefined]);
      atSizes(keep, tm, model, max === Infinity ? [min, min + 1, 64] : [1, 7, max]);
      ex.dispose();
    }
  }));
});

describe('Swin\'s windows over two stages at window 7, in user code', () => {
  const F = om.nn.functional;
  // x [B, H, W, C] padded up to whole windows of 7, rolled by 3 along a side whose padded size is
  // above one window (torchvision's `if window_size >= pad_H: shift = 0`), unpadded; then halved,
  // odd sizes padded (patch merging). The second stage shifts along a side from 15 on.
  const windows = (x) => {
    const [, H, W] = x.shape;
    let p = F.pad(x, [0, 0, 0, (7 - W % 7) % 7, 0, (7 - H % 7) % 7]);
    const [, pH, pW] = p.shape;
    const shift = [7 >= pH ? 0 : 3, 7 >= pW ? 0 : 3];
    if (shift[0] + shift[1] > 0) p = p.roll([-shift[0], -shift[1]], [1, 2]);
    return p.slice(1, 0, H).slice(2, 0, W).mul(2);
  };
  const merge = (x) => {
    const [, H, W] = x.shape;
    return F.pad(x, [0, 0, 0, W % 2, 0, H % 2]).slice(1, 0, null, 2).slice(2, 0, null, 2);
  };
  const model = fn((x) => merge(windows(merge(windows(x)))));

  // Undeclared, the trace is cut on h at 15 and the piece from 15 on w at 15 (a cut inside a
  // piece); the piece below 15 changes where both sides are at most 7 (no roll at all), a point
  // no cut on one size reaches: refused, naming the declaration of h alone under which the piece
  // from 15, cut on w, holds. So declared, right in both engines on each side of w's windows.
  test('undeclared: refused naming om.Dim(h, { min: 15 }); so declared: right in both engines across each window boundary of both', () => withTraced((keep) => {
    const ex = om.randn([2, 16, 16, 2], { seed: 1 });
    assert.throws(() => om.trace(model, { x: [ex, ['b', 'h', 'w', null]] }), (e) => e instanceof om.TraceError && e.kind === 'SymbolicShape'
      && /^trace: the model changes at a size threshold of 'h' \(at 15\), and the piece below it \(traced at h=14\) is refused: .*at h=7, w=7 it calls slice here/.test(e.message)
      && /declare om\.Dim\('h', \{ min: 15 \}\) for the graph from there/.test(e.message));
    const tm = om.trace(model, { x: [ex, ['b', om.Dim('h', { min: 15 }), 'w', null]] });
    assert.deepEqual(Object.fromEntries(tm.symbols.map((s) => [s.name, [s.min, s.branches]])), { b: [1, undefined], h: [15, undefined], w: [1, [{ min: 1, max: 14 }, { min: 15, max: Infinity }]] });
    keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
    // the smallest declared (the second stage at 8 and 8: shifted), whole windows (28 and 14), odd sizes, far above; w below its threshold, at 1
    for (const [h, w] of [[15, 15], [15, 16], [27, 29], [28, 28], [29, 30], [57, 99], [200, 15], [301, 33], [15, 1], [16, 7], [29, 8], [200, 14]]) {
      const x = om.randn([1, h, w, 2], { seed: h * 1000 + w });
      keep(tm, { x }, [model.forward(x)], `at ${h} x ${w}`);
    }
  }));
});

// Branches taken only at points of the sizes (issue 27; docs/symbolic-axes.md, "Points off the
// lines"): where two or three symbols are equal AND a size computed from them has one value
// (upstream ViT's `if npatch == N and h == w: return self.position_embeddings`), where the sizes of
// two inputs are equal, or where a length is a table's rows far above the example. No run along
// the range check's lines reaches them; its runs on the diagonals and where a size meets an axis
// of a parameter do, and the trace is refused there (SymbolicShape, at the model's own call,
// naming the point, the sizes around it where the model does so too, and the declarations that
// leave them out). Traced with one of those, the graph is right at every size it admits, checked
// in onnxruntime-web and the Session (the squares just past the declared minimum among them).
describe('branches at points off the lines: refused, naming the point and a declaration that leaves it out; right when so declared', () => {
  /** `^call: ... at <at> it ... (and so at <names> from lo to hi), ...: declare <decls> (at <this file>:<line>:n)$`. */
  const refusal = (at, span, decls, line) => new RegExp(`^\\w+: the model does another thing at sizes off the lines the range check runs along: at ${at} it [^(]*(\\(call \\d+\\)[^(]*)?${span ? ` \\(and so at ${span}\\)` : ''}, so the graph would be wrong there\\. It holds away from them: declare ${decls.map((d) => d.replace(/[(){}]/g, '\\$&')).join(' or ')} \\(at .*symbolic-branches\\.test\\.mjs:${line}:\\d+\\)$`);
  /** Traces model on inputs() ({ name: [example, axes] }): the TraceError's message; fails when it traces. */
  const refused = (model, inputs) => {
    try {
      om.tidy(() => om.trace(model, inputs()).dispose());
    } catch (e) {
      assert.ok(e instanceof om.TraceError && e.kind === 'SymbolicShape', `${e.kind}: ${e.message}`);
      return e.message;
    }
    assert.fail('traced: the branch at a point was not found');
  };
  /** Traces model on inputs and keeps it in both engines at each of the feeds ({ name: shape } each) against eager there. */
  const rightAt = (keep, model, inputs, feeds) => {
    const tm = om.trace(model, inputs);
    keep(tm, Object.fromEntries(Object.entries(inputs).map(([k, [x]]) => [k, x])), [model.forward(...Object.values(inputs).map(([x]) => x))], 'at the example', model);
    for (const [j, shapes] of feeds.entries()) {
      const xs = Object.entries(shapes).map(([k, shape], i) => [k, om.randn(shape, { seed: 40 + 7 * j + i })]);
      keep(tm, Object.fromEntries(xs), [model.forward(...xs.map(([, x]) => x))], `at ${JSON.stringify(shapes)}`);
    }
    return tm;
  };

  // square images of one patch count at other patches, counts and examples: the squares are
  // p * sqrt(n) to p * (sqrt(n) + 1) - 1 a side
  for (const [p, n, h, w] of [[4, 16, 24, 20], [5, 9, 22, 27], [3, 25, 12, 33]]) {
    test(`H === W with floor(H / ${p}) * floor(W / ${p}) === ${n}, traced at ${h} x ${w}`, async () => {
      const line = lineHere() + 1;
      const model = fn((x) => (x.shape[2] === x.shape[3] && Math.floor(x.shape[2] / p) * Math.floor(x.shape[3] / p) === n ? x.mul(2) : x.add(1)));
      const lo = p * Math.sqrt(n), hi = p * (Math.sqrt(n) + 1) - 1;
      const decl = (name, ex) => (ex > hi ? `om.Dim('${name}', { min: ${hi + 1} })` : `om.Dim('${name}', { min: 1, max: ${lo - 1} })`);
      const example = () => om.randn([1, 1, h, w], { seed: 1 });
      assert.match(refused(model, () => ({ x: [example(), [null, null, 'H', 'W']] })), refusal(`H=${lo}, W=${lo}`, `H = W from ${lo} to ${hi}`, [decl('H', h), decl('W', w)], line));
      // declared so (H's side of the squares, W free), right at every size, the nearest squares too
      const H = h > hi ? om.Dim('H', { min: hi + 1 }) : om.Dim('H', { max: lo - 1 });
      const squares = h > hi ? [hi + 1, hi + 2, 4 * hi] : [lo - 1, lo - 2, 1];
      await withTraced((keep) => {
        const tm = rightAt(keep, model, { x: [example(), [null, null, H, 'W']] }, [...squares.map((s) => ({ x: [1, 1, s, s] })), { x: [1, 1, squares[0], lo] }]);
        assert.deepEqual(ops(tm), ['Add']);
      });
    });
  }

  test('three symbols of one input equal, at one product of their patches (a cube): the diagonal of all three', async () => {
    const line = lineHere() + 1;
    const model = fn((x) => (x.shape[0] === x.shape[1] && x.shape[1] === x.shape[2] && Math.floor(x.shape[0] / 4) ** 3 === 27 ? x.relu() : x.neg()));
    const decls = ['D', 'H', 'W'].map((d) => `om.Dim('${d}', { min: 16 })`);
    assert.match(refused(model, () => ({ x: [om.randn([20, 18, 22], { seed: 1 }), ['D', 'H', 'W']] })), refusal('D=12, H=12, W=12', 'D = H = W from 12 to 15', decls, line));
    await withTraced((keep) => {
      rightAt(keep, model, { x: [om.randn([20, 18, 22], { seed: 1 }), [om.Dim('D', { min: 16 }), 'H', 'W']] }, [{ x: [16, 16, 16] }, { x: [16, 12, 12] }, { x: [40, 13, 13] }]);
    });
  });

  test('the sizes of two inputs equal, in a band above both examples: the diagonal of the pair', async () => {
    const line = lineHere() + 1;
    const model = fn((a, b) => (a.shape[0] === b.shape[0] && a.shape[0] >= 20 && a.shape[0] <= 22 ? a.add(b) : a.sub(b.sum(0, true))));
    const inputs = (S) => ({ a: [om.randn([9, 4], { seed: 1 }), [S, null]], b: [om.randn([13, 4], { seed: 2 }), ['T', null]] });
    assert.match(refused(model, () => inputs('S')), refusal('S=20, T=20', 'S = T from 20 to 22', ["om.Dim('S', { min: 1, max: 19 })", "om.Dim('T', { min: 1, max: 19 })"], line));
    await withTraced((keep) => {
      rightAt(keep, model, inputs(om.Dim('S', { max: 19 })), [{ a: [19, 4], b: [19, 4] }, { a: [19, 4], b: [22, 4] }, { a: [1, 4], b: [40, 4] }]);
    });
  });

  test('one exact size of one symbol (T === c) where a run lands on it: an If or refused, at each kind of run (docs/symbolic-axes.md, "What is still unseen")', async () => {
    // traced at T = 8 with no other symbol: c = 1 is the smallest size, 5 the line down's third
    // step, 10 the run at v0 + 2, 17 the one at 2 v0 + 1, 23 and 39 the line up's steps 15 and 31
    for (const c of [1, 5, 10, 17, 23, 39]) {
      const model = fn((x) => (x.shape[1] === c ? x.mul(2) : x.add(1)));
      const ex = om.randn([2, 8, 3], { seed: c });
      await withTraced((keep) => {
        let tm;
        try {
          tm = rightAt(keep, model, { x: [ex, [null, 'T', null]] }, [{ x: [2, c, 3] }, { x: [2, c + 1, 3] }]);
        } catch (e) {
          assert.ok(e instanceof om.TraceError && e.kind === 'SymbolicShape', String(e));
          assert.match(e.message, new RegExp(`at T=${c} it calls mul here`));
          return;
        }
        assert.ok(ops(tm).includes('If'), `T === ${c}: ${ops(tm)}`);
      });
      ex.dispose();
    }
  });

  test('a length equal to a table\'s rows less one (a class token\'s row), far above the example, for two tables', async () => {
    class Table extends om.nn.Module {
      constructor(rows) {
        super();
        this.pos = om.randn([rows, 4], { seed: rows });
        this.pos.requiresGrad = true;
      }

      forward(x) {
        line = lineHere() + 2;
        const p = this.pos.slice(0, 0, 1);
        return x.shape[1] === this.pos.shape[0] - 1 ? x.mul(p) : x.add(p);
      }
    }
    let line;
    for (const rows of [301, 97]) {
      const model = new Table(rows);
      assert.match(refused(model, () => ({ x: [om.randn([1, 8, 4], { seed: 1 }), [null, 'T', null]] })), refusal(`T=${rows - 1}`, null, [`om.Dim('T', { min: 1, max: ${rows - 2} })`], line));
      await withTraced((keep) => {
        rightAt(keep, model, { x: [om.randn([1, 8, 4], { seed: 1 }), [null, om.Dim('T', { max: rows - 2 }), null]] }, [{ x: [1, rows - 2, 4] }, { x: [1, 1, 4] }]);
      });
      model.dispose();
    }
  });
});
