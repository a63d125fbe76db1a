// Threads in WASM: Node loads the threaded build (js/dist/onemodel-mt.*, docs/api.md "Threads");
// om.setNumThreads and om.numThreads with their errors, and the same bits on 1 thread as on 2 (and
// 3 where there are the cores) for matrix products (large, 8 rows, fewer rows than a tile),
// convolutions of every path with their gradients, and three zoo models (forward, and a training
// step's gradients) at sizes where their products are split.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import * as om from 'onemodel';
import { memoryHooks } from './helpers.mjs';
import { GPT } from '../../examples/zoo/gpt.mjs';
import { ResNet } from '../../examples/zoo/resnet.mjs';
import { UNet } from '../../examples/zoo/unet.mjs';

memoryHooks();

const MOST = Math.min(4, availableParallelism()); // the default: the cores, capped at 4
after(() => om.setNumThreads(MOST));

/** The error check of assert.throws: an OmError of kind `kind` whose message matches `re`. */
const omError = (kind, re) => (e) => e instanceof om.OmError && e.kind === kind && re.test(e.message);

/** The thread counts compared with 1: 2, and 3 where there are the cores. */
const COUNTS = MOST >= 3 ? [2, 3] : [2];

/** fn() -> tensors, run on 1 thread and on each of COUNTS: the same shapes and bits (compared as uint32). */
function sameBits(what, fn) {
  const run = (n) => {
    assert.equal(om.setNumThreads(n), Math.min(n, MOST));
    const ts = fn();
    const out = ts.map((t) => ({ shape: t.shape, bits: new Uint32Array(t.toArray().buffer) }));
    om.dispose(ts);
    return out;
  };
  const one = run(1);
  for (const n of COUNTS) {
    const got = run(n);
    assert.equal(got.length, one.length);
    one.forEach((r, i) => {
      assert.deepEqual(got[i].shape, r.shape, `${what}: output ${i}'s shape`);
      assert.ok(Buffer.from(got[i].bits.buffer).equals(Buffer.from(r.bits.buffer)), `${what}: output ${i} differs between 1 and ${n} threads`);
    });
  }
}

/** The gradients of loss(model) for every parameter, after one backward pass. */
function grads(model, loss) {
  const params = model.parameters();
  params.forEach((p) => p.zeroGrad?.());
  const l = loss();
  l.backward();
  l.dispose();
  return params.map((p) => p.grad.clone());
}

test('loading the threaded build in Node adds no process-wide listeners (an application\'s own handlers keep working)', () => {
  // a fresh process: the test runner has listeners of its own
  const script = `const events = ['uncaughtException', 'unhandledRejection'];
    const count = () => events.map((e) => process.listenerCount(e)).join();
    const before = count();
    const om = await import('onemodel');
    await om.ready();
    process.stdout.write(JSON.stringify({ before, after: count(), threads: om.numThreads() }));`;
  const got = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
  assert.deepEqual(got, { before: '0,0', after: '0,0', threads: MOST });
});

describe('om.setNumThreads and om.numThreads', () => {
  test('the default is the cores available, capped at 4; a count above the cap gives the cap', () => {
    assert.equal(om.numThreads(), MOST);
    assert.equal(om.setNumThreads(1), 1);
    assert.equal(om.numThreads(), 1);
    assert.equal(om.setNumThreads(64), MOST);
    assert.equal(om.numThreads(), MOST);
  });

  test('a count that is not an integer of at least 1 is an InvalidArgument, and changes nothing', () => {
    om.setNumThreads(1);
    assert.throws(() => om.setNumThreads(0), omError('InvalidArgument', /^setNumThreads: expected an integer of at least 1, got 0$/));
    assert.throws(() => om.setNumThreads(1.5), omError('InvalidArgument', /got 1\.5$/));
    assert.throws(() => om.setNumThreads('2'), omError('InvalidArgument', /got string$/));
    assert.throws(() => om.setNumThreads(), omError('InvalidArgument', /got undefined$/));
    assert.equal(om.numThreads(), 1);
  });
});

