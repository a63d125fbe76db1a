// BigBird of examples/transformers/ against PyTorch (the harness is tests/js/transformers-ports.mjs):
// attention_type block_sparse, which upstream switches to original_full (BERT's attention) at
// lengths up to (5 + 2 * num_random_blocks) * block_size, a branch on the length; above it the ids
// and mask are padded to a multiple of block_size (_pad_to_block_size), the band, from and to masks
// made (create_masks_for_block_sparse_attn), the five parts of bigbird_block_sparse_attention
// computed with the random blocks eval mode makes (block 0, gathered by torch_gather_b2), and the
// output sliced back. Two configurations: block_size 2 with one random block (threshold 14) and
// block_size 4 with two (threshold 36). Each loads PyTorch's safetensors strictly and matches PyTorch
// eagerly at 1, odd lengths, the threshold - 1, itself, + 1, + 2 and far above. Traced with a
// symbolic length (the batch fixed, or symbolic too: checked at batch 1, 2 and 5) below the threshold or
// above it, the graph is an If on the length; declared above it, it holds there alone. Each
// traced graph runs in onnxruntime-web and the Session at the fixture lengths of its batch
// against PyTorch, and at other lengths (1, far above) against eager.
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

  test('block-sparse in training mode is refused (the random blocks come from numpy\'s generator); full attention trains', () => {
    const model = new BigBirdModel({ vocab_size: 8, hidden_size: 4, num_hidden_layers: 1, num_attention_heads: 2, intermediate_size: 4,
      max_position_embeddings: 32, block_size: 2, num_random_blocks: 1 });
    try {
      om.tidy(() => {
        const ids = (n) => om.zeros([1, n], { dtype: 'int64' });
        assert.deepEqual(model.forward(ids(14))[0].shape, [1, 14, 4], 'at the threshold: full attention');
        assert.throws(() => model.forward(ids(15)), (e) => e instanceof Error
          && e.message === 'BigBirdBlockSparseAttention: random attention blocks in training mode are not ported (numpy\'s generator); use eval()');
        model.eval();
        assert.deepEqual(model.forward(ids(15))[0].shape, [1, 15, 4], 'above it in eval mode: block-sparse, padded to 16 and sliced back');
      });
    } finally {
      model.dispose();
    }
  });

  test('a config upstream refuses is refused, naming it', () => {
    for (const [config, re] of [
      [{ attention_type: 'sparse' }, /^BigBirdAttention: attention_type can either be original_full or block_sparse, but is sparse$/],
      [{ hidden_size: 30, num_attention_heads: 4 }, /^BigBirdBlockSparseAttention: The hidden size 30 is not a multiple of the number of attention heads 4\.$/],
      [{ hidden_act: 'gelu' }, /^BigBirdModel: hidden_act "gelu" is not ported \(only gelu_new\)$/],
    ]) assert.throws(() => new BigBirdModel({ vocab_size: 8, hidden_size: 8, num_hidden_layers: 1, num_attention_heads: 2, ...config }), (e) => e instanceof Error && re.test(e.message));
  });
});

/**
 * Traces port `name` at its trace case (or the case of length `at`) with the batch as `batch` (null:
 * fixed, the case's) and seq as `seq` (a name or an om.Dim), runs the .onnx in onnxruntime-web and the graph in the Session at every fixture
 * case of that batch (of every batch where it is symbolic) whose length the range holds (against PyTorch), at length far (at
 * batch `farBatch`, the case's by default) and at other lengths inside it (against eager); returns the traced model's symbols
 * and the lengths checked against PyTorch ([batch, seq] pairs where the batch is symbolic).
 */
