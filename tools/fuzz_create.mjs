// Fuzzes the Session's create path in the WASM build: mutants of the reader fuzzer's seeds
// (tools/fuzz_seeds.mjs, among them a graph whose every size is fixed, which the session plans at
// create) go to om.InferenceSession.create; a session made then runs once on zeros of its inputs'
// declared shapes (a symbol at 3; inputs past 2^20 elements are not fed). Every outcome must be a
// session, a result or an om.OmError: anything else (a trap of the WASM instance, a TypeError)
// stops the run, printing its seed, and writes the mutant to build/fuzz-create/. The kinds seen are
// counted, at create and at the run.
//
//   npm run fuzz:create [-- SECONDS [SEED]]     (default 60 s, seed 1)
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as om from 'onemodel';
import { fuzzCorpus, mutate, random } from './fuzz_open_lib.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const seconds = Number(process.argv[2] ?? 60), seed = Number(process.argv[3] ?? 1);
if (!(seconds > 0) || !Number.isInteger(seed)) throw new Error('usage: node tools/fuzz_create.mjs [SECONDS [SEED]]');
const seeds = fuzzCorpus();
await om.ready({ threads: false });

const rand = random(seed), t0 = Date.now();
const n = { mutants: 0, made: 0, ran: 0, atCreate: {}, atRun: {} };
const count = (where, e) => { where[e.kind] = (where[e.kind] ?? 0) + 1; };
/** Stops the run at a failure that is no OmError. */
function crash(index, bytes, when, e) {
  const dir = join(ROOT, 'build', 'fuzz-create');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `crash-${seed}-${index}.onnx`);
  writeFileSync(file, bytes);
  console.error(`fuzz:create: mutant ${index} (seed ${seed}) threw ${e?.constructor?.name} ${when}: ${e?.message ?? e}\n  written to ${file}`);
  process.exit(1);
}
while (Date.now() - t0 < seconds * 1000) {
  const index = n.mutants++;
  let bytes = seeds[Math.floor(rand() * seeds.length)];
  for (let k = 1 + Math.floor(rand() * 3); k > 0; k--) bytes = mutate(bytes, rand);
  let s;
  try {
    s = await om.InferenceSession.create(bytes);
  } catch (e) {
    if (!(e instanceof om.OmError)) crash(index, bytes, 'at create', e);
    count(n.atCreate, e);
    continue;
  }
  n.made++;
  const feeds = {};
  try {
    for (const i of s.inputs) {
      const dims = i.shape.map((d) => (typeof d === 'number' ? d : 3));
      if (i.dtype === 'string' || dims.reduce((a, b) => a * b, 1) > 2 ** 20) throw new om.OmError('InvalidArgument', 'not fed');
      feeds[i.name] = om.zeros(dims, { dtype: i.dtype });
    }
    for (const t of Object.values(s.run(feeds))) for (const v of [t].flat()) if (v instanceof om.Tensor) v.dispose(); /* strings come as { data, dims } */
    n.ran++;
  } catch (e) {
    if (!(e instanceof om.OmError)) crash(index, bytes, 'at the run', e);
    count(n.atRun, e);
  } finally {
    for (const t of Object.values(feeds)) t.dispose();
    s.dispose();
  }
}
console.log(`fuzz:create: ${n.mutants} mutants of ${seeds.length} seeds (seed ${seed}): ${n.made} made, ${n.ran} ran; refused at create ${JSON.stringify(n.atCreate)}, at the run ${JSON.stringify(n.atRun)}`);
