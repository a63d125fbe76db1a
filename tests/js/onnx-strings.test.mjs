// Strings in the Session (docs/graph-runtime.md, Strings): models written with
// tools/onnx_bytes.mjs whose inputs, initializers or outputs are tensors of ONNX's STRING type
// run in the Session and in onnxruntime-web on the same feeds at more than one shape (Equal,
// Cast to and from STRING, StringConcat, StringSplit, StringNormalizer, RegexFullMatch,
// TfIdfVectorizer, and the rows that only
// move values: Reshape, Transpose, Gather, Concat, Slice, Unsqueeze, Where); then the errors,
// each with its kind and message.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks } from './helpers.mjs';
import { onnxBytes } from '../../tools/onnx_bytes.mjs';
import { I, node, agree as agreeWith } from './onnx-agree.mjs';

memoryHooks();

const S = (data, dims = [data.length]) => ({ type: 'string', dims, data });
const F = (values, dims = [values.length]) => ({ type: 'float32', dims, data: Float32Array.from(values) });
const str = (name, dims = ['n']) => ({ name, dims, dtype: 'string' });
const out = (name, dtype = 'string') => ({ name, dtype });
const words = (n, k = 0) => Array.from({ length: n }, (_, q) => ['cat', 'Dog', '', 'snake', 'été', '中文', 'a b', 'x.y'][(q + k) % 8]);

/** Every feed set runs in the Session and in onnxruntime-web (opset 20: the string ops' versions). */
const agree = (model, feeds) => agreeWith({ opset: 20, ir: 9, ...model }, feeds);

/** A session of model whose run on feeds fails with kind and a message matching re (the session stays usable after). */
async function runRefused(model, feeds, kind, re, good) {
  const s = await om.InferenceSession.create(onnxBytes({ opset: 20, ir: 9, ...model }));
  try {
    assert.throws(() => s.run(feeds), (e) => (e instanceof om.OmError && e.kind === kind && re.test(e.message)) || assert.fail(`${e.kind}: ${e.message}`));
    if (good) assert.ok(s.runData(good));
  } finally {
    s.dispose();
  }
}

