// Hugging Face's Mamba (examples/transformers/mamba.mjs: MambaForCausalLM, MambaMixer.slow_forward)
// against PyTorch (tools/mamba_ports.py writes the fixture; the harness is
// tests/js/transformers-ports.mjs). The port loads PyTorch's safetensors strictly (lm_head tied to
// the embeddings) and matches PyTorch eagerly at lengths 1, 2 and 3 (shorter than the conv
// kernel), 4 (the kernel), odd and longer ones and 64. Traced with symbolic batch and seq, the
// selective scan (a JS loop over the length, its steps stacked, then added to the conv's output
// and gated) rolls into one ONNX Loop per layer where the conv's crop is written from the end
// (`[..., :-(conv_kernel - 1)]`, the same values): the .onnx in onnxruntime-web and the graph in
// the Session agree with PyTorch at every fixture length (1 included: no repeat at all) and with
// eager at three other sizes of each symbol. Upstream's crop to `seq_len` is a size computed beside
// the loop, which the rolled graph would hold fixed: that trace is refused (SymbolicShape), not baked.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks } from './helpers.mjs';
import { caseInputs, loadFixture, loadPort, matchesEagerly, tracesEverywhere } from './transformers-ports.mjs';
import { MambaBlock, MambaForCausalLM, MambaMixer, MambaModel } from '../../examples/transformers/mamba.mjs';

memoryHooks();

/** The conv cropped from its end: the same outputs as upstream's crop to seq_len, with no size read beside the scan. */
class MixerCroppedFromEnd extends MambaMixer {
  causalConv(hiddenStates) {
    return this.conv1d.forward(hiddenStates).slice(-1, 0, -(this.conv_kernel_size - 1));
  }
}
class BlockCroppedFromEnd extends MambaBlock { static Mixer = MixerCroppedFromEnd; }
class ModelCroppedFromEnd extends MambaModel { static Block = BlockCroppedFromEnd; }
class MambaCroppedFromEnd extends MambaForCausalLM { static Model = ModelCroppedFromEnd; }

const PORT = { Model: MambaForCausalLM, outputs: ['logits'], transient: [] };
const CROPPED = { Model: MambaCroppedFromEnd, outputs: ['logits'], transient: [] };

describe('Mamba loads PyTorch\'s safetensors strictly and matches PyTorch eagerly at every length', () => {
  test('mamba', (t) => matchesEagerly(t, PORT, 'mamba'));
});

describe('Mamba traced with symbolic batch and seq', () => {
  test('the conv cropped from its end: one Loop per layer, right against PyTorch from length 1 to 64', (t) => tracesEverywhere(t, CROPPED, 'mamba', (tm) => {
    const ops = tm.graph().nodes.map((n) => n.opType);
    assert.equal(ops.filter((o) => o === 'Loop').length, 2, `one Loop per layer: ${ops}`);
    // the declared ranges kept, nothing narrowed; the rolled graph checked against eager far above the example
    assert.deepEqual(tm.symbols.map((s) => [s.name, s.min, s.max, s.narrowedBy]), [['batch', 1, Infinity, null], ['seq', 1, Infinity, null]]);
    assert.ok(tm.symbols[1].checked.max >= 64, `seq checked to ${tm.symbols[1].checked.max}`);
  }));

  test('upstream\'s crop to seq_len beside the scan: refused with SymbolicShape, naming the loop and the size beside it', () => {
    const fx = loadFixture('mamba');
    const model = loadPort(PORT, 'mamba', fx);
    try {
      om.tidy(() => assert.throws(() => om.trace(model, { input_ids: [caseInputs(fx.cases[0]).input_ids, ['batch', 'seq']] }), (e) => {
        assert.ok(e instanceof om.TraceError, String(e));
        assert.equal(e.kind, 'SymbolicShape');
        assert.match(e.message, /a loop over the size, unrolled/);
        assert.match(e.message, /the Loop graphs differ besides the trip count \(the size reaches a size computed beside the loop\)/);
        return true;
      }));
    } finally {
      model.dispose();
    }
  });
});
