// Hugging Face's ViT (examples/transformers/vit.mjs: ViTForImageClassification with both of
// transformers' interpolate_pos_encoding, size= and the first, scale_factor=), DeiT (deit.mjs:
// DeiTForImageClassificationWithTeacher) and CvT (cvt.mjs: CvtForImageClassification) against
// PyTorch (the harness is tests/js/transformers-ports.mjs). Each loads PyTorch's safetensors
// strictly, matches PyTorch eagerly at every fixture size, and is traced once with symbolic batch,
// height and width; the .onnx runs in onnxruntime-web and the graph in the Session at every fixture
// size (the native size where upstream adds the table itself, the native grid of a non-square
// image, one patch or the least size, odd sizes, sizes no multiple of the patch or stride, far
// above the traced one) and at three other sizes of every symbol.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced } from './helpers.mjs';
import { caseInputs, loadFixture, loadPort, matchesEagerly, run, tracesEverywhere } from './transformers-ports.mjs';
import { caseOutputs } from './families.mjs';
import { image } from './torchvision-ports.mjs';
import { ViTForImageClassification, ViTEmbeddingsScaleFactor } from '../../examples/transformers/vit.mjs';
import { DeiTForImageClassificationWithTeacher } from '../../examples/transformers/deit.mjs';
import { CvtForImageClassification } from '../../examples/transformers/cvt.mjs';
import { PvtV2ForImageClassification } from '../../examples/transformers/pvt_v2.mjs';

memoryHooks();

/** ViTForImageClassification with the first interpolate_pos_encoding (scale_factor). */
class ViTScaleFactor extends ViTForImageClassification {
  constructor(config) {
    super(config, { Embeddings: ViTEmbeddingsScaleFactor });
  }
}

/** Each port: its class, its outputs' names, and its non-persistent buffers (none). */
const PORTS = {
  vit: { Model: ViTForImageClassification, outputs: ['logits'], transient: [] },
  vit_scale_factor: { Model: ViTScaleFactor, outputs: ['logits'], transient: [] },
  deit: { Model: DeiTForImageClassificationWithTeacher, outputs: ['logits'], transient: [] },
  cvt: { Model: CvtForImageClassification, outputs: ['logits'], transient: [] },
  pvt_v2: { Model: PvtV2ForImageClassification, outputs: ['logits'], transient: [] },
  pvt_v2_linear: { Model: PvtV2ForImageClassification, outputs: ['logits'], transient: [] },
};

describe('ViT, DeiT, CvT and PVT v2 load PyTorch\'s safetensors strictly and match PyTorch eagerly at every size', () => {
  for (const name of Object.keys(PORTS)) test(name, (t) => matchesEagerly(t, PORTS[name], name));
});

/**
 * tm's symbols as { name: [min, max] }, each checked from its least size to 2^15 (the batch's line
 * stops sooner where the input would pass the tracer's cap on a run's input elements: 4097 x 3 x 61
 * x 45 for CvT), and those raised above 1 raised by a conv (where eager fails too).
 */
function symbols(tm) {
  for (const s of tm.symbols) {
    assert.equal(s.checked.min, s.min, `${s.name}: checked from its least size`);
    if (s.name === 'batch') assert.ok(s.checked.max >= 4097, `batch: checked to ${s.checked.max}`);
    else assert.equal(s.checked.max, 32768, `${s.name}: checked to 2^15`);
    if (s.min > 1) assert.match(s.narrowedBy, /^conv2d \(call \d+\)$/, `${s.name}: below ${s.min} a conv fails, eagerly too`);
  }
  return Object.fromEntries(tm.symbols.map((s) => [s.name, [s.min, s.max]]));
}

/** The least height and width each model takes (below, a convolution fails, eagerly too). */
const LEAST = { vit: 4, deit: 4, cvt: 3, pvt_v2: 13, pvt_v2_linear: 1 };

