// The demo page's graph view in headless Chromium at 1280x800: the inspector of a traced zoo
// model's node (attributes, every value's dtype and shape, symbolic dims by name, weights by
// state-dict name) against the file Node traces; blocks by module collapsed and expanded in place;
// search that expands, selects and centres; zoom that keeps the selection; a 12-layer decoder's
// .onnx, made here and dropped on the page, opening readable; a file run in the Session and in
// onnxruntime-web with the outputs Node's Session gives. Screenshots (demo-page, demo-inspector,
// demo-blocks, demo-resnet50, demo-run) go to test-artifacts/web-demo-view/, or where DEMO_SCREENSHOTS says: `npm run
// screenshots` writes the ones docs/web-demo.md shows to docs/images/.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as om from 'onemodel';
import * as wf from '../../examples/lib/workflow.mjs';
import { Block, GPT } from '../../examples/zoo/gpt.mjs';
import { Bottleneck, resnet50 } from '../../examples/torchvision/resnet.mjs';
import { narrowResNet } from './narrow-resnet.mjs';
import { openDemo } from './web-demo-page.mjs';
import { readGraph } from '../../web-demo/src/graphfile.js';
import { OPEN_BOXES, groupByModule } from '../../web-demo/src/groups.js';
import { feedsFor, defaultSizes } from '../../web-demo/src/feeds.js';
import { attributeText } from '../../web-demo/src/inspector.js';
import { asVersion1 } from './om-file.mjs';
import { onnxBytes } from '../../tools/onnx_bytes.mjs';
import { readFileSync } from 'node:fs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SHOTS = resolve(ROOT, process.env.DEMO_SCREENSHOTS ?? join('test-artifacts', 'web-demo-view'));
const READABLE = 0.85;   // graph.js: the scale a large graph opens at
const LEGIBLE = 0.5;     // graph.js: the smallest scale Fit shows a whole graph at while it can collapse blocks

/** The .om of zoo model `name` traced at its own inputs, as Node makes it. */
async function zooSaved(name) {
  const file = wf.checkModelFile(await import(`../../examples/zoo/${name}.mjs?view-${Math.random()}`), name);
  const inputs = wf.makeInputs(file, wf.describeInputs(file.inputs));
  const traced = wf.traceModel(file, inputs);
  try {
    return traced.save();
  } finally {
    traced.dispose();
    wf.disposeInputs(inputs);
    wf.disposeModelFile(file);
  }
}

/** A 12-layer GPT (the zoo's classes) traced on ids [batch, seq]: its .onnx and .om. */
function gpt12() {
  const gpt = new GPT({ vocab: 40, d: 16, heads: 2, maxLen: 16 });
  for (const p of gpt.h.parameters()) p.dispose();
  gpt.h = new om.nn.ModuleList(Array.from({ length: 12 }, () => new Block(16, 2, 16, 'sdpa')));
  const ids = om.zeros([2, 5], { dtype: 'int64' });
  const traced = om.trace(gpt.eval(), { ids: [ids, ['batch', 'seq']] }, { outputNames: ['logits'] });
  try {
    return { onnx: traced.toOnnx(), saved: traced.save() };
  } finally {
    traced.dispose();
    ids.dispose();
    for (const p of gpt.parameters()) p.dispose();
  }
}

