// Opening an .onnx or an .om in pieces (web-demo/src/graphfile.js: openGraph, scanOnnx, openOm;
// docs/web-demo.md, "Opening a large file"): the graph read from the file's structure alone is the
// graph read from the whole file, the large float32 weights' bytes are not read, the fields may
// come in any order, what is kept (small, not float32, a graph input) is read, and a damaged file
// is refused with the whole-file reader's error; an .om's weightless file binds in the Session with
// the shapes and kept values of the whole one; a short run of the differential fuzzer
// (tools/fuzz_open.mjs).
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as om from 'onemodel';
import { blobSource, bytesSource, fnv1a, openGraph, readGraph, scanOnnx, withoutWeights } from '../../web-demo/src/graphfile.js';
import { inferredShapes } from '../../web-demo/src/shapes.js';
import { defaultSizes, feedsFor } from '../../web-demo/src/feeds.js';
import { fuzzOpen, resealed, sessionOpens } from '../../tools/fuzz_open_lib.mjs';
import { narrowResNet } from './narrow-resnet.mjs';
import { BasicBlock } from '../../examples/torchvision/resnet.mjs';
import * as wf from '../../examples/lib/workflow.mjs';
import { memoryHooks } from './helpers.mjs';

memoryHooks();
before(() => om.ready());

/** A ResNet-18-shaped port at a quarter of the width, traced with symbolic batch and size: its .onnx and .om. */
function resnetFiles() {
  const model = new (narrowResNet(4))(BasicBlock, [2, 2, 2, 2], { numClasses: 10 }).eval();
  const x = om.zeros([2, 3, 32, 32]);
  try {
    const traced = om.trace(model, { x: [x, ['batch', null, 'h', 'w']] });
    try {
      return { onnx: traced.toOnnx(), om: traced.save() };
    } finally {
      traced.dispose();
    }
  } finally {
    x.dispose();
    for (const t of [...model.parameters(), ...model.buffers()]) t.dispose();
  }
}

// protobuf's wire format, for files whose fields come in an order the tracer never writes
const enc = new TextEncoder();
const varint = (v) => {
  const out = [];
  for (; v >= 0x80; v = Math.floor(v / 128)) out.push((v % 128) | 0x80);
  out.push(v);
  return out;
};
const cat = (...parts) => Uint8Array.from(parts.flatMap((p) => [...p]));
const len = (field, bytes) => cat(varint(field * 8 + 2), varint(bytes.length), bytes);
const int = (field, v) => cat(varint(field * 8), varint(v));
const str = (field, s) => len(field, enc.encode(s));
/** A TensorProto with raw_data first, then its name, dims and data_type (the tracer writes them the other way round). */
const tensor = (name, dtype, dims, raw) => cat(len(9, raw), str(8, name), ...dims.map((d) => int(1, d)), int(2, dtype));
const valueInfo = (name, dtype, dims) => cat(str(1, name), len(2, len(1, cat(int(1, dtype), len(2, cat(...dims.map((d) => len(1, typeof d === 'string' ? str(2, d) : int(1, d)))))))));
const node = (op, inputs, outputs) => cat(...inputs.map((v) => str(1, v)), ...outputs.map((v) => str(2, v)), str(4, op));

/**
 * y = x + w + b, g = t[idx]: w (float32 [1024], 4 kB) left out; b likewise large and float32 but
 * also a graph input (an IR 3 file's way to make it replaceable), so kept; t int64 [1024] (8 kB),
 * kept as not float32. The graph's inputs come after its initializers, the model's graph before
 * its ir_version and opset.
 */
const f32 = (n, f) => new Uint8Array(Float32Array.from({ length: n }, (_, i) => f(i)).buffer);
const W = f32(1024, (i) => i / 7);
function oddOrder() {
  const i64 = (n, f) => new Uint8Array(BigInt64Array.from({ length: n }, (_, i) => BigInt(f(i))).buffer);
  const graph = cat(
    len(1, node('Add', ['x', 'w'], ['xw'])), len(1, node('Add', ['xw', 'b'], ['y'])), len(1, node('Gather', ['t', 'idx'], ['g'])),
    len(5, tensor('w', 1, [1024], W)), len(5, tensor('b', 1, [1024], f32(1024, (i) => -i))),
    len(5, tensor('t', 7, [1024], i64(1024, (i) => 3 * i + 1))),
    str(2, 'odd'),
    len(11, valueInfo('x', 1, ['n', 1024])), len(11, valueInfo('b', 1, [1024])), len(11, valueInfo('idx', 7, ['k'])),
    len(12, valueInfo('y', 1, ['n', 1024])), len(12, valueInfo('g', 7, ['k'])));
  return cat(len(7, graph), int(1, 3), len(8, int(2, 13)));
}

