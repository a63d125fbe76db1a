// Sequences and optionals in the Session (docs/graph-runtime.md, Sequences and optionals): models
// written with tools/onnx_bytes.mjs. Graphs that hold sequences inside (SequenceEmpty, Construct,
// Insert, Erase, At, Length, SplitToSequence, ConcatFromSequence, SequenceMap, Optional*, If and
// Loop carrying sequences) run in the Session and in onnxruntime-web on the same feeds at more than
// one shape; graphs whose inputs or outputs are sequences or optionals (which onnxruntime-web's JS
// API does not feed) are checked against the values their feeds determine; and the errors, each
// with its kind and message.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks } from './helpers.mjs';
import { onnxBytes } from '../../tools/onnx_bytes.mjs';
import { F, I, B, node, agree, sessionRefuses } from './onnx-agree.mjs';

memoryHooks();
const i64 = (name, values, dims = []) => ({ name, dtype: 'int64', dims, values });
const out = (name, dtype = 'float32', kind = 'tensor') => ({ name, dtype, kind });

/** The Session refuses model on feeds with kind and a message matching re (sessionRefuses: when it is made where the declared sizes decide it, else at the first run). */
const runRefused = (model, feeds, kind, re) => sessionRefuses(onnxBytes({ opset: 17, ...model }), feeds, kind, re);

const xyz = [{ name: 'x', dims: ['n', 3] }, { name: 'y', dims: ['n', 3] }, { name: 'z', dims: ['n', 3] }];
const feedsXYZ = (n) => ({ x: F([n, 3]), y: F([n, 3], 1), z: F([n, 3], 2) });

