// Tracing to ONNX, one test per rule of docs/tracing.md:
// what is recorded, constants and their names, pruning, outputs, aliases, symbolic axes, values
// after finish, determinism (and the golden bytes shared with the C test), the JS wrapper.
// Every model traced here also runs through the onnxruntime-web oracle (examples/lib/oracle.mjs)
// against its eager outputs: withTraced (helpers.mjs) requires them for every model it keeps.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as om from 'onemodel';
import { near, vals, memoryHooks, withTraced, startOracle } from './helpers.mjs';

memoryHooks();

const opTypes = (tm) => tm.graph().nodes.map((n) => n.opType);
const initNames = (tm) => tm.graph().initializers.map((i) => i.name).sort();

/** FNV-1a 64 of bytes as 16 lowercase hex digits. */
function fnv1a64(bytes) {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, '0');
}

describe('the harness: every traced model these tests keep runs in onnxruntime-web', () => {
  const traceRelu = () => {
    const x0 = om.randn([2, 3], { seed: 1 });
    const tracer = om.Tracer.begin();
    const y = tracer.input('x', x0).relu();
    return { tm: tracer.finish({ y }), x0, y };
  };

  test('keep needs the example inputs and the eager outputs', async () => {
    for (const [what, args] of [['no inputs', () => []], ['no eager outputs', (a) => [{ x: a.x0 }]],
      ['empty inputs', (a) => [{}, { y: a.y }]], ['eager null', (a) => [{ x: a.x0 }, null]]]) {
      await assert.rejects(withTraced((keep) => {
        const a = traceRelu();
        keep(a.tm, ...args(a));
      }), /^Error: oracle: every traced model needs its (example inputs|eager outputs)/, what);
    }
  });

  test('a model whose .onnx disagrees with its eager outputs fails the test', async () => {
    await assert.rejects(withTraced((keep) => {
      const a = traceRelu();
      keep(a.tm, { x: a.x0 }, { y: a.y.add(1) });
    }), /trace oracle: the \.onnx disagrees with the eager run:\n {2}y: max \|onnx - eager\| = 1 > [\d.e-]+ at element 0/);
  });

  test('trace(model, inputs) checks against a separate eager run of the model', async () => {
    let calls = 0;
    await withTraced((keep, trace) => {
      trace((x) => { calls++; return x.exp(); }, { x: [om.randn([3, 2], { seed: 1 }), ['batch', null]] });
    });
    // traced: a base run, six runs at other sizes and two far ones (shape only), the recorded one,
    // then the range runs (shape only): batch from 3 up to 32768 at 3 + 1, 3 + 3, 3 + 7, ...,
    // 3 + 16383 and 32768 (15), down to 1 (2); eager once, and at three other batch sizes
    assert.equal(calls, 10 + 17 + 4);
  });
});

describe('recording', () => {
  test('every op with a traced input writes its node; ops on constants only write none', () => withTraced((keep) => {
    const x0 = om.randn([2, 3], { seed: 1 });
    const tracer = om.Tracer.begin();
    const x = tracer.input('x', x0);
    const c = om.ones([3]).mul(2).add(1); // constants only: run eagerly, no node
    assert.equal(om.Tracer.active, true);
    const y = x.add(c).relu().mul(x);
    const tm = keep(tracer.finish({ y }), { x: x0 }, { y });
    assert.deepEqual(opTypes(tm), ['Add', 'Relu', 'Mul']);
    const inits = tm.graph().initializers;
    assert.equal(inits.length, 1, 'the folded constant c is one initializer');
    assert.deepEqual(inits[0].shape, [3]);
    assert.deepEqual(vals(c), [3, 3, 3]);
    assert.equal(om.Tracer.active, false);
  }));

  test('a traced tensor reports requiresGrad while recording, an untraced one does not', () => withTraced((keep) => {
    const tracer = om.Tracer.begin();
    const ex = om.randn([2], { seed: 1 });
    const x = tracer.input('x', ex);
    assert.equal(x.requiresGrad, true);
    assert.equal(ex.requiresGrad, false);
    const y = x.exp();
    assert.equal(y.requiresGrad, true);
    keep(tracer.finish({ y }), { x: ex }, { y });
  }));
});

