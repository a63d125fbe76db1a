// Sizes a model computes from its symbolic axes (docs/symbolic-axes.md, "Integers the model
// computes from sizes"): a remainder or floor division by any constant (a window's padding
// (w - T % w) % w, Math.floor(T / 23), T % 19), products of any symbols, the minimum and the
// maximum of sizes; and ranges: a range never narrows where the eager model gives an answer
// (x.slice(0, -3) then a view of a batch of 1), and one that narrows where the model fails is
// written into the .onnx (metadata_props) and the library format. Each traced model runs in
// onnxruntime-web and the Session against eager at sizes across every boundary and far above
// the example.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced, throwsKind, metadataProps } from './helpers.mjs';

memoryHooks();
const F = om.nn.functional;
const bits = (t) => Array.from(new Uint32Array(t.toArray().buffer));

/**
 * Traces model on inputs { name: [example, axes] }, and keeps it for the oracle at the example
 * and at each assignment of sizes (symbol -> size) in `at` (inputs of the example's shapes with
 * those sizes). Returns the TracedModel.
 */
function traceAt(keep, model, inputs, at) {
  const tm = om.trace(model, inputs);
  const names = Object.keys(inputs);
  const call = (xs) => model(...names.map((n) => xs[n]));
  const examples = Object.fromEntries(names.map((n) => [n, inputs[n][0]]));
  keep(tm, examples, call(examples), undefined, model);
  at.forEach((sizes, k) => {
    const xs = Object.fromEntries(names.map((n, i) => {
      const [x, axes] = inputs[n];
      // an axis is named by a string or by an om.Dim (its name)
      return [n, om.randn(x.shape.map((s, d) => sizes[axes[d]?.name ?? axes[d]] ?? s), { seed: 100 + 7 * k + i })];
    }));
    keep(tm, xs, call(xs));
  });
  return tm;
}

/** Every size of T where a window of w changes what it does, and far above: 1, w - 1, w, w + 1, ... */
const acrossWindows = (w, far = 1000) => [1, 2, w - 1, w, w + 1, 2 * w - 1, 2 * w, 2 * w + 1, 5 * w + 3, far, far + 1]
  .filter((t, i, a) => t >= 1 && a.indexOf(t) === i).map((T) => ({ T }));

/**
 * traced.symbols as the .onnx's metadata_props write them: one entry per symbol, in order,
 * onemodel.symbol.<name> with JSON (a null max is Infinity); the initializers' aliases
 * (onemodel.alias.<name>) follow them.
 */
function onnxSymbols(bytes) {
  const bound = (r) => ({ min: r.min, max: r.max ?? Infinity });
  return Object.entries(metadataProps(bytes)).filter(([key]) => !key.startsWith('onemodel.alias.')).map(([key, value]) => {
    assert.ok(key.startsWith('onemodel.symbol.'), key);
    const { min, max, multipleOf, narrowedBy, checked, branches, ...rest } = JSON.parse(value);
    assert.deepEqual(rest, {}, 'no other field');
    const s = { name: key.slice('onemodel.symbol.'.length), multipleOf, ...bound({ min, max }), narrowedBy, checked: bound(checked) };
    return branches ? { ...s, branches: branches.map(bound) } : s;
  });
}

