// More Hugging Face ports of examples/transformers/ against PyTorch (the harness is
// tests/js/transformers-ports.mjs): the Whisper decoder (causal self-attention and cross-attention
// over encoder states of a length of their own: two symbolic lengths), Phi (partial rotary from cached tables indexed by position ids,
// parallel attention and MLP), Gemma (embeddings scaled by sqrt(hidden), RMSNorm by 1 + weight,
// GeGLU, multi-query attention with head_dim apart from hidden) and CLIP's text model (a causal mask
// made in place, the pooled output gathered at an index computed from the input ids). Each loads
// PyTorch's safetensors strictly, matches PyTorch eagerly at every fixture size, and is traced once
// with symbolic batch and lengths, the .onnx run in onnxruntime-web and the graph in the Session at
// lengths 1, 7, 13, 30 and 120 against PyTorch and at three other sizes against eager.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced } from './helpers.mjs';
import { economy } from '../../tools/graph_economy.mjs';
import { caseInputs, loadFixture, loadPort, matchesEagerly, ranges, run, tracesEverywhere } from './transformers-ports.mjs';
import { caseOutputs, sizesText } from './families.mjs';
import { PhiForCausalLM } from '../../examples/transformers/phi.mjs';
import { GemmaForCausalLM } from '../../examples/transformers/gemma.mjs';
import { CLIPTextModel } from '../../examples/transformers/clip_text.mjs';
import { WhisperDecoder } from '../../examples/transformers/whisper.mjs';

memoryHooks();

const rotary = (layers, names) => Array.from({ length: layers }, (_, i) => names.map((n) => `model.layers.${i}.self_attn.rotary_emb.${n}`)).flat();

/** Each port: its class, its outputs' names, and its non-persistent buffers (Hugging Face's). */
const PORTS = {
  phi: { Model: PhiForCausalLM, outputs: ['logits'], transient: rotary(2, ['inv_freq', 'cos_cached', 'sin_cached']) },
  gemma: { Model: GemmaForCausalLM, outputs: ['logits'], transient: rotary(2, ['inv_freq']) },
  clip_text: { Model: CLIPTextModel, outputs: ['last_hidden_state', 'pooler_output'], transient: ['text_model.embeddings.position_ids'] },
  whisper_decoder: { Model: WhisperDecoder, outputs: ['last_hidden_state'], transient: [] },
};

describe('More Hugging Face ports load PyTorch\'s safetensors strictly and match PyTorch eagerly at every size', () => {
  for (const name of Object.keys(PORTS)) test(name, (t) => matchesEagerly(t, PORTS[name], name));

  test('a config naming what the port does not implement is refused, naming it', () => {
    for (const [Model, config, re] of [
      [PhiForCausalLM, { hidden_act: 'gelu' }, /^PhiForCausalLM: hidden_act "gelu" is not ported \(only gelu_new\)$/],
      [PhiForCausalLM, { qk_layernorm: true }, /^PhiForCausalLM: qk_layernorm is not ported$/],
      [GemmaForCausalLM, { hidden_activation: 'gelu' }, /^GemmaForCausalLM: hidden_activation "gelu" is not ported \(only gelu_pytorch_tanh\)$/],
      [CLIPTextModel, { hidden_act: 'gelu' }, /^CLIPTextModel: hidden_act "gelu" is not ported \(only quick_gelu\)$/],
    ]) assert.throws(() => new Model(config), (e) => e instanceof Error && re.test(e.message));
  });

  test('clip_text: with eos_token_id other than 2 the pooled row is the first eos_token_id, not the argmax', () => om.tidy(() => {
    const config = { vocab_size: 16, hidden_size: 8, intermediate_size: 16, num_hidden_layers: 1, num_attention_heads: 2, max_position_embeddings: 8 };
    om.manualSeed(3);
    const model = new CLIPTextModel({ ...config, eos_token_id: 5 }).eval();
    try {
      const ids = om.tensor([[9n, 5n, 15n, 5n], [5n, 12n, 3n, 1n]]);
      const [last, pooled] = model.forward(ids);
      assert.deepEqual(pooled.toArray(), om.stack([last.select(0, 0).select(0, 1), last.select(0, 1).select(0, 0)]).toArray());
    } finally {
      model.dispose();
    }
  }));
});

