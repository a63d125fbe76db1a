// Hugging Face's Swin (examples/transformers/swin.mjs), MobileViT (mobilevit.mjs) and DETR's sine
// position embedding (detr.mjs) against PyTorch (the harness is tests/js/transformers-ports.mjs).
// Each loads PyTorch's safetensors strictly, matches PyTorch eagerly at every fixture size, and is
// traced once with every axis symbolic; the .onnx runs in onnxruntime-web and the graph in the
// Session at every fixture size (odd sizes, the least size the model takes, each side of every
// size threshold, far above the traced one) and at three other sizes of every symbol.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks } from './helpers.mjs';
import { loadFixture, loadPort, matchesEagerly, tracesEverywhere, ranges } from './transformers-ports.mjs';
import { image } from './torchvision-ports.mjs';
import { SwinModel, SwinForImageClassification } from '../../examples/transformers/swin.mjs';
import { MobileViTForImageClassification } from '../../examples/transformers/mobilevit.mjs';
import { DetrSinePositionEmbedding } from '../../examples/transformers/detr.mjs';

memoryHooks();

/** Each port: its class, its outputs' names, and its non-persistent buffers. */
const PORTS = {
  swin: { Model: SwinModel, outputs: ['last_hidden_state', 'pooler_output'], transient: [] },
  swin_cls: { Model: SwinForImageClassification, outputs: ['logits'], transient: [] },
  mobilevit: { Model: MobileViTForImageClassification, outputs: ['logits'], transient: [] },
};

/** DetrSinePositionEmbedding from the fixture's config (its constructor takes the arguments DETR passes); no state. */
class DetrSine extends DetrSinePositionEmbedding {
  constructor(c) {
    super(c.embedding_dim, c.temperature, c.normalize, c.scale);
  }
}
for (const name of ['detr_sine', 'detr_sine_small']) PORTS[name] = { Model: DetrSine, outputs: ['position_embeddings'], transient: [] };

describe('Swin loads PyTorch\'s safetensors strictly and matches PyTorch eagerly at every size', () => {
  for (const name of ['swin', 'swin_cls']) test(name, (t) => matchesEagerly(t, PORTS[name], name));

  test('below the window the second stage fails eagerly, as upstream (the bias table is the window\'s)', () => {
    const fx = loadFixture('swin');
    const model = loadPort(PORTS.swin, 'swin', fx);
    try {
      om.tidy(() => {
        assert.throws(() => model.forward(image([1, 3, 8, 9], 1)), (e) => e instanceof om.OmError && e.kind === 'ShapeMismatch');
      });
    } finally {
      model.dispose();
    }
  });

  test('a config the port does not implement is refused, naming it', () => {
    assert.throws(() => new SwinModel({ hidden_act: 'relu' }), /^Error: SwinModel: hidden_act "relu" is not ported \(only gelu\)$/);
    assert.throws(() => new SwinModel({ use_absolute_embeddings: true }), /^Error: SwinModel: use_absolute_embeddings true is not ported/);
  });
});

/** [batch, null, height, width] with height and width declared as ranges ({ min, max }). */
const declared = (h, w) => () => ({ pixel_values: ['batch', null, om.Dim('height', h), om.Dim('width', w)] });
const within = ({ min = 1, max = Infinity }, x) => x >= min && x <= max;

