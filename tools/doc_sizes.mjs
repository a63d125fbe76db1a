// Rewrites the package sizes that docs/install.md and README.md state, from the built files and
// `npm pack --dry-run` (tests/js/package.test.mjs checks them): node tools/doc_sizes.mjs after a build.
import fs from 'node:fs'; import z from 'node:zlib'; import path from 'node:path'; import { execSync } from 'node:child_process';
const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]);
const kb = (n) => Math.round(n / 1e3);
const size = (f) => fs.statSync(f).size, gz = (f) => z.gzipSync(fs.readFileSync(f)).length;
const js = walk('js').filter((f) => f.endsWith('.js') && !f.startsWith('js/dist/')).reduce((n, f) => n + size(f), 0);
const j = JSON.parse(execSync('npm pack --dry-run --json --ignore-scripts 2>/dev/null'))[0];
let t = fs.readFileSync('docs/install.md', 'utf8');
const row = (name, v) => { t = t.replace(new RegExp('(\\| `' + name.replace(/[.*{}]/g, (c) => '\\' + c) + '`[^|]*\\|[^|]*\\| )[^|]*( \\|)', 'm'), `$1${v}$2`); };
row('js/*.js', `${kb(js)} kB`);
row('js/index.d.ts', `${kb(size('js/index.d.ts'))} kB`);
row('js/dist/onemodel.mjs', `${kb(size('js/dist/onemodel.mjs'))} kB`);
row('js/dist/onemodel.wasm', `${kb(size('js/dist/onemodel.wasm'))} kB (${kb(gz('js/dist/onemodel.wasm'))} kB gzipped)`);
row('js/dist/onemodel-mt.mjs', `${kb(size('js/dist/onemodel-mt.mjs'))} kB (${kb(gz('js/dist/onemodel-mt.mjs'))} kB gzipped)`);
row('js/dist/onemodel-mt.wasm', `${kb(size('js/dist/onemodel-mt.wasm'))} kB (${kb(gz('js/dist/onemodel-mt.wasm'))} kB gzipped)`);
row('js/dist/onemodel-mt.worker.js', `${kb(size('js/dist/onemodel-mt.worker.js'))} kB`);
t = t.replace(/\d+ files, [\d.]+ MB unpacked, a \d+ kB tarball/, `${j.entryCount} files, ${(j.unpackedSize / 1e6).toFixed(1)} MB unpacked, a ${kb(j.size)} kB tarball`);
const mt = gz('js/dist/onemodel-mt.mjs') + gz('js/dist/onemodel-mt.wasm') + gz('js/dist/onemodel-mt.worker.js'), st = gz('js/dist/onemodel.mjs') + gz('js/dist/onemodel.wasm');
t = t.replace(/the worker script \(\d+ kB gzipped,\nagainst \d+ kB/, `the worker script (${kb(mt)} kB gzipped,\nagainst ${kb(st)} kB`);
fs.writeFileSync('docs/install.md', t);
let r = fs.readFileSync('README.md', 'utf8');
r = r.replace(/packs `onemodel-0.1.0.tgz` \(\d+ kB/, `packs \`onemodel-0.1.0.tgz\` (${kb(j.size)} kB`);
fs.writeFileSync('README.md', r);
