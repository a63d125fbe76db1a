// The demo page's graph view without a browser: reading .onnx and .om files (web-demo/src/
// graphfile.js) against what the tracer recorded, the blocks a graph is grouped into by module
// (groups.js: a 12-layer decoder opens as its layers, no block feeds back into itself), the layout
// (layout.js: a shape on every edge, a frame per expanded block) and the generated or uploaded
// inputs a file is run on (feeds.js), with their errors.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, describe, test } from 'node:test';
import * as om from 'onemodel';
import * as wf from '../../examples/lib/workflow.mjs';
import { Block, GPT } from '../../examples/zoo/gpt.mjs';
import { BasicBlock, Bottleneck } from '../../examples/torchvision/resnet.mjs';
import { narrowResNet } from './narrow-resnet.mjs';
import { GPT2LMHeadModel } from '../../examples/transformers/gpt2.mjs';
import { readGraph } from '../../web-demo/src/graphfile.js';
import { OPEN_BOXES, autoExpand, boxCount, groupByModule, moduleOfName, moduleOfNodeName, visibleId } from '../../web-demo/src/groups.js';
import { layoutGraph } from '../../web-demo/src/layout.js';
import { defaultSizes, feedsFor } from '../../web-demo/src/feeds.js';
import { attributeText } from '../../web-demo/src/inspector.js';
import { moduleOf } from './helpers.mjs';
import { onnxBytes } from '../../tools/onnx_bytes.mjs';
import { asVersion1, graphSection, initializerRecords, inputsAt, splice, str, u32, withGraph } from './om-file.mjs';

before(() => om.ready());

/** A zoo model file traced at its own inputs: fn(traced, inputs (om.trace's)), then everything is freed. */
async function withZoo(name, fn) {
  const file = wf.checkModelFile(await import(`../../examples/zoo/${name}.mjs?graph-${Math.random()}`), name);
  const inputs = wf.makeInputs(file, wf.describeInputs(file.inputs));
  const traced = wf.traceModel(file, inputs);
  try {
    return await fn(traced, inputs);
  } finally {
    traced.dispose();
    wf.disposeInputs(inputs);
    wf.disposeModelFile(file);
  }
}

/** A GPT of `layers` blocks (the zoo's classes), traced on ids [batch, seq]. */
function withGpt(layers, fn) {
  const gpt = new GPT({ vocab: 40, d: 16, heads: 2, maxLen: 16 });
  for (const p of gpt.h.parameters()) p.dispose();
  gpt.h = new om.nn.ModuleList(Array.from({ length: layers }, () => new Block(16, 2, 16, 'sdpa')));
  const ids = om.zeros([2, 5], { dtype: 'int64' });
  const traced = om.trace(gpt.eval(), { ids: [ids, ['batch', 'seq']] }, { outputNames: ['logits'] });
  try {
    return fn(traced);
  } finally {
    traced.dispose();
    ids.dispose();
    for (const p of gpt.parameters()) p.dispose();
  }
}

/** The graph with attributes' tensor values left out (an .om keeps none), for comparing the two formats. */
const structure = (g) => g.nodes.map((n) => ({ ...n, attributes: n.attributes.map((a) => ({ name: a.name, value: a.value?.shape ? { dtype: a.value.dtype, shape: a.value.shape } : a.value })) }));

/** Throws an OmError of kind with a message matching re. */
const throwsKind = (fn, kind, re) => assert.throws(fn, (e) => e instanceof om.OmError && e.kind === kind && re.test(e.message));

