// Fast mode's passes over a plan (src/runtime/passes.c) on the node patterns exporters write:
// each graph is built node by node as torch.onnx or a Hugging Face model spells it, and the plan's
// kernels show the fused op, its values agree with onnxruntime-web and with exact mode (which runs
// every node as it is) at several sizes, and a near miss (another constant, a second reader of a
// value in between, a bias that is not a constant vector) keeps its nodes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { runOnnx } from '../../examples/lib/oracle.mjs';
import { memoryHooks, near } from './helpers.mjs';
import { onnxBytes } from '../../tools/onnx_bytes.mjs';

memoryHooks();

const bits = (a) => Array.from(new Uint32Array(a.buffer));
const values = (n, seed) => Array.from({ length: n }, (_, i) => Math.sin(seed * 7.1 + i * 1.3) * 0.5);

/**
 * Runs graph (input x of dims with named axes, output y) at each shape in fast and exact mode and
 * in onnxruntime-web. fast and exact: the plans' kernels in each mode. tol: the largest
 * |fast - other| allowed, relative to max(1, max |y|); 0: fast mode's bits are exact mode's.
 */
async function agree(graph, { shapes, fast: fastKernels, exact: exactKernels, tol }) {
  const bytes = onnxBytes({ outputs: ['y'], ...graph });
  const fast = await om.InferenceSession.create(bytes);
  const exact = await om.InferenceSession.create(bytes, { mode: 'exact' });
  try {
    for (const shape of shapes) {
      const at = `[${shape}]`;
      const x = Float32Array.from(values(shape.reduce((a, b) => a * b, 1), shape.length * 100 + shape[0]), (v) => 6 * v);
      const [yf, ye] = om.tidy(() => [fast, exact].map((s) => s.run({ x: om.tensor(x, { shape }) }).y.toArray()));
      assert.deepEqual(fast.planKernels, fastKernels, `${at}: fast mode's kernels`);
      assert.deepEqual(exact.planKernels, exactKernels, `${at}: exact mode's kernels`);
      const ort = (await runOnnx(bytes, { x: { dtype: 'float32', data: x, dims: shape } })).y.data;
      const scale = Math.max(1, ...Array.from(ye, Math.abs));
      near(yf, ort, Math.max(tol, 1e-6) * scale, `${at}: fast mode against onnxruntime-web`);
      if (tol === 0) assert.deepEqual(bits(yf), bits(ye), `${at}: fast and exact mode, bit for bit`);
      else near(yf, ye, tol * scale, `${at}: fast against exact mode`);
    }
  } finally {
    fast.dispose();
    exact.dispose();
  }
}

