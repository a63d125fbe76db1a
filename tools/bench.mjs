// Matmul benchmark: native C, our WASM through the npm package, onnxruntime-web's MatMul and
// TF.js's matMul on tfjs-backend-wasm (XNNPACK).
//
//   npm run bench                          bootstrap + build + this script
//   node tools/bench.mjs [N ...]           sizes (default 256 512 1024), square N x N @ N x N
//   env OM_BENCH_SAMPLES=7 OM_BENCH_MIN_MS=60 OM_BENCH_NATIVE=0 (skip the native run)
//
// All three count 2*N^3 flops per product and report the median GFLOP/s of several samples
// after warm-up (in JS >= 250 ms per side, an eager forward >= 3 s, and until a function's time
// per call stops falling, up to 3 s or twice the least, so V8 has tiered up); the machine may be
// shared and
// noisy. A sample repeats the product until it lasts OM_BENCH_MIN_MS. Ours and ORT run in this
// one Node process, single thread, and their samples alternate (ours, ORT, ours, ...) so that
// load spikes hit both alike.
//   (a) native: build/native-release/om_bench_matmul (tools/bench_matmul.c), parsed from its
//       "matmul n=... gflops=..." lines;
//   (b) WASM: `import * as om from 'onemodel'` as a user would: om.randn, a.matmul(b), dispose;
//   (c) ORT: onnxruntime-web, wasm EP, numThreads = 1, a one-node MatMul model traced with our
//       own tracer; each run includes ORT's copies of the inputs in and the output out, as a
//       user's session.run does;
//   (d) TF.js: tf.matMul on tfjs-backend-wasm, one thread (its single-thread build: in Node it
//       reports no thread support), on tensors already in its memory (the result not read out).
// Then the export: an MLP of Linear(1024, 1024) layers (OM_BENCH_EXPORT_LAYERS, default 8:
// 32 MiB of weights) traced with om.trace, written with toOnnx() and saveOnnx(), and loaded by
// onnxruntime-web (InferenceSession.create on the same bytes) as the peer figure; with the
// growth of the process's ArrayBuffer memory (WebAssembly memory included) while saveOnnx
// streams the file, which is 0 when no copy of the weights is made.
// Before timing, each size checks that our product, ORT's and TF.js's agree.
// First of all, conv2d (3x3, 64 -> 64 channels, 56x56, batch 1, padding 1): ours through the npm
// package vs onnxruntime-web's Conv on a model traced with our tracer, alternating samples as
// above (OM_BENCH_CONV_ONLY=1 stops after it). Then an attention block (batch 1, sequence 128,
// d_model 256, 4 heads: q/k/v projections, scaled dot-product attention, out projection): ours
// eager vs onnxruntime-web on our trace of the same block, and that trace in the Session at batch 8,
// fast mode (the attention pass) against exact mode (OM_BENCH_ATTN_ONLY=1 runs only it).
// Then what tracing with symbolic axes costs against one eager forward (OM_BENCH_TRACE_ONLY=1
// stops after it). Then the Session: each zoo model traced once (symbolic batch), its .onnx run
// by om.InferenceSession and by onnxruntime-web at batch 1 and 8, with the model's eager forward
// (om.noGrad) as a third column, alternating samples, session create times, and the package's
// size (wasm + glue, gzip); a GRU classifier (the zoo LSTM file's Classifier('GRU')) after the
// LSTM (OM_BENCH_SESSION_ONLY=1 runs only it; OM_BENCH_MODELS=lenet,gru only those models), then the
// Session and eager on the test suite's model families with PyTorch's weights (tests/js/families.mjs;
// not with OM_BENCH_MODELS unless OM_BENCH_FAMILIES=resnet,gpt2 picks families). Then torch.onnx.export
// files of torchvision's ViT and ResNet-18, of Hugging Face-style BERT and LLaMA and of a
// bidirectional LSTM classifier (tools/bench_exports.py, written into the cache on the first run) in the Session against our own
// trace of the same model and against onnxruntime-web (OM_BENCH_EXPORTS_ONLY=1 runs only it;
// OM_BENCH_EXPORTS=vit,bert only those). OM_BENCH_THREADS=2 runs the Session, eager and ORT parts
// on two threads each side (ORT's numThreads 2), in wall time.
// Then training throughput against TF.js: a step of an MLP (vs tfjs-backend-wasm) and of LeNet-5
// (vs TF.js's cpu backend: its wasm backend has no conv filter gradient), the same weights and
// batch, alternating samples (OM_BENCH_TRAIN_ONLY=1 runs only it). Then threads: 2 against 1
// (tools/bench_threads.mjs, wall time), each case with its ceiling on this machine (two 1-thread
// instances at once). Last, a summary table with
// every ratio against a peer measured in the run (docs/performance.md, "Against the peers").
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { cpus, homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as om from 'onemodel';
import * as ort from 'onnxruntime-web';
import { runThreads } from './bench_threads.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SIZES = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [256, 512, 1024];
const SAMPLES = Number(process.env.OM_BENCH_SAMPLES) || 7;
const MIN_MS = Number(process.env.OM_BENCH_MIN_MS) || 60;
const WARM_MS = 250;
const WARM_MAX_MS = 3000;
// An eager forward of a model from the test suite's families (tens of JS and wasm functions, each
// tiered up on its own) was still settling when a 100 ms window stopped getting faster: GPT-2's
// at batch 1 measured 1.5 to 2.5 times its settled time. Its warm-up is at least this long.
const EAGER_WARM_MS = 3000;
if (!SIZES.every((n) => Number.isInteger(n) && n > 0)) {
  console.error('usage: node tools/bench.mjs [N ...]   (positive integers)');
  process.exit(2);
}

const gflops = (n, ms) => (2 * n * n * n) / (ms * 1e6);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b), h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
};

// ---- the ORT model: our own trace of Y = A @ B (a one-node MatMul graph) --------------------
function matmulModel(a, b) {
  const traced = om.trace((x, y) => x.matmul(y), { A: a, B: b }, { outputNames: ['Y'] });
  try {
    return traced.toOnnx();
  } finally {
    traced.dispose();
  }
}

// ---- (a) native ------------------------------------------------------------------------------
function runNative() {
  const dir = join(ROOT, 'build', 'native-release'), exe = join(dir, 'om_bench_matmul');
  if (existsSync(join(dir, 'CMakeCache.txt'))) {
    // Not in the build's `all` target (npm test does not need it): built here, up to date.
    const ok = spawnSync('cmake', ['--build', dir, '--target', 'om_bench_matmul', '-j2'], { stdio: 'ignore' }).status === 0;
    if (!ok) console.error('bench: could not build om_bench_matmul');
  }
  if (!existsSync(exe)) return new Map();
  const r = spawnSync(exe, SIZES.map(String), {
    encoding: 'utf8', env: { ...process.env, OM_BENCH_SAMPLES: String(SAMPLES), OM_BENCH_MIN_MS: String(MIN_MS) },
  });
  if (r.status !== 0) console.error(`bench: om_bench_matmul failed (status ${r.status}): ${r.stderr}`);
  const out = new Map();
  for (const line of r.stdout.split('\n')) {
    const m = /^matmul n=(\d+) gflops=([\d.]+)/.exec(line);
    if (m) out.set(Number(m[1]), Number(m[2]));
  }
  return out;
}

// ---- (b) ours and (c) ORT, alternating samples -----------------------------------------------
// The clock of the side-by-side samples: this process's CPU time (user + system, ms) by default,
// so that other processes on a shared machine do not count (both engines run one thread, this
// one: ORT with numThreads 1 and no proxy worker); OM_BENCH_CLOCK=wall for wall time.
// OM_BENCH_THREADS=n runs the Session, eager and ORT parts with n threads on each side (ORT's
// numThreads n), timed in wall time (the other threads' CPU time is no latency).
const THREADS = Number(process.env.OM_BENCH_THREADS ?? 1);
if (!(Number.isInteger(THREADS) && THREADS >= 1 && THREADS <= 4)) throw new Error(`bench: OM_BENCH_THREADS=${process.env.OM_BENCH_THREADS}: 1 to 4`);
const ORT_LABEL = `ORT-web (wasm, ${THREADS === 1 ? '1 thread' : `${THREADS} threads`})`;
const SIDES = THREADS === 1 ? 'one thread' : `${THREADS} threads each side, wall time`;
const clock = process.env.OM_BENCH_CLOCK === 'wall' || THREADS > 1 ? () => performance.now() : () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

