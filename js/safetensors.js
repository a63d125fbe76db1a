// om.safetensors: reads and writes the safetensors format, the weights format of Hugging Face and
// of PyTorch users (`safetensors.torch.save_file`). A file is an 8-byte little-endian header
// length N, N bytes of UTF-8 JSON ({ name: { dtype, shape, data_offsets: [begin, end] }, and an
// optional "__metadata__": { string: string } }) and the data: every tensor's bytes, row-major,
// little-endian, at [begin, end) of the data, which the tensors cover exactly (no gap, no overlap,
// nothing after the last). The bytes are untrusted: load() checks every number of the header
// against the file before it allocates anything, and every failure is an OmError naming the
// problem. Tensor bytes go straight from the file into the tensors' storage in wasm memory
// (omw_data), so loading holds the input and one copy of the weights, nothing more.
import { OmError, invalid } from './errors.js';
import { M, omw, requireReady, dtypeCodes, checkHandle, marshal, nodeFs } from './runtime.js';
import { wrap, handle, optionsArg } from './tensor.js';
import { describe } from './convert.js';

/** The largest header the reference implementation reads (bytes); a longer one is refused. */
const MAX_HEADER = 100_000_000;

// The reference implementation's dtypes in its order (which is also the order save() writes:
// larger rank first): byte size, and the om dtype they load as and how (none: refused, as they
// do not fit float32, float64 or int64 exactly).
//   copy: the bytes are already om's (float32, float64, int64);  bool: nonzero bytes become 1;
//   f16 / bf16: widened to float32 exactly;  int: widened to int64 exactly (signed or not).
const DTYPES = {
  BOOL: { size: 1, om: 'bool', read: 'bool' },
  U8: { size: 1, om: 'int64', read: 'int', signed: false },
  I8: { size: 1, om: 'int64', read: 'int', signed: true },
  F8_E5M2: { size: 1 },
  F8_E4M3: { size: 1 },
  I16: { size: 2, om: 'int64', read: 'int', signed: true },
  U16: { size: 2, om: 'int64', read: 'int', signed: false },
  F16: { size: 2, om: 'float32', read: 'f16' },
  BF16: { size: 2, om: 'float32', read: 'bf16' },
  I32: { size: 4, om: 'int64', read: 'int', signed: true },
  U32: { size: 4, om: 'int64', read: 'int', signed: false },
  F32: { size: 4, om: 'float32', read: 'copy' },
  F64: { size: 8, om: 'float64', read: 'copy' },
  I64: { size: 8, om: 'int64', read: 'copy' },
  U64: { size: 8 },
};
const RANK = Object.fromEntries(Object.keys(DTYPES).map((k, i) => [k, i]));
/** The safetensors dtype save() writes for each om dtype. */
const SAVED_AS = { float32: 'F32', float64: 'F64', int64: 'I64', bool: 'BOOL' };

function formatError(who, message) {
  return new OmError('Format', `${who}: ${message}`);
}

