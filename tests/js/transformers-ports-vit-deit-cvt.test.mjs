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
  // returns its table unresampled (upstream's `if npatch == N and h == w`), a path no run of the
  // tracer takes (it sees only what the runs at other sizes do, and none is square with 4 x 4
  // patches), so the graph resamples by 4 / 4.1 there: SILENTLY WRONG, left open (the tracer's
  // runs would have to find a branch on two symbols' equality together with a product's value).
  const square = (s) => s.height === s.width && Math.floor(s.height / 4) === 4;
  test('symbolic batch, height and width: right against PyTorch in both engines but at 16 x 16, where the graph is wrong (left open)', async (t) => {
    let bytes;
    await tracesEverywhere(t, PORTS.vit_scale_factor, 'vit_scale_factor', (tm) => {
      assert.deepEqual(symbols(tm), { batch: [1, Infinity], height: [4, Infinity], width: [4, Infinity] });
      bytes = tm.save();
    }, undefined, undefined, (s) => !square(s));
    const c = loadFixture('vit_scale_factor').cases.find((x) => square(x.sizes));
    const session = await om.InferenceSession.create(bytes);
    const inputs = caseInputs(c), want = caseOutputs(c).logits;
    try {
      const got = session.run(inputs).logits;
      const [g, w] = [got.toArray(), want.toArray()];
      got.dispose();
      const worst = Math.max(...Array.from(w, (v, i) => Math.abs(g[i] - v)));
      assert.ok(worst > 1e-3, `at 16 x 16 the graph now agrees with PyTorch (${worst}): the branch is found; make this an agreement check`);
    } finally {
      session.dispose();
      for (const v of [...Object.values(inputs), want]) v.dispose();
    }
  });

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
