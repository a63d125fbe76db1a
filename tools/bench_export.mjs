// Exporting a GPT-2-small-size model: what om.trace and each way of writing the .onnx cost in
// time and memory, and how the file compares with the model's unique bytes.
//
//   npm run bench:export                   bootstrap + build + this script (node --expose-gc)
//   node --expose-gc tools/bench_export.mjs [layers]   fewer layers for a quick run (default 12)
//
// The model: examples/zoo/gpt.mjs's decoder at GPT-2 small's size (vocab 50257, d 768, 12 heads,
// context 1024, 12 blocks; 124M parameters, LM head tied to the token embedding), every block the
// zoo's nn.MultiheadAttention block, which registers its own [1024, 1024] causal-mask buffer.
// Traced once at batch 2 x 32 tokens with both axes symbolic (so the masks are initializers),
// then written by toOnnx(), toBlob() and saveOnnx() (one file under build/bench/), each once:
// these are hundreds of MB on a shared machine.
//
// Memory: "above the model" is measured from the process after the model was built and traced
// (the weights live in WebAssembly memory). Per step: the peak resident set (VmHWM of
// /proc/self/status, reset before the step by writing 5 to /proc/self/clear_refs), and the
// growth of the process's ArrayBuffer memory (process.memoryUsage().arrayBuffers, which counts
// WebAssembly memory and Node's Blobs), sampled at every progress callback and after the step.
// Each way of writing runs in a process of its own (the script runs itself with a step name).
// Then the same in headless Chromium (Debian's /usr/bin/chromium through playwright-core; skip
// with OM_BENCH_BROWSER=0): the page builds and traces the model, then toBlob(), then toOnnx();
// for each, the peak resident set of the page's renderer process above what it was before, and
// the browser process's growth (where Chromium keeps a Blob's bytes). OM_BENCH_NODE=0 skips the
// Node.js part.
// tools/bench_export_torch.py measures torch.onnx.export on the same model.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as om from 'onemodel';
import { GPT2, GPT2_SMALL } from './gpt2_model.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const LAYERS = Number(process.argv[2] ?? 12);
const STEP = process.argv[3]; // set in the processes the script runs itself
const CONFIG = GPT2_SMALL;
const [BATCH, TOKENS] = [2, 32];
if (!Number.isInteger(LAYERS) || LAYERS < 1) {
  console.error('usage: node --expose-gc tools/bench_export.mjs [layers]');
  process.exit(2);
}
if (typeof globalThis.gc !== 'function') {
  console.error('bench_export: run with node --expose-gc (npm run bench:export does)');
  process.exit(2);
}

const MiB = 1024 * 1024;
const mib = (n) => (n / MiB).toFixed(1);

// ---- memory ----------------------------------------------------------------------------------

