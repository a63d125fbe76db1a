// Issue 29's hostile-size probes (docs/graph-runtime.md#safety): for each op that can ask a plan
// for a buffer of 4 GiB or more at run-time sizes (a product, a convolution, a concatenation, a
// resize, an expand, a tile, a gather, a pad, a Loop doubling a tensor; ConstantOfShape and Range
// folded while planning), a run at such sizes is OutOfMemory naming the node, the same session then
// runs a small input right (against eager), and a new session of the same bytes does too; on one
// thread and with the pool of two, whose workers must still answer afterwards. Nothing is
// allocated for a refused plan, so each probe costs milliseconds.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import * as om from 'onemodel';
import { memoryHooks } from './helpers.mjs';
import { onnxBytes } from '../../tools/onnx_bytes.mjs';

memoryHooks();
after(() => om.setNumThreads(Math.min(4, availableParallelism())));

const F = om.nn.functional;
const i64 = (name, values, dims = [values.length]) => ({ name, dtype: 'int64', dims, values });
/** A float32 feed of shape dims holding 0, 1, 2, ... (wrapped at 7, so sums stay exact). */
const ramp = (dims) => ({ data: Float32Array.from({ length: dims.reduce((a, b) => a * b, 1) }, (_, k) => k % 7), dims });
const asTensor = (f) => om.tensor(Array.from(f.data)).reshape(f.dims);

/**
 * The probes: a graph with one input x, a feed whose plan needs 4 GiB or more (big, its dims: the
 * feed itself is small), a small feed, and what eager gives for it.
 */
const PROBES = [
  { node: 'MatMul_1 (MatMul)', big: [3 << 14, 1], small: [3, 1], eager: (x) => om.matmul(x, x.t()), // 9 GiB
    bytes: onnxBytes({ nodes: [{ op: 'Transpose', inputs: ['x'], outputs: ['xt'] }, { op: 'MatMul', inputs: ['x', 'xt'], outputs: ['y'] }],
                       inputs: [{ name: 'x', dims: ['n', 1] }], outputs: ['y'] }) },
  { node: 'Conv_0 (Conv)', big: [1, 1, 512, 512], small: [1, 1, 2, 3], // 4096 channels of 512 x 512: 4 GiB
    eager: (x) => F.conv2d(x, om.arange(4096).reshape([4096, 1, 1, 1]).float().div(4096)),
    bytes: onnxBytes({ nodes: [{ op: 'Conv', inputs: ['x', 'w'], outputs: ['y'] }], inputs: [{ name: 'x', dims: [1, 1, 'h', 'w'] }], outputs: ['y'],
                       inits: [{ name: 'w', dtype: 'float32', dims: [4096, 1, 1, 1], values: Array.from({ length: 4096 }, (_, k) => k / 4096) }] }) },
  { node: 'Concat_2 (Concat)', big: [20000, 1], small: [2, 1], // three [n, n] values of 1.6 GB (each fits a block), their concatenation 4.8 GB
    eager: (x) => { const e = x.add(x.t()); return om.cat([e, e, e], 0); },
    bytes: onnxBytes({ nodes: [{ op: 'Transpose', inputs: ['x'], outputs: ['xt'] }, { op: 'Add', inputs: ['x', 'xt'], outputs: ['e'] },
                               { op: 'Concat', inputs: ['e', 'e', 'e'], outputs: ['y'], ints: { axis: 0 } }],
                       inputs: [{ name: 'x', dims: ['n', 1] }], outputs: ['y'] }) },
  { node: 'Resize_0 (Resize)', big: [1, 1, 256, 256], small: [1, 1, 1, 2], // scales 300: 76,800 x 76,800, 22 GiB
    eager: (x) => F.interpolate(x, { scaleFactor: [300, 300], mode: 'nearest' }),
    bytes: onnxBytes({ nodes: [{ op: 'Resize', inputs: ['x', '', 's'], outputs: ['y'], strings: { mode: 'nearest' } }],
                       inputs: [{ name: 'x', dims: [1, 1, 'h', 'w'] }], outputs: ['y'], inits: [{ name: 's', dtype: 'float32', dims: [4], values: [1, 1, 300, 300] }] }) },
  { node: "run: output 'y'", big: [1 << 16, 1], small: [2, 1], eager: (x) => x.expand([x.shape[0], 1 << 15]), // 8 GiB
    bytes: onnxBytes({ nodes: [{ op: 'Expand', inputs: ['x', 's'], outputs: ['y'] }], inputs: [{ name: 'x', dims: ['n', 1] }], outputs: ['y'], inits: [i64('s', [1, 1 << 15])] }) },
  { node: 'Tile_0 (Tile)', big: [128, 128], small: [1, 2], eager: (x) => x.repeat([1 << 8, 1 << 8]), // 4 GiB
    bytes: onnxBytes({ nodes: [{ op: 'Tile', inputs: ['x', 'r'], outputs: ['y'] }], inputs: [{ name: 'x', dims: ['n', 'm'] }], outputs: ['y'], inits: [i64('r', [1 << 8, 1 << 8])] }) },
  { node: 'Gather_0 (Gather)', big: [1, 1 << 16], small: [1, 3], // 2^14 rows of 2^16: 4 GiB
    eager: (x) => x.expand([1 << 14, x.shape[1]]),
    bytes: onnxBytes({ nodes: [{ op: 'Gather', inputs: ['x', 'i'], outputs: ['y'], ints: { axis: 0 } }], inputs: [{ name: 'x', dims: [1, 'm'] }], outputs: ['y'],
                       inits: [i64('i', new Array(1 << 14).fill(0))] }) },
  { node: 'Pad_0 (Pad)', big: [1 << 18, 1], small: [2, 1], eager: (x) => F.pad(x, [0, 1 << 12]), // 4097 columns of 2^18 rows: 4 GiB
    bytes: onnxBytes({ nodes: [{ op: 'Pad', inputs: ['x', 'p'], outputs: ['y'] }], inputs: [{ name: 'x', dims: ['n', 1] }], outputs: ['y'], inits: [i64('p', [0, 0, 0, 1 << 12])] }) },
  { node: 'ConstantOfShape_3 (ConstantOfShape)', big: [1 << 12], small: [2], eager: (x) => om.zeros([x.shape[0] * x.shape[0] * 1024]), // folded: 2^34 elements (value left out: 0)
    bytes: onnxBytes({ nodes: [{ op: 'Shape', inputs: ['x'], outputs: ['s'] }, { op: 'Mul', inputs: ['s', 's'], outputs: ['ss'] }, { op: 'Mul', inputs: ['ss', 'k'], outputs: ['n'] },
                               { op: 'ConstantOfShape', inputs: ['n'], outputs: ['y'] }],
                       inputs: [{ name: 'x', dims: ['n'] }], outputs: ['y'], inits: [i64('k', [1024])] }) },
  { node: 'Range_4 (Range)', big: [1 << 11], small: [2], eager: (x) => om.arange(x.shape[0] * x.shape[0] * 1024), // folded: 2^32 int64, 32 GiB
    bytes: onnxBytes({ nodes: [{ op: 'Shape', inputs: ['x'], outputs: ['s'] }, { op: 'Mul', inputs: ['s', 's'], outputs: ['ss'] }, { op: 'Mul', inputs: ['ss', 'k'], outputs: ['m'] },
                               { op: 'Squeeze', inputs: ['m', 'a'], outputs: ['n'] }, { op: 'Range', inputs: ['z', 'n', 'one'], outputs: ['y'] }],
                       inputs: [{ name: 'x', dims: ['n'] }], outputs: ['y'], inits: [i64('k', [1024]), i64('a', [0]), i64('z', [0], []), i64('one', [1], [])] }) },
  { node: 'Loop_2 (Loop)', big: [40], small: [3], // the body doubles v at each of n iterations: 40 x 2^40 at n = 40
    eager: (x) => { let v = x; for (let k = 0; k < x.shape[0]; k++) v = om.cat([v, v], 0); return v; },
    bytes: onnxBytes({ nodes: [{ op: 'Shape', inputs: ['x'], outputs: ['s'] }, { op: 'Squeeze', inputs: ['s', 'a'], outputs: ['m'] },
                               { op: 'Loop', inputs: ['m', '', 'x'], outputs: ['y'], attrs: { body: { graph: {
                                 nodes: [{ op: 'Identity', inputs: ['c'], outputs: ['c_out'] }, { op: 'Concat', inputs: ['v', 'v'], outputs: ['v_out'], ints: { axis: 0 } }],
                                 inputs: [{ name: 'i', dims: [], dtype: 'int64' }, { name: 'c', dims: [], dtype: 'bool' }, { name: 'v', dims: null }],
                                 outputs: [{ name: 'c_out', dtype: 'bool', dims: [] }, { name: 'v_out', dtype: 'float32' }] } } } }],
                       inputs: [{ name: 'x', dims: ['n'] }], outputs: ['y'], inits: [i64('a', [0])] }) },
];

