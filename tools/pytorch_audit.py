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

Also writes tests/js/fixtures/pytorch/ops/audit-ops28.json, for tests/js/audit-ops28.test.mjs: the
ops of issue 28's list (OPS28) with the arguments ports use and tests rarely do:
  { "torch_version": ..., "cases": [ { "op", "inputs": [tensor], "args", "outputs": [tensor] } or
    { ..., "error" } ] }

Run with a python3 that imports torch (Debian's python3-torch, /usr/bin/python3); CI reads the
committed JSON and never runs this:
    /usr/bin/python3 tools/pytorch_audit.py
"""
import json
import math
import os

from collections import OrderedDict

import torch
from torchvision.models.convnext import LayerNorm2d
from torchvision.ops import MLP, Conv2dNormActivation, Permute, SqueezeExcitation, StochasticDepth

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'pytorch', 'ops', 'audit.json')
OUT28 = os.path.join(os.path.dirname(OUT), 'audit-ops28.json')

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
    'ParameterDict(b,a)': lambda: nn.ParameterDict({'b': nn.Parameter(torch.zeros(2)), 'a': nn.Parameter(torch.zeros(1, 3))}),
    'Sequential(OrderedDict(conv,act,norm))': lambda: nn.Sequential(OrderedDict([('conv', nn.Conv2d(3, 4, 1)), ('act', nn.ReLU()),
                                                                                  ('norm', nn.BatchNorm2d(4))])),
    'Sequential(OrderedDict(denseblock1=Sequential(OrderedDict(denselayer1,denselayer2)),norm5))': lambda: nn.Sequential(OrderedDict([
        ('denseblock1', nn.Sequential(OrderedDict([('denselayer1', nn.Conv2d(2, 2, 1)), ('denselayer2', nn.Conv2d(2, 2, 1))]))),
        ('norm5', nn.BatchNorm2d(2))])),
    'ModuleDict(stages=ModuleList,params=ParameterList)': lambda: nn.ModuleDict({
        'stages': nn.ModuleList([nn.Linear(2, 2), nn.LayerNorm(2)]), 'params': nn.ParameterList([nn.Parameter(torch.zeros(3))])}),
    'Net2': lambda: Net2(),
    'Conv2dNormActivation(3,8,3)': lambda: Conv2dNormActivation(3, 8, 3),
    'Conv2dNormActivation(3,8,3,norm_layer=None)': lambda: Conv2dNormActivation(3, 8, 3, norm_layer=None),
    'Conv2dNormActivation(3,8,3,bias=True)': lambda: Conv2dNormActivation(3, 8, 3, bias=True),
    'Conv2dNormActivation(3,8,1,norm_layer=LayerNorm2d,activation_layer=None)': lambda: Conv2dNormActivation(
        3, 8, 1, norm_layer=LayerNorm2d, activation_layer=None),
    'SqueezeExcitation(8,4)': lambda: SqueezeExcitation(8, 4),
    'StochasticDepth(0.2,row)': lambda: StochasticDepth(0.2, 'row'),
    'Permute([0,2,3,1])': lambda: Permute([0, 2, 3, 1]),
    'MLP(6,[10,5])': lambda: MLP(6, [10, 5]),
    'MLP(6,[10,5],norm_layer=LayerNorm,bias=False,dropout=0.1)': lambda: MLP(6, [10, 5], norm_layer=nn.LayerNorm, bias=False, dropout=0.1),
    'MLP(6,[4],norm_layer=BatchNorm1d)': lambda: MLP(6, [4], norm_layer=nn.BatchNorm1d),
    'LayerNorm2d(6)': lambda: LayerNorm2d(6),
}


class Rot(nn.Module):
    """Hugging Face's rotary embedding's state: inv_freq a non-persistent buffer (not in the state
    dict), a persistent buffer and a parameter registered after it (parameters come first)."""

    def __init__(self):
        super().__init__()
        self.register_buffer('inv_freq', torch.ones(2), persistent=False)
        self.register_buffer('pos', torch.zeros(3))
        self.scale = nn.Parameter(torch.ones(1))


class Net2(nn.Module):
    """Containers of every kind, a module under two names (tied) and non-persistent state."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.blocks = nn.ModuleList([nn.Linear(2, 2), nn.BatchNorm1d(2)])
        self.rot = Rot()
        self.seq = nn.Sequential(OrderedDict([('conv', nn.Conv1d(2, 2, 1)), ('act', nn.ReLU())]))
        self.heads = nn.ModuleDict({'b': nn.Linear(2, 1), 'a': nn.Linear(2, 1)})
        self.shared_a = nn.Linear(1, 1)
        self.shared_b = self.shared_a
        self.plist = nn.ParameterList([nn.Parameter(torch.zeros(2))])
        self.pdict = nn.ParameterDict({'w': nn.Parameter(torch.zeros(1))})


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
    # Net2: what strict=False reports for keys PyTorch's rule (a key is unexpected where the
    # module its prefix names has no child and no parameter or persistent buffer of its next
    # part) treats in its own way: a non-persistent buffer given, keys under a parameter or
    # naming a child, an index past a ModuleList's end, keys under a tied module's two names
    def msg2(sd):
        r = Net2().load_state_dict(sd, strict=False)
        return {'keys': list(sd), 'missing_keys': r.missing_keys, 'unexpected_keys': r.unexpected_keys}
    full2 = Net2().state_dict()
    odd = {k: v for k, v in full2.items() if k not in ('blocks.1.running_mean', 'shared_b.weight', 'pdict.w')}
    odd.update({'zzz': torch.zeros(1), 'rot.inv_freq': torch.zeros(2), 'fc.weight.extra': torch.zeros(1), 'blocks': torch.zeros(1),
                'blocks.5.weight': torch.zeros(1), 'seq.conv.bias2': torch.zeros(1), 'seq.act.x': torch.zeros(1),
                'heads.c.weight': torch.zeros(1), 'shared_b.scale': torch.zeros(1), 'plist.1': torch.zeros(1), 'rot': torch.zeros(1),
                'aaa.b': torch.zeros(1)})
    net2 = Net2()
    walks = {'named_parameters': [k for k, _ in net2.named_parameters()], 'named_buffers': [k for k, _ in net2.named_buffers()],
             'named_modules': [k for k, _ in net2.named_modules()], 'named_children': [k for k, _ in net2.named_children()]}
    return {
        'net2_walks': walks,
        'net2_odd': msg2(odd), 'net2_nonpersistent': msg2({**full2, 'rot.inv_freq': torch.zeros(2)}),
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


# ---- the ops of issue 28's list with the arguments ports use and tests rarely do ----------------
# Each case: an op name the test maps to its JS call, explicit input tensors and keyword args;
# written to audit-ops28.json with PyTorch's outputs (dtype, shape, values) or the first line of
# what it raises.
OPS28 = []
F32_EDGE = torch.tensor([1.0000001, -1.0000001, 1.0, -1.0, 0.0, -0.0, float('inf'), float('-inf'), float('nan'), 1e-8, 0.5,
                         -0.75, 3.4e38, 1e-40, 100.0, -100.0, 89.0, -89.5, 1.5707964, 1e20, 20.0, 0.999999])


def c28(op, inputs, **args):
    OPS28.append({'op': op, 'inputs': inputs, 'args': args})


for fn in ['sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'sinh', 'cosh', 'asinh', 'acosh', 'atanh']:
    c28(fn, [F32_EDGE])
    c28(fn, [torch.tensor([[0, -3], [7, 1]])])  # int64 -> float32
    c28(fn, [torch.tensor(True)])  # 0-d bool -> 0-d float32
    c28(fn, [torch.zeros(0, 2)])
_z = [0.0, -0.0, 1.0, -1.0, float('inf'), float('-inf'), float('nan')]
_y = torch.tensor([a for a in _z for _ in _z])
_x = torch.tensor([b for _ in _z for b in _z])
c28('atan2', [_y, _x])
c28('atan2', [torch.tensor([[3], [-2]]), torch.tensor([0, -4, 5])])  # int64 operands, broadcast of ranks
c28('atan2', [torch.tensor([True, False]), torch.tensor(-0.0)])
_fa = torch.tensor([-7.5, 7.5, -7.5, 7.5, -0.0, 0.0, 5.0, -5.0, float('inf'), 3.0, -3.0, 1e-30, 6.0, -6.0])
_fb = torch.tensor([2.0, -2.0, -2.0, 2.0, 3.0, -3.0, 0.0, -0.0, 2.0, float('inf'), float('inf'), -1.0, 3.0, 3.0])
_ia = torch.tensor([-7, 7, -7, 7, 0, 0, -9223372036854775807 - 1, 9, -9, 5])
_ib = torch.tensor([2, -2, -2, 2, 3, -3, 7, 3, 3, 9223372036854775807])  # INT64_MIN % -1 traps PyTorch 1.13 (SIGFPE): tested apart
for op in ['fmod', 'remainder']:
    c28(op, [_fa, _fb])
    c28(op, [_ia, _ib])
    c28(op, [_ia], other=-3)
    c28(op, [_ia], other=2.5)  # a weak float scalar: float32
    c28(op, [_fa], other=-2)
    c28(op, [_ia, torch.tensor([3, 0, 1, 1, 1, 1, 1, 1, 1, 1])])  # int64 % 0: PyTorch raises
    c28(op, [_ia], other=0)
    c28(op, [torch.tensor([[5], [-5]]), torch.tensor([3.0, -3.0])])  # int64 with float32, broadcast
    c28(op, [torch.tensor(-7), torch.tensor([2, -2])])
# scalars as weak types
c28('add', [torch.tensor([1, -2, 3])], other=2.5)
c28('mul', [torch.tensor([True, False])], other=3)
c28('mul', [torch.tensor([True, False])], other=-0.5)
c28('add', [torch.tensor([True, False]), torch.tensor([True, True])])
c28('pow', [torch.tensor([1.5, -2.0, 0.0, -0.0]), torch.tensor([2, 3, -1, -1])])  # float ** int tensor
c28('pow', [torch.tensor([2, -3, 0, 5])], other=2)
c28('pow', [torch.tensor([2, -3, 4])], other=0.5)
c28('pow', [torch.tensor([2, -3, 4]), torch.tensor([3, 2, 0])])
c28('pow', [torch.tensor([2, -3, 4])], other=-1)  # PyTorch: integers to negative integer powers raise
c28('pow', [torch.tensor([2, -3, 1]), torch.tensor([3, -2, 0])])
c28('pow', [torch.tensor([True, False])], other=2)
c28('rpow', [torch.tensor([0, 3, -1])], other=2)  # 2 ** int64 tensor
c28('rpow', [torch.tensor([0.5, 3.0])], other=2)
c28('div', [torch.tensor([7, -7]), torch.tensor([2, 2])])
c28('div', [torch.tensor([7, -7]), torch.tensor([0, 0])])
c28('sub', [torch.tensor([True, False])], other=1)  # PyTorch refuses subtraction with bool
_cond = torch.tensor([[True, False, True], [False, False, True]])
for a, b in [(1, 0), (1.5, 0), (True, False), (2, -0.5), (True, 3)]:
    c28('where_scalars', [_cond], a=a, b=b)
c28('where', [_cond, torch.tensor([1, 2, 3])], b=2.5)
c28('where', [_cond, torch.tensor([True, False, True])], b=3)
c28('where', [_cond, torch.tensor([0.5, 1.0, 2.0])], b=True)
c28('where', [_cond, torch.tensor([4, 5, 6])], b=True)
c28('where', [torch.tensor(True), torch.tensor(2.0)], b=1)
c28('where_method', [torch.tensor([1.0, 2.0, 3.0]), torch.tensor([True, False, True]), torch.tensor([9.0, -0.0, 7.0])])  # x.where(c, y)
c28('where_method', [torch.tensor([[1], [2]]), torch.tensor([True, False, True]), torch.tensor([0.5, -1.5, 2.5])])
c28('where_method', [torch.tensor([1.0, 2.0]), torch.tensor([1, 0]), torch.tensor([0.0, 0.0])])
c28('minimum', [torch.tensor([-0.0, 0.0, float('nan'), 1.0, 2.0]), torch.tensor([0.0, -0.0, 1.0, float('nan'), 3.0])])
c28('maximum', [torch.tensor([-0.0, 0.0, float('nan'), 1.0, 2.0]), torch.tensor([0.0, -0.0, 1.0, float('nan'), 3.0])])
c28('maximum', [torch.tensor([[1], [-4]]), torch.tensor([0.5, -9.0])])  # int64 with float32
c28('minimum', [torch.tensor([True, False]), torch.tensor([2, -3])])
c28('minimum', [torch.zeros(0, 3), torch.zeros(3)])
# logical and bitwise on int64 and bool
_la = torch.tensor([0, -1, 5, -9223372036854775807 - 1, 6, 2 ** 62])
_lb = torch.tensor([3, 0, -6, -1, 12, 2 ** 62 + 1])
for op in ['logical_and', 'logical_or', 'logical_xor', 'bitwise_and', 'bitwise_or', 'bitwise_xor']:
    c28(op, [_la, _lb])
    c28(op, [torch.tensor([True, False, True]), torch.tensor([[True], [False]])])
    c28(op, [_la], other=-4 if op.startswith('bitwise') else 0)
c28('logical_and', [torch.tensor([0.0, -0.0, float('nan'), 2.0]), torch.tensor([1, 1, 1, 0])])
c28('logical_not', [_la])
c28('logical_not', [torch.tensor([0.0, -0.0, float('nan'), 2.0])])
c28('bitwise_not', [_la])
c28('bitwise_not', [torch.tensor([True, False])])
c28('bitwise_and', [torch.tensor([True, False]), torch.tensor([3, 2])])
c28('bitwise_and', [torch.tensor([1.0])], other=1)
_sa = torch.tensor([1, -1, 5, -8, 2 ** 62, -9223372036854775807 - 1, 7, 7])
_sb = torch.tensor([0, 1, 3, 2, 1, 63, 62, 5])  # shifts past 63 are left to the machine in 1.13: the test checks PyTorch 2's rule
c28('bitwise_left_shift', [_sa, _sb])
c28('bitwise_right_shift', [_sa, _sb])
c28('bitwise_left_shift', [_sa], other=2)
c28('bitwise_right_shift', [_sa], other=1)
# shifts promote first: bool beside an integer is 0/1 in int64 (a scalar in either place); bool with bool has no kernel
c28('bitwise_left_shift', [torch.tensor([True, False, True])], other=2)
c28('bitwise_right_shift', [torch.tensor([4, -8, 9])], other=True)
c28('bitwise_left_shift', [torch.tensor([3, -1]), torch.tensor([True, False])])
c28('scalar_first', [torch.tensor([1, 3, 0])], fn='bitwise_left_shift', other=True)
c28('scalar_first', [torch.tensor([True, False])], fn='bitwise_right_shift', other=-8)
c28('bitwise_left_shift', [torch.tensor([True]), torch.tensor([True])])
c28('bitwise_right_shift', [torch.tensor([True])], other=True)
c28('bitwise_left_shift', [torch.tensor([1.0])], other=1)
# the in-place forms (x.sin_(), ...) and NumPy's names (torch.arcsin, ...): an int64 tensor cannot hold sin's float
for fn, other in [('sin', None), ('atanh', None), ('atan2', -0.0), ('fmod', -1.5), ('remainder', -1.5), ('logical_not', None),
                  ('arcsin', None), ('arctan2', 2.0)]:
    c28('inplace', [torch.tensor([0.5, -0.0, -0.75])], fn=fn, other=other)
c28('inplace', [torch.tensor([3, -2])], fn='sin', other=None)
c28('inplace', [torch.tensor([3, -2])], fn='fmod', other=-2)
c28('inplace', [torch.tensor([3, -2])], fn='bitwise_not', other=None)
c28('inplace', [torch.tensor([3, 0])], fn='logical_not', other=None)
for fn in ['arcsin', 'arccos', 'arctan', 'arcsinh', 'arccosh', 'arctanh']:
    c28(fn, [F32_EDGE])
c28('arctan2', [torch.tensor([1.0, -0.0, 0.0]), torch.tensor([-0.0, -1.0, 0.0])])
# topk and sort with ties, largest=False, stable, 0-d, empty, int64, bool
_ties = torch.tensor([[3.0, 1.0, 3.0, 2.0, 1.0, 3.0], [0.0, -0.0, 0.0, float('nan'), -1.0, float('nan')]])
c28('sort', [_ties], dim=-1, descending=False, stable=True)
c28('sort', [_ties], dim=-1, descending=True, stable=True)
c28('sort', [_ties], dim=0, descending=True, stable=True)
c28('sort', [torch.tensor([[5, -2, 5], [9223372036854775807, -9223372036854775807 - 1, 0]])], dim=1, descending=True, stable=True)
c28('sort', [torch.tensor([True, False, True, False])], dim=0, descending=False, stable=True)
c28('sort', [torch.tensor(2.5)], dim=0, descending=False, stable=True)
c28('sort', [torch.zeros(2, 0)], dim=-1, descending=False, stable=True)
c28('topk', [_ties], k=3, dim=-1, largest=True)
c28('topk', [_ties], k=3, dim=-1, largest=False)
c28('topk', [_ties], k=2, dim=0, largest=False)
c28('topk', [torch.tensor([[4, -1, 4, 2]])], k=2, dim=1, largest=False)
c28('topk', [torch.tensor(1.5)], k=1, dim=0, largest=True)
c28('topk', [torch.tensor([1.0, 2.0])], k=0, dim=0, largest=True)
c28('topk', [torch.zeros(0, 3)], k=0, dim=0, largest=True)
c28('topk', [torch.zeros(0, 3)], k=2, dim=-1, largest=True)
c28('topk', [torch.tensor([True, False])], k=1, dim=0, largest=True)
# bucketize
_bd = torch.tensor([1.0, 3.0, 3.0, 5.0])
_bx = torch.tensor([[0.0, 1.0, 3.0], [4.0, 5.0, 9.0]])
c28('bucketize', [_bx, _bd], right=False)
c28('bucketize', [_bx, _bd], right=True)
c28('bucketize', [torch.tensor([0, 1, 3, 5, 6]), torch.tensor([1, 3, 5])], right=True)
c28('bucketize', [torch.tensor(3.0), _bd], right=True)
c28('bucketize', [torch.tensor([2, 3]), _bd], right=False)  # int64 input, float boundaries
c28('bucketize', [torch.tensor([float('nan'), float('-inf')]), _bd], right=True)
c28('bucketize_scalar', [_bd], value=3, right=True)  # torch.bucketize(3, boundaries): 0-d
c28('bucketize_scalar', [_bd], value=2.5, right=False)
c28('bucketize', [torch.tensor([True, False]), torch.tensor([0, 1])], right=False)
# repeat_interleave
_rx = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
c28('repeat_interleave', [_rx, torch.tensor([1, 0, 2])], dim=-1)
c28('repeat_interleave', [_rx, torch.tensor([2, 1])], dim=0)
c28('repeat_interleave', [_rx, torch.tensor(2)], dim=1)
c28('repeat_interleave', [_rx], repeats=2, dim=None)
c28('repeat_interleave', [_rx, torch.tensor([1, 2, 0, 1, 1, 1])], dim=None)
c28('repeat_interleave', [torch.tensor([True, False])], repeats=3, dim=0)
c28('repeat_interleave', [_rx, torch.tensor([1, -1, 2])], dim=1)
c28('repeat_interleave', [_rx, torch.tensor([1, 2])], dim=1)
c28('repeat_interleave', [torch.tensor(7)], repeats=3, dim=None)
# one_hot
c28('one_hot', [torch.tensor([[0, 2], [1, 0]])], num_classes=-1)
c28('one_hot', [torch.tensor([3, 0])], num_classes=5)
c28('one_hot', [torch.tensor(2)], num_classes=-1)
c28('one_hot', [torch.zeros(0, dtype=torch.int64)], num_classes=-1)
c28('one_hot', [torch.zeros(0, dtype=torch.int64)], num_classes=3)
c28('one_hot', [torch.tensor([1, -1])], num_classes=3)
c28('one_hot', [torch.tensor([1, 3])], num_classes=3)
c28('one_hot', [torch.tensor([1.0])], num_classes=3)
# tril/triu indices
for r, c, off in [(4, 3, 0), (4, 3, -1), (3, 4, 1), (3, 4, -5), (3, 4, 9), (0, 3, 0), (3, 3, 2), (1, 1, 0)]:
    c28('tril_indices', [], row=r, col=c, offset=off)
    c28('triu_indices', [], row=r, col=c, offset=off)
# cdist
torch.manual_seed(28)
_c1 = torch.randint(-3, 4, (2, 3, 4)).to(torch.float32)
_c2 = torch.randint(-3, 4, (1, 5, 4)).to(torch.float32)
_c2[0, 1] = _c1[0, 0]
for p in [0.0, 1.0, 2.0, 3.0, float('inf')]:
    c28('cdist', [_c1, _c2], p=p)
c28('cdist', [torch.zeros(0, 4), torch.ones(3, 4)], p=2.0)
c28('cdist', [torch.ones(2, 3), torch.ones(3, 4)], p=2.0)
c28('cdist', [torch.ones(2, 3), torch.ones(3, 3)], p=-1.0)
# roll
_ro = torch.arange(12).reshape(3, 4)
c28('roll', [_ro], shifts=[-1, 2], dims=[0, -1])
c28('roll', [_ro], shifts=[9], dims=[1])
c28('roll', [_ro], shifts=[-5], dims=None)
c28('roll', [_ro], shifts=[1, 1], dims=[0, 0])
c28('roll', [torch.tensor(4.0)], shifts=[3], dims=None)
c28('roll', [torch.zeros(0, 3)], shifts=[2], dims=[1])
c28('roll', [torch.tensor([True, False, False])], shifts=[-1], dims=[0])
# F.unfold / F.fold and Tensor.unfold
_uf = torch.arange(2 * 2 * 5 * 6, dtype=torch.float32).reshape(2, 2, 5, 6) / 8
c28('F_unfold', [_uf], kernel_size=[2, 3], dilation=[2, 1], padding=[1, 0], stride=[2, 1])
c28('F_unfold', [_uf[0]], kernel_size=[3, 3], dilation=[1, 2], padding=[1, 2], stride=[1, 3])
c28('F_unfold', [_uf], kernel_size=[6, 3], dilation=[1, 1], padding=[0, 0], stride=[1, 1])
_fc = torch.arange(1 * 12 * 6, dtype=torch.float32).reshape(1, 12, 6) / 16
c28('F_fold', [_fc], output_size=[4, 5], kernel_size=[2, 3], dilation=[2, 1], padding=[1, 0], stride=[2, 1])
c28('F_fold', [_fc[0]], output_size=[4, 5], kernel_size=[2, 3], dilation=[2, 1], padding=[1, 0], stride=[2, 1])
c28('F_fold', [_fc], output_size=[4, 4], kernel_size=[2, 3], dilation=[2, 1], padding=[1, 0], stride=[2, 1])
c28('Tensor_unfold', [_ro], dimension=-1, size=2, step=1)
c28('Tensor_unfold', [_ro], dimension=0, size=2, step=2)
c28('Tensor_unfold', [torch.tensor(3.0)], dimension=0, size=1, step=1)
c28('Tensor_unfold', [_ro], dimension=1, size=5, step=1)
# pixel_shuffle / pixel_unshuffle
_ps = torch.arange(2 * 8 * 2 * 3, dtype=torch.float32).reshape(2, 8, 2, 3)
c28('pixel_shuffle', [_ps], upscale_factor=2)
c28('pixel_shuffle', [_ps[0]], upscale_factor=2)
c28('pixel_shuffle', [_ps.reshape(2, 1, 8, 2, 3)], upscale_factor=2)
c28('pixel_shuffle', [_ps], upscale_factor=3)
c28('pixel_shuffle', [torch.arange(8).reshape(1, 4, 1, 2)], upscale_factor=2)
c28('pixel_unshuffle', [_ps.reshape(2, 2, 4, 6)], downscale_factor=2)
c28('pixel_unshuffle', [_ps.reshape(4, 4, 6)], downscale_factor=2)
c28('pixel_unshuffle', [_ps.reshape(2, 2, 4, 6)], downscale_factor=4)
# meshgrid
for indexing in ['ij', 'xy']:
    c28('meshgrid', [torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0, 5.0]), torch.tensor([6.0, 7.0, 8.0, 9.0])], indexing=indexing)
    c28('meshgrid', [torch.tensor([1, 2]), torch.tensor(5)], indexing=indexing)
    c28('meshgrid', [torch.tensor([1.0, 2.0])], indexing=indexing)
c28('meshgrid', [torch.tensor([1.0, 2.0]), torch.tensor([1, 2])], indexing='ij')
# masked_scatter
_mm = torch.tensor([True, False, True])
c28('masked_scatter', [torch.zeros(2, 3), _mm, torch.arange(1, 8, dtype=torch.float32)])
c28('masked_scatter', [torch.zeros(2, 3, dtype=torch.int64), torch.tensor([[True], [False]]), torch.arange(10, 16).reshape(2, 3)])
c28('masked_scatter', [torch.zeros(2, 3), _mm, torch.ones(3)])
c28('masked_scatter', [torch.zeros(3), torch.tensor([[True, False, False], [False, True, True]]), torch.arange(1, 8, dtype=torch.float32)])
# index_put_ (x[i] = v, x[i] += v, x[mask] = v)
_ip = torch.arange(10, dtype=torch.float32).reshape(5, 2)
c28('index_put', [_ip, torch.tensor([0, 0, 2, -1]), torch.tensor([1.0, 2.0])], accumulate=True)
c28('index_put', [_ip, torch.tensor([4, -5]), torch.tensor(9.0)], accumulate=False)
c28('index_put', [_ip, torch.tensor([[0], [3]]), torch.tensor([1, 0]), torch.tensor([[7.0, 8.0], [9.0, 10.0]])], accumulate=False)
c28('index_put', [_ip, torch.tensor([True, False, True, False, False]), torch.tensor(-1.0)], accumulate=False)
c28('index_put', [_ip, torch.tensor([True, False, True, False, False]), torch.tensor([[1.0, 2.0], [3.0, 4.0]])], accumulate=True)
c28('index_put', [_ip, _ip > 4, torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0])], accumulate=False)
c28('index_put', [torch.arange(6).reshape(2, 3), torch.tensor([1, 1]), torch.tensor([2, 2]), torch.tensor(5)], accumulate=True)
c28('index_put', [_ip, torch.tensor([5]), torch.tensor(1.0)], accumulate=False)
c28('index_put', [_ip, torch.tensor([True, False]), torch.tensor(1.0)], accumulate=False)
# accumulate on bool is a logical or (PyTorch's bool +=), repeated places included; repeated places
# without accumulate: PyTorch calls it undefined, its CPU kernel (and ours) keeps the last written
_bp = torch.tensor([True, False, False, False, False])
c28('index_put', [_bp, torch.tensor([1, 1, 3, 0, 1]), torch.tensor([False, True, False, False, False])], accumulate=True)
c28('index_put', [torch.zeros(3, 2, dtype=torch.bool), torch.tensor([2, 0, 2]), torch.tensor([[True, False], [False, False], [False, True]])],
    accumulate=True)
