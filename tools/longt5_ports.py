#!/usr/bin/env python3
"""PyTorch reference fixtures for tests/js/transformers-ports-longt5.test.mjs: Hugging Face
transformers' LongT5EncoderModel (models/longt5/modeling_longt5.py) with both encoder attention
kinds at a tiny configuration, its weights as safetensors and its last_hidden_state, in the format
and folder of tools/transformers_ports.py (whose fixture() writes them).

transformers is not a Debian package, so the modules below are this project's own PyTorch modules
written from reading upstream's: the same module tree and parameter names (`shared`,
`encoder.embed_tokens` (the same table), `encoder.block.N.layer.0.{LocalSelfAttention,
TransientGlobalSelfAttention}.{q, k, v, o, relative_attention_bias, global_relative_attention_bias,
global_input_layer_norm}`, `encoder.block.N.layer.{0,1}.layer_norm`, `encoder.block.N.layer.1.
DenseReluDense.{wi, wo}`, `encoder.final_layer_norm`) and upstream's operations in its order. The
layer norm, the feed-forward layer and the relative position buckets are T5's (upstream copies
them from modeling_t5.py, so these import tools/transformers_ports.py's T5 ones):

    _split_into_blocks: pad the length to a multiple of block_len = local_radius + 1
      (pad_len = -len % block_len), reshape to [..., num_blocks, block_len, ...]
    _concatenate_3_blocks: pad the blocks by one on each side, cat the three shifted slices
    _get_local_attention_mask: blocked and 3-blocked masks, logical_and, the locality mask
      (|relative position| < block_len, _make_3block_relative_position_ids)
    local attention: einsum scores against the 3 blocks, the relative bias of the 3-block
      positions (compute_bias(block_len)) plus where(mask > 0, 0, -1e10), softmax, einsum, sliced
      back to the length
    transient-global attention: _make_global_fixed_block_ids (cumsum of 1 / global_block_size,
      floor, orphan tokens to the preceding block, padding -1), _create_global_aggregates (one_hot
      and einsum into seq_len // global_block_size global tokens), their layer norm, the side keys
      and values tiled across the blocks, the side bias (eq of the mask and the segment ids,
      _make_side_relative_position_ids bucketed by global_relative_attention_bias) split into
      blocks and cat after the local bias

    longt5_local    local attention, local_radius 4 (block_len 5)
    longt5_tglobal  transient-global attention, local_radius 3 (block_len 4), global_block_size 5
                    (1 / 5 is inexact in float32: the cumsum's rounding meets the floor)

    python3 tools/longt5_ports.py [longt5_local longt5_tglobal]

(python3 being one that imports torch: Debian's python3-torch on /usr/bin/python3.) Deterministic:
one thread, torch.manual_seed(0), fixed inputs.
"""
import os
import sys
from typing import List

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import transformers_ports as hf  # noqa: E402  (fixture(), token_cases(), the T5 modules, the output folder)
from pytorch_reference import main  # noqa: E402


def _pad_to_multiple(x, block_len, dim, pad_value=0):
    pad_len = -x.shape[dim] % block_len
    if not all(x.shape):
        new_shape = list(x.shape)
        new_shape[dim] += pad_len
        return torch.zeros(new_shape, dtype=x.dtype)
    pad = [(0, 0)] * x.ndim
    pad[dim] = (0, pad_len)
    pad = sum(pad[::-1], ())
    return nn.functional.pad(x, pad=pad, mode='constant', value=pad_value)


def _split_into_blocks(x, block_len, dim):
    if x.shape[dim] % block_len != 0:
        x = _pad_to_multiple(x, block_len, dim, pad_value=0)
    num_blocks = x.shape[dim] // block_len
    output_shape = x.shape[:dim] + (num_blocks, block_len) + x.shape[(dim + 1):]
    if 0 in output_shape:
        return torch.empty(output_shape, dtype=x.dtype, device=x.device)
    return x.reshape(output_shape)


def _concatenate_3_blocks(x, block_dim, sequence_dim, pad_value=0):
    num_blocks = x.shape[block_dim]
    pad = [(0, 0)] * x.ndim
    pad[block_dim] = (1, 1)
    pad = sum(pad[::-1], ())
    x = nn.functional.pad(x, pad=pad, mode='constant', value=pad_value)
    blocks_list: List[torch.Tensor] = []
    for i in range(3):
        indices = [slice(0, None)] * x.ndim
        indices[block_dim] = slice(i, i + num_blocks)
        blocks_list.append(x[tuple(indices)])
    return torch.cat(blocks_list, dim=sequence_dim)


