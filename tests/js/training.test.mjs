// Training end to end in Node: an MLP classifier on three interleaved spirals (made here, fixed
// seed) with CrossEntropyLoss + Adam to a stated training accuracy, then traced in eval mode and
// checked in onnxruntime-web; a small CNN (conv-relu-pool, conv-relu-pool, linear) on noisy 8x8
// images of stripes and squares (made here, fixed seed) with CrossEntropyLoss + Adam in
// mini-batches to a stated held-out accuracy, then traced and checked the same way; a linear
// regression with SGD + momentum to a stated loss and to the known coefficients.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { vals, memoryHooks, withTraced } from './helpers.mjs';
import { checkModelFile, disposeModelFile } from '../../examples/lib/workflow.mjs';
import * as mlp from '../../examples/zoo/mlp.mjs';

const { MLP } = mlp; // the zoo's (examples/zoo/mlp.mjs), here 2 -> 64 -> 64 -> 3
after(() => disposeModelFile(checkModelFile(mlp)));

memoryHooks();

/** n points per class on `classes` spiral arms with a little noise, deterministic. */
function spirals(n, classes, seed) {
  let s = seed >>> 0;
  const rnd = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const xs = [];
  const ys = [];
  for (let c = 0; c < classes; c++) {
    for (let i = 0; i < n; i++) {
      const r = (i + 1) / n;
      const a = (c * 2 * Math.PI) / classes + 1.75 * Math.PI * r + (rnd() - 0.5) * 0.3;
      xs.push([r * Math.cos(a), r * Math.sin(a)]);
      ys.push(BigInt(c));
    }
  }
  return { x: om.tensor(xs), y: om.tensor(ys) };
}

/**
 * n 8x8 one-channel images per class, deterministic from seed: class 0 horizontal stripes,
 * class 1 vertical stripes (thickness 1 or 2, random phase), class 2 a filled square (side 3 or
 * 4, random place); each pixel 0/1 plus Gaussian noise (sd 0.6). Shuffled. { x [3n, 1, 8, 8], y [3n] }.
 */
function shapes(n, seed) {
  let s = seed >>> 0;
  const rnd = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
  const items = [];
  for (let c = 0; c < 3; c++) {
    for (let i = 0; i < n; i++) {
      const img = new Array(64).fill(0);
      const thick = 1 + Math.floor(rnd() * 2);
      const phase = Math.floor(rnd() * 2 * thick);
      const side = 3 + Math.floor(rnd() * 2);
      const r0 = Math.floor(rnd() * (9 - side)), c0 = Math.floor(rnd() * (9 - side));
      for (let r = 0; r < 8; r++) {
        for (let q = 0; q < 8; q++) {
          let on;
          if (c === 0) on = Math.floor((r + phase) / thick) % 2 === 0;
          else if (c === 1) on = Math.floor((q + phase) / thick) % 2 === 0;
          else on = r >= r0 && r < r0 + side && q >= c0 && q < c0 + side;
          img[r * 8 + q] = (on ? 1 : 0) + 0.6 * gauss();
        }
      }
      items.push([img, c]);
    }
  }
  for (let i = items.length - 1; i > 0; i--) { // Fisher-Yates with the same generator
    const j = Math.floor(rnd() * (i + 1));
    [items[i], items[j]] = [items[j], items[i]];
  }
  return {
    x: om.tensor(items.flatMap((it) => it[0]), { shape: [items.length, 1, 8, 8] }),
    y: om.tensor(items.map((it) => BigInt(it[1]))),
  };
}

class SmallCNN extends om.nn.Module {
  constructor() {
    super();
    this.conv1 = new om.nn.Conv2d(1, 8, 3, { padding: 1 });
    this.conv2 = new om.nn.Conv2d(8, 16, 3, { padding: 1 });
    this.pool = new om.nn.MaxPool2d(2);
    this.fc = new om.nn.Linear(16 * 2 * 2, 3);
  }

  forward(x) {
    return om.tidy(() => {
      const h = this.pool.forward(this.conv1.forward(x).relu()); // [N, 8, 4, 4]
      const g = this.pool.forward(this.conv2.forward(h).relu()); // [N, 16, 2, 2]
      return this.fc.forward(g.flatten(1));
    });
  }
}

/** steps full-batch steps of opt on lossFn(model(x), y); returns the last loss. */
function train(model, lossFn, opt, x, y, steps) {
  let last = NaN;
  for (let step = 0; step < steps; step++) {
    opt.zeroGrad();
    last = om.tidy(() => {
      const loss = lossFn.forward(model.forward(x), y);
      loss.backward();
      return loss.item();
    });
    opt.step();
  }
  return last;
}

function accuracy(logits, y) {
  const pred = vals(om.tidy(() => logits.argmax(1)));
  const truth = vals(y);
  return pred.filter((p, i) => p === truth[i]).length / truth.length;
}

