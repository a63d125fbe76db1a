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
