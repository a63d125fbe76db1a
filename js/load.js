// Loading the WebAssembly module (ready()'s first part): which build, where its files are, and
// every way that can fail, as an OmError of kind 'Load' naming the URL tried, what came back and
// the fix for the situation recognised. The .wasm is fetched (read, in Node.js), checked and
// compiled here, not by Emscripten's glue, whose own failures end in an abort that says neither
// ("Aborted(both async and sync fetching of the wasm failed)", "Aborted(CompileError: ...)").
import { OmError } from './errors.js';

export const isNode = typeof process === 'object' && process !== null && !!process.versions?.node;

/**
 * Imports a Node.js built-in (only under Node). The name is a variable and the comments tell
 * Vite and webpack to leave it alone, so that bundling the package for a browser needs no
 * configuration (esbuild and Vite would otherwise fail on, or warn about, a literal 'node:fs').
 */
export const nodeBuiltin = (name) => import(/* @vite-ignore */ /* webpackIgnore: true */ name);

/** Where the package's install guide is, as a user finds it in node_modules (the package ships docs/). */
const INSTALL = 'onemodel/docs/install.md';

/**
 * The threaded build's glue, as a URL computed at run time (not a literal, which Vite would turn
 * into an asset and other bundlers would bundle): a bundle gets only the single-thread build
 * unless the threaded files are copied beside it (docs/install.md).
 */
const THREADED_GLUE = './dist/onemodel-mt.mjs';

/** js/dist/, where the package's own files are (a variable: a literal would make Vite bundle all of it). */
const DIST = './dist/';

/**
 * Whether onemodel's code runs from a bundle (a bundler put js/load.js in a file of another name),
 * where the threaded build is only where the page copied it: a page asks for it with
 * threads: true, so that one that did not copy it does not fetch it in vain (a 404 in the console).
 */
const BUNDLED = !new URL(import.meta.url).pathname.endsWith('/load.js');

/** The first bytes of every WebAssembly module: "\0asm". */
const MAGIC = [0x00, 0x61, 0x73, 0x6d];

/** An OmError of kind 'Load': "onemodel: <what>[. <fix>]". */
const loadError = (what, fix = '') => new OmError('Load', `onemodel: ${what}${fix ? `. ${fix}` : ''}`);

/** The cores the host reports (Node: os.availableParallelism; a page: navigator.hardwareConcurrency). */
async function cores() {
  if (isNode) {
    const os = await nodeBuiltin('node:os');
    return os.availableParallelism?.() ?? os.cpus().length;
  }
  return globalThis.navigator?.hardwareConcurrency ?? 1;
}

/** The options ready() takes. */
const READY_OPTIONS = ['wasmUrl', 'locateFile', 'threads'];

/**
 * ready()'s options, checked (an InvalidArgument OmError names a bad one), as loadModule takes
 * them: { threads: true | false | undefined, locateFile: function | undefined }.
 */
export function readOptions(options) {
  if (options === undefined) return { threads: undefined, locateFile: undefined };
  if (options === null || typeof options !== 'object') {
    throw new OmError('InvalidArgument', `ready: options must be an object, got ${options === null ? 'null' : typeof options}`);
  }
  // an option ready() does not have (a typo: wasmURL) would otherwise be ignored, and the load
  // would go where the user did not ask
  for (const k of Object.keys(options)) {
    if (!READY_OPTIONS.includes(k)) {
      const near = READY_OPTIONS.find((n) => n.toLowerCase() === k.toLowerCase());
      throw new OmError('InvalidArgument', `ready: unknown option '${k}' (expected ${READY_OPTIONS.join(', ')})`
        + (near ? `; did you mean '${near}'?` : ''));
    }
  }
  const { wasmUrl, locateFile, threads } = options;
  if (threads !== undefined && typeof threads !== 'boolean') {
    throw new OmError('InvalidArgument', `ready: threads must be true or false, got ${typeof threads}`);
  }
  if (locateFile !== undefined && typeof locateFile !== 'function') {
    throw new OmError('InvalidArgument', `ready: locateFile must be a function (file name, directory) => URL, got ${typeof locateFile}`);
  }
  if (wasmUrl === undefined) return { threads, locateFile };
  if (typeof wasmUrl !== 'string' && typeof wasmUrl?.href !== 'string') {
    throw new OmError('InvalidArgument', `ready: wasmUrl must be a string or a URL, got ${typeof wasmUrl}`);
  }
  if (locateFile !== undefined) throw new OmError('InvalidArgument', 'ready: give wasmUrl or locateFile, not both');
  if (isNode || threads === true) {
    throw new OmError('InvalidArgument', 'ready: wasmUrl names the single-thread build\'s onemodel.wasm, which '
      + `${isNode ? 'Node.js does not load' : 'threads: true does not load'}; use locateFile, which places every file`);
  }
  const url = typeof wasmUrl === 'string' ? wasmUrl : wasmUrl.href;
  return { threads: false, locateFile: (file, dir) => (file === 'onemodel.wasm' ? url : dir + file) };
}

