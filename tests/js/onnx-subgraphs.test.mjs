// Subgraphs in the Session (docs/graph-runtime.md, Subgraphs): If, Loop and Scan models written
// with tools/onnx_bytes.mjs, each run by the Session and by onnxruntime-web on the same feeds at
// more than one shape; branches and bodies read values of the graphs around them (outer scope);
// and the malformed cases, each with its kind and message.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks } from './helpers.mjs';
import { onnxBytes } from '../../tools/onnx_bytes.mjs';
import * as ort from 'onnxruntime-web';
import { F, I, B, node, agree as agreeWith } from './onnx-agree.mjs';

memoryHooks();
/** Subgraph outputs pass through float arithmetic ordered differently from onnxruntime-web's. */
const agree = (model, feeds) => agreeWith(model, feeds, { atol: 1e-6, rtol: 1e-5 });

/** Making a session of model fails with kind and a message matching re. */
async function refused(model, kind, re) {
  await assert.rejects(om.InferenceSession.create(onnxBytes({ opset: 17, ...model })),
    (e) => (e instanceof om.OmError && e.kind === kind && re.test(e.message)) || assert.fail(`${e.kind}: ${e.message}`));
}

/** A branch computing out = op(x, c) from the outer x and its own constant c. */
const branch = (op, out, value) => ({
  nodes: [node(op, ['x', 'c'], [out])], inits: [{ name: 'c', dtype: 'float32', dims: [], values: [value] }], outputs: [out],
});

describe('If', () => {
  test('a fed condition picks the branch; branches read the outer x', () => agree({
    nodes: [node('If', ['cond'], ['y'], { attrs: { then_branch: { graph: branch('Add', 't', 1) }, else_branch: { graph: branch('Mul', 'e', 2) } } })],
    inputs: [{ name: 'cond', dims: [], dtype: 'bool' }, { name: 'x', dims: ['a', 'b'] }], outputs: ['y'],
  }, [{ cond: B(true), x: F([2, 3]) }, { cond: B(false), x: F([2, 3]) }, { cond: B(false), x: F([4, 1]) }, { cond: B(true), x: F([1, 5]) }]));

  // An exporter's If on a size: the condition comes from Shape, so each plan holds one branch.
  const onSize = {
    nodes: [
      node('Shape', ['x'], ['s']), node('Gather', ['s', 'zero'], ['n'], { ints: { axis: 0 } }), node('Greater', ['n', 'three'], ['big']),
      node('If', ['big'], ['y'], { attrs: {
        then_branch: { graph: { nodes: [node('Relu', ['x'], ['r'])], outputs: ['r'] } },
        else_branch: { graph: { nodes: [node('Neg', ['x'], ['m'])], outputs: ['m'] } },
      } }),
    ],
    inits: [{ name: 'zero', dtype: 'int64', dims: [], values: [0] }, { name: 'three', dtype: 'int64', dims: [], values: [3] }],
    inputs: [{ name: 'x', dims: ['n', 2] }], outputs: ['y'],
  };
  test('on a size (Shape, Gather, Greater): agrees at both sides', () => agree(onSize, [{ x: F([5, 2]) }, { x: F([2, 2]) }, { x: F([4, 2]) }]));
  test('on a size: the plan holds the branch the shape picks, and nothing else', async () => {
    const s = await om.InferenceSession.create(onnxBytes(onSize));
    try {
      for (const [n, kernels] of [[5, ['relu']], [2, ['neg']]]) {
        const { y } = s.run({ x: F([n, 2]) });
        y.dispose();
        assert.deepEqual(s.planKernels, kernels, `n = ${n}`);
      }
    } finally {
      s.dispose();
    }
  });

  test('nested: an inner branch reads a value two graphs out', () => agree({
    nodes: [node('If', ['c1'], ['y'], { attrs: {
      then_branch: { graph: { nodes: [node('If', ['c2'], ['z'], { attrs: {
        then_branch: { graph: { nodes: [node('Sub', ['x', 'x'], ['p'])], outputs: ['p'] } },
        else_branch: { graph: { nodes: [node('Sigmoid', ['x'], ['q'])], outputs: ['q'] } },
      } })], outputs: ['z'] } },
      else_branch: { graph: { nodes: [node('Abs', ['x'], ['w'])], outputs: ['w'] } },
    } })],
    inputs: [{ name: 'c1', dims: [], dtype: 'bool' }, { name: 'c2', dims: [], dtype: 'bool' }, { name: 'x', dims: ['n'] }], outputs: ['y'],
  }, [[true, true], [true, false], [false, true]].map(([a, b]) => ({ c1: B(a), c2: B(b), x: F([6]) }))));
});

