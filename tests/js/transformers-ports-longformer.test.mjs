// Longformer of examples/transformers/ against PyTorch (the harness is tests/js/transformers-ports.mjs):
// the input padded to a multiple of attention_window 6 and the output sliced back
// (_pad_to_window_size), sliding-window attention over overlapping chunks (upstream's as_strided
// views, here unfold), _pad_and_transpose_last_two_dims, _pad_and_diagonalize,
// _mask_invalid_locations written in place into slices, and global attention on the first token.
// It loads PyTorch's safetensors strictly, matches PyTorch eagerly at every fixture size (1, every
// residue of the window, 10x the traced length and more), with and without global attention, and is
// traced once with symbolic batch and seq: the .onnx runs in onnxruntime-web and the graph in the
// Session at the fixture's lengths (against PyTorch) and at three other sizes (against eager).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks } from './helpers.mjs';
import { caseInputs, loadFixture, loadPort, matchesEagerly, ranges, tracesEverywhere } from './transformers-ports.mjs';
import { LongformerModel, LongformerSelfAttention, nonzeroAsTuple } from '../../examples/transformers/longformer.mjs';

memoryHooks();

const PORTS = {
  longformer: { Model: LongformerModel, outputs: ['last_hidden_state', 'pooler_output'], transient: [] },
  longformer_global: { Model: LongformerModel, outputs: ['last_hidden_state', 'pooler_output'], transient: [] },
  longformer_windows: { Model: LongformerModel, outputs: ['last_hidden_state', 'pooler_output'], transient: [] },
};

describe('Longformer loads PyTorch\'s safetensors strictly and matches PyTorch eagerly at every size', () => {
  test('longformer', (t) => matchesEagerly(t, PORTS.longformer, 'longformer'));
  test('longformer_windows', (t) => matchesEagerly(t, PORTS.longformer_windows, 'longformer_windows'));
  // the global path writes finfo.min into a permuted view of the scores of the global keys
  // (`attn_probs_from_global_key[i0, :, :, i1] = min`), and the chunked scores are written into
  // slices of new_empty: writes autograd records as PyTorch's does, so the forward is the same with
  // grad on and off
  test('longformer_global (under noGrad)', (t) => om.noGrad(() => matchesEagerly(t, PORTS.longformer_global, 'longformer_global')));
  test('longformer_global with grad on', (t) => matchesEagerly(t, PORTS.longformer_global, 'longformer_global'));

  // and a backward through them gives the projections their gradient: the query weight's, along
  // one direction, against a central difference of the summed output
  test('with grad on, a backward through the chunked scores gives the query projection its gradient', () => {
    const fx = loadFixture('longformer');
    const model = loadPort(PORTS.longformer, 'longformer', fx);
    try {
      om.tidy(() => {
        const inputs = Object.values(caseInputs(fx.cases[0]));
        const w = model.encoder.layer.at(0).attention.self.query.weight;
        const [h] = model.forward(...inputs);
        assert.equal(h.requiresGrad, true);
        h.sum().backward();
        assert.notEqual(w.grad, null, 'the query weight has a gradient');
        const d = om.randn(w.shape, { seed: 5 });
        const along = w.grad.mul(d).sum().item();
        const eps = 1e-2;
        const at = (sign) => om.noGrad(() => {
          const before = w.detach().clone();
          w.detach().add_(d.mul(sign * eps));
          const v = model.forward(...inputs)[0].sum().item();
          w.detach().copy_(before);
          return v;
        });
        const numeric = (at(1) - at(-1)) / (2 * eps);
        assert.ok(Math.abs(along) > 1e-3, `a gradient that moves the output (${along})`);
        assert.ok(Math.abs(numeric - along) <= 2e-2 * Math.abs(along) + 1e-3, `query weight along d: backward ${along}, central difference ${numeric}`);
      });
    } finally {
      model.dispose();
    }
  });

  test('the chunked scores are the banded scores: each query against the w keys on either side, -inf past the ends', () => om.tidy(() => {
    const attn = new LongformerSelfAttention({ hidden_size: 4, num_attention_heads: 1, attention_window: [4] }, 0);
    try {
      const [b, L, w] = [2, 8, 2];
      const q = om.randn([b, L, 1, 3], { seed: 1 });
      const k = om.randn([b, L, 1, 3], { seed: 2 });
      const s = attn.slidingChunksQueryKeyMatmul(q, k, w);
      assert.deepEqual(s.shape, [b, L, 1, 2 * w + 1]);
      const full = q.squeeze(2).matmul(k.squeeze(2).transpose(1, 2)); // [b, L, L]
      const got = [...s.toArray()];
      const dense = [...full.toArray()];
      for (let n = 0; n < b; n++) {
        for (let i = 0; i < L; i++) {
          for (let j = -w; j <= w; j++) {
            const v = got[(n * L + i) * (2 * w + 1) + j + w];
            const key = i + j;
            if (key < 0 || key >= L) assert.equal(v, -Infinity, `query ${i}, offset ${j}: outside the sequence`);
            else assert.ok(Math.abs(v - dense[(n * L + i) * L + key]) < 1e-5, `query ${i}, offset ${j}: ${v} vs ${dense[(n * L + i) * L + key]}`);
          }
        }
      }
    } finally {
      attn.dispose();
    }
  }));

  test('nonzeroAsTuple is torch.nonzero(as_tuple=True) of a 2-D mask, rows then columns', () => om.tidy(() => {
    const [r, c] = nonzeroAsTuple(om.tensor([[false, true, true], [false, false, false], [true, false, true]]));
    assert.deepEqual([r.dtype, c.dtype], ['int64', 'int64']);
    assert.deepEqual([[...r.toArray()].map(Number), [...c.toArray()].map(Number)], [[0, 0, 2, 2], [1, 2, 0, 2]]);
    const [e] = nonzeroAsTuple(om.zeros([2, 2], { dtype: 'bool' }));
    assert.deepEqual([e.shape, e.dtype], [[0], 'int64']);
  }));

  test('a config upstream refuses is refused, naming it', () => {
    for (const [config, re] of [
      [{ attention_window: 5 }, /^LongformerModel: `config.attention_window` has to be an even value$/],
      [{ attention_window: [4, 4], num_hidden_layers: 3 }, /^LongformerModel: `len\(config.attention_window\)` should equal `config.num_hidden_layers`. Expected 3, given 2$/],
      [{ hidden_act: 'relu' }, /^LongformerModel: hidden_act "relu" is not ported \(only gelu\)$/],
    ]) assert.throws(() => new LongformerModel(config), (e) => e instanceof Error && re.test(e.message));
  });
});