/** An object literal or JSON object (not an array, a Tensor, a Map, ...). */
function isPlainObject(x) {
  if (x === null || typeof x !== 'object') return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

/** fn(), its OmError (a C failure: allocation, dims, tracing) rethrown naming the tensor. */
function naming(who, name, fn) {
  try {
    return fn();
  } catch (err) {
    if (!(err instanceof OmError)) throw err;
    const message = err.message.startsWith(`${who}: `) ? err.message.slice(who.length + 2) : err.message;
    throw new err.constructor(err.kind, `${who}: tensor ${quote(name)}: ${message}`);
  }
}

/** A name for messages: JSON-quoted and cut short (names come from untrusted files). */
function quote(name) {
  return JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}...` : name);
}

// ---- reading -------------------------------------------------------------------------------

/**
 * The first key that appears twice in one object of a JSON text that JSON.parse accepted (which
 * keeps the last silently), described for a message, or null. The format forbids duplicates.
 */
function duplicateKey(text) {
  const stack = []; // per open object or array: { keys: Set (null for an array), expectKey, name, last }
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    const top = stack[stack.length - 1];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (top?.keys && top.expectKey) {
        const key = JSON.parse(text.slice(i, j + 1));
        if (top.keys.has(key)) return `the key ${quote(key)}${top.name === null ? '' : ` (in ${quote(top.name)})`}`;
        top.keys.add(key);
        top.expectKey = false;
        top.last = key;
      }
      i = j;
    } else if (c === '{' || c === '[') {
      stack.push({ keys: c === '{' ? new Set() : null, expectKey: c === '{', name: top ? top.last : null, last: null });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',' && top?.keys) {
      top.expectKey = true;
    }
  }
  return null;
}

/** A non-negative integer that is exact in a JS number, or undefined. */
function count(x) {
  return Number.isSafeInteger(x) && x >= 0 ? x : undefined;
}

/**
 * The checked header of a safetensors file of len bytes, read(pos, n) giving n bytes of it at pos:
 * { dataStart, entries: [{ name, dtype, shape, begin, end }] in header order, metadata }. Throws
 * Format naming the first problem.
 */
function parseHeader(read, len, who) {
  if (len < 8) throw formatError(who, `the file is ${len} bytes long; a safetensors file starts with an 8-byte header length`);
  const head = read(0, 8);
  const view = new DataView(head.buffer, head.byteOffset, 8);
  const n = view.getUint32(4, true) * 2 ** 32 + view.getUint32(0, true); // exact up to 2^53, and larger is refused
  if (n > MAX_HEADER) {
    throw formatError(who, `the header length ${view.getBigUint64(0, true)} is absurd (the format's limit is ${MAX_HEADER} bytes)`);
  }
  if (8 + n > len) throw formatError(who, `the header length ${n} runs past the end of the file (${len} bytes)`);
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(read(8, n));
  } catch {
    throw formatError(who, 'the header is not valid UTF-8');
  }
  let header;
  try {
    header = JSON.parse(text);
  } catch (e) {
    throw formatError(who, `the header is not valid JSON (${e.message})`);
  }
  if (!isPlainObject(header)) throw formatError(who, `the header is not a JSON object but ${describe(header)}`);
  const dup = duplicateKey(text);
  if (dup !== null) throw formatError(who, `the header has ${dup} twice`);

  let metadata = {};
  const entries = [];
  for (const [name, e] of Object.entries(header)) {
    if (name === '__metadata__') {
      if (!isPlainObject(e)) throw formatError(who, `__metadata__ is not an object of strings but ${describe(e)}`);
      for (const [k, v] of Object.entries(e)) {
        if (typeof v !== 'string') throw formatError(who, `__metadata__[${quote(k)}] is ${describe(v)}, not a string`);
      }
      metadata = e;
      continue;
    }
    const t = `tensor ${quote(name)}`;
    if (!isPlainObject(e)) throw formatError(who, `${t}: its entry is ${describe(e)}, not an object`);
    for (const key of ['dtype', 'shape', 'data_offsets']) {
      if (!Object.hasOwn(e, key)) throw formatError(who, `${t} has no ${key}`);
    }
    const info = typeof e.dtype === 'string' && Object.hasOwn(DTYPES, e.dtype) ? DTYPES[e.dtype] : null;
    if (!info) {
      throw formatError(who, `${t}: unknown dtype ${typeof e.dtype === 'string' ? quote(e.dtype) : describe(e.dtype)} (the format's are ${Object.keys(DTYPES).join(', ')})`);
    }
    if (!Array.isArray(e.shape)) throw formatError(who, `${t}: shape is ${describe(e.shape)}, not an array`);
    let numel = 1;
    e.shape.forEach((d, i) => {
      if (count(d) === undefined) throw formatError(who, `${t}: shape[${i}] is ${describe(d)}; dims are non-negative integers`);
      numel *= d;
    });
    const offs = e.data_offsets;
    if (!Array.isArray(offs) || offs.length !== 2 || count(offs[0]) === undefined || count(offs[1]) === undefined || offs[0] > offs[1]) {
      throw formatError(who, `${t}: data_offsets ${Array.isArray(offs) ? JSON.stringify(offs) : describe(offs)} is not [begin, end] with 0 <= begin <= end`);
    }
    const [begin, end] = offs;
    const nbytes = numel * info.size; // a product past 2^53 is far beyond any file, so the check below refuses it
    if (end - begin !== nbytes) {
      throw formatError(who, `${t}: dtype ${e.dtype} and shape [${e.shape.join(', ')}] take ${nbytes} bytes but data_offsets [${begin}, ${end}] hold ${end - begin}`);
    }
    entries.push({ name, dtype: e.dtype, shape: e.shape, begin, end });
  }

  // the data must be covered exactly: sorted by offset, each tensor starts where the last ended
  const dataStart = 8 + n;
  const dataLen = len - dataStart;
  const sorted = entries.slice().sort((a, b) => a.begin - b.begin || a.end - b.end);
  let at = 0;
  let prev = null;
  for (const e of sorted) {
    if (e.end > dataLen) {
      throw formatError(who, `tensor ${quote(e.name)}: data_offsets [${e.begin}, ${e.end}] run past the end of the data (${dataLen} bytes after the header)`);
    }
    if (e.begin < at) throw formatError(who, `tensors ${quote(prev.name)} and ${quote(e.name)} overlap (bytes ${e.begin} to ${Math.min(at, e.end)} of the data)`);
    if (e.begin > at) throw formatError(who, `bytes ${at} to ${e.begin} of the data belong to no tensor (the tensors must cover the data without gaps)`);
    at = e.end;
    prev = e;
  }
  if (at !== dataLen) {
    throw formatError(who, `the tensors cover ${at} bytes of data but the file has ${dataLen} after the header (the last ${dataLen - at} belong to no tensor)`);
  }
  for (const e of entries) {
    if (!DTYPES[e.dtype].om) {
      throw new OmError('DtypeMismatch', `${who}: tensor ${quote(e.name)} is ${e.dtype}, which onemodel does not take (it holds float32, float64, int64 and bool; F16 and BF16 widen to float32, the integer types up to 32 bits to int64): convert it before saving, e.g. with .float() in PyTorch`);
    }
  }
  return { dataStart, entries, metadata };
}

