// om.nn's GLU, PReLU, Mish, Softsign, Tanhshrink, Hardshrink, Softshrink, SELU, CELU, LogSigmoid,
// Softmin, the padding modules
// (ZeroPad2d, ConstantPad1d/2d/3d, ReflectionPad1d/2d, ReplicationPad1d/2d) and Unflatten, and their
// om.nn.functional forms: outputs, gradients (a PReLU's weight's too) and errors against PyTorch's
// (tests/js/fixtures/pytorch/ops/activations_padding.json, written by
// tools/pytorch_activations_padding.py), and each traced with a symbolic batch and run in
// onnxruntime-web and the Session at other sizes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { near, vals, throwsKind, memoryHooks, withTraced } from './helpers.mjs';

memoryHooks();
const nn = om.nn;
const F = om.nn.functional;
const fx = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/activations_padding.json', import.meta.url), 'utf8'));

/** PyTorch's message (its first words) -> the library's kind and message for the same mistake. */
const ERRORS = [
  [/^Halving dimension must be even/, 'InvalidArgument', /^glu: halving dimension must be even, but dimension 1 is size 3/],
  [/^Mismatch of parameter numbers/, 'ShapeMismatch', /^prelu: weight of 4 elements \(shape \[4\]\) for 3 channels/],
  [/^lambda must be greater or equal to 0/, 'InvalidArgument', /^softshrink: lambda must be greater or equal to 0, but found to be -1/],
  [/^ZeroDivisionError: alpha cannot be 0 for CELU/, 'InvalidArgument', /^celu: alpha cannot be 0 for CELU$/],
];

describe("the modules on PyTorch's inputs: outputs, gradients and errors", () => {
  for (const c of fx.cases) {
    const what = `${c.module}(${JSON.stringify(c.args).slice(1, -1)})`;
    test(c.error ? `${what} fails as PyTorch's "${c.error.slice(0, 40)}"` : what, () => {
      const m = new nn[c.module](...c.args);
      try {
        om.tidy(() => {
          if (c.weight) om.noGrad(() => m.weight.copy_(om.tensor(c.weight)));
          const x = om.tensor(c.input.data).reshape(c.input.shape);
          if (c.error) {
            const [, kind, re] = ERRORS.find(([torch]) => torch.test(c.error));
            throwsKind(() => m.forward(x), kind, re);
            return;
          }
          x.requiresGrad = true;
          const y = m.forward(x);
          assert.deepEqual(y.shape, c.output.shape);
          near(vals(y), c.output.data, 1e-6, `${what}: output`);
          y.mul(om.arange(y.numel()).mul(0.5).add(0.5).reshape(y.shape)).sum().backward();
          near(vals(x.grad), c.grad, 1e-5, `${what}: gradient`);
          if (c.weight_grad) near(vals(m.weight.grad), c.weight_grad, 1e-4, `${what}: weight's gradient`);
        });
      } finally {
        m.dispose();
      }
    });
  }

  test("PReLU's parameter is 'weight' in the state dict, numParameters long, init-filled", () => {
    const m = new nn.PReLU({ numParameters: 3, init: 0.1 });
    try {
      assert.deepEqual(Object.keys(m.stateDict()), ['weight']);
      near(vals(m.weight), [0.1, 0.1, 0.1]);
      assert.equal(m.weight.requiresGrad, true);
    } finally {
      m.dispose();
    }
  });
});

