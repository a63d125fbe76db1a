#!/usr/bin/env python3
"""PyTorch reference fixtures for tests/js/patchtst-vit-mae-port.test.mjs: Hugging Face's PatchTST
(models/patchtst/modeling_patchtst.py: PatchTSTModel without masking) and ViTMAE
(models/vit_mae/modeling_vit_mae.py: ViTMAEForPreTraining, the encoder's random masking by a given
noise and the decoder) at tiny configurations, their weights as safetensors and their outputs, in
the format and folder of tools/transformers_ports.py (whose fixture() writes them).

`transformers` is not a Debian package, so the modules below are this project's own PyTorch modules
written from reading upstream's: the same module tree and parameter names, the same operations in
the same order. ViTMAE's layers are ViT's (upstream copies them), so they are
tools/transformers_ports.py's.

    patchtst       PatchTSTModel: the std scaler (PatchTSTStdScaler over the length, minimum_scale 1e-5),
                   PatchTSTPatchify (num_patches = (max(L, p) - p) // s + 1, the first
                   L - (p + s (num_patches - 1)) steps dropped, Tensor.unfold(-2, p, s), patch 8,
                   stride 5), a shared input embedding, the sincos table, pre-norm layers with
                   BatchNorm1d over the patches (running statistics set), gelu FFN
    patchtst_mean  the mean scaler (PatchTSTMeanScaler with past_observed_mask: in batches of 2 and 3 the
                   last row has a channel never observed, which takes the batch's default scale), a CLS token, post-norm
                   layers with LayerNorm, channel attention, one embedding per channel, a random table

    vit_mae        ViTMAEForPreTraining (eval) with interpolate_pos_encoding=True and noise given,
                   mask_ratio 0.6: the patch embeddings plus the sincos table bicubic to the patch
                   grid, random_masking (len_keep = int(L * (1 - 0.6)), argsort of the noise, gather
                   of the kept rows, the mask unshuffled by ids_restore), the CLS token, ViT's
                   layers, the decoder (mask tokens concatenated, unshuffled by a gather at
                   ids_restore, its table bicubic along the sequence to L), the reconstruction
                   loss of the masked patches (patchify by einsum)

PatchTST upstream computes the number of patches from config.context_length and refuses another
length; the port is checked at lengths L as upstream computes them with context_length = L: the
reference at L is upstream's PatchTSTModel built for L with the weights of the fixture's (its
table's first num_patches(L) rows), which is what a user computing the patches from the input's
length gets (tools' PatchTSTAtLength).

    python3 tools/patchtst_vit_mae_ports.py                # all three
    python3 tools/patchtst_vit_mae_ports.py vit_mae        # only this one

(python3 being one that imports torch: Debian's python3-torch on /usr/bin/python3.) Deterministic:
one thread, torch.manual_seed(0) per model, fixed inputs.
"""
import math
import os
import sys

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import transformers_ports as hf  # noqa: E402  (fixture(), image_input(), ViT's modules, the output folder)
from pytorch_reference import main  # noqa: E402


# ---- PatchTST (modeling_patchtst.py) --------------------------------------------------------------

class PatchTSTAttention(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, hidden_states):
        bsz, tgt_len = hidden_states.shape[:-1]
        shape = (bsz, tgt_len, -1, self.head_dim)
        query_states = self.q_proj(hidden_states).view(*shape).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(*shape).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(*shape).transpose(1, 2)
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) * self.scaling
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn_output = torch.matmul(attn_weights, value_states).transpose(1, 2).contiguous()
        return self.out_proj(attn_output.reshape(bsz, tgt_len, -1).contiguous())


