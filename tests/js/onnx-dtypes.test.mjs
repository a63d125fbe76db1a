// Element types in the Session (docs/graph-runtime.md, "Element types"): every integer type up to
// 32 bits held in int64 and wrapped after each op, UINT64 as its bits in int64 (read unsigned), float16 and bfloat16 held in float32 and
// rounded to nearest even after each op. Each one-node model runs in the Session (runData: the
// type's own typed array) and is checked against ONNX's rule computed here (BigInt wrap-around,
// float16 rounding by scaling) and against onnxruntime-web wherever it has a kernel for the type.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import * as ort from 'onnxruntime-web';
import { memoryHooks } from './helpers.mjs';
import { onnxBytes } from '../../tools/onnx_bytes.mjs';
import { sessionRefuses } from './onnx-agree.mjs';

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

/** x (a BigInt below 2^64) rounded to nearest even at `bits` significant bits, as a Number. */
function roundBig(x, bits) {
  let shift = 0n;
  while (x >> shift >= 1n << BigInt(bits)) shift++;
  let q = x >> shift;
  const rem = x - (q << shift), half = shift ? 1n << (shift - 1n) : 1n;
  if (shift && (rem > half || (rem === half && q & 1n))) q++;
  return Number(q) * 2 ** Number(shift);
}

