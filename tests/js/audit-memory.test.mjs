// An audit of memory without tidy: PyTorch-style loops the other memory tests do not write, each
// with no om.tidy and no dispose. After a warm-up, every loop's live tensor count returns to the
// same number once the garbage collector has run, and WebAssembly memory stays within 5% (asserted
// with counts, never times):
//   - Adam with gradient clipping by the total norm (as torch.nn.utils.clip_grad_norm_ writes it)
//     and a step learning-rate schedule (StepLR's), keeping a running loss with .item();
//   - an inference loop that collects its outputs in a list, reads them, and drops the list;
//   - BatchNorm in training mode (running statistics updated in forward, buffers in place);
//   - requiresGrad toggled on a frozen backbone between phases (fine-tuning);
//   - an LSTM and a GRU whose hidden state is carried across calls and detached each step (truncated
//     backpropagation through time);
//   - every loss kept as a number with .item() and a running loss kept as a tensor, with train()/eval()
//     switches for a validation forward;
//   - gradient accumulation over steps with zeroGrad({ setToNone: false });
//   - a closure-based optimizer step (optimizer.step(closure));
//   - detached outputs stored in a JS Map that overwrites its entries.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, collectGarbage } from './helpers.mjs';

memoryHooks();
const nn = om.nn;

/** om.memory() after a full collection. */
const collected = async () => (await collectGarbage(), om.memory());

/** Disposes what a test made (optimizers, modules, tensors) and collects what its checks dropped. */
async function release(...things) {
  for (const t of things) t.dispose();
  await collectGarbage();
}

/**
 * Runs step() `warm` times, collects, then `n` more times in windows of n / 4, collecting after
 * each: the live tensor count after every window equals the warm one and the wasm heap stays
 * within 5%. Returns what the last step returned.
 */
async function flat(label, step, { warm = 10, n = 200 } = {}) {
  for (let i = 0; i < warm; i++) step(i);
  const base = await collected();
  let last;
  for (let w = 0; w < 4; w++) {
    for (let i = 0; i < n / 4; i++) last = step(warm + w * (n / 4) + i);
    const m = await collected();
    assert.equal(m.tensors, base.tensors, `${label}: live tensors after window ${w + 1} (warm ${base.tensors})`);
    assert.equal(m.bytes, base.bytes, `${label}: live bytes after window ${w + 1}`);
    assert.ok(m.heapBytes <= base.heapBytes * 1.05, `${label}: wasm memory ${m.heapBytes} vs ${base.heapBytes} after warm-up`);
  }
  return last;
}

class Net extends nn.Module {
  constructor(norm = false) {
    super();
    this.fc1 = new nn.Linear(6, 16);
    this.bn = norm ? new nn.BatchNorm1d(16) : new nn.Identity();
    this.fc2 = new nn.Linear(16, 3);
  }

  forward(x) {
    return this.fc2.forward(this.bn.forward(this.fc1.forward(x)).relu());
  }
}

const data = () => [om.randn([8, 6], { seed: 5 }), om.tensor([0n, 1n, 2n, 1n, 0n, 2n, 1n, 0n])];

/** A training step as PyTorch writes it: zero_grad, forward, loss, backward, beforeStep(), step. Returns the loss. */
function trainStep(net, opt, x, y, beforeStep = () => {}) {
  opt.zeroGrad();
  const loss = om.nn.functional.crossEntropy(net.forward(x), y);
  loss.backward();
  beforeStep();
  opt.step();
  return loss;
}

