// om.optim.Adam and AdamW: PyTorch's torch.optim.Adam / AdamW update, per parameter p with
// gradient g, at step t (from 1), with its group's options:
//   g = -g                                     (maximize)
//   Adam:  g = g + weightDecay * p             AdamW: p = p * (1 - lr * weightDecay)
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g * g
//   vmax = max(vmax, v) and v = vmax           (amsgrad)
//   p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
import { invalid } from '../errors.js';
import { describe } from '../convert.js';
import { where } from '../tensor.js';
import { Optimizer, num, bool, numberOption } from './optimizer.js';

const betas = (v, who, what) => {
  if (!Array.isArray(v) || v.length !== 2) throw invalid(`${who}: ${what} must be an array of two numbers, got ${describe(v)}`);
  return [numberOption(v[0], who, `${what}[0]`, 0, 1, true), numberOption(v[1], who, `${what}[1]`, 0, 1, true)];
};
const options = (decay) => ({
  lr: [1e-3, num()], betas: [[0.9, 0.999], betas], eps: [1e-8, num()], weightDecay: [decay, num()], amsgrad: [false, bool], maximize: [false, bool],
});

class AdamBase extends Optimizer {
  constructor(params, opts, who, decoupled) {
    super(params, opts, who, options(decoupled ? 1e-2 : 0), ['step', 'expAvg', 'expAvgSq', 'maxExpAvgSq']);
    this.decoupled = decoupled;
  }

  update(p, grad, state, group) {
    const [b1, b2] = group.betas;
    state.step = (state.step ?? 0) + 1;
    if (!state.expAvg) {
      state.expAvg = this.zerosLike(p);
      state.expAvgSq = this.zerosLike(p);
    }
    if (group.amsgrad && !state.maxExpAvgSq) state.maxExpAvgSq = this.zerosLike(p);
    let g = group.maximize ? grad.neg() : grad;
    if (group.weightDecay !== 0) {
      if (this.decoupled) p.copy_(p.mul(1 - group.lr * group.weightDecay));
      else g = g.add(p.mul(group.weightDecay));
    }
    const m = state.expAvg.copy_(state.expAvg.mul(b1).add(g.mul(1 - b1)));
    let v = state.expAvgSq.copy_(state.expAvgSq.mul(b2).add(g.mul(g).mul(1 - b2)));
    if (group.amsgrad) {
      const vmax = state.maxExpAvgSq;
      v = vmax.copy_(where(vmax.gt(v), vmax, v));
    }
    const bc1 = 1 - b1 ** state.step;
    const bc2 = 1 - b2 ** state.step;
    const denom = v.sqrt().div(Math.sqrt(bc2)).add(group.eps);
    p.copy_(p.sub(m.div(denom).mul(group.lr / bc1)));
  }
}

/** Adam(params, { lr = 1e-3, betas = [0.9, 0.999], eps = 1e-8, weightDecay = 0, amsgrad = false, maximize = false }). */
export class Adam extends AdamBase {
  constructor(params, options) {
    super(params, options, 'Adam', false);
  }
}

/** AdamW(params, { lr = 1e-3, betas, eps, weightDecay = 0.01, amsgrad, maximize }): decoupled weight decay. */
export class AdamW extends AdamBase {
  constructor(params, options) {
    super(params, options, 'AdamW', true);
  }
}
