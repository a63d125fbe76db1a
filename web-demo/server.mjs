// The demo page's static file server: 127.0.0.1 only, GET/HEAD only, a few fixed mounts, no
// directory listings, nothing outside a mount (the path is resolved and checked, symlinks
// included). Text and .wasm files go compressed (brotli, else gzip) to a client that accepts it.
//
//   node web-demo/server.mjs         serves on http://127.0.0.1:$PORT/ (default 8080)
//   const { url, close } = await serve({ port: 0 });   (tests, examples/start.mjs)
//   serve({ port: 0, mounts: [['/', dir]] })            other directories (tests/js/package.test.mjs)
//
// Mounts (URL prefix -> directory):
//   /           web-demo/dist/      the built page (tools/build.sh runs web-demo/build.mjs)
//   /onemodel/  the onemodel package's js/ (found as a user's page finds it: by resolving
//               'onemodel'), so the worker and the user's model code import one module
//   /ort/       onnxruntime-web's dist/ (its .mjs loaders and .wasm files)
//   /zoo/       examples/zoo/ (the model files, loaded as text into the editor)
//   /examples/  examples/, and /tests/js/fixtures/transformers/ that directory: at the paths the
//               repository gives them, so the modules a zoo file imports by relative URL and the
//               weights it fetches relative to import.meta.url are where they are in Node
//               (examples/zoo/gpt2.mjs: ../transformers/gpt2.mjs and the GPT-2 checkpoint)
import { createServer } from 'node:http';
import { createReadStream, existsSync } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlibConstants, gzip } from 'node:zlib';
import { dirname, extname, join, relative, isAbsolute, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(HERE);

/** The directory holding the module a bare specifier resolves to from here. */
const packageDir = (specifier) => dirname(fileURLToPath(import.meta.resolve(specifier)));

export const MOUNTS = [
  ['/onemodel/', packageDir('onemodel')],
  ['/ort/', packageDir('onnxruntime-web/wasm')],
  ['/zoo/', join(ROOT, 'examples', 'zoo')],
  ['/examples/', join(ROOT, 'examples')],
  ['/tests/js/fixtures/transformers/', join(ROOT, 'tests', 'js', 'fixtures', 'transformers')],
  ['/', join(HERE, 'dist')],
];

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

/** The MIME type of a file name (application/octet-stream when unknown). */
export function mimeType(name) {
  return TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream';
}

/** True when `path` is `dir` or inside it (both absolute, resolved). */
function inside(dir, path) {
  const r = relative(dir, path);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r) && !r.split(sep).includes('..'));
}

/**
 * The file a URL path names, or null: the first matching mount prefix wins (list longer prefixes
 * first), percent-decoding happens once, and the resolved real path must stay inside the mount's
 * real directory.
 */
