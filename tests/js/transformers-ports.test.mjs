// The Hugging Face ports of examples/transformers/ (GPT-2, BERT, LLaMA, the T5 encoder, the Whisper
// encoder) against PyTorch: tools/transformers_ports.py writes each model's state dict as
// tests/js/fixtures/transformers/<name>.safetensors and its outputs at several sizes as <name>.json.
// Each port loads the file with a strict loadStateDict (its state-dict keys are Hugging Face's, the
// non-persistent buffers absent from the file), matches PyTorch eagerly at every size (max |ours -
// PyTorch| <= 1e-5 * max(1, max |PyTorch|)), and is traced ONCE with symbolic batch and sequence
// (and the attention mask's axes); the .onnx run in onnxruntime-web and the graph in the Session
// agree with PyTorch (the same bound) at every fixture size: size 1, odd lengths, 5x and 20x the
// traced length (T5's across max_distance, where the buckets cap), and with eager at three other
// sizes of every symbol.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks } from './helpers.mjs';
import { loadFixture, matchesEagerly, ranges, tracesEverywhere } from './transformers-ports.mjs';
import { economy } from '../../tools/graph_economy.mjs';
import { GPT2LMHeadModel } from '../../examples/transformers/gpt2.mjs';
import { BertModel } from '../../examples/transformers/bert.mjs';
import { LlamaForCausalLM } from '../../examples/transformers/llama.mjs';
import { T5EncoderModel } from '../../examples/transformers/t5.mjs';
import { WhisperEncoder, sinusoids } from '../../examples/transformers/whisper.mjs';
import { RobertaModel, createPositionIdsFromInputIds } from '../../examples/transformers/roberta.mjs';
import { MistralForCausalLM } from '../../examples/transformers/mistral.mjs';

memoryHooks();

/** Each port: its class, its outputs' names, and its non-persistent buffers (Hugging Face's). */
const PORTS = {
  gpt2: { Model: GPT2LMHeadModel, outputs: ['logits'], transient: ['transformer.h.0.attn.bias', 'transformer.h.1.attn.bias'] },
  bert: { Model: BertModel, outputs: ['last_hidden_state', 'pooler_output'], transient: ['embeddings.position_ids', 'embeddings.token_type_ids'] },
  llama: { Model: LlamaForCausalLM, outputs: ['logits'], transient: ['model.rotary_emb.inv_freq'] },
  t5: { Model: T5EncoderModel, outputs: ['last_hidden_state'], transient: [] },
  whisper: { Model: WhisperEncoder, outputs: ['last_hidden_state'], transient: [] },
  roberta: { Model: RobertaModel, outputs: ['last_hidden_state', 'pooler_output'], transient: ['embeddings.position_ids', 'embeddings.token_type_ids'] },
  mistral: { Model: MistralForCausalLM, outputs: ['logits'], transient: ['model.rotary_emb.inv_freq'] },
};

describe('Hugging Face ports load PyTorch\'s safetensors strictly and match PyTorch eagerly at every size', () => {
  for (const name of Object.keys(PORTS)) {
    test(name, (t) => matchesEagerly(t, PORTS[name], name));
  }

  test('a config naming an activation the port does not implement is refused, naming it', () => {
    for (const [Model, config, re] of [
      [GPT2LMHeadModel, { activation_function: 'relu' }, /^GPT2LMHeadModel: activation_function "relu" is not ported \(only gelu_new\)$/],
      [BertModel, { hidden_act: 'gelu_new' }, /^BertModel: hidden_act "gelu_new" is not ported \(only gelu\)$/],
      [LlamaForCausalLM, { hidden_act: 'gelu' }, /^LlamaForCausalLM: hidden_act "gelu" is not ported \(only silu\)$/],
      [T5EncoderModel, { feed_forward_proj: 'gated-gelu' }, /^T5EncoderModel: feed_forward_proj "gated-gelu" is not ported \(only relu\)$/],
      [WhisperEncoder, { activation_function: 'relu' }, /^WhisperEncoder: activation_function "relu" is not ported \(only gelu\)$/],
      [MistralForCausalLM, { hidden_act: 'gelu' }, /^MistralForCausalLM: hidden_act "gelu" is not ported \(only silu\)$/],
    ]) assert.throws(() => new Model(config), (e) => e instanceof Error && re.test(e.message));
  });

  test('roberta: position ids count the non-padding tokens from padding_idx + 1; padding takes padding_idx', () => om.tidy(() => {
    const ids = om.tensor([[0n, 5n, 1n, 1n], [1n, 2n, 3n, 1n]]);
    assert.deepEqual([...createPositionIdsFromInputIds(ids, 1).toArray()].map(Number), [2, 3, 1, 1, 1, 2, 3, 1]);
    assert.deepEqual([...createPositionIdsFromInputIds(ids, 1, 4).toArray()].map(Number), [6, 7, 1, 1, 1, 6, 7, 1]);
  }));

  test('whisper: the sinusoids the port makes are the ones PyTorch makes (the table in the state dict)', () => {
    const { tensors } = om.safetensors.loadFile(new URL(`./fixtures/transformers/${loadFixture('whisper').file}`, import.meta.url));
    try {
      om.tidy(() => {
        const ref = tensors['embed_positions.weight'];
        const ours = sinusoids(...ref.shape);
        const err = ours.sub(ref).abs().max().item();
        // exp and sin of angles up to 63 rad in float32: a last-bit difference of an angle moves sin by ~4e-6
        assert.ok(err <= 1e-5, `max |sinusoids - PyTorch's| = ${err}`);
      });
    } finally {
      om.dispose(tensors);
    }
  });
});