/** A Loop body: s' = s + x (x outer), the scan output s' times the iteration number, cond' from cond(...). */
function loopBody(condNodes = [node('Identity', ['c'], ['c2'])]) {
  return {
    nodes: [
      node('Add', ['s', 'x'], ['s2']), node('Cast', ['i'], ['fi'], { ints: { to: 1 } }), node('Mul', ['s2', 'fi'], ['out']), ...condNodes,
    ],
    inputs: [{ name: 'i', dims: [], dtype: 'int64' }, { name: 'c', dims: [], dtype: 'bool' }, { name: 's', dims: null }],
    outputs: [{ name: 'c2', dtype: 'bool' }, 's2', 'out'],
  };
}

describe('Loop', () => {
  test('M from a tensor, a loop-carried value and a scan output (concatenated)', () => agree({
    nodes: [node('Loop', ['M', '', 's0'], ['s', 'scan'], { attrs: { body: { graph: loopBody() } } })],
    inputs: [{ name: 'M', dims: [], dtype: 'int64' }, { name: 's0', dims: ['n'] }, { name: 'x', dims: ['n'] }], outputs: ['s', 'scan'],
  }, [{ M: I([3], []), s0: F([4]), x: F([4]) }, { M: I([1], []), s0: F([2]), x: F([2]) }, { M: I([5], []), s0: F([3]), x: F([3]) }]));

  test('early exit: the body\'s condition computed from the values', () => agree({
    nodes: [node('Loop', ['M', 'go', 's0'], ['s', 'scan'], { attrs: { body: { graph: loopBody([
      node('ReduceSum', ['s2'], ['total'], { ints: { keepdims: 0 } }), node('Less', ['total', 'limit'], ['c2']),
    ]) } } })],
    inits: [{ name: 'M', dtype: 'int64', dims: [], values: [20] }, { name: 'limit', dtype: 'float32', dims: [], values: [12] }],
    inputs: [{ name: 'go', dims: [], dtype: 'bool' }, { name: 's0', dims: ['n'] }, { name: 'x', dims: ['n'] }], outputs: ['s', 'scan'],
  }, [{ go: B(true), s0: F([3]), x: { type: 'float32', dims: [3], data: Float32Array.of(1, 2, 0.5) } },
    { go: B(true), s0: F([2]), x: { type: 'float32', dims: [2], data: Float32Array.of(0.25, 4) } }]));

  test('10,000 iterations from a constant M: one plan, the same answer on the next run', async () => {
    const model = {
      nodes: [node('Loop', ['M', '', 's0'], ['s'], { attrs: { body: { graph: {
        nodes: [node('Add', ['s', 'one'], ['s2']), node('Identity', ['c'], ['c2'])],
        inits: [{ name: 'one', dtype: 'float32', dims: [], values: [1] }],
        inputs: [{ name: 'i', dims: [], dtype: 'int64' }, { name: 'c', dims: [], dtype: 'bool' }, { name: 's', dims: null }],
        outputs: [{ name: 'c2', dtype: 'bool' }, 's2'],
      } } } })],
      inits: [{ name: 'M', dtype: 'int64', dims: [], values: [10000] }],
      inputs: [{ name: 's0', dims: [2] }], outputs: ['s'],
    };
    await agree(model, [{ s0: F([2]) }]);
    const s = await om.InferenceSession.create(onnxBytes({ opset: 17, ...model }));
    try {
      for (const start of [0, 5]) {
        const { s: out } = s.run({ s0: { type: 'float32', dims: [2], data: Float32Array.of(start, -start) } });
        assert.deepEqual(Array.from(out.toArray()), [start + 10000, 10000 - start]);
        out.dispose();
        assert.equal(s.planKernels.length, 10000, 'one add a step, planned once for the shape');
      }
    } finally {
      s.dispose();
    }
  });

  test('a trip count beyond what a plan may bind is OutOfMemory, and the session runs other counts', async () => {
    const s = await om.InferenceSession.create(onnxBytes({
      opset: 17,
      nodes: [node('Loop', ['M', '', 's0'], ['s', 'scan'], { attrs: { body: { graph: loopBody() } } })],
      inputs: [{ name: 'M', dims: [], dtype: 'int64' }, { name: 's0', dims: [1] }, { name: 'x', dims: [1] }], outputs: ['s', 'scan'],
    }));
    try {
      assert.throws(() => s.run({ M: I([1e15], []), s0: F([1]), x: F([1]) }),
        (e) => e.kind === 'OutOfMemory' && /Loop_0 \(Loop\): the plan binds more than 1048576 nodes of subgraphs/.test(e.message) || assert.fail(e.message));
      const { s: out, scan } = s.run({ M: I([2], []), s0: F([1]), x: F([1]) });
      assert.deepEqual(scan.shape, [2, 1]);
      out.dispose(), scan.dispose();
    } finally {
      s.dispose();
    }
  });
});

