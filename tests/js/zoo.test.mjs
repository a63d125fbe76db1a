// The model zoo (examples/zoo/*.mjs) and the workflow library (examples/lib/workflow.mjs): every
// zoo file loads, trains (its loss falls), traces in eval mode and agrees with onnxruntime-web at
// three sizes of every symbol; the library's summaries, input making, stopping and error paths.
// Every test frees what it made (memoryHooks).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks } from './helpers.mjs';
import * as wf from '../../examples/lib/workflow.mjs';
import { declaredTitle } from '../../web-demo/src/source.js';
import { caseInputs, loadFixture, run } from './transformers-ports.mjs';

memoryHooks();

let loads = 0;

/** A fresh instance of the zoo file `name`, checked (each import under a new URL runs the module again). */
async function zooFile(name) {
  return wf.checkModelFile(await import(`../../examples/zoo/${name}.mjs?${++loads}`), `${name}.mjs`);
}

/** fn(file), then the file's tensors freed. */
async function withFile(file, fn) {
  try {
    return await fn(file);
  } finally {
    wf.disposeModelFile(file);
  }
}

/** A model file made here: { model, inputs, ... } with the tensors om.tidy keeps. */
function inline(spec) {
  return wf.checkModelFile(spec, 'inline.mjs');
}