// At more than one thread, each sample starts SETTLE_MS after the one before: onnxruntime-web's
// worker spins on a core for 7 to 9 ms of CPU after each run (ours for 50 us), which the next
// sample, our Session's two threads on a 2-core machine, would share its cores with. Without the
// pause the torch.onnx.export rows ran torch's file right after ORT in every round and our trace
// after it: trace / torch file 0.75 to 0.94 at two threads, where the two plans post the same jobs
// of the same parts (docs/performance-log.md).
const SETTLE_MS = 50;

/** Warm-up (at least WARM_MS each, or a last argument's { warmMs: [ms per function] }, and until
 *  the time per call stops falling, so V8 has tiered the JS and the wasm up from its baseline
 *  compilers), then
 *  SAMPLES rounds (or a last argument's { samples }) of one sample of each function in turn
 *  (ours, theirs[, a third, ...]), each repeating its call for >= MIN_MS (and, at more than one
 *  thread, SETTLE_MS after the sample before). Returns the per-call
 *  milliseconds of every sample: ms[k] for the k-th function, msOurs and msOrt for the first two. */
async function alternate(...args) {
  const { samples = SAMPLES, warmMs = [] } = typeof args.at(-1) === 'function' ? {} : args.pop();
  const fns = args;
  const time = async (fn, reps) => {
    const t0 = clock();
    for (let i = 0; i < reps; i++) await fn();
    return (clock() - t0) / reps;
  };
  // At least WARM_MS (or the function's warmMs), then windows of 100 ms until one is no faster than
  // the best before it (up to WARM_MAX_MS, or twice the least): V8 tiers JS and wasm up on background threads, whose CPU time this process's
  // clock counts, and code with many small functions (the eager path) takes longer to settle.
  const warm = async (fn, least = WARM_MS) => {
    const t0 = clock();
    let calls = 0;
    do { await fn(); calls++; } while (clock() - t0 < least);
    if (calls < 2) return clock() - t0; // a call that is its own warm-up is timed once
    for (let best = Infinity; clock() - t0 < Math.max(WARM_MAX_MS, 2 * least);) {
      const w0 = clock();
      let n = 0;
      do { await fn(); n++; } while (clock() - w0 < 100);
      const ms = (clock() - w0) / n;
      if (ms >= best * 0.97) break;
      best = Math.min(best, ms);
    }
    return time(fn, 2);
  };
  const reps = [];
  for (const [k, fn] of fns.entries()) reps.push(Math.ceil(MIN_MS / Math.max(await warm(fn, warmMs[k]), 1e-3)));
  const ms = fns.map(() => []);
  for (let s = 0; s < samples; s++) {
    for (let k = 0; k < fns.length; k++) {
      if (THREADS > 1) await new Promise((done) => setTimeout(done, SETTLE_MS));
      ms[k].push(await time(fns[k], reps[k]));
    }
  }
  return { msOurs: ms[0], msOrt: ms[1], ms };
}

/** max |a - b| over two arrays, and max |b|. */
function maxDiff(a, b) {
  let err = 0, scale = 0;
  for (let i = 0; i < b.length; i++) {
    err = Math.max(err, Math.abs(a[i] - b[i]));
    scale = Math.max(scale, Math.abs(b[i]));
  }
  return { err, scale };
}

async function runWasmAndOrt(n) {
  const a = om.randn([n, n], { seed: 1 }), b = om.randn([n, n], { seed: 2 });
  const session = await ort.InferenceSession.create(matmulModel(a, b), { executionProviders: ['wasm'] });
  const feeds = {
    A: new ort.Tensor('float32', a.toArray(), [n, n]),
    B: new ort.Tensor('float32', b.toArray(), [n, n]),
  };
  const tf = await loadTfjs();
  await tf.setBackend('wasm');
  const [aTf, bTf] = [a, b].map((t) => tf.tensor(t.toArray(), [n, n]));
  const ours = () => { a.matmul(b).dispose(); };
  const theirs = async () => { const r = await session.run(feeds); r.Y.dispose(); };
  const tfjs = () => { tf.tidy(() => { aTf.matMul(bTf); }); }; // the wasm backend computes it in the call
  try {
    // Agreement check (also the first warm-up of all three).
    const c = a.matmul(b), mine = c.toArray();
    c.dispose();
    for (const [peer, y] of [['ORT', (await session.run(feeds)).Y.data], ['TF.js', tf.tidy(() => aTf.matMul(bTf).dataSync())]]) {
      const { err, scale } = maxDiff(mine, y);
      if (!(err <= 1e-5 * scale * Math.sqrt(n))) throw new Error(`n=${n}: ours and ${peer} differ by ${err} (max |y| ${scale})`);
    }
    const { ms: [msOurs, msOrt, msTf] } = await alternate(ours, theirs, tfjs);
    return { wasm: gflops(n, median(msOurs)), ort: gflops(n, median(msOrt)), tfjs: gflops(n, median(msTf)) };
  } finally {
    a.dispose();
    b.dispose();
    tf.dispose([aTf, bTf]);
    await session.release();
  }
}

// ---- conv2d: ours vs ORT's Conv on the same shapes ------------------------------------------------
// x [1, 64, 56, 56], weight [64, 64, 3, 3], bias [64], stride 1, padding 1 (a ResNet stage-1 conv);
// ORT runs a one-node Conv model traced with our tracer (weight and bias as initializers).
async function runConv() {
  const F = om.nn.functional;
  const x = om.randn([1, 64, 56, 56], { seed: 1 });
  const w = om.tidy(() => om.randn([64, 64, 3, 3], { seed: 2 }).mul(0.05)), b = om.randn([64], { seed: 3 });
  const conv = (t) => F.conv2d(t, w, b, { padding: 1 });
  const traced = om.trace(conv, { X: x }, { outputNames: ['Y'] });
  const session = await ort.InferenceSession.create(traced.toOnnx(), { executionProviders: ['wasm'] });
  traced.dispose();
  const feeds = { X: new ort.Tensor('float32', x.toArray(), x.shape) };
  const ours = () => { conv(x).dispose(); };
  const theirs = async () => { const r = await session.run(feeds); r.Y.dispose(); };
  try {
    const y = conv(x), mine = y.toArray();
    y.dispose();
    const { err, scale } = maxDiff(mine, (await session.run(feeds)).Y.data);
    if (!(err <= 1e-5 * scale * 24)) throw new Error(`conv2d: ours and ORT differ by ${err} (max |y| ${scale})`);
    const { msOurs, msOrt } = await alternate(ours, theirs);
    const flops = 2 * 64 * 64 * 9 * 56 * 56;
    // Training: the same conv forward and backward (input, weight and bias gradients); ours only.
    for (const t of [x, w, b]) t.requiresGrad = true;
    const g = om.randn([1, 64, 56, 56], { seed: 4 });
    const train = () => om.tidy(() => { conv(x).backward(g); });
    const { msOurs: msTrain } = await alternate(train, () => {});
    g.dispose();
    return {
      ms: median(msOurs), msOrt: median(msOrt), gf: flops / (median(msOurs) * 1e6), gfOrt: flops / (median(msOrt) * 1e6), err,
      msTrain: median(msTrain),
    };
  } finally {
    om.dispose([x, w, b]);
    await session.release();
  }
}

// LeNet-5: conv(1->6, 5, pad 2)-relu-maxpool(2), conv(6->16, 5)-relu-maxpool(2), Linear
// 400-120-84-10 on 1x28x28 images; the weights from om.manualSeed(1). The conv part's training
// step below and the training comparison with TF.js both use it.
function lenet5() {
  const F = om.nn.functional;
  om.manualSeed(1);
  const convs = [new om.nn.Conv2d(1, 6, 5, { padding: 2 }), new om.nn.Conv2d(6, 16, 5)];
  const fcs = [new om.nn.Linear(400, 120), new om.nn.Linear(120, 84), new om.nn.Linear(84, 10)];
  const forward = (x) => {
    const h = convs.reduce((t, c) => F.maxPool2d(c.forward(t).relu(), 2), x).reshape(x.shape[0], 400);
    return fcs.reduce((t, l, i) => (i ? l.forward(t.relu()) : l.forward(t)), h);
  };
  return { convs, fcs, forward, params: [...convs, ...fcs].flatMap((m) => m.parameters()), dispose: () => { for (const m of [...convs, ...fcs]) m.dispose(); } };
}

