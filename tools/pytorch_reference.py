#!/usr/bin/env python3
"""PyTorch reference fixtures for tests/js/pytorch.test.mjs and tests/js/families*.test.mjs.

Builds small PyTorch models with fixed seeds, in eval mode, runs them on fixed inputs and
writes one JSON fixture per model to tests/js/fixtures/pytorch/<name>.json:

  { "torch_version": "1.13.0a0", "model": "<short description>",   (Debian's 1.13.1 reports 1.13.0a0)
    "state_dict": { "<PyTorch key>": { "shape": [...], "dtype": "float32" | "int64" | "bool", "data": [...] } },
    "inputs":  [ { "name": ..., "shape": [...], "dtype": ..., "data": [...] }, ... ],
    "outputs": [ { "name": ..., "shape": [...], "dtype": ..., "data": [...] }, ... ] }

Data is flat, row-major; float32 values are written as repr() of the float (the shortest
decimal that reads back as the same float32 value). Loss fixtures add each gradient w.r.t.
the input as an extra output (named grad_<input>).

The model families (rnn_classifier, gpt, resnet, unet: models that must trace with symbolic
axes) go to tests/js/fixtures/pytorch/families/<name>.json instead, with inputs and outputs at
several sizes of those axes ("cases"), the axes' names, the case to trace at, and the sizes at
which PyTorch itself fails; see "model families" below for the format. Their floats are the
shortest decimal that reads back as the same float32 (checked), which halves their size.

Run (needs PyTorch, only on the machine that regenerates the fixtures; CI reads the committed
JSON files and never runs this):

    python3 tools/pytorch_reference.py            # writes tests/js/fixtures/pytorch/*.json and families/*.json
    python3 tools/pytorch_reference.py mlp gru    # only these fixtures (also family names: gpt unet)

(python3 being one that imports torch; the fixtures were made with Debian's python3-torch
1.13.1, `apt-get install -y --no-install-recommends python3-torch`, on /usr/bin/python3.)

The output is deterministic: one thread, torch.manual_seed per model, fixed inputs.

tools/safetensors_fixtures.py imports GPT, ResNet, family_fixture and the randomize helpers from
here (its fixtures are these models' weights as .safetensors files): regenerate those too when
they change.

Adding a model: write a function `def make_<name>():` returning
`fixture(description, module_or_None, inputs, outputs)` and decorate it with @model; then add
its builder to MODELS in tests/js/pytorch.test.mjs. Adding a family: `def make_<name>():`
returning `family_fixture(...)`, decorated with @family, and its om.nn port in
tests/js/families.mjs (FAMILIES). The mobilenet and gpt2 families are ports of common PyTorch
code (torchvision's MobileNetV2/V3 blocks, Hugging Face's GPT-2 block) written the way that
code writes them. Still to add once their branches are merged
into main: the activation modules (ReLU, GELU incl. approximate='tanh', SiLU, Tanh, Sigmoid, ...).
(cnn, cnn_grad and conv_misc cover Conv1d, Conv2d, ConvTranspose2d, MaxPool2d, AvgPool2d and
AdaptiveAvgPool2d; the resnet family a CNN with BatchNorm2d in eval mode.)
"""
import json
import math
import os
import sys

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'pytorch')
MODELS = {}


def model(fn):
    """Registers make_<name> as the fixture <name>."""
    MODELS[fn.__name__[len('make_'):]] = fn
    return fn


def encode(t, name=None):
    t = t.detach().contiguous()
    if t.dtype == torch.float32:
        dtype, data = 'float32', [float(v) for v in t.reshape(-1).tolist()]  # json writes repr(float)
    elif t.dtype == torch.int64:
        dtype, data = 'int64', [int(v) for v in t.reshape(-1).tolist()]
    elif t.dtype == torch.bool:
        dtype, data = 'bool', [bool(v) for v in t.reshape(-1).tolist()]
    else:
        raise TypeError(f'unsupported dtype {t.dtype}')
    out = {'name': name} if name is not None else {}
    out.update({'shape': list(t.shape), 'dtype': dtype, 'data': data})
    return out


def fixture(description, module, inputs, outputs):
    """inputs and outputs: lists of (name, tensor)."""
    return {
        'torch_version': torch.__version__,
        'model': description,
        'state_dict': {k: encode(v) for k, v in module.state_dict().items()} if module is not None else {},
        'inputs': [encode(t, n) for n, t in inputs],
        'outputs': [encode(t, n) for n, t in outputs],
    }


def randomize(module, batches=0):
    """Every parameter from N(0, 0.5), so loading non-default values matters; with batches, also
    bn's running statistics (mean N(0, 0.3), var U(0.5, 2)) and num_batches_tracked."""
    with torch.no_grad():
        for _, p in module.named_parameters():
            p.normal_(0, 0.5)
        if batches:
            module.bn.running_mean.normal_(0, 0.3)
            module.bn.running_var.uniform_(0.5, 2.0)
            module.bn.num_batches_tracked.fill_(batches)


# ---- models ------------------------------------------------------------------------------------

@model
def make_mlp():
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).eval()
    x = torch.randn(5, 4)
    with torch.no_grad():
        y = net(x)
    return fixture('nn.Sequential(Linear(4, 8), ReLU(), Linear(8, 3))', net, [('x', x)], [('y', y)])


class Norms(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 8)
        self.ln = nn.LayerNorm(8)
        self.bn = nn.BatchNorm1d(8)
        self.gn = nn.GroupNorm(2, 8)

    def forward(self, x):
        return self.gn(self.bn(self.ln(self.fc(x))))


def norms_model():
    net = Norms()
    randomize(net, batches=7)
    return net


