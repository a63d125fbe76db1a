// ONNX ModelProto bytes written by hand (protobuf's wire format), for graphs the tracer does not
// write: the session tests' hostile graphs and tools/bench_plan.mjs's long chains.
//
//   onnxBytes({ nodes: [{ op, inputs, outputs, name?,
//                         ints?: { attr: n | [n, ...] },     // INT, or INTS for an array
//                         floats?: { attr: x | [x, ...] },   // FLOAT, or FLOATS for an array
//                         strings?: { attr: 's' } }],
//               inputs: [{ name, dims: [2, 'n'], dtype? }], // float32 unless dtype; a string dim is named
//               inits: [{ name, dtype: 'float32' | 'int64' | 'bool', dims, values }],
//               outputs: ['y' | { name, dtype }, ...], opset: 17 }) // float32 unless dtype -> Uint8Array

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

/** ONNX's element type numbers of the dtypes these graphs use. */
const ELEM = { float32: 1, int64: 7, bool: 9 };

function fixed32(out, field, x) {
  varint(out, (field << 3) | 5);
  for (const b of new Uint8Array(Float32Array.of(x).buffer)) out.push(b);
}

/** AttributeProto fields: name 1, f 2, i 3, s 4, floats 7, ints 8, type 20 (FLOAT 1, INT 2, STRING 3, FLOATS 6, INTS 7). */
function attributes(node, n) {
  for (const [name, v] of Object.entries(n.ints ?? {})) {
    bytes(node, 5, msg((a) => {
      str(a, 1, name);
      if (Array.isArray(v)) { for (const x of v) int(a, 8, x); int(a, 20, 7); } else { int(a, 3, v); int(a, 20, 2); }
    }));
  }
  for (const [name, v] of Object.entries(n.floats ?? {})) {
    bytes(node, 5, msg((a) => {
      str(a, 1, name);
      if (Array.isArray(v)) { for (const x of v) fixed32(a, 7, x); int(a, 20, 6); } else { fixed32(a, 2, v); int(a, 20, 1); }
    }));
  }
  for (const [name, v] of Object.entries(n.strings ?? {})) bytes(node, 5, msg((a) => { str(a, 1, name); str(a, 4, v); int(a, 20, 3); }));
}

/** Initializer values as raw_data bytes of dtype. */
function rawData(dtype, values) {
  if (dtype === 'bool') return values.map(Number);
  if (dtype === 'float32') return new Uint8Array(Float32Array.from(values).buffer);
  return new Uint8Array(BigInt64Array.from(values.map(BigInt)).buffer);
}

/** A ValueInfo of dtype (float32 by default) and dims (numbers fixed, strings named), or without a shape. */
const valueInfo = (name, dims, dtype = 'float32') => msg((m) => {
  str(m, 1, name);
  bytes(m, 2, msg((type) => bytes(type, 1, msg((tt) => {
    int(tt, 1, ELEM[dtype]);
    if (dims) bytes(tt, 2, msg((shape) => { for (const d of dims) bytes(shape, 1, msg((dim) => (typeof d === 'string' ? str(dim, 2, d) : int(dim, 1, d)))); }));
  }))));
});

export function onnxBytes({ nodes, inputs, inits = [], outputs, opset = 17 }) {
  const graph = msg((g) => {
    nodes.forEach((n, k) => bytes(g, 1, msg((node) => {
      for (const i of n.inputs) str(node, 1, i);
      for (const o of n.outputs) str(node, 2, o);
      str(node, 3, n.name ?? `${n.op}_${k}`);
      str(node, 4, n.op);
      attributes(node, n);
    })));
    str(g, 2, 'g');
    for (const t of inits) bytes(g, 5, msg((tensor) => {
      for (const d of t.dims) int(tensor, 1, d);
      int(tensor, 2, ELEM[t.dtype]);
      str(tensor, 8, t.name);
      bytes(tensor, 9, rawData(t.dtype, t.values));
    }));
    for (const i of inputs) bytes(g, 11, valueInfo(i.name, i.dims, i.dtype));
    for (const o of outputs) bytes(g, 12, typeof o === 'string' ? valueInfo(o, null) : valueInfo(o.name, null, o.dtype));
  });
  return Uint8Array.from(msg((m) => { int(m, 1, 8); bytes(m, 8, msg((op) => int(op, 2, opset))); bytes(m, 7, graph); }));
}

/** A chain of n Relu nodes from x [n, 2] to y. */
export function reluChain(n) {
  const nodes = Array.from({ length: n }, (_, k) => ({ op: 'Relu', inputs: [k ? `v${k}` : 'x'], outputs: [k + 1 < n ? `v${k + 1}` : 'y'] }));
  return onnxBytes({ nodes, inputs: [{ name: 'x', dims: ['n', 2] }], outputs: ['y'] });
}