/** A URL or path as the messages show it: absolute (resolved against the page). */
function shown(url) {
  try {
    return new URL(url, globalThis.location?.href).href;
  } catch {
    return String(url);
  }
}

/**
 * What to do about a file of the package that was not served at url, for the situation the URL
 * shows: Vite's dev server pre-bundled onemodel (no .wasm in node_modules/.vite/deps/); a bundle
 * without the file copied where the code looks for it (the threaded build's three files in dist/
 * beside the bundle); the package's own js/ not all served; or a locateFile / wasmUrl pointing
 * elsewhere. The threaded glue is placed by no option: without it, the fix is to leave threads out.
 */
function fixFor(url, file, located) {
  if (located) return `Check the URL your locateFile or wasmUrl gave for ${file}`;
  const threaded = file.startsWith('onemodel-mt');
  const instead = file.endsWith('.mjs') ? 'or leave threads out to load the single-thread build'
    : `or give ${BUNDLED ? 'its' : 'the file\'s'} URL: om.ready({ ${file === 'onemodel.wasm' ? 'wasmUrl' : 'locateFile'} })`;
  if (/\/node_modules\/\.vite\/deps\//.test(url)) {
    return 'Vite\'s dev server pre-bundled onemodel into node_modules/.vite/deps/, where there is no '
      + `${file}: leave it out of pre-bundling with \`optimizeDeps: { exclude: ['onemodel'] }\` in vite.config.js (see ${INSTALL}#vite)`;
  }
  if (BUNDLED && threaded) {
    return `A bundler put onemodel's code in a file with no dist/ beside it holding the threaded build: copy `
      + `node_modules/onemodel/js/dist/onemodel-mt.{mjs,wasm,worker.js} to ${new URL('./', shown(url)).href} (see ${INSTALL}#threads-in-a-page), ${instead}`;
  }
  if (BUNDLED) {
    return `A bundler put onemodel's code in a file with no ${file} beside it: copy `
      + `node_modules/onemodel/js/dist/${file} there (see ${INSTALL}#esbuild), ${instead}`;
  }
  return `The package's js/dist/${file} is not served there: serve the package's whole js/ directory (see ${INSTALL}), ${instead}`;
}

/** The first bytes as hex and as text: 3c 21 64 6f ("<!do"). */
function head(bytes) {
  const first = [...bytes.subarray(0, 4)];
  const text = String.fromCharCode(...first.map((b) => (b >= 0x20 && b < 0x7f ? b : 0x2e)));
  return first.length ? `${first.map((b) => b.toString(16).padStart(2, '0')).join(' ')} (${JSON.stringify(text)})` : 'no bytes';
}

/** A file of the package (a .wasm, the worker script) fetched from url: its response, or a Load error. */
async function fetchFile(url, file, located) {
  let res;
  try {
    res = await fetch(url, { credentials: 'same-origin' });
  } catch (e) {
    throw loadError(`cannot load ${file} from ${shown(url)}: the fetch failed (${e?.message ?? e})`,
      'The server is unreachable, or the URL is on another origin that does not allow it (CORS), or the page\'s '
      + 'Content-Security-Policy (connect-src) blocks it');
  }
  if (!res.ok) {
    throw loadError(`cannot load ${file} from ${shown(url)}: HTTP ${res.status} (${res.headers.get('content-type') ?? 'no content type'})`,
      fixFor(url, file, located));
  }
  return res;
}

/**
 * The .wasm's bytes, checked to be WebAssembly (the magic word), and where they came from as the
 * messages name it (in Node.js the path); or a Load error saying what came instead.
 */
async function wasmBytes(url, file, located) {
  let bytes, what, where = shown(url);
  if (isNode) {
    const path = String(url).startsWith('file:') ? new URL(url) : url;
    const { fileURLToPath } = await nodeBuiltin('node:url');
    what = where = path instanceof URL ? fileURLToPath(path) : String(path);
    try {
      bytes = new Uint8Array(await (await nodeBuiltin('node:fs/promises')).readFile(path));
    } catch (e) {
      throw loadError(`cannot read ${file} at ${what}: ${e?.message ?? e}`, located
        ? `Check the path your locateFile gave for ${file}`
        : 'The installed package is incomplete: install it again (in a checkout of onemodel, `npm run build` makes js/dist/)');
    }
  } else {
    const res = await fetchFile(url, file, located);
    what = `${shown(url)} (HTTP ${res.status}, ${res.headers.get('content-type') ?? 'no content type'})`;
    bytes = new Uint8Array(await res.arrayBuffer());
  }
  if (MAGIC.every((b, i) => bytes[i] === b)) return { bytes, where, what };
  const html = bytes[0] === 0x3c; // '<': a page (a server's fallback for a path it does not have)
  throw loadError(`${file} from ${what} is not WebAssembly: expected the magic word 00 61 73 6d, found ${head(bytes)}`
    + (html ? ', an HTML page served in its place' : ''), isNode ? (located
    ? `Check the path your locateFile gave for ${file}` : 'The installed package is damaged: install it again')
    : fixFor(url, file, located));
}

