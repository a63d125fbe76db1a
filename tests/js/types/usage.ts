// Type-checked with `npx tsc -p tests/js/types` (strict, noEmit): the shipped declarations
// (js/index.d.ts) must describe this usage, and reject the misuse marked @ts-expect-error.
import * as om from 'onemodel';
import { OmError, TraceError, Tensor, type DType, type MemoryInfo, type ErrorKind } from 'onemodel';

await om.ready();
await om.ready({ locateFile: (file, dir) => `${dir}${file}`, threads: false });
await om.ready({ wasmUrl: { href: 'https://example.com/onemodel.wasm' } });
// @ts-expect-error: threads is a boolean
await om.ready({ threads: 2 });
const load: ErrorKind = 'Load';
void load;
const v: string = om.version;

// creation
const a: Tensor = om.tensor([[1, 2, 3], [4, 5, 6]]);
const b = om.tensor(new Float32Array([1, 2, 3]), { shape: [3] });
const c = om.tensor([1n, 2n], { dtype: 'int64' });
const d = om.tensor([true, false]);
const e = om.tensor(3.5);
const z = om.zeros([2, 3], { dtype: 'float32' });
const o = om.ones(4);
const f = om.full([2], 7n);
const r0 = om.arange(5);
const r1 = om.arange(1, 5, { dtype: 'int64' });
const r2 = om.arange(0, 1, 0.25);
const u = om.rand([2, 2], { seed: 1 });
const n = om.randn([2, 2], { seed: 2n });
om.manualSeed(42);
const likes: Tensor[] = [om.zerosLike(a), om.onesLike(c, { dtype: 'float32' }), om.fullLike(a, 2), om.emptyLike(d),
  om.randLike(a, { seed: 3 }), om.randnLike(a)];
void likes;
// @ts-expect-error: randLike/randnLike make float32 only
om.randLike(a, { dtype: 'int64' });

// metadata
const shape: number[] = a.shape;
const dtype: DType = a.dtype;
const count: number = a.numel() + a.size(-1) + a.size().length + a.ndim + a.version;
const flags: boolean = a.isDisposed || a.isLeaf || a.requiresGrad;
const data: Float32Array | BigInt64Array | Uint8Array | Float64Array = a.toArray();
const x: number = e.item();
const text: string = a.toString();

// methods
const s1 = a.add(1).sub(b).mul(2).div(om.tensor(3)).pow(2).neg().abs().sign();
const s2 = a.exp().log().sqrt().rsqrt().relu().sigmoid().tanh();
const cmp = [a.eq(1), a.ne(b), a.lt(2), a.le(2), a.gt(true), a.ge(0n)];
const casts = [a.to('int64'), a.float(), a.long(), a.bool()];
const views = [
  a.reshape(3, 2), a.reshape([-1]), a.view(6), a.permute(1, 0), a.permute([1, 0]), a.transpose(0, 1),
  a.expand(2, 2, 3), a.slice(1, 0, 2), a.slice(0, null, null, 2), a.select(0, 1), a.squeeze(), a.squeeze([0]),
  a.unsqueeze(0), a.contiguous(), a.clone(), a.detach(), a.flatten(), a.flatten(0, 1), a.tril(), a.triu(1),
];
const parts: Tensor[] = a.split(1, 0);
const pieces: Tensor[] = [...a.split([1, 2n], -1), ...a.chunk(3, 1), ...a.unbind(), ...om.split(a, [1], 0), ...om.chunk(a, 2n), ...om.unbind(a, 1)];
const lower: Tensor = om.tril(om.triu(om.flatten(a, 1), -1)).logicalNot();
const swapped: Tensor = om.unsqueeze(om.swapaxes(om.permute(om.transpose(a, 0, 1), [1, 0]), 0, 1), 0).swapdims(0, 1);
const conv1d: Tensor = om.addmm(a, a, a, { beta: 0.5, alpha: 2 });
// @ts-expect-error: split sizes are integers
a.split(['1']);
const red = [a.sum(), a.sum(0), a.sum([0, 1], true), a.mean(null, true), a.amax(1), a.amin(-1, false)];
const m0: Tensor = a.max();
const [values, indices]: [Tensor, Tensor] = a.max(1, true);
const [minV, minI] = a.min(0);
const am: Tensor = a.argmax(1);
const am2: Tensor = a.argmin();
const mm: Tensor = a.matmul(om.ones([3, 1]));

// functions of several tensors
const joined = om.cat([a, a], 0);
const stacked = om.stack([b, b], 1);
const chosen = om.where(a.gt(2), a, 0);
const trig: Tensor = om.atan2(om.sin(a).cos().tan(), a.asinh().atan2(1)).minimum(a.maximum(0)).fmod(2).remainder(a);
const truth: Tensor = om.logicalAnd(a, om.logicalNot(a)).logicalOr(true).logicalXor(a.bitwiseNot().bitwiseAnd(3n));
const bits: Tensor = om.bitwiseXor(om.bitwiseOr(a, 1n), om.bitwiseAnd(a, 2)).bitwiseOr(false);
const hyper: Tensor[] = [a.sinh(), a.cosh(), a.acosh(), a.atanh(), a.asin(), a.acos(), a.atan(), om.cosh(a), om.acos(a), om.asin(a), om.tan(a)];
const inPlace: Tensor = a.clone().sin_().atan2_(1).fmod_(2).remainder_(a).arcsin_().logicalNot_().bitwiseNot_();
const numpyNames: Tensor[] = [om.arcsin(a), om.arctan2(a, 1), a.arccosh(), a.arctan2(a), om.pixelShuffle(om.zeros([1, 4, 1, 1]), 2)];
const keptWhere: Tensor = a.where(a.gt(2), 0);
const bucket: Tensor = om.bucketize(3, om.tensor([1, 5]), { right: true, outInt32: false });
const boolShift: Tensor = om.bitwiseLeftShift(om.tensor([true, false]), 2).bitwiseRightShift_(true);
const scattered: Tensor = om.sliceScatter(a, a.slice(0, 0, 1), 0, 0, 1).add(om.selectScatter(a, a.select(0, 0), 0, 0));
const prod = om.matmul(a, om.ones([3]));