describe('graphfile: reading .onnx and .om', () => {
  test('both files of one trace read as the graph the tracer recorded: nodes, names, attributes, initializers', () => withZoo('lenet', (traced) => {
    const recorded = traced.graph();
    const onnx = readGraph(traced.toOnnx());
    const omFile = readGraph(traced.save());
    assert.equal(onnx.format, 'onnx');
    assert.equal(omFile.format, 'om');
    for (const g of [onnx, omFile]) {
      assert.deepEqual(g.nodes.map(({ opType, inputs, outputs }) => ({ opType, inputs, outputs })), recorded.nodes);
      assert.deepEqual(g.initializers, recorded.initializers);
      assert.deepEqual(g.inputs.map(({ name, dtype, shape }) => ({ name, dtype, shape })), traced.inputs);
      assert.deepEqual(g.outputs, traced.outputs);
    }
    assert.deepEqual(structure(omFile), structure(onnx), 'the same names and attributes in both files');
    const conv = onnx.nodes.find((n) => n.opType === 'Conv');
    const attrs = Object.fromEntries(conv.attributes.map((a) => [a.name, a.value]));
    const weight = recorded.initializers.find((i) => i.name === conv.inputs[1]);
    assert.deepEqual(attrs.kernel_shape, weight.shape.slice(2), 'kernel_shape is the weight\'s spatial size');
    assert.equal(attrs.strides.length, 2);
    assert.equal(attrs.pads.length, 4);
    assert.match(conv.name, /^Conv_\d+$/);
  }));

  test('an .om gives every value\'s shape, a symbolic dim by name; an .onnx those of its inputs, outputs and weights', () => withZoo('resnet', (traced, inputs) => {
    const omFile = readGraph(traced.save());
    const onnx = readGraph(traced.toOnnx());
    for (const n of omFile.nodes) for (const v of n.outputs) assert.ok(omFile.values[v], `${v} has a shape`);
    const symbolic = Object.values(omFile.values).filter((v) => v.shape.some((d) => typeof d === 'string'));
    assert.ok(symbolic.length > omFile.inputs.length, 'node outputs carry symbolic dims too');
    assert.ok(symbolic.some((v) => v.shape.some((d) => typeof d === 'string' && d !== 'batch' && d.includes('height'))),
      'a dim computed from a symbol is named by its expression');
    assert.deepEqual(Object.keys(onnx.values).sort(), [...traced.inputs, ...traced.outputs, ...traced.graph().initializers].map((v) => v.name).sort());
    const example = inputs.x[0].shape;
    assert.deepEqual(omFile.inputs[0].example, example, 'an .om keeps the traced sizes');
    assert.deepEqual(defaultSizes(omFile.inputs), { batch: example[0], height: example[2], width: example[3] }, 'the run form starts at them');
    assert.deepEqual(defaultSizes(onnx.inputs), { batch: 1, height: 1, width: 1 }, 'an .onnx keeps none');
  }));

  test('a value a call\'s lowering makes on the way (no dim names in the .om) shows a traced run\'s size as unknown, never as fixed', async () => {
    // traced twice, every symbol 2 larger the second time: a dim the page reads as a number must be
    // the same number in both (a Linear's MatMul before its bias, an LSTM's Y, read [3, 17, 32] as
    // fixed, would show the batch as a fixed 3)
    const readAt = async (name, bump) => {
      const file = wf.checkModelFile(await import(`../../examples/zoo/${name}.mjs?unnamed-${Math.random()}`), name);
      const specs = wf.describeInputs(file.inputs).map((s) => ({ ...s, shape: s.shape.map((n, d) => (s.axes[d] === null ? n : n + bump)) }));
      const inputs = wf.makeInputs(file, specs);
      const traced = wf.traceModel(file, inputs);
      try {
        return readGraph(traced.save());
      } finally {
        traced.dispose();
        wf.disposeInputs(inputs);
        wf.disposeModelFile(file);
      }
    };
    for (const [name, made] of [['vit', 'MatMul'], ['lstm', 'LSTM']]) {
      const [a, b] = [await readAt(name, 0), await readAt(name, 2)];
      let unknown = 0;
      for (const [v, { shape }] of Object.entries(a.values)) {
        const other = b.values[v]?.shape;
        assert.equal(other?.length, shape.length, `${name}: ${v} in both traces`);
        shape.forEach((d, k) => {
          if (typeof d === 'number' || typeof other[k] === 'number') assert.equal(d, other[k], `${name}: ${v} [${shape}] / [${other}] dim ${k}`);
        });
        unknown += shape.includes('?');
      }
      const node = a.nodes.find((n) => n.opType === made && a.values[n.outputs[0]].shape.includes('?'));
      assert.ok(node, `${name}: a ${made} made on the way shows an unknown dim`);
      assert.ok(a.values[node.outputs[0]].shape.some((d) => typeof d === 'number'), `${name}: its fixed dims stay numbers: [${a.values[node.outputs[0]].shape}]`);
      assert.ok(unknown > 0);
    }
  });

  test('a Constant\'s small tensor keeps its values; attributes read as text for the inspector', () => {
    const x = om.randn([2, 6], { seed: 1 });
    const traced = om.trace(moduleOf((t) => t.reshape(3, -1).transpose(0, 1)), { x: [x, [null, null]] });
    try {
      const g = readGraph(traced.toOnnx());
      const shape = g.initializers.find((i) => g.nodes.some((n) => n.opType === 'Reshape' && n.inputs[1] === i.name));
      assert.deepEqual(shape?.shape, [2], 'the Reshape reads its target shape from an initializer');
      const perm = g.nodes.find((n) => n.opType === 'Transpose').attributes.find((a) => a.name === 'perm');
      assert.equal(attributeText(perm.value), '[1, 0]');
    } finally {
      traced.dispose();
      x.dispose();
    }
    assert.equal(attributeText({ dtype: 'int64', shape: [3], values: [1, -1, 4] }), 'int64[3] [1, -1, 4]');
    assert.equal(attributeText(0.10000000149011612), '0.1');
    assert.equal(attributeText('NOTSET'), '"NOTSET"');
  });

  test('an .onnx\'s Constant nodes are constants: no box each, listed with their values in the boxes that read them', () => {
    const g = readGraph(onnxBytes({
      nodes: [
        { op: 'Constant', inputs: [], outputs: ['shape'], name: 'c_shape', ints: { value_ints: [1, -1, 4] } },
        { op: 'Constant', inputs: [], outputs: ['half'], name: 'c_half', floats: { value_float: 0.5 } },
        { op: 'Constant', inputs: [], outputs: ['seven'], name: 'c_seven', ints: { value_int: 7 } },
        { op: 'Reshape', inputs: ['x', 'shape'], outputs: ['r'] },
        { op: 'Mul', inputs: ['r', 'half'], outputs: ['y'] },
      ],
      inputs: [{ name: 'x', dims: [2, 4] }],
      outputs: ['y', { name: 'seven', dtype: 'int64' }],
    }));
    assert.deepEqual(g.nodes.map((n) => n.opType), ['Constant', 'Reshape', 'Mul'], 'a Constant that is a graph output stays a node');
    assert.deepEqual(g.constants, {
      shape: { dtype: 'int64', shape: [3], values: [1, -1, 4], node: 'c_shape' },
      half: { dtype: 'float32', shape: [], values: [0.5], node: 'c_half' },
    });
    assert.deepEqual(g.values.shape, { dtype: 'int64', shape: [3] });
    const laid = layoutGraph(g, groupByModule(g), new Set());
    const box = (op) => laid.nodes.find((b) => b.op === op);
    assert.deepEqual(box('Reshape').lines, [[{ text: '= [1, -1, 4]' }]]);
    assert.deepEqual(box('Mul').lines, [[{ text: '= 0.5' }]]);
    assert.deepEqual(laid.nodes.filter((b) => b.op === 'Constant').length, 1);
    assert.ok(!laid.edges.some((e) => e.value === 'shape' || e.value === 'half'), 'no edge from a folded constant');
    // torch.onnx.export's GPT-2 block: every shape argument is a Constant; none is drawn as a box
    const gpt = readGraph(readFileSync(new URL('fixtures/pytorch/onnx/gpt2_block.onnx', import.meta.url)));
    assert.equal(gpt.nodes.filter((n) => n.opType === 'Constant').length, 0);
    assert.ok(Object.keys(gpt.constants).length > 50, `${Object.keys(gpt.constants).length} constants`);
    for (const n of gpt.nodes) for (const v of n.inputs) assert.ok(!v || gpt.values[v] || gpt.nodes.some((m) => m.outputs.includes(v)), `${n.name} reads ${v}, which is known`);
    const all = layoutGraph(gpt, groupByModule(gpt), new Set(groupByModule(gpt).blocks.keys()));
    assert.ok(all.nodes.some((b) => b.op === 'Gather' && b.lines.some((l) => l[0].text === '= 0')), 'a Gather lists the index it reads');
  });

  test('a trace with a size threshold (an If whose branches are subgraphs) reads from both files alike, as the page reads each trace it makes', () => {
    const model = new (class extends om.nn.Module { forward(x) { return x.shape[1] > 9 ? x.sigmoid() : x.abs(); } })();
    const x = om.randn([2, 12, 4], { seed: 1 });
    const traced = om.trace(model, { x: [x, ['batch', 'seq', null]] });
    try {
      const omFile = readGraph(traced.save()), onnx = readGraph(traced.toOnnx());
      assert.deepEqual(omFile.nodes.map((n) => n.opType), ['Shape', 'Less', 'If']);
      assert.deepEqual(omFile.nodes.at(-1).attributes, [{ name: 'then_branch', value: 'a graph' }, { name: 'else_branch', value: 'a graph' }]);
      assert.deepEqual(structure(omFile), structure(onnx));
      assert.deepEqual(omFile.outputs, onnx.outputs);
    } finally {
      traced.dispose();
      x.dispose();
    }
  });

  test('an .om whose input is listed twice is Format in the Session and the page', () => withZoo('mlp', async (traced) => {
    const saved = traced.save(), graph = graphSection(saved), at = inputsAt(graph);
    const ids = new DataView(graph.buffer, graph.byteOffset + at, 8);
    assert.equal(ids.getUint32(0, true), 1, 'one input');
    const twice = withGraph(saved, splice(splice(graph, at, 4, u32(2)), at + 8, 0, u32(ids.getUint32(4, true))));
    await assert.rejects(om.InferenceSession.create(twice), (e) => e instanceof om.OmError && e.kind === 'Format'
      && /format: input 1 is value \d+, which is defined twice/.test(e.message));
    throwsKind(() => readGraph(twice), 'Format', /an input 'x' is defined twice/);
  }));

  test('bytes that are no model, or end early, are OmError Format; an .om of another version Unsupported', () => withZoo('mlp', (traced) => {
    const onnx = traced.toOnnx(), saved = traced.save();
    throwsKind(() => readGraph(new TextEncoder().encode('<!doctype html><html></html>')), 'Format', /^open: the file is damaged or not a model \(/);
    throwsKind(() => readGraph(new Uint8Array(0)), 'Format', /no graph: neither an \.onnx nor an \.om/);
    throwsKind(() => readGraph(onnx.subarray(0, onnx.length - 7)), 'Format', /runs past its message/);
    throwsKind(() => readGraph(saved.subarray(0, 40)), 'Format', /an \.om header is 64 bytes/);
    throwsKind(() => readGraph(saved.subarray(0, 100)), 'Format', /the graph section runs past the file/);
    const v4 = saved.slice();
    new DataView(v4.buffer).setUint32(8, 4, true);
    throwsKind(() => readGraph(v4), 'Unsupported', /^open: an \.om of version 4; this page reads versions 1 to 3$/);
    const big = saved.slice();
    new DataView(big.buffer).setUint32(64, 0x7fffffff, true);   // the value count
    throwsKind(() => readGraph(big), 'Format', /values: 2147483647 do not fit in the graph section/);
  }));
});

describe('aliases: every state-dict name an initializer holds', () => {

  // two fresh BatchNorms of one width: weight and running_var all ones, bias and running_mean all
  // zeros, so the tracer stores two initializers for the eight names
  test('a fresh BatchNorm\'s weight and running_var are one initializer: both files and traced.graph() keep every name, the view shows each read by its own', () => {
    const { nn } = om;
    const model = new nn.Sequential(new nn.Conv2d(2, 4, 3, { padding: 1 }), new nn.BatchNorm2d(4), new nn.ReLU(),
      new nn.Conv2d(4, 4, 3, { padding: 1 }), new nn.BatchNorm2d(4)).eval();
    const x = om.randn([1, 2, 5, 5], { seed: 3 });
    const traced = om.trace(model, { x });
    try {
      const recorded = traced.graph();
      const all = recorded.initializers.flatMap((w) => [w.name, ...w.aliases]).sort();
      const state = ['1', '4'].flatMap((m) => ['weight', 'bias', 'running_mean', 'running_var'].map((p) => `${m}.${p}`));
      assert.deepEqual(all, [...state, '0.weight', '0.bias', '3.weight', '3.bias'].sort(), 'no name is lost');
      const ones = recorded.initializers.find((w) => [w.name, ...w.aliases].includes('1.weight'));
      assert.deepEqual([ones.name, ...ones.aliases].sort(), ['1.running_var', '1.weight', '4.running_var', '4.weight']);
      for (const g of [readGraph(traced.toOnnx()), readGraph(traced.save())]) {
        assert.deepEqual(g.initializers, recorded.initializers, `${g.format}: the aliases travel with the file`);
        const groups = groupByModule(g);
        g.nodes.forEach((n, i) => {
          if (n.opType !== 'BatchNormalization') return;
          const m = groups.module[i];
          assert.ok(m === '1' || m === '4', `a BatchNorm's module: ${m}`);
          assert.deepEqual(n.inputs.slice(1).map((_, s) => groups.names.get(`${i}:${s + 1}`)), ['weight', 'bias', 'running_mean', 'running_var'].map((p) => `${m}.${p}`));
        });
        const bn = layoutGraph(g, groups, autoExpand(groups)).nodes.find((b) => b.op === 'BatchNormalization');
        assert.deepEqual(bn.lines.map((l) => l[0].text.trim()), ['1.weight', '1.bias', '1.running_mean', '1.running_var'], 'each weight under its own name in the box');
      }
    } finally {
      traced.dispose();
      x.dispose();
      model.dispose();
    }
  });
});

/** Two fresh BatchNorms of one width after convolutions, traced on x [n, 2, 5, 5]: fn(traced, model, x); then everything is freed. Its
 * ones and zeros are two initializers holding eight state-dict names. */
async function withBatchNorms(fn) {
  const { nn } = om;
  const model = new nn.Sequential(new nn.Conv2d(2, 4, 3, { padding: 1 }), new nn.BatchNorm2d(4), new nn.ReLU(),
    new nn.Conv2d(4, 4, 3, { padding: 1 }), new nn.BatchNorm2d(4)).eval();
  const x = om.randn([2, 2, 5, 5], { seed: 3 });
  const traced = om.trace(model, { x: [x, ['n', null, null, null]] });
  try {
    return await fn(traced, model, x);
  } finally {
    traced.dispose();
    x.dispose();
    model.dispose();
  }
}

/** The output of a session on the .om bytes `file` for x, as an array. */
async function runOm(file, x) {
  const session = await om.InferenceSession.create(file);
  try {
    return om.tidy(() => Array.from(Object.values(session.run({ x }))[0].toArray()));
  } finally {
    session.dispose();
  }
}

describe('the library format: version 1, and alias entries from untrusted bytes', () => {
  test('a version 1 .om (no aliases) reads as its version 2 less the aliases and runs in the Session as the trace does', () => withBatchNorms(async (traced, model, x) => {
    const saved = traced.save(), v1 = asVersion1(saved);
    assert.equal(new DataView(v1.buffer).getUint32(8, true), 1);
    assert.ok(v1.length < saved.length || graphSection(v1).length < graphSection(saved).length);
    const g2 = readGraph(saved), g1 = readGraph(v1);
    assert.ok(g2.initializers.some((i) => i.aliases.length), 'the version 2 file has aliases');
    assert.deepEqual(g1, { ...g2, initializers: g2.initializers.map((i) => ({ ...i, aliases: [] })) });
    const x3 = om.randn([3, 2, 5, 5], { seed: 4 });
    try {
      const want = om.tidy(() => Array.from(model.forward(x3).toArray()));
      assert.deepEqual(await runOm(v1, x3), await runOm(saved, x3), 'bit for bit');
      const got = await runOm(v1, x3);
      assert.ok(got.every((v, i) => Math.abs(v - want[i]) <= 1e-5), 'eager at another batch');
    } finally {
      x3.dispose();
    }
  }));

  // Seeded edits of the aliases' entries (and the records that hold them) with the header's sizes and checksum made again: each is
  // OmError Format from both readers, the Session's (src/ir/format.c) and the page's (graphfile.js), with the message naming what is
  // wrong; an alias's text changed to other letters is another name, read alike by both and run as before.
  test('seeded edits of alias entries: counts, lengths, duplicates, empty names, ids, cuts are Format in the Session and the page', () => withBatchNorms(async (traced, model, x) => {
    const saved = traced.save(), base = graphSection(saved);
    const records = initializerRecords(base);
    const nv = new DataView(base.buffer, base.byteOffset).getUint32(0, true);
    const held = readGraph(saved).initializers.map((i) => [i.name, ...i.aliases]);
    const escape = (name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const want = await runOm(saved, x);
    let state = 20261205n;
    const rand = (n) => { state = BigInt.asUintN(64, state * 6364136223846793005n + 1442695040888963407n); return Number((state >> 33n) % BigInt(n)); };
    const setU32 = (g, at, n) => { const c = g.slice(); new DataView(c.buffer).setUint32(at, n, true); return c; };
    const withAliases = records.filter((r) => r.aliases.length);
    assert.ok(withAliases.length >= 2);
    const kinds = {
      'a huge alias count': (r) => [setU32(base, r.aliasAt, [0xffffffff, 0x7fffffff, 0x40000000, r.aliases.length + 1000][rand(4)]),
        /the graph section ends inside an initializer's alias count/, /aliases: \d+ do not fit in the graph section/],
      'a huge alias length': (r) => [setU32(base, r.aliases[rand(r.aliases.length)].at, [0xffffffff, 0x80000000, base.length][rand(3)]),
        /the graph section ends inside an initializer's alias/, /an alias runs past the graph section/],
      'another held name': (r) => {
        const a = r.aliases[rand(r.aliases.length)], names = held.flat().filter((n) => n !== a.name), to = names[rand(names.length)];
        const says = new RegExp(`the state-dict name '${escape(to)}' is held by initializers|holds the state-dict name '${escape(to)}' twice`);
        return [splice(base, a.at, a.length, str(to)), says, says];
      },
      'an empty alias': (r) => {
        const a = r.aliases[rand(r.aliases.length)];
        return [splice(base, a.at, a.length, str('')), /initializer '[^']+' has an empty alias/, /initializer '[^']+' has an empty alias/];
      },
      'an alias entered twice': (r) => {
        const a = r.aliases[rand(r.aliases.length)];
        const g = splice(setU32(base, r.aliasAt, r.aliases.length + 1), r.end, 0, str(a.name));
        return [g, /holds the state-dict name '[^']+' twice/, /holds the state-dict name '[^']+' twice/];
      },
      'an id out of range or of another initializer': (r) => {
        const other = records.find((o) => o !== r).id;
        return [setU32(base, r.at, [nv, nv + rand(1000), 0xffffffff, other][rand(4)]), /initializer \d+ is value \d+, which is out of range or defined twice/,
          /an initializer/];
      },
      'a cut inside the aliases': (r) => [base.subarray(0, r.aliasAt + 1 + rand(r.end - r.aliasAt - 1)),
        /the graph section ends inside (the initializer count|an initializer's alias)/,   // the count is checked against the bytes left first
        /runs past the graph section|do not fit in the graph section/],
    };
    let round = 0;
    for (const [kind, edit] of Object.entries(kinds)) {
      for (let k = 0; k < 12; k++, round++) {
        const [graph, sessionSays, pageSays] = edit(withAliases[rand(withAliases.length)]);
        const file = withGraph(saved, graph);
        await assert.rejects(om.InferenceSession.create(file), (e) => {
          assert.ok(e instanceof om.OmError && e.kind === 'Format' && sessionSays.test(e.message), `${kind} (round ${round}): the Session's ${e}`);
          return true;
        });
        throwsKind(() => readGraph(file), 'Format', pageSays);
      }
    }
    // a letter of an alias changed: another name both readers read alike (a NUL: Format in both), the weights untouched
    for (let k = 0; k < 24; k++) {
      const r = withAliases[rand(withAliases.length)], a = r.aliases[rand(r.aliases.length)];
      const graph = base.slice(), at = a.at + 4 + rand(a.length - 4);
      graph[at] = k % 6 ? 0x41 + rand(26) : 0;
      const file = withGraph(saved, graph);
      let session;
      try {
        session = await om.InferenceSession.create(file);
      } catch (e) {
        assert.ok(e instanceof om.OmError && e.kind === 'Format', `letter ${k}: ${e}`);
        throwsKind(() => readGraph(file), 'Format', /holds a NUL|is held by initializers|twice/);
        continue;
      }
      session.dispose();
      const name = new TextDecoder().decode(graph.subarray(a.at + 4, a.at + a.length));
      assert.ok(readGraph(file).initializers.some((i) => i.aliases.includes(name)), `letter ${k}: the page reads ${name}`);
      assert.deepEqual(await runOm(file, x), want);
    }
  }));
});

// An .onnx keeps the aliases in its metadata_props (docs/tracing.md): ModelProto field 14, entries of key (1) and value (2).
const varint = (n) => { const out = []; for (; n > 0x7f; n >>>= 7) out.push((n & 0x7f) | 0x80); out.push(n); return out; };
const field = (f, bytes) => [...varint(f * 8 + 2), ...varint(bytes.length), ...bytes];
const entry = (key, value) => field(14, [...field(1, new TextEncoder().encode(key)), ...field(2, new TextEncoder().encode(value))]);

/** onnx (a ModelProto's bytes) with its metadata entries replaced by entries ([key, value] pairs). */
function withMetadata(onnx, entries) {
  const kept = [];
  for (let at = 0; at < onnx.length;) {
    const start = at, next = () => { let n = 0, shift = 0, b; do { b = onnx[at++]; n += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80); return n; };
    const tag = next(), wire = tag & 7;
    if (wire === 0) next();
    else if (wire === 2) { const length = next(); at += length; }
    else assert.fail(`wire type ${wire} at the top of a ModelProto`);
    if (tag >>> 3 !== 14) kept.push(...onnx.subarray(start, at));
  }
  return Uint8Array.from([...kept, ...entries.flatMap(([key, value]) => entry(key, value))]);
}

describe('the .onnx\'s alias entries, from untrusted bytes', () => {
  test('an alias held twice, by two initializers, empty, with a NUL or naming no initializer is Format in the page; the Session, which does not read them, runs the file', () => withBatchNorms(async (traced, model, x) => {
    const onnx = traced.toOnnx(), recorded = traced.graph().initializers;
    const entries = recorded.flatMap((i) => i.aliases.map((a) => [`onemodel.alias.${a}`, i.name]));
    assert.equal(entries.length, 6, 'two initializers hold the BatchNorms\' eight names: six aliases');
    const [ones, zeros] = recorded.filter((i) => i.aliases.length);
    assert.deepEqual(readGraph(withMetadata(onnx, entries)).initializers, recorded, 'the entries as the tracer writes them');
    assert.deepEqual(readGraph(withMetadata(onnx, [])).initializers, recorded.map((i) => ({ ...i, aliases: [] })), 'no entries: no aliases');
    const moved = [...entries.slice(1), entries[0]];
    assert.deepEqual(readGraph(withMetadata(onnx, moved)).initializers.find((i) => i.name === ones.name).aliases,
      moved.filter(([, v]) => v === ones.name).map(([k]) => k.slice('onemodel.alias.'.length)), 'aliases in the file\'s order');
    const conv = recorded.find((i) => !i.aliases.length).name;
    const cases = [
      [[...entries, entries[0]], new RegExp(`initializer '${ones.name}' holds the state-dict name '${ones.aliases[0]}' twice`)],
      [[...entries, [`onemodel.alias.${ones.name}`, ones.name]], new RegExp(`initializer '${ones.name}' holds the state-dict name '${ones.name}' twice`)],
      [[...entries, [`onemodel.alias.${ones.aliases[0]}`, zeros.name]], new RegExp(`the state-dict name '${ones.aliases[0]}' is held by initializers '${ones.name}' and '${zeros.name}'`)],
      [[...entries, [`onemodel.alias.${conv}`, zeros.name]], new RegExp(`the state-dict name '${conv}' is held by initializers '${conv}' and '${zeros.name}'`)],
      [[...entries, ['onemodel.alias.', zeros.name]], new RegExp(`initializer '${zeros.name}' has an empty alias`)],
      [[...entries, ['onemodel.alias.1.we\0ight', zeros.name]], new RegExp(`the alias of '${zeros.name}' in metadata key 'onemodel\\.alias\\.1\\.we\\\\0ight' holds a NUL`)],
      [[...entries, ['onemodel.alias.2.weight', 'x']], /metadata key 'onemodel\.alias\.2\.weight' names 'x', which is no initializer/],
      [[...entries, ['onemodel.alias.2.weight', '']], /metadata key 'onemodel\.alias\.2\.weight' names '', which is no initializer/],
    ];
    const want = om.tidy(() => Array.from(model.forward(x).toArray()));
    for (const [file, says] of cases.map(([e, re]) => [withMetadata(onnx, e), re])) {
      throwsKind(() => readGraph(file), 'Format', says);
      const session = await om.InferenceSession.create(file);
      try {
        const got = om.tidy(() => Array.from(Object.values(session.run({ x }))[0].toArray()));
        assert.ok(got.every((v, i) => Math.abs(v - want[i]) <= 1e-5), `${says}: the Session runs the file`);
      } finally {
        session.dispose();
      }
    }
    // other metadata (the symbols' entries, a key that only starts alike) is not an alias
    const others = readGraph(withMetadata(onnx, [...entries, ['onemodel.aliases', 'x'], ['onemodel.symbol.n', '{}']]));
    assert.deepEqual(others.initializers, recorded);
  }));
});

describe('groups: blocks by module', () => {
  test('a file torch.onnx.export wrote: a node without weights of its own is its scope\'s module, a LayerNorm whose weights torch shares through an Identity its own', () => {
    assert.equal(moduleOfNodeName('/layer1/0/conv1/Conv'), 'layer1.0.conv1');
    assert.equal(moduleOfNodeName('/4/down/down.0/Conv'), '4.down.0', 'a Sequential\'s child is named from its parent');
    assert.equal(moduleOfNodeName('/Add'), null);
    assert.equal(moduleOfNodeName('Conv_3'), null, 'the tracer\'s names have no scope');
    const fixture = (name) => readGraph(readFileSync(new URL(`fixtures/pytorch/onnx/${name}.onnx`, import.meta.url)));
    const moduleOf = (g, name) => groupByModule(g).module[g.nodes.findIndex((n) => n.name === name)];
    const gpt = fixture('gpt2_block');
    assert.ok(gpt.nodes.some((n) => n.opType === 'Identity' && n.inputs[0] === 'ln1.weight' && n.outputs[0] === 'ln2.weight'), 'torch shares ln1\'s weight with ln2');
    assert.equal(moduleOf(gpt, '/ln1/LayerNormalization'), 'ln1', 'read by an Identity too, ln1.weight is still ln1\'s');
    assert.equal(moduleOf(gpt, '/ln2/LayerNormalization'), 'ln2', 'it reads ln2.weight through the Identity');
    assert.equal(moduleOf(gpt, '/qkv/Reshape'), 'qkv', 'no weights: its scope');
    assert.ok(groupByModule(gpt).blocks.has('qkv'));
    const resnet = fixture('resnet');
    assert.equal(moduleOf(resnet, '/3/Relu'), '3', 'a block\'s Relu is the block\'s');
    assert.equal(moduleOf(resnet, '/4/down/down.0/Conv'), '4.down.0');
    assert.equal(moduleOf(fixture('unet'), '/Relu'), '', 'torch\'s top-level ops stay at the top');
  });

  test('a node with weights of its own is their module\'s; a 12-layer decoder opens as its 12 layers, each a block that feeds no block back', () => withGpt(12, (traced) => {
    const g = readGraph(traced.save());
    const groups = groupByModule(g);
    const inits = new Set(g.initializers.map((i) => i.name));
    const readers = (w) => g.nodes.filter((n) => n.inputs.includes(w)).length;
    g.nodes.forEach((n, i) => {
      for (const w of n.inputs.filter((v) => inits.has(v) && moduleOfName(v) && readers(v) === 1)) {
        assert.ok(moduleOfName(w).startsWith(groups.module[i]), `${n.name} reads ${w} and is in ${groups.module[i]}`);
      }
    });
    for (let k = 0; k < 12; k++) assert.ok(groups.blocks.has(`h.${k}`), `block h.${k}`);
    assert.ok(groups.blocks.has('h.0.attn') && groups.blocks.has('h.0.mlp'));
    const expanded = autoExpand(groups);
    const boxes = boxCount(groups, expanded);
    assert.ok(boxes <= OPEN_BOXES, `${g.nodes.length} nodes open as ${boxes} boxes`);
    const layers = new Set([...expanded, 'h']);
    const shown = new Set(g.nodes.map((_, i) => visibleId(groups, i, layers)));
    for (let k = 0; k < 12; k++) assert.ok(shown.has(`group:h.${k}`), `with h expanded, layer ${k} is one block`);
    assert.ok(shown.size < 60, `${shown.size} boxes`);
    assert.equal(moduleOfName('h.1.attn.attn.in_proj_weight.view_0'), 'h.1.attn.attn', 'a view of a weight is its module\'s');
    // the residual Add that ends each layer (its MLP's output and the value after attention) is the layer's: with h
    // expanded and the layers collapsed, layer k feeds layer k+1 directly, not through an Add box between them
    const producer = new Map();
    g.nodes.forEach((n, i) => n.outputs.forEach((v) => producer.set(v, i)));
    for (let k = 0; k < 11; k++) {
      const into = g.nodes.flatMap((n, i) => (visibleId(groups, i, layers) === `group:h.${k + 1}` ? n.inputs : []))
        .filter((v) => producer.has(v)).map((v) => visibleId(groups, producer.get(v), layers));
      assert.ok(into.includes(`group:h.${k}`) && into.every((id) => id === `group:h.${k}` || id === `group:h.${k + 1}` || !id.startsWith('group:h.')), `into h.${k + 1}: ${[...new Set(into)]}`);
    }
    const ends = g.nodes.map((n, i) => i).filter((i) => g.nodes[i].opType === 'Add' && groups.module[i] === 'h');
    assert.deepEqual(ends.map((i) => g.nodes[i].name), [], 'no Add between two layers');
    // with every block collapsed, at the top and one level down, the boxes form a graph without a cycle
    for (const open of [new Set(), expanded, layers, new Set(['h', 'h.3']), new Set(['h', 'h.3', 'h.3.attn'])]) {
      const ids = g.nodes.map((_, i) => visibleId(groups, i, open));
      const producer = new Map();
      g.nodes.forEach((n, i) => n.outputs.forEach((v) => producer.set(v, ids[i])));
      const next = new Map();
      g.nodes.forEach((n, i) => n.inputs.forEach((v) => {
        const from = producer.get(v);
        if (from && from !== ids[i]) next.set(from, new Set([...(next.get(from) ?? []), ids[i]]));
      }));
      const state = new Map();
      const visit = (id) => {
        if (state.get(id) === 1) assert.fail(`a cycle through ${id} with [${[...open]}] expanded`);
        if (state.get(id) === 2) return;
        state.set(id, 1);
        for (const j of next.get(id) ?? []) visit(j);
        state.set(id, 2);
      };
      for (const id of new Set(ids)) visit(id);
    }
  }));

  test('torchvision\'s blocks end in relu(out + identity): the sum and its ReLU are the block\'s, so blocks and stages feed one another directly; a ReLU between two Linears stays a box', async () => {
    for (const [block, layers] of [[Bottleneck, [3, 4, 6, 3]], [BasicBlock, [2, 2, 2, 2]]]) {
      const model = new (narrowResNet(16))(block, layers, { numClasses: 10 }).eval();
      const x = om.zeros([2, 3, 32, 32]);
      let bytes;
      try {
        const traced = om.trace(model, { x: [x, ['batch', null, 'h', 'w']] });
        bytes = traced.toOnnx();
        traced.dispose();
      } finally {
        x.dispose();
        for (const t of [...model.parameters(), ...model.buffers()]) t.dispose();
      }
      const g = readGraph(bytes), groups = groupByModule(g);
      const what = `${block.name} ${layers}`;
      const blocks = layers.flatMap((n, s) => Array.from({ length: n }, (_, k) => `layer${s + 1}.${k}`));
      // every node but the stem's and the head's is a block's; every sum and its ReLU the block's own
      const outside = g.nodes.filter((_, i) => !blocks.some((b) => groups.module[i].startsWith(b))).map((n) => n.opType);
      assert.deepEqual(outside, ['Conv', 'BatchNormalization', 'Relu', 'MaxPool', 'GlobalAveragePool', 'Reshape', 'Gemm'], what);
      const producer = new Map();
      g.nodes.forEach((n, i) => n.outputs.forEach((v) => producer.set(v, i)));
      for (const [open, chain] of [[new Set(), ['layer1', 'layer2', 'layer3', 'layer4']], [autoExpand(groups), blocks]]) {
        const ids = g.nodes.map((_, i) => visibleId(groups, i, open));
        for (let k = 1; k < chain.length; k++) {
          const into = new Set(g.nodes.flatMap((n, i) => (ids[i] === `group:${chain[k]}` ? n.inputs : [])).filter((v) => producer.has(v))
            .map((v) => ids[producer.get(v)]).filter((id) => id !== `group:${chain[k]}`));
          assert.deepEqual([...into], [`group:${chain[k - 1]}`], `${what}: what feeds ${chain[k]} with [${[...open]}] open`);
        }
      }
    }
    await withZoo('mlp', (traced) => {
      const g = readGraph(traced.toOnnx()), groups = groupByModule(g);
      assert.deepEqual(g.nodes.map((n, i) => [n.opType, groups.module[i]]), [['Gemm', 'fc1'], ['Relu', ''], ['Gemm', 'fc2'], ['Relu', ''], ['Gemm', 'fc3']]);
    });
  });

  test('a weight read through a node that reads weights alone: the tied LM head\'s Transpose and the MatMul it feeds are lm_head\'s, the position table\'s Slice wpe\'s', () => {
    const model = new GPT2LMHeadModel({ vocab_size: 50, n_positions: 32, n_embd: 16, n_layer: 2, n_head: 2 }).eval();
    const ids = om.zeros([2, 5], { dtype: 'int64' });
    let bytes;
    try {
      const traced = om.trace(model, { input_ids: [ids, ['batch', 'seq']] }, { outputNames: ['logits'] });
      bytes = traced.toOnnx();
      traced.dispose();
    } finally {
      ids.dispose();
      for (const t of [...model.parameters(), ...model.buffers()]) t.dispose();
    }
    const g = readGraph(bytes), groups = groupByModule(g);
    const logits = g.nodes.findIndex((n) => n.outputs.includes('logits'));
    assert.equal(g.nodes[logits].opType, 'MatMul');
    assert.equal(groups.module[logits], 'lm_head', 'the head\'s MatMul');
    const [transpose] = g.nodes.map((n, i) => i).filter((i) => g.nodes[logits].inputs.includes(g.nodes[i].outputs[0]) && g.nodes[i].opType === 'Transpose');
    assert.equal(groups.module[transpose], 'lm_head', 'the tied weight\'s Transpose');
    assert.ok(groups.blocks.has('lm_head'), 'one block');
    const top = g.nodes.filter((_, i) => groups.module[i] === '').map((n) => n.opType);
    assert.deepEqual(top, [], `nothing at the top: ${top}`);
  });

  test('a small graph opens whole; the layout labels every edge with its shape and frames the expanded blocks', () => withZoo('resnet', (traced) => {
    const g = readGraph(traced.save());
    const groups = groupByModule(g);
    const expanded = autoExpand(groups, 40);
    assert.equal(boxCount(groups, expanded), g.nodes.length, 'every node its own box');
    const laid = layoutGraph(g, groups, expanded);
    assert.equal(laid.nodes.filter((n) => n.kind === 'op').length, g.nodes.length);
    assert.ok(laid.edges.length >= g.nodes.length);
    for (const e of laid.edges) assert.ok(e.label, `${e.value} is labelled`);
    const x = laid.edges.find((e) => e.value === 'x');
    assert.deepEqual(x.label.map((s) => s.text).join(''), `[${g.inputs[0].shape.join(', ')}]`);
    assert.deepEqual(laid.frames.map((f) => f.path).sort(), [...expanded].sort());
    const collapsed = layoutGraph(g, groups, new Set());
    assert.deepEqual(collapsed.nodes.filter((n) => n.kind === 'group').map((n) => n.path), ['stem', 'layer1', 'layer2', 'layer3'], 'the stem\'s BatchNorm by the names it reads (its weights are shared)');
    assert.deepEqual(collapsed.frames, []);
  }));
});

describe('feeds: the inputs a file runs on', () => {
  const inputs = [{ name: 'x', dtype: 'float32', shape: ['batch', 3] }, { name: 'ids', dtype: 'int64', shape: ['batch', '?'] }];

  test('generated at the sizes given: the same values every time, ids valid for any vocabulary', () => {
    const a = feedsFor(inputs, { batch: 2 }), b = feedsFor(inputs, { batch: 2 });
    assert.deepEqual(a.x.dims, [2, 3]);
    assert.deepEqual(a.ids.dims, [2, 1]);
    assert.deepEqual(Array.from(a.x.data), Array.from(b.x.data));
    assert.ok(Array.from(a.x.data).every((v) => v >= -1 && v < 1) && new Set(a.x.data).size === 6);
    assert.deepEqual(Array.from(a.ids.data), [0n, 1n]);
  });

  test('uploaded inputs are used as given; bad sizes and uploads are OmError InvalidArgument naming the input', () => {
    const f = feedsFor(inputs, { batch: 1 }, { x: { dims: [1, 3], data: [1, 2, 3] } });
    assert.deepEqual(Array.from(f.x.data), [1, 2, 3]);
    throwsKind(() => feedsFor(inputs, { batch: 0 }), 'InvalidArgument', /^run: the size of batch must be a positive integer, got 0$/);
    throwsKind(() => feedsFor(inputs, { batch: 1 }, { x: { dims: [1, 3], data: [1] } }), 'InvalidArgument', /^run: uploaded input x has 1 values for dims \[1,3\] \(3\)$/);
    throwsKind(() => feedsFor(inputs, { batch: 1 }, { x: { dims: [1, 4], data: [1, 2, 3, 4] } }), 'InvalidArgument', /^run: uploaded input x has dims \[1,4\]; the file takes \[batch,3\]$/);
    throwsKind(() => feedsFor(inputs, { batch: 1 }, { x: [1, 2, 3] }), 'InvalidArgument', /^run: uploaded input x must be \{ dims: \[sizes\], data: \[numbers\] \}$/);
    throwsKind(() => feedsFor([{ name: 's', dtype: 'string', shape: [1] }], {}), 'InvalidArgument', /^run: input s is string; the page makes float32, int64 and bool inputs$/);
    throwsKind(() => feedsFor(inputs, { batch: 1 << 26 }), 'InvalidArgument', /^run: input x would hold 201326592 elements at \[67108864,3\]; at most 67108864$/);
  });
});
