// Hugging Face's GPT-2 (examples/transformers/gpt2.mjs: upstream's modules and state-dict keys)
// with the weights PyTorch wrote: the small checkpoint tools/transformers_ports.py saves from a
// fixed seed (not trained here). input_ids [batch, seq] -> logits [batch, seq, 64]. The import and
// the weights' URL are relative to this file; the demo page's server serves both (docs/demo.md).
import * as om from 'onemodel';
import { GPT2LMHeadModel } from '../transformers/gpt2.mjs';

await om.ready();

/** The checkpoint's config.json (the fields the port reads; the others take GPT-2's defaults). */
const config = { vocab_size: 64, n_positions: 128, n_embd: 32, n_layer: 2, n_head: 4 };

/**
 * The checkpoint's tensors: read from disk in Node.js (a file: URL), fetched in a page (the demo
 * server serves the fixture; a failed fetch says which URL rather than a safetensors format error).
 */
async function loadWeights(url) {
  if (url.protocol === 'file:') return om.safetensors.loadFile(url).tensors;
  const res = await fetch(url);
  if (!res.ok) throw new Error(`gpt2.mjs: cannot fetch the weights at ${url}: HTTP ${res.status}`);
  return om.safetensors.load(new Uint8Array(await res.arrayBuffer())).tensors;
}

const model = new GPT2LMHeadModel(config).eval();
const weights = await loadWeights(new URL('../../tests/js/fixtures/transformers/gpt2.safetensors', import.meta.url));
try {
  model.loadStateDict(weights);   // strict: every key of the checkpoint, Hugging Face's names
} finally {
  om.dispose(weights);            // loadStateDict copied them into the model's own tensors
}

export default {
  title: "Hugging Face's GPT-2 with PyTorch's weights",
  model,
  inputs: { input_ids: [om.tensor([[5n, 17n, 42n, 8n, 63n, 0n], [31n, 2n, 2n, 50n, 9n, 27n]]), ['batch', 'seq']] },
  outputNames: ['logits'],
};
