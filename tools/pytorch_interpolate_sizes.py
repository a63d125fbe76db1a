#!/usr/bin/env python3
"""PyTorch's output sizes of torch.nn.functional.interpolate by a scale factor, for
`npm run sweep:interpolate` (tools/interpolate_ranges.mjs), which compares them with onemodel's
eager sizes and with the traced graph's (docs/symbolic-axes.md, "Integers rounded from a float
product"). For each scale given and every H from 1 to the maximum, the output height of a
[0, 1, H, 1] input in mode 'nearest' (ATen's compute_output_size: floor(double(H) * s)); and at
every 97th H the same in 'bilinear', 'bicubic', 'area' and with recompute_scale_factor (the
Python side's floor(float(H) * s)), which must agree with 'nearest'. Writes JSON to the path given:
  { "torch_version": ..., "max": N, "sizes": { "<scale as repr>": [size at H = 1, 2, ...] } }

Run with a python3 that imports torch (Debian's python3-torch, /usr/bin/python3); nothing in
npm test runs it:
    /usr/bin/python3 tools/pytorch_interpolate_sizes.py OUT.json MAX SCALE...
"""
import json
import sys

import torch
import torch.nn.functional as F


def height(h, s, **kw):
    # a batch of 0: the size without the work (PyTorch 1.13 takes an empty batch)
    return F.interpolate(torch.empty(0, 1, h, 1), scale_factor=(s, 1.0), **kw).shape[2]


def main():
    out, top, scales = sys.argv[1], int(sys.argv[2]), [float(x) for x in sys.argv[3:]]
    sizes = {}
    for s in scales:
        row = []
        for h in range(1, top + 1):
            try:
                row.append(height(h, s, mode='nearest'))
            except RuntimeError:  # an output of 0 rows: PyTorch refuses, as onemodel does
                row.append(0)
            if h % 97 == 0 and row[-1] > 0:
                others = [height(h, s, mode=m) for m in ('bilinear', 'bicubic', 'area')]
                others.append(height(h, s, mode='nearest', recompute_scale_factor=True))
                if any(o != row[-1] for o in others):
                    sys.exit(f'pytorch_interpolate_sizes: at H={h} by {s!r} the modes disagree: {row[-1]} {others}')
        sizes[repr(s)] = row
    with open(out, 'w') as f:
        json.dump({'torch_version': torch.__version__, 'max': top, 'sizes': sizes}, f)


if __name__ == '__main__':
    main()