export async function resolveFile(urlPath, mounts = MOUNTS) {
  let path;
  try {
    path = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (path.includes('\0') || path.includes('\\')) return null;
  if (path.endsWith('/')) path += 'index.html';
  for (const [prefix, dir] of mounts) {
    if (!path.startsWith(prefix)) continue;
    const rest = path.slice(prefix.length);
    const candidate = join(dir, rest);
    if (!inside(dir, candidate)) return null;
    try {
      const [realDir, real] = await Promise.all([realpath(dir), realpath(candidate)]);
      if (!inside(realDir, real)) return null;
      const st = await stat(real);
      return st.isFile() ? { path: real, size: st.size, mtime: st.mtimeMs } : null;
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * The encodings this server compresses with, best first, and how: brotli at quality 5 (measured
 * on onemodel.wasm: 35 times faster than 11, the default, for 12% more bytes) and gzip at zlib's
 * default level. Each file is compressed once (cached).
 */
const ENCODINGS = [
  ['br', promisify((buf, cb) => brotliCompress(buf, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 5 } }, cb))],
  ['gzip', promisify(gzip)],
];

/** Types worth compressing: text and WebAssembly (images are compressed already). */
const compressible = (type) => /^(text\/|application\/(json|wasm)|image\/svg)/.test(type);

/**
 * The encoding to send from an Accept-Encoding header: the first of ENCODINGS it accepts (a
 * name listed without q=0, or '*'), else null (identity).
 */
export function pickEncoding(header = '') {
  const accepted = new Map(header.split(',').map((part) => {
    const [name, ...params] = part.trim().toLowerCase().split(';').map((x) => x.trim());
    const q = params.find((p) => p.startsWith('q='));
    return [name, q === undefined ? 1 : Number(q.slice(2))];
  }));
  for (const [name] of ENCODINGS) {
    const q = accepted.get(name) ?? accepted.get('*') ?? 0;
    if (q > 0) return name;
  }
  return null;
}

/** Compressed files by path, encoding, size and mtime (a file changed on disk is compressed again). */
const compressedCache = new Map();

async function compressed(file, encoding) {
  const key = `${encoding}:${file.size}:${file.mtime}:${file.path}`;
  let body = compressedCache.get(key);
  if (!body) {
    body = await ENCODINGS.find(([name]) => name === encoding)[1](await readFile(file.path));
    compressedCache.set(key, body);
  }
  return body;
}

function send(res, status, text) {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** The headers that make a page cross-origin isolated (its workers share memory: threads). */
const ISOLATION = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

async function handle(req, res, mounts, isolated) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return send(res, 405, 'method not allowed\n');
  }
  let pathname;
  try {
    pathname = new URL(req.url, 'http://localhost').pathname;
  } catch {
    return send(res, 400, 'bad request\n');
  }
  const file = await resolveFile(pathname, mounts);
  if (!file) return send(res, 404, 'not found\n');
  const type = mimeType(file.path);
  const encoding = compressible(type) ? pickEncoding(req.headers['accept-encoding']) : null;
  const body = encoding ? await compressed(file, encoding) : null;
  res.writeHead(200, {
    'Content-Type': type,
    'Content-Length': body ? body.length : file.size,
    'Cache-Control': 'no-cache',
    'X-Content-Type-Options': 'nosniff',
    ...(compressible(type) ? { Vary: 'Accept-Encoding' } : {}),
    ...(encoding ? { 'Content-Encoding': encoding } : {}),
    ...(isolated ? ISOLATION : {}),
  });
  if (req.method === 'HEAD') return res.end();
  if (body) return res.end(body);
  createReadStream(file.path).on('error', () => res.destroy()).pipe(res);
}

/**
 * Starts the server on host:port (port 0 picks a free one) and resolves once it listens:
 * { url, close() }, url ending in '/', close() resolving when the server has stopped. It serves
 * `mounts` ([URL prefix, directory] pairs), by default the demo page's. With `isolated` (the
 * default) every response carries COOP same-origin and COEP require-corp: the page is
 * cross-origin isolated, so onemodel loads its threaded build (js/runtime.js); everything the
 * demo page loads comes from this origin.
 */
export async function serve({ host = '127.0.0.1', port = 8080, mounts = MOUNTS, isolated = true } = {}) {
  if (mounts === MOUNTS && !existsSync(join(HERE, 'dist', 'index.html'))) {
    throw new Error('web-demo/dist/index.html is missing: build the page first (`npm run build`)');
  }
  const server = createServer((req, res) => {
    handle(req, res, mounts, isolated).catch(() => (res.headersSent ? res.destroy() : send(res, 500, 'internal error\n')));
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port: bound } = server.address();
  return {
    url: `http://${host}:${bound}/`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/**
 * The port the commands serve on: PORT from env (default 8080). Throws an Error naming the bad
 * value unless it is an integer in 0..65535 (0: a free one).
 */
export function portFromEnv(env = process.env) {
  const port = env.PORT === undefined ? 8080 : Number(env.PORT);
  if (env.PORT?.trim() === '' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be an integer in 0..65535, got ${JSON.stringify(env.PORT)}`);
  }
  return port;
}

/** Serves the page on `port` and prints the line with its URL (this command and `npm start`). */
export async function serveAndPrint(port) {
  const { url } = await serve({ port });
  console.log(`onemodel demo page: ${url}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === (await realpath(process.argv[1]).catch(() => ''))) {
  let port;
  try {
    port = portFromEnv();
  } catch (e) {
    console.error(`server: ${e.message}`);
    process.exit(2);
  }
  await serveAndPrint(port);
}
