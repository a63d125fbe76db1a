// The demo page's static server (web-demo/server.mjs) and the worker's source handling
// (web-demo/src/source.js), in Node. The page itself is tested in Chromium: web-demo.test.mjs.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, symlinkSync } from 'node:fs';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { serve, MOUNTS, pickEncoding } from '../../web-demo/server.mjs';
import { SourceError, declaredTitle, errorPlace, linkModelCode, pointImportsAt } from '../../web-demo/src/source.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SITE = MOUNTS.find(([prefix]) => prefix === '/')[1];

/** A raw GET (or other method) of a path exactly as given (no URL normalisation on our side). */
function get(base, path, method = 'GET', headers = {}) {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('web-demo server', () => {
  let server;
  before(async () => {
    server = await serve({ port: 0 });
  });
  after(() => server.close());

  test('listens on 127.0.0.1 at the port it picked', () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    assert.notEqual(new URL(server.url).port, '0');
  });

  test('serves each mount with its MIME type and the file bytes', async () => {
    const cases = [
      ['/', 'text/html; charset=utf-8', `${SITE}/index.html`],
      ['/main.js', 'text/javascript; charset=utf-8', `${SITE}/main.js`],
      ['/worker.js', 'text/javascript; charset=utf-8', `${SITE}/worker.js`],
      ['/style.css', 'text/css; charset=utf-8', `${SITE}/style.css`],
      ['/favicon.svg', 'image/svg+xml', `${SITE}/favicon.svg`],
      ['/onemodel/index.js', 'text/javascript; charset=utf-8', `${ROOT}js/index.js`],
      ['/onemodel/dist/onemodel.mjs', 'text/javascript; charset=utf-8', `${ROOT}js/dist/onemodel.mjs`],
      ['/onemodel/dist/onemodel.wasm', 'application/wasm', `${ROOT}js/dist/onemodel.wasm`],
      ['/ort/ort.wasm.bundle.min.mjs', 'text/javascript; charset=utf-8', `${ROOT}node_modules/onnxruntime-web/dist/ort.wasm.bundle.min.mjs`],
      ['/zoo/mlp.mjs', 'text/javascript; charset=utf-8', `${ROOT}examples/zoo/mlp.mjs`],
      // a zoo file's relative imports and weights, at the repository's paths (examples/zoo/gpt2.mjs)
      ['/examples/zoo/gpt2.mjs', 'text/javascript; charset=utf-8', `${ROOT}examples/zoo/gpt2.mjs`],
      ['/examples/transformers/gpt2.mjs', 'text/javascript; charset=utf-8', `${ROOT}examples/transformers/gpt2.mjs`],
      ['/tests/js/fixtures/transformers/gpt2.safetensors', 'application/octet-stream', `${ROOT}tests/js/fixtures/transformers/gpt2.safetensors`],
    ];
    for (const [path, type, file] of cases) {
      const res = await get(server.url, path);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers['content-type'], type, path);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', path);
      assert.ok(res.body.equals(readFileSync(file)), `${path}: the bytes of ${file}`);
    }
    for (const path of ['/tests/js/fixtures/pytorch/cnn.json', '/tests/js/transformers-ports.test.mjs', '/tests/js/fixtures/transformers/../torchvision/vit.json']) {
      assert.equal((await get(server.url, path)).status, 404, `${path}: only the transformers fixtures are served`);
    }
    const wasm = await get(server.url, '/ort/ort-wasm-simd-threaded.wasm', 'HEAD');
    assert.equal(wasm.status, 200);
    assert.equal(wasm.headers['content-type'], 'application/wasm');
    assert.equal(Number(wasm.headers['content-length']), readFileSync(`${ROOT}node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm`).length);
    assert.equal(wasm.body.length, 0, 'HEAD sends no body');
  });

  test('compresses text and .wasm for a client that accepts it: brotli first, else gzip; Vary on every compressible type', async () => {
    const wasm = readFileSync(`${ROOT}js/dist/onemodel.wasm`);
    const cases = [
      ['gzip, deflate, br', 'br', brotliDecompressSync],
      ['gzip', 'gzip', gunzipSync],
      ['br;q=0, gzip;q=0.5', 'gzip', gunzipSync],
      ['*', 'br', brotliDecompressSync],
    ];
    for (const [accept, encoding, decode] of cases) {
      for (const [path, file] of [['/onemodel/dist/onemodel.wasm', wasm], ['/main.js', readFileSync(`${SITE}/main.js`)]]) {
        const res = await get(server.url, path, 'GET', { 'Accept-Encoding': accept });
        assert.equal(res.headers['content-encoding'], encoding, `${path} for ${accept}`);
        assert.equal(res.headers.vary, 'Accept-Encoding', path);
        assert.equal(Number(res.headers['content-length']), res.body.length, path);
        assert.ok(res.body.length < file.length * 0.6, `${path} for ${accept}: ${res.body.length} of ${file.length} bytes`);
        assert.ok(decode(res.body).equals(file), `${path} for ${accept}: the file's bytes`);
      }
    }
    const head = await get(server.url, '/onemodel/dist/onemodel.wasm', 'HEAD', { 'Accept-Encoding': 'gzip' });
    assert.equal(head.headers['content-encoding'], 'gzip');
    const gzipped = (await get(server.url, '/onemodel/dist/onemodel.wasm', 'GET', { 'Accept-Encoding': 'gzip' })).body;
    assert.equal(Number(head.headers['content-length']), gzipped.length, 'HEAD: the length of what GET sends');
    assert.equal(head.body.length, 0);
    for (const accept of [undefined, 'identity', 'gzip;q=0, br;q=0', 'deflate']) {
      const res = await get(server.url, '/main.js', 'GET', accept === undefined ? {} : { 'Accept-Encoding': accept });
      assert.equal(res.headers['content-encoding'], undefined, String(accept));
      assert.equal(res.headers.vary, 'Accept-Encoding');
      assert.ok(res.body.equals(readFileSync(`${SITE}/main.js`)), String(accept));
    }
    const svg = await get(server.url, '/favicon.svg', 'GET', { 'Accept-Encoding': 'br' });
    assert.equal(svg.headers['content-encoding'], 'br', 'an SVG is text');
    assert.deepEqual(['gzip, br', 'x-gzip', 'BR;Q=1'].map((h) => pickEncoding(h)), ['br', null, 'br']);
  });

  test('nothing outside a mount: dot segments, encoded slashes and backslashes, NUL, bad escapes', async () => {
    const paths = [
      '/../package.json',
      '/%2e%2e/%2e%2e/package.json',
      '/zoo/..%2f..%2fpackage.json',
      '/zoo/%2e%2e%2f%2e%2e%2fpackage.json',
      '/onemodel/..%2fpackage.json',
      '/onemodel/dist/..%2f..%2fpackage.json',
      '/ort/..%2f..%2f..%2fpackage.json',
      '/zoo/..%5c..%5cpackage.json',
      '/index.html%00.png',
      '/%E0%A4%A',
      '/onemodel/dist',
      '/onemodel/',
    ];
    for (const path of paths) {
      const res = await get(server.url, path);
      assert.equal(res.status, 404, path);
      assert.equal(res.body.toString(), 'not found\n', path);
    }
  });

  test('a symlink out of a mount is not followed', async () => {
    const links = [[`${SITE}/escape-dir`, `${ROOT}examples`], [`${SITE}/escape-file.json`, `${ROOT}package.json`]];
    try {
      for (const [link, target] of links) symlinkSync(target, link);
      for (const path of ['/escape-dir/zoo/mlp.mjs', '/escape-file.json']) {
        assert.equal((await get(server.url, path)).status, 404, path);
      }
    } finally {
      for (const [link] of links) rmSync(link, { force: true });
    }
  });

  test('only GET and HEAD', async () => {
    const res = await get(server.url, '/', 'POST');
    assert.equal(res.status, 405);
    assert.equal(res.headers.allow, 'GET, HEAD');
    assert.equal(res.body.toString(), 'method not allowed\n');
  });

  test('the command refuses a bad PORT', async () => {
    const err = await promisify(execFile)(process.execPath, [`${ROOT}web-demo/server.mjs`], { env: { ...process.env, PORT: 'eighty' } })
      .then(() => null, (e) => e);
    assert.ok(err, 'the command must fail');
    assert.equal(err.code, 2);
    assert.equal(err.stderr.trim(), 'server: PORT must be an integer in 0..65535, got "eighty"');
  });

  test('close() stops it', async () => {
    const other = await serve({ port: 0 });
    assert.equal((await get(other.url, '/')).status, 200);
    await other.close();
    await assert.rejects(get(other.url, '/'), { code: 'ECONNREFUSED' });
  });
});

