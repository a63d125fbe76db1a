#!/usr/bin/env python3
"""PyTorch's training utilities as the fixture of tests/js/training-utils.test.mjs.

Schedulers: the learning rate of each of an optimizer's two parameter groups (lr 0.1 and 0.01) right
after each scheduler is made and after each of 30 step() calls (torch.optim.lr_scheduler), and for
OneCycleLR also the momentum (SGD) or beta1 (Adam) it cycles; ReduceLROnPlateau is stepped with a
fixed metric sequence, written along. The JS test builds the same scheduler from the case's name.

Clipping: three parameters with fixed gradients, torch.nn.utils.clip_grad_norm_ for several
(max_norm, norm_type) pairs (the returned total norm and the clipped gradients) and
clip_grad_value_.

Optimizers: RMSprop (centered, momentum, weight decay), Adagrad (lr decay, weight decay, initial
accumulator), SGD with two parameter groups (nesterov in one) and Adam (amsgrad, maximize), each 5
steps on the gradients of a fixed loss; the parameters after each step.

Training loop: a Linear(4, 3)-Tanh-Linear(3, 2) network, MSE loss, SGD with momentum and weight
decay, StepLR(step_size=5, gamma=0.5), clip_grad_norm_(max_norm=0.5) each step, 20 steps: the losses,
the total norms and the final parameters.

Writes tests/js/fixtures/pytorch/ops/training.json. Run with a python3 that imports torch (Debian's
python3-torch 1.13, /usr/bin/python3); CI reads the committed JSON and never runs this:
    /usr/bin/python3 tools/pytorch_training.py
"""
import json
import os

import torch
from torch import nn
from torch.optim import lr_scheduler as S

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'pytorch', 'ops', 'training.json')
STEPS = 30


def tensor_json(t):
    t = t.detach()
    return {'shape': list(t.shape), 'data': t.reshape(-1).tolist()}


def two_groups(kind='sgd'):
    a, b = torch.zeros(2, requires_grad=True), torch.zeros(3, requires_grad=True)
    if kind == 'adam':
        return torch.optim.Adam([{'params': [a], 'lr': 0.1}, {'params': [b], 'lr': 0.01}])
    return torch.optim.SGD([{'params': [a], 'lr': 0.1}, {'params': [b], 'lr': 0.01}], lr=0.5, momentum=0.9)


# name -> (optimizer kind, scheduler factory); the JS test has the same names
SCHEDULERS = {
    'StepLR': ('sgd', lambda o: S.StepLR(o, step_size=7, gamma=0.5)),
    'MultiStepLR': ('sgd', lambda o: S.MultiStepLR(o, milestones=[10, 3, 20, 10], gamma=0.3)),
    'ExponentialLR': ('sgd', lambda o: S.ExponentialLR(o, gamma=0.9)),
    'CosineAnnealingLR': ('sgd', lambda o: S.CosineAnnealingLR(o, T_max=10, eta_min=0.001)),
    'LambdaLR': ('sgd', lambda o: S.LambdaLR(o, lr_lambda=[lambda e: 1 / (e + 1), lambda e: 0.9 ** e])),
    'MultiplicativeLR': ('sgd', lambda o: S.MultiplicativeLR(o, lr_lambda=lambda e: 0.95)),
    'LinearLR': ('sgd', lambda o: S.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=8)),
    'ConstantLR': ('sgd', lambda o: S.ConstantLR(o, factor=0.5, total_iters=4)),
    'PolynomialLR': ('sgd', lambda o: S.PolynomialLR(o, total_iters=12, power=2.0)),
    'OneCycleLR': ('sgd', lambda o: S.OneCycleLR(o, max_lr=[1.0, 0.1], total_steps=STEPS + 1)),
    'OneCycleLR-three-phase-linear-adam': ('adam', lambda o: S.OneCycleLR(
        o, max_lr=0.05, epochs=4, steps_per_epoch=8, pct_start=0.25, anneal_strategy='linear', three_phase=True, div_factor=10)),
    'CosineAnnealingWarmRestarts': ('sgd', lambda o: S.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2, eta_min=0.01)),
    'CosineAnnealingWarmRestarts-mult-1': ('sgd', lambda o: S.CosineAnnealingWarmRestarts(o, T_0=5)),
    'SequentialLR': ('sgd', lambda o: S.SequentialLR(o, [S.ConstantLR(o, factor=0.1, total_iters=2), S.ExponentialLR(o, gamma=0.9),
                                                      S.StepLR(o, step_size=5, gamma=0.5)], milestones=[2, 12])),
    'SequentialLR-warmup-cosine': ('sgd', lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=5),
                                                                      S.CosineAnnealingLR(o, T_max=20)], milestones=[5])),
}
# metrics for ReduceLROnPlateau: falls, stalls, falls a little (under the threshold), rises
METRICS = [1.0, 0.8, 0.7, 0.7, 0.69, 0.7, 0.71, 0.5, 0.5, 0.5, 0.5, 0.5, 0.4, 0.45, 0.45, 0.45,
           0.45, 0.45, 0.45, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3]
PLATEAU = {
    'ReduceLROnPlateau': dict(mode='min', factor=0.5, patience=2, threshold=0.01, cooldown=1, min_lr=[0.005, 0.001]),
    'ReduceLROnPlateau-max-abs': dict(mode='max', factor=0.2, patience=1, threshold=0.05, threshold_mode='abs'),
}


def momentum_of(group):
    return group['betas'][0] if 'betas' in group else group['momentum']


