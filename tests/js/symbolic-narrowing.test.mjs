// A declared range is never narrowed silently (docs/symbolic-axes.md, "Where the model fails"):
// where the model fails at some size above its example and answers again further up (a split's
// last piece too small for a kernel at one residue), no maximum leaves out only sizes where it
// fails, so the trace is refused at the call that fails, naming the sizes, the source line and
// the declaration under which it holds; declared so, it traces and agrees in onnxruntime-web and
// the Session. A range that ends where the model fails (a table of positions) covers every size
// up to there. And the tracer never runs the model outside a declared range.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced, metadataProps } from './helpers.mjs';
import { generate, render } from './random/generator.mjs';
import { loadCase, suggestedDims } from './random/runner.mjs';

memoryHooks();

/** A Module from a function of its inputs. */
const fn = (f) => new (class extends om.nn.Module { forward(...xs) { return f(...xs); } })();

const here = /symbolic-narrowing\.test\.mjs:\d+:\d+\)$/; // a refusal names the model's source line

describe('failures above the example with answers past them', () => {
  test('split(c).at(-1) into a 2x2 stride-2 conv fails at W = 2c + 1 and answers at 2c + 2: refused, then declared', async () => {
    for (const c of [6, 8]) {
      const conv = new om.nn.Conv2d(2, 3, 2, { stride: 2 }).eval();
      const model = fn((x) => conv.forward(x.split(c, -1).at(-1)));
      const ex = om.randn([2, 2, 5, c + 2], { seed: c });
      assert.throws(() => om.trace(model, { x: [ex, [null, null, null, 'W']] }), (e) => {
        assert.ok(e instanceof om.TraceError && e.kind === 'SymbolicShape', String(e));
        assert.match(e.message, new RegExp(`^conv2d: at W=${2 * c + 1} the model fails at conv2d \\(call \\d+\\): conv2d: kernel size .* ` +
          `and at W=${2 * c + 2} it answers again: the sizes where it answers are no range om\\.Dim declares, .*` +
          `declare om\\.Dim\\('W', \\{ min: ${c + 2}, max: ${2 * c} \\}\\)`));
        assert.match(e.message, here);
        return true;
      });
      await withTraced((keep) => {
        const tm = om.trace(model, { x: [ex, [null, null, null, om.Dim('W', { min: c + 2, max: 2 * c })]] });
        assert.deepEqual(tm.symbols.map((s) => [s.name, s.min, s.max]), [['W', c + 2, 2 * c]]);
        keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
        for (const w of [c + 3, 2 * c]) {
          const x = om.randn([2, 2, 5, w], { seed: w });
          keep(tm, { x }, [model.forward(x)], `at W=${w}`);
        }
      });
      ex.dispose();
      conv.dispose();
    }
  });
});

describe('sizes bounded together', () => {
  test("GPT-2's causal mask with a past: the query's and the past's lengths together at most the buffer's, refused naming both, then declared", async () => {
    // bias[:, :, S - L:S, :S] of a [M, M] buffer, S = P + L: the model fails at L + P > M only;
    // a maximum of L alone (M - P at the example's P) would leave out L = M - 1 at P = 1, where the
    // model answers (each symbol's range was narrowed so, without a word in the .onnx's readers)
    for (const [M, l, p] of [[24, 3, 5], [40, 4, 2]]) {
      const bias = om.tidy(() => om.ones([M, M], { dtype: 'bool' }).tril().view([1, 1, M, M]));
      const model = fn((q, past) => {
        const k = om.cat([past, q], 1);
        const L = q.shape[1], S = k.shape[1];
        const w = q.unsqueeze(1).matmul(k.unsqueeze(1).transpose(-1, -2)).div(2);
        return om.where(bias.slice(2, S - L, S).slice(3, 0, S), w, om.tensor(-3.4e38)).softmax(-1);
      });
      const q = om.randn([2, l, 4], { seed: M }), past = om.randn([2, p, 4], { seed: M + 1 });
      assert.throws(() => om.trace(model, { q: [q, [null, 'L', null]], past: [past, [null, 'P', null]] }), (e) => {
        assert.ok(e instanceof om.TraceError && e.kind === 'SymbolicShape', String(e));
        // the symbol whose run failed first is bounded by the other at its example
        const dim = (n, max) => `om\\.Dim\\('${n}', \\{ min: 1, max: ${max} \\}\\)`;
        assert.match(e.message, new RegExp(`^where: at L=\\d+, P=\\d+ the call fails .* it answers at (L=${M - p + 1}, P=1|L=1, P=${M - l + 1}): ` +
          'the sizes where it answers are bounded together, which no range of each that om\\.Dim declares leaves out alone; it holds ' +
          `where (${dim('L', M - p)}, ${dim('P', p)}|${dim('P', M - l)}, ${dim('L', l)}) declares`));
        assert.match(e.message, here);
        return true;
      });
      // declared as the message may say (L up to M - p, P up to p): traced, right at the corners
      await withTraced((keep) => {
        const tm = om.trace(model, { q: [q, [null, om.Dim('L', { max: M - p }), null]], past: [past, [null, om.Dim('P', { max: p }), null]] });
        assert.deepEqual(tm.symbols.map((s) => [s.name, s.min, s.max, s.narrowedBy]), [['L', 1, M - p, null], ['P', 1, p, null]]);
        keep(tm, { q, past }, [model.forward(q, past)], undefined, model);
        for (const [a, b] of [[1, 1], [M - p, p], [1, p], [M - p, 1], [7, 1]]) {
          const qa = om.randn([2, a, 4], { seed: a }), pb = om.randn([2, b, 4], { seed: 50 + b });
          keep(tm, { q: qa, past: pb }, [model.forward(qa, pb)], `at L=${a}, P=${b}`);
        }
      });
      for (const t of [bias, q, past]) t.dispose();
    }
  });
});

