// The fuzz runner's checks of two onnxruntime-web kernels (runner.mjs) whose error a model can
// amplify, by the same .onnx with each such node written out in ops onnxruntime computes to a few
// ulps: where that agrees, the graph was right and the difference is the kernel's.
//
// Sigmoid: its kernel is accurate to
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
// Gelu (approximate 'none'): its kernel computes 0.5 x (1 + erf(x / sqrt 2)) in float, where
// 1 + erf cancels for negative x (at -5: -1.49e-6 for -1.43e-6; 0 from about -5.9, where GELU is
// -1e-8 and, at -13, still -8e-38); eager and the Session take that tail from erfc (src/core/math.c,
// om__gelu_erff_n), so a sign() or a comparison with 0 after a GELU (random models 27:38257,
// 27:53594) differs in onnxruntime-web alone. Written out: below x = -0.7071068, the erfc form
// 0.5 x e (e g(b)), b = -x / sqrt 2, e = Exp(-b^2 / 2) (squared by the products, so no Exp
// underflows before GELU does), g math.c's two rationals (Where(b < 4, ...)); above it the Gelu
// node itself.
//
// Softmax: its kernel gives 0 where a probability is below about e^-87.5 times the row's largest
// (subnormal: 6e-39 at -88, where eager, the Session and onnxruntime's own Exp give it), so
// gt(0) of a softmax over a wide row (random model 27:48155: values stepped by 0.1 over 1,260
// elements) differs in onnxruntime-web alone. Written out: Exp(x - ReduceMax(x) + 64) / ReduceSum(that)
// along its axis.
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
    } else throw new Error(`written-out: wire type ${wt} of field ${no} is not one onnx.proto uses`);
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

/** AttributeProto value_float = v (name 1, f 2 as fixed32, type 20 = FLOAT). */
function valueFloat(v) {
  const f = new Uint8Array(4);
  new DataView(f.buffer).setFloat32(0, v, true);
  return join([str(1, 'value_float'), [2 * 8 + 5], f, varint(20 * 8), [1]]);
}
const ONE = valueFloat(1);
const ZERO = valueFloat(0);

/** Whether a NodeProto's attributes include approximate = "tanh" (AttributeProto name 1, s 4). */
function tanhForm(fs) {
  return fs.filter((f) => f.no === 5).some((a) => {
    const af = fields(a.payload);
    const name = af.find((g) => g.no === 1), s = af.find((g) => g.no === 4);
    return name && text.decode(name.payload) === 'approximate' && s && text.decode(s.payload) === 'tanh';
  });
}

/** math.c's erfc pieces (ERFC_MID_*, ERFC_FAR_*), highest power first. */
const ERFC_MID_P = [-2.5320982208129157e-07, 0.025003631280522395, 0.18813857963120045, 0.6401918889868341, 1.1434498458584403, 1.0000003881904396];
const ERFC_MID_Q = [0.044304270468113187, 0.3336571237317269, 1.1551988294024749, 2.2036572940981514, 2.2718335340372962, 1];
const ERFC_FAR_P = [3.1973901619565921, 3.3192916828692276, 0.56418958227533922];
const ERFC_FAR_Q = [1.138533708225441, 8.1089363524859142, 6.3832907128287362, 1];

/** The nodes of a Gelu of approximate 'none' from x to y, its tail from erfc (above). */
function geluNodes(x, y, geluNode) {
  const t = (s) => `${y}__gelu_${s}`, out = [];
  let k = 0;
  const c = (v) => { const n = t(`c${k++}`); out.push(node('Constant', [], [n], [valueFloat(v)])); return n; };
  const op = (type, ins) => { const n = t(`v${k++}`); out.push(node(type, ins, [n])); return n; };
  const horner = (cs, v) => cs.slice(1).reduce((r, ci) => op('Add', [op('Mul', [r, v]), c(ci)]), c(cs[0]));
  const b = op('Mul', [x, c(-Math.SQRT1_2)]), b2 = op('Mul', [b, b]), iz = op('Reciprocal', [b2]);
  const mid = op('Div', [horner(ERFC_MID_P, b), horner(ERFC_MID_Q, b)]);
  const far = op('Div', [op('Div', [horner(ERFC_FAR_P, iz), horner(ERFC_FAR_Q, iz)]), b]);
  const g = op('Where', [op('Less', [b, c(4)]), mid, far]);
  const e = op('Exp', [op('Mul', [b2, c(-0.5)])]);
  const tail = op('Mul', [op('Mul', [x, c(0.5)]), op('Mul', [e, op('Mul', [e, g])])]);
  out.push(geluNode(t('head')));
  out.push(node('Where', [op('Less', [x, c(-0.7071068)]), tail, t('head')], [y]));
  return out;
}

