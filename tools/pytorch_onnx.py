#!/usr/bin/env python3
"""ONNX files exported by PyTorch, for tests/js/session-pytorch.test.mjs: graphs that did not come
from onemodel's tracer, run by its Session (and by onnxruntime-web) against PyTorch's outputs.

For each model below: torch.onnx.export (opset 17, the newest PyTorch 1.13 writes; constant
folding on, eval mode) with the batch axis (and a sequence or spatial axis where the model has
one) dynamic, to tests/js/fixtures/pytorch/onnx/<name>.onnx, and PyTorch's outputs at two or
three input shapes to <name>.json:

  { "torch_version": ..., "model": "<description>", "opset": 17,
    "cases": [ { "inputs": [ { "name", "shape", "dtype", "data" } ], "outputs": [ ... ] }, ... ] }

Run (needs PyTorch; CI reads the committed files and never runs this):

    /usr/bin/python3 tools/pytorch_onnx.py            # every model
    /usr/bin/python3 tools/pytorch_onnx.py lstm gru   # only these

Deterministic: one thread, torch.manual_seed per model, fixed inputs (the .onnx bytes also depend
on the PyTorch version; the fixtures were made with Debian's python3-torch 1.13.1).
"""
import io
import json
import math
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

from pytorch_reference import encode  # the fixtures' tensor encoding, shared

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'pytorch', 'onnx')
MODELS = {}


def model(fn):
    MODELS[fn.__name__[len('make_'):]] = fn
    return fn


def export(name, description, module, input_names, output_names, dynamic, cases):
    """cases: lists of input tensors; the first is the one exported with."""
    module.eval()
    buf = io.BytesIO()
    torch.onnx.export(module, tuple(cases[0]), buf, opset_version=17, input_names=input_names, output_names=output_names,
                      dynamic_axes=dynamic, do_constant_folding=True)
    with torch.no_grad():
        rows = []
        for xs in cases:
            ys = module(*xs)
            ys = ys if isinstance(ys, tuple) else (ys,)
            rows.append({'inputs': [encode(x, n) for n, x in zip(input_names, xs)],
                         'outputs': [encode(y, n) for n, y in zip(output_names, ys)]})
    with open(os.path.join(OUT_DIR, f'{name}.onnx'), 'wb') as f:
        f.write(buf.getvalue())
    with open(os.path.join(OUT_DIR, f'{name}.json'), 'w') as f:
        json.dump({'torch_version': torch.__version__, 'model': description, 'opset': 17, 'cases': rows}, f)
        f.write('\n')


def randn(*shape):
    return torch.randn(*shape)


# ---- models ------------------------------------------------------------------------------------

@model
def make_mlp():
    torch.manual_seed(1)
    m = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 3), nn.Softmax(dim=-1))
    export('mlp', 'Linear, ReLU, Linear, Tanh, Linear, Softmax', m, ['x'], ['y'], {'x': {0: 'batch'}, 'y': {0: 'batch'}},
           [[randn(4, 6)], [randn(1, 6)], [randn(9, 6)]])


@model
def make_cnn():
    torch.manual_seed(2)
    m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2), nn.LeakyReLU(0.1), nn.AvgPool2d(2, ceil_mode=True),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))
    with torch.no_grad():
        m[1].running_mean.normal_(0, 0.3)
        m[1].running_var.uniform_(0.5, 2.0)
    export('cnn', 'Conv2d, BatchNorm2d, ReLU, MaxPool2d, grouped strided Conv2d, LeakyReLU, AvgPool2d(ceil_mode), '
           'AdaptiveAvgPool2d(1), Flatten, Linear', m, ['x'], ['y'],
           {'x': {0: 'batch', 2: 'h', 3: 'w'}, 'y': {0: 'batch'}}, [[randn(2, 3, 12, 12)], [randn(1, 3, 13, 11)], [randn(2, 3, 9, 14)]])


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)) if stride != 1 or cin != cout else None

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (self.down(x) if self.down is not None else x))


@model
def make_resnet():
    torch.manual_seed(3)
    m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                      BasicBlock(8, 8, 1), BasicBlock(8, 16, 2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 5))
    export('resnet', 'torchvision-style BasicBlocks (a stride-2 block with a 1x1 downsample), global average pool, Linear',
           m, ['x'], ['logits'], {'x': {0: 'batch', 2: 'h', 3: 'w'}, 'logits': {0: 'batch'}},
           [[randn(2, 3, 12, 12)], [randn(1, 3, 11, 13)], [randn(3, 3, 8, 8)]])


