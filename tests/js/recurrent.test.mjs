// om.nn.LSTM / om.nn.GRU: PyTorch's parameter names, order and init; outputs against a plain-JS
// reference of PyTorch's equations (layers, directions, initial states, batchFirst); gradients;
// bad input as OmError; and every variant traced and run in onnxruntime-web, including LSTM and
// GRU classifiers with a symbolic batch and sequence length run at other sizes.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { near, vals, memoryHooks, withTraced } from './helpers.mjs';
import { checkModelFile, disposeModelFile } from '../../examples/lib/workflow.mjs';
import * as lstm from '../../examples/zoo/lstm.mjs';

// The sequence classifier is the zoo's (examples/zoo/lstm.mjs), here for both LSTM and GRU.
const { Classifier } = lstm;
after(() => disposeModelFile(checkModelFile(lstm)));

memoryHooks();

const sig = (v) => 1 / (1 + Math.exp(-v));

/**
 * PyTorch's equations on plain arrays for one layer-direction: x [T][N][I] (nested arrays),
 * p = { wih, whh, bih, bhh } flat row-major (biases may be null), h0 / c0 [N][H] or null.
 * Returns { y [T][N][H], h [N][H], c [N][H] }.
 */
function refLayer(kind, x, p, H, h0, c0, reverse) {
  const T = x.length, N = x[0].length, I = x[0][0].length, G = kind === 'LSTM' ? 4 : 3;
  const dot = (w, cols, row, v) => v.reduce((s, vk, k) => s + w[row * cols + k] * vk, 0);
  let h = h0 ?? Array.from({ length: N }, () => new Array(H).fill(0));
  let c = c0 ?? Array.from({ length: N }, () => new Array(H).fill(0));
  const y = new Array(T);
  for (let s = 0; s < T; s++) {
    const t = reverse ? T - 1 - s : s;
    const nh = [], nc = [];
    for (let n = 0; n < N; n++) {
      const a = (g, j) => dot(p.wih, I, g * H + j, x[t][n]) + (p.bih ? p.bih[g * H + j] : 0);
      const b = (g, j) => dot(p.whh, H, g * H + j, h[n]) + (p.bhh ? p.bhh[g * H + j] : 0);
      nh.push([]);
      nc.push([]);
      for (let j = 0; j < H; j++) {
        if (G === 4) {
          const i = sig(a(0, j) + b(0, j)), f = sig(a(1, j) + b(1, j)), g = Math.tanh(a(2, j) + b(2, j)), o = sig(a(3, j) + b(3, j));
          nc[n].push(f * c[n][j] + i * g);
          nh[n].push(o * Math.tanh(nc[n][j]));
        } else {
          const r = sig(a(0, j) + b(0, j)), z = sig(a(1, j) + b(1, j)), nn = Math.tanh(a(2, j) + r * b(2, j));
          nh[n].push((1 - z) * nn + z * h[n][j]);
        }
      }
    }
    h = nh;
    if (G === 4) c = nc;
    y[t] = h;
  }
  return { y, h, c };
}

/** A [d0][d1]...-nested array of a tensor's values. */
function nested(t) {
  const v = vals(t), shape = t.shape;
  const build = (d, off) => (d === shape.length ? v[off] : Array.from({ length: shape[d] }, (_, i) =>
    build(d + 1, off + i * shape.slice(d + 1).reduce((a, b) => a * b, 1))));
  return build(0, 0);
}

/** The reference of a whole module (x [T][N][I] time-major), returning { out [T][N][D*H], h [L*D][N][H], c }. */
function refModule(rnn, x, h0, c0) {
  const D = rnn.bidirectional ? 2 : 1, H = rnn.hiddenSize, sd = rnn.stateDict();
  const hs = [], cs = [];
  let inp = x;
  for (let l = 0; l < rnn.numLayers; l++) {
    const ys = [];
    for (let d = 0; d < D; d++) {
      const sfx = `_l${l}${d ? '_reverse' : ''}`;
      const get = (n) => (sd[n + sfx] ? vals(sd[n + sfx]) : null);
      const p = { wih: get('weight_ih'), whh: get('weight_hh'), bih: get('bias_ih'), bhh: get('bias_hh') };
      const r = refLayer(rnn instanceof om.nn.LSTM ? 'LSTM' : 'GRU', inp, p, H, h0?.[l * D + d] ?? null, c0?.[l * D + d] ?? null, d === 1);
      ys.push(r.y);
      hs.push(r.h);
      cs.push(r.c);
    }
    inp = ys[0].map((step, t) => step.map((row, n) => ys.flatMap((yd) => yd[t][n])));
  }
  return { out: inp, h: hs, c: cs };
}

