#!/usr/bin/env python3
"""PyTorch's values of div's rounding modes, floor_divide, the int64 shifts, addcmul, addcdiv,
lerp and the small functions ports call by name (xlogy, nan_to_num, count_nonzero, aminmax,
logcumsumexp, trunc, fix, sgn, fliplr, flipud, rot90, movedim, narrow_copy, tensor_split, hsplit,
vsplit, dsplit, diff, take_along_dim, index_fill, index_copy), as the fixture of tests/js/arith.test.mjs.

The operands hold what breaks a careless kernel: quotients just below an integer (where floor(a / b)
rounds up and PyTorch's floor division does not), -0.0, NaN, infinities, zero divisors of floats,
int64 values past 2^53 and near 2^62, negative operands of every sign pairing.

Writes tests/js/fixtures/pytorch/ops/arith.json:
  { "torch_version": ...,
    "cases": [ { "name", "op", "args": [operand...], "kwargs": {...}, "out": tensor or [tensor...] } or
               { ..., "error": "<first line of PyTorch's message>" } ] }
An operand is a tensor {"dtype", "shape", "data"}, a Python scalar {"scalar": v} or null (None). Non-finite floats
are the strings "NaN", "Infinity", "-Infinity"; -0.0 is "-0"; integers past 2^53 are decimal strings.

Run with a python3 that imports torch (Debian's python3-torch, /usr/bin/python3); CI reads the
committed JSON and never runs this:
    /usr/bin/python3 tools/pytorch_arith.py
"""
import json
import os

import torch

from pytorch_audit import value  # a JSON value: NaN, infinities, -0 and int64 past 2^53 as strings

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'pytorch', 'ops', 'arith.json')
DTYPES = {torch.float32: 'float32', torch.float64: 'float64', torch.int64: 'int64', torch.bool: 'bool'}


def enc(t):
    if t is None:  # an optional argument left out (diff's prepend): null
        return None
    if isinstance(t, torch.Tensor):
        return {'dtype': DTYPES[t.dtype], 'shape': list(t.shape), 'data': [value(v) for v in t.flatten().tolist()]}
    if isinstance(t, (tuple, list)):
        return [enc(x) for x in t]
    return {'scalar': value(t)}


cases = []


def case(name, op, fn, args, kwargs=None):
    kwargs = kwargs or {}
    c = {'name': name, 'op': op, 'args': [enc(a) for a in args], 'kwargs': kwargs}
    try:
        c['out'] = enc(fn(*args, **kwargs))
    except Exception as e:  # PyTorch's refusal: the test checks the library refuses too
        c['error'] = str(e).split('\n')[0]
    cases.append(c)


gen = torch.Generator().manual_seed(28)
# float operands: a grid of hand-picked values (as [n, 1] against [m]) and random pairs whose
# quotients sit near integers (b * k plus or minus an ulp or two)
fa = torch.tensor([-7.5, 7.5, -0.3, 0.3, 1e-30, 5.0, -5.0, float('nan'), float('inf'), -float('inf'), 0.0, -0.0, 1.0, 0.7, 6.0, -6.0]).reshape(-1, 1)
fb = torch.tensor([2.0, -2.0, 0.1, -0.1, 3.0, 0.0, -0.0, float('inf'), 0.7, -1.5])
k = torch.randint(-50, 50, (64,), generator=gen).float()
rb = (torch.rand(64, generator=gen) * 4 + 0.05) * torch.where(torch.rand(64, generator=gen) < 0.5, -1.0, 1.0)
ra = torch.nextafter(k * rb, torch.where(torch.rand(64, generator=gen) < 0.5, torch.tensor(-float('inf')), torch.tensor(float('inf'))))
for mode in ('trunc', 'floor'):
    case(f'div {mode} float grid', 'div', torch.div, [fa, fb], {'rounding_mode': mode})
    case(f'div {mode} float near integers', 'div', torch.div, [ra, rb], {'rounding_mode': mode})
    case(f'div {mode} float64', 'div', torch.div, [ra.double(), rb.double()], {'rounding_mode': mode})
