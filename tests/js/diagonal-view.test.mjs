// torch.diagonal as a view (src/ops/shape.c's diagonal row): writes through it reach the tensor
// (x.diagonal().fill_(0), Tensor.fill_diagonal_), writes into the tensor show in it, its values at
// offsets and dims (negative ones, a transposed input), its gradient by finite differences, and
// traced: the Transpose/Reshape/Slice lowering with a symbolic batch axis in onnxruntime-web and the
// Session at other sizes, a write through it recorded, and a symbolic diagonal dim refused.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { vals, gradcheck, throwsKind, withTraced, memoryHooks } from './helpers.mjs';

memoryHooks();

/** x[i][j] = 10 i + j of [rows, cols] (float32), so each element names its place. */
const grid = (rows, cols) => om.arange(rows).mul(10).unsqueeze(1).add(om.arange(cols)).to('float32');

describe('diagonal is a view', () => {
  test('values at offsets, of other dims, of a transposed input', () => om.tidy(() => {
    const x = grid(3, 4);
    assert.deepEqual(vals(x.diagonal()), [0, 11, 22]);
    assert.deepEqual(vals(x.diagonal(1)), [1, 12, 23]);
    assert.deepEqual(vals(x.diagonal(3)), [3]);
    assert.deepEqual(vals(x.diagonal(-2)), [20]);
    assert.deepEqual(x.diagonal(4).shape, [0]);
    assert.deepEqual(x.diagonal(-3).shape, [0]);
    assert.deepEqual(vals(x.diagonal(1, 1, 0)), [10, 21]); // dims swapped: [j + 1, j]
    assert.deepEqual(vals(x.t().diagonal(-1)), [1, 12, 23]);
    const c = om.arange(24).reshape(2, 3, 4);
    const d = om.diagonal(c, 0, -1, 1); // [2, 3]: c[b, i, i]
    assert.deepEqual(d.shape, [2, 3]);
    assert.deepEqual(vals(d), [0, 5, 10, 12, 17, 22]);
    assert.equal(om.tensor([[true, false], [false, true]]).diagonal().dtype, 'bool');
  }));

  test('x.diagonal().fill_(v) writes into x; a write into x shows in the view', () => om.tidy(() => {
    const x = grid(3, 4);
    const d = x.diagonal(1);
    d.fill_(-1);
    assert.deepEqual(vals(x), [0, -1, 2, 3, 10, 11, -1, 13, 20, 21, 22, -1]);
    x.fill_(5);
    assert.deepEqual(vals(d), [5, 5, 5]);
    const c = om.zeros([2, 3, 3]);
    c.diagonal(0, 1, 2).copy_(om.tensor([[1, 2, 3], [4, 5, 6]]));
    assert.deepEqual(vals(c.sum([1, 2])), [6, 15]);
    assert.deepEqual(vals(c.select(0, 1).select(1, 1)), [0, 5, 0]);
  }));

  test('fillDiagonal_: a matrix, a tall one with and without wrap, a cube', () => om.tidy(() => {
    assert.deepEqual(vals(om.zeros([2, 3]).fillDiagonal_(7)), [7, 0, 0, 0, 7, 0]);
    assert.deepEqual(vals(om.zeros([5, 2]).fillDiagonal_(1)), [1, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    // PyTorch's wrap: every (cols + 1)-th element of the flattened matrix
    assert.deepEqual(vals(om.zeros([5, 2]).fillDiagonal_(1, true)), [1, 0, 0, 1, 0, 0, 1, 0, 0, 1]);
    const cube = om.zeros([2, 2, 2]).fillDiagonal_(3);
    assert.deepEqual(vals(cube), [3, 0, 0, 0, 0, 0, 0, 3]);
    throwsKind(() => om.zeros([2, 3, 2]).fillDiagonal_(1), 'InvalidArgument', /^fillDiagonal_: all dimensions of input must be of equal length$/);
    throwsKind(() => om.zeros([3]).fillDiagonal_(1), 'InvalidArgument', /^fillDiagonal_: dimensions must larger than 1$/);
  }));

  test('diag of a matrix is a copy (torch.diag), diagonal is not', () => om.tidy(() => {
    const x = grid(2, 2);
    om.diag(x).fill_(9);
    assert.deepEqual(vals(x), [0, 1, 10, 11]);
    om.diagonal(x).fill_(9);
    assert.deepEqual(vals(x), [9, 1, 10, 9]);
  }));

  test('errors name the dims', () => om.tidy(() => {
    const x = om.zeros([2, 3]);
    throwsKind(() => x.diagonal(0, 1, -1), 'InvalidArgument', /^diagonal: dim1 and dim2 cannot be the same dim \(1\)$/);
    throwsKind(() => x.diagonal(0, 0, 2), 'IndexOutOfRange', /^diagonal: dim 2 is out of range for 2 dims$/);
    throwsKind(() => om.zeros([3]).diagonal(), 'IndexOutOfRange', /^diagonal: dim 1 is out of range for 1 dims$/);
    throwsKind(() => x.diagonal(0.5), 'InvalidArgument', /^diagonal: offset/);
  }));

  test('gradients by finite differences (offsets, dims, a transposed input)', () => om.tidy(() => {
    gradcheck((t) => t.diagonal(1), om.randn([3, 4], { seed: 1 }));
    gradcheck((t) => t.diagonal(-1, 2, 0).mul(t.diagonal(-1, 2, 0)), om.randn([3, 2, 4], { seed: 2 }));
    gradcheck((t) => t.t().diagonal(), om.randn([3, 4], { seed: 3 }));
  }));
});

describe('diagonal traced', () => {
  test('offsets and dims with a symbolic batch axis: onnxruntime-web and the Session agree at other sizes', () => withTraced((keep, trace) => {
    const f = (x) => ({ main: x.diagonal(0, 1, 2), above: x.diagonal(2, 1, 2), below: x.diagonal(-1, 2, 1).mul(2), none: x.diagonal(9, 1, 2) });
    trace(f, { x: [om.randn([2, 4, 5], { seed: 4 }), ['b', null, null]] });
  }));

  test('a write through a diagonal view of a tensor made in the trace is recorded', () => withTraced((keep, trace) => {
    const f = (x) => {
      const y = x.mul(2);
      y.diagonal(1, 1, 2).fill_(0);
      return y.add(1);
    };
    trace(f, { x: [om.randn([2, 3, 4], { seed: 5 }), ['b', null, null]] });
  }));

  test('a symbolic diagonal dim is refused (SymbolicShape), naming the dim', () => {
    const x = om.randn([3, 4], { seed: 6 });
    try {
      assert.throws(() => om.trace((t) => t.diagonal(), { x: [x, ['n', null]] }),
        (e) => e instanceof om.TraceError && e.kind === 'SymbolicShape' && /^diagonal: dim 0 is symbolic/.test(e.message));
    } finally {
      x.dispose();
    }
  });
});
