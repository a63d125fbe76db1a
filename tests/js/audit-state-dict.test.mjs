// An audit of om.nn's state dicts against PyTorch's (tests/js/fixtures/pytorch/ops/audit.json,
// written by tools/pytorch_audit.py): for each module configuration a port writes (bias, affine,
// track_running_stats and elementwise_affine off; bidirectional, stacked and bias-free RNNs;
// MultiheadAttention without bias and with kdim/vdim; pre-norm Transformer layers; Embedding with
// padding_idx; grouped convolutions; named containers) the keys in PyTorch's order, their shapes
// and dtypes. Options PyTorch has and the library does not (proj_size, add_bias_kv) are refused
// by name, never ignored. Then loadStateDict's errors for missing, unexpected and mis-shaped keys,
// in PyTorch's words.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, withTraced } from './helpers.mjs';

memoryHooks();
const fx = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/audit.json', import.meta.url), 'utf8'));
const nn = om.nn;

/** tools/pytorch_audit.py's Rot: Hugging Face's rotary state (inv_freq not persistent). */
class Rot extends nn.Module {
  constructor() {
    super();
    this.registerBuffer('inv_freq', om.ones([2]), { persistent: false });
    this.registerBuffer('pos', om.zeros([3]));
    this.scale = om.ones([1]);
  }
}

/** tools/pytorch_audit.py's Net2: containers of every kind, a module under two names, non-persistent state. */
class Net2 extends nn.Module {
  constructor() {
    super();
    this.fc = new nn.Linear(3, 2);
    this.blocks = new nn.ModuleList([new nn.Linear(2, 2), new nn.BatchNorm1d(2)]);
    this.rot = new Rot();
    this.seq = new nn.Sequential({ conv: new nn.Conv1d(2, 2, 1), act: new nn.ReLU() });
    this.heads = new nn.ModuleDict({ b: new nn.Linear(2, 1), a: new nn.Linear(2, 1) });
    this.shared_a = new nn.Linear(1, 1);
    this.shared_b = this.shared_a;
    this.plist = new nn.ParameterList([om.zeros([2])]);
    this.pdict = new nn.ParameterDict({ w: om.zeros([1]) });
  }
}

