// LongT5's encoder of examples/transformers/longt5.mjs against PyTorch (tools/longt5_ports.py writes
// the fixtures; the harness is tests/js/transformers-ports.mjs), with both attention kinds: local
// (block_len 5: the length padded to a multiple of the block, three blocks concatenated, the
// local mask and the 3-block relative bias) and transient-global (block_len 4 and global blocks of
// 5: the global tokens aggregated by one_hot and einsum from block ids made by a cumsum of 1/5 and
// floor, the side bias split into blocks). Each loads PyTorch's safetensors strictly, matches
// PyTorch eagerly at lengths 1, 2, every residue of the block and of the global block, below and
// above the first global block, and 5x the traced length, at batches 1 to 3 with padded rows, and
// is traced once with symbolic batch and seq: the .onnx runs in onnxruntime-web and the graph in
// the Session at the fixture's lengths (against PyTorch) and at three other sizes (against eager).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { memoryHooks } from './helpers.mjs';
import { matchesEagerly, ranges, tracesEverywhere } from './transformers-ports.mjs';
import { LongT5EncoderModel } from '../../examples/transformers/longt5.mjs';

memoryHooks();

const PORT = { Model: LongT5EncoderModel, outputs: ['last_hidden_state'], transient: [] };

describe('LongT5 loads PyTorch\'s safetensors strictly and matches PyTorch eagerly at every size', () => {
  test('longt5_local', (t) => matchesEagerly(t, PORT, 'longt5_local'));
  test('longt5_tglobal', (t) => matchesEagerly(t, PORT, 'longt5_tglobal'));

  test('an attention kind upstream does not know is refused, naming it', () => {
    assert.throws(() => new LongT5EncoderModel({ d_model: 8, d_kv: 4, d_ff: 8, num_layers: 1, num_heads: 2, vocab_size: 4, encoder_attention_type: 'global' }),
      /^Error: For encoder attention mechanism, either `local` or `transient-global` attention type is expected, but got global\.$/);
  });
});

describe('LongT5 traced once with symbolic batch and seq, run in onnxruntime-web and the Session at sizes the trace never saw', () => {
  test('longt5_local: traced at 8 (padded to 10); 1, 2, every residue of block_len 5 and 40', (t) => tracesEverywhere(t, PORT, 'longt5_local', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, Infinity, null] });
  }));

  test('longt5_tglobal: traced at 11 (2 global tokens); 1 to 4 (none), every residue of 4 and 5, 20, 21 and 55', (t) => tracesEverywhere(t, PORT, 'longt5_tglobal', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, Infinity, null] });
  }));
});
