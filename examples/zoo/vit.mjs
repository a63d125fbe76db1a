// A small Vision Transformer in torchvision's shape (models/vision_transformer.py): 4x4 patches of
// a 3x16x16 image embedded by a strided convolution, a learned class token and position embedding,
// two pre-norm encoder layers (LayerNorm eps 1e-6, GELU MLP), the class token's final LayerNorm
// and a Linear head: [N, 3, 16, 16] -> [N, 5]. The port with torchvision's own classes, arguments
// and state-dict keys is examples/torchvision/vision_transformer.mjs (a model file imports only
// onemodel, so this one is written with om.nn's TransformerEncoderLayer instead).
// A model file (docs/demo.md), on 3x16x16 images of 5 classes. Training data: each class is a
// fixed random pattern, an image that plus noise.
import * as om from 'onemodel';

await om.ready();
om.manualSeed(3);
const nn = om.nn;

export class ViT extends nn.Module {
  constructor({ imageSize = 16, patchSize = 4, layers = 2, heads = 2, hidden = 32, mlp = 64, classes = 5 } = {}) {
    super();
    this.conv_proj = new nn.Conv2d(3, hidden, patchSize, { stride: patchSize });
    this.class_token = om.zeros([1, 1, hidden]);
    this.class_token.requiresGrad = true;
    const seqLength = (imageSize / patchSize) ** 2 + 1;
    this.pos_embedding = om.tidy(() => om.randn([1, seqLength, hidden]).mul(0.02));
    this.pos_embedding.requiresGrad = true;
    this.layers = new nn.Sequential(...Array.from({ length: layers }, () => new nn.TransformerEncoderLayer(hidden, heads, {
      dimFeedforward: mlp, dropout: 0, activation: 'gelu', layerNormEps: 1e-6, batchFirst: true, normFirst: true,
    })));
    this.ln = new nn.LayerNorm(hidden, { eps: 1e-6 });
    this.head = new nn.Linear(hidden, classes);
  }

  forward(x) {
    const n = x.shape[0];
    const patches = this.conv_proj.forward(x).flatten(2).permute(0, 2, 1); // [N, patches, hidden]
    const tokens = om.cat([this.class_token.expand(n, -1, -1), patches], 1).add(this.pos_embedding);
    return this.head.forward(this.ln.forward(this.layers.forward(tokens)).select(1, 0));
  }
}

export default {
  title: 'Vision Transformer (ViT)',
  model: new ViT(),
  inputs: { x: [om.randn([3, 3, 16, 16], { seed: 1 }), ['batch', null, null, null]] },
  outputNames: ['logits'],
  train: {
    steps: 40,
    optimizer: (params) => new om.optim.Adam(params, { lr: 3e-3 }),
    batch: (step) => {
      const labels = om.rand([16], { seed: 3000 + step }).mul(5).long();
      const images = om.randn([5, 3, 16, 16], { seed: 97 }).indexSelect(0, labels);
      return { inputs: [images.add(om.randn([16, 3, 16, 16], { seed: 4000 + step }))], target: labels };
    },
    loss: (logits, labels) => om.nn.functional.crossEntropy(logits, labels),
  },
};
