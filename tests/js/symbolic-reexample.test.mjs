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
 * SAM's window padding in small: the width pooled by 8 (a patch), padded to whole windows of 5
 * only where the pooled width is not one, then an attention over every position of the batch:
 * [B, 1, H, W] -> [B, 1, H, W / 8], with memory as (B H W / 8)^2. Traced at a multiple (W = 40),
 * the near runs and the far ones at 81 and 122 pad nothing; the runs that pad are the far run of
 * every symbol (21 x 71 x 329) and the width's alone (2 x 8 x 2573). The rule before (the smallest
 * largest size) took the first, 18 GB of scores; now 2 x 8 x 48.
 */
const attendAll = (x) => {
  const y = F.avgPool2d(x, [1, 8]);
  const w = y.shape[3];
  const p = w % 5 ? F.pad(y, [0, 5 - (w % 5)]) : y;
  const f = p.reshape([-1, 1]);
  const s = f.matmul(f.transpose(0, 1)).softmax(-1);
  return s.matmul(f).reshape(p.shape).slice(3, 0, w);
};

describe('the re-example: traced again near the example, within its memory', () => {
  test('a pad of a pooled width made only where it is not a multiple of 5, traced at a multiple, memory growing as (B H W)^2: traced near the example, right in both engines', async () => {
    await withTraced((keep) => {
      const ex = om.randn([2, 1, 8, 40], { seed: 5 });
      const tm = om.trace(moduleOf(attendAll), { x: [ex, ['B', null, 'H', 'W']] });
      assert.deepEqual(tm.symbols.map((s) => [s.name, s.min, s.max]), [['B', 1, Infinity], ['H', 1, Infinity], ['W', 8, Infinity]]);
      assert.ok(tm.graph().nodes.some((n) => n.opType === 'Pad'), 'the pad is in the graph');
      keep(tm, { x: ex }, attendAll(ex), 'the example', moduleOf(attendAll));
      // pooled widths 1 to 11: every residue of 5, below and above the example's
      for (const [b, h, w] of [[1, 3, 8], [3, 2, 17], [2, 4, 26], [1, 5, 35], [2, 3, 44], [3, 1, 48], [1, 2, 63], [2, 2, 88]]) {
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