// autograd
const w = om.randn([3, 1], { seed: 3 });
w.requiresGrad = true;
const loss = a.matmul(w).pow(2).mean();
loss.backward();
const g: Tensor | null = w.grad;
if (g !== null) {
  const gv = g.toArray();
  void gv;
}
loss.backward(om.tensor(1));
w.zeroGrad();
const noGradResult: number = om.noGrad(() => w.mul(2).sum().item());
om.noGrad(() => w.copy_(w.sub(0.1)).fill_(0).set_([0, 0], 1));
const m: om.Tensor = om.zeros([4, 6]).sliceScatter(om.ones([4, 2]), 1, 2, 4).selectScatter(om.ones([6]), 0, -1);
m.slice(0, -2).fill_(1).zero_().add_(1).sub_(m).mul_(2).div_(3).maskedFill_(m.gt(0), 0);
const rows = om.tensor([0, 1], { dtype: 'int64' });
m.indexPut_([rows], 1).indexPut_(rows, om.zeros([2]), true).maskedScatter_(m.gt(0), m.flatten());
const puts: Tensor[] = [om.indexPut(m, [rows, rows], 2), m.indexPut(rows, 0), om.maskedScatter(m, m.gt(0), m), m.maskedScatter(m.gt(0), m)];
const stats: Tensor[] = [om.var(m), m.var(1, false, true), om.std(m, [0, 1], { correction: 0 }), m.all(), om.any(m, 1, true), m.logsumexp(-1), m.norm(), om.norm(m, 1, 0), m.square(), om.isnan(m), m.isfinite(), m.expandAs(m), m.newZeros([2]), m.newFull([1], 3), om.nn.functional.normalize(m, { dim: 0 })];
export const dims: number = m.dim() + m.numel();
const sums: Tensor[] = [om.einsum('ij,jk->ik', m, m), om.einsum('ii', [m]), om.cdist(m, m), om.cdist(m, m, Infinity, { computeMode: 'use_mm_for_euclid_dist' })];
const cols: Tensor = om.nn.functional.unfold(om.zeros([1, 1, 4, 4]), [2, 2], { stride: 2, padding: [1, 0], dilation: 1 });
const img2: Tensor = om.nn.functional.fold(cols, 4, 2, { stride: 2, padding: [1, 0] });
const blocksMods = [new om.nn.Unfold([2, 2], { stride: 2 }), new om.nn.Fold([4, 4], 2, { stride: 2 })];
for (const b of blocksMods) b.dispose();
// @ts-expect-error computeMode is one of PyTorch's three names
om.cdist(m, m, 2, { computeMode: 'fast' });
om.dispose([rows, ...puts, ...sums, ...stats, cols, img2]);
m.select(1, 0).add_(om.ones([4]));

// memory
const kept: { t: Tensor; list: Tensor[] } = om.tidy(() => ({ t: om.ones([1]), list: [om.zeros([1])] }));
const info: MemoryInfo = om.memory();
const leaked: number = info.leaked + info.bytes + info.tensors;
om.dispose(kept);
om.dispose([a, b, c, d, e, z, o, f, r0, r1, r2, u, n, s1, s2, ...cmp, ...casts, ...views, ...parts, ...pieces, lower, swapped, conv1d, ...red]);
om.dispose([m0, values, indices, minV, minI, am, am2, mm, joined, stacked, chosen, trig, truth, bits, ...hyper, inPlace, ...numpyNames, keptWhere, bucket, boolShift, scattered, prod, w, loss]);

// errors
try {
  om.zeros([2]).add(om.zeros([3]));
} catch (err) {
  if (err instanceof TraceError) {
    const k: 'UnsupportedOperation' | 'DataDependent' | 'InPlaceMutation' | 'NoGradInTrace' | 'SymbolicShape' | 'InvalidUsage' = err.kind;
    void k;
  } else if (err instanceof OmError) {
    const k: ErrorKind = err.kind;
    void k;
  }
}