describe('string ops, against onnxruntime-web', () => {
  test('Equal, broadcast', () => agree({
    nodes: [node('Equal', ['a', 'b'], ['y'])], inputs: [str('a', ['n', 2]), str('b', [2])], outputs: [out('y', 'bool')],
  }, [{ a: S(words(4), [2, 2]), b: S(['cat', 'Dog']) }, { a: S(words(6, 1), [3, 2]), b: S(['', 'x']) }]));

  test('StringConcat: broadcast, empty strings, UTF-8', () => agree({
    nodes: [node('StringConcat', ['a', 'b'], ['y'])], inputs: [str('a', ['n', 'm']), str('b', ['m'])], outputs: [out('y')],
  }, [{ a: S(words(6), [2, 3]), b: S(['s', '', '的']) }, { a: S(words(4, 3), [4, 1]), b: S(['-x']) }]));

  test('StringSplit: at a delimiter (empty pieces kept), with maxsplit', () => agree({
    nodes: [node('StringSplit', ['x'], ['y', 'n'], { attrs: { delimiter: '-', maxsplit: 2 } })], inputs: [str('x')], outputs: [out('y'), out('n', 'int64')],
  }, [{ x: S(['o-n-n--x-', 'a', '', '-b-c-d-e']) }, { x: S(['abc']) }]));

  test('StringSplit: at runs of spaces (not tabs or newlines), the empty string as none', () => agree({
    nodes: [node('StringSplit', ['x'], ['y', 'n'])], inputs: [str('x', ['n', 2])], outputs: [out('y'), out('n', 'int64')],
  }, [{ x: S(['  hello   world ! ', 'a\tb\nc', '', 'one'], [2, 2]) }, { x: S(['x y', ' '], [1, 2]) }]));

  test('TfIdfVectorizer of strings: unigrams and bigrams with skips, a pool string given twice, strings outside the pool', () => agree({
    nodes: [node('TfIdfVectorizer', ['x'], ['y'], { attrs: { mode: 'TFIDF', min_gram_length: 1, max_gram_length: 2, max_skip_count: 1, ngram_counts: [0, 3], ngram_indexes: [0, 1, 2, 3, 4],
      pool_strings: { ss: ['cat', 'été', '', 'cat', 'Dog', 'été', 'cat'] }, weights: { fs: [0.5, 2, 1, 4, 3] } } })],
    inputs: [str('x', ['n', 'm'])], outputs: [out('y', 'float32')],
  }, [{ x: S(words(16), [2, 8]) }, { x: S(words(5, 3), [1, 5]) }, { x: S(['cat', 'été', 'cat', 'x'], [1, 4]) }]));

  test('StringNormalizer: stopwords in any case, then upper case (Latin-1 and Cyrillic letters too)', () => agree({
    nodes: [node('StringNormalizer', ['x'], ['y'], { attrs: { case_change_action: 'UPPER', stopwords: { ss: ['monday', 'ÉTÉ'] } } })],
    inputs: [str('x', [1, 'n'])], outputs: [out('y')],
  }, [{ x: S(['Monday', 'tuesday', 'été', 'ça va', 'привет'], [1, 5]) }, { x: S(['MONDAY'], [1, 1]) }]));

  test('StringNormalizer: case-sensitive stopwords, lower case, all removed gives one empty string', () => agree({
    nodes: [node('StringNormalizer', ['x'], ['y'], { attrs: { case_change_action: 'LOWER', is_case_sensitive: 1, stopwords: { ss: ['Monday'] } } })],
    inputs: [str('x')], outputs: [out('y')],
  }, [{ x: S(['Monday', 'monday', 'TUESDAY', 'ΑΒΓ']) }, { x: S(['Monday', 'Monday']) }]));

  test('Cast INT64 and BOOL to STRING', () => agree({
    nodes: [node('Cast', ['i'], ['z'], { attrs: { to: 8 } }), node('Cast', ['b'], ['v'], { attrs: { to: 8 } })],
    inputs: [{ name: 'i', dims: ['m'], dtype: 'int64' }, { name: 'b', dims: [2], dtype: 'bool' }], outputs: [out('z'), out('v')],
  }, [{ i: I([0, -7, 9007199254740993n]), b: { type: 'bool', dims: [2], data: Uint8Array.of(1, 0) } }, { i: I([]), b: { type: 'bool', dims: [2], data: Uint8Array.of(0, 0) } }]));

  // onnxruntime-web writes "%.8g" ("0.60484552"), which ONNX's own test data refuses ("0.6048455",
  // numpy's shortest decimal): the Session writes ONNX's, checked against it here.
  test('Cast FLOAT and DOUBLE to STRING: the shortest decimal that reads back, NaN, INF', async () => {
    const s = await om.InferenceSession.create(onnxBytes({
      opset: 20, ir: 9, nodes: [node('Cast', ['x'], ['y'], { attrs: { to: 8 } }), node('Cast', ['d'], ['w'], { attrs: { to: 8 } })],
      inputs: [{ name: 'x', dims: ['n'] }, { name: 'd', dims: ['m'], dtype: 'float64' }], outputs: [out('y'), out('w')],
    }));
    try {
      const x = [0.6048455, 0.1, 1e-5, 1e20, 123456789, -0, NaN, Infinity, -Infinity, 3, 1.5e-45, 3.4028235e38];
      const got = s.runData({ x: F(x), d: { type: 'float64', dims: [3], data: Float64Array.of(1 / 3, 5e-324, -1e300) } });
      assert.deepEqual(got.y.data, ['0.6048455', '0.1', '1e-05', '1e+20', '1.2345679e+08', '-0', 'NaN', 'INF', '-INF', '3', '1e-45', '3.4028235e+38']);
      assert.deepEqual(got.w.data, ['0.3333333333333333', '5e-324', '-1e+300']);
      x.forEach((v, k) => assert.ok(Object.is(Math.fround(Number(got.y.data[k].replace('INF', 'Infinity'))), Math.fround(v)), `${got.y.data[k]} reads back as ${v}`));
    } finally {
      s.dispose();
    }
  });

  test('RegexFullMatch: classes, counted repeats, groups, alternation, word boundaries, UTF-8', () => agree({
    nodes: [node('RegexFullMatch', ['x'], ['m'], { attrs: { pattern: '(\\W|^)[\\w.\\-]{0,25}@(yahoo|gmail)\\.com(\\W|$)' } }),
      node('RegexFullMatch', ['x'], ['k'], { attrs: { pattern: '(?:[^@ ]+\\b)+.?\\d*' } })],
    inputs: [str('x', ['n', 2])], outputs: [out('m', 'bool'), out('k', 'bool')],
  }, [{ x: S(['account@gmail.com', 'account@hotmail.com', 'not email', 'été9'], [2, 2]) }, { x: S([' a.b-c@yahoo.com ', ''], [1, 2]) }]));

  test('Cast STRING to FLOAT, INT64 and INT32', () => agree({
    nodes: [node('Cast', ['x'], ['f'], { attrs: { to: 1 } }), node('Cast', ['j'], ['i'], { attrs: { to: 7 } }), node('Cast', ['j'], ['k'], { attrs: { to: 6 } })],
    inputs: [str('x'), str('j', ['m'])], outputs: [out('f', 'float32'), out('i', 'int64'), out('k', 'int32')],
  }, [{ x: S(['0.47892547', 'NaN', 'INF', '+INF', '-INF', '1e-3', '-0']), j: S(['12', '-3', '0']) }, { x: S(['2']), j: S(['7']) }]));

  test('a string initializer, Identity, and the rows that move values: Reshape, Transpose, Gather, Concat, Slice, Unsqueeze, Where', () => agree({
    nodes: [
      node('Identity', ['x'], ['x0']), node('Reshape', ['x0', 'shape'], ['r']), node('Transpose', ['r'], ['t']),
      node('Gather', ['t', 'idx'], ['g'], { attrs: { axis: 1 } }), node('Concat', ['x', 'w'], ['c'], { attrs: { axis: 0 } }),
      node('Slice', ['c', 'starts', 'ends'], ['sl']), node('Unsqueeze', ['sl', 'zero'], ['u']), node('Where', ['cond', 'x', 'w'], ['wh']),
    ],
    inputs: [str('x', [4]), { name: 'cond', dims: [4], dtype: 'bool' }],
    inits: [
      { name: 'w', dtype: 'string', dims: [4], values: ['w0', 'w1', 'ü', ''] }, { name: 'shape', dtype: 'int64', dims: [2], values: [2, -1] },
      { name: 'idx', dtype: 'int64', dims: [2], values: [1, -2] }, { name: 'starts', dtype: 'int64', dims: [1], values: [1] },
      { name: 'ends', dtype: 'int64', dims: [1], values: [-1] }, { name: 'zero', dtype: 'int64', dims: [1], values: [0] },
    ],
    outputs: [out('g'), out('u'), out('wh')],
  }, [
    { x: S(words(4)), cond: { type: 'bool', dims: [4], data: Uint8Array.of(1, 0, 0, 1) } },
    { x: S(words(4, 5)), cond: { type: 'bool', dims: [4], data: Uint8Array.of(0, 1, 1, 0) } },
  ]));

  test('a Cast to STRING of values computed when the graph runs (the session plans per value)', () => agree({
    nodes: [node('Relu', ['x'], ['r']), node('Cast', ['r'], ['s'], { attrs: { to: 8 } }), node('StringConcat', ['s', 'unit'], ['y'])],
    inputs: [{ name: 'x', dims: ['n'] }], inits: [{ name: 'unit', dtype: 'string', dims: [], values: [' kg'] }], outputs: [out('y')],
  }, [{ x: F([-1, 2.5, 0.1]) }, { x: F([7, -3]) }, { x: F([-1, 2.5, 0.1]) }]));
});

