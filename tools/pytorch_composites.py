#!/usr/bin/env python3
"""Values of PyTorch's functions that the library writes as composites of its ops, as fixtures
for tests/js/roll.test.mjs and tests/js/meshgrid.test.mjs.

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


def write(name, value):
    os.makedirs(DIR, exist_ok=True)
    with open(os.path.join(DIR, name), 'w') as f:
        json.dump(value, f, separators=(',', ':'))
        f.write('\n')


if __name__ == '__main__':
    write('roll.json', rolls())
    write('meshgrid.json', meshgrids())
