// ONNX's backend node tests (generated at set-up by tools/bootstrap.sh from Debian's python3-onnx
// into the cache, never committed), run in the Session and, for `npm run conformance`, in
// onnxruntime-web. Each test is a folder: model.onnx and test_data_set_*/{input,output}_k.pb, one
// TensorProto each (a SequenceProto or an OptionalProto where the graph's value is a sequence or an
// optional, as ONNX's runner reads them). Outputs are compared by ONNX's rule (its backend test runner): dtype and
// shape exact, then |got - want| <= atol + rtol |want| elementwise (rtol 1e-3, atol 1e-7; NaN
// where NaN is, an infinity where the same one is).
//
//   nodeTests()           the generated tests: [{ name, dir }], sorted (throws naming the fix when absent)
//   dataTests(data, tmp)  the tests of a backend test data folder of ONNX's repository (onnx/backend/test/data
//                         of a release: node, pytorch-converted, pytorch-operator, simple, and light, whose
//                         inputs are written to tmp as ONNX's runner writes them): [{ name, dir }]
//   loadTest(dir)         { name, model (bytes), inputs, outputs (names, kinds: tensor, sequence, optional; dims), sets }
//   runSession(om, test)  { outcome: 'pass' | 'refused' | 'wrong' | 'crash', kind?, message? }
//   runOrt(ort, test)     the same for onnxruntime-web (refused: it threw at create or run)
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('../..', import.meta.url).pathname;
export const RTOL = 1e-3;
export const ATOL = 1e-7;

/** The generated node tests, by name (the folder is bootstrap.sh's om_onnx_tests_dir: one source of truth). */
export function nodeTests() {
  const dir = execFileSync('bash', ['-c', 'source tools/bootstrap.sh && om_onnx_tests_dir'], { cwd: ROOT, encoding: 'utf8' }).trim();
  if (!existsSync(join(dir, 'done'))) throw new Error(`ONNX's backend node tests are not generated in ${dir}: run bash tools/bootstrap.sh`);
  const node = join(dir, 'node');
  return readdirSync(node).sort().map((name) => ({ name, dir: join(node, name) }));
}

/**
 * The tests of ONNX's backend test data folder `data` (as in ONNX's repository at a release: not
 * shipped by Debian, so only `npm run conformance -- --data DIR` reads it). The folder sets hold
 * model.onnx and test_data_set_*; a light model (light/light_<name>.onnx, its float initializers
 * replaced by ConstantOfShape) has only its expected outputs: its one data set is written under
 * tmp as ONNX's runner writes it (each float input arange(n) / n, a symbolic dim 1).
 */
export function dataTests(data, tmp) {
  const tests = [];
  for (const set of ['node', 'pytorch-converted', 'pytorch-operator', 'simple']) {
    const dir = join(data, set);
    if (existsSync(dir)) for (const name of readdirSync(dir).sort()) tests.push({ name: `${set}/${name}`, dir: join(dir, name) });
  }
  const light = join(data, 'light');
  for (const file of existsSync(light) ? readdirSync(light).filter((f) => f.endsWith('.onnx')).sort() : []) {
    const name = file.slice(0, -'.onnx'.length), dir = join(tmp, name), set = join(dir, 'test_data_set_0');
    mkdirSync(set, { recursive: true });
    const model = readFileSync(join(light, file));
    writeFileSync(join(dir, 'model.onnx'), model);
    graphIO(model).inputs.forEach(({ dims }, k) => {
      const n = dims.reduce((a, b) => a * b, 1), data = Float32Array.from({ length: n }, (_, i) => i / n);
      writeFileSync(join(set, `input_${k}.pb`), encodeFloatTensor(dims, data));
    });
    for (let k = 0; existsSync(join(light, `${name}_output_${k}.pb`)); k++) copyFileSync(join(light, `${name}_output_${k}.pb`), join(set, `output_${k}.pb`));
    tests.push({ name: `light/${name}`, dir });
  }
  return tests;
}

