// The README's tracing example and examples/*.mjs run as a user would run them: the loss falls,
// the traced model is written and agrees with the eager run in onnxruntime-web (the trace
// oracle). package.test.mjs runs both README examples as written, from the installed tarball.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { readmeExamples } from './helpers.mjs';

const root = new URL('../../', import.meta.url);

/** Runs a module file with node and returns its stdout. */
function run(file, ...args) {
  return execFileSync(process.execPath, [file, ...args], { cwd: root, encoding: 'utf8', timeout: 120_000 });
}

test('the package, the JS runtime and the C library report one version', async () => {
  const om = await import('onemodel');
  await om.ready(); // fails when js/dist holds a library of another version
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
  assert.equal(om.version, pkg.version);
  const header = readFileSync(new URL('src/onemodel.h', root), 'utf8');
  assert.equal(header.match(/#define OM_VERSION "([^"]+)"/)[1], pkg.version);
});

test('the README has its two examples', () => {
  assert.equal(readmeExamples().length, 2);
});

/**
 * The README tracing example with the trace oracle run on its model before it is disposed: at
 * the traced batch and another one, against net.forward (the README's names `traced`, `net`).
 */
function readmeTraceWithOracle() {
  const code = readmeExamples()[1];
  assert.equal(code.split('traced.dispose();').length, 2, 'the README tracing example disposes `traced` once');
  const check = `
{
  const { checkTraced } = await import(${JSON.stringify(new URL('examples/lib/oracle.mjs', root).href)});
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

test('the README tracing example writes an .onnx with a symbolic batch, which agrees with eager in onnxruntime-web, and runs it in the Session', () => {
  const cwd = new URL('build/readme-trace/', root);
  rmSync(cwd, { recursive: true, force: true });
  mkdirSync(cwd, { recursive: true });
  const out = execFileSync(process.execPath, [readmeTraceWithOracle().pathname], { cwd, encoding: 'utf8', timeout: 120_000 });
  const errors = [...out.matchAll(/^oracle at batch (\d+): logits \[(\d+),3\] max error ([\d.e+-]+)$/gm)];
  assert.deepEqual(errors.map((m) => [m[1], m[2]]), [['8', '8'], ['5', '5']], out);
  for (const m of errors) assert.ok(Number(m[3]) <= 1e-5, `onnxruntime-web disagrees with eager by ${m[3]}`);
  assert.match(out, /\[ 'batch', 4 \] -> \[ 'batch', 3 \]/);
  assert.match(out, /^session: \[ 3, 3 \]$/m);
  const bytes = readFileSync(new URL('net.onnx', cwd));
  assert.match(out, new RegExp(`^${bytes.length} bytes$`, 'm'));
  assert.deepEqual([...bytes.subarray(0, 2)], [0x08, 0x09], 'a ModelProto starting with ir_version 9');
});

// ---- the zoo's Node scripts (docs/demo.md) -----------------------------------------------

/** The numbers of a report line of examples/lib/export.mjs. */
function parseLine(line) {
  const m = line.match(/^(\w+): ok, (\d+) nodes, (\d+) bytes \((\d+) of initializers\), (.*), max error (\S+) \(onnxruntime-web\), (\S+) \(Session\) at (\d+) shapes \((.*)\), loss (\S+) -> (\S+) in (\d+) steps, [\d.]+ s \(training [\d.]+ s\) -> (\S+), (\S+)$/);
  assert.ok(m, `a report line: ${line}`);
  return { name: m[1], nodes: +m[2], bytes: +m[3], maxError: +m[6], sessionMaxError: +m[7], shapes: +m[8], sizes: m[9], first: +m[10], last: +m[11], path: m[13], omPath: m[14] };
}

test('examples/export-<model>.mjs: each trains, writes an .onnx that onnxruntime-web runs and an .om the Session runs, equal to the same model trained here', async () => {
  const om = await import('onemodel');
  const wf = await import('../../examples/lib/workflow.mjs');
  const { runOnnx } = await import('../../examples/lib/oracle.mjs');
  await om.ready();
  const files = wf.ZOO.map((name) => new URL(`build/examples-test/${name}.onnx`, root));
  for (const f of files) rmSync(f, { force: true });
  // the scripts run side by side, as separate processes
  const outs = await Promise.all(wf.ZOO.map((name, i) => promisify(execFile)(process.execPath, [`examples/export-${name}.mjs`, files[i].pathname], { cwd: root, encoding: 'utf8', timeout: 120_000 })));
  for (const [i, name] of wf.ZOO.entries()) {
    const file = files[i];
    const r = parseLine(outs[i].stdout.trim());
    assert.equal(r.name, name);
    assert.equal(r.shapes, 4); // the traced size, the smallest, s + 1, 2s + 1
    assert.ok(r.maxError <= 1e-5 && r.sessionMaxError <= 1e-5 && r.last < r.first, `${name}: ${JSON.stringify(r)}`);
    const bytes = readFileSync(file);
    assert.equal(bytes.length, r.bytes);
    assert.equal(r.omPath, file.pathname.replace(/\.onnx$/, '.om'));
    const session = await om.InferenceSession.create(readFileSync(r.omPath));
    // the same file trained in this process (training is seeded): its eager outputs at a batch of 2
    const model = wf.checkModelFile(await import(`../../examples/zoo/${name}.mjs`), name);
    try {
      await wf.trainModel(model);
      const specs = wf.describeInputs(model.inputs).map((i) => ({ ...i, shape: [2, ...i.shape.slice(1)] }));
      const inputs = wf.makeInputs(model, specs, 77);
      try {
        const xs = Object.values(inputs).map((v) => v[0]);
        const eager = om.tidy(() => om.noGrad(() => wf.runModel(model, xs)));
        const want = { dims: eager.shape, data: Array.from(eager.toArray()) };
        eager.dispose();
        const feeds = Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, v[0]]));
        const got = Object.values(await runOnnx(bytes, feeds));
        const mine = om.tidy(() => Object.values(session.run(feeds)).map((t) => ({ dims: t.shape, data: Array.from(t.toArray()) })));
        for (const [engine, outs] of [['the .onnx in onnxruntime-web', got], ['the .om in the Session', mine]]) {
          assert.equal(outs.length, 1);
          assert.deepEqual(outs[0].dims, want.dims);
          const scale = Math.max(1, ...want.data.map(Math.abs));
          const err = Math.max(...outs[0].data.map((v, i) => Math.abs(v - want.data[i])));
          assert.ok(err <= 1e-5 * scale, `${name}: ${engine} differs from the model trained here by ${err}`);
        }
      } finally {
        wf.disposeInputs(inputs);
        session.dispose();
      }
    } finally {
      wf.disposeModelFile(model);
    }
  }
});

/** Runs examples/start.mjs with args and env; resolves to { code, out, err }. */
function start(args, env) {
  return new Promise((resolve) => {
    execFile(process.execPath, ['examples/start.mjs', ...args], { cwd: root, encoding: 'utf8', timeout: 120_000, env: { ...process.env, ...env } },
      (e, out, err) => resolve({ code: e ? e.code : 0, out, err }));
  });
}

/** Checks a run's report lines (parseLine) and final line: the models `names`, in that order, written to dir. */
function checkStartLines(out, names, dir) {
  const lines = out.trim().split('\n');
  assert.equal(lines.length, names.length + 1, out);
  assert.equal(lines[names.length], `exported and verified ${names.length} model${names.length === 1 ? '' : 's'} to ${dir}/`);
  const rows = lines.slice(0, names.length).map(parseLine);
  assert.deepEqual(rows.map((x) => x.name), names);
  for (const x of rows) {
    assert.equal(x.path, `${dir}/${x.name}.onnx`);
    assert.equal(readFileSync(new URL(x.path, root)).length, x.bytes);
    assert.equal(x.omPath, `${dir}/${x.name}.om`);
    assert.ok(x.maxError <= 1e-5 && x.sessionMaxError <= 1e-5 && x.shapes === 4, JSON.stringify(x));
  }
  return rows;
}

// Each start.mjs run here exports only what its check needs: the whole zoo once, in the serving
// run below (no model names: the default); the runs that stop after the export, one or two small
// models (named out of order, one of them twice).
test('examples/start.mjs (npm start) --no-serve, or CI=true: exports and verifies the models named, in the zoo\'s order, once each, and stops', async () => {
  const runs = [[['--no-serve', 'mlp'], { CI: '' }, 'build/start-test-a', ['mlp']], [['lstm', 'mlp', 'lstm'], { CI: 'true' }, 'build/start-test-b', ['mlp', 'lstm']]];
  for (const [, , dir] of runs) rmSync(new URL(`${dir}/`, root), { recursive: true, force: true });
  const results = await Promise.all(runs.map(([args, env, dir]) => start(['--out', dir, ...args], env)));
  for (const [k, [, , dir, names]] of runs.entries()) {
    const r = results[k];
    assert.equal(r.code, 0, `${r.out}${r.err}`);
    checkStartLines(r.out, names, dir);
  }
});

test('examples/start.mjs refuses unknown arguments and a missing --out directory before exporting anything', async () => {
  for (const args of [['--out'], ['--serve'], ['--no-serve', 'x']]) {
    const r = await start(args, { CI: 'true' });
    assert.equal(r.code, 2, `${args}: ${r.out}${r.err}`);
    assert.equal(r.out, '');
    assert.match(r.err, /^usage: node examples\/start\.mjs \[--no-serve\] \[--out DIR\]/);
  }
  assert.match((await start(['--serve'], {})).err, /\(unknown: --serve\)/);
  const name = await start(['--no-serve', 'mlp', 'x'], { CI: 'true' }); // a name not in the zoo beside one in it
  assert.equal(name.code, 2, `${name.out}${name.err}`);
  assert.equal(name.out, '', 'mlp not exported either');
  assert.match(name.err, /^usage: node examples\/start\.mjs \[--no-serve\] \[--out DIR\] \[MODEL\.\.\.\] \(unknown: x\)$/m);
});

test('examples/start.mjs (npm start) exports and verifies the whole zoo, one line each, then serves the page on PORT and prints its URL; a bad PORT stops it before exporting', async () => {
  const { ZOO } = await import('../../examples/lib/workflow.mjs');
  const { createServer } = await import('node:net');
  const { spawn } = await import('node:child_process');
  // a port free now and below the range the system hands out for port 0 and outgoing connections
  // (ip_local_port_range), from which the servers and browsers of the test files beside this one
  // draw while the zoo exports (one could take a port noted there before start.mjs listens on it)
  const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  const free = (p) => new Promise((resolve) => {
    const s = createServer().once('error', () => resolve(false)).listen(p, '127.0.0.1', () => s.close(() => resolve(true)));
  });
  let port = 10000 + Math.floor(Math.random() * (low - 10000));
  while (!(await free(port))) port = port + 1 < low ? port + 1 : 10000;
  rmSync(new URL('build/start-test-c/', root), { recursive: true, force: true });
  const child = spawn(process.execPath, ['examples/start.mjs', '--out', 'build/start-test-c'], { cwd: root, env: { ...process.env, CI: '', PORT: String(port) } });
  try {
    let out = '';
    const url = await new Promise((resolve, reject) => {
      child.stdout.on('data', (c) => {
        out += c;
        const m = /^onemodel demo page: (\S+)$/m.exec(out);
        if (m) resolve(m[1]);
      });
      child.on('exit', (code) => reject(new Error(`start exited with ${code} before serving: ${out}`)));
    });
    assert.equal(url, `http://127.0.0.1:${port}/`);
    const [exported, served] = out.split(/^(?=onemodel demo page: )/m);
    assert.match(served, /^onemodel demo page: \S+\n$/, 'the URL after the export');
    const rows = checkStartLines(exported, ZOO, 'build/start-test-c');
    assert.match(rows[4].sizes, /^batch=3 seq=5; batch=1 seq=1; batch=4 seq=6; batch=7 seq=11$/);
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /<title>onemodel/);
  } finally {
    child.kill();
  }

  for (const bad of ['eighty', '', '-1', '65536', '80.5']) {
    const r = await start(['--out', 'build/start-test-d'], { CI: '', PORT: bad });
    assert.equal(r.code, 2, `PORT=${bad}: ${r.out}${r.err}`);
    assert.equal(r.out, '', 'nothing exported');
    assert.equal(r.err.trim(), `start: PORT must be an integer in 0..65535, got ${JSON.stringify(bad)}`);
  }
});

