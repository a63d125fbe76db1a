// Whole model families, each traced in eval mode with om.trace and run in onnxruntime-web against
// eager (tests/js/helpers.mjs withTraced / keep: 1e-5 scaled), at the traced shapes, at two other
// sizes of every symbol (the batch; for the GPT also the sequence) and at batch 1 and 5. Each
// test prints (t.diagnostic) the graph's node count and the largest error the oracle measured.
//   (a) a LeNet-style CNN with BatchNorm2d, after a few Adam steps (non-trivial running stats)
//   (b) a residual CNN: conv-bn-relu-conv-bn + skip, stride-2 blocks whose skip is a 1x1 stride-2
//       conv + bn, adaptive average pool, linear (examples/zoo/resnet.mjs; its PyTorch parity and
//       symbolic height and width: tests/js/families*.test.mjs)
//   (c) a UNet-style net: conv, max pool down, conv, interpolate up, cat with the skip, conv
//   (d) LSTM and GRU classifiers: in tests/js/recurrent.test.mjs ("<kind> classifier with a
//       symbolic batch and sequence length, also at three other sizes"), not repeated here
//   (e) a GPT-style decoder (examples/zoo/gpt.mjs) with symbolic batch and sequence: token +
//       learned position embedding (indexed by om.arange), two pre-norm blocks of causal
//       self-attention + GELU MLP, final LayerNorm, LM head tied to the token embedding (one
//       initializer)
// The transformer encoder layer is in tests/js/transformer.test.mjs, the models loaded from
// PyTorch in tests/js/pytorch.test.mjs, the trained MLP and CNN in tests/js/training.test.mjs.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, withTraced } from './helpers.mjs';
import { checkModelFile, disposeModelFile } from '../../examples/lib/workflow.mjs';
import * as lenet from '../../examples/zoo/lenet.mjs';
import * as resnet from '../../examples/zoo/resnet.mjs';
import * as unet from '../../examples/zoo/unet.mjs';
import * as gpt from '../../examples/zoo/gpt.mjs';

// The architectures are the zoo's (examples/zoo/*.mjs); the tests build their own instances.
const { LeNet } = lenet, { ResNet } = resnet, { UNet } = unet, { GPT } = gpt;
after(() => { for (const f of [lenet, resnet, unet, gpt]) disposeModelFile(checkModelFile(f)); });

memoryHooks();
const nn = om.nn;

// docs/tracing.md's paragraph on this file states each family's node count; the tests hold them,
// so that paragraph cannot go stale.
const DOC = (() => {
  const text = readFileSync(new URL('../../docs/tracing.md', import.meta.url), 'utf8');
  const at = text.indexOf('`tests/js/models.test.mjs` traces whole model families');
  assert.ok(at >= 0, 'docs/tracing.md has the paragraph on tests/js/models.test.mjs');
  return text.slice(at, text.indexOf('\n\n', at)).replace(/\s+/g, ' ');
})();

/** Asserts the node count (and the one at fixed shapes) that docs/tracing.md states for `family`. */
function assertDocNodes(family, nodes, fixed) {
  const m = new RegExp(`${family}[^()]*\\((\\d+) nodes(?:, (\\d+) at fixed shapes)?\\)`).exec(DOC);
  assert.ok(m, `docs/tracing.md states the node count of ${family}`);
  assert.equal(nodes, Number(m[1]), `docs/tracing.md says ${family} has ${m[1]} nodes, the trace has ${nodes}: update it`);
  if (fixed !== undefined) assert.equal(fixed, Number(m[2]), `docs/tracing.md says ${family} has ${m[2]} nodes at fixed shapes, the trace has ${fixed}: update it`);
}

/**
 * Traces net (eval) on input x with its axes named by axes (default: a symbolic batch), checks it
 * at x, at three other sizes of every symbol (withTraced's keep), and at batch sizes `batches`
 * (inputs made by other(n, seed)), and reports the node count and the largest error. Disposes x.
 */
