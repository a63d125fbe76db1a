// Running extremes and order statistics in PyTorch's names: cummax and cummin (op rows of
// src/ops/misc.c), median, nanmedian, quantile and nanquantile (js/ops/stats.js), bincount,
// unique, uniqueConsecutive and Tensor.type (js/ops/counting.js). Values, indices and gradients against tests/js/fixtures/pytorch/ops/statistics.json
// (written by tools/pytorch_statistics.py: ties, NaN, -0, int64, bool, a 0-d and an empty input, a
// dim out of range), gradients by finite differences, the errors (kind and message), and models
// traced with symbolic axes run in onnxruntime-web and the Session against eager at other sizes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, vals, near, gradcheck, throwsKind, moduleOf, withTraced } from './helpers.mjs';

memoryHooks();

const fx = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/statistics.json', import.meta.url), 'utf8'));
// NaN is null in the JSON, infinities are strings
const nan = (data) => data.map((v) => (v === null ? NaN : Number(v)));
const input = (x) => om.tensor(nan(x.data), { dtype: x.dtype, shape: x.shape });

/** The op of a fixture case on its inputs (Tensors), with the case's arguments. */
const RUN = {
  cummax: ([x], [dim]) => x.cummax(dim),
  cummin: ([x], [dim]) => om.cummin(x, { dim }),
  median: ([x], args) => (args.length ? x.median(...args) : x.median()),
  nanmedian: ([x], args) => (args.length ? om.nanmedian(x, { dim: args[0], keepdim: args[1] }) : om.nanmedian(x)),
  quantile: ([x], [q, dim, keepdim, interpolation]) => x.quantile(Array.isArray(q) ? om.tensor(q) : q, { dim, keepdim, interpolation }),
  nanquantile: ([x], [q, dim, keepdim, interpolation]) => om.nanquantile(x, Array.isArray(q) ? om.tensor(q) : q, dim, keepdim, { interpolation }),
  bincount: ([x, w], [minlength]) => (w ? x.bincount(w, minlength) : om.bincount(x, { minlength })),
  unique: ([x], [returnInverse, returnCounts, dim]) => x.unique({ returnInverse, returnCounts, dim }),
  unique_consecutive: ([x], [returnInverse, returnCounts, dim]) => om.uniqueConsecutive(x, { returnInverse, returnCounts, dim }),
};

/** A median of the whole tensor: PyTorch spreads its gradient over the elements equal to it, the library gives it to one. */
const wholeMedian = (c) => c.op.endsWith('median') && !c.args.length;

describe('against PyTorch', () => {
  test('every fixture case: values, indices, dtypes, shapes and the gradient, or an error where PyTorch raises', () => om.tidy(() => {
    const seen = new Set();
    for (const c of fx.cases) {
      const what = `${c.op}(${c.inputs.map((x) => `[${x.shape}] ${x.dtype}`).join(', ')}; ${JSON.stringify(c.args)})`;
      seen.add(c.op);
      const xs = c.inputs.map(input);
      if (c.error) {
        assert.throws(() => RUN[c.op](xs, c.args), (e) => e instanceof om.OmError, `${what} should fail as PyTorch's "${c.error}"`);
        continue;
      }
      if (c.grad) xs[0].requiresGrad = true;
      const out = RUN[c.op](xs, c.args);
      const outs = Array.isArray(out) ? out : [out];
      assert.equal(outs.length, c.outputs.length, what);
      outs.forEach((o, j) => {
        const e = c.outputs[j];
        assert.deepEqual([o.dtype, o.shape], [e.dtype, e.shape], `${what} output ${j}`);
        // Object.is: -0 and NaN as PyTorch gives them
        vals(o).forEach((v, k) => assert.ok(Object.is(v, nan(e.data)[k]), `${what} output ${j}[${k}]: ${v} vs ${e.data[k]}`));
      });
      if (c.grad) {
        const w = om.arange(1, outs[0].numel() + 1).reshape(outs[0].shape);
        outs[0].mul(w).sum().backward();
        const g = vals(xs[0].grad);
        if (!wholeMedian(c) || !g.length) {
          assert.deepEqual(g, nan(c.grad), `${what} gradient`);
        } else { // the same total, on one of the elements PyTorch spreads it over
          // PyTorch's shares are rounded (1/3 each of 1 sums to 1.00000004)
          near([g.reduce((a, b) => a + b)], [nan(c.grad).reduce((a, b) => a + b)], 1e-6, `${what} gradient's sum`);
          assert.deepEqual(g.map((v, k) => v !== 0 && c.grad[k] === 0), g.map(() => false), `${what} gradient's place`);
          assert.equal(g.filter((v) => v !== 0).length, 1, `${what} gradient on one element`);
        }
      }
    }
    assert.deepEqual([...seen].sort(), Object.keys(RUN).sort());
  }));

  test('cummax and cummin read as PyTorch\'s named tuple; the gradient goes to the chosen index', () => om.tidy(() => {
    const x = om.tensor([[1, 3, 2, 3], [0, -1, 5, 4]]);
    const r = x.cummax(1);
    assert.equal(r.values, r[0]);
    assert.equal(r.indices, r[1]);
    assert.deepEqual([vals(r.values), vals(r.indices)], [[1, 3, 3, 3, 0, 0, 5, 5], [0, 1, 1, 3, 0, 0, 2, 2]]);
    assert.deepEqual(vals(om.cummin(x, 0).indices), [0, 0, 0, 0, 1, 1, 0, 0]);
    // values 0.25 apart at least, so finite differences never change which is the extreme
    const spaced = () => om.tensor([[0.5, -0.25, 1.5, 0.75, 2], [1, 0.25, -0.5, 1.25, 0]]);
    gradcheck((a) => a.cummax(1)[0], spaced());
    gradcheck((a) => a.cummin(0)[0].mul(om.arange(5)), spaced());
    gradcheck((a) => om.cummax(a, 0)[0], om.tensor(2.5));
  }));
});

