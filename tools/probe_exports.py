#!/usr/bin/env python3
"""Files for tools/probe_exports.mjs (npm run probe:exports): models the bench does not hold, exported
by torch.onnx.export (opset 17, the newest PyTorch 1.13 writes; constant folding on, eval mode, the
batch axis dynamic, and the sequence axis for token models) to <dir>/<name>.onnx, with PyTorch's
own outputs for the inputs the probe feeds (<dir>/<name>.json lists them; each tensor's raw
little-endian values in <dir>/<name>.<batch>x<size>.<tensor>.bin): batch 1 and 8 at the export
size, and batch 3 at 20 tokens for the token models (another size than the export's).

    torchvision 0.14's resnet50 (96), mobilenet_v3_small, efficientnet_b0 (128; these three with height and
    width dynamic too, checked at batch 3 at 32 pixels more), vit_b_16 (224), swin_t (224), regnet_y_400mf, mnasnet0_5, efficientnet_b1, mobilenet_v2 (128),
    convnext_tiny, resnext50_32x4d (96), vit_b_32, maxvit_t (224); weights random (seed 0), batch
    norms' statistics random (so that folding them is not the identity)
    bert_style      a BERT-style encoder written in plain torch: embeddings and LayerNorm, post-norm
                    blocks, the attention mask as (1 - mask) * finfo.min added to the scores, erf GELU
    gpt2_style      a GPT-2-style decoder: pre-norm blocks, one c_attn projection split in three, a
                    causal bool mask buffer applied with where(mask, scores, finfo.min), tanh GELU,
                    the LM head tied to the token embedding
    lstm_classifier tools/bench_exports.py's bidirectional LSTM classifier (32 steps at export, 20 at batch 3)

swin_v2_t does not export from PyTorch 1.13 (aten::zero has no ONNX symbolic).
Not committed: run it into a cache or /tmp.

    /usr/bin/python3 tools/probe_exports.py DIR [NAME ...]   (only these models; default all)
"""
import io
import json
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_exports import BiLSTMClassifier, chosen  # noqa: E402

