// torchvision 0.14's DenseNet (models/densenet.py) ported to om.nn: DenseLayer (_DenseLayer),
// DenseBlock (_DenseBlock, an nn.ModuleDict), Transition (_Transition, an nn.Sequential) and
// DenseNet, whose `features` is an nn.Sequential of named children (torchvision's
// nn.Sequential(OrderedDict(...)) and add_module), so the state-dict keys are torchvision's
// ('features.denseblock1.denselayer1.norm1.weight', ...); the builders densenet121 ... densenet201;
// and legacyStateDict, torchvision's _load_state_dict key renaming for its old checkpoints.
//
//   const net = densenet121({ numClasses: 10 }).eval();
//   net.loadStateDict(om.safetensors.load(bytes).tensors);
//
// Weights start from om.nn's default initialisation, not torchvision's kaiming scheme.
import * as om from 'onemodel';
import { optionsOf } from './_utils.mjs';

const nn = om.nn;
const F = nn.functional;

/**
 * torchvision's _DenseLayer(num_input_features, growth_rate, bn_size, drop_rate, memory_efficient):
 * BatchNorm, ReLU, a 1x1 convolution to bnSize * growthRate channels, BatchNorm, ReLU, a 3x3 one
 * to growthRate. memoryEfficient is kept and changes nothing: torchvision recomputes the
 * bottleneck in backward (torch.utils.checkpoint) to save memory, with the same numbers.
 */
export class DenseLayer extends nn.Module {
  constructor(numInputFeatures, growthRate, bnSize, dropRate, memoryEfficient = false) {
    super();
    this.norm1 = new nn.BatchNorm2d(numInputFeatures);
    this.relu1 = new nn.ReLU(true);
    this.conv1 = new nn.Conv2d(numInputFeatures, bnSize * growthRate, 1, { stride: 1, bias: false });
    this.norm2 = new nn.BatchNorm2d(bnSize * growthRate);
    this.relu2 = new nn.ReLU(true);
    this.conv2 = new nn.Conv2d(bnSize * growthRate, growthRate, 3, { stride: 1, padding: 1, bias: false });
    this.dropRate = dropRate;
    this.memoryEfficient = memoryEfficient;
  }

  /** The concatenated inputs through norm1, relu1 and conv1 (torchvision's bn_function). */
  bnFunction(inputs) {
    return this.conv1.forward(this.relu1.forward(this.norm1.forward(om.cat(inputs, 1))));
  }

  /** input: one Tensor or the list of the block's features so far -> growthRate new channels. */
  forward(input) {
    const prevFeatures = input instanceof om.Tensor ? [input] : input;
    const newFeatures = this.conv2.forward(this.relu2.forward(this.norm2.forward(this.bnFunction(prevFeatures))));
    return this.dropRate > 0 ? F.dropout(newFeatures, { p: this.dropRate, training: this.training }) : newFeatures;
  }
}

/** torchvision's _DenseBlock: numLayers DenseLayers named denselayer1, ..., each fed every feature map before it. */
export class DenseBlock extends nn.ModuleDict {
  constructor(numLayers, numInputFeatures, bnSize, growthRate, dropRate, memoryEfficient = false) {
    super();
    for (let i = 0; i < numLayers; i++) {
      this.addModule(`denselayer${i + 1}`, new DenseLayer(numInputFeatures + i * growthRate, growthRate, bnSize, dropRate, memoryEfficient));
    }
  }

  forward(initFeatures) {
    const features = [initFeatures];
    for (const [, layer] of this.entries()) features.push(layer.forward(features));
    return om.cat(features, 1);
  }
}

/** torchvision's _Transition: BatchNorm, ReLU, a 1x1 convolution, a 2x2 average pool. */
export class Transition extends nn.Sequential {
  constructor(numInputFeatures, numOutputFeatures) {
    super();
    this.norm = new nn.BatchNorm2d(numInputFeatures);
    this.relu = new nn.ReLU(true);
    this.conv = new nn.Conv2d(numInputFeatures, numOutputFeatures, 1, { stride: 1, bias: false });
    this.pool = new nn.AvgPool2d(2, { stride: 2 });
  }
}

