// om.nn.TransformerDecoderLayer, TransformerEncoder, TransformerDecoder and Transformer: PyTorch's
// structure and state-dict keys (their outputs against PyTorch's own are in pytorch.test.mjs:
// decoder_layer, decoder_layer_norm_first, transformer), the forward against the computation
// written out with the submodules, the layers' copies, the causal mask, bad input as OmError, and
// traced (eval) with symbolic lengths and batch through onnxruntime-web and the Session.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { near, vals, memoryHooks, withTraced, throwsKind } from './helpers.mjs';

memoryHooks();
const nn = om.nn;
const attnKeys = (p) => ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias'].map((k) => `${p}.${k}`);
const pair = (p) => [`${p}.weight`, `${p}.bias`];

/** Every parameter from N(0, 0.5): outputs that depend on every one of them. */
function randomize(m, seed) {
  om.noGrad(() => m.parameters().forEach((p, i) => p.copy_(om.randn(p.shape, { seed: seed + i }).mul(0.5))));
  return m;
}

describe('nn.TransformerDecoderLayer, TransformerEncoder, TransformerDecoder, Transformer', () => {
  test('PyTorch\'s parameter names, in its order, and defaults', () => {
    om.manualSeed(1);
    const layer = new nn.TransformerDecoderLayer(8, 2, { dimFeedforward: 16 });
    const model = new nn.Transformer({ dModel: 8, nhead: 2, numEncoderLayers: 2, numDecoderLayers: 1, dimFeedforward: 16 });
    try {
      const layerKeys = [...attnKeys('self_attn'), ...attnKeys('multihead_attn'), ...pair('linear1'), ...pair('linear2'),
        ...pair('norm1'), ...pair('norm2'), ...pair('norm3')];
      assert.deepEqual(Object.keys(layer.stateDict()), layerKeys);
      assert.deepEqual(layer.linear1.weight.shape, [16, 8]);
      for (const name of ['dropout', 'dropout1', 'dropout2', 'dropout3']) assert.equal(layer[name].p, 0.1);
      assert.equal(layer.activation, 'relu');
      assert.equal(layer.normFirst, false);
      const enc = [...attnKeys('self_attn'), ...pair('linear1'), ...pair('linear2'), ...pair('norm1'), ...pair('norm2')];
      assert.deepEqual(Object.keys(model.stateDict()), [
        ...enc.map((k) => `encoder.layers.0.${k}`), ...enc.map((k) => `encoder.layers.1.${k}`), ...pair('encoder.norm'),
        ...layerKeys.map((k) => `decoder.layers.0.${k}`), ...pair('decoder.norm'),
      ]);
      assert.equal(model.encoder.numLayers, 2);
      assert.equal(model.dModel, 8);
      // Xavier-uniform matrices (PyTorch's _reset_parameters): within sqrt(6 / (fan_in + fan_out))
      const most = om.tidy(() => vals(model.decoder.layers.at(0).linear1.weight.abs().amax())[0]);
      assert.ok(most <= Math.sqrt(6 / 24) && most > 0.5 * Math.sqrt(6 / 24), `${most}`);
    } finally {
      layer.dispose();
      model.dispose();
    }
  });

  test('forward equals the computation written out (post-norm and normFirst, masks, unbatched)', () => om.tidy(() => {
    for (const opts of [{}, { normFirst: true, activation: 'gelu', batchFirst: true }]) {
      const layer = randomize(new nn.TransformerDecoderLayer(8, 4, { dimFeedforward: 12, ...opts }).eval(), 10);
      try {
        const [tgt, memory] = opts.batchFirst ? [om.randn([3, 5, 8], { seed: 2 }), om.randn([3, 4, 8], { seed: 3 })]
          : [om.randn([5, 3, 8], { seed: 2 }), om.randn([4, 3, 8], { seed: 3 })];
        const tgtMask = nn.Transformer.generateSquareSubsequentMask(5), memoryMask = om.randn([5, 4], { seed: 4 });
        const pad = om.tensor([[false, false, false, true], [false, false, false, false], [true, false, false, false]]);
        const sa = (x) => layer.self_attn.forward(x, x, x, { attnMask: tgtMask, needWeights: false })[0];
        const mha = (x) => layer.multihead_attn.forward(x, memory, memory, { attnMask: memoryMask, keyPaddingMask: pad, needWeights: false })[0];
        const ff = (x) => layer.linear2.forward(om.nn.functional[layer.activation](layer.linear1.forward(x)));
        let want;
        if (layer.normFirst) {
          const a = tgt.add(sa(layer.norm1.forward(tgt)));
          const b = a.add(mha(layer.norm2.forward(a)));
          want = b.add(ff(layer.norm3.forward(b)));
        } else {
          const a = layer.norm1.forward(tgt.add(sa(tgt)));
          const b = layer.norm2.forward(a.add(mha(a)));
          want = layer.norm3.forward(b.add(ff(b)));
        }
        const y = layer.forward(tgt, memory, { tgtMask, memoryMask, memoryKeyPaddingMask: pad, tgtIsCausal: true });
        near(vals(y), vals(want), 1e-6, JSON.stringify(opts));
        // unbatched [T, E], [S, E] is a batch of one
        const one = (t) => (opts.batchFirst ? t.select(0, 1) : t.select(1, 1));
        const y1 = layer.forward(one(tgt), one(memory), { tgtMask, memoryMask });
        const yb = layer.forward(tgt, memory, { tgtMask, memoryMask });
        near(vals(y1), vals(one(yb)), 1e-5, 'unbatched');
      } finally {
        layer.dispose();
      }
    }
  }));

  test('TransformerEncoder and TransformerDecoder: copies of the layer (its values, their own tensors), then the norm', () => om.tidy(() => {
    const layer = randomize(new nn.TransformerEncoderLayer(6, 2, { dimFeedforward: 10 }).eval(), 20);
    const enc = new nn.TransformerEncoder(layer, 3, { norm: new nn.LayerNorm([6]) });
    const dlayer = randomize(new nn.TransformerDecoderLayer(6, 3, { dimFeedforward: 10 }), 40);
    const dec = new nn.TransformerDecoder(dlayer, 2);
    try {
      assert.equal(enc.layers.length, 3);
      assert.equal(enc.layers.at(2).training, false); // the layer's mode
      assert.equal(dec.layers.at(1).training, true);
      for (const l of enc.layers) {
        assert.notEqual(l.linear1.weight, layer.linear1.weight);
        near(vals(l.linear1.weight), vals(layer.linear1.weight), 0);
      }
      om.noGrad(() => enc.layers.at(0).linear1.weight.mul_(2)); // the copies do not share storage
      near(vals(enc.layers.at(1).linear1.weight), vals(layer.linear1.weight), 0);
      const x = om.randn([4, 2, 6], { seed: 5 }), mask = nn.Transformer.generateSquareSubsequentMask(4);
      let h = x;
      for (const l of enc.layers) h = l.forward(h, { srcMask: mask });
      near(vals(enc.forward(x, { mask })), vals(enc.norm.forward(h)), 1e-6);
      dec.eval();
      const m = om.randn([3, 2, 6], { seed: 6 });
      near(vals(dec.forward(x, m)), vals(dec.layers.at(1).forward(dec.layers.at(0).forward(x, m), m)), 1e-6);
      assert.equal(dec.norm, null);
    } finally {
      for (const mod of [layer, enc, dlayer, dec]) mod.dispose();
    }
  }));

  test('Transformer: decoder(tgt, encoder(src)); generateSquareSubsequentMask', () => om.tidy(() => {
    const model = randomize(new nn.Transformer({ dModel: 8, nhead: 2, numEncoderLayers: 1, numDecoderLayers: 2, dimFeedforward: 12, batchFirst: true }), 60).eval();
    try {
      const src = om.randn([2, 5, 8], { seed: 7 }), tgt = om.randn([2, 3, 8], { seed: 8 });
      const tgtMask = nn.Transformer.generateSquareSubsequentMask(3), pad = om.tensor([[false, false, false, false, true], [false, false, false, false, false]]);
      const y = model.forward(src, tgt, { tgtMask, srcKeyPaddingMask: pad, memoryKeyPaddingMask: pad });
      const memory = model.encoder.forward(src, { srcKeyPaddingMask: pad });
      near(vals(y), vals(model.decoder.forward(tgt, memory, { tgtMask, memoryKeyPaddingMask: pad })), 1e-6);
      assert.deepEqual(y.shape, [2, 3, 8]);
    } finally {
      model.dispose();
    }
    const mask = nn.Transformer.generateSquareSubsequentMask(3);
    assert.equal(mask.dtype, 'float32');
    assert.deepEqual(vals(mask), [0, -Infinity, -Infinity, 0, 0, -Infinity, 0, 0, 0]);
    assert.deepEqual(nn.Transformer.generateSquareSubsequentMask(0).shape, [0, 0]);
  }));

  test('bad arguments are OmErrors naming the module', () => om.tidy(() => {
    const model = new nn.Transformer({ dModel: 4, nhead: 2, numEncoderLayers: 1, numDecoderLayers: 1, dimFeedforward: 4 });
    const layer = new nn.TransformerDecoderLayer(4, 2, { dimFeedforward: 4 });
    try {
      throwsKind(() => model.forward(om.zeros([3, 2, 4]), om.zeros([3, 1, 4])), 'InvalidArgument', /^Transformer: the batch number of src and tgt must be equal/);
      throwsKind(() => model.forward(om.zeros([3, 2, 4]), om.zeros([3, 2, 5])), 'InvalidArgument',
        /^Transformer: the feature number of src and tgt must be equal to dModel \(4\), got 4 and 5/);
      throwsKind(() => model.forward(om.zeros([3, 2, 4]), om.zeros([3, 2, 4]), { tgtMasks: null }), 'InvalidArgument', /^Transformer: unknown forward option 'tgtMasks'/);
      throwsKind(() => new nn.Transformer({ dModel: 4, nhead: 3 }), 'InvalidArgument', /^TransformerEncoderLayer: dModel must be divisible by nhead, got 4 and 3/);
      throwsKind(() => new nn.Transformer({ numLayers: 3 }), 'InvalidArgument', /^Transformer: unknown option 'numLayers'/);
      throwsKind(() => new nn.Transformer({ customEncoder: 3 }), 'InvalidArgument', /^Transformer: a custom encoder or decoder must be an om.nn.Module, got 3/);
      throwsKind(() => new nn.TransformerEncoder(layer, 2), 'InvalidArgument', /^TransformerEncoder: the layer must be an om.nn.TransformerEncoderLayer/);
      throwsKind(() => new nn.TransformerDecoder(layer, -1), 'InvalidArgument', /^TransformerDecoder: numLayers must be non-negative, got -1/);
      throwsKind(() => new nn.TransformerDecoder(layer, 1, { norm: 'ln' }), 'InvalidArgument', /^TransformerDecoder: norm must be an om.nn.Module or null, got a string \("ln"\)/);
      throwsKind(() => layer.forward(om.zeros([3, 2, 4]), om.zeros([2, 2, 2, 4])), 'InvalidArgument', /^TransformerDecoderLayer: memory must be a 2-D \(unbatched\) or 3-D Tensor, got 4-D/);
      throwsKind(() => layer.forward(om.zeros([3, 2, 4]), om.zeros([3, 2, 4]), { tgtIsCausal: true }), 'InvalidArgument',
        /need attnMask if specifying the isCausal hint/);
      throwsKind(() => layer.forward(om.zeros([3, 2, 4]), om.zeros([3, 2, 4]), { srcMask: null }), 'InvalidArgument',
        /^TransformerDecoderLayer: unknown forward option 'srcMask'/);
      throwsKind(() => nn.Transformer.generateSquareSubsequentMask(-2), 'InvalidArgument', /^generateSquareSubsequentMask: sz must be non-negative, got -2/);
    } finally {
      model.dispose();
      layer.dispose();
    }
  }));
});

