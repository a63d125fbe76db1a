// The fuzz runner's checks of onnxruntime-web kernels (runner.mjs) whose error a model can
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
// Gelu (approximate 'tanh') and Elu: a probe of each activation the generator uses at extreme
// inputs (2026-12-07; +-1e-45 to +-100 by quarter decades, -120 to 120 by 0.37) against eager found
// two more: the tanh-approximate Gelu's 1 + tanh is an ulp of 1 (6e-8) off where it cancels (at
// -4.93 eager -4.41e-7, onnxruntime-web -5.88e-7; near -5.15 even the sign), and Elu's exp(x) - 1
// is 0 for x above about -3e-8 and 6e-8 absolute below (eager's expm1 gives x there). Eager's tanh
// is math.c's rational in double, within 0.518 ulp (not correctly rounded), so no float form of
// the exact value gives its bits where 1 + tanh cancels (one in 200 differs by a step there):
// the Gelu is written as eager computes it, its tanh in double (Cast), bit for bit; the Elu as
// Where(x > 0, x, alpha expm1(x)), expm1 from its Taylor series above -0.5. (Mish, which the
// generator does not use, is 0 from about -100 where eager's is subnormal; Tanh flushes subnormal
// inputs to 0: neither is named.)
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
/** AttributeProto value = a scalar double tensor (name 1, t 5: TensorProto data_type 2 = 11 DOUBLE,
 * raw_data 9; type 20 = TENSOR). */
function valueDouble(v) {
  const raw = new Uint8Array(8);
  new DataView(raw.buffer).setFloat64(0, v, true);
  return join([str(1, 'value'), field(5, join([varint(2 * 8), [11], field(9, raw)])), varint(20 * 8), [4]]);
}

/** TensorProto element types, and a Cast's to = type (AttributeProto i 3; type 20 = INT). */
const FLOAT = 1, DOUBLE = 11;
const castTo = (type) => join([str(1, 'to'), varint(3 * 8), varint(type), varint(20 * 8), [2]]);
const ONE = valueFloat(1);
const ZERO = valueFloat(0);

/** Whether a NodeProto's attributes include approximate = "tanh" (AttributeProto s 4). */
function tanhForm(fs) {
  const s = attribute(fs, 'approximate')?.find((g) => g.no === 4);
  return !!s && text.decode(s.payload) === 'tanh';
}

/** math.c's erfc pieces (ERFC_MID_*, ERFC_FAR_*), highest power first. */
const ERFC_MID_P = [-2.5320982208129157e-07, 0.025003631280522395, 0.18813857963120045, 0.6401918889868341, 1.1434498458584403, 1.0000003881904396];
const ERFC_MID_Q = [0.044304270468113187, 0.3336571237317269, 1.1551988294024749, 2.2036572940981514, 2.2718335340372962, 1];
const ERFC_FAR_P = [3.1973901619565921, 3.3192916828692276, 0.56418958227533922];
const ERFC_FAR_Q = [1.138533708225441, 8.1089363524859142, 6.3832907128287362, 1];

/** A node builder for one rewrite (names prefix_c0, prefix_v1, ...): out (the nodes made), c(v)
 * (a float Constant), d(v) (a double one), op(type, inputs, attributes) (one output), horner(cs,
 * v, k = c) (cs highest power first, constants made by k). */
function builder(prefix) {
  const out = [];
  let k = 0;
  const name = (s) => `${prefix}_${s}`;
  const constant = (attr) => { const n = name(`c${k++}`); out.push(node('Constant', [], [n], [attr])); return n; };
  const c = (v) => constant(valueFloat(v)), d = (v) => constant(valueDouble(v));
  const op = (type, ins, attrs) => { const n = name(`v${k++}`); out.push(node(type, ins, [n], attrs)); return n; };
  const horner = (cs, v, kc = c) => cs.slice(1).reduce((r, ci) => op('Add', [op('Mul', [r, v]), kc(ci)]), kc(cs[0]));
  return { out, name, c, d, op, horner };
}

/** The nodes of a Gelu of approximate 'none' from x to y, its tail from erfc (above). */
function geluNodes(x, y, geluNode) {
  const { out, name, c, op, horner } = builder(`${y}__gelu`);
  const b = op('Mul', [x, c(-Math.SQRT1_2)]), b2 = op('Mul', [b, b]), iz = op('Reciprocal', [b2]);
  const mid = op('Div', [horner(ERFC_MID_P, b), horner(ERFC_MID_Q, b)]);
  const far = op('Div', [op('Div', [horner(ERFC_FAR_P, iz), horner(ERFC_FAR_Q, iz)]), b]);
  const g = op('Where', [op('Less', [b, c(4)]), mid, far]);
  const e = op('Exp', [op('Mul', [b2, c(-0.5)])]);
  const tail = op('Mul', [op('Mul', [x, c(0.5)]), op('Mul', [e, op('Mul', [e, g])])]);
  out.push(geluNode(name('head')));
  out.push(node('Where', [op('Less', [x, c(-0.7071068)]), tail, name('head')], [y]));
  return out;
}

