// Traced vs eager through onnxruntime-web (examples/lib/oracle.mjs; its command tools/trace_oracle.mjs):
// models built from every op family, a symbolic batch run at other sizes, every row of the op
// table on its sample call and on its empty variants, the oracle command itself, and a slice of
// tools/ort_sweep.mjs.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as om from 'onemodel';
// Internals, for the op-table test only: the same module instances 'onemodel' loads.
import { M, marshal, readU32, readF64, lastError, callOp, applied } from '../../js/runtime.js';
import { wrap, handle } from '../../js/tensor.js';
import { jsName } from '../../js/errors.js';
import { memoryHooks } from './helpers.mjs';
import { checkTraced, runOnnx, otherShapes, drawLike, tracedChecks } from '../../examples/lib/oracle.mjs';

await om.ready(); // before the hooks: the op-table tests below are made from C's op list
memoryHooks();

/**
 * Traces model on inputs (om.trace form), runs it eagerly on the same examples, and checks the
 * .onnx against eager in ORT; then at three other sizes of every symbol (otherShapes) and at each
 * extra input set (name -> Tensor, other sizes of the symbolic axes) against eager on those.
 * Frees everything.
 */
async function oracle(model, inputs, { outputNames, others = [], tol } = {}) {
  const traced = om.trace(model, inputs, outputNames ? { outputNames } : {});
  const run = (xs) => om.tidy(() => (typeof model === 'function' ? model(...xs) : model.forward(...xs)));
  const examples = Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
  const resized = otherShapes(inputs, traced.symbols);
  const checks = tracedChecks(traced, tol ? { tol } : {}); // one Session, one onnxruntime-web session for every size
  try {
    const pending = [examples, ...resized, ...others].map((feeds) => {
      const eager = run(Object.values(feeds));
      try {
        const p = checks.check(feeds, eager);
        p.catch(() => {}); // awaited below, once run() has run it
        return p;
      } finally {
        om.dispose(eager);
      }
    });
    await checks.run();
    const reports = await Promise.all(pending);
    return { reports, graph: traced.graph(), inputs: traced.inputs, outputs: traced.outputs };
  } finally {
    checks.dispose();
    traced.dispose();
    om.dispose(resized.map(Object.values));
  }
}

class MLP extends om.nn.Module {
  constructor() {
    super();
    this.fc1 = new om.nn.Linear(4, 16);
    this.fc2 = new om.nn.Linear(16, 3);
  }

  forward(x) {
    return om.tidy(() => {
      const logits = this.fc2.forward(this.fc1.forward(x).relu());
      const e = logits.sub(logits.amax([-1], true)).exp(); // softmax by hand
      return e.div(e.sum([-1], true));
    });
  }
}

