// torchvision 0.14's RAFT optical flow (models/optical_flow/raft.py and optical_flow/_utils.py)
// ported to om.nn: the same classes with torchvision's constructor arguments and field names, so
// its state dicts load as they are (strict loadStateDict), and the builders raft_large, raft_small
// and raft (torchvision's `_raft`, every part's size an option).
//
//   import { raft_small } from './examples/torchvision/raft.mjs';
//   const net = raft_small().eval();
//   net.loadStateDict(om.safetensors.load(bytes).tensors);
//   const flows = net.forward(image1, image2, 12);   // [N, 3, H, W] each, H and W multiples of 8
//   const flow = flows.at(-1);                       // [N, 2, H, W]: the last of the 12 predictions
//
// forward returns every prediction of the unrolled updates, as upstream. A layer option (block,
// normLayer) is a Module class or a function returning a Module, as in om.nn's blocks; null is no
// norm. Weights start from om.nn's default initialisation, not torchvision's kaiming scheme.
import * as om from 'onemodel';
import { invalidConfig, makeLayer, optionsOf } from './_utils.mjs';

const nn = om.nn;
const F = nn.functional;

// ---- optical_flow/_utils.py ------------------------------------------------------------------

/** torchvision's grid_sample: F.gridSample with absolute pixel coordinates [..., 2] (x, y) instead of normalized ones. */
export function gridSample(img, absoluteGrid, mode = 'bilinear', alignCorners = null) {
  const [h, w] = img.shape.slice(-2);
  let [xgrid, ygrid] = absoluteGrid.split([1, 1], -1);
  xgrid = xgrid.mul(2).div(w - 1).sub(1);
  // Upstream: "Adding condition if h > 1 to enable this function be reused in raft-stereo"
  if (h > 1) ygrid = ygrid.mul(2).div(h - 1).sub(1);
  const normalizedGrid = om.cat([xgrid, ygrid], -1);
  return F.gridSample(img, normalizedGrid, { mode, alignCorners: alignCorners ?? false });
}

/** torchvision's make_coords_grid: [batchSize, 2, h, w] float32, channel 0 the x (column) and 1 the y (row) of each pixel. */
export function makeCoordsGrid(batchSize, h, w) {
  const coords = om.meshgrid([om.arange(h), om.arange(w)], { indexing: 'ij' });
  const grid = om.stack(coords.reverse(), 0).float();
  return grid.unsqueeze(0).repeat(batchSize, 1, 1, 1);
}

/**
 * torchvision's upsample_flow: flow [N, 2, h, w] to [N, 2, h * factor, w * factor], by bilinear
 * interpolation (align_corners) without upMask, else by the convex combination of each pixel's 9
 * neighbours that upMask [N, 9 * factor * factor, h, w] weighs (the paper's appendix B).
 */
export function upsampleFlow(flow, upMask = null, factor = 8) {
  const [batchSize, numChannels, h, w] = flow.shape;
  const [newH, newW] = [h * factor, w * factor];

  if (upMask === null) return F.interpolate(flow, { size: [newH, newW], mode: 'bilinear', alignCorners: true }).mul(factor);

  upMask = upMask.view(batchSize, 1, 9, factor, factor, h, w);
  upMask = upMask.softmax(2); // "convex" == weights sum to 1

  let upsampledFlow = F.unfold(flow.mul(factor), 3, { padding: 1 }).view(batchSize, numChannels, 9, 1, 1, h, w);
  upsampledFlow = upMask.mul(upsampledFlow).sum(2);

  return upsampledFlow.permute(0, 1, 4, 2, 5, 3).reshape(batchSize, numChannels, newH, newW);
}

// ---- optical_flow/raft.py --------------------------------------------------------------------

