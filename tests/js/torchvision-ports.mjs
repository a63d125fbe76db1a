// What the torchvision port tests share (tests/js/torchvision-ports.test.mjs and
// torchvision-ports-2.test.mjs): the fixtures' inputs, and the check of each port against the
// fixture tools/torchvision_ports.py wrote from torchvision's own model. Not a test file.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { withTraced } from './helpers.mjs';

export const DIR = new URL('./fixtures/torchvision/', import.meta.url);

/** max |ours - PyTorch| <= TOL * max(1, max |PyTorch|), eagerly and in both engines (the oracle's rule). */
export const TOL = 1e-5;

/**
 * tools/torchvision_ports.py's image(shape, seed): element i is
 * ((i * 2654435761 + seed * 40503) mod 2^32 >> 8) / 2^22 - 2, exact in float32.
 */
export function image(shape, seed) {
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = (((Math.imul(i, 2654435761 | 0) + seed * 40503) >>> 0) >>> 8) / 2 ** 22 - 2;
  return om.tensor(data, { shape });
}

const tensorOf = (o) => om.tensor(Float32Array.from(o.data), { shape: o.shape });

/** The fixture case's expected output as a Tensor; a segmentation model's with an aux classifier as { out, aux }. */
export const expected = (c) => (c.aux ? { out: tensorOf(c.output), aux: tensorOf(c.aux) } : tensorOf(c.output));

/** The example a conv net is traced at (not a fixture input: fixture seeds start at 1), and its symbolic axes. */
export const CONV = [[2, 3, 32, 32], ['batch', null, 'h', 'w']];

/** A model's outputs to compare, by the fixture's field: a segmentation model's { out, aux }, else the logits as output. */
const outputsOf = (y) => (y instanceof om.Tensor ? { output: y } : { output: y.out, aux: y.aux });

/**
 * The ports against torchvision 0.14: for each MODELS entry name: [build, ...traces] (a trace:
 * [example shape, axes (a name or om.Dim for a symbolic one), { symbol: the smallest size, where
 * PyTorch fails below it or a declaration says; 1 for the others }]), the port built as the tool
 * builds torchvision's loads <name>.safetensors strictly with PyTorch's keys in order, matches
 * <name>.json's outputs eagerly at every size, and each trace writes SHAPES[name] Shape nodes (0 if
 * absent) with symbolic H and W and agrees with PyTorch in onnxruntime-web and the Session at every
 * fixture size it takes (and with the eager port at three more; each run's max error in both engines
 * is reported as a diagnostic). For the names in ONE_CONV, the
 * trace has one Conv node per Conv1d/2d/3d module (a conv3d is one 3-D Conv, not a composition).
 */