function heapBytes() {
  const u = process.memoryUsage();
  return { rss: u.rss, arrayBuffers: u.arrayBuffers };
}
function resetPeak() {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false; // not Linux, or not allowed: the peak is then the sampled maximum
  }
}
function peakRss() {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Runs step(sample) once, from a collected heap; sample() records the current memory. */
function measure(step) {
  globalThis.gc();
  const base = heapBytes();
  const exact = resetPeak();
  let maxAb = base.arrayBuffers, maxRss = base.rss;
  const sample = () => {
    const u = heapBytes();
    maxAb = Math.max(maxAb, u.arrayBuffers);
    maxRss = Math.max(maxRss, u.rss);
  };
  const t0 = performance.now();
  const result = step(sample);
  const ms = performance.now() - t0;
  sample();
  const peak = exact ? Math.max(peakRss(), maxRss) : maxRss;
  return { ms, result, rssPeak: peak - base.rss, abPeak: maxAb - base.arrayBuffers };
}

// ---- one process per way of writing, so that no step runs in memory another one freed ----------

const STEPS = {
  /** One Uint8Array of the file. */
  toOnnx: (traced, sample) => {
    const bytes = traced.toOnnx({ onProgress: sample });
    sample();
    return { bytes: bytes.length, sha: createHash('sha256').update(bytes).digest('hex') };
  },
  /** A Blob of the pieces; read back (after the measurement) to check its bytes. */
  toBlob: (traced, sample) => traced.toBlob({ onProgress: sample }),
  /** A file under build/bench/. */
  saveOnnx: (traced, sample) => traced.saveOnnx(FILE, { onProgress: sample }),
};
const FILE = join(ROOT, 'build', 'bench', 'gpt2.onnx');

async function child(step) {
  await om.ready();
  om.manualSeed(0);
  const t0 = performance.now();
  const model = new GPT2(CONFIG, LAYERS).eval();
  const buildMs = performance.now() - t0;
  const tensors = [...new Set(Object.values(model.stateDict()))];
  const weightBytes = tensors.reduce((s, t) => s + t.numel() * { float32: 4, int64: 8, bool: 1 }[t.dtype], 0);
  const params = model.parameters().reduce((s, p) => s + p.numel(), 0);
  const ids = om.tidy(() => om.rand([BATCH, TOKENS], { seed: 1 }).mul(CONFIG.vocab).long());
  let traceReports = 0;
  const trace = measure((sample) => om.trace(model, { ids: [ids, ['batch', 'seq']] }, {
    outputNames: ['logits'],
    onProgress: () => { traceReports++; sample(); },
  }));
  const traced = trace.result;
  let reports = 0;
  const write = measure((sample) => STEPS[step](traced, () => { reports++; sample(); }));
  const out = { step, buildMs, params, weightBytes, traceReports, reports, trace: { ...trace, result: undefined }, write: { ...write, result: undefined } };
  if (step === 'toOnnx') Object.assign(out, write.result);
  if (step === 'toBlob') {
    const bytes = new Uint8Array(await write.result.arrayBuffer());
    Object.assign(out, { bytes: bytes.length, sha: createHash('sha256').update(bytes).digest('hex') });
  }
  if (step === 'saveOnnx') {
    const bytes = readFileSync(FILE);
    Object.assign(out, { bytes: bytes.length, sha: createHash('sha256').update(bytes).digest('hex') });
    rmSync(FILE);
    const g = traced.graph();
    Object.assign(out, { nodes: g.nodes.length, initializers: g.initializers.length });
    // The unique bytes: every distinct content among the parameters and buffers, once.
    const unique = new Map();
    for (const t of tensors) {
      const a = t.toArray();
      const key = createHash('sha256').update(`${t.dtype}[${t.shape}]`).update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
      unique.set(key.digest('hex'), a.byteLength);
    }
    out.uniqueBytes = [...unique.values()].reduce((a, b) => a + b, 0);
  }
  traced.dispose();
  ids.dispose();
  model.dispose();
  console.log(JSON.stringify(out));
}

/** Runs each step in a process of its own and prints the table. */
function parent() {
  mkdirSync(dirname(FILE), { recursive: true });
  const runs = Object.keys(STEPS).map((step) => {
    const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), String(LAYERS), step],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (r.status !== 0) throw new Error(`bench_export: the ${step} run failed (${r.status ?? r.signal})`);
    return JSON.parse(r.stdout.trim().split('\n').at(-1));
  });
  const [first] = runs;
  const saved = runs.find((r) => r.step === 'saveOnnx');
  const x = (n) => `${mib(n)} (${(n / first.weightBytes).toFixed(2)}x)`;
  console.log(`model: the zoo's GPT at GPT-2 small's size, ${LAYERS} blocks, ${(first.params / 1e6).toFixed(1)}M parameters, ` +
    `${mib(first.weightBytes)} MiB of distinct parameter and buffer tensors ("the weights"); built in ${(first.buildMs / 1000).toFixed(1)} s`);
  console.log(`traced at batch ${BATCH} x ${TOKENS} tokens, batch and seq symbolic: ${saved.nodes} nodes, ${saved.initializers} initializers`);
  console.log(`file: ${saved.bytes} bytes (${mib(saved.bytes)} MiB); unique contents of the parameters and buffers ` +
    `${saved.uniqueBytes} bytes (${mib(saved.uniqueBytes)} MiB); file / unique = ${(saved.bytes / saved.uniqueBytes).toFixed(4)}`);
  console.log(`the three ways wrote the same bytes: ${runs.every((r) => r.sha === saved.sha && r.bytes === saved.bytes)}; ` +
    `progress reports: om.trace ${first.traceReports}, ${runs.map((r) => `${r.step} ${r.reports}`).join(', ')}`);
  console.log('\n| step | ms | peak RSS above the model, MiB (x weights) | ArrayBuffer growth, MiB (x weights) |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const r of runs) {
    console.log(`| om.trace (${r.step} run) | ${r.trace.ms.toFixed(0)} | ${x(r.trace.rssPeak)} | ${x(r.trace.abPeak)} |`);
  }
  for (const r of runs) console.log(`| ${r.step}() | ${r.write.ms.toFixed(0)} | ${x(r.write.rssPeak)} | ${x(r.write.abPeak)} |`);
}

// ---- the same in Chromium ------------------------------------------------------------------------

