// Hugging Face transformers' PatchTST (modeling_patchtst.py: PatchTSTModel without masking, eval
// mode) ported to onemodel as a user ports it. The state dict's keys are upstream's
// (`encoder.embedder.input_embedding.weight`, `encoder.positional_encoder.position_enc`,
// `encoder.layers.0.self_attn.q_proj.weight`, `encoder.layers.0.norm_sublayer1.batchnorm.running_mean`,
// `encoder.layers.0.ff.0.weight` ...).
// PatchTSTModel.forward(past_values [batch, length, num_input_channels], past_observed_mask (same
// shape, 1 observed; default all ones)) -> [last_hidden_state [batch, channels, patches (+1 with
// the CLS token), d_model], loc, scale [batch, 1, channels], patch_input [batch, channels, patches,
// patch_length]], patches = (max(length, patch_length) - patch_length) // patch_stride + 1.
//
// Upstream computes the patches from config.context_length and refuses any other length. A user who
// wants one model for every length (and a graph traced with a symbolic length) computes them from
// the input instead and adds the first rows of the position table: `new PatchTSTModel(config,
// { anyLength: true })`, where context_length is the longest length the table covers.
import * as om from 'onemodel';

const nn = om.nn;

/** PatchTSTConfig's defaults for the fields this port reads. */
export const PATCHTST_DEFAULTS = {
  num_input_channels: 1, context_length: 32, patch_length: 1, patch_stride: 1, num_hidden_layers: 3, d_model: 128,
  num_attention_heads: 4, share_embedding: true, channel_attention: false, ffn_dim: 512, norm_type: 'batchnorm', norm_eps: 1e-5,
  activation_function: 'gelu', pre_norm: true, positional_encoding_type: 'sincos', use_cls_token: false, scaling: 'std',
  do_mask_input: false, bias: true,
};

/** Multi-headed self-attention (upstream's Wav2Vec2-style PatchTSTAttention, eager, no mask). */
export class PatchTSTAttention extends nn.Module {
  constructor(embedDim, numHeads, bias = true) {
    super();
    this.num_heads = numHeads;
    this.head_dim = Math.trunc(embedDim / numHeads);
    if (this.head_dim * numHeads !== embedDim) {
      throw new Error(`PatchTSTAttention: embed_dim must be divisible by num_heads (got \`embed_dim\`: ${embedDim} and \`num_heads\`: ${numHeads}).`);
    }
    this.scaling = this.head_dim ** -0.5;
    this.k_proj = new nn.Linear(embedDim, embedDim, { bias });
    this.v_proj = new nn.Linear(embedDim, embedDim, { bias });
    this.q_proj = new nn.Linear(embedDim, embedDim, { bias });
    this.out_proj = new nn.Linear(embedDim, embedDim, { bias });
  }

  forward(hiddenStates) {
    const [bsz, tgtLen] = hiddenStates.shape;
    const shape = [bsz, tgtLen, -1, this.head_dim];
    const queryStates = this.q_proj.forward(hiddenStates).view(shape).transpose(1, 2);
    const keyStates = this.k_proj.forward(hiddenStates).view(shape).transpose(1, 2);
    const valueStates = this.v_proj.forward(hiddenStates).view(shape).transpose(1, 2);
    const attnWeights = queryStates.matmul(keyStates.transpose(2, 3)).mul(this.scaling).softmax(-1);
    const attnOutput = attnWeights.matmul(valueStates).transpose(1, 2).contiguous();
    return this.out_proj.forward(attnOutput.reshape(bsz, tgtLen, -1).contiguous());
  }
}

/** BatchNorm1d over the patches: [batch, patches, d_model] normalised per d_model feature. */
export class PatchTSTBatchNorm extends nn.Module {
  constructor(config) {
    super();
    this.batchnorm = new nn.BatchNorm1d(config.d_model, { eps: config.norm_eps });
  }

  forward(inputs) {
    return this.batchnorm.forward(inputs.transpose(1, 2)).transpose(1, 2);
  }
}

