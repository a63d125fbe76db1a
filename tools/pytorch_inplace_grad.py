#!/usr/bin/env python3
"""PyTorch's autograd through in-place writes (its version counter and CopySlices), as a fixture
for tests/js/inplace-grad.test.mjs.

Each case is a small program written the same way here and in the test (by name): leaves that
require grad, a tensor the program makes (zeros, a clone), written through views (copy_, zero_,
mul_, add_, fill_, masked_fill_, index_put_), read before and after the writes. The fixture holds
the leaves' values, the outputs' values and each leaf's gradient of sum(out_k * w_k) over the
outputs (w_k a ramp 0.5, 1, 1.5, ... of out_k's shape, so a gradient sent to the wrong element
shows), or the first line of the error PyTorch raises (at the write, or at backward).

Writes tests/js/fixtures/pytorch/ops/inplace_grad.json:
  { "torch_version", "cases": [ { "name", "leaves": {name: {"shape", "data"}},
    "outputs": [{"shape", "data"}], "grads": {name: [...]} } or { "name", "leaves", "error", "at" } ] }

Run with a python3 that imports torch (Debian's python3-torch, /usr/bin/python3); CI reads the
committed JSON and never runs this:
    /usr/bin/python3 tools/pytorch_inplace_grad.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_reference import write_json  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'pytorch', 'ops', 'inplace_grad.json')


def ramp(shape, start=-1.25, step=0.75):
    n = 1
    for s in shape:
        n *= s
    return (torch.arange(n, dtype=torch.float32) * step + start).reshape(shape)


LEAVES = {'x': ramp([3, 4]), 'v': ramp([4], 0.5, -0.5), 'z': ramp([2, 4], 2.0, -0.25), 'a': ramp([3], 1.5, 0.5)}


def zeros_slice_copy(L):  # a mask or a buffer filled in slices (m = zeros; m[a:b] = f(x))
    m = torch.zeros(6)
    m[1:4].copy_(L['a'] * 2)
    m[4:].copy_(L['a'][:2].exp())
    return [m, m.sum().reshape(1)]


def zeros_rows_copy(L):  # rows of a new tensor from two sources, one of them through a transpose
    m = torch.zeros(4, 3)
    m[0].copy_(L['a'])
    m.t()[1, 1:3].copy_(L['v'][:2] * L['a'][1])
    return [m * m]


def clone_slice_zero(L):  # y = x.clone(); y[:, 1:3].zero_()
    y = L['x'].clone()
    y[:, 1:3].zero_()
    return [y * L['x']]


def clone_slice_mul(L):  # y[1:, :2] *= 2 on a clone
    y = L['x'] * 1.5
    y[1:, :2].mul_(2)
    return [y]


def clone_select_add(L):  # x[:, 0] += v written on a copy (PyTorch's y[:, 0] += v)
    y = L['x'].clone()
    y[:, 0] += L['a']
    return [y.tanh()]


def clone_index_put(L):  # index_put_ (y[idx] = z) into a clone
    y = L['x'].clone()
    y.index_put_((torch.tensor([2, 0]),), L['z'])
    return [y]


def clone_index_put_accumulate(L):
    y = L['x'].clone()
    y.index_put_((torch.tensor([1, 1]),), L['z'], accumulate=True)
    return [y]


def clone_view_masked_fill(L):  # masked_fill_ through a view of a clone
    y = L['x'].clone()
    y[1].masked_fill_(torch.tensor([True, False, False, True]), -2.0)
    return [y.sigmoid()]


def read_before_write(L):  # a view read before a write through another view keeps its old values
    y = L['x'].clone()
    before = y[0] * 3
    y[0:2, 1:].fill_(0.5)
    return [before, y]


def other_view_after_write(L):  # a view made before the write, read after it, sees the new values
    y = L['z'] + 1
    r0, r1 = y[0], y[1]
    r0.copy_(L['v'] * 2)
    return [r1 * r0, y]


def view_of_view(L):  # a write through a view of a view, then a slice assignment over it
    y = L['x'].clone()
    y.t()[1:3][0].copy_(L['a'])
    y[2, 1:3] = L['v'][1:3]
    return [y]


def write_twice(L):  # two writes at overlapping places, the second one from the first's result
    m = torch.zeros(2, 4)
    m[0].copy_(L['v'])
    m[:, 1:3].copy_(m[0, 0:2] * L['z'][:, 0:2])
    return [m]


def write_twice_add(L):  # the same with an add, which saves nothing: the gradient goes through both writes
    m = torch.zeros(2, 4)
    m[0].copy_(L['v'])
    m[:, 1:3].copy_(m[0, 0:2] + L['z'][:, 0:2])
    return [m]


def leaf_view_write(L):
    L['x'][0:2].zero_()
    return []


def leaf_write(L):
    L['a'].mul_(2)
    return []


def saved_input_changed(L):  # mul saved y; a write into y before backward
    y = L['x'].clone()
    w = y * y
    y[1].zero_()
    return [w]


def saved_output_changed(L):  # exp saved its output; a write into it
    y = L['a'].exp()
    y[0:2].mul_(2)
    return [y]


def as_strided_windows(L):  # overlapping windows of a row (sliding windows over x's storage)
    return [L['x'].as_strided((3, 3), (1, 1), 2) * L['a']]


def result_fill(L):  # fill_ and copy_ of a constant into op results nothing else refers to: they keep
    y = L['x'] * 2     # requiring grad (FillBackward, CopyBackwards) and send zeros to what made them
    y.fill_(0.5)
    w = L['a'] * 3
    w.copy_(torch.tensor([1.0, -2.0, 3.0]))
    return [y, y * L['a'].unsqueeze(1), w * L['v'][:3]]


def inplace_reads_saved(L):  # mul_, sin_, fmod_ on an intermediate: each backward uses the values
    y = L['x'] * 1.5            # before its write (PyTorch saves the original self)
    y.mul_(L['v'])
    y.sin_()
    y[1:].fmod_(0.75)
    return [y]


def as_strided_of_view(L):  # no storage_offset: the view's own; the positions count x's storage
    xs = L['x'][1:]
    return [xs.as_strided((2, 2), (4, 1)), xs.t().as_strided((3,), (5,), 1)]


def as_strided_of_expanded(L):  # an expanded input: elements that share a position share its gradient
    e = L['v'].unsqueeze(0).expand(3, 4)
    return [e.as_strided((2, 3), (1, 1), 0)]


def as_strided_scatter_into_clone(L):
    return [torch.as_strided_scatter(L['x'] * 2, L['z'][:, 1:4] + 1, (2, 3), (1, 4), 1)]


def write_then_as_strided(L):  # a write through an as_strided view of a clone
    y = L['x'].clone()
    y.as_strided((2, 2), (5, 1), 1).copy_(L['z'][:, :2])
    return [y]


CASES = [as_strided_windows, as_strided_of_view, as_strided_of_expanded, as_strided_scatter_into_clone, write_then_as_strided,
         zeros_slice_copy, zeros_rows_copy, clone_slice_zero, clone_slice_mul, clone_select_add, clone_index_put,
         clone_index_put_accumulate, clone_view_masked_fill, read_before_write, other_view_after_write, view_of_view,
         write_twice, write_twice_add, leaf_view_write, leaf_write, saved_input_changed, saved_output_changed, result_fill,
         inplace_reads_saved]


def main():
    torch.set_num_threads(1)
    cases = []
    for fn in CASES:
        leaves = {k: v.clone().requires_grad_() for k, v in LEAVES.items()}
        case = {'name': fn.__name__, 'leaves': {k: {'shape': list(v.shape), 'data': v.flatten().tolist()} for k, v in LEAVES.items()}}
        try:
            outs = fn(leaves)
        except RuntimeError as e:
            case.update(error=str(e).split('\n')[0], at='write')
            cases.append(case)
            continue
        loss = sum(((o * ramp(list(o.shape), 0.5, 0.5)).sum() for o in outs), torch.zeros(()))
        case['outputs'] = [{'shape': list(o.shape), 'data': o.detach().flatten().tolist()} for o in outs]
        try:
            loss.backward()
        except RuntimeError as e:
            case.update(error=str(e).split('\n')[0], at='backward')
            cases.append(case)
            continue
        case['grads'] = {k: (v.grad.flatten().tolist() if v.grad is not None else None) for k, v in leaves.items()}
        cases.append(case)
    write_json(OUT, {'torch_version': torch.__version__, 'cases': cases})
    print(f'{len(cases)} cases')


if __name__ == '__main__':
    main()
