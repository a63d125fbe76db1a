// A torchvision ResNet port narrowed for tests: the architecture (every block, every name in the
// state dict) at a width small enough to trace, save and open in a page quickly.
import * as om from 'onemodel';
import { ResNet } from '../../examples/torchvision/resnet.mjs';

const { nn } = om;

/**
 * The port's ResNet with every width divided by div, as tools/torchvision_ports.py's NarrowResNet:
 * the port's own constructor and _makeLayer, with the stem and the head made again narrowed.
 */
export const narrowResNet = (div) => class NarrowResNet extends ResNet {
  constructor(block, layers, options) {
    super(block, layers, options);
    for (const m of [this.conv1, this.bn1, this.fc]) m.dispose();
    this.conv1 = new nn.Conv2d(3, 64 / div, 7, { stride: 2, padding: 3, bias: false });
    this.bn1 = new nn.BatchNorm2d(64 / div);
    this.fc = new nn.Linear(512 / div * block.expansion, options.numClasses);
  }

  _makeLayer(block, planes, blocks, stride, dilate) {
    if (planes === 64) this.inplanes = 64 / div; // the narrowed stem's width
    return super._makeLayer(block, planes / div, blocks, stride, dilate);
  }
};
