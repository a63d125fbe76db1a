#!/usr/bin/env python3
"""F.conv_transpose1d, F.affine_grid and F.grid_sample against PyTorch, as fixtures.

conv_transpose1d (tests/js/conv-transpose1d.test.mjs): strides,
padding, output_padding (below the stride, and below the dilation where that is larger), dilation,
groups, with and without bias, an unbatched input; each case's inputs (random from a fixed seed),
output and the gradients of (output * g).sum() for the input, weight and bias, as
tools/pytorch_composites.py's recorder writes them. Writes
tests/js/fixtures/pytorch/ops/conv_transpose1d.json:
  { "torch_version": ..., "cases": [ { "op", "args", "inputs", "g", "output", "grads" } ] }

affine_grid (tests/js/affine-grid.test.mjs): 2-D (theta [N, 2, 3], size [N, C, H, W]) and 3-D
(theta [N, 3, 4], size [N, C, D, H, W]) with align_corners both ways, sizes of 1 and odd ones; the
grid and the gradient to theta, in the same form. Writes tests/js/fixtures/pytorch/ops/affine_grid.json.

grid_sample (tests/js/grid-sample.test.mjs): a 4-D input and a grid reaching past [-1, 1], in
modes bilinear, nearest and bicubic, and 5-D inputs in modes bilinear (trilinear) and nearest,
padding zeros, border and reflection, align_corners both ways, odd sizes and sizes of 1; the
output and the gradients to the input and (bilinear, bicubic) the grid. Writes tests/js/fixtures/pytorch/ops/grid_sample.json.

Run with a python3 that imports torch (Debian's python3-torch, /usr/bin/python3); CI reads the
committed JSON and never runs this:
    /usr/bin/python3 tools/pytorch_conv_grid.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_composites import recorder, write  # noqa: E402

F = torch.nn.functional

# (input shape, weight shape, stride, padding, output_padding, dilation, groups, bias)
CASES = [
    ((2, 3, 5), (3, 4, 3), 1, 0, 0, 1, 1, True),
    ((2, 4, 6), (4, 3, 2), 2, 1, 1, 1, 1, False),
    ((1, 4, 7), (4, 2, 3), 3, 2, 2, 2, 2, True),
    ((2, 2, 4), (2, 3, 4), 1, 1, 1, 3, 1, True),  # output_padding 1 below the dilation, stride 1
    ((4, 5), (4, 1, 3), 2, 0, 1, 1, 4, True),  # unbatched, depthwise
]


def conv_transpose1d():
    g, cases, case, rnd = recorder(13)
    for xs, ws, st, p, op, d, gr, bias in CASES:
        x, w, b = rnd(*xs), rnd(*ws), rnd(ws[1] * gr) if bias else None
        args = {'stride': st, 'padding': p, 'outputPadding': op, 'dilation': d, 'groups': gr, 'bias': bias}
        inputs = [x, w] + ([b] if bias else [])  # the bias, when there is one, is the third argument
        case('convTranspose1d', lambda a, ww, *bb: F.conv_transpose1d(a, ww, *bb, stride=st, padding=p, output_padding=op, groups=gr, dilation=d),
             inputs, args, tuple(range(len(inputs))))
    return {'torch_version': torch.__version__, 'cases': cases}


GRID_SIZES = [[2, 3, 4, 5], [1, 1, 3, 1], [3, 2, 1, 6], [2, 1, 2, 3, 4], [1, 2, 1, 5, 1]]


def affine_grid():
    g, cases, case, rnd = recorder(17)
    for size in GRID_SIZES:
        k = len(size) - 2
        theta = rnd(size[0], k, k + 1)
        for align in (False, True):
            case('affineGrid', lambda t: F.affine_grid(t, size, align_corners=align), [theta], {'size': size, 'alignCorners': align})
    return {'torch_version': torch.__version__, 'cases': cases}


def grid_sample():
    g, cases, case, rnd = recorder(19)
    x, grid = rnd(2, 3, 4, 5), torch.rand(2, 3, 4, 2, generator=g) * 2.6 - 1.3  # some points outside
    for mode in ('bilinear', 'nearest'):
        for padding in ('zeros', 'border', 'reflection'):
            for align in (False, True):
                case('gridSample', lambda a, gg: F.grid_sample(a, gg, mode=mode, padding_mode=padding, align_corners=align), [x, grid],
                     {'mode': mode, 'paddingMode': padding, 'alignCorners': align}, (0, 1) if mode == 'bilinear' else (0,))  # nearest: the grid's is 0
    # bicubic (4-D only) and 5-D inputs (bilinear there is trilinear), on the input above and odd
    # sizes with a size 1 (a point grid on 5-D)
    rand_grid = lambda *shape: torch.rand(*shape, generator=g) * 2.6 - 1.3  # noqa: E731
    setups = [('bicubic', x, grid), ('bicubic', rnd(1, 2, 1, 3), rand_grid(1, 3, 5, 2)),
              ('bilinear', rnd(2, 2, 3, 4, 5), rand_grid(2, 2, 3, 4, 3)), ('nearest', rnd(2, 2, 3, 4, 5), rand_grid(2, 2, 3, 4, 3)),
              ('bilinear', rnd(1, 3, 1, 3, 2), rand_grid(1, 3, 1, 2, 3)), ('nearest', rnd(1, 3, 1, 3, 2), rand_grid(1, 3, 1, 2, 3))]
    for mode, xx, gg in setups:
        for padding in ('zeros', 'border', 'reflection'):
            for align in (False, True):
                case('gridSample', lambda a, b: F.grid_sample(a, b, mode=mode, padding_mode=padding, align_corners=align), [xx, gg],
                     {'mode': mode, 'paddingMode': padding, 'alignCorners': align}, (0,) if mode == 'nearest' else (0, 1))
    return {'torch_version': torch.__version__, 'cases': cases}


if __name__ == '__main__':
    write('conv_transpose1d.json', conv_transpose1d())
    write('affine_grid.json', affine_grid())
    write('grid_sample.json', grid_sample())