c28('index_put', [_bp, torch.tensor([[2, 2], [4, 0]]), torch.tensor(True)], accumulate=True)
c28('index_put', [_ip, torch.tensor([1, 3, 1]), torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])], accumulate=False)
c28('index_put', [_ip, torch.tensor([1, 3, 1, 1]), torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [0.5, -1.0]])], accumulate=True)
c28('index_put', [torch.arange(6).reshape(3, 2), torch.tensor([2, 2, 0]), torch.tensor([[7, 8], [9, 10], [11, 12]])], accumulate=False)
# slices: negative steps are refused (x[::-1]), slice_scatter
c28('slice', [_ro], dim=1, start=None, end=None, step=-1)
c28('slice', [_ro], dim=1, start=None, end=None, step=0)
c28('slice', [_ro], dim=-1, start=-3, end=-1, step=1)
c28('slice', [_ro], dim=0, start=5, end=1, step=1)
c28('slice_scatter', [_ro, torch.tensor([[-1, -2]] * 3)], dim=1, start=-4, end=None, step=2)
c28('slice_scatter', [_ro, torch.tensor([[-1, -2, -3, -4]])], dim=0, start=-1, end=None, step=1)
c28('slice_assign', [_ro.clone(), torch.tensor([-1, -2, -3])], dim=1, start=1, end=None, step=1)
c28('slice_assign', [torch.zeros(3, 4), torch.tensor(2.5)], dim=0, start=1, end=3, step=1)
c28('select_add', [torch.zeros(3, 4), torch.ones(3)], dim=1, index=0)
# einsum
torch.manual_seed(29)
_e = lambda *s: torch.randint(-4, 5, s).to(torch.float32) / 4
for eq, shapes in [('ij,jk->ik', [(2, 3), (3, 4)]), ('bij,bjk->bik', [(2, 2, 3), (2, 3, 4)]), ('i,i->', [(5,), (5,)]),
                   ('ij->ji', [(2, 3)]), ('ii->i', [(3, 3)]), ('bhqd,bhkd->bhqk', [(1, 2, 3, 4), (1, 2, 5, 4)]),
                   ('...ij,...jk', [(2, 1, 2, 3), (3, 3, 2)]), ('i,j->ij', [(2,), (3,)]), ('ij,ij->ij', [(2, 3), (2, 3)]),
                   ('bn,anm,bm->ba', [(2, 3), (4, 3, 5), (2, 5)]), ('ij,jk', [(2, 3), (3, 2)]), ('ij->', [(2, 3)]),
                   ('bid,bjd->bij', [(2, 0, 3), (2, 4, 3)]), ('ij,jk->ik', [(2, 3), (4, 4)])]:
    c28('einsum', [_e(*s) for s in shapes], equation=eq)
