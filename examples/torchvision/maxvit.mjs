// torchvision 0.14's MaxViT (models/maxvit.py) ported to om.nn: MBConv,
// RelativePositionalMultiHeadAttention, SwapAxes, WindowPartition, WindowDepartition,
// PartitionAttentionLayer, MaxVitLayer, MaxVitBlock and MaxVit with torchvision's constructor
// arguments and field names (its state dicts load as they are, relative_position_index included),
// and the builder maxvit_t.
//
//   const net = maxvit_t({ numClasses: 10 }).eval();   // 224 x 224 inputs
//
// As torchvision's, a MaxVit runs at the input size it is built for: each attention layer keeps the
// grid size of that input (its departition reshapes to it, and the grid attention's bias is for a
// partition_size ** 2 sequence), so only the batch varies. Weights start from om.nn's default
// initialisation, not torchvision's init scheme.
import * as om from 'onemodel';
import { invalidConfig, makeLayer, optionsOf } from './_utils.mjs';

const nn = om.nn;
const F = nn.functional;

/** (H, W) after a convolution of kernelSize, stride and padding (torchvision's _get_conv_output_shape). */
function getConvOutputShape(inputSize, kernelSize, stride, padding) {
  return inputSize.map((n) => Math.floor((n - kernelSize + 2 * padding) / stride) + 1);
}

/** The input size of each of nBlocks blocks after the stem (torchvision's _make_block_input_shapes). */
function makeBlockInputShapes(inputSize, nBlocks) {
  const shapes = [];
  let blockInputShape = getConvOutputShape(inputSize, 3, 2, 1);
  for (let i = 0; i < nBlocks; i++) {
    blockInputShape = getConvOutputShape(blockInputShape, 3, 2, 1);
    shapes.push(blockInputShape);
  }
  return shapes;
}

/** For each pair of a height x width window's tokens, the row of the bias table for their offset: int64 [h*w, h*w]. */
function getRelativePositionIndex(height, width) {
  return om.tidy(() => {
    const coords = om.stack(om.meshgrid([om.arange(height), om.arange(width)], { indexing: 'ij' })); // int64, as torch.arange of ints
    const coordsFlat = om.flatten(coords, 1);
    const relativeCoords = coordsFlat.unsqueeze(2).sub(coordsFlat.unsqueeze(1)).permute(1, 2, 0).contiguous();
    relativeCoords.select(2, 0).add_(height - 1);
    relativeCoords.select(2, 1).add_(width - 1);
    relativeCoords.select(2, 0).mul_(2 * width - 1);
    return relativeCoords.sum(-1);
  });
}

/** MBConv: Mobile Inverted Residual Bottleneck (pre-norm, expand, depthwise, squeeze-excitation, project) plus a projected shortcut. */
export class MBConv extends nn.Module {
  constructor(inChannels, outChannels, expansionRatio, squeezeRatio, stride, activationLayer, normLayer, pStochasticDropout = 0.0) {
    super();
    const shouldProj = stride !== 1 || inChannels !== outChannels;
    if (shouldProj) {
      const proj = [new nn.Conv2d(inChannels, outChannels, 1, { stride: 1, bias: true })];
      if (stride === 2) proj.unshift(new nn.AvgPool2d(3, { stride, padding: 1 }));
      this.proj = new nn.Sequential(...proj);
    } else {
      this.proj = new nn.Identity();
    }
    const midChannels = Math.trunc(outChannels * expansionRatio);
    const sqzChannels = Math.trunc(outChannels * squeezeRatio);
    this.stochastic_depth = pStochasticDropout ? new nn.StochasticDepth(pStochasticDropout, 'row') : new nn.Identity();
    this.layers = new nn.Sequential(new Map([
      ['pre_norm', makeLayer(normLayer, inChannels)],
      ['conv_a', new nn.Conv2dNormActivation(inChannels, midChannels, 1, { stride: 1, padding: 0, activationLayer, normLayer })],
      ['conv_b', new nn.Conv2dNormActivation(midChannels, midChannels, 3, {
        stride, padding: 1, activationLayer, normLayer, groups: midChannels,
      })],
      ['squeeze_excitation', new nn.SqueezeExcitation(midChannels, sqzChannels, { activation: nn.SiLU })],
      ['conv_c', new nn.Conv2d(midChannels, outChannels, 1, { bias: true })],
    ]));
  }

  /** x [B, C, H, W] -> [B, C', H / stride, W / stride]. */
  forward(x) {
    const res = this.proj.forward(x);
    x = this.stochastic_depth.forward(this.layers.forward(x));
    return res.add(x);
  }
}