describe('Hugging Face ports traced once with symbolic axes, run in onnxruntime-web and the Session at sizes the trace never saw', () => {
  const traceAll = (t, name, check) => tracesEverywhere(t, PORTS[name], name, check);

  // A range narrows only where eager fails: past n_positions the position embedding's index is out
  // of range (GPT-2, BERT), past 2 * max_source_positions frames the position table is too short
  // (Whisper); LLaMA's rotary and T5's buckets are computed at every length, so seq is unbounded.
  test('gpt2: symbolic batch and seq; seq holds to n_positions; shape-computation nodes counted', (t) => traceAll(t, 'gpt2', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, 128, 'where (call 28)'] });
    const e = economy(tm);
    t.diagnostic(`gpt2: ${e.shapeNodes} shape-computation nodes (${e.ops})`);
    // The target: at most 4, the same at 12 layers (tests/js/graph-economy.test.mjs): the
    // Shape, the Slice of wpe for wpe(arange(T).unsqueeze(0)), the bias buffer's two Slices (one
    // chain for every layer); Conv1D's view(-1, nx) / addmm / view(size_out) is one MatMul.
    assert.equal(e.ops, 'Shape,Slice,Slice,Slice');
    assert.ok(!tm.graph().nodes.some((n) => n.opType === 'Concat'), 'no size computed for a view back from the flattened rows');
  }));
  test('bert: symbolic batch and seq of input_ids and attention_mask, a padding mask', (t) => traceAll(t, 'bert', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, 128, 'expand (call 3)'] });
  }));
  test('llama: symbolic batch and seq, rotary cos/sin computed in the graph at every length', (t) => traceAll(t, 'llama', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, Infinity, null] });
    const ops = new Set(tm.graph().nodes.map((n) => n.opType));
    assert.ok(ops.has('Cos') && ops.has('Sin'), 'the rotary angles\' cos and sin are graph nodes');
  }));
  test('t5: symbolic batch and seq, relative position buckets computed in the graph across max_distance', (t) => traceAll(t, 't5', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, Infinity, null] });
    const fx = loadFixture('t5');
    assert.ok(fx.cases.some((c) => c.sizes.seq > fx.config.relative_attention_max_distance + 1), 'a fixture length has offsets past max_distance');
    const ops = new Set(tm.graph().nodes.map((n) => n.opType));
    assert.ok(ops.has('Log') && ops.has('Min') && ops.has('Where'), 'the buckets are computed in the graph');
  }));
  test('roberta: symbolic batch and seq, position ids from the input ids (a cumsum) in the graph', (t) => traceAll(t, 'roberta', (tm) => {
    // seq ends at max_position_embeddings, where the token_type_ids buffer's slice is too short (as eagerly)
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, 130, 'expand (call 11)'] });
    assert.ok(tm.graph().nodes.some((n) => n.opType === 'CumSum'), 'the positions are computed from the ids');
  }));
  test('mistral: symbolic batch and seq, the sliding-window mask across the window, a padding mask written in place', (t) => traceAll(t, 'mistral', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, Infinity, null] });
    const fx = loadFixture('mistral');
    assert.ok(fx.cases.some((c) => c.sizes.seq > fx.config.sliding_window) && fx.cases.some((c) => c.sizes.seq <= fx.config.sliding_window),
      'fixture lengths on both sides of the window');
  }));
  test('whisper: symbolic batch and frames, Conv1d front end, frames hold to 2 * max_source_positions', (t) => traceAll(t, 'whisper', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], frames: [1, 128, 'add (call 7)'] });
  }));
});
