// Graph economy (docs/symbolic-axes.md, "What each op writes"): interpolate by a whole (or 1 / 2^j)
// scale is one Resize that picks the eager pixels at every size, in onnxruntime-web and the
// Session; identical nodes are written once (src/trace/merge.c) and a Where of constants by
// slices of a constant is a slice of one constant. The node and shape-computation counts of conv
// nets with symbolic height and width (UNets of two and three levels: one Resize per upsample, no
// Shape) and of GPT-2-small-shaped decoders of 12 and 6 layers (4 shape-computation nodes)
// (tools/graph_economy.mjs measures them), and the golden bytes tests/c/test_trace.c pins too.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced } from './helpers.mjs';
import { economy, models } from '../../tools/graph_economy.mjs';

memoryHooks();
const F = () => om.nn.functional;
const ops = (tm) => tm.graph().nodes.map((n) => n.opType);

/** keep(tm) at each [h, w] of sizes: a fresh [2, 3, h, w] input, its eager output by fn. */
function atSizes(keep, tm, fn, sizes, seed = 100) {
  for (const [h, w] of sizes) {
    const x = om.randn([2, 3, h, w], { seed: seed + h * 1000 + w });
    keep(tm, { x }, fn(x), `at ${h}x${w}`);
  }
}

describe('interpolate by a whole scale is one Resize with the eager pixels at every size', () => {
  const HW = ['batch', null, 'h', 'w'];
  // odd sizes, 1, and large ones: onnxruntime's dst / s and the eager dst * (float)(1 / s) floor alike
  const sizes = [[1, 1], [1, 7], [3, 5], [7, 1], [16, 9], [33, 65], [101, 3], [2, 257]];

  test('nearest by 2, 3, 7, 12 and by (3, 1/2): Resize by constant scales, no shape computation', () => withTraced((keep, trace) => {
    const x0 = om.randn([2, 3, 4, 6], { seed: 1 });
    for (const scaleFactor of [2, 3, 7, 12, [3, 0.5], [1, 4]]) {
      const fn = (x) => F().interpolate(x, { scaleFactor });
      const tm = trace(fn, { x: [x0, HW] });
      assert.deepEqual(ops(tm).filter((o) => o !== 'Constant'), ['Resize'], `scale ${scaleFactor}`);
      assert.equal(economy(tm).shapeNodes, 0);
      atSizes(keep, tm, fn, Array.isArray(scaleFactor) ? sizes.filter(([, w]) => w > 1) : sizes);
    }
  }));

  test('nearest, bilinear and bicubic to a size that is a power-of-two multiple of the input\'s: Resize by scales, no Shape', () => withTraced((keep, trace) => {
    const x0 = om.randn([2, 3, 4, 6], { seed: 2 });
    const forms = [
      (x) => F().interpolate(x, { size: [2 * x.shape[2], 3 * x.shape[3]] }),
      (x) => F().interpolate(x, { size: [2 * x.shape[2], 4 * x.shape[3]], mode: 'bilinear' }),
      (x) => F().interpolate(x, { size: [4 * x.shape[2], 2 * x.shape[3]], mode: 'bicubic' }),
    ];
    for (const fn of forms) {
      const tm = trace(fn, { x: [x0, HW] });
      assert.deepEqual(ops(tm).filter((o) => o !== 'Constant'), ['Resize']);
      assert.equal(economy(tm).shapeNodes, 0);
      atSizes(keep, tm, fn, sizes);
    }
  }));

  // Bilinear's coordinates are exact in both engines for a power of two only: by 3 onnxruntime's
  // (dst + 0.5) / 3 and PyTorch's (float)(1 / 3) * (dst + 0.5) differ in a last bit, 1e-4 apart at
  // a width of 771, and align_corners' (in - 1) / (out - 1) likewise; there the graph blends two
  // Gathers with the eager kernel's taps, computed in its float arithmetic: right at every size.
  test('bilinear by 3, by 1.5, to 3 w - 1 and with alignCorners: the eager taps, right at widths up to 771', () => withTraced((keep, trace) => {
    const x0 = om.randn([2, 3, 4, 6], { seed: 4 });
    const far = [...sizes, [3, 771], [300, 2]];
    const forms = [
      (x) => F().interpolate(x, { size: [3 * x.shape[2], x.shape[3]], mode: 'bilinear' }),
      (x) => F().interpolate(x, { scaleFactor: [1, 3], mode: 'bilinear' }),
      (x) => F().interpolate(x, { scaleFactor: 1.5, mode: 'bilinear' }),
      (x) => F().interpolate(x, { size: [x.shape[2], 3 * x.shape[3] - 1], mode: 'bilinear' }),
      (x) => F().interpolate(x, { size: [4 * x.shape[2], x.shape[3]], mode: 'bilinear', alignCorners: true }),
    ];
    for (const fn of forms) {
      const tm = trace(fn, { x: [x0, HW] });
      assert.ok(!ops(tm).includes('Resize'), ops(tm).join(','));
      assert.ok(ops(tm).filter((o) => o === 'Gather').length <= 4, 'two Gathers a resized axis');
      atSizes(keep, tm, fn, far);
    }
    // at fixed sizes the taps are constants: two Gathers, two Muls and an Add an axis, no Range
    const x = om.randn([2, 3, 257, 5], { seed: 5 });
    const fixed = (v) => F().interpolate(v, { size: [700, 5], mode: 'bilinear' });
    const tm = trace(fixed, { x: [x, ['batch', null, null, null]] });
    assert.deepEqual(ops(tm).filter((o) => o !== 'Constant').sort(), ['Add', 'Gather', 'Gather', 'Mul', 'Mul', 'Unsqueeze', 'Unsqueeze']);
  }));

  // Bicubic likewise (the same coordinates, four taps): by 3, 1.5 or 0.75, to 3 h and w + 3 with
  // alignCorners (the measured error of a Resize there: 4.5e-4 at 1,000 rows) the graph sums four Gathers an axis weighted by Keys' polynomials of the eager
  // fractions, computed in the kernel's float arithmetic: right at every size.
  test('bicubic by 3, 1.5 and 0.75, to 3 h by w + 3 with alignCorners: the eager taps, right at widths up to 771', () => withTraced((keep, trace) => {
    const x0 = om.randn([2, 3, 4, 6], { seed: 6 });
    const far = [[1, 1], [7, 1], [33, 65], [3, 771], [300, 2]];
    const forms = [
      [(x) => F().interpolate(x, { scaleFactor: [3, 1.5], mode: 'bicubic' }), far],
      [(x) => F().interpolate(x, { scaleFactor: 0.75, mode: 'bicubic' }), [[2, 2], [3, 771], [300, 2]]], // 1 * 0.75 is no row
      [(x) => F().interpolate(x, { size: [3 * x.shape[2], x.shape[3] + 3], mode: 'bicubic', alignCorners: true }), far],
    ];
    for (const [fn, at] of forms) {
      const tm = trace(fn, { x: [x0, HW] });
      assert.ok(!ops(tm).includes('Resize'), ops(tm).join(','));
      assert.ok(ops(tm).filter((o) => o === 'Gather').length <= 8, 'four Gathers a resized axis');
      atSizes(keep, tm, fn, at);
    }
    // at fixed sizes the taps are constants, with and without alignCorners: four Gathers, four Muls
    // and three Adds on the resized axis, no Range
    const x = om.randn([2, 3, 257, 5], { seed: 7 });
    for (const alignCorners of [false, true]) {
      const fixed = (v) => F().interpolate(v, { size: [700, 5], mode: 'bicubic', alignCorners });
      const tm = trace(fixed, { x: [x, ['batch', null, null, null]] });
      const times = (op, n) => Array(n).fill(op);
      assert.deepEqual(ops(tm).filter((o) => o !== 'Constant').sort(), [...times('Add', 3), ...times('Gather', 4), ...times('Mul', 4), ...times('Unsqueeze', 4)]);
    }
  }));

  test('nearest by a scale ONNX floors differently (2.5, 41) keeps the computed indices', () => withTraced((keep, trace) => {
    const x0 = om.randn([2, 3, 4, 3], { seed: 3 });
    for (const scaleFactor of [[2.5, 2], [1, 41]]) {
      const fn = (x) => F().interpolate(x, { scaleFactor });
      const tm = trace(fn, { x: [x0, HW] });
      assert.ok(!ops(tm).includes('Resize'), ops(tm).join(','));
      assert.equal(ops(tm).filter((o) => o === 'Gather').length, scaleFactor[0] === 1 ? 1 : 2); // a kept axis is no node
      atSizes(keep, tm, fn, [[1, 1], [5, 2], [9, 3]]);
    }
    // why 41 is refused: its output 41 reads source 0 eagerly, 1 in onnxruntime (41 / 41)
    const y = F().interpolate(om.arange(0, 2, { dtype: 'float32' }).reshape([1, 1, 1, 2]), { scaleFactor: [1, 41] });
    assert.equal(y.toArray()[41], 0);
  }));
});