/**
 * Compiles checked bytes; a page whose Content-Security-Policy forbids WebAssembly gets that fix.
 * what is where the bytes came from as wasmBytes names it (a page: the URL, HTTP status and
 * content type), so that the message shows the file arrived whole and only the compile was refused.
 */
async function compile(bytes, file, what) {
  try {
    return await WebAssembly.compile(bytes);
  } catch (e) {
    const message = `${e?.name ?? 'Error'}: ${e?.message ?? e}`;
    if (/Content.Security.Policy|unsafe-eval/i.test(message)) {
      throw loadError(`the page's Content-Security-Policy does not allow WebAssembly to compile ${file} from ${what} (${message})`,
        'Add \'wasm-unsafe-eval\' to its script-src directive');
    }
    throw loadError(`cannot compile ${file} from ${what} (${message})`, 'The file is damaged or truncated: install the package again');
  }
}

/**
 * The threaded build's worker script, checked before the glue starts workers on it (a worker
 * that fails to load would leave ready() waiting for it forever).
 */
async function checkWorker(url, located) {
  const file = 'onemodel-mt.worker.js';
  if (isNode) {
    const { access } = await nodeBuiltin('node:fs/promises');
    try {
      await access(url);
    } catch (e) {
      throw loadError(`cannot read ${file} at ${url}: ${e?.message ?? e}`, located
        ? `Check the path your locateFile gave for ${file}` : 'The installed package is incomplete: install it again');
    }
    return;
  }
  const res = await fetchFile(url, file, located);
  const type = res.headers.get('content-type') ?? '';
  if (!/javascript|ecmascript/i.test(type)) {
    throw loadError(`${file} from ${shown(url)} is served as ${type || 'no content type'}, not as a script`, fixFor(url, file, located));
  }
}

/**
 * What the server answers for url, as a failed import's message shows it (a browser's own says
 * only "Failed to fetch dynamically imported module"): ": HTTP 404 (text/plain)", " (HTTP 200,
 * text/html)" when it was served but would not import, or "" when the fetch itself fails.
 */
async function answer(url) {
  try {
    const res = await fetch(url, { credentials: 'same-origin' });
    await res.body?.cancel();
    const type = res.headers.get('content-type') ?? 'no content type';
    return res.ok ? ` (HTTP ${res.status}, ${type})` : `: HTTP ${res.status} (${type})`;
  } catch {
    return '';
  }
}

/**
 * A warning of Emscripten's glue as the page's console shows it. Its one warning that links
 * outside the package (the threaded build's main thread waiting for the pool's threads, which
 * Emscripten does by spinning, since a page's main thread cannot sleep) is said in the package's
 * terms: the pool's workers are all started before ready() resolves, so the wait lasts only as
 * long as the op, as the single-thread build's computing on the main thread would.
 */
export function glueWarning(text) {
  if (!String(text).startsWith('Blocking on the main thread')) return text;
  return 'onemodel: the threaded build computes on the page\'s main thread with its worker threads, and the page does not '
    + `respond until each op ends; compute in a module Worker to keep the page responsive (see ${INSTALL}#threads-in-a-page)`;
}

/**
 * Imports one build's glue and starts it, compiling the .wasm here (Module.instantiateWasm,
 * from the URL the glue computes: wasm/locate.js). Resolves to the Emscripten module.
 */
