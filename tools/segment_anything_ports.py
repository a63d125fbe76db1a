#!/usr/bin/env python3
"""PyTorch reference fixtures for tests/js/segment-anything-port.test.mjs: the image encoder of
Segment Anything (segment_anything/modeling/image_encoder.py's ImageEncoderViT, with
common.py's MLPBlock and LayerNorm2d) at small configurations, its weights as safetensors and its
outputs, in the format and folder of tools/transformers_ports.py (whose fixture() writes them).

segment-anything is not a Debian package, so the modules below are this project's own PyTorch
modules written from reading upstream's: the same module tree and parameter names (`patch_embed.proj`,
`pos_embed`, `blocks.N.attn.qkv`, `blocks.N.attn.rel_pos_h`, `neck.0` ... `neck.3`), the same
operations in the same order, and every size branch upstream takes:

    window_partition    pads the tokens on the bottom and the right to whole windows,
                        (window - H % window) % window (nothing when both pads are 0)
    window_unpartition  crops the padding back off (only where there was some)
    get_rel_pos         linear-interpolates a relative-position table whose length is not
                        2 * max(q, k) - 1 (a global block at another grid than img_size / patch);
                        indexes it at the (scaled) coordinate differences
    add_decomposed_rel_pos  the height and width terms added to the scores, as upstream's matmuls

    sam_vit        img 64, patch 8, hidden 64, 4 blocks, 4 heads, window 3 (the 8 x 8 grid padded to 9),
                   global attention at blocks 1 and 3, the absolute position table (so the grid must be
                   8 x 8: images of 64 to 71 pixels a side, as upstream adds it without resizing)
    sam_vit_rel    img 96, window 5, no absolute table (use_abs_pos=False): any image of at least one
                   patch; cases across window padding 0, grids below the window, the global tables at
                   their own length (grid 12: no interpolation) and far above the traced size

    python3 tools/segment_anything_ports.py               # both
    python3 tools/segment_anything_ports.py sam_vit_rel   # only this one

(python3 being one that imports torch: Debian's python3-torch on /usr/bin/python3.) Deterministic:
one thread, torch.manual_seed(0) per model, fixed inputs.
"""
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import transformers_ports as hf  # noqa: E402  (fixture(), image_input(), the output folder)
from pytorch_reference import main  # noqa: E402

MODELS = {}


def model(fn):
    """Registers make_<name> as the fixture <name>."""
    MODELS[fn.__name__[len('make_'):]] = fn
    return fn


class MLPBlock(nn.Module):
    def __init__(self, embedding_dim, mlp_dim):
        super().__init__()
        self.lin1 = nn.Linear(embedding_dim, mlp_dim)
        self.lin2 = nn.Linear(mlp_dim, embedding_dim)
        self.act = nn.GELU()

    def forward(self, x):
        return self.lin2(self.act(self.lin1(x)))


class LayerNorm2d(nn.Module):
    """LayerNorm over the channels of [B, C, H, W] (ConvNeXt's, by mean and variance written out)."""

    def __init__(self, num_channels, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(num_channels))
        self.bias = nn.Parameter(torch.zeros(num_channels))
        self.eps = eps

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