describe('the functions', () => {
  test('F.glu, F.prelu, F.mish, F.softsign, F.tanhshrink, F.hardshrink, F.softshrink: the modules\' values', () => om.tidy(() => {
    const x = om.tensor([[-2, -0.5, 0, 0.25], [0.75, 1, 3, -4]]);
    near(vals(F.glu(x)), vals(new nn.GLU().forward(x)));
    near(vals(F.glu(x, 0)), [-2 / (1 + Math.exp(-0.75)), -0.5 / (1 + Math.exp(-1)), 0, 0.25 / (1 + Math.exp(4))]);
    near(vals(F.prelu(x, om.tensor([0.5]))), [-1, -0.25, 0, 0.25, 0.75, 1, 3, -2]);
    near(vals(F.prelu(om.tensor([-2, 3]), om.tensor([0.5, 2]))), [-1, 3]); // a 1-D input: its one dim is the channels
    near(vals(F.mish(om.tensor([0, 1]))), [0, Math.tanh(Math.log1p(Math.E))]);
    near(vals(F.softsign(om.tensor([-3, 1]))), [-0.75, 0.5]);
    near(vals(F.tanhshrink(om.tensor([1]))), [1 - Math.tanh(1)]);
    near(vals(F.hardshrink(x, { lambd: 0.5 })), [-2, 0, 0, 0, 0.75, 1, 3, -4]);
    near(vals(F.softshrink(x, 1)), [-1, 0, 0, 0, 0, 0, 2, -3]);
  }));

  test('F.selu, F.celu, F.logsigmoid, F.softmin (and om.selu, om.celu, as torch.selu, torch.celu): values, keywords, extremes', () => om.tidy(() => {
    const x = om.tensor([[-2, -0.5, 0, 0.25], [0.75, 1, 3, -4]]);
    near(vals(om.selu(x)), vals(new nn.SELU().forward(x)));
    near(vals(om.celu(x, 2)), vals(F.celu(x, { alpha: 2 })));
    near(vals(F.celu(x, 2)), vals(x).map((v) => (v > 0 ? v : 2 * Math.expm1(v / 2))));
    near(vals(F.softmin(x, { dim: 0 })), vals(F.softmin(x, 0)));
    near(vals(F.softmin(x, 1, 'float32')), vals(x.neg().softmax(1)));
    // finite where exp(-x) overflows float32 and exact where it underflows
    near(vals(F.logsigmoid(om.tensor([-200, 200]))), [-200, 0]);
    // a large positive input: celu's exponential reads min(x, 0), so its gradient is 1, not NaN
    const big = om.tensor([100, -100]);
    big.requiresGrad = true;
    F.celu(big).sum().backward();
    near(vals(big.grad), [1, 0]);
  }));
});

describe('traced with a symbolic batch: onnxruntime-web and the Session agree with eager at other sizes', () => {
  test('every module in one model', () =>
    withTraced((keep, trace) => {
      const mods = [new nn.GLU(1), new nn.PReLU(2), new nn.Mish(), new nn.Softsign(), new nn.Tanhshrink(), new nn.Hardshrink(),
        new nn.Softshrink(0.25), new nn.ZeroPad2d([1, 0, 2, 1]), new nn.ConstantPad1d(2, -1.5), new nn.ConstantPad3d(1, 0.5),
        new nn.ReflectionPad2d(1), new nn.ReplicationPad2d(1), new nn.ConstantPad2d([1, 1, 0, 2], 3), new nn.Unflatten(1, [2, -1]),
        new nn.SELU(), new nn.CELU(0.5), new nn.LogSigmoid(), new nn.Softmin(1), new nn.Softmin(-1)];
      const rows = [new nn.ReplicationPad1d([0, 2]), new nn.ReflectionPad1d([2, 1])]; // [N, C, L] inputs, as PyTorch's rule
      const model = new (class extends nn.Module {
        constructor() { super(); this.mods = new nn.ModuleList([...mods, ...rows]); }
        forward(x) {
          const ys = mods.map((m, i) => [`y${i}`, m.forward(i === 1 ? x.narrow(1, 0, 2) : x)]);
          return Object.fromEntries([...ys, ...rows.map((m, i) => [`r${i}`, m.forward(x.flatten(2))])]);
        }
      })();
      try {
        trace(model, { x: [om.randn([3, 4, 3, 5], { seed: 2 }).mul(2), ['b', null, null, null]] });
      } finally {
        model.dispose();
      }
    }));
});

