// ready()'s load path in Node.js (js/load.js): its options, and each way the .wasm or the worker
// script can fail to load, as an OmError of kind 'Load' that names the file and the fix. Each
// failing load runs in its own process (a process loads the module once). The same failures in a
// browser (HTTP status, content type, Vite, esbuild, threads, CSP): package.test.mjs.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as om from 'onemodel';
import { glueWarning } from '../../js/load.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DIST = join(ROOT, 'js', 'dist');

/**
 * Runs ready(options) in a fresh Node process, options being the source of an object literal
 * (so it may hold a locateFile function), then ready() again with none; returns what each did:
 * { failed: { kind, isOmError, message } | null, retried: true when the second load worked }.
 */
function loadIn(options) {
  const script = `
    import * as om from 'onemodel';
    let failed = null;
    try { await om.ready(${options}); } catch (e) { failed = { kind: e.kind, isOmError: e instanceof om.OmError, message: e.message }; }
    await om.ready();
    console.log(JSON.stringify({ failed, retried: om.zeros([3]).numel() === 3 }));
  `;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: ROOT }));
}

/** locateFile's source: the package's own files, but `path` for `file`. */
const placing = (file, path) => `{ locateFile: (f, dir) => (f === ${JSON.stringify(file)} ? ${JSON.stringify(path)} : dir + f) }`;