describe('web-demo source handling', () => {
  const URL_ = 'http://127.0.0.1:1/onemodel/index.js';
  const EXPORTS = new Set(['tensor', 'randn', 'ready']);

  test('pointImportsAt rewrites only the onemodel specifiers and keeps every line where it was', () => {
    const code = [
      "import * as om from 'onemodel';",
      'import { tensor } from "onemodel";',
      "const s = 'onemodel';",
      "export { randn } from 'onemodel';",
      'export default 1;',
    ].join('\n');
    const out = pointImportsAt(code, URL_, EXPORTS).split('\n');
    assert.deepEqual(out, [
      `import * as om from "${URL_}";`,
      `import { tensor } from "${URL_}";`,
      "const s = 'onemodel';",
      `export { randn } from "${URL_}";`,
      'export default 1;',
    ]);
  });

  test('pointImportsAt refuses any other import and reports a syntax error, each at its place', () => {
    const cases = [
      ["import * as om from 'onemodel';\n\nimport { x } from './helpers.mjs';\n", 'ImportError',
        "a model file may import only 'onemodel' (import * as om from 'onemodel'), not \"./helpers.mjs\"", 3, 19],
      ["import * as om from 'onemodel';\nexport * from 'node:fs';\n", 'ImportError',
        "a model file may import only 'onemodel' (import * as om from 'onemodel'), not \"node:fs\"", 2, 15],
      ["import * as om from 'onemodel';\nconst a = 1;\nconst b = (a + ;\n", 'SyntaxError', 'Unexpected token', 3, 16],
      ["import om from 'onemodel';\n", 'ImportError', "'onemodel' has no export named \"default\" (import * as om from 'onemodel')", 1, 8],
      ["import { tensor, nope as n } from 'onemodel';\n", 'ImportError', "'onemodel' has no export named \"nope\"", 1, 18],
      ["export { randn, zeros as z } from 'onemodel';\n", 'ImportError', "'onemodel' has no export named \"zeros\"", 1, 17],
    ];
    for (const [code, kind, message, line, column] of cases) {
      assert.throws(() => pointImportsAt(code, URL_, EXPORTS), (e) => {
        assert.ok(e instanceof SourceError);
        assert.deepEqual([e.name, e.kind, e.message, e.line, e.column], [kind, kind, message, line, column]);
        return true;
      });
    }
  });

  test('linkModelCode: a zoo file\'s relative imports linked depth first, each module once, import.meta.url its own URL, lines kept', async () => {
    const base = 'http://127.0.0.1:1/examples/zoo/port.mjs';
    const served = {
      'http://127.0.0.1:1/examples/models/net.mjs': "import * as om from 'onemodel';\nimport { act } from './util.mjs';\nexport const here = import.meta.url;\n",
      'http://127.0.0.1:1/examples/models/util.mjs': "export { tensor as act } from 'onemodel';\n",
    };
    const fetched = [];
    const { code, modules } = await linkModelCode([
      "import * as om from 'onemodel';",
      "import { here } from '../models/net.mjs';",
      "import { act } from '../models/util.mjs';",
      "const weights = new URL('../../w.bin', import.meta.url);",
    ].join('\n'), {
      url: URL_, exports: EXPORTS, base,
      fetchText: async (url) => { fetched.push(url); return served[url]; },
      moduleUrl: (text, url) => `blob:${url.split('/').pop()}`,
    });
    assert.deepEqual(fetched, Object.keys(served), 'util.mjs fetched once, though two modules import it');
    assert.deepEqual(modules, [['http://127.0.0.1:1/examples/models/util.mjs', 'blob:util.mjs'], ['http://127.0.0.1:1/examples/models/net.mjs', 'blob:net.mjs']]);
    assert.deepEqual(code.split('\n'), [
      `import * as om from "${URL_}";`,
      'import { here } from "blob:net.mjs";',
      'import { act } from "blob:util.mjs";',
      `const weights = new URL('../../w.bin', "${base}");`,
    ]);

    // the dependency as linked: its own relative import and its own import.meta.url
    const net = await linkModelCode(served['http://127.0.0.1:1/examples/models/net.mjs'], {
      url: URL_, exports: EXPORTS, base: 'http://127.0.0.1:1/examples/models/net.mjs', fetchText: async (url) => served[url], moduleUrl: () => 'blob:u',
    });
    assert.equal(net.code, `import * as om from "${URL_}";\nimport { act } from "blob:u";\nexport const here = "http://127.0.0.1:1/examples/models/net.mjs";\n`);

    // code of the person's own (no base): only 'onemodel', import.meta.url left as it is
    const own = await linkModelCode("import * as om from 'onemodel';\nconst u = import.meta.url;\n", { url: URL_, exports: EXPORTS, fetchText: assert.fail, moduleUrl: assert.fail });
    assert.deepEqual(own, { code: `import * as om from "${URL_}";\nconst u = import.meta.url;\n`, modules: [] });
  });

  test('linkModelCode: a module that cannot be fetched, a bad import or a syntax error in it, a cycle, a bare specifier: an ImportError at the import', async () => {
    const base = 'http://127.0.0.1:1/examples/zoo/port.mjs';
    const served = {
      'http://127.0.0.1:1/examples/bad/syntax.mjs': 'export const a = (1 + ;\n',
      'http://127.0.0.1:1/examples/bad/fs.mjs': "\nimport { readFile } from 'node:fs';\n",
      'http://127.0.0.1:1/examples/bad/a.mjs': "import './b.mjs';\n",
      'http://127.0.0.1:1/examples/bad/b.mjs': "import './a.mjs';\n",
    };
    const fetchText = async (url) => {
      if (!served[url]) throw new Error('HTTP 404');
      return served[url];
    };
    const cases = [
      ["import * as om from 'onemodel';\nimport { x } from './missing.mjs';\n",
        'cannot import http://127.0.0.1:1/examples/zoo/missing.mjs: HTTP 404', 2, 19],
      ["import { a } from '../bad/syntax.mjs';\n",
        'cannot import http://127.0.0.1:1/examples/bad/syntax.mjs: SyntaxError: Unexpected token (http://127.0.0.1:1/examples/bad/syntax.mjs:1:23)', 1, 19],
      ["\n\nimport '../bad/fs.mjs';\n",
        'cannot import http://127.0.0.1:1/examples/bad/fs.mjs: ImportError: a model file may import only \'onemodel\' and modules by a relative URL (\'./x.mjs\', \'../x.mjs\'), not "node:fs" (http://127.0.0.1:1/examples/bad/fs.mjs:2:26)', 3, 8],
      ["import '../bad/a.mjs';\n",
        'cannot import http://127.0.0.1:1/examples/bad/a.mjs: ImportError: cannot import http://127.0.0.1:1/examples/bad/b.mjs: ImportError: cannot import http://127.0.0.1:1/examples/bad/a.mjs: an import cycle (a model file\'s modules must import each other in one direction) (http://127.0.0.1:1/examples/bad/b.mjs:1:8) (http://127.0.0.1:1/examples/bad/a.mjs:1:8)', 1, 8],
      ["import * as om from 'onemodel';\nimport x from 'lodash';\n",
        'a model file may import only \'onemodel\' and modules by a relative URL (\'./x.mjs\', \'../x.mjs\'), not "lodash"', 2, 15],
    ];
    for (const [code, message, line, column] of cases) {
      await assert.rejects(linkModelCode(code, { url: URL_, exports: EXPORTS, base, fetchText, moduleUrl: () => 'blob:x' }), (e) => {
        assert.ok(e instanceof SourceError, e?.stack);
        assert.deepEqual([e.kind, e.message, e.line, e.column], ['ImportError', message, line, column]);
        return true;
      });
    }
  });

  test('declaredTitle reads the title of export default { title } without running the file, else null', () => {
    const file = (title) => `import * as om from 'onemodel';\nexport default {\n  model: null,\n  title: ${title},\n};\n`;
    assert.equal(declaredTitle(file("'ResNet · \\'18\\''")), "ResNet · '18'");
    assert.equal(declaredTitle(file('"MLP"')), 'MLP');
    assert.equal(declaredTitle(file('`GPT\\u0021`')), 'GPT!');
    assert.equal(declaredTitle("export default { 'title': 'quoted key' };"), 'quoted key');
    assert.equal(declaredTitle("export default { title: 'first', ...{}, title: 'last' };"), 'last', 'the one the object keeps');
    // what it cannot read without running the code: the page lists the file by its name
    for (const code of [
      file('`GPT ${2}`'),                       // a template with a substitution
      file('name'),                             // a variable
      file('42'),                               // not a string
      "export default { ['title']: 'computed' };",
      "const spec = { title: 'a' };\nexport default spec;",
      "const base = { title: 'b' };\nexport default { title: 'a', ...base };", // the spread's title wins when it runs
      'export default { model: null };',        // no title
      "export const title = 'not the default';",
      "export default { title: 'unclosed };",  // a syntax error
    ]) assert.equal(declaredTitle(code), null, code);
  });

  test('errorPlace finds the innermost frame in the module, in V8 and Firefox stacks', () => {
    const url = 'blob:http://127.0.0.1:8080/0b1e-42';
    const v8 = {
      stack: `TraceError: read: ...\n    at lastError (http://127.0.0.1:8080/onemodel/runtime.js:107:18)\n    at Net.forward (${url}:7:7)\n    at ${url}:30:12\n    at Module.trace (http://127.0.0.1:8080/onemodel/trace.js:404:10)`,
    };
    assert.deepEqual(errorPlace(v8, url), { line: 7, column: 7 });
    const firefox = { stack: `lastError@http://127.0.0.1:8080/onemodel/runtime.js:107:18\nforward@${url}:12:5\n` };
    assert.deepEqual(errorPlace(firefox, url), { line: 12, column: 5 });
    assert.equal(errorPlace({ stack: 'Error: x\n    at f (http://127.0.0.1:8080/main.js:1:1)' }, url), null);
    assert.equal(errorPlace('not an error', url), null);
  });
});