/** src/ops/elementwise.c's GELU_BETA and GELU_KAPPA (float constants there too), and
 * src/core/math.c's tanh: x P(u) / Q(u), u = x^2 / 81, x clamped to [-9.1, 9.1], in double. */
const GELU_BETA = 0.7978845608028654, GELU_KAPPA = 0.044715;
const TANH_P = [2.1688742678245565, 16.730594788613903, 26.267421874747829, 11.163006702024189, 0.99999999896242686];
const TANH_Q = [2.5447673858055855, 69.268531060108785, 223.12410114282252, 181.86868873846026, 38.163005880305889, 1.0];

/** The nodes of a Gelu of approximate 'tanh' from x to y as eager computes it, step for step:
 * 0.5 x (1 + t), u = BETA (x + KAPPA x x x) in float, t = math.c's tanh of u in double (Cast),
 * rounded to float once. ORT's kernel's 1 + tanh is an ulp of 1 (6e-8) off where it cancels (a
 * third of GELU at -4.9), and eager's own tanh is within 0.518 ulp, not correctly rounded, so no
 * float form of the exact value gives eager's bits there: this one does. */
function geluTanhNodes(x, y) {
  const { out, c, d, op, horner } = builder(`${y}__gelu_tanh`);
  const u = op('Mul', [op('Add', [x, op('Mul', [op('Mul', [op('Mul', [x, x]), x]), c(GELU_KAPPA)])]), c(GELU_BETA)]);
  const a = op('Max', [op('Min', [op('Cast', [u], [castTo(DOUBLE)]), d(9.1)]), d(-9.1)]);
  const v = op('Mul', [op('Mul', [a, a]), d(1 / 81)]);
  const t = op('Cast', [op('Div', [op('Mul', [a, horner(TANH_P, v, d)]), horner(TANH_Q, v, d)])], [castTo(FLOAT)]);
  out.push(node('Mul', [op('Mul', [x, c(0.5)]), op('Add', [c(1), t])], [y]));
  return out;
}

/** e^x - 1's Taylor series to x^10 divided by x (1, 1/2, 1/6, ...), highest power first. */
const EXPM1_TAYLOR = Array.from({ length: 10 }, (_, i) => 1 / [1, 2, 6, 24, 120, 720, 5040, 40320, 362880, 3628800][9 - i]);

/** The nodes of an Elu of alpha from x to y as eager computes it, x > 0 ? x : alpha expm1(x): the
 * expm1 from its Taylor series above -0.5 (no cancellation near 0; the next term is below 1e-9
 * relative there), Exp(x) - 1 from -0.5 down (at most -0.39, so Exp's ulps stay relative). */
function eluNodes(x, y, alpha) {
  const { out, c, op, horner } = builder(`${y}__elu`);
  const em1 = op('Where', [op('Greater', [x, c(-0.5)]), op('Mul', [x, horner(EXPM1_TAYLOR, x)]), op('Sub', [op('Exp', [x]), c(1)])]);
  out.push(node('Where', [op('Greater', [x, c(0)]), x, op('Mul', [em1, c(alpha)])], [y]));
  return out;
}

/** A NodeProto's bytes rewritten: with count.op 'Sigmoid' a Sigmoid as eager computes it (nine
 * nodes), 'Gelu' a Gelu of approximate 'none' with its tail from erfc, 'GeluTanh' one of
 * approximate 'tanh' as eager computes it (its tanh in double), 'Softmax' a Softmax as Exp,
 * ReduceMax, ReduceSum and Div, 'Elu' an Elu with its expm1 written out; any other node with its
 * subgraphs rewritten. */
function rewriteNode(bytes, count) {
  const fs = fields(bytes);
  const opType = fs.find((f) => f.no === 4);
  const domain = fs.find((f) => f.no === 7);
  const isOp = (name) => opType && text.decode(opType.payload) === name && (!domain || domain.payload.length === 0);
  const [x] = fs.filter((f) => f.no === 1).map((f) => text.decode(f.payload));
  const [y] = fs.filter((f) => f.no === 2).map((f) => text.decode(f.payload));
  const renamed = (head) => join(fs.map((f) => (f.no === 2 ? str(2, head) : f.raw))); // the node itself, writing head
  const rewrite = {
    Gelu: () => isOp('Gelu') && !tanhForm(fs) && geluNodes(x, y, renamed),
    GeluTanh: () => isOp('Gelu') && tanhForm(fs) && geluTanhNodes(x, y),
    Softmax: () => isOp('Softmax') && softmaxNodes(x, y, intAttribute(fs, 'axis', -1)),
    Elu: () => isOp('Elu') && eluNodes(x, y, floatAttribute(fs, 'alpha', 1)),
    Sigmoid: () => isOp('Sigmoid') && sigmoidNodes(x, y),
  }[count.op]?.();
  if (rewrite) {
    count.n++;
    return rewrite;
  }
  return [join(fs.map((f) => (f.no === 5 ? field(5, rewriteAttribute(f.payload, count)) : f.raw)))];
}

