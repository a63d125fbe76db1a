#!/usr/bin/env python3
"""Max pools' return_indices and the max unpools against PyTorch, as fixtures for
tests/js/max-unpool.test.mjs.

F.max_pool1d, F.max_pool2d and F.max_pool3d with return_indices=True (strides below and above the
kernel, padding, dilation, ceil_mode, a window that overhangs, maxima twice in a window, unbatched):
the values with the gradient of (values * g).sum() (a *Values case), the indices (an *Indices case,
no gradient); F.max_unpool1d, F.max_unpool2d and F.max_unpool3d on a pool's values and indices
(default output sizes and given ones, an unbatched input) with the gradient of the values (not
where a place repeats: PyTorch's backward, a gather, gives each copy the place's gradient, where
the value written is the last one's alone, whose gradient the library gives); and the
errors PyTorch gives for an output size out of range. Each case as tools/pytorch_composites.py's
recorder writes it (inputs random from a fixed seed, two decimals). Writes
tests/js/fixtures/pytorch/ops/max_unpool.json:
  { "torch_version": ..., "cases": [ { "op", "args", "inputs", "g", "output", "grads" } ],
    "errors": [ { "op", "args", "input", "indices", "error": "<first line of PyTorch's message>" } ] }

Run with a python3 that imports torch (Debian's python3-torch, /usr/bin/python3); CI reads the
committed JSON and never runs this:
    /usr/bin/python3 tools/pytorch_pool_indices.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_composites import recorder, t, write  # noqa: E402

F = torch.nn.functional
POOLS = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
UNPOOLS = {1: F.max_unpool1d, 2: F.max_unpool2d, 3: F.max_unpool3d}

# (spatial shape, kernel, pool options): strides below the kernel (places repeat), padding,
# dilation, ceil_mode with an overhanging last window
POOL_CASES = [
    ([9], 3, {}), ([10], 3, {'stride': 2, 'padding': 1}), ([11], 2, {'stride': 3, 'dilation': 2, 'ceil_mode': True}),
    ([5, 7], 2, {}), ([6, 7], 3, {'stride': 2, 'padding': 1}), ([7, 6], [2, 3], {'stride': [1, 2], 'dilation': [2, 1]}),
    ([5, 8], 2, {'stride': 2, 'ceil_mode': True}), ([4, 5, 6], 2, {}), ([5, 4, 6], [3, 2, 2], {'stride': 2, 'padding': [1, 0, 1], 'ceil_mode': True}),
]

# (spatial shape, kernel, options, output size or None): unpools of a pool with the same kernel and stride
UNPOOL_CASES = [
    ([9], 3, {}, None), ([10], 2, {'stride': 2}, [11]), ([6, 8], 2, {}, None), ([7, 9], 3, {'stride': 2, 'padding': 1}, None),
    ([6, 7], 2, {'stride': 2}, [7, 7]), ([4, 6, 6], 2, {}, None), ([5, 4, 6], 2, {'stride': 2}, [5, 5, 7]),
]


def camel(options):
    names = {'ceil_mode': 'ceilMode'}
    return {names.get(k, k): v for k, v in options.items()}


def fixtures():
    g, cases, case, _ = recorder(11)

    def short(*shape):  # two decimals: short fixtures
        return (torch.randn(*shape, generator=g) * 100).round() / 100

    for shape, kernel, o in POOL_CASES:
        n = len(shape)
        x = (short(2, 3, *shape) * 2).round() / 2  # halves: windows with their maximum twice
        args = {'kernelSize': kernel, **camel(o)}
        case(f'maxPool{n}dValues', lambda a: POOLS[n](a, kernel, **o, return_indices=True)[0], [x], args)
        case(f'maxPool{n}dIndices', lambda a: POOLS[n](a, kernel, **o, return_indices=True)[1], [x], args, ())
    x = short(3, 6, 5)  # unbatched
    case('maxPool2dIndices', lambda a: F.max_pool2d(a, 2, return_indices=True)[1], [x], {'kernelSize': 2}, ())
    for shape, kernel, o, size in UNPOOL_CASES:
        n = len(shape)
        v, i = POOLS[n](short(2, 3, *shape), kernel, **o, return_indices=True)
        args = {'kernelSize': kernel, **o, 'outputSize': size}
        repeats = i.flatten(2).sort(-1)[0].diff(dim=-1).eq(0).any().item()  # overlapping windows that picked one place twice
        case(f'maxUnpool{n}d', lambda a, b: UNPOOLS[n](a, b, kernel, **o, output_size=size), [v, i], args, () if repeats else (0,))
    v, i = F.max_pool2d(short(3, 6, 8), 2, return_indices=True)  # unbatched
    case('maxUnpool2d', lambda a, b: F.max_unpool2d(a, b, 2), [v, i], {'kernelSize': 2, 'outputSize': None})
    errors = []
    for size in ([5, 7], [8, 9], [6]):
        v, i = F.max_pool2d(short(1, 1, 6, 8), 2, return_indices=True)
        try:
            F.max_unpool2d(v, i, 2, output_size=size)
            raise AssertionError(f'max_unpool2d took output_size {size}')
        except (ValueError, RuntimeError) as e:  # a size out of range; an index outside a smaller plane
            errors.append({'op': 'maxUnpool2d', 'args': {'kernelSize': 2, 'outputSize': size}, 'input': t(v), 'indices': t(i),
                           'error': str(e).split('\n')[0]})
    return {'torch_version': torch.__version__, 'cases': cases, 'errors': errors}


if __name__ == '__main__':
    write('max_unpool.json', fixtures())
