// Residual CNN in torchvision's shape: a conv-bn-relu stem, three stages of one basic block each
// (conv-bn-relu-conv-bn + the skip, relu); the second and third blocks have stride 2, their skip
// a 1x1 stride-2 conv + BatchNorm (the downsample branch) added to the 3x3 / stride 2 / padding 1
// main branch; then adaptive average pooling to 1x1 and a Linear head: [N, 3, H, W] -> [N, 5]
// at any H and W (odd ones too: 17 -> 9 -> 5). Its keys are PyTorch's for the same model
// (tools/pytorch_reference.py, ResNet; tests/js/families.test.mjs loads its state_dict).
// A model file (docs/demo.md), on 3x12x12 images of 5 classes. Training data: each class is a
// fixed random pattern, an image that plus noise.
import * as om from 'onemodel';

await om.ready();
om.manualSeed(2);
const nn = om.nn;

/** torchvision's BasicBlock: a downsample branch when the stride or the width changes. */
export class BasicBlock extends nn.Module {
  constructor(cin, cout = cin, stride = 1) {
    super();
    this.conv1 = new nn.Conv2d(cin, cout, 3, { stride, padding: 1, bias: false });
    this.bn1 = new nn.BatchNorm2d(cout);
    this.conv2 = new nn.Conv2d(cout, cout, 3, { padding: 1, bias: false });
    this.bn2 = new nn.BatchNorm2d(cout);
    this.downsample = stride !== 1 || cin !== cout
      ? new nn.Sequential(new nn.Conv2d(cin, cout, 1, { stride, bias: false }), new nn.BatchNorm2d(cout))
      : null;
  }

  forward(x) {
    return om.tidy(() => {
      const identity = this.downsample ? this.downsample.forward(x) : x;
      const h = this.bn1.forward(this.conv1.forward(x)).relu();
      return this.bn2.forward(this.conv2.forward(h)).add(identity).relu();
    });
  }
}

export class ResNet extends nn.Module {
  constructor(classes = 5) {
    super();
    this.stem = new nn.Sequential(new nn.Conv2d(3, 4, 3, { padding: 1, bias: false }), new nn.BatchNorm2d(4), new nn.ReLU());
    this.layer1 = new nn.Sequential(new BasicBlock(4, 4));
    this.layer2 = new nn.Sequential(new BasicBlock(4, 8, 2));
    this.layer3 = new nn.Sequential(new BasicBlock(8, 16, 2));
    this.pool = new nn.AdaptiveAvgPool2d([1, 1]);
    this.fc = new nn.Linear(16, classes);
  }

  forward(x) {
    return om.tidy(() => {
      const h = this.layer3.forward(this.layer2.forward(this.layer1.forward(this.stem.forward(x))));
      return this.fc.forward(this.pool.forward(h).flatten(1));
    });
  }
}

export default {
  title: 'Residual CNN',
  model: new ResNet(),
  inputs: { x: [om.randn([3, 3, 12, 12], { seed: 1 }), ['batch', null, 'height', 'width']] },
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