/** Slightly modified residual block with extra relu and biases (the convolutions keep their bias before the norm, as upstream). */
export class ResidualBlock extends nn.Module {
  constructor(inChannels, outChannels, options) {
    super();
    const { normLayer, stride = 1, alwaysProject = false } = optionsOf(options, 'ResidualBlock', ['normLayer', 'stride', 'alwaysProject']);
    this.convnormrelu1 = new nn.Conv2dNormActivation(inChannels, outChannels, 3, { normLayer, stride, bias: true });
    this.convnormrelu2 = new nn.Conv2dNormActivation(outChannels, outChannels, 3, { normLayer, bias: true });
    this.downsample = stride === 1 && !alwaysProject ? new nn.Identity()
      : new nn.Conv2dNormActivation(inChannels, outChannels, 1, { normLayer, stride, bias: true, activationLayer: null });
    this.relu = new nn.ReLU();
  }

  forward(x) {
    let y = x;
    y = this.convnormrelu1.forward(y);
    y = this.convnormrelu2.forward(y);
    x = this.downsample.forward(x);
    return this.relu.forward(x.add(y));
  }
}

/** Slightly modified bottleneck block (extra relu and biases). */
export class BottleneckBlock extends nn.Module {
  constructor(inChannels, outChannels, options) {
    super();
    const { normLayer, stride = 1 } = optionsOf(options, 'BottleneckBlock', ['normLayer', 'stride']);
    const mid = Math.floor(outChannels / 4);
    this.convnormrelu1 = new nn.Conv2dNormActivation(inChannels, mid, 1, { normLayer, bias: true });
    this.convnormrelu2 = new nn.Conv2dNormActivation(mid, mid, 3, { normLayer, stride, bias: true });
    this.convnormrelu3 = new nn.Conv2dNormActivation(mid, outChannels, 1, { normLayer, bias: true });
    this.relu = new nn.ReLU();
    this.downsample = stride === 1 ? new nn.Identity()
      : new nn.Conv2dNormActivation(inChannels, outChannels, 1, { normLayer, stride, bias: true, activationLayer: null });
  }

  forward(x) {
    let y = x;
    y = this.convnormrelu1.forward(y);
    y = this.convnormrelu2.forward(y);
    y = this.convnormrelu3.forward(y);
    x = this.downsample.forward(x);
    return this.relu.forward(x.add(y));
  }
}

/** The feature encoder, used both as the actual feature encoder and as the context encoder. It must downsample its input by 8. */
export class FeatureEncoder extends nn.Module {
  constructor(options) {
    super();
    const o = optionsOf(options, 'FeatureEncoder', ['block', 'layers', 'strides', 'normLayer']);
    const { block = ResidualBlock, layers = [64, 64, 96, 128, 256], strides = [2, 1, 2, 2] } = o;
    const normLayer = o.normLayer === undefined ? nn.BatchNorm2d : o.normLayer;
    if (layers.length !== 5) throw invalidConfig(`The expected number of layers is 5, instead got ${layers.length}`);

    this.convnormrelu = new nn.Conv2dNormActivation(3, layers[0], 7, { normLayer, stride: strides[0], bias: true });
    this.layer1 = this.make2Blocks(block, layers[0], layers[1], normLayer, strides[1]);
    this.layer2 = this.make2Blocks(block, layers[1], layers[2], normLayer, strides[2]);
    this.layer3 = this.make2Blocks(block, layers[2], layers[3], normLayer, strides[3]);
    this.conv = new nn.Conv2d(layers[3], layers[4], 1);

    const numDownsamples = strides.filter((s) => s === 2).length;
    this.outputDim = layers.at(-1);
    this.downsampleFactor = 2 ** numDownsamples;
  }

  /** torchvision's _make_2_blocks. */
  make2Blocks(block, inChannels, outChannels, normLayer, firstStride) {
    const block1 = makeLayer(block, inChannels, outChannels, { normLayer, stride: firstStride });
    const block2 = makeLayer(block, outChannels, outChannels, { normLayer, stride: 1 });
    return new nn.Sequential(block1, block2);
  }