/** Multi-head self-attention over each partition's maxSeqLen tokens, with a relative position bias. */
export class RelativePositionalMultiHeadAttention extends nn.Module {
  constructor(featDim, headDim, maxSeqLen) {
    super();
    if (featDim % headDim !== 0) throw invalidConfig(`feat_dim: ${featDim} must be divisible by head_dim: ${headDim}`);
    this.nHeads = Math.floor(featDim / headDim);
    this.headDim = headDim;
    this.size = Math.trunc(Math.sqrt(maxSeqLen));
    this.maxSeqLen = maxSeqLen;
    this.to_qkv = new nn.Linear(featDim, this.nHeads * this.headDim * 3);
    this.scaleFactor = featDim ** -0.5;
    this.merge = new nn.Linear(this.headDim * this.nHeads, featDim);
    this.relative_position_bias_table = om.tidy(() => om.randn([(2 * this.size - 1) * (2 * this.size - 1), this.nHeads]).mul(0.02));
    this.relative_position_bias_table.requiresGrad = true;
    this.registerBuffer('relative_position_index', getRelativePositionIndex(this.size, this.size));
  }

  /** The bias [1, heads, maxSeqLen, maxSeqLen] from the table by the index. */
  getRelativePositionalBias() {
    const biasIndex = this.relative_position_index.view(-1);
    const relativeBias = this.relative_position_bias_table.indexSelect(0, biasIndex).view(this.maxSeqLen, this.maxSeqLen, -1);
    return relativeBias.permute(2, 0, 1).contiguous().unsqueeze(0);
  }

  /** x [B, G, P, D] -> [B, G, P, D]. */
  forward(x) {
    const [B, G, P, D] = x.shape;
    const [H, DH] = [this.nHeads, this.headDim];
    const qkv = this.to_qkv.forward(x);
    let [q, k, v] = qkv.chunk(3, -1);
    q = q.reshape(B, G, P, H, DH).permute(0, 1, 3, 2, 4);
    k = k.reshape(B, G, P, H, DH).permute(0, 1, 3, 2, 4);
    v = v.reshape(B, G, P, H, DH).permute(0, 1, 3, 2, 4);
    k = k.mul(this.scaleFactor);
    let dotProd = om.einsum('B G H I D, B G H J D -> B G H I J', q, k);
    const posBias = this.getRelativePositionalBias();
    dotProd = F.softmax(dotProd.add(posBias), -1);
    let out = om.einsum('B G H I J, B G H J D -> B G H I D', dotProd, v);
    out = out.permute(0, 1, 3, 2, 4).reshape(B, G, P, D);
    return this.merge.forward(out);
  }
}

/** torch.swapaxes(x, a, b) as a module. */
export class SwapAxes extends nn.Module {
  constructor(a, b) {
    super();
    this.a = a;
    this.b = b;
  }

  forward(x) {
    return om.swapaxes(x, this.a, this.b);
  }
}

/** [B, C, H, W] -> [B, H/P * W/P, P*P, C]: non-overlapping P x P windows. */
export class WindowPartition extends nn.Module {
  forward(x, p) {
    const [B, C, H, W] = x.shape;
    const P = p;
    x = x.reshape(B, C, Math.floor(H / P), P, Math.floor(W / P), P);
    x = x.permute(0, 2, 4, 3, 5, 1);
    return x.reshape(B, Math.floor(H / P) * Math.floor(W / P), P * P, C);
  }
}

/** [B, HP * WP, P*P, C] -> [B, C, HP * P, WP * P]: WindowPartition undone. */
export class WindowDepartition extends nn.Module {
  forward(x, p, hPartitions, wPartitions) {
    const [B, , , C] = x.shape;
    const P = p;
    const [HP, WP] = [hPartitions, wPartitions];
    x = x.reshape(B, HP, WP, P, P, C);
    x = x.permute(0, 5, 1, 3, 2, 4);
    return x.reshape(B, C, HP * P, WP * P);
  }
}

/**
 * Attention within each window ('window': P x P neighbours) or across the grid ('grid': every
 * (H / P)-th pixel), then an MLP, each pre-norm with stochastic depth and a residual.
 */
