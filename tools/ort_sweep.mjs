// A sweep of attribute combinations of the ops whose lowering depends on their attributes
// (conv1d, conv2d, conv_transpose2d, max_pool2d, avg_pool2d, adaptive_avg_pool2d, pad,
// interpolate): each configuration eager accepts is traced at fixed shapes and run in
// onnxruntime-web and in the library's Session (examples/lib/oracle.mjs checkTraced), so a
// configuration that either refuses to load or run, or runs differently, shows up. This is how the rewrites in docs/operators.md
// ("ONNX lowering" of the convolutions, pools and interpolate) were found; run it again when the
// pinned onnxruntime-web changes.
//
//   node tools/ort_sweep.mjs [--only family,...] [--every n]
//
// Families: conv1d conv2d conv_transpose2d max_pool2d avg_pool2d adaptive_avg_pool2d pad
// nearest bilinear bicubic. --every n runs about one configuration in n of each family, spread
// by a multiplicative hash of its index (not a stride, which would keep to some values of an axis);
// the tests run such a slice. Prints, per family, how many configurations agreed, how many eager refused (not
// PyTorch-valid) and the trace-time refusals grouped by reason (the documented ones, such as
// adaptive pooling with uneven cells); then every configuration ORT refused or disagreed on.
// Exits 1 when there is one, 0 otherwise, 2 on a usage error.
import * as om from 'onemodel';
import { checkTraced } from '../examples/lib/oracle.mjs';

const F = om.nn.functional;
const range = (n, from = 0) => Array.from({ length: n }, (_, i) => i + from);

/** Every combination of the lists in axes ({ name: [values] }), as objects. */
function* product(axes) {
  const names = Object.keys(axes);
  const at = names.map(() => 0);
  for (;;) {
    yield Object.fromEntries(names.map((n, i) => [n, axes[n][at[i]]]));
    let i = names.length - 1;
    while (i >= 0 && ++at[i] === axes[names[i]].length) at[i--] = 0;
    if (i < 0) return;
  }
}

// Each family: the configurations (one spatial axis swept, the other fixed, since the lowering
// treats the axes alike) and, for one, [input shapes, function of the inputs].
const FAMILIES = {
  conv1d: () => [product({ w: range(7, 1), k: [1, 2, 3], s: [1, 2, 3], p: [0, 1, 2, 3], d: [1, 2, 3], g: [1, 2] }),
    (c) => [[[2, 4, c.w], [2, 4 / c.g, c.k], [2]], (x, w, b) => F.conv1d(x, w, b, { stride: c.s, padding: c.p, dilation: c.d, groups: c.g })]],
  conv2d: () => [product({ w: range(7, 1), k: [1, 2, 3], s: [1, 2, 3], p: [0, 1, 2, 3], d: [1, 2, 3], g: [1, 2], bias: [false, true] }),
    (c) => [[[2, 4, 3, c.w], [4, 4 / c.g, 2, c.k], ...(c.bias ? [[4]] : [])],
      (x, w, b) => F.conv2d(x, w, b ?? null, { stride: [1, c.s], padding: [1, c.p], dilation: [2, c.d], groups: c.g })]],
  conv_transpose2d: () => [product({ w: range(5, 1), k: [1, 2, 3], s: [1, 2, 3], p: [0, 1, 2, 3], op: [0, 1, 2], d: [1, 2, 3], g: [1, 2], bias: [false, true] }),
    (c) => [[[2, 4, 2, c.w], [4, 6 / c.g, 2, c.k], ...(c.bias ? [[6]] : [])],
      (x, w, b) => F.convTranspose2d(x, w, b ?? null, { stride: [1, c.s], padding: [0, c.p], outputPadding: [0, c.op], dilation: [1, c.d], groups: c.g })]],
  max_pool2d: () => [product({ w: range(8, 1), k: [1, 2, 3, 4], s: [1, 2, 3], p: [0, 1, 2], d: [1, 2, 3], ceil: [false, true] }),
    (c) => [[[2, 3, 3, c.w]], (x) => F.maxPool2d(x, [2, c.k], { stride: [1, c.s], padding: [1, c.p], dilation: [1, c.d], ceilMode: c.ceil })]],
  avg_pool2d: () => [product({ w: range(8, 1), k: [1, 2, 3, 4], s: [1, 2, 3], p: [0, 1, 2], ceil: [false, true], cip: [false, true] }),
    (c) => [[[2, 3, 3, c.w]], (x) => F.avgPool2d(x, [2, c.k], { stride: [1, c.s], padding: [1, c.p], ceilMode: c.ceil, countIncludePad: c.cip })]],
  adaptive_avg_pool2d: () => [product({ h: range(7, 1), w: range(10, 1), o: [...range(10, 1), null] }),
    (c) => [[[2, 3, c.h, c.w]], (x) => F.adaptiveAvgPool2d(x, [c.h > 3 ? 2 : 1, c.o])]],
  pad: () => [product({ shape: [[4], [3, 4], [2, 3, 4], [2, 2, 3, 4], [1, 2, 1, 3, 2]], mode: ['constant', 'reflect', 'replicate'], n: [1, 2, 3], t: range(25) }),
    (c) => {
      const pads = range(2 * c.n).map((i) => ((c.t * 7 + i * 3 + c.n) % 7) - 2);
      return [[c.shape], (x) => F.pad(x, pads, c.mode, c.mode === 'constant' ? 0.5 : undefined)];
    }],
  nearest: () => [product({ i: range(24, 1), o: [...range(40, 1), 0.3, 0.5, 0.6, 0.7, 0.75, 4 / 7, 8 / 7, 1.1, 1.5, 2.3, 5.125, 12 + 1 / 3] }),
    (c) => [[[1, 2, 2, c.i]], (x) => F.interpolate(x, Number.isInteger(c.o) ? { size: [3, c.o] } : { scaleFactor: [1.5, c.o] })]],
  bilinear: () => [product({ i: range(9, 1), o: [...range(20, 1), ...range(40, 1).map((k) => k / 8)], ac: [false, true] }),
    (c) => [[[1, 2, 2, c.i]], (x) => F.interpolate(x, { ...(Number.isInteger(c.o) ? { size: [3, c.o] } : { scaleFactor: [1.5, c.o] }), mode: 'bilinear', alignCorners: c.ac })]],
  bicubic: () => [product({ i: range(9, 1), o: [...range(12, 1), 0.3, 0.5, 0.75, 1.1, 1.5, 2.5, 4, 10 / 3], ac: [false, true] }),
    (c) => [[[1, 2, 2, c.i]], (x) => F.interpolate(x, { ...(Number.isInteger(c.o) ? { size: [3, c.o] } : { scaleFactor: [1.5, c.o] }), mode: 'bicubic', alignCorners: c.ac })]],
};