describe('fast mode: MatMul + Add of a constant bias is linear', () => {
  const W = { name: 'W', dtype: 'float32', dims: [8, 6], values: values(48, 1) };
  const B = { name: 'B', dtype: 'float32', dims: [6], values: values(6, 2) };
  const matmul = { op: 'MatMul', inputs: ['x', 'W'], outputs: ['m'] };
  const shapes = [[1, 3, 8], [4, 5, 8]];
  const input = [{ name: 'x', dims: ['b', 't', 8] }];

  test('torch.onnx\'s nn.Linear on 3-D input (the bias on either side): one linear, the same bits', async () => {
    for (const inputs of [['m', 'B'], ['B', 'm']]) {
      await agree({ nodes: [matmul, { op: 'Add', inputs, outputs: ['y'] }], inputs: input, inits: [W, B] },
        { shapes, fast: ['linear'], exact: ['matmul', 'add'], tol: 0 });
    }
    await agree({ nodes: [matmul, { op: 'Add', inputs: ['m', 'B'], outputs: ['y'] }], inputs: [{ name: 'x', dims: ['b', 8] }], inits: [W, B] },
      { shapes: [[2, 8], [9, 8]], fast: ['linear'], exact: ['matmul', 'add'], tol: 0 });
  });

  test('Gemm without transB (MatMul and Add once bound) is linear too', async () => {
    await agree({ nodes: [{ op: 'Gemm', inputs: ['x', 'W', 'B'], outputs: ['y'] }], inputs: [{ name: 'x', dims: ['b', 8] }], inits: [W, B] },
      { shapes: [[3, 8], [1, 8]], fast: ['linear'], exact: ['matmul', 'add'], tol: 0 });
  });

  test('near misses keep their nodes: the product read twice, a bias fed or not a vector, a weight fed', async () => {
    const twice = { nodes: [matmul, { op: 'Add', inputs: ['m', 'B'], outputs: ['a'] }, { op: 'Mul', inputs: ['a', 'm'], outputs: ['y'] }], inputs: input, inits: [W, B] };
    await agree(twice, { shapes, fast: ['matmul', 'add', 'mul'], exact: ['matmul', 'add', 'mul'], tol: 0 });
    const rows = { name: 'B', dtype: 'float32', dims: [5, 6], values: values(30, 3) }; // a bias per row, not per column
    await agree({ nodes: [matmul, { op: 'Add', inputs: ['m', 'B'], outputs: ['y'] }], inputs: input, inits: [W, rows] },
      { shapes: [[1, 5, 8], [3, 5, 8]], fast: ['matmul', 'add'], exact: ['matmul', 'add'], tol: 0 });
    for (const fed of ['W', 'B']) { // a weight or a bias fed as a graph input is not a constant of the plan
      const bytes = onnxBytes({ nodes: [matmul, { op: 'Add', inputs: ['m', 'B'], outputs: ['y'] }], inputs: [...input, { name: fed, dims: fed === 'W' ? [8, 6] : [6] }],
        inits: fed === 'W' ? [B] : [W], outputs: ['y'] });
      const s = await om.InferenceSession.create(bytes);
      try {
        om.tidy(() => { s.run({ x: om.randn([2, 3, 8], { seed: 1 }), [fed]: om.randn(fed === 'W' ? [8, 6] : [6], { seed: 2 }) }); });
        assert.deepEqual(s.planKernels, ['matmul', 'add'], `${fed} fed`);
      } finally {
        s.dispose();
      }
    }
  });
});

