// The npm package as a user gets it: `npm pack` (its prepack builds what the package needs), the
// tarball's contents, and the tarball installed offline into an empty project, where a small
// model and its trace run under Node; built by Vite, served by Vite's dev server, bundled by
// esbuild, and in a plain page with an import map, each exactly as docs/install.md shows, in
// headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core). Every run must give
// the bits this process computes with the repository's build. The README's examples run there as
// written. Vite and esbuild are the repository's devDependencies: nothing is downloaded.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import * as om from 'onemodel';
import { chromium } from 'playwright-core';
import { glueWarning } from '../../js/load.js';
import { serve } from '../../web-demo/server.mjs';
import { readmeExamples } from './helpers.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/** Runs a command in cwd and resolves to its stdout + stderr (rejects with both when it fails). */
async function sh(cwd, file, args) {
  try {
    const { stdout, stderr } = await run(file, args, { cwd, encoding: 'utf8', timeout: 120_000, maxBuffer: 1 << 24 });
    return stdout + stderr;
  } catch (e) {
    throw new Error(`${file} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

/** The files of a directory tree, as paths relative to it with '/' separators. */
const tree = (dir) => readdirSync(dir, { recursive: true, withFileTypes: true })
  .filter((d) => d.isFile()).map((d) => relative(dir, join(d.parentPath ?? d.path, d.name)).split('\\').join('/'));

/** The ```lang block of docs/install.md that starts with `start` (the test runs what the doc shows). */
function installDoc(lang, start) {
  const doc = readFileSync(join(ROOT, 'docs', 'install.md'), 'utf8');
  const block = [...doc.matchAll(new RegExp(`\`\`\`${lang}\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1]).find((b) => b.startsWith(start));
  assert.ok(block, `docs/install.md has a ${lang} block starting with ${start}`);
  return block;
}

// The app, written into the empty project. model.mjs is the part every environment runs (and this
// test process too, on the repository's build): a seeded model, its eager outputs, its trace and
// the traced graph run in the Session at another batch.
const MODEL = `export function run(om) {
  om.manualSeed(7);
  const net = new om.nn.Sequential(new om.nn.Linear(4, 8), new om.nn.ReLU(), new om.nn.Linear(8, 3)).eval();
  const x = om.randn([2, 4], { seed: 1 });
  const x5 = om.randn([5, 4], { seed: 2 });
  const traced = om.trace(net, { x: [x, ['batch', null]] }, { outputNames: ['y'] });
  const session = traced.session();
  try {
    return om.tidy(() => ({
      nodes: traced.graph().nodes.map((n) => n.opType),
      onnx: Array.from(traced.toOnnx()),
      eager: Array.from(net.forward(x5).toArray()),
      session: Array.from(session.run({ x: x5 }).y.toArray()),
    }));
  } finally {
    session.dispose();
    traced.dispose();
    om.dispose([x, x5]);
    net.dispose();
  }
}
`;
const MAIN = `import * as om from 'onemodel';
import { run } from './model.mjs';

await om.ready();
window.result = run(om);
`;
// The script of a page whose ready() is to fail: ready(options from the query string); what it
// rejected with is window.failure ('loaded' when it did not).
const FAIL = `import * as om from 'onemodel';

const options = JSON.parse(new URLSearchParams(location.search).get('options') ?? 'null') ?? undefined;
om.ready(options).then(() => { window.failure = 'loaded'; },
  (e) => { window.failure = { isOmError: e instanceof om.OmError, kind: e.kind, message: e.message }; });
`;
const page = (head) => `<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>onemodel app</title>${head}</head>
<body><script type="module" src="./main.js"></script></body></html>
`;
const FILES = {
  'package.json': JSON.stringify({ name: 'app', private: true, type: 'module' }, null, 2),
  'model.mjs': MODEL,
  'main.js': MAIN,
  'node.mjs': `import * as om from 'onemodel';\nimport { run } from './model.mjs';\n\nawait om.ready();\n`
    + `console.log(JSON.stringify({ from: import.meta.resolve('onemodel'), ...run(om) }));\n`,
  'index.html': page(''),
  // the import map of docs/install.md's page
  'importmap.html': page(`\n${installDoc('html', '<script type="importmap">').split('\n')[0]}\n`),
  'fail.js': FAIL,
  // a product large enough for the thread pool in the cross-origin-isolated page, then what the console
  // is told when the page's main thread waits for a worker. Whether an op waits depends on which
  // thread ends first (none may), so the page calls what then runs: the glue's own function that C's
  // pthread_cond_wait calls on the main thread (an import of the .wasm, as js/load.js instantiates it)
  'matmul.js': `import * as om from 'onemodel';

let glue;
const instantiate = WebAssembly.instantiate;
WebAssembly.instantiate = (module, imports) => { glue = imports; return instantiate(module, imports); };
const warned = [];
const warn = console.warn;
console.warn = (...args) => { warned.push(args.join(' ')); warn(...args); };
await om.ready();
const a = om.randn([512, 512], { seed: 1 });
const sum = om.tidy(() => a.matmul(a).sum().item());
const waited = warned.length;
const blocking = glue?.env?.emscripten_check_blocking_allowed;
if (typeof blocking !== 'function') throw new Error('the threaded glue has no import emscripten_check_blocking_allowed');
blocking();
blocking();
window.result = { threads: om.numThreads(), sum, waited, warned };
`,
  'matmul.html': page(`\n${installDoc('html', '<script type="importmap">').split('\n')[0]}\n`).replace('./main.js', './matmul.js'),
  'failing.html': page(`\n${installDoc('html', '<script type="importmap">').split('\n')[0]}\n`).replace('./main.js', './fail.js'),
};

/** The Markdown files the package ships: the README and docs/. */
const shippedDocs = (files) => files.filter((f) => f.endsWith('.md'));

/**
 * Asserts that a size a doc states (kB, or MB for `unit`) is within 10% (and 2 kB) of `bytes`;
 * the failure names the line to update and what to write.
 */
function assertFigure(doc, text, at, stated, bytes, what, unit = 'kB') {
  const scale = unit === 'MB' ? 1e6 : 1e3;
  const line = text.slice(0, at).split('\n').length;
  assert.ok(Math.abs(stated * scale - bytes) <= Math.max(0.1 * bytes, 2e3),
    `${doc}:${line} says ${what} is ${stated} ${unit}, the package has ${(bytes / scale).toFixed(unit === 'MB' ? 1 : 0)} ${unit}: update that line (node tools/doc_sizes.mjs rewrites them)`);
}

describe('the npm package, packed and installed into an empty project', () => {
  let dir, app, tarball, expected, browser;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'onemodel-package-'));
    app = join(dir, 'app');
    mkdirSync(app);
    for (const [name, text] of Object.entries(FILES)) writeFileSync(join(app, name), text);
    await om.ready();
    expected = (await import(pathToFileURL(join(app, 'model.mjs')).href)).run(om);
    await sh(ROOT, 'npm', ['pack', '--pack-destination', dir]);
    tarball = join(dir, readdirSync(dir).find((f) => f.endsWith('.tgz')));
    await sh(app, 'npm', ['install', tarball, '--offline', '--no-audit', '--no-fund']);
  });

  after(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('the model this test runs everywhere: a trace of 3 nodes that the Session runs like eager', () => {
    assert.deepEqual(expected.nodes, ['Gemm', 'Relu', 'Gemm']);
    assert.equal(expected.eager.length, 15);
    for (const [i, v] of expected.eager.entries()) assert.ok(Math.abs(expected.session[i] - v) <= 1e-6, `${i}: ${expected.session[i]} vs ${v}`);
  });

  test('the tarball holds package.json, the README, the LICENSE, the docs, the JS, the types, both builds\' glue and .wasm, nothing else', async () => {
    const listed = (await sh(dir, 'tar', ['-tzf', tarball])).trim().split('\n').map((p) => p.replace(/^package\//, ''));
    const js = tree(join(ROOT, 'js')).filter((p) => p.endsWith('.js') && !p.startsWith('dist/')).map((p) => `js/${p}`);
    assert.ok(js.includes('js/index.js') && js.includes('js/nn/index.js'), js.join());
    const threaded = ['js/dist/onemodel-mt.mjs', 'js/dist/onemodel-mt.wasm', 'js/dist/onemodel-mt.worker.js', 'js/dist/package.json'];
    const docs = tree(join(ROOT, 'docs')).filter((p) => p.endsWith('.md') || p.startsWith('images/')).map((p) => `docs/${p}`);
    assert.ok(docs.includes('docs/install.md') && docs.includes('docs/images/demo-page.png'), docs.join());
    const want = ['package.json', 'README.md', 'LICENSE', 'js/index.d.ts', 'js/dist/onemodel.mjs', 'js/dist/onemodel.wasm', ...threaded, ...js, ...docs];
    assert.deepEqual(listed.sort(), want.sort());
    const installed = join(app, 'node_modules', 'onemodel');
    for (const f of want) assert.ok(readFileSync(join(installed, f)).equals(readFileSync(join(ROOT, f))), `${f} as in the repository`);
    // nothing else was installed: the package has no dependencies
    assert.deepEqual(readdirSync(join(app, 'node_modules')).filter((f) => !f.startsWith('.')), ['onemodel']);
  });

  test('the docs stand alone in the package: every link of its Markdown is relative and resolves to a file it holds', async () => {
    const listed = new Set((await sh(dir, 'tar', ['-tzf', tarball])).trim().split('\n').map((p) => p.replace(/^package\//, '')));
    const bad = [];
    for (const doc of shippedDocs([...listed])) {
      const text = readFileSync(join(ROOT, doc), 'utf8');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1].split('#')[0];
        if (!target) continue; // an anchor on the same page
        const path = join(doc, '..', target).split('\\').join('/').replace(/\/$/, '');
        // an absolute URL is a link out of the package: the docs stand alone
        if (/^[a-z]+:/.test(target) || !listed.has(path)) bad.push(`${doc}:${text.slice(0, m.index).split('\n').length}: ${m[1]}`);
      }
      assert.doesNotMatch(text, /\.\.\/shared\/|\/work\//, `${doc} points outside the repository`);
    }
    assert.deepEqual(bad, [], 'links to files the package does not hold, or out of it');
  });

  test('the sizes README.md and docs/install.md state are the package\'s (within 10%)', async () => {
    const installed = join(app, 'node_modules', 'onemodel');
    const files = (await sh(dir, 'tar', ['-tzf', tarball])).trim().split('\n').map((p) => p.replace(/^package\//, ''));
    const size = (f) => statSync(join(installed, f)).size;
    const gzipped = (f) => gzipSync(readFileSync(join(installed, f))).length;
    const sum = (list, fn) => list.reduce((n, f) => n + fn(f), 0);
    const install = readFileSync(join(ROOT, 'docs', 'install.md'), 'utf8');
    // the table of what the package holds: one row per file, or per group of JS files
    let rows = 0;
    for (const m of install.matchAll(/^\| `([^`]+)`[^|]*\|[^|]*\| (\d+) kB(?: \((\d+) kB gzipped\))? \|$/gm)) {
      const group = m[1] === 'js/*.js' ? files.filter((f) => f.startsWith('js/') && !f.startsWith('js/dist/') && f.endsWith('.js')) : [m[1]];
      assert.ok(group.every((f) => files.includes(f)), `${m[1]} is in the package`);
      assertFigure('docs/install.md', install, m.index, Number(m[2]), sum(group, size), m[1]);
      if (m[3]) assertFigure('docs/install.md', install, m.index, Number(m[3]), sum(group, gzipped), `${m[1]} gzipped`);
      rows++;
    }
    assert.equal(rows, 7, 'the table\'s rows with a size');
    const total = /(\d+) files, ([\d.]+) MB unpacked, a (\d+) kB tarball/.exec(install);
    assert.ok(total, 'docs/install.md states the file count, the unpacked size and the tarball\'s');
    assert.equal(Number(total[1]), files.length, `docs/install.md:${install.slice(0, total.index).split('\n').length}: the package has ${files.length} files`);
    assertFigure('docs/install.md', install, total.index, Number(total[2]), sum(files, size), 'the unpacked size', 'MB');
    assertFigure('docs/install.md', install, total.index, Number(total[3]), statSync(tarball).size, 'the tarball');
    const page = /\((\d+) kB gzipped,\s+against (\d+) kB for the single-thread build\)/.exec(install);
    assert.ok(page, 'docs/install.md states what a threaded page loads');
    assertFigure('docs/install.md', install, page.index, Number(page[1]),
      sum(['js/dist/onemodel-mt.mjs', 'js/dist/onemodel-mt.wasm', 'js/dist/onemodel-mt.worker.js'], gzipped), 'the threaded build gzipped');
    assertFigure('docs/install.md', install, page.index, Number(page[2]), sum(['js/dist/onemodel.mjs', 'js/dist/onemodel.wasm'], gzipped),
      'the single-thread build gzipped');
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const packed = /`onemodel-0\.1\.0\.tgz` \((\d+) kB/.exec(readme);
    assert.ok(packed, 'README.md states the tarball\'s size');
    assertFigure('README.md', readme, packed.index, Number(packed[1]), statSync(tarball).size, 'the tarball');
  });

  test('Node: the installed package runs the model and the trace, with the same bits as the repository build', async () => {
    const out = JSON.parse(await sh(app, process.execPath, ['node.mjs']));
    assert.equal(fileURLToPath(out.from), join(app, 'node_modules', 'onemodel', 'js', 'index.js'));
    delete out.from;
    assert.deepEqual(out, expected);
    // CommonJS (docs/install.md): import() everywhere, require() where Node.js lets it load an ES module
    writeFileSync(join(app, 'node.cjs'), `(async () => {
  const om = await import('onemodel');
  await om.ready();
  const viaImport = om.tensor([1, 2, 3]).sum().item();
  const required = process.features.require_module ? require('onemodel') : null;
  console.log(JSON.stringify({ viaImport, same: required ? required.tensor === om.tensor : null }));
})();
`);
    const cjs = JSON.parse(await sh(app, process.execPath, ['node.cjs']));
    assert.deepEqual(cjs, { viaImport: 6, same: process.features.require_module ? true : null });
    // a copy of the project whose package lost its .wasm files: ready() says what is missing (Node
    // loads the threaded build), then one whose .wasm is damaged
    const broken = join(dir, 'broken');
    const wasm = join(broken, 'node_modules', 'onemodel', 'js', 'dist', 'onemodel-mt.wasm');
    cpSync(app, broken, { recursive: true, filter: (f) => !f.endsWith('.wasm') });
    await assert.rejects(sh(broken, process.execPath, ['node.mjs']), (e) => {
      assert.match(e.message, new RegExp(`OmError: onemodel: cannot read onemodel-mt\\.wasm at ${wasm}: ENOENT: no such file or directory, `
        + '.*\\. The installed package is incomplete: install it again'));
      return true;
    });
    writeFileSync(wasm, 'not wasm');
    await assert.rejects(sh(broken, process.execPath, ['node.mjs']), (e) => {
      assert.match(e.message, new RegExp(`OmError: onemodel: onemodel-mt\\.wasm from ${wasm} is not WebAssembly: expected the magic word `
        + '00 61 73 6d, found 6e 6f 74 20 \\("not "\\)\\. The installed package is damaged: install it again'));
      return true;
    });
  });

  test('TypeScript finds the declarations in the installed package, with node and with bundler module resolution', async () => {
    writeFileSync(join(app, 'check.ts'), `import * as om from 'onemodel';
await om.ready();
const t: om.Tensor = om.tensor([1, 2, 3]);
const total: number = t.sum().item();
// @ts-expect-error: a Tensor is not a number (the declarations are read, not an untyped module)
const wrong: number = t;
export { total, wrong };
`);
    const configs = [['nodenext', 'nodenext'], ['esnext', 'bundler']].map(([module, moduleResolution]) => {
      const compilerOptions = { strict: true, noEmit: true, target: 'es2022', lib: ['es2022'], types: [], module, moduleResolution };
      writeFileSync(join(app, `tsconfig.${moduleResolution}.json`), JSON.stringify({ compilerOptions, files: ['check.ts'] }));
      return `tsconfig.${moduleResolution}.json`;
    });
    assert.equal(await sh(app, join(ROOT, 'node_modules', '.bin', 'tsc'), ['-b', ...configs]), ''); // one tsc for both
  });

  test("the README's examples run as written in the project", async () => {
    const [train, trace] = readmeExamples();
    writeFileSync(join(app, 'readme-train.mjs'), train);
    writeFileSync(join(app, 'readme-trace.mjs'), trace);
    const losses = [...(await sh(app, process.execPath, ['readme-train.mjs'])).matchAll(/^(\d+) ([\d.e-]+)$/gm)];
    assert.deepEqual(losses.map((m) => Number(m[1])), [0, 20, 40, 60, 80]);
    assert.ok(Number(losses[4][2]) < Number(losses[0][2]) / 2, `loss did not halve: ${losses.map((m) => m[2])}`);
    const out = await sh(app, process.execPath, ['readme-trace.mjs']);
    assert.match(out, /^\[ 'batch', 4 \] -> \[ 'batch', 3 \]$/m);
    assert.match(out, new RegExp(`^${readFileSync(join(app, 'net.onnx')).length} bytes$`, 'm'));
    assert.match(out, /^session: \[ 3, 3 \]$/m);
  });

  describe('in headless Chromium', () => {
    before(async () => {
      browser = await chromium.launch({
        executablePath: '/usr/bin/chromium',
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
          '--disable-component-update', '--disable-sync'],
      });
    });

    /**
     * Opens url and waits for the app's window.result; returns it with the .wasm URLs the page
     * fetched. Fails with the page's errors when it has any. cores: what navigator.hardwareConcurrency says.
     */
    async function openPage(url, { cores } = {}) {
      const context = await browser.newContext();
      try {
        const p = await context.newPage();
        if (cores) await p.addInitScript((n) => Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get: () => n }), cores);
        const errors = [], wasm = [];
        p.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
        p.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
        p.on('response', (r) => { if (r.url().endsWith('.wasm')) wasm.push([new URL(r.url()).pathname, r.status()]); });
        await p.goto(url);
        const result = await Promise.race([
          p.waitForFunction(() => window.result, null, { timeout: 60_000 }).then((h) => h.jsonValue()),
          new Promise((_, reject) => p.on('pageerror', (e) => reject(new Error(`the page failed: ${e.message}`)))),
        ]);
        assert.deepEqual(errors, []);
        return { result, wasm };
      } finally {
        await context.close();
      }
    }

    /**
     * Opens url, whose ready() is to fail, and resolves to what it rejected with (window.failure,
     * set by the page's fail.js) and the page's uncaught errors. route(context) may first change
     * what the server answers (playwright's routes).
     */
    async function openFailing(url, route = async () => {}) {
      const context = await browser.newContext();
      try {
        const p = await context.newPage();
        await route(context);
        const errors = [];
        p.on('pageerror', (e) => errors.push(e));
        await p.goto(url);
        const failure = await p.waitForFunction(() => window.failure, null, { timeout: 60_000 }).then((h) => h.jsonValue());
        return { failure, errors };
      } finally {
        await context.close();
      }
    }

    /** Serves dir on 127.0.0.1 (web-demo/server.mjs) while fn(its URL) runs; isolated: cross-origin isolated. */
    async function served(dir, fn, { isolated = false } = {}) {
      const server = await serve({ port: 0, mounts: [['/', dir]], isolated });
      try {
        return await fn(server.url);
      } finally {
        await server.close();
      }
    }

    /**
     * openPage on path of dir, served on 127.0.0.1 (web-demo/server.mjs); isolated: cross-origin
     * isolated (onemodel loads its threaded build where it finds it), else not (the single-thread build).
     */
    const openApp = (dir, path, { isolated = false, cores } = {}) => served(dir, (url) => openPage(new URL(path, url).href, { cores }), { isolated });

    /** Asserts a failure is an OmError of kind Load whose message matches each of parts. */
    function assertLoad(failure, ...parts) {
      assert.equal(failure.isOmError, true, JSON.stringify(failure));
      assert.equal(failure.kind, 'Load');
      for (const p of parts) assert.match(failure.message, p);
    }

    test('Vite (no configuration): the build emits the .wasm as an asset and the page, served by `vite preview`, runs the model and the trace', async () => {
      const log = await sh(app, process.execPath, [join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--logLevel', 'warn']);
      assert.equal(log, '', 'no warnings');
      const dist = join(app, 'dist');
      const assets = tree(dist).filter((f) => f.endsWith('.wasm'));
      assert.equal(assets.length, 1, tree(dist).join());
      assert.ok(readFileSync(join(dist, assets[0])).equals(readFileSync(join(app, 'node_modules', 'onemodel', 'js', 'dist', 'onemodel.wasm'))));
      const { preview } = await import('vite');
      const server = await preview({ root: app, logLevel: 'silent', preview: { host: '127.0.0.1', port: 0 } });
      try {
        const { result, wasm } = await openPage(server.resolvedUrls.local[0]);
        assert.deepEqual(wasm, [[`/${assets[0]}`, 200]]);
        assert.deepEqual(result, expected);
      } finally {
        await server.close();
      }
    });

    test("Vite's dev server without the configuration: ready() rejects with a Load error that names the fix", async () => {
      const { createServer } = await import('vite');
      writeFileSync(join(app, 'index.html'), FILES['index.html'].replace('./main.js', './fail.js'));
      const server = await createServer({ root: app, logLevel: 'silent', clearScreen: false, server: { host: '127.0.0.1', port: 0 } });
      try {
        await server.listen();
        const { failure } = await openFailing(server.resolvedUrls.local[0]);
        assertLoad(failure, new RegExp('^onemodel: onemodel\\.wasm from http://127\\.0\\.0\\.1:\\d+/node_modules/\\.vite/deps/onemodel\\.wasm '
          + '\\(HTTP 200, text/html\\) is not WebAssembly: expected the magic word 00 61 73 6d, found 3c 21 64 6f \\("<!do"\\), an HTML page served '
          + 'in its place\\. Vite\'s dev server pre-bundled onemodel into node_modules/\\.vite/deps/, where there is no onemodel\\.wasm: leave it out '
          + 'of pre-bundling with `optimizeDeps: \\{ exclude: \\[\'onemodel\'\\] \\}` in vite\\.config\\.js \\(see onemodel/docs/install\\.md#vite\\)$'));
      } finally {
        await server.close();
        writeFileSync(join(app, 'index.html'), FILES['index.html']);
        rmSync(join(app, 'node_modules', '.vite'), { recursive: true, force: true });
      }
    });

    test("Vite's dev server, with docs/install.md's vite.config.js (onemodel left out of pre-bundling): the page runs the model and the trace", async () => {
      writeFileSync(join(app, 'vite.config.js'), installDoc('js', '// vite.config.js'));
      const { createServer } = await import('vite');
      const server = await createServer({ root: app, logLevel: 'warn', clearScreen: false, server: { host: '127.0.0.1', port: 0 } });
      try {
        assert.deepEqual(server.config.optimizeDeps.exclude, ['onemodel'], 'the config file was read');
        await server.listen();
        const { result, wasm } = await openPage(server.resolvedUrls.local[0]);
        assert.deepEqual(wasm, [['/node_modules/onemodel/js/dist/onemodel.wasm', 200]]);
        assert.deepEqual(result, expected);
      } finally {
        await server.close();
        rmSync(join(app, 'vite.config.js'));
      }
    });

    test("esbuild, with docs/install.md's two commands (bundle, copy onemodel.wasm beside it): the page runs the model and the trace", async () => {
      const [bundle, copy] = installDoc('sh', 'npx esbuild').trim().split('\n').map((line) => line.split(/\s+/));
      assert.deepEqual(bundle.slice(0, 2), ['npx', 'esbuild']);
      assert.equal(copy[0], 'cp');
      const out = join(app, 'dist');
      rmSync(out, { recursive: true, force: true }); // the Vite build's
      const log = await sh(app, join(ROOT, 'node_modules', '.bin', 'esbuild'), [...bundle.slice(2), '--log-level=warning']);
      assert.equal(log, '', 'no warnings');
      writeFileSync(join(out, 'index.html'), FILES['index.html']);
      // without the copy, ready() rejects with a Load error that says what is missing and where to read about it
      // (fail.js, bundled the same way, shows what it rejected with)
      await sh(app, join(ROOT, 'node_modules', '.bin', 'esbuild'), ['fail.js', ...bundle.slice(3), '--log-level=warning']);
      writeFileSync(join(out, 'failing.html'), FILES['index.html'].replace('./main.js', './fail.js'));
      const { failure, errors } = await served(out, (url) => openFailing(new URL('failing.html', url).href));
      assertLoad(failure, new RegExp('^onemodel: cannot load onemodel\\.wasm from '
        + 'http://127\\.0\\.0\\.1:\\d+/onemodel\\.wasm: HTTP 404 \\(text/plain; charset=utf-8\\)\\. A bundler put onemodel\'s code in a file '
        + 'with no onemodel\\.wasm beside it: copy node_modules/onemodel/js/dist/onemodel\\.wasm there \\(see onemodel/docs/install\\.md#esbuild\\), '
        + 'or give its URL: om\\.ready\\(\\{ wasmUrl \\}\\)$'));
      assert.deepEqual(errors, [], 'nothing else failed (no abort from the glue)');
      // the app's own page fails the same way, as an uncaught rejection of its top-level await
      await assert.rejects(openApp(out, 'index.html'), /the page failed: onemodel: cannot load onemodel\.wasm from .*: HTTP 404 /);
      rmSync(join(out, 'fail.js'));
      rmSync(join(out, 'failing.html'));
      // the file copied is the one the package exports as onemodel/onemodel.wasm
      assert.equal(join(app, copy[1]), createRequire(join(app, 'package.json')).resolve('onemodel/onemodel.wasm'));
      await sh(app, copy[0], copy.slice(1));
      assert.deepEqual(tree(out).sort(), ['index.html', 'main.js', 'onemodel.wasm']);
      const { result, wasm } = await openApp(out, 'index.html');
      assert.deepEqual(wasm, [['/onemodel.wasm', 200]]);
      assert.deepEqual(result, expected);
    });

    test("esbuild, cross-origin isolated: no threads asked for, the single-thread build (nothing fetched in vain); threads: true a Load error naming the copy, and with docs/install.md's copy the threaded build", async () => {
      const out = join(app, 'dist');   // the esbuild test's bundle, with onemodel.wasm copied beside it
      assert.ok(tree(out).includes('onemodel.wasm'));
      const bundle = installDoc('sh', 'npx esbuild').trim().split('\n')[0].split(/\s+/).slice(3);
      writeFileSync(join(app, 'threads.js'), MAIN.replace('await om.ready();', 'await om.ready({ threads: true });'));
      for (const entry of ['fail.js', 'threads.js']) await sh(app, join(ROOT, 'node_modules', '.bin', 'esbuild'), [entry, ...bundle, '--log-level=warning']);
      writeFileSync(join(out, 'failing.html'), FILES['index.html'].replace('./main.js', './fail.js'));
      writeFileSync(join(out, 'threads.html'), FILES['index.html'].replace('./main.js', './threads.js'));
      try {
        const { result, wasm } = await openApp(out, 'index.html', { isolated: true });   // openPage: no console error, no 404
        assert.deepEqual(wasm, [['/onemodel.wasm', 200]]);
        assert.deepEqual(result, expected);
        await served(out, async (base) => {
          const { failure } = await openFailing(`${base}failing.html?options=${encodeURIComponent('{"threads":true}')}`);
          assertLoad(failure, new RegExp(`^onemodel: cannot import ${base}dist/onemodel-mt\\.mjs: HTTP 404 \\([^)]+\\) \\(.*\\)\\. A bundler put onemodel's code in a file with no dist/ `
            + `beside it holding the threaded build: copy node_modules/onemodel/js/dist/onemodel-mt\\.\\{mjs,wasm,worker\\.js\\} to ${base}dist/ `
            + '\\(see onemodel/docs/install\\.md#threads-in-a-page\\), or leave threads out to load the single-thread build$'));
        }, { isolated: true });
        const copy = installDoc('sh', 'mkdir -p dist/dist');
        await sh(app, 'bash', ['-c', copy]);
        assert.deepEqual(tree(join(out, 'dist')).sort(), ['onemodel-mt.mjs', 'onemodel-mt.wasm', 'onemodel-mt.worker.js']);
        const threaded = await openApp(out, 'threads.html', { isolated: true });
        assert.deepEqual(threaded.wasm, [['/dist/onemodel-mt.wasm', 200]]);
        assert.deepEqual(threaded.result, expected);
      } finally {
        for (const f of ['fail.js', 'failing.html', 'threads.js', 'threads.html', 'dist']) rmSync(join(out, f), { recursive: true, force: true });
        rmSync(join(app, 'threads.js'));
      }
    });

    test('no bundler: a plain page with an import map runs the model and the trace from node_modules', async () => {
      const { result, wasm } = await openApp(app, 'importmap.html');
      assert.deepEqual(wasm, [['/node_modules/onemodel/js/dist/onemodel.wasm', 200]]);
      assert.deepEqual(result, expected);
    });

    test('no bundler, failing loads: a 404, an HTML page in place of the .wasm, no answer, a bad wasmUrl, threads without isolation, a CSP without wasm-unsafe-eval, the worker script missing', async () => {
      await served(app, async (base) => {
        const url = (options) => `${base}failing.html${options ? `?options=${encodeURIComponent(JSON.stringify(options))}` : ''}`;
        const WASM = new RegExp(`^${base}node_modules/onemodel/js/dist/onemodel\\.wasm$`);
        const PLACE = 'http://127\\.0\\.0\\.1:\\d+/node_modules/onemodel/js/dist/onemodel\\.wasm';
        const SERVE = 'The package\'s js/dist/onemodel\\.wasm is not served there: serve the package\'s whole js/ directory '
          + '\\(see onemodel/docs/install\\.md\\), or give the file\'s URL: om\\.ready\\(\\{ wasmUrl \\}\\)$';
        // a 404
        let { failure, errors } = await openFailing(url(), (c) => c.route(WASM, (r) => r.fulfill({ status: 404, contentType: 'text/plain', body: 'gone' })));
        assertLoad(failure, new RegExp(`^onemodel: cannot load onemodel\\.wasm from ${PLACE}: HTTP 404 \\(text/plain\\)\\. ${SERVE}`));
        assert.deepEqual(errors, [], 'nothing else failed (no abort from the glue)');
        // a server's index.html where the .wasm should be
        ({ failure } = await openFailing(url(), (c) => c.route(WASM, (r) => r.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><p>app' }))));
        assertLoad(failure, new RegExp(`^onemodel: onemodel\\.wasm from ${PLACE} \\(HTTP 200, text/html\\) is not WebAssembly: `
          + `expected the magic word 00 61 73 6d, found 3c 21 64 6f \\("<!do"\\), an HTML page served in its place\\. ${SERVE}`));
        // no answer at all (a network error, a CORS refusal, CSP's connect-src)
        ({ failure } = await openFailing(url(), (c) => c.route(WASM, (r) => r.abort())));
        assertLoad(failure, new RegExp(`^onemodel: cannot load onemodel\\.wasm from ${PLACE}: the fetch failed \\(Failed to fetch\\)\\. `
          + 'The server is unreachable, or the URL is on another origin that does not allow it \\(CORS\\), or the page\'s Content-Security-Policy \\(connect-src\\) blocks it$'));
        // wasmUrl: the file is fetched from there (and a bad one is named as the caller's)
        ({ failure } = await openFailing(url({ wasmUrl: 'nowhere/onemodel.wasm' })));
        assertLoad(failure, new RegExp(`^onemodel: cannot load onemodel\\.wasm from ${base}nowhere/onemodel\\.wasm: HTTP 404 `
          + '\\(text/plain; charset=utf-8\\)\\. Check the URL your locateFile or wasmUrl gave for onemodel\\.wasm$'));
        ({ failure } = await openFailing(url({ wasmUrl: 'node_modules/onemodel/js/dist/onemodel.wasm' })));
        assert.equal(failure, 'loaded');
        // threads asked for in a page that is not cross-origin isolated
        ({ failure } = await openFailing(url({ threads: true })));
        assertLoad(failure, /^onemodel: threads: true needs a cross-origin-isolated page \(crossOriginIsolated is false, so there is no shared memory\)\. /,
          /Serve the page with the headers Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp \(see onemodel\/docs\/install\.md#threads-in-a-page\)/);
        // a Content-Security-Policy that lets scripts run but not WebAssembly compile
        ({ failure } = await openFailing(url(), (c) => c.route(/failing\.html/, async (r) => {
          const res = await r.fetch();
          await r.fulfill({ response: res, headers: { ...res.headers(), 'content-security-policy': "script-src 'self' 'unsafe-inline'" } });
        })));
        assertLoad(failure, new RegExp(`^onemodel: the page's Content-Security-Policy does not allow WebAssembly to compile onemodel\\.wasm from ${PLACE} `
          + '\\(HTTP 200, application/wasm\\) \\(CompileError: '), /\. Add 'wasm-unsafe-eval' to its script-src directive$/);
      });
      // threads asked for where the page is isolated: the threaded build; its worker script is
      // checked before a worker starts on it (a 404, or a page in its place)
      await served(app, async (base) => {
        const threads = `${base}failing.html?options=${encodeURIComponent('{"threads":true}')}`;
        const WORKER = /\/onemodel-mt\.worker\.js$/;
        assert.equal((await openFailing(threads)).failure, 'loaded');
        let { failure } = await openFailing(threads, (c) => c.route(WORKER, (r) => r.fulfill({ status: 404, contentType: 'text/plain', body: '' })));
        assertLoad(failure, new RegExp(`^onemodel: cannot load onemodel-mt\\.worker\\.js from ${base}node_modules/onemodel/js/dist/onemodel-mt\\.worker\\.js: `
          + 'HTTP 404 \\(text/plain\\)\\. The package\'s js/dist/onemodel-mt\\.worker\\.js is not served there: serve the package\'s whole js/ '
          + 'directory \\(see onemodel/docs/install\\.md\\), or give the file\'s URL: om\\.ready\\(\\{ locateFile \\}\\)$'));
        ({ failure } = await openFailing(threads, (c) => c.route(WORKER, (r) => r.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html>' }))));
        assertLoad(failure, /^onemodel: onemodel-mt\.worker\.js from .* is served as text\/html, not as a script\. /);
        // without threads: true, a page whose threaded files fail loads the single-thread build
        ({ failure } = await openFailing(`${base}failing.html`, (c) => c.route(WORKER, (r) => r.fulfill({ status: 404, body: '' }))));
        assert.equal(failure, 'loaded');
      }, { isolated: true });
    });

    test('no bundler, cross-origin isolated: the page loads the threaded build and gets the same bits', async (t) => {
      const { result, wasm } = await openApp(app, 'importmap.html', { isolated: true });
      assert.deepEqual(wasm, [['/node_modules/onemodel/js/dist/onemodel-mt.wasm', 200]]);
      assert.deepEqual(result, expected);
      // a 1-core machine: the threaded build starts (with one worker) and gives the same bits
      const one = await openApp(app, 'importmap.html', { isolated: true, cores: 1 });
      assert.deepEqual(one.wasm, [['/node_modules/onemodel/js/dist/onemodel-mt.wasm', 200]]);
      assert.deepEqual(one.result, expected);
      // the main thread waits for the pool's workers: the console is told so once (whether the
      // product waited or not, and however often the glue says it), in the package's terms, linking nowhere outside
      const big = await openApp(app, 'matmul.html', { isolated: true });
      assert.deepEqual(big.wasm, [['/node_modules/onemodel/js/dist/onemodel-mt.wasm', 200]]);
      const a = om.randn([512, 512], { seed: 1 });
      assert.equal(big.result.sum, om.tidy(() => a.matmul(a).sum().item()), 'the page\'s product has this process\'s bits');
      a.dispose();
      assert.ok(big.result.threads > 1, `${big.result.threads} threads in the page: the pool has no worker to wait for`);
      assert.deepEqual(big.result.warned, [glueWarning('Blocking on the main thread is very dangerous')]);
      t.diagnostic(`the page's product ${big.result.waited ? 'waited' : 'did not wait'} for a worker`);
    });
  });
});