ia = torch.tensor([-7, 7, -8, 8, 0, 1, -1, 2 ** 62 + 1, -(2 ** 62) - 3, 2 ** 53 + 1, 9223372036854775807, -9223372036854775807]).reshape(-1, 1)
ib = torch.tensor([2, -2, 3, -3, 1, -1, 7, 2 ** 31 + 5])
for mode in ('trunc', 'floor'):
    case(f'div {mode} int64', 'div', torch.div, [ia, ib], {'rounding_mode': mode})
    case(f'div {mode} int64 by an int', 'div', torch.div, [ia.flatten(), -3], {'rounding_mode': mode})
    case(f'div {mode} int64 by a float', 'div', torch.div, [ia.flatten()[:7], 2.5], {'rounding_mode': mode})
    case(f'div {mode} int64 and float32', 'div', torch.div, [ia.flatten()[:7], torch.tensor([1.5, -2.5, 0.25, 4.0, -3.0, 7.0, 0.5])], {'rounding_mode': mode})
    case(f'div {mode} int64 by zero', 'div', torch.div, [ia.flatten()[:3], torch.tensor([1, 0, 2])], {'rounding_mode': mode})
    case(f'div {mode} bool', 'div', torch.div, [torch.tensor([True, False]), torch.tensor([True, True])], {'rounding_mode': mode})
case('div true int64', 'div', torch.div, [ia.flatten()[:7], torch.tensor(2)])
case('floor_divide float', 'floor_divide', torch.floor_divide, [ra, rb])
case('floor_divide int64', 'floor_divide', torch.floor_divide, [ia, ib])
case('floor_divide int64 by a float', 'floor_divide', torch.floor_divide, [ia.flatten()[:7], -2.5])

sa = torch.tensor([-5, 5, -1, 1, 0, 2 ** 62 + 3, -(2 ** 62) - 7, 9223372036854775807, -9223372036854775807 - 1]).reshape(-1, 1)
sb = torch.tensor([0, 1, 3, 31, 32, 62, 63])
case('bitwise_left_shift', 'bitwise_left_shift', torch.bitwise_left_shift, [sa, sb])
case('bitwise_right_shift', 'bitwise_right_shift', torch.bitwise_right_shift, [sa, sb])
case('bitwise_left_shift by an int', 'bitwise_left_shift', torch.bitwise_left_shift, [sa.flatten(), 4])
case('bitwise_right_shift by an int', 'bitwise_right_shift', torch.bitwise_right_shift, [sa.flatten(), 4])
case('bitwise_left_shift of floats', 'bitwise_left_shift', torch.bitwise_left_shift, [torch.tensor([1.5]), torch.tensor([1.0])])

x = torch.randn(3, 4, generator=gen)
t1 = torch.randn(3, 4, generator=gen)
t2 = torch.randn(4, generator=gen)
case('addcmul', 'addcmul', torch.addcmul, [x, t1, t2])
case('addcmul value', 'addcmul', torch.addcmul, [x, t1, t2], {'value': 0.37})
case('addcmul int64', 'addcmul', torch.addcmul, [torch.tensor([1, 2]), torch.tensor([3, -4]), torch.tensor([5, 6])], {'value': 2})
case('addcdiv', 'addcdiv', torch.addcdiv, [x, t1, t2])
case('addcdiv value', 'addcdiv', torch.addcdiv, [x, t1, t2], {'value': -1.7})
case('addcdiv int64', 'addcdiv', torch.addcdiv, [torch.tensor([1, 2]), torch.tensor([3, -4]), torch.tensor([5, 6])])
end = torch.randn(3, 4, generator=gen) * 10
for w in (0.3, 0.5, 0.7, -0.2, 1.5):
    case(f'lerp {w}', 'lerp', torch.lerp, [x, end, w])
case('lerp tensor weight', 'lerp', torch.lerp, [x, end, torch.tensor([-0.6, 0.1, 0.49, 0.5])])
case('lerp int64', 'lerp', torch.lerp, [torch.tensor([1, 2]), torch.tensor([3, 4]), 0.5])