class MobileBlock(nn.Module):
    """A MobileNetV3-style inverted residual: expand, depthwise, squeeze-and-excite, project."""
    def __init__(self, c, e):
        super().__init__()
        self.expand = nn.Conv2d(c, e, 1)
        self.dw = nn.Conv2d(e, e, 3, padding=1, groups=e)
        self.se1 = nn.Conv2d(e, 4, 1)
        self.se2 = nn.Conv2d(4, e, 1)
        self.project = nn.Conv2d(e, c, 1)

    def forward(self, x):
        y = F.hardswish(self.expand(x))
        y = F.hardswish(self.dw(y))
        s = F.adaptive_avg_pool2d(y, 1)
        s = F.hardsigmoid(self.se2(F.relu(self.se1(s))))
        return x + self.project(y * s)


@model
def make_mobilenet_block():
    torch.manual_seed(4)
    m = MobileBlock(6, 12)
    export('mobilenet_block', 'MobileNetV3-style block: 1x1 expand, depthwise 3x3, hardswish, squeeze-and-excite with hardsigmoid, '
           '1x1 project, residual', m, ['x'], ['y'], {'x': {0: 'batch', 2: 'h', 3: 'w'}, 'y': {0: 'batch', 2: 'h', 3: 'w'}},
           [[randn(2, 6, 6, 6)], [randn(1, 6, 7, 5)]])


class UNetSmall(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(2, 6, 3, padding=1)
        self.mid = nn.Conv2d(6, 6, 3, padding=1)
        self.up = nn.ConvTranspose2d(6, 6, 2, stride=2)
        self.out = nn.Conv2d(6, 2, 1)

    def forward(self, x):
        d = F.relu(self.down(x))
        m = F.relu(self.mid(F.max_pool2d(d, 2)))
        u = self.up(m) + F.interpolate(m, scale_factor=2, mode='nearest')
        v = F.interpolate(m, scale_factor=2, mode='bilinear', align_corners=False)
        return self.out(torch.cat([u[:, :4] + v[:, 2:], x], 1))


@model
def make_unet():
    torch.manual_seed(5)
    export('unet', 'a small UNet: conv, max pool, ConvTranspose2d, nearest and bilinear upsampling by 2, slices, cat with the input',
           UNetSmall(), ['x'], ['y'], {'x': {0: 'batch', 2: 'h', 3: 'w'}, 'y': {0: 'batch', 2: 'h', 3: 'w'}},
           [[randn(2, 2, 8, 8)], [randn(1, 2, 12, 6)]])


class LSTMClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.lstm = nn.LSTM(8, 12, num_layers=2, batch_first=True)
        self.fc = nn.Linear(12, 3)

    def forward(self, tokens):
        out, _ = self.lstm(self.emb(tokens))
        return self.fc(out[:, -1])


@model
def make_lstm():
    torch.manual_seed(6)
    t = lambda b, s: torch.randint(0, 20, (b, s))
    export('lstm', 'Embedding, a 2-layer batch-first LSTM, the last step, Linear', LSTMClassifier(), ['tokens'], ['logits'],
           {'tokens': {0: 'batch', 1: 'seq'}, 'logits': {0: 'batch'}}, [[t(2, 5)], [t(1, 9)], [t(3, 2)]])


class GRUTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(5, 7, bidirectional=True)
        self.fc = nn.Linear(14, 2)

    def forward(self, x):
        out, h = self.gru(x)
        return self.fc(out), h


@model
def make_gru():
    torch.manual_seed(7)
    export('gru', 'a bidirectional GRU (sequence first), Linear on every step; also its final state', GRUTagger(), ['x'], ['tags', 'h'],
           {'x': {0: 'seq', 1: 'batch'}, 'tags': {0: 'seq', 1: 'batch'}, 'h': {1: 'batch'}}, [[randn(6, 2, 5)], [randn(3, 1, 5)]])


@model
def make_encoder():
    torch.manual_seed(8)
    m = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0, activation='gelu', batch_first=True)
    export('encoder', 'TransformerEncoderLayer (d 16, 4 heads, gelu, batch first, post-norm): attention, LayerNorm, feed-forward',
           m, ['x'], ['y'], {'x': {0: 'batch', 1: 'seq'}, 'y': {0: 'batch', 1: 'seq'}}, [[randn(2, 5, 16)], [randn(1, 7, 16)]])


