// Hugging Face's Mamba (examples/transformers/mamba.mjs: MambaForCausalLM, MambaMixer.slow_forward)
// against PyTorch (tools/mamba_ports.py writes the fixture; the harness is
// tests/js/transformers-ports.mjs). The port loads PyTorch's safetensors strictly (lm_head tied to
// the embeddings) and matches PyTorch eagerly at lengths 1, 2 and 3 (shorter than the conv
// kernel), 4 (the kernel), odd and longer ones and 64. Traced with a symbolic batch at the
// example's length (the scan unrolled), the .onnx in onnxruntime-web and the graph in the Session
// agree with PyTorch at batches 2 and 3 and with eager at other batches. With a symbolic length
// too the scan rolls into one ONNX Loop per layer (its stacked steps meet the conv's output after
// the loop, the D skip; the conv cropped as upstream does, [..., :seq_len], its end the length),
// right against PyTorch at every fixture length from 1 to 64.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced } from './helpers.mjs';
import { caseOutputs } from './families.mjs';
import { caseInputs, loadFixture, loadPort, matchesEagerly, run } from './transformers-ports.mjs';
import { MambaForCausalLM } from '../../examples/transformers/mamba.mjs';

memoryHooks();

const PORT = { Model: MambaForCausalLM, outputs: ['logits'], transient: [] };

describe('Mamba loads PyTorch\'s safetensors strictly and matches PyTorch eagerly at every length', () => {
  test('mamba', (t) => matchesEagerly(t, PORT, 'mamba'));
});

/**
 * Traces the port loaded with the fixture's weights: body(keep, fx, model, ex) traces and keeps the
 * checks (withTraced runs them in onnxruntime-web and the Session); each check's largest error is
 * reported, and the model disposed, whatever happens.
 */
async function traced(t, body) {
  const fx = loadFixture('mamba');
  const model = loadPort(PORT, 'mamba', fx);
  const reports = [];
  try {
    await withTraced((keep) => body(keep, fx, model, caseInputs(fx.cases[0]).input_ids),
      { onReport: (label, r) => reports.push(`${label}: ${Math.max(...r.outputs.map((o) => o.maxError)).toExponential(1)}`) });
  } finally {
    model.dispose();
    t.diagnostic(`mamba: max |onnx - reference| ${reports.join('; ')}`);
  }
}

describe('Mamba traced: a symbolic batch at a fixed length, and a symbolic batch and length (one Loop per layer), in both engines', () => {
  test('symbolic batch at length 6 (the scan unrolled): right against PyTorch at batches 2 and 3, and eager at others', async (t) => {
    await traced(t, (keep, fx, model, ex) => {
      const tm = om.trace(model, { input_ids: [ex, ['batch', null]] }, { outputNames: ['logits'] });
      assert.deepEqual(tm.inputs.map((i) => i.shape), [['batch', 6]]);
      assert.deepEqual(tm.symbols.map((s) => [s.name, s.min, s.max, s.narrowedBy]), [['batch', 1, Infinity, null]]);
      keep(tm, { input_ids: ex }, run(model, { input_ids: ex }), 'eager at batch=2 (traced)', model);
      const at6 = fx.cases.filter((c) => c.sizes.seq === 6);
      assert.deepEqual(at6.map((c) => c.sizes.batch), [2, 3]);
      for (const c of at6) keep(tm, caseInputs(c), Object.values(caseOutputs(c)), `PyTorch at batch=${c.sizes.batch}`);
    });
  });

  test('symbolic batch and seq: one Loop per layer, right against PyTorch at every length from 1 to 64 in both engines', async (t) => {
    await traced(t, (keep, fx, model, ex) => {
      const tm = om.trace(model, { input_ids: [ex, ['batch', 'seq']] }, { outputNames: ['logits'] });
      assert.deepEqual(tm.inputs.map((i) => i.shape), [['batch', 'seq']]);
      assert.deepEqual(tm.symbols.map((s) => [s.name, s.min, s.narrowedBy]), [['batch', 1, null], ['seq', 1, null]]);
      const loops = tm.graph().nodes.filter((n) => n.opType === 'Loop').length;
      assert.equal(loops, fx.config.num_hidden_layers, 'one Loop per layer');
      keep(tm, { input_ids: ex }, run(model, { input_ids: ex }), 'eager at batch=2, seq=6 (traced)', model);
      assert.deepEqual(fx.cases.map((c) => c.sizes.seq), [6, 1, 2, 3, 4, 5, 6, 13, 64]);
      for (const c of fx.cases) keep(tm, caseInputs(c), Object.values(caseOutputs(c)), `PyTorch at batch=${c.sizes.batch}, seq=${c.sizes.seq}`);
    });
  });
});