describe('ViT, DeiT, CvT and PVT v2 traced once with symbolic batch, height and width, run in onnxruntime-web and the Session at sizes the trace never saw', () => {
  for (const name of Object.keys(PORTS).filter((n) => n !== 'vit_scale_factor')) {
    const fx = loadFixture(name);
    const at = fx.cases[fx.trace_case].sizes;
    test(`${name}: traced at ${at.height} x ${at.width}, right from ${LEAST[name]} x ${LEAST[name]} up, unbounded`, (t) => tracesEverywhere(t, PORTS[name], name, (tm) => {
      assert.deepEqual(symbols(tm), { batch: [1, Infinity], height: [LEAST[name], Infinity], width: [LEAST[name], Infinity] });
      assert.ok(fx.cases.some((c) => c.sizes.height === LEAST[name] && c.sizes.width === LEAST[name]), 'a fixture case at the least size');
    }));
  }

  test('deit: traced at the native 16 x 16, batch 2 (upstream interpolates while torch.jit traces; the port while om.Tracer.active), right at every size', (t) => (
    tracesEverywhere(t, PORTS.deit, 'deit', (tm) => {
      assert.deepEqual(symbols(tm), { batch: [1, Infinity], height: [4, Infinity], width: [4, Infinity] });
    }, undefined, loadFixture('deit').cases.findIndex((c) => c.sizes.batch === 2 && c.sizes.height === 16 && c.sizes.width === 16))));
});

describe('ViT with the first interpolate_pos_encoding (scale_factor (h0 + 0.1) / 4)', () => {
  // The scale is a * h0 + b of the patch grid in the graph, and 1 / scale is computed there in
  // double as PyTorch's kernel takes it: right against PyTorch at every fixture size but the
  // native 16 x 16. There (and wherever height = width and h0 * w0 = 16: 16 to 19 square) the model
  // returns its table unresampled (upstream's `if npatch == N and h == w`, with no
  // torch.jit.is_tracing() guard in this first version), where the graph would resample by 4 / 4.1.
  // No run along the range check's lines is square with 4 x 4 patches; its runs on the diagonal
  // height = width find it, so the trace is refused there, loudly, naming the squares and the
  // declarations that leave them out; declared so, it is right at every fixture size it admits.
  test('symbolic batch, height and width: refused (SymbolicShape) at the squares 16 to 19, where the model takes its table as it is', () => {
    const fx = loadFixture('vit_scale_factor');
    const model = loadPort(PORTS.vit_scale_factor, 'vit_scale_factor', fx);
    try {
      om.tidy(() => {
        const x = caseInputs(fx.cases[fx.trace_case]).pixel_values; // batch 2, 24 x 20
        assert.throws(() => om.trace(model, { pixel_values: [x, ['batch', null, 'height', 'width']] }),
          (e) => e instanceof om.TraceError && e.kind === 'SymbolicShape'
            && /^add: the model does another thing at sizes off the lines the range check runs along: at height=16, width=16 it calls add here \(call \d+\), where the trace calls \w+ \(and so at height = width from 16 to 19\), so the graph would be wrong there\. It holds away from them: declare om\.Dim\('height', \{ min: 20 \}\) or om\.Dim\('width', \{ min: 20 \}\) \(at .*vit\.mjs:\d+:\d+\)$/.test(e.message));
      });
    } finally {
      model.dispose();
    }
  });

  test('declared as the refusal says (height from 20): right against PyTorch in both engines at every fixture size from there, and at other sizes', (t) => (
    tracesEverywhere(t, PORTS.vit_scale_factor, 'vit_scale_factor', (tm) => {
      for (const s of tm.symbols) assert.deepEqual(s.checked, { min: s.min, max: s.name === 'batch' ? s.checked.max : 32768 }, `${s.name}: checked`);
      assert.deepEqual(Object.fromEntries(tm.symbols.map((s) => [s.name, [s.min, s.max]])), { batch: [1, Infinity], height: [20, Infinity], width: [4, Infinity] });
    }, () => ({ pixel_values: ['batch', null, om.Dim('height', { min: 20 }), 'width'] }), undefined, (s) => s.height >= 20)));

  test('symbolic batch only (the image size fixed): traced, right in both engines against PyTorch and at other batches', async () => {
    const fx = loadFixture('vit_scale_factor');
    const model = loadPort(PORTS.vit_scale_factor, 'vit_scale_factor', fx);
    try {
      await withTraced((keep) => {
        const c = fx.cases[fx.trace_case]; // batch 2, 24 x 20
        const examples = caseInputs(c);
        const tm = om.trace(model, { pixel_values: [examples.pixel_values, ['batch', null, null, null]] }, { outputNames: ['logits'] });
        assert.deepEqual(symbols(tm), { batch: [1, Infinity] });
        keep(tm, examples, run(model, examples), 'eager at the traced size', model);
        keep(tm, caseInputs(c), Object.values(caseOutputs(c)), 'PyTorch at the traced size');
      });
    } finally {
      model.dispose();
    }
  });
});
