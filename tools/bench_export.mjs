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
// WebAssembly memory) and of WebAssembly memory alone, sampled at every progress callback and
// after the step. tools/bench_export_torch.py measures torch.onnx.export on the same model.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as om from 'onemodel';
import { Block, GPT } from '../examples/zoo/gpt.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const LAYERS = Number(process.argv[2] ?? 12);
const CONFIG = { vocab: 50257, d: 768, heads: 12, maxLen: 1024 };
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

/** The zoo's GPT with `layers` MultiheadAttention blocks (the zoo's own has one of each kind). */
class GPT2 extends om.nn.Module {
  constructor({ vocab, d, heads, maxLen }, layers) {
    super();
    this.wte = new om.nn.Embedding(vocab, d);
    this.wpe = new om.nn.Embedding(maxLen, d);
    this.h = new om.nn.ModuleList(Array.from({ length: layers }, () => new Block(d, heads, maxLen, 'mha')));
    this.ln_f = new om.nn.LayerNorm([d]);
    this.lm_head = new om.nn.Linear(d, vocab, { bias: false });
    this.lm_head.weight.dispose();
    this.lm_head.weight = this.wte.weight; // tied, as GPT's
  }
}
GPT2.prototype.forward = GPT.prototype.forward;

// ---- memory ----------------------------------------------------------------------------------

const wasmBytes = () => om.memory().bytes; // live storage in C memory
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
function measure(name, step) {
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
  return { name, ms, result, rssPeak: peak - base.rss, abPeak: maxAb - base.arrayBuffers };
}

// ---- the run -----------------------------------------------------------------------------------

await om.ready();
om.manualSeed(0);
let t0 = performance.now();
const model = new GPT2(CONFIG, LAYERS).eval();
const buildMs = performance.now() - t0;
const state = model.stateDict();
const tensors = [...new Set(Object.values(state))];
const weightBytes = tensors.reduce((s, t) => s + t.size * { float32: 4, int64: 8, bool: 1 }[t.dtype], 0);
const params = model.parameters().reduce((s, p) => s + p.size, 0);
console.log(`model: GPT-2-size decoder, ${LAYERS} blocks, ${(params / 1e6).toFixed(1)}M parameters, ` +
  `${mib(weightBytes)} MiB of distinct parameter and buffer tensors (built in ${buildMs.toFixed(0)} ms)`);

const ids = om.tidy(() => om.rand([BATCH, TOKENS], { seed: 1 }).mul(CONFIG.vocab).long());
const inputs = { ids: [ids, ['batch', 'seq']] };

const rows = [];
const traceStep = measure('om.trace', (sample) => om.trace(model, inputs, { outputNames: ['logits'] }));
rows.push(traceStep);
const traced = traceStep.result;

const toOnnx = measure('toOnnx()', (sample) => {
  const bytes = traced.toOnnx();
  sample();
  return { size: bytes.length, sha: createHash('sha256').update(bytes).digest('hex') };
});
rows.push(toOnnx);

const dir = join(ROOT, 'build', 'bench');
mkdirSync(dir, { recursive: true });
const file = join(dir, 'gpt2.onnx');
const saved = measure('saveOnnx(file)', (sample) => traced.saveOnnx(file));
rows.push(saved);
const fileSha = createHash('sha256').update(readFileSync(file)).digest('hex');
const size = statSync(file).size;
rmSync(file);

// The unique bytes: every distinct content among the model's parameters and buffers, once.
const unique = new Map();
for (const t of tensors) {
  const a = t.toArray();
  const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  unique.set(createHash('sha256').update(`${t.dtype}[${t.shape}]`).update(bytes).digest('hex'), bytes.byteLength);
}
const uniqueBytes = [...unique.values()].reduce((a, b) => a + b, 0);

console.log(`traced at batch ${BATCH} x ${TOKENS} tokens (symbolic batch and seq): ${traced.graph().nodes.length} nodes, ` +
  `${traced.graph().initializers.length} initializers`);
console.log(`file: ${size} bytes (${mib(size)} MiB); unique contents of the parameters and buffers: ${uniqueBytes} bytes ` +
  `(${mib(uniqueBytes)} MiB); file / unique = ${(size / uniqueBytes).toFixed(4)}; all distinct tensors ${mib(weightBytes)} MiB`);
console.log(`toOnnx and saveOnnx wrote the same bytes: ${toOnnx.result.sha === fileSha && toOnnx.result.size === size}`);
console.log('\n| step | ms | peak RSS above the model, MiB (x weights) | ArrayBuffer growth, MiB (x weights) |');
console.log('| --- | ---: | ---: | ---: |');
for (const r of rows) {
  console.log(`| ${r.name} | ${r.ms.toFixed(0)} | ${mib(r.rssPeak)} (${(r.rssPeak / weightBytes).toFixed(2)}) | ` +
    `${mib(r.abPeak)} (${(r.abPeak / weightBytes).toFixed(2)}) |`);
}
traced.dispose();
ids.dispose();
model.dispose();