describe('fast mode: GELU written as arithmetic is gelu', () => {
  const c = (name, v) => ({ name, dtype: 'float32', dims: [], values: [v] });
  const input = [{ name: 'x', dims: ['b', 'n'] }];
  const shapes = [[2, 33], [7, 300]];
  // torch.onnx's nn.GELU(): ((x * (erf(x / sqrt 2) + 1)) * 0.5
  const torchErf = (sqrt2 = Math.SQRT2) => ({
    nodes: [{ op: 'Div', inputs: ['x', 'r2'], outputs: ['d'] }, { op: 'Erf', inputs: ['d'], outputs: ['e'] },
      { op: 'Add', inputs: ['e', 'one'], outputs: ['s'] }, { op: 'Mul', inputs: ['x', 's'], outputs: ['p'] },
      { op: 'Mul', inputs: ['p', 'half'], outputs: ['y'] }],
    inputs: input, inits: [c('r2', sqrt2), c('one', 1), c('half', 0.5)] });
  // BERT's gelu: (x * 0.5) * (1 + erf(x * (1 / sqrt 2)))
  const bertErf = {
    nodes: [{ op: 'Mul', inputs: ['x', 'half'], outputs: ['h'] }, { op: 'Mul', inputs: ['x', 'r'], outputs: ['d'] },
      { op: 'Erf', inputs: ['d'], outputs: ['e'] }, { op: 'Add', inputs: ['one', 'e'], outputs: ['s'] },
      { op: 'Mul', inputs: ['h', 's'], outputs: ['y'] }],
    inputs: input, inits: [c('r', Math.SQRT1_2), c('one', 1), c('half', 0.5)] };
  // torch.onnx's nn.GELU('tanh'): 0.5 * (x * (1 + tanh(b * (x + k * (x * (x * x))))))
  const torchTanh = (kappa = 0.044715) => ({
    nodes: [{ op: 'Mul', inputs: ['x', 'x'], outputs: ['x2'] }, { op: 'Mul', inputs: ['x', 'x2'], outputs: ['x3'] },
      { op: 'Mul', inputs: ['k', 'x3'], outputs: ['kx3'] }, { op: 'Add', inputs: ['x', 'kx3'], outputs: ['in'] },
      { op: 'Mul', inputs: ['b', 'in'], outputs: ['bin'] }, { op: 'Tanh', inputs: ['bin'], outputs: ['t'] },
      { op: 'Add', inputs: ['one', 't'], outputs: ['s'] }, { op: 'Mul', inputs: ['x', 's'], outputs: ['p'] },
      { op: 'Mul', inputs: ['half', 'p'], outputs: ['y'] }],
    inputs: input, inits: [c('k', kappa), c('b', Math.sqrt(2 / Math.PI)), c('one', 1), c('half', 0.5)] });
  // GPT-2's gelu_new: (0.5 * x) * (1 + tanh(b * (x + k * pow(x, 3))))
  const gpt2Tanh = {
    nodes: [{ op: 'Mul', inputs: ['half', 'x'], outputs: ['h'] }, { op: 'Pow', inputs: ['x', 'three'], outputs: ['x3'] },
      { op: 'Mul', inputs: ['x3', 'k'], outputs: ['kx3'] }, { op: 'Add', inputs: ['kx3', 'x'], outputs: ['in'] },
      { op: 'Mul', inputs: ['in', 'b'], outputs: ['bin'] }, { op: 'Tanh', inputs: ['bin'], outputs: ['t'] },
      { op: 'Add', inputs: ['t', 'one'], outputs: ['s'] }, { op: 'Mul', inputs: ['h', 's'], outputs: ['y'] }],
    inputs: input, inits: [c('k', 0.044715), c('b', Math.sqrt(2 / Math.PI)), c('one', 1), c('half', 0.5), c('three', 3)] };

  test('the erf form (torch.onnx, BERT): one gelu, within 1e-6 of the nodes\' values', async () => {
    await agree(torchErf(), { shapes, fast: ['gelu'], exact: ['div', 'erf', 'add', 'mul', 'mul'], tol: 1e-6 });
    await agree(bertErf, { shapes, fast: ['gelu'], exact: ['mul', 'mul', 'erf', 'add', 'mul'], tol: 1e-6 });
  });

  test('the tanh form (torch.onnx, GPT-2\'s gelu_new): one gelu, within 1e-6 of the nodes\' values', async () => {
    await agree(torchTanh(), { shapes, fast: ['gelu'], exact: ['mul', 'mul', 'mul', 'add', 'mul', 'tanh', 'add', 'mul', 'mul'], tol: 1e-6 });
    await agree(gpt2Tanh, { shapes, fast: ['gelu'], exact: ['mul', 'pow', 'mul', 'add', 'mul', 'tanh', 'add', 'mul'], tol: 1e-6 });
  });

  test('near misses keep their nodes: another constant, a value in between read twice', async () => {
    const erfNodes = ['div', 'erf', 'add', 'mul', 'mul'];
    await agree(torchErf(1.5), { shapes, fast: erfNodes, exact: erfNodes, tol: 0 });
    const tanhNodes = ['mul', 'mul', 'mul', 'add', 'mul', 'tanh', 'add', 'mul', 'mul'];
    await agree(torchTanh(0.05), { shapes, fast: tanhNodes, exact: tanhNodes, tol: 0 });
    const g = torchErf();
    g.nodes[4].outputs = ['y0'];
    g.nodes.push({ op: 'Add', inputs: ['y0', 'e'], outputs: ['y'] }); // erf's value read by a second node
    await agree(g, { shapes, fast: [...erfNodes, 'add'], exact: [...erfNodes, 'add'], tol: 0 });
  });
});

