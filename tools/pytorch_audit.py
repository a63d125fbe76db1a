#!/usr/bin/env python3
"""An audit of the library against PyTorch with operands and modules the other fixtures do not use,
as the fixture of tests/js/audit-promotion.test.mjs, audit-ops.test.mjs and audit-state-dict.test.mjs.

Promotion: every binary op the JS API has, its in-place form where it has one, torch.where with
tensor and scalar branches, masked_fill and clamp, on every pair of a tensor (float32, int64,
bool; with dims or 0-d) and a tensor or Python scalar (bool, int, a negative int, float). The
operands hold what breaks a careless kernel: -0.0, NaN, infinities, int64 values near 2^62 (whose
products and sums wrap), zeros as divisors. Each case is what PyTorch gives (dtype, values) or the
first line of what it raises.

Values: reductions, softmax, cumulative ops, sorting and rearranging ops on odd shapes, empty
tensors, size-1 dims, negative dims and non-contiguous inputs (a transpose, a strided slice).

State dicts: the keys, shapes and dtypes of each module configuration in MODULES (the options
PyTorch users turn off or on: affine, track_running_stats, bias, bidirectional, num_layers,
padding_idx, ...), and the messages of load_state_dict for missing, unexpected and mis-shaped keys.

Writes tests/js/fixtures/pytorch/ops/audit.json:
  { "torch_version": ..., "operands": { "<kind>": {"dtype", "shape", "data"} or {"scalar"} },
    "promotion": [ { "op", "a", "b", ("c"), "dtype", "shape", "data" } or { ..., "error" } ],
    "values": [ { "op", "args", "input": {"dtype", "shape", "data", "layout"}, "outputs": [...] } or { ..., "error" } ],
    "modules": [ { "name", "keys": [[key, shape, dtype]] } ],
    "load_messages": { "<case>": "<PyTorch's message>" },
    "mha_kv": { "state": { key: tensor }, "inputs": [q, k, v], "outputs": [output, weights] } }
Non-finite floats are the strings "NaN", "Infinity", "-Infinity"; -0.0 is "-0"; integers past 2^53
are decimal strings.

Run with a python3 that imports torch (Debian's python3-torch, /usr/bin/python3); CI reads the
committed JSON and never runs this:
    /usr/bin/python3 tools/pytorch_audit.py
"""
import json
import math
import os

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'pytorch', 'ops', 'audit.json')

BIG = 2 ** 62 + 7
TENSORS = {
    'f': torch.tensor([-0.0, 7.25, float('nan'), -3.0, float('inf'), 0.0]),
    'i': torch.tensor([0, -7, BIG, 3, -BIG, 1]),
    'b': torch.tensor([False, True, True, False, True, False]),
    'f0': torch.tensor(-2.75),
    'i0': torch.tensor(-5),
    'b0': torch.tensor(True),
}
SCALARS = {'py_bool': True, 'py_int': 3, 'py_negint': -4, 'py_float': -1.5}

BINARY = {
    'add': lambda a, b: torch.add(a, b), 'sub': lambda a, b: torch.sub(a, b), 'mul': lambda a, b: torch.mul(a, b),
    'div': lambda a, b: torch.div(a, b), 'pow': lambda a, b: torch.pow(a, b),
    'atan2': torch.atan2, 'minimum': torch.minimum, 'maximum': torch.maximum, 'fmod': torch.fmod,
    'remainder': torch.remainder, 'eq': torch.eq, 'ne': torch.ne, 'lt': torch.lt, 'le': torch.le,
    'gt': torch.gt, 'ge': torch.ge, 'logical_and': torch.logical_and, 'logical_or': torch.logical_or,
    'logical_xor': torch.logical_xor, 'bitwise_and': torch.bitwise_and, 'bitwise_or': torch.bitwise_or,
    'bitwise_xor': torch.bitwise_xor,
}
# the in-place forms the JS API has (Tensor.add_, ...): the result written into a clone of a
INPLACE = ['add', 'sub', 'mul', 'div', 'logical_and', 'logical_or', 'logical_xor', 'bitwise_and', 'bitwise_or', 'bitwise_xor']


def value(x):
    if isinstance(x, bool):
        return x
    if isinstance(x, int):
        return x if abs(x) <= 2 ** 53 else str(x)  # a string past 2^53, which JSON's doubles would round
    if math.isnan(x):
        return 'NaN'
    if math.isinf(x):
        return 'Infinity' if x > 0 else '-Infinity'
    if x == 0 and math.copysign(1, x) < 0:
        return '-0'
    return x


def tensor_json(t):
    t = t.detach()
    return {'dtype': str(t.dtype).replace('torch.', ''), 'shape': list(t.shape), 'data': [value(v) for v in t.reshape(-1).tolist()]}


