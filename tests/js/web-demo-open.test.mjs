// Opening an .onnx in pieces (web-demo/src/graphfile.js: openGraph, scanOnnx; docs/web-demo.md,
// "Opening a large file"): the graph read from the file's structure alone is the graph read from
// the whole file, the large float32 weights' bytes are not read, the fields may come in any order,
// what is kept (small, not float32, a graph input) is read, and a damaged file is refused with the
// whole-file reader's error; a short run of the differential fuzzer (tools/fuzz_open.mjs).
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as om from 'onemodel';
import { blobSource, bytesSource, openGraph, readGraph, scanOnnx, withoutWeights } from '../../web-demo/src/graphfile.js';
import { fuzzOpen } from '../../tools/fuzz_open_lib.mjs';
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

  test('a damaged file is refused with the whole-file reader\'s error (it is then read whole); an .om is read whole', async () => {
    const { onnx, om: saved } = resnetFiles();
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
    const opened = await openGraph(bytesSource(saved));
    assert.equal(opened.whole, true);
    assert.deepEqual(opened.graph, readGraph(saved));
  });

  test('the differential fuzzer: 60 mutants of the odd-order file and three zoo models read alike whole and in pieces', async () => {
    const seeds = [oddOrder()];
    for (const name of ['mlp', 'lenet', 'gpt']) {
      const file = wf.checkModelFile(await import(`../../examples/zoo/${name}.mjs?open-${Math.random()}`), name);
      const inputs = wf.makeInputs(file, wf.describeInputs(file.inputs));
      const traced = wf.traceModel(file, inputs);
      seeds.push(traced.toOnnx());
      traced.dispose();
      wf.disposeInputs(inputs);
      wf.disposeModelFile(file);
    }
    const r = await fuzzOpen(seeds, { seed: 7, count: 60 });
    assert.equal(r.mismatch, null, r.mismatch && `mutant ${r.mismatch.index}: ${r.mismatch.what}`);
    // 60 mutants reach each outcome (16 read, 16 with a field left out, 44 refused at seed 7); the
    // long run is npm run fuzz:open
    assert.ok(r.read > 10 && r.leftOut > 4 && r.refused > 20, JSON.stringify(r));
  });
});
