#!/usr/bin/env python3
"""PyTorch's ops whose result size the values decide (torch.nonzero, as_tuple=True, torch.argwhere,
torch.where(condition), torch.masked_select and x[mask]), as a fixture for tests/js/nonzero.test.mjs.

For inputs of each dtype (float32 with NaN and -0, int64, bool) and shape (0-d true and false, 1-D,
3-D, an empty one), the results of nonzero, nonzero(as_tuple=True), argwhere and where(condition);
for masked_select (the mask broadcast against the input both ways) and x[mask] (a mask of the
leading dims), the result and the input's gradient of sum(out * w), w a ramp 0.5, 1, 1.5, ...
Writes tests/js/fixtures/pytorch/ops/nonzero.json:
  { "torch_version", "inputs": [ {"dtype", "shape", "data"} ],
    "nonzero": [ {"input": k, "nonzero": {"shape", "data"}, "tuple": [{"shape", "data"}]} ],
    "select": [ {"op": "masked_select" | "index", "x": {...}, "mask": {...}, "out": {...}, "grad": [...]} ] }
NaN and -0 are written as the strings "NaN" and "-0".

Run with a python3 that imports torch (Debian's python3-torch, /usr/bin/python3); CI reads the
committed JSON and never runs this:
    /usr/bin/python3 tools/pytorch_nonzero.py
"""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_reference import write_json  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'pytorch', 'ops', 'nonzero.json')


def number(v):
    if isinstance(v, float) and math.isnan(v):
        return 'NaN'
    if isinstance(v, float) and v == 0 and math.copysign(1, v) < 0:
        return '-0'
    return v


def tensor(t):
    return {'shape': list(t.shape), 'data': [number(v) for v in t.flatten().tolist()]}


def ramp(shape):
    n = 1
    for s in shape:
        n *= s
    return (torch.arange(n, dtype=torch.float32) * 0.5 + 0.5).reshape(shape)


def inputs():
    g = torch.Generator().manual_seed(7)
    f = torch.randint(-1, 2, (2, 3, 4), generator=g).float()
    f[0, 1, 2] = float('nan')
    f[1, 0, 0] = -0.0
    return [f, torch.randint(-1, 2, (2, 3, 4), generator=g), torch.randint(0, 2, (2, 3, 4), generator=g).bool(),
            torch.tensor([0.0, 2.5, 0.0, -1.0, 0.0]), torch.tensor(3.0), torch.tensor(0), torch.zeros(2, 0, 3),
            torch.zeros(3, 2), torch.ones(3, 2, dtype=torch.bool)]


def selects():
    g = torch.Generator().manual_seed(11)
    x = torch.randn(2, 3, 4, generator=g)
    m = torch.rand(2, 3, 4, generator=g) > 0.5
    cases = [('masked_select', x, m), ('masked_select', x, m[0]), ('masked_select', x[0, :, :1], m[0]),
             ('masked_select', x, torch.zeros(4, dtype=torch.bool)), ('index', x, m[:, :, 0]), ('index', x, m[0, 0, :2]),
             ('index', x, torch.ones(2, dtype=torch.bool))]
    out = []
    for op, a, mask in cases:
        a = a.clone().requires_grad_()
        r = torch.masked_select(a, mask) if op == 'masked_select' else a[mask]
        (r * ramp(list(r.shape))).sum().backward()
        out.append({'op': op, 'x': tensor(a.detach()), 'mask': tensor(mask), 'out': tensor(r.detach()),
                    'grad': tensor(a.grad)['data']})
    return out


def main():
    ins = inputs()
    cases = []
    for k, x in enumerate(ins):
        tup = torch.nonzero(x, as_tuple=True)
        assert torch.equal(torch.argwhere(x), torch.nonzero(x))
        assert all(torch.equal(a, b) for a, b in zip(torch.where(x.bool()), tup))
        cases.append({'input': k, 'nonzero': tensor(torch.nonzero(x)), 'tuple': [tensor(t) for t in tup]})
    value = {'torch_version': torch.__version__, 'inputs': [dict(tensor(x), dtype=str(x.dtype).replace('torch.', '')) for x in ins],
             'nonzero': cases, 'select': selects()}
    write_json(OUT, value)
    print(f'{len(cases)} nonzero cases, {len(value["select"])} selects')


if __name__ == '__main__':
    main()