def operand(kind):
    return TENSORS[kind].clone() if kind in TENSORS else SCALARS[kind]


def run(fn, *args):
    try:
        r = fn(*args)
    except (RuntimeError, TypeError, ZeroDivisionError) as e:
        return {'error': str(e).split('\n')[0]}
    return tensor_json(r)


def scalar_as_tensor(fn):
    """torch.minimum(t, 2.5) and the like take no Python scalar: a 0-d tensor of its kind instead."""
    def call(a, b):
        try:
            return fn(a, b)
        except TypeError:
            if isinstance(b, torch.Tensor):
                raise
            return fn(a, torch.tensor(b))
    return call


def promotion_cases():
    cases = []
    kinds = list(TENSORS) + list(SCALARS)
    for op, fn in BINARY.items():
        for a in ['f', 'i', 'b']:
            for b in kinds:
                cases.append({'op': op, 'a': a, 'b': b, **run(scalar_as_tensor(fn), operand(a), operand(b))})
    for op in INPLACE:
        for a in ['f', 'i', 'b']:
            for b in kinds:
                fn = getattr(torch.Tensor, op + '_')
                cases.append({'op': op + '_', 'a': a, 'b': b, **run(scalar_as_tensor(fn), operand(a), operand(b))})
    cond = torch.tensor([True, False, True, False, False, True])
    for a in kinds:
        for b in kinds:
            cases.append({'op': 'where', 'a': a, 'b': b, **run(torch.where, cond, operand(a), operand(b))})
    for a in ['f', 'i', 'b']:
        for b in ['py_bool', 'py_int', 'py_negint', 'py_float', 'f0', 'i0', 'b0']:
            cases.append({'op': 'masked_fill', 'a': a, 'b': b, **run(lambda x, v: x.masked_fill(cond, v), operand(a), operand(b))})
        for lo, hi in [('py_negint', 'py_int'), ('py_float', None), (None, 'py_float'), ('py_negint', None), (None, 'py_int'),
                       ('f0', 'i'), ('i', None), (None, 'b0'), ('i0', 'f'), ('b', 'i0')]:
            lo_v = None if lo is None else operand(lo)
            hi_v = None if hi is None else operand(hi)
            cases.append({'op': 'clamp', 'a': a, 'b': lo, 'c': hi, **run(lambda x: torch.clamp(x, lo_v, hi_v), operand(a))})
    return cases


# values: (op, args, input spec). The input is made from `data` (row-major, of `shape`), then
# laid out: 'T' transposes the last two dims (a non-contiguous view), 'step' takes every other
# element of dim 0 of a tensor twice as long (a strided slice), 'contiguous' leaves it.
def make_input(spec):
    """Element k of the base tensor (row-major) is ((7k + seed) mod 37 - 18) / 4 (float32), that
    less the division (int64) or whether it is a multiple of 3 (bool): distinct within 37
    elements, so sorting has no ties, and the test makes the same tensor without PyTorch."""
    shape = list(spec['shape'])
    layout = spec['layout']
    base = list(shape)
    if layout == 'T':
        base[-1], base[-2] = base[-2], base[-1]
    if layout == 'step':
        base[0] = base[0] * 2
    k = torch.arange(math.prod(base))
    raw = (k * 7 + spec['seed']) % 37 - 18
    full = {'float32': raw.to(torch.float32) / 4, 'int64': raw, 'bool': raw % 3 == 0}[spec['dtype']].reshape(base)
    return full.transpose(-1, -2) if layout == 'T' else full[::2] if layout == 'step' else full


VALUES = []


def case(op, shape, layout='contiguous', dtype='float32', seed=1, **args):
    VALUES.append({'op': op, 'args': args, 'input': {'dtype': dtype, 'shape': shape, 'layout': layout, 'seed': seed}})