describe('models: traced vs eager in onnxruntime-web', () => {
  test('MLP (nn.Module, Linear, relu, softmax by hand) with a symbolic batch, also at batch 2 and 11', async () => {
    om.manualSeed(1);
    const net = new MLP().eval();
    const x = om.randn([5, 4], { seed: 1 });
    const others = [{ x: om.randn([2, 4], { seed: 2 }) }, { x: om.randn([11, 4], { seed: 3 }) }];
    try {
      const r = await oracle(net, { x: [x, ['batch', null]] }, { outputNames: ['probs'], others });
      assert.deepEqual(r.inputs, [{ name: 'x', dtype: 'float32', shape: ['batch', 4] }]);
      assert.deepEqual(r.outputs, [{ name: 'probs', dtype: 'float32', shape: ['batch', 3] }]);
      assert.deepEqual(r.reports.map((rep) => rep.outputs[0].shape), [[5, 3], [1, 3], [6, 3], [11, 3], [2, 3], [11, 3]]); // example, otherShapes, others
      assert.ok(r.reports.every((rep) => rep.outputs[0].maxError <= 1e-5), JSON.stringify(r.reports));
    } finally {
      net.dispose();
      om.dispose([x, others]);
    }
  });

  test('residual block', async () => {
    om.manualSeed(2);
    const l1 = new om.nn.Linear(6, 6);
    const l2 = new om.nn.Linear(6, 6);
    const x = om.randn([3, 5, 6], { seed: 1 });
    const more = [{ x: om.randn([7, 5, 6], { seed: 4 }) }];
    try {
      await oracle((v) => {
        const h = v.add(l2.forward(l1.forward(v).tanh()));
        return h.mul(h.sigmoid()).sub(h.mean(-1, true)).mul(h.pow(2).mean(-1, true).add(1e-5).rsqrt());
      }, { x: [x, ['batch', null, null]] }, { others: more });
    } finally {
      l1.dispose();
      l2.dispose();
      om.dispose([x, more]);
    }
  });

  test('reductions (sum, mean, amax, amin, max/min with indices, argmax) and broadcasting', async () => {
    const x = om.randn([3, 4, 5], { seed: 1 });
    const b = om.randn([5], { seed: 2 });
    try {
      await oracle((v) => {
        const [mv, mi] = v.max(2);
        const [nv, ni] = v.min(0, true);
        return {
          s: v.sum(1), sall: v.sum(), m: v.mean([0, 2], true), a: v.amax(-1), i: v.amin([0, 1]),
          mv, mi, nv, ni, am: v.argmax(1), mx: v.max(),
          bc: v.sub(v.mean(-1, true)).div(b.abs().add(1)).add(om.ones([4, 1])),
        };
      }, { x: [x, ['batch', null, null]] });
    } finally {
      om.dispose([x, b]);
    }
  });

  test('comparisons, where and casts', async () => {
    const x = om.randn([4, 6], { seed: 1 });
    const y = om.randn([4, 6], { seed: 2 });
    const k = om.tensor([[1n, 2n, 3n]]);
    try {
      await oracle((u, v, n) => {
        const c = u.gt(v);
        return {
          w: om.where(c, u, u.mul(0.1)),
          w2: om.where(u.le(0), 0, v),
          lt: u.lt(0.5), ge: u.ge(v), eq: c.eq(v.gt(u)), ne: u.ne(v),
          cf: c.float().add(u), ci: u.mul(3).long(), cb: u.mul(2).long().bool(),
          cnt: c.long().sum(-1),
          ints: n.mul(n).add(1n).sub(n.neg()).abs().relu().sign(),
          ieq: n.eq(2n), icast: n.float().mul(0.5),
        };
      }, { u: [x, ['batch', null]], v: [y, ['batch', null]], n: k });
    } finally {
      om.dispose([x, y, k]);
    }
  });

  test('views: permute, transpose, slice with a step, select, squeeze/unsqueeze, cat, stack, expand, split, tril/triu', async () => {
    const x = om.randn([2, 3, 4], { seed: 1 });
    try {
      await oracle((v) => {
        const [p0, p1] = v.split(3, 2);
        return {
          perm: v.permute(2, 0, 1),
          tr: v.transpose(0, 2).mul(2),
          step: v.slice(2, 0, Infinity, 2),
          oneStep: v.slice(2, 1, 100, 7).mul(3),       // a step past the end: one element
          wideStep: v.slice(1, 0, Infinity, 4).add(1), // 3 wide, step 4: one element, not the whole axis
          neg: v.slice(1, -2),
          sel: v.select(1, 1),
          sq: v.unsqueeze(1).squeeze(1).unsqueeze(-1).squeeze(),
          cat: om.cat([v, v.mul(2), v.slice(1, 0, 1)], 1),
          stk: om.stack([v, v.exp()], 0),
          exp: v.slice(0, 0, 1).expand(3, 3, 4).add(1),
          re: v.reshape(6, 4).matmul(v.reshape(4, 6)),
          flat: v.flatten(1),
          p0, p1,
          lo: v.tril(),
          hi: v.triu(1),
        };
      }, { x });
    } finally {
      x.dispose();
    }
  });

  test('the graph ORT runs has the initializers the eager weights had (a constant is not re-read)', async () => {
    const W = om.tensor([[1, 2], [3, 4]]);
    const ex = om.tensor([[1, 1]]);
    const tm = om.tidy(() => om.trace((x) => x.matmul(W), { x: ex }));
    const eager = om.tidy(() => ex.matmul(W)); // the eager run with the traced weights
    try {
      W.fill_(0);
      assert.deepEqual(Array.from(eager.toArray()), [4, 6]);
      await checkTraced(tm, { x: ex }, eager);
      const out = await runOnnx(tm.toOnnx(), { x: ex });
      assert.deepEqual(out.output.data, [4, 6]);
    } finally {
      tm.dispose();
      om.dispose([W, ex, eager]);
    }
  });
});