class BertStyle(nn.Module):
    """BERT-style encoder: embeddings + LayerNorm, post-norm blocks, extended attention mask."""
    def __init__(s, vocab=1000, d=192, heads=6, layers=3, ff=768, maxpos=128):
        super().__init__()
        s.h, s.d = heads, d
        s.word = nn.Embedding(vocab, d); s.pos = nn.Embedding(maxpos, d); s.typ = nn.Embedding(2, d)
        s.ln = nn.LayerNorm(d, eps=1e-12)
        s.blocks = nn.ModuleList()
        for _ in range(layers):
            s.blocks.append(nn.ModuleDict(dict(q=nn.Linear(d, d), k=nn.Linear(d, d), v=nn.Linear(d, d), o=nn.Linear(d, d),
                ln1=nn.LayerNorm(d, eps=1e-12), f1=nn.Linear(d, ff), f2=nn.Linear(ff, d), ln2=nn.LayerNorm(d, eps=1e-12))))
        s.pool = nn.Linear(d, d)
    def split(s, x):
        B, T, _ = x.shape
        return x.view(B, T, s.h, s.d // s.h).transpose(1, 2)
    def forward(s, input_ids, attention_mask):
        B, T = input_ids.shape
        pos = torch.arange(T, device=input_ids.device).unsqueeze(0)
        x = s.ln(s.word(input_ids) + s.pos(pos) + s.typ(torch.zeros_like(input_ids)))
        ext = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for b in s.blocks:
            q, k, v = s.split(b['q'](x)), s.split(b['k'](x)), s.split(b['v'](x))
            a = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(s.d // s.h) + ext
            a = torch.softmax(a, dim=-1)
            c = torch.matmul(a, v).transpose(1, 2).contiguous().view(B, T, s.d)
            x = b['ln1'](x + b['o'](c))
            x = b['ln2'](x + b['f2'](F.gelu(b['f1'](x))))
        return x, torch.tanh(s.pool(x[:, 0]))

class GPT2Style(nn.Module):
    """GPT-2-style decoder: pre-norm, fused c_attn, causal mask buffer with masked_fill-style where, tanh GELU."""
    def __init__(s, vocab=1000, d=192, heads=6, layers=3, ctx=128):
        super().__init__()
        s.h, s.d = heads, d
        s.wte = nn.Embedding(vocab, d); s.wpe = nn.Embedding(ctx, d)
        s.blocks = nn.ModuleList()
        for _ in range(layers):
            s.blocks.append(nn.ModuleDict(dict(ln1=nn.LayerNorm(d), c_attn=nn.Linear(d, 3 * d), c_proj=nn.Linear(d, d),
                ln2=nn.LayerNorm(d), fc=nn.Linear(d, 4 * d), proj=nn.Linear(4 * d, d))))
        s.lnf = nn.LayerNorm(d)
        s.register_buffer('bias', torch.tril(torch.ones(ctx, ctx, dtype=torch.bool)).view(1, 1, ctx, ctx))
    def forward(s, input_ids):
        B, T = input_ids.shape
        x = s.wte(input_ids) + s.wpe(torch.arange(T).unsqueeze(0))
        for b in s.blocks:
            h = b['ln1'](x)
            q, k, v = b['c_attn'](h).split(s.d, dim=2)
            q, k, v = [t.view(B, T, s.h, s.d // s.h).transpose(1, 2) for t in (q, k, v)]
            w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(s.d // s.h)
            mask = s.bias[:, :, :T, :T]
            w = torch.where(mask, w, torch.tensor(torch.finfo(w.dtype).min))
            w = torch.softmax(w, dim=-1)
            c = torch.matmul(w, v).transpose(1, 2).contiguous().view(B, T, s.d)
            x = x + b['c_proj'](c)
            x = x + b['proj'](F.gelu(b['fc'](b['ln2'](x)), approximate='tanh'))
        return s.wte.weight.new_zeros(()) + F.linear(s.lnf(x), s.wte.weight)

M = torchvision.models
def tv(fn, **kw):
    return lambda: fn(**kw)
# name: (builder, input kind, size at export); 'img+hw' is an image model exported with its height and
# width dynamic too (checked at batch 3 at another size), 'seq' the LSTM classifier's [batch, steps, 64]
MODELS = {
    'resnet50': (tv(M.resnet50), 'img+hw', 96),
    'mobilenet_v3_small': (tv(M.mobilenet_v3_small), 'img+hw', 128),
    'efficientnet_b0': (tv(M.efficientnet_b0), 'img+hw', 128),
    'vit_b_16': (tv(M.vit_b_16), 'img', 224),
    'lstm_classifier': (BiLSTMClassifier, 'seq', 32),
    'swin_t': (tv(M.swin_t), 'img', 224),
    'regnet_y_400mf': (tv(M.regnet_y_400mf), 'img', 128),
    'mnasnet0_5': (tv(M.mnasnet0_5), 'img', 128),
    'efficientnet_b1': (tv(M.efficientnet_b1), 'img', 128),
    'convnext_tiny': (tv(M.convnext_tiny), 'img', 96),
    'mobilenet_v2': (tv(M.mobilenet_v2), 'img', 128),
    'resnext50_32x4d': (tv(M.resnext50_32x4d), 'img', 96),
    'vit_b_32': (tv(M.vit_b_32), 'img', 224),
    'maxvit_t': (tv(M.maxvit_t), 'img', 224),
    'bert_style': (BertStyle, 'bert', 32),
    'gpt2_style': (GPT2Style, 'gpt', 32),
}

def randomize_bn(net):
    # random statistics, so that folding a batch norm into its convolution is not the identity;
    # and weights that torchvision starts at zero (ViT's head) random, so that the outputs are not 0
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in net.parameters():
            if p.dim() >= 2 and not p.any():
                p.copy_(torch.randn(p.shape, generator=g) * 0.02)
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.bias.data.copy_(torch.randn(m.num_features, generator=g) * 0.1)

def inputs(kind, size, b, seed):
    g = torch.Generator().manual_seed(seed)
    if kind.startswith('img'):
        return {'x': torch.randn(b, 3, size, size, generator=g)}
    if kind == 'seq':
        return {'x': torch.randn(b, size, 64, generator=g)}
    ids = torch.randint(0, 1000, (b, size), generator=g)
    if kind == 'bert':
        m = torch.ones(b, size, dtype=torch.long); m[:, size - 5:] = 0
        if b > 1: m[1:, size // 2:] = 0
        return {'input_ids': ids, 'attention_mask': m}
    return {'input_ids': ids}

def main(out, names):
    for name in chosen('probe_exports', out, names, MODELS):
        build, kind, size = MODELS[name]
        torch.manual_seed(0)
        net = build().eval(); randomize_bn(net)
        ex = inputs(kind, size, 2, 0)
        outs = ['logits'] if kind != 'bert' else ['last_hidden_state', 'pooler_output']
        axes = {n: {0: 'batch'} for n in list(ex) + outs}
        if not kind.startswith('img'):
            for n in ex: axes[n] = {0: 'batch', 1: 'seq'}
        elif kind == 'img+hw':
            axes['x'] = {0: 'batch', 2: 'height', 3: 'width'}
        path = os.path.join(out, f'{name}.onnx')
        if not os.path.exists(path):  # a file from an earlier run has the same weights (seed 0): only the references are written again
            buf = io.BytesIO()
            try:
                torch.onnx.export(net, tuple(ex.values()), buf, opset_version=17, input_names=list(ex), output_names=outs,
                                  dynamic_axes=axes, do_constant_folding=True)
            except Exception as e:  # noqa: BLE001 (reported, and the next model goes on)
                print(f'{name}: export failed: {type(e).__name__}: {str(e)[:300]}')
                continue
            with open(path, 'wb') as f:
                f.write(buf.getvalue())
        # reference outputs at batch 1 and 8 (and batch 3 at another size where the size is dynamic:
        # 20 steps or tokens, or a 32 pixels larger image)
        ref = {}
        other = {'img': [], 'img+hw': [(3, size + 32)]}.get(kind, [(3, 20)])
        for b, s2 in [(1, size), (8, size)] + other:
            inp = inputs(kind, s2, b, 10 + b)
            with torch.no_grad():
                y = net(*inp.values())
            y = y if isinstance(y, tuple) else (y,)
            key = f'{b}x{s2}'
            for k, v in list(inp.items()) + list(zip(outs, y)):
                v.numpy().tofile(f'{out}/{name}.{key}.{k}.bin')
            ref[key] = {'inputs': {k: {'shape': list(v.shape), 'dtype': str(v.dtype)} for k, v in inp.items()},
                        'outputs': {o: {'shape': list(t.shape)} for o, t in zip(outs, y)}}
        with open(os.path.join(out, f'{name}.json'), 'w') as f:
            json.dump(ref, f)
        print(f'probe_exports: {name} ({os.path.getsize(path)} bytes)', flush=True)

if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit('usage: tools/probe_exports.py DIR [NAME ...]')
    main(sys.argv[1], sys.argv[2:])