@model
def make_norms():
    net = norms_model().eval()
    x = torch.randn(4, 6)
    with torch.no_grad():
        y = net(x)
    return fixture('fc=Linear(6, 8) -> ln=LayerNorm(8) -> bn=BatchNorm1d(8) (eval, running stats set) -> gn=GroupNorm(2, 8)',
                   net, [('x', x)], [('y', y)])


@model
def make_norms_train():
    """The same model in training mode: batch statistics, and the running statistics updated
    (unbiased batch variance, momentum 0.1, num_batches_tracked + 1) as extra outputs."""
    net = norms_model().train()
    state = {k: encode(v) for k, v in net.state_dict().items()}  # before the update
    x = torch.randn(4, 6)
    with torch.no_grad():
        y = net(x)
    fx = fixture('Norms as above in training mode; outputs y and the updated bn running stats',
                 net, [('x', x)], [('y', y), ('bn.running_mean', net.bn.running_mean),
                                   ('bn.running_var', net.bn.running_var), ('bn.num_batches_tracked', net.bn.num_batches_tracked)])
    fx['state_dict'] = state
    return fx


class LSTMHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(5, 4, num_layers=2, bidirectional=True, batch_first=True)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        out, (h, c) = self.rnn(x)
        return self.head(out[:, -1]), out, h, c


@model
def make_lstm():
    net = LSTMHead().eval()
    x = torch.randn(2, 6, 5)
    with torch.no_grad():
        logits, out, h, c = net(x)
    return fixture('rnn=LSTM(5, 4, num_layers=2, bidirectional=True, batch_first=True); head=Linear(8, 3) on out[:, -1]',
                   net, [('x', x)], [('logits', logits), ('out', out), ('h_n', h), ('c_n', c)])


@model
def make_gru():
    net = nn.GRU(3, 5, num_layers=2).eval()
    x = torch.randn(7, 2, 3)
    h0 = torch.randn(2, 2, 5)
    with torch.no_grad():
        out, h = net(x, h0)
    return fixture('GRU(3, 5, num_layers=2) on [T, N, C] with h0', net, [('x', x), ('h0', h0)], [('out', out), ('h_n', h)])


@model
def make_gru_bi():
    net = nn.GRU(4, 3, bidirectional=True, batch_first=True).eval()
    x = torch.randn(2, 5, 4)
    with torch.no_grad():
        out, h = net(x)
    return fixture('GRU(4, 3, bidirectional=True, batch_first=True)', net, [('x', x)], [('out', out), ('h_n', h)])


@model
def make_lstm_unbatched():
    net = nn.LSTM(3, 4).eval()
    x = torch.randn(6, 3)  # unbatched [T, C]
    h0, c0 = torch.randn(1, 4), torch.randn(1, 4)
    with torch.no_grad():
        out, (h, c) = net(x, (h0, c0))
    return fixture('LSTM(3, 4) on an unbatched [T, C] input with (h0, c0)', net,
                   [('x', x), ('h0', h0), ('c0', c0)], [('out', out), ('h_n', h), ('c_n', c)])


class Image(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)
        self.up = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)
        self.ln = nn.LayerNorm([6, 8])
        self.soft = nn.LogSoftmax(dim=1)

    def forward(self, x):
        return self.soft(self.ln(self.up(self.bn(x))))


@model
def make_image():
    net = Image()
    randomize(net, batches=3)
    net.eval()
    x = torch.randn(2, 3, 3, 4)
    with torch.no_grad():
        y = net(x)
    return fixture('bn=BatchNorm2d(3) (eval) -> Upsample(scale_factor=2, bilinear) -> ln=LayerNorm([6, 8]) -> LogSoftmax(dim=1)',
                   net, [('x', x)], [('y', y)])


class EmbedClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6, padding_idx=0)
        self.fc = nn.Linear(6, 4)

    def forward(self, ids):
        return self.fc(self.emb(ids).mean(1))


@model
def make_embedding():
    net = EmbedClassifier().eval()
    ids = torch.tensor([[1, 2, 3, 0, 0], [4, 9, 9, 8, 0], [5, 6, 7, 1, 2]], dtype=torch.int64)
    with torch.no_grad():
        y = net(ids)
    return fixture('emb=Embedding(10, 6, padding_idx=0) -> mean(1) -> fc=Linear(6, 4)', net, [('ids', ids)], [('y', y)])


@model
def make_mha():
    net = nn.MultiheadAttention(8, 2, batch_first=True)
    randomize(net)  # PyTorch zeroes the biases at init
    net.eval()
    x = torch.randn(2, 4, 8)
    with torch.no_grad():
        out, w = net(x, x, x)
    return fixture('MultiheadAttention(8, 2, batch_first=True), self-attention, averaged weights',
                   net, [('x', x)], [('out', out), ('weights', w)])


@model
def make_mha_masked():
    net = nn.MultiheadAttention(6, 3)
    randomize(net)
    net.eval()
    q = torch.randn(3, 2, 6)  # [L, N, E]
    kv = torch.randn(5, 2, 6)  # [S, N, E]
    pad = torch.tensor([[False, False, False, True, True], [False, False, False, False, True]])
    with torch.no_grad():
        out, w = net(q, kv, kv, key_padding_mask=pad, average_attn_weights=False)
    return fixture('MultiheadAttention(6, 3), [L, N, E], cross-attention with a bool key_padding_mask, per-head weights',
                   net, [('query', q), ('kv', kv), ('key_padding_mask', pad)], [('out', out), ('weights', w)])


def encoder_layer_fixture(description, net, inputs, run):
    randomize(net)  # PyTorch zeroes the attention biases at init; norms' weights become non-trivial too
    net.eval()
    with torch.no_grad():
        y = run(net)
    return fixture(description, net, inputs, [('y', y)])


