// Autograd through in-place writes, as PyTorch's version counter and CopySlices: writes into
// tensors a program makes (zeros, a clone, an op's result), through views, give PyTorch's
// gradients (tests/js/fixtures/pytorch/ops/inplace_grad.json, written by
// tools/pytorch_inplace_grad.py: each case below is the fixture's program written again in JS)
// and finite differences' (the base, its views and the values written all move); writes into a
// leaf that requires grad or a view of one are refused at the call, and a value saved for
// backward then changed is refused at backward, naming the op (docs/api.md "Tensor").
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, near, vals, gradcheck, moduleOf, withTraced } from './helpers.mjs';

memoryHooks();

const fx = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/inplace_grad.json', import.meta.url), 'utf8'));
const T = (fn) => () => om.tidy(fn);

/** The fixture's programs (tools/pytorch_inplace_grad.py), line for line. */
const PROGRAMS = {
  as_strided_windows: (L) => [L.x.asStrided([3, 3], [1, 1], 2).mul(L.a)],
  as_strided_of_view: (L) => {
    const xs = L.x.slice(0, 1);
    return [xs.asStrided([2, 2], [4, 1]), xs.t().asStrided([3], [5], 1)];
  },
  as_strided_of_expanded: (L) => [L.v.unsqueeze(0).expand(3, 4).asStrided([2, 3], [1, 1], 0)],
  as_strided_scatter_into_clone: (L) => [om.asStridedScatter(L.x.mul(2), L.z.slice(1, 1, 4).add(1), [2, 3], [1, 4], 1)],
  write_then_as_strided: (L) => {
    const y = L.x.clone();
    y.asStrided([2, 2], [5, 1], 1).copy_(L.z.slice(1, 0, 2));
    return [y];
  },
  zeros_slice_copy: (L) => {
    const m = om.zeros([6]);
    m.slice(0, 1, 4).copy_(L.a.mul(2));
    m.slice(0, 4).copy_(L.a.slice(0, 0, 2).exp());
    return [m, m.sum().reshape([1])];
  },
  zeros_rows_copy: (L) => {
    const m = om.zeros([4, 3]);
    m.select(0, 0).copy_(L.a);
    m.t().select(0, 1).slice(0, 1, 3).copy_(L.v.slice(0, 0, 2).mul(L.a.select(0, 1)));
    return [m.mul(m)];
  },
  clone_slice_zero: (L) => {
    const y = L.x.clone();
    y.slice(1, 1, 3).zero_();
    return [y.mul(L.x)];
  },
  clone_slice_mul: (L) => {
    const y = L.x.mul(1.5);
    y.slice(0, 1).slice(1, 0, 2).mul_(2);
    return [y];
  },
  clone_select_add: (L) => {
    const y = L.x.clone();
    y.select(1, 0).add_(L.a);
    return [y.tanh()];
  },
  clone_index_put: (L) => {
    const y = L.x.clone();
    y.indexPut_([om.tensor([2n, 0n])], L.z);
    return [y];
  },
  clone_index_put_accumulate: (L) => {
    const y = L.x.clone();
    y.indexPut_([om.tensor([1n, 1n])], L.z, true);
    return [y];
  },
  clone_view_masked_fill: (L) => {
    const y = L.x.clone();
    y.select(0, 1).maskedFill_(om.tensor([true, false, false, true]), -2);
    return [y.sigmoid()];
  },
  read_before_write: (L) => {
    const y = L.x.clone();
    const before = y.select(0, 0).mul(3);
    y.slice(0, 0, 2).slice(1, 1).fill_(0.5);
    return [before, y];
  },
  other_view_after_write: (L) => {
    const y = L.z.add(1);
    const r0 = y.select(0, 0), r1 = y.select(0, 1);
    r0.copy_(L.v.mul(2));
    return [r1.mul(r0), y];
  },
  view_of_view: (L) => {
    const y = L.x.clone();
    y.t().slice(0, 1, 3).select(0, 0).copy_(L.a);
    y.select(0, 2).slice(0, 1, 3).copy_(L.v.slice(0, 1, 3));
    return [y];
  },
  write_twice: (L) => {
    const m = om.zeros([2, 4]);
    m.select(0, 0).copy_(L.v);
    m.slice(1, 1, 3).copy_(m.select(0, 0).slice(0, 0, 2).mul(L.z.slice(1, 0, 2)));
    return [m];
  },
  write_twice_add: (L) => {
    const m = om.zeros([2, 4]);
    m.select(0, 0).copy_(L.v);
    m.slice(1, 1, 3).copy_(m.select(0, 0).slice(0, 0, 2).add(L.z.slice(1, 0, 2)));
    return [m];
  },
  leaf_view_write: (L) => { L.x.slice(0, 0, 2).zero_(); return []; },
  leaf_write: (L) => { L.a.mul_(2); return []; },
  saved_input_changed: (L) => {
    const y = L.x.clone();
    const w = y.mul(y);
    y.select(0, 1).zero_();
    return [w];
  },
  inplace_reads_saved: (L) => {
    const y = L.x.mul(1.5);
    y.mul_(L.v);
    y.sin_();
    y.slice(0, 1).fmod_(0.75);
    return [y];
  },
  saved_output_changed: (L) => {
    const y = L.a.exp();
    y.slice(0, 0, 2).mul_(2);
    return [y];
  },
  result_fill: (L) => {
    const y = L.x.mul(2);
    y.fill_(0.5);
    assert.equal(y.requiresGrad, true, 'a filled result still requires grad (PyTorch: FillBackward)');
    const w = L.a.mul(3);
    w.copy_(om.tensor([1, -2, 3]));
    assert.equal(w.requiresGrad, true, 'a result a constant is copied into still requires grad');
    return [y, y.mul(L.a.unsqueeze(1)), w.mul(L.v.slice(0, 0, 3))];
  },
};

