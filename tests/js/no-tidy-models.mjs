// Models written as PyTorch code writes them, with no om.tidy and no dispose anywhere (every
// forward call frees its own intermediates): LeNet-5, and torchvision's DenseNet
// (examples/torchvision/densenet.mjs: om.nn's named Sequential, ModuleDict and addModule, so its
// state-dict keys are torchvision's ('features.denseblock1.denselayer1.norm1.weight', ...)).
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

// torchvision's DenseNet as examples/torchvision/densenet.mjs ports it (written without om.tidy too).
export { DenseNet, densenet121 } from '../../examples/torchvision/densenet.mjs';
