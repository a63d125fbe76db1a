// interpolate by a scale factor whose sizes PyTorch rounds in double (docs/symbolic-axes.md,
// "Integers rounded from a float product"), traced with a symbolic H and no declared range: the
// graph computes floor(double(H) * s) as ATen does. For each scale:
// 1. PyTorch's output height at every H from 1 to 100,000 (tools/pytorch_interpolate_sizes.py,
//    run with Debian's /usr/bin/python3 and torch; skipped with a note where it is missing) against
//    Math.floor(H * s) and, where the integer ratio nearest s (floor(7H / 10) for 0.7) is off,
//    against onemodel's eager output there;
// 2. the traced model in onnxruntime-web and the Session against eager: nearest and bilinear at
//    every H from 1 to DENSE, the other modes (bilinear with alignCorners, bicubic either way,
//    nearest with recomputeScaleFactor) to DENSE_OTHER; every mode at the first EDGES sizes up to
//    100,000 where the integer ratio is off, nearest at every 997th too.
// Exits 1 when a check fails. npm run sweep:interpolate [-- DENSE DENSE_OTHER EDGES] (44,709 checks,
// 2.6 CPU minutes, 22 minutes on two busy cores with the defaults; tests/js/computed-sizes.test.mjs checks a few sizes
// of each in npm test).
import * as om from 'onemodel';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tracedChecks } from '../examples/lib/oracle.mjs';

await om.ready();
const F = om.nn.functional;
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SCALES = [0.7, 0.35, 1.15, 1.4, 0.3, 1 / 3, 2.5, 0.1, 1.7];
const TOP = 100000;
const DENSE = Number(process.argv[2] ?? 2000), DENSE_OTHER = Number(process.argv[3] ?? 200), EDGES = Number(process.argv[4] ?? 30);
const MODES = [['nearest'], ['bilinear', false], ['bilinear', true], ['bicubic', false], ['bicubic', true], ['nearest', undefined, true]];
const W = 3; // the other spatial axis, kept (scale 1)
let failed = 0;

/** The integer ratio p / q (q <= 24) nearest s: the floor division a size fit would take. */
function ratio(s) {
  let best = [Math.round(s), 1];
  for (let q = 1; q <= 24; q++) {
    const p = Math.round(s * q);
    if (Math.abs(p / q - s) < Math.abs(best[0] / best[1] - s)) best = [p, q];
  }
  return best;
}

// 1. PyTorch's sizes
const torch = (() => {
  if (!existsSync('/usr/bin/python3')) return null;
  const dir = mkdtempSync(join(tmpdir(), 'interp-sizes-')), out = join(dir, 'sizes.json');
  const r = spawnSync('/usr/bin/python3', [join(ROOT, 'tools/pytorch_interpolate_sizes.py'), out, String(TOP), ...SCALES.map(String)], { stdio: 'inherit' });
  const sizes = r.status === 0 ? JSON.parse(readFileSync(out, 'utf8')) : null;
  rmSync(dir, { recursive: true, force: true });
  return sizes;
})();
if (!torch) console.log('PyTorch sizes: skipped (tools/pytorch_interpolate_sizes.py needs /usr/bin/python3 with torch)');
const edges = new Map();
for (const s of SCALES) {
  const [p, q] = ratio(s), off = [];
  let mathFloor = 0, eager = 0;
  const row = torch?.sizes[String(s)];
  for (let h = 1; h <= TOP; h++) {
    const size = Math.floor(h * s);
    if (row && row[h - 1] !== size) mathFloor++;
    const isOff = Math.floor((p * h) / q) !== size;
    if (isOff) off.push(h);
    if ((isOff || h % 997 === 0) && row && size > 0) { // eager's own size there, against PyTorch's
      const got = om.tidy(() => F.interpolate(om.zeros([0, 1, h, 1]), { scaleFactor: [s, 1] }).shape[2]);
      if (got !== row[h - 1]) eager++;
    }
  }
  edges.set(s, off);
  failed += mathFloor + eager;
  console.log(`by ${s}: floor(${p}H/${q}) is off at ${off.length} sizes up to ${TOP} (first ${off.slice(0, 4).join(', ') || 'none'})` +
    (row ? `; PyTorch vs Math.floor(H * s): ${mathFloor} differ, vs onemodel's eager there and at every 997th H: ${eager} differ` : ''));
}

// 2. the graphs, both engines, against eager
let checks = 0, worst = 0;
for (const s of SCALES) {
  for (const [mode, alignCorners, recompute] of MODES) {
    const opts = { scaleFactor: [s, 1], mode, ...(alignCorners === undefined ? {} : { alignCorners }), ...(recompute ? { recomputeScaleFactor: true } : {}) };
    const model = (t) => F.interpolate(t, opts);
    const first = Math.ceil(1 / s); // the smallest H with an output row
    const example = Math.max(first + 2, 9);
    let tm;
    try {
      tm = om.trace(model, { x: [om.randn([1, 2, example, W], { seed: 1 }), [null, null, 'H', null]] });
    } catch (e) {
      failed++;
      console.log(`by ${s}, ${JSON.stringify(opts)}: not traced: ${e.message}`);
      continue;
    }
    const sizes = [], dense = (mode === 'nearest' && !recompute) || (mode === 'bilinear' && !alignCorners) ? DENSE : DENSE_OTHER;
    for (let h = first; h <= dense; h++) sizes.push(h);
    sizes.push(...edges.get(s).filter((h) => h > dense).slice(0, EDGES));
    if (mode === 'nearest' && !recompute) {
      for (let h = DENSE + 997; h <= TOP; h += 997) sizes.push(h);
      sizes.push(TOP);
    }
    const oracle = tracedChecks(tm);
    const pending = [];
    for (const h of sizes) {
      const x = om.randn([1, 2, h, W], { seed: h });
      const y = model(x);
      pending.push(oracle.check({ x }, y).then((r) => {
        checks++;
        for (const o of [...r.outputs, ...r.session]) worst = Math.max(worst, o.maxError);
      }));
      om.dispose([x, y]);
    }
    await oracle.run();
    const bad = (await Promise.allSettled(pending)).filter((r) => r.status === 'rejected');
    failed += bad.length;
    console.log(`by ${s}, ${mode}${alignCorners === undefined ? '' : ` alignCorners ${alignCorners}`}${recompute ? ' recomputeScaleFactor' : ''}: ` +
      `H ${tm.outputs[0].shape[2]}, ${sizes.length} sizes from ${first} to ${sizes[sizes.length - 1]}, ${bad.length} failing${bad.length ? `: ${bad[0].reason.message}` : ''}`);
    oracle.dispose();
    tm.dispose();
  }
}
console.log(`${checks} checks passed, ${failed} failed; largest difference from eager in either engine ${worst}`);
process.exitCode = failed ? 1 : 0;