/** sum(out_k * w_k), w_k the fixture's ramp 0.5, 1, 1.5, ... of out_k's shape. */
const rampLoss = (outs) => outs.map((o) => {
  const n = o.shape.reduce((p, q) => p * q, 1);
  return o.mul(om.arange(n).mul(0.5).add(0.5).reshape(o.shape)).sum();
}).reduce((s, l) => s.add(l), om.zeros([]));

const leavesOf = (c) => Object.fromEntries(Object.entries(c.leaves).map(([k, v]) => {
  const t = om.tensor(v.data).reshape(v.shape);
  t.requiresGrad = true;
  return [k, t];
}));

describe('PyTorch fixtures (tools/pytorch_inplace_grad.py)', () => {
  test('every program of the fixture is written here, and the fixture has errors of both kinds', () => {
    assert.deepEqual(Object.keys(PROGRAMS).sort(), fx.cases.map((c) => c.name).sort());
    assert.deepEqual([...new Set(fx.cases.map((c) => c.at).filter(Boolean))].sort(), ['backward', 'write']);
  });
  for (const c of fx.cases) {
    test(c.name, T(() => {
      const L = leavesOf(c);
      // PyTorch's words without its final period and hint: the message starts with the call
      const words = c.error ? c.error.split(/\.( Hint|$)/)[0] : null;
      if (c.at === 'write') {
        assert.throws(() => PROGRAMS[c.name](L), (e) => e.kind === 'Autograd' && e.message.includes(words), c.error);
        return;
      }
      const outs = PROGRAMS[c.name](L);
      assert.equal(outs.length, c.outputs.length);
      outs.forEach((o, k) => {
        assert.deepEqual(o.shape, c.outputs[k].shape);
        near(vals(o), c.outputs[k].data, 1e-6, `output ${k}`);
      });
      const loss = rampLoss(outs);
      if (c.at === 'backward') {
        // PyTorch names the tensor's maker; onemodel the op whose saved value changed
        assert.throws(() => loss.backward(), (e) => e.kind === 'Autograd' &&
          /^backward: one of the variables needed for gradient computation has been modified by an inplace operation: (input \d+|output \d+) of \w+ /.test(e.message), c.error);
        return;
      }
      loss.backward();
      for (const [k, g] of Object.entries(c.grads)) {
        // PyTorch 1.13's as_strided_scatter gives its input the gradient where src was written and
        // none elsewhere (the reverse of the function's derivative); finite differences check
        // onemodel's below
        if (c.name === 'as_strided_scatter_into_clone' && k === 'x') continue;
        if (g === null) assert.equal(L[k].grad, null, `${k} gets no gradient`);
        else near(vals(L[k].grad), g, 1e-5, `grad of ${k}`);
      }
    }));
  }
});

describe('finite differences', () => {
  // every leaf a program writes from, through the views, with the base's other values moving too
  for (const name of ['as_strided_windows', 'as_strided_scatter_into_clone', 'write_then_as_strided', 'zeros_rows_copy', 'other_view_after_write', 'view_of_view', 'write_twice_add', 'clone_index_put']) {
    test(name, T(() => {
      const c = fx.cases.find((k) => k.name === name);
      const L = leavesOf(c);
      const keys = Object.keys(L).filter((k) => c.grads[k] !== null); // the leaves the program reads
      for (const t of Object.values(L)) t.requiresGrad = false;
      gradcheck((...ts) => rampLoss(PROGRAMS[name](Object.fromEntries(keys.map((k, i) => [k, ts[i]])))).reshape([1]), ...keys.map((k) => L[k]));
    }));
  }
});

