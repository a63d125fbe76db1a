// ONNX ModelProto bytes written by hand (protobuf's wire format), for graphs the tracer does not
// write: the session tests' hostile graphs and tools/bench_plan.mjs's long chains.
//
//   onnxBytes({ nodes: [{ op, inputs, outputs, name?, domain?, ints?: { attr: n | [n, ...] },
//                         floats?: { attr: x | [x, ...] }, strings?: { attr: 's' },
//                         attrs?: { attr: 2 | [1, 2] | { f: 0.5 } | { fs: [0.5] } | 'text' | { ss: ['a', 'b'] } | { graph } } }],
//               inputs: [{ name, dims: [2, 'n'], dtype?, kind? }],   // float32 unless dtype; a string dim is named;
//                                                     // kind 'sequence', 'optional', 'optional sequence' (else a tensor)
//               inits: [{ name, dtype: 'float32' | 'int8' | 'float16' (values its bits) | 'string' (JS strings) | ..., dims, values }],
//               outputs: ['y' | { name, dtype, dims?, kind? }, ...], opset: 17, ir: 8,   // 'y': no type declared (the
//                                                     // graph gives it; float32 in a subgraph); a declared one must be what the graph gives
//               imports: [{ domain: 'ai.onnx.ml', version: 4 }] })   // -> Uint8Array (imports: other domains' opsets)
//
// A graph attribute ({ graph: { nodes, inputs, inits, outputs } }: If's branches, Loop's and Scan's
// body) is written as the model's graph is; its inputs may leave out dims (dims: null: no shape).

const enc = new TextEncoder();

function varint(out, v) {
  let x = BigInt(v);
  if (x < 0n) x += 1n << 64n;
  for (; x >= 0x80n; x >>= 7n) out.push(Number(x & 0x7fn) | 0x80);
  out.push(Number(x));
}
const int = (out, field, v) => { varint(out, field << 3); varint(out, v); };
function bytes(out, field, b) {
  varint(out, (field << 3) | 2);
  varint(out, b.length);
  for (const v of b) out.push(v);
}
const str = (out, field, s) => bytes(out, field, enc.encode(s));
const msg = (fill) => { const m = []; fill(m); return m; };

/** ONNX's element type numbers of the dtypes these graphs use, and each one's typed array (float16's and bfloat16's bits). */
const ELEM = { float32: 1, string: 8, uint8: 2, int8: 3, uint16: 4, int16: 5, int32: 6, int64: 7, bool: 9, float16: 10, float64: 11, uint32: 12, uint64: 13, complex64: 14, bfloat16: 16, float8e4m3fn: 17, float8e4m3fnuz: 18, float8e5m2: 19, float8e5m2fnuz: 20 };
const ARRAY = { float32: Float32Array, uint8: Uint8Array, int8: Int8Array, uint16: Uint16Array, int16: Int16Array, int32: Int32Array, float16: Uint16Array, float64: Float64Array, uint32: Uint32Array, bfloat16: Uint16Array };

/** Initializer values as raw_data bytes of dtype. */
function rawData(dtype, values) {
  if (dtype === 'bool') return values.map(Number);
  if (ARRAY[dtype]) return new Uint8Array(ARRAY[dtype].from(values).buffer);
  return new Uint8Array((dtype === 'uint64' ? BigUint64Array : BigInt64Array).from(values.map(BigInt)).buffer);
}

/** A TypeProto of kind 'tensor' (dtype, dims as below), 'sequence' or 'optional' (of a tensor), or
 * 'optional sequence': an optional's (field 9) and a sequence's (field 4) elem_type wrap the tensor's (field 1). */
function typeProto(kind, dims, dtype) {
  const tensor = msg((type) => bytes(type, 1, msg((tt) => {
    int(tt, 1, ELEM[dtype]);
    if (dims) bytes(tt, 2, msg((shape) => { for (const d of dims) bytes(shape, 1, msg((dim) => (typeof d === 'string' ? str(dim, 2, d) : int(dim, 1, d)))); }));
  })));
  const wrap = (field, inner) => msg((type) => bytes(type, field, msg((w) => bytes(w, 1, inner))));
  const seq = kind.endsWith('sequence') ? wrap(4, tensor) : tensor;
  return kind.startsWith('optional') ? wrap(9, seq) : seq;
}