/** The JS construction of each PyTorch module of the fixture, as a port writes it. */
const MODULES = {
  'Linear(3,4)': () => new nn.Linear(3, 4),
  'Linear(3,4,bias=False)': () => new nn.Linear(3, 4, { bias: false }),
  'Conv1d(2,4,3,bias=False)': () => new nn.Conv1d(2, 4, 3, { bias: false }),
  'Conv2d(4,6,3,groups=2,bias=False)': () => new nn.Conv2d(4, 6, 3, { groups: 2, bias: false }),
  'ConvTranspose2d(4,6,3,groups=2)': () => new nn.ConvTranspose2d(4, 6, 3, { groups: 2 }),
  'BatchNorm1d(5)': () => new nn.BatchNorm1d(5),
  'BatchNorm2d(5,affine=False)': () => new nn.BatchNorm2d(5, { affine: false }),
  'BatchNorm2d(5,track_running_stats=False)': () => new nn.BatchNorm2d(5, { trackRunningStats: false }),
  'BatchNorm2d(5,affine=False,track_running_stats=False)': () => new nn.BatchNorm2d(5, { affine: false, trackRunningStats: false }),
  'LayerNorm([3,4])': () => new nn.LayerNorm([3, 4]),
  'LayerNorm(4,elementwise_affine=False)': () => new nn.LayerNorm(4, { elementwiseAffine: false }),
  'GroupNorm(2,6,affine=False)': () => new nn.GroupNorm(2, 6, { affine: false }),
  'InstanceNorm2d(3,affine=True)': () => new nn.InstanceNorm2d(3, { affine: true }),
  'InstanceNorm1d(3)': () => new nn.InstanceNorm1d(3),
  'Embedding(7,3,padding_idx=2)': () => new nn.Embedding(7, 3, { paddingIdx: 2 }),
  'LSTM(3,5,num_layers=2,bidirectional=True)': () => new nn.LSTM(3, 5, { numLayers: 2, bidirectional: true }),
  'LSTM(3,5,bias=False,batch_first=True)': () => new nn.LSTM(3, 5, { bias: false, batchFirst: true }),
  'LSTM(3,5,proj_size=2)': () => new nn.LSTM(3, 5, { projSize: 2 }),
  'GRU(3,4,num_layers=3)': () => new nn.GRU(3, 4, { numLayers: 3 }),
  'GRU(3,4,bidirectional=True,bias=False)': () => new nn.GRU(3, 4, { bidirectional: true, bias: false }),
  'MultiheadAttention(8,2)': () => new nn.MultiheadAttention(8, 2),
  'MultiheadAttention(8,2,bias=False)': () => new nn.MultiheadAttention(8, 2, { bias: false }),
  'MultiheadAttention(8,2,kdim=3,vdim=5)': () => new nn.MultiheadAttention(8, 2, { kdim: 3, vdim: 5 }),
  'MultiheadAttention(8,2,add_bias_kv=True)': () => new nn.MultiheadAttention(8, 2, { addBiasKV: true }),
  'TransformerEncoderLayer(8,2,16)': () => new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16 }),
  'TransformerEncoderLayer(8,2,16,norm_first=True,batch_first=True)': () => new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16, normFirst: true, batchFirst: true }),
  'PReLU(3)': () => new nn.PReLU(3),
  'Sequential(Linear,ReLU,BatchNorm1d)': () => new nn.Sequential(new nn.Linear(3, 4), new nn.ReLU(), new nn.BatchNorm1d(4)),
  'ModuleDict(a=Linear,b=Conv1d)': () => new nn.ModuleDict({ b: new nn.Conv1d(2, 2, 1), a: new nn.Linear(2, 2) }),
  'ParameterList(2)': () => new nn.ParameterList([om.zeros([2]), om.zeros([1, 3])]),
  'ParameterDict(b,a)': () => new nn.ParameterDict({ b: om.zeros([2]), a: om.zeros([1, 3]) }),
  'Sequential(OrderedDict(conv,act,norm))': () => new nn.Sequential({ conv: new nn.Conv2d(3, 4, 1), act: new nn.ReLU(), norm: new nn.BatchNorm2d(4) }),
  'Sequential(OrderedDict(denseblock1=Sequential(OrderedDict(denselayer1,denselayer2)),norm5))': () => new nn.Sequential(new Map([
    ['denseblock1', new nn.Sequential(new Map([['denselayer1', new nn.Conv2d(2, 2, 1)], ['denselayer2', new nn.Conv2d(2, 2, 1)]]))],
    ['norm5', new nn.BatchNorm2d(2)]])),
  'ModuleDict(stages=ModuleList,params=ParameterList)': () => new nn.ModuleDict({
    stages: new nn.ModuleList([new nn.Linear(2, 2), new nn.LayerNorm(2)]), params: new nn.ParameterList([om.zeros([3])]) }),
  Net2: () => new Net2(),
  'Conv2dNormActivation(3,8,3)': () => new nn.Conv2dNormActivation(3, 8, 3),
  'Conv2dNormActivation(3,8,3,norm_layer=None)': () => new nn.Conv2dNormActivation(3, 8, 3, { normLayer: null }),
  'Conv2dNormActivation(3,8,3,bias=True)': () => new nn.Conv2dNormActivation(3, 8, 3, { bias: true }),
  'Conv2dNormActivation(3,8,1,norm_layer=LayerNorm2d,activation_layer=None)': () => new nn.Conv2dNormActivation(3, 8, 1, { normLayer: nn.LayerNorm2d, activationLayer: null }),
  'SqueezeExcitation(8,4)': () => new nn.SqueezeExcitation(8, 4),
  'StochasticDepth(0.2,row)': () => new nn.StochasticDepth(0.2, 'row'),
  'Permute([0,2,3,1])': () => new nn.Permute([0, 2, 3, 1]),
  'MLP(6,[10,5])': () => new nn.MLP(6, [10, 5]),
  'MLP(6,[10,5],norm_layer=LayerNorm,bias=False,dropout=0.1)': () => new nn.MLP(6, [10, 5], { normLayer: nn.LayerNorm, bias: false, dropout: 0.1 }),
  'MLP(6,[4],norm_layer=BatchNorm1d)': () => new nn.MLP(6, [4], { normLayer: nn.BatchNorm1d }),
  'LayerNorm2d(6)': () => new nn.LayerNorm2d(6),
};

/** The options the library refuses (PyTorch has them), with the option's name in the message. */
const REFUSED = {
  'LSTM(3,5,proj_size=2)': /projSize/,
  'MultiheadAttention(8,2,add_bias_kv=True)': /addBiasKV/,
};