describe('training', () => {
  test('MLP on three spirals: CrossEntropyLoss + Adam reaches >= 95% training accuracy; the trained model traces and matches onnxruntime-web', async () => {
    om.manualSeed(0);
    const { x, y } = spirals(100, 3, 7);
    const net = new MLP(2, 64, 3);
    const lossFn = new om.nn.CrossEntropyLoss();
    const opt = new om.optim.Adam(net.parameters(), { lr: 0.01 });
    try {
      const first = om.tidy(() => lossFn.forward(net.forward(x), y).item());
      const last = train(net, lossFn, opt, x, y, 600);
      const acc = om.tidy(() => accuracy(net.forward(x), y));
      assert.ok(last < first / 5, `loss ${first} -> ${last}`);
      assert.ok(acc >= 0.95, `training accuracy ${acc}`);

      net.eval();
      await withTraced((keep, trace) => {
        const tm = trace(net, { x: [x, ['batch', null]] }, { outputNames: ['logits'] });
        assert.deepEqual(tm.inputs, [{ name: 'x', dtype: 'float32', shape: ['batch', 2] }]);
        const g = tm.graph();
        assert.deepEqual(g.initializers.map((i) => i.name).sort(),
          ['fc1.bias', 'fc1.weight', 'fc2.bias', 'fc2.weight', 'fc3.bias', 'fc3.weight']);
        assert.deepEqual(g.nodes.map((n) => n.opType), ['Gemm', 'Relu', 'Gemm', 'Relu', 'Gemm']);
      });
    } finally {
      opt.dispose();
      net.dispose();
      lossFn.dispose();
      om.dispose([x, y]);
    }
  });

  test('CNN on 8x8 stripes and squares: CrossEntropyLoss + Adam reaches >= 90% held-out accuracy; the trained model traces and matches onnxruntime-web', async (t) => {
    om.manualSeed(0);
    const train = shapes(100, 11);
    const held = shapes(50, 12);
    const net = new SmallCNN();
    const lossFn = new om.nn.CrossEntropyLoss();
    const opt = new om.optim.Adam(net.parameters(), { lr: 0.01 });
    const t0 = performance.now();
    try {
      const before = om.tidy(() => accuracy(net.forward(held.x), held.y));
      const B = 30, N = train.x.shape[0];
      let last = NaN;
      for (let epoch = 0; epoch < 10; epoch++) {
        for (let i = 0; i < N; i += B) {
          opt.zeroGrad();
          last = om.tidy(() => {
            const loss = lossFn.forward(net.forward(train.x.slice(0, i, i + B)), train.y.slice(0, i, i + B));
            loss.backward();
            return loss.item();
          });
          opt.step();
        }
      }
      const acc = om.tidy(() => accuracy(net.forward(held.x), held.y));
      const trainAcc = om.tidy(() => accuracy(net.forward(train.x), train.y));
      t.diagnostic(`held-out accuracy ${before} -> ${acc} (training ${trainAcc}, last batch loss ${last.toFixed(4)}) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      assert.ok(acc >= 0.9, `held-out accuracy ${acc}`);

      net.eval();
      await withTraced((keep, trace) => {
        const tm = trace(net, { x: [held.x, ['batch', null, null, null]] }, { outputNames: ['logits'] });
        assert.deepEqual(tm.outputs, [{ name: 'logits', dtype: 'float32', shape: ['batch', 3] }]);
        assert.deepEqual(tm.graph().nodes.map((n) => n.opType).filter((o) => o !== 'Reshape' && o !== 'Flatten'),
          ['Conv', 'Relu', 'MaxPool', 'Conv', 'Relu', 'MaxPool', 'Gemm']);
        const few = held.x.slice(0, 0, 7);
        keep(tm, { x: few }, net.forward(few));
      });
    } finally {
      opt.dispose();
      net.dispose();
      lossFn.dispose();
      om.dispose([train, held]);
    }
  });
  test('linear regression: SGD with momentum finds y = 3 x0 - 2 x1 + 0.5 (MSELoss below 1e-4)', () => {
    om.manualSeed(1);
    const x = om.randn([64, 2], { seed: 5 });
    const y = om.tidy(() => x.matmul(om.tensor([[3], [-2]])).add(0.5));
    const model = new om.nn.Linear(2, 1);
    const lossFn = new om.nn.MSELoss();
    const opt = new om.optim.SGD(model.parameters(), { lr: 0.05, momentum: 0.9 });
    try {
      const loss = train(model, lossFn, opt, x, y, 300);
      assert.ok(loss < 1e-4, `final loss ${loss}`);
      const w = vals(model.weight);
      const b = vals(model.bias);
      assert.ok(Math.abs(w[0] - 3) < 1e-2 && Math.abs(w[1] + 2) < 1e-2 && Math.abs(b[0] - 0.5) < 1e-2, `w ${w} b ${b}`);
    } finally {
      opt.dispose();
      model.dispose();
      om.dispose([x, y]);
    }
  });
});