  forward(x) {
    x = this.convnormrelu.forward(x);
    x = this.layer1.forward(x);
    x = this.layer2.forward(x);
    x = this.layer3.forward(x);
    x = this.conv.forward(x);
    return x;
  }
}

/** The motion encoder, part of the update block: encodes the current flow and the correlation features. */
export class MotionEncoder extends nn.Module {
  constructor(options) {
    super();
    const o = optionsOf(options, 'MotionEncoder', ['inChannelsCorr', 'corrLayers', 'flowLayers', 'outChannels']);
    const { inChannelsCorr, corrLayers = [256, 192], flowLayers = [128, 64], outChannels = 128 } = o;
    if (flowLayers.length !== 2) throw invalidConfig(`The expected number of flow_layers is 2, instead got ${flowLayers.length}`);
    if (![1, 2].includes(corrLayers.length)) throw invalidConfig(`The number of corr_layers should be 1 or 2, instead got ${corrLayers.length}`);

    this.convcorr1 = new nn.Conv2dNormActivation(inChannelsCorr, corrLayers[0], 1, { normLayer: null });
    this.convcorr2 = corrLayers.length === 2 ? new nn.Conv2dNormActivation(corrLayers[0], corrLayers[1], 3, { normLayer: null }) : new nn.Identity();
    this.convflow1 = new nn.Conv2dNormActivation(2, flowLayers[0], 7, { normLayer: null });
    this.convflow2 = new nn.Conv2dNormActivation(flowLayers[0], flowLayers[1], 3, { normLayer: null });
    // outChannels - 2 because the flow (2 channels) is concatenated at the end
    this.conv = new nn.Conv2dNormActivation(corrLayers.at(-1) + flowLayers.at(-1), outChannels - 2, 3, { normLayer: null });
    this.outChannels = outChannels;
  }

  forward(flow, corrFeatures) {
    let corr = this.convcorr1.forward(corrFeatures);
    corr = this.convcorr2.forward(corr);

    const flowOrig = flow;
    flow = this.convflow1.forward(flow);
    flow = this.convflow2.forward(flow);

    let corrFlow = om.cat([corr, flow], 1);
    corrFlow = this.conv.forward(corrFlow);
    return om.cat([corrFlow, flowOrig], 1);
  }
}

/** Convolutional GRU unit. */
export class ConvGRU extends nn.Module {
  constructor({ inputSize, hiddenSize, kernelSize, padding }) {
    super();
    this.convz = new nn.Conv2d(hiddenSize + inputSize, hiddenSize, kernelSize, { padding });
    this.convr = new nn.Conv2d(hiddenSize + inputSize, hiddenSize, kernelSize, { padding });
    this.convq = new nn.Conv2d(hiddenSize + inputSize, hiddenSize, kernelSize, { padding });
  }

  forward(h, x) {
    const hx = om.cat([h, x], 1);
    const z = this.convz.forward(hx).sigmoid();
    const r = this.convr.forward(hx).sigmoid();
    const q = this.convq.forward(om.cat([r.mul(h), x], 1)).tanh();
    return z.neg().add(1).mul(h).add(z.mul(q));
  }
}

/** upstream's _pass_through_h: the second GRU when there is one kernel size. */
function passThroughH(h) {
  return h;
}

/** The recurrent block of the update block: one or two ConvGRUs over the hidden state and (motion features, context). */
export class RecurrentBlock extends nn.Module {
  constructor(options) {
    super();
    const o = optionsOf(options, 'RecurrentBlock', ['inputSize', 'hiddenSize', 'kernelSize', 'padding']);
    const { inputSize, hiddenSize, kernelSize = [[1, 5], [5, 1]], padding = [[0, 2], [2, 0]] } = o;
    if (kernelSize.length !== padding.length) {
      throw invalidConfig(`kernel_size should have the same length as padding, instead got len(kernel_size) = ${kernelSize.length} and len(padding) = ${padding.length}`);
    }
    if (![1, 2].includes(kernelSize.length)) throw invalidConfig(`kernel_size should either 1 or 2, instead got ${kernelSize.length}`);

    this.convgru1 = new ConvGRU({ inputSize, hiddenSize, kernelSize: kernelSize[0], padding: padding[0] });
    // a function, not a module, as upstream's: it adds nothing to the state dict
    this.convgru2 = kernelSize.length === 2 ? new ConvGRU({ inputSize, hiddenSize, kernelSize: kernelSize[1], padding: padding[1] }) : { forward: passThroughH };
    this.hiddenSize = hiddenSize;
  }

