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
//   mobilenet       MobileNet      torchvision's MobileNetV2 / V3 blocks (ReLU6, Hardswish, squeeze-excitation
//                                  with Hardsigmoid, depthwise convs), Conv2d(padding 'same') of an even kernel
//   gpt2            GPT2           Hugging Face's GPT-2 as it is written: Conv1D by addmm, gelu_new written out,
//                                  q, k, v by split(n) / split([n, n, n]) / chunk(3), a bool tril buffer, where / maskedFill
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

/** torchvision's Conv2dNormActivation: Conv2d (no bias), BatchNorm2d, then the activation unless null. */
class ConvBNAct extends nn.Sequential {
  constructor(cin, cout, { k = 3, stride = 1, groups = 1, act = nn.ReLU6 } = {}) {
    const layers = [new nn.Conv2d(cin, cout, k, { stride, padding: Math.floor((k - 1) / 2), groups, bias: false }), new nn.BatchNorm2d(cout)];
    if (act) layers.push(new act({ inplace: true })); // eslint-disable-line new-cap
    super(...layers);
  }
}

/** torchvision's MobileNetV2 InvertedResidual. */
class InvertedResidualV2 extends nn.Module {
  constructor(inp, oup, stride, expandRatio) {
    super();
    const hidden = Math.round(inp * expandRatio);
    this.useResConnect = stride === 1 && inp === oup;
    const layers = [];
    if (expandRatio !== 1) layers.push(new ConvBNAct(inp, hidden, { k: 1 }));
    layers.push(new ConvBNAct(hidden, hidden, { stride, groups: hidden }),
      new nn.Conv2d(hidden, oup, 1, { stride: 1, padding: 0, bias: false }), new nn.BatchNorm2d(oup));
    this.conv = new nn.Sequential(...layers);
  }

  forward(x) {
    return this.useResConnect ? om.tidy(() => x.add(this.conv.forward(x))) : this.conv.forward(x);
  }
}

/** torchvision.ops.SqueezeExcitation with MobileNetV3's Hardsigmoid gate. */
class SqueezeExcitation extends nn.Module {
  constructor(inputChannels, squeezeChannels) {
    super();
    this.avgpool = new nn.AdaptiveAvgPool2d(1);
    this.fc1 = new nn.Conv2d(inputChannels, squeezeChannels, 1);
    this.fc2 = new nn.Conv2d(squeezeChannels, inputChannels, 1);
    this.activation = new nn.ReLU();
    this.scale_activation = new nn.Hardsigmoid();
  }

  scale(input) {
    return om.tidy(() => this.scale_activation.forward(this.fc2.forward(this.activation.forward(this.fc1.forward(this.avgpool.forward(input))))));
  }

  forward(input) {
    return om.tidy(() => this.scale(input).mul(input));
  }
}

/** torchvision's MobileNetV3 InvertedResidual (result += input where the shape is kept). */
class InvertedResidualV3 extends nn.Module {
  constructor(cin, k, expanded, cout, squeeze) {
    super();
    this.useResConnect = cin === cout;
    this.block = new nn.Sequential(new ConvBNAct(cin, expanded, { k: 1, act: nn.Hardswish }),
      new ConvBNAct(expanded, expanded, { k, groups: expanded, act: nn.Hardswish }),
      new SqueezeExcitation(expanded, squeeze), new ConvBNAct(expanded, cout, { k: 1, act: null }));
  }

  forward(input) {
    return om.tidy(() => {
      const result = this.block.forward(input);
      return this.useResConnect ? result.add(input) : result;
    });
  }
}