def _make_3block_relative_position_ids(block_len):
    position_ids = torch.arange(3 * block_len, dtype=torch.int32)
    center_position_ids = position_ids[block_len:-block_len]
    return position_ids.unsqueeze(0) - center_position_ids.unsqueeze(1)


def _mask_local_attention_mask(local_attention_mask, block_len):
    relative_position_ids = _make_3block_relative_position_ids(block_len)
    locality_mask = torch.abs(relative_position_ids) < block_len
    locality_mask = locality_mask[None, None, :, :]
    return torch.logical_and(local_attention_mask, locality_mask)


def _get_local_attention_mask(attention_mask, block_len):
    _blocked_attention_mask = _split_into_blocks(attention_mask, block_len, dim=1)
    _3blocked_attention_mask = _concatenate_3_blocks(_blocked_attention_mask, block_dim=1, sequence_dim=2)
    _blocked_attention_mask = _blocked_attention_mask.unsqueeze(-1)
    _3blocked_attention_mask = _3blocked_attention_mask.unsqueeze(-2)
    local_attention_mask = torch.logical_and(_blocked_attention_mask, _3blocked_attention_mask)
    local_attention_mask = _mask_local_attention_mask(local_attention_mask, block_len)
    return local_attention_mask.unsqueeze(1)


def _make_global_fixed_block_ids(attention_mask, global_block_size):
    batch_size, seq_len = attention_mask.shape[:2]

    def handle_orphan_tokens(block_ids):
        block_ends = (torch.arange(seq_len) % global_block_size) == global_block_size - 1
        true_block_ends = torch.logical_and(block_ends, block_ids >= 0)
        full_blocks = true_block_ends.sum(-1).unsqueeze(-1).type(block_ids.dtype) - 1
        return torch.where(block_ids < full_blocks, block_ids, full_blocks)

    fixed_block_mask = torch.ones_like(attention_mask, device=attention_mask.device) / global_block_size
    fixed_block_mask = torch.cumsum(fixed_block_mask, axis=1) - fixed_block_mask
    mask = torch.where(attention_mask != 0.0, 1.0, -1000.0).type(attention_mask.dtype)
    global_block_ids = torch.floor(mask + fixed_block_mask - 1.0).type(attention_mask.dtype)
    _global_block_ids_lower_bound = torch.tensor(-1, dtype=global_block_ids.dtype)
    global_block_ids = torch.where(global_block_ids > _global_block_ids_lower_bound, global_block_ids, _global_block_ids_lower_bound)
    global_block_ids = (global_block_ids * attention_mask) + (attention_mask - 1)
    global_block_ids = handle_orphan_tokens(global_block_ids)
    num_globals = seq_len // global_block_size
    if num_globals > 0:
        _sequence_block_ids_max = torch.max(global_block_ids, dim=-1).values.repeat(num_globals, 1).transpose(0, 1)
    else:
        _sequence_block_ids_max = torch.zeros(batch_size, 0, dtype=global_block_ids.dtype)
    global_segment_ids = torch.cumsum(torch.ones(batch_size, num_globals), dim=-1) - 1
    global_segment_ids = torch.where(global_segment_ids <= _sequence_block_ids_max, 1, 0)
    return global_block_ids.type(torch.int), global_segment_ids.type(torch.int)


def _make_side_relative_position_ids(attention_mask, global_block_size):
    block_ids, global_segment_ids = _make_global_fixed_block_ids(attention_mask, global_block_size)
    global_seq_len = global_segment_ids.shape[-1]
    global_positions = torch.arange(global_seq_len)
    side_relative_position = global_positions - block_ids[..., None]
    return side_relative_position.type(torch.int64)


def _create_global_aggregates(hidden_states, block_ids, global_seq_len):
    block_ids = block_ids.where(block_ids >= 0, torch.tensor(global_seq_len, dtype=block_ids.dtype))
    one_hot_block_ids = nn.functional.one_hot(block_ids.type(torch.int64), global_seq_len + 1)[:, :, :-1]
    return torch.einsum('...nd,...ng->...gd', hidden_states, one_hot_block_ids.type(hidden_states.dtype))