c28('einsum', [torch.tensor([[1, 2], [3, 4]]), torch.tensor([[5, 6], [7, 8]])], equation='ij,jk->ik')
# reductions of int64 and bool, dims lists, keepdim, 0-d
_ri = torch.tensor([[3, -2, 7], [0, 5, -9]])
_rb = torch.tensor([[True, False, True], [False, False, True]])
c28('reduce', [_ri], fn='sum', dim=[0, -1], keepdim=True)
c28('reduce', [_rb], fn='sum', dim=None, keepdim=False)
c28('reduce', [_rb], fn='sum', dim=[-1], keepdim=True)
c28('reduce', [_rb], fn='prod', dim=[1], keepdim=False)
c28('reduce', [_ri], fn='prod', dim=[0], keepdim=True)
c28('reduce', [_ri], fn='mean', dim=[0], keepdim=False)
c28('reduce', [_ri], fn='amax', dim=[0, 1], keepdim=False)
c28('reduce', [_rb], fn='amax', dim=[0], keepdim=False)
c28('reduce', [_rb], fn='argmax', dim=[1], keepdim=False)
c28('reduce', [_ri], fn='argmin', dim=None, keepdim=False)
c28('reduce', [_rb], fn='cumsum', dim=[1], keepdim=False)
c28('reduce', [_ri], fn='cumprod', dim=[-1], keepdim=False)
c28('reduce', [_ri], fn='logsumexp', dim=[1], keepdim=False)
c28('reduce', [torch.tensor(4.5)], fn='sum', dim=[0], keepdim=True)
c28('reduce', [torch.tensor(4.5)], fn='amax', dim=[-1], keepdim=False)
c28('reduce', [torch.tensor(-3)], fn='cumsum', dim=[0], keepdim=False)
c28('reduce', [_rb], fn='max', dim=None, keepdim=False)
c28('reduce', [_rb], fn='min', dim=None, keepdim=False)
c28('reduce', [_rb], fn='max', dim=[1], keepdim=True)
c28('reduce', [_rb], fn='all', dim=[1], keepdim=True)
c28('reduce', [_ri], fn='any', dim=None, keepdim=False)
# keyword arguments, as ports write them: x.sum(dim=-1, keepdim=True), torch.max(x, dim=1), x.split(2, dim=-1)
_rf = _ri.float()
for _fn, _x, _d, _k, _m in [('sum', _rf, [-1], True, True), ('mean', _rf, [0, 1], False, False), ('amax', _rf, [1], True, True),
                            ('max', _rf, [1], False, False), ('min', _ri, [0], True, True), ('argmax', _rf, [-1], True, True),
                            ('prod', _ri, [0], False, True), ('all', _rb, [1], False, False), ('logsumexp', _rf, [1], True, True),
                            ('amin', _rf, [0], False, False), ('any', _rb, [0], True, True), ('argmin', _ri, [1], False, False)]:
    c28('reduce_kw', [_x], fn=_fn, dim=_d, keepdim=_k, method=_m)
