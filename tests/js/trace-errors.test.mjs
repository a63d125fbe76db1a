// Every trace error kind and trigger of the spec (section 3), and misuse of the JS tracing API.
// Each row must throw the expected kind (om.TraceError for the tracer's kinds) with a message
// naming the call, leave no recording active (a new trace works) and free everything it made.
// The models a test makes on its way (keep) run through the onnxruntime-web oracle too.
import { test, describe, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { vals, memoryHooks, startOracle } from './helpers.mjs';

memoryHooks();

/** The oracle runs a test started (keep); awaited after the test. */
const pending = [];

/** Starts the oracle on a traced model a test made on its way (see startOracle); returns tm. */
function keep(tm, inputs, eager) {
  pending.push(startOracle(tm, inputs, eager));
  return tm;
}

const TRACE_KINDS = ['UnsupportedOperation', 'DataDependent', 'InPlaceMutation', 'NoGradInTrace', 'SymbolicShape', 'InvalidUsage'];

const ex = () => om.randn([4, 3], { seed: 1 });

/** A trace of fn on x [4, 3] (fixed axes unless axes given). */
const traceOf = (fn, axes = null) => om.trace(fn, { x: [ex(), axes] });

afterEach(async () => {
  // whatever a row did, no recording may be left behind ...
  const active = om.Tracer.active;
  if (active) try { om.Tracer.begin(); } catch { /* a nested begin ends the recording: the next test starts clean */ }
  assert.equal(active, false, 'a recording is still active after the test');
  await Promise.all(pending.splice(0));
  // ... and a new trace works (and agrees with the eager run in onnxruntime-web)
  const x0 = om.tensor([1, -2]);
  const tm = om.tidy(() => om.trace((x) => x.relu(), { x: x0 }));
  const eager = om.tidy(() => x0.relu());
  const oracle = startOracle(tm, { x: x0 }, eager);
  try {
    assert.deepEqual(tm.graph().nodes.map((n) => n.opType), ['Relu']);
  } finally {
    tm.dispose();
    om.dispose([x0, eager]);
  }
  await oracle;
});

/**
 * Runs fn in a tidy scope (everything it makes is freed) and checks what it throws. Traced
 * models it returns are disposed (a row that unexpectedly succeeds then fails cleanly).
 */
function throwsKind(fn, kind, message) {
  let err = null;
  try {
    const r = om.tidy(fn);
    if (r instanceof om.TracedModel) r.dispose();
  } catch (e) {
    err = e;
  }
  assert.ok(err, `expected ${kind}, nothing was thrown`);
  assert.ok(err instanceof om.OmError, `expected an OmError, got ${err?.stack ?? err}`);
  assert.equal(err.kind, kind, err.message);
  assert.equal(err instanceof om.TraceError, TRACE_KINDS.includes(kind), `TraceError iff a tracer kind (${err.name})`);
  assert.match(err.message, message);
  return err;
}

// [trigger, kind, message regex, fn]
const rows = [
  // DataDependent: any read of a traced tensor's values by user code
  ['toArray of a traced tensor', 'DataDependent', /^toArray: reads the values of a traced tensor of shape \[4,3\]/,
    () => traceOf((x) => { x.toArray(); return x.relu(); })],
  ['item of a traced tensor', 'DataDependent', /^item: reads the values of a traced tensor of shape \[\]/,
    () => traceOf((x) => { x.sum().item(); return x.relu(); })],
  ['toString of a traced tensor', 'DataDependent', /^toArray: reads the values of a traced tensor/,
    () => traceOf((x) => { String(x.exp()); return x.relu(); })],
  ['toArray of a view of a traced tensor', 'DataDependent', /^toArray: reads the values of a traced tensor of shape \[3\]/,
    () => traceOf((x) => { x.select(0, 1).toArray(); return x.relu(); })],
  // InPlaceMutation: writes into a graph input or a parameter (writes into other tensors are
  // recorded: tests/js/inplace.test.mjs), or a captured constant changed before finish
  ['fill_ of a traced input', 'InPlaceMutation',
    /^(fill|fill_): changes the storage of traced input 'x' in place while tracing; the graph's inputs are not written \(clone the input first/,
    () => traceOf((x) => { x.fill_(0); return x.relu(); })],
  ['set_ of a traced input', 'InPlaceMutation', /^(fill|set|set_): changes the storage of traced input 'x' in place/,
    () => traceOf((x) => { x.set_([0, 0], 1); return x.relu(); })],
  ['copy_ into a traced input', 'InPlaceMutation', /^(copy_from|copy_): changes the storage of traced input 'x' in place/,
    () => traceOf((x) => { x.copy_(om.zeros([4, 3])); return x.relu(); })],
  ['copy_ into a view of a traced input', 'InPlaceMutation', /^(copy_from|copy_): changes the storage of traced input 'x' in place/,
    () => traceOf((x) => { x.select(0, 1).copy_(om.zeros([3])); return x.relu(); })],
  ['add_ into a view of a symbolic input', 'InPlaceMutation', /^(copy_from|copy_): changes the storage of traced input 'x' in place/,
    () => traceOf((x) => { x.slice(0, 1).add_(1); return x.relu(); }, ['batch', null])],
  ['fill_ of a parameter', 'InPlaceMutation', /^(fill|fill_): changes parameter 'fc\.bias' in place while tracing; the graph holds parameters as constants/,
    () => {
      const fc = new om.nn.Linear(3, 2);
      const net = new (class extends om.nn.Module {
        constructor() { super(); this.fc = fc; }
        forward(x) { const y = this.fc.forward(x); this.fc.bias.fill_(0); return y; }
      })();
      return om.trace(net, { x: ex() });
    }],
  ['a write through an expanded view', 'InPlaceMutation', /^(fill|fill_): writes into a view made by expand, whose elements overlap/,
    () => traceOf((x) => { const m = om.zeros([x.shape[0], 1]); m.expand([-1, 3]).fill_(1); return x.add(m); }, ['batch', null])],
  ['fill_ of a traced input\'s example (the same storage)', 'InPlaceMutation',
    /^(fill|fill_): changes the storage of traced input 'x' in place while tracing; the graph's inputs are not written/,
    () => {
      const e = ex();
      const t = om.Tracer.begin();
      const x = t.input('x', e);
      e.fill_(0);
      return t.finish({ y: x.relu() });
    }],
  ['toArray of a traced input\'s example (the same storage)', 'DataDependent',
    /^toArray: reads the values of traced input 'x' \(through a tensor sharing its storage\) while tracing; a graph cannot depend on them/,
    () => {
      const e = ex();
      return om.trace((x) => { e.toArray(); return x.relu(); }, { x: e });
    }],
  ['a captured weight changed in place before finish', 'InPlaceMutation',
    /^(trace_finish|finish): a constant of shape \[3,2\], first read by matmul, was changed in place during the trace/,
    () => {
      const W = om.ones([3, 2]);
      return traceOf((x) => { const y = x.matmul(W); W.fill_(2); return y; });
    }],
  // NoGradInTrace
  ['noGrad while tracing', 'NoGradInTrace', /^(no_grad|noGrad): grad mode turned off while tracing/,
    () => traceOf((x) => om.noGrad(() => x.relu()))],
  ['noGrad while tracing, on constants only', 'NoGradInTrace', /^(no_grad|noGrad): /,
    () => traceOf((x) => x.mul(om.noGrad(() => om.ones([3]).mul(2))))],
  // InvalidUsage
  ['a nested Tracer.begin', 'InvalidUsage', /^(trace_begin|Tracer\.begin): a trace is already recording/,
    () => traceOf((x) => { om.Tracer.begin(); return x.relu(); })],
  ['om.trace inside a trace', 'InvalidUsage', /^(trace_begin|Tracer\.begin): a trace is already recording/,
    () => traceOf((x) => { om.trace((y) => y.exp(), { y: ex() }).dispose(); return x.relu(); })],
  ['an input name used twice', 'InvalidUsage', /^(trace_input|input): name 'x' is used twice/,
    () => {
      const t = om.Tracer.begin();
      t.input('x', ex());
      t.input('x', ex());
    }],
  ['an input name given to a parameter', 'InvalidUsage', /^(trace_parameter|parameter): name 'x' is used twice/,
    () => {
      const t = om.Tracer.begin();
      const x = t.input('x', ex());
      const W = om.ones([3, 2]);
      t.parameter('x', W);
      return t.finish({ y: x.matmul(W) });
    }],
  ['an output named like an input', 'InvalidUsage', /^(trace_finish|finish): name 'x' is used twice/,
    () => om.trace((x) => ({ x: x.relu() }), { x: ex() })],
  ['an output that does not depend on an input', 'InvalidUsage',
    /^(trace_finish|finish): output 'c' does not depend on any input/,
    () => traceOf((x) => ({ y: x.relu(), c: om.ones([2]) }))],
  ['a symbolic axis with example size 1', 'InvalidUsage',
    /^(trace_input|input): symbolic axis 'batch' of 'x' has example size 1/,
    () => om.trace((x) => x.relu(), { x: [om.ones([1, 3]), ['batch', null]] })],
  // SymbolicShape
  // (the runs at other sizes, docs/symbolic-axes.md: the sizes below are those of the first)
  // (a constant made before the trace whose size equals the symbol's answers at that size and at
  // 1: two pieces, symbolic-size-one.test.mjs)
  ['random values of a size that changes with the symbol (randn)', 'SymbolicShape',
    /^randn: a random tensor of shape \[4,3\] changes with the sizes; random values of a changing size cannot be written in the graph/,
    () => traceOf((x) => x.add(om.randn([x.shape[0], 3], { seed: 2 })), ['batch', null])],
  ['an int64 arange of a fractional step and a length that changes with the symbol', 'SymbolicShape',
    /^arange: an int64 arange from 0 by 0.5 \(a fractional start or step\) of a length that changes with the sizes cannot be written in the graph/,
    () => traceOf((x) => x.add(om.arange(0, x.shape[0] / 2, 0.5, { dtype: 'int64' }).float().reshape(-1, 1)), ['batch', null])],
  ['random values of a product of symbols\' size (rand)', 'SymbolicShape',
    /^rand: a random tensor of shape \[12\] changes with the sizes/,
    () => om.trace((x) => x.reshape(-1).add(om.rand([x.shape[0] * x.shape[1]])), { x: [om.randn([4, 3], { seed: 1 }), ['batch', 'width']] })],
  ['control flow that depends on a product of sizes (the model does another thing from a threshold of B * W on; one size\'s is an If)', 'SymbolicShape',
    /^relu: the model changes at a size threshold: at batch=\d+, width=\d+ it calls relu here \(call 1\), where the trace calls neg; at batch=\d+, width=\d+ it does what the trace does, so the graph would be wrong from batch=\d+, width=\d+\. It holds up to there: declare om\.Dim\('batch', \{ min: 1, max: \d+ \}\), om\.Dim\('width', \{ min: 1, max: \d+ \}\) \(at file:.*trace-errors\.test\.mjs:\d+:\d+\)$/,
    () => om.trace((x) => (x.shape[0] * x.shape[1] > 20 ? x.relu() : x.neg()), { x: [om.randn([4, 3], { seed: 1 }), ['batch', 'width']] })],
  // (B * B % 3 traces: it depends on B % 3 alone, a table of three residues the graph computes)
  ['an index computed from a size that is no size expression (B * B % 17 % B)', 'SymbolicShape',
    /^select: argument 1 is \d+ at the traced sizes, \d+ at batch=\d+, .*: it changes with the sizes, but not as a size the graph can compute \(a sum, multiple, product, minimum or maximum of sizes, or a floor division or remainder by a constant the runs tell apart\)/,
    () => traceOf((x) => x.select(0, ((x.shape[0] * x.shape[0]) % 17) % x.shape[0]), ['batch', null])],
  // long symbol names make each run's sizes long: the list shows whole runs and ends in "...", and
  // the message is whole (it overran the 512-byte message and was cut mid-sentence: ViTMAE's refusal)
  ['the same with long symbol names: whole runs listed, the message not cut', 'SymbolicShape',
    /^select: argument 1 is \d+ at the traced sizes(, \d+ at (batch_of_many_images|channels_of_each_image)=\d+, (batch_of_many_images|channels_of_each_image)=\d+)+, \.\.\.: it changes with the sizes, but not as a size the graph can compute \(a sum, multiple, product, minimum or maximum of sizes, or a floor division or remainder by a constant the runs tell apart\) \(at file:[^)]*trace-errors\.test\.mjs:\d+:\d+\)$/,
    () => om.trace((x) => x.select(0, ((x.shape[0] * x.shape[0]) % 17) % x.shape[0]), { x: [om.randn([4, 3], { seed: 1 }), ['batch_of_many_images', 'channels_of_each_image']] })],
  ['a scalar computed from a size that is no size function (log B)', 'SymbolicShape',
    /^full: the value is 1.386\d* at the traced sizes, 2.197\d* at batch=9, .*: it changes with the sizes, but not as a size the graph can compute \(a \* E \+ b, a \/ E, a \* sqrt\(E\) or a \/ sqrt\(E\) of a size E\)/,
    () => traceOf((x) => x.mul(Math.log(x.shape[0])), ['batch', null])],
  // (where the sizes the model answers at are a range, a multiple or one size, the range narrows
  // to them instead: symbolic-narrowing.test.mjs)
  // (1 and n alone trace as two pieces: symbolic-size-one.test.mjs)
  ['a model that throws at other sizes in its own code, and answers at sizes no declaration gives (1, 2 and 4)', 'SymbolicShape',
    /^relu: at batch=\d+ the model fails here \(Error: one, two or four only\), so the graph would only hold at the traced sizes; the sizes where the model answers are no range, multiple or one size that om\.Dim declares \(it fails at batch=3, between sizes where it answers\) \(at file:.*trace-errors\.test\.mjs:\d+:\d+\)$/,
    () => traceOf((x) => { if (![1, 2, 4].includes(x.shape[0])) throw new Error('one, two or four only'); return x.relu(); }, ['batch', null])],
  ['a model that fails at one size between sizes where it answers', 'SymbolicShape',
    /^relu: at batch=5 the model fails here \(Error: not five\), so the graph would only hold at the traced sizes; the sizes where the model answers are no range, multiple or one size that om\.Dim declares \(it fails at batch=5, between sizes where it answers\)/,
    () => traceOf((x) => { if (x.shape[0] === 5) throw new Error('not five'); return x.relu(); }, ['batch', null])],
  // UnsupportedOperation (spec section 2): a constant over 2 GiB, here a broadcast view (nothing
  // that large is allocated). The spec's refused ops (losses, training-mode BatchNorm/Dropout)
  // join this table as they land.
  ['a constant over 2 GiB', 'UnsupportedOperation',
    /^add: reads a constant of shape \[600000000,1,1\] \(2400000000 bytes\), over ONNX's 2 GiB limit/,
    () => traceOf((x) => x.add(om.full([1, 1, 1], 1).expand([600000000, 1, 1])))],
];