  forward(h, x) {
    h = this.convgru1.forward(h, x);
    h = this.convgru2.forward(h, x);
    return h;
  }
}

/** The flow head of the update block: the hidden state to the predicted delta flow. */
export class FlowHead extends nn.Module {
  constructor({ inChannels, hiddenSize }) {
    super();
    this.conv1 = new nn.Conv2d(inChannels, hiddenSize, 3, { padding: 1 });
    this.conv2 = new nn.Conv2d(hiddenSize, 2, 3, { padding: 1 });
    this.relu = new nn.ReLU();
  }

  forward(x) {
    return this.conv2.forward(this.relu.forward(this.conv1.forward(x)));
  }
}

/** The update block: the motion encoder, the recurrent block and the flow head. */
export class UpdateBlock extends nn.Module {
  constructor({ motionEncoder, recurrentBlock, flowHead }) {
    super();
    this.motion_encoder = motionEncoder;
    this.recurrent_block = recurrentBlock;
    this.flow_head = flowHead;
    this.hiddenStateSize = recurrentBlock.hiddenSize;
  }

  forward(hiddenState, context, corrFeatures, flow) {
    const motionFeatures = this.motion_encoder.forward(flow, corrFeatures);
    const x = om.cat([context, motionFeatures], 1);

    hiddenState = this.recurrent_block.forward(hiddenState, x);
    const deltaFlow = this.flow_head.forward(hiddenState);
    return [hiddenState, deltaFlow];
  }
}

/** Predicts the mask of the convex upsampling from the hidden state (raft_large; raft_small interpolates). */
export class MaskPredictor extends nn.Module {
  constructor({ inChannels, hiddenSize, multiplier = 0.25 }) {
    super();
    this.convrelu = new nn.Conv2dNormActivation(inChannels, hiddenSize, 3, { normLayer: null });
    // 8 * 8 * 9: the flow is at 1/8 of the image, each pixel a convex combination of its 9 neighbours
    this.conv = new nn.Conv2d(hiddenSize, 8 * 8 * 9, 1, { padding: 0 });
    // upstream's 0.25 "downweights the gradients" of this branch
    this.multiplier = multiplier;
  }

  forward(x) {
    x = this.convrelu.forward(x);
    x = this.conv.forward(x);
    return x.mul(this.multiplier);
  }
}

/**
 * The correlation block: a pyramid of numLevels correlation volumes of the two feature maps
 * (buildPyramid), indexed around each pixel's current match within radius (the infinity norm) by
 * indexPyramid. Upstream keeps the pyramid in self.corr_pyramid between the two calls; om.nn takes
 * an array field of tensors for parameters (a ParameterList), so the port keeps it in a private field.
 */
export class CorrBlock extends nn.Module {
  #corrPyramid = [];

  constructor(options) {
    super();
    const { numLevels = 4, radius = 4 } = optionsOf(options, 'CorrBlock', ['numLevels', 'radius']);
    this.numLevels = numLevels;
    this.radius = radius;
    // the neighbourhood of a centroid is a square of side 2 * radius + 1
    this.outChannels = numLevels * (2 * radius + 1) ** 2;
  }

