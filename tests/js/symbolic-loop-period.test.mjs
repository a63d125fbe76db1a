// Loops whose trip count is a floor division of a symbolic size (docs/symbolic-axes.md, "Loops
// over a size"): pairwise steps (Math.floor(T / 2)), a stride-s decoder (Math.ceil(T / s)) and a
// sliding window written as a loop (Math.floor((T - k) / s) + 1) roll into one ONNX Loop whose
// trip count is that expression computed in the graph (Sub, Div). Each is user code traced with
// two sets of constants and run in onnxruntime-web and the Session against eager runs at 1, 2,
// every residue of the divisor, odd and prime sizes and 10 times the example; so do trip counts
// with a numerator coefficient (Math.floor(2 * T / 3), Math.ceil(3 * T / 4), Math.floor((2 * T +
// 1) / 5): Mul, Sub, Div) and a decoder that breaks at a constant length (Min). A loop reading a
// mask filled in place before it, and a loop over two symbols, do not roll and are refused, saying so.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced, traceRefusal as refusal } from './helpers.mjs';
import { ops, afterLoop, fn, rnnCell, rolled } from './loop-helpers.mjs';

memoryHooks();

/** The lengths a loop of a trip every div sizes is checked at: from lo, every residue of div
 *  (and one past), then the primes 11 and 13 and 10 times the example T. */
const lengthsFor = (div, T, lo = 1) => [...Array.from({ length: div + 1 }, (_, r) => lo + r), 11, 13, 10 * T].filter((n, i, a) => a.indexOf(n) === i);

/** The trip count's nodes: the ops between the Shape that reads the size and the Loop. */
const tripOps = (tm) => {
  const o = ops(tm), at = o.indexOf('Loop');
  return o.slice(o.lastIndexOf('Shape', at) + 1, at);
};

describe('a loop of a floor division of the size: the trip count computed in the graph', () => {
  test('pairwise steps, Math.floor(T / 2) of an RNN reading rows 2t and 2t + 1: Div by 2', () => withTraced((keep) => {
    for (const [H, T] of [[4, 6], [3, 9]]) {
      const cell = rnnCell(H, H + T);
      const model = fn((x) => {
        let h = om.zeros([x.shape[0], H]);
        for (let t = 0; t < Math.floor(x.shape[1] / 2); t++) h = cell(x.select(1, 2 * t).add(x.select(1, 2 * t + 1)), h);
        return h;
      });
      const tm = rolled(keep, model, { T, lengths: lengthsFor(2, T) });
      assert.deepEqual(tripOps(tm), ['Div', 'Squeeze'], String(ops(tm)));
    }
  }));

  test('a stride-s decoder, Math.ceil(T / s) steps collected: (T + s - 1) / s for s = 3 and 4', () => withTraced((keep) => {
    for (const [s, T, H] of [[3, 8, 4], [4, 7, 3]]) {
      const cell = rnnCell(H, s);
      const model = fn((x) => {
        let h = om.zeros([x.shape[0], H]);
        const outs = [];
        for (let t = 0; t < Math.ceil(x.shape[1] / s); t++) outs.push(h = cell(x.select(1, s * t), h));
        return [om.stack(outs, 1), h];
      });
      const tm = rolled(keep, model, { T, lengths: lengthsFor(s, T) });
      assert.deepEqual(tripOps(tm), ['Sub', 'Div', 'Squeeze'], String(ops(tm))); // T - (1 - s), then / s
      assert.ok(!afterLoop(tm).includes('Concat'), String(ops(tm))); // the steps are the Loop's scan output
    }
  }));

  test('a sliding window of k by s written as a loop, Math.floor((T - k) / s) + 1 frames: from T = k', () => withTraced((keep) => {
    for (const [k, s, T] of [[3, 2, 8], [5, 3, 9]]) {
      const model = fn((x) => {
        const frames = [];
        for (let t = 0; t < Math.floor((x.shape[1] - k) / s) + 1; t++) frames.push(x.slice(1, t * s, t * s + k).mean(1));
        return om.stack(frames, 1);
      });
      // eager fails below k (no frame to stack): the range starts at k, with that reason
      assert.throws(() => model.forward(om.randn([2, k - 1, 3])), (e) => e instanceof om.OmError);
      const tm = rolled(keep, model, { T, lengths: lengthsFor(s, T, k) });
      const sym = tm.symbols.find((q) => q.name === 'T');
      assert.equal(sym.min, k);
      assert.match(sym.narrowedBy, new RegExp(`^stack: .*\\(at T=${k - 1}\\)$`));
      assert.deepEqual(tripOps(tm), ['Sub', 'Div', 'Squeeze'], String(ops(tm)));
    }
  }));
});

