// The differential fuzzer of the demo page's piecewise readers of .onnx and .om files
// (tools/fuzz_open.mjs runs it for a while; tests/js/web-demo-open.test.mjs for a few hundred
// mutants): mutants of seed files, each read whole (readGraph) and in pieces (openGraph), the two
// compared; for an .om, also the Session on the whole file and on the weightless one openGraph
// writes. Its corpus and mutations serve tools/fuzz_create.mjs too.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import * as om from 'onemodel';
import { bytesSource, fnv1a, openGraph, readGraph } from '../web-demo/src/graphfile.js';

/** The reader fuzzer's corpus (build/fuzz-onnx/corpus) when it has one (its mutants too), else its
 *  seeds (tools/fuzz_seeds.mjs) made afresh in a temporary folder: the files' bytes, empty ones left out. */
export function fuzzCorpus() {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const filesIn = (dir) => { try { return readdirSync(dir); } catch { return []; } };
  let corpus = join(root, 'build', 'fuzz-onnx', 'corpus'), made = null;
  if (!filesIn(corpus).length) {
    made = corpus = mkdtempSync(join(tmpdir(), 'onemodel-fuzz-'));
    execFileSync(process.execPath, [join(root, 'tools', 'fuzz_seeds.mjs'), corpus], { stdio: 'ignore' });
  }
  const seeds = filesIn(corpus).map((f) => readFileSync(join(corpus, f))).filter((b) => b.length);
  if (made) rmSync(made, { recursive: true, force: true });
  return seeds;
}

/** A seeded generator of floats in [0, 1) (mulberry32). */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A varint at b[at]: [value, its end], or null when it does not end within b. */
function varint(b, at) {
  let v = 0, scale = 1;
  for (let k = 0; k < 8 && at < b.length; k++, scale *= 128) {
    const byte = b[at++];
    v += (byte & 0x7f) * scale;
    if (!(byte & 0x80)) return [v, at];
  }
  return null;
}

const varintBytes = (v) => {
  const out = [];
  for (; v >= 0x80; v = Math.floor(v / 128)) out.push((v % 128) | 0x80);
  out.push(v);
  return out;
};

/** The fields of the message b: [{ f, w, start, value (a wire-2 field's value start), end }], or null if it does not parse. */
function fieldsOf(b) {
  const out = [];
  for (let at = 0; at < b.length;) {
    const tag = varint(b, at);
    if (!tag) return null;
    const f = Math.floor(tag[0] / 8), w = tag[0] % 8, start = at;
    at = tag[1];
    let value = at;
    if (w === 0) { const v = varint(b, at); if (!v) return null; at = v[1]; }
    else if (w === 1 || w === 5) at += w === 1 ? 8 : 4;
    else if (w === 2) { const n = varint(b, at); if (!n) return null; value = n[1]; at = n[1] + n[0]; }
    else return null;
    if (at > b.length) return null;
    out.push({ f, w, start, value, end: at });
  }
  return out;
}

const concat = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, q) => n + q.length, 0));
  let at = 0;
  for (const q of parts) out.set(q, at), at += q.length;
  return out;
};

/** The message b with its fields in a random order, or null if it does not parse. */
function shuffleFields(b, rand) {
  const fields = fieldsOf(b);
  if (!fields) return null;
  const order = fields.map((x) => [rand(), x]).sort((p, q) => p[0] - q[0]);
  return concat(...order.map(([, x]) => b.subarray(x.start, x.end)));
}

/** The message b with the value of one of its wire-2 fields numbered f made anew by fn, or null. */
function inField(b, f, fn, rand) {
  const fields = fieldsOf(b)?.filter((x) => x.w === 2 && x.f === f) ?? [];
  if (!fields.length) return null;
  const x = fields[Math.floor(rand() * fields.length)], value = fn(b.subarray(x.value, x.end));
  return value && concat(b.subarray(0, x.start), Uint8Array.from(varintBytes(f * 8 + 2)), Uint8Array.from(varintBytes(value.length)), value, b.subarray(x.end));
}

/** The model b with the fields of a message on the weights' path in another order: depth 0 the model's, 1 its graph's, 2 an initializer's. */
function shuffled(b, depth, rand) {
  const shuffle = (m) => shuffleFields(m, rand);
  if (depth === 0) return shuffle(b);
  if (depth === 1) return inField(b, 7, shuffle, rand);
  return inField(b, 7, (g) => inField(g, 5, shuffle, rand), rand);
}

const isOm = (b) => b.length >= 64 && String.fromCharCode(...b.subarray(0, 8)) === 'ONEMODEL';

/**
 * The .om b with its header made to agree with its graph section where it can (the hash of the
 * G bytes after the header, the data section's offset and size), so that a mutant of the graph
 * section reaches the library's reader of the graph, not only its checksum; anything else as it is.
 */
export function resealed(b) {
  if (!isOm(b)) return b;
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength), g = v.getBigUint64(16, true);
  if (g > BigInt(b.length - 64)) return b;
  const out = Uint8Array.from(b), o = new DataView(out.buffer), d = Math.ceil((64 + Number(g)) / 64) * 64;
  o.setBigUint64(40, fnv1a(out.subarray(64, 64 + Number(g))), true);
  if (d <= b.length) o.setBigUint64(24, BigInt(d), true), o.setBigUint64(32, BigInt(b.length - d), true);
  return out;
}