async function tracesInside(t, name, seq, far, at = null, batch = null, farBatch = null) {
  const port = PORTS[name];
  const fx = loadFixture(name);
  const model = loadPort(port, name, fx);
  const lengths = [];
  try {
    return await withTraced((keep) => {
      const traced = at === null ? fx.cases[fx.trace_case] : fx.cases.find((c) => c.sizes.seq === at);
      const examples = caseInputs(traced);
      const inputs = Object.fromEntries(Object.entries(examples).map(([k, v]) => [k, [v, [batch, seq]]]));
      const tm = om.trace(model, inputs, { outputNames: port.outputs });
      keep(tm, examples, run(model, examples), `eager at ${sizesText(traced.sizes)} (traced)`, model);
      const s = tm.symbols.at(-1);
      for (const c of fx.cases) {
        if ((batch === null && c.sizes.batch !== traced.sizes.batch) || c.sizes.seq < s.min || c.sizes.seq > s.max) continue;
        keep(tm, caseInputs(c), Object.values(caseOutputs(c)), `PyTorch at ${sizesText(c.sizes)}`);
        lengths.push(batch === null ? c.sizes.seq : [c.sizes.batch, c.sizes.seq]);
      }
      // far above the fixture's lengths at this batch, against eager (the last row padded by 7)
      const b = farBatch ?? examples.input_ids.shape[0];
      const farIds = om.rand([b, far], { seed: far }).mul(fx.config.vocab_size).floor().long();
      const farMask = om.tensor(Array.from({ length: b }, (_, i) => Array.from({ length: far }, (_, j) => (i === b - 1 && j >= far - 7 ? 0 : 1))), { dtype: 'int64' });
      const farInputs = { input_ids: farIds, attention_mask: farMask };
      keep(tm, farInputs, run(model, farInputs), `eager at batch=${b} seq=${far}`);
      t.diagnostic(`${name}: ${tm.graph().nodes.length} nodes, traced at ${sizesText(traced.sizes)}; symbols ${JSON.stringify(tm.symbols)}; against PyTorch at seq ${lengths}`);
      return { symbols: tm.symbols.map(({ name: n, min, max, narrowedBy, branches }) => [n, min, max, narrowedBy, branches]), lengths };
    });
  } finally {
    model.dispose();
  }
}

