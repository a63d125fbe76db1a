// torchvision 0.14's ShuffleNetV2 (models/shufflenetv2.py) ported to om.nn: channelShuffle,
// InvertedResidual and ShuffleNetV2 with torchvision's constructor arguments and field names (its
// state dicts load as they are), and the builders shufflenet_v2_x0_5 ... x2_0.
//
//   const net = shufflenet_v2_x1_0({ numClasses: 10 }).eval();
//
// Weights start from om.nn's default initialisation.
import * as om from 'onemodel';
import { invalidConfig, makeLayer, optionsOf } from './_utils.mjs';

const nn = om.nn;

/** [N, C, H, W] with C = groups * k: the channels reordered so that each group's k interleave. */
export function channelShuffle(x, groups) {
  const [batchsize, numChannels, height, width] = x.shape;
  const channelsPerGroup = Math.floor(numChannels / groups);
  return x.view(batchsize, groups, channelsPerGroup, height, width).transpose(1, 2).contiguous().view(batchsize, -1, height, width);
}

/** A depthwise convolution (torchvision's InvertedResidual.depthwise_conv). */
function depthwiseConv(i, o, kernelSize, stride = 1, padding = 0, bias = false) {
  return new nn.Conv2d(i, o, kernelSize, { stride, padding, bias, groups: i });
}

/** ShuffleNetV2's unit: half the channels through branch2 (stride 1), or both branches on all of them (stride 2), then a shuffle. */
export class InvertedResidual extends nn.Module {
  constructor(inp, oup, stride) {
    super();
    if (!(stride >= 1 && stride <= 3)) throw invalidConfig('illegal stride value');
    this.stride = stride;
    const branchFeatures = Math.floor(oup / 2);
    if (stride === 1 && inp !== branchFeatures << 1) {
      throw invalidConfig(`Invalid combination of stride ${stride}, inp ${inp} and oup ${oup} values. If stride == 1 then inp should be equal to oup // 2 << 1.`);
    }
    this.branch1 = stride > 1
      ? new nn.Sequential(
        depthwiseConv(inp, inp, 3, stride, 1), new nn.BatchNorm2d(inp),
        new nn.Conv2d(inp, branchFeatures, 1, { bias: false }), new nn.BatchNorm2d(branchFeatures), new nn.ReLU())
      : new nn.Sequential();
    this.branch2 = new nn.Sequential(
      new nn.Conv2d(stride > 1 ? inp : branchFeatures, branchFeatures, 1, { bias: false }), new nn.BatchNorm2d(branchFeatures), new nn.ReLU(),
      depthwiseConv(branchFeatures, branchFeatures, 3, stride, 1), new nn.BatchNorm2d(branchFeatures),
      new nn.Conv2d(branchFeatures, branchFeatures, 1, { bias: false }), new nn.BatchNorm2d(branchFeatures), new nn.ReLU(),
    );
  }

  forward(x) {
    let out;
    if (this.stride === 1) {
      const [x1, x2] = x.chunk(2, 1);
      out = om.cat([x1, this.branch2.forward(x2)], 1);
    } else {
      out = om.cat([this.branch1.forward(x), this.branch2.forward(x)], 1);
    }
    return channelShuffle(out, 2);
  }
}

/**
 * torchvision's ShuffleNetV2(stages_repeats, stages_out_channels, num_classes, inverted_residual):
 * new ShuffleNetV2(stagesRepeats, stagesOutChannels, { numClasses = 1000, invertedResidual = InvertedResidual }).
 */
export class ShuffleNetV2 extends nn.Module {
  constructor(stagesRepeats, stagesOutChannels, options) {
    super();
    const o = optionsOf(options, 'ShuffleNetV2', ['numClasses', 'invertedResidual']);
    const { numClasses = 1000 } = o;
    const invertedResidual = o.invertedResidual ?? InvertedResidual;
    if (stagesRepeats.length !== 3) throw invalidConfig('expected stages_repeats as list of 3 positive ints');
    if (stagesOutChannels.length !== 5) throw invalidConfig('expected stages_out_channels as list of 5 positive ints');
    this._stageOutChannels = stagesOutChannels;
    let inputChannels = 3;
    let outputChannels = stagesOutChannels[0];
    this.conv1 = new nn.Sequential(
      new nn.Conv2d(inputChannels, outputChannels, 3, { stride: 2, padding: 1, bias: false }), new nn.BatchNorm2d(outputChannels), new nn.ReLU());
    inputChannels = outputChannels;
    this.maxpool = new nn.MaxPool2d(3, { stride: 2, padding: 1 });
    [2, 3, 4].forEach((stage, i) => {
      outputChannels = stagesOutChannels[i + 1];
      const seq = [makeLayer(invertedResidual, inputChannels, outputChannels, 2)];
      for (let r = 0; r < stagesRepeats[i] - 1; r++) seq.push(makeLayer(invertedResidual, outputChannels, outputChannels, 1));
      this.addModule(`stage${stage}`, new nn.Sequential(...seq));
      inputChannels = outputChannels;
    });
    outputChannels = stagesOutChannels[stagesOutChannels.length - 1];
    this.conv5 = new nn.Sequential(
      new nn.Conv2d(inputChannels, outputChannels, 1, { bias: false }), new nn.BatchNorm2d(outputChannels), new nn.ReLU());
    this.fc = new nn.Linear(outputChannels, numClasses);
  }

  forward(x) {
    let h = this.maxpool.forward(this.conv1.forward(x));
    h = this.conv5.forward(this.stage4.forward(this.stage3.forward(this.stage2.forward(h))));
    return this.fc.forward(h.mean([2, 3])); // globalpool
  }
}

/** torchvision's builders: the stages' repeats [4, 8, 4] at each width; options as ShuffleNetV2's. */
const builder = (channels) => (options) => new ShuffleNetV2([4, 8, 4], channels, options);

export const shufflenet_v2_x0_5 = builder([24, 48, 96, 192, 1024]);
export const shufflenet_v2_x1_0 = builder([24, 116, 232, 464, 1024]);
export const shufflenet_v2_x1_5 = builder([24, 176, 352, 704, 1024]);
export const shufflenet_v2_x2_0 = builder([24, 244, 488, 976, 2048]);