test('UINT64: its bits in int64, read unsigned by the rules whose result depends on it', async () => {
  const U = (...v) => BigUint64Array.from(v);
  const top = 2n ** 63n, max = 2n ** 64n - 1n;
  const a = U(0n, 1n, top, max, top - 1n, 12345678901234567890n, 3n, 2n ** 32n + 5n, 7n, top + 7n, 1000n, max - 1n);
  const b = U(1n, max, 3n, top, 5n, 987654321n, top + 1n, 7n, max, 1n, 64n, top - 1n);
  const u = (v) => BigInt.asUintN(64, v);
  const ref = {
    Add: (x, y) => u(x + y), Sub: (x, y) => u(x - y), Mul: (x, y) => u(x * y), BitwiseAnd: (x, y) => x & y, BitwiseOr: (x, y) => x | y, BitwiseXor: (x, y) => x ^ y,
    Max: (x, y) => (x > y ? x : y), Min: (x, y) => (x < y ? x : y), Mod: (x, y) => x % y,
  };
  ortRan = 0;
  for (const [op, f] of Object.entries(ref)) {
    await check(op, ['uint64', 'uint64'], 'uint64', { x0: { type: 'uint64', data: a }, x1: { type: 'uint64', data: b } }, { type: 'uint64', data: BigUint64Array.from(a, (x, k) => f(x, b[k])) });
  }
  const cmp = { Less: (x, y) => x < y, LessOrEqual: (x, y) => x <= y, Greater: (x, y) => x > y, GreaterOrEqual: (x, y) => x >= y, Equal: (x, y) => x === y };
  for (const [op, f] of Object.entries(cmp)) {
    await check(op, ['uint64', 'uint64'], 'bool', { x0: { type: 'uint64', data: a }, x1: { type: 'uint64', data: b } }, { type: 'bool', data: Uint8Array.from(a, (x, k) => Number(f(x, b[k]))) });
  }
  await check('BitwiseNot', ['uint64'], 'uint64', { x0: { type: 'uint64', data: a } }, { type: 'uint64', data: BigUint64Array.from(a, (x) => u(~x)) });
  /* shifts below 64 against onnxruntime-web too; 64 or more leave 0 (ONNX's reference; C leaves them undefined) */
  const y = U(0n, 1n, 63n, 62n, 5n, 32n, 17n, 1n, 2n, 63n, 40n, 3n), far = U(64n, 65n, top, max, 100n, 64n, 64n, 64n, 64n, 64n, 64n, 64n);
  for (const dir of ['LEFT', 'RIGHT']) {
    const shift = (x, s) => (s >= 64n ? 0n : dir === 'LEFT' ? u(x << s) : x >> s);
    for (const s of [y, far]) {
      const feeds = { x0: { type: 'uint64', data: a }, x1: { type: 'uint64', data: s } }, want = { type: 'uint64', data: BigUint64Array.from(a, (x, k) => shift(x, s[k])) };
      const m = onnxBytes({ nodes: [{ op: 'BitShift', inputs: ['x0', 'x1'], outputs: ['y'], strings: { direction: dir } }], inputs: ['x0', 'x1'].map((name) => ({ name, dtype: 'uint64', dims: ['n'] })), outputs: [{ name: 'y', dtype: 'uint64' }], opset: 20 });
      same(await ours(m, feeds), want, `BitShift ${dir} uint64`);
      if (s === y) same(await ours(m, feeds), await theirs(m, feeds), `BitShift ${dir} uint64 against onnxruntime-web`);
    }
  }
  assert.ok(ortRan >= 8, `onnxruntime-web ran ${ortRan} of the UINT64 cases (at least Max, Min, Mod, the bitwise ops and the comparisons)`);
  /* casts from UINT64 round once (2^63 + 2^39 + 1 to float32 is 2^63 + 2^40: through a double it would tie and round to even) */
  const c = U(0n, 1n, top + 2n ** 39n + 1n, max, 2n ** 53n + 1n, top + 2n ** 55n + 1n, 65504n, 65520n);
  const bitsBf = (v) => new Uint32Array(new Float32Array([v]).buffer)[0] >>> 16;
  const casts = {
    float32: [1, Float32Array.from(c, (x) => roundBig(x, 24))], float64: [11, Float64Array.from(c, (x) => roundBig(x, 53))],
    bfloat16: [16, Uint16Array.from(c, (x) => bitsBf(roundBig(x, 8)))], int64: [7, BigInt64Array.from(c, (x) => BigInt.asIntN(64, x))],
    int8: [3, Int8Array.from(c, (x) => Number(BigInt.asIntN(8, x)))], uint32: [12, Uint32Array.from(c, (x) => Number(BigInt.asUintN(32, x)))],
    bool: [9, Uint8Array.from(c, (x) => Number(x !== 0n))], float16: [10, Uint16Array.from(c, (x) => (x > 65519n ? 0x7c00 : bitsOfHalf(roundBig(x, 11))))],
  };
  for (const [to, [n, want]] of Object.entries(casts)) {
    const bytes = model('Cast', ['uint64'], to, { to: n }), feeds = { x0: { type: 'uint64', data: c } };
    same(await ours(bytes, feeds), { type: to, data: want }, `Cast uint64 -> ${to}`);
    const o = await theirs(bytes, feeds);
    if (o && to !== 'float16' && to !== 'bfloat16') same(await ours(bytes, feeds), o, `Cast uint64 -> ${to} against onnxruntime-web`);
  }
  /* to UINT64: integers' bits (a negative wraps), floats truncated (those in range: ONNX leaves the rest undefined) */
  const fl = Float32Array.of(0, 1.5, 2 ** 63, 2 ** 64 - 2 ** 40, 1e19, 3.99);
  const toU = [
    ['float32', fl, BigUint64Array.from(fl, (v) => BigInt(Math.trunc(v)))], ['float64', Float64Array.from(fl), BigUint64Array.from(fl, (v) => BigInt(Math.trunc(v)))],
    ['int8', Int8Array.of(-1, 5, -128), U(max, 5n, 2n ** 64n - 128n)], ['int64', BigInt64Array.of(-1n, -(2n ** 63n), 7n), U(max, top, 7n)],
  ];
  for (const [from, data, want] of toU) {
    const bytes = model('Cast', [from], 'uint64', { to: 13 }), feeds = { x0: { type: from, data } };
    same(await ours(bytes, feeds), { type: 'uint64', data: want }, `Cast ${from} -> uint64`);
  }
  /* an op that would read the bits as signed is refused, naming the node; so is a cast to STRING */
  await assert.rejects(ours(model('ReduceMax', ['uint64'], 'uint64'), { x0: { type: 'uint64', data: a } }), (e) => e.kind === 'Unsupported' && /\(ReduceMax\): input 0 is UINT64, which ReduceMax does not take/.test(e.message));
  await assert.rejects(ours(model('Cast', ['uint64'], 'string', { to: 8 }), { x0: { type: 'uint64', data: a } }), (e) => e.kind === 'Unsupported' && /a cast of FLOAT16, BFLOAT16, UINT64 or a float8 type to STRING is not supported/.test(e.message));
});