export class PartitionAttentionLayer extends nn.Module {
  constructor(inChannels, headDim, partitionSize, partitionType, gridSize, mlpRatio, activationLayer, normLayer,
    attentionDropout, mlpDropout, pStochasticDropout) {
    super();
    this.nHeads = Math.floor(inChannels / headDim);
    this.headDim = headDim;
    this.nPartitions = Math.floor(gridSize[0] / partitionSize);
    this.partitionType = partitionType;
    this.gridSize = gridSize;
    if (partitionType !== 'grid' && partitionType !== 'window') throw invalidConfig("partition_type must be either 'grid' or 'window'");
    [this.p, this.g] = partitionType === 'window' ? [partitionSize, this.nPartitions] : [this.nPartitions, partitionSize];
    this.partition_op = new WindowPartition();
    this.departition_op = new WindowDepartition();
    this.partition_swap = partitionType === 'grid' ? new SwapAxes(-2, -3) : new nn.Identity();
    this.departition_swap = partitionType === 'grid' ? new SwapAxes(-2, -3) : new nn.Identity();
    this.attn_layer = new nn.Sequential(
      makeLayer(normLayer, inChannels),
      new RelativePositionalMultiHeadAttention(inChannels, headDim, partitionSize ** 2),
      new nn.Dropout(attentionDropout),
    );
    this.mlp_layer = new nn.Sequential(
      new nn.LayerNorm(inChannels),
      new nn.Linear(inChannels, inChannels * mlpRatio),
      makeLayer(activationLayer),
      new nn.Linear(inChannels * mlpRatio, inChannels),
      new nn.Dropout(mlpDropout),
    );
    this.stochastic_dropout = new nn.StochasticDepth(pStochasticDropout, 'row');
  }

  /** x [B, C, H, W] -> [B, C, H, W]. */
  forward(x) {
    const [gh, gw] = [Math.floor(this.gridSize[0] / this.p), Math.floor(this.gridSize[1] / this.p)];
    if (!(this.gridSize[0] % this.p === 0 && this.gridSize[1] % this.p === 0)) {
      throw invalidConfig(`Grid size must be divisible by partition size. Got grid size of [${this.gridSize}] and partition size of ${this.p}`);
    }
    x = this.partition_op.forward(x, this.p);
    x = this.partition_swap.forward(x);
    x = x.add(this.stochastic_dropout.forward(this.attn_layer.forward(x)));
    x = x.add(this.stochastic_dropout.forward(this.mlp_layer.forward(x)));
    x = this.departition_swap.forward(x);
    return this.departition_op.forward(x, this.p, gh, gw);
  }
}

/** An MBConv, then window attention, then grid attention. */
export class MaxVitLayer extends nn.Module {
  constructor(inChannels, outChannels, squeezeRatio, expansionRatio, stride, normLayer, activationLayer, headDim, mlpRatio,
    mlpDropout, attentionDropout, pStochasticDropout, partitionSize, gridSize) {
    super();
    const attention = (type) => new PartitionAttentionLayer(outChannels, headDim, partitionSize, type, gridSize, mlpRatio,
      activationLayer, nn.LayerNorm, attentionDropout, mlpDropout, pStochasticDropout);
    this.layers = new nn.Sequential(new Map([
      ['MBconv', new MBConv(inChannels, outChannels, expansionRatio, squeezeRatio, stride, activationLayer, normLayer, pStochasticDropout)],
      ['window_attention', attention('window')],
      ['grid_attention', attention('grid')],
    ]));
  }

  forward(x) {
    return this.layers.forward(x);
  }
}

/** nLayers MaxVitLayers, the first halving the size (stride 2). */
export class MaxVitBlock extends nn.Module {
  constructor(inChannels, outChannels, squeezeRatio, expansionRatio, normLayer, activationLayer, headDim, mlpRatio, mlpDropout,
    attentionDropout, partitionSize, inputGridSize, nLayers, pStochastic) {
    super();
    if (pStochastic.length !== nLayers) {
      throw invalidConfig(`p_stochastic must have length n_layers=${nLayers}, got p_stochastic=[${pStochastic.join(', ')}].`);
    }
    this.layers = new nn.ModuleList();
    this.gridSize = getConvOutputShape(inputGridSize, 3, 2, 1);
    pStochastic.forEach((p, idx) => {
      const stride = idx === 0 ? 2 : 1;
      this.layers.append(new MaxVitLayer(idx === 0 ? inChannels : outChannels, outChannels, squeezeRatio, expansionRatio, stride,
        normLayer, activationLayer, headDim, mlpRatio, mlpDropout, attentionDropout, p, partitionSize, this.gridSize));
    });
  }

  forward(x) {
    for (const layer of this.layers) x = layer.forward(x);
    return x;
  }
}

