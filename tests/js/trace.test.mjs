// Tracing to ONNX, one test per rule of the spec (../shared/spec/tracing.md, docs/tracing.md):
// what is recorded, constants and their names, pruning, outputs, aliases, symbolic axes, values
// after finish, determinism (and the golden bytes shared with the C test), the JS wrapper.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as om from 'onemodel';
import { near, vals, memoryHooks } from './helpers.mjs';
import { runOnnx } from '../../tools/trace_oracle.mjs';

memoryHooks();

/** Runs fn inside tidy and disposes the traced models it returns (in an array or alone). */
function withTraced(fn) {
  const made = [];
  try {
    return om.tidy(() => fn((tm) => { made.push(tm); return tm; }));
  } finally {
    for (const tm of made) tm.dispose();
  }
}

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

describe('recording', () => {
  test('every op with a traced input writes its node; ops on constants only write none', () => withTraced((keep) => {
    const tracer = om.Tracer.begin();
    const x = tracer.input('x', om.randn([2, 3], { seed: 1 }));
    const c = om.ones([3]).mul(2).add(1); // constants only: run eagerly, no node
    assert.equal(om.Tracer.active, true);
    const y = x.add(c).relu().mul(x);
    const tm = keep(tracer.finish({ y }));
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
    keep(tracer.finish({ y }));
  }));
});

describe('constants', () => {
  test('the same weight used twice is one initializer', () => withTraced((keep) => {
    const W = om.randn([3, 3], { seed: 2 });
    const tracer = om.Tracer.begin();
    const x = tracer.input('x', om.randn([2, 3], { seed: 1 }));
    tracer.parameter('w', W);
    const y = x.matmul(W).add(x.matmul(W)).matmul(W);
    const tm = keep(tracer.finish({ y }));
    assert.deepEqual(opTypes(tm), ['MatMul', 'MatMul', 'Add', 'MatMul']);
    assert.deepEqual(tm.graph().initializers, [{ name: 'w', dtype: 'float32', shape: [3, 3] }]);
  }));

  test('a transposed view of a named weight is <name>.view_0 holding the transposed values', async () => {
    const W = om.tensor([[1, 2, 3], [4, 5, 6]]); // [out 2, in 3]
    const eye = om.tensor([[1, 0, 0], [0, 1, 0], [0, 0, 1]]);
    let tm;
    try {
      tm = om.tidy(() => {
        const tracer = om.Tracer.begin();
        const x = tracer.input('x', eye);
        tracer.parameter('fc.weight', W);
        return tracer.finish({ y: x.matmul(W.t()) });
      });
      assert.deepEqual(tm.graph().initializers, [{ name: 'fc.weight.view_0', dtype: 'float32', shape: [3, 2] }]);
      // I @ view = the view's values: W^T
      const out = await runOnnx(tm.toOnnx(), { x: eye });
      assert.deepEqual(out.y.dims, [3, 2]);
      assert.deepEqual(out.y.data, [1, 4, 2, 5, 3, 6]);
    } finally {
      tm?.dispose();
      om.dispose([W, eye]);
    }
  });

  test('a constant keeps the values it had when it was captured', async () => {
    const W = om.tensor([[1, 2], [3, 4]]);
    const ex = om.tensor([[1, 0], [0, 1]]);
    let tm;
    try {
      tm = om.tidy(() => {
        const tracer = om.Tracer.begin();
        const x = tracer.input('x', ex);
        tracer.parameter('w', W);
        return tracer.finish({ y: x.matmul(W) });
      });
      W.fill_(0); // after finish: allowed; the model keeps its copy of the old values
      const out = await runOnnx(tm.toOnnx(), { x: ex });
      assert.deepEqual(out.y.data, [1, 2, 3, 4]);
    } finally {
      tm?.dispose();
      om.dispose([W, ex]);
    }
  });
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
    const tracer = om.Tracer.begin();
    const x = tracer.input('x', om.randn([2, 4], { seed: 1 }));
    tracer.parameter('my.bias', b);
    const tm = keep(tracer.finish({ y: x.add(b).sub(u) }));
    const names = initNames(tm);
    assert.equal(names.length, 2);
    assert.ok(names.includes('my.bias'), `initializers: ${names}`);
    assert.ok(!names.includes('u'), 'an unnamed constant gets a generated name');
  }));

  test('om.trace(module) names parameters and buffers by their state-dict paths', () => withTraced((keep) => {
    om.manualSeed(7);
    const net = new Net();
    assert.deepEqual(Object.keys(net.stateDict()),
      ['fc1.weight', 'fc1.bias', 'layers.0.weight', 'layers.0.bias', 'layers.1.weight', 'scale']);
    const tm = keep(om.trace(net, { x: [om.randn([4, 3], { seed: 1 }), ['batch', null]] }));
    assert.deepEqual(initNames(tm),
      ['fc1.bias', 'fc1.weight', 'layers.0.bias', 'layers.0.weight', 'layers.1.weight', 'scale']);
    const gemm = tm.graph().nodes.find((n) => n.opType === 'Gemm'); // Linear reads its weight as stored
    assert.deepEqual(gemm.inputs, ['x', 'fc1.weight', 'fc1.bias']);
    net.dispose();
  }));

  test('tied weights (one tensor in two fields) are stored once, under the first path', () => withTraced((keep) => {
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
    const tm = keep(om.trace(net, { x: om.randn([3, 4], { seed: 1 }) }));
    const names = initNames(tm);
    assert.deepEqual(names, ['dec.bias', 'enc.bias', 'enc.weight']);
    const gemms = tm.graph().nodes.filter((n) => n.opType === 'Gemm');
    assert.deepEqual(gemms.map((n) => n.inputs[1]), ['enc.weight', 'enc.weight']);
    net.dispose();
  }));
});