// Reshapes of a symbolic axis (spec section 4): sizes taken from x.shape are matched to the
// symbols by example size, and the same shape is an alias, so these run at other batch sizes.
// (Products of extents, like reshape(-1) of [batch, 2] or a cat along the batch, need the
// symbolic algebra and are refused with SymbolicShape: trace-errors.test.mjs.)
describe('symbolic axes through reshape (spec section 4)', () => {
  const cases = [
    ['flatten(1)', (v) => v.flatten(1)],
    ['reshape(x.shape[0], -1)', (v) => v.reshape(v.shape[0], -1)],
    ['reshape to the same shape', (v) => v.reshape(v.shape).exp()],
    ['expand to sizes read off the shape', (v) => v.sum(2, true).expand(v.shape[0], 3, 4)],
  ];
  for (const [name, fn] of cases) {
    test(name, async () => {
      const x = om.randn([5, 3, 4], { seed: 1 });
      const other = { x: om.randn([7, 3, 4], { seed: 2 }) };
      try {
        await oracle(fn, { x: [x, ['batch', null, null]] }, { others: [other] });
      } finally {
        om.dispose([x, other]);
      }
    });
  }
});

// ---- every op of the op table on its sample call --------------------------------------------

/** The op's sample inputs (C's om__op_sample: the same values as tests/c/test_ops.c). */
function opSample(op) {
  const [p] = marshal(['ptr', 8]);
  const n = M._omw_op_sample(op, p);
  if (n < 0) throw lastError('op_sample');
  return readU32(p, n).map(wrap);
}

/**
 * Empty variant k (>= 1) of the op's sample (C's om__op_sample_variant: the rule of
 * src/ops/sample.c, the same variants tests/c/test_ops.c runs): { inputs, iattrs }, or null past
 * the last variant. ni: the sample's number of integer attributes.
 */
function opSampleVariant(op, k, ni) {
  const [p, pi] = marshal(['ptr', 8], ['i64', 18]);
  const n = M._omw_op_sample_variant(op, k, 0n, p, pi);
  if (n < 0) throw lastError('op_sample');
  if (n === 0) return null;
  const iattrs = Array.from(new BigInt64Array(M.HEAPU8.buffer, pi, ni)); // before wrap reuses the scratch
  return { inputs: readU32(p, n).map(wrap), iattrs };
}

/** The op's sample-call attributes and output count. */
function opTest(op) {
  const [pi, pf, pc] = marshal(['i64', 18], ['f64', 4], ['ptr', 3]);
  assert.equal(M._omw_op_test_attrs(op, pi, pf, pc), 1);
  const [ni, nf, nOut] = readU32(pc, 3);
  return { iattrs: Array.from(new BigInt64Array(M.HEAPU8.buffer, pi, ni)), fattrs: readF64(pf, nf), nOut };
}

/** omw_apply by op index: the op's outputs as Tensors. */
function applyOp(op, name, inputs, { iattrs, fattrs, nOut }) {
  const hs = inputs.map((t, i) => handle(t, name, `input ${i}`));
  const n = callOp(name, op, hs, iattrs, fattrs, nOut);
  return applied.handles.slice(0, n).map(wrap);
}

// Ops that cannot be traced, with the kind and reason their refusal must give (the spec's
// refusals are UnsupportedOperation; nonzero's size is the input's values: DataDependent); an op
// listed here must fail so, every other op must trace and agree with eager.
const LOSS_REFUSAL = ['UnsupportedOperation', /cannot be traced: losses have no ONNX equivalent in the opset used \(20\) and tracing is for inference graphs/];
const REFUSED = new Map([
  ['nll_loss', LOSS_REFUSAL], ['cross_entropy', LOSS_REFUSAL], ['ctc_loss', LOSS_REFUSAL],
  ['dropout', ['UnsupportedOperation', /dropout: cannot be traced: in training mode a random mask would be frozen .*call eval\(\)/]],
  ['nonzero', ['DataDependent', /^nonzero: cannot be traced: the number of true elements, its result's first size, is decided by the input's values/]],
]);
/** Whether e is op name's refusal as REFUSED lists it. */
const refusedAsListed = (name, e) => e instanceof om.TraceError && e.kind === REFUSED.get(name)[0] && REFUSED.get(name)[1].test(e.message);

