#!/usr/bin/env python3
"""PyTorch fixtures for the RAFT port (examples/torchvision/raft.mjs, checked by
tests/js/raft-port.test.mjs): torchvision 0.14's own optical-flow classes
(torchvision/models/optical_flow/raft.py and _utils.py), built through its `_raft` builder at tiny
channel counts from a fixed seed, every weight non-default (pytorch_reference's randomize_weights,
randomize_norms), in eval mode.

    raft_small  raft_small's architecture: BottleneckBlock encoders, the feature encoder's
                InstanceNorm2d, the context encoder without a norm, a 4-level correlation pyramid
                of radius 3, one 3x3 ConvGRU, the flow upsampled by F.interpolate (bilinear,
                align_corners=True) to 8x
    raft_large  raft_large's: ResidualBlock encoders (InstanceNorm2d, and BatchNorm2d for the
                context), radius 2, two ConvGRUs (1x5 then 5x1), the MaskPredictor's convex
                upsampling (softmax over 9 taps of F.unfold) at a narrow hidden size

For each it writes to tests/js/fixtures/torchvision/ <name>.safetensors (the state dict, PyTorch's
keys) and <name>.json:

    { "torch_version", "torchvision_version", "model", "config": the _raft keyword arguments,
      "keys": the state dict's keys in PyTorch's order, "stride": S,
      "cases": [ { "shape": [N, 3, H, W], "seeds": [s1, s2], "updates": num_flow_updates,
                   "flows": [ { "index": i, "shape": [N, 2, H, W], "float32_error": e,
                                "data": prediction_i[:, :, ::S, ::S] (NaN as null) }, ... ] } ] }

e is PyTorch's own float32 rounding error: max |prediction - the same in float64| / max(1, max |float64|).
The updates amplify rounding (each moves the points the next one samples): at 12 updates PyTorch's
float32 flow is 3.4e-5 of its scale from float64's, so the test's bound at a prediction is the
larger of 1e-5 and twice e.

The images are image(shape, seed) of tools/torchvision_ports.py (made bit for bit the same by
tests/js/torchvision-ports.mjs), so they are not stored. A prediction is a full-resolution flow
(2 x H x W per image, 262 kB of JSON at 128 x 128), so a case keeps the first and the last
prediction (i = 0 and num_flow_updates - 1: the last has been through every update) at rows and
columns 0, S, 2S, ...: S = 9 is prime to the upsampling's 8, so the samples fall on every one of
its phases. The test compares the rest through the eager port (the traced graph against it at
every pixel of every prediction).

Sizes: RAFT takes H and W multiples of 8 (other sizes raise ValueError). Its 4-level pyramid of
2x2 average pools needs H / 8 and W / 8 of at least 8 (below, avg_pool2d raises); where the
coarsest level is 1 row high (H from 64 to 120), _utils.grid_sample leaves its y coordinate
unnormalised (`if h > 1`) and the answer is finite; where it is 1 column wide (W from 64 to 120)
the x coordinate is divided by w - 1 = 0 and every output is NaN. torchvision's weights say
min_size (128, 128). The cases cross all of these.

    /usr/bin/python3 tools/raft_ports.py              # both
    /usr/bin/python3 tools/raft_ports.py raft_small   # only this one
"""
import copy
import os
import sys

import torch
import torchvision
from torch.nn import BatchNorm2d, InstanceNorm2d
from torchvision.models.optical_flow import raft as tv_raft

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_reference import encode, randomize_norms, randomize_weights, short_floats, write_json  # noqa: E402
from safetensors_fixtures import write  # noqa: E402
from torchvision_ports import OUT_DIR, image  # noqa: E402

STRIDE = 9

# The _raft keyword arguments of each fixture (the layer options by name: the test builds the port
# from the same dictionary).
CONFIGS = {
    'raft_small': {
        'feature_encoder_layers': [8, 8, 12, 16, 16], 'feature_encoder_block': 'BottleneckBlock',
        'feature_encoder_norm_layer': 'InstanceNorm2d',
        'context_encoder_layers': [8, 8, 12, 16, 20], 'context_encoder_block': 'BottleneckBlock',
        'context_encoder_norm_layer': None,
        'corr_block_num_levels': 4, 'corr_block_radius': 3,
        'motion_encoder_corr_layers': [12], 'motion_encoder_flow_layers': [8, 4], 'motion_encoder_out_channels': 10,
        'recurrent_block_hidden_state_size': 12, 'recurrent_block_kernel_size': [3], 'recurrent_block_padding': [1],
        'flow_head_hidden_size': 16, 'use_mask_predictor': False,
    },
    'raft_large': {
        'feature_encoder_layers': [8, 8, 8, 12, 16], 'feature_encoder_block': 'ResidualBlock',
        'feature_encoder_norm_layer': 'InstanceNorm2d',
        'context_encoder_layers': [8, 8, 8, 12, 20], 'context_encoder_block': 'ResidualBlock',
        'context_encoder_norm_layer': 'BatchNorm2d',
        'corr_block_num_levels': 4, 'corr_block_radius': 2,
        'motion_encoder_corr_layers': [12, 8], 'motion_encoder_flow_layers': [8, 4], 'motion_encoder_out_channels': 10,
        'recurrent_block_hidden_state_size': 12, 'recurrent_block_kernel_size': [[1, 5], [5, 1]],
        'recurrent_block_padding': [[0, 2], [2, 0]],
        'flow_head_hidden_size': 16, 'use_mask_predictor': True,
        # _raft makes the MaskPredictor 256 wide; the fixture passes a narrow one (its mask_predictor keyword)
        'mask_predictor_hidden_size': 8,
    },
}

