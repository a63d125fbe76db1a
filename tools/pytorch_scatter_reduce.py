#!/usr/bin/env python3
"""PyTorch's torch.scatter_reduce, as a fixture for tests/js/scatter-reduce.test.mjs.

Every reduce ('sum', 'prod', 'mean', 'amax', 'amin') with include_self true and false, over inputs
with repeated places, ties (amax and amin share their gradient among them), zeros (prod's
gradient), places no source reaches, src larger than index, every dim of a 3-D input, odd sizes,
a size 1, a 0-d input and an empty index, and int64 inputs (no gradients), recorded as tools/pytorch_composites.py's recorder
writes them: the inputs (input, index, src), output and the gradients of (output * g).sum() in
input and src (none where PyTorch 1.13's backward fails: some index shapes smaller than src's).
Writes tests/js/fixtures/pytorch/ops/scatter_reduce.json:
  { "torch_version", "cases": [ { "op", "args": {"dim", "reduce", "includeSelf"}, "inputs", "g", "output", "grads" } ] }

Run with a python3 that imports torch (Debian's python3-torch, /usr/bin/python3); CI reads the
committed JSON and never runs this:
    /usr/bin/python3 tools/pytorch_scatter_reduce.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_composites import recorder, write  # noqa: E402


def backward_works(x, dim, index, src, reduce, include_self):
    """Whether PyTorch 1.13 differentiates this case (its backward fails for some index shapes smaller than src's)."""
    xi, si = x.clone().requires_grad_(), src.clone().requires_grad_()
    try:
        torch.scatter_reduce(xi, dim, index, si, reduce, include_self=include_self).sum().backward()
        return True
    except RuntimeError:
        return False


def main():
    g, cases, case, rnd = recorder(45)
    # small integers (ties in amax and amin, exact sums) and zeros (prod's gradient)
    ints = lambda *shape: torch.randint(-3, 4, shape, generator=g).float()  # noqa: E731
    places = lambda size, *shape: torch.randint(0, size, shape, generator=g)  # noqa: E731
    setups = [
        # input, dim, index, src
        (ints(5, 4), 0, places(5, 6, 3), ints(7, 4)),
        (ints(3, 5), 1, places(5, 3, 4), ints(3, 4)),
        (ints(3, 5), -1, places(5, 3, 7), ints(3, 7)),
        (rnd(2, 3, 4), 0, places(2, 2, 3, 4), rnd(2, 3, 4)),
        (rnd(2, 3, 4), 1, places(3, 2, 5, 3), rnd(2, 5, 4)),
        (ints(2, 3, 4), 2, places(4, 1, 3, 6), ints(1, 3, 6)),
        (torch.tensor([2.5]), 0, torch.tensor([0, 0, 0]), torch.tensor([1.5, -2.0, 1.5])),
        (torch.tensor([[0., 2, 0], [3, 0, 1]]), 0, torch.tensor([[0, 1, 0], [0, 1, 1], [1, 1, 0]]),
         torch.tensor([[0., 5, 2], [4, 0, 0], [0, 3, 0]])),
        (torch.tensor(1.5), 0, torch.tensor(0), torch.tensor(-4.0)),
        (ints(3, 4), 1, torch.zeros(3, 0, dtype=torch.long), ints(3, 0)),
    ]
    for x, dim, index, src in setups:
        for reduce in ('sum', 'prod', 'mean', 'amax', 'amin'):
            for include_self in (True, False):
                grads = (0, 2) if backward_works(x, dim, index, src, reduce, include_self) else ()
                case('scatterReduce', lambda a, i, b: torch.scatter_reduce(a, dim, i, b, reduce, include_self=include_self),
                     [x, index, src], {'dim': dim, 'reduce': reduce, 'includeSelf': include_self}, grads)
    # int64 input and src (no gradients): negative sums (the mean rounds down: PyTorch floor-divides),
    # products past 2^31, places no source reaches, with and without the input
    longs = lambda lo, hi, *shape: torch.randint(lo, hi, shape, generator=g)  # noqa: E731
    int_setups = [
        (longs(-9, 10, 4, 3), 0, places(4, 6, 3), longs(-9, 10, 6, 3)),
        (longs(-50, 50, 3, 5), 1, places(5, 3, 7), longs(-3000, 3000, 3, 7)),
        (torch.tensor([-7, 7, 0]), 0, torch.tensor([0, 0, 1, 1, 1]), torch.tensor([0, 1, -1, -1, 4])),
    ]
    for x, dim, index, src in int_setups:
        for reduce in ('sum', 'prod', 'mean', 'amax', 'amin'):
            for include_self in (True, False):
                case('scatterReduce', lambda a, i, b: torch.scatter_reduce(a, dim, i, b, reduce, include_self=include_self),
                     [x, index, src], {'dim': dim, 'reduce': reduce, 'includeSelf': include_self}, ())
    write('scatter_reduce.json', {'torch_version': torch.__version__, 'cases': cases})
    print(f'{len(cases)} cases')


if __name__ == '__main__':
    main()