describe('PyTorch-style loops without tidy stay flat', () => {
  test('Adam with gradient clipping, a step LR schedule and a running loss read with item()', async () => {
    om.manualSeed(3);
    const net = new Net();
    const params = net.parameters();
    const opt = new om.optim.Adam(params, { lr: 0.05 });
    const [x, y] = data();
    let running = 0, first = null;
    const clip = () => { // clip_grad_norm_(params, 0.5): the total norm over every gradient, then one scale
      const total = om.stack(params.map((p) => p.grad.norm())).norm().item();
      const coef = 0.5 / (total + 1e-6);
      if (coef < 1) for (const p of params) p.grad.mul_(coef);
    };
    const step = (i) => {
      const loss = trainStep(net, opt, x, y, clip);
      opt.lr = 0.05 * 0.5 ** Math.floor(i / 50); // StepLR(step_size=50, gamma=0.5)
      running = 0.9 * running + 0.1 * loss.item();
      first ??= loss.item();
      return loss.item();
    };
    const last = await flat('Adam', step);
    assert.ok(last < first, `it trained: ${first} -> ${last} (running ${running})`);
    assert.equal(opt.lr, 0.05 * 0.5 ** 4);
    await release(opt, net, x, y);
  });

  test('an inference loop that builds a list of outputs, reads it and drops it', async () => {
    om.manualSeed(4);
    const net = new Net().eval();
    const xs = Array.from({ length: 5 }, (_, i) => om.randn([2, 6], { seed: 10 + i }));
    const step = () => om.noGrad(() => {
      const outputs = [];
      for (const x of xs) outputs.push(net.forward(x).softmax(-1));
      return om.cat(outputs).argmax(-1).toArray().length; // the list is dropped here
    });
    assert.equal(await flat('list of outputs', step), 10);
    // and with grad on: each dropped output holds its graph until it is collected
    assert.equal(await flat('list of outputs, grad on', () => xs.map((x) => net.forward(x).sum().item()).length, { n: 40 }), 5);
    await release(net, ...xs);
  });

  test('BatchNorm in training mode: running statistics updated by each forward', async () => {
    om.manualSeed(5);
    const net = new Net(true);
    const opt = new om.optim.SGD(net.parameters(), { lr: 0.01 });
    const [x, y] = data();
    await flat('BatchNorm', () => { trainStep(net, opt, x, y); });
    assert.equal(net.bn.num_batches_tracked.item(), 210);
    assert.ok(net.bn.running_var.sum().item() !== 16);
    await release(opt, net, x, y);
  });

  test('requiresGrad toggled on a frozen backbone between phases', async () => {
    om.manualSeed(6);
    const net = new Net();
    const opt = new om.optim.SGD(net.parameters(), { lr: 0.01, momentum: 0.9 });
    const [x, y] = data();
    const step = (i) => {
      const freeze = Math.floor(i / 5) % 2 === 0; // five steps frozen, five not
      for (const p of net.fc1.parameters()) p.requiresGrad = !freeze;
      trainStep(net, opt, x, y);
      return freeze;
    };
    await flat('requiresGrad toggling', step);
    // a frozen phase leaves fc1 as it was
    step(0);
    const w = net.fc1.weight.clone();
    step(1);
    assert.equal(net.fc1.weight.sub(w).abs().amax().item(), 0);
    await release(w, opt, net, x, y);
  });

  test('an LSTM and a GRU with the hidden state carried across calls and detached (truncated BPTT)', async () => {
    om.manualSeed(7);
    const lstm = new nn.LSTM(3, 5, { batchFirst: true });
    const gru = new nn.GRU(3, 5, { numLayers: 2 });
    const head = new nn.Linear(10, 1);
    const params = [...lstm.parameters(), ...gru.parameters(), ...head.parameters()];
    const opt = new om.optim.Adam(params, { lr: 0.01 });
    const seq = om.randn([2, 4, 3], { seed: 8 });
    const target = om.randn([2, 1], { seed: 9 });
    let hc = null, h = null;
    const step = () => {
      opt.zeroGrad();
      const [out, state] = lstm.forward(seq, hc);
      const [out2, h2] = gru.forward(seq.transpose(0, 1), h);
      hc = state.map((t) => t.detach()); // as hidden = tuple(h.detach() for h in hidden)
      h = h2.detach();
      const last = om.cat([out.select(1, -1), out2.select(0, -1)], -1);
      const loss = head.forward(last).sub(target).pow(2).mean();
      loss.backward();
      opt.step();
      return loss.item();
    };
    const lastLoss = await flat('RNN hidden state', step, { n: 100 });
    assert.ok(Number.isFinite(lastLoss));
    hc = null;
    h = null;
    await release(opt, lstm, gru, head, seq, target);
  });

  test('losses kept with item(), a running loss kept as a tensor, train()/eval() switches for validation', async () => {
    om.manualSeed(8);
    const net = new Net(true);
    const opt = new om.optim.SGD(net.parameters(), { lr: 0.05, momentum: 0.9 });
    const [x, y] = data();
    const losses = [];
    let running = om.zeros([]);
    let val = null;
    const step = (i) => {
      const loss = trainStep(net, opt, x, y);
      losses.push(loss.item());
      running = running.add(loss.detach()); // as running_loss += loss.detach()
      if (i % 10 === 9) { // validation: eval mode, no grad, then back to training
        net.eval();
        val = om.noGrad(() => om.nn.functional.crossEntropy(net.forward(x), y).item());
        net.train();
      }
    };
    await flat('losses and running loss', step);
    assert.equal(losses.length, 210);
    assert.ok(Math.abs(running.item() - losses.reduce((a, b) => a + b, 0)) < 1e-3 * 210, `${running.item()}`);
    assert.ok(losses.at(-1) < losses[0] && Number.isFinite(val), `${losses[0]} -> ${losses.at(-1)}, validation ${val}`);
    assert.equal(net.training, true);
    assert.equal(net.bn.num_batches_tracked.item(), 210); // the eval forwards left the statistics alone
    running = null;
    await release(opt, net, x, y);
  });

  test('gradient accumulation over four steps with zeroGrad({ setToNone: false })', async () => {
    om.manualSeed(9);
    const net = new Net();
    const opt = new om.optim.SGD(net.parameters(), { lr: 0.05 });
    const [x, y] = data();
    const step = (i) => {
      if (i % 4 === 0) opt.zeroGrad({ setToNone: false });
      om.nn.functional.crossEntropy(net.forward(x), y).div(4).backward();
      if (i % 4 === 3) opt.step();
    };
    await flat('gradient accumulation', step, { warm: 12, n: 240 }); // windows of whole accumulations
    // the accumulated gradient of four equal quarter losses is the gradient of the loss
    opt.zeroGrad({ setToNone: false });
    for (let i = 0; i < 4; i++) om.nn.functional.crossEntropy(net.forward(x), y).div(4).backward();
    const acc = net.fc1.weight.grad.clone();
    opt.zeroGrad();
    om.nn.functional.crossEntropy(net.forward(x), y).backward();
    assert.ok(acc.sub(net.fc1.weight.grad).abs().amax().item() < 1e-6);
    await release(acc, opt, net, x, y);
  });

  test('a closure-based optimizer step: it runs the closure, updates from its gradients and returns its loss', async () => {
    om.manualSeed(10);
    const net = new Net();
    const twin = new Net();
    twin.loadStateDict(net.stateDict());
    const opt = new om.optim.Adam(net.parameters(), { lr: 0.02 });
    const twinOpt = new om.optim.Adam(twin.parameters(), { lr: 0.02 });
    const [x, y] = data();
    const step = () => {
      const loss = opt.step(() => {
        opt.zeroGrad();
        const l = om.nn.functional.crossEntropy(net.forward(x), y);
        l.backward();
        return l;
      });
      trainStep(twin, twinOpt, x, y); // the same step written without a closure
      return loss.item();
    };
    await flat('closure step', step);
    assert.equal(net.fc2.weight.sub(twin.fc2.weight).abs().amax().item(), 0);
    assert.throws(() => opt.step(5), (e) => e instanceof om.OmError && e.kind === 'InvalidArgument'
      && e.message === 'Adam.step: closure must be a function, got 5');
    await release(opt, twinOpt, net, twin, x, y);
  });

  test('detached outputs stored in a Map that overwrites its entries', async () => {
    om.manualSeed(11);
    const net = new Net();
    const opt = new om.optim.SGD(net.parameters(), { lr: 0.01 });
    const [x, y] = data();
    const cache = new Map();
    const step = (i) => {
      opt.zeroGrad();
      const out = net.forward(x);
      cache.set(i % 8, out.detach()); // as features[i % 8] = out.detach()
      om.nn.functional.crossEntropy(out, y).backward();
      opt.step();
    };
    await flat('Map of detached outputs', step);
    assert.equal(cache.size, 8);
    assert.deepEqual(cache.get(3).shape, [8, 3]);
    cache.clear();
    await release(opt, net, x, y);
  });
});