describe('sequences inside a graph, against onnxruntime-web', () => {
  test('SequenceEmpty, SequenceInsert (at the end and at a position), SequenceAt', () => agree({
    nodes: [
      node('SequenceEmpty', [], ['s0']), node('SequenceInsert', ['s0', 'x'], ['s1']), node('SequenceInsert', ['s1', 'y'], ['s2']),
      node('SequenceInsert', ['s2', 'z', 'front'], ['s3']), node('SequenceAt', ['s3', 'at'], ['a']), node('SequenceAt', ['s3', 'last'], ['b']),
    ],
    inits: [i64('front', [0]), i64('at', [1]), i64('last', [-1])], inputs: xyz, outputs: ['a', 'b'],
  }, [feedsXYZ(2), feedsXYZ(5), feedsXYZ(1)]));

  test('SequenceConstruct, SequenceErase (a position and the default last), SequenceInsert, SequenceLength', () => agree({
    nodes: [
      node('SequenceConstruct', ['x', 'y', 'z'], ['s1']), node('SequenceErase', ['s1', 'one'], ['s2']), node('SequenceInsert', ['s2', 'x', 'one'], ['s3']),
      node('SequenceErase', ['s3'], ['s4']), node('SequenceAt', ['s4', 'one'], ['a']), node('SequenceLength', ['s4'], ['len']),
    ],
    inits: [i64('one', [1])], inputs: xyz, outputs: ['a', out('len', 'int64')],
  }, [feedsXYZ(2), feedsXYZ(4)]));

  test('ConcatFromSequence: along an axis, and stacked on a new one', () => agree({
    nodes: [
      node('SequenceConstruct', ['x', 'y', 'z'], ['s']), node('ConcatFromSequence', ['s'], ['c'], { ints: { axis: 1 } }),
      node('ConcatFromSequence', ['s'], ['d'], { ints: { axis: -1, new_axis: 1 } }),
    ],
    inputs: xyz, outputs: ['c', 'd'],
  }, [feedsXYZ(2), feedsXYZ(3)]));

  test('SplitToSequence: pieces of 1 squeezed (keepdims 0), one size, fed sizes; back with ConcatFromSequence', () => agree({
    nodes: [
      node('SplitToSequence', ['x'], ['s1'], { ints: { axis: 1, keepdims: 0 } }), node('ConcatFromSequence', ['s1'], ['a'], { ints: { axis: 0, new_axis: 1 } }),
      node('SplitToSequence', ['x', 'two'], ['s2']), node('SequenceLength', ['s2'], ['n2']), node('SequenceAt', ['s2', 'last'], ['b']),
      node('SplitToSequence', ['x', 'sizes'], ['s3'], { ints: { axis: 1 } }), node('SequenceAt', ['s3', 'last'], ['c']),
    ],
    inits: [i64('two', [2]), i64('last', [-1])],
    inputs: [{ name: 'x', dims: ['n', 4] }, { name: 'sizes', dims: [2], dtype: 'int64' }], outputs: ['a', out('n2', 'int64'), 'b', 'c'],
  }, [{ x: F([5, 4]), sizes: I([1, 3]) }, { x: F([2, 4]), sizes: I([3, 1]) }, { x: F([4, 4]), sizes: I([2, 2]) }]));

  test('Optional, OptionalHasElement (a value, and no input), OptionalGetElement', () => agree({
    nodes: [
      node('Optional', ['x'], ['o']), node('OptionalHasElement', ['o'], ['has']), node('OptionalHasElement', [''], ['none']),
      node('OptionalGetElement', ['o'], ['v']), node('Add', ['v', 'x'], ['y']),
    ],
    inputs: [{ name: 'x', dims: ['n'] }], outputs: [out('has', 'bool'), out('none', 'bool'), 'y'], opset: 18,
  }, [{ x: F([3]) }, { x: F([6]) }]));

  test('If whose branches give sequences, read by SequenceLength and ConcatFromSequence', () => agree({
    nodes: [
      node('If', ['cond'], ['s'], { attrs: {
        then_branch: { graph: { nodes: [node('SequenceConstruct', ['x', 'x'], ['t'])], outputs: [out('t', 'float32', 'sequence')] } },
        else_branch: { graph: { nodes: [node('SplitToSequence', ['x'], ['e'])], outputs: [out('e', 'float32', 'sequence')] } },
      } }),
      node('SequenceLength', ['s'], ['len']), node('ConcatFromSequence', ['s'], ['c'], { ints: { axis: 0 } }),
    ],
    inputs: [{ name: 'cond', dims: [], dtype: 'bool' }, { name: 'x', dims: ['n', 2] }], outputs: [out('len', 'int64'), 'c'],
  }, [{ cond: B(true), x: F([3, 2]) }, { cond: B(false), x: F([3, 2]) }, { cond: B(false), x: F([5, 2]) }]));

  test('Loop carrying a sequence: each iteration inserts a slice', () => agree({
    nodes: [
      node('SequenceEmpty', [], ['s0']),
      node('Loop', ['m', '', 's0'], ['s'], { attrs: { body: { graph: {
        nodes: [
          node('Identity', ['c'], ['c_out']), node('Add', ['i', 'one'], ['end']), node('Unsqueeze', ['end', 'zero'], ['ends']),
          node('Slice', ['x', 'starts', 'ends'], ['piece']), node('SequenceInsert', ['s_in', 'piece'], ['s_out']),
        ],
        inits: [i64('one', [1]), i64('zero', [0], [1]), i64('starts', [0], [1])],
        inputs: [{ name: 'i', dims: [], dtype: 'int64' }, { name: 'c', dims: [], dtype: 'bool' }, { name: 's_in', dims: null, kind: 'sequence' }],
        outputs: [out('c_out', 'bool'), out('s_out', 'float32', 'sequence')],
      } } } }),
      node('SequenceLength', ['s'], ['len']), node('ConcatFromSequence', ['s'], ['c'], { ints: { axis: 0 } }),
    ],
    inputs: [{ name: 'm', dims: [], dtype: 'int64' }, { name: 'x', dims: ['n'] }], outputs: [out('len', 'int64'), 'c'],
  }, [{ m: I([3], []), x: F([5]) }, { m: I([1], []), x: F([4]) }, { m: I([4], []), x: F([6]) }]));

  test('SequenceMap: a body per element, with a tensor given whole each time', () => agree({
    nodes: [
      node('SplitToSequence', ['x'], ['s']),
      node('SequenceMap', ['s', 'w'], ['m'], { attrs: { body: { graph: {
        nodes: [node('Mul', ['e', 'v'], ['p']), node('Relu', ['p'], ['r'])],
        inputs: [{ name: 'e', dims: null }, { name: 'v', dims: null }], outputs: ['r'],
      } } } }),
      node('ConcatFromSequence', ['m'], ['c'], { ints: { axis: 0 } }),
    ],
    inputs: [{ name: 'x', dims: ['n', 3] }, { name: 'w', dims: [3] }], outputs: ['c'],
  }, [{ x: F([2, 3]), w: F([3], 1) }, { x: F([4, 3]), w: F([3], -1) }]));
});

