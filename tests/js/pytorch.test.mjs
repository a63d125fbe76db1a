// PyTorch parity: each fixture in tests/js/fixtures/pytorch/ (written by tools/pytorch_reference.py
// from PyTorch itself) holds a model's state dict, inputs and outputs. Here the same architecture is
// built from om.nn, loadStateDict() gets PyTorch's state dict with its keys exactly as PyTorch wrote
// them, and the outputs (for losses also the gradients w.r.t. the input) must match PyTorch's to
// within 1e-5 * max(1, max|ref|). Every traceable model is then traced and run in onnxruntime-web.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, withTraced, vals } from './helpers.mjs';

memoryHooks();
const nn = om.nn;
const DIR = new URL('./fixtures/pytorch/', import.meta.url);

/** nn.ReLU until the activation modules are merged (no parameters: only its index matters). */
class ReLU extends nn.Module {
  forward(x) { return x.relu(); }
}

/** fc -> ln -> bn -> gn, as Norms in tools/pytorch_reference.py. */
class Norms extends nn.Module {
  constructor() {
    super();
    this.fc = new nn.Linear(6, 8);
    this.ln = new nn.LayerNorm([8]);
    this.bn = new nn.BatchNorm1d(8);
    this.gn = new nn.GroupNorm(2, 8);
  }

  forward(x) { return om.tidy(() => this.gn.forward(this.bn.forward(this.ln.forward(this.fc.forward(x))))); }
}

/** CNN in tools/pytorch_reference.py (convolutions and pools with their edge cases). */
class CNN extends nn.Module {
  constructor(adaptive = [2, 3]) {
    super();
    this.conv1 = new nn.Conv2d(2, 4, 3, { padding: 1 });
    this.pool1 = new nn.MaxPool2d(3, { stride: 2, padding: 1, ceilMode: true });
    this.conv2 = new nn.Conv2d(4, 6, [3, 2], { stride: [1, 2], padding: [2, 1], dilation: [2, 1], groups: 2 });
    this.pool2 = new nn.AvgPool2d(3, { stride: 2, padding: 1, ceilMode: true, countIncludePad: true });
    this.pool3 = new nn.AdaptiveAvgPool2d(adaptive);
    this.fc = new nn.Linear(36, 3);
  }

  forward(x) {
    return om.tidy(() => {
      const h = this.pool1.forward(this.conv1.forward(x).relu());
      const p = this.pool3.forward(this.pool2.forward(this.conv2.forward(h).relu()));
      return this.fc.forward(p.reshape(p.shape[0], 36));
    });
  }
}

/** ConvMisc in tools/pytorch_reference.py. */
class ConvMisc extends nn.Module {
  constructor() {
    super();
    this.c1 = new nn.Conv1d(3, 4, 3, { stride: 2, padding: 1, dilation: 2 });
    this.ct = new nn.ConvTranspose2d(4, 6, [3, 2], { stride: 2, padding: 1, outputPadding: 1, groups: 2 });
    this.pool = new nn.AvgPool2d(2, { stride: 2, padding: 1, ceilMode: true, countIncludePad: false });
  }

  forward(x) {
    return om.tidy(() => {
      const y = this.ct.forward(this.c1.forward(x).relu().unsqueeze(2));
      return om.nn.functional.maxPool2d(this.pool.forward(y), 2, { stride: 1, dilation: [1, 2], ceilMode: true });
    });
  }
}

/** A fixture entry { shape, dtype, data } as a Tensor. */
function fromEntry(e) {
  const data = e.dtype === 'int64' ? e.data.map(BigInt) : e.data; // bool: JS booleans
  return om.tensor(data, { dtype: e.dtype, shape: e.shape });
}

/**
 * The om.nn equivalent of each fixture's model: { model, run(model, inputs) -> outputs in the
 * fixture's order (default: forward's results), train (run in training mode), traceable (default
 * true), grads (loss fixtures: the inputs whose gradients are outputs, after forward's) }.
 */
