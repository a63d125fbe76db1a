// om.optim.RMSprop: PyTorch's torch.optim.RMSprop update, per parameter p with gradient g (its group's options):
//   g = -g                                                  (maximize)
//   g = g + weightDecay * p                                 (weightDecay != 0)
//   v = alpha * v + (1 - alpha) * g * g
//   avg = sqrt(v - gAvg^2) + eps, gAvg = alpha * gAvg + (1 - alpha) * g   (centered)
//   avg = sqrt(v) + eps                                     (otherwise)
//   buf = momentum * buf + g / avg, p = p - lr * buf        (momentum > 0)
//   p = p - lr * g / avg                                    (otherwise)
import { Optimizer, num, bool } from './optimizer.js';

const OPTIONS = {
  lr: [1e-2, num()], alpha: [0.99, num()], eps: [1e-8, num()], weightDecay: [0, num()], momentum: [0, num()], centered: [false, bool], maximize: [false, bool],
};

export class RMSprop extends Optimizer {
  constructor(params, options) {
    super(params, options, 'RMSprop', OPTIONS, ['step', 'squareAvg', 'momentumBuffer', 'gradAvg']);
  }

  update(p, grad, state, group) {
    const { alpha } = group;
    state.step = (state.step ?? 0) + 1;
    if (!state.squareAvg) state.squareAvg = this.zerosLike(p);
    if (group.momentum > 0 && !state.momentumBuffer) state.momentumBuffer = this.zerosLike(p);
    if (group.centered && !state.gradAvg) state.gradAvg = this.zerosLike(p);
    let g = group.maximize ? grad.neg() : grad;
    if (group.weightDecay !== 0) g = g.add(p.mul(group.weightDecay));
    const v = state.squareAvg.copy_(state.squareAvg.mul(alpha).add(g.mul(g).mul(1 - alpha)));
    let avg;
    if (group.centered) {
      const m = state.gradAvg.copy_(state.gradAvg.mul(alpha).add(g.mul(1 - alpha)));
      avg = v.sub(m.mul(m)).sqrt().add(group.eps);
    } else {
      avg = v.sqrt().add(group.eps);
    }
    if (group.momentum > 0) {
      const buf = state.momentumBuffer.copy_(state.momentumBuffer.mul(group.momentum).add(g.div(avg)));
      p.copy_(p.sub(buf.mul(group.lr)));
    } else {
      p.copy_(p.sub(g.div(avg).mul(group.lr)));
    }
  }
}