/** fn() throws an OmError: its [kind, message]. */
function omError(fn) {
  try { fn(); } catch (e) { assert.ok(e instanceof om.OmError, String(e)); return [e.kind, e.message]; }
  assert.fail('no error');
}

/** s run on feed agrees with eager's bits. */
function runsRight(s, feed, eager, what) {
  om.tidy(() => {
    const want = eager(asTensor(feed));
    const got = s.run({ x: feed }).y;
    assert.deepEqual(got.shape, want.shape, `${what}: shape`);
    assert.deepEqual(Array.from(got.toArray()), Array.from(want.toArray()), `${what}: values`);
  });
}

for (const threads of [1, 2]) {
  describe(`hostile sizes on ${threads} thread${threads > 1 ? 's' : ''}`, () => {
    for (const p of PROBES) {
      test(`${p.node}: OutOfMemory at ${JSON.stringify(p.big)}, then right on the same session and a new one`, async () => {
        assert.equal(om.setNumThreads(threads), Math.min(threads, availableParallelism()));
        const before = om.memory();
        const s = await om.InferenceSession.create(p.bytes);
        try {
          for (let k = 0; k < 2; k++) { // twice: the refused plan is dropped, not kept half made
            const [kind, message] = omError(() => s.run({ x: { data: new Float32Array(p.big.reduce((a, b) => a * b, 1)), dims: p.big } }));
            assert.equal(kind, 'OutOfMemory', message);
            assert.ok(message.startsWith(`${p.node}: `), message);
            assert.match(message, /out of memory|holds at most|more than/);
            runsRight(s, ramp(p.small), p.eager, 'the same session');
          }
        } finally {
          s.dispose();
        }
        const again = await om.InferenceSession.create(p.bytes);
        try {
          runsRight(again, ramp(p.small), p.eager, 'a new session');
        } finally {
          again.dispose();
        }
        assert.equal(om.memory().tensors, before.tensors, 'no tensor left behind');
      });
    }
    test('the pool still answers: a product split across threads gives the bits of one thread', () => {
      om.tidy(() => {
        const a = om.randn([192, 256], { seed: 1 }), b = om.randn([256, 160], { seed: 2 });
        om.setNumThreads(1);
        const one = om.matmul(a, b).toArray();
        om.setNumThreads(threads);
        assert.deepEqual(new Uint32Array(om.matmul(a, b).toArray().buffer), new Uint32Array(one.buffer));
      });
    });
  });
}