describe('Swin traced with symbolic batch, height and width, run in onnxruntime-web and the Session at sizes the trace never saw', () => {
  // Upstream's set_shift_and_window_size is a threshold on min(H, W): the second stage is one
  // unshifted window where its smaller side is the window (swin: min(H, W) 9 to 12; swin_cls: 25 to
  // 30) and shifted above. The trace cuts on the height there and cuts the piece above on the
  // width (a cut inside a piece), each size of the unshifted side a piece of its own, so one graph
  // (nested Ifs) holds on both sides of the branch. Traced at 26 x 21 undeclared: one graph from 9
  // (below, its second stage fails, eagerly too: the bias table is the window's), right against
  // PyTorch in both engines at every fixture size (9 x 9, 10 x 30, 12 x 13, 13 x 12, 13 x 13, ...
  // 64 x 50). (It was refused, the piece below the height's threshold as one piece, until the more
  // runs went to the symbols a value is seen to be a function of at a size other than the
  // example's: hooks.c, moving_symbols.)
  test('swin: traced at 26 x 21 undeclared, one graph from 9 over both sides of min(H, W), right against PyTorch in both engines', async (t) => {
    await tracesEverywhere(t, PORTS.swin, 'swin', (tm) => {
      const sym = Object.fromEntries(tm.symbols.map((x) => [x.name, x]));
      assert.deepEqual([sym.height.min, sym.height.max, sym.width.min, sym.width.max], [9, Infinity, 9, Infinity]);
      assert.deepEqual(sym.height.branches.at(-1), { min: 13, max: Infinity }, 'the height cut at the threshold');
      assert.deepEqual(sym.width.branches.at(-1), { min: 13, max: Infinity }, 'the width cut at the threshold, in the height\'s piece above it');
      assert.equal(sym.height.branches[0].min, 9);
      assert.equal(sym.width.branches[0].min, 9);
    });
  });

  // Traced undeclared at 70 x 47 (both stages shifted): cut on the height at 31, the piece above
  // cut on the width there (a cut inside a piece), the unshifted side of the height one size at a
  // time (25 to 30; the model fails below 25, where its relative position table is the window's,
  // and says so). One graph over both sides of min(H, W) with both symbolic, right against
  // PyTorch in both engines at every fixture size (25 x 25, 26 x 31, 30 x 100, 40 x 29, 28 x 97,
  // 301 x 257 ...).
  test('swin_cls: traced at 70 x 47 undeclared, one graph over both sides of min(H, W), right against PyTorch in both engines', async (t) => {
    await tracesEverywhere(t, PORTS.swin_cls, 'swin_cls', (tm) => {
      const [height, width] = ['height', 'width'].map((n) => tm.symbols.find((x) => x.name === n));
      assert.deepEqual([height.min, height.max, width.min, width.max], [25, Infinity, 25, Infinity]);
      assert.match(height.narrowedBy, /the model fails/, 'the model fails below 25: narrowed there, and said');
      assert.match(width.narrowedBy, /the model fails/);
      assert.deepEqual(height.branches, [25, 26, 27, 28, 29, 30].map((z) => ({ min: z, max: z })).concat([{ min: 31, max: Infinity }]));
      assert.deepEqual(width.branches, [{ min: 25, max: 30 }, { min: 31, max: Infinity }]);
    }, undefined, 0, (z) => z.height >= 25 && z.width >= 25);
  });

  for (const [name, traced, least, shifted, traceCase, unshiftedCase] of [['swin', '26 x 21', 9, 13, 0, 9], ['swin_cls', '70 x 47', 25, 31, 0, 8]]) {
    const big = { min: shifted };
    if (name === 'swin_cls') test(`${name}: declared from ${shifted} (every stage shifted), traced at ${traced}, right there up to the far size`, (t) => tracesEverywhere(t, PORTS[name], name, (tm) => {
      assert.deepEqual(Object.fromEntries(tm.symbols.map((x) => [x.name, [x.min, x.max, x.checked.min]])),
        { batch: [1, Infinity, 1], height: [shifted, Infinity, shifted], width: [shifted, Infinity, shifted] });
    }, declared(big, big), traceCase, (z) => within(big, z.height) && within(big, z.width)));

    // The other side of the threshold, declared on the height (the width from the least size): the
    // second stage one unshifted window. Refused until a declared maximum bounded where two fitted
    // forms must agree (src/trace/fit.c); now traced, and right at the fixture's sizes inside it
    const small = { min: least, max: shifted - 1 };
    test(`${name}: height declared ${least} to ${shifted - 1} (the second stage one unshifted window): traced, every run inside the declaration, right at its sizes`, async (t) => {
      const fx = loadFixture(name);
      const model = loadPort(PORTS[name], name, fx);
      try {
        om.tidy(() => {
          const { batch: b, height: h, width: w } = fx.cases[unshiftedCase].sizes;
          assert.ok(within(small, h) && b >= 2, 'an example inside the declared range');
          // every run the tracer makes is inside the declaration (a change once ran swin_cls at height 31)
          const seen = [], forward = model.forward.bind(model);
          model.forward = (x) => (seen.push(x.shape), forward(x));
          const tm = om.trace(model, { pixel_values: [image([b, 3, h, w], 1), declared(small, { min: least })().pixel_values] });
          tm.dispose();
          assert.ok(new Set(seen.map((s) => s[2])).size > 1, 'the height moved');
          for (const s of seen) assert.ok(within(small, s[2]) && within({ min: least }, s[3]), `a run at [${s}], outside the declaration`);
        });
      } finally {
        model.dispose();
      }
      await tracesEverywhere(t, PORTS[name], name, (tm) => {
        const height = tm.symbols.find((x) => x.name === 'height');
        assert.deepEqual([height.min, height.max], [least, shifted - 1], 'the declared heights, not narrowed');
      }, declared(small, { min: least }), unshiftedCase, (z) => within(small, z.height) && within({ min: least }, z.width));
    });
  }
});

describe('MobileViT loads PyTorch\'s safetensors strictly, matches PyTorch eagerly, and traces with symbolic batch, height and width', () => {
  test('mobilevit: eagerly at every size', (t) => matchesEagerly(t, PORTS.mobilevit, 'mobilevit'));

  test('mobilevit: traced at 70 x 45 (every block resizes to whole patches), right from 1 x 1 to 200 x 171', (t) => tracesEverywhere(t, PORTS.mobilevit, 'mobilevit', (tm) => {
    // the batch's line stops where the input would pass 2^26 elements (checked.max), not at 32768
    assert.deepEqual(Object.fromEntries(tm.symbols.map((x) => [x.name, [x.min, x.max, x.narrowedBy, x.checked.min]])),
      { batch: [1, Infinity, null, 1], height: [1, Infinity, null, 1], width: [1, Infinity, null, 1] });
  }));
});

describe('DETR\'s sine position embedding, computed from the pixel mask at run time', () => {
  for (const name of ['detr_sine', 'detr_sine_small']) {
    test(`${name}: eagerly at every size`, (t) => matchesEagerly(t, PORTS[name], name));
    test(`${name}: traced with symbolic batch, height and width, right from 1 x 1 up`, (t) => tracesEverywhere(t, PORTS[name], name, (tm) => {
      const r = ranges(tm);
      assert.deepEqual(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v.slice(0, 2)])), { batch: [1, Infinity], height: [1, Infinity], width: [1, Infinity] });
    }));
  }

  test('a scale without normalize is refused, as upstream', () => {
    assert.throws(() => new DetrSinePositionEmbedding(8, 10000, false, 2), /^Error: DetrSinePositionEmbedding: normalize should be True if scale is passed$/);
  });
});
