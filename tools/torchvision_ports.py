#!/usr/bin/env python3
"""PyTorch fixtures for the torchvision ports (examples/torchvision/, checked by
tests/js/torchvision-ports.test.mjs): torchvision 0.14's own model classes, built at small
configurations from fixed seeds, with every weight non-default (pytorch_reference's
randomize_weights) and random BatchNorm/LayerNorm statistics (randomize_norms), in eval mode.

For each model <name> it writes to tests/js/fixtures/torchvision/:

    <name>.safetensors   the state dict, PyTorch's keys exactly (written by safetensors_fixtures.write)
    <name>.json          { "torch_version", "torchvision_version", "model": <what was built>,
                           "keys": the state dict's keys in PyTorch's order (the .safetensors sorts them),
                           "cases": [ { "shape": [N, 3, H, W], "seed": s,
                                        "output": { "shape", "dtype", "data" } }, ... ] }

The inputs are not stored: case k's input is image(shape, seed), values in [-2, 2) that
tests/js/torchvision-ports.test.mjs makes bit for bit the same (each a 24-bit integer over 2^22,
exact in float32), so a fixture stays a few kB however large its images. The sizes include odd
ones, batch 1, sizes far above the smallest, and for Swin sizes on both sides of every window
boundary (padding needed, and the stages where the shift turns off), for V2's window 8 as for V1's 7.

ResNet's widths are fixed at 64..512 in torchvision's ResNet.__init__ (resnet18 alone is 45 MB of
float32), so the fixture uses NarrowResNet: a subclass that divides every width by `div`,
keeping torchvision's own __init__, _make_layer and blocks; the JS test narrows its port the same
way (the port itself keeps torchvision's widths).

Run with a python3 that imports torch and torchvision (Debian's python3-torch 1.13.1 and
python3-torchvision 0.14 on /usr/bin/python3); CI reads the committed files and never runs this:

    /usr/bin/python3 tools/torchvision_ports.py            # every model
    /usr/bin/python3 tools/torchvision_ports.py swin vit   # only these ('builders': builders.json)

It also writes builders.json: the state-dict keys and shapes of torchvision's builders the test
constructs at full size (resnet18, mobilenet_v3_large/small, efficientnet_b0, shufflenet_v2_x1_0,
lraspp_mobilenet_v3_large, convnext_tiny, swin_t, regnet_y_400mf, regnet_x_400mf, googlenet, mnasnet0_5,
maxvit_t, swin_v2_t), without weights, builders-2.json the same for the video, SqueezeNet, DenseNet and
segmentation builders (BUILDERS_2), and builders-3.json for mobilenet_v2 (BUILDERS_3).

The video fixtures' inputs are clips [N, 3, T, H, W] (image() takes any shape); the segmentation
fixtures store each case's "aux" output next to its "output" ("out").
"""
import functools
import math
import os
import sys

import torch
import torchvision
from torch import nn
from torchvision.models.alexnet import AlexNet
from torchvision.models.convnext import CNBlockConfig, ConvNeXt
from torchvision.models.densenet import DenseNet
from torchvision.models.efficientnet import EfficientNet, FusedMBConvConfig, MBConvConfig, _efficientnet_conf
from torchvision.models.googlenet import BasicConv2d, GoogLeNet, Inception, InceptionAux
from torchvision.models import inception as tv_inception
from torchvision.models.maxvit import MaxVit
from torchvision.models.mnasnet import MNASNet
from torchvision.models.mobilenetv2 import MobileNetV2
from torchvision.models.mobilenetv3 import MobileNetV3, _mobilenet_v3_conf
from torchvision.models.regnet import BlockParams, RegNet
from torchvision.models.resnet import BasicBlock, Bottleneck, ResNet
from torchvision.models._utils import IntermediateLayerGetter
from torchvision.ops.misc import Conv2dNormActivation
from torchvision.models.segmentation.deeplabv3 import ASPP, DeepLabV3, _deeplabv3_mobilenetv3
from torchvision.models.segmentation.fcn import FCN, FCNHead
from torchvision.models.segmentation.lraspp import LRASPPHead, _lraspp_mobilenetv3
from torchvision.models.squeezenet import Fire, SqueezeNet
from torchvision.models.video.resnet import BasicBlock as VideoBasicBlock, BasicStem, Conv2Plus1D, Conv3DSimple, R2Plus1dStem, VideoResNet
from torchvision.models.shufflenetv2 import ShuffleNetV2
from torchvision.models.vgg import VGG, make_layers
from torchvision.models.swin_transformer import PatchMergingV2, ShiftedWindowAttentionV2, SwinTransformer, SwinTransformerBlockV2
from torchvision.models.vision_transformer import VisionTransformer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_reference import encode, randomize_norms, randomize_weights, short_floats, write_json  # noqa: E402
from safetensors_fixtures import write  # noqa: E402

OUT_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'torchvision'))
MODELS = {}


def model(description, sizes, extra=None, adjust=None):
    """Registers a builder of one model as the fixture <its name>, run at sizes ([N, 3, H, W] each);
    extra() returns more fields for its .json; adjust(net) sets weights after randomize_weights."""
    def register(fn):
        MODELS[fn.__name__] = (description, sizes, fn, extra, adjust)
        return fn
    return register