describe('BigBird traced with a symbolic length: right on both sides of the threshold, or refused naming the declaration that holds', () => {
  // traced below the threshold (full attention), the runs above it take the other path: the graph
  // is an If on the length, each side traced on its own, right up to the position table's end
  // (128: eager fails past it, the only narrowing)
  test('big_bird_b4 traced at 13 (original_full): an If on seq, full attention to 36, block-sparse from 37 to 128', async (t) => {
    const { symbols, lengths } = await tracesInside(t, 'big_bird_b4', 'seq', 100);
    assert.deepEqual(symbols, [['seq', 1, 128, 'expand (call 2)', [{ min: 1, max: 36 }, { min: 37, max: 128 }]]]);
    assert.deepEqual(lengths, [13, 7, 36, 38]);
  });

  // traced above it (block-sparse), the runs below take the other path where the model still
  // answers: the graph is an If on the length too, the piece below traced at the threshold
  test('big_bird traced at 31 (block-sparse): an If on seq, full attention to 14, block-sparse from 15 to 128', async (t) => {
    const { symbols, lengths } = await tracesInside(t, 'big_bird', 'seq', 100);
    assert.deepEqual(symbols, [['seq', 1, 128, 'expand (call 2)', [{ min: 1, max: 14 }, { min: 15, max: 128 }]]]);
    assert.deepEqual(lengths, [31, 5, 13, 15, 17]); // both sides of the threshold (14, 15), then far above against eager
  });

  test('big_bird_b4 traced at 41 (block-sparse): an If on seq, full attention to 36, block-sparse from 37 to 128', async (t) => {
    const { symbols, lengths } = await tracesInside(t, 'big_bird_b4', 'seq', 100, 41);
    assert.deepEqual(symbols, [['seq', 1, 128, 'expand (call 2)', [{ min: 1, max: 36 }, { min: 37, max: 128 }]]]);
    assert.deepEqual(lengths, [1, 35, 37, 41, 100]); // at batch 1: 1 and the threshold's side (35), across it, far above
  });

  test('big_bird with om.Dim(\'seq\', { min: 15, max: 128 }): block-sparse from the threshold + 1 to the position table\'s end', async (t) => {
    const { symbols, lengths } = await tracesInside(t, 'big_bird', om.Dim('seq', { min: 15, max: 128 }), 128);
    assert.deepEqual(symbols, [['seq', 15, 128, null, undefined]]);
    assert.deepEqual(lengths, [31, 15, 17]);
  });

  // upstream's switch is sticky (set_attention_type replaces the attention modules): once refused,
  // as the runs at other lengths switched the model for the runs after them. om.trace now starts
  // each run from the model's fields as given, so each length sees the model as loaded, as a fresh
  // model answers there: the same If on the length as the port's, right on both sides against
  // PyTorch and against the port's (non-sticky) eager answers at other sizes; the model is left as
  // the recording run (at 31, block-sparse) left it
  test('upstream\'s sticky switch, written as upstream writes it: each run starts from the model as loaded, so the same If on seq as the port\'s', async (t) => {
    const sticky = class extends BigBirdModel {
      forward(inputIds, attentionMask) {
        const max = (5 + 2 * this.config.num_random_blocks) * this.config.block_size;
        if (this.attention_type === 'block_sparse' && inputIds.shape[1] <= max) this.setAttentionType('original_full');
        return super.forward(inputIds, attentionMask);
      }
    };
    const fx = loadFixture('big_bird');
    const model = loadPort({ ...PORTS.big_bird, Model: sticky }, 'big_bird', fx);
    const reference = loadPort(PORTS.big_bird, 'big_bird', fx); // the port: the answers of a model as loaded
    try {
      await withTraced((keep) => {
        const at = fx.cases[fx.trace_case];
        const examples = caseInputs(at);
        const tm = om.trace(model, Object.fromEntries(Object.entries(examples).map(([k, v]) => [k, [v, [null, 'seq']]])), { outputNames: PORTS.big_bird.outputs });
        assert.equal(model.attention_type, 'block_sparse', 'as the recording run (at 31) left it');
        const s = tm.symbols.at(-1);
        assert.deepEqual([s.min, s.max, s.branches], [1, 128, [{ min: 1, max: 14 }, { min: 15, max: 128 }]]);
        keep(tm, examples, run(reference, examples), `eager at ${sizesText(at.sizes)} (traced)`, reference);
        for (const c of fx.cases.filter((x) => x.sizes.batch === at.sizes.batch)) keep(tm, caseInputs(c), Object.values(caseOutputs(c)), `PyTorch at ${sizesText(c.sizes)}`);
        t.diagnostic(`sticky big_bird: ${tm.graph().nodes.length} nodes; symbols ${JSON.stringify(tm.symbols)}`);
      });
    } finally {
      model.dispose();
      reference.dispose();
    }
  });

});

describe('BigBird traced with a symbolic batch and length: one graph for every batch, on both sides of the threshold', () => {
  // upstream repeats the random blocks' table once per batch row and gathers each row's random
  // mask in a loop over the batch; the port writes the two as an expand and one gather (exact in
  // eval mode, where the table is batch-independent), so the batch is symbolic too
  test('big_bird traced at batch 2, length 31: an If on seq, right at batch 1, 2 and 5 either side of the threshold (14, 15) and far above', async (t) => {
    const { symbols, lengths } = await tracesInside(t, 'big_bird', 'seq', 100, null, 'batch', 5);
    assert.deepEqual(symbols, [['batch', 1, Infinity, null, undefined], ['seq', 1, 128, 'expand (call 2)', [{ min: 1, max: 14 }, { min: 15, max: 128 }]]]);
    assert.deepEqual(lengths, [[2, 31], [1, 1], [2, 5], [1, 12], [2, 13], [1, 14], [2, 15], [1, 16], [2, 17], [1, 64], [1, 100], [5, 14], [5, 15]]);
  });
});
