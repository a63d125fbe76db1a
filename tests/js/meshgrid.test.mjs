// torch.meshgrid (om.meshgrid): values against tests/js/fixtures/pytorch/ops/meshgrid.json (written
// by tools/pytorch_composites.py), gradients by finite differences, the errors, and models that
// make grids of symbolic sizes traced and run in onnxruntime-web and the Session at other sizes,
// against eager runs.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, vals, gradcheck, throwsKind, moduleOf, withTraced } from './helpers.mjs';

memoryHooks();

const fx = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/meshgrid.json', import.meta.url), 'utf8'));

describe('meshgrid', () => {
  test('matches PyTorch: one to three inputs, 0-d and empty ones, ij and xy', () => om.tidy(() => {
    for (const c of fx.cases) {
      const inputs = c.inputs.map((t) => om.tensor(t.data, { dtype: c.dtype }).reshape(t.shape));
      const what = `${c.dtype} ${c.indexing} of [${c.inputs.map((t) => `[${t.shape}]`)}]`;
      const outs = om.meshgrid(inputs, c.indexing === 'ij' && c.inputs.length === 2 ? undefined : { indexing: c.indexing });
      assert.equal(outs.length, c.outputs.length, what);
      outs.forEach((o, k) => {
        assert.equal(o.dtype, c.dtype, what);
        assert.deepEqual(o.shape, c.outputs[k].shape, what);
        assert.deepEqual(vals(o), c.outputs[k].data.map(Number), what);
      });
    }
  }));

  test('gradients by finite differences', () => om.tidy(() => {
    for (const indexing of ['ij', 'xy']) {
      gradcheck((a, b, c) => {
        const [p, q, r] = om.meshgrid([a, b, c], { indexing });
        return p.mul(q).add(r.mul(2));
      }, om.randn([3], { seed: 1 }), om.randn([4], { seed: 2 }), om.randn([2], { seed: 3 }));
    }
  }));

  test('errors name the op and the tensor', () => om.tidy(() => {
    const a = om.zeros([2]);
    throwsKind(() => om.meshgrid([]), 'InvalidArgument', /^meshgrid: needs at least one tensor$/);
    throwsKind(() => om.meshgrid(Array(9).fill(a)), 'InvalidArgument', /^meshgrid: 9 tensors make more than 8 dims$/);
    throwsKind(() => om.meshgrid([a, om.zeros([2, 2])]), 'ShapeMismatch', /^meshgrid: tensor 1 has 2 dims \(each must be 0-d or 1-D\)$/);
    throwsKind(() => om.meshgrid([a, om.zeros([2], { dtype: 'int64' })]), 'DtypeMismatch', /^meshgrid: tensor 1 is int64, tensor 0 float32 \(all must match\)$/);
    throwsKind(() => om.meshgrid([a], { indexing: 'yx' }), 'InvalidArgument', /^meshgrid: indexing must be 'ij' or 'xy', got/);
    throwsKind(() => om.meshgrid(a), 'InvalidArgument', /^meshgrid: expected an array of tensors/);
    throwsKind(() => om.meshgrid([a, 1]), 'InvalidArgument', /meshgrid: tensors\[1\]/);
  }));
});

describe('meshgrid traced', () => {
  test('grids of symbolic sizes, ij and xy: onnxruntime-web and the Session agree with eager', () => withTraced((keep) => {
    // Swin's relative position index: coordinates of a window, differences of every pair
    const model = moduleOf((x, y) => {
      const [i, j] = om.meshgrid([x, y]);
      const [u, v, w] = om.meshgrid([x, y, x.slice(0, 1)], { indexing: 'xy' });
      return [i.mul(j).add(1), u.sub(v.mul(w))];
    });
    const x = om.randn([4], { seed: 4 }), y = om.randn([6], { seed: 5 });
    const tm = om.trace(model, { x: [x, ['h']], y: [y, ['w']] });
    keep(tm, { x, y }, model.forward(x, y), undefined, model);
    for (const [h, w] of [[1, 1], [2, 9], [40, 3]]) {
      const xs = om.randn([h], { seed: h }), ys = om.randn([w], { seed: 50 + w });
      keep(tm, { x: xs, y: ys }, model.forward(xs, ys), `h=${h} w=${w}`);
    }
  }));
});