def window_partition(x, window_size):
    """[B, H, W, C] -> ([B * windows, ws, ws, C], (Hp, Wp)): padded to whole windows first."""
    B, H, W, C = x.shape
    pad_h = (window_size - H % window_size) % window_size
    pad_w = (window_size - W % window_size) % window_size
    if pad_h > 0 or pad_w > 0:
        x = F.pad(x, (0, 0, 0, pad_w, 0, pad_h))
    Hp, Wp = H + pad_h, W + pad_w
    x = x.view(B, Hp // window_size, window_size, Wp // window_size, window_size, C)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, window_size, window_size, C), (Hp, Wp)


def window_unpartition(windows, window_size, pad_hw, hw):
    """window_partition's inverse, the padding cropped off: -> [B, H, W, C]."""
    Hp, Wp = pad_hw
    H, W = hw
    B = windows.shape[0] // (Hp * Wp // window_size // window_size)
    x = windows.view(B, Hp // window_size, Wp // window_size, window_size, window_size, -1)
    x = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, Hp, Wp, -1)
    if Hp > H or Wp > W:
        x = x[:, :H, :W, :].contiguous()
    return x


def get_rel_pos(q_size, k_size, rel_pos):
    """The table's rows at every (query, key) offset [q, k, C], the table resized when its length is not 2 max(q, k) - 1."""
    max_rel_dist = int(2 * max(q_size, k_size) - 1)
    if rel_pos.shape[0] != max_rel_dist:
        resized = F.interpolate(rel_pos.reshape(1, rel_pos.shape[0], -1).permute(0, 2, 1), size=max_rel_dist, mode='linear')
        resized = resized.reshape(-1, max_rel_dist).permute(1, 0)
    else:
        resized = rel_pos
    q_coords = torch.arange(q_size)[:, None] * max(k_size / q_size, 1.0)
    k_coords = torch.arange(k_size)[None, :] * max(q_size / k_size, 1.0)
    relative_coords = (q_coords - k_coords) + (k_size - 1) * max(q_size / k_size, 1.0)
    return resized[relative_coords.long()]


def add_decomposed_rel_pos(attn, q, rel_pos_h, rel_pos_w, q_size, k_size):
    q_h, q_w = q_size
    k_h, k_w = k_size
    Rh = get_rel_pos(q_h, k_h, rel_pos_h)
    Rw = get_rel_pos(q_w, k_w, rel_pos_w)
    B, _, dim = q.shape
    r_q = q.reshape(B, q_h, q_w, dim)
    rel_h = torch.matmul(r_q, Rh.permute(0, 2, 1))
    rel_w = torch.matmul(r_q.permute(0, 2, 1, 3), Rw.permute(0, 2, 1)).permute(0, 2, 1, 3)
    attn = attn.view(B, q_h, q_w, k_h, k_w) + rel_h[:, :, :, :, None] + rel_w[:, :, :, None, :]
    return attn.view(B, q_h * q_w, k_h * k_w)


class Attention(nn.Module):
    def __init__(self, dim, num_heads, qkv_bias, use_rel_pos, input_size):
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)
        self.use_rel_pos = use_rel_pos
        if use_rel_pos:
            self.rel_pos_h = nn.Parameter(torch.zeros(2 * input_size[0] - 1, head_dim))
            self.rel_pos_w = nn.Parameter(torch.zeros(2 * input_size[1] - 1, head_dim))

    def forward(self, x):
        B, H, W, _ = x.shape
        qkv = self.qkv(x).reshape(B, H * W, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.reshape(3, B * self.num_heads, H * W, -1).unbind(0)
        attn = (q * self.scale) @ k.transpose(-2, -1)
        if self.use_rel_pos:
            attn = add_decomposed_rel_pos(attn, q, self.rel_pos_h, self.rel_pos_w, (H, W), (H, W))
        attn = attn.softmax(dim=-1)
        x = (attn @ v).view(B, self.num_heads, H, W, -1).permute(0, 2, 3, 1, 4).reshape(B, H, W, -1)
        return self.proj(x)


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio, qkv_bias, eps, use_rel_pos, window_size, input_size):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=eps)
        self.attn = Attention(dim, num_heads, qkv_bias, use_rel_pos, input_size if window_size == 0 else (window_size, window_size))
        self.norm2 = nn.LayerNorm(dim, eps=eps)
        self.mlp = MLPBlock(dim, int(dim * mlp_ratio))
        self.window_size = window_size

    def forward(self, x):
        shortcut = x
        x = self.norm1(x)
        if self.window_size > 0:
            H, W = x.shape[1], x.shape[2]
            x, pad_hw = window_partition(x, self.window_size)
        x = self.attn(x)
        if self.window_size > 0:
            x = window_unpartition(x, self.window_size, pad_hw, (H, W))
        x = shortcut + x
        return x + self.mlp(self.norm2(x))


class PatchEmbed(nn.Module):
    def __init__(self, patch_size, in_chans, embed_dim):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x):
        return self.proj(x).permute(0, 2, 3, 1)