describe('Scan', () => {
  // A running sum over axis 1 of x [b, t]: state [b], output each step's sum.
  const body = {
    nodes: [node('Add', ['acc', 'xt'], ['acc2']), node('Identity', ['acc2'], ['yt'])],
    inputs: [{ name: 'acc', dims: null }, { name: 'xt', dims: null }], outputs: ['acc2', 'yt'],
  };
  for (const [dirs, outDirs, axes] of [[[0], [0], [1]], [[1], [0], [1]], [[0], [1], [0]], [[1], [1], [1]]]) {
    test(`input direction ${dirs}, output direction ${outDirs}, output axis ${axes}`, () => agree({
      nodes: [node('Scan', ['a0', 'x'], ['a', 'y'], { ints: { num_scan_inputs: 1, scan_input_axes: [1], scan_input_directions: dirs, scan_output_directions: outDirs, scan_output_axes: axes }, attrs: { body: { graph: body } } })],
      inputs: [{ name: 'a0', dims: ['b'] }, { name: 'x', dims: ['b', 't'] }], outputs: ['a', 'y'],
    }, [{ a0: F([2]), x: F([2, 5]) }, { a0: F([3]), x: F([3, 1]) }]));
  }
});

describe('Scan of opset 8 (a batch axis first, sequence_lens)', () => {
  // Per batch row a running sum over the row's steps: states [b, 2], x [b, t, 2].
  const body = {
    nodes: [node('Add', ['acc', 'xt'], ['acc2']), node('Mul', ['acc2', 'xt'], ['yt'])],
    inputs: [{ name: 'acc', dims: null }, { name: 'xt', dims: null }], outputs: ['acc2', 'yt'],
  };
  const scan8 = (inputs, ints = {}) => ({
    opset: 8, nodes: [node('Scan', inputs, ['a', 'y'], { name: 'scan', ints: { num_scan_inputs: 1, ...ints }, attrs: { body: { graph: body } } })],
    inputs: [...(inputs[0] ? [{ name: 'lens', dims: ['b'], dtype: 'int64' }] : []), { name: 'a0', dims: ['b', 2] }, { name: 'x', dims: ['b', 't', 2] }], outputs: ['a', 'y'],
  });
  const L = (values) => I(values);
  test('without sequence_lens, both directions, at two batch sizes', async () => {
    for (const directions of [[0], [1]]) await agree(scan8(['', 'a0', 'x'], { directions }), [{ a0: F([2, 2]), x: F([2, 4, 2]) }, { a0: F([3, 2]), x: F([3, 1, 2]) }]);
  });
  test('sequence_lens: rows shorter than t end early (their outputs past it 0), both directions', async () => {
    for (const directions of [[0], [1]]) {
      await agree(scan8(['lens', 'a0', 'x'], { directions }), [{ lens: L([4, 2, 1]), a0: F([3, 2]), x: F([3, 4, 2]) }, { lens: L([3, 3]), a0: F([2, 2]), x: F([2, 3, 2]) }]);
    }
  });
  test('a length outside 0 to t', async () => {
    const s = await om.InferenceSession.create(onnxBytes({ opset: 17, ...scan8(['lens', 'a0', 'x']) }));
    try {
      for (const bad of [5, -1]) {
        assert.throws(() => s.runData({ lens: L([2, bad]), a0: F([2, 2]), x: F([2, 4, 2]) }),
          (e) => (e instanceof om.OmError && e.kind === 'InvalidArgument' && new RegExp(`^scan \\(Scan\\): sequence_lens\\[1\\] is ${bad} \\(0 to 4\\)`).test(e.message)) || assert.fail(`${e.kind}: ${e.message}`));
      }
    } finally {
      s.dispose();
    }
  });
});