sp = torch.tensor([[0.0, 1.0, -0.0, 2.5], [0.0, float('nan'), 3.0, 0.5]])
yy = torch.tensor([[0.0, float('inf'), 2.0, float('nan')], [-1.0, 2.0, 0.0, 7.0]])
case('xlogy', 'xlogy', torch.xlogy, [sp, yy])
case('xlogy int64', 'xlogy', torch.xlogy, [torch.tensor([0, 2, 3]), torch.tensor([0, 4, 5])])
nn = torch.tensor([float('nan'), float('inf'), -float('inf'), 1.5, -0.0])
case('nan_to_num', 'nan_to_num', torch.nan_to_num, [nn])
case('nan_to_num values', 'nan_to_num', torch.nan_to_num, [nn], {'nan': 2.0, 'posinf': 9.0, 'neginf': -9.0})
case('nan_to_num int64', 'nan_to_num', torch.nan_to_num, [torch.tensor([1, -2])])
cz = torch.tensor([[0.0, 1.0, -0.0], [float('nan'), 0.0, 2.0]])
case('count_nonzero', 'count_nonzero', torch.count_nonzero, [cz])
case('count_nonzero dim', 'count_nonzero', torch.count_nonzero, [cz], {'dim': 1})
case('count_nonzero dims', 'count_nonzero', torch.count_nonzero, [cz], {'dim': (0, 1)})
am = torch.tensor([[3.0, -1.0, 2.0], [0.5, 7.0, -4.0]])
case('aminmax', 'aminmax', lambda t, **kw: tuple(torch.aminmax(t, **kw)), [am])
case('aminmax dim', 'aminmax', lambda t, **kw: tuple(torch.aminmax(t, **kw)), [am], {'dim': 1, 'keepdim': True})
case('aminmax empty', 'aminmax', lambda t, **kw: tuple(torch.aminmax(t, **kw)), [torch.zeros(0)])
case('logcumsumexp', 'logcumsumexp', torch.logcumsumexp, [torch.tensor([[1.0, 2.0, -3.0, 80.0], [-float('inf'), -float('inf'), 0.0, 1.0]]), 1])
case('logcumsumexp dim 0', 'logcumsumexp', torch.logcumsumexp, [am, 0])
tr = torch.tensor([-2.5, -0.5, -0.0, 0.5, 2.7, float('nan'), float('inf')])
case('trunc', 'trunc', torch.trunc, [tr])
case('fix', 'fix', torch.fix, [tr])
case('sgn', 'sgn', torch.sgn, [tr[~tr.isnan()]])  # NaN aside: the library's sign keeps NaN (docs/api.md)
g = torch.arange(24).reshape(2, 3, 4)
case('fliplr', 'fliplr', torch.fliplr, [g])
case('flipud', 'flipud', torch.flipud, [g])
case('fliplr 1-D', 'fliplr', torch.fliplr, [torch.arange(3)])
for kk in (-1, 0, 1, 2, 3, 5):
    case(f'rot90 {kk}', 'rot90', torch.rot90, [g, kk, [0, 2]])
case('rot90 default', 'rot90', torch.rot90, [g])
case('rot90 same dims', 'rot90', torch.rot90, [g, 1, [1, 1]])
case('movedim', 'movedim', torch.movedim, [g, 0, 2])
case('movedim lists', 'movedim', torch.movedim, [g, [0, 1], [2, 0]])
case('moveaxis', 'moveaxis', torch.moveaxis, [g, -1, 0])
case('narrow_copy', 'narrow_copy', torch.narrow_copy, [g, 2, 1, 2])
h = torch.arange(70).reshape(7, 10)
case('tensor_split sections', 'tensor_split', torch.tensor_split, [h, 3])
case('tensor_split sections dim 1', 'tensor_split', torch.tensor_split, [h, 4], {'dim': 1})
case('tensor_split indices', 'tensor_split', torch.tensor_split, [h, [1, 5, 3, 12]], {'dim': 1})
case('tensor_split negative indices', 'tensor_split', torch.tensor_split, [h, [-2, 6]])
case('hsplit', 'hsplit', torch.hsplit, [h, 2])
case('hsplit indices', 'hsplit', torch.hsplit, [h, [3, 6]])
case('hsplit not divisible', 'hsplit', torch.hsplit, [h, 3])
case('vsplit', 'vsplit', torch.vsplit, [torch.arange(24).reshape(6, 4), 3])
case('dsplit', 'dsplit', torch.dsplit, [g, [1, 3]])
case('dsplit 2-D', 'dsplit', torch.dsplit, [h, 2])

