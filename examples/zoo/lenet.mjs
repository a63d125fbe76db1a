// LeNet-style CNN with BatchNorm: conv-bn-relu-pool twice, then three Linear layers, on 28x28
// one-channel images of 10 classes. A model file (docs/demo.md).
// Training data: each class is a fixed random pattern; an image is its class's pattern plus noise.
import * as om from 'onemodel';

await om.ready();
om.manualSeed(1);
const nn = om.nn;

export class LeNet extends nn.Module {
  constructor() {
    super();
    this.conv1 = new nn.Conv2d(1, 6, 5, { padding: 2 });
    this.bn1 = new nn.BatchNorm2d(6);
    this.pool = new nn.MaxPool2d(2);
    this.conv2 = new nn.Conv2d(6, 16, 5);
    this.bn2 = new nn.BatchNorm2d(16);
    this.fc1 = new nn.Linear(16 * 5 * 5, 120);
    this.fc2 = new nn.Linear(120, 84);
    this.fc3 = new nn.Linear(84, 10);
  }

  forward(x) {
    return om.tidy(() => {
      let h = this.pool.forward(this.bn1.forward(this.conv1.forward(x)).relu());
      h = this.pool.forward(this.bn2.forward(this.conv2.forward(h)).relu());
      h = h.flatten(1);
      return this.fc3.forward(this.fc2.forward(this.fc1.forward(h).relu()).relu());
    });
  }
}

/** 16 images [16, 1, 28, 28] and their classes [16] (int64). */
function batch(step) {
  const labels = om.rand([16], { seed: 2000 + step }).mul(10).long();
  const patterns = om.randn([10, 1, 28, 28], { seed: 99 }); // the same every step
  const noise = om.randn([16, 1, 28, 28], { seed: 1000 + step });
  return { inputs: [patterns.indexSelect(0, labels).add(noise)], target: labels };
}

export default {
  title: 'LeNet-style CNN (BatchNorm)',
  model: new LeNet(),
  inputs: { x: [om.randn([4, 1, 28, 28], { seed: 1 }), ['batch', null, null, null]] },
  outputNames: ['logits'],
  train: {
    steps: 30,
    optimizer: (params) => new om.optim.Adam(params, { lr: 3e-3 }),
    batch,
    loss: (logits, labels) => om.nn.functional.crossEntropy(logits, labels),
  },
};
