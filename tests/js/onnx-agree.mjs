// Graphs written with tools/onnx_bytes.mjs, run by the Session and by onnxruntime-web on the same
// feeds: the feed builders, the comparison and the refusal check the ONNX-layer tests share
// (onnx-ops, onnx-sequences, onnx-subgraphs, onnx-strings).
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import * as ort from 'onnxruntime-web';
import { onnxBytes } from '../../tools/onnx_bytes.mjs';

ort.env.wasm.numThreads = 1;

export const numel = (dims) => dims.reduce((p, q) => p * q, 1);
/** A float32 feed of dims: element k is (k * 7 % 11 - 5) / 4 + shift. */
export const F = (dims, shift = 0) => ({ type: 'float32', dims, data: Float32Array.from({ length: numel(dims) }, (_, k) => ((k * 7) % 11 - 5) / 4 + shift) });
export const I = (values, dims = [values.length]) => ({ type: 'int64', dims, data: BigInt64Array.from(values, BigInt) });
export const B = (v) => ({ type: 'bool', dims: [], data: Uint8Array.of(v ? 1 : 0) });
export const node = (op, inputs, outputs, rest = {}) => ({ op, inputs, outputs, ...rest });

/**
 * Every feed set runs in the Session and in onnxruntime-web: outputs agree in type, shape and
 * values, exactly (a zero's sign aside: Relu of -0) or, with tol, within tol.atol + tol.rtol * |want|.
 * The model is written at opset 17 unless it names its own.
 */
export async function agree(model, feeds, tol = null) {
  const bytes = onnxBytes({ opset: 17, ...model });
  const ours = await om.InferenceSession.create(bytes);
  const theirs = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
  try {
    for (const feed of feeds) {
      const what = Object.entries(feed).map(([n, f]) => `${n} [${f.dims}]`).join(', ');
      const want = await theirs.run(Object.fromEntries(Object.entries(feed).map(([n, f]) => [n, new ort.Tensor(f.type, f.data, f.dims)])));
      const got = ours.runData(feed);
      for (const o of theirs.outputNames) {
        assert.equal(got[o].type, want[o].type, `${what}: output ${o}'s type`);
        assert.deepEqual(got[o].dims, Array.from(want[o].dims), `${what}: output ${o}'s shape`);
        const value = (v) => (typeof v === 'string' ? v : Number(v) + 0);
        const a = Array.from(got[o].data, value), e = Array.from(want[o].data, value);
        if (!tol) assert.deepEqual(a, e, `${what}: output ${o}'s values`);
        else a.forEach((v, i) => assert.ok(Math.abs(v - e[i]) <= tol.atol + tol.rtol * Math.abs(e[i]), `${what}: ${o}[${i}] is ${v}, onnxruntime-web ${e[i]}`));
      }
    }
  } finally {
    ours.dispose();
    await theirs.release();
  }
}

/**
 * The Session refuses model bytes on feeds with kind and a message matching re. Where every input's
 * declared size is fixed and the refusal follows from the shapes (not an input's values, not an op
 * the runtime does not take), it comes when the session is made: Format, `the graph is invalid at
 * the input shapes it declares (kind): ` then the op's message; else from the first run, as kind.
 */
export async function sessionRefuses(bytes, feeds, kind, re) {
  let s;
  try {
    s = await om.InferenceSession.create(bytes);
  } catch (e) {
    const lead = `session: the graph is invalid at the input shapes it declares (${kind}): `;
    assert.ok(e instanceof om.OmError && e.kind === 'Format' && e.message.startsWith(lead) && re.test(e.message.slice(lead.length)),
              `refused at create: ${e.kind}: ${e.message}`);
    return;
  }
  try {
    assert.throws(() => s.run(feeds), (e) => (e instanceof om.OmError && e.kind === kind && re.test(e.message)) || assert.fail(`${e.kind}: ${e.message}`));
  } finally {
    s.dispose();
  }
}
