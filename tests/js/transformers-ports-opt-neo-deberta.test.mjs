// Three more Hugging Face ports of examples/transformers/ against PyTorch (the harness is
// tests/js/transformers-ports.mjs): OPT in both layouts (positions from the padding mask at an offset
// of 2; pre-norm 125m, and post-norm 350m with project_in/project_out), GPT-Neo (a global and a
// local layer: the local causal buffer tril(ones) ^ tril(ones, -window_size) sliced to the length,
// window 5) and DeBERTa-v2 (relative positions in log buckets, disentangled attention gathering
// content-to-position and position-to-content scores). Each loads PyTorch's safetensors strictly,
// matches PyTorch eagerly at every fixture size, and is traced once with symbolic batch and seq, the
// .onnx run in onnxruntime-web and the graph in the Session at the fixture's other lengths (1, below,
// at and past GPT-Neo's window and DeBERTa's bucket threshold, and 20x the traced length) against
// PyTorch and at three other sizes against eager.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced } from './helpers.mjs';
import { loadFixture, matchesEagerly, ranges, tracesEverywhere } from './transformers-ports.mjs';
import { OPTForCausalLM, OPTLearnedPositionalEmbedding } from '../../examples/transformers/opt.mjs';
import { GPTNeoForCausalLM, expandAttentionTypes } from '../../examples/transformers/gpt_neo.mjs';
import { DebertaV2Model, buildRelativePosition, makeLogBucketPosition } from '../../examples/transformers/deberta_v2.mjs';

memoryHooks();

/** Each port: its class, its outputs' names, and its non-persistent buffers (Hugging Face's). */
const PORTS = {
  opt: { Model: OPTForCausalLM, outputs: ['logits'], transient: [] },
  opt_350m: { Model: OPTForCausalLM, outputs: ['logits'], transient: [] },
  gpt_neo: {
    Model: GPTNeoForCausalLM,
    outputs: ['logits'],
    transient: ['transformer.h.0.attn.attention.bias', 'transformer.h.0.attn.attention.masked_bias',
      'transformer.h.1.attn.attention.bias', 'transformer.h.1.attn.attention.masked_bias'],
  },
  deberta_v2: { Model: DebertaV2Model, outputs: ['last_hidden_state'], transient: ['embeddings.position_ids'] },
};