describe('counting, distinct values and type strings', () => {
  test('unique: each NaN its own value, after the numbers; -0 and 0 are one value (the first kept)', () => om.tidy(() => {
    const [v, inv, cnt] = om.unique(om.tensor([2, NaN, 0, -0, 1, NaN]), { returnInverse: true, returnCounts: true, sorted: false });
    assert.deepEqual(vals(v).map(String), ['0', '1', '2', 'NaN', 'NaN']);
    assert.ok(Object.is(vals(v)[0], 0));
    assert.deepEqual([vals(inv), vals(cnt)], [[2, 3, 0, 0, 1, 4], [2, 1, 1, 1, 1]]);
    const big = om.tensor([2n ** 62n + 1n, 2n ** 62n, 2n ** 62n + 1n], { dtype: 'int64' });
    assert.deepEqual([...big.unique().toArray()], [2n ** 62n, 2n ** 62n + 1n]); // every bit compared
  }));

  test('unique along a dim: a row with a NaN is its own row, after the rows it ties with up to the NaN', () => om.tidy(() => {
    const x = om.tensor([[1, NaN], [1, 2], [1, NaN], [0, 5], [-0, 5]]);
    const [v, inv, cnt] = x.unique({ dim: 0, returnInverse: true, returnCounts: true });
    assert.deepEqual([v.shape, vals(v).map(String)], [[4, 2], ['0', '5', '1', '2', '1', 'NaN', '1', 'NaN']]);
    assert.deepEqual([vals(inv), vals(cnt)], [[2, 1, 3, 0, 0], [2, 1, 1, 1]]);
    const [w, runs] = om.uniqueConsecutive(x.t(), { dim: 1, returnCounts: true }); // columns; -0 and 0 one run
    assert.deepEqual([w.shape, vals(runs)], [[2, 4], [1, 1, 1, 2]]);
  }));

  test('type() names the dtype as PyTorch; type(dtype) converts', () => om.tidy(() => {
    const x = om.tensor([1.5, -2]);
    assert.deepEqual([x, om.tensor([1n]), om.tensor([true]), x.to('float64')].map((t) => t.type()),
      ['torch.FloatTensor', 'torch.LongTensor', 'torch.BoolTensor', 'torch.DoubleTensor']);
    assert.deepEqual([...x.type('int64').toArray()], [1n, -2n]);
    assert.equal(x.type('torch.LongTensor').dtype, 'int64');
    assert.equal(x.type('torch.FloatTensor'), x); // itself, as PyTorch's
    assert.equal(x.type('torch.DoubleTensor').dtype, 'float64');
    throwsKind(() => x.type('torch.IntTensor'), 'InvalidArgument', /^type: invalid type: 'torch\.IntTensor'/);
    throwsKind(() => x.type('int32'), 'InvalidArgument', /^to: /);
  }));
});

