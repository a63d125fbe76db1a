// The norm family from JS: softmax / logSoftmax (methods and functions), layerNorm, groupNorm,
// batchNorm, scaledDotProductAttention, and the modules LayerNorm, GroupNorm, BatchNorm1d/2d,
// Softmax, LogSoftmax, MultiheadAttention (PyTorch's names and state dicts, train/eval), against
// values computed here by hand; bad arguments; and models traced and run in onnxruntime-web.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { near, vals, memoryHooks, withTraced } from './helpers.mjs';

memoryHooks();
const F = om.nn.functional;

/** Reference layer norm of the rows of a flat array (row length n, biased variance). */
function refNorm(x, n, eps = 1e-5) {
  const out = [];
  for (let r = 0; r < x.length / n; r++) {
    const row = x.slice(r * n, r * n + n);
    const m = row.reduce((a, b) => a + b, 0) / n;
    const v = row.reduce((a, b) => a + (b - m) ** 2, 0) / n;
    for (const e of row) out.push((e - m) / Math.sqrt(v + eps));
  }
  return out;
}

describe('softmax and logSoftmax', () => {
  test('rows sum to 1 and equal exp / sum; logSoftmax is its log; method and function agree', () => {
    om.tidy(() => {
      const x = om.tensor([[1, 2, 3], [-1, 0, 1000]]);
      const s = Math.exp(1) + Math.exp(2) + Math.exp(3);
      near(vals(x.softmax(-1)), [Math.exp(1) / s, Math.exp(2) / s, Math.exp(3) / s, 0, 0, 1], 1e-6);
      near(vals(F.softmax(x, 1)), vals(x.softmax(1)), 0);
      near(vals(x.logSoftmax(1)), [1 - Math.log(s), 2 - Math.log(s), 3 - Math.log(s), -1001, -1000, 0], 1e-5);
      near(vals(F.logSoftmax(x.slice(1, 0, 2), 0)), vals(x.slice(1, 0, 2).softmax(0).log()), 1e-6);
      near(vals(new om.nn.Softmax(0).forward(x)), vals(x.softmax(0)), 0);
      near(vals(new om.nn.LogSoftmax(-1).forward(x)), vals(x.logSoftmax(-1)), 0);
    });
  });

  test('the gradient of sum(softmax(x) * c) is y * (c - sum(y * c))', () => {
    om.tidy(() => {
      const x = om.tensor([[0.5, -1, 2]]);
      x.requiresGrad = true;
      const c = [1, 2, -3];
      const y = x.softmax(1);
      y.mul(om.tensor([c])).sum().backward();
      const yv = vals(y);
      const dot = yv.reduce((a, v, i) => a + v * c[i], 0);
      near(vals(x.grad), yv.map((v, i) => v * (c[i] - dot)), 1e-6);
    });
  });

  test('bad arguments are OmErrors', () => {
    om.tidy(() => {
      const x = om.ones([2, 3]);
      assert.throws(() => x.softmax(2), { name: 'OmError', kind: 'IndexOutOfRange', message: /softmax: dim 2 is out of range/ });
      assert.throws(() => x.softmax(0.5), { kind: 'InvalidArgument', message: /softmax: dim must be an integer/ });
      assert.throws(() => F.logSoftmax('x', 0), { kind: 'InvalidArgument', message: /logSoftmax: input must be a Tensor/ });
      assert.throws(() => om.ones([2], { dtype: 'int64' }).softmax(0), { kind: 'DtypeMismatch' });
      const d = om.ones([2]);
      d.dispose();
      assert.throws(() => F.softmax(d, 0), { kind: 'Disposed' });
    });
  });
});