test('ReduceMax and ReduceMin of bool: any and all', async () => {
  for (const [data, max, min] of [[[1, 0, 1], 1, 0], [[1, 1], 1, 1], [[0, 0, 0, 0], 0, 0]]) {
    await check('ReduceMax', ['bool'], 'bool', { x0: { type: 'bool', data: Uint8Array.from(data) } }, { type: 'bool', data: Uint8Array.of(max) });
    await check('ReduceMin', ['bool'], 'bool', { x0: { type: 'bool', data: Uint8Array.from(data) } }, { type: 'bool', data: Uint8Array.of(min) });
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
    assert.throws(() => s.run({ x0: { data: Float64Array.of(1), dims: [1] }, x1: { data: Int8Array.of(1), dims: [1] } }), (e) => e.kind === 'DtypeMismatch' && /feed "x0" is float64, the graph takes int8/.test(e.message));
    assert.throws(() => s.run({ x0: { type: 'complex64', data: Float32Array.of(1, 0), dims: [1] }, x1: { data: Int8Array.of(1), dims: [1] } }), (e) => e.kind === 'InvalidArgument' && /has type a string \("complex64"\); the graph layer takes float32, uint8, int8/.test(e.message));
  } finally {
    s.dispose();
  }
  await assert.rejects(om.InferenceSession.create(model('Add', ['complex64', 'complex64'], 'complex64')), (e) => e.kind === 'Unsupported' && /graph input 'x0' has element type COMPLEX64 \(14\); the graph layer takes FLOAT, DOUBLE, /.test(e.message));
  const d = await om.InferenceSession.create(model('Div', ['int32', 'int32'], 'int32'));
  try {
    assert.throws(() => d.run({ x0: { data: Int32Array.of(1), dims: [1] }, x1: { data: Int32Array.of(0), dims: [1] } }), (e) => e.kind === 'InvalidArgument' && /integer division by zero/.test(e.message));
    const r = d.runData({ x0: { data: Int32Array.of(-(2 ** 31)), dims: [1] }, x1: { data: Int32Array.of(-1), dims: [1] } }); /* wraps, as ONNX's reference (numpy) */
    assert.deepEqual(Array.from(r.y.data), [-(2 ** 31)]);
  } finally {
    d.dispose();
  }
});

// DOUBLE: held in float64 and computed in double, never through float32 (docs/graph-runtime.md,
// "Element types"). JS numbers are IEEE doubles, so a + b here is ONNX's double result to the bit.
const D = (...v) => ({ type: 'float64', data: Float64Array.from(v) });

test('DOUBLE arithmetic, extremes, Mod and comparisons are double operations, as onnxruntime-web', async () => {
  const a = D(0.1, 1 + 2 ** -52, -3.5, 1e300, 2 ** -1074, -0, NaN, Infinity, 7.25, -1e-310, 1e308);
  const b = D(0.2, 2 ** -52, 2, 1e10, 3, 5, 1, 2, -2, 0.5, 10);
  const ref = { Add: (x, y) => x + y, Sub: (x, y) => x - y, Mul: (x, y) => x * y, Div: (x, y) => x / y, Max: Math.max, Min: Math.min, Mod: (x, y) => x % y };
  for (const [op, f] of Object.entries(ref)) {
    const want = Float64Array.from(a.data, (v, k) => f(v, b.data[k]));
    await check(op, ['float64', 'float64'], 'float64', { x0: a, x1: b }, { type: 'float64', data: want }, op === 'Mod' ? { fmod: 1 } : {});
  }
  assert.equal((await ours(model('Add', ['float64', 'float64'], 'float64'), { x0: D(0.1), x1: D(0.2) })).data[0], 0.30000000000000004); /* float32 would give 0.30000001192092896 */
  /* past 2^24, where float32 has no halves: Floor and Round truncate through int64 and back to double */
  await check('Floor', ['float64'], 'float64', { x0: D(16777217.5, -2.5, 1e300, -0.5, 2 ** 51 + 0.5) }, { type: 'float64', data: Float64Array.of(16777217, -3, 1e300, -1, 2 ** 51) });
  await check('Round', ['float64'], 'float64', { x0: D(16777217.5, -2.5, 2.5000000001, -0.4, 16777216.5) }, { type: 'float64', data: Float64Array.of(16777218, -2, 3, -0, 16777216) });
  for (const [op, f] of [['Equal', (x, y) => x === y], ['Less', (x, y) => x < y], ['Greater', (x, y) => x > y]]) {
    const x = D(1 + 2 ** -52, 1, NaN, -0, 3), y = D(1, 1 + 2 ** -52, NaN, 0, 3);
    await check(op, ['float64', 'float64'], 'bool', { x0: x, x1: y }, { type: 'bool', data: Uint8Array.from(x.data, (v, k) => f(v, y.data[k])) });
  }
  const cond = { type: 'bool', data: Uint8Array.of(1, 0, 1) };
  await check('Where', ['bool', 'float64', 'float64'], 'float64', { x0: cond, x1: D(0.1, 0.2, 1e-320), x2: D(-1, 2 ** 60 + 1, 5) }, { type: 'float64', data: Float64Array.of(0.1, 2 ** 60 + 1, 1e-320) });
});

