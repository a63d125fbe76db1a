// What the Hugging Face ports in this folder share, as transformers' modeling_utils.py shares it.
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