describe('a minimum another symbol decides', () => {
  test('a split piece of min(2, h) rows reshaped to pairs of N * min(2, h) rows: fails at h = 1 for odd N only, refused naming the minimum, then declared', async () => {
    // h = 1 (H <= 3 after the stride-3 conv) fails at the example's odd N and answers at an even
    // N: a minimum of H raised at N = 3 alone would leave out N = 2, H = 2, where the model answers
    const w = om.tidy(() => om.randn([6, 2, 3, 3], { seed: 5 }).mul(0.2));
    const model = fn((x) => {
      const y = om.nn.functional.conv2d(x, w, null, { stride: 3, padding: 1 });
      return y.split(2, -2)[0].reshape(-1, 2, 3, 2, y.shape[3]).sum(1);
    });
    const ex = om.randn([3, 2, 16, 7], { seed: 6 });
    const axes = (h) => ['N', null, h, 'W'];
    assert.throws(() => om.trace(model, { x: [ex, axes('H')] }), (e) => {
      assert.ok(e instanceof om.TraceError && e.kind === 'SymbolicShape', String(e));
      assert.match(e.message, /^reshape\b.*the range of 'H' narrowed there, yet at N=\d+, H=3 \(with 'N' moved too\) the model answers.* om\.Dim\('H', \{ min: 4 \}\) declares/);
      assert.match(e.message, here);
      return true;
    });
    assert.deepEqual(om.tidy(() => model.forward(om.zeros([2, 2, 2, 5])).shape), [1, 3, 2, 2], 'the model answers at N = 2, H = 2');
    await withTraced((keep) => {
      const tm = om.trace(model, { x: [ex, axes(om.Dim('H', { min: 4 }))] });
      assert.deepEqual(Object.fromEntries(tm.symbols.map((s) => [s.name, [s.min, s.narrowedBy]])), { N: [1, null], H: [4, null], W: [1, null] });
      keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
      for (const [n, h, ww] of [[1, 4, 3], [2, 5, 10], [5, 13, 4]]) {
        const x = om.randn([n, 2, h, ww], { seed: n * h });
        keep(tm, { x }, [model.forward(x)], `at N=${n}, H=${h}, W=${ww}`);
      }
    });
    ex.dispose();
    w.dispose();
  });
});

describe('a minimum raised where the model answers the same with another symbol moved', () => {
  test("the first c rows of [B, C, S] reshaped to [2, c / 2, C, -1]: fails at B = c - 1 for the example's odd S, answers at B = c / 2 with S doubled: refused naming the minimum, then declared", async () => {
    // random model 24:19717: min(B, c) * S must be a multiple of 4; below B = c the runs at the
    // example's S fail, and at half the batch with twice S the model answers as the graph does;
    // the range was narrowed to B >= c there without a word (a cut below the minimum traced at
    // the example's S, where the model fails)
    for (const c of [4, 6]) {
      const model = fn((y) => y.transpose(1, 2).split(c, 0)[0].reshape(2, c / 2, y.shape[2], -1));
      const ex = om.randn([c + 1, 7, 2], { seed: c });
      assert.throws(() => om.trace(model, { y: [ex, ['B', 'S', null]] }), (e) => {
        assert.ok(e instanceof om.TraceError && e.kind === 'SymbolicShape', String(e));
        assert.match(e.message, new RegExp(`^reshape \\(call \\d+\\): the range of 'B' narrowed there, yet at B=${c / 2}, S=14 \\(with 'S' moved too\\) ` +
          `the model answers.* om\\.Dim\\('B', \\{ min: ${c} \\}\\) declares`));
        assert.match(e.message, here);
        return true;
      });
      assert.deepEqual(om.tidy(() => model.forward(om.zeros([c / 2, 14, 2])).shape), [2, c / 2, 2, 7], `the model answers at B = ${c / 2}, S = 14`);
      await withTraced((keep) => {
        const tm = om.trace(model, { y: [ex, [om.Dim('B', { min: c }), 'S', null]] });
        assert.deepEqual(tm.symbols.map((s) => [s.name, s.min, s.narrowedBy]), [['B', c, null], ['S', 1, null]]);
        keep(tm, { y: ex }, [model.forward(ex)], undefined, model);
        for (const [b, t] of [[c, 3], [c + 2, 10]]) {
          const y = om.randn([b, t, 2], { seed: b * t });
          keep(tm, { y }, [model.forward(y)], `at B=${b}, S=${t}`);
        }
      });
      ex.dispose();
    }
  });
});