// tracing
const ex = om.randn([4, 3], { seed: 5 });
const tracer: om.Tracer = om.Tracer.begin();
const isOn: boolean = om.Tracer.active && tracer.recording;
const tx: Tensor = tracer.input('x', ex, ['batch', null]);
tracer.parameter('w', w);
const traced: om.TracedModel = tracer.finish({ y: tx.matmul(w).t() });
const sig: om.ValueInfo[] = [...traced.inputs, ...traced.outputs];
const dim0: number | string = sig[0]!.shape[0]!;
const gi: om.GraphInfo = traced.graph();
const opTypes: string[] = gi.nodes.map((node: om.GraphNode) => node.opType + node.inputs.join() + node.outputs.join());
const initShapes: number[][] = gi.initializers.map((i) => i.shape);
const bytes: Uint8Array = traced.toOnnx();
const saved: Uint8Array = traced.save();
const session: om.InferenceSession = traced.session({ mode: 'fast' });
const sessionOut: Record<string, Tensor> = session.run({ x: a });
const typed = session.run({ x: { data: new Float32Array(6), dims: [2, 3] } });
const names: string[] = [...session.inputNames, ...session.outputNames, ...session.inputs.map((i) => i.name)];
const planned: number = session.planBytes;
const kernels: string[] = session.planKernels;
const int8Feed = session.runData({ x: { data: new Int8Array(6), dims: [2, 3], type: 'int8' } });
const sequenceOut: Record<string, Tensor[]> = session.run<Tensor[]>({ xs: [a, { data: new Float32Array(2), dims: [2] }], o: null });
const seqData: om.SessionData[] = session.runData<om.SessionData[]>({ xs: [] }).ys;
void [sequenceOut, seqData];
const int8Data: om.ElementData = int8Feed.y.data;
const outType: om.ElementType | 'string' | null = session.outputTypes.y;
const inType: om.ElementType | 'string' = session.inputs[0].type;
const words: om.StringTensor = session.run<om.StringTensor>({ w: { type: 'string', dims: [2], data: ['a', 'b'] } }).y;
const wordData: readonly string[] = session.runData<om.StringTensor>({ w: words }).y.data;
void [wordData];
const doubleFeed = session.runData({ x: { data: new Float64Array(6), dims: [2, 3] } });
const float8Feed = session.runData({ x: { data: new Uint8Array(6), dims: [2, 3], type: 'float8e4m3fn' } });
void [int8Data, outType, inType, doubleFeed, float8Feed];
session.dispose();
const fromBytes: Promise<om.InferenceSession> = om.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
// @ts-expect-error: no such mode
traced.session({ mode: 'turbo' });
const written: number = traced.saveOnnx('/tmp/usage.onnx', { onProgress: (p: om.ExportProgress) => p.written / p.total });
const blob: Blob = traced.toBlob({ onProgress: ({ written, total }) => written <= total });
const blobBytes: Uint8Array = traced.toOnnx({});
const gone: boolean = traced.isDisposed;
traced.dispose();
om.Tracer.begin().abort();

// nn
class Net extends om.nn.Module {
  fc1 = new om.nn.Linear(3, 8);
  fc2 = new om.nn.Linear(8, 2, { bias: false });
  layers: om.nn.Linear[] = [new om.nn.Linear(2, 2)];
  constructor() {
    super();
    this.registerBuffer('scale', om.ones([2]));
  }
  forward(x: Tensor): Tensor {
    return this.layers[0]!.forward(this.fc2.forward(this.fc1.forward(x).relu()));
  }
}
const net = new Net().eval();
const training: boolean = net.training;
const named: [string, Tensor][] = net.namedParameters();
const params: Tensor[] = net.parameters();
const buffers: [string, Tensor][] = net.namedBuffers();
const sd: Record<string, Tensor> = net.stateDict();
const mods: [string, om.nn.Module][] = net.namedModules();
const lin: om.nn.Linear = net.fc1;
const feat: number = lin.inFeatures + lin.outFeatures;
const bias: Tensor | null = net.fc2.bias;
net.train().zeroGrad();
const t1 = om.trace(net, { x: [ex, ['batch', null]] });
const t2 = om.trace((a: Tensor, b: Tensor) => [a.add(b), a.sub(b)], { a: ex, b: [ex] }, { outputNames: ['sum', 'diff'] });
const t3 = om.trace((a: Tensor) => ({ y: a.relu() }), { a: [ex, null] }, { onProgress: (p: om.TraceProgress) => p.done / p.total });
om.trace({ forward: (a: Tensor) => a.exp() }, { a: ex }).dispose();
// nn.LSTM / nn.GRU
const lstm = new om.nn.LSTM(3, 4, { numLayers: 2, batchFirst: true, bidirectional: true, dropout: 0, bias: true });
const [seqOut, [hN, cN]]: [Tensor, [Tensor, Tensor]] = lstm.forward(om.zeros([2, 5, 3]), [om.zeros([4, 2, 4]), om.zeros([4, 2, 4])]);
const wih: Tensor = lstm.weight_ih_l0_reverse;
const hidden: number = lstm.hiddenSize + lstm.numLayers;
const gru = new om.nn.GRU(3, 4);
const [gOut, gH]: [Tensor, Tensor] = gru.forward(om.zeros([5, 2, 3]));
const gruFlags: boolean = gru.bias && !gru.batchFirst && !gru.bidirectional;

const axes: om.AxisNames = ['batch', null];
const input: om.TraceInput = [ex, axes];
const opts: om.TraceOptions = { outputNames: ['y'] };
const dimH: om.SymbolicDim = om.Dim('h', { multipleOf: 4, min: 8 });
const dimW: om.SymbolicDim = new om.Dim('w', { max: 64 });
const imageAxes: om.AxisNames = ['batch', null, dimH, dimW];
const dimSizes: number = dimH.multipleOf + dimH.min + dimW.max + imageAxes.length;
const symbols: om.TracedSymbol[] = t1.symbols;
const why: string | null = symbols[0]!.narrowedBy;
const runner = om.Tracer.begin();
runner.input('x', ex, ['batch', null]);
const ran: Record<string, Tensor> = runner.run((a: Tensor) => a.exp(), ['y']);
runner.finish(ran).dispose();
const narrowed: Tensor = ex.narrow(1, 0, 2);
void [dimSizes, why, narrowed];
for (const tm of [t1, t2, t3]) tm.dispose();
net.dispose();
om.dispose([ex, tx]);

