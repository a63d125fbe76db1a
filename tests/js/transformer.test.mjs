// om.nn.TransformerEncoderLayer: PyTorch's structure and names (its outputs against PyTorch's own
// are in pytorch.test.mjs: encoder_layer, encoder_layer_norm_first), the forward against the same
// computation written out with the submodules, dropout in training mode, gradients, bad input as
// OmError, and traced (eval) through onnxruntime-web with a symbolic batch.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { near, vals, memoryHooks, withTraced } from './helpers.mjs';

memoryHooks();
const nn = om.nn;

function bad(fn, kind, re) {
  assert.throws(fn, (e) => e instanceof om.OmError && e.kind === kind && re.test(e.message), `${kind} ${re}`);
}

/** The layer written out step by step (eval mode) with its submodules: the reference of forward. */
function reference(layer, x, mask) {
  return om.tidy(() => {
    const sa = (h) => layer.self_attn.forward(h, h, h, { attnMask: mask, needWeights: false })[0];
    const ff = (h) => layer.linear2.forward(om.nn.functional[layer.activation](layer.linear1.forward(h)));
    if (layer.normFirst) {
      const h = x.add(sa(layer.norm1.forward(x)));
      return h.add(ff(layer.norm2.forward(h)));
    }
    const h = layer.norm1.forward(x.add(sa(x)));
    return layer.norm2.forward(h.add(ff(h)));
  });
}

