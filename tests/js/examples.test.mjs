// The README's example and examples/*.mjs run as a user would run them, and their loss falls.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';

const root = new URL('../../', import.meta.url);

/** Runs a module file with node and returns its stdout. */
function run(file) {
  return execFileSync(process.execPath, [file], { cwd: root, encoding: 'utf8', timeout: 120_000 });
}

/** The numbers after "loss" or after the step number on each printed line. */
function losses(out, pattern) {
  return [...out.matchAll(pattern)].map((m) => Number(m[1]));
}

test('the package, the JS runtime and the C library report one version', async () => {
  const om = await import('onemodel');
  await om.ready(); // fails when js/dist holds a library of another version
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
  assert.equal(om.version, pkg.version);
  const header = readFileSync(new URL('src/onemodel.h', root), 'utf8');
  assert.equal(header.match(/#define OM_VERSION "([^"]+)"/)[1], pkg.version);
});

test('the README example runs and its loss falls', () => {
  const readme = readFileSync(new URL('README.md', root), 'utf8');
  const code = readme.match(/```js\n([\s\S]*?)```/)[1];
  // Inside the package folder, so `import 'onemodel'` resolves to this package.
  mkdirSync(new URL('build/', root), { recursive: true });
  const file = new URL('build/readme-example.mjs', root);
  writeFileSync(file, code);
  const out = run(file.pathname);
  const l = losses(out, /^\d+ ([\d.e-]+)$/gm);
  assert.equal(l.length, 5, out);
  assert.ok(l.at(-1) < l[0] / 2, `loss did not halve: ${l}`);
});

test('examples/train-mlp.mjs trains and frees everything', () => {
  const out = run('examples/train-mlp.mjs');
  const l = losses(out, /loss ([\d.]+)$/gm);
  assert.ok(l.length >= 5 && l.at(-1) < l[0] / 4, `loss did not fall enough: ${l}`);
  assert.match(out, /live tensors 0, bytes 0/);
});
