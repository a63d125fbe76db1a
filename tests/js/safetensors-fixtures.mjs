// The fixtures of tests/js/fixtures/safetensors/ (written by tools/safetensors_fixtures.py from
// PyTorch, except saved_by_onemodel.safetensors, which tools/safetensors_fixtures.mjs writes with
// om.safetensors.save). Not a test file: tests/js/safetensors.test.mjs and that tool use it.
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';

export const DIR = new URL('./fixtures/safetensors/', import.meta.url);

/** The bytes of a fixture file (a Node Buffer, which is a Uint8Array). */
export function fixtureBytes(file) {
  return readFileSync(new URL(file, DIR));
}

/** A fixture's JSON. */
export function fixtureJson(name) {
  return JSON.parse(readFileSync(new URL(`${name}.json`, DIR), 'utf8'));
}

/**
 * An expected tensor of dtypes.json / roundtrip.json as a typed array of its exact contents:
 * float32 from its uint32 bits (NaN payloads kept), int64 from decimal strings, bool as bytes.
 */
export function expectedArray(e) {
  if (e.dtype === 'float32') return new Float32Array(Uint32Array.from(e.bits).buffer);
  if (e.dtype === 'int64') return BigInt64Array.from(e.data, BigInt);
  return Uint8Array.from(e.data, (b) => (b ? 1 : 0));
}

/** roundtrip.json's state dict as new Tensors, each tied pair as one Tensor under both names. */
export function roundtripState(spec = fixtureJson('roundtrip')) {
  const state = {};
  for (const [name, e] of Object.entries(spec.expected)) {
    state[name] = om.tensor(expectedArray(e), { dtype: e.dtype, shape: e.shape });
  }
  for (const [a, b] of spec.tied) {
    state[a].dispose();
    state[a] = state[b];
  }
  return state;
}
