// Memory of PyTorch-style loops with no om.tidy and no dispose (docs/api.md, "Memory"): live C
// tensors and WebAssembly memory over
//   (1) LeNet-5 training steps (batch 16, cross-entropy, SGD with momentum): zeroGrad, forward,
//       loss, backward, step, as a PyTorch loop writes them;
//   (2) DenseNet-121 forwards (torchvision's architecture, tests/js/no-tidy-models.mjs, random weights,
//       eval, om.noGrad as torch.no_grad) at batch 1 on 64x64 images (the full 224x224 takes too
//       long on a shared 2-core machine; the tensor count per call is the same).
//   (3) LeNet-5 training steps written with the patterns users bring from PyTorch: every loss kept
//       as a number (.item()), a running loss kept as a tensor (loss.detach() added), a validation
//       forward in eval() mode every 100 steps, gradients accumulated over 4 steps
//       (zeroGrad({ setToNone: false })), the update as optimizer.step(closure), and detached
//       outputs kept in a Map of 8 entries.
// The loops are synchronous within each window (1000 steps, 100 forwards); between windows they
// yield to the event loop (a timer), as a page or a server does, so the garbage collector's
// callbacks can release what the loop dropped. Each window reports what the loop sees then, and
// after a forced full collection (--expose-gc) the floor. Flat: the floor and the heap after the
// first window stay within a few percent. With OM_MEMORY_NATURAL=1 no window forces a
// collection (only the end does): what the engine's own collections release in the loop.
//
//   npm run bench:memory                     bootstrap + build + both
//   node --expose-gc tools/memory_loops.mjs [lenet|densenet|patterns] [steps]
import * as om from 'onemodel';
import { LeNet5, densenet121 } from '../tests/js/no-tidy-models.mjs';

if (typeof globalThis.gc !== 'function') {
  console.error('run with node --expose-gc (npm run bench:memory does)');
  process.exit(2);
}
await om.ready();
om.setNumThreads(1);
const [which = 'all', count] = process.argv.slice(2);
const tick = () => new Promise((r) => setTimeout(r, 0));
const natural = process.env.OM_MEMORY_NATURAL === '1';

/** A full collection, then yields until the collector's callbacks stop releasing tensors. */
async function floor() {
  let prev = -1;
  for (let i = 0; i < 50; i++) {
    globalThis.gc();
    await tick();
    const now = om.memory().tensors;
    if (now === prev) break;
    prev = now;
  }
  return om.memory();
}

const mb = (b) => (b / 2 ** 20).toFixed(1);

/** Runs body() total times in windows of size, reporting each window; returns the floors. */
async function loop(label, total, size, body) {
  console.log(`\n${label}: ${total} iterations, windows of ${size}`);
  console.log('| after | live tensors (seen) | live MB (seen) | live tensors (floor) | live MB (floor) | wasm heap MB | ms / iteration |');
  console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  const floors = [];
  for (let done = 0; done < total;) {
    const t0 = performance.now();
    for (let i = 0; i < size; i++) body();
    const ms = (performance.now() - t0) / size;
    done += size;
    await tick();
    const seen = om.memory();
    const f = natural && done < total ? null : await floor(); // natural: no floor before the end
    floors.push(f ?? seen);
    const fl = f ? `${f.tensors} | ${mb(f.bytes)}` : '- | -';
    console.log(`| ${done} | ${seen.tensors} | ${mb(seen.bytes)} | ${fl} | ${mb((f ?? seen).heapBytes)} | ${ms.toFixed(2)} |`);
  }
  const last = floors[floors.length - 1];
  const warm = natural ? { ...last, heapBytes: floors[0].heapBytes } : floors[0]; // natural: the heap only
  const pct = (a, b) => `${(((a - b) / b) * 100).toFixed(2)}%`;
  console.log(`after warm-up (window 1) to the end: live tensors ${warm.tensors} -> ${last.tensors} (${pct(last.tensors, warm.tensors)}), `
    + `live bytes ${pct(last.bytes, warm.bytes)}, wasm heap ${mb(warm.heapBytes)} -> ${mb(last.heapBytes)} MB (${pct(last.heapBytes, warm.heapBytes)})`);
  return floors;
}

/** LeNet-5 with SGD and cross-entropy on one fixed batch of 16 (seeded): the training loops' setup. */
function lenetSetup() {
  om.manualSeed(0);
  const net = new LeNet5();
  return {
    net,
    opt: new om.optim.SGD(net.parameters(), { lr: 0.01, momentum: 0.9 }),
    lossFn: new om.nn.CrossEntropyLoss(),
    x: om.randn([16, 1, 28, 28], { seed: 1 }),
    y: om.tensor(Array.from({ length: 16 }, (_, i) => BigInt(i % 10))),
  };
}

if (which === 'all' || which === 'lenet') {
  const { net, opt, lossFn, x, y } = lenetSetup();
  await loop('LeNet-5 training steps (no tidy, no dispose)', Number(count) || 10000, 1000, () => {
    opt.zeroGrad();
    const loss = lossFn.forward(net.forward(x), y);
    loss.backward();
    opt.step();
  });
}

if (which === 'all' || which === 'densenet') {
  om.manualSeed(0);
  const net = densenet121().eval();
  const x = om.randn([1, 3, 64, 64], { seed: 2 });
  await loop('DenseNet-121 forwards at 64x64 under om.noGrad (no tidy, no dispose)', Number(count) || 1000, 100, () => {
    om.noGrad(() => net.forward(x));
  });
}

if (which === 'all' || which === 'patterns') {
  const { net, opt, lossFn, x, y } = lenetSetup();
  const losses = [], features = new Map();
  let running = om.zeros([]), i = 0;
  await loop('LeNet-5 training steps with item(), a running loss tensor, eval() switches, accumulation, step(closure), a Map', Number(count) || 10000, 1000, () => {
    if (i % 4 === 0) opt.zeroGrad({ setToNone: false });
    const closure = () => {
      const out = net.forward(x);
      features.set(i % 8, out.detach());
      const loss = lossFn.forward(out, y).div(4);
      loss.backward();
      return loss;
    };
    const loss = i % 4 === 3 ? opt.step(closure) : closure();
    losses.push(loss.item());
    running = running.add(loss.detach());
    if (i % 100 === 99) {
      net.eval();
      om.noGrad(() => net.forward(x).argmax(-1).toArray());
      net.train();
    }
    i++;
  });
  console.log(`losses kept: ${losses.length}, running loss ${running.item().toFixed(3)}, Map entries ${features.size}`);
}
