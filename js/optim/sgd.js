// om.optim.SGD: PyTorch's torch.optim.SGD update, per parameter p with gradient g (its group's options):
//   g = -g                                                  (maximize)
//   g = g + weightDecay * p                                 (weightDecay != 0)
//   buf = g (first step), else buf = momentum * buf + (1 - dampening) * g   (momentum != 0)
//   g = nesterov ? g + momentum * buf : buf
//   p = p - lr * g
import { invalid } from '../errors.js';
import { Optimizer, num, bool } from './optimizer.js';

const OPTIONS = {
  lr: [1e-3, num()], momentum: [0, num()], dampening: [0, num(-Infinity)], weightDecay: [0, num()], nesterov: [false, bool], maximize: [false, bool],
};

export class SGD extends Optimizer {
  constructor(params, options) {
    super(params, options, 'SGD', OPTIONS, ['momentumBuffer']);
  }

  checkGroup(g, who) {
    if (g.nesterov && (g.momentum <= 0 || g.dampening !== 0)) throw invalid(`${who}: nesterov momentum requires a momentum and zero dampening`);
  }

  update(p, grad, state, group) {
    let g = group.maximize ? grad.neg() : grad;
    if (group.weightDecay !== 0) g = g.add(p.mul(group.weightDecay));
    if (group.momentum !== 0) {
      if (!state.momentumBuffer) {
        state.momentumBuffer = this.zerosLike(p).copy_(g);
      } else {
        state.momentumBuffer.copy_(state.momentumBuffer.mul(group.momentum).add(g.mul(1 - group.dampening)));
      }
      g = group.nesterov ? g.add(state.momentumBuffer.mul(group.momentum)) : state.momentumBuffer;
    }
    p.copy_(p.sub(g.mul(group.lr)));
  }
}
