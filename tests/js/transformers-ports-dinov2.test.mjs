// Hugging Face's DINOv2 (examples/transformers/dinov2.mjs) against PyTorch (the harness is
// tests/js/transformers-ports.mjs): Dinov2Model with the gelu MLP (last_hidden_state and the CLS
// token's pooler_output) and Dinov2ForImageClassification with the SwiGLU FFN (the classifier over
// the CLS token and the patch tokens' mean). Each loads PyTorch's safetensors strictly, matches
// PyTorch eagerly at every fixture size (the native 35 x 35, where upstream adds the position table
// itself; the native grid at other pixel counts; one patch; sizes no multiple of the patch 7; a grid
// below the table's; far above the traced one), and is traced once at 56 x 49 with symbolic batch,
// height and width; the .onnx runs in onnxruntime-web and the graph in the Session at every fixture
// size and at three other sizes of every symbol.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks } from './helpers.mjs';
import { loadFixture, loadPort, matchesEagerly, tracesEverywhere } from './transformers-ports.mjs';
import { image } from './torchvision-ports.mjs';
import { Dinov2Model, Dinov2ForImageClassification } from '../../examples/transformers/dinov2.mjs';

memoryHooks();

/** Each port: its class, its outputs' names, and its non-persistent buffers (none). */
const PORTS = {
  dinov2: { Model: Dinov2Model, outputs: ['last_hidden_state', 'pooler_output'], transient: [] },
  dinov2_swiglu: { Model: Dinov2ForImageClassification, outputs: ['logits'], transient: [] },
};

describe('DINOv2 loads PyTorch\'s safetensors strictly and matches PyTorch eagerly at every size', () => {
  for (const name of Object.keys(PORTS)) test(name, (t) => matchesEagerly(t, PORTS[name], name));

  test('dinov2: the state dict in PyTorch\'s order (the mask token between the class token and the position table)', () => {
    const net = new Dinov2Model({ hidden_size: 8, num_hidden_layers: 1, num_attention_heads: 2, image_size: 14, patch_size: 7 });
    try {
      assert.deepEqual(Object.keys(net.stateDict()).slice(0, 5), ['embeddings.cls_token', 'embeddings.mask_token',
        'embeddings.position_embeddings', 'embeddings.patch_embeddings.projection.weight', 'embeddings.patch_embeddings.projection.bias']);
      const swiglu = new Dinov2ForImageClassification({ hidden_size: 32, num_hidden_layers: 1, num_attention_heads: 2, use_swiglu_ffn: true });
      // hidden 128 -> (int(128 * 2 / 3) + 7) // 8 * 8 = 88 per half, as upstream rounds it
      assert.deepEqual(swiglu.dinov2.encoder.layer[0].mlp.weights_in.weight.shape, [176, 32]);
      swiglu.dispose();
    } finally {
      net.dispose();
    }
  });

  test('a config the port does not implement is refused, naming it, before anything is made', () => {
    const before = om.memory().tensors;
    for (const [config, re] of [
      [{ hidden_act: 'relu' }, /^Dinov2Model: hidden_act "relu" is not ported \(only gelu\)$/],
      [{ drop_path_rate: 0.1 }, /^Dinov2Model: drop_path_rate 0\.1 is not ported/],
      [{ hidden_size: 30, num_attention_heads: 4 }, /^Dinov2Model: The hidden size \(30\) is not a multiple of the number of attention heads \(4\)$/],
    ]) assert.throws(() => new Dinov2Model(config), (e) => e instanceof Error && re.test(e.message));
    assert.equal(om.memory().tensors, before, 'nothing is left made');
  });
});

describe('DINOv2 traced once with symbolic batch, height and width, run in onnxruntime-web and the Session at sizes the trace never saw', () => {
  for (const name of Object.keys(PORTS)) {
    test(`${name}: traced at 56 x 49, right at the native 35 x 35 too (the table interpolated to its own grid is the table)`, (t) => tracesEverywhere(t, PORTS[name], name, (tm) => {
      const conv = /^conv2d \(call \d+\)$/;
      assert.deepEqual(Object.fromEntries(tm.symbols.map((s) => [s.name, [s.min, s.max]])), { batch: [1, Infinity], height: [7, Infinity], width: [7, Infinity] });
      for (const s of tm.symbols.filter((x) => x.name !== 'batch')) assert.match(s.narrowedBy, conv, `${s.name}: below one patch the conv fails, eagerly too`);
      assert.ok(loadFixture(name).cases.some((c) => c.sizes.height === 35 && c.sizes.width === 35), 'a fixture case at the native size');
    }));
  }

  test('dinov2: traced at the native 35 x 35 (the port interpolates while om.Tracer.active, as upstream while torch.jit traces), right at every size', (t) => (
    tracesEverywhere(t, PORTS.dinov2, 'dinov2', (tm) => {
      assert.deepEqual(Object.fromEntries(tm.symbols.map((s) => [s.name, [s.min, s.max]])), { batch: [1, Infinity], height: [7, Infinity], width: [7, Infinity] });
    }, undefined, () => ({ pixel_values: image([2, 3, 35, 35], 1) }))));
});