describe('every op in the op table: traced sample call vs eager, in onnxruntime-web', () => {
  const ops = Array.from({ length: M._omw_op_count() }, (_, i) => [i, M.UTF8ToString(M._omw_op_name(i))]);

  test('the table is read from C and holds the ops these tests rely on', () => {
    const names = ops.map(([, n]) => n);
    for (const n of ['add', 'matmul', 'reshape', 'cat', 'max_dim', 'where', 'cast']) assert.ok(names.includes(n), n);
  });

  for (const [op, name] of ops) {
    test(name, async () => {
      const spec = opTest(op);
      const inputs = opSample(op);
      let eager = [];
      let traced = null;
      try {
        eager = applyOp(op, name, inputs, spec);
        const feeds = Object.fromEntries(inputs.map((t, i) => [`in${i}`, t]));
        const build = () => om.tidy(() => {
          const tracer = om.Tracer.begin();
          try {
            const xs = inputs.map((t, i) => tracer.input(`in${i}`, t));
            const outs = applyOp(op, name, xs, spec);
            return tracer.finish(Object.fromEntries(outs.map((t, j) => [`out${j}`, t])));
          } finally {
            tracer.abort();
          }
        });
        if (REFUSED.has(name)) {
          assert.throws(build, (e) => refusedAsListed(name, e));
          return;
        }
        traced = build();
        assert.equal(traced.outputs.length, spec.nOut);
        const report = await checkTraced(traced, feeds, Object.fromEntries(eager.map((t, j) => [`out${j}`, t])));
        assert.equal(report.outputs.length, spec.nOut);
      } finally {
        traced?.dispose();
        om.dispose([inputs, eager]);
      }
    });
  }
});

// ---- every op of the op table on empty inputs ------------------------------------------------