// A LeNet-5 training step: batch 64 of 1x28x28, MSE to zero, backward, SGD update.
function lenetStepMs() {
  const net = lenet5(), params = net.params;
  const x = om.randn([64, 1, 28, 28], { seed: 5 });
  const step = () => om.tidy(() => {
    net.forward(x).pow(2).mean().backward();
    om.noGrad(() => { for (const p of params) p.copy_(p.sub(p.grad.mul(0.01))); });
    for (const p of params) p.zeroGrad();
  });
  const t0 = performance.now();
  do step(); while (performance.now() - t0 < WARM_MS);
  const ms = [];
  for (let s = 0; s < SAMPLES; s++) {
    const t1 = performance.now();
    for (let i = 0; i < 5; i++) step();
    ms.push((performance.now() - t1) / 5);
  }
  net.dispose();
  x.dispose();
  return median(ms);
}

// ---- attention block: ours (eager) vs ORT running our trace of the same block -----------------
// batch 1, sequence 128, d_model 256, 4 heads: q/k/v projections (Linear 256 -> 256 each), heads,
// F.scaledDotProductAttention, heads merged, out projection. Eval-style forward (no grad).
async function runAttention() {
  const F = om.nn.functional;
  const L = 128, D = 256, H = 4;
  om.manualSeed(3);
  class Block extends om.nn.Module {
    constructor() {
      super();
      this.q = new om.nn.Linear(D, D);
      this.k = new om.nn.Linear(D, D);
      this.v = new om.nn.Linear(D, D);
      this.o = new om.nn.Linear(D, D);
    }

    forward(x) {
      return om.tidy(() => {
        const [n, l] = x.shape;
        const heads = (t) => t.reshape(n, l, H, D / H).transpose(1, 2); // [N, H, L, D/H]
        const y = F.scaledDotProductAttention(heads(this.q.forward(x)), heads(this.k.forward(x)), heads(this.v.forward(x)));
        return this.o.forward(y.transpose(1, 2).reshape(n, l, D));
      });
    }
  }
  const block = new Block();
  const x = om.randn([1, L, D], { seed: 1 });
  const traced = om.trace(block, { X: x }, { outputNames: ['Y'] });
  const nodes = traced.graph().nodes.length;
  const session = await ort.InferenceSession.create(traced.toOnnx(), { executionProviders: ['wasm'] });
  traced.dispose();
  const feeds = { X: new ort.Tensor('float32', x.toArray(), x.shape) };
  const ours = () => { om.noGrad(() => block.forward(x)).dispose(); };
  const theirs = async () => { const r = await session.run(feeds); r.Y.dispose(); };
  try {
    const y = om.noGrad(() => block.forward(x)), mine = y.toArray();
    y.dispose();
    const { err, scale } = maxDiff(mine, (await session.run(feeds)).Y.data);
    if (!(err <= 1e-5 * Math.max(1, scale))) throw new Error(`attention: ours and ORT differ by ${err} (max |y| ${scale})`);
    const { msOurs, msOrt } = await alternate(ours, theirs);
    const flops = 4 * 2 * L * D * D + 2 * 2 * L * L * D; // four projections, q k^T and p v
    // the attention pass: the block's trace (symbolic batch) in the Session at batch 8, fast mode
    // (one attention kernel, no score matrix) against exact mode (the five nodes)
    const x8 = om.randn([8, L, D], { seed: 2 });
    const tb = om.trace(block, { X: [x8, ['batch', null, null]] }, { outputNames: ['Y'] });
    const fast = tb.session(), exact = await om.InferenceSession.create(tb.save(), { mode: 'exact' });
    tb.dispose();
    const run = (s) => () => { s.run({ X: x8 }).Y.dispose(); };
    const pass = await alternate(run(fast), run(exact));
    const plan = { fastMs: median(pass.msOurs), exactMs: median(pass.msOrt), fastBytes: fast.planBytes, exactBytes: exact.planBytes,
      fused: fast.planKernels.filter((k) => k === 'attention').length };
    fast.dispose();
    exact.dispose();
    x8.dispose();
    return { ms: median(msOurs), msOrt: median(msOrt), gf: flops / (median(msOurs) * 1e6), gfOrt: flops / (median(msOrt) * 1e6), err, nodes, flops, plan };
  } finally {
    block.dispose();
    x.dispose();
    await session.release();
  }
}

function printAttention(at) {
  console.log(`attention block: batch 1, sequence 128, d_model 256, 4 heads (q/k/v Linear, SDPA, out Linear; ${(at.flops / 1e6).toFixed(0)} MFLOP per call, ${at.nodes} ONNX nodes)`);
  console.log('| | ms per call | GFLOP/s |\n|---|---:|---:|');
  console.log(`| onemodel WASM (eager forward, no grad) | ${at.ms.toFixed(2)} | ${at.gf.toFixed(2)} |`);
  console.log(`| ORT-web on our traced graph | ${at.msOrt.toFixed(2)} | ${at.gfOrt.toFixed(2)} |`);
  console.log(`ORT time / ours: ${(at.msOrt / at.ms).toFixed(2)} (above 1: ours is faster); max |ours - ORT| = ${at.err.toExponential(1)}`);
  const p = at.plan;
  console.log(`the Session at batch 8: fast mode (${p.fused} attention kernel) ${p.fastMs.toFixed(2)} ms, plan ${p.fastBytes} bytes; ` +
    `exact mode ${p.exactMs.toFixed(2)} ms, plan ${p.exactBytes} bytes (fast / exact: time ${(p.fastMs / p.exactMs).toFixed(2)}, memory ${(p.fastBytes / p.exactBytes).toFixed(2)})\n`);
}

// ---- training throughput: ours vs TF.js ------------------------------------------------------
// One training step (forward, cross-entropy, backward, Adam update with lr 1e-3) at batch 64:
//   MLP 784-256-128-10 with ReLU, against TF.js 4.22 on its wasm backend (XNNPACK), one thread;
//   LeNet-5 (lenet5() above), against TF.js's cpu backend (plain JS): its wasm backend has no
//   conv-filter gradient (Conv2DBackpropFilter); the bench tries one step there and prints the error.
// Both sides start from the same weights (ours, copied into tf.variables in TF.js's layouts) and
// train on the same batch (random normal images, random labels). TF.js's step is
// optimizer.minimize(loss), as its custom training loops write it; ours is zeroGrad, backward,
// step. Before timing, one step of each must lower the loss on that batch, and the two initial
// losses must agree (the same model). In Node tfjs-backend-wasm reports no thread support and
// loads its single-thread SIMD build, which runs on this thread (checked: getThreadsCount() is 1),
// as does the cpu backend, so this process's CPU time is a fair clock for both.
let tfjsLoaded = null;
/** TF.js, its wasm backend set up (once) and current: one thread, the .wasm from node_modules. */
function loadTfjs() {
  tfjsLoaded ??= initTfjs();
  return tfjsLoaded;
}

