// The memory grown behind the main thread's back (in the threaded build a pool worker's malloc
// grows it, and Emscripten refreshes this thread's M.HEAP* views only inside its own calls):
// reads and writes of tensors past the old end still work. Grown here by the memory's own grow(),
// as a worker's growth looks to this thread; before the views were read through fresh getters,
// toArray threw "RangeError: Invalid typed array length" (seen once in BigBird's test at batch 5).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { M } from '../../js/runtime.js';

test('a tensor beyond the memory another thread grew is written and read', async () => {
  await om.ready();
  assert.ok(M.wasmMemory, 'Node.js loads the threaded build, whose memory workers grow');
  const before = M.HEAPU8.length;
  M.wasmMemory.grow(256); // 16 MiB more, as a worker's malloc would
  const n = before / 4 + 1024; // more floats than the old memory held: it lands past its end
  const data = Float32Array.from({ length: n }, (_, i) => (i % 1000) - 500);
  const t = om.tensor(data, { shape: [n] });
  try {
    const back = t.toArray();
    assert.equal(back.length, n);
    assert.deepEqual([back[0], back[n - 1], back[123457]], [data[0], data[n - 1], data[123457]]);
    assert.equal(M.HEAPU8.buffer, M.wasmMemory.buffer);
  } finally {
    t.dispose();
  }
});
