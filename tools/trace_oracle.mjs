// The trace oracle's command: checks a model file (docs/demo.md) against its eager run in
// onnxruntime-web (the library is examples/lib/oracle.mjs):
//   node tools/trace_oracle.mjs path/to/model.mjs [--tol 1e-5]
// model.mjs default-exports { title?, model, inputs, outputNames?, train? }, model a function or
// an nn.Module, inputs as om.trace takes them ({ x: [example, ['batch', null]] } or { x: example }).
// It traces (in eval mode, untrained: the command does not run `train`), runs eager, runs the
// .onnx, prints each output's max error and exits 1 when any output disagrees (or anything
// fails), 0 otherwise; with symbolic axes it also runs both at other sizes of every symbol
// (otherShapes) and compares again. model.mjs must import the same onemodel (`import * as om
// from 'onemodel'` from inside this package).
import * as om from 'onemodel';
import { fmt } from '../examples/lib/oracle.mjs';
import * as wf from '../examples/lib/workflow.mjs';

/** The command: checks a model file, traces it, verifies it (workflow.mjs) and prints the report. */
async function main(argv) {
  const args = argv.slice(2);
  let tol = 1e-5;
  const files = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--tol') tol = Number(args[++i]);
    else files.push(args[i]);
  }
  if (files.length !== 1 || !(tol > 0)) {
    console.error('usage: node tools/trace_oracle.mjs path/to/model.mjs [--tol 1e-5]\n'
      + '  model.mjs default-exports { title?, model, inputs, outputNames?, train? } (docs/demo.md)');
    return 2;
  }
  const { pathToFileURL } = await import('node:url');
  const { resolve } = await import('node:path');
  await om.ready();
  let file;
  try {
    file = wf.checkModelFile(await import(pathToFileURL(resolve(files[0])).href), files[0]);
  } catch (e) {
    if (!(e instanceof om.OmError && e.kind === 'InvalidArgument')) throw e;
    console.error(e.message);
    return 2;
  }
  const traced = wf.traceModel(file);
  try {
    const sig = (v) => `${v.name}: ${v.dtype}${wf.shapeText(v.shape)}`;
    console.log(`traced ${files[0]}: inputs ${traced.inputs.map(sig).join('; ')}; ${traced.graph().nodes.length} nodes`);
    const report = await wf.verifyTraced(file, traced, { tol });
    report.checks.forEach((c, k) => {
      for (const o of c.outputs) {
        console.log(`  ${k ? 'at other sizes: ' : ''}${o.name} ${o.dtype}${wf.shapeText(o.shape)}: max error ${o.maxError} (bound ${fmt(o.bound)})`);
      }
      if (!c.ok) console.error(c.error);
    });
    if (!report.ok) return 1;
    console.log('ok: the .onnx agrees with the eager run');
    return 0;
  } finally {
    traced.dispose();
  }
}

main(process.argv).then((code) => { process.exitCode = code; }, (e) => {
  console.error(`trace_oracle: ${e instanceof om.OmError ? `${e.name} ${e.kind}: ${e.message}` : e?.stack ?? e}`);
  process.exitCode = 1;
});
