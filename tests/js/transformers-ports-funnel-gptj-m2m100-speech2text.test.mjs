// GPT-J, M2M100's encoder and Speech2Text's encoder (examples/transformers/) against PyTorch (the
// harness is tests/js/transformers-ports.mjs): models whose lengths flow into computed shapes. GPT-J
// turns the first rotary_dim channels of each head in interleaved pairs (rotate_every_two) read by
// gather from a sin/cos table at the position ids; M2M100 reads a sinusoidal table at positions
// counted from the input ids and makes the table again, longer, when a sequence needs more rows (a
// branch on the length, here from 19 tokens); Speech2Text halves the frames twice ((T - 1) // 2 + 1
// per conv), makes the frames' mask by writing into zeros at computed indices, and reads the same
// growing table. Each loads PyTorch's safetensors strictly, matches PyTorch eagerly at every fixture
// size, and is traced once with batch and length symbolic; the .onnx runs in onnxruntime-web and the
// graph in the Session at the fixture sizes (1, odd lengths, each side of the table's growth, far
// above the traced one) and at three other sizes of every symbol.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks } from './helpers.mjs';
import { matchesEagerly, ranges, tracesEverywhere } from './transformers-ports.mjs';
import { GPTJForCausalLM, rotateEveryTwo } from '../../examples/transformers/gptj.mjs';
import { M2M100Encoder, M2M100SinusoidalPositionalEmbedding } from '../../examples/transformers/m2m100.mjs';
import { Speech2TextEncoder } from '../../examples/transformers/speech_to_text.mjs';
import { FunnelBaseModel } from '../../examples/transformers/funnel.mjs';

memoryHooks();

/** Each port: its class, its outputs' names, and its non-persistent buffers (Hugging Face's). */
const PORTS = {
  gptj: { Model: GPTJForCausalLM, outputs: ['logits'], transient: ['transformer.h.0.attn.embed_positions', 'transformer.h.1.attn.embed_positions'] },
  m2m100: { Model: M2M100Encoder, outputs: ['last_hidden_state'], transient: ['embed_positions.weights'] },
  speech2text: { Model: Speech2TextEncoder, outputs: ['last_hidden_state'], transient: ['embed_positions.weights'] },
  funnel: { Model: FunnelBaseModel, outputs: ['last_hidden_state'], transient: [] },
};

describe('GPT-J, M2M100 and Speech2Text load PyTorch\'s safetensors strictly and match PyTorch eagerly at every size', () => {
  for (const name of Object.keys(PORTS)) test(name, (t) => matchesEagerly(t, PORTS[name], name));

  test('gptj: rotateEveryTwo turns interleaved pairs (x0, x1) -> (-x1, x0)', () => om.tidy(() => {
    const x = om.arange(1, 9).float().view(1, 1, 2, 4); // two heads of 4 channels
    assert.deepEqual([...rotateEveryTwo(x).toArray()], [-2, 1, -4, 3, -6, 5, -8, 7]);
  }));

  test('m2m100: the sinusoidal table grows in forward when a sequence needs more rows, and its padding row is zeros', () => {
    const emb = new M2M100SinusoidalPositionalEmbedding(3, 4, 1);
    try {
      om.tidy(() => {
        assert.deepEqual(emb.weights.shape, [7, 4]); // 3 + 2, + 2 again in makeWeights
        assert.deepEqual([...emb.weights.select(0, 1).toArray()], [0, 0, 0, 0]);
        const ids = om.tensor([[5, 6, 7, 8, 9, 10]], { dtype: 'int64' }); // padding_idx + 1 + 6 = 8 > 7 rows
        const out = emb.forward(ids);
        assert.deepEqual(emb.weights.shape, [12, 4]); // 8 + 2 + 2
        // position 2 + i reads row 2 + i: sin(p), sin(p / 10000), cos(p), cos(p / 10000) of half_dim 2
        const p = 7;
        const row = [...out.select(1, 5).toArray()];
        const want = [Math.sin(p), Math.sin(p / 10000), Math.cos(p), Math.cos(p / 10000)];
        for (let i = 0; i < 4; i++) assert.ok(Math.abs(row[i] - want[i]) < 1e-6, `channel ${i}: ${row[i]} vs ${want[i]}`);
      });
    } finally {
      emb.dispose();
    }
  });

  test('a config the ports do not implement is refused, naming it', () => {
    for (const [Model, config, re] of [
      [GPTJForCausalLM, { activation_function: 'relu' }, /^GPTJForCausalLM: activation_function "relu" is not ported \(only gelu_new\)$/],
      [GPTJForCausalLM, { tie_word_embeddings: true }, /^GPTJForCausalLM: tie_word_embeddings true is not ported \(only false\)$/],
      [M2M100Encoder, { activation_function: 'gelu' }, /^M2M100Encoder: activation_function "gelu" is not ported \(only relu\)$/],
      [Speech2TextEncoder, { num_conv_layers: 3 }, /^Speech2TextEncoder: conv_kernel_sizes has 2 sizes for num_conv_layers 3$/],
    ]) assert.throws(() => new Model(config), (e) => e instanceof Error && re.test(e.message));
  });
});

