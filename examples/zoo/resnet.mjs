// Residual CNN: a conv-bn-relu stem, two basic blocks (conv-bn-relu-conv-bn + the skip, relu),
// adaptive average pooling and a Linear head, on 3x12x12 images of 5 classes. A model file
// (docs/demo.md). Training data: each class is a fixed random pattern, an image that plus noise.
import * as om from 'onemodel';

await om.ready();
om.manualSeed(2);
const nn = om.nn;

export class BasicBlock extends nn.Module {
  constructor(c) {
    super();
    this.conv1 = new nn.Conv2d(c, c, 3, { padding: 1, bias: false });
    this.bn1 = new nn.BatchNorm2d(c);
    this.conv2 = new nn.Conv2d(c, c, 3, { padding: 1, bias: false });
    this.bn2 = new nn.BatchNorm2d(c);
  }

  forward(x) {
    return om.tidy(() => {
      const h = this.bn1.forward(this.conv1.forward(x)).relu();
      return this.bn2.forward(this.conv2.forward(h)).add(x).relu();
    });
  }
}

export class ResNet extends nn.Module {
  constructor() {
    super();
    this.stem = new nn.Sequential(new nn.Conv2d(3, 8, 3, { padding: 1, bias: false }), new nn.BatchNorm2d(8), new nn.ReLU());
    this.layer1 = new nn.Sequential(new BasicBlock(8), new BasicBlock(8));
    this.pool = new nn.AdaptiveAvgPool2d([1, 1]);
    this.fc = new nn.Linear(8, 5);
  }

  forward(x) {
    return om.tidy(() => this.fc.forward(this.pool.forward(this.layer1.forward(this.stem.forward(x))).flatten(1)));
  }
}

export default {
  title: 'Residual CNN',
  model: new ResNet(),
  inputs: { x: [om.randn([3, 3, 12, 12], { seed: 1 }), ['batch', null, null, null]] },
  outputNames: ['logits'],
  train: {
    steps: 40,
    optimizer: (params) => new om.optim.Adam(params, { lr: 1e-2 }),
    batch: (step) => {
      const labels = om.rand([16], { seed: 2000 + step }).mul(5).long();
      const images = om.randn([5, 3, 12, 12], { seed: 98 }).indexSelect(0, labels);
      return { inputs: [images.add(om.randn([16, 3, 12, 12], { seed: 1000 + step }))], target: labels };
    },
    loss: (logits, labels) => om.nn.functional.crossEntropy(logits, labels),
  },
};
