// Containers edited as PyTorch's (ModuleList / Sequential insert, pop, slices; ModuleDict and
// ParameterDict update, clear, items): a script of edits replayed against PyTorch's state-dict
// keys after each step (tests/js/fixtures/pytorch/ops/containers.json, written by
// tools/pytorch_containers.py, which lists the same script); slices share their items and run;
// every refusal with its kind and message. And PyTorch's size readers: x.size(), x.size(-1),
// x.dim(), x.numel(), x.shape.at(-1), eagerly, in errors, and read while tracing as x.shape[d].
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, vals, throwsKind, withTraced } from './helpers.mjs';

memoryHooks();

const { nn } = om;
const fx = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/containers.json', import.meta.url), 'utf8'));
const L = (i, o) => new nn.Linear(i, o);
const z = (n) => om.zeros([n]);
/** [key, shape] of every state-dict entry, in order (PyTorch's keys() with each value's shape). */
const keys = (m) => Object.entries(m.stateDict()).map(([k, t]) => [k, t.shape]);

describe('containers edited as PyTorch', () => {
  test('a script of insert, pop, slices, update and clear gives PyTorch\'s keys after every step', () => {
    const got = [];
    const step = (name, m) => got.push([name, keys(m)]);
    const made = []; // every module and tensor made, disposed at the end (pops and clears hand them back)
    const own = (x) => { made.push(x); return x; };
    try {
      const list = own(new nn.ModuleList([L(1, 2), new nn.ReLU(), L(2, 3), new nn.Tanh(), L(3, 4)]));
      list.insert(1, own(L(4, 5)));
      step('list.insert(1)', list);
      list.insert(6, own(L(5, 6)));
      step('list.insert(6)', list);
      own(list.pop(0));
      step('list.pop(0)', list);
      own(list.pop(-2));
      step('list.pop(-2)', list);
      own(list.pop(1)); // PyTorch's del list[1]
      step('list.del(1)', list);
      own(list.at(-1));
      list.set(-1, own(L(9, 8))); // PyTorch's list[-1] = Linear(9, 8)
      step('list[-1] = m', list);
      step('list[1:4]', list.slice(1, 4));
      step('list[::-2]', list.slice(null, null, -2));
      step('list[-2:]', list.slice(-2));
      step('list[10:]', list.slice(10));
      list.extend([own(L(6, 7))]);
      step('list.extend', list);

      const seq = own(new nn.Sequential(L(1, 2), new nn.ReLU(), L(2, 3)));
      seq.append(own(L(3, 4)));
      step('seq.append', seq);
      seq.insert(0, own(L(7, 1)));
      step('seq.insert(0)', seq);
      seq.insert(-1, own(L(8, 9)));
      step('seq.insert(-1)', seq);
      own(seq.pop(2));
      step('seq.pop(2)', seq);
      step('seq[1:3]', seq.slice(1, 3));
      step('seq[::2]', seq.slice(undefined, undefined, 2));

      const named = own(new nn.Sequential(new Map([['conv', L(1, 2)], ['act', new nn.ReLU()], ['fc', L(2, 3)]])));
      step('named[1:]', named.slice(1));
      own(named.pop(0));
      step('named.pop(0)', named);

      const d = own(new nn.ModuleDict({ a: L(1, 2), b: L(2, 3) }));
      own(d.get('a')); // replaced by the update below: the dict no longer holds it
      d.update([['c', own(L(3, 4))], ['a', own(L(4, 5))]]);
      step('dict.update(pairs)', d);
      d.update(new Map([['d', own(L(5, 6))]]));
      step('dict.update(ordered)', d);
      own(d.pop('b'));
      step('dict.pop(b)', d);
      d.values().forEach(own);
      d.clear();
      step('dict.clear', d);

      const plist = own(new nn.ParameterList([z(1), z(2), z(3)]));
      step('plist[1:]', plist.slice(1));
      step('plist[::-1]', plist.slice(null, null, -1));
      plist.append(z(4));
      step('plist.append', plist);

      const pdict = own(new nn.ParameterDict({ b: z(2), a: z(1) }));
      step('pdict', pdict);
      pdict.update({ z: z(3), c: z(4) });
      step('pdict.update(dict)', pdict);
      pdict.update(new Map([['y', z(5)], ['x', z(6)]]));
      step('pdict.update(ordered)', pdict);
      own(pdict.pop('c'));
      step('pdict.pop(c)', pdict);
      pdict.values().forEach(own);
      pdict.clear();
      step('pdict.clear', pdict);

      assert.deepEqual(got.map((s) => s[0]), fx.steps.map((s) => s[0]), 'the script\'s steps are the fixture\'s');
      for (const [k, [name, want]] of fx.steps.entries()) assert.deepEqual(got[k][1], want, `${name}: PyTorch's keys and shapes`);
    } finally {
      for (const x of made) x.dispose();
    }
  });

  test('a slice shares its items (not copies) and runs them; a dict\'s update and clear keep the items usable', () => om.tidy(() => {
    const seq = new nn.Sequential(L(2, 3), new nn.ReLU(), L(3, 4), new nn.Tanh());
    try {
      const head = seq.slice(0, 2), tail = seq.slice(2);
      assert.equal(head.at(0), seq.at(0), 'the same module');
      assert.equal(tail.at(-1), seq.at(3));
      assert.ok(head instanceof nn.Sequential && tail instanceof nn.Sequential);
      const x = om.randn([5, 2], { seed: 1 });
      assert.deepEqual(vals(tail.forward(head.forward(x))), vals(seq.forward(x)), 'the two halves make the whole');
      // a step of the slice's parameter is a step of the container's: they are one tensor
      const list = new nn.ModuleList([...seq]);
      assert.equal(list.slice(-2, -1).at(0).weight, seq.at(2).weight);
      assert.deepEqual(list.slice().namedChildren().map((e) => e[0]), ['0', '1', '2', '3']);
      assert.equal(list.slice(3, 1).length, 0, 'an empty slice');
      assert.deepEqual([...list.slice(-100, 100, 3)], [list.at(0), list.at(3)], 'clamped bounds');
    } finally {
      seq.dispose();
    }
  }));
});