async function initTfjs() {
  const tf = await import('@tensorflow/tfjs');
  const tfWasm = await import('@tensorflow/tfjs-backend-wasm');
  const { createRequire } = await import('node:module');
  // the .wasm files from node_modules: a file path, so nothing is fetched
  const wasmFile = createRequire(import.meta.url).resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm');
  tfWasm.setWasmPaths(`${dirname(wasmFile)}/`);
  tfWasm.setThreadsCount(1);
  if (!(await tf.setBackend('wasm'))) throw new Error('tfjs-backend-wasm did not initialise');
  const threads = tfWasm.getThreadsCount();
  if (threads !== 1 || (await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT'))) throw new Error(`tfjs-backend-wasm runs ${threads} threads`);
  return tf;
}

/** A tf.variable holding om tensor t's values, permuted by perm (after a reshape to from) and reshaped to `to`. */
function tfVariable(tf, t, { from = t.shape, perm = null, to = null } = {}) {
  return tf.tidy(() => {
    let v = tf.tensor(t.toArray(), from);
    if (perm) v = v.transpose(perm);
    return tf.variable(to ? v.reshape(to) : v);
  });
}

// The models: make() builds ours ({ params, forward, dispose }) with theirs(tf), TF.js's model
// ({ vars, forward }) from the same weights; x() is our batch, toTf(tf, x) the same values in
// TF.js's layout.
const TRAIN_MODELS = {
  mlp: {
    title: 'MLP 784-256-128-10, batch 64',
    make() {
      om.manualSeed(2);
      const layers = [new om.nn.Linear(784, 256), new om.nn.Linear(256, 128), new om.nn.Linear(128, 10)];
      return {
        params: layers.flatMap((l) => l.parameters()),
        forward: (x) => layers.reduce((h, l, i) => l.forward(i ? h.relu() : h), x),
        theirs: (tf) => {
          const vs = layers.map((l) => [tfVariable(tf, l.weight, { perm: [1, 0] }), tfVariable(tf, l.bias)]);
          return { vars: vs.flat(), forward: (x) => vs.reduce((h, [w, b], i) => (i ? h.relu() : h).matMul(w).add(b), x) };
        },
        dispose: () => { for (const l of layers) l.dispose(); },
      };
    },
    x: () => om.randn([64, 784], { seed: 7 }),
    toTf: (tf, x) => tf.tensor(x.toArray(), x.shape),
  },
  lenet: {
    title: 'LeNet-5 CNN, batch 64 of 1x28x28',
    make() {
      const net = lenet5();
      return {
        params: net.params,
        forward: net.forward,
        theirs: (tf) => {
          // Conv2d [O, C, kH, kW] -> [kH, kW, C, O]; the first Linear reads the NHWC features (h, w, c)
          const convs = net.convs.map((c) => [tfVariable(tf, c.weight, { perm: [2, 3, 1, 0] }), tfVariable(tf, c.bias), c.padding]);
          const [fc1, ...fcs] = net.fcs;
          const fcVars = [[tfVariable(tf, fc1.weight, { from: [120, 16, 5, 5], perm: [2, 3, 1, 0], to: [400, 120] }), tfVariable(tf, fc1.bias)],
            ...fcs.map((l) => [tfVariable(tf, l.weight, { perm: [1, 0] }), tfVariable(tf, l.bias)])];
          const pad = (p) => (Array.isArray(p) ? p[0] : p);
          return {
            vars: [...convs.flatMap(([w, b]) => [w, b]), ...fcVars.flat()],
            forward: (x) => {
              const h = convs.reduce((t, [w, b, p]) => tf.maxPool(tf.conv2d(t, w, 1, pad(p)).add(b).relu(), 2, 2, 'valid'), x);
              return fcVars.reduce((t, [w, b], i) => (i ? t.relu() : t).matMul(w).add(b), h.reshape([x.shape[0], 400]));
            },
          };
        },
        dispose: net.dispose,
      };
    },
    x: () => om.randn([64, 1, 28, 28], { seed: 7 }),
    toTf: (tf, x) => tf.tensor(x.toArray(), [64, 28, 28, 1]), // one channel: NCHW and NHWC hold the same bytes
  },
};

/** One model's training step, ours vs TF.js on `backend`, alternating samples. */
async function runTrainingPair(tf, spec, backend) {
  const F = om.nn.functional;
  await tf.setBackend(backend);
  const model = spec.make();
  const x = spec.x(), labels = om.tidy(() => om.rand([64], { seed: 8 }).mul(10).long());
  const opt = new om.optim.Adam(model.params, { lr: 1e-3 });
  const theirs = model.theirs(tf);
  const xTf = spec.toTf(tf, x);
  const yTf = tf.tidy(() => tf.oneHot(tf.tensor1d(Int32Array.from(labels.toArray(), Number), 'int32'), 10));
  const optTf = tf.train.adam(1e-3, 0.9, 0.999, 1e-8);
  const lossOurs = () => F.crossEntropy(model.forward(x), labels);
  const lossTf = () => tf.losses.softmaxCrossEntropy(yTf, theirs.forward(xTf));
  const stepOurs = () => { opt.zeroGrad(); om.tidy(() => lossOurs().backward()); opt.step(); };
  const stepTf = () => { optTf.minimize(lossTf, false, theirs.vars); };
  try {
    const ours = [om.tidy(() => om.noGrad(lossOurs).item())], tfs = [tf.tidy(() => lossTf().dataSync()[0])];
    stepOurs();
    const t0 = clock();
    stepTf();
    // TF.js's cpu backend takes seconds for a CNN step: fewer samples, so its part lasts about 30 s
    const samples = Math.max(3, Math.min(SAMPLES, Math.floor(30000 / (clock() - t0))));
    ours.push(om.tidy(() => om.noGrad(lossOurs).item()));
    tfs.push(tf.tidy(() => lossTf().dataSync()[0]));
    if (!(Math.abs(ours[0] - tfs[0]) <= 1e-4 * Math.max(1, ours[0]))) throw new Error(`${spec.title}: initial loss ${ours[0]} (ours) vs ${tfs[0]} (TF.js): not the same model`);
    if (!(ours[1] < ours[0]) || !(tfs[1] < tfs[0])) throw new Error(`${spec.title}: one step did not lower the loss: ours ${ours}, TF.js ${tfs}`);
    const tensorsBefore = tf.memory().numTensors;
    const { msOurs, msOrt: msTf } = await alternate(stepOurs, stepTf, { samples });
    if (tf.memory().numTensors !== tensorsBefore) throw new Error(`${spec.title}: TF.js's step leaks tensors`);
    return { title: spec.title, backend, ms: median(msOurs), msTf: median(msTf), loss: ours, lossTf: tfs, samples };
  } finally {
    opt.dispose();
    optTf.dispose();
    tf.dispose([xTf, yTf, ...theirs.vars]);
    model.dispose();
    om.dispose([x, labels]);
  }
}

/** TF.js wasm's answer to a CNN training step: the error message (null if it ran). */
async function tfWasmCnnError(tf) {
  await tf.setBackend('wasm');
  const model = TRAIN_MODELS.lenet.make();
  const theirs = model.theirs(tf);
  const x = tf.zeros([2, 28, 28, 1]), opt = tf.train.adam(1e-3);
  try {
    opt.minimize(() => theirs.forward(x).square().mean(), false, theirs.vars);
    return null;
  } catch (e) {
    return e.message;
  } finally {
    opt.dispose();
    tf.dispose([x, ...theirs.vars]);
    model.dispose();
  }
}

async function runTraining() {
  const tf = await loadTfjs();
  const rows = [await runTrainingPair(tf, TRAIN_MODELS.mlp, 'wasm')];
  const cnnOnWasm = await tfWasmCnnError(tf);
  rows.push(await runTrainingPair(tf, TRAIN_MODELS.lenet, cnnOnWasm ? 'cpu' : 'wasm'));
  return { rows, cnnOnWasm, version: tf.version.tfjs };
}

function printTraining({ rows, cnnOnWasm, version }) {
  console.log(`training step (forward, cross-entropy, backward, Adam) vs TF.js ${version}, one thread, the same weights and batch, alternating samples`);
  console.log('| model | TF.js backend | ours steps/s | TF.js steps/s | ours / TF.js | samples | loss before, after one step (ours; TF.js) |\n|---|---|---:|---:|---:|---:|---|');
  for (const r of rows) {
    const l = (xs) => xs.map((v) => v.toFixed(4)).join(' -> ');
    const perS = (ms) => (1000 / ms).toPrecision(3);
    console.log(`| ${r.title} | ${r.backend} | ${perS(r.ms)} | ${perS(r.msTf)} | ${(r.msTf / r.ms).toFixed(2)} | ${r.samples} | ${l(r.loss)}; ${l(r.lossTf)} |`);
    summary.push({ what: `training step, ${r.title}`, peer: `TF.js ${version} ${r.backend} backend, 1 thread`, ours: `${perS(r.ms)} steps/s`, theirs: `${perS(r.msTf)} steps/s`, ratio: r.msTf / r.ms });
  }
  console.log(cnnOnWasm ? `TF.js wasm backend on the CNN step: "${cnnOnWasm}", so the CNN runs on its cpu backend\n` : '');
}

// ---- the summary: one table of every ratio of issue 13, each measured side by side above -----
// Each part that compares us with a peer adds its rows (the threads part adds its own here too).
const summary = [];

function printSummary() {
  if (!summary.length) return;
  console.log(`summary: ours against the peer, each row side by side in this run (median of alternating samples on this process's ${process.env.OM_BENCH_CLOCK === 'wall' || THREADS > 1 ? 'wall' : 'CPU'} time)`);
  console.log('| measurement | peer | ours | peer | peer time / our time (above 1: ours is faster) |\n|---|---|---:|---:|---:|');
  for (const r of summary) console.log(`| ${r.what} | ${r.peer} | ${r.ours} | ${r.theirs} | ${r.ratio.toFixed(2)} |`);
  console.log('');
}

// ---- main ------------------------------------------------------------------------------------
ort.env.wasm.numThreads = THREADS;
ort.env.logLevel = 'error';
await om.ready();
om.setNumThreads(THREADS); // one thread against one unless OM_BENCH_THREADS (the threads rows at the end: 2 against 1)

const cpu = cpus()[0]?.model ?? 'unknown CPU';
console.log(`matmul benchmark: ${cpus().length} cores, ${cpu}; Node ${process.version}, onnxruntime-web ${ort.env.versions?.web ?? '?'}`);
console.log(`square N x N @ N x N float32, single thread, GFLOP/s = 2N^3 / time, median of ${SAMPLES} samples of >= ${MIN_MS} ms\n`);

/** Ends a run of one part (OM_BENCH_*_ONLY), saying so if it left onemodel tensors alive. */
function exitAlone() {
  if (om.memory().tensors !== 0) console.error(`bench: ${om.memory().tensors} onemodel tensors still alive`);
  process.exit(0);
}

/** The parts OM_BENCH_<PART>_ONLY=1 runs alone, checked in this order: each runs, prints, and ends the run. */
const ALONE = {
  TRACE: async () => printTraceCost(await runTraceCost()),
  TRAIN: async () => {
    printTraining(await runTraining());
    printSummary();
  },
  SESSION: async () => {
    printSessions(await runSessions());
    if (!process.env.OM_BENCH_MODELS || process.env.OM_BENCH_FAMILIES) printFamilySessions(await runFamilySessions());
    printSummary();
  },
  EXPORTS: async () => printExports(await runExports()),
  ATTN: async () => printAttention(await runAttention()),
};
for (const [part, run] of Object.entries(ALONE)) {
  if (process.env[`OM_BENCH_${part}_ONLY`] !== '1') continue;
  await run();
  exitAlone();
}

const cv = await runConv();
console.log('conv2d 3x3, 64 -> 64 channels, 56x56, batch 1, stride 1, padding 1, bias (0.23 GFLOP per call)');
console.log('| | ms per call | GFLOP/s |\n|---|---:|---:|');
console.log(`| onemodel WASM (om.nn.functional.conv2d) | ${cv.ms.toFixed(2)} | ${cv.gf.toFixed(2)} |`);
console.log(`| ORT-web Conv | ${cv.msOrt.toFixed(2)} | ${cv.gfOrt.toFixed(2)} |`);
console.log(`ORT time / ours: ${(cv.msOrt / cv.ms).toFixed(2)} (above 1: ours is faster); max |ours - ORT| = ${cv.err.toExponential(1)}`);
console.log(`onemodel forward + backward (dx, dW, db) of the same conv: ${cv.msTrain.toFixed(2)} ms`);
console.log(`LeNet-5 training step, batch 64 (forward, backward, SGD update): ${lenetStepMs().toFixed(2)} ms\n`);
if (process.env.OM_BENCH_CONV_ONLY === '1') {
  exitAlone();
}

printAttention(await runAttention());
printSessions(await runSessions());
printFamilySessions(await runFamilySessions());
printExports(await runExports());
printTraining(await runTraining());

const native = process.env.OM_BENCH_NATIVE === '0' ? new Map() : runNative();
const rows = [];
for (const n of SIZES) rows.push({ n, native: native.get(n), ...(await runWasmAndOrt(n)) });

const fmt = (x, d = 2) => (x === undefined ? '-' : x.toFixed(d));
const table = [['N', 'native GFLOP/s', 'WASM GFLOP/s', 'ORT-web GFLOP/s', 'tfjs-wasm GFLOP/s', 'WASM/ORT', 'WASM/tfjs']];
for (const r of rows) table.push([String(r.n), fmt(r.native), fmt(r.wasm), fmt(r.ort), fmt(r.tfjs), fmt(r.wasm / r.ort), fmt(r.wasm / r.tfjs)]);
const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
const line = (row) => `| ${row.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
console.log(line(table[0]));
console.log(`|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
for (const row of table.slice(1)) console.log(line(row));
for (const r of rows) {
  summary.push({ what: `matmul ${r.n}x${r.n} @ ${r.n}x${r.n}`, peer: 'ORT-web (wasm, 1 thread) MatMul', ours: `${r.wasm.toFixed(2)} GFLOP/s`, theirs: `${r.ort.toFixed(2)} GFLOP/s`, ratio: r.wasm / r.ort });
  summary.push({ what: `matmul ${r.n}x${r.n} @ ${r.n}x${r.n}`, peer: 'tfjs-backend-wasm (XNNPACK, 1 thread) matMul', ours: `${r.wasm.toFixed(2)} GFLOP/s`, theirs: `${r.tfjs.toFixed(2)} GFLOP/s`, ratio: r.wasm / r.tfjs });
}

// ---- the Session against onnxruntime-web on the zoo -----------------------------------------------
// Each zoo model (untrained: speed does not depend on the weights) traced once with its symbolic
// axes; the same .onnx bytes go to om.InferenceSession.create and ort.InferenceSession.create.
// A run of ours is session.run on om Tensors (outputs disposed); ORT's is session.run on ORT
// Tensors made from the same values (its copies in and out included, as a user's run has them).
// Create: each session made, run once at batch 1 (ours makes its plan there, ORT in create) and
// released, alternating, median.
/** Our session and ORT's on the same feeds (om Tensors), and with eagerOut (the model's outputs,
 *  run under om.noGrad) the eager forward: their first outputs checked against ORT's, then
 *  alternating samples of each (ORT's run with its copies in and out). Returns the samples [ours,
 *  ORT's, eager's]. */
async function sessionAgainstOrt(mine, theirs, feeds, what, eagerOut) {
  const ortFeeds = () => Object.fromEntries(Object.entries(feeds).map(([k, t]) => [k, new ort.Tensor(t.dtype, t.toArray(), t.shape)]));
  const ours = () => { for (const t of Object.values(mine.run(feeds))) t.dispose(); };
  const peer = async () => { const r = await theirs.run(ortFeeds()); for (const t of Object.values(r)) t.dispose(); };
  const b = Object.values(await theirs.run(ortFeeds())).map((t) => Array.from(t.data, Number));
  const checks = [['the Session', om.tidy(() => Object.values(mine.run(feeds)).map((t) => Array.from(t.toArray(), Number)))]];
  if (eagerOut) checks.push(['eager', om.tidy(() => om.noGrad(eagerOut).map((t) => Array.from(t.toArray(), Number)))]);
  for (const [who, c] of checks) {
    const { err, scale } = maxDiff(c[0], b[0]);
    if (!(err <= 1e-4 * Math.max(1, scale))) throw new Error(`${what}: ${who} and ORT differ by ${err}`);
  }
  const eager = () => om.tidy(() => { om.noGrad(eagerOut); });
  return (await alternate(...(eagerOut ? [ours, peer, eager, { warmMs: [WARM_MS, WARM_MS, EAGER_WARM_MS] }] : [ours, peer]))).ms;
}

async function runSessions() {
  const wf = await import('../examples/lib/workflow.mjs');
  const rows = [];
  const only = process.env.OM_BENCH_MODELS?.split(',');
  const lstmZoo = await import('../examples/zoo/lstm.mjs');
  // the zoo, and after its LSTM classifier the same classifier with a GRU (not a zoo file)
  const gruFile = () => wf.checkModelFile({
    title: 'GRU classifier', model: new lstmZoo.Classifier('GRU'), outputNames: ['logits'],
    inputs: { x: [om.randn([3, 5, 6], { seed: 1 }), ['batch', 'seq', null]] },
  }, 'gru');
  for (const name of wf.ZOO.flatMap((m) => (m === 'lstm' ? [m, 'gru'] : [m])).filter((m) => !only || only.includes(m))) {
    const file = name === 'gru' ? gruFile() : wf.checkModelFile(await import(`../examples/zoo/${name}.mjs`), name);
    const traced = wf.traceModel(file);
    const bytes = traced.toOnnx();
    traced.dispose();
    // create and the first run at batch 1 (ours plans there; ORT plans in create)
    const first = wf.makeInputs(file, wf.describeInputs(file.inputs).map((i) => ({ ...i, shape: [1, ...i.shape.slice(1)] })), 3);
    const firstFeeds = Object.fromEntries(Object.entries(first).map(([k, v]) => [k, v[0]]));
    const firstOrt = Object.fromEntries(Object.entries(firstFeeds).map(([k, t]) => [k, new ort.Tensor(t.dtype, t.toArray(), t.shape)]));
    const create = await alternate(async () => {
      const s = await om.InferenceSession.create(bytes);
      for (const t of Object.values(s.run(firstFeeds))) t.dispose();
      s.dispose();
    }, async () => {
      const s = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
      for (const t of Object.values(await s.run(firstOrt))) t.dispose();
      await s.release();
    });
    wf.disposeInputs(first);
    const mine = await om.InferenceSession.create(bytes);
    const theirs = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
    try {
      for (const batch of [1, 8]) {
        const specs = wf.describeInputs(file.inputs).map((i) => ({ ...i, shape: [batch, ...i.shape.slice(1)] }));
        const inputs = wf.makeInputs(file, specs, 11);
        try {
          const feeds = Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, v[0]]));
          const eagerOut = () => [wf.runModel(file, Object.values(feeds))].flat(); // eval mode, as traceModel left it
          const [msOurs, msOrt, msEager] = await sessionAgainstOrt(mine, theirs, feeds, `${name} batch ${batch}`, eagerOut);
          rows.push({ name, title: file.title, batch, ms: median(msOurs), msOrt: median(msOrt), msEager: median(msEager),
            createMs: median(create.msOurs), createMsOrt: median(create.msOrt), planBytes: mine.planBytes });
        } finally {
          wf.disposeInputs(inputs);
        }
      }
    } finally {
      mine.dispose();
      await theirs.release();
      wf.disposeModelFile(file);
    }
  }
  wf.disposeModelFile(lstmZoo.default); // imported for its Classifier (disposing twice is a no-op)
  const { gzipSync } = await import('node:zlib');
  const { readFileSync } = await import('node:fs');
  const size = ['onemodel.wasm', 'onemodel.mjs'].map((f) => gzipSync(readFileSync(join(ROOT, 'js/dist', f)), { level: 9 }).length);
  return { rows, gzip: size };
}