describe('a matmul of flattened rows is MatMul on their own rank; positions arange(T).unsqueeze(0) are a slice of the table', () => {
  const W = () => om.randn([6, 5], { seed: 4 }), b = () => om.randn([5], { seed: 5 });
  const nonConst = (tm) => ops(tm).filter((o) => o !== 'Constant');

  test('view(-1, k), addmm or matmul, view back to the leading sizes: MatMul (+ Add), no size computed', () => withTraced((keep, trace) => {
    const [w, bias] = [W(), b()];
    const conv1d = (x) => om.addmm(bias, x.view(-1, 6), w).view([...x.shape.slice(0, -1), 5]); // transformers' Conv1D
    assert.deepEqual(nonConst(trace(conv1d, { x: [om.randn([2, 3, 6], { seed: 6 }), ['b', 't', null]] })), ['MatMul', 'Add']);
    const four = (x) => x.view(-1, 6).matmul(w).view(x.shape[0], x.shape[1], -1, 5).relu();
    assert.deepEqual(nonConst(trace(four, { x: [om.randn([2, 3, 4, 6], { seed: 7 }), ['b', null, 'h', null]] })), ['MatMul', 'Relu']);
  }));

  test('rows viewed back to other leading sizes keep their Reshapes (the values differ)', () => withTraced((keep, trace) => {
    const [w, bias] = [W(), b()];
    const swapped = (x) => om.addmm(bias, x.view(-1, 6), w).view(x.shape[1], x.shape[0], 5); // [T, B, 5] of rows in [B, T] order
    const tm = trace(swapped, { x: [om.randn([2, 3, 6], { seed: 8 }), ['b', 't', null]] });
    assert.equal(ops(tm).filter((o) => o === 'Reshape').length, 2);
    const kept = (x) => { // the flattened rows read again: the rewrite would compute the product twice
      const rows = x.view(-1, 6);
      return [rows.matmul(w).view(x.shape[0], x.shape[1], 5), rows.sum()];
    };
    assert.equal(ops(trace(kept, { x: [om.randn([2, 3, 6], { seed: 9 }), ['b', 't', null]] })).filter((o) => o === 'Reshape').length, 2);
  }));

  test('an embedding of arange(T) with axes of size 1 added is an Unsqueeze of the weight and one Slice', () => withTraced((keep, trace) => {
    const emb = om.randn([40, 4], { seed: 10 });
    const T = (x) => x.shape[0];
    for (const [positions, want] of [
      [(x) => om.arange(0, T(x), { dtype: 'int64' }), ['Shape', 'Slice', 'Add']],
      [(x) => om.arange(0, T(x), { dtype: 'int64' }).unsqueeze(1), ['Shape', 'Unsqueeze', 'Slice', 'Add']],
      [(x) => om.arange(0, T(x), { dtype: 'int64' }).unsqueeze(0).unsqueeze(0), ['Shape', 'Unsqueeze', 'Slice', 'Add']],
    ]) {
      const fn = (x) => F().embedding(positions(x), emb).add(x);
      const tm = trace(fn, { x: [om.randn([5, 4], { seed: 11 }), ['t', null]] });
      assert.deepEqual(nonConst(tm), want);
      assert.equal(economy(tm).ops, 'Shape,Slice', 'the Unsqueeze of the weight computes no size');
    }
  }));
});

