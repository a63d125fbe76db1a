// What the Hugging Face port tests (tests/js/transformers-ports*.test.mjs) share: each port against
// the fixture tools/transformers_ports.py wrote for it (its state dict as
// tests/js/fixtures/transformers/<name>.safetensors, its outputs at several sizes as <name>.json).
// A test file names its ports ({ name: { Model, outputs, transient } }: the class, its outputs'
// names, its non-persistent buffers) and calls these.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { withTraced } from './helpers.mjs';
import { caseOutputs, compare, fromEntry, sizesText } from './families.mjs';
import { image } from './torchvision-ports.mjs';

const DIR = new URL('./fixtures/transformers/', import.meta.url);

/**
 * A case's inputs as { name: Tensor } (new tensors): the values the fixture holds, or an image's or
 * audio's made from its seed as tools/transformers_ports.py's image_input made them.
 */
export function caseInputs(c) {
  return Object.fromEntries(c.inputs.map((e) => [e.name, e.seed === undefined ? fromEntry(e) : image(e.shape, e.seed)]));
}

/** The JSON fixture of port `name`. */
export function loadFixture(name) {
  return JSON.parse(readFileSync(new URL(`${name}.json`, DIR), 'utf8'));
}

/**
 * The port built from the fixture's Hugging Face config, the .safetensors loaded strictly (its keys
 * are the port's state-dict keys; the transient buffers are the port's and absent from the file),
 * in eval mode.
 */
export function loadPort({ Model, transient }, name, fx) {
  const model = new Model(fx.config);
  const { tensors } = om.safetensors.loadFile(new URL(fx.file, DIR));
  try {
    assert.deepEqual(Object.keys(model.stateDict()).sort(), Object.keys(tensors).sort(), `${name}: state-dict keys`);
    const buffers = model.namedBuffers().map(([k]) => k);
    for (const k of transient) assert.ok(buffers.includes(k) && !(k in tensors), `${name}: ${k} is a non-persistent buffer`);
    assert.deepEqual(model.loadStateDict(tensors, { strict: true }), { missingKeys: [], unexpectedKeys: [] });
    return model.eval();
  } catch (e) {
    model.dispose();
    throw e;
  } finally {
    om.dispose(tensors);
  }
}

/** The model's outputs as an array (BERT returns two). */
export function run(model, inputs) {
  const out = model.forward(...Object.values(inputs));
  return Array.isArray(out) ? out : [out];
}

/** Test body: port `name` matches PyTorch eagerly at every fixture size (compare's bound); reports the errors. */
export function matchesEagerly(t, port, name) {
  const fx = loadFixture(name);
  const model = loadPort(port, name, fx);
  try {
    const errors = fx.cases.map((c) => om.tidy(() => {
      const outs = run(model, caseInputs(c));
      assert.equal(outs.length, c.outputs.length, 'output count');
      return Math.max(...outs.map((o, i) => compare(o, c.outputs[i], `${name} ${port.outputs[i]} at ${sizesText(c.sizes)}`)));
    }));
    t.diagnostic(`${name}: max |ours - PyTorch| ${errors.map((e) => e.toExponential(1)).join(', ')} at ${fx.cases.map((c) => sizesText(c.sizes)).join('; ')}`);
  } finally {
    model.dispose();
  }
}

/**
 * Test body: traces port `name` once at the fixture's trace case (or at case traceCase: an index
 * into fx.cases, or a function giving the examples: a size no case has at a batch of 2) with its axes symbolic (or as axes(fx) declares them: om.Dim objects), then runs
 * the .onnx in onnxruntime-web and the graph in the Session at every fixture case (against
 * PyTorch) and at three other sizes of every symbol (against eager); check(tm, t) inspects the
 * traced model. inRange(sizes) picks the fixture cases inside the declared ranges (all by default).
 */
export async function tracesEverywhere(t, port, name, check, axes = (fx) => fx.axes, traceCase = null, inRange = () => true) {
  const fx = loadFixture(name);
  const model = loadPort(port, name, fx);
  const reports = [];
  try {
    await withTraced((keep) => {
      const given = typeof traceCase === 'function' ? traceCase() : null;
      const at = given ? { sizes: Object.fromEntries(Object.entries(fx.axes).flatMap(([k, names]) => names.flatMap((a, d) => (a ? [[a, given[k].shape[d]]] : [])))) }
        : fx.cases[traceCase ?? fx.trace_case];
      const examples = given ?? caseInputs(at);
      const inputs = Object.fromEntries(Object.entries(examples).map(([k, v]) => [k, [v, axes(fx)[k]]]));
      const tm = om.trace(model, inputs, { outputNames: port.outputs });
      keep(tm, examples, run(model, examples), `eager at ${sizesText(at.sizes)} (traced)`, model);
      for (const c of fx.cases.filter((x) => inRange(x.sizes))) keep(tm, caseInputs(c), Object.values(caseOutputs(c)), `PyTorch at ${sizesText(c.sizes)}`);
      assert.deepEqual(tm.inputs.map((i) => i.shape), Object.entries(fx.axes).map(([k, names]) => names.map((a, d) => a ?? examples[k].shape[d])), 'graph input shapes');
      t.diagnostic(`${name}: ${tm.graph().nodes.length} nodes, traced at ${sizesText(at.sizes)}; symbols ${JSON.stringify(tm.symbols)}`);
      check?.(tm, t);
    }, { onReport: (label, r) => reports.push(`${label}: ${Math.max(...r.outputs.map((o) => o.maxError)).toExponential(1)}`) });
  } finally {
    model.dispose();
    if (reports.length) t.diagnostic(`${name}: max |onnx - reference| ${reports.join('; ')}`);
  }
  assert.equal(reports.length, 4 + fx.cases.filter((x) => inRange(x.sizes)).length, 'every run reported');
}

/** tm's symbols as { name: [min, max, narrowedBy] }, and every one checked from 1 to its max (2^15 when unbounded). */
export function ranges(tm) {
  for (const s of tm.symbols) assert.deepEqual(s.checked, { min: 1, max: Math.min(s.max, 32768) }, `${s.name}: the range checked`);
  return Object.fromEntries(tm.symbols.map((s) => [s.name, [s.min, s.max, s.narrowedBy]]));
}
