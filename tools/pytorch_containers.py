#!/usr/bin/env python3
"""PyTorch's containers edited in place (insert, pop, slices, update, clear), as a fixture for
tests/js/containers.test.mjs: the state-dict keys, with each tensor's shape (which tells the
modules apart), after every step of a fixed script that the test replays with om.nn.

Steps are [name, [[key, shape], ...]] in the order the script runs them. The script:
  ModuleList of Linear(1,2), ReLU, Linear(2,3), Tanh, Linear(3,4): insert(1, Linear(4,5)),
    insert(6, Linear(5,6)) (at the end), pop(0), pop(-2), del [1], [-1] = Linear(9,8), the slices [1:4], [::-2],
    [-2:], [10:], then extend([Linear(6,7)]);
  Sequential of Linear(1,2), ReLU, Linear(2,3): append(Linear(3,4)), insert(0, Linear(7,1)),
    insert(-1, Linear(8,9)), pop(2), the slices [1:3] (names kept), [::2];
  Sequential(OrderedDict(conv=Linear(1,2), act=ReLU, fc=Linear(2,3))): the slice [1:], then
    pop(0) (every name becomes a number again);
  ModuleDict(a=Linear(1,2), b=Linear(2,3)): update([('c', Linear(3,4)), ('a', Linear(4,5))]),
    update(OrderedDict(d=Linear(5,6))), pop('b'), clear();
  ParameterList of zeros(1), zeros(2), zeros(3): the slices [1:], [::-1], append(zeros(4));
  ParameterDict(dict(b=zeros(2), a=zeros(1))): update(dict(z=zeros(3), c=zeros(4))) (a dict's
    names sorted), update(OrderedDict(y=zeros(5), x=zeros(6))) (kept in order), pop('c'), clear().
(ModuleList.insert with a negative index raises KeyError in PyTorch 1.13, so the script inserts
at negative indices only into a Sequential.)
Writes tests/js/fixtures/pytorch/ops/containers.json: { "torch_version", "steps": [[name, keys]] }.

Run with a python3 that imports torch (Debian's python3-torch, /usr/bin/python3); CI reads the
committed JSON and never runs this:
    /usr/bin/python3 tools/pytorch_containers.py
"""
import os
import sys
from collections import OrderedDict

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_reference import write_json  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'pytorch', 'ops', 'containers.json')


def keys(m):
    return [[k, list(v.shape)] for k, v in m.state_dict().items()]


def main():
    steps = []

    def step(name, m):
        steps.append([name, keys(m)])

    z = lambda n: nn.Parameter(torch.zeros(n))  # noqa: E731
    lst = nn.ModuleList([nn.Linear(1, 2), nn.ReLU(), nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 4)])
    lst.insert(1, nn.Linear(4, 5))
    step('list.insert(1)', lst)
    lst.insert(6, nn.Linear(5, 6))
    step('list.insert(6)', lst)
    lst.pop(0)
    step('list.pop(0)', lst)
    lst.pop(-2)
    step('list.pop(-2)', lst)
    del lst[1]
    step('list.del(1)', lst)
    lst[-1] = nn.Linear(9, 8)
    step('list[-1] = m', lst)
    step('list[1:4]', lst[1:4])
    step('list[::-2]', lst[::-2])
    step('list[-2:]', lst[-2:])
    step('list[10:]', lst[10:])
    lst.extend([nn.Linear(6, 7)])
    step('list.extend', lst)

    seq = nn.Sequential(nn.Linear(1, 2), nn.ReLU(), nn.Linear(2, 3))
    seq.append(nn.Linear(3, 4))
    step('seq.append', seq)
    seq.insert(0, nn.Linear(7, 1))
    step('seq.insert(0)', seq)
    seq.insert(-1, nn.Linear(8, 9))
    step('seq.insert(-1)', seq)
    seq.pop(2)
    step('seq.pop(2)', seq)
    step('seq[1:3]', seq[1:3])
    step('seq[::2]', seq[::2])

    named = nn.Sequential(OrderedDict([('conv', nn.Linear(1, 2)), ('act', nn.ReLU()), ('fc', nn.Linear(2, 3))]))
    step('named[1:]', named[1:])
    named.pop(0)
    step('named.pop(0)', named)

    d = nn.ModuleDict({'a': nn.Linear(1, 2), 'b': nn.Linear(2, 3)})
    d.update([('c', nn.Linear(3, 4)), ('a', nn.Linear(4, 5))])
    step('dict.update(pairs)', d)
    d.update(OrderedDict([('d', nn.Linear(5, 6))]))
    step('dict.update(ordered)', d)
    d.pop('b')
    step('dict.pop(b)', d)
    d.clear()
    step('dict.clear', d)

    plist = nn.ParameterList([z(1), z(2), z(3)])
    step('plist[1:]', plist[1:])
    step('plist[::-1]', plist[::-1])
    plist.append(z(4))
    step('plist.append', plist)

    pdict = nn.ParameterDict({'b': z(2), 'a': z(1)})
    step('pdict', pdict)
    pdict.update({'z': z(3), 'c': z(4)})
    step('pdict.update(dict)', pdict)
    pdict.update(OrderedDict([('y', z(5)), ('x', z(6))]))
    step('pdict.update(ordered)', pdict)
    pdict.pop('c')
    step('pdict.pop(c)', pdict)
    pdict.clear()
    step('pdict.clear', pdict)

    write_json(OUT, {'torch_version': torch.__version__, 'steps': steps})


if __name__ == '__main__':
    main()