describe('nn.TransformerEncoderLayer', () => {
  test('PyTorch\'s parameter names, order, shapes and defaults', () => {
    om.manualSeed(1);
    const layer = new nn.TransformerEncoderLayer(8, 2);
    try {
      const sd = layer.stateDict();
      assert.deepEqual(Object.entries(sd).map(([k, t]) => [k, t.shape]), [
        ['self_attn.in_proj_weight', [24, 8]], ['self_attn.in_proj_bias', [24]],
        ['self_attn.out_proj.weight', [8, 8]], ['self_attn.out_proj.bias', [8]],
        ['linear1.weight', [2048, 8]], ['linear1.bias', [2048]], ['linear2.weight', [8, 2048]], ['linear2.bias', [8]],
        ['norm1.weight', [8]], ['norm1.bias', [8]], ['norm2.weight', [8]], ['norm2.bias', [8]],
      ]);
      assert.equal(layer.parameters().length, 12);
      assert.ok(layer.parameters().every((p) => p.requiresGrad));
      for (const name of ['dropout', 'dropout1', 'dropout2']) {
        assert.ok(layer[name] instanceof nn.Dropout, name);
        assert.equal(layer[name].p, 0.1);
      }
      assert.equal(layer.self_attn.dropout, 0.1);
      assert.equal(layer.norm1.eps, 1e-5);
      assert.equal(layer.activation, 'relu');
      assert.equal(layer.normFirst, false);
      assert.equal(layer.batchFirst, false);
      assert.deepEqual(layer.namedModules().map(([p]) => p),
        ['', 'self_attn', 'self_attn.out_proj', 'linear1', 'dropout', 'linear2', 'norm1', 'norm2', 'dropout1', 'dropout2']);
    } finally {
      layer.dispose();
    }
    const nb = new nn.TransformerEncoderLayer(6, 3, { dimFeedforward: 10, bias: false });
    try {
      assert.deepEqual(Object.keys(nb.stateDict()),
        ['self_attn.in_proj_weight', 'self_attn.out_proj.weight', 'linear1.weight', 'linear2.weight', 'norm1.weight', 'norm2.weight']);
    } finally {
      nb.dispose();
    }
  });

  test('forward equals the computation written out (post-norm and normFirst, relu and gelu, masks, unbatched)', () => om.tidy(() => {
    for (const opts of [{}, { normFirst: true, activation: 'gelu' }, { batchFirst: true, activation: 'gelu', layerNormEps: 1e-3 }]) {
      om.manualSeed(3);
      const layer = new nn.TransformerEncoderLayer(8, 4, { dimFeedforward: 12, ...opts }).eval();
      try {
        for (const p of layer.parameters()) om.noGrad(() => p.copy_(om.randn(p.shape).mul(0.5)));
        const shape = layer.batchFirst ? [3, 5, 8] : [5, 3, 8];
        const x = om.randn(shape, { seed: 2 });
        const mask = om.randn([5, 5], { seed: 3 });
        const y = layer.forward(x, { srcMask: mask });
        assert.deepEqual(y.shape, shape);
        near(vals(y), vals(reference(layer, x, mask)), 1e-5, JSON.stringify(opts));
        // unbatched [L, E] is a batch of one
        const x1 = x.select(layer.batchFirst ? 0 : 1, 0);
        near(vals(layer.forward(x1, { srcMask: mask })), vals(y.select(layer.batchFirst ? 0 : 1, 0)), 1e-5, 'unbatched');
      } finally {
        layer.dispose();
      }
    }
    // a function or a Module as the activation
    om.manualSeed(4);
    const a = new nn.TransformerEncoderLayer(4, 2, { dimFeedforward: 6, activation: (h) => h.tanh() }).eval();
    const b = new nn.TransformerEncoderLayer(4, 2, { dimFeedforward: 6, activation: new nn.Tanh() }).eval();
    try {
      b.loadStateDict(a.stateDict());
      const x = om.randn([3, 2, 4], { seed: 5 });
      near(vals(a.forward(x)), vals(b.forward(x)), 0, 'function = Module');
      assert.ok(b.namedModules().some(([p]) => p === 'activation'));
    } finally {
      a.dispose();
      b.dispose();
    }
  }));

  test('a key padding mask: padded keys get no attention, so their values do not matter', () => om.tidy(() => {
    om.manualSeed(6);
    const layer = new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16, batchFirst: true }).eval();
    try {
      const x = om.randn([2, 4, 8], { seed: 1 });
      const pad = om.tensor([[false, false, true, true], [false, false, false, false]]);
      const y = layer.forward(x, { srcKeyPaddingMask: pad });
      // change the padded positions of sample 0: the other positions' outputs stay
      const x2 = x.clone();
      om.noGrad(() => x2.slice(0, 0, 1).slice(1, 2, 4).copy_(om.randn([1, 2, 8], { seed: 9 })));
      const y2 = layer.forward(x2, { srcKeyPaddingMask: pad });
      near(vals(y2.slice(0, 0, 1).slice(1, 0, 2)), vals(y.slice(0, 0, 1).slice(1, 0, 2)), 1e-6, 'unpadded positions');
      assert.ok(Math.max(...vals(y2.sub(y).abs())) > 1e-2, 'the padded positions themselves change');
    } finally {
      layer.dispose();
    }
  }));

  test('training mode applies dropout (seeded), dropout 0 equals eval; gradients reach every parameter', () => om.tidy(() => {
    om.manualSeed(7);
    const layer = new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16, dropout: 0.3 });
    try {
      const x = om.randn([4, 2, 8], { seed: 1 });
      const yEval = layer.eval().forward(x);
      layer.train();
      om.manualSeed(11);
      const y1 = layer.forward(x);
      om.manualSeed(11);
      const y2 = layer.forward(x);
      near(vals(y1), vals(y2), 0, 'same seed, same dropout');
      assert.ok(Math.max(...vals(y1.sub(yEval).abs())) > 1e-3, 'dropout changes the training output');
      y1.pow(2).sum().backward();
      for (const [name, p] of layer.namedParameters()) {
        assert.ok(p.grad !== null && Math.max(...vals(p.grad.abs())) > 0, `gradient of ${name}`);
      }
      layer.zeroGrad();
      for (const m of [layer.dropout, layer.dropout1, layer.dropout2]) m.p = 0;
      layer.self_attn.dropout = 0;
      near(vals(layer.forward(x)), vals(yEval), 0, 'dropout 0 in training = eval');
    } finally {
      layer.dispose();
    }
  }));

  test('bad arguments are OmErrors', () => {
    bad(() => new nn.TransformerEncoderLayer(8, 3), 'InvalidArgument', /dModel must be divisible by nhead, got 8 and 3/);
    bad(() => new nn.TransformerEncoderLayer(0, 1), 'InvalidArgument', /must be positive/);
    bad(() => new nn.TransformerEncoderLayer(8, 2, { activation: 'swish' }), 'InvalidArgument', /activation must be 'relu', 'gelu', a function or a Module, got/);
    bad(() => new nn.TransformerEncoderLayer(8, 2, { dropout: 2 }), 'InvalidArgument', /dropout probability has to be between 0 and 1/);
    bad(() => new nn.TransformerEncoderLayer(8, 2, { nhead: 2 }), 'InvalidArgument', /unknown option 'nhead'/);
    bad(() => new nn.TransformerEncoderLayer(8, 2, { batchFirst: 1 }), 'InvalidArgument', /batchFirst must be a boolean/);
    bad(() => new nn.TransformerEncoderLayer(8, 2, 5), 'InvalidArgument', /options must be an object/);
    bad(() => new nn.MultiheadAttention(8, 2, { dropout: -0.5 }), 'InvalidArgument', /dropout probability has to be between 0 and 1/);
    const layer = new nn.TransformerEncoderLayer(4, 2, { dimFeedforward: 8 });
    const x = om.zeros([3, 2, 4]);
    try {
      bad(() => layer.forward(x, { isCausal: true }), 'InvalidArgument', /need srcMask if specifying the isCausal hint/);
      bad(() => layer.forward(x, { mask: x }), 'InvalidArgument', /unknown forward option 'mask'/);
      bad(() => layer.forward([1, 2]), 'InvalidArgument', /src must be a 2-D \(unbatched\) or 3-D Tensor/);
      bad(() => om.tidy(() => layer.forward(om.zeros([2, 3, 2, 4]))), 'InvalidArgument', /got 4-D/);
      bad(() => om.tidy(() => layer.forward(om.zeros([3, 2, 5]))), 'ShapeMismatch', /linear/);
    } finally {
      layer.dispose();
      x.dispose();
    }
  });

  test('traced (eval) with a symbolic batch, run in onnxruntime-web at three batch sizes', () => withTraced((keep) => {
    om.manualSeed(9);
    class Encoder extends nn.Module {
      constructor() {
        super();
        this.layer = new nn.TransformerEncoderLayer(16, 4, { dimFeedforward: 32, batchFirst: true, activation: 'gelu', normFirst: true });
        this.causal = om.ones([6, 6], { dtype: 'bool' }).triu(1);
      }

      forward(x) { return this.layer.forward(x, { srcMask: this.causal, isCausal: true }); }
    }
    const net = new Encoder().eval();
    const x = om.randn([3, 6, 16], { seed: 1 });
    const tm = om.trace(net, { x: [x, ['batch', null, null]] });
    keep(tm, { x }, net.forward(x), undefined, net);
    assert.deepEqual(tm.outputs[0].shape, ['batch', 6, 16]);
    const inits = tm.graph().initializers.map((i) => i.name);
    for (const k of ['layer.linear1.weight', 'layer.linear2.bias', 'layer.self_attn.out_proj.weight']) assert.ok(inits.includes(k), `${k} in [${inits}]`);
    assert.ok(inits.includes('layer.norm1.bias') && !inits.includes('layer.norm2.bias'),
      'the untrained norms\' equal biases (zeros) are stored once, under the first read (docs/tracing.md)');
    for (const [n, seed] of [[2, 2], [5, 3]]) {
      const other = om.randn([n, 6, 16], { seed });
      keep(tm, { x: other }, net.forward(other));
    }
    net.dispose();
  }));
});
