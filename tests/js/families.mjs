// The four model families of tests/js/fixtures/pytorch/families/ (written by
// tools/pytorch_reference.py from PyTorch), ported to om.nn as a user of onemodel would port the
// PyTorch code: the same module names (so loadStateDict takes PyTorch's state_dict as it is),
// sizes read off shapes (`const [B, T] = idx.shape`), the last step as `out.select(1, T - 1)`.
// Not a test file: tests/js/families.test.mjs (eager, at every fixture size) and
// tests/js/families-symbolic.test.mjs (one trace with symbolic axes, run at every size) use it.
//
//   rnn_classifier  RNNClassifier  Embedding -> LSTM (batchFirst) -> last step -> Linear
//   gpt             GPT            token + sliced position embeddings, two causal blocks, tied head
//   resnet          ResNet         the zoo's (examples/zoo/resnet.mjs): stride-2 blocks with a 1x1 downsample
//   unet            UNet           two levels down and up, ConvTranspose2d and bilinear Upsample, skips
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import * as resnetZoo from '../../examples/zoo/resnet.mjs';

const nn = om.nn;
const F = om.nn.functional;

/** The zoo's model file of the ResNet (its example and model are made at import; dispose them with disposeModelFile). */
export { resnetZoo };

/** Embedding -> LSTM -> the last time step -> Linear: int64 ids [B, T] -> logits [B, classes]. */
export class RNNClassifier extends nn.Module {
  constructor({ vocab = 15, embed = 6, hidden = 10, classes = 4 } = {}) {
    super();
    this.embedding = new nn.Embedding(vocab, embed);
    this.lstm = new nn.LSTM(embed, hidden, { batchFirst: true });
    this.fc = new nn.Linear(hidden, classes);
  }

  forward(idx) {
    return om.tidy(() => {
      const [out] = this.lstm.forward(this.embedding.forward(idx));
      const T = out.shape[1];
      return this.fc.forward(out.select(1, T - 1)); // PyTorch: out[:, out.shape[1] - 1]
    });
  }
}

/** nanoGPT's causal self-attention, written out; the mask is made from the length T of x. */
export class GPTAttention extends nn.Module {
  constructor(d, nHead, mask) {
    super();
    this.nHead = nHead;
    this.mask = mask; // 'tril': om.ones([T, T]).tril(); 'arange': from om.arange(T)
    this.c_attn = new nn.Linear(d, 3 * d);
    this.c_proj = new nn.Linear(d, d);
  }

  forward(x) {
    return om.tidy(() => {
      const [B, T, C] = x.shape;
      const hs = C / this.nHead;
      const [q, k, v] = this.c_attn.forward(x).split(C, 2).map((t) => t.view(B, T, this.nHead, hs).transpose(1, 2));
      let att = q.matmul(k.transpose(-2, -1)).mul(1 / Math.sqrt(hs));
      if (this.mask === 'tril') {
        att = att.maskedFill(om.ones([T, T]).tril().eq(0), -Infinity);
      } else {
        const i = om.arange(T);
        att = att.maskedFill(i.unsqueeze(0).gt(i.unsqueeze(1)), -Infinity);
      }
      const y = att.softmax(-1).matmul(v).transpose(1, 2).contiguous().view(B, T, C);
      return this.c_proj.forward(y);
    });
  }
}

export class GPTMLP extends nn.Module {
  constructor(d) {
    super();
    this.c_fc = new nn.Linear(d, 4 * d);
    this.gelu = new nn.GELU();
    this.c_proj = new nn.Linear(4 * d, d);
  }

  forward(x) {
    return om.tidy(() => this.c_proj.forward(this.gelu.forward(this.c_fc.forward(x))));
  }
}

export class GPTBlock extends nn.Module {
  constructor(d, nHead, mask) {
    super();
    this.ln_1 = new nn.LayerNorm(d);
    this.attn = new GPTAttention(d, nHead, mask);
    this.ln_2 = new nn.LayerNorm(d);
    this.mlp = new GPTMLP(d);
  }

  forward(x) {
    return om.tidy(() => {
      const h = x.add(this.attn.forward(this.ln_1.forward(x)));
      return h.add(this.mlp.forward(this.ln_2.forward(h)));
    });
  }
}

/** GPT-style decoder: ids [B, T] (int64, T <= blockSize) -> logits [B, T, vocab]. */
export class GPT extends nn.Module {
  constructor({ vocab = 20, blockSize = 32, d = 12, nHead = 3 } = {}) {
    super();
    this.wte = new nn.Embedding(vocab, d);
    this.wpe = new nn.Embedding(blockSize, d);
    this.h = new nn.ModuleList([new GPTBlock(d, nHead, 'tril'), new GPTBlock(d, nHead, 'arange')]);
    this.ln_f = new nn.LayerNorm(d);
    this.lm_head = new nn.Linear(d, vocab, { bias: false });
    this.lm_head.weight.dispose();
    this.lm_head.weight = this.wte.weight; // tied
  }

  forward(idx) {
    return om.tidy(() => {
      const [B, T] = idx.shape; // eslint-disable-line no-unused-vars
      let x = this.wte.forward(idx).add(this.wpe.weight.slice(0, 0, T)); // PyTorch: self.wpe.weight[:T]
      for (const block of this.h) x = block.forward(x);
      return this.lm_head.forward(this.ln_f.forward(x));
    });
  }
}

