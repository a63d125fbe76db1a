// om.optim: optimizers with PyTorch's update rules (torch.optim), stepping parameters in place.
//
//   const opt = new om.optim.Adam(net.parameters(), { lr: 1e-2 });
//   for (...) { opt.zeroGrad(); const loss = om.tidy(() => lossFn.forward(net.forward(x), y)); loss.backward(); loss.dispose(); opt.step(); }
//   opt.dispose();                          // frees the optimizer's state (not the parameters)
export { Optimizer } from './optimizer.js';
export { SGD } from './sgd.js';
export { Adam, AdamW } from './adam.js';
