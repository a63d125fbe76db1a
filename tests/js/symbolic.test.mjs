// Symbolic axes (spec 4, docs/symbolic-axes.md): models traced with symbolic batch and sequence,
// each run in onnxruntime-web at its example and at three other assignments of every symbol,
// compared with eager runs at those shapes. Node and Shape-node counts are pinned.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced, startOracle } from './helpers.mjs';
import { checkModelFile, disposeModelFile } from '../../examples/lib/workflow.mjs';
import * as gpt from '../../examples/zoo/gpt.mjs';

const nn = om.nn;
memoryHooks();
after(() => disposeModelFile(checkModelFile(gpt)));

const ops = (tm) => tm.graph().nodes.map((n) => n.opType);
const count = (tm, type) => ops(tm).filter((o) => o === type).length;
const show = (tm) => ops(tm).join(" ");

/**
 * Traces model on example (axes: its axis names), keeps it for the oracle at the example, and
 * at each shape of `others` (the example's shape with other sizes for the symbols), with eager
 * runs at those shapes. Returns the TracedModel.
 */
function traceAt(keep, model, example, axes, others, seed = 11) {
  const tm = om.trace(model, { x: [example, axes] });
  const run = (x) => { const y = model.forward(x); return Array.isArray(y) ? y.flat(Infinity) : y; };
  keep(tm, { x: example }, run(example), undefined, run);
  others.forEach((shape, k) => {
    const x = om.randn(shape, { seed: seed + k });
    keep(tm, { x }, run(x));
  });
  return tm;
}

/**
 * Runs tm in onnxruntime-web and the Session at each of shapes (x's) against model's eager run
 * there (for models that fail eagerly at some sizes the harness's other sizes would take).
 */
async function checkAt(tm, model, shapes, seed = 70) {
  const checks = om.tidy(() => shapes.map((shape, k) => {
    const x = om.randn(shape, { seed: seed + k });
    return startOracle(tm, { x }, model.forward(x)).catch((e) => { e.message = `at [${shape}]: ${e.message}`; throw e; });
  }));
  await Promise.all(checks);
}

/** A Module from a function of x. */
function fn(f) {
  return new (class extends nn.Module { forward(x) { return f(x); } })();
}