/** A float32 TensorProto's bytes: dims (field 1), data_type 1 (field 2), raw_data (field 9). */
function encodeFloatTensor(dims, data) {
  const varint = (v) => { const b = []; for (v = BigInt(v); v > 127n; v >>= 7n) b.push(Number(v & 127n) | 128); b.push(Number(v)); return b; };
  const raw = new Uint8Array(data.buffer);
  return Uint8Array.from([...dims.flatMap((d) => [0x08, ...varint(d)]), 0x10, 1, 0x4a, ...varint(raw.length), ...raw]);
}

// ---- protobuf's wire format: the fields of ModelProto and TensorProto read here ----

/** The fields of message bytes buf: [number, wire type, value (a BigInt for varints, else bytes)]. */
function* fields(buf) {
  let at = 0;
  const varint = () => {
    let v = 0n, shift = 0n, b;
    do {
      if (at >= buf.length) throw new Error('a truncated varint');
      b = buf[at++];
      v |= BigInt(b & 0x7f) << shift;
      shift += 7n;
    } while (b & 0x80);
    return v;
  };
  while (at < buf.length) {
    const key = Number(varint()), wt = key & 7;
    const width = wt === 1 ? 8 : wt === 5 ? 4 : wt === 2 ? Number(varint()) : -1;
    if (wt === 0) yield [key >> 3, wt, varint()];
    else if (width >= 0) yield [key >> 3, wt, buf.subarray(at, (at += width))];
    else throw new Error(`wire type ${wt}`);
  }
}

/** The varints of a repeated field's occurrence: one (wire type 0), or packed bytes. */
function varints(wt, v) {
  if (wt === 0) return [v];
  const out = [];
  for (let at = 0, x = 0n, shift = 0n; at < v.length; at++) {
    x |= BigInt(v[at] & 0x7f) << shift;
    shift += 7n;
    if (!(v[at] & 0x80)) out.push(x), (x = 0n), (shift = 0n);
  }
  return out;
}

/** The fixed-width numbers of a repeated field's occurrence, read by get from a DataView. */
function fixed(v, width, get) {
  const dv = new DataView(v.buffer, v.byteOffset, v.byteLength), out = [];
  for (let k = 0; k + width <= v.byteLength; k += width) out.push(get.call(dv, k, true));
  return out;
}

const dec = new TextDecoder();
const int32 = (x) => Number(BigInt.asIntN(32, x));

// ONNX's data types: [name (onnxruntime-web's), typed array, where TensorProto keeps them without raw_data]
const DTYPES = {
  1: ['float32', Float32Array, 'float'], 2: ['uint8', Uint8Array, 'int32'], 3: ['int8', Int8Array, 'int32'],
  4: ['uint16', Uint16Array, 'int32'], 5: ['int16', Int16Array, 'int32'], 6: ['int32', Int32Array, 'int32'],
  7: ['int64', BigInt64Array, 'int64'], 8: ['string', null, 'string'], 9: ['bool', Uint8Array, 'int32'],
  10: ['float16', Uint16Array, 'int32'], 11: ['float64', Float64Array, 'double'], 12: ['uint32', Uint32Array, 'uint64'],
  13: ['uint64', BigUint64Array, 'uint64'], 16: ['bfloat16', Uint16Array, 'int32'], 17: ['float8e4m3fn', Uint8Array, 'int32'],
  18: ['float8e4m3fnuz', Uint8Array, 'int32'], 19: ['float8e5m2', Uint8Array, 'int32'], 20: ['float8e5m2fnuz', Uint8Array, 'int32'],
};

