#!/usr/bin/env python3
"""PyTorch's torch.scatter_reduce, as a fixture for tests/js/scatter-reduce.test.mjs.

Every reduce ('sum', 'prod', 'mean', 'amax', 'amin') with include_self true and false, over inputs
with repeated places, ties (amax and amin share their gradient among them), zeros (prod's
gradient), places no source reaches, src larger than index, every dim of a 3-D input, odd sizes,
a size 1, a 0-d input and an empty index: each case's arguments, inputs, output and the
gradients of (output * w).sum() for w the ramp 1, 2, 3, ... over the output, in input and src
(both null where index is smaller than src: PyTorch 1.13's backward fails there).
Writes tests/js/fixtures/pytorch/ops/scatter_reduce.json:
  { "torch_version", "cases": [ { "dim", "reduce", "include_self", "input", "index", "src"
    (each {"shape", "data"}), "output", "grad_input", "grad_src" (or nulls) } ] }

Run with a python3 that imports torch (Debian's python3-torch, /usr/bin/python3); CI reads the
committed JSON and never runs this:
    /usr/bin/python3 tools/pytorch_scatter_reduce.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_reference import write_json  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'pytorch', 'ops', 'scatter_reduce.json')


def t(x):
    return {'shape': list(x.shape), 'data': x.detach().flatten().tolist()}


def main():
    g = torch.Generator().manual_seed(45)
    # small integers (ties in amax and amin, exact sums) and zeros (prod's gradient)
    ints = lambda *shape: torch.randint(-3, 4, shape, generator=g).float()  # noqa: E731
    places = lambda size, *shape: torch.randint(0, size, shape, generator=g)  # noqa: E731
    setups = [
        # input, dim, index, src
        (ints(5, 4), 0, places(5, 6, 3), ints(7, 4)),
        (ints(3, 5), 1, places(5, 3, 4), ints(3, 4)),
        (ints(3, 5), -1, places(5, 3, 7), ints(3, 7)),
        (torch.randn(2, 3, 4, generator=g), 0, places(2, 2, 3, 4), torch.randn(2, 3, 4, generator=g)),
        (torch.randn(2, 3, 4, generator=g), 1, places(3, 2, 5, 3), torch.randn(2, 5, 4, generator=g)),
        (ints(2, 3, 4), 2, places(4, 1, 3, 6), ints(1, 3, 6)),
        (torch.tensor([2.5]), 0, torch.tensor([0, 0, 0]), torch.tensor([1.5, -2.0, 1.5])),
        (torch.tensor([[0., 2, 0], [3, 0, 1]]), 0, torch.tensor([[0, 1, 0], [0, 1, 1], [1, 1, 0]]),
         torch.tensor([[0., 5, 2], [4, 0, 0], [0, 3, 0]])),
        (torch.tensor(1.5), 0, torch.tensor(0), torch.tensor(-4.0)),
        (ints(3, 4), 1, torch.zeros(3, 0, dtype=torch.long), ints(3, 0)),
    ]
    cases = []
    for x, dim, index, src in setups:
        for reduce in ('sum', 'prod', 'mean', 'amax', 'amin'):
            for include_self in (True, False):
                xi, si = x.clone().requires_grad_(), src.clone().requires_grad_()
                out = torch.scatter_reduce(xi, dim, index, si, reduce, include_self=include_self)
                w = torch.arange(1, out.numel() + 1, dtype=torch.float32).reshape(out.shape)
                try:
                    (out * w).sum().backward()
                except RuntimeError:  # PyTorch 1.13's backward fails where index is smaller than src
                    xi.grad = si.grad = None
                cases.append({'dim': dim, 'reduce': reduce, 'include_self': include_self, 'input': t(x),
                              'index': t(index), 'src': t(src), 'output': t(out), 'grad_input': t(xi.grad) if xi.grad is not None else None,
                              'grad_src': t(si.grad) if si.grad is not None else None})
    write_json(OUT, {'torch_version': torch.__version__, 'cases': cases})
    print(f'{len(cases)} cases')


if __name__ == '__main__':
    main()
