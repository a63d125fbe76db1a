// Tensor.unfold (torch.Tensor.unfold: windows along a dim as a new last dim, a view): values
// against windows read element by element, the view sharing storage, the gradient where windows
// overlap, PyTorch's argument errors, and traces with a symbolic axis run in onnxruntime-web and the
// Session at other sizes (the window count computed from the size at run time).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, vals, near, throwsKind, withTraced, gradcheck } from './helpers.mjs';

memoryHooks();
const F = () => om.nn.functional;

/** The windows of x (shape dims) along dim, read index by index: the reference. */
function windows(x, dims, dim, size, step) {
  const n = Math.floor((dims[dim] - size) / step) + 1;
  const out = dims.slice();
  out[dim] = n;
  out.push(size);
  const strides = dims.map((_, d) => dims.slice(d + 1).reduce((a, b) => a * b, 1));
  const total = out.reduce((a, b) => a * b, 1), data = [];
  for (let k = 0; k < total; k++) {
    let rest = k, at = 0;
    const idx = out.map((_, d) => out.slice(d + 1).reduce((a, b) => a * b, 1)).map((s) => { const i = Math.floor(rest / s); rest %= s; return i; });
    for (let d = 0; d < dims.length; d++) at += (d === dim ? idx[d] * step + idx[dims.length] : idx[d]) * strides[d];
    data.push(x[at]);
  }
  return { shape: out, data };
}

describe('Tensor.unfold', () => {
  for (const [dims, dim, size, step] of [[[10], 0, 3, 1], [[2, 9, 3], 1, 4, 2], [[2, 9, 3], -1, 2, 1], [[3, 5], 0, 3, 3],
    [[4, 7], 1, 7, 5], [[2, 6, 5], 0, 1, 1], [[5], 0, 0, 2], [[2, 11, 2], 1, 3, 4]]) {
    test(`[${dims}].unfold(${dim}, ${size}, ${step})`, () => om.tidy(() => {
      const x = om.randn(dims, { seed: dims.length + size });
      const d = dim < 0 ? dim + dims.length : dim;
      const want = windows(Array.from(x.toArray()), dims, d, size, step);
      const got = x.unfold(dim, size, step);
      assert.deepEqual(got.shape, want.shape);
      near(vals(got), want.data, 0, 'windows');
    }));
  }

  test('a 0-d tensor is one element; a non-contiguous input; int64 and bool', () => om.tidy(() => {
    assert.deepEqual(vals(om.tensor(3).unfold(0, 1, 1)), [3]);
    assert.deepEqual(om.tensor(3).unfold(-1, 0, 1).shape, [0]);
    const x = om.randn([4, 6], { seed: 2 });
    const t = x.t(); // [6, 4], strides (1, 6)
    near(vals(t.unfold(0, 2, 2)), vals(t.contiguous().unfold(0, 2, 2)), 0, 'transposed');
    assert.deepEqual(vals(om.arange(6).unfold(0, 3, 3)), [0, 1, 2, 3, 4, 5]);
    assert.equal(om.tensor([true, false, true]).unfold(0, 2, 1).dtype, 'bool');
  }));

  test('a view: a write into the base shows in the windows, and through them into the base', () => om.tidy(() => {
    const x = om.zeros([6]);
    const w = x.unfold(0, 2, 2); // [3, 2], disjoint windows
    x.slice(0, 2, 3).fill_(5);
    assert.deepEqual(vals(w), [0, 0, 5, 0, 0, 0]);
    w.select(0, 2).fill_(1);
    assert.deepEqual(vals(x), [0, 0, 5, 0, 1, 1]);
  }));

  test('the gradient sums overlapping windows (finite differences)', () => om.tidy(() => {
    gradcheck((x) => x.unfold(1, 3, 1).mul(x.unfold(1, 3, 1)), om.randn([2, 6, 2], { seed: 5 }));
    const gradOf = (size, step) => {
      const x = om.ones([5]);
      x.requiresGrad = true;
      x.unfold(0, size, step).sum().backward();
      return vals(x.grad);
    };
    assert.deepEqual(gradOf(3, 1), [1, 2, 3, 2, 1]); // each element's number of windows
    assert.deepEqual(gradOf(2, 3), [1, 1, 0, 1, 1]); // a gap: element 2 is in no window
  }));

  test('argument errors, in PyTorch\'s words', () => om.tidy(() => {
    const x = om.ones([2, 5]);
    throwsKind(() => x.unfold(1, 6, 1), 'InvalidArgument', /unfold: maximum size for tensor at dimension 1 is 5 but size is 6/);
    throwsKind(() => x.unfold(1, 2, 0), 'InvalidArgument', /unfold: step is 0 but must be > 0/);
    throwsKind(() => x.unfold(0, -1, 1), 'InvalidArgument', /unfold: size is -1 but must be >= 0/);
    throwsKind(() => x.unfold(2, 1, 1), 'IndexOutOfRange', /unfold: dim 2 is out of range for 2 dims/);
    throwsKind(() => x.unfold(1, 2.5, 1), 'InvalidArgument', /unfold: size must be an integer, got 2.5/);
  }));
});

describe('traced', () => {
  test('frames of a signal with a symbolic length (window 8, hop 4), padded to whole hops', () => withTraced((keep, trace) => {
    const frames = (x) => {
      const T = x.shape[1];
      return F().pad(x, [0, 0, 0, (4 - (T % 4)) % 4 + 4]).unfold(1, 8, 4).mean(-1);
    };
    trace(frames, { x: [om.randn([2, 13, 3], { seed: 4 }), ['B', 'T', null]] });
  }));

  test('patches of an image with symbolic H and W along both axes, overlapping', () => withTraced((keep, trace) => {
    const patches = (x) => x.unfold(2, 3, 2).unfold(3, 3, 2).sum([-1, -2]);
    trace(patches, { x: [om.randn([1, 2, 9, 11], { seed: 6 }), [null, null, 'H', 'W']] });
  }));

  test('a fixed axis and the last axis (no Transpose needed)', () => withTraced((keep, trace) => {
    trace((x) => x.unfold(-1, 2, 1).add(x.unfold(2, 2, 1)), { x: [om.randn([3, 4, 5], { seed: 8 }), ['B', null, null]] });
  }));

  test('below the window the model fails, so the traced range starts at the window', () => om.tidy(() => {
    const tm = om.trace((x) => x.unfold(1, 5, 2), { x: [om.randn([1, 9]), [null, 'T']] });
    try {
      const t = tm.symbols.find((s) => s.name === 'T');
      assert.equal(t.min, 5);
      assert.equal(t.narrowedBy, 'unfold (call 1)');
    } finally {
      tm.dispose();
    }
  }));
});