export function describePorts(MODELS, SHAPES, ONE_CONV = []) {
  describe('torchvision ports against torchvision 0.14', () => {
    for (const [name, [build, ...traces]] of Object.entries(MODELS)) {
      const fx = JSON.parse(readFileSync(new URL(`${name}.json`, DIR), 'utf8'));
      const reports = []; // max |graph - reference| per run in onnxruntime-web and the Session, reported after the checks
      test(`${name}: ${fx.model}`, (t) => withTraced((keep, trace) => {
        om.manualSeed(0);
        const net = build();
        try {
          const { tensors } = om.safetensors.load(readFileSync(new URL(`${name}.safetensors`, DIR)));
          assert.deepEqual(Object.keys(tensors).sort(), [...fx.keys].sort(), 'the file holds the state dict');
          assert.deepEqual(Object.keys(net.stateDict()), fx.keys, 'state-dict keys, in PyTorch\'s order');
          assert.deepEqual(net.loadStateDict(tensors), { missingKeys: [], unexpectedKeys: [] });
          om.dispose(Object.values(tensors));
          net.eval();
          const errs = fx.cases.map((c) => {
            const ys = outputsOf(net.forward(image(c.shape, c.seed)));
            return Math.max(...['output', 'aux'].filter((k) => c[k]).map((k) => {
              const y = ys[k], ref = c[k].data;
              assert.deepEqual(y?.shape, c[k].shape, `${k} shape at [${c.shape}]`);
              const a = y.toArray();
              const err = Math.max(...ref.map((v, i) => Math.abs(a[i] - v)));
              const bound = TOL * Math.max(1, ...ref.map(Math.abs));
              assert.ok(err <= bound, `eager ${k} at [${c.shape}]: max |ours - PyTorch| = ${err} > ${bound}`);
              return err / bound * TOL;
            }));
          });
          t.diagnostic(`eager max |ours - PyTorch| / max(1, max |PyTorch|) per size: ${errs.map((e) => e.toExponential(1)).join(', ')}`);
          for (const [example, axes, mins = {}] of traces) {
            const tm = trace(net, { x: [image(example, 0), axes] });
            const shapes = tm.graph().nodes.filter((n) => n.opType === 'Shape').length;
            t.diagnostic(`traced with axes [${axes.map((a) => a?.name ?? a)}]: ${tm.graph().nodes.length} nodes, ${shapes} Shape`);
            if (axes.at(-2) && axes.at(-1)) assert.equal(shapes, SHAPES[name] ?? 0, 'Shape nodes with symbolic height and width');
            if (ONE_CONV.includes(name)) {
              const convs = net.modules().filter((m) => m instanceof om.nn.Conv1d || m instanceof om.nn.Conv2d || m instanceof om.nn.Conv3d).length;
              assert.equal(tm.graph().nodes.filter((n) => n.opType === 'Conv').length, convs, 'one Conv node per convolution module');
            }
            // Every symbol holds from 1, except where PyTorch itself fails below a size (ConvNeXt below 16,
            // DenseNet below 13) or a declaration says (Swin's H).
            const sym = axes.map((a) => (a === null ? null : typeof a === 'string' ? a : a.name)); // each dim's symbol
            assert.deepEqual(Object.fromEntries(tm.symbols.map((s) => [s.name, s.min])),
              Object.fromEntries(sym.filter(Boolean).map((a) => [a, mins[a] ?? 1])), 'the sizes the graph holds from');
            // Every case the graph takes: all of them, unless an axis the trace fixes differs or a size is below its range.
            const fits = (c) => c.shape.every((n, d) => (sym[d] === null ? n === example[d] : n >= (mins[sym[d]] ?? 1)));
            const cases = fx.cases.filter(fits);
            assert.ok(cases.length >= 3, `${cases.length} fixture cases for the trace at [${example}]`);
            for (const c of cases) keep(tm, { x: image(c.shape, c.seed) }, expected(c), `PyTorch at [${c.shape}]`);
          }
        } finally {
          net.dispose();
        }
      }, { onReport: (label, r) => reports.push(`${label ?? 'eager at the example'}: ${[r.outputs, r.session].map((os) => Math.max(...os.map((o) => o.maxError)).toExponential(1)).join(', ')}`) })
        .finally(() => { if (reports.length) t.diagnostic(`traced: max |graph - reference| (onnxruntime-web, Session) ${reports.join('; ')}`); }));
    }
  });
}

/**
 * Each builder of BUILDERS ({ name: build }) at full size has torchvision's state-dict keys and
 * shapes, in order: file's (builders.json, builders-2.json: tools/torchvision_ports.py's).
 */
export function describeBuilders(file, BUILDERS) {
  describe('the builders at full size', () => {
    const builders = JSON.parse(readFileSync(new URL(file, DIR), 'utf8'));
    for (const [name, keys] of Object.entries(builders)) {
      test(`${name}: torchvision's state-dict keys and shapes, in order`, () => {
        const net = BUILDERS[name]();
        try {
          assert.deepEqual(Object.entries(net.stateDict()).map(([k, t]) => [k, t.shape]), keys);
        } finally {
          net.dispose();
        }
      });
    }
  });
}
