#!/usr/bin/env python3
"""PyTorch reference fixtures for tests/js/mamba-port.test.mjs: Hugging Face transformers'
MambaForCausalLM (models/mamba/modeling_mamba.py) at a tiny configuration, its weights as
safetensors and its logits, in the format and folder of tools/transformers_ports.py (whose
fixture() writes them).

transformers is not a Debian package, so the modules below are this project's own PyTorch modules
written from reading upstream's: the same module tree and parameter names (`backbone.embeddings`,
`backbone.layers.N.norm`, `backbone.layers.N.mixer.{in_proj, conv1d, x_proj, dt_proj, out_proj,
A_log, D}`, `backbone.norm_f`, `lm_head` tied to the embeddings) and MambaMixer.slow_forward's
operations in its order, without a cache (the path a forward over a whole sequence takes on a CPU,
where the CUDA kernels are absent):

    in_proj, transpose, chunk into hidden_states and gate
    conv1d (depthwise, padding conv_kernel - 1) sliced back to seq_len, act (silu)
    x_proj, split into time_step, B, C; dt_proj, softplus
    A = -exp(A_log); discrete_A = exp(A * dt), deltaB_u = dt * B * x
    the selective scan as a Python loop over the sequence, each step's output stacked on the last axis
    the D skip, the gate act(gate), out_proj
    MambaRMSNorm before each mixer (residual in float32), norm_f, the tied lm_head

    mamba    hidden 32, state 8, expand 2 (intermediate 64), conv kernel 4, time_step_rank auto (2),
             2 layers, vocab 50; cases at lengths 1, 2, 3 (shorter than the kernel), 4 (the kernel),
             odd, longer, and far above the traced length

    python3 tools/mamba_ports.py

(python3 being one that imports torch: Debian's python3-torch on /usr/bin/python3.) Deterministic:
one thread, torch.manual_seed(0), fixed inputs.
"""
import math
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import transformers_ports as hf  # noqa: E402  (fixture(), token_cases(), the output folder)
from pytorch_reference import main  # noqa: E402


class MambaMixer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ssm_state_size = c['state_size']
        self.conv_kernel_size = c['conv_kernel']
        self.intermediate_size = c['intermediate_size']
        self.time_step_rank = c['time_step_rank']
        self.conv1d = nn.Conv1d(self.intermediate_size, self.intermediate_size, bias=c['use_conv_bias'],
                                kernel_size=c['conv_kernel'], groups=self.intermediate_size, padding=c['conv_kernel'] - 1)
        self.act = nn.SiLU()
        self.in_proj = nn.Linear(c['hidden_size'], self.intermediate_size * 2, bias=c['use_bias'])
        self.x_proj = nn.Linear(self.intermediate_size, self.time_step_rank + self.ssm_state_size * 2, bias=False)
        self.dt_proj = nn.Linear(self.time_step_rank, self.intermediate_size, bias=True)
        A = torch.arange(1, self.ssm_state_size + 1, dtype=torch.float32)[None, :]
        self.A_log = nn.Parameter(torch.log(A.expand(self.intermediate_size, -1).contiguous()))
        self.D = nn.Parameter(torch.ones(self.intermediate_size))
        self.out_proj = nn.Linear(self.intermediate_size, c['hidden_size'], bias=c['use_bias'])

    def forward(self, input_states):
        # slow_forward without cache_params or attention_mask
        batch_size, seq_len, _ = input_states.shape
        dtype = input_states.dtype
        projected_states = self.in_proj(input_states).transpose(1, 2)
        hidden_states, gate = projected_states.chunk(2, dim=1)
        ssm_state = torch.zeros((batch_size, self.intermediate_size, self.ssm_state_size), dtype=dtype)
        hidden_states = self.act(self.conv1d(hidden_states)[..., :seq_len])
        ssm_parameters = self.x_proj(hidden_states.transpose(1, 2))
        time_step, B, C = torch.split(ssm_parameters, [self.time_step_rank, self.ssm_state_size, self.ssm_state_size], dim=-1)
        discrete_time_step = self.dt_proj(time_step)
        discrete_time_step = F.softplus(discrete_time_step).transpose(1, 2)
        A = -torch.exp(self.A_log.float())
        discrete_A = torch.exp(A[None, :, None, :] * discrete_time_step[:, :, :, None])
        discrete_B = discrete_time_step[:, :, :, None] * B[:, None, :, :].float()
        deltaB_u = discrete_B * hidden_states[:, :, :, None].float()
        scan_outputs = []
        for i in range(seq_len):
            ssm_state = discrete_A[:, :, i, :] * ssm_state + deltaB_u[:, :, i, :]
            scan_output = torch.matmul(ssm_state.to(dtype), C[:, i, :].unsqueeze(-1))
            scan_outputs.append(scan_output[:, :, 0])
        scan_output = torch.stack(scan_outputs, dim=-1)
        scan_output = scan_output + (hidden_states * self.D[None, :, None])
        scan_output = scan_output * self.act(gate)
        return self.out_proj(scan_output.transpose(1, 2))


class MambaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        return self.weight * (hidden_states * torch.rsqrt(variance + self.variance_epsilon))


class MambaBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = MambaRMSNorm(c['hidden_size'], eps=c['layer_norm_epsilon'])
        self.mixer = MambaMixer(c)

    def forward(self, hidden_states):
        return hidden_states + self.mixer(self.norm(hidden_states))


class MambaModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = nn.Embedding(c['vocab_size'], c['hidden_size'])
        self.layers = nn.ModuleList([MambaBlock(c) for _ in range(c['num_hidden_layers'])])
        self.norm_f = MambaRMSNorm(c['hidden_size'], eps=c['layer_norm_epsilon'])

    def forward(self, input_ids):
        hidden_states = self.embeddings(input_ids)
        for mixer_block in self.layers:
            hidden_states = mixer_block(hidden_states)
        return self.norm_f(hidden_states)


class MambaForCausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.backbone = MambaModel(c)
        self.lm_head = nn.Linear(c['hidden_size'], c['vocab_size'], bias=False)
        self.lm_head.weight = self.backbone.embeddings.weight  # _tied_weights_keys

    def forward(self, input_ids):
        return self.lm_head(self.backbone(input_ids))


def mamba_config(**kw):
    """MambaConfig's fields the slow path reads, with its derived ones (intermediate_size = expand *
    hidden_size, time_step_rank 'auto' = ceil(hidden_size / 16)) filled in as its __init__ does."""
    c = {'vocab_size': 50, 'hidden_size': 32, 'state_size': 8, 'num_hidden_layers': 2, 'layer_norm_epsilon': 1e-5,
         'expand': 2, 'conv_kernel': 4, 'use_bias': False, 'use_conv_bias': True, 'hidden_act': 'silu',
         'time_step_rank': 'auto', 'residual_in_fp32': True, 'tie_word_embeddings': True, **kw}
    c['intermediate_size'] = c['expand'] * c['hidden_size']
    if c['time_step_rank'] == 'auto':
        c['time_step_rank'] = math.ceil(c['hidden_size'] / 16)
    return c


# (batch, seq): traced at 2 x 6; 1 (one step, no loop repeat), 2 and 3 (shorter than the conv
# kernel: its padding reaches past the start), 4 (the kernel), 5 and 13 (odd, longer), 64 (far
# above); 3 x 6, the traced length at another batch.
MAMBA_SIZES = [(2, 6), (1, 1), (3, 2), (1, 3), (2, 4), (1, 5), (3, 6), (2, 13), (1, 64)]


def make_mamba():
    c = mamba_config()
    net = MambaForCausalLM(c)
    return hf.fixture('mamba', 'MambaForCausalLM (MambaMixer.slow_forward, no cache): in_proj, the depthwise causal conv1d '
                      '(padding 3, sliced back to seq_len), silu, x_proj split into dt, B, C, dt_proj + softplus, '
                      'A = -exp(A_log), the selective scan as a loop over the sequence stacked on the last axis, D skip, '
                      'silu gate, out_proj; RMSNorm, residual, norm_f, lm_head tied to the embeddings',
                      c, net, {'input_ids': ['batch', 'seq']}, hf.token_cases(c['vocab_size'], sizes=MAMBA_SIZES), ['logits'])


if __name__ == '__main__':
    main(sys.argv[1:], {'mamba': (make_mamba, hf.OUT_DIR)})
