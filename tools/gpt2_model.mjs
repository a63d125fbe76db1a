// The model tools/bench_export.mjs exports (in Node and in Chromium): examples/zoo/gpt.mjs's GPT
// with `layers` of the zoo's nn.MultiheadAttention blocks (the zoo's own model has one block of
// each kind), each registering its own [maxLen, maxLen] causal-mask buffer; the LM head is tied
// to the token embedding. tools/bench_export_torch.py builds the same shapes in PyTorch.
import * as om from 'onemodel';
import { Block, GPT } from '../examples/zoo/gpt.mjs';

/** GPT-2 small's sizes. */
export const GPT2_SMALL = { vocab: 50257, d: 768, heads: 12, maxLen: 1024 };

export class GPT2 extends om.nn.Module {
  constructor({ vocab, d, heads, maxLen }, layers) {
    super();
    this.wte = new om.nn.Embedding(vocab, d);
    this.wpe = new om.nn.Embedding(maxLen, d);
    this.h = new om.nn.ModuleList(Array.from({ length: layers }, () => new Block(d, heads, maxLen, 'mha')));
    this.ln_f = new om.nn.LayerNorm([d]);
    this.lm_head = new om.nn.Linear(d, vocab, { bias: false });
    this.lm_head.weight.dispose();
    this.lm_head.weight = this.wte.weight; // tied, as the zoo's
  }
}
GPT2.prototype.forward = GPT.prototype.forward;