  /** The correlation pyramid of two feature maps [N, C, h, w]: every pair's dot product, pooled numLevels - 1 times over the second map's pixels. */
  buildPyramid(fmap1, fmap2) {
    if (fmap1.shape.join() !== fmap2.shape.join()) {
      throw invalidConfig(`Input feature maps should have the same shape, instead got [${fmap1.shape}] (fmap1.shape) != [${fmap2.shape}] (fmap2.shape)`);
    }
    let corrVolume = this.computeCorrVolume(fmap1, fmap2);

    const [batchSize, h, w, numChannels] = corrVolume.shape;
    corrVolume = corrVolume.reshape(batchSize * h * w, numChannels, h, w);
    this.#corrPyramid = [corrVolume];
    for (let i = 0; i < this.numLevels - 1; i++) {
      corrVolume = F.avgPool2d(corrVolume, 2, { stride: 2 });
      this.#corrPyramid.push(corrVolume);
    }
  }

  /** The correlation features [N, outChannels, h, w] around centroidsCoords [N, 2, h, w] (x, y per pixel). */
  indexPyramid(centroidsCoords) {
    const neighborhoodSideLen = 2 * this.radius + 1;
    const di = om.linspace(-this.radius, this.radius, neighborhoodSideLen);
    const dj = om.linspace(-this.radius, this.radius, neighborhoodSideLen);
    let delta = om.stack(om.meshgrid([di, dj], { indexing: 'ij' }), -1);
    delta = delta.view(1, neighborhoodSideLen, neighborhoodSideLen, 2);

    const [batchSize, , h, w] = centroidsCoords.shape;
    centroidsCoords = centroidsCoords.permute(0, 2, 3, 1).reshape(batchSize * h * w, 1, 1, 2);

    const indexedPyramid = [];
    for (const corrVolume of this.#corrPyramid) {
      const samplingCoords = centroidsCoords.add(delta); // [batchSize * h * w, side, side, 2]
      const indexedCorrVolume = gridSample(corrVolume, samplingCoords, 'bilinear', true).view(batchSize, h, w, -1);
      indexedPyramid.push(indexedCorrVolume);
      centroidsCoords = centroidsCoords.div(2);
    }

    const corrFeatures = om.cat(indexedPyramid, -1).permute(0, 3, 1, 2).contiguous();
    const expected = [batchSize, this.outChannels, h, w];
    if (corrFeatures.shape.join() !== expected.join()) {
      throw invalidConfig(`Output shape of index pyramid is incorrect. Should be [${expected}], got [${corrFeatures.shape}]`);
    }
    return corrFeatures;
  }

  /** upstream's _compute_corr_volume: [N, C, h, w] twice -> [N, h, w, 1, h, w], scaled by 1 / sqrt(C). */
  computeCorrVolume(fmap1, fmap2) {
    const [batchSize, numChannels, h, w] = fmap1.shape;
    fmap1 = fmap1.view(batchSize, numChannels, h * w);
    fmap2 = fmap2.view(batchSize, numChannels, h * w);

    let corr = om.matmul(fmap1.transpose(1, 2), fmap2);
    corr = corr.view(batchSize, h, w, 1, h, w);
    return corr.div(om.sqrt(om.tensor(numChannels)));
  }
}

/**
 * RAFT (Recurrent All Pairs Field Transforms, arXiv 2003.12039) from its parts: featureEncoder
 * (both images, downsampling by 8), contextEncoder (image1: its output split into the initial
 * hidden state and the context), corrBlock (buildPyramid / indexPyramid), updateBlock (with
 * hiddenStateSize) and maskPredictor (null: the flow is interpolated).
 */
export class RAFT extends nn.Module {
  constructor(options) {
    super();
    const o = optionsOf(options, 'RAFT', ['featureEncoder', 'contextEncoder', 'corrBlock', 'updateBlock', 'maskPredictor']);
    this.feature_encoder = o.featureEncoder;
    this.context_encoder = o.contextEncoder;
    this.corr_block = o.corrBlock;
    this.update_block = o.updateBlock;
    this.mask_predictor = o.maskPredictor ?? null;
    if (!('hiddenStateSize' in this.update_block)) throw invalidConfig("The update_block parameter should expose a 'hidden_state_size' attribute.");
  }

