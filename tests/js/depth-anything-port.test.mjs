// Hugging Face's Depth Anything (examples/transformers/depth_anything.mjs over dinov2.mjs's
// Dinov2Backbone) against PyTorch (tools/depth_anything_ports.py; the harness is
// tests/js/transformers-ports.mjs): DepthAnythingForDepthEstimation at patch 14 with upstream's four
// reassemble factors [4, 2, 1, 0.5] and the relative head, and at patch 6 with three stages
// [2, 1, 0.25] (a stride-4 conv), the SwiGLU FFN and the metric head (sigmoid times max_depth). Each
// loads PyTorch's safetensors strictly, matches PyTorch eagerly at every fixture size (the native
// grid, where upstream adds the position table itself; one patch; sizes no multiple of the patch;
// grids one patch high or wide; far above the traced one), and is traced once with symbolic batch,
// height and width; the .onnx runs in onnxruntime-web and the graph in the Session at every fixture
// size and at three other sizes of every symbol.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, near } from './helpers.mjs';
import { loadFixture, loadPort, matchesEagerly, tracesEverywhere } from './transformers-ports.mjs';
import { DepthAnythingForDepthEstimation } from '../../examples/transformers/depth_anything.mjs';
import { Dinov2Backbone } from '../../examples/transformers/dinov2.mjs';

memoryHooks();

/** Each port: its class, its output's name, its non-persistent buffers (none). */
const PORTS = {
  depth_anything: { Model: DepthAnythingForDepthEstimation, outputs: ['predicted_depth'], transient: [] },
  depth_anything_metric: { Model: DepthAnythingForDepthEstimation, outputs: ['predicted_depth'], transient: [] },
};

describe('Depth Anything loads PyTorch\'s safetensors strictly and matches PyTorch eagerly at every size', () => {
  for (const name of Object.keys(PORTS)) test(name, (t) => matchesEagerly(t, PORTS[name], name));
});

describe('Depth Anything traced once with symbolic batch, height and width, run in onnxruntime-web and the Session at sizes the trace never saw', () => {
  for (const name of Object.keys(PORTS)) {
    test(name, (t) => tracesEverywhere(t, PORTS[name], name, (tm) => {
      const fx = loadFixture(name);
      const patch = fx.config.patch_size;
      assert.deepEqual(Object.fromEntries(tm.symbols.map((s) => [s.name, [s.min, s.max]])), { batch: [1, Infinity], height: [patch, Infinity], width: [patch, Infinity] });
      for (const s of tm.symbols.filter((x) => x.name !== 'batch')) {
        assert.match(s.narrowedBy, /^conv2d \(call 1\)$/, `${s.name}: below one patch the patch conv fails, eagerly too`);
        assert.deepEqual(s.checked, { min: patch, max: 32768 }, `${s.name}: checked from one patch to the default bound`);
      }
      assert.ok(fx.cases.some((c) => c.sizes.height === patch && c.sizes.width === patch), 'a fixture case at one patch');
    }));
  }
});

describe('Depth Anything\'s config and its DINOv2 backbone', () => {
  const tiny = {
    backbone_config: { model_type: 'dinov2', hidden_size: 8, num_hidden_layers: 2, num_attention_heads: 2, image_size: 14, patch_size: 7, out_indices: [1, 2] },
    patch_size: 7, reassemble_hidden_size: 8, reassemble_factors: [2, 0.5], neck_hidden_sizes: [4, 8], fusion_hidden_size: 4, head_hidden_size: 2,
  };

  test('the state dict has upstream\'s keys: the backbone\'s, one resize per factor but 1 (the identity has none), every fusion layer\'s two residual units', () => {
    const net = new DepthAnythingForDepthEstimation({ ...tiny, reassemble_factors: [4, 1], neck_hidden_sizes: [4, 4] });
    try {
      const keys = Object.keys(net.stateDict());
      assert.deepEqual(keys.slice(0, 3), ['backbone.embeddings.cls_token', 'backbone.embeddings.mask_token', 'backbone.embeddings.position_embeddings']);
      assert.deepEqual(keys.filter((k) => k.includes('.resize.')), ['neck.reassemble_stage.layers.0.resize.weight', 'neck.reassemble_stage.layers.0.resize.bias']);
      assert.deepEqual(net.neck.reassemble_stage.layers[0].resize.weight.shape, [4, 4, 4, 4], 'ConvTranspose2d of kernel and stride 4');
      // upstream makes residual_layer1 in the first fusion layer too, which never has a residual: its weights load, unused
      assert.ok(keys.includes('neck.fusion_stage.layers.0.residual_layer1.convolution1.weight'));
      assert.deepEqual(keys.slice(-6), ['head.conv1.weight', 'head.conv1.bias', 'head.conv2.weight', 'head.conv2.bias', 'head.conv3.weight', 'head.conv3.bias']);
    } finally {
      net.dispose();
    }
  });

  test('Dinov2Backbone with reshape_hidden_states gives the patch tokens as maps [batch, hidden, H // patch, W // patch]', () => {
    const make = (reshape) => {
      om.manualSeed(3);
      return new Dinov2Backbone({ ...tiny.backbone_config, out_indices: [0, -1], reshape_hidden_states: reshape }).eval();
    };
    const tokens = make(false), maps = make(true);
    try {
      om.tidy(() => {
        const x = om.randn([2, 3, 23, 16], { seed: 4 });
        const [t0, t2] = tokens.forward(x), [m0, m2] = maps.forward(x);
        assert.deepEqual([t0.shape, m2.shape], [[2, 7, 8], [2, 8, 3, 2]]);
        for (const [t, m] of [[t0, m0], [t2, m2]]) near(m.toArray(), t.slice(1, 1).reshape(2, 3, 2, 8).permute(0, 3, 1, 2).toArray(), 0);
      });
    } finally {
      tokens.dispose();
      maps.dispose();
    }
  });

  test('a config upstream or the port refuses is refused, naming it, before anything is made', () => {
    const before = om.memory().tensors;
    for (const [config, re] of [
      [{ backbone_config: { model_type: 'vit' } }, /^DepthAnythingForDepthEstimation: backbone model_type "vit" is not ported \(only dinov2\)$/],
      [{ backbone: 'facebook/dinov2-small' }, /^DepthAnythingForDepthEstimation: only a backbone_config is ported/],
      [{ depth_estimation_type: 'absolute' }, /^DepthAnythingForDepthEstimation: depth_estimation_type must be one of \['relative', 'metric'\], got "absolute"$/],
      [{ reassemble_factors: [4, 2, 1] }, /^DepthAnythingForDepthEstimation: reassemble_factors \(3\) and neck_hidden_sizes \(4\) must be as long as each other$/],
      [{ ...tiny, backbone_config: { ...tiny.backbone_config, out_indices: [1, 3] } }, /^Dinov2Backbone: out_indices \[1,3\] must be stages 0 to 2$/],
    ]) assert.throws(() => new DepthAnythingForDepthEstimation(config), (e) => e instanceof Error && re.test(e.message), JSON.stringify(config));
    assert.equal(om.memory().tensors, before, 'nothing is left made');
  });

  test('a backbone giving fewer maps than the neck has stages fails at the neck, as upstream\'s ValueError', () => {
    const net = new DepthAnythingForDepthEstimation({ ...tiny, backbone_config: { ...tiny.backbone_config, out_indices: [2] } });
    try {
      om.tidy(() => assert.throws(() => net.forward(om.randn([1, 3, 14, 14])),
        /^Error: DepthAnythingNeck: The number of hidden states should be equal to the number of neck hidden sizes\.$/));
    } finally {
      net.dispose();
    }
  });
});
