// The four model families of tests/js/families.mjs, each traced ONCE with symbolic axes, and the
// one .onnx run in onnxruntime-web at every size of its PyTorch fixture
// (tests/js/fixtures/pytorch/families/), compared with PyTorch's outputs (1e-5 * max(1, max|ref|),
// as the eager parity test in tests/js/families.test.mjs), and, through withTraced's keep, with
// the eager model at the traced sizes and at three other sizes of every symbol:
//   rnn_classifier  idx [batch, seq]            Embedding, LSTM, out.select(1, T - 1), Linear
//   gpt             idx [batch, seq]            positions wpe.weight.slice(0, 0, T), masks from T
//   resnet          x [batch, 3, height, width] stride-2 blocks with 1x1 stride-2 downsample branches
//   unet            x [batch, 1, h, w]          h and w declared multiples of 4 (om.Dim)
//   mobilenet       x [batch, 3, height, width] depthwise convs, squeeze-excitation, Conv2d 'same' of an even kernel
//   gpt2            input_ids [batch, seq]      Hugging Face's GPT-2: addmm, split / chunk of qkv, a tril buffer sliced to T
// The traced sizes are each fixture's trace_case: symbol sizes >= 2, distinct, and none of the
// model's fixed sizes (docs/symbolic-axes.md, the trap).
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced } from './helpers.mjs';
import { checkModelFile, disposeModelFile } from '../../examples/lib/workflow.mjs';
import { FAMILIES, resnetZoo, loadFixture, buildLoaded, caseInputs, caseOutputs, sizesText } from './families.mjs';

memoryHooks();
after(() => disposeModelFile(checkModelFile(resnetZoo)));

/**
 * Traces family `name` (PyTorch's weights loaded) once, at the fixture's trace case, with the
 * inputs axes(examples) gives (om.trace form); checks the graph's input and output shapes
 * (inputShapes, outputShape) and, where given, how many Shape nodes it has, then the .onnx at the traced sizes and three other sizes of every
 * symbol against eager (within the sizes it holds for: keep), and at every fixture case against
 * PyTorch. Reports each run's largest error.
 */
async function traceFamily(t, name, axes, { inputShapes, outputShape, shapeNodes }) {
  const fx = loadFixture(name);
  const { output } = FAMILIES[name];
  const model = buildLoaded(name, fx);
  const reports = [];
  try {
    await withTraced((keep) => {
      const at = fx.cases[fx.trace_case];
      const examples = caseInputs(at);
      const tm = om.trace(model, axes(examples), { outputNames: [output] });
      // keep first: it owns tm from here (disposed also when an assertion below fails)
      keep(tm, examples, model.forward(...Object.values(examples)), `eager at ${sizesText(at.sizes)} (traced)`, model);
      for (const c of fx.cases) keep(tm, caseInputs(c), caseOutputs(c), `PyTorch at ${sizesText(c.sizes)}`);
      t.diagnostic(`${name}: ${tm.graph().nodes.length} nodes, traced at ${sizesText(at.sizes)}`);
      assert.deepEqual(tm.inputs.map((i) => i.shape), inputShapes, 'graph input shapes');
      assert.deepEqual(tm.outputs.map((o) => o.shape), [outputShape], 'graph output shape');
      if (shapeNodes !== undefined) assert.equal(tm.graph().nodes.filter((n) => n.opType === 'Shape').length, shapeNodes, 'Shape nodes');
    }, { onReport: (label, r) => reports.push(`${label}: ${r.outputs[0].maxError.toExponential(2)}`) });
  } finally {
    model.dispose();
    if (reports.length) t.diagnostic(`${name}: max |onnx - reference| ${reports.join('; ')}`);
  }
  assert.equal(reports.length, 4 + fx.cases.length, 'every run reported');
}

describe('model families traced once with symbolic axes, run at every PyTorch fixture size', () => {
  test('(a) rnn_classifier: Embedding -> LSTM -> out.select(1, T - 1) -> Linear, symbolic batch and seq', (t) =>
    traceFamily(t, 'rnn_classifier', ({ idx }) => ({ idx: [idx, ['batch', 'seq']] }), {
      inputShapes: [['batch', 'seq']],
      outputShape: ['batch', 4],
      shapeNodes: 0, // out.select(1, T - 1) is the index -1
    }));

  test('(b) gpt: positions sliced to T, causal masks from ones([T, T]).tril() and arange(T), tied head, symbolic batch and seq', (t) =>
    traceFamily(t, 'gpt', ({ idx }) => ({ idx: [idx, ['batch', 'seq']] }), {
      inputShapes: [['batch', 'seq']],
      outputShape: ['batch', 'seq', 20],
    }));

  test('(c) resnet: stride-2 blocks (3x3 s2 p1 + 1x1 s2 downsample), global average pool, symbolic batch, height and width', (t) =>
    traceFamily(t, 'resnet', ({ x }) => ({ x: [x, ['batch', null, 'height', 'width']] }), {
      inputShapes: [['batch', 3, 'height', 'width']],
      outputShape: ['batch', 5],
      shapeNodes: 0, // the extents are the convolutions' own: no size is computed in the graph
    }));

  test('(d) unet: two levels, ConvTranspose2d and bilinear Upsample, skip concatenations, symbolic batch and h, w declared multiples of 4', (t) =>
    traceFamily(t, 'unet', ({ x }) => ({ x: [x, ['batch', null, om.Dim('h', { multipleOf: 4 }), om.Dim('w', { multipleOf: 4 })]] }), {
      inputShapes: [['batch', 1, 'h', 'w']],
      outputShape: ['batch', 3, 'h', 'w'],
    }));

  test('(e) mobilenet: torchvision\'s MobileNetV2/V3 blocks (ReLU6, Hardswish, Hardsigmoid gate), Conv2d(padding \'same\') of an even kernel, symbolic batch, height and width', (t) =>
    traceFamily(t, 'mobilenet', ({ x }) => ({ x: [x, ['batch', null, 'height', 'width']] }), {
      inputShapes: [['batch', 3, 'height', 'width']],
      outputShape: ['batch', 5],
      shapeNodes: 0,
    }));

  test('(f) gpt2: Hugging Face\'s GPT-2 block as written (addmm, qkv by split / split by sizes / chunk, view, permute, where and maskedFill with a tril buffer), symbolic batch and seq', (t) =>
    // 16 learned positions: declared, since the runs see the table fail only at far larger lengths
    traceFamily(t, 'gpt2', ({ input_ids: ids }) => ({ input_ids: [ids, ['batch', om.Dim('seq', { max: 16 })]] }), {
      inputShapes: [['batch', 'seq']],
      outputShape: ['batch', 'seq', 16],
    }));

  test('(d) unet: symbolic h and w not declared multiples of 4 narrow to them (the model fails at the others), as declared', () => {
    const fx = loadFixture('unet');
    const model = buildLoaded('unet', fx);
    try {
      om.tidy(() => {
        const { x } = caseInputs(fx.cases[fx.trace_case]);
        const tm = om.trace(model, { x: [x, ['batch', null, 'h', 'w']] }, { outputNames: ['y'] });
        try {
          const [h, w] = ['h', 'w'].map((n) => tm.symbols.find((s) => s.name === n));
          assert.deepEqual([h.multipleOf, w.multipleOf], [4, 4]);
          assert.match(h.narrowedBy, /the (call|model) fails/);
          assert.match(w.narrowedBy, /the (call|model) fails/);
        } finally {
          tm.dispose();
        }
      });
      assert.equal(om.Tracer.active, false, 'no trace left recording');
    } finally {
      model.dispose();
    }
  });
});