let f16Bits = null;

/**
 * The float32 bits of every float16 (by its bits), as PyTorch widens them: exact for every
 * finite value (subnormals become normal float32s), infinities kept, and a NaN keeps its sign and
 * payload (shifted into the top of float32's) with the quiet bit set.
 */
function f16Table() {
  if (f16Bits) return f16Bits;
  const f = new Float32Array(65536);
  const u = new Uint32Array(f.buffer);
  for (let h = 0; h < 65536; h++) {
    const sign = h >> 15, exp = (h >> 10) & 31, mant = h & 1023;
    if (exp === 31) u[h] = (sign << 31) | 0x7f800000 | (mant ? 0x400000 | (mant << 13) : 0);
    else f[h] = (sign ? -1 : 1) * (exp ? (1024 + mant) * 2 ** (exp - 25) : mant * 2 ** -24);
  }
  f16Bits = u;
  return u;
}

/**
 * Writes the n elements of src (the tensor's bytes in the file, in its safetensors dtype) to
 * wasm memory at p in the om dtype they load as. Views of wasm memory are made here, after
 * every allocation, as memory growth detaches old ones.
 */
function convert(info, src, p, n) {
  const heap = M.HEAPU8;
  if (info.read === 'copy') {
    heap.set(src, p);
    return;
  }
  if (info.read === 'bool') {
    for (let i = 0; i < n; i++) heap[p + i] = src[i] !== 0 ? 1 : 0;
    return;
  }
  // the file's bytes may sit at any offset (the header length need not be a multiple of 8)
  const sv = new DataView(src.buffer, src.byteOffset, src.byteLength);
  if (info.read === 'f16' || info.read === 'bf16') {
    const dst = new Uint32Array(heap.buffer, p, n);
    if (info.read === 'bf16') {
      for (let i = 0; i < n; i++) dst[i] = sv.getUint16(2 * i, true) << 16; // bf16 is the upper half of a float32
    } else {
      const table = f16Table();
      for (let i = 0; i < n; i++) dst[i] = table[sv.getUint16(2 * i, true)];
    }
    return;
  }
  // integers up to 32 bits to int64: the low word, and the high word of the sign extension
  const dst = new Int32Array(heap.buffer, p, 2 * n);
  const get = {
    1: info.signed ? (i) => sv.getInt8(i) : (i) => sv.getUint8(i),
    2: info.signed ? (i) => sv.getInt16(2 * i, true) : (i) => sv.getUint16(2 * i, true),
    4: info.signed ? (i) => sv.getInt32(4 * i, true) : (i) => sv.getUint32(4 * i, true),
  }[info.size];
  for (let i = 0; i < n; i++) {
    const v = get(i);
    dst[2 * i] = v;
    dst[2 * i + 1] = v < 0 ? -1 : 0;
  }
}