  /** image1, image2 [N, 3, H, W] -> numFlowUpdates predictions of the flow, each [N, 2, H, W]. */
  forward(image1, image2, numFlowUpdates = 12) {
    const [batchSize, , h, w] = image1.shape;
    if (h !== image2.shape.at(-2) || w !== image2.shape.at(-1)) {
      throw invalidConfig(`input images should have the same shape, instead got (${h}, ${w}) != [${image2.shape.slice(-2)}]`);
    }
    // upstream's check, its precedence as written: `not (h % 8 == 0) and (w % 8 == 0)`
    if (!(h % 8 === 0) && (w % 8 === 0)) throw invalidConfig(`input image H and W should be divisible by 8, insted got ${h} (h) and ${w} (w)`);

    const fmaps = this.feature_encoder.forward(om.cat([image1, image2], 0));
    const [fmap1, fmap2] = om.chunk(fmaps, 2, 0);
    if (fmap1.shape.at(-2) !== Math.floor(h / 8) || fmap1.shape.at(-1) !== Math.floor(w / 8)) {
      throw invalidConfig('The feature encoder should downsample H and W by 8');
    }

    this.corr_block.buildPyramid(fmap1, fmap2);

    const contextOut = this.context_encoder.forward(image1);
    if (contextOut.shape.at(-2) !== Math.floor(h / 8) || contextOut.shape.at(-1) !== Math.floor(w / 8)) {
      throw invalidConfig('The context encoder should downsample H and W by 8');
    }

    // The context encoder's output in 2 parts: the recurrent units' initial hidden state, and the context.
    const hiddenStateSize = this.update_block.hiddenStateSize;
    const outChannelsContext = contextOut.shape[1] - hiddenStateSize;
    if (outChannelsContext <= 0) {
      throw invalidConfig(`The context encoder outputs ${contextOut.shape[1]} channels, but it should have at strictly more than hidden_state=${hiddenStateSize} channels`);
    }
    let [hiddenState, context] = contextOut.split([hiddenStateSize, outChannelsContext], 1);
    hiddenState = hiddenState.tanh();
    context = F.relu(context);

    const coords0 = makeCoordsGrid(batchSize, Math.floor(h / 8), Math.floor(w / 8));
    let coords1 = makeCoordsGrid(batchSize, Math.floor(h / 8), Math.floor(w / 8));

    const flowPredictions = [];
    for (let i = 0; i < numFlowUpdates; i++) {
      coords1 = coords1.detach(); // no gradient through this branch, as in the paper
      const corrFeatures = this.corr_block.indexPyramid(coords1);

      const flow = coords1.sub(coords0);
      let deltaFlow;
      [hiddenState, deltaFlow] = this.update_block.forward(hiddenState, context, corrFeatures, flow);

      coords1 = coords1.add(deltaFlow);

      const upMask = this.mask_predictor === null ? null : this.mask_predictor.forward(hiddenState);
      const upsampledFlow = upsampleFlow(coords1.sub(coords0), upMask);
      flowPredictions.push(upsampledFlow);
    }
    return flowPredictions;
  }
}