/** A TensorProto's bytes as { dtype, dims, data } (data a typed array, or strings). */
export function decodeTensor(buf) {
  let type = 0, raw = null;
  const dims = [], kept = { float: [], int32: [], int64: [], string: [], double: [], uint64: [] };
  for (const [f, wt, v] of fields(buf)) {
    if (f === 1) dims.push(...varints(wt, v).map(Number));
    else if (f === 2) type = Number(v);
    else if (f === 4) kept.float.push(...fixed(v, 4, DataView.prototype.getFloat32));
    else if (f === 5) kept.int32.push(...varints(wt, v).map(int32));
    else if (f === 6) kept.string.push(dec.decode(v));
    else if (f === 7) kept.int64.push(...varints(wt, v).map((x) => BigInt.asIntN(64, x)));
    else if (f === 9) raw = v;
    else if (f === 10) kept.double.push(...fixed(v, 8, DataView.prototype.getFloat64));
    else if (f === 11) kept.uint64.push(...varints(wt, v));
    else if (f === 13 || f === 14) throw new Error('a tensor with external data');
  }
  const [dtype, T, where] = DTYPES[type] ?? [];
  if (!dtype) throw new Error(`data type ${type}`);
  const n = dims.reduce((a, b) => a * b, 1);
  let data;
  if (!T) data = kept.string;
  else if (raw) {
    if (raw.byteLength !== n * T.BYTES_PER_ELEMENT) throw new Error(`${raw.byteLength} bytes of raw data for dims [${dims}] of ${dtype}`);
    data = new T(new Uint8Array(raw).buffer); /* a copy: raw lies in a Buffer at any offset */
  }
  else data = T === BigUint64Array || T === BigInt64Array ? T.from(kept[where]) : T.from(kept[where].map(Number));
  if (data.length !== n) throw new Error(`${data.length} values for dims [${dims}]`);
  return { dtype, dims, data };
}

/**
 * A value's bytes as the graph's value of that kind holds it: a tensor ({ dtype, dims, data }), a
 * sequence (SequenceProto: an array of tensors, field 3), or an optional (OptionalProto: its tensor,
 * field 3, its sequence, field 5, or null when it holds nothing).
 */
export function decodeValue(buf, kind) {
  if (kind === 'tensor') return decodeTensor(buf);
  const sequence = (b) => [...fields(b)].filter(([f]) => f === 3).map(([, , v]) => decodeTensor(v));
  if (kind === 'sequence') return sequence(buf);
  let value = null;
  for (const [f, , v] of fields(buf)) {
    if (f === 3) value = decodeTensor(v);
    else if (f === 5) value = sequence(v);
    else if (f === 4 || f === 6 || f === 7) throw new Error('an optional of a sparse tensor, a map or an optional');
  }
  return value;
}

/**
 * A graph's inputs and outputs as [{ name, kind, tensor, dims }] from ModelProto bytes (kind:
 * 'tensor', 'sequence', 'optional' or 'map'; tensor: whether it is a tensor). An input an initializer fills (IR 3 lists them) is
 * left out: the data sets' input_k.pb are the others, in order, as ONNX's runner feeds them.
 */
function graphIO(model) {
  const io = { inputs: [], outputs: [] }, inits = new Set();
  for (const [f, , graph] of fields(model)) {
    if (f !== 7) continue;
    for (const [g, , v] of fields(graph)) if (g === 5) for (const [h, , x] of fields(v)) if (h === 8) inits.add(dec.decode(x));
    for (const [g, , vi] of fields(graph)) {
      if (g !== 11 && g !== 12) continue;
      let name = '', kind = 'tensor';
      const dims = []; /* a tensor's, a symbolic one as 1 (as ONNX's runner makes a light model's inputs) */
      for (const [h, , v] of fields(vi)) {
        if (h === 1) name = dec.decode(v);
        if (h === 2) for (const [t, , tt] of fields(v)) {
          kind = { 1: 'tensor', 4: 'sequence', 5: 'map', 8: 'sparse', 9: 'optional' }[t] ?? kind;
          if (t === 1) for (const [u, , shape] of fields(tt)) if (u === 2) for (const [d, , dim] of fields(shape)) if (d === 1) {
            let value = 1;
            for (const [e, , dv] of fields(dim)) if (e === 1) value = Number(dv);
            dims.push(value);
          }
        }
      }
      if (g === 12 || !inits.has(name)) (g === 11 ? io.inputs : io.outputs).push({ name, kind, tensor: kind === 'tensor', dims });
    }
  }
  return io;
}

