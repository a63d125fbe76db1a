#!/usr/bin/env python3
"""Values of PyTorch's functions that the library writes as composites of its ops (and of topk, which
sort and argsort are written with), as fixtures for tests/js/roll.test.mjs, meshgrid.test.mjs and
sort.test.mjs.

torch.roll: for a [2, 3, 4] tensor of each dtype (float32, int64, bool) and shifts that cover one
dim and several, negative shifts, shifts larger than the size (and than twice it), a dim rolled
twice and no dims (the flattened tensor), what PyTorch gives or that it raises (and the first
line of its message). Writes tests/js/fixtures/pytorch/ops/roll.json:
  { "torch_version": ..., "shape": [2, 3, 4],
    "inputs": { "<dtype>": [row-major values] },
    "cases": [ { "dtype", "shifts", "dims" (null: none), "data" (row-major, the input's shape) } or
               { "dtype", "shifts", "dims", "error": "<first line of PyTorch's message>" } ] }

torch.meshgrid: one to three 0-d or 1-D inputs (an empty one too) of each dtype, with indexing
'ij' and 'xy'. Writes tests/js/fixtures/pytorch/ops/meshgrid.json:
  { "torch_version": ...,
    "cases": [ { "dtype", "indexing", "inputs": [{"shape", "data"}], "outputs": [{"shape", "data"}] } ] }

Sorting, searching and rearranging (tests/js/sort.test.mjs): topk (k = 1 to n, both ends, ties
and NaN: PyTorch's topk orders equal values as its selection leaves them, so the test checks
its values and that the indices pick them), sort and argsort (stable, both directions), searchsorted and bucketize (both sides, values
equal to boundaries, NaN, int64), one_hot, repeat_interleave (a count, counts, with and without a
dim), tril_indices / triu_indices, pixel_shuffle / pixel_unshuffle, each case's inputs and outputs
or PyTorch's error (first line). Writes tests/js/fixtures/pytorch/ops/sort.json:
  { "torch_version": ..., "cases": [ { "op", "args" (numbers, null, booleans), "inputs": [{"dtype",
    "shape", "data"}], "outputs": [{"dtype", "shape", "data"}] or "error" } ] }

Run with a python3 that imports torch (Debian's python3-torch, /usr/bin/python3); CI reads the
committed JSON and never runs this:
    /usr/bin/python3 tools/pytorch_composites.py
"""
import json
import os

import torch

DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'pytorch', 'ops')

SHAPE = [2, 3, 4]
BASE = torch.arange(24).reshape(SHAPE)
INPUTS = {'float32': BASE.float() * 0.5 - 3, 'int64': BASE * 7 - 50, 'bool': BASE % 3 == 0}

ROLLS = [
    (1, 0), (-1, 0), (2, 2), (-3, 2), (5, 2), (-9, 2), (11, 1), (0, 1), (4, -1),
    ((1, 2), (0, 2)), ((-2, 7), (1, -1)), ((3, -1, 10), (2, 0, 1)), ((1, 2), (2, 2)),
    (5, None), (-30, None), ((1, 2), None), ((1,), (0, 1)),
]

GRIDS = [[3], [2, 4], [4, 2], [3, 0], [1, 3], [2, 3, 4], [None, 3], [2, None, 2]]  # None: a 0-d input


def rolls():
    cases = []
    for dtype, x in INPUTS.items():
        for shifts, dims in ROLLS:
            case = {'dtype': dtype, 'shifts': list(shifts) if isinstance(shifts, tuple) else shifts,
                    'dims': list(dims) if isinstance(dims, tuple) else dims}
            try:
                r = torch.roll(x, shifts, dims) if dims is not None else torch.roll(x, shifts)
                case['data'] = r.flatten().tolist()
            except RuntimeError as e:
                case['error'] = str(e).split('\n')[0]
            cases.append(case)
    return {'torch_version': torch.__version__, 'shape': SHAPE,
            'inputs': {k: v.flatten().tolist() for k, v in INPUTS.items()}, 'cases': cases}


def tensor(t):
    return {'shape': list(t.shape), 'data': t.flatten().tolist()}


def meshgrids():
    cases = []
    for dtype, x in INPUTS.items():
        for sizes in GRIDS:
            start = 0
            inputs = []
            for n in sizes:
                part = x.flatten()[start:start + (n or 1)]
                inputs.append(part[0] if n is None else part)
                start += n or 1
            for indexing in ('ij', 'xy'):
                outputs = torch.meshgrid(*inputs, indexing=indexing)
                cases.append({'dtype': dtype, 'indexing': indexing, 'inputs': [tensor(t) for t in inputs],
                              'outputs': [tensor(t) for t in outputs]})
    return {'torch_version': torch.__version__, 'cases': cases}


def t(x):
    return {'dtype': str(x.dtype).replace('torch.', ''), 'shape': list(x.shape),
            'data': [None if v != v else v for v in x.flatten().tolist()]}


TIES = torch.tensor([[3., 1, 2, 1, 5, 2], [0, 0, -1, 7, 0, 7], [4, float('nan'), 4, -2, float('nan'), 1]])
INTS = torch.tensor([[5, -3, 5, 0], [2, 2, 2, 9]])