/** A NodeProto's bytes rewritten: a Sigmoid as eager computes it (nine nodes), with count.op
 * 'Sigmoid', a Gelu of approximate 'none' with its tail from erfc, with 'Gelu', or a Softmax as
 * Exp, ReduceMax, ReduceSum and Div, with 'Softmax'; any other with its subgraphs rewritten. */
function rewriteNode(bytes, count) {
  const fs = fields(bytes);
  const opType = fs.find((f) => f.no === 4);
  const domain = fs.find((f) => f.no === 7);
  const isOp = (name) => opType && text.decode(opType.payload) === name && (!domain || domain.payload.length === 0);
  if (count.op === 'Gelu' && isOp('Gelu') && !tanhForm(fs)) {
    const [x] = fs.filter((f) => f.no === 1).map((f) => text.decode(f.payload));
    const [y] = fs.filter((f) => f.no === 2).map((f) => text.decode(f.payload));
    count.n++;
    // the Gelu node itself, writing the head's name
    return geluNodes(x, y, (head) => join(fs.map((f) => (f.no === 2 ? str(2, head) : f.raw))));
  }
  if (count.op === 'Softmax' && isOp('Softmax')) {
    const [x] = fs.filter((f) => f.no === 1).map((f) => text.decode(f.payload));
    const [y] = fs.filter((f) => f.no === 2).map((f) => text.decode(f.payload));
    count.n++;
    return softmaxNodes(x, y, intAttribute(fs, 'axis', -1));
  }
  if (count.op === 'Sigmoid' && isOp('Sigmoid')) {
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

/** The signed varint of an int64 (ten bytes when negative, as protobuf writes it). */
function varint64(v) {
  let u = BigInt.asUintN(64, BigInt(v));
  const out = [];
  while (u >= 0x80n) {
    out.push(Number(u & 0x7fn) | 0x80);
    u >>= 7n;
  }
  out.push(Number(u));
  return out;
}

/** A NodeProto's int attribute (AttributeProto name 1, i 3), or dflt. */
function intAttribute(fs, name, dflt) {
  for (const a of fs.filter((f) => f.no === 5)) {
    const af = fields(a.payload), n = af.find((g) => g.no === 1);
    if (!n || text.decode(n.payload) !== name) continue;
    const i = af.find((g) => g.no === 3);
    if (!i) return dflt;
    let [v] = readVarint(i.raw, 1); // the key is one byte (field 3)
    if (v >= 2 ** 63) v -= 2 ** 64;
    return v;
  }
  return dflt;
}

/** The nodes of a Softmax along axis from x to y: e = Exp(x - ReduceMax(x) + 64), e / ReduceSum(e):
 * the e^64 (both sides) keeps e normal down to e^-151 of the largest, so a subnormal probability
 * is rounded once, by the Div, as eager's double quotient is. */
function softmaxNodes(x, y, axis) {
  const t = (s) => `${y}__softmax_${s}`;
  const axes = join([str(1, 'value_ints'), varint(8 * 8), varint64(axis), varint(20 * 8), [7]]); // INTS
  return [node('Constant', [], [t('axes')], [axes]), node('Constant', [], [t('up')], [valueFloat(64)]),
    node('ReduceMax', [x, t('axes')], [t('max')]), node('Sub', [x, t('max')], [t('d')]), node('Add', [t('d'), t('up')], [t('du')]),
    node('Exp', [t('du')], [t('e')]), node('ReduceSum', [t('e'), t('axes')], [t('sum')]), node('Div', [t('e'), t('sum')], [y])];
}

/** The ModelProto bytes with every node of op (in the graph and its subgraphs) written out, or null when the model has none. */
function writtenOut(bytes, op) {
  const count = { n: 0, op };
  const out = join(fields(bytes).map((f) => (f.no === 7 ? field(7, rewriteGraph(f.payload, count)) : f.raw)));
  return count.n ? out : null;
}

/**
 * The ModelProto bytes with every Sigmoid node (in the graph and its subgraphs) written as
 * Where(x >= 0, 1, e) / (1 + e), e = Exp(-|x|), or null when the model has none.
 */
export const sigmoidWrittenOut = (bytes) => writtenOut(bytes, 'Sigmoid');

/**
 * The ModelProto bytes with every Gelu node of approximate 'none' written with its tail (x below
 * -0.7071068) from erfc, as eager computes it, or null when the model has none.
 */
export const geluWrittenOut = (bytes) => writtenOut(bytes, 'Gelu');

/**
 * The ModelProto bytes with every Softmax node written as Exp(x - ReduceMax(x)) / ReduceSum(that)
 * along its axis, or null when the model has none.
 */
export const softmaxWrittenOut = (bytes) => writtenOut(bytes, 'Softmax');
