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
import { memoryHooks, withTraced } from './helpers.mjs';
import { caseInputs, caseOutputs, compare, sizesText } from './families.mjs';
import { economy } from '../../tools/graph_economy.mjs';
import { GPT2LMHeadModel } from '../../examples/transformers/gpt2.mjs';
import { BertModel } from '../../examples/transformers/bert.mjs';
import { LlamaForCausalLM } from '../../examples/transformers/llama.mjs';
import { T5EncoderModel } from '../../examples/transformers/t5.mjs';
import { WhisperEncoder, sinusoids } from '../../examples/transformers/whisper.mjs';
import { RobertaModel, createPositionIdsFromInputIds } from '../../examples/transformers/roberta.mjs';
import { MistralForCausalLM } from '../../examples/transformers/mistral.mjs';
import { readFileSync } from 'node:fs';

memoryHooks();

const DIR = new URL('./fixtures/transformers/', import.meta.url);

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

function loadFixture(name) {
  return JSON.parse(readFileSync(new URL(`${name}.json`, DIR), 'utf8'));
}

/** The port of `name` built from the fixture's Hugging Face config, the .safetensors loaded strictly, in eval mode. */
function loadPort(name, fx) {
  const { Model, transient } = PORTS[name];
  const model = new Model(fx.config);
  const { tensors } = om.safetensors.loadFile(new URL(fx.file, DIR));
  try {
    assert.deepEqual(Object.keys(model.stateDict()).sort(), Object.keys(tensors).sort(), `${name}: state-dict keys`);
    const buffers = model.namedBuffers().map(([k]) => k);
    for (const k of transient) assert.ok(buffers.includes(k) && !(k in tensors), `${name}: ${k} is a non-persistent buffer`);
    assert.deepEqual(model.loadStateDict(tensors, { strict: true }), { missingKeys: [], unexpectedKeys: [] });
    return model.eval();
  } catch (e) {
    model.dispose();
    throw e;
  } finally {
    om.dispose(tensors);
  }
}

/** The model's outputs as an array (BERT returns two). */
function run(model, inputs) {
  const out = model.forward(...Object.values(inputs));
  return Array.isArray(out) ? out : [out];
}

describe('Hugging Face ports load PyTorch\'s safetensors strictly and match PyTorch eagerly at every size', () => {
  for (const name of Object.keys(PORTS)) {
    test(name, (t) => {
      const fx = loadFixture(name);
      const model = loadPort(name, fx);
      try {
        const errors = fx.cases.map((c) => om.tidy(() => {
          const outs = run(model, caseInputs(c));
          assert.equal(outs.length, c.outputs.length, 'output count');
          return Math.max(...outs.map((o, i) => compare(o, c.outputs[i], `${name} ${PORTS[name].outputs[i]} at ${sizesText(c.sizes)}`)));
        }));
        t.diagnostic(`${name}: max |ours - PyTorch| ${errors.map((e) => e.toExponential(1)).join(', ')} at ${fx.cases.map((c) => sizesText(c.sizes)).join('; ')}`);
      } finally {
        model.dispose();
      }
    });
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
    const fx = loadFixture('whisper');
    const { tensors } = om.safetensors.loadFile(new URL(fx.file, DIR));
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
  /** Traces port `name` at the fixture's trace case; keeps the graph for every fixture case and three other sizes. */
  async function traceAll(t, name, check) {
    const fx = loadFixture(name);
    const { outputs } = PORTS[name];
    const model = loadPort(name, fx);
    const reports = [];
    try {
      await withTraced((keep) => {
        const at = fx.cases[fx.trace_case];
        const examples = caseInputs(at);
        const inputs = Object.fromEntries(Object.entries(examples).map(([k, v]) => [k, [v, fx.axes[k]]]));
        const tm = om.trace(model, inputs, { outputNames: outputs });
        keep(tm, examples, run(model, examples), `eager at ${sizesText(at.sizes)} (traced)`, model);
        for (const c of fx.cases) keep(tm, caseInputs(c), Object.values(caseOutputs(c)), `PyTorch at ${sizesText(c.sizes)}`);
        assert.deepEqual(tm.inputs.map((i) => i.shape), Object.entries(fx.axes).map(([k, axes]) => axes.map((a, d) => a ?? examples[k].shape[d])), 'graph input shapes');
        t.diagnostic(`${name}: ${tm.graph().nodes.length} nodes, traced at ${sizesText(at.sizes)}; symbols ${JSON.stringify(tm.symbols)}`);
        check?.(tm, t);
      }, { onReport: (label, r) => reports.push(`${label}: ${Math.max(...r.outputs.map((o) => o.maxError)).toExponential(1)}`) });
    } finally {
      model.dispose();
      if (reports.length) t.diagnostic(`${name}: max |onnx - reference| ${reports.join('; ')}`);
    }
    assert.equal(reports.length, 4 + fx.cases.length, 'every run reported');
  }

  /** tm's symbols as { name: [min, max, narrowedBy] }, and every one checked from 1 to its max (2^15 when unbounded). */
  function ranges(tm) {
    for (const s of tm.symbols) assert.deepEqual(s.checked, { min: 1, max: Math.min(s.max, 32768) }, `${s.name}: the range checked`);
    return Object.fromEntries(tm.symbols.map((s) => [s.name, [s.min, s.max, s.narrowedBy]]));
  }

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
