#!/usr/bin/env python3
"""PyTorch reference fixtures for tests/js/pytorch.test.mjs.

Builds small PyTorch models with fixed seeds, in eval mode, runs them on fixed inputs and
writes one JSON fixture per model to tests/js/fixtures/pytorch/<name>.json:

  { "torch_version": "1.13.1", "model": "<short description>",
    "state_dict": { "<PyTorch key>": { "shape": [...], "dtype": "float32" | "int64" | "bool", "data": [...] } },
    "inputs":  [ { "name": ..., "shape": [...], "dtype": ..., "data": [...] }, ... ],
    "outputs": [ { "name": ..., "shape": [...], "dtype": ..., "data": [...] }, ... ] }

Data is flat, row-major; float32 values are written as repr() of the float (the shortest
decimal that reads back as the same float32 value). Loss fixtures add each gradient w.r.t.
the input as an extra output (named grad_<input>).

Run (needs PyTorch, only on the machine that regenerates the fixtures; CI reads the committed
JSON files and never runs this):

    python3 tools/pytorch_reference.py            # writes tests/js/fixtures/pytorch/*.json
    python3 tools/pytorch_reference.py mlp gru    # only these fixtures

(python3 being one that imports torch; the fixtures were made with Debian's python3-torch
1.13.1, `apt-get install -y --no-install-recommends python3-torch`, on /usr/bin/python3.)

The output is deterministic: one thread, torch.manual_seed per model, fixed inputs.

Adding a model: write a function `def make_<name>():` returning
`fixture(description, module_or_None, inputs, outputs)` and decorate it with @model; then add
its builder to MODELS in tests/js/pytorch.test.mjs. Still to add once their branches are merged
into main: the activation modules (ReLU, GELU incl. approximate='tanh', SiLU, Tanh, Sigmoid, ...)
and a CNN with BatchNorm2d. (cnn, cnn_grad and conv_misc cover Conv1d, Conv2d, ConvTranspose2d,
MaxPool2d, AvgPool2d and AdaptiveAvgPool2d.)
"""
import json
import os
import sys

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


def main(names):
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    os.makedirs(OUT_DIR, exist_ok=True)
    for name in names or MODELS:
        if name not in MODELS:
            sys.exit(f'unknown fixture {name!r}; known: {", ".join(MODELS)}')
        torch.manual_seed(0)
        fx = MODELS[name]()
        path = os.path.join(OUT_DIR, f'{name}.json')
        with open(path, 'w') as f:
            json.dump(fx, f, separators=(',', ':'))
            f.write('\n')
        print(f'{path}: {os.path.getsize(path)} bytes')


if __name__ == '__main__':
    main(sys.argv[1:])
