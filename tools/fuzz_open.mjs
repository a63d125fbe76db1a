// Fuzzes the demo page's piecewise .onnx and .om readers (web-demo/src/graphfile.js: openGraph,
// scanOnnx, openOm) against its whole-file reader (readGraph), on mutants of the reader fuzzer's
// seeds (tools/fuzz_seeds.mjs, the corpus tools/fuzz_onnx.sh starts from). For every mutant, with
// a random threshold for the weights left out and a random first piece size (1 byte upwards, so
// that every varint and field of an .onnx straddles a piece somewhere):
//   - readGraph(whole) throws  => openGraph throws the same error (class, kind, message);
//   - readGraph(whole) returns => openGraph returns the same graph, read in pieces (not whole);
//     an .om is read whole only when the Session refuses the whole file, and otherwise the
//     Session opens the weightless file openGraph writes exactly when it opens the whole one.
// Mutations: bytes flipped, set, cut, inserted, repeated; a length varint changed; the fields of
// a message on the weights' path (model, graph, initializer) shuffled (protobuf takes any order);
// half of the .om mutants resealed (the header's hash and sizes made to agree with the mutant).
// Exits 1 at the first mismatch, printing its seed and writing the mutant to build/fuzz-open/.
//
//   npm run fuzz:open [-- SECONDS [SEED]]     (default 60 s, seed 1; tests/js/web-demo-open.test.mjs runs a short one)
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as om from 'onemodel';
import { fuzzCorpus, fuzzOpen, sessionOpens } from './fuzz_open_lib.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const seconds = Number(process.argv[2] ?? 60), seed = Number(process.argv[3] ?? 1);
if (!(seconds > 0) || !Number.isInteger(seed)) throw new Error('usage: node tools/fuzz_open.mjs [SECONDS [SEED]]');

const seeds = fuzzCorpus();

await om.ready({ threads: false });
const report = await fuzzOpen(seeds, { seed, ms: seconds * 1000, opens: sessionOpens });
const oms = seeds.filter((b) => b.subarray(0, 8).toString() === 'ONEMODEL').length;
console.log(`fuzz:open: ${report.cases} mutants of ${seeds.length} seeds (${oms} .om; seed ${seed}): ${report.read} read alike (${report.leftOut} in pieces with weights left out, ${report.om} of them .om files the Session opens), ${report.refused} refused alike`);
if (report.mismatch) {
  const dir = join(ROOT, 'build', 'fuzz-open');
  mkdirSync(dir, { recursive: true });
  const ext = Buffer.from(report.mismatch.bytes.subarray(0, 8)).toString() === 'ONEMODEL' ? 'om' : 'onnx';
  const file = join(dir, `mismatch-${seed}-${report.mismatch.index}.${ext}`);
  writeFileSync(file, report.mismatch.bytes);
  console.error(`fuzz:open: MISMATCH at mutant ${report.mismatch.index} (large ${report.mismatch.large}, piece ${report.mismatch.piece}): ${report.mismatch.what}\n  written to ${file}`);
  process.exit(1);
}