/**
 * Runs the families named (all by default), about one configuration in `every` of each. Returns
 * { families: { name: { agreed, eagerRefused, refused: Map(reason -> [config]) } }, failures:
 * [{ family, config, message }] }.
 */
export async function sweep({ only = Object.keys(FAMILIES), every = 1 } = {}) {
  await om.ready();
  const result = { families: {}, failures: [] };
  let seed = 1;
  for (const family of only) {
    const stats = { agreed: 0, eagerRefused: 0, refused: new Map() };
    result.families[family] = stats;
    const [configs, build] = FAMILIES[family]();
    let k = 0;
    for (const config of configs) {
      if (every > 1 && Math.imul(k++, 2654435761) >>> 0 >= 2 ** 32 / every) continue; // a spread 1 in every
      const [shapes, fn] = build(config);
      const xs = shapes.map((s) => om.randn(s, { seed: seed++ }));
      let eager;
      try {
        eager = om.tidy(() => fn(...xs));
      } catch {
        stats.eagerRefused++;
        om.dispose(xs);
        continue;
      }
      let tm = null;
      try {
        tm = om.trace((x) => fn(x, ...xs.slice(1)), { x: xs[0] });
        await checkTraced(tm, { x: xs[0] }, eager);
        stats.agreed++;
      } catch (e) {
        if (!tm && e instanceof om.TraceError) {
          const reason = `${e.kind}: ${e.message.replace(/\d+x\d+/g, 'NxN').replace(/(?<![A-Za-z_])\d+(?![A-Za-z_])/g, 'N')}`;
          if (!stats.refused.has(reason)) stats.refused.set(reason, []);
          stats.refused.get(reason).push(config);
        } else {
          result.failures.push({ family, config, message: e.message.replace(/\s+/g, ' ').replace(/^.*ERROR_MESSAGE: \S+ ?/, '') });
        }
      } finally {
        tm?.dispose();
        om.dispose([xs, eager]);
      }
    }
  }
  return result;
}

function usage(why) {
  console.error(`${why}\nusage: node tools/ort_sweep.mjs [--only ${Object.keys(FAMILIES).join(',')}] [--every n]`);
  process.exit(2);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const opts = {};
  for (let i = 0; i < args.length; i += 2) {
    if (args[i] === '--only') {
      opts.only = (args[i + 1] ?? '').split(',');
      const bad = opts.only.find((f) => !(f in FAMILIES));
      if (bad !== undefined) usage(`unknown family ${JSON.stringify(bad)}`);
    } else if (args[i] === '--every') {
      opts.every = Number(args[i + 1]);
      if (!Number.isInteger(opts.every) || opts.every < 1) usage('--every takes a positive integer');
    } else {
      usage(`unknown argument ${JSON.stringify(args[i])}`);
    }
  }
  const r = await sweep(opts);
  for (const [family, s] of Object.entries(r.families)) {
    console.log(`${family}: ${s.agreed} agreed, ${s.eagerRefused} refused eagerly`);
    for (const [reason, configs] of s.refused) console.log(`  refused when traced (${configs.length}, e.g. ${JSON.stringify(configs[0])}): ${reason}`);
  }
  for (const f of r.failures) console.log(`FAIL ${f.family} ${JSON.stringify(f.config)}: ${f.message}`);
  console.log(r.failures.length ? `${r.failures.length} configurations disagree or fail in onnxruntime-web or the Session` : 'ok: every configuration agrees in onnxruntime-web and the Session');
  process.exit(r.failures.length ? 1 : 0);
}
