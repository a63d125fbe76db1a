// The README's examples and examples/*.mjs run as a user would run them: the loss falls, the
// traced model is written and agrees with the eager run in onnxruntime-web (the trace oracle).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';

const root = new URL('../../', import.meta.url);

/** Runs a module file with node and returns its stdout. */
function run(file, ...args) {
  return execFileSync(process.execPath, [file, ...args], { cwd: root, encoding: 'utf8', timeout: 120_000 });
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

/** The README's ```js blocks, written to build/ (inside the package, so `import 'onemodel'` resolves to it). */
function readmeExamples() {
  const readme = readFileSync(new URL('README.md', root), 'utf8');
  mkdirSync(new URL('build/', root), { recursive: true });
  return [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m, i) => {
    const file = new URL(`build/readme-example-${i}.mjs`, root);
    writeFileSync(file, m[1]);
    return file;
  });
}

test('the README has its two examples', () => {
  assert.equal(readmeExamples().length, 2);
});

test('the README example runs and its loss falls', () => {
  const out = run(readmeExamples()[0].pathname);
  const l = losses(out, /^\d+ ([\d.e-]+)$/gm);
  assert.equal(l.length, 5, out);
  assert.ok(l.at(-1) < l[0] / 2, `loss did not halve: ${l}`);
});

/**
 * The README tracing example with the trace oracle run on its model before it is disposed: at
 * the traced batch and another one, against net.forward (the README's names `traced`, `net`).
 */
function readmeTraceWithOracle() {
  const code = readFileSync(readmeExamples()[1], 'utf8');
  assert.equal(code.split('traced.dispose();').length, 2, 'the README tracing example disposes `traced` once');
  const check = `
{
  const { checkTraced } = await import(${JSON.stringify(new URL('tools/trace_oracle.mjs', root).href)});
  for (const batch of [8, 5]) {
    const feeds = Object.fromEntries(traced.inputs.map((i) => [i.name, om.randn(i.shape.map((d) => (typeof d === 'string' ? batch : d)), { seed: batch })]));
    const eager = om.tidy(() => net.forward(...Object.values(feeds)));
    const r = await checkTraced(traced, feeds, [eager]);
    console.log(\`oracle at batch \${batch}: \${r.outputs.map((o) => \`\${o.name} [\${o.shape}] max error \${o.maxError}\`).join(', ')}\`);
    om.dispose([feeds, eager]);
  }
}
traced.dispose();`;
  const file = new URL('build/readme-example-1-oracle.mjs', root);
  writeFileSync(file, code.replace('traced.dispose();', check));
  return file;
}

test('the README tracing example writes an .onnx with a symbolic batch, which agrees with eager in onnxruntime-web', () => {
  const cwd = new URL('build/readme-trace/', root);
  rmSync(cwd, { recursive: true, force: true });
  mkdirSync(cwd, { recursive: true });
  const out = execFileSync(process.execPath, [readmeTraceWithOracle().pathname], { cwd, encoding: 'utf8', timeout: 120_000 });
  const errors = [...out.matchAll(/^oracle at batch (\d+): logits \[(\d+),3\] max error ([\d.e+-]+)$/gm)];
  assert.deepEqual(errors.map((m) => [m[1], m[2]]), [['8', '8'], ['5', '5']], out);
  for (const m of errors) assert.ok(Number(m[3]) <= 1e-5, `onnxruntime-web disagrees with eager by ${m[3]}`);
  assert.match(out, /\[ 'batch', 4 \] -> \[ 'batch', 3 \]/);
  const bytes = readFileSync(new URL('net.onnx', cwd));
  assert.match(out, new RegExp(`^${bytes.length} bytes$`, 'm'));
  assert.deepEqual([...bytes.subarray(0, 2)], [0x08, 0x09], 'a ModelProto starting with ir_version 9');
});

test('examples/train-mlp.mjs (npm start) trains, traces, saves, verifies and frees everything', () => {
  const file = new URL('build/examples-test/mlp.onnx', root);
  rmSync(file, { force: true });
  const out = run('examples/train-mlp.mjs', file.pathname);
  const l = losses(out, /loss ([\d.]+)$/gm);
  assert.ok(l.length >= 5 && l.at(-1) < l[0] / 4, `loss did not fall enough: ${l}`);
  assert.match(out, /initializers w1, b1, w2, b2; input \[batch,2\] -> output \[batch,1\]/);
  const errors = losses(out, /max \|onnx - eager\| = ([\d.e+-]+)$/gm);
  assert.equal(errors.length, 2, out);
  for (const e of errors) assert.ok(e <= 1e-5, `onnxruntime-web disagrees with eager by ${e}`);
  const bytes = readFileSync(file);
  assert.match(out, new RegExp(`saved .* \\(${bytes.length} bytes\\)`));
  assert.deepEqual([...bytes.subarray(0, 2)], [0x08, 0x09], 'a ModelProto starting with ir_version 9');
  assert.match(out, /live tensors 0, bytes 0/);
});