describe('constants', () => {
  test('the same weight used twice is one initializer', () => withTraced((keep) => {
    const W = om.randn([3, 3], { seed: 2 });
    const x0 = om.randn([2, 3], { seed: 1 });
    const tracer = om.Tracer.begin();
    const x = tracer.input('x', x0);
    tracer.parameter('w', W);
    const y = x.matmul(W).add(x.matmul(W)).matmul(W);
    const tm = keep(tracer.finish({ y }), { x: x0 }, { y });
    assert.deepEqual(opTypes(tm), ['MatMul', 'Add', 'MatMul']); // x @ w twice is one node (src/trace/merge.c)
    assert.deepEqual(tm.graph().initializers, [{ name: 'w', dtype: 'float32', shape: [3, 3], aliases: [] }]);
  }));

  test('equal buffers of two modules are one initializer, named for the first read, the other name its alias in the .onnx too', () => withTraced((keep, trace) => {
    class Masked extends om.nn.Module { // each block makes its own causal mask: equal values, own storage
      constructor(n) {
        super();
        this.registerBuffer('mask', om.tidy(() => om.ones([n, n]).triu(1).mul(-1e9)));
      }

      forward(x) {
        const l = x.shape[1];
        const scores = x.matmul(x.transpose(1, 2)).add(this.mask.slice(0, 0, l).slice(1, 0, l));
        return scores.softmax(-1).matmul(x);
      }
    }
    class Net extends om.nn.Module {
      constructor() { super(); this.b = new Masked(8); this.a = new Masked(8); }
      forward(x) { return this.a.forward(this.b.forward(x)); }
    }
    const net = new Net();
    try {
      const tm = trace(net, { x: [om.randn([2, 5, 3], { seed: 1 }), ['batch', 'seq', null]] });
      assert.deepEqual(tm.graph().initializers.filter((i) => i.shape.length === 2).map((i) => [i.name, i.shape, i.aliases]),
        [['b.mask', [8, 8], ['a.mask']]], 'b runs first, so its path names the one mask');
      // a metadata_props entry: key 'onemodel.alias.a.mask', then field 2 (the value) of 6 bytes, 'b.mask'
      const entry = Buffer.concat([Buffer.from('onemodel.alias.a.mask'), Buffer.from([0x12, 6]), Buffer.from('b.mask')]);
      assert.ok(Buffer.from(tm.toOnnx()).includes(entry), 'the .onnx names the alias');
      const slices = tm.graph().nodes.filter((n) => n.opType === 'Slice');
      assert.ok(slices.length >= 2 && slices.every((n) => n.inputs[0] !== 'a.mask'));
      assert.ok(tm.toOnnx().length < 2 * 8 * 8 * 4 + 2000, 'the 256-byte mask is written once');
    } finally {
      net.dispose();
    }
  }));

  test('a transposed view of a named weight is <name>.view_0 holding the transposed values', () => withTraced((keep) => {
    const W = om.tensor([[1, 2, 3], [4, 5, 6]]); // [out 2, in 3]
    const eye = om.tensor([[1, 0, 0], [0, 1, 0], [0, 0, 1]]);
    const tracer = om.Tracer.begin();
    const x = tracer.input('x', eye);
    tracer.parameter('fc.weight', W);
    const y = x.matmul(W.t());
    const tm = tracer.finish({ y });
    assert.deepEqual(tm.graph().initializers, [{ name: 'fc.weight.view_0', dtype: 'float32', shape: [3, 2], aliases: [] }]);
    // I @ view = the view's values: W^T, in the eager run and (the oracle) in the .onnx
    assert.deepEqual(y.shape, [3, 2]);
    assert.deepEqual(vals(y), [1, 4, 2, 5, 3, 6]);
    keep(tm, { x: eye }, { y });
  }));

  test('a constant keeps the values it had when it was captured', () => withTraced((keep) => {
    const W = om.tensor([[1, 2], [3, 4]]);
    const ex = om.tensor([[1, 0], [0, 1]]);
    const tracer = om.Tracer.begin();
    const x = tracer.input('x', ex);
    tracer.parameter('w', W);
    const y = x.matmul(W);
    const tm = tracer.finish({ y });
    W.fill_(0); // after finish: allowed; the model keeps its copy of the old values
    assert.deepEqual(vals(y), [1, 2, 3, 4]);
    keep(tm, { x: ex }, { y }); // the .onnx is written now, after the fill, and still gives W's old values
  }));
});