describe('pruning', () => {
  test('a branch no output needs leaves no node and no initializer', () => withTraced((keep) => {
    const tracer = om.Tracer.begin();
    const x = tracer.input('x', om.randn([2, 3], { seed: 1 }));
    const unused = x.exp().add(om.ones([3])).sum();
    const y = x.relu();
    const tm = keep(tracer.finish({ y }));
    assert.deepEqual(opTypes(tm), ['Relu']);
    assert.deepEqual(tm.graph().initializers, []);
    assert.equal(unused.shape.length, 0);
  }));
});

describe('outputs', () => {
  test('outputs are renamed to the requested names, in order', () => withTraced((keep) => {
    const tracer = om.Tracer.begin();
    const x = tracer.input('x', om.randn([2, 3], { seed: 1 }));
    const tm = keep(tracer.finish({ second: x.exp(), first: x.relu() }));
    assert.deepEqual(tm.outputs.map((o) => o.name), ['second', 'first']);
    const g = tm.graph();
    const writers = g.nodes.flatMap((n) => n.outputs);
    assert.ok(writers.includes('second') && writers.includes('first'), `node outputs: ${writers}`);
  }));

  test('an output that is an input, or repeated, goes through an Identity', () => withTraced((keep) => {
    const tracer = om.Tracer.begin();
    const x = tracer.input('x', om.randn([2, 3], { seed: 1 }));
    const y = x.relu();
    const tm = keep(tracer.finish({ same: x, a: y, b: y }));
    assert.deepEqual(tm.outputs.map((o) => o.name), ['same', 'a', 'b']);
    const ids = tm.graph().nodes.filter((n) => n.opType === 'Identity');
    assert.equal(ids.length, 2, JSON.stringify(tm.graph().nodes));
    assert.deepEqual(ids.map((n) => n.outputs[0]).sort(), ['b', 'same']);
    assert.deepEqual(ids.find((n) => n.outputs[0] === 'same').inputs, ['x']);
  }));
});

describe('aliases', () => {
  test('reshape to the same shape, contiguous, clone and a full-range slice write no node', () => withTraced((keep) => {
    const tracer = om.Tracer.begin();
    const x = tracer.input('x', om.randn([2, 3], { seed: 1 }));
    const a = x.reshape(2, 3).contiguous().clone().slice(1, 0, Infinity).slice(0);
    const tm = keep(tracer.finish({ y: a.relu() }));
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
    const tm = keep(tracer.finish({ y }));
    assert.deepEqual(tm.graph().nodes, [{ opType: 'Relu', inputs: ['x'], outputs: ['y'] }]);
    d.dispose();
    assert.deepEqual(vals(x), vals(ex), 'the other handle still works after one is disposed');
  }));
});