describe('ai.onnx.ml ops, against onnxruntime-web', () => {
  const ml = (op, inputs, attrs, declared, y) => ({
    nodes: [node(op, inputs, ['y'], { domain: 'ai.onnx.ml', attrs })], inputs: declared, outputs: [y], imports: [{ domain: 'ai.onnx.ml', version: 4 }],
  });
  test('LabelEncoder of strings: to integers (a default, and none: -1), to floats', async () => {
    const keys = { ss: ['cat', 'été', '', 'Dog'] };
    await agree(ml('LabelEncoder', ['x'], { keys_strings: keys, values_int64s: [3, -1, 7, 0], default_int64: 42 }, [str('x', ['n', 2])], out('y', 'int64')),
      [{ x: S(words(8), [4, 2]) }, { x: S(['été', 'x'], [1, 2]) }]);
    await agree(ml('LabelEncoder', ['x'], { keys_strings: keys, values_int64s: [3, -1, 7, 0] }, [str('x')], out('y', 'int64')), [{ x: S(words(6, 2)) }]);
    await agree(ml('LabelEncoder', ['x'], { keys_strings: keys, values_floats: { fs: [0.5, -2, 1e-3, 4] }, default_float: { f: 9 } }, [str('x')], out('y', 'float32')),
      [{ x: S(words(7, 1)) }]);
  });
  test('LabelEncoder of integers to floats; Binarizer; ArrayFeatureExtractor of a matrix and a vector', async () => {
    await agree(ml('LabelEncoder', ['x'], { keys_int64s: [1, 5, -2], values_floats: { fs: [0.25, -8, 3] }, default_float: { f: -1 } }, [{ name: 'x', dims: ['n'], dtype: 'int64' }], out('y', 'float32')),
      [{ x: I([1, 2, 5, -2, 5, 0]) }, { x: I([7]) }]);
    await agree(ml('Binarizer', ['x'], { threshold: { f: 0.5 } }, [{ name: 'x', dims: ['n', 2] }], out('y', 'float32')),
      [{ x: F([0.5, 0.6, -1, 2, 0.25, 0.4], [3, 2]) }, { x: F([3, -3], [1, 2]) }]); // onnxruntime-web refuses NaN (the Session: 0)
    { // integers (which onnxruntime-web's Binarizer does not take): compared with the threshold itself, not a rounding of it
      const s = await om.InferenceSession.create(onnxBytes(ml('Binarizer', ['x'], { threshold: { f: -0.5 } }, [{ name: 'x', dims: ['n'], dtype: 'int64' }], out('y', 'int64'))));
      try {
        const x = [-2, -1, 0, 1, 5], { y } = s.runData({ x: I(x) });
        assert.deepEqual(Array.from(y.data, Number), x.map((v) => (v > -0.5 ? 1 : 0)));
      } finally {
        s.dispose();
      }
    }
    for (const dims of [[3, 4], [4]]) {
      const x = F(Array.from({ length: dims.reduce((p, q) => p * q) }, (_, k) => k * 1.5 - 2), dims);
      await agree(ml('ArrayFeatureExtractor', ['x', 'i'], undefined, [{ name: 'x', dims: dims.map((_, d) => `d${d}`) }, { name: 'i', dims: ['k'], dtype: 'int64' }], out('y', 'float32')),
        [{ x, i: I([3, 0, 3]) }, { x, i: I([1]) }]);
    }
  });
});