describe('naming', () => {
  class Net extends om.nn.Module {
    constructor() {
      super();
      this.fc1 = new om.nn.Linear(3, 5);
      this.layers = [new om.nn.Linear(5, 5), new om.nn.Linear(5, 2, { bias: false })];
      this.registerBuffer('scale', om.full([2], 0.5));
    }

    forward(x) {
      let h = this.fc1.forward(x).relu();
      for (const l of this.layers) h = l.forward(h);
      return h.mul(this.scale);
    }
  }

  test('tracer.parameter names an initializer', () => withTraced((keep) => {
    const b = om.randn([4], { seed: 3 });
    const u = om.randn([4], { seed: 4 });
    const x0 = om.randn([2, 4], { seed: 1 });
    const tracer = om.Tracer.begin();
    const x = tracer.input('x', x0);
    tracer.parameter('my.bias', b);
    const y = x.add(b).sub(u);
    const tm = keep(tracer.finish({ y }), { x: x0 }, { y });
    // the named one by its name, the unnamed one by a generated name
    assert.deepEqual(initNames(tm), ['const_0', 'my.bias']);
    assert.deepEqual(tm.graph().nodes.find((n) => n.opType === 'Sub').inputs, ['Add_0', 'const_0']);
  }));

  test('om.trace(module) names parameters and buffers by their state-dict paths', () => withTraced((keep, trace) => {
    om.manualSeed(7);
    const net = new Net();
    assert.deepEqual(Object.keys(net.stateDict()), // PyTorch's order: the module's own parameter first
      ['scale', 'fc1.weight', 'fc1.bias', 'layers.0.weight', 'layers.0.bias', 'layers.1.weight']);
    const tm = trace(net, { x: [om.randn([4, 3], { seed: 1 }), ['batch', null]] });
    assert.deepEqual(initNames(tm),
      ['fc1.bias', 'fc1.weight', 'layers.0.bias', 'layers.0.weight', 'layers.1.weight', 'scale']);
    const gemm = tm.graph().nodes.find((n) => n.opType === 'Gemm'); // Linear reads its weight as stored
    assert.deepEqual(gemm.inputs, ['x', 'fc1.weight', 'fc1.bias']);
    net.dispose();
  }));

  test('Linear on a 3-D input reads its weight by its name too (Transpose, MatMul, Add)', () => withTraced((keep, trace) => {
    om.manualSeed(5);
    const fc = new om.nn.Linear(4, 3);
    try {
      const tm = trace({ forward: (x) => fc.forward(x), stateDict: () => ({ 'fc.weight': fc.weight, 'fc.bias': fc.bias }) },
        { x: [om.randn([2, 5, 4], { seed: 1 }), ['batch', null, null]] });
      assert.deepEqual(initNames(tm), ['fc.bias', 'fc.weight']);
      assert.deepEqual(tm.graph().nodes.map((n) => [n.opType, n.inputs]),
        [['Transpose', ['fc.weight']], ['MatMul', ['x', 'Transpose_0']], ['Add', ['MatMul_1', 'fc.bias']]]);
    } finally {
      fc.dispose();
    }
  }));

  test('tied weights (one tensor in two fields) are stored once, under the first path', () => withTraced((keep, trace) => {
    class Tied extends om.nn.Module {
      constructor() {
        super();
        this.enc = new om.nn.Linear(4, 4);
        this.dec = new om.nn.Linear(4, 4);
        this.dec.weight.dispose();
        this.dec.weight = this.enc.weight;
      }

      forward(x) { return this.dec.forward(this.enc.forward(x).tanh()); }
    }
    const net = new Tied();
    assert.equal(net.parameters().length, 3, 'parameters() lists the tied weight once');
    assert.equal(Object.keys(net.stateDict()).length, 4, 'the state dict has it under both paths');
    const tm = trace(net, { x: om.randn([3, 4], { seed: 1 }) });
    const names = initNames(tm);
    assert.deepEqual(names, ['dec.bias', 'enc.bias', 'enc.weight']);
    const gemms = tm.graph().nodes.filter((n) => n.opType === 'Gemm');
    assert.deepEqual(gemms.map((n) => n.inputs[1]), ['enc.weight', 'enc.weight']);
    net.dispose();
  }));
});

describe('pruning', () => {
  test('a branch no output needs leaves no node and no initializer', () => withTraced((keep) => {
    const x0 = om.randn([2, 3], { seed: 1 });
    const tracer = om.Tracer.begin();
    const x = tracer.input('x', x0);
    const unused = x.exp().add(om.ones([3])).sum();
    const y = x.relu();
    const tm = keep(tracer.finish({ y }), { x: x0 }, { y });
    assert.deepEqual(opTypes(tm), ['Relu']);
    assert.deepEqual(tm.graph().initializers, []);
    assert.equal(unused.shape.length, 0);
  }));
});

describe('outputs', () => {
  test('outputs are renamed to the requested names, in order', () => withTraced((keep) => {
    const x0 = om.randn([2, 3], { seed: 1 });
    const tracer = om.Tracer.begin();
    const x = tracer.input('x', x0);
    const outs = { second: x.exp(), first: x.relu() };
    const tm = keep(tracer.finish(outs), { x: x0 }, outs);
    assert.deepEqual(tm.outputs.map((o) => o.name), ['second', 'first']);
    const g = tm.graph();
    const writers = g.nodes.flatMap((n) => n.outputs);
    assert.ok(writers.includes('second') && writers.includes('first'), `node outputs: ${writers}`);
  }));

  test('an output that is an input, or repeated, goes through an Identity', () => withTraced((keep) => {
    const x0 = om.randn([2, 3], { seed: 1 });
    const tracer = om.Tracer.begin();
    const x = tracer.input('x', x0);
    const y = x.relu();
    const outs = { same: x, a: y, b: y };
    const tm = keep(tracer.finish(outs), { x: x0 }, outs);
    assert.deepEqual(tm.outputs.map((o) => o.name), ['same', 'a', 'b']);
    const ids = tm.graph().nodes.filter((n) => n.opType === 'Identity');
    assert.equal(ids.length, 2, JSON.stringify(tm.graph().nodes));
    assert.deepEqual(ids.map((n) => n.outputs[0]).sort(), ['b', 'same']);
    assert.deepEqual(ids.find((n) => n.outputs[0] === 'same').inputs, ['x']);
  }));
});

