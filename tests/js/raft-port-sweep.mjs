// RAFT (examples/torchvision/raft.mjs, raft_small's and raft_large's fixtures of
// tools/raft_ports.py) traced with symbolic batch, height and width, undeclared, and run in the
// Session and onnxruntime-web at sizes the trace never saw. Not in npm test (each trace takes
// about 20 s of CPU: its runs check every size up to 2^15); run it with `npm run test:raft`.
//
// What the tracer finds on its own: RAFT answers only where H and W are multiples of 8 (elsewhere
// it raises, as upstream's ValueError), from 64 (below, the 4-level pyramid's avg_pool2d has
// nothing to pool); the grid sampler's `if h > 1` leaves the coarsest level's y coordinate
// unnormalised where that level is one row high (H from 64 to 120), so the graph is an If on H; a
// one-column coarsest level (W from 64 to 120) divides by w - 1 = 0 and every flow is NaN, in
// PyTorch, eagerly and in both engines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, metadataProps } from './helpers.mjs';
import { checkGraph, checkedFlows, fixture, imagesOf, loadRaft } from './raft-port.mjs';

memoryHooks();

/**
 * Test body: fixture `name`'s port traced undeclared with symbolic batch, height and width at
 * 2 x 136 x 152 with `updates` updates; its ranges and the .onnx's metadata checked, the graph
 * run in both engines at every fixture case of that many updates (the eager port checked against
 * PyTorch there) and at `sizes` ([N, H, W]) against the port, and refused where the port raises.
 */
async function tracedEverywhere(t, name, updates, sizes) {
  const fx = fixture(name);
  const net = loadRaft(name, fx);
  const model = { forward: (a, b) => net.forward(a, b, updates), stateDict: () => net.stateDict() };
  let tm = null;
  try {
    const done = om.tidy(() => { // checkGraph reads every tensor before its first await
      const axes = ['batch', null, 'h', 'w'];
      const started = process.cpuUsage();
      tm = om.trace(model, { image1: [om.randn([2, 3, 136, 152], { seed: 1 }), axes], image2: [om.randn([2, 3, 136, 152], { seed: 2 }), axes] });
      const cpu = process.cpuUsage(started);
      const nodes = tm.graph().nodes;
      t.diagnostic(`traced in ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s of CPU: ${nodes.length} nodes at the top (${nodes.map((n) => n.opType).join(' ')}); symbols ${JSON.stringify(tm.symbols)}`);
      const ranges = Object.fromEntries(tm.symbols.map((s) => [s.name, { multipleOf: s.multipleOf, min: s.min, max: s.max, branches: s.branches }]));
      assert.deepEqual(ranges, {
        batch: { multipleOf: 1, min: 1, max: Infinity, branches: undefined },
        h: { multipleOf: 8, min: 64, max: Infinity, branches: [{ min: 64, max: 120 }, { min: 128, max: Infinity }] },
        w: { multipleOf: 8, min: 64, max: Infinity, branches: undefined },
      });
      assert.deepEqual(nodes.filter((n) => n.opType === 'If').length, 1, 'one If, on H');
      // the .onnx says which sizes it holds for, as traced.symbols
      const props = metadataProps(tm.toOnnx());
      for (const s of tm.symbols) {
        const written = JSON.parse(props[`onemodel.symbol.${s.name}`]);
        assert.deepEqual([written.multipleOf, written.min, written.max ?? Infinity, written.narrowedBy], [s.multipleOf, s.min, s.max, s.narrowedBy], `${s.name} in the .onnx`);
        t.diagnostic(`onemodel.symbol.${s.name}: ${props[`onemodel.symbol.${s.name}`]}`);
      }
      // every fixture case of 2 updates (the eager port checked against PyTorch there), and sizes no case has
      const checks = fx.cases.filter((c) => c.updates === updates)
        .map((c) => ({ label: `PyTorch's [${c.shape}]`, feeds: imagesOf(c), eager: checkedFlows(net, fx, c, `eager [${c.shape}]`).flows }));
      for (const [n, h, w] of sizes) {
        const feeds = [om.randn([n, 3, h, w], { seed: h }), om.randn([n, 3, h, w], { seed: w + 1 })];
        checks.push({ label: `[${n}, 3, ${h}, ${w}]`, feeds, eager: model.forward(...feeds) });
      }
      // outside the sizes: the Session refuses what the port refuses
      const s = tm.session();
      try {
        for (const [h, w] of [[60, 128], [128, 132], [56, 128]]) {
          const x = om.randn([1, 3, h, w], { seed: 3 });
          assert.throws(() => om.tidy(() => model.forward(x, x)), (e) => e instanceof om.OmError, `eager at ${h} x ${w}`);
          assert.throws(() => om.tidy(() => s.run({ image1: x, image2: x })), (e) => { t.diagnostic(`the Session at ${h} x ${w}: ${e.kind}: ${e.message}`); return e.kind === 'ShapeMismatch'; });
        }
      } finally {
        s.dispose();
      }
      return { done: checkGraph(tm, checks) };
    }).done;
    const report = await done;
    t.diagnostic(`max |graph - eager| / max(1, max |eager|): ${report.join('; ')}`);
  } finally {
    tm?.dispose();
    net.dispose();
  }
}

test('raft_small traced undeclared with symbolic batch, height and width: multiples of 8 from 64, an If on H, right at every size against the port and PyTorch',
  (t) => tracedEverywhere(t, 'raft_small', 2, [[3, 72, 80], [1, 120, 128], [2, 128, 72], [1, 200, 512]]));

// raft_large's convex upsampling: the mask viewed as [N, 1, 9, 8, 8, h, w], F.unfold's 9 taps,
// the [N, 2, 8, h, 8, w] permute reshaped to [N, 2, 8h, 8w], all from symbolic h and w
test('raft_large traced undeclared with symbolic batch, height and width: the same ranges, right at every size against the port and PyTorch',
  (t) => tracedEverywhere(t, 'raft_large', 3, [[1, 64, 128], [3, 72, 80], [1, 200, 264]]));
