// BEiT, ConvNeXt V2 and Falcon (examples/transformers/) against PyTorch (the harness is
// tests/js/transformers-ports.mjs): BEiT with a relative position bias per layer (the table
// bilinear-interpolated to the image's window, the index made from meshgrid/arange in place) and layer
// scale, and with absolute positions and one shared bias; ConvNeXt V2 (GRN, channels-last LayerNorm);
// Falcon in its three layouts (grouped key-value heads with ln_attn / ln_mlp, multi-query, and ALiBi
// in bfloat16 with sequential attention and MLP). Each loads PyTorch's safetensors strictly, matches
// PyTorch eagerly at every fixture size, and is traced once with every axis symbolic (batch, height
// and width; batch and length); the .onnx runs in onnxruntime-web and the graph in the Session at the
// fixture sizes (one patch or token, odd sizes, far above the traced one; Falcon's ALiBi past 256
// tokens, where bfloat16 rounds the positions) and at three other sizes of every symbol.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced } from './helpers.mjs';
import { caseInputs, loadFixture, loadPort, matchesEagerly, ranges, run, tracesEverywhere } from './transformers-ports.mjs';
import { caseOutputs, sizesText } from './families.mjs';
import { BeitForImageClassification, BeitRelativePositionBias } from '../../examples/transformers/beit.mjs';
import { ConvNextV2ForImageClassification } from '../../examples/transformers/convnextv2.mjs';
import { FalconForCausalLM, toBfloat16 } from '../../examples/transformers/falcon.mjs';

memoryHooks();

const ROTARY = ['transformer.rotary_emb.inv_freq'];
/** Each port: its class, its outputs' names, and its non-persistent buffers (Hugging Face's). */
const PORTS = {
  beit: { Model: BeitForImageClassification, outputs: ['logits'], transient: [] },
  beit_shared: { Model: BeitForImageClassification, outputs: ['logits'], transient: [] },
  convnextv2: { Model: ConvNextV2ForImageClassification, outputs: ['logits'], transient: [] },
  falcon: { Model: FalconForCausalLM, outputs: ['logits'], transient: ROTARY },
  falcon_7b: { Model: FalconForCausalLM, outputs: ['logits'], transient: ROTARY },
  falcon_alibi: { Model: FalconForCausalLM, outputs: ['logits'], transient: ROTARY },
};

describe('BEiT, ConvNeXt V2 and Falcon load PyTorch\'s safetensors strictly and match PyTorch eagerly at every size', () => {
  for (const name of Object.keys(PORTS)) test(name, (t) => matchesEagerly(t, PORTS[name], name));

  test('beit: the relative position index of a 2 x 3 window, as upstream makes it (distances, then the CLS row, column and corner)', () => om.tidy(() => {
    const bias = new BeitRelativePositionBias({ num_attention_heads: 2 }, [4, 4]);
    try {
      const index = bias.generateRelativePositionIndex([2, 3]);
      const n = 3 * 5 + 3; // (2 * 2 - 1) * (2 * 3 - 1) + 3
      const coords = [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]];
      const expected = [[n - 1, ...coords.map(() => n - 3)],
        ...coords.map(([i, j]) => [n - 2, ...coords.map(([k, l]) => (i - k + 1) * 5 + (j - l + 2))])];
      assert.deepEqual(index.shape, [7, 7]);
      assert.deepEqual([...index.toArray()].map(Number), expected.flat());
    } finally {
      bias.dispose();
    }
  }));

  test('falcon: toBfloat16 rounds as PyTorch\'s bfloat16 cast (8 significant bits, halves to even)', () => om.tidy(() => {
    // 257 -> 256 and 259 -> 260 (halves to even), 300 -> 300 (exact), 301 -> 300, 2^-0.5 -> 0.70703125, 0 and negatives
    const x = om.tensor([257, 259, 300, 301, 0.7071067811865476, 0, -259, 255.5, 1 / 3]);
    assert.deepEqual([...toBfloat16(x).toArray()], [256, 260, 300, 300, 0.70703125, 0, -260, 256, 0.333984375]);
  }));

  test('a config the ports do not implement is refused, naming it', () => {
    for (const [Model, config, re] of [
      [BeitForImageClassification, { hidden_act: 'relu' }, /^BeitForImageClassification: hidden_act "relu" is not ported \(only gelu\)$/],
      [ConvNextV2ForImageClassification, { hidden_act: 'relu' }, /^ConvNextV2ForImageClassification: hidden_act "relu" is not ported \(only gelu\)$/],
      [ConvNextV2ForImageClassification, { depths: [1, 1] }, /^ConvNextV2ForImageClassification: depths and hidden_sizes differ in length \(2 != 4\)$/],
      [FalconForCausalLM, { activation: 'relu' }, /^FalconForCausalLM: activation "relu" is not ported \(only gelu\)$/],
      [FalconForCausalLM, { rope_scaling: { type: 'linear', factor: 2 } }, /^FalconForCausalLM: rope_scaling \{"type":"linear","factor":2\} is not ported \(only null\)$/],
    ]) assert.throws(() => new Model(config), (e) => e instanceof Error && re.test(e.message));
  });
});