test('Cast to and from DOUBLE rounds once: to FLOAT16 and BFLOAT16 straight from the double', async () => {
  const cast = (from, to, code, x) => ours(model('Cast', [from], to, { to: code }), { x0: x });
  /* just above a float16 (bfloat16) tie, below float32's last bit: through float32 it would land on the tie and round to even (down) */
  const near = D(1 + 2 ** -11 + 2 ** -40, 1 + 2 ** -8 + 2 ** -40, -(1 + 2 ** -11 + 2 ** -40), 65520 - 2 ** -30, 65520, 2 ** -25 + 2 ** -60, NaN, -Infinity, 1e-300);
  same(await cast('float64', 'float16', 10, near), { type: 'float16', data: Uint16Array.of(0x3c01, 0x3c04, 0xbc01, 0x7bff, 0x7c00, 0x0001, 0x7e00, 0xfc00, 0x0000) }, 'Cast DOUBLE -> FLOAT16');
  same(await cast('float64', 'bfloat16', 16, near), { type: 'bfloat16', data: Uint16Array.of(0x3f80, 0x3f81, 0xbf80, 0x4780, 0x4780, 0x3300, 0x7fc0, 0xff80, 0x0000) }, 'Cast DOUBLE -> BFLOAT16');
  const d = D(0.1, 1 + 2 ** -30, 3.4e38, 3.5e38, -2.75, 1e-46, NaN);
  same(await cast('float64', 'float32', 1, d), { type: 'float32', data: Float32Array.from(d.data, Math.fround) }, 'Cast DOUBLE -> FLOAT');
  same(await cast('float64', 'int32', 6, D(2.9, -2.9, 0, 2 ** 31 - 1)), { type: 'int32', data: Int32Array.of(2, -2, 0, 2 ** 31 - 1) }, 'Cast DOUBLE -> INT32 truncates');
  same(await cast('float64', 'bool', 9, D(0, -0, 2 ** -1074, NaN)), { type: 'bool', data: Uint8Array.of(0, 0, 1, 1) }, 'Cast DOUBLE -> BOOL');
  const f = Float32Array.of(0.1, 16777217, -1e-45, Infinity);
  same(await cast('float32', 'float64', 11, { type: 'float32', data: f }), { type: 'float64', data: Float64Array.from(f) }, 'Cast FLOAT -> DOUBLE is exact');
  same(await cast('int64', 'float64', 11, { type: 'int64', data: BigInt64Array.of(2n ** 53n + 1n, -(2n ** 62n) - 1n, 7n) }), { type: 'float64', data: Float64Array.of(2 ** 53, -(2 ** 62), 7) }, 'Cast INT64 -> DOUBLE rounds to nearest even');
  /* onnxruntime-web goes through float32 to float16 (double rounding), so it is compared away from ties */
  for (const [from, to, code, x] of [['float64', 'float16', 10, D(0.1, -3.3, 65504, 1e-6, 7e-8)], ['float64', 'float32', 1, d], ['float32', 'float64', 11, { type: 'float32', data: f }]]) {
    const o = await theirs(model('Cast', [from], to, { to: code }), { x0: x });
    if (o) same(await cast(from, to, code, x), o, `Cast ${from} -> ${to} against onnxruntime-web`);
  }
});

