// om.optim: optimizers with PyTorch's update rules (torch.optim), stepping parameters in place, and
// om.optim.lrScheduler (torch.optim.lr_scheduler), which sets their groups' learning rates.
//
//   const opt = new om.optim.Adam(net.parameters(), { lr: 1e-2 });
//   const sched = new om.optim.lrScheduler.StepLR(opt, 30, { gamma: 0.1 });
//   for (...) { opt.zeroGrad(); const loss = om.tidy(() => lossFn.forward(net.forward(x), y)); loss.backward(); loss.dispose(); opt.step(); sched.step(); }
//   opt.dispose();                          // frees the optimizer's state (not the parameters)
export { Optimizer } from './optimizer.js';
export { SGD } from './sgd.js';
export { Adam, AdamW } from './adam.js';
export { RMSprop } from './rmsprop.js';
export { Adagrad } from './adagrad.js';
export * as lrScheduler from './lr_scheduler.js';