/** The bytes argument of load(): a Uint8Array (a Node Buffer is one) or an ArrayBuffer. */
function bytesArg(bytes, who) {
  if (bytes instanceof Uint8Array) return bytes;
  if (bytes instanceof ArrayBuffer) return new Uint8Array(bytes);
  throw invalid(`${who}: bytes must be a Uint8Array or an ArrayBuffer, got ${describe(bytes)}`);
}

/**
 * The tensors of a checked header: each made in wasm memory, then fill(entry, info, p, numel)
 * writes its elements at p. On any failure, the tensors made so far are freed.
 */
function makeTensors(entries, fill, who) {
  const tensors = {};
  const made = [];
  try {
    for (const e of entries) {
      const info = DTYPES[e.dtype];
      const numel = e.shape.reduce((a, b) => a * b, 1);
      const t = naming(who, e.name, () => {
        const [ps] = marshal(['i64', e.shape.map(BigInt)]);
        const t1 = wrap(checkHandle(omw.full(ps, e.shape.length, dtypeCodes.get(info.om), 0), who));
        made.push(t1);
        if (numel) fill(e, info, checkHandle(omw.data(handle(t1, who, e.name)), who), numel);
        return t1;
      });
      // defineProperty: a tensor named "__proto__" is an own key like any other
      Object.defineProperty(tensors, e.name, { value: t, enumerable: true, writable: true, configurable: true });
    }
  } catch (err) {
    for (const t of made) t.dispose();
    throw err;
  }
  return tensors;
}

/**
 * om.safetensors.load(bytes) -> { tensors, metadata }: tensors maps each name to a new Tensor
 * (header order), metadata is the file's __metadata__ ({} without one).
 */
export function load(bytes) {
  const who = 'safetensors.load';
  requireReady(who);
  const buf = bytesArg(bytes, who);
  const { dataStart, entries, metadata } = parseHeader((pos, n) => buf.subarray(pos, pos + n), buf.length, who);
  const tensors = makeTensors(entries, (e, info, p, n) => convert(info, buf.subarray(dataStart + e.begin, dataStart + e.end), p, n), who);
  return { tensors, metadata };
}

/** Bytes read from a file per step when elements are converted (F16, BF16, BOOL, small integers). */
const CHUNK = 1 << 20;

/**
 * om.safetensors.loadFile(path) (Node.js only) -> { tensors, metadata }, as load(readFileSync(path))
 * but reading each tensor's bytes from the file straight into its storage (converted dtypes in
 * chunks of 1 MiB): the file is never held in memory.
 */
export function loadFile(path) {
  const who = 'safetensors.loadFile';
  requireReady(who);
  if (!nodeFs) throw invalid(`${who}: reading files needs Node.js; in a browser fetch the bytes and use load()`);
  if (typeof path !== 'string' && !(path instanceof URL)) throw invalid(`${who}: path must be a string or a URL, got ${describe(path)}`);
  let fd;
  try {
    fd = nodeFs.openSync(path, 'r');
  } catch (e) {
    throw invalid(`${who}: cannot open ${path}: ${e?.message ?? e}`);
  }
  try {
    const len = nodeFs.fstatSync(fd).size;
    /** Reads n bytes at pos into dst at off (a view made by the caller after any allocation). */
    const readInto = (dst, off, n, pos) => {
      for (let at = 0; at < n;) {
        const got = nodeFs.readSync(fd, dst, off + at, n - at, pos + at);
        if (!got) throw formatError(who, `the file ended at byte ${pos + at} while it was read (${len} bytes when opened)`);
        at += got;
      }
    };
    const read = (pos, n) => {
      const b = new Uint8Array(n);
      readInto(b, 0, n, pos);
      return b;
    };
    const { dataStart, entries, metadata } = parseHeader(read, len, who);
    let chunk = null;
    const tensors = makeTensors(entries, (e, info, p, n) => {
      const pos = dataStart + e.begin;
      if (info.read === 'copy') {
        readInto(M.HEAPU8, p, e.end - e.begin, pos);
        return;
      }
      chunk ??= new Uint8Array(CHUNK);
      const per = Math.floor(CHUNK / info.size); // elements per step
      const outSize = DTYPES[SAVED_AS[info.om]].size; // bytes per element in wasm memory
      for (let i = 0; i < n; i += per) {
        const k = Math.min(per, n - i);
        readInto(chunk, 0, k * info.size, pos + i * info.size);
        convert(info, chunk.subarray(0, k * info.size), p + i * outSize, k);
      }
    }, who);
    return { tensors, metadata };
  } finally {
    nodeFs.closeSync(fd);
  }
}

