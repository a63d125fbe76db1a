// om.InferenceSession (docs/graph-runtime.md): made from ONNX bytes and from traced models, run
// with Tensors and with onnxruntime-web-shaped feeds, plans per input shape, and every error of
// the JS and C paths with its kind and message. That every traced model of the suite runs in it
// is the trace oracle's part (examples/lib/oracle.mjs checkTraced runs each in both engines).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import * as ort from 'onnxruntime-web';
import { memoryHooks, near } from './helpers.mjs';
import { onnxBytes, reluChain } from '../../tools/onnx_bytes.mjs';

memoryHooks();

/** A traced MLP with a symbolic batch, its module and an example input; the caller disposes them. */
function tracedMlp() {
  om.manualSeed(3);
  const net = new om.nn.Sequential(new om.nn.Linear(4, 8), new om.nn.ReLU(), new om.nn.Linear(8, 3)).eval();
  const x = om.randn([5, 4], { seed: 1 });
  const traced = om.trace(net, { x: [x, ['batch', null]] }, { outputNames: ['y'] });
  return { net, x, traced };
}

const bits = (t) => Array.from(new Uint32Array(t.toArray().buffer));

/** onnx bytes with one op type renamed (same length, so the protobuf stays well-formed). */
function renameOp(bytes, from, to) {
  const out = bytes.slice();
  const enc = new TextEncoder();
  const a = enc.encode(from), b = enc.encode(to);
  for (let i = 0; i + a.length <= out.length; i++) {
    if (a.every((v, k) => out[i + k] === v) && out[i - 1] === a.length) { out.set(b, i); return out; }
  }
  throw new Error(`no ${from} in the bytes`);
}

