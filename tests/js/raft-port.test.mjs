// torchvision's RAFT optical flow (examples/torchvision/raft.mjs) against torchvision 0.14
// (tools/raft_ports.py writes the fixtures: raft_small's and raft_large's architectures at tiny
// widths, built by torchvision's own _raft). Each port loads PyTorch's safetensors strictly with
// PyTorch's keys in order and matches PyTorch eagerly at every fixture size (H and W multiples of 8:
// the least without a NaN, odd multiples, a coarsest pyramid level one row high or one column wide,
// far above); then raft_small is traced with symbolic batch, height and width, and the .onnx runs
// in onnxruntime-web and the graph in the Session at sizes the trace never saw, against the eager
// port (itself checked against PyTorch at the same sizes).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks } from './helpers.mjs';
import { checkGraph, checkedFlows, fixture, imagesOf, loadRaft } from './raft-port.mjs';

memoryHooks();

describe('RAFT against torchvision 0.14: PyTorch\'s keys and weights, the same flows at every size', () => {
  for (const name of ['raft_small', 'raft_large']) {
    test(name, (t) => {
      const fx = fixture(name);
      const net = loadRaft(name, fx);
      try {
        const errs = fx.cases.map((c) => om.tidy(() => checkedFlows(net, fx, c, `${name} at [${c.shape}]`).err));
        t.diagnostic(`eager max |ours - PyTorch| / max(1, max |PyTorch|): ${fx.cases.map((c, i) => `[${c.shape}] ${errs[i].toExponential(1)}`).join(', ')}`);
      } finally {
        net.dispose();
      }
    });
  }
});

// Traced with a symbolic batch at 136 x 200 (the fixture's odd multiple of 8) with 2 updates: the
// graph against the eager port (itself checked against PyTorch at the same case) at batch 2 (the
// fixture's), 1 and 3. The sweep over symbolic height and width (traced undeclared: the sizes a
// multiple of 8 from 64, the grid sampler's `if h > 1` an If) is tests/js/raft-port-sweep.mjs.
test('raft_small traced with a symbolic batch: the Session and onnxruntime-web agree with the port at other batches', async (t) => {
  const fx = fixture('raft_small');
  const net = loadRaft('raft_small', fx);
  const c = fx.cases.find((x) => x.shape[2] === 136 && x.shape[3] === 200 && x.updates === 2);
  const model = { forward: (a, b) => net.forward(a, b, c.updates), stateDict: () => net.stateDict() };
  try {
    let tm = null;
    const done = om.tidy(() => { // checkGraph reads every tensor before its first await
      const axes = ['batch', null, null, null];
      tm = om.trace(model, { image1: [om.randn([3, 3, 136, 200], { seed: 1 }), axes], image2: [om.randn([3, 3, 136, 200], { seed: 2 }), axes] });
      assert.deepEqual(tm.inputs.map((i) => i.shape), [['batch', 3, 136, 200], ['batch', 3, 136, 200]]);
      assert.deepEqual(tm.outputs.map((o) => o.shape), [['batch', 2, 136, 200], ['batch', 2, 136, 200]]);
      const checks = [{ label: 'PyTorch\'s case at batch 2', feeds: imagesOf(c), eager: checkedFlows(net, fx, c, 'eager').flows }];
      for (const n of [1, 3]) {
        const feeds = [om.randn([n, 3, 136, 200], { seed: 10 + n }), om.randn([n, 3, 136, 200], { seed: 20 + n })];
        checks.push({ label: `batch ${n}`, feeds, eager: model.forward(...feeds) });
      }
      return { done: checkGraph(tm, checks) };
    }).done.finally(() => tm?.dispose());
    const report = await done;
    t.diagnostic(`max |graph - eager| / max(1, max |eager|): ${report.join('; ')}`);
  } finally {
    net.dispose();
  }
});
