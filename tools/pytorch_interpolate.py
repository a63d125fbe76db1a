#!/usr/bin/env python3
"""PyTorch's torch.nn.functional.interpolate as fixtures for tests/js/interpolate.test.mjs: for
modes 'nearest', 'bilinear' and 'bicubic' (the latter two with align_corners False and True),
'linear' and 'nearest' on [N, C, L] inputs, and 'area' on both ranks,
sizes and scale factors that upsample, downsample, keep a size, reach an output or an input of 1,
and odd ratios, the input (random from a fixed seed, rounded to 1/64 so the JSON is exact), the
output, and the gradient of (output * g).sum() for a random g. Writes
tests/js/fixtures/pytorch/ops/interpolate.json:
  { "torch_version": ..., "cases": [ { "mode", "align_corners" (null for nearest), "size" or
    "scale_factor", "input": {"shape", "data"}, "g": {...}, "output": {...}, "grad": {...} } ] }

Run with a python3 that imports torch (Debian's python3-torch, /usr/bin/python3); CI reads the
committed JSON and never runs this:
    /usr/bin/python3 tools/pytorch_interpolate.py
"""
import json
import os

import numpy  # noqa: F401 (float32 reprs)
import torch
import torch.nn.functional as F

DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'pytorch', 'ops')

# (input H, W, then size or scale factor)
RESAMPLES = [
    ((4, 5), {'size': [9, 7]}), ((6, 7), {'size': [3, 4]}), ((5, 5), {'size': [5, 5]}),
    ((3, 4), {'size': [1, 6]}), ((1, 3), {'size': [4, 1]}), ((2, 2), {'size': [17, 3]}),
    ((4, 4), {'scale_factor': [2.0, 2.0]}), ((5, 3), {'scale_factor': [1.7, 2.5]}),
    ((8, 6), {'scale_factor': [0.5, 0.75]}), ((3, 3), {'scale_factor': [3.0, 1.0]}),
]

# (input L, then size or scale factor) for [N, C, L] inputs
RESAMPLES_1D = [
    (5, {'size': 9}), (7, {'size': 3}), (4, {'size': 4}), (1, {'size': 4}), (3, {'size': 1}),
    (4, {'scale_factor': 2.5}), (6, {'scale_factor': 0.5}), (5, {'scale_factor': 1.7}),
]


def tensor(t):
    # each float32 by its shortest decimal that reads back as the same float32
    return {'shape': list(t.shape), 'data': [float(repr(v)) for v in t.flatten().numpy()]}


def cases():
    g = torch.Generator().manual_seed(0)
    out = []
    for mode, aligns in (('nearest', [None]), ('bilinear', [False, True]), ('bicubic', [False, True])):
        for align in aligns:
            for (h, w), arg in RESAMPLES:
                x = (torch.randn(1, 2, h, w, generator=g) * 64).round() / 64
                out.append(case(x, mode, align, arg, g))
    # after the 4-D cases, so that theirs keep their random values: [N, C, L] inputs ('nearest',
    # 'linear'), and 'area' (adaptive average pooling) on both ranks
    for mode, aligns, rank in (('nearest', [None], 3), ('linear', [False, True], 3), ('area', [None], 3), ('area', [None], 4)):
        for align in aligns:
            for shape, arg in (RESAMPLES_1D if rank == 3 else RESAMPLES):
                x = (torch.randn(1, 2, *((shape,) if rank == 3 else shape), generator=g) * 64).round() / 64
                out.append(case(x, mode, align, arg, g))
    return {'torch_version': torch.__version__, 'cases': out}


def case(x, mode, align, arg, g):
    x.requires_grad_(True)
    y = F.interpolate(x, mode=mode, align_corners=align, **arg)
    gy = (torch.randn(y.shape, generator=g) * 64).round() / 64
    (y * gy).sum().backward()
    return {'mode': mode, 'align_corners': align, **arg, 'input': tensor(x.detach()), 'g': tensor(gy),
            'output': tensor(y.detach()), 'grad': tensor(x.grad)}


def main():
    os.makedirs(DIR, exist_ok=True)
    with open(os.path.join(DIR, 'interpolate.json'), 'w') as f:
        json.dump(cases(), f, separators=(',', ':'))
        f.write('\n')


if __name__ == '__main__':
    main()