// the norm family
const ln = new om.nn.LayerNorm([8], { eps: 1e-6, elementwiseAffine: true });
const gn = new om.nn.GroupNorm(2, 4, { affine: false });
const bn2: om.nn.BatchNorm2d = new om.nn.BatchNorm2d(4, { momentum: null, trackRunningStats: true });
const bn1 = new om.nn.BatchNorm1d(4);
const runMean: Tensor | null = bn2.running_mean;
const mha = new om.nn.MultiheadAttention(8, 2, { batchFirst: true });
const [attnOut, attnWeights]: [Tensor, Tensor | null] = mha.forward(ex, ex, ex, { needWeights: false, keyPaddingMask: null });
const sm: Tensor = ex.softmax(-1).logSoftmax(0);
const sdpa: Tensor = om.nn.functional.scaledDotProductAttention(ex, ex, ex, { isCausal: true, scale: 0.5 });
const lnF: Tensor = om.nn.functional.layerNorm(ex, 3, { weight: null, eps: 1e-5 });
const bnF: Tensor = om.nn.functional.batchNorm(ex, null, null, { training: true, momentum: 0.1 });
const mods2: om.nn.Module[] = [ln, gn, bn2, bn1, mha, new om.nn.Softmax(1), new om.nn.LogSoftmax(-1)];
// @ts-expect-error: the options of MultiheadAttention.forward are an object
mha.forward(ex, ex, ex, false);
void [runMean, attnOut, attnWeights, sm, sdpa, lnF, bnF, mods2];
// transformer
const enc = new om.nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16, activation: 'gelu', normFirst: true, batchFirst: true });
const encGelu = new om.nn.TransformerEncoderLayer(8, 2, { activation: (t: Tensor) => t.relu(), dropout: 0 });
const encOut: Tensor = enc.forward(ex, { srcMask: null, isCausal: false });
const attnDrop: number = enc.self_attn.dropout + enc.dropout1.p;
// @ts-expect-error: activation is 'relu', 'gelu', a function or a Module
new om.nn.TransformerEncoderLayer(8, 2, { activation: 'swish' });
void [encGelu, encOut, attnDrop];
// indexing and resampling
const ids = om.tensor([[1, 0], [2, 2]], { dtype: 'int64' });
const emb = new om.nn.Embedding(5, 3, { paddingIdx: 0 });
const looked: Tensor = emb.forward(ids);
const looked2: Tensor = om.nn.functional.embedding(ids, emb.weight, { paddingIdx: null });
const picked: Tensor = emb.weight.indexSelect(0, om.tensor([1, 1], { dtype: 'int64' })).gather(1, ids);
const added: Tensor = emb.weight.indexAdd(0, ids.reshape([-1]), om.ones([4, 3])).scatterAdd(0, ids, om.ones([2, 2]));
const reduced: Tensor = emb.weight.scatterReduce(0, ids, om.ones([2, 2]), 'amax', { includeSelf: false })
  .add(om.scatterReduce(emb.weight, { dim: 1, index: ids, src: om.ones([2, 2]), reduce: 'mean' }))
  .scatterReduce_(0, ids, om.ones([2, 2]), { reduce: 'prod' });
// @ts-expect-error: reductions are 'sum' | 'prod' | 'mean' | 'amax' | 'amin'
emb.weight.scatterReduce(0, ids, om.ones([2, 2]), 'max');
const uniqueRows = ids.unique({ dim: 0, returnInverse: true }) as Tensor[];
void [reduced, uniqueRows, om.uniqueConsecutive(ids, { dim: -1 })];
const img = om.randn([1, 2, 3, 3]);
const up: Tensor = om.nn.functional.interpolate(img, { scaleFactor: [2, 1.5], mode: 'bilinear', alignCorners: true });
const upm: Tensor = new om.nn.Upsample({ size: 5 }).forward(img);
const pad: number | null = emb.paddingIdx;
const upc: Tensor = om.nn.functional.interpolate(img, { size: 4, mode: 'bicubic', alignCorners: false });
// @ts-expect-error: modes are 'nearest' | 'bilinear' | 'bicubic'
om.nn.functional.interpolate(img, { size: 4, mode: 'area' });
const lossL1: Tensor = om.nn.functional.l1Loss(up, up, { reduction: 'sum' });
const bce: Tensor = new om.nn.BCEWithLogitsLoss({ posWeight: null }).forward(up, up);
const kl: Tensor = om.nn.functional.klDiv(up, up, { reduction: 'batchmean', logTarget: true });
const cos: Tensor = new om.nn.CosineSimilarity({ dim: 1, eps: 1e-6 }).forward(up, up);
const seq = om.randn([2, 3, 9]);
const p1: Tensor = om.nn.functional.maxPool1d(seq, 3, { stride: 2, ceilMode: true });
const p2: Tensor = new om.nn.AdaptiveAvgPool1d(4).forward(new om.nn.AvgPool1d([2]).forward(seq));
const inorm = new om.nn.InstanceNorm1d(3, { affine: true });
const n1: Tensor = inorm.forward(seq);
om.dispose([upc, lossL1, bce, kl, cos, seq, p1, p2, n1]);
inorm.dispose();
om.dispose([ids, looked, looked2, picked, added, img, up, upm]);
emb.dispose();
void pad;
// losses, containers, state dicts, optimizers (js/nn/loss.js, js/nn/container.js, js/optim/)
const seqNet = new om.nn.Sequential(new om.nn.Linear(2, 4), new om.nn.Linear(4, 3));
const first: om.nn.Module = seqNet.at(0);
const list = new om.nn.ModuleList([new om.nn.Linear(1, 1)]).append(new om.nn.Linear(1, 1));
const loaded: om.nn.LoadStateDictResult = seqNet.loadStateDict({ '0.weight': new Float32Array(8), '0.bias': [0, 0, 0, 0] }, { strict: false });
const logits: Tensor = seqNet.forward(om.randn([5, 2]));
const target = om.tensor([0n, 1n, 2n, 0n, 1n]);
const ce: Tensor = new om.nn.CrossEntropyLoss({ weight: om.ones([3]), ignoreIndex: -100, labelSmoothing: 0.1 }).forward(logits, target);
const nll: Tensor = om.nn.functional.nllLoss(logits, target, { reduction: 'sum' });
const mse: Tensor = new om.nn.MSELoss({ reduction: 'none' }).forward(logits, logits);
const ctc: Tensor = om.nn.functional.ctcLoss(om.randn([4, 1, 3]), om.tensor([[1n]]), [4], [1], { blank: 0, zeroInfinity: true });
const ctcMod: Tensor = new om.nn.CTCLoss().forward(om.randn([4, 1, 3]), om.tensor([[1n]]), om.tensor([4n]), om.tensor([1n]));
const sgd: om.optim.Optimizer = new om.optim.SGD(seqNet.parameters(), { lr: 0.1, momentum: 0.9, nesterov: true });
const adam = new om.optim.Adam(seqNet.parameters(), { betas: [0.9, 0.99], amsgrad: true });
const adamw = new om.optim.AdamW(seqNet.parameters(), { weightDecay: 0 });
const grouped = new om.optim.SGD([{ params: seqNet.at(0).parameters(), lr: 0.01 }, { params: seqNet.at(1).parameters(), nesterov: false }], { lr: 0.1, momentum: 0.9 });
const rms = new om.optim.RMSprop(seqNet.parameters(), { centered: true });
const sched = new om.optim.lrScheduler.SequentialLR(grouped, [new om.optim.lrScheduler.LinearLR(grouped, { startFactor: 0.1 }),
  new om.optim.lrScheduler.CosineAnnealingLR(grouped, 10, { etaMin: 1e-4 })], [5]);