/** A small MobileNet from torchvision's blocks: x [B, 3, H, W] -> logits [B, classes]. */
export class MobileNet extends nn.Module {
  constructor({ classes = 5 } = {}) {
    super();
    this.features = new nn.Sequential(new ConvBNAct(3, 8, { stride: 2 }), new InvertedResidualV2(8, 8, 1, 2),
      new InvertedResidualV2(8, 12, 2, 3), new InvertedResidualV3(12, 5, 24, 12, 8));
    this.mix = new nn.Conv2d(12, 16, 2, { padding: 'same', bias: false }); // PyTorch pads the odd extra at the end
    this.relu6 = new nn.ReLU6();
    this.avgpool = new nn.AdaptiveAvgPool2d(1);
    this.flatten = new nn.Flatten();
    this.classifier = new nn.Sequential(new nn.Linear(16, 20), new nn.Hardswish({ inplace: true }), new nn.Dropout({ p: 0.2, inplace: true }),
      new nn.Identity(), new nn.Linear(20, classes));
  }

  forward(x) {
    return om.tidy(() => {
      const h = this.relu6.forward(this.mix.forward(this.features.forward(x)));
      return this.classifier.forward(this.flatten.forward(this.avgpool.forward(h)));
    });
  }
}

/** Hugging Face's GPT-2 Conv1D: weight [nx, nf] (a Linear's transposed), x @ weight + bias by addmm. */
class Conv1D extends nn.Module {
  constructor(nf, nx) {
    super();
    this.nf = nf;
    this.weight = om.tidy(() => om.randn([nx, nf]).mul(0.02)); // nn.init.normal_(std=0.02)
    this.weight.requiresGrad = true;
    this.bias = om.zeros([nf]);
    this.bias.requiresGrad = true;
  }

  forward(x) {
    return om.tidy(() => {
      const sizeOut = [...x.shape.slice(0, -1), this.nf]; // x.size()[:-1] + (self.nf,)
      return om.addmm(this.bias, x.view(-1, x.shape.at(-1)), this.weight).view(...sizeOut);
    });
  }
}

/** Hugging Face's gelu_new, written out: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). */
class NewGELUActivation extends nn.Module {
  forward(input) {
    return om.tidy(() => input.mul(0.5).mul(input.pow(3).mul(0.044715).add(input).mul(Math.sqrt(2 / Math.PI)).tanh().add(1)));
  }
}

/** Hugging Face's GPT2Attention (no cache); style: how q, k, v are split and the mask applied
 *  ('hf', 'sizes', 'chunk': tools/pytorch_reference.py's GPT2Attention). */
class GPT2Attention extends nn.Module {
  constructor(d, nHead, maxPositions, style) {
    super();
    this.registerBuffer('bias', om.tidy(() => om.tril(om.ones([maxPositions, maxPositions], { dtype: 'bool' })).view(1, 1, maxPositions, maxPositions)));
    this.numHeads = nHead;
    this.headDim = d / nHead;
    this.splitSize = d;
    this.style = style;
    this.c_attn = new Conv1D(3 * d, d);
    this.c_proj = new Conv1D(d, d);
    this.attn_dropout = new nn.Dropout(0.1);
    this.resid_dropout = new nn.Dropout(0.1);
  }

  splitHeads(tensor, numHeads, headSize) {
    return om.tidy(() => tensor.view(...tensor.shape.slice(0, -1), numHeads, headSize).permute(0, 2, 1, 3));
  }

  mergeHeads(tensor, numHeads, headSize) {
    return om.tidy(() => {
      const t = tensor.permute(0, 2, 1, 3).contiguous();
      return t.view(...t.shape.slice(0, -2), numHeads * headSize);
    });
  }

  attn(query, key, value) {
    return om.tidy(() => {
      let w = query.matmul(key.transpose(-1, -2)).div(om.full([], value.shape.at(-1) ** 0.5));
      const [ql, kl] = [query.shape.at(-2), key.shape.at(-2)];
      const causalMask = this.bias.slice(2, kl - ql, kl).slice(3, 0, kl); // self.bias[:, :, kl - ql:kl, :kl]
      if (this.style === 'hf') {
        w = om.where(causalMask, w, om.full([], -3.4028234663852886e38)); // torch.finfo(float32).min
      } else if (this.style === 'sizes') {
        w = w.maskedFill(causalMask.logicalNot(), -Infinity);
      } else {
        w = w.maskedFill(om.tril(om.ones([kl, kl])).eq(0), -Infinity);
      }
      w = this.attn_dropout.forward(F.softmax(w, -1).to(value.dtype));
      return w.matmul(value);
    });
  }