describe('BEiT, ConvNeXt V2 and Falcon traced once with every axis symbolic, run in onnxruntime-web and the Session at sizes the trace never saw', () => {
  // beit_shared with height and width declared up to 64 (every fixture size): unbounded, BEiT's trace
  // takes several times as long, in the tracer's three far runs (H or W at 64x the traced size, all
  // at 8x), which compute the relative position bias at that window (examples/transformers/README.md);
  // beit's trace pays that, for the range up from the least size, unbounded
  const declared = () => ({ pixel_values: ['batch', null, om.Dim('height', { max: 64 }), om.Dim('width', { max: 64 })] });
  for (const name of ['beit', 'beit_shared', 'convnextv2']) {
    const top = name === 'beit_shared' ? 64 : Infinity;
    test(`${name}: traced at ${name === 'convnextv2' ? '40 x 36' : '28 x 20'}, right from the least size up${top < Infinity ? ' to 64 x 64' : ''}`, (t) => tracesEverywhere(t, PORTS[name], name, (tm) => {
      const least = name === 'convnextv2' ? 8 : 4; // below, the patch conv (or ConvNeXt V2's downsampling) fails, eagerly too
      for (const s of tm.symbols) {
        const image = s.name !== 'batch';
        assert.deepEqual([s.min, s.max], [image ? least : 1, image ? top : Infinity], `${s.name}: the range`);
        if (image) assert.match(s.narrowedBy, /^conv2d \(call \d+\)$/, `${s.name}: narrowed where the conv fails`);
        else assert.equal(s.narrowedBy, null);
        // checked from the least size up: to the max, or images to 2^15 pixels a side and the batch to where an input holds 2^26 elements
        assert.ok(s.checked.min === s.min && s.checked.max >= Math.min(s.max, 4096), `${s.name}: the range checked ${JSON.stringify(s.checked)}`);
      }
    }, name === 'beit_shared' ? declared : undefined));
  }

  for (const name of ['falcon', 'falcon_7b', 'falcon_alibi']) {
    test(`${name}: traced at length 6 with a padding mask, unbounded`, (t) => tracesEverywhere(t, PORTS[name], name, (tm) => {
      assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, Infinity, null] });
    }));
  }

  test('beit: traced (up to 64 x 64) after an eager call at the traced size filled its cached relative position indices, as right', async (t) => {
    const fx = loadFixture('beit');
    const model = loadPort(PORTS.beit, 'beit', fx);
    try {
      await withTraced((keep) => {
        const at = fx.cases[fx.trace_case];
        const examples = caseInputs(at);
        const eager = run(model, examples); // fills every layer's cache at the traced window
        const tm = om.trace(model, { pixel_values: [examples.pixel_values, declared().pixel_values] }, { outputNames: ['logits'] });
        keep(tm, examples, eager, 'eager at the traced size', model);
        for (const c of fx.cases) keep(tm, caseInputs(c), Object.values(caseOutputs(c)), `PyTorch at ${sizesText(c.sizes)}`);
        t.diagnostic(`beit traced after an eager call: ${tm.graph().nodes.length} nodes; symbols ${JSON.stringify(tm.symbols)}`);
      });
    } finally {
      model.dispose();
    }
  });
});
