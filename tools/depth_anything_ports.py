#!/usr/bin/env python3
"""PyTorch reference fixtures for tests/js/depth-anything-port.test.mjs: Hugging Face's Depth
Anything (modeling_depth_anything.py's DepthAnythingForDepthEstimation over modeling_dinov2.py's
Dinov2Backbone) at small configurations, its weights as safetensors and its outputs, in the format
and folder of tools/transformers_ports.py (whose fixture() writes them).

`transformers` is not a Debian package, so the modules below are this project's own PyTorch modules
written from reading upstream's: the same module tree and parameter names (`backbone.embeddings.*`,
`backbone.encoder.layer.N.*`, `backbone.layernorm`, `neck.reassemble_stage.layers.N.projection` /
`.resize`, `neck.convs.N`, `neck.fusion_stage.layers.N.residual_layer1.convolution1`, `head.conv1`
... `head.conv3`), the same operations in the same order. DINOv2's embeddings and layers are
tools/transformers_ports.py's (the DINOv2 fixtures' modules); what is new here:

    Dinov2Backbone          every layer's hidden state (the embeddings' as "stem"), the out_indices
                            ones through the final layernorm (apply_layernorm), tokens kept
                            (reshape_hidden_states False, as DepthAnythingConfig makes it)
    reassemble stage        the patch tokens reshaped to [b, c, h // p, w // p], a 1 x 1 conv, then a
                            ConvTranspose2d (factor > 1), the identity (1) or a 3 x 3 conv of stride
                            int(1 / factor) (factor < 1)
    fusion stage            from the deepest map up: residual conv units (ReLU, conv, ReLU, conv, + x),
                            the residual bilinear-resized (align_corners=False) where its shape differs,
                            an interpolate (bilinear, align_corners=True) to the next map's size, or by
                            scale_factor=2 after the last, then a 1 x 1 conv
    head                    conv, bilinear (align_corners=True) to (h // p * p, w // p * p), conv, ReLU,
                            1 x 1 conv, ReLU (relative) or sigmoid (metric) times max_depth, squeeze(1)

    depth_anything          patch 14 (upstream's), a 5 x 5 table (image_size 70), hidden 32, 4 layers,
                            out_indices 1 to 4, factors [4, 2, 1, 0.5], relative depth
    depth_anything_metric   patch 6, a 4 x 4 table, hidden 24, 3 layers, out_indices 1 to 3, three
                            stages of factors [2, 1, 0.25] (a stride-4 conv), swiglu FFN, metric depth
                            (sigmoid times max_depth 20)

    python3 tools/depth_anything_ports.py                    # both
    python3 tools/depth_anything_ports.py depth_anything     # only this one

(python3 being one that imports torch: Debian's python3-torch on /usr/bin/python3.) Deterministic:
one thread, torch.manual_seed(0) per model, fixed inputs.
"""
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import transformers_ports as hf  # noqa: E402  (fixture(), image_input(), DINOv2's modules, the output folder)
from pytorch_reference import main  # noqa: E402

class Dinov2Backbone(nn.Module):
    """modeling_dinov2.py's Dinov2Backbone with reshape_hidden_states False: feature maps are the
    hidden states of the stages out_indices names (0 the embeddings, i layer i's output), each
    through the final layernorm when apply_layernorm."""

    def __init__(self, c):
        super().__init__()
        self.embeddings = hf.Dinov2Embeddings(c)
        self.encoder = hf.Dinov2Encoder(c)
        self.layernorm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])
        self.out_indices = c['out_indices']
        self.apply_layernorm = c['apply_layernorm']

    def forward(self, pixel_values):
        hidden_states = [self.embeddings(pixel_values)]  # output_hidden_states=True
        for layer in self.encoder.layer:
            hidden_states.append(layer(hidden_states[-1]))
        feature_maps = []
        for stage, hidden_state in enumerate(hidden_states):
            if stage in self.out_indices:
                feature_maps.append(self.layernorm(hidden_state) if self.apply_layernorm else hidden_state)
        return tuple(feature_maps)


class DepthAnythingReassembleLayer(nn.Module):
    def __init__(self, c, channels, factor):
        super().__init__()
        self.projection = nn.Conv2d(c['reassemble_hidden_size'], channels, kernel_size=1)
        if factor > 1:
            self.resize = nn.ConvTranspose2d(channels, channels, kernel_size=factor, stride=factor, padding=0)
        elif factor == 1:
            self.resize = nn.Identity()
        else:
            self.resize = nn.Conv2d(channels, channels, kernel_size=3, stride=int(1 / factor), padding=1)

    def forward(self, hidden_state):
        return self.resize(self.projection(hidden_state))


