#!/usr/bin/env python3
"""PyTorch reference fixtures for tests/js/blocks.test.mjs: torchvision 0.14's building blocks
(ops.misc.Conv2dNormActivation, SqueezeExcitation, MLP, Permute, ops.StochasticDepth and
models.convnext.LayerNorm2d) in one small model, in eval mode, with non-default weights.

Writes tests/js/fixtures/pytorch/blocks/blocks.json in tools/pytorch_reference.py's fixture
format (state dict with PyTorch's keys, inputs, outputs); the outputs are at two input sizes.
Also densenet121_keys.json: torchvision.models.densenet121's state-dict keys and shapes, in
order (no weights), for the port in tests/js/densenet.mjs.
Run with a python3 that imports torch and torchvision (Debian's python3-torch and
python3-torchvision on /usr/bin/python3); CI reads the committed JSON and never runs this:

    /usr/bin/python3 tools/blocks_reference.py
"""
import functools
import os

import torch
from torch import nn
from torchvision.models import densenet121
from torchvision.models.convnext import LayerNorm2d
from torchvision.ops import MLP, Conv2dNormActivation, Permute, SqueezeExcitation, StochasticDepth

from pytorch_reference import OUT_DIR, fixture, randomize_norms, randomize_weights, write_json


class Blocks(nn.Module):
    """Every block and option the JS port takes, in a chain (names as the test's om.nn port)."""

    def __init__(self):
        super().__init__()
        self.stem = Conv2dNormActivation(3, 8, 3, stride=2)  # BatchNorm2d + ReLU, no conv bias
        self.dw = Conv2dNormActivation(8, 8, 3, groups=8, norm_layer=functools.partial(nn.BatchNorm2d, eps=1e-3),
                                       activation_layer=nn.Hardswish)
        self.se = SqueezeExcitation(8, 4, activation=nn.SiLU, scale_activation=nn.Hardsigmoid)
        self.pw = Conv2dNormActivation(8, 6, 1, norm_layer=None, activation_layer=None)  # conv bias
        self.dil = Conv2dNormActivation(6, 6, (3, 5), dilation=2, norm_layer=LayerNorm2d, activation_layer=nn.GELU,
                                        inplace=None)  # GELU takes no inplace
        self.ln = LayerNorm2d(6, eps=1e-6)
        self.sd = StochasticDepth(0.3, 'row')  # identity in eval
        self.perm = Permute([0, 2, 3, 1])
        self.mlp = MLP(6, [10, 5], norm_layer=nn.LayerNorm, activation_layer=nn.GELU, inplace=None, dropout=0.1)

    def forward(self, x):
        x = self.se(self.dw(self.stem(x)))
        x = self.ln(self.dil(self.pw(x)))
        return self.mlp(self.perm(self.sd(x)))


def randomize(module):
    randomize_weights(module)
    randomize_norms(module, tracked=3)


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(0)
    net = Blocks()
    randomize(net)
    net.eval()
    x, x2 = torch.randn(2, 3, 12, 12), torch.randn(1, 3, 9, 14)
    with torch.no_grad():
        fx = fixture('torchvision blocks: Conv2dNormActivation (BN+ReLU stride 2; depthwise, BN eps 1e-3 + Hardswish; '
                     '1x1 no norm/activation with bias; (3, 5) dilation 2 + LayerNorm2d + GELU), SqueezeExcitation '
                     '(SiLU, Hardsigmoid), LayerNorm2d eps 1e-6, StochasticDepth (eval), Permute, MLP (LayerNorm, GELU, dropout)',
                     net, [('x', x), ('x2', x2)], [('y', net(x)), ('y2', net(x2))])
    keys = [[k, list(v.shape)] for k, v in densenet121().state_dict().items()]
    out_dir = os.path.join(OUT_DIR, 'blocks')
    os.makedirs(out_dir, exist_ok=True)
    for name, content in [('blocks', fx), ('densenet121_keys', keys)]:
        write_json(os.path.join(out_dir, f'{name}.json'), content)


if __name__ == '__main__':
    main()