// A dimension of the table test above: every empty variant of every op's sample (a zero-size
// axis, by the rule of src/ops/sample.c) that eager takes is traced at its fixed shapes and
// agrees in onnxruntime-web: empty results, and the reduced ones (a sum of nothing is 0, a mean
// NaN, a linear layer of 0 input features its bias). Ops the spec refuses are refused on them
// too. Which variants eager may refuse (the shapes do not fit, or PyTorch refuses the emptiness
// itself) is checked by tests/c/test_ops.c; here a refusal must be an OmError naming the op (by
// its JS name: index_select's indexSelect).
describe('every op in the op table on empty inputs: traced vs eager, in onnxruntime-web', () => {
  const ops = Array.from({ length: M._omw_op_count() }, (_, i) => [i, M.UTF8ToString(M._omw_op_name(i))]);

  for (const [op, name] of ops) {
    test(name, async () => {
      const spec = opTest(op);
      let taken = 0;
      for (let k = 1; ; k++) {
        const variant = opSampleVariant(op, k, spec.iattrs.length);
        if (!variant) break;
        const { inputs } = variant;
        const call = { ...spec, iattrs: variant.iattrs };
        const what = `variant ${k} (${inputs.map((t) => `[${t.shape}]`).join(' ')})`;
        let eager = [];
        let traced = null;
        try {
          try {
            eager = applyOp(op, name, inputs, call);
          } catch (e) {
            assert.ok(e instanceof om.OmError && e.message.startsWith(`${jsName(name)}: `), `${what}: ${e}`);
            continue;
          }
          taken++;
          assert.ok(inputs.some((t) => t.shape.includes(0)), what);
          const build = () => om.tidy(() => {
            const tracer = om.Tracer.begin();
            try {
              const xs = inputs.map((t, i) => tracer.input(`in${i}`, t));
              const outs = applyOp(op, name, xs, call);
              return tracer.finish(Object.fromEntries(outs.map((t, j) => [`out${j}`, t])));
            } finally {
              tracer.abort();
            }
          });
          if (REFUSED.has(name)) {
            assert.throws(build, (e) => refusedAsListed(name, e), what);
            continue;
          }
          traced = build();
          const feeds = Object.fromEntries(inputs.map((t, i) => [`in${i}`, t]));
          await assert.doesNotReject(checkTraced(traced, feeds, Object.fromEntries(eager.map((t, j) => [`out${j}`, t]))), what);
        } finally {
          traced?.dispose();
          om.dispose([inputs, eager]);
        }
      }
      assert.ok(taken > 0, `${name} takes none of its empty variants`);
    });
  }

  // The attention op's lowering for every mask and scale kind (eager's scaledDotProductAttention
  // writes only two of them; the Session's fast mode makes the others), with the query and key
  // lengths symbolic: at 1, the example and larger sizes, in onnxruntime-web against eager.
  test('the attention op, every mask and scale kind, symbolic lengths', async () => {
    const byName = Object.fromEntries(ops.map(([i, n]) => [n, i]));
    const ADD = 0n, KEEP = 1n, FILL = 2n, UNSCALED = 0n, MUL = 1n, DIV = 2n;
    const cases = [[null, UNSCALED, []], [null, DIV, ['Div']], [ADD, DIV, ['Div', 'Add']], [KEEP, UNSCALED, ['Greater', 'Where']],
      [FILL, MUL, ['Greater', 'Mul', 'Where']]];
    const inputs = () => ({ q: [om.randn([2, 3, 4], { seed: 1 }), [null, 'L', null]], kt: [om.randn([2, 4, 5], { seed: 2 }), [null, null, 'S']],
      v: [om.randn([2, 5, 3], { seed: 3 }), [null, 'S', null]], m: [om.randn([3, 5], { seed: 4 }), ['L', 'S']] });
    for (const [kind, sk, nodes] of cases) {
      const model = (q, kt, v, m) => {
        const mask = kind === null ? [] : [kind === ADD ? m : m.gt(-0.5)];
        const spec = { iattrs: [kind === null ? 0n : 1n, kind ?? 0n, sk], fattrs: [0.7, -1e4], nOut: 1 };
        return applyOp(byName.attention, 'attention', [q, kt, v, ...mask], spec)[0];
      };
      const ins = inputs();
      try {
        const r = await oracle(model, ins);
        assert.equal(r.reports.length, 4, `kind ${kind}, scale ${sk}`); // the example, L = S = 1, and two larger sizes
        const types = r.graph.nodes.map((n) => n.opType);
        assert.equal(types.filter((t) => t === 'MatMul').length, 2);
        assert.ok(types.includes('Softmax'));
        for (const t of nodes) assert.ok(types.includes(t), `kind ${kind}, scale ${sk}: ${types.join(' ')} lacks ${t}`);
      } finally {
        om.dispose(Object.values(ins).map((v) => v[0]));
      }
    }
  });

  // The zeros written for an all-empty output (om__lower_empty) take a symbolic axis's extent at
  // run time, and so do linear's Expand and the LSTM's zero feature.
  test('with symbolic axes: empty inputs and outputs agree at every size', async () => {
    const F = om.nn.functional;
    const byName = Object.fromEntries(ops.map(([i, n]) => [n, i]));
    const lstm = (x, h0, c0) => { // lstm_layer with an input size of 0: one zero feature in the graph
      const spec = { ...opTest(byName.lstm_layer), iattrs: [0n, 1n] };
      const [y, state] = applyOp(byName.lstm_layer, 'lstm_layer', [x, ...weights, h0, c0], spec);
      return { y, state };
    };
    const weights = [om.randn([12, 0], { seed: 1 }), om.randn([12, 3], { seed: 2 }), om.randn([12], { seed: 3 }), om.randn([12], { seed: 4 })];
    const w = om.randn([5, 0], { seed: 5 }), b = om.randn([5], { seed: 6 });
    const cases = [
      [(v) => F.linear(v.slice(1, 0, 0), om.ones([5, 4]), b), { x: [om.randn([3, 2, 4], { seed: 7 }), ['batch', null, null]] }, ['Shape', 'Concat', 'ConstantOfShape']], // the Slice is not read: pruned
      [(v) => F.linear(v, w, b), { x: [om.randn([3, 4, 0], { seed: 9 }), ['batch', 'seq', null]] }, ['Shape', 'Shape', 'Concat', 'Expand', 'Add']],
      [(v) => F.groupNorm(v, 2), { x: [om.randn([3, 4, 0], { seed: 10 }), ['batch', null, null]] }, ['Shape', 'Concat', 'ConstantOfShape']],
      [(v) => v.mean(2), { x: [om.randn([3, 4, 0], { seed: 11 }), ['batch', 'seq', null]] }, ['ReduceSum', 'Div']],
      [lstm, { x: [om.randn([3, 2, 0], { seed: 12 }), ['seq', 'batch', null]], h0: [om.randn([2, 3], { seed: 13 }), ['batch', null]],
        c0: [om.randn([2, 3], { seed: 14 }), ['batch', null]] }, null],
    ];
    try {
      for (const [fn, inputs, nodes] of cases) {
        const r = await oracle(fn, inputs);
        assert.equal(r.reports.length, 4); // the example and three other sizes of every symbol
        if (nodes) assert.deepEqual(r.graph.nodes.map((n) => n.opType), nodes);
        else assert.ok(r.graph.nodes.some((n) => n.opType === 'LSTM') && r.graph.nodes.some((n) => n.opType === 'Expand'));
      }
    } finally {
      om.dispose([weights, w, b, cases.map(([, inputs]) => Object.values(inputs).map((v) => v[0]))]);
    }
  });
});

// ---- the oracle itself ----------------------------------------------------------------------