c28('split_kw', [_rf], size=2, dim=-1)
c28('split_kw', [_rf], size=[1, 1], dim=0)
c28('chunk_kw', [_rf], chunks=2, dim=1)
# torch.scatter / Tensor.scatter (src, or a value; reduce='add'); repeated places without reduce
# are undefined in PyTorch, so the cases write each place once there
_sz, _ss = torch.zeros(3, 5), torch.arange(1, 11, dtype=torch.float32).reshape(2, 5)
c28('scatter', [_sz, torch.tensor([[0, 1, 2, 0]]), _ss], dim=0)
c28('scatter', [_sz, torch.tensor([[0, 1, 2], [0, 4, 3]]), _ss], dim=1)
c28('scatter', [_sz, torch.tensor([[0, 1, 2], [0, 4, 4]])], dim=-1, value=1.5, reduce='add')
c28('scatter', [_sz, torch.tensor([[0, 0, 0], [0, 4, 4]]), _ss], dim=1, reduce='add')
c28('scatter', [torch.tensor([[False, True, True], [True, False, True]]), torch.tensor([[2, 0, 1], [1, 2, 0]]),
                torch.tensor([[True, False, False], [False, True, True]])], dim=1)
c28('scatter', [torch.arange(6).reshape(2, 3), torch.tensor([[1], [0]]), torch.tensor([[7], [8]])], dim=1)
c28('scatter', [torch.zeros(2, 4), torch.tensor([[3, 0], [1, 2]])], dim=1, value=-2.0)
c28('scatter', [_sz, torch.tensor([[0, 5]]), _ss], dim=1)
c28('scatter', [_sz, torch.tensor([[0, -1]]), _ss], dim=1)
c28('scatter', [torch.zeros(1, 2), torch.tensor([[0, 1], [1, 1]]), _ss], dim=1)
c28('scatter', [_sz, torch.tensor([[0, 1, 2, 3, 4, 0]]), _ss], dim=1)
# every argument by name, as ports write them (x.softmax(dim=-1), x.gather(dim=1, index=i), torch.cat(xs, dim=-1));
# tensors: the names of the inputs after the first given by name
_kx = torch.tensor([[0.5, -1.25, 2.0], [3.0, 0.25, -0.75]])
_k3 = torch.tensor([[[1.0, -2.0, 0.5]], [[0.25, 4.0, -1.0]]])  # [2, 1, 3]
for _fn, _x, _kw in [('softmax', _kx, {'dim': -1}), ('softmax', _kx, {'dim': 0, 'dtype': 'float32'}), ('log_softmax', _kx, {'dim': 1}),
                     ('cumsum', _kx, {'dim': -1}), ('cumsum', _ri, {'dim': 0}), ('cumprod', _kx, {'dim': 1}),
                     ('norm', _kx, {'p': 2, 'dim': -1, 'keepdim': True}), ('norm', _kx, {'dim': [0, 1]}), ('norm', _kx, {'p': 1, 'dim': 0}),
                     ('squeeze', _k3, {'dim': 1}), ('unsqueeze', _kx, {'dim': -1}), ('flatten', _k3, {'start_dim': 1}),
                     ('flatten', _k3, {'start_dim': 0, 'end_dim': 1}), ('transpose', _k3, {'dim0': 0, 'dim1': -1}),
                     ('narrow', _kx, {'dim': 1, 'start': 1, 'length': 2}), ('tril', _kx, {'diagonal': -1}), ('triu', _kx, {'diagonal': 1}),
                     ('roll', _kx, {'shifts': 1, 'dims': -1}), ('roll', _kx, {'shifts': [1, -1], 'dims': [0, 1]})]:
    c28('method_kw', [_x], fn=_fn, kw=_kw)