describe("state-dict audit: every module configuration's keys, shapes and dtypes, as PyTorch 1.13", () => {
  for (const c of fx.modules) {
    test(c.name, () => {
      assert.ok(c.name in MODULES, `no JS construction of ${c.name}`);
      if (c.name in REFUSED) {
        assert.throws(MODULES[c.name], (e) => e instanceof om.OmError && e.kind === 'InvalidArgument' && REFUSED[c.name].test(e.message));
        return;
      }
      const m = MODULES[c.name]();
      try {
        const sd = m.stateDict();
        assert.deepEqual(Object.entries(sd).map(([k, t]) => [k, t.shape, t.dtype]), c.keys);
        // and PyTorch's state dict (its shapes, other values) loads strictly
        const loaded = om.tidy(() => {
          const state = Object.fromEntries(c.keys.map(([k, shape, dtype]) => [k, om.full(shape, dtype === 'int64' ? 3n : 0.5, { dtype })]));
          return m.loadStateDict(state);
        });
        assert.deepEqual(loaded, { missingKeys: [], unexpectedKeys: [] });
      } finally {
        m.dispose();
      }
    });
  }
  test('every fixture module has a JS construction and the reverse', () => {
    assert.deepEqual(Object.keys(MODULES).sort(), fx.modules.map((c) => c.name).sort());
  });
});

/** PyTorch's Net of the fixture's load messages: fc = Linear(3, 2), bn = BatchNorm1d(2). */
class Net extends nn.Module {
  constructor() {
    super();
    this.fc = new nn.Linear(3, 2);
    this.bn = new nn.BatchNorm1d(2);
  }
}

describe("loadStateDict(sd, { strict: false })'s missing and unexpected keys, as PyTorch's", () => {
  // PyTorch's rule: a key is unexpected where the module its prefix names has no child and no
  // parameter or persistent buffer of the key's next part ('fc.weight.extra', 'rot' and 'blocks'
  // are not; a given non-persistent buffer, 'blocks.5.weight' past the list's end are), reported by
  // module in load order (a tied module under each name), then in the state dict's order
  test("namedParameters, namedBuffers, namedModules and namedChildren: PyTorch's names, a tied module and its tensors once", () => {
    const want = fx.load_messages.net2_walks;
    const net = new Net2();
    try {
      const names = (list) => list.map((e) => e[0]);
      assert.deepEqual(names(net.namedParameters()), want.named_parameters);
      assert.deepEqual(names(net.namedBuffers()), want.named_buffers);
      assert.deepEqual(names(net.namedModules()), want.named_modules);
      assert.deepEqual(names(net.namedChildren()), want.named_children);
      assert.equal(net.children().length, want.named_children.length);
    } finally {
      net.dispose();
    }
  });
  for (const name of ['net2_odd', 'net2_nonpersistent']) {
    test(name, () => om.tidy(() => {
      const want = fx.load_messages[name];
      const net = new Net2();
      try {
        const own = net.stateDict();
        const sd = Object.fromEntries(want.keys.map((k) => [k, own[k] ?? om.zeros([1])]));
        const r = net.loadStateDict(sd, { strict: false });
        assert.deepEqual(r, { missingKeys: want.missing_keys, unexpectedKeys: want.unexpected_keys });
        assert.throws(() => net.loadStateDict(sd), (e) => e.kind === 'InvalidArgument'
          && assert.deepEqual([e.missingKeys, e.unexpectedKeys], [want.missing_keys, want.unexpected_keys]) === undefined);
      } finally {
        net.dispose();
      }
    }));
  }
});

describe("loadStateDict's errors in PyTorch's words", () => {
  const z = (...shape) => om.zeros(shape);
  const full = () => ({
    'fc.weight': z(2, 3), 'fc.bias': z(2), 'bn.weight': z(2), 'bn.bias': z(2), 'bn.running_mean': z(2), 'bn.running_var': z(2),
    'bn.num_batches_tracked': om.tensor(0n),
  });
  const without = (sd, ...keys) => Object.fromEntries(Object.entries(sd).filter(([k]) => !keys.includes(k)));
  const CASES = {
    missing: () => without(full(), 'fc.bias', 'bn.running_var'),
    unexpected: () => ({ ...full(), 'fc.scale': z(2), 'head.weight': z(1) }),
    both: () => ({ ...without(full(), 'fc.bias', 'bn.running_var'), 'fc.scale': z(2) }),
    shape: () => ({ ...full(), 'fc.weight': z(3, 2) }),
    shape_and_missing: () => without({ ...full(), 'fc.weight': z(3, 2) }, 'bn.weight'),
  };
  /** PyTorch's message without its "Error(s) in loading state_dict for Net:" head and torch.Size. */
  const words = (m) => m.split('\n').slice(1).map((l) => l.trim().replace(/torch\.Size\((\[[^\]]*\])\)/g, '$1'));
  for (const [name, make] of Object.entries(CASES)) {
    test(name, () => om.tidy(() => {
      const net = new Net();
      try {
        assert.throws(() => net.loadStateDict(make()), (e) => {
          assert.ok(e instanceof om.OmError, String(e));
          assert.equal(e.kind, name.startsWith('shape') ? 'ShapeMismatch' : 'InvalidArgument');
          for (const line of words(fx.load_messages[name])) assert.ok(e.message.includes(line), `"${e.message}" lacks "${line}"`);
          return true;
        });
        // nothing was loaded: the weights are still the initial ones
        assert.ok(net.fc.weight.abs().sum().item() > 0);
      } finally {
        net.dispose();
      }
    }));
  }
  test('strict: false reports the missing and unexpected keys and loads the rest; a shape mismatch still fails', () => om.tidy(() => {
    const net = new Net();
    try {
      const r = net.loadStateDict(CASES.both(), { strict: false });
      const want = fx.load_messages.both_not_strict;
      assert.deepEqual(r, { missingKeys: want.missing_keys, unexpectedKeys: want.unexpected_keys });
      assert.equal(net.fc.weight.abs().sum().item(), 0);
      assert.throws(() => net.loadStateDict(CASES.shape(), { strict: false }), (e) => e.kind === 'ShapeMismatch'
        && e.message.includes(words(fx.load_messages.shape_not_strict)[0]));
    } finally {
      net.dispose();
    }
  }));
});