/** The error check of assert.throws / rejects: an OmError of kind `kind` whose message matches `re`. */
function omError(kind, re) {
  return (e) => {
    assert.ok(e instanceof om.OmError, `expected an OmError, got ${e?.stack ?? e}`);
    assert.equal(e.kind, kind, e.message);
    assert.match(e.message, re);
    return true;
  };
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('the zoo: each model file loads, trains, traces and verifies', () => {
  test('ZOO lists the seven files', () => {
    assert.deepEqual(wf.ZOO, ['mlp', 'lenet', 'resnet', 'unet', 'lstm', 'gpt', 'vit']);
  });

  for (const name of wf.ZOO) {
    test(name, async (t) => {
      await withFile(await zooFile(name), async (file) => {
        assert.equal(typeof file.title, 'string');
        assert.ok(file.title.length > 0 && file.title !== `${name}.mjs`, 'a title of its own');
        // the demo page's picker reads the title from the text, without running the file
        assert.equal(declaredTitle(readFileSync(new URL(`../../examples/zoo/${name}.mjs`, import.meta.url), 'utf8')), file.title);
        const described = wf.describeInputs(file.inputs);
        assert.equal(described[0].axes[0], 'batch', 'the batch is symbolic');

        // training: the loss falls by half over the file's steps, and the model ends in eval mode
        const seen = [];
        const { losses } = await wf.trainModel(file, { onStep: (step, loss) => seen.push([step, loss]) });
        assert.equal(losses.length, file.train.steps);
        assert.deepEqual(seen, losses.map((l, i) => [i, l]));
        assert.ok(losses.every(Number.isFinite), `finite losses: ${losses}`);
        const first = mean(losses.slice(0, 3)), last = mean(losses.slice(-3));
        assert.ok(last < first / 2, `${name}: loss ${first} -> ${last} did not halve in ${losses.length} steps`);
        assert.equal(file.model.training, false);

        // trace and summary
        const traced = wf.traceModel(file);
        try {
          const bytes = traced.toOnnx();
          const s = wf.summarizeTraced(traced, bytes);
          assert.equal(s.onnxBytes, bytes.length);
          assert.equal(s.nodeCount, traced.graph().nodes.length);
          assert.ok(s.symbols.includes('batch'));
          assert.equal(s.inputs[0].shape[0], 'batch');
          assert.equal(s.outputs[0].shape[0], 'batch');
          assert.equal(s.opCounts.reduce((a, o) => a + o.count, 0), s.nodeCount);
          assert.equal(s.initializerBytes, s.initializers.reduce((a, i) => a + i.bytes, 0));
          assert.ok(s.initializerBytes > 0 && s.initializerBytes < s.onnxBytes);

          // verify: the traced sizes and three others of every symbol (smaller and larger, within
          // the sizes the graph holds for), all within the bound
          const report = await wf.verifyTraced(file, traced);
          assert.equal(report.ok, true, JSON.stringify(report.checks.map((c) => c.error)));
          assert.equal(report.checks.length, 4);
          for (const sym of s.symbols) {
            const sizes = report.checks.map((c) => c.symbols[sym]);
            const { min } = traced.symbols.find((y) => y.name === sym);
            assert.ok(sizes.slice(1).some((n) => n > sizes[0]), `${sym} above its example: ${sizes}`);
            if (min < sizes[0]) assert.ok(sizes.slice(1).some((n) => n < sizes[0]), `${sym} below its example: ${sizes}`);
          }
          for (const c of report.checks) {
            assert.equal(c.ok, true);
            for (const o of c.outputs) assert.ok(o.maxError <= o.bound, `${o.name}: ${o.maxError} > ${o.bound}`);
          }
          t.diagnostic(`${s.nodeCount} nodes, ${s.onnxBytes} bytes, loss ${losses[0].toFixed(3)} -> ${losses.at(-1).toFixed(3)}, max error ${report.maxError.toExponential(2)} at ${report.checks.map((c) => JSON.stringify(c.symbols)).join(' ')}`);
        } finally {
          traced.dispose();
        }
      });
    });
  }
});

describe('the zoo\'s real ports: a port and the weights PyTorch wrote for it', () => {
  test('ZOO_PORTS lists gpt2', () => {
    assert.deepEqual(wf.ZOO_PORTS, ['gpt2']);
  });

  test('gpt2: the file\'s model gives PyTorch\'s logits at every size of the port\'s fixture (the weights read from disk in Node); no train section', async () => {
    await withFile(await zooFile('gpt2'), async (file) => {
      assert.equal(declaredTitle(readFileSync(new URL('../../examples/zoo/gpt2.mjs', import.meta.url), 'utf8')), file.title);
      assert.equal(file.train, null);
      assert.equal(file.model.training, false);
      // the checkpoint the file loaded is PyTorch's: its outputs are, at every case of the port's fixture
      const fx = loadFixture('gpt2');
      for (const c of fx.cases) {
        om.tidy(() => {
          const [logits] = run(file.model, caseInputs(c));
          const want = c.outputs[0];
          assert.deepEqual(logits.shape, want.shape);
          const got = logits.toArray(), bound = 1e-5 * Math.max(1, ...want.data.map(Math.abs));
          const err = Math.max(...want.data.map((w, i) => Math.abs(got[i] - w)));
          assert.ok(err <= bound, `${JSON.stringify(c.sizes)}: max |ours - PyTorch| ${err} > ${bound}`);
        });
      }
      // (its trace and verification at four sizes: tests/js/web-demo.test.mjs, in the page and in Node;
      // the port's own at the fixture's sizes: transformers-ports.test.mjs)
    });
  });
});

describe('what runs in the page\'s Web Worker imports no Node API', () => {
  /** The module specifiers of a file's static imports (import ... from '...' / import '...'). */
  const imports = (path) => [...readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')
    .matchAll(/^import\s[^;]*?['"]([^'"]+)['"];?$/gm)].map((m) => m[1]);

  test('the zoo files import only onemodel (a real port its port, whose modules import onemodel and each other); the workflow library onemodel and the oracle; the oracle onemodel; the command both', () => {
    for (const name of wf.ZOO) assert.deepEqual(imports(`examples/zoo/${name}.mjs`), ['onemodel'], name);
    // a real port imports its port (which imports onemodel and its helpers beside it: the page links them)
    assert.deepEqual(imports('examples/zoo/gpt2.mjs'), ['onemodel', '../transformers/gpt2.mjs']);
    assert.deepEqual(imports('examples/transformers/gpt2.mjs'), ['onemodel', './modeling_utils.mjs']);
    assert.deepEqual(imports('examples/transformers/modeling_utils.mjs'), ['onemodel']);
    assert.deepEqual(imports('examples/lib/workflow.mjs'), ['onemodel', './oracle.mjs']);
    assert.deepEqual(imports('examples/lib/oracle.mjs'), ['onemodel']);
    assert.deepEqual(imports('tools/trace_oracle.mjs'), ['onemodel', '../examples/lib/oracle.mjs', '../examples/lib/workflow.mjs'], 'the command, in tools/: nothing in examples/ imports it');
    assert.deepEqual(imports('examples/lib/export.mjs'), ['node:fs', 'node:path', 'onemodel', './workflow.mjs', './oracle.mjs'], 'the Node-only part (a check that the pattern reads imports)');
  });
});

describe('workflow: inputs at other shapes (makeInputs)', () => {
  test('the LSTM traced at a new batch and a fixed sequence length of 7 runs at other batches', async () => {
    await withFile(await zooFile('lstm'), async (file) => {
      const inputs = wf.makeInputs(file, [{ name: 'x', shape: [2, 7, 6], axes: ['batch', null, null] }], 5);
      try {
        assert.deepEqual(inputs.x[0].shape, [2, 7, 6]);
        assert.deepEqual(inputs.x[1], ['batch', null, null]);
        const traced = wf.traceModel(file, inputs);
        try {
          assert.deepEqual(traced.inputs[0].shape, ['batch', 7, 6]);
          const report = await wf.verifyTraced(file, traced, { inputs });
          assert.equal(report.ok, true);
          assert.deepEqual(report.checks.map((c) => c.shapes.x), [[2, 7, 6], [1, 7, 6], [3, 7, 6], [5, 7, 6]]);
        } finally {
          traced.dispose();
        }
      } finally {
        wf.disposeInputs(inputs);
      }
    });
  });

  test('int64 inputs are drawn from the example (token ids stay in the vocabulary); fixed axes may change', async () => {
    await withFile(await zooFile('gpt'), async (file) => {
      const vocab = new Set(Array.from(file.inputs.ids[0].toArray(), Number));
      const inputs = wf.makeInputs(file, [{ name: 'ids', shape: [4, 6], axes: ['n', null] }]);
      try {
        assert.equal(inputs.ids[0].dtype, 'int64');
        assert.ok(Array.from(inputs.ids[0].toArray(), Number).every((v) => vocab.has(v)));
        const traced = wf.traceModel(file, inputs);
        try {
          assert.deepEqual(traced.outputs[0].shape, ['n', 6, 40]);
          assert.equal((await wf.verifyTraced(file, traced, { inputs })).ok, true);
        } finally {
          traced.dispose();
        }
      } finally {
        wf.disposeInputs(inputs);
      }
    });
  });

  test('a symbol declared with its sizes: an om.Dim in the file is described as plain data, which makeInputs makes an om.Dim again', async () => {
    await withFile(await zooFile('unet'), async (file) => {
      const [x] = wf.describeInputs(file.inputs);
      const h = { name: 'h', multipleOf: 4, min: 8, max: 64 };
      const inputs = wf.makeInputs(file, [{ name: 'x', shape: [2, 2, 8, 12], axes: ['batch', null, h, 'w'] }]);
      try {
        const axes = inputs.x[1];
        assert.ok(axes[2] instanceof om.Dim, 'the declared symbol is an om.Dim');
        assert.deepEqual({ ...axes[2] }, h);
        assert.deepEqual([axes[0], axes[1], axes[3]], ['batch', null, 'w']);
        // the file's own declarations, described: a declared one as { name, multipleOf, min, max }
        const declared = inline({ model: file.model, inputs: { x: [inputs.x[0], axes] } });
        assert.deepEqual(wf.describeInputs(declared.inputs)[0].axes, ['batch', null, h, 'w']);
        assert.doesNotThrow(() => structuredClone(wf.describeInputs(declared.inputs)), 'plain data: it crosses postMessage');
        assert.deepEqual(x.axes, ['batch', null, null, null]);
        const traced = wf.traceModel(file, inputs);
        try {
          // h keeps its declaration; w, declared by its name alone, the model narrows (the pool and the skip's cat need it even)
          const s = wf.summarizeTraced(traced);
          const byName = Object.fromEntries(s.ranges.map((r) => [r.name, r]));
          assert.deepEqual(byName.h, { ...h, narrowedBy: null });
          assert.equal(byName.w.multipleOf, 2);
          assert.match(byName.w.narrowedBy, /\S/);
          assert.deepEqual(byName.batch, { name: 'batch', multipleOf: 1, min: 1, max: Infinity, narrowedBy: null });
          assert.doesNotThrow(() => structuredClone(s));
        } finally {
          traced.dispose();
        }
      } finally {
        wf.disposeInputs(inputs);
      }
    });
  });

  test('bad specs throw InvalidArgument naming the input and make nothing', () => {
    const x = om.randn([2, 3], { seed: 1 });
    const y = om.randn([2, 4], { seed: 2 });
    const file = inline({ model: (a, b) => a.add(b.sum(1, true)), inputs: { a: [x, ['batch', null]], b: [y, ['batch', null]] } });
    const a = (shape, axes = ['batch', null]) => ({ name: 'a', shape, axes });
    const b = { name: 'b', shape: [2, 4], axes: ['batch', null] };
    const cases = [
      [null, /specs must be an array of \{ name, shape, axes \}/],
      [[a([2, 3]), b, { name: 'c', shape: [1], axes: null }], /the model has no input "c" \(its inputs: a, b\)/],
      [[a([2, 3])], /no shape given for input "b"/],
      [[a([2, 3, 1]), b], /input "a": shape must be 2 positive integers \(the example is \[2,3\]\), got \[2,3,1\]/],
      [[a([2, 0]), b], /input "a": shape must be 2 positive integers/],
      [[a([2.5, 3]), b], /input "a": shape must be 2 positive integers/],
      [[a([2, 3], ['batch']), b], /input "a": axisNames must have one entry per dim \(2/],
      [[a([2, 3], [7, null]), b], /input "a": axisNames\[0\] must be a symbol name .* got 7/],
      [[a([5, 3]), b], /symbol "batch" is 5 on input "a" axis 0 but 2 on input "b" axis 0; one symbol has one size/],
      [['a'], /every spec must be \{ name, shape, axes \}/],
      [[a([2, 3], [{ name: 'batch', multipleOf: 0 }, null]), b], /^makeInputs: input "a": axes\[0\]: Dim: multipleOf must be an integer >= 1, got 0$/],
      [[a([2, 3], [{ name: 'batch', min: 4, max: 2 }, null]), b], /^makeInputs: input "a": axes\[0\]: Dim: max 2 is below min 4$/],
    ];
    try {
      for (const [specs, re] of cases) {
        const before = om.memory().tensors;
        assert.throws(() => wf.makeInputs(file, specs), omError('InvalidArgument', re));
        assert.equal(om.memory().tensors, before, `nothing made for ${JSON.stringify(specs)}`);
      }
    } finally {
      wf.disposeModelFile(file);
    }
  });
});

describe('workflow: training', () => {
  test('steps overrides the file; the model ends in eval mode', async () => {
    await withFile(await zooFile('mlp'), async (file) => {
      const more = await wf.trainModel(file, { steps: 4 });
      assert.equal(more.losses.length, 4);
      assert.equal(file.model.training, false);
      assert.ok(file.model.parameters().every((p) => p.grad === null), 'no gradients left behind');
    });
  });

  test('the model is in training mode during the steps (BatchNorm updates its running statistics)', async () => {
    await withFile(await zooFile('resnet'), async (file) => {
      const modes = [];
      const stats = () => Array.from(file.model.stem[1].running_mean.toArray());
      const before = stats();
      await wf.trainModel(file, { steps: 2, onStep: () => modes.push(file.model.training) });
      assert.deepEqual(modes, [true, true]);
      assert.notDeepEqual(stats(), before);
      assert.equal(file.model.training, false);
    });
  });

  test('a function model trains the tensors in train.parameters', async () => {
    const w = om.zeros([3, 1]);
    w.requiresGrad = true;
    const file = inline({
      model: (x) => x.matmul(w),
      inputs: { x: om.randn([2, 3], { seed: 1 }) },
      train: {
        steps: 20,
        parameters: [w],
        optimizer: (params) => new om.optim.SGD(params, { lr: 0.1 }),
        batch: (step) => {
          const x = om.randn([16, 3], { seed: step });
          return { inputs: [x], target: x.sum(1, true) };
        },
        loss: (y, target) => y.sub(target).pow(2).mean(),
      },
    });
    await withFile(file, async () => {
      const { losses } = await wf.trainModel(file);
      assert.ok(losses.at(-1) < losses[0] / 10, `${losses}`);
      assert.ok(Array.from(w.toArray()).every((v) => Math.abs(v - 1) < 0.2), `w -> [1, 1, 1]: ${Array.from(w.toArray())}`);
    });
  });

  test('wrong train functions, or no train section, throw InvalidArgument naming the call', async () => {
    const trainWith = (over) => ({
      steps: 2,
      optimizer: (params) => new om.optim.SGD(params, { lr: 0.1 }),
      batch: () => ({ inputs: [om.randn([4, 2], { seed: 1 })], target: om.zeros([4, 3]) }),
      loss: (y, target) => y.sub(target).pow(2).mean(),
      ...over,
    });
    const cases = [
      [{ batch: () => [om.randn([4, 2], { seed: 1 })] }, /train\.batch\(0\) must return \{ inputs: \[Tensor, \.\.\.\], target \}, got an array of length 1/],
      [{ batch: () => ({ inputs: [1, 2], target: 0 }) }, /train\.batch\(0\) must return \{ inputs: \[Tensor, \.\.\.\], target \}/],
      [{ loss: (y) => y }, /train\.loss\(output, target\) must return a float32 scalar Tensor, got a float32 Tensor of shape \[4,3\]/],
      [{ loss: () => 0.5 }, /train\.loss\(output, target\) must return a float32 scalar Tensor, got 0\.5/],
      [{ optimizer: () => ({}) }, /train\.optimizer\(params\) must return an optimizer .* got an object with keys \(\)/],
    ];
    for (const [over, re] of cases) {
      om.manualSeed(1);
      const file = inline({ model: new om.nn.Linear(2, 3), inputs: { x: om.randn([4, 2], { seed: 1 }) }, train: trainWith(over) });
      await withFile(file, async () => {
        await assert.rejects(wf.trainModel(file), omError('InvalidArgument', re));
        assert.equal(file.model.training, false, 'back in eval mode after the error');
        assert.ok(file.model.parameters().every((p) => p.grad === null), 'no gradients left behind');
      });
    }
    const untrained = inline({ title: 'no training', model: (x) => x.relu(), inputs: { x: om.randn([2], { seed: 1 }) } });
    await withFile(untrained, async () => {
      await assert.rejects(wf.trainModel(untrained), omError('InvalidArgument', /trainModel: no training has no train section/));
    });
  });
});

describe('workflow: summarizeTraced', () => {
  test('the graph of x @ W + b, relu: nodes, edges, initializers and their bytes, symbols', () => {
    const W = om.randn([3, 4], { seed: 1 });
    const b = om.zeros([4]);
    const file = inline({
      model: (x) => ({ y: x.matmul(W).add(b).relu() }),
      inputs: { x: [om.randn([2, 3], { seed: 2 }), ['batch', null]] },
    });
    try {
      const traced = wf.traceModel(file);
      try {
        const s = wf.summarizeTraced(traced);
        assert.deepEqual(s.inputs, [{ name: 'x', dtype: 'float32', shape: ['batch', 3] }]);
        assert.deepEqual(s.outputs, [{ name: 'y', dtype: 'float32', shape: ['batch', 4] }]);
        assert.deepEqual(s.symbols, ['batch']);
        const ops = traced.graph().nodes;
        assert.equal(s.nodeCount, ops.length);
        assert.deepEqual(s.initializers.map((i) => [i.dtype, i.shape, i.bytes]).sort(), [['float32', [3, 4], 48], ['float32', [4], 16]].sort());
        assert.equal(s.initializerBytes, 64);
        assert.equal(s.onnxBytes, traced.toOnnx().length);
        const kinds = s.graph.nodes.map((n) => n.kind);
        assert.deepEqual(kinds, ['input', 'initializer', 'initializer', ...ops.map(() => 'op'), 'output']);
        assert.deepEqual(s.graph.nodes.filter((n) => n.kind === 'op').map((n) => n.opType), ops.map((n) => n.opType));
        assert.equal(s.opCounts.reduce((a, o) => a + o.count, 0), ops.length);
        // every edge joins known nodes, carries a value its target reads, and every op input is fed
        const ids = new Set(s.graph.nodes.map((n) => n.id));
        for (const e of s.graph.edges) assert.ok(ids.has(e.from) && ids.has(e.to), JSON.stringify(e));
        s.graph.nodes.filter((n) => n.kind === 'op').forEach((n) => {
          const fed = s.graph.edges.filter((e) => e.to === n.id).map((e) => e.value);
          assert.deepEqual(fed, n.inputs.filter((v) => v), `${n.id} ${n.opType}`);
        });
        assert.ok(s.graph.edges.some((e) => e.from === 'input:x'));
        for (const i of s.initializers) assert.ok(s.graph.edges.some((e) => e.from === `initializer:${i.name}`), i.name);
        assert.equal(s.graph.edges.filter((e) => e.to === 'output:y').length, 1);
        assert.doesNotThrow(() => structuredClone(s), 'plain data: it crosses postMessage');
      } finally {
        traced.dispose();
      }
    } finally {
      wf.disposeModelFile(file);
      om.dispose([W, b]);
    }
  });
});

describe('workflow: errors', () => {
  test('checkModelFile names what is wrong in a model file', () => {
    const x = om.randn([2, 3], { seed: 1 });
    const ok = { model: (v) => v, inputs: { x: [x, ['batch', null]] } };
    const train = { steps: 3, optimizer: () => null, batch: () => null, loss: () => null };
    const cases = [
      [undefined, /m\.mjs: the default export must be an object \{ title\?, model, inputs, outputNames\?, train\? \}, got undefined/],
      [42, /the default export must be an object .* got 42/],
      [{ inputs: ok.inputs }, /m\.mjs: the default export has no model/],
      [{ ...ok, model: 'net' }, /model must be a function or an nn\.Module \(an object with forward\(\)\), got "net"/],
      [{ ...ok, model: {} }, /model must be a function or an nn\.Module/],
      [{ model: ok.model }, /the default export has no inputs/],
      [{ ...ok, inputs: [x] }, /inputs must be a non-empty object of name -> Tensor or \[Tensor, axisNames\]/],
      [{ ...ok, inputs: {} }, /inputs must be a non-empty object/],
      [{ ...ok, inputs: { x: [[1, 2], ['batch']] } }, /input "x" must be a Tensor or \[Tensor, axisNames\], got an array of length 2 as its example/],
      [{ ...ok, inputs: { x: [x, ['batch']] } }, /input "x": axisNames must have one entry per dim \(2: a symbol name, an om.Dim or null\), got an array of length 1/],
      [{ ...ok, inputs: { x: [x, ['', null]] } }, /input "x": axisNames\[0\] must be a symbol name/],
      [{ ...ok, inputs: { x: [x, 'batch'] } }, /input "x": axisNames must have one entry per dim/],
      [{ ...ok, inputs: { x: [x, ['n', null]], y: [x, [null, 'n']] } }, /symbol "n" is 2 on input "x" axis 0 but 3 on input "y" axis 1/],
      [{ ...ok, outputNames: 'y' }, /outputNames must be a non-empty array of non-empty strings, got "y"/],
      [{ ...ok, outputNames: ['y', ''] }, /outputNames must be a non-empty array/],
      [{ ...ok, title: 7 }, /title must be a string, got 7/],
      [{ ...ok, modle: 1 }, /unknown key modle in the default export/],
      [{ ...ok, train: 5 }, /train must be an object \{ steps, optimizer/],
      [{ ...ok, train: { ...train, steps: 0 } }, /train\.steps must be a positive integer, got 0/],
      [{ ...ok, train: { ...train, loss: undefined } }, /train\.loss must be a function, got undefined/],
      [{ ...ok, train: { ...train, lr: 1 } }, /train: unknown key lr/],
      [{ ...ok, train: train }, /train: the model is a function, so train\.parameters must list the tensors to train/],
      [{ ...ok, train: { ...train, parameters: [1] } }, /train\.parameters must be an array of Tensors/],
    ];
    try {
      for (const [spec, re] of cases) assert.throws(() => wf.checkModelFile(spec, 'm.mjs'), omError('InvalidArgument', re));
      const disposed = om.randn([2], { seed: 1 });
      disposed.dispose();
      assert.throws(() => wf.checkModelFile({ ...ok, inputs: { x: disposed } }, 'm.mjs'), omError('Disposed', /input "x": the example tensor was disposed/));
    } finally {
      x.dispose();
    }
  });

  test('checkModelFile takes a module: its default export, or says it has none', async () => {
    const mod = await import('./fixtures/oracle-throws.mjs');
    const file = wf.checkModelFile(mod, 'oracle-throws.mjs');
    assert.equal(file.title, 'oracle-throws.mjs', 'the name when there is no title');
    assert.equal(file.model, mod.default.model);
    assert.deepEqual([file.outputNames, file.train], [null, null]);
    wf.disposeModelFile(file);
    const helpers = await import('./helpers.mjs');
    assert.throws(() => wf.checkModelFile(helpers, 'helpers.mjs'), omError('InvalidArgument', /helpers\.mjs: the module has no default export; export default \{ title\?, model/));
  });

  test('a model that throws: its error comes through unchanged, the library stays usable and frees everything', async () => {
    const x = om.randn([2, 3], { seed: 1 });
    const reads = inline({ model: (v) => (v.sum().item() > 0 ? v.relu() : v.neg()), inputs: { x: [x, ['batch', null]] } });
    assert.throws(() => wf.traceModel(reads), (e) => e instanceof om.TraceError && e.kind === 'DataDependent' && /item: reads the values of a traced tensor/.test(e.message));
    const typo = inline({ model: (v) => v.rleu(), inputs: { x } });
    assert.throws(() => wf.traceModel(typo), (e) => e instanceof TypeError && /rleu is not a function/.test(e.message) && /zoo\.test\.mjs/.test(e.stack));
    const shape = inline({ model: (v) => v.matmul(v), inputs: { x } });
    assert.throws(() => wf.traceModel(shape), omError('ShapeMismatch', /matmul/));
    // a model that runs at its traced batch and at 1 only (a broadcast against a fixed 3) traces
    // as two pieces, the sizes admitted in its symbol's branches
    const x3 = om.randn([3, 3], { seed: 2 });
    const fixed = inline({ model: (v) => v.add(om.ones([3, 3])), inputs: { x: [x3, ['batch', null]] } });
    const pieces = wf.traceModel(fixed);
    assert.deepEqual(pieces.symbols[0].branches, [{ min: 1, max: 1 }, { min: 3, max: 3 }]);
    pieces.dispose();
    x3.dispose();
    // verification reports each failing size as a check (here: another model than the one traced)
    const relu = inline({ model: (v) => v.relu(), inputs: { x: [x, ['batch', null]] } });
    const neg = inline({ model: (v) => v.neg(), inputs: { x: [x, ['batch', null]] } });
    const traced = wf.traceModel(relu);
    try {
      const r = await wf.verifyTraced(neg, traced);
      assert.equal(r.ok, false);
      assert.deepEqual(r.checks.map((c) => c.ok), [false, false, false, false]);
      for (const c of r.checks) assert.match(c.error, /max \|onnx - eager\|/);
    } finally {
      traced.dispose();
    }
    const fine = inline({ model: (v) => v.relu(), inputs: { x: [x, ['batch', null]] } });
    const t2 = wf.traceModel(fine);
    try {
      assert.equal((await wf.verifyTraced(fine, t2)).ok, true, 'still usable');
    } finally {
      t2.dispose();
      x.dispose();
    }
  });

  test('verifyTraced reports each check as it comes (onCheck)', async () => {
    await withFile(await zooFile('unet'), async (file) => {
      const traced = wf.traceModel(file);
      try {
        const seen = [];
        const r = await wf.verifyTraced(file, traced, { onCheck: (c, i, n) => seen.push([c, i, n]) });
        assert.deepEqual(seen, r.checks.map((c, i) => [c, i, 4]));
      } finally {
        traced.dispose();
      }
    });
  });
});
