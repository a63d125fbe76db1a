// Mistral (Hugging Face transformers' MistralForCausalLM, modeling_mistral.py, eager attention)
// ported to onemodel as a user ports it: upstream's layers are LLaMA's (grouped-query attention
// with repeat_kv, rotary embedding, RMSNorm, SiLU-gated MLP), so they are llama.mjs's; the model
// differs in its causal mask, which also hides the keys more than `sliding_window` positions back
// and takes a padding mask, written into it by slice assignment. The state dict's keys are
// LLaMA's (`model.layers.0.self_attn.q_proj.weight`, ...). Inference without a key-value cache.
// forward(input_ids [batch, seq] int64, attention_mask [batch, seq] (1 keep, 0 pad; default all
// ones)) -> logits [batch, seq, vocab_size].
import * as om from 'onemodel';
import { LLAMA_DEFAULTS, LlamaForCausalLM, LlamaModel } from './llama.mjs';
import { FLOAT32_MIN } from './modeling_utils.mjs';

/** MistralConfig's defaults (Mistral 7B v0.1) for the fields this port reads. */
export const MISTRAL_DEFAULTS = {
  ...LLAMA_DEFAULTS, intermediate_size: 14336, num_key_value_heads: 8, rms_norm_eps: 1e-6, sliding_window: 4096,
};

export class MistralModel extends LlamaModel {
  constructor(config) {
    super(config);
    this.sliding_window = config.sliding_window;
  }

  /**
   * _update_causal_mask (eager, no cache) with a padding mask [batch, seq] (default all ones):
   * [batch, 1, seq, seq], finfo.min above the diagonal, more than sliding_window positions back
   * and at padded keys.
   */
  causalMask(attentionMask, inputTensor, cachePosition) {
    const [batch, sequenceLength] = inputTensor.shape;
    const mask = attentionMask ?? om.ones([batch, sequenceLength], { dtype: 'int64' });
    const targetLength = mask.shape[mask.shape.length - 1];
    let causalMask = om.full([sequenceLength, targetLength], FLOAT32_MIN);
    const positions = cachePosition.reshape(-1, 1);
    const diagonalAttendMask = om.arange(0, targetLength, { dtype: 'int64' }).gt(positions);
    if (this.sliding_window !== null) {
      // if we have sliding window, we should not attend to tokens beyond sliding window length
      const slidingAttendMask = om.arange(0, targetLength, { dtype: 'int64' }).le(positions.sub(this.sliding_window));
      diagonalAttendMask.bitwiseOr_(slidingAttendMask);
    }
    causalMask.mul_(diagonalAttendMask);
    causalMask = causalMask.unsqueeze(0).unsqueeze(0).expand(batch, 1, -1, -1);
    causalMask = causalMask.clone(); // copy to contiguous memory for in-place edit
    const maskLength = mask.shape[mask.shape.length - 1];
    let paddingMask = causalMask.slice(3, 0, maskLength).add(mask.unsqueeze(1).unsqueeze(2));
    paddingMask = paddingMask.eq(0);
    // causal_mask[:, :, :, :mask_length] = causal_mask[:, :, :, :mask_length].masked_fill(padding_mask, min)
    causalMask.slice(3, 0, maskLength).copy_(causalMask.slice(3, 0, maskLength).maskedFill(paddingMask, FLOAT32_MIN));
    return causalMask;
  }
}

/** LlamaForCausalLM with Mistral's defaults and model. */
export class MistralForCausalLM extends LlamaForCausalLM {
  static defaults = MISTRAL_DEFAULTS;
  static Model = MistralModel;
}