describe('the demo page\'s graph view in Chromium', () => {
  let demo, page, pageErrors, idle, dir;

  before(async () => {
    await om.ready();
    mkdirSync(SHOTS, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), 'onemodel-view-'));
    demo = await openDemo({ width: 1280, height: 800 });
    ({ page, pageErrors, idle } = demo);
  });

  after(async () => {
    await demo?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const shot = (name) => page.screenshot({ path: join(SHOTS, `${name}.png`) });
  const boxIds = (kind) => page.$$eval(`#graph g.node.${kind}`, (gs) => gs.map((g) => g.dataset.id));
  /** A box's rectangle on screen. */
  const rect = (sel) => page.$eval(sel, (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
  const view = () => page.evaluate(() => window.onemodelPage.graph.view);
  const inspector = (sel) => page.$$eval(`#inspector ${sel}`, (es) => es.map((e) => e.textContent.trim()));

  /** Drops `bytes` on the page as file `name` and checks the graph opens readable: few boxes, legible, its input in the panel. */
  async function dropOpensReadable(name, bytes) {
    const drop = await page.evaluateHandle(([n, b]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(b)], n));
      return dt;
    }, [name, Array.from(bytes)]);
    await page.dispatchEvent('body', 'drop', { dataTransfer: drop });
    await idle();
    const g = readGraph(bytes);
    assert.equal(await page.textContent('#graph-info'), `${name} · ${g.nodes.length} nodes · ${g.initializers.length} initializers`);
    const boxes = await page.locator('#graph g.node').count();
    assert.ok(boxes <= OPEN_BOXES + 2, `${g.nodes.length} nodes open as ${boxes} boxes`);
    assert.ok((await view()).k >= READABLE, 'not specks');
    const svg = await rect('#graph svg');
    const input = await rect('#graph g.node.input rect');
    assert.ok(input.x >= svg.x && input.x + input.w <= svg.x + svg.w && input.y >= svg.y && input.y + input.h <= svg.y + svg.h, 'its input is in the panel');
    return g;
  }

  async function pick(name) {
    await page.selectOption('#model-select', name);
    await idle();
  }

  test('the page as the README shows it: the zoo\'s UNet traced with a symbolic batch n, every edge labelled, no Shape node', async () => {
    await pick('unet');
    for (const [dim, size, symbol] of [[0, 5, 'n']]) {
      const cell = `#inputs [data-input="x"] [data-dim="${dim}"]`;
      await page.fill(`${cell} .size`, String(size));
      await page.fill(`${cell} .axis`, symbol);
    }
    await page.click('#trace');
    await idle();
    assert.equal(await page.isHidden('#error'), true, await page.textContent('#error'));
    const ops = await page.$$eval('#graph g.node.op', (gs) => gs.map((g) => g.dataset.op));
    assert.ok(ops.includes('Resize') && ops.filter((op) => op === 'Conv').length === 4, ops.join());
    assert.equal(ops.filter((op) => op === 'Shape').length, 0, 'a conv net with a symbolic batch computes no size');
    const lines = (sel) => page.$eval(sel, (g) => Array.from(g.querySelectorAll('text'), (t) => t.textContent));
    assert.deepEqual(await lines('#graph g.node.input'), ['x', '[n, 2, 8, 12]', 'float32']);
    assert.deepEqual(await lines('#graph g.node.output'), ['y', '[n, 3, 8, 12]', 'float32']);
    const labels = await page.$$eval('#graph .edge-label', (ts) => ts.map((t) => t.textContent));
    assert.ok(labels.length >= ops.length, `every edge labelled: ${labels.length} labels for ${ops.length} nodes`);
    for (const l of labels) assert.match(l, /^\[(n, \d+, \d+, \d+|\d+)\]$/, 'each activation edge carries its batch-symbolic shape (a 1-D constant its length)');
    await shot('demo-page');
  });

  test('trace a zoo model and inspect a node: op, name, module, attributes, every value\'s dtype and shape, weights by name', async () => {
    await pick('resnet');
    await page.click('#trace');
    await idle();
    const g = readGraph(await zooSaved('resnet'));
    const groups = groupByModule(g);
    // the first Conv of layer2's first block: a stride-2 conv on symbolic height and width
    const index = g.nodes.findIndex((n, i) => n.opType === 'Conv' && groups.module[i].startsWith('layer2.0'));
    const node = g.nodes[index];
    await page.evaluate((t) => window.onemodelPage.graph.reveal(t), `op:${index}`);
    await idle();
    assert.equal(await page.getAttribute('#graph g.node.selected', 'data-id'), `op:${index}`);
    assert.equal(await page.isVisible('#inspector'), true);
    assert.deepEqual(await inspector('h3'), [`Conv ${node.name}`]);
    assert.deepEqual(await inspector('.module code'), [groups.module[index]]);
    const attrs = await page.$$eval('#inspector .attrs tr', (trs) => trs.map((tr) => [tr.dataset.attr, tr.cells[1].textContent]));
    assert.deepEqual(attrs, node.attributes.map((a) => [a.name, attributeText(a.value)]));
    assert.deepEqual(Object.fromEntries(attrs).strides, '[2, 2]');
    assert.equal(Object.fromEntries(attrs).kernel_shape, `[${g.values[node.inputs[1]].shape.slice(2).join(', ')}]`, 'the weight\'s spatial size');
    const rows = (which) => page.$$eval(`#inspector .values.${which} tr`, (trs) => trs.map((tr) => ({
      name: tr.dataset.value, tag: tr.querySelector('.tag')?.textContent ?? null, dtype: tr.cells[1].textContent, shape: tr.cells[2].textContent,
      sym: Array.from(tr.querySelectorAll('.sym'), (s) => s.textContent),
    })));
    const expected = (names) => names.map((name) => {
      const v = g.values[name];
      const weight = g.initializers.some((i) => i.name === name);
      return { name, tag: weight ? 'weight' : null, dtype: v.dtype, shape: `[${v.shape.join(', ')}]`, sym: v.shape.filter((d) => typeof d === 'string') };
    });
    const inputs = await rows('inputs');
    assert.deepEqual(inputs, expected(node.inputs));
    assert.equal(inputs[1].name, `${groups.module[index]}.weight`, 'the weight by its state-dict name');
    assert.ok(inputs[0].sym.includes('batch') && inputs[0].sym.length === 3, `symbolic dims by name: ${inputs[0].shape}`);
    assert.deepEqual(await rows('outputs'), expected(node.outputs));
    assert.ok((await rows('outputs'))[0].sym.some((d) => d !== 'batch'), 'the output\'s spatial dims are expressions of height and width');
    // every edge drawn is labelled with its value's shape
    const labels = await page.$$eval('#graph .edge-label', (ts) => ts.map((t) => [t.dataset.value, t.textContent]));
    assert.ok(labels.length >= g.nodes.length / 2);
    for (const [value, text] of labels) assert.equal(text, `[${g.values[value].shape.join(', ')}]`);
    await shot('demo-inspector');
    // the BatchNorm after it, fresh: its weight and running_var are one initializer (all ones), its
    // bias and running_mean another, each shared with other BatchNorms of that width; each input is
    // shown by the name this BatchNorm reads it as, with the other names the initializer holds
    const bn = g.nodes.findIndex((n, i) => i > index && n.opType === 'BatchNormalization');
    const m = groups.module[bn];
    assert.equal(m, 'layer2.0.downsample.1', 'the downsample branch runs first');
    await page.evaluate((t) => window.onemodelPage.graph.reveal(t), `op:${bn}`);
    await idle();
    const read = await page.$$eval('#inspector .values.inputs tr', (trs) => trs.map((tr) => [tr.cells[0].querySelector('code').textContent, tr.querySelector('.aliases')?.textContent ?? '']));
    assert.deepEqual(read.slice(1).map(([name]) => name), ['weight', 'bias', 'running_mean', 'running_var'].map((p) => `${m}.${p}`));
    const ones = g.initializers.find((w) => w.name === g.nodes[bn].inputs[1]);
    assert.ok(ones.aliases.length >= 1, 'a fresh BatchNorm\'s weight is stored with its running_var');
    for (const other of [ones.name, ...ones.aliases].filter((n) => n !== `${m}.weight`).slice(0, 6)) assert.ok(read[1][1].includes(other), `${other} in ${read[1][1]}`);
  });

  test('blocks by module: expand one in place (the inspector\'s Expand, or a double click) and collapse it by its frame', async () => {
    await pick('gpt');
    await page.click('#trace');
    await idle();
    const g = readGraph(await zooSaved('gpt'));
    const groups = groupByModule(g);
    const blocks = await boxIds('group');
    assert.ok((await boxIds('op')).length + blocks.length <= OPEN_BOXES);
    // the two layers open as boxes, or already expanded where their inner blocks fit in the boxes
    // the page opens with (groups.js autoExpand): then collapsed by their frames first
    for (const layer of ['h.0', 'h.1']) {
      if (blocks.includes(`group:${layer}`)) continue;
      assert.ok(blocks.some((b) => b.startsWith(`group:${layer}.`)), blocks.join());
      await page.fill('#graph-search', layer); // found by its path, it is selected, and the inspector collapses it
      await page.press('#graph-search', 'Enter');
      await idle();
      assert.equal(await page.textContent('#inspector button.toggle'), 'Collapse');
      await page.locator('#inspector button.toggle').dispatchEvent('click'); // (the search's list lies over it)
      await idle();
    }
    assert.ok((await boxIds('group')).includes('group:h.0') && (await boxIds('group')).includes('group:h.1'));
    if (!blocks.includes('group:h.0')) { // the search's list closed, the graph fitted again as it opened
      await page.fill('#graph-search', '');
      await page.click('#fit');
      await idle();
    }
    await page.click('#graph g.node.group[data-path="h.0"]');
    // the click focuses the graph for its keys without the browser's dark focus ring (the keyboard's focus shows one)
    const outline = () => page.$eval('#graph svg.graph', (s) => [s.matches(':focus'), getComputedStyle(s).outlineStyle]);
    assert.deepEqual(await outline(), [true, 'none']);
    const size = groups.blocks.get('h.0').size;
    assert.deepEqual(await inspector('h3'), ['module h.0']);
    assert.match((await inspector('p'))[0], new RegExp(`^${size} nodes · \\d+ weights \\([\\d,]+ elements\\)`));
    const before = await rect('#graph g.node.group[data-path="h.0"]');
    await page.click('#inspector button.toggle');
    await idle();
    assert.equal(await page.locator('#graph g.node.group[data-path="h.0"]').count(), 0, 'the block\'s box is gone');
    const frame = await rect('#graph g.frame[data-path="h.0"] rect');
    assert.ok(Math.abs(frame.y - before.y) <= 1 && Math.abs(frame.x + frame.w / 2 - (before.x + before.w / 2)) <= 1,
      `the frame's top stays where the box's top was (${JSON.stringify(before)} -> ${JSON.stringify(frame)})`);
    const inside = await page.$$eval('#graph g.node', (gs) => gs.map((e) => e.dataset.path ?? e.dataset.id));
    assert.ok(inside.some((p) => p.startsWith?.('h.0.')), `h.0's inner blocks show: ${inside.join()}`);
    assert.equal(await page.textContent('#inspector button.toggle'), 'Collapse');
    await page.click('#graph g.frame[data-path="h.0"] .frame-label');
    await idle();
    assert.equal(await page.locator('#graph g.frame[data-path="h.0"]').count(), 0);
    assert.equal(await page.getAttribute('#graph g.node.selected', 'data-id'), 'group:h.0', 'the collapsed block is selected');
    // a double click expands too (on h.1, found by its path)
    await page.fill('#graph-search', 'h.1');
    await page.press('#graph-search', 'Enter');
    await idle();
    assert.equal(await page.getAttribute('#graph g.node.selected', 'data-id'), 'group:h.1');
    // its weights by the names h.1 reads them as, though the tracer stored the untrained LayerNorms' equal scales once, under h.0's
    const weights = await page.$$eval('#inspector table.weights tr', (rs) => rs.map((r) => r.querySelector('td code').textContent));
    assert.ok(weights.length > 0 && weights.every((w) => w.startsWith('h.1.')), weights.join());
    assert.ok(g.initializers.some((i) => i.name.startsWith('h.0.') && i.aliases.some((a) => a.startsWith('h.1.'))), 'a weight h.1 reads is stored under h.0\'s name');
    await page.dblclick('#graph g.node.group[data-path="h.1"]');
    await idle();
    assert.equal(await page.locator('#graph g.frame[data-path="h.1"]').count(), 1);
  });

  test('search by op type, value name and module: a hit expands what holds it, is selected and centred', async () => {
    const g = readGraph(await zooSaved('gpt'));
    const groups = groupByModule(g);
    await page.click('[data-tab=graph]');
    await page.fill('#graph-search', 'softmax');
    const hits = await page.$$eval('#search-results li', (ls) => ls.map((l) => l.dataset.target));
    const softmax = g.nodes.map((n, i) => (n.opType === 'Softmax' ? `op:${i}` : null)).filter(Boolean);
    assert.deepEqual(hits.slice(0, softmax.length), softmax, 'the nodes of that op type first');
    await page.press('#graph-search', 'Enter');
    await idle();
    const [first] = softmax;
    assert.equal(await page.getAttribute('#graph g.node.selected', 'data-id'), first);
    assert.equal(await page.getAttribute('#graph g.node.selected', 'data-op'), 'Softmax');
    const svg = await rect('#graph svg');
    const box = await rect('#graph g.node.selected rect');
    assert.ok(Math.abs(box.x + box.w / 2 - (svg.x + svg.w / 2)) <= 2 && Math.abs(box.y + box.h / 2 - (svg.y + svg.h / 2)) <= 2, 'centred');
    assert.ok((await view()).k >= READABLE, 'at a readable scale');
    const module = groups.module[Number(first.slice(3))];
    assert.ok(await page.locator(`#graph g.frame[data-path="${module.split('.').slice(0, 2).join('.')}"]`).count() === 1, 'the block holding it is expanded');
    // Enter again: the next hit
    await page.press('#graph-search', 'Enter');
    await idle();
    assert.equal(await page.getAttribute('#graph g.node.selected', 'data-id'), softmax[1]);
    // a value name finds the node that writes it; a module path finds the block
    const value = g.nodes[5].outputs[0];
    await page.fill('#graph-search', value);
    assert.ok((await page.$$eval('#search-results li', (ls) => ls.map((l) => l.dataset.target))).includes('op:5'));
    await page.fill('#graph-search', 'h.1.mlp');
    assert.equal(await page.getAttribute('#search-results li:first-child', 'data-target'), 'block:h.1.mlp');
    await page.fill('#graph-search', 'no such thing');
    assert.deepEqual(await page.$$eval('#search-results li', (ls) => ls.map((l) => l.textContent)), ['no match']);
    await page.fill('#graph-search', '');
  });

  test('zoom keeps the selected box where it is; a drag pans and keeps the selection', async () => {
    const sel = '#graph g.node.selected rect';
    const before = await rect(sel);
    await page.click('#zoom-in');
    const zoomed = await rect(sel);
    assert.ok(zoomed.w > before.w * 1.2, 'zoomed in');
    assert.ok(Math.abs(zoomed.x + zoomed.w / 2 - (before.x + before.w / 2)) <= 1 && Math.abs(zoomed.y - before.y) <= 1, 'the selection stays put');
    await page.focus('#graph svg');
    await page.keyboard.press('-');
    const out = await rect(sel);
    assert.ok(Math.abs(out.x + out.w / 2 - (before.x + before.w / 2)) <= 1 && Math.abs(out.y - before.y) <= 1);
    const svg = await rect('#graph svg');
    await page.mouse.move(svg.x + 40, svg.y + 40);
    await page.mouse.down();
    await page.mouse.move(svg.x + 100, svg.y + 70, { steps: 4 });
    await page.mouse.up();
    const panned = await rect(sel);
    assert.deepEqual([Math.round(panned.x - out.x), Math.round(panned.y - out.y)], [60, 30]);
    assert.equal(await page.isVisible('#inspector'), true, 'still selected and inspected');
  });

  let files;
  test('a ResNet-50 (torchvision\'s port: bottlenecks [3, 4, 6, 3], narrowed) dropped on the page opens readable: its 16 bottlenecks in four stages, no box between two of them (each ReLU after a residual sum is its bottleneck\'s); a stage collapses and expands', async () => {
    const model = new (narrowResNet(16))(Bottleneck, [3, 4, 6, 3], { numClasses: 10 }).eval();
    const x = om.zeros([2, 3, 32, 32]);
    const traced = om.trace(model, { x: [x, ['batch', null, 'height', 'width']] });
    let onnx;
    try {
      onnx = traced.toOnnx();
    } finally {
      traced.dispose();
      x.dispose();
      for (const p of model.parameters()) p.dispose();
    }
    const g = await dropOpensReadable('resnet50.onnx', onnx);
    assert.ok(g.nodes.length > 120, `ResNet-50 has ${g.nodes.length} nodes`);
    const shown = async () => page.$$eval('#graph g.node.group', (gs) => gs.map((e) => e.dataset.path));
    const bottlenecks = [3, 4, 6, 3].flatMap((n, s) => Array.from({ length: n }, (_, k) => `layer${s + 1}.${k}`));
    assert.deepEqual((await shown()).sort(), [...bottlenecks].sort());
    assert.deepEqual(await page.$$eval('#graph g.frame', (fs) => fs.map((e) => e.dataset.path)), ['layer1', 'layer2', 'layer3', 'layer4']);
    // what is drawn as a box of its own: the stem (conv1, bn1, relu, maxpool) and the head (pool, flatten, fc), nothing between the blocks
    assert.deepEqual(await page.$$eval('#graph g.node.op', (gs) => gs.map((e) => e.dataset.op)),
      ['Conv', 'BatchNormalization', 'Relu', 'MaxPool', 'GlobalAveragePool', 'Reshape', 'Gemm']);
    await page.evaluate(() => window.onemodelPage.graph.collapse('layer3'));   // (as a click on its frame's label does: it is below the panel's edge)
    await idle();
    assert.ok((await shown()).includes('layer3') && !(await shown()).includes('layer3.0'), `layer3 collapsed: ${(await shown()).join()}`);
    await page.fill('#graph-search', 'layer3');
    await page.press('#graph-search', 'Enter');
    await idle();
    assert.equal(await page.getAttribute('#graph g.node.selected', 'data-id'), 'group:layer3', 'search selects and centres the stage');
    await page.dblclick('#graph g.node.group[data-path="layer3"]');
    await idle();
    const open = await shown();
    for (let k = 0; k < 6; k++) assert.ok(open.includes(`layer3.${k}`), `bottleneck ${k}: ${open.join()}`);
    assert.ok((await view()).k >= READABLE, 'still legible with a stage open');
  });

  test('a full-size ResNet-50 .onnx (100 MB of weights, made here) opened from the file picker: drawn, its stages open on their bottlenecks, every edge\'s shape named, no \'?\'', async (t) => {
    // made at test time, never committed: torchvision's architecture at full width, traced with
    // symbolic batch, height and width (the strided convs' dims are floor((height+1)/2), ...)
    const path = join(dir, 'resnet50-full.onnx');
    const model = resnet50({ numClasses: 1000 }).eval();
    const x = om.zeros([2, 3, 64, 64]);
    try {
      const traced = om.trace(model, { x: [x, ['batch', null, 'height', 'width']] });
      try {
        writeFileSync(path, traced.toOnnx());
      } finally {
        traced.dispose();
      }
    } finally {
      x.dispose();
      for (const p of model.parameters()) p.dispose();
      for (const b of model.buffers()) b.dispose();
    }
    const bytes = readFileSync(path), g = readGraph(bytes);
    assert.ok(bytes.length > 100e6 && g.nodes.length > 120, `${bytes.length} bytes, ${g.nodes.length} nodes`);
    const started = Date.now();
    await page.setInputFiles('#open-file', path);
    await page.waitForFunction(() => document.querySelector('#graph-info').textContent.startsWith('resnet50-full.onnx'));
    await idle();
    t.diagnostic(`opened and drawn in ${Date.now() - started} ms`);
    assert.equal(await page.textContent('#graph-info'), `resnet50-full.onnx · ${g.nodes.length} nodes · ${g.initializers.length} initializers`);
    assert.match(await page.textContent('#status'), /^Opened resnet50-full\.onnx: \d+ nodes; every shape from the Session \(bound at batch = 1, height = 1, width = 1, then each symbol moved\)/);
    const stages = await page.$$eval('#graph g.frame', (gs) => gs.map((e) => e.dataset.path));
    assert.deepEqual(stages, ['layer1', 'layer2', 'layer3', 'layer4'], 'its stages, open on their bottlenecks');
    assert.equal(await page.locator('#graph g.node.group').count(), 16);
    const labels = await page.$$eval('#graph text.edge-label', (ts) => ts.map((e) => e.textContent));
    assert.ok(labels.length >= 5 && labels.every((l) => !l.includes('?')), labels.join(' | '));
    assert.ok(labels.some((l) => l.includes('floor((height+3)/4)')), `layer1's output at a quarter of the height: ${labels.join(' | ')}`);
    assert.ok((await view()).k >= READABLE, 'not specks');
    await shot('demo-resnet50');
  });

  test('a 12-layer decoder\'s .onnx dropped on the page opens readable: its layers as blocks, at a legible scale, in the panel', async () => {
    files = gpt12();
    await dropOpensReadable('gpt12.onnx', files.onnx);
    // it opens with the layer list expanded: the 12 layers, each one block (no box between two
    // layers, the residual Add that ends each being the layer's, so all 12 fit in OPEN_BOXES)
    const shown = await page.$$eval('#graph g.node.group', (gs) => gs.map((e) => e.dataset.path));
    assert.ok(!shown.includes('h'), `the layer list is open: ${shown.join()}`);
    for (let k = 0; k < 12; k++) assert.ok(shown.includes(`h.${k}`), `layer ${k}: ${shown.join()}`);
    await page.fill('#graph-search', 'h.1');
    await page.press('#graph-search', 'Enter');
    await idle();
    assert.equal(await page.getAttribute('#graph g.node.selected', 'data-id'), 'group:h.1');
    await page.fill('#graph-search', '');
    await shot('demo-blocks');

    // Fit with every layer open and a node of h.5's attention selected: the whole graph, readable, the selection kept
    for (let k = 0; k < 12; k++) {   // (the page's expand(), as a double click calls it: most of the boxes are off screen)
      await page.evaluate((path) => window.onemodelPage.graph.expand(path), `h.${k}`);
      await idle();
    }
    const whole = () => page.evaluate(() => {
      const { graph } = window.onemodelPage, r = graph.svg.getBoundingClientRect();
      return Math.min(1, (r.width - 16) / graph.size.width, (r.height - 16) / graph.size.height);
    });
    const before = await whole();
    assert.ok(before < LEGIBLE, 'twelve open layers are too tall to read whole: the case Fit has to handle');
    const g = readGraph(files.onnx), groups = groupByModule(g);
    const index = g.nodes.findIndex((_, i) => groups.module[i].startsWith('h.5.attn'));
    assert.ok(index >= 0, groups.module.join());
    await page.evaluate((id) => window.onemodelPage.graph.reveal(id), `op:${index}`);
    await idle();
    await page.click('#fit');
    await idle();
    const inPanel = async () => {
      const svg = await rect('#graph svg');
      for (const r of await page.$$eval('#graph g.node rect', (rs) => rs.map((e) => { const b = e.getBoundingClientRect(); return [b.x, b.y, b.width, b.height]; }))) {
        assert.ok(r[0] >= svg.x - 1 && r[0] + r[2] <= svg.x + svg.w + 1 && r[1] >= svg.y - 1 && r[1] + r[3] <= svg.y + svg.h + 1, `a box outside the panel: ${r}`);
      }
    };
    // the blocks holding the selection stay open (it stays drawn and selected), the other layers collapse
    assert.equal(await page.getAttribute('#graph g.node.selected', 'data-id'), `op:${index}`, 'the selection stays drawn and selected');
    const open = await page.$$eval('#graph g.node.group', (gs) => gs.map((e) => e.dataset.path));
    assert.ok(open.includes('h.4') && open.includes('h.6') && !open.includes('h.5'), `the other layers collapsed, h.5 open: ${open.join()}`);
    assert.ok((await view()).k > before, `Fit shows it at ${(await view()).k}, whole with all open at ${before}`);
    await inPanel();
    // nothing selected: Fit collapses on until the whole reads
    await page.evaluate(() => window.onemodelPage.graph.select(null));
    await page.click('#fit');
    await idle();
    assert.ok((await view()).k >= LEGIBLE, `Fit shows it at ${(await view()).k}`);
    await inPanel();
    await shot('demo-fit');
  });

  test('run an opened .onnx in the Session and onnxruntime-web: both outputs, timings and the max difference, on generated or uploaded inputs; an .om in the Session', async () => {
    const g = readGraph(files.onnx);
    await page.click('[data-tab=run]');
    assert.deepEqual(await page.$$eval('#run-sizes .size', (is) => is.map((i) => [i.dataset.symbol, i.value])), [['batch', '1'], ['seq', '1']]);
    await page.fill('#run-sizes [data-symbol=seq]', '6');
    assert.equal(await page.textContent('#run-file'), 'Run in both engines');
    await page.click('#run-file');
    await idle();
    assert.match(await page.textContent('#run-summary'), /^Session \d+\.\d\d ms · onnxruntime-web \d+\.\d\d ms · max \|difference\| \S+ \(one run after a warm-up; inputs ids \[1,6\]\)\.$/);
    assert.ok(Number(await page.getAttribute('#run-summary', 'data-max-diff')) <= 1e-4);
    // the page's Session gave what Node's gives on the same generated inputs
    const feeds = feedsFor(g.inputs, { ...defaultSizes(g.inputs), seq: 6 });
    const session = await om.InferenceSession.create(files.onnx);
    const want = om.tidy(() => Array.from(session.run(feeds).logits.toArray()));
    session.dispose();
    const shown = await page.textContent('#run-results tr[data-output=logits] .values');
    assert.equal(shown, `${want.slice(0, 6).map((v) => Number(v.toPrecision(4))).join(', ')}, …`);
    assert.equal(await page.textContent('#run-results tr[data-output=logits] .shape'), '[1, 6, 40]');
    await shot('demo-run');

    // inputs uploaded as JSON are the ones run; a file that is not JSON is InvalidArgument
    const upload = join(dir, 'inputs.json');
    writeFileSync(upload, JSON.stringify({ ids: { dims: [1, 3], data: [7, 8, 9] } }));
    await page.setInputFiles('#run-upload-file', upload);
    await page.waitForFunction(() => document.querySelector('#run-upload-info').textContent !== 'generated inputs');   // read asynchronously
    assert.equal(await page.textContent('#run-upload-info'), 'inputs from inputs.json: ids');
    await page.click('#run-file');
    await idle();
    assert.match(await page.textContent('#run-summary'), /inputs ids \[1,3\]\)\.$/);
    const session2 = await om.InferenceSession.create(files.onnx);
    const want2 = om.tidy(() => Array.from(session2.run({ ids: om.tensor([[7n, 8n, 9n]]) }).logits.toArray()));
    session2.dispose();
    assert.equal(await page.textContent('#run-results tr[data-output=logits] .values'), `${want2.slice(0, 6).map((v) => Number(v.toPrecision(4))).join(', ')}, …`);
    writeFileSync(upload, '{ ids: oops');
    await page.setInputFiles('#run-upload-file', upload);
    await page.waitForSelector('#error:not([hidden])');
    assert.equal(await page.textContent('#error .kind'), 'InvalidArgument');
    assert.match(await page.textContent('#error .message'), /^run: inputs\.json is not JSON \(/);
    assert.equal(await page.textContent('#run-upload-info'), 'generated inputs');
    await page.click('#error .close');

    // a search of the graph shown is emptied when another one opens (its hits were that graph's)
    await page.click('[data-tab=graph]');
    await page.fill('#graph-search', 'h.1');
    assert.equal(await page.isVisible('#search-results'), true);
    const path = join(dir, 'gpt12.om');
    writeFileSync(path, files.saved);
    await page.setInputFiles('#open-file', path);
    await idle();
    assert.equal(await page.inputValue('#graph-search'), '');
    assert.equal(await page.isVisible('#search-results'), false);
    await page.focus('#graph-search');
    assert.equal(await page.isVisible('#search-results'), false, 'no hits of the last graph come back');
    await page.click('[data-tab=run]');
    assert.deepEqual(await page.$$eval('#run-sizes .size', (is) => is.map((i) => i.value)), ['2', '5'], 'an .om starts at the traced sizes');
    assert.equal(await page.textContent('#run-file'), 'Run in the Session', 'onnxruntime-web reads no .om');
    await page.click('#run-file');
    await idle();
    assert.match(await page.textContent('#run-summary'), /^Session \d+\.\d\d ms · onnxruntime-web not run \(it reads \.onnx files only\) /);
    assert.match(await page.getAttribute('#run-summary', 'class'), /\bok\b/);
  });

  test('a version 1 .om (written before initializers had aliases) opens: its graph shown, run in the Session as Node runs it', async () => {
    const v1 = asVersion1(await zooSaved('mlp'));
    assert.equal(v1[8], 1);
    const g = readGraph(v1);
    const path = join(dir, 'mlp-v1.om');
    writeFileSync(path, v1);
    await page.setInputFiles('#open-file', path);
    await idle();
    assert.equal(await page.textContent('#graph-info'), `mlp-v1.om · ${g.nodes.length} nodes · ${g.initializers.length} initializers`);
    assert.ok(await page.locator('#graph g.node').count() >= 3, 'its boxes are drawn');
    await page.click('[data-tab=run]');
    await page.click('#run-file');
    await idle();
    assert.match(await page.textContent('#run-summary'), /^Session \d+\.\d\d ms · onnxruntime-web not run \(it reads \.onnx files only\) /);
    const session = await om.InferenceSession.create(v1);
    const output = g.outputs[0];
    const want = om.tidy(() => Array.from(session.run(feedsFor(g.inputs, defaultSizes(g.inputs)))[output.name].toArray()));
    session.dispose();
    assert.equal(await page.textContent(`#run-results tr[data-output="${output.name}"] .values`),
      `${want.slice(0, 6).map((v) => Number(v.toPrecision(4))).join(', ')}${want.length > 6 ? ', …' : ''}`);
  });

  test('an .onnx with no value_info (as torch.onnx.export writes it) shows a shape on every edge, from the Session, its dims named by the symbols; Download saves that file', async () => {
    const ints = (name, values) => ({ name, dtype: 'int64', dims: [values.length], values });
    const bytes = onnxBytes({
      inputs: [{ name: 'x', dims: ['n', 't', 4] }],
      inits: [ints('flat_shape', [-1, 4]), { name: 'w', dtype: 'float32', dims: [4, 6], values: Array.from({ length: 24 }, (_, i) => i / 24) },
        ints('s0', [0]), ints('s1', [1]), ints('axis1', [1])],
      nodes: [
        { op: 'Reshape', inputs: ['x', 'flat_shape'], outputs: ['flat'], name: 'flatten' },
        { op: 'MatMul', inputs: ['flat', 'w'], outputs: ['m'], name: 'proj' },
        { op: 'Slice', inputs: ['x', 's0', 's1', 'axis1'], outputs: ['first'], name: 'first_row' },
        { op: 'Concat', inputs: ['x', 'first'], outputs: ['e'], ints: { axis: 1 }, name: 'append' },
        { op: 'Concat', inputs: ['e', 'e'], outputs: ['c'], ints: { axis: 1 }, name: 'twice' },
        { op: 'Relu', inputs: ['m'], outputs: ['y'], name: 'act' },
      ],
      outputs: ['y', 'c'],
    });
    assert.deepEqual(Object.keys(readGraph(bytes).values).filter((v) => ['flat', 'm', 'first', 'e'].includes(v)), [], 'the file gives no intermediate shapes');
    const path = join(dir, 'exported.onnx');
    writeFileSync(path, bytes);
    await page.setInputFiles('#open-file', path);
    await idle();
    assert.match(await page.textContent('#status'), /^Opened exported\.onnx: 6 nodes; every shape from the Session \(bound at n = 1, t = 1, then each symbol moved\)/);
    const labels = Object.fromEntries(await page.$$eval('#graph .edge-label', (ts) => ts.map((t) => [t.dataset.value, t.textContent])));
    assert.deepEqual(labels, { x: '[n, t, 4]', flat: '[n*t, 4]', m: '[n*t, 6]', first: '[n, 1, 4]', e: '[n, t+1, 4]', y: '[n*t, 6]', c: '[n, 2*t+2, 4]' });
    // the inspector gives them too, with the dtype
    await page.click('#graph g.node.op[data-op=MatMul]');
    const rows = await inspector('.values tr');
    assert.ok(rows.some((r) => /m\s*float32\s*\[n\*t, 6\]/.test(r)), rows.join(' | '));
    await shot('demo-shapes');

    // Download saves the file shown, not the trace behind it
    assert.equal(await page.textContent('#download'), 'Download file');
    assert.match(await page.getAttribute('#download', 'title'), /^exported\.onnx: the file opened/);
    assert.equal(await page.isDisabled('#download'), false);
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    assert.equal(dl.suggestedFilename(), 'exported.onnx');
    assert.deepEqual(new Uint8Array(readFileSync(await dl.path())), bytes);
  });

  test('a file the Session cannot plan at the starting sizes keeps the shapes it gives, and the status line says why', async () => {
    const bytes = onnxBytes({ inputs: [{ name: 'x', dims: ['n', 4] }], inits: [{ name: 'shape', dtype: 'int64', dims: [1], values: [4] }],
      nodes: [{ op: 'Reshape', inputs: ['x', 'shape'], outputs: ['y'] }], outputs: ['y'] });
    const path = join(dir, 'fixed.onnx');
    writeFileSync(path, bytes);
    await page.setInputFiles('#open-file', path);
    await idle();
    assert.match(await page.textContent('#status'), /^Opened fixed\.onnx: 1 nodes; shapes only where the file gives them \(the Session could not plan it at n = 2: ShapeMismatch: Reshape_0 \(Reshape\): /);
    assert.deepEqual(await page.$$eval('#graph .edge-label', (ts) => ts.map((t) => [t.dataset.value, t.textContent])), [['x', '[n, 4]']]);
  });

  test('a file that is no model: OmError Format in the banner, and the page goes on', async () => {
    const path = join(dir, 'notes.onnx');
    writeFileSync(path, '<!doctype html><p>not a model</p>');
    await page.setInputFiles('#open-file', path);
    await idle();
    assert.equal(await page.textContent('#error .kind'), 'Format');
    assert.match(await page.textContent('#error .message'), /^open: the file is damaged or not a model \(/);
    await page.click('#error .close');
  });

  test('an .onnx opened without its weights\' bytes runs from the whole file read then; a file changed on disk since it was opened is an OmError naming it', async () => {
    // w: 4 kB of float32, left unread at open
    const w = Array.from({ length: 1024 }, (_, i) => i / 8);
    const file = (scale) => onnxBytes({ inputs: [{ name: 'x', dims: ['n', 1024] }], inits: [{ name: 'w', dtype: 'float32', dims: [1024], values: w.map((v) => v * scale) }],
      nodes: [{ op: 'Add', inputs: ['x', 'w'], outputs: ['y'] }], outputs: ['y'] });
    const path = join(dir, 'weights.onnx');
    writeFileSync(path, file(1));
    await page.setInputFiles('#open-file', path);
    await idle();
    await page.click('[data-tab=run]');
    await page.click('#run-file');
    await idle();
    assert.equal(await page.isHidden('#error'), true, await page.textContent('#error'));
    const values = (await page.textContent('#run-results tr[data-output=y] .values')).split(', ').slice(0, 3).map(Number);
    const { inputs } = readGraph(file(1)), x = feedsFor(inputs, defaultSizes(inputs)).x.data;
    assert.deepEqual(values, [0, 1, 2].map((k) => Number(Math.fround(x[k] + w[k]).toPrecision(4))), 'x + w, w read from the file at the run');
    // opened again, then changed on disk before its first run: the browser will not read it
    await page.setInputFiles('#open-file', path);
    await idle();
    writeFileSync(path, file(2));
    await page.click('[data-tab=run]');
    await page.click('#run-file');
    await idle();
    assert.equal(await page.textContent('#error .kind'), 'InvalidArgument');
    assert.match(await page.textContent('#error .message'), /^run: cannot read weights\.onnx again \(NotReadableError: .*\); it may have changed since it was opened: open it again$/);
    await page.click('#error .close');
  });

  test('no errors in the page or its console', () => {
    assert.deepEqual(pageErrors, []);
  });
});
