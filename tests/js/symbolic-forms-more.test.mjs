// More sizes a model computes from its symbolic axes (docs/symbolic-axes.md, "Integers the model
// computes from sizes"), each a class the random models refused (docs/tracing.md, "Random
// models"): a window far larger than the example (its step seen once by the far runs, as several
// steps at once), a minimum whose side below its constant the runs saw at one size only, and a
// piece of a range whose sizes the runs have all seen. Each traced model runs in onnxruntime-web
// and the Session against eager at odd sizes, 1, and across each window or threshold.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced, traceRefusal } from './helpers.mjs';

memoryHooks();
const F = om.nn.functional;

/** Traces model on x [example, axes] and keeps it for the oracle at the example and at every
 *  size of symbol `name` in sizes (an input of the example's shape with that size). */
function traceAt(keep, model, [x, axes], name, sizes) {
  const tm = om.trace(model, { x: [x, axes] });
  keep(tm, { x }, [model(x)], undefined, model);
  for (const s of sizes) {
    const xs = om.randn(x.shape.map((d, i) => (axes[i] === name ? s : d)), { seed: 200 + s });
    keep(tm, { x: xs }, [model(xs)], `at ${name}=${s}`);
  }
  return tm;
}

const noNarrowing = (tm) => assert.deepEqual(tm.symbols.map((s) => [s.min, s.max, s.narrowedBy, s.branches ?? null]),
  tm.symbols.map(() => [1, Infinity, null, null]));