describe('a reshape that keeps symbolic axes at other indices computes no size', () => {
  const HW = ['batch', null, 'h', 'w'];
  const nonConst = (tm) => ops(tm).filter((o) => o !== 'Constant');

  test('a channel shuffle [B, C, H, W] -> [B, g, C / g, H, W] and back: Unsqueeze, Reshape by 0s, Squeeze', () => withTraced((keep, trace) => {
    for (const groups of [2, 3]) {
      const fn = (x) => {
        const [b, c, h, w] = x.shape;
        return x.view(b, groups, c / groups, h, w).transpose(1, 2).contiguous().view(b, -1, h, w);
      };
      const tm = trace(fn, { x: [om.randn([2, 6, 4, 5], { seed: 20 + groups }), HW] });
      assert.deepEqual(nonConst(tm), ['Unsqueeze', 'Reshape', 'Transpose', 'Reshape', 'Squeeze']);
      assert.equal(economy(tm).shapeNodes, 0);
      for (const [n, h, w] of [[1, 1, 1], [3, 7, 2], [1, 33, 65]]) {
        const x = om.randn([n, 6, h, w], { seed: n + h + w });
        keep(tm, { x }, fn(x), `groups ${groups} at ${n}x6x${h}x${w}`);
      }
    }
  }));

  test('with one symbolic axis of no input\'s extent left as -1: [B, H, 6, W] -> [B H, 3, 2, 1, W]', () => withTraced((keep, trace) => {
    const fn = (x) => x.reshape(x.shape[0] * x.shape[1], 3, 2, 1, x.shape[3]);
    const tm = trace(fn, { x: [om.randn([2, 4, 6, 5], { seed: 30 }), ['batch', 'h', null, 'w']] });
    assert.deepEqual(nonConst(tm), ['Unsqueeze', 'Reshape']);
    assert.equal(economy(tm).shapeNodes, 0);
    for (const [n, h, w] of [[1, 1, 1], [3, 2, 9], [5, 17, 3]]) {
      const x = om.randn([n, h, 6, w], { seed: 31 + n });
      keep(tm, { x }, fn(x), `at ${n}x${h}x6x${w}`);
    }
    // [B, H, 6, W] -> [H, B, 6, W]: H and W copied (Reshape by [1, 0, -1, 6, 0] of [B, H, 6, 1, W]), B the -1
    const swapped = (x) => x.reshape(x.shape[1], x.shape[0], 6, x.shape[3]);
    const ts = trace(swapped, { x: [om.randn([2, 4, 6, 5], { seed: 32 }), ['batch', 'h', null, 'w']] });
    assert.deepEqual(nonConst(ts), ['Unsqueeze', 'Reshape', 'Squeeze']);
    for (const [n, h, w] of [[1, 3, 1], [4, 1, 2]]) {
      const x = om.randn([n, h, 6, w], { seed: 33 + n });
      keep(ts, { x }, swapped(x), `at ${n}x${h}x6x${w}`);
    }
    // two symbolic axes of no input's extent ([B H, 6] -> [B, H, 6]): one is -1, the other computed
    const two = (x) => x.reshape(-1, 6).relu().reshape(x.shape[0], x.shape[1], 6);
    assert.match(economy(trace(two, { x: [om.randn([2, 4, 6], { seed: 34 }), ['batch', 'h', null]] })).ops, /^Shape/);
  }));
});

