// Four more Hugging Face ports of examples/transformers/ against PyTorch (the harness is
// tests/js/transformers-ports.mjs): BLOOM (ALiBi slopes per head times a cumsum of the padding
// mask, GPT-J's causal mask), Wav2Vec2 (strided Conv1d feature encoder over the audio, feature
// projection, the weight-normed grouped positional conv with its trailing pad removed, post-norm
// encoder), SegFormer (overlapping patch embeddings, spatial-reduction attention on tokens reshaped
// to [b, c, h, w], the MLP decode head's bilinear interpolate to the first stage's size) and ViT's
// embeddings with interpolate_pos_encoding (the position table bicubic-interpolated to the image's
// patch grid). Each loads PyTorch's safetensors strictly, matches PyTorch eagerly at every fixture
// size, and is traced once with every axis symbolic that the architecture allows; the .onnx runs
// in onnxruntime-web and the graph in the Session at the fixture sizes (against PyTorch: size 1
// where valid, odd sizes, both sides of each stride, far above the traced one) and at three other
// sizes of every symbol (against eager).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks } from './helpers.mjs';
import { loadFixture, loadPort, matchesEagerly, ranges, tracesEverywhere } from './transformers-ports.mjs';
import { image } from './torchvision-ports.mjs';
import { BloomForCausalLM, buildAlibiTensor } from '../../examples/transformers/bloom.mjs';
import { Wav2Vec2Model } from '../../examples/transformers/wav2vec2.mjs';
import { SegformerForSemanticSegmentation } from '../../examples/transformers/segformer.mjs';
import { ViTEmbeddings } from '../../examples/transformers/vit.mjs';

memoryHooks();

/** Each port: its class, its outputs' names, and its non-persistent buffers (Hugging Face's). */
const PORTS = {
  bloom: { Model: BloomForCausalLM, outputs: ['logits'], transient: [] },
  wav2vec2: { Model: Wav2Vec2Model, outputs: ['last_hidden_state', 'extract_features'], transient: [] },
  segformer: { Model: SegformerForSemanticSegmentation, outputs: ['logits'], transient: [] },
  vit_embeddings: { Model: ViTEmbeddings, outputs: ['embeddings'], transient: [] },
};

describe('BLOOM, Wav2Vec2, SegFormer and ViT\'s embeddings load PyTorch\'s safetensors strictly and match PyTorch eagerly at every size', () => {
  for (const name of Object.keys(PORTS)) test(name, (t) => matchesEagerly(t, PORTS[name], name));

  test('bloom: the ALiBi slopes of 6 heads are 4 powers of 1/4 and 2 odd powers of 1/2; positions count the kept tokens', () => om.tidy(() => {
    const mask = om.tensor([[1n, 1n, 1n, 0n], [1n, 1n, 0n, 0n]]);
    const alibi = buildAlibiTensor(mask, 6);
    assert.deepEqual(alibi.shape, [12, 1, 4]);
    const slopes = [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8];
    const positions = [[0, 1, 2, 0], [0, 1, 0, 0]];
    assert.deepEqual([...alibi.toArray()], positions.flatMap((p) => slopes.flatMap((s) => p.map((i) => s * i))));
  }));

  test('wav2vec2: below the feature encoder\'s least length (60 samples) the eager model fails as PyTorch\'s conv does', () => {
    const fx = loadFixture('wav2vec2');
    const model = loadPort(PORTS.wav2vec2, 'wav2vec2', fx);
    try {
      om.tidy(() => assert.deepEqual(model.forward(om.zeros([1, 60]))[0].shape, [1, 1, 32]));
      assert.throws(() => om.tidy(() => model.forward(om.zeros([1, 59]))), (e) => e instanceof om.OmError);
    } finally {
      model.dispose();
    }
  });

  test('a config the ports do not implement is refused, naming it', () => {
    for (const [Model, config, re] of [
      [BloomForCausalLM, { pretraining_tp: 2, slow_but_exact: true }, /^BloomForCausalLM: slow_but_exact with pretraining_tp > 1 is not ported$/],
      [Wav2Vec2Model, { do_stable_layer_norm: true, num_hidden_layers: 1, hidden_size: 8, num_attention_heads: 2 }, /^Wav2Vec2Model: do_stable_layer_norm \(the pre-norm encoder\) is not ported$/],
      [Wav2Vec2Model, { hidden_act: 'relu' }, /^Wav2Vec2Model: hidden_act "relu" is not ported \(only gelu\)$/],
      [SegformerForSemanticSegmentation, { reshape_last_stage: false }, /^SegformerForSemanticSegmentation: reshape_last_stage false is not ported$/],
    ]) assert.throws(() => new Model(config), (e) => e instanceof Error && re.test(e.message));
  });
});