@model
def make_encoder_layer():
    """Post-norm (PyTorch's default), [L, N, E], relu, with a float src_mask and a bool key padding mask."""
    net = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
    x = torch.randn(5, 2, 8)
    mask = torch.randn(5, 5)
    pad = torch.tensor([[False, False, False, False, True], [False, False, False, False, False]])
    return encoder_layer_fixture('TransformerEncoderLayer(8, 2, dim_feedforward=16) (post-norm, relu), eval, float src_mask, bool src_key_padding_mask',
                                 net, [('src', x), ('src_mask', mask), ('src_key_padding_mask', pad)],
                                 lambda m: m(x, src_mask=mask, src_key_padding_mask=pad))


@model
def make_encoder_layer_norm_first():
    """Pre-norm, batch_first, gelu, layer_norm_eps 1e-6, with a causal (bool) mask."""
    net = nn.TransformerEncoderLayer(12, 3, dim_feedforward=20, activation='gelu', layer_norm_eps=1e-6,
                                     batch_first=True, norm_first=True)
    x = torch.randn(2, 6, 12)
    causal = torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1)
    return encoder_layer_fixture('TransformerEncoderLayer(12, 3, dim_feedforward=20, gelu, eps 1e-6, batch_first, norm_first), eval, causal bool src_mask',
                                 net, [('src', x), ('src_mask', causal)], lambda m: m(x, src_mask=causal))


def with_grad_fixture(description, net, inputs, run):
    """As encoder_layer_fixture, but run with gradients on: PyTorch 1.13's fast paths (MultiheadAttention's,
    the encoder's nested tensors) then stay off, so the values are its modules' plain computation."""
    randomize(net)
    net.eval()
    return fixture(description, net, inputs, [('y', run(net))])


@model
def make_decoder_layer():
    """Post-norm, [T, N, E], relu, a causal (bool) tgt_mask and a bool memory key padding mask."""
    net = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16)
    tgt, memory = torch.randn(4, 2, 8), torch.randn(5, 2, 8)
    causal = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)  # generate_square_subsequent_mask's -inf is no JSON number
    pad = torch.tensor([[False, False, False, True, True], [False, False, False, False, False]])
    return with_grad_fixture('TransformerDecoderLayer(8, 2, dim_feedforward=16) (post-norm, relu), eval, causal bool tgt_mask, '
                             'bool memory_key_padding_mask', net, [('tgt', tgt), ('memory', memory), ('tgt_mask', causal), ('memory_key_padding_mask', pad)],
                             lambda m: m(tgt, memory, tgt_mask=causal, memory_key_padding_mask=pad))


@model
def make_decoder_layer_norm_first():
    """Pre-norm, batch_first, gelu, layer_norm_eps 1e-6, a float memory_mask and a bool tgt key padding mask."""
    net = nn.TransformerDecoderLayer(12, 3, dim_feedforward=20, activation='gelu', layer_norm_eps=1e-6, batch_first=True, norm_first=True)
    tgt, memory = torch.randn(2, 3, 12), torch.randn(2, 4, 12)
    mmask = torch.randn(3, 4)
    pad = torch.tensor([[False, False, True], [False, False, False]])
    return with_grad_fixture('TransformerDecoderLayer(12, 3, dim_feedforward=20, gelu, eps 1e-6, batch_first, norm_first), eval, float memory_mask, '
                             'bool tgt_key_padding_mask', net, [('tgt', tgt), ('memory', memory), ('memory_mask', mmask), ('tgt_key_padding_mask', pad)],
                             lambda m: m(tgt, memory, memory_mask=mmask, tgt_key_padding_mask=pad))


@model
def make_transformer():
    """nn.Transformer: 2 encoder and 2 decoder layers with their final norms, a causal tgt_mask, bool src and memory key padding masks."""
    net = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16)
    src, tgt = torch.randn(5, 2, 8), torch.randn(4, 2, 8)
    causal = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
    pad = torch.tensor([[False, False, False, False, True], [False, False, False, False, False]])
    return with_grad_fixture('Transformer(d_model=8, nhead=2, 2 + 2 layers, dim_feedforward=16), eval, causal tgt_mask, the same bool '
                             'src_key_padding_mask and memory_key_padding_mask', net,
                             [('src', src), ('tgt', tgt), ('tgt_mask', causal), ('src_key_padding_mask', pad)],
                             lambda m: m(src, tgt, tgt_mask=causal, src_key_padding_mask=pad, memory_key_padding_mask=pad))


# ---- losses: value and gradient w.r.t. the input ----------------------------------------------

def loss_fixture(description, loss_fn, x, target):
    """loss_fn(x, target) and its gradient w.r.t. x (made with requires_grad)."""
    loss = loss_fn(x, target)
    loss.backward()
    return fixture(description, loss_fn, [('input', x), ('target', target)], [('loss', loss), ('grad_input', x.grad)])


@model
def make_cross_entropy():
    loss_fn = nn.CrossEntropyLoss(weight=torch.tensor([0.5, 1.0, 2.0, 1.5]), label_smoothing=0.1)
    x = torch.randn(5, 4, requires_grad=True)
    target = torch.tensor([0, 3, 1, 2, 3], dtype=torch.int64)
    return loss_fixture('CrossEntropyLoss(weight=[0.5, 1, 2, 1.5], label_smoothing=0.1), mean', loss_fn, x, target)


@model
def make_cross_entropy_probs():
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.2, reduction='sum')
    x = torch.randn(3, 4, requires_grad=True)
    target = torch.randn(3, 4).softmax(1)
    return loss_fixture('CrossEntropyLoss(label_smoothing=0.2, reduction=sum) with class-probability targets', loss_fn, x, target)


@model
def make_nll():
    loss_fn = nn.NLLLoss(weight=torch.tensor([0.2, 1.0, 3.0]), ignore_index=1)
    x = torch.randn(2, 3, 4, requires_grad=True)  # [N, C, d]
    target = torch.tensor([[2, 0, 1, 1], [0, 2, 2, 0]], dtype=torch.int64)
    return loss_fixture('NLLLoss(weight=[0.2, 1, 3], ignore_index=1), mean, on [N, C, d]', loss_fn, x, target)


