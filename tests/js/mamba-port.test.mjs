// Hugging Face's Mamba (examples/transformers/mamba.mjs: MambaForCausalLM, MambaMixer.slow_forward)
// against PyTorch (tools/mamba_ports.py writes the fixture; the harness is
// tests/js/transformers-ports.mjs). The port loads PyTorch's safetensors strictly (lm_head tied to
// the embeddings) and matches PyTorch eagerly at lengths 1, 2 and 3 (shorter than the conv
// kernel), 4 (the kernel), odd and longer ones and 64. Traced with a symbolic batch at the
// example's length (the scan unrolled), the .onnx in onnxruntime-web and the graph in the Session
// agree with PyTorch at batches 2 and 3 and with eager at other batches. With a symbolic length
// the trace is refused (SymbolicShape), not baked in: the scan's stacked steps meet the conv's
// output after the loop, which the record run takes for a call failing at the next length
// (docs/tracing.md, "Mamba's selective scan": open).
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

describe('Mamba traced: a symbolic batch at a fixed length in both engines; a symbolic length refused, not baked', () => {
  test('symbolic batch at length 6 (the scan unrolled): right against PyTorch at batches 2 and 3, and eager at others', async (t) => {
    const fx = loadFixture('mamba');
    const model = loadPort(PORT, 'mamba', fx);
    const reports = [];
    try {
      await withTraced((keep) => {
        const ex = caseInputs(fx.cases[0]).input_ids;
        const tm = om.trace(model, { input_ids: [ex, ['batch', null]] }, { outputNames: ['logits'] });
        assert.deepEqual(tm.inputs.map((i) => i.shape), [['batch', 6]]);
        assert.deepEqual(tm.symbols.map((s) => [s.name, s.min, s.max, s.narrowedBy]), [['batch', 1, Infinity, null]]);
        keep(tm, { input_ids: ex }, run(model, { input_ids: ex }), 'eager at batch=2 (traced)', model);
        const at6 = fx.cases.filter((c) => c.sizes.seq === 6);
        assert.deepEqual(at6.map((c) => c.sizes.batch), [2, 3]);
        for (const c of at6) keep(tm, caseInputs(c), Object.values(caseOutputs(c)), `PyTorch at batch=${c.sizes.batch}`);
      }, { onReport: (label, r) => reports.push(`${label}: ${Math.max(...r.outputs.map((o) => o.maxError)).toExponential(1)}`) });
    } finally {
      model.dispose();
      t.diagnostic(`mamba: max |onnx - reference| ${reports.join('; ')}`);
    }
  });

  test('symbolic seq: refused with SymbolicShape at the next length, the graph never baked at 6', () => {
    const fx = loadFixture('mamba');
    const model = loadPort(PORT, 'mamba', fx);
    try {
      om.tidy(() => assert.throws(() => om.trace(model, { input_ids: [caseInputs(fx.cases[0]).input_ids, ['batch', 'seq']] }), (e) => {
        assert.ok(e instanceof om.TraceError, String(e));
        assert.equal(e.kind, 'SymbolicShape');
        assert.match(e.message, /\bseq=7\b/);
        return true;
      }));
    } finally {
      model.dispose();
    }
  });
});