describe('layerNorm and groupNorm', () => {
  test('layerNorm matches a hand computation, with and without weight and bias', () => {
    om.tidy(() => {
      const xs = [1, 2, 3, 2, 4, 6];
      const x = om.tensor(xs, { shape: [2, 3] });
      const ref = refNorm(xs, 3);
      near(vals(F.layerNorm(x, [3])), ref, 1e-5);
      const w = om.tensor([1, 2, 3]), b = om.tensor([0, 1, -1]);
      near(vals(F.layerNorm(x, 3, { weight: w, bias: b })), ref.map((v, i) => v * [1, 2, 3][i % 3] + [0, 1, -1][i % 3]), 1e-5);
      near(vals(F.layerNorm(x, [2, 3], { eps: 0 })), refNorm(xs, 6, 0), 1e-5);
      assert.throws(() => F.layerNorm(x, [4]), { kind: 'ShapeMismatch', message: /expected input with shape \[\*, 4\], but got input of size \[2,3\]/ });
      assert.throws(() => F.layerNorm(x, [3], { eps: 'a' }), { kind: 'InvalidArgument', message: /layerNorm: eps must be a number/ });
      assert.throws(() => F.layerNorm(x, [3], 5), { kind: 'InvalidArgument', message: /layerNorm: options must be an object/ });
      assert.throws(() => F.layerNorm(x, [3], { weight: [1, 2, 3] }), { kind: 'InvalidArgument', message: /layerNorm: weight must be a Tensor/ });
    });
  });

  test('nn.LayerNorm: PyTorch names and defaults, gradients for weight and bias', () => {
    const ln = new om.nn.LayerNorm([3]);
    try {
      assert.deepEqual(Object.keys(ln.stateDict()), ['weight', 'bias']);
      assert.deepEqual(vals(ln.weight), [1, 1, 1]);
      assert.deepEqual(vals(ln.bias), [0, 0, 0]);
      om.tidy(() => {
        const x = om.tensor([[1, 2, 4], [0, 0, 3]]);
        const y = ln.forward(x);
        y.mul(om.tensor([1, 2, 3])).sum().backward();
        const xh = refNorm([1, 2, 4, 0, 0, 3], 3);
        near(vals(ln.weight.grad), [0, 1, 2].map((j) => (xh[j] + xh[3 + j]) * (j + 1)), 1e-5);
        near(vals(ln.bias.grad), [2, 4, 6], 1e-6);
      });
      const plain = new om.nn.LayerNorm(4, { elementwiseAffine: false });
      assert.deepEqual(Object.keys(plain.stateDict()), []);
      assert.throws(() => new om.nn.LayerNorm([]), { kind: 'InvalidArgument', message: /LayerNorm: normalizedShape must be non-empty/ });
    } finally {
      ln.dispose();
    }
  });

  test('groupNorm: one group is layerNorm over [C, *], C groups normalise each channel', () => {
    om.tidy(() => {
      const x = om.randn([2, 4, 3], { seed: 3 });
      near(vals(F.groupNorm(x, 1)), vals(F.layerNorm(x, [4, 3])), 1e-6);
      near(vals(F.groupNorm(x, 4)), refNorm(vals(x), 3), 1e-5);
      const gn = new om.nn.GroupNorm(2, 4);
      assert.deepEqual(Object.keys(gn.stateDict()), ['weight', 'bias']);
      near(vals(gn.forward(x)), refNorm(vals(x), 6), 1e-5);
      gn.dispose();
      assert.throws(() => F.groupNorm(x, 3), { kind: 'InvalidArgument', message: /divisible by num_groups/ });
      assert.throws(() => new om.nn.GroupNorm(3, 4), { kind: 'InvalidArgument', message: /GroupNorm: numChannels must be divisible by numGroups/ });
    });
  });
});

