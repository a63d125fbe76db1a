// onemodel's side of the safetensors fixtures (see tools/safetensors_fixtures.py): saves the state
// dict of tests/js/fixtures/safetensors/roundtrip.json with om.safetensors.save to
// saved_by_onemodel.safetensors, which `python3 tools/safetensors_fixtures.py verify` then reads
// in PyTorch and tests/js/safetensors.test.mjs compares save()'s output with, byte for byte.
//
//   node tools/safetensors_fixtures.mjs
import { writeFileSync } from 'node:fs';
import * as om from 'onemodel';
import { DIR, fixtureJson, roundtripState } from '../tests/js/safetensors-fixtures.mjs';

await om.ready();
const spec = fixtureJson('roundtrip');
const state = roundtripState(spec);
const bytes = om.safetensors.save(state, { metadata: spec.metadata });
om.dispose(state);
const out = new URL('saved_by_onemodel.safetensors', DIR);
writeFileSync(out, bytes);
console.log(`${out.pathname}: ${bytes.length} bytes`);