/** The norm config.norm_type names. */
function patchTSTNorm(config) {
  if (config.norm_type === 'batchnorm') return new PatchTSTBatchNorm(config);
  if (config.norm_type === 'layernorm') return new nn.LayerNorm(config.d_model, { eps: config.norm_eps });
  throw new Error(`PatchTSTEncoderLayer: ${config.norm_type} is not a supported norm layer type.`);
}

/** Attention across time per channel, optionally across channels per patch, then the FFN; pre- or post-norm. */
export class PatchTSTEncoderLayer extends nn.Module {
  constructor(config) {
    super();
    this.channel_attention = config.channel_attention;
    this.self_attn = new PatchTSTAttention(config.d_model, config.num_attention_heads);
    this.dropout_path1 = new nn.Identity();
    this.norm_sublayer1 = patchTSTNorm(config);
    if (this.channel_attention) {
      this.dropout_path2 = new nn.Identity();
      this.norm_sublayer2 = patchTSTNorm(config);
    }
    this.ff = new nn.Sequential(new nn.Linear(config.d_model, config.ffn_dim, { bias: config.bias }), new nn.GELU(), new nn.Identity(),
      new nn.Linear(config.ffn_dim, config.d_model, { bias: config.bias }));
    this.dropout_path3 = new nn.Identity();
    this.norm_sublayer3 = patchTSTNorm(config);
    this.pre_norm = config.pre_norm;
  }

  /** x + sublayer(norm(x)) (pre-norm) or norm(x + sublayer(x)). */
  residual(hiddenState, sublayer, norm, dropout) {
    if (this.pre_norm) return hiddenState.add(dropout.forward(sublayer(norm.forward(hiddenState))));
    return norm.forward(hiddenState.add(dropout.forward(sublayer(hiddenState))));
  }

  forward(hiddenState) {
    const [batchSize, numInputChannels, sequenceLength, dModel] = hiddenState.shape;
    const attention = (h) => this.self_attn.forward(h);
    let h = hiddenState.view(batchSize * numInputChannels, sequenceLength, dModel);
    h = this.residual(h, attention, this.norm_sublayer1, this.dropout_path1);
    h = h.reshape(batchSize, numInputChannels, sequenceLength, dModel);
    if (this.channel_attention) {
      h = h.transpose(2, 1).contiguous().view(batchSize * sequenceLength, numInputChannels, dModel);
      h = this.residual(h, attention, this.norm_sublayer2, this.dropout_path2);
      h = h.reshape(batchSize, sequenceLength, numInputChannels, dModel).transpose(1, 2).contiguous();
    }
    h = h.view(batchSize * numInputChannels, sequenceLength, dModel);
    h = this.residual(h, (x) => this.ff.forward(x), this.norm_sublayer3, this.dropout_path3);
    return h.reshape(batchSize, numInputChannels, sequenceLength, dModel);
  }
}

/** Each patch of patch_length values to d_model: one Linear shared by the channels, or one per channel. */
export class PatchTSTEmbedding extends nn.Module {
  constructor(config) {
    super();
    this.num_input_channels = config.num_input_channels;
    this.share_embedding = config.share_embedding;
    this.input_embedding = this.share_embedding ? new nn.Linear(config.patch_length, config.d_model)
      : new nn.ModuleList(Array.from({ length: config.num_input_channels }, () => new nn.Linear(config.patch_length, config.d_model)));
  }

  forward(patchInput) {
    const numInputChannels = patchInput.shape[1];
    if (numInputChannels !== this.num_input_channels) {
      throw new Error(`PatchTSTEmbedding: The defined number of input channels (${this.num_input_channels}) in the config has to be the same as the number of channels in the batch input (${numInputChannels})`);
    }
    if (this.share_embedding) return this.input_embedding.forward(patchInput);
    const embeddings = Array.from({ length: numInputChannels }, (_, i) => this.input_embedding.at(i).forward(patchInput.select(1, i)));
    return om.stack(embeddings, 1);
  }
}

/**
 * PatchTST's sincos table: sin and cos of position * 10000^(-2i / d_model), centred, over 10 times
 * its standard deviation ([numPatches, d_model]).
 */
