// What the Hugging Face ports in this folder share (as transformers shares it in modeling_utils.py
// and its modules): the mask value, the padding mask, the config defaults, the RMS norm.
import * as om from 'onemodel';

/** torch.finfo(torch.float32).min: the additive mask value of masked positions. */
export const FLOAT32_MIN = -3.4028234663852886e38;

/**
 * ModuleUtilsMixin.get_extended_attention_mask of a padding mask [batch, seq] (1 keep, 0 pad; any
 * dtype): [batch, 1, 1, seq] float32, 0 where kept and finfo.min where padded, added to the scores.
 */
export function extendedAttentionMask(attentionMask) {
  const extended = attentionMask.unsqueeze(1).unsqueeze(2).float(); // attention_mask[:, None, None, :]
  return extended.neg().add(1).mul(FLOAT32_MIN); // (1.0 - extended) * finfo.min
}

/**
 * The config a port reads: the model's defaults overridden by config (a config.json's object),
 * refusing a value of `field` other than the one the port implements (an activation).
 */
export function portConfig(model, defaults, config, field, supported) {
  const c = { ...defaults, ...config };
  if (c[field] !== supported) throw new Error(`${model}: ${field} ${JSON.stringify(c[field])} is not ported (only ${supported})`);
  return c;
}

/** The RMS norm LLaMA (LlamaRMSNorm) and T5 (T5LayerNorm) share: weight * x / sqrt(mean(x^2) + eps), no bias. */
export class RMSNorm extends om.nn.Module {
  constructor(hiddenSize, eps = 1e-6) {
    super();
    this.weight = om.ones([hiddenSize]);
    this.weight.requiresGrad = true;
    this.variance_epsilon = eps;
  }

  forward(hiddenStates) {
    const variance = hiddenStates.float().pow(2).mean(-1, true);
    return this.weight.mul(hiddenStates.mul(variance.add(this.variance_epsilon).rsqrt()));
  }
}

/**
 * modeling_attn_mask_utils' AttentionMaskConverter._expand_mask: a padding mask [batch, srcLen]
 * (1 keep, 0 pad) -> [batch, 1, tgtLen, srcLen] float32, 0 where kept and finfo.min where padded.
 */
export function expandMask(mask, tgtLen = null) {
  const [bsz, srcLen] = mask.shape;
  const expandedMask = mask.unsqueeze(1).unsqueeze(2).expand(bsz, 1, tgtLen ?? srcLen, srcLen).float();
  const invertedMask = expandedMask.neg().add(1); // 1.0 - expanded_mask
  return invertedMask.maskedFill(invertedMask.bool(), FLOAT32_MIN);
}

/**
 * AttentionMaskConverter._make_causal_mask (no cache): [bsz, 1, tgtLen, tgtLen], finfo.min above
 * the diagonal, 0 on and below it.
 */
export function makeCausalMask([bsz, tgtLen]) {
  const mask = om.full([tgtLen, tgtLen], FLOAT32_MIN);
  const maskCond = om.arange(0, mask.shape[mask.shape.length - 1], { dtype: 'int64' });
  mask.maskedFill_(maskCond.lt(maskCond.add(1).view(mask.shape[mask.shape.length - 1], 1)), 0);
  return mask.unsqueeze(0).unsqueeze(0).expand(bsz, 1, tgtLen, tgtLen);
}

/**
 * _prepare_4d_causal_attention_mask (AttentionMaskConverter.to_4d, causal, no cache, no sliding
 * window) of a padding mask [batch, seq]: [batch, 1, seq, seq], finfo.min above the diagonal and at
 * padded keys. Upstream makes the causal part only when seq > 1 (at 1 it masks nothing); onemodel's
 * tracer refuses a branch on a symbolic length, so it is made at every length.
 */
export function prepare4dCausalAttentionMask(attentionMask, [bsz, tgtLen]) {
  const expandedAttnMask = expandMask(attentionMask, tgtLen);
  return makeCausalMask([bsz, tgtLen]).maskedFill(expandedAttnMask.bool(), FLOAT32_MIN);
}