describe('fast mode: LayerNorm written out (below opset 17) is layer_norm', () => {
  const c = (name, v) => ({ name, dtype: 'float32', dims: [], values: [v] });
  const input = [{ name: 'x', dims: ['b', 't', 'n'] }];
  const shapes = [[1, 3, 7], [2, 5, 33], [3, 2, 300]];
  const mean = (x, y) => ({ op: 'ReduceMean', inputs: [x], outputs: [y], ints: { axes: [-1], keepdims: 1 } });
  // torch.onnx's nn.LayerNorm at opset 16 and below: the weight and the bias of the axis' size
  // (the inputs' last size, so a graph per size); square: Pow(d, 2) or Mul(d, d)
  const torchLayerNorm = (n, { square = 'pow', eps = 1e-5, affine = 2 } = {}) => ({
    nodes: [mean('x', 'm'), { op: 'Sub', inputs: ['x', 'm'], outputs: ['d'] },
      square === 'pow' ? { op: 'Pow', inputs: ['d', 'two'], outputs: ['sq'] } : { op: 'Mul', inputs: ['d', 'd'], outputs: ['sq'] },
      mean('sq', 'v'), { op: 'Add', inputs: ['v', 'eps'], outputs: ['ve'] }, { op: 'Sqrt', inputs: ['ve'], outputs: ['sd'] },
      { op: 'Div', inputs: ['d', 'sd'], outputs: [affine ? 'nd' : 'y'] },
      ...(affine ? [{ op: 'Mul', inputs: ['nd', 'w'], outputs: [affine > 1 ? 'nw' : 'y'] }] : []),
      ...(affine > 1 ? [{ op: 'Add', inputs: ['b', 'nw'], outputs: ['y'] }] : [])],
    inputs: input,
    inits: [c('two', 2), c('eps', eps), { name: 'w', dtype: 'float32', dims: [n], values: values(n, 4).map((v) => 1 + v) },
      { name: 'b', dtype: 'float32', dims: [n], values: values(n, 5) }] });
  const each = async (make, kernels) => {
    for (const shape of shapes) await agree(make(shape[2]), { shapes: [shape], ...kernels(shape[2]) });
  };
  const written = ['mean', 'sub', 'pow', 'mean', 'add', 'sqrt', 'div', 'mul', 'add'];

  test('torch.onnx\'s nn.LayerNorm: one layer_norm, within 1e-5 of the nodes\' values, at several sizes', async () => {
    await each((n) => torchLayerNorm(n), () => ({ fast: ['layer_norm'], exact: written, tol: 1e-5 }));
    await each((n) => torchLayerNorm(n, { square: 'mul', eps: 1e-12 }), () => ({ fast: ['layer_norm'], exact: written.with(2, 'mul'), tol: 1e-5 }));
    await each((n) => torchLayerNorm(n, { affine: 1 }), () => ({ fast: ['layer_norm'], exact: written.slice(0, 8), tol: 1e-5 }));
    await each((n) => torchLayerNorm(n, { affine: 0 }), () => ({ fast: ['layer_norm'], exact: written.slice(0, 7), tol: 1e-5 }));
  });

  test('near misses keep their nodes: the square of x (not of the difference), the difference read by a third node', async () => {
    const ofX = (n) => {
      const g = torchLayerNorm(n);
      g.nodes[2].inputs = ['x', 'two'];
      return g;
    };
    await each(ofX, () => ({ fast: written, exact: written, tol: 0 }));
    const third = (n) => {
      const g = torchLayerNorm(n);
      g.nodes.at(-1).outputs = ['y0'];
      g.nodes.push({ op: 'Add', inputs: ['y0', 'd'], outputs: ['y'] });
      return g;
    };
    // d / sqrt(mean(d^2) + eps) * w is then an RMSNorm of d (the same bits), the bias an add
    await each(third, () => ({ fast: ['mean', 'sub', 'rms_norm', 'add', 'add'], exact: [...written, 'add'], tol: 0 }));
    // a weight that is not of the axis' size (a scalar): the normalisation fused, the product left
    const scalar = (n) => {
      const g = torchLayerNorm(n);
      g.inits[2] = c('w', 1.5);
      return g;
    };
    await each(scalar, () => ({ fast: ['layer_norm', 'mul', 'add'], exact: written, tol: 1e-5 }));
  });
});

