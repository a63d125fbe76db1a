// torch.onnx.export files of models the bench does not hold (tools/probe_exports.py: torchvision's
// Swin-T, RegNet, MNASNet, EfficientNet-B0/B1, MobileNetV2/V3, ConvNeXt, ResNet-50, ResNeXt,
// ViT-B/16 and B/32, MaxViT, a BERT-style encoder and GPT-2-style decoder in plain torch, and an
// LSTM classifier) in the Session and in onnxruntime-web:
// each output's largest difference from PyTorch's own at batch 1 and 8 (and 3 x 20 tokens), then
// the speed at batch 1 and 8, one thread each side, alternating samples in this process, CPU time
// (OM_PROBE_THREADS=2: two threads each side, wall time).
//
//   npm run probe:exports                 bootstrap + build, the files into the cache, every model
//   node tools/probe_exports.mjs [NAME ...]   these models only (OM_PROBE_SAMPLES samples, default 5)
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as om from 'onemodel';
import * as ort from 'onnxruntime-web';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIR = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'onemodel', 'probe-exports');
const MODELS = ['bert_style', 'gpt2_style', 'lstm_classifier', 'mobilenet_v2', 'mobilenet_v3_small', 'regnet_y_400mf', 'mnasnet0_5',
                'efficientnet_b0', 'efficientnet_b1', 'convnext_tiny', 'resnet50', 'resnext50_32x4d', 'swin_t', 'vit_b_16', 'vit_b_32', 'maxvit_t'];
const SAMPLES = Number(process.env.OM_PROBE_SAMPLES) || 5;
// One thread each side by default, timed in CPU time; with two (OM_PROBE_THREADS=2) ORT's second
// thread is a worker whose time the process's CPU time counts too, so wall time is the fair measure.
const THREADS = Number(process.env.OM_PROBE_THREADS) || 1;
if (THREADS !== 1 && THREADS !== 2) throw new Error(`probe_exports: OM_PROBE_THREADS is ${THREADS}; 1 or 2`);
const names = process.argv.length > 2 ? process.argv.slice(2) : MODELS;
const missing = names.filter((n) => !existsSync(join(DIR, `${n}.json`)));
if (missing.length && spawnSync('/usr/bin/python3', [join(ROOT, 'tools/probe_exports.py'), DIR, ...missing], { stdio: 'inherit' }).status !== 0) {
  throw new Error('probe_exports: tools/probe_exports.py failed (it needs Debian\'s python3-torch and python3-torchvision)');
}
ort.env.wasm.numThreads = THREADS;
await om.ready();
om.setNumThreads(THREADS);

/** This process's CPU time in ms (ORT-web's one thread runs in it too), or wall time at two threads. */
const cpu = THREADS === 1 ? () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; } : () => performance.now();
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const raw = (file, Type) => { const b = readFileSync(file); return new Type(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)); };
const e = (v) => v.toExponential(2);

for (const name of names) {
  const ref = JSON.parse(readFileSync(join(DIR, `${name}.json`), 'utf8'));
  const bytes = readFileSync(join(DIR, `${name}.onnx`));
  const c0 = cpu();
  const ours = await om.InferenceSession.create(bytes);
  const createMs = cpu() - c0;
  const theirs = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
  /** The feeds of run `key` for the Session and for ORT (the same arrays). */
  const feedsOf = (key) => {
    const a = {}, b = {};
    for (const [k, { shape, dtype }] of Object.entries(ref[key].inputs)) {
      const type = dtype === 'torch.int64' ? 'int64' : 'float32';
      const data = raw(join(DIR, `${name}.${key}.${k}.bin`), type === 'int64' ? BigInt64Array : Float32Array);
      a[k] = { data, dims: shape, type };
      b[k] = new ort.Tensor(type, data, shape);
    }
    return [a, b];
  };
  for (const key of Object.keys(ref)) {
    const [f1, f2] = feedsOf(key);
    const out = ours.run(f1), got = await theirs.run(f2);
    const parts = Object.entries(ref[key].outputs).map(([o, { shape }]) => {
      const want = raw(join(DIR, `${name}.${key}.${o}.bin`), Float32Array), a = out[o].toArray(), b = got[o].data;
      if (String(out[o].shape) !== String(shape)) throw new Error(`${name} ${key}: ${o} has shape [${out[o].shape}], PyTorch's [${shape}]`);
      let mo = 0, mr = 0, scale = 0;
      for (let i = 0; i < want.length; i++) {
        mo = Math.max(mo, Math.abs(a[i] - want[i]));
        mr = Math.max(mr, Math.abs(b[i] - want[i]));
        scale = Math.max(scale, Math.abs(want[i]));
      }
      if (!(mo <= 1e-4 * Math.max(1, scale))) throw new Error(`${name} ${key}: ${o} differs from PyTorch's by ${mo} in the Session (largest value ${scale})`);
      return `${o} [${shape}]: largest |value| ${e(scale)}, Session ${e(mo)}, ORT-web ${e(mr)}`;
    });
    om.dispose(Object.values(out));
    console.log(`${name} ${key}: ${parts.join('; ')}`);
  }
  const kernels = Object.entries(ours.planKernels.reduce((m, k) => ((m[k] = (m[k] ?? 0) + 1), m), {})).sort((a, b) => b[1] - a[1]);
  console.log(`${name}: create ${createMs.toFixed(0)} ms CPU; ${ours.planKernels.length} kernels: ${kernels.map(([k, n]) => `${k} ${n}`).join(', ')}`);
  for (const key of Object.keys(ref).filter((k) => /^[18]x/.test(k))) {
    const [f1, f2] = feedsOf(key);
    const runOurs = () => om.dispose(Object.values(ours.run(f1)));
    const runTheirs = async () => { for (const t of Object.values(await theirs.run(f2))) t.dispose(); };
    for (let w = 0; w < 2; w++) runOurs(), await runTheirs(); // warm-up: V8's tiers, the kernels' scratch
    const ms = [[], []];
    for (let s = 0; s < SAMPLES; s++) {
      let c = cpu();
      runOurs();
      ms[0].push(cpu() - c);
      c = cpu();
      await runTheirs();
      ms[1].push(cpu() - c);
    }
    const [a, b] = ms.map(median);
    console.log(`| ${name} | ${key.split('x')[0]} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${(b / a).toFixed(2)} |`);
  }
  ours.dispose();
  await theirs.release();
}
