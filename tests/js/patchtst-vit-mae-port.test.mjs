// Hugging Face's PatchTST and ViTMAE (examples/transformers/patchtst.mjs, vit_mae.mjs) against
// PyTorch (tools/patchtst_vit_mae_ports.py writes the fixtures; the harness is
// tests/js/transformers-ports.mjs). Both load PyTorch's safetensors strictly and match PyTorch
// eagerly at every fixture size; traced with their sizes symbolic, the .onnx in onnxruntime-web and
// the graph in the Session agree with PyTorch at sizes the trace never saw.
// PatchTST: patch 8, stride 5, so the start offset L - 8 - 5 (n - 1) runs through every residue of 5;
// the length is symbolic as a user adapting upstream makes it (the patches from the input's length,
// the position table's first rows). ViTMAE: mask_ratio 0.6, so len_keep = int(L * 0.4) is floor(2L / 5)
// of the patches L, with the noise's length a symbol of its own.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced } from './helpers.mjs';
import { caseInputs, loadFixture, loadPort, matchesEagerly, run, tracesEverywhere } from './transformers-ports.mjs';
import { caseOutputs, compare } from './families.mjs';
import { PatchTSTModel } from '../../examples/transformers/patchtst.mjs';
import { ViTMAEForPreTraining } from '../../examples/transformers/vit_mae.mjs';

memoryHooks();

/** PatchTSTModel with the patches computed from the input's length (any length the table covers). */
class PatchTSTAnyLength extends PatchTSTModel {
  constructor(config) {
    super(config, { anyLength: true });
  }
}

/** ViTMAEForPreTraining called with interpolate_pos_encoding=True, as the fixture's PyTorch model is. */
class ViTMAEInterpolated extends ViTMAEForPreTraining {
  forward(pixelValues, noise) {
    return super.forward(pixelValues, noise, true);
  }
}

const PATCHTST = { Model: PatchTSTAnyLength, outputs: ['last_hidden_state', 'loc', 'scale', 'patch_input'], transient: [] };
const VIT_MAE = { Model: ViTMAEInterpolated, outputs: ['loss', 'logits', 'mask', 'ids_restore'], transient: [] };

