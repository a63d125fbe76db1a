"""torch.onnx.export on the model tools/bench_export.mjs exports: time, peak memory above the model,
file size. The peer figures of docs/performance.md's "Export (trace and write ONNX)".

    /usr/bin/python3 tools/bench_export_torch.py [layers]      (default 12; Debian's python3-torch)

The model has the same shapes as the one tools/bench_export.mjs builds from examples/zoo/gpt.mjs:
GPT-2 small's size (vocab 50257, d 768, 12 heads, context 1024, 12 blocks), token and position
embeddings, pre-norm blocks of nn.MultiheadAttention with a registered [1024, 1024] bool causal
mask each and a GELU MLP, a final LayerNorm and an LM head tied to the token embedding. It is
exported once at batch 2 x 32 tokens with both axes dynamic (opset 17, torch 1.13's newest), to a
file under build/bench/ that is removed afterwards.

Memory: the peak resident set during the export (VmHWM of /proc/self/status, reset just before
by writing 5 to /proc/self/clear_refs) above the resident set before it, in MiB and as a multiple
of the weights' bytes.
"""
import os
import sys
import time

import torch
from torch import nn

VOCAB, D, HEADS, CONTEXT = 50257, 768, 12, 1024
BATCH, TOKENS = 2, 32


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(D)
        self.attn = nn.MultiheadAttention(D, HEADS, batch_first=True)
        self.register_buffer('mask', torch.ones(CONTEXT, CONTEXT, dtype=torch.bool).triu(1))
        self.ln_2 = nn.LayerNorm(D)
        self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))

    def forward(self, x):
        n = x.shape[1]
        a = self.ln_1(x)
        h = x + self.attn(a, a, a, attn_mask=self.mask[:n, :n], need_weights=False)[0]
        return h + self.mlp(self.ln_2(h))


class GPT2(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, D)
        self.wpe = nn.Embedding(CONTEXT, D)
        self.h = nn.ModuleList([Block() for _ in range(layers)])
        self.ln_f = nn.LayerNorm(D)
        self.lm_head = nn.Linear(D, VOCAB, bias=False)
        self.lm_head.weight = self.wte.weight  # tied

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.wte(ids) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def rss(field):
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith(field + ':'):
                return int(line.split()[1]) * 1024
    return 0


def main():
    layers = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = GPT2(layers).eval()
    seen, weight_bytes = set(), 0
    for t in list(model.parameters()) + list(model.buffers()):
        if id(t) not in seen:
            seen.add(id(t))
            weight_bytes += t.numel() * t.element_size()
    params = sum(p.numel() for p in model.parameters())
    ids = torch.randint(0, VOCAB, (BATCH, TOKENS))
    with torch.no_grad():
        model(ids)  # one eager run first, as the model's own allocations are not the export's
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
    os.makedirs(os.path.join(root, 'build', 'bench'), exist_ok=True)
    path = os.path.join(root, 'build', 'bench', 'gpt2-torch.onnx')
    base = rss('VmRSS')
    with open('/proc/self/clear_refs', 'w') as f:
        f.write('5')
    t0 = time.perf_counter()
    torch.onnx.export(model, (ids,), path, opset_version=17, input_names=['ids'], output_names=['logits'],
                      dynamic_axes={'ids': {0: 'batch', 1: 'seq'}, 'logits': {0: 'batch', 1: 'seq'}})
    seconds = time.perf_counter() - t0
    peak = rss('VmHWM') - base
    size = os.path.getsize(path)
    os.remove(path)
    mib = 1024 * 1024
    print(f'torch {torch.__version__}, {layers} blocks, {params / 1e6:.1f}M parameters, '
          f'{weight_bytes / mib:.1f} MiB of distinct parameter and buffer tensors')
    print(f'torch.onnx.export at batch {BATCH} x {TOKENS} (dynamic batch and seq, opset 17): {seconds:.2f} s, '
          f'peak RSS above the model {peak / mib:.1f} MiB ({peak / weight_bytes:.2f}x the weights), '
          f'file {size} bytes ({size / mib:.1f} MiB, {size / weight_bytes:.3f}x the weights)')


if __name__ == '__main__':
    main()