describe('aliases', () => {
  test('reshape to the same shape, contiguous, clone and a full-range slice write no node', () => withTraced((keep) => {
    const x0 = om.randn([2, 3], { seed: 1 });
    const tracer = om.Tracer.begin();
    const x = tracer.input('x', x0);
    const a = x.reshape(2, 3).contiguous().clone().slice(1, 0, Infinity).slice(0);
    const y = a.relu();
    const tm = keep(tracer.finish({ y }), { x: x0 }, { y });
    assert.deepEqual(tm.graph().nodes, [{ opType: 'Relu', inputs: ['x'], outputs: ['y'] }]);
  }));

  test('detach of a traced tensor returns it: same values, still traced, each handle disposable', () => withTraced((keep) => {
    const tracer = om.Tracer.begin();
    const ex = om.randn([2, 3], { seed: 1 });
    const x = tracer.input('x', ex);
    const d = x.detach();
    assert.notEqual(d, x, 'a second JS handle');
    assert.equal(d.requiresGrad, true, 'still traced');
    const y = d.relu();
    const tm = keep(tracer.finish({ y }), { x: ex }, { y });
    assert.deepEqual(tm.graph().nodes, [{ opType: 'Relu', inputs: ['x'], outputs: ['y'] }]);
    d.dispose();
    assert.deepEqual(vals(x), vals(ex), 'the other handle still works after one is disposed');
  }));
});

describe('symbolic axes', () => {
  test('traced.inputs and traced.outputs give symbolic axes by name', () => withTraced((keep, trace) => {
    const W = om.randn([3, 5], { seed: 2 });
    const tm = trace((x, s) => ({ y: x.matmul(W), n: s.sum(0) }), {
      x: [om.randn([4, 3], { seed: 1 }), ['batch', null]],
      s: [om.ones([6, 2], { dtype: 'int64' }), ['seq', null]],
    });
    assert.deepEqual(tm.inputs, [
      { name: 'x', dtype: 'float32', shape: ['batch', 3] },
      { name: 's', dtype: 'int64', shape: ['seq', 2] },
    ]);
    assert.deepEqual(tm.outputs, [
      { name: 'y', dtype: 'float32', shape: ['batch', 5] },
      { name: 'n', dtype: 'int64', shape: [2] },
    ]);
  }));
});

describe('axisNames with holes', () => {
  test('a hole of a sparse axisNames array is a fixed axis, like null', () => withTraced((keep) => {
    const x0 = om.randn([4, 3], { seed: 1 });
    for (const [axes, shape] of [[new Array(2), [4, 3]], [['batch', , ], ['batch', 3]], [[, 'feat'], [4, 'feat']]]) { // eslint-disable-line no-sparse-arrays
      const tracer = om.Tracer.begin();
      tracer.input('x', x0, axes);
      const model = (v) => ({ y: v.exp() });
      const outs = tracer.run(model); // symbolic axes record only in a run the tracer drives
      const tm = keep(tracer.finish(outs), { x: x0 }, outs, undefined, model);
      assert.deepEqual(tm.inputs, [{ name: 'x', dtype: 'float32', shape }]);
      assert.deepEqual(tm.outputs[0].shape, shape);
    }
  }));
});

describe('values', () => {
  test('reading a traced tensor after finish gives the example run values', () => withTraced((keep) => {
    const ex = om.tensor([[1, -2], [3, -4]]);
    const tracer = om.Tracer.begin();
    const x = tracer.input('x', ex);
    const y = x.mul(2).relu();
    keep(tracer.finish({ y }), { x: ex }, { y });
    near(y.toArray(), [2, 0, 6, 0]);
    assert.equal(y.sum().item(), 8);
    near(x.toArray(), [1, -2, 3, -4]);
  }));

  test('after abort, traced tensors are readable too', () => om.tidy(() => {
    const tracer = om.Tracer.begin();
    const y = tracer.input('x', om.tensor([1, 2])).exp();
    tracer.abort();
    assert.equal(om.Tracer.active, false);
    near(y.toArray(), [Math.E, Math.E ** 2], 1e-5);
  }));
});