describe('a cut below a raised minimum whose pieces fail at the other symbol\'s example', () => {
  test("row a of B rows, its T - b columns reshaped to [1, T - b, 1, C]: fails below B = a + 1 at the example's T, answers there at T <= b: refused naming the minimum, then declared", async () => {
    // random model 24:20939: below B = a + 1 the row is missing, so the reshape of its empty
    // [0, T - b, C] answers only where T - b is 0 (or -1, inferred); the cut at the minimum traced
    // the piece below, and each of its sizes alone, at the example's T, where the model fails,
    // and narrowed B to a + 1 without a word
    for (const [a, b, C] of [[2, 2, 6], [3, 2, 4]]) {
      const model = fn((x) => {
        const T = x.shape[1];
        return x.slice(0, a, a + 1).slice(1, b, T).reshape(1, T - b, 1, C).mul(2);
      });
      const ex = om.randn([a + 2, b + 5, C], { seed: a });
      assert.throws(() => om.trace(model, { x: [ex, ['B', 'T', null]] }), (e) => {
        assert.ok(e instanceof om.TraceError && e.kind === 'SymbolicShape', String(e));
        assert.match(e.message, new RegExp(`^reshape \\(call \\d+\\): the minimum of 'B' rose there, yet at B=${a}, T=\\d+ the model answers.* ` +
          `om\\.Dim\\('B', \\{ min: ${a + 1} \\}\\) declares`));
        assert.match(e.message, here);
        return true;
      });
      assert.deepEqual(om.tidy(() => model.forward(om.zeros([a, b, C])).shape), [1, 0, 1, C], `the model answers at B = ${a}, T = ${b}`);
      assert.throws(() => om.tidy(() => model.forward(om.zeros([a, b + 1, C]))), /reshape/, `the model fails at B = ${a}, T = ${b + 1}`);
      await withTraced((keep) => {
        const tm = om.trace(model, { x: [ex, [om.Dim('B', { min: a + 1 }), 'T', null]] });
        assert.deepEqual(tm.symbols.map((s) => [s.name, s.min, s.narrowedBy]), [['B', a + 1, null], ['T', 1, null]]);
        keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
        for (const [bb, t] of [[a + 1, b + 1], [a + 4, b + 9]]) {
          const x = om.randn([bb, t, C], { seed: bb * t });
          keep(tm, { x }, [model.forward(x)], `at B=${bb}, T=${t}`);
        }
      });
      ex.dispose();
    }
  });
});

describe('a minimum that rose where the model answers, named beside one that rose where it fails', () => {
  test("row a of B rows, its T - b columns reshaped to [1, T - b, 1, C], b from 1 to 7: refused naming B's minimum alone, then declared, right at T = b - 1", async () => {
    // the offset-4 form of random model 24:20939: at T = b - 1 the reshape's T - b is -1, inferred
    // from an empty tensor (0 columns), so the model answers there at every B; T's minimum rose to
    // b in the trace (the fitted extent T - b is -1 there, not 0), and the refusal declared it,
    // narrowing T where the model answers. Declared as B from a + 1 alone, the trace cuts T at b
    // itself (an If) and holds from T = b - 1, where the model first answers
    for (const [a, b, C, B0] of [[2, 4, 6, 3], [2, 1, 6, 3], [2, 2, 4, 4], [3, 5, 4, 4], [2, 7, 6, 5]]) {
      const model = fn((x) => {
        const T = x.shape[1];
        return x.slice(0, a, a + 1).slice(1, b, T).reshape(1, T - b, 1, C).mul(2);
      });
      const ex = om.randn([B0, b + 5, C], { seed: a + b });
      assert.throws(() => om.trace(model, { x: [ex, ['B', 'T', null]] }), (e) => {
        assert.ok(e instanceof om.TraceError && e.kind === 'SymbolicShape', String(e));
        assert.match(e.message, new RegExp(`^reshape \\(call \\d+\\): the minimum of 'B' rose there, yet at B=${a}, T=\\d+ the model answers.* ` +
          `the graph holds for the sizes om\\.Dim\\('B', \\{ min: ${a + 1} \\}\\) declares:`));
        assert.match(e.message, here);
        return true;
      });
      const first = Math.max(1, b - 1); // the smallest T where the model answers
      assert.deepEqual(om.tidy(() => model.forward(om.zeros([a + 1, first, C])).shape), [1, 0, 1, C], `the model answers at T = ${first}`);
      if (first > 1) assert.throws(() => om.tidy(() => model.forward(om.zeros([a + 1, first - 1, C]))), /reshape/, `the model fails at T = ${first - 1}`);
      await withTraced((keep) => {
        const tm = om.trace(model, { x: [ex, [om.Dim('B', { min: a + 1 }), 'T', null]] });
        assert.deepEqual(tm.symbols.map((s) => [s.name, s.min, s.narrowedBy === null]), [['B', a + 1, true], ['T', first, first === 1]]);
        keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
        for (const [bb, t] of [[a + 1, first], [a + 3, first], [a + 1, b], [a + 2, b + 1], [a + 4, b + 9]]) {
          const x = om.randn([bb, t, C], { seed: bb * t });
          keep(tm, { x }, [model.forward(x)], `at B=${bb}, T=${t}`);
        }
      });
      ex.dispose();
    }
  });
});