describe('fast mode: RMSNorm written out is rms_norm', () => {
  const c = (name, v) => ({ name, dtype: 'float32', dims: [], values: [v] });
  const input = [{ name: 'x', dims: ['b', 't', 'n'] }];
  const shapes = [[1, 3, 7], [2, 5, 33], [3, 2, 300]];
  // Hugging Face's LlamaRMSNorm as torch.onnx writes it: x * rsqrt(mean(x^2) + eps) * w, rsqrt
  // as Div(1, Sqrt) (or Reciprocal); T5's divides instead; square: Pow(x, 2) or Mul(x, x)
  const hfRmsNorm = (n, { square = 'pow', inverse = 'div', weight = true, one = 1, eps = 1e-6 } = {}) => ({
    nodes: [square === 'pow' ? { op: 'Pow', inputs: ['x', 'two'], outputs: ['sq'] } : { op: 'Mul', inputs: ['x', 'x'], outputs: ['sq'] },
      { op: 'ReduceMean', inputs: ['sq'], outputs: ['v'], ints: { axes: [-1], keepdims: 1 } },
      { op: 'Add', inputs: ['v', 'eps'], outputs: ['ve'] }, { op: 'Sqrt', inputs: ['ve'], outputs: ['sd'] },
      ...(inverse === 'divide' ? [{ op: 'Div', inputs: ['x', 'sd'], outputs: [weight ? 'nx' : 'y'] }]
        : [inverse === 'div' ? { op: 'Div', inputs: ['one', 'sd'], outputs: ['r'] } : { op: 'Reciprocal', inputs: ['sd'], outputs: ['r'] },
          { op: 'Mul', inputs: ['x', 'r'], outputs: [weight ? 'nx' : 'y'] }]),
      ...(weight ? [{ op: 'Mul', inputs: ['w', 'nx'], outputs: ['y'] }] : [])],
    inputs: input,
    inits: [c('two', 2), c('eps', eps), c('one', one), { name: 'w', dtype: 'float32', dims: [n], values: values(n, 4).map((v) => 1 + v) }] });
  const each = async (make, kernels) => {
    for (const shape of shapes) await agree(make(shape[2]), { shapes: [shape], ...kernels });
  };
  const written = ['pow', 'mean', 'add', 'sqrt', 'div', 'mul', 'mul'];

  test('Hugging Face\'s RMSNorm (LLaMA, T5): one rms_norm with the nodes\' bits, at several sizes', async () => {
    await each((n) => hfRmsNorm(n), { fast: ['rms_norm'], exact: written, tol: 0 });
    await each((n) => hfRmsNorm(n, { square: 'mul', inverse: 'reciprocal', eps: 1e-5 }), { fast: ['rms_norm'], exact: written.with(0, 'mul'), tol: 0 });
    await each((n) => hfRmsNorm(n, { inverse: 'divide' }), { fast: ['rms_norm'], exact: ['pow', 'mean', 'add', 'sqrt', 'div', 'mul'], tol: 0 });
    await each((n) => hfRmsNorm(n, { weight: false }), { fast: ['rms_norm'], exact: written.slice(0, 6), tol: 0 });
  });

  test('near misses keep their nodes: another numerator, the square of another value, a value in between read twice', async () => {
    await each((n) => hfRmsNorm(n, { one: 2 }), { fast: written, exact: written, tol: 0 });
    const other = (n) => {
      const g = hfRmsNorm(n);
      g.nodes.unshift({ op: 'Neg', inputs: ['x'], outputs: ['nx0'] });
      g.nodes[1].inputs = ['nx0', 'two'];
      return g;
    };
    await each(other, { fast: ['neg', ...written], exact: ['neg', ...written], tol: 0 });
    const twice = (n) => {
      const g = hfRmsNorm(n);
      g.nodes.at(-1).outputs = ['y0'];
      g.nodes.push({ op: 'Add', inputs: ['y0', 'r'], outputs: ['y'] }); // 1 / s read by a second node
      return g;
    };
    await each(twice, { fast: [...written, 'add'], exact: [...written, 'add'], tol: 0 });
  });
});