/** The zoo's ResNet (examples/zoo/resnet.mjs). */
export const { ResNet } = resnetZoo;

const convRelu = (cin, cout) => new nn.Sequential(new nn.Conv2d(cin, cout, 3, { padding: 1 }), new nn.ReLU());

/** A small UNet: x [B, cin, H, W] -> y [B, classes, H, W], H and W multiples of 4. */
export class UNet extends nn.Module {
  constructor({ cin = 1, c = 4, classes = 3 } = {}) {
    super();
    this.enc1 = convRelu(cin, c);
    this.enc2 = convRelu(c, 2 * c);
    this.pool = new nn.MaxPool2d(2);
    this.bottleneck = convRelu(2 * c, 4 * c);
    this.up2 = new nn.ConvTranspose2d(4 * c, 2 * c, 2, { stride: 2 });
    this.dec2 = convRelu(4 * c, 2 * c);
    this.up1 = new nn.Upsample({ scaleFactor: 2, mode: 'bilinear', alignCorners: false });
    this.dec1 = convRelu(3 * c, c);
    this.head = new nn.Conv2d(c, classes, 1);
  }

  forward(x) {
    return om.tidy(() => {
      const e1 = this.enc1.forward(x); // [B, c, H, W]
      const e2 = this.enc2.forward(this.pool.forward(e1)); // [B, 2c, H/2, W/2]
      const b = this.bottleneck.forward(this.pool.forward(e2)); // [B, 4c, H/4, W/4]
      const d2 = this.dec2.forward(om.cat([this.up2.forward(b), e2], 1)); // [B, 2c, H/2, W/2]
      const d1 = this.dec1.forward(om.cat([this.up1.forward(d2), e1], 1)); // [B, c, H, W]
      return this.head.forward(d1);
    });
  }
}

/** Each family: its om.nn model and the name of its one output. */
export const FAMILIES = {
  rnn_classifier: { build: () => new RNNClassifier(), output: 'logits' },
  gpt: { build: () => new GPT(), output: 'logits' },
  resnet: { build: () => new ResNet(), output: 'logits' },
  unet: { build: () => new UNet(), output: 'y' },
};

const DIR = new URL('./fixtures/pytorch/families/', import.meta.url);

/** The fixture of family `name` (the JSON tools/pytorch_reference.py wrote). */
export function loadFixture(name) {
  return JSON.parse(readFileSync(new URL(`${name}.json`, DIR), 'utf8'));
}

/** A fixture entry { shape, dtype, data } as a new Tensor. */
export function fromEntry(e) {
  const data = e.dtype === 'int64' ? e.data.map(BigInt) : e.data;
  return om.tensor(data, { dtype: e.dtype, shape: e.shape });
}

/** A case's inputs as { name: Tensor } (new tensors). */
export function caseInputs(c) {
  return Object.fromEntries(c.inputs.map((e) => [e.name, fromEntry(e)]));
}

/** A case's outputs as { name: Tensor } (new tensors). */
export function caseOutputs(c) {
  return Object.fromEntries(c.outputs.map((e) => [e.name, fromEntry(e)]));
}

/** `batch=2 seq=8`. */
export function sizesText(sizes) {
  return Object.entries(sizes).map(([k, v]) => `${k}=${v}`).join(' ');
}

/**
 * Builds family `name`, checks that its state-dict keys (in order), shapes and dtypes are
 * PyTorch's, loads the fixture's state_dict with loadStateDict and switches to eval mode.
 */
export function buildLoaded(name, fx) {
  const model = FAMILIES[name].build();
  try {
    const own = model.stateDict();
    assert.deepEqual(Object.keys(own), Object.keys(fx.state_dict), `${name}: state-dict keys (in order)`);
    for (const [k, e] of Object.entries(fx.state_dict)) {
      assert.deepEqual(own[k].shape, e.shape, `${name}: ${k}: shape`);
      assert.equal(own[k].dtype, e.dtype, `${name}: ${k}: dtype`);
    }
    const state = Object.fromEntries(Object.entries(fx.state_dict).map(([k, e]) => [k, fromEntry(e)]));
    try {
      assert.deepEqual(model.loadStateDict(state), { missingKeys: [], unexpectedKeys: [] });
    } finally {
      om.dispose(state);
    }
    return model.eval();
  } catch (e) {
    model.dispose();
    throw e;
  }
}

/** t against the fixture entry ref: shape, dtype, max |t - ref| <= 1e-5 * max(1, max |ref|). Returns the error. */
export function compare(t, ref, what) {
  assert.deepEqual(t.shape, ref.shape, `${what}: shape`);
  assert.equal(t.dtype, ref.dtype, `${what}: dtype`);
  const a = t.toArray();
  assert.equal(a.length, ref.data.length, `${what}: element count`);
  let err = 0;
  let scale = 1;
  for (let i = 0; i < a.length; i++) {
    err = Math.max(err, Math.abs(a[i] - ref.data[i]));
    scale = Math.max(scale, Math.abs(ref.data[i]));
  }
  assert.ok(err <= 1e-5 * scale, `${what}: max |ours - PyTorch| = ${err} > ${1e-5 * scale}`);
  return err;
}