describe('determinism', () => {
  const build = (trace) => {
    om.manualSeed(3);
    const net = new om.nn.Linear(4, 3);
    try {
      return trace((x) => net.forward(x).relu().sum(-1), { x: [om.randn([5, 4], { seed: 1 }), ['batch', null]] });
    } finally {
      net.dispose();
    }
  };

  test('tracing the same model twice gives identical bytes', () => withTraced((keep, trace) => {
    const x = build(trace).toOnnx();
    const y = build(trace).toOnnx();
    assert.ok(x.length > 100);
    assert.deepEqual(y, x);
  }));

  test('golden bytes (pinned in the C test too: native and WASM write the same .onnx)', () => withTraced((keep) => {
    const x0 = om.randn([3, 4], { seed: 1 });
    const W1 = om.randn([4, 8], { seed: 2 });
    const b1 = om.randn([8], { seed: 3 });
    const W2 = om.randn([8, 2], { seed: 4 });
    const tracer = om.Tracer.begin();
    const x = tracer.input('x', x0);
    tracer.parameter('fc1.weight', W1);
    tracer.parameter('fc1.bias', b1);
    tracer.parameter('fc2.weight', W2);
    const h = x.matmul(W1).add(b1).relu();
    const y = h.matmul(W2);
    const m = y.amax([-1], true);
    const e = y.sub(m).exp();
    const p = e.div(e.sum([-1], true));
    const tm = keep(tracer.finish({ probs: p }), { x: x0 }, { probs: p });
    const bytes = tm.toOnnx();
    assert.equal(fnv1a64(bytes), GOLDEN_FNV, `${bytes.length} bytes`);
  }));

  // The second golden model, for the C test to pin too (trace it there with the same calls):
  //   x0 = randn [3, 5] seed 5 (om_randn(shape, 2, 5, true)), W = randn [5, 4] seed 6,
  //   t = randn [4] seed 7; all float32.
  //   begin; x = input 'x' of x0 with axis names ['batch', null] (a symbolic batch, dim_param);
  //   parameter 'proj.weight' = W; parameter 'proj.threshold' = t (in this order);
  //   h = matmul(x, W)                 [batch, 4] float32
  //   cls = argmax(h, dim 1, keepdim false)   [batch] int64
  //   clsf = cast(cls, float32)        [batch] float32
  //   mask = gt(h, t)                  [batch, 4] bool
  //   y = where(mask, h, t)            [batch, 4] float32
  //   ys = sum(y, dims [1], keepdim false)    [batch] float32
  //   score = add(ys, clsf)            [batch] float32
  //   finish with outputs, in this order: y 'y', cls 'cls', mask 'mask', score 'score',
  //   x 'x_copy' (a graph input as an output: an Identity node).
  test('golden bytes 2: symbolic batch, int64 and bool paths, an Identity output (pinned in the C test too)', () => withTraced((keep) => {
    const x0 = om.randn([3, 5], { seed: 5 });
    const W = om.randn([5, 4], { seed: 6 });
    const t = om.randn([4], { seed: 7 });
    const tracer = om.Tracer.begin();
    tracer.input('x', x0, ['batch', null]);
    tracer.parameter('proj.weight', W);
    tracer.parameter('proj.threshold', t);
    const model = (v) => {
      const h = v.matmul(W);
      const cls = h.argmax(1, false);
      const clsf = cls.to('float32');
      const mask = h.gt(t);
      const y = om.where(mask, h, t);
      const ys = y.sum([1], false);
      const score = ys.add(clsf);
      return { y, cls, mask, score, x_copy: v };
    };
    const outs = tracer.run(model);
    const tm = keep(tracer.finish(outs), { x: x0 }, outs, undefined, model);
    assert.deepEqual(tm.inputs, [{ name: 'x', dtype: 'float32', shape: ['batch', 5] }]);
    assert.deepEqual(tm.outputs, [
      { name: 'y', dtype: 'float32', shape: ['batch', 4] },
      { name: 'cls', dtype: 'int64', shape: ['batch'] },
      { name: 'mask', dtype: 'bool', shape: ['batch', 4] },
      { name: 'score', dtype: 'float32', shape: ['batch'] },
      { name: 'x_copy', dtype: 'float32', shape: ['batch', 5] },
    ]);
    assert.deepEqual(opTypes(tm), ['MatMul', 'ArgMax', 'Cast', 'Greater', 'Where', 'ReduceSum', 'Add', 'Identity']);
    assert.deepEqual(initNames(tm), ['const_0', 'proj.threshold', 'proj.weight']);
    const bytes = tm.toOnnx();
    assert.equal(fnv1a64(bytes), GOLDEN2_FNV, `${bytes.length} bytes`);
  }));
});

