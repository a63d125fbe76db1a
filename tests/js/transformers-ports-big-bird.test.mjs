// BigBird of examples/transformers/ against PyTorch (the harness is tests/js/transformers-ports.mjs):
// attention_type block_sparse, which upstream switches to original_full (BERT's attention) at
// lengths up to (5 + 2 * num_random_blocks) * block_size, a branch on the length; above it the ids
// and mask are padded to a multiple of block_size (_pad_to_block_size), the band, from and to masks
// made (create_masks_for_block_sparse_attn), the five parts of bigbird_block_sparse_attention
// computed with the random blocks eval mode makes (block 0, gathered by torch_gather_b2), and the
// output sliced back. Two configurations: block_size 2 with one random block (threshold 14) and
// block_size 4 with two (threshold 36). Each loads PyTorch's safetensors strictly, matches PyTorch
// eagerly at 1, odd lengths, the threshold - 1, itself, + 1, + 2 and far above, and is traced once
// with symbolic batch and seq, on one side of the threshold: the .onnx runs in onnxruntime-web and
// the graph in the Session at every fixture length, on both sides, against PyTorch.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced } from './helpers.mjs';
import { caseOutputs, sizesText } from './families.mjs';
import { caseInputs, loadFixture, loadPort, matchesEagerly, run } from './transformers-ports.mjs';
import { BigBirdModel } from '../../examples/transformers/big_bird.mjs';

memoryHooks();

const TRANSIENT = ['embeddings.position_ids', 'embeddings.token_type_ids'];
const PORTS = {
  big_bird: { Model: BigBirdModel, outputs: ['last_hidden_state', 'pooler_output'], transient: TRANSIENT },
  big_bird_b4: { Model: BigBirdModel, outputs: ['last_hidden_state', 'pooler_output'], transient: TRANSIENT },
};

describe('BigBird loads PyTorch\'s safetensors strictly and matches PyTorch eagerly on both sides of its length threshold', () => {
  for (const name of Object.keys(PORTS)) test(name, (t) => matchesEagerly(t, PORTS[name], name));
});

/**
 * Traces port `name` at its trace case with the batch fixed (the case's) and seq as `seq` (a name
 * or an om.Dim), runs the .onnx in onnxruntime-web and the graph in the Session at every fixture
 * case of that batch whose length the range holds (against PyTorch) and at other lengths inside it
 * (against eager); returns the traced model's symbols and the lengths checked against PyTorch.
 */
async function tracesInside(t, name, seq) {
  const port = PORTS[name];
  const fx = loadFixture(name);
  const model = loadPort(port, name, fx);
  const lengths = [];
  try {
    return await withTraced((keep) => {
      const at = fx.cases[fx.trace_case];
      const examples = caseInputs(at);
      const inputs = Object.fromEntries(Object.entries(examples).map(([k, v]) => [k, [v, [null, seq]]]));
      const tm = om.trace(model, inputs, { outputNames: port.outputs });
      keep(tm, examples, run(model, examples), `eager at ${sizesText(at.sizes)} (traced)`, model);
      const [s] = tm.symbols;
      for (const c of fx.cases) {
        if (c.sizes.batch !== at.sizes.batch || c.sizes.seq < s.min || c.sizes.seq > s.max) continue;
        keep(tm, caseInputs(c), Object.values(caseOutputs(c)), `PyTorch at ${sizesText(c.sizes)}`);
        lengths.push(c.sizes.seq);
      }
      t.diagnostic(`${name}: ${tm.graph().nodes.length} nodes, traced at ${sizesText(at.sizes)}; symbols ${JSON.stringify(tm.symbols)}; against PyTorch at seq ${lengths}`);
      return { symbols: tm.symbols.map(({ name: n, min, max, narrowedBy, branches }) => [n, min, max, narrowedBy, branches]), lengths };
    });
  } finally {
    model.dispose();
  }
}

/** The SymbolicShape refusal of tracing port `name` at its trace case with these axes (input name -> axes). */
function refusal(name, axes) {
  const fx = loadFixture(name);
  const model = loadPort(PORTS[name], name, fx);
  try {
    return om.tidy(() => {
      const examples = caseInputs(fx.cases[fx.trace_case]);
      const inputs = Object.fromEntries(Object.entries(examples).map(([k, v]) => [k, [v, axes]]));
      let error = null;
      try {
        om.trace(model, inputs).dispose();
      } catch (e) {
        error = e;
      }
      assert.ok(error instanceof om.TraceError, `${name}: the trace is refused (${error})`);
      assert.equal(error.kind, 'SymbolicShape', error.message);
      return error.message;
    });
  } finally {
    model.dispose();
  }
}

describe('BigBird traced with a symbolic length: right on both sides of the threshold, or refused naming the declaration that holds', () => {
  // traced below the threshold (full attention), the runs above it take the other path: the graph
  // is an If on the length, each side traced on its own, right up to the position table's end
  // (128: eager fails past it, the only narrowing)
  test('big_bird_b4 traced at 13 (original_full): an If on seq, full attention to 36, block-sparse from 37', async (t) => {
    const { symbols, lengths } = await tracesInside(t, 'big_bird_b4', 'seq');
    assert.deepEqual(symbols, [['seq', 1, 128, 'expand (call 2)', [{ min: 1, max: 36 }, { min: 37, max: 128 }]]]);
    assert.deepEqual(lengths, [13, 7, 36, 38]);
  });

  // traced above it (block-sparse), the runs below take the other path where the model still
  // answers: refused, naming the declaration that holds on the traced side
  test('big_bird traced at 31 (block-sparse) with seq undeclared: refused, naming om.Dim(\'seq\', { min: 15, max: 128 })', () => {
    const message = refusal('big_bird', [null, 'seq']);
    assert.match(message, /^pad \(call \d+\): at seq=1 the model calls \w+ here \(call \d+\), where the model gives an answer that the graph would not: the graph holds for the sizes om\.Dim\('seq', \{ min: 15, max: 128 \}\) declares/);
  });

  test('big_bird with om.Dim(\'seq\', { min: 15, max: 128 }): block-sparse from the threshold + 1 to the position table\'s end', async (t) => {
    const { symbols, lengths } = await tracesInside(t, 'big_bird', om.Dim('seq', { min: 15, max: 128 }));
    assert.deepEqual(symbols, [['seq', 15, 128, null, undefined]]);
    assert.deepEqual(lengths, [31, 15, 17]);
  });

  // upstream repeats the random blocks' table once per batch row (torch.cat([rand_attn for _ in
  // range(batch_size)])): a list as long as the batch, of one constant, which the trace refuses
  test('a symbolic batch is refused at the random blocks\' table, one copy per batch row', () => {
    const message = refusal('big_bird_b4', ['batch', 'seq']);
    assert.match(message, /do not broadcast \(3 vs 2 at dim 0\)\), so the graph would only hold at the traced sizes; it holds for the sizes om\.Dim\('batch', \{ min: 2, max: 2 \}\)/);
  });
});