class ImageEncoderViT(nn.Module):
    """Upstream's constructor arguments as a config dict (SAM's builders pass LayerNorm eps 1e-6, use_rel_pos)."""

    def __init__(self, c):
        super().__init__()
        grid = c['img_size'] // c['patch_size']
        self.patch_embed = PatchEmbed(c['patch_size'], c['in_chans'], c['embed_dim'])
        self.pos_embed = nn.Parameter(torch.zeros(1, grid, grid, c['embed_dim'])) if c['use_abs_pos'] else None
        self.blocks = nn.ModuleList([
            Block(c['embed_dim'], c['num_heads'], c['mlp_ratio'], c['qkv_bias'], c['norm_eps'], c['use_rel_pos'],
                  0 if i in c['global_attn_indexes'] else c['window_size'], (grid, grid))
            for i in range(c['depth'])])
        self.neck = nn.Sequential(
            nn.Conv2d(c['embed_dim'], c['out_chans'], kernel_size=1, bias=False),
            LayerNorm2d(c['out_chans']),
            nn.Conv2d(c['out_chans'], c['out_chans'], kernel_size=3, padding=1, bias=False),
            LayerNorm2d(c['out_chans']))

    def forward(self, x):
        x = self.patch_embed(x)
        if self.pos_embed is not None:
            x = x + self.pos_embed
        for blk in self.blocks:
            x = blk(x)
        return self.neck(x.permute(0, 3, 1, 2))


def sam_config(**kw):
    return {'img_size': 64, 'patch_size': 8, 'in_chans': 3, 'embed_dim': 64, 'depth': 4, 'num_heads': 4, 'mlp_ratio': 2.0,
            'out_chans': 16, 'qkv_bias': True, 'norm_eps': 1e-6, 'use_abs_pos': True, 'use_rel_pos': True,
            'window_size': 3, 'global_attn_indexes': [1, 3], **kw}


def sam_fixture(name, description, c, sizes):
    """The fixture of ImageEncoderViT(c) at sizes [(batch, height, width)] (the first is traced),
    its position table N(0, 0.5) (randomize would make it N(0, 1 / grid^2 hidden): too small to matter)."""
    net = ImageEncoderViT(c)
    keep = set()
    if net.pos_embed is not None:
        with torch.no_grad():
            net.pos_embed.normal_(0, 0.5)
        keep.add('pos_embed')
    cases = [({'batch': b, 'height': h, 'width': w}, [hf.image_input('x', [b, 3, h, w], seed)])
             for seed, (b, h, w) in enumerate(sizes, start=1)]
    return hf.fixture(name, description, c, net, {'x': ['batch', None, 'height', 'width']}, cases, ['image_embeddings'], keep=keep)


@model
def make_sam_vit():
    return sam_fixture('sam_vit', 'segment_anything ImageEncoderViT (eval): 8 x 8 patches, the absolute position table '
                       'added as is (so the grid must be img_size / patch: 64 to 71 pixels a side), window 3 on blocks 0 and '
                       '2 (the 8 x 8 grid padded to 9 x 9 and cropped back), global attention on blocks 1 and 3, decomposed '
                       'relative positions, the neck (conv 1x1, LayerNorm2d, conv 3x3, LayerNorm2d)',
                       sam_config(), [(2, 67, 70), (1, 64, 64), (1, 71, 71), (3, 65, 64)])


# sam_vit_rel's sizes (batch, height, width) -> the 8-pixel grid: traced at 77 x 61 (9 x 7: pads 1 and 3,
# global tables 23 -> 17 and 13); 96 x 96 (12: the tables as they are); 80 x 40 (10 x 5: no padding);
# one patch; 2 x 3 (below the window: one padded window); 103 x 47 (12 x 5: odd, one side at the table's
# own length and unpadded); 127 x 159 (15 x 19); 320 x 96 (40 x 12: far above, tables 23 -> 79).
SAM_REL_SIZES = [(2, 77, 61), (1, 96, 96), (1, 80, 40), (1, 8, 8), (2, 16, 24), (1, 103, 47), (1, 127, 159), (1, 320, 96)]


@model
def make_sam_vit_rel():
    return sam_fixture('sam_vit_rel', 'segment_anything ImageEncoderViT (eval) with use_abs_pos=False: img_size 96 (the '
                       'global blocks\' tables 23 long, linear-interpolated at any other grid than 12), window 5 (grids '
                       'padded to multiples of 5, nothing at 5, 10, 15), global attention on blocks 1 and 3, the neck',
                       sam_config(img_size=96, window_size=5, use_abs_pos=False), SAM_REL_SIZES)


if __name__ == '__main__':
    main(sys.argv[1:], {name: (make, hf.OUT_DIR) for name, make in MODELS.items()})
