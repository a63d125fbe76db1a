// F.maxPool1d/2d/3d with returnIndices and F.maxUnpool1d/2d/3d against PyTorch
// (tests/js/fixtures/pytorch/ops/max_unpool.json, written by tools/pytorch_pool_indices.py): values,
// indices and gradients, PyTorch's errors; the gradient where a place repeats (finite differences);
// the modules (MaxPool*d's returnIndices, nn.MaxUnpool1d/2d/3d); argument errors; traced and run in
// onnxruntime-web and the Session, also at other sizes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, vals, near, throwsKind, withTraced, checkPyTorchCase, gradcheck } from './helpers.mjs';

memoryHooks();
const F = () => om.nn.functional;
const FIXTURE = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/max_unpool.json', import.meta.url), 'utf8'));
const POOL = { 1: 'maxPool1d', 2: 'maxPool2d', 3: 'maxPool3d' };

function call(c, xs) {
  const { kernelSize, outputSize, ...o } = c.args;
  const [, kind, n, part] = c.op.match(/^(maxPool|maxUnpool)(\d)d(Values|Indices)?$/);
  if (kind === 'maxUnpool') return F()[c.op](xs[0], xs[1], kernelSize, { ...o, outputSize });
  return F()[POOL[n]](xs[0], kernelSize, { ...o, returnIndices: true })[part === 'Values' ? 0 : 1];
}