describe('malformed subgraphs', () => {
  const ifNode = (attrs) => ({ nodes: [node('If', ['cond'], ['y'], { name: 'choose', attrs })], inputs: [{ name: 'cond', dims: [], dtype: 'bool' }, { name: 'x', dims: [2] }], outputs: ['y'] });
  const relu = { graph: { nodes: [node('Relu', ['x'], ['r'])], outputs: ['r'] } };
  test('If without an else_branch', () => refused(ifNode({ then_branch: relu }), 'Format', /node 'choose' \(If\) has no attribute else_branch, which If requires/));
  test('If branches of other output counts than the node', () => refused(ifNode({ then_branch: relu, else_branch: { graph: { nodes: [node('Relu', ['x'], ['r']), node('Neg', ['x'], ['m'])], outputs: ['r', 'm'] } } }),
    'Format', /node 'choose' \(If\): its else_branch gives 2 outputs, the node has 1/));
  test('a branch reading a name no graph defines', () => refused(ifNode({ then_branch: relu, else_branch: { graph: { nodes: [node('Relu', ['nowhere'], ['r'])], outputs: ['r'] } } }),
    'Format', /reads 'nowhere', which nothing defines \(in attribute else_branch of node 'choose', If\)/));
  test('a Loop body of the wrong input count', () => refused({
    nodes: [node('Loop', ['M', '', 's0'], ['s'], { name: 'loop', attrs: { body: { graph: { nodes: [node('Identity', ['c'], ['c2']), node('Identity', ['c'], ['s2'])], inputs: [{ name: 'i', dims: [], dtype: 'int64' }, { name: 'c', dims: [], dtype: 'bool' }], outputs: [{ name: 'c2', dtype: 'bool' }, 's2'] } } } })],
    inits: [{ name: 'M', dtype: 'int64', dims: [], values: [2] }], inputs: [{ name: 's0', dims: [1] }], outputs: ['s'],
  }, 'Format', /node 'loop' \(Loop\): its body takes 2 inputs; a Loop body takes the iteration number, the condition and one per loop-carried value/));
  test('a Loop body of the wrong output count', () => refused({
    nodes: [node('Loop', ['M', '', 's0'], ['s'], { name: 'loop', attrs: { body: { graph: { ...loopBody(), outputs: [{ name: 'c2', dtype: 'bool' }] } } } })],
    inits: [{ name: 'M', dtype: 'int64', dims: [], values: [2] }], inputs: [{ name: 's0', dims: [1] }, { name: 'x', dims: [1] }], outputs: ['s'],
  }, 'Format', /node 'loop' \(Loop\): its body gives 1 outputs for 1 loop-carried values and 1 node outputs/));
  test('a Scan body of the wrong output count', () => refused({
    nodes: [node('Scan', ['a0', 'x'], ['a', 'y'], { name: 'scan', ints: { num_scan_inputs: 1 }, attrs: { body: { graph: { nodes: [node('Add', ['acc', 'xt'], ['acc2'])], inputs: [{ name: 'acc', dims: null }, { name: 'xt', dims: null }], outputs: ['acc2'] } } } })],
    inputs: [{ name: 'a0', dims: [2] }, { name: 'x', dims: [3, 2] }], outputs: ['a', 'y'],
  }, 'Format', /node 'scan' \(Scan\): its body gives 1 outputs, the node has 2/));
  // ONNX's checker infers a body's types from its node's: each case is a valid model but for one
  // type, refused at create by onnxruntime-web and by the Session (Format naming the node and the
  // body), whether the inputs' sizes are fixed (the plan made at create) or symbolic
  const loopOf = (body, { s0 = [1], out = 's' } = {}) => ({
    nodes: [node('Loop', ['M', '', 's0'], ['s', 'scan'], { name: 'loop', attrs: { body: { graph: body } } })],
    inits: [{ name: 'M', dtype: 'int64', dims: [], values: [2] }], inputs: [{ name: 's0', dims: s0 }, { name: 'x', dims: s0 }], outputs: [out, 'scan'],
  });
  const typed = (at, dtype) => { const b = loopBody(); return { ...b, inputs: b.inputs.map((v, k) => (k === at ? { ...v, dtype } : v)) }; };
  const scanOf = (body) => ({
    nodes: [node('Scan', ['a0', 'x'], ['a', 'y'], { name: 'scan', ints: { num_scan_inputs: 1 }, attrs: { body: { graph: body } } })],
    inputs: [{ name: 'a0', dims: ['b'] }, { name: 'x', dims: [3, 'b'] }], outputs: ['a', 'y'],
  });
  const scanBody = { nodes: [node('Add', ['acc', 'xt'], ['acc2']), node('Identity', ['acc2'], ['yt'])], inputs: [{ name: 'acc', dims: null }, { name: 'xt', dims: null }], outputs: ['acc2', 'yt'] };
  const toInt = (from, to) => node('Cast', [from], [to], { ints: { to: 7 } });
  const ifOf = (elseBranch) => ({ nodes: [node('If', ['cond'], ['y'], { name: 'choose', attrs: { then_branch: { graph: { nodes: [node('Relu', ['x'], ['r'])], outputs: ['r'] } }, else_branch: { graph: elseBranch } } })],
                                  inputs: [{ name: 'cond', dims: [], dtype: 'bool' }, { name: 'x', dims: ['n'] }], outputs: ['y'] });
  const typeCases = [
    ['a Loop body taking a loop-carried value of another type', loopOf(typed(2, 'int64')), /^session: node 'loop' \(Loop\): its body's input 2 \('s'\) is INT64, and the node's input 2 \('s0'\) is FLOAT$/],
    ['the same with a symbolic size', loopOf(typed(2, 'int64'), { s0: ['n'] }), /^session: node 'loop' \(Loop\): its body's input 2 \('s'\) is INT64, and the node's input 2 \('s0'\) is FLOAT$/],
    ['a Loop body taking the iteration number as FLOAT', loopOf(typed(0, 'float32')), /^session: node 'loop' \(Loop\): its body's input 0 \('i'\) is FLOAT, and the iteration number is INT64$/],
    ['a Loop body giving a loop-carried value back of another type', loopOf({ ...loopBody(), outputs: [{ name: 'c2', dtype: 'bool' }, { name: 's2i', dtype: 'int64' }, 'out'],
                                                                             nodes: [...loopBody().nodes, toInt('s2', 's2i')] }, { s0: ['n'] }),
      /^session: node 'loop' \(Loop\): its body's output 1 \('s2i'\) is INT64, and the loop-carried value it gives back is FLOAT \(the node's input 2, 's0'\)$/],
    ['a Loop body whose condition is no BOOL', loopOf({ ...loopBody([node('Cast', ['c'], ['c2'], { ints: { to: 1 } })]), outputs: ['c2', 's2', 'out'] }),
      /^session: node 'loop' \(Loop\): its body's output 0 \('c2'\), the condition, is FLOAT, not BOOL$/, { s0: F([1]), x: F([1]) }],
    ['a Loop output declared of another type than its body gives', loopOf(loopBody(), { s0: ['n'], out: { name: 's', dtype: 'int64' } }),
      /^session: node 'loop' \(Loop\): output 0 \('s'\) is FLOAT as its body gives it, and the graph declares it INT64$/],
    ['If branches giving two types', ifOf({ nodes: [toInt('x', 'k')], outputs: [{ name: 'k', dtype: 'int64' }] }),
      /^session: node 'choose' \(If\): output 0 is FLOAT in its then_branch and INT64 in its else_branch$/],
    ['a Scan body taking a state of another type', scanOf({ ...scanBody, inputs: [{ name: 'acc', dims: null, dtype: 'int64' }, scanBody.inputs[1]] }),
      /^session: node 'scan' \(Scan\): its body's input 0 \('acc'\) is INT64, and the node's input 0 \('a0'\) is FLOAT$/],
    ['a Scan body giving a state back of another type', scanOf({ ...scanBody, nodes: [node('Add', ['acc', 'xt'], ['sum']), toInt('sum', 'acc2'), node('Identity', ['sum'], ['yt'])],
                                                                 outputs: [{ name: 'acc2', dtype: 'int64' }, 'yt'] }),
      /^session: node 'scan' \(Scan\): its body's output 0 \('acc2'\) is INT64, and the state it gives back is FLOAT \(the node's input 0, 'a0'\)$/,
      { a0: F([2]), x: F([3, 2]) }],
  ];
  // onnxruntime-web refuses each when it loads the model, or (feeds given) makes it and refuses every run: a type mismatch
  for (const [what, model, re, feeds] of typeCases) {
    test(`${what}: Format at create, as onnxruntime-web refuses it`, async () => {
      const made = ort.InferenceSession.create(onnxBytes({ opset: 17, ...model }), { executionProviders: ['wasm'] });
      if (!feeds) await assert.rejects(made);
      else {
        const o = await made;
        await assert.rejects(o.run(Object.fromEntries(Object.entries(feeds).map(([n, f]) => [n, new ort.Tensor(f.type, f.data, f.dims)]))));
        await o.release();
      }
      await refused(model, 'Format', re);
    });
  }
  test('bodies that declare the types their nodes give, or none, run as onnxruntime-web runs them', async () => {
    const declared = { ...loopBody(), inputs: loopBody().inputs.map((v) => ({ ...v, dtype: v.dtype ?? 'float32' })), outputs: [{ name: 'c2', dtype: 'bool' }, { name: 's2', dtype: 'float32' }, 'out'] };
    await agree(loopOf(declared, { s0: ['n'], out: { name: 's', dtype: 'float32' } }), [{ s0: F([3]), x: F([3]) }]);
    await agree(scanOf(scanBody), [{ a0: F([2]), x: F([3, 2]) }]);
    await agree(ifOf({ nodes: [node('Neg', ['x'], ['m'])], outputs: [{ name: 'm', dtype: 'float32' }] }), [{ cond: B(false), x: F([4]) }, { cond: B(true), x: F([4]) }]);
  });
  test('subgraphs nested past the limit (hostile nesting is refused before it is parsed)', () => {
    let g = relu.graph;
    for (let k = 0; k < 60; k++) g = { nodes: [node('If', ['cond'], [`y${k}`], { attrs: { then_branch: { graph: g }, else_branch: relu } })], outputs: [`y${k}`] };
    return refused({ nodes: g.nodes, inputs: [{ name: 'cond', dims: [], dtype: 'bool' }, { name: 'x', dims: [2] }], outputs: ['y59'] },
      'Format', /the model nests messages more than 128 deep \(subgraphs in subgraphs, or types in types\)/);
  });
  test('a subgraph attribute on a graph the reader takes deep enough still runs (30 levels)', () => {
    let g = relu.graph;
    for (let k = 0; k < 30; k++) g = { nodes: [node('If', ['cond'], [`y${k}`], { attrs: { then_branch: { graph: g }, else_branch: relu } })], outputs: [`y${k}`] };
    return agree({ nodes: g.nodes, inputs: [{ name: 'cond', dims: [], dtype: 'bool' }, { name: 'x', dims: [2] }], outputs: ['y29'] }, [{ cond: B(true), x: F([2]) }]);
  });
});