class LongT5LocalAttention(nn.Module):
    def __init__(self, c, has_relative_attention_bias=False):
        super().__init__()
        self.has_relative_attention_bias = has_relative_attention_bias
        self.relative_attention_num_buckets = c['relative_attention_num_buckets']
        self.relative_attention_max_distance = c['relative_attention_max_distance']
        self.key_value_proj_dim = c['d_kv']
        self.n_heads = c['num_heads']
        self.block_len = c['local_radius'] + 1
        self.inner_dim = self.n_heads * self.key_value_proj_dim
        self.q = nn.Linear(c['d_model'], self.inner_dim, bias=False)
        self.k = nn.Linear(c['d_model'], self.inner_dim, bias=False)
        self.v = nn.Linear(c['d_model'], self.inner_dim, bias=False)
        self.o = nn.Linear(self.inner_dim, c['d_model'], bias=False)
        if self.has_relative_attention_bias:
            self.relative_attention_bias = nn.Embedding(self.relative_attention_num_buckets, self.n_heads)

    def bucket(self, relative_position):
        return hf.T5Attention._relative_position_bucket(relative_position, bidirectional=True,
                                                         num_buckets=self.relative_attention_num_buckets,
                                                         max_distance=self.relative_attention_max_distance)

    def compute_bias(self, block_length):
        memory_position = torch.arange(3 * block_length, dtype=torch.long)
        context_position = memory_position[block_length:-block_length]
        relative_position = memory_position[None, :] - context_position[:, None]
        values = self.relative_attention_bias(self.bucket(relative_position))
        return values.permute([2, 0, 1]).unsqueeze(0).unsqueeze(0)

    def project(self, hidden_states):
        batch_size = hidden_states.shape[0]

        def shape(states):
            return states.view(batch_size, -1, self.n_heads, self.key_value_proj_dim)
        query_states = _split_into_blocks(shape(self.q(hidden_states)), self.block_len, dim=1)
        key_states = _concatenate_3_blocks(_split_into_blocks(shape(self.k(hidden_states)), self.block_len, dim=1), block_dim=1, sequence_dim=2)
        value_states = _concatenate_3_blocks(_split_into_blocks(shape(self.v(hidden_states)), self.block_len, dim=1), block_dim=1, sequence_dim=2)
        return shape, query_states, key_states, value_states

    def attend(self, scores, position_bias, value_states, batch_size, seq_length):
        scores += position_bias
        attn_weights = nn.functional.softmax(scores.float(), dim=-1).type_as(scores)
        attn_output = torch.einsum('...hqk,...khd->...qhd', attn_weights, value_states).contiguous().view(batch_size, -1, self.inner_dim)
        attn_output = attn_output[:, :seq_length, :]
        return self.o(attn_output)

    def forward(self, hidden_states, mask=None, position_bias=None):
        batch_size, seq_length = hidden_states.shape[:2]
        _, query_states, key_states, value_states = self.project(hidden_states)
        scores = torch.einsum('...qhd,...khd->...hqk', query_states, key_states)
        if position_bias is None:
            if not self.has_relative_attention_bias:
                position_bias = torch.zeros((1, 1, self.n_heads, self.block_len, 3 * self.block_len), dtype=scores.dtype)
            else:
                position_bias = self.compute_bias(self.block_len)
            if mask is not None:
                mask = torch.where(mask > 0, 0.0, -1e10)
                position_bias = position_bias + mask.transpose(1, 2)
        return self.attend(scores, position_bias, value_states, batch_size, seq_length), position_bias


