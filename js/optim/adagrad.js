// om.optim.Adagrad: PyTorch's torch.optim.Adagrad update, per parameter p with gradient g at step t
// (from 1), with its group's options:
//   g = -g                                                  (maximize)
//   g = g + weightDecay * p                                 (weightDecay != 0)
//   sum = sum + g * g                                       (sum starts at initialAccumulatorValue)
//   p = p - lr / (1 + (t - 1) * lrDecay) * g / (sqrt(sum) + eps)
import { Optimizer, num, bool } from './optimizer.js';

const OPTIONS = {
  lr: [1e-2, num()], lrDecay: [0, num()], weightDecay: [0, num()], initialAccumulatorValue: [0, num()], eps: [1e-10, num()], maximize: [false, bool],
};

export class Adagrad extends Optimizer {
  constructor(params, options) {
    super(params, options, 'Adagrad', OPTIONS, ['step', 'sum']);
  }

  update(p, grad, state, group) {
    state.step = (state.step ?? 0) + 1;
    if (!state.sum) state.sum = this.zerosLike(p).fill_(group.initialAccumulatorValue);
    let g = group.maximize ? grad.neg() : grad;
    if (group.weightDecay !== 0) g = g.add(p.mul(group.weightDecay));
    const clr = group.lr / (1 + (state.step - 1) * group.lrDecay);
    const sum = state.sum.copy_(state.sum.add(g.mul(g)));
    p.copy_(p.sub(g.div(sum.sqrt().add(group.eps)).mul(clr)));
  }
}