/**
 * Asserts tm's symbols: { name: [min, max, narrowedBy] }, narrowedBy null or a RegExp it matches;
 * each symbol checked over its whole range (from its minimum, to its max or 2^15; a batch of
 * images to where an input would hold 2^26 elements, the runs' bound: docs/symbolic-axes.md).
 */
function assertSymbols(tm, expected) {
  assert.deepEqual(tm.symbols.map((s) => s.name), Object.keys(expected), 'the symbols');
  for (const s of tm.symbols) {
    const [min, max, why] = expected[s.name];
    assert.deepEqual([s.min, s.max], [min, max], `${s.name}: the range`);
    assert.ok(why === null ? s.narrowedBy === null : why.test(s.narrowedBy), `${s.name}: narrowed by ${s.narrowedBy}`);
    const top = Math.min(max, 32768);
    assert.ok(s.checked.min === min && s.checked.max <= top && s.checked.max >= Math.min(top, 4096), `${s.name}: the range checked ${JSON.stringify(s.checked)}`);
  }
}

describe('BLOOM, Wav2Vec2, SegFormer and ViT\'s embeddings traced once with symbolic axes, run in onnxruntime-web and the Session at sizes the trace never saw', () => {
  const traceAll = (t, name, check) => tracesEverywhere(t, PORTS[name], name, check);

  test('bloom: symbolic batch and seq, unbounded (ALiBi from the cumsum of the mask, the padding mask written in place)', (t) => traceAll(t, 'bloom', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, Infinity, null] });
  }));
  test('wav2vec2: symbolic batch and samples; samples hold from 60 (one frame), where the eager model fails below', (t) => traceAll(t, 'wav2vec2', (tm) => {
    assertSymbols(tm, {
      batch: [1, Infinity, null],
      samples: [60, Infinity, /^trace: at batch=\d+, samples=59 the model fails at conv1d \(call \d+\): conv1d: kernel size .* is larger than the padded input/],
    });
  }));
  test('segformer: symbolic batch, height and width; the image sizes hold from 29 (an 8 x 8 first stage for the 8 x 8 reduction), where the eager model fails below', (t) => traceAll(t, 'segformer', (tm) => {
    const conv = /^conv2d \(call \d+\)$/;
    assertSymbols(tm, { batch: [1, Infinity, null], height: [29, Infinity, conv], width: [29, Infinity, conv] });
    // one graph across the width 61, where the first stage's 8 x 8 reduction grows from one column
    // to two: kv.reshape(batch, channels, -1) keeps the -1, which holds on both sides (copying the
    // reduced height, exact only while the reduced width is 1, would need an If cut there)
    assert.ok(!tm.graph().nodes.some((n) => n.opType === 'If'), 'one graph, no If');
    assert.ok(tm.symbols.every((s) => s.branches === undefined), JSON.stringify(tm.symbols));
    const widths = loadFixture('segformer').cases.map((c) => c.sizes.width);
    assert.ok(widths.some((w) => w < 61) && widths.some((w) => w >= 61), `fixture widths on both sides of 61: ${widths}`);
  }));
  test('vit_embeddings: traced at a size the table does not fit (24 x 20), symbolic batch, height and width; right at the native 16 x 16 too, where upstream returns the table itself', (t) => traceAll(t, 'vit_embeddings', (tm) => {
    const conv = /^conv2d \(call \d+\)$/;
    assertSymbols(tm, { batch: [1, Infinity, null], height: [4, Infinity, conv], width: [4, Infinity, conv] });
    const ops = tm.graph().nodes.map((n) => n.opType);
    // the table interpolated in the graph: bicubic to a grid that is no power-of-two multiple of
    // the table's is the eager taps, four Gathers an axis (tests/js/graph-economy.test.mjs)
    assert.deepEqual([ops.filter((o) => o === 'Gather').length, ops.includes('Resize')], [8, false], 'the table interpolated in the graph');
    assert.ok(loadFixture('vit_embeddings').cases.some((c) => c.sizes.height === 16 && c.sizes.width === 16), 'a fixture case at the native size');
  }));

  test('vit_embeddings: traced at the native 16 x 16 (the port interpolates while om.Tracer.active, as upstream while torch.jit traces), right at every size', (t) => (
    tracesEverywhere(t, PORTS.vit_embeddings, 'vit_embeddings', (tm) => {
      const conv = /^conv2d \(call \d+\)$/;
      assertSymbols(tm, { batch: [1, Infinity, null], height: [4, Infinity, conv], width: [4, Infinity, conv] });
    }, undefined, () => ({ pixel_values: image([2, 3, 16, 16], 1) }))));
});