describe('identical nodes written once', () => {
  test('two layers slicing equal mask buffers: one slice chain, the mask folded into one float constant', () => withTraced((keep, trace) => {
    const masks = [0, 1].map(() => om.ones([8, 8], { dtype: 'bool' }).triu(1));
    const fill = [om.full([], -1e9), om.full([], 0)];
    const fn = (x) => {
      const t = x.shape[1];
      let acc = x;
      for (const m of masks) {
        const f = om.where(m.slice(0, 0, t).slice(1, 0, t), fill[0], fill[1]); // before the unsqueeze, as the C model
        acc = acc.unsqueeze(1).add(f).sum([1]);
      }
      return acc;
    };
    const tm = trace(fn, { x: [om.randn([2, 5], { seed: 8 }), ['n', 't']] }, { outputNames: ['y0'] }); // om_test_trace's names
    // each sum runs over t, in float64 as eager sums (symbolic-sums.test.mjs)
    assert.deepEqual(ops(tm), ['Shape', 'Slice', 'Slice', 'Unsqueeze', 'Add', 'Cast', 'ReduceSum', 'Cast', 'Unsqueeze', 'Add', 'Cast', 'ReduceSum', 'Cast']);
    const consts = tm.graph().initializers.filter((i) => i.shape.length === 2);
    assert.deepEqual(consts.map((i) => [i.dtype, i.shape]), [['float32', [8, 8]]]);
    // the same bytes as natively (tests/c/test_trace.c golden_bytes_merged_masks builds this model)
    let h = 0xcbf29ce484222325n;
    for (const v of tm.toOnnx()) h = ((h ^ BigInt(v)) * 0x100000001b3n) & 0xffffffffffffffffn;
    assert.equal(h.toString(16).padStart(16, '0'), '242de410222046ed');
    for (const [n, t] of [[1, 1], [3, 8], [1, 7]]) {
      const x = om.randn([n, t], { seed: n * 10 + t });
      keep(tm, { x }, fn(x), `at ${n}x${t}`);
    }
  }));
});

