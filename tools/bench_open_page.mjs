// Opening model files in the demo page itself (web-demo/dist, as tools/build.sh bundles it) in
// headless Chromium at 1280x800: for each file, the wall time from the file picker to the graph
// drawn and the page idle, three times in one page (another small file opened between, so that
// each open is a fresh one). The page's own counterpart of tools/bench_open.mjs's steps in Node;
// docs/web-demo.md ("Opening a large file") quotes it.
//
//   node tools/bench_open_page.mjs FILE.onnx|FILE.om ...    (after npm run build)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import * as om from 'onemodel';
import { openDemo } from '../tests/js/web-demo-page.mjs';

const files = process.argv.slice(2);
if (!files.length) throw new Error('usage: node tools/bench_open_page.mjs FILE.onnx|FILE.om ...');
const dir = mkdtempSync(join(tmpdir(), 'onemodel-bench-open-page-'));
const demo = await openDemo({ width: 1280, height: 800 });
try {
  // the small file opened between two opens of the one timed: y = x + 1
  await om.ready({ threads: false });
  const x = om.ones([2, 3]), traced = om.trace((v) => v.add(1), { x: [x, ['n', null]] });
  const between = join(dir, 'between.onnx');
  writeFileSync(between, traced.toOnnx());
  traced.dispose();
  x.dispose();
  const { page, idle } = demo;
  /** Opens path from the file picker: ms until its graph is drawn and the page idle. */
  const open = async (path) => {
    const t0 = performance.now();
    await page.setInputFiles('#open-file', path);
    await page.waitForFunction((name) => document.querySelector('#graph-info').textContent.startsWith(name), basename(path), { timeout: 600_000 });
    await idle();
    return performance.now() - t0;
  };
  for (const path of files) {
    const times = [];
    for (let k = 0; k < 3; k++) {
      times.push(await open(path));
      await open(between);
    }
    console.log(`${basename(path)}: opened and drawn in ${times.map((t) => t.toFixed(0)).join(', ')} ms`);
  }
  if (demo.pageErrors.length) console.log(`page errors:\n${demo.pageErrors.join('\n')}`);
} finally {
  await demo.close();
  rmSync(dir, { recursive: true, force: true });
}