describe('fast mode: the copies torch.onnx\'s MultiheadAttention makes for the attention', () => {
  // nn.MultiheadAttention (sequence first) as torch.onnx writes it: one in-projection, q, k and v
  // sliced from it and reshaped to [t, b x heads, d] (at b > 1 a copy each), then transposed for
  // the attention, q divided by sqrt(d) first. The pass takes q's division in and lays the copies
  // of q, k and v out in the order the attention reads them (tests/c/test_session.c checks the
  // strides): the same bits.
  const i64 = (name, v) => ({ name, dtype: 'int64', dims: [v.length], values: v });
  const heads = (j) => [
    { op: 'Slice', inputs: ['proj', `s${j}`, `e${j}`, 'axis'], outputs: [`p${j}`] },
    { op: 'Reshape', inputs: [`p${j}`, 'shape'], outputs: [`r${j}`] },
    { op: 'Transpose', inputs: [`r${j}`], outputs: [`h${j}`], ints: { perm: j === 1 ? [1, 2, 0] : [1, 0, 2] } }];
  const graph = {
    nodes: [{ op: 'Transpose', inputs: ['x'], outputs: ['xt'], ints: { perm: [1, 0, 2] } },
      { op: 'MatMul', inputs: ['xt', 'W'], outputs: ['m'] }, { op: 'Add', inputs: ['B', 'm'], outputs: ['proj'] },
      ...heads(0), ...heads(1), ...heads(2), { op: 'Div', inputs: ['h0', 'c'], outputs: ['q'] },
      { op: 'MatMul', inputs: ['q', 'h1'], outputs: ['s'] }, { op: 'Softmax', inputs: ['s'], outputs: ['pr'], ints: { axis: -1 } },
      { op: 'MatMul', inputs: ['pr', 'h2'], outputs: ['y'] }],
    inputs: [{ name: 'x', dims: ['b', 't', 16] }],
    inits: [{ name: 'W', dtype: 'float32', dims: [16, 48], values: values(768, 6) }, { name: 'B', dtype: 'float32', dims: [48], values: values(48, 7) },
      ...[0, 1, 2].flatMap((j) => [i64(`s${j}`, [16 * j]), i64(`e${j}`, [16 * j + 16])]), i64('axis', [2]), i64('shape', [0, -1, 4]),
      { name: 'c', dtype: 'float32', dims: [], values: [2] }] };

  test('one attention on copies laid out for it, with exact mode\'s bits, at batch 1 (no copy), 3 and 8', async () => {
    await agree(graph, { shapes: [[1, 5, 16]], fast: ['linear', 'attention'], exact: ['matmul', 'add', 'div', 'matmul', 'softmax', 'matmul'], tol: 0 });
    const copies = ['clone', 'clone', 'clone'];
    await agree(graph, { shapes: [[3, 5, 16], [8, 65, 16]], fast: ['linear', ...copies, 'attention'],
      exact: ['matmul', 'add', ...copies, 'div', 'matmul', 'softmax', 'matmul'], tol: 0 });
  });
});