c28('method_kw', [_kx, torch.tensor([[2, 0], [1, 1]])], fn='gather', kw={'dim': 1}, tensors=['index'])
c28('method_kw', [_kx, torch.tensor([1, 0, 1])], fn='index_select', kw={'dim': 0}, tensors=['index'])
c28('method_kw', [_kx, _kx * 2], fn='cat', kw={'dim': -1})
c28('method_kw', [_kx, _kx * 2], fn='stack', kw={'dim': 1})
c28('method_kw', [_kx, _kx > 0], fn='masked_fill', kw={'value': -1.5}, tensors=['mask'])
c28('method_kw', [_kx], fn='select', kw={'dim': 1, 'index': -1})
c28('method_kw', [_kx, torch.tensor([2, 0]), torch.ones(2, 2)], fn='index_add', kw={'dim': 1}, tensors=['index', 'source'])
c28('method_kw', [_kx, torch.tensor([[2, 2, 0], [1, 0, 1]]), torch.ones(2, 3)], fn='scatter_add', kw={'dim': 1}, tensors=['index', 'src'])
c28('method_kw', [_kx], fn='repeat_interleave', kw={'repeats': 2, 'dim': 0})
c28('method_kw', [_k3], fn='diagonal', kw={'offset': 1, 'dim1': 0, 'dim2': 2})
c28('method_kw', [_k3], fn='movedim', kw={'source': 0, 'destination': -1})
# more in-place forms ports use (x.relu_(), x.clamp_min_(0), x.pow_(2)): a float result into an int64 tensor is refused
for fn, other in [('neg', None), ('abs', None), ('exp', None), ('log', None), ('sqrt', None), ('rsqrt', None), ('sigmoid', None),
                  ('tanh', None), ('relu', None), ('erf', None), ('floor', None), ('ceil', None), ('round', None), ('sign', None),
                  ('square', None), ('reciprocal', None), ('clamp_min', 0.1), ('clamp_max', -0.1), ('pow', 2.0), ('sgn', None),
                  ('absolute', None), ('negative', None)]:
    c28('inplace', [torch.tensor([0.5, -0.0, -0.75, 2.5])], fn=fn, other=other)
