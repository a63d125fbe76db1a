#!/usr/bin/env python3
"""PyTorch's copies (torch.flip, Tensor.repeat, torch.tile, torch.diagonal, torch.diag) and products
(torch.prod, torch.cumprod),
as a fixture for tests/js/copies-products.test.mjs.

Each case calls one of them on a small input of float32, int64 or bool (float inputs hold zeros:
one, two and none in a reduced group, which is where prod's and cumprod's gradients need care) and
writes the input, the arguments and what PyTorch gives (dtype, shape, values) or that it raises
(the first line of its message); for a float input also the gradient of sum(y * w), w a fixed
ramp of y's shape (0.5, 1, 1.5, ... so that no gradient hides behind a weight of 0 or 1).

Writes tests/js/fixtures/pytorch/ops/copies_products.json:
  { "torch_version": ..., "cases": [ { "op", "args" (lists, numbers, booleans, null),
    "input": {"dtype", "shape", "data"}, "output": {"dtype", "shape", "data"}, "grad": [...] }
    or { "op", "args", "input", "error" } ] }

Run with a python3 that imports torch (Debian's python3-torch, /usr/bin/python3); CI reads the
committed JSON and never runs this:
    /usr/bin/python3 tools/pytorch_copies_products.py
"""
import os

import torch

from pytorch_activations_padding import backward_ramp, write_cases  # the ramp-weighted backward, the fixture's JSON

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'pytorch', 'ops', 'copies_products.json')

# [2, 3, 4]: row 0 of batch 0 has one zero, row 1 of batch 1 two, the rest none
F = torch.tensor([[[1.5, -2.0, 0.0, 0.5], [3.0, 0.25, -1.0, 2.0], [-0.5, 1.25, 2.5, -3.0]],
                  [[2.0, 1.0, -1.5, 0.75], [0.0, 4.0, 0.0, -2.0], [1.0, -0.25, 3.0, 1.5]]])
I = torch.tensor([[3, -2, 0, 5], [1, 7, -1, 2]])
B = torch.tensor([[True, False, True], [True, True, True]])

CASES = [
    ('flip', F, ([0],)), ('flip', F, ([-1, 0],)), ('flip', F, ([0, 1, 2],)), ('flip', F, ([],)), ('flip', I, ([1],)),
    ('flip', B, ([0, 1],)), ('flip', torch.tensor(2.5), ([],)), ('flip', F, ([0, 0],)), ('flip', F, ([3],)),
    ('repeat', F, ([1, 2, 1],)), ('repeat', F, ([2, 1, 1, 3],)), ('repeat', F[0, 0], ([3, 2],)), ('repeat', I, ([2, 0],)),
    ('repeat', B, ([1, 2],)), ('repeat', torch.tensor(1.5), ([2, 3],)), ('repeat', F, ([2, 2],)), ('repeat', F, ([1, -1, 1],)),
    ('tile', F, ([2],)), ('tile', F, ([2, 1, 1, 2],)), ('tile', I, ([3, 1],)), ('tile', F[0], ([],)),
    ('prod', F, ()), ('prod', F, (2,)), ('prod', F, (1, True)), ('prod', F, (0,)), ('prod', F[0, 1], ()), ('prod', I, (1,)),
    ('prod', B, (1,)), ('prod', B, ()), ('prod', torch.tensor(-2.5), ()), ('prod', F[:, :, :0], (2,)), ('prod', F, (3,)),
    ('cumprod', F, (2,)), ('cumprod', F, (1,)), ('cumprod', F, (0,)), ('cumprod', F, (-1,)), ('cumprod', I, (1,)),
    ('cumprod', B, (1,)), ('cumprod', torch.tensor(3.0), (0,)), ('cumprod', F, (3,)),
    # a line whose zero is first, last, or both
    ('cumprod', torch.tensor([[0.0, 2.0, 3.0], [2.0, 3.0, 0.0], [0.0, 1.5, 0.0]]), (1,)),
    ('prod', torch.tensor([[0.0, 2.0, 3.0], [2.0, 3.0, 0.0], [0.0, 1.5, 0.0]]), (1,)),
    ('diagonal', F, ()), ('diagonal', F, (1, 1, 2)), ('diagonal', F, (-1, -1, -2)), ('diagonal', F, (2, 0, 2)), ('diagonal', F, (5, 1, 2)),
    ('diagonal', I, (-1,)), ('diagonal', B, (1,)), ('diagonal', F, (0, 1, -2)), ('diagonal', F[0, 0], ()),
    ('diag', F[0, 1], ()), ('diag', F[0, 1], (2,)), ('diag', F[1, 2], (-1,)), ('diag', F[0], (1,)), ('diag', F[0], (-2,)),
    ('diag', I[0], (-1,)), ('diag', B[0], (1,)), ('diag', F, ()),
]


def call(op, x, args):
    if op == 'flip':
        return torch.flip(x, args[0])
    if op == 'repeat':
        return x.repeat(*args[0])
    if op == 'tile':
        return torch.tile(x, args[0])
    if op == 'diagonal':
        return torch.diagonal(x, *args)
    if op == 'diag':
        return torch.diag(x, *args)
    if op == 'prod':
        return torch.prod(x) if not args else torch.prod(x, args[0], keepdim=len(args) > 1 and args[1])
    return torch.cumprod(x, args[0])


def as_json(t):
    v = t.tolist()
    flat = []

    def walk(a):
        if isinstance(a, list):
            for b in a:
                walk(b)
        else:
            flat.append(a)
    walk(v)
    return {'dtype': str(t.dtype).replace('torch.', ''), 'shape': list(t.shape), 'data': flat}


def main():
    torch.set_num_threads(1)
    cases = []
    for op, x, args in CASES:
        case = {'op': op, 'args': list(args), 'input': as_json(x)}
        xg = x.clone().requires_grad_(x.dtype == torch.float32)
        try:
            y = call(op, xg, args)
        except (RuntimeError, IndexError, TypeError) as e:
            case['error'] = str(e).split('\n')[0]
            cases.append(case)
            continue
        case['output'] = as_json(y.detach())
        if xg.requires_grad:
            backward_ramp(y)
            case['grad'] = as_json(xg.grad)['data']
        cases.append(case)
    write_cases(OUT, cases)


if __name__ == '__main__':
    main()
