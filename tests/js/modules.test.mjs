// nn.Module's tree and state dict as PyTorch's: buffers (persistent or not), addModule, children,
// modules, apply, the containers (Sequential from named children, ModuleDict, ParameterList,
// ParameterDict) with PyTorch's state-dict keys, and loadStateDict's strict and non-strict reports.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, vals } from './helpers.mjs';

memoryHooks();
const nn = om.nn;

/** A Hugging Face-style rotary embedding: inv_freq is a non-persistent buffer, as HF registers it. */
class Rotary extends nn.Module {
  constructor() {
    super();
    this.proj = new nn.Linear(4, 4);
    this.registerBuffer('inv_freq', om.tensor([1, 0.1]), { persistent: false });
    this.registerBuffer('scale', om.tensor([2]));
  }
}

describe('the state dict\'s order', () => {
  test('PyTorch\'s: a module\'s own parameters, then its own buffers, then its submodules\', whatever order the fields were set in', () => {
    class Block extends nn.Module { // as ConvNeXt's CNBlock: a submodule, then a parameter and a buffer
      constructor() {
        super();
        this.body = new nn.Linear(2, 2);
        this.registerBuffer('index', om.tensor([1n, 0n], { dtype: 'int64' }));
        this.scale = om.ones([2]);
        this.tail = [new nn.Linear(2, 1)];
      }
    }
    const m = new Block();
    try {
      // torch: class B(nn.Module): body = Linear; register_buffer('index'); scale = Parameter; tail = ModuleList
      assert.deepEqual(Object.keys(m.stateDict()), ['scale', 'index', 'body.weight', 'body.bias', 'tail.0.weight', 'tail.0.bias']);
      assert.deepEqual(m.namedParameters().map((e) => e[0]), ['scale', 'body.weight', 'body.bias', 'tail.0.weight', 'tail.0.bias']);
      assert.deepEqual(m.namedBuffers().map((e) => e[0]), ['index']);
    } finally {
      m.dispose();
    }
  });
});

describe('buffers', () => {
  test('a non-persistent buffer is a buffer but not in the state dict; a strict load without it succeeds', () => {
    const m = new Rotary();
    try {
      assert.deepEqual(Object.keys(m.stateDict()), ['scale', 'proj.weight', 'proj.bias'], 'PyTorch\'s order: own buffers before a submodule\'s');
      assert.deepEqual(m.namedBuffers().map((e) => e[0]), ['inv_freq', 'scale']);
      assert.deepEqual(m.buffers().map(vals), [[1, Math.fround(0.1)], [2]]);
      assert.equal(m.parameters().length, 2);
      const sd = { 'proj.weight': om.zeros([4, 4]), 'proj.bias': om.ones([4]), scale: om.tensor([3]) };
      assert.deepEqual(m.loadStateDict(sd), { missingKeys: [], unexpectedKeys: [] });
      assert.deepEqual(vals(m.scale), [3]);
      assert.deepEqual(vals(m.inv_freq), [1, Math.fround(0.1)], 'untouched');
      om.dispose(sd);
      assert.throws(() => m.loadStateDict({ ...m.stateDict(), inv_freq: [1, 2] }),
        { kind: 'InvalidArgument', message: /Unexpected key\(s\) in state_dict: "inv_freq"\. / });
    } finally {
      m.dispose();
    }
    assert.ok(m.inv_freq.isDisposed, 'dispose() frees non-persistent buffers too');
  });

  test('dispose() frees the state a forward stored in plain objects, Maps and arrays (a cache per size), not inside child modules twice', () => {
    class Cached extends nn.Module {
      constructor() {
        super();
        this.proj = new nn.Linear(2, 2);
        this.perSize = {}; // upstream's dict of one index per window (BEiT's relative_position_indices)
        this.byKey = new Map();
        this.history = [];
      }

      forward(x) {
        const n = x.shape[0];
        this.perSize[n] ??= om.arange(0, n).float();
        if (!this.byKey.has(n)) this.byKey.set(n, { ones: om.ones([n, 1]) });
        this.history.push(x.sum());
        return this.proj.forward(x).add(this.perSize[n].reshape(-1, 1)).mul(this.byKey.get(n).ones);
      }
    }
    const before = om.memory().tensors;
    const m = new Cached();
    om.tidy(() => { m.forward(om.ones([3, 2])); m.forward(om.ones([4, 2])); m.forward(om.ones([3, 2])); });
    const state = [...Object.values(m.perSize), ...[...m.byKey.values()].map((v) => v.ones), ...m.history];
    assert.equal(state.length, 7);
    assert.ok(state.every((t) => !t.isDisposed), 'the forward scope and the tidy keep what the module stored');
    const outer = new nn.Sequential(m);
    outer.dispose();
    assert.ok(state.every((t) => t.isDisposed) && m.proj.weight.isDisposed, 'the parent\'s dispose() frees its child\'s stored state');
    m.dispose(); // idempotent
    assert.equal(om.memory().tensors, before, 'nothing is left');
  });

  test('registerBuffer and addModule check their arguments', () => {
    const m = new nn.Module();
    m.registerBuffer('empty', null);
    assert.equal(m.empty, null);
    assert.throws(() => m.registerBuffer('a.b', null), { kind: 'InvalidArgument', message: "registerBuffer: name must be a non-empty string without '.', got a string (\"a.b\")" });
    assert.throws(() => m.registerBuffer('forward', null), { kind: 'InvalidArgument', message: "registerBuffer: 'forward' is already a member of Module" });
    assert.throws(() => m.registerBuffer('training', null), { kind: 'InvalidArgument', message: "registerBuffer: 'training' is already a member of Module" });
    assert.throws(() => m.registerBuffer('x', [1]), { kind: 'InvalidArgument', message: /registerBuffer: tensor must be a Tensor or null/ });
    assert.throws(() => m.registerBuffer('x', null, { persistent: 'no' }), { kind: 'InvalidArgument', message: /persistent must be a boolean/ });
    assert.throws(() => m.registerBuffer('x', null, { persist: false }), { kind: 'InvalidArgument', message: /unknown option 'persist'/ });
    assert.throws(() => m.addModule('fc', 3), { kind: 'InvalidArgument', message: /addModule: module must be an om.nn.Module or null, got 3/ });
    assert.throws(() => m.addModule('apply', new nn.ReLU()), { kind: 'InvalidArgument', message: "addModule: 'apply' is already a member of Module" });
    assert.equal(m.addModule('act', null), null);
  });
});