def scheduler_cases():
    out = {}
    for name, (kind, make) in SCHEDULERS.items():
        opt = two_groups(kind)
        sched = make(opt)
        lrs, momenta = [sched.get_last_lr()], [[momentum_of(g) for g in opt.param_groups]]
        for _ in range(STEPS):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
            momenta.append([momentum_of(g) for g in opt.param_groups])
        out[name] = {'lrs': lrs, 'momenta': momenta} if name.startswith('OneCycle') else {'lrs': lrs}
    for name, kwargs in PLATEAU.items():
        opt = two_groups()
        sched = S.ReduceLROnPlateau(opt, **kwargs)
        metrics = METRICS if kwargs['mode'] == 'min' else [-m for m in METRICS]
        lrs = [[g['lr'] for g in opt.param_groups]]
        for m in metrics:
            opt.step()
            sched.step(m)
            lrs.append([g['lr'] for g in opt.param_groups])
        out[name] = {'lrs': lrs, 'metrics': metrics}
    return out


def clip_params():
    torch.manual_seed(3)
    ps = [torch.randn(3, 4, requires_grad=True), torch.randn(4, requires_grad=True), torch.randn(2, 2, 3, requires_grad=True)]
    for i, p in enumerate(ps):
        p.grad = torch.randn(p.shape) * (i + 1)
    return ps


def clip_cases():
    params = clip_params()
    out = {'grads': [tensor_json(p.grad) for p in params], 'norm': [], 'value': []}
    for max_norm, norm_type in [(1.0, 2.0), (2.5, float('inf')), (100.0, 1.0), (0.3, 3.0), (1.0, 0.5)]:
        ps = clip_params()
        total = torch.nn.utils.clip_grad_norm_(ps, max_norm, norm_type)
        out['norm'].append({'maxNorm': max_norm, 'normType': 'inf' if norm_type == float('inf') else norm_type,
                            'total': total.item(), 'grads': [tensor_json(p.grad) for p in ps]})
    for clip in [0.5, 2.0]:
        ps = clip_params()
        torch.nn.utils.clip_grad_value_(ps, clip)
        out['value'].append({'clipValue': clip, 'grads': [tensor_json(p.grad) for p in ps]})
    return out


def loss_of(ps):
    """A fixed loss with gradients of mixed signs and scales: sum((p - c)^2 * w) + sum(sin(p))."""
    total = 0
    for i, p in enumerate(ps):
        c = torch.linspace(-1, 1, p.numel()).reshape(p.shape)
        total = total + ((p - c) ** 2 * (i + 1)).sum() + torch.sin(3 * p).sum()
    return total


OPTIMIZERS = {
    'RMSprop': lambda ps: torch.optim.RMSprop(ps, lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.1, momentum=0.5, centered=True),
    'RMSprop-plain': lambda ps: torch.optim.RMSprop(ps),
    'Adagrad': lambda ps: torch.optim.Adagrad(ps, lr=0.1, lr_decay=0.05, weight_decay=0.01, initial_accumulator_value=0.1),
    'SGD-groups': lambda ps: torch.optim.SGD([{'params': ps[:1], 'nesterov': True, 'momentum': 0.9},
                                              {'params': ps[1:], 'lr': 0.05, 'weight_decay': 0.1}], lr=0.02, momentum=0.5),
    'Adam-amsgrad-maximize': lambda ps: torch.optim.Adam(ps, lr=0.05, amsgrad=True, maximize=True, weight_decay=0.01),
}


def optimizer_cases():
    torch.manual_seed(5)
    init = [torch.randn(2, 3), torch.randn(4)]
    out = {'init': [tensor_json(t) for t in init], 'cases': {}}
    for name, make in OPTIMIZERS.items():
        ps = [t.clone().requires_grad_(True) for t in init]
        opt = make(ps)
        steps = []
        for _ in range(5):
            opt.zero_grad()
            loss_of(ps).backward()
            opt.step()
            steps.append([tensor_json(p) for p in ps])
        out['cases'][name] = steps
    return out


def training_loop():
    torch.manual_seed(11)
    net = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
    x, y = torch.randn(16, 4), torch.randn(16, 2)
    state = {k: tensor_json(v) for k, v in net.state_dict().items()}
    opt = torch.optim.SGD(net.parameters(), lr=0.4, momentum=0.9, weight_decay=1e-3)
    sched = S.StepLR(opt, step_size=5, gamma=0.5)
    losses, norms, lrs = [], [], []
    for _ in range(20):
        opt.zero_grad()
        loss = nn.functional.mse_loss(net(x), y)
        loss.backward()
        norms.append(torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=0.5).item())
        opt.step()
        sched.step()
        losses.append(loss.item())
        lrs.append(sched.get_last_lr()[0])
    return {'init': state, 'x': tensor_json(x), 'y': tensor_json(y), 'losses': losses, 'norms': norms, 'lrs': lrs,
            'final': {k: tensor_json(v) for k, v in net.state_dict().items()}}


def main():
    torch.set_num_threads(1)
    data = {'torch_version': torch.__version__, 'steps': STEPS, 'schedulers': scheduler_cases(), 'clip': clip_cases(),
            'optimizers': optimizer_cases(), 'loop': training_loop()}
    with open(OUT, 'w') as f:
        json.dump(data, f, separators=(',', ':'))
        f.write('\n')
    print(f'wrote {OUT}')


if __name__ == '__main__':
    main()
