// The re-example (src/trace/absent.c, runs.c's cheaper_reexample): where the example's run lacks a
// call the model makes only at some sizes (a pad to a multiple of a window, left out where the size
// is one), the model is traced again, with real tensors, at sizes where it makes the call. Those
// sizes cost memory: SAM's encoder traced at 2 x 80 x 40 was traced again at the one far run that
// made every pad, batch 21 at 647 x 329, and ran out of memory. The sizes are now the run's nearest
// the example that still make every call, within eight times the example's elements, and a trace
// there that runs out of memory is a TraceError naming the sizes, never a bare OutOfMemory.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, moduleOf, traceRefusal, withTraced } from './helpers.mjs';

memoryHooks();

const F = om.nn.functional;

/**
 * window_partition's pad (only where the width is not a multiple of 5), then an attention over
 * every position of the batch: [B, 1, H, W] -> the same, with B * H * W' scores per position, so
 * its memory grows as (B * H * W)^2 (72 GB at the far run's 21 x 71 x 89).
 */
const attendAll = (x) => {
  const W = x.shape[3];
  const y = W % 5 ? F.pad(x, [0, 5 - (W % 5)]) : x;
  const f = y.reshape([-1, 1]);
  const s = f.matmul(f.transpose(0, 1)).softmax(-1);
  return s.matmul(f).reshape(y.shape).slice(3, 0, W);
};

describe('the re-example: traced again near the example, within its memory', () => {
  test('a pad made only where W % 5 !== 0, traced at a multiple, memory growing as (B H W)^2: traced (not OutOfMemory), right in both engines', async () => {
    await withTraced((keep) => {
      const ex = om.randn([2, 1, 8, 10], { seed: 5 });
      const tm = om.trace(moduleOf(attendAll), { x: [ex, ['B', null, 'H', 'W']] });
      assert.deepEqual(tm.symbols.map((s) => [s.name, s.min, s.max]), [['B', 1, Infinity], ['H', 1, Infinity], ['W', 1, Infinity]]);
      assert.ok(tm.graph().nodes.some((n) => n.opType === 'Pad'), 'the pad is in the graph');
      keep(tm, { x: ex }, attendAll(ex), 'the example', moduleOf(attendAll));
      for (const [b, h, w] of [[1, 3, 11], [3, 2, 12], [2, 4, 13], [1, 5, 14], [2, 3, 15], [3, 1, 7]]) {
        const x = om.randn([b, 1, h, w], { seed: b * 100 + w });
        keep(tm, { x }, attendAll(x), `${b} x ${h} x ${w}`);
      }
    });
  });

  // Where it pads, the model also makes a product it never reads (dead: the shape-only runs and
  // the element budget do not see it) of (B H W)^2 elements, 430 MB at 2 x 64 x 81: more than the
  // trace at those sizes may take (H declared from 64 and W from 60, a multiple, so that no run
  // below the example pads). Refused loudly, naming the sizes tried; the library stays usable.
  test('a trace at the re-example that runs out of memory: SymbolicShape naming its sizes, not OutOfMemory', () => {
    const model = (x) => {
      const W = x.shape[3];
      if (W % 5 === 0) return x.mul(2);
      const f = x.reshape([-1, 1]);
      f.matmul(f.transpose(0, 1)); // dead: nothing reads it
      return F.pad(x, [0, 5 - (W % 5)]).slice(3, 0, W).mul(2);
    };
    om.tidy(() => {
      const e = traceRefusal(moduleOf(model), { x: [om.randn([2, 1, 64, 80], { seed: 1 }), ['B', null, om.Dim('H', { min: 64 }), om.Dim('W', { min: 60 })]] }, 'SymbolicShape');
      assert.match(e.message, /the model makes at H=64, W=81, B=2; traced again there.*ran out of memory \(matmul: 429981696 bytes would pass the \d+ MB the tracer lets a run at sizes other than the example's use\)/);
      const tm = om.trace(moduleOf((x) => x.mul(3)), { x: [om.ones([2, 3]), ['B', null]] });
      assert.equal(tm.symbols.length, 1, 'the library stays usable');
      tm.dispose();
    });
  });
});