describe('prelu and mish are ops of their own', () => {
  test('traced, one PRelu (its slope reshaped to the channel dim) and one Mish node, symbolic batch and width', () =>
    withTraced((keep, trace) => {
      const w = om.tensor([0.25, -0.5, 2]);
      for (const [fn, ops] of [[(x) => F.prelu(x, w), ['Reshape', 'PRelu']], [(x) => F.prelu(x, om.tensor([0.1])), ['Reshape', 'PRelu']],
        [(x) => F.mish(x), ['Mish']]]) {
        const tm = trace(fn, { x: [om.randn([2, 3, 4], { seed: 5 }).mul(3), ['b', null, 'w']] });
        assert.deepEqual(tm.graph().nodes.map((n) => n.opType), ops);
      }
      // a 1-D input: its one dim is the channels
      const tm = trace((x) => F.prelu(x, w), { x: om.tensor([-2, 3, -1]) });
      assert.deepEqual(tm.graph().nodes.map((n) => n.opType), ['Reshape', 'PRelu']);
    }));

  test('a float64 or int64 input is refused as PyTorch refuses it', () => om.tidy(() => {
    throwsKind(() => F.prelu(om.ones([2, 3], { dtype: 'int64' }), om.ones([3])), 'DtypeMismatch', /^prelu: takes a float32 input and weight, got int64 and float32/);
    throwsKind(() => F.mish(om.ones([2], { dtype: 'int64' })), 'DtypeMismatch', /^mish: takes float32, not int64/);
  }));
});

describe('errors', () => {
  test('constructor arguments and inputs', () => {
    throwsKind(() => new nn.ZeroPad2d([1, 2]), 'InvalidArgument', /^ZeroPad2d: padding must be an integer or 4 integers, got/);
    throwsKind(() => new nn.ConstantPad1d(1), 'InvalidArgument', /^ConstantPad1d: value must be a number/);
    throwsKind(() => new nn.ReflectionPad1d(1.5), 'InvalidArgument', /^ReflectionPad1d: padding must be an integer or 2 integers/);
    throwsKind(() => new nn.PReLU(0), 'InvalidArgument', /^PReLU: numParameters must be at least 1, got 0/);
    throwsKind(() => new nn.Unflatten(1), 'InvalidArgument', /^Unflatten: takes dim and unflattenedSize/);
    throwsKind(() => new nn.Unflatten(3, [2, 2]).forward(om.zeros([2, 4])), 'InvalidArgument', /^Unflatten: dim 3 is out of range for 2 dims/);
    throwsKind(() => new nn.Unflatten(1, [3, 2]).forward(om.zeros([2, 4])), 'ShapeMismatch', /cannot reshape \[2,4\] to \[2,3,2\]/);
    throwsKind(() => F.glu(om.zeros([2, 4]), 2), 'IndexOutOfRange', /^glu: dim 2 is out of range for 2 dims/);
    throwsKind(() => F.prelu(om.zeros([2, 4]), om.zeros([2, 2])), 'ShapeMismatch', /^prelu: weight of 4 elements \(shape \[2,2\]\) for 4 channels/);
    throwsKind(() => F.hardshrink(om.zeros([2]), 'a'), 'InvalidArgument', /^hardshrink: lambd must be a number/);
    throwsKind(() => new nn.Hardshrink({ lam: 1 }), 'InvalidArgument', /^Hardshrink: unknown option 'lam'/);
    throwsKind(() => new nn.CELU('a'), 'InvalidArgument', /^CELU: alpha must be a number, got/);
    throwsKind(() => new nn.SELU(1), 'InvalidArgument', /^SELU: inplace must be a boolean, got 1/);
    throwsKind(() => new nn.Softmin(1.5), 'InvalidArgument', /Softmin/);
    throwsKind(() => F.softmin(om.zeros([2, 4])), 'InvalidArgument', /^softmin: takes dim/);
    throwsKind(() => F.softmin(om.zeros([2, 4]), 2), 'IndexOutOfRange', /^softmin: dim 2 is out of range for 2 dims$/);
    throwsKind(() => F.softmin(om.zeros([2, 4]), -3), 'IndexOutOfRange', /^softmin: dim -3 is out of range for 2 dims$/);
    throwsKind(() => F.softmin(om.zeros([2, 4]), { dims: 1 }), 'InvalidArgument', /^softmin: unknown option 'dims'/);
    for (const [fn, who] of [[om.selu, 'selu'], [om.celu, 'celu'], [F.logsigmoid, 'logsigmoid']]) {
      throwsKind(() => fn(om.ones([2], { dtype: 'int64' })), 'DtypeMismatch', new RegExp(`^${who}: takes float32, not int64`));
      throwsKind(() => fn(3), 'InvalidArgument', new RegExp(`^${who}: `));
    }
  });
});