def image(shape, seed):
    """Values in [-2, 2): element i is ((i * 2654435761 + seed * 40503) mod 2^32 >> 8) / 2^22 - 2."""
    n = 1
    for d in shape:
        n *= d
    i = torch.arange(n, dtype=torch.int64)
    k = ((i * 2654435761 + seed * 40503) % (1 << 32)) >> 8
    return (k.double() / (1 << 22) - 2).float().reshape(shape)


class NarrowResNet(ResNet):
    """torchvision's ResNet with every width (the stem's 64 and the stages' 64..512 planes) divided
    by div; the layers are torchvision's own, made by its __init__ and _make_layer."""

    def __init__(self, block, layers, div, **kwargs):
        self.div = div
        super().__init__(block, layers, **kwargs)
        # The stem and the head, made by ResNet.__init__ at full width, made again narrowed (in place,
        # so the state-dict order stays torchvision's).
        width = 64 // div
        self.conv1 = nn.Conv2d(3, width, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = self._norm_layer(width)
        self.fc = nn.Linear(512 // div * block.expansion, self.fc.out_features)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        if planes == 64:
            self.inplanes = 64 // self.div  # the narrowed stem's width
        return super()._make_layer(block, planes // self.div, blocks, stride, dilate)


@model('NarrowResNet(BasicBlock, [1, 1, 1, 1], div=16, num_classes=10): resnet18\'s stages at widths 4..32',
       [[2, 3, 32, 32], [1, 3, 17, 23], [3, 3, 45, 31], [1, 3, 1, 1], [1, 3, 130, 97]])
def resnet():
    return NarrowResNet(BasicBlock, [1, 1, 1, 1], 16, num_classes=10)


@model('NarrowResNet(Bottleneck, [1, 2, 1, 1], div=16, groups=2, width_per_group=32, '
       'replace_stride_with_dilation=[False, False, True], num_classes=10): ResNeXt blocks, a dilated last stage',
       [[2, 3, 32, 32], [1, 3, 19, 27], [3, 3, 40, 41], [1, 3, 96, 72]])
def resnext():
    return NarrowResNet(Bottleneck, [1, 2, 1, 1], 16, groups=2, width_per_group=32,
                        replace_stride_with_dilation=[False, False, True], num_classes=10)


@model('MobileNetV3(*_mobilenet_v3_conf("mobilenet_v3_small", width_mult=0.25, reduced_tail=True, dilated=True), '
       'num_classes=10)',
       [[2, 3, 32, 32], [1, 3, 17, 23], [3, 3, 45, 31], [1, 3, 1, 1], [1, 3, 130, 97]])
def mobilenet_v3():
    setting, last_channel = _mobilenet_v3_conf('mobilenet_v3_small', width_mult=0.25, reduced_tail=True, dilated=True)
    return MobileNetV3(setting, last_channel, num_classes=10)


@model('EfficientNet(*_efficientnet_conf("efficientnet_b0", width_mult=0.125, depth_mult=0.25), dropout=0.2, '
       'stochastic_depth_prob=0.2, num_classes=10)',
       [[2, 3, 32, 32], [1, 3, 17, 23], [3, 3, 45, 31], [1, 3, 1, 1], [1, 3, 130, 97]])
def efficientnet_b():
    setting, last_channel = _efficientnet_conf('efficientnet_b0', width_mult=0.125, depth_mult=0.25)
    return EfficientNet(setting, 0.2, stochastic_depth_prob=0.2, num_classes=10, last_channel=last_channel)


@model('EfficientNet([FusedMBConvConfig(1, 3, 1, 8, 8, 2), FusedMBConvConfig(4, 3, 2, 8, 16, 1), '
       'MBConvConfig(4, 3, 2, 16, 16, 2), MBConvConfig(6, 5, 1, 16, 24, 1)], dropout=0.2, num_classes=10, '
       'norm_layer=partial(BatchNorm2d, eps=1e-3), last_channel=64): EfficientNetV2\'s fused and plain blocks',
       [[2, 3, 32, 32], [1, 3, 17, 23], [3, 3, 45, 31], [1, 3, 2, 3], [1, 3, 130, 97]])
def efficientnet_v2():
    setting = [FusedMBConvConfig(1, 3, 1, 8, 8, 2), FusedMBConvConfig(4, 3, 2, 8, 16, 1),
               MBConvConfig(4, 3, 2, 16, 16, 2), MBConvConfig(6, 5, 1, 16, 24, 1)]
    return EfficientNet(setting, 0.2, num_classes=10, norm_layer=functools.partial(nn.BatchNorm2d, eps=1e-3), last_channel=64)


@model('ConvNeXt([CNBlockConfig(8, 16, 2), CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 1)], '
       'stochastic_depth_prob=0.1, layer_scale=0.5, num_classes=10)',
       [[2, 3, 32, 32], [1, 3, 19, 23], [3, 3, 45, 31], [1, 3, 16, 16], [1, 3, 130, 97]])
def convnext():
    setting = [CNBlockConfig(8, 16, 2), CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 1)]
    return ConvNeXt(setting, stochastic_depth_prob=0.1, layer_scale=0.5, num_classes=10)


# Swin's tokens: floor(H / 4) after the patch embedding, ceil of half that after the merge. A stage
# shifts its odd blocks' windows only along a side whose padded size is above the window (7): from
# H = 32 in the first stage and H = 60 in the second (57 gives 14 -> 14 and 7 -> 7). Every size but
# 64 pads to a multiple of 7. The cases with H and W from 60 are for a trace with symbolic batch, H
# and W: 60 itself (two windows a side in the second stage), odd sizes, one side a whole number of
# windows (112: 28 tokens, 4 windows, then 14) and the other not, many windows (257: 64 tokens).
@model('SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=[7, 7], '
       'stochastic_depth_prob=0.2, num_classes=10)',
       [[1, 3, 64, 64], [3, 3, 64, 64], [5, 3, 64, 64], [2, 3, 57, 61], [1, 3, 64, 113], [1, 3, 99, 58], [2, 3, 120, 76], [1, 3, 201, 150],
        [2, 3, 61, 64], [2, 3, 99, 64], [2, 3, 150, 64], [2, 3, 257, 64],
        [1, 3, 60, 60], [3, 3, 67, 91], [1, 3, 112, 83], [2, 3, 89, 112], [1, 3, 63, 230]])
def swin():
    return SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=[7, 7],
                           stochastic_depth_prob=0.2, num_classes=10)


def swin_v2_logit_scales(net):
    """V2's logit_scale about log(10), as it starts, and one head's above log(100), where the forward clamps it."""
    with torch.no_grad():
        attns = [m for m in net.modules() if isinstance(m, ShiftedWindowAttentionV2)]
        for m in attns:
            m.logit_scale.copy_(math.log(10.0) + 0.4 * torch.randn_like(m.logit_scale))
        attns[0].logit_scale[0] = 5.0


# Swin V2 at window 8: tokens floor(H / 4), then ceil of half that. The odd blocks shift along a side
# whose padded size is above 8: from H = 36 in the first stage, from H = 68 in the second (64 gives 16
# tokens, 8 after the merge: no shift). The first cases (H, W at 64) are for a trace with the batch
# symbolic; from [1, 3, 68, 68] on for a trace with batch, H and W symbolic, H and W declared from 68:
# 68 itself (17 tokens padded to 24, 9 padded to 16), odd sizes, a side of whole windows (128: 32 and
# 16 tokens), and far above (259: 64 and 32 tokens; 300).
@model('SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=[8, 8], '
       'stochastic_depth_prob=0.2, num_classes=10, block=SwinTransformerBlockV2, downsample_layer=PatchMergingV2): '
       'swin_v2_t\'s layout, logit_scale about log(10) with one head above log(100)',
       [[1, 3, 64, 64], [3, 3, 64, 64], [5, 3, 64, 64], [2, 3, 35, 37], [1, 3, 36, 50], [2, 3, 67, 64], [1, 3, 9, 13],
        [1, 3, 68, 68], [3, 3, 71, 97], [1, 3, 95, 72], [2, 3, 128, 69], [1, 3, 131, 133], [1, 3, 259, 70], [1, 3, 68, 300]],
       adjust=swin_v2_logit_scales)
def swin_v2():
    return SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=[8, 8],
                           stochastic_depth_prob=0.2, num_classes=10, block=SwinTransformerBlockV2, downsample_layer=PatchMergingV2)