describe('openGraph: an .onnx read in pieces', () => {
  test('a ResNet-shaped file: the graph and the Session\'s weightless bytes as from the whole file, a few percent of it read', async () => {
    const { onnx } = resnetFiles();
    const whole = readGraph(onnx);
    for (const source of [bytesSource(onnx), blobSource(new Blob([onnx]))]) {
      const opened = await openGraph(source);
      assert.deepEqual(opened.graph, whole);
      assert.deepEqual(opened.light, withoutWeights(onnx, whole), 'the Session binds the same bytes');
      assert.equal(opened.whole, false);
      assert.equal(opened.bytes, null, 'its weights are still unread: a run reads the file');
      assert.ok(opened.bytesRead < onnx.length / 10, `${opened.bytesRead} of ${onnx.length} bytes read in ${opened.reads} pieces`);
    }
    const { left } = await scanOnnx(bytesSource(onnx));
    const large = whole.initializers.filter((i) => i.dtype === 'float32' && i.shape.reduce((a, b) => a * b, 4) >= 4096);
    assert.deepEqual([...left.keys()].sort(), large.map((i) => i.name).sort(), 'every float32 weight of 4 kB or more, no other');
  });

  test('fields in any order: what is kept (a graph input, an int64 table) is read and binds with its values; the rest is left out', async () => {
    const bytes = oddOrder(), whole = readGraph(bytes);
    const opened = await openGraph(bytesSource(bytes));
    assert.deepEqual(opened.graph, whole);
    const { left } = await scanOnnx(bytesSource(bytes));
    const at = Buffer.from(bytes).indexOf(W);
    assert.deepEqual([...left], [['w', [{ start: at, length: 4096 }]]]);
    assert.deepEqual(new Float32Array(bytes.slice(at, at + 8).buffer), Float32Array.from([0, 1 / 7]), 'where w\'s values are: a run can read them there');
    // the weightless copy runs: w is zeros there, b and t their own values
    const session = await om.InferenceSession.create(opened.light);
    try {
      const x = { data: Float32Array.from({ length: 2048 }, (_, i) => i % 5), dims: [2, 1024] };
      const idx = { data: BigInt64Array.from([5n, 0n, 1023n]), dims: [3] };
      const out = om.tidy(() => Object.fromEntries(Object.entries(session.run({ x, idx })).map(([k, t]) => [k, Array.from(t.toArray(), Number)])));
      assert.deepEqual(out.g, [16, 1, 3070]);
      assert.deepEqual(out.y.slice(0, 4), [0, 0, 0, 0].map((_, i) => (i % 5) - i));
      assert.equal(out.y[1024 + 7], ((1024 + 7) % 5) - 7);
    } finally {
      session.dispose();
    }
    // the whole file runs as itself
    const full = await om.InferenceSession.create(bytes);
    try {
      const x = { data: new Float32Array(1024), dims: [1, 1024] }, idx = { data: BigInt64Array.from([0n]), dims: [1] };
      const y = om.tidy(() => Array.from(full.run({ x, idx }).y.toArray()));
      assert.equal(y[7], Math.fround(Math.fround(7 / 7) - 7));
    } finally {
      full.dispose();
    }
  });

  test('a damaged file is refused with the whole-file reader\'s error (it is then read whole)', async () => {
    const { onnx } = resnetFiles();
    const cases = {
      'cut inside a weight': onnx.subarray(0, Math.floor(onnx.length * 0.6)),
      'cut after a tag': onnx.subarray(0, onnx.length - 1),
      'no model': enc.encode('<!doctype html><html></html>'),
      'empty': new Uint8Array(0),
    };
    // the graph's first initializer tagged as a varint (wire 0) instead of a message: Format, not read across what follows
    const g = onnx.indexOf(0x2a, 64);
    const miswired = Uint8Array.from(onnx);
    miswired[g] = 0x28;
    cases['a message field of wire type 0'] = miswired;
    for (const [what, bytes] of Object.entries(cases)) {
      let want = null;
      try {
        readGraph(bytes);
      } catch (e) {
        want = e;
      }
      assert.ok(want instanceof om.OmError && want.kind === 'Format', `${what}: ${want}`);
      await assert.rejects(openGraph(bytesSource(bytes)), (e) => e instanceof om.OmError && e.kind === want.kind && e.message === want.message, what);
    }
  });
});