describe('sizes a model computes', () => {
  test('window padding (w - T % w) % w for windows 5, 7, 12, 32 and 49: exact across every multiple and far above', () => withTraced((keep) => {
    for (const w of [5, 7, 12, 32, 49]) {
      // Longformer's _pad_to_window_size, Swin's pad_r: pad up to a multiple of w, then windows
      const model = (x) => {
        const [B, T, C] = x.shape;
        return F.pad(x, [0, 0, 0, (w - (T % w)) % w]).reshape(B, -1, w, C).sum(2);
      };
      const tm = traceAt(keep, model, { x: [om.randn([2, 10, 3], { seed: w }), ['B', 'T', null]] }, acrossWindows(w));
      assert.deepEqual(tm.outputs[0].shape, ['B', `floor((T+${w - 1})/${w})`, 3], `w = ${w}`);
      assert.deepEqual(tm.symbols.map((s) => [s.min, s.max, s.narrowedBy]), [[1, Infinity, null], [1, Infinity, null]]);
    }
  }));

  test('an integer rounded from a float product (Math.floor(T * 0.7), a keep ratio) is checked where the double rounds off the exact value: computed in double; Math.round refused; the same with integers traces', () => withTraced((keep) => {
    // 90 * 0.7 is 62.99999999999999: eager keeps 62 rows where floor(7T / 10) is 63, and 180 * 0.35
    // likewise; the runs the trace makes at its usual sizes all fit floor(7T / 10), the runs at
    // those edges fit the product in double only, which the graph computes (Cast, Mul, Floor, Cast)
    for (const [ratio, example, edges] of [[0.7, 9, [1, 10, 89, 90, 91, 170, 180, 330, 4001]], [0.35, 6, [3, 179, 180, 181, 340, 2001]]]) {
      const keepRows = (x) => x.slice(1, 0, Math.floor(x.shape[1] * ratio)).tanh();
      const tk = traceAt(keep, keepRows, { x: [om.randn([2, example, 3], { seed: 33 }), [null, 'T', null]] }, edges.map((T) => ({ T })));
      assert.deepEqual(tk.outputs[0].shape, [2, `floor(T*${ratio})`, 3]);
      // a round adds 0.5 in double, a second rounding no such form holds
      const round = (x) => x.mul(Math.round(x.shape[1] * ratio));
      throwsKind(() => om.trace(round, { x: [om.randn([2, example, 3]), [null, 'T', null]] }), 'SymbolicShape', /it changes with the sizes/);
    }
    // a ceil is -floor(double(-T) * s): 110 * 1.1 is 121.00000000000001, so eager pads 122 rows
    // there, where ceil(11T / 10) is 121
    const pad = (x) => F.pad(x, [0, 0, 0, Math.ceil(x.shape[1] * 1.1)]);
    const tc = traceAt(keep, pad, { x: [om.randn([2, 9, 3], { seed: 34 }), [null, 'T', null]] }, [1, 10, 109, 110, 111, 130, 1001].map((T) => ({ T })));
    assert.deepEqual(tc.outputs[0].shape, [2, 'T-floor(-T*1.1)', 3]);
    // with integers (exact at every size), and a ratio the double holds exactly: traced, right at the edges
    const exact = (x) => x.slice(1, 0, Math.floor(7 * x.shape[1] / 10)).tanh();
    const te = traceAt(keep, exact, { x: [om.randn([2, 9, 3], { seed: 31 }), [null, 'T', null]] }, [1, 10, 45, 89, 90, 91, 180, 330].map((T) => ({ T })));
    assert.deepEqual(te.outputs[0].shape, [2, 'floor(7*T/10)', 3]);
    const quarter = (x) => x.slice(1, 0, Math.floor(x.shape[1] * 0.75)).tanh();
    const tq = traceAt(keep, quarter, { x: [om.randn([2, 9, 3], { seed: 32 }), [null, 'T', null]] }, [1, 4, 5, 90, 401].map((T) => ({ T })));
    assert.deepEqual(tq.outputs[0].shape, [2, 'floor(3*T/4)', 3]);
  }));

  test('a float product of a shifted size, a ratio above 1 or two roundings (Math.floor((T - 1) * 0.7), T * 1.4, T * 0.7 * 2) is checked where it rounds off: refused; integers trace; interpolate by 0.7 computes its size in double; 1 - 0.7 traces as what eager computes', () => withTraced((keep) => {
    const x = (example, seed) => ({ x: [om.randn([2, example, 3], { seed }), [null, 'T', null]] });
    // each was fitted and silently wrong: (T - 1) * 0.7 keeps 62 rows at T = 91 where
    // floor(7(T - 1) / 10) is 63; 45 * 1.4 and 45 * 0.7 * 2 are 62.99999999999999, written T + floor(2T / 5)
    const shifted = (T) => Math.floor((T - 1) * 0.7);
    throwsKind(() => om.trace((t) => t.slice(1, 0, shifted(t.shape[1])).tanh(), x(9, 41)), 'SymbolicShape',
      /^slice: argument 2 is 5 at the traced sizes, .*: it changes with the sizes, but not as a size the graph can compute/);
    for (const times of [(T) => Math.floor(T * (224 / 160)), (T) => Math.floor(T * 0.7 * 2)]) {
      throwsKind(() => om.trace((t) => t.mul(times(t.shape[1])), x(9, 42)), 'SymbolicShape', /^full: the value is 12 at the traced sizes, .*it changes with the sizes/);
    }
    // the same with integers: right where the doubles round off
    const edges = [1, 10, 45, 85, 90, 91, 171, 331].map((T) => ({ T }));
    const te = traceAt(keep, (t) => t.slice(1, 0, Math.floor(7 * (t.shape[1] - 1) / 10)).tanh(), x(9, 43), edges.slice(1));
    assert.deepEqual(te.outputs[0].shape, [2, 'floor((7*T+3)/10)-1', 3]);
    traceAt(keep, (t) => t.mul(Math.floor(7 * t.shape[1] / 5)), x(9, 44), edges);
    // an extent the op itself rounds from a double: interpolate's floor(H * 0.7) is 62 at H = 90
    // (fitted as floor(7H / 10) and silently wrong there once, then refused): the graph computes
    // it in double as the op does, right there (tested further in 'interpolate by a scale
    // factor'); a scale the double holds exactly is an integer floor division
    const image = (seed) => ({ x: [om.randn([1, 2, 9, 5], { seed }), [null, null, 'H', null]] });
    const t7 = traceAt(keep, (t) => F.interpolate(t, { scaleFactor: [0.7, 1] }), image(46), [2, 89, 90, 91, 170].map((H) => ({ H })));
    assert.deepEqual(t7.outputs[0].shape, [1, 2, 'floor(H*0.7)', 5]);
    const t3 = traceAt(keep, (t) => F.interpolate(t, { scaleFactor: [0.75, 1] }), image(47), [2, 4, 90, 91, 401].map((H) => ({ H })));
    assert.deepEqual(t3.outputs[0].shape, [1, 2, 'floor(3*H/4)', 5]);
    // 1 - 0.7 is 0.30000000000000004: ceil(10 * it) is 4 where ceil(3T / 10) is 3, at every whole
    // 3T / 10; the runs at those edges fit what eager computes
    const tc = traceAt(keep, (t) => t.slice(1, 0, Math.ceil(t.shape[1] * (1 - 0.7))).tanh(), x(9, 45), [1, 10, 20, 33, 450].map((T) => ({ T })));
    assert.deepEqual(tc.outputs[0].shape, [2, 'floor(3*T/10)+1', 3]);
  }));

  test('float products with other constants: 1.15 and (T - 3) * 0.35 refused where they round off, 1.15 * 2 computed in double; Math.floor(T / 0.3), Math.ceil(T * 2.5), Math.round(T * 1.5), Math.floor(T * 0.1 * 3) trace and agree at every size up to the declared maximum', () => withTraced((keep) => {
    const x = (example, seed, T = 'T') => ({ x: [om.randn([2, example, 3], { seed }), [null, T, null]] });
    // each rounds off the exact ratio somewhere (eager 114 at T = 100 where 23T / 20 is 115; 114
    // at T = 50, 57 at T = 183): no integer form holds; a float value (full's) has no form rounded
    // in double, nor has a shifted size's product
    throwsKind(() => om.trace((t) => t.mul(Math.floor(t.shape[1] * 1.15)), x(9, 51)), 'SymbolicShape',
      /^full: the value is 10 at the traced sizes, .*it changes with the sizes, but not as a size the graph can compute/);
    // as an integer argument the product in double is a form (1.15 * 2 is the double nearest 2.3):
    // checked at the sizes where it is not floor(23T / 10), then computed so
    const tp = traceAt(keep, (t) => F.pad(t, [0, 0, 0, Math.floor(t.shape[1] * 1.15 * 2)]), x(9, 52), [1, 10, 49, 50, 51, 183, 1001].map((T) => ({ T })));
    assert.deepEqual(tp.outputs[0].shape, [2, 'T+floor(T*2.3)', 3]);
    throwsKind(() => om.trace((t) => t.slice(1, 0, Math.floor((t.shape[1] - 3) * 0.35)).tanh(), x(9, 53)), 'SymbolicShape',
      /^slice: argument 2 is 2 at the traced sizes, .*it changes with the sizes, but not as a size the graph can compute/);
    // doubles whose floor, ceil or round is the exact one's at every size: traced, and checked at
    // every size up to the maximum declared (a numerator of 10 over 3 and 5 over 2 were refused)
    const every = Array.from({ length: 60 }, (_, i) => ({ T: i + 1 }));
    const T = om.Dim('T', { max: 60 });
    const exact = [
      [(n) => Math.floor(n / 0.3), '4*T+floor(T/3)'],
      [(n) => Math.ceil(n * 2.5), '3*T+floor((T+1)/2)'],
      [(n) => Math.round(n * 1.5), '2*T+floor((T+1)/2)'],
      [(n) => Math.floor(n * 0.1 * 3), 'T+floor(3*T/10)'],
    ];
    exact.forEach(([size, expr], i) => {
      const tm = traceAt(keep, (t) => F.pad(t, [0, 0, 0, size(t.shape[1])]), x(9, 55 + i, T), every);
      assert.deepEqual(tm.outputs[0].shape, [2, expr, 3]);
    });
  }));

  test('interpolate by a scale factor PyTorch rounds in double (0.7, 0.35, 1.15, 1.4, 1/3): traced with no declared range, its size floor(double(H) * s) computed in double; every mode and recomputeScaleFactor right in both engines at 1, odd sizes, where the integer ratios are off and far above', () => withTraced((keep) => {
    // PyTorch's output size is floor(H * s) in double (s the double given, not rounded to float32):
    // floor(7H / 10) is off first at H = 90 (62 rows), floor(7H / 20) at 180, H + floor(3H / 20) at
    // 100, H + floor(2H / 5) at 45; the graph casts H to double, multiplies by s, floors and casts
    // back, the op's own arithmetic, so it holds at every H below 2^53 (npm run sweep:interpolate
    // checks every H to 2,000 and the off sizes to 100,000). The sampling coordinates are eager's.
    const image = (h, w) => om.randn([1, 2, h, w], { seed: h + 7 * w });
    const modes = [['nearest'], ['bilinear', false], ['bilinear', true], ['bicubic', false], ['bicubic', true], ['bicubic', true, true], ['nearest', undefined, true]];
    // below 2 rows (H = 1) or 3 columns (W = 1, 2) eager has no output: the ranges narrow there only
    const sizes = [[2, 3], [90, 180], [91, 179], [89, 181], [170, 7], [11, 13], [1001, 6]];
    for (const [mode, alignCorners, recomputeScaleFactor] of modes) {
      const opts = { scaleFactor: [0.7, 0.35], mode, ...(alignCorners === undefined ? {} : { alignCorners }), ...(recomputeScaleFactor ? { recomputeScaleFactor } : {}) };
      const tm = traceAt(keep, (t) => F.interpolate(t, opts), { x: [image(9, 12), [null, null, 'H', 'W']] }, sizes.map(([H, W]) => ({ H, W })));
      const what = JSON.stringify(opts);
      assert.deepEqual(tm.outputs[0].shape, [1, 2, 'floor(H*0.7)', 'floor(W*0.35)'], what);
      assert.deepEqual(tm.symbols.map((x) => [x.name, x.min, x.max, x.checked.max]), [['H', 2, Infinity, 32768], ['W', 3, Infinity, 32768]], what);
      assert.ok(tm.symbols.every((x) => x.narrowedBy !== null), what);
    }
    for (const [s, example, at] of [[1.15, 9, [1, 99, 100, 101, 333]], [1.4, 9, [1, 44, 45, 46, 555]], [1 / 3, 7, [3, 4, 299, 300, 3001]]]) {
      const tm = traceAt(keep, (t) => F.interpolate(t, { scaleFactor: [s, 1], mode: 'bilinear' }), { x: [image(example, 4), [null, null, 'H', null]] }, at.map((H) => ({ H })));
      assert.deepEqual(tm.outputs[0].shape, [1, 2, `floor(H*${s})`, 4]);
    }
    // area is adaptive pooling to the size Math.floor(H * 0.7) the JS computes, which it takes as
    // a fixed number: refused at every scale on a symbolic axis, loudly
    const H = om.Dim('H', { max: 89 });
    throwsKind(() => om.trace((t) => F.interpolate(t, { scaleFactor: [0.7, 1], mode: 'area' }), { x: [image(9, 5), [null, null, H, null]] }),
      'SymbolicShape', /^adaptiveAvgPool2d: argument 0 \(floor\(7\*H\/10\)\) changes with the sizes, and adaptiveAvgPool2d takes it as a fixed number/);
    // double holds every integer up to 2^53 only: an axis that declared maxima let reach it is refused
    const big = om.Dim('H', { max: 2 ** 27 }), wide = om.Dim('W', { max: 2 ** 27 });
    throwsKind(() => om.trace((t) => F.interpolate(t.reshape([1, 1, -1, 1]), { scaleFactor: [0.7, 1] }), { x: [om.randn([9, 5], { seed: 48 }), [big, wide]] }),
      'SymbolicShape', /^interpolate: the size H\*W, scaled by 0\.7 and rounded down in double, may reach 2\^53 at the declared maxima \(18014398509481984\), where double no longer holds every integer: declare maxima that keep it below/);
  }));

  test('Swin\'s window partition with symbolic H and W: pad both to a multiple of 7, windows of 49, and back', () => withTraced((keep) => {
    const ws = 7;
    const model = (x) => {
      const [B, H, W, C] = x.shape;
      const xp = F.pad(x, [0, 0, 0, (ws - (W % ws)) % ws, 0, (ws - (H % ws)) % ws]);
      const [, Hp, Wp] = xp.shape;
      const windows = xp.view(B, Hp / ws, ws, Wp / ws, ws, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws, C).softmax(1);
      const back = windows.view(B, Hp / ws, Wp / ws, ws, ws, C).permute(0, 1, 3, 2, 4, 5).reshape(B, Hp, Wp, C);
      return back.slice(1, 0, H).slice(2, 0, W);
    };
    const tm = traceAt(keep, model, { x: [om.randn([2, 9, 10, 3], { seed: 12 }), ['B', 'H', 'W', null]] },
      [{ H: 1, W: 1 }, { H: 7, W: 7 }, { H: 8, W: 13 }, { H: 14, W: 15 }, { B: 1, H: 50, W: 22 }, { H: 64, W: 3 }]);
    assert.deepEqual(tm.outputs[0].shape, ['B', 'H', 'W', 3]);
  }));

  test('a symbol times floor divisions: windows of 6 counted as B * ceil(H / 6) * ceil(W / 6), B * ceil(H / 5) * floor((W + 1) / 3) and B * Math.floor(T / 4)', () => withTraced((keep) => {
    // torchvision Swin writes the window count out (x.shape[0] / numWindows, B * numWindows): no -1
    const ws = 6;
    const windows = (x) => {
      const [B, H, W, C] = x.shape;
      const xp = F.pad(x, [0, 0, 0, (ws - (W % ws)) % ws, 0, (ws - (H % ws)) % ws]);
      const [nH, nW] = [Math.floor(xp.shape[1] / ws), Math.floor(xp.shape[2] / ws)];
      const w = xp.view(B, nH, ws, nW, ws, C).permute(0, 1, 3, 2, 4, 5).reshape(B * nH * nW, ws * ws, C).softmax(1);
      const per = w.view(w.shape[0] / (nH * nW), nH * nW, ws * ws, C).sum(1); // [B, 36, C]
      return [w.view(B, nH, nW, ws, ws, C).permute(0, 1, 3, 2, 4, 5).reshape(B, nH * ws, nW * ws, C).slice(1, 0, H).slice(2, 0, W), per];
    };
    const tw = traceAt(keep, windows, { x: [om.randn([2, 8, 13, 2], { seed: 13 }), ['B', 'H', 'W', null]] },
      [{ B: 1, H: 1, W: 1 }, { B: 3, H: 6, W: 6 }, { B: 1, H: 7, W: 5 }, { B: 2, H: 11, W: 12 }, { B: 1, H: 12, W: 13 },
        { B: 1, H: 17, W: 9 }, { B: 4, H: 3, W: 40 }, { B: 1, H: 97, W: 61 }]);
    assert.deepEqual(tw.outputs.map((o) => o.shape), [['B', 'H', 'W', 2], ['B', 36, 2]]);
    // three factors none of which a tensor has as an extent
    const three = (x) => { const [B, H, W] = x.shape; return om.zeros([B * Math.ceil(H / 5) * Math.floor((W + 1) / 3), 2]).add(x.sum()); };
    const t3 = traceAt(keep, three, { x: [om.randn([2, 8, 13, 2], { seed: 16 }), ['B', 'H', 'W', null]] },
      [{ B: 1, H: 1, W: 2 }, { B: 3, H: 5, W: 5 }, { B: 1, H: 6, W: 3 }, { B: 2, H: 11, W: 7 }, { B: 1, H: 24, W: 40 }, { B: 5, H: 101, W: 64 }]);
    assert.deepEqual(t3.outputs[0].shape, ['B*floor((W+1)/3)*floor((H+4)/5)', 2]);
    const rows = (x) => om.zeros([x.shape[0] * Math.floor(x.shape[1] / 4), 2]).add(x.sum());
    const tr = traceAt(keep, rows, { x: [om.randn([3, 9], { seed: 14 }), ['B', 'T']] },
      [1, 3, 4, 5, 7, 8, 10, 11, 12, 13, 61].map((T, k) => ({ B: 1 + (k % 3), T })));
    assert.deepEqual(tr.outputs[0].shape, ['B*floor(T/4)', 2]);
    assert.deepEqual(tr.symbols.map((s) => [s.min, s.narrowedBy]), [[1, null], [1, null]]);
  }));

  test('a size plus a minimum or maximum of two sizes (Math.max(T, B) - T), then windows of the larger and a split of it: exact either side of T = B', () => withTraced((keep) => {
    // max(T, B) - 1 is T - min(T - B, 0) - 1, whose floor divisions have a numerator below 0 once
    // normalised (floor((B + 6 min(B - T, 0) + 6) / 7)): ONNX's Div truncates, so the graph floors with Mod
    const model = (x) => {
      const [B, T] = x.shape;
      const M = Math.max(T, B);
      const p = F.pad(x, [0, M - T]);
      const w = F.pad(p, [0, (7 - (M % 7)) % 7]).reshape(B, -1, 7).sum(2);
      return [w, p.split(5, 1).at(-1)];
    };
    const tm = traceAt(keep, model, { x: [om.randn([5, 9], { seed: 15 }), ['B', 'T']] },
      [{ B: 1, T: 1 }, { B: 9, T: 1 }, { B: 1, T: 9 }, { B: 6, T: 6 }, { B: 13, T: 12 }, { B: 12, T: 13 }, { B: 40, T: 3 }, { B: 3, T: 40 },
        { B: 22, T: 21 }, { B: 101, T: 100 }]);
    assert.deepEqual(tm.outputs.map((o) => o.shape), [['B', '-min(B-T,0)+floor((B+6*min(B-T,0)+6)/7)'],
      ['B', 'B+4*min(B-T,0)-5*floor((B+4*min(B-T,0)+4)/5)+5']]);
    assert.ok(tm.graph().nodes.some((n) => n.opType === 'Mod'), 'a floor of a numerator that may be negative');
    assert.deepEqual(tm.symbols.map((s) => [s.min, s.max, s.narrowedBy]), [[1, Infinity, null], [1, Infinity, null]]);
  }));

  test('windows of Math.max(6, L): fitted over runs both sides of L = 6, so right at L = 2 to 5 too', () => withTraced((keep) => {
    // runs at L = 1 and from 6 up fit the pad (5 - max(6, L) % 5) % 5 as 5 * ceil(L / 5) - L, which is
    // 3 at L = 2 where the model pads 4: the sizes either side of the switch are run first
    const model = (x) => {
      const L = x.shape[1];
      const p = F.pad(x, [0, Math.max(6, L) - L]);
      return F.pad(p, [0, (5 - (Math.max(6, L) % 5)) % 5]).reshape(x.shape[0], -1, 5).amax(2);
    };
    const tm = traceAt(keep, model, { x: [om.randn([3, 14], { seed: 16 }), [null, 'L']] }, [1, 2, 3, 4, 5, 6, 7, 10, 11, 33].map((L) => ({ L })));
    assert.deepEqual(tm.outputs[0].shape, [3, '-min(L,6)+floor((L+4*min(L,6))/5)+2']);
  }));

  test('a window pad of an extent that takes even sizes only: (12 - (2 * B) % 12) % 12, whose forms that fit are one', () => withTraced((keep) => {
    const model = (x) => {
      const [B, D] = x.shape;
      return F.pad(x.expand(2 * B, B, D), [0, 0, 0, 0, 0, (12 - ((2 * B) % 12)) % 12]).reshape(-1, 12, B, D).sum(1);
    };
    const tm = traceAt(keep, model, { x: [om.randn([3, 4], { seed: 17 }), ['B', null]] }, [1, 2, 5, 6, 7, 12, 13, 40].map((B) => ({ B })));
    assert.deepEqual(tm.outputs[0].shape, ['floor((B+5)/6)', 'B', 4]);
  }));

  test('Math.floor(T / 23) and (T - 1) % 19: a floor division and a remainder by constants above 16', () => withTraced((keep) => {
    const sizes = [1, 2, 18, 19, 20, 22, 23, 24, 38, 45, 46, 47, 100, 1000].map((T) => ({ T }));
    const floor = traceAt(keep, (x) => x.narrow(1, 0, Math.floor(x.shape[1] / 23) + 1),
      { x: [om.randn([2, 10, 3], { seed: 1 }), [null, 'T', null]] }, sizes);
    assert.deepEqual(floor.outputs[0].shape, [2, 'floor(T/23)+1', 3]);
    const rest = traceAt(keep, (x) => x.select(1, (x.shape[1] - 1) % 19), { x: [om.randn([2, 10, 3], { seed: 2 }), [null, 'T', null]] }, sizes);
    assert.deepEqual(rest.outputs[0].shape, [2, 3]);
    assert.ok(rest.graph().nodes.some((n) => n.opType === 'Div'), 'the index is computed: T - 1 - 19 * floor((T - 1) / 19)');
  }));

  test('a size that takes few values (a split\'s last piece by 4 is 1 to 4 rows), split again by Math.ceil of a third of it: a form over those values', () => withTraced((keep) => {
    // ceil(s / 3) of s in 1..4 is 1, 1, 1, 2: seen at each of the four values of s, which are all
    // it takes, a floor form holds at every size (a floor division by 3 elsewhere needs 6 sizes of s)
    const model = (x) => {
      const p = x.split(4, 0).at(-1);
      const q = p.split(Math.ceil(p.shape[0] / 3), 0)[0];
      return [q.exp(), x.slice(0, 0, 2 * p.shape[0] - 1)];
    };
    const tm = traceAt(keep, model, { x: [om.randn([9, 3], { seed: 9 }), ['B', null]] },
      [1, 2, 3, 4, 5, 7, 8, 11, 12, 16, 17, 403].map((B) => ({ B })));
    assert.deepEqual(tm.outputs.map((o) => o.shape[1]), [3, 3]);
    assert.deepEqual(tm.symbols.map((s) => [s.min, s.max, s.narrowedBy]), [[1, Infinity, null]]);
  }));

  test('a range that ends where the model fails (21 positions): forms that differ only above it are one, so ceil(T / 2) and a split\'s last piece by 8 trace', () => withTraced((keep) => {
    // up to T = 21 the runs cannot tell floor((T + 1) / 2) from forms by larger divisors that
    // agree with it there; no run can be made above, and there the graph need not hold
    const pos = new om.nn.Embedding(21, 4).eval();
    const model = (x) => {
      const T = x.shape[1];
      const h = x.add(pos.forward(om.arange(0n, BigInt(T))));
      return [h.indexSelect(1, om.arange(0n, BigInt(T), 2n)).tanh(), h.split(8, 1).at(-1).neg()];
    };
    const tm = traceAt(keep, model, { x: [om.randn([2, 13, 4], { seed: 11 }), [null, 'T', null]] },
      [1, 2, 3, 4, 7, 8, 9, 11, 12, 15, 16, 17, 20, 21].map((T) => ({ T })));
    assert.equal(tm.symbols[0].max, 21);
    assert.match(tm.symbols[0].narrowedBy, /embedding/);
  }));

  test('a product of three symbols: x.permute(0, 2, 3, 1).reshape(B * H * W, C) with no Shape node', () => withTraced((keep) => {
    const model = (x) => { const [B, C, H, W] = x.shape; return x.permute(0, 2, 3, 1).reshape(B * H * W, C).relu(); };
    const tm = traceAt(keep, model, { x: [om.randn([2, 4, 3, 5], { seed: 3 }), ['B', null, 'H', 'W']] },
      [{ B: 1, H: 1, W: 1 }, { B: 3, H: 7, W: 2 }, { B: 1, H: 13, W: 11 }]);
    assert.deepEqual(tm.outputs[0].shape, ['B*H*W', 4]);
    assert.deepEqual(tm.graph().nodes.map((n) => n.opType), ['Transpose', 'Reshape', 'Relu']);
  }));

  test('min and max of two sizes, and of a size and a constant, in either order', () => withTraced((keep) => {
    const two = (x, y) => {
      const T = x.shape[1], S = y.shape[1];
      const n = Math.min(T, S), m = Math.max(S, T);
      return [x.narrow(1, 0, n).add(y.narrow(1, 0, Math.min(S, T))), om.zeros([2, m]), om.zeros([Math.max(T, S) - n + 1])];
    };
    const tm = traceAt(keep, two, { x: [om.randn([2, 5], { seed: 4 }), [null, 'T']], y: [om.randn([2, 7], { seed: 5 }), [null, 'S']] },
      [{ T: 1, S: 9 }, { T: 9, S: 1 }, { T: 6, S: 6 }, { T: 40, S: 3 }, { T: 3, S: 40 }]);
    assert.deepEqual(tm.outputs.map((o) => o.shape), [[2, 'S+min(T-S,0)'], [2, 'T-min(T-S,0)'], ['T-S-2*min(T-S,0)+1']]);
    const capped = (x) => { const T = x.shape[1]; return [x.narrow(1, 0, Math.min(6, T)), om.zeros([Math.max(T, 4)]), om.zeros([Math.max(1, T - 2)])]; };
    const tc = traceAt(keep, capped, { x: [om.randn([2, 5], { seed: 6 }), [null, 'T']] }, [1, 2, 3, 4, 6, 7, 30].map((T) => ({ T })));
    assert.deepEqual(tc.outputs.map((o) => o.shape), [[2, 'min(T,6)'], ['T-min(T,4)+4'], ['T-min(T,3)+1']]);
    assert.deepEqual(tc.symbols[0].min, 1); // Math.max(1, T - 2) at T = 1 is 1: nothing to narrow
  }));
  test('windows of 3, 9, 17 and 31 and Math.ceil(T / w) * w (one step between two runs: runs in its middle), floor division by 33 and a remainder by 33: traced at T = 10, right far above', () => withTraced((keep) => {
    const far = [1, 2, 32, 33, 34, 65, 66, 67, 99, 100, 1000, 1001, 4097].map((T) => ({ T }));
    // windows of 100 traced at T = 10 are refused: the runs see one step, at 101, which may be a
    // size threshold as well as a window (docs/symbolic-axes.md)
    for (const w of [3, 9, 17, 31]) {
      const pad = (x) => { const [B, T, C] = x.shape; return F.pad(x, [0, 0, 0, (w - (T % w)) % w]).reshape(B, -1, w, C).amax(2); };
      const tp = traceAt(keep, pad, { x: [om.randn([2, 10, 3], { seed: 40 + w }), ['B', 'T', null]] }, acrossWindows(w, 4 * w + 1).concat(far));
      assert.deepEqual(tp.outputs[0].shape, ['B', `floor((T+${w - 1})/${w})`, 3], `w = ${w}`);
      const ceil = (x) => { const T = x.shape[1]; return om.zeros([Math.ceil(T / w) * w]).add(x.sum()); };
      const tc = traceAt(keep, ceil, { x: [om.randn([2, 10, 3], { seed: 50 + w }), [null, 'T', null]] }, acrossWindows(w).concat(far));
      assert.deepEqual(tc.outputs[0].shape, [`${w}*floor((T+${w - 1})/${w})`], `w = ${w}`);
    }
    const div = (x) => { const T = x.shape[1]; return [x.narrow(1, 0, Math.floor(T / 33) + 1).exp(), F.pad(x, [0, 0, 0, T % 33]).neg()]; };
    const td = traceAt(keep, div, { x: [om.randn([2, 10, 3], { seed: 60 }), [null, 'T', null]] }, far);
    assert.deepEqual(td.outputs.map((o) => o.shape[1]), ['floor(T/33)+1', '2*T-33*floor(T/33)']);
    assert.deepEqual(td.symbols.map((s) => [s.min, s.max, s.narrowedBy]), [[1, Infinity, null]]);
  }));

  test('products of three and four symbols, and min/max of a size and a constant or of two sizes as created sizes', () => withTraced((keep) => {
    const prod = (x) => { const [B, C, H, W] = x.shape; return [x.reshape(B * C * H * W).relu(), om.zeros([C * H * W, 2]).add(x.sum())]; };
    const tp = traceAt(keep, prod, { x: [om.randn([2, 3, 4, 5], { seed: 61 }), ['B', 'C', 'H', 'W']] },
      [{ B: 1, C: 1, H: 1, W: 1 }, { B: 3, C: 7, H: 2, W: 9 }, { B: 1, C: 2, H: 13, W: 11 }]);
    assert.deepEqual(tp.outputs.map((o) => o.shape), [['B*C*H*W'], ['C*H*W', 2]]);
    const cap = (x) => {
      const [N, C, H, W] = x.shape;
      return [x.narrow(2, 0, Math.min(H, 11)).tanh(), x.sum().add(om.zeros([Math.max(W, 9), Math.min(H, W)]))];
    };
    const tc = traceAt(keep, cap, { x: [om.randn([1, 2, 6, 7], { seed: 62 }), [null, null, 'H', 'W']] },
      [{ H: 1, W: 1 }, { H: 10, W: 8 }, { H: 11, W: 9 }, { H: 12, W: 10 }, { H: 40, W: 3 }, { H: 3, W: 40 }, { H: 9, W: 9 }]);
    assert.deepEqual(tc.outputs.map((o) => o.shape), [[1, 2, 'min(H,11)', 'W'], ['W-min(W,9)+9', 'W+min(H-W,0)']]);
    assert.deepEqual(tc.symbols.map((s) => [s.min, s.max, s.narrowedBy]), [[1, Infinity, null], [1, Infinity, null]]);
  }));

  test('a minimum of a product and a size, the product the smaller only where W is small: Math.min(h * w, H) after a stride-2 conv', () => withTraced((keep) => {
    // ceil(H / 2) * ceil(W / 2) is below H only at W <= 2: the runs see that side at one size
    // first (random model 21:549), and the model runs next to it until they see it at two
    const conv = new om.nn.Conv2d(3, 5, 3, { stride: 2, padding: 1 }).eval();
    const model = (x) => {
      const [N, C, H] = x.shape;
      const v = conv.forward(x);
      const [h, w] = v.shape.slice(2);
      return v.reshape(N, 5, h * w).narrow(-1, 0, Math.min(h * w, H)).relu();
    };
    const tm = traceAt(keep, model, { x: [om.randn([2, 3, 12, 17], { seed: 63 }), [null, null, 'H', 'W']] },
      [{ H: 1, W: 1 }, { H: 9, W: 1 }, { H: 30, W: 2 }, { H: 31, W: 3 }, { H: 9, W: 4 }, { H: 6, W: 8 }, { H: 33, W: 61 }, { H: 3, W: 300 }]);
    assert.deepEqual(tm.outputs[0].shape, [2, 5, 'floor((H+1)/2)*floor((W+1)/2)+min(H-floor((H+1)/2)*floor((W+1)/2),0)']);
    assert.deepEqual(tm.symbols.map((s) => [s.min, s.max, s.narrowedBy]), [[1, Infinity, null], [1, Infinity, null]]);
  }));

  test('windows of a larger of a size and a constant: (37 - Math.max(5, T) % 37) % 37 after a pad to Math.max(5, T), exact on both sides of T = 5', () => withTraced((keep) => {
    const model = (x) => {
      const [B, T, C] = x.shape;
      const v = F.pad(x, [0, 0, 0, Math.max(5, T) - T]);
      return F.pad(v, [0, 0, 0, (37 - (Math.max(5, T) % 37)) % 37]).reshape(B, -1, 37, C).sum(2);
    };
    const tm = traceAt(keep, model, { x: [om.randn([2, 8, 3], { seed: 64 }), ['B', 'T', null]] },
      [1, 2, 4, 5, 6, 36, 37, 38, 73, 74, 75, 1000].map((T) => ({ T })));
    assert.deepEqual(tm.symbols.map((s) => [s.min, s.max, s.narrowedBy]), [[1, Infinity, null], [1, Infinity, null]]);
  }));

  test('a cap at a small size beside fixed axes of that size: Math.min(3, B) with axes of 2 and 10, Math.min(B, 2)', () => withTraced((keep) => {
    // the runs below the example take the model's fixed sizes too (B = 2 here), where the cap
    // kinks; Math.min(B, 2) is B at 1 only, next to 2 at B = 2: no size lies between
    const capped = (x) => { const B = x.shape[0]; return [x.narrow(0, 0, Math.min(3, B)).relu(), x.narrow(0, 0, Math.min(B, 2)).neg()]; };
    const tm = traceAt(keep, capped, { x: [om.randn([6, 10, 2], { seed: 8 }), ['B', 'T', null]] },
      [1, 2, 3, 4, 5, 37].map((B) => ({ B, T: 10 })).concat([{ B: 2, T: 1 }, { B: 1, T: 23 }]));
    assert.deepEqual(tm.outputs.map((o) => o.shape), [['min(B,3)', 'T', 2], ['min(B,2)', 'T', 2]]);
    assert.deepEqual(tm.symbols.map((s) => [s.min, s.max, s.narrowedBy]), [[1, Infinity, null], [1, Infinity, null]]);
  }));

  test('SegFormer\'s stage sizes read back from their shapes: ceil(H / 16) not fitted as a minimum of far extents the runs cannot tell from it', () => withTraced((keep) => {
    // four stages (windows 7/4 pad 3, then 3/2 pad 1), reductions 8/8, 4/4, 2/2 of the first three,
    // and each stage reshaped by the height and width read from its shape: the third stage's
    // ceil(H / 16) also fitted floor((H+3)/32) + floor((H+31)/32) - min(floor((H+3)/32), 2) + 2 at
    // the runs' sizes, 4 at H = 48 and 5 at H = 81 where the model reads 3 and 6
    const pool = (x, k, s, p = 0) => F.avgPool2d(x, k, { stride: s, padding: p });
    const stages = (x) => {
      const s1 = pool(x, 7, 4, 3), s2 = pool(s1, 3, 2, 1), s3 = pool(s2, 3, 2, 1), s4 = pool(s3, 3, 2, 1);
      const r = [pool(s1, 8, 8), pool(s2, 4, 4), pool(s3, 2, 2)].map((t) => t.mean([2, 3], true));
      const out = [s1, s2, s3, s4].map((s, i) => {
        const [b, , h, w] = s.shape;
        const y = s.flatten(2).reshape(b, -1, h, w);
        return F.interpolate(i < 3 ? y.add(r[i]) : y, { size: [s1.shape[2], s1.shape[3]], mode: 'bilinear', alignCorners: false });
      });
      return om.cat(out, 1);
    };
    const tm = traceAt(keep, stages, { x: [om.randn([2, 1, 64, 64], { seed: 9 }), ['b', null, 'H', 'W']] },
      [[29, 29], [48, 48], [48, 81], [81, 49], [33, 160], [161, 97]].map(([H, W]) => ({ b: 1, H, W })));
    // below 29 the 8 x 8 reduction has no pixel (the eager model fails)
    assert.deepEqual(tm.symbols.map((s) => [s.name, s.min, s.max]), [['b', 1, Infinity], ['H', 29, Infinity], ['W', 29, Infinity]]);
  }));

  test('a declared range the runs cover whole: floor divisions and sums of them with remainders are exact there, however few sizes pin them elsewhere', () => withTraced((keep) => {
    // om.Dim('T', { max: 10 }) is run at every size from 1 to 10: forms that fit every one of
    // them and differ only above 10 are one, and a sum no form names is written as its steps
    const every = (lo, hi) => Array.from({ length: hi - lo + 1 }, (_, i) => ({ T: lo + i }));
    const end = traceAt(keep, (x) => x.slice(1, 0, Math.floor(x.shape[1] / 3) + 1),
      { x: [om.randn([2, 7, 3], { seed: 31 }), [null, om.Dim('T', { max: 10 }), null]] }, every(1, 10));
    assert.deepEqual(end.symbols.map((s) => [s.min, s.max, s.narrowedBy]), [[1, 10, null]]);
    traceAt(keep, (x) => x.narrow(0, 0, Math.floor(x.shape[0] / 5) + 2),
      { x: [om.randn([6, 3], { seed: 32 }), [om.Dim('T', { min: 3, max: 9 }), null]] }, every(3, 9));
    const sum = traceAt(keep, (x) => x.slice(0, 0, (x.shape[0] % 5) + Math.floor(x.shape[0] / 4)),
      { x: [om.randn([7, 3], { seed: 33 }), [om.Dim('T', { max: 12 }), null]] }, every(1, 12));
    assert.deepEqual(sum.symbols.map((s) => [s.min, s.max, s.narrowedBy]), [[1, 12, null]]);
  }));
});