describe('strings in and out of the JS API', () => {
  test('the inputs and outputs name their type string; the output is { type, dims, data } from run() and runData()', async () => {
    const s = await om.InferenceSession.create(onnxBytes({
      opset: 20, ir: 9, nodes: [node('Identity', ['x'], ['y'])], inputs: [str('x', ['n', 2])], outputs: [out('y')],
    }));
    try {
      assert.equal(s.inputs[0].type, 'string');
      const feed = { x: S(['a', 'é', '', 'z'], [2, 2]) };
      assert.deepEqual(s.run(feed).y, { type: 'string', dims: [2, 2], data: ['a', 'é', '', 'z'] });
      assert.deepEqual(s.runData(feed).y, { type: 'string', dims: [2, 2], data: ['a', 'é', '', 'z'] });
      assert.equal(s.outputTypes.y, 'string');
    } finally {
      s.dispose();
    }
  });
});

describe('errors', () => {
  const identity = { nodes: [node('Identity', ['x'], ['y'])], inputs: [str('x', [2])], outputs: [out('y')] };
  test('a string input fed numbers, strings of another shape, or not strings', async () => {
    await runRefused(identity, { x: F([1, 2]) }, 'InvalidArgument', /run: feed "x" takes strings: \{ type: 'string', data: string\[\], dims \}/, { x: S(['a', 'b']) });
    await runRefused(identity, { x: S(['a', 'b', 'c']) }, 'ShapeMismatch', /input 'x' has size 3 at dim 0, the graph takes 2/, { x: S(['a', 'b']) });
    await runRefused(identity, { x: S(['a', 2]) }, 'InvalidArgument', /feed "x" takes strings/);
    await runRefused(identity, { x: S(['a', 'b'], [3]) }, 'InvalidArgument', /feed "x" has 2 strings for dims \[3\]/);
  });

  test('LabelEncoder: keys and values of other counts, string values (not taken yet)', async () => {
    const le = (attrs) => ({ nodes: [node('LabelEncoder', ['x'], ['y'], { domain: 'ai.onnx.ml', attrs })], inputs: [str('x', [2])], outputs: [out('y', 'int64')],
                             imports: [{ domain: 'ai.onnx.ml', version: 4 }] });
    await runRefused(le({ keys_strings: { ss: ['a', 'b'] }, values_int64s: [1] }), { x: S(['a', 'b']) }, 'Format', /^LabelEncoder_0 \(LabelEncoder\): 2 keys for 1 values/);
    await runRefused(le({ keys_strings: { ss: ['a'] }, values_strings: { ss: ['b'] } }), { x: S(['a', 'b']) }, 'Unsupported',
      /^LabelEncoder_0 \(LabelEncoder\): attribute values_strings of strings \(string values are not taken yet\)/);
  });

  test('a numeric input fed strings', () => runRefused({ nodes: [node('Relu', ['x'], ['y'])], inputs: [{ name: 'x', dims: [2] }], outputs: ['y'] },
    { x: S(['a', 'b']) }, 'DtypeMismatch', /run: feed "x" is string, the graph takes float32/));

  test('an op that takes no strings', () => runRefused({ nodes: [node('Add', ['x', 'x'], ['y'])], inputs: [str('x', [2])], outputs: [out('y')] },
    { x: S(['a', 'b']) }, 'Unsupported', /node 'Add_0' \(Add\): input 0 \('x'\) holds strings, which Add does not take/));

  test('a string that is no number', () => runRefused({ nodes: [node('Cast', ['x'], ['y'], { attrs: { to: 1 } })], inputs: [str('x', [2])], outputs: [out('y', 'float32')] },
    { x: S(['1.5', '1.5kg']) }, 'InvalidArgument', /Cast_0 \(Cast\): Cast: element 1, "1.5kg", is not a number of float32/, { x: S(['1', '2']) }));

  test('a cast of FLOAT16 to STRING', () => runRefused({
    nodes: [node('Cast', ['x'], ['h'], { attrs: { to: 10 } }), node('Cast', ['h'], ['y'], { attrs: { to: 8 } })], inputs: [{ name: 'x', dims: [1] }], outputs: [out('y')],
  }, { x: F([1]) }, 'Unsupported', /a cast of FLOAT16, BFLOAT16, UINT64 or a float8 type to STRING is not supported/));

  test('StringNormalizer: a locale other than English, an input of three dims, an unknown case change (at create)', async () => {
    const norm = (attrs, dims = ['n']) => ({ nodes: [node('StringNormalizer', ['x'], ['y'], { attrs })], inputs: [str('x', dims)], outputs: [out('y')] });
    await runRefused(norm({ locale: 'tr_TR' }), { x: S(['i']) }, 'Unsupported', /locale other than English .* is not supported/);
    await runRefused(norm({}, [1, 1, 'n']), { x: S(['i'], [1, 1, 1]) }, 'Format', /the input must be \[C\] or \[1, C\], it has 3 dims/);
    await assert.rejects(om.InferenceSession.create(onnxBytes({ opset: 20, ir: 9, ...norm({ case_change_action: 'TITLE' }) })), (e) => e instanceof om.OmError && e.kind === 'Format' &&
      /^session: node 'StringNormalizer_0' \(StringNormalizer\): attribute case_change_action is 'TITLE', which ONNX does not define \(LOWER\|UPPER\|NONE\)$/.test(e.message));
  });

  test('a pattern outside the subset, named with its offset', () => runRefused({
    nodes: [node('RegexFullMatch', ['x'], ['m'], { attrs: { pattern: 'a(?i)b' } })], inputs: [str('x', [1])], outputs: [out('m', 'bool')],
  }, { x: S(['ab']) }, 'Unsupported', /RegexFullMatch_0: pattern construct a group with flags or a name \(\(\?\.\.\.\) at offset 2 is not supported/));

  test('strings that do not broadcast', () => runRefused({
    nodes: [node('StringConcat', ['a', 'b'], ['y'])], inputs: [str('a'), str('b')], outputs: [out('y')],
  }, { a: S(['a', 'b']), b: S(['c', 'd', 'e']) }, 'ShapeMismatch', /StringConcat_0 \(StringConcat\): sizes 2 and 3 at dim 0 do not broadcast/));

  test('a StringConcat of a tensor', () => runRefused({
    nodes: [node('StringConcat', ['a', 'b'], ['y'])], inputs: [str('a'), { name: 'b', dims: ['n'] }], outputs: [out('y')],
  }, { a: S(['a']), b: F([1]) }, 'Format', /StringConcat_0 \(StringConcat\): input 1 must hold strings/));
});
