// PyTorch parity of four model families at several sizes of the axes that should be symbolic
// (tests/js/fixtures/pytorch/families/, written by tools/pytorch_reference.py from PyTorch): each
// model of tests/js/families.mjs loads PyTorch's state_dict with its keys unchanged and must give
// PyTorch's outputs (to within 1e-5 * max(1, max|ref|)) eagerly at every size of the fixture:
//   rnn_classifier  Embedding -> LSTM -> out[:, T - 1] -> Linear   batch 1..3, seq 5, 8, 13
//   gpt             GPT-style decoder, tied LM head                 batch 1..3, seq 5, 8, 13
//   resnet          the zoo's ResNet (stride-2 blocks, downsample)  batch 1..3, 17x23, 32x32, 9x12
//   unet            two-level UNet                                  batch 1..3, 20x28, 16x20, 24x12
// and, where PyTorch fails (the UNet at sizes that are not multiples of 4), fails too.
// The traced versions, with symbolic axes, are in tests/js/families-symbolic.test.mjs.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks } from './helpers.mjs';
import { checkModelFile, disposeModelFile } from '../../examples/lib/workflow.mjs';
import { FAMILIES, resnetZoo, loadFixture, buildLoaded, caseInputs, compare, sizesText } from './families.mjs';

memoryHooks();
after(() => disposeModelFile(checkModelFile(resnetZoo)));

describe('model families: PyTorch\'s outputs at every fixture size, eagerly', () => {
  test('every family fixture has a model, and every model a fixture', () => {
    const files = readdirSync(new URL('./fixtures/pytorch/families/', import.meta.url)).filter((f) => f.endsWith('.json'));
    assert.deepEqual(files.map((f) => f.slice(0, -5)).sort(), Object.keys(FAMILIES).sort());
  });

  for (const name of Object.keys(FAMILIES)) {
    const fx = loadFixture(name);
    test(`${name}: ${fx.model}`, (t) => {
      const model = buildLoaded(name, fx);
      try {
        // the fixture covers batch 1, 2 and 3, and at least three sizes of every other symbolic axis
        const symbols = [...new Set(Object.values(fx.axes).flat().filter((a) => a))];
        for (const s of symbols) {
          const seen = new Set(fx.cases.map((c) => c.sizes[s]));
          assert.ok(seen.size >= 3, `${name}: ${s} at ${[...seen]}`);
          if (s === 'batch') assert.deepEqual([...seen].sort(), [1, 2, 3]);
        }
        const errors = [];
        for (const c of fx.cases) {
          om.tidy(() => {
            const inputs = caseInputs(c);
            // the input shapes are the case's sizes on the symbolic axes
            for (const [k, axes] of Object.entries(fx.axes)) {
              axes.forEach((a, d) => { if (a) assert.equal(inputs[k].shape[d], c.sizes[a], `${k} axis ${d}`); });
            }
            const out = model.forward(...Object.values(inputs));
            const ref = c.outputs.find((o) => o.name === FAMILIES[name].output);
            errors.push(`${sizesText(c.sizes)}: ${compare(out, ref, `${name} at ${sizesText(c.sizes)}`).toExponential(2)}`);
          });
        }
        t.diagnostic(`${name}: max |ours - PyTorch| ${errors.join(', ')}`);
      } finally {
        model.dispose();
      }
    });
  }

  test('unet: where PyTorch\'s cat fails (H or W not a multiple of 4), ours fails too, with ShapeMismatch naming the sizes', () => {
    const fx = loadFixture('unet');
    assert.equal(fx.failures.length, 2);
    const model = buildLoaded('unet', fx);
    try {
      for (const f of fx.failures) {
        // PyTorch: "Sizes of tensors must match except in dimension 1. Expected size 8 but got size 9 ..."
        const [, want, got, which] = /Expected size (\d+) but got size (\d+) for tensor number (\d+)/.exec(f.error).map(Number);
        om.tidy(() => {
          const x = om.randn(f.input_shape, { seed: 3 });
          assert.throws(() => model.forward(x), (e) => {
            assert.ok(e instanceof om.OmError, `${e}`);
            assert.equal(e.kind, 'ShapeMismatch', e.message);
            // ours: "cat: input 1 has shape [1,8,9,10], input 0 has [1,8,8,10] (only dim 1 may differ)"
            const m = /^cat: input (\d+) has shape \[([\d,]+)\], input 0 has \[([\d,]+)\]/.exec(e.message);
            assert.ok(m, e.message);
            const [bad, first] = [m[2], m[3]].map((s) => s.split(',').map(Number));
            assert.equal(Number(m[1]), which, `the same input as PyTorch's (${f.error}): ${e.message}`);
            assert.ok([2, 3].some((d) => bad[d] === got && first[d] === want), `sizes ${got} and ${want} as PyTorch's (${f.error}): ${e.message}`);
            return true;
          }, `at [${f.input_shape}]`);
        });
      }
    } finally {
      model.dispose();
    }
  });

  test('gpt: the LM head is tied (one tensor under both keys) and the model is causal at every length', () => {
    const fx = loadFixture('gpt');
    const model = buildLoaded('gpt', fx);
    try {
      assert.equal(model.lm_head.weight, model.wte.weight);
      assert.deepEqual(fx.state_dict['lm_head.weight'].data, fx.state_dict['wte.weight'].data);
      for (const c of fx.cases) {
        om.tidy(() => {
          const { idx } = caseInputs(c);
          const [B, T] = idx.shape;
          const other = idx.clone();
          other.set_([B - 1, T - 1], (Number(idx.toArray()[B * T - 1]) + 1) % 20);
          const d = Array.from(model.forward(idx).sub(model.forward(other)).abs().amax(2).toArray()); // [B, T]
          const last = d.slice((B - 1) * T);
          assert.ok(last.slice(0, T - 1).every((v) => v === 0) && last[T - 1] > 0, `per-position change at ${sizesText(c.sizes)}: ${last}`);
        });
      }
    } finally {
      model.dispose();
    }
  });
});