LAYERS = {'BottleneckBlock': tv_raft.BottleneckBlock, 'ResidualBlock': tv_raft.ResidualBlock,
          'InstanceNorm2d': InstanceNorm2d, 'BatchNorm2d': BatchNorm2d, None: None}

# (batch, H, W, num_flow_updates; the test traces raft_small with 2 updates and checks the graph
# at the cases of 2 against PyTorch): 128 x 128 (the least without a NaN, torchvision's min_size), odd
# multiples of 8 (grids 17 x 25, 19 x 17), a batch of 3, a coarsest level one row high (64 x 128, 96 x
# 136: finite) and one column wide (128 x 64: NaN), far above (320 x 256, 128 x 392), and the default
# 12 updates once.
SIZES = [(1, 128, 128, 2), (2, 136, 200, 2), (3, 152, 136, 3), (1, 64, 128, 2), (1, 96, 136, 2),
         (1, 128, 64, 2), (1, 320, 256, 2), (1, 128, 392, 3), (1, 128, 144, 12)]
SIZES_LARGE = [(1, 128, 128, 3), (2, 136, 200, 3), (1, 96, 136, 3), (1, 256, 320, 2)]


def build(c):
    kw = {k: (LAYERS[v] if k.endswith(('_block', '_norm_layer')) else v) for k, v in c.items() if k != 'mask_predictor_hidden_size'}
    if 'mask_predictor_hidden_size' in c:
        kw['mask_predictor'] = tv_raft.MaskPredictor(in_channels=c['recurrent_block_hidden_state_size'],
                                                     hidden_size=c['mask_predictor_hidden_size'], multiplier=0.25)
    return tv_raft._raft(weights=None, progress=False, **kw)


def in_float64(net, *images, **kw):
    """net's predictions computed in float64 (a copy of net; torchvision's make_coords_grid and
    linspace make float32, so the default dtype and the grid are float64 for the call)."""
    wide = copy.deepcopy(net).double()
    make_coords_grid = tv_raft.make_coords_grid
    torch.set_default_dtype(torch.float64)
    tv_raft.make_coords_grid = lambda *a, **k: make_coords_grid(*a, **k).double()
    try:
        return wide(*[x.double() for x in images], **kw)
    finally:
        tv_raft.make_coords_grid = make_coords_grid
        torch.set_default_dtype(torch.float32)


def relative_error(f32, f64):
    """max |f32 - f64| / max(1, max |f64|) over the finite values (the tests' scale)."""
    finite = torch.isfinite(f64)
    if not finite.any():
        return 0.0
    return ((f32.double() - f64).abs()[finite].max() / max(1.0, f64[finite].abs().max().item())).item()


def make(name, sizes):
    torch.manual_seed(0)
    net = build(CONFIGS[name])
    randomize_weights(net)
    randomize_norms(net, tracked=7)
    net.eval()
    cases = []
    with torch.no_grad():
        for k, (n, h, w, updates) in enumerate(sizes):
            shape = [n, 3, h, w]
            seeds = [2 * k + 1, 2 * k + 2]
            images = image(shape, seeds[0]), image(shape, seeds[1])
            flows = net(*images, num_flow_updates=updates)
            wide = in_float64(net, *images, num_flow_updates=updates)
            cases.append({'shape': shape, 'seeds': seeds, 'updates': updates,
                          'flows': [{'index': i, 'shape': list(flows[i].shape),
                                     'float32_error': relative_error(flows[i], wide[i]),
                                     'data': [None if v != v else v for v in short_floats(encode(flows[i][:, :, ::STRIDE, ::STRIDE]))['data']]}
                                    for i in sorted({0, updates - 1})]})
    os.makedirs(OUT_DIR, exist_ok=True)
    state = net.state_dict()
    path = os.path.join(OUT_DIR, f'{name}.safetensors')
    write(path, dict(state), {'format': 'pt'})
    print(f'{path}: {os.path.getsize(path)} bytes')
    write_json(os.path.join(OUT_DIR, f'{name}.json'), {
        'torch_version': torch.__version__, 'torchvision_version': torchvision.__version__,
        'model': f'torchvision.models.optical_flow.raft._raft(**config) ({name}\'s architecture at tiny widths)',
        'config': CONFIGS[name], 'keys': list(state), 'stride': STRIDE, 'cases': cases})


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    known = {'raft_small': SIZES, 'raft_large': SIZES_LARGE}
    names = sys.argv[1:] or list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        sys.exit(f'unknown fixture {unknown}; have {list(known)}')
    for name in names:
        make(name, known[name])


if __name__ == '__main__':
    main()