const flat = (a) => (Array.isArray(a) ? a.flatMap(flat) : [a]);

describe('nn.LSTM and nn.GRU modules', () => {
  test("PyTorch's parameter names, shapes, order and init bound", () => om.tidy(() => {
    om.manualSeed(3);
    const lstm = new om.nn.LSTM(3, 5, { numLayers: 2, bidirectional: true });
    const sd = lstm.stateDict();
    assert.deepEqual(Object.keys(sd), [0, 1].flatMap((l) => ['', '_reverse'].flatMap((s) =>
      ['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh'].map((n) => `${n}_l${l}${s}`))));
    assert.deepEqual(sd.weight_ih_l0.shape, [20, 3]);
    assert.deepEqual(sd.weight_ih_l1_reverse.shape, [20, 10]);
    assert.deepEqual(sd.weight_hh_l1.shape, [20, 5]);
    assert.deepEqual(sd.bias_hh_l0_reverse.shape, [20]);
    const all = lstm.parameters().flatMap(vals);
    assert.ok(all.every((v) => Math.abs(v) <= 1 / Math.sqrt(5)), 'uniform in ±1/sqrt(hiddenSize)');
    assert.ok(Math.max(...all) > 0.35 && Math.min(...all) < -0.35, 'spread over the whole range');
    assert.ok(lstm.parameters().every((p) => p.requiresGrad));
    const gru = new om.nn.GRU(4, 6, { bias: false });
    assert.deepEqual(Object.keys(gru.stateDict()), ['weight_ih_l0', 'weight_hh_l0']);
    assert.deepEqual(gru.weight_ih_l0.shape, [18, 4]);
    lstm.dispose();
    gru.dispose();
  }));

  test('bad options and inputs are OmErrors naming the problem', () => om.tidy(() => {
    const bad = (fn, kind, re) => assert.throws(fn, (e) => e instanceof om.OmError && e.kind === kind && re.test(e.message), String(re));
    bad(() => new om.nn.LSTM(0, 4), 'InvalidArgument', /LSTM: inputSize and hiddenSize must be positive/);
    bad(() => new om.nn.RNNBase('LSTM', 3, 4), 'InvalidArgument', /^RNNBase: the base class of LSTM and GRU; construct om.nn.LSTM or om.nn.GRU$/);
    assert.ok(new om.nn.GRU(3, 4) instanceof om.nn.RNNBase);
    bad(() => new om.nn.GRU(3, 4, { dropout: 0.5 }), 'InvalidArgument', /GRU: dropout between layers is not supported \(only 0\)/);
    bad(() => new om.nn.GRU(3, 4, { numLayers: 0 }), 'InvalidArgument', /numLayers must be at least 1/);
    bad(() => new om.nn.LSTM(3, 4, { batchFirst: 1 }), 'InvalidArgument', /batchFirst must be a boolean/);
    bad(() => new om.nn.LSTM(3, 4, { projSize: 2 }), 'InvalidArgument', /unknown option projSize/);
    const lstm = new om.nn.LSTM(3, 4);
    const gru = new om.nn.GRU(3, 4, { numLayers: 2 });
    bad(() => lstm.forward(om.zeros([5, 2, 4])), 'ShapeMismatch', /nn\.LSTM: x \[5,2,4\] has input size 4, w_ih \[16,3\] expects 3/);
    bad(() => lstm.forward(om.zeros([5, 2, 3]), [om.zeros([1, 2, 4])]), 'InvalidArgument', /LSTM: hx must be \[h0, c0\]/);
    bad(() => lstm.forward(om.zeros([5, 2, 3]), [om.zeros([1, 2, 4]), om.zeros([1, 3, 4])]), 'ShapeMismatch', /lstm: c0 is \[1,3,4\], expected \[1,2,4\]/);
    bad(() => gru.forward(om.zeros([5, 2, 3]), om.zeros([1, 2, 4])), 'ShapeMismatch', /gru: h0 is \[1,2,4\], expected \[2,2,4\]/);
    bad(() => gru.forward(om.zeros([5, 2, 3]), 'h0'), 'InvalidArgument', /GRU: hx must be a Tensor/);
    bad(() => gru.forward([1, 2]), 'InvalidArgument', /GRU/);
    bad(() => gru.forward(om.zeros([0, 2, 3])), 'InvalidArgument', /sequence length must be at least 1/);
    const x = om.zeros([2, 1, 3]);
    x.dispose();
    assert.throws(() => lstm.forward(x), (e) => e instanceof om.OmError && /disposed/i.test(e.message));
    lstm.dispose();
    bad(() => lstm.forward(om.zeros([2, 1, 3])), 'Disposed', /weight_ih_l0/);
    gru.dispose();
  }));

  for (const kind of ['LSTM', 'GRU']) {
    for (const opts of [{}, { numLayers: 2, bidirectional: true }, { batchFirst: true, bias: false }, { numLayers: 2, batchFirst: true }]) {
      for (const withState of [false, true]) {
        test(`${kind} ${JSON.stringify(opts)}${withState ? ' with initial state' : ''} matches the reference`, () => om.tidy(() => {
          om.manualSeed(7);
          const rnn = new om.nn[kind](3, 4, opts);
          const L = opts.numLayers ?? 1, D = opts.bidirectional ? 2 : 1, T = 5, N = 2;
          const xt = om.randn([T, N, 3], { seed: 1 }); // time-major, as the reference takes it
          const x = opts.batchFirst ? xt.transpose(0, 1).contiguous() : xt;
          const h0 = withState ? om.randn([L * D, N, 4], { seed: 2 }) : null;
          const c0 = withState ? om.randn([L * D, N, 4], { seed: 3 }) : null;
          const [out, st] = rnn.forward(x, withState ? (kind === 'LSTM' ? [h0, c0] : h0) : undefined);
          const ref = refModule(rnn, nested(xt), h0 && nested(h0), c0 && nested(c0));
          const outT = opts.batchFirst ? out.transpose(0, 1) : out;
          assert.deepEqual(out.shape, opts.batchFirst ? [N, T, D * 4] : [T, N, D * 4]);
          near(vals(outT), flat(ref.out), 1e-5, 'output');
          const [hN, cN] = kind === 'LSTM' ? st : [st, null];
          assert.deepEqual(hN.shape, [L * D, N, 4]);
          near(vals(hN), flat(ref.h), 1e-5, 'h_n');
          if (cN) near(vals(cN), flat(ref.c), 1e-5, 'c_n');
          rnn.dispose();
        }));
      }
    }
  }

  test('unbatched input [T, I] and gradients reach every parameter, the input and the initial state', () => om.tidy(() => {
    om.manualSeed(4);
    const gru = new om.nn.GRU(3, 4, { bidirectional: true });
    const x = om.randn([5, 3], { seed: 1 });
    const [out, h] = gru.forward(x);
    assert.deepEqual(out.shape, [5, 8]);
    assert.deepEqual(h.shape, [2, 4]);
    const [outB] = gru.forward(x.unsqueeze(1));
    near(vals(out), vals(outB), 0, 'unbatched = a batch of one');
    const lstm = new om.nn.LSTM(3, 4, { numLayers: 2 });
    const xs = om.randn([4, 2, 3], { seed: 2 });
    xs.requiresGrad = true;
    const h0 = om.zeros([2, 2, 4]);
    h0.requiresGrad = true;
    const [o, [hN, cN]] = lstm.forward(xs, [h0, om.zeros([2, 2, 4])]);
    o.sum().add(hN.mul(2).sum()).add(cN.sum()).backward();
    for (const [name, p] of lstm.namedParameters()) {
      assert.deepEqual(p.grad.shape, p.shape, name);
      assert.ok(vals(p.grad).some((v) => v !== 0), `${name} has a nonzero gradient`);
    }
    assert.deepEqual(xs.grad.shape, [4, 2, 3]);
    assert.ok(vals(h0.grad).some((v) => v !== 0));
    gru.dispose();
    lstm.dispose();
  }));
});