async function checkModel(t, net, x, other, { batches = [1, 5], axes, extra } = {}) {
  const errors = [];
  let nodes = 0;
  const names = axes ?? ['batch', ...x.shape.slice(1).map(() => null)];
  try {
    await withTraced((keep) => {
    const tm = om.trace(net, { x: [x, names] }, { outputNames: ['y'] });
    assert.equal(tm.inputs[0].shape[0], 'batch');
    assert.equal(tm.outputs[0].shape[0], 'batch');
    nodes = tm.graph().nodes.length;
    keep(tm, { x }, net.forward(x), `batch ${x.shape[0]}`, net);
    batches.forEach((n, i) => {
      const xi = other(n, 100 + i);
      keep(tm, { x: xi }, net.forward(xi), `batch ${n}`);
    });
    extra?.(tm);
    }, { onReport: (label, r) => errors.push([label, r.outputs[0].maxError, r.outputs[0].bound]) });
  } finally {
    x.dispose();
  }
  assert.equal(errors.length, 4 + batches.length, 'every run reported'); // the example, otherShapes (3), the batches
  const max = Math.max(...errors.map((e) => e[1]));
  const e2 = (v) => v.toExponential(2);
  t.diagnostic(`${nodes} nodes; max |onnx - eager| ${e2(max)} (${errors.map(([l, e, b]) => `${l}: ${e2(e)} of bound ${e2(b)}`).join(', ')})`);
  return { nodes, max };
}

/** A few Adam steps on random data with CrossEntropyLoss, so BatchNorm's running stats move. */
function trainSteps(net, shape, classes, steps) {
  const opt = new om.optim.Adam(net.parameters(), { lr: 1e-2 });
  const lossFn = new nn.CrossEntropyLoss();
  try {
    net.train();
    for (let s = 0; s < steps; s++) {
      opt.zeroGrad();
      om.tidy(() => {
        const x = om.randn(shape, { seed: 1000 + s }).mul(2).add(0.5);
        const y = om.rand([shape[0]], { seed: 2000 + s }).mul(classes).long();
        lossFn.forward(net.forward(x), y).backward();
      });
      opt.step();
    }
  } finally {
    opt.dispose();
    net.zeroGrad();
  }
  return net.eval();
}

/** The running statistics moved away from their initial zeros / ones. */
function assertStatsMoved(net) {
  for (const [path, b] of net.namedBuffers()) {
    if (path.endsWith('running_mean')) assert.ok(Math.max(...Array.from(b.toArray(), Math.abs)) > 1e-3, path);
    if (path.endsWith('running_var')) assert.ok(Math.max(...Array.from(b.toArray(), (v) => Math.abs(v - 1))) > 1e-3, path);
    if (path.endsWith('num_batches_tracked')) assert.ok(b.item() > 0, path);
  }
}