@model('VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64, '
       'representation_size=16, num_classes=10)',
       [[1, 3, 32, 32], [3, 3, 32, 32], [7, 3, 32, 32]])
def vit():
    return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64,
                             representation_size=16, num_classes=10)


@model('ShuffleNetV2([2, 2, 1], [8, 16, 32, 64, 128], num_classes=10)',
       [[2, 3, 32, 32], [1, 3, 17, 23], [3, 3, 45, 31], [1, 3, 1, 1], [1, 3, 130, 97]])
def shufflenet_v2():
    return ShuffleNetV2([2, 2, 1], [8, 16, 32, 64, 128], num_classes=10)


# DenseNet's transitions halve the size twice after the stem's 4: PyTorch fails below 13 (a pool of 1x1).
@model('DenseNet(growth_rate=8, block_config=(2, 3, 2), num_init_features=16, bn_size=2, num_classes=10)',
       [[2, 3, 32, 32], [1, 3, 17, 23], [3, 3, 45, 31], [1, 3, 13, 14], [1, 3, 130, 97]])
def densenet():
    return DenseNet(growth_rate=8, block_config=(2, 3, 2), num_init_features=16, bn_size=2, num_classes=10)


class NarrowBasicConv2d(BasicConv2d):
    """torchvision's GoogLeNet BasicConv2d with every width but the image's 3 channels divided by 16
    (floored: the reductions' 24 become 1; the concatenated widths stay sums of the branches')."""

    def __init__(self, in_channels, out_channels, **kwargs):
        super().__init__(in_channels if in_channels == 3 else in_channels // 16, out_channels // 16, **kwargs)


# GoogLeNet's widths are fixed at 64..1024 (6.6M weights); narrowed through its own `blocks` argument
# (the conv block, and the Inception block given that conv block), the head made again at 1024 / 16.
# Its ceil-mode pools make PyTorch fail below 15 (torchvision's min_size).
@model('GoogLeNet(num_classes=10, aux_logits=False, transform_input=True, init_weights=False, '
       'blocks=[NarrowBasicConv2d, partial(Inception, conv_block=NarrowBasicConv2d), InceptionAux]) with fc Linear(64, 10): '
       'every width / 16',
       [[2, 3, 32, 32], [1, 3, 17, 23], [3, 3, 45, 31], [1, 3, 18, 17], [1, 3, 130, 97]])
def googlenet():
    net = GoogLeNet(num_classes=10, aux_logits=False, transform_input=True, init_weights=False,
                    blocks=[NarrowBasicConv2d, functools.partial(Inception, conv_block=NarrowBasicConv2d), InceptionAux])
    net.fc = nn.Linear(1024 // 16, 10)
    return net


class NarrowInceptionConv2d(tv_inception.BasicConv2d):
    """torchvision's Inception v3 BasicConv2d with every width but the image's 3 channels divided by 32
    (floored: the internal 48 and 80 become 1 and 2; the concatenated widths stay sums of the branches')."""

    def __init__(self, in_channels, out_channels, **kwargs):
        super().__init__(in_channels if in_channels == 3 else in_channels // 32, out_channels // 32, **kwargs)


# Inception v3's widths are fixed (27M weights); narrowed through its own inception_blocks argument (the
# conv block, and each Inception block given that conv block), fc made again at 2048 / 32. Its unpadded
# stem and reductions make PyTorch fail below 75 (torchvision's min_size).
@model('Inception3(num_classes=10, aux_logits=False, transform_input=True, init_weights=False, inception_blocks=[NarrowInceptionConv2d, '
       'InceptionA ... InceptionE and InceptionAux given conv_block=NarrowInceptionConv2d]) with fc Linear(64, 10): every width / 32',
       [[2, 3, 75, 75], [1, 3, 80, 99], [3, 3, 107, 76], [1, 3, 150, 139], [1, 3, 299, 299]])
def inception_v3():
    blocks = [functools.partial(b, conv_block=NarrowInceptionConv2d) for b in (
        tv_inception.InceptionA, tv_inception.InceptionB, tv_inception.InceptionC, tv_inception.InceptionD, tv_inception.InceptionE,
        tv_inception.InceptionAux)]
    net = tv_inception.Inception3(num_classes=10, aux_logits=False, transform_input=True, init_weights=False,
                                  inception_blocks=[NarrowInceptionConv2d, *blocks])
    net.fc = nn.Linear(2048 // 32, 10)
    return net


class NarrowMNASNet(MNASNet):
    """torchvision's MNASNet with its last 1x1 convolution (to 1280 features), its BatchNorm and the
    classifier's Linear made again at `last` features (the rest is MNASNet's own __init__)."""

    def __init__(self, alpha, last, **kwargs):
        super().__init__(alpha, **kwargs)
        self.layers[14] = nn.Conv2d(self.layers[14].in_channels, last, 1, padding=0, stride=1, bias=False)
        self.layers[15] = nn.BatchNorm2d(last, momentum=self.layers[15].momentum)
        self.classifier[1] = nn.Linear(last, self.num_classes)


@model('NarrowMNASNet(0.05, last=64, num_classes=10): MNASNet(0.05) with its 1280-wide head at 64',
       [[2, 3, 32, 32], [1, 3, 17, 23], [3, 3, 45, 31], [1, 3, 1, 1], [1, 3, 130, 97]])
def mnasnet():
    return NarrowMNASNet(0.05, 64, num_classes=10)


# MaxVit keeps the grid size of the input it is built for (its window departition reshapes to it; the
# grid attention's bias is for partition_size ** 2 tokens), so it runs at sizes that give the same
# grids (61 to 64 a side here) and, garbled but without an error, where the grids' products match
# (32 x 128: its windows read back in another order); elsewhere PyTorch fails.
@model('MaxVit(input_size=(64, 64), stem_channels=8, partition_size=4, block_channels=[8, 16], block_layers=[1, 2], '
       'head_dim=4, stochastic_depth_prob=0.2, num_classes=10)',
       [[1, 3, 64, 64], [3, 3, 64, 64], [5, 3, 64, 64], [2, 3, 61, 63], [1, 3, 32, 128], [2, 3, 128, 32]])
def maxvit():
    return MaxVit((64, 64), 8, 4, [8, 16], [1, 2], 4, 0.2, num_classes=10)


class NarrowVGG(VGG):
    """torchvision's VGG with its classifier (512 * 7 * 7 -> 4096 -> 4096 -> classes) made again from
    `width` * 7 * 7 features through `hidden` (the rest is VGG's own __init__: the 7 x 7 adaptive pool)."""

    def __init__(self, features, width, hidden, num_classes, **kwargs):
        super().__init__(features, num_classes=num_classes, **kwargs)
        for i, (n_in, n_out) in zip((0, 3, 6), ((width * 7 * 7, hidden), (hidden, hidden), (hidden, num_classes))):
            self.classifier[i] = nn.Linear(n_in, n_out)


# VGG-11-BN's layout (configuration "A") at widths / 16; five 2x2 pools: PyTorch fails below 32.
@model('NarrowVGG(make_layers([4, "M", 8, "M", 16, 16, "M", 32, 32, "M", 32, 32, "M"], batch_norm=True), width=32, hidden=16, '
       'num_classes=10, init_weights=False): vgg11_bn\'s layers at widths / 16, its classifier through 16',
       [[2, 3, 32, 32], [1, 3, 33, 47], [3, 3, 45, 63], [1, 3, 64, 32], [1, 3, 130, 97], [1, 3, 231, 224]])
def vgg():
    return NarrowVGG(make_layers([4, 'M', 8, 'M', 16, 16, 'M', 32, 32, 'M', 32, 32, 'M'], batch_norm=True), 32, 16, 10,
                     init_weights=False)


# torchvision's RegNet builders' from_init_params arguments (regnet.py), for their BlockParams.
REGNET_PARAMS = {
    'regnet_y_400mf': (16, 48, 27.89, 2.09, 8, 0.25), 'regnet_y_800mf': (14, 56, 38.84, 2.4, 16, 0.25),
    'regnet_y_1_6gf': (27, 48, 20.71, 2.65, 24, 0.25), 'regnet_y_3_2gf': (21, 80, 42.63, 2.66, 24, 0.25),
    'regnet_y_8gf': (17, 192, 76.82, 2.19, 56, 0.25), 'regnet_y_16gf': (18, 200, 106.23, 2.48, 112, 0.25),
    'regnet_y_32gf': (20, 232, 115.89, 2.53, 232, 0.25), 'regnet_y_128gf': (27, 456, 160.83, 2.52, 264, 0.25),
    'regnet_x_400mf': (22, 24, 24.48, 2.54, 16, None), 'regnet_x_800mf': (16, 56, 35.73, 2.28, 16, None),
    'regnet_x_1_6gf': (18, 80, 34.01, 2.25, 24, None), 'regnet_x_3_2gf': (25, 88, 26.31, 2.25, 48, None),
    'regnet_x_8gf': (23, 80, 49.56, 2.88, 120, None), 'regnet_x_16gf': (22, 216, 55.59, 2.1, 128, None),
    'regnet_x_32gf': (23, 320, 69.86, 2.0, 168, None),
}


def regnet_block_params():
    """block_params: each builder's from_init_params arguments and the BlockParams torchvision computes from them."""
    out = {}
    for name, (depth, w_0, w_a, w_m, group_width, se_ratio) in REGNET_PARAMS.items():
        p = BlockParams.from_init_params(depth=depth, w_0=w_0, w_a=w_a, w_m=w_m, group_width=group_width, se_ratio=se_ratio)
        out[name] = {'args': [depth, w_0, w_a, w_m, group_width, se_ratio], 'depths': p.depths, 'widths': p.widths,
                     'group_widths': p.group_widths}
    return {'block_params': out}


# RegNetY at a small width: 4 stages (8, 16, 24, 40 channels; 1, 1, 2, 2 blocks), group width 4.
@model('RegNet(BlockParams.from_init_params(depth=6, w_0=8, w_a=8, w_m=1.5, group_width=4, se_ratio=0.25), stem_width=8, '
       'num_classes=10): RegNetY\'s squeeze-and-excitation blocks, grouped 3x3 convolutions',
       [[2, 3, 32, 32], [1, 3, 17, 23], [3, 3, 45, 31], [1, 3, 1, 1], [1, 3, 130, 97]], regnet_block_params)
def regnet():
    return RegNet(BlockParams.from_init_params(depth=6, w_0=8, w_a=8, w_m=1.5, group_width=4, se_ratio=0.25), stem_width=8, num_classes=10)


class LRASPPOut(nn.Module):
    """The segmentation model's "out" (torchvision's models return {"out": ...})."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)['out']


@model('_lraspp_mobilenetv3(MobileNetV3(*_mobilenet_v3_conf("mobilenet_v3_small", width_mult=0.25, reduced_tail=True, '
       'dilated=True)), num_classes=2) with its classifier LRASPPHead(low, high, 2, inter_channels=16); output "out"',
       [[1, 3, 32, 32], [2, 3, 17, 23], [1, 3, 29, 21], [1, 3, 1, 1], [1, 3, 61, 7]])
def lraspp():
    setting, last_channel = _mobilenet_v3_conf('mobilenet_v3_small', width_mult=0.25, reduced_tail=True, dilated=True)
    net = _lraspp_mobilenetv3(MobileNetV3(setting, last_channel), 2)
    head = net.classifier
    net.classifier = LRASPPHead(head.low_classifier.in_channels, head.cbr[0].in_channels, 2, 16)  # 128 by default: 150 kB more
    return LRASPPOut(net)


class NarrowSqueezeNet(SqueezeNet):
    """torchvision's SqueezeNet with every width but the image's divided by div: its own __init__'s
    layout, each Conv2d and Fire of its features made again narrowed, and the final 1x1 convolution."""

    def __init__(self, version, div, num_classes):
        super().__init__(version, num_classes=num_classes)

        def narrow(m):
            if isinstance(m, nn.Conv2d):  # the stem, on the image's 3 channels
                return nn.Conv2d(m.in_channels, m.out_channels // div, m.kernel_size, m.stride)
            if isinstance(m, Fire):
                return Fire(m.inplanes // div, m.squeeze.out_channels // div, m.expand1x1.out_channels // div,
                            m.expand3x3.out_channels // div)
            return m
        self.features = nn.Sequential(*[narrow(m) for m in self.features])
        self.classifier[1] = nn.Conv2d(512 // div, num_classes, kernel_size=1)


# Three ceil-mode 3x3 pools after an unpadded stride-2 stem: PyTorch fails below 17 (an empty pool output).
@model('NarrowSqueezeNet("1_1", div=8, num_classes=10): squeezenet1_1\'s layers at widths / 8',
       [[2, 3, 32, 32], [1, 3, 17, 23], [3, 3, 45, 31], [1, 3, 18, 17], [1, 3, 130, 97]])
def squeezenet():
    return NarrowSqueezeNet('1_1', 8, 10)


class NarrowDeepLabHead(nn.Sequential):
    """torchvision's DeepLabHead (ASPP with rates 12, 24, 36, a 3x3 conv, BatchNorm, ReLU, the 1x1
    classifier) at `width` channels where torchvision fixes 256 (its ASPP's out_channels argument)."""

    def __init__(self, in_channels, num_classes, width):
        super().__init__(ASPP(in_channels, [12, 24, 36], width), nn.Conv2d(width, width, 3, padding=1, bias=False),
                         nn.BatchNorm2d(width), nn.ReLU(), nn.Conv2d(width, num_classes, 1))


SEGMENTATION_SIZES = [[1, 3, 24, 24], [2, 3, 17, 13], [1, 3, 29, 21], [1, 3, 1, 1], [1, 3, 41, 7]]


@model('_deeplabv3_mobilenetv3(MobileNetV3(*_mobilenet_v3_conf("mobilenet_v3_small", width_mult=0.25, reduced_tail=True, '
       'dilated=True)), num_classes=2, aux=True) with its classifier NarrowDeepLabHead(C5, 2, width=4) (256 by default); '
       'outputs "out" and "aux"', SEGMENTATION_SIZES)
def deeplabv3():
    setting, last_channel = _mobilenet_v3_conf('mobilenet_v3_small', width_mult=0.25, reduced_tail=True, dilated=True)
    net = _deeplabv3_mobilenetv3(MobileNetV3(setting, last_channel), 2, True)
    net.classifier = NarrowDeepLabHead(net.classifier[0].convs[0][0].in_channels, 2, 4)
    return net


@model('FCN(IntermediateLayerGetter(NarrowResNet(Bottleneck, [1, 1, 1, 1], div=32, replace_stride_with_dilation=[False, True, True]), '
       '{"layer4": "out", "layer3": "aux"}), FCNHead(64, 2), FCNHead(32, 2)): _fcn_resnet on resnet50\'s dilated stages at widths / 32; '
       'outputs "out" and "aux"', SEGMENTATION_SIZES)
def fcn():
    backbone = NarrowResNet(Bottleneck, [1, 1, 1, 1], 32, replace_stride_with_dilation=[False, True, True])
    backbone = IntermediateLayerGetter(backbone, return_layers={'layer4': 'out', 'layer3': 'aux'})
    return FCN(backbone, FCNHead(64, 2), FCNHead(32, 2))


class NarrowVideoResNet(VideoResNet):
    """torchvision's VideoResNet with every width (the stem's and the stages' 64..512 planes) divided
    by div; the blocks and their convolution builders are torchvision's own, made by its _make_layer."""

    def __init__(self, block, conv_makers, layers, stem, div, **kwargs):
        self.div = div
        super().__init__(block, conv_makers, layers, stem, **kwargs)

        def narrow(m):
            if isinstance(m, nn.Conv3d):
                return nn.Conv3d(m.in_channels if m.in_channels == 3 else m.in_channels // div, m.out_channels // div,
                                 m.kernel_size, m.stride, m.padding, bias=False)
            return nn.BatchNorm3d(m.num_features // div) if isinstance(m, nn.BatchNorm3d) else m
        self.stem = nn.Sequential(*[narrow(m) for m in self.stem])
        self.fc = nn.Linear(512 // div * block.expansion, self.fc.out_features)

    def _make_layer(self, block, conv_builder, planes, blocks, stride=1):
        if planes == 64:
            self.inplanes = 64 // self.div  # the narrowed stem's width
        return super()._make_layer(block, conv_builder, planes // self.div, blocks, stride)


VIDEO_SIZES = [[2, 3, 4, 16, 16], [1, 3, 4, 17, 23], [3, 3, 4, 33, 9], [1, 3, 4, 1, 1], [1, 3, 4, 45, 31], [1, 3, 5, 20, 13], [1, 3, 1, 9, 9]]


@model('NarrowVideoResNet(BasicBlock, [Conv3DSimple] * 4, [1, 1, 1, 1], BasicStem, div=16, num_classes=10): r3d_18\'s blocks at widths 4..32',
       VIDEO_SIZES)
def r3d():
    return NarrowVideoResNet(VideoBasicBlock, [Conv3DSimple] * 4, [1, 1, 1, 1], BasicStem, 16, num_classes=10)


@model('NarrowVideoResNet(BasicBlock, [Conv2Plus1D] * 4, [1, 1, 1, 1], R2Plus1dStem, div=16, num_classes=10): r2plus1d_18\'s blocks at '
       'widths 4..32', VIDEO_SIZES)
def r2plus1d():
    return NarrowVideoResNet(VideoBasicBlock, [Conv2Plus1D] * 4, [1, 1, 1, 1], R2Plus1dStem, 16, num_classes=10)



class NarrowAlexNet(AlexNet):
    """torchvision's AlexNet with its five convolutions' widths (64, 192, 384, 256, 256) divided by div
    and its classifier (256 * 6 * 6 -> 4096 -> 4096 -> classes) made again through `hidden` (the rest,
    the pools and the 6 x 6 adaptive pool, is AlexNet's own __init__)."""

    def __init__(self, div, hidden, num_classes):
        super().__init__(num_classes=num_classes)
        widths = [64 // div, 192 // div, 384 // div, 256 // div, 256 // div]
        for i, c_in, c_out in zip((0, 3, 6, 8, 10), [3, *widths[:-1]], widths):
            old = self.features[i]
            self.features[i] = nn.Conv2d(c_in, c_out, old.kernel_size, old.stride, old.padding)
        for i, (n_in, n_out) in zip((1, 4, 6), ((widths[-1] * 6 * 6, hidden), (hidden, hidden), (hidden, num_classes))):
            self.classifier[i] = nn.Linear(n_in, n_out)


# AlexNet's map after its stride-4 11x11 convolution and three 3x3 pools of stride 2 is
# f = floor((H - 31) / 32) a side (H = 32f + 31 ... 32f + 34 give f; 1 from H = 63, torchvision's
# min_size: PyTorch fails below). The 6 x 6 adaptive pool's windows are floor(i * f / 6) to
# ceil((i + 1) * f / 6): f = 1, 2 (95), 3 (127), 5 (200), 6 (223), 7 (255, one window of two),
# 8 (290), 13 (447), each with its own windows.
@model('NarrowAlexNet(div=16, hidden=16, num_classes=10): AlexNet\'s layers at widths 4..24, its classifier from 16 * 6 * 6 through 16',
       [[1, 3, 63, 63], [2, 3, 64, 65], [1, 3, 66, 94], [1, 3, 95, 127], [2, 3, 200, 131], [1, 3, 223, 100], [1, 3, 255, 67],
        [1, 3, 290, 63], [1, 3, 447, 63]])
def alexnet():
    return NarrowAlexNet(16, 16, 10)


class NarrowMobileNetV2(MobileNetV2):
    """torchvision's MobileNetV2 with its last 1x1 convolution (to 1280 channels at any width_mult below 1)
    made again at `last` channels, and the classifier's Linear from `last` (the rest is MobileNetV2's own __init__)."""

    def __init__(self, last, **kwargs):
        super().__init__(**kwargs)
        self.features[-1] = Conv2dNormActivation(self.features[-1][0].in_channels, last, kernel_size=1, activation_layer=nn.ReLU6)
        self.last_channel = last
        self.classifier[1] = nn.Linear(last, self.classifier[1].out_features)


# width_mult 0.35 (mobilenet_v2's smallest published width) on five of its stages: 8 to 32 channels,
# expansions 1, 6 and 4, residual blocks in the second and third stages, output stride 16.
MOBILENET_V2_SETTING = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 2, 2], [6, 64, 1, 2], [4, 96, 1, 1]]


@model(f'NarrowMobileNetV2(last=64, width_mult=0.35, inverted_residual_setting={MOBILENET_V2_SETTING}, num_classes=10)',
       [[2, 3, 32, 32], [1, 3, 17, 23], [3, 3, 45, 31], [1, 3, 1, 1], [1, 3, 2, 3], [1, 3, 130, 97]])
def mobilenet_v2():
    return NarrowMobileNetV2(64, width_mult=0.35, inverted_residual_setting=MOBILENET_V2_SETTING, num_classes=10)


# Swin V2 at window 7 (the V2 fixture's is 8) and 3 heads of 4 channels: tokens floor(H / 4), then
# ceil of half that. The odd blocks shift along a side whose padded size is above 7: from H = 32 in
# the first stage, from H = 60 in the second (56 to 59 give 14 tokens, 7 after the merge: no shift).
# Cases at 64x64 for a trace with the batch symbolic; below 60 (the second stage unshifted, 1 x 1
# tokens at 4x5); from 60 on for batch, H and W symbolic: 60 (15 tokens padded to 21, 8 to 14), odd
# sizes, a side of whole windows (112: 28 and 14 tokens), far above (257: 64 and 32 tokens; 301).
@model('SwinTransformer(patch_size=[4, 4], embed_dim=12, depths=[2, 2], num_heads=[3, 6], window_size=[7, 7], '
       'stochastic_depth_prob=0.2, num_classes=10, block=SwinTransformerBlockV2, downsample_layer=PatchMergingV2): '
       'swin_v2_t\'s blocks at window 7, logit_scale about log(10) with one head above log(100)',
       [[1, 3, 64, 64], [2, 3, 64, 64], [3, 3, 64, 64], [2, 3, 35, 37], [1, 3, 4, 5], [1, 3, 59, 64], [2, 3, 64, 57],
        [1, 3, 60, 60], [3, 3, 71, 97], [1, 3, 95, 60], [2, 3, 112, 69], [1, 3, 131, 133], [1, 3, 257, 70], [1, 3, 61, 301]],
       adjust=swin_v2_logit_scales)
def swin_v2_w7():
    return SwinTransformer(patch_size=[4, 4], embed_dim=12, depths=[2, 2], num_heads=[3, 6], window_size=[7, 7],
                           stochastic_depth_prob=0.2, num_classes=10, block=SwinTransformerBlockV2, downsample_layer=PatchMergingV2)


def make(name):
    description, sizes, build, extra, adjust = MODELS[name]
    torch.manual_seed(0)
    net = build()
    randomize_weights(net)
    randomize_norms(net, tracked=7)
    if adjust:
        adjust(net)
    net.eval()
    cases = []
    with torch.no_grad():
        for k, shape in enumerate(sizes):
            y = net(image(shape, k + 1))
            out = y['out'] if isinstance(y, dict) else y  # a segmentation model's {"out", "aux"}
            cases.append({'shape': shape, 'seed': k + 1, 'output': short_floats(encode(out)),
                          **({'aux': short_floats(encode(y['aux']))} if isinstance(y, dict) and 'aux' in y else {})})
    os.makedirs(OUT_DIR, exist_ok=True)
    state = net.net.state_dict() if isinstance(net, LRASPPOut) else net.state_dict()
    path = os.path.join(OUT_DIR, f'{name}.safetensors')
    write(path, dict(state), {'format': 'pt'})
    print(f'{path}: {os.path.getsize(path)} bytes')
    write_json(os.path.join(OUT_DIR, f'{name}.json'), {'torch_version': torch.__version__, 'torchvision_version': torchvision.__version__,
                                                        'model': description, 'keys': list(state), 'cases': cases,
                                                        **(extra() if extra else {})})


# The builders a test constructs at full size (the lighter ones: up to swin_t's and convnext_tiny's 28M weights).
BUILDERS = ['resnet18', 'mobilenet_v3_large', 'mobilenet_v3_small', 'efficientnet_b0', 'shufflenet_v2_x1_0',
            'lraspp_mobilenet_v3_large', 'convnext_tiny', 'swin_t', 'regnet_y_400mf', 'regnet_x_400mf',
            'googlenet', 'mnasnet0_5', 'maxvit_t', 'swin_v2_t']


# The builders of the video, DenseNet-era and segmentation ports (tests/js/torchvision-ports-video-densenet-seg.test.mjs).
BUILDERS_2 = ['squeezenet1_0', 'squeezenet1_1', 'densenet121', 'r3d_18', 'mc3_18', 'r2plus1d_18', 'deeplabv3_mobilenet_v3_large',
              'deeplabv3_resnet50', 'fcn_resnet50']


# The builders of the third ports' test (tests/js/torchvision-ports-3.test.mjs): mobilenet_v2 (alexnet's
# 61M weights take seconds to initialise; its narrowed fixture checks its keys).
BUILDERS_3 = ['mobilenet_v2']


def make_builders(names, file):
    """file: each builder's state-dict keys and shapes, in order (no weights)."""
    keys = {}
    for name in names:
        build = (getattr(torchvision.models, name, None) or getattr(torchvision.models.segmentation, name, None)
                 or getattr(torchvision.models.video, name))
        net = build(weights_backbone=None) if name.startswith(('lraspp', 'deeplabv3', 'fcn')) else build()
        keys[name] = [[k, list(v.shape)] for k, v in net.state_dict().items()]
    write_json(os.path.join(OUT_DIR, file), keys)


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    names = sys.argv[1:] or [*MODELS, 'builders']
    unknown = [n for n in names if n not in MODELS and n != 'builders']
    if unknown:
        sys.exit(f'unknown model {unknown}; have {[*MODELS, "builders"]}')
    for name in names:
        if name == 'builders':
            make_builders(BUILDERS, 'builders.json')
            make_builders(BUILDERS_2, 'builders-2.json')
            make_builders(BUILDERS_3, 'builders-3.json')
        else:
            make(name)


if __name__ == '__main__':
    main()