@model
def make_mse():
    x = torch.randn(3, 4, requires_grad=True)
    return loss_fixture('MSELoss(), mean', nn.MSELoss(), x, torch.randn(3, 4))


@model
def make_ctc():
    """log_probs = log_softmax(logits, 2); the gradient w.r.t. logits, and PyTorch's w.r.t. log_probs
    (its kernel's, which adds exp(log_probs) to the exact gradient: equal after log_softmax)."""
    loss_fn = nn.CTCLoss(blank=0)
    T, N, C = 8, 2, 5
    logits = torch.randn(T, N, C, requires_grad=True)
    log_probs = logits.log_softmax(2)
    log_probs.retain_grad()
    targets = torch.tensor([[1, 2, 2], [3, 4, 0]], dtype=torch.int64)
    input_lengths = torch.tensor([8, 6], dtype=torch.int64)
    target_lengths = torch.tensor([3, 2], dtype=torch.int64)
    loss = loss_fn(log_probs, targets, input_lengths, target_lengths)
    loss.backward()
    return fixture('CTCLoss(blank=0), mean, on log_softmax(logits, 2)', loss_fn,
                   [('logits', logits), ('targets', targets), ('input_lengths', input_lengths), ('target_lengths', target_lengths)],
                   [('loss', loss), ('grad_logits', logits.grad), ('grad_log_probs', log_probs.grad)])


class CNN(nn.Module):
    """Convolutions and pools with the edge cases that differ between libraries: ceil_mode
    (an overhanging window), count_include_pad, groups, stride, dilation, PyTorch's adaptive cells."""

    def __init__(self, adaptive=(2, 3)):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 4, 3, padding=1)
        self.pool1 = nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True)
        self.conv2 = nn.Conv2d(4, 6, (3, 2), stride=(1, 2), padding=(2, 1), dilation=(2, 1), groups=2)
        self.pool2 = nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=True)
        self.pool3 = nn.AdaptiveAvgPool2d(adaptive)
        self.fc = nn.Linear(36, 3)

    def forward(self, x):
        h = self.pool1(torch.relu(self.conv1(x)))
        h = self.pool3(self.pool2(torch.relu(self.conv2(h))))
        return self.fc(torch.flatten(h, 1))


@model
def make_cnn():
    net = CNN().eval()
    randomize(net)
    x = torch.randn(2, 2, 11, 10)
    with torch.no_grad():
        y = net(x)
    return fixture('CNN: Conv2d(2,4,3,p1) ReLU MaxPool2d(3,2,1,ceil) Conv2d(4,6,(3,2),s(1,2),p(2,1),d(2,1),g2) ReLU '
                   'AvgPool2d(3,2,1,ceil,cip) AdaptiveAvgPool2d((2,3)) Linear(36,3)', net, [('x', x)], [('y', y)])


@model
def make_cnn_grad():
    """The CNN's input gradient: sum(net(x)^2) and d/dx, with uneven adaptive cells (4 -> 3, 3 -> 2)."""
    net = CNN(adaptive=(3, 2)).train()
    randomize(net)
    x = torch.randn(2, 2, 11, 10, requires_grad=True)
    loss = net(x).pow(2).sum()
    loss.backward()
    return fixture('sum(CNN(x)^2) with AdaptiveAvgPool2d((3,2)), and its gradient w.r.t. x', net, [('x', x)], [('loss', loss), ('grad_x', x.grad)])


class ConvMisc(nn.Module):
    """Conv1d, ConvTranspose2d with output_padding and groups, the pools' other options."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(3, 4, 3, stride=2, padding=1, dilation=2)
        self.ct = nn.ConvTranspose2d(4, 6, (3, 2), stride=2, padding=1, output_padding=1, groups=2)
        self.pool = nn.AvgPool2d(2, stride=2, padding=1, ceil_mode=True, count_include_pad=False)

    def forward(self, x):
        y = self.ct(torch.relu(self.c1(x)).unsqueeze(2))
        return F.max_pool2d(self.pool(y), 2, stride=1, dilation=(1, 2), ceil_mode=True)


@model
def make_conv_misc():
    net = ConvMisc().eval()
    randomize(net)
    x = torch.randn(2, 3, 13)
    with torch.no_grad():
        y = net(x)
    return fixture('Conv1d(3,4,3,s2,p1,d2) ReLU unsqueeze(2) ConvTranspose2d(4,6,(3,2),s2,p1,op1,g2) '
                   'AvgPool2d(2,2,1,ceil,no cip) max_pool2d(2,1,d(1,2),ceil)', net, [('x', x)], [('y', y)])


# ---- model families at several sizes of their symbolic axes -------------------------------------
#
# Each writes tests/js/fixtures/pytorch/families/<name>.json (read by tests/js/families.test.mjs,
# eager, and tests/js/families-symbolic.test.mjs, one trace with symbolic axes run at every case):
#
#   { "torch_version", "model": "<description>", "state_dict": { ... as above },
#     "axes": { "<input>": ["batch", "seq", null, ...] },   the axes that should be symbolic
#     "trace_case": <index into cases>,                      the case to trace at (sizes >= 2, distinct,
#                                                            none of the model's fixed sizes)
#     "cases": [ { "sizes": { "batch": 2, "seq": 8 }, "inputs": [...], "outputs": [...] }, ... ],
#     "failures": [ { "sizes", "input_shape", "error" } ] }  sizes where PyTorch itself fails (UNet)
#
# Floats here are the shortest decimal that reads back as the same float32 (checked when
# written), which keeps these files at half the size of repr(double).

FAMILIES = {}


def family(fn):
    """Registers make_<name> as the family fixture <name>."""
    FAMILIES[fn.__name__[len('make_'):]] = fn
    return fn


def short_floats(entry):
    """entry (an encode() result) with each float32 as its shortest round-tripping decimal."""
    if entry['dtype'] != 'float32':
        return entry
    data = []
    for v in entry['data']:
        s = float(str(np.float32(v)))
        assert np.float32(s) == np.float32(v) or (np.isnan(s) and np.isnan(v)), (v, s)
        data.append(s)
    return {**entry, 'data': data}


def family_fixture(description, module, axes, trace_case, cases, failures=()):
    """cases: list of (sizes, [(name, input)], run) with run(module, *inputs) -> [(name, output)]."""
    module.eval()
    out_cases = []
    for sizes, inputs, run in cases:
        with torch.no_grad():
            outputs = run(module, *[t for _, t in inputs])
        out_cases.append({'sizes': sizes,
                          'inputs': [short_floats(encode(t, n)) for n, t in inputs],
                          'outputs': [short_floats(encode(t, n)) for n, t in outputs]})
    return {
        'torch_version': torch.__version__,
        'model': description,
        'state_dict': {k: short_floats(encode(v)) for k, v in module.state_dict().items()},
        'axes': axes,
        'trace_case': trace_case,
        'cases': out_cases,
        'failures': list(failures),
    }


def randomize_norms(module, tracked=5):
    """Every BatchNorm / LayerNorm gets non-trivial affine parameters (and BatchNorm running
    statistics: mean N(0, 0.2), var U(0.5, 2), num_batches_tracked `tracked`), so loading them matters."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.BatchNorm3d, nn.LayerNorm)):
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0, 0.2)
            if isinstance(m, (nn.BatchNorm2d, nn.BatchNorm3d)):
                m.running_mean.normal_(0, 0.2)
                m.running_var.uniform_(0.5, 2.0)
                m.num_batches_tracked.fill_(tracked)