describe('tools/trace_oracle.mjs', () => {
  const root = new URL('../../', import.meta.url);

  test('checkTraced throws naming the output when the eager values disagree', async () => {
    const x = om.tensor([[1, 2], [3, 4]]);
    const tm = om.tidy(() => om.trace((v) => ({ y: v.mul(2), z: v.exp() }), { x }));
    const y = om.tensor([[2, 4], [6, 8.001]]);
    const z = om.tidy(() => x.exp());
    const shape = om.tensor([2, 4, 6, 8]);
    const dtype = om.tensor([[2n, 4n], [6n, 8n]]);
    try {
      const y2 = om.tidy(() => x.mul(2));
      const ok = await checkTraced(tm, { x }, { y: y2, z });
      y2.dispose();
      assert.equal(ok.ok, true);
      assert.deepEqual(ok.outputs.map((o) => [o.name, o.dtype, o.shape]), [['y', 'float32', [2, 2]], ['z', 'float32', [2, 2]]]);
      await assert.rejects(checkTraced(tm, { x }, { y, z }), /y: max \|onnx - eager\| = 0\.001 > 8e-5 at element 3/);
      await assert.rejects(checkTraced(tm, { x }, [shape, z]), /y: shape \[2,2\] in ONNX, \[4\] eager/);
      await assert.rejects(checkTraced(tm, { x }, [dtype, z]), /y: dtype float32 in ONNX, int64 eager/);
    } finally {
      tm.dispose();
      om.dispose([x, y, z, shape, dtype]);
    }
  });

  test('checkTraced and runOnnx calls may overlap: the runs are queued, each gets its own outputs', async () => {
    const x = om.randn([2, 3], { seed: 1 });
    const fns = [(v) => v.exp(), (v) => [v.exp(), v.relu()], (v) => ({ b: v.exp(), a: v.relu() }), (v) => v.mul(2).sum(1)];
    const tms = fns.map((f) => om.tidy(() => om.trace(f, { x })));
    const eager = fns.map((f) => om.tidy(() => f(x)));
    try {
      const all = [...tms.map((tm, i) => checkTraced(tm, { x }, eager[i])), runOnnx(tms[3].toOnnx(), { x })];
      const reports = await Promise.all(all);
      assert.deepEqual(reports.slice(0, 4).map((r) => r.outputs.map((o) => o.name)), [['output'], ['output_0', 'output_1'], ['b', 'a'], ['output']]);
      assert.deepEqual(reports[4].output.dims, [2]);
    } finally {
      for (const tm of tms) tm.dispose();
      om.dispose([x, eager]);
    }
  });

  test('tracedChecks: checks of one model at several sizes in one session each give checkTraced\'s report; a wrong one names its output; a session that cannot open fails each', async () => {
    const tm = om.tidy(() => om.trace((v) => ({ y: v.mul(2), s: v.sum(1) }), { x: [om.randn([3, 2], { seed: 1 }), ['batch', null]] }));
    const xs = [3, 1, 7].map((n, i) => om.randn([n, 2], { seed: 2 + i }));
    const eager = xs.map((x) => om.tidy(() => ({ y: x.mul(2), s: x.sum(1) })));
    const off = om.tidy(() => ({ y: xs[1].mul(2).add(0.01), s: xs[1].sum(1) }));
    const oracle = tracedChecks(tm);
    try {
      const checks = [oracle.check({ x: xs[0] }, eager[0]), oracle.check({ x: xs[1] }, off), oracle.check({ x: xs[2] }, eager[2])];
      for (const c of checks) c.catch(() => {}); // settled by run(), awaited below
      await oracle.run();
      const [a, b, c] = await Promise.allSettled(checks);
      const want = await checkTraced(tm, { x: xs[2] }, eager[2]);
      assert.deepEqual(c.value, want, 'the same report as checkTraced');
      assert.deepEqual([a.value.outputs, c.value.outputs].map((o) => o.map((r) => [r.name, r.shape])), [[['y', [3, 2]], ['s', [3]]], [['y', [7, 2]], ['s', [7]]]]);
      assert.equal(b.status, 'rejected');
      assert.match(b.reason.message, /^trace oracle: the \.onnx disagrees with the eager run:\n {2}y: max \|onnx - eager\| = 0\.01 > /);
      assert.match(b.reason.message, /\ntrace oracle: the Session disagrees with the eager run:\n {2}y: max /);
      await oracle.run(); // nothing left to run
    } finally {
      oracle.dispose();
    }
    // a .onnx onnxruntime-web cannot open: every check of the batch fails with ORT's error
    const broken = tracedChecks({ outputs: tm.outputs, session: () => tm.session(), toOnnx: () => new Uint8Array([8, 1, 2]) });
    try {
      const checks = [broken.check({ x: xs[0] }, eager[0]), broken.check({ x: xs[2] }, eager[2])];
      for (const c of checks) c.catch(() => {});
      await broken.run();
      for (const c of checks) await assert.rejects(c, (e) => e instanceof Error && !/trace oracle/.test(e.message));
      // and eager outputs that do not fit are refused at check, as checkTraced refuses them
      await assert.rejects(broken.check({ x: xs[0] }, [eager[0].y]), /^Error: checkTraced: 1 eager outputs for 2 traced outputs \(y, s\)$/);
    } finally {
      broken.dispose();
      tm.dispose();
      om.dispose([xs, eager, off]);
    }
  });

  /** Runs the command; returns { code, out } (stdout and stderr). */
  const command = (...args) => {
    try {
      return { code: 0, out: execFileSync(process.execPath, ['tools/trace_oracle.mjs', ...args], { cwd: root, encoding: 'utf8', stdio: 'pipe' }) };
    } catch (e) {
      return { code: e.status, out: `${e.stdout}${e.stderr}` };
    }
  };

  test('the command traces a model file, prints each output and exits 0; 1 on a failure; 2 on a malformed file', () => {
    const good = command('examples/zoo/mlp.mjs');
    assert.equal(good.code, 0, good.out);
    assert.match(good.out, /inputs x: float32\[batch, 2\]; 5 nodes/);
    assert.match(good.out, /y float32\[8, 1\]: max error [\d.e-]+ \(bound 1e-5\)/);
    assert.match(good.out, /at other sizes: y float32\[9, 1\]: max error/); // batch 8 -> 9 and 17
    assert.match(good.out, /at other sizes: y float32\[17, 1\]: max error/);
    assert.match(good.out, /ok: the \.onnx agrees with the eager run/);
    const lstm = command('examples/zoo/lstm.mjs');
    assert.equal(lstm.code, 0, lstm.out);
    assert.match(lstm.out, /inputs x: float32\[batch, seq, 6\]/);
    assert.match(lstm.out, /at other sizes: logits float32\[7, 3\]: max error/);
    const bad = command('tests/js/fixtures/oracle-throws.mjs');
    assert.equal(bad.code, 1, bad.out);
    assert.match(bad.out, /DataDependent|traced tensor/);
    const usage = command();
    assert.equal(usage.code, 2, usage.out);
    assert.match(usage.out, /usage: node tools\/trace_oracle\.mjs path\/to\/model\.mjs/);
    const file = new URL('build/oracle-malformed.mjs', root);
    mkdirSync(new URL('build/', root), { recursive: true });
    writeFileSync(file, "import * as om from 'onemodel';\nawait om.ready();\nexport default { model: (x) => x, inputs: { x: [om.zeros([2]), ['batch', null]] } };\n");
    const malformed = command(file.pathname);
    assert.equal(malformed.code, 2, malformed.out);
    assert.match(malformed.out, /oracle-malformed\.mjs: input "x": axisNames must have one entry per dim \(1: a symbol name, an om.Dim or null\), got an array of length 2/);
  });
});