const plateau = new om.optim.lrScheduler.ReduceLROnPlateau(rms, { mode: 'max', minLr: [0, 1e-5] });
const total: Tensor = om.nn.utils.clipGradNorm_(seqNet.parameters(), 1, 'inf', { errorIfNonfinite: true });
om.nn.utils.clipGradValue_(seqNet.parameters(), 0.5);
sched.step();
plateau.step(total);
const lrs: number[] = sched.getLastLr();
const optState: om.optim.OptimizerStateDict = grouped.stateDict();
grouped.loadStateDict(optState);
const torchState: om.optim.PyTorchOptimizerStateDict = grouped.stateDict({ format: 'pytorch' });
grouped.loadStateDict(torchState);
for (const o of [sgd, adam, adamw, grouped, rms]) { o.zeroGrad({ setToNone: false }); o.step(); o.dispose(); }
void lrs;
// @ts-expect-error: annealStrategy is 'cos' | 'linear'
new om.optim.lrScheduler.OneCycleLR(sgd, 0.1, { totalSteps: 10, annealStrategy: 'cosine' });
for (const m of list) m.dispose();
seqNet.dispose();
// @ts-expect-error: reduction is 'none' | 'mean' | 'sum'
om.nn.functional.mseLoss(logits, logits, { reduction: 'avg' });
// @ts-expect-error: betas is a pair
new om.optim.Adam([], { betas: 0.9 });
void [first, loaded, ce, nll, mse, ctc, ctcMod];
// convolution and pooling
const F = om.nn.functional;
const cimg = om.zeros([2, 1, 28, 28]);
const c2 = new om.nn.Conv2d(1, 6, 5, { padding: 2 });
const c1 = new om.nn.Conv1d(4, 8, 3, { stride: 2, bias: false, padding: 'same' });
const ctr = new om.nn.ConvTranspose2d(6, 3, [3, 2], { stride: 2, outputPadding: [1, 0], groups: 3 });
const pooled: Tensor = new om.nn.MaxPool2d(2, { ceilMode: true }).forward(c2.forward(cimg).relu());
const [pooledValues, pooledAt]: [Tensor, Tensor] = new om.nn.MaxPool2d(2, { returnIndices: true }).forward(cimg);
const unpooled: Tensor = new om.nn.MaxUnpool2d(2).forward(pooledValues, pooledAt, [8, 8]);
const [v1d, i1d]: [Tensor, Tensor] = om.nn.functional.maxPool1d(cimg.flatten(2), 2, { returnIndices: true });
const unpooled1d: Tensor = om.nn.functional.maxUnpool1d(v1d, i1d, 2, { stride: 2 });
const ct1 = new om.nn.ConvTranspose1d(4, 6, 3, { stride: 2, outputPadding: 1, groups: 2 });
const ct1named = new om.nn.ConvTranspose1d(4, 6, { kernelSize: 3, bias: false });
const up1d: Tensor = om.nn.functional.convTranspose1d(ct1.forward(om.zeros([1, 4, 5])), ct1named.weight.transpose(0, 1), { padding: 1 });
const avg: Tensor = new om.nn.AvgPool2d([2, 2], { countIncludePad: false }).forward(pooled);
const ad: Tensor = new om.nn.AdaptiveAvgPool2d([1, null]).forward(ctr.forward(pooled));
const ks: number[] = c2.kernelSize;
const fs: Tensor[] = [
  F.conv2d(cimg, c2.weight, c2.bias, { stride: [1, 1], padding: 'same', dilation: 1, groups: 1 }),
  F.conv2d(cimg, c2.weight, { padding: 2 }),
  F.conv1d(om.zeros([1, 4, 9]), c1.weight),
  F.convTranspose2d(pooled, ctr.weight, null, { stride: 2, outputPadding: 1 }),
  F.maxPool2d(cimg, 2, { stride: null, padding: [1, 0], dilation: 2 }),
  F.avgPool2d(cimg, 3, { stride: 2, ceilMode: true, countIncludePad: true }),
  F.adaptiveAvgPool2d(cimg, 1),
];
// @ts-expect-error: padding is a size or 'valid' / 'same'
F.conv2d(cimg, c2.weight, null, { padding: 'full' });
// @ts-expect-error: with returnIndices the result is [values, indices], not a Tensor
const notOne: Tensor = F.maxPool2d(cimg, 2, { returnIndices: true });
const grid: Tensor = om.nn.functional.gridSample(cimg, om.nn.functional.affineGrid(om.zeros([2, 2, 3]), [2, 1, 4, 4], { alignCorners: true }), { mode: 'nearest', paddingMode: 'reflection' });
const cubic: Tensor = F.gridSample(cimg, F.affineGrid(om.zeros([2, 2, 3]), [2, 1, 3, 5]), { mode: 'bicubic', paddingMode: 'border' });
// @ts-expect-error: 5-D bilinear is 'bilinear', as PyTorch names it
F.gridSample(cimg, om.zeros([2, 1, 1, 1, 3]), { mode: 'trilinear' });
void [avg, ad, ks, fs, unpooled, unpooled1d, notOne, up1d, grid, cubic];
for (const m of [c2, c1, ctr]) m.dispose();
// 3-D: clips [N, C, T, H, W]
const clip = om.zeros([1, 3, 4, 8, 8]);
const c3 = new om.nn.Conv3d(3, 4, [3, 1, 1], { stride: [1, 2, 2], padding: [1, 0, 0], bias: false });
const bn3 = new om.nn.BatchNorm3d(4);
const v3: Tensor = new om.nn.AdaptiveAvgPool3d([1, null, 1]).forward(
  new om.nn.AvgPool3d([1, 2, 2], { ceilMode: true }).forward(new om.nn.MaxPool3d(2, { padding: [1, 0, 0] }).forward(bn3.forward(c3.forward(clip)))));
