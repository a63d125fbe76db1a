// An audit of op values against PyTorch (tests/js/fixtures/pytorch/ops/audit.json, written by
// tools/pytorch_audit.py): reductions, softmax, cumulative ops, sorting and rearranging ops on odd
// shapes ([3, 5], [2, 1, 3]), empty tensors ([0, 3]), negative dims and non-contiguous inputs (a
// transposed view, a strided slice), float32, int64 and bool: PyTorch's shapes, dtypes and values,
// or its refusal (dims past the end, a k past the size, a repeated dim, a reduction over an empty
// dim that has no identity) as an OmError with a kind and a message naming the op.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, withTraced, expectFixture } from './helpers.mjs';

memoryHooks();
const fx = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/audit.json', import.meta.url), 'utf8'));

/** The fixture's input (tools/pytorch_audit.py make_input): element k of the base is ((7k + seed) mod 37 - 18) / 4, laid out. */
function input(spec) {
  const base = [...spec.shape];
  if (spec.layout === 'T') [base[base.length - 1], base[base.length - 2]] = [base[base.length - 2], base[base.length - 1]];
  if (spec.layout === 'step') base[0] *= 2;
  const n = base.reduce((a, b) => a * b, 1);
  const raw = Array.from({ length: n }, (_, k) => ((7 * k + spec.seed) % 37) - 18);
  const data = { float32: raw.map((v) => v / 4), int64: raw.map(BigInt), bool: raw.map((v) => v % 3 === 0) }[spec.dtype];
  const full = om.tensor(data, { dtype: spec.dtype, shape: base });
  if (spec.layout === 'T') return full.transpose(-1, -2);
  if (spec.layout === 'step') return full.slice(0, 0, null, 2);
  return full;
}

/** The JS call of each fixture op, as a port writes PyTorch's. */
const CALLS = {
  sum: (x, a) => ('dim' in a ? x.sum(a.dim, a.keepdim) : x.sum()),
  mean: (x, a) => x.mean(a.dim),
  amax: (x, a) => x.amax(a.dim),
  amin: (x, a) => x.amin(a.dim),
  argmax: (x, a) => x.argmax(a.dim),
  prod: (x, a) => x.prod(a.dim),
  logsumexp: (x, a) => x.logsumexp(a.dim),
  all: (x, a) => x.all(a.dim),
  any: (x, a) => x.any(a.dim),
  cumsum: (x, a) => x.cumsum(a.dim),
  cumprod: (x, a) => x.cumprod(a.dim),
  softmax: (x, a) => x.softmax(a.dim),
  log_softmax: (x, a) => x.logSoftmax(a.dim),
  var: (x, a) => x.var(a.dim),
  std: (x, a) => x.std(a.dim, { correction: a.correction }),
  flip: (x, a) => x.flip(a.dims),
  roll: (x, a) => x.roll(a.shifts, a.dims),
  tril: (x, a) => x.tril(a.diagonal),
  triu: (x, a) => x.triu(a.diagonal),
  flatten: (x, a) => x.flatten(a.start_dim),
  abs: (x) => x.abs(),
  clone: (x) => x.clone(),
  sort: (x, a) => x.sort(a.dim, a.descending),
  topk: (x, a) => x.topk(a.k, a.dim),
  max: (x, a) => x.max(a.dim),
};


const label = (c) => `${c.op}(${c.input.dtype} [${c.input.shape}] ${c.input.layout}, ${JSON.stringify(c.args)})`;

describe("values audit: odd, empty and non-contiguous inputs, negative dims, as PyTorch's", () => {
  for (const c of fx.values) {
    test(c.error ? `${label(c)} fails, as PyTorch's "${c.error.slice(0, 60)}"` : label(c), () => om.tidy(() => {
      const x = input(c.input);
      const camel = c.op.replace(/_(\w)/g, (_, ch) => ch.toUpperCase());
      if (c.error) {
        assert.throws(() => CALLS[c.op](x, c.args), (e) => {
          assert.ok(e instanceof om.OmError, `${label(c)}: ${e}`);
          assert.ok(['IndexOutOfRange', 'InvalidArgument', 'ShapeMismatch'].includes(e.kind), `${label(c)}: ${e.kind} ${e.message}`);
          assert.ok(e.message.startsWith(`${camel}: `) || e.message.startsWith(`${c.op}: `), `${label(c)}: ${e.message}`);
          return true;
        });
        return;
      }
      const out = [CALLS[c.op](x, c.args)].flat();
      assert.equal(out.length, c.outputs.length);
      out.forEach((t, i) => expectFixture(t, c.outputs[i], `${label(c)} output ${i}`, 1e-6));
    }));
  }
});

describe('values audit, traced: the non-contiguous inputs of a graph run in onnxruntime-web and the Session', () => {
  test('reductions, scans and sorts of a transposed and a strided input', () => withTraced((keep, trace) => {
    const x = om.randn([5, 6], { seed: 28 });
    const f = (t) => {
      const tt = t.transpose(0, 1), st = t.slice(1, 0, null, 2);
      const [v, i] = tt.sort(-1, true);
      return {
        sum: tt.sum(-1, true), cum: st.cumsum(0), soft: tt.logSoftmax(0), top: st.topk(2, 0)[0],
        v, i, lse: st.logsumexp(-1), flip: tt.flip([0]), roll: st.roll(-4, 0), prod: tt.prod(-2), sd: st.std(0, { correction: 0 }),
      };
    };
    trace(f, { x: [x, ['n', null]] });
  }));
});
