// The random-model differential test of the tracer (tests/js/random/, docs/tracing.md "Random
// models"): a few hundred generated models, each traced with symbolic axes and run in
// onnxruntime-web against the eager model at the traced sizes and at other sizes of every
// symbol. Every one must agree or be refused with a TraceError: none may be wrong (a graph that
// computes something else at some size), crash, or be invalid (a generator bug). The refused
// rate is reported, not asserted. A failure prints the report with the failing models' sources;
// `npm run fuzz -- 1 600 --shrink` reruns the same models and shrinks each failing one.
//
// Before that, the instrument itself: the PRNG is pinned (an id in a report means the same model
// everywhere), and the runner classifies models whose class is known whatever the tracer does.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { Rng, generate, render } from './random/generator.mjs';
import { Pool } from './random/pool.mjs';
import { shrink } from './random/shrink.mjs';
import { runBatch, formatReport, CLASSES, FAILING } from './random/batch.mjs';
import { narrowerThan } from './random/runner.mjs';

const SEED = 1;
const COUNT = 600;

// One pool (one worker, which loads onemodel and onnxruntime-web once) runs the instrument's
// cases (one with a shorter timeout, one with a smaller check budget), the known onnxruntime
// bug's and the batch's; a case that crashes or hangs gets a fresh worker, so the cases before it
// leave nothing behind. 60 s a case: runBatch's default.
const pool = new Pool({ timeoutMs: 60000 });
after(() => pool.close());
/** A source returning a function model of x [5, 4] with a symbolic batch. */
const fn = (body, pre = '') => `${pre}\nreturn { model: (x) => ${body}, inputs: { x: { shape: [5, 4], axes: ['B', null] } } };`;