describe('container refusals: kinds and messages', () => {
  test('indices, steps and items', () => {
    const list = new nn.ModuleList([new nn.ReLU(), new nn.Tanh(), new nn.Identity()]);
    const seq = new nn.Sequential({ conv: L(1, 1), act: new nn.ReLU() });
    const params = new nn.ParameterList([z(1)]);
    const dict = new nn.ModuleDict({ a: new nn.ReLU() });
    try {
      throwsKind(() => list.pop(3), 'InvalidArgument', /^ModuleList\.pop: index 3 is out of range for 3 modules$/);
      throwsKind(() => list.pop(-4), 'InvalidArgument', /^ModuleList\.pop: index -4 is out of range for 3 modules$/);
      throwsKind(() => list.pop(1.5), 'InvalidArgument', /^ModuleList\.pop: index must be an integer, got 1\.5$/);
      throwsKind(() => list.insert(4, new nn.ReLU()), 'InvalidArgument', /^ModuleList\.insert: index 4 is out of range for 3 modules$/);
      throwsKind(() => list.insert(-4, new nn.ReLU()), 'InvalidArgument', /^ModuleList\.insert: index -4 is out of range for 3 modules$/);
      throwsKind(() => list.insert(0, 3), 'InvalidArgument', /^ModuleList\.insert: item must be an om\.nn\.Module, got 3$/);
      throwsKind(() => list.at(3), 'InvalidArgument', /^ModuleList\.at: index 3 is out of range for 3 modules$/);
      throwsKind(() => list.set(-4, new nn.ReLU()), 'InvalidArgument', /^ModuleList\.set: index -4 is out of range for 3 modules$/);
      throwsKind(() => list.set(0, z(1)), 'InvalidArgument', /^ModuleList\.set: item 0 must be an om\.nn\.Module, got /);
      throwsKind(() => list.slice(0, 2, 0), 'InvalidArgument', /^ModuleList\.slice: slice step cannot be zero$/);
      throwsKind(() => list.slice('1'), 'InvalidArgument', /^ModuleList\.slice: start must be an integer or omitted, got /);
      throwsKind(() => list.slice(0, 1.5), 'InvalidArgument', /^ModuleList\.slice: stop must be an integer or omitted, got 1\.5$/);
      assert.equal(list.length, 3, 'nothing changed by a refused call');
      throwsKind(() => params.pop(1), 'InvalidArgument', /^ParameterList\.pop: index 1 is out of range for 1 parameters$/);
      throwsKind(() => params.insert(0, new nn.ReLU()), 'InvalidArgument', /^ParameterList\.insert: item must be a Tensor, got /);
      throwsKind(() => seq.insert(1, new nn.Tanh()), 'InvalidArgument',
        /^Sequential\.insert: the items are named \('conv'\), not numbered '0', '1', \.\.\.: insert moves items by their numbers/);
      const numbered = new nn.Sequential(new nn.ReLU(), new nn.Tanh(), new nn.Identity());
      throwsKind(() => numbered.slice(null, null, -1), 'InvalidArgument', /^Sequential: name '0' would come before '2'/);
      assert.equal(numbered.slice(null, null, 2).length, 2);
      throwsKind(() => dict.update(5), 'InvalidArgument', /^ModuleDict\.update: expected an object, a Map or an array of \[name, value\] pairs, got 5$/);
      throwsKind(() => dict.update([['b', new nn.ReLU()], ['c', 3]]), 'InvalidArgument', /^ModuleDict\.update: item c must be an om\.nn\.Module, got 3$/);
      throwsKind(() => dict.update([['b']]), 'InvalidArgument', /^ModuleDict\.update: entry 0 must be a \[name, value\] pair/);
      throwsKind(() => dict.update({ 'x.y': new nn.ReLU() }), 'InvalidArgument', /^ModuleDict\.update: name must be a non-empty string without '\.'/);
      assert.deepEqual(dict.keys(), ['a'], 'a refused update sets none');
      throwsKind(() => new nn.ParameterDict().update({ p: new nn.ReLU() }), 'InvalidArgument', /^ParameterDict\.update: item p must be a Tensor, got /);
    } finally {
      for (const m of [list, seq, params, dict]) m.dispose();
    }
  });
});

