// interpolate by a scale factor PyTorch rounds off, traced over the range its refusal declares
// (docs/symbolic-axes.md, "Integers the model computes from sizes"): H by 0.7 declared up to 89,
// W by 0.35 up to 179, in every mode (nearest, bilinear and bicubic, alignCorners either way),
// run in onnxruntime-web and the Session at every size of the range against eager. Exits 1 when
// a check fails. npm run sweep:interpolate (about 30 s; tests/js/computed-sizes.test.mjs checks
// a dozen sizes of each range in npm test).
import * as om from 'onemodel';
import { tracedChecks } from '../examples/lib/oracle.mjs';

await om.ready();
const F = om.nn.functional;
const MODES = [['nearest'], ['bilinear', false], ['bilinear', true], ['bicubic', false], ['bicubic', true]];
const FIXED = 12; // the other spatial axis
let checks = 0, worst = 0, failed = 0;
for (const [axis, scale, max, min] of [[2, 0.7, 89, 2], [3, 0.35, 179, 3]]) {
  for (const [mode, alignCorners] of MODES) {
    const scaleFactor = axis === 2 ? [scale, 1] : [1, scale];
    const model = (t) => F.interpolate(t, { scaleFactor, mode, ...(alignCorners === undefined ? {} : { alignCorners }) });
    const dim = om.Dim(axis === 2 ? 'H' : 'W', { max });
    const axes = [null, null, axis === 2 ? dim : null, axis === 3 ? dim : null];
    const tm = om.trace(model, { x: [om.randn([1, 2, FIXED, FIXED], { seed: 1 }), axes] });
    const oracle = tracedChecks(tm);
    const pending = [];
    for (let size = min; size <= max; size++) {
      const x = om.randn(axis === 2 ? [1, 2, size, FIXED] : [1, 2, FIXED, size], { seed: size });
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
    console.log(`${dim.name} by ${scale}, ${mode}${alignCorners === undefined ? '' : ` alignCorners ${alignCorners}`}: sizes ${min} to ${max}, ${bad.length} failing${bad.length ? `: ${bad[0].reason.message}` : ''}`);
    oracle.dispose();
    tm.dispose();
  }
}
console.log(`${checks} checks passed, ${failed} failed; largest difference from eager in either engine ${worst}`);
process.exitCode = failed ? 1 : 0;
