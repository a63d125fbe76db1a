#!/usr/bin/env python3
"""Bench-only files for tools/bench.mjs's exports section (OM_BENCH_EXPORTS_ONLY=1): torchvision
0.14's own models at bench size, exported by torch.onnx.export (opset 17, the newest PyTorch 1.13
writes; constant folding on, eval mode, the batch axis dynamic) to <dir>/<name>.onnx, with the
state dict they were exported with in <dir>/<name>.safetensors, so that the bench traces the port
(examples/torchvision/) with the same weights and runs both files side by side. Not committed: the
bench writes them into the cache.

    /usr/bin/python3 tools/bench_exports.py DIR
"""
import io
import os
import sys

import torch
import torchvision
from torchvision.models.vision_transformer import VisionTransformer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_fixtures import write  # noqa: E402

# name: (builder, input shape); the shapes are the bench's (64 x 64 images, batch 2 at export)
MODELS = {
    'vit': (lambda: VisionTransformer(image_size=64, patch_size=8, num_layers=4, num_heads=4, hidden_dim=128, mlp_dim=512, num_classes=10),
            [2, 3, 64, 64]),
    'resnet18': (lambda: torchvision.models.resnet18(num_classes=10), [2, 3, 64, 64]),
}


def main(out):
    torch.set_num_threads(1)
    os.makedirs(out, exist_ok=True)
    for name, (build, shape) in MODELS.items():
        torch.manual_seed(0)
        net = build().eval()
        buf = io.BytesIO()
        torch.onnx.export(net, (torch.randn(*shape),), buf, opset_version=17, input_names=['x'], output_names=['logits'],
                          dynamic_axes={'x': {0: 'batch'}, 'logits': {0: 'batch'}}, do_constant_folding=True)
        with open(os.path.join(out, f'{name}.onnx'), 'wb') as f:
            f.write(buf.getvalue())
        write(os.path.join(out, f'{name}.safetensors'), dict(net.state_dict()), {'format': 'pt'})
        print(f'bench_exports: {name}')


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit('usage: tools/bench_exports.py DIR')
    main(sys.argv[1])