describe('InferenceSession', () => {
  test('from a traced model and from its bytes: the same bits as eager at every batch, plans kept per shape', async () => {
    const { net, x, traced } = tracedMlp();
    const a = traced.session();
    const b = await om.InferenceSession.create(traced.toOnnx());
    try {
      assert.deepEqual(a.inputNames, ['x']);
      assert.deepEqual(a.outputNames, ['y']);
      assert.deepEqual(b.inputs, [{ name: 'x', dtype: 'float32', type: 'float32', shape: ['batch', 4] }]);
      assert.equal(a.planBytes, 0);
      for (const batch of [5, 1, 9, 5]) {
        om.tidy(() => {
          const xs = batch === 5 ? x : om.randn([batch, 4], { seed: batch });
          const eager = om.noGrad(() => net.forward(xs));
          const ya = a.run({ x: xs }).y, yb = b.run({ x: xs }).y;
          assert.deepEqual(ya.shape, [batch, 3]);
          assert.deepEqual(bits(ya), bits(eager), `batch ${batch}: the traced session`);
          assert.deepEqual(bits(yb), bits(eager), `batch ${batch}: the session from bytes`);
        });
      }
      assert.ok(a.planBytes > 0 && a.planBytes % 64 === 0, `planBytes ${a.planBytes}`);
    } finally {
      a.dispose();
      b.dispose();
      traced.dispose();
      net.dispose();
      x.dispose();
    }
  });

  test('feeds shaped like onnxruntime-web\'s (its Tensor, { data, dims }), await run() as with it, release()', async () => {
    const { net, x, traced } = tracedMlp();
    const s = await om.InferenceSession.create(traced.toOnnx(), { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
    try {
      const want = om.tidy(() => Array.from(om.noGrad(() => net.forward(x)).toArray()));
      const feeds = [new ort.Tensor('float32', x.toArray(), x.shape), { data: x.toArray(), dims: x.shape }, { data: x.toArray(), dims: x.shape, type: 'float32' }];
      for (const feed of feeds) {
        const out = await s.run({ x: feed });
        assert.deepEqual(Array.from(out.y.toArray()), want);
        out.y.dispose();
      }
    } finally {
      await s.release();
      assert.equal(s.isDisposed, true);
      traced.dispose();
      net.dispose();
      x.dispose();
    }
  });

  test('a session outlives its traced model, and keeps the weights the trace saw', () => {
    const { net, x, traced } = tracedMlp();
    const s = traced.session();
    traced.dispose();
    try {
      const before = om.tidy(() => Array.from(s.run({ x }).y.toArray()));
      om.noGrad(() => net.parameters()[0].fill_(0.5)); // trained on after the trace
      const after = om.tidy(() => Array.from(s.run({ x }).y.toArray()));
      assert.deepEqual(after, before);
    } finally {
      s.dispose();
      net.dispose();
      x.dispose();
    }
  });

  test('int64 and bool inputs and outputs, shape arithmetic folded into the plan', () => {
    const model = (tokens, mask) => {
      const [B, T] = tokens.shape;
      const pos = om.arange(T, { dtype: 'int64' }).expand(B, T);
      return { ids: tokens.add(pos), keep: mask.eq(false) };
    };
    const tokens = om.tensor([[1n, 2n, 3n], [4n, 5n, 6n]]), mask = om.tensor([[true, false, true], [false, false, true]]);
    const traced = om.trace(model, { tokens: [tokens, ['b', 't']], mask: [mask, ['b', 't']] });
    const s = traced.session();
    try {
      om.tidy(() => {
        const t2 = om.tensor([[7n, 8n, 9n, 10n]]), m2 = om.tensor([[true, true, false, false]]);
        const out = s.run({ tokens: t2, mask: m2 });
        assert.deepEqual(Array.from(out.ids.toArray()), [7n, 9n, 11n, 13n]);
        assert.deepEqual(Array.from(out.keep.toArray()), [0, 0, 1, 1]);
        assert.equal(out.keep.dtype, 'bool');
      });
    } finally {
      s.dispose();
      traced.dispose();
      om.dispose([tokens, mask]);
    }
  });

  test('errors: every bad source, option, feed and use has its kind and message', async () => {
    const { net, x, traced } = tracedMlp();
    const bytes = traced.toOnnx();
    const s = traced.session();
    const reject = (p, kind, re) => assert.rejects(p, (e) => e instanceof om.OmError && e.kind === kind && re.test(e.message));
    const throws = (f, kind, re) => assert.throws(f, (e) => e instanceof om.OmError && e.kind === kind && re.test(e.message));
    try {
      await reject(om.InferenceSession.create(new Uint8Array([1, 2, 3])), 'Format', /^onnx: the 3 bytes are not a ModelProto/);
      await reject(om.InferenceSession.create(bytes.subarray(0, bytes.length >> 1)), 'Format', /not a ModelProto \(truncated/);
      await reject(om.InferenceSession.create(renameOp(bytes, 'Relu', 'Xelu')), 'Unsupported', /node 'Relu_\d+' is Xelu, which the graph layer has no kernel for/);
      await reject(om.InferenceSession.create('model.onnx'), 'InvalidArgument', /the model must be bytes \(ONNX or traced.save\(\)'s, as a Uint8Array or ArrayBuffer\) or a TracedModel, got a string/);
      await reject(om.InferenceSession.create(bytes, { mode: 'turbo' }), 'InvalidArgument', /mode must be 'fast' or 'exact', got a string \("turbo"\)/);
      await reject(om.InferenceSession.create(bytes, { threads: 2 }), 'InvalidArgument', /threads/);
      throws(() => s.run({}), 'InvalidArgument', /^run: feed "x" is missing \(inputs: x\)/);
      throws(() => s.run({ x, z: x }), 'InvalidArgument', /^run: no graph input is named "z" \(inputs: x\)/);
      throws(() => s.run(null), 'InvalidArgument', /^run: feeds must be an object/);
      throws(() => s.run({ x: 5 }), 'InvalidArgument', /feed "x" must be an om.Tensor or \{ data: TypedArray, dims \}/);
      throws(() => s.run({ x: [1, 2, 3] }), 'InvalidArgument', /feed "x\[0\]" must be an om.Tensor or \{ data: TypedArray, dims \}/); /* an array is a sequence's feeds */
      throws(() => s.run({ x: [x] }), 'InvalidArgument', /^run: input 'x' is a tensor, given a sequence/);
      throws(() => s.run({ x: { data: new Float64Array(4), dims: [1, 4] } }), 'DtypeMismatch', /feed "x" is float64, the graph takes float32/);
      throws(() => s.run({ x: { data: new Uint8Array(4), dims: [1, 4] } }), 'InvalidArgument', /feed "x" has type undefined/);
      throws(() => s.run({ x: { data: new Float32Array(4), dims: [1, 4], type: 'int64' } }), 'InvalidArgument', /feed "x" is int64 but its data is a Float32Array/);
      throws(() => s.run({ x: { data: new Float32Array(4), dims: [2, 4] } }), 'InvalidArgument', /tensor: data has 4 elements but shape \[2, 4\] needs 8/);
      om.tidy(() => {
        throws(() => s.run({ x: om.zeros([2, 5]) }), 'ShapeMismatch', /^run: input 'x' has size 5 at dim 1, the graph takes 4 \(shape \[2,5\]\)/);
        throws(() => s.run({ x: om.zeros([4]) }), 'ShapeMismatch', /input 'x' has shape \[4\]; the graph takes 2 dims/);
        throws(() => s.run({ x: om.zeros([2, 4], { dtype: 'int64' }) }), 'DtypeMismatch', /input 'x' is int64, the graph takes float32/);
      });
      const gone = traced.session();
      gone.dispose();
      gone.dispose();
      throws(() => gone.run({ x }), 'Disposed', /^run: the session was disposed/);
      throws(() => gone.inputNames, 'Disposed', /inputNames/);
      throws(() => new om.InferenceSession(), 'InvalidArgument', /made by InferenceSession.create\(\) or traced.session\(\)/);
    } finally {
      s.dispose();
      traced.dispose();
      net.dispose();
      x.dispose();
    }
  });
});

describe('what a session must not do (the probes of docs/graph-runtime.md#safety)', () => {
  const kindOf = (f) => { try { f(); } catch (e) { assert.ok(e instanceof om.OmError, String(e)); return [e.kind, e.message]; } return null; };

  test('a plan too large for the heap is OutOfMemory, and the session and new ones run afterwards', async () => {
    // y [n, n] = x [n, 1] x^T: at n = 2^22, 16 MiB in and 64 TiB out; at n = 2^15, 4 GiB out, which
    // wasm32's size_t wrapped to 0 bytes (the instance then trapped: memory access out of bounds)
    const bytes = onnxBytes({ nodes: [{ op: 'Transpose', inputs: ['x'], outputs: ['xt'] }, { op: 'MatMul', inputs: ['x', 'xt'], outputs: ['y'] }],
                              inputs: [{ name: 'x', dims: ['n', 1] }], outputs: ['y'] });
    const s = await om.InferenceSession.create(bytes);
    try {
      for (const n of [1 << 22, 1 << 15]) {
        const big = om.ones([n, 1]);
        const got = kindOf(() => s.run({ x: big }));
        big.dispose();
        assert.equal(got?.[0], 'OutOfMemory', `n = ${n}: ${got}`);
        assert.equal(got[1], `MatMul_1 (MatMul): out of memory allocating ${4 * n * n} bytes (one block is limited to 2 GiB in WASM)`);
        const { y } = s.run({ x: { data: new Float32Array([1, 2]), dims: [2, 1] } });
        assert.deepEqual(Array.from(y.toArray()), [1, 2, 2, 4]);
        y.dispose();
      }
      const again = await om.InferenceSession.create(bytes);
      const { y } = again.run({ x: { data: new Float32Array([3]), dims: [1, 1] } });
      assert.deepEqual(Array.from(y.toArray()), [9]);
      y.dispose();
      again.dispose();
    } finally {
      s.dispose();
    }
  });

  test('a chain of 100,000 nodes plans (in linear time: npm run bench:plan) with two buffers alive at once', async () => {
    const s = await om.InferenceSession.create(reluChain(100000));
    const x = om.tensor([[-1, 2], [3, -4]]);
    try {
      const { y } = s.run({ x });
      assert.deepEqual(Array.from(y.toArray()), [0, 2, 3, 0]);
      y.dispose();
      assert.equal(s.planKernels.length, 100000);
      assert.equal(s.planBytes, 128);
    } finally {
      x.dispose();
      s.dispose();
    }
  });

  test('30,000 branches alive at once plan (in O(n log n): each is alive until its Concat, npm run bench:plan fanin)', async () => {
    // the placement that checks each buffer against those alive with it would meet 30,000^2 / 2
    // pairs here (and 5 * 10^9 at 100,000 branches, more than the heap)
    const n = 30000, per = 3750; // eight Concats of 3,750 branches each (the table takes 4,096 inputs), then one of the eight
    const parts = Array.from({ length: n / per }, (_, c) => ({ op: 'Concat', inputs: Array.from({ length: per }, (_, k) => `b${c * per + k}`), outputs: [`c${c}`], ints: { axis: 0 } }));
    const nodes = [...Array.from({ length: n }, (_, k) => ({ op: k % 2 ? 'Relu' : 'Neg', inputs: ['x'], outputs: [`b${k}`] })), ...parts,
                   { op: 'Concat', inputs: parts.map((p) => p.outputs[0]), outputs: ['y'], ints: { axis: 0 } }];
    const s = await om.InferenceSession.create(onnxBytes({ nodes, inputs: [{ name: 'x', dims: ['n', 2] }], outputs: ['y'] }));
    try {
      om.tidy(() => {
        const x = om.tensor([[-1, 2]]);
        const y = s.run({ x }).y;
        const want = om.cat(Array.from({ length: n }, (_, k) => (k % 2 ? x.relu() : x.neg())), 0);
        assert.deepEqual(y.shape, [n, 2]);
        assert.deepEqual(Array.from(y.toArray()), Array.from(want.toArray()));
      });
      assert.equal(s.planKernels.length, n + parts.length + 1);
      // x, a 64-byte block per branch (all alive at once), then the parts and the output: at most
      // what they all take, at least what the branches take
      const part = Math.ceil((8 * per) / 64) * 64;
      assert.ok(s.planBytes >= 64 * n && s.planBytes <= 64 + 64 * n + parts.length * part + 8 * n, `planBytes ${s.planBytes}`);
    } finally {
      s.dispose();
    }
  });

  test('a variadic node of more than 4096 inputs is Unsupported naming it (ONNX sets no bound), of more than 2^20 at reading', async () => {
    for (const [count, message] of [
      [5000, "session: node 'wide' (Concat) has 5000 inputs; the graph layer takes at most 4096"],
      [(1 << 20) + 1, "onnx: node 'wide' has 1048577 inputs, 1 outputs and 1 attributes; the reader takes at most 1048576, 64 and 256"],
    ]) {
      const bytes = onnxBytes({ nodes: [{ op: 'Concat', inputs: new Array(count).fill('x'), outputs: ['y'], name: 'wide', ints: { axis: 0 } }],
                                inputs: [{ name: 'x', dims: ['n', 2] }], outputs: ['y'] });
      await assert.rejects(om.InferenceSession.create(bytes), (e) => e instanceof om.OmError && e.kind === 'Unsupported' && e.message === message);
    }
  });

  test('an output listed twice is one output (no tensor left behind: memoryHooks)', async () => {
    const s = await om.InferenceSession.create(onnxBytes({ nodes: [{ op: 'Relu', inputs: ['x'], outputs: ['y'] }],
                                                          inputs: [{ name: 'x', dims: ['n', 2] }], outputs: ['y', 'y'] }));
    try {
      assert.deepEqual(s.outputNames, ['y']);
      for (let k = 0; k < 3; k++) {
        const out = s.run({ x: { data: new Float32Array([-1, 2]), dims: [1, 2] } });
        assert.deepEqual(Object.keys(out), ['y']);
        assert.deepEqual(Array.from(out.y.toArray()), [0, 2]);
        out.y.dispose();
      }
    } finally {
      s.dispose();
    }
  });

  test('inputs ONNX gives one type but the file two are Format naming the node (the library would promote them)', async () => {
    // ONNX's checker and onnxruntime refuse each; types held in one dtype (INT32 and INT64, both
    // int64) are not compared (docs/graph-runtime.md#safety)
    const cases = [
      [{ op: 'Add', inputs: ['x', 'i'], outputs: ['y'], name: 'plus' }, 'plus (Add): input 0 is FLOAT and input 1 is INT64; Add takes one type for both'],
      [{ op: 'Mul', inputs: ['c', 'j'], outputs: ['y'], name: 'times' }, 'times (Mul): input 0 is BOOL and input 1 is INT64; Mul takes one type for both'],
      [{ op: 'Where', inputs: ['c', 'x', 'i'], outputs: ['y'], name: 'pick' }, 'pick (Where): input 1 is FLOAT and input 2 is INT64; Where takes one type for both'],
      [{ op: 'Concat', inputs: ['x', 'x', 'i'], outputs: ['y'], name: 'cat', ints: { axis: 0 } }, 'cat (Concat): input 0 is FLOAT and input 2 is INT64; Concat takes one type for both'],
    ];
    const feeds = { x: { data: new Float32Array([1, 2]), dims: [2] }, i: { data: BigInt64Array.of(3n, 4n), dims: [2], type: 'int64' },
                    j: { data: BigInt64Array.of(5n, 6n), dims: [2], type: 'int64' }, c: { data: Uint8Array.of(1, 0), dims: [2], type: 'bool' } };
    for (const [node, message] of cases) {
      const used = [...new Set(node.inputs)];
      const dtype = { x: 'float32', i: 'int64', j: 'int64', c: 'bool' };
      const bytes = onnxBytes({ nodes: [node], inputs: used.map((n) => ({ name: n, dims: [2], dtype: dtype[n] })), outputs: [{ name: 'y', dtype: 'float32' }] });
      await assert.rejects(ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] }), undefined, `${node.op}: onnxruntime refuses it too`);
      // every size fixed: refused when the session is made, as the plan made there binds the node
      await assert.rejects(om.InferenceSession.create(bytes), (e) => e instanceof om.OmError && e.kind === 'Format' &&
                           e.message === `session: the graph is invalid at the input shapes it declares (Format): ${message}`);
      // a symbolic size: made, and refused by the first run
      const s = await om.InferenceSession.create(onnxBytes({ nodes: [node], inputs: used.map((n) => ({ name: n, dims: ['n'], dtype: dtype[n] })), outputs: ['y'] }));
      const f = Object.fromEntries(used.map((n) => [n, feeds[n]]));
      assert.deepEqual(kindOf(() => s.run(f)), ['Format', message]);
      s.dispose();
    }
  });

  test('an integer Div by zero is InvalidArgument; Dropout in training mode is Unsupported', async () => {
    const div = await om.InferenceSession.create(onnxBytes({ nodes: [{ op: 'Shape', inputs: ['x'], outputs: ['s'] }, { op: 'Div', inputs: ['s', 'z'], outputs: ['y'] }],
                                                            inputs: [{ name: 'x', dims: ['n', 2] }], outputs: ['y'],
                                                            inits: [{ name: 'z', dtype: 'int64', dims: [2], values: [1, 0] }] }));
    const feed = { x: { data: new Float32Array(6), dims: [3, 2] } };
    assert.deepEqual(kindOf(() => div.run(feed)), ['InvalidArgument', 'Div_1 (Div): integer division by zero (element 1 of the divisor)']);
    div.dispose();
    for (const training of [false, true]) {
      const drop = await om.InferenceSession.create(onnxBytes({ nodes: [{ op: 'Dropout', inputs: ['x', '', 't'], outputs: ['y'], name: 'drop' }],
                                                               inputs: [{ name: 'x', dims: ['n', 2] }], outputs: ['y'],
                                                               inits: [{ name: 't', dtype: 'bool', dims: [], values: [training] }] }));
      if (training) {
        assert.deepEqual(kindOf(() => drop.run(feed)), ['Unsupported', 'drop (Dropout): training_mode true with a ratio other than 0 (a random mask) is not supported']);
      } else {
        const { y } = drop.run({ x: { data: new Float32Array([1, 2]), dims: [1, 2] } });
        assert.deepEqual(Array.from(y.toArray()), [1, 2]);
        y.dispose();
      }
      drop.dispose();
    }
  });
});

describe('exact mode', () => {
  test('the same bits as natively: the hash tests/c/test_session.c pins for the same model (native and WASM)', async () => {
    const w = om.randn([8, 8], { seed: 2 }), b = om.randn([8], { seed: 3 }), x = om.randn([3, 8], { seed: 1 });
    const F = om.nn.functional;
    const model = (v) => om.tidy(() => {
      const h = F.linear(v, w, b), g = F.gelu(h);
      const l = F.layerNorm(g.tanh().add(h.sigmoid()), [8], { eps: 1e-5 });
      return l.softmax(1).exp().add(v.erf()).log();
    });
    const traced = om.trace(model, { x: [x, ['n', null]] }, { outputNames: ['y'] });
    const exact = await om.InferenceSession.create(traced.save(), { mode: 'exact' });
    const fast = traced.session();
    try {
      const [ye, yf] = [exact, fast].map((s) => om.tidy(() => s.run({ x }).y.toArray()));
      // fast mode's GELU takes erf from the float rational: within 1e-5 scaled (below)
      near(yf, ye, 1e-5 * Math.max(...ye.map(Math.abs)), 'fast against exact');
      let h = 0xcbf29ce484222325n;
      for (const v of new Uint8Array(ye.buffer)) h = ((h ^ BigInt(v)) * 0x100000001b3n) & 0xffffffffffffffffn;
      assert.equal(h.toString(16), '75224da0258d98b0');
    } finally {
      exact.dispose();
      fast.dispose();
      traced.dispose();
      om.dispose([w, b, x]);
    }
  });
});

describe('fast mode', () => {
  test('GELU takes erf from the float rational: other last bits than exact mode and eager, within 1e-5 scaled', async () => {
    const x = om.tidy(() => om.randn([64, 64], { seed: 4 }).mul(3));
    const F = om.nn.functional;
    const run = (s) => om.tidy(() => s.run({ x }).y.toArray());
    const [erfForm, tanhForm] = ['none', 'tanh'].map((approximate) => om.trace((v) => F.gelu(v, { approximate }), { x: [x, ['n', null]] }, { outputNames: ['y'] }));
    const sessions = [];
    try {
      for (const t of [erfForm, tanhForm]) sessions.push(t.session(), await om.InferenceSession.create(t.save(), { mode: 'exact' }));
      const [yf, ye, tf, te] = sessions.map(run);
      const eager = om.tidy(() => F.gelu(x).toArray());
      assert.deepEqual(new Uint32Array(ye.buffer), new Uint32Array(eager.buffer), 'exact mode is eager');
      const differ = yf.filter((v, i) => v !== ye[i]).length;
      assert.ok(differ > 100, `${differ} of 4096 values differ`);
      near(yf, ye, 1e-5 * Math.max(...ye.map(Math.abs)), 'fast against exact');
      assert.deepEqual(new Uint32Array(tf.buffer), new Uint32Array(te.buffer), 'the tanh form: the same kernel in both modes');
    } finally {
      for (const s of sessions) s.dispose();
      erfForm.dispose();
      tanhForm.dispose();
      x.dispose();
    }
  });
});

describe('fast mode: the attention pass', () => {
  test('the zoo GPT: each block\'s attention is one kernel, within 1e-5 of exact mode (eager\'s bits) at every length', async () => {
    const zoo = await import('../../examples/zoo/gpt.mjs');
    zoo.default.model.dispose(); // the zoo entry's own instance and example: this test makes its own
    zoo.default.inputs.ids[0].dispose();
    const { GPT } = zoo;
    om.manualSeed(5);
    const net = new GPT({ vocab: 40, d: 32, heads: 4, maxLen: 80 }).eval();
    const ids = om.tidy(() => om.rand([2, 10], { seed: 1 }).mul(40).long());
    const traced = om.trace(net, { ids: [ids, ['batch', 'seq']] }, { outputNames: ['logits'] });
    const fast = traced.session();
    const exact = await om.InferenceSession.create(traced.toOnnx(), { mode: 'exact' });
    const count = (s, op) => s.planKernels.filter((k) => k === op).length;
    try {
      assert.deepEqual(fast.planKernels, []);
      for (const [batch, seq] of [[2, 10], [3, 70]]) { // 70 query rows: two score blocks
        om.tidy(() => {
          const x = om.rand([batch, seq], { seed: seq }).mul(40).long();
          const eager = om.noGrad(() => net.forward(x));
          const yf = fast.run({ ids: x }).logits, ye = exact.run({ ids: x }).logits;
          // the attention op is the five nodes' arithmetic (tests/c/test_session.c checks its
          // bits); GELU's fast erf changes last bits
          near(yf.toArray(), ye.toArray(), 1e-5 * Math.max(...Array.from(ye.toArray(), Math.abs)), `[${batch}, ${seq}]: fast and exact`);
          assert.deepEqual(bits(ye), bits(eager), `[${batch}, ${seq}]: exact and eager`);
        });
        assert.equal(count(fast, 'attention'), 2, fast.planKernels.join(' '));
        assert.equal(count(fast, 'softmax'), 0);
        assert.equal(count(exact, 'attention'), 0);
        assert.equal(count(exact, 'softmax'), 2);
      }
      assert.ok(fast.planBytes < exact.planBytes, `plan bytes: fast ${fast.planBytes}, exact ${exact.planBytes}`);
      fast.dispose();
      assert.throws(() => fast.planKernels, (e) => e instanceof om.OmError && e.kind === 'Disposed' && /planKernels: the session was disposed/.test(e.message));
    } finally {
      fast.dispose();
      exact.dispose();
      traced.dispose();
      net.dispose();
      ids.dispose();
    }
  });
});

describe('the library format (traced.save())', () => {
  test('round trip: bytes that depend only on the graph, a session bit-identical to the in-memory one', async () => {
    const { net, x, traced } = tracedMlp();
    const again = tracedMlp();
    try {
      const bytes = traced.save();
      assert.equal(new TextDecoder().decode(bytes.subarray(0, 8)), 'ONEMODEL');
      assert.equal(bytes.length % 64, 0);
      assert.deepEqual(again.traced.save(), bytes, 'the same graph gives the same bytes');
      let h = 0xcbf29ce484222325n; // FNV-1a, pinned: a change of the format or of the tracer's graph shows here
      for (const v of bytes) h = ((h ^ BigInt(v)) * 0x100000001b3n) & 0xffffffffffffffffn;
      assert.equal(h.toString(16), '90097748f0e59f1f');
      const fromFile = await om.InferenceSession.create(bytes);
      const inMemory = traced.session();
      try {
        for (const batch of [5, 2, 13]) {
          om.tidy(() => {
            const xs = om.randn([batch, 4], { seed: 100 + batch });
            assert.deepEqual(bits(fromFile.run({ x: xs }).y), bits(inMemory.run({ x: xs }).y), `batch ${batch}`);
          });
        }
        assert.deepEqual(fromFile.inputs, inMemory.inputs);
      } finally {
        fromFile.dispose();
        inMemory.dispose();
      }
      const damaged = bytes.slice();
      damaged[70] ^= 1;
      await assert.rejects(om.InferenceSession.create(damaged), (e) => e.kind === 'Format' && /does not match its checksum/.test(e.message));
      await assert.rejects(om.InferenceSession.create(bytes.subarray(0, 40)), (e) => e.kind === 'Format' && /end inside the 64-byte header/.test(e.message));
    } finally {
      for (const t of [traced, again.traced, net, again.net, x, again.x]) t.dispose();
    }
  });

  test('the ranges a trace holds for come along: a size outside is refused, naming the call that narrowed it', async () => {
    const table = om.randn([16, 4], { seed: 5 });
    const model = (x) => x.add(table.slice(0, 0, x.shape[2]).t().unsqueeze(0));
    const x = om.randn([2, 4, 6], { seed: 6 });
    const traced = om.trace(model, { x: [x, ['b', null, 't']] });
    const s = await om.InferenceSession.create(traced.save());
    try {
      assert.deepEqual(traced.symbols.find((v) => v.name === 't').max, 16);
      om.tidy(() => {
        assert.throws(() => s.run({ x: om.zeros([1, 4, 17]) }), (e) => e.kind === 'ShapeMismatch'
          && /^run: axis 't' is 17 at dim 2 of input 'x'; the traced graph holds for t from \d+ to 16 \(narrowed by add/.test(e.message)); // the slice clamps: the add fails
        assert.deepEqual(s.run({ x: om.zeros([1, 4, 16]) }).output.shape, [1, 4, 16]);
      });
    } finally {
      s.dispose();
      traced.dispose();
      om.dispose([table, x]);
    }
  });
});
