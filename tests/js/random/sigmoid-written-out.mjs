// The fuzz runner's check of onnxruntime-web's Sigmoid (runner.mjs): its kernel is accurate to
// about 6e-8 absolute, not relative: it returns 0 for every input below about -16.6 and steps of
// 2^-24 above, where the true value (eager's, the Session's) is a small positive number. A model
// that divides by such a value, takes its square root or compares it with 0 (random models
// 21:84597 and 21:70678: x * sigmoid(sum) then sqrt, or > 0) amplifies that into a large error
// in onnxruntime-web alone. To tell that from a wrong graph, the runner writes the same .onnx
// with every Sigmoid spelled out as eager computes it, e = Exp(-|x|), Where(x >= 0, 1, e) / (1 + e),
// ops onnxruntime computes to a few ulps, and runs it again: where that agrees, the graph was
// right and the difference is the Sigmoid kernel's. (Reciprocal(Exp(Neg(x)) + 1) is 0 from
// x = -88.7, where exp(-x) overflows, and eager's is positive down to -103: random model 24:33082
// takes the sign of x * sigmoid of a sum of 41 values.)
//
// The rewrite works on the protobuf bytes directly (wire format: field numbers of onnx.proto's
// ModelProto.graph 7, GraphProto.node 1, NodeProto input 1 / output 2 / op_type 4 / attribute 5
// / domain 7, AttributeProto g 6 / graphs 11), so it needs no ONNX library: every other field is
// copied byte for byte, and the subgraphs of If and Loop nodes are rewritten the same way.

const utf8 = new TextEncoder();
const text = new TextDecoder();

function readVarint(buf, at) {
  let v = 0, mul = 1, b;
  do {
    b = buf[at++];
    v += (b & 0x7f) * mul;
    mul *= 128;
  } while (b & 0x80);
  return [v, at];
}

function varint(v) {
  const out = [];
  while (v >= 0x80) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

/** The fields of one message: [{ no, wt, raw (the key and value as written), payload? (wire type 2) }]. */
function fields(buf) {
  const out = [];
  for (let at = 0; at < buf.length;) {
    const start = at;
    let key;
    [key, at] = readVarint(buf, at);
    const no = Math.floor(key / 8), wt = key % 8;
    let payload;
    if (wt === 0) [, at] = readVarint(buf, at);
    else if (wt === 1) at += 8;
    else if (wt === 5) at += 4;
    else if (wt === 2) {
      let len;
      [len, at] = readVarint(buf, at);
      payload = buf.subarray(at, at + len);
      at += len;
    } else throw new Error(`sigmoid-written-out: wire type ${wt} of field ${no} is not one onnx.proto uses`);
    out.push({ no, wt, raw: buf.subarray(start, at), payload });
  }
  return out;
}

/** Byte arrays (Uint8Arrays or arrays of numbers) one after the other. */
function join(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A length-delimited field no holding bytes. */
const field = (no, bytes) => join([varint(no * 8 + 2), varint(bytes.length), bytes]);
const str = (no, s) => field(no, utf8.encode(s));

/** A NodeProto of op_type with inputs and outputs (and attribute bytes, each an AttributeProto). */
const node = (opType, inputs, outputs, attributes = []) =>
  join([...inputs.map((s) => str(1, s)), ...outputs.map((s) => str(2, s)), str(4, opType), ...attributes.map((a) => field(5, a))]);

/** AttributeProto value_float = 1 and = 0 (name 1, f 2 as fixed32, type 20 = FLOAT). */
const ONE = join([str(1, 'value_float'), [2 * 8 + 5, 0x00, 0x00, 0x80, 0x3f], varint(20 * 8), [1]]);
const ZERO = join([str(1, 'value_float'), [2 * 8 + 5, 0x00, 0x00, 0x00, 0x00], varint(20 * 8), [1]]);

/** A NodeProto's bytes rewritten: a Sigmoid as eager computes it (nine nodes), any other with its subgraphs rewritten. */
function rewriteNode(bytes, count) {
  const fs = fields(bytes);
  const opType = fs.find((f) => f.no === 4);
  const domain = fs.find((f) => f.no === 7);
  if (opType && text.decode(opType.payload) === 'Sigmoid' && (!domain || domain.payload.length === 0)) {
    const [x] = fs.filter((f) => f.no === 1).map((f) => text.decode(f.payload));
    const [y] = fs.filter((f) => f.no === 2).map((f) => text.decode(f.payload));
    count.n++;
    const t = (s) => `${y}__sigmoid_${s}`;
    // e = exp(-|x|), (x >= 0 ? 1 : e) / (1 + e): eager's form (om__sigmoidf), small and positive
    // down to -103 where 1 / (1 + exp(-x)) is 0 from -88.7 (exp overflows)
    return [node('Constant', [], [t('one')], [ONE]), node('Constant', [], [t('zero')], [ZERO]), node('Abs', [x], [t('abs')]),
      node('Neg', [t('abs')], [t('neg')]), node('Exp', [t('neg')], [t('exp')]), node('Add', [t('exp'), t('one')], [t('den')]),
      node('GreaterOrEqual', [x, t('zero')], [t('pos')]), node('Where', [t('pos'), t('one'), t('exp')], [t('num')]),
      node('Div', [t('num'), t('den')], [y])];
  }
  return [join(fs.map((f) => (f.no === 5 ? field(5, rewriteAttribute(f.payload, count)) : f.raw)))];
}

function rewriteAttribute(bytes, count) {
  return join(fields(bytes).map((f) => (f.no === 6 || f.no === 11 ? field(f.no, rewriteGraph(f.payload, count)) : f.raw)));
}

function rewriteGraph(bytes, count) {
  return join(fields(bytes).flatMap((f) => (f.no === 1 ? rewriteNode(f.payload, count).map((n) => field(1, n)) : [f.raw])));
}

/**
 * The ModelProto bytes with every Sigmoid node (in the graph and its subgraphs) written as
 * Where(x >= 0, 1, e) / (1 + e), e = Exp(-|x|), or null when the model has none.
 */
export function sigmoidWrittenOut(bytes) {
  const count = { n: 0 };
  const out = join(fields(bytes).map((f) => (f.no === 7 ? field(7, rewriteGraph(f.payload, count)) : f.raw)));
  return count.n ? out : null;
}