describe('a trip count with a numerator coefficient: floor((p * T + b) / d) computed in the graph', () => {
  /** An RNN of trips(T) steps over rows 0 .. trips - 1 of x (trips <= T), its last state, or its steps stacked and the state. */
  const stepsOf = (H, seed, trips, collect) => {
    const cell = rnnCell(H, seed);
    return fn((x) => {
      let h = om.zeros([x.shape[0], H]);
      const outs = [];
      for (let t = 0; t < trips(x.shape[1]); t++) outs.push(h = cell(x.select(1, t), h));
      return collect ? [om.stack(outs, 1), h] : h;
    });
  };

  test('Math.floor(2 * T / 3) and Math.floor(3 * T / 5): two steps of every three sizes, three of every five (Mul, Div)', () => withTraced((keep) => {
    for (const [p, d, T] of [[2, 3, 7], [3, 5, 8]]) {
      const tm = rolled(keep, stepsOf(4, p + d, (n) => Math.floor((p * n) / d)), { T, lengths: lengthsFor(d, T) });
      assert.deepEqual(tripOps(tm), ['Mul', 'Div', 'Squeeze'], String(ops(tm))); // p * T / d, c = 0
    }
  }));

  test('Math.ceil(3 * T / 4) and Math.ceil(2 * T / 5), steps collected: (p * T + d - 1) / d', () => withTraced((keep) => {
    for (const [p, d, T] of [[3, 4, 6], [2, 5, 9]]) {
      const tm = rolled(keep, stepsOf(3, p * d, (n) => Math.ceil((p * n) / d), true), { T, lengths: lengthsFor(d, T) });
      assert.deepEqual(tripOps(tm), ['Mul', 'Sub', 'Div', 'Squeeze'], String(ops(tm))); // p * T - (1 - d), then / d
      assert.ok(!afterLoop(tm).includes('Concat'), String(ops(tm)));
    }
  }));

  test('Math.floor((2 * T + 1) / 5) and Math.floor((3 * T + 2) / 7): a constant in the numerator', () => withTraced((keep) => {
    for (const [p, b, d, T] of [[2, 1, 5, 7], [3, 2, 7, 9]]) {
      const tm = rolled(keep, stepsOf(4, b + d, (n) => Math.floor((p * n + b) / d)), { T, lengths: lengthsFor(d, T) });
      assert.deepEqual(tripOps(tm), ['Mul', 'Sub', 'Div', 'Squeeze'], String(ops(tm)));
    }
  }));
});

describe('a decoder that stops at a constant length: min(T, maxLen) trips', () => {
  test('if (t >= maxLen) break, its steps stacked: maxLen near the example and far above every size checked before', () => withTraced((keep) => {
    for (const [maxLen, T, H] of [[11, 7, 4], [1024, 6, 3]]) {
      const cell = rnnCell(H, maxLen);
      const model = fn((x) => {
        let h = om.zeros([x.shape[0], H]);
        const outs = [];
        for (let t = 0; t < x.shape[1]; t++) {
          if (t >= maxLen) break;
          outs.push(h = cell(x.select(1, t), h));
        }
        return [om.stack(outs, 1), h];
      });
      const tm = rolled(keep, model, { T, lengths: [1, 2, 7, maxLen, maxLen + 1, 10 * T] });
      assert.deepEqual(tripOps(tm), ['Min', 'Squeeze'], String(ops(tm))); // min(T, maxLen) trips
      assert.deepEqual(tm.symbols.find((q) => q.name === 'T').max, Infinity);
    }
  }));
});