class PatchTSTBatchNorm(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.batchnorm = nn.BatchNorm1d(c['d_model'], eps=c['norm_eps'])

    def forward(self, inputs):
        return self.batchnorm(inputs.transpose(1, 2)).transpose(1, 2)


def patchtst_norm(c):
    return PatchTSTBatchNorm(c) if c['norm_type'] == 'batchnorm' else nn.LayerNorm(c['d_model'], eps=c['norm_eps'])


class PatchTSTEncoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.channel_attention = c['channel_attention']
        self.self_attn = PatchTSTAttention(c['d_model'], c['num_attention_heads'])
        self.dropout_path1 = nn.Identity()
        self.norm_sublayer1 = patchtst_norm(c)
        if self.channel_attention:
            self.dropout_path2 = nn.Identity()
            self.norm_sublayer2 = patchtst_norm(c)
        self.ff = nn.Sequential(nn.Linear(c['d_model'], c['ffn_dim']), nn.GELU(), nn.Identity(), nn.Linear(c['ffn_dim'], c['d_model']))
        self.dropout_path3 = nn.Identity()
        self.norm_sublayer3 = patchtst_norm(c)
        self.pre_norm = c['pre_norm']

    def residual(self, hidden_state, sublayer, norm, dropout):
        """Upstream's two branches of each sublayer: x + sublayer(norm(x)) (pre_norm) or norm(x + sublayer(x))."""
        if self.pre_norm:
            return hidden_state + dropout(sublayer(norm(hidden_state)))
        return norm(hidden_state + dropout(sublayer(hidden_state)))

    def forward(self, hidden_state):
        batch_size, num_input_channels, sequence_length, d_model = hidden_state.shape
        hidden_state = hidden_state.view(batch_size * num_input_channels, sequence_length, d_model)
        hidden_state = self.residual(hidden_state, self.self_attn, self.norm_sublayer1, self.dropout_path1)
        hidden_state = hidden_state.reshape(batch_size, num_input_channels, sequence_length, d_model)
        if self.channel_attention:
            hidden_state = hidden_state.transpose(2, 1).contiguous()
            hidden_state = hidden_state.view(batch_size * sequence_length, num_input_channels, d_model)
            hidden_state = self.residual(hidden_state, self.self_attn, self.norm_sublayer2, self.dropout_path2)
            hidden_state = hidden_state.reshape(batch_size, sequence_length, num_input_channels, d_model)
            hidden_state = hidden_state.transpose(1, 2).contiguous()
        hidden_state = hidden_state.view(batch_size * num_input_channels, sequence_length, d_model)
        hidden_state = self.residual(hidden_state, self.ff, self.norm_sublayer3, self.dropout_path3)
        return hidden_state.reshape(batch_size, num_input_channels, sequence_length, d_model)


class PatchTSTEmbedding(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.num_input_channels = c['num_input_channels']
        self.share_embedding = c['share_embedding']
        if self.share_embedding:
            self.input_embedding = nn.Linear(c['patch_length'], c['d_model'])
        else:
            self.input_embedding = nn.ModuleList([nn.Linear(c['patch_length'], c['d_model']) for _ in range(c['num_input_channels'])])

    def forward(self, patch_input):
        num_input_channels = patch_input.shape[1]
        if self.share_embedding:
            return self.input_embedding(patch_input)
        return torch.stack([self.input_embedding[i](patch_input[:, i, :, :]) for i in range(num_input_channels)], dim=1)


class PatchTSTPositionalEncoding(nn.Module):
    def __init__(self, c, num_patches):
        super().__init__()
        self.use_cls_token = c['use_cls_token']
        self.num_input_channels = c['num_input_channels']
        if self.use_cls_token:
            self.cls_token = nn.Parameter(torch.zeros(1, 1, 1, c['d_model']))
            num_patches += 1
        self.position_enc = self._init_pe(c, num_patches)

    @staticmethod
    def _init_pe(c, num_patches):
        if c['positional_encoding_type'] == 'random':
            return nn.Parameter(torch.randn(num_patches, c['d_model']), requires_grad=True)
        position_enc = torch.zeros(num_patches, c['d_model'])
        position = torch.arange(0, num_patches).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, c['d_model'], 2) * -(math.log(10000.0) / c['d_model']))
        position_enc[:, 0::2] = torch.sin(position * div_term)
        position_enc[:, 1::2] = torch.cos(position * div_term)
        position_enc = position_enc - position_enc.mean()
        position_enc = position_enc / (position_enc.std() * 10)
        return nn.Parameter(position_enc, requires_grad=False)

    def forward(self, patch_input):
        if self.use_cls_token:
            patch_input = patch_input + self.position_enc[1:, :]
            cls_token = self.cls_token + self.position_enc[:1, :]
            cls_tokens = cls_token.expand(patch_input.shape[0], self.num_input_channels, -1, -1)
            return torch.cat((cls_tokens, patch_input), dim=2)
        return patch_input + self.position_enc


