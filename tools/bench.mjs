// Matmul benchmark: native C, our WASM through the npm package, and onnxruntime-web's MatMul.
//
//   npm run bench                          bootstrap + build + this script
//   node tools/bench.mjs [N ...]           sizes (default 256 512 1024), square N x N @ N x N
//   env OM_BENCH_SAMPLES=7 OM_BENCH_MIN_MS=60 OM_BENCH_NATIVE=0 (skip the native run)
//
// All three count 2*N^3 flops per product and report the median GFLOP/s of several samples
// after warm-up (in JS >= 250 ms per side, so V8 has tiered up); the machine may be shared and
// noisy. A sample repeats the product until it lasts OM_BENCH_MIN_MS. Ours and ORT run in this
// one Node process, single thread, and their samples alternate (ours, ORT, ours, ...) so that
// load spikes hit both alike.
//   (a) native: build/native-release/om_bench_matmul (tools/bench_matmul.c), parsed from its
//       "matmul n=... gflops=..." lines;
//   (b) WASM: `import * as om from 'onemodel'` as a user would: om.randn, a.matmul(b), dispose;
//   (c) ORT: onnxruntime-web, wasm EP, numThreads = 1, a one-node MatMul model whose ONNX bytes
//       are encoded below; each run includes ORT's copies of the inputs in and the output out,
//       as a user's session.run does.
// Before timing, each size checks that our product and ORT's agree.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as om from 'onemodel';
import * as ort from 'onnxruntime-web';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SIZES = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [256, 512, 1024];
const SAMPLES = Number(process.env.OM_BENCH_SAMPLES) || 7;
const MIN_MS = Number(process.env.OM_BENCH_MIN_MS) || 60;
const WARM_MS = 250;
if (!SIZES.every((n) => Number.isInteger(n) && n > 0)) {
  console.error('usage: node tools/bench.mjs [N ...]   (positive integers)');
  process.exit(2);
}

const gflops = (n, ms) => (2 * n * n * n) / (ms * 1e6);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b), h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
};

// ---- a minimal protobuf encoder for one ONNX model: Y = MatMul(A, B) -----------------------
// Field numbers from onnx.proto (ModelProto, GraphProto, NodeProto, ValueInfoProto, TypeProto).
const utf8 = new TextEncoder();
function varint(v) {
  const out = [];
  for (v = BigInt(v); v >= 0x80n; v >>= 7n) out.push(Number(v & 0x7fn) | 0x80);
  out.push(Number(v));
  return out;
}
const vint = (field, v) => [...varint(field << 3), ...varint(v)];                 // wire type 0
const bytes = (field, b) => [...varint((field << 3) | 2), ...varint(b.length), ...b]; // wire type 2
const str = (field, s) => bytes(field, [...utf8.encode(s)]);
function valueInfo(name, dims) { // ValueInfoProto{name=1, type=2: TypeProto{tensor_type=1: {elem_type=1, shape=2}}}
  const shape = dims.flatMap((d) => bytes(1, vint(1, d)));        // TensorShapeProto.dim{dim_value=1}
  return [...str(1, name), ...bytes(2, bytes(1, [...vint(1, 1 /* FLOAT */), ...bytes(2, shape)]))];
}
function matmulModel(m, k, n) {
  const node = [...str(1, 'A'), ...str(1, 'B'), ...str(2, 'Y'), ...str(3, 'matmul'), ...str(4, 'MatMul')];
  const graph = [...bytes(1, node), ...str(2, 'bench'),
    ...bytes(11, valueInfo('A', [m, k])), ...bytes(11, valueInfo('B', [k, n])), ...bytes(12, valueInfo('Y', [m, n]))];
  return Uint8Array.from([...vint(1, 9) /* ir_version */, ...str(2, 'onemodel-bench') /* producer_name */,
    ...bytes(7, graph), ...bytes(8, [...str(1, ''), ...vint(2, 20)]) /* opset_import: "" v20 */]);
}