const fs3: Tensor[] = [
  F.conv3d(clip, c3.weight, null, { padding: 'same', dilation: [2, 1, 1] }),
  F.maxPool3d(clip, [1, 2, 2], { stride: null, dilation: 1, ceilMode: false }),
  F.avgPool3d(clip, 2, { countIncludePad: false, divisorOverride: null }),
  F.adaptiveAvgPool3d(clip, 1),
  F.convTranspose3d(clip, om.zeros([3, 2, 2, 2, 2]), null, { stride: [1, 2, 2], outputPadding: [0, 1, 1], groups: 1 }),
];
const ct3 = new om.nn.ConvTranspose3d(3, 2, [2, 3, 3], { stride: 2, padding: [0, 1, 1], outputPadding: 1, bias: false });
const ct3y: Tensor = ct3.forward(clip);
// @ts-expect-error: ConvTranspose3d's padding is a size, not 'same'
F.convTranspose3d(clip, ct3.weight, null, { padding: 'same' });
void ct3y;
ct3.dispose();
// @ts-expect-error: a 3-D size is an integer or three
F.maxPool3d(clip, [2, 2]);
void [v3, fs3];
for (const m of [c3, bn3]) m.dispose();

// misuse the declarations reject
// @ts-expect-error: dtype names are 'float32' | 'int64' | 'bool' | 'float64'
om.zeros([2], { dtype: 'float16' });
// @ts-expect-error: strings are not tensor data
om.tensor('abc');
// @ts-expect-error: matmul takes a Tensor, not a number
om.ones([2]).matmul(2);
// @ts-expect-error: grad is read-only
w.grad = null;
// @ts-expect-error: the constructor is private
new Tensor();
// @ts-expect-error: max with a dim returns [values, indices], not a Tensor
const wrong: Tensor = om.ones([2]).max(0);

// @ts-expect-error: the Tracer constructor is private
new om.Tracer();
// @ts-expect-error: axis names are strings or null
om.Tracer.begin().input('x', ex, [1, null]);
// @ts-expect-error: finish takes an object of name -> Tensor
om.Tracer.begin().finish([ex]);
// @ts-expect-error: outputNames is an array of strings
om.trace((a: Tensor) => a, { a: ex }, { outputNames: 'y' });

void [v, shape, dtype, count, flags, data, x, text, noGradResult, leaked, wrong];
void [isOn, dim0, opTypes, initShapes, bytes, written, blob, blobBytes, gone, training, named, params, buffers, sd, mods, feat, bias, input, opts];
void [seqOut, hN, cN, wih, hidden, gOut, gH, gruFlags];

// ---- activations, clamp, cumsum, pad, maskedFill, dropout ----
{
  const x = om.randn([2, 6]);
  const F = om.nn.functional;
  const ys: om.Tensor[] = [
    x.erf(), x.clamp(-1, 1), x.clamp({ max: 0 }), x.clip(null, 2), x.cumsum(1), x.maskedFill(x.gt(0), -Infinity),
    F.relu(x), F.sigmoid(x), F.tanh(x), F.silu(x), F.hardswish(x), F.hardsigmoid(x), F.relu6(x), F.hardtanh(x, -2, 2), F.hardtanh(x, { maxVal: 3 }), F.leakyRelu(x, 0.2), F.leakyRelu(x, { negativeSlope: 0.1 }),
    F.elu(x), F.elu(x, { alpha: 0.5 }), F.gelu(x), F.gelu(x, { approximate: 'tanh' }), F.softplus(x, 2, 10),
    F.softplus(x, { beta: 2 }), F.pad(x, [1, 1], 'reflect'), F.pad(x, [1, -1], { mode: 'constant', value: 0.5 }),
    F.dropout(x, { p: 0.1, training: false }), F.dropout(x, 0.2),
  ];
  const mods: om.nn.Module[] = [
    new om.nn.ReLU(), new om.nn.LeakyReLU(0.2), new om.nn.ELU({ alpha: 2 }), new om.nn.GELU('tanh'), new om.nn.SiLU(),
    new om.nn.Softplus(1, 20), new om.nn.Hardswish(), new om.nn.Hardsigmoid({ inplace: true }), new om.nn.ReLU6(), new om.nn.ReLU({ inplace: true }),
    new om.nn.Hardtanh(0, 6), new om.nn.Hardtanh({ minVal: -2 }), new om.nn.Sigmoid(), new om.nn.Tanh(), new om.nn.Identity(1, 2),
    new om.nn.Dropout({ p: 0.3 }),
    // PyTorch's positional inplace: nn.ReLU(True), nn.Dropout(0.5, True), nn.LeakyReLU(0.2, True)
    new om.nn.ReLU(true), new om.nn.SiLU(true), new om.nn.Dropout(0.5, true), new om.nn.LeakyReLU(0.2, true), new om.nn.Hardtanh(0, 6, false),
  ];
  const w0 = om.zeros([4, 3]);
  const inits: Tensor[] = [
    om.nn.init.kaimingNormal_(w0, { mode: 'fan_out', nonlinearity: 'relu' }), om.nn.init.kaimingUniform_(w0, Math.sqrt(5)),
    om.nn.init.truncNormal_(w0, { std: 0.02 }), om.nn.init.normal_(w0, 0, 0.01), om.nn.init.zeros_(w0), om.nn.init.constant_(w0, 1),
    om.nn.init.xavierUniform_(w0, { gain: om.nn.init.calculateGain('tanh') }),
  ];
  w0.dispose();
  void inits;
  const mode: om.nn.PadMode = 'replicate';
  const d = new om.nn.Dropout(0.5);
  const p: number = d.p;
  om.dispose([x, ys]);
  void mods, mode, p;
}
// flatten
const flatM: Tensor = new om.nn.Flatten({ startDim: 1 }).forward(om.zeros([2, 3, 4]));
const flatF: Tensor = om.nn.functional.flatten(om.zeros([2, 3]), 0, -1);
void [flatM, flatF];
void [sessionOut, typed, names, planned, kernels, fromBytes, saved];