/** numpy's linspace(start, stop, num).tolist(): num evenly spaced values, the last exactly stop. */
function linspace(start, stop, num) {
  if (num === 1) return [start];
  const step = (stop - start) / (num - 1);
  return Array.from({ length: num }, (_, i) => (i === num - 1 ? stop : start + i * step));
}

/**
 * torchvision's MaxVit(input_size, stem_channels, partition_size, block_channels, block_layers,
 * head_dim, stochastic_depth_prob, norm_layer, activation_layer, squeeze_ratio, expansion_ratio,
 * mlp_ratio, mlp_dropout, attention_dropout, num_classes): new MaxVit(inputSize, stemChannels,
 * partitionSize, blockChannels, blockLayers, headDim, stochasticDepthProb, { normLayer =
 * BatchNorm2d(eps 1e-3, momentum 0.99), activationLayer = GELU, squeezeRatio = 0.25,
 * expansionRatio = 4, mlpRatio = 4, mlpDropout = 0, attentionDropout = 0, numClasses = 1000 }).
 */
export class MaxVit extends nn.Module {
  constructor(inputSize, stemChannels, partitionSize, blockChannels, blockLayers, headDim, stochasticDepthProb, options) {
    super();
    const o = optionsOf(options, 'MaxVit', ['normLayer', 'activationLayer', 'squeezeRatio', 'expansionRatio', 'mlpRatio',
      'mlpDropout', 'attentionDropout', 'numClasses']);
    const { activationLayer = nn.GELU, squeezeRatio = 0.25, expansionRatio = 4, mlpRatio = 4, mlpDropout = 0.0, attentionDropout = 0.0 } = o;
    const { numClasses = 1000 } = o;
    const inputChannels = 3;
    const normLayer = o.normLayer ?? ((c) => new nn.BatchNorm2d(c, { eps: 1e-3, momentum: 0.99 }));
    const blockInputSizes = makeBlockInputShapes(inputSize, blockChannels.length);
    blockInputSizes.forEach((s, idx) => {
      if (s[0] % partitionSize !== 0 || s[1] % partitionSize !== 0) {
        throw invalidConfig(`Input size [${s}] of block ${idx} is not divisible by partition size ${partitionSize}. `
          + 'Consider changing the partition size or the input size.\n'
          + `Current configuration yields the following block input sizes: ${JSON.stringify(blockInputSizes)}.`);
      }
    });
    this.stem = new nn.Sequential(
      new nn.Conv2dNormActivation(inputChannels, stemChannels, 3, { stride: 2, normLayer, activationLayer, bias: false }),
      new nn.Conv2dNormActivation(stemChannels, stemChannels, 3, { stride: 1, normLayer: null, activationLayer: null, bias: true }),
    );
    inputSize = getConvOutputShape(inputSize, 3, 2, 1);
    this.partitionSize = partitionSize;
    this.blocks = new nn.ModuleList();
    const inChannels = [stemChannels, ...blockChannels.slice(0, -1)];
    const pStochastic = linspace(0, stochasticDepthProb, blockLayers.reduce((a, b) => a + b, 0));
    let pIdx = 0;
    blockChannels.forEach((outChannel, i) => {
      const numLayers = blockLayers[i];
      this.blocks.append(new MaxVitBlock(inChannels[i], outChannel, squeezeRatio, expansionRatio, normLayer, activationLayer, headDim,
        mlpRatio, mlpDropout, attentionDropout, partitionSize, inputSize, numLayers, pStochastic.slice(pIdx, pIdx + numLayers)));
      inputSize = this.blocks.at(-1).gridSize;
      pIdx += numLayers;
    });
    const last = blockChannels[blockChannels.length - 1];
    this.classifier = new nn.Sequential(
      new nn.AdaptiveAvgPool2d(1),
      new nn.Flatten(),
      new nn.LayerNorm(last),
      new nn.Linear(last, last),
      new nn.Tanh(),
      new nn.Linear(last, numClasses, { bias: false }),
    );
  }

  forward(x) {
    x = this.stem.forward(x);
    for (const block of this.blocks) x = block.forward(x);
    return this.classifier.forward(x);
  }
}

/** torchvision's maxvit_t: 224 x 224 inputs, stem 64, blocks 64, 128, 256, 512 of 2, 2, 5, 2 layers, partition 7. */
export function maxvit_t(options) {
  const { inputSize = [224, 224], ...rest } = optionsOf(options, 'maxvit_t', ['inputSize', 'numClasses']);
  return new MaxVit(inputSize, 64, 7, [64, 128, 256, 512], [2, 2, 5, 2], 32, 0.2, rest);
}
