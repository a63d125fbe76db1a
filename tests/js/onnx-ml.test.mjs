// The ai.onnx.ml models sklearn-onnx writes most (docs/graph-runtime.md, the paragraph on
// ai.onnx.ml): Scaler, Normalizer, Imputer, LinearRegressor, LinearClassifier,
// TreeEnsembleRegressor and TreeEnsembleClassifier, each a small hand-built graph run by the
// Session and by onnxruntime-web on the same feeds at two batch sizes (and an empty batch for
// some; one plan each), with the values that pick a branch (a threshold itself, NaN, a zero row);
// then what the Session refuses, each with its kind and message.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks } from './helpers.mjs';
import { onnxBytes } from '../../tools/onnx_bytes.mjs';
import { I, node, agree as agreeWith } from './onnx-agree.mjs';

memoryHooks();

const ML = [{ domain: 'ai.onnx.ml', version: 3 }];
const X = (values, dims) => ({ type: 'float32', dims, data: Float32Array.from(values) });
/** One ai.onnx.ml node y (and z) of input x (dims [n, C], dtype). */
const ml = (op, attrs, { C = 3, dtype = 'float32', outputs = [['y', 'float32']] } = {}) => ({
  nodes: [node(op, ['x'], outputs.map(([n]) => n), { domain: 'ai.onnx.ml', attrs })], inputs: [{ name: 'x', dims: ['n', C], dtype }],
  outputs: outputs.map(([name, dt]) => ({ name, dtype: dt })), imports: ML,
});
/** Every feed set agrees with onnxruntime-web (exactly, or within tol). */
const agree = (model, feeds, tol) => agreeWith({ opset: 17, ir: 8, ...model }, feeds, tol);
const close = { rtol: 1e-5, atol: 1e-6 };
/** rows x 3 features: k * 0.37 - 1.1 folded into [-2, 2), with the given values first. */
const rows = (n, first = []) => X(Array.from({ length: 3 * n }, (_, k) => (k < first.length ? first[k] : ((k * 0.37 + 0.9) % 4) - 2)), [n, 3]);

/** A session of model whose first run on feed fails with kind and a message matching re. */
async function refused(model, feed, kind, re) {
  const s = await om.InferenceSession.create(onnxBytes({ opset: 17, ir: 8, ...model }));
  try {
    assert.throws(() => s.run(feed), (e) => (e instanceof om.OmError && e.kind === kind && re.test(e.message)) || assert.fail(`${e.kind}: ${e.message}`));
  } finally {
    s.dispose();
  }
}

describe('scalers, against onnxruntime-web', () => {
  test('Scaler: an offset and a scale per feature, or one of each; float32, int64 and double inputs', async () => {
    const per = { offset: { fs: [0.5, -1, 2] }, scale: { fs: [2, 0.25, -3] } };
    await agree(ml('Scaler', per), [{ x: rows(4) }, { x: rows(1, [0.5, -1, 2]) }, { x: rows(0) }]);
    await agree(ml('Scaler', { offset: { fs: [0.1] }, scale: { fs: [3] } }), [{ x: rows(2) }]);
    await agree(ml('Scaler', per, { dtype: 'int64' }), [{ x: I([7, -3, 0, 2, 2, 9], [2, 3]) }]);
    await agree(ml('Scaler', per, { dtype: 'float64' }), [{ x: { type: 'float64', dims: [2, 3], data: Float64Array.of(0.1, 1e10, -2, 0.3, 5, 1 / 3) } }]);
  });

  test('Normalizer: MAX, L1 and L2 per row, a row of zeros kept, negative values', async () => {
    for (const norm of ['MAX', 'L1', 'L2']) await agree(ml('Normalizer', { norm }), [{ x: rows(3, [0, 0, 0, -1, 2, -4]) }, { x: rows(1) }], close);
  });

  test('Imputer: NaN replaced per feature (float32), a value replaced by one value (int64)', async () => {
    await agree(ml('Imputer', { imputed_value_floats: { fs: [9, -8, 7] }, replaced_value_float: { f: NaN } }),
      [{ x: X([NaN, 1, NaN, 2, NaN, 0], [2, 3]) }, { x: X([0, 0, NaN], [1, 3]) }]);
    await agree(ml('Imputer', { imputed_value_floats: { fs: [5] }, replaced_value_float: { f: 0 } }), [{ x: X([0, -0, 1, NaN, 0, 3], [2, 3]) }]);
    await agree(ml('Imputer', { imputed_value_int64s: [42], replaced_value_int64: -1 }, { dtype: 'int64', outputs: [['y', 'int64']] }),
      [{ x: I([-1, 3, -1, 0, 0, 5], [2, 3]) }]);
  });
});

