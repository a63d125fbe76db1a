// om.safetensors against PyTorch and against hostile files. The fixtures (tests/js/fixtures/
// safetensors/) were written by tools/safetensors_fixtures.py, which implements the format in
// Python and never saw this package: PyTorch's weights load into the om.nn ports and give
// PyTorch's outputs eagerly and through the traced .onnx in onnxruntime-web; every dtype widens
// as PyTorch widens it; save() writes what PyTorch read back (saved_by_onemodel.safetensors,
// checked by the tool's verify) byte for byte, and PyTorch's own files byte for byte.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs, { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as om from 'onemodel';
import { memoryHooks, withTraced } from './helpers.mjs';
import { checkModelFile, disposeModelFile } from '../../examples/lib/workflow.mjs';
import { FAMILIES, resnetZoo, caseInputs, caseOutputs, compare } from './families.mjs';
import { fixtureBytes, fixtureJson, expectedArray, roundtripState } from './safetensors-fixtures.mjs';

memoryHooks();
after(() => disposeModelFile(checkModelFile(resnetZoo)));

const { load, loadFile, save } = om.safetensors;

/** The bytes of a typed array (to compare contents bit for bit, NaN payloads included). */
function bytesOf(a) {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** A file from a header (an object, JSON-encoded, or a string as is) and dataLen bytes of data. */
function file(header, data = 0) {
  const h = new TextEncoder().encode(typeof header === 'string' ? header : JSON.stringify(header));
  const d = typeof data === 'number' ? new Uint8Array(data) : data;
  const out = new Uint8Array(8 + h.length + d.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  out.set(d, 8 + h.length);
  return out;
}

/** The header a file declares, parsed independently of load(). */
function headerOf(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return { n, header: JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) };
}

describe('PyTorch\'s weights as safetensors load into the om.nn ports and give PyTorch\'s outputs', () => {
  for (const [name, family] of [['resnet', 'resnet'], ['gpt_f16', 'gpt']]) {
    test(`${name}: eagerly and through the traced .onnx`, async (t) => {
      const fx = fixtureJson(name);
      const bytes = fixtureBytes(fx.file);
      const { tensors, metadata } = load(bytes);
      const model = FAMILIES[family].build();
      try {
        assert.equal(metadata.format, 'pt');
        // every key of the model is in the file with the model's shape, and nothing else
        const own = model.stateDict();
        assert.deepEqual(Object.keys(tensors).sort(), Object.keys(own).sort());
        for (const [k, v] of Object.entries(own)) assert.deepEqual(tensors[k].shape, v.shape, k);
        assert.deepEqual(model.loadStateDict(tensors), { missingKeys: [], unexpectedKeys: [] });
        model.eval();
        const c = fx.cases[0];
        await withTraced((keep) => {
          const inputs = caseInputs(c);
          const [ref] = c.outputs;
          const eager = model.forward(...Object.values(inputs));
          t.diagnostic(`${name}: eager max |ours - PyTorch| ${compare(eager, ref, name).toExponential(2)}`);
          const tm = om.trace(model, inputs, { outputNames: [ref.name] });
          keep(tm, inputs, eager, 'eager');
          keep(tm, inputs, caseOutputs(c), 'PyTorch');
        });
        if (name === 'resnet') {
          // F32 and I64 only: our writer reproduces PyTorch's file exactly, from the model's state dict as from load()
          assert.deepEqual(save(tensors, { metadata }), new Uint8Array(bytes));
          assert.deepEqual(save(model.stateDict(), { metadata }), new Uint8Array(bytes));
        } else {
          // tied: lm_head.weight is wte.weight; both names are written and load back equal
          assert.equal(own['lm_head.weight'], own['wte.weight']);
          const again = load(save(model.stateDict()));
          try {
            assert.deepEqual(again.tensors['lm_head.weight'].toArray(), own['wte.weight'].toArray());
            assert.deepEqual(again.tensors['wte.weight'].toArray(), own['wte.weight'].toArray());
            const copy = FAMILIES[family].build();
            try {
              copy.loadStateDict(again.tensors);
              copy.eval();
              om.tidy(() => compare(copy.forward(...Object.values(caseInputs(c))), c.outputs[0], `${name} saved and loaded again`));
            } finally {
              copy.dispose();
            }
          } finally {
            om.dispose(again.tensors);
          }
        }
      } finally {
        om.dispose(tensors);
        model.dispose();
      }
    });
  }

  test('dtypes: F16 (subnormals, inf, NaN), BF16, F32 bits, I64, BOOL, I8-I32, U8-U32, 0-d and empty load as PyTorch widens them', () => {
    const fx = fixtureJson('dtypes');
    const { tensors, metadata } = load(fixtureBytes('dtypes.safetensors'));
    try {
      assert.deepEqual(metadata, fx.metadata);
      assert.deepEqual(Object.keys(tensors).sort(), Object.keys(fx.expected).sort());
      for (const [name, e] of Object.entries(fx.expected)) {
        const got = tensors[name];
        assert.equal(got.dtype, e.dtype, `${name}: dtype`);
        assert.deepEqual(got.shape, e.shape, `${name}: shape`);
        assert.deepEqual(bytesOf(got.toArray()), bytesOf(expectedArray(e)), `${name}: values (bit for bit)`);
      }
      // the sample covers what matters: subnormals, both infinities, signalling and quiet NaNs
      const h = headerOf(fixtureBytes('dtypes.safetensors')).header;
      assert.equal(h.f16.dtype, 'F16');
      assert.ok(fx.expected.f16.bits.includes(0x7fc02000), 'F16 0x7c01 (a signalling NaN) widens quieted, its payload kept');
      assert.ok(fx.expected.f16.bits.includes(0x33800000), 'F16 0x0001 (the smallest subnormal) is 2^-24');
      assert.ok(fx.expected.bf16.bits.includes(0x7f810000), 'BF16 0x7f81 keeps its bits (signalling NaN)');
    } finally {
      om.dispose(tensors);
    }
  });

  test('save(): the file PyTorch read back (tools/safetensors_fixtures.py verify) is what save() writes, byte for byte', () => {
    const spec = fixtureJson('roundtrip');
    const state = roundtripState(spec);
    try {
      const bytes = save(state, { metadata: spec.metadata });
      assert.deepEqual(bytes, new Uint8Array(fixtureBytes('saved_by_onemodel.safetensors')));
      const { tensors, metadata } = load(bytes);
      try {
        assert.deepEqual(metadata, spec.metadata);
        for (const [name, t] of Object.entries(state)) assert.deepEqual(bytesOf(tensors[name].toArray()), bytesOf(t.toArray()), name);
      } finally {
        om.dispose(tensors);
      }
    } finally {
      om.dispose(state);
    }
  });
});

describe('save() layout', () => {
  test('the reference\'s own examples: empty, metadata only, one F32 tensor (no padding needed)', () => {
    const text = (b) => new TextDecoder().decode(b.subarray(8));
    const empty = save({});
    assert.deepEqual([...empty.subarray(0, 8)], [8, 0, 0, 0, 0, 0, 0, 0]);
    assert.equal(text(empty), '{}      ');
    const meta = save({}, { metadata: { framework: 'pt' } });
    assert.equal(meta[0], 40);
    assert.equal(text(meta), '{"__metadata__":{"framework":"pt"}}     ');
    const one = om.tidy(() => save({ 'attn.0': om.arange(0, 6, { dtype: 'float32' }).reshape(1, 2, 3) }));
    assert.equal(one[0], 64);
    assert.equal(new TextDecoder().decode(one.subarray(8, 72)), '{"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}}');
    assert.deepEqual([...new Float32Array(one.slice(72).buffer)], [0, 1, 2, 3, 4, 5]);
  });

  test('sorted by dtype (I64, F32, BOOL) then by code point; views written contiguous; tied tensors under each name', () => {
    const a = om.tensor([[1, 2, 3], [4, 5, 6]]);
    const state = { 'b': a, 'a': a, 'z': om.tensor([true]), 'y': om.tensor([1n]), '\u{1F600}': om.tensor([0]), '\uFFFD': om.tensor([0]), 'v': a.t() };
    try {
      const bytes = save(state);
      const { n, header } = headerOf(bytes);
      assert.equal(n % 8, 0);
      assert.deepEqual(Object.keys(header), ['y', 'a', 'b', 'v', '\uFFFD', '\u{1F600}', 'z']);
      const { tensors } = load(bytes);
      try {
        assert.deepEqual([...tensors.v.toArray()], [1, 4, 2, 5, 3, 6]);
        assert.deepEqual([...tensors.a.toArray()], [...tensors.b.toArray()]);
        assert.notEqual(tensors.a, tensors.b); // loaded as two tensors, as PyTorch's load_file does
      } finally {
        om.dispose(tensors);
      }
    } finally {
      om.dispose(state);
    }
  });

  test('F64 loads as float64 bit for bit (-0, a NaN payload, subnormal, 1 + 2^-52) and saves as F64 between I64 and F32', () => {
    const bits = [0x8000000000000000n, 0x7ff8000000000123n, 1n, 0x3ff0000000000001n, 0x4009_21fb_5444_2d18n];
    const data = new Uint8Array(8 * bits.length);
    bits.forEach((b, i) => new DataView(data.buffer).setBigUint64(8 * i, b, true));
    const { tensors } = load(file({ d: { dtype: 'F64', shape: [5], data_offsets: [0, 40] } }, data));
    const extra = { i: om.tensor([7n]), f: om.tensor([1.5]) };
    try {
      assert.equal(tensors.d.dtype, 'float64');
      assert.deepEqual(bytesOf(tensors.d.toArray()), data);
      const again = save({ f: extra.f, d: tensors.d, i: extra.i });
      assert.deepEqual(Object.keys(headerOf(again).header), ['i', 'd', 'f']);
      const back = load(again).tensors;
      try {
        assert.deepEqual(bytesOf(back.d.toArray()), data);
      } finally {
        om.dispose(back);
      }
    } finally {
      om.dispose([tensors, extra]);
    }
  });

  test('argument errors: kind and message', () => {
    const t = om.tensor([1]);
    const d = om.tensor([1]);
    d.dispose();
    const cases = [
      [() => save(null), 'InvalidArgument', /safetensors\.save: stateDict must be an object of name -> Tensor, got null/],
      [() => save([t]), 'InvalidArgument', /stateDict must be an object .* got an array of length 1/],
      [() => save(t), 'InvalidArgument', /stateDict must be an object .* got a Tensor/],
      [() => save(new Map([['w', t]])), 'InvalidArgument', /stateDict must be an object .* got a Map/],
      [() => save({ w: [1, 2] }), 'InvalidArgument', /stateDict\["w"\] must be a Tensor, got an array of length 2/],
      [() => save({ w: d }), 'Disposed', /stateDict\["w"\] was disposed/],
      [() => save({ __metadata__: t }), 'InvalidArgument', /"__metadata__" is the format's key for metadata, not a tensor name/],
      [() => save({ w: t }, { metadata: { a: 1 } }), 'InvalidArgument', /metadata\["a"\] must be a string, got 1/],
      [() => save({ w: t }, { metadata: 'pt' }), 'InvalidArgument', /metadata must be an object of strings, got a string/],
      [() => save({ w: t }, { meta: {} }), 'InvalidArgument', /unknown option 'meta' \(expected metadata\)/],
      [() => load('model.safetensors'), 'InvalidArgument', /safetensors\.load: bytes must be a Uint8Array or an ArrayBuffer, got a string/],
      [() => load(new Float32Array(4)), 'InvalidArgument', /got a Float32Array/],
    ];
    try {
      for (const [fn, kind, re] of cases) {
        assert.throws(fn, (e) => e instanceof om.OmError && e.kind === kind && re.test(e.message), re.source);
      }
    } finally {
      t.dispose();
    }
  });
});

describe('load(): inputs', () => {
  test('an ArrayBuffer, a Buffer at an offset, an unaligned data section (header length not a multiple of 8)', () => {
    const header = '{"h":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},"i":{"dtype":"I32","shape":[1],"data_offsets":[4,8]},"u":{"dtype":"U16","shape":[1],"data_offsets":[8,10]},"b":{"dtype":"BOOL","shape":[2],"data_offsets":[10,12]}}';
    const data = new Uint8Array([0x00, 0x3c, 0x00, 0xc0, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00]);
    const bytes = file(header, data);
    assert.notEqual((8 + header.length) % 2, 0);
    for (const input of [bytes, bytes.slice().buffer, Buffer.concat([Buffer.alloc(3), bytes]).subarray(3)]) {
      const { tensors, metadata } = load(input);
      try {
        assert.deepEqual(metadata, {});
        assert.deepEqual([...tensors.h.toArray()], [1, -2]);
        assert.deepEqual([...tensors.i.toArray()], [-2n]);
        assert.deepEqual([...tensors.u.toArray()], [65535n]);
        assert.deepEqual([...tensors.b.toArray()], [1, 0]); // any nonzero byte is true
        assert.equal(tensors.b.dtype, 'bool');
      } finally {
        om.dispose(tensors);
      }
    }
  });

  test('a tensor named __proto__ is an own key; the header order is kept; zero-size tensors may share an offset', () => {
    const bytes = file('{"z":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"__proto__":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"e":{"dtype":"I64","shape":[2,0],"data_offsets":[0,0]}}', 4);
    const { tensors } = load(bytes);
    try {
      assert.deepEqual(Object.keys(tensors), ['z', '__proto__', 'e']);
      assert.ok(Object.hasOwn(tensors, '__proto__'));
      assert.equal(Object.getPrototypeOf(tensors), Object.prototype);
      assert.deepEqual(tensors.e.shape, [2, 0]);
    } finally {
      om.dispose(Object.values(tensors));
    }
  });

  test('not while a trace records: TraceError InvalidUsage, nothing left behind', () => {
    const w = om.tensor([1, 2]);
    const bytes = save({ w });
    const x = om.tensor([1, 2]);
    try {
      for (const fn of [() => load(bytes), () => save({ w })]) {
        assert.throws(() => om.trace((input) => { fn(); return input; }, { x }),
          (e) => e instanceof om.TraceError && e.kind === 'InvalidUsage' && /safetensors\.(load|save): .*tensor bytes cannot be read or written while a trace records/.test(e.message));
      }
    } finally {
      w.dispose();
      x.dispose();
    }
  });
});

describe('loadFile(): a file read straight into the tensors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'om-safetensors-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name, bytes) => {
    const path = join(dir, name);
    writeFileSync(path, bytes);
    return path;
  };

  /** load(bytes) and loadFile(path) of the same bytes give the same tensors, bit for bit. */
  function sameAsLoad(bytes, path) {
    const a = load(bytes);
    const b = loadFile(path);
    try {
      assert.deepEqual(b.metadata, a.metadata);
      assert.deepEqual(Object.keys(b.tensors), Object.keys(a.tensors));
      for (const [k, t] of Object.entries(a.tensors)) {
        assert.equal(b.tensors[k].dtype, t.dtype, k);
        assert.deepEqual(b.tensors[k].shape, t.shape, k);
        assert.deepEqual(bytesOf(b.tensors[k].toArray()), bytesOf(t.toArray()), k);
      }
    } finally {
      om.dispose([a.tensors, b.tensors]);
    }
  }

  test('the fixtures (a path and a file: URL) load as load() loads their bytes', () => {
    for (const f of ['dtypes.safetensors', 'gpt_f16.safetensors', 'resnet.safetensors']) {
      sameAsLoad(fixtureBytes(f), new URL(f, new URL('./fixtures/safetensors/', import.meta.url)));
    }
  });

  test('converted dtypes larger than one read (1 MiB): F16, BF16, BOOL, I8, U16 across chunk boundaries', () => {
    const n = 700_001; // F16 / BF16 / U16: 1.4 MB, BOOL / I8: 0.7 MB
    const header = {};
    const parts = [];
    let at = 0;
    for (const [name, dtype, size] of [['h', 'F16', 2], ['b', 'BF16', 2], ['m', 'BOOL', 1], ['i', 'I8', 1], ['u', 'U16', 2]]) {
      const d = new Uint8Array(n * size);
      for (let i = 0; i < d.length; i++) d[i] = (i * 7919 + size) & 0xff;
      header[name] = { dtype, shape: [n], data_offsets: [at, at + d.length] };
      parts.push(d);
      at += d.length;
    }
    const data = new Uint8Array(at);
    parts.reduce((off, d) => (data.set(d, off), off + d.length), 0);
    const bytes = file(header, data);
    sameAsLoad(bytes, write('big.safetensors', bytes));
  });

  test('errors: no Node file, a missing file, a hostile file (as load()), a file that shrinks while it is read', () => {
    const cases = [
      [() => loadFile(42), 'InvalidArgument', /^safetensors\.loadFile: path must be a string or a URL, got 42$/],
      [() => loadFile(join(dir, 'missing.safetensors')), 'InvalidArgument', /^safetensors\.loadFile: cannot open .*missing\.safetensors: ENOENT/],
      [() => loadFile(write('short.safetensors', new Uint8Array(3))), 'Format', /^safetensors\.loadFile: the file is 3 bytes long/],
      [() => loadFile(write('gap.safetensors', file({ a: F32([1], 4, 8) }, 8))), 'Format', /^safetensors\.loadFile: bytes 0 to 4 of the data belong to no tensor/],
    ];
    for (const [fn, kind, re] of cases) {
      assert.throws(fn, (e) => e instanceof om.OmError && e.kind === kind && re.test(e.message), re.source);
    }
    // another process truncating the file between fstat and the reads: simulated by an fstat that truncates first
    const bytes = file({ a: F32([4], 0, 16) }, 16);
    const path = write('shrinks.safetensors', bytes);
    const fstatSync = fs.fstatSync;
    fs.fstatSync = (fd, ...rest) => {
      const st = fstatSync(fd, ...rest);
      fs.truncateSync(path, bytes.length - 6);
      return st;
    };
    syncBuiltinESMExports();
    try {
      assert.throws(() => loadFile(path), (e) => e instanceof om.OmError && e.kind === 'Format'
        && new RegExp(`^safetensors\\.loadFile: tensor "a": the file ended at byte ${bytes.length - 6} while it was read \\(${bytes.length} bytes when opened\\)$`).test(e.message));
    } finally {
      fs.fstatSync = fstatSync;
      syncBuiltinESMExports();
    }
  });
});