describe('the module tree', () => {
  test('namedChildren, children, namedModules, modules, apply', () => {
    class Net extends nn.Module {
      constructor() {
        super();
        this.body = new nn.Sequential({ fc: new nn.Linear(2, 2), act: new nn.ReLU() });
        this.heads = [new nn.Linear(2, 1), new nn.Linear(2, 1)];
        this.shared = this.body; // the same module twice: listed once
      }
    }
    const net = new Net();
    try {
      // PyTorch's named_children skips a module it has listed (tests/js/audit-state-dict.test.mjs checks its fixture)
      assert.deepEqual(net.namedChildren().map((e) => e[0]), ['body', 'heads.0', 'heads.1']);
      assert.equal(net.children().length, 3);
      assert.deepEqual(net.namedModules().map((e) => e[0]), ['', 'body', 'body.fc', 'body.act', 'heads.0', 'heads.1']);
      assert.equal(net.modules()[2], net.body.fc);
      const order = [];
      assert.equal(net.apply((m) => order.push(m.constructor.name)), net);
      assert.deepEqual(order, ['Linear', 'ReLU', 'Sequential', 'Linear', 'Linear', 'Net'], 'PyTorch\'s order: each after its children; shared once');
      net.apply((m) => { m.training = false; });
      assert.ok(net.modules().every((m) => !m.training));
      // a module two parents hold: once under each, as PyTorch's apply (namedModules lists it once)
      const tied = new nn.Module();
      tied.a = new nn.Sequential(net.heads[0]);
      tied.b = new nn.Sequential(net.heads[0], new nn.ReLU());
      tied.c = net.heads[0];
      tied.up = tied; // a cycle: not entered again
      const seen = [];
      tied.apply((m) => seen.push(m.constructor.name));
      assert.deepEqual(seen, ['Linear', 'Sequential', 'Linear', 'ReLU', 'Sequential', 'Linear', 'Module']);
      assert.deepEqual(tied.namedModules().map((e) => e[0]), ['', 'a', 'a.0', 'b', 'b.1']);
      assert.throws(() => net.apply(3), { kind: 'InvalidArgument', message: 'apply: fn must be a function, got 3' });
    } finally {
      net.dispose();
    }
  });
});