for fn, other in [('neg', None), ('abs', None), ('relu', None), ('sqrt', None), ('pow', 2), ('pow', 0.5), ('clamp_min', 0), ('sign', None),
                  ('square', None), ('exp', None)]:
    c28('inplace', [torch.tensor([3, -2, 0])], fn=fn, other=other)


def call28(op, xs, a):
    """PyTorch's call of each OPS28 case, as a port writes it."""
    F = torch.nn.functional
    if op in ('sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'sinh', 'cosh', 'asinh', 'acosh', 'atanh', 'logical_not', 'bitwise_not'):
        return getattr(torch, op)(xs[0])
    if op in ('atan2', 'fmod', 'remainder', 'add', 'sub', 'mul', 'div', 'pow', 'minimum', 'maximum', 'logical_and', 'logical_or',
              'logical_xor', 'bitwise_and', 'bitwise_or', 'bitwise_xor', 'bitwise_left_shift', 'bitwise_right_shift'):
        return scalar_as_tensor(getattr(torch, op))(xs[0], xs[1] if len(xs) > 1 else a['other'])
    if op == 'rpow':
        return torch.pow(a['other'], xs[0])
    if op == 'scalar_first':
        return getattr(torch, a['fn'])(a['other'], xs[0])
    if op == 'inplace':
        y, other = xs[0].clone(), a['other']
        if a['fn'] in ('atan2', 'arctan2'):  # no Python scalar there: a 0-d tensor, the same promotion
            other = torch.tensor(other)
        return getattr(y, a['fn'] + '_')(*([] if other is None else [other]))
    if op in ('arcsin', 'arccos', 'arctan', 'arcsinh', 'arccosh', 'arctanh'):
        return getattr(torch, op)(xs[0])
    if op == 'arctan2':
        return torch.arctan2(xs[0], xs[1])
    if op == 'where_method':
        return xs[0].where(xs[1], xs[2])
    if op == 'bucketize_scalar':
        return torch.bucketize(a['value'], xs[0], right=a['right'])
    if op == 'where_scalars':
        return torch.where(xs[0], a['a'], a['b'])
    if op == 'where':
        return torch.where(xs[0], xs[1], a['b'])
    if op == 'sort':
        r = torch.sort(xs[0], **a)
        return [r.values, r.indices]
    if op == 'topk':
        r = torch.topk(xs[0], **a)
        return [r.values, r.indices]
    if op == 'bucketize':
        return torch.bucketize(xs[0], xs[1], **a)
    if op == 'repeat_interleave':
        return torch.repeat_interleave(xs[0], xs[1] if len(xs) > 1 else a['repeats'], dim=a['dim'])
    if op == 'one_hot':
        return F.one_hot(xs[0], a['num_classes'])
    if op in ('tril_indices', 'triu_indices'):
        return getattr(torch, op)(a['row'], a['col'], a['offset'])
    if op == 'cdist':
        return torch.cdist(xs[0], xs[1], p=a['p'])
    if op == 'roll':
        return torch.roll(xs[0], a['shifts'], a['dims'])
    if op == 'F_unfold':
        return F.unfold(xs[0], **a)
    if op == 'F_fold':
        return F.fold(xs[0], **a)
    if op == 'Tensor_unfold':
        return xs[0].unfold(**a)
    if op == 'pixel_shuffle':
        return F.pixel_shuffle(xs[0], a['upscale_factor'])
    if op == 'pixel_unshuffle':
        return F.pixel_unshuffle(xs[0], a['downscale_factor'])
    if op == 'meshgrid':
        return list(torch.meshgrid(*xs, indexing=a['indexing']))
    if op == 'masked_scatter':
        return xs[0].masked_scatter(xs[1], xs[2])
    if op == 'index_put':
        return xs[0].clone().index_put_(tuple(xs[1:-1]), xs[-1], accumulate=a['accumulate'])
    if op in ('slice', 'slice_scatter', 'slice_assign'):
        idx = [slice(None)] * xs[0].dim()
        idx[a['dim']] = slice(a['start'], a['end'], a['step'])
        if op == 'slice':
            return xs[0][tuple(idx)]
        if op == 'slice_scatter':
            return torch.slice_scatter(xs[0], xs[1], a['dim'], a['start'], a['end'], a['step'])
        y = xs[0].clone()
        y[tuple(idx)] = xs[1]
        return y
    if op == 'select_add':
        y = xs[0].clone()
        y.select(a['dim'], a['index']).add_(xs[1])  # x[:, 0] += v
        return y
    if op == 'einsum':
        return torch.einsum(a['equation'], *xs)
    if op == 'reduce_kw':
        d = a['dim'] if len(a['dim']) > 1 else a['dim'][0]
        f = getattr(xs[0], a['fn']) if a['method'] else lambda **k: getattr(torch, a['fn'])(xs[0], **k)
        r = f(dim=d, keepdim=a['keepdim'])
        return [r.values, r.indices] if a['fn'] in ('max', 'min') else r
    if op == 'split_kw':
        return list(xs[0].split(a['size'], dim=a['dim']))
    if op == 'chunk_kw':
        return list(torch.chunk(xs[0], a['chunks'], dim=a['dim']))
    if op == 'method_kw':
        kw = dict(a['kw'])
        if 'dtype' in kw:
            kw['dtype'] = getattr(torch, kw['dtype'])
        kw.update({n: xs[1 + k] for k, n in enumerate(a.get('tensors', []))})
        if a['fn'] in ('cat', 'stack'):
            return getattr(torch, a['fn'])(list(xs), **kw)
        return getattr(xs[0], a['fn'])(**kw)
    if op == 'scatter':
        kw = {'reduce': a['reduce']} if 'reduce' in a else {}
        return xs[0].scatter(a['dim'], xs[1], xs[2] if len(xs) > 2 else a['value'], **kw)
    if op == 'reduce':
        fn, dim = getattr(torch, a['fn']), a['dim']
        if a['fn'] in ('cumsum', 'cumprod'):
            return fn(xs[0], dim[0])
        if a['fn'] in ('max', 'min') and dim is not None:
            r = fn(xs[0], dim[0], keepdim=a['keepdim'])
            return [r.values, r.indices]
        if a['fn'] in ('argmax', 'argmin', 'prod', 'all', 'any'):
            return fn(xs[0]) if dim is None else fn(xs[0], dim[0], keepdim=a['keepdim'])
        return fn(xs[0]) if dim is None else fn(xs[0], dim, keepdim=a['keepdim'])
    raise ValueError(op)


def ops28_cases():
    out = []
    for c in OPS28:
        xs = [x.clone() for x in c['inputs']]
        try:
            ys = call28(c['op'], xs, c['args'])
        except (RuntimeError, IndexError, TypeError, ValueError) as e:
            r = {'error': str(e).split('\n')[0]}
        else:
            r = {'outputs': [tensor_json(y) for y in (ys if isinstance(ys, list) else [ys])]}
        args = {k: value(v) if isinstance(v, float) else v for k, v in c['args'].items()}
        out.append({'op': c['op'], 'inputs': [tensor_json(x) for x in c['inputs']], 'args': args, **r})
    return out


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
    ops28 = ops28_cases()
    with open(OUT28, 'w') as f:
        json.dump({'torch_version': torch.__version__, 'cases': ops28}, f, indent=None, separators=(',', ':'))
        f.write('\n')
    print(f'wrote {OUT28}: {len(ops28)} cases, {sum("error" in c for c in ops28)} of them errors')


if __name__ == '__main__':
    main()