// The counts tools/graph_economy.mjs prints (docs/symbolic-axes.md has the table), so a change
// that writes more nodes fails here; each model checked in onnxruntime-web and the Session at
// three other sizes of every symbol (withTraced) and at sizes far from the example. GPT-2 small
// (d 96), whose layers' identical nodes are written once, is traced a second time here: the same
// bytes again.
describe('node counts of conv nets with symbolic height and width and decoders of 12 and 6 layers', () => {
  const twice = 'GPT-2 small (d 96)';
  const want = {
    'zoo UNet': { nodes: 11, shapeNodes: 0 },
    'zoo ResNet': { nodes: 31, shapeNodes: 0 },
    'two-level UNet, nearest': { nodes: 23, shapeNodes: 0 },
    'two-level UNet, bilinear': { nodes: 23, shapeNodes: 0 },
    'three-level UNet, nearest, h and w undeclared': { nodes: 32, shapeNodes: 0 },
    'GPT-2 small (d 96)': { nodes: 453, shapeNodes: 4 },
    'GPT-2 small, transformers\' port (vocabulary 512)': { nodes: 454, shapeNodes: 4 },
    'GPT-2, 6 blocks of 12 heads (d 96)': { nodes: 231, shapeNodes: 4 },
  };
  const far = {
    'zoo UNet': [[1, 2, 2, 2], [1, 2, 64, 6], [3, 2, 30, 94]],
    'zoo ResNet': [[1, 3, 1, 1], [2, 3, 5, 63], [1, 3, 96, 33]],
    'two-level UNet, nearest': [[1, 3, 4, 4], [1, 3, 100, 8], [3, 3, 12, 64]],
    'two-level UNet, bilinear': [[1, 3, 4, 4], [1, 3, 100, 8], [3, 3, 12, 64]],
    'three-level UNet, nearest, h and w undeclared': [[1, 3, 8, 8], [1, 3, 96, 16], [2, 3, 24, 64]],
    'GPT-2 small (d 96)': [[1, 1], [3, 100], [1, 600]],
    'GPT-2 small, transformers\' port (vocabulary 512)': [[1, 1], [1, 17]], // d 768: short sequences keep it quick
    'GPT-2, 6 blocks of 12 heads (d 96)': [[1, 1], [2, 45], [1, 300]],
  };
  for (const [name, make, makeInputs] of models(true)) {
    test(name, async () => {
      const model = make().eval(), inputs = makeInputs();
      try {
        await withTraced((keep) => {
          const tm = om.trace(model, inputs);
          const e = economy(tm);
          assert.deepEqual({ nodes: e.nodes, shapeNodes: e.shapeNodes }, want[name], `${name}: ${e.ops}`);
          if (!name.startsWith('GPT')) assert.ok(!ops(tm).includes('Shape'), 'a conv net computes no size');
          if (name === twice) {
            const again = om.trace(model, inputs);
            try {
              assert.deepEqual(again.toOnnx(), tm.toOnnx(), 'tracing twice gives the same bytes with merged nodes');
            } finally {
              again.dispose();
            }
          }
          const [[input, [example]]] = Object.entries(inputs);
          keep(tm, { [input]: example }, model.forward(example), 'at the example', model);
          for (const shape of far[name]) {
            const x = example.dtype === 'int64' ? om.tidy(() => om.rand(shape, { seed: shape[1] }).mul(500).long()) : om.randn(shape, { seed: shape[2] });
            keep(tm, { [input]: x }, model.forward(x), `at [${shape}]`);
          }
        });
      } finally {
        model.dispose();
        for (const v of Object.values(inputs)) v[0].dispose();
      }
    });
  }
});