def randomize_weights(module):
    """Conv and Linear weights from N(0, 2 / fan_in) (activations keep their scale through ReLU, so
    the outputs depend strongly on the input), their biases and every other parameter (LSTM
    weights) from N(0, 0.1) and N(0, 0.4); embeddings keep PyTorch's N(0, 1)."""
    with torch.no_grad():
        done = set()
        for m in module.modules():
            if isinstance(m, (nn.Conv2d, nn.Conv3d, nn.ConvTranspose2d, nn.Linear)):
                fan_in, _ = nn.init._calculate_fan_in_and_fan_out(m.weight)
                m.weight.normal_(0, math.sqrt(2.0 / fan_in))
                done.add(id(m.weight))
                if m.bias is not None:
                    m.bias.normal_(0, 0.1)
                    done.add(id(m.bias))
            elif isinstance(m, (nn.Embedding, nn.BatchNorm2d, nn.BatchNorm3d, nn.LayerNorm)):
                done.update(id(q) for q in m.parameters())
        for p in module.parameters():
            if id(p) not in done:
                p.normal_(0, 0.4)


class RNNClassifier(nn.Module):
    def __init__(self, vocab=15, embed=6, hidden=10, classes=4):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, idx):
        out, _ = self.lstm(self.embedding(idx))
        return self.fc(out[:, out.shape[1] - 1])  # the last step, as select(1, T - 1)


def token_cases(vocab, sizes, run):
    """One case per (batch, seq): int64 token ids [batch, seq] drawn from [0, vocab)."""
    return [({'batch': b, 'seq': t}, [('idx', torch.randint(0, vocab, (b, t)))], run) for b, t in sizes]


SEQ_SIZES = [(1, 5), (2, 8), (3, 13), (1, 13)]


@family
def make_rnn_classifier():
    net = RNNClassifier()
    randomize_weights(net)
    return family_fixture('embedding=Embedding(15, 6) -> lstm=LSTM(6, 10, batch_first=True) -> out[:, out.shape[1] - 1] -> fc=Linear(10, 4)',
                          net, {'idx': ['batch', 'seq']}, 1,
                          token_cases(15, SEQ_SIZES, lambda m, idx: [('logits', m(idx))]))


class GPTAttention(nn.Module):
    """nanoGPT's CausalSelfAttention written out: the causal mask made from the length T of x."""

    def __init__(self, d, n_head, mask):
        super().__init__()
        self.n_head = n_head
        self.mask = mask  # 'tril': torch.ones(T, T).tril(); 'arange': from torch.arange(T)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)

    def forward(self, x):
        B, T, C = x.shape
        hs = C // self.n_head
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        if self.mask == 'tril':
            att = att.masked_fill(torch.ones(T, T).tril() == 0, float('-inf'))
        else:
            i = torch.arange(T)
            att = att.masked_fill(i.unsqueeze(0) > i.unsqueeze(1), float('-inf'))
        y = F.softmax(att, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class GPTMLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc = nn.Linear(d, 4 * d)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class GPTBlock(nn.Module):
    def __init__(self, d, n_head, mask):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = GPTAttention(d, n_head, mask)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = GPTMLP(d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab=20, block_size=32, d=12, n_head=3):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(block_size, d)
        self.h = nn.ModuleList([GPTBlock(d, n_head, 'tril'), GPTBlock(d, n_head, 'arange')])
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied

    def forward(self, idx):
        B, T = idx.shape
        x = self.wte(idx) + self.wpe.weight[:T]  # learned positions, sliced to the length
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


@family
def make_gpt():
    net = GPT()
    randomize_norms(net)
    return family_fixture('GPT: wte=Embedding(20, 12) + wpe.weight[:T] (block 32), h = 2 pre-norm blocks (ln_1, attn: c_attn Linear(12, 36), '
                          '3 heads, (q @ k^T) * (1 / sqrt(4)), masked_fill(-inf) with the causal mask from ones(T, T).tril() in h.0 '
                          'and from arange(T) in h.1, softmax, c_proj; ln_2, mlp: c_fc, GELU, c_proj), ln_f, lm_head tied to wte',
                          net, {'idx': ['batch', 'seq']}, 1,
                          token_cases(20, SEQ_SIZES, lambda m, idx: [('logits', m(idx))]))


class BasicBlock(nn.Module):
    """torchvision's BasicBlock: a stride-2 block adds a 1x1 stride-2 conv + BatchNorm to its
    3x3 / stride 2 / padding 1 main branch."""

    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + identity)