# more of torch's functions by name
case('linspace', 'linspace', torch.linspace, [-1.3, 2.9, 11])
case('linspace one', 'linspace', torch.linspace, [0.5, 9.0, 1])
case('linspace even', 'linspace', torch.linspace, [0.0, 0.1, 8])
case('eye', 'eye', torch.eye, [3, 4])
bi = torch.randn(2, 3, 4, generator=gen)
b1 = torch.randn(2, 3, 5, generator=gen)
b2 = torch.randn(2, 5, 4, generator=gen)
case('baddbmm', 'baddbmm', torch.baddbmm, [bi, b1, b2], {'beta': 0.5, 'alpha': 2.0})
case('baddbmm beta 0', 'baddbmm', torch.baddbmm, [torch.full((2, 3, 4), float('nan')), b1, b2], {'beta': 0.0})
case('mm', 'mm', torch.mm, [b1[0], b2[0]])
case('mv', 'mv', torch.mv, [b1[0], b2[0, :, 0]])
case('hstack', 'hstack', torch.hstack, [[torch.arange(6).reshape(2, 3), torch.arange(4).reshape(2, 2)]])
case('vstack', 'vstack', torch.vstack, [[torch.arange(3), torch.arange(6).reshape(2, 3)]])
fl = torch.tensor([-2.5, -0.3, 0.0, 0.7, 3.2, 10.0, float('inf'), float('nan')])
for name in ('exp2', 'log2', 'log10', 'reciprocal', 'frac', 'deg2rad', 'rad2deg'):
    case(name, name, getattr(torch, name), [fl])
case('reciprocal int64', 'reciprocal', torch.reciprocal, [torch.tensor([2, -4, 0])])
case('clamp_min', 'clamp_min', torch.clamp_min, [fl, 0.5])
case('clamp_max', 'clamp_max', torch.clamp_max, [fl, 0.5])
h1 = torch.tensor([3.0, 0.0, -5.0, 1e30, float('inf'), float('nan'), 1e-30])
h2 = torch.tensor([4.0, 0.0, 12.0, 1e30, float('nan'), 2.0, 1e-30])
case('hypot', 'hypot', torch.hypot, [h1, h2])
case('logaddexp', 'logaddexp', torch.logaddexp, [torch.tensor([0.0, 100.0, -float('inf'), float('inf'), -3.0]), torch.tensor([0.0, 99.0, -float('inf'), float('inf'), 5.0])])
case('fmax', 'fmax', torch.fmax, [h1, h2])
case('fmin', 'fmin', torch.fmin, [h1, h2])
ca = torch.tensor([1.0, 1.0, float('inf'), float('nan'), 1e-9, 100.0])
cb = torch.tensor([1.0 + 1e-6, 1.1, float('inf'), float('nan'), 0.0, 100.001])
case('isclose', 'isclose', torch.isclose, [ca, cb])
case('isclose equal_nan', 'isclose', torch.isclose, [ca, cb], {'rtol': 1e-3, 'atol': 0.0, 'equal_nan': True})
case('logit', 'logit', torch.logit, [torch.tensor([0.0, 0.25, 0.5, 0.9, 1.0])])
case('logit eps', 'logit', torch.logit, [torch.tensor([0.0, 0.25, 0.5, 0.9, 1.0]), 0.1])
nanx = torch.tensor([[1.0, float('nan'), 3.0], [float('nan'), float('nan'), 2.5]])
case('nansum', 'nansum', torch.nansum, [nanx])
case('nansum dim', 'nansum', torch.nansum, [nanx, 1])
case('nanmean dim', 'nanmean', torch.nanmean, [nanx, 1])
case('trace', 'trace', torch.trace, [torch.arange(12.0).reshape(3, 4)])

# diff: orders past the size (empty), prepend and append, bool (logical_xor), int64, dims
df = torch.tensor([[1.0, 4.0, 9.0, 16.0, 25.0], [2.0, -1.0, 0.5, float('inf'), 3.0]])
case('diff', 'diff', torch.diff, [df])
case('diff n 2 dim 0', 'diff', torch.diff, [torch.arange(24.0).reshape(2, 3, 4) ** 2, 1, 0])
case('diff n 3', 'diff', torch.diff, [df, 3])
case('diff n past the size', 'diff', torch.diff, [df, 7])
case('diff n 0', 'diff', torch.diff, [df, 0])
case('diff prepend append', 'diff', torch.diff, [df, 2, -1, torch.tensor([[0.5], [1.5]]), torch.tensor([[7.0, 8.0], [9.0, 10.0]])])
case('diff append dim 0', 'diff', torch.diff, [df, 1, 0, None, torch.tensor([[1.0, 1.0, 1.0, 1.0, 1.0]])])
case('diff bool', 'diff', torch.diff, [torch.tensor([[True, False, False, True], [True, True, False, False]]), 2])
case('diff int64', 'diff', torch.diff, [torch.tensor([2 ** 62, -(2 ** 62), 7, 2 ** 53 + 1]), 2])
case('diff 0-d', 'diff', torch.diff, [torch.tensor(2.0)])
case('diff prepend of fewer dims', 'diff', torch.diff, [df, 1, -1, torch.tensor([1.0])])
# take_along_dim: broadcasting off dim both ways, the flattened form, argsort's use
ta = torch.randn(3, 4, generator=gen)
case('take_along_dim argsort', 'take_along_dim', torch.take_along_dim, [ta, ta.argsort(1), 1])
case('take_along_dim broadcast', 'take_along_dim', torch.take_along_dim, [ta.reshape(3, 1, 4), torch.tensor([[[0], [3]]]), 2])
case('take_along_dim input broadcast', 'take_along_dim', torch.take_along_dim, [ta[:, :1], torch.tensor([[2, 0, 1, 1], [0, 1, 1, 2]]), 0])
case('take_along_dim flattened', 'take_along_dim', torch.take_along_dim, [ta, torch.tensor([[11, 0], [5, 5]])])
case('take_along_dim negative dim', 'take_along_dim', torch.take_along_dim, [torch.arange(12).reshape(2, 3, 2), torch.tensor([[[1], [0], [1]]]), -1])
case('take_along_dim rank', 'take_along_dim', torch.take_along_dim, [ta, torch.tensor([0, 1]), 1])
case('take_along_dim float indices', 'take_along_dim', torch.take_along_dim, [ta, torch.tensor([[0.0]]), 1])
case('take_along_dim out of range', 'take_along_dim', torch.take_along_dim, [ta, torch.tensor([[4]]), 1])