export function patchTSTSincosTable(config, numPatches) {
  return om.tidy(() => {
    const positionEnc = om.zeros([numPatches, config.d_model]);
    const position = om.arange(0, numPatches).unsqueeze(1);
    const divTerm = om.arange(0, config.d_model, 2).mul(-(Math.log(10000.0) / config.d_model)).exp();
    positionEnc.slice(1, 0, null, 2).copy_(position.mul(divTerm).sin());
    positionEnc.slice(1, 1, null, 2).copy_(position.mul(divTerm).cos());
    const centred = positionEnc.sub(positionEnc.mean());
    return centred.div(centred.std().mul(10));
  });
}

/** The position table added to the patches (and its row 0 to the CLS token, put first). */
export class PatchTSTPositionalEncoding extends nn.Module {
  constructor(config, numPatches, anyLength = false) {
    super();
    this.use_cls_token = config.use_cls_token;
    this.num_input_channels = config.num_input_channels;
    this.anyLength = anyLength;
    const rows = numPatches + (this.use_cls_token ? 1 : 0);
    if (this.use_cls_token) {
      this.cls_token = om.zeros([1, 1, 1, config.d_model]);
      this.cls_token.requiresGrad = true;
    }
    if (config.positional_encoding_type === 'random') {
      this.position_enc = om.randn([rows, config.d_model]);
      this.position_enc.requiresGrad = true;
    } else if (config.positional_encoding_type === 'sincos') {
      this.position_enc = patchTSTSincosTable(config, rows); // an nn.Parameter with requires_grad=False upstream
    } else {
      throw new Error(`PatchTSTPositionalEncoding: ${config.positional_encoding_type} is not a valid positional encoder. Available types are 'random' and 'sincos'.`);
    }
  }

  forward(patchInput) {
    const table = this.position_enc;
    // anyLength: the table's rows for the input's patches (upstream's table has exactly them)
    const rows = (first) => (this.anyLength ? table.slice(0, first, first + patchInput.shape[2]) : table.slice(0, first));
    if (!this.use_cls_token) return patchInput.add(rows(0));
    const patches = patchInput.add(rows(1));
    const clsToken = this.cls_token.add(table.slice(0, 0, 1));
    const clsTokens = clsToken.expand(patches.shape[0], this.num_input_channels, -1, -1);
    return om.cat([clsTokens, patches], 2);
  }
}

export class PatchTSTEncoder extends nn.Module {
  constructor(config, numPatches, anyLength = false) {
    super();
    this.embedder = new PatchTSTEmbedding(config);
    this.positional_encoder = new PatchTSTPositionalEncoding(config, numPatches, anyLength);
    this.layers = new nn.ModuleList(Array.from({ length: config.num_hidden_layers }, () => new PatchTSTEncoderLayer(config)));
  }

  forward(patchInput) {
    let hiddenState = this.positional_encoder.forward(this.embedder.forward(patchInput));
    for (const layer of this.layers) hiddenState = layer.forward(hiddenState);
    return hiddenState;
  }
}

/** PatchTSTStdScaler over the length: (data - loc) / scale with the observed values' mean and std. */
export class PatchTSTStdScaler extends nn.Module {
  forward(data, observedIndicator) {
    const denominator = observedIndicator.sum(1, true).clampMin(1.0);
    const loc = data.mul(observedIndicator).sum(1, true).div(denominator);
    const variance = data.sub(loc).mul(observedIndicator).pow(2).sum(1, true).div(denominator);
    const scale = variance.add(1e-5).sqrt();
    return [data.sub(loc).div(scale), loc, scale];
  }
}

/**
 * PatchTSTMeanScaler over the length: data / the observed values' mean absolute value; a channel
 * with no observation takes the batch's (default_scale None).
 */
export class PatchTSTMeanScaler extends nn.Module {
  forward(data, observedIndicator) {
    const tsSum = data.mul(observedIndicator).abs().sum(1, true);
    const numObserved = observedIndicator.sum(1, true);
    let scale = tsSum.div(numObserved.clampMin(1));
    const batchSum = tsSum.sum(0);
    const batchObservations = numObserved.sum(0).clampMin(1);
    const defaultScale = batchSum.div(batchObservations).squeeze();
    scale = om.where(numObserved.gt(0), scale, defaultScale).clampMin(1e-10);
    return [data.div(scale), om.zerosLike(scale), scale];
  }
}

