// The float functions of one tensor (exp, log, sqrt, rsqrt, sigmoid, tanh, erf) on int64 and bool
// inputs promote to float32 as PyTorch does: the values of the float32 path, eagerly and traced
// (a Cast in the graph, run by onnxruntime-web and the Session at other sizes: withTraced).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as om from '../../js/index.js';
import { withTraced } from './helpers.mjs';

await om.ready();

const OPS = ['exp', 'log', 'sqrt', 'rsqrt', 'sigmoid', 'tanh', 'erf'];

test('int64 and bool give float32, the bits of the float32 input', () => om.tidy(() => {
  const ints = [0n, 1n, 4n, 9n, -3n];
  const i = om.tensor(ints), b = om.tensor([true, false]);
  const fi = om.tensor(ints.map(Number)), fb = om.tensor([1, 0]);
  for (const op of OPS) {
    for (const [x, f] of [[i, fi], [b, fb]]) {
      const y = x[op]();
      assert.equal(y.dtype, 'float32', `${op}(${x.dtype})`);
      assert.deepEqual(y.shape, x.shape);
      assert.deepEqual(new Uint32Array(y.toArray().buffer), new Uint32Array(f[op]().toArray().buffer), `${op}(${x.dtype})`);
    }
  }
  assert.deepEqual([...i.sqrt().toArray()].slice(0, 4), [0, 1, 2, 3]);
  assert.deepEqual([...om.tensor([4n]).rsqrt().toArray()], [0.5]);
  assert.deepEqual([...b.log().toArray()], [0, -Infinity]);
  assert.deepEqual([...b.sigmoid().toArray()], [Math.fround(1 / (1 + Math.exp(-1))), 0.5]);
  assert.deepEqual([...om.tensor([0n]).exp().toArray()], [1]);
  assert.deepEqual([...om.nn.functional.tanh(om.tensor([0n])).toArray()], [0]); // the function promotes too
  assert.deepEqual([...om.nn.functional.sigmoid(b).toArray()], [...b.sigmoid().toArray()]);
}));

test('traced: a Cast before the op, agreeing with eager at other sizes', () => withTraced((keep, trace) => {
  const x = om.tensor([[1n, 4n, 0n], [9n, 2n, 3n]]);
  const f = (t) => t.sqrt().add(t.exp().mul(0.01)).add(t.gt(2).sigmoid()).add(t.erf()).add(t.tanh());
  const tm = trace(f, { x: [x, ['batch', null]] });
  assert.equal(tm.outputs[0].dtype, 'float32');
  const ops = tm.graph().nodes.map((n) => n.opType);
  assert.ok(ops.includes('Cast') && ops.includes('Sqrt') && ops.includes('Exp'), ops.join(' '));
}));
