// The inputs the page runs an opened file on: generated at the sizes the person gives the
// symbolic axes (float32: a fixed pseudo-random pattern in [-1, 1); int64 and bool: 0, 1, 0, ...,
// valid ids and masks for any vocabulary), or uploaded as JSON, { name: { dims, data } }, the form
// the Verify tab's outputs and the run's inputs are shown in.
import { OmError } from 'onemodel';

const TYPED = { float32: Float32Array, int64: BigInt64Array, bool: Uint8Array };
const MAX_ELEMENTS = 1 << 26;   // per input: 256 MB of float32

const invalid = (message) => new OmError('InvalidArgument', message);

/** The size of each symbol the inputs name: the example an .om keeps, else 1. */
export function defaultSizes(inputs) {
  const sizes = {};
  for (const v of inputs) v.shape.forEach((d, k) => { if (typeof d === 'string') sizes[d] ??= v.example?.[k] ?? 1; });
  return sizes;
}

/** Input v's dims at sizes ({ symbol: size }); an axis the file leaves unnamed ('?') is 1. */
function dimsOf(v, sizes) {
  return v.shape.map((d) => {
    if (typeof d === 'number') return d;
    const n = d === '?' ? 1 : sizes[d];
    if (!Number.isSafeInteger(n) || n < 1) throw invalid(`run: the size of ${d} must be a positive integer, got ${JSON.stringify(n)}`);
    return n;
  });
}

function generated(v, dims) {
  const count = dims.reduce((a, b) => a * b, 1);
  if (count > MAX_ELEMENTS) throw invalid(`run: input ${v.name} would hold ${count} elements at [${dims}]; at most ${MAX_ELEMENTS}`);
  if (!(v.dtype in TYPED)) throw invalid(`run: input ${v.name} is ${v.dtype}; the page makes float32, int64 and bool inputs`);
  if (v.dtype === 'int64') return BigInt64Array.from({ length: count }, (_, i) => BigInt(i % 2));
  if (v.dtype === 'bool') return Uint8Array.from({ length: count }, (_, i) => i % 2);
  let s = 12345;   // a 32-bit LCG: the same inputs in both engines and on every run
  return Float32Array.from({ length: count }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  });
}

function fromUpload(v, u) {
  const dims = u?.dims, data = u?.data;
  if (!Array.isArray(dims) || !dims.every((d) => Number.isSafeInteger(d) && d >= 0) || !Array.isArray(data)) {
    throw invalid(`run: uploaded input ${v.name} must be { dims: [sizes], data: [numbers] }`);
  }
  const count = dims.reduce((a, b) => a * b, 1);
  if (count !== data.length) throw invalid(`run: uploaded input ${v.name} has ${data.length} values for dims [${dims}] (${count})`);
  if (dims.length !== v.shape.length || v.shape.some((d, k) => typeof d === 'number' && d !== dims[k])) {
    throw invalid(`run: uploaded input ${v.name} has dims [${dims}]; the file takes [${v.shape}]`);
  }
  const T = TYPED[v.dtype];
  if (!T) throw invalid(`run: input ${v.name} is ${v.dtype}; the page runs float32, int64 and bool inputs`);
  return { dims, data: v.dtype === 'int64' ? T.from(data, (x) => BigInt(Math.trunc(x))) : T.from(data, Number) };
}

/**
 * The feeds of one run: { name: { dtype, dims, data (a typed array) } } for the graph inputs,
 * each uploaded[name] if given, else generated at sizes.
 */
export function feedsFor(inputs, sizes, uploaded = {}) {
  return Object.fromEntries(inputs.map((v) => {
    if (uploaded && Object.hasOwn(uploaded, v.name)) return [v.name, { dtype: v.dtype, ...fromUpload(v, uploaded[v.name]) }];
    const dims = dimsOf(v, sizes);
    return [v.name, { dtype: v.dtype, dims, data: generated(v, dims) }];
  }));
}
