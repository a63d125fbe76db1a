// A symbol that meets a constant size n (a broadcast, a concatenation beside one) gives an answer
// at sizes 1 and n only (docs/symbolic-axes.md, "Size 1 and n"): no range, multiple or one size
// declares that, so the trace is cut at 2 into a piece at size 1 and one at n, joined by an If
// whose condition fails at every other size. The traced model reports the two as its symbol's
// branches (traced.symbols and the .onnx's metadata_props), is right at 1 and n in
// onnxruntime-web (its default optimizations) and in the Session, and fails loudly in both
// everywhere else: the Session names the symbol, the size and the sizes it admits.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import * as ort from 'onnxruntime-web';
import { memoryHooks, withTraced, metadataProps } from './helpers.mjs';

ort.env.wasm.numThreads = 1;
memoryHooks();

// Each form: the model of a constant size n (its constants given to hold, freed after the test), its input's shape at symbol size s, the symbol's
// axis, and what the eager error at other sizes says.
const forms = {
  add: { make: (n, hold) => { const c = hold(om.randn([n, 1], { seed: n })); return (x) => x.add(c); }, shape: (s) => [2, s, 3], axis: 1 },
  mul: { make: (n, hold) => { const c = hold(om.randn([n, 4], { seed: n + 1 })); return (x) => x.mul(c).relu(); }, shape: (s) => [s, 4], axis: 0 },
  sub: { make: (n, hold) => { const c = hold(om.randn([n], { seed: n + 2 })); return (x) => c.sub(x.exp()); }, shape: (s) => [3, s], axis: 1 },
  maskedFill: {
    make: (n, hold) => { const m = hold(om.tidy(() => om.randn([n, 1], { seed: n + 3 }).gt(0))); return (x) => x.maskedFill(m, -2); },
    shape: (s) => [2, s, 5], axis: 1,
  },
  cat: {
    make: (n, hold) => { const c = hold(om.zeros([n])), d = hold(om.randn([3, n], { seed: n + 4 })); return (x) => om.cat([x.add(c), d], 0); },
    shape: (s) => [2, s], axis: 1,
  },
  reshape: {
    // the reshape's rows are the symbol's size: [1, 2n] at 1, [n, 2] at n
    make: (n, hold) => { const c = hold(om.randn([n], { seed: n + 5 })); return (x) => x.add(c).reshape(x.shape[1], -1).sum(0); },
    shape: (s) => [2, s], axis: 1,
  },
};

/** Runs tm's .onnx in onnxruntime-web (default optimizations) on x: its first output, or the error. */
async function runOrt(bytes, x) {
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
  try {
    const outs = await session.run({ x: new ort.Tensor('float32', Float32Array.from(x.toArray()), x.shape) });
    return outs[session.outputNames[0]];
  } catch (e) {
    return e;
  } finally {
    await session.release();
  }
}

describe('a symbol that answers at size 1 and at n only: two pieces, loud elsewhere', () => {
  for (const [name, form] of Object.entries(forms)) {
    test(`${name} against a constant n = 7, 12, 33`, async () => {
      for (const n of [7, 12, 33]) {
        const held = [];
        const model = form.make(n, (t) => (held.push(t), t));
        const axes = form.shape(0).map((_, d) => (d === form.axis ? 'S' : null));
        const ex = om.randn(form.shape(n), { seed: 40 + n });
        let bytes, saved;
        await withTraced((keep) => {
          const tm = om.trace(model, { x: [ex, axes] });
          const [s] = tm.symbols;
          assert.deepEqual([s.name, s.min, s.max, s.multipleOf], ['S', 1, n, 1]);
          assert.deepEqual(s.branches, [{ min: 1, max: 1 }, { min: n, max: n }], 'the sizes admitted');
          assert.match(s.narrowedBy, /the call fails|the model fails/, s.narrowedBy);
          const meta = JSON.parse(metadataProps(tm.toOnnx())['onemodel.symbol.S']);
          assert.deepEqual(meta.branches, [{ min: 1, max: 1 }, { min: n, max: n }]);
          assert.deepEqual([meta.min, meta.max], [1, n]);
          assert.match(meta.narrowedBy, new RegExp(`at S=${n + 1} the call fails`)); // C's op names (masked_fill)
          // right at 1 and n (onnxruntime-web and the Session: keep's oracle)
          keep(tm, { x: ex }, [model(ex)], undefined, model);
          const one = om.randn(form.shape(1), { seed: 41 });
          keep(tm, { x: one }, [model(one)], 'at S=1');
          bytes = tm.toOnnx();
          saved = tm.save();
          // elsewhere the Session refuses with the symbol, the size and the sizes admitted
          const session = tm.session();
          try {
            for (const size of [2, n - 1, n + 1, 3 * n]) {
              const x = om.randn(form.shape(size), { seed: size });
              assert.throws(() => model(x), om.OmError, `eager fails at S=${size}`);
              assert.throws(() => session.run({ x }), (e) => e instanceof om.OmError && e.kind === 'ShapeMismatch' &&
                new RegExp(`^run: axis 'S' is ${size} at dim ${form.axis} of input 'x'; the traced graph holds for S at 1 or ${n} \\(narrowed by `).test(e.message), String(size));
            }
          } finally {
            session.dispose();
          }
        });
        const reopened = await om.InferenceSession.create(saved); // the library format keeps the sizes admitted
        try {
          const one = om.randn(form.shape(1), { seed: 42 }), two = om.randn(form.shape(2), { seed: 43 });
          const [want, got] = [om.tidy(() => model(one)), Object.values(reopened.run({ x: one }))[0]];
          assert.deepEqual([got.shape, Array.from(got.toArray())], [want.shape, Array.from(want.toArray())]);
          assert.throws(() => reopened.run({ x: two }), (e) => e instanceof om.OmError && e.kind === 'ShapeMismatch' &&
            new RegExp(`^run: axis 'S' is 2 at .*; the traced graph holds for S at 1 or ${n} \\(narrowed by `).test(e.message));
          [one, two, want, got].forEach((t) => t.dispose());
        } finally {
          reopened.dispose();
        }
        const fromOnnx = await om.InferenceSession.create(bytes); // no symbols: the If's condition fails
        try {
          for (const size of [2, n - 1, n + 1, 3 * n]) { // and onnxruntime-web fails there too
            const x = om.randn(form.shape(size), { seed: size });
            const got = await runOrt(bytes, x);
            assert.ok(got instanceof Error && /If\/admit\/Gather/.test(got.message), `onnxruntime-web at S=${size}: ${got instanceof Error ? got.message : `answers [${got.dims}]`}`);
            assert.throws(() => fromOnnx.run({ x }), (e) => e instanceof om.OmError && /If\/admit\/Gather/.test(e.message), `the Session of the .onnx at S=${size}`);
            x.dispose();
          }
        } finally {
          fromOnnx.dispose();
        }
        ex.dispose();
        held.forEach((t) => t.dispose());
      }
    });
  }
});

