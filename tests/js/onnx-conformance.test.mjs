// ONNX's backend node tests (Debian's python3-onnx 1.12 generates them at set-up: tools/bootstrap.sh)
// in the Session, with ONNX's comparison rule (tests/js/onnx-backend.mjs). Each test passes, is
// refused (an OmError at create or run), gives a wrong answer or crashes (anything else thrown);
// none may crash, none be wrong but those listed, and the passes and refusals are the counts of
// docs/graph-runtime.md's table (read from there, so a fix that passes one more test updates it).
// `npm run conformance` prints every outcome and onnxruntime-web's on the same set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { nodeTests, loadTest, runSession, mismatch, decodeTensor, decodeValue } from './onnx-backend.mjs';

// docs/graph-runtime.md's row: `| Session | passes | refused | wrong | crash |`
const DOC = readFileSync(new URL('../../docs/graph-runtime.md', import.meta.url), 'utf8');
const ROW = /^ *\| on ONNX 1\.12's (\d+) node tests \|[^\n]*\n *\|[^\n]*\n *\| Session \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$/m.exec(DOC);
assert.ok(ROW, 'docs/graph-runtime.md has the Session\'s row of the ONNX 1.12 node tests');
const [TOTAL, PASSED, REFUSED, WRONG, CRASHED] = ROW.slice(1).map(Number);

// Wrong by ONNX 1.12's reference outputs. The list must be exactly what is wrong, so a fix or a
// new failure both show. None now: DFT and STFT sum in double (their zeros were 2e-5 in float32);
// MaxUnpool with an output_shape other than the default and align_corners with a scale whose
// length is not whole are refused, where ONNX's reference and onnxruntime-web (and PyTorch)
// give two answers (the reference places the indices in MaxPool's shape, and divides by the
// unrounded length 4 x 0.6 = 2.4).
const EXPECTED_WRONG = [];

// ONNX 1.12 writes these tests' input 'like' as [1] where their model declares [3, 4] (the
// BFLOAT16 CastLike tests only): the Session refuses the feed as the declared shape says.
const BAD_DATA = ['test_castlike_BFLOAT16_to_FLOAT', 'test_castlike_BFLOAT16_to_FLOAT_expanded', 'test_castlike_FLOAT_to_BFLOAT16', 'test_castlike_FLOAT_to_BFLOAT16_expanded'];

await om.ready({ threads: false });

test('ONNX backend node tests: no wrong answer, no crash, the passes and refusals docs/graph-runtime.md records', async () => {
  const tests = nodeTests();
  assert.equal(tests.length, TOTAL, `node tests generated (docs/graph-runtime.md says ONNX 1.12 writes ${TOTAL})`);
  const by = { pass: [], refused: [], wrong: [], crash: [] };
  for (const { name, dir } of tests) {
    const r = await runSession(om, loadTest(dir));
    by[r.outcome].push(r.outcome === 'wrong' ? name : `${name}: ${r.kind ?? ''} ${r.message ?? ''}`);
  }
  assert.deepEqual(by.crash, [], 'crashes');
  assert.deepEqual(by.wrong, EXPECTED_WRONG, 'wrong answers');
  const counts = [by.pass.length, by.refused.length, by.wrong.length, by.crash.length];
  assert.deepEqual(counts, [PASSED, REFUSED, WRONG, CRASHED],
    `the Session passes, refuses, gets wrong, crashes ${counts.join(', ')}: update docs/graph-runtime.md's row | Session | ${counts.join(' | ')} |`);
  // every node test is valid ONNX but BAD_DATA's: what the Session does not run is Unsupported, never a Format or argument error
  const bad = by.refused.filter((r) => BAD_DATA.includes(r.split(':')[0]));
  assert.deepEqual(bad.map((r) => r.split(':')[0]), BAD_DATA, 'the tests whose data do not fit their model');
  for (const r of bad) assert.match(r, /^\S+: ShapeMismatch run: input 'like' has shape \[1\]; the graph takes 2 dims/);
  for (const r of by.refused) if (!bad.includes(r)) assert.match(r, /^\S+: Unsupported /);
});