/**
 * torchvision's DenseNet(growth_rate = 32, block_config = (6, 12, 24, 16), num_init_features = 64,
 * bn_size = 4, drop_rate = 0, num_classes = 1000, memory_efficient = False), its keyword arguments
 * as options { growthRate, blockConfig, numInitFeatures, bnSize, dropRate, numClasses,
 * memoryEfficient }. [N, 3, H, W] -> [N, numClasses], H and W from 13 (as PyTorch: below, a
 * transition's pool has nothing to pool).
 */
export class DenseNet extends nn.Module {
  constructor(options) {
    super();
    const {
      growthRate = 32, blockConfig = [6, 12, 24, 16], numInitFeatures = 64, bnSize = 4, dropRate = 0, numClasses = 1000, memoryEfficient = false,
    } = optionsOf(options, 'DenseNet', ['growthRate', 'blockConfig', 'numInitFeatures', 'bnSize', 'dropRate', 'numClasses', 'memoryEfficient']);
    this.features = new nn.Sequential(new Map([
      ['conv0', new nn.Conv2d(3, numInitFeatures, 7, { stride: 2, padding: 3, bias: false })],
      ['norm0', new nn.BatchNorm2d(numInitFeatures)],
      ['relu0', new nn.ReLU(true)],
      ['pool0', new nn.MaxPool2d(3, { stride: 2, padding: 1 })],
    ]));
    let numFeatures = numInitFeatures;
    blockConfig.forEach((numLayers, i) => {
      this.features.addModule(`denseblock${i + 1}`, new DenseBlock(numLayers, numFeatures, bnSize, growthRate, dropRate, memoryEfficient));
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
    const out = F.adaptiveAvgPool2d(F.relu(this.features.forward(x)), [1, 1]);
    return this.classifier.forward(out.flatten(1));
  }
}

// torchvision's _load_state_dict pattern: '.'s are no longer allowed in module names, but the
// DenseLayers of its old checkpoints (the files its weights download) have 'norm.1', 'conv.2', ...
const LEGACY = /^(.*denselayer\d+\.(?:norm|relu|conv))\.((?:[12])\.(?:weight|bias|running_mean|running_var))$/;

/**
 * torchvision's _load_state_dict renaming: a state dict with every old-style key ('...denselayer1.norm.1.weight')
 * renamed to today's ('...denselayer1.norm1.weight'), the others kept; the same tensors (borrowed, not
 * copied). Needed only for a file converted from torchvision's downloaded DenseNet checkpoint as it
 * is; the state_dict() of a torchvision model has today's keys already (torchvision renamed them
 * when it loaded the file).
 */
export function legacyStateDict(stateDict) {
  return Object.fromEntries(Object.entries(stateDict).map(([key, t]) => {
    const m = LEGACY.exec(key);
    return [m ? m[1] + m[2] : key, t];
  }));
}

/** torchvision's _densenet: a builder of DenseNet at these sizes; options { numClasses, dropRate, memoryEfficient, bnSize }. */
const densenet = (who, growthRate, blockConfig, numInitFeatures) => (options) =>
  new DenseNet({ ...optionsOf(options, who, ['numClasses', 'dropRate', 'memoryEfficient', 'bnSize']), growthRate, blockConfig, numInitFeatures });

export const densenet121 = densenet('densenet121', 32, [6, 12, 24, 16], 64);
export const densenet161 = densenet('densenet161', 48, [6, 12, 36, 24], 96);
export const densenet169 = densenet('densenet169', 32, [6, 12, 32, 32], 64);
export const densenet201 = densenet('densenet201', 32, [6, 12, 48, 32], 64);