describe('GPT-J, M2M100 and Speech2Text traced once with batch and length symbolic, run in onnxruntime-web and the Session at sizes the trace never saw', () => {
  test('gptj: traced at length 6 with a padding mask, right up to n_positions', (t) => tracesEverywhere(t, PORTS.gptj, 'gptj', (tm) => {
    // past the sin/cos table's 128 rows the gather fails, eagerly too: the range ends there
    const { batch, seq } = ranges(tm);
    assert.deepEqual(batch, [1, Infinity, null]);
    assert.deepEqual(seq.slice(0, 2), [1, 128]);
    assert.match(seq[2], /at batch=\d+, seq=129 the model fails at gather \(call \d+\): gather: index 128 is out of range/);
  }));

  // the table made again in forward: each of the tracer's runs starts from the model as given (om.trace
  // puts its fields back), so the graph is an If on the length, the table a constant up to the last
  // length it holds and computed at the run's length past it (before, the run that grew it left it
  // grown for the recording run, and the trace was refused)
  test('m2m100: traced at length 6 (below the table\'s growth at 19), right on both sides and far above', (t) => tracesEverywhere(t, PORTS.m2m100, 'm2m100', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, Infinity, null] });
    assert.deepEqual(tm.symbols.find((s) => s.name === 'seq').branches, [{ min: 1, max: 18 }, { min: 19, max: Infinity }]);
    assert.deepEqual(tm.graph().nodes.map((n) => n.opType).filter((o) => o === 'If'), ['If']);
  }));

  // the relative positions' arange runs to ceil(T / 2) + 2 * ceil(T / 4) (once refused: not a size
  // the graph could compute; now T plus a table of T mod 4); below 5 tokens the position vectors made
  // for the pooled blocks do not fit, eagerly too (PyTorch fails there as well): the range starts at 5
  test('funnel: traced at length 11 (11 -> 6 -> 3), right from the least length 5 at every parity of every block and far above', (t) => tracesEverywhere(t, PORTS.funnel, 'funnel', (tm) => {
    const [batch, seq] = ['batch', 'seq'].map((n) => tm.symbols.find((s) => s.name === n));
    assert.deepEqual([batch.min, batch.max, batch.narrowedBy, batch.checked], [1, Infinity, null, { min: 1, max: 32768 }]);
    assert.deepEqual([seq.min, seq.max, seq.checked], [5, Infinity, { min: 5, max: 32768 }]);
    assert.match(seq.narrowedBy, /^trace: at batch=\d+, seq=4 the model fails \(mul_: output with shape \[\d+,4,2,1\] doesn't match the broadcast shape \[\d+,4,2,2\]\)$/);
  }));

  test('speech2text: traced at 24 frames (6 out), right from 1 frame, on both sides of the table\'s growth (73 frames) and far above', (t) => tracesEverywhere(t, PORTS.speech2text, 'speech2text', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], frames: [1, Infinity, null] });
    // 72 frames are 18 after the convs, the last the table of 20 rows holds
    assert.deepEqual(tm.symbols.find((s) => s.name === 'frames').branches, [{ min: 1, max: 72 }, { min: 73, max: Infinity }]);
  }));
});