describe('a loop over two symbols is refused, naming the call', () => {
  const ex = () => om.randn([2, 5, 4, 3], { seed: 5 });
  const AXES = [null, 'H', 'W', null];

  test('for i < H, for j < W, reading x.select(1, i).select(1, j): at the select whose index moves with both', () => {
    for (const c of [0.5, -0.25]) {
      const model = fn((x) => {
        let a = x.select(1, 0).select(1, 0).mul(0);
        for (let i = 0; i < x.shape[1]; i++) for (let j = 0; j < x.shape[2]; j++) a = a.mul(c).add(x.select(1, i).select(1, j));
        return a;
      });
      const x = ex();
      const e = refusal(model, { x: [x, AXES] }, 'SymbolicShape');
      assert.match(e.message, /^select: argument 1 is \d+ at the traced sizes, .*: it changes with the sizes, but not as a size the graph can compute/);
      x.dispose();
    }
  });

  test('for t < H * W over the flattened grid: a threshold moving with both symbols', () => {
    for (const c of [0.5, -0.25]) {
      const model = fn((x) => {
        const f = x.reshape([x.shape[0], x.shape[1] * x.shape[2], 3]);
        let a = f.select(1, 0).mul(0);
        for (let t = 0; t < x.shape[1] * x.shape[2]; t++) a = a.mul(c).add(f.select(1, t));
        return a;
      });
      const x = ex();
      const e = refusal(model, { x: [x, AXES] }, 'SymbolicShape');
      assert.match(e.message, /the model changes at a size threshold: at H=\d+, W=\d+ it makes \d+ calls its outputs need, where the trace makes \d+/);
      x.dispose();
    }
  });
});

describe('a loop that reads a mask filled in place before it is refused, saying so', () => {
  test('a mask of om.zeros at the size, sliced and filled, read a step at a time', () => {
    // a causal mask [T, T] filled row by row, read per step by select or by a one-row slice (a step-by-step decoder's)
    const causal = (m) => { for (let i = 0; i < m.shape[0]; i++) m.select(0, i).slice(0, i + 1).fill_(1); };
    for (const [shape, fill, row] of [
      [(T) => [T], (m) => m.slice(0, -2).fill_(1), (m, t) => m.select(0, t)],
      [(T) => [T, 3], (m) => m.slice(0, 1, -1).fill_(2), (m, t) => m.select(0, t)],
      [(T) => [T, T], causal, (m, t) => m.select(0, t).mean().mul(om.ones([3]))],
      [(T) => [T, T], causal, (m, t) => m.slice(0, t, t + 1).mean(1).mul(om.ones([3]))],
    ]) {
      const model = fn((x) => {
        const m = om.zeros(shape(x.shape[1]));
        fill(m);
        let acc = x.select(1, 0).mul(0);
        for (let t = 0; t < x.shape[1]; t++) acc = acc.mul(0.5).add(x.select(1, t).mul(row(m, t)));
        return acc;
      });
      const ex = om.randn([2, 6, 3], { seed: 6 });
      const e = refusal(model, { x: [ex, [null, 'T', null]] }, 'SymbolicShape');
      assert.match(e.message, /a loop over the size, unrolled, which no graph without ONNX Loop holds at every size; declare om\.Dim\('T', \{ min: 6, max: 6 \}\) for the graph at the traced size; its steps read other constants at mul \(made from the size before the loop, as a mask of om\.zeros filled in place: held at one size only\)/);
      ex.dispose();
    }
  });
});
