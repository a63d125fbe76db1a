// In-place writes and slice assignment (docs/tracing.md "Writes into tensors", docs/api.md):
// sliceScatter/selectScatter eagerly (values, gradients by finite differences, errors), and
// writes into tensors a model makes (fill_, copy_, add_, maskedFill_, set_ through views)
// traced with symbolic sizes and run in onnxruntime-web and the Session at sizes the trace never
// saw, against eager runs. The refusals (inputs, parameters, expanded views) are rows of
// tests/js/trace-errors.test.mjs.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, vals, gradcheck, throwsKind, moduleOf, withTraced } from './helpers.mjs';

memoryHooks();

const T = (fn) => () => om.tidy(fn);

describe('sliceScatter and selectScatter', () => {
  test('values: step 1, negative and open bounds, a step, an empty slice, select', T(() => {
    const x = om.arange(0, 12, { dtype: 'float32' }).reshape([3, 4]);
    assert.deepEqual(vals(x.sliceScatter(om.full([3, 2], -1), 1, 1, 3)), [0, -1, -1, 3, 4, -1, -1, 7, 8, -1, -1, 11]);
    assert.deepEqual(vals(x.sliceScatter(om.full([1, 4], -1), 0, -1)), [0, 1, 2, 3, 4, 5, 6, 7, -1, -1, -1, -1]);
    assert.deepEqual(vals(x.sliceScatter(om.full([3, 2], -1), 1, 0, Infinity, 2)), [-1, 1, -1, 3, -1, 5, -1, 7, -1, 9, -1, 11]);
    assert.deepEqual(vals(x.sliceScatter(om.zeros([3, 0]), 1, 3, 1)), vals(x)); // end before start: empty
    assert.deepEqual(vals(x.selectScatter(om.full([3], 9), 1, -1)), [0, 1, 2, 9, 4, 5, 6, 9, 8, 9, 10, 9]);
    assert.deepEqual(vals(x), vals(om.arange(0, 12)), 'the input is not changed');
    const b = om.zeros([2, 3], { dtype: 'bool' }).selectScatter(om.ones([3], { dtype: 'bool' }), 0, 1);
    assert.deepEqual(vals(b), [0, 0, 0, 1, 1, 1]);
  }));

  test('gradients by finite differences', T(() => {
    gradcheck((a, b) => a.sliceScatter(b, 1, 1, -1), om.randn([3, 5], { seed: 1 }), om.randn([3, 3], { seed: 2 }));
    gradcheck((a, b) => a.sliceScatter(b, 0, 0, Infinity, 2), om.randn([5, 2], { seed: 3 }), om.randn([3, 2], { seed: 4 }));
    gradcheck((a, b) => a.selectScatter(b, 0, -2), om.randn([4, 3], { seed: 5 }), om.randn([3], { seed: 6 }));
  }));

  test('errors name the call and the shapes', T(() => {
    const x = om.zeros([3, 4]);
    throwsKind(() => x.sliceScatter(om.zeros([3, 3]), 1, 1, 3), 'ShapeMismatch',
      /^sliceScatter: src \(float32 \[3,3\]\) does not fit the slice \(float32 \[3,2\]\) of dim 1 from 1 to 3 by 1/);
    throwsKind(() => x.sliceScatter(om.zeros([3, 2], { dtype: 'int64' }), 1, 1, 3), 'DtypeMismatch', /^sliceScatter: src \(int64 \[3,2\]\)/);
    throwsKind(() => x.sliceScatter(om.zeros([3, 2]), 2, 1, 3), 'IndexOutOfRange', /sliceScatter: dim 2 is out of range for 2 dims/);
    throwsKind(() => x.sliceScatter(om.zeros([3, 2]), 1, 1, 3, 0), 'InvalidArgument', /sliceScatter: step 0 must be positive/);
    throwsKind(() => x.selectScatter(om.zeros([3]), 0, 3), 'IndexOutOfRange', /select/);
    throwsKind(() => x.selectScatter(om.zeros([3]), 0, 1), 'ShapeMismatch',
      /^selectScatter: src \(float32 \[3\]\) does not fit the element \(float32 \[4\]\) at index 1 of dim 0/);
    throwsKind(() => x.selectScatter(om.zeros([4], { dtype: 'bool' }), 0, 1), 'DtypeMismatch', /^selectScatter: src \(bool \[4\]\)/);
    throwsKind(() => x.sliceScatter('y', 1, 1, 3), 'InvalidArgument', /sliceScatter: src/);
  }));

  test('in-place arithmetic and masked fill write through views eagerly', T(() => {
    const x = om.arange(0, 6, { dtype: 'float32' }).reshape([2, 3]);
    x.select(1, 0).add_(om.tensor([10, 20]));
    x.slice(1, 1).mul_(2);
    x.maskedFill_(x.gt(20), -1);
    x.select(0, 0).sub_(1).div_(2);
    assert.deepEqual(vals(x), [4.5, 0.5, 1.5, -1, 8, 10]);
    assert.equal(x.zero_(), x);
    assert.deepEqual(vals(x), [0, 0, 0, 0, 0, 0]);
  }));

  test('triu_ and tril_ zero in place, through views too', T(() => {
    const x = om.arange(1, 13).reshape([2, 2, 3]);
    const second = x.select(0, 1);
    assert.equal(second.tril_(), second);
    x.select(0, 0).triu_(1);
    assert.deepEqual(vals(x), [0, 2, 3, 0, 0, 6, 7, 0, 0, 10, 11, 0]);
    throwsKind(() => om.ones([3]).triu_(), 'InvalidArgument', /^triu: /);
  }));
});

