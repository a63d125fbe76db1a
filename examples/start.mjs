// npm start: exports the whole zoo (examples/zoo/*.mjs), or the models named, to <out>/<name>.onnx
// and <name>.om, verifies each with onnxruntime-web and the library's Session (one line per model),
// then serves the demo page.
//
//   node examples/start.mjs [--no-serve] [--out DIR] [MODEL...]   (default out/ and the whole zoo;
//                                                                  CI=true also skips serving)
//
// Exits 1, before serving, when any model fails; 2, before exporting, on a bad argument or PORT.
import { join } from 'node:path';
import { portFromEnv, serveAndPrint } from '../web-demo/server.mjs';
import { ZOO } from './lib/workflow.mjs';
import { exportModelFile, reportLine } from './lib/export.mjs';

const args = process.argv.slice(2);
const at = args.indexOf('--out');
const outDir = at >= 0 ? args[at + 1] : 'out';
const rest = args.filter((a, i) => a !== '--no-serve' && !(at >= 0 && (i === at || i === at + 1)));
const unknown = rest.filter((a) => !ZOO.includes(a));
if (!outDir || unknown.length) {
  console.error(`usage: node examples/start.mjs [--no-serve] [--out DIR] [MODEL...]${unknown.length ? ` (unknown: ${unknown.join(' ')})` : ''}`);
  process.exit(2);
}
// in the zoo's order, each once, so that the lines read the same however the names were given
const models = rest.length ? ZOO.filter((n) => rest.includes(n)) : ZOO;
const serving = !args.includes('--no-serve') && process.env.CI !== 'true';
let port = null;
if (serving) {
  try {
    port = portFromEnv();
  } catch (e) {
    console.error(`start: ${e.message}`);
    process.exit(2);
  }
}

let failed = 0;
for (const name of models) {
  const r = await exportModelFile(await import(`./zoo/${name}.mjs`), name, join(outDir, `${name}.onnx`));
  (r.ok ? console.log : console.error)(reportLine(r));
  if (!r.ok) failed++;
}
if (failed) {
  console.error(`${failed} of ${models.length} models failed`);
  process.exit(1);
}
console.log(`exported and verified ${models.length} model${models.length === 1 ? '' : 's'} to ${outDir}/`);

if (serving) await serveAndPrint(port);
