// The losses written with the library's ops (js/nn/loss.js) against PyTorch
// (tests/js/fixtures/pytorch/ops/losses.json, written by tools/pytorch_composites.py): values and
// gradients of (output * g).sum() for l1Loss, smoothL1Loss, huberLoss, binaryCrossEntropy (logs
// clamped at -100), binaryCrossEntropyWithLogits (weight, posWeight, logits of +-100), klDiv
// (every reduction, logTarget, zeros in the target), cosineSimilarity (a zero vector,
// broadcasting), marginRankingLoss, hingeEmbeddingLoss, softMarginLoss, cosineEmbeddingLoss and
// tripletMarginLoss (p, swap); the modules; argument errors; one traced into ONNX and run at other sizes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, vals, near, throwsKind, withTraced, checkPyTorchCase } from './helpers.mjs';

memoryHooks();
const F = () => om.nn.functional;
const FIXTURE = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/losses.json', import.meta.url), 'utf8'));

/** The call a fixture case names, on tensors xs (weight and posWeight after input and target). */
function call(c, xs) {
  // three tensors: input1, input2 and target, anchor, positive and negative, or input, target and var
  if (['marginRankingLoss', 'cosineEmbeddingLoss', 'tripletMarginLoss', 'gaussianNllLoss'].includes(c.op)) return F()[c.op](...xs, c.args);
  const [input, target, ...rest] = xs;
  const o = { ...c.args };
  if (o.weight) o.weight = rest.shift();
  if (o.posWeight) o.posWeight = rest.shift();
  return F()[c.op](input, target, o);
}