/** One mutant of seed. */
export function mutate(seed, rand) {
  const pick = (n) => Math.floor(rand() * n);
  const b = Uint8Array.from(seed);
  const at = pick(b.length);
  switch (pick(8)) {
    case 0: b[at] ^= 1 << pick(8); return b;
    case 1: b[at] = pick(256); return b;
    case 2: return b.subarray(0, at);
    case 3: return concat(b.subarray(0, at), Uint8Array.from({ length: 1 + pick(16) }, () => pick(256)), b.subarray(at));
    case 4: return concat(b.subarray(0, at), b.subarray(at + 1 + pick(64)));
    case 5: { const n = 1 + pick(64); return concat(b.subarray(0, at + n), b.subarray(at, at + n), b.subarray(at + n)); }
    case 6: { // a length (the varint after a wire-2 tag) made another
      for (let k = 0; k < 64; k++) {
        const p = pick(b.length);
        if ((b[p] & 7) !== 2) continue;
        const n = varint(b, p + 1);
        if (!n) continue;
        const to = Math.max(0, n[0] + pick(9) - 4);
        return concat(b.subarray(0, p + 1), Uint8Array.from(varintBytes(to)), b.subarray(n[1]));
      }
      return b;
    }
    default: return shuffled(b, pick(3), rand) ?? b;   // the fields in another order: a file as valid as the seed
  }
}

const outcome = async (fn) => {
  try {
    return { value: await fn() };
  } catch (error) {
    return { error };
  }
};
const describe = (e) => `${e?.constructor?.name}${e?.kind ? ` ${e.kind}` : ''}: ${e?.message ?? e}`;

/**
 * Mutants of seeds until ms have passed or count were made: { cases, read, leftOut, refused, om
 * (the .om mutants read alike in pieces whose whole file the Session opens), mismatch: null |
 * { index, bytes, large, piece, what } }. opens(bytes): whether the Session opens the bytes (a
 * promise of true or false); without it, the .om's weightless file is not checked.
 *
 * An .om read alike is right when it was read in pieces and its weightless file opens exactly
 * when the whole file does, or when it was read whole and the Session refuses the whole file (what
 * the library's reader refuses before the graph: openGraph reads it whole for the Session's error).
 */
export async function fuzzOpen(seeds, { seed = 1, ms = Infinity, count = Infinity, opens = null } = {}) {
  const rand = random(seed), t0 = Date.now();
  const r = { cases: 0, read: 0, leftOut: 0, refused: 0, om: 0, mismatch: null };
  while (r.cases < count && Date.now() - t0 < ms) {
    const index = r.cases++;
    let bytes = seeds[Math.floor(rand() * seeds.length)];
    for (let k = 1 + Math.floor(rand() * 3); k > 0; k--) bytes = mutate(bytes, rand);
    if (rand() < 0.5) bytes = resealed(bytes);
    const large = [1, 8, 64, 4096][Math.floor(rand() * 4)], piece = [1, 3, 64, 16384][Math.floor(rand() * 4)];
    const whole = await outcome(() => readGraph(bytes));
    const pieces = await outcome(() => openGraph(bytesSource(bytes), { large, piece }));
    let what = null;
    if (whole.error) {
      if (!pieces.error) what = `whole: ${describe(whole.error)}; in pieces: read`;
      else if (describe(whole.error) !== describe(pieces.error) || whole.error.constructor !== pieces.error.constructor) what = `whole: ${describe(whole.error)}; in pieces: ${describe(pieces.error)}`;
      else r.refused++;
    } else if (pieces.error) what = `whole: read; in pieces: ${describe(pieces.error)}`;
    else if (whole.value.format === 'om') {
      const p = pieces.value;
      const wholeOpens = opens && await opens(bytes), lightOpens = opens && !p.whole && await opens(p.light);
      if (!isDeepStrictEqual(p.graph, whole.value)) what = 'the graphs differ';
      else if (p.whole && wholeOpens) what = 'read whole, not in pieces, though the Session opens it';
      else if (!p.whole && wholeOpens !== lightOpens) what = `the Session ${wholeOpens ? 'opens' : 'refuses'} the whole file, ${lightOpens ? 'opens' : 'refuses'} the weightless one`;
      else {
        r.read++;
        if (!p.whole) r.leftOut++;
        if (wholeOpens) r.om++;
      }
    } else {
      const p = pieces.value;
      if (!isDeepStrictEqual(p.graph, whole.value)) what = 'the graphs differ';
      else if (p.whole) what = 'read whole, not in pieces';
      else {
        r.read++;
        if (p.bytes === null) r.leftOut++;
      }
    }
    if (what) {
      r.mismatch = { index, bytes, large, piece, what };
      break;
    }
  }
  return r;
}

/** Whether the Session opens bytes (the fuzzer's check of an .om's weightless file). */
export async function sessionOpens(bytes) {
  try {
    (await om.InferenceSession.create(bytes, { mode: 'exact' })).dispose();
    return true;
  } catch (e) {
    if (!(e instanceof om.OmError)) throw e;
    return false;
  }
}