// ---- (a) native ------------------------------------------------------------------------------
function runNative() {
  const dir = join(ROOT, 'build', 'native-release'), exe = join(dir, 'om_bench_matmul');
  if (!existsSync(exe) && existsSync(join(dir, 'CMakeCache.txt'))) {
    // A build dir configured before tools/bench_matmul.c existed has no such target: re-run CMake.
    const ok = spawnSync('cmake', [dir], { stdio: 'ignore' }).status === 0 &&
      spawnSync('cmake', ['--build', dir, '--target', 'om_bench_matmul', '-j2'], { stdio: 'ignore' }).status === 0;
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
async function runWasmAndOrt(n) {
  const a = om.randn([n, n], { seed: 1 }), b = om.randn([n, n], { seed: 2 });
  const session = await ort.InferenceSession.create(matmulModel(n, n, n), { executionProviders: ['wasm'] });
  const feeds = {
    A: new ort.Tensor('float32', a.toArray(), [n, n]),
    B: new ort.Tensor('float32', b.toArray(), [n, n]),
  };
  const ours = () => { a.matmul(b).dispose(); };
  const theirs = async () => { const r = await session.run(feeds); r.Y.dispose(); };
  try {
    // Agreement check (also the first warm-up of both).
    const c = a.matmul(b), mine = c.toArray();
    c.dispose();
    const ref = (await session.run(feeds)).Y.data;
    let err = 0, scale = 0;
    for (let i = 0; i < ref.length; i++) {
      err = Math.max(err, Math.abs(mine[i] - ref[i]));
      scale = Math.max(scale, Math.abs(ref[i]));
    }
    if (!(err <= 1e-5 * scale * Math.sqrt(n))) throw new Error(`n=${n}: ours and ORT differ by ${err} (max |y| ${scale})`);

    // Warm-up (at least WARM_MS, so V8 has tiered the wasm up from its baseline compiler), and
    // how many products make a sample last MIN_MS (per side).
    const time = async (fn, reps) => {
      const t0 = performance.now();
      for (let i = 0; i < reps; i++) await fn();
      return (performance.now() - t0) / reps;
    };
    const warm = async (fn) => {
      const t0 = performance.now();
      do await fn(); while (performance.now() - t0 < WARM_MS);
      return time(fn, 2);
    };
    const repsOurs = Math.ceil(MIN_MS / Math.max(await warm(ours), 1e-3));
    const repsOrt = Math.ceil(MIN_MS / Math.max(await warm(theirs), 1e-3));
    const msOurs = [], msOrt = [];
    for (let s = 0; s < SAMPLES; s++) {
      msOurs.push(await time(ours, repsOurs));
      msOrt.push(await time(theirs, repsOrt));
    }
    return { wasm: gflops(n, median(msOurs)), ort: gflops(n, median(msOrt)), err };
  } finally {
    a.dispose();
    b.dispose();
    await session.release();
  }
}

// ---- main ------------------------------------------------------------------------------------
ort.env.wasm.numThreads = 1;
ort.env.logLevel = 'error';
await om.ready();

const cpu = cpus()[0]?.model ?? 'unknown CPU';
console.log(`matmul benchmark: ${cpus().length} cores, ${cpu}; Node ${process.version}, onnxruntime-web ${ort.env.versions?.web ?? '?'}`);
console.log(`square N x N @ N x N float32, single thread, GFLOP/s = 2N^3 / time, median of ${SAMPLES} samples of >= ${MIN_MS} ms\n`);

const native = process.env.OM_BENCH_NATIVE === '0' ? new Map() : runNative();
const rows = [];
for (const n of SIZES) rows.push({ n, native: native.get(n), ...(await runWasmAndOrt(n)) });

const fmt = (x, d = 2) => (x === undefined ? '-' : x.toFixed(d));
const table = [['N', 'native GFLOP/s', 'WASM GFLOP/s', 'ORT-web GFLOP/s', 'WASM/ORT']];
for (const r of rows) table.push([String(r.n), fmt(r.native), fmt(r.wasm), fmt(r.ort), fmt(r.wasm / r.ort)]);
const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
const line = (row) => `| ${row.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
console.log(line(table[0]));
console.log(`|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
for (const row of table.slice(1)) console.log(line(row));

const mem = om.memory();
if (mem.tensors !== 0) console.error(`bench: ${mem.tensors} onemodel tensors still alive`);
