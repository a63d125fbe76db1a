// Three more Hugging Face ports of examples/transformers/ against PyTorch (the harness is
// tests/js/transformers-ports.mjs): Qwen2 (LLaMA's layers with q/k/v biases, Mistral's causal mask
// with its sliding-window branch, off as the config says, lm_head tied), DistilBERT (a sinusoidal
// position table made in the constructor, the padding mask by view + expand_as + masked_fill) and
// ALBERT (factorized embeddings mapped to the hidden size, one layer group whose weights serve every
// layer). Each loads PyTorch's safetensors strictly, matches PyTorch eagerly at every fixture size,
// and is traced once with symbolic batch and seq, the .onnx run in onnxruntime-web and the graph in
// the Session at lengths 1, 7, 13, 30 and 120 against PyTorch and at three other sizes against eager.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks } from './helpers.mjs';
import { loadFixture, matchesEagerly, ranges, tracesEverywhere } from './transformers-ports.mjs';
import { Qwen2ForCausalLM } from '../../examples/transformers/qwen2.mjs';
import { DistilBertModel, createSinusoidalEmbeddings } from '../../examples/transformers/distilbert.mjs';
import { AlbertModel } from '../../examples/transformers/albert.mjs';

memoryHooks();

/** Each port: its class, its outputs' names, and its non-persistent buffers (Hugging Face's). */
const PORTS = {
  qwen2: { Model: Qwen2ForCausalLM, outputs: ['logits'], transient: ['model.rotary_emb.inv_freq'] },
  distilbert: { Model: DistilBertModel, outputs: ['last_hidden_state'], transient: ['embeddings.position_ids'] },
  albert: { Model: AlbertModel, outputs: ['last_hidden_state', 'pooler_output'], transient: ['embeddings.position_ids', 'embeddings.token_type_ids'] },
};

const SMALL_QWEN2 = { vocab_size: 16, hidden_size: 8, intermediate_size: 16, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 1 };

describe('Qwen2, DistilBERT and ALBERT load PyTorch\'s safetensors strictly and match PyTorch eagerly at every size', () => {
  for (const name of Object.keys(PORTS)) test(name, (t) => matchesEagerly(t, PORTS[name], name));

  test('a config naming an activation the port does not implement is refused, naming it', () => {
    for (const [Model, config, re] of [
      [Qwen2ForCausalLM, { hidden_act: 'gelu' }, /^Qwen2ForCausalLM: hidden_act "gelu" is not ported \(only silu\)$/],
      [DistilBertModel, { activation: 'relu' }, /^DistilBertModel: activation "relu" is not ported \(only gelu\)$/],
      [AlbertModel, { hidden_act: 'gelu' }, /^AlbertModel: hidden_act "gelu" is not ported \(only gelu_new\)$/],
    ]) assert.throws(() => new Model(config), (e) => e instanceof Error && re.test(e.message));
  });

  test('qwen2: lm_head is the embedding when tie_word_embeddings says so, its own parameter otherwise', () => {
    for (const tie of [true, false]) {
      om.manualSeed(5);
      const model = new Qwen2ForCausalLM({ ...SMALL_QWEN2, tie_word_embeddings: tie });
      try {
        assert.equal(model.lm_head.weight === model.model.embed_tokens.weight, tie);
        assert.equal(model.parameters().length, tie ? 14 : 15, 'the tied weight counted once');
        assert.ok('lm_head.weight' in model.stateDict() && 'model.embed_tokens.weight' in model.stateDict());
      } finally {
        model.dispose();
      }
    }
  });

  test('qwen2: a tied checkpoint as save_pretrained writes it (lm_head.weight not stored) loads with strict: false, lm_head missing and loaded', () => {
    const fx = loadFixture('qwen2');
    const { tensors } = om.safetensors.loadFile(new URL(`./fixtures/transformers/${fx.file}`, import.meta.url));
    const model = new Qwen2ForCausalLM(fx.config).eval();
    try {
      const stored = Object.fromEntries(Object.entries(tensors).filter(([k]) => k !== 'lm_head.weight'));
      assert.deepEqual(model.loadStateDict(stored, { strict: false }), { missingKeys: ['lm_head.weight'], unexpectedKeys: [] });
      om.tidy(() => assert.equal(model.lm_head.weight.sub(tensors['lm_head.weight']).abs().max().item(), 0));
    } finally {
      model.dispose();
      om.dispose(tensors);
    }
  });

  test('qwen2: the sliding window masks only with use_sliding_window (Qwen2Config drops it otherwise), as Mistral\'s mask', () => om.tidy(() => {
    const masks = [false, true].map((useSlidingWindow) => {
      const model = new Qwen2ForCausalLM({ ...SMALL_QWEN2, sliding_window: 2, use_sliding_window: useSlidingWindow });
      try {
        assert.equal(model.model.sliding_window, useSlidingWindow ? 2 : null);
        const embeds = om.zeros([1, 5, 8]);
        return model.model.causalMask(om.ones([1, 5], { dtype: 'int64' }), embeds, om.arange(0, 5, { dtype: 'int64' }));
      } finally {
        model.dispose();
      }
    });
    // row 4 of the causal mask: keys 0..4 all kept without the window; keys 0..2 hidden with a window of 2
    const row = (m) => [...m.select(2, 4).reshape(-1).toArray()].map((v) => (v === 0 ? 0 : 1));
    assert.deepEqual(row(masks[0]), [0, 0, 0, 0, 0]);
    assert.deepEqual(row(masks[1]), [1, 1, 1, 0, 0]);
  }));

  test('distilbert: the sinusoidal table the port makes is the one PyTorch made (in the state dict), fixed', () => {
    const fx = loadFixture('distilbert');
    assert.equal(fx.config.sinusoidal_pos_embds, true);
    const { tensors } = om.safetensors.loadFile(new URL(`./fixtures/transformers/${fx.file}`, import.meta.url));
    const model = new DistilBertModel(fx.config);
    try {
      const table = model.embeddings.position_embeddings.weight;
      assert.equal(table.requiresGrad, false, 'no gradient, as upstream\'s out.requires_grad = False');
      om.tidy(() => {
        const err = table.sub(tensors['embeddings.position_embeddings.weight']).abs().max().item();
        assert.equal(err, 0, `max |ours - PyTorch's| = ${err}`);
      });
    } finally {
      model.dispose();
      om.dispose(tensors);
    }
    const learned = new DistilBertModel({ ...fx.config, sinusoidal_pos_embds: false });
    try {
      assert.equal(learned.embeddings.position_embeddings.weight.requiresGrad, true, 'learned positions: a trainable table');
    } finally {
      learned.dispose();
    }
  });

  test('distilbert: createSinusoidalEmbeddings writes sin at even and cos at odd channels', () => om.tidy(() => {
    const out = om.zeros([3, 4]);
    createSinusoidalEmbeddings(3, 4, out);
    const expected = [0, 1, 2].flatMap((p) => [Math.sin(p), Math.cos(p), Math.sin(p / 100), Math.cos(p / 100)]);
    assert.deepEqual([...out.reshape(-1).toArray()], expected.map(Math.fround));
  }));

  test('albert: one layer group serves every layer: its weights once in the state dict, called num_hidden_layers times', () => {
    const fx = loadFixture('albert');
    const model = new AlbertModel(fx.config);
    try {
      const layerKeys = Object.keys(model.stateDict()).filter((k) => k.startsWith('encoder.albert_layer_groups.'));
      assert.ok(layerKeys.length > 0 && layerKeys.every((k) => k.startsWith('encoder.albert_layer_groups.0.albert_layers.0.')), layerKeys.join());
      let calls = 0;
      const layer = model.encoder.albert_layer_groups.at(0).albert_layers.at(0);
      const forward = layer.forward.bind(layer);
      layer.forward = (...args) => { calls++; return forward(...args); };
      om.tidy(() => { model.forward(om.tensor([[1n, 2n, 3n]])); });
      assert.equal(calls, fx.config.num_hidden_layers);
    } finally {
      model.dispose();
    }
  });

  test('albert: with num_hidden_groups groups, each serves num_hidden_layers / num_hidden_groups consecutive layers, its inner_group_num layers in turn', () => {
    om.manualSeed(6);
    const model = new AlbertModel({ vocab_size: 16, embedding_size: 4, hidden_size: 8, num_hidden_layers: 4, num_hidden_groups: 2,
      num_attention_heads: 2, intermediate_size: 16, inner_group_num: 2, max_position_embeddings: 8 });
    try {
      const groups = new Set(Object.keys(model.stateDict()).filter((k) => k.startsWith('encoder.albert_layer_groups.')).map((k) => k.split('.').slice(2, 5).join('.')));
      assert.deepEqual([...groups], ['0.albert_layers.0', '0.albert_layers.1', '1.albert_layers.0', '1.albert_layers.1']);
      const calls = [];
      [...model.encoder.albert_layer_groups].forEach((group, g) => [...group.albert_layers].forEach((layer, l) => {
        const forward = layer.forward.bind(layer);
        layer.forward = (...args) => { calls.push(`${g}.${l}`); return forward(...args); };
      }));
      om.tidy(() => { model.forward(om.tensor([[1n, 2n, 3n]])); });
      assert.deepEqual(calls, ['0.0', '0.1', '0.0', '0.1', '1.0', '1.1', '1.0', '1.1']);
    } finally {
      model.dispose();
    }
  });
});