describe('linear models, against onnxruntime-web', () => {
  const coefficients = { fs: [0.5, -1, 2, 1.5, 0.25, -0.75, -2, 1, 0.1] };
  test('LinearRegressor: one and three targets, intercepts, post_transform NONE, LOGISTIC, SOFTMAX and SOFTMAX_ZERO', async () => {
    await agree(ml('LinearRegressor', { coefficients: { fs: [0.5, -1, 2] }, intercepts: { fs: [0.3] } }), [{ x: rows(4) }, { x: rows(1) }], close);
    for (const post_transform of ['NONE', 'LOGISTIC', 'SOFTMAX', 'SOFTMAX_ZERO'])
      await agree(ml('LinearRegressor', { coefficients, intercepts: { fs: [0.3, -0.2, 0] }, targets: 3, post_transform }), [{ x: rows(4, [0, 0, 0]) }, { x: rows(2) }], close);
  });

  test('LinearClassifier: three classes (labels of the first highest score), post_transform NONE, LOGISTIC, SOFTMAX; int64 input', async () => {
    const outputs = [['label', 'int64'], ['z', 'float32']];
    for (const post_transform of ['NONE', 'LOGISTIC', 'SOFTMAX'])
      await agree(ml('LinearClassifier', { coefficients, intercepts: { fs: [0.3, -0.2, 0] }, classlabels_ints: [10, 20, 30], post_transform }, { outputs }),
        [{ x: rows(5) }, { x: rows(1, [1, 1, 1]) }], close);
    await agree(ml('LinearClassifier', { coefficients, intercepts: { fs: [0, 0, 0] }, classlabels_ints: [-1, 0, 1] }, { outputs, dtype: 'int64' }),
      [{ x: I([1, 2, 3, -4, 0, 2], [2, 3]) }], close);
    // two classes as two coefficient rows, the second the first negated (a binary logistic regression)
    await agree(ml('LinearClassifier', { coefficients: { fs: [-0.5, 1, -2, 0.5, -1, 2] }, intercepts: { fs: [-0.25, 0.25] }, classlabels_ints: [0, 1], post_transform: 'LOGISTIC' },
      { outputs }), [{ x: rows(6) }], close);
  });
});