describe('ready() options', () => {
  before(() => om.ready());

  test('bad options are an InvalidArgument naming the option, also once the module is loaded', async () => {
    const cases = [
      ['x', /^ready: options must be an object, got string$/],
      [null, /^ready: options must be an object, got null$/],
      [{ threads: 'yes' }, /^ready: threads must be true or false, got string$/],
      [{ locateFile: 'dist/' }, /^ready: locateFile must be a function \(file name, directory\) => URL, got string$/],
      [{ wasmUrl: 3 }, /^ready: wasmUrl must be a string or a URL, got number$/],
      [{ wasmUrl: 'a.wasm', locateFile: (f) => f }, /^ready: give wasmUrl or locateFile, not both$/],
      [{ wasmUrl: 'a.wasm' }, /^ready: wasmUrl names the single-thread build's onemodel\.wasm, which Node\.js does not load; use locateFile/],
      [{ foo: 1 }, /^ready: unknown option 'foo' \(expected wasmUrl, locateFile, threads\)$/],
      // a typo of a real option, with the good ones beside it: the typo is named, nothing is loaded from them
      [{ threads: false, wasmURL: 'a.wasm' }, /^ready: unknown option 'wasmURL' \(expected wasmUrl, locateFile, threads\); did you mean 'wasmUrl'\?$/],
    ];
    for (const [options, message] of cases) {
      await assert.rejects(om.ready(options), (e) => e instanceof om.OmError && e.kind === 'InvalidArgument' && message.test(e.message),
        `${JSON.stringify(options)}`);
    }
    await om.ready({ threads: true }); // good options: the loaded module
  });

  test('an unknown option rejects before anything loads, and a later ready() loads', () => {
    const res = loadIn("{ Threads: false }");
    assert.deepEqual(res.failed, { kind: 'InvalidArgument', isOmError: true,
      message: "ready: unknown option 'Threads' (expected wasmUrl, locateFile, threads); did you mean 'threads'?" });
    assert.equal(res.retried, true);
  });
});

describe('the cores the process may use', () => {
  /** ready() in a fresh Node process allowed only the CPUs `cpus` (taskset): the threads and a product's bits (a hash). */
  const loadOn = (cpus) => JSON.parse(execFileSync('taskset', ['-c', cpus, process.execPath, '--input-type=module', '-e', `
    import * as om from 'onemodel';
    import { createHash } from 'node:crypto';
    import { availableParallelism, cpus } from 'node:os';
    await om.ready();
    const y = om.tidy(() => om.randn([300, 300], { seed: 1 }).matmul(om.randn([300, 300], { seed: 2 })));
    const bits = createHash('sha256').update(y.toArray()).digest('hex');
    console.log(JSON.stringify({ cores: availableParallelism(), online: cpus().length, threads: om.numThreads(), set: om.setNumThreads(4), bits }));
  `], { encoding: 'utf8', cwd: ROOT, timeout: 120_000 }));
  // the CPUs this process may use (a container or a CI runner may allow fewer than are online)
  const allowed = readFileSync('/proc/self/status', 'utf8').match(/^Cpus_allowed_list:\s*(\S+)$/m)[1];

  test('one core: ready() settles (the threaded build starts with one worker), one thread by default and at most', () => {
    const one = loadOn(allowed.split(/[-,]/)[0]);
    assert.equal(one.cores, 1);
    assert.deepEqual([one.threads, one.set], [1, 1], `${one.online} cores online`);
    const all = loadOn(allowed);
    const most = Math.min(4, all.cores);
    assert.deepEqual([all.threads, all.set], [most, most]);
    assert.deepEqual(one.bits, all.bits, 'the same bits on one core as on all');
  });
});

describe("the glue's warnings in a page", () => {
  test("Emscripten's warning that links outside the package is said in the package's terms; others pass as they are", () => {
    // the text Emscripten 3.1.6's threaded glue warns with when the page's main thread waits for a worker thread
    const emscripten = 'Blocking on the main thread is very dangerous, see https://emscripten.org/docs/porting/pthreads.html#blocking-on-the-main-browser-thread';
    assert.equal(glueWarning(emscripten), 'onemodel: the threaded build computes on the page\'s main thread with its worker threads, and the '
      + 'page does not respond until each op ends; compute in a module Worker to keep the page responsive (see onemodel/docs/install.md#threads-in-a-page)');
    assert.equal(glueWarning('any other warning'), 'any other warning');
  });
});

describe('a failed load in Node.js', () => {
  let dir;
  before(() => { dir = mkdtempSync(join(tmpdir(), 'onemodel-load-')); });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Asserts a Load OmError whose message matches each of `parts`, and that ready() worked afterwards. */
  function assertLoadError(res, ...parts) {
    assert.ok(res.failed, 'the load must fail');
    assert.equal(res.failed.isOmError, true);
    assert.equal(res.failed.kind, 'Load');
    for (const p of parts) assert.match(res.failed.message, p);
    assert.equal(res.retried, true, 'a later ready() loads the module');
  }

  test('a missing .wasm: the path read and the error', () => {
    const missing = join(dir, 'missing', 'onemodel-mt.wasm');
    assertLoadError(loadIn(placing('onemodel-mt.wasm', missing)),
      new RegExp(`^onemodel: cannot read onemodel-mt\\.wasm at ${missing}: ENOENT`),
      /\. Check the path your locateFile gave for onemodel-mt\.wasm$/);
  });

  test('a file that is not WebAssembly: the bytes found instead (an HTML page)', () => {
    const html = join(dir, 'page.wasm');
    writeFileSync(html, '<!doctype html><title>index</title>');
    assertLoadError(loadIn(placing('onemodel-mt.wasm', html)),
      new RegExp(`^onemodel: onemodel-mt\\.wasm from ${html} is not WebAssembly: expected the magic word 00 61 73 6d, `
        + 'found 3c 21 64 6f \\("<!do"\\), an HTML page served in its place\\.'));
    const empty = join(dir, 'empty.wasm');
    writeFileSync(empty, '');
    assertLoadError(loadIn(placing('onemodel-mt.wasm', empty)), /is not WebAssembly: expected the magic word 00 61 73 6d, found no bytes\./);
  });

  test('a truncated .wasm: the compiler\'s error', () => {
    const truncated = join(dir, 'truncated.wasm');
    writeFileSync(truncated, readFileSync(join(DIST, 'onemodel-mt.wasm')).subarray(0, 5000));
    // placed by a path or by a file: URL, the message names the path, as its other messages do
    for (const place of [truncated, pathToFileURL(truncated).href]) {
      assertLoadError(loadIn(placing('onemodel-mt.wasm', place)),
        new RegExp(`^onemodel: cannot compile onemodel-mt\\.wasm from ${truncated} \\(CompileError: `),
        /\. The file is damaged or truncated: install the package again$/);
    }
  });

  test('the other build\'s .wasm: it does not belong to the glue', () => {
    assertLoadError(loadIn(placing('onemodel-mt.wasm', join(DIST, 'onemodel.wasm'))),
      /^onemodel: cannot instantiate onemodel-mt\.wasm from .*\/js\/dist\/onemodel\.wasm \(it has its own memory, not the shared one of the threaded build\)\. /,
      /It does not belong to this onemodel-mt\.mjs: serve the two files of the same package version together$/);
  });

  test('a .wasm whose imports the glue does not have: the linker\'s error', () => {
    // (module (type (func)) (import "env" "om_nope" (func)) (import "env" "memory" (memory 1 1 shared)))
    const alien = join(dir, 'alien.wasm');
    writeFileSync(alien, Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00,
      0x02, 0x1e, 0x02, 0x03, ...Buffer.from('env'), 0x07, ...Buffer.from('om_nope'), 0x00, 0x00,
      0x03, ...Buffer.from('env'), 0x06, ...Buffer.from('memory'), 0x02, 0x03, 0x01, 0x01]));
    assertLoadError(loadIn(placing('onemodel-mt.wasm', alien)),
      new RegExp(`^onemodel: cannot instantiate onemodel-mt\\.wasm from ${alien} \\(LinkError: `),
      /It does not belong to this onemodel-mt\.mjs: serve the two files of the same package version together$/);
  });

  test('a glue from another build (no omWasmUrl): rejects, never hangs', () => {
    // js/ next to a js/dist built before wasm/locate.js: the glue's instantiateWasm hook fails,
    // which Emscripten would only log, leaving ready() pending forever
    const js = join(dir, 'stale', 'js');
    cpSync(join(ROOT, 'js'), js, { recursive: true });
    for (const glue of ['onemodel.mjs', 'onemodel-mt.mjs']) {
      const path = join(js, 'dist', glue);
      const text = readFileSync(path, 'utf8');
      assert.match(text, /Module\["omWasmUrl"\]=/);
      writeFileSync(path, text.replace(/Module\["omWasmUrl"\]=/, 'Module["omStale"]='));
    }
    // each ready() of this copy fails the same way (a retry works in a sound install: above)
    const script = `
      const om = await import(${JSON.stringify(join(js, 'index.js'))});
      const failed = [];
      for (const threads of [undefined, false]) {
        try { await om.ready({ threads }); failed.push(null); } catch (e) { failed.push({ kind: e.kind, isOmError: e instanceof om.OmError, message: e.message }); }
      }
      console.log(JSON.stringify(failed));
    `;
    // the timeout only turns a hang (the bug) into a failure; a sound run takes about a second
    const failed = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: ROOT, timeout: 120_000 }));
    for (const [f, name] of [[failed[0], 'onemodel-mt'], [failed[1], 'onemodel']]) {
      assert.equal(f?.isOmError, true);
      assert.equal(f.kind, 'Load');
      assert.equal(f.message, `onemodel: js/dist/${name}.mjs does not belong to this js/load.js (it has no omWasmUrl). `
        + 'Serve or install the files of one package version together (in a checkout of onemodel, rebuild with `npm run build`)');
    }
  });

  test('a missing worker script: named before any worker starts on it', () => {
    const missing = join(dir, 'missing', 'onemodel-mt.worker.js');
    assertLoadError(loadIn(placing('onemodel-mt.worker.js', missing)),
      new RegExp(`^onemodel: cannot read onemodel-mt\\.worker\\.js at ${missing}: ENOENT`));
  });
});