describe('the same bits on 1 and 2 threads', () => {
  test('matmul: wide, tall, batched, 8-row and 2-row products, transposed operands', () => {
    const ts = [[om.randn([200, 300], { seed: 1 }), om.randn([300, 500], { seed: 2 })],
      [om.randn([3000, 64], { seed: 3 }), om.randn([64, 24], { seed: 4 })],
      [om.randn([6, 64, 80], { seed: 5 }), om.randn([6, 80, 96], { seed: 6 })],
      [om.randn([8, 512], { seed: 12 }), om.randn([512, 1024], { seed: 13 })],
      [om.randn([2, 1024], { seed: 14 }), om.randn([1024, 1024], { seed: 15 })]];
    try {
      for (const [a, b] of ts) {
        sameBits(`matmul ${a.shape} x ${b.shape}`, () => [a.matmul(b)]);
        sameBits(`matmul transposed ${a.shape} x ${b.shape}`, () => om.tidy(() => [b.transpose(-1, -2).matmul(a.transpose(-1, -2))]));
      }
    } finally {
      om.dispose(ts.flat());
    }
  });

  test('conv2d on every path, and its gradients', () => {
    const F = om.nn.functional;
    const cases = [ // [N, C, HW, O, kernel, stride, padding, groups]: what takes that path
      [1, 64, 32, 64, 3, 1, 1, 1], // the windows read in place, the product split
      [12, 8, 16, 8, 3, 1, 1, 1], // the windows in place, the 12 products as the parts
      [2, 64, 32, 64, 3, 1, 1, 64], // depthwise: one row per product
      [2, 16, 32, 32, 3, 2, 1, 1], // stride 2: im2col
      [4, 32, 16, 32, 1, 1, 0, 1], // 1x1: the input planes as they are
      [1, 256, 2, 256, 3, 1, 1, 1], // more channels than positions: the product by rows of channels
      [1, 128, 8, 256, 3, 2, 1, 2], // the same on im2col, two groups
    ];
    for (const [n, c, hw, o, k, stride, padding, groups] of cases) {
      const x = om.randn([n, c, hw, hw], { seed: 7 }), w = om.randn([o, c / groups, k, k], { seed: 8 }), b = om.randn([o], { seed: 9 });
      try {
        sameBits(`conv2d ${x.shape} * ${w.shape} stride ${stride} groups ${groups}`, () => om.tidy(() => {
          const [xg, wg, bg] = [x, w, b].map((t) => {
            const cl = t.clone();
            cl.requiresGrad = true;
            return cl;
          });
          const y = F.conv2d(xg, wg, bg, { stride, padding, groups });
          y.mul(y).sum().backward();
          return [y.detach(), xg.grad.clone(), wg.grad.clone(), bg.grad.clone()];
        }));
      } finally {
        om.dispose([x, w, b]);
      }
    }
  });

  // zoo models at sizes where their products are split: [what, model, its input]
  const models = [
    ['ResNet (batch 8 of 3 x 64 x 64)', () => new ResNet(), () => om.randn([8, 3, 64, 64], { seed: 16 })],
    ['GPT (d 128, batch 8 of 32 tokens)', () => new GPT({ vocab: 256, d: 128, heads: 4, maxLen: 64 }),
      () => om.tidy(() => om.rand([8, 32], { seed: 10 }).mul(256).long())],
    ['UNet (batch 4 of 2 x 64 x 64)', () => new UNet(), () => om.randn([4, 2, 64, 64], { seed: 11 })],
  ];
  for (const [what, makeModel, makeInput] of models) {
    test(`the zoo ${what}: the output in eval mode and a training step's gradients`, () => {
      const model = makeModel(), x = makeInput();
      try {
        model.eval();
        sameBits(`${what}: output`, () => om.noGrad(() => [model.forward(x)]));
        model.train();
        sameBits(`${what}: gradients`, () => grads(model, () => om.tidy(() => model.forward(x).pow(2).mean())));
      } finally {
        x.dispose();
        model.dispose();
      }
    });
  }
});
