// The random-model differential test of the tracer (tests/js/random/, docs/tracing.md "Random
// models"): a few hundred generated models, each traced with symbolic axes and run in
// onnxruntime-web against the eager model at the traced sizes and at other sizes of every
// symbol. Every one must agree or be refused with a TraceError: none may be wrong (a graph that
// computes something else at some size), crash, or be invalid (a generator bug). The refused
// rate is reported, not asserted. A failure prints the report with the failing models' sources;
// `npm run fuzz -- 1 400 --shrink` reruns the same models and shrinks each failing one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runBatch, formatReport, CLASSES, FAILING } from './random/batch.mjs';

const SEED = 1;
const COUNT = 400;

test(`random models: ${COUNT} models of seed ${SEED} agree with eager at every size, or are refused`, { timeout: 600000 }, async (t) => {
  const { records, ms } = await runBatch({ seed: SEED, count: COUNT });
  const count = Object.fromEntries(CLASSES.map((k) => [k, records.filter((r) => r.class === k).length]));
  t.diagnostic(`${CLASSES.map((k) => `${k} ${count[k]}`).join(', ')}; refused ${((100 * count.refused) / COUNT).toFixed(1)}%; `
    + `${(ms / 1000).toFixed(1)} s (${(ms / COUNT).toFixed(1)} ms per model)`);
  if (records.some((r) => FAILING.includes(r.class))) {
    assert.fail(`${FAILING.map((k) => `${count[k]} ${k}`).join(', ')} of ${COUNT} random models (the first 10 below; all, shrunk: `
      + `npm run fuzz -- ${SEED} ${COUNT} --shrink; one: node tests/js/random/fuzz.mjs --case ${SEED}:INDEX --shrink)\n\n`
      + formatReport({ seed: SEED, count: COUNT, records, ms, maxFailures: 10 }));
  }
});