/** A ValueInfo of dtype (float32 by default) and dims (numbers fixed, strings named), or without a
 * shape; kind 'tensor' unless given ('sequence', 'optional', 'optional sequence'; 'none': no type at all). */
const valueInfo = (name, dims, dtype = 'float32', kind = 'tensor') => msg((m) => {
  str(m, 1, name);
  if (kind !== 'none') bytes(m, 2, typeProto(kind, dims, dtype));
});

/** An attribute's fields: an int, ints, a float ({ f }), floats ({ fs }), a string or strings ({ ss }). */
function attribute(a, name, v) {
  str(a, 1, name);
  if (typeof v === 'number') { int(a, 3, v); int(a, 20, 2); }
  else if (Array.isArray(v)) { for (const x of v) int(a, 8, x); int(a, 20, 7); }
  else if (typeof v === 'string') { str(a, 4, v); int(a, 20, 3); }
  else if ('ss' in v) { for (const x of v.ss) str(a, 9, x); int(a, 20, 8); }
  else if ('graph' in v) { bytes(a, 6, graphProto(v.graph, true)); int(a, 20, 5); }
  else if ('f' in v) { varint(a, (2 << 3) | 5); a.push(...new Uint8Array(Float32Array.of(v.f).buffer)); int(a, 20, 1); }
  else { for (const x of v.fs) { varint(a, (7 << 3) | 5); a.push(...new Uint8Array(Float32Array.of(x).buffer)); } int(a, 20, 6); }
}

/** A GraphProto's bytes: the model's graph or a graph attribute's (sub). An output given by name
 * alone is declared without a type in the model's graph (the graph gives it), and as float32 in a
 * subgraph (onnxruntime-web refuses a subgraph output without one). */
function graphProto({ nodes, inputs = [], inits = [], outputs }, sub = false) {
  return msg((g) => {
    nodes.forEach((n, k) => bytes(g, 1, msg((node) => {
      for (const i of n.inputs) str(node, 1, i);
      for (const o of n.outputs) str(node, 2, o);
      str(node, 3, n.name ?? `${n.op}_${k}`);
      str(node, 4, n.op);
      const floats = Object.entries(n.floats ?? {}).map(([name, x]) => [name, Array.isArray(x) ? { fs: x } : { f: x }]);
      for (const [name, v] of Object.entries({ ...n.ints, ...n.strings, ...Object.fromEntries(floats), ...n.attrs })) bytes(node, 5, msg((a) => attribute(a, name, v)));
      if (n.domain) str(node, 7, n.domain);
    })));
    str(g, 2, 'g');
    for (const t of inits) bytes(g, 5, msg((tensor) => {
      for (const d of t.dims) int(tensor, 1, d);
      int(tensor, 2, ELEM[t.dtype]);
      str(tensor, 8, t.name);
      if (t.dtype === 'string') for (const v of t.values) str(tensor, 6, v); /* string_data */
      else bytes(tensor, 9, rawData(t.dtype, t.values));
    }));
    for (const i of inputs) bytes(g, 11, valueInfo(i.name, i.dims, i.dtype, i.kind));
    for (const o of outputs) bytes(g, 12, typeof o === 'string' ? valueInfo(o, null, undefined, sub ? 'tensor' : 'none') : valueInfo(o.name, o.dims ?? null, o.dtype, o.kind));
  });
}

export function onnxBytes({ nodes, inputs, inits = [], outputs, opset = 17, ir = 8, imports = [] }) {
  const graph = graphProto({ nodes, inputs, inits, outputs });
  return Uint8Array.from(msg((m) => {
    int(m, 1, ir);
    bytes(m, 8, msg((op) => int(op, 2, opset)));
    for (const { domain, version } of imports) bytes(m, 8, msg((op) => { str(op, 1, domain); int(op, 2, version); }));
    bytes(m, 7, graph);
  }));
}

/** A chain of n Relu nodes from x [n, 2] to y. */
export function reluChain(n) {
  const nodes = Array.from({ length: n }, (_, k) => ({ op: 'Relu', inputs: [k ? `v${k}` : 'x'], outputs: [k + 1 < n ? `v${k + 1}` : 'y'] }));
  return onnxBytes({ nodes, inputs: [{ name: 'x', dims: ['n', 2] }], outputs: ['y'] });
}