class LongT5TransientGlobalAttention(LongT5LocalAttention):
    def __init__(self, c, has_relative_attention_bias=False):
        super().__init__(c, has_relative_attention_bias)
        self.global_block_size = c['global_block_size']
        if self.has_relative_attention_bias:
            self.global_relative_attention_bias = nn.Embedding(self.relative_attention_num_buckets, self.n_heads)
        self.global_input_layer_norm = hf.T5LayerNorm(c['d_model'], c['layer_norm_epsilon'])

    def compute_side_bias(self, mask, global_segment_ids):
        side_attention_mask = torch.eq(mask[..., None], global_segment_ids[:, None, :])[:, None, ...]
        attention_side_bias = torch.where(side_attention_mask > 0, 0.0, -1e10)
        side_relative_position = _make_side_relative_position_ids(mask, self.global_block_size)
        side_bias = self.global_relative_attention_bias(self.bucket(side_relative_position))
        side_bias = side_bias.permute([0, 3, 1, 2])
        return attention_side_bias + side_bias

    def forward(self, hidden_states, mask=None, position_bias=None):
        batch_size, seq_length = hidden_states.shape[:2]
        block_ids, global_segment_ids = _make_global_fixed_block_ids(
            mask if mask is not None else torch.ones(hidden_states.shape[:-1]), self.global_block_size)
        _global_seq_len = global_segment_ids.shape[-1]
        global_inputs = _create_global_aggregates(hidden_states, block_ids, _global_seq_len)
        global_inputs = self.global_input_layer_norm(global_inputs)
        shape, query_states, key_states, value_states = self.project(hidden_states)
        side_key_states = shape(self.k(global_inputs))
        side_value_states = shape(self.v(global_inputs))
        reps = [1] * (side_key_states.ndim + 1)
        reps[1] = key_states.shape[1]
        side_key_states = side_key_states.unsqueeze(1).repeat(reps)
        side_value_states = side_value_states.unsqueeze(1).repeat(reps)
        key_states = torch.cat([key_states, side_key_states], dim=2)
        value_states = torch.cat([value_states, side_value_states], dim=2)
        scores = torch.einsum('...qhd,...khd->...hqk', query_states, key_states)
        if mask is not None:
            local_attention_mask = _get_local_attention_mask(mask, self.block_len)
            local_attention_mask = torch.where(local_attention_mask > 0, 0.0, -1e10)
        else:
            local_attention_mask = None
        if position_bias is None:
            if not self.has_relative_attention_bias:
                position_bias = torch.zeros((1, 1, self.n_heads, self.block_len, 3 * self.block_len), dtype=scores.dtype)
            else:
                position_bias = self.compute_bias(self.block_len)
            if local_attention_mask is not None:
                position_bias = position_bias + local_attention_mask.transpose(1, 2)
            position_bias = position_bias.type(scores.dtype)
            if mask is None:
                mask = torch.ones(batch_size, seq_length)
            side_position_bias = self.compute_side_bias(mask, global_segment_ids)
            side_position_bias = _split_into_blocks(side_position_bias, self.block_len, dim=-2).transpose(1, 2)
            side_position_bias = side_position_bias.type(scores.dtype)
            position_bias = torch.cat([position_bias, side_position_bias], dim=-1)
        return self.attend(scores, position_bias, value_states, batch_size, seq_length), position_bias


class LongT5LayerLocalSelfAttention(nn.Module):
    Attention = LongT5LocalAttention
    attribute = 'LocalSelfAttention'

    def __init__(self, c, has_relative_attention_bias=False):
        super().__init__()
        setattr(self, self.attribute, self.Attention(c, has_relative_attention_bias))
        self.layer_norm = hf.T5LayerNorm(c['d_model'], c['layer_norm_epsilon'])
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states, attention_mask=None, position_bias=None):
        attention_output = getattr(self, self.attribute)(self.layer_norm(hidden_states), attention_mask, position_bias)
        return hidden_states + self.dropout(attention_output[0]), attention_output[1]


class LongT5LayerTransientGlobalSelfAttention(LongT5LayerLocalSelfAttention):
    Attention = LongT5TransientGlobalAttention
    attribute = 'TransientGlobalSelfAttention'


class LongT5Block(nn.Module):
    def __init__(self, c, has_relative_attention_bias=False):
        super().__init__()
        attention_layer = {'local': LongT5LayerLocalSelfAttention, 'transient-global': LongT5LayerTransientGlobalSelfAttention}[c['encoder_attention_type']]
        self.layer = nn.ModuleList([attention_layer(c, has_relative_attention_bias), hf.T5LayerFF(c)])

    def forward(self, hidden_states, attention_mask, position_bias):
        hidden_states, position_bias = self.layer[0](hidden_states, attention_mask, position_bias)
        return self.layer[-1](hidden_states), position_bias