describe('More Hugging Face ports traced once with symbolic axes, run in onnxruntime-web and the Session at sizes the trace never saw', () => {
  // Phi's rotary tables are cached to max_position_embeddings rows and rebuilt longer (a new
  // buffer) when a longer sequence comes, as upstream: the graph holds to that length, declared.
  const phiAxes = (fx) => {
    const seq = om.Dim('seq', { max: fx.config.max_position_embeddings });
    return { input_ids: ['batch', seq], attention_mask: ['batch', seq] };
  };
  test('phi: symbolic batch and seq to max_position_embeddings (declared), partial rotary from the cached tables', (t) => tracesEverywhere(t, PORTS.phi, 'phi', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, 128, null] });
  }, phiAxes));

  // The rotary tables are cached to max_position_embeddings rows and made again, as a new buffer,
  // for a longer sequence (examples/transformers/phi.mjs, PhiRotaryEmbedding.forward). om.trace puts
  // the model's fields back before each of its runs, so no run reads the tables another run made:
  // undeclared, the graph is an If on the length, the cached tables' rows up to 128 and the tables
  // made at the run's length past it (once refused: the first run above 128 left the model with its
  // own tables for the recording run), right on both sides; the model keeps its own tables.
  test('phi: without a declared maximum, an If on the length: the cached tables up to max_position_embeddings, made again past it, right on both sides', async (t) => {
    const fx = loadFixture('phi');
    const model = loadPort(PORTS.phi, 'phi', fx);
    try {
      const rotaryEmb = model.model.layers[0].self_attn.rotary_emb, cached = rotaryEmb.cos_cached;
      await withTraced((keep) => {
        const at = fx.cases[fx.trace_case];
        const examples = caseInputs(at);
        const tm = om.trace(model, { input_ids: [examples.input_ids, ['batch', 'seq']], attention_mask: [examples.attention_mask, ['batch', 'seq']] }, { outputNames: PORTS.phi.outputs });
        assert.equal(rotaryEmb.cos_cached, cached, 'the model keeps the tables it had');
        assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, Infinity, null] });
        assert.deepEqual(tm.symbols.find((s) => s.name === 'seq').branches, [{ min: 1, max: 128 }, { min: 129, max: Infinity }]);
        keep(tm, examples, run(model, examples), 'eager at the traced size', model);
        for (const c of fx.cases) keep(tm, caseInputs(c), Object.values(caseOutputs(c)), `PyTorch at ${sizesText(c.sizes)}`);
        for (const T of [128, 129, 300]) { // each side of the cached rows, against a model as loaded
          const fresh = loadPort(PORTS.phi, 'phi', fx);
          try {
            const feeds = { input_ids: om.arange(0, T, { dtype: 'int64' }).remainder(fx.config.vocab_size).view(1, T), attention_mask: om.ones([1, T], { dtype: 'int64' }) };
            keep(tm, feeds, run(fresh, feeds), `eager at seq=${T}`);
          } finally {
            fresh.dispose();
          }
        }
      });
    } finally {
      model.dispose();
    }
  });

  test('gemma: symbolic batch and seq, unbounded (rotary from positions, the padding mask written in place)', (t) => tracesEverywhere(t, PORTS.gemma, 'gemma', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, Infinity, null] });
  }));

  test('whisper_decoder: symbolic batch, decoder and encoder lengths (cross-attention over states of another length)', (t) => tracesEverywhere(t, PORTS.whisper_decoder, 'whisper_decoder', (tm) => {
    // dec ends at max_target_positions, where the position table's slice is too short (as eagerly)
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], dec: [1, 64, 'add (call 14)'], enc: [1, Infinity, null] });
    const fx = loadFixture('whisper_decoder');
    assert.ok(fx.cases.some((c) => c.sizes.dec > c.sizes.enc) && fx.cases.some((c) => c.sizes.dec < c.sizes.enc), 'decoder lengths above and below the encoder\'s');
  }));

  test('clip_text: symbolic batch and seq, the pooled output gathered at the argmax of the ids at every length', (t) => tracesEverywhere(t, PORTS.clip_text, 'clip_text', (tm) => {
    // seq ends at max_position_embeddings, where the position_ids buffer's slice is too short (as eagerly)
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, 128, 'add (call 5)'] });
    const ops = tm.graph().nodes.map((n) => n.opType);
    assert.ok(ops.includes('ArgMax') && ops.includes('Gather'), `the pooled row's index is computed from the ids in the graph (${[...new Set(ops)]})`);
  }));
});

// GPT-NeoX's and GPT-J's rotary code builds the angles with torch.einsum('i,j->ij', t, inv_freq)
// in forward, and attention code writes its products as einsums: om.einsum is a composite of
// permutes and matmuls, so the traced graph must be what a hand-written one is, at every size.
test('einsum in attention (rotary angles, scores, weighted values): one op each in the graph, right at other sizes', () => withTraced((keep, trace) => {
  class EinsumAttention extends om.nn.Module {
    constructor() {
      super();
      this.qkv = new om.nn.Linear(16, 48);
      this.registerBuffer('inv_freq', om.tensor([1, 0.1]), { persistent: false });
    }

    forward(x) {
      const [b, t] = x.shape;
      const [q, k, v] = this.qkv.forward(x).view(b, t, 3, 2, 8).permute(2, 0, 3, 1, 4).unbind(0);
      const freqs = om.einsum('i,j->ij', om.arange(0, t, { dtype: 'int64' }).float(), this.inv_freq);
      const emb = om.cat([freqs, freqs, freqs, freqs], -1);
      const qr = q.mul(emb.cos()).add(q.mul(emb.sin()));
      const scores = om.einsum('bhqd,bhkd->bhqk', qr, k).softmax(-1);
      return om.einsum('bhqk,bhkd->bqhd', scores, v).reshape(b, t, 16);
    }
  }
  om.manualSeed(4);
  const model = new EinsumAttention().eval();
  try {
    const tm = trace(model, { x: [om.randn([2, 5, 16], { seed: 4 }), ['batch', 'seq', null]] });
    const ops = tm.graph().nodes.map((n) => n.opType);
    // each einsum (the outer product and both batched products) is one Einsum node
    assert.equal(ops.filter((o) => o === 'Einsum').length, 3, `three einsums (${ops})`);
    assert.equal(ops.filter((o) => o === 'MatMul').length, 1, `the Linear (${ops})`);
    assert.equal(ops.filter((o) => o === 'Transpose').length, 2, `the Linear's weight and the permute (${ops})`);
    assert.equal(economy(tm).ops, 'Shape,Squeeze,Range,Cast,Einsum,Concat,Cos,Sin'); // the angles from the positions
    assert.deepEqual(tm.symbols.map((s) => [s.name, s.max]), [['batch', Infinity], ['seq', Infinity]]);
  } finally {
    model.dispose();
  }
}));