/** The nodes of a Sigmoid from x to y as eager computes it: e = exp(-|x|), (x >= 0 ? 1 : e) / (1 +
 * e) (om__sigmoidf), small and positive down to -103 where 1 / (1 + exp(-x)) is 0 from -88.7
 * (exp overflows). */
function sigmoidNodes(x, y) {
  const t = (s) => `${y}__sigmoid_${s}`;
  return [node('Constant', [], [t('one')], [ONE]), node('Constant', [], [t('zero')], [ZERO]), node('Abs', [x], [t('abs')]),
    node('Neg', [t('abs')], [t('neg')]), node('Exp', [t('neg')], [t('exp')]), node('Add', [t('exp'), t('one')], [t('den')]),
    node('GreaterOrEqual', [x, t('zero')], [t('pos')]), node('Where', [t('pos'), t('one'), t('exp')], [t('num')]),
    node('Div', [t('num'), t('den')], [y])];
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

/** The fields of a NodeProto's attribute named name (AttributeProto name 1), or null. */
function attribute(fs, name) {
  for (const a of fs.filter((f) => f.no === 5)) {
    const af = fields(a.payload), n = af.find((g) => g.no === 1);
    if (n && text.decode(n.payload) === name) return af;
  }
  return null;
}

/** A NodeProto's int attribute (AttributeProto i 3), or dflt. */
function intAttribute(fs, name, dflt) {
  const i = attribute(fs, name)?.find((g) => g.no === 3);
  if (!i) return dflt;
  let [v] = readVarint(i.raw, 1); // the key is one byte (field 3)
  if (v >= 2 ** 63) v -= 2 ** 64;
  return v;
}

/** A NodeProto's float attribute (AttributeProto f 2, fixed32), or dflt. */
function floatAttribute(fs, name, dflt) {
  const f = attribute(fs, name)?.find((g) => g.no === 2);
  return f ? new DataView(f.raw.buffer, f.raw.byteOffset + 1, 4).getFloat32(0, true) : dflt; // the key is one byte (field 2)
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

/**
 * The ModelProto bytes with every Gelu node of approximate 'tanh' written as eager computes it
 * (its tanh in double, as math.c's), or null when the model has none.
 */
export const geluTanhWrittenOut = (bytes) => writtenOut(bytes, 'GeluTanh');

/**
 * The ModelProto bytes with every Elu node written as Where(x > 0, x, alpha expm1(x)), expm1 from
 * its Taylor series above -0.5, or null when the model has none.
 */
export const eluWrittenOut = (bytes) => writtenOut(bytes, 'Elu');

/**
 * onnxruntime-web's kernels whose error a model can amplify, in the order the runner tries them
 * (runner.mjs): { key (the record's flag), label (the report's "ORT <label>"), writeOut (the
 * rewrite), how (the record's note: how the file was written out, and what the kernel does) }.
 * Sigmoid: accurate to about 6e-8 absolute, 0 below about -16.6; Gelu: its 0.5 x (1 + erf)
 * cancels, 0 below about -5.9 where GELU is -1e-8 to -1e-45; Softmax: 0 where a probability is
 * subnormal; Gelu tanh: its 1 + tanh cancels, an ulp of 1 (6e-8) off for negative x, a third of
 * GELU at -4.9, even its sign near -5.15; Elu: its exp(x) - 1 is 6e-8 absolute, 0 for x above
 * about -3e-8 where ELU is x (probes at extreme inputs: the file's header).
 */
export const ORT_KERNELS = [
  ['ortSigmoid', 'Sigmoid', sigmoidWrittenOut, 'each Sigmoid written as Where(x >= 0, 1, e) / (1 + e), e = Exp(-|x|): its kernel is accurate to about 6e-8 absolute (0 below about -16.6)'],
  ['ortGelu', 'Gelu', geluWrittenOut, "each Gelu's tail (x below -0.7071068) written from erfc, as eager computes it: its kernel's 0.5 x (1 + erf) cancels there (0 below about -5.9)"],
  ['ortSoftmax', 'Softmax', softmaxWrittenOut, "each Softmax written as Exp(x - ReduceMax(x) + 64) / ReduceSum(that): its kernel gives 0 where a probability is subnormal (below about e^-87.5 times the row's largest)"],
  ['ortGeluTanh', 'Gelu tanh', geluTanhWrittenOut, "each Gelu of approximate 'tanh' written as eager computes it (its tanh in double, Cast): its kernel's 1 + tanh cancels for negative x (an ulp of 1 off)"],
  ['ortElu', 'Elu', eluWrittenOut, "each Elu written as Where(x > 0, x, alpha expm1(x)), expm1 from its Taylor series above -0.5: its kernel's exp(x) - 1 is 6e-8 absolute (0 above about -3e-8)"],
].map(([key, label, writeOut, how]) => ({ key, label, writeOut, how: `${how}, which this model amplifies` }));