// FNV-1a 64 of the golden model's .onnx; tests/c pins the same value for the native build.
const GOLDEN_FNV = '363730af99cbe4aa';
// The same for the second golden model (symbolic batch, int64 and bool paths, an Identity output).
const GOLDEN2_FNV = '96cc18d8de499eaa';

describe('TracedModel', () => {
  test('toOnnx and saveOnnx write the same bytes; saveOnnx returns the size', () => withTraced((keep, trace) => {
    const W = om.randn([300, 300], { seed: 2 }); // 360 kB: several chunks
    const tm = trace((x) => x.matmul(W), { x: [om.randn([2, 300], { seed: 1 }), ['batch', null]] });
    const bytes = tm.toOnnx();
    assert.ok(bytes.length > 360000);
    const dir = mkdtempSync(join(tmpdir(), 'om-trace-'));
    try {
      const file = join(dir, 'm.onnx');
      assert.equal(tm.saveOnnx(file), bytes.length);
      assert.deepEqual(new Uint8Array(readFileSync(file)), bytes);
      assert.equal(tm.saveOnnx(new URL(`file://${file}`)), bytes.length);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }));

  test('toBlob holds the same bytes as toOnnx; progress reaches the total in order, at most about 100 times', async () => {
    const reports = { toOnnx: [], toBlob: [], saveOnnx: [] };
    const { bytes, blob } = await withTraced((keep, trace) => {
      const W = om.randn([600, 600], { seed: 3 }); // 1.4 MB: a weight larger than one 256 KiB piece
      const V = om.randn([600, 10], { seed: 4 });
      const tm = trace((x) => x.matmul(W).relu().matmul(V), { x: [om.randn([2, 600], { seed: 1 }), ['batch', null]] });
      const dir = mkdtempSync(join(tmpdir(), 'om-trace-'));
      try {
        const size = tm.saveOnnx(join(dir, 'm.onnx'), { onProgress: (p) => reports.saveOnnx.push(p) });
        assert.deepEqual(new Uint8Array(readFileSync(join(dir, 'm.onnx'))), tm.toOnnx());
        assert.equal(size, tm.toOnnx().length);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      return { bytes: tm.toOnnx({ onProgress: (p) => reports.toOnnx.push(p) }), blob: tm.toBlob({ onProgress: (p) => reports.toBlob.push(p) }) };
    });
    assert.ok(blob instanceof Blob, 'the Blob outlives the model');
    assert.equal(blob.type, 'application/octet-stream');
    assert.deepEqual(new Uint8Array(await blob.arrayBuffer()), bytes);
    for (const [who, list] of Object.entries(reports)) {
      assert.ok(list.length >= 3 && list.length <= 101, `${who}: ${list.length} reports`);
      assert.ok(list.every((p, i) => p.total === bytes.length && p.written > (list[i - 1]?.written ?? 0)), who);
      assert.equal(list.at(-1).written, bytes.length, who);
      assert.ok(list.some((p) => p.written < 600 * 600 * 4), `${who}: moves within the 1.4 MB weight`);
    }
    assert.deepEqual(reports.toBlob, reports.toOnnx, 'the same pieces');
    assert.deepEqual(reports.saveOnnx, reports.toOnnx, 'the same pieces');
  });

  test('export options are checked; an onProgress that throws stops the export and leaves the model usable', () => withTraced((keep, trace) => {
    const tm = trace((x) => x.relu(), { x: om.ones([2]) });
    for (const [who, f] of [['toOnnx', (o) => tm.toOnnx(o)], ['toBlob', (o) => tm.toBlob(o)], ['saveOnnx', (o) => tm.saveOnnx('/nonexistent-dir/m.onnx', o)]]) {
      assert.throws(() => f({ onProgress: 3 }), (e) => e instanceof om.OmError && e.kind === 'InvalidArgument'
        && e.message === `${who}: onProgress must be a function, got 3`, who);
      assert.throws(() => f({ onProgres: () => {} }), (e) => e instanceof om.OmError && e.kind === 'InvalidArgument'
        && /unknown option 'onProgres'/.test(e.message), who);
    }
    const { Blob } = globalThis;
    delete globalThis.Blob;
    try {
      assert.throws(() => tm.toBlob(), (e) => e instanceof om.OmError && e.kind === 'InvalidArgument'
        && e.message === 'toBlob: this JavaScript environment has no Blob');
    } finally {
      globalThis.Blob = Blob;
    }
    const boom = new Error('stop');
    assert.throws(() => tm.toBlob({ onProgress: () => { throw boom; } }), (e) => e === boom);
    assert.equal(tm.toBlob().size, tm.toOnnx().length);
  }));

  test('saveOnnx to an unwritable path throws OmError and leaves the model usable', () => withTraced((keep, trace) => {
    const tm = trace((x) => x.relu(), { x: om.ones([2]) });
    assert.throws(() => tm.saveOnnx('/nonexistent-dir/m.onnx'),
      (e) => e instanceof om.OmError && /^saveOnnx: cannot open \/nonexistent-dir\/m\.onnx/.test(e.message));
    assert.ok(tm.toOnnx().length > 0);
  }));

  test('dispose is idempotent; use after dispose throws Disposed', () => withTraced((keep, trace) => {
    const tm = trace((x) => x.relu(), { x: om.ones([2]) }); // the oracle has read it now
    assert.equal(tm.isDisposed, false);
    tm.dispose();
    tm.dispose();
    assert.equal(tm.isDisposed, true);
    for (const [who, f] of [['toOnnx', () => tm.toOnnx()], ['saveOnnx', () => tm.saveOnnx('x.onnx')],
      ['graph', () => tm.graph()], ['inputs', () => tm.inputs], ['outputs', () => tm.outputs]]) {
      assert.throws(f, (e) => e instanceof om.OmError && e.kind === 'Disposed' && e.message.startsWith(`${who}:`), who);
    }
  }));
});

describe('om.trace', () => {
  test('onProgress: the recording run reports its submodules\' calls, in order, up to the total; forward is put back', () => withTraced((keep, trace) => {
    const layers = Array.from({ length: 250 }, () => new om.nn.Linear(3, 3));
    class Deep extends om.nn.Module {
      constructor() { super(); this.layers = new om.nn.ModuleList(layers); this.head = new om.nn.Sequential(new om.nn.ReLU(), new om.nn.Linear(3, 1)); }
      forward(x) { for (const l of this.layers) x = l.forward(x); return this.head.forward(x); }
    }
    const net = new Deep();
    const own = [layers[0].forward, layers[1].forward]; // each module's own (its forward call's scope)
    try {
      for (const axes of [['batch', null], [null, null]]) { // with runs at other sizes, and without
        const reports = [];
        trace(net, { x: [om.randn([2, 3], { seed: 1 }), axes] }, { onProgress: (p) => reports.push(p) });
        const total = reports[0].total;
        assert.equal(total, axes[0] ? 253 : 254, 'the calls of a run at other sizes, else the submodules (ModuleList is not called)');
        assert.deepEqual(reports[0], { done: 0, total });
        assert.deepEqual(reports.at(-1), { done: total, total });
        assert.ok(reports.length >= 50 && reports.length <= 102, `${reports.length} reports`);
        assert.ok(reports.every((p, i) => p.total === total && (i === 0 || p.done > reports[i - 1].done)));
      }
      assert.ok(Object.keys(layers[0]).every((k) => k !== 'forward') && layers[0].forward === own[0], 'forward is the module\'s own again');
      const failing = { forward: () => { throw new Error('boom'); }, namedModules: () => [['', null], ['l', layers[1]]] };
      assert.throws(() => om.trace(failing, { x: om.ones([3]) }, { onProgress: () => {} }), /boom/);
      assert.equal(layers[1].forward, own[1], 'put back when the model throws');
      assert.throws(() => om.trace(net, { x: om.ones([3]) }, { onProgress: 'yes' }),
        (e) => e instanceof om.OmError && e.kind === 'InvalidArgument' && e.message === 'trace: onProgress must be a function, got a string ("yes")');
      const fn = [];
      trace((x) => x.relu(), { x: om.ones([3]) }, { onProgress: (p) => fn.push(p) });
      assert.deepEqual(fn, [{ done: 0, total: 1 }, { done: 1, total: 1 }], 'a function has no steps');
    } finally {
      net.dispose();
    }
  }));

  test('output names: a Tensor is "output", an array output_<i>, an object its keys, or outputNames', () => withTraced((keep, trace) => {
    const ex = { x: om.randn([2, 2], { seed: 1 }) };
    const names = (tm) => tm.outputs.map((o) => o.name);
    assert.deepEqual(names(trace((x) => x.exp(), ex)), ['output']);
    assert.deepEqual(names(trace((x) => [x.exp(), x.relu()], ex)), ['output_0', 'output_1']);
    assert.deepEqual(names(trace((x) => ({ b: x.exp(), a: x.relu() }), ex)), ['b', 'a']);
    assert.deepEqual(names(trace((x) => [x.exp(), x.relu()], ex, { outputNames: ['e', 'r'] })), ['e', 'r']);
    assert.deepEqual(names(trace({ forward: (x) => x.exp() }, ex, { outputNames: ['e'] })), ['e']);
  }));

  test('inputs are passed positionally in key order, and every tensor made is freed', async () => {
    const a = om.tensor([1, 2]);
    const b = om.tensor([10, 20]);
    const before = om.memory();
    const tm = om.trace((p, q) => p.sub(q).mul(p), { p: a, q: [b, null] });
    try {
      assert.deepEqual(tm.inputs.map((i) => i.name), ['p', 'q']);
      assert.deepEqual(opTypes(tm), ['Sub', 'Mul']);
      assert.equal(om.Tracer.active, false);
      const eager = om.tidy(() => a.sub(b).mul(a));
      const oracle = startOracle(tm, { p: a, q: b }, eager); // reads eager now
      eager.dispose();
      // what stays is held by the model (its initializers), none of the inputs or intermediates
      const held = om.memory().tensors - before.tensors;
      tm.dispose();
      assert.equal(om.memory().tensors, before.tensors, `the model held ${held} tensors`);
      await oracle;
    } finally {
      om.dispose([a, b]);
    }
  });

  test('a throwing model leaves no recording active and nothing allocated', () => {
    const ex = om.ones([2]);
    const before = om.memory();
    assert.throws(() => om.trace((x) => { x.exp(); throw new Error('boom'); }, { x: ex }), /boom/);
    assert.equal(om.Tracer.active, false);
    assert.deepEqual([om.memory().tensors, om.memory().bytes], [before.tensors, before.bytes]);
    ex.dispose();
  });
});

describe('nn', () => {
  test('Linear: PyTorch init bounds, reproducible with manualSeed, forward = x W^T + b', () => om.tidy(() => {
    om.manualSeed(11);
    const l = new om.nn.Linear(4, 3);
    om.manualSeed(11);
    const l2 = new om.nn.Linear(4, 3);
    assert.deepEqual(l.weight.shape, [3, 4]);
    assert.deepEqual(l.bias.shape, [3]);
    assert.deepEqual(vals(l.weight), vals(l2.weight));
    assert.ok(vals(l.weight).every((v) => Math.abs(v) <= 0.5) && vals(l.bias).every((v) => Math.abs(v) <= 0.5));
    assert.ok(new Set(vals(l.weight)).size === 12);
    assert.equal(l.weight.requiresGrad, true);
    const x = om.randn([2, 4], { seed: 1 });
    const w = vals(l.weight);
    const b = vals(l.bias);
    const xv = vals(x);
    const want = [];
    for (let i = 0; i < 2; i++) for (let o = 0; o < 3; o++) {
      let s = b[o];
      for (let k = 0; k < 4; k++) s += xv[i * 4 + k] * w[o * 4 + k];
      want.push(s);
    }
    near(l.forward(x).toArray(), want, 1e-5);
    const nb = new om.nn.Linear(4, 3, { bias: false });
    assert.equal(nb.bias, null);
    assert.deepEqual(nb.parameters().length, 1);
  }));

  test('Module: parameters, buffers, state dict, train/eval, zeroGrad, dispose', () => om.tidy(() => {
    class Block extends om.nn.Module {
      constructor() {
        super();
        this.lin = new om.nn.Linear(2, 2);
        this.registerBuffer('mask', om.ones([2]));
      }
    }
    class Net extends om.nn.Module {
      constructor() {
        super();
        this.blocks = [new Block(), new Block()];
        this.head = new om.nn.Linear(2, 1);
        this.parent = null;
      }
    }
    const net = new Net();
    net.blocks[0].parent = net; // a cycle is not followed
    assert.deepEqual(net.namedParameters().map((e) => e[0]),
      ['blocks.0.lin.weight', 'blocks.0.lin.bias', 'blocks.1.lin.weight', 'blocks.1.lin.bias', 'head.weight', 'head.bias']);
    assert.deepEqual(net.namedBuffers().map((e) => e[0]), ['blocks.0.mask', 'blocks.1.mask']);
    assert.deepEqual(Object.keys(net.stateDict()), ['blocks.0.mask', 'blocks.0.lin.weight', 'blocks.0.lin.bias', // a module's own buffer first, as PyTorch
      'blocks.1.mask', 'blocks.1.lin.weight', 'blocks.1.lin.bias', 'head.weight', 'head.bias']);
    assert.equal(net.parameters().length, 6);
    assert.equal(net.eval(), net);
    assert.ok(net.namedModules().every(([, m]) => m.training === false));
    net.train();
    assert.equal(net.blocks[1].lin.training, true);
    net.head.forward(om.ones([1, 2])).sum().backward();
    assert.ok(net.head.weight.grad !== null);
    net.zeroGrad();
    assert.equal(net.head.weight.grad, null);
    assert.throws(() => net.forward(), (e) => e instanceof om.OmError && /forward: Net does not implement forward/.test(e.message));
    net.dispose();
    assert.ok(net.parameters().every((p) => p.isDisposed) && net.blocks[0].mask.isDisposed);
    net.dispose();
  }));
});
