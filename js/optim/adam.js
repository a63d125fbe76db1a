// om.optim.Adam and AdamW: PyTorch's torch.optim.Adam / AdamW update, per parameter p with
// gradient g, at step t (from 1):
//   Adam:  g = g + weightDecay * p             AdamW: p = p * (1 - lr * weightDecay)
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g * g
//   vmax = max(vmax, v) and v = vmax           (amsgrad)
//   p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
import { invalid } from '../errors.js';
import { describe } from '../convert.js';
import { where, optionsArg } from '../tensor.js';
import { Optimizer, numberOption } from './optimizer.js';

class AdamBase extends Optimizer {
  constructor(params, options, who, decoupled) {
    super(params, who);
    const o = optionsArg(options, who, ['lr', 'betas', 'eps', 'weightDecay', 'amsgrad']);
    const { lr = 1e-3, betas = [0.9, 0.999], eps = 1e-8, weightDecay = decoupled ? 1e-2 : 0, amsgrad = false } = o;
    this.lr = numberOption(lr, who, 'lr');
    if (!Array.isArray(betas) || betas.length !== 2) throw invalid(`${who}: betas must be an array of two numbers, got ${describe(betas)}`);
    this.betas = [numberOption(betas[0], who, 'betas[0]', 0, 1, true), numberOption(betas[1], who, 'betas[1]', 0, 1, true)];
    this.eps = numberOption(eps, who, 'eps');
    this.weightDecay = numberOption(weightDecay, who, 'weightDecay');
    if (typeof amsgrad !== 'boolean') throw invalid(`${who}: amsgrad must be a boolean, got ${describe(amsgrad)}`);
    this.amsgrad = amsgrad;
    this.decoupled = decoupled;
  }

  update(p, grad, state) {
    const [b1, b2] = this.betas;
    state.step = (state.step ?? 0) + 1;
    if (!state.expAvg) {
      state.expAvg = this.zerosLike(p);
      state.expAvgSq = this.zerosLike(p);
      if (this.amsgrad) state.maxExpAvgSq = this.zerosLike(p);
    }
    let g = grad;
    if (this.weightDecay !== 0) {
      if (this.decoupled) p.copy_(p.mul(1 - this.lr * this.weightDecay));
      else g = g.add(p.mul(this.weightDecay));
    }
    const m = state.expAvg.copy_(state.expAvg.mul(b1).add(g.mul(1 - b1)));
    let v = state.expAvgSq.copy_(state.expAvgSq.mul(b2).add(g.mul(g).mul(1 - b2)));
    if (this.amsgrad) {
      const vmax = state.maxExpAvgSq;
      v = vmax.copy_(where(vmax.gt(v), vmax, v));
    }
    const bc1 = 1 - b1 ** state.step;
    const bc2 = 1 - b2 ** state.step;
    const denom = v.sqrt().div(Math.sqrt(bc2)).add(this.eps);
    p.copy_(p.sub(m.div(denom).mul(this.lr / bc1)));
  }
}

/** Adam(params, { lr = 1e-3, betas = [0.9, 0.999], eps = 1e-8, weightDecay = 0, amsgrad = false }). */
export class Adam extends AdamBase {
  constructor(params, options) {
    super(params, options, 'Adam', false);
  }
}

/** AdamW(params, { lr = 1e-3, betas, eps, weightDecay = 0.01, amsgrad }): decoupled weight decay. */
export class AdamW extends AdamBase {
  constructor(params, options) {
    super(params, options, 'AdamW', true);
  }
}