describe('symbolic axes', () => {
  test('traced.inputs and traced.outputs give symbolic axes by name', () => withTraced((keep) => {
    const W = om.randn([3, 5], { seed: 2 });
    const tm = keep(om.trace((x, s) => ({ y: x.matmul(W), n: s.sum(0) }), {
      x: [om.randn([4, 3], { seed: 1 }), ['batch', null]],
      s: [om.ones([6, 2], { dtype: 'int64' }), ['seq', null]],
    }));
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

describe('values', () => {
  test('reading a traced tensor after finish gives the example run values', () => withTraced((keep) => {
    const ex = om.tensor([[1, -2], [3, -4]]);
    const tracer = om.Tracer.begin();
    const x = tracer.input('x', ex);
    const y = x.mul(2).relu();
    keep(tracer.finish({ y }));
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
  const build = () => om.tidy(() => {
    om.manualSeed(3);
    const net = new om.nn.Linear(4, 3);
    try {
      return om.trace((x) => net.forward(x).relu().sum(-1), { x: [om.randn([5, 4], { seed: 1 }), ['batch', null]] });
    } finally {
      net.dispose();
    }
  });

  test('tracing the same model twice gives identical bytes', () => {
    const a = build();
    const b = build();
    try {
      const x = a.toOnnx();
      const y = b.toOnnx();
      assert.ok(x.length > 100);
      assert.deepEqual(y, x);
    } finally {
      a.dispose();
      b.dispose();
    }
  });

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
    const tm = keep(tracer.finish({ probs: p }));
    const bytes = tm.toOnnx();
    assert.equal(fnv1a64(bytes), GOLDEN_FNV, `${bytes.length} bytes`);
  }));
});

// FNV-1a 64 of the golden model's .onnx; tests/c pins the same value for the native build.
const GOLDEN_FNV = '363730af99cbe4aa';

describe('TracedModel', () => {
  test('toOnnx and saveOnnx write the same bytes; saveOnnx returns the size', () => withTraced((keep) => {
    const W = om.randn([300, 300], { seed: 2 }); // 360 kB: several chunks
    const tm = keep(om.trace((x) => x.matmul(W), { x: [om.randn([2, 300], { seed: 1 }), ['batch', null]] }));
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

  test('saveOnnx to an unwritable path throws OmError and leaves the model usable', () => withTraced((keep) => {
    const tm = keep(om.trace((x) => x.relu(), { x: om.ones([2]) }));
    assert.throws(() => tm.saveOnnx('/nonexistent-dir/m.onnx'),
      (e) => e instanceof om.OmError && /^saveOnnx: cannot open \/nonexistent-dir\/m\.onnx/.test(e.message));
    assert.ok(tm.toOnnx().length > 0);
  }));

  test('dispose is idempotent; use after dispose throws Disposed', () => {
    const tm = om.tidy(() => om.trace((x) => x.relu(), { x: om.ones([2]) }));
    assert.equal(tm.isDisposed, false);
    tm.dispose();
    tm.dispose();
    assert.equal(tm.isDisposed, true);
    for (const [who, f] of [['toOnnx', () => tm.toOnnx()], ['saveOnnx', () => tm.saveOnnx('x.onnx')],
      ['graph', () => tm.graph()], ['inputs', () => tm.inputs], ['outputs', () => tm.outputs]]) {
      assert.throws(f, (e) => e instanceof om.OmError && e.kind === 'Disposed' && e.message.startsWith(`${who}:`), who);
    }
  });
});

describe('om.trace', () => {
  test('output names: a Tensor is "output", an array output_<i>, an object its keys, or outputNames', () => withTraced((keep) => {
    const ex = { x: om.randn([2, 2], { seed: 1 }) };
    const names = (tm) => tm.outputs.map((o) => o.name);
    assert.deepEqual(names(keep(om.trace((x) => x.exp(), ex))), ['output']);
    assert.deepEqual(names(keep(om.trace((x) => [x.exp(), x.relu()], ex))), ['output_0', 'output_1']);
    assert.deepEqual(names(keep(om.trace((x) => ({ b: x.exp(), a: x.relu() }), ex))), ['b', 'a']);
    assert.deepEqual(names(keep(om.trace((x) => [x.exp(), x.relu()], ex, { outputNames: ['e', 'r'] }))), ['e', 'r']);
    assert.deepEqual(names(keep(om.trace({ forward: (x) => x.exp() }, ex, { outputNames: ['e'] }))), ['e']);
  }));

  test('inputs are passed positionally in key order, and every tensor made is freed', () => {
    const a = om.tensor([1, 2]);
    const b = om.tensor([10, 20]);
    const before = om.memory();
    const tm = om.trace((p, q) => p.sub(q).mul(p), { p: a, q: [b, null] });
    try {
      assert.deepEqual(tm.inputs.map((i) => i.name), ['p', 'q']);
      assert.deepEqual(opTypes(tm), ['Sub', 'Mul']);
      assert.equal(om.Tracer.active, false);
      // what stays is held by the model (its initializers), none of the inputs or intermediates
      const held = om.memory().tensors - before.tensors;
      tm.dispose();
      assert.equal(om.memory().tensors, before.tensors, `the model held ${held} tensors`);
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
    assert.deepEqual(Object.keys(net.stateDict()), ['blocks.0.lin.weight', 'blocks.0.lin.bias', 'blocks.0.mask',
      'blocks.1.lin.weight', 'blocks.1.lin.bias', 'blocks.1.mask', 'head.weight', 'head.bias']);
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
