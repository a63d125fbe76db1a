// Autograd from JS: gradients match hand derivatives; accumulation, noGrad, detach and the
// requiresGrad rules.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { near, check, memoryHooks } from './helpers.mjs';

memoryHooks();

const T = (fn) => () => { om.tidy(fn); };

/** A float32 leaf that requires grad. */
function param(data) {
  const t = om.tensor(data);
  t.requiresGrad = true;
  return t;
}

describe('gradients match hand derivatives', () => {
  test('sum(x*w) + mean(x^2) + sum(tanh x)', T(() => {
    const xv = [1, 2, 3], wv = [0.5, -1, 2];
    const x = param(xv), w = param(wv);
    const loss = x.mul(w).sum().add(x.pow(2).mean()).add(x.tanh().sum());
    const tanhSum = xv.reduce((s, v) => s + Math.tanh(v), 0);
    near([loss.item()], [4.5 + 14 / 3 + tanhSum], 1e-5, 'loss');
    assert.equal(loss.requiresGrad, true);
    assert.equal(loss.isLeaf, false);
    loss.backward();
    near(x.grad.toArray(), xv.map((v, i) => wv[i] + (2 * v) / 3 + (1 - Math.tanh(v) ** 2)), 1e-5, 'dx');
    near(w.grad.toArray(), xv, 1e-6, 'dw');
  }));

  test('relu(X @ W + b).sum()', T(() => {
    const X = om.tensor([[1, -2], [3, 1]]);
    const W = param([[1], [2]]), b = param([0.5]);
    const loss = X.matmul(W).add(b).relu().sum();
    near([loss.item()], [5.5]);
    loss.backward();
    check(W.grad, [2, 1], [3, 1]);
    check(b.grad, [1], [1]);
    assert.equal(X.grad, null, 'no grad for a tensor that does not require it');
  }));

  test('division with broadcasting reduces the grad to the input shape', T(() => {
    const a = param([[1, 2, 3], [4, 5, 6]]), b = param([1, 2, 4]);
    a.div(b).sum().backward();
    check(a.grad, [2, 3], [1, 0.5, 0.25, 1, 0.5, 0.25]);
    check(b.grad, [3], [-5, -7 / 4, -9 / 16]);
  }));

  test('sigmoid + exp + log + sqrt + pow', T(() => {
    const xv = [0.5, 2];
    const x = param(xv);
    x.sigmoid().add(x.exp()).add(x.log()).add(x.sqrt()).add(x.pow(3)).sum().backward();
    const s = (v) => 1 / (1 + Math.exp(-v));
    near(x.grad.toArray(), xv.map((v) => s(v) * (1 - s(v)) + Math.exp(v) + 1 / v + 0.5 / Math.sqrt(v) + 3 * v * v), 1e-4);
  }));

  test('pow with a tensor exponent: d/db a^b = a^b ln a', T(() => {
    const a = param([2, 3]), b = param([3, 2]);
    a.pow(b).sum().backward();
    near(a.grad.toArray(), [3 * 4, 2 * 3], 1e-4);
    near(b.grad.toArray(), [8 * Math.log(2), 9 * Math.log(3)], 1e-4);
  }));

  test('through views: transpose, slice, select, reshape, permute, expand', T(() => {
    const x = param([[1, 2, 3], [4, 5, 6]]);
    x.transpose(0, 1).slice(0, 0, 2).sum().backward();
    check(x.grad, [2, 3], [1, 1, 0, 1, 1, 0]);
    x.zeroGrad();
    x.select(1, 2).mul(om.tensor([1, 2])).sum().backward();
    check(x.grad, [2, 3], [0, 0, 1, 0, 0, 2]);
    x.zeroGrad();
    x.reshape(3, 2).permute(1, 0).mul(om.tensor([[1], [10]])).sum().backward();
    check(x.grad, [2, 3], [1, 10, 1, 10, 1, 10]);
    const c = param([[1], [2]]);
    c.expand(2, 3).sum().backward();
    check(c.grad, [2, 1], [3, 3]);
    const u = param([1, 2]);
    u.unsqueeze(0).squeeze().mul(u).sum().backward();
    check(u.grad, [2], [2, 4]);
  }));

  test('through cat, stack and split', T(() => {
    const a = param([1, 2]), b = param([3, 4]);
    om.cat([a, b]).mul(om.tensor([1, 2, 3, 4])).sum().backward();
    check(a.grad, [2], [1, 2]);
    check(b.grad, [2], [3, 4]);
    a.zeroGrad(); b.zeroGrad();
    om.stack([a, b], 1).mul(om.tensor([[1, 10], [100, 1000]])).sum().backward();
    check(a.grad, [2], [1, 100]);
    check(b.grad, [2], [10, 1000]);
    a.zeroGrad();
    const [a0, a1] = a.split(1);
    a0.mul(5).add(a1.mul(7)).sum().backward();
    check(a.grad, [2], [5, 7]);
  }));

  test('reductions: mean over a dim, amax ties share, max values', T(() => {
    const x = param([[1, 2], [3, 4]]);
    x.mean(0).sum().backward();
    check(x.grad, [2, 2], [0.5, 0.5, 0.5, 0.5]);
    const t = param([1, 3, 3]);
    t.amax().backward();
    check(t.grad, [3], [0, 0.5, 0.5]);
    const m = param([[1, 5], [7, 0]]);
    const [values] = m.max(1);
    values.sum().backward();
    check(m.grad, [2, 2], [0, 1, 1, 0]);
  }));

  test('batched matmul with a broadcast operand', T(() => {
    const A = param([[[1, 2], [3, 4]], [[5, 6], [7, 8]]]);
    const B = param([[1, 2], [3, 4]]);
    A.matmul(B).sum().backward();
    check(A.grad, [2, 2, 2], [3, 7, 3, 7, 3, 7, 3, 7]);
    // dB[k][j] = sum over batch and rows of A[..][k]
    check(B.grad, [2, 2], [16, 16, 20, 20]);
    const v = param([1, 2]);
    v.matmul(v).backward();
    check(v.grad, [2], [2, 4]);
  }));

  test('where routes the grad', T(() => {
    const x = param([1, -1, 2]);
    om.where(x.gt(0), x, 0).mul(om.tensor([1, 2, 3])).sum().backward();
    check(x.grad, [3], [1, 0, 3]);
  }));
});

