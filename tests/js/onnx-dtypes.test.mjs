// Element types in the Session (docs/graph-runtime.md, "Element types"): every integer type up to
// 32 bits held in int64 and wrapped after each op, float16 and bfloat16 held in float32 and
// rounded to nearest even after each op. Each one-node model runs in the Session (runData: the
// type's own typed array) and is checked against ONNX's rule computed here (BigInt wrap-around,
// float16 rounding by scaling) and against onnxruntime-web wherever it has a kernel for the type.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import * as ort from 'onnxruntime-web';
import { memoryHooks } from './helpers.mjs';
import { onnxBytes } from '../../tools/onnx_bytes.mjs';

memoryHooks();
ort.env.wasm.numThreads = 1;

const INTS = { int8: [8, true, Int8Array], uint8: [8, false, Uint8Array], int16: [16, true, Int16Array], uint16: [16, false, Uint16Array], int32: [32, true, Int32Array], uint32: [32, false, Uint32Array] };
const FLOATS = { float16: 10, bfloat16: 16 };

/** count values of an integer type from seed: its edges first, then spread over its range. */
function ints(type, count, seed) {
  const [bits, signed, T] = INTS[type];
  const lo = signed ? -(2 ** (bits - 1)) : 0, hi = signed ? 2 ** (bits - 1) - 1 : 2 ** bits - 1;
  const edges = [lo, hi, 0, 1, signed ? -1 : 2, lo + 1, hi - 1];
  let a = seed >>> 0;
  return T.from({ length: count }, (_, k) => {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    return k < edges.length ? edges[k] : lo + Math.floor((a / 2 ** 32) * (hi - lo + 1));
  });
}

/** float16's value of bits h. */
function half(h) {
  const e = (h >> 10) & 31, m = h & 1023, s = h & 0x8000 ? -1 : 1;
  return e === 0 ? s * m * 2 ** -24 : e === 31 ? (m ? NaN : s * Infinity) : s * (1 + m / 1024) * 2 ** (e - 15);
}
const bf16 = (h) => new Float32Array(new Uint32Array([h << 16]).buffer)[0];