for layout in ['contiguous', 'T', 'step']:
    for shape in [[3, 5], [2, 1, 3], [0, 3]]:
        for dim in [-1, 0]:
            case('sum', shape, layout, dim=dim, keepdim=dim == 0)
            case('mean', shape, layout, dim=dim)
            case('amax', shape, layout, dim=dim)
            case('argmax', shape, layout, dim=dim)
            case('prod', shape, layout, dim=dim)
            case('cumsum', shape, layout, dim=dim)
            case('cumprod', shape, layout, dim=dim)
            case('softmax', shape, layout, dim=dim)
            case('log_softmax', shape, layout, dim=dim)
            case('logsumexp', shape, layout, dim=dim)
            case('var', shape, layout, dim=dim)
            case('std', shape, layout, dim=dim, correction=0)
            case('flip', shape, layout, dims=[dim])
            case('roll', shape, layout, shifts=-4, dims=dim)
            case('sort', shape, layout, dim=dim, descending=dim == 0)
            case('cumsum', shape, layout, 'int64', dim=dim)
            case('sum', shape, layout, 'bool', dim=dim)
        case('sum', shape, layout)
        case('amin', shape, layout, dim=[0, -1])
        case('tril', shape, layout, diagonal=-1) if len(shape) >= 2 else None
        case('triu', shape, layout, diagonal=1) if len(shape) >= 2 else None
        case('flatten', shape, layout, start_dim=-2)
        case('all', shape, layout, 'bool', dim=-1)
        case('any', shape, layout, 'bool', dim=0)
        case('topk', shape, layout, k=1, dim=-1)
        case('max', shape, layout, 'int64', dim=-1)
        case('abs', shape, layout, 'int64')
        case('clone', shape, layout, 'bool')
# bad arguments: dims past the end
case('sum', [3, 5], dim=2)
case('cumsum', [3, 5], dim=-3)
case('softmax', [2, 1, 3], dim=3)
case('topk', [3, 5], k=6, dim=-1)
case('flip', [3, 5], dims=[0, 0])
case('roll', [3, 5], shifts=[1, 2], dims=[0])
case('prod', [3, 5], dim=-3)
case('argmax', [0, 3], dim=0)


def call_value(c, x):
    a = c['args']
    op = c['op']
    if op in ('sum', 'mean', 'amax', 'amin', 'prod', 'logsumexp', 'all', 'any', 'argmax'):
        if 'dim' not in a:
            return [getattr(torch, op)(x)]
        return [getattr(torch, op)(x, **a)]
    if op in ('cumsum', 'cumprod', 'softmax', 'log_softmax', 'var', 'std', 'flip', 'roll', 'tril', 'triu', 'flatten', 'abs', 'clone'):
        return [getattr(torch, op)(x, **a)]
    if op in ('sort', 'topk', 'max'):
        r = getattr(torch, op)(x, **a)
        return [r.values, r.indices]
    raise ValueError(op)


def values_cases():
    out = []
    for c in VALUES:
        x = make_input(c['input'])
        try:
            ys = call_value(c, x)
        except (RuntimeError, IndexError, TypeError) as e:
            out.append({**c, 'error': str(e).split('\n')[0]})
            continue
        out.append({**c, 'outputs': [tensor_json(y) for y in ys]})
    return out


# modules: a name the test maps to the JS constructor, and the PyTorch module
nn = torch.nn
MODULES = {
    'Linear(3,4)': lambda: nn.Linear(3, 4),
    'Linear(3,4,bias=False)': lambda: nn.Linear(3, 4, bias=False),
    'Conv1d(2,4,3,bias=False)': lambda: nn.Conv1d(2, 4, 3, bias=False),
    'Conv2d(4,6,3,groups=2,bias=False)': lambda: nn.Conv2d(4, 6, 3, groups=2, bias=False),
    'ConvTranspose2d(4,6,3,groups=2)': lambda: nn.ConvTranspose2d(4, 6, 3, groups=2),
    'BatchNorm1d(5)': lambda: nn.BatchNorm1d(5),
    'BatchNorm2d(5,affine=False)': lambda: nn.BatchNorm2d(5, affine=False),
    'BatchNorm2d(5,track_running_stats=False)': lambda: nn.BatchNorm2d(5, track_running_stats=False),
    'BatchNorm2d(5,affine=False,track_running_stats=False)': lambda: nn.BatchNorm2d(5, affine=False, track_running_stats=False),
    'LayerNorm([3,4])': lambda: nn.LayerNorm([3, 4]),
    'LayerNorm(4,elementwise_affine=False)': lambda: nn.LayerNorm(4, elementwise_affine=False),
    'GroupNorm(2,6,affine=False)': lambda: nn.GroupNorm(2, 6, affine=False),
    'InstanceNorm2d(3,affine=True)': lambda: nn.InstanceNorm2d(3, affine=True),
    'InstanceNorm1d(3)': lambda: nn.InstanceNorm1d(3),
    'Embedding(7,3,padding_idx=2)': lambda: nn.Embedding(7, 3, padding_idx=2),
    'LSTM(3,5,num_layers=2,bidirectional=True)': lambda: nn.LSTM(3, 5, num_layers=2, bidirectional=True),
    'LSTM(3,5,bias=False,batch_first=True)': lambda: nn.LSTM(3, 5, bias=False, batch_first=True),
    'LSTM(3,5,proj_size=2)': lambda: nn.LSTM(3, 5, proj_size=2),
    'GRU(3,4,num_layers=3)': lambda: nn.GRU(3, 4, num_layers=3),
    'GRU(3,4,bidirectional=True,bias=False)': lambda: nn.GRU(3, 4, bidirectional=True, bias=False),
    'MultiheadAttention(8,2)': lambda: nn.MultiheadAttention(8, 2),
    'MultiheadAttention(8,2,bias=False)': lambda: nn.MultiheadAttention(8, 2, bias=False),
    'MultiheadAttention(8,2,kdim=3,vdim=5)': lambda: nn.MultiheadAttention(8, 2, kdim=3, vdim=5),
    'MultiheadAttention(8,2,add_bias_kv=True)': lambda: nn.MultiheadAttention(8, 2, add_bias_kv=True),
    'TransformerEncoderLayer(8,2,16)': lambda: nn.TransformerEncoderLayer(8, 2, 16),
    'TransformerEncoderLayer(8,2,16,norm_first=True,batch_first=True)': lambda: nn.TransformerEncoderLayer(8, 2, 16, norm_first=True, batch_first=True),
    'PReLU(3)': lambda: nn.PReLU(3),
    'Sequential(Linear,ReLU,BatchNorm1d)': lambda: nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.BatchNorm1d(4)),
    'ModuleDict(a=Linear,b=Conv1d)': lambda: nn.ModuleDict({'b': nn.Conv1d(2, 2, 1), 'a': nn.Linear(2, 2)}),
    'ParameterList(2)': lambda: nn.ParameterList([nn.Parameter(torch.zeros(2)), nn.Parameter(torch.zeros(1, 3))]),
}