test('DOUBLE reductions, CumSum (exclusive, reverse) and ReduceLogSumExp stay in double', async () => {
  const x = D(0.1, 0.2, 0.3, 0.4);
  const sums = (v) => v.reduce((acc, e) => [...acc, (acc.length ? acc[acc.length - 1] : 0) + e], []);
  const axis = { type: 'int64', data: BigInt64Array.of(0n) };
  const cases = [[{}, sums([0.1, 0.2, 0.3, 0.4])], [{ exclusive: 1 }, [0, ...sums([0.1, 0.2, 0.3])]], [{ reverse: 1 }, sums([0.4, 0.3, 0.2, 0.1]).reverse()], [{ exclusive: 1, reverse: 1 }, [...sums([0.4, 0.3, 0.2]).reverse(), 0]]];
  for (const [attrs, want] of cases) await check('CumSum', ['float64', 'int64'], 'float64', { x0: x, x1: axis }, { type: 'float64', data: Float64Array.from(want) }, attrs);
  await check('ReduceSum', ['float64'], 'float64', { x0: x }, { type: 'float64', data: Float64Array.of(((0.1 + 0.2) + 0.3) + 0.4) });
  await check('ReduceMax', ['float64'], 'float64', { x0: D(1, 1 + 2 ** -52, -5) }, { type: 'float64', data: Float64Array.of(1 + 2 ** -52) });
  const lse = (await ours(model('ReduceLogSumExp', ['float64'], 'float64'), { x0: D(1000, 1000, -Infinity) })).data[0];
  assert.ok(Math.abs(lse - (1000 + Math.LN2)) <= 2 ** -42, `ReduceLogSumExp of [1000, 1000, -inf] is ${lse}`); /* float32's step at 1000 is 2^-14 */
});

test('ops without a double kernel refuse DOUBLE with a kind; eager float64 tensors read back as Float64Array and are not traced', async () => {
  const s = await om.InferenceSession.create(onnxBytes({ nodes: [{ op: 'MatMul', inputs: ['a', 'b'], outputs: ['y'] }], inputs: [{ name: 'a', dtype: 'float64', dims: [2, 2] }, { name: 'b', dtype: 'float64', dims: [2, 2] }], outputs: [{ name: 'y', dtype: 'float64' }], opset: 20 }));
  try {
    const m = { type: 'float64', dims: [2, 2], data: Float64Array.of(1, 2, 3, 4) };
    assert.throws(() => s.run({ a: m, b: m }), (e) => e instanceof om.OmError && e.kind === 'DtypeMismatch' && /MatMul_0 \(MatMul\): takes no float64 \(input 0; onemodel\/docs\/graph-runtime\.md lists the ops computed in double\)/.test(e.message));
  } finally {
    s.dispose();
  }
  const t = om.tensor([0.1, 0.2], { dtype: 'float64' }), u = t.add(0.2), m = om.tensor([[1, 2], [3, 4]], { dtype: 'float64' });
  try {
    assert.equal(t.dtype, 'float64');
    assert.ok(u.toArray() instanceof Float64Array);
    assert.deepEqual(Array.from(u.toArray()), [0.1 + 0.2, 0.2 + 0.2]);
    assert.throws(() => m.matmul(m), (e) => e.kind === 'DtypeMismatch' && /takes no float64/.test(e.message));
    assert.deepEqual(om.tidy(() => Array.from(t.sqrt().toArray())), [Math.sqrt(0.1), Math.sqrt(0.2)]); /* in double, not through float32 */
    assert.throws(() => om.tidy(() => t.sin()), (e) => e.kind === 'DtypeMismatch' && /^sin: takes float32, not float64/.test(e.message));
    assert.throws(() => om.tidy(() => om.trace((v) => v.to('float64').add(1), { x: om.tensor([1, 2]) })),
      (e) => e instanceof om.TraceError && e.kind === 'UnsupportedOperation' && /^to: cannot be traced: float64 is not traced \(a trace holds float32, int64 and bool\)/.test(e.message));
  } finally {
    t.dispose(), u.dispose(), m.dispose();
  }
});

