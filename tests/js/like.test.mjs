// om.zerosLike, onesLike, fullLike, emptyLike, randLike, randnLike (PyTorch's *_like): input's
// shape and dtype unless options.dtype, their errors, and traced at a symbolic size: the graph
// run by onnxruntime-web and the Session agrees with eager at other sizes (withTraced).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as om from '../../js/index.js';
import { throwsKind, withTraced } from './helpers.mjs';

await om.ready();

const same = (t, shape, dtype, values) => {
  assert.deepEqual(t.shape, shape);
  assert.equal(t.dtype, dtype);
  if (values !== undefined) assert.deepEqual([...t.toArray()], values);
};

test("input's shape and dtype, or options.dtype", () => om.tidy(() => {
  const f = om.tensor([[1.5, -2, 3], [4, 5, 6]]);
  const i = om.tensor([[7n], [8n]]);
  same(om.zerosLike(f), [2, 3], 'float32', [0, 0, 0, 0, 0, 0]);
  same(om.onesLike(i), [2, 1], 'int64', [1n, 1n]);
  same(om.emptyLike(i), [2, 1], 'int64', [0n, 0n]);
  same(om.fullLike(i, 3), [2, 1], 'int64', [3n, 3n]);
  same(om.fullLike(f, true), [2, 3], 'float32', [1, 1, 1, 1, 1, 1]); // the value in input's dtype
  same(om.fullLike(f, 2.5, { dtype: 'bool' }), [2, 3], 'bool', [1, 1, 1, 1, 1, 1]);
  same(om.onesLike(f, { dtype: 'int64' }), [2, 3], 'int64', [1n, 1n, 1n, 1n, 1n, 1n]);
  same(om.zerosLike(om.tensor(4)), [], 'float32', [0]);
  same(om.randLike(f, { seed: 5 }), [2, 3], 'float32', [...om.rand([2, 3], { seed: 5 }).toArray()]);
  same(om.randnLike(f, { seed: 6 }), [2, 3], 'float32', [...om.randn([2, 3], { seed: 6 }).toArray()]);
  same(om.randLike(i, { dtype: 'float32' }), [2, 1], 'float32');
}));

test('errors name the function and the argument', () => om.tidy(() => {
  const gone = om.zeros([2]);
  gone.dispose();
  throwsKind(() => om.zerosLike([1, 2]), 'InvalidArgument', /^zerosLike: input must be a Tensor, got/);
  throwsKind(() => om.onesLike(gone), 'Disposed', /^onesLike: input was disposed/);
  throwsKind(() => om.fullLike(om.zeros([2]), 'x'), 'InvalidArgument', /^fullLike: value must be a number, bigint or boolean/);
  throwsKind(() => om.emptyLike(om.zeros([2]), 3), 'InvalidArgument', /^emptyLike: options must be an object, got 3/);
  throwsKind(() => om.zerosLike(om.zeros([2]), { dtype: 'half' }), 'InvalidArgument', /^zerosLike: unknown dtype "half"/);
  throwsKind(() => om.randLike(om.tensor([1n])), 'InvalidArgument', /^randLike: dtype must be 'float32', got a string \("int64"\)/);
  throwsKind(() => om.randnLike(om.zeros([2]), { seed: 0.5 }), 'InvalidArgument', /^randnLike: seed must be an integer/);
}));

test('traced at a symbolic batch: the sizes are computed in the graph', () => withTraced((keep, trace) => {
  const x = om.randn([3, 4], { seed: 7 });
  const f = (t) => t.add(om.onesLike(t)).mul(om.fullLike(t, 2)).sub(om.zerosLike(t, { dtype: 'int64' }))
    .add(om.emptyLike(t));
  const tm = trace(f, { x: [x, ['batch', null]] });
  assert.deepEqual(tm.outputs[0].shape, ['batch', 4]);
  assert.ok(tm.graph().nodes.some((n) => n.opType === 'Expand'), 'the fills are expanded to a shape computed from x');
}));

test('om.empty and x.newEmpty (torch.empty, new_empty): zeros, the dtype given or the tensor\'s; CLIP\'s causal mask built in place', () => withTraced((keep, trace) => {
  same(om.empty([2, 2]), [2, 2], 'float32', [0, 0, 0, 0]);
  same(om.empty([1], { dtype: 'int64' }), [1], 'int64', [0n]);
  same(om.tensor([1n]).newEmpty([3]), [3], 'int64', [0n, 0n, 0n]);
  throwsKind(() => om.empty([-1]), 'InvalidArgument', /negative size -1 in shape \[-1\]/);
  throwsKind(() => om.zeros([2]).newEmpty([2], 3), 'InvalidArgument', /^newEmpty: options must be an object, got 3/);
  const clip = (x) => { // CLIPTextTransformer._build_causal_attention_mask: empty(T, T).fill_(-inf).triu_(1)
    const T = x.shape[1];
    const mask = om.empty([T, T]);
    mask.fill_(-Infinity);
    mask.triu_(1);
    return x.matmul(x.transpose(1, 2)).add(mask).softmax(-1);
  };
  trace(clip, { x: [om.randn([2, 5, 3], { seed: 9 }), [null, 'T', null]] });
}));