describe('errors', () => {
  test('each names the op and the values', () => om.tidy(() => {
    throwsKind(() => om.zeros([2, 3]).cummax(2), 'IndexOutOfRange', /^cummax: dim 2 is out of range/);
    throwsKind(() => om.zeros([2, 3]).cummin(-3), 'IndexOutOfRange', /^cummin: dim -3 is out of range/);
    throwsKind(() => om.zeros([2]).cummax(), 'InvalidArgument', /^cummax: dim is required$/);
    throwsKind(() => om.zeros([2]).cummin({ axis: 0 }), 'InvalidArgument', /^cummin: unknown option 'axis'/);
    const x = om.zeros([2, 3]);
    throwsKind(() => om.tensor([true]).median(), 'DtypeMismatch', /^median: "median" not implemented for 'Bool'$/);
    throwsKind(() => om.nanmedian(om.tensor([true]), 0), 'DtypeMismatch', /^nanmedian: "nanmedian" not implemented for 'Bool'$/);
    throwsKind(() => om.zeros([0, 3]).median(0), 'IndexOutOfRange', /^median: median\(\): Expected reduction dim 0 to have non-zero size\.$/);
    throwsKind(() => x.median(2), 'IndexOutOfRange', /^median: dim 2 is out of range for a tensor of 2 dims$/);
    throwsKind(() => x.quantile(0.5, { interpolation: 'cubic' }), 'InvalidArgument',
      /^quantile: interpolation must be one of linear, lower, higher, midpoint or nearest, got a string \("cubic"\)$/);
    throwsKind(() => om.zeros([2], { dtype: 'int64' }).quantile(0.5), 'DtypeMismatch', /^quantile: quantile\(\) input tensor must be either float or double dtype, not int64$/);
    throwsKind(() => x.quantile(om.zeros([1, 1])), 'ShapeMismatch', /^quantile: quantile\(\) q must be a scalar or 1D tensor, got \[1,1\]$/);
    throwsKind(() => x.nanquantile(om.tensor([1n])), 'DtypeMismatch', /^nanquantile: quantile\(\) q tensor must be same dtype as the input tensor \(float32\), not int64$/);
    throwsKind(() => x.quantile('0.5'), 'InvalidArgument', /^quantile: q must be a number or a Tensor, got a string/);
    throwsKind(() => x.quantile(-0.5), 'InvalidArgument', /^quantile: quantile\(\) q must be in the range \[0, 1\] but got -0\.5$/);
    throwsKind(() => x.quantile(om.tensor([0.5, NaN])), 'InvalidArgument', /^quantile: quantile\(\) q values must be in the range \[0, 1\]$/);
    throwsKind(() => om.zeros([0]).quantile(0.5), 'InvalidArgument', /^quantile: quantile\(\) input tensor must be non-empty$/);
    throwsKind(() => x.quantile(0.5, 3), 'IndexOutOfRange', /^quantile: dim 3 is out of range/);
    throwsKind(() => x.quantile(0.5, { axis: 0 }), 'InvalidArgument', /^quantile: unknown option 'axis'/);
    const labels = om.tensor([1n, 3n]);
    throwsKind(() => om.bincount(om.tensor([1, 2])), 'DtypeMismatch', /^bincount: "bincount_cpu" not implemented for 'float32' \(takes int64\)$/);
    throwsKind(() => om.bincount(om.tensor([[1n]])), 'InvalidArgument', /^bincount: bincount only supports 1-d non-negative integral inputs\.$/);
    throwsKind(() => om.bincount(om.tensor([1n, -2n])), 'InvalidArgument', /^bincount: bincount only supports 1-d non-negative integral inputs\.$/);
    throwsKind(() => labels.bincount(om.ones([3])), 'InvalidArgument', /^bincount: weights should be 1-d and have the same length as input$/);
    throwsKind(() => labels.bincount({ minlength: -1 }), 'InvalidArgument', /^bincount: minlength should be >= 0$/);
    throwsKind(() => labels.bincount(null, 1.5), 'InvalidArgument', /^bincount: minlength must be an integer, got 1\.5$/);
    const rows = om.tensor([[1, 2], [1, 2]]);
    throwsKind(() => rows.unique({ dim: 2 }), 'IndexOutOfRange', /^unique: dim 2 is out of range for a tensor of 2 dims$/);
    throwsKind(() => om.uniqueConsecutive(rows, { dim: -3 }), 'IndexOutOfRange', /^uniqueConsecutive: dim -3 is out of range for a tensor of 2 dims$/);
    throwsKind(() => om.tensor(2).unique({ dim: 0 }), 'IndexOutOfRange', /^unique: dim 0 is out of range for a tensor of 0 dims \(a 0-d tensor has no slices\)$/);
    throwsKind(() => rows.unique({ dim: 0.5 }), 'InvalidArgument', /^unique: dim must be an integer, got 0\.5$/);
    throwsKind(() => om.zeros([0, 3]).unique({ dim: 1 }), 'InvalidArgument',
      /^unique: There are 0 sized dimensions, and they aren't selected, so unique cannot be applied \(shape \[0,3\], dim 1\)$/);
    throwsKind(() => om.zeros([0, 0]).uniqueConsecutive({ dim: 0 }), 'InvalidArgument',
      /^uniqueConsecutive: Number of zero sized dimensions is more than one, so unique cannot be applied \(shape \[0,0\]\)$/);
    throwsKind(() => labels.unique({ sorted: 1 }), 'InvalidArgument', /^unique: sorted must be a boolean, got 1$/);
    throwsKind(() => labels.uniqueConsecutive({ sorted: true }), 'InvalidArgument', /^uniqueConsecutive: unknown option 'sorted'/);
  }));
});

describe('traced', () => {
  test('cummax and cummin along symbolic and fixed axes: onnxruntime-web and the Session agree with eager', () => withTraced((keep, trace) => {
    const model = moduleOf((x) => {
      const [v, i] = x.cummax(1);
      const [w, j] = x.cummin(-1);
      return [v.mul(2), i, w, j, x.cummax(0).indices];
    });
    trace(model, { x: [om.randn([2, 5, 4], { seed: 30 }), ['b', 'n', 'm']] });
    // ties, NaN, -0 and infinities: the later index, the last NaN, the element's own bits
    const ties = moduleOf((x) => [...x.cummax(1), ...x.cummin(1)]);
    trace(ties, { x: [input(fx.cases[0].inputs[0]), [null, 'n']] });
    const ints = moduleOf((x, b) => [...x.cummax(0), ...x.cummin(1), ...b.cummax(1), ...b.cummin(0)]);
    trace(ints, {
      x: [om.tensor([[5, 1], [5, 7], [-2, 7], [3, 3]], { dtype: 'int64' }), ['n', null]],
      b: [om.tensor([[true, false, true], [false, false, true]]), [null, 'k']],
    });
    // an axis a symbol can make empty (n - 2 from n = 2)
    const short = moduleOf((x) => x.slice(1, 2).cummax(1));
    trace(short, { x: [om.randn([3, 6], { seed: 31 }), [null, om.Dim('n', { min: 2 })]] });
  }));

  test('bincount of a constant with traced float32 weights is an index_add: agrees at other sizes', () => withTraced((keep, trace) => {
    const labels = om.tensor([2n, 0n, 2n, 5n, 1n]);
    const model = moduleOf((w) => [om.bincount(labels, w.select(0, 0)), labels.bincount(w.select(0, 1).mul(2), 7), om.unique(labels).add(w.shape[0])]);
    trace(model, { w: [om.randn([3, 5], { seed: 32 }), ['n', null]] });
  }));

  test('bincount and unique of a traced input are refused: their sizes are decided by its values', () => om.tidy(() => {
    for (const [name, f] of [['bincount', (x) => x.bincount()], ['unique', (x) => x.unique()],
      ['uniqueConsecutive', (x) => om.uniqueConsecutive(x, { returnCounts: true })], ['unique', (x) => x.unique({ dim: 0 })],
      ['uniqueConsecutive', (x) => x.uniqueConsecutive({ dim: -1, returnInverse: true })]]) {
      assert.throws(() => om.trace(moduleOf(f), { x: om.tensor([1n, 0n, 1n]) }),
        (e) => e instanceof om.TraceError && e.kind === 'DataDependent' && e.message.startsWith(`${name}: its result's size is decided by the input's values; `), name);
    }
    assert.equal(om.tensor([1n]).bincount().dtype, 'int64'); // the library stays usable
  }));

  test('median, nanmedian, quantile and nanquantile (a sort and gathers) at other sizes', () => withTraced((keep, trace) => {
    const model = moduleOf((x) => {
      const [v, i] = x.median(1);
      const [w, j] = om.nanmedian(x, 0, true);
      return [v, i, w, j, x.median(), om.nanmedian(x), x.quantile(0.3, { dim: 1 }), x.quantile(0.6, { interpolation: 'nearest' }),
        om.nanquantile(x, om.tensor([0.25, 0.5, 1]), { dim: 0, keepdim: true, interpolation: 'midpoint' }),
        x.nanquantile(0.7, 1, false, { interpolation: 'lower' }), x.quantile(om.tensor([0.1, 0.9]), { dim: -1, interpolation: 'higher' })];
    });
    // NaNs in some rows and columns (the sort's graph puts them last, as eager), ties
    const x = om.tensor([[4, 1, NaN, 1, 2, 4, 0], [0, 7, 7, 2, 2, 5, 3], [NaN, NaN, 2, NaN, 1, 1, 9], [3, 3, 3, 8, -1, 0, 2]]);
    trace(model, { x: [x, ['n', 'm']] });
  }));
});
