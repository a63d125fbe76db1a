// Builds the demo page into web-demo/dist/ (git-ignored) with esbuild: src/main.js (the page:
// editor, graph view, plots) and src/worker.js (tracing, training, verification) become one
// bundle each; index.html, style.css and favicon.svg are copied beside them. tools/build.sh runs this.
//
// Two packages stay outside the bundles and are imported by URL from what web-demo/server.mjs
// serves: 'onemodel' (/onemodel/index.js) so that the worker and the user's model code, which
// the worker imports from a Blob URL with that same URL, share one onemodel instance (one wasm
// memory); and 'onnxruntime-web' (/ort/...), which loads its own .wasm files next to itself.
import { build } from 'esbuild';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const OUT = join(HERE, 'dist');

/** Bare specifier -> the URL the page imports it from (see the mounts in server.mjs). */
export const EXTERNAL_URLS = {
  onemodel: '/onemodel/index.js',
  'onnxruntime-web': '/ort/ort.wasm.bundle.min.mjs',
};

const externalUrls = {
  name: 'external-urls',
  setup(b) {
    const filter = new RegExp(`^(${Object.keys(EXTERNAL_URLS).map((s) => s.replace(/[-/]/g, '\\$&')).join('|')})$`);
    b.onResolve({ filter }, (args) => ({ path: EXTERNAL_URLS[args.path], external: true }));
  },
};

/**
 * Writes bytes to path unless the file already holds them: an up-to-date build (npm pack's
 * prepack in npm test) rewrites nothing under a server that may be reading it.
 */
async function writeIfChanged(path, bytes) {
  const old = await readFile(path).catch(() => null);
  if (!old || !old.equals(bytes)) await writeFile(path, bytes);
}

await mkdir(OUT, { recursive: true });
const { outputFiles } = await build({
  entryPoints: { main: join(HERE, 'src', 'main.js'), worker: join(HERE, 'src', 'worker.js'), 'layout-worker': join(HERE, 'src', 'layout-worker.js') },
  outdir: OUT,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  sourcemap: 'linked',
  plugins: [externalUrls],
  // onemodel loads node: modules only under Node (dynamic imports the browser never runs)
  external: ['node:*'],
  define: { ONEMODEL_URL: JSON.stringify(EXTERNAL_URLS.onemodel) },
  logLevel: 'warning',
  write: false,
});
await Promise.all([
  ...outputFiles.map((f) => writeIfChanged(f.path, f.contents)),
  ...['index.html', 'style.css', 'favicon.svg'].map(async (f) => writeIfChanged(join(OUT, f), await readFile(join(HERE, f)))),
]);
console.log(`build: web-demo/dist <- web-demo/src (esbuild)`);