function printSessions({ rows, gzip }) {
  console.log(`Session and eager (forward under om.noGrad) vs onnxruntime-web (wasm, ${SIDES}) on the zoo, the same .onnx, alternating samples`);
  console.log('| model | batch | Session ms | eager ms | ORT-web ms | ORT / Session | ORT / eager | Session create + first run ms | ORT create + first run ms | plan bytes |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(`| ${r.name} | ${r.batch} | ${r.ms.toFixed(3)} | ${r.msEager.toFixed(3)} | ${r.msOrt.toFixed(3)} | ${(r.msOrt / r.ms).toFixed(2)} | ${(r.msOrt / r.msEager).toFixed(2)} | ` +
      `${r.createMs.toFixed(2)} | ${r.createMsOrt.toFixed(2)} | ${r.planBytes} |`);
  }
  for (const r of rows) {
    summary.push({ what: `eager forward (om.noGrad), ${r.title} (${r.name}), batch ${r.batch}`, peer: `${ORT_LABEL} on our trace`, ours: `${r.msEager.toFixed(3)} ms`, theirs: `${r.msOrt.toFixed(3)} ms`, ratio: r.msOrt / r.msEager });
    summary.push({ what: `Session run, ${r.title} (${r.name}), batch ${r.batch}`, peer: `${ORT_LABEL}, the same .onnx`, ours: `${r.ms.toFixed(3)} ms`, theirs: `${r.msOrt.toFixed(3)} ms`, ratio: r.msOrt / r.ms });
  }
  console.log(`package size (gzip -9): onemodel.wasm ${(gzip[0] / 1024).toFixed(1)} KiB + onemodel.mjs ${(gzip[1] / 1024).toFixed(1)} KiB = ${((gzip[0] + gzip[1]) / 1024).toFixed(1)} KiB\n`);
}