// Two trees over three features: tree 0 tests feature 0 (<=), then 2 (<, NaN to the true child)
// or 1 (==); tree 1 tests feature 1 (>=), then 0 (>) or 2 (!=), NaN to the false child.
const nodes = {
  nodes_treeids: [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1],
  nodes_nodeids: [0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6],
  nodes_featureids: [0, 2, 1, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0],
  nodes_modes: { ss: ['BRANCH_LEQ', 'BRANCH_LT', 'BRANCH_EQ', 'LEAF', 'LEAF', 'LEAF', 'LEAF', 'BRANCH_GTE', 'BRANCH_GT', 'BRANCH_NEQ', 'LEAF', 'LEAF', 'LEAF', 'LEAF'] },
  nodes_values: { fs: [0.5, -1, 2, 0, 0, 0, 0, 0.25, 1, 3, 0, 0, 0, 0] },
  nodes_truenodeids: [1, 3, 5, 0, 0, 0, 0, 1, 3, 5, 0, 0, 0, 0],
  nodes_falsenodeids: [2, 4, 6, 0, 0, 0, 0, 2, 4, 6, 0, 0, 0, 0],
  nodes_missing_value_tracks_true: [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
};
const leaves = [[0, 3], [0, 4], [0, 5], [0, 6], [1, 3], [1, 4], [1, 5], [1, 6]];
/** Weights of every leaf for K outputs (leaf q, output k: (q * 3 + k * 5) % 7 - 3, halved). */
const weights = (prefix, K) => {
  const w = leaves.flatMap(([t, n], q) => Array.from({ length: K }, (_, k) => [t, n, k, ((q * 3 + k * 5) % 7 - 3) / 2]));
  return { [`${prefix}_treeids`]: w.map((v) => v[0]), [`${prefix}_nodeids`]: w.map((v) => v[1]), [`${prefix}_ids`]: w.map((v) => v[2]), [`${prefix}_weights`]: { fs: w.map((v) => v[3]) } };
};
/** Rows that take every path: the thresholds themselves, NaN, values either side. */
const treeRows = () => X([0.5, -1, 2, 0.6, 2, -1, NaN, 0.25, NaN, -3, 0.2, 3, 1.5, 0.3, 0, 0.4, NaN, 3, 2, 2, 1, -1, 0.25, -5], [8, 3]);

describe('tree ensembles, against onnxruntime-web', () => {
  test('TreeEnsembleRegressor: every branch mode, NaN to the true or the false child, SUM and AVERAGE, two targets, base_values', async () => {
    await agree(ml('TreeEnsembleRegressor', { ...nodes, ...weights('target', 1), n_targets: 1 }), [{ x: treeRows() }, { x: rows(2) }, { x: rows(0) }]);
    await agree(ml('TreeEnsembleRegressor', { ...nodes, ...weights('target', 2), n_targets: 2, aggregate_function: 'AVERAGE', base_values: { fs: [0.5, -1] } }),
      [{ x: treeRows() }, { x: rows(3) }]);
    await agree(ml('TreeEnsembleRegressor', { ...nodes, ...weights('target', 3), n_targets: 3, post_transform: 'SOFTMAX' }), [{ x: treeRows() }], close);
    for (const aggregate_function of ['MIN', 'MAX'])
      await agree(ml('TreeEnsembleRegressor', { ...nodes, ...weights('target', 2), n_targets: 2, aggregate_function, base_values: { fs: [0.5, -1] } }),
        [{ x: treeRows() }, { x: rows(0) }]);
  });

  test('TreeEnsembleClassifier: three classes, labels and scores, a class some leaves give no weight, post_transform SOFTMAX and LOGISTIC', async () => {
    const outputs = [['label', 'int64'], ['z', 'float32']];
    await agree(ml('TreeEnsembleClassifier', { ...nodes, ...weights('class', 3), classlabels_int64s: [5, 6, 7] }, { outputs }), [{ x: treeRows() }, { x: rows(2) }, { x: rows(0) }]);
    const some = weights('class', 3), keep = some.class_ids.map((k, q) => k !== 2 || q < 6); // class 2 only at tree 0's first two leaves
    const sparse = Object.fromEntries(Object.entries(some).map(([n, v]) => [n, Array.isArray(v) ? v.filter((_, q) => keep[q]) : { fs: v.fs.filter((_, q) => keep[q]) }]));
    for (const post_transform of ['NONE', 'SOFTMAX', 'LOGISTIC'])
      await agree(ml('TreeEnsembleClassifier', { ...nodes, ...sparse, classlabels_int64s: [1, 2, 3], post_transform }, { outputs }), [{ x: treeRows() }], close);
  });
});

/** A random forest of T full trees of depth D over C features (BRANCH_LEQ, thresholds on a grid of
 * 1/8 so that rows on the same grid hit them), K outputs per leaf; the attributes of prefix. */
function forest(T, D, C, K, prefix) {
  let seed = 7;
  const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296), grid = () => Math.round((rnd() * 4 - 2) * 8) / 8;
  const a = { nodes_treeids: [], nodes_nodeids: [], nodes_featureids: [], modes: [], values: [], nodes_truenodeids: [], nodes_falsenodeids: [], t: [], n: [], ids: [], w: [] };
  for (let t = 0; t < T; t++) {
    for (let k = 0; k < 2 ** (D + 1) - 1; k++) {
      const leaf = k >= 2 ** D - 1;
      a.nodes_treeids.push(t), a.nodes_nodeids.push(k), a.nodes_featureids.push(leaf ? 0 : Math.floor(rnd() * C)), a.modes.push(leaf ? 'LEAF' : 'BRANCH_LEQ');
      a.values.push(leaf ? 0 : grid()), a.nodes_truenodeids.push(leaf ? 0 : 2 * k + 1), a.nodes_falsenodeids.push(leaf ? 0 : 2 * k + 2);
      for (let j = 0; leaf && j < K; j++) a.t.push(t), a.n.push(k), a.ids.push(j), a.w.push(Math.round(rnd() * 64) / 64);
    }
  }
  const { modes, values, t, n, ids, w, ...rest } = a;
  return { attrs: { ...rest, nodes_modes: { ss: modes }, nodes_values: { fs: values }, [`${prefix}_treeids`]: t, [`${prefix}_nodeids`]: n, [`${prefix}_ids`]: ids,
                    [`${prefix}_weights`]: { fs: w } }, rows: (N) => X(Array.from({ length: N * C }, grid), [N, C]) };
}