describe('tools/ort_sweep.mjs (attribute combinations of the convolutions, pools, pad and interpolate)', () => {
  /** Runs the command; returns { code, out } (stdout and stderr). */
  const run = (...args) => {
    try {
      return { code: 0, out: execFileSync(process.execPath, ['tools/ort_sweep.mjs', ...args], { cwd: new URL('../../', import.meta.url), encoding: 'utf8', stdio: 'pipe' }) };
    } catch (e) {
      return { code: e.status, out: `${e.stdout}${e.stderr}` };
    }
  };

  // A spread slice of every family (about 1 in 12 of some 20 000 configurations; the dedicated
  // cases are in conv.test.mjs and index.test.mjs): what ORT refused
  // or ran differently before the rewrites (dilated ceil_mode pools, output_padding >= stride,
  // nearest's source pixels, uneven adaptive cells) must agree, and nothing is refused when traced.
  test('a slice of every family agrees in onnxruntime-web, with no trace-time refusal; exit 0', () => {
    const r = run('--every', '12');
    assert.equal(r.code, 0, r.out);
    const families = [...r.out.matchAll(/^(\w+): (\d+) agreed, \d+ refused eagerly$/gm)];
    assert.deepEqual(families.map((m) => m[1]),
      ['conv1d', 'conv2d', 'conv_transpose2d', 'max_pool2d', 'avg_pool2d', 'adaptive_avg_pool2d', 'pad', 'nearest', 'bilinear', 'bicubic']);
    assert.ok(families.every((m) => Number(m[2]) > 0) && families.reduce((n, m) => n + Number(m[2]), 0) > 1000, r.out);
    assert.doesNotMatch(r.out, /refused when traced|FAIL/);
    assert.match(r.out, /\nok: every configuration agrees in onnxruntime-web and the Session\n$/);
  });

  // --only's run checks the option, not more configurations: a family's 1 in 100 (8 of
  // adaptive_avg_pool2d's 770) is a part of its 1 in 12 above (the hash of a configuration's
  // index within its family decides both), so a larger slice here only repeated the test above.
  test('one family; a usage error exits 2', () => {
    const ok = run('--only', 'adaptive_avg_pool2d', '--every', '100');
    assert.equal(ok.code, 0, ok.out);
    const [, agreed] = ok.out.match(/^adaptive_avg_pool2d: (\d+) agreed, 0 refused eagerly\nok: every configuration agrees in onnxruntime-web and the Session\n$/) ?? [];
    assert.equal(agreed, '8', ok.out);
    const bad = run('--only', 'conv3d');
    assert.equal(bad.code, 2);
    assert.match(bad.out, /unknown family "conv3d"\nusage: node tools\/ort_sweep\.mjs \[--only conv1d,conv2d,/);
    const zero = run('--every', '0');
    assert.equal(zero.code, 2);
    assert.match(zero.out, /--every takes a positive integer/);
  });
});

describe('otherShapes (the CLI runs every symbolic model at three other sizes)', () => {
  test('moves every symbol to its smallest size, s + 1 and 2s + 1, new floats, int64 values drawn from the example', () => {
    const ids = om.tensor([[1, 4, 4, 2, 1], [2, 2, 1, 4, 4]], { dtype: 'int64' });
    const x = om.randn([2, 3], { seed: 3 });
    try {
      const sets = otherShapes({ ids: [ids, ['batch', 'seq']], x: [x, ['batch', null]], fixed: x });
      assert.deepEqual(sets.map((f) => [f.ids.shape, f.x.shape, f.fixed.shape]),
        [[[1, 1], [1, 3], [2, 3]], [[3, 6], [3, 3], [2, 3]], [[5, 11], [5, 3], [2, 3]]]);
      for (const f of sets) {
        assert.equal(f.ids.dtype, 'int64');
        assert.ok(Array.from(f.ids.toArray(), Number).every((v) => [1, 2, 4].includes(v)));
        om.dispose(Object.values(f));
      }
      assert.deepEqual(otherShapes({ x }), []);
    } finally {
      om.dispose([ids, x]);
    }
  });

  test('within the sizes the graph holds for (traced.symbols): multiples of m at m, s + m and 2s + m, a maximum caps, a minimum starts', () => {
    const x = om.randn([2, 1, 20, 28], { seed: 4 });
    try {
      const symbols = [{ name: 'h', multipleOf: 4, min: 1, max: Infinity }, { name: 'w', multipleOf: 4, min: 9, max: 40 }];
      const sets = otherShapes({ x: [x, ['batch', null, 'h', 'w']] }, symbols);
      assert.deepEqual(sets.map((f) => f.x.shape), [[1, 1, 4, 12], [3, 1, 24, 32], [5, 1, 44, 40]]);
      for (const f of sets) om.dispose(Object.values(f));
    } finally {
      x.dispose();
    }
  });

  test('drawLike: floats are new normal values, bools and int64 drawn from the example; an empty example is refused', () => {
    const flags = om.tensor([true, true, true]);
    const empty = om.zeros([0], { dtype: 'int64' });
    const x = om.zeros([2]);
    try {
      const b = drawLike(flags, [2, 5], 3);
      assert.deepEqual([b.dtype, b.shape, Array.from(b.toArray(), Boolean).every(Boolean)], ['bool', [2, 5], true]);
      const f = drawLike(x, [4], 3);
      assert.deepEqual(f.shape, [4]);
      assert.ok(Array.from(f.toArray()).some((v) => v !== 0));
      om.dispose([b, f]);
      assert.throws(() => drawLike(empty, [3], 1), (e) => e instanceof om.OmError && e.kind === 'InvalidArgument' && /the int64 example is empty/.test(e.message));
    } finally {
      om.dispose([flags, empty, x]);
    }
  });
});
