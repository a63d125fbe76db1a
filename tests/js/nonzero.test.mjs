// Ops whose result size the values decide: om.nonzero (and { asTuple: true }), argwhere,
// where(condition) alone, maskedSelect and x[mask] (index with one bool tensor), against PyTorch
// (tests/js/fixtures/pytorch/ops/nonzero.json, written by tools/pytorch_nonzero.py), gradients by
// finite differences, every error, and tracing: a count computed from a traced input is refused at
// the call (DataDependent, naming nonzero) whatever the example's count (0, 1, all), never baked
// into the graph; nonzero of a constant inside a trace stays a constant, and that graph agrees with
// eager in onnxruntime-web and the Session at other sizes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, vals, near, gradcheck, throwsKind, moduleOf, withTraced, expectFixture, fixtureNumber, traceRefusal } from './helpers.mjs';

memoryHooks();

const fx = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/nonzero.json', import.meta.url), 'utf8'));
const T = (fn) => () => om.tidy(fn);
const input = (x) => om.tensor(x.data.map(fixtureNumber), { shape: x.shape, dtype: x.dtype ?? 'float32' });
const I64 = (x) => ({ ...x, dtype: 'int64' });

describe('nonzero, argwhere and where(condition) as PyTorch', () => {
  test('every dtype (NaN is true, -0 is not), 0-d, 1-D, 3-D and empty inputs', T(() => {
    for (const c of fx.nonzero) {
      const x = input(fx.inputs[c.input]);
      const what = `input ${c.input} (${x.dtype} [${x.shape}])`;
      expectFixture(om.nonzero(x), I64(c.nonzero), `${what} nonzero`);
      expectFixture(x.nonzero(), I64(c.nonzero), `${what} .nonzero()`);
      expectFixture(om.argwhere(x), I64(c.nonzero), `${what} argwhere`);
      for (const [name, parts] of [['asTuple', om.nonzero(x, { asTuple: true })], ['where', om.where(x)]]) {
        assert.equal(parts.length, c.tuple.length, `${what} ${name}: one tensor per dim`);
        parts.forEach((p, d) => expectFixture(p, I64(c.tuple[d]), `${what} ${name}[${d}]`));
      }
    }
    // the fixture covers a count of 0, of 1 and of every element
    const counts = fx.nonzero.map((c) => [c.nonzero.shape[0], fx.inputs[c.input].shape.reduce((p, q) => p * q, 1)]);
    assert.ok(counts.some(([n]) => n === 0) && counts.some(([n]) => n === 1) && counts.some(([n, all]) => n === all && n > 1));
  }));

  test('a non-contiguous input reads its logical order', T(() => {
    const x = om.tensor([[0, 1, 0], [2, 0, 3]]);
    const t = x.t(); // [[0, 2], [1, 0], [0, 3]]
    assert.deepEqual(vals(t.nonzero()), vals(t.contiguous().nonzero()));
    assert.deepEqual(vals(t.nonzero()), [0, 1, 1, 0, 2, 1]);
  }));
});

describe('maskedSelect and x[mask] as PyTorch, with their gradients', () => {
  for (const [k, c] of fx.select.entries()) {
    test(`${c.op} of [${c.x.shape}] by a mask [${c.mask.shape}] (case ${k})`, T(() => {
      const x = input(c.x), mask = input({ ...c.mask, dtype: 'bool' });
      x.requiresGrad = true;
      const y = c.op === 'masked_select' ? om.maskedSelect(x, mask) : x.index(mask);
      expectFixture(y, { ...c.out, dtype: 'float32' }, `${c.op} value`, 0);
      const n = y.shape.reduce((p, q) => p * q, 1);
      y.mul(om.arange(n).mul(0.5).add(0.5).reshape(y.shape)).sum().backward();
      near(vals(x.grad), c.grad, 0, `${c.op} gradient of x`);
    }));
  }

  test('finite differences: maskedSelect broadcast both ways, x[mask] of the leading dims', T(() => {
    const m = om.tensor([[true, false, true], [false, false, true]]);
    gradcheck((a) => om.maskedSelect(a, m), om.randn([2, 3], { seed: 3 }));
    gradcheck((a) => om.maskedSelect(a, m), om.randn([3], { seed: 4 }));
    gradcheck((a) => a.maskedSelect(m.select(1, 0).unsqueeze(1)), om.randn([2, 3], { seed: 5 }));
    gradcheck((a) => a.index(m), om.randn([2, 3, 2], { seed: 6 }));
  }));
});

