// torch.roll (om.roll, x.roll): values against tests/js/fixtures/pytorch/ops/roll.json (written by
// tools/pytorch_composites.py), gradients by finite differences, the errors, and models that roll a
// symbolic axis traced and run in onnxruntime-web and the Session at sizes far from the example
// and below the shift, against eager runs.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, vals, gradcheck, throwsKind, moduleOf, withTraced } from './helpers.mjs';

memoryHooks();

const fx = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/roll.json', import.meta.url), 'utf8'));

describe('roll', () => {
  test('matches PyTorch: one dim and several, negative shifts, shifts beyond the size, no dims', () => om.tidy(() => {
    for (const c of fx.cases) {
      const x = om.tensor(fx.inputs[c.dtype], { dtype: c.dtype }).reshape(fx.shape);
      const what = `${c.dtype} shifts ${JSON.stringify(c.shifts)} dims ${JSON.stringify(c.dims)}`;
      if (c.error) {
        throwsKind(() => x.roll(c.shifts, c.dims ?? undefined), 'InvalidArgument', /^roll: \d+ shifts for \d+ dims/);
        continue;
      }
      const y = om.roll(x, c.shifts, c.dims ?? undefined);
      assert.equal(y.dtype, c.dtype, what);
      assert.deepEqual(y.shape, fx.shape, what);
      assert.deepEqual(vals(y), c.data.map(Number), what);
    }
    assert.ok(fx.cases.some((c) => c.error) && fx.cases.some((c) => !c.error));
  }));

  test('empty dims, a 0-d tensor, and an empty tensor', () => om.tidy(() => {
    assert.deepEqual(vals(om.tensor(5).roll(3)), [5]);
    assert.deepEqual(om.tensor(5).roll(3).shape, []);
    assert.deepEqual(om.zeros([2, 0]).roll(4, 1).shape, [2, 0]);
    assert.deepEqual(vals(om.arange(5).roll([2, -1], [0, 0])), [4, 0, 1, 2, 3]);
  }));

  test('gradients by finite differences', () => om.tidy(() => {
    gradcheck((a) => a.roll([1, -5], [0, 1]), om.randn([3, 4], { seed: 1 }));
    gradcheck((a) => om.roll(a, 7), om.randn([2, 3], { seed: 2 }));
  }));

  test('errors name the op, the counts, the dim and the shift', () => om.tidy(() => {
    const x = om.zeros([2, 3]);
    throwsKind(() => x.roll([1, 2], 0), 'InvalidArgument', /^roll: 2 shifts for 1 dims \(one shift per dim, or one shift and no dims\)$/);
    throwsKind(() => x.roll([1, 2]), 'InvalidArgument', /^roll: 2 shifts for 0 dims/);
    throwsKind(() => x.roll([], []), 'InvalidArgument', /^roll: 0 shifts for 0 dims/);
    throwsKind(() => x.roll(1, 2), 'IndexOutOfRange', /^roll: dim 2 is out of range for 2 dims/);
    throwsKind(() => x.roll(2 ** 60, 1), 'InvalidArgument', /^roll: shift 1152921504606846976 is beyond 2\^53$/);
    throwsKind(() => x.roll(1.5, 1), 'InvalidArgument', /roll: shifts/);
    throwsKind(() => x.roll([1, 'a'], [0, 1]), 'InvalidArgument', /roll: shifts\[1\]/);
    throwsKind(() => om.roll('x', 1), 'InvalidArgument', /roll: input/);
  }));
});

describe('roll traced', () => {
  test('a symbolic axis rolled by more than it is at some sizes: onnxruntime-web and the Session agree with eager', () => withTraced((keep) => {
    // Swin's shifted windows roll by -shift on both spatial axes, and back
    const model = moduleOf((x) => x.roll([-3, 5], [1, 2]).mul(2).roll([3, -5], [1, 2]).add(x.roll(13, 2)));
    const x = om.randn([2, 8, 9], { seed: 3 });
    const tm = om.trace(model, { x: [x, ['b', 'h', 'w']] });
    keep(tm, { x }, model.forward(x), undefined, model);
    for (const [h, w] of [[1, 1], [2, 4], [3, 5], [5, 13], [70, 3], [6, 90]]) {
      const xs = om.randn([1, h, w], { seed: h * 100 + w });
      keep(tm, { x: xs }, model.forward(xs), `h=${h} w=${w}`);
    }
  }));

  test('no dims: the flattened tensor of symbolic size', () => withTraced((keep) => {
    const model = moduleOf((x) => x.roll(-7));
    const x = om.randn([3, 4], { seed: 4 });
    const tm = om.trace(model, { x: [x, ['n', null]] });
    keep(tm, { x }, model.forward(x), undefined, model);
    for (const n of [1, 2, 41]) {
      const xs = om.randn([n, 4], { seed: n });
      keep(tm, { x: xs }, model.forward(xs), `n=${n}`);
    }
  }));
});