// The harness's own rule, on tensors made here: a test that could not fail would count anything as a pass.
test('ONNX comparison rule: dtype and shape exact, then atol + rtol |want|, NaN where NaN is', () => {
  const t = (dtype, dims, data) => ({ dtype, dims, data });
  const want = t('float32', [2], new Float32Array([1000, Number.NaN]));
  assert.equal(mismatch(t('float32', [2], new Float32Array([1000.9, Number.NaN])), want), null);
  assert.match(mismatch(t('float32', [2], new Float32Array([1001.1, Number.NaN])), want), /element 0/);
  assert.match(mismatch(t('float32', [2], new Float32Array([1000, 0])), want), /element 1/);
  assert.match(mismatch(t('int64', [2], new BigInt64Array(2)), want), /dtype int64, expected float32/);
  assert.match(mismatch(t('float32', [1, 2], new Float32Array([1000, Number.NaN])), want), /shape \[1,2\]/);
  assert.match(mismatch(t('float32', [1], new Float32Array([Infinity])), t('float32', [1], new Float32Array([-Infinity]))), /element 0/);
});

test('TensorProto decoding: raw data at any offset, typed fields, packed and unpacked', () => {
  // dims [2] (unpacked), data_type INT64, int64_data packed [-1, 300]
  const pb = Uint8Array.from([0x08, 0x02, 0x10, 0x07, 0x3a, 0x0c, ...[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], 0xac, 0x02]);
  assert.deepEqual(decodeTensor(pb), { dtype: 'int64', dims: [2], data: BigInt64Array.from([-1n, 300n]) });
  // dims [1], FLOAT, raw_data 4 bytes (1.5), inside a larger buffer at an odd offset
  const raw = Uint8Array.from([0x08, 0x01, 0x10, 0x01, 0x4a, 0x04, 0x00, 0x00, 0xc0, 0x3f]);
  const inside = new Uint8Array(raw.length + 3);
  inside.set(raw, 3);
  assert.deepEqual(decodeTensor(inside.subarray(3)), { dtype: 'float32', dims: [1], data: Float32Array.from([1.5]) });
  assert.throws(() => decodeTensor(Uint8Array.from([0x08, 0x03, 0x10, 0x01, 0x4a, 0x04, 0, 0, 0, 0])), /4 bytes of raw data for dims \[3\] of float32/);
});

test('SequenceProto and OptionalProto decoding: the tensors of a sequence; an optional holding a tensor, a sequence or nothing', () => {
  const tensor = [0x08, 0x01, 0x10, 0x01, 0x4a, 0x04, 0x00, 0x00, 0xc0, 0x3f]; // dims [1], FLOAT, raw_data 1.5
  const t = { dtype: 'float32', dims: [1], data: Float32Array.from([1.5]) };
  const seq = [0x10, 0x01, 0x1a, tensor.length, ...tensor, 0x1a, tensor.length, ...tensor]; // elem_type 1, tensor_values (3) twice
  assert.deepEqual(decodeValue(Uint8Array.from(seq), 'sequence'), [t, t]);
  assert.deepEqual(decodeValue(Uint8Array.from([0x10, 0x01]), 'sequence'), []);
  assert.deepEqual(decodeValue(Uint8Array.from([0x10, 0x01, 0x1a, tensor.length, ...tensor]), 'optional'), t); // tensor_value (3)
  assert.deepEqual(decodeValue(Uint8Array.from([0x10, 0x03, 0x2a, seq.length, ...seq]), 'optional'), [t, t]); // sequence_value (5)
  assert.equal(decodeValue(Uint8Array.from([0x10, 0x01]), 'optional'), null);
  assert.throws(() => decodeValue(Uint8Array.from([0x10, 0x04, 0x32, 0x00]), 'optional'), /a map/);
});