# index_fill (negative indices count from the end; a 0-d value tensor; int64 truncates a float
# value) and index_copy (-0.0 and NaN copied as they are)
xf = torch.arange(24.0).reshape(2, 3, 4) - 11.5
case('index_fill', 'index_fill', torch.Tensor.index_fill, [xf, 1, torch.tensor([2, -3]), -7.25])
case('index_fill last dim', 'index_fill', torch.Tensor.index_fill, [xf, -1, torch.tensor(3), float('nan')])
case('index_fill value tensor', 'index_fill', torch.Tensor.index_fill, [xf, 0, torch.tensor([1]), torch.tensor(0.5)])
case('index_fill int64', 'index_fill', torch.Tensor.index_fill, [torch.arange(6).reshape(2, 3), 1, torch.tensor([0, 2]), 2.5])
case('index_fill bool', 'index_fill', torch.Tensor.index_fill, [torch.zeros(2, 3, dtype=torch.bool), 0, torch.tensor([1]), True])
case('index_fill out of range', 'index_fill', torch.Tensor.index_fill, [xf, 1, torch.tensor([3]), 1.0])
case('index_fill 2-D index', 'index_fill', torch.Tensor.index_fill, [xf, 1, torch.tensor([[0]]), 1.0])
case('index_fill 1-D value', 'index_fill', torch.Tensor.index_fill, [xf, 1, torch.tensor([0]), torch.tensor([1.0])])
src = torch.tensor([[-0.0, float('nan'), 3.5, 1e30], [-1.0, -2.0, -3.0, -4.0]]).reshape(2, 1, 4).expand(2, 2, 4).contiguous()
case('index_copy', 'index_copy', torch.Tensor.index_copy, [xf, 1, torch.tensor([2, 0]), src])
case('index_copy dim 0', 'index_copy', torch.Tensor.index_copy, [xf, 0, torch.tensor([1]), src[:1, :1].expand(1, 3, 4).contiguous()])
case('index_copy int64', 'index_copy', torch.Tensor.index_copy, [torch.arange(6).reshape(2, 3), -1, torch.tensor([1]), torch.tensor([[2 ** 60], [-5]])])
case('index_copy negative index', 'index_copy', torch.Tensor.index_copy, [xf, 1, torch.tensor([-1, 0]), src])
case('index_copy dtypes', 'index_copy', torch.Tensor.index_copy, [xf, 1, torch.tensor([2, 0]), src.long()])
case('index_copy slice shapes', 'index_copy', torch.Tensor.index_copy, [xf, 1, torch.tensor([2, 0]), src[:, :, :3].contiguous()])
case('index_copy float index', 'index_copy', torch.Tensor.index_copy, [xf, 1, torch.tensor([2.0, 0.0]), src])

os.makedirs(os.path.dirname(OUT), exist_ok=True)
with open(OUT, 'w') as f:
    json.dump({'torch_version': torch.__version__, 'cases': cases}, f, separators=(',', ':'))
    f.write('\n')
print(f'{len(cases)} cases -> {os.path.relpath(OUT)}')