describe('trace errors: every kind and trigger', () => {
  for (const [name, kind, message, fn] of rows) {
    test(`${kind}: ${name}`, () => { throwsKind(fn, kind, message); });
  }

});

/** The line of this file its caller stands on (a model's call written on the same line). */
const here = () => Number(/trace-errors\.test\.mjs:(\d+):\d+/.exec(new Error().stack.split('\n')[2])[1]);

// A refusal the runs decide after the model returned (a size below the example where the model
// answers otherwise than the graph, a run that fails where the record run never met the call,
// a run above the example that parts) names a call: it is raised at that call, in a run made
// again to it, so its "(at ...)" is the model's own line, not om.trace's.
describe('trace errors: a refusal made after the runs ends with the line of the call it names', () => {
  const rows = [ // what, the input's shape and axes, the model and its call's line, the message up to the location
    ['an output of another size below the example (squeeze of an axis that is 1 there)', [3, 1, 14, 10], [null, null, 'H', 'W'],
      () => [(x) => x.squeeze().relu(), here()],
      /^squeeze \(call 1\): at H=1, W=\d+ its output has another size than the graph's, where the model gives an answer that the graph would not: the graph holds for the sizes om\.Dim\('H', \{ min: 2 \}\)/],
    ['an argument computed otherwise below the example (a narrow to min(h * w, H + W) of a strided conv\'s h, w)', [5, 4, 10, 15], [null, null, 'H', 'W'],
      () => {
        const conv = new om.nn.Conv2d(4, 8, 3, { stride: 2, padding: 1 });
        return [(x) => { const v = conv.forward(x), [h, w] = v.shape.slice(2); return v.reshape(5, 8, h * w).narrow(-1, 0, Math.min(h * w, x.shape[2] + x.shape[3])); }, here()];
      },
      /^slice: the model changes at a size threshold: at H=\d+, W=\d+ it passes \d+ as argument 2 here \(call \d+\), where the graph computes \d+; at H=\d+, W=\d+ it does what the trace does, so the graph would be wrong at H=\d+, W=\d+\. It holds from there: declare om\.Dim\('H', \{ min: \d+ \}\), om\.Dim\('W', \{ min: \d+ \}\)/],
    ['a call whose output the model drops, failing at sizes where the record run computes it only (a reflect pad of a split\'s last piece)', [5, 10, 4], ['B', 'T', null],
      () => [(x) => { const v = x.split(4, 1).at(-1); om.nn.functional.pad(v, [2, 1, 1, 1], 'reflect'); return v.relu(); }, here()],
      /^trace: at B=\d+, T=\d+ the model fails \(pad: padding size should be less than the corresponding input dimension, but got: padding \(1, 1\) at dimension 1 of input \[\d+,1,4\]\), so the graph would only hold at the traced sizes; the sizes where the model answers are no range/],
    // a table kept across calls and made again, larger, for a longer input (Phi's rotary cos/sin
    // cache): the run above the example that makes it changes the model for every run after it
    ['a tensor the model made in a run at another size and kept (a cache made again for a larger size)', [4, 3], ['batch', null],
      () => {
        const cache = { n: 6, t: om.arange(0, 6).float() };
        const model = (x) => {
          const T = x.shape[0];
          if (T > cache.n) cache.t?.dispose(), [cache.t, cache.n] = [om.keep(om.arange(0, T).float()), T];
          return x.add(cache.t.slice(0, 0, T).reshape(-1, 1));
        };
        return [model, here() - 2, () => cache.t.dispose()];
      },
      /^slice \(call 1\): the model reads a tensor it made in its run at batch=9 and kept \(state it changes at some sizes, such as a table cached to a size and made again for a larger one\), so the runs cannot tell where it begins to; the trace holds where the model keeps its state: declare om\.Dim\('batch', \{ min: 1, max: 4 \}\), up to the size its state holds/],
    // a cache keyed by a size (BEiT's relative position index per window): the traced run fills the
    // entry that a run at another size with the same key reads, so no declared maximum avoids it
    ['a tensor the traced run made and cached by a size that a run at another size reads (a cache per window)', [9, 3], ['batch', null],
      () => {
        const cache = {};
        const model = (x) => {
          const key = Math.floor(x.shape[0] / 4);
          cache[key] ??= om.keep(om.arange(0, key + 1).float());
          return x.add(cache[key].sum());
        };
        return [model, here() - 2, () => Object.values(cache).forEach((t) => t.dispose())];
      },
      /^sum \(call 1\): the model reads a tensor it made in its run at batch=9 and kept \(state it changes at some sizes, such as a table cached to a size and made again for a larger one\), so the runs cannot tell where it begins to; the trace holds where the model keeps its state; no declared maximum avoids it \(a run no larger than the traced one made it\): make that tensor in every call while a trace records \(om\.Tracer\.active in JS, as PyTorch code skips a cache under torch\.jit\.is_tracing\(\)\)/],
  ];
  for (const [what, shape, axes, make, message] of rows) {
    test(what, () => om.tidy(() => {
      const [model, line, after] = make();
      try {
        const err = throwsKind(() => om.trace(model, { x: [om.randn(shape, { seed: 3 }), axes] }), 'SymbolicShape', message);
        assert.match(err.message, new RegExp(`\\(at file:[^)]*trace-errors\\.test\\.mjs:${line}:\\d+\\)$`), err.message);
      } finally {
        after?.();
      }
    }));
  }
});

describe('trace errors: what happens around them', () => {
  test('a trace error ends the recording; finish reports that first error again', () => om.tidy(() => {
    const t = om.Tracer.begin();
    const x = t.input('x', ex());
    const first = throwsKind(() => x.toArray(), 'DataDependent', /traced tensor/);
    assert.equal(om.Tracer.active, false);
    assert.equal(t.recording, false);
    const again = throwsKind(() => t.finish({ y: x.relu() }), 'DataDependent', /traced tensor/);
    assert.equal(again.message, first.message);
    throwsKind(() => t.finish({ y: x.relu() }), 'InvalidUsage', /^finish: this tracer has already finished/);
  }));

  test('a non-trace error (ShapeMismatch) leaves the trace recording', () => om.tidy(() => {
    const t = om.Tracer.begin();
    const e = ex();
    const x = t.input('x', e);
    throwsKind(() => x.add(om.zeros([5])), 'ShapeMismatch', /^add: /);
    assert.equal(t.recording, true);
    const y = x.relu();
    const tm = keep(t.finish({ y }), { x: e }, { y });
    assert.deepEqual(tm.graph().nodes.map((n) => n.opType), ['Relu']);
    tm.dispose();
  }));

  test('om.trace ends a recording the model began itself after a nested begin failed', () => {
    let inner = null;
    throwsKind(() => traceOf((x) => {
      assert.throws(() => om.Tracer.begin(), (e) => e instanceof om.TraceError && e.kind === 'InvalidUsage');
      inner = om.Tracer.begin(); // succeeds: the failed nested begin ended om.trace's recording
      return x.relu();
    }), 'InvalidUsage', /^trace: the model ended this recording and began another \(tracers do not nest/);
    assert.equal(om.Tracer.active, false, 'the model\'s own recording outlived om.trace');
    assert.equal(inner.recording, false);
    throwsKind(() => inner.input('y', ex()), 'InvalidUsage', /^input: this tracer was aborted/);
  });

  test('om.trace ends the model\'s own recording also when the model throws', () => {
    assert.throws(() => om.tidy(() => traceOf(() => {
      try { om.Tracer.begin(); } catch { /* ends both */ }
      om.Tracer.begin();
      throw new Error('boom');
    })), /boom/);
    assert.equal(om.Tracer.active, false);
  });

  test('NoGradInTrace leaves grad mode on', () => om.tidy(() => {
    throwsKind(() => traceOf((x) => om.noGrad(() => x)), 'NoGradInTrace', /grad mode/);
    const w = om.ones([2]);
    w.requiresGrad = true;
    assert.equal(w.mul(2).requiresGrad, true, 'recording is on');
    assert.deepEqual(om.noGrad(() => vals(w.mul(3))), [3, 3], 'noGrad works again after the trace');
  }));

  test('reading a traced tensor after the error works (the values of the example run)', () => om.tidy(() => {
    const t = om.Tracer.begin();
    const e = om.tensor([1, -1]);
    const y = t.input('x', e).relu();
    throwsKind(() => y.toArray(), 'DataDependent', /traced tensor/);
    assert.deepEqual(vals(y), [1, 0]);
    t.abort();
  }));
});

describe('misuse of the JS tracing API', () => {
  /** Runs fn(tracer, x, example of x) on a fresh recording and aborts it afterwards. */
  const onTracer = (fn) => () => {
    const t = om.Tracer.begin();
    try {
      const e = ex();
      return fn(t, t.input('x', e), e);
    } finally {
      t.abort();
    }
  };
  /** Finishes t with y = x.relu(), runs the model through the oracle and disposes it. */
  const finishRelu = (t, x, e) => {
    const y = x.relu();
    keep(t.finish({ y }), { x: e }, { y }).dispose();
  };
  const disposed = () => { const d = om.ones([2]); d.dispose(); return d; };

  const misuse = [
    ['a non-string input name', 'InvalidArgument', /^input: name must be a string, got 5/,
      onTracer((t) => t.input(5, ex()))],
    ['an empty input name', 'InvalidArgument', /^input: name must not be empty/, onTracer((t) => t.input('', ex()))],
    ['a name with a NUL', 'InvalidArgument', /^parameter: name "a\\u0000b" contains a NUL/,
      onTracer((t) => t.parameter('a\0b', om.ones([1])))],
    ['a non-Tensor example', 'InvalidArgument', /^input: example must be a Tensor, got an array/,
      onTracer((t) => t.input('y', [1, 2]))],
    ['a disposed example', 'Disposed', /^input: example was disposed/, onTracer((t) => t.input('y', disposed()))],
    ['axisNames of the wrong length', 'InvalidArgument', /^input: axisNames has 1 entries but the example has 2 dims/,
      () => om.trace((x) => x, { x: [ex(), ['batch']] })],
    ['axisNames that is not an array', 'InvalidArgument', /^input: axisNames must be an array/,
      onTracer((t) => t.input('y', ex(), 'batch'))],
    ['a non-string axis name', 'InvalidArgument', /^input: axisNames\[0\] must be a string, got 1/,
      onTracer((t) => t.input('y', ex(), [1, null]))],
    ['a non-string parameter name', 'InvalidArgument', /^parameter: name must be a string/,
      onTracer((t) => t.parameter(null, om.ones([1])))],
    ['a disposed parameter', 'Disposed', /^parameter: tensor was disposed/, onTracer((t) => t.parameter('w', disposed()))],
    ['finish with a non-Tensor output', 'InvalidArgument', /^finish: output "y" must be a Tensor, got 3/,
      onTracer((t) => t.finish({ y: 3 }))],
    ['finish with a disposed output', 'Disposed', /^finish: output "y" was disposed/,
      onTracer((t) => t.finish({ y: disposed() }))],
    ['finish with an array', 'InvalidArgument', /^finish: outputs must be a plain object/,
      onTracer((t, x) => t.finish([x.relu()]))],
    ['finish with no outputs', 'InvalidArgument', /^finish: outputs is empty/, onTracer((t) => t.finish({}))],
    ['finish called twice', 'InvalidUsage', /^finish: this tracer has already finished/,
      onTracer((t, x, e) => { finishRelu(t, x, e); t.finish({ y: x.exp() }); })],
    ['input after finish', 'InvalidUsage', /^input: this tracer has already finished/,
      onTracer((t, x, e) => { finishRelu(t, x, e); t.input('z', ex()); })],
    ['parameter after abort', 'InvalidUsage', /^parameter: this tracer was aborted/,
      onTracer((t) => { t.abort(); t.parameter('w', om.ones([1])); })],
    ['a tracer replaced by a later begin', 'InvalidUsage', /^input: this tracer ended, and a later Tracer\.begin\(\) started another recording/,
      () => {
        const t1 = om.Tracer.begin();
        const x = t1.input('x', ex());
        assert.throws(() => x.item(), om.TraceError);
        const t2 = om.Tracer.begin();
        try {
          t1.input('y', ex());
        } finally {
          t2.abort();
        }
      }],
    ['a disposed tensor in an op while tracing', 'Disposed', /^add: other was disposed/,
      () => traceOf((x) => x.add(disposed()))],
    ['new Tracer()', 'InvalidArgument', /Tracer: use om\.Tracer\.begin\(\)/, () => new om.Tracer()],
    ['om.trace of a non-function', 'InvalidArgument', /^trace: model must be a function or an object with a forward\(\) method/,
      () => om.trace(5, { x: ex() })],
    ['om.trace with inputs that are not an object', 'InvalidArgument', /^trace: inputs must be an object/,
      () => om.trace((x) => x, [ex()])],
    ['om.trace with an input that is not a Tensor', 'InvalidArgument', /^trace: input "x" must be a Tensor or \[Tensor, axisNames\], got 3/,
      () => om.trace((x) => x, { x: 3 })],
    ['om.trace with a 3-element input spec', 'InvalidArgument', /^trace: input "x" must be a Tensor or \[Tensor, axisNames\], got an array of length 3/,
      () => om.trace((x) => x, { x: [ex(), null, 1] })],
    ['a model returning a number', 'InvalidArgument', /^trace: the model must return a Tensor, an array of Tensors or an object of Tensors, got 3/,
      () => om.trace(() => 3, { x: ex() })],
    ['a model returning a Promise', 'InvalidArgument', /^trace: the model must return .* got a Promise/,
      () => om.trace(async (x) => x.relu(), { x: ex() })],
    ['a model returning an array with a non-Tensor', 'InvalidArgument', /^trace: output 1 \("output_1"\) must be a Tensor, got null/,
      () => om.trace((x) => [x.relu(), null], { x: ex() })],
    ['outputNames of the wrong length', 'InvalidArgument', /^trace: outputNames has 2 names but the model returned 1 outputs/,
      () => om.trace((x) => x.relu(), { x: ex() }, { outputNames: ['a', 'b'] })],
    ['outputNames that repeat a name', 'InvalidUsage', /^trace: output name "a" is used twice/,
      () => om.trace((x) => [x.relu(), x.exp()], { x: ex() }, { outputNames: ['a', 'a'] })],
    ['outputNames against an object result', 'InvalidArgument', /^trace: the model returned an object, whose keys \(y\) name the outputs; outputNames \(z\) differs/,
      () => om.trace((x) => ({ y: x.relu() }), { x: ex() }, { outputNames: ['z'] })],
    ['outputNames with a hole (a sparse array)', 'InvalidArgument', /^trace: outputNames\[1\] is missing \(a hole in a sparse array\)/,
      // eslint-disable-next-line no-sparse-arrays
      () => om.trace((x) => [x.relu(), x.exp()], { x: ex() }, { outputNames: ['a', , ] })],
    ['outputNames that is all holes', 'InvalidArgument', /^trace: outputNames\[0\] is missing \(a hole in a sparse array\)/,
      () => om.trace((x) => x.relu(), { x: ex() }, { outputNames: new Array(1) })],
    // Names with a lone surrogate: UTF-8 cannot encode it, C would get another name
    ['an input name with a lone surrogate', 'InvalidArgument',
      /^input: name "a\\ud800" contains a lone surrogate \(\\ud800 at index 1\), which UTF-8 cannot encode/,
      onTracer((t) => t.input('a\ud800', ex()))],
    ['a parameter name with a lone low surrogate', 'InvalidArgument', /^parameter: name "\\udc00w" contains a lone surrogate \(\\udc00 at index 0\)/,
      onTracer((t) => t.parameter('\udc00w', om.ones([1])))],
    ['an axis name with a lone surrogate', 'InvalidArgument', /^input: axisNames\[0\] "b\\udbff" contains a lone surrogate/,
      onTracer((t) => t.input('y', ex(), ['b\udbff', null]))],
    ['an output name with a lone surrogate', 'InvalidArgument', /^finish: output name "y\\ud800z" contains a lone surrogate/,
      onTracer((t, x) => t.finish({ 'y\ud800z': x.relu() }))],
    ['outputNames with a lone surrogate', 'InvalidArgument', /^trace: outputNames\[0\] "\\ud800" contains a lone surrogate/,
      () => om.trace((x) => x.relu(), { x: ex() }, { outputNames: ['\ud800'] })],
  ];
  for (const [name, kind, message, fn] of misuse) {
    test(name, () => { throwsKind(fn, kind, message); });
  }

  test('lone surrogates are refused without String.prototype.isWellFormed too (older engines)', () => {
    const own = Object.getOwnPropertyDescriptor(String.prototype, 'isWellFormed');
    delete String.prototype.isWellFormed;
    try {
      for (const [name, at] of [['a\ud800', 1], ['\udc00', 0], ['x\udc00\ud800', 1], ['\ud83d\ude00\ud83d', 2]]) {
        throwsKind(onTracer((t) => t.input(name, ex())), 'InvalidArgument', new RegExp(`contains a lone surrogate \\(\\\\u${name.charCodeAt(at).toString(16)} at index ${at}\\)`));
      }
      // a well-formed pair is one code point: accepted
      const e = ex();
      const tm = om.tidy(() => om.trace((x) => x.relu(), { 'x\ud83d\ude00': e }));
      const eager = om.tidy(() => e.relu());
      keep(tm, { 'x\ud83d\ude00': e }, eager);
      assert.deepEqual(tm.inputs.map((i) => i.name), ['x\ud83d\ude00']);
      tm.dispose();
      om.dispose([e, eager]);
    } finally {
      if (own) Object.defineProperty(String.prototype, 'isWellFormed', own);
    }
  });

  test('saveOnnx outside Node and with a bad path argument', () => {
    const e = ex();
    const tm = om.tidy(() => om.trace((x) => x.relu(), { x: e }));
    const eager = om.tidy(() => e.relu());
    keep(tm, { x: e }, eager);
    om.dispose([e, eager]);
    try {
      throwsKind(() => tm.saveOnnx(42), 'InvalidArgument', /^saveOnnx: path must be a string or a URL, got 42/);
    } finally {
      tm.dispose();
    }
  });
});