class LongT5Stack(nn.Module):
    def __init__(self, c, embed_tokens):
        super().__init__()
        self.config = c
        self.embed_tokens = nn.Embedding(c['vocab_size'], c['d_model'])
        self.embed_tokens.weight = embed_tokens.weight
        self.block_len = c['local_radius'] + 1
        self.block = nn.ModuleList([LongT5Block(c, has_relative_attention_bias=bool(i == 0)) for i in range(c['num_layers'])])
        self.final_layer_norm = hf.T5LayerNorm(c['d_model'], c['layer_norm_epsilon'])
        self.dropout = nn.Dropout(0.1)

    def forward(self, input_ids, attention_mask=None):
        batch_size, seq_length = input_ids.shape
        inputs_embeds = self.embed_tokens(input_ids)
        if attention_mask is None:
            attention_mask = torch.ones(batch_size, seq_length)
        if self.config['encoder_attention_type'] == 'local':
            causal_mask = _get_local_attention_mask(attention_mask, self.block_len)
        else:
            causal_mask = attention_mask
        position_bias = None
        hidden_states = self.dropout(inputs_embeds)
        for layer_module in self.block:
            hidden_states, position_bias = layer_module(hidden_states, causal_mask, position_bias)
        return self.dropout(self.final_layer_norm(hidden_states))


class LongT5EncoderModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.shared = nn.Embedding(c['vocab_size'], c['d_model'])
        self.encoder = LongT5Stack(c, self.shared)

    def forward(self, input_ids, attention_mask):
        return self.encoder(input_ids, attention_mask)


def longt5_config(**kw):
    """LongT5Config's fields the encoder reads (relu feed-forward: dense_act_fn relu, not gated)."""
    return {'vocab_size': 50, 'd_model': 24, 'd_kv': 8, 'd_ff': 48, 'num_layers': 2, 'num_heads': 2, 'local_radius': 3,
            'global_block_size': 5, 'relative_attention_num_buckets': 16, 'relative_attention_max_distance': 20,
            'layer_norm_epsilon': 1e-6, 'feed_forward_proj': 'relu', 'encoder_attention_type': 'local', **kw}


# (batch, seq): the traced size first; then 1, 2, block_len - 1, block_len, block_len + 1, odd and
# even lengths across every residue of block_len and global_block_size (below global_block_size
# there are no global tokens), multiples of both, far above the traced length (5x and more), and
# batch 3; token_cases pads each row by a different amount.
LOCAL_SIZES = [(2, 8), (1, 1), (3, 2), (1, 4), (2, 5), (1, 6), (3, 7), (1, 9), (2, 10), (1, 13), (2, 15), (1, 40)]
TGLOBAL_SIZES = [(2, 11), (1, 1), (3, 2), (1, 3), (2, 4), (1, 5), (3, 6), (1, 7), (2, 9), (1, 10), (2, 12), (1, 20),
                 (3, 21), (1, 55)]


def make_longt5_local():
    c = longt5_config(local_radius=4)
    return hf.fixture('longt5_local', 'LongT5EncoderModel, encoder_attention_type local, local_radius 4 (block_len 5): '
                      '_split_into_blocks (pad to a multiple of block_len), _concatenate_3_blocks, the local mask '
                      '(logical_and of blocked masks and |relative position| < block_len), the 3-block relative bias '
                      '(T5 buckets, 16, max_distance 20) plus where(mask > 0, 0, -1e10), einsum scores and output, '
                      'sliced back to the length; T5LayerNorm, ReLU feed-forward; shared embedding',
                      c, LongT5EncoderModel(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                      hf.token_cases(c['vocab_size'], mask_step=3, sizes=LOCAL_SIZES), ['last_hidden_state'])


def make_longt5_tglobal():
    c = longt5_config(encoder_attention_type='transient-global')
    return hf.fixture('longt5_tglobal', 'LongT5EncoderModel, encoder_attention_type transient-global, local_radius 3 '
                      '(block_len 4), global_block_size 5: local attention over 3 blocks plus seq // 5 global tokens '
                      '(_make_global_fixed_block_ids: cumsum of 1/5, floor, orphan tokens to the preceding block, padding '
                      '-1; one_hot and einsum aggregates, their layer norm; side keys tiled across the blocks; the side '
                      'bias from eq(mask, segment ids) and the side relative positions bucketed by '
                      'global_relative_attention_bias, split into blocks and cat after the local bias)',
                      c, LongT5EncoderModel(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                      hf.token_cases(c['vocab_size'], mask_step=3, sizes=TGLOBAL_SIZES), ['last_hidden_state'])


if __name__ == '__main__':
    main(sys.argv[1:], {'longt5_local': (make_longt5_local, hf.OUT_DIR), 'longt5_tglobal': (make_longt5_tglobal, hf.OUT_DIR)})