describe('fast mode: q scaled by a constant before the scores is the attention\'s scale', () => {
  // softmax((q / c) kᵀ) v, or (c q), with x as q, k and v: the attention op scales q's elements as
  // the Div or Mul node does, before the same product, so the bits are exact mode's for any c (3:
  // not a power of two, where (q kᵀ) / c would differ in the last bits).
  const graph = ({ scale = { op: 'Div', inputs: ['x', 'c'] }, c = { name: 'c', dtype: 'float32', dims: [], values: [3] }, extra = [], y = 'y' } = {}) => ({
    nodes: [{ ...scale, outputs: ['q'] }, { op: 'Transpose', inputs: ['x'], outputs: ['kt'], ints: { perm: [0, 2, 1] } },
      { op: 'MatMul', inputs: ['q', 'kt'], outputs: ['s'] }, { op: 'Softmax', inputs: ['s'], outputs: ['pr'], ints: { axis: -1 } },
      { op: 'MatMul', inputs: ['pr', 'x'], outputs: [y] }, ...extra],
    inputs: [{ name: 'x', dims: ['b', 't', 4] }], inits: [c] });
  const unfused = (op) => [op, 'matmul', 'softmax', 'matmul'];
  const shapes = [[2, 5, 4], [3, 70, 4]]; // 70 query rows: two of the op's blocks

  test('Div by a scalar, or Mul by one on either side: one attention with exact mode\'s bits', async () => {
    await agree(graph(), { shapes, fast: ['attention'], exact: unfused('div'), tol: 0 });
    await agree(graph({ scale: { op: 'Mul', inputs: ['c', 'x'] }, c: { name: 'c', dtype: 'float32', dims: [1, 1], values: [0.3] } }),
      { shapes, fast: ['attention'], exact: unfused('mul'), tol: 0 });
  });

  test('near misses keep their nodes: a scale of a vector, q read by another node too', async () => {
    const small = [shapes[0]];
    await agree(graph({ c: { name: 'c', dtype: 'float32', dims: [4], values: [3, 2, 1, 0.5] } }), { shapes: small, fast: ['div', 'attention'], exact: unfused('div'), tol: 0 });
    await agree(graph({ y: 'o', extra: [{ op: 'Add', inputs: ['o', 'q'], outputs: ['y'] }] }),
      { shapes: small, fast: ['div', 'attention', 'add'], exact: [...unfused('div'), 'add'], tol: 0 });
  });
});

describe('fast mode: attention written with Einsum (torchvision\'s MaxViT)', () => {
  // MaxViT's relative-position attention as torch.onnx writes it: k scaled, Einsum
  // 'bghid,bghjd->bghij' for the scores, the bias [heads, P, P] added, Softmax, Einsum
  // 'bghij,bghjd->bghid'. The Einsum rule leaves operands already in order as they are (no view
  // between the product and its reader), so the pass sees MatMul, Add, Softmax, MatMul.
  const graph = {
    nodes: [{ op: 'Mul', inputs: ['x', 'c'], outputs: ['k'] },
      { op: 'Einsum', inputs: ['x', 'k'], outputs: ['s'], strings: { equation: 'bghid,bghjd->bghij' } },
      { op: 'Add', inputs: ['s', 'bias'], outputs: ['a'] }, { op: 'Softmax', inputs: ['a'], outputs: ['pr'], ints: { axis: -1 } },
      { op: 'Einsum', inputs: ['pr', 'x'], outputs: ['y'], strings: { equation: 'bghij,bghjd->bghid' } }],
    inputs: [{ name: 'x', dims: ['b', 'g', 2, 6, 4] }],
    inits: [{ name: 'c', dtype: 'float32', dims: [], values: [0.5] }, { name: 'bias', dtype: 'float32', dims: [2, 6, 6], values: values(72, 3) }] };

  test('one attention, with exact mode\'s bits, at two sizes', async () => {
    await agree(graph, { shapes: [[1, 3, 2, 6, 4], [2, 5, 2, 6, 4]], fast: ['mul', 'attention'], exact: ['mul', 'matmul', 'add', 'softmax', 'matmul'], tol: 0 });
  });
});