describe('losses against PyTorch', () => {
  for (const [k, c] of FIXTURE.cases.entries()) {
    test(`${c.op} ${JSON.stringify(c.args)} (case ${k})`, () => om.tidy(() => checkPyTorchCase(c, (xs) => call(c, xs))));
  }

  test('the modules call the functions with their options; weights are buffers', () => om.tidy(() => {
    const a = om.randn([3, 4], { seed: 1 }), b = om.randn([3, 4], { seed: 2 });
    const same = (m, f) => near(vals(m), vals(f), 0, 'module');
    same(new om.nn.L1Loss({ reduction: 'sum' }).forward(a, b), F().l1Loss(a, b, { reduction: 'sum' }));
    same(new om.nn.SmoothL1Loss({ beta: 0.3 }).forward(a, b), F().smoothL1Loss(a, b, { beta: 0.3 }));
    same(new om.nn.HuberLoss({ delta: 0.4, reduction: 'none' }).forward(a, b), F().huberLoss(a, b, { delta: 0.4, reduction: 'none' }));
    const pw = om.full([4], 2);
    const bce = new om.nn.BCEWithLogitsLoss({ posWeight: pw });
    assert.deepEqual(Object.keys(bce.stateDict()), ['posWeight']);
    same(bce.forward(a, b.sigmoid()), F().binaryCrossEntropyWithLogits(a, b.sigmoid(), { posWeight: pw }));
    same(new om.nn.BCELoss().forward(a.sigmoid(), b.sigmoid()), F().binaryCrossEntropy(a.sigmoid(), b.sigmoid()));
    same(new om.nn.KLDivLoss({ reduction: 'batchmean' }).forward(a.logSoftmax(1), b.softmax(1)), F().klDiv(a.logSoftmax(1), b.softmax(1), { reduction: 'batchmean' }));
    same(new om.nn.CosineSimilarity({ dim: 0 }).forward(a, b), F().cosineSimilarity(a, b, { dim: 0 }));
    const y = a.sign();
    same(new om.nn.MarginRankingLoss({ margin: 0.2, reduction: 'sum' }).forward(a, b, y), F().marginRankingLoss(a, b, y, { margin: 0.2, reduction: 'sum' }));
    same(new om.nn.HingeEmbeddingLoss({ margin: 0.7 }).forward(a, y), F().hingeEmbeddingLoss(a, y, { margin: 0.7 }));
    same(new om.nn.SoftMarginLoss({ reduction: 'none' }).forward(a, y), F().softMarginLoss(a, y, { reduction: 'none' }));
    const t = om.tensor([1, -1, -1]);
    same(new om.nn.CosineEmbeddingLoss({ margin: 0.1 }).forward(a, b, t), F().cosineEmbeddingLoss(a, b, t, { margin: 0.1 }));
    same(new om.nn.TripletMarginLoss({ swap: true, p: 1 }).forward(a, b, a.flip(0)), F().tripletMarginLoss(a, b, a.flip(0), { swap: true, p: 1 }));
    const w = om.rand([4], { seed: 3 }), ml = b.gt(0).float(), labels = om.tensor([[3n, 0n, -1n, 2n], [1n, -1n, 0n, 0n], [2n, 2n, 1n, 0n]]);
    const sm = new om.nn.MultiLabelSoftMarginLoss({ weight: w });
    assert.deepEqual(Object.keys(sm.stateDict()), ['weight']);
    same(sm.forward(a, ml), F().multilabelSoftMarginLoss(a, ml, { weight: w }));
    same(new om.nn.MultiLabelMarginLoss({ reduction: 'none' }).forward(a, labels), F().multilabelMarginLoss(a, labels, { reduction: 'none' }));
    const cls = om.tensor([0n, 3n, 1n]);
    same(new om.nn.MultiMarginLoss({ p: 2, margin: 0.5, weight: w }).forward(a, cls), F().multiMarginLoss(a, cls, { p: 2, margin: 0.5, weight: w }));
    same(new om.nn.PoissonNLLLoss({ logInput: false, full: true }).forward(a.abs(), b.abs().mul(3)), F().poissonNllLoss(a.abs(), b.abs().mul(3), { logInput: false, full: true }));
    same(new om.nn.GaussianNLLLoss({ full: true, reduction: 'sum' }).forward(a, b, a.abs()), F().gaussianNllLoss(a, b, a.abs(), { full: true, reduction: 'sum' }));
  }));

  test('argument errors', () => om.tidy(() => {
    const a = om.ones([2, 3]);
    throwsKind(() => F().l1Loss(a, om.ones([3])), 'InvalidArgument', /l1Loss: target \[3\] must have the input's shape \[2,3\]/);
    throwsKind(() => F().l1Loss(a, a, { reduction: 'avg' }), 'InvalidArgument', /l1Loss: reduction must be 'none', 'mean' or 'sum', got a string \("avg"\)/);
    throwsKind(() => F().smoothL1Loss(a, a, { beta: -1 }), 'InvalidArgument', /smoothL1Loss: beta must be a number >= 0, got -1/);
    throwsKind(() => F().huberLoss(a, a, { delta: 0 }), 'InvalidArgument', /huberLoss: delta must be a number > 0, got 0/);
    throwsKind(() => F().binaryCrossEntropy(a, a, { weight: [1, 2, 3] }), 'InvalidArgument', /binaryCrossEntropy: weight must be a Tensor or null/);
    throwsKind(() => F().klDiv(a, a, { logTarget: 1 }), 'InvalidArgument', /klDiv: logTarget must be a boolean, got 1/);
    throwsKind(() => F().klDiv(a, a, { reduction: 'batch' }), 'InvalidArgument', /klDiv: reduction must be/);
    throwsKind(() => F().cosineSimilarity(a, a, { epsilon: 1 }), 'InvalidArgument', /cosineSimilarity: unknown option 'epsilon'/);
    throwsKind(() => new om.nn.HuberLoss({ reduction: 'all' }), 'InvalidArgument', /HuberLoss: reduction must be/);
    throwsKind(() => F().marginRankingLoss(a, a, om.ones([3])), 'InvalidArgument',
      /^marginRankingLoss: All input tensors should have same dimension but got sizes: input1: \[2,3\], input2: \[2,3\], target: \[3\]$/);
    throwsKind(() => F().marginRankingLoss(a, a, a, { margin: '1' }), 'InvalidArgument', /^marginRankingLoss: margin must be a number, got a string/);
    throwsKind(() => F().hingeEmbeddingLoss(a, a, { reduction: 'avg' }), 'InvalidArgument', /^hingeEmbeddingLoss: reduction must be 'none', 'mean' or 'sum'/);
    throwsKind(() => F().hingeEmbeddingLoss(a, 1), 'InvalidArgument', /^hingeEmbeddingLoss: target must be a Tensor/);
    throwsKind(() => F().softMarginLoss(a, om.ones([3])), 'InvalidArgument', /^softMarginLoss: target \[3\] must have the input's shape \[2,3\]$/);
    throwsKind(() => new om.nn.MarginRankingLoss().forward(a, a), 'InvalidArgument', /^MarginRankingLoss: forward takes 3 tensors, got 2$/);
    throwsKind(() => new om.nn.HingeEmbeddingLoss({ delta: 1 }), 'InvalidArgument', /^HingeEmbeddingLoss: unknown option 'delta'/);
    throwsKind(() => F().cosineEmbeddingLoss(a, a, om.ones([2, 1])), 'InvalidArgument', /^cosineEmbeddingLoss: Expected 1D or 0D target tensor, but got 2D target tensor$/);
    throwsKind(() => F().cosineEmbeddingLoss(a, om.ones([3]), om.ones([2])), 'InvalidArgument',
      /^cosineEmbeddingLoss: 1D target tensor expects 2D input tensors, but found inputs with sizes \[2,3\] and \[3\]$/);
    throwsKind(() => F().tripletMarginLoss(a, a, om.ones([3])), 'InvalidArgument', /^tripletMarginLoss: All input tensors should have same dimension/);
    throwsKind(() => F().tripletMarginLoss(a, a, a, { p: 0 }), 'InvalidArgument', /^tripletMarginLoss: p must be a number > 0, got 0$/);
    throwsKind(() => F().tripletMarginLoss(a, a, a, { swap: 1 }), 'InvalidArgument', /^tripletMarginLoss: swap must be a boolean, got 1$/);
    throwsKind(() => F().tripletMarginLoss(a, a, a, { eps: -1 }), 'InvalidArgument', /^tripletMarginLoss: eps must be a number >= 0, got -1$/);
    throwsKind(() => F().tripletMarginLoss(om.ones([1, 2, 3]), om.ones([1, 2, 3]), om.ones([1, 2, 3])), 'InvalidArgument',
      /^tripletMarginLoss: takes 1-D or 2-D inputs \(\[D\] or \[N, D\]\), got 3 dims$/);
    const cls = om.tensor([0n, 2n]);
    throwsKind(() => F().multilabelSoftMarginLoss(a, om.ones([3])), 'InvalidArgument', /^multilabelSoftMarginLoss: target \[3\] must have the input's shape \[2,3\]$/);
    throwsKind(() => F().multilabelMarginLoss(a, a), 'DtypeMismatch', /^multilabelMarginLoss: target must be int64 class indices, not float32$/);
    throwsKind(() => F().multilabelMarginLoss(om.ones([1, 2, 3]), om.ones([1, 2, 3], { dtype: 'int64' })), 'InvalidArgument',
      /^multilabelMarginLoss: takes a 1-D or 2-D input \(\[C\] or \[N, C\]\), got \[1,2,3\]$/);
    throwsKind(() => F().multiMarginLoss(a, cls, { p: 3 }), 'InvalidArgument', /^multiMarginLoss: only p == 1 and p == 2 supported, got 3$/);
    throwsKind(() => F().multiMarginLoss(a, a), 'DtypeMismatch', /^multiMarginLoss: target must be int64 class indices, not float32$/);
    throwsKind(() => F().multiMarginLoss(a, om.tensor([0n])), 'InvalidArgument', /^multiMarginLoss: inconsistent target size: got \[1\] for input \[2,3\]$/);
    throwsKind(() => F().multiMarginLoss(a, cls, { weight: om.ones([2]) }), 'InvalidArgument', /^multiMarginLoss: weight must be 1-D of the 3 classes, got \[2\]$/);
    throwsKind(() => F().poissonNllLoss(a, a, { full: 1 }), 'InvalidArgument', /^poissonNllLoss: full must be a boolean, got 1$/);
    throwsKind(() => F().poissonNllLoss(a, a, { eps: '1' }), 'InvalidArgument', /^poissonNllLoss: eps must be a number/);
    throwsKind(() => F().gaussianNllLoss(a, a, om.ones([3])), 'InvalidArgument', /^gaussianNllLoss: var is of incorrect size$/);
    throwsKind(() => F().gaussianNllLoss(a, a, a.neg()), 'InvalidArgument', /^gaussianNllLoss: var has negative entry\/entries$/);
    throwsKind(() => F().gaussianNllLoss(a, a, a, { reduction: 'avg' }), 'InvalidArgument', /^gaussianNllLoss: reduction must be/);
    throwsKind(() => F().gaussianNllLoss(a, a, a, { full: 'yes' }), 'InvalidArgument', /^gaussianNllLoss: full must be a boolean/);
  }));

  test('a training step with BCEWithLogitsLoss lowers the loss', () => om.tidy(() => {
    const model = new om.nn.Linear(3, 1);
    const x = om.randn([16, 3], { seed: 3 }), y = x.sum(1, true).gt(0).float();
    const lossFn = new om.nn.BCEWithLogitsLoss();
    const first = Number(lossFn.forward(model.forward(x), y).item());
    for (let step = 0; step < 20; step++) {
      om.tidy(() => {
        const loss = lossFn.forward(model.forward(x), y);
        loss.backward();
        om.noGrad(() => { for (const p of model.parameters()) p.sub_(p.grad.mul(0.5)); });
        model.zeroGrad();
      });
    }
    assert.ok(Number(lossFn.forward(model.forward(x), y).item()) < first * 0.7);
  }));
});

describe('losses traced with a symbolic batch', () => {
  test('cosine similarity and a Huber loss per sample, right at other batch sizes', () => withTraced((keep, trace) => {
    const fn = (a, b) => F().cosineSimilarity(a, b, { dim: 1 }).add(F().huberLoss(a, b, { reduction: 'none', delta: 0.5 }).sum(1));
    trace(fn, { a: [om.randn([5, 4], { seed: 4 }), ['B', null]], b: [om.randn([5, 4], { seed: 5 }), ['B', null]] });
  }));

  test('the margin, cosine embedding and triplet losses per sample, right at other batch sizes', () => withTraced((keep, trace) => {
    const fn = (a, b) => {
      const y = a.sub(b).sign();
      return F().marginRankingLoss(a, b, y.neg(), { margin: 0.3, reduction: 'none' }).add(F().hingeEmbeddingLoss(a, y, { reduction: 'none' }))
        .add(F().softMarginLoss(b, y, { reduction: 'none' })).sum(1)
        .add(F().cosineEmbeddingLoss(a, b, y.select(1, 0), { margin: 0.1, reduction: 'none' }))
        .add(F().tripletMarginLoss(a, b, a.flip(1), { swap: true, reduction: 'none' }));
    };
    trace(fn, { a: [om.randn([5, 4], { seed: 6 }), ['B', null]], b: [om.randn([5, 4], { seed: 7 }), ['B', null]] });
  }));

  test('the multi-label, multi-class margin and NLL losses per sample, right at other batch sizes', () => withTraced((keep, trace) => {
    const labels = om.tensor([[3n, 0n, -1n, 2n], [1n, 1n, 2n, -1n], [-1n, 2n, 0n, 0n], [0n, 1n, 2n, 3n], [2n, -1n, 1n, 1n]]);
    const fn = (a, b) => {
      const n = a.shape[0];
      return F().multilabelSoftMarginLoss(a, b.gt(0).float(), { reduction: 'none' })
        .add(F().multilabelMarginLoss(a, labels.slice(0, 0, n), { reduction: 'none' }))
        .add(F().multiMarginLoss(a, b.argmax(1), { p: 2, reduction: 'none' }))
        .add(F().poissonNllLoss(a, b.abs(), { full: true, reduction: 'none' }).sum(1))
        .add(F().gaussianNllLoss(a, b, a.abs().add(0.1), { reduction: 'none' }).sum(1));
    };
    trace(fn, { a: [om.randn([5, 4], { seed: 8 }), [om.Dim('B', { max: 5 }), null]], b: [om.randn([5, 4], { seed: 9 }), [om.Dim('B', { max: 5 }), null]] });
  }));
});