// safetensors
{
  const net = new om.nn.Linear(2, 3);
  const bytes: Uint8Array = om.safetensors.save(net.stateDict(), { metadata: { format: 'pt' } });
  const plain: Uint8Array = om.safetensors.save({ w: net.weight }, { metadata: null });
  const loaded: om.safetensors.Loaded = om.safetensors.load(bytes);
  const fromBuffer = om.safetensors.load(plain.buffer as ArrayBuffer);
  const meta: Record<string, string> = loaded.metadata;
  net.loadStateDict(loaded.tensors);
  const fromFile: Record<string, Tensor> = om.safetensors.loadFile('model.safetensors').tensors;
  const opts: om.safetensors.SaveOptions = { metadata: { a: 'b' } };
  om.dispose([loaded.tensors, fromBuffer.tensors, fromFile]);
  net.dispose();
  void [meta, opts];
}

// memory without tidy, containers, torchvision blocks
{
  const w = om.ones([2]);
  w.requiresGrad = true;
  const l = om.keep(w.mul(w).sum());
  l.backward({ retainGraph: true });
  l.backward(null, { retainGraph: false });
  const heap: number = om.memory().heapBytes;
  class Rope extends om.nn.Module {
    invFreq: Tensor | null;
    constructor() { super(); this.invFreq = this.registerBuffer('invFreq', om.ones([4]), { persistent: false }); }
  }
  const rope = new Rope();
  const named = new om.nn.Sequential({ conv0: new om.nn.Conv2d(1, 2, 3), relu0: new om.nn.ReLU() });
  const fromMap = new om.nn.Sequential(new Map<string, om.nn.Module>([['fc', new om.nn.Linear(2, 2)]]));
  named.addModule('pool0', new om.nn.MaxPool2d(2));
  const dict = new om.nn.ModuleDict({ a: new om.nn.Linear(2, 2) });
  const a: om.nn.Module | undefined = dict.get('a');
  const keys: string[] = [...dict];
  const plist = new om.nn.ParameterList([om.zeros([2])]);
  const pdict = new om.nn.ParameterDict(new Map([['p', om.zeros([3])]]));
  // the containers' items are typed by what they hold
  const p0: Tensor = plist.at(0).add(plist[0]);
  const pp: Tensor | undefined = pdict.set('q', p0).pop('p');
  const layer: om.nn.Module = list.at(-1);
  const names: string[] = [...pdict, ...dict.keys()];
  for (const t of plist) t.sum();
  // @ts-expect-error a ParameterList holds tensors, not modules
  plist.append(new om.nn.Linear(1, 1));
  // @ts-expect-error a ModuleDict holds modules, not tensors
  dict.set('t', om.zeros([1]));
  // PyTorch's edits: insert, pop, slices, update, clear
  const head: om.nn.Sequential = named.slice(0, 1);
  const popped: om.nn.Module = fromMap.insert(0, new om.nn.ReLU()).pop();
  const tail: om.nn.ModuleList = list.slice(-1).insert(0, popped);
  const firstParam: Tensor = plist.slice(null, null, -1).pop(0);
  dict.update([['b', head]]).update(new Map([['c', tail]]));
  const pairs: [string, Tensor][] = pdict.update({ r: firstParam }).items();
  dict.clear();
  // @ts-expect-error a ParameterDict's update takes tensors
  pdict.update({ m: head });
  const kids: [string, om.nn.Module][] = named.namedChildren();
  const all: om.nn.Module[] = named.modules();
  named.apply((m) => m.eval());
  const blocks = new om.nn.Sequential(
    new om.nn.Conv2dNormActivation(3, 8, 3, { stride: 2, normLayer: (c: number) => new om.nn.BatchNorm2d(c, { eps: 1e-3 }), activationLayer: om.nn.Hardswish }),
    new om.nn.SqueezeExcitation(8, 4, { scaleActivation: om.nn.Hardsigmoid }),
    new om.nn.LayerNorm2d([8]),
    new om.nn.StochasticDepth(0.1, 'row'),
    new om.nn.Permute([0, 2, 3, 1]),
    new om.nn.MLP(8, [16, 4], { normLayer: om.nn.LayerNorm, dropout: 0.1 }),
  );
  const sd: Tensor = om.nn.functional.stochasticDepth(om.ones([2, 3]), 0.5, 'batch', false);
  const bufs: Tensor[] = rope.buffers();
  for (const m of [rope, named, fromMap, dict, plist, pdict, blocks]) m.dispose();
  om.dispose([w, l, sd]);
  void [heap, a, keys, kids, all, bufs, pp, layer, names, pairs];
}