describe('the random-model instrument', () => {
  const hangs = { timeoutMs: 5000 }; // a case's time starts once its worker is ready: 5 s is plenty for the refused one

  test('the PRNG and the generator are deterministic', () => {
    const r = new Rng(1, 2);
    assert.deepEqual([r.u32(), r.u32(), r.u32()], [646219477, 3656616253, 2899197217]);
    assert.equal(render(generate(7, 3)), render(generate(7, 3)));
    assert.notEqual(render(generate(7, 3)), render(generate(7, 4)));
  });

  test('the runner classifies models of known class', async () => {
    const cases = {
      agree: fn('x.relu().sum(1)'),
      refused: fn('om.tensor(x.toArray())'), // DataDependent
      // a model that computes otherwise while a trace records: the graph holds x * 2, eager
      // runs x * 1, and no tracer can tell, so it is wrong at every size whatever the tracer does
      wrong: fn('x.mul(om.Tracer.active ? 2 : 1)'),
      // a RangeError (not a TraceError) out of the traced calls only
      crash: fn('{ if (om.Tracer.active) throw new RangeError("boom"); return x.relu(); }'),
      invalid: fn('x.matmul(om.ones([3, 3]))'),
    };
    for (const [want, source] of Object.entries(cases)) {
      const r = await pool.run(source, { id: want });
      assert.equal(r.class, want, `${want}: ${JSON.stringify(r)}`);
    }
    // B = 5 at the example and 1, 2, 4, 6, 10, 11, 41 besides: a size where eager throws is skipped and counted
    const skips = await pool.run(fn('{ if (!om.Tracer.active && x.shape[0] === 2) x.matmul(om.ones([3, 3])); return x.relu(); }'), { id: 'skips' });
    assert.deepEqual([skips.class, skips.skipped, skips.checked], ['agree', 1, 7], JSON.stringify(skips));
    // select(0, 4) holds for B >= 5 only: a tracer that says so (traced.symbols) gets the smaller
    // sizes left out and counted, one that does not gets them skipped (eager throws there)
    const narrow = await pool.run(fn('x.select(0, 4)'), { id: 'narrowed' });
    assert.deepEqual([narrow.class, narrow.checked, narrow.skipped + (narrow.outOfRange ?? 0)], ['agree', 5, 3], JSON.stringify(narrow));
    assert.equal(narrow.narrowedAnswers, undefined, 'eager fails below 5 too');
    // a range narrowed where eager answers is reported (here the traced model alone indexes row 4,
    // so the tracer sees it fail below 5, eager never), at sizes inside the declared range only:
    // past a declared maximum of 8 (10, 11, 41) the model is not promised to answer
    const sizesOf = (r) => r.narrowedAnswers?.map((a) => a.split(' ')[0]);
    const rowFour = 'x.select(0, om.Tracer.active ? 4 : 0)';
    const undeclared = await pool.run(fn(rowFour), { id: 'narrowed where eager answers' });
    assert.deepEqual(sizesOf(undeclared), ['B=1', 'B=2', 'B=4'], JSON.stringify(undeclared));
    const capped = await pool.run(`return { model: (x) => ${rowFour}, inputs: { x: { shape: [5, 4], axes: [om.Dim('B', { max: 8 }), null] } } };`,
      { id: 'narrowed inside a declared maximum' });
    assert.deepEqual(sizesOf(capped), ['B=1', 'B=2', 'B=4'], JSON.stringify(capped));
    // a symbol declared a multiple of 2 (om.Dim in the spec, as the generator writes it) is
    // checked at multiples only: 6 at the example, then 2, 4, 8, 12, 14, 50; eager of the halving
    // reshape fails at every odd size, so none is skipped
    const halves = `return { model: (x) => x.reshape(2, x.shape[0] / 2, 4).sum(0),
      inputs: { x: { shape: [6, 4], axes: [om.Dim('T', { multipleOf: 2 }), null] } } };`;
    const even = await pool.run(halves, { id: 'multiples' });
    assert.deepEqual([even.class, even.checked, even.skipped, even.outOfRange], ['agree', 7, 0, 0], JSON.stringify(even));
    // onnxruntime-web's Sigmoid is 0 below about -16.6 where eager's (and the Session's) is a small
    // positive number, so a comparison with 0 after it differs in onnxruntime-web alone: wrong,
    // noted as ORT's Sigmoid (it agrees with each Sigmoid written out); a graph that is wrong
    // itself, Sigmoid or not, is not noted so
    const tail = await pool.run(fn('x.abs().mul(-10).sigmoid().gt(0).float()'), { id: 'sigmoid tail' });
    assert.deepEqual([tail.class, tail.ortSigmoid], ['wrong', true], JSON.stringify(tail));
    assert.match(tail.message, /\[ORT Sigmoid: the Session agrees at every size/);
    // and below -88.7, where 1 / (1 + exp(-x)) is 0 too and eager's is still positive (24:33082)
    const deep = await pool.run(fn('x.abs().mul(-1).sub(92).sigmoid().gt(0).float()'), { id: 'sigmoid deep tail' });
    assert.deepEqual([deep.class, deep.ortSigmoid], ['wrong', true], JSON.stringify(deep));
    const ours = await pool.run(fn('x.sigmoid().mul(om.Tracer.active ? 2 : 1)'), { id: 'wrong with a sigmoid' });
    assert.deepEqual([ours.class, ours.ortSigmoid], ['wrong', undefined], JSON.stringify(ours));
    // onnxruntime-web's Gelu computes 0.5 x (1 + erf), which cancels to 0 below about -5.9, where
    // eager's (and the Session's) is from erfc, small and negative: sign() differs there alone,
    // noted as ORT's Gelu (27:38257, 27:53594); a wrong graph with a Gelu is not
    const gelu = await pool.run(fn('om.nn.functional.gelu(x.abs().mul(-1).sub(6)).sign()'), { id: 'gelu tail' });
    assert.deepEqual([gelu.class, gelu.ortGelu, gelu.ortSigmoid], ['wrong', true, undefined], JSON.stringify(gelu));
    assert.match(gelu.message, /\[ORT Gelu: the Session agrees at every size/);
    const oursGelu = await pool.run(fn('om.nn.functional.gelu(x).mul(om.Tracer.active ? 2 : 1)'), { id: 'wrong with a gelu' });
    assert.deepEqual([oursGelu.class, oursGelu.ortGelu], ['wrong', undefined], JSON.stringify(oursGelu));
    // onnxruntime-web's Softmax gives 0 for a subnormal probability (here e^-95 / 4), which
    // eager, the Session and its own Exp give: gt(0) differs there alone (27:48155)
    const softmax = await pool.run(fn('om.cat([x.mul(0), x.mul(0).sub(95)], 1).softmax(1).gt(0).float()'), { id: 'softmax underflow' });
    assert.deepEqual([softmax.class, softmax.ortSoftmax], ['wrong', true], JSON.stringify(softmax));
    assert.match(softmax.message, /\[ORT Softmax: the Session agrees at every size/);
    const oursSoftmax = await pool.run(fn('x.softmax(1).mul(om.Tracer.active ? 2 : 1)'), { id: 'wrong with a softmax' });
    assert.deepEqual([oursSoftmax.class, oursSoftmax.ortSoftmax], ['wrong', undefined], JSON.stringify(oursSoftmax));
    // onnxruntime-web's tanh-approximate Gelu is an ulp of 1 off in its 1 + tanh, a third of GELU
    // (even its sign) near -5, where eager's is float tanh's rounding of the exact value: scaled up,
    // it differs there alone, noted as ORT's Gelu tanh (a probe at extreme inputs found it)
    const geluTanh = await pool.run(fn("om.nn.functional.gelu(x.abs().mul(-1).sub(5), { approximate: 'tanh' }).mul(1e7)"), { id: 'gelu tanh tail' });
    assert.deepEqual([geluTanh.class, geluTanh.ortGeluTanh, geluTanh.ortGelu], ['wrong', true, undefined], JSON.stringify(geluTanh));
    assert.match(geluTanh.message, /\[ORT Gelu tanh: the Session agrees at every size/);
    // onnxruntime-web's Elu computes exp(x) - 1 in float, 0 for x above about -3e-8 where eager's
    // expm1 gives x: sign() differs there alone, noted as ORT's Elu; a wrong graph with an Elu is not
    const elu = await pool.run(fn('om.nn.functional.elu(x.mul(1e-9)).sign()'), { id: 'elu near 0' });
    assert.deepEqual([elu.class, elu.ortElu], ['wrong', true], JSON.stringify(elu));
    assert.match(elu.message, /\[ORT Elu: the Session agrees at every size/);
    const oursElu = await pool.run(fn('om.nn.functional.elu(x).mul(om.Tracer.active ? 2 : 1)'), { id: 'wrong with an elu' });
    assert.deepEqual([oursElu.class, oursElu.ortElu], ['wrong', undefined], JSON.stringify(oursElu));
    const hang = await pool.run(fn('{ for (;;); }'), { id: 'hang' }, hangs);
    assert.equal(hang.class, 'crash');
    assert.equal(hang.at, 'hang');
    assert.equal(hang.message, 'no result within 5 s (the worker was stopped)');
    // a new worker runs the next model (a refused one: it needs no onnxruntime)
    assert.equal((await pool.run(cases.refused, { id: 'after the hang' }, hangs)).class, 'refused');
  });

  test('an assignment whose outputs are too large to compare is skipped with its reason, not run until the worker is stopped', async () => {
    // case 22:463 (x expanded to [B, B, B, 12], checked at B = 161) hung the runner: here the
    // same at a small budget, [B, B, 4] at B = 41 (6724 elements) over 2000, B = 11 (484) under it
    const r = await pool.run(fn('x.unsqueeze(0).expand(x.shape[0], -1, -1)'), { id: 'too large' }, { caseOptions: { checkElements: 2000 } });
    assert.deepEqual([r.class, r.checked, r.skipped], ['agree', 7, 1], JSON.stringify(r));
    assert.deepEqual(r.skipReasons, ['B=41: outputs of 6724 elements, more than a check compares (2000)']);
  });

  test('the shrinker keeps the failure and drops the rest', async () => {
    const c = {
      id: 'hand', family: 'flat', form: 'function', weightSeed: 1, tags: [], zeroChecks: [],
      inputs: [{ name: 'x', dtype: 'float32', shape: [5, 4], axes: ['B', null] }],
      decls: [{ name: 'k', code: '{ traced: 2, eager: 1 }' }],
      body: [
        { code: 'const [B, D] = x.shape;', defs: ['B', 'D'] },
        { code: 'const v1 = x.tanh();', defs: ['v1'] },
        { code: 'const v2 = v1.add(1).relu();', defs: ['v2'] },
        { code: 'const v3 = v2.mul(om.Tracer.active ? @k.traced : @k.eager);', defs: ['v3'] }, // wrong whatever the tracer does
        { code: 'const v4 = v3.softmax(-1);', defs: ['v4'] },
      ],
      result: ['v4', 'v1'],
      types: { x: 'float32[5,4]', v1: 'float32[5,4]', v2: 'float32[5,4]', v3: 'float32[5,4]', v4: 'float32[5,4]' },
    };
    const run = (cand) => pool.run(render(cand), { id: cand.id });
    const record = await run(c);
    assert.equal(record.class, 'wrong');
    const { case: small } = await shrink(c, record, run);
    assert.deepEqual(small.body.map((s) => s.code), ['const v3 = x.mul(om.Tracer.active ? @k.traced : @k.eager);'], render(small));
    assert.deepEqual(small.inputs[0].axes, [null, null], 'no symbol is needed for this failure');
  });
});

// onnxruntime-web 1.30's own bugs that a valid file meets (it loads, runs and agrees with
// ORT's graph optimizations disabled): MatMulScaleFusion folds a scalar Mul that other nodes
// still read into a FusedMatMul and drops it. Pinned below by its smallest form, so that the
// allowance goes once ORT is fixed; any other wrong model fails the test.
const KNOWN_ORT_BUGS = [/Invalid model\. Node input '[^']+' is not a graph input, initializer, or output of a previous node/];
const knownOrtBug = (r) => r.class === 'wrong' && r.ortOptimizer && KNOWN_ORT_BUGS.some((re) => re.test(r.message));

// Run as the random models meet it (in the pool's worker): onnxruntime-web refuses the file with
// its graph optimizations on, and with them disabled loads it, runs it and agrees at every size.
test('the known onnxruntime bug the random models meet still reproduces (else drop it from KNOWN_ORT_BUGS)', async () => {
  const r = await pool.run(`return { model: (y) => { const a = y.mul(0.5); return om.nn.functional.scaledDotProductAttention(a.div(6), a, a); },
    inputs: { y: { shape: [3, 7, 6], axes: [null, 'S', null] } } };`, { id: 'known ORT bug' });
  assert.ok(knownOrtBug(r), JSON.stringify(r));
  assert.match(r.message, KNOWN_ORT_BUGS[0]);
  assert.match(r.message, /\[ORT optimizer: with onnxruntime's graph optimizations disabled it loads, runs and agrees at every size/);
});

test(`random models: ${COUNT} models of seed ${SEED} agree with eager at every size, or are refused, and narrow no range where eager answers`, { timeout: 600000 }, async (t) => {
  const { records, ms } = await runBatch({ seed: SEED, count: COUNT, pool });
  const count = Object.fromEntries(CLASSES.map((k) => [k, records.filter((r) => r.class === k).length]));
  const known = records.filter(knownOrtBug);
  t.diagnostic(`${CLASSES.map((k) => `${k} ${count[k]}`).join(', ')}; refused ${((100 * count.refused) / COUNT).toFixed(1)}%; `
    + `${(ms / 1000).toFixed(1)} s (${(ms / COUNT).toFixed(1)} ms per model)`
    + (known.length ? `; of the wrong, ${known.length} meet the known onnxruntime bug (${known.map((r) => r.id).join(', ')})` : ''));
  // a range narrowed where eager still answers, or narrowed with no reason, is a silent change of
  // the declared range (docs/tracing.md, "Random models"): none either
  const narrowed = records.filter((r) => r.narrowedAnswers || r.unexplained);
  assert.deepEqual(narrowed.map((r) => `${r.id}: ${[...(r.narrowedAnswers ?? []), ...(r.unexplained ?? [])].join('; ')}`), []);
  if (records.some((r) => FAILING.includes(r.class) && !knownOrtBug(r))) {
    assert.fail(`${FAILING.map((k) => `${count[k]} ${k}`).join(', ')} of ${COUNT} random models (the first 10 below; all, shrunk: `
      + `npm run fuzz -- ${SEED} ${COUNT} --shrink; one: node tests/js/random/fuzz.mjs --case ${SEED}:INDEX --shrink)\n\n`
      + formatReport({ seed: SEED, count: COUNT, records, ms, maxFailures: 10 }));
  }
});