// ---- the Session and eager against onnxruntime-web on the test suite's model families -----------
// Each family of tests/js/families.mjs with PyTorch's weights (its fixture's state dict, loaded
// as the parity tests load it), traced once with a symbolic batch at its fixture's trace case
// (the other axes at that case's sizes); batch 1 and 8 are the first example repeated; eager is
// the model's forward under om.noGrad (eval mode) on the same feeds.
async function runFamilySessions() {
  const fam = await import('../tests/js/families.mjs');
  const rows = [];
  const only = process.env.OM_BENCH_FAMILIES?.split(',');
  for (const name of Object.keys(fam.FAMILIES).filter((f) => !only || only.includes(f))) {
    const fx = fam.loadFixture(name);
    const model = fam.buildLoaded(name, fx); // in eval mode
    const examples = fam.caseInputs(fx.cases[fx.trace_case]);
    let mine = null, theirs = null;
    try {
      const inputs = Object.fromEntries(Object.entries(examples).map(([k, t]) => [k, [t, ['batch', ...t.shape.slice(1).map(() => null)]]]));
      const traced = om.trace(model, inputs, { outputNames: [fam.FAMILIES[name].output] });
      const bytes = traced.toOnnx();
      traced.dispose();
      mine = await om.InferenceSession.create(bytes);
      theirs = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
      for (const batch of [1, 8]) {
        const feeds = om.tidy(() => Object.fromEntries(Object.entries(examples).map(([k, t]) =>
          [k, t.slice(0, 0, 1).expand(batch, ...t.shape.slice(1)).contiguous()])));
        try {
          const eagerOut = () => [model.forward(...Object.values(feeds))];
          const [msOurs, msOrt, msEager] = await sessionAgainstOrt(mine, theirs, feeds, `${name} batch ${batch}`, eagerOut);
          rows.push({ name, batch, ms: median(msOurs), msOrt: median(msOrt), msEager: median(msEager), shape: Object.values(feeds)[0].shape });
        } finally {
          om.dispose(feeds);
        }
      }
    } finally {
      om.dispose(examples);
      model.dispose();
      mine?.dispose();
      await theirs?.release();
    }
  }
  return rows;
}

function printFamilySessions(rows) {
  console.log(`Session and eager (forward under om.noGrad) vs onnxruntime-web (wasm, ${SIDES}) on the test suite's model families (PyTorch's weights), the same .onnx`);
  console.log('| family | input | Session ms | eager ms | ORT-web ms | ORT / Session | ORT / eager |\n|---|---|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(`| ${r.name} | [${r.shape}] | ${r.ms.toFixed(3)} | ${r.msEager.toFixed(3)} | ${r.msOrt.toFixed(3)} | ${(r.msOrt / r.ms).toFixed(2)} | ${(r.msOrt / r.msEager).toFixed(2)} |`);
    summary.push({ what: `eager forward (om.noGrad), family ${r.name} (PyTorch's weights), input [${r.shape}]`, peer: `${ORT_LABEL} on our trace`, ours: `${r.msEager.toFixed(3)} ms`, theirs: `${r.msOrt.toFixed(3)} ms`, ratio: r.msOrt / r.msEager });
    summary.push({ what: `Session run, family ${r.name} (PyTorch's weights), input [${r.shape}]`, peer: `${ORT_LABEL}, the same .onnx`, ours: `${r.ms.toFixed(3)} ms`, theirs: `${r.msOrt.toFixed(3)} ms`, ratio: r.msOrt / r.ms });
  }
  console.log('');
}