describe('sequence and optional inputs and outputs', () => {
  const split = (x) => Array.from({ length: x.dims[0] }, (_, r) => Array.from(x.data.slice(r * x.dims[1], (r + 1) * x.dims[1])));

  test('a sequence output is an array of tensors; runData gives an array of typed arrays', async () => {
    const s = await om.InferenceSession.create(onnxBytes({
      nodes: [node('SplitToSequence', ['x'], ['s'], { ints: { keepdims: 0 } })],
      inputs: [{ name: 'x', dims: ['n', 2] }], outputs: [{ name: 's', dtype: 'float32', kind: 'sequence' }],
    }));
    for (const n of [3, 1, 70]) { /* 70 elements: more tensors than the first call made room for */
      const x = F([n, 2]);
      const { s: got } = s.runData({ x });
      assert.equal(got.length, n);
      got.forEach((e, r) => {
        assert.equal(e.type, 'float32');
        assert.deepEqual(e.dims, [2]);
        assert.deepEqual(Array.from(e.data), split(x)[r]);
      });
      const { s: tensors } = s.run({ x });
      assert.ok(tensors.every((t) => t instanceof om.Tensor));
      tensors.forEach((t) => t.dispose());
    }
    s.dispose();
  });

  test('a sequence input is an array (of om.Tensors or { data, dims }); an empty one too', async () => {
    const s = await om.InferenceSession.create(onnxBytes({
      nodes: [node('SequenceInsert', ['xs', 't'], ['ys']), node('SequenceLength', ['ys'], ['len'])],
      inputs: [{ name: 'xs', dims: null, kind: 'sequence' }, { name: 't', dims: ['m'] }],
      outputs: [{ name: 'ys', dtype: 'float32', kind: 'sequence' }, 'len'],
    }));
    for (const xs of [[F([2]), F([3], 1)], [], [F([1], 4)]]) {
      const t = F([4], 2), { ys, len } = s.runData({ xs, t });
      assert.deepEqual(Array.from(len.data), [BigInt(xs.length + 1)]);
      assert.deepEqual(ys.map((e) => Array.from(e.data)), [...xs, t].map((e) => Array.from(e.data)));
      assert.deepEqual(ys.map((e) => e.dims), [...xs, t].map((e) => e.dims));
    }
    const a = om.tensor([1, 2]);
    const { ys, len } = s.run({ xs: [a], t: F([1]) });
    assert.deepEqual(ys.map((e) => Array.from(e.toArray())), [[1, 2], [Array.from(F([1]).data)[0]]]);
    [...ys, len].forEach((e) => e.dispose());
    a.dispose();
    s.dispose();
  });

  test('an optional input takes a tensor or null; an optional output holding nothing is null', async () => {
    const s = await om.InferenceSession.create(onnxBytes({
      nodes: [node('OptionalHasElement', ['o'], ['has']), node('Identity', ['o'], ['same']), node('Optional', [], ['nothing'])],
      inputs: [{ name: 'o', dims: ['n'], kind: 'optional' }],
      outputs: ['has', { name: 'same', dtype: 'float32', kind: 'optional' }, { name: 'nothing', dtype: 'float32', kind: 'optional' }], opset: 18,
    }));
    const x = F([3]);
    let r = s.runData({ o: x });
    assert.deepEqual(Array.from(r.has.data), [1]);
    assert.deepEqual(Array.from(r.same.data), Array.from(x.data));
    assert.equal(r.nothing, null);
    r = s.runData({ o: null });
    assert.deepEqual(Array.from(r.has.data), [0]);
    assert.equal(r.same, null);
    s.dispose();
  });

  test('an optional sequence input: an array, or null', async () => {
    const s = await om.InferenceSession.create(onnxBytes({
      nodes: [node('OptionalHasElement', ['o'], ['has'])],
      inputs: [{ name: 'o', dims: null, kind: 'optional sequence' }], outputs: ['has'], opset: 18,
    }));
    assert.deepEqual(Array.from(s.runData({ o: [F([2]), F([5])] }).has.data), [1]);
    assert.deepEqual(Array.from(s.runData({ o: null }).has.data), [0]);
    s.dispose();
  });
});