test('a random forest of 12 trees of depth 5 over 6 features: the regressor and a classifier of four classes, 40 rows on the thresholds\' grid', async () => {
  const reg = forest(12, 5, 6, 1, 'target'), cls = forest(12, 5, 6, 4, 'class');
  await agree(ml('TreeEnsembleRegressor', { ...reg.attrs, n_targets: 1 }, { C: 6 }), [{ x: reg.rows(40) }, { x: reg.rows(3) }]);
  await agree(ml('TreeEnsembleClassifier', { ...cls.attrs, classlabels_int64s: [0, 1, 2, 3], post_transform: 'SOFTMAX' }, { C: 6, outputs: [['label', 'int64'], ['z', 'float32']] }),
    [{ x: cls.rows(40) }], close);
});

describe('refusals', () => {
  const x = { x: rows(2) };
  test('what onnxruntime and ONNX answer differently, and the ops without a row, are Unsupported', async () => {
    await refused(ml('LinearRegressor', { coefficients: { fs: [1, 2, 3] }, post_transform: 'LOGISTIC' }), x, 'Unsupported',
      /LinearRegressor_0 \(ai\.onnx\.ml\.LinearRegressor\): a post_transform of one score column \(onnxruntime leaves it untransformed\) is not supported/);
    await refused(ml('LinearRegressor', { coefficients: { fs: [1, 2, 3, 4, 5, 6] }, targets: 2, post_transform: 'PROBIT' }), x, 'Unsupported', /post_transform PROBIT is not supported/);
    await refused(ml('LinearClassifier', { coefficients: { fs: [1, 2, 3] }, intercepts: { fs: [0] }, classlabels_ints: [0, 1] }, { outputs: [['y', 'int64']] }), x,
      'Unsupported', /one score column \(a binary model with one coefficient row\) is not supported/);
    const lacking = weights('target', 2), two = weights('target', 1);
    for (const [n, v] of Object.entries(lacking)) lacking[n] = Array.isArray(v) ? v.slice(1) : { fs: v.fs.slice(1) }; // leaf 3 of tree 0 has no weight for target 0
    for (const [n, v] of Object.entries(two)) two[n] = Array.isArray(v) ? [...v, v[0]] : { fs: [...v.fs, 1] }; // leaf 3 of tree 0 has two
    for (const w of [lacking, two])
      await refused(ml('TreeEnsembleRegressor', { ...nodes, ...w, n_targets: w === two ? 1 : 2, aggregate_function: 'MAX' }), x, 'Unsupported',
        /MIN or MAX with a leaf that has no weight or two for a target \(onnxruntime and ONNX's reference part\) is not supported/);
    await refused(ml('TreeEnsembleClassifier', { ...nodes, ...weights('class', 2), classlabels_int64s: [0, 1] }, { outputs: [['y', 'int64']] }), x, 'Unsupported',
      /fewer than three classes \(onnxruntime's binary scores\) is not supported/);
    await assert.rejects(om.InferenceSession.create(onnxBytes({ opset: 17, ir: 8, ...ml('SVMRegressor', { coefficients: { fs: [1] } }) })),
      (e) => e instanceof om.OmError && e.kind === 'Unsupported' && /is ai\.onnx\.ml\.SVMRegressor, which the graph layer has no kernel for/.test(e.message));
  });

  test('attributes that do not fit the input or each other are Format, ShapeMismatch or IndexOutOfRange errors', async () => {
    await refused(ml('Scaler', { offset: { fs: [1, 2] }, scale: { fs: [1, 2] } }), x, 'ShapeMismatch',
      /Scaler_0 \(ai\.onnx\.ml\.Scaler\): attribute scale has 2 values for an input of 2 axes and 3 features \(one value, or one per feature of \[C\] or \[N, C\]\)/);
    await refused(ml('Scaler', { offset: { fs: [1] }, scale: { fs: [1, 2, 3] } }), x, 'Format', /give scale, and offset of the same length if any/);
    await refused(ml('Normalizer', { norm: 'L3' }), x, 'Format', /norm 'L3' \(MAX, L1 or L2\)/);
    await refused(ml('Imputer', { imputed_value_int64s: [1] }), x, 'Format', /an input of float32 takes imputed_value_floats \(and not the other\)/);
    await refused(ml('LinearRegressor', { coefficients: { fs: [1, 2] } }), x, 'ShapeMismatch', /2 coefficients and 0 intercepts for 1 outputs of 3 features/);
    await refused(ml('LinearClassifier', { coefficients: { fs: [1, 2, 3, 4, 5, 6] }, intercepts: { fs: [0, 1] }, classlabels_ints: [0, 1, 2] }, { outputs: [['y', 'int64']] }), x,
      'Format', /3 class labels for 2 intercepts/);
    const tree = (change) => ml('TreeEnsembleRegressor', { ...nodes, ...weights('target', 1), ...change });
    await refused(tree({ nodes_featureids: [0, 2, 3, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0] }), x, 'IndexOutOfRange', /node 2 of tree 0 reads feature 3 of an input of 3 features/);
    await refused(tree({ nodes_nodeids: [0, 1, 2, 3, 4, 5, 5, 0, 1, 2, 3, 4, 5, 6] }), x, 'Format', /node 5 of tree 0 is given twice/);
    await refused(tree({ nodes_truenodeids: [1, 3, 5, 0, 0, 0, 0, 1, 3, 7, 0, 0, 0, 0] }), x, 'Format', /node 2 of tree 1 has child 7, which is not another node of its tree/);
    await refused(tree({ nodes_falsenodeids: [2, 4, 6, 0, 0, 0, 0, 2, 4, 4, 0, 0, 0, 0] }), x, 'Format', /tree 1 has more than one root|node 4 of tree 1 is reached twice/);
    await refused(tree({ nodes_modes: { ss: ['BRANCH_LEQ', 'BRANCH_LT', 'BRANCH_EQ', 'LEAF', 'LEAF', 'LEAF', 'LEAF', 'BRANCH_GTE', 'BRANCH_GT', 'BRANCH_NEQ', 'LEAF', 'LEAF', 'LEAF', 'BRANCH_XX'] } }),
      x, 'Format', /node mode 'BRANCH_XX'/);
    await refused(tree({ target_ids: [0, 0, 0, 0, 0, 0, 0, 1] }), x, 'Format', /a weight of output 1 of 1/);
  });
});
