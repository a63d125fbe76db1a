#!/usr/bin/env python3
"""PyTorch's torch.nn activations and padding modules that om.nn composes of its ops (F.glu, F.prelu,
F.mish, F.softsign, F.tanhshrink, F.hardshrink, F.softshrink, F.selu, F.celu, F.logsigmoid, F.softmin; nn.ZeroPad2d, nn.ConstantPad1d/2d/3d,
nn.ReflectionPad1d/2d, nn.ReplicationPad1d/2d, nn.Unflatten), as a fixture for
tests/js/activations-padding.test.mjs.

Each case builds the module PyTorch's way (its constructor arguments in "args"; a PReLU's weight
is set from "weight"), runs it on a small float32 input (values on both sides of 0 and of the
shrink thresholds), and writes the input, the output and the gradient of sum(y * w), w a ramp of
y's shape (0.5, 1, 1.5, ...), or that it raises (the first line of its message).

Writes tests/js/fixtures/pytorch/ops/activations_padding.json:
  { "torch_version": ..., "cases": [ { "module", "args", "weight"?, "input": {"shape", "data"},
    "output": {"shape", "data"}, "grad": [...], "weight_grad"? } or { ..., "error" } ] }

Run with a python3 that imports torch (Debian's python3-torch, /usr/bin/python3); CI reads the
committed JSON and never runs this:
    /usr/bin/python3 tools/pytorch_activations_padding.py
"""
import json
import os

import torch
from torch import nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'pytorch', 'ops', 'activations_padding.json')

X = (torch.arange(24, dtype=torch.float32) * 0.25 - 2.875).reshape(2, 3, 4)  # -2.875 .. 2.875, no zero
CASES = [
    ('GLU', [], X), ('GLU', [1], X[:, :2]), ('GLU', [0], X), ('GLU', [1], X),
    ('PReLU', [], X), ('PReLU', [3, 0.1], X), ('PReLU', [4], X),
    ('Mish', [], X * 4), ('Softsign', [], X), ('Tanhshrink', [], X),
    ('Hardshrink', [], X), ('Hardshrink', [1.5], X), ('Softshrink', [], X), ('Softshrink', [1.0], X), ('Softshrink', [-1.0], X),
    ('ZeroPad2d', [1], X), ('ZeroPad2d', [[1, 0, 2, 1]], X), ('ConstantPad1d', [[2, 1], 3.5], X), ('ConstantPad2d', [1, -1.0], X),
    ('ConstantPad3d', [[1, 0, 0, 1, 1, 0], 2.0], X), ('ReflectionPad1d', [[3, 1]], X), ('ReflectionPad2d', [[1, 2, 2, 0]], X),
    ('ReplicationPad1d', [2], X), ('ReplicationPad2d', [[0, 3, 1, 2]], X),
    ('Unflatten', [2, [2, 2]], X), ('Unflatten', [-2, [3, 1]], X), ('Unflatten', [1, [-1, 1]], X),
    ('SELU', [], X * 2), ('CELU', [], X * 2), ('CELU', [0.5], X), ('CELU', [0.0], X), ('LogSigmoid', [], X * 8),
    ('Softmin', [1], X), ('Softmin', [-1], X * 3), ('Softmin', [0], X),
]


def flat(t):
    return [float(v) for v in t.reshape(-1).tolist()]


def backward_ramp(y):
    """Backpropagates sum(y * w), w a ramp of y's shape (0.5, 1, 1.5, ...): a gradient whose every
    element differs, so a gradient sent to the wrong place shows."""
    w = (torch.arange(y.numel(), dtype=torch.float32) * 0.5 + 0.5).reshape(y.shape)
    (y * w).sum().backward()


def write_cases(out, cases):
    """Writes {torch_version, cases} to out as compact JSON and a newline, and says so."""
    with open(out, 'w') as f:
        json.dump({'torch_version': torch.__version__, 'cases': cases}, f, indent=None, separators=(',', ':'))
        f.write('\n')
    print(f'wrote {out}: {len(cases)} cases')


def main():
    torch.set_num_threads(1)
    torch.manual_seed(0)
    cases = []
    for name, args, x in CASES:
        case = {'module': name, 'args': args, 'input': {'shape': list(x.shape), 'data': flat(x)}}
        try:
            m = getattr(nn, name)(*[tuple(a) if isinstance(a, list) and name != 'Unflatten' else a for a in args])
            if name == 'PReLU':
                with torch.no_grad():
                    m.weight.copy_(torch.linspace(-0.5, 1.5, m.weight.numel()))
                case['weight'] = flat(m.weight.detach())
            xg = x.clone().requires_grad_(True)
            y = m(xg)
        except (RuntimeError, ValueError, IndexError, TypeError) as e:
            case['error'] = str(e).split('\n')[0]
            cases.append(case)
            continue
        backward_ramp(y)
        case['output'] = {'shape': list(y.shape), 'data': flat(y.detach())}
        case['grad'] = flat(xg.grad)
        if name == 'PReLU':
            case['weight_grad'] = flat(m.weight.grad)
        cases.append(case)
    write_cases(OUT, cases)


if __name__ == '__main__':
    main()