class DepthAnythingReassembleStage(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layers = nn.ModuleList([DepthAnythingReassembleLayer(c, ch, f)
                                     for ch, f in zip(c['neck_hidden_sizes'], c['reassemble_factors'])])

    def forward(self, hidden_states, patch_height, patch_width):
        out = []
        for i, hidden_state in enumerate(hidden_states):
            hidden_state = hidden_state[:, 1:]
            batch_size, _, num_channels = hidden_state.shape
            hidden_state = hidden_state.reshape(batch_size, patch_height, patch_width, num_channels)
            hidden_state = hidden_state.permute(0, 3, 1, 2).contiguous()
            out.append(self.layers[i](hidden_state))
        return out


class DepthAnythingPreActResidualLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        f = c['fusion_hidden_size']
        self.activation1 = nn.ReLU()
        self.convolution1 = nn.Conv2d(f, f, kernel_size=3, stride=1, padding=1, bias=True)
        self.activation2 = nn.ReLU()
        self.convolution2 = nn.Conv2d(f, f, kernel_size=3, stride=1, padding=1, bias=True)

    def forward(self, hidden_state):
        residual = hidden_state
        hidden_state = self.convolution2(self.activation2(self.convolution1(self.activation1(hidden_state))))
        return hidden_state + residual


class DepthAnythingFeatureFusionLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        f = c['fusion_hidden_size']
        self.projection = nn.Conv2d(f, f, kernel_size=1, bias=True)
        self.residual_layer1 = DepthAnythingPreActResidualLayer(c)
        self.residual_layer2 = DepthAnythingPreActResidualLayer(c)

    def forward(self, hidden_state, residual=None, size=None):
        if residual is not None:
            if hidden_state.shape != residual.shape:
                residual = nn.functional.interpolate(residual, size=(hidden_state.shape[2], hidden_state.shape[3]),
                                                     mode='bilinear', align_corners=False)
            hidden_state = hidden_state + self.residual_layer1(residual)
        hidden_state = self.residual_layer2(hidden_state)
        modifier = {'scale_factor': 2} if size is None else {'size': size}
        hidden_state = nn.functional.interpolate(hidden_state, **modifier, mode='bilinear', align_corners=True)
        return self.projection(hidden_state)


class DepthAnythingFeatureFusionStage(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layers = nn.ModuleList([DepthAnythingFeatureFusionLayer(c) for _ in c['neck_hidden_sizes']])

    def forward(self, hidden_states):
        hidden_states = hidden_states[::-1]
        fused_hidden_states = []
        fused_hidden_state = None
        for idx, (hidden_state, layer) in enumerate(zip(hidden_states, self.layers)):
            size = hidden_states[idx + 1].shape[2:] if idx != (len(hidden_states) - 1) else None
            if fused_hidden_state is None:
                fused_hidden_state = layer(hidden_state, size=size)
            else:
                fused_hidden_state = layer(fused_hidden_state, hidden_state, size=size)
            fused_hidden_states.append(fused_hidden_state)
        return fused_hidden_states


class DepthAnythingNeck(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.reassemble_stage = DepthAnythingReassembleStage(c)
        self.convs = nn.ModuleList([nn.Conv2d(ch, c['fusion_hidden_size'], kernel_size=3, padding=1, bias=False)
                                    for ch in c['neck_hidden_sizes']])
        self.fusion_stage = DepthAnythingFeatureFusionStage(c)

    def forward(self, hidden_states, patch_height, patch_width):
        hidden_states = self.reassemble_stage(hidden_states, patch_height, patch_width)
        features = [self.convs[i](feature) for i, feature in enumerate(hidden_states)]
        return self.fusion_stage(features)


class DepthAnythingDepthEstimationHead(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.head_in_index = c['head_in_index']
        self.patch_size = c['patch_size']
        features = c['fusion_hidden_size']
        self.conv1 = nn.Conv2d(features, features // 2, kernel_size=3, stride=1, padding=1)
        self.conv2 = nn.Conv2d(features // 2, c['head_hidden_size'], kernel_size=3, stride=1, padding=1)
        self.activation1 = nn.ReLU()
        self.conv3 = nn.Conv2d(c['head_hidden_size'], 1, kernel_size=1, stride=1, padding=0)
        self.activation2 = nn.ReLU() if c['depth_estimation_type'] == 'relative' else nn.Sigmoid()
        self.max_depth = c['max_depth'] or 1  # DepthAnythingConfig: max_depth if max_depth else 1

    def forward(self, hidden_states, patch_height, patch_width):
        hidden_states = hidden_states[self.head_in_index]
        predicted_depth = self.conv1(hidden_states)
        predicted_depth = nn.functional.interpolate(predicted_depth, (int(patch_height * self.patch_size), int(patch_width * self.patch_size)),
                                                    mode='bilinear', align_corners=True)
        predicted_depth = self.conv3(self.activation1(self.conv2(predicted_depth)))
        predicted_depth = self.activation2(predicted_depth) * self.max_depth
        return predicted_depth.squeeze(dim=1)


class DepthAnythingForDepthEstimation(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.backbone = Dinov2Backbone(c['backbone_config'])
        self.neck = DepthAnythingNeck(c)
        self.head = DepthAnythingDepthEstimationHead(c)
        self.patch_size = c['patch_size']

    def forward(self, pixel_values):
        hidden_states = self.backbone(pixel_values)
        _, _, height, width = pixel_values.shape
        patch_height = height // self.patch_size
        patch_width = width // self.patch_size
        hidden_states = self.neck(hidden_states, patch_height, patch_width)
        return self.head(hidden_states, patch_height, patch_width)


def depth_anything_config(backbone, **kw):
    """DepthAnythingConfig's fields (config.json's, the backbone's nested as backbone_config)."""
    bb = hf.dinov2_config(model_type='dinov2', apply_layernorm=True, reshape_hidden_states=False, **backbone)
    return {'backbone_config': bb, 'patch_size': bb['patch_size'], 'reassemble_hidden_size': bb['hidden_size'],
            'reassemble_factors': [4, 2, 1, 0.5], 'neck_hidden_sizes': [8, 16, 24, 32], 'fusion_hidden_size': 16,
            'head_in_index': -1, 'head_hidden_size': 8, 'depth_estimation_type': 'relative', 'max_depth': None, **kw}


def depth_fixture(name, description, c, sizes, depth_bias=None):
    """The fixture of DepthAnythingForDepthEstimation(c) at sizes [(batch, height, width)] (the first traced);
    depth_bias, if given, is head.conv3's bias (randomized weights give a relative head a ReLU input below
    zero nearly everywhere, so a depth of zeros that any port would match; 2 leaves about a quarter zero)."""
    net = DepthAnythingForDepthEstimation(c)
    keep = {'backbone.embeddings.cls_token', 'backbone.embeddings.position_embeddings'}
    if depth_bias is not None:
        with torch.no_grad():
            net.head.conv3.bias.fill_(depth_bias)
        keep.add('head.conv3.bias')
    cases = [({'batch': b, 'height': h, 'width': w}, [hf.image_input('pixel_values', [b, 3, h, w], seed)])
             for seed, (b, h, w) in enumerate(sizes, start=1)]
    return hf.fixture(name, description, c, net, {'pixel_values': ['batch', None, 'height', 'width']}, cases,
                      ['predicted_depth'], keep=keep)


# depth_anything's sizes (batch, height, width) -> the 14-pixel patch grid: traced at 45 x 58 (3 x 4,
# remainders 3 and 2 cut off), the native 70 x 70 (the table itself upstream), one patch, 1 x 2 with
# remainders 1 and 1, 2 x 6, a grid of 7 x 1 (the deepest map 4 x 1), and far above the traced one
# (10 x 8: the output 140 x 112).
DEPTH_SIZES = [(2, 45, 58), (1, 70, 70), (2, 14, 14), (1, 15, 29), (1, 41, 97), (3, 98, 27), (1, 140, 125)]


def make_depth_anything():
    c = depth_anything_config(dict(image_size=70, patch_size=14, num_hidden_layers=4, out_indices=[1, 2, 3, 4]))
    return depth_fixture('depth_anything', 'DepthAnythingForDepthEstimation (eval, relative): Dinov2Backbone (patch 14, a 5 x 5 '
                         'table bicubic-interpolated to the grid, 4 layers, out_indices 1 to 4 through the layernorm), the '
                         'neck (reassemble: 1 x 1 conv then ConvTranspose2d 4/4, 2/2, identity, conv 3 x 3 stride 2; 3 x 3 '
                         'convs; fusion from the deepest map: residual conv units, bilinear align_corners=True to the next '
                         'map\'s size, scale_factor 2 after the last, 1 x 1 conv) and the head (conv, bilinear to the grid '
                         'times 14, conv, ReLU, 1 x 1 conv, ReLU), predicted_depth [batch, 14 (h // 14), 14 (w // 14)]',
                         c, DEPTH_SIZES, depth_bias=2.0)


# depth_anything_metric's sizes -> the 6-pixel grid: traced at 40 x 33 (6 x 5), the native 24 x 24, one
# patch, 2 x 9 (the stride-4 map 1 x 3), 5 x 4, 9 x 12 with remainders, and far above (20 x 16).
METRIC_SIZES = [(2, 40, 33), (1, 24, 24), (1, 6, 6), (2, 13, 59), (1, 30, 29), (1, 59, 77), (1, 121, 97)]


def make_depth_anything_metric():
    c = depth_anything_config(dict(image_size=24, patch_size=6, hidden_size=24, num_hidden_layers=3, num_attention_heads=3,
                                   out_indices=[1, 2, 3], use_swiglu_ffn=True),
                              reassemble_factors=[2, 1, 0.25], neck_hidden_sizes=[8, 12, 16], fusion_hidden_size=12,
                              head_hidden_size=6, depth_estimation_type='metric', max_depth=20)
    return depth_fixture('depth_anything_metric', 'DepthAnythingForDepthEstimation (eval, metric): Dinov2Backbone (patch 6, '
                         'a 4 x 4 table, 3 layers with the SwiGLU FFN, out_indices 1 to 3), a three-stage neck (ConvTranspose2d '
                         '2/2, identity, conv 3 x 3 stride 4), the head\'s sigmoid times max_depth 20',
                         c, METRIC_SIZES)


MODELS = {'depth_anything': make_depth_anything, 'depth_anything_metric': make_depth_anything_metric}

if __name__ == '__main__':
    main(sys.argv[1:], {name: (make, hf.OUT_DIR) for name, make in MODELS.items()})