test('the float8 types: Cast rounds to their bits (ties to even, saturating), reads them back, and QuantizeLinear to them', async () => {
  const x = { type: 'float32', data: Float32Array.of(1, 448, 1000, -Infinity, 2 ** -10, 3 * 2 ** -10, 1.0625, -0, NaN) };
  const bits = { /* worked out from each type's sign, exponent (bias 7, 8, 15, 16) and fraction bits */
    float8e4m3fn: [17, [0x38, 0x7e, 0x7e, 0xfe, 0x00, 0x02, 0x38, 0x80, 0x7f]],
    float8e4m3fnuz: [18, [0x40, 0x7f, 0x7f, 0xff, 0x01, 0x03, 0x40, 0x00, 0x80]],
    float8e5m2: [19, [0x3c, 0x5f, 0x64, 0xfb, 0x14, 0x1a, 0x3c, 0x80, 0x7f]],
    float8e5m2fnuz: [20, [0x40, 0x63, 0x68, 0xff, 0x18, 0x1e, 0x40, 0x00, 0x80]],
  };
  for (const [type, [code, want]] of Object.entries(bits)) {
    const got = await ours(model('Cast', ['float32'], type, { to: code }), { x0: x });
    assert.equal(got.type, type);
    assert.deepEqual(Array.from(got.data), want, `Cast float32 -> ${type}`);
    const back = await ours(model('Cast', [type], 'float32', { to: 1 }), { x0: { type, data: Uint8Array.from(want) } });
    const again = await ours(model('Cast', ['float32'], type, { to: code }), { x0: { type: 'float32', data: back.data } });
    assert.deepEqual(Array.from(again.data), want, `${type} -> float32 -> ${type} keeps the bits`);
  }
  const e4 = await ours(model('Cast', ['float8e4m3fn'], 'float32', { to: 1 }), { x0: { type: 'float8e4m3fn', data: Uint8Array.of(0x38, 0x7e, 0x01, 0x80, 0x7f, 0xb4) } });
  same(e4, { type: 'float32', data: Float32Array.of(1, 448, 2 ** -9, -0, NaN, -0.75) }, 'FLOAT8E4M3FN bits read');
  const unsat = await ours(model('Cast', ['float32'], 'float8e5m2', { to: 19, saturate: 0 }), { x0: { type: 'float32', data: Float32Array.of(1e6, -Infinity, 60000) } });
  assert.deepEqual(Array.from(unsat.data), [0x7c, 0xfc, 0x7b], 'E5M2 without saturation: infinities past 61440, 57344 below');
  const q = await ours(quantModel('QuantizeLinear', [['x0', 'float32', [3]], ['s', 'float32', [1]], ['z', 'float8e4m3fn', [1]]], [['y', 'float8e4m3fn']]),
    { x0: { type: 'float32', data: Float32Array.of(2, 1000, -0.3) }, s: { type: 'float32', data: Float32Array.of(2) }, z: { type: 'float8e4m3fn', data: Uint8Array.of(0) } });
  assert.deepEqual(Array.from(q.data), [0x38, 0x7e, 0xa2], 'QuantizeLinear to FLOAT8E4M3FN: 1, 500 saturated to 448, -0.15 to -0.15625');
  const s = await om.InferenceSession.create(model('Cast', ['float8e5m2'], 'float32', { to: 1 }));
  try {
    assert.throws(() => s.run({ x0: { type: 'float8e5m2', data: Uint16Array.of(1), dims: [1] } }), (e) => e.kind === 'InvalidArgument' && /is float8e5m2 but its data is a Uint16Array/.test(e.message));
    assert.throws(() => s.run({ x0: { data: Uint8Array.of(1), dims: [1] } }), (e) => e.kind === 'InvalidArgument' && /has type undefined/.test(e.message));
  } finally {
    s.dispose();
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
  await sessionRefuses(quantModel('QuantizeLinear', [['x', 'float32', [2, 3, 2]], ['s', 'float32', [2]]], [['y', 'uint8']]), { x, s: { type: 'float32', dims: [2], data: Float32Array.of(1, 2) } },
                       'ShapeMismatch', /input 1 has 2 values; per-axis quantization takes one per element of axis 1 \(3\)/);
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