test('exportModelFile reports a model that fails (and the line says FAILED) instead of throwing, and frees it', async () => {
  const om = await import('onemodel');
  const { exportModelFile, reportLine } = await import('../../examples/lib/export.mjs');
  await om.ready();
  const before = om.memory();
  const path = new URL('build/examples-test/reads.onnx', root).pathname;
  rmSync(path, { force: true });
  const reads = { model: (x) => (x.sum().item() > 0 ? x : x.neg()), inputs: { x: om.randn([2, 3], { seed: 1 }) } };
  const r = await exportModelFile(reads, 'reads', path);
  assert.equal(r.ok, false);
  assert.match(r.error, /^TraceError DataDependent: item: reads the values of a traced tensor/);
  assert.match(reportLine(r), /^reads: FAILED: TraceError DataDependent/);
  const bad = await exportModelFile({ inputs: {} }, 'bad', path);
  assert.match(reportLine(bad), /^bad: FAILED: OmError InvalidArgument: bad\.mjs: the default export has no model/);
  assert.throws(() => readFileSync(path), /ENOENT/);
  assert.deepEqual(om.memory(), before);
});

test('the model file example of docs/demo.md trains and passes the trace oracle command', async () => {
  const doc = readFileSync(new URL('docs/demo.md', root), 'utf8');
  const code = doc.match(/```js\n([\s\S]*?)```/)[1];
  assert.match(code, /^import \* as om from 'onemodel';/);
  const file = new URL('build/demo-doc-model.mjs', root);
  writeFileSync(file, code);
  const out = run('tools/trace_oracle.mjs', file.pathname);
  assert.match(out, /ok: the \.onnx agrees with the eager run/);
  // trained here, as the page's worker trains it (its 'onemodel' is this process's: one instance)
  const om = await import('onemodel');
  const wf = await import('../../examples/lib/workflow.mjs');
  await om.ready();
  const model = wf.checkModelFile(await import(file.href));
  try {
    const { losses } = await wf.trainModel(model);
    assert.ok(losses.at(-1) < losses[0] / 2, `loss ${losses[0]} -> ${losses.at(-1)}`);
  } finally {
    wf.disposeModelFile(model);
  }
});