describe('OPT, GPT-Neo and DeBERTa-v2 load PyTorch\'s safetensors strictly and match PyTorch eagerly at every size', () => {
  for (const name of Object.keys(PORTS)) test(name, (t) => matchesEagerly(t, PORTS[name], name));

  test('a config naming an activation the port does not implement is refused, naming it', () => {
    for (const [Model, config, re] of [
      [OPTForCausalLM, { activation_function: 'gelu' }, /^OPTForCausalLM: activation_function "gelu" is not ported \(only relu\)$/],
      [GPTNeoForCausalLM, { activation_function: 'gelu' }, /^GPTNeoForCausalLM: activation_function "gelu" is not ported \(only gelu_new\)$/],
      [DebertaV2Model, { hidden_act: 'relu' }, /^DebertaV2Model: hidden_act "relu" is not ported \(only gelu\)$/],
      [DebertaV2Model, { conv_kernel_size: 3 }, /^DebertaV2Model: conv_kernel_size > 0 \(the ConvLayer of deberta-v2-xlarge\) is not ported$/],
    ]) assert.throws(() => new Model(config), (e) => e instanceof Error && re.test(e.message));
  });

  test('opt: the two layouts\' modules follow do_layer_norm_before and word_embed_proj_dim', () => {
    const [pre, post] = ['opt', 'opt_350m'].map((n) => loadFixture(n).config);
    const a = new OPTForCausalLM(pre);
    const b = new OPTForCausalLM(post);
    try {
      assert.ok(a.model.decoder.final_layer_norm !== null && a.model.decoder.project_in === null && a.model.decoder.project_out === null);
      assert.ok(b.model.decoder.final_layer_norm === null && b.model.decoder.project_in !== null && b.model.decoder.project_out !== null);
      assert.deepEqual(a.model.decoder.embed_positions.weight.shape, [pre.max_position_embeddings + 2, pre.hidden_size], 'two rows more: the offset');
      assert.ok(a.lm_head.weight === a.model.decoder.embed_tokens.weight && b.lm_head.weight === b.model.decoder.embed_tokens.weight, 'lm_head tied');
    } finally {
      a.dispose();
      b.dispose();
    }
  });

  test('opt: positions count the kept tokens, offset by 2; padded tokens read row 1', () => om.tidy(() => {
    const emb = new OPTLearnedPositionalEmbedding(4, 1);
    try {
      emb.weight.requiresGrad = false;
      emb.weight.copy_(om.arange(0, 6).view(6, 1));
      const rows = emb.forward(om.tensor([[1n, 1n, 1n, 0n], [1n, 0n, 0n, 0n]]));
      assert.deepEqual([...rows.reshape(-1).toArray()], [2, 3, 4, 1, 2, 1, 1, 1]);
    } finally {
      emb.dispose();
    }
  }));

  test('gpt_neo: the layers alternate global and local; the local buffer keeps the last window_size keys', () => {
    assert.deepEqual(expandAttentionTypes([[['global', 'local'], 2]]), ['global', 'local', 'global', 'local']);
    const fx = loadFixture('gpt_neo');
    const model = new GPTNeoForCausalLM(fx.config);
    try {
      const [g, l] = [0, 1].map((i) => model.transformer.h.at(i).attn);
      assert.deepEqual([g.attention_type, l.attention_type], ['global', 'local']);
      assert.equal(fx.config.window_size, 5);
      const row = (attn, i) => om.tidy(() => [...attn.attention.bias.select(2, i).reshape(-1).slice(0, 0, i + 2).toArray()].map(Number));
      // row 8 of the causal buffer: keys 0..8 in the global layer, the last 5 (4..8) in the local one
      assert.deepEqual(row(g, 8), [1, 1, 1, 1, 1, 1, 1, 1, 1, 0]);
      assert.deepEqual(row(l, 8), [0, 0, 0, 0, 1, 1, 1, 1, 1, 0]);
    } finally {
      model.dispose();
    }
    assert.throws(() => new GPTNeoForCausalLM({ ...fx.config, attention_types: [[['global'], 1]] }), /len\(config\.attention_layers\) = 1/);
  });

  test('deberta_v2: relative positions stay themselves up to position_buckets / 2 and take log buckets beyond', () => om.tidy(() => {
    const rel = om.tensor([[-100n, -31n, -9n, -5n, -4n, -3n, 0n, 3n, 4n, 5n, 9n, 31n, 100n]]);
    const buckets = [...makeLogBucketPosition(rel, 8, 64).reshape(-1).toArray()];
    // mid 4: |p| <= 4 kept; beyond, sign * (ceil(log(|p| / 4) / log(63 / 4) * 3) + 4)
    const expected = [-100, -31, -9, -5, -4, -3, 0, 3, 4, 5, 9, 31, 100].map((p) => (Math.abs(p) <= 4 ? p
      : Math.sign(p) * (Math.ceil(Math.fround(Math.fround(Math.log(Math.abs(p) / 4)) / Math.fround(Math.log(63 / 4))) * 3) + 4)));
    assert.deepEqual(buckets, expected);
    const r = buildRelativePosition(3, 3);
    assert.deepEqual(r.shape, [1, 3, 3]);
    assert.deepEqual([...r.reshape(-1).toArray()].map(Number), [0, -1, -2, 1, 0, -1, 2, 1, 0]);
  }));
});

