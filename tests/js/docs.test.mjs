// What the docs name must exist (README.md, docs/*.md, examples/*/README.md): every `npm run`
// script they tell a reader to run is one of package.json's, and every repository path they
// write as `code` (`tools/bench_open.mjs`, `tests/js/web-demo-view.test.mjs`, `web-demo/src/`)
// is a file or folder of this checkout, so a script renamed or a file moved fails here instead of
// leaving a doc that sends the reader nowhere. The dated logs (docs/*-log.md) tell of files as they
// were then and are left out. (package.test.mjs checks the Markdown links and the sizes.)
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const docs = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md') && !f.endsWith('-log.md')).map((f) => `docs/${f}`),
  ...readdirSync(join(ROOT, 'examples'), { withFileTypes: true }).filter((d) => d.isDirectory() && existsSync(join(ROOT, 'examples', d.name, 'README.md')))
    .map((d) => `examples/${d.name}/README.md`)];
/** Each match of re in the docs: [doc, line, match]. */
const each = (re) => docs.flatMap((doc) => {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  return [...text.matchAll(re)].map((m) => [doc, text.slice(0, m.index).split('\n').length, m]);
});

test('every npm run script the docs name is a script of package.json', () => {
  const scripts = new Set(Object.keys(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts));
  const named = each(/npm run ([a-z][a-z:-]*)/g);
  assert.ok(named.length > 20, `${named.length} mentions`);
  for (const [doc, line, m] of named) assert.ok(scripts.has(m[1]), `${doc}:${line}: npm run ${m[1]} is no script of package.json`);
});

test('every repository path the docs write as code is a file or folder of the checkout', () => {
  // a path of the repository's top folders, as `code`; a glob, a placeholder or an output path is no file to find
  const named = each(/`((?:src|js|tools|tests|examples|web-demo|docs|wasm)\/[A-Za-z0-9_./-]*)`/g)
    .filter(([, , m]) => !/[*<>]/.test(m[1]) && !m[1].startsWith('js/dist/') && !m[1].startsWith('web-demo/dist/'));
  assert.ok(named.length > 100, `${named.length} paths`);
  for (const [doc, line, m] of named) assert.ok(existsSync(join(ROOT, m[1].replace(/\.$/, ''))), `${doc}:${line}: ${m[1]} is not in the repository`);
});

test('the ports\' READMEs list every port file (the README sends the reader there: "its README lists them")', () => {
  for (const dir of ['transformers', 'torchvision']) {
    const readme = readFileSync(join(ROOT, 'examples', dir, 'README.md'), 'utf8');
    const files = readdirSync(join(ROOT, 'examples', dir)).filter((f) => f.endsWith('.mjs'));
    assert.ok(files.length > 15, `${dir}: ${files.length} files`);
    for (const f of files) assert.ok(readme.includes(`\`${f}\``), `examples/${dir}/README.md does not list ${f}`);
  }
});