/** What the Session makes of bytes: its shapes at the graph's default sizes, and y for the feeds. */
async function bound(bytes, graph, feeds) {
  const session = await om.InferenceSession.create(bytes, { mode: 'exact' });
  try {
    const { values, error } = inferredShapes(session, graph, defaultSizes(graph.inputs));
    const outputs = feeds && om.tidy(() => Object.fromEntries(Object.entries(session.run(feeds)).map(([k, t]) => [k, Array.from(t.toArray(), Number)])));
    return { values, error, outputs };
  } finally {
    session.dispose();
  }
}

describe('openGraph: an .om read as its header and graph section', () => {
  test('a ResNet-shaped file: the graph as from the whole file, its data section unread, the weightless file bound with the same shapes', async () => {
    const { om: saved } = resnetFiles();
    const whole = readGraph(saved);
    const graphEnd = 64 + Number(new DataView(saved.buffer, saved.byteOffset).getBigUint64(16, true));
    for (const source of [bytesSource(saved), blobSource(new Blob([saved]))]) {
      const opened = await openGraph(source);
      assert.deepEqual(opened.graph, whole);
      assert.equal(opened.whole, false);
      assert.equal(opened.bytes, null, 'its weights are still unread: a run reads the file');
      // the header, the graph section and the kept tensors (the BatchNorms' small statistics, the shapes a Reshape reads)
      assert.ok(opened.bytesRead < graphEnd + saved.length / 20, `${opened.bytesRead} of ${saved.length} bytes read in ${opened.reads} pieces (graph section ${graphEnd})`);
      assert.ok(opened.light.length < saved.length / 10, `weightless file ${opened.light.length} of ${saved.length} bytes`);
    }
    // the Session's shapes at two sizes, from the weightless file as from the whole one (every
    // size the page plans: the next test, on a smaller file)
    const opened = await openGraph(bytesSource(saved));
    const shapes = async (bytes, sizes) => {
      const session = await om.InferenceSession.create(bytes, { mode: 'exact' });
      try {
        const feeds = feedsFor(whole.inputs, sizes);
        return session.inferShapes(Object.fromEntries(Object.entries(feeds).map(([k, f]) => [k, { type: f.dtype, dims: f.dims, data: f.data }])));
      } finally {
        session.dispose();
      }
    };
    for (const sizes of [defaultSizes(whole.inputs), { batch: 3, h: 17, w: 9 }]) {
      const a = await shapes(saved, sizes), b = await shapes(opened.light, sizes);
      assert.ok(Object.keys(a).length > 50);
      assert.deepEqual(Object.fromEntries(Object.keys(a).map((k) => [k, b[k]])), a, `every value's shape as the whole file's at ${JSON.stringify(sizes)}`);
    }
  });

  test('what is kept keeps its values and what is left out is zeros: an int64 table, a small and a large weight', async () => {
    // y = x @ w + b (w float32 [64, 32]: 8 kB, left out; b float32 [32]: kept), g = t[idx] (t int64 [600]: kept)
    const [w, b, t] = om.tidy(() => [om.arange(0, 64 * 32).reshape([64, 32]).div(1000), om.arange(0, 32), om.arange(0, 600, 1, { dtype: 'int64' }).mul(3)]);
    const fn = (x, idx) => [x.matmul(w).add(b), t.index([idx])];
    const x = om.ones([2, 64]), idx = om.tensor([5, 0, 599], { dtype: 'int64' });
    let saved;
    try {
      const traced = om.trace(fn, { x: [x, ['n', null]], idx: [idx, ['k']] });
      saved = traced.save();
      traced.dispose();
    } finally {
      for (const v of [w, b, t, x, idx]) v.dispose();
    }
    const opened = await openGraph(bytesSource(saved)), graph = readGraph(saved);
    assert.deepEqual(opened.graph, graph);
    const feeds = { x: { data: new Float32Array(128).fill(1), dims: [2, 64] }, idx: { data: BigInt64Array.from([5n, 0n, 599n]), dims: [3] } };
    const [y, g] = graph.outputs.map((o) => o.name);
    const light = await bound(opened.light, graph, feeds), full = await bound(saved, graph, feeds);
    assert.deepEqual(Object.fromEntries(Object.keys(full.values).map((k) => [k, light.values[k]])), full.values);
    assert.deepEqual(light.outputs[g], [15, 0, 1797], 'the int64 table read');
    assert.deepEqual(light.outputs[y].slice(0, 3), [0, 1, 2], 'x @ 0 + b: w left out, b kept');
    assert.equal(full.outputs[y][0], Math.fround(Array.from({ length: 64 }, (_, i) => Math.fround(i * 32 / 1000)).reduce((s, v) => Math.fround(s + v), 0)) + 0, 'the whole file holds w');
    assert.ok(opened.bytesRead < saved.length - 8000, `${opened.bytesRead} of ${saved.length} bytes read`);
  });

  test('damaged: a graph the page refuses throws readGraph\'s error; a header, hash or place the library refuses is read whole for the Session\'s error', async () => {
    // y = x @ w, w float32 [64, 32]: 8192 bytes at offset 0 of the data section
    const w = om.randn([64, 32], { seed: 3 }), x = om.ones([2, 64]);
    let saved;
    try {
      const traced = om.trace((x) => x.matmul(w), { x: [x, ['n', null]] });
      saved = traced.save();
      traced.dispose();
    } finally {
      w.dispose();
      x.dispose();
    }
    assert.equal((await openGraph(bytesSource(saved))).whole, false, 'intact: read in pieces');
    const g = Number(new DataView(saved.buffer, saved.byteOffset).getBigUint64(16, true));
    // the library's checksum, as the page computes it: the header's
    assert.equal(fnv1a(saved.subarray(64, 64 + g)), new DataView(saved.buffer, saved.byteOffset).getBigUint64(40, true));
    const set = (f) => { const b = Uint8Array.from(saved); f(new DataView(b.buffer)); return b; };
    const refused = {
      'cut inside the header': saved.subarray(0, 40),
      'version 9': set((v) => v.setUint32(8, 9, true)),
      'a graph section past the file': set((v) => v.setBigUint64(16, BigInt(saved.length), true)),
      'a value count past the graph section': set((v) => v.setUint32(64, 0x7fffffff, true)),
    };
    for (const [what, bytes] of Object.entries(refused)) {
      let want = null;
      try {
        readGraph(bytes);
      } catch (e) {
        want = e;
      }
      assert.ok(want instanceof om.OmError, `${what}: ${want}`);
      await assert.rejects(openGraph(bytesSource(bytes)), (e) => e instanceof om.OmError && e.kind === want.kind && e.message === want.message, what);
    }
    // a letter of w's name changed: the page reads the graph, the hash no longer matches
    const name = Buffer.from(saved).indexOf(readGraph(saved).initializers[0].name);
    assert.ok(name > 64 && name < 64 + g);
    // w moved off its 64-byte alignment (its place: offset, then its size 8192), the header resealed
    const sizeAt = Buffer.from(saved).indexOf(Buffer.from(new BigInt64Array([8192n]).buffer), 64);   // past the header's data size
    const readWhole = {
      'a byte of the graph section changed, the hash not': set((v) => v.setUint8(name, 'F'.charCodeAt(0))),
      'the data section cut': saved.subarray(0, saved.length - 64),
      'a weight misplaced (resealed)': resealed(set((v) => v.setBigInt64(sizeAt - 8, 32n, true))),
    };
    for (const [what, bytes] of Object.entries(readWhole)) {
      const opened = await openGraph(bytesSource(bytes));
      assert.equal(opened.whole, true, what);
      assert.deepEqual(opened.graph, readGraph(bytes), what);
      assert.deepEqual(opened.light, bytes, `${what}: the Session binds the file itself`);
      await assert.rejects(om.InferenceSession.create(bytes), (e) => e instanceof om.OmError && e.kind === 'Format', what);
    }
  });
});

describe('the differential fuzzer (tools/fuzz_open.mjs)', () => {
  test('120 mutants of the odd-order file and three zoo models, .onnx and .om, read alike whole and in pieces', async () => {
    const seeds = [oddOrder()];
    for (const name of ['mlp', 'lenet', 'gpt']) {
      const file = wf.checkModelFile(await import(`../../examples/zoo/${name}.mjs?open-${Math.random()}`), name);
      const inputs = wf.makeInputs(file, wf.describeInputs(file.inputs));
      const traced = wf.traceModel(file, inputs);
      seeds.push(traced.toOnnx(), traced.save());
      traced.dispose();
      wf.disposeInputs(inputs);
      wf.disposeModelFile(file);
    }
    const r = await fuzzOpen(seeds, { seed: 7, count: 120, opens: sessionOpens });
    assert.equal(r.mismatch, null, r.mismatch && `mutant ${r.mismatch.index}: ${r.mismatch.what}`);
    // 120 mutants reach each outcome (read alike, in pieces with weights left out, an .om the
    // Session opens both ways, refused alike); the long run is npm run fuzz:open
    assert.ok(r.read > 10 && r.leftOut > 4 && r.om > 2 && r.refused > 20, JSON.stringify(r));
  });
});
