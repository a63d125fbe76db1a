#!/usr/bin/env python3
"""Values of PyTorch's functions that the library writes as composites of its ops (and of topk, which
sort and argsort are written with), as fixtures for tests/js/roll.test.mjs, meshgrid.test.mjs,
indexing-linalg.test.mjs and sort.test.mjs.

torch.roll: for a [2, 3, 4] tensor of each dtype (float32, int64, bool) and shifts that cover one
dim and several, negative shifts, shifts larger than the size (and than twice it), a dim rolled
twice and no dims (the flattened tensor), what PyTorch gives or that it raises (and the first
line of its message). Writes tests/js/fixtures/pytorch/ops/roll.json:
  { "torch_version": ..., "shape": [2, 3, 4],
    "inputs": { "<dtype>": [row-major values] },
    "cases": [ { "dtype", "shifts", "dims" (null: none), "data" (row-major, the input's shape) } or
               { "dtype", "shifts", "dims", "error": "<first line of PyTorch's message>" } ] }

torch.meshgrid: one to three 0-d or 1-D inputs (an empty one too) of each dtype, with indexing
'ij' and 'xy'. Writes tests/js/fixtures/pytorch/ops/meshgrid.json:
  { "torch_version": ...,
    "cases": [ { "dtype", "indexing", "inputs": [{"shape", "data"}], "outputs": [{"shape", "data"}] } ] }

torch.einsum, torch.cdist, F.unfold / F.fold, torch.masked_scatter and torch.index_put (the
composites of js/ops/linalg.js, js/ops/conv.js and js/ops/index.js, and the index_put op): for
each, a few calls on small inputs whose values are halves of small integers (so sums of products
are exact in float32 whatever the order; cdist's inputs are random, compared within a
tolerance), the inputs and PyTorch's result. Writes tests/js/fixtures/pytorch/ops/indexing_linalg.json:
  { "torch_version": ..., "<op>": [ { "args": {...}, "inputs": [{"shape", "data"}], "output": {"shape", "data"} } ] }

Sorting, searching and rearranging (tests/js/sort.test.mjs): topk (k = 1 to n, both ends, ties
and NaN: PyTorch's topk orders equal values as its selection leaves them, so the test checks
its values and that the indices pick them), sort and argsort (stable, both directions), searchsorted and bucketize (both sides, values
equal to boundaries, NaN values and NaNs in the sequence, an unsorted sequence, int64), one_hot, repeat_interleave (a count, counts, with and without a
dim), tril_indices / triu_indices, pixel_shuffle / pixel_unshuffle, each case's inputs and outputs
or PyTorch's error (first line). Writes tests/js/fixtures/pytorch/ops/sort.json:
  { "torch_version": ..., "cases": [ { "op", "args" (numbers, null, booleans), "inputs": [{"dtype",
    "shape", "data"}], "outputs": [{"dtype", "shape", "data"}] or "error" } ] }

Losses written with the library's ops (js/nn/loss.js; tests/js/losses.test.mjs): l1_loss,
smooth_l1_loss (beta 1, 0.5, 0), huber_loss (delta 1, 2.5), margin_ranking_loss, hinge_embedding_loss, soft_margin_loss,
cosine_embedding_loss, triplet_margin_loss, binary_cross_entropy (with a weight, at
probabilities 0 and 1 where the logs clamp at -100), binary_cross_entropy_with_logits (weight,
pos_weight, logits of +-100), kl_div (every reduction, 'batchmean', log_target, zeros in the
target), cosine_similarity (dims, broadcasting, a zero vector): each case's arguments, inputs
(random from a fixed seed), output and the gradient of (output * g).sum() for each float input
that takes one. Writes tests/js/fixtures/pytorch/ops/losses.json:
  { "torch_version": ..., "cases": [ { "op", "args", "inputs": [{"shape", "data"}], "g", "output", "grads" } ] }

1-D pools and instance norm (js/ops/conv.js, js/ops/norm.js; tests/js/pools-norms.test.mjs):
max_pool1d and avg_pool1d (strides, padding, dilation, ceil_mode, count_include_pad),
adaptive_avg_pool1d (odd ratios), instance_norm on 3-D and 4-D inputs with and without weight
and bias, as in the losses' file. Writes tests/js/fixtures/pytorch/ops/pools_norms.json.

3-D convolution and pools (js/ops/conv.js; tests/js/torchvision-ports-video-densenet-seg.test.mjs):
conv3d (strides, padding and 'same', dilation, groups, with and without bias, unbatched),
max_pool3d, avg_pool3d, adaptive_avg_pool3d and conv_transpose3d (see conv_pools_3d), as in the losses' file.
Writes tests/js/fixtures/pytorch/ops/conv_pools_3d.json.

Adaptive max pools and embedding bags (js/ops/conv.js, js/ops/index.js; tests/js/bags-pools.test.mjs):
adaptive_max_pool2d, adaptive_max_pool1d and adaptive_max_pool3d (sizes that divide, that do not, larger than the
input, None; an input with its maximum twice in a window), their values with gradients and their
indices (an *Indices case, no gradient); embedding_bag in each mode on 2-D bags and on 1-D bags
with offsets (an empty bag), padding_idx, include_last_offset and per_sample_weights, with the
weight's gradient (and the per-sample weights'). Inputs of two decimals, as in the losses' file.
Writes tests/js/fixtures/pytorch/ops/bags_pools.json.

Run with a python3 that imports torch (Debian's python3-torch, /usr/bin/python3); CI reads the
committed JSON and never runs this:
    /usr/bin/python3 tools/pytorch_composites.py
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_reference import short_floats  # noqa: E402

DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'pytorch', 'ops')

SHAPE = [2, 3, 4]
BASE = torch.arange(24).reshape(SHAPE)
INPUTS = {'float32': BASE.float() * 0.5 - 3, 'int64': BASE * 7 - 50, 'bool': BASE % 3 == 0}

ROLLS = [
    (1, 0), (-1, 0), (2, 2), (-3, 2), (5, 2), (-9, 2), (11, 1), (0, 1), (4, -1),
    ((1, 2), (0, 2)), ((-2, 7), (1, -1)), ((3, -1, 10), (2, 0, 1)), ((1, 2), (2, 2)),
    (5, None), (-30, None), ((1, 2), None), ((1,), (0, 1)),
]

GRIDS = [[3], [2, 4], [4, 2], [3, 0], [1, 3], [2, 3, 4], [None, 3], [2, None, 2]]  # None: a 0-d input


def rolls():
    cases = []
    for dtype, x in INPUTS.items():
        for shifts, dims in ROLLS:
            case = {'dtype': dtype, 'shifts': list(shifts) if isinstance(shifts, tuple) else shifts,
                    'dims': list(dims) if isinstance(dims, tuple) else dims}
            try:
                r = torch.roll(x, shifts, dims) if dims is not None else torch.roll(x, shifts)
                case['data'] = r.flatten().tolist()
            except RuntimeError as e:
                case['error'] = str(e).split('\n')[0]
            cases.append(case)
    return {'torch_version': torch.__version__, 'shape': SHAPE,
            'inputs': {k: v.flatten().tolist() for k, v in INPUTS.items()}, 'cases': cases}


def tensor(t):
    return {'shape': list(t.shape), 'data': t.flatten().tolist()}


def meshgrids():
    cases = []
    for dtype, x in INPUTS.items():
        for sizes in GRIDS:
            start = 0
            inputs = []
            for n in sizes:
                part = x.flatten()[start:start + (n or 1)]
                inputs.append(part[0] if n is None else part)
                start += n or 1
            for indexing in ('ij', 'xy'):
                outputs = torch.meshgrid(*inputs, indexing=indexing)
                cases.append({'dtype': dtype, 'indexing': indexing, 'inputs': [tensor(t) for t in inputs],
                              'outputs': [tensor(t) for t in outputs]})
    return {'torch_version': torch.__version__, 'cases': cases}


def halves(*shape, seed=0):
    """Exact small values: halves of integers in [-3, 3]."""
    n = 1
    for d in shape:
        n *= d
    return ((torch.arange(n) * 7 + seed * 5) % 13 - 6).float().mul(0.5).reshape(shape)


def call(args, inputs, output):
    return {'args': args, 'inputs': [tensor(t) for t in inputs], 'output': tensor(output)}


EINSUMS = [
    ('bij,bjk->bik', [(2, 3, 4), (2, 4, 5)]), ('bhqd,bhkd->bhqk', [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ('i,j->ij', [(3,), (4,)]), ('ij->ji', [(2, 3)]), ('ii->', [(3, 3)]), ('ii->i', [(4, 4)]), ('ij->', [(2, 3)]),
    ('ij->j', [(3, 4)]), ('...ij,...jk->...ik', [(2, 1, 3, 4), (3, 4, 2)]), ('bn,anm,bm->ba', [(2, 3), (4, 3, 5), (2, 5)]),
    ('ij,jk', [(2, 3), (3, 4)]), ('ba,ba', [(3, 1), (3, 4)]), ('i,i->', [(5,), (5,)]), ('...ii->...i', [(2, 3, 3)]),
    ('ijk,ik->j', [(2, 3, 4), (2, 4)]), ('bij,bkj->bik', [(0, 2, 3), (0, 4, 3)]),
]


def einsums():
    out = []
    for eq, shapes in EINSUMS:
        xs = [halves(*s, seed=k) for k, s in enumerate(shapes)]
        out.append(call({'equation': eq}, xs, torch.einsum(eq, *xs)))
    return out


def cdists():
    g = torch.Generator().manual_seed(3)
    out = []
    for p, (b, r, c, m) in [(2, (None, 4, 5, 3)), (2, (2, 30, 6, 4)), (1, (None, 3, 4, 2)), (float('inf'), (2, 3, 4, 5)),
                            (0, (None, 3, 4, 2)), (1.5, (None, 4, 2, 3)), (2, (None, 26, 3, 2))]:
        lead = [] if b is None else [b]
        x1, x2 = torch.randn(*lead, r, m, generator=g), torch.randn(*lead, c, m, generator=g)
        if p == 0:
            x1, x2 = x1.round(), x2.round()
        out.append(call({'p': 'inf' if p == float('inf') else p}, [x1, x2], torch.cdist(x1, x2, p)))
    return out


FOLDS = [  # input shape, kernel, dilation, padding, stride
    ((2, 3, 5, 6), (2, 3), 1, 0, 1), ((1, 2, 6, 7), 3, 1, 1, 2), ((2, 1, 7, 6), (2, 2), (2, 1), (1, 0), (1, 2)),
    ((1, 2, 4, 4), 1, 1, 0, 1), ((3, 4, 5), 2, 1, 0, 1),
]


def folds():
    out = []
    for shape, k, d, p, s in FOLDS:
        x = halves(*shape)
        args = {'kernel_size': k, 'dilation': d, 'padding': p, 'stride': s}
        cols = torch.nn.functional.unfold(x, k, d, p, s)
        out.append(call(dict(args, op='unfold'), [x], cols))
        y = halves(*cols.shape, seed=1)
        out.append(call(dict(args, op='fold', output_size=list(shape[-2:])), [y],
                        torch.nn.functional.fold(y, shape[-2:], k, d, p, s)))
    return out


def masked_scatters():
    out = []
    for shape, mshape, n in [((3, 4), (3, 4), 12), ((3, 4), (4,), 10), ((2, 3), (1, 3), 8), ((5,), (5,), 5)]:
        x, src = halves(*shape), halves(n, seed=2)
        mask = (torch.arange(torch.Size(mshape).numel()).reshape(mshape) % 3) != 1
        out.append(call({}, [x, mask, src], x.masked_scatter(mask, src)))
    return out


def index_puts():
    out = []
    i64 = lambda v: torch.tensor(v, dtype=torch.int64)  # noqa: E731
    for shape, idx, vshape, acc in [((4, 3), [[0, 2, -1]], (3, 3), False), ((4, 3), [[0, 2, 0]], (3, 3), True),
                                    ((4, 3), [[1, 3], [2, -3]], (2,), False), ((3, 4, 2), [[[0], [2]], [1, 3]], (2, 2, 2), False),
                                    ((4, 3), [[3, 1]], (3,), False), ((3, 4), [[0, 0, 1], [1, 1, 1]], (1,), True)]:
        x, v, ix = halves(*shape), halves(*vshape, seed=3), [i64(t) for t in idx]
        out.append(call({'accumulate': acc}, [x, v, *ix], torch.index_put(x, tuple(ix), v, acc)))
    # one bool index (x[mask] = v): values for every true place, or one row per true place
    for shape, mshape, vshape, acc in [((4, 3), (4,), (3,), False), ((4, 3), (4,), (), True), ((4, 3), (4, 3), (1,), False),
                                       ((4, 3), (4,), (3, 3), False), ((4, 3), (4,), (3, 3), True), ((2, 3, 2), (2, 3), (4, 2), False)]:
        x, v = halves(*shape), halves(*vshape, seed=3)
        mask = (torch.arange(torch.Size(mshape).numel()).reshape(mshape) % 4) != 1
        out.append(call({'accumulate': acc, 'mask': True}, [x, v, mask], torch.index_put(x, (mask,), v, acc)))
    return out


def indexing_linalg():
    return {'torch_version': torch.__version__, 'einsum': einsums(), 'cdist': cdists(), 'fold': folds(),
            'masked_scatter': masked_scatters(), 'index_put': index_puts()}
def t(x):
    return {'dtype': str(x.dtype).replace('torch.', ''), 'shape': list(x.shape),
            'data': [None if v != v else v for v in x.flatten().tolist()]}


TIES = torch.tensor([[3., 1, 2, 1, 5, 2], [0, 0, -1, 7, 0, 7], [4, float('nan'), 4, -2, float('nan'), 1]])
INTS = torch.tensor([[5, -3, 5, 0], [2, 2, 2, 9]])


def sorting():
    cases = []

    def case(op, fn, inputs, *args):
        c = {'op': op, 'args': list(args), 'inputs': [t(x) for x in inputs]}
        try:
            out = fn(*inputs)
            c['outputs'] = [t(o) for o in (out if isinstance(out, (tuple, list)) else (out,))]
        except (RuntimeError, IndexError, ValueError) as e:
            c['error'] = str(e).split('\n')[0]
        cases.append(c)

    for x in (TIES, INTS):
        for dim in (-1, 0, 1):
            n = x.shape[dim]
            for k in sorted({1, 2, n}):
                for largest in (True, False):
                    case('topk', lambda a: torch.topk(a, k, dim, largest), [x], k, dim, largest)
            for desc in (False, True):
                case('sort', lambda a: torch.sort(a, dim=dim, descending=desc, stable=True), [x], dim, desc)
                case('argsort', lambda a: torch.argsort(a, dim=dim, descending=desc, stable=True), [x], dim, desc)
    case('topk', lambda a: torch.topk(a, 7, 1), [TIES], 7, 1, True)
    case('topk', lambda a: torch.topk(a, 1, 2), [TIES], 1, 2, True)
    bounds = torch.tensor([-1., 0, 2, 2, 5])
    vals = torch.tensor([[-3., -1, 0, 1], [2, 4.5, 5, 9], [float('nan'), 2, -0., 0.5]])
    for right in (False, True):
        case('bucketize', lambda a, b: torch.bucketize(a, b, right=right), [vals, bounds], right)
        case('bucketize', lambda a, b: torch.bucketize(a, b, right=right), [INTS, torch.tensor([0, 2, 5])], right)
        seq = torch.tensor([[0., 1, 2, 3], [-5, 0, 0, 5], [1, 1, 1, 1]])
        case('searchsorted', lambda s_, v: torch.searchsorted(s_, v, right=right), [seq, vals], right)
        case('searchsorted', lambda s_, v: torch.searchsorted(s_, v, right=right), [bounds, vals], right)
        # PyTorch's binary search where a count would differ: NaNs sorted last, a sequence out of order
        nan_seq = torch.tensor([[1., 2, float('nan'), float('nan')], [3, 1, 2, 0], [0, float('nan'), 1, 2]])
        case('searchsorted', lambda s_, v: torch.searchsorted(s_, v, right=right), [nan_seq, vals], right)
    case('bucketize', lambda a, b: torch.bucketize(a, b), [vals, seq], False)
    case('searchsorted', lambda s_, v: torch.searchsorted(s_, v), [seq, torch.zeros(2, 4)], False)
    cls = torch.tensor([[0, 3, 1], [2, 2, 0]])
    for n in (-1, 4, 6):
        case('one_hot', lambda c: torch.nn.functional.one_hot(c, n), [cls], n)
    case('one_hot', lambda c: torch.nn.functional.one_hot(c, 3), [cls], 3)
    case('one_hot', lambda c: torch.nn.functional.one_hot(c, 5), [torch.tensor([1, -1])], 5)
    x = torch.arange(12.).reshape(2, 3, 2) - 4
    for reps, dim in ((2, None), (3, 0), (1, 1), (0, 2), (2, -1)):
        case('repeat_interleave', lambda a: torch.repeat_interleave(a, reps, dim), [x], reps, dim)
    for reps, dim in (([1, 0, 3], 1), ([2, 1], 0), ([2], 2), (list(range(12)), None), ([1, 2], 1), ([1, -1, 1], 1)):
        case('repeat_interleave', lambda a, r: torch.repeat_interleave(a, r, dim), [x, torch.tensor(reps)], None, dim)
    for row, col, off in ((3, 3, 0), (4, 3, 1), (3, 5, -1), (1, 1, 0), (0, 4, 0), (5, 2, -7), (5, 2, 9), (3, 4, 2)):
        case('tril_indices', lambda: torch.tril_indices(row, col, off), [], row, col, off)
        case('triu_indices', lambda: torch.triu_indices(row, col, off), [], row, col, off)
    img = torch.arange(2 * 8 * 2 * 3.).reshape(2, 8, 2, 3)
    case('pixel_shuffle', lambda a: torch.nn.functional.pixel_shuffle(a, 2), [img], 2)
    case('pixel_shuffle', lambda a: torch.nn.functional.pixel_shuffle(a, 1), [img], 1)
    case('pixel_shuffle', lambda a: torch.nn.functional.pixel_shuffle(a, 3), [torch.arange(2 * 9 * 2 * 1.).reshape(1, 2, 9, 2, 1)], 3)
    case('pixel_shuffle', lambda a: torch.nn.functional.pixel_shuffle(a, 3), [img], 3)
    case('pixel_unshuffle', lambda a: torch.nn.functional.pixel_unshuffle(a, 2), [torch.arange(2 * 2 * 4 * 6.).reshape(2, 2, 4, 6)], 2)
    case('pixel_unshuffle', lambda a: torch.nn.functional.pixel_unshuffle(a, 3), [torch.arange(3 * 3 * 6.).reshape(3, 3, 6)], 3)
    case('pixel_unshuffle', lambda a: torch.nn.functional.pixel_unshuffle(a, 2), [torch.arange(2 * 3 * 4.).reshape(2, 3, 4)], 2)
    return {'torch_version': torch.__version__, 'cases': cases}


def recorder(seed):
    """g, cases, case, rnd: a generator from seed, the cases list, and case(op, fn, inputs, args, grads),
    which appends to cases fn's output on inputs and, for the inputs listed in grads, the gradients of
    (output * g).sum() for a random g from generator g; rnd(*shape) is torch.randn from g."""
    g = torch.Generator().manual_seed(seed)
    cases = []

    def case(op, fn, inputs, args, grads=(0,)):
        xs = [x.clone().requires_grad_(k in grads) for k, x in enumerate(inputs)]
        y = fn(*xs)
        gy = torch.randn(y.shape, generator=g)
        if grads:
            (y * gy).sum().backward()
        cases.append({'op': op, 'args': args, 'inputs': [t(x.detach()) for x in xs], 'g': t(gy), 'output': t(y.detach()),
                      'grads': [t(xs[k].grad) if k in grads else None for k in range(len(xs))]})
    return g, cases, case, lambda *shape: torch.randn(*shape, generator=g)


def losses():
    F = torch.nn.functional
    g, cases, case, rnd = recorder(5)

    a, b = rnd(3, 4), rnd(3, 4)
    b[0, :2] = a[0, :2] + torch.tensor([0.2, -0.7])  # differences below and above beta / delta
    for red in ('mean', 'sum', 'none'):
        case('l1Loss', lambda x, y: F.l1_loss(x, y, reduction=red), [a, b], {'reduction': red}, (0, 1))
    for beta in (1.0, 0.5, 0.0):
        case('smoothL1Loss', lambda x, y: F.smooth_l1_loss(x, y, beta=beta), [a, b], {'reduction': 'mean', 'beta': beta}, (0, 1))
    for delta in (1.0, 2.5):
        case('huberLoss', lambda x, y: F.huber_loss(x, y, reduction='sum', delta=delta), [a, b], {'reduction': 'sum', 'delta': delta}, (0, 1))
    p = torch.sigmoid(rnd(2, 5))
    p[0, 0], p[1, 1] = 0.0, 1.0  # the logs clamp at -100
    tgt = (rnd(2, 5) > 0).float()
    tgt[0, 0], tgt[1, 1] = 1.0, 0.0
    w = torch.rand(5, generator=g)
    case('binaryCrossEntropy', lambda x, y: F.binary_cross_entropy(x, y), [p, tgt], {'reduction': 'mean'}, ())
    case('binaryCrossEntropy', lambda x, y, ww: F.binary_cross_entropy(x, y, weight=ww, reduction='none'), [torch.sigmoid(rnd(2, 5)), tgt, w],
         {'reduction': 'none', 'weight': True}, (0,))
    logits = rnd(3, 5) * 4
    logits[0, 0], logits[1, 1] = 100.0, -100.0
    soft = torch.rand(3, 5, generator=g)
    case('binaryCrossEntropyWithLogits', lambda x, y: F.binary_cross_entropy_with_logits(x, y), [logits, soft], {'reduction': 'mean'}, (0, 1))
    case('binaryCrossEntropyWithLogits', lambda x, y, ww, pw: F.binary_cross_entropy_with_logits(x, y, weight=ww, pos_weight=pw, reduction='sum'),
         [logits, soft, w, torch.rand(5, generator=g) * 3], {'reduction': 'sum', 'weight': True, 'posWeight': True}, (0, 1))
    lp = torch.log_softmax(rnd(4, 6), 1)
    q = torch.softmax(rnd(4, 6), 1)
    q[0, :3] = 0
    for red in ('mean', 'batchmean', 'sum', 'none'):  # the target's gradient is -inf at its zeros: the input's only
        case('klDiv', lambda x, y: F.kl_div(x, y, reduction=red), [lp, q], {'reduction': red, 'logTarget': False}, (0,))
    case('klDiv', lambda x, y: F.kl_div(x, y, reduction='sum'), [lp, torch.softmax(rnd(4, 6), 1)], {'reduction': 'sum', 'logTarget': False}, (0, 1))
    case('klDiv', lambda x, y: F.kl_div(x, y, reduction='batchmean', log_target=True), [lp, torch.log_softmax(rnd(4, 6), 1)],
         {'reduction': 'batchmean', 'logTarget': True}, (0, 1))
    u, v = rnd(4, 3), rnd(4, 3)
    v[1] = 0  # a zero vector: its norm clamps at eps
    case('cosineSimilarity', lambda x, y: F.cosine_similarity(x, y), [u, v], {'dim': 1, 'eps': 1e-8}, (0, 1))
    case('cosineSimilarity', lambda x, y: F.cosine_similarity(x, y, dim=-1, eps=1e-3), [rnd(2, 3, 5), rnd(3, 5)], {'dim': -1, 'eps': 1e-3}, (0, 1))
    case('cosineSimilarity', lambda x, y: F.cosine_similarity(x, y, dim=0), [rnd(4, 2), rnd(4, 2)], {'dim': 0, 'eps': 1e-8}, (0, 1))
    # the margin losses: targets of 1 and -1 (hinge embedding's other values count both ways), margins
    # where some terms clamp to 0 and some do not
    pm = torch.where(rnd(3, 4) > 0, 1.0, -1.0)
    pm[0, 0] = 0.5
    for m, red in ((0.0, 'mean'), (0.5, 'sum'), (-0.25, 'none')):
        case('marginRankingLoss', lambda x, y, t: F.margin_ranking_loss(x, y, t, margin=m, reduction=red), [rnd(3, 4), rnd(3, 4), pm],
             {'margin': m, 'reduction': red}, (0, 1))
    case('marginRankingLoss', lambda x, y, t: F.margin_ranking_loss(x, y, t), [rnd(5), rnd(1), torch.where(rnd(5) > 0, 1.0, -1.0)],
         {'margin': 0.0, 'reduction': 'mean'}, (0, 1))
    for m, red in ((1.0, 'mean'), (0.3, 'none'), (2.0, 'sum')):
        case('hingeEmbeddingLoss', lambda x, t: F.hinge_embedding_loss(x, t, margin=m, reduction=red), [rnd(3, 4), pm], {'margin': m, 'reduction': red}, (0,))
    for red in ('mean', 'none'):
        case('softMarginLoss', lambda x, t: F.soft_margin_loss(x, t, reduction=red), [rnd(3, 4) * 3, pm], {'reduction': red}, (0,))
    ce = torch.where(rnd(5) > 0, 1.0, -1.0)
    for m, red in ((0.0, 'mean'), (0.2, 'none')):
        case('cosineEmbeddingLoss', lambda x, y, t: F.cosine_embedding_loss(x, y, t, margin=m, reduction=red), [rnd(5, 3), rnd(5, 3), ce],
             {'margin': m, 'reduction': red}, (0, 1))
    case('cosineEmbeddingLoss', lambda x, y, t: F.cosine_embedding_loss(x, y, t), [rnd(4), rnd(4), torch.tensor(-1.0)], {'margin': 0.0, 'reduction': 'mean'}, (0, 1))
    for kw in ({}, {'margin': 0.5, 'p': 1.0, 'reduction': 'none'}, {'swap': True, 'eps': 1e-3, 'reduction': 'sum'}, {'margin': 3.0, 'p': 3.0}):
        case('tripletMarginLoss', lambda a, p, n: F.triplet_margin_loss(a, p, n, **kw), [rnd(4, 3), rnd(4, 3), rnd(4, 3)], kw, (0, 1, 2))
    # added after the others (the generator's draws before them stay the same): the multi-label and
    # multi-class margin losses (targets ended by -1, a class listed twice), Poisson and Gaussian NLL
    ml = (rnd(3, 5) > 0).float()
    for red in ('mean', 'none'):
        case('multilabelSoftMarginLoss', lambda x, t: F.multilabel_soft_margin_loss(x, t, reduction=red), [rnd(3, 5) * 2, ml], {'reduction': red}, (0,))
    case('multilabelSoftMarginLoss', lambda x, t, ww: F.multilabel_soft_margin_loss(x, t, weight=ww, reduction='sum'),
         [rnd(3, 5), ml, torch.rand(5, generator=g)], {'reduction': 'sum', 'weight': True}, (0,))
    mlt = torch.tensor([[3, 0, -1, 1, 2], [1, 1, 4, -1, -1], [-1, 2, 0, 0, 0]])
    for red in ('mean', 'sum', 'none'):
        case('multilabelMarginLoss', lambda x, t: F.multilabel_margin_loss(x, t, reduction=red), [rnd(3, 5), mlt], {'reduction': red}, (0,))
    case('multilabelMarginLoss', lambda x, t: F.multilabel_margin_loss(x, t), [rnd(4), torch.tensor([2, 0, -1, 3])], {'reduction': 'mean'}, (0,))
    mt = torch.tensor([2, 0, 4, 4])
    for kw in ({}, {'p': 2, 'margin': 0.5, 'reduction': 'sum'}, {'margin': 2.0, 'reduction': 'none'}):
        case('multiMarginLoss', lambda x, t: F.multi_margin_loss(x, t, **kw), [rnd(4, 5), mt], {**kw}, (0,))
    case('multiMarginLoss', lambda x, t, ww: F.multi_margin_loss(x, t, weight=ww, p=2), [rnd(4, 5), mt, torch.rand(5, generator=g)], {'p': 2, 'weight': True}, (0,))
    counts = torch.tensor([[0., 1, 2, 5], [3, 0, 1, 8]])
    for kw in ({}, {'full': True, 'reduction': 'sum'}, {'log_input': False, 'reduction': 'none'}, {'log_input': False, 'full': True, 'eps': 1e-3}):
        x = rnd(2, 4) if kw.get('log_input', True) else torch.rand(2, 4, generator=g) * 3
        args = {'logInput' if k == 'log_input' else k: v for k, v in kw.items()}
        case('poissonNllLoss', lambda a, t: F.poisson_nll_loss(a, t, **kw), [x, counts], args, (0,))
    var = torch.rand(3, 4, generator=g) + 0.1
    var[0, 0] = 1e-9  # clamped at eps
    for v, kw in ((var, {}), (var[:, :1], {'full': True, 'reduction': 'sum'}), (var[:, 0], {'eps': 1e-3, 'reduction': 'none'})):
        case('gaussianNllLoss', lambda a, t, s: F.gaussian_nll_loss(a, t, s, **kw), [rnd(3, 4), rnd(3, 4), v.clone()], kw, (0, 1, 2))
    return {'torch_version': torch.__version__, 'cases': cases}


def pools_norms():
    F = torch.nn.functional
    g, cases, case, _ = recorder(6)

    x = torch.randn(2, 3, 11, generator=g)
    for k, st, p, d, ceil in ((3, None, 0, 1, False), (3, 2, 1, 1, False), (2, 2, 0, 1, True), (3, 2, 1, 2, True), (4, 3, 2, 1, True)):
        case('maxPool1d', lambda a: F.max_pool1d(a, k, stride=st, padding=p, dilation=d, ceil_mode=ceil), [x],
             {'kernelSize': k, 'stride': st, 'padding': p, 'dilation': d, 'ceilMode': ceil})
    for k, st, p, ceil, cip in ((3, None, 0, False, True), (3, 2, 1, False, False), (4, 3, 2, True, True), (4, 3, 2, True, False)):
        case('avgPool1d', lambda a: F.avg_pool1d(a, k, stride=st, padding=p, ceil_mode=ceil, count_include_pad=cip), [x],
             {'kernelSize': k, 'stride': st, 'padding': p, 'ceilMode': ceil, 'countIncludePad': cip})
    for out in (1, 3, 4, 11, 13):
        case('adaptiveAvgPool1d', lambda a: F.adaptive_avg_pool1d(a, out), [x], {'outputSize': out})
    case('adaptiveAvgPool1d', lambda a: F.adaptive_avg_pool1d(a, 5), [torch.randn(3, 7, generator=g)], {'outputSize': 5})
    w, b = torch.rand(3, generator=g) + 0.5, torch.randn(3, generator=g)
    case('instanceNorm', lambda a: F.instance_norm(a), [x], {})
    case('instanceNorm', lambda a, ww, bb: F.instance_norm(a, weight=ww, bias=bb, eps=1e-3), [torch.randn(2, 3, 4, 5, generator=g), w, b],
         {'weight': True, 'bias': True, 'eps': 1e-3}, (0, 1, 2))
    return {'torch_version': torch.__version__, 'cases': cases}


def conv_pools_3d():
    """conv3d (strides, padding, 'same', dilation, groups, bias or not, an unbatched input) and the 3-D
    pools (max: strides, padding, dilation, ceil_mode; avg: count_include_pad, ceil_mode; adaptive:
    uneven cells, None keeping a size) on odd sizes, values and gradients."""
    F = torch.nn.functional
    _, cases, case, rnd = recorder(7)

    x = rnd(1, 4, 3, 5, 4)
    for wshape, st, p, d, gr, bias in (((3, 4, 3, 3, 3), 1, 1, 1, 1, True), ((2, 4, 2, 3, 1), (2, 1, 2), (1, 0, 1), 1, 1, False),
                                       ((4, 2, 3, 2, 3), 1, 'same', (2, 1, 1), 2, True), ((8, 1, 1, 3, 3), (1, 2, 2), (0, 2, 1), (1, 2, 1), 4, True),
                                       ((3, 4, 4, 1, 1), (2, 1, 1), (2, 0, 0), 1, 1, False)):
        w, b = rnd(*wshape), rnd(wshape[0]) if bias else None
        args = {'stride': st, 'padding': p, 'dilation': d, 'groups': gr, 'bias': bias}
        if bias:
            case('conv3d', lambda a, ww, bb: F.conv3d(a, ww, bb, stride=st, padding=p, dilation=d, groups=gr), [x, w, b], args, (0, 1, 2))
        else:
            case('conv3d', lambda a, ww: F.conv3d(a, ww, None, stride=st, padding=p, dilation=d, groups=gr), [x, w], args, (0, 1))
    case('conv3d', lambda a, ww, bb: F.conv3d(a, ww, bb, padding=1), [rnd(2, 3, 4, 3), rnd(2, 2, 3, 3, 3), rnd(2)],
         {'stride': 1, 'padding': 1, 'dilation': 1, 'groups': 1, 'bias': True}, (0, 1, 2))
    for k, st, p, d, ceil in ((3, None, 0, 1, False), ((2, 3, 3), 2, 1, 1, False), (2, 2, 0, 1, True), ((3, 2, 3), (2, 1, 2), (1, 1, 1), (1, 2, 1), True)):
        case('maxPool3d', lambda a: F.max_pool3d(a, k, stride=st, padding=p, dilation=d, ceil_mode=ceil), [x],
             {'kernelSize': k, 'stride': st, 'padding': p, 'dilation': d, 'ceilMode': ceil})
    for k, st, p, ceil, cip in ((3, None, 0, False, True), ((3, 3, 2), 2, 1, False, False), ((2, 4, 3), (1, 3, 2), (1, 2, 1), True, True),
                                ((2, 4, 3), (1, 3, 2), (1, 2, 1), True, False)):
        case('avgPool3d', lambda a: F.avg_pool3d(a, k, stride=st, padding=p, ceil_mode=ceil, count_include_pad=cip), [x],
             {'kernelSize': k, 'stride': st, 'padding': p, 'ceilMode': ceil, 'countIncludePad': cip})
    for out in (1, (2, 3, 3), (None, 2, 3), (3, 5, 4), (4, 7, 5)):
        case('adaptiveAvgPool3d', lambda a: F.adaptive_avg_pool3d(a, out), [x], {'outputSize': out})
    case('adaptiveAvgPool3d', lambda a: F.adaptive_avg_pool3d(a, (2, 2, 3)), [rnd(2, 3, 5, 4)], {'outputSize': [2, 2, 3]})
    for xs, wshape, st, p, op, d, gr, bias in (((1, 4, 3, 5, 4), (4, 2, 3, 2, 3), (2, 1, 2), (1, 0, 1), (1, 0, 1), 1, 1, True),
                                             ((2, 4, 2, 3, 3), (4, 3, 2, 3, 2), 1, (0, 1, 0), 0, (2, 1, 2), 2, False),
                                             ((2, 3, 4, 2), (2, 1, 1, 2, 2), (3, 2, 1), 0, (2, 1, 0), 1, 2, True)):  # unbatched
        a0, w, b = rnd(*xs), rnd(*wshape), rnd(wshape[1] * gr) if bias else None
        args = {'stride': st, 'padding': p, 'outputPadding': op, 'dilation': d, 'groups': gr, 'bias': bias}
        if bias:
            case('convTranspose3d', lambda a, ww, bb: F.conv_transpose3d(a, ww, bb, stride=st, padding=p, output_padding=op, groups=gr, dilation=d),
                 [a0, w, b], args, (0, 1, 2))
        else:
            case('convTranspose3d', lambda a, ww: F.conv_transpose3d(a, ww, None, stride=st, padding=p, output_padding=op, groups=gr, dilation=d),
                 [a0, w], args, (0, 1))
    short = {'inputs', 'grads'}  # each float32 as its shortest round-tripping decimal: a third of the bytes
    cases = [{k: ([e and short_floats(e) for e in v] if k in short else short_floats(v) if k in ('g', 'output') else v) for k, v in c.items()}
             for c in cases]
    return {'torch_version': torch.__version__, 'cases': cases}


def bags_pools():
    F = torch.nn.functional
    g, cases, case, _ = recorder(7)

    def ids(*values):
        return torch.tensor(values, dtype=torch.int64)

    def short(*shape):  # two decimals: short fixtures
        return (torch.randn(*shape, generator=g) * 100).round() / 100

    x2 = short(1, 2, 5, 7)
    ties = torch.tensor([[[[0., 5, 1, 5], [5, 0, 5, 2], [3, 3, 3, 3]]]])  # maxima twice in a window: the first in row-major order
    for img, out in ((x2, [2, 3]), (x2, 1), (x2, [5, 7]), (x2, [3, None]), (x2, [6, 9]), (ties, [1, 2]), (ties, [2, 1])):
        size = tuple(out) if isinstance(out, list) else out
        case('adaptiveMaxPool2d', lambda a: F.adaptive_max_pool2d(a, size), [img], {'outputSize': out})
        case('adaptiveMaxPool2dIndices', lambda a: F.adaptive_max_pool2d(a, size, return_indices=True)[1], [img], {'outputSize': out}, ())
    x1 = short(1, 2, 11)
    for out in (3, 4, 1, 13):
        case('adaptiveMaxPool1d', lambda a: F.adaptive_max_pool1d(a, out), [x1], {'outputSize': out})
        case('adaptiveMaxPool1dIndices', lambda a: F.adaptive_max_pool1d(a, out, return_indices=True)[1], [x1], {'outputSize': out}, ())
    w = short(10, 4)
    flat, offsets = ids(1, 4, 4, 9, 0, 2, 2, 7), ids(0, 3, 3, 6)  # bag 1 is empty
    rows = ids(1, 4, 4, 9, 0, 2, 7, 2, 2, 3, 5, 8).reshape(3, 4)
    for mode in ('sum', 'mean', 'max'):
        case('embeddingBag', lambda i, ww: F.embedding_bag(i, ww, mode=mode), [rows, w], {'mode': mode}, (1,))
        case('embeddingBag', lambda i, ww, o: F.embedding_bag(i, ww, o, mode=mode), [flat, w, offsets], {'mode': mode}, (1,))
        case('embeddingBag', lambda i, ww: F.embedding_bag(i, ww, mode=mode, padding_idx=2), [rows, w], {'mode': mode, 'paddingIdx': 2}, (1,))
        case('embeddingBag', lambda i, ww, o: F.embedding_bag(i, ww, o, mode=mode, padding_idx=2), [flat, w, offsets], {'mode': mode, 'paddingIdx': 2}, (1,))
        case('embeddingBag', lambda i, ww, o: F.embedding_bag(i, ww, o, mode=mode, include_last_offset=True), [flat, w, ids(0, 3, 5, 8)],
             {'mode': mode, 'includeLastOffset': True}, (1,))
    psw = torch.rand(8, generator=g)
    case('embeddingBag', lambda i, ww, o, p: F.embedding_bag(i, ww, o, mode='sum', per_sample_weights=p), [flat, w, offsets, psw],
         {'mode': 'sum', 'perSampleWeights': True}, (1, 3))
    case('embeddingBag', lambda i, ww, p: F.embedding_bag(i, ww, mode='sum', per_sample_weights=p), [rows, w, torch.rand(3, 4, generator=g)],
         {'mode': 'sum', 'perSampleWeights': True}, (1, 2))
    x3 = short(1, 2, 5, 4, 6)
    ties3 = torch.tensor([[[[[1., 4], [4, 0]], [[4, 2], [3, 4]]], [[[0., 0], [0, 0]], [[0, 0], [0, 0]]]]])  # [1, 2, 2, 2, 2]
    for vol, out in ((x3, [2, 3, 4]), (x3, 1), (x3, [5, 4, 6]), (x3, [3, None, 4]), (x3, [7, 5, 9]), (ties3, 1), (ties3, [1, 2, 1]),
                     (x3[0], [2, 3, 4])):  # the last unbatched
        size = tuple(out) if isinstance(out, list) else out
        case('adaptiveMaxPool3d', lambda a: F.adaptive_max_pool3d(a, size), [vol], {'outputSize': out})
        case('adaptiveMaxPool3dIndices', lambda a: F.adaptive_max_pool3d(a, size, return_indices=True)[1], [vol], {'outputSize': out}, ())
    # NaN in a window: PyTorch's kernel takes a value that is greater or NaN, so of several NaN the
    # last in row-major order (torch.max(dim) keeps the first); "NaN" strings, as fixtureNumber reads
    nan = float('nan')
    named = lambda x: {'shape': list(x.shape), 'data': ['NaN' if v != v else v for v in x.flatten().tolist()]}
    img = torch.tensor([[[[1., nan, 3, nan, 0], [5, nan, 9, 1, 2], [nan, 2, 2, 8, nan], [4, 4, -1, nan, 6]]]])
    vol = torch.cat([img, img.flip(-1)]).reshape(1, 1, 2, 4, 5)
    nans = []
    for x, out in ((img, 1), (img, [2, 3]), (img, [3, 2]), (img, [4, 5]), (vol, 1), (vol, [1, 2, 3]), (vol, [2, 3, 2])):
        pool = F.adaptive_max_pool3d if x.dim() == 5 else F.adaptive_max_pool2d
        v, i = pool(x, tuple(out) if isinstance(out, list) else out, return_indices=True)
        nans.append({'outputSize': out, 'input': named(x), 'values': named(v), 'indices': i.flatten().tolist()})
    return {'torch_version': torch.__version__, 'cases': cases, 'nan': nans}


def write(name, value):
    os.makedirs(DIR, exist_ok=True)
    with open(os.path.join(DIR, name), 'w') as f:
        json.dump(value, f, separators=(',', ':'))
        f.write('\n')


if __name__ == '__main__':
    write('roll.json', rolls())
    write('meshgrid.json', meshgrids())
    write('indexing_linalg.json', indexing_linalg())
    write('sort.json', sorting())
    write('losses.json', losses())
    write('pools_norms.json', pools_norms())
    write('conv_pools_3d.json', conv_pools_3d())
    write('bags_pools.json', bags_pools())