/** The pids of every process below pid (Linux /proc). */
function descendants(pid) {
  const parent = new Map();
  for (const d of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      parent.set(Number(d), Number(/PPid:\s+(\d+)/.exec(readFileSync(`/proc/${d}/status`, 'utf8'))[1]));
    } catch { /* gone */ }
  }
  const out = [];
  for (let grew = true; grew;) {
    grew = false;
    for (const [p, pp] of parent) if ((pp === pid || out.includes(pp)) && !out.includes(p)) out.push(p), grew = true;
  }
  return out;
}
const status = (pid, field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
const cmdline = (pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8');

async function browser() {
  const { chromium } = await import('playwright-core');
  const { serve } = await import('../web-demo/server.mjs');
  const server = await serve({ port: 0 });
  const ctx = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await ctx.newPage();
    page.setDefaultTimeout(0);
    const files = { '/tools/gpt2_model.mjs': join(ROOT, 'tools', 'gpt2_model.mjs'), '/examples/zoo/gpt.mjs': join(ROOT, 'examples', 'zoo', 'gpt.mjs') };
    await page.route('**/*', (route) => {
      const path = new URL(route.request().url()).pathname;
      if (path === '/bench.html') {
        return route.fulfill({ contentType: 'text/html', body: '<!doctype html><script type="importmap">{"imports":{"onemodel":"/onemodel/index.js"}}</script>' });
      }
      if (files[path]) return route.fulfill({ contentType: 'text/javascript', body: readFileSync(files[path], 'utf8') });
      return route.continue();
    });
    await page.goto(`${server.url}bench.html`);
    const built = await page.evaluate(async ([layers, batch, tokens]) => {
      const om = await import('onemodel');
      const { GPT2, GPT2_SMALL } = await import('/tools/gpt2_model.mjs');
      await om.ready();
      om.manualSeed(0);
      const model = new GPT2(GPT2_SMALL, layers).eval();
      const ids = om.tidy(() => om.rand([batch, tokens], { seed: 1 }).mul(GPT2_SMALL.vocab).long());
      const t0 = performance.now();
      globalThis.traced = om.trace(model, { ids: [ids, ['batch', 'seq']] }, { outputNames: ['logits'] });
      const traceMs = performance.now() - t0;
      const weights = [...new Set(Object.values(model.stateDict()))].reduce((s, t) => s + t.numel() * { float32: 4, int64: 8, bool: 1 }[t.dtype], 0);
      return { traceMs, weights };
    }, [LAYERS, BATCH, TOKENS]);
    const procs = descendants(process.pid).filter((p) => { try { return cmdline(p).includes('chrom'); } catch { return false; } });
    const renderer = procs.filter((p) => cmdline(p).includes('--type=renderer')).sort((a, b) => status(b, 'VmRSS') - status(a, 'VmRSS'))[0];
    const main = procs.find((p) => !cmdline(p).includes('--type='));
    const rows = [];
    for (const how of ['toBlob', 'toOnnx']) {
      await page.evaluate(() => new Promise((r) => setTimeout(r, 500))); // let the last step's garbage go
      const before = { renderer: status(renderer, 'VmRSS'), main: status(main, 'VmRSS') };
      writeFileSync(`/proc/${renderer}/clear_refs`, '5');
      writeFileSync(`/proc/${main}/clear_refs`, '5');
      const r = await page.evaluate((how) => {
        const t0 = performance.now();
        globalThis.out = globalThis.traced[how]();
        return { ms: performance.now() - t0, size: globalThis.out.size ?? globalThis.out.length };
      }, how);
      await page.evaluate(() => new Promise((r) => setTimeout(r, 500))); // the Blob's bytes reach the browser process
      rows.push({ how, ...r, renderer: status(renderer, 'VmHWM') - before.renderer, main: status(main, 'VmHWM') - before.main,
        mainAfter: status(main, 'VmRSS') - before.main });
      await page.evaluate(() => { globalThis.out = null; });
    }
    return { ...built, rows };
  } finally {
    await ctx.close();
    await server.close();
  }
}

if (STEP) {
  await child(STEP);
} else {
  if (process.env.OM_BENCH_NODE !== '0') parent();
  if (process.env.OM_BENCH_BROWSER !== '0') {
    const b = await browser();
    const x = (n) => `${mib(n)} (${(n / b.weights).toFixed(2)}x)`;
    console.log(`\nChromium (${LAYERS} blocks; om.trace ${b.traceMs.toFixed(0)} ms in the page):\n`);
    console.log('| step | ms | renderer peak RSS above before, MiB (x weights) | browser process peak growth, MiB (x weights) |');
    console.log('| --- | ---: | ---: | ---: |');
    for (const r of b.rows) console.log(`| ${r.how}() | ${r.ms.toFixed(0)} | ${x(r.renderer)} | ${x(r.main)} |`);
  }
}