describe('PatchTST and ViTMAE load PyTorch\'s safetensors strictly and match PyTorch eagerly at every size', () => {
  test('patchtst: std scaler, BatchNorm, the sincos table; lengths 9 to 13 (every residue of the stride), 24 to 512', (t) => matchesEagerly(t, PATCHTST, 'patchtst'));
  test('patchtst_mean: mean scaler with an observed mask, CLS token, channel attention, an embedding per channel', (t) => matchesEagerly(t, PATCHTST, 'patchtst_mean'));
  test('vit_mae: random masking by the noise (mask_ratio 0.6), the decoder, the loss; one patch to 208', (t) => matchesEagerly(t, VIT_MAE, 'vit_mae'));

  test('upstream\'s own forms: PatchTST at the config\'s context_length only (else its error), ViTMAE at the native size without interpolation', () => {
    const fx = loadFixture('patchtst');
    const model = loadPort({ ...PATCHTST, Model: PatchTSTModel }, 'patchtst', fx);
    try {
      const at512 = fx.cases.find((c) => c.sizes.length === fx.config.context_length);
      om.tidy(() => run(model, caseInputs(at512)).forEach((o, i) => compare(o, at512.outputs[i], `patchtst upstream output ${i}`)));
      assert.throws(() => om.tidy(() => run(model, caseInputs(fx.cases[0]))), /Input sequence length \(40\) doesn't match model configuration \(512\)/);
    } finally {
      model.dispose();
    }
    const vx = loadFixture('vit_mae');
    const mae = loadPort({ ...VIT_MAE, Model: ViTMAEForPreTraining }, 'vit_mae', vx);
    try {
      const native = vx.cases.find((c) => c.sizes.height === vx.config.image_size && c.sizes.width === vx.config.image_size);
      om.tidy(() => run(mae, caseInputs(native)).forEach((o, i) => compare(o, native.outputs[i], `vit_mae without interpolation output ${i}`)));
      assert.throws(() => om.tidy(() => run(mae, caseInputs(vx.cases[0]))), /Input image size \(24\*20\) doesn't match model \(16\*16\)/);
    } finally {
      mae.dispose();
    }
  });
});

/** The symbols as [name, min, max, narrowedBy] (max Infinity: unbounded) and the sizes checked. */
const symbolRows = (tm) => tm.symbols.map((s) => [s.name, s.min, s.max, s.narrowedBy, s.checked.min, s.checked.max]);

describe('PatchTST traced with a symbolic batch and length: one graph from 8 to 512, in both engines against PyTorch', () => {
  // the range is where eager answers: below 8 unfold has fewer steps than a patch, above 512 the
  // input has more patches (102) than the table has rows (101); both fail eagerly, as upstream's
  // PatchTSTModel built for such a length does (its check and its table)
  const check = (tm) => {
    const rows = symbolRows(tm);
    assert.deepEqual(rows[0], ['batch', 1, Infinity, null, 1, 32768]);
    assert.deepEqual(rows[1].slice(0, 3), ['length', 8, 512]);
    assert.match(rows[1][3], /^add \(call \d+\)/, 'narrowed where the table runs out');
    assert.deepEqual(rows[1].slice(4), [8, 512], 'checked over the whole range');
  };
  test('patchtst (std scaler, BatchNorm, sincos table)', (t) => tracesEverywhere(t, PATCHTST, 'patchtst', check));
  test('patchtst_mean (mean scaler and observed mask, CLS token, channel attention over batch * patches)', (t) => tracesEverywhere(t, PATCHTST, 'patchtst_mean', check));
});

/** ViTMAE from its patch embeddings [batch, L, hidden] on: the masking, the CLS row, the encoder, the decoder. */
class ViTMAEFromPatches extends om.nn.Module {
  constructor(mae) {
    super();
    this.mae = mae;
  }

  forward(embeddings, noise) {
    const e = this.mae.vit.embeddings;
    const [kept, mask, idsRestore] = e.randomMasking(embeddings, noise);
    const clsTokens = e.cls_token.add(e.position_embeddings.slice(1, 0, 1)).expand(kept.shape[0], -1, -1);
    const latent = this.mae.vit.layernorm.forward(this.mae.vit.encoder.forward(om.cat([clsTokens, kept], 1)));
    return [this.mae.decoder.forward(latent, idsRestore, true), mask, idsRestore];
  }
}

/**
 * ViTMAE loaded with the fixture's weights: body(keep, fx, model) traces and keeps the checks
 * (withTraced runs them in onnxruntime-web and the Session); the model is disposed whatever happens.
 */
async function withMAE(body) {
  const fx = loadFixture('vit_mae');
  const model = loadPort(VIT_MAE, 'vit_mae', fx);
  try {
    await withTraced((keep) => body(keep, fx, model));
  } finally {
    model.dispose();
  }
}

describe('ViTMAE traced: symbolic batch; the noise\'s length; the patches at the sequence level; height and width refused', () => {
  test('a symbolic batch at 24 x 20: right against PyTorch at batches 1 to 3', () => withMAE((keep, fx, model) => {
    const ex = caseInputs(fx.cases[0]);
    const tm = om.trace(model, { pixel_values: [ex.pixel_values, ['batch', null, null, null]], noise: [ex.noise, ['batch', null]] });
    assert.deepEqual(symbolRows(tm), [['batch', 1, Infinity, null, 1, 32768]]);
    keep(tm, ex, run(model, ex), 'eager at batch 2 (traced)', model);
    const at = fx.cases.filter((c) => c.sizes.height === 24 && c.sizes.width === 20);
    assert.deepEqual(at.map((c) => c.sizes.batch), [2, 1, 3]);
    for (const c of at) keep(tm, caseInputs(c), Object.values(caseOutputs(c)), `PyTorch at batch ${c.sizes.batch}`);
  }));

  test('the noise\'s length symbolic at a fixed image: eager answers only at L = 30 (the patches) and 1 (the loss broadcasts), two pieces', () => withMAE((keep, fx, model) => {
    const { pixel_values: image, noise } = caseInputs(fx.cases[0]);
    const tm = om.trace(model, { pixel_values: [image, ['batch', null, null, null]], noise: [noise, ['batch', 'patches']] });
    const [, patches] = tm.symbols;
    assert.deepEqual([patches.min, patches.max, patches.branches], [1, 30, [{ min: 1, max: 1 }, { min: 30, max: 30 }]]);
    assert.match(patches.narrowedBy, /^sub \(call \d+\): at batch=2, patches=31 the call fails \(sub: shapes \[2,31,48\] and \[2,30,48\] do not broadcast/);
    // keep's other sizes, inside the range: batch 1 at L 1 (the one-row piece), batches 3 and 5 at L 30
    keep(tm, { pixel_values: image, noise }, run(model, { pixel_values: image, noise }), 'eager at batch 2, L 30 (traced)', model);
  }));

  test('from the patches on, batch and L symbolic: len_keep = floor(2L / 5) at every residue, right in both engines up to L = 208', () => withMAE((keep, fx, mae) => {
    const model = new ViTMAEFromPatches(mae).eval();
    const hidden = fx.config.hidden_size;
    const ex = { embeddings: om.randn([2, 30, hidden], { seed: 1 }), noise: om.rand([2, 30], { seed: 2 }) };
    const tm = om.trace(model, { embeddings: [ex.embeddings, ['batch', 'L', null]], noise: [ex.noise, ['batch', 'L']] });
    assert.deepEqual(symbolRows(tm), [['batch', 1, Infinity, null, 1, 32768], ['L', 1, Infinity, null, 1, 32768]]);
    keep(tm, ex, run(model, ex), 'eager at L 30 (traced)', model);
    for (const L of [2, 3, 4, 6, 7, 8, 208]) {
      const feeds = { embeddings: om.randn([1, L, hidden], { seed: L }), noise: om.rand([1, L], { seed: 100 + L }) };
      keep(tm, feeds, run(model, feeds), `eager at L ${L}`);
    }
  }));

  test('height and width symbolic with the noise\'s length: refused, whole message (the noise must have (H / 4)(W / 4) rows, which no declaration says)', () => {
    const fx = loadFixture('vit_mae');
    const model = loadPort(VIT_MAE, 'vit_mae', fx);
    try {
      om.tidy(() => {
        const { pixel_values: image, noise } = caseInputs(fx.cases[0]);
        const dims = [om.Dim('height', { multipleOf: 4 }), om.Dim('width', { multipleOf: 4 })];
        assert.throws(() => om.trace(model, { pixel_values: [image, ['batch', null, ...dims]], noise: [noise, ['batch', 'patches']] }), (e) => {
          assert.equal(e.kind, 'SymbolicShape');
          assert.match(e.message, /^reshape: argument 1 is 13 at the traced sizes, .*, \.\.\.: it changes with the sizes, but not as a size the graph can compute \(a sum, multiple, product, minimum or maximum of sizes, or a floor division or remainder by a constant the runs tell apart\) \(at file:[^)]*vit\.mjs:\d+:\d+\)$/);
          return true;
        });
      });
    } finally {
      model.dispose();
    }
  });
});
