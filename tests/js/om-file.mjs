// Edits of the library format's bytes (docs/format.md) for the tests of its readers: the place of
// each top-level initializer's record and aliases, a graph section rewritten with the header's
// sizes and checksum made again (so a reader sees the edit, not a damaged file), and version 1 of a
// version 2 or 3 file. Written from docs/format.md, apart from the readers it tests.

const utf8 = new TextEncoder();

/** FNV-1a (64-bit) of bytes, as the header holds it. */
function fnv1a(bytes) {
  let h = 14695981039346656037n;
  for (const b of bytes) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 1099511628211n);
  return h;
}

const header = (file) => new DataView(file.buffer, file.byteOffset, 64);

/** The graph section of file (a Uint8Array view). */
export function graphSection(file) {
  return file.subarray(64, 64 + Number(header(file).getBigUint64(16, true)));
}

/** file with its graph section replaced by graph: the sizes, the data section's offset and the checksum made again. */
export function withGraph(file, graph) {
  const h = header(file), data = file.subarray(Number(h.getBigUint64(24, true)));
  const offset = Math.ceil((64 + graph.length) / 64) * 64;
  const out = new Uint8Array(offset + data.length);
  out.set(file.subarray(0, 64));
  out.set(graph, 64);
  out.set(data, offset);
  const o = header(out);
  o.setBigUint64(16, BigInt(graph.length), true);
  o.setBigUint64(24, BigInt(offset), true);
  o.setBigUint64(40, fnv1a(graph), true);
  return out;
}

/** graph with `remove` bytes at `at` replaced by the bytes of `insert`. */
export function splice(graph, at, remove, insert = new Uint8Array(0)) {
  const out = new Uint8Array(graph.length - remove + insert.length);
  out.set(graph.subarray(0, at));
  out.set(insert, at);
  out.set(graph.subarray(at + remove), at + insert.length);
  return out;
}

/** A u32, little-endian. */
export const u32 = (n) => new Uint8Array(new Uint32Array([n]).buffer);

/** A string as the format writes it: its u32 byte count and its UTF-8 bytes. */
export const str = (s) => { const b = utf8.encode(s); return Uint8Array.from([...u32(b.length), ...b]); };

/**
 * The top-level initializers' records of a version `version` graph section: [{ id (its value),
 * at (where the record starts), aliasAt (where its alias count is, version 2), aliases: [{ at,
 * length (the string's, count included), name }], end }]; with inputs, where the input count is.
 */
export function initializerRecords(graph, version = 2, inputs = false) {
  const v = new DataView(graph.buffer, graph.byteOffset, graph.byteLength);
  let at = 0;
  const u = () => { const n = v.getUint32(at, true); at += 4; return n; };
  const s = () => { const n = u(); const t = new TextDecoder().decode(graph.subarray(at, at + n)); at += n; return t; };
  for (let values = u(); values > 0; values--) {
    s();
    at += 1;   // dtype
    for (let rank = graph[at++]; rank > 0; rank--) at += 8, s();
  }
  const inputsAt = at;
  for (let part = 0; part < 2; part++) {   // inputs, outputs: their ids
    const n = u();
    at += 4 * n;
  }
  if (inputs) return inputsAt;
  return Array.from({ length: u() }, () => {
    const record = { at, id: u() };
    at += 16;   // offset and size
    record.aliasAt = at;
    record.aliases = version === 1 ? [] : Array.from({ length: u() }, () => { const start = at; const name = s(); return { at: start, length: at - start, name }; });
    record.end = at;
    return record;
  });
}

/** Where a graph section's input count is (its ids follow). */
export const inputsAt = (graph) => initializerRecords(graph, 2, true);

/**
 * Version 1 of a version 2 or 3 file: each initializer's alias count and aliases dropped (version 1
 * has none); of version 3, its one symbol's branch count (the graph section's last u32, which must
 * be 0: a symbol without branches) too.
 */
export function asVersion1(file) {
  let graph = graphSection(file);
  if (header(file).getUint32(8, true) === 3) {
    const last = new DataView(graph.buffer, graph.byteOffset + graph.length - 4, 4).getUint32(0, true);
    if (last !== 0) throw new Error('asVersion1: the last symbol has branches');
    graph = graph.subarray(0, graph.length - 4);
  }
  for (const r of initializerRecords(graph).reverse()) graph = splice(graph, r.aliasAt, r.end - r.aliasAt);
  const out = withGraph(file, graph);
  header(out).setUint32(8, 1, true);
  return out;
}