async function instantiate(threaded, locateFile) {
  const name = `onemodel${threaded ? '-mt' : ''}`;
  const glueUrl = threaded ? new URL(THREADED_GLUE, import.meta.url).href : null;
  let factory;
  try {
    factory = (threaded
      ? await import(/* @vite-ignore */ /* webpackIgnore: true */ glueUrl)
      : await import('./dist/onemodel.mjs')).default;
  } catch (e) {
    const served = threaded && !isNode ? await answer(glueUrl) : '';
    throw loadError(`cannot import ${glueUrl ? shown(glueUrl) : `js/dist/${name}.mjs`}${served} (${e?.message ?? e})`, threaded && !isNode
      ? fixFor(glueUrl, `${name}.mjs`, false) : 'The package is incomplete (in a checkout of onemodel, build it with `npm run build`)');
  }
  // printErr: the glue's warnings, in the package's terms (its default, console.warn, in Node.js writes to stderr)
  const opts = isNode ? { locateFile } : { locateFile, printErr: (text) => console.warn(glueWarning(text)) };
  if (threaded) {
    // the threads the kernels may use: the cores, up to 4 (om.setNumThreads caps at it)
    opts.omThreadCap = Math.max(1, Math.min(4, await cores()));
    // the pool, started with the module: the other threads, and at least one, since Emscripten
    // 3.1.6's glue starts the module once each of the pool's workers has loaded and, with none,
    // never starts it (ready() would not settle on a 1-core machine)
    opts.omWorkers = Math.max(1, opts.omThreadCap - 1);
    let dir = new URL('./', glueUrl).href;
    if (isNode) { // the glue's Node code wants CommonJS's require and __dirname (wasm/node-require.js)
      const { createRequire } = await nodeBuiltin('node:module');
      const { fileURLToPath } = await nodeBuiltin('node:url');
      opts.omRequire = createRequire(import.meta.url);
      opts.omDirname = fileURLToPath(dir);
      dir = `${opts.omDirname}/`.replace(/\/+$/, '/');
    }
    const worker = `${name}.worker.js`;
    const workerUrl = locateFile ? locateFile(worker, dir) : isNode ? `${dir}${worker}` : new URL(worker, glueUrl).href;
    await checkWorker(workerUrl, !!locateFile);
  }
  let failed;
  const failure = new Promise((_, reject) => { failed = reject; });
  opts.instantiateWasm = (imports, receive) => {
    // a glue built without wasm/locate.js (another version's js/dist next to this js/) has no
    // omWasmUrl; Emscripten swallows an exception thrown here and never settles, so reject
    if (typeof opts.omWasmUrl !== 'function') {
      failed(loadError(`js/dist/${name}.mjs does not belong to this js/load.js (it has no omWasmUrl)`,
        'Serve or install the files of one package version together (in a checkout of onemodel, rebuild with `npm run build`)'));
      return {};
    }
    const url = opts.omWasmUrl();
    (async () => {
      const { bytes, where, what } = await wasmBytes(url, `${name}.wasm`, !!locateFile);
      const module = await compile(bytes, `${name}.wasm`, what);
      const mismatch = (why) => loadError(`cannot instantiate ${name}.wasm from ${where} (${why})`,
        `It does not belong to this ${name}.mjs: serve the two files of the same package version together`);
      // the other build's .wasm links (its imports are a subset) but runs on a memory the glue does not see
      if (WebAssembly.Module.imports(module).some((i) => i.kind === 'memory') !== threaded) {
        throw mismatch(threaded ? 'it has its own memory, not the shared one of the threaded build' : 'it imports a shared memory');
      }
      let instance;
      try {
        instance = await WebAssembly.instantiate(module, imports);
      } catch (e) {
        throw mismatch(`${e?.name}: ${e?.message ?? e}`);
      }
      receive(instance, module);
    })().catch(failed);
    return {};
  };
  let mod;
  try {
    mod = await Promise.race([factory(opts), failure]);
  } catch (e) {
    // the workers the glue started for this module (opts is the module) would wait for it forever
    for (const w of opts.PThread?.unusedWorkers ?? []) w.terminate();
    if (e instanceof OmError) throw e;
    throw loadError(`${name} failed to start (${e?.message ?? e})`);
  }
  mod.omThreadCap = threaded ? opts.omThreadCap : 1;
  // idle workers must not keep Node running (they sleep in Atomics.wait between jobs)
  if (isNode && threaded) for (const w of mod.PThread.unusedWorkers) w.unref();
  return mod;
}

/**
 * Loads the build ready()'s options (from readOptions) ask for: with threads (Emscripten pthreads on shared memory)
 * in Node.js and in a cross-origin-isolated page or worker, unless threads is false, or left out
 * in a bundle (BUNDLED); elsewhere, or in a page where the threaded files are missing, the
 * single-thread build. threads: true in a page that cannot share memory, or without the threaded
 * files, is a Load error.
 */
export async function loadModule({ threads, locateFile }) {
  const canShareMemory = isNode || globalThis.crossOriginIsolated === true;
  if (threads === true && !canShareMemory) {
    throw loadError('threads: true needs a cross-origin-isolated page (crossOriginIsolated is false, so there is no shared memory)',
      'Serve the page with the headers Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp '
      + `(see ${INSTALL}#threads-in-a-page), or leave threads out to load the single-thread build`);
  }
  if (canShareMemory && (threads === true || (threads === undefined && (isNode || !BUNDLED)))) {
    try {
      return await instantiate(true, locateFile);
    } catch (e) {
      if (isNode || threads === true) throw e; // Node: the package ships it, so a failure is a broken install
    }
  }
  return instantiate(false, locateFile);
}
