// ONNX ModelProto bytes written by hand (protobuf's wire format), for graphs the tracer does not
// write: the session tests' hostile graphs and tools/bench_plan.mjs's long chains.
//
//   onnxBytes({ nodes: [{ op, inputs, outputs, name?, ints?: { attr: n } }],
//               inputs: [{ name, dims: [2, 'n'] }],        // float32; a string dim is named
//               inits: [{ name, dtype: 'int64' | 'bool', dims, values }],
//               outputs: ['y', ...], opset: 17 })          // -> Uint8Array

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

/** A float32 ValueInfo of dims (numbers fixed, strings named), or without a shape. */
const valueInfo = (name, dims) => msg((m) => {
  str(m, 1, name);
  bytes(m, 2, msg((type) => bytes(type, 1, msg((tt) => {
    int(tt, 1, 1);
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
      for (const [name, v] of Object.entries(n.ints ?? {})) bytes(node, 5, msg((a) => { str(a, 1, name); int(a, 3, v); int(a, 20, 2); }));
    })));
    str(g, 2, 'g');
    for (const t of inits) bytes(g, 5, msg((tensor) => {
      for (const d of t.dims) int(tensor, 1, d);
      int(tensor, 2, t.dtype === 'bool' ? 9 : 7);
      str(tensor, 8, t.name);
      bytes(tensor, 9, t.dtype === 'bool' ? t.values.map(Number) : new Uint8Array(BigInt64Array.from(t.values.map(BigInt)).buffer));
    }));
    for (const i of inputs) bytes(g, 11, valueInfo(i.name, i.dims));
    for (const o of outputs) bytes(g, 12, valueInfo(o, null));
  });
  return Uint8Array.from(msg((m) => { int(m, 1, 8); bytes(m, 8, msg((op) => int(op, 2, opset))); bytes(m, 7, graph); }));
}

/** A chain of n Relu nodes from x [n, 2] to y. */
export function reluChain(n) {
  const nodes = Array.from({ length: n }, (_, k) => ({ op: 'Relu', inputs: [k ? `v${k}` : 'x'], outputs: [k + 1 < n ? `v${k + 1}` : 'y'] }));
  return onnxBytes({ nodes, inputs: [{ name: 'x', dims: ['n', 2] }], outputs: ['y'] });
}