class PatchTSTEncoder(nn.Module):
    def __init__(self, c, num_patches):
        super().__init__()
        self.embedder = PatchTSTEmbedding(c)
        self.positional_encoder = PatchTSTPositionalEncoding(c, num_patches)
        self.layers = nn.ModuleList([PatchTSTEncoderLayer(c) for _ in range(c['num_hidden_layers'])])

    def forward(self, patch_input):
        hidden_state = self.positional_encoder(self.embedder(patch_input))
        for encoder_layer in self.layers:
            hidden_state = encoder_layer(hidden_state)
        return hidden_state


class PatchTSTStdScaler(nn.Module):
    def forward(self, data, observed_indicator):
        denominator = observed_indicator.sum(1, keepdim=True)
        denominator = denominator.clamp_min(1.0)
        loc = (data * observed_indicator).sum(1, keepdim=True) / denominator
        variance = (((data - loc) * observed_indicator) ** 2).sum(1, keepdim=True) / denominator
        scale = torch.sqrt(variance + 1e-5)
        return (data - loc) / scale, loc, scale


class PatchTSTMeanScaler(nn.Module):
    def forward(self, data, observed_indicator):
        ts_sum = (data * observed_indicator).abs().sum(1, keepdim=True)
        num_observed = observed_indicator.sum(1, keepdim=True)
        scale = ts_sum / torch.clamp(num_observed, min=1)
        batch_sum = ts_sum.sum(dim=0)
        batch_observations = torch.clamp(num_observed.sum(0), min=1)
        default_scale = torch.squeeze(batch_sum / batch_observations)
        scale = torch.where(num_observed > 0, scale, default_scale)
        scale = torch.clamp(scale, min=1e-10)
        return data / scale, torch.zeros_like(scale), scale


class PatchTSTScaler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.scaler = PatchTSTMeanScaler() if c['scaling'] in ('mean', True) else PatchTSTStdScaler()

    def forward(self, data, observed_indicator):
        return self.scaler(data, observed_indicator)