describe('gradient bookkeeping', () => {
  test('grads accumulate across backward calls', T(() => {
    const x = param([1, 2]);
    const y = x.mul(x).sum();
    y.backward({ retainGraph: true });
    check(x.grad, [2], [2, 4]);
    y.backward({ retainGraph: true }); // the graph was kept
    check(x.grad, [2], [4, 8]);
    x.mul(3).sum().backward();
    check(x.grad, [2], [7, 11]);
    x.zeroGrad();
    assert.equal(x.grad, null);
    y.backward(); // and now freed
    check(x.grad, [2], [2, 4]);
    assert.throws(() => y.backward(), { kind: 'Autograd', message: /the graph through sum was freed by an earlier backward/ });
  }));

  test('the grad wrapper is owned by its tensor: no new handle per access', T(() => {
    const x = param([1, 2]);
    x.mul(2).sum().backward();
    const g1 = x.grad;
    const before = om.memory().tensors;
    for (let i = 0; i < 10; i++) x.grad;
    assert.equal(om.memory().tensors, before);
    assert.equal(x.grad, g1, 'same wrapper while the C grad is unchanged');
    x.zeroGrad();
    assert.equal(g1.isDisposed, true, 'zeroGrad disposes the wrapper');
    x.mul(2).sum().backward();
    const g2 = x.grad;
    x.dispose();
    assert.equal(g2.isDisposed, true, 'dispose() disposes the wrapper');
  }));

  test('backward with an explicit grad', T(() => {
    const x = param([1, 2, 3]);
    x.mul(2).backward(om.tensor([1, 10, 100]));
    check(x.grad, [3], [2, 20, 200]);
  }));

  test('backward on a non-scalar without grad throws Autograd', T(() => {
    const x = param([1, 2, 3]);
    const y = x.mul(2);
    assert.throws(() => y.backward(), (e) => e instanceof om.OmError && e.kind === 'Autograd');
    assert.equal(x.grad, null);
  }));

  test('noGrad: nothing recorded inside, mode restored after (even on throw)', T(() => {
    const x = param([1, 2]);
    const y = om.noGrad(() => x.mul(2));
    assert.equal(y.requiresGrad, false);
    assert.equal(y.isLeaf, true);
    assert.equal(x.mul(2).requiresGrad, true, 'recording again after noGrad');
    assert.throws(() => om.noGrad(() => { throw new Error('boom'); }), /boom/);
    assert.equal(x.mul(2).requiresGrad, true, 'restored after a throw');
    const nested = om.noGrad(() => om.noGrad(() => 5) + (x.mul(1).requiresGrad ? 100 : 0));
    assert.equal(nested, 5, 'nested noGrad keeps recording off, returns the value');
    assert.equal(x.mul(2).requiresGrad, true);
  }));

  test('detach: no grad, shared storage', T(() => {
    const x = param([1, 2]);
    const d = x.detach();
    assert.equal(d.requiresGrad, false);
    assert.equal(d.isLeaf, true);
    assert.equal(d.mul(2).requiresGrad, false);
    const y = x.mul(d).sum();
    y.backward();
    check(x.grad, [2], [1, 2], 0);
    assert.equal(d.grad, null);
    om.noGrad(() => x.fill_(5));
    check(d, [2], [5, 5], 0);
  }));

  test('requiresGrad rules', T(() => {
    const x = om.tensor([1, 2]);
    assert.equal(x.requiresGrad, false);
    x.requiresGrad = true;
    assert.equal(x.requiresGrad, true);
    x.requiresGrad = false;
    assert.equal(x.requiresGrad, false);
    x.requiresGrad = true;
    const y = x.mul(2);
    assert.equal(y.requiresGrad, true);
    assert.equal(y.isLeaf, false);
    assert.throws(() => { y.requiresGrad = false; }, { name: 'OmError', kind: 'InvalidArgument' });
    assert.throws(() => { om.tensor([1n]).requiresGrad = true; }, { kind: 'DtypeMismatch' });
    assert.throws(() => { om.tensor([true]).requiresGrad = true; }, { kind: 'DtypeMismatch' });
    assert.equal(om.tensor([1n]).requiresGrad, false);
  }));

  test('in-place change of a leaf that requires grad: refused outside noGrad', T(() => {
    const w = param([1, 2]);
    assert.throws(() => w.fill_(0), { kind: 'Autograd', message: /^fill: a leaf Variable that requires grad is being used in an in-place operation$/ });
    check(w, [2], [1, 2], 0);
    om.noGrad(() => w.copy_(w.sub(1)));
    check(w, [2], [0, 1], 0);
    assert.equal(w.requiresGrad, true);
  }));

  test('in-place change of a result nothing else read (PyTorch\'s s += y): it takes the result\'s place in the graph', T(() => {
    const x = param([1, 2]);
    const y = param([3, 4]);
    const s = x.mul(y);
    s.add_(y); // s = x * y + y = [6, 12]
    s.mul(s).sum().backward();
    check(s, [2], [6, 12], 0);
    check(x.grad, [2], [2 * 6 * 3, 2 * 12 * 4], 1e-5); // 2 s y
    check(y.grad, [2], [2 * 6 * 2, 2 * 12 * 3], 1e-5); // 2 s (x + 1)
    // followed as PyTorch's CopySlices where another op read the old value (it keeps the old
    // value's gradient) or a view shares the storage (tests/js/inplace-grad.test.mjs has more)
    const u = x.mul(y); // [3, 8]
    const eu = u.mul(2);
    u.add_(1);
    const v = x.mul(y);
    v.slice(0, 0, 1).add_(1);
    x.zeroGrad(); y.zeroGrad();
    eu.sum().add(u.sum()).add(v.mul(v).sum()).backward();
    check(x.grad, [2], [2 * 3 + 3 + 2 * 4 * 3, 2 * 4 + 4 + 2 * 8 * 4], 1e-5); // d(2u + u + v^2)/dx with v = [4, 8]
    // an in-place op whose backward needs the value it overwrote (mul_ reads m for y's gradient)
    // reads a copy, as PyTorch's in-place ops save the original self: m = x * y * y
    const m = x.mul(y);
    m.mul_(y);
    x.zeroGrad(); y.zeroGrad();
    m.sum().backward();
    check(x.grad, [2], [3 * 3, 4 * 4], 1e-5); // y^2
    check(y.grad, [2], [2 * 1 * 3, 2 * 2 * 4], 1e-5); // 2 x y
    // the op that made it keeps its output for its backward (softmax): the write is made (DeBERTa's
    // XSoftmax zeroes the masked probabilities in place), and a backward through that op is refused
    // there, as PyTorch's
    const p = x.mul(y).softmax(0); // softmax([3, 8])
    p.maskedFill_(om.tensor([true, false]), 0);
    check(p, [2], [0, 1 / (1 + Math.exp(-5))], 1e-6);
    assert.throws(() => p.sum().backward(), { kind: 'Autograd', message: /output 0 of softmax was changed in place after it was saved/ });
    // through a view of it too
    const q = x.mul(y).softmax(0);
    const view = q.slice(0, 0, 1);
    q.maskedFill_(om.tensor([true, false]), 0);
    assert.throws(() => view.sum().backward(), { kind: 'Autograd', message: /output 0 of softmax was changed in place after it was saved/ });
    view.dispose();
  }));

  test('a tensor that requires grad written into one that does not (a slice of new_empty): autograd follows the write, as PyTorch\'s', T(() => {
    // PyTorch's `d = x.new_empty(4); d[:2] = y` makes d track y (CopySlices)
    const x = param([1, 2]);
    const y = x.mul(2);
    const d = om.zeros([4]);
    d.slice(0, 0, 2).copy_(y);
    check(d, [4], [2, 4, 0, 0], 0);
    assert.equal(d.requiresGrad, true);
    d.mul(om.tensor([1, 2, 3, 4])).sum().backward({ retainGraph: true }); // y's graph is read again below
    check(x.grad, [2], [2, 4], 0);
    // through views and ops made after the write, and in place into it again (Longformer's -inf fill)
    x.zeroGrad();
    const s = d.view(2, 2).transpose(0, 1); // [[2, 0], [4, 0]]
    s.slice(0, 0, 1).maskedFill_(om.tensor([[true, false]]), -1); // d = [-1, 4, 0, 0]
    check(d, [4], [-1, 4, 0, 0], 0);
    s.mul(3).sum().backward({ retainGraph: true });
    check(x.grad, [2], [0, 6], 0, 'the filled element gets none');
    // out of place, the same gradient
    x.zeroGrad();
    om.zeros([4]).sliceScatter(y, 0, 0, 2).sum().backward();
    check(x.grad, [2], [2, 2], 0);
    // inside noGrad, and with a constant, the write is an ordinary one
    const f = om.zeros([4]);
    om.noGrad(() => f.slice(0, 0, 2).copy_(y));
    f.slice(0, 2, 4).copy_(om.tensor([5, 6]));
    check(f, [4], [2, 4, 5, 6], 0);
    assert.equal(f.requiresGrad, false);
  }));

  test('a saved tensor changed in place makes backward throw Autograd', T(() => {
    const x = param([1, 2]);
    const c = om.tensor([3, 4]);
    const y = x.mul(c).sum();
    c.fill_(5);
    assert.throws(() => y.backward(), { kind: 'Autograd' });
  }));

  test('a training loop keeps memory flat', () => {
    const w = param([[0.1], [0.2]]);
    const x = om.tensor([[1, 2], [3, 4], [5, 6]]);
    const yt = om.tensor([[1], [2], [3]]);
    const step = () => om.tidy(() => {
      const loss = x.matmul(w).sub(yt).pow(2).mean();
      loss.backward();
      om.noGrad(() => w.copy_(w.sub(w.grad.mul(0.01))));
      w.zeroGrad();
      return loss.item();
    });
    const first = step();
    const after1 = om.memory();
    let last = first;
    for (let i = 0; i < 20; i++) last = step();
    const after = om.memory();
    assert.equal(after.tensors, after1.tensors);
    assert.equal(after.bytes, after1.bytes);
    assert.ok(last < first, `loss fell: ${first} -> ${last}`);
    om.dispose([w, x, yt]);
  });
});