describe('Qwen2, DistilBERT and ALBERT traced once with symbolic batch and seq, run in onnxruntime-web and the Session at sizes the trace never saw', () => {
  const traceAll = (t, name, check) => tracesEverywhere(t, PORTS[name], name, check);

  test('qwen2: symbolic batch and seq, unbounded (rotary from positions, the padding mask written in place)', (t) => traceAll(t, 'qwen2', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, Infinity, null] });
    const fx = loadFixture('qwen2');
    assert.ok(fx.cases.some((c) => c.sizes.seq > fx.config.sliding_window), 'fixture lengths past the (unused) window');
  }));
  test('distilbert: symbolic batch and seq; seq holds to max_position_embeddings (the table, as eagerly)', (t) => traceAll(t, 'distilbert', (tm) => {
    // seq ends at max_position_embeddings, where the position_ids buffer's slice is too short (as eagerly)
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, 128, 'add (call 4)'] });
  }));
  test('albert: symbolic batch and seq; the shared layer\'s weights are one set of initializers used by every layer', (t) => traceAll(t, 'albert', (tm) => {
    // seq ends at max_position_embeddings, where the token_type_ids buffer's slice is too short (as eagerly)
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, 128, 'expand (call 2)'] });
    const g = tm.graph();
    const layers = loadFixture('albert').config.num_hidden_layers;
    const users = (name) => g.nodes.filter((n) => n.inputs.includes(name));
    const shared = g.initializers.filter((i) => i.name.startsWith('encoder.albert_layer_groups.'));
    assert.equal(shared.length, 16, 'the one AlbertLayer\'s 16 tensors, once each');
    for (const i of shared) {
      let u = users(i.name);
      if (u.length === 1 && u[0].opType === 'Transpose') u = users(u[0].outputs[0]); // a Linear's weight: transposed once for every layer
      assert.equal(u.length, layers, `${i.name} read by each of the ${layers} layers (${u.map((n) => n.opType)})`);
    }
  }));
});