// sorting, searching and rearranging (js/ops/sort.js)
{
  const x = om.randn([2, 5]);
  const [v, i]: [Tensor, Tensor] = om.topk(x, 2, { dim: 1, largest: false });
  const [v2, i2] = x.topk(1, -1, true, true);
  const [s, si] = x.sort({ dim: 0, descending: true, stable: true });
  const order: Tensor = om.argsort(x, 1, true);
  const o2: Tensor = x.argsort({ descending: false });
  const [s2, si2] = om.sort(x);
  const b: Tensor = om.bucketize(x, om.tensor([0, 1]), { right: true });
  const ss: Tensor = om.searchsorted(om.tensor([0, 1]), x, { side: 'right' });
  const hot: Tensor = om.nn.functional.oneHot(om.tensor([1, 0], { dtype: 'int64' }), 3);
  const r: Tensor = x.repeatInterleave(2, 1);
  const rc: Tensor = om.repeatInterleave(x, om.tensor([1, 2], { dtype: 'int64' }), 0);
  const tri: Tensor = om.trilIndices(3, 3, -1n);
  const triu: Tensor = om.triuIndices(3, 4);
  const up = new om.nn.PixelShuffle(2), down = new om.nn.PixelUnshuffle(2);
  const img: Tensor = down.forward(up.forward(om.zeros([1, 8, 2, 2])));
  const f: Tensor = om.nn.functional.pixelUnshuffle(om.nn.functional.pixelShuffle(om.zeros([1, 4, 1, 1]), 2), 2);
  up.dispose(); down.dispose();
  om.dispose([x, v, i, v2, i2, s, si, order, o2, s2, si2, b, ss, hot, r, rc, tri, triu, img, f]);
}

// div's rounding modes, the arithmetic helpers, the diagonal view and the torch.* functions
{
  const x = om.randn([3, 3]), i = om.tensor([7n, -7n, 9n]);
  const q: Tensor = om.div(x, 2, { roundingMode: 'floor' }), t: Tensor = x.div(x, { roundingMode: null });
  const fd: Tensor = i.floorDivide(2).floorDivide_(om.tensor([1n, 1n, 2n]));
  const sh: Tensor = om.bitwiseRightShift(i, 1).bitwiseLeftShift(2n);
  const ac: Tensor = om.addcmul(x, x, x, { value: 0.5 }).addcdiv_(x, x.abs().add(1));
  const l: Tensor = om.lerp(x, x, 0.3).lerp(x, om.full([3], 0.5));
  const { min, max } = x.aminmax({ dim: 1 });
  const parts: Tensor[] = om.tensorSplit(x, [1, 2], 1).concat(x.hsplit(3));
  const d: Tensor = x.diagonal(0, 0, 1);
  x.fillDiagonal_(0, false);
  const s: Tensor = om.sum(om.exp(x), 1), m: Tensor = om.max(x, x), r: Tensor = om.rot90(x, 1, [0, 1]).movedim(0, 1);
  om.dispose([x, i, q, t, fd, sh, ac, l, min, max, ...parts, d, s, m, r]);
}

// issue 28's activations, diff, takeAlongDim, indexFill/indexCopy and the margin losses
{
  const F = om.nn.functional, nn = om.nn;
  const x = om.randn([3, 4]), i = om.tensor([[0n], [2n], [1n]]), y = x.sign();
  const acts: Tensor[] = [om.selu(x), om.celu(x, { alpha: 2 }), F.celu(x, 0.5), F.logsigmoid(x), F.softmin(x, 1), F.softmin(x, { dim: 0, dtype: 'float32' }),
    new nn.SELU().forward(x), new nn.CELU(1.5).forward(x), new nn.LogSigmoid().forward(x), new nn.Softmin(1).forward(x)];
  const ops: Tensor[] = [x.diff(), om.diff(x, 2, 0, x.narrow(0, 0, 1)), x.diff({ dim: 0, append: x }), x.takeAlongDim(i, 1), om.takeAlongDim(x, i),
    x.indexFill(1, om.tensor([0n]), -1), x.clone().indexFill_({ dim: 0, index: om.tensor(1n), value: om.tensor(2) }),
    om.indexCopy(x, 1, om.tensor([3n]), om.zeros([3, 1])), x.clone().indexCopy_(0, om.tensor([0n]), om.ones([1, 4]))];
  const losses: Tensor[] = [F.marginRankingLoss(x, x, y, { margin: 0.1 }), F.hingeEmbeddingLoss(x, y), F.softMarginLoss(x, y, { reduction: 'none' }),
    F.cosineEmbeddingLoss(x, x, y.select(1, 0)), F.tripletMarginLoss(x, x, x, { swap: true, p: 1 }),
    new nn.MarginRankingLoss({ margin: 1 }).forward(x, x, y), new nn.TripletMarginLoss().forward(x, x, x)];
  // the reduction losses share their declarations (index.d.ts's ReductionLoss): reduction, forward's inputs
  const reductions: om.nn.Reduction[] = [new nn.L1Loss({ reduction: 'sum' }).reduction, new nn.GaussianNLLLoss().reduction];
  const huber: number = new nn.HuberLoss({ delta: 2 }).delta;
  // @ts-expect-error: TripletMarginLoss takes anchor, positive and negative
  new nn.TripletMarginLoss().forward(x, x);
  // @ts-expect-error: HuberLoss's option is delta
  new nn.HuberLoss({ beta: 2 });
  // @ts-expect-error: the shared base is not a class of the package
  void nn.ReductionLoss;
  void [reductions, huber, new nn.PoissonNLLLoss({ full: true }).forward(x, x)];
  om.dispose([x, i, y, ...acts, ...ops, ...losses]);
}