const MODELS = {
  mlp: () => ({ model: new nn.Sequential(new nn.Linear(4, 8), new ReLU(), new nn.Linear(8, 3)) }),

  cnn: () => ({ model: new CNN() }),

  // uneven adaptive cells (4 -> 3, 3 -> 2): traced as MatMuls of 0/1 cell matrices
  cnn_grad: () => ({ model: new CNN([3, 2]), train: true, run: (m, x) => [m.forward(x).pow(2).sum()], grads: ['x'] }),

  conv_misc: () => ({ model: new ConvMisc() }),

  norms: () => ({ model: new Norms() }),

  // training mode: the outputs are y and then bn's running statistics after the update
  norms_train: () => ({
    model: new Norms(), train: true, traceable: false,
    run: (m, x) => [m.forward(x), m.bn.running_mean, m.bn.running_var, m.bn.num_batches_tracked],
  }),

  lstm: () => {
    class LSTMHead extends nn.Module {
      constructor() {
        super();
        this.rnn = new nn.LSTM(5, 4, { numLayers: 2, bidirectional: true, batchFirst: true });
        this.head = new nn.Linear(8, 3);
      }

      forward(x) {
        return om.tidy(() => {
          const [out, [h, c]] = this.rnn.forward(x);
          return [this.head.forward(out.select(1, -1)), out, h, c];
        });
      }
    }
    return { model: new LSTMHead() };
  },

  gru: () => ({ model: new nn.GRU(3, 5, { numLayers: 2 }) }),

  gru_bi: () => ({ model: new nn.GRU(4, 3, { bidirectional: true, batchFirst: true }) }),

  lstm_unbatched: () => ({ model: new nn.LSTM(3, 4), run: (m, x, h0, c0) => { const [o, [h, c]] = m.forward(x, [h0, c0]); return [o, h, c]; } }),

  image: () => {
    class Image extends nn.Module {
      constructor() {
        super();
        this.bn = new nn.BatchNorm2d(3);
        this.up = new nn.Upsample({ scaleFactor: 2, mode: 'bilinear', alignCorners: false });
        this.ln = new nn.LayerNorm([6, 8]);
        this.soft = new nn.LogSoftmax(1);
      }

      forward(x) { return om.tidy(() => this.soft.forward(this.ln.forward(this.up.forward(this.bn.forward(x))))); }
    }
    return { model: new Image() };
  },

  embedding: () => {
    class EmbedClassifier extends nn.Module {
      constructor() {
        super();
        this.emb = new nn.Embedding(10, 6, { paddingIdx: 0 });
        this.fc = new nn.Linear(6, 4);
      }

      forward(ids) { return om.tidy(() => this.fc.forward(this.emb.forward(ids).mean(1))); }
    }
    return { model: new EmbedClassifier() };
  },

  mha: () => {
    // PyTorch's module itself (keys in_proj_weight, out_proj.weight, ...), called as self-attention
    class SelfAttention extends nn.MultiheadAttention {
      forward(x) { return super.forward(x, x, x); }
    }
    return { model: new SelfAttention(8, 2, { batchFirst: true }) };
  },

  mha_masked: () => {
    class CrossAttention extends nn.MultiheadAttention {
      forward(query, kv, mask) { return super.forward(query, kv, kv, { keyPaddingMask: mask, averageAttnWeights: false }); }
    }
    return { model: new CrossAttention(6, 3) };
  },

  // PyTorch's module itself (self_attn.in_proj_weight, linear1, norm1, ...), the masks as inputs
  encoder_layer: () => {
    class Layer extends nn.TransformerEncoderLayer {
      forward(src, mask, pad) { return super.forward(src, { srcMask: mask, srcKeyPaddingMask: pad }); }
    }
    return { model: new Layer(8, 2, { dimFeedforward: 16 }) };
  },

  encoder_layer_norm_first: () => {
    class Layer extends nn.TransformerEncoderLayer {
      forward(src, mask) { return super.forward(src, { srcMask: mask, isCausal: true }); }
    }
    return { model: new Layer(12, 3, { dimFeedforward: 20, activation: 'gelu', layerNormEps: 1e-6, batchFirst: true, normFirst: true }) };
  },

  decoder_layer: () => {
    class Layer extends nn.TransformerDecoderLayer {
      forward(tgt, memory, tgtMask, pad) { return super.forward(tgt, memory, { tgtMask, memoryKeyPaddingMask: pad }); }
    }
    return { model: new Layer(8, 2, { dimFeedforward: 16 }) };
  },

  decoder_layer_norm_first: () => {
    class Layer extends nn.TransformerDecoderLayer {
      forward(tgt, memory, memoryMask, pad) { return super.forward(tgt, memory, { memoryMask, tgtKeyPaddingMask: pad }); }
    }
    return { model: new Layer(12, 3, { dimFeedforward: 20, activation: 'gelu', layerNormEps: 1e-6, batchFirst: true, normFirst: true }) };
  },

  // nn.Transformer's encoder.layers.0..., encoder.norm, decoder.layers.1.multihead_attn..., decoder.norm
  transformer: () => {
    class Net extends nn.Transformer {
      forward(src, tgt, tgtMask, pad) { return super.forward(src, tgt, { tgtMask, srcKeyPaddingMask: pad, memoryKeyPaddingMask: pad }); }
    }
    return { model: new Net({ dModel: 8, nhead: 2, numEncoderLayers: 2, numDecoderLayers: 2, dimFeedforward: 16 }) };
  },

  cross_entropy: () => ({
    model: new nn.CrossEntropyLoss({ weight: om.zeros([4]), labelSmoothing: 0.1 }), traceable: false, grads: ['input'],
  }),

  cross_entropy_probs: () => ({
    model: new nn.CrossEntropyLoss({ labelSmoothing: 0.2, reduction: 'sum' }), traceable: false, grads: ['input'],
  }),

  nll: () => ({ model: new nn.NLLLoss({ weight: om.zeros([3]), ignoreIndex: 1 }), traceable: false, grads: ['input'] }),

  mse: () => ({ model: new nn.MSELoss(), grads: ['input'] }),

  ctc: () => {
    class CTCOnLogits extends nn.CTCLoss {
      forward(logits, targets, il, tl) { return om.tidy(() => super.forward(logits.logSoftmax(2), targets, il, tl)); }
    }
    return { model: new CTCOnLogits(), traceable: false, grads: ['logits'] };
  },
};