// ---- torch.onnx.export files against our own trace of the same model ----------------------------
// tools/bench_exports.py (Debian's PyTorch, run once into the cache) exports torchvision's ViT and
// ResNet-18, Hugging Face-style BERT and LLaMA (tools/transformers_ports.py's modules, random
// weights) and a bidirectional LSTM classifier at bench size with the state dicts it exported; the
// port (examples/torchvision/, examples/transformers/, the LSTM's below) loads the same weights and is traced with a symbolic batch (and sequence).
// torch's file runs in the Session (fast mode: the passes of src/runtime/passes.c) and in
// onnxruntime-web, our trace in the Session, at batch 1 and 8, one thread each, alternating samples;
// each output checked against ORT's; with the number of kernels in each plan.
// (functions, not consts: the top-level run calls runExports before this point of the module)
function exportTokens() { return 32; } // the token models' and the LSTM's sequence length (the image models' images are 64 x 64)
function exportModels() { return {
  vit: { outputs: ['logits'], module: '../examples/torchvision/vision_transformer.mjs', build: (e) => new e.VisionTransformer(64, 8, 4, 4, 128, 512, { numClasses: 10 }) },
  resnet18: { outputs: ['logits'], module: '../examples/torchvision/resnet.mjs', build: (e) => e.resnet18({ numClasses: 10 }) },
  // the configs of tools/bench_exports.py
  bert: { tokens: true, mask: true, outputs: ['last_hidden_state', 'pooler_output'], module: '../examples/transformers/bert.mjs', build: (e) => new e.BertModel({ vocab_size: 1000, hidden_size: 128, num_hidden_layers: 4, num_attention_heads: 4, intermediate_size: 512, hidden_act: 'gelu', max_position_embeddings: 128, type_vocab_size: 2, layer_norm_eps: 1e-12, pad_token_id: 0 }) },
  llama: { tokens: true, outputs: ['logits'], module: '../examples/transformers/llama.mjs', build: (e) => new e.LlamaForCausalLM({ vocab_size: 1000, hidden_size: 128, intermediate_size: 512, num_hidden_layers: 4, num_attention_heads: 4, num_key_value_heads: 2, hidden_act: 'silu', rms_norm_eps: 1e-6, rope_theta: 10000.0, tie_word_embeddings: false }) },
  // tools/bench_exports.py's BiLSTMClassifier, written here (no example holds it)
  lstm: { sequence: true, outputs: ['logits'], module: 'onemodel', build: () => new (biLstmClassifier())() },
}; }

/** A bidirectional batch-first LSTM(64, 128) over x [B, 32, 64], Linear(256, 10) on the last step. */
function biLstmClassifier() {
  return class BiLSTMClassifier extends om.nn.Module {
    constructor() {
      super();
      this.lstm = new om.nn.LSTM(64, 128, { batchFirst: true, bidirectional: true });
      this.fc = new om.nn.Linear(256, 10);
    }

    forward(x) { return om.tidy(() => this.fc.forward(this.lstm.forward(x)[0].select(1, -1))); }
  };
}

/** A model's inputs at batch b (om tensors, by input name) and the symbolic axes its trace declares. */
function exportInputs(m, b) {
  if (m.sequence) return { x: [om.randn([b, exportTokens(), 64], { seed: b }), ['batch', null, null]] };
  if (!m.tokens) return { x: [om.randn([b, 3, 64, 64], { seed: b }), ['batch', null, null, null]] };
  const ids = om.tidy(() => om.rand([b, exportTokens()], { seed: b }).mul(1000).long());
  const inputs = { input_ids: [ids, ['batch', 'seq']] };
  if (m.mask) inputs.attention_mask = [om.ones([b, exportTokens()], { dtype: 'int64' }), ['batch', 'seq']];
  return inputs;
}

async function runExports() {
  const dir = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'onemodel', 'bench-exports');
  const models = exportModels(), names = (process.env.OM_BENCH_EXPORTS ?? Object.keys(models).join(',')).split(',');
  const missing = names.filter((n) => models[n] && !existsSync(join(dir, `${n}.safetensors`)));
  if (missing.length && spawnSync('/usr/bin/python3', [join(ROOT, 'tools/bench_exports.py'), dir, ...missing], { stdio: 'inherit' }).status !== 0) {
    throw new Error('bench: tools/bench_exports.py failed (it needs Debian\'s python3-torch and python3-torchvision)');
  }
  const rows = [];
  for (const name of names) {
    const m = models[name];
    if (!m) throw new Error(`bench: OM_BENCH_EXPORTS names ${name}; the models are ${Object.keys(models).join(', ')}`);
    const torchBytes = readFileSync(join(dir, `${name}.onnx`));
    const exported = await import(m.module);
    const ourBytes = om.tidy(() => {
      const net = m.build(exported);
      const { tensors } = om.safetensors.load(readFileSync(join(dir, `${name}.safetensors`)));
      net.loadStateDict(tensors);
      net.eval();
      const inputs = exportInputs(m, 2);
      const traced = om.trace(net, inputs, { outputNames: m.outputs });
      const bytes = traced.toOnnx();
      traced.dispose();
      om.dispose([net, ...Object.values(tensors), ...Object.values(inputs).map(([t]) => t)]);
      return bytes;
    });
    const fromTorch = await om.InferenceSession.create(torchBytes), fromTrace = await om.InferenceSession.create(ourBytes);
    const theirs = await ort.InferenceSession.create(torchBytes, { executionProviders: ['wasm'] });
    try {
      for (const batch of [1, 8]) {
        const inputs = exportInputs(m, batch), feeds = Object.fromEntries(Object.entries(inputs).map(([k, [t]]) => [k, t]));
        try {
          const ortFeeds = () => Object.fromEntries(Object.entries(feeds).map(([k, t]) =>
            [k, t.dtype === 'int64' ? new ort.Tensor('int64', BigInt64Array.from(t.toArray(), BigInt), t.shape) : new ort.Tensor('float32', t.toArray(), t.shape)]));
          const want = await theirs.run(ortFeeds());
          for (const [who, s] of [['torch\'s file', fromTorch], ['our trace', fromTrace]]) {
            for (const out of theirs.outputNames) {
              const { err, scale } = maxDiff(om.tidy(() => Array.from(s.run(feeds)[out].toArray())), Array.from(want[out].data));
              if (!(err <= 1e-4 * Math.max(1, scale))) throw new Error(`${name} batch ${batch}: ${who} in the Session and ORT differ by ${err} (${out})`);
            }
          }
          for (const t of Object.values(want)) t.dispose();
          const run = (s) => () => om.tidy(() => { s.run(feeds); });
          const ms = (await alternate(run(fromTorch), run(fromTrace), async () => { const r = await theirs.run(ortFeeds()); for (const t of Object.values(r)) t.dispose(); })).ms;
          rows.push({ name, batch, torch: median(ms[0]), trace: median(ms[1]), ort: median(ms[2]),
            kernels: [fromTorch.planKernels.length, fromTrace.planKernels.length] });
        } finally {
          om.dispose(Object.values(feeds));
        }
      }
    } finally {
      fromTorch.dispose();
      fromTrace.dispose();
      await theirs.release();
    }
  }
  return rows;
}

function printExports(rows) {
  console.log(`torch.onnx.export files (opset 17) in the Session against our trace of the same model (same weights) and against onnxruntime-web (wasm, ${SIDES}) on the torch file`);
  console.log('| model | batch | torch file, Session ms | our trace, Session ms | torch file, ORT-web ms | trace / torch file | ORT / torch file | kernels (torch file, trace) |\n|---|---:|---:|---:|---:|---:|---:|---|');
  for (const r of rows) {
    console.log(`| ${r.name} | ${r.batch} | ${r.torch.toFixed(3)} | ${r.trace.toFixed(3)} | ${r.ort.toFixed(3)} | ${(r.trace / r.torch).toFixed(2)} | ${(r.ort / r.torch).toFixed(2)} | ${r.kernels.join(', ')} |`);
    summary.push({ what: `Session run, torch.onnx.export of ${r.name}, batch ${r.batch}`, peer: `${ORT_LABEL}, the same .onnx`, ours: `${r.torch.toFixed(3)} ms`, theirs: `${r.ort.toFixed(3)} ms`, ratio: r.ort / r.torch });
  }
  console.log('');
}