/** A module of f. */

/** Swin's shifted-window mask (torchvision's attn_mask before its window partition), written as
 *  PyTorch writes it: zeros of the padded size, a count into each of 3x3 regions. */
function swinMask(H, W, window, shift) {
  const m = om.zeros([H, W]);
  const slices = [[0, -window], [-window, -shift], [-shift, Infinity]];
  let count = 0;
  for (const [h0, h1] of slices) for (const [w0, w1] of slices) m.slice(0, h0, h1).slice(1, w0, w1).fill_(count++);
  return m;
}

describe('writes into tensors a traced model makes', () => {
  test("the issue's example: a mask filled in a slice at a symbolic size", () => withTraced((keep, trace) => {
    const model = moduleOf((x) => { const m = om.zeros([x.shape[0]]); m.slice(0, -2).fill_(1); return x.add(m); });
    const x = om.zeros([6]);
    const tm = trace(model, { x: [x, ['n']] });
    assert.ok(tm.graph().nodes.length > 3, tm.graph().nodes.map((n) => n.opType).join(' '));
    // n = 1 is left out: slice(0, -2)'s own extent rule narrows n to 2 and up (docs/symbolic-axes.md)
    for (const n of [2, 3, 7, 40]) {
      const xn = om.randn([n], { seed: n });
      keep(tm, { x: xn }, model.forward(xn), `n=${n}`);
    }
    assert.deepEqual(vals(model.forward(x)), [0, 0, 0, 0, 1, 1]);
  }));

  for (const [window, shift, H, W, others] of [[5, 2, 10, 15, [[2, 5, 5], [2, 35, 20], [2, 15, 45]]],
    [4, 1, 8, 12, [[2, 4, 4], [2, 20, 8], [2, 44, 16]]]]) {
    test(`Swin's shifted-window mask, window ${window} shift ${shift}, symbolic H and W`, () => withTraced((keep) => {
      // torchvision's next steps: the mask in windows, the pairs of regions that differ -100
      const attnMask = (m, H, W) => {
        const mw = m.reshape([H / window, window, W / window, window]).permute([0, 2, 1, 3]).reshape([-1, window * window]);
        const am = mw.unsqueeze(1).sub(mw.unsqueeze(2));
        return am.maskedFill(am.ne(0), -100);
      };
      const model = moduleOf((x) => {
        const [H, W] = [x.shape[1], x.shape[2]], m = swinMask(H, W, window, shift);
        return [x.add(m), attnMask(m, H, W)];
      });
      const dims = [null, om.Dim('h', { multipleOf: window }), om.Dim('w', { multipleOf: window })];
      const x = om.randn([2, H, W], { seed: 1 });
      const tm = om.trace(model, { x: [x, dims] });
      keep(tm, { x }, model.forward(x), undefined, model);
      for (const shape of others) {
        const xs = om.randn(shape, { seed: shape[1] });
        keep(tm, { x: xs }, model.forward(xs), `at [${shape}]`);
      }
      // at the traced size the regions hold 0..8
      const m = swinMask(H, W, window, shift);
      const at = (h, w) => vals(m)[h * W + w];
      assert.deepEqual([at(0, 0), at(0, W - window), at(0, W - 1), at(H - 1, 0), at(H - 1, W - 1)], [0, 1, 2, 6, 8]);
    }));
  }

  test('a clone of a buffer made in forward, read and written in a slice (Swin V2\'s qkv_bias[length:2 * length].zero_()), with a symbolic batch', () => withTraced((keep) => {
    // each run at other sizes makes its own clone: it is matched with the record run's by the call that made it
    const bias = om.arange(1, 7, { dtype: 'float32' });
    const model = moduleOf((x) => {
      const b = bias.clone();
      b.slice(0, 2, 4).zero_();
      return x.add(b).add(bias.clone().slice(0, 0, 3).sum());
    });
    const x = om.randn([3, 6], { seed: 4 });
    const y = om.noGrad(() => model.forward(x));
    assert.deepEqual(vals(y.sub(x)).slice(0, 6).map((v) => Math.round(v)), [7, 8, 6, 6, 11, 12], 'eagerly: the key\'s third zeroed, the sum 6');
    const traced = om.trace(model, { x: [x, ['batch', null]] });
    keep(traced, { x }, om.noGrad(() => model.forward(x)), undefined, model);
    for (const b of [1, 2, 17]) {
      const xb = om.randn([b, 6], { seed: b });
      keep(traced, { x: xb }, om.noGrad(() => model.forward(xb)), `at batch ${b}`);
    }
    assert.deepEqual(vals(bias), [1, 2, 3, 4, 5, 6], 'the buffer itself is not written');
  }));

  test('x[:, 0] += y on a copy of the input, with a symbolic batch', () => withTraced((keep) => {
    const model = moduleOf((x, y) => { const z = x.clone(); z.select(1, 0).add_(y); z.slice(1, -2).mul_(2); return z; });
    const x = om.randn([3, 5], { seed: 2 }), y = om.randn([3], { seed: 3 });
    const tm = om.trace(model, { x: [x, ['batch', null]], y: [y, ['batch']] });
    keep(tm, { x, y }, model.forward(x, y), undefined, model);
    for (const b of [1, 2, 9]) {
      const xb = om.randn([b, 5], { seed: b }), yb = om.randn([b], { seed: 10 + b });
      keep(tm, { x: xb, y: yb }, model.forward(xb, yb), `batch=${b}`);
    }
  }));

  test('a write into a view, read through other views made before it', () => withTraced((keep) => {
    const model = moduleOf((x) => {
      const m = om.zeros([x.shape[0], 3]);
      const col = m.select(1, 0), rows = m.transpose(0, 1), tail = m.slice(0, 1).reshape([-1]);
      col.fill_(2);
      rows.select(0, 2).slice(0, 0, -1).copy_(x.select(1, 1).slice(0, 1));
      m.set_([0, 1], 7);
      return [x.add(rows.transpose(0, 1)), tail.mul(3), col.add(1), rows]; // rows: a view made before the writes, returned
    });
    const x = om.randn([4, 3], { seed: 4 });
    const tm = om.trace(model, { x: [x, ['n', null]] });
    keep(tm, { x }, model.forward(x), undefined, model);
    for (const n of [2, 3, 11]) {
      const xn = om.randn([n, 3], { seed: 20 + n });
      keep(tm, { x: xn }, model.forward(xn), `n=${n}`);
    }
  }));

  test('a bool mask filled in place; a copy between overlapping slices of one tensor', () => withTraced((keep) => {
    const model = moduleOf((x) => {
      const T = x.shape[1], mask = om.zeros([T, T], { dtype: 'bool' }), b = om.zeros([T]);
      mask.slice(1, -1).fill_(true);
      b.slice(0, 0, 2).copy_(x.select(0, 0).slice(0, 2, 4));
      b.slice(0, 1, 3).copy_(b.slice(0, 0, 2));
      return x.maskedFill(mask, 0).add(b);
    });
    const x = om.randn([5, 5], { seed: 3 });
    const tm = om.trace(model, { x: [x, [om.Dim('t', { min: 4 }), om.Dim('t', { min: 4 })]] });
    keep(tm, { x }, model.forward(x), undefined, model);
    for (const n of [4, 9, 17]) {
      const xn = om.randn([n, n], { seed: n });
      keep(tm, { x: xn }, model.forward(xn), `t=${n}`);
    }
  }));

  test('masked fill and in-place arithmetic on an op result; a static trace too', () => withTraced((keep, trace) => {
    const model = moduleOf((x) => { const y = x.mul(2); y.maskedFill_(x.gt(0.5), 0); y.slice(1, 1, -1).sub_(x.slice(1, 1, -1)); return y; });
    trace(model, { x: [om.randn([3, 6], { seed: 5 }), ['batch', 'seq']] });
    trace(model, { x: om.randn([3, 6], { seed: 6 }) });
    // a stepped slice assignment traces at fixed sizes
    trace((x) => { const y = x.exp(); y.slice(1, 0, Infinity, 2).copy_(x.slice(1, 0, Infinity, 2).neg()); return y; },
      { x: om.randn([2, 5], { seed: 7 }) });
    trace((x) => x.sliceScatter(x.slice(1, 2).neg(), 1, 1, -1), { x: [om.randn([2, 6], { seed: 8 }), ['b', 't']] });
  }));

  test("CLIP's causal mask: made at the input's size, fill_ then triu_ (a write over the whole tensor)", () => withTraced((keep, trace) => {
    const model = moduleOf((x) => {
      const [b, t] = x.shape;
      const mask = om.zeros([b, t, t]);
      mask.fill_(-1e9);
      mask.triu_(1);
      return x.unsqueeze(1).add(mask).softmax(-1);
    });
    trace(model, { x: [om.randn([2, 5], { seed: 9 }), ['batch', 'seq']] });
  }));
});