describe('fast mode: Swin\'s shifted-window attention (a second mask in another grouping)', () => {
  // torchvision's Swin as torch.onnx writes it: q scaled, MatMul with k transposed, Add of the
  // relative position bias [heads, N, N], Reshape to [B / windows, windows, heads, N, N], Add of the
  // shift mask [windows, 1, N, N] (0 or -100), Reshape back to [-1, heads, N, N], Softmax, MatMul.
  // Here windows 3, heads 2, N 4, d 4; x is q, k and v at once.
  const N = 4, H = 2, W = 3;
  const ints = (name, v) => ({ name, dtype: 'int64', dims: [v.length], values: v });
  const shift = Array.from({ length: W * N * N }, (_, i) => ((i * 7) % 5 < 2 ? -100 : 0));
  const swin = ({ grouped = [-1, W, H, N, N], mask = { name: 'm2', dtype: 'float32', dims: [W, 1, N, N], values: shift }, pre = [], extra = [], y = 'y' } = {}) => ({
    nodes: [...pre, { op: 'Mul', inputs: ['x', 'c'], outputs: ['q'] }, { op: 'Transpose', inputs: ['x'], outputs: ['kt'], ints: { perm: [0, 1, 3, 2] } },
      { op: 'MatMul', inputs: ['q', 'kt'], outputs: ['s'] }, { op: 'Add', inputs: ['s', 'bias'], outputs: ['sb'] },
      { op: 'Reshape', inputs: ['sb', 'to5'], outputs: ['g'] }, { op: 'Add', inputs: ['g', 'm2'], outputs: ['gm'] },
      { op: 'Reshape', inputs: ['gm', 'to4'], outputs: ['s4'] }, { op: 'Softmax', inputs: ['s4'], outputs: ['pr'], ints: { axis: -1 } },
      { op: 'MatMul', inputs: ['pr', 'x'], outputs: [y] }, ...extra],
    inputs: [{ name: 'x', dims: ['bw', H, N, 4] }],
    inits: [{ name: 'c', dtype: 'float32', dims: [], values: [0.5] }, { name: 'bias', dtype: 'float32', dims: [H, N, N], values: values(H * N * N, 5) },
      ints('to5', grouped), ints('to4', [-1, H, N, N]), ...(mask ? [mask] : [])] });
  const unfused = ['mul', 'matmul', 'add', 'add', 'softmax', 'matmul'];
  const shapes = [[W, H, N, 4], [4 * W, H, N, 4]]; // B 1 and 4

  test('one attention adding both masks, with exact mode\'s bits, at B 1 and 4', async () => {
    await agree(swin(), { shapes, fast: ['attention'], exact: unfused, tol: 0 });
  });

  test('the batches grouped windows-outer, or a second mask that depends on the batch: the op reads the mask in that grouping, the same bits', async () => {
    // [windows, B, ...] holds batch t at (t / B, t % B), not (t / windows, t % windows)
    await agree(swin({ grouped: [W, -1, H, N, N], mask: { name: 'm2', dtype: 'float32', dims: [W, 1, 1, N, N], values: shift } }),
      { shapes, fast: ['attention'], exact: unfused, tol: 0 });
    // the second mask x itself as [B / windows, windows, heads, N, N] (d = N): other values at each batch
    await agree(swin({ mask: null, pre: [{ op: 'Reshape', inputs: ['x', 'to5'], outputs: ['m2'] }] }),
      { shapes, fast: ['attention'], exact: unfused, tol: 0 });
  });

  test('near misses keep their nodes: a grouping that splits the query rows, the regrouped sum read twice', async () => {
    // [B / windows, windows, heads x N / 2, 2, N]: the rows of a head's scores cut in two
    await agree(swin({ grouped: [-1, W, H * N / 2, 2, N], mask: { name: 'm2', dtype: 'float32', dims: [W, 1, 2, N], values: shift.slice(0, W * 2 * N) } }),
      { shapes, fast: unfused, exact: unfused, tol: 0 });
    // the masked scores also added to the output (d = N): read by the softmax and by that add
    await agree(swin({ y: 'o', extra: [{ op: 'Add', inputs: ['o', 's4'], outputs: ['y'] }] }),
      { shapes, fast: [...unfused, 'add'], exact: [...unfused, 'add'], tol: 0 });
  });
});