/** max |a - b| over flat arrays of the same length. */
function maxAbsDiff(a, b) {
  assert.equal(a.length, b.length, 'element count');
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(Number(a[i]) - Number(b[i])));
  return m;
}

/** Checks t against the fixture entry ref (shape, dtype, values within the tolerance); returns the error. */
function compare(t, ref, what) {
  assert.deepEqual(t.shape, ref.shape, `${what}: shape`);
  assert.equal(t.dtype, ref.dtype, `${what}: dtype`);
  const err = maxAbsDiff(t.toArray(), ref.data);
  const scale = Math.max(1, ...ref.data.map((v) => Math.abs(v)));
  assert.ok(err <= 1e-5 * scale, `${what}: max |ours - PyTorch| = ${err} > ${1e-5 * scale}`);
  return err;
}

const files = readdirSync(DIR).filter((f) => f.endsWith('.json')).sort();
const fixtures = Object.fromEntries(files.map((f) => [f.slice(0, -5), JSON.parse(readFileSync(new URL(f, DIR), 'utf8'))]));

describe('PyTorch fixtures: loadStateDict with PyTorch\'s keys reproduces its outputs', () => {
  test('every model of tools/pytorch_reference.py has a fixture and a builder here', () => {
    const expected = ['mlp', 'norms', 'norms_train', 'lstm', 'gru', 'embedding', 'mha', 'mha_masked',
      'gru_bi', 'lstm_unbatched', 'image', 'cross_entropy', 'cross_entropy_probs', 'nll', 'mse', 'ctc',
      'cnn', 'cnn_grad', 'conv_misc', 'encoder_layer', 'encoder_layer_norm_first', 'decoder_layer', 'decoder_layer_norm_first',
      'transformer'];
    for (const name of expected) {
      assert.ok(name in fixtures, `missing fixture ${name}.json (run python3 tools/pytorch_reference.py)`);
    }
    for (const name of Object.keys(fixtures)) assert.ok(name in MODELS, `no om.nn builder for fixture ${name}`);
  });

  for (const [name, fx] of Object.entries(fixtures)) {
    if (!(name in MODELS)) continue;
    test(`${name}: ${fx.model}`, (t) => withTraced((keep, trace) => {
      om.manualSeed(1);
      const { model, run = (m, ...xs) => m.forward(...xs), train = false, traceable = true, grads = [] } = MODELS[name]();
      try {
        // the state dict's keys and shapes match PyTorch's exactly, in PyTorch's order
        const own = model.stateDict();
        assert.deepEqual(Object.keys(own), Object.keys(fx.state_dict), 'state-dict keys (in order)');
        for (const [k, e] of Object.entries(fx.state_dict)) {
          assert.deepEqual(own[k].shape, e.shape, `${k}: shape`);
          assert.equal(own[k].dtype, e.dtype, `${k}: dtype`);
        }
        const state = Object.fromEntries(Object.entries(fx.state_dict).map(([k, e]) => [k, fromEntry(e)]));
        assert.deepEqual(model.loadStateDict(state), { missingKeys: [], unexpectedKeys: [] });
        model.train(train);

        const inputs = Object.fromEntries(fx.inputs.map((e) => [e.name, fromEntry(e)]));
        for (const g of grads) inputs[g].requiresGrad = true;
        let outs = run(model, ...Object.values(inputs));
        outs = outs instanceof om.Tensor ? [outs] : outs;
        if (grads.length) {
          outs[0].backward();
          outs = [...outs, ...grads.map((g) => inputs[g].grad)];
        }
        const checked = fx.outputs.filter((o) => !(name === 'ctc' && o.name === 'grad_log_probs'));
        assert.equal(outs.length, checked.length, 'output count');
        const errors = [];
        fx.outputs.forEach((ref, i) => {
          if (name === 'ctc' && ref.name === 'grad_log_probs') return; // checked below
          errors.push(`${ref.name} ${compare(outs[i], ref, `${name}.${ref.name}`).toExponential(2)}`);
        });
        if (name === 'ctc') {
          // PyTorch's ctc_loss gradient w.r.t. log_probs is its kernel's: the exact gradient plus
          // f_n * exp(log_probs) at t < input_lengths[n], f_n being sample n's weight in the loss
          // (1 / (N * target_lengths[n]) for 'mean'); that term cancels through log_softmax, as
          // grad_logits shows. Ours is the exact gradient, so ours + that term must be PyTorch's.
          const lp = om.noGrad(() => inputs.logits.logSoftmax(2));
          lp.requiresGrad = true;
          om.nn.functional.ctcLoss(lp, inputs.targets, inputs.input_lengths, inputs.target_lengths).backward();
          const [T, N] = lp.shape;
          const il = vals(inputs.input_lengths), tl = vals(inputs.target_lengths);
          const f = [];
          for (let s = 0; s < T; s++) for (let n = 0; n < N; n++) f.push(s < il[n] ? 1 / (N * tl[n]) : 0);
          const kernel = lp.grad.add(lp.detach().exp().mul(om.tensor(f, { shape: [T, N, 1] })));
          const ref = fx.outputs.find((o) => o.name === 'grad_log_probs');
          errors.push(`grad_log_probs (kernel form) ${compare(kernel, ref, 'ctc.grad_log_probs').toExponential(2)}`);
        }
        t.diagnostic(`${name}: max |ours - PyTorch|: ${errors.join(', ')}`);

        if (traceable) {
          const examples = Object.fromEntries(fx.inputs.map((e) => [e.name, fromEntry(e)]));
          // the model as run above, parameters named by their state-dict keys
          const traced = { forward: (...xs) => run(model, ...xs), stateDict: () => model.stateDict() };
          const tm = trace(traced, examples);
          // every float parameter and buffer is an initializer named by its PyTorch key (or, for a
          // slice baked at trace time such as MultiheadAttention's in_proj_weight, `<key>.view_<i>`)
          const inits = tm.graph().initializers.map((i) => i.name);
          for (const [k, e] of Object.entries(fx.state_dict)) {
            if (e.dtype !== 'float32') continue;
            assert.ok(inits.some((i) => i === k || i.startsWith(`${k}.view_`)), `initializer ${k} in [${inits}]`);
          }
        }
      } finally {
        model.dispose();
      }
    }));
  }

  test('the state dict as plain JSON values (flat arrays, the 0-d num_batches_tracked as a number) loads the same', () => {
    const fx = fixtures.norms;
    const model = new Norms();
    try {
      const plain = Object.fromEntries(Object.entries(fx.state_dict).map(([k, e]) => [k,
        e.shape.length === 0 ? e.data[0] : e.dtype === 'int64' ? BigInt64Array.from(e.data, BigInt) : new Float32Array(e.data)]));
      assert.equal(typeof plain['bn.num_batches_tracked'], 'number');
      model.loadStateDict(plain);
      for (const [k, t] of Object.entries(model.stateDict())) {
        assert.deepEqual(vals(t), fx.state_dict[k].data, k);
      }
      // a scalar for a parameter that is not 0-d is a shape mismatch, naming the key
      assert.throws(() => model.loadStateDict({ ...plain, 'fc.bias': 1 }),
        (e) => e instanceof om.OmError && e.kind === 'ShapeMismatch' && /size mismatch for fc\.bias: copying a param with shape \[\] from checkpoint, the shape in current model is \[8\]/.test(e.message));
    } finally {
      model.dispose();
    }
  });
});