  forward(hiddenStates) {
    return om.tidy(() => {
      const qkv = this.c_attn.forward(hiddenStates);
      const parts = this.style === 'hf' ? qkv.split(this.splitSize, 2)
        : this.style === 'sizes' ? qkv.split([this.splitSize, this.splitSize, this.splitSize], 2) : qkv.chunk(3, -1);
      const [q, k, v] = parts.map((t) => this.splitHeads(t, this.numHeads, this.headDim));
      const out = this.mergeHeads(this.attn(q, k, v), this.numHeads, this.headDim);
      return this.resid_dropout.forward(this.c_proj.forward(out));
    });
  }
}

class GPT2MLP extends nn.Module {
  constructor(intermediateSize, d) {
    super();
    this.c_fc = new Conv1D(intermediateSize, d);
    this.c_proj = new Conv1D(d, intermediateSize);
    this.act = new NewGELUActivation();
    this.dropout = new nn.Dropout(0.1);
  }

  forward(h) {
    return om.tidy(() => this.dropout.forward(this.c_proj.forward(this.act.forward(this.c_fc.forward(h)))));
  }
}

class GPT2Block extends nn.Module {
  constructor(d, nHead, maxPositions, style) {
    super();
    this.ln_1 = new nn.LayerNorm(d, { eps: 1e-5 });
    this.attn = new GPT2Attention(d, nHead, maxPositions, style);
    this.ln_2 = new nn.LayerNorm(d, { eps: 1e-5 });
    this.mlp = new GPT2MLP(4 * d, d);
  }

  forward(hiddenStates) {
    return om.tidy(() => {
      const h = this.attn.forward(this.ln_1.forward(hiddenStates)).add(hiddenStates);
      return h.add(this.mlp.forward(this.ln_2.forward(h)));
    });
  }
}

/** Hugging Face's GPT2LMHeadModel without cache: input_ids [B, T] (int64) -> logits [B, T, vocab]. */
export class GPT2 extends nn.Module {
  constructor({ vocab = 16, nPositions = 16, d = 8, nHead = 2 } = {}) {
    super();
    this.wte = new nn.Embedding(vocab, d);
    this.wpe = new nn.Embedding(nPositions, d);
    this.drop = new nn.Dropout(0.1);
    this.h = new nn.ModuleList(['hf', 'sizes', 'chunk'].map((s) => new GPT2Block(d, nHead, nPositions, s)));
    this.ln_f = new nn.LayerNorm(d, { eps: 1e-5 });
    this.lm_head = new nn.Linear(d, vocab, { bias: false });
    this.lm_head.weight.dispose();
    this.lm_head.weight = this.wte.weight; // tied
  }

  forward(inputIds) {
    return om.tidy(() => {
      const inputShape = inputIds.shape;
      const ids = inputIds.view(-1, inputShape.at(-1));
      const positionIds = om.arange(0, inputShape.at(-1), { dtype: 'int64' }).unsqueeze(0);
      let h = this.drop.forward(this.wte.forward(ids).add(this.wpe.forward(positionIds)));
      for (const block of this.h) h = block.forward(h);
      h = this.ln_f.forward(h);
      return this.lm_head.forward(h.view(...inputShape, h.shape.at(-1)));
    });
  }
}

/** Each family: its om.nn model and the name of its one output. */
export const FAMILIES = {
  rnn_classifier: { build: () => new RNNClassifier(), output: 'logits' },
  gpt: { build: () => new GPT(), output: 'logits' },
  resnet: { build: () => new ResNet(), output: 'logits' },
  unet: { build: () => new UNet(), output: 'y' },
  mobilenet: { build: () => new MobileNet(), output: 'logits' },
  gpt2: { build: () => new GPT2(), output: 'logits' },
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
  const a = Array.from(t.toArray(), Number); // int64 (argsort's indices) as numbers, compared exactly below 2^53
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