export class PatchTSTScaler extends nn.Module {
  constructor(config) {
    super();
    if (config.scaling === 'mean' || config.scaling === true) this.scaler = new PatchTSTMeanScaler();
    else if (config.scaling === 'std') this.scaler = new PatchTSTStdScaler();
    else throw new Error(`PatchTSTScaler: scaling ${JSON.stringify(config.scaling)} is not ported (only 'std' and 'mean')`);
  }

  forward(data, observedIndicator) {
    return this.scaler.forward(data, observedIndicator);
  }
}

/** PatchTSTPatchify's numbers for a length: [num_patches, sequence_start]. */
export function patchTSTPatches(sequenceLength, patchLength, patchStride) {
  const numPatches = Math.floor((Math.max(sequenceLength, patchLength) - patchLength) / patchStride) + 1;
  const newSequenceLength = patchLength + patchStride * (numPatches - 1);
  return [numPatches, sequenceLength - newSequenceLength];
}

/**
 * [batch, length, channels] -> [batch, channels, patches, patch_length]: the first sequence_start
 * steps dropped so that the patches end at the last step, then Tensor.unfold(-2, patch_length,
 * patch_stride).
 */
export class PatchTSTPatchify extends nn.Module {
  constructor(config, anyLength = false) {
    super();
    this.sequence_length = config.context_length;
    this.patch_length = config.patch_length;
    this.patch_stride = config.patch_stride;
    this.anyLength = anyLength;
    if (this.sequence_length <= this.patch_length) {
      throw new Error(`PatchTSTPatchify: Sequence length (${this.sequence_length}) has to be greater than the patch length (${this.patch_length})`);
    }
    [this.num_patches, this.sequence_start] = patchTSTPatches(this.sequence_length, this.patch_length, this.patch_stride);
  }

  forward(pastValues) {
    const sequenceLength = pastValues.shape[pastValues.shape.length - 2];
    let sequenceStart = this.sequence_start;
    if (this.anyLength) {
      [, sequenceStart] = patchTSTPatches(sequenceLength, this.patch_length, this.patch_stride);
    } else if (sequenceLength !== this.sequence_length) {
      throw new Error(`PatchTSTPatchify: Input sequence length (${sequenceLength}) doesn't match model configuration (${this.sequence_length}).`);
    }
    const output = pastValues.slice(1, sequenceStart).unfold(-2, this.patch_length, this.patch_stride);
    return output.transpose(-2, -3).contiguous();
  }
}

/**
 * PatchTSTModel with do_mask_input false: scaler, patchify, encoder. options.anyLength: the patches
 * from the input's length (any length from patch_length up to where the table's rows end).
 */
export class PatchTSTModel extends nn.Module {
  constructor(config = {}, { anyLength = false } = {}) {
    super();
    const c = { ...PATCHTST_DEFAULTS, ...config };
    if (c.activation_function !== 'gelu') throw new Error(`PatchTSTModel: activation_function ${JSON.stringify(c.activation_function)} is not ported (only gelu)`);
    if (c.do_mask_input) throw new Error('PatchTSTModel: do_mask_input is not ported (random and forecast masking draw at run time)');
    this.scaler = new PatchTSTScaler(c);
    this.patchifier = new PatchTSTPatchify(c, anyLength);
    this.masking = new nn.Identity();
    this.encoder = new PatchTSTEncoder(c, this.patchifier.num_patches, anyLength);
  }

  forward(pastValues, pastObservedMask = null) {
    const observed = pastObservedMask ?? om.onesLike(pastValues);
    const [scaledPastValues, loc, scale] = this.scaler.forward(pastValues, observed);
    const patchedValues = this.patchifier.forward(scaledPastValues);
    const lastHiddenState = this.encoder.forward(this.masking.forward(patchedValues));
    return [lastHiddenState, loc, scale, patchedValues];
  }
}