// ---- tracing with symbolic axes: what the runs at other sizes cost ------------------------------
// om.trace with symbolic axes runs the model seven more times (a base run and six at other
// sizes; more when a fit needs them) and then over each symbol's whole range (about 15 runs a
// symbol and as many with all of them at once), shape only (no kernels on the
// inputs' values), and probes each call's extents; against one eager forward (noGrad) of the
// same model and a trace at fixed shapes, alternating samples in this process.
async function runTraceCost() {
  const gptZoo = await import('../examples/zoo/gpt.mjs');
  const resnetZoo = await import('../examples/zoo/resnet.mjs');
  const nn = om.nn;
  const models = [];
  om.manualSeed(4);
  const gpt = new gptZoo.GPT({ vocab: 512, d: 256, heads: 8, maxLen: 128 }).eval();
  gpt.h.dispose();
  gpt.h = new nn.ModuleList(Array.from({ length: 6 }, () => new gptZoo.Block(256, 8, 128, 'sdpa'))).eval();
  const ids = om.tidy(() => om.rand([8, 64], { seed: 1 }).mul(512).long());
  models.push(['GPT-style decoder, 6 blocks, d 256, batch 8 x 64 tokens', gpt, { x: [ids, ['batch', 'seq']] }]);
  const resnet = new resnetZoo.ResNet().eval(); // the zoo file's own model may be disposed (the Session part runs first)
  const img = om.randn([8, 3, 64, 64], { seed: 1 });
  models.push(['zoo ResNet, batch 8 x 3 x 64 x 64', resnet, { x: [img, ['batch', null, 'height', 'width']] }]);
  const lstm = new nn.LSTM(64, 128, { batchFirst: true });
  const seq = om.randn([8, 32, 64], { seed: 2 });
  const rnn = { forward: (x) => { const [out] = lstm.forward(x); return out.select(1, x.shape[1] - 1); } };
  models.push(['LSTM(64, 128), batch 8 x 32 steps, last step', rnn, { x: [seq, ['batch', 'seq', null]] }]);
  const zoos = await Promise.all(['mlp', 'lenet', 'lstm', 'resnet', 'unet', 'gpt'].map((n) => import(`../examples/zoo/${n}.mjs`)));
  for (const { default: z } of zoos) models.push([`zoo ${z.title}`, z.model.eval(), z.inputs]);
  const rows = [];
  for (const [name, model, inputs] of models) {
    const fixed = Object.fromEntries(Object.entries(inputs).map(([k, [t]]) => [k, t]));
    const kinds = [
      ['forward', () => om.tidy(() => { om.noGrad(() => model.forward(...Object.values(fixed))); })],
      ['fixed', () => om.trace(model, fixed).dispose()],
      ['symbolic', () => om.trace(model, inputs).dispose()],
    ];
    const ms = kinds.map(() => []);
    for (let s = 0; s < 2 + SAMPLES; s++) {
      kinds.forEach(([, fn], k) => {
        const t0 = performance.now();
        fn();
        if (s >= 2) ms[k].push(performance.now() - t0); // two warm-ups
      });
    }
    const [f, t, y] = ms.map(median);
    const tm = om.trace(model, inputs);
    rows.push({ name, forward: f, fixed: t, symbolic: y, nodes: tm.graph().nodes.length });
    tm.dispose();
  }
  gpt.dispose();
  resnet.dispose();
  lstm.dispose();
  om.dispose([ids, img, seq]);
  const wf = await import('../examples/lib/workflow.mjs'); // the zoo files' own models and inputs
  for (const zoo of [gptZoo, resnetZoo, ...zoos]) wf.disposeModelFile(zoo.default); // disposing twice is a no-op
  return rows;
}

function printTraceCost(rows) {
  console.log(`\ntracing with symbolic axes (median of ${SAMPLES}, alternating): one eager forward, om.trace at fixed shapes, om.trace with symbolic axes`);
  console.log('| model | forward ms | trace fixed ms | trace symbolic ms | symbolic / forward | symbolic / fixed | nodes |\n|---|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(`| ${r.name} | ${r.forward.toFixed(1)} | ${r.fixed.toFixed(1)} | ${r.symbolic.toFixed(1)} | ${(r.symbolic / r.forward).toFixed(2)} | ${(r.symbolic / r.fixed).toFixed(2)} | ${r.nodes} |`);
  }
}
printTraceCost(await runTraceCost());

// ---- export: trace, toOnnx, saveOnnx, and ORT loading the same bytes ---------------------------
async function runExport(layers, width) {
  om.manualSeed(1);
  class MLP extends om.nn.Module {
    constructor() {
      super();
      this.layers = Array.from({ length: layers }, () => new om.nn.Linear(width, width));
    }

    forward(x) { return this.layers.reduce((h, l, i) => l.forward(i ? h.relu() : h), x); }
  }
  const net = new MLP();
  const x = om.randn([4, width], { seed: 2 });
  const weightBytes = layers * (width * width + width) * 4;
  const timeIt = (fn) => {
    const ms = [];
    let out;
    for (let s = 0; s < 5; s++) {
      const t0 = performance.now();
      out = fn();
      ms.push(performance.now() - t0);
    }
    return [median(ms), out];
  };
  const [msTrace] = timeIt(() => om.trace(net, { x: [x, ['batch', null]] }).dispose());
  const traced = om.trace(net, { x: [x, ['batch', null]] });
  const [msToOnnx, bytes] = timeIt(() => traced.toOnnx());
  const dir = join(ROOT, 'build', 'bench');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'mlp.onnx');
  traced.saveOnnx(file); // once, so the heap figure below sees steady state
  const before = process.memoryUsage().arrayBuffers;
  const [msSave] = timeIt(() => traced.saveOnnx(file));
  const grown = process.memoryUsage().arrayBuffers - before;
  const loads = [];
  for (let s = 0; s < 5; s++) {
    const t0 = performance.now();
    const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
    loads.push(performance.now() - t0);
    await session.release();
  }
  traced.dispose();
  net.dispose();
  x.dispose();
  return { layers, width, weightBytes, fileBytes: bytes.length, msTrace, msToOnnx, msSave, msOrtLoad: median(loads), grown };
}

const exp = await runExport(Number(process.env.OM_BENCH_EXPORT_LAYERS) || 8, 1024);
const mib = (b) => (b / 2 ** 20).toFixed(1);
console.log(`\nexport: ${exp.layers} x Linear(${exp.width}, ${exp.width}), ${mib(exp.weightBytes)} MiB of weights, ` +
  `.onnx ${mib(exp.fileBytes)} MiB; median of 5`);
console.log(`| step | ms | MiB/s |\n|---|---:|---:|`);
for (const [step, ms] of [['om.trace (record + finish)', exp.msTrace], ['traced.toOnnx()', exp.msToOnnx],
  ['traced.saveOnnx(file)', exp.msSave], ['ORT-web InferenceSession.create (same bytes)', exp.msOrtLoad]]) {
  console.log(`| ${step} | ${ms.toFixed(1)} | ${(exp.fileBytes / 2 ** 20 / (ms / 1000)).toFixed(0)} |`);
}
console.log(`ArrayBuffer memory grown while saveOnnx streamed the file: ${mib(exp.grown)} MiB`);

// Threads: 2 against 1 (tools/bench_threads.mjs), in wall time since more cores is the point, the
// ratio the median of the rounds' ratios; after each case, as a row, its ceiling on this shared
// machine: two 1-thread instances running it at once, against one.
{
  for (const c of await runThreads()) {
    summary.push({ what: `threads: ${c.name}, 2 threads (wall time)`, peer: 'the same on 1 thread', ours: `${c.two.toFixed(2)} ms`, theirs: `${c.one.toFixed(2)} ms`, ratio: c.speedup });
    summary.push({ what: `threads: ${c.name}, the machine's ceiling: two 1-thread instances at once`, peer: '1 thread', ours: `${c.pair.toFixed(2)} ms each`, theirs: `${c.one.toFixed(2)} ms`, ratio: c.ceiling });
  }
  om.setNumThreads(1);
}
printSummary();
const mem = om.memory();
if (mem.tensors !== 0) console.error(`bench: ${mem.tensors} onemodel tensors still alive`);