// At batch 1 a step's h w_hhᵀ (and a Linear's x Wᵀ) is one row against the weight's rows, summed
// 16 columns at a time (matmul.c's one_row_cols); a batch of 5 sums the same products in tiles
// of 4 rows. Both sum each element in one order, so batch 1 must have the bits of that row in
// the batch: hidden and output sizes around the 4-, 8- and 16-column edges, 1 included, a sum
// past one block of 256 (in 300), both directions.
describe('batch 1 has the bits of the same row in a batch', () => {
  const sameBits = (a, b, what) => {
    const [u, v] = [a, b].map((t) => new Uint32Array(Float32Array.from(vals(t)).buffer));
    assert.equal(u.length, v.length, `${what}: sizes`);
    const k = u.findIndex((x, i) => x !== v[i]);
    assert.equal(k, -1, `${what}: element ${k} differs (${vals(a)[k]} vs ${vals(b)[k]})`);
  };
  for (const kind of ['LSTM', 'GRU'])
    test(`${kind}, bidirectional, hidden 1, 4, 5, 16, 17, 40`, () => om.tidy(() => {
      for (const H of [1, 4, 5, 16, 17, 40]) {
        om.manualSeed(H);
        const rnn = new om.nn[kind](3, H, { batchFirst: true, bidirectional: true }).eval();
        const x = om.randn([5, 4, 3], { seed: H }), row = x.slice(0, 2, 3);
        const [all, sAll] = om.noGrad(() => rnn.forward(x)), [one, sOne] = om.noGrad(() => rnn.forward(row));
        sameBits(one, all.slice(0, 2, 3), `${kind} H=${H} output`);
        [sAll].flat().forEach((s, k) => sameBits([sOne].flat()[k], s.slice(1, 2, 3), `${kind} H=${H} final state ${k}`)); // LSTM: [h_n, c_n]
        // and it is PyTorch's equations (the reference in doubles), not only consistent
        const ref = refModule(rnn, nested(row.transpose(0, 1)));
        near(vals(one.transpose(0, 1)), flat(ref.out), 1e-5, `${kind} H=${H} against the reference`);
        rnn.dispose();
      }
    }));
  test('linear on one row, out 1, 15, 16, 33, 70, in 7 and 300', () => om.tidy(() => {
    for (const inF of [7, 300])
      for (const outF of [1, 15, 16, 33, 70]) {
        const w = om.randn([outF, inF], { seed: outF }), b = om.randn([outF], { seed: 2 }), x = om.randn([5, inF], { seed: inF });
        const one = om.nn.functional.linear(x.slice(0, 3, 4), w, b), all = om.nn.functional.linear(x, w, b);
        sameBits(one, all.slice(0, 3, 4), `linear ${inF} -> ${outF}`);
        const xr = vals(x).slice(3 * inF, 4 * inF), wv = vals(w), bv = vals(b);
        near(vals(one), bv.map((bj, j) => xr.reduce((s, xk, k) => s + xk * wv[j * inF + k], bj)), 1e-4, `linear ${inF} -> ${outF} against sums`);
      }
  }));
});

