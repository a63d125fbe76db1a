// torchvision 0.14's MNASNet (models/mnasnet.py, the B1 variant) ported to om.nn: _InvertedResidual
// (InvertedResidual), _stack (stack), _round_to_multiple_of (roundToMultipleOf), _get_depths
// (getDepths) and MNASNet with torchvision's constructor arguments and field names (its state dicts
// load as they are), and the builders mnasnet0_5, mnasnet0_75, mnasnet1_0, mnasnet1_3.
//
//   const net = mnasnet0_5({ numClasses: 10 }).eval();
//
// Not ported: loading a version-1 checkpoint (torchvision's _load_from_state_dict swaps in the old
// stem for state dicts saved before 0.9). Weights start from om.nn's default initialisation.
import * as om from 'onemodel';
import { invalidConfig, optionsOf } from './_utils.mjs';

const nn = om.nn;

// The paper's TensorFlow BatchNorm decay 0.9997, as PyTorch's momentum (1 - decay).
const BN_MOMENTUM = 1 - 0.9997;

/** Expand (1x1), depthwise (kernelSize, stride), project (1x1), each with BatchNorm; a residual where the shape stays. */
export class InvertedResidual extends nn.Module {
  constructor(inCh, outCh, kernelSize, stride, expansionFactor, bnMomentum = 0.1) {
    super();
    if (stride !== 1 && stride !== 2) throw invalidConfig(`stride should be 1 or 2 instead of ${stride}`);
    if (kernelSize !== 3 && kernelSize !== 5) throw invalidConfig(`kernel_size should be 3 or 5 instead of ${kernelSize}`);
    const midCh = inCh * expansionFactor;
    this.applyResidual = inCh === outCh && stride === 1;
    this.layers = new nn.Sequential(
      // expand
      new nn.Conv2d(inCh, midCh, 1, { bias: false }),
      new nn.BatchNorm2d(midCh, { momentum: bnMomentum }),
      new nn.ReLU({ inplace: true }),
      // depthwise
      new nn.Conv2d(midCh, midCh, kernelSize, { padding: Math.floor(kernelSize / 2), stride, groups: midCh, bias: false }),
      new nn.BatchNorm2d(midCh, { momentum: bnMomentum }),
      new nn.ReLU({ inplace: true }),
      // project, with no activation after it
      new nn.Conv2d(midCh, outCh, 1, { bias: false }),
      new nn.BatchNorm2d(outCh, { momentum: bnMomentum }),
    );
  }

  forward(input) {
    return this.applyResidual ? this.layers.forward(input).add(input) : this.layers.forward(input);
  }
}

/** A Sequential of `repeats` inverted residuals, the first from inCh with the stride, the rest outCh to outCh. */
export function stack(inCh, outCh, kernelSize, stride, expFactor, repeats, bnMomentum) {
  if (repeats < 1) throw invalidConfig(`repeats should be >= 1, instead got ${repeats}`);
  const first = new InvertedResidual(inCh, outCh, kernelSize, stride, expFactor, bnMomentum);
  const remaining = [];
  for (let i = 1; i < repeats; i++) remaining.push(new InvertedResidual(outCh, outCh, kernelSize, 1, expFactor, bnMomentum));
  return new nn.Sequential(first, ...remaining);
}

/** val rounded to a multiple of divisor: up, unless that is no more than roundUpBias below val ((83, 8) -> 80, (84, 8) -> 88). */
export function roundToMultipleOf(val, divisor, roundUpBias = 0.9) {
  if (!(roundUpBias > 0.0 && roundUpBias < 1.0)) {
    throw invalidConfig(`round_up_bias should be greater than 0.0 and smaller than 1.0 instead of ${roundUpBias}`);
  }
  const newVal = Math.max(divisor, Math.floor(Math.trunc(val + divisor / 2) / divisor) * divisor);
  return newVal >= roundUpBias * val ? newVal : newVal + divisor;
}

/** The stages' widths scaled by alpha, as the reference MobileNet code scales them (preferring to round up). */
export function getDepths(alpha) {
  return [32, 16, 24, 40, 80, 96, 192, 320].map((depth) => roundToMultipleOf(depth * alpha, 8));
}

/**
 * torchvision's MNASNet(alpha, num_classes, dropout): new MNASNet(alpha, { numClasses = 1000, dropout = 0.2 }).
 * forward: [N, 3, H, W] -> [N, numClasses].
 */
export class MNASNet extends nn.Module {
  constructor(alpha, options) {
    super();
    const { numClasses = 1000, dropout = 0.2 } = optionsOf(options, 'MNASNet', ['numClasses', 'dropout']);
    if (!(alpha > 0.0)) throw invalidConfig(`alpha should be greater than 0.0 instead of ${alpha}`);
    this.alpha = alpha;
    this.numClasses = numClasses;
    const depths = getDepths(alpha);
    this.layers = new nn.Sequential(
      // stem: a strided convolution, then a depthwise separable one (no residual)
      new nn.Conv2d(3, depths[0], 3, { padding: 1, stride: 2, bias: false }),
      new nn.BatchNorm2d(depths[0], { momentum: BN_MOMENTUM }),
      new nn.ReLU({ inplace: true }),
      new nn.Conv2d(depths[0], depths[0], 3, { padding: 1, stride: 1, groups: depths[0], bias: false }),
      new nn.BatchNorm2d(depths[0], { momentum: BN_MOMENTUM }),
      new nn.ReLU({ inplace: true }),
      new nn.Conv2d(depths[0], depths[1], 1, { padding: 0, stride: 1, bias: false }),
      new nn.BatchNorm2d(depths[1], { momentum: BN_MOMENTUM }),
      // the stages
      stack(depths[1], depths[2], 3, 2, 3, 3, BN_MOMENTUM),
      stack(depths[2], depths[3], 5, 2, 3, 3, BN_MOMENTUM),
      stack(depths[3], depths[4], 5, 2, 6, 3, BN_MOMENTUM),
      stack(depths[4], depths[5], 3, 1, 6, 2, BN_MOMENTUM),
      stack(depths[5], depths[6], 5, 2, 6, 4, BN_MOMENTUM),
      stack(depths[6], depths[7], 3, 1, 6, 1, BN_MOMENTUM),
      // to the classifier's 1280 features
      new nn.Conv2d(depths[7], 1280, 1, { padding: 0, stride: 1, bias: false }),
      new nn.BatchNorm2d(1280, { momentum: BN_MOMENTUM }),
      new nn.ReLU({ inplace: true }),
    );
    this.classifier = new nn.Sequential(new nn.Dropout({ p: dropout, inplace: true }), new nn.Linear(1280, numClasses));
  }

  forward(x) {
    x = this.layers.forward(x);
    // global average pooling, H and W dropped
    x = x.mean([2, 3]);
    return this.classifier.forward(x);
  }
}

const builder = (alpha) => (options) => new MNASNet(alpha, options);

/** torchvision's mnasnet0_5 ... mnasnet1_3 (options: numClasses, dropout). */
export const mnasnet0_5 = builder(0.5);
export const mnasnet0_75 = builder(0.75);
export const mnasnet1_0 = builder(1.0);
export const mnasnet1_3 = builder(1.3);