describe('errors', () => {
  test('kinds and messages', T(() => {
    const x = om.randn([2, 3], { seed: 1 });
    throwsKind(() => om.maskedSelect(x, x.gt(0).to('int64')), 'DtypeMismatch', /^maskedSelect: expected a bool mask, got int64$/);
    throwsKind(() => om.maskedSelect(x, om.tensor([true, false])), 'ShapeMismatch', /^maskedSelect: shapes \[2,3\] and \[2\] do not broadcast \(3 and 2 at dim 1\)$/);
    throwsKind(() => om.nonzero(x, { asTuple: 1 }), 'InvalidArgument', /^nonzero: asTuple must be a boolean, got 1$/);
    throwsKind(() => om.nonzero(x, { as_tuple: true }), 'InvalidArgument', /^nonzero: unknown option 'as_tuple' \(expected asTuple\)$/);
    throwsKind(() => om.nonzero(3), 'InvalidArgument', /^nonzero: input must be a Tensor/);
    throwsKind(() => x.index(om.tensor([true, false, true])), 'IndexOutOfRange',
      /^index: The shape of the mask \[3\] at index 0 does not match the shape of the indexed tensor \[2,3\] at index 0$/);
    throwsKind(() => x.index(om.tensor([[true, false, true, true]]).expand(2, 4)), 'IndexOutOfRange', /at index 1 does not match/);
    throwsKind(() => x.index(om.tensor(true)), 'InvalidArgument', /^index: a 0-d bool index is not supported/);
  }));
});

describe('tracing', () => {
  const refused = (e) => {
    assert.match(e.message, /^nonzero: cannot be traced: the number of true elements, its result's first size, is decided by the input's values/);
    assert.match(e.message, /a graph that kept this run's count would be wrong for inputs with another count/);
  };
  const programs = {
    nonzero: (x) => x.gt(0).nonzero(),
    asTuple: (x) => om.nonzero(x.gt(0), { asTuple: true })[0],
    argwhere: (x) => om.argwhere(x),
    where: (x) => om.where(x.gt(0))[1],
    maskedSelect: (x) => om.maskedSelect(x, x.gt(0)),
    maskRead: (x) => x.index(x.select(1, 0).gt(0)),
  };
  // examples with no positive element, one, and all of them
  const examples = { none: [[-1, -2, -3], [-4, -5, -6]], one: [[-1, 2, -3], [-4, -5, -6]], all: [[1, 2, 3], [4, 5, 6]] };
  for (const [name, f] of Object.entries(programs)) {
    test(`${name}: refused (DataDependent) at a count of 0, 1 and all, with fixed and symbolic sizes`, T(() => {
      for (const data of Object.values(examples)) {
        const x = om.tensor(data);
        refused(traceRefusal(moduleOf(f), { x }, 'DataDependent'));
        refused(traceRefusal(moduleOf(f), { x: [x, ['batch', null]] }, 'DataDependent'));
      }
      // the library stays usable: eager runs, and so does a trace without the count
      assert.ok(f(om.tensor(examples.all)).shape[0] >= 2);
      om.trace(moduleOf((x) => x.mul(2)), { x: om.tensor(examples.one) }).dispose();
    }));
  }

  test('nonzero of a constant inside a trace is a constant: the graph agrees at other sizes', async () => {
    const keepCols = om.keep(om.tensor([true, false, true, true, false]));
    try {
      const model = moduleOf((x) => x.indexSelect(1, keepCols.nonzero().reshape(-1)).mul(2).add(om.maskedSelect(om.arange(5).float(), keepCols).sum()));
      await withTraced((keep, trace) => {
        const tm = trace(model, { x: [om.randn([3, 5], { seed: 2 }), ['batch', null]] });
        assert.equal(tm.inputs[0].shape[0], 'batch');
      });
    } finally {
      keepCols.dispose();
    }
  });
});
