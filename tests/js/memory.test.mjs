// Handles and memory: dispose, tidy scopes, views outliving their base, the grad wrapper,
// om.memory(). Every test ends at the memory baseline.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { vals, memoryHooks } from './helpers.mjs';

memoryHooks();

describe('dispose', () => {
  test('frees the C tensor; idempotent; isDisposed', () => {
    const base = om.memory();
    const t = om.zeros([1000]);
    const m = om.memory();
    assert.equal(m.tensors, base.tensors + 1);
    assert.ok(m.bytes >= base.bytes + 4000, `bytes ${m.bytes} vs ${base.bytes}`);
    assert.equal(t.isDisposed, false);
    t.dispose();
    assert.equal(t.isDisposed, true);
    t.dispose();
    assert.deepEqual(om.memory().tensors, base.tensors);
  });

  test('a view keeps the storage alive after its base is disposed', () => {
    const x = om.tensor([[1, 2], [3, 4]]);
    const v = x.transpose(0, 1);
    x.dispose();
    assert.deepEqual(vals(v), [1, 3, 2, 4]);
    v.dispose();
  });

  test('om.dispose takes tensors, arrays and objects', () => {
    const a = om.zeros([2]), b = om.zeros([3]), c = om.zeros([4]);
    om.dispose({ a, rest: [b, { c }] });
    assert.ok(a.isDisposed && b.isDisposed && c.isDisposed);
    const d = om.ones([1]);
    om.dispose(d);
    assert.ok(d.isDisposed);
  });
});

describe('tidy', () => {
  test('disposes everything made inside except the result', () => {
    const base = om.memory();
    let inner;
    const r = om.tidy(() => {
      inner = om.ones([3]).mul(2);
      return inner.add(1);
    });
    assert.equal(inner.isDisposed, true);
    assert.deepEqual(vals(r), [3, 3, 3]);
    assert.equal(om.memory().tensors, base.tensors + 1);
    r.dispose();
  });

  test('keeps tensors returned in arrays and objects, returns non-tensors as they are', () => {
    const res = om.tidy(() => {
      const a = om.ones([1]);
      const b = om.zeros([1]);
      om.ones([5]); // dropped
      return { a, list: [b, 7], n: 'x' };
    });
    assert.equal(res.a.isDisposed, false);
    assert.equal(res.list[0].isDisposed, false);
    assert.equal(res.list[1], 7);
    assert.equal(res.n, 'x');
    assert.equal(om.tidy(() => { om.ones([2]); return 42; }), 42);
    om.dispose(res);
  });

  test('nests: a kept tensor belongs to the enclosing scope', () => {
    let kept, outerOnly;
    const out = om.tidy(() => {
      kept = om.tidy(() => {
        om.zeros([2]);
        return om.ones([2]);
      });
      assert.equal(kept.isDisposed, false);
      outerOnly = kept.mul(3);
      return outerOnly.sum();
    });
    assert.equal(kept.isDisposed, true, 'the inner result was disposed by the outer scope');
    assert.equal(outerOnly.isDisposed, true);
    assert.equal(out.item(), 6);
    out.dispose();
  });

  test('leaves tensors made outside alone, even when used inside', () => {
    const x = om.ones([2]);
    om.tidy(() => { x.add(x); });
    assert.equal(x.isDisposed, false);
    x.dispose();
  });

  test('disposes what was made when the function throws', () => {
    const base = om.memory();
    assert.throws(() => om.tidy(() => {
      om.ones([100]);
      om.zeros([2, 3]).add(om.zeros([4]));
    }), { kind: 'ShapeMismatch' });
    assert.equal(om.memory().tensors, base.tensors);
  });

  test('grad wrappers are owned by their tensor, not by tidy', () => {
    const w = om.tensor([1, 2]);
    w.requiresGrad = true;
    const g = om.tidy(() => {
      w.mul(w).sum().backward();
      return w.grad;
    });
    assert.equal(g.isDisposed, false);
    const g2 = om.tidy(() => w.grad);
    assert.equal(g2, g);
    assert.equal(g2.isDisposed, false);
    assert.deepEqual(vals(g), [2, 4]);
    w.dispose();
    assert.equal(g.isDisposed, true);
  });
});

describe('memory()', () => {
  test('reports tensors, bytes and leaked', () => {
    const m = om.memory();
    assert.equal(typeof m.tensors, 'number');
    assert.equal(typeof m.bytes, 'number');
    assert.equal(typeof m.leaked, 'number');
  });

  test('a whole forward/backward/update cycle returns to the baseline', () => {
    const base = om.memory();
    const w = om.randn([4, 3], { seed: 3 });
    w.requiresGrad = true;
    for (let i = 0; i < 5; i++) {
      om.tidy(() => {
        const x = om.rand([8, 4], { seed: i });
        const loss = x.matmul(w).relu().sum(1).mean();
        loss.backward();
        om.noGrad(() => w.copy_(w.sub(w.grad.mul(0.1))));
        w.zeroGrad();
      });
    }
    w.dispose();
    assert.deepEqual([om.memory().tensors, om.memory().bytes], [base.tensors, base.bytes]);
  });

  test('split, max and failed calls leave nothing behind', () => {
    const base = om.memory();
    om.tidy(() => {
      const parts = om.arange(10).split(3);
      assert.equal(parts.length, 4);
      const [v, i] = om.tensor([[1, 2], [3, 0]]).max(1);
      assert.deepEqual(vals(v), [2, 3]);
      assert.deepEqual(vals(i), [1, 0]);
      assert.throws(() => om.tensor([1, 2]).add('x'));
      assert.throws(() => om.where(om.tensor([true]), 1, 'x'));
      assert.throws(() => om.zeros([2]).add(om.zeros([3])));
    });
    assert.equal(om.memory().tensors, base.tensors);
  });
  // the collector's release of dropped tensors: memory-without-tidy.test.mjs
});

describe('ready()', () => {
  test('is idempotent and concurrent-safe', async () => {
    const ps = [om.ready(), om.ready(), om.ready()];
    await Promise.all(ps);
    await om.ready();
    om.tidy(() => assert.deepEqual(vals(om.ones([2])), [1, 1]));
  });
  test('version', () => {
    assert.match(om.version, /^\d+\.\d+\.\d+/);
  });
});