describe('OPT, GPT-Neo and DeBERTa-v2 traced once with symbolic batch and seq, run in onnxruntime-web and the Session at sizes the trace never saw', () => {
  const traceAll = (t, name, check, traceCase) => tracesEverywhere(t, PORTS[name], name, check, undefined, traceCase);

  // OPT's positions count the kept tokens (a CumSum of the mask in the graph), so no length bounds
  // them: a padded batch runs past max_position_embeddings as long as no row keeps more tokens
  test('opt: symbolic batch and seq, unbounded (the positions come from the mask)', (t) => traceAll(t, 'opt', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, Infinity, null] });
  }));
  test('opt_350m: post-norm, projections; symbolic batch and seq, unbounded', (t) => traceAll(t, 'opt_350m', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, Infinity, null] });
  }));
  test('gpt_neo: symbolic batch and seq, traced past the window (6), right below, at and past it and at 120', (t) => traceAll(t, 'gpt_neo', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, 128, 'where (call 44)'] });
  }));
  test('gpt_neo: traced below the window (4), right past it and far above', (t) => traceAll(t, 'gpt_neo', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, 128, 'where (call 44)'] });
  }, 2));
  // small random configurations the fixtures do not cover, each traced once and checked against
  // eager in onnxruntime-web and the Session at three other sizes of each symbol
  test('other layouts: DeBERTa-v2\'s own (position embeddings, token types, separate position projections, no log buckets), OPT and GPT-Neo without a mask', () => withTraced((keep, trace) => {
    const ids = (b, t) => om.tensor(Array.from({ length: b }, (_, i) => Array.from({ length: t }, (_, j) => BigInt((i * 5 + j * 3) % 16))));
    const limits = (tm) => tm.symbols.map((s) => [s.name, s.min, s.max]);
    const x = ids(3, 5);
    om.manualSeed(3);
    const deberta = new DebertaV2Model({ vocab_size: 16, hidden_size: 8, num_hidden_layers: 1, num_attention_heads: 2, intermediate_size: 16,
      max_position_embeddings: 32, type_vocab_size: 2, relative_attention: true, max_relative_positions: 6, position_buckets: -1,
      pos_att_type: 'c2p|p2c', share_att_key: false, norm_rel_ebd: 'none', position_biased_input: true }).eval();
    const opt = new OPTForCausalLM({ vocab_size: 16, hidden_size: 8, num_hidden_layers: 1, ffn_dim: 16, num_attention_heads: 2, max_position_embeddings: 32 }).eval();
    const neo = new GPTNeoForCausalLM({ vocab_size: 16, hidden_size: 8, num_layers: 2, num_heads: 2, max_position_embeddings: 32,
      window_size: 3, attention_types: [[['local', 'global'], 1]] }).eval();
    try {
      assert.ok(deberta.encoder.layer.at(0).attention.self.pos_key_proj && deberta.encoder.layer.at(0).attention.self.pos_query_proj);
      const types = om.tensor([[0n, 0n, 1n, 1n, 1n], [0n, 1n, 1n, 1n, 1n], [0n, 0n, 0n, 0n, 1n]]);
      const td = trace(deberta, { input_ids: [x, ['B', 'T']], attention_mask: [om.ones([3, 5], { dtype: 'int64' }), ['B', 'T']], token_type_ids: [types, ['B', 'T']] });
      assert.deepEqual(limits(td), [['B', 1, Infinity], ['T', 1, 32]], 'the position table ends at 32, as eagerly');
      // without a mask the positions count every token: the table of 32 (+ 2) rows ends the length at 32
      assert.deepEqual(limits(trace((i) => opt.forward(i), { input_ids: [x, ['B', 'T']] })), [['B', 1, Infinity], ['T', 1, 32]]);
      assert.deepEqual(limits(trace((i) => neo.forward(i), { input_ids: [x, ['B', 'T']] })), [['B', 1, Infinity], ['T', 1, 32]]);
    } finally {
      for (const m of [deberta, opt, neo]) m.dispose();
    }
  }));
  test('deberta_v2: symbolic batch and seq, unbounded (the log buckets and gathers are graph nodes)', (t) => traceAll(t, 'deberta_v2', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, Infinity, null] });
  }));
});