describe('sizes 1 and n that the model keeps in its own code', () => {
  test('a model that throws its own error except at 1 and 4 traces as two pieces, right at both', () => withTraced((keep) => {
    const model = (x) => { if (x.shape[0] !== 4 && x.shape[0] !== 1) throw new Error('one or four only'); return x.relu().sum(0); };
    const ex = om.randn([4, 3], { seed: 44 });
    const tm = om.trace(model, { x: [ex, ['batch', null]] });
    assert.deepEqual(tm.symbols[0].branches, [{ min: 1, max: 1 }, { min: 4, max: 4 }]);
    assert.match(tm.symbols[0].narrowedBy, /one or four only/);
    keep(tm, { x: ex }, [model(ex)], undefined, model);
  }));
});

// contiguous() returns its input where it is contiguous already: a permute whose sizes other than one
// are in order (BEiT's relative coordinates at a 1 x 1 window). A write into it then goes through the
// view into what was permuted, at those sizes only, so the runs meet other calls there.
describe('a write into contiguous() of a permuted tensor, which is the permute itself where a size is 1', () => {
  test('traced where it is a copy, the graph is right where it is the view (k = 1) and where it is empty', () => withTraced((keep) => {
    const model = (x) => {
      const k = Math.floor(x.shape[0] / 4);
      const c = om.zeros([2, k]).permute(1, 0).contiguous(); // [k, 2]: a copy, except at k = 1
      c.select(1, 0).add_(1);
      return x.slice(0, 0, k).add(c.select(1, 0).unsqueeze(1));
    };
    const ex = om.randn([12, 3], { seed: 45 });
    const tm = om.trace(model, { x: [ex, ['T', null]] });
    keep(tm, { x: ex }, [model(ex)], 'traced', model);
    for (const n of [1, 3, 4, 7, 8, 41]) { // empty (k = 0), the view (k = 1), copies
      const x = om.randn([n, 3], { seed: n });
      keep(tm, { x }, [model(x)], `T=${n}`);
    }
  }));

  test('traced where it is the view (T = 5, k = 1): cut where the copies begin, each piece right', () => withTraced((keep) => {
    // the runs from T = 8 call other ops (the write goes into a copy): the size of zeros fits
    // floor(T / 4) and floor((T + 1) / 5) alike up to 7, which is all the traced path holds for, so
    // either is taken, and the range check cuts at 8 (traced again there, from a copy)
    const model = (x) => {
      const k = Math.floor(x.shape[0] / 4);
      const c = om.zeros([2, k]).permute(1, 0).contiguous();
      c.select(1, 0).add_(1);
      return x.slice(0, 0, k).add(c.select(1, 0).unsqueeze(1));
    };
    const ex = om.randn([5, 3], { seed: 46 });
    const tm = om.trace(model, { x: [ex, ['T', null]] });
    assert.deepEqual(tm.symbols[0].branches, [{ min: 1, max: 7 }, { min: 8, max: Infinity }]);
    assert.equal(tm.symbols[0].narrowedBy, null);
    keep(tm, { x: ex }, [model(ex)], 'traced', model);
    for (const n of [1, 3, 4, 6, 7, 8, 9, 12, 41]) { // each side of k = 1 and of the cut
      const x = om.randn([n, 3], { seed: 50 + n });
      keep(tm, { x }, [model(x)], `T=${n}`);
    }
  }));
});