describe('more forms', () => {
  test('repeat by a count computed from the sizes: a Tile whose repeats the graph computes (a table once per batch row, as DeBERTa-v2\'s)', () => withTraced((keep) => {
    const table = om.arange(0, 6).view(1, 2, 3).float();
    const perRow = (x) => x.add(table.repeat(x.shape[0], 1, 1)).tanh();
    const tr = traceAt(keep, perRow, [om.randn([3, 2, 3], { seed: 1 }), ['B', null, null]], 'B', [1, 2, 5, 17]);
    assert.deepEqual(tr.outputs[0].shape, ['B', 2, 3]);
    assert.ok(tr.graph().nodes.some((n) => n.opType === 'Tile'), 'a Tile node');
    noNarrowing(tr);
    const squared = (x) => x.repeat(1, x.shape[1]).tanh(); // [B, T] -> [B, T * T]
    const ts = traceAt(keep, squared, [om.randn([2, 3], { seed: 2 }), ['B', 'T']], 'T', [1, 2, 4, 9]);
    assert.deepEqual(ts.outputs[0].shape, ['B', 'T*T']);
    noNarrowing(ts);
  }));

  test('repeat of a 5-d tensor by a count computed from the sizes (LongT5\'s side keys tiled across its blocks): the Session runs the Tile', () => withTraced((keep) => {
    // [B, G, H, D] -> [B, 1, G, H, D] repeated once per block of 4 along T: a 5-d Tile, which the
    // Session used to refuse ("tiling more than 4 dims")
    const tiled = (x, y) => y.unsqueeze(1).repeat([1, Math.ceil(x.shape[1] / 4), 1, 1, 1]).tanh();
    const x = om.randn([2, 9], { seed: 3 }), y = om.randn([2, 3, 2, 2], { seed: 4 });
    const tm = om.trace(tiled, { x: [x, ['B', 'T']], y: [y, ['B', null, null, null]] });
    assert.deepEqual(tm.outputs[0].shape, ['B', 'floor((T+3)/4)', 3, 2, 2]);
    keep(tm, { x, y }, [tiled(x, y)], undefined, tiled);
    for (const [b, t] of [[1, 1], [3, 4], [2, 5], [1, 33]]) {
      const xs = om.randn([b, t], { seed: t }), ys = om.randn([b, 3, 2, 2], { seed: 10 + t });
      keep(tm, { x: xs, y: ys }, [tiled(xs, ys)], `at B=${b} T=${t}`);
    }
    noNarrowing(tm);
  }));

  test('windows of 47, 83, 107 and 150 on a batch traced at 2 to 10: the far runs see one step of several windows', () => withTraced((keep) => {
    // Math.ceil(B / w) * w - B and (w - B % w) % w are w - B at every size the first runs reach
    // (up to 8 * 3 + 5), and the run at 64 * 3 + 13 = 205 sees a jump of several windows at once
    for (const [w, b] of [[47, 3], [83, 2], [107, 4], [150, 10]]) {
      const sizes = [1, 2, 5, w - 1, w, w + 1, 2 * w - 1, 2 * w, 2 * w + 1, 5 * w + 3, 997];
      const up = (x) => F.pad(x, [0, 0, 0, 0, 0, Math.ceil(x.shape[0] / w) * w - x.shape[0]]).tanh();
      const tu = traceAt(keep, up, [om.randn([b, 5, 2], { seed: w }), ['B', 'T', null]], 'B', sizes);
      assert.deepEqual(tu.outputs[0].shape, [`${w}*floor((B+${w - 1})/${w})`, 'T', 2], `w = ${w}`);
      noNarrowing(tu);
      const windows = (x) => {
        const [B, T, C] = x.shape;
        return F.pad(x, [0, 0, 0, 0, 0, (w - (B % w)) % w]).reshape(-1, w, T, C).sum(1);
      };
      const tw = traceAt(keep, windows, [om.randn([b, 3, 2], { seed: w + 1 }), ['B', 'T', null]], 'B', sizes);
      assert.deepEqual(tw.outputs[0].shape, [`floor((B+${w - 1})/${w})`, 'T', 2], `w = ${w}`);
      noNarrowing(tw);
    }
  }));

  test('F.fold back to the input\'s own H, W after F.unfold with padding and stride: Col2Im of an image shape the graph computes', () => withTraced((keep) => {
    // fold's output_size is the model's x.shape.slice(-2), which moves with H and W (it was refused
    // as a fixed number); sizes across each stride's residues, below the kernel, 1, and far above
    for (const [k, p, s, h, w] of [[3, 1, 2, 7, 9], [4, 2, 3, 10, 8]]) {
      const model = (x) => {
        const [, , H, W] = x.shape;
        return F.fold(F.unfold(x, k, { padding: p, stride: s }).tanh(), [H, W], k, { padding: p, stride: s });
      };
      const x = om.randn([2, 3, h, w], { seed: k });
      const tm = om.trace(model, { x: [x, ['B', null, 'H', 'W']] });
      keep(tm, { x }, [model(x)], undefined, model);
      assert.deepEqual(tm.outputs[0].shape, ['B', 3, 'H', 'W']);
      assert.ok(tm.graph().nodes.some((n) => n.opType === 'Col2Im'), 'a Col2Im node');
      noNarrowing(tm);
      for (const [hh, ww] of [[1, 1], [1, 5], [2, 3], [s + 1, 2 * s + 1], [13, 6], [10 * h + 1, 3], [4, 50 * w + 1]]) {
        const xs = om.randn([1, 3, hh, ww], { seed: hh * 100 + ww });
        keep(tm, { x: xs }, [model(xs)], `k${k} p${p} s${s} at ${hh}x${ww}`);
      }
    }
  }));

  test('floor divisions by 20 to 42 with any numerator, as kept lengths and strides compute them: one form, right at every residue and far above', () => withTraced((keep) => {
    // ViTMAE's len_keep = int(L * (1 - mask_ratio)): at 0.35 and 0.9 it keeps floor(13L / 20) and
    // floor(L / 10) (the double L * 0.65 rounds to it at every size); the others are the forms a
    // stride or a ceil writes. Divisors above 16 take too many runs at consecutive sizes to see
    // every residue twice; the runs the fit asks for are where the forms that fit differ.
    const cases = [
      ['kept at 0.35', (L) => Math.floor(L * (1 - 0.35)), 'floor(13*L/20)', 20],
      ['(3L + 7) / 38', (L) => Math.floor((3 * L + 7) / 38) + 1, 'floor((3*L+7)/38)+1', 38],
      ['ceil(L / 21)', (L) => Math.ceil(L / 21), 'floor((L+20)/21)', 21],
      ['5L / 42', (L) => Math.floor((5 * L) / 42) + 2, 'floor(5*L/42)+2', 42],
    ];
    for (const [what, len, shape, k] of cases) {
      const model = (x) => om.cat([x, x.mul(2)], 1).slice(1, 0, len(x.shape[1])).tanh();
      // every residue of the first divisor, around a step of the others; 1, odd sizes, far above
      const around = k === 20 ? Array.from({ length: k }, (_, i) => k + 1 + i) : [k - 1, k, k + 1, 2 * k + 1];
      const sizes = [1, 2, 7, ...around, 5 * k + 3, 1001];
      const tm = traceAt(keep, model, [om.randn([2, 30], { seed: k }), ['B', 'L']], 'L', [...new Set(sizes)].filter((s) => 2 * s >= len(s)));
      assert.deepEqual(tm.outputs[0].shape, ['B', shape], what);
      noNarrowing(tm);
    }
  }));

  test('a floor division by 300 with numerator 7 (above the 256 the fit counts forms to): refused, naming the values, never a near form', () => {
    const model = (x) => x.slice(1, 0, Math.floor((7 * x.shape[1]) / 300) + 1).tanh();
    const err = om.tidy(() => traceRefusal(model, { x: [om.randn([2, 30], { seed: 3 }), ['B', 'L']] }, 'SymbolicShape'));
    assert.match(err.message, /^slice: argument 2 is 1 at the traced sizes, .*3 at B=\d+, L=92\b.*it changes with the sizes, but not as a size the graph can compute/);
  });

  test('Math.min(3, L), Math.min(4, L) and Math.min(5, L) seen below their constant at L = 1 only: run next to it, so no range narrows', () => withTraced((keep) => {
    for (const [c, n, l] of [[3, 4, 17], [4, 2, 13], [5, 3, 23]]) {
      const model = (x) => x.narrow(2, 0, Math.min(c, x.shape[2])).mul(2);
      const tm = traceAt(keep, model, [om.randn([n, 3, l], { seed: c }), ['N', null, 'L']], 'L', [1, 2, 3, 4, 5, 6, 9, l - 1, l + 1, 41]);
      assert.deepEqual(tm.outputs[0].shape, ['N', 3, `min(L,${c})`]);
      noNarrowing(tm);
    }
  }));

  test('windows of 14, 15 and 29 up to where positions two rows longer end: the piece above the first window is two sizes, both run', () => withTraced((keep) => {
    // the pad is w - T up to w and 2w - T at w + 1 and w + 2, where the model ends (an embedding of
    // w + 2 positions): the piece from w + 1 holds as many sizes as its runs saw, where any form that
    // fits them is exact
    for (const [w, b, t] of [[14, 4, 10], [15, 2, 9], [29, 2, 13]]) {
      const pos = new om.nn.Embedding(w + 2, 4).eval();
      const model = (x) => {
        const [B, T] = x.shape;
        const h = x.add(pos.forward(om.arange(0n, BigInt(T))));
        return F.pad(h, [0, 0, 0, (w - (T % w)) % w]).reshape(B, -1, w, 4).sum(2);
      };
      const tm = traceAt(keep, model, [om.randn([b, t, 4], { seed: w }), ['B', 'T', null]], 'T', [1, 2, 3, 7, w - 1, w, w + 1, w + 2]);
      const [, T] = tm.symbols;
      assert.deepEqual([T.min, T.max, T.branches], [1, w + 2, [{ min: 1, max: w }, { min: w + 1, max: w + 2 }]]);
      assert.match(T.narrowedBy, /embedding/);
    }
  }));
});