describe('max pools\' indices and max unpools against PyTorch', () => {
  for (const [k, c] of FIXTURE.cases.entries()) {
    test(`${c.op} ${JSON.stringify(c.args)} on [${c.inputs[0].shape}] (case ${k})`, () => om.tidy(() => checkPyTorchCase(c, (xs) => call(c, xs))));
  }

  test('PyTorch\'s errors: an index outside a smaller plane, an output size out of range or of the wrong length', () => {
    const want = [
      ['IndexOutOfRange', /^maxUnpool2d \(1d, 3d\): index 38 \(element \d+ of plane 0\) is outside the output plane of 35 elements/],
      ['InvalidArgument', /^maxUnpool2d: outputSize\[0\] 8 must lie between 4 and 8 \(exclusive\)/],
      ['InvalidArgument', /^maxUnpool2d: outputSize must have 2 or 4 elements, got 1/],
    ];
    assert.equal(FIXTURE.errors.length, want.length);
    FIXTURE.errors.forEach((e, k) => {
      assert.ok(e.error.length > 0, 'PyTorch refused it');
      const x = om.tensor(e.input.data, { shape: e.input.shape }), i = om.tensor(e.indices.data, { shape: e.indices.shape, dtype: 'int64' });
      try {
        throwsKind(() => F().maxUnpool2d(x, i, e.args.kernelSize, { outputSize: e.args.outputSize }), ...want[k]);
      } finally {
        x.dispose();
        i.dispose();
      }
    });
  });

  test('gradients by finite differences, a place written twice included (the later value stays, and only it gets a gradient)', () => om.tidy(() => {
    const x = om.tensor([0.3, -1.2, 2.5, 0.7, -0.4, 1.9, 0.1, -2.2, 1.1, 0.6, -0.9, 1.4], { shape: [1, 2, 2, 3] });
    gradcheck((a) => F().maxPool2d(a, 2, { stride: 1, returnIndices: true })[0], x);
    const [v, i] = F().maxPool2d(x, 2, { stride: 1, returnIndices: true });
    gradcheck((a) => F().maxUnpool2d(a, i, 2, { stride: 1 }), v.detach());
    const twice = om.tensor([[[0, 3, 3, 1, 0]]], { dtype: 'int64' }); // places 0 and 3 written twice
    const u = om.tensor([[[0.5, -1, 2, 0.25, 1.5]]]);
    assert.deepEqual(vals(F().maxUnpool1d(u, twice, 1)), [1.5, 0.25, 0, 2, 0]);
    gradcheck((a) => F().maxUnpool1d(a, twice, 1), u);
    gradcheck((a) => F().maxUnpool3d(a, om.tensor([[[[[5, 0], [7, 2]]]]], { dtype: 'int64' }), 2), om.tensor([[[[[1, -2], [0.5, 3]]]]]));
  }));

  test('the modules: MaxPool*d\'s returnIndices, MaxUnpool1d/2d/3d, a pool and unpool round trip', () => om.tidy(() => {
    const x = om.randn([2, 3, 6, 8], { seed: 1 });
    const [v, i] = new om.nn.MaxPool2d(2, { returnIndices: true }).forward(x);
    near(vals(v), vals(F().maxPool2d(x, 2)), 0, 'values');
    assert.equal(i.dtype, 'int64');
    const back = new om.nn.MaxUnpool2d(2).forward(v, i);
    assert.deepEqual(back.shape, [2, 3, 6, 8]);
    // each window's maximum in its place, zeros elsewhere: pooling it again gives the same values
    near(vals(F().maxPool2d(back.add(om.full(back.shape, -1e4).mul(back.eq(0))), 2)), vals(v), 0, 'round trip');
    near(vals(new om.nn.MaxUnpool2d(2).forward(v, i, [7, 9])), vals(F().maxUnpool2d(v, i, 2, { outputSize: [7, 9] })), 0, 'outputSize');
    const m1 = new om.nn.MaxUnpool1d(3, { stride: 2, padding: 1 });
    assert.deepEqual([m1.kernelSize, m1.stride, m1.padding], [3, 2, 1]);
    const [v1, i1] = new om.nn.MaxPool1d(3, { stride: 2, padding: 1, returnIndices: true }).forward(om.randn([2, 3, 47], { seed: 5 }));
    assert.deepEqual(m1.forward(v1, i1).shape, [2, 3, 47]); // (24 - 1) 2 - 2 + 3
    const x3 = om.randn([3, 4, 4, 6], { seed: 2 }); // unbatched [C, D, H, W]
    const [v3, i3] = new om.nn.MaxPool3d(2, { returnIndices: true }).forward(x3);
    assert.deepEqual(v3.shape, [3, 2, 2, 3]);
    near(vals(new om.nn.MaxUnpool3d(2).forward(v3, i3)), vals(F().maxUnpool3d(v3.unsqueeze(0), i3.unsqueeze(0), 2).squeeze(0)), 0, 'unbatched');
    assert.equal(new om.nn.MaxPool2d(2).returnIndices, false);
  }));

  test('argument errors', () => om.tidy(() => {
    const v = om.randn([1, 2, 3, 3], { seed: 3 }), i = om.zeros([1, 2, 3, 3], { dtype: 'int64' });
    throwsKind(() => F().maxPool2d(v, 2, { returnIndices: 1 }), 'InvalidArgument', /maxPool2d: returnIndices must be a boolean, got 1/);
    throwsKind(() => new om.nn.MaxPool2d(2, { returnIndices: 'yes' }), 'InvalidArgument', /MaxPool2d: returnIndices must be a boolean, got a string/);
    throwsKind(() => new om.nn.MaxPool2d(2, { divisorOverride: 2 }), 'InvalidArgument', /MaxPool2d: unknown option 'divisorOverride'/);
    throwsKind(() => F().maxUnpool2d(v, i, 2, { output: 3 }), 'InvalidArgument', /maxUnpool2d: unknown option 'output'/);
    throwsKind(() => new om.nn.MaxUnpool2d([2, 2, 2]), 'InvalidArgument', /MaxUnpool2d: kernelSize must be an integer or 2 integers, got 3/);
    throwsKind(() => F().maxUnpool2d(v, i.to('float32'), 2), 'DtypeMismatch', /maxUnpool2d \(1d, 3d\): indices must be int64, not float32/);
    throwsKind(() => F().maxUnpool2d(v.to('int64'), i, 2), 'DtypeMismatch', /maxUnpool2d \(1d, 3d\): takes float32, not int64/);
    throwsKind(() => F().maxUnpool2d(v, i.narrow(3, 0, 2), 2), 'ShapeMismatch', /maxUnpool2d \(1d, 3d\): indices \[1,2,3,2\] must have the input's shape \[1,2,3,3\]/);
    throwsKind(() => F().maxUnpool2d(v, i.add(36), 2), 'IndexOutOfRange', /maxUnpool2d \(1d, 3d\): index 36 \(element 8 of plane 1\) is outside the output plane of 36 elements/);
    throwsKind(() => F().maxUnpool2d(v, i.sub(1), 2), 'IndexOutOfRange', /maxUnpool2d \(1d, 3d\): index -1 /);
    throwsKind(() => F().maxUnpool1d(v, i, 2), 'InvalidArgument', /maxUnpool2d \(1d, 3d\): takes the output size \(2 integers for input \[1,2,3,3\]\), got 1/);
    throwsKind(() => F().maxUnpool1d(v.flatten(), i.flatten(), 2), 'ShapeMismatch', /maxUnpool2d \(1d, 3d\): input \[18\] must have 3 to 5 dims \(\[N, C, L\] to \[N, C, D, H, W\]\)/);
  }));
});

describe('traced, run in onnxruntime-web and the Session', () => {
  test('max pools\' indices: symbolic sizes (odd, 1), padding, ceil_mode, a window of padding only, 1-D and 3-D', () => withTraced((keep, trace) => {
    const opTypes = (tm) => tm.graph().nodes.map((n) => n.opType);
    const both = (k, o) => (x) => F().maxPool2d(x, k, { ...o, returnIndices: true });
    const plain = trace(both(2), { x: [om.randn([2, 3, 6, 8], { seed: 4 }), ['B', null, 'H', 'W']] });
    assert.deepEqual(opTypes(plain).filter((t) => t === 'MaxPool').length, 2, opTypes(plain).join(' '));
    trace(both(3, { stride: 2, padding: 1 }), { x: [om.randn([2, 3, 7, 9], { seed: 5 }), ['B', null, 'H', 'W']] });
    trace(both(3, { stride: 2, ceilMode: true }), { x: [om.randn([2, 2, 8, 7], { seed: 6 }), ['B', null, 'H', 'W']] });
    // a dilated ceil_mode pool whose end padding reaches the kernel: Pad with -inf first, the
    // places taken apart in the padded plane and moved back
    const padded = trace(both([1, 2], { stride: [1, 2], dilation: [1, 2], padding: [0, 1], ceilMode: true }), { x: om.randn([2, 2, 3, 6], { seed: 7 }) });
    assert.ok(opTypes(padded).includes('Pad'), opTypes(padded).join(' '));
    // kernel 2, dilation 2, padding 1 over a width of 1: a window of padding taps only, whose
    // place PyTorch puts past the input (MaxPool's Indices cannot): refused
    const empty = both([1, 2], { dilation: [1, 2], padding: [0, 1] });
    assert.deepEqual(vals(empty(om.ones([1, 1, 1, 1]))[1]), [1]);
    assert.throws(() => om.trace(empty, { x: om.randn([1, 2, 3, 1], { seed: 7 }) }),
      (e) => e instanceof om.TraceError && e.kind === 'UnsupportedOperation' && /a window of padding taps only/.test(e.message));
    trace((x) => F().maxPool1d(x, 3, { stride: 2, padding: 1, returnIndices: true }), { x: [om.randn([2, 3, 11], { seed: 8 }), ['B', null, 'L']] });
    trace((x) => F().maxPool3d(x, 2, { stride: [1, 2, 2], returnIndices: true }), { x: [om.randn([2, 2, 3, 6, 5], { seed: 9 }), ['B', null, 'D', 'H', 'W']] });
  }));

  test('max unpools: a pool and its unpool with symbolic sizes (the output size, the input\'s, moves with them), a fixed one, 1-D and 3-D', () => withTraced((keep, trace) => {
    // outputSize x.shape, as PyTorch users write it: at an odd size the default would be a row
    // short of the places the pool gave
    const round = (n, k, o = {}) => (x) => {
      const [v, i] = F()[POOL[n]](x, k, { ...o, returnIndices: true });
      return F()[`maxUnpool${n}d`](v, i, k, { stride: o.stride, padding: o.padding, outputSize: x.shape });
    };
    trace(round(2, 2), { x: [om.randn([2, 3, 6, 8], { seed: 10 }), ['B', null, 'H', 'W']] });
    trace(round(2, 3, { stride: 2, padding: 1 }), { x: [om.randn([2, 2, 7, 9], { seed: 11 }), ['B', null, 'H', 'W']] }); // places repeat
    trace(round(1, 2), { x: [om.randn([2, 3, 10], { seed: 12 }), ['B', null, 'L']] });
    trace(round(3, 2), { x: [om.randn([2, 2, 4, 6, 4], { seed: 13 }), ['B', null, 'D', 'H', 'W']] });
    trace((v, i) => F().maxUnpool2d(v, i, 2, { outputSize: [7, 9] }), {
      v: [om.randn([2, 3, 3, 4], { seed: 14 }), ['B', null, null, null]], i: [om.rand([2, 3, 3, 4], { seed: 15 }).mul(63).floor().to('int64'), ['B', null, null, null]],
    });
  }));
});