describe('training', () => {
  for (const kind of ['LSTM', 'GRU']) {
    test(`an ${kind} regressor learns the running mean of its input (SGD), memory flat`, () => {
      om.manualSeed(9);
      const rnn = new om.nn[kind](2, 8, { batchFirst: true });
      const fc = new om.nn.Linear(8, 1);
      const x = om.randn([16, 6, 2], { seed: 1 });
      const y = om.tidy(() => x.select(2, 0).mean(1, true)); // [16, 1]
      const params = [...rnn.parameters(), ...fc.parameters()];
      const step = () => om.tidy(() => {
        const pred = fc.forward(rnn.forward(x)[0].select(1, -1));
        const loss = pred.sub(y).pow(2).mean();
        loss.backward();
        om.noGrad(() => { for (const p of params) p.copy_(p.sub(p.grad.mul(0.5))); });
        for (const p of params) p.zeroGrad();
        return loss.item();
      });
      const first = step();
      const mem = om.memory();
      let last = first;
      for (let i = 0; i < 60; i++) last = step();
      assert.deepEqual(om.memory(), mem);
      assert.ok(last < first / 4, `loss fell to a quarter: ${first} -> ${last}`);
      rnn.dispose();
      fc.dispose();
      om.dispose([x, y]);
    });
  }
});