describe('traced (eval) with symbolic lengths and batch, in onnxruntime-web and the Session', () => {
  test('a Transformer with its causal mask made from the target\'s length', () => withTraced((keep, trace) => {
    const model = randomize(new nn.Transformer({ dModel: 8, nhead: 2, numEncoderLayers: 1, numDecoderLayers: 2, dimFeedforward: 12 }), 80).eval();
    try {
      const fn = (src, tgt) => model.forward(src, tgt, { tgtMask: nn.Transformer.generateSquareSubsequentMask(tgt.shape[0]) });
      trace(fn, { src: [om.randn([5, 2, 8], { seed: 9 }), ['S', 'N', null]], tgt: [om.randn([3, 2, 8], { seed: 10 }), ['T', 'N', null]] });
    } finally {
      model.dispose();
    }
  }));

  test('a normFirst batchFirst decoder layer with a memory key padding mask as an input', () => withTraced((keep, trace) => {
    const layer = randomize(new nn.TransformerDecoderLayer(6, 3, { dimFeedforward: 8, normFirst: true, batchFirst: true, activation: 'gelu' }), 100).eval();
    try {
      const fn = (tgt, memory, pad) => layer.forward(tgt, memory, { memoryKeyPaddingMask: pad });
      trace(fn, {
        tgt: [om.randn([2, 4, 6], { seed: 11 }), ['N', 'T', null]], memory: [om.randn([2, 3, 6], { seed: 12 }), ['N', null, null]],
        pad: [om.tensor([[false, false, true], [false, false, false]]), ['N', null]],
      });
    } finally {
      layer.dispose();
    }
  }));
});
