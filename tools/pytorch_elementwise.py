#!/usr/bin/env python3
"""PyTorch's type promotion and elementwise values, as a fixture for tests/js/elementwise.test.mjs.

For every binary elementwise op the library has (add, sub, mul, div, pow, atan2, minimum,
maximum, fmod, remainder, the comparisons, the logical and bitwise ops) and every pair of a
first operand that is a tensor (float32, int64, bool) and a second that is a tensor of those
dtypes or a Python scalar (float, int, bool), and for torch.where with each kind of branch
(tensors and scalars, both scalars too), writes what PyTorch gives: the result's dtype and
values, or that it raises (and the start of its message). Ops that take no Python scalar
(torch.minimum(t, 2.5) is a TypeError) get the scalar as a 0-d tensor, which promotes alike
among these three dtypes. Integer mod by zero (PyTorch raises ZeroDivisionError; the library
gives 0, docs/api.md) is left out: an int64 fmod or remainder by the bool tensor.

And the trigonometric and hyperbolic functions, log1p and expm1 on float32 values (large arguments
of sin, cos and tan too, tiny ones, and values outside asin's, acosh's, atanh's and log1p's domains)
and on int64 ones.

Writes tests/js/fixtures/pytorch/ops/elementwise.json:
  { "torch_version": ..., "operands": { "<kind>": {"dtype", "data"} or {"scalar"} },
    "cases": [ { "op", "a", "b" (operand kinds; where: "cond", "a", "b"), "dtype", "data" } or
               { "op", "a", "b", "error": "<first line of PyTorch's message>" } ],
    "unary": [ { "op", "input": {"dtype", "data"}, "dtype", "data" } ] }
Non-finite floats are the strings "NaN", "Infinity", "-Infinity".

Run with a python3 that imports torch (Debian's python3-torch, /usr/bin/python3); CI reads the
committed JSON and never runs this:
    /usr/bin/python3 tools/pytorch_elementwise.py
"""
import json
import math
import os

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'pytorch', 'ops', 'elementwise.json')

TENSORS = {
    'float32': torch.tensor([-2.5, -1.0, 0.5, 1.5, 3.0]),
    'int64': torch.tensor([-3, -1, 4, 2, 5]),
    'bool': torch.tensor([True, False, True, True, False]),
}
SCALARS = {'py_float': 2.5, 'py_int': 2, 'py_bool': True}

BINARY = {
    'add': torch.add, 'sub': torch.sub, 'mul': torch.mul, 'div': torch.div, 'pow': torch.pow,
    'atan2': torch.atan2, 'minimum': torch.minimum, 'maximum': torch.maximum, 'fmod': torch.fmod,
    'remainder': torch.remainder, 'eq': torch.eq, 'ne': torch.ne, 'lt': torch.lt, 'le': torch.le,
    'gt': torch.gt, 'ge': torch.ge, 'logical_and': torch.logical_and, 'logical_or': torch.logical_or,
    'logical_xor': torch.logical_xor, 'bitwise_and': torch.bitwise_and, 'bitwise_or': torch.bitwise_or,
    'bitwise_xor': torch.bitwise_xor,
}


def value(x):
    if isinstance(x, bool):
        return x
    if isinstance(x, int):
        return x
    if math.isnan(x):
        return 'NaN'
    if math.isinf(x):
        return 'Infinity' if x > 0 else '-Infinity'
    return x


def operand(kind):
    return TENSORS[kind] if kind in TENSORS else SCALARS[kind]


def run(fn, *args):
    try:
        r = fn(*args)
    except (RuntimeError, TypeError, ZeroDivisionError) as e:
        return {'error': str(e).split('\n')[0]}
    return {'dtype': str(r.dtype).replace('torch.', ''), 'data': [value(v) for v in r.tolist()]}


def call(fn, a, b):
    out = run(fn, a, b)
    if 'error' in out and not isinstance(b, torch.Tensor) and out['error'].startswith(fn.__name__ + '()'):
        out = run(fn, a, torch.tensor(b))  # the op takes no Python scalar: a 0-d tensor instead
    return out


UNARY = ['sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'sinh', 'cosh', 'asinh', 'acosh', 'atanh', 'log1p', 'expm1']
UNARY_INPUTS = [
    torch.tensor([-12345.678, -100.0, -3.0, -1.0, -0.5, -0.0, 0.0, 1e-20, 0.25, 0.9, 1.0, 1.5, 2.0, 10.0, 88.0, 1000.0, 3.0e5, 1.0e30]),
    torch.tensor([-3, -1, 0, 1, 2, 7]),
]


def tensor_json(t):
    return {'dtype': str(t.dtype).replace('torch.', ''), 'data': [value(v) for v in t.tolist()]}


def main():
    torch.set_num_threads(1)
    cases = []
    kinds = list(TENSORS) + list(SCALARS)
    for op, fn in BINARY.items():
        for a in TENSORS:
            for b in kinds:
                out = call(fn, operand(a), operand(b))
                if out.get('error') != 'ZeroDivisionError':
                    cases.append({'op': op, 'a': a, 'b': b, **out})
    cond = torch.tensor([True, False, False, True, True])
    for a in kinds:
        for b in kinds:
            cases.append({'op': 'where', 'cond': 'bool', 'a': a, 'b': b, **run(torch.where, cond, operand(a), operand(b))})
    unary = [{'op': op, 'input': tensor_json(x), **run(getattr(torch, op), x)} for op in UNARY for x in UNARY_INPUTS]
    operands = {k: tensor_json(t) for k, t in TENSORS.items()}
    operands.update({k: {'scalar': v} for k, v in SCALARS.items()})
    operands['cond'] = {'dtype': 'bool', 'data': cond.tolist()}
    with open(OUT, 'w') as f:
        json.dump({'torch_version': torch.__version__, 'operands': operands, 'cases': cases, 'unary': unary}, f, indent=None, separators=(',', ':'))
        f.write('\n')
    print(f'wrote {OUT}: {len(cases)} cases')


if __name__ == '__main__':
    main()