// ---- traced through onnxruntime-web ----------------------------------------------------------

/** Wraps an RNN so om.trace names its parameters (rnn.weight_ih_l0, ...) and states can be inputs. */
class Wrap extends om.nn.Module {
  constructor(rnn) {
    super();
    this.rnn = rnn;
  }

  forward(x, h0, c0) {
    const lstm = this.rnn instanceof om.nn.LSTM;
    const [out, st] = this.rnn.forward(x, h0 ? (lstm ? [h0, c0] : h0) : undefined);
    return lstm ? [out, ...st] : [out, st];
  }
}

describe('traced LSTM / GRU vs eager in onnxruntime-web', () => {
  for (const kind of ['LSTM', 'GRU']) {
    const variants = [
      [{}, false], [{}, true], [{ numLayers: 2 }, false], [{ bidirectional: true }, true],
      [{ numLayers: 2, bidirectional: true, batchFirst: true }, true], [{ bias: false, batchFirst: true }, false],
    ];
    for (const [opts, withState] of variants) {
      test(`${kind} ${JSON.stringify(opts)}${withState ? ' with initial state' : ''}`, () => withTraced((keep, trace) => {
        om.manualSeed(5);
        const m = new Wrap(new om.nn[kind](3, 4, opts));
        const L = opts.numLayers ?? 1, D = opts.bidirectional ? 2 : 1;
        const inputs = { x: om.randn(opts.batchFirst ? [2, 5, 3] : [5, 2, 3], { seed: 1 }) };
        if (withState) {
          inputs.h0 = om.randn([L * D, 2, 4], { seed: 2 });
          if (kind === 'LSTM') inputs.c0 = om.randn([L * D, 2, 4], { seed: 3 });
        }
        const tm = trace(m, inputs);
        const g = tm.graph();
        const inits = g.initializers.map((i) => i.name);
        assert.ok(inits.includes('rnn.weight_ih_l0') && inits.includes('rnn.weight_hh_l0'), inits.join(', '));
        if (opts.bidirectional) assert.ok(inits.includes('rnn.weight_ih_l0_reverse'));
        assert.equal(g.nodes.filter((n) => n.opType === kind).length, L * D);
        m.dispose();
      }));
    }

    test(`${kind} bidirectional on an unbatched input [T, I] with a symbolic sequence length`, () => withTraced((keep) => {
      om.manualSeed(8);
      const m = new Wrap(new om.nn[kind](3, 4, { bidirectional: true }));
      const x = om.randn([5, 3], { seed: 1 });
      const tm = om.trace(m, { x: [x, ['seq', null]] });
      keep(tm, { x }, m.forward(x), undefined, m);
      const other = om.randn([8, 3], { seed: 2 });
      keep(tm, { x: other }, m.forward(other));
      assert.deepEqual(tm.outputs[0].shape, ['seq', 8]);
      m.dispose();
    }));

    test(`${kind} classifier with a symbolic batch and sequence length, also at three other sizes`, () => withTraced((keep) => {
      om.manualSeed(6);
      const net = new Classifier(kind).eval();
      const x = om.randn([3, 5, 6], { seed: 1 });
      const tm = om.trace(net, { x: [x, ['batch', 'seq', null]] }, { outputNames: ['logits'] });
      keep(tm, { x }, net.forward(x), undefined, net);
      assert.deepEqual(tm.inputs, [{ name: 'x', dtype: 'float32', shape: ['batch', 'seq', 6] }]);
      assert.deepEqual(tm.outputs, [{ name: 'logits', dtype: 'float32', shape: ['batch', 3] }]);
      for (const [n, t, seed] of [[2, 7, 2], [9, 4, 3]]) {
        const other = om.randn([n, t, 6], { seed });
        keep(tm, { x: other }, net.forward(other));
      }
      net.dispose();
    }));
  }
});