describe('two minimums that rose where the model answers, beside one that rose where it fails', () => {
  test("random model 24:20040's squeeze() of [N, 1, H] beside a reflect pad of W by 2: refused naming all three, which holds", async () => {
    // squeeze() drops another axis at N = 1 and at H = 1 (the model answers there, at another
    // rank); the pad fails below W = 3. One cut holds one symbol, so N's and H's minimums stay in
    // the declaration beside W's (left out, the trace declared so was refused naming them)
    const model = fn((x) => {
      om.nn.functional.pad(x.select(1, 0), [2, 2], 'reflect').dispose();
      return om.nn.functional.pad(x, [2, 2]).sum(-1).squeeze();
    });
    const ex = om.randn([5, 1, 15, 11], { seed: 3 });
    assert.throws(() => om.trace(model, { x: [ex, ['N', null, 'H', 'W']] }), (e) => {
      assert.ok(e instanceof om.TraceError && e.kind === 'SymbolicShape', String(e));
      assert.match(e.message, /the graph holds for the sizes om\.Dim\('N', \{ min: 2 \}\), om\.Dim\('H', \{ min: 2 \}\), om\.Dim\('W', \{ min: 3 \}\) declares:/);
      assert.match(e.message, here);
      return true;
    });
    // H declared from 2: N alone is narrowed where the model answers, so the trace is cut on N, and
    // its pieces differ in rank; the refusal names what the example's piece holds under, N and the
    // others too (N alone was refused again on W's pad)
    assert.throws(() => om.trace(model, { x: [ex, ['N', null, om.Dim('H', { min: 2 }), 'W']] }), (e) => {
      assert.ok(e instanceof om.TraceError && e.kind === 'SymbolicShape', String(e));
      assert.match(e.message, /threshold of 'N' \(at 2\) .* the two cannot be one graph; the trace holds on the example's side: declare om\.Dim\('N', \{ min: 2 \}\), om\.Dim\('H', \{ min: 2 \}\), om\.Dim\('W', \{ min: 3 \}\)/);
      return true;
    });
    await withTraced((keep) => {
      const tm = om.trace(model, { x: [ex, [om.Dim('N', { min: 2 }), null, om.Dim('H', { min: 2 }), om.Dim('W', { min: 3 })]] });
      keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
      const x = om.randn([2, 1, 2, 3], { seed: 4 });
      keep(tm, { x }, [model.forward(x)], 'at N=2, H=2, W=3');
    });
    ex.dispose();
  });
});

describe('memory run out far above the example', () => {
  let made; // its modules' parameters live with the file, made before the test's baseline
  before(() => { made = loadCase(render(generate(23, 34846))); });
  test('random model 23:34846: a threshold of H far up, its piece traced there pads to H x H for real: refused naming the range below, then declared', async () => {
    // the piece above the threshold is traced at its smallest size with real tensors; the pad's
    // 30 GB fail there as they do eagerly: the model fails at that size (SymbolicShape with the
    // declaration of the piece below), not the trace (OutOfMemory, as before)
    const { model: f, inputs } = made;
    const model = fn(f);
    const ex = om.randn(inputs.x.shape, { seed: 7 });
    let max;
    assert.throws(() => om.trace(model, { x: [ex, inputs.x.axes] }), (e) => {
      assert.ok(e instanceof om.TraceError && e.kind === 'SymbolicShape', String(e));
      const m = /^trace: the model changes at a size threshold of 'H' \(at (\d+)\), and fails at H=\1, in a piece: pad: out of memory .*; declare om\.Dim\('H', \{ min: 2, max: (\d+) \}\) for the graph up to there/.exec(e.message);
      assert.ok(m && Number(m[2]) === Number(m[1]) - 1 && Number(m[1]) > 1000, e.message);
      max = Number(m[2]);
      return true;
    });
    await withTraced((keep) => {
      const axes = inputs.x.axes.map((a) => (a === 'H' ? om.Dim('H', { min: 2, max }) : a));
      const tm = om.trace(model, { x: [ex, axes] });
      keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
      for (const [n, h, w] of [[1, 2, 3], [2, 9, 17], [4, 31, 6]]) {
        const x = om.randn([n, 2, h, w], { seed: h });
        keep(tm, { x }, [model.forward(x)], `at N=${n}, H=${h}, W=${w}`);
      }
    });
    ex.dispose();
  });
});

describe('memory a loop check far above the example would take', () => {
  let made;
  before(() => { made = loadCase(render(generate(23, 68716))); });
  test('random model 23:68716: a loop over B beside an attention over B rows, checked up to where its memory passes the cap: traced, not OutOfMemory', async () => {
    // the rolled loop is checked eagerly at 4 and 16 times past the example; at 16 * (4 * 5 + 9)
    // = 464 the attention's scores are 464^3 floats (1.6 GB: OutOfMemory out of om.trace before);
    // past the cap that size is not checked, as a size where the model fails, and the checked
    // range says so
    const { model, inputs } = made;
    const ex = om.randn(inputs.x.shape, { seed: 7 });
    await withTraced((keep) => {
      const tm = om.trace(model, { x: [ex, inputs.x.axes] });
      const [b] = tm.symbols;
      assert.deepEqual([b.name, b.min, b.max, b.narrowedBy], ['B', 1, Infinity, null]);
      assert.ok(b.checked.max >= 29 && b.checked.max < 464, JSON.stringify(b.checked));
      keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
      for (const n of [3, 40]) {
        const x = om.randn([n, ...inputs.x.shape.slice(1)], { seed: n });
        keep(tm, { x }, [model.forward(x)], `at B=${n}`);
      }
    });
    ex.dispose();
  });
});

describe('a maximum the runs left short', () => {
  test('positions up to a table of P rows and the second piece of a split by c: every size from c + 1 to P, none narrowed', async () => {
    for (const [P, c] of [[15, 6], [21, 8]]) {
      const pos = new om.nn.Embedding(P, 2);
      // the runs jump past P (where the lookup fails); the split's second piece is T - c up to 2c, c from there
      const model = fn((x) => x.add(pos.forward(om.arange(0n, BigInt(x.shape[1])))).split(c, 1)[1]);
      const ex = om.randn([2, c + 1, 2], { seed: P });
      await withTraced((keep) => {
        const tm = om.trace(model, { x: [ex, [null, 'T', null]] });
        const [t] = tm.symbols;
        assert.deepEqual([t.min, t.max], [c + 1, P], JSON.stringify(tm.symbols));
        assert.match(t.narrowedBy, new RegExp(`embedding.*index ${P} is out of range for a weight of ${P} rows`));
        keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
        for (const T of [2 * c, 2 * c + 1, P]) {
          const x = om.randn([2, T, 2], { seed: T });
          keep(tm, { x }, [model.forward(x)], `at T=${T}`);
        }
      });
      ex.dispose();
      pos.dispose();
    }
  });
});

describe('the runs stay inside the declared ranges', () => {
  // Every run the tracer makes (the record run, the runs at other sizes, the fits' and the float
  // edges' runs, the whole-range check, the narrowing's search, the pairs) calls the model; a run
  // outside a declaration could throw in user code or take a path the declaration leaves out (a
  // change once ran a Swin classifier declared height 25 to 30 at 31). Each model records every
  // size it is called at; traced or refused, none may be outside its om.Dim.
  const F = om.nn.functional;
  /** Whether x is inside om.Dim options d (min, max, multipleOf). */
  const inside = (d, x) => x >= (d.min ?? 1) && x <= (d.max ?? Infinity) && x % (d.multipleOf ?? 1) === 0;
  /** [b, h, w] padded on the height and width to whole windows of ws, rolled by ws / 2 where the padded height is more than a window (Swin's shift), as windows. */
  const swinLike = (x, ws) => {
    const [b, h, w, c] = x.shape;
    const p = F.pad(x, [0, 0, 0, (ws - w % ws) % ws, 0, (ws - h % ws) % ws]);
    const [, hp, wp] = p.shape;
    const r = hp > ws ? p.roll([-(ws >> 1), -(ws >> 1)], [1, 2]) : p;
    return r.view(b, hp / ws, ws, wp / ws, ws, c).permute(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws, c).relu();
  };
  const CASES = [
    // name, model, example shape, axes with their declarations (options by axis position)
    ['a threshold inside the range', (x) => (x.shape[1] > 12 ? x.relu() : x.neg()), [2, 8], { 1: { min: 4, max: 20 } }],
    ['a threshold past the declared maximum', (x) => (x.shape[1] > 12 ? x.relu() : x.neg()), [2, 8], { 1: { min: 3, max: 12 } }],
    ['a window pad by 5', (x) => F.pad(x, [0, 0, 0, (5 - x.shape[1] % 5) % 5]).view(2, -1, 5, 3).sum(2), [2, 9, 3], { 1: { min: 6, max: 17 } }],
    ['a Swin-like pad and roll, window 4', (x) => swinLike(x, 4), [1, 6, 7, 2], { 1: { min: 3, max: 11 }, 2: { min: 5, max: 13 } }],
    ['a Swin-like pad and roll, window 7, heights 25 to 30', (x) => swinLike(x, 7), [2, 26, 27, 2], { 1: { min: 25, max: 30 }, 2: { min: 25 } }],
    ['a product of three sizes', (x) => {
      const [b, h, w, c] = x.shape;
      return x.reshape(b * h * w, c).relu().reshape(b, h, w, c);
    }, [2, 5, 6, 3], { 0: { max: 5 }, 1: { min: 3, max: 9 }, 2: { min: 4 } }],
    ['a declared maximum only, a floor division', (x) => x.slice(1, 0, Math.floor(x.shape[1] / 3) + 1), [2, 7], { 1: { max: 10 } }],
    ['a declared minimum only', (x) => x.slice(1, 0, x.shape[1] - 6), [2, 9], { 1: { min: 7 } }],
    ['a range of one size', (x) => x.slice(1, 0, Math.floor(x.shape[1] / 4)).add(x.shape[0]), [3, 6], { 0: {}, 1: { min: 6, max: 6 } }],
    ['a range narrower than a floor division\'s runs', (x) => x.slice(1, 0, Math.floor(x.shape[1] / 7) + 1), [2, 10], { 1: { min: 9, max: 12 } }],
    ['two narrow ranges, a window pad by 11', (x) => F.pad(x, [0, (11 - x.shape[2] % 11) % 11]).view(x.shape[0], -1, 11).sum(2),
      [3, 4, 8], { 0: { min: 2, max: 4 }, 2: { min: 7, max: 9 } }],
    ['a multiple with a range, a window pad by 6', (x) => F.pad(x, [0, (6 - x.shape[1] % 6) % 6]).view(2, -1, 6).sum(2), [2, 12], { 1: { multipleOf: 4, min: 8, max: 40 } }],
  ];
  for (const [name, f, shape, decl] of CASES) {
    test(name, () => {
      const seen = [];
      const model = fn((x) => {
        seen.push(x.shape);
        return f(x);
      });
      const ex = om.randn(shape, { seed: 1 });
      const axes = shape.map((_, d) => (decl[d] ? om.Dim(`s${d}`, decl[d]) : null));
      let outcome;
      try {
        const tm = om.trace(model, { x: [ex, axes] });
        outcome = 'traced';
        tm.dispose?.();
      } catch (e) {
        assert.ok(e instanceof om.TraceError, String(e)); // a refusal is loud; what this test checks is where the model ran
        outcome = `${e.kind}: ${e.message}`;
      } finally {
        ex.dispose();
      }
      // the test can fail: every symbol with more than one size declared took several
      for (const [d, o] of Object.entries(decl))
        if (o.min === undefined || o.min !== o.max) assert.ok(new Set(seen.map((s) => s[d])).size > 1, `${name}: axis ${d} ran at one size (${outcome})`);
      for (const s of seen)
        for (const [d, o] of Object.entries(decl))
          assert.ok(inside(o, s[d]), `${name}: the model ran at [${s}], axis ${d} outside om.Dim(${JSON.stringify(o)}) (${outcome})`);
    });
  }
});

describe('a trace that begins again with a raised minimum', () => {
  // A 3x3 conv without padding fails below 3: the range check raises the minimums of h and w and
  // the trace begins again with them (docs/symbolic-axes.md, "Where the model fails"). What the
  // model did at a size does not depend on the ranges, so the first runs at sizes the trace has
  // run at are taken from before, not made again: the far runs (each symbol alone at 64 times its
  // example plus 13) ran twice before, and a model that computes large constants at those sizes
  // paid for them twice (BEiT's relative position bias: 15 s of tracing, 13.5 s of it these).
  test('makes its far runs once; the graph holds from the raised minimums, in onnxruntime-web and the Session', async () => {
    const conv = new om.nn.Conv2d(2, 3, 3).eval();
    const seen = [];
    const model = fn((x) => {
      seen.push(`${x.shape[0]}x${x.shape[2]}x${x.shape[3]}`); // batch x h x w
      return conv.forward(x);
    });
    const ex = om.randn([2, 2, 6, 7], { seed: 1 });
    try {
      await withTraced((keep) => {
        const tm = om.trace(model, { x: [ex, ['b', null, 'h', 'w']] });
        assert.deepEqual(tm.symbols.map((s) => [s.name, s.min, s.narrowedBy]), [['b', 1, null], ['h', 3, 'conv2d (call 1)'], ['w', 3, 'conv2d (call 1)']]);
        // the model did begin again: the example's size ran in both record runs, the base run once
        assert.equal(seen.filter((s) => s === '2x6x7').length, 3, `runs at the example's size: ${seen.join(' ')}`);
        for (const far of [`${64 * 2 + 13}x6x7`, `2x${64 * 6 + 13}x7`, `2x6x${64 * 7 + 13}`])
          assert.equal(seen.filter((s) => s === far).length, 1, `runs at ${far}: ${seen.join(' ')}`);
        keep(tm, { x: ex }, [conv.forward(ex)], undefined, model);
        for (const [b, h, w] of [[1, 3, 3], [3, 4, 11], [2, 13, 5]]) {
          const x = om.randn([b, 2, h, w], { seed: h });
          keep(tm, { x }, [conv.forward(x)], `eager at ${b} x ${h} x ${w}`);
        }
      });
    } finally {
      ex.dispose();
      conv.dispose();
    }
  });
});

describe('a minimum whose sizes below it answer with another symbol small', () => {
  test("random model 27:21636's B - o rows padded to a multiple of w, split to min(s, T) rows, reshaped to [-1, w, s, C], with and without a loop over T: refused naming T from s; the declaration named, pasted, traces", async () => {
    // at the example's B the reshape fails below T = s, yet at B = o there are no rows (none
    // padded) and the model answers at every T. Beside a loop over T (rolled into a Loop), the
    // loop's range began at s, where the model first answers at the example's B: T narrowed to s
    // without a word, although the model answers below it
    for (const [w, s, o, B0, C, loop] of [[7, 8, 2, 5, 4, true], [5, 4, 1, 4, 2, true], [3, 6, 3, 6, 2, true], [7, 8, 2, 5, 4, false], [5, 4, 1, 4, 2, false]]) {
      const model = fn((x) => {
        const [B, T, CC] = x.shape;
        const rows = x.slice(0, 0, -o).split(s, -2)[0];
        const padded = om.nn.functional.pad(rows, [0, 0, 0, 0, 0, (w - (B - o) % w) % w]);
        padded.reshape(-1, w, s, CC).dispose();
        const out = padded.permute(1, 0, 2).mul(2);
        if (!loop) return out;
        let acc = x.select(1, 0);
        for (let i = 1; i < T; i++) acc = acc.mul(0.5).add(x.select(1, i));
        return [out, acc];
      });
      const ex = om.randn([B0, s + 2, C], { seed: w + s });
      const at = `w=${w}, s=${s}, o=${o}, loop=${loop}`;
      assert.throws(() => om.tidy(() => model.forward(om.zeros([B0, s - 1, C]))), /reshape/, `the model fails at B = ${B0}, T = ${s - 1} (${at})`);
      assert.equal(om.tidy(() => [model.forward(om.zeros([o, 2, C]))].flat()[0].shape.join()), `2,0,${C}`, `the model answers at B = ${o}, T = 2 (${at})`);
      let message;
      assert.throws(() => om.trace(model, { x: [ex, ['B', 'T', null]] }), (e) => {
        assert.ok(e instanceof om.TraceError && e.kind === 'SymbolicShape', String(e));
        assert.match(e.message, loop
          ? new RegExp(`^trace: the loop over 'T' holds from T=${s}, .*\\(at T=${s - 1}\\)\\), yet at B=${o}, T=${s - 1} the model answers: .*declare om\\.Dim\\('T', \\{ min: ${s} \\}\\)`)
          : new RegExp(`the minimum of 'T' rose there, yet at B=${o}, T=\\d+ the model answers.*om\\.Dim\\('T', \\{ min: ${s} \\}\\) declares`), at);
        message = e.message;
        return true;
      });
      const { dims } = suggestedDims(message);
      await withTraced((keep) => {
        const tm = om.trace(model, { x: [ex, [dims.get('B') ?? 'B', dims.get('T'), null]] }); // one round
        assert.deepEqual(Object.fromEntries(tm.symbols.map((d) => [d.name, d.min])), { B: o, T: s }, at);
        keep(tm, { x: ex }, [model.forward(ex)].flat(), undefined, model);
        for (const [b, t] of [[o, s], [o + 1, s + 1], [o + w, 3 * s + 1], [B0 + 9, s]]) {
          const x = om.randn([b, t, C], { seed: b * t });
          keep(tm, { x }, [model.forward(x)].flat(), `at B=${b}, T=${t} (${at})`);
        }
      });
      ex.dispose();
    }
  });
});

describe('a range narrowed where the model fails, then cut into an If', () => {
  // Each piece of a cut is traced with the narrowed range as its declaration (src/trace/branch.c),
  // so its own report had no reason, and the pieces joined reported narrowedBy null: the reason
  // must survive the join, in traced.symbols and in the .onnx's metadata_props alike.
  const F = om.nn.functional;
  const pooled = (x) => F.avgPool2d(x, [16, 1], { stride: [16, 1] });
  const report = (tm) => tm.symbols.map(({ checked, ...s }) => s);
  const written = (tm) => { // the .onnx's metadata of each symbol, in traced.symbols' terms
    const props = metadataProps(tm.toOnnx());
    return tm.symbols.map((s) => {
      const { min, max, multipleOf, narrowedBy, branches } = JSON.parse(props[`onemodel.symbol.${s.name}`]);
      const b = branches && branches.map((p) => ({ min: p.min, max: p.max ?? Infinity }));
      return { name: s.name, multipleOf, min, max: max ?? Infinity, narrowedBy, ...(b && { branches: b }) };
    });
  };
  // the throw's reason, as the trace without the cut gives it (JS names the pool's call, the file C)
  const eight = /^(avgPool2d|avg_pool2d) \(call 1\): at h=\d+(, w=\d+)? the model fails \(Error: multiple of 8\)$/;
  const cases = [
    ['a multiple (a throw) and a minimum (the pool), cut at 64', [1, 1, 128, 16], [null, null, 'h', null],
      (x) => { if (x.shape[2] % 8) throw new Error('multiple of 8'); const y = pooled(x); return x.shape[2] > 64 ? y.relu() : y.neg(); },
      [{ name: 'h', multipleOf: 8, min: 16, max: Infinity, narrowedBy: eight, branches: [{ min: 16, max: 64 }, { min: 72, max: Infinity }] }],
      [[1, 1, 16, 16], [1, 1, 64, 16], [1, 1, 72, 16], [1, 1, 200, 16]]],
    ['a minimum alone (a throw), cut at 64', [1, 1, 128, 16], [null, null, 'h', null],
      (x) => { if (x.shape[2] < 24) throw new Error('at least 24'); return x.shape[2] > 64 ? x.relu() : x.neg(); },
      [{ name: 'h', multipleOf: 1, min: 24, max: Infinity, narrowedBy: /^(trace|trace_run): at h=23 the model fails: Error: at least 24$/, branches: [{ min: 24, max: 64 }, { min: 65, max: Infinity }] }],
      [[1, 1, 24, 16], [1, 1, 64, 16], [1, 1, 65, 16]]],
    // the range narrowed to the even sizes (a throw), another op at its lowest size 2: the piece
    // below the cut at 4 is that one size, traced with the axis fixed there (no symbol of its own
    // to carry the reason), and the joined range's reason is the lowest piece's
    ['a multiple (a throw), a one-size piece at its lowest size', [1, 1, 8, 16], [null, null, 'h', null],
      (x) => { if (x.shape[2] % 2) throw new Error('odd'); return x.shape[2] === 2 ? x.abs() : x.tanh(); },
      [{ name: 'h', multipleOf: 2, min: 2, max: Infinity, narrowedBy: /^(tanh|trace|trace_run)( \(call 1\))?: at h=\d+ the model fails:? \(?Error: odd\)?$/,
        branches: [{ min: 2, max: 2 }, { min: 4, max: Infinity }] }],
      [[1, 1, 2, 16], [1, 1, 4, 16], [1, 1, 6, 16], [1, 1, 30, 16]]],
    ['a multiple, cut at 64, the piece above cut on w at 20 (nested)', [1, 1, 128, 24], [null, null, 'h', 'w'],
      (x) => { if (x.shape[2] % 8) throw new Error('multiple of 8'); const y = pooled(x); return x.shape[2] <= 64 ? y.neg() : x.shape[3] > 20 ? y.relu() : y.abs(); },
      [{ name: 'h', multipleOf: 8, min: 16, max: Infinity, narrowedBy: eight, branches: [{ min: 16, max: 64 }, { min: 72, max: Infinity }] },
        { name: 'w', multipleOf: 1, min: 1, max: Infinity, narrowedBy: null, branches: [{ min: 1, max: 20 }, { min: 21, max: Infinity }] }],
      [[1, 1, 16, 3], [1, 1, 72, 20], [1, 1, 72, 21], [1, 1, 136, 5]]],
  ];
  for (const [what, shape, axes, f, want, sizes] of cases) {
    test(`${what}: narrowedBy names the failure in traced.symbols and the .onnx; right in both engines`, () => withTraced((keep) => {
      const model = fn(f);
      const ex = om.randn(shape, { seed: 1 });
      const tm = om.trace(model, { x: [ex, axes] });
      const got = report(tm);
      assert.equal(got.length, want.length);
      want.forEach((w, k) => {
        const { narrowedBy, ...rest } = got[k], { narrowedBy: why, ...range } = w;
        assert.deepEqual(rest, range, `${w.name}: ${JSON.stringify(got[k])}`);
        if (why === null) assert.equal(narrowedBy, null, w.name);
        else assert.match(String(narrowedBy), why, w.name);
      });
      const file = written(tm);
      file.forEach((s, k) => { // the file says what traced.symbols says (C's terms for the call)
        assert.deepEqual({ ...s, narrowedBy: s.narrowedBy === null }, { ...got[k], narrowedBy: got[k].narrowedBy === null }, s.name);
        if (want[k].narrowedBy) assert.match(s.narrowedBy, want[k].narrowedBy, s.name);
      });
      keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
      for (const s of sizes) {
        const x = om.randn(s, { seed: s[2] + s[3] });
        keep(tm, { x }, [model.forward(x)], `at [${s}]`);
      }
    }));
  }
  test('a loop over a range narrowed to the even sizes, rolled into a Loop: narrowedBy names the failure; right in both engines', () => withTraced((keep) => {
    const model = fn((x) => {
      if (x.shape[1] % 2) throw new Error('even');
      let v = x.select(1, 0);
      for (let i = 1; i < x.shape[1]; i++) v = v.mul(0.5).add(x.select(1, i));
      return v;
    });
    const ex = om.randn([2, 6, 3], { seed: 1 });
    const tm = om.trace(model, { x: [ex, [null, 'T', null]] });
    const [{ checked, narrowedBy, ...range }] = tm.symbols;
    assert.deepEqual(range, { name: 'T', multipleOf: 2, min: 2, max: Infinity });
    assert.match(String(narrowedBy), /^\w+ \(call \d+\): at T=\d+ the model fails \(Error: even\)$/);
    assert.match(JSON.parse(metadataProps(tm.toOnnx())['onemodel.symbol.T']).narrowedBy, /the model fails \(Error: even\)$/); // C's terms
    keep(tm, { x: ex }, [model.forward(ex)], undefined, model);
    const x = om.randn([2, 14, 3], { seed: 14 });
    keep(tm, { x }, [model.forward(x)], 'at T=14');
  }));
});