/** A test folder, read: the model's bytes, its inputs and outputs, and each data set's .pb files (bytes, decoded when used). */
export function loadTest(dir) {
  const model = readFileSync(join(dir, 'model.onnx'));
  const io = graphIO(model);
  const sets = readdirSync(dir).filter((d) => d.startsWith('test_data_set_')).sort().map((d) => {
    const files = (prefix, n) => Array.from({ length: n }, (_, k) => join(dir, d, `${prefix}_${k}.pb`)).filter(existsSync);
    return { inputs: files('input', io.inputs.length), outputs: files('output', io.outputs.length) };
  });
  return { name: dir.split('/').pop(), model, ...io, sets };
}

// ---- ONNX's comparison ----

const asNumbers = (t) => (t.dtype === 'float16' ? Array.from(t.data, half) : t.dtype === 'bfloat16' ? Array.from(t.data, (h) => new Float32Array(new Uint32Array([h << 16]).buffer)[0])
  : FLOAT8[t.dtype] ? Array.from(t.data, (b) => float8(b, ...FLOAT8[t.dtype])) : Array.from(t.data, Number));
/* The float8 types (ONNX's definitions): fraction bits, exponent bias, FNUZ (NaN 0x80, no
 * infinities), infinities (E5M2). */
const FLOAT8 = { float8e4m3fn: [3, 7, false, false], float8e4m3fnuz: [3, 8, true, false], float8e5m2: [2, 15, false, true], float8e5m2fnuz: [2, 16, true, false] };
function float8(b, m, bias, fnuz, inf) {
  const e = (b & 0x7f) >> m, f = b & ((1 << m) - 1), s = b & 0x80 ? -1 : 1, top = (1 << (7 - m)) - 1;
  if (fnuz ? b === 0x80 : (inf ? e === top && f : (b & 0x7f) === 0x7f)) return NaN;
  if (inf && e === top) return s * Infinity;
  return s * (e ? (1 + f / 2 ** m) * 2 ** (e - bias) : f * 2 ** (1 - bias - m));
}
function half(h) {
  const e = (h >> 10) & 31, m = h & 1023, s = h & 0x8000 ? -1 : 1;
  return e === 0 ? s * m * 2 ** -24 : e === 31 ? (m ? NaN : s * Infinity) : s * (1 + m / 1024) * 2 ** (e - 15);
}

/** Why got ({ dtype, dims, data }) is not want by ONNX's rule, or null when it is. */
export function mismatch(got, want) {
  /* ONNX 1.12's test data holds BFLOAT16 values as their UINT16 bits (numpy has no bfloat16) */
  if (got.dtype === 'bfloat16' && want.dtype === 'uint16') got = { ...got, dtype: 'uint16' };
  if (got.dtype !== want.dtype) return `dtype ${got.dtype}, expected ${want.dtype}`;
  if (got.dims.length !== want.dims.length || got.dims.some((d, k) => Number(d) !== want.dims[k])) return `shape [${got.dims}], expected [${want.dims}]`;
  if (want.dtype === 'string') {
    const k = want.data.findIndex((s, i) => s !== got.data[i]);
    return k < 0 ? null : `element ${k}: ${JSON.stringify(got.data[k])}, expected ${JSON.stringify(want.data[k])}`;
  }
  const g = asNumbers(got), w = asNumbers(want);
  for (let k = 0; k < w.length; k++) {
    const a = g[k], b = w[k];
    const ok = Number.isNaN(b) ? Number.isNaN(a) : !Number.isFinite(b) ? a === b : Math.abs(a - b) <= ATOL + RTOL * Math.abs(b);
    if (!ok) return `element ${k}: ${a}, expected ${b}`;
  }
  return null;
}

/** Why value got is not want (each a tensor, an array of them, or null) by ONNX's rule, or null when it is. */
function valueMismatch(got, want) {
  if (want === null || got === null) return got === want ? null : got === null ? 'nothing, expected a value' : 'a value, expected nothing';
  if (Array.isArray(want) !== Array.isArray(got)) return Array.isArray(want) ? 'a tensor, expected a sequence' : 'a sequence, expected a tensor';
  if (!Array.isArray(want)) return mismatch(got, want);
  if (got.length !== want.length) return `a sequence of ${got.length}, expected ${want.length}`;
  for (let k = 0; k < want.length; k++) {
    const why = mismatch(got[k], want[k]);
    if (why) return `element ${k}: ${why}`;
  }
  return null;
}

