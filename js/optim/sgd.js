// om.optim.SGD: PyTorch's torch.optim.SGD update, per parameter p with gradient g:
//   g = g + weightDecay * p                                 (weightDecay != 0)
//   buf = g (first step), else buf = momentum * buf + (1 - dampening) * g   (momentum != 0)
//   g = nesterov ? g + momentum * buf : buf
//   p = p - lr * g
import { invalid } from '../errors.js';
import { describe } from '../convert.js';
import { optionsArg } from '../tensor.js';
import { Optimizer, numberOption } from './optimizer.js';

export class SGD extends Optimizer {
  constructor(params, options) {
    super(params, 'SGD');
    const o = optionsArg(options, 'SGD', ['lr', 'momentum', 'dampening', 'weightDecay', 'nesterov']);
    const { lr = 1e-3, momentum = 0, dampening = 0, weightDecay = 0, nesterov = false } = o;
    this.lr = numberOption(lr, 'SGD', 'lr');
    this.momentum = numberOption(momentum, 'SGD', 'momentum');
    this.dampening = numberOption(dampening, 'SGD', 'dampening', -Infinity);
    this.weightDecay = numberOption(weightDecay, 'SGD', 'weightDecay');
    if (typeof nesterov !== 'boolean') throw invalid(`SGD: nesterov must be a boolean, got ${describe(nesterov)}`);
    if (nesterov && (this.momentum <= 0 || this.dampening !== 0)) {
      throw invalid('SGD: nesterov momentum requires a momentum and zero dampening');
    }
    this.nesterov = nesterov;
  }

  update(p, grad, state) {
    let g = grad;
    if (this.weightDecay !== 0) g = g.add(p.mul(this.weightDecay));
    if (this.momentum !== 0) {
      if (!state.momentumBuffer) {
        state.momentumBuffer = this.zerosLike(p).copy_(g);
      } else {
        state.momentumBuffer.copy_(state.momentumBuffer.mul(this.momentum).add(g.mul(1 - this.dampening)));
      }
      g = this.nesterov ? g.add(state.momentumBuffer.mul(this.momentum)) : state.momentumBuffer;
    }
    p.copy_(p.sub(g.mul(this.lr)));
  }
}