describe('PyTorch\'s size readers', () => {
  test('size(), size(dim), dim(), numel(), shape.at(-1)', () => om.tidy(() => {
    const x = om.zeros([2, 3, 4]);
    assert.deepEqual(x.size(), [2, 3, 4]);
    assert.deepEqual([x.size(0), x.size(-1), x.size(-3), x.shape.at(-1), x.shape.at(-2)], [2, 4, 2, 4, 3]);
    assert.equal(x.dim(), 3);
    assert.equal(x.numel(), 24);
    const s = x.size();
    s[0] = 7;
    assert.deepEqual(x.size(), [2, 3, 4], 'a fresh array each time');
    const scalar = om.tensor(5);
    assert.deepEqual([scalar.size(), scalar.dim(), scalar.numel()], [[], 0, 1]);
    assert.equal(om.zeros([0, 3]).numel(), 0);
    throwsKind(() => x.size(3), 'IndexOutOfRange', /^size: dim 3 is out of range for 3 dims \(valid: -3 to 2\)$/);
    throwsKind(() => x.size(-4), 'IndexOutOfRange', /^size: dim -4 is out of range for 3 dims \(valid: -3 to 2\)$/);
    throwsKind(() => scalar.size(0), 'IndexOutOfRange', /^size: dim 0 is out of range for a 0-d tensor \(it has no dims\)$/);
    throwsKind(() => x.size(1.5), 'InvalidArgument', /^size: dim must be an integer, got 1\.5$/);
    // the old element-count getter's uses fail loudly, not as NaN
    throwsKind(() => x.size * 2, 'InvalidArgument', /^size: x\.size is a method, as PyTorch's: x\.size\(\) is the shape, x\.size\(dim\) one size, x\.numel\(\) the number of elements$/);
    throwsKind(() => `${x.size}`, 'InvalidArgument', /x\.size is a method/);
    const gone = om.zeros([2]);
    gone.dispose();
    throwsKind(() => gone.size(), 'Disposed', /^size: the tensor was disposed$/);
    throwsKind(() => gone.numel(), 'Disposed', /^numel: the tensor was disposed$/);
  }));

  test('traced with symbolic axes, sizes read by size(), size(-1) and shape.at(-1) are symbolic as shape[d]', () => withTraced((keep, trace) => {
    // x [batch, seq, 4] -> [batch, seq * 4] -> [batch * seq, 4], each size read another way; the
    // oracle runs the graph in onnxruntime-web and the Session at other batch and seq sizes
    const f = (x) => {
      const [b] = x.size();
      const y = x.reshape(b, x.size(1) * x.size(-1)).relu();
      return y.reshape(x.dim() === 3 ? -1 : 1, x.shape.at(-1)).mul(x.numel());
    };
    const axes = [om.Dim('batch', { max: 9 }), om.Dim('seq', { max: 11 }), null]; // small maxima: the oracle's other sizes stay cheap
    const tm = trace(f, { x: [om.randn([2, 3, 4], { seed: 2 }), axes] });
    assert.deepEqual(tm.outputs[0].shape.length, 2);
  }));
});