describe('what a sequence must not do', () => {
  const seqIn = { nodes: [node('SequenceLength', ['xs'], ['len'])], inputs: [{ name: 'xs', dims: null, kind: 'sequence' }], outputs: ['len'] };
  const tensorIn = { nodes: [node('Relu', ['x'], ['y'])], inputs: [{ name: 'x', dims: [2] }], outputs: ['y'] };

  test('a sequence fed where the graph takes a tensor, and the other way, is InvalidArgument naming the input', async () => {
    await runRefused(tensorIn, { x: [F([2])] }, 'InvalidArgument', /input 'x' is a tensor, given a sequence/);
    await runRefused(seqIn, { xs: F([2]) }, 'InvalidArgument', /input 'xs' is a sequence, given a tensor/);
    await runRefused(tensorIn, { x: null }, 'InvalidArgument', /input 'x' is a tensor, given nothing/);
  });

  test('a sequence element of another type is DtypeMismatch', () =>
    runRefused(seqIn, { xs: [F([2]), I([1])] }, 'DtypeMismatch', /feed "xs\[1\]" is int64, the graph takes float32/));

  test('a position out of range is IndexOutOfRange naming it and the length', async () => {
    const at = (pos) => ({
      nodes: [node('SequenceConstruct', ['x', 'x', 'x'], ['s']), node('SequenceAt', ['s', 'p'], ['y'])],
      inits: [i64('p', [pos])], inputs: [{ name: 'x', dims: [2] }], outputs: ['y'],
    });
    await runRefused(at(3), { x: F([2]) }, 'IndexOutOfRange', /SequenceAt\): position 3 is out of range for a sequence of 3/);
    await runRefused(at(-4), { x: F([2]) }, 'IndexOutOfRange', /position -4 is out of range for a sequence of 3/);
    await runRefused({
      nodes: [node('SequenceEmpty', [], ['s']), node('SequenceErase', ['s'], ['t']), node('SequenceLength', ['t'], ['y'])], inputs: [], outputs: ['y'],
    }, {}, 'IndexOutOfRange', /SequenceErase\): the sequence is empty/);
  });

  test('a node reading a sequence as a tensor is Format naming the node and the input', () => runRefused({
    nodes: [node('SequenceConstruct', ['x'], ['s']), node('Relu', ['s'], ['y'])], inputs: [{ name: 'x', dims: [2] }], outputs: ['y'],
  }, { x: F([2]) }, 'Format', /node 'Relu_1' \(Relu\): input 0 \('s'\) is a sequence; Relu takes a tensor there/));

  test('a tensor where a node takes a sequence is Format', () => runRefused({
    nodes: [node('SequenceLength', ['x'], ['y'])], inputs: [{ name: 'x', dims: [2] }], outputs: ['y'],
  }, { x: F([2]) }, 'Format', /SequenceLength\): input 0 is a tensor; it takes a sequence/));

  test('tensors of two types in one sequence are Format', () => runRefused({
    nodes: [node('SequenceConstruct', ['x', 'i'], ['s']), node('SequenceLength', ['s'], ['y'])],
    inputs: [{ name: 'x', dims: [2] }, { name: 'i', dims: [2], dtype: 'int64' }], outputs: ['y'],
  }, { x: F([2]), i: I([1, 2]) }, 'Format', /SequenceConstruct\): a tensor of int64 joins a sequence of float32/));

  test('a SequenceConstruct input left out is Format', () => runRefused({
    nodes: [node('SequenceConstruct', ['x', ''], ['s']), node('SequenceLength', ['s'], ['y'])], inputs: [{ name: 'x', dims: [2] }], outputs: ['y'],
  }, { x: F([2]) }, 'Format', /SequenceConstruct\): an input is left out/));

  test('a Loop growing a sequence without end is OutOfMemory at its bound, not a hang', () => runRefused({
    nodes: [
      node('SequenceEmpty', [], ['s0']),
      node('Loop', ['m', '', 's0'], ['s'], { attrs: { body: { graph: {
        nodes: [node('SequenceInsert', ['s_in', 'x'], ['s_out'])],
        inputs: [{ name: 'i', dims: [], dtype: 'int64' }, { name: 'c', dims: [], dtype: 'bool' }, { name: 's_in', dims: null, kind: 'sequence' }],
        outputs: [out('c', 'bool'), out('s_out', 'float32', 'sequence')],
      } } } }),
      node('SequenceLength', ['s'], ['len']),
    ],
    inits: [i64('m', [1e9])], inputs: [{ name: 'x', dims: [1] }], outputs: [out('len', 'int64')],
  }, { x: F([1]) }, 'OutOfMemory', /Loop\): SequenceInsert_0 \(SequenceInsert\): 16385 tensors; a sequence holds at most 16384/));

  test('OptionalGetElement of an optional holding nothing is InvalidArgument', () => runRefused({
    nodes: [node('OptionalGetElement', ['o'], ['y'])], inputs: [{ name: 'o', dims: [2], kind: 'optional' }], outputs: ['y'], opset: 18,
  }, { o: null }, 'InvalidArgument', /OptionalGetElement\): the optional holds nothing/));

  test('ConcatFromSequence of an empty sequence is InvalidArgument', () => runRefused({
    nodes: [node('SequenceEmpty', [], ['s']), node('ConcatFromSequence', ['s'], ['y'], { ints: { axis: 0 } })], inputs: [], outputs: ['y'],
  }, {}, 'InvalidArgument', /ConcatFromSequence\): the sequence is empty/));

  test('a subgraph output that is a sequence, where Scan takes a tensor, is Unsupported', () => runRefused({
    nodes: [node('Scan', ['x'], ['y'], { ints: { num_scan_inputs: 1 }, attrs: { body: { graph: {
      nodes: [node('SequenceConstruct', ['e'], ['s'])], inputs: [{ name: 'e', dims: null }], outputs: ['s'],
    } } } })],
    inputs: [{ name: 'x', dims: [2, 2] }], outputs: ['y'],
  }, { x: F([2, 2]) }, 'Unsupported', /its subgraph's output 's' is a sequence or an optional, which it takes only as a tensor/));
});
