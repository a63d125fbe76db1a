// Models written as PyTorch code writes them, with no om.tidy and no dispose anywhere (every
// forward call frees its own intermediates): LeNet-5, and torchvision's DenseNet
// (models/densenet.py, 0.14) with om.nn's named Sequential, ModuleDict and addModule, so its
// state-dict keys are torchvision's ('features.denseblock1.denselayer1.norm1.weight', ...).
// Used by tests/js/memory-without-tidy.test.mjs, tests/js/blocks.test.mjs (densenet121's keys
// against torchvision's) and tools/memory_loops.mjs.
import * as om from 'onemodel';

const nn = om.nn;

/** LeNet-5 (conv 6, pool, conv 16, pool, 120, 84, 10) on [N, 1, 28, 28]. */
export class LeNet5 extends nn.Module {
  constructor() {
    super();
    this.conv1 = new nn.Conv2d(1, 6, 5, { padding: 2 });
    this.conv2 = new nn.Conv2d(6, 16, 5);
    this.pool = new nn.MaxPool2d(2);
    this.fc1 = new nn.Linear(16 * 5 * 5, 120);
    this.fc2 = new nn.Linear(120, 84);
    this.fc3 = new nn.Linear(84, 10);
  }

  forward(x) {
    let h = this.pool.forward(this.conv1.forward(x).relu());
    h = this.pool.forward(this.conv2.forward(h).relu()).flatten(1);
    return this.fc3.forward(this.fc2.forward(this.fc1.forward(h).relu()).relu());
  }
}

export class DenseLayer extends nn.Module {
  constructor(numInputFeatures, growthRate, bnSize) {
    super();
    this.norm1 = new nn.BatchNorm2d(numInputFeatures);
    this.relu1 = new nn.ReLU();
    this.conv1 = new nn.Conv2d(numInputFeatures, bnSize * growthRate, 1, { bias: false });
    this.norm2 = new nn.BatchNorm2d(bnSize * growthRate);
    this.relu2 = new nn.ReLU();
    this.conv2 = new nn.Conv2d(bnSize * growthRate, growthRate, 3, { padding: 1, bias: false });
  }

  /** The previous features (a list, as the block passes them) -> growthRate new channels. */
  forward(prevFeatures) {
    const bottleneck = this.conv1.forward(this.relu1.forward(this.norm1.forward(om.cat(prevFeatures, 1))));
    return this.conv2.forward(this.relu2.forward(this.norm2.forward(bottleneck)));
  }
}

export class DenseBlock extends nn.ModuleDict {
  constructor(numLayers, numInputFeatures, bnSize, growthRate) {
    super();
    for (let i = 0; i < numLayers; i++) {
      this.addModule(`denselayer${i + 1}`, new DenseLayer(numInputFeatures + i * growthRate, growthRate, bnSize));
    }
  }

  forward(initFeatures) {
    const features = [initFeatures];
    for (const [, layer] of this.entries()) features.push(layer.forward(features));
    return om.cat(features, 1);
  }
}

export class Transition extends nn.Sequential {
  constructor(numInputFeatures, numOutputFeatures) {
    super();
    this.norm = new nn.BatchNorm2d(numInputFeatures);
    this.relu = new nn.ReLU();
    this.conv = new nn.Conv2d(numInputFeatures, numOutputFeatures, 1, { bias: false });
    this.pool = new nn.AvgPool2d(2, { stride: 2 });
  }
}

export class DenseNet extends nn.Module {
  constructor({ growthRate = 32, blockConfig = [6, 12, 24, 16], numInitFeatures = 64, bnSize = 4, numClasses = 1000 } = {}) {
    super();
    this.features = new nn.Sequential(new Map([
      ['conv0', new nn.Conv2d(3, numInitFeatures, 7, { stride: 2, padding: 3, bias: false })],
      ['norm0', new nn.BatchNorm2d(numInitFeatures)],
      ['relu0', new nn.ReLU()],
      ['pool0', new nn.MaxPool2d(3, { stride: 2, padding: 1 })],
    ]));
    let numFeatures = numInitFeatures;
    blockConfig.forEach((numLayers, i) => {
      this.features.addModule(`denseblock${i + 1}`, new DenseBlock(numLayers, numFeatures, bnSize, growthRate));
      numFeatures += numLayers * growthRate;
      if (i !== blockConfig.length - 1) {
        this.features.addModule(`transition${i + 1}`, new Transition(numFeatures, Math.floor(numFeatures / 2)));
        numFeatures = Math.floor(numFeatures / 2);
      }
    });
    this.features.addModule('norm5', new nn.BatchNorm2d(numFeatures));
    this.classifier = new nn.Linear(numFeatures, numClasses);
  }

  forward(x) {
    const out = nn.functional.adaptiveAvgPool2d(this.features.forward(x).relu(), [1, 1]);
    return this.classifier.forward(out.flatten(1));
  }
}

/** torchvision.models.densenet121's architecture (random weights). */
export const densenet121 = () => new DenseNet();
