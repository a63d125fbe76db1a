#!/usr/bin/env python3
"""PyTorch's running extremes and order statistics, as a fixture for tests/js/statistics.test.mjs.

torch.cummax and torch.cummin (ties, NaN, -0, int64 and bool, every dim, a 0-d and an empty
input), torch.bincount (weights float32 and int64, minlength, an empty input, the errors),
torch.unique and torch.unique_consecutive (return_inverse, return_counts; float32 with -0 and 0,
int64, bool, empty and 0-d; NaN only in unique_consecutive: PyTorch 1.13's CPU unique gives NaNs
zero counts; along a dim: slices compared lexicographically, empty slices and the errors), torch.median and torch.nanmedian (the whole tensor, and along a dim with keepdim: values
and indices; PyTorch returns the lower of the two middle values), torch.quantile and
torch.nanquantile (q a number or a 1-D tensor, a dim or none, keepdim, each interpolation):
each case's arguments, inputs, outputs (or the first line of PyTorch's error) and, where the
first output is a float32 PyTorch differentiates, the gradient of (output * w).sum() for w the
ramp 1, 2, 3, ... over the output (grad; null where there is none). Writes
tests/js/fixtures/pytorch/ops/statistics.json:
  { "torch_version", "cases": [ { "op", "args", "inputs": [{"dtype", "shape", "data"}],
    "outputs": [{"dtype", "shape", "data"}], "grad": [...] or null } or { ..., "error" } ] }
NaN is written as null, infinities as the strings "Infinity" and "-Infinity".

Run with a python3 that imports torch (Debian's python3-torch, /usr/bin/python3); CI reads the
committed JSON and never runs this:
    /usr/bin/python3 tools/pytorch_statistics.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_reference import write_json  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'pytorch', 'ops', 'statistics.json')

NAN = float('nan')
INF = float('inf')
# ties (the later index wins in cummax, the lower middle in median), NaNs, -0 and 0, infinities
TIES = torch.tensor([[3., 1, 3, -0.0, 0, 5], [2, NAN, 2, -1, NAN, 7], [-1, -1, 4, float('-inf'), 4, 2]])
INTS = torch.tensor([[5, -3, 5, 0, -3], [2, 2, 9, 9, 1]])
BOOLS = torch.tensor([[True, False, True, True], [False, False, True, False]])


def t(x):
    return {'dtype': str(x.dtype).replace('torch.', ''), 'shape': list(x.shape),
            'data': [None if v != v else str(v).replace('inf', 'Infinity') if v in (INF, -INF) else v for v in x.flatten().tolist()]}


def main():
    cases = []

    def case(op, fn, inputs, *args):
        c = {'op': op, 'args': list(args), 'inputs': [t(x) for x in inputs]}
        x = inputs[0]
        grads = x.dtype == torch.float32
        xs = [x.clone().requires_grad_(grads)] + list(inputs[1:])
        try:
            out = fn(*xs)
        except (RuntimeError, IndexError, ValueError) as e:
            c['error'] = str(e).split('\n')[0]
            cases.append(c)
            return
        outs = out if isinstance(out, (tuple, list)) else (out,)
        c['outputs'] = [t(o.detach()) for o in outs]
        c['grad'] = None
        if grads and outs[0].requires_grad:
            w = torch.arange(1, outs[0].numel() + 1, dtype=torch.float32).reshape(outs[0].shape)
            try:
                (outs[0] * w).sum().backward()
                c['grad'] = t(xs[0].grad)['data']
            except NotImplementedError:  # unique: PyTorch has no derivative
                pass
        cases.append(c)

    for x in (TIES, INTS, BOOLS):
        for dim in (0, 1, -1):
            case('cummax', lambda a, d=dim: torch.cummax(a, d), [x], dim)
            case('cummin', lambda a, d=dim: torch.cummin(a, d), [x], dim)
    for op in ('cummax', 'cummin'):
        fn = getattr(torch, op)
        case(op, lambda a: fn(a, 0), [torch.tensor(2.5)], 0)
        case(op, lambda a: fn(a, 1), [torch.zeros(2, 0)], 1)
        case(op, lambda a: fn(a, 2), [TIES], 2)
        case(op, lambda a: fn(a, 0), [torch.tensor([NAN, 1., NAN, 3.])], 0)

    rows = torch.tensor([[4., 1, 3, 1, 2, 4], [0, 7, 7, 2, 2, 5], [1, NAN, -2, 3, NAN, 0], [NAN, NAN, 2, NAN, NAN, NAN]])
    for op in ('median', 'nanmedian'):
        fn = getattr(torch, op)
        for x in (rows, INTS, torch.tensor([[2., 5, 9], [1, 8, 3]]), torch.tensor(4.5)):
            case(op, lambda a: fn(a), [x])
            for dim in range(-1, max(x.dim(), 1)):
                for keep in (False, True):
                    case(op, lambda a, d=dim, k=keep: fn(a, d, k), [x], dim, keep)
        case(op, lambda a: fn(a), [torch.zeros(0, 3)])
        case(op, lambda a: fn(a, 0), [torch.zeros(0, 3)], 0, False)
        case(op, lambda a: fn(a), [BOOLS])
        case(op, lambda a: fn(a), [torch.tensor([NAN, NAN])])
    g = torch.Generator().manual_seed(5)
    rnd = torch.randn(3, 7, generator=g)
    for op in ('quantile', 'nanquantile'):
        fn = getattr(torch, op)
        for mode in ('linear', 'lower', 'higher', 'midpoint', 'nearest'):
            # rows (NaNs, ties) along each dim with a scalar and a 1-D q; random values over all of them
            for q, x, dim, keep in ((0.3, rows, 1, False), ([0.1, 0.25, 0.75, 0.9], rows, 1, True), (0.5, rows, 0, False),
                                    (1.0, rows, -1, False), (0.0, rows, 1, False), ([0.1, 0.5, 0.9], rnd, None, False),
                                    (0.3, rnd, None, True), (0.75, rnd, 0, True), ([0.4, 1.0], rnd, 1, False)):
                qt = torch.tensor(q) if isinstance(q, list) else q
                case(op, lambda a, q=qt, d=dim, k=keep, m=mode: fn(a, q, dim=d, keepdim=k, interpolation=m), [x], q, dim, keep, mode)
        case(op, lambda a: fn(a, 0.5), [INTS], 0.5, None, False, 'linear')
        case(op, lambda a: fn(a, 1.5), [rnd], 1.5, None, False, 'linear')
        case(op, lambda a: fn(a, torch.tensor([0.2, -0.1])), [rnd], [0.2, -0.1], None, False, 'linear')
        case(op, lambda a: fn(a, 0.5, dim=0), [torch.zeros(0, 3)], 0.5, 0, False, 'linear')
        case(op, lambda a: fn(a, 0.5, dim=1), [torch.tensor([[NAN, NAN, NAN], [1, NAN, 2]])], 0.5, 1, False, 'linear')
        case(op, lambda a: fn(a, torch.tensor(0.25), dim=0, keepdim=True), [torch.tensor(3.5)], 0.25, 0, True, 'linear')

    labels = torch.tensor([1, 3, 1, 0, 5, 3, 3])
    for args in ((), (None, 8), (torch.tensor([.5, 1, 2, 3, 4, -1.5, 0.25]),), (torch.tensor([.5, 1, 2, 3, 4, -1.5, 0.25]), 2),
                 (torch.tensor([1, 2, 3, 4, 5, 6, 7]),), (None, -1), (torch.tensor([1., 2]),)):
        weights, minlength = (list(args) + [None, 0][len(args):])[:2]
        extra = [] if weights is None else [weights]
        case('bincount', lambda a, *w, m=minlength: torch.bincount(a, weights=w[0] if w else None, minlength=m),
             [labels] + extra, minlength)
    case('bincount', lambda a: torch.bincount(a), [torch.zeros(0, dtype=torch.long)], 0)
    case('bincount', lambda a: torch.bincount(a, minlength=3), [torch.zeros(0, dtype=torch.long)], 3)
    case('bincount', lambda a: torch.bincount(a), [torch.tensor([1, -1])], 0)
    case('bincount', lambda a: torch.bincount(a), [torch.tensor([[1, 2]])], 0)
    case('bincount', lambda a: torch.bincount(a), [torch.tensor([1., 2])], 0)
    # unique: no NaN (PyTorch 1.13's CPU kernel gives NaNs zero counts); -0 and 0, ties
    floats = torch.tensor([[2., -0.0, 0.0, 1], [2, -1, 1, 2]])
    for x in (floats, torch.tensor([[5, 1, 5], [5, 2, 1]]), BOOLS, torch.zeros(0), torch.tensor(3.5)):
        for inv in (False, True):
            for cnt in (False, True):
                case('unique', lambda a, i=inv, c=cnt: torch.unique(a, return_inverse=i, return_counts=c), [x], inv, cnt)
                case('unique_consecutive', lambda a, i=inv, c=cnt: torch.unique_consecutive(a, return_inverse=i, return_counts=c),
                     [x], inv, cnt)
    case('unique_consecutive', lambda a: torch.unique_consecutive(a, return_inverse=True, return_counts=True),
         [torch.tensor([1., NAN, NAN, 2, 2, -0.0, 0.0])], True, True)
    # unique and unique_consecutive along a dim: slices compared lexicographically (ties in the first
    # elements, -0 and 0, repeated and adjacent slices), a size 1, empty slices, and the errors
    cube = torch.tensor([[[1, 2, 1], [0, 5, 0]], [[1, 2, 1], [0, 5, 0]], [[1, 2, 0], [0, 5, 9]], [[1, 2, 1], [0, 5, 0]],
                         [[-4, 2, -4], [3, 3, 3]]])
    rows = torch.tensor([[2., -0.0, 1, 1, 0.5], [2, 0.0, 1, 1, 0.5], [1, 7, 1, 1, -3], [2, 0, 0, 1, 9]])
    for x, dims in ((rows, (0, 1, -1)), (cube, (0, 1, 2, -2)), (BOOLS, (0, 1)), (torch.tensor([[3., 1, 3, 2, 1]]), (0, 1)),
                    (torch.zeros(0, 3), (0, 1)), (torch.zeros(2, 0), (1, 0)), (torch.zeros(0, 0), (0,)), (torch.tensor(3.5), (0,)),
                    (rows, (2, -3))):
        for dim in dims:
            for inv, cnt in ((False, False), (True, True), (True, False), (False, True)):
                case('unique', lambda a, i=inv, c=cnt, d=dim: torch.unique(a, return_inverse=i, return_counts=c, dim=d), [x], inv, cnt, dim)
                case('unique_consecutive', lambda a, i=inv, c=cnt, d=dim:
                     torch.unique_consecutive(a, return_inverse=i, return_counts=c, dim=d), [x], inv, cnt, dim)

    write_json(OUT, {'torch_version': torch.__version__, 'cases': cases})
    print(f'{len(cases)} cases')


if __name__ == '__main__':
    main()