describe('MultiheadAttention with kdim and vdim: PyTorch\'s state dict loads and gives its outputs', () => {
  const tensorOf = (o) => om.tensor(o.data, { shape: o.shape });
  const close = (t, o, what) => {
    assert.deepEqual(t.shape, o.shape, what);
    const g = [...t.toArray()];
    assert.ok(g.every((v, i) => Math.abs(v - o.data[i]) <= 2e-6), `${what}: expected [${o.data}] got [${g}]`);
  };
  test('cross-attention from 3 and 5 key and value features, eagerly and traced', async () => {
    const fw = fx.mha_kv;
    const m = new nn.MultiheadAttention(4, 2, { kdim: 3, vdim: 5 });
    try {
      om.tidy(() => m.loadStateDict(Object.fromEntries(Object.entries(fw.state).map(([k, o]) => [k, tensorOf(o)]))));
      assert.equal(m.in_proj_weight, null);
      om.tidy(() => {
        const [q, k, v] = fw.inputs.map(tensorOf);
        const [out, w] = m.forward(q, k, v);
        close(out, fw.outputs[0], 'output');
        close(w, fw.outputs[1], 'weights');
      });
      m.eval();
      await withTraced((keep, trace) => {
        const [q, k, v] = fw.inputs.map(tensorOf);
        trace((a, b, c) => m.forward(a, b, c)[0], { q: [q, ['L', null, null]], k: [k, ['S', null, null]], v: [v, ['S', null, null]] });
      });
      assert.throws(() => new nn.MultiheadAttention(4, 2, { kdim: 0 }), (e) => e.kind === 'InvalidArgument' && /kdim and vdim must be positive, got 0 and 4/.test(e.message));
      assert.throws(() => new nn.MultiheadAttention(4, 2, { addZeroAttn: true }), (e) => e.kind === 'InvalidArgument' && /MultiheadAttention: addZeroAttn is not supported/.test(e.message));
      assert.throws(() => new nn.MultiheadAttention(4, 2, { kDim: 3 }), (e) => e.kind === 'InvalidArgument' && /MultiheadAttention: unknown option 'kDim'/.test(e.message));
    } finally {
      m.dispose();
    }
  });
  test('a misspelt option of a module or optimizer is refused, never ignored', () => {
    for (const [make, re] of [
      [() => new nn.BatchNorm2d(3, { track_running_stats: false }), /BatchNorm2d: unknown option 'track_running_stats'/],
      [() => new nn.LayerNorm(3, { elementwise_affine: false }), /LayerNorm: unknown option 'elementwise_affine'/],
      [() => new nn.GroupNorm(1, 3, { Affine: false }), /GroupNorm: unknown option 'Affine'/],
      [() => new nn.Linear(3, 3, { bias: false, device: 'cpu' }), /Linear: unknown option 'device'/],
    ]) assert.throws(make, (e) => e instanceof om.OmError && e.kind === 'InvalidArgument' && re.test(e.message), String(re));
    const w = om.zeros([2]);
    w.requiresGrad = true;
    try {
      assert.throws(() => new om.optim.Adam([w], { weight_decay: 0.1 }), (e) => e.kind === 'InvalidArgument' && /Adam: unknown option 'weight_decay'/.test(e.message));
      assert.throws(() => new om.optim.SGD([w], { lr: 0.1, Momentum: 0.9 }), (e) => e.kind === 'InvalidArgument' && /SGD: unknown option 'Momentum'/.test(e.message));
    } finally {
      w.dispose();
    }
  });
});