describe('floats a model computes', () => {
  test('an attention\'s scale from a symbolic head size: 1 / sqrt(E) and 3 / sqrt(E) computed in the graph', () => withTraced((keep) => {
    const model = (x) => {
      const E = x.shape[2];
      return [F.scaledDotProductAttention(x, x.tanh(), x), F.scaledDotProductAttention(x, x, x.neg(), { scale: 3 / Math.sqrt(E) })];
    };
    const tm = traceAt(keep, model, { x: [om.randn([2, 5, 6], { seed: 9 }), ['B', 'T', 'E']] },
      [{ E: 1 }, { E: 2 }, { E: 7 }, { E: 61, T: 3 }, { B: 1, T: 1, E: 13 }, { B: 3, T: 40, E: 300 }].map((a) => ({ B: 2, T: 5, ...a })));
    const ops = tm.graph().nodes.map((n) => n.opType);
    assert.equal(ops.filter((o) => o === 'Sqrt').length, 1, ops.join(',')); // one scale computation, shared
    assert.deepEqual(tm.symbols.map((s) => [s.min, s.max]), [[1, Infinity], [1, Infinity], [1, Infinity]]);
  }));

  test('a float of an integer the sizes give: x.div(B * T * C), 3 * T + 1, Math.sqrt(2 * T + 1) with eager\'s bits, 1 / Math.sqrt(2 * B * T - 2)', async () => {
    const model = (x) => {
      const [B, T, C] = x.shape;
      return [x.div(B * T * C), x.mul(3 * T + 1), x.mul(Math.sqrt(2 * T + 1)), x.mul(1 / Math.sqrt(2 * B * T - 2))];
    };
    await withTraced((keep) => {
      traceAt(keep, model, { x: [om.randn([2, 5, 3], { seed: 18 }), ['B', 'T', null]] },
        [{ B: 1, T: 2 }, { B: 3, T: 1 }, { B: 7, T: 13 }, { B: 2, T: 300 }]);
    });
    // a Cast of an integer, and its Sqrt (correctly rounded in float32 as eager's double is, once rounded): the same bits
    const example = om.randn([2, 5, 3], { seed: 18 });
    const tm = om.trace(model, { x: [example, ['B', 'T', null]] });
    const session = await om.InferenceSession.create(tm.save());
    try {
      for (const [B, T] of [[1, 1], [4, 7], [9, 1000]]) {
        const x = om.randn([B, T, 3], { seed: B + T });
        const got = Object.values(session.run({ x }));
        const want = model(x);
        for (let k = 0; k < 3; k++) assert.deepEqual(bits(got[k]), bits(want[k]), `output ${k} at B=${B}, T=${T}`);
        for (const t of [x, ...got, ...want]) t.dispose();
      }
    } finally {
      for (const t of [session, tm, example]) t.dispose();
    }
  });

  test('a half or a quarter of a size expression added to a tensor: (T % 7) * 0.5 + Math.floor(T / 3) over a declared range, refused without one', () => withTraced((keep) => {
    const every = (hi) => Array.from({ length: hi }, (_, i) => ({ T: i + 1 }));
    const half = (x) => { const T = x.shape[0]; return x.add((T % 7) * 0.5 + Math.floor(T / 3)); };
    const quarter = (x) => { const T = x.shape[0]; return x.mul((T % 5) * 0.25 + Math.floor(T / 4) + 1); };
    traceAt(keep, half, { x: [om.randn([7, 3], { seed: 34 }), [om.Dim('T', { max: 10 }), null]] }, every(10));
    traceAt(keep, quarter, { x: [om.randn([6, 2], { seed: 35 }), [om.Dim('T', { max: 13 }), null]] }, every(13));
    // with no maximum the runs cannot see every size, and no form gives it: loud, not a guess
    throwsKind(() => om.trace(half, { x: [om.randn([7, 3], { seed: 34 }), ['T', null]] }), 'SymbolicShape',
      /^full: the value is 2 at the traced sizes, .*: it changes with the sizes, but not as a size the graph can compute \(/);
  }));

  test('a float argument that moves is refused where no graph computes it: another op\'s, or no float form', () => {
    const E = (x) => x.shape.at(-1);
    throwsKind(() => om.trace((x) => F.leakyRelu(x, 1 / E(x)), { x: [om.randn([3, 7]), [null, 'E']] }), 'SymbolicShape',
      /^leakyRelu: float argument 0 is 0\.142857 here and [\d.]+ at E=\d+; a float argument computed from a size cannot be written in the graph \(at /);
    throwsKind(() => om.trace((x) => F.scaledDotProductAttention(x, x, x, { scale: Math.log(E(x)) }), { x: [om.randn([3, 4, 7]), [null, null, 'E']] }),
      'SymbolicShape', /^scaledDotProductAttention: float argument 0 is 1\.94591 here and [\d.]+ at E=\d+; it changes with the sizes, but not as a float the graph can compute \(a \* f\(E\) \+ b/);
  });
});

describe('ranges', () => {
  test('a declared multiple reports the sizes it holds at: om.Dim(\'h\', { multipleOf: 14 }) from 14, with { min: 15, max: 100 } from 28 to 98, as its checked range, in the .onnx too', () => withTraced((keep) => {
    for (const [decl, want] of [[{ multipleOf: 14 }, [14, Infinity]], [{ multipleOf: 14, min: 15, max: 100 }, [28, 98]]]) {
      const tm = traceAt(keep, (x) => x.relu(), { x: [om.randn([1, 28], { seed: 3 }), [null, om.Dim('h', decl)]] }, [{ h: want[0] }, { h: 56 }]);
      const [s] = tm.symbols;
      assert.deepEqual([s.multipleOf, s.min, s.max, s.narrowedBy], [14, ...want, null]);
      assert.equal(s.checked.min, s.min);
      if (want[1] !== Infinity) assert.equal(s.checked.max, s.max);
      assert.deepEqual(onnxSymbols(tm.toOnnx()), tm.symbols);
    }
  }));

  test('x.slice(0, -3) then view(-1, T * 6): right at a batch of 1, 2 and 3, where ONNX\'s Slice clamps as eager does', () => withTraced((keep) => {
    const model = (x) => x.slice(0, -3).view(-1, x.shape[1] * 6);
    const tm = traceAt(keep, model, { x: [om.randn([5, 4, 6], { seed: 7 }), ['B', 'T', null]] },
      [{ B: 1 }, { B: 2 }, { B: 3 }, { B: 4 }, { B: 50 }, { B: 2, T: 9 }]);
    assert.deepEqual(tm.symbols.map((s) => s.min), [1, 1]); // no range narrowed: eager answers at every batch
    assert.deepEqual(tm.outputs[0].shape, ['min(B,3)', '6*T']);
  }));

  test('a model that gives another answer below the example is refused with the range to declare, and traces declared so', () => withTraced((keep) => {
    // a batch of one is squeezed away: at 1 the model returns another rank, which no graph of the others gives
    const model = (x) => x.squeeze().relu();
    const x = om.randn([3, 4], { seed: 8 });
    // at B = 1 it returns rank 1, from 2 rank 2: no If of the two pieces is one graph
    assert.throws(() => om.trace(model, { x: [x, ['B', null]] }), (e) => e instanceof om.TraceError && e.kind === 'SymbolicShape'
      && e.message.includes('the model changes at a size threshold of \'B\' (at 2) and its output 0 is float32 of rank 1 below it, '
        + 'float32 of rank 2 from it: the two cannot be one graph; the trace holds on the example\'s side: declare om.Dim(\'B\', { min: 2 })'),
    'refused, with the declaration that holds');
    const tm = traceAt(keep, model, { x: [x, [om.Dim('B', { min: 2 }), null]] }, [{ B: 2 }, { B: 9 }]);
    assert.deepEqual([tm.symbols[0].min, tm.symbols[0].narrowedBy], [2, null]);
  }));

  test('a range narrowed where the model fails is in the .onnx (metadata_props) and the library format', async () => {
    // a 3x3 convolution without padding needs 3 rows: at 1 and 2 eager fails, so the graph holds from 3
    om.manualSeed(9);
    const conv = new om.nn.Conv2d(2, 2, 3);
    const [x, small, y] = [om.randn([1, 2, 6, 5], { seed: 9 }), om.randn([1, 2, 2, 5], { seed: 10 }), om.randn([8, 2], { seed: 11 })];
    const tm = om.trace(conv, { x: [x, [null, null, 'h', null]] });
    const declared = om.trace((t) => t.relu(), { x: [y, [om.Dim('n', { multipleOf: 4, max: 64 }), null]] });
    const plain = om.trace((t) => t.relu(), { x: [y, ['batch', null]] });
    const session = await om.InferenceSession.create(tm.save());
    try {
      assert.deepEqual([tm.symbols[0].min, tm.symbols[0].max], [3, Infinity]);
      assert.match(tm.symbols[0].narrowedBy, /^conv2d/);
      const props = metadataProps(tm.toOnnx());
      assert.deepEqual(Object.keys(props), ['onemodel.symbol.h']);
      assert.deepEqual(JSON.parse(props['onemodel.symbol.h']),
        { min: 3, max: null, multipleOf: 1, narrowedBy: tm.symbols[0].narrowedBy, checked: tm.symbols[0].checked });
      assert.deepEqual(onnxSymbols(tm.toOnnx()), tm.symbols);
      // the library format carries the range: its session refuses a size outside it, naming the call
      assert.throws(() => session.run({ x: small }), (e) => e instanceof om.OmError
        && /axis 'h' is 2 at dim 2 of input 'x'; the traced graph holds for h from 3 \(narrowed by conv2d/.test(e.message));
      // a declared range is written too, with no call that narrowed it, and so is every size from 1
      assert.deepEqual(JSON.parse(metadataProps(declared.toOnnx())['onemodel.symbol.n']),
        { min: 4, max: 64, multipleOf: 4, narrowedBy: null, checked: { min: 4, max: 64 } });
      assert.deepEqual(JSON.parse(metadataProps(plain.toOnnx())['onemodel.symbol.batch']),
        { min: 1, max: null, multipleOf: 1, narrowedBy: null, checked: plain.symbols[0].checked });
      for (const t of [declared, plain]) assert.deepEqual(onnxSymbols(t.toOnnx()), t.symbols);
    } finally {
      for (const t of [session, tm, declared, plain, conv, x, small, y]) t.dispose();
    }
  });

  test('a graph written as an If on a size: its pieces are in the .onnx metadata too, as traced.symbols has them', () => {
    const x = om.randn([2, 8, 4], { seed: 12 });
    const tm = om.trace((t) => (t.shape[1] > 40 ? t.abs() : t.sigmoid()), { x: [x, ['batch', om.Dim('seq', { max: 500 }), null]] });
    try {
      assert.deepEqual(tm.symbols.find((s) => s.name === 'seq').branches, [{ min: 1, max: 40 }, { min: 41, max: 500 }]);
      assert.deepEqual(JSON.parse(metadataProps(tm.toOnnx())['onemodel.symbol.seq']), {
        min: 1, max: 500, multipleOf: 1, narrowedBy: null, checked: { min: 1, max: 500 },
        branches: [{ min: 1, max: 40 }, { min: 41, max: 500 }],
      });
      assert.deepEqual(onnxSymbols(tm.toOnnx()), tm.symbols);
    } finally {
      tm.dispose();
      x.dispose();
    }
  });
});

describe('sizes the trace never saw (random models 21:62694, 21:88889, 21:43750)', () => {
  test('a split\'s second piece clamped below the example, then a conv and an adaptive pool: cut where the piece\'s height is not the graph\'s, and right where declared', () => withTraced((keep) => {
    // x.split(6, 2)[1] is rows 6..12: min(H, 12) - 6 rows, from H = 7 (below, the split has one
    // piece); a 3x3 stride-2 conv of it needs 3 rows (H >= 9) and gives 1 row at H = 9 and 10, then
    // 2. The runs below the example (H = 1) raise the minimum past the probes made when the record
    // began, so the piece fitted every probe as a fixed 6, and the pool's cells were computed for
    // 2 rows at H = 9 and 10 (onnxruntime-web: MatMul dimension mismatch). The runs at the
    // raised minimum now compare the calls' output sizes with the graph's, and the sizes below it
    // where the model answers are a piece of an If on H (W's minimum rose where the conv fails)
    om.manualSeed(31);
    const conv = new om.nn.Conv2d(1, 3, 3, { stride: 2 }).eval();
    const pool = new om.nn.AdaptiveAvgPool2d([null, 1]).eval();
    const model = (x) => pool.forward(conv.forward(x.split(6, 2)[1]));
    const x = om.randn([2, 1, 13, 9], { seed: 31 });
    const cut = traceAt(keep, model, { x: [x, [null, null, 'H', 'W']] },
      [{ H: 9 }, { H: 10, W: 3 }, { H: 11, W: 4 }, { H: 12 }, { H: 13, W: 3 }, { H: 14, W: 40 }, { H: 91 }]);
    assert.ok(cut.symbols[0].branches.length >= 2, JSON.stringify(cut.symbols));
    assert.deepEqual([cut.symbols[0].min, cut.symbols[1].min], [9, 3]);
    const tm = traceAt(keep, model, { x: [x, [null, null, om.Dim('H', { min: 12 }), om.Dim('W', { min: 3 })]] },
      [{ H: 12 }, { H: 14, W: 3 }, { H: 15, W: 40 }, { H: 90 }]);
    assert.deepEqual(tm.outputs[0].shape, [2, 3, 2, 1]);
    conv.dispose(), pool.dispose();
  }));

  test('Math.min(L, 2) beside a slice L - min(L, 4) of a mask written in place: not fitted as min(E + 1, 2) of the slice, which runs at L = 1 and 5 alone cannot tell apart', () => withTraced((keep) => {
    // at L = 2 to 4 the slice is empty as at L = 1, and the model narrows to 2 rows where a
    // minimum of the slice's extent would give 1 (onnxruntime-web: Gather out of range)
    const model = (x) => {
      const L = x.shape[2];
      const m = om.zeros([L]);
      m.slice(0, -4).fill_(1);
      return x.add(m.reshape(1, 1, -1)).narrow(2, 0, Math.min(L, 2)).indexSelect(2, om.tensor([1n, 0n]));
    };
    const x = om.randn([3, 2, 13], { seed: 32 });
    // from 2 (at 1 eager fails): the sizes below the example where the model does otherwise are pieces of an If,
    // each traced on its own, right at every size where eager answers (onnxruntime-web and the Session)
    const all = traceAt(keep, model, { x: [x, [null, null, om.Dim('L', { min: 2 })]] }, [2, 3, 4, 5, 6, 12, 14, 70].map((L) => ({ L }))); // at 1 eager fails (index 1 of 1)
    const tm = traceAt(keep, model, { x: [x, [null, null, om.Dim('L', { min: 13 })]] }, [{ L: 14 }, { L: 70 }]);
    assert.deepEqual(tm.outputs[0].shape, [3, 2, 2]);
  }));

  test('a split into pieces of a size that grows as H * H: the range check stops where a run would make millions of calls, and says so', () => withTraced((keep) => {
    // 4 * H * H columns in pieces of 170 are 25 million pieces at H = 32768, each a call of the
    // shape-only runs (the random model 21:43750 took more than a minute); the line of H ends
    // before, where a run makes more calls than the check runs, and traced.symbols says where
    const model = (x) => {
      const [N, C, H, W] = x.shape;
      const v = x.reshape(N, 2, C / 2, H, W);
      return v.matmul(v.transpose(-2, -1)).reshape(N, -1).split(170, -1)[0];
    };
    const tm = traceAt(keep, model, { x: [om.randn([2, 4, 13, 5], { seed: 33 }), ['N', null, 'H', 'W']] },
      [{ H: 1 }, { H: 6 }, { H: 7 }, { N: 1, H: 40, W: 2 }]);
    const [n, h, w] = tm.symbols.map((s) => s.checked);
    assert.deepEqual([n, w], [{ min: 1, max: 32768 }, { min: 1, max: 32768 }]);
    assert.ok(h.max >= 64 && h.max < 32768, `H checked to ${h.max}`);
    assert.deepEqual(tm.outputs[0].shape, ['N', 'min(4*H*H,170)']);
  }));
});

// Where the eager model itself fails at sizes of the declared range (no answer exists there), the
// tracer runs it at the sizes around and, where it answers at sizes a declaration gives (a range,
// a multiple, one size) and fails at every other, traces with that narrowed range
// (docs/symbolic-axes.md, "Where the model fails"); where it answers at sizes no declaration
// gives, it refuses, naming one.
describe('ranges narrowed where the model fails', () => {
  /**
   * Checks tm's symbol name: [multipleOf, min, max], the reason reported and written into the .onnx
   * (metadata_props); returns the library format's bytes, for refusedOutside.
   */
  function narrowedTo(tm, name, want) {
    const s = tm.symbols.find((v) => v.name === name);
    assert.deepEqual([s.multipleOf, s.min, s.max], want);
    assert.ok(s.narrowedBy, 'the reason is reported');
    assert.deepEqual(JSON.parse(metadataProps(tm.toOnnx())[`onemodel.symbol.${name}`]), { min: want[1], max: want[2] === Infinity
      ? null : want[2], multipleOf: want[0], narrowedBy: s.narrowedBy, checked: { min: s.checked.min, max: s.checked.max } });
    assert.deepEqual(onnxSymbols(tm.toOnnx()), tm.symbols);
    return tm.save();
  }
  /** A Session on the library format's bytes refuses an input of shape (ShapeMismatch, message). */
  async function refusedOutside(bytes, shape, message) {
    const [session, x] = [await om.InferenceSession.create(bytes), om.randn(shape, { seed: 30 })];
    try {
      assert.throws(() => session.run({ x }), (e) => e instanceof om.OmError && e.kind === 'ShapeMismatch' && message.test(e.message), message);
    } finally {
      session.dispose();
      x.dispose();
    }
  }

  test('a reshape into halves of T (odd T fails): T narrows to multiples of 2, right at even sizes the trace never saw', async () => {
    let bytes;
    await withTraced((keep) => {
      const model = (x) => x.reshape(x.shape[0], x.shape[1] / 2, 2).sum(2);
      const tm = traceAt(keep, model, { x: [om.randn([3, 8], { seed: 20 }), ['B', 'T']] }, [{ T: 2 }, { T: 46 }, { T: 250 }, { B: 1, T: 1002 }]);
      assert.deepEqual(tm.outputs[0].shape, ['B', 'T/2']);
      bytes = narrowedTo(tm, 'T', [2, 2, Infinity]);
      assert.match(tm.symbols[1].narrowedBy, /^reshape \(call 1\): at .*T=\d*[13579] the model fails \(reshape: shape\[1\] must be an integer, got \d+\.5\)$/);
      assert.equal(tm.symbols[0].narrowedBy, null); // B is not narrowed
    });
    await refusedOutside(bytes, [3, 9], /^run: axis 'T' is 9 at dim 1 of input 'x'; the traced graph holds for T from 2 in multiples of 2$/);
  });

  test('two symbols that must both be even (a 2x2 pooling by reshape): both narrow', async () => {
    let bytes;
    await withTraced((keep) => {
      const model = (x) => x.reshape(1, 2, x.shape[2] / 2, 2, x.shape[3] / 2, 2).sum([3, 5]);
      const tm = traceAt(keep, model, { x: [om.randn([1, 2, 8, 6], { seed: 22 }), [null, null, 'H', 'W']] },
        [{ H: 2, W: 2 }, { H: 30, W: 4 }, { H: 2, W: 58 }]);
      assert.deepEqual([tm.symbols[0].multipleOf, tm.symbols[0].min], [2, 2]);
      bytes = narrowedTo(tm, 'W', [2, 2, Infinity]);
    });
    await refusedOutside(bytes, [1, 2, 8, 5], /^run: axis 'W' is 5 at dim 3 of input 'x'; the traced graph holds for W from 2 in multiples of 2$/);
  });

  test('a broadcast against a fixed [7, 7, 1]: B = 7 alone when 1 is not declared, 1 and 7 (two pieces) when it is', async () => {
    let bytes;
    await withTraced((keep) => {
      const c = om.randn([7, 7, 1], { seed: 24 });
      const model = (x) => x.add(c);
      const x = om.randn([7, 7, 12], { seed: 25 });
      const both = traceAt(keep, model, { x: [x, ['B', null, null]] }, [{ B: 1 }]); // symbolic-size-one.test.mjs checks more
      assert.deepEqual(both.symbols[0].branches, [{ min: 1, max: 1 }, { min: 7, max: 7 }]);
      const tm = traceAt(keep, model, { x: [x, [om.Dim('B', { min: 2 }), null, null]] }, []);
      bytes = narrowedTo(tm, 'B', [1, 7, 7]);
    });
    await refusedOutside(bytes, [8, 7, 12], /^run: axis 'B' is 8 at dim 0 of input 'x'; the traced graph holds for B from 7 to 7 \(narrowed by add \(call 1\): at B=\d+ the call fails/);
  });

  test('a row the model selects (row 4 fails below 5 rows): the range starts at 5', async () => {
    let bytes;
    await withTraced((keep) => {
      const model = (x) => x.select(0, 4).relu().add(x.slice(0, 0, 1));
      const tm = traceAt(keep, model, { x: [om.randn([6, 3], { seed: 27 }), ['B', null]] }, [{ B: 5 }, { B: 19 }, { B: 301 }]);
      bytes = narrowedTo(tm, 'B', [1, 5, Infinity]);
    });
    await refusedOutside(bytes, [4, 3], /^run: axis 'B' is 4 at dim 0 of input 'x'; the traced graph holds for B from 5 \(narrowed by select/);
  });

  test('h + w must be even: neither narrows alone (it answers at odd h and odd w together), refused naming such sizes', () => {
    const model = (x) => x.sum().add(om.ones([2, (x.shape[0] + x.shape[1]) / 2]).sum());
    const x = om.randn([4, 6], { seed: 29 });
    assert.throws(() => om.trace(model, { x: [x, ['H', 'W']] }), (e) => e instanceof om.TraceError && e.kind === 'SymbolicShape'
      && /the sizes where the model answers are no range, multiple or one size that om\.Dim declares \(it answers at H=\d*[13579], W=\d*[13579]\)/.test(e.message), 'refused');
    x.dispose();
  });
});

describe('functions of a remainder (a half or a third of a split\'s last piece, the halves of a window\'s padding)', () => {
  // Longformer, BigBird and Swin pad to a multiple of a window, then halve or stride what they
  // computed: none of these is one floor division of T, each is a function of T % w alone, fitted
  // once the runs have seen every residue of w twice
  const forms = {
    half: (w) => (T) => Math.floor(((T - 1) % w + 1) / 2), // half of a split's last piece
    third: (w) => (T) => Math.ceil(((T - 1) % w + 1) / 3), // a third of it, rounded up
    shifted: (w) => (T) => Math.floor(((w - ((T + 2) % w)) % w) / 2) + 1, // half the pad of T + 2, plus one
  };
  test('windows 3, 5, 7 and 12: halves, thirds and a shifted pad\'s half as slice lengths, and a pad split left and right; exact across every multiple and far above', () => withTraced((keep) => {
    for (const w of [3, 5, 7, 12]) {
      const at = acrossWindows(w).concat([{ T: 3 * w + 2 }, { T: 4 * w - 1 }]);
      for (const [name, form] of Object.entries(forms)) {
        const size = form(w);
        const model = (x) => x.slice(1, 0, size(x.shape[1])).tanh();
        const tm = traceAt(keep, model, { x: [om.randn([2, 10, 3], { seed: w }), ['B', 'T', null]] }, at);
        // a third of a piece of at most 3 rows is 1 at every size: a constant, as the graph has it
        const moves = new Set(Array.from({ length: 2 * w }, (_, T) => size(T + 1))).size > 1;
        assert.equal(typeof tm.outputs[0].shape[1], moves ? 'string' : 'number', `${name}, w = ${w}: a size the graph computes`);
        assert.deepEqual(tm.symbols.map((s) => [s.min, s.max, s.narrowedBy]), [[1, Infinity, null], [1, Infinity, null]], `${name}, w = ${w}`);
      }
      // the pad's halves left and right (same-style padding), then windows of w
      const split = (x) => {
        const [B, T, C] = x.shape;
        const pad = (w - (T % w)) % w, left = pad >> 1;
        return F.pad(x, [0, 0, left, pad - left]).reshape(B, -1, w, C).mul(om.arange(0, w).float().view(1, 1, w, 1)).sum(2);
      };
      const tp = traceAt(keep, split, { x: [om.randn([2, 10, 3], { seed: 20 + w }), ['B', 'T', null]] }, at);
      assert.deepEqual(tp.outputs[0].shape, ['B', `floor((T+${w - 1})/${w})`, 3], `split pad, w = ${w}`);
    }
  }));

  test('of a symbol declared a multiple of 2: the remainder of T / 2 by 5, halved, at every even size up to 40 and far above', () => withTraced((keep) => {
    const model = (x) => { const T = x.shape[1]; return x.slice(1, 0, Math.floor(((T / 2 - 1) % 5 + 1) / 2) + 1).exp(); };
    const sizes = Array.from({ length: 20 }, (_, i) => 2 * (i + 1)).concat([998, 1000]).map((T) => ({ T }));
    const tm = traceAt(keep, model, { x: [om.randn([2, 14, 3], { seed: 5 }), ['B', om.Dim('T', { multipleOf: 2 }), null]] }, sizes);
    assert.equal(typeof tm.outputs[0].shape[1], 'string');
  }));
});