/** Runs every data set of test through run(feeds by name) -> outputs by name ({ dtype, dims, data }, arrays of them, null). */
function compareSets(test, run) {
  for (const set of test.sets) {
    const feeds = Object.fromEntries(set.inputs.map((f, k) => [test.inputs[k].name, decodeValue(readFileSync(f), test.inputs[k].kind)]));
    const got = run(feeds);
    for (let k = 0; k < set.outputs.length; k++) {
      const name = test.outputs[k].name, want = decodeValue(readFileSync(set.outputs[k]), test.outputs[k].kind);
      const why = got[name] !== undefined ? valueMismatch(got[name], want) : 'missing';
      if (why) return { outcome: 'wrong', message: `output '${name}': ${why}` };
    }
  }
  return { outcome: 'pass' };
}

/** A test's outcome in the Session (om: the onemodel package, ready): refused when create or run throws an OmError. */
export async function runSession(om, test) {
  let s;
  const refusal = (e) => (e instanceof om.OmError ? { outcome: 'refused', kind: e.kind, message: e.message } : { outcome: 'crash', message: String(e?.stack ?? e) });
  try {
    s = await om.InferenceSession.create(test.model);
  } catch (e) {
    return refusal(e);
  }
  try {
    return compareSets(test, (feeds) => {
      const bf16 = new Set(s.inputs.filter((i) => i.type === 'bfloat16').map((i) => i.name)); /* fed as UINT16 bits, as mismatch reads */
      const feed = (n, t) => ({ type: t.dtype === 'uint16' && bf16.has(n) ? 'bfloat16' : t.dtype, data: t.data, dims: t.dims });
      const made = Object.fromEntries(Object.entries(feeds).map(([n, v]) => [n, v === null ? null : Array.isArray(v) ? v.map((t) => feed(n, t)) : feed(n, v)]));
      let outs;
      try {
        outs = s.runData(made);
      } catch (e) {
        throw Object.assign(new Error('run'), { refusal: refusal(e) });
      }
      const got = (t) => ({ dtype: t.type, dims: t.dims, data: t.data });
      return Object.fromEntries(Object.entries(outs).map(([n, v]) => [n, v === null ? null : Array.isArray(v) ? v.map(got) : got(v)]));
    });
  } catch (e) {
    return e.refusal ?? { outcome: 'crash', message: String(e?.stack ?? e) };
  } finally {
    s.dispose();
  }
}

/** A test's outcome in onnxruntime-web (ort: its module). */
export async function runOrt(ort, test) {
  if (![...test.inputs, ...test.outputs].every((v) => v.tensor)) return { outcome: 'refused', message: 'a sequence, map or optional (onnxruntime-web feeds and returns tensors)' };
  let s;
  try {
    s = await ort.InferenceSession.create(test.model, { executionProviders: ['wasm'] });
  } catch (e) {
    return { outcome: 'refused', message: String(e?.message ?? e) };
  }
  try {
    const results = [];
    for (const set of test.sets) { /* ort's run is async: each set's outputs, then compared as the Session's */
      const feeds = Object.fromEntries(set.inputs.map((f, k) => {
        const t = decodeTensor(readFileSync(f));
        return [test.inputs[k].name, new ort.Tensor(t.dtype, t.data, t.dims)];
      }));
      const outs = await s.run(feeds);
      results.push(Object.fromEntries(Object.entries(outs).map(([n, t]) => [n, { dtype: t.type, dims: t.dims, data: t.data }])));
    }
    let k = 0;
    return compareSets(test, () => results[k++]);
  } catch (e) {
    return { outcome: 'refused', message: String(e?.message ?? e) };
  } finally {
    await s.release();
  }
}