class AddmmLinear(nn.Module):
    """A Linear kept as Hugging Face's GPT-2 keeps it (Conv1D): the weight [in, out], applied with
    addmm on the rows, which torch.onnx writes as Gemm without transB (or MatMul + Add)."""
    def __init__(self, cin, cout):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cin, cout) * 0.2)
        self.bias = nn.Parameter(torch.randn(cout) * 0.1)

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.size(-1)), self.weight).reshape(*x.shape[:-1], -1)


class GPT2Block(nn.Module):
    """A GPT-2-style pre-norm decoder block written as Hugging Face's modeling code writes it: a
    fused qkv projection, scores divided by sqrt(head size), the causal mask applied with where
    from a registered [L, L] buffer, gelu_new (the tanh form as arithmetic, with pow(x, 3))."""
    def __init__(self, d, heads, max_len):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = AddmmLinear(d, 3 * d), AddmmLinear(d, d)
        self.fc, self.out = AddmmLinear(d, 4 * d), AddmmLinear(4 * d, d)
        self.register_buffer('causal', torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)).view(1, 1, max_len, max_len))

    def split(self, t):
        b, n, d = t.shape
        return t.view(b, n, self.heads, d // self.heads).permute(0, 2, 1, 3)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = self.split(q), self.split(k), self.split(v)
        w = torch.matmul(q, k.transpose(-1, -2)) / (float(v.size(-1)) ** 0.5)
        w = torch.where(self.causal[:, :, :n, :n], w, torch.tensor(torch.finfo(w.dtype).min))
        a = torch.matmul(w.softmax(dim=-1), v).permute(0, 2, 1, 3).reshape(b, n, d)
        x = x + self.proj(a)
        h = self.fc(self.ln2(x))
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * torch.pow(h, 3.0))))
        return x + self.out(h)


@model
def make_gpt2_block():
    torch.manual_seed(10)
    export('gpt2_block', 'a GPT-2-style decoder block as Hugging Face writes it (d 16, 2 heads): LayerNorm, addmm projections, '
           'causal where mask, gelu_new as arithmetic', GPT2Block(16, 2, 32), ['x'], ['y'],
           {'x': {0: 'batch', 1: 'seq'}, 'y': {0: 'batch', 1: 'seq'}}, [[randn(2, 5, 16)], [randn(1, 9, 16)]])


class Misc(nn.Module):
    """Tensor methods a port reaches for: pad, chunk, split with sizes, permute, clamp, where, cumsum, topk-free reductions."""
    def forward(self, x):
        a, b = x.chunk(2, dim=1)
        c, d = torch.split(x, [1, 3], dim=1)
        p = F.pad(a, (1, 2), mode='reflect')
        q = F.pad(b, (0, 0, 1, 1), value=0.5)
        r = torch.where(c > 0, c.clamp(max=1.0), d.sum(1, keepdim=True))
        s = p.mean(-1, keepdim=True) + q.amax(1, keepdim=True).permute(0, 2, 1)[:, :1].mean(-1, keepdim=True)
        t = torch.cumsum(x, dim=-1).flip(-1)
        return r * s[:, :1] + t.mean(1, keepdim=True), x.abs().sqrt().exp().log() - x.pow(2).reciprocal().neg().sigmoid()


@model
def make_misc():
    torch.manual_seed(9)
    export('misc', 'chunk, split with sizes, reflect and constant pad, where, clamp, sums, amax, permute, cumsum, flip, '
           'elementwise math', Misc(), ['x'], ['y', 'z'], {'x': {0: 'batch', 2: 'n'}, 'y': {0: 'batch', 2: 'n'}, 'z': {0: 'batch', 2: 'n'}},
           [[randn(2, 4, 6)], [randn(3, 4, 5)]])


def main(names):
    torch.set_num_threads(1)
    os.makedirs(OUT_DIR, exist_ok=True)
    for name in names or sorted(MODELS):
        if name not in MODELS:
            sys.exit(f'unknown model {name} (have: {", ".join(sorted(MODELS))})')
        MODELS[name]()
        print(f'pytorch_onnx: {name}')


if __name__ == '__main__':
    main(sys.argv[1:])