class ResNet(nn.Module):
    """examples/zoo/resnet.mjs's architecture (and keys)."""

    def __init__(self, classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU())
        self.layer1 = nn.Sequential(BasicBlock(4, 4))
        self.layer2 = nn.Sequential(BasicBlock(4, 8, stride=2))
        self.layer3 = nn.Sequential(BasicBlock(8, 16, stride=2))
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        x = self.layer3(self.layer2(self.layer1(self.stem(x))))
        return self.fc(torch.flatten(self.pool(x), 1))


def image_cases(sizes):
    """A family's cases on images x [batch, 3, height, width], one at each (batch, height, width)
    of sizes, its output 'logits'."""
    return [({'batch': b, 'height': h, 'width': w}, [('x', torch.randn(b, 3, h, w))], lambda m, x: [('logits', m(x))])
            for b, h, w in sizes]


@family
def make_resnet():
    net = ResNet()
    randomize_weights(net)
    randomize_norms(net)
    cases = image_cases([(2, 17, 23), (1, 32, 32), (3, 9, 12)])
    return family_fixture('ResNet: stem (Conv2d(3, 4, 3, p1), BatchNorm2d, ReLU), layer1 BasicBlock(4, 4), layer2 BasicBlock(4, 8, stride 2), '
                          'layer3 BasicBlock(8, 16, stride 2) (each stride-2 block: conv 3x3 s2 p1 + downsample Conv2d 1x1 s2 + BatchNorm2d), '
                          'AdaptiveAvgPool2d((1, 1)), flatten, fc=Linear(16, 5); BatchNorm in eval',
                          net, {'x': ['batch', None, 'height', 'width']}, 0, cases)


def conv_relu(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU())


class UNet(nn.Module):
    """Two levels down (conv, MaxPool2d(2)), a bottleneck, two up: ConvTranspose2d(2, stride 2)
    then bilinear Upsample(scale_factor=2), each concatenated with its skip, a 1x1 head."""

    def __init__(self, cin=1, c=4, classes=3):
        super().__init__()
        self.enc1 = conv_relu(cin, c)
        self.enc2 = conv_relu(c, 2 * c)
        self.pool = nn.MaxPool2d(2)
        self.bottleneck = conv_relu(2 * c, 4 * c)
        self.up2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.dec2 = conv_relu(4 * c, 2 * c)
        self.up1 = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)
        self.dec1 = conv_relu(3 * c, c)
        self.head = nn.Conv2d(c, classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)                                       # [B, c, H, W]
        e2 = self.enc2(self.pool(e1))                           # [B, 2c, H/2, W/2]
        b = self.bottleneck(self.pool(e2))                      # [B, 4c, H/4, W/4]
        d2 = self.dec2(torch.cat([self.up2(b), e2], dim=1))     # [B, 2c, H/2, W/2]
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))    # [B, c, H, W]
        return self.head(d1)


@family
def make_unet():
    net = UNet().eval()
    randomize_weights(net)
    cases = [({'batch': b, 'height': h, 'width': w}, [('x', torch.randn(b, 1, h, w))], lambda m, x: [('y', m(x))])
             for b, h, w in [(2, 20, 28), (1, 16, 20), (3, 24, 12)]]
    failures = []
    for shape in [(1, 1, 18, 20), (1, 1, 16, 17)]:  # 18 = 2 mod 4: the level-2 cat; 17 odd: the level-1 cat
        try:
            with torch.no_grad():
                net(torch.randn(*shape))
            raise AssertionError(f'UNet ran at {shape}')
        except RuntimeError as e:
            failures.append({'sizes': {'batch': shape[0], 'height': shape[2], 'width': shape[3]},
                             'input_shape': list(shape), 'error': f'RuntimeError: {e}'})
    return family_fixture('UNet: enc1 (Conv2d(1, 4, 3, p1), ReLU), MaxPool2d(2), enc2 (4 -> 8), MaxPool2d(2), bottleneck (8 -> 16), '
                          'up2 ConvTranspose2d(16, 8, 2, stride 2), cat with enc2, dec2 (16 -> 8), up1 Upsample(scale_factor=2, bilinear), '
                          'cat with enc1, dec1 (12 -> 4), head Conv2d(4, 3, 1); H and W must be multiples of 4',
                          net, {'x': ['batch', None, 'height', 'width']}, 0, cases, failures)


# ---- ports of common PyTorch code: torchvision's MobileNet blocks, Hugging Face's GPT-2 block ----

class ConvBNAct(nn.Sequential):
    """torchvision's Conv2dNormActivation: Conv2d (no bias, 'same' padding for odd kernels),
    BatchNorm2d, then the activation unless it is None (keys 0, 1, 2)."""

    def __init__(self, cin, cout, k=3, stride=1, groups=1, act=nn.ReLU6):
        layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
        if act is not None:
            layers.append(act(inplace=True))
        super().__init__(*layers)


class InvertedResidualV2(nn.Module):
    """torchvision's MobileNetV2 InvertedResidual: 1x1 expand (ReLU6), 3x3 depthwise (ReLU6), 1x1
    linear projection, with the input added when the shape is kept."""

    def __init__(self, inp, oup, stride, expand_ratio):
        super().__init__()
        hidden = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(ConvBNAct(inp, hidden, k=1))
        layers.extend([ConvBNAct(hidden, hidden, stride=stride, groups=hidden),
                       nn.Conv2d(hidden, oup, 1, 1, 0, bias=False), nn.BatchNorm2d(oup)])
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


