// What the RAFT port's tests share (tests/js/raft-port.test.mjs, in npm test, and
// tests/js/raft-port-sweep.mjs, `npm run test:raft`): the port built from a fixture of
// tools/raft_ports.py, the comparison with PyTorch's sampled flows, and the check of a traced
// graph in the Session and onnxruntime-web against the eager port. Not a test file.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { compareOutputs, withSession } from '../../examples/lib/oracle.mjs';
import { DIR, TOL, image } from './torchvision-ports.mjs';
import { BottleneckBlock, MaskPredictor, ResidualBlock, raft } from '../../examples/torchvision/raft.mjs';

const LAYERS = { BottleneckBlock, ResidualBlock, InstanceNorm2d: om.nn.InstanceNorm2d, BatchNorm2d: om.nn.BatchNorm2d };
const camel = (k) => k.replace(/_(\w)/g, (_, c) => c.toUpperCase());

/** The JSON fixture <name>.json of tools/raft_ports.py. */
export const fixture = (name) => JSON.parse(readFileSync(new URL(`${name}.json`, DIR), 'utf8'));

/** The port built from the fixture's _raft keyword arguments (a layer by its name), the .safetensors loaded strictly, in eval mode. */
export function loadRaft(name, fx) {
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

/** A fixture case's two images (new tensors). */
export const imagesOf = (c) => [image(c.shape, c.seeds[0]), image(c.shape, c.seeds[1])];

/**
 * max |ours - PyTorch| / max(1, max |PyTorch|) of flow (a Tensor [N, 2, H, W]) at the fixture's
 * samples (rows and columns 0, S, 2S, ...), asserted within the larger of TOL and twice PyTorch's
 * own float32 error there (against float64: the updates amplify rounding, to 3.4e-5 at 12); a NaN
 * of PyTorch's must be one of ours.
 */
export function sampledError(flow, ref, stride, what) {
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

/** The port's predictions at case c (new tensors), each stored one checked against PyTorch's samples; err the largest relative error. */
export function checkedFlows(net, fx, c, what) {
  const flows = net.forward(...imagesOf(c), c.updates);
  assert.equal(flows.length, c.updates, `${what}: one prediction per update`);
  const errs = c.flows.map((f) => sampledError(flows[f.index], f, fx.stride, `${what} prediction ${f.index}`));
  return { flows, err: Math.max(...errs) };
}

/**
 * onnxruntime-web's float32 sums are sequential, the library's (and PyTorch's) pairwise: an
 * InstanceNormalization over a 32 x 64 map of mean 300 and standard deviation 1 is 4.1e-4 from
 * the eager value in onnxruntime-web and exact in the Session, and the same graph written as
 * ReduceMean, Sub, Mul, ReduceMean, Add, Sqrt, Div is as far. RAFT's feature encoder stacks
 * InstanceNorm2d layers over large maps: on om.randn images at 320 x 256 its output is 1.2e-4 of
 * the scale apart in onnxruntime-web (the stem's conv and ReLU alone 2.5e-7), the flows 1.7e-4, so
 * onnxruntime-web is held to this bound; the Session, running the same graph on the library's
 * kernels, to TOL.
 */
export const ORT_TOL = 5e-4;

/**
 * Runs traced raft tm (inputs image1, image2) on each check ({ label, feeds: [image1, image2],
 * eager: the eager port's predictions there }) in the Session (within TOL) and onnxruntime-web
 * (within ORT_TOL) and returns the worst relative error of each engine per label. Reads every
 * tensor before its first await.
 */
export async function checkGraph(tm, checks) {
  const names = tm.outputs.map((o) => o.name);
  const read = checks.map(({ label, feeds, eager }) => {
    assert.equal(eager.length, names.length, `${label}: outputs`);
    const expected = eager.map((t) => ({ dtype: t.dtype, shape: t.shape, data: Array.from(t.toArray()) }));
    const inputs = { image1: feeds[0], image2: feeds[1] };
    const session = om.tidy(() => {
      const s = tm.session();
      try {
        const out = s.run(inputs);
        return Object.fromEntries(names.map((n) => [n, { dtype: out[n].dtype, dims: out[n].shape, data: Array.from(out[n].toArray()) }]));
      } finally {
        s.dispose();
      }
    });
    const ort = Object.fromEntries(Object.entries(inputs).map(([k, t]) => [k, { dtype: 'float32', data: t.toArray(), dims: t.shape }]));
    return { label, expected, session, ort };
  });
  const rel = (r) => Math.max(...r.outputs.map((o) => o.maxError / o.bound * TOL));
  const bytes = tm.toOnnx();
  return withSession(bytes, async (run) => {
    const report = [];
    for (const { label, expected, session, ort } of read) {
      const mine = compareOutputs(names, expected, session, TOL);
      assert.deepEqual(mine.problems, [], `${label}: the Session against the eager port`);
      const theirs = compareOutputs(names, expected, await run(ort), ORT_TOL);
      assert.deepEqual(theirs.problems, [], `${label}: onnxruntime-web against the eager port`);
      report.push(`${label}: Session ${rel(mine).toExponential(1)}, onnxruntime-web ${rel(theirs).toExponential(1)}`);
    }
    return report;
  });
}