describe('views and bases', () => {
  test('a write into a view of a result makes the result and its views require grad; a leaf view stays refused', T(() => {
    const x = om.tensor([1, 2, 3, 4]);
    x.requiresGrad = true;
    const m = om.zeros([4]);
    const left = m.slice(0, 0, 2), right = m.slice(0, 2);
    assert.equal(m.requiresGrad, false);
    left.copy_(x.slice(0, 1, 3));
    assert.equal(m.requiresGrad, true);
    assert.equal(right.requiresGrad, true, 'a view made before the write reads the written base');
    right.mul(2).sum().backward(); // the part not written: no gradient reaches x
    near(vals(x.grad), [0, 0, 0, 0], 0);
    assert.throws(() => x.slice(0, 0, 2).copy_(m.slice(0, 0, 2)), { kind: 'Autograd', message: /^copy_: a view of a leaf Variable that requires grad is being used in an in-place operation$/ });
    assert.throws(() => x.fill_(1), { kind: 'Autograd', message: /^fill: a leaf Variable that requires grad is being used in an in-place operation$/ });
    om.noGrad(() => x.slice(0, 0, 1).fill_(5)); // allowed without recording, as PyTorch's torch.no_grad()
    near(vals(x), [5, 2, 3, 4], 0);
  }));

  test('gradient to the old value and to the written one after two writes and a detach', T(() => {
    const x = om.tensor([1, 2, 3]);
    x.requiresGrad = true;
    const y = x.mul(2);
    const d = y.detach(); // its own base: writes through it are not y's (PyTorch's detach)
    d.slice(0, 0, 1).fill_(7);
    near(vals(y), [7, 4, 6], 0);
    y.sum().backward();
    near(vals(x.grad), [2, 2, 2], 0, 'y keeps its record');
  }));
  test('a value changed after a division: refused only where its backward reads it (the divisor needs grad), as PyTorch', T(() => {
    const x = om.tensor([1, 2, 4]);
    x.requiresGrad = true;
    const y = x.mul(1);
    const q = y.div(2); // d/dy = 1/2: the numerator is not read
    y.add_(1);
    q.sum().backward();
    near(vals(x.grad), [0.5, 0.5, 0.5], 0);
    const z = om.tensor([2, 4, 8]);
    z.requiresGrad = true;
    const u = x.mul(1);
    const r = u.div(z); // d/dz = -u/z^2: the numerator is read
    u.add_(1);
    assert.throws(() => r.sum().backward(), { kind: 'Autograd', message: /^backward: one of the variables needed for gradient computation has been modified by an inplace operation: input 0 of div was changed in place after it was used \(version 0, now 1\)$/ });
  }));
});

describe('asStrided and asStridedScatter', () => {
  test('errors: kinds and messages', T(() => {
    const x = om.zeros([3, 4]);
    assert.throws(() => x.asStrided([2, 2], [1]), { kind: 'InvalidArgument', message: /^asStrided: mismatch in length of strides and shape \(2 sizes, 1 strides\)$/ });
    assert.throws(() => x.asStrided([4, 4], [4, 1]), { kind: 'IndexOutOfRange', message: /^asStrided: size, stride and storage offset 0 reach element 15 of a storage of 12$/ });
    assert.throws(() => x.asStrided([2], [-1]), { kind: 'InvalidArgument', message: /^asStrided: negative strides are not supported \(stride -1 of dim 0\)$/ });
    assert.throws(() => x.asStrided([2], [1], -1), { kind: 'InvalidArgument', message: /^asStrided: invalid storage offset -1$/ });
    assert.throws(() => om.asStridedScatter(x, om.zeros([2, 2]), [2, 2], [0, 1]), { kind: 'InvalidArgument', message: /^asStridedScatter: unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location$/ });
    assert.throws(() => om.asStridedScatter(x, om.zeros([2, 3]), [2, 2], [1, 1]), { kind: 'ShapeMismatch', message: /^asStridedScatter: source of shape \[2,3\] to \[2,2\]/ });
    assert.throws(() => om.asStridedScatter(x, om.zeros([2], { dtype: 'int64' }), [2], [1]), { kind: 'DtypeMismatch', message: /^asStridedScatter: source is int64, the input float32$/ });
  }));

  test('traced at fixed sizes: one Gather / ScatterND, in onnxruntime-web and the Session; a symbolic axis is refused', () => withTraced((keep, trace) => {
    const x = om.randn([3, 4], { seed: 3 }), s = om.randn([2, 3], { seed: 4 });
    trace(moduleOf((a) => a.mul(2).asStrided([3, 3], [1, 1], 2).exp()), { x });
    trace(moduleOf((a, b) => om.asStridedScatter(a.add(1), b.mul(3), [2, 3], [1, 4], 1)), { a: x, b: s });
    // a write through an as_strided view of a tensor the model made is recorded (an as_strided_scatter)
    trace(moduleOf((a) => {
      const y = a.mul(2);
      y.asStrided([2, 2], [5, 1], 1).copy_(a.slice(0, 0, 2).slice(1, 0, 2).exp());
      return y;
    }), { x });
    assert.throws(() => om.trace(moduleOf((a) => a.mul(2).asStrided([2, 2], [1, 1])), { x: [x, ['batch', null]] }),
      (e) => e instanceof om.TraceError && e.kind === 'SymbolicShape' && /^asStrided: symbolic axis 'batch' \(axis 0 of input 0, example size 3\) cannot be expressed in the graph: asStrided picks storage positions/.test(e.message));
  }));
});