describe('model families traced and run in onnxruntime-web', () => {
  test('(a) LeNet-style CNN with BatchNorm2d, eval after 5 Adam steps', async (t) => {
    om.manualSeed(1);
    const net = trainSteps(new LeNet(), [8, 1, 28, 28], 10, 5);
    try {
      assertStatsMoved(net);
      const { nodes } = await checkModel(t, net, om.randn([4, 1, 28, 28], { seed: 1 }), (n, seed) => om.randn([n, 1, 28, 28], { seed }));
      assertDocNodes('a LeNet-style CNN', nodes);
    } finally {
      net.dispose();
    }
  });

  test('(b) residual CNN: conv-bn-relu-conv-bn + skip, stride-2 blocks with a 1x1 downsample, adaptive avg pool, linear', async (t) => {
    om.manualSeed(2);
    const net = trainSteps(new ResNet(), [6, 3, 12, 12], 5, 4);
    try {
      assertStatsMoved(net);
      const { nodes } = await checkModel(t, net, om.randn([3, 3, 12, 12], { seed: 1 }), (n, seed) => om.randn([n, 3, 12, 12], { seed }), {
        extra: (tm) => {
          const ops = tm.graph().nodes.map((n) => n.opType);
          assert.equal(ops.filter((o) => o === 'Conv').length, 9, 'stem, 2 per block, 2 downsample branches');
          assert.equal(ops.filter((o) => o === 'Add').length, 3, 'the skip connections');
        },
      });
      assertDocNodes('a residual CNN', nodes);
    } finally {
      net.dispose();
    }
  });

  test('(c) UNet-style: conv, max pool, conv, bilinear upsample, cat with the skip, conv', async (t) => {
    om.manualSeed(3);
    const net = new UNet().eval();
    try {
      const { nodes } = await checkModel(t, net, om.randn([2, 2, 8, 12], { seed: 1 }), (n, seed) => om.randn([n, 2, 8, 12], { seed }), {
        extra: (tm) => {
          const ops = tm.graph().nodes.map((n) => n.opType);
          for (const op of ['MaxPool', 'Resize', 'Concat']) assert.ok(ops.includes(op), `${op} in [${ops}]`);
          assert.deepEqual(tm.outputs[0].shape, ['batch', 3, 8, 12]);
        },
      });
      assertDocNodes('a UNet-style net', nodes);
    } finally {
      net.dispose();
    }
  });

  test('(e) GPT-style decoder: tied LM head, learned positions by om.arange, two causal pre-norm blocks', async (t) => {
    om.manualSeed(4);
    const cfg = { vocab: 40, d: 32, heads: 4, maxLen: 24 }; // maxLen 24: room for the oracle's length 2 * 10 + 1
    const net = new GPT(cfg).eval();
    try {
      // tied: one parameter, two state-dict keys
      assert.equal(net.lm_head.weight, net.wte.weight);
      const params = net.namedParameters().map(([p]) => p);
      assert.ok(params.includes('wte.weight') && !params.includes('lm_head.weight'), params.join(', '));
      assert.ok('lm_head.weight' in net.stateDict());
      const L = 10;
      const ids = (n, seed) => om.tidy(() => om.rand([n, L], { seed }).mul(cfg.vocab).long());
      // causality: changing the last token changes only the last position's logits
      om.tidy(() => {
        const a = ids(2, 7);
        const b = a.clone();
        b.set_([0, L - 1], (Number(a.toArray()[L - 1]) + 1) % cfg.vocab);
        const d = net.forward(a).sub(net.forward(b)).abs().amax(2); // [2, L]
        const v = Array.from(d.toArray());
        assert.ok(v.slice(0, L - 1).every((e) => e === 0) && v[L - 1] > 0, `per-position change ${v.slice(0, L)}`);
      });
      // batch and sequence symbolic: positions (om.arange of the length), the causal mask of
      // scaledDotProductAttention and the slices of the mask buffer are computed in the graph,
      // so one trace runs at every batch and length (here also at [4, 11] and [7, 21], and at
      // lengths 3 and 16 below)
      const { nodes } = await checkModel(t, net, ids(3, 1), ids, {
        axes: ['batch', 'seq'],
        extra: (tm) => {
          const g = tm.graph();
          const tables = g.initializers.filter((i) => i.shape.length === 2 && i.shape[0] === cfg.vocab && i.shape[1] === cfg.d);
          assert.equal(tables.length, 1, `the tied [${cfg.vocab}, ${cfg.d}] table is stored once: ${g.initializers.map((i) => `${i.name} [${i.shape}]`).join(', ')}`);
          assert.ok(!g.initializers.some((i) => i.shape.length === 2 && i.shape[0] === cfg.d && i.shape[1] === cfg.vocab), 'no transposed copy');
          assert.deepEqual(tm.outputs[0].shape, ['batch', 'seq', cfg.vocab]);
        },
      });
      // and at fixed shapes (no symbol: no shape computation)
      const fixed = om.tidy(() => {
        const tm = om.trace(net, { x: [ids(3, 1), [null, null]] });
        try { return tm.graph().nodes.length; } finally { tm.dispose(); }
      });
      assertDocNodes('a GPT-style decoder', nodes, fixed);
      await withTraced((keep, trace) => { // shorter and longer than traced, and batch 1
        const tm = trace(net, { x: [ids(3, 2), ['batch', 'seq']] });
        for (const [n, l] of [[2, 3], [1, 16]]) {
          const x = om.tidy(() => om.rand([n, l], { seed: 9 }).mul(cfg.vocab).long());
          keep(tm, { x }, net.forward(x));
        }
      });
    } finally {
      net.dispose();
    }
  });
});