// ---- writing -------------------------------------------------------------------------------

/** Compares strings by code point (the order of their UTF-8 bytes, which the reference sorts by). */
function byCodePoint(a, b) {
  for (let i = 0; i < a.length && i < b.length;) {
    const x = a.codePointAt(i), y = b.codePointAt(i);
    if (x !== y) return x - y;
    i += x > 0xffff ? 2 : 1;
  }
  return a.length - b.length;
}

/**
 * om.safetensors.save(stateDict, { metadata }) -> Uint8Array. Laid out as the reference writes:
 * tensors sorted by dtype (int64, float64, float32, bool) then name, data contiguous in that order, the
 * header compact JSON ("__metadata__" first) padded with spaces to a multiple of 8 bytes.
 */
export function save(stateDict, options) {
  const who = 'safetensors.save';
  requireReady(who);
  if (!isPlainObject(stateDict)) {
    throw invalid(`${who}: stateDict must be an object of name -> Tensor, got ${describe(stateDict)}`);
  }
  const { metadata = null } = optionsArg(options, who, ['metadata']);
  if (metadata !== null) {
    if (!isPlainObject(metadata)) throw invalid(`${who}: metadata must be an object of strings, got ${describe(metadata)}`);
    for (const [k, v] of Object.entries(metadata)) {
      if (typeof v !== 'string') throw invalid(`${who}: metadata[${quote(k)}] must be a string, got ${describe(v)}`);
    }
  }
  const items = Object.entries(stateDict).map(([name, t]) => {
    if (name === '__metadata__') throw invalid(`${who}: "__metadata__" is the format's key for metadata, not a tensor name`);
    handle(t, who, `stateDict[${quote(name)}]`);
    return { name, t, dtype: SAVED_AS[t.dtype], shape: t.shape, nbytes: t.numel() * DTYPES[SAVED_AS[t.dtype]].size };
  });
  items.sort((a, b) => RANK[b.dtype] - RANK[a.dtype] || byCodePoint(a.name, b.name));

  const parts = [];
  if (metadata !== null) {
    parts.push(`"__metadata__":{${Object.entries(metadata).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`);
  }
  let offset = 0;
  for (const it of items) {
    it.begin = offset;
    offset += it.nbytes;
    parts.push(`${JSON.stringify(it.name)}:{"dtype":"${it.dtype}","shape":[${it.shape.join(',')}],"data_offsets":[${it.begin},${offset}]}`);
  }
  let header = new TextEncoder().encode(`{${parts.join(',')}}`);
  const padded = Math.ceil(header.length / 8) * 8;
  const out = new Uint8Array(8 + padded + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(padded), true);
  out.set(header, 8);
  out.fill(0x20, 8 + header.length, 8 + padded); // spaces: JSON whitespace
  header = null;
  const dataStart = 8 + padded;
  for (const it of items) {
    if (!it.nbytes) continue;
    naming(who, it.name, () => {
      // a view (a transpose, a slice) is written as its contiguous copy, made for this copy only
      const h = checkHandle(omw.contiguous(handle(it.t, who, it.name)), who);
      try {
        const p = checkHandle(omw.data(h), who);
        out.set(M.HEAPU8.subarray(p, p + it.nbytes), dataStart + it.begin);
      } finally {
        omw.release(h);
      }
    });
  }
  return out;
}