def module_cases():
    out = []
    for name, make in MODULES.items():
        try:
            m = make()
        except (TypeError, ValueError, RuntimeError) as e:
            out.append({'name': name, 'error': str(e).split('\n')[0]})
            continue
        sd = m.state_dict()
        out.append({'name': name, 'keys': [[k, list(v.shape), str(v.dtype).replace('torch.', '')] for k, v in sd.items()]})
    return out


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.bn = nn.BatchNorm1d(2)


def load_messages():
    def msg(sd, strict=True):
        try:
            r = Net().load_state_dict(sd, strict=strict)
            return {'missing_keys': r.missing_keys, 'unexpected_keys': r.unexpected_keys}
        except RuntimeError as e:
            return str(e)
    full = Net().state_dict()
    missing = {k: v for k, v in full.items() if k not in ('fc.bias', 'bn.running_var')}
    unexpected = {**full, 'fc.scale': torch.zeros(2), 'head.weight': torch.zeros(1)}
    both = {**missing, 'fc.scale': torch.zeros(2)}
    shape = {**full, 'fc.weight': torch.zeros(3, 2)}
    shape_and_missing = {k: v for k, v in shape.items() if k != 'bn.weight'}
    return {
        'missing': msg(missing), 'unexpected': msg(unexpected), 'both': msg(both), 'shape': msg(shape),
        'shape_and_missing': msg(shape_and_missing), 'both_not_strict': msg(both, strict=False),
        'shape_not_strict': msg(shape, strict=False),
    }


def mha_forward():
    """MultiheadAttention(4, 2, kdim=3, vdim=5) on a query [2, 1, 4], key [3, 1, 3], value [3, 1, 5]
    (cross-attention from other feature sizes): its state dict, the inputs and both outputs."""
    torch.manual_seed(28)
    m = nn.MultiheadAttention(4, 2, kdim=3, vdim=5)
    with torch.no_grad():
        m.in_proj_bias.uniform_(-0.5, 0.5)
        m.out_proj.bias.uniform_(-0.5, 0.5)
    q, k, v = torch.randn(2, 1, 4), torch.randn(3, 1, 3), torch.randn(3, 1, 5)
    out, w = m(q, k, v)
    return {'state': {n: tensor_json(t) for n, t in m.state_dict().items()}, 'inputs': [tensor_json(t) for t in (q, k, v)],
            'outputs': [tensor_json(out), tensor_json(w)]}


def main():
    torch.set_num_threads(1)
    operands = {k: tensor_json(t) for k, t in TENSORS.items()}
    operands.update({k: {'scalar': v} for k, v in SCALARS.items()})
    promo = promotion_cases()
    vals = values_cases()
    mods = module_cases()
    with open(OUT, 'w') as f:
        json.dump({'torch_version': torch.__version__, 'operands': operands, 'promotion': promo, 'values': vals,
                   'modules': mods, 'load_messages': load_messages(), 'mha_kv': mha_forward()}, f, indent=None, separators=(',', ':'))
        f.write('\n')
    print(f'wrote {OUT}: {len(promo)} promotion cases, {len(vals)} value cases, {len(mods)} modules')


if __name__ == '__main__':
    main()
