// A loop over a symbolic size rolled into an ONNX Loop (docs/symbolic-axes.md, "Loops over a
// size"): a model that makes the same few calls once per step of a size traces to one Loop node
// whose body is one step, run as often as the size says. Each model is traced at one size and
// run in onnxruntime-web and the Session against eager runs at sizes far from it (1, 2, odd
// sizes, far above); what does not roll is refused as before.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced, traceRefusal as refusal } from './helpers.mjs';

memoryHooks();

const ops = (tm) => tm.graph().nodes.map((n) => n.opType);

/** A Module from a function of its inputs. */
const fn = (f) => new (class extends om.nn.Module { forward(...xs) { return f(...xs); } })();

/** The sizes every rolled model is checked at: the smallest, odd ones, the traced one, far above. */
const SIZES = [1, 2, 3, 7, 40, 129];

/** Keeps tm for the oracle at each size of sizes (input shape(s), seed 200 + s) against model's eager runs there. */
function atSizes(keep, tm, model, shape, sizes = SIZES) {
  for (const s of sizes) {
    const x = om.randn(shape(s), { seed: 200 + s });
    keep(tm, { x }, [model.forward(x)], `at size ${s}`);
  }
}

describe('a loop over a size becomes an ONNX Loop', () => {
  test('acc = acc * c + v.select(d, i) along every axis and for several c: one Loop, right at every size', () => withTraced((keep) => {
    for (const [d, c, n] of [[0, 0.5, 5], [1, 0.25, 6], [2, -0.75, 4], [1, 1.5, 9]]) {
      const model = fn((v) => {
        let acc = v.select(d, 0);
        for (let i = 1; i < v.shape[d]; i++) acc = acc.mul(c).add(v.select(d, i));
        return acc;
      });
      const shape = (s) => [2, 3, 4].map((k, a) => (a === d ? s : k));
      const ex = om.randn(shape(n), { seed: n });
      const axes = [null, null, null].map((_, a) => (a === d ? 'S' : null));
      const tm = om.trace(model, { x: [ex, axes] });
      keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
      // the first select before the Loop (its start), the others in its body; S - 1 trips
      assert.deepEqual(ops(tm), ['Gather', 'Shape', 'Sub', 'Squeeze', 'Loop']);
      const s = tm.symbols.find((q) => q.name === 'S');
      assert.deepEqual([s.min, s.max, s.narrowedBy], [1, Infinity, null]);
      atSizes(keep, tm, model, shape);
    }
  }));

  test('a hand-written RNN cell over time: h = tanh(x_t W + h U) from zeros of the symbolic batch', () => withTraced((keep) => {
    for (const [H, T] of [[4, 5], [3, 8]]) {
      const W = om.randn([3, H], { seed: H }), U = om.randn([H, H], { seed: H + 1 }).mul(0.5);
      const model = fn((x) => {
        let h = om.zeros([x.shape[0], H]);
        for (let t = 0; t < x.shape[1]; t++) h = x.select(1, t).matmul(W).add(h.matmul(U)).tanh();
        return h;
      });
      const ex = om.randn([2, T, 3], { seed: T });
      const tm = om.trace(model, { x: [ex, ['B', 'T', null]] });
      keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
      assert.equal(ops(tm).filter((o) => o === 'Loop').length, 1, String(ops(tm)));
      atSizes(keep, tm, model, (s) => [3, s, 3]);
      atSizes(keep, tm, model, (s) => [s, 4, 3], [1, 5]); // the batch moves too
    }
  }));

  test('the RNN with a fixed batch: the first step (zeros folded in) stays before the Loop, 0 trips at T = 1', () => withTraced((keep) => {
    const W = om.randn([3, 4], { seed: 1 }), U = om.randn([4, 4], { seed: 2 }).mul(0.5);
    const model = fn((x) => {
      let h = om.zeros([2, 4]);
      for (let t = 0; t < x.shape[1]; t++) h = x.select(1, t).matmul(W).add(h.matmul(U)).tanh();
      return h;
    });
    const ex = om.randn([2, 6, 3], { seed: 6 });
    const tm = om.trace(model, { x: [ex, [null, 'T', null]] });
    keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
    assert.equal(ops(tm).filter((o) => o === 'Loop').length, 1, String(ops(tm)));
    atSizes(keep, tm, model, (s) => [2, s, 3]);
  }));

  test('outputs beside the loop that have the size: named by the symbol where they are its size; one the body reads', () => withTraced((keep) => {
    const model = fn((v) => {
      const r = v.relu(); // an output, and what the body reads from the outer scope (by its output name)
      let acc = r.select(0, 0);
      for (let i = 1; i < v.shape[0]; i++) acc = acc.mul(0.5).add(r.select(0, i));
      return [acc, r, v.slice(0, 1)];
    });
    const ex = om.randn([4, 3], { seed: 4 });
    const tm = om.trace(model, { x: [ex, ['S', null]] });
    keep(tm, { x: ex }, model.forward(ex), undefined, model);
    assert.equal(ops(tm).filter((o) => o === 'Loop').length, 1, String(ops(tm)));
    assert.equal(tm.outputs[1].shape[0], 'S');
    for (const s of SIZES) {
      const x = om.randn([s, 3], { seed: 300 + s });
      keep(tm, { x }, model.forward(x), `at size ${s}`);
    }
  }));

  test('the library format and the .onnx carry the body: a Session from either agrees', async () => {
    const model = fn((v) => { let acc = v.select(1, 0); for (let i = 1; i < v.shape[1]; i++) acc = acc.mul(0.5).add(v.select(1, i)); return acc.relu(); });
    const { bytes, cases } = await withTraced((keep) => {
      const ex = om.randn([2, 5, 3], { seed: 5 });
      const tm = om.trace(model, { x: [ex, [null, 'S', null]] });
      keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
      return {
        bytes: [tm.toOnnx(), tm.save()],
        cases: [1, 4, 33].map((s) => {
          const x = om.randn([2, s, 3], { seed: s });
          return { s, x: { data: Float32Array.from(x.toArray()), dims: x.shape, type: 'float32' }, want: Array.from(model.forward(x).toArray()) };
        }),
      };
    });
    for (const b of bytes) {
      const session = await om.InferenceSession.create(b);
      try {
        for (const { s, x, want } of cases) {
          const got = Object.values(session.runData({ x }))[0];
          assert.equal(got.data.length, want.length);
          Array.from(got.data).forEach((g, i) => assert.ok(Math.abs(g - want[i]) <= 1e-5 * (1 + Math.abs(want[i])), `at ${s} [${i}]: ${g} vs ${want[i]}`));
        }
      } finally {
        session.dispose();
      }
    }
  });

  test('a body that reads a value is refused with DataDependent, at the read', () => {
    const model = fn((v) => {
      let acc = v.select(0, 0);
      for (let i = 1; i < v.shape[0]; i++) acc = acc.mul(acc.sum().item() > 0 ? 0.5 : 0.25).add(v.select(0, i));
      return acc;
    });
    const ex = om.randn([5, 3], { seed: 3 });
    const e = refusal(model, { x: [ex, ['S', null]] }, 'DataDependent');
    assert.match(e.message, /item/);
    ex.dispose();
  });

  test('a body that changes with i other than by a constant step is refused as a loop', () => {
    const loops = [
      (v) => { let acc = v.select(0, 0); for (let i = 1; i < v.shape[0]; i++) acc = acc.mul(1 / (i + 1)).add(v.select(0, i)); return acc; },
      // steps of two alike (0, 1 | 1, 2 | 2, 3 ...) roll as a block of two, wrong at other sizes:
      // the Session's runs against eager ones find it, and it is refused
      (v) => { let acc = v.select(0, 0); for (let i = 1; i < v.shape[0]; i++) acc = acc.mul(0.5).add(v.select(0, i >> 1)); return acc; },
    ];
    for (const f of loops) {
      const ex = om.randn([5, 3], { seed: 4 });
      const e = refusal(fn(f), { x: [ex, ['S', null]] }, 'SymbolicShape');
      assert.match(e.message, /^trace: the model makes more calls at every larger size of 'S' \(calls its outputs need: \d+ at S=5, \d+ at S=6, \d+ at S=7, \d+ at S=8, \d+ at S=13\): a loop over the size, unrolled, which no graph without ONNX Loop holds at every size; declare om\.Dim\('S', \{ min: 5, max: 5 \}\) for the graph at the traced size/);
      ex.dispose();
    }
  });

  test('a running sum by 3 that passes float\'s range at the far check sizes still rolls: the same infinities agree', () => withTraced((keep) => {
    const model = fn((v) => { let acc = v.select(0, 0); for (let i = 1; i < v.shape[0]; i++) acc = acc.mul(3).add(v.select(0, i)); return acc; });
    const ex = om.randn([5, 3], { seed: 4 });
    const tm = om.trace(model, { x: [ex, ['S', null]] });
    keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
    assert.equal(ops(tm).filter((o) => o === 'Loop').length, 1, String(ops(tm)));
    atSizes(keep, tm, model, (n) => [n, 3], [1, 2, 9, 40]);
  }));

  test('a threshold beside the loop far above the example (S > 137, S > 230) is not lost in the rolled graph: refused as a loop', () => {
    // the runs that find the loop never reach such a size; the rolled graph is checked at 4 and 16
    // times the farthest size too, where it would hold the branch below the threshold
    for (const at of [137, 230]) {
      const f = (v) => {
        const w = v.shape[0] > at ? v.abs() : v.sigmoid();
        let acc = w.select(0, 0);
        for (let i = 1; i < v.shape[0]; i++) acc = acc.mul(0.5).add(w.select(0, i));
        return acc;
      };
      const ex = om.randn([5, 3], { seed: 4 });
      const e = refusal(fn(f), { x: [ex, ['S', null]] }, 'SymbolicShape');
      assert.match(e.message, /^trace: the model makes more calls at every larger size of 'S' \(calls its outputs need: \d+ at S=5, \d+ at S=6, \d+ at S=7, \d+ at S=8, \d+ at S=13\): a loop over the size, unrolled, which no graph without ONNX Loop holds at every size; declare om\.Dim\('S', \{ min: 5, max: 5 \}\) for the graph at the traced size/);
      ex.dispose();
    }
  });

  test('a loop over the batch beside a length computed from it (Math.max(T, B)): the pad written from the batch, right at every B and T', () => withTraced((keep) => {
    // each channel's position of the minimum of a running mean over the batch, padded with zeros
    // to the longer of T and B: rolled with B fixed (at 6), the pad would be to Math.max(T, 6) at
    // every B, wrong wherever a padded row holds the minimum (B = 1; B = 25 at T = 9; random model
    // 21:28520). The pieces' pad amounts move by a whole step a batch, on one line through a
    // third piece (loop.c, om__loop_sizes; branch.c, on_the_line): written from the batch
    for (const [len, c, B, T] of [[(T, B) => Math.max(T, B), 0.25, 3, 9], [(T, B) => Math.max(T, 2 * B + 1), 0.75, 3, 8]]) {
      const model = fn((x) => {
        const L = len(x.shape[1], x.shape[0]);
        const padded = om.nn.functional.pad(x, [0, 0, 0, L - x.shape[1]]);
        let mean = padded.select(0, 0);
        for (let b = 1; b < x.shape[0]; b++) mean = mean.mul(c).add(padded.select(0, b));
        return mean.add(om.arange(L, { dtype: 'float32' }).mul(0.002).reshape(-1, 1)).argmin(0);
      });
      const ex = om.randn([B, T, 3], { seed: T });
      const tm = om.trace(model, { x: [ex, ['B', 'T', null]] });
      keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
      assert.equal(ops(tm).filter((o) => o === 'Loop').length, 1, String(ops(tm)));
      for (const [b, t] of c === 0.25 ? [[2, 2], [25, 9]] : [[1, 1]]) { // where the pad to Math.max(T, 6) was wrong; the smallest
        const x = om.randn([b, t, 3], { seed: 31 * b + t });
        keep(tm, { x }, [model.forward(x)], `at B=${b}, T=${t}`);
      }
    }
  }));
});
