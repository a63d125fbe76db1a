// Exporting a model file from Node: train it (its train section), trace it, write the .onnx and
// the library format's .om next to it, verify it with onnxruntime-web and the library's Session
// (examples/lib/workflow.mjs does each part) and report one line.
// Used by examples/export-<model>.mjs and examples/start.mjs (npm start).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import * as om from 'onemodel';
import * as wf from './workflow.mjs';
import { fmt } from './oracle.mjs';

/** "x [batch, 2] -> y [batch, 1]": a traced model's signature. */
function signature(summary) {
  const list = (vs) => vs.map((v) => `${v.name} ${wf.shapeText(v.shape)}`).join(', ');
  return `${list(summary.inputs)} -> ${list(summary.outputs)}`;
}

/**
 * Trains, traces, writes `path` (the .onnx) and the .om beside it (traced.save()), and verifies
 * the model file `module` (what import() gave): resolves to { name, ok, path, omPath, seconds,
 * trainSeconds, losses, nodes, onnxBytes, omBytes, initializerBytes, signature, maxError,
 * sessionMaxError, shapes: [symbol sizes checked], error? }. Never rejects on a model's failure (ok
 * false, error the message); frees everything the file made.
 */
export async function exportModelFile(module, name, path) {
  const t0 = performance.now();
  const row = { name, ok: false, path, losses: [], shapes: [] };
  let file = null;
  let traced = null;
  try {
    file = wf.checkModelFile(module, `${name}.mjs`);
    if (file.train) row.losses = (await wf.trainModel(file)).losses;
    row.trainSeconds = (performance.now() - t0) / 1000;
    traced = wf.traceModel(file);
    const bytes = traced.toOnnx(), om1 = traced.save();
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, bytes);
    row.omPath = path.replace(/(\.onnx)?$/, '.om');
    writeFileSync(row.omPath, om1);
    row.omBytes = om1.length;
    const s = wf.summarizeTraced(traced, bytes);
    Object.assign(row, { nodes: s.nodeCount, onnxBytes: s.onnxBytes, initializerBytes: s.initializerBytes, signature: signature(s) });
    const report = await wf.verifyTraced(file, traced);
    row.maxError = report.maxError;
    row.sessionMaxError = report.sessionMaxError;
    row.shapes = report.checks.map((c) => c.symbols);
    row.ok = report.ok;
    if (!report.ok) row.error = report.checks.filter((c) => !c.ok).map((c) => c.error).join('\n');
  } catch (e) {
    row.error = e instanceof om.OmError ? `${e.name} ${e.kind}: ${e.message}` : e?.stack ?? String(e);
  } finally {
    traced?.dispose();
    if (file) wf.disposeModelFile(file);
  }
  row.seconds = (performance.now() - t0) / 1000;
  return row;
}

/**
 * The report line of exportModelFile's result, e.g.
 * "mlp: ok, 5 nodes, 5221 bytes (4740 of initializers), x [batch, 2] -> y [batch, 1], max error 0
 *  (onnxruntime-web), 0 (Session) at 4 shapes (batch=8; batch=1; batch=9; batch=17), loss 0.199 ->
 *  0.0111 in 50 steps, 0.7 s (training 0.2 s) -> out/mlp.onnx, out/mlp.om"
 */
export function reportLine(r) {
  const head = `${r.name}: ${r.ok ? 'ok' : 'FAILED'}`;
  if (r.nodes === undefined) return `${head}: ${r.error}`;
  const shapes = r.shapes.map((s) => Object.entries(s).map(([k, v]) => `${k}=${v}`).join(' ') || 'fixed').join('; ');
  const loss = r.losses.length ? `, loss ${fmt(r.losses[0])} -> ${fmt(r.losses.at(-1))} in ${r.losses.length} steps` : '';
  return `${head}, ${r.nodes} nodes, ${r.onnxBytes} bytes (${r.initializerBytes} of initializers), ${r.signature}, `
    + `max error ${fmt(r.maxError)} (onnxruntime-web), ${fmt(r.sessionMaxError)} (Session) at ${r.shapes.length} shapes (${shapes})${loss}, `
    + `${r.seconds.toFixed(1)} s (training ${r.trainSeconds.toFixed(1)} s) -> ${r.path}, ${r.omPath}`
    + (r.ok ? '' : `\n  ${r.error}`);
}

/**
 * The body of examples/export-<name>.mjs: exports `module` to the path given on the command line
 * (default out/<name>.onnx), prints the report line, and sets the exit code (1 on a failure).
 */
export async function exportScript(module, name) {
  const r = await exportModelFile(module, name, process.argv[2] ?? `out/${name}.onnx`);
  (r.ok ? console.log : console.error)(reportLine(r));
  process.exitCode = r.ok ? 0 : 1;
}