class SqueezeExcitation(nn.Module):
    """torchvision.ops.SqueezeExcitation with MobileNetV3's Hardsigmoid gate."""

    def __init__(self, input_channels, squeeze_channels):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = nn.ReLU()
        self.scale_activation = nn.Hardsigmoid()

    def _scale(self, input):
        scale = self.avgpool(input)
        scale = self.fc1(scale)
        scale = self.activation(scale)
        scale = self.fc2(scale)
        return self.scale_activation(scale)

    def forward(self, input):
        scale = self._scale(input)
        return scale * input


class InvertedResidualV3(nn.Module):
    """torchvision's MobileNetV3 InvertedResidual: expand (Hardswish), depthwise k x k (Hardswish),
    squeeze-excitation, linear projection, the input added (result += input)."""

    def __init__(self, cin, k, expanded, cout, squeeze):
        super().__init__()
        self.use_res_connect = cin == cout
        self.block = nn.Sequential(ConvBNAct(cin, expanded, k=1, act=nn.Hardswish),
                                   ConvBNAct(expanded, expanded, k=k, groups=expanded, act=nn.Hardswish),
                                   SqueezeExcitation(expanded, squeeze),
                                   ConvBNAct(expanded, cout, k=1, act=None))

    def forward(self, input):
        result = self.block(input)
        if self.use_res_connect:
            result += input
        return result


class MobileNet(nn.Module):
    """A small MobileNet from torchvision's blocks, with a stem, an even-kernel 'same' conv and
    MobileNetV3's classifier (Linear, Hardswish, Dropout, Linear)."""

    def __init__(self, classes=5):
        super().__init__()
        self.features = nn.Sequential(ConvBNAct(3, 8, stride=2),
                                      InvertedResidualV2(8, 8, 1, 2),
                                      InvertedResidualV2(8, 12, 2, 3),
                                      InvertedResidualV3(12, 5, 24, 12, 8))
        self.mix = nn.Conv2d(12, 16, 2, padding='same', bias=False)  # PyTorch pads the odd extra at the end
        self.relu6 = nn.ReLU6()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.classifier = nn.Sequential(nn.Linear(16, 20), nn.Hardswish(inplace=True), nn.Dropout(p=0.2, inplace=True), nn.Identity(),
                                        nn.Linear(20, classes))

    def forward(self, x):
        x = self.relu6(self.mix(self.features(x)))
        return self.classifier(self.flatten(self.avgpool(x)))


@family
def make_mobilenet():
    net = MobileNet()
    randomize_weights(net)
    randomize_norms(net)
    cases = image_cases([(2, 13, 15), (1, 9, 11), (3, 10, 7)])
    return family_fixture('MobileNet from torchvision\'s blocks: features (stem Conv2dNormActivation(3, 8, s2, ReLU6); MobileNetV2 '
                          'InvertedResidual(8, 8, 1, expand 2) with its skip and (8, 12, stride 2, expand 3); MobileNetV3 InvertedResidual '
                          '(12, k5, 24, 12, SqueezeExcitation(24, 8) with Hardsigmoid, Hardswish) with result += input), mix Conv2d(12, 16, 2, '
                          'padding=\'same\'), ReLU6, AdaptiveAvgPool2d(1), Flatten, classifier (Linear(16, 20), Hardswish, Dropout(0.2), '
                          'Identity, Linear(20, 5)); BatchNorm in eval',
                          net, {'x': ['batch', None, 'height', 'width']}, 0, cases)


class Conv1D(nn.Module):
    """Hugging Face's GPT-2 Conv1D: a Linear with the weight transposed ([nx, nf]), as addmm."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class NewGELUActivation(nn.Module):
    """Hugging Face's gelu_new (GPT-2's activation), written out."""

    def forward(self, input):
        return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * torch.pow(input, 3.0))))


class GPT2Attention(nn.Module):
    """Hugging Face's GPT2Attention (no cache, no cross-attention): the causal mask a bool
    tril buffer sliced to the length. The ways PyTorch code splits q, k, v and masks:
    'hf': split(split_size, dim=2), torch.where(mask, w, finfo.min) (as Hugging Face's);
    'sizes': split([d, d, d], dim=2), masked_fill(~mask, -inf);
    'chunk': chunk(3, dim=-1), masked_fill with torch.tril(torch.ones(T, T)) == 0 (nanoGPT's)."""

    def __init__(self, d, n_head, max_positions, style):
        super().__init__()
        self.register_buffer('bias', torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(1, 1, max_positions, max_positions))
        self.num_heads = n_head
        self.head_dim = d // n_head
        self.split_size = d
        self.style = style
        self.c_attn = Conv1D(3 * d, d)
        self.c_proj = Conv1D(d, d)
        self.attn_dropout = nn.Dropout(0.1)
        self.resid_dropout = nn.Dropout(0.1)

    def _split_heads(self, tensor, num_heads, attn_head_size):
        new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
        tensor = tensor.view(new_shape)
        return tensor.permute(0, 2, 1, 3)  # (batch, head, seq_length, head_features)

    def _merge_heads(self, tensor, num_heads, attn_head_size):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        new_shape = tensor.size()[:-2] + (num_heads * attn_head_size,)
        return tensor.view(new_shape)

    def _attn(self, query, key, value):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full([], value.size(-1) ** 0.5, dtype=attn_weights.dtype)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length:key_length, :key_length]
        if self.style == 'hf':
            mask_value = torch.full([], torch.finfo(attn_weights.dtype).min, dtype=attn_weights.dtype)
            attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        elif self.style == 'sizes':
            attn_weights = attn_weights.masked_fill(~causal_mask, float('-inf'))
        else:
            T = key_length
            attn_weights = attn_weights.masked_fill(torch.tril(torch.ones(T, T)) == 0, float('-inf'))
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.type(value.dtype)
        attn_weights = self.attn_dropout(attn_weights)
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states):
        qkv = self.c_attn(hidden_states)
        if self.style == 'hf':
            query, key, value = qkv.split(self.split_size, dim=2)
        elif self.style == 'sizes':
            query, key, value = qkv.split([self.split_size] * 3, dim=2)
        else:
            query, key, value = qkv.chunk(3, dim=-1)
        query = self._split_heads(query, self.num_heads, self.head_dim)
        key = self._split_heads(key, self.num_heads, self.head_dim)
        value = self._split_heads(value, self.num_heads, self.head_dim)
        attn_output = self._attn(query, key, value)
        attn_output = self._merge_heads(attn_output, self.num_heads, self.head_dim)
        attn_output = self.c_proj(attn_output)
        return self.resid_dropout(attn_output)