/** x rounded to the nearest float16 (ties to even), by scaling to its step: ONNX's float16 rule, written apart from the library's bit version. */
function toHalfValue(x) {
  if (!Number.isFinite(x) || x === 0) return x;
  let e = Math.floor(Math.log2(Math.abs(x)));
  while (2 ** e > Math.abs(x)) e--; /* log2 may round up just below a power of two */
  while (2 ** (e + 1) <= Math.abs(x)) e++;
  const step = 2 ** (Math.max(e, -14) - 10);
  let r = Math.abs(x) / step; /* exact: a power-of-two scaling */
  const f = Math.floor(r);
  r = r - f > 0.5 || (r - f === 0.5 && f % 2) ? f + 1 : f;
  const v = Math.sign(x) * r * step;
  return Math.abs(v) > 65504 ? Math.sign(x) * Infinity : v;
}
/** x rounded to the nearest bfloat16, as its value. */
function toBf16Value(x) {
  const u = new Uint32Array(new Float32Array([x]).buffer)[0];
  if (Number.isNaN(x)) return NaN;
  return bf16(((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff);
}

const numbersOf = (type, data) => (type === 'float16' ? Array.from(data, half) : type === 'bfloat16' ? Array.from(data, bf16) : Array.from(data, (v) => (typeof v === 'bigint' ? v : Number(v))));

/** A one-node model of op on inputs of types, output y of type out. */
function model(op, types, out, attrs = {}) {
  const names = types.map((_, k) => `x${k}`);
  return onnxBytes({ nodes: [{ op, inputs: names, outputs: ['y'], ints: attrs }], inputs: names.map((name, k) => ({ name, dtype: types[k], dims: [`n${k}`] })), outputs: [{ name: 'y', dtype: out }], opset: 20 });
}

/** The Session's output y of the model on feeds (typed arrays by input), as { type, data }. */
async function ours(bytes, feeds) {
  const s = await om.InferenceSession.create(bytes);
  try {
    const out = s.runData(Object.fromEntries(Object.entries(feeds).map(([n, f]) => [n, { type: f.type, data: f.data, dims: [f.data.length] }])));
    return out.y;
  } finally {
    s.dispose();
  }
}

/** onnxruntime-web's output y, or null where it has no kernel for the types. */
async function theirs(bytes, feeds) {
  let s;
  try {
    s = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
  } catch (e) {
    if (/implementation|NOT_IMPLEMENTED|not supported|unsupported data type/i.test(String(e?.message ?? e))) return null;
    throw e;
  }
  try {
    const out = await s.run(Object.fromEntries(Object.entries(feeds).map(([n, f]) => [n, new ort.Tensor(f.type, f.data, [f.data.length])])));
    return { type: out.y.type, data: out.y.data };
  } finally {
    await s.release();
  }
}

/** Both outputs: the same type and the same elements (bits for floats: NaN as NaN). */
function same(got, want, what) {
  assert.equal(got.type, want.type, `${what}: type`);
  const g = numbersOf(got.type, got.data), w = numbersOf(want.type, want.data);
  assert.equal(g.length, w.length, `${what}: length`);
  g.forEach((v, k) => {
    if (!(Object.is(v, w[k]) || (v === 0 && w[k] === 0 && typeof v === 'number'))) assert.fail(`${what}: element ${k} is ${v}, expected ${w[k]}`);
  });
}

const wrap = (type, v) => (INTS[type][1] ? BigInt.asIntN : BigInt.asUintN)(INTS[type][0], v);
const intRef = { Add: (a, b) => a + b, Sub: (a, b) => a - b, Mul: (a, b) => a * b, Div: (a, b) => a / b };
const floatRef = { Add: (a, b) => a + b, Sub: (a, b) => a - b, Mul: (a, b) => a * b, Div: (a, b) => a / b };

let ortRan = 0;
async function check(op, types, out, feeds, want, attrs) {
  const bytes = model(op, types, out, attrs);
  const got = await ours(bytes, feeds);
  same(got, want, `${op} ${types.join(', ')} -> ${out}`);
  const o = await theirs(bytes, feeds);
  if (process.env.OM_DTYPES_VERBOSE) console.log(op, types.join(), out, o ? 'ort' : 'reference only');
  if (o) ortRan++, same(got, o, `${op} ${types.join(', ')} -> ${out} against onnxruntime-web`);
}

test('integer arithmetic wraps modulo 2^bits, as ONNX and onnxruntime-web', async () => {
  for (const type of Object.keys(INTS)) {
    const a = ints(type, 40, 1), b = ints(type, 40, 2);
    for (const op of ['Add', 'Sub', 'Mul', 'Div']) {
      const bb = op === 'Div' ? b.map((v) => v || 3) : b; /* division by zero is an error (tested below) */
      const want = INTS[type][2].from(Array.from(a, (v, k) => Number(wrap(type, intRef[op](BigInt(v), BigInt(bb[k]))))));
      await check(op, [type, type], type, { x0: { type, data: a }, x1: { type, data: bb } }, { type, data: want });
    }
  }
  assert.ok(ortRan >= 8, `onnxruntime-web ran ${ortRan} of the integer cases (its int32 and int64 kernels at least)`);
});

test('float16 and bfloat16 round each result to nearest even', async () => {
  for (const type of Object.keys(FLOATS)) {
    const values = [1, 1 + 2 ** -10, 65504, 2 ** -24, -3.5, 0.1, 1e-5, 300.7, -0, Infinity, 2 ** -14, 1000];
    const others = [2 ** -11, 2 ** -11, 16, 0.5, 3, 0.2, 3e-5, 0.3, 0.5, 2, 2 ** -25, 1e-3];
    const toBits = (v) => (type === 'float16' ? bitsOfHalf(toHalfValue(v)) : new Uint32Array(new Float32Array([toBf16Value(v)]).buffer)[0] >>> 16);
    const round = type === 'float16' ? toHalfValue : toBf16Value;
    const a = Uint16Array.from(values, toBits), b = Uint16Array.from(others, toBits);
    const av = numbersOf(type, a), bv = numbersOf(type, b);
    for (const op of ['Add', 'Sub', 'Mul', 'Div']) {
      const want = Uint16Array.from(av, (v, k) => toBits(round(Math.fround(floatRef[op](v, bv[k])))));
      await check(op, [type, type], type, { x0: { type, data: a }, x1: { type, data: b } }, { type, data: want });
    }
  }
});

/** The bits of a value a float16 holds exactly. */
function bitsOfHalf(v) {
  for (let h = 0; h < 0x10000; h++) if (Object.is(half(h), v)) return h;
  throw new Error(`${v} is no float16`);
}

test('Cast between every pair of types, as onnxruntime-web', async () => {
  const types = [...Object.keys(INTS), 'int64', 'float32', 'float16', 'bool'];
  const sample = {
    int8: ints('int8', 12, 3), uint8: ints('uint8', 12, 4), int16: ints('int16', 12, 5), uint16: ints('uint16', 12, 6), int32: ints('int32', 12, 7), uint32: ints('uint32', 12, 8),
    int64: BigInt64Array.from([0n, 1n, -1n, 300n, -129n, 65536n, 2n ** 31n, -(2n ** 40n), 255n, 127n, 70000n, -70000n]),
    float32: Float32Array.from([0, 1.5, -1.5, 300.7, -129.9, 65519, 65520, 0.1, 1e-8, 2 ** -24, -7.25, 2049]),
    float16: Uint16Array.from([0, 0x3c00, 0xbc00, 0x7bff, 0x0001, 0x3555, 0xc800, 0x5bd0, 0x8000, 0x4248, 0x6400, 0xfbff]),
    bool: Uint8Array.from([0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0]),
  };
  let compared = 0;
  for (const from of types) {
    for (const to of types) {
      /* a float out of the integer type's range is undefined in ONNX (onnxruntime-web's answer is its WASM's); those casts are checked in C */
      if ((from === 'float32' || from === 'float16') && to !== 'float32' && to !== 'float16' && to !== 'bool' && to !== 'int64' && to !== 'int32') continue;
      const bytes = model('Cast', [from], to, { to: { float32: 1, uint8: 2, int8: 3, uint16: 4, int16: 5, int32: 6, int64: 7, bool: 9, float16: 10, uint32: 12 }[to] });
      const feeds = { x0: { type: from, data: sample[from] } };
      const got = await ours(bytes, feeds), o = await theirs(bytes, feeds);
      assert.ok(o, `onnxruntime-web has a Cast from ${from} to ${to}`);
      if (from.startsWith('float') && (to === 'int32' || to === 'int64')) { /* only where the value fits: truncation toward zero */
        const fits = numbersOf(from, sample[from]).map((v) => Math.abs(v) < 2 ** 31);
        const g = numbersOf(to, got.data), w = numbersOf(to, o.data);
        fits.forEach((f, k) => f && assert.equal(g[k], w[k], `Cast ${from} -> ${to}: element ${k}`));
      } else {
        same(got, o, `Cast ${from} -> ${to}`);
      }
      compared++;
    }
  }
  assert.ok(compared > 60);
});

test('data movement keeps every type: Where, Gather, Concat', async () => {
  for (const type of [...Object.keys(INTS), 'float16', 'bfloat16', 'bool']) {
    const data = INTS[type] ? ints(type, 6, 9) : type === 'bool' ? Uint8Array.from([1, 0, 1, 1, 0, 0]) : Uint16Array.from([0x3c00, 0x7c00, 0x8001, 0x7bff, 0x1234, 0x0400]);
    const other = data.slice().reverse();
    const cond = { type: 'bool', data: Uint8Array.from([1, 0, 0, 1, 1, 0]) };
    const picked = data.map((v, k) => (cond.data[k] ? v : other[k]));
    await check('Where', ['bool', type, type], type, { x0: cond, x1: { type, data }, x2: { type, data: other } }, { type, data: picked });
    const idx = { type: 'int32', data: Int32Array.from([5, -1, 0, 2]) };
    await check('Gather', [type, 'int32'], type, { x0: { type, data }, x1: idx }, { type, data: data.constructor.from([data[5], data[5], data[0], data[2]]) });
    const both = new data.constructor(12);
    both.set(data), both.set(other, 6);
    await check('Concat', [type, type], type, { x0: { type, data }, x1: { type, data: other } }, { type, data: both }, { axis: 0 });
  }
});

test('feeds of the wrong type and refused types are errors with a kind', async () => {
  const s = await om.InferenceSession.create(model('Add', ['int8', 'int8'], 'int8'));
  try {
    assert.deepEqual(s.inputs.map((v) => [v.dtype, v.type]), [['int64', 'int8'], ['int64', 'int8']]);
    assert.throws(() => s.run({ x0: { data: Int16Array.of(1), dims: [1] }, x1: { data: Int8Array.of(1), dims: [1] } }), (e) => e instanceof om.OmError && e.kind === 'DtypeMismatch' && /feed "x0" is int16, the graph takes int8/.test(e.message));
    assert.throws(() => s.run({ x0: { type: 'int8', data: Int16Array.of(1), dims: [1] }, x1: { data: Int8Array.of(1), dims: [1] } }), (e) => e.kind === 'InvalidArgument' && /is int8 but its data is a Int16Array/.test(e.message));
    const t = om.tensor(BigInt64Array.of(200n), { dtype: 'int64', shape: [1] }); /* an om.Tensor in the dtype that holds int8: narrowed */
    const y = s.run({ x0: t, x1: t });
    assert.deepEqual(Array.from(y.y.toArray()), [BigInt(((400 + 128) % 256) - 128)]);
    assert.deepEqual(s.outputTypes, { y: 'int8' });
    y.y.dispose(), t.dispose();
    assert.throws(() => s.run({ x0: { type: 'float64', data: Float64Array.of(1), dims: [1] }, x1: { data: Int8Array.of(1), dims: [1] } }), (e) => e.kind === 'InvalidArgument' && /has type a string \("float64"\); the graph layer takes float32, uint8, int8/.test(e.message));
  } finally {
    s.dispose();
  }
  await assert.rejects(om.InferenceSession.create(model('Add', ['float64', 'float64'], 'float64')), (e) => e.kind === 'Unsupported' && /graph input 'x0' has element type DOUBLE \(11\)/.test(e.message));
  await assert.rejects(om.InferenceSession.create(model('Add', ['float8e5m2', 'float8e5m2'], 'float8e5m2')), (e) => e.kind === 'Unsupported' && /graph input 'x0' has element type FLOAT8E5M2 \(19\)/.test(e.message));
  const d = await om.InferenceSession.create(model('Div', ['int32', 'int32'], 'int32'));
  try {
    assert.throws(() => d.run({ x0: { data: Int32Array.of(1), dims: [1] }, x1: { data: Int32Array.of(0), dims: [1] } }), (e) => e.kind === 'InvalidArgument' && /integer division by zero/.test(e.message));
    const r = d.runData({ x0: { data: Int32Array.of(-(2 ** 31)), dims: [1] }, x1: { data: Int32Array.of(-1), dims: [1] } }); /* wraps, as ONNX's reference (numpy) */
    assert.deepEqual(Array.from(r.y.data), [-(2 ** 31)]);
  } finally {
    d.dispose();
  }
});

/** A model of op on named inputs [name, type, dims], outputs [name, type]; attrs ints. */
function quantModel(op, inputs, outputs, attrs = {}) {
  return onnxBytes({ nodes: [{ op, inputs: inputs.map((i) => i[0]), outputs: outputs.map((o) => o[0]), ints: attrs }], inputs: inputs.map(([name, dtype, dims]) => ({ name, dtype, dims })), outputs: outputs.map(([name, dtype]) => ({ name, dtype })), opset: 20 });
}

/** Every output of the Session and onnxruntime-web on feeds ({ name: { type, data, dims } }): the same types, dims and elements. */
async function agreeAll(bytes, feeds, what) {
  const s = await om.InferenceSession.create(bytes), o = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
  try {
    const got = s.runData(Object.fromEntries(Object.entries(feeds).map(([n, f]) => [n, f])));
    const want = await o.run(Object.fromEntries(Object.entries(feeds).map(([n, f]) => [n, new ort.Tensor(f.type, f.data, f.dims)])));
    for (const [name, w] of Object.entries(want)) {
      assert.deepEqual(got[name].dims, w.dims, `${what}: ${name}'s dims`);
      same(got[name], { type: w.type, data: w.data }, `${what}: ${name}`);
    }
  } finally {
    s.dispose();
    await o.release();
  }
}

test('QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear as onnxruntime-web, per tensor and per axis', async () => {
  const x = { type: 'float32', dims: [2, 3, 2], data: Float32Array.from([0, 0.5, 1.5, 2.5, -0.5, -1.5, 100, -100, 12.75, 3.3, -7.49, 1e9]) };
  for (const zt of ['uint8', 'int8']) {
    const zp = { type: zt, dims: [], data: zt === 'uint8' ? Uint8Array.of(128) : Int8Array.of(-3) };
    await agreeAll(quantModel('QuantizeLinear', [['x', 'float32', [2, 3, 2]], ['s', 'float32', []], ['z', zt, []]], [['y', zt]]), { x, s: { type: 'float32', dims: [], data: Float32Array.of(0.5) }, z: zp }, `QuantizeLinear to ${zt}`);
    const zs = { type: zt, dims: [3], data: zt === 'uint8' ? Uint8Array.of(0, 10, 255) : Int8Array.of(-128, 0, 5) };
    await agreeAll(quantModel('QuantizeLinear', [['x', 'float32', [2, 3, 2]], ['s', 'float32', [3]], ['z', zt, [3]]], [['y', zt]]), { x, s: { type: 'float32', dims: [3], data: Float32Array.of(0.5, 0.1, 3) }, z: zs }, `QuantizeLinear to ${zt} per axis`);
    const q = { type: zt, dims: [2, 3, 2], data: zt === 'uint8' ? Uint8Array.from([0, 1, 127, 128, 255, 3, 9, 200, 17, 64, 250, 2]) : Int8Array.from([-128, -1, 0, 1, 127, 5, -7, 100, -100, 33, 2, 9]) };
    await agreeAll(quantModel('DequantizeLinear', [['q', zt, [2, 3, 2]], ['s', 'float32', [3]], ['z', zt, [3]]], [['y', 'float32']]), { q, s: { type: 'float32', dims: [3], data: Float32Array.of(0.5, 0.1, 3) }, z: zs }, `DequantizeLinear of ${zt} per axis`);
    await agreeAll(quantModel('DequantizeLinear', [['q', zt, [2, 3, 2]], ['s', 'float32', []], ['z', zt, []]], [['y', 'float32']]), { q, s: { type: 'float32', dims: [], data: Float32Array.of(0.02) }, z: zp }, `DequantizeLinear of ${zt}`);
  }
  await agreeAll(quantModel('QuantizeLinear', [['x', 'float32', [2, 3, 2]], ['s', 'float32', []]], [['y', 'uint8']]), { x, s: { type: 'float32', dims: [], data: Float32Array.of(0.25) } }, 'QuantizeLinear without a zero point');
  await agreeAll(quantModel('DequantizeLinear', [['q', 'int32', [4]], ['s', 'float32', []]], [['y', 'float32']]), { q: { type: 'int32', dims: [4], data: Int32Array.of(-(2 ** 31), 2 ** 31 - 1, 7, 0) }, s: { type: 'float32', dims: [], data: Float32Array.of(0.001) } }, 'DequantizeLinear of int32');
  for (const data of [Float32Array.from([0, 0.5, 1.5, -2.5, 3.1, -0.7]), Float32Array.from([1, 2, 3, 4, 5, 6]), Float32Array.from([-1, -2, -3, -4, -5, -6.5])]) {
    await agreeAll(quantModel('DynamicQuantizeLinear', [['x', 'float32', [2, 3]]], [['y', 'uint8'], ['s', 'float32'], ['z', 'uint8']]), { x: { type: 'float32', dims: [2, 3], data } }, `DynamicQuantizeLinear of [${data}]`);
  }
  const s = await om.InferenceSession.create(quantModel('QuantizeLinear', [['x', 'float32', [2, 3, 2]], ['s', 'float32', [2]]], [['y', 'uint8']]));
  try {
    assert.throws(() => s.run({ x, s: { type: 'float32', dims: [2], data: Float32Array.of(1, 2) } }), (e) => e.kind === 'ShapeMismatch' && /input 1 has 2 values; per-axis quantization takes one per element of axis 1 \(3\)/.test(e.message));
  } finally {
    s.dispose();
  }
  const u = await om.InferenceSession.create(quantModel('QuantizeLinear', [['x', 'float32', [2]], ['s', 'float32', []], ['z', 'int16', []]], [['y', 'int16']]));
  try {
    assert.throws(() => u.run({ x: { type: 'float32', dims: [2], data: Float32Array.of(1, 2) }, s: { type: 'float32', dims: [], data: Float32Array.of(1) }, z: { type: 'int16', dims: [], data: Int16Array.of(0) } }), (e) => e.kind === 'Unsupported' && /quantized type 5 is not supported \(UINT8, INT8\)/.test(e.message));
  } finally {
    u.dispose();
  }
});

test('MatMulInteger and QLinearMatMul: exact integer products, as onnxruntime-web', async () => {
  for (const [at, bt] of [['uint8', 'uint8'], ['int8', 'int8'], ['uint8', 'int8']]) {
    for (const [M, K, N] of [[2, 3, 4], [3, 300, 2], [1, 600, 5]]) { /* K past 256 and 512: more than one exact chunk */
      const A = { type: at, dims: [M, K], data: ints(at, M * K, K + 1) }, B = { type: bt, dims: [K, N], data: ints(bt, K * N, N + 2) };
      const az = { type: at, dims: [], data: INTS[at][2].of(at === 'uint8' ? 255 : -128) }, bz = { type: bt, dims: [N], data: ints(bt, N, 5) };
      await agreeAll(quantModel('MatMulInteger', [['A', at, [M, K]], ['B', bt, [K, N]], ['az', at, []], ['bz', bt, [N]]], [['y', 'int32']]), { A, B, az, bz }, `MatMulInteger ${at} x ${bt} [${M}, ${K}, ${N}]`);
      const f = (v) => ({ type: 'float32', dims: [], data: Float32Array.of(v) });
      const yz = { type: at, dims: [], data: INTS[at][2].of(at === 'uint8' ? 100 : -5) };
      await agreeAll(quantModel('QLinearMatMul', [['A', at, [M, K]], ['as', 'float32', []], ['az', at, []], ['B', bt, [K, N]], ['bs', 'float32', []], ['bz', bt, []], ['ys', 'float32', []], ['yz', at, []]], [['y', at]]),
        { A, as: f(0.02), az, B, bs: f(0.003), bz: { type: bt, dims: [], data: bz.data.slice(0, 1) }, ys: f(K > 3 ? 3.7 : 0.05), yz }, `QLinearMatMul ${at} x ${bt} [${M}, ${K}, ${N}]`);
    }
  }
});

test('ConvInteger: exact integer convolutions, as onnxruntime-web', async () => {
  for (const [xt, wt] of [['uint8', 'uint8'], ['uint8', 'int8']]) {
    for (const [C, k, pads] of [[3, 3, [1, 1, 1, 1]], [40, 3, [0, 1, 2, 0]], [2, 1, [0, 0, 0, 0]]]) { /* 40 channels of 3 x 3: two chunks */
      const x = { type: xt, dims: [2, C, 5, 6], data: ints(xt, 2 * C * 30, C + 7) }, w = { type: wt, dims: [4, C, k, k], data: ints(wt, 4 * C * k * k, k + 9) };
      const xz = { type: xt, dims: [], data: INTS[xt][2].of(xt === 'uint8' ? 200 : -7) }, wz = { type: wt, dims: [], data: INTS[wt][2].of(wt === 'uint8' ? 3 : -128) };
      const bytes = onnxBytes({ nodes: [{ op: 'ConvInteger', inputs: ['x', 'w', 'xz', 'wz'], outputs: ['y'], ints: { pads, strides: [1, 2] } }], inputs: [['x', xt, x.dims], ['w', wt, w.dims], ['xz', xt, []], ['wz', wt, []]].map(([name, dtype, dims]) => ({ name, dtype, dims })), outputs: [{ name: 'y', dtype: 'int32' }], opset: 20 });
      await agreeAll(bytes, { x, w, xz, wz }, `ConvInteger ${xt} x ${wt}, ${C} channels of ${k} x ${k}`);
    }
  }
});

test('QLinearConv: per tensor and per output channel, with a bias, as onnxruntime-web', async () => {
  for (const [xt, wt, yt] of [['uint8', 'uint8', 'uint8'], ['uint8', 'int8', 'uint8'], ['int8', 'int8', 'int8']]) {
    for (const M of [1, 3]) {
      const C = 30, x = { type: xt, dims: [1, C, 4, 5], data: ints(xt, C * 20, 11) }, w = { type: wt, dims: [M, C, 3, 3], data: ints(wt, M * C * 9, 12) };
      const f = (dims, ...v) => ({ type: 'float32', dims, data: Float32Array.from(v) });
      const z = (t, dims, ...v) => ({ type: t, dims, data: INTS[t][2].from(v) });
      const feeds = { x, xs: f([], 0.05), xz: z(xt, [], xt === 'uint8' ? 128 : -3), w, ws: M > 1 ? f([M], 0.01, 0.002, 0.03) : f([], 0.004), wz: z(wt, [], 0), ys: f([], 0.7), yz: z(yt, [], yt === 'uint8' ? 120 : 4), B: { type: 'int32', dims: [M], data: Int32Array.from({ length: M }, (_, m) => (m - 1) * 3000) } };
      const bytes = onnxBytes({ nodes: [{ op: 'QLinearConv', inputs: Object.keys(feeds), outputs: ['y'], ints: { pads: [1, 0, 1, 2] } }], inputs: Object.entries(feeds).map(([name, v]) => ({ name, dtype: v.type, dims: v.dims })), outputs: [{ name: 'y', dtype: yt }], opset: 20 });
      await agreeAll(bytes, feeds, `QLinearConv ${xt} x ${wt} -> ${yt}, ${M} output channels`);
    }
  }
});
