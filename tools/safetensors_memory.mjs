// Peak memory of om.safetensors on a large synthetic file (docs/performance.md). Not a test: it
// writes a file of about MB megabytes (default 400) to a temporary directory, then runs each way
// of loading it in a fresh Node process and prints that process's peak resident memory (VmHWM)
// above the same process's right after om.ready(), next to the bytes of the loaded tensors.
//
//   node tools/safetensors_memory.mjs [MB]
//
// The file is F32 (a GPT-2-like mix: one tensor of 30% of the weights, the rest in 8 MB tensors)
// plus one F16 tensor of 10% (widened to float32 on load, so it takes twice its file bytes).
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as om from 'onemodel';

const MiB = 2 ** 20;

/** Peak resident memory of this process so far, in bytes. */
function peakRss() {
  return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
}

/** Writes the synthetic file at path without holding it in memory; returns its size. */
function writeSynthetic(path, mb) {
  const total = mb * MiB;
  const tensors = [['wte', 'F32', Math.floor((0.3 * total) / 4 / 768) * 768], ['f16', 'F16', Math.floor((0.1 * total) / 2)]];
  for (let i = 0, rest = Math.floor((0.6 * total) / 4); rest > 0; i++, rest -= 2 * MiB) tensors.push([`h.${i}.w`, 'F32', Math.min(2 * MiB, rest)]);
  const header = {};
  let at = 0;
  for (const [name, dtype, n] of tensors) {
    const size = n * (dtype === 'F16' ? 2 : 4);
    header[name] = { dtype, shape: [n], data_offsets: [at, at + size] };
    at += size;
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (text.length % 8)) % 8);
  const head = new Uint8Array(8 + text.length);
  new DataView(head.buffer).setBigUint64(0, BigInt(text.length), true);
  head.set(new TextEncoder().encode(text), 8);
  const fd = openSync(path, 'w');
  writeSync(fd, head);
  const block = new Uint8Array(8 * MiB);
  for (let i = 0; i < block.length; i += 4) block.set([0, 0, 0x80, 0x3f], i); // 1.0f (and F16 0.0, 1.875)
  for (let left = at; left > 0; left -= block.length) writeSync(fd, block, 0, Math.min(block.length, left));
  closeSync(fd);
  return head.length + at;
}

/** One measurement, in this (fresh) process: prints a JSON line. */
async function measure(mode, path) {
  await om.ready();
  const base = peakRss();
  let tensors;
  let out = 0;
  if (mode === 'load') tensors = om.safetensors.load(readFileSync(path)).tensors;
  else tensors = om.safetensors.loadFile(path).tensors;
  const weights = om.memory().bytes;
  if (mode === 'loadFile+save') out = om.safetensors.save(tensors).length;
  console.log(JSON.stringify({ mode, weights, peakAbove: peakRss() - base, out }));
}

const [, , first, second] = process.argv;
if (first === '--measure') {
  await measure(second, process.argv[4]);
} else {
  const mb = Number(first ?? 400);
  const dir = mkdtempSync(join(tmpdir(), 'om-safetensors-memory-'));
  try {
    const path = join(dir, 'synthetic.safetensors');
    const size = writeSynthetic(path, mb);
    console.log(`file: ${(size / MiB).toFixed(1)} MiB`);
    for (const mode of ['load', 'loadFile', 'loadFile+save']) {
      const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--measure', mode, path], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`${mode}: ${r.stderr}`);
      const m = JSON.parse(r.stdout);
      console.log(`${mode.padEnd(14)} tensors ${(m.weights / MiB).toFixed(1)} MiB, peak above ready(): ${(m.peakAbove / MiB).toFixed(1)} MiB`
        + ` = ${(m.peakAbove / m.weights).toFixed(2)}x the tensors${mode === 'load' ? ` (the file's bytes: ${(size / MiB).toFixed(1)} MiB of it)` : ''}`
        + `${m.out ? ` (the saved file: ${(m.out / MiB).toFixed(1)} MiB)` : ''}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