class GPT2MLP(nn.Module):
    def __init__(self, intermediate_size, d):
        super().__init__()
        self.c_fc = Conv1D(intermediate_size, d)
        self.c_proj = Conv1D(d, intermediate_size)
        self.act = NewGELUActivation()
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states):
        hidden_states = self.c_fc(hidden_states)
        hidden_states = self.act(hidden_states)
        hidden_states = self.c_proj(hidden_states)
        return self.dropout(hidden_states)


class GPT2Block(nn.Module):
    def __init__(self, d, n_head, max_positions, style):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d, eps=1e-5)
        self.attn = GPT2Attention(d, n_head, max_positions, style)
        self.ln_2 = nn.LayerNorm(d, eps=1e-5)
        self.mlp = GPT2MLP(4 * d, d)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.ln_1(hidden_states)
        attn_output = self.attn(hidden_states)
        hidden_states = attn_output + residual
        residual = hidden_states
        hidden_states = self.ln_2(hidden_states)
        feed_forward_hidden_states = self.mlp(hidden_states)
        return residual + feed_forward_hidden_states


def gpt2_hidden_states(model, input_ids):
    """transformers' GPT2Model.forward without cache, of a model with its wte, wpe, drop, h and ln_f:
    wte + wpe(arange(T)), dropout, the blocks, ln_f, as [*input_ids.shape, d] (also
    tools/transformers_ports.py's GPT2Model)."""
    input_shape = input_ids.size()
    input_ids = input_ids.view(-1, input_shape[-1])
    position_ids = torch.arange(0, input_shape[-1], dtype=torch.long).unsqueeze(0)
    hidden_states = model.drop(model.wte(input_ids) + model.wpe(position_ids))
    for block in model.h:
        hidden_states = block(hidden_states)
    hidden_states = model.ln_f(hidden_states)
    return hidden_states.view(input_shape + (hidden_states.size(-1),))


class GPT2(nn.Module):
    """Hugging Face's GPT2LMHeadModel without cache: wte + wpe(arange(T)), dropout, blocks,
    ln_f, lm_head tied to wte."""

    def __init__(self, vocab=16, n_positions=16, d=8, n_head=2):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(n_positions, d)
        self.drop = nn.Dropout(0.1)
        self.h = nn.ModuleList([GPT2Block(d, n_head, n_positions, s) for s in ('hf', 'sizes', 'chunk')])
        self.ln_f = nn.LayerNorm(d, eps=1e-5)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, input_ids):
        return self.lm_head(gpt2_hidden_states(self, input_ids))


@family
def make_gpt2():
    net = GPT2()
    randomize_norms(net)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, Conv1D):  # N(0, 0.02) would make the blocks near identity
                m.weight.normal_(0, 0.5)
                m.bias.normal_(0, 0.1)
    return family_fixture('GPT-2 as Hugging Face writes it: wte + wpe(arange(T)), Dropout, 3 blocks (ln_1, attn: Conv1D c_attn (addmm), q, k, v '
                          'by split(8, dim=2) / split([8, 8, 8], dim=2) / chunk(3, dim=-1), view + permute heads, / full([], sqrt(4)), the bool '
                          'tril buffer bias[:, :, :T, :T] by torch.where(mask, w, finfo.min) / masked_fill(~mask, -inf) / masked_fill('
                          'tril(ones(T, T)) == 0, -inf), softmax, permute + contiguous + view, c_proj; ln_2, mlp: Conv1D, gelu_new written out, '
                          'Conv1D), ln_f, lm_head tied to wte; vocab 16, 16 positions, d 8, 2 heads',
                          net, {'input_ids': ['batch', 'seq']}, 1,
                          [({'batch': b, 'seq': t}, [('input_ids', torch.randint(0, 16, (b, t)))], lambda m, ids: [('logits', m(ids))])
                           for b, t in SEQ_SIZES])


def write_json(path, value):
    """Writes value as compact JSON and a newline (the committed fixtures' form), then its size."""
    with open(path, 'w') as f:
        json.dump(value, f, separators=(',', ':'))
        f.write('\n')
    print(f'{path}: {os.path.getsize(path)} bytes')


def main(names, known=None):
    """Writes the fixtures named (all when none) of known ({name: (make, out_dir)}; default this
    tool's), each from torch.manual_seed(0) on one thread. tools/transformers_ports.py passes its own."""
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    known = known or {**{n: (f, OUT_DIR) for n, f in MODELS.items()}, **{n: (f, os.path.join(OUT_DIR, 'families')) for n, f in FAMILIES.items()}}
    for name in names or known:
        if name not in known:
            sys.exit(f'unknown fixture {name!r}; known: {", ".join(known)}')
        make, out_dir = known[name]
        os.makedirs(out_dir, exist_ok=True)
        torch.manual_seed(0)
        write_json(os.path.join(out_dir, f'{name}.json'), make())


if __name__ == '__main__':
    main(sys.argv[1:])