class PatchTSTPatchify(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.sequence_length = c['context_length']
        self.patch_length = c['patch_length']
        self.patch_stride = c['patch_stride']
        if self.sequence_length <= self.patch_length:
            raise ValueError(f'Sequence length ({self.sequence_length}) has to be greater than the patch length ({self.patch_length})')
        self.num_patches = (max(self.sequence_length, self.patch_length) - self.patch_length) // self.patch_stride + 1
        new_sequence_length = self.patch_length + self.patch_stride * (self.num_patches - 1)
        self.sequence_start = self.sequence_length - new_sequence_length

    def forward(self, past_values):
        sequence_length = past_values.shape[-2]
        if sequence_length != self.sequence_length:
            raise ValueError(f"Input sequence length ({sequence_length}) doesn't match model configuration ({self.sequence_length}).")
        output = past_values[:, self.sequence_start:, :]
        output = output.unfold(dimension=-2, size=self.patch_length, step=self.patch_stride)
        return output.transpose(-2, -3).contiguous()


class PatchTSTModel(nn.Module):
    """do_mask_input False (masking the identity); returns (last_hidden_state, loc, scale, patch_input),
    upstream's tuple without the Nones."""

    def __init__(self, c):
        super().__init__()
        self.scaler = PatchTSTScaler(c)
        self.patchifier = PatchTSTPatchify(c)
        self.masking = nn.Identity()
        self.encoder = PatchTSTEncoder(c, num_patches=self.patchifier.num_patches)

    def forward(self, past_values, past_observed_mask=None):
        if past_observed_mask is None:
            past_observed_mask = torch.ones_like(past_values)
        scaled_past_values, loc, scale = self.scaler(past_values, past_observed_mask)
        patched_values = self.patchifier(scaled_past_values)
        masked_values = self.masking(patched_values)
        return self.encoder(masked_values), loc, scale, patched_values


def patchtst_num_patches(c, length):
    return (max(length, c['patch_length']) - c['patch_length']) // c['patch_stride'] + 1


class PatchTSTAtLength(PatchTSTModel):
    """The reference at any length L: upstream's PatchTSTModel built for context_length L with these
    weights (the position table's first num_patches(L) rows, and the CLS row); at the config's own
    length, this model itself."""

    def __init__(self, c):
        super().__init__(c)
        self.config = c

    def forward(self, past_values, past_observed_mask=None):
        length = past_values.shape[1]
        if length == self.config['context_length']:
            return super().forward(past_values, past_observed_mask)
        at = PatchTSTModel({**self.config, 'context_length': length})
        rows = patchtst_num_patches(self.config, length) + (1 if self.config['use_cls_token'] else 0)
        state = self.state_dict()
        state['encoder.positional_encoder.position_enc'] = state['encoder.positional_encoder.position_enc'][:rows]
        at.load_state_dict(state)
        return at.eval()(past_values, past_observed_mask)


def patchtst_config(**kw):
    """PatchTSTConfig's defaults for the fields the model reads, then kw."""
    return {'num_input_channels': 1, 'context_length': 32, 'patch_length': 1, 'patch_stride': 1, 'num_hidden_layers': 3,
            'd_model': 128, 'num_attention_heads': 4, 'share_embedding': True, 'channel_attention': False, 'ffn_dim': 512,
            'norm_type': 'batchnorm', 'norm_eps': 1e-5, 'activation_function': 'gelu', 'pre_norm': True,
            'positional_encoding_type': 'sincos', 'use_cls_token': False, 'scaling': 'std', 'do_mask_input': False, **kw}


# (batch, length): traced at 2 x 40 (7 patches from step 2); 9 to 13, one patch or two at every residue
# of the stride 5 (9: start 1, 13: start 0); 24, 58 and 97 (odd, above the example); 512, the config's
# context_length (101 patches, the whole table), far above the traced one.
PATCHTST_SIZES = [(2, 40), (1, 9), (3, 10), (1, 11), (2, 12), (1, 13), (2, 24), (3, 58), (1, 97), (1, 512)]


def patchtst_cases(c, observed=False):
    cases = []
    for b, t in PATCHTST_SIZES:
        x = torch.randn(b, t, c['num_input_channels']) * torch.tensor([1.0, 3.0, 0.5]) + torch.tensor([0.5, -2.0, 4.0])
        inputs = [('past_values', x)]
        if observed:
            mask = torch.rand(b, t, c['num_input_channels']) > 0.2
            if b > 1:  # a channel never observed in the last row: the batch's default scale (0 in a batch of one)
                mask[-1, :, 1] = False
            inputs.append(('past_observed_mask', mask))
        cases.append(({'batch': b, 'length': t}, inputs))
    return cases


def patchtst_fixture(name, description, c, observed):
    net = PatchTSTAtLength(c)
    with torch.no_grad():  # BatchNorm1d's statistics, which randomize() leaves as made
        for m in net.modules():
            if isinstance(m, nn.BatchNorm1d):
                m.running_mean.normal_(0, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    axes = {'past_values': ['batch', 'length', None], **({'past_observed_mask': ['batch', 'length', None]} if observed else {})}
    keep = {'encoder.positional_encoder.position_enc'} if c['positional_encoding_type'] == 'sincos' else set()
    return hf.fixture(name, description, c, net, axes, patchtst_cases(c, observed), ['last_hidden_state', 'loc', 'scale', 'patch_input'],
                      keep=keep)


def make_patchtst():
    c = patchtst_config(num_input_channels=3, context_length=512, patch_length=8, patch_stride=5, num_hidden_layers=2, d_model=16,
                        num_attention_heads=2, ffn_dim=32)
    return patchtst_fixture('patchtst', 'PatchTSTModel (eval, no masking): std scaler, patchify (patch 8, stride 5; the first '
                            'L - 8 - 5 (n - 1) steps dropped, Tensor.unfold), shared input embedding, the sincos table (101 rows, '
                            'context_length 512), 2 pre-norm layers with BatchNorm1d over the patches, gelu FFN; outputs '
                            'last_hidden_state, loc, scale, patch_input', c, observed=False)


def make_patchtst_mean():
    c = patchtst_config(num_input_channels=3, context_length=512, patch_length=8, patch_stride=5, num_hidden_layers=2, d_model=16,
                        num_attention_heads=2, ffn_dim=32, norm_type='layernorm', pre_norm=False, channel_attention=True,
                        share_embedding=False, use_cls_token=True, positional_encoding_type='random', scaling='mean')
    return patchtst_fixture('patchtst_mean', 'PatchTSTModel (eval, no masking): mean scaler with past_observed_mask (a channel never '
                            'observed in the last row: the batch\'s default scale), patch 8 stride 5, one input embedding per '
                            'channel, a CLS token, a random table, 2 post-norm layers with LayerNorm and channel attention',
                            c, observed=True)


# ---- ViTMAE (modeling_vit_mae.py) -----------------------------------------------------------------

def get_1d_sincos_pos_embed_from_grid(embed_dim, pos):
    omega = np.arange(embed_dim // 2, dtype=float)
    omega /= embed_dim / 2.0
    omega = 1.0 / 10000 ** omega
    out = np.einsum('m,d->md', pos.reshape(-1), omega)
    return np.concatenate([np.sin(out), np.cos(out)], axis=1)


def get_2d_sincos_pos_embed(embed_dim, grid_size, add_cls_token=False):
    grid = np.stack(np.meshgrid(np.arange(grid_size, dtype=np.float32), np.arange(grid_size, dtype=np.float32)), axis=0)
    grid = grid.reshape([2, 1, grid_size, grid_size])
    emb = np.concatenate([get_1d_sincos_pos_embed_from_grid(embed_dim // 2, grid[0]),
                          get_1d_sincos_pos_embed_from_grid(embed_dim // 2, grid[1])], axis=1)
    if add_cls_token:
        emb = np.concatenate([np.zeros([1, embed_dim]), emb], axis=0)
    return emb


class ViTMAEEmbeddings(hf.ViTEmbeddings):
    """ViT's embeddings (cls_token, patch_embeddings, position_embeddings and interpolate_pos_encoding
    are upstream's copies of ViT's) with the fixed sincos table and random_masking."""

    def __init__(self, c):
        super().__init__(c)
        self.mask_ratio = c['mask_ratio']
        side = c['image_size'] // c['patch_size']
        with torch.no_grad():
            self.position_embeddings.copy_(torch.from_numpy(get_2d_sincos_pos_embed(c['hidden_size'], side, True)).float().unsqueeze(0))

    def random_masking(self, sequence, noise):
        batch_size, seq_length, dim = sequence.shape
        len_keep = int(seq_length * (1 - self.mask_ratio))
        ids_shuffle = torch.argsort(noise, dim=1)
        ids_restore = torch.argsort(ids_shuffle, dim=1)
        ids_keep = ids_shuffle[:, :len_keep]
        sequence_unmasked = torch.gather(sequence, dim=1, index=ids_keep.unsqueeze(-1).repeat(1, 1, dim))
        mask = torch.ones([batch_size, seq_length])
        mask[:, :len_keep] = 0
        mask = torch.gather(mask, dim=1, index=ids_restore)
        return sequence_unmasked, mask, ids_restore

    def forward(self, pixel_values, noise):
        """interpolate_pos_encoding=True."""
        batch_size, num_channels, height, width = pixel_values.shape
        embeddings = self.patch_embeddings(pixel_values)
        position_embeddings = self.interpolate_pos_encoding(embeddings, height, width)
        embeddings = embeddings + position_embeddings[:, 1:, :]
        embeddings, mask, ids_restore = self.random_masking(embeddings, noise)
        cls_token = self.cls_token + position_embeddings[:, :1, :]
        cls_tokens = cls_token.expand(embeddings.shape[0], -1, -1)
        return torch.cat((cls_tokens, embeddings), dim=1), mask, ids_restore


class ViTMAEModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = ViTMAEEmbeddings(c)
        self.encoder = hf.ViTEncoder(c)
        self.layernorm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])

    def forward(self, pixel_values, noise):
        embedding_output, mask, ids_restore = self.embeddings(pixel_values, noise)
        return self.layernorm(self.encoder(embedding_output)), mask, ids_restore


class ViTMAEDecoder(nn.Module):
    def __init__(self, c, num_patches):
        super().__init__()
        self.decoder_embed = nn.Linear(c['hidden_size'], c['decoder_hidden_size'], bias=True)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, c['decoder_hidden_size']))
        table = get_2d_sincos_pos_embed(c['decoder_hidden_size'], int(num_patches ** 0.5), add_cls_token=True)
        self.decoder_pos_embed = nn.Parameter(torch.from_numpy(table).float().unsqueeze(0), requires_grad=False)
        decoder_config = {**c, 'hidden_size': c['decoder_hidden_size'], 'num_hidden_layers': c['decoder_num_hidden_layers'],
                          'num_attention_heads': c['decoder_num_attention_heads'], 'intermediate_size': c['decoder_intermediate_size']}
        self.decoder_layers = nn.ModuleList([hf.ViTLayer(decoder_config) for _ in range(c['decoder_num_hidden_layers'])])
        self.decoder_norm = nn.LayerNorm(c['decoder_hidden_size'], eps=c['layer_norm_eps'])
        self.decoder_pred = nn.Linear(c['decoder_hidden_size'], c['patch_size'] ** 2 * c['num_channels'], bias=True)

    def interpolate_pos_encoding(self, embeddings):
        embeddings_positions = embeddings.shape[1] - 1
        class_pos_embed = self.decoder_pos_embed[:, :1]
        patch_pos_embed = self.decoder_pos_embed[:, 1:]
        dim = self.decoder_pos_embed.shape[-1]
        patch_pos_embed = patch_pos_embed.reshape(1, 1, -1, dim).permute(0, 3, 1, 2)
        patch_pos_embed = F.interpolate(patch_pos_embed, size=(patch_pos_embed.shape[-2], embeddings_positions), mode='bicubic',
                                        align_corners=False)
        patch_pos_embed = patch_pos_embed.permute(0, 2, 3, 1).view(1, -1, dim)
        return torch.cat((class_pos_embed, patch_pos_embed), dim=1)

    def forward(self, hidden_states, ids_restore):
        """interpolate_pos_encoding=True."""
        x = self.decoder_embed(hidden_states)
        mask_tokens = self.mask_token.repeat(x.shape[0], ids_restore.shape[1] + 1 - x.shape[1], 1)
        x_ = torch.cat([x[:, 1:, :], mask_tokens], dim=1)
        x_ = torch.gather(x_, dim=1, index=ids_restore.unsqueeze(-1).repeat(1, 1, x.shape[2]))
        x = torch.cat([x[:, :1, :], x_], dim=1)
        hidden_states = x + self.interpolate_pos_encoding(x)
        for layer_module in self.decoder_layers:
            hidden_states = layer_module(hidden_states)
        logits = self.decoder_pred(self.decoder_norm(hidden_states))
        return logits[:, 1:, :]


class ViTMAEForPreTraining(nn.Module):
    """forward(pixel_values, noise) with interpolate_pos_encoding=True -> (loss, logits, mask, ids_restore)."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        self.vit = ViTMAEModel(c)
        self.decoder = ViTMAEDecoder(c, num_patches=(c['image_size'] // c['patch_size']) ** 2)

    def patchify(self, pixel_values):
        p, num_channels = self.config['patch_size'], self.config['num_channels']
        batch_size = pixel_values.shape[0]
        num_patches_h = pixel_values.shape[2] // p
        num_patches_w = pixel_values.shape[3] // p
        x = pixel_values.reshape(batch_size, num_channels, num_patches_h, p, num_patches_w, p)
        x = torch.einsum('nchpwq->nhwpqc', x)
        return x.reshape(batch_size, num_patches_h * num_patches_w, p ** 2 * num_channels)

    def forward_loss(self, pixel_values, pred, mask):
        target = self.patchify(pixel_values)
        loss = ((pred - target) ** 2).mean(dim=-1)
        return (loss * mask).sum() / mask.sum()

    def forward(self, pixel_values, noise):
        latent, mask, ids_restore = self.vit(pixel_values, noise)
        logits = self.decoder(latent, ids_restore)
        return self.forward_loss(pixel_values, logits, mask), logits, mask, ids_restore


# (batch, height, width) -> the 4-pixel patch grid and L = its patches, of which int(0.4 L) are kept:
# traced at 24 x 20 (6 x 5, L 30), also at batches 1 and 3 (for a trace with a symbolic batch only);
# the native 16 x 16 (L 16); one patch (nothing kept); L 12, 24, 28, 18 and 25 (every residue of 5: 2,
# 4, 3, 3, 0); far above the traced one (64 x 52: L 208).
VIT_MAE_SIZES = [(2, 24, 20), (1, 24, 20), (3, 24, 20), (1, 16, 16), (3, 4, 4), (2, 12, 16), (1, 16, 24), (2, 28, 16), (1, 8, 36),
                 (1, 20, 20), (1, 64, 52)]


def make_vit_mae():
    c = {'image_size': 16, 'patch_size': 4, 'num_channels': 3, 'hidden_size': 32, 'num_hidden_layers': 2, 'num_attention_heads': 2,
         'intermediate_size': 64, 'hidden_act': 'gelu', 'layer_norm_eps': 1e-12, 'qkv_bias': True, 'decoder_hidden_size': 16,
         'decoder_num_hidden_layers': 1, 'decoder_num_attention_heads': 2, 'decoder_intermediate_size': 32, 'mask_ratio': 0.6,
         'norm_pix_loss': False}
    net = ViTMAEForPreTraining(c)
    cases = []
    for seed, (b, h, w) in enumerate(VIT_MAE_SIZES, start=1):
        noise = torch.rand(b, (h // 4) * (w // 4))
        assert all(len(set(row.tolist())) == row.numel() for row in noise), 'noise without ties (argsort is then unique)'
        cases.append(({'batch': b, 'height': h, 'width': w}, [hf.image_input('pixel_values', [b, 3, h, w], seed), ('noise', noise)]))
    return hf.fixture('vit_mae', 'ViTMAEForPreTraining (eval, interpolate_pos_encoding=True, noise given, mask_ratio 0.6): patch 4, '
                      'the 4 x 4 sincos table bicubic to the patch grid, random_masking (len_keep = int(L * 0.4), argsort, gather, '
                      'the mask unshuffled), ViT\'s layers (2, hidden 32), the decoder (hidden 16, 1 layer: mask tokens, gather at '
                      'ids_restore, its table bicubic along the sequence), the loss of the masked patches; outputs loss, logits, '
                      'mask, ids_restore',
                      c, net, {'pixel_values': ['batch', None, 'height', 'width'], 'noise': ['batch', 'patches']}, cases,
                      ['loss', 'logits', 'mask', 'ids_restore'],
                      keep={'vit.embeddings.position_embeddings', 'decoder.decoder_pos_embed'})


MODELS = {'patchtst': make_patchtst, 'patchtst_mean': make_patchtst_mean, 'vit_mae': make_vit_mae}

if __name__ == '__main__':
    main(sys.argv[1:], {name: (make, hf.OUT_DIR) for name, make in MODELS.items()})