describe('batchNorm and nn.BatchNorm2d', () => {
  test('a training step updates running_mean / running_var by PyTorch\'s rule and num_batches_tracked', () => {
    const bn = new om.nn.BatchNorm2d(2, { momentum: 0.1 });
    try {
      assert.deepEqual(Object.keys(bn.stateDict()), ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']);
      assert.deepEqual(bn.namedBuffers().map((e) => e[0]), ['running_mean', 'running_var', 'num_batches_tracked']);
      assert.equal(bn.num_batches_tracked.dtype, 'int64');
      om.tidy(() => {
        const x = om.randn([3, 2, 2, 2], { seed: 5 });
        const xv = vals(x);
        const chan = (c) => xv.filter((_, i) => Math.floor(i / 4) % 2 === c);
        const v0 = bn.running_mean.version;
        const y = bn.forward(x);
        assert.ok(bn.running_mean.version > v0, 'the update bumps the version');
        for (const c of [0, 1]) {
          const e = chan(c);
          const m = e.reduce((a, b) => a + b, 0) / e.length;
          const ss = e.reduce((a, b) => a + (b - m) ** 2, 0);
          near([vals(bn.running_mean)[c]], [0.1 * m], 1e-6, 'running_mean');
          near([vals(bn.running_var)[c]], [0.9 + 0.1 * ss / (e.length - 1)], 1e-6, 'running_var (unbiased)');
          // normalised with the biased variance
          near([vals(y)[c * 4]], [(xv[c * 4] - m) / Math.sqrt(ss / e.length + 1e-5)], 1e-5);
        }
        assert.equal(bn.num_batches_tracked.item(), 1);
        assert.equal(bn.running_mean.requiresGrad, false);
        // eval: the running statistics normalise and nothing changes
        bn.eval();
        const rm = vals(bn.running_mean), rv = vals(bn.running_var);
        const e = bn.forward(x);
        near([vals(e)[4]], [(xv[4] - rm[1]) / Math.sqrt(rv[1] + 1e-5)], 1e-5);
        assert.equal(bn.num_batches_tracked.item(), 1);
      });
    } finally {
      bn.dispose();
    }
  });

  test('momentum null is a cumulative average; trackRunningStats false uses batch statistics; BatchNorm1d', () => {
    const bn = new om.nn.BatchNorm1d(2, { momentum: null, affine: false });
    const free = new om.nn.BatchNorm1d(2, { trackRunningStats: false });
    try {
      assert.deepEqual(Object.keys(bn.stateDict()), ['running_mean', 'running_var', 'num_batches_tracked']);
      assert.deepEqual(Object.keys(free.stateDict()), ['weight', 'bias']);
      om.tidy(() => {
        bn.forward(om.tensor([[1, 0], [3, 0]]));
        bn.forward(om.tensor([[5, 0], [7, 0]]));
        near(vals(bn.running_mean), [(2 + 6) / 2, 0], 1e-6); // the mean of the two batch means
        free.eval();
        near(vals(free.forward(om.tensor([[1, 2], [3, 6]]))), [-1, -1, 1, 1], 1e-4);
      });
      assert.throws(() => om.tidy(() => bn.forward(om.ones([2, 2, 2, 2]))), { kind: 'InvalidArgument', message: /BatchNorm1d: expected 2D or 3D input \(got 4D input\)/ });
      assert.throws(() => om.tidy(() => F.batchNorm(om.ones([2, 2]), null, null)), { kind: 'InvalidArgument', message: /running_mean and running_var must be given in evaluation mode/ });
      assert.throws(() => om.tidy(() => F.batchNorm(om.ones([1, 2]), null, null, { training: true })), { kind: 'InvalidArgument', message: /more than 1 value per channel/ });
      assert.throws(() => om.tidy(() => F.batchNorm(om.ones([2, 2]), om.zeros([2]), null)), { kind: 'InvalidArgument', message: /give both runningMean and runningVar/ });
    } finally {
      bn.dispose();
      free.dispose();
    }
  });
});

describe('attention', () => {
  test('scaledDotProductAttention: the definition, causal and masks', () => {
    om.tidy(() => {
      const q = om.randn([2, 3, 4], { seed: 1 }), k = om.randn([2, 5, 4], { seed: 2 }), v = om.randn([2, 5, 6], { seed: 3 });
      const ref = q.matmul(k.transpose(1, 2)).mul(0.5).softmax(-1).matmul(v);
      near(vals(F.scaledDotProductAttention(q, k, v)), vals(ref), 1e-6);
      near(vals(F.scaledDotProductAttention(q, k, v, { scale: 0.5, attnMask: om.ones([3, 5], { dtype: 'bool' }) })), vals(ref), 1e-6);
      const vs = om.randn([4, 3], { seed: 4 }), qs = om.randn([4, 2], { seed: 5 });
      const c = F.scaledDotProductAttention(qs, qs, vs, { isCausal: true });
      near(vals(c).slice(0, 3), vals(vs).slice(0, 3), 1e-6); // query 0 sees key 0 only
      assert.throws(() => F.scaledDotProductAttention(qs, qs, vs, { isCausal: true, attnMask: om.ones([4, 4]) }),
        { kind: 'InvalidArgument', message: /attn_mask should not be set when is_causal/ });
      assert.throws(() => F.scaledDotProductAttention(qs, qs, vs, { scale: 'x' }), { kind: 'InvalidArgument', message: /scale must be a number/ });
    });
  });

  test('nn.MultiheadAttention: PyTorch names, needWeights both ways, masks, batchFirst', () => {
    om.manualSeed(4);
    const mha = new om.nn.MultiheadAttention(8, 2);
    try {
      assert.deepEqual(Object.keys(mha.stateDict()), ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']);
      assert.deepEqual(mha.in_proj_weight.shape, [24, 8]);
      assert.deepEqual(vals(mha.out_proj.bias), Array(8).fill(0));
      om.tidy(() => {
        const x = om.randn([5, 3, 8], { seed: 6 }); // [L, N, E]
        const [o, w] = mha.forward(x, x, x);
        assert.deepEqual(o.shape, [5, 3, 8]);
        assert.deepEqual(w.shape, [3, 5, 5]);
        near(vals(w.sum(-1)), Array(15).fill(1), 1e-5);
        const [o2, w2] = mha.forward(x, x, x, { needWeights: false });
        assert.equal(w2, null);
        near(vals(o2), vals(o), 1e-5);
        // a padded key gets no weight
        const pad = om.tensor([[false, false, false, false, true], [false, false, false, false, false], [false, false, false, false, false]]);
        const [, wp] = mha.forward(x, x, x, { keyPaddingMask: pad });
        near(vals(wp.select(0, 0).select(1, 4)), Array(5).fill(0), 0);
        const [, wh] = mha.forward(x, x, x, { averageAttnWeights: false, attnMask: om.ones([5, 5], { dtype: 'bool' }).triu(1) });
        assert.deepEqual(wh.shape, [3, 2, 5, 5]);
        assert.equal(vals(wh)[1], 0); // above the diagonal is masked
        mha.batchFirst = true;
        const [ob] = mha.forward(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1));
        near(vals(ob.transpose(0, 1).contiguous()), vals(o.contiguous()), 1e-5);
        mha.batchFirst = false;
        assert.throws(() => mha.forward(x, x, x, { isCausal: true }), { kind: 'InvalidArgument', message: /need attnMask if specifying the isCausal hint/ });
      });
      assert.throws(() => new om.nn.MultiheadAttention(6, 4), { kind: 'InvalidArgument', message: /embedDim must be divisible by numHeads/ });
    } finally {
      mha.dispose();
    }
  });
});

// ---- traced models in onnxruntime-web ---------------------------------------------------------

class ConvLikeNet extends om.nn.Module {
  // LeNet-ish without conv: linear features shaped as [N, C, H, W], BatchNorm2d, relu, GroupNorm, classifier.
  constructor() {
    super();
    this.fc1 = new om.nn.Linear(6, 4 * 3 * 3);
    this.bn = new om.nn.BatchNorm2d(4);
    this.gn = new om.nn.GroupNorm(2, 4);
    this.fc2 = new om.nn.Linear(36, 5);
  }

  forward(x) {
    return om.tidy(() => {
      const n = x.shape[0];
      const h = this.bn.forward(this.fc1.forward(x).reshape(n, 4, 3, 3)).relu();
      return this.fc2.forward(this.gn.forward(h).reshape(n, 36)).logSoftmax(-1);
    });
  }
}

class AttentionBlock extends om.nn.Module {
  constructor(e) {
    super();
    this.q = new om.nn.Linear(e, e);
    this.k = new om.nn.Linear(e, e);
    this.v = new om.nn.Linear(e, e);
    this.out = new om.nn.Linear(e, e);
    this.norm = new om.nn.LayerNorm(e);
  }

  forward(x) {
    return om.tidy(() => {
      const a = F.scaledDotProductAttention(this.q.forward(x), this.k.forward(x), this.v.forward(x), { isCausal: true });
      return this.norm.forward(x.add(this.out.forward(a)));
    });
  }
}

describe('traced models in onnxruntime-web', () => {
  test('BatchNorm2d (eval, after a training step), GroupNorm, logSoftmax with a symbolic batch', async () => {
    om.manualSeed(7);
    const net = new ConvLikeNet();
    try {
      om.tidy(() => { net.forward(om.randn([8, 6], { seed: 8 })); }); // running stats move away from 0 / 1
      net.eval();
      await withTraced((keep, trace) => {
        const tm = trace(net, { x: [om.randn([3, 6], { seed: 9 }), ['batch', null]] });
        const ops = tm.graph().nodes.map((nd) => nd.opType);
        assert.ok(ops.includes('BatchNormalization') && ops.includes('InstanceNormalization') && ops.includes('LogSoftmax'), ops.join(','));
        const inits = tm.graph().initializers.map((i) => i.name);
        assert.ok(inits.includes('bn.running_mean') && inits.includes('bn.running_var'), inits.join(','));
      });
    } finally {
      net.dispose();
    }
  });

  test('attention block: Linear q/k/v, causal SDPA, output projection, LayerNorm', async () => {
    om.manualSeed(8);
    const block = new AttentionBlock(8).eval();
    try {
      await withTraced((keep, trace) => {
        const tm = trace(block, { x: [om.randn([2, 5, 8], { seed: 10 }), ['batch', null, null]] });
        const ops = tm.graph().nodes.map((nd) => nd.opType);
        for (const op of ['MatMul', 'Softmax', 'Where', 'LayerNormalization']) assert.ok(ops.includes(op), `${op} in ${ops}`);
      });
    } finally {
      block.dispose();
    }
  });

  test('MultiheadAttention (needWeights false, key padding mask) and the functions without weights', async () => {
    om.manualSeed(9);
    const mha = new om.nn.MultiheadAttention(8, 2, { batchFirst: true }).eval();
    try {
      await withTraced((keep, trace) => {
        const pad = om.tensor([[false, false, true, true], [false, false, false, false]]);
        trace((x) => mha.forward(x, x, x, { needWeights: false, keyPaddingMask: pad })[0], { x: om.randn([2, 4, 8], { seed: 11 }) });
        trace((x) => mha.forward(x, x, x)[1], { x: om.randn([2, 4, 8], { seed: 12 }) }); // the averaged weights
        trace((x) => F.layerNorm(x, [2, 3], { eps: 1e-3 }), { x: om.randn([4, 2, 3], { seed: 13 }) }); // ones as scale
        trace((x) => F.groupNorm(x, 3), { x: om.randn([2, 6], { seed: 14 }) }); // [N, C] and no affine
        trace((x) => F.batchNorm(x, om.full([3], 0.5), om.full([3], 2)), { x: om.randn([4, 3], { seed: 15 }) }); // [N, C]
        trace((x) => x.softmax(0), { x: om.tensor(2) }); // 0-d
      });
    } finally {
      mha.dispose();
    }
  });

  // a symbolic slice of the width that is empty at some sizes (W = 1 here: columns 3 to 5 of 1):
  // GroupNorm's Reshape back to Shape(x) takes allowzero too, else its 0 copies an axis the
  // normalized [N, G, 0] lacks and onnxruntime-web refuses the run (random model 23:63188)
  test('GroupNorm of a slice that is empty at some widths: right in both engines there and beside it', async () => {
    const gn = new om.nn.GroupNorm(2, 4).eval();
    try {
      await withTraced((keep) => {
        const model = (x) => gn.forward(x.slice(3, 3, 5).mul(2));
        const ex = om.randn([3, 4, 6, 11], { seed: 16 });
        const tm = om.trace(model, { x: [ex, ['N', null, 'H', 'W']] });
        keep(tm, { x: ex }, [model(ex)], 'traced', model);
        for (const [n, h, w] of [[5, 12, 1], [2, 3, 3], [1, 7, 4], [4, 5, 20]]) { // empty (W <= 3), one column, two
          const x = om.randn([n, 4, h, w], { seed: 17 + w });
          keep(tm, { x }, [model(x)], `N=${n}, H=${h}, W=${w}`);
        }
      });
    } finally {
      gn.dispose();
    }
  });

  test('BatchNorm2d in training mode is refused while tracing, before it changes anything', () => {
    const bn = new om.nn.BatchNorm2d(2);
    try {
      om.tidy(() => {
        const before = vals(bn.running_mean);
        const err = (() => {
          try {
            om.trace(bn, { x: om.randn([2, 2, 3, 3], { seed: 1 }) });
          } catch (e) {
            return e;
          }
          return null;
        })();
        assert.ok(err instanceof om.TraceError, String(err));
        assert.equal(err.kind, 'UnsupportedOperation');
        assert.match(err.message, /batchNorm: cannot be traced: BatchNorm in training mode .* call eval\(\)/);
        assert.deepEqual(vals(bn.running_mean), before);
        assert.equal(bn.num_batches_tracked.item(), 0);
        assert.equal(om.Tracer.active ?? false, false);
      });
    } finally {
      bn.dispose();
    }
  });
});
