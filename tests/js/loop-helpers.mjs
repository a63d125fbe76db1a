// What the tests of loops over a symbolic size share (symbolic-loop-scan.test.mjs,
// symbolic-loop-period.test.mjs): models as functions, the RNN cell, and the check that a model
// traced with a symbolic T rolls into Loops and agrees with eager at other lengths (not a test
// file: node --test runs tests/js/*.test.mjs).
import assert from 'node:assert/strict';
import * as om from 'onemodel';

/** The lengths a rolled model is checked at by default: the smallest two, an odd one, far above. */
export const LENGTHS = [1, 2, 7, 97];

export const ops = (tm) => tm.graph().nodes.map((n) => n.opType);
export const count = (tm, op) => ops(tm).filter((o) => o === op).length;
/** The ops after the (last) Loop. */
export const afterLoop = (tm) => ops(tm).slice(ops(tm).lastIndexOf('Loop') + 1);

/** A Module from a function of its inputs. */
export const fn = (f) => new (class extends om.nn.Module { forward(...xs) { return f(...xs); } })();

/** Keeps tm for the oracle at each time length of Ts (input [B, T, 3], seed 400 + T) against model's eager runs there. */
export function atLengths(keep, tm, model, Ts, B = 3) {
  for (const T of Ts) {
    const x = om.randn([B, T, 3], { seed: 400 + T });
    const want = model.forward(x);
    keep(tm, { x }, Array.isArray(want) ? want : [want], `at T = ${T}`);
  }
}

/** A hand-written RNN cell h' = tanh(x_t W + h U) of hidden size H. */
export function rnnCell(H, seed) {
  const W = om.randn([3, H], { seed }), U = om.randn([H, H], { seed: seed + 1 }).mul(0.5);
  return (xt, h) => xt.matmul(W).add(h.matmul(U)).tanh();
}

/** The RNN over x [B, T, 3] from zeros of the symbolic batch: what collect(outs, h) makes of the steps and the last state. */
export function rnn(H, seed, collect, { push = (h) => h, backwards = false } = {}) {
  const cell = rnnCell(H, seed);
  return fn((x) => {
    let h = om.zeros([x.shape[0], H]);
    const outs = [];
    const T = x.shape[1];
    for (let k = 0; k < T; k++) {
      const t = backwards ? T - 1 - k : k;
      h = cell(x.select(1, t), h);
      if (backwards) outs.unshift(push(h)); // time order, as a bidirectional RNN returns its backward half
      else outs.push(push(h));
    }
    return collect(outs, h);
  });
}

/**
 * Traces model at an input [2, T, 3] (seed T; axis 0 named batch, or fixed when batch is null),
 * keeps it for the oracle there, checks that it has `loops` Loops, and keeps it at each time
 * length of lengths (batch B: 3 where it is symbolic, else the fixed 2). Returns the traced model,
 * for each pattern's own checks.
 */
export function rolled(keep, model, { T = 6, batch = 'B', loops = 1, lengths = LENGTHS } = {}) {
  const ex = om.randn([2, T, 3], { seed: T });
  const tm = om.trace(model, { x: [ex, [batch, 'T', null]] });
  const want = model.forward(ex);
  keep(tm, { x: ex }, Array.isArray(want) ? want : [want], undefined, model);
  assert.equal(count(tm, 'Loop'), loops, String(ops(tm)));
  atLengths(keep, tm, model, lengths, batch ? 3 : 2);
  return tm;
}
