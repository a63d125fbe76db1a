#!/usr/bin/env python3
"""PyTorch optimizer state dicts, as a user porting a training run would save them, for
tests/js/training-utils.test.mjs (optimizer.loadStateDict of a PyTorch-shaped state dict).

Each case of tools/pytorch_training.py's OPTIMIZERS (and AdamW under a StepLR, whose groups carry
PyTorch's initial_lr; it steps during the first 3 only) runs 3 steps of that tool's fixed loss; then opt.state_dict() is written
the way it is usually carried out of Python without pickle: every tensor of `state` into
optim_state.safetensors as state.<index>.<name> (Adam's step is a 0-dim float32 tensor, as
PyTorch 1.13 keeps it), everything else (param_groups with PyTorch's own keys, numbers, None) into
optim_state.json with the parameters after those 3 steps; then 2 more steps, the parameters after
each. The JS test loads the state dict into an optimizer made with other options and checks that
its next 2 steps are PyTorch's.

Writes tests/js/fixtures/pytorch/ops/optim_state.{json,safetensors}. Run with Debian's
python3-torch (/usr/bin/python3); CI reads the committed files and never runs this:
    /usr/bin/python3 tools/pytorch_optim_state.py
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_training import OPTIMIZERS, loss_of, tensor_json  # noqa: E402
from safetensors_fixtures import write  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'pytorch', 'ops')
CASES = dict(OPTIMIZERS, AdamW=lambda ps: torch.optim.AdamW(ps, lr=0.02, betas=(0.8, 0.9), weight_decay=0.05))


def main():
    torch.set_num_threads(1)
    torch.manual_seed(7)
    init = [torch.randn(2, 3), torch.randn(4)]
    cases, tensors = {}, {}
    for name, make in CASES.items():
        ps = [t.clone().requires_grad_(True) for t in init]
        opt = make(ps)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5) if name == 'AdamW' else None

        def step(scheduled):
            opt.zero_grad()
            loss_of(ps).backward()
            opt.step()
            if sched and scheduled:
                sched.step()
        for _ in range(3):
            step(True)
        sd = opt.state_dict()
        state = {}
        for i, s in sd['state'].items():
            state[i] = {}
            for k, v in s.items():
                if isinstance(v, torch.Tensor):
                    tensors[f'{name}/state.{i}.{k}'] = v.detach().clone()
                else:
                    state[i][k] = v  # a number, or None (SGD's momentum_buffer without momentum)
        after = [tensor_json(p) for p in ps]
        later = []
        for _ in range(2):  # without the scheduler, whose state is not the optimizer's
            step(False)
            later.append([tensor_json(p) for p in ps])
        cases[name] = {'param_groups': sd['param_groups'], 'state': state, 'params': after, 'later': later}
    write(os.path.join(OUT, 'optim_state.safetensors'), tensors)
    with open(os.path.join(OUT, 'optim_state.json'), 'w') as f:
        json.dump({'torch_version': torch.__version__, 'cases': cases}, f, separators=(',', ':'))
        f.write('\n')
    print(f'wrote {OUT}/optim_state.json and optim_state.safetensors')


if __name__ == '__main__':
    main()