// ---- hostile files ---------------------------------------------------------------------------

const F32 = (shape, begin, end) => ({ dtype: 'F32', shape, data_offsets: [begin, end] });

describe('load(): hostile files give a Format error naming the problem (DtypeMismatch for valid dtypes we do not hold)', () => {
  const huge = new Uint8Array(16);
  new DataView(huge.buffer).setBigUint64(0, 0xffffffffffffffffn, true);
  const pastEnd = new Uint8Array(16);
  pastEnd[0] = 9;
  const badUtf8 = file('{"a":1}');
  badUtf8[10] = 0xff;
  const cases = [
    ['shorter than the header length', new Uint8Array(5), /the file is 5 bytes long; a safetensors file starts with an 8-byte header length/],
    ['absurd header length', huge, /the header length 18446744073709551615 is absurd \(the format's limit is 100000000 bytes\)/],
    ['header length past the end', pastEnd, /the header length 9 runs past the end of the file \(16 bytes\)/],
    ['header not UTF-8', badUtf8, /the header is not valid UTF-8/],
    ['bad JSON', file('{"a": {'), /the header is not valid JSON \(/],
    ['trailing garbage after the JSON', file('{} x'), /the header is not valid JSON/],
    ['header an array', file('[]'), /the header is not a JSON object but an array of length 0/],
    ['header null', file('null'), /the header is not a JSON object but null/],
    ['duplicate tensor', file(`{"a":${JSON.stringify(F32([1], 0, 4))},"a":${JSON.stringify(F32([1], 0, 4))}}`, 4), /the header has the key "a" twice/],
    ['duplicate field', file('{"a":{"dtype":"F32","shape":[1],"shape":[1],"data_offsets":[0,4]}}', 4), /the header has the key "shape" \(in "a"\) twice/],
    ['entry not an object', file({ a: [1] }), /tensor "a": its entry is an array of length 1, not an object/],
    ['no dtype', file({ a: { shape: [1], data_offsets: [0, 4] } }, 4), /tensor "a" has no dtype/],
    ['no shape', file({ a: { dtype: 'F32', data_offsets: [0, 4] } }, 4), /tensor "a" has no shape/],
    ['no data_offsets', file({ a: { dtype: 'F32', shape: [1] } }, 4), /tensor "a" has no data_offsets/],
    ['unknown dtype', file({ a: { ...F32([1], 0, 4), dtype: 'F33' } }, 4), /tensor "a": unknown dtype "F33" \(the format's are BOOL, U8, .*U64\)/],
    ['dtype not a string', file({ a: { ...F32([1], 0, 4), dtype: 4 } }, 4), /tensor "a": unknown dtype 4/],
    ['shape not an array', file({ a: F32(1, 0, 4) }, 4), /tensor "a": shape is 1, not an array/],
    ['negative dim', file({ a: F32([2, -1], 0, 4) }, 4), /tensor "a": shape\[1\] is -1; dims are non-negative integers/],
    ['fractional dim', file({ a: F32([2.5], 0, 4) }, 4), /tensor "a": shape\[0\] is 2\.5; dims are non-negative integers/],
    ['dim a string', file({ a: F32(['1'], 0, 4) }, 4), /tensor "a": shape\[0\] is a string \("1"\)/],
    ['dim past 2^53', file({ a: F32([2 ** 60], 0, 4) }, 4), /tensor "a": shape\[0\] is 1152921504606847000/],
    ['offsets not a pair', file({ a: { ...F32([1], 0, 4), data_offsets: [0, 4, 8] } }, 4), /tensor "a": data_offsets \[0,4,8\] is not \[begin, end\] with 0 <= begin <= end/],
    ['offsets reversed', file({ a: F32([1], 4, 0) }, 4), /tensor "a": data_offsets \[4,0\] is not \[begin, end\]/],
    ['negative offset', file({ a: F32([1], -4, 0) }, 4), /tensor "a": data_offsets \[-4,0\] is not/],
    ['byte count does not match dtype and shape', file({ a: F32([2], 0, 4) }, 4), /tensor "a": dtype F32 and shape \[2\] take 8 bytes but data_offsets \[0, 4\] hold 4/],
    ['shape product overflowing', file({ a: F32([2 ** 40, 2 ** 40], 0, 4) }, 4), /tensor "a": dtype F32 and shape \[1099511627776, 1099511627776\] take 4\.835703278458517e\+24 bytes but data_offsets \[0, 4\] hold 4/],
    ['offsets past the data', file({ a: F32([1], 0, 4), b: F32([1], 4, 8) }, 4), /tensor "b": data_offsets \[4, 8\] run past the end of the data \(4 bytes after the header\)/],
    ['overlapping tensors', file({ a: F32([2], 0, 8), b: F32([1], 4, 8) }, 8), /tensors "a" and "b" overlap \(bytes 4 to 8 of the data\)/],
    ['a gap between tensors', file({ a: F32([1], 0, 4), b: F32([1], 8, 12) }, 12), /bytes 4 to 8 of the data belong to no tensor/],
    ['data not starting at 0', file({ a: F32([1], 4, 8) }, 8), /bytes 0 to 4 of the data belong to no tensor/],
    ['bytes after the last tensor', file({ a: F32([1], 0, 4) }, 6), /the tensors cover 4 bytes of data but the file has 6 after the header \(the last 2 belong to no tensor\)/],
    ['metadata not an object', file({ __metadata__: 'pt' }), /__metadata__ is not an object of strings but a string/],
    ['metadata value not a string', file({ __metadata__: { epoch: 3 } }), /__metadata__\["epoch"\] is 3, not a string/],
  ];
  for (const [what, bytes, re] of cases) {
    test(what, () => {
      assert.throws(() => load(bytes), (e) => e instanceof om.OmError && e.kind === 'Format' && e.message.startsWith('safetensors.load: ') && re.test(e.message),
        `${what}: ${re.source}`);
    });
  }

  for (const [dtype, size] of [['U64', 8], ['F8_E4M3', 1], ['F8_E5M2', 1]]) {
    test(`${dtype} is refused as DtypeMismatch, after the file's checks`, () => {
      const bytes = file({ ok: F32([1], 0, 4), x: { dtype, shape: [2], data_offsets: [4, 4 + 2 * size] } }, 4 + 2 * size);
      assert.throws(() => load(bytes), (e) => e instanceof om.OmError && e.kind === 'DtypeMismatch'
        && new RegExp(`safetensors\\.load: tensor "x" is ${dtype}, which onemodel does not take \\(it holds float32, float64, int64 and bool; F16 and BF16 widen to float32, the integer types up to 32 bits to int64\\): convert it before saving`).test(e.message));
    });
  }

  test('more dims than om holds: C\'s error, naming the tensor, and the tensors made before it freed', () => {
    const bytes = file({ a: F32([1], 0, 4), b: F32([1, 1, 1, 1, 1, 1, 1, 1, 1], 4, 8) }, 8);
    assert.throws(() => load(bytes), (e) => e instanceof om.OmError && e.kind === 'InvalidArgument'
      && /^safetensors\.load: tensor "b": full: 9 dims \(at most 8\)$/.test(e.message));
  });
});

// ---- seeded mutations --------------------------------------------------------------------------

/** mulberry32: a small seeded generator (the test must see the same files every run). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A mutated copy of base: byte flips, a truncation, an insertion or an edit of a header number or character. */
function mutate(base, r) {
  const pick = (n) => Math.floor(r() * n);
  const { n } = headerOf(base);
  const kind = pick(5);
  let b = base.slice();
  if (kind === 0) { // flip 1 to 4 bytes, mostly in the header
    for (let k = 1 + pick(4); k > 0; k--) b[r() < 0.8 ? 8 + pick(n) : pick(b.length)] ^= 1 << pick(8);
  } else if (kind === 1) { // truncate
    b = b.slice(0, pick(b.length));
  } else if (kind === 2) { // insert bytes
    const at = pick(b.length);
    b = Uint8Array.from([...b.subarray(0, at), ...Array.from({ length: 1 + pick(3) }, () => pick(256)), ...b.subarray(at)]);
  } else if (kind === 3) { // change one number of the header, keeping its length (so the header stays in place)
    const text = new TextDecoder().decode(b.subarray(8, 8 + n));
    const nums = [...text.matchAll(/\d+/g)];
    const m = nums[pick(nums.length)];
    const v = String(Math.max(0, Number(m[0]) + [-8, -4, -2, -1, 1, 2, 4, 8][pick(8)])).padStart(m[0].length, '0').slice(-m[0].length);
    b.set(new TextEncoder().encode(v), 8 + m.index);
  } else { // replace one header character with JSON punctuation
    b[8 + pick(n)] = '{}[]",:-0 e'.charCodeAt(pick(11));
  }
  return b;
}

test('seeded mutations of valid files: every outcome is a load that matches its header or an OmError', (t) => {
  const bases = ['dtypes.safetensors', 'saved_by_onemodel.safetensors'].map((f) => new Uint8Array(fixtureBytes(f)));
  const r = rng(14);
  const outcomes = { loaded: 0 };
  // OM_SAFETENSORS_MUTATIONS=n runs more (the same first 3000, then more of the same stream)
  const count = Number(process.env.OM_SAFETENSORS_MUTATIONS ?? 3000);
  for (let i = 0; i < count; i++) {
    const b = mutate(bases[i % bases.length], r);
    let result;
    try {
      result = load(b);
    } catch (e) {
      assert.ok(e instanceof om.OmError, `mutation ${i}: ${e?.stack ?? e}`);
      assert.ok(e.message.startsWith('safetensors.load: '), e.message);
      outcomes[e.kind] = (outcomes[e.kind] ?? 0) + 1;
      continue;
    }
    try {
      // a load that succeeded holds what the header declares: names, shapes, and the bytes of
      // the dtypes copied as they are
      outcomes.loaded++;
      const { n, header } = headerOf(b);
      const names = Object.keys(header).filter((k) => k !== '__metadata__');
      assert.deepEqual(Object.keys(result.tensors).sort(), names.sort());
      for (const name of names) {
        const e = header[name];
        const t = result.tensors[name];
        assert.deepEqual(t.shape, e.shape, name);
        if (e.dtype === 'F32' || e.dtype === 'I64') {
          assert.deepEqual(bytesOf(t.toArray()), b.subarray(8 + n + e.data_offsets[0], 8 + n + e.data_offsets[1]), name);
        }
      }
    } finally {
      om.dispose(result.tensors);
    }
  }
  // the mix exercises both sides (counts are for the record, not for the test)
  t.diagnostic(`outcomes: ${JSON.stringify(outcomes)}`);
  assert.ok(outcomes.loaded > 0 && outcomes.Format > 0, JSON.stringify(outcomes));
});