def sorting():
    cases = []

    def case(op, fn, inputs, *args):
        c = {'op': op, 'args': list(args), 'inputs': [t(x) for x in inputs]}
        try:
            out = fn(*inputs)
            c['outputs'] = [t(o) for o in (out if isinstance(out, (tuple, list)) else (out,))]
        except (RuntimeError, IndexError, ValueError) as e:
            c['error'] = str(e).split('\n')[0]
        cases.append(c)

    for x in (TIES, INTS):
        for dim in (-1, 0, 1):
            n = x.shape[dim]
            for k in sorted({1, 2, n}):
                for largest in (True, False):
                    case('topk', lambda a: torch.topk(a, k, dim, largest), [x], k, dim, largest)
            for desc in (False, True):
                case('sort', lambda a: torch.sort(a, dim=dim, descending=desc, stable=True), [x], dim, desc)
                case('argsort', lambda a: torch.argsort(a, dim=dim, descending=desc, stable=True), [x], dim, desc)
    case('topk', lambda a: torch.topk(a, 7, 1), [TIES], 7, 1, True)
    case('topk', lambda a: torch.topk(a, 1, 2), [TIES], 1, 2, True)
    bounds = torch.tensor([-1., 0, 2, 2, 5])
    vals = torch.tensor([[-3., -1, 0, 1], [2, 4.5, 5, 9], [float('nan'), 2, -0., 0.5]])
    for right in (False, True):
        case('bucketize', lambda a, b: torch.bucketize(a, b, right=right), [vals, bounds], right)
        case('bucketize', lambda a, b: torch.bucketize(a, b, right=right), [INTS, torch.tensor([0, 2, 5])], right)
        seq = torch.tensor([[0., 1, 2, 3], [-5, 0, 0, 5], [1, 1, 1, 1]])
        case('searchsorted', lambda s_, v: torch.searchsorted(s_, v, right=right), [seq, vals], right)
        case('searchsorted', lambda s_, v: torch.searchsorted(s_, v, right=right), [bounds, vals], right)
    case('bucketize', lambda a, b: torch.bucketize(a, b), [vals, seq], False)
    case('searchsorted', lambda s_, v: torch.searchsorted(s_, v), [seq, torch.zeros(2, 4)], False)
    cls = torch.tensor([[0, 3, 1], [2, 2, 0]])
    for n in (-1, 4, 6):
        case('one_hot', lambda c: torch.nn.functional.one_hot(c, n), [cls], n)
    case('one_hot', lambda c: torch.nn.functional.one_hot(c, 3), [cls], 3)
    case('one_hot', lambda c: torch.nn.functional.one_hot(c, 5), [torch.tensor([1, -1])], 5)
    x = torch.arange(12.).reshape(2, 3, 2) - 4
    for reps, dim in ((2, None), (3, 0), (1, 1), (0, 2), (2, -1)):
        case('repeat_interleave', lambda a: torch.repeat_interleave(a, reps, dim), [x], reps, dim)
    for reps, dim in (([1, 0, 3], 1), ([2, 1], 0), ([2], 2), (list(range(12)), None), ([1, 2], 1), ([1, -1, 1], 1)):
        case('repeat_interleave', lambda a, r: torch.repeat_interleave(a, r, dim), [x, torch.tensor(reps)], None, dim)
    for row, col, off in ((3, 3, 0), (4, 3, 1), (3, 5, -1), (1, 1, 0), (0, 4, 0), (5, 2, -7), (5, 2, 9), (3, 4, 2)):
        case('tril_indices', lambda: torch.tril_indices(row, col, off), [], row, col, off)
        case('triu_indices', lambda: torch.triu_indices(row, col, off), [], row, col, off)
    img = torch.arange(2 * 8 * 2 * 3.).reshape(2, 8, 2, 3)
    case('pixel_shuffle', lambda a: torch.nn.functional.pixel_shuffle(a, 2), [img], 2)
    case('pixel_shuffle', lambda a: torch.nn.functional.pixel_shuffle(a, 1), [img], 1)
    case('pixel_shuffle', lambda a: torch.nn.functional.pixel_shuffle(a, 3), [torch.arange(2 * 9 * 2 * 1.).reshape(1, 2, 9, 2, 1)], 3)
    case('pixel_shuffle', lambda a: torch.nn.functional.pixel_shuffle(a, 3), [img], 3)
    case('pixel_unshuffle', lambda a: torch.nn.functional.pixel_unshuffle(a, 2), [torch.arange(2 * 2 * 4 * 6.).reshape(2, 2, 4, 6)], 2)
    case('pixel_unshuffle', lambda a: torch.nn.functional.pixel_unshuffle(a, 3), [torch.arange(3 * 3 * 6.).reshape(3, 3, 6)], 3)
    case('pixel_unshuffle', lambda a: torch.nn.functional.pixel_unshuffle(a, 2), [torch.arange(2 * 3 * 4.).reshape(2, 3, 4)], 2)
    return {'torch_version': torch.__version__, 'cases': cases}


def write(name, value):
    os.makedirs(DIR, exist_ok=True)
    with open(os.path.join(DIR, name), 'w') as f:
        json.dump(value, f, separators=(',', ':'))
        f.write('\n')


if __name__ == '__main__':
    write('roll.json', rolls())
    write('meshgrid.json', meshgrids())
    write('sort.json', sorting())