describe('Longformer traced once with symbolic batch and seq, run in onnxruntime-web and the Session at sizes the trace never saw', () => {
  test('longformer: local attention, traced at 7 (padded to 12); every residue of the window, 1 and 120', (t) => tracesEverywhere(t, PORTS.longformer, 'longformer', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, Infinity, null] });
  }));

  test('longformer_windows: a window per layer (4, 8), traced at 9 (padded to 16); 1, 4, 8, 15, 17 and 90', (t) => tracesEverywhere(t, PORTS.longformer_windows, 'longformer_windows', (tm) => {
    assert.deepEqual(ranges(tm), { batch: [1, Infinity, null], seq: [1, Infinity, null] });
  }));

  // traced as a user traces it, and with seq declared a multiple of the window (no padding before
  // the read): before the fix, the runs at other sizes stopped at the read, so the window's padding
  // found no runs to settle its form and the trace was refused at the pad, naming the wrong call
  test('longformer_global: global attention sizes tensors by the number of global tokens (a value): the trace refuses it at the read', () => {
    const fx = loadFixture('longformer_global');
    const model = loadPort(PORTS.longformer_global, 'longformer_global', fx);
    try {
      for (const [seq, extra] of [['seq', 0], [om.Dim('seq', { multipleOf: 6 }), 5]]) {
        om.tidy(() => {
          const inputs = Object.entries(caseInputs(fx.cases[0])).map(([k, v]) => [k, [om.cat([v, v.slice(1, 0, extra)], 1), ['batch', seq]]]);
          assert.throws(() => om.trace(model, Object.fromEntries(inputs)), (e) => e instanceof om.TraceError && e.kind === 'DataDependent'
            && e.message.startsWith('item: reads the values of a traced tensor of shape [] while tracing; a graph cannot depend on them '
              + '(compute with ops instead, or read them after the trace finishes)'), `seq ${seq}`);
        });
      }
    } finally {
      model.dispose();
    }
  });
});