describe('symbolic axes', () => {
  test('MLP with a symbolic batch: no Shape node', () => withTraced((keep) => {
    om.manualSeed(1);
    const net = new nn.Sequential(new nn.Linear(6, 8), new nn.ReLU(), new nn.Linear(8, 3));
    const tm = traceAt(keep, net, om.randn([4, 6], { seed: 1 }), ['batch', null], [[2, 6], [7, 6]]);
    assert.deepEqual(tm.outputs[0].shape, ['batch', 3]);
    assert.equal(count(tm, 'Shape'), 0, show(tm));
    assert.equal(ops(tm).length, 3); // Gemm, Relu, Gemm
    net.dispose();
  }));

  test('CNN with a symbolic batch: no Shape node', () => withTraced((keep) => {
    om.manualSeed(2);
    const net = new nn.Sequential(new nn.Conv2d(2, 4, 3, { padding: 1 }), new nn.ReLU(), new nn.MaxPool2d(2),
      new nn.Flatten(), new nn.Linear(4 * 4 * 4, 5));
    const tm = traceAt(keep, net, om.randn([3, 2, 8, 8], { seed: 2 }), ['batch', null, null, null], [[2, 2, 8, 8], [5, 2, 8, 8]]);
    assert.deepEqual(tm.outputs[0].shape, ['batch', 5]);
    assert.equal(count(tm, 'Shape'), 0, show(tm));
    assert.deepEqual(ops(tm), ['Conv', 'Relu', 'MaxPool', 'Reshape', 'Gemm']);
    net.dispose();
  }));

  test('fully-convolutional net with symbolic batch, height and width: no Shape node', () => withTraced((keep) => {
    om.manualSeed(4);
    const features = new nn.Sequential(new nn.Conv2d(3, 6, 3, { padding: 'same' }), new nn.ReLU(), new nn.MaxPool2d(2));
    const head = new nn.Sequential(new nn.Conv2d(6, 8, 3, { stride: 2, padding: 1 }), new nn.AdaptiveAvgPool2d(1),
      new nn.Flatten(), new nn.Linear(8, 5));
    const net = fn((x) => om.tidy(() => head.forward(features.forward(x))));
    const axes = ['batch', null, 'height', 'width'], others = [[3, 3, 96, 80], [1, 3, 40, 56], [2, 3, 33, 47]];
    const tm = traceAt(keep, net, om.randn([2, 3, 32, 40], { seed: 4 }), axes, others);
    assert.deepEqual(tm.inputs[0].shape, ['batch', 3, 'height', 'width']);
    assert.deepEqual(tm.outputs[0].shape, ['batch', 5]);
    assert.equal(count(tm, 'Shape'), 0, show(tm));
    assert.deepEqual(ops(tm), ['Conv', 'Relu', 'MaxPool', 'Conv', 'GlobalAveragePool', 'Reshape', 'Gemm']);
    // the pooled extents are floor divisions of the symbols
    const ft = traceAt(keep, features, om.randn([2, 3, 32, 40], { seed: 6 }), axes, others);
    assert.deepEqual(ft.outputs[0].shape, ['batch', 6, 'floor(height/2)', 'floor(width/2)']);
    assert.equal(count(ft, 'Shape'), 0, show(ft));
    features.dispose();
    head.dispose();
  }));

  test('conv1d, conv_transpose2d, avg_pool2d and adaptive pooling over symbolic spatial axes, run at other sizes', () => withTraced((keep) => {
    const F = om.nn.functional;
    const w1 = om.randn([4, 3, 3], { seed: 20 }), w1b = om.randn([3, 4, 3], { seed: 25 }), wt = om.randn([3, 2, 2, 2], { seed: 21 }), w2 = om.randn([2, 3, 3, 3], { seed: 22 });
    const c1 = traceAt(keep, fn((x) => om.tidy(() => F.conv1d(F.conv1d(x, w1, null, { padding: 1 }).relu(), w1b, null, { stride: 2 }))),
      om.randn([2, 3, 11], { seed: 23 }), ['batch', null, 'len'], [[3, 3, 20], [1, 3, 7]]);
    assert.deepEqual(c1.outputs[0].shape, ['batch', 3, 'floor((len+1)/2)-1']); // (len - 3) / 2 + 1
    const x4 = om.randn([2, 3, 9, 12], { seed: 24 }), axes = ['batch', null, 'height', 'width'], others = [[3, 3, 17, 6], [1, 3, 10, 25]];
    const up = traceAt(keep, fn((x) => F.convTranspose2d(x, wt, null, { stride: 2 })), x4, axes, others);
    assert.deepEqual(up.outputs[0].shape, ['batch', 2, '2*height', '2*width']);
    const avg = traceAt(keep, fn((x) => F.avgPool2d(x, 3, { stride: 2, padding: 1, countIncludePad: true })), x4, axes, others);
    assert.deepEqual(avg.outputs[0].shape, ['batch', 3, 'floor((height+1)/2)', 'floor((width+1)/2)']);
    // output size null keeps the axis (AveragePool with kernel 1: the same for every size)
    const same = traceAt(keep, fn((x) => F.adaptiveAvgPool2d(F.conv2d(x, w2, null, { padding: 1 }), [null, null])), x4, axes, others);
    assert.deepEqual(same.outputs[0].shape, ['batch', 2, 'height', 'width']);
    // a fixed output size on a symbolic axis: the cells are computed from the run-time size
    const cells = traceAt(keep, fn((x) => F.adaptiveAvgPool2d(x, [1, null])), x4, axes, others);
    assert.deepEqual(cells.outputs[0].shape, ['batch', 3, 1, 'width']);
    const uneven = traceAt(keep, fn((x) => F.adaptiveAvgPool2d(x, [3, 2])), x4, axes, [...others, [2, 3, 1, 1], [2, 3, 2, 3]]);
    assert.deepEqual(uneven.outputs[0].shape, ['batch', 3, 3, 2]);
    assert.equal(count(uneven, 'MatMul'), 2);
    // ceil_mode on a symbolic axis: the node's own ceil_mode (opset 19 on: PyTorch's rule)
    const ceil = traceAt(keep, fn((x) => F.maxPool2d(x, 3, { stride: 2, ceilMode: true })), x4, axes, [...others, [1, 3, 4, 5]]);
    assert.deepEqual(ceil.outputs[0].shape, ['batch', 3, 'floor(height/2)', 'floor(width/2)']);
    assert.deepEqual(ops(ceil), ['MaxPool']);
    for (const w of [w1, w1b, wt, w2]) w.dispose();
  }));

  test('ceil_mode on a symbolic axis beside a fixed one whose stride passes the kernel: the fixed axis cut after its last window, at other sizes', () => withTraced((keep) => {
    // width 9, kernel 2, stride 3: PyTorch's 3 windows read columns 0..7 (a 4th would start at 9,
    // past the input, and is dropped); no end padding makes ONNX's ceil_mode count 3 there, so the
    // graph cuts the fixed width to 8 first. Each pool at heights across the stride's residues.
    const F = om.nn.functional;
    for (const [w, f] of [
      [9, (x) => F.maxPool2d(x, 2, { stride: 3, ceilMode: true })],
      [3, (x) => F.maxPool2d(x, 2, { stride: 3, ceilMode: true })],
      [10, (x) => F.maxPool2d(x, 2, { stride: 4, padding: 1, ceilMode: true })],
      [9, (x) => F.avgPool2d(x, 2, { stride: 3, ceilMode: true })],
      [10, (x) => F.avgPool2d(x, 2, { stride: 4, padding: 1, ceilMode: true, countIncludePad: true })],
    ]) {
      const tm = traceAt(keep, fn(f), om.randn([1, 2, 9, w], { seed: w }), [null, null, 'H', null],
        [1, 2, 3, 4, 5, 7, 31].map((h) => [1, 2, h, w]));
      assert.equal(ops(tm)[0], 'Slice', `width ${w}: ${show(tm)}`);
    }
  }));

  test('a stride-2 conv flattened into a Linear is refused: the weight fixes the flattened size', () => {
    om.manualSeed(5);
    const net = new nn.Sequential(new nn.Conv2d(2, 4, 3, { stride: 2, padding: 1 }), new nn.Flatten(), new nn.Linear(4 * 4 * 5, 3));
    om.tidy(() => {
      const x = om.randn([2, 2, 8, 10], { seed: 5 });
      assert.throws(() => om.trace(net, { x: [x, ['batch', null, 'height', 'width']] }),
        (e) => e instanceof om.TraceError && e.kind === 'SymbolicShape'
          && /^linear: at batch=\d+, height=\d+, width=\d+ the call fails \(linear: input \[\d+,\d+\] and weight \[3,80\] do not match/.test(e.message)
          && /symbolic\.test\.mjs:\d+:\d+\)$/.test(e.message));
    });
    net.dispose();
  });

  test('TransformerEncoderLayer (batchFirst) with symbolic batch and sequence', () => withTraced((keep) => {
    om.manualSeed(3);
    const layer = new nn.TransformerEncoderLayer(16, 4, { dimFeedforward: 32, batchFirst: true }).eval();
    const x = om.randn([3, 5, 16], { seed: 3 });
    const fixed = om.trace(layer, { x });
    keep(fixed, { x }, layer.forward(x));
    const tm = traceAt(keep, layer, x, ['batch', 'seq', null], [[2, 7, 16], [4, 2, 16]]);
    assert.deepEqual(tm.outputs[0].shape, ['batch', 'seq', 16]);
    // [N, L, E] -> [N, L, h, d] and back are Reshape [0, 0, h, d] / [0, 0, E]: no Shape node,
    // and no more nodes than the same layer traced at fixed shapes.
    assert.equal(count(tm, 'Shape'), 0, show(tm));
    assert.equal(ops(tm).length, 36);
    assert.equal(ops(fixed).length, 36);
    layer.dispose();
  }));

  test('TransformerEncoderLayer (sequence first) and cross-attention with two sequence symbols', () => withTraced((keep) => {
    om.manualSeed(5);
    const layer = new nn.TransformerEncoderLayer(16, 4, { dimFeedforward: 32 }).eval();
    const tm = traceAt(keep, layer, om.randn([5, 3, 16], { seed: 5 }), ['seq', 'batch', null], [[7, 2, 16], [2, 4, 16]]);
    assert.deepEqual(tm.outputs[0].shape, ['seq', 'batch', 16]);
    assert.equal(count(tm, 'Shape'), 0, show(tm));
    assert.equal(ops(tm).length, 38, show(tm)); // the three Transposes of q = k = v written once
    const mha = new nn.MultiheadAttention(16, 4, { batchFirst: true }).eval();
    const cross = new (class extends nn.Module { forward(q, kv) { return mha.forward(q, kv, kv)[0]; } })();
    const ins = (n, l, s, seed) => ({ q: om.randn([n, l, 16], { seed }), kv: om.randn([n, s, 16], { seed: seed + 1 }) });
    const ex = ins(3, 5, 7, 30);
    const ct = om.trace(cross, { q: [ex.q, ['batch', 'seq', null]], kv: [ex.kv, ['batch', 'mem', null]] });
    assert.deepEqual(ct.outputs[0].shape, ['batch', 'seq', 16]);
    assert.equal(count(ct, 'Shape'), 0, show(ct));
    assert.equal(ops(ct).length, 25, show(ct)); // 25 at fixed shapes too
    for (const [n, l, s, seed] of [[3, 5, 7, 30], [2, 4, 9, 32], [4, 2, 3, 34]]) {
      const x = ins(n, l, s, seed);
      keep(ct, x, cross.forward(x.q, x.kv), undefined, cross);
    }
    layer.dispose();
    mha.dispose();
  }));

  test('LSTM (batchFirst) with symbolic batch and sequence', () => withTraced((keep) => {
    om.manualSeed(4);
    const lstm = new nn.LSTM(3, 5, { batchFirst: true });
    const rnn = fn((x) => { const [out, [h, c]] = lstm.forward(x); return [out, h, c]; });
    const tm = traceAt(keep, rnn, om.randn([2, 6, 3], { seed: 4 }), ['batch', 'seq', null], [[3, 4, 3], [5, 9, 3]]);
    assert.deepEqual(tm.outputs[0].shape, ['batch', 'seq', 5]);
    assert.deepEqual(tm.outputs[1].shape, [1, 'batch', 5]);
    assert.equal(count(tm, 'Shape'), 0, show(tm));
    assert.equal(ops(tm).length, 21, show(tm)); // as many as at fixed shapes
    lstm.dispose();
  }));

  test('reshape products, flatten, split and cat', () => withTraced((keep) => {
    const x = om.randn([3, 5, 4], { seed: 5 });
    const others = [[2, 7, 4], [6, 2, 4]];
    const axes = ['batch', 'seq', null];
    // [B, S, 4] -> [B*S, 4] -> [B, S, 4]: -1 and one Shape node (seq)
    const roundTrip = traceAt(keep, fn((t) => { const [b, n, e] = t.shape; return t.reshape(b * n, e).relu().reshape(b, n, e); }), x, axes, others);
    assert.equal(count(roundTrip, 'Shape'), 1);
    assert.equal(ops(roundTrip).length, 5); // Reshape, Relu, Shape, Concat, Reshape
    // flatten(0, 1) and a swap of the two symbols: [S, B, 4] from [B*S, 4]
    const swap = traceAt(keep, fn((t) => t.flatten(0, 1).reshape(t.shape[1], t.shape[0], 4)), x, axes, others);
    assert.deepEqual(swap.outputs[0].shape, ['seq', 'batch', 4]);
    assert.equal(count(swap, 'Shape'), 1, show(swap));
    // [B, S, 4] -> [B, S, 2, 2] -> [B, S*4]: 0-copies and -1, no Shape node
    const heads = traceAt(keep, fn((t) => t.reshape(t.shape[0], t.shape[1], 2, 2).mul(2).reshape(t.shape[0], -1)), x, axes, others);
    assert.deepEqual(heads.outputs[0].shape, ['batch', '4*seq']);
    assert.equal(count(heads, 'Shape'), 0, show(heads));
    // split along the fixed axis, cat along the sequence (2*seq) and along the batch
    const sc = traceAt(keep, fn((t) => {
      const [a, b] = t.split(2, 2);
      return [om.cat([a, b], 1), om.cat([b, a], 0).reshape(2 * t.shape[0], 2 * t.shape[1])];
    }), x, axes, others);
    assert.deepEqual(sc.outputs.map((o) => o.shape), [['batch', '2*seq', 2], ['2*batch', '2*seq']]);
    // [2B, S, 2] -> [2B, 2S] is Reshape [0, -1]: axis 0 keeps the input's 2*batch
    assert.deepEqual(ops(sc), ['Slice', 'Slice', 'Concat', 'Concat', 'Reshape']);
    // [4*B*S] -> [2*B, 2*S]: -1 and a computed extent with a coefficient, Shape(seq) * 2
    const scaled = traceAt(keep, fn((t) => t.reshape(-1).reshape(2 * t.shape[0], 2 * t.shape[1])), x, axes, others);
    assert.deepEqual(scaled.outputs[0].shape, ['2*batch', '2*seq']);
    assert.deepEqual(ops(scaled), ['Reshape', 'Shape', 'Mul', 'Concat', 'Reshape']);
    x.dispose();
  }));

  test('a bound clamped at some sizes only: a split\'s piece is min(batch-3,3), a size capped by Math.min is min(seq-1,3), a split by 20\'s last piece; run at other sizes', () => withTraced((keep) => {
    const x = om.randn([5, 4, 2], { seed: 6 });
    // at a batch of 5 the second piece is the rest (2 rows), at 7 a whole piece (3): one Slice [3, 6)
    const piece = traceAt(keep, fn((t) => t.split(3, 0)[1].mul(2)), x, ['batch', 'seq', null], [[4, 4, 2], [7, 4, 2], [11, 6, 2]]);
    // min(batch-3,3): the trace begins again with batch from 4 (below, the model fails), where min(batch,3) is 3
    assert.deepEqual(piece.outputs[0].shape, ['min(batch,6)-3', 'seq', 2]);
    assert.deepEqual(ops(piece), ['Slice', 'Mul']);
    // at 3 the slice is empty, but the split has one piece and [1] is nothing: the tracer runs
    // the model at the minimum the runs below gave, and raises it until the model works there
    assert.deepEqual([piece.symbols[0].min, piece.symbols[0].narrowedBy], [4, 'trace: at batch=3, seq=4 the model fails (TypeError: Cannot read properties of undefined (reading \'mul\'))']);
    // the model caps a size it computes: the end min(seq - 1, 3) is Min(Shape - 1, 3)
    const capped = traceAt(keep, fn((t) => t.narrow(1, 0, Math.min(t.shape[1] - 1, 3)).relu()), x, ['batch', 'seq', null],
      [[5, 2, 2], [5, 3, 2], [2, 9, 2], [6, 17, 2]]);
    assert.deepEqual(capped.outputs[0].shape, ['batch', 'min(seq,4)-1', 2]); // min(seq-1,3)
    assert.equal(count(capped, 'Min'), 1, show(capped));
    // the last piece of a split by more than 16 starts at the largest multiple of 20 below 4 * seq
    const x13 = om.randn([3, 13, 2], { seed: 7 }); // 26 columns: pieces of 20 and 6
    const last = traceAt(keep, fn((t) => t.reshape(t.shape[0], -1).split(20, 1).at(-1)), x13, ['batch', 'seq', null],
      [[3, 2, 2], [3, 10, 2], [3, 11, 2], [2, 20, 2], [4, 26, 2]]);
    assert.deepEqual(last.outputs[0].shape, ['batch', '2*seq-20*floor((seq+9)/10)+20']); // 20 * floor((2 seq - 1) / 20)
    x.dispose();
    x13.dispose();
  }));

  test('split by sizes, chunk and unbind on a symbolic axis: exact where the pieces follow the size, refused where they cannot', () => withTraced((keep) => {
    const x = om.randn([3, 6, 4], { seed: 8 });
    const axes = ['batch', 'seq', null];
    // along the fixed axis: Slices, at every size
    const fixed = traceAt(keep, fn((t) => { const [a, b] = t.split([1, 3], 2); const [c, d] = t.chunk(2, -1); return [a.mul(b.sum(2, true)), c.sub(d)]; }),
      x, axes, [[2, 7, 4], [5, 1, 4]]);
    assert.deepEqual(fixed.outputs.map((o) => o.shape), [['batch', 'seq', 1], ['batch', 'seq', 2]]);
    // sizes the model computes from the symbolic axis (all but the last step, the last step)
    const steps = traceAt(keep, fn((t) => { const T = t.shape[1]; const [head, last] = t.split([T - 1, 1], 1); return head.sum(1).add(last.squeeze(1)); }),
      x, axes, [[2, 9, 4], [4, 2, 4]]);
    assert.deepEqual(steps.outputs[0].shape, ['batch', 4]);
    // chunk(2) of the sequence: ceil(seq / 2) and the rest, at odd and even lengths
    const halves = traceAt(keep, fn((t) => { const [a, b] = t.chunk(2, 1); return [a.relu(), b.neg()]; }), x, axes, [[2, 7, 4], [3, 11, 4], [2, 4, 4]]);
    assert.deepEqual(halves.symbols[1].min, 2); // one piece at a length of 1: the model ends there
    // chunk(3) has 3 pieces at a length of 3 and from 5 on (4 is 2 + 2, 2 is 1 + 1): a piece of
    // its own at 3 (a last axis of 3, a fixed size of the model there), the range from 3
    const x9 = om.randn([2, 9, 3], { seed: 10 });
    const thirds = traceAt(keep, fn((t) => { const [a, b, c] = t.chunk(3, 1); return a.add(b).add(c.sum(1, true)); }), x9, axes, [[2, 3, 3], [2, 5, 3], [3, 7, 3], [2, 13, 3]]);
    assert.deepEqual([thirds.symbols[1].min, thirds.symbols[1].narrowedBy, thirds.symbols[1].branches],
      [3, 'trace: at batch=2, seq=2 the model fails (TypeError: Cannot read properties of undefined (reading \'sum\'))', [{ min: 3, max: 3 }, { min: 5, max: Infinity }]]);
    x9.dispose();
    // unbind along a fixed axis
    const cols = traceAt(keep, fn((t) => { const [a, , c] = t.unbind(2); return a.mul(c); }), x, axes, [[2, 7, 4]]);
    assert.deepEqual(cols.outputs[0].shape, ['batch', 'seq']);
    x.dispose();
    // a fixed list of sizes along a symbolic axis holds only at the traced size, where the model
    // answers alone: the range narrows to it (the model fails at every other)
    const y = om.randn([2, 5, 3], { seed: 9 });
    const five = traceAt(keep, fn((t) => t.split([2, 3], 1)[1].relu()), y, axes, []);
    assert.deepEqual([five.symbols[1].min, five.symbols[1].max], [5, 5]);
    assert.match(five.symbols[1].narrowedBy, /^slice \(call 1\): at .*seq=\d+ the model fails \(split: the sizes sum to 5, not \d+ \(the size of dim 1\)\)$/);
    // unbind over the symbolic axis: as many pieces as the size, each stepped alike, stacked
    // again: rolled into one Loop over the size, right at every size (1, odd, far above)
    const unbound = (t) => om.stack(t.unbind(1).map((s) => s.relu()), 1);
    const rolled = traceAt(keep, fn(unbound), y, axes, [[2, 1, 3], [3, 8, 3], [1, 13, 3], [2, 40, 3]]);
    assert.deepEqual(rolled.outputs[0].shape, ['batch', 'seq', 3]);
    assert.ok(ops(rolled).includes('Loop'), ops(rolled).join(' '));
    assert.deepEqual([rolled.symbols[1].min, rolled.symbols[1].max, rolled.symbols[1].narrowedBy], [1, Infinity, null]);
    // declared at the traced size alone, the graph holds there
    const held = traceAt(keep, fn(unbound), y, [axes[0], om.Dim('seq', { min: 5, max: 5 }), null], []);
    const seq = held.symbols.find((v) => v.name === 'seq');
    assert.deepEqual([seq.min, seq.max], [5, 5]);
    y.dispose();
  }));

  test('expand of a size-1 axis to a symbol\'s size: Expand(x, Concat(1, Shape(seq), 4))', () => withTraced((keep) => {
    const x = om.randn([3, 5, 4], { seed: 40 });
    const tm = traceAt(keep, fn((t) => t.mean(1, true).expand(t.shape[0], t.shape[1], 4).mul(t)), x, ['batch', 'seq', null], [[2, 7, 4], [6, 2, 4]]);
    assert.deepEqual(tm.outputs[0].shape, ['batch', 'seq', 4]);
    // the mean over seq in float64, as eager sums (symbolic-sums.test.mjs)
    assert.deepEqual(ops(tm), ['Cast', 'ReduceMean', 'Cast', 'Shape', 'Concat', 'Expand', 'Mul']);
    x.dispose();
  }));

  test('a cat of two symbols is their sum (seq+len), computed from one Shape node each', () => withTraced((keep) => {
    const two = new (class extends nn.Module {
      forward(a, b) {
        const c = om.cat([a, b], 1).relu(); // [batch, seq + len, 4]
        const [n, l] = c.shape;
        return c.reshape(n * l, 4).mul(2).reshape(n, l, 4);
      }
    })();
    const ins = (n, s, l, seed) => ({ a: om.randn([n, s, 4], { seed }), b: om.randn([n, l, 4], { seed: seed + 1 }) });
    const ex = ins(3, 5, 7, 20);
    const tm = om.trace(two, { a: [ex.a, ['batch', 'seq', null]], b: [ex.b, ['batch', 'len', null]] });
    assert.deepEqual(tm.outputs[0].shape, ['batch', 'seq+len', 4]);
    assert.deepEqual(ops(tm), ['Concat', 'Relu', 'Reshape', 'Mul', 'Shape', 'Shape', 'Add', 'Concat', 'Reshape']);
    for (const [n, s, l, seed] of [[3, 5, 7, 20], [2, 4, 9, 22], [5, 1, 2, 24]]) {
      const x = ins(n, s, l, seed);
      keep(tm, x, two.forward(x.a, x.b), undefined, two);
    }
  }));

  test('tensors created at a symbol\'s size are computed in the graph, and run at other sizes', () => withTraced((keep, trace) => {
    const x = om.randn([3, 5, 4], { seed: 41 });
    const axes = ['batch', 'seq', null];
    const buf = om.randn([32, 4], { seed: 42 }); // a constant table (made before the traces), room for 1 + 2 * 11 rows
    const made = [
      // ones / zeros / full: Expand of the value to a shape operand
      [(t) => t.add(om.ones([t.shape[0], t.shape[1], 4])).mul(om.full([t.shape[1], 1], 0.5)).sub(om.zeros([t.shape[0], 1, 1])),
        ['Shape', 'Shape', 'Concat', 'Expand', 'Add', 'Concat', 'Expand', 'Mul', 'Concat', 'Expand', 'Sub']],
      // arange: Range on the extent (int64 as is; float cast, scaled by step, shifted by start);
      // the second arange of integers is int64 (scaled and shifted in int64 on the first's Range,
      // written once), cast to float where it meets the float input (promotion)
      [(t) => t.add(om.arange(0n, BigInt(t.shape[1])).float().reshape(-1, 1)).add(om.arange(3, 3 + 2 * t.shape[1], 2).reshape(-1, 1)),
        ['Shape', 'Squeeze', 'Range', 'Cast', 'Reshape', 'Add', 'Mul', 'Add', 'Reshape', 'Cast', 'Add']],
      // tril of ones [seq, seq], the causal mask
      [(t) => t.matmul(t.transpose(1, 2)).add(om.ones([t.shape[1], t.shape[1]]).tril()),
        ['Transpose', 'MatMul', 'Shape', 'Concat', 'Expand', 'Trilu', 'Add']],
      // rows of a constant table: [:l] and [1 : 1 + 2l : 2] (Slice ends at start + l * step)
      [(t) => t.add(buf.slice(0, 0, t.shape[1])).add(buf.slice(0, 1, 1 + 2 * t.shape[1], 2)),
        ['Shape', 'Slice', 'Add', 'Mul', 'Add', 'Slice', 'Add']],
      // a constant expanded to the batch (a class token) and cat with the input: [batch, seq + 1, 4]
      [(t) => om.cat([buf.slice(0, 0, 1).reshape(1, 1, 4).expand(t.shape[0], 1, 4), t], 1),
        ['Shape', 'Concat', 'Expand', 'Concat']],
      // a descending arange from the length: (l - 1) - Range(0, l), int64, cast where it meets the input
      [(t) => t.add(om.arange(t.shape[1] - 1, -1, -1).reshape(-1, 1)),
        ['Shape', 'Squeeze', 'Range', 'Mul', 'Sub', 'Squeeze', 'Add', 'Reshape', 'Cast', 'Add']],
    ];
    for (const [f, want] of made) {
      const tm = trace(fn(f), { x: [x, axes] });
      assert.deepEqual(ops(tm), want, show(tm));
    }
  }));

  // The values each creation computes in the graph, checked at other sizes (withTraced runs
  // every model at three other sizes of batch and seq): fills of every dtype (NaN, -Infinity,
  // int64, bool), tril / triu with offsets on square and non-square shapes, aranges of a
  // fractional or negative start and a step other than 1 (and one sharing another's Range),
  // strided slices starting past 0.
  test('created tensors at a symbol\'s size keep the eager values at other sizes', () => withTraced((keep, trace) => {
    const x = om.randn([3, 5, 4], { seed: 45 });
    const axes = ['batch', 'seq', null];
    const buf = om.randn([40, 4], { seed: 46 });
    const cases = [
      (t) => t.add(om.full([t.shape[1], 1], -Infinity).exp()).add(om.where(om.full([t.shape[1], 1], NaN).ne(0), 1, 2)),
      (t) => t.add(om.full([t.shape[0], t.shape[1], 1], 7n).float()).mul(om.where(om.full([t.shape[1], 4], true), t, 0)),
      (t) => {
        const l = t.shape[1], s = t.matmul(t.transpose(1, 2));
        return s.mul(om.ones([l, l]).tril(-1)).add(om.ones([l, l]).triu(1).mul(2)).matmul(t.mul(om.ones([l, 4]).triu(2)));
      },
      (t) => {
        const l = t.shape[1];
        const f = om.arange(-1.5, -1.5 + 0.25 * l, 0.25), i = om.arange(2n, 2n + 3n * BigInt(l), 3n);
        return t.add(f.reshape(-1, 1)).add(i.float().reshape(-1, 1));
      },
      // arange(0, l) after arange(1, 1 + l): its result is the earlier one's Range, symbolic too
      (t) => t.add(om.arange(1, 1 + t.shape[1]).reshape(-1, 1)).add(om.arange(0n, BigInt(t.shape[1])).float().reshape(-1, 1)),
      (t) => t.add(buf.slice(0, 2, 2 + 3 * t.shape[1], 3)).add(buf.slice(0, 7, 7 + t.shape[1])),
    ];
    for (const f of cases) trace(fn(f), { x: [x, axes] });
  }));

  test('writes by a step along a fixed axis into tensors created at a symbol\'s size: the sinusoidal table built in forward', () => withTraced((keep) => {
    // pe = zeros([T, d]); pe[:, 0::2] = sin(...); pe[:, 1::2] = cos(...) was refused (slice_scatter's
    // full shape taken as fixed); now ScatterElements into zeros of [T, d] computed in the graph
    for (const [d, base, t] of [[6, 10000, 5], [8, 500, 7]]) {
      const model = fn((x) => {
        const T = x.shape[1];
        const pe = om.zeros([T, d]);
        const position = om.arange(T, { dtype: 'float32' }).unsqueeze(1);
        const divTerm = om.arange(0, d, 2, { dtype: 'float32' }).mul(-Math.log(base) / d).exp();
        pe.slice(1, 0, null, 2).copy_(position.mul(divTerm).sin());
        pe.slice(1, 1, null, 2).copy_(position.mul(divTerm).cos());
        return x.add(pe);
      });
      const x = om.randn([2, t, d], { seed: d });
      const tm = om.trace(model, { x: [x, ['batch', 'seq', null]] });
      keep(tm, { x }, [model.forward(x)], undefined, model);
      assert.ok(tm.graph().nodes.some((n) => n.opType === 'ScatterElements'), tm.graph().nodes.map((n) => n.opType).join());
      assert.deepEqual(tm.symbols.map((s) => [s.min, s.max, s.narrowedBy]), [[1, Infinity, null], [1, Infinity, null]]);
      for (const T of [1, 2, 3, 4, t + 1, 10 * t + 1, 50 * t]) {
        const xs = om.randn([1, T, d], { seed: T });
        keep(tm, { x: xs }, [model.forward(xs)], `d ${d} at seq ${T}`);
      }
    }
  }));

  test('writes by a step along the symbol\'s own axis: every other row of a mask made at the sequence length', () => withTraced((keep) => {
    // m = zeros([2, T]); m[:, s::k] = v: the indices of the written rows are start + step * (the
    // written slice's length), both computed from T in the graph, so the rows land where eager
    // puts them at every T (odd, 1, across every residue of the step, far above the example)
    for (const [start, step, v, t] of [[0, 2, 1, 6], [0, 3, -2.5, 7]]) {
      const model = fn((x) => {
        const m = om.zeros([2, x.shape[1]]);
        m.slice(1, start, null, step).fill_(v);
        return x.add(m.unsqueeze(2));
      });
      const x = om.randn([2, t, 3], { seed: t });
      const tm = om.trace(model, { x: [x, [null, 'seq', null]] });
      keep(tm, { x }, [model.forward(x)], undefined, model);
      assert.deepEqual(tm.symbols.map((s) => [s.min, s.max, s.narrowedBy]), [[1, Infinity, null]]);
      for (const T of [1, 2, 3, 4, 5, step + 4, t + 1, 10 * t + 1, 50 * t]) {
        const xs = om.randn([2, T, 3], { seed: T });
        keep(tm, { x: xs }, [model.forward(xs)], `step ${step} at seq ${T}`);
      }
    }
  }));

  test('created tensors whose values cannot follow a symbol are refused at the call', () => {
    const x = om.randn([3, 5, 4], { seed: 47 });
    const buf = om.randn([32, 4], { seed: 48 });
    const refused = (f, re) => assert.throws(() => om.trace(fn(f), { x: [x, ['batch', 'seq', null]] }),
      (e) => e instanceof om.TraceError && e.kind === 'SymbolicShape' && re.test(e.message));
    // the last rows of a table: a length the table's end decides, fixed, so adding it to x answers
    // at seq 5 and 1 only: two pieces (symbolic-size-one.test.mjs runs such models)
    for (const f of [(t) => t.add(buf.slice(0, 27)), (t) => t.add(buf.slice(0, -5))]) {
      const tm = om.trace(fn(f), { x: [x, ['batch', 'seq', null]] });
      assert.deepEqual(tm.symbols.map((s) => s.branches), [undefined, [{ min: 1, max: 1 }, { min: 5, max: 5 }]]);
      tm.dispose();
    }
    // random values of a changing size; an int64 arange of a fractional step
    refused((t) => t.add(om.randn([t.shape[1], 4])), /^randn: a random tensor of shape \[5,4\] changes with the sizes/);
    // a write by a step along the symbol's own axis into a slice that is empty at some sizes
    // (m[3::2] of seq rows: empty up to seq = 3): InPlaceMutation at the write (fill_, shown as fill)
    const x6 = om.randn([2, 6, 3], { seed: 49 });
    for (const [write, name] of [[(v) => v.fill_(1), 'fill']]) {
      assert.throws(() => om.trace(fn((t) => { const m = om.zeros([t.shape[1]]); write(m.slice(0, 3, null, 2)); return t.add(m.reshape([1, -1, 1])); }), { x: [x6, [null, 'seq', null]] }),
        (e) => e instanceof om.TraceError && e.kind === 'InPlaceMutation' && e.message.startsWith(`${name}: a write by a step along an axis whose size `
          + 'moves, into a slice that is empty at some of its sizes cannot be recorded in the graph at every size; declare a minimum size at '
          + 'which the slice holds an element: om.Dim(name, { min })') && !/slice_?scatter|om_trace_dim/i.test(e.message), name);
    }
    refused((t) => t.add(om.arange(0, t.shape[1] / 2, 0.5, { dtype: 'int64' }).float().reshape(-1, 1)),
      /^arange: an int64 arange from 0 by 0.5 \(a fractional start or step\) of a length that changes with the sizes cannot be written/);
    x.dispose();
    x6.dispose();
    buf.dispose();
  });

  test('expand of a size-1 axis to a product of symbols (batch*seq)', () => withTraced((keep, trace) => {
    const x = om.randn([3, 5, 4], { seed: 43 });
    const tm = trace(fn((t) => {
      const [b, l] = t.shape;
      const flat = t.reshape(b * l, 4);
      return flat.add(flat.mean(0, true).relu().expand(b * l, 4));
    }), { x: [x, ['batch', 'seq', null]] });
    assert.deepEqual(tm.outputs[0].shape, ['batch*seq', 4]);
    assert.deepEqual(ops(tm), ['Reshape', 'Cast', 'ReduceMean', 'Cast', 'Relu', 'Shape', 'Shape', 'Mul', 'Concat', 'Expand', 'Add'], show(tm));
  }));

  // Graph economy of a GPT-style decoder (examples/zoo/gpt.mjs) with symbolic batch and
  // sequence: one Shape node for the whole graph, and a fixed number of nodes above the same
  // model traced at fixed shapes, whatever its depth: the positions (a Slice of the position
  // table: the rows of arange(0, l)), the causal mask shared by every scaledDotProductAttention
  // block (Concat, Expand, Trilu), and per MultiheadAttention block the slices of its own mask
  // buffer and the additive mask (Slice, Slice, Where), which the fixed trace holds as
  // constants. docs/performance-log.md, "Graph economy with symbolic axes".
  test('GPT-style decoder with symbolic batch and sequence: node and Shape-node counts against fixed shapes', () => withTraced((keep, trace) => {
    const pinned = [ // blocks, nodes symbolic, nodes fixed
      [['sdpa', 'mha'], 83, 76],
      [['sdpa', 'sdpa', 'sdpa', 'sdpa'], 146, 141],
    ];
    for (const [blocks, symbolic, fixed] of pinned) {
      om.manualSeed(4);
      const net = new gpt.GPT({ vocab: 40, d: 32, heads: 4, maxLen: 24 }).eval(); // blocks sdpa, mha
      if (blocks.length !== 2) { // the same decoder with other blocks
        net.h.dispose();
        net.h = new nn.ModuleList(blocks.map((kind) => new gpt.Block(32, 4, 24, kind))).eval();
      }
      const ids = om.tidy(() => om.rand([3, 10], { seed: 1 }).mul(40).long());
      const tm = trace(net, { x: [ids, ['batch', 'seq']] });
      const fx = trace(net, { x: ids });
      assert.deepEqual(tm.outputs[0].shape, ['batch', 'seq', 40]);
      assert.equal(count(tm, 'Shape'), 1, show(tm));
      assert.equal(count(tm, 'Trilu'), blocks.includes('sdpa') ? 1 : 0, show(tm));
      assert.equal(count(tm, 'Range'), 0, show(tm)); // the positions' Gather of Range(0, l) is a Slice
      assert.deepEqual([ops(tm).length, ops(fx).length], [symbolic, fixed], `${blocks}: ${show(tm)}`);
      net.dispose();
    }
  }));

  test('two identical convs on one input give one extent each axis: their outputs add, at other sizes', () => withTraced((keep, trace) => {
    om.manualSeed(7);
    const c1 = new nn.Conv2d(3, 4, 3, { stride: 2, padding: 1 }), c2 = new nn.Conv2d(3, 4, 3, { stride: 2, padding: 1 });
    const net = fn((x) => c1.forward(x).add(c2.forward(x)).relu());
    const tm = trace(net, { x: [om.randn([2, 3, 8, 6], { seed: 44 }), ['batch', null, 'h', 'w']] });
    assert.deepEqual(tm.outputs[0].shape, ['batch', 4, 'floor((h+1)/2)', 'floor((w+1)/2)']);
    assert.deepEqual(ops(tm), ['Conv', 'Conv', 'Add', 'Relu']);
    c1.dispose();
    c2.dispose();
  }));

  test('a slice of a product of symbols: 12 wide where 2hw >= 24, narrower below as eager clamps, checked at their corner, smaller and larger sizes', () => withTraced((keep) => {
    const model = fn((x) => x.reshape(x.shape[0], -1).slice(1, 12, 24));
    const tm = traceAt(keep, model, om.randn([2, 2, 9, 10], { seed: 1 }), ['batch', null, 'h', 'w'],
      [[1, 2, 6, 2], [3, 2, 13, 17], [2, 2, 7, 3], [1, 2, 1, 1], [2, 2, 2, 4]]);
    assert.deepEqual(tm.symbols.map((v) => v.min), [1, 1, 1]); // no range to narrow: eager answers at every size
    assert.deepEqual(tm.outputs[0].shape, ['batch', 'min(2*h*w,24)-min(2*h*w,12)']);
  }));

  test('symbols may share an example size: each is its own axis at the other sizes', () => withTraced((keep) => {
    const tm = traceAt(keep, fn((x) => x.relu().sum(0)), om.randn([3, 3]), ['a', 'b'], [[2, 5], [6, 1]]);
    assert.deepEqual(tm.outputs[0].shape, ['b']);
    // a model that needs them equal fails at the other sizes
    assert.throws(() => om.trace((x) => x.add(x.transpose(0, 1)), { x: [om.randn([3, 3]), ['a', 'b']] }),
      (e) => e instanceof om.TraceError && e.kind === 'SymbolicShape' && /^add: at a=\d+, b=\d+ the call fails \(add: shapes \[\d+,\d+\] and \[\d+,\d+\] do not broadcast/.test(e.message));
  }));

  test('a call that holds on a box of sizes around the example only is refused with the declaration of that box (ViT\'s position table at its native size)', () => withTraced((keep, trace) => {
    // a table of 16 patches, added where the grid of 4-pixel patches has 16 (as ViT adds its table
    // itself there, and interpolates it elsewhere), fits 16 to 19 pixels a side only
    const table = om.randn([1, 16, 1], { seed: 3 });
    const patches = (x) => {
      const p = om.nn.functional.avgPool2d(x, 4).flatten(2).transpose(1, 2);
      return p.shape[1] === 16 ? p.add(table) : p.add(p.mean(1, true));
    };
    assert.throws(() => om.trace(patches, { x: [om.randn([2, 1, 16, 16]), ['b', null, 'h', 'w']] }), (e) => e instanceof om.TraceError
      && e.kind === 'SymbolicShape' && /^add: at .* the call fails \(add: shapes .* do not broadcast .*\), so the graph would only hold at the traced sizes; it holds for the sizes om\.Dim\('h', \{ min: 16, max: 19 \}\), om\.Dim\('w', \{ min: 16, max: 19 \}\) declare/.test(e.message));
    const tm = trace(patches, { x: [om.randn([2, 1, 16, 16]), ['b', null, om.Dim('h', { min: 16, max: 19 }), om.Dim('w', { min: 16, max: 19 })]] });
    assert.deepEqual(tm.symbols.map((s) => [s.name, s.min, s.max]).sort(), [['b', 1, Infinity], ['h', 16, 19], ['w', 16, 19]]);
    const x = om.randn([3, 1, 19, 17], { seed: 4 });
    keep(tm, { x }, patches(x), 'at 19 x 17');
  }));

  test('a constant of a sum\'s size holds at one size (the range narrows to it); two joins of the same sizes in another order are one extent', () => withTraced((keep) => {
    const x = om.randn([3, 5, 4], { seed: 6 });
    const y = om.randn([3, 7, 4], { seed: 7 });
    const once = traceAt(keep, fn((t) => om.cat([t, t.mul(1)], 1).add(om.ones([10, 4]))), x, ['batch', 'seq', null], []);
    assert.deepEqual(once.symbols.map((s) => [s.min, s.max]), [[1, Infinity], [5, 5]]);
    assert.match(once.symbols[1].narrowedBy, /^add \(call \d+\): at batch=\d+, seq=\d+ the call fails \(add: shapes \[\d+,\d+,4\] and \[10,4\]/);
    const two = new (class extends nn.Module { forward(a, b) { return om.cat([a, b], 1).add(om.cat([b, a], 1)); } })();
    const tm = om.trace(two, { a: [x, ['batch', 'seq', null]], b: [y, ['batch', 'len', null]] });
    assert.deepEqual(tm.outputs[0].shape, ['batch', 'seq+len', 4]);
    keep(tm, { a: x, b: y }, two.forward(x, y), undefined, two);
  }));
});

// The runs check each symbol over its whole declared range (shape only, to 32768 when it has no
// maximum), bisected to the exact size where the model does another thing (docs/symbolic-axes.md,
// "The whole range").
describe('the declared range', () => {
  const x = () => om.randn([2, 8, 4], { seed: 61 });
  const thresholds = [
    // a branch the first runs above the example meet (seq 9 and 10 of an example of 8), one just above
    // those runs' sizes, one at 100 (an argument changes) and one far above them
    [(t) => (t.shape[1] > 9 ? t.sigmoid() : t.abs()), 9, /^sigmoid: the model changes at a size threshold: at seq=10 it calls sigmoid here \(call \d+\), where the trace calls abs; at seq=9 it does what the trace does/],
    [(t) => (t.shape[1] > 32 ? t.relu() : t.neg()), 32, /^relu: the model changes at a size threshold: at seq=33 it calls relu here \(call \d+\), where the trace calls neg; at seq=32 it does what the trace does/],
    [(t) => t.narrow(1, 0, t.shape[1] >= 100 ? 2 : 1), 99, /^slice: the model changes at a size threshold: at seq=100 it passes 2 as argument 2 here \(call \d+\), where the graph computes 1; at seq=99 it does what the trace does/],
    [(t) => (t.shape[1] > 1000 ? t.sigmoid() : t.tanh()), 1000, /^sigmoid: the model changes at a size threshold: at seq=1001 it calls sigmoid here \(call \d+\), where the trace calls tanh; at seq=1000 it does/],
  ];

  test('a branch on a size above the example is an If cut at the threshold (symbolic-branches.test.mjs runs them)', () => {
    for (const [f, last] of thresholds) {
      const ex = x();
      const tm = om.trace(fn(f), { x: [ex, ['batch', 'seq', null]] });
      assert.deepEqual(ops(tm), ['Shape', 'Less', 'If']);
      assert.deepEqual(tm.symbols.find((s) => s.name === 'seq').branches, [{ min: 1, max: last }, { min: last + 1, max: Infinity }]);
      tm.dispose();
      ex.dispose();
    }
  });

  test('declared with a maximum below the threshold, the trace holds and is right up to it in onnxruntime-web and the Session', () => withTraced((keep) => {
    for (const [f, last] of thresholds) {
      const model = fn(f);
      const ex = x();
      const tm = om.trace(model, { x: [ex, ['batch', om.Dim('seq', { max: last }), null]] });
      const checked = Object.fromEntries(tm.symbols.map((v) => [v.name, v.checked]));
      assert.deepEqual(checked, { batch: { min: 1, max: 32768 }, seq: { min: 1, max: last } });
      keep(tm, { x: ex }, model.forward(ex), undefined, model);
      for (const [b, s] of [[1, last], [3, last - 1], [2, 1], [5, Math.min(17, last)]]) {
        const y = om.randn([b, s, 4], { seed: b + s });
        keep(tm, { x: y }, model.forward(y), `at [${b}, ${s}, 4]`);
      }
    }
  }));

  test('a refusal inside a piece of a piece reads in JS terms: no C function name mid-message', () => {
    // a loop of floor(2T/3) steps changes its op sequence at every third size: the piece past one
    // threshold is itself cut at the next, and its refusal is quoted inside this one's
    const ex = om.randn([8], { seed: 63 });
    const loop = (t) => { let y = t; for (let i = 0; i < Math.floor((2 * t.shape[0]) / 3); i++) y = y.mul(1.5).add(1); return y; };
    assert.throws(() => om.trace(loop, { x: [ex, ['T']] }), (e) => {
      assert.ok(e instanceof om.TraceError && e.kind === 'SymbolicShape', `${e.kind}: ${e.message}`);
      assert.match(e.message, /^trace: the model changes at a size threshold of 'T' \(at \d+\), and the piece from it \(traced at T=\d+\) is refused: the model changes at a size threshold of 'T'/);
      assert.doesNotMatch(e.message, /trace_run|om_trace/, e.message);
      return true;
    });
    ex.dispose();
  });

  test('below the example: a branch there is an If too', () => {
    const ex = om.randn([2, 40, 4], { seed: 62 });
    const tm = om.trace(fn((t) => (t.shape[1] > 20 ? t.relu() : t.neg())), { x: [ex, ['batch', 'seq', null]] });
    assert.deepEqual(tm.symbols.find((s) => s.name === 'seq').branches, [{ min: 1, max: 20 }, { min: 21, max: Infinity }]);
    tm.dispose();
    ex.dispose();
  });

  test('a threshold on a product of two symbols names both and their declaration', () => {
    const ex = x();
    assert.throws(() => om.trace(fn((t) => (t.shape[0] * t.shape[1] > 4000 ? t.relu() : t.neg())), { x: [ex, ['batch', 'seq', null]] }),
      (e) => {
        const m = /^relu: the model changes at a size threshold: at batch=(\d+), seq=(\d+) it calls relu here \(call \d+\), where the trace calls neg; at batch=(\d+), seq=(\d+) it does what the trace does.*declare om\.Dim\('batch', \{ min: 1, max: (\d+) \}\), om\.Dim\('seq', \{ min: 1, max: (\d+) \}\)/.exec(e.message);
        assert.ok(m, e.message);
        const [b1, s1, b0, s0, maxB, maxS] = m.slice(1).map(Number);
        assert.ok(b1 * s1 > 4000 && b0 * s0 <= 4000 && b1 - b0 <= 1 && s1 - s0 <= 1, e.message);
        assert.deepEqual([maxB, maxS], [b0, s0]);
        return true;
      });
    ex.dispose();
  });

  test('a model with no threshold traces as before and reports the range it checked', () => withTraced((keep) => {
    const model = fn((t) => t.reshape(t.shape[0] * t.shape[1], 4).relu().reshape(t.shape[0], t.shape[1], 4));
    const ex = x();
    const tm = om.trace(model, { x: [ex, ['batch', om.Dim('seq', { multipleOf: 2, min: 4, max: 200 }), null]] });
    assert.deepEqual(Object.fromEntries(tm.symbols.map((v) => [v.name, v.checked])), { batch: { min: 1, max: 32768 }, seq: { min: 4, max: 200 } });
    assert.deepEqual(ops(tm), ['Reshape', 'Relu', 'Shape', 'Concat', 'Reshape']);
    keep(tm, { x: ex }, model.forward(ex), undefined, model);
  }));

  // Deliver 4 of issue 27: where the model answers at a size its symbols declare, the range
  // stays; it narrows only where the model fails at every size past it
  const eagerFails = (model, shape) => assert.throws(() => om.tidy(() => model.forward(om.randn(shape))), (e) => e instanceof om.OmError);
  const ranges = (tm) => tm.symbols.map((v) => [v.name, v.min, v.max, v.narrowedBy]);

  test('a call that fails only with several symbols small at once narrows no range: right where one alone is small', async () => {
    const conv = new nn.Conv1d(3, 2, 5).eval(); // needs h * w >= 5
    const model = fn((t) => conv.forward(t.reshape(t.shape[0], 3, t.shape[2] * t.shape[3])).relu());
    const ex = om.randn([2, 3, 6, 7], { seed: 64 });
    const tm = om.trace(model, { x: [ex, ['batch', null, 'h', 'w']] });
    try {
      assert.deepEqual(ranges(tm), [['batch', 1, Infinity, null], ['h', 1, Infinity, null], ['w', 1, Infinity, null]]);
      eagerFails(model, [1, 3, 1, 4]);
      await checkAt(tm, model, [[1, 3, 1, 9], [3, 3, 11, 1], [1, 3, 2, 3], [4, 3, 1, 5], [2, 3, 13, 10]]);
    } finally {
      tm.dispose();
      ex.dispose();
      conv.dispose();
    }
  });

  test('a range with a hole (the model answers below sizes where it fails) stays where it answers', async () => {
    // min(batch, 5) rows against 5 broadcast at a batch of 1 and from 5 on, fail from 2 to 4
    const col = om.tidy(() => om.arange(5).reshape(-1, 1));
    const rows = fn((t) => t.split(5, 0)[0].add(col));
    // min(seq, 8) - 1 rows against 7: 1 row at a sequence of 2, none at 1, fail from 3 to 7
    const full = om.full([1, 7, 4], 0.5);
    const seq = fn((t) => t.slice(1, 1, 8).mul(full));
    const a = om.randn([9, 4], { seed: 65 }), b = om.randn([3, 11, 4], { seed: 66 });
    const tmA = om.trace(rows, { x: [a, ['batch', null]] });
    const tmB = om.trace(seq, { x: [b, ['batch', 'seq', null]] });
    try {
      assert.deepEqual(ranges(tmA), [['batch', 1, Infinity, null]]);
      eagerFails(rows, [3, 4]);
      await checkAt(tmA, rows, [[1, 4], [5, 4], [6, 4], [23, 4]]);
      // seq 1 fails (0 rows against 7) and every size below it: that minimum is the model's own
      assert.deepEqual(ranges(tmB).map((r) => r.slice(0, 3)), [['batch', 1, Infinity], ['seq', 2, Infinity]]);
      assert.match(tmB.symbols[1].narrowedBy, /^mul \(call \d+\): at batch=\d+, seq=1 the call fails \(mul: shapes \[\d+,0,4\] and \[1,7,4\] do not broadcast/);
      eagerFails(seq, [3, 5, 4]);
      await checkAt(tmB, seq, [[1, 2, 4], [2, 8, 4], [4, 9, 4], [3, 30, 4]]);
    } finally {
      for (const t of [tmA, tmB, a, b, col, full]) t.dispose();
    }
  });

  test('a minimum raised past sizes where the model answers is cut into a piece there (random model 21:380)', async () => {
    // rows a to a + 1 of the batch, empty below a + 1, against every row: fails from 2 to a, answers at 1
    for (const a of [2, 4]) {
      const model = fn((t) => t.slice(0, a, a + 1).mul(2).sub(t));
      const ex = om.randn([a + 3, 1, 6, 5], { seed: 68 });
      const tm = om.trace(model, { x: [ex, ['batch', null, 'h', 'w']] });
      try {
        assert.deepEqual(ranges(tm), [['batch', 1, Infinity, null], ['h', 1, Infinity, null], ['w', 1, Infinity, null]]);
        assert.deepEqual(tm.symbols[0].branches, [{ min: 1, max: 1 }, { min: a + 1, max: Infinity }]);
        eagerFails(model, [a, 1, 6, 5]);
        await checkAt(tm, model, [[1, 1, 6, 5], [1, 1, 2, 9], [a + 1, 1, 6, 5], [a + 2, 1, 1, 9], [4 * a + 5, 1, 7, 2]]);
      } finally {
        tm.dispose();
        ex.dispose();
      }
    }
  });

  test('a size fitted as fixed where every symbol is small computes another is refused with the declaration, not narrowed', () => {
    // Math.min(batch * seq, 5) is 5 at every size the first runs take; at batch = seq = 2 it is 4
    const model = fn((t) => t.reshape(t.shape[0] * t.shape[1], 4).narrow(0, 0, Math.min(t.shape[0] * t.shape[1], 5)));
    const ex = om.randn([4, 6, 4], { seed: 67 });
    assert.throws(() => om.trace(model, { x: [ex, ['batch', 'seq', null]] }), (e) => {
      assert.ok(e instanceof om.TraceError && e.kind === 'SymbolicShape', String(e));
      assert.match(e.message, /^slice: the model changes at a size threshold: at batch=(\d+), seq=(\d+) it passes (\d) as argument 2 here \(call \d+\), where the graph computes 5;.*declare om\.Dim\('batch', \{ min: \d+ \}\), om\.Dim\('seq', \{ min: \d+ \}\)/);
      return true;
    });
    ex.dispose();
  });

  test('a table of positions ends the range where the lookup fails, exactly', () => {
    const table = om.randn([50, 4], { seed: 63 });
    const model = fn((t) => t.add(table.indexSelect(0, om.arange(0n, BigInt(t.shape[1])))));
    const ex = x();
    const tm = om.trace(model, { x: [ex, ['batch', 'seq', null]] });
    assert.equal(tm.symbols[1].max, 50);
    assert.deepEqual(tm.symbols[1].checked, { min: 1, max: 50 });
    assert.equal(tm.symbols[1].narrowedBy, 'trace: at batch=2, seq=51 the model fails at indexSelect (call 2): indexSelect: index 50 is out of range for dim 0 of size 50 (valid: 0 to 49)');
    tm.dispose();
    ex.dispose();
    table.dispose();
  });
});
