// Opening a large .onnx and .om as the demo page does (web-demo/src/worker.js's open job, step by
// step in Node): a full-size ResNet-50 (torchvision's architecture, examples/torchvision/resnet.mjs,
// 100 MB of weights) traced with symbolic batch, height and width, written to temporary files
// (its .onnx and its .om), then each opened as a Blob (fs.openAsBlob, a File's twin) both ways:
// read whole and its graph read (graphfile.js's readGraph, the page before), and read in pieces
// (openGraph: its structure without the weights' bytes, the page now); bound by the Session on the
// whole file and on the weightless file openGraph writes, its shapes inferred and named (shapes.js),
// grouped and laid out. Wall time and this process's CPU time per step (a shared machine's wall
// time is mostly waiting). The Chromium figure is the page's own, from
// tests/js/web-demo-view.test.mjs ("opened and drawn in ... ms").
//
//   npm run bench:open            (node tools/bench_open.mjs [FILE.onnx|FILE.om ...]: other files instead)
import { mkdtempSync, openAsBlob, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as om from 'onemodel';
import { resnet50 } from '../examples/torchvision/resnet.mjs';
import { blobSource, openGraph, readGraph, withoutWeights } from '../web-demo/src/graphfile.js';
import { defaultSizes } from '../web-demo/src/feeds.js';
import { inferredShapes, withInferred } from '../web-demo/src/shapes.js';
import { autoExpand, groupByModule } from '../web-demo/src/groups.js';
import { layoutGraph } from '../web-demo/src/layout.js';
import { isDeepStrictEqual } from 'node:util';

await om.ready({ threads: false });   // the steps one at a time, as the page's worker runs them

/** fn's result, after printing its wall and CPU time as a row. */
async function step(what, fn) {
  const cpu = process.cpuUsage(), t0 = performance.now();
  const result = await fn();
  const used = process.cpuUsage(cpu);
  console.log(`| ${what} | ${(performance.now() - t0).toFixed(0)} | ${((used.user + used.system) / 1000).toFixed(0)} |`);
  return result;
}

const dir = mkdtempSync(join(tmpdir(), 'onemodel-bench-open-'));
try {
  let paths = process.argv.slice(2);
  if (!paths.length) {
    paths = [join(dir, 'resnet50.onnx'), join(dir, 'resnet50.om')];
    const model = resnet50({ numClasses: 1000 }).eval(), x = om.zeros([2, 3, 64, 64]);
    const traced = om.trace(model, { x: [x, ['batch', null, 'height', 'width']] });
    writeFileSync(paths[0], traced.toOnnx());
    writeFileSync(paths[1], traced.save());
    traced.dispose();
    x.dispose();
    for (const t of [...model.parameters(), ...model.buffers()]) t.dispose();
  }
  for (const path of paths) await bench(path);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** The table of one file's opening, both ways. */
async function bench(path) {
  const file = await openAsBlob(path);
  console.log(`${path}: ${file.size} bytes\n\n| step | wall ms | CPU ms |\n| --- | ---: | ---: |`);
  const bytes = await step('read the file whole (Blob.arrayBuffer)', async () => new Uint8Array(await file.arrayBuffer()));
  const graph = await step('read the graph (readGraph)', () => readGraph(bytes));
  const opened = await step('open it in pieces (openGraph: the graph, withoutWeights)', () => openGraph(blobSource(file)));
  console.log(`|   (${opened.reads} pieces, ${opened.bytesRead} bytes read; the same graph: ${isDeepStrictEqual(opened.graph, graph)}) | | |`);
  const sizes = defaultSizes(graph.inputs);
  /** The Session on these bytes, its shapes inferred (shapes.js), disposed after: the values. */
  const infer = async (what, b) => {
    const session = await step(`Session on ${what}`, () => om.InferenceSession.create(b, { mode: 'exact' }));
    try {
      let plans = 0;
      const plan = session.inferShapes.bind(session);
      session.inferShapes = (feeds) => (plans++, plan(feeds));
      const { values } = await step(`its shapes (shapes.js), ${what}`, () => inferredShapes(session, graph, sizes));
      console.log(`|   (${plans} sizes bound) | | |`);
      return values;
    } finally {
      session.dispose();
    }
  };
  const whole = await infer('the whole file', bytes);
  let light = opened.light;
  if (graph.format === 'onnx') {
    light = await step('withoutWeights (of the whole file)', () => withoutWeights(bytes, graph));
    if (!isDeepStrictEqual(light, opened.light)) console.log('| (openGraph\'s weightless bytes differ from these) | | |');
  }
  const values = await infer(`the file without weights (${light.length} bytes)`, light);
  const differ = Object.keys(whole).filter((k) => JSON.stringify(whole[k]) !== JSON.stringify(values[k]));
  const shown = withInferred(graph, values), groups = groupByModule(shown);
  await step('group and lay out (groups.js, layout.js)', () => layoutGraph(shown, groups, autoExpand(groups)));
  console.log(`\nshapes that differ between the two: ${differ.length ? differ.join(', ') : 'none'}\n`);
}