describe('containers', () => {
  test('Sequential from named children (an object or a Map): the names are the keys; append and addModule extend it', () => {
    const a = new nn.Sequential({ conv0: new nn.Conv2d(1, 2, 3), relu0: new nn.ReLU() });
    const b = new nn.Sequential(new Map([['fc', new nn.Linear(2, 3)], ['out', new nn.Linear(3, 1)]]));
    try {
      assert.deepEqual(Object.keys(a.stateDict()), ['conv0.weight', 'conv0.bias']);
      assert.equal(a.conv0, a.at(0));
      a.addModule('pool0', new nn.MaxPool2d(2));
      // append names it by the count before it ('3'), which a JS object would list before conv0: it would run first
      const flat = new nn.Flatten();
      assert.throws(() => a.append(flat), { kind: 'InvalidArgument',
        message: "Sequential.append: its name '3' would be listed before 'conv0' (integer names come first in a JS object), so it would not run last; use addModule(name, module) with a name that is not an integer" });
      a.addModule('flat', flat);
      assert.deepEqual(a.namedChildren().map((e) => e[0]), ['conv0', 'relu0', 'pool0', 'flat']);
      assert.equal(a.length, 4);
      assert.deepEqual(om.tidy(() => a.forward(om.ones([2, 1, 6, 6])).shape), [2, 8], 'conv, relu, pool, flatten: in the order added');
      // pairs whose order a JS object would change are refused (an OrderedDict's [('fc', ..), ('0', ..)])
      assert.throws(() => new nn.Sequential(new Map([['fc', new nn.ReLU()], ['1', new nn.ReLU()], ['0', new nn.ReLU()]])), { kind: 'InvalidArgument',
        message: /^Sequential: name '0' would come before 'fc': its fields list integer names first, in increasing order, so the modules would not keep the order given/ });
      assert.throws(() => new nn.ModuleDict([['10', new nn.ReLU()], ['2', new nn.ReLU()]]), { kind: 'InvalidArgument', message: /^ModuleDict: name '2' would come before '10'/ });
      const ordered = new nn.Sequential([['0', new nn.ReLU()], ['2', new nn.Tanh()], ['fc', new nn.Identity()]]);
      assert.deepEqual(ordered.namedChildren().map((e) => e[0]), ['0', '2', 'fc'], 'integer names first, increasing: kept as given');
      const list = new nn.ModuleList([new nn.ReLU()]).append(new nn.Tanh());
      assert.deepEqual(list.namedChildren().map((e) => e[0]), ['0', '1'], 'a ModuleList appends as before');
      // extend: PyTorch's, from any iterable (another container too); a bad item adds none
      list.extend([new nn.Linear(1, 1), new nn.ReLU()]).extend(new nn.ModuleList([new nn.Identity()]));
      assert.deepEqual(list.namedChildren().map((e) => [e[0], e[1].constructor.name]), [['0', 'ReLU'], ['1', 'Tanh'], ['2', 'Linear'], ['3', 'ReLU'], ['4', 'Identity']]);
      assert.deepEqual(Object.keys(list.stateDict()), ['2.weight', '2.bias']);
      assert.throws(() => list.extend([new nn.ReLU(), 3]), { kind: 'InvalidArgument', message: 'ModuleList.extend: item 1 must be an om.nn.Module, got 3' });
      assert.throws(() => list.extend(new nn.ReLU()), { kind: 'InvalidArgument', message: /^ModuleList\.extend: should be called with an iterable, but got / });
      assert.equal(list.length, 5, 'nothing added by a failed extend');
      const params = new nn.ParameterList([]).extend([om.zeros([2])]);
      assert.deepEqual(Object.keys(params.stateDict()), ['0']);
      params.dispose();
      list.dispose();
      assert.deepEqual(Object.keys(b.stateDict()), ['fc.weight', 'fc.bias', 'out.weight', 'out.bias']);
      assert.deepEqual(om.tidy(() => b.forward(om.ones([5, 2])).shape), [5, 1]);
      assert.throws(() => new nn.Sequential({ fc: 3 }), { kind: 'InvalidArgument', message: 'Sequential: item fc must be an om.nn.Module, got 3' });
      assert.throws(() => new nn.Sequential(new Map([['a.b', new nn.ReLU()]])), { kind: 'InvalidArgument', message: /Sequential: name must be a non-empty string without '\.'/ });
      assert.throws(() => new nn.Sequential(5), { kind: 'InvalidArgument', message: /Sequential: expected an object, a Map or an array of \[name, value\] pairs, got 5/ });
    } finally {
      a.dispose();
      b.dispose();
    }
  });

  test('ModuleDict: get, set, has, pop, keys, values, entries, iteration; keys as PyTorch\'s', () => {
    const d = new nn.ModuleDict({ enc: new nn.Linear(2, 2) });
    try {
      d.set('dec', new nn.Linear(2, 3));
      assert.deepEqual([...d], ['enc', 'dec']);
      assert.deepEqual(d.keys(), ['enc', 'dec']);
      assert.equal(d.length, 2);
      assert.ok(d.has('dec') && !d.has('x'));
      assert.equal(d.get('enc'), d.enc);
      assert.deepEqual(Object.keys(d.stateDict()), ['enc.weight', 'enc.bias', 'dec.weight', 'dec.bias']);
      const dec = d.pop('dec');
      assert.deepEqual(d.values(), [d.enc]);
      assert.equal(d.pop('dec'), undefined);
      dec.dispose();
      assert.deepEqual(d.entries().map((e) => e[0]), ['enc']);
      assert.throws(() => d.set('get', new nn.ReLU()), { kind: 'InvalidArgument', message: "ModuleDict.set: 'get' is already a member of ModuleDict" });
      assert.throws(() => new nn.ModuleDict([['a']]), { kind: 'InvalidArgument', message: /ModuleDict: entry 0 must be a \[name, value\] pair/ });
    } finally {
      d.dispose();
    }
  });

  test('ParameterList and ParameterDict: parameters under PyTorch\'s keys, made to require grad', () => {
    class Net extends nn.Module {
      constructor() {
        super();
        this.ws = new nn.ParameterList([om.zeros([2]), om.ones([3])]);
        this.ps = new nn.ParameterDict({ alpha: om.full([1], 0.5) });
      }
    }
    const net = new Net();
    try {
      net.ws.append(om.zeros([1]));
      net.ps.set('beta', om.zeros([2]));
      assert.deepEqual(Object.keys(net.stateDict()), ['ws.0', 'ws.1', 'ws.2', 'ps.alpha', 'ps.beta']);
      assert.equal(net.parameters().length, 5);
      assert.ok(net.parameters().every((p) => p.requiresGrad));
      assert.deepEqual([...net.ws].map((t) => t.shape), [[2], [3], [1]]);
      assert.deepEqual(vals(net.ws.at(-2)), [1, 1, 1]);
      assert.deepEqual([...net.ps], ['alpha', 'beta']);
      assert.throws(() => net.ws.append(new nn.ReLU()), { kind: 'InvalidArgument', message: /ParameterList.append: item 3 must be a Tensor/ });
      assert.throws(() => net.ws.at(3), { kind: 'InvalidArgument', message: 'ParameterList.at: index 3 is out of range for 3 parameters' });
    } finally {
      net.dispose();
    }
  });
});

describe('loadStateDict reports', () => {
  test('strict: an InvalidArgument that lists both kinds of keys (also on the error); non-strict: returned', () => {
    const net = new nn.Sequential({ fc: new nn.Linear(2, 2) });
    try {
      const sd = { 'fc.weight': [[1, 2], [3, 4]], extra: [1], 'other.bias': [0] };
      let err;
      try { net.loadStateDict(sd); } catch (e) { err = e; }
      assert.ok(err instanceof om.OmError);
      assert.equal(err.kind, 'InvalidArgument');
      assert.equal(err.message, 'loadStateDict: Error(s) in loading state_dict for Sequential:\n\tMissing key(s) in state_dict: "fc.bias". \n\tUnexpected key(s) in state_dict: "extra", "other.bias". ');
      assert.deepEqual([err.missingKeys, err.unexpectedKeys], [['fc.bias'], ['extra', 'other.bias']]);
      assert.deepEqual(net.loadStateDict(sd, { strict: false }), { missingKeys: ['fc.bias'], unexpectedKeys: ['extra', 'other.bias'] });
      assert.deepEqual(vals(net.fc.weight), [1, 2, 3, 4]);
    } finally {
      net.dispose();
    }
  });
});