/** torchvision's _raft: a RAFT from each part's sizes (its keyword arguments in camelCase); featureEncoder, contextEncoder, corrBlock, updateBlock or maskPredictor given replace the part. */
export function raft(options) {
  const o = optionsOf(options, 'raft', [
    'featureEncoderLayers', 'featureEncoderBlock', 'featureEncoderNormLayer',
    'contextEncoderLayers', 'contextEncoderBlock', 'contextEncoderNormLayer',
    'corrBlockNumLevels', 'corrBlockRadius',
    'motionEncoderCorrLayers', 'motionEncoderFlowLayers', 'motionEncoderOutChannels',
    'recurrentBlockHiddenStateSize', 'recurrentBlockKernelSize', 'recurrentBlockPadding',
    'flowHeadHiddenSize', 'useMaskPredictor',
    'featureEncoder', 'contextEncoder', 'corrBlock', 'updateBlock', 'maskPredictor']);
  const featureEncoder = o.featureEncoder ?? new FeatureEncoder({
    block: o.featureEncoderBlock, layers: o.featureEncoderLayers, normLayer: o.featureEncoderNormLayer,
  });
  const contextEncoder = o.contextEncoder ?? new FeatureEncoder({
    block: o.contextEncoderBlock, layers: o.contextEncoderLayers, normLayer: o.contextEncoderNormLayer,
  });
  const corrBlock = o.corrBlock ?? new CorrBlock({ numLevels: o.corrBlockNumLevels, radius: o.corrBlockRadius });

  let updateBlock = o.updateBlock ?? null;
  if (updateBlock === null) {
    const motionEncoder = new MotionEncoder({
      inChannelsCorr: corrBlock.outChannels, corrLayers: o.motionEncoderCorrLayers,
      flowLayers: o.motionEncoderFlowLayers, outChannels: o.motionEncoderOutChannels,
    });
    // the context encoder's output is split in the hidden state and the context (see RAFT.forward)
    const outChannelsContext = o.contextEncoderLayers.at(-1) - o.recurrentBlockHiddenStateSize;
    const recurrentBlock = new RecurrentBlock({
      inputSize: motionEncoder.outChannels + outChannelsContext, hiddenSize: o.recurrentBlockHiddenStateSize,
      kernelSize: o.recurrentBlockKernelSize, padding: o.recurrentBlockPadding,
    });
    const flowHead = new FlowHead({ inChannels: o.recurrentBlockHiddenStateSize, hiddenSize: o.flowHeadHiddenSize });
    updateBlock = new UpdateBlock({ motionEncoder, recurrentBlock, flowHead });
  }

  let maskPredictor = o.maskPredictor ?? null;
  if (maskPredictor === null && o.useMaskPredictor) {
    maskPredictor = new MaskPredictor({ inChannels: o.recurrentBlockHiddenStateSize, hiddenSize: 256, multiplier: 0.25 });
  }
  return new RAFT({ featureEncoder, contextEncoder, corrBlock, updateBlock, maskPredictor });
}

/** The sizes of raft_large (5.3M weights); options override them (raft's). */
export function raft_large(options = {}) {
  return raft({
    featureEncoderLayers: [64, 64, 96, 128, 256], featureEncoderBlock: ResidualBlock, featureEncoderNormLayer: nn.InstanceNorm2d,
    contextEncoderLayers: [64, 64, 96, 128, 256], contextEncoderBlock: ResidualBlock, contextEncoderNormLayer: nn.BatchNorm2d,
    corrBlockNumLevels: 4, corrBlockRadius: 4,
    motionEncoderCorrLayers: [256, 192], motionEncoderFlowLayers: [128, 64], motionEncoderOutChannels: 128,
    recurrentBlockHiddenStateSize: 128, recurrentBlockKernelSize: [[1, 5], [5, 1]], recurrentBlockPadding: [[0, 2], [2, 0]],
    flowHeadHiddenSize: 256, useMaskPredictor: true,
    ...options,
  });
}

/** The sizes of raft_small (1.0M weights); options override them (raft's). */
export function raft_small(options = {}) {
  return raft({
    featureEncoderLayers: [32, 32, 64, 96, 128], featureEncoderBlock: BottleneckBlock, featureEncoderNormLayer: nn.InstanceNorm2d,
    contextEncoderLayers: [32, 32, 64, 96, 160], contextEncoderBlock: BottleneckBlock, contextEncoderNormLayer: null,
    corrBlockNumLevels: 4, corrBlockRadius: 3,
    motionEncoderCorrLayers: [96], motionEncoderFlowLayers: [64, 32], motionEncoderOutChannels: 82,
    recurrentBlockHiddenStateSize: 96, recurrentBlockKernelSize: [3], recurrentBlockPadding: [1],
    flowHeadHiddenSize: 128, useMaskPredictor: false,
    ...options,
  });
}
