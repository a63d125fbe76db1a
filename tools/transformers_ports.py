#!/usr/bin/env python3
"""PyTorch reference fixtures for tests/js/transformers-ports*.test.mjs: Hugging Face
architectures at small configurations, their weights as safetensors and their outputs.

Hugging Face's `transformers` is not a Debian package, so the models below are this project's own
PyTorch modules written from reading transformers' modeling_gpt2.py, modeling_bert.py,
modeling_llama.py, modeling_t5.py, modeling_whisper.py, modeling_phi.py, modeling_gemma.py and
modeling_clip.py, modeling_qwen2.py, modeling_distilbert.py, modeling_albert.py, modeling_bloom.py,
modeling_wav2vec2.py, modeling_segformer.py, modeling_vit.py, modeling_opt.py, modeling_gpt_neo.py,
modeling_deberta_v2.py, modeling_dinov2.py, modeling_longformer.py, modeling_big_bird.py, modeling_swin.py,
modeling_mobilevit.py, modeling_detr.py, modeling_beit.py, modeling_convnextv2.py, modeling_falcon.py,
modeling_deit.py, modeling_cvt.py, modeling_pvt_v2.py, modeling_gptj.py, modeling_m2m_100.py,
modeling_speech_to_text.py and modeling_funnel.py (inference without caches): the same
module tree and parameter names (so the state-dict keys are the ones a real checkpoint has), the
same operations in the same order, the same non-persistent buffers (GPT-2's `attn.bias`, BERT's
`position_ids` and `token_type_ids`, LLaMA's `rotary_emb.inv_freq`). The ports a onemodel user
writes of the same code are examples/transformers/*.mjs.

    gpt2      GPT2LMHeadModel    Conv1D (addmm), gelu_new, a bool tril buffer sliced to the length
    bert      BertModel          an attention_mask made additive ((1 - mask) * finfo.min), pooler
    llama     LlamaForCausalLM   RMSNorm, rotary embedding computed from position ids (cos, sin),
                                 grouped-query attention (repeat_kv), the causal mask made by
                                 full(min).triu(1) *= arange > positions
    t5        T5EncoderModel     relative position buckets (abs, log, minimum, where), no scaling,
                                 the bias of block 0 shared by the others, a padding mask
    whisper   WhisperEncoder     Conv1d front end (stride 2), gelu, sinusoidal positions, bmm attention
    phi       PhiForCausalLM     partial rotary from cos/sin tables cached to max_position_embeddings
                                 (rebuilt longer in forward), parallel attention + gelu_new MLP,
                                 _prepare_4d_causal_attention_mask with a padding mask
    whisper_decoder WhisperDecoder  causal self-attention and cross-attention over encoder states of
                                 their own length, learned positions
    gemma     GemmaForCausalLM   embeddings * sqrt(hidden), RMSNorm by (1 + weight), multi-query
                                 attention with its own head_dim, GeGLU (tanh gelu), tied lm_head
    clip_text CLIPTextModel      causal mask by empty/fill_/triu_, padding mask, quick_gelu, pooled
                                 at the argmax of the input ids
    qwen2     Qwen2ForCausalLM   LLaMA's layers with q/k/v biases (eager_attention_forward's scaling),
                                 Mistral's mask with its sliding-window branch, off as Qwen2Config
                                 makes it without use_sliding_window; lm_head tied
    distilbert DistilBertModel   the sinusoidal position table, (mask == 0).view().expand_as(scores)
                                 under masked_fill(finfo.min), post-norm blocks, no token types
    albert    AlbertModel        embeddings of embedding_size mapped to hidden_size, one layer group
                                 applied num_hidden_layers times (the same weights), pooler with tanh
    bloom     BloomForCausalLM   ALiBi (a slope per head times a cumsum of the padding mask), fused
                                 query_key_value, baddbmm scores, GPT-J's causal mask, tied lm_head
    wav2vec2  Wav2Vec2Model      strided Conv1d feature encoder over the audio (GroupNorm first),
                                 feature projection, weight-normed grouped positional conv (even
                                 kernel: the trailing pad removed), post-norm encoder layers
    segformer SegformerForSemanticSegmentation  overlapping patch embeddings, spatial-reduction
                                 attention on tokens reshaped to [b, c, h, w], Mix-FFN, the MLP decode
                                 head's bilinear interpolate to the first stage's size
    vit_embeddings ViTEmbeddings  interpolate_pos_encoding: the position table bicubic-interpolated
                                 to the image's patch grid (the table itself at the native size)
    opt       OPTForCausalLM     positions cumsum(mask) * mask - 1 at offset 2, pre-norm layers, GPT-J's
                                 causal mask, ReLU MLP on [batch * seq, hidden], lm_head tied
    opt_350m  OPTForCausalLM     the same in the 350m layout: post-norm, project_in / project_out
    gpt_neo   GPTNeoForCausalLM  a global and a local layer (the bool buffer tril ^ tril(-window)),
                                 unscaled scores, GPT-J's causal mask added, gelu_new, lm_head tied
    deberta_v2 DebertaV2Model    relative positions in log buckets (sign, abs, log, ceil), disentangled
                                 attention (c2p and p2c gathers, shared keys), XSoftmax
    dinov2    Dinov2Model        ViT's interpolate_pos_encoding (bicubic, size=), layer scale, gelu MLP,
                                 the CLS token as pooler_output
    dinov2_swiglu Dinov2ForImageClassification  the SwiGLU FFN, the classifier over CLS and the
                                 mean of the patch tokens
    longformer LongformerModel   input padded to a multiple of attention_window 6 and sliced back, sliding
                                 chunks by as_strided, diagonals into new_empty by slice assignment,
                                 _mask_invalid_locations in place, masked rows zeroed; local only
    longformer_global            the same with global attention (nonzero indices, *_global projections)
    longformer_windows           a window per layer (4, 8): padded to a multiple of 8
    big_bird  BigBirdModel       block_sparse (block_size 2, one random block) above the length threshold
                                 (5 + 2 * r) * block_size = 14, original_full (BERT's attention) at and
                                 below it; padded to a multiple of block_size and sliced back; the random
                                 blocks as eval mode makes them (block 0)
    big_bird_b4                  the same with block_size 4 and two random blocks: threshold 36
    swin      SwinModel          modeling_swin.py: maybe_pad to whole patches and windows, the shift mask made
                                 in place, set_shift_and_window_size (min(H, W) <= window: one unshifted
                                 window; each case on a fresh copy, as it writes the layer), patch merging
                                 of odd sides; patch 2, window 3
    swin_cls  SwinForImageClassification  patch 3, window 5
    mobilevit MobileViTForImageClassification  modeling_mobilevit.py: inverted residuals, MobileViT blocks
                                 whose unfolding bilinear-resizes a side to whole patches and back
    detr_sine DetrSinePositionEmbedding  modeling_detr.py: positions from the pixel mask's cumsum at run time
    detr_sine_small              the same at 2 channels a side, temperature 20, scale 1.5
    convnextv2 ConvNextV2ForImageClassification  modeling_convnextv2.py: GRN (the 2-norm over height and width
                                 over its channel mean + 1e-6), channels-last LayerNorm, Linear pointwise convs
    beit      BeitForImageClassification  modeling_beit.py: a relative position bias per layer, the table
                                 bilinear-interpolated to the image's window and indexed by the index made in
                                 place for it (meshgrid/arange, slice assignment), layer scale, mean pooling
    beit_shared                  absolute positions (bicubic to the patch grid), one shared bias, no layer
                                 scale, the CLS row of the final LayerNorm
    falcon    FalconForCausalLM  modeling_falcon.py: the new decoder architecture (grouped key-value heads
                                 broadcast to the queries), rotary, parallel attention and MLP (ln_attn, ln_mlp)
    falcon_7b                    multi-query (one key-value head), parallel attention and MLP on one LayerNorm
    falcon_alibi                 ALiBi in bfloat16 (added to the mask and to the scores), sequential attention
                                 and MLP, biases; to 300 tokens, where bfloat16 rounds the positions
    vit       ViTForImageClassification  the whole model with interpolate_pos_encoding (size=, as today's
                                 modeling_vit.py), 2 layers, the classifier over the CLS row
    vit_scale_factor             the same with the first interpolate_pos_encoding (DINO's: scale_factor
                                 (h0 + 0.1) / sqrt(N), which samples at other coordinates than size=)
    deit      DeiTForImageClassificationWithTeacher  class and distillation tokens (two table rows kept),
                                 ViT's layers, the two heads averaged
    cvt       CvtForImageClassification  convolutional token embeddings, depthwise conv + BatchNorm q/k/v
                                 projections of the tokens viewed as [b, c, h, w], einsum scores, the last
                                 stage's class token split off by torch.split([1, h * w])
    pvt_v2    PvtV2ForImageClassification  overlapping patch embeddings, spatial-reduction attention (a strided
                                 conv of the tokens reshaped to [b, c, h, w]), the depthwise-conv FFN
    pvt_v2_linear                the same with linear_attention: keys and values adaptive-average-pooled to 7 x 7
    gptj      GPTJForCausalLM    modeling_gptj.py: rotary on the first rotary_dim channels of each head in
                                 interleaved pairs (rotate_every_two), sin/cos gathered at the positions,
                                 attention and gelu_new MLP in parallel on ln_1, an lm_head with a bias
    m2m100    M2M100Encoder      modeling_m2m_100.py: embeddings * sqrt(d_model), sinusoidal positions from a
                                 cumsum of the ids != pad, the table made again longer in forward (from 19)
    speech2text Speech2TextEncoder  modeling_speech_to_text.py: Conv1dSubsampler (stride 2, GLU, twice), the
                                 frames' mask written at computed indices then flip/cumsum/flip, M2M100's
                                 growing table read at attention_mask.ne(1) (from 73 frames)
    funnel    FunnelBaseModel    modeling_funnel.py: three blocks, pooled by 2 between them (separate_cls,
                                 truncate_seq, pool_q_only, mean, ceil mode), relative_shift attention with
                                 the position vectors computed at the run's length, token-type scores

Each model writes tests/js/fixtures/transformers/<name>.safetensors (its state_dict, F32, tied
weights under both names as a real checkpoint has them) and <name>.json:

  { "torch_version", "model": <description>, "config": <the Hugging Face config fields the port reads>,
    "file": "<name>.safetensors", "axes": { input: [axis names] }, "trace_case": <index into cases>,
    "cases": [ { "sizes": { axis: size }, "inputs": [encoded], "outputs": [encoded] } ] }

(encoded as tools/pytorch_reference.py's families: { name, shape, dtype, data } with float32 as
the shortest decimal that reads back as the same value; an image or audio input as its shape and
seed instead, the values of tools/torchvision_ports.py's image()). The cases hold size 1, odd lengths and
lengths 5x and 20x the traced one; T5's cross its max_distance, the bucket cap; Wav2Vec2's and
SegFormer's start at the least size their convolutions take and cross their strides.

    python3 tools/transformers_ports.py            # every model
    python3 tools/transformers_ports.py t5 bert    # only these

(python3 being one that imports torch: Debian's python3-torch 1.13.1 on /usr/bin/python3.)
The output is deterministic: one thread, torch.manual_seed(0) per model, fixed inputs.
"""
import copy
import math
import os
import sys

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_reference import Conv1D, NewGELUActivation, encode, gpt2_hidden_states, main, short_floats  # noqa: E402  (HF's Conv1D, gelu_new, GPT2Model's forward)
from safetensors_fixtures import write  # noqa: E402
from torchvision_ports import image  # noqa: E402  (the deterministic images and audio of the vision and audio ports)

OUT_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'transformers'))
MODELS = {}


def model(fn):
    """Registers make_<name> as the fixture <name>."""
    MODELS[fn.__name__[len('make_'):]] = fn
    return fn


def randomize(net, keep=()):
    """Weights that make every part matter (Hugging Face's N(0, 0.02) makes blocks near identity):
    matrices N(0, 1 / fan_in) (GPT-2's Conv1D holds [in, out]), biases N(0, 0.1), norm weights
    U(0.5, 1.5), embedding tables N(0, 1) (an nn.Embedding's weight: ALBERT's Linear
    embedding_hidden_mapping_in is a matrix); names in keep stay as built (sinusoid tables)."""
    with torch.no_grad():
        for name, p in net.named_parameters():
            if name in keep:
                continue
            leaf = name.rsplit('.', 1)[-1]
            if leaf == 'bias':
                p.normal_(0, 0.1)
            elif 'norm' in name.lower() or '.ln_' in name or name.startswith('ln_'):
                p.uniform_(0.5, 1.5)
            elif isinstance(net.get_submodule(name.rsplit('.', 1)[0]) if '.' in name else net, nn.Embedding):
                p.normal_(0, 1)
            else:
                fan_in = p.shape[0] if '.c_' in name else p[0].numel()
                p.normal_(0, 1 / math.sqrt(fan_in))


# ---- GPT-2 (modeling_gpt2.py) ----------------------------------------------------------------------

class GPT2Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        n = c['n_positions']
        self.register_buffer('bias', torch.tril(torch.ones((n, n), dtype=torch.bool)).view(1, 1, n, n), persistent=False)
        self.embed_dim = c['n_embd']
        self.num_heads = c['n_head']
        self.head_dim = self.embed_dim // self.num_heads
        self.split_size = self.embed_dim
        self.c_attn = Conv1D(3 * self.embed_dim, self.embed_dim)
        self.c_proj = Conv1D(self.embed_dim, self.embed_dim)
        self.attn_dropout = nn.Dropout(0.1)
        self.resid_dropout = nn.Dropout(0.1)

    def _split_heads(self, tensor, num_heads, attn_head_size):
        new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
        return tensor.view(new_shape).permute(0, 2, 1, 3)

    def _merge_heads(self, tensor, num_heads, attn_head_size):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        return tensor.view(tensor.size()[:-2] + (num_heads * attn_head_size,))

    def _attn(self, query, key, value):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full([], value.size(-1) ** 0.5, dtype=attn_weights.dtype)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length:key_length, :key_length]
        mask_value = torch.full([], torch.finfo(attn_weights.dtype).min, dtype=attn_weights.dtype)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = self.attn_dropout(attn_weights.type(value.dtype))
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states):
        query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
        query = self._split_heads(query, self.num_heads, self.head_dim)
        key = self._split_heads(key, self.num_heads, self.head_dim)
        value = self._split_heads(value, self.num_heads, self.head_dim)
        attn_output = self._merge_heads(self._attn(query, key, value), self.num_heads, self.head_dim)
        return self.resid_dropout(self.c_proj(attn_output))


class GPT2MLP(nn.Module):
    def __init__(self, intermediate_size, c):
        super().__init__()
        self.c_fc = Conv1D(intermediate_size, c['n_embd'])
        self.c_proj = Conv1D(c['n_embd'], intermediate_size)
        self.act = NewGELUActivation()  # ACT2FN['gelu_new']
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states):
        return self.dropout(self.c_proj(self.act(self.c_fc(hidden_states))))


class GPT2Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c['n_embd']
        self.ln_1 = nn.LayerNorm(d, eps=c['layer_norm_epsilon'])
        self.attn = GPT2Attention(c)
        self.ln_2 = nn.LayerNorm(d, eps=c['layer_norm_epsilon'])
        self.mlp = GPT2MLP(c['n_inner'] or 4 * d, c)

    def forward(self, hidden_states):
        hidden_states = self.attn(self.ln_1(hidden_states)) + hidden_states
        return hidden_states + self.mlp(self.ln_2(hidden_states))


class GPT2Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c['vocab_size'], c['n_embd'])
        self.wpe = nn.Embedding(c['n_positions'], c['n_embd'])
        self.drop = nn.Dropout(0.1)
        self.h = nn.ModuleList([GPT2Block(c) for _ in range(c['n_layer'])])
        self.ln_f = nn.LayerNorm(c['n_embd'], eps=c['layer_norm_epsilon'])

    def forward(self, input_ids):
        return gpt2_hidden_states(self, input_ids)


class GPT2LMHeadModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transformer = GPT2Model(c)
        self.lm_head = nn.Linear(c['n_embd'], c['vocab_size'], bias=False)
        self.lm_head.weight = self.transformer.wte.weight

    def forward(self, input_ids):
        return self.lm_head(self.transformer(input_ids))


# ---- BERT (modeling_bert.py) -------------------------------------------------------------------

class BertEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c['vocab_size'], c['hidden_size'], padding_idx=c['pad_token_id'])
        self.position_embeddings = nn.Embedding(c['max_position_embeddings'], c['hidden_size'])
        self.token_type_embeddings = nn.Embedding(c['type_vocab_size'], c['hidden_size'])
        self.LayerNorm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])
        self.dropout = nn.Dropout(0.1)
        self.register_buffer('position_ids', torch.arange(c['max_position_embeddings']).expand((1, -1)), persistent=False)
        self.register_buffer('token_type_ids', torch.zeros(self.position_ids.size(), dtype=torch.long), persistent=False)

    def forward(self, input_ids):
        input_shape = input_ids.size()
        seq_length = input_shape[1]
        position_ids = self.position_ids[:, 0:seq_length]
        token_type_ids = self.token_type_ids[:, :seq_length].expand(input_shape[0], seq_length)
        embeddings = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        embeddings = embeddings + self.position_embeddings(position_ids)
        return self.dropout(self.LayerNorm(embeddings))


class BertSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.num_attention_heads = c['num_attention_heads']
        self.attention_head_size = c['hidden_size'] // c['num_attention_heads']
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query = nn.Linear(c['hidden_size'], self.all_head_size)
        self.key = nn.Linear(c['hidden_size'], self.all_head_size)
        self.value = nn.Linear(c['hidden_size'], self.all_head_size)
        self.dropout = nn.Dropout(0.1)

    def transpose_for_scores(self, x):
        x = x.view(x.size()[:-1] + (self.num_attention_heads, self.attention_head_size))
        return x.permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask):
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        query_layer = self.transpose_for_scores(self.query(hidden_states))
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        attention_scores = attention_scores + attention_mask
        attention_probs = self.dropout(nn.functional.softmax(attention_scores, dim=-1))
        context_layer = torch.matmul(attention_probs, value_layer).permute(0, 2, 1, 3).contiguous()
        return context_layer.view(context_layer.size()[:-2] + (self.all_head_size,))


class BertSelfOutput(nn.Module):
    """BertSelfOutput and BertOutput: dense, dropout, LayerNorm of the sum with the block's input."""

    def __init__(self, c, inner):
        super().__init__()
        self.dense = nn.Linear(inner, c['hidden_size'])
        self.LayerNorm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states, input_tensor):
        return self.LayerNorm(self.dropout(self.dense(hidden_states)) + input_tensor)


class BertAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertSelfOutput(c, c['hidden_size'])

    def forward(self, hidden_states, attention_mask):
        return self.output(self.self(hidden_states, attention_mask), hidden_states)


class BertIntermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c['hidden_size'], c['intermediate_size'])

    def forward(self, hidden_states):
        return nn.functional.gelu(self.dense(hidden_states))


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = BertSelfOutput(c, c['intermediate_size'])

    def forward(self, hidden_states, attention_mask):
        attention_output = self.attention(hidden_states, attention_mask)
        return self.output(self.intermediate(attention_output), attention_output)


class BertEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(c) for _ in range(c['num_hidden_layers'])])

    def forward(self, hidden_states, attention_mask):
        for layer_module in self.layer:
            hidden_states = layer_module(hidden_states, attention_mask)
        return hidden_states


class BertPooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c['hidden_size'], c['hidden_size'])
        self.activation = nn.Tanh()

    def forward(self, hidden_states):
        return self.activation(self.dense(hidden_states[:, 0]))


def extended_attention_mask(attention_mask, dtype=torch.float32):
    """ModuleUtilsMixin.get_extended_attention_mask of a [batch, seq] padding mask."""
    extended = attention_mask[:, None, None, :].to(dtype=dtype)
    return (1.0 - extended) * torch.finfo(dtype).min


class BertModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.encoder = BertEncoder(c)
        self.pooler = BertPooler(c)

    def forward(self, input_ids, attention_mask):
        sequence_output = self.encoder(self.embeddings(input_ids), extended_attention_mask(attention_mask))
        return sequence_output, self.pooler(sequence_output)


# ---- RoBERTa (modeling_roberta.py: BERT's encoder and pooler, its own embeddings) -----------------

def create_position_ids_from_input_ids(input_ids, padding_idx, past_key_values_length=0):
    """Positions padding_idx + 1, ... of the non-padding tokens (a cumsum of the mask), padding_idx at padding."""
    mask = input_ids.ne(padding_idx).int()
    incremental_indices = (torch.cumsum(mask, dim=1).type_as(mask) + past_key_values_length) * mask
    return incremental_indices.long() + padding_idx


class RobertaEmbeddings(BertEmbeddings):
    def __init__(self, c):
        super().__init__(c)
        self.padding_idx = c['pad_token_id']
        self.position_embeddings = nn.Embedding(c['max_position_embeddings'], c['hidden_size'], padding_idx=self.padding_idx)

    def forward(self, input_ids):
        position_ids = create_position_ids_from_input_ids(input_ids, self.padding_idx)
        input_shape = input_ids.size()
        seq_length = input_shape[1]
        token_type_ids = self.token_type_ids[:, :seq_length].expand(input_shape[0], seq_length)
        embeddings = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        embeddings = embeddings + self.position_embeddings(position_ids)
        return self.dropout(self.LayerNorm(embeddings))


class RobertaModel(BertModel):
    def __init__(self, c):
        super().__init__(c)
        self.embeddings = RobertaEmbeddings(c)


# ---- LLaMA (modeling_llama.py) -----------------------------------------------------------------

class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, c):
        super().__init__()
        dim = c['hidden_size'] // c['num_attention_heads']
        inv_freq = 1.0 / (c['rope_theta'] ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer('inv_freq', inv_freq, persistent=False)

    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype=x.dtype), emb.sin().to(dtype=x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


def llama_attention(attn, hidden_states, attention_mask, rotary):
    """LlamaAttention's forward up to o_proj (GemmaAttention's too): q, k and v projected to heads,
    rotary(v) -> (cos, sin) applied to q and k, k and v repeated per group, softmax(q k^T /
    sqrt(head_dim) + mask) v; [bsz, q_len, heads, head_dim], contiguous."""
    bsz, q_len, _ = hidden_states.size()
    query_states = attn.q_proj(hidden_states).view(bsz, q_len, attn.num_heads, attn.head_dim).transpose(1, 2)
    key_states = attn.k_proj(hidden_states).view(bsz, q_len, attn.num_key_value_heads, attn.head_dim).transpose(1, 2)
    value_states = attn.v_proj(hidden_states).view(bsz, q_len, attn.num_key_value_heads, attn.head_dim).transpose(1, 2)
    cos, sin = rotary(value_states)
    query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
    key_states = repeat_kv(key_states, attn.num_key_value_groups)
    value_states = repeat_kv(value_states, attn.num_key_value_groups)
    attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(attn.head_dim)
    attn_weights = attn_weights + attention_mask[:, :, :, : key_states.shape[-2]]
    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
    return torch.matmul(attn_weights, value_states).transpose(1, 2).contiguous()


class LlamaAttention(nn.Module):
    def __init__(self, c, layer_idx):
        super().__init__()
        self.num_heads = c['num_attention_heads']
        self.head_dim = c['hidden_size'] // self.num_heads
        self.num_key_value_heads = c['num_key_value_heads']
        self.num_key_value_groups = self.num_heads // self.num_key_value_heads
        self.q_proj = nn.Linear(c['hidden_size'], self.num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(c['hidden_size'], self.num_key_value_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(c['hidden_size'], self.num_key_value_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, c['hidden_size'], bias=False)

    def forward(self, hidden_states, attention_mask, position_embeddings):
        attn_output = llama_attention(self, hidden_states, attention_mask, lambda _: position_embeddings)
        return self.o_proj(attn_output.reshape(*hidden_states.shape[:2], -1))


class LlamaMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.gate_proj = nn.Linear(c['hidden_size'], c['intermediate_size'], bias=False)
        self.up_proj = nn.Linear(c['hidden_size'], c['intermediate_size'], bias=False)
        self.down_proj = nn.Linear(c['intermediate_size'], c['hidden_size'], bias=False)

    def forward(self, x):
        return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    attention_class = LlamaAttention

    def __init__(self, c, layer_idx):
        super().__init__()
        self.self_attn = self.attention_class(c, layer_idx)
        self.mlp = LlamaMLP(c)
        self.input_layernorm = LlamaRMSNorm(c['hidden_size'], c['rms_norm_eps'])
        self.post_attention_layernorm = LlamaRMSNorm(c['hidden_size'], c['rms_norm_eps'])

    def forward(self, hidden_states, attention_mask, position_embeddings):
        hidden_states = hidden_states + self.self_attn(self.input_layernorm(hidden_states), attention_mask, position_embeddings)
        return hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))


class LlamaModel(nn.Module):
    layer_class = LlamaDecoderLayer

    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c['vocab_size'], c['hidden_size'])
        self.layers = nn.ModuleList([self.layer_class(c, i) for i in range(c['num_hidden_layers'])])
        self.norm = LlamaRMSNorm(c['hidden_size'], c['rms_norm_eps'])
        self.rotary_emb = LlamaRotaryEmbedding(c)

    def causal_mask(self, attention_mask, input_tensor, cache_position):
        """_update_causal_mask without an attention_mask or a cache."""
        assert attention_mask is None
        min_dtype = torch.finfo(input_tensor.dtype).min
        sequence_length = target_length = input_tensor.shape[1]
        causal_mask = torch.full((sequence_length, target_length), fill_value=min_dtype, dtype=input_tensor.dtype)
        if sequence_length != 1:
            causal_mask = torch.triu(causal_mask, diagonal=1)
        causal_mask *= torch.arange(target_length) > cache_position.reshape(-1, 1)
        return causal_mask[None, None, :, :].expand(input_tensor.shape[0], 1, -1, -1)

    def forward(self, input_ids, attention_mask=None):
        inputs_embeds = self.embed_tokens(input_ids)
        cache_position = torch.arange(0, inputs_embeds.shape[1])
        position_ids = cache_position.unsqueeze(0)
        causal_mask = self.causal_mask(attention_mask, inputs_embeds, cache_position)
        hidden_states = inputs_embeds
        position_embeddings = self.rotary_emb(hidden_states, position_ids)
        for decoder_layer in self.layers:
            hidden_states = decoder_layer(hidden_states, causal_mask, position_embeddings)
        return self.norm(hidden_states)


class LlamaForCausalLM(nn.Module):
    model_class = LlamaModel

    def __init__(self, c):
        super().__init__()
        self.model = self.model_class(c)
        self.lm_head = nn.Linear(c['hidden_size'], c['vocab_size'], bias=False)

    def forward(self, input_ids, attention_mask=None):
        return self.lm_head(self.model(input_ids, attention_mask))


# ---- Mistral (modeling_mistral.py: LLaMA's layers, a sliding-window causal mask) -----------------

class MistralModel(LlamaModel):
    def __init__(self, c):
        super().__init__(c)
        self.sliding_window = c['sliding_window']

    def causal_mask(self, attention_mask, input_tensor, cache_position):
        """_update_causal_mask (eager, no cache) with a 2-D padding mask:
        _prepare_4d_causal_attention_mask_with_cache_position with the sliding window."""
        min_dtype = torch.finfo(input_tensor.dtype).min
        sequence_length = input_tensor.shape[1]
        target_length = attention_mask.shape[-1]
        causal_mask = torch.full((sequence_length, target_length), fill_value=min_dtype, dtype=input_tensor.dtype)
        diagonal_attend_mask = torch.arange(target_length) > cache_position.reshape(-1, 1)
        if self.sliding_window is not None:
            sliding_attend_mask = torch.arange(target_length) <= (cache_position.reshape(-1, 1) - self.sliding_window)
            diagonal_attend_mask.bitwise_or_(sliding_attend_mask)
        causal_mask *= diagonal_attend_mask
        return add_padding_mask(causal_mask, attention_mask, input_tensor.shape[0], min_dtype)


class MistralForCausalLM(LlamaForCausalLM):
    model_class = MistralModel


# ---- T5 encoder (modeling_t5.py) ---------------------------------------------------------------

class T5LayerNorm(LlamaRMSNorm):
    """Upstream's own class; the parameters are LlamaRMSNorm's, the forward keeps the input's dtype."""

    def forward(self, hidden_states):
        variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        return self.weight * (hidden_states * torch.rsqrt(variance + self.variance_epsilon))


class T5Attention(nn.Module):
    def __init__(self, c, has_relative_attention_bias):
        super().__init__()
        self.has_relative_attention_bias = has_relative_attention_bias
        self.relative_attention_num_buckets = c['relative_attention_num_buckets']
        self.relative_attention_max_distance = c['relative_attention_max_distance']
        self.n_heads = c['num_heads']
        self.key_value_proj_dim = c['d_kv']
        self.inner_dim = self.n_heads * self.key_value_proj_dim
        self.q = nn.Linear(c['d_model'], self.inner_dim, bias=False)
        self.k = nn.Linear(c['d_model'], self.inner_dim, bias=False)
        self.v = nn.Linear(c['d_model'], self.inner_dim, bias=False)
        self.o = nn.Linear(self.inner_dim, c['d_model'], bias=False)
        if self.has_relative_attention_bias:
            self.relative_attention_bias = nn.Embedding(self.relative_attention_num_buckets, self.n_heads)

    @staticmethod
    def _relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
        relative_buckets = 0
        if bidirectional:
            num_buckets //= 2
            relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
            relative_position = torch.abs(relative_position)
        else:
            relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
        max_exact = num_buckets // 2
        is_small = relative_position < max_exact
        relative_position_if_large = max_exact + (
            torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
        ).to(torch.long)
        relative_position_if_large = torch.min(relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1))
        relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
        return relative_buckets

    def compute_bias(self, query_length, key_length):
        context_position = torch.arange(query_length, dtype=torch.long)[:, None]
        memory_position = torch.arange(key_length, dtype=torch.long)[None, :]
        relative_position = memory_position - context_position
        relative_position_bucket = self._relative_position_bucket(
            relative_position, bidirectional=True, num_buckets=self.relative_attention_num_buckets,
            max_distance=self.relative_attention_max_distance)
        values = self.relative_attention_bias(relative_position_bucket)
        return values.permute([2, 0, 1]).unsqueeze(0)

    def forward(self, hidden_states, mask, position_bias=None):
        batch_size, seq_length = hidden_states.shape[:2]
        query_states = self.q(hidden_states).view(batch_size, -1, self.n_heads, self.key_value_proj_dim).transpose(1, 2)
        key_states = self.k(hidden_states).view(batch_size, -1, self.n_heads, self.key_value_proj_dim).transpose(1, 2)
        value_states = self.v(hidden_states).view(batch_size, -1, self.n_heads, self.key_value_proj_dim).transpose(1, 2)
        scores = torch.matmul(query_states, key_states.transpose(3, 2))
        if position_bias is None:
            key_length = key_states.shape[-2]
            position_bias = self.compute_bias(seq_length, key_length)[:, :, -seq_length:, :]
            position_bias = position_bias + mask[:, :, :, : key_states.shape[-2]]
        scores += position_bias
        attn_weights = nn.functional.softmax(scores.float(), dim=-1).type_as(scores)
        attn_output = torch.matmul(attn_weights, value_states).transpose(1, 2).contiguous()
        attn_output = self.o(attn_output.view(batch_size, -1, self.inner_dim))
        return attn_output, position_bias


class T5LayerSelfAttention(nn.Module):
    def __init__(self, c, has_relative_attention_bias):
        super().__init__()
        self.SelfAttention = T5Attention(c, has_relative_attention_bias)
        self.layer_norm = T5LayerNorm(c['d_model'], c['layer_norm_epsilon'])
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states, attention_mask, position_bias):
        attention_output, position_bias = self.SelfAttention(self.layer_norm(hidden_states), attention_mask, position_bias)
        return hidden_states + self.dropout(attention_output), position_bias


class T5DenseActDense(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wi = nn.Linear(c['d_model'], c['d_ff'], bias=False)
        self.wo = nn.Linear(c['d_ff'], c['d_model'], bias=False)
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states):
        return self.wo(self.dropout(nn.functional.relu(self.wi(hidden_states))))


class T5LayerFF(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.DenseReluDense = T5DenseActDense(c)
        self.layer_norm = T5LayerNorm(c['d_model'], c['layer_norm_epsilon'])
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states):
        return hidden_states + self.dropout(self.DenseReluDense(self.layer_norm(hidden_states)))


class T5Block(nn.Module):
    def __init__(self, c, has_relative_attention_bias):
        super().__init__()
        self.layer = nn.ModuleList([T5LayerSelfAttention(c, has_relative_attention_bias), T5LayerFF(c)])

    def forward(self, hidden_states, attention_mask, position_bias):
        hidden_states, position_bias = self.layer[0](hidden_states, attention_mask, position_bias)
        return self.layer[-1](hidden_states), position_bias


class T5Stack(nn.Module):
    def __init__(self, c, embed_tokens):
        super().__init__()
        self.embed_tokens = embed_tokens
        self.block = nn.ModuleList([T5Block(c, has_relative_attention_bias=bool(i == 0)) for i in range(c['num_layers'])])
        self.final_layer_norm = T5LayerNorm(c['d_model'], c['layer_norm_epsilon'])
        self.dropout = nn.Dropout(0.1)

    def forward(self, input_ids, attention_mask):
        hidden_states = self.dropout(self.embed_tokens(input_ids))
        mask = extended_attention_mask(attention_mask)
        position_bias = None
        for layer_module in self.block:
            hidden_states, position_bias = layer_module(hidden_states, mask, position_bias)
        return self.dropout(self.final_layer_norm(hidden_states))


class T5EncoderModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.shared = nn.Embedding(c['vocab_size'], c['d_model'])
        self.encoder = T5Stack(c, self.shared)

    def forward(self, input_ids, attention_mask):
        return self.encoder(input_ids, attention_mask)


# ---- Whisper encoder (modeling_whisper.py) -----------------------------------------------------

def sinusoids(length, channels, max_timescale=10000):
    log_timescale_increment = math.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2))
    scaled_time = torch.arange(length).view(-1, 1) * inv_timescales.view(1, -1)
    return torch.cat([scaled_time.sin(), scaled_time.cos()], dim=1)


class WhisperAttention(nn.Module):
    def __init__(self, c, num_heads=None):
        super().__init__()
        self.embed_dim = c['d_model']
        self.num_heads = num_heads or c['encoder_attention_heads']
        self.head_dim = self.embed_dim // self.num_heads
        self.scaling = self.head_dim ** -0.5
        self.k_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=False)
        self.v_proj = nn.Linear(self.embed_dim, self.embed_dim)
        self.q_proj = nn.Linear(self.embed_dim, self.embed_dim)
        self.out_proj = nn.Linear(self.embed_dim, self.embed_dim)

    def _shape(self, tensor, seq_len, bsz):
        return tensor.view(bsz, seq_len, self.num_heads, self.head_dim).transpose(1, 2).contiguous()

    def forward(self, hidden_states, key_value_states=None, attention_mask=None):
        # if key_value_states are provided this layer is used as a cross-attention layer for the decoder
        is_cross_attention = key_value_states is not None
        bsz, tgt_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states) * self.scaling
        kv = key_value_states if is_cross_attention else hidden_states
        key_states = self._shape(self.k_proj(kv), -1, bsz)
        value_states = self._shape(self.v_proj(kv), -1, bsz)
        proj_shape = (bsz * self.num_heads, -1, self.head_dim)
        query_states = self._shape(query_states, tgt_len, bsz).view(*proj_shape)
        key_states = key_states.reshape(*proj_shape)
        value_states = value_states.reshape(*proj_shape)
        src_len = key_states.size(1)
        attn_weights = torch.bmm(query_states, key_states.transpose(1, 2))
        if attention_mask is not None:
            attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len) + attention_mask
            attn_weights = attn_weights.view(bsz * self.num_heads, tgt_len, src_len)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_output = torch.bmm(attn_weights, value_states)
        attn_output = attn_output.view(bsz, self.num_heads, tgt_len, self.head_dim).transpose(1, 2)
        return self.out_proj(attn_output.reshape(bsz, tgt_len, self.embed_dim))


class WhisperEncoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c['d_model']
        self.self_attn = WhisperAttention(c)
        self.self_attn_layer_norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, c['encoder_ffn_dim'])
        self.fc2 = nn.Linear(c['encoder_ffn_dim'], d)
        self.final_layer_norm = nn.LayerNorm(d)

    def forward(self, hidden_states):
        hidden_states = hidden_states + self.self_attn(self.self_attn_layer_norm(hidden_states))
        residual = hidden_states
        hidden_states = nn.functional.gelu(self.fc1(self.final_layer_norm(hidden_states)))
        return residual + self.fc2(hidden_states)


class WhisperEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c['d_model']
        self.conv1 = nn.Conv1d(c['num_mel_bins'], d, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(d, d, kernel_size=3, stride=2, padding=1)
        self.embed_positions = nn.Embedding(c['max_source_positions'], d)
        self.embed_positions.requires_grad_(False)
        with torch.no_grad():
            self.embed_positions.weight.copy_(sinusoids(*self.embed_positions.weight.shape))
        self.layers = nn.ModuleList([WhisperEncoderLayer(c) for _ in range(c['encoder_layers'])])
        self.layer_norm = nn.LayerNorm(d)

    def forward(self, input_features):
        inputs_embeds = nn.functional.gelu(self.conv1(input_features))
        inputs_embeds = nn.functional.gelu(self.conv2(inputs_embeds))
        inputs_embeds = inputs_embeds.permute(0, 2, 1)
        # Upstream requires input_features of exactly 2 * max_source_positions frames (a ValueError
        # otherwise) and adds the whole table; this reference and the port take any length up to
        # that and add the table's first rows, so the encoder runs on short audio too.
        embed_pos = self.embed_positions.weight[:inputs_embeds.shape[1]]
        hidden_states = inputs_embeds + embed_pos
        for encoder_layer in self.layers:
            hidden_states = encoder_layer(hidden_states)
        return self.layer_norm(hidden_states)


class WhisperDecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c['d_model']
        self.self_attn = WhisperAttention(c, c['decoder_attention_heads'])
        self.self_attn_layer_norm = nn.LayerNorm(d)
        self.encoder_attn = WhisperAttention(c, c['decoder_attention_heads'])
        self.encoder_attn_layer_norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, c['decoder_ffn_dim'])
        self.fc2 = nn.Linear(c['decoder_ffn_dim'], d)
        self.final_layer_norm = nn.LayerNorm(d)

    def forward(self, hidden_states, attention_mask, encoder_hidden_states):
        residual = hidden_states
        hidden_states = self.self_attn(self.self_attn_layer_norm(hidden_states), attention_mask=attention_mask)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.encoder_attn(self.encoder_attn_layer_norm(hidden_states), key_value_states=encoder_hidden_states)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.fc2(nn.functional.gelu(self.fc1(self.final_layer_norm(hidden_states))))
        return residual + hidden_states


class WhisperDecoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c['d_model']
        self.embed_tokens = nn.Embedding(c['vocab_size'], d, c['pad_token_id'])
        self.embed_positions = nn.Embedding(c['max_target_positions'], d)  # WhisperPositionalEmbedding
        self.layers = nn.ModuleList([WhisperDecoderLayer(c) for _ in range(c['decoder_layers'])])
        self.layer_norm = nn.LayerNorm(d)

    def forward(self, input_ids, encoder_hidden_states):
        input_shape = input_ids.size()
        input_ids = input_ids.view(-1, input_shape[-1])
        inputs_embeds = self.embed_tokens(input_ids)
        # _prepare_4d_causal_attention_mask(None, ...): the causal mask (none at length 1)
        attention_mask = None
        if input_shape[-1] > 1:
            mask = torch.full((input_shape[-1], input_shape[-1]), torch.finfo(inputs_embeds.dtype).min)
            mask_cond = torch.arange(mask.size(-1))
            mask.masked_fill_(mask_cond < (mask_cond + 1).view(mask.size(-1), 1), 0)
            attention_mask = mask[None, None, :, :].expand(input_shape[0], 1, input_shape[-1], input_shape[-1])
        # WhisperPositionalEmbedding.forward(input_ids, past_key_values_length=0)
        positions = self.embed_positions.weight[0:input_ids.shape[1]]
        hidden_states = inputs_embeds + positions
        for decoder_layer in self.layers:
            hidden_states = decoder_layer(hidden_states, attention_mask, encoder_hidden_states)
        return self.layer_norm(hidden_states)


# ---- Phi (modeling_phi.py, phi-1/phi-1.5/phi-2) --------------------------------------------------

class PhiRotaryEmbedding(nn.Module):
    """The rotary table of the first rotary_dim channels: cos/sin cached to max_position_embeddings
    (non-persistent), rebuilt longer when a longer sequence comes."""

    def __init__(self, dim, max_position_embeddings, base):
        super().__init__()
        self.dim = dim
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer('inv_freq', inv_freq, persistent=False)
        self._set_cos_sin_cache(max_position_embeddings)

    def _set_cos_sin_cache(self, seq_len):
        self.max_seq_len_cached = seq_len
        t = torch.arange(seq_len, dtype=torch.int64).type_as(self.inv_freq)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer('cos_cached', emb.cos(), persistent=False)
        self.register_buffer('sin_cached', emb.sin(), persistent=False)

    def forward(self, x, seq_len):
        if seq_len > self.max_seq_len_cached:
            self._set_cos_sin_cache(seq_len)
        return self.cos_cached[:seq_len].to(dtype=x.dtype), self.sin_cached[:seq_len].to(dtype=x.dtype)


def apply_rotary_pos_emb_ids(q, k, cos, sin, position_ids, unsqueeze_dim=1):
    """Phi's apply_rotary_pos_emb: the table rows at position_ids."""
    cos = cos[position_ids].unsqueeze(unsqueeze_dim)
    sin = sin[position_ids].unsqueeze(unsqueeze_dim)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


class PhiMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.activation_fn = NewGELUActivation()  # ACT2FN['gelu_new']
        self.fc1 = nn.Linear(c['hidden_size'], c['intermediate_size'])
        self.fc2 = nn.Linear(c['intermediate_size'], c['hidden_size'])

    def forward(self, hidden_states):
        return self.fc2(self.activation_fn(self.fc1(hidden_states)))


class PhiAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.hidden_size = c['hidden_size']
        self.num_heads = c['num_attention_heads']
        self.head_dim = self.hidden_size // self.num_heads
        self.num_key_value_heads = c['num_key_value_heads']
        self.num_key_value_groups = self.num_heads // self.num_key_value_heads
        self.q_proj = nn.Linear(self.hidden_size, self.num_heads * self.head_dim, bias=True)
        self.k_proj = nn.Linear(self.hidden_size, self.num_key_value_heads * self.head_dim, bias=True)
        self.v_proj = nn.Linear(self.hidden_size, self.num_key_value_heads * self.head_dim, bias=True)
        self.dense = nn.Linear(self.num_heads * self.head_dim, self.hidden_size, bias=True)
        assert not c['qk_layernorm']
        self.rotary_emb = PhiRotaryEmbedding(int(c['partial_rotary_factor'] * self.head_dim), c['max_position_embeddings'], c['rope_theta'])

    def forward(self, hidden_states, attention_mask, position_ids):
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        kv_seq_len = key_states.shape[-2]
        cos, sin = self.rotary_emb(value_states, seq_len=kv_seq_len)
        # partial rotary embedding
        query_rot, query_pass = query_states[..., :self.rotary_emb.dim], query_states[..., self.rotary_emb.dim:]
        key_rot, key_pass = key_states[..., :self.rotary_emb.dim], key_states[..., self.rotary_emb.dim:]
        query_rot, key_rot = apply_rotary_pos_emb_ids(query_rot, key_rot, cos, sin, position_ids)
        query_states = torch.cat((query_rot, query_pass), dim=-1)
        key_states = torch.cat((key_rot, key_pass), dim=-1)
        key_states = repeat_kv(key_states, self.num_key_value_groups)
        value_states = repeat_kv(value_states, self.num_key_value_groups)
        attn_weights = torch.matmul(query_states.to(torch.float32), key_states.to(torch.float32).transpose(2, 3)) / math.sqrt(self.head_dim)
        attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=value_states.dtype)
        attn_output = torch.matmul(attn_weights, value_states).transpose(1, 2).contiguous()
        return self.dense(attn_output.reshape(bsz, q_len, self.hidden_size))


class PhiDecoderLayer(nn.Module):
    """Parallel attention and MLP on one LayerNorm's output, both added to the residual."""

    def __init__(self, c):
        super().__init__()
        self.self_attn = PhiAttention(c)
        self.mlp = PhiMLP(c)
        self.input_layernorm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])
        self.resid_dropout = nn.Dropout(0.1)

    def forward(self, hidden_states, attention_mask, position_ids):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        attn_outputs = self.resid_dropout(self.self_attn(hidden_states, attention_mask, position_ids))
        feed_forward_hidden_states = self.resid_dropout(self.mlp(hidden_states))
        return attn_outputs + feed_forward_hidden_states + residual


def prepare_4d_causal_attention_mask(attention_mask, input_shape, dtype):
    """modeling_attn_mask_utils' _prepare_4d_causal_attention_mask (AttentionMaskConverter.to_4d,
    causal, no cache, no sliding window) of a 2-D padding mask."""
    bsz, tgt_len = input_shape
    min_dtype = torch.finfo(dtype).min
    causal_4d_mask = None
    if tgt_len > 1:  # _make_causal_mask
        mask = torch.full((tgt_len, tgt_len), min_dtype)
        mask_cond = torch.arange(mask.size(-1))
        mask.masked_fill_(mask_cond < (mask_cond + 1).view(mask.size(-1), 1), 0)
        causal_4d_mask = mask.to(dtype)[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len)
    expanded_attn_mask = expand_mask(attention_mask, dtype, tgt_len)
    if causal_4d_mask is not None:
        expanded_attn_mask = causal_4d_mask.masked_fill(expanded_attn_mask.bool(), min_dtype)
    return expanded_attn_mask


def expand_mask(mask, dtype, tgt_len=None):
    """AttentionMaskConverter._expand_mask: [bsz, src_len] -> [bsz, 1, tgt_len, src_len], 0 kept, finfo.min masked."""
    bsz, src_len = mask.size()
    tgt_len = tgt_len if tgt_len is not None else src_len
    expanded_mask = mask[:, None, None, :].expand(bsz, 1, tgt_len, src_len).to(dtype)
    inverted_mask = 1.0 - expanded_mask
    return inverted_mask.masked_fill(inverted_mask.to(torch.bool), torch.finfo(dtype).min)


class PhiModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c['vocab_size'], c['hidden_size'])
        self.embed_dropout = nn.Dropout(0.0)
        self.layers = nn.ModuleList([PhiDecoderLayer(c) for _ in range(c['num_hidden_layers'])])
        self.final_layernorm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])

    def forward(self, input_ids, attention_mask):
        batch_size, seq_length = input_ids.shape
        position_ids = torch.arange(0, seq_length, dtype=torch.long).unsqueeze(0)
        inputs_embeds = self.embed_dropout(self.embed_tokens(input_ids))
        attention_mask = prepare_4d_causal_attention_mask(attention_mask, (batch_size, seq_length), inputs_embeds.dtype)
        hidden_states = inputs_embeds
        for decoder_layer in self.layers:
            hidden_states = decoder_layer(hidden_states, attention_mask, position_ids)
        return self.final_layernorm(hidden_states)


class PhiForCausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.model = PhiModel(c)
        self.lm_head = nn.Linear(c['hidden_size'], c['vocab_size'], bias=True)

    def forward(self, input_ids, attention_mask):
        return self.lm_head(self.model(input_ids, attention_mask))


# ---- Gemma (modeling_gemma.py) -------------------------------------------------------------------

class GemmaRMSNorm(nn.Module):
    """x / rms(x) * (1 + weight), in float32; the weight is stored as the offset from 1 (zeros)."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float())
        output = output * (1.0 + self.weight.float())
        return output.type_as(x)


class GemmaRotaryEmbedding(LlamaRotaryEmbedding):
    """LLaMA's, of head_dim channels (Gemma's head_dim is its own config field)."""

    def __init__(self, dim, base):
        nn.Module.__init__(self)
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer('inv_freq', inv_freq, persistent=False)


class GemmaMLP(LlamaMLP):
    """LLaMA's gate, up and down projections, the gate through tanh-approximated GELU."""

    def forward(self, x):
        act = nn.functional.gelu(self.gate_proj(x), approximate='tanh')  # ACT2FN['gelu_pytorch_tanh']
        return self.down_proj(act * self.up_proj(x))


class GemmaAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.num_heads = c['num_attention_heads']
        self.head_dim = c['head_dim']
        self.num_key_value_heads = c['num_key_value_heads']
        self.num_key_value_groups = self.num_heads // self.num_key_value_heads
        bias = c['attention_bias']
        self.q_proj = nn.Linear(c['hidden_size'], self.num_heads * self.head_dim, bias=bias)
        self.k_proj = nn.Linear(c['hidden_size'], self.num_key_value_heads * self.head_dim, bias=bias)
        self.v_proj = nn.Linear(c['hidden_size'], self.num_key_value_heads * self.head_dim, bias=bias)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, c['hidden_size'], bias=bias)
        self.rotary_emb = GemmaRotaryEmbedding(self.head_dim, c['rope_theta'])

    def forward(self, hidden_states, attention_mask, position_ids):
        attn_output = llama_attention(self, hidden_states, attention_mask, lambda v: self.rotary_emb(v, position_ids))
        return self.o_proj(attn_output.view(*hidden_states.shape[:2], -1))


class GemmaDecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = GemmaAttention(c)
        self.mlp = GemmaMLP(c)
        self.input_layernorm = GemmaRMSNorm(c['hidden_size'], eps=c['rms_norm_eps'])
        self.post_attention_layernorm = GemmaRMSNorm(c['hidden_size'], eps=c['rms_norm_eps'])

    def forward(self, hidden_states, attention_mask, position_ids):
        hidden_states = hidden_states + self.self_attn(self.input_layernorm(hidden_states), attention_mask, position_ids)
        return hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))


class GemmaModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.hidden_size = c['hidden_size']
        self.embed_tokens = nn.Embedding(c['vocab_size'], c['hidden_size'], c['pad_token_id'])
        self.layers = nn.ModuleList([GemmaDecoderLayer(c) for _ in range(c['num_hidden_layers'])])
        self.norm = GemmaRMSNorm(c['hidden_size'], eps=c['rms_norm_eps'])

    def _update_causal_mask(self, attention_mask, input_tensor, cache_position):
        """The eager mask without a cache: causal, then the 2-D padding mask written in by slice assignment."""
        dtype = input_tensor.dtype
        min_dtype = torch.finfo(dtype).min
        sequence_length = input_tensor.shape[1]
        target_length = attention_mask.shape[-1]
        causal_mask = torch.full((sequence_length, target_length), fill_value=min_dtype, dtype=dtype)
        if sequence_length != 1:
            causal_mask = torch.triu(causal_mask, diagonal=1)
        causal_mask *= torch.arange(target_length) > cache_position.reshape(-1, 1)
        causal_mask = causal_mask[None, None, :, :].expand(input_tensor.shape[0], 1, -1, -1)
        causal_mask = causal_mask.clone()  # copy to contiguous memory for in-place edit
        mask_length = attention_mask.shape[-1]
        padding_mask = causal_mask[..., :mask_length].eq(0.0) * attention_mask[:, None, None, :].eq(0.0)
        causal_mask[..., :mask_length] = causal_mask[..., :mask_length].masked_fill(padding_mask, min_dtype)
        return causal_mask

    def forward(self, input_ids, attention_mask):
        inputs_embeds = self.embed_tokens(input_ids)
        cache_position = torch.arange(0, inputs_embeds.shape[1])
        position_ids = cache_position.unsqueeze(0)
        causal_mask = self._update_causal_mask(attention_mask, inputs_embeds, cache_position)
        hidden_states = inputs_embeds
        # normalized: Gemma scales the embeddings by sqrt(hidden_size), rounded to the hidden states' dtype
        normalizer = torch.tensor(self.hidden_size ** 0.5, dtype=hidden_states.dtype)
        hidden_states = hidden_states * normalizer
        for decoder_layer in self.layers:
            hidden_states = decoder_layer(hidden_states, causal_mask, position_ids)
        return self.norm(hidden_states)


class GemmaForCausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.model = GemmaModel(c)
        self.lm_head = nn.Linear(c['hidden_size'], c['vocab_size'], bias=False)
        self.lm_head.weight = self.model.embed_tokens.weight  # tie_word_embeddings

    def forward(self, input_ids, attention_mask):
        return self.lm_head(self.model(input_ids, attention_mask))


# ---- CLIP text model (modeling_clip.py) ----------------------------------------------------------

class CLIPTextEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.token_embedding = nn.Embedding(c['vocab_size'], c['hidden_size'])
        self.position_embedding = nn.Embedding(c['max_position_embeddings'], c['hidden_size'])
        self.register_buffer('position_ids', torch.arange(c['max_position_embeddings']).expand((1, -1)), persistent=False)

    def forward(self, input_ids):
        seq_length = input_ids.shape[-1]
        position_ids = self.position_ids[:, :seq_length]
        return self.token_embedding(input_ids) + self.position_embedding(position_ids)


class CLIPAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_dim = c['hidden_size']
        self.num_heads = c['num_attention_heads']
        self.head_dim = self.embed_dim // self.num_heads
        self.scale = self.head_dim ** -0.5
        self.k_proj = nn.Linear(self.embed_dim, self.embed_dim)
        self.v_proj = nn.Linear(self.embed_dim, self.embed_dim)
        self.q_proj = nn.Linear(self.embed_dim, self.embed_dim)
        self.out_proj = nn.Linear(self.embed_dim, self.embed_dim)

    def _shape(self, tensor, seq_len, bsz):
        return tensor.view(bsz, seq_len, self.num_heads, self.head_dim).transpose(1, 2).contiguous()

    def forward(self, hidden_states, attention_mask, causal_attention_mask):
        bsz, tgt_len, embed_dim = hidden_states.size()
        query_states = self.q_proj(hidden_states) * self.scale
        key_states = self._shape(self.k_proj(hidden_states), -1, bsz)
        value_states = self._shape(self.v_proj(hidden_states), -1, bsz)
        proj_shape = (bsz * self.num_heads, -1, self.head_dim)
        query_states = self._shape(query_states, tgt_len, bsz).view(*proj_shape)
        key_states = key_states.view(*proj_shape)
        value_states = value_states.view(*proj_shape)
        src_len = key_states.size(1)
        attn_weights = torch.bmm(query_states, key_states.transpose(1, 2))
        attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len) + causal_attention_mask
        attn_weights = attn_weights.view(bsz * self.num_heads, tgt_len, src_len)
        attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len) + attention_mask
        attn_weights = attn_weights.view(bsz * self.num_heads, tgt_len, src_len)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_output = torch.bmm(attn_weights, value_states)
        attn_output = attn_output.view(bsz, self.num_heads, tgt_len, self.head_dim).transpose(1, 2)
        return self.out_proj(attn_output.reshape(bsz, tgt_len, embed_dim))


class QuickGELUActivation(nn.Module):
    def forward(self, input):
        return input * torch.sigmoid(1.702 * input)


class CLIPMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.activation_fn = QuickGELUActivation()  # ACT2FN['quick_gelu']
        self.fc1 = nn.Linear(c['hidden_size'], c['intermediate_size'])
        self.fc2 = nn.Linear(c['intermediate_size'], c['hidden_size'])

    def forward(self, hidden_states):
        return self.fc2(self.activation_fn(self.fc1(hidden_states)))


class CLIPEncoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = CLIPAttention(c)
        self.layer_norm1 = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])
        self.mlp = CLIPMLP(c)
        self.layer_norm2 = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])

    def forward(self, hidden_states, attention_mask, causal_attention_mask):
        hidden_states = hidden_states + self.self_attn(self.layer_norm1(hidden_states), attention_mask, causal_attention_mask)
        return hidden_states + self.mlp(self.layer_norm2(hidden_states))


class CLIPEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layers = nn.ModuleList([CLIPEncoderLayer(c) for _ in range(c['num_hidden_layers'])])

    def forward(self, inputs_embeds, attention_mask, causal_attention_mask):
        hidden_states = inputs_embeds
        for encoder_layer in self.layers:
            hidden_states = encoder_layer(hidden_states, attention_mask, causal_attention_mask)
        return hidden_states


class CLIPTextTransformer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = CLIPTextEmbeddings(c)
        self.encoder = CLIPEncoder(c)
        self.final_layer_norm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])
        self.eos_token_id = c['eos_token_id']

    def _build_causal_attention_mask(self, bsz, seq_len, dtype):
        mask = torch.empty(bsz, seq_len, seq_len, dtype=dtype)
        mask.fill_(torch.tensor(torch.finfo(dtype).min))
        mask.triu_(1)  # zero out the lower diagonal
        return mask.unsqueeze(1)

    def forward(self, input_ids, attention_mask):
        input_shape = input_ids.size()
        input_ids = input_ids.view(-1, input_shape[-1])
        hidden_states = self.embeddings(input_ids)
        causal_attention_mask = self._build_causal_attention_mask(input_shape[0], input_shape[1], hidden_states.dtype)
        attention_mask = expand_mask(attention_mask, hidden_states.dtype)
        last_hidden_state = self.final_layer_norm(self.encoder(hidden_states, attention_mask, causal_attention_mask))
        batch = torch.arange(last_hidden_state.shape[0])
        if self.eos_token_id == 2:
            # the legacy configs: the end-of-text token has the highest id, so its place is the argmax
            pooled_output = last_hidden_state[batch, input_ids.to(dtype=torch.int).argmax(dim=-1)]
        else:
            pooled_output = last_hidden_state[batch, (input_ids.to(dtype=torch.int) == self.eos_token_id).int().argmax(dim=-1)]
        return last_hidden_state, pooled_output


class CLIPTextModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.text_model = CLIPTextTransformer(c)

    def forward(self, input_ids, attention_mask):
        return self.text_model(input_ids, attention_mask)


# ---- Qwen2 (modeling_qwen2.py: LLaMA's layers with q/k/v biases, Mistral's causal mask) ----------

def eager_attention_forward(module, query, key, value, attention_mask, scaling):
    """The eager attention of the models written as modular files (Qwen2's, no dropout in eval)."""
    key_states = repeat_kv(key, module.num_key_value_groups)
    value_states = repeat_kv(value, module.num_key_value_groups)
    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    if attention_mask is not None:
        causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
        attn_weights = attn_weights + causal_mask
    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_output = torch.matmul(attn_weights, value_states)
    return attn_output.transpose(1, 2).contiguous(), attn_weights


class Qwen2Attention(nn.Module):
    def __init__(self, c, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.head_dim = c.get('head_dim') or c['hidden_size'] // c['num_attention_heads']
        self.num_key_value_groups = c['num_attention_heads'] // c['num_key_value_heads']
        self.scaling = self.head_dim ** -0.5
        self.q_proj = nn.Linear(c['hidden_size'], c['num_attention_heads'] * self.head_dim, bias=True)
        self.k_proj = nn.Linear(c['hidden_size'], c['num_key_value_heads'] * self.head_dim, bias=True)
        self.v_proj = nn.Linear(c['hidden_size'], c['num_key_value_heads'] * self.head_dim, bias=True)
        self.o_proj = nn.Linear(c['num_attention_heads'] * self.head_dim, c['hidden_size'], bias=False)

    def forward(self, hidden_states, attention_mask, position_embeddings):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        query_states = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        cos, sin = position_embeddings
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
        # upstream also picks the layer's sliding_window here, read by flash attention only
        attn_output, _ = eager_attention_forward(self, query_states, key_states, value_states, attention_mask, self.scaling)
        return self.o_proj(attn_output.reshape(*input_shape, -1).contiguous())


class Qwen2DecoderLayer(LlamaDecoderLayer):
    attention_class = Qwen2Attention


class Qwen2Model(MistralModel):
    layer_class = Qwen2DecoderLayer

    def __init__(self, c):
        super().__init__(c)
        # Qwen2Config: sliding_window = sliding_window if use_sliding_window else None
        self.sliding_window = c['sliding_window'] if c['use_sliding_window'] else None


class Qwen2ForCausalLM(LlamaForCausalLM):
    model_class = Qwen2Model

    def __init__(self, c):
        super().__init__(c)
        if c['tie_word_embeddings']:
            self.lm_head.weight = self.model.embed_tokens.weight


# ---- DistilBERT (modeling_distilbert.py) ---------------------------------------------------------

def create_sinusoidal_embeddings(n_pos, dim, out):
    position_enc = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)])
    out.requires_grad = False
    out[:, 0::2] = torch.FloatTensor(np.sin(position_enc[:, 0::2]))
    out[:, 1::2] = torch.FloatTensor(np.cos(position_enc[:, 1::2]))
    out.detach_()


class DistilBertEmbeddings(nn.Module):
    """Upstream's `Embeddings`."""

    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c['vocab_size'], c['dim'], padding_idx=c['pad_token_id'])
        self.position_embeddings = nn.Embedding(c['max_position_embeddings'], c['dim'])
        if c['sinusoidal_pos_embds']:
            with torch.no_grad():
                create_sinusoidal_embeddings(c['max_position_embeddings'], c['dim'], self.position_embeddings.weight)
        self.LayerNorm = nn.LayerNorm(c['dim'], eps=1e-12)
        self.dropout = nn.Dropout(c['dropout'])
        self.register_buffer('position_ids', torch.arange(c['max_position_embeddings']).expand((1, -1)), persistent=False)

    def forward(self, input_ids):
        input_embeds = self.word_embeddings(input_ids)
        seq_length = input_embeds.size(1)
        position_ids = self.position_ids[:, :seq_length]
        embeddings = input_embeds + self.position_embeddings(position_ids)
        return self.dropout(self.LayerNorm(embeddings))


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n_heads = c['n_heads']
        self.dim = c['dim']
        self.dropout = nn.Dropout(p=c['attention_dropout'])
        self.q_lin = nn.Linear(c['dim'], c['dim'])
        self.k_lin = nn.Linear(c['dim'], c['dim'])
        self.v_lin = nn.Linear(c['dim'], c['dim'])
        self.out_lin = nn.Linear(c['dim'], c['dim'])

    def forward(self, query, key, value, mask):
        bs, q_length, dim = query.size()
        k_length = key.size(1)
        dim_per_head = self.dim // self.n_heads
        mask_reshp = (bs, 1, 1, k_length)

        def shape(x):
            return x.view(bs, -1, self.n_heads, dim_per_head).transpose(1, 2)

        def unshape(x):
            return x.transpose(1, 2).contiguous().view(bs, -1, self.n_heads * dim_per_head)

        q = shape(self.q_lin(query))
        k = shape(self.k_lin(key))
        v = shape(self.v_lin(value))
        q = q / math.sqrt(dim_per_head)
        scores = torch.matmul(q, k.transpose(2, 3))
        mask = (mask == 0).view(mask_reshp).expand_as(scores)
        scores = scores.masked_fill(mask, torch.tensor(torch.finfo(scores.dtype).min))
        weights = self.dropout(nn.functional.softmax(scores, dim=-1))
        context = unshape(torch.matmul(weights, v))
        return (self.out_lin(context),)


class FFN(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dropout = nn.Dropout(p=c['dropout'])
        self.lin1 = nn.Linear(c['dim'], c['hidden_dim'])
        self.lin2 = nn.Linear(c['hidden_dim'], c['dim'])
        self.activation = nn.GELU()  # get_activation('gelu')

    def forward(self, input):
        return self.dropout(self.lin2(self.activation(self.lin1(input))))


class TransformerBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = MultiHeadSelfAttention(c)
        self.sa_layer_norm = nn.LayerNorm(c['dim'], eps=1e-12)
        self.ffn = FFN(c)
        self.output_layer_norm = nn.LayerNorm(c['dim'], eps=1e-12)

    def forward(self, x, attn_mask):
        sa_output = self.attention(query=x, key=x, value=x, mask=attn_mask)[0]
        sa_output = self.sa_layer_norm(sa_output + x)
        ffn_output = self.ffn(sa_output)
        return (self.output_layer_norm(ffn_output + sa_output),)


class DistilBertTransformer(nn.Module):
    """Upstream's `Transformer`."""

    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([TransformerBlock(c) for _ in range(c['n_layers'])])

    def forward(self, x, attn_mask):
        hidden_state = x
        for layer_module in self.layer:
            hidden_state = layer_module(hidden_state, attn_mask)[-1]
        return hidden_state


class DistilBertModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = DistilBertEmbeddings(c)
        self.transformer = DistilBertTransformer(c)

    def forward(self, input_ids, attention_mask):
        return self.transformer(self.embeddings(input_ids), attention_mask)


# ---- ALBERT (modeling_albert.py) -----------------------------------------------------------------

class AlbertEmbeddings(BertEmbeddings):
    """BERT's embeddings (upstream copies their forward) of embedding_size channels."""

    def __init__(self, c):
        super().__init__({**c, 'hidden_size': c['embedding_size']})


class AlbertAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.num_attention_heads = c['num_attention_heads']
        self.hidden_size = c['hidden_size']
        self.attention_head_size = c['hidden_size'] // c['num_attention_heads']
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query = nn.Linear(c['hidden_size'], self.all_head_size)
        self.key = nn.Linear(c['hidden_size'], self.all_head_size)
        self.value = nn.Linear(c['hidden_size'], self.all_head_size)
        self.attention_dropout = nn.Dropout(0.0)
        self.output_dropout = nn.Dropout(0.0)
        self.dense = nn.Linear(c['hidden_size'], c['hidden_size'])
        self.LayerNorm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        return x.view(new_x_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask):
        query_layer = self.transpose_for_scores(self.query(hidden_states))
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        attention_scores = attention_scores + attention_mask
        attention_probs = self.attention_dropout(nn.functional.softmax(attention_scores, dim=-1))
        context_layer = torch.matmul(attention_probs, value_layer)
        context_layer = context_layer.transpose(2, 1).flatten(2)
        projected_context_layer = self.output_dropout(self.dense(context_layer))
        return (self.LayerNorm(hidden_states + projected_context_layer),)


class AlbertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.full_layer_layer_norm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])
        self.attention = AlbertAttention(c)
        self.ffn = nn.Linear(c['hidden_size'], c['intermediate_size'])
        self.ffn_output = nn.Linear(c['intermediate_size'], c['hidden_size'])
        self.activation = NewGELUActivation()  # ACT2FN['gelu_new']
        self.dropout = nn.Dropout(0.0)

    def forward(self, hidden_states, attention_mask):
        attention_output = self.attention(hidden_states, attention_mask)
        ffn_output = self.ff_chunk(attention_output[0])  # apply_chunking_to_forward without chunks
        hidden_states = self.full_layer_layer_norm(ffn_output + attention_output[0])
        return (hidden_states,) + attention_output[1:]

    def ff_chunk(self, attention_output):
        return self.ffn_output(self.activation(self.ffn(attention_output)))


class AlbertLayerGroup(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.albert_layers = nn.ModuleList([AlbertLayer(c) for _ in range(c['inner_group_num'])])

    def forward(self, hidden_states, attention_mask):
        for albert_layer in self.albert_layers:
            hidden_states = albert_layer(hidden_states, attention_mask)[0]
        return (hidden_states,)


class AlbertTransformer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.embedding_hidden_mapping_in = nn.Linear(c['embedding_size'], c['hidden_size'])
        self.albert_layer_groups = nn.ModuleList([AlbertLayerGroup(c) for _ in range(c['num_hidden_groups'])])

    def forward(self, hidden_states, attention_mask):
        hidden_states = self.embedding_hidden_mapping_in(hidden_states)
        for i in range(self.config['num_hidden_layers']):
            # the index of the hidden group: every group's weights serve num_hidden_layers / num_hidden_groups layers
            group_idx = int(i / (self.config['num_hidden_layers'] / self.config['num_hidden_groups']))
            hidden_states = self.albert_layer_groups[group_idx](hidden_states, attention_mask)[0]
        return hidden_states


class AlbertModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = AlbertEmbeddings(c)
        self.encoder = AlbertTransformer(c)
        self.pooler = nn.Linear(c['hidden_size'], c['hidden_size'])
        self.pooler_activation = nn.Tanh()

    def forward(self, input_ids, attention_mask):
        sequence_output = self.encoder(self.embeddings(input_ids), extended_attention_mask(attention_mask))
        return sequence_output, self.pooler_activation(self.pooler(sequence_output[:, 0]))


# ---- BLOOM (modeling_bloom.py) -------------------------------------------------------------------

def build_alibi_tensor(attention_mask, num_heads, dtype):
    """ALiBi: a slope per head (powers of 2 ** -(8 / closest power of 2), the extra heads at odd
    powers of the next base) times each key's position, counted over the kept tokens."""
    batch_size, seq_length = attention_mask.shape
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    if closest_power_of_2 != num_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))), dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2, num_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)
    arange_tensor = ((attention_mask.cumsum(dim=-1) - 1) * attention_mask)[:, None, :]
    alibi = slopes[..., None] * arange_tensor
    return alibi.reshape(batch_size * num_heads, 1, seq_length).to(dtype)


def bloom_gelu_forward(x):
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


class BloomAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.hidden_size = c['hidden_size']
        self.num_heads = c['n_head']
        self.head_dim = self.hidden_size // self.num_heads
        self.inv_norm_factor = 1.0 / math.sqrt(self.head_dim)
        self.beta = 1.0
        self.query_key_value = nn.Linear(self.hidden_size, 3 * self.hidden_size, bias=True)
        self.dense = nn.Linear(self.hidden_size, self.hidden_size)
        self.attention_dropout = nn.Dropout(0.0)

    def _reshape(self, fused_qkv):
        batch_size, seq_length, three_times_hidden_size = fused_qkv.shape
        fused_qkv = fused_qkv.view(batch_size, seq_length, self.num_heads, 3, self.head_dim)
        return fused_qkv[..., 0, :].transpose(1, 2), fused_qkv[..., 1, :].transpose(1, 2), fused_qkv[..., 2, :].transpose(1, 2)

    def _merge_heads(self, x):
        batch_size_and_num_heads, seq_length, _ = x.shape
        batch_size = batch_size_and_num_heads // self.num_heads
        x = x.view(batch_size, self.num_heads, seq_length, self.head_dim)
        x = x.permute(0, 2, 1, 3)
        return x.reshape(batch_size, seq_length, self.num_heads * self.head_dim)

    def forward(self, hidden_states, residual, alibi, attention_mask):
        batch_size, q_length, _ = hidden_states.shape
        fused_qkv = self.query_key_value(hidden_states)
        query_layer, key_layer, value_layer = self._reshape(fused_qkv)
        query_layer = query_layer.reshape(batch_size * self.num_heads, -1, self.head_dim)
        key_layer = key_layer.reshape(batch_size * self.num_heads, -1, self.head_dim).transpose(-1, -2)
        value_layer = value_layer.reshape(batch_size * self.num_heads, -1, self.head_dim)
        attention_scores = alibi.baddbmm(batch1=query_layer, batch2=key_layer, beta=self.beta, alpha=self.inv_norm_factor)
        attn_weights = attention_scores.view(batch_size, self.num_heads, q_length, -1)
        causal_mask = attention_mask[:, :, :, :key_layer.shape[-1]]
        attn_weights = attn_weights + causal_mask
        attention_probs = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_layer.dtype)
        attention_probs = self.attention_dropout(attention_probs)
        attention_probs_reshaped = attention_probs.view(batch_size * self.num_heads, q_length, -1)
        context_layer = torch.bmm(attention_probs_reshaped, value_layer)
        context_layer = self._merge_heads(context_layer)
        output_tensor = self.dense(context_layer)
        return residual + F.dropout(output_tensor, p=0.0, training=self.training)  # dropout_add


class BloomMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense_h_to_4h = nn.Linear(c['hidden_size'], 4 * c['hidden_size'])
        self.dense_4h_to_h = nn.Linear(4 * c['hidden_size'], c['hidden_size'])

    def forward(self, hidden_states, residual):
        hidden_states = bloom_gelu_forward(self.dense_h_to_4h(hidden_states))  # BloomGelu in eval mode
        return residual + self.dense_4h_to_h(hidden_states)  # dropout_add


class BloomBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_epsilon'])
        self.self_attention = BloomAttention(c)
        self.post_attention_layernorm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_epsilon'])
        self.mlp = BloomMLP(c)
        self.apply_residual_connection_post_layernorm = c['apply_residual_connection_post_layernorm']

    def forward(self, hidden_states, alibi, attention_mask):
        layernorm_output = self.input_layernorm(hidden_states)
        residual = layernorm_output if self.apply_residual_connection_post_layernorm else hidden_states
        attention_output = self.self_attention(layernorm_output, residual, alibi, attention_mask)
        layernorm_output = self.post_attention_layernorm(attention_output)
        residual = layernorm_output if self.apply_residual_connection_post_layernorm else attention_output
        return self.mlp(layernorm_output, residual)


def add_padding_mask(causal_mask, attention_mask, batch_size, min_dtype):
    """The causal mask [q, k] expanded to [batch, 1, q, k] and copied, with min_dtype where the
    2-D attention_mask is 0 (the tail of transformers' _prepare_4d_causal_attention_mask_with_cache_position)."""
    causal_mask = causal_mask[None, None, :, :].expand(batch_size, 1, -1, -1)
    causal_mask = causal_mask.clone()  # copy to contiguous memory for in-place edit
    mask_length = attention_mask.shape[-1]
    padding_mask = causal_mask[:, :, :, :mask_length] + attention_mask[:, None, None, :]
    padding_mask = padding_mask == 0
    causal_mask[:, :, :, :mask_length] = causal_mask[:, :, :, :mask_length].masked_fill(padding_mask, min_dtype)
    return causal_mask


def prepare_4d_causal_attention_mask_with_cache_position(attention_mask, sequence_length, target_length, dtype,
                                                         cache_position, batch_size):
    """GPTJModel._prepare_4d_causal_attention_mask_with_cache_position (BLOOM's copy) of a 2-D mask."""
    min_dtype = torch.finfo(dtype).min
    causal_mask = torch.full((sequence_length, target_length), fill_value=min_dtype, dtype=dtype)
    if sequence_length != 1:
        causal_mask = torch.triu(causal_mask, diagonal=1)
    causal_mask *= torch.arange(target_length) > cache_position.reshape(-1, 1)
    return add_padding_mask(causal_mask, attention_mask, batch_size, min_dtype)


class BloomModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.num_heads = c['n_head']
        self.word_embeddings = nn.Embedding(c['vocab_size'], c['hidden_size'])
        self.word_embeddings_layernorm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_epsilon'])
        self.h = nn.ModuleList([BloomBlock(c) for _ in range(c['n_layer'])])
        self.ln_f = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_epsilon'])

    def forward(self, input_ids, attention_mask=None):
        inputs_embeds = self.word_embeddings(input_ids)
        batch_size, seq_length, _ = inputs_embeds.shape
        cache_position = torch.arange(0, seq_length)
        hidden_states = self.word_embeddings_layernorm(inputs_embeds)
        if attention_mask is None:
            attention_mask = torch.ones((batch_size, seq_length))
        alibi = build_alibi_tensor(attention_mask, self.num_heads, dtype=hidden_states.dtype)
        causal_mask = prepare_4d_causal_attention_mask_with_cache_position(
            attention_mask, seq_length, attention_mask.shape[-1], inputs_embeds.dtype, cache_position, batch_size)
        for block in self.h:
            hidden_states = block(hidden_states, alibi, causal_mask)
        return self.ln_f(hidden_states)


class BloomForCausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transformer = BloomModel(c)
        self.lm_head = nn.Linear(c['hidden_size'], c['vocab_size'], bias=False)
        self.lm_head.weight = self.transformer.word_embeddings.weight  # tie_word_embeddings

    def forward(self, input_ids, attention_mask=None):
        return self.lm_head(self.transformer(input_ids, attention_mask))


# ---- Wav2Vec2 (modeling_wav2vec2.py) -------------------------------------------------------------

class Wav2Vec2ConvLayer(nn.Module):
    """Wav2Vec2NoLayerNormConvLayer, or Wav2Vec2GroupNormConvLayer with norm='group' (one group per
    channel), or Wav2Vec2LayerNormConvLayer with norm='layer' (over the channels of each frame)."""

    def __init__(self, c, layer_id, norm):
        super().__init__()
        in_conv_dim = c['conv_dim'][layer_id - 1] if layer_id > 0 else 1
        out_conv_dim = c['conv_dim'][layer_id]
        self.conv = nn.Conv1d(in_conv_dim, out_conv_dim, kernel_size=c['conv_kernel'][layer_id],
                              stride=c['conv_stride'][layer_id], bias=c['conv_bias'])
        self.norm = norm
        if norm == 'group':
            self.layer_norm = nn.GroupNorm(num_groups=out_conv_dim, num_channels=out_conv_dim, affine=True)
        elif norm == 'layer':
            self.layer_norm = nn.LayerNorm(out_conv_dim, elementwise_affine=True)

    def forward(self, hidden_states):
        hidden_states = self.conv(hidden_states)
        if self.norm == 'group':
            hidden_states = self.layer_norm(hidden_states)
        elif self.norm == 'layer':
            hidden_states = self.layer_norm(hidden_states.transpose(-2, -1)).transpose(-2, -1)
        return F.gelu(hidden_states)


class Wav2Vec2FeatureEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        n = len(c['conv_dim'])
        if c['feat_extract_norm'] == 'group':
            layers = [Wav2Vec2ConvLayer(c, 0, 'group')] + [Wav2Vec2ConvLayer(c, i, None) for i in range(1, n)]
        else:
            layers = [Wav2Vec2ConvLayer(c, i, 'layer') for i in range(n)]
        self.conv_layers = nn.ModuleList(layers)

    def forward(self, input_values):
        hidden_states = input_values[:, None]
        for conv_layer in self.conv_layers:
            hidden_states = conv_layer(hidden_states)
        return hidden_states


class Wav2Vec2FeatureProjection(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer_norm = nn.LayerNorm(c['conv_dim'][-1], eps=c['layer_norm_eps'])
        self.projection = nn.Linear(c['conv_dim'][-1], c['hidden_size'])

    def forward(self, hidden_states):
        norm_hidden_states = self.layer_norm(hidden_states)
        return self.projection(norm_hidden_states), norm_hidden_states


class Wav2Vec2PositionalConvEmbedding(nn.Module):
    def __init__(self, c):
        super().__init__()
        k = c['num_conv_pos_embeddings']
        self.conv = nn.Conv1d(c['hidden_size'], c['hidden_size'], kernel_size=k, padding=k // 2,
                              groups=c['num_conv_pos_embedding_groups'])
        self.conv = nn.utils.weight_norm(self.conv, name='weight', dim=2)  # weight_g [1, 1, k], weight_v
        self.num_pad_remove = 1 if k % 2 == 0 else 0  # Wav2Vec2SamePadLayer

    def forward(self, hidden_states):
        hidden_states = hidden_states.transpose(1, 2)
        hidden_states = self.conv(hidden_states)
        if self.num_pad_remove > 0:
            hidden_states = hidden_states[:, :, :-self.num_pad_remove]
        hidden_states = F.gelu(hidden_states)
        return hidden_states.transpose(1, 2)


class Wav2Vec2Attention(WhisperAttention):
    """BartAttention as Wav2Vec2's encoder uses it (self-attention, no mask, no cache): Whisper's
    (upstream copies both from BART) with a bias on k_proj."""

    def __init__(self, embed_dim, num_heads):
        super().__init__({'d_model': embed_dim}, num_heads)
        self.k_proj = nn.Linear(embed_dim, embed_dim)


class Wav2Vec2FeedForward(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.intermediate_dense = nn.Linear(c['hidden_size'], c['intermediate_size'])
        self.output_dense = nn.Linear(c['intermediate_size'], c['hidden_size'])

    def forward(self, hidden_states):
        return self.output_dense(F.gelu(self.intermediate_dense(hidden_states)))


class Wav2Vec2EncoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = Wav2Vec2Attention(c['hidden_size'], c['num_attention_heads'])
        self.layer_norm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])
        self.feed_forward = Wav2Vec2FeedForward(c)
        self.final_layer_norm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])

    def forward(self, hidden_states):
        hidden_states = hidden_states + self.attention(hidden_states)
        hidden_states = self.layer_norm(hidden_states)
        hidden_states = hidden_states + self.feed_forward(hidden_states)
        return self.final_layer_norm(hidden_states)


class Wav2Vec2Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.pos_conv_embed = Wav2Vec2PositionalConvEmbedding(c)
        self.layer_norm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])
        self.layers = nn.ModuleList([Wav2Vec2EncoderLayer(c) for _ in range(c['num_hidden_layers'])])

    def forward(self, hidden_states):
        hidden_states = hidden_states + self.pos_conv_embed(hidden_states)
        hidden_states = self.layer_norm(hidden_states)
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return hidden_states


class Wav2Vec2Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.feature_extractor = Wav2Vec2FeatureEncoder(c)
        self.feature_projection = Wav2Vec2FeatureProjection(c)
        if c['mask_time_prob'] > 0.0 or c['mask_feature_prob'] > 0.0:
            self.masked_spec_embed = nn.Parameter(torch.Tensor(c['hidden_size']).uniform_())
        self.encoder = Wav2Vec2Encoder(c)

    def forward(self, input_values):
        extract_features = self.feature_extractor(input_values).transpose(1, 2)
        hidden_states, extract_features = self.feature_projection(extract_features)
        return self.encoder(hidden_states), extract_features


# ---- SegFormer (modeling_segformer.py) ----------------------------------------------------------

class SegformerOverlapPatchEmbeddings(nn.Module):
    def __init__(self, patch_size, stride, num_channels, hidden_size):
        super().__init__()
        self.proj = nn.Conv2d(num_channels, hidden_size, kernel_size=patch_size, stride=stride, padding=patch_size // 2)
        self.layer_norm = nn.LayerNorm(hidden_size)

    def forward(self, pixel_values):
        embeddings = self.proj(pixel_values)
        _, _, height, width = embeddings.shape
        embeddings = embeddings.flatten(2).transpose(1, 2)
        return self.layer_norm(embeddings), height, width


class SegformerEfficientSelfAttention(nn.Module):
    def __init__(self, hidden_size, num_attention_heads, sequence_reduction_ratio):
        super().__init__()
        self.num_attention_heads = num_attention_heads
        self.attention_head_size = hidden_size // num_attention_heads
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query = nn.Linear(hidden_size, self.all_head_size)
        self.key = nn.Linear(hidden_size, self.all_head_size)
        self.value = nn.Linear(hidden_size, self.all_head_size)
        self.sr_ratio = sequence_reduction_ratio
        if sequence_reduction_ratio > 1:
            self.sr = nn.Conv2d(hidden_size, hidden_size, kernel_size=sequence_reduction_ratio, stride=sequence_reduction_ratio)
            self.layer_norm = nn.LayerNorm(hidden_size)

    def transpose_for_scores(self, hidden_states):
        new_shape = hidden_states.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        return hidden_states.view(new_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states, height, width):
        query_layer = self.transpose_for_scores(self.query(hidden_states))
        if self.sr_ratio > 1:
            batch_size, seq_len, num_channels = hidden_states.shape
            hidden_states = hidden_states.permute(0, 2, 1).reshape(batch_size, num_channels, height, width)
            hidden_states = self.sr(hidden_states)
            hidden_states = hidden_states.reshape(batch_size, num_channels, -1).permute(0, 2, 1)
            hidden_states = self.layer_norm(hidden_states)
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        attention_probs = F.softmax(attention_scores, dim=-1)
        context_layer = torch.matmul(attention_probs, value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        return context_layer.view(context_layer.size()[:-2] + (self.all_head_size,))


class SegformerSelfOutput(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)

    def forward(self, hidden_states):
        return self.dense(hidden_states)


class SegformerAttention(nn.Module):
    def __init__(self, hidden_size, num_attention_heads, sequence_reduction_ratio):
        super().__init__()
        self.self = SegformerEfficientSelfAttention(hidden_size, num_attention_heads, sequence_reduction_ratio)
        self.output = SegformerSelfOutput(hidden_size)

    def forward(self, hidden_states, height, width):
        return self.output(self.self(hidden_states, height, width))


class SegformerDWConv(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 3, 1, 1, bias=True, groups=dim)

    def forward(self, hidden_states, height, width):
        batch_size, seq_len, num_channels = hidden_states.shape
        hidden_states = hidden_states.transpose(1, 2).view(batch_size, num_channels, height, width)
        hidden_states = self.dwconv(hidden_states)
        return hidden_states.flatten(2).transpose(1, 2)


class SegformerMixFFN(nn.Module):
    def __init__(self, in_features, hidden_features):
        super().__init__()
        self.dense1 = nn.Linear(in_features, hidden_features)
        self.dwconv = SegformerDWConv(hidden_features)
        self.dense2 = nn.Linear(hidden_features, in_features)

    def forward(self, hidden_states, height, width):
        hidden_states = self.dense1(hidden_states)
        hidden_states = self.dwconv(hidden_states, height, width)
        hidden_states = F.gelu(hidden_states)
        return self.dense2(hidden_states)


class SegformerLayer(nn.Module):
    def __init__(self, hidden_size, num_attention_heads, sequence_reduction_ratio, mlp_ratio):
        super().__init__()
        self.layer_norm_1 = nn.LayerNorm(hidden_size)
        self.attention = SegformerAttention(hidden_size, num_attention_heads, sequence_reduction_ratio)
        self.layer_norm_2 = nn.LayerNorm(hidden_size)
        self.mlp = SegformerMixFFN(hidden_size, int(hidden_size * mlp_ratio))

    def forward(self, hidden_states, height, width):
        hidden_states = self.attention(self.layer_norm_1(hidden_states), height, width) + hidden_states
        return self.mlp(self.layer_norm_2(hidden_states), height, width) + hidden_states


class SegformerEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        n = c['num_encoder_blocks']
        self.patch_embeddings = nn.ModuleList([
            SegformerOverlapPatchEmbeddings(c['patch_sizes'][i], c['strides'][i],
                                            c['num_channels'] if i == 0 else c['hidden_sizes'][i - 1], c['hidden_sizes'][i])
            for i in range(n)])
        self.block = nn.ModuleList([nn.ModuleList([
            SegformerLayer(c['hidden_sizes'][i], c['num_attention_heads'][i], c['sr_ratios'][i], c['mlp_ratios'][i])
            for _ in range(c['depths'][i])]) for i in range(n)])
        self.layer_norm = nn.ModuleList([nn.LayerNorm(c['hidden_sizes'][i]) for i in range(n)])

    def forward(self, pixel_values):
        """All hidden states (output_hidden_states=True, reshape_last_stage=True): each stage's [B, C, h, w]."""
        all_hidden_states = ()
        batch_size = pixel_values.shape[0]
        hidden_states = pixel_values
        for embedding_layer, block_layer, norm_layer in zip(self.patch_embeddings, self.block, self.layer_norm):
            hidden_states, height, width = embedding_layer(hidden_states)
            for blk in block_layer:
                hidden_states = blk(hidden_states, height, width)
            hidden_states = norm_layer(hidden_states)
            hidden_states = hidden_states.reshape(batch_size, height, width, -1).permute(0, 3, 1, 2).contiguous()
            all_hidden_states = all_hidden_states + (hidden_states,)
        return all_hidden_states


class SegformerModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.encoder = SegformerEncoder(c)


class SegformerMLP(nn.Module):
    def __init__(self, c, input_dim):
        super().__init__()
        self.proj = nn.Linear(input_dim, c['decoder_hidden_size'])

    def forward(self, hidden_states):
        return self.proj(hidden_states.flatten(2).transpose(1, 2))


class SegformerDecodeHead(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.linear_c = nn.ModuleList([SegformerMLP(c, c['hidden_sizes'][i]) for i in range(c['num_encoder_blocks'])])
        self.linear_fuse = nn.Conv2d(c['decoder_hidden_size'] * c['num_encoder_blocks'], c['decoder_hidden_size'],
                                     kernel_size=1, bias=False)
        self.batch_norm = nn.BatchNorm2d(c['decoder_hidden_size'])
        self.activation = nn.ReLU()
        self.classifier = nn.Conv2d(c['decoder_hidden_size'], c['num_labels'], kernel_size=1)

    def forward(self, encoder_hidden_states):
        batch_size = encoder_hidden_states[-1].shape[0]
        all_hidden_states = ()
        for encoder_hidden_state, mlp in zip(encoder_hidden_states, self.linear_c):
            height, width = encoder_hidden_state.shape[2], encoder_hidden_state.shape[3]
            encoder_hidden_state = mlp(encoder_hidden_state)
            encoder_hidden_state = encoder_hidden_state.permute(0, 2, 1)
            encoder_hidden_state = encoder_hidden_state.reshape(batch_size, -1, height, width)
            encoder_hidden_state = F.interpolate(encoder_hidden_state, size=encoder_hidden_states[0].size()[2:],
                                                 mode='bilinear', align_corners=False)
            all_hidden_states += (encoder_hidden_state,)
        hidden_states = self.linear_fuse(torch.cat(all_hidden_states[::-1], dim=1))
        hidden_states = self.activation(self.batch_norm(hidden_states))
        return self.classifier(hidden_states)


class SegformerForSemanticSegmentation(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.segformer = SegformerModel(c)
        self.decode_head = SegformerDecodeHead(c)

    def forward(self, pixel_values):
        return self.decode_head(self.segformer.encoder(pixel_values))


# ---- ViT (modeling_vit.py): the position table interpolated to the image's patch grid ------------

class ViTPatchEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.projection = nn.Conv2d(c['num_channels'], c['hidden_size'], kernel_size=c['patch_size'], stride=c['patch_size'])

    def forward(self, pixel_values):
        return self.projection(pixel_values).flatten(2).transpose(1, 2)


class ViTEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.cls_token = nn.Parameter(torch.randn(1, 1, c['hidden_size']))
        self.patch_embeddings = ViTPatchEmbeddings(c)
        num_patches = (c['image_size'] // c['patch_size']) ** 2
        self.position_embeddings = nn.Parameter(torch.randn(1, num_patches + 1, c['hidden_size']))
        self.patch_size = c['patch_size']

    def interpolate_pos_encoding(self, embeddings, height, width):
        num_patches = embeddings.shape[1] - 1
        num_positions = self.position_embeddings.shape[1] - 1
        if num_patches == num_positions and height == width:
            return self.position_embeddings
        class_pos_embed = self.position_embeddings[:, :1]
        patch_pos_embed = self.position_embeddings[:, 1:]
        dim = embeddings.shape[-1]
        new_height = height // self.patch_size
        new_width = width // self.patch_size
        sqrt_num_positions = int(num_positions ** 0.5)
        patch_pos_embed = patch_pos_embed.reshape(1, sqrt_num_positions, sqrt_num_positions, dim)
        patch_pos_embed = patch_pos_embed.permute(0, 3, 1, 2)
        patch_pos_embed = F.interpolate(patch_pos_embed, size=(new_height, new_width), mode='bicubic', align_corners=False)
        patch_pos_embed = patch_pos_embed.permute(0, 2, 3, 1).view(1, -1, dim)
        return torch.cat((class_pos_embed, patch_pos_embed), dim=1)

    def forward(self, pixel_values):
        """interpolate_pos_encoding=True."""
        batch_size, num_channels, height, width = pixel_values.shape
        embeddings = self.patch_embeddings(pixel_values)
        cls_tokens = self.cls_token.expand(batch_size, -1, -1)
        embeddings = torch.cat((cls_tokens, embeddings), dim=1)
        return embeddings + self.interpolate_pos_encoding(embeddings, height, width)


# ---- DINOv2 (modeling_dinov2.py) ------------------------------------------------------------------

class Dinov2Embeddings(ViTEmbeddings):
    """ViT's embeddings (the same interpolate_pos_encoding: bicubic to size=(height // p, width // p),
    in float32; the table itself at the native square grid) with DINOv2's mask_token, registered in
    upstream's order (cls_token, mask_token, position_embeddings, patch_embeddings)."""

    def __init__(self, c):
        nn.Module.__init__(self)
        self.cls_token = nn.Parameter(torch.randn(1, 1, c['hidden_size']))
        self.mask_token = nn.Parameter(torch.zeros(1, c['hidden_size']))
        self.patch_embeddings = ViTPatchEmbeddings(c)
        num_patches = (c['image_size'] // c['patch_size']) ** 2
        self.position_embeddings = nn.Parameter(torch.randn(1, num_patches + 1, c['hidden_size']))
        self.patch_size = c['patch_size']


class Dinov2SelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.num_attention_heads = c['num_attention_heads']
        self.attention_head_size = int(c['hidden_size'] / c['num_attention_heads'])
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.scaling = self.attention_head_size ** -0.5
        self.query = nn.Linear(c['hidden_size'], self.all_head_size, bias=c['qkv_bias'])
        self.key = nn.Linear(c['hidden_size'], self.all_head_size, bias=c['qkv_bias'])
        self.value = nn.Linear(c['hidden_size'], self.all_head_size, bias=c['qkv_bias'])

    def forward(self, hidden_states):
        new_shape = hidden_states.shape[0], -1, self.num_attention_heads, self.attention_head_size
        key = self.key(hidden_states).view(*new_shape).transpose(1, 2)
        value = self.value(hidden_states).view(*new_shape).transpose(1, 2)
        query = self.query(hidden_states).view(*new_shape).transpose(1, 2)
        attn_weights = torch.matmul(query, key.transpose(-1, -2)) * self.scaling  # eager_attention_forward
        attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
        context = torch.matmul(attn_weights, value).transpose(1, 2).contiguous()
        return context.reshape(context.size()[:-2] + (self.all_head_size,))


class Dinov2SelfOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c['hidden_size'], c['hidden_size'])

    def forward(self, hidden_states):
        return self.dense(hidden_states)


class Dinov2Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = Dinov2SelfAttention(c)
        self.output = Dinov2SelfOutput(c)

    def forward(self, hidden_states):
        return self.output(self.attention(hidden_states))


class Dinov2LayerScale(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.lambda1 = nn.Parameter(c['layerscale_value'] * torch.ones(c['hidden_size']))

    def forward(self, hidden_state):
        return hidden_state * self.lambda1


class Dinov2MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        hidden_features = int(c['hidden_size'] * c['mlp_ratio'])
        self.fc1 = nn.Linear(c['hidden_size'], hidden_features, bias=True)
        self.activation = nn.GELU()  # ACT2FN['gelu']: the erf form
        self.fc2 = nn.Linear(hidden_features, c['hidden_size'], bias=True)

    def forward(self, hidden_state):
        return self.fc2(self.activation(self.fc1(hidden_state)))


class Dinov2SwiGLUFFN(nn.Module):
    def __init__(self, c):
        super().__init__()
        hidden_features = int(c['hidden_size'] * c['mlp_ratio'])
        hidden_features = (int(hidden_features * 2 / 3) + 7) // 8 * 8
        self.weights_in = nn.Linear(c['hidden_size'], 2 * hidden_features, bias=True)
        self.weights_out = nn.Linear(hidden_features, c['hidden_size'], bias=True)

    def forward(self, hidden_state):
        x1, x2 = self.weights_in(hidden_state).chunk(2, dim=-1)
        return self.weights_out(F.silu(x1) * x2)


class Dinov2Layer(nn.Module):
    """Pre-norm attention and FFN, each output scaled per channel (layer scale) before its residual;
    drop_path is the identity at drop_path_rate 0 (and in eval)."""

    def __init__(self, c):
        super().__init__()
        self.norm1 = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])
        self.attention = Dinov2Attention(c)
        self.layer_scale1 = Dinov2LayerScale(c)
        self.norm2 = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])
        self.mlp = Dinov2SwiGLUFFN(c) if c['use_swiglu_ffn'] else Dinov2MLP(c)
        self.layer_scale2 = Dinov2LayerScale(c)

    def forward(self, hidden_states):
        hidden_states = self.layer_scale1(self.attention(self.norm1(hidden_states))) + hidden_states
        return self.layer_scale2(self.mlp(self.norm2(hidden_states))) + hidden_states


class Dinov2Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([Dinov2Layer(c) for _ in range(c['num_hidden_layers'])])

    def forward(self, hidden_states):
        for layer in self.layer:
            hidden_states = layer(hidden_states)
        return hidden_states


class Dinov2Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = Dinov2Embeddings(c)
        self.encoder = Dinov2Encoder(c)
        self.layernorm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])

    def forward(self, pixel_values):
        """(last_hidden_state, pooler_output: the CLS token's row)."""
        sequence_output = self.layernorm(self.encoder(self.embeddings(pixel_values)))
        return sequence_output, sequence_output[:, 0, :]


class Dinov2ForImageClassification(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dinov2 = Dinov2Model(c)
        self.classifier = nn.Linear(c['hidden_size'] * 2, c['num_labels'])

    def forward(self, pixel_values):
        sequence_output, _ = self.dinov2(pixel_values)
        cls_token = sequence_output[:, 0]
        patch_tokens = sequence_output[:, 1:]
        return self.classifier(torch.cat([cls_token, patch_tokens.mean(dim=1)], dim=1))


# ---- OPT (modeling_opt.py) -----------------------------------------------------------------------

class OPTLearnedPositionalEmbedding(nn.Embedding):
    """Learned positions with OPT's offset of 2: the table holds num_embeddings + 2 rows and a
    position p reads row p + 2 (padded tokens read row 1: their position is -1)."""

    def __init__(self, num_embeddings, embedding_dim):
        self.offset = 2
        super().__init__(num_embeddings + self.offset, embedding_dim)

    def forward(self, attention_mask, past_key_values_length=0, position_ids=None):
        if position_ids is None:
            position_ids = torch.cumsum(attention_mask, dim=1)
            position_ids = (position_ids * attention_mask - 1).long()
            position_ids = position_ids[:, past_key_values_length:]
        return super().forward(position_ids + self.offset)


class OPTAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_dim = c['hidden_size']
        self.num_heads = c['num_attention_heads']
        self.head_dim = self.embed_dim // self.num_heads
        self.scaling = self.head_dim ** -0.5
        bias = c['enable_bias']
        self.k_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=bias)
        self.v_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=bias)
        self.q_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=bias)
        self.out_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=bias)

    def forward(self, hidden_states, attention_mask):
        bsz, tgt_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states) * self.scaling
        query_states = query_states.view(bsz, -1, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(bsz, -1, self.num_heads, self.head_dim).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(bsz, -1, self.num_heads, self.head_dim).transpose(1, 2)
        # eager_attention_forward with scaling 1.0 (the query was scaled above)
        attn_weights = torch.matmul(query_states, key_states.transpose(-1, -2))
        attn_weights = attn_weights + attention_mask
        attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
        attn_output = torch.matmul(attn_weights, value_states).transpose(1, 2).contiguous()
        attn_output = attn_output.reshape(bsz, tgt_len, -1).contiguous()
        return self.out_proj(attn_output)


class OPTDecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_dim = c['hidden_size']
        self.self_attn = OPTAttention(c)
        self.do_layer_norm_before = c['do_layer_norm_before']
        self.activation_fn = nn.ReLU()
        self.self_attn_layer_norm = nn.LayerNorm(self.embed_dim)
        self.fc1 = nn.Linear(self.embed_dim, c['ffn_dim'], bias=c['enable_bias'])
        self.fc2 = nn.Linear(c['ffn_dim'], self.embed_dim, bias=c['enable_bias'])
        self.final_layer_norm = nn.LayerNorm(self.embed_dim)

    def forward(self, hidden_states, attention_mask):
        residual = hidden_states
        if self.do_layer_norm_before:
            hidden_states = self.self_attn_layer_norm(hidden_states)
        hidden_states = residual + self.self_attn(hidden_states, attention_mask)
        if not self.do_layer_norm_before:
            hidden_states = self.self_attn_layer_norm(hidden_states)
        hidden_states_shape = hidden_states.shape
        hidden_states = hidden_states.reshape(-1, hidden_states.size(-1))
        residual = hidden_states
        if self.do_layer_norm_before:
            hidden_states = self.final_layer_norm(hidden_states)
        hidden_states = self.fc2(self.activation_fn(self.fc1(hidden_states)))
        hidden_states = (residual + hidden_states).view(hidden_states_shape)
        if not self.do_layer_norm_before:
            hidden_states = self.final_layer_norm(hidden_states)
        return hidden_states


class OPTDecoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c['vocab_size'], c['word_embed_proj_dim'], c['pad_token_id'])
        self.embed_positions = OPTLearnedPositionalEmbedding(c['max_position_embeddings'], c['hidden_size'])
        differ = c['word_embed_proj_dim'] != c['hidden_size']
        self.project_out = nn.Linear(c['hidden_size'], c['word_embed_proj_dim'], bias=False) if differ else None
        self.project_in = nn.Linear(c['word_embed_proj_dim'], c['hidden_size'], bias=False) if differ else None
        self.final_layer_norm = nn.LayerNorm(c['hidden_size']) if c['do_layer_norm_before'] and not c['_remove_final_layer_norm'] else None
        self.layers = nn.ModuleList([OPTDecoderLayer(c) for _ in range(c['num_hidden_layers'])])

    def forward(self, input_ids, attention_mask=None):
        input_ids = input_ids.view(-1, input_ids.shape[-1])
        inputs_embeds = self.embed_tokens(input_ids)
        batch_size, seq_length = inputs_embeds.shape[:2]
        cache_position = torch.arange(0, seq_length)
        if attention_mask is None:
            attention_mask = torch.ones(batch_size, seq_length)
        causal_mask = prepare_4d_causal_attention_mask_with_cache_position(
            attention_mask, seq_length, attention_mask.shape[-1], inputs_embeds.dtype, cache_position, batch_size)
        position_ids = torch.cumsum(attention_mask, dim=1)
        position_ids = (position_ids * attention_mask - 1).long()
        pos_embeds = self.embed_positions(attention_mask, 0, position_ids=position_ids)
        if self.project_in is not None:
            inputs_embeds = self.project_in(inputs_embeds)
        hidden_states = inputs_embeds + pos_embeds
        for layer in self.layers:
            hidden_states = layer(hidden_states, causal_mask)
        if self.final_layer_norm is not None:
            hidden_states = self.final_layer_norm(hidden_states)
        if self.project_out is not None:
            hidden_states = self.project_out(hidden_states)
        return hidden_states


class OPTModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.decoder = OPTDecoder(c)

    def forward(self, input_ids, attention_mask=None):
        return self.decoder(input_ids, attention_mask)


class OPTForCausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.model = OPTModel(c)
        self.lm_head = nn.Linear(c['word_embed_proj_dim'], c['vocab_size'], bias=False)
        self.lm_head.weight = self.model.decoder.embed_tokens.weight  # tied

    def forward(self, input_ids, attention_mask=None):
        return self.lm_head(self.model(input_ids, attention_mask)).contiguous()


# ---- GPT-Neo (modeling_gpt_neo.py) ---------------------------------------------------------------

class GPTNeoSelfAttention(nn.Module):
    def __init__(self, c, attention_type):
        super().__init__()
        max_positions = c['max_position_embeddings']
        bias = torch.tril(torch.ones((max_positions, max_positions), dtype=bool)).view(1, 1, max_positions, max_positions)
        if attention_type == 'local':
            # each token sees only the previous window_size tokens
            bias = torch.bitwise_xor(bias, torch.tril(bias, -c['window_size']))
        self.register_buffer('bias', bias, persistent=False)
        self.register_buffer('masked_bias', torch.tensor(-1e9), persistent=False)
        self.embed_dim = c['hidden_size']
        self.num_heads = c['num_heads']
        self.head_dim = self.embed_dim // self.num_heads
        self.k_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=False)
        self.v_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=False)
        self.q_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=False)
        self.out_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=True)

    def _split_heads(self, tensor):
        return tensor.view(tensor.size()[:-1] + (self.num_heads, self.head_dim)).permute(0, 2, 1, 3)

    def _merge_heads(self, tensor):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        return tensor.view(tensor.size()[:-2] + (self.num_heads * self.head_dim,))

    def _attn(self, query, key, value, attention_mask):
        attn_weights = torch.matmul(query.to(torch.float32), key.to(torch.float32).transpose(-1, -2))  # not scaled
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length:key_length, :key_length]
        mask_value = torch.tensor(torch.finfo(attn_weights.dtype).min, dtype=attn_weights.dtype)
        attn_weights = torch.where(causal_mask, attn_weights, mask_value)
        attn_weights = attn_weights + attention_mask[:, :, :, :key.shape[-2]]
        attn_weights = F.softmax(attn_weights, dim=-1).to(value.dtype)
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states, attention_mask):
        query = self._split_heads(self.q_proj(hidden_states))
        key = self._split_heads(self.k_proj(hidden_states))
        value = self._split_heads(self.v_proj(hidden_states))
        attn_output = self._merge_heads(self._attn(query, key, value, attention_mask))
        return self.out_proj(attn_output)


class GPTNeoAttention(nn.Module):
    def __init__(self, c, layer_id):
        super().__init__()
        self.attention_type = c['attention_layers'][layer_id]
        self.attention = GPTNeoSelfAttention(c, self.attention_type)

    def forward(self, hidden_states, attention_mask):
        return self.attention(hidden_states, attention_mask)


class GPTNeoMLP(nn.Module):
    def __init__(self, intermediate_size, c):
        super().__init__()
        self.c_fc = nn.Linear(c['hidden_size'], intermediate_size)
        self.c_proj = nn.Linear(intermediate_size, c['hidden_size'])
        self.act = NewGELUActivation()  # ACT2FN['gelu_new']

    def forward(self, hidden_states):
        return self.c_proj(self.act(self.c_fc(hidden_states)))


class GPTNeoBlock(nn.Module):
    def __init__(self, c, layer_id):
        super().__init__()
        hidden_size = c['hidden_size']
        inner_dim = c['intermediate_size'] if c['intermediate_size'] is not None else 4 * hidden_size
        self.ln_1 = nn.LayerNorm(hidden_size, eps=c['layer_norm_epsilon'])
        self.attn = GPTNeoAttention(c, layer_id)
        self.ln_2 = nn.LayerNorm(hidden_size, eps=c['layer_norm_epsilon'])
        self.mlp = GPTNeoMLP(inner_dim, c)

    def forward(self, hidden_states, attention_mask):
        hidden_states = self.attn(self.ln_1(hidden_states), attention_mask) + hidden_states
        return hidden_states + self.mlp(self.ln_2(hidden_states))


def gpt_neo_attention_layers(attention_types):
    """GPTNeoConfig.expand_attention_types_params: [[['global', 'local'], 2]] -> global, local, global, local."""
    return [t for types, n in attention_types for _ in range(n) for t in types]


class GPTNeoModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        c = {**c, 'attention_layers': gpt_neo_attention_layers(c['attention_types'])}
        self.wte = nn.Embedding(c['vocab_size'], c['hidden_size'])
        self.wpe = nn.Embedding(c['max_position_embeddings'], c['hidden_size'])
        self.h = nn.ModuleList([GPTNeoBlock(c, i) for i in range(c['num_layers'])])
        self.ln_f = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_epsilon'])

    def forward(self, input_ids, attention_mask=None):
        inputs_embeds = self.wte(input_ids)
        batch_size, seq_length = inputs_embeds.shape[:2]
        cache_position = torch.arange(0, seq_length)
        position_ids = cache_position.unsqueeze(0)
        if attention_mask is None:
            attention_mask = torch.ones(batch_size, seq_length)
        causal_mask = prepare_4d_causal_attention_mask_with_cache_position(
            attention_mask, seq_length, attention_mask.shape[-1], inputs_embeds.dtype, cache_position, batch_size)
        hidden_states = inputs_embeds + self.wpe(position_ids)
        for block in self.h:
            hidden_states = block(hidden_states, causal_mask)
        return self.ln_f(hidden_states)


class GPTNeoForCausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transformer = GPTNeoModel(c)
        self.lm_head = nn.Linear(c['hidden_size'], c['vocab_size'], bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied

    def forward(self, input_ids, attention_mask=None):
        return self.lm_head(self.transformer(input_ids, attention_mask))


# ---- DeBERTa-v2 (modeling_deberta_v2.py) ---------------------------------------------------------

def make_log_bucket_position(relative_pos, bucket_size, max_position):
    sign = torch.sign(relative_pos)
    mid = bucket_size // 2
    abs_pos = torch.where((relative_pos < mid) & (relative_pos > -mid), torch.tensor(mid - 1).type_as(relative_pos),
                          torch.abs(relative_pos))
    log_pos = torch.ceil(torch.log(abs_pos / mid) / torch.log(torch.tensor((max_position - 1) / mid)) * (mid - 1)) + mid
    return torch.where(abs_pos <= mid, relative_pos.type_as(log_pos), log_pos * sign)


def build_relative_position(query_size, key_size, bucket_size=-1, max_position=-1):
    q_ids = torch.arange(0, query_size)
    k_ids = torch.arange(0, key_size)
    rel_pos_ids = q_ids[:, None] - k_ids[None, :]
    if bucket_size > 0 and max_position > 0:
        rel_pos_ids = make_log_bucket_position(rel_pos_ids, bucket_size, max_position)
    rel_pos_ids = rel_pos_ids.to(torch.long)
    rel_pos_ids = rel_pos_ids[:query_size, :]
    return rel_pos_ids.unsqueeze(0)


def x_softmax(input, mask, dim):
    """XSoftmax.forward: softmax over the kept positions, masked positions 0."""
    rmask = ~(mask.to(torch.bool))
    output = input.masked_fill(rmask, torch.tensor(torch.finfo(input.dtype).min))
    output = torch.softmax(output, dim)
    output.masked_fill_(rmask, 0)
    return output


class DisentangledSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.num_attention_heads = c['num_attention_heads']
        self.attention_head_size = c['hidden_size'] // c['num_attention_heads']
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query_proj = nn.Linear(c['hidden_size'], self.all_head_size, bias=True)
        self.key_proj = nn.Linear(c['hidden_size'], self.all_head_size, bias=True)
        self.value_proj = nn.Linear(c['hidden_size'], self.all_head_size, bias=True)
        self.share_att_key = c['share_att_key']
        self.pos_att_type = c['pos_att_type']
        self.relative_attention = c['relative_attention']
        if self.relative_attention:
            self.position_buckets = c['position_buckets']
            self.max_relative_positions = c['max_relative_positions']
            if self.max_relative_positions < 1:
                self.max_relative_positions = c['max_position_embeddings']
            self.pos_ebd_size = self.position_buckets if self.position_buckets > 0 else self.max_relative_positions
            if not self.share_att_key:
                if 'c2p' in self.pos_att_type:
                    self.pos_key_proj = nn.Linear(c['hidden_size'], self.all_head_size, bias=True)
                if 'p2c' in self.pos_att_type:
                    self.pos_query_proj = nn.Linear(c['hidden_size'], self.all_head_size)

    def transpose_for_scores(self, x, attention_heads):
        new_x_shape = x.size()[:-1] + (attention_heads, -1)
        x = x.view(new_x_shape)
        return x.permute(0, 2, 1, 3).contiguous().view(-1, x.size(1), x.size(-1))

    def forward(self, hidden_states, attention_mask, relative_pos, rel_embeddings):
        query_layer = self.transpose_for_scores(self.query_proj(hidden_states), self.num_attention_heads)
        key_layer = self.transpose_for_scores(self.key_proj(hidden_states), self.num_attention_heads)
        value_layer = self.transpose_for_scores(self.value_proj(hidden_states), self.num_attention_heads)
        scale_factor = 1 + ('c2p' in self.pos_att_type) + ('p2c' in self.pos_att_type)
        scale = torch.sqrt(torch.tensor(query_layer.size(-1), dtype=torch.float) * scale_factor)
        attention_scores = torch.bmm(query_layer, key_layer.transpose(-1, -2) / scale.to(dtype=query_layer.dtype))
        if self.relative_attention:
            attention_scores = attention_scores + self.disentangled_attention_bias(
                query_layer, key_layer, relative_pos, rel_embeddings, scale_factor)
        attention_scores = attention_scores.view(-1, self.num_attention_heads, attention_scores.size(-2), attention_scores.size(-1))
        attention_probs = x_softmax(attention_scores, attention_mask, -1)
        context_layer = torch.bmm(attention_probs.view(-1, attention_probs.size(-2), attention_probs.size(-1)), value_layer)
        context_layer = (context_layer.view(-1, self.num_attention_heads, context_layer.size(-2), context_layer.size(-1))
                         .permute(0, 2, 1, 3).contiguous())
        return context_layer.view(context_layer.size()[:-2] + (-1,))

    def disentangled_attention_bias(self, query_layer, key_layer, relative_pos, rel_embeddings, scale_factor):
        relative_pos = relative_pos.unsqueeze(1)  # [1, q, k] -> bsz x height x query x key
        att_span = self.pos_ebd_size
        relative_pos = relative_pos.long()
        rel_embeddings = rel_embeddings[0:att_span * 2, :].unsqueeze(0)
        repeats = query_layer.size(0) // self.num_attention_heads
        if self.share_att_key:
            pos_query_layer = self.transpose_for_scores(self.query_proj(rel_embeddings), self.num_attention_heads).repeat(repeats, 1, 1)
            pos_key_layer = self.transpose_for_scores(self.key_proj(rel_embeddings), self.num_attention_heads).repeat(repeats, 1, 1)
        else:
            if 'c2p' in self.pos_att_type:
                pos_key_layer = self.transpose_for_scores(self.pos_key_proj(rel_embeddings), self.num_attention_heads).repeat(repeats, 1, 1)
            if 'p2c' in self.pos_att_type:
                pos_query_layer = self.transpose_for_scores(self.pos_query_proj(rel_embeddings), self.num_attention_heads).repeat(repeats, 1, 1)
        score = 0
        if 'c2p' in self.pos_att_type:
            scale = torch.sqrt(torch.tensor(pos_key_layer.size(-1), dtype=torch.float) * scale_factor)
            c2p_att = torch.bmm(query_layer, pos_key_layer.transpose(-1, -2))
            c2p_pos = torch.clamp(relative_pos + att_span, 0, att_span * 2 - 1)
            c2p_att = torch.gather(c2p_att, dim=-1,
                                   index=c2p_pos.squeeze(0).expand([query_layer.size(0), query_layer.size(1), relative_pos.size(-1)]))
            score += c2p_att / scale.to(dtype=c2p_att.dtype)
        if 'p2c' in self.pos_att_type:
            scale = torch.sqrt(torch.tensor(pos_query_layer.size(-1), dtype=torch.float) * scale_factor)
            r_pos = relative_pos  # query and key lengths are equal (self-attention)
            p2c_pos = torch.clamp(-r_pos + att_span, 0, att_span * 2 - 1)
            p2c_att = torch.bmm(key_layer, pos_query_layer.transpose(-1, -2))
            p2c_att = torch.gather(p2c_att, dim=-1,
                                   index=p2c_pos.squeeze(0).expand([query_layer.size(0), key_layer.size(-2), key_layer.size(-2)])).transpose(-1, -2)
            score += p2c_att / scale.to(dtype=p2c_att.dtype)
        return score


class DebertaV2SelfOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c['hidden_size'], c['hidden_size'])
        self.LayerNorm = nn.LayerNorm(c['hidden_size'], c['layer_norm_eps'])

    def forward(self, hidden_states, input_tensor):
        return self.LayerNorm(self.dense(hidden_states) + input_tensor)


class DebertaV2Output(DebertaV2SelfOutput):
    def __init__(self, c):
        super().__init__(c)
        self.dense = nn.Linear(c['intermediate_size'], c['hidden_size'])


class DebertaV2Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = DisentangledSelfAttention(c)
        self.output = DebertaV2SelfOutput(c)

    def forward(self, hidden_states, attention_mask, relative_pos, rel_embeddings):
        return self.output(self.self(hidden_states, attention_mask, relative_pos, rel_embeddings), hidden_states)


class DebertaV2Intermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c['hidden_size'], c['intermediate_size'])

    def forward(self, hidden_states):
        return F.gelu(self.dense(hidden_states))


class DebertaV2Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = DebertaV2Attention(c)
        self.intermediate = DebertaV2Intermediate(c)
        self.output = DebertaV2Output(c)

    def forward(self, hidden_states, attention_mask, relative_pos, rel_embeddings):
        attention_output = self.attention(hidden_states, attention_mask, relative_pos, rel_embeddings)
        return self.output(self.intermediate(attention_output), attention_output)


class DebertaV2Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([DebertaV2Layer(c) for _ in range(c['num_hidden_layers'])])
        self.relative_attention = c['relative_attention']
        if self.relative_attention:
            self.max_relative_positions = c['max_relative_positions']
            if self.max_relative_positions < 1:
                self.max_relative_positions = c['max_position_embeddings']
            self.position_buckets = c['position_buckets']
            pos_ebd_size = self.position_buckets * 2 if self.position_buckets > 0 else self.max_relative_positions * 2
            self.rel_embeddings = nn.Embedding(pos_ebd_size, c['hidden_size'])
        self.norm_rel_ebd = [x.strip() for x in c['norm_rel_ebd'].lower().split('|')]
        if 'layer_norm' in self.norm_rel_ebd:
            self.LayerNorm = nn.LayerNorm(c['hidden_size'], c['layer_norm_eps'], elementwise_affine=True)

    def get_rel_embedding(self):
        rel_embeddings = self.rel_embeddings.weight if self.relative_attention else None
        if rel_embeddings is not None and 'layer_norm' in self.norm_rel_ebd:
            rel_embeddings = self.LayerNorm(rel_embeddings)
        return rel_embeddings

    def forward(self, hidden_states, attention_mask):
        extended_attention_mask = attention_mask.unsqueeze(1).unsqueeze(2)
        attention_mask = extended_attention_mask * extended_attention_mask.squeeze(-2).unsqueeze(-1)
        relative_pos = None
        if self.relative_attention:
            relative_pos = build_relative_position(hidden_states.size(-2), hidden_states.size(-2),
                                                   bucket_size=self.position_buckets, max_position=self.max_relative_positions)
        rel_embeddings = self.get_rel_embedding()
        for layer_module in self.layer:
            hidden_states = layer_module(hidden_states, attention_mask, relative_pos, rel_embeddings)
        return hidden_states


class DebertaV2Embeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embedding_size = c.get('embedding_size', c['hidden_size'])
        self.word_embeddings = nn.Embedding(c['vocab_size'], self.embedding_size, padding_idx=c['pad_token_id'])
        self.position_biased_input = c['position_biased_input']
        self.position_embeddings = nn.Embedding(c['max_position_embeddings'], self.embedding_size) if self.position_biased_input else None
        self.type_vocab_size = c['type_vocab_size']
        if self.type_vocab_size > 0:
            self.token_type_embeddings = nn.Embedding(c['type_vocab_size'], self.embedding_size)
        self.LayerNorm = nn.LayerNorm(c['hidden_size'], c['layer_norm_eps'])
        self.register_buffer('position_ids', torch.arange(c['max_position_embeddings']).expand((1, -1)), persistent=False)

    def forward(self, input_ids, mask):
        seq_length = input_ids.size(1)
        position_ids = self.position_ids[:, :seq_length]
        token_type_ids = torch.zeros(input_ids.size(), dtype=torch.long)
        embeddings = self.word_embeddings(input_ids)
        if self.position_embeddings is not None:
            embeddings += self.position_embeddings(position_ids.long())
        if self.type_vocab_size > 0:
            embeddings += self.token_type_embeddings(token_type_ids)
        embeddings = self.LayerNorm(embeddings)
        return embeddings * mask.unsqueeze(2).to(embeddings.dtype)


class DebertaV2Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = DebertaV2Embeddings(c)
        self.encoder = DebertaV2Encoder(c)

    def forward(self, input_ids, attention_mask=None):
        if attention_mask is None:
            attention_mask = torch.ones(input_ids.size())
        return self.encoder(self.embeddings(input_ids, attention_mask), attention_mask)


# ---- Longformer (modeling_longformer.py) ---------------------------------------------------------

class LongformerSelfAttention(nn.Module):
    """Sliding-window attention over chunks made with as_strided (upstream's own code path), and
    global attention for the tokens whose mask is positive (nonzero indices, a max over the batch)."""

    def __init__(self, c, layer_id):
        super().__init__()
        self.num_heads = c['num_attention_heads']
        self.head_dim = c['hidden_size'] // self.num_heads
        self.embed_dim = c['hidden_size']
        for name in ('query', 'key', 'value', 'query_global', 'key_global', 'value_global'):
            setattr(self, name, nn.Linear(c['hidden_size'], self.embed_dim))
        attention_window = c['attention_window'][layer_id]
        assert attention_window % 2 == 0 and attention_window > 0
        self.one_sided_attn_window_size = attention_window // 2

    def forward(self, hidden_states, attention_mask, is_index_masked, is_index_global_attn, is_global_attn):
        hidden_states = hidden_states.transpose(0, 1)
        query_vectors = self.query(hidden_states)
        key_vectors = self.key(hidden_states)
        value_vectors = self.value(hidden_states)
        seq_len, batch_size, embed_dim = hidden_states.size()
        query_vectors /= math.sqrt(self.head_dim)
        query_vectors = query_vectors.view(seq_len, batch_size, self.num_heads, self.head_dim).transpose(0, 1)
        key_vectors = key_vectors.view(seq_len, batch_size, self.num_heads, self.head_dim).transpose(0, 1)
        attn_scores = self._sliding_chunks_query_key_matmul(query_vectors, key_vectors, self.one_sided_attn_window_size)
        remove_from_windowed_attention_mask = (attention_mask != 0)[:, :, None, None]
        float_mask = remove_from_windowed_attention_mask.type_as(query_vectors).masked_fill(
            remove_from_windowed_attention_mask, torch.finfo(query_vectors.dtype).min)
        diagonal_mask = self._sliding_chunks_query_key_matmul(
            float_mask.new_ones(size=float_mask.size()), float_mask, self.one_sided_attn_window_size)
        attn_scores += diagonal_mask
        if is_global_attn:
            (max_num_global_attn_indices, is_index_global_attn_nonzero, is_local_index_global_attn_nonzero,
             is_local_index_no_global_attn_nonzero) = self._get_global_attn_indices(is_index_global_attn)
            global_key_attn_scores = self._concat_with_global_key_attn_probs(
                key_vectors, query_vectors, max_num_global_attn_indices, is_index_global_attn_nonzero,
                is_local_index_global_attn_nonzero, is_local_index_no_global_attn_nonzero)
            attn_scores = torch.cat((global_key_attn_scores, attn_scores), dim=-1)
        attn_probs = nn.functional.softmax(attn_scores, dim=-1, dtype=torch.float32)
        # softmax gives NaN where every position is masked: those rows become 0
        attn_probs = torch.masked_fill(attn_probs, is_index_masked[:, :, None, None], 0.0)
        attn_probs = attn_probs.type_as(attn_scores)
        value_vectors = value_vectors.view(seq_len, batch_size, self.num_heads, self.head_dim).transpose(0, 1)
        if is_global_attn:
            attn_output = self._compute_attn_output_with_global_indices(
                value_vectors, attn_probs, max_num_global_attn_indices, is_index_global_attn_nonzero,
                is_local_index_global_attn_nonzero)
        else:
            attn_output = self._sliding_chunks_matmul_attn_probs_value(attn_probs, value_vectors, self.one_sided_attn_window_size)
        attn_output = attn_output.transpose(0, 1).reshape(seq_len, batch_size, embed_dim).contiguous()
        if is_global_attn:
            global_attn_output = self._compute_global_attn_output_from_hidden(
                hidden_states, max_num_global_attn_indices, is_local_index_global_attn_nonzero,
                is_index_global_attn_nonzero, is_local_index_no_global_attn_nonzero, is_index_masked)
            nonzero_global_attn_output = global_attn_output[
                is_local_index_global_attn_nonzero[0], :, is_local_index_global_attn_nonzero[1]]
            attn_output[is_index_global_attn_nonzero[::-1]] = nonzero_global_attn_output.view(
                len(is_local_index_global_attn_nonzero[0]), -1)
        return attn_output.transpose(0, 1)

    @staticmethod
    def _pad_and_transpose_last_two_dims(hidden_states_padded, padding):
        """pads rows and then flips rows and columns"""
        hidden_states_padded = nn.functional.pad(hidden_states_padded, padding)
        return hidden_states_padded.view(*hidden_states_padded.size()[:-2], hidden_states_padded.size(-1),
                                         hidden_states_padded.size(-2))

    @staticmethod
    def _pad_and_diagonalize(chunked_hidden_states):
        """shift every row 1 step right, converting columns into diagonals"""
        total_num_heads, num_chunks, window_overlap, hidden_dim = chunked_hidden_states.size()
        chunked_hidden_states = nn.functional.pad(chunked_hidden_states, (0, window_overlap + 1))
        chunked_hidden_states = chunked_hidden_states.view(total_num_heads, num_chunks, -1)
        chunked_hidden_states = chunked_hidden_states[:, :, :-window_overlap]
        chunked_hidden_states = chunked_hidden_states.view(total_num_heads, num_chunks, window_overlap,
                                                           window_overlap + hidden_dim)
        return chunked_hidden_states[:, :, :, :-1]

    @staticmethod
    def _chunk(hidden_states, window_overlap):
        """overlapping chunks of size 2w, overlap w: the as_strided view upstream makes"""
        hidden_states = hidden_states.view(hidden_states.size(0), hidden_states.size(1) // (window_overlap * 2),
                                           window_overlap * 2, hidden_states.size(2))
        chunk_size = list(hidden_states.size())
        chunk_size[1] = chunk_size[1] * 2 - 1
        chunk_stride = list(hidden_states.stride())
        chunk_stride[1] = chunk_stride[1] // 2
        return hidden_states.as_strided(size=chunk_size, stride=chunk_stride)

    @staticmethod
    def _mask_invalid_locations(input_tensor, affected_seq_len):
        beginning_mask_2d = input_tensor.new_ones(affected_seq_len, affected_seq_len + 1).tril().flip(dims=[0])
        beginning_mask = beginning_mask_2d[None, :, None, :]
        ending_mask = beginning_mask.flip(dims=(1, 3))
        beginning_input = input_tensor[:, :affected_seq_len, :, : affected_seq_len + 1]
        beginning_mask = beginning_mask.expand(beginning_input.size())
        beginning_input.masked_fill_(beginning_mask == 1, -float('inf'))
        ending_input = input_tensor[:, -affected_seq_len:, :, -(affected_seq_len + 1):]
        ending_mask = ending_mask.expand(ending_input.size())
        ending_input.masked_fill_(ending_mask == 1, -float('inf'))

    def _sliding_chunks_query_key_matmul(self, query, key, window_overlap):
        batch_size, seq_len, num_heads, head_dim = query.size()
        assert seq_len % (window_overlap * 2) == 0
        chunks_count = seq_len // window_overlap - 1
        query = query.transpose(1, 2).reshape(batch_size * num_heads, seq_len, head_dim)
        key = key.transpose(1, 2).reshape(batch_size * num_heads, seq_len, head_dim)
        query = self._chunk(query, window_overlap)
        key = self._chunk(key, window_overlap)
        diagonal_chunked_attention_scores = torch.einsum('bcxd,bcyd->bcxy', (query, key))
        diagonal_chunked_attention_scores = self._pad_and_transpose_last_two_dims(
            diagonal_chunked_attention_scores, padding=(0, 0, 0, 1))
        diagonal_attention_scores = diagonal_chunked_attention_scores.new_empty(
            (batch_size * num_heads, chunks_count + 1, window_overlap, window_overlap * 2 + 1))
        diagonal_attention_scores[:, :-1, :, window_overlap:] = diagonal_chunked_attention_scores[
            :, :, :window_overlap, : window_overlap + 1]
        diagonal_attention_scores[:, -1, :, window_overlap:] = diagonal_chunked_attention_scores[
            :, -1, window_overlap:, : window_overlap + 1]
        diagonal_attention_scores[:, 1:, :, :window_overlap] = diagonal_chunked_attention_scores[
            :, :, -(window_overlap + 1): -1, window_overlap + 1:]
        diagonal_attention_scores[:, 0, 1:window_overlap, 1:window_overlap] = diagonal_chunked_attention_scores[
            :, 0, : window_overlap - 1, 1 - window_overlap:]
        diagonal_attention_scores = diagonal_attention_scores.view(
            batch_size, num_heads, seq_len, 2 * window_overlap + 1).transpose(2, 1)
        self._mask_invalid_locations(diagonal_attention_scores, window_overlap)
        return diagonal_attention_scores

    def _sliding_chunks_matmul_attn_probs_value(self, attn_probs, value, window_overlap):
        batch_size, seq_len, num_heads, head_dim = value.size()
        assert seq_len % (window_overlap * 2) == 0
        chunks_count = seq_len // window_overlap - 1
        chunked_attn_probs = attn_probs.transpose(1, 2).reshape(
            batch_size * num_heads, seq_len // window_overlap, window_overlap, 2 * window_overlap + 1)
        value = value.transpose(1, 2).reshape(batch_size * num_heads, seq_len, head_dim)
        padded_value = nn.functional.pad(value, (0, 0, window_overlap, window_overlap), value=-1)
        chunked_value_size = (batch_size * num_heads, chunks_count + 1, 3 * window_overlap, head_dim)
        chunked_value_stride = padded_value.stride()
        chunked_value_stride = (chunked_value_stride[0], window_overlap * chunked_value_stride[1],
                                chunked_value_stride[1], chunked_value_stride[2])
        chunked_value = padded_value.as_strided(size=chunked_value_size, stride=chunked_value_stride)
        chunked_attn_probs = self._pad_and_diagonalize(chunked_attn_probs)
        context = torch.einsum('bcwd,bcdh->bcwh', (chunked_attn_probs, chunked_value))
        return context.view(batch_size, num_heads, seq_len, head_dim).transpose(1, 2)

    @staticmethod
    def _get_global_attn_indices(is_index_global_attn):
        num_global_attn_indices = is_index_global_attn.long().sum(dim=1)
        max_num_global_attn_indices = num_global_attn_indices.max()
        is_index_global_attn_nonzero = is_index_global_attn.nonzero(as_tuple=True)
        is_local_index_global_attn = torch.arange(max_num_global_attn_indices) < num_global_attn_indices.unsqueeze(dim=-1)
        is_local_index_global_attn_nonzero = is_local_index_global_attn.nonzero(as_tuple=True)
        is_local_index_no_global_attn_nonzero = (is_local_index_global_attn == 0).nonzero(as_tuple=True)
        return (max_num_global_attn_indices, is_index_global_attn_nonzero, is_local_index_global_attn_nonzero,
                is_local_index_no_global_attn_nonzero)

    def _concat_with_global_key_attn_probs(self, key_vectors, query_vectors, max_num_global_attn_indices,
                                           is_index_global_attn_nonzero, is_local_index_global_attn_nonzero,
                                           is_local_index_no_global_attn_nonzero):
        batch_size = key_vectors.shape[0]
        key_vectors_only_global = key_vectors.new_zeros(batch_size, max_num_global_attn_indices, self.num_heads, self.head_dim)
        key_vectors_only_global[is_local_index_global_attn_nonzero] = key_vectors[is_index_global_attn_nonzero]
        attn_probs_from_global_key = torch.einsum('blhd,bshd->blhs', (query_vectors, key_vectors_only_global))
        attn_probs_from_global_key[
            is_local_index_no_global_attn_nonzero[0], :, :, is_local_index_no_global_attn_nonzero[1]
        ] = torch.finfo(attn_probs_from_global_key.dtype).min
        return attn_probs_from_global_key

    def _compute_attn_output_with_global_indices(self, value_vectors, attn_probs, max_num_global_attn_indices,
                                                 is_index_global_attn_nonzero, is_local_index_global_attn_nonzero):
        batch_size = attn_probs.shape[0]
        attn_probs_only_global = attn_probs.narrow(-1, 0, max_num_global_attn_indices)
        value_vectors_only_global = value_vectors.new_zeros(batch_size, max_num_global_attn_indices, self.num_heads, self.head_dim)
        value_vectors_only_global[is_local_index_global_attn_nonzero] = value_vectors[is_index_global_attn_nonzero]
        attn_output_only_global = torch.matmul(
            attn_probs_only_global.transpose(1, 2).clone(), value_vectors_only_global.transpose(1, 2).clone()).transpose(1, 2)
        attn_probs_without_global = attn_probs.narrow(
            -1, max_num_global_attn_indices, attn_probs.size(-1) - max_num_global_attn_indices).contiguous()
        attn_output_without_global = self._sliding_chunks_matmul_attn_probs_value(
            attn_probs_without_global, value_vectors, self.one_sided_attn_window_size)
        return attn_output_only_global + attn_output_without_global

    def _compute_global_attn_output_from_hidden(self, hidden_states, max_num_global_attn_indices,
                                                is_local_index_global_attn_nonzero, is_index_global_attn_nonzero,
                                                is_local_index_no_global_attn_nonzero, is_index_masked):
        seq_len, batch_size = hidden_states.shape[:2]
        global_attn_hidden_states = hidden_states.new_zeros(max_num_global_attn_indices, batch_size, self.embed_dim)
        global_attn_hidden_states[is_local_index_global_attn_nonzero[::-1]] = hidden_states[is_index_global_attn_nonzero[::-1]]
        global_query_vectors_only_global = self.query_global(global_attn_hidden_states)
        global_key_vectors = self.key_global(hidden_states)
        global_value_vectors = self.value_global(hidden_states)
        global_query_vectors_only_global /= math.sqrt(self.head_dim)
        global_query_vectors_only_global = (global_query_vectors_only_global.contiguous()
                                            .view(max_num_global_attn_indices, batch_size * self.num_heads, self.head_dim)
                                            .transpose(0, 1))
        global_key_vectors = global_key_vectors.contiguous().view(-1, batch_size * self.num_heads, self.head_dim).transpose(0, 1)
        global_value_vectors = global_value_vectors.contiguous().view(-1, batch_size * self.num_heads, self.head_dim).transpose(0, 1)
        global_attn_scores = torch.bmm(global_query_vectors_only_global, global_key_vectors.transpose(1, 2))
        global_attn_scores = global_attn_scores.view(batch_size, self.num_heads, max_num_global_attn_indices, seq_len)
        global_attn_scores[
            is_local_index_no_global_attn_nonzero[0], :, is_local_index_no_global_attn_nonzero[1], :
        ] = torch.finfo(global_attn_scores.dtype).min
        global_attn_scores = global_attn_scores.masked_fill(is_index_masked[:, None, None, :],
                                                            torch.finfo(global_attn_scores.dtype).min)
        global_attn_scores = global_attn_scores.view(batch_size * self.num_heads, max_num_global_attn_indices, seq_len)
        global_attn_probs = nn.functional.softmax(global_attn_scores, dim=-1, dtype=torch.float32)
        global_attn_output = torch.bmm(global_attn_probs, global_value_vectors)
        return global_attn_output.view(batch_size, self.num_heads, max_num_global_attn_indices, self.head_dim)


class LongformerAttention(nn.Module):
    def __init__(self, c, layer_id):
        super().__init__()
        self.self = LongformerSelfAttention(c, layer_id)
        self.output = BertSelfOutput(c, c['hidden_size'])

    def forward(self, hidden_states, *masks):
        return self.output(self.self(hidden_states, *masks), hidden_states)


class LongformerLayer(nn.Module):
    def __init__(self, c, layer_id):
        super().__init__()
        self.attention = LongformerAttention(c, layer_id)
        self.intermediate = BertIntermediate(c)
        self.output = BertSelfOutput(c, c['intermediate_size'])

    def forward(self, hidden_states, *masks):
        attn_output = self.attention(hidden_states, *masks)
        return self.output(self.intermediate(attn_output), attn_output)


class LongformerEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([LongformerLayer(c, i) for i in range(c['num_hidden_layers'])])

    def forward(self, hidden_states, attention_mask, padding_len):
        is_index_masked = attention_mask < 0
        is_index_global_attn = attention_mask > 0
        is_global_attn = is_index_global_attn.flatten().any().item()
        for layer_module in self.layer:
            hidden_states = layer_module(hidden_states, attention_mask, is_index_masked, is_index_global_attn, is_global_attn)
        if padding_len > 0:
            # unpad: the caller expects input_ids' length
            hidden_states = hidden_states[:, :-padding_len]
        return hidden_states


class LongformerEmbeddings(nn.Module):
    """RoBERTa's: positions from the input ids (padding_idx + 1 on), token types."""

    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c['vocab_size'], c['hidden_size'], padding_idx=c['pad_token_id'])
        self.token_type_embeddings = nn.Embedding(c['type_vocab_size'], c['hidden_size'])
        self.LayerNorm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])
        self.dropout = nn.Dropout(0.1)
        self.padding_idx = c['pad_token_id']
        self.position_embeddings = nn.Embedding(c['max_position_embeddings'], c['hidden_size'], padding_idx=self.padding_idx)

    def forward(self, input_ids, token_type_ids):
        position_ids = create_position_ids_from_input_ids(input_ids, self.padding_idx)
        embeddings = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        embeddings = embeddings + self.token_type_embeddings(token_type_ids)
        return self.dropout(self.LayerNorm(embeddings))


class LongformerModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        c = dict(c)
        if isinstance(c['attention_window'], int):
            c['attention_window'] = [c['attention_window']] * c['num_hidden_layers']
        self.config = c
        self.embeddings = LongformerEmbeddings(c)
        self.encoder = LongformerEncoder(c)
        self.pooler = BertPooler(c)

    def _pad_to_window_size(self, input_ids, attention_mask, token_type_ids, pad_token_id):
        attention_window = max(self.config['attention_window'])
        seq_len = input_ids.shape[1]
        padding_len = (attention_window - seq_len % attention_window) % attention_window
        if padding_len > 0:
            input_ids = nn.functional.pad(input_ids, (0, padding_len), value=pad_token_id)
            attention_mask = nn.functional.pad(attention_mask, (0, padding_len), value=False)  # no attention on the padding
            token_type_ids = nn.functional.pad(token_type_ids, (0, padding_len), value=0)
        return padding_len, input_ids, attention_mask, token_type_ids

    def forward(self, input_ids, attention_mask=None, global_attention_mask=None):
        input_shape = input_ids.size()
        if attention_mask is None:
            attention_mask = torch.ones(input_shape)
        token_type_ids = torch.zeros(input_shape, dtype=torch.long)
        if global_attention_mask is not None:
            # 0 no attention, 1 local, 2 global
            attention_mask = attention_mask * (global_attention_mask + 1)
        padding_len, input_ids, attention_mask, token_type_ids = self._pad_to_window_size(
            input_ids, attention_mask, token_type_ids, self.config['pad_token_id'])
        # 0 -> finfo.min (masked, negative), 1 -> 0 (local), 2 -> -finfo.min (global, positive)
        extended_attention_mask_ = extended_attention_mask(attention_mask)[:, 0, 0, :]
        embedding_output = self.embeddings(input_ids, token_type_ids)
        sequence_output = self.encoder(embedding_output, extended_attention_mask_, padding_len)
        return sequence_output, self.pooler(sequence_output)


# ---- BigBird (modeling_big_bird.py) --------------------------------------------------------------

class BigBirdEmbeddings(BertEmbeddings):
    """BERT's embeddings (position_ids and token_type_ids non-persistent buffers); rescale_embeddings
    multiplies the word embeddings by sqrt(hidden) first (off in BigBirdConfig's default)."""

    def __init__(self, c):
        super().__init__(c)
        self.rescale_embeddings = c['rescale_embeddings']
        self.hidden_size = c['hidden_size']

    def forward(self, input_ids, token_type_ids):
        seq_length = input_ids.size(1)
        position_ids = self.position_ids[:, :seq_length]
        inputs_embeds = self.word_embeddings(input_ids)
        if self.rescale_embeddings:
            inputs_embeds = inputs_embeds * (self.hidden_size ** 0.5)
        embeddings = inputs_embeds + self.token_type_embeddings(token_type_ids)
        embeddings += self.position_embeddings(position_ids)
        return self.LayerNorm(self.dropout(embeddings))


class BigBirdSelfAttention(nn.Module):
    """original_full: BERT's attention over every token."""

    def __init__(self, c):
        super().__init__()
        self.num_attention_heads = c['num_attention_heads']
        self.attention_head_size = c['hidden_size'] // c['num_attention_heads']
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query = nn.Linear(c['hidden_size'], self.all_head_size, bias=c['use_bias'])
        self.key = nn.Linear(c['hidden_size'], self.all_head_size, bias=c['use_bias'])
        self.value = nn.Linear(c['hidden_size'], self.all_head_size, bias=c['use_bias'])
        self.dropout = nn.Dropout(0.1)

    def heads(self, x, batch_size):
        return x.view(batch_size, -1, self.num_attention_heads, self.attention_head_size).transpose(1, 2)

    def forward(self, hidden_states, attention_mask):
        batch_size = hidden_states.shape[0]
        query_layer = self.heads(self.query(hidden_states), batch_size)
        key_layer = self.heads(self.key(hidden_states), batch_size)
        value_layer = self.heads(self.value(hidden_states), batch_size)
        scores = torch.matmul(query_layer, key_layer.transpose(-1, -2)) / math.sqrt(self.attention_head_size)
        probs = self.dropout(nn.functional.softmax(scores + attention_mask, dim=-1))
        context = torch.matmul(probs, value_layer).permute(0, 2, 1, 3).contiguous()
        return context.view(context.size()[:-2] + (self.all_head_size,))


class BigBirdBlockSparseAttention(BigBirdSelfAttention):
    """block_sparse in eval mode: each query block attends to the first and last blocks (global),
    its neighbours (sliding, 3 blocks) and num_random_blocks random blocks, which eval mode makes
    block 0 (upstream's _bigbird_block_rand_mask_with_head returns zeros when not training); the
    first and last query blocks attend to everything. Computed in upstream's five parts."""

    def __init__(self, c):
        super().__init__(c)
        self.num_random_blocks = c['num_random_blocks']
        self.block_size = c['block_size']

    @staticmethod
    def bmm_nd(a, b, ndim):
        return torch.bmm(a.reshape((-1,) + a.shape[-2:]), b.reshape((-1,) + b.shape[-2:])).view(
            a.shape[:ndim - 2] + (a.shape[ndim - 2], b.shape[ndim - 1]))

    @staticmethod
    def bmm_nd_transpose(a, b, ndim):
        return torch.bmm(a.reshape((-1,) + a.shape[-2:]), b.reshape((-1,) + b.shape[-2:]).transpose(1, 2)).view(
            a.shape[:ndim - 2] + (a.shape[ndim - 2], b.shape[ndim - 2]))

    @staticmethod
    def gather_b2(params, indices):
        # torch_gather_b2: blocks of params [b, h, nb, bs, d] at indices [b, h, l, r], one index_select
        n_gather = indices.shape[-2] * indices.shape[-1]
        shift = torch.arange(indices.shape[0] * indices.shape[1] * n_gather)
        flat = indices.view(-1) + torch.div(shift, n_gather, rounding_mode='floor') * params.shape[2]
        out = params.reshape(-1, params.shape[-2], params.shape[-1]).index_select(0, flat)
        return out.reshape(params.shape[:2] + (n_gather,) + params.shape[3:])

    def forward(self, hidden_states, band_mask, from_mask, to_mask, blocked_mask):
        bsz, n, _ = hidden_states.shape
        h, r, bs, d = self.num_attention_heads, self.num_random_blocks, self.block_size, self.attention_head_size
        nb = n // bs
        q = self.heads(self.query(hidden_states), bsz)
        k = self.heads(self.key(hidden_states), bsz)
        v = self.heads(self.value(hidden_states), bsz)
        rsqrt_d = 1 / math.sqrt(d)
        penalty = -10000.0
        # eval: the random plan's adjacency lists are zeros, one [nb - 2, r] per head, repeated per batch
        rand_attn = torch.tensor(np.stack([np.zeros((nb - 2, r), dtype=np.int32) for _ in range(h)], axis=0), dtype=torch.long)
        rand_attn = torch.cat([rand_attn.unsqueeze(0) for _ in range(bsz)], dim=0)
        rand_mask = torch.stack([p1[i1.flatten()] for p1, i1 in zip(blocked_mask, rand_attn)])
        rand_mask = torch.einsum('blq,bhlk->bhlqk', blocked_mask[:, 1:-1], rand_mask.view(bsz, h, nb - 2, r * bs))
        bq = q.view(bsz, h, nb, bs, -1)
        bk = k.view(bsz, h, nb, bs, -1)
        bv = v.view(bsz, h, nb, bs, -1)
        gk = self.gather_b2(bk, rand_attn).view(bsz, h, nb - 2, r * bs, -1)
        gv = self.gather_b2(bv, rand_attn).view(bsz, h, nb - 2, r * bs, -1)

        def global_rows(qb):
            # a global query block against every key
            s = self.bmm_nd_transpose(qb, k, 4) * rsqrt_d + (1.0 - to_mask) * penalty
            return self.bmm_nd(nn.functional.softmax(s, dim=-1), v, 4).unsqueeze(2)

        def edge_rows(qb, kmat, vmat, seq_pad, rand_pad):
            # the second and second-last query blocks: global, sliding and random keys
            s = self.bmm_nd_transpose(qb, kmat, 4) * rsqrt_d
            s += (1.0 - torch.minimum(seq_pad, rand_pad)) * penalty
            return self.bmm_nd(nn.functional.softmax(s, dim=-1), vmat, 4).unsqueeze(2)

        first = global_rows(bq[:, :, 0])
        ones_seq = to_mask.new_ones([bsz, 1, 1, r * bs])
        ones_rand = rand_mask.new_ones([bsz, h, bs, 4 * bs])
        second = edge_rows(bq[:, :, 1], torch.cat([bk[:, :, 0], bk[:, :, 1], bk[:, :, 2], bk[:, :, -1], gk[:, :, 0]], dim=2),
                           torch.cat([bv[:, :, 0], bv[:, :, 1], bv[:, :, 2], bv[:, :, -1], gv[:, :, 0]], dim=2),
                           torch.cat([to_mask[:, :, :, :3 * bs], to_mask[:, :, :, -bs:], ones_seq], dim=3),
                           torch.cat([ones_rand, rand_mask[:, :, 0]], dim=3))
        # middle query blocks: three sliding key blocks, the random ones, the first and last
        exp_k = torch.cat([bk[:, :, 1:-3], bk[:, :, 2:-2], bk[:, :, 3:-1]], dim=3)
        exp_v = torch.cat([bv[:, :, 1:-3], bv[:, :, 2:-2], bv[:, :, 3:-1]], dim=3)
        mq = bq[:, :, 2:-2]
        inner = self.bmm_nd_transpose(mq, exp_k, 5) * rsqrt_d
        rand_band = self.bmm_nd_transpose(mq, gk[:, :, 1:-1], 5) * rsqrt_d
        first_band = torch.einsum('bhlqd,bhkd->bhlqk', mq, bk[:, :, 0]) * rsqrt_d
        last_band = torch.einsum('bhlqd,bhkd->bhlqk', mq, bk[:, :, -1]) * rsqrt_d
        inner += (1.0 - band_mask) * penalty
        first_band += (1.0 - to_mask[:, :, :, :bs].unsqueeze(3)) * penalty
        last_band += (1.0 - to_mask[:, :, :, -bs:].unsqueeze(3)) * penalty
        rand_band += (1.0 - rand_mask[:, :, 1:-1]) * penalty
        w = nn.functional.softmax(torch.cat([first_band, inner, rand_band, last_band], dim=-1), dim=-1)
        middle = self.bmm_nd(w[:, :, :, :, bs:4 * bs], exp_v, 5)
        middle += self.bmm_nd(w[:, :, :, :, 4 * bs:-bs], gv[:, :, 1:-1], 5)
        middle += torch.einsum('bhlqk,bhkd->bhlqd', w[:, :, :, :, :bs], bv[:, :, 0])
        middle += torch.einsum('bhlqk,bhkd->bhlqd', w[:, :, :, :, -bs:], bv[:, :, -1])
        second_last = edge_rows(bq[:, :, -2], torch.cat([bk[:, :, 0], bk[:, :, -3], bk[:, :, -2], bk[:, :, -1], gk[:, :, -1]], dim=2),
                                torch.cat([bv[:, :, 0], bv[:, :, -3], bv[:, :, -2], bv[:, :, -1], gv[:, :, -1]], dim=2),
                                torch.cat([to_mask[:, :, :, :bs], to_mask[:, :, :, -3 * bs:], ones_seq], dim=3),
                                torch.cat([ones_rand, rand_mask[:, :, -1]], dim=3))
        last = global_rows(bq[:, :, -1])
        context = torch.cat([first, second, middle, second_last, last], dim=2)
        context = context.view((bsz, h, n, -1)) * from_mask
        return torch.transpose(context, 1, 2).contiguous().view(bsz, n, -1)


class BigBirdAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention_type = c['attention_type']
        self.self = BigBirdSelfAttention(c) if c['attention_type'] == 'original_full' else BigBirdBlockSparseAttention(c)
        self.output = BertSelfOutput(c, c['hidden_size'])
        self.c = c

    def set_attention_type(self, value):
        # upstream moves query, key and value into a new module of the other class
        if value == self.attention_type:
            return
        self.attention_type = value
        other = BigBirdSelfAttention(self.c) if value == 'original_full' else BigBirdBlockSparseAttention(self.c)
        other.query, other.key, other.value = self.self.query, self.self.key, self.self.value
        self.self = other.eval() if not self.training else other

    def forward(self, hidden_states, attention_mask, band_mask, from_mask, to_mask, blocked_mask):
        if self.attention_type == 'original_full':
            out = self.self(hidden_states, attention_mask)
        else:
            out = self.self(hidden_states, band_mask.to(hidden_states.dtype), from_mask.to(hidden_states.dtype),
                            to_mask.to(hidden_states.dtype), blocked_mask)
        return self.output(out, hidden_states)


class BigBirdLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BigBirdAttention(c)
        self.intermediate = BertIntermediate(c)
        self.intermediate.forward = lambda x: NewGELUActivation()(self.intermediate.dense(x))  # hidden_act gelu_new
        self.output = BertSelfOutput(c, c['intermediate_size'])

    def forward(self, hidden_states, *masks):
        attention_output = self.attention(hidden_states, *masks)
        return self.output(self.intermediate(attention_output), attention_output)


class BigBirdEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([BigBirdLayer(c) for _ in range(c['num_hidden_layers'])])

    def forward(self, hidden_states, *masks):
        for layer_module in self.layer:
            hidden_states = layer_module(hidden_states, *masks)
        return hidden_states


class BigBirdModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.attention_type = c['attention_type']
        self.block_size = c['block_size']
        self.embeddings = BigBirdEmbeddings(c)
        self.encoder = BigBirdEncoder(c)
        self.pooler = nn.Linear(c['hidden_size'], c['hidden_size'])
        self.activation = nn.Tanh()

    def set_attention_type(self, value):
        if value == self.attention_type:
            return
        self.attention_type = value
        for layer in self.encoder.layer:
            layer.attention.set_attention_type(value)

    @staticmethod
    def create_masks_for_block_sparse_attn(attention_mask, block_size):
        batch_size, seq_length = attention_mask.size()
        blocked = attention_mask.view(batch_size, seq_length // block_size, block_size)
        exp_blocked_to_pad = torch.cat([blocked[:, 1:-3], blocked[:, 2:-2], blocked[:, 3:-1]], dim=2)
        band_mask = torch.einsum('blq,blk->blqk', blocked[:, 2:-2], exp_blocked_to_pad).unsqueeze(1)
        return blocked, band_mask, attention_mask.view(batch_size, 1, seq_length, 1), attention_mask.view(batch_size, 1, 1, seq_length)

    def _pad_to_block_size(self, input_ids, attention_mask, token_type_ids):
        block_size = self.config['block_size']
        seq_len = input_ids.shape[1]
        padding_len = (block_size - seq_len % block_size) % block_size
        if padding_len > 0:
            input_ids = nn.functional.pad(input_ids, (0, padding_len), value=self.config['pad_token_id'])
            attention_mask = nn.functional.pad(attention_mask, (0, padding_len), value=False)
            token_type_ids = nn.functional.pad(token_type_ids, (0, padding_len), value=0)
        return padding_len, input_ids, attention_mask, token_type_ids

    def forward(self, input_ids, attention_mask):
        # each case as a freshly loaded model sees it: upstream's switch to original_full below is
        # sticky (set_attention_type), so a model that once saw a short input keeps full attention
        self.set_attention_type(self.config['attention_type'])
        batch_size, seq_length = input_ids.size()
        token_type_ids = self.embeddings.token_type_ids[:, :seq_length].expand(batch_size, seq_length)
        max_tokens_to_attend = (5 + 2 * self.config['num_random_blocks']) * self.config['block_size']
        if self.attention_type == 'block_sparse' and seq_length <= max_tokens_to_attend:
            self.set_attention_type('original_full')
        padding_len = 0
        masks = (None, None, None, None, None)
        if self.attention_type == 'block_sparse':
            padding_len, input_ids, attention_mask, token_type_ids = self._pad_to_block_size(input_ids, attention_mask, token_type_ids)
            blocked, band_mask, from_mask, to_mask = self.create_masks_for_block_sparse_attn(attention_mask, self.block_size)
            masks = (None, band_mask, from_mask, to_mask, blocked)
        else:
            masks = (extended_attention_mask(attention_mask), None, None, None, None)
        sequence_output = self.encoder(self.embeddings(input_ids, token_type_ids), *masks)
        pooler_output = self.activation(self.pooler(sequence_output[:, 0, :]))
        if padding_len > 0:
            sequence_output = sequence_output[:, :-padding_len]
        return sequence_output, pooler_output


# ---- Swin (modeling_swin.py) ---------------------------------------------------------------------


def swin_window_partition(input_feature, window_size):
    b, h, w, c = input_feature.shape
    x = input_feature.view(b, h // window_size, window_size, w // window_size, window_size, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, window_size, window_size, c)


def swin_window_reverse(windows, window_size, height, width):
    c = windows.shape[-1]
    x = windows.view(-1, height // window_size, width // window_size, window_size, window_size, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, height, width, c)


class SwinPatchEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.patch_size = (c['patch_size'], c['patch_size'])
        self.projection = nn.Conv2d(c['num_channels'], c['embed_dim'], kernel_size=self.patch_size, stride=self.patch_size)

    def maybe_pad(self, pixel_values, height, width):
        if width % self.patch_size[1] != 0:
            pixel_values = F.pad(pixel_values, (0, self.patch_size[1] - width % self.patch_size[1]))
        if height % self.patch_size[0] != 0:
            pixel_values = F.pad(pixel_values, (0, 0, 0, self.patch_size[0] - height % self.patch_size[0]))
        return pixel_values

    def forward(self, pixel_values):
        _, _, height, width = pixel_values.shape
        embeddings = self.projection(self.maybe_pad(pixel_values, height, width))
        _, _, height, width = embeddings.shape
        return embeddings.flatten(2).transpose(1, 2), (height, width)


class SwinEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.patch_embeddings = SwinPatchEmbeddings(c)
        self.norm = nn.LayerNorm(c['embed_dim'])

    def forward(self, pixel_values):
        embeddings, output_dimensions = self.patch_embeddings(pixel_values)
        return self.norm(embeddings), output_dimensions


class SwinPatchMerging(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = nn.LayerNorm(4 * dim)

    def maybe_pad(self, input_feature, height, width):
        if (height % 2 == 1) or (width % 2 == 1):
            input_feature = F.pad(input_feature, (0, 0, 0, width % 2, 0, height % 2))
        return input_feature

    def forward(self, input_feature, input_dimensions):
        height, width = input_dimensions
        b, _, c = input_feature.shape
        x = self.maybe_pad(input_feature.view(b, height, width, c), height, width)
        x = torch.cat([x[:, 0::2, 0::2, :], x[:, 1::2, 0::2, :], x[:, 0::2, 1::2, :], x[:, 1::2, 1::2, :]], -1)
        return self.reduction(self.norm(x.view(b, -1, 4 * c)))


class SwinSelfAttention(nn.Module):
    def __init__(self, c, dim, num_heads, window_size):
        super().__init__()
        self.num_attention_heads = num_heads
        self.attention_head_size = int(dim / num_heads)
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.window_size = (window_size, window_size)
        self.relative_position_bias_table = nn.Parameter(torch.zeros((2 * window_size - 1) * (2 * window_size - 1), num_heads))
        coords = torch.stack(torch.meshgrid([torch.arange(window_size), torch.arange(window_size)], indexing='ij'))
        coords_flatten = torch.flatten(coords, 1)
        relative_coords = (coords_flatten[:, :, None] - coords_flatten[:, None, :]).permute(1, 2, 0).contiguous()
        relative_coords[:, :, 0] += window_size - 1
        relative_coords[:, :, 1] += window_size - 1
        relative_coords[:, :, 0] *= 2 * window_size - 1
        self.register_buffer('relative_position_index', relative_coords.sum(-1))
        self.query = nn.Linear(self.all_head_size, self.all_head_size, bias=c['qkv_bias'])
        self.key = nn.Linear(self.all_head_size, self.all_head_size, bias=c['qkv_bias'])
        self.value = nn.Linear(self.all_head_size, self.all_head_size, bias=c['qkv_bias'])

    def transpose_for_scores(self, x):
        return x.view(x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)).permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask=None):
        batch_size, dim, _ = hidden_states.shape
        mixed_query_layer = self.query(hidden_states)
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        query_layer = self.transpose_for_scores(mixed_query_layer)
        scores = torch.matmul(query_layer, key_layer.transpose(-1, -2)) / math.sqrt(self.attention_head_size)
        n = self.window_size[0] * self.window_size[1]
        bias = self.relative_position_bias_table[self.relative_position_index.view(-1)].view(n, n, -1)
        scores = scores + bias.permute(2, 0, 1).contiguous().unsqueeze(0)
        if attention_mask is not None:
            mask_shape = attention_mask.shape[0]
            scores = scores.view(batch_size // mask_shape, mask_shape, self.num_attention_heads, dim, dim)
            scores = (scores + attention_mask.unsqueeze(1).unsqueeze(0)).view(-1, self.num_attention_heads, dim, dim)
        context = torch.matmul(F.softmax(scores, dim=-1), value_layer).permute(0, 2, 1, 3).contiguous()
        return context.view(context.size()[:-2] + (self.all_head_size,))


class SwinSelfOutput(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dense = nn.Linear(dim, dim)

    def forward(self, hidden_states):
        return self.dense(hidden_states)


class SwinAttention(nn.Module):
    def __init__(self, c, dim, num_heads, window_size):
        super().__init__()
        self.self = SwinSelfAttention(c, dim, num_heads, window_size)
        self.output = SwinSelfOutput(dim)

    def forward(self, hidden_states, attention_mask=None):
        return self.output(self.self(hidden_states, attention_mask))


class SwinIntermediate(nn.Module):
    def __init__(self, c, dim):
        super().__init__()
        self.dense = nn.Linear(dim, int(c['mlp_ratio'] * dim))

    def forward(self, hidden_states):
        return F.gelu(self.dense(hidden_states))


class SwinOutput(nn.Module):
    def __init__(self, c, dim):
        super().__init__()
        self.dense = nn.Linear(int(c['mlp_ratio'] * dim), dim)

    def forward(self, hidden_states):
        return self.dense(hidden_states)


class SwinLayer(nn.Module):
    """Upstream's, set_shift_and_window_size included: it writes shift_size and window_size (sticky;
    the fixtures run each case on a fresh copy of the model, as a freshly loaded model runs it)."""

    def __init__(self, c, dim, num_heads, shift_size=0):
        super().__init__()
        self.shift_size = shift_size
        self.window_size = c['window_size']
        self.layernorm_before = nn.LayerNorm(dim, eps=c['layer_norm_eps'])
        self.attention = SwinAttention(c, dim, num_heads, self.window_size)
        self.layernorm_after = nn.LayerNorm(dim, eps=c['layer_norm_eps'])
        self.intermediate = SwinIntermediate(c, dim)
        self.output = SwinOutput(c, dim)

    def set_shift_and_window_size(self, input_resolution):
        if min(input_resolution) <= self.window_size:
            self.shift_size = 0
            self.window_size = min(input_resolution)

    def get_attn_mask(self, height, width, dtype):
        if self.shift_size <= 0:
            return None
        img_mask = torch.zeros((1, height, width, 1), dtype=dtype)
        slices = (slice(0, -self.window_size), slice(-self.window_size, -self.shift_size), slice(-self.shift_size, None))
        count = 0
        for height_slice in slices:
            for width_slice in slices:
                img_mask[:, height_slice, width_slice, :] = count
                count += 1
        mask_windows = swin_window_partition(img_mask, self.window_size).view(-1, self.window_size * self.window_size)
        attn_mask = mask_windows.unsqueeze(1) - mask_windows.unsqueeze(2)
        return attn_mask.masked_fill(attn_mask != 0, float(-100.0)).masked_fill(attn_mask == 0, float(0.0))

    def maybe_pad(self, hidden_states, height, width):
        pad_right = (self.window_size - width % self.window_size) % self.window_size
        pad_bottom = (self.window_size - height % self.window_size) % self.window_size
        pad_values = (0, 0, 0, pad_right, 0, pad_bottom)
        return F.pad(hidden_states, pad_values), pad_values

    def forward(self, hidden_states, input_dimensions):
        self.set_shift_and_window_size(input_dimensions)
        height, width = input_dimensions
        b, _, c = hidden_states.size()
        shortcut = hidden_states
        hidden_states = self.layernorm_before(hidden_states).view(b, height, width, c)
        hidden_states, pad_values = self.maybe_pad(hidden_states, height, width)
        _, height_pad, width_pad, _ = hidden_states.shape
        if self.shift_size > 0:
            shifted = torch.roll(hidden_states, shifts=(-self.shift_size, -self.shift_size), dims=(1, 2))
        else:
            shifted = hidden_states
        windows = swin_window_partition(shifted, self.window_size).view(-1, self.window_size * self.window_size, c)
        attn_mask = self.get_attn_mask(height_pad, width_pad, hidden_states.dtype)
        attention_output = self.attention(windows, attn_mask)
        shifted_windows = swin_window_reverse(attention_output.view(-1, self.window_size, self.window_size, c),
                                              self.window_size, height_pad, width_pad)
        if self.shift_size > 0:
            attention_windows = torch.roll(shifted_windows, shifts=(self.shift_size, self.shift_size), dims=(1, 2))
        else:
            attention_windows = shifted_windows
        if pad_values[3] > 0 or pad_values[5] > 0:
            attention_windows = attention_windows[:, :height, :width, :].contiguous()
        hidden_states = shortcut + attention_windows.view(b, height * width, c)
        return hidden_states + self.output(self.intermediate(self.layernorm_after(hidden_states)))


class SwinStage(nn.Module):
    def __init__(self, c, dim, depth, num_heads, downsample):
        super().__init__()
        self.blocks = nn.ModuleList([SwinLayer(c, dim, num_heads, 0 if i % 2 == 0 else c['window_size'] // 2) for i in range(depth)])
        self.downsample = SwinPatchMerging(dim) if downsample else None

    def forward(self, hidden_states, input_dimensions):
        height, width = input_dimensions
        for layer in self.blocks:
            hidden_states = layer(hidden_states, input_dimensions)
        if self.downsample is None:
            return hidden_states, (height, width)
        return self.downsample(hidden_states, input_dimensions), ((height + 1) // 2, (width + 1) // 2)


class SwinEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        n = len(c['depths'])
        self.layers = nn.ModuleList([SwinStage(c, int(c['embed_dim'] * 2 ** i), c['depths'][i], c['num_heads'][i], i < n - 1)
                                     for i in range(n)])

    def forward(self, hidden_states, input_dimensions):
        for stage in self.layers:
            hidden_states, input_dimensions = stage(hidden_states, input_dimensions)
        return hidden_states


class SwinModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.num_features = int(c['embed_dim'] * 2 ** (len(c['depths']) - 1))
        self.embeddings = SwinEmbeddings(c)
        self.encoder = SwinEncoder(c)
        self.layernorm = nn.LayerNorm(self.num_features, eps=c['layer_norm_eps'])
        self.pooler = nn.AdaptiveAvgPool1d(1)

    def forward(self, pixel_values):
        embedding_output, input_dimensions = self.embeddings(pixel_values)
        sequence_output = self.layernorm(self.encoder(embedding_output, input_dimensions))
        return sequence_output, torch.flatten(self.pooler(sequence_output.transpose(1, 2)), 1)


class SwinForImageClassification(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.swin = SwinModel(c)
        self.classifier = nn.Linear(self.swin.num_features, c['num_labels'])

    def forward(self, pixel_values):
        return self.classifier(self.swin(pixel_values)[1])


# ---- DETR's sine position embedding (modeling_detr.py) --------------------------------------------


class DetrSinePositionEmbedding(nn.Module):
    def __init__(self, embedding_dim=64, temperature=10000, normalize=False, scale=None):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.temperature = temperature
        self.normalize = normalize
        if scale is not None and normalize is False:
            raise ValueError('normalize should be True if scale is passed')
        self.scale = 2 * math.pi if scale is None else scale

    def forward(self, pixel_values, pixel_mask):
        y_embed = pixel_mask.cumsum(1, dtype=torch.float32)
        x_embed = pixel_mask.cumsum(2, dtype=torch.float32)
        if self.normalize:
            y_embed = y_embed / (y_embed[:, -1:, :] + 1e-6) * self.scale
            x_embed = x_embed / (x_embed[:, :, -1:] + 1e-6) * self.scale
        dim_t = torch.arange(self.embedding_dim, dtype=torch.int64).float()
        dim_t = self.temperature ** (2 * torch.div(dim_t, 2, rounding_mode='floor') / self.embedding_dim)
        pos_x = x_embed[:, :, :, None] / dim_t
        pos_y = y_embed[:, :, :, None] / dim_t
        pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos_y = torch.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
        return torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)


# ---- MobileViT (modeling_mobilevit.py) ------------------------------------------------------------


def make_divisible(value, divisor=8, min_value=None):
    if min_value is None:
        min_value = divisor
    new_value = max(min_value, int(value + divisor / 2) // divisor * divisor)
    if new_value < 0.9 * value:
        new_value += divisor
    return int(new_value)


class MobileViTConvLayer(nn.Module):
    def __init__(self, c, in_channels, out_channels, kernel_size, stride=1, groups=1, use_normalization=True, use_activation=True):
        super().__init__()
        padding = int((kernel_size - 1) / 2)
        self.convolution = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, groups=groups, bias=False)
        self.normalization = nn.BatchNorm2d(out_channels, eps=1e-5, momentum=0.1) if use_normalization else None
        self.activation = nn.SiLU() if use_activation else None

    def forward(self, features):
        features = self.convolution(features)
        if self.normalization is not None:
            features = self.normalization(features)
        if self.activation is not None:
            features = self.activation(features)
        return features


class MobileViTInvertedResidual(nn.Module):
    def __init__(self, c, in_channels, out_channels, stride):
        super().__init__()
        expanded_channels = make_divisible(int(round(in_channels * c['expand_ratio'])), 8)
        self.use_residual = (stride == 1) and (in_channels == out_channels)
        self.expand_1x1 = MobileViTConvLayer(c, in_channels, expanded_channels, 1)
        self.conv_3x3 = MobileViTConvLayer(c, expanded_channels, expanded_channels, 3, stride=stride, groups=expanded_channels)
        self.reduce_1x1 = MobileViTConvLayer(c, expanded_channels, out_channels, 1, use_activation=False)

    def forward(self, features):
        residual = features
        features = self.reduce_1x1(self.conv_3x3(self.expand_1x1(features)))
        return residual + features if self.use_residual else features


class MobileViTMobileNetLayer(nn.Module):
    def __init__(self, c, in_channels, out_channels, stride=1, num_stages=1):
        super().__init__()
        self.layer = nn.ModuleList()
        for i in range(num_stages):
            self.layer.append(MobileViTInvertedResidual(c, in_channels, out_channels, stride if i == 0 else 1))
            in_channels = out_channels

    def forward(self, features):
        for layer_module in self.layer:
            features = layer_module(features)
        return features


class MobileViTSelfAttention(nn.Module):
    def __init__(self, c, hidden_size):
        super().__init__()
        self.num_attention_heads = c['num_attention_heads']
        self.attention_head_size = int(hidden_size / c['num_attention_heads'])
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query = nn.Linear(hidden_size, self.all_head_size, bias=c['qkv_bias'])
        self.key = nn.Linear(hidden_size, self.all_head_size, bias=c['qkv_bias'])
        self.value = nn.Linear(hidden_size, self.all_head_size, bias=c['qkv_bias'])

    def transpose_for_scores(self, x):
        return x.view(*(x.size()[:-1] + (self.num_attention_heads, self.attention_head_size))).permute(0, 2, 1, 3)

    def forward(self, hidden_states):
        mixed_query_layer = self.query(hidden_states)
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        query_layer = self.transpose_for_scores(mixed_query_layer)
        scores = torch.matmul(query_layer, key_layer.transpose(-1, -2)) / math.sqrt(self.attention_head_size)
        context = torch.matmul(F.softmax(scores, dim=-1), value_layer).permute(0, 2, 1, 3).contiguous()
        return context.view(*(context.size()[:-2] + (self.all_head_size,)))


class MobileViTSelfOutput(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)

    def forward(self, hidden_states):
        return self.dense(hidden_states)


class MobileViTAttention(nn.Module):
    def __init__(self, c, hidden_size):
        super().__init__()
        self.attention = MobileViTSelfAttention(c, hidden_size)
        self.output = MobileViTSelfOutput(hidden_size)

    def forward(self, hidden_states):
        return self.output(self.attention(hidden_states))


class MobileViTIntermediate(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        self.dense = nn.Linear(hidden_size, intermediate_size)

    def forward(self, hidden_states):
        return F.silu(self.dense(hidden_states))


class MobileViTOutput(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        self.dense = nn.Linear(intermediate_size, hidden_size)

    def forward(self, hidden_states, input_tensor):
        return self.dense(hidden_states) + input_tensor


class MobileViTTransformerLayer(nn.Module):
    def __init__(self, c, hidden_size, intermediate_size):
        super().__init__()
        self.attention = MobileViTAttention(c, hidden_size)
        self.intermediate = MobileViTIntermediate(hidden_size, intermediate_size)
        self.output = MobileViTOutput(hidden_size, intermediate_size)
        self.layernorm_before = nn.LayerNorm(hidden_size, eps=c['layer_norm_eps'])
        self.layernorm_after = nn.LayerNorm(hidden_size, eps=c['layer_norm_eps'])

    def forward(self, hidden_states):
        hidden_states = self.attention(self.layernorm_before(hidden_states)) + hidden_states
        return self.output(self.intermediate(self.layernorm_after(hidden_states)), hidden_states)


class MobileViTTransformer(nn.Module):
    def __init__(self, c, hidden_size, num_stages):
        super().__init__()
        self.layer = nn.ModuleList([MobileViTTransformerLayer(c, hidden_size, int(hidden_size * c['mlp_ratio'])) for _ in range(num_stages)])

    def forward(self, hidden_states):
        for layer_module in self.layer:
            hidden_states = layer_module(hidden_states)
        return hidden_states


class MobileViTLayer(nn.Module):
    def __init__(self, c, in_channels, out_channels, stride, hidden_size, num_stages):
        super().__init__()
        self.patch_width = c['patch_size']
        self.patch_height = c['patch_size']
        if stride == 2:
            self.downsampling_layer = MobileViTInvertedResidual(c, in_channels, out_channels, stride)
            in_channels = out_channels
        else:
            self.downsampling_layer = None
        self.conv_kxk = MobileViTConvLayer(c, in_channels, in_channels, c['conv_kernel_size'])
        self.conv_1x1 = MobileViTConvLayer(c, in_channels, hidden_size, 1, use_normalization=False, use_activation=False)
        self.transformer = MobileViTTransformer(c, hidden_size, num_stages)
        self.layernorm = nn.LayerNorm(hidden_size, eps=c['layer_norm_eps'])
        self.conv_projection = MobileViTConvLayer(c, hidden_size, in_channels, 1)
        self.fusion = MobileViTConvLayer(c, 2 * in_channels, in_channels, c['conv_kernel_size'])

    def unfolding(self, features):
        patch_width, patch_height = self.patch_width, self.patch_height
        patch_area = int(patch_width * patch_height)
        batch_size, channels, orig_height, orig_width = features.shape
        new_height = int(math.ceil(orig_height / patch_height) * patch_height)
        new_width = int(math.ceil(orig_width / patch_width) * patch_width)
        interpolate = False
        if new_width != orig_width or new_height != orig_height:
            features = F.interpolate(features, size=(new_height, new_width), mode='bilinear', align_corners=False)
            interpolate = True
        num_patch_width = new_width // patch_width
        num_patch_height = new_height // patch_height
        num_patches = num_patch_height * num_patch_width
        patches = features.reshape(batch_size * channels * num_patch_height, patch_height, num_patch_width, patch_width)
        patches = patches.transpose(1, 2).reshape(batch_size, channels, num_patches, patch_area)
        patches = patches.transpose(1, 3).reshape(batch_size * patch_area, num_patches, -1)
        info_dict = {'orig_size': (orig_height, orig_width), 'batch_size': batch_size, 'channels': channels, 'interpolate': interpolate,
                     'num_patches': num_patches, 'num_patches_width': num_patch_width, 'num_patches_height': num_patch_height}
        return patches, info_dict

    def folding(self, patches, info_dict):
        patch_width, patch_height = self.patch_width, self.patch_height
        patch_area = int(patch_width * patch_height)
        batch_size, channels = info_dict['batch_size'], info_dict['channels']
        num_patches = info_dict['num_patches']
        num_patch_height, num_patch_width = info_dict['num_patches_height'], info_dict['num_patches_width']
        features = patches.contiguous().view(batch_size, patch_area, num_patches, -1).transpose(1, 3)
        features = features.reshape(batch_size * channels * num_patch_height, num_patch_width, patch_height, patch_width).transpose(1, 2)
        features = features.reshape(batch_size, channels, num_patch_height * patch_height, num_patch_width * patch_width)
        if info_dict['interpolate']:
            features = F.interpolate(features, size=info_dict['orig_size'], mode='bilinear', align_corners=False)
        return features

    def forward(self, features):
        if self.downsampling_layer:
            features = self.downsampling_layer(features)
        residual = features
        features = self.conv_1x1(self.conv_kxk(features))
        patches, info_dict = self.unfolding(features)
        patches = self.layernorm(self.transformer(patches))
        features = self.conv_projection(self.folding(patches, info_dict))
        return self.fusion(torch.cat((residual, features), dim=1))


class MobileViTEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        n, h = c['neck_hidden_sizes'], c['hidden_sizes']
        self.layer = nn.ModuleList([
            MobileViTMobileNetLayer(c, n[0], n[1], stride=1, num_stages=1),
            MobileViTMobileNetLayer(c, n[1], n[2], stride=2, num_stages=3),
            MobileViTLayer(c, n[2], n[3], 2, h[0], 2),
            MobileViTLayer(c, n[3], n[4], 2, h[1], 4),
            MobileViTLayer(c, n[4], n[5], 2, h[2], 3),
        ])

    def forward(self, hidden_states):
        for layer_module in self.layer:
            hidden_states = layer_module(hidden_states)
        return hidden_states


class MobileViTModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv_stem = MobileViTConvLayer(c, c['num_channels'], c['neck_hidden_sizes'][0], 3, stride=2)
        self.encoder = MobileViTEncoder(c)
        self.conv_1x1_exp = MobileViTConvLayer(c, c['neck_hidden_sizes'][5], c['neck_hidden_sizes'][6], 1)

    def forward(self, pixel_values):
        last_hidden_state = self.conv_1x1_exp(self.encoder(self.conv_stem(pixel_values)))
        return last_hidden_state, torch.mean(last_hidden_state, dim=[-2, -1], keepdim=False)


class MobileViTForImageClassification(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.mobilevit = MobileViTModel(c)
        self.classifier = nn.Linear(c['neck_hidden_sizes'][-1], c['num_labels'])

    def forward(self, pixel_values):
        return self.classifier(self.mobilevit(pixel_values)[1])


# ---- ConvNeXt V2 (modeling_convnextv2.py) ------------------------------------------------------------

class ConvNextV2GRN(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(1, 1, 1, dim))
        self.bias = nn.Parameter(torch.zeros(1, 1, 1, dim))

    def forward(self, hidden_states):
        global_features = torch.linalg.vector_norm(hidden_states, ord=2, dim=(1, 2), keepdim=True)
        norm_features = global_features / (global_features.mean(dim=-1, keepdim=True) + 1e-6)
        return self.weight * (hidden_states * norm_features) + self.bias + hidden_states


class ConvNextV2LayerNorm(nn.LayerNorm):
    def __init__(self, normalized_shape, eps=1e-6, data_format='channels_last'):
        super().__init__(normalized_shape, eps=eps)
        self.data_format = data_format

    def forward(self, features):
        if self.data_format == 'channels_first':
            return super().forward(features.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        return super().forward(features)


class ConvNextV2Embeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.patch_embeddings = nn.Conv2d(c['num_channels'], c['hidden_sizes'][0], kernel_size=c['patch_size'], stride=c['patch_size'])
        self.layernorm = ConvNextV2LayerNorm(c['hidden_sizes'][0], eps=1e-6, data_format='channels_first')

    def forward(self, pixel_values):
        return self.layernorm(self.patch_embeddings(pixel_values))


class ConvNextV2Layer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.layernorm = ConvNextV2LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.grn = ConvNextV2GRN(4 * dim)
        self.pwconv2 = nn.Linear(4 * dim, dim)

    def forward(self, features):
        residual = features
        features = self.dwconv(features).permute(0, 2, 3, 1)
        features = self.pwconv2(self.grn(self.act(self.pwconv1(self.layernorm(features)))))
        return residual + features.permute(0, 3, 1, 2)


class ConvNextV2Stage(nn.Module):
    def __init__(self, in_channels, out_channels, stride, depth):
        super().__init__()
        if in_channels != out_channels or stride > 1:
            self.downsampling_layer = nn.ModuleList([ConvNextV2LayerNorm(in_channels, eps=1e-6, data_format='channels_first'),
                                                     nn.Conv2d(in_channels, out_channels, kernel_size=2, stride=stride)])
        else:
            self.downsampling_layer = nn.ModuleList()
        self.layers = nn.ModuleList([ConvNextV2Layer(out_channels) for _ in range(depth)])

    def forward(self, features):
        for layer in self.downsampling_layer:
            features = layer(features)
        for layer in self.layers:
            features = layer(features)
        return features


class ConvNextV2Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.stages = nn.ModuleList()
        prev = c['hidden_sizes'][0]
        for i, (out, depth) in enumerate(zip(c['hidden_sizes'], c['depths'])):
            self.stages.append(ConvNextV2Stage(prev, out, 2 if i > 0 else 1, depth))
            prev = out

    def forward(self, hidden_states):
        for stage in self.stages:
            hidden_states = stage(hidden_states)
        return hidden_states


class ConvNextV2Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = ConvNextV2Embeddings(c)
        self.encoder = ConvNextV2Encoder(c)
        self.layernorm = nn.LayerNorm(c['hidden_sizes'][-1], eps=c['layer_norm_eps'])

    def forward(self, pixel_values):
        last_hidden_state = self.encoder(self.embeddings(pixel_values))
        return last_hidden_state, self.layernorm(last_hidden_state.mean([-2, -1]))


class ConvNextV2ForImageClassification(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.convnextv2 = ConvNextV2Model(c)
        self.classifier = nn.Linear(c['hidden_sizes'][-1], c['num_labels'])

    def forward(self, pixel_values):
        return self.classifier(self.convnextv2(pixel_values)[1])


# ---- BEiT (modeling_beit.py) -------------------------------------------------------------------------

class BeitPatchEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.patch_shape = (c['image_size'] // c['patch_size'], c['image_size'] // c['patch_size'])
        self.num_patches = self.patch_shape[0] * self.patch_shape[1]
        self.projection = nn.Conv2d(c['num_channels'], c['hidden_size'], kernel_size=c['patch_size'], stride=c['patch_size'])

    def forward(self, pixel_values, position_embedding=None):
        embeddings = self.projection(pixel_values)
        patch_height, patch_width = embeddings.shape[2], embeddings.shape[3]
        if position_embedding is not None:
            position_embedding = position_embedding.view(1, self.patch_shape[0], self.patch_shape[1], -1).permute(0, 3, 1, 2)
            position_embedding = F.interpolate(position_embedding, size=(patch_height, patch_width), mode='bicubic')
            embeddings = embeddings + position_embedding
        return embeddings.flatten(2).transpose(1, 2), (patch_height, patch_width)


class BeitEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.cls_token = nn.Parameter(torch.zeros(1, 1, c['hidden_size']))
        self.mask_token = nn.Parameter(torch.zeros(1, 1, c['hidden_size'])) if c['use_mask_token'] else None
        self.patch_embeddings = BeitPatchEmbeddings(c)
        n = self.patch_embeddings.num_patches
        self.position_embeddings = nn.Parameter(torch.zeros(1, n + 1, c['hidden_size'])) if c['use_absolute_position_embeddings'] else None

    def forward(self, pixel_values):
        embeddings, _ = self.patch_embeddings(pixel_values, self.position_embeddings[:, 1:, :] if self.position_embeddings is not None else None)
        cls_tokens = self.cls_token.expand(embeddings.shape[0], -1, -1)
        if self.position_embeddings is not None:
            cls_tokens = cls_tokens + self.position_embeddings[:, :1, :]
        return torch.cat((cls_tokens, embeddings), dim=1)


class BeitRelativePositionBias(nn.Module):
    def __init__(self, c, window_size):
        super().__init__()
        self.window_size = window_size
        self.num_relative_distance = (2 * window_size[0] - 1) * (2 * window_size[1] - 1) + 3
        self.relative_position_bias_table = nn.Parameter(torch.zeros(self.num_relative_distance, c['num_attention_heads']))
        self.relative_position_indices = {}

    def generate_relative_position_index(self, window_size):
        num_relative_distance = (2 * window_size[0] - 1) * (2 * window_size[1] - 1) + 3
        window_area = window_size[0] * window_size[1]
        grid = torch.meshgrid(torch.arange(window_size[0]), torch.arange(window_size[1]), indexing='ij')
        coords = torch.stack(grid)
        coords_flatten = torch.flatten(coords, 1)
        relative_coords = coords_flatten[:, :, None] - coords_flatten[:, None, :]
        relative_coords = relative_coords.permute(1, 2, 0).contiguous()
        relative_coords[:, :, 0] += window_size[0] - 1
        relative_coords[:, :, 1] += window_size[1] - 1
        relative_coords[:, :, 0] *= 2 * window_size[1] - 1
        relative_position_index = torch.zeros(size=(window_area + 1,) * 2, dtype=relative_coords.dtype)
        relative_position_index[1:, 1:] = relative_coords.sum(-1)
        relative_position_index[0, 0:] = num_relative_distance - 3
        relative_position_index[0:, 0] = num_relative_distance - 2
        relative_position_index[0, 0] = num_relative_distance - 1
        return relative_position_index

    def forward(self, window_size, dim_size=None):
        old_height = 2 * self.window_size[0] - 1
        old_width = 2 * self.window_size[1] - 1
        new_height = 2 * window_size[0] - 1
        new_width = 2 * window_size[1] - 1
        old_table = self.relative_position_bias_table
        old_n = self.num_relative_distance
        new_n = new_height * new_width + 3
        old_sub_table = old_table[:old_n - 3].reshape(1, old_width, old_height, -1).permute(0, 3, 1, 2)
        new_sub_table = F.interpolate(old_sub_table, size=(new_height, new_width), mode='bilinear')
        new_sub_table = new_sub_table.permute(0, 2, 3, 1).reshape(new_n - 3, -1)
        new_table = torch.cat([new_sub_table, old_table[old_n - 3:]])
        key = window_size
        if key not in self.relative_position_indices:
            self.relative_position_indices[key] = self.generate_relative_position_index(window_size)
        bias = new_table[self.relative_position_indices[key].view(-1)]
        bias = bias.view(window_size[0] * window_size[1] + 1, window_size[0] * window_size[1] + 1, -1)
        return bias.permute(2, 0, 1).contiguous().unsqueeze(0)


class BeitSelfAttention(nn.Module):
    def __init__(self, c, window_size=None):
        super().__init__()
        self.c = c
        self.num_attention_heads = c['num_attention_heads']
        self.attention_head_size = int(c['hidden_size'] / c['num_attention_heads'])
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query = nn.Linear(c['hidden_size'], self.all_head_size)
        self.key = nn.Linear(c['hidden_size'], self.all_head_size, bias=False)
        self.value = nn.Linear(c['hidden_size'], self.all_head_size)
        self.relative_position_bias = BeitRelativePositionBias(c, window_size) if window_size else None

    def transpose_for_scores(self, x):
        return x.view(*x.size()[:-1], self.num_attention_heads, self.attention_head_size).permute(0, 2, 1, 3)

    def forward(self, hidden_states, relative_position_bias, resolution):
        mixed_query_layer = self.query(hidden_states)
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        query_layer = self.transpose_for_scores(mixed_query_layer)
        scores = torch.matmul(query_layer, key_layer.transpose(-1, -2)) / math.sqrt(self.attention_head_size)
        if self.relative_position_bias is not None:
            height, width = resolution
            window_size = (height // self.c['patch_size'], width // self.c['patch_size'])
            scores = scores + self.relative_position_bias(window_size, dim_size=hidden_states.shape[1])
        if relative_position_bias is not None:
            scores = scores + relative_position_bias
        context = torch.matmul(F.softmax(scores, dim=-1), value_layer).permute(0, 2, 1, 3).contiguous()
        return context.view(*context.size()[:-2], self.all_head_size)


class BeitSelfOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c['hidden_size'], c['hidden_size'])

    def forward(self, hidden_states):
        return self.dense(hidden_states)


class BeitAttention(nn.Module):
    def __init__(self, c, window_size=None):
        super().__init__()
        self.attention = BeitSelfAttention(c, window_size)
        self.output = BeitSelfOutput(c)

    def forward(self, hidden_states, relative_position_bias, resolution):
        return self.output(self.attention(hidden_states, relative_position_bias, resolution))


class BeitIntermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c['hidden_size'], c['intermediate_size'])

    def forward(self, hidden_states):
        return F.gelu(self.dense(hidden_states))


class BeitOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c['intermediate_size'], c['hidden_size'])

    def forward(self, hidden_states):
        return self.dense(hidden_states)


class BeitLayer(nn.Module):
    def __init__(self, c, window_size=None):
        super().__init__()
        self.attention = BeitAttention(c, window_size)
        self.intermediate = BeitIntermediate(c)
        self.output = BeitOutput(c)
        self.layernorm_before = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])
        self.layernorm_after = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])
        v = c['layer_scale_init_value']
        if v > 0:
            self.lambda_1 = nn.Parameter(v * torch.ones(c['hidden_size']))
            self.lambda_2 = nn.Parameter(v * torch.ones(c['hidden_size']))
        else:
            self.lambda_1, self.lambda_2 = None, None

    def forward(self, hidden_states, relative_position_bias, resolution):
        attention_output = self.attention(self.layernorm_before(hidden_states), relative_position_bias, resolution)
        if self.lambda_1 is not None:
            attention_output = self.lambda_1 * attention_output
        hidden_states = attention_output + hidden_states
        layer_output = self.output(self.intermediate(self.layernorm_after(hidden_states)))
        if self.lambda_2 is not None:
            layer_output = self.lambda_2 * layer_output
        return layer_output + hidden_states


class BeitEncoder(nn.Module):
    def __init__(self, c, window_size):
        super().__init__()
        self.c = c
        self.relative_position_bias = BeitRelativePositionBias(c, window_size) if c['use_shared_relative_position_bias'] else None
        self.layer = nn.ModuleList([BeitLayer(c, window_size if c['use_relative_position_bias'] else None)
                                    for _ in range(c['num_hidden_layers'])])

    def forward(self, hidden_states, resolution):
        for layer in self.layer:
            height, width = resolution
            window_size = (height // self.c['patch_size'], width // self.c['patch_size'])
            bias = self.relative_position_bias(window_size, dim_size=hidden_states.shape[1]) if self.relative_position_bias is not None else None
            hidden_states = layer(hidden_states, bias, resolution)
        return hidden_states


class BeitPooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layernorm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps']) if c['use_mean_pooling'] else None

    def forward(self, hidden_states):
        if self.layernorm is not None:
            return self.layernorm(hidden_states[:, 1:, :].mean(1))
        return hidden_states[:, 0]


class BeitModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = BeitEmbeddings(c)
        self.encoder = BeitEncoder(c, self.embeddings.patch_embeddings.patch_shape)
        self.layernorm = nn.Identity() if c['use_mean_pooling'] else nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])
        self.pooler = BeitPooler(c)

    def forward(self, pixel_values):
        hidden_states = self.encoder(self.embeddings(pixel_values), pixel_values.shape[2:])
        sequence_output = self.layernorm(hidden_states)
        return sequence_output, self.pooler(sequence_output)


class BeitForImageClassification(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.beit = BeitModel(c)
        self.classifier = nn.Linear(c['hidden_size'], c['num_labels'])

    def forward(self, pixel_values):
        return self.classifier(self.beit(pixel_values)[1])


# ---- Falcon (modeling_falcon.py) ---------------------------------------------------------------------

def falcon_build_alibi_tensor(attention_mask, num_heads, dtype):
    """Falcon's build_alibi_tensor: BLOOM's with the slopes rounded to bfloat16 and the product made in
    bfloat16 (slopes[..., None].bfloat16() * arange_tensor), then cast to dtype."""
    batch_size, seq_length = attention_mask.shape
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), dtype=torch.float32)
    slopes = torch.pow(base, torch.arange(1, 1 + closest_power_of_2, dtype=torch.int32))
    if closest_power_of_2 != num_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))), dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2, num_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)
    arange_tensor = ((attention_mask.cumsum(dim=-1) - 1) * attention_mask)[:, None, :]
    alibi = slopes[..., None].bfloat16() * arange_tensor
    return alibi.reshape(batch_size * num_heads, 1, seq_length).to(dtype)


class FalconLinear(nn.Linear):
    def forward(self, input):
        hidden_states = input @ self.weight.T
        return hidden_states if self.bias is None else hidden_states + self.bias


class FalconAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.hidden_size = c['hidden_size']
        self.num_heads = c['num_attention_heads']
        self.head_dim = self.hidden_size // self.num_heads
        self.inv_norm_factor = 1.0 / math.sqrt(self.head_dim)
        if c['new_decoder_architecture']:
            qkv_out_dim = (c['num_kv_heads'] * 2 + c['num_attention_heads']) * self.head_dim
        elif c['multi_query']:
            qkv_out_dim = self.hidden_size + 2 * self.head_dim
        else:
            qkv_out_dim = 3 * self.hidden_size
        self.query_key_value = FalconLinear(self.hidden_size, qkv_out_dim, bias=c['bias'])
        self.new_decoder_architecture = c['new_decoder_architecture']
        self.multi_query = c['multi_query']
        self.dense = FalconLinear(self.hidden_size, self.hidden_size, bias=c['bias'])
        self.num_kv_heads = c['num_kv_heads'] if (self.new_decoder_architecture or not self.multi_query) else 1

    def _split_heads(self, fused_qkv):
        if self.new_decoder_architecture:
            batch, seq_len, _ = fused_qkv.shape
            qkv = fused_qkv.view(batch, seq_len, -1, self.num_heads // self.num_kv_heads + 2, self.head_dim)
            query = qkv[:, :, :, :-2]
            key = torch.broadcast_to(qkv[:, :, :, [-2]], query.shape)
            value = torch.broadcast_to(qkv[:, :, :, [-1]], query.shape)
            return [x.flatten(2, 3) for x in (query, key, value)]
        elif not self.multi_query:
            batch_size, seq_length, _ = fused_qkv.shape
            fused_qkv = fused_qkv.view(batch_size, seq_length, self.num_heads, 3, self.head_dim)
            return fused_qkv[..., 0, :], fused_qkv[..., 1, :], fused_qkv[..., 2, :]
        batch_size, seq_length, _ = fused_qkv.shape
        fused_qkv = fused_qkv.view(batch_size, seq_length, self.num_heads + 2, self.head_dim)
        return fused_qkv[..., :-2, :], fused_qkv[..., [-2], :], fused_qkv[..., [-1], :]

    def _merge_heads(self, x):
        batch_size_and_num_heads, seq_length, _ = x.shape
        batch_size = batch_size_and_num_heads // self.num_heads
        x = x.view(batch_size, self.num_heads, seq_length, self.head_dim).permute(0, 2, 1, 3)
        return x.reshape(batch_size, seq_length, self.num_heads * self.head_dim)

    def forward(self, hidden_states, alibi, attention_mask, position_embeddings):
        fused_qkv = self.query_key_value(hidden_states)
        num_kv_heads = self.num_heads if self.new_decoder_architecture else self.num_kv_heads
        query_layer, key_layer, value_layer = self._split_heads(fused_qkv)
        batch_size, query_length, _, _ = query_layer.shape
        query_layer = query_layer.transpose(1, 2).reshape(batch_size, self.num_heads, query_length, self.head_dim)
        key_layer = key_layer.transpose(1, 2).reshape(batch_size, num_kv_heads, query_length, self.head_dim)
        value_layer = value_layer.transpose(1, 2).reshape(batch_size, num_kv_heads, query_length, self.head_dim)
        if alibi is None:
            cos, sin = position_embeddings
            query_layer, key_layer = apply_rotary_pos_emb(query_layer, key_layer, cos, sin)
        kv_length = key_layer.shape[-2]
        attention_mask = attention_mask[:, :, :, :key_layer.shape[-2]]
        if alibi is None:
            attention_scores = query_layer @ key_layer.transpose(-1, -2)
            attention_scores /= math.sqrt(self.head_dim)
            attention_scores = F.softmax(attention_scores + attention_mask, dim=-1, dtype=hidden_states.dtype)
            attn_output = attention_scores @ value_layer
            attn_output = attn_output.view(batch_size, self.num_heads, query_length, self.head_dim).permute(0, 2, 1, 3)
            return self.dense(attn_output.reshape(batch_size, query_length, self.num_heads * self.head_dim))
        matmul_result = query_layer @ key_layer.transpose(-1, -2)
        attention_scores = matmul_result.view(batch_size, self.num_heads, query_length, kv_length)
        attention_logits = attention_scores + alibi.view(batch_size, self.num_heads, 1, -1)
        attention_logits *= self.inv_norm_factor
        attention_probs = F.softmax(attention_logits + attention_mask, dim=-1, dtype=hidden_states.dtype)
        attention_probs_reshaped = attention_probs.view(batch_size, self.num_heads, query_length, kv_length)
        attn_output = (attention_probs_reshaped @ value_layer).flatten(0, 1)
        return self.dense(self._merge_heads(attn_output))


class FalconMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense_h_to_4h = FalconLinear(c['hidden_size'], c['ffn_hidden_size'], bias=c['bias'])
        self.act = nn.GELU()
        self.dense_4h_to_h = FalconLinear(c['ffn_hidden_size'], c['hidden_size'], bias=c['bias'])

    def forward(self, x):
        return self.dense_4h_to_h(self.act(self.dense_h_to_4h(x)))


class FalconDecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        h = c['hidden_size']
        self.self_attention = FalconAttention(c)
        self.mlp = FalconMLP(c)
        if not c['parallel_attn']:
            self.post_attention_layernorm = nn.LayerNorm(h, eps=c['layer_norm_epsilon'])
            self.input_layernorm = nn.LayerNorm(h, eps=c['layer_norm_epsilon'])
        elif c['num_ln_in_parallel_attn'] == 2:
            self.ln_attn = nn.LayerNorm(h, eps=c['layer_norm_epsilon'])
            self.ln_mlp = nn.LayerNorm(h, eps=c['layer_norm_epsilon'])
        else:
            self.input_layernorm = nn.LayerNorm(h, eps=c['layer_norm_epsilon'])

    def forward(self, hidden_states, alibi, attention_mask, position_embeddings):
        c = self.c
        residual = hidden_states
        if c['new_decoder_architecture'] and c['num_ln_in_parallel_attn'] == 2:
            attention_layernorm_out = self.ln_attn(hidden_states)
            mlp_layernorm_out = self.ln_mlp(hidden_states)
        else:
            attention_layernorm_out = self.input_layernorm(hidden_states)
        attention_output = self.self_attention(attention_layernorm_out, alibi, attention_mask, position_embeddings)
        if not c['new_decoder_architecture']:
            if c['parallel_attn']:
                mlp_layernorm_out = attention_layernorm_out
            else:
                residual = residual + attention_output
                mlp_layernorm_out = self.post_attention_layernorm(residual)
        if c['new_decoder_architecture'] and c['parallel_attn'] and c['num_ln_in_parallel_attn'] == 1:
            mlp_layernorm_out = attention_layernorm_out
        mlp_output = self.mlp(mlp_layernorm_out)
        if c['new_decoder_architecture'] or c['parallel_attn']:
            mlp_output += attention_output
        return residual + mlp_output


class FalconModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.num_heads = c['num_attention_heads']
        self.word_embeddings = nn.Embedding(c['vocab_size'], c['hidden_size'])
        self.h = nn.ModuleList([FalconDecoderLayer(c) for _ in range(c['num_hidden_layers'])])
        self.ln_f = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_epsilon'])
        self.rotary_emb = LlamaRotaryEmbedding(c)

    def forward(self, input_ids, attention_mask):
        inputs_embeds = self.word_embeddings(input_ids)
        batch_size, seq_length, _ = inputs_embeds.shape
        alibi = falcon_build_alibi_tensor(attention_mask, self.num_heads, inputs_embeds.dtype) if self.c['alibi'] else None
        cache_position = torch.arange(0, seq_length)
        position_ids = cache_position.unsqueeze(0)
        causal_mask = prepare_4d_causal_attention_mask_with_cache_position(
            attention_mask, seq_length, attention_mask.shape[-1], inputs_embeds.dtype, cache_position, batch_size)
        if alibi is not None:
            # _update_causal_mask: the alibi (scaled by 1 / sqrt(head_dim)) is the mask where the causal mask keeps
            a = alibi.reshape(batch_size, -1, *alibi.shape[1:])
            causal_mask = torch.masked_fill(a / math.sqrt(self.c['hidden_size'] // self.num_heads), causal_mask < -1,
                                            torch.finfo(inputs_embeds.dtype).min)
        hidden_states = inputs_embeds
        position_embeddings = self.rotary_emb(hidden_states, position_ids)
        for block in self.h:
            hidden_states = block(hidden_states, alibi, causal_mask, position_embeddings)
        return self.ln_f(hidden_states)


class FalconForCausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transformer = FalconModel(c)
        self.lm_head = nn.Linear(c['hidden_size'], c['vocab_size'], bias=False)
        self.lm_head.weight = self.transformer.word_embeddings.weight

    def forward(self, input_ids, attention_mask):
        return self.lm_head(self.transformer(input_ids, attention_mask))


# ---- ViT (modeling_vit.py) and DeiT (modeling_deit.py): the whole models at any image size ----------

class ViTEmbeddingsScaleFactor(ViTEmbeddings):
    """ViTEmbeddings' interpolate_pos_encoding as transformers first wrote it (DINO's code): the table
    resized by scale_factor ((h0 + 0.1) / sqrt(N), (w0 + 0.1) / sqrt(N)), so the output is h0 x w0
    but the source coordinates are (dst + 0.5) * sqrt(N) / (h0 + 0.1) - 0.5, not size='s
    (dst + 0.5) * sqrt(N) / h0 - 0.5; at h0 = sqrt(N) with a non-square image it is no identity."""

    def interpolate_pos_encoding(self, embeddings, height, width):
        npatch = embeddings.shape[1] - 1
        N = self.position_embeddings.shape[1] - 1
        if npatch == N and height == width:
            return self.position_embeddings
        class_pos_embed = self.position_embeddings[:, 0]
        patch_pos_embed = self.position_embeddings[:, 1:]
        dim = embeddings.shape[-1]
        h0 = height // self.patch_size
        w0 = width // self.patch_size
        h0, w0 = h0 + 0.1, w0 + 0.1
        patch_pos_embed = F.interpolate(
            patch_pos_embed.reshape(1, int(math.sqrt(N)), int(math.sqrt(N)), dim).permute(0, 3, 1, 2),
            scale_factor=(h0 / math.sqrt(N), w0 / math.sqrt(N)), mode='bicubic', align_corners=False)
        assert int(h0) == patch_pos_embed.shape[-2] and int(w0) == patch_pos_embed.shape[-1]
        patch_pos_embed = patch_pos_embed.permute(0, 2, 3, 1).view(1, -1, dim)
        return torch.cat((class_pos_embed.unsqueeze(0), patch_pos_embed), dim=1)


class ViTSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.num_attention_heads = c['num_attention_heads']
        self.attention_head_size = int(c['hidden_size'] / c['num_attention_heads'])
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query = nn.Linear(c['hidden_size'], self.all_head_size, bias=c['qkv_bias'])
        self.key = nn.Linear(c['hidden_size'], self.all_head_size, bias=c['qkv_bias'])
        self.value = nn.Linear(c['hidden_size'], self.all_head_size, bias=c['qkv_bias'])

    def transpose_for_scores(self, x):
        return x.view(x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)).permute(0, 2, 1, 3)

    def forward(self, hidden_states):
        mixed_query_layer = self.query(hidden_states)
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        query_layer = self.transpose_for_scores(mixed_query_layer)
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2)) / math.sqrt(self.attention_head_size)
        attention_probs = F.softmax(attention_scores, dim=-1)
        context_layer = torch.matmul(attention_probs, value_layer).permute(0, 2, 1, 3).contiguous()
        return context_layer.view(context_layer.size()[:-2] + (self.all_head_size,))


class ViTSelfOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c['hidden_size'], c['hidden_size'])

    def forward(self, hidden_states):
        return self.dense(hidden_states)


class ViTAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = ViTSelfAttention(c)
        self.output = ViTSelfOutput(c)

    def forward(self, hidden_states):
        return self.output(self.attention(hidden_states))


class ViTIntermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c['hidden_size'], c['intermediate_size'])

    def forward(self, hidden_states):
        return F.gelu(self.dense(hidden_states))


class ViTOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c['intermediate_size'], c['hidden_size'])

    def forward(self, hidden_states, input_tensor):
        return self.dense(hidden_states) + input_tensor


class ViTLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = ViTAttention(c)
        self.intermediate = ViTIntermediate(c)
        self.output = ViTOutput(c)
        self.layernorm_before = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])
        self.layernorm_after = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])

    def forward(self, hidden_states):
        hidden_states = self.attention(self.layernorm_before(hidden_states)) + hidden_states
        return self.output(self.intermediate(self.layernorm_after(hidden_states)), hidden_states)


class ViTEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([ViTLayer(c) for _ in range(c['num_hidden_layers'])])

    def forward(self, hidden_states):
        for layer in self.layer:
            hidden_states = layer(hidden_states)
        return hidden_states


class ViTModel(nn.Module):
    """add_pooling_layer False (as ViTForImageClassification builds it); embeddings: the class of
    the transformers release ported (ViTEmbeddings: size=; ViTEmbeddingsScaleFactor: scale_factor)."""

    def __init__(self, c, embeddings=ViTEmbeddings):
        super().__init__()
        self.embeddings = embeddings(c)
        self.encoder = ViTEncoder(c)
        self.layernorm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])

    def forward(self, pixel_values):
        return self.layernorm(self.encoder(self.embeddings(pixel_values)))


class ViTForImageClassification(nn.Module):
    def __init__(self, c, embeddings=ViTEmbeddings):
        super().__init__()
        self.vit = ViTModel(c, embeddings)
        self.classifier = nn.Linear(c['hidden_size'], c['num_labels'])

    def forward(self, pixel_values):
        return self.classifier(self.vit(pixel_values)[:, 0, :])


class DeiTEmbeddings(nn.Module):
    """The class and distillation tokens, their two rows of the table kept, the patch rows bicubic to
    size=(height // p, width // p); the table itself at the native square grid (upstream: unless
    torch.jit traces)."""

    def __init__(self, c):
        super().__init__()
        self.cls_token = nn.Parameter(torch.zeros(1, 1, c['hidden_size']))
        self.distillation_token = nn.Parameter(torch.zeros(1, 1, c['hidden_size']))
        self.patch_embeddings = ViTPatchEmbeddings(c)
        num_patches = (c['image_size'] // c['patch_size']) ** 2
        self.position_embeddings = nn.Parameter(torch.zeros(1, num_patches + 2, c['hidden_size']))
        self.patch_size = c['patch_size']

    def interpolate_pos_encoding(self, embeddings, height, width):
        num_patches = embeddings.shape[1] - 2
        num_positions = self.position_embeddings.shape[1] - 2
        if num_patches == num_positions and height == width:
            return self.position_embeddings
        class_and_dist_pos_embed = self.position_embeddings[:, :2]
        patch_pos_embed = self.position_embeddings[:, 2:]
        dim = embeddings.shape[-1]
        new_height = height // self.patch_size
        new_width = width // self.patch_size
        sqrt_num_positions = int(num_positions ** 0.5)
        patch_pos_embed = patch_pos_embed.reshape(1, sqrt_num_positions, sqrt_num_positions, dim).permute(0, 3, 1, 2)
        patch_pos_embed = F.interpolate(patch_pos_embed, size=(new_height, new_width), mode='bicubic', align_corners=False)
        patch_pos_embed = patch_pos_embed.permute(0, 2, 3, 1).view(1, -1, dim)
        return torch.cat((class_and_dist_pos_embed, patch_pos_embed), dim=1)

    def forward(self, pixel_values):
        """interpolate_pos_encoding=True."""
        _, _, height, width = pixel_values.shape
        embeddings = self.patch_embeddings(pixel_values)
        batch_size, seq_length, _ = embeddings.size()
        cls_tokens = self.cls_token.expand(batch_size, -1, -1)
        distillation_tokens = self.distillation_token.expand(batch_size, -1, -1)
        embeddings = torch.cat((cls_tokens, distillation_tokens, embeddings), dim=1)
        return embeddings + self.interpolate_pos_encoding(embeddings, height, width)


class DeiTForImageClassificationWithTeacher(nn.Module):
    """DeiTModel (add_pooling_layer False: embeddings, ViT's layers, layernorm) and the two heads:
    the class token's and the distillation token's logits, averaged."""

    def __init__(self, c):
        super().__init__()
        self.deit = ViTModel(c, DeiTEmbeddings)
        self.cls_classifier = nn.Linear(c['hidden_size'], c['num_labels'])
        self.distillation_classifier = nn.Linear(c['hidden_size'], c['num_labels'])

    def forward(self, pixel_values):
        sequence_output = self.deit(pixel_values)
        cls_logits = self.cls_classifier(sequence_output[:, 0, :])
        distillation_logits = self.distillation_classifier(sequence_output[:, 1, :])
        return (cls_logits + distillation_logits) / 2


# ---- CvT (modeling_cvt.py) -------------------------------------------------------------------------

class CvtConvEmbeddings(nn.Module):
    def __init__(self, patch_size, num_channels, embed_dim, stride, padding):
        super().__init__()
        self.projection = nn.Conv2d(num_channels, embed_dim, kernel_size=patch_size, stride=stride, padding=padding)
        self.normalization = nn.LayerNorm(embed_dim)

    def forward(self, pixel_values):
        pixel_values = self.projection(pixel_values)
        batch_size, num_channels, height, width = pixel_values.shape
        hidden_size = height * width
        pixel_values = pixel_values.view(batch_size, num_channels, hidden_size).permute(0, 2, 1)
        pixel_values = self.normalization(pixel_values)
        return pixel_values.permute(0, 2, 1).view(batch_size, num_channels, height, width)


class CvtEmbeddings(nn.Module):
    def __init__(self, patch_size, num_channels, embed_dim, stride, padding):
        super().__init__()
        self.convolution_embeddings = CvtConvEmbeddings(patch_size, num_channels, embed_dim, stride, padding)

    def forward(self, pixel_values):
        return self.convolution_embeddings(pixel_values)


class CvtSelfAttentionConvProjection(nn.Module):
    def __init__(self, embed_dim, kernel_size, padding, stride):
        super().__init__()
        self.convolution = nn.Conv2d(embed_dim, embed_dim, kernel_size=kernel_size, padding=padding, stride=stride,
                                     bias=False, groups=embed_dim)
        self.normalization = nn.BatchNorm2d(embed_dim)

    def forward(self, hidden_state):
        return self.normalization(self.convolution(hidden_state))


class CvtSelfAttentionLinearProjection(nn.Module):
    def forward(self, hidden_state):
        batch_size, num_channels, height, width = hidden_state.shape
        return hidden_state.view(batch_size, num_channels, height * width).permute(0, 2, 1)


class CvtSelfAttentionProjection(nn.Module):
    def __init__(self, embed_dim, kernel_size, padding, stride):
        super().__init__()
        self.convolution_projection = CvtSelfAttentionConvProjection(embed_dim, kernel_size, padding, stride)
        self.linear_projection = CvtSelfAttentionLinearProjection()

    def forward(self, hidden_state):
        return self.linear_projection(self.convolution_projection(hidden_state))


class CvtSelfAttention(nn.Module):
    def __init__(self, num_heads, embed_dim, kernel_size, padding_q, padding_kv, stride_q, stride_kv, qkv_bias, with_cls_token):
        super().__init__()
        self.scale = embed_dim ** -0.5
        self.with_cls_token = with_cls_token
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.convolution_projection_query = CvtSelfAttentionProjection(embed_dim, kernel_size, padding_q, stride_q)
        self.convolution_projection_key = CvtSelfAttentionProjection(embed_dim, kernel_size, padding_kv, stride_kv)
        self.convolution_projection_value = CvtSelfAttentionProjection(embed_dim, kernel_size, padding_kv, stride_kv)
        self.projection_query = nn.Linear(embed_dim, embed_dim, bias=qkv_bias)
        self.projection_key = nn.Linear(embed_dim, embed_dim, bias=qkv_bias)
        self.projection_value = nn.Linear(embed_dim, embed_dim, bias=qkv_bias)

    def rearrange_for_multi_head_attention(self, hidden_state):
        batch_size, hidden_size, _ = hidden_state.shape
        head_dim = self.embed_dim // self.num_heads
        return hidden_state.view(batch_size, hidden_size, self.num_heads, head_dim).permute(0, 2, 1, 3)

    def forward(self, hidden_state, height, width):
        if self.with_cls_token:
            cls_token, hidden_state = torch.split(hidden_state, [1, height * width], 1)
        batch_size, hidden_size, num_channels = hidden_state.shape
        hidden_state = hidden_state.permute(0, 2, 1).view(batch_size, num_channels, height, width)
        key = self.convolution_projection_key(hidden_state)
        query = self.convolution_projection_query(hidden_state)
        value = self.convolution_projection_value(hidden_state)
        if self.with_cls_token:
            query = torch.cat((cls_token, query), dim=1)
            key = torch.cat((cls_token, key), dim=1)
            value = torch.cat((cls_token, value), dim=1)
        head_dim = self.embed_dim // self.num_heads
        query = self.rearrange_for_multi_head_attention(self.projection_query(query))
        key = self.rearrange_for_multi_head_attention(self.projection_key(key))
        value = self.rearrange_for_multi_head_attention(self.projection_value(value))
        attention_score = torch.einsum('bhlk,bhtk->bhlt', [query, key]) * self.scale
        attention_probs = F.softmax(attention_score, dim=-1)
        context = torch.einsum('bhlt,bhtv->bhlv', [attention_probs, value])
        _, _, hidden_size, _ = context.shape
        return context.permute(0, 2, 1, 3).contiguous().view(batch_size, hidden_size, self.num_heads * head_dim)


class CvtSelfOutput(nn.Module):
    def __init__(self, embed_dim):
        super().__init__()
        self.dense = nn.Linear(embed_dim, embed_dim)

    def forward(self, hidden_state, input_tensor):
        return self.dense(hidden_state)


class CvtAttention(nn.Module):
    def __init__(self, *args):
        super().__init__()
        self.attention = CvtSelfAttention(*args)
        self.output = CvtSelfOutput(args[1])

    def forward(self, hidden_state, height, width):
        return self.output(self.attention(hidden_state, height, width), hidden_state)


class CvtIntermediate(nn.Module):
    def __init__(self, embed_dim, mlp_ratio):
        super().__init__()
        self.dense = nn.Linear(embed_dim, int(embed_dim * mlp_ratio))
        self.activation = nn.GELU()

    def forward(self, hidden_state):
        return self.activation(self.dense(hidden_state))


class CvtOutput(nn.Module):
    def __init__(self, embed_dim, mlp_ratio):
        super().__init__()
        self.dense = nn.Linear(int(embed_dim * mlp_ratio), embed_dim)

    def forward(self, hidden_state, input_tensor):
        return self.dense(hidden_state) + input_tensor


class CvtLayer(nn.Module):
    """Pre-norm attention (convolutional q, k, v projections on the tokens as an image) and MLP;
    drop_path is the identity in eval."""

    def __init__(self, num_heads, embed_dim, kernel_size, padding_q, padding_kv, stride_q, stride_kv, qkv_bias, mlp_ratio,
                 with_cls_token):
        super().__init__()
        self.attention = CvtAttention(num_heads, embed_dim, kernel_size, padding_q, padding_kv, stride_q, stride_kv, qkv_bias,
                                      with_cls_token)
        self.intermediate = CvtIntermediate(embed_dim, mlp_ratio)
        self.output = CvtOutput(embed_dim, mlp_ratio)
        self.layernorm_before = nn.LayerNorm(embed_dim)
        self.layernorm_after = nn.LayerNorm(embed_dim)

    def forward(self, hidden_state, height, width):
        hidden_state = self.attention(self.layernorm_before(hidden_state), height, width) + hidden_state
        return self.output(self.intermediate(self.layernorm_after(hidden_state)), hidden_state)


class CvtStage(nn.Module):
    def __init__(self, c, stage):
        super().__init__()
        self.c = c
        self.stage = stage
        if c['cls_token'][stage]:
            self.cls_token = nn.Parameter(torch.randn(1, 1, c['embed_dim'][-1]))
        self.embedding = CvtEmbeddings(c['patch_sizes'][stage], c['num_channels'] if stage == 0 else c['embed_dim'][stage - 1],
                                       c['embed_dim'][stage], c['patch_stride'][stage], c['patch_padding'][stage])
        self.layers = nn.Sequential(*[
            CvtLayer(c['num_heads'][stage], c['embed_dim'][stage], c['kernel_qkv'][stage], c['padding_q'][stage],
                     c['padding_kv'][stage], c['stride_q'][stage], c['stride_kv'][stage], c['qkv_bias'][stage],
                     c['mlp_ratio'][stage], c['cls_token'][stage])
            for _ in range(c['depth'][stage])])

    def forward(self, hidden_state):
        cls_token = None
        hidden_state = self.embedding(hidden_state)
        batch_size, num_channels, height, width = hidden_state.shape
        hidden_state = hidden_state.view(batch_size, num_channels, height * width).permute(0, 2, 1)
        if self.c['cls_token'][self.stage]:
            cls_token = self.cls_token.expand(batch_size, -1, -1)
            hidden_state = torch.cat((cls_token, hidden_state), dim=1)
        for layer in self.layers:
            hidden_state = layer(hidden_state, height, width)
        if self.c['cls_token'][self.stage]:
            cls_token, hidden_state = torch.split(hidden_state, [1, height * width], 1)
        hidden_state = hidden_state.permute(0, 2, 1).view(batch_size, num_channels, height, width)
        return hidden_state, cls_token


class CvtEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.stages = nn.ModuleList([CvtStage(c, i) for i in range(len(c['depth']))])

    def forward(self, pixel_values):
        hidden_state, cls_token = pixel_values, None
        for stage in self.stages:
            hidden_state, cls_token = stage(hidden_state)
        return hidden_state, cls_token


class CvtModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.encoder = CvtEncoder(c)

    def forward(self, pixel_values):
        return self.encoder(pixel_values)


class CvtForImageClassification(nn.Module):
    """The last stage's class token (layernorm, mean over its one row) into the classifier; without
    one, the mean of the last stage's tokens."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        self.cvt = CvtModel(c)
        self.layernorm = nn.LayerNorm(c['embed_dim'][-1])
        self.classifier = nn.Linear(c['embed_dim'][-1], c['num_labels'])

    def forward(self, pixel_values):
        sequence_output, cls_token = self.cvt(pixel_values)
        if self.c['cls_token'][-1]:
            sequence_output = self.layernorm(cls_token)
        else:
            batch_size, num_channels, height, width = sequence_output.shape
            sequence_output = self.layernorm(sequence_output.view(batch_size, num_channels, height * width).permute(0, 2, 1))
        return self.classifier(sequence_output.mean(dim=1))


# ---- PVT v2 (modeling_pvt_v2.py) -----------------------------------------------------------------

class PvtV2OverlapPatchEmbeddings(nn.Module):
    def __init__(self, c, layer_idx):
        super().__init__()
        patch_size = c['patch_sizes'][layer_idx]
        num_channels = c['num_channels'] if layer_idx == 0 else c['hidden_sizes'][layer_idx - 1]
        self.proj = nn.Conv2d(num_channels, c['hidden_sizes'][layer_idx], kernel_size=patch_size, stride=c['strides'][layer_idx],
                              padding=(patch_size // 2, patch_size // 2))
        self.layer_norm = nn.LayerNorm(c['hidden_sizes'][layer_idx], eps=c['layer_norm_eps'])

    def forward(self, pixel_values):
        embeddings = self.proj(pixel_values)
        _, _, height, width = embeddings.shape
        embeddings = embeddings.flatten(2).transpose(1, 2)
        return self.layer_norm(embeddings), height, width


class PvtV2DepthWiseConv(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 3, 1, 1, bias=True, groups=dim)

    def forward(self, hidden_states, height, width):
        batch_size, seq_len, num_channels = hidden_states.shape
        hidden_states = hidden_states.transpose(1, 2).view(batch_size, num_channels, height, width)
        return self.dwconv(hidden_states).flatten(2).transpose(1, 2)


class PvtV2SelfAttention(nn.Module):
    """Spatial-reduction attention: keys and values from the tokens reshaped to [b, c, h, w] and
    reduced by a strided conv (sr_ratio > 1), or with linear_attention pooled to 7 x 7 (adaptive)
    and a 1 x 1 conv, LayerNorm and gelu."""

    def __init__(self, c, hidden_size, num_attention_heads, spatial_reduction_ratio):
        super().__init__()
        self.linear_attention = c['linear_attention']
        self.num_attention_heads = num_attention_heads
        self.attention_head_size = int(hidden_size / num_attention_heads)
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query = nn.Linear(hidden_size, self.all_head_size, bias=c['qkv_bias'])
        self.key = nn.Linear(hidden_size, self.all_head_size, bias=c['qkv_bias'])
        self.value = nn.Linear(hidden_size, self.all_head_size, bias=c['qkv_bias'])
        self.proj = nn.Linear(hidden_size, hidden_size)
        self.spatial_reduction_ratio = spatial_reduction_ratio
        if self.linear_attention:
            self.pool = nn.AdaptiveAvgPool2d(7)
            self.spatial_reduction = nn.Conv2d(hidden_size, hidden_size, kernel_size=1, stride=1)
            self.layer_norm = nn.LayerNorm(hidden_size, eps=c['layer_norm_eps'])
            self.act = nn.GELU()
        elif spatial_reduction_ratio > 1:
            self.spatial_reduction = nn.Conv2d(hidden_size, hidden_size, kernel_size=spatial_reduction_ratio,
                                               stride=spatial_reduction_ratio)
            self.layer_norm = nn.LayerNorm(hidden_size, eps=c['layer_norm_eps'])

    def transpose_for_scores(self, hidden_states):
        new_shape = hidden_states.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        return hidden_states.view(new_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states, height, width):
        batch_size, seq_len, num_channels = hidden_states.shape
        query_layer = self.transpose_for_scores(self.query(hidden_states))
        if self.linear_attention:
            hidden_states = hidden_states.permute(0, 2, 1).reshape(batch_size, num_channels, height, width)
            hidden_states = self.spatial_reduction(self.pool(hidden_states)).reshape(batch_size, num_channels, -1).permute(0, 2, 1)
            hidden_states = self.act(self.layer_norm(hidden_states))
        elif self.spatial_reduction_ratio > 1:
            hidden_states = hidden_states.permute(0, 2, 1).reshape(batch_size, num_channels, height, width)
            hidden_states = self.spatial_reduction(hidden_states).reshape(batch_size, num_channels, -1).permute(0, 2, 1)
            hidden_states = self.layer_norm(hidden_states)
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2)) / math.sqrt(self.attention_head_size)
        attention_probs = F.softmax(attention_scores, dim=-1)
        context_layer = (attention_probs @ value_layer).transpose(1, 2).reshape(batch_size, seq_len, num_channels)
        return self.proj(context_layer)


class PvtV2ConvFeedForwardNetwork(nn.Module):
    def __init__(self, c, in_features, hidden_features):
        super().__init__()
        self.dense1 = nn.Linear(in_features, hidden_features)
        self.dwconv = PvtV2DepthWiseConv(hidden_features)
        self.dense2 = nn.Linear(hidden_features, in_features)
        self.relu = nn.ReLU() if c['linear_attention'] else nn.Identity()

    def forward(self, hidden_states, height, width):
        hidden_states = self.relu(self.dense1(hidden_states))
        hidden_states = F.gelu(self.dwconv(hidden_states, height, width))
        return self.dense2(hidden_states)


class PvtV2BlockLayer(nn.Module):
    def __init__(self, c, layer_idx):
        super().__init__()
        hidden_size = c['hidden_sizes'][layer_idx]
        self.layer_norm_1 = nn.LayerNorm(hidden_size, eps=c['layer_norm_eps'])
        self.attention = PvtV2SelfAttention(c, hidden_size, c['num_attention_heads'][layer_idx], c['sr_ratios'][layer_idx])
        self.layer_norm_2 = nn.LayerNorm(hidden_size, eps=c['layer_norm_eps'])
        self.mlp = PvtV2ConvFeedForwardNetwork(c, hidden_size, int(hidden_size * c['mlp_ratios'][layer_idx]))

    def forward(self, hidden_states, height, width):
        hidden_states = self.attention(self.layer_norm_1(hidden_states), height, width) + hidden_states
        return hidden_states + self.mlp(self.layer_norm_2(hidden_states), height, width)


class PvtV2EncoderLayer(nn.Module):
    def __init__(self, c, layer_idx):
        super().__init__()
        self.patch_embedding = PvtV2OverlapPatchEmbeddings(c, layer_idx)
        self.blocks = nn.ModuleList([PvtV2BlockLayer(c, layer_idx) for _ in range(c['depths'][layer_idx])])
        self.layer_norm = nn.LayerNorm(c['hidden_sizes'][layer_idx], eps=c['layer_norm_eps'])

    def forward(self, hidden_states):
        hidden_states, height, width = self.patch_embedding(hidden_states)
        for block in self.blocks:
            hidden_states = block(hidden_states, height, width)
        return self.layer_norm(hidden_states), height, width


class PvtV2Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layers = nn.ModuleList([PvtV2EncoderLayer(c, i) for i in range(c['num_encoder_blocks'])])

    def forward(self, pixel_values):
        batch_size = pixel_values.shape[0]
        hidden_states = pixel_values
        for layer in self.layers:
            hidden_states, height, width = layer(hidden_states)
            hidden_states = hidden_states.reshape(batch_size, height, width, -1).permute(0, 3, 1, 2).contiguous()
        return hidden_states


class PvtV2Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.encoder = PvtV2Encoder(c)

    def forward(self, pixel_values):
        return self.encoder(pixel_values)


class PvtV2ForImageClassification(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.pvt_v2 = PvtV2Model(c)
        self.classifier = nn.Linear(c['hidden_sizes'][-1], c['num_labels'])

    def forward(self, pixel_values):
        sequence_output = self.pvt_v2(pixel_values)
        batch_size = sequence_output.shape[0]
        sequence_output = sequence_output.permute(0, 2, 3, 1).reshape(batch_size, -1, self.c['hidden_sizes'][-1])
        return self.classifier(sequence_output.mean(dim=1))


# ---- GPT-J (modeling_gptj.py) --------------------------------------------------------------------

def gptj_create_sinusoidal_positions(num_pos, dim):
    """create_sinusoidal_positions: [num_pos, dim], sin of each position's angles then cos (dim / 2 each)."""
    inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.int64) / dim))
    sinusoid_inp = torch.einsum('i , j -> i j', torch.arange(num_pos, dtype=torch.int64).float(), inv_freq).float()
    return torch.cat((torch.sin(sinusoid_inp), torch.cos(sinusoid_inp)), dim=1)


def rotate_every_two(x):
    """GPT-J's interleaved rotation: pairs (x0, x1), (x2, x3), ... -> (-x1, x0), (-x3, x2), ..."""
    x1 = x[:, :, :, ::2]
    x2 = x[:, :, :, 1::2]
    x = torch.stack((-x2, x1), dim=-1)
    return x.flatten(-2)


def gptj_apply_rotary_pos_emb(tensor, sin, cos):
    sin = torch.repeat_interleave(sin[:, :, None, :], 2, 3)
    cos = torch.repeat_interleave(cos[:, :, None, :], 2, 3)
    return (tensor * cos) + (rotate_every_two(tensor) * sin)


class GPTJAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_dim = c['n_embd']
        self.num_attention_heads = c['n_head']
        self.head_dim = self.embed_dim // self.num_attention_heads
        self.scale_attn = torch.sqrt(torch.tensor(self.head_dim, dtype=torch.float32)).to(torch.get_default_dtype())
        self.k_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=False)
        self.v_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=False)
        self.q_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=False)
        self.out_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=False)
        self.rotary_dim = c['rotary_dim']
        # a plain attribute upstream (not a buffer: not in the state dict)
        self.embed_positions = gptj_create_sinusoidal_positions(c['n_positions'], self.rotary_dim or self.embed_dim)

    def _split_heads(self, tensor, rotary):
        tensor = tensor.view(tensor.size()[:-1] + (self.num_attention_heads, self.head_dim))
        return tensor if rotary else tensor.permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask, position_ids):
        query = self._split_heads(self.q_proj(hidden_states), True)
        key = self._split_heads(self.k_proj(hidden_states), True)
        value = self._split_heads(self.v_proj(hidden_states), False)
        embed_positions = self.embed_positions.repeat(position_ids.shape[0], 1, 1)
        repeated_position_ids = position_ids.unsqueeze(-1).repeat(1, 1, embed_positions.shape[-1])
        sincos = torch.gather(embed_positions, 1, repeated_position_ids)
        sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
        if self.rotary_dim is not None:
            k_rot, k_pass = key[:, :, :, :self.rotary_dim], key[:, :, :, self.rotary_dim:]
            q_rot, q_pass = query[:, :, :, :self.rotary_dim], query[:, :, :, self.rotary_dim:]
            key = torch.cat([gptj_apply_rotary_pos_emb(k_rot, sin, cos), k_pass], dim=-1)
            query = torch.cat([gptj_apply_rotary_pos_emb(q_rot, sin, cos), q_pass], dim=-1)
        else:
            key = gptj_apply_rotary_pos_emb(key, sin, cos)
            query = gptj_apply_rotary_pos_emb(query, sin, cos)
        key = key.permute(0, 2, 1, 3)
        query = query.permute(0, 2, 1, 3)
        attn_weights = torch.matmul(query.to(torch.float32), key.to(torch.float32).transpose(-1, -2)) / self.scale_attn
        attn_weights = attn_weights + attention_mask[:, :, :, :key.shape[-2]]
        attn_output = torch.matmul(F.softmax(attn_weights, dim=-1).to(value.dtype), value)
        attn_output = attn_output.permute(0, 2, 1, 3).contiguous()
        return self.out_proj(attn_output.view(attn_output.size()[:-2] + (self.embed_dim,)))


class GPTJMLP(nn.Module):
    def __init__(self, intermediate_size, c):
        super().__init__()
        self.fc_in = nn.Linear(c['n_embd'], intermediate_size)
        self.fc_out = nn.Linear(intermediate_size, c['n_embd'])
        self.act = NewGELUActivation()

    def forward(self, hidden_states):
        return self.fc_out(self.act(self.fc_in(hidden_states)))


class GPTJBlock(nn.Module):
    """Attention and MLP in parallel on one LayerNorm's output, both added to the residual."""

    def __init__(self, c):
        super().__init__()
        inner_dim = c['n_inner'] if c['n_inner'] is not None else 4 * c['n_embd']
        self.ln_1 = nn.LayerNorm(c['n_embd'], eps=c['layer_norm_epsilon'])
        self.attn = GPTJAttention(c)
        self.mlp = GPTJMLP(inner_dim, c)

    def forward(self, hidden_states, attention_mask, position_ids):
        residual = hidden_states
        hidden_states = self.ln_1(hidden_states)
        attn_outputs = self.attn(hidden_states, attention_mask, position_ids)
        feed_forward_hidden_states = self.mlp(hidden_states)
        return attn_outputs + feed_forward_hidden_states + residual


class GPTJModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c['vocab_size'], c['n_embd'])
        self.h = nn.ModuleList([GPTJBlock(c) for _ in range(c['n_layer'])])
        self.ln_f = nn.LayerNorm(c['n_embd'], eps=c['layer_norm_epsilon'])

    def forward(self, input_ids, attention_mask):
        inputs_embeds = self.wte(input_ids)
        batch_size, seq_length = input_ids.shape
        cache_position = torch.arange(0, seq_length)
        position_ids = cache_position.unsqueeze(0)
        causal_mask = prepare_4d_causal_attention_mask_with_cache_position(
            attention_mask, seq_length, attention_mask.shape[-1], inputs_embeds.dtype, cache_position, batch_size)
        hidden_states = inputs_embeds
        for block in self.h:
            hidden_states = block(hidden_states, causal_mask, position_ids)
        return self.ln_f(hidden_states)


class GPTJForCausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transformer = GPTJModel(c)
        self.lm_head = nn.Linear(c['n_embd'], c['vocab_size'])  # not tied (tie_word_embeddings false), with a bias

    def forward(self, input_ids, attention_mask):
        return self.lm_head(self.transformer(input_ids, attention_mask))


# ---- M2M100's encoder (modeling_m2m_100.py) and Speech2Text's (modeling_speech_to_text.py) -------

class M2M100SinusoidalPositionalEmbedding(nn.Module):
    """Sinusoidal positions of any length: the table (a non-persistent buffer) is made for
    num_positions + offset rows (+ offset again inside make_weights) and made again, longer, in
    forward when a sequence needs more rows; the row padding_idx is zeros."""

    def __init__(self, num_positions, embedding_dim, padding_idx=None):
        super().__init__()
        self.offset = 2
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        self.make_weights(num_positions + self.offset, embedding_dim, padding_idx)

    def make_weights(self, num_embeddings, embedding_dim, padding_idx=None):
        emb_weights = self.get_embedding(num_embeddings + self.offset, embedding_dim, padding_idx)
        self.register_buffer('weights', emb_weights, persistent=False)

    @staticmethod
    def get_embedding(num_embeddings, embedding_dim, padding_idx=None):
        half_dim = embedding_dim // 2
        emb = math.log(10000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim, dtype=torch.int64).float() * -emb)
        emb = torch.arange(num_embeddings, dtype=torch.int64).float().unsqueeze(1) * emb.unsqueeze(0)
        emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).view(num_embeddings, -1)
        if embedding_dim % 2 == 1:
            emb = torch.cat([emb, torch.zeros(num_embeddings, 1)], dim=1)
        if padding_idx is not None:
            emb[padding_idx, :] = 0
        return emb.to(torch.get_default_dtype())

    @torch.no_grad()
    def forward(self, input_ids):
        bsz, seq_len = input_ids.size()
        position_ids = create_position_ids_from_input_ids(input_ids, self.padding_idx)
        max_pos = self.padding_idx + 1 + seq_len
        if max_pos > self.weights.size(0):
            self.make_weights(max_pos + self.offset, self.embedding_dim, self.padding_idx)
        return self.weights.index_select(0, position_ids.view(-1)).view(bsz, seq_len, self.weights.shape[-1]).detach()


class M2M100EncoderLayer(nn.Module):
    """MBart's pre-norm encoder layer (M2M100's and Speech2Text's copy it): attention then the relu FFN."""

    def __init__(self, c):
        super().__init__()
        d = c['d_model']
        self.self_attn = Wav2Vec2Attention(d, c['encoder_attention_heads'])  # BartAttention
        self.self_attn_layer_norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, c['encoder_ffn_dim'])
        self.fc2 = nn.Linear(c['encoder_ffn_dim'], d)
        self.final_layer_norm = nn.LayerNorm(d)

    def forward(self, hidden_states, attention_mask):
        residual = hidden_states
        hidden_states = self.self_attn(self.self_attn_layer_norm(hidden_states), attention_mask=attention_mask)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.fc2(F.relu(self.fc1(self.final_layer_norm(hidden_states))))
        return residual + hidden_states


class M2M100Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.padding_idx = c['pad_token_id']
        self.embed_scale = math.sqrt(c['d_model']) if c['scale_embedding'] else 1.0
        self.embed_tokens = nn.Embedding(c['vocab_size'], c['d_model'], self.padding_idx)  # M2M100ScaledWordEmbedding's weight
        self.embed_positions = M2M100SinusoidalPositionalEmbedding(c['max_position_embeddings'], c['d_model'], self.padding_idx)
        self.layers = nn.ModuleList([M2M100EncoderLayer(c) for _ in range(c['encoder_layers'])])
        self.layer_norm = nn.LayerNorm(c['d_model'])

    def forward(self, input_ids, attention_mask):
        inputs_embeds = self.embed_tokens(input_ids) * self.embed_scale
        embed_pos = self.embed_positions(input_ids)
        hidden_states = inputs_embeds + embed_pos
        mask = expand_mask(attention_mask, inputs_embeds.dtype)
        for layer in self.layers:
            hidden_states = layer(hidden_states, mask)
        return self.layer_norm(hidden_states)


class Conv1dSubsampler(nn.Module):
    """Speech2Text's front end: Conv1d layers of stride 2 (padding k // 2), each followed by a GLU
    over the channels; T frames -> (T - 1) // 2 + 1 per layer."""

    def __init__(self, c):
        super().__init__()
        self.num_layers = c['num_conv_layers']
        self.in_channels = c['input_feat_per_channel'] * c['input_channels']
        self.mid_channels = c['conv_channels']
        self.out_channels = c['d_model']
        self.kernel_sizes = c['conv_kernel_sizes']
        self.conv_layers = nn.ModuleList(
            nn.Conv1d(self.in_channels if i == 0 else self.mid_channels // 2,
                      self.mid_channels if i < self.num_layers - 1 else self.out_channels * 2,
                      kernel_size=k, stride=2, padding=k // 2)
            for i, k in enumerate(self.kernel_sizes))

    def forward(self, input_features):
        hidden_states = input_features.transpose(1, 2).contiguous()  # -> B x (C x D) x T
        for conv in self.conv_layers:
            hidden_states = nn.functional.glu(conv(hidden_states), dim=1)
        return hidden_states.transpose(1, 2).contiguous()  # -> B x T x (C x D)


class Speech2TextEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed_scale = math.sqrt(c['d_model']) if c['scale_embedding'] else 1.0
        self.conv = Conv1dSubsampler(c)
        self.embed_positions = M2M100SinusoidalPositionalEmbedding(c['max_source_positions'], c['d_model'], c['pad_token_id'])
        self.layers = nn.ModuleList([M2M100EncoderLayer(c) for _ in range(c['encoder_layers'])])
        self.layer_norm = nn.LayerNorm(c['d_model'])

    def _get_feat_extract_output_lengths(self, input_lengths):
        for _ in range(self.c['num_conv_layers']):
            input_lengths = (input_lengths - 1) // 2 + 1
        return input_lengths

    def _get_feature_vector_attention_mask(self, feature_vector_length, attention_mask):
        if len(attention_mask.shape) > 2:
            attention_mask = attention_mask[:, :, -1]
        subsampled_lengths = self._get_feat_extract_output_lengths(attention_mask.sum(-1))
        bsz = attention_mask.size()[0]
        attention_mask = torch.zeros((bsz, feature_vector_length), dtype=attention_mask.dtype)
        attention_mask[(torch.arange(bsz), subsampled_lengths - 1)] = 1
        return attention_mask.flip([-1]).cumsum(-1).flip([-1]).long()

    def forward(self, input_features, attention_mask):
        inputs_embeds = self.embed_scale * self.conv(input_features)
        attention_mask = self._get_feature_vector_attention_mask(inputs_embeds.shape[1], attention_mask)
        padding_mask = attention_mask.ne(1).long()
        embed_pos = self.embed_positions(padding_mask)
        hidden_states = inputs_embeds + embed_pos
        mask = expand_mask(attention_mask, inputs_embeds.dtype)
        for layer in self.layers:
            hidden_states = layer(hidden_states, mask)
        return self.layer_norm(hidden_states)


# ---- Funnel Transformer (modeling_funnel.py), the base model: embeddings and the pooling encoder ----

FUNNEL_INF = 1e6


class FunnelEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c['vocab_size'], c['d_model'], padding_idx=c['pad_token_id'])
        self.layer_norm = nn.LayerNorm(c['d_model'], eps=c['layer_norm_eps'])

    def forward(self, input_ids):
        return self.layer_norm(self.word_embeddings(input_ids))


class FunnelAttentionStructure(nn.Module):
    """The relative_shift attention's inputs: the position vectors R of every block (computed at the
    run's length), the token-type matrix, the mask and the cls mask, pooled block by block."""
    cls_token_type_id = 2

    def __init__(self, c):
        super().__init__()
        self.c = c

    def init_attention_inputs(self, inputs_embeds, attention_mask, token_type_ids):
        seq_len = inputs_embeds.size(1)
        position_embeds = self.get_position_embeds(seq_len, inputs_embeds.dtype)
        token_type_mat = self.token_type_ids_to_mat(token_type_ids)
        cls_mask = F.pad(inputs_embeds.new_ones([seq_len - 1, seq_len - 1]), (1, 0, 1, 0)) if self.c['separate_cls'] else None
        return (position_embeds, token_type_mat, attention_mask, cls_mask)

    def token_type_ids_to_mat(self, token_type_ids):
        token_type_mat = token_type_ids[:, :, None] == token_type_ids[:, None]
        cls_ids = token_type_ids == self.cls_token_type_id
        cls_mat = cls_ids[:, :, None] | cls_ids[:, None]
        return cls_mat | token_type_mat

    def get_position_embeds(self, seq_len, dtype):
        d_model = self.c['d_model']
        freq_seq = torch.arange(0, d_model // 2, 1.0, dtype=torch.int64).to(dtype)
        inv_freq = 1 / (10000 ** (freq_seq / (d_model // 2)))
        rel_pos_id = torch.arange(-seq_len * 2, seq_len * 2, 1.0, dtype=torch.int64).to(dtype)
        zero_offset = seq_len * 2
        sinusoid = rel_pos_id[:, None] * inv_freq[None]
        pos_embed = torch.cat([torch.sin(sinusoid), torch.cos(sinusoid)], dim=-1)
        pos = torch.arange(0, seq_len, dtype=torch.int64).to(dtype)
        pooled_pos = pos
        position_embeds_list = []
        for block_index in range(0, len(self.c['block_sizes'])):
            if block_index == 0:
                position_embeds_pooling = None
            else:
                pooled_pos = self.stride_pool_pos(pos, block_index)
                stride = 2 ** (block_index - 1)
                rel_pos = self.relative_pos(pos, stride, pooled_pos, shift=2)
                rel_pos = rel_pos[:, None] + zero_offset
                rel_pos = rel_pos.expand(rel_pos.size(0), d_model)
                position_embeds_pooling = torch.gather(pos_embed, 0, rel_pos)
            pos = pooled_pos
            stride = 2 ** block_index
            rel_pos = self.relative_pos(pos, stride)
            rel_pos = rel_pos[:, None] + zero_offset
            rel_pos = rel_pos.expand(rel_pos.size(0), d_model)
            position_embeds_no_pooling = torch.gather(pos_embed, 0, rel_pos)
            position_embeds_list.append([position_embeds_no_pooling, position_embeds_pooling])
        return position_embeds_list

    def stride_pool_pos(self, pos_id, block_index):
        if self.c['separate_cls']:
            cls_pos = pos_id.new_tensor([-(2 ** block_index) + 1])
            pooled_pos_id = pos_id[1:-1] if self.c['truncate_seq'] else pos_id[1:]
            return torch.cat([cls_pos, pooled_pos_id[::2]], 0)
        return pos_id[::2]

    def relative_pos(self, pos, stride, pooled_pos=None, shift=1):
        if pooled_pos is None:
            pooled_pos = pos
        ref_point = pooled_pos[0] - pos[0]
        num_remove = shift * pooled_pos.shape[0]
        max_dist = ref_point + num_remove * stride
        min_dist = pooled_pos[0] - pos[-1]
        return torch.arange(max_dist, min_dist - 1, -stride, dtype=torch.long)

    def stride_pool(self, tensor, axis):
        if tensor is None:
            return None
        if isinstance(axis, (list, tuple)):
            for ax in axis:
                tensor = self.stride_pool(tensor, ax)
            return tensor
        axis %= tensor.ndim
        axis_slice = slice(None, -1, 2) if self.c['separate_cls'] and self.c['truncate_seq'] else slice(None, None, 2)
        enc_slice = tuple([slice(None)] * axis + [axis_slice])
        if self.c['separate_cls']:
            cls_slice = tuple([slice(None)] * axis + [slice(None, 1)])
            tensor = torch.cat([tensor[cls_slice], tensor], axis=axis)
        return tensor[enc_slice]

    def pool_tensor(self, tensor, mode='mean', stride=2):
        if tensor is None:
            return None
        if self.c['separate_cls']:
            suffix = tensor[:, :-1] if self.c['truncate_seq'] else tensor
            tensor = torch.cat([tensor[:, :1], suffix], dim=1)
        ndim = tensor.ndim
        if ndim == 2:
            tensor = tensor[:, None, :, None]
        elif ndim == 3:
            tensor = tensor[:, None, :, :]
        stride = (stride, 1)
        if mode == 'mean':
            tensor = F.avg_pool2d(tensor, stride, stride=stride, ceil_mode=True)
        elif mode == 'max':
            tensor = F.max_pool2d(tensor, stride, stride=stride, ceil_mode=True)
        else:  # min
            tensor = -F.max_pool2d(-tensor, stride, stride=stride, ceil_mode=True)
        if ndim == 2:
            return tensor[:, 0, :, 0]
        elif ndim == 3:
            return tensor[:, 0]
        return tensor

    def pre_attention_pooling(self, output, attention_inputs):
        position_embeds, token_type_mat, attention_mask, cls_mask = attention_inputs
        if self.c['pool_q_only']:
            token_type_mat = self.stride_pool(token_type_mat, 1)
            cls_mask = self.stride_pool(cls_mask, 0)
            output = self.pool_tensor(output, mode=self.c['pooling_type'])
        else:
            token_type_mat = self.stride_pool(token_type_mat, [1, 2])
            cls_mask = self.stride_pool(cls_mask, [1, 2])
            attention_mask = self.pool_tensor(attention_mask, mode='min')
            output = self.pool_tensor(output, mode=self.c['pooling_type'])
        return output, (position_embeds, token_type_mat, attention_mask, cls_mask)

    def post_attention_pooling(self, attention_inputs):
        position_embeds, token_type_mat, attention_mask, cls_mask = attention_inputs
        if self.c['pool_q_only']:
            token_type_mat = self.stride_pool(token_type_mat, 2)
            cls_mask = self.stride_pool(cls_mask, 1)
            attention_mask = self.pool_tensor(attention_mask, mode='min')
        return (position_embeds, token_type_mat, attention_mask, cls_mask)


def _relative_shift_gather(positional_attn, context_len, shift):
    batch_size, n_head, seq_len, max_rel_len = positional_attn.shape
    positional_attn = torch.reshape(positional_attn, [batch_size, n_head, max_rel_len, seq_len])
    positional_attn = positional_attn[:, :, shift:, :]
    positional_attn = torch.reshape(positional_attn, [batch_size, n_head, seq_len, max_rel_len - shift])
    return positional_attn[..., :context_len]


class FunnelRelMultiheadAttention(nn.Module):
    def __init__(self, c, block_index):
        super().__init__()
        self.c = c
        self.block_index = block_index
        d_model, n_head, d_head = c['d_model'], c['n_head'], c['d_head']
        self.q_head = nn.Linear(d_model, n_head * d_head, bias=False)
        self.k_head = nn.Linear(d_model, n_head * d_head)
        self.v_head = nn.Linear(d_model, n_head * d_head)
        self.r_w_bias = nn.Parameter(torch.zeros([n_head, d_head]))
        self.r_r_bias = nn.Parameter(torch.zeros([n_head, d_head]))
        self.r_kernel = nn.Parameter(torch.zeros([d_model, n_head, d_head]))
        self.r_s_bias = nn.Parameter(torch.zeros([n_head, d_head]))
        self.seg_embed = nn.Parameter(torch.zeros([2, n_head, d_head]))
        self.post_proj = nn.Linear(n_head * d_head, d_model)
        self.layer_norm = nn.LayerNorm(d_model, eps=c['layer_norm_eps'])
        self.scale = 1.0 / (d_head ** 0.5)

    def relative_positional_attention(self, position_embeds, q_head, context_len, cls_mask=None):
        shift = 2 if q_head.shape[1] != context_len else 1
        r = position_embeds[self.block_index][shift - 1]
        v = self.r_r_bias * self.scale
        w_r = self.r_kernel
        r_head = torch.einsum('td,dnh->tnh', r, w_r)
        positional_attn = torch.einsum('binh,tnh->bnit', q_head + v, r_head)
        positional_attn = _relative_shift_gather(positional_attn, context_len, shift)
        if cls_mask is not None:
            positional_attn *= cls_mask
        return positional_attn

    def relative_token_type_attention(self, token_type_mat, q_head, cls_mask=None):
        batch_size, seq_len, context_len = token_type_mat.shape
        r_s_bias = self.r_s_bias * self.scale
        token_type_bias = torch.einsum('bind,snd->bnis', q_head + r_s_bias, self.seg_embed)
        token_type_mat = token_type_mat[:, None].expand([batch_size, q_head.shape[2], seq_len, context_len])
        diff_token_type, same_token_type = torch.split(token_type_bias, 1, dim=-1)
        token_type_attn = torch.where(token_type_mat, same_token_type.expand(token_type_mat.shape),
                                      diff_token_type.expand(token_type_mat.shape))
        if cls_mask is not None:
            token_type_attn *= cls_mask
        return token_type_attn

    def forward(self, query, key, value, attention_inputs):
        position_embeds, token_type_mat, attention_mask, cls_mask = attention_inputs
        batch_size, seq_len, _ = query.shape
        context_len = key.shape[1]
        n_head, d_head = self.c['n_head'], self.c['d_head']
        q_head = self.q_head(query).view(batch_size, seq_len, n_head, d_head)
        k_head = self.k_head(key).view(batch_size, context_len, n_head, d_head)
        v_head = self.v_head(value).view(batch_size, context_len, n_head, d_head)
        q_head = q_head * self.scale
        r_w_bias = self.r_w_bias * self.scale
        content_score = torch.einsum('bind,bjnd->bnij', q_head + r_w_bias, k_head)
        positional_attn = self.relative_positional_attention(position_embeds, q_head, context_len, cls_mask)
        token_type_attn = self.relative_token_type_attention(token_type_mat, q_head, cls_mask)
        attn_score = content_score + positional_attn + token_type_attn
        attn_score = attn_score - FUNNEL_INF * (1 - attention_mask[:, None, None].float())
        attn_prob = torch.softmax(attn_score, dim=-1)
        attn_vec = torch.einsum('bnij,bjnd->bind', attn_prob, v_head)
        attn_out = self.post_proj(attn_vec.reshape(batch_size, seq_len, n_head * d_head))
        return self.layer_norm(query + attn_out)


class FunnelPositionwiseFFN(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.linear_1 = nn.Linear(c['d_model'], c['d_inner'])
        self.activation_function = NewGELUActivation()
        self.linear_2 = nn.Linear(c['d_inner'], c['d_model'])
        self.layer_norm = nn.LayerNorm(c['d_model'], c['layer_norm_eps'])

    def forward(self, hidden):
        return self.layer_norm(hidden + self.linear_2(self.activation_function(self.linear_1(hidden))))


class FunnelLayer(nn.Module):
    def __init__(self, c, block_index):
        super().__init__()
        self.attention = FunnelRelMultiheadAttention(c, block_index)
        self.ffn = FunnelPositionwiseFFN(c)

    def forward(self, query, key, value, attention_inputs):
        return self.ffn(self.attention(query, key, value, attention_inputs))


class FunnelEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.attention_structure = FunnelAttentionStructure(c)
        self.blocks = nn.ModuleList([nn.ModuleList([FunnelLayer(c, block_index) for _ in range(block_size)])
                                     for block_index, block_size in enumerate(c['block_sizes'])])

    def forward(self, inputs_embeds, attention_mask, token_type_ids):
        attention_mask = attention_mask.type_as(inputs_embeds)
        attention_inputs = self.attention_structure.init_attention_inputs(inputs_embeds, attention_mask, token_type_ids)
        hidden = inputs_embeds
        block_repeats = self.c['block_repeats'] or [1] * len(self.c['block_sizes'])
        for block_index, block in enumerate(self.blocks):
            pooling_flag = hidden.size(1) > (2 if self.c['separate_cls'] else 1)
            pooling_flag = pooling_flag and block_index > 0
            if pooling_flag:
                pooled_hidden, attention_inputs = self.attention_structure.pre_attention_pooling(hidden, attention_inputs)
            for layer_index, layer in enumerate(block):
                for repeat_index in range(block_repeats[block_index]):
                    do_pooling = (repeat_index == 0) and (layer_index == 0) and pooling_flag
                    if do_pooling:
                        query = pooled_hidden
                        key = value = hidden if self.c['pool_q_only'] else pooled_hidden
                    else:
                        query = key = value = hidden
                    hidden = layer(query, key, value, attention_inputs)
                    if do_pooling:
                        attention_inputs = self.attention_structure.post_attention_pooling(attention_inputs)
        return hidden


class FunnelBaseModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = FunnelEmbeddings(c)
        self.encoder = FunnelEncoder(c)

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.encoder(self.embeddings(input_ids), attention_mask, token_type_ids)


# ---- fixtures ------------------------------------------------------------------------------------

# (batch, seq) of every token model's cases: the traced case (3, 6) first, then 1, odd lengths,
# 5x and 20x the traced length.
TOKEN_SIZES = [(3, 6), (1, 1), (2, 7), (2, 13), (1, 30), (1, 120)]


def padding_mask(b, t, step):
    """[b, t] int64: row i holds ones for its first max(1, t - (i + 1) * step) tokens, zeros after (padding)."""
    lengths = torch.tensor([max(1, t - (i + 1) * step) for i in range(b)])
    return (torch.arange(t)[None, :] < lengths[:, None]).to(torch.long)


def image_input(name, shape, seed):
    """An input of tools/torchvision_ports.py's image(shape, seed): (name, tensor, seed); the JSON
    keeps only its shape and seed (tests/js/torchvision-ports.mjs image() makes the same values)."""
    return (name, image(shape, seed), seed)


def encode_input(name, t, seed=None):
    """A case input as the JSON holds it: its values, or for an image_input its shape and seed."""
    if seed is None:
        return short_floats(encode(t, name))
    return {'name': name, 'shape': list(t.shape), 'dtype': 'float32', 'seed': seed}


def fixture(name, description, config, net, axes, cases, output_names, keep=(), fresh=False):
    """Randomizes net, saves its state_dict as <name>.safetensors (F32: the file holds net's exact
    values) and returns the JSON fixture of net's outputs (named output_names) on cases
    ([(sizes, [(name, input)])]); fresh: each case on a copy of net as loaded (a model whose forward
    writes its own state, as Swin's set_shift_and_window_size does, answers as a freshly loaded one)."""
    randomize(net, keep)
    path = os.path.join(OUT_DIR, f'{name}.safetensors')
    write(path, {k: v for k, v in net.state_dict().items()}, {'format': 'pt'})
    net.eval()
    out_cases = []
    for sizes, inputs in cases:
        with torch.no_grad():
            outputs = (copy.deepcopy(net) if fresh else net)(*[t for _, t, *_ in inputs])
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        assert len(outputs) == len(output_names)
        out_cases.append({'sizes': sizes, 'inputs': [encode_input(n, t, *seed) for n, t, *seed in inputs],
                          'outputs': [short_floats(encode(t, n)) for n, t in zip(output_names, outputs)]})
    return {'torch_version': torch.__version__, 'model': description, 'config': config, 'file': f'{name}.safetensors',
            'axes': axes, 'trace_case': 0, 'cases': out_cases}


def token_cases(vocab, mask_step=None, pad_token=None, sizes=TOKEN_SIZES):
    """input_ids at sizes (TOKEN_SIZES by default), with a padding mask (each row padded by a
    different amount) when mask_step is given; pad_token, if given, is the id at the padded positions
    (never elsewhere)."""
    cases = []
    for b, t in sizes:
        ids = torch.randint(0, vocab, (b, t))
        inputs = [('input_ids', ids)]
        if mask_step is not None:
            mask = padding_mask(b, t, max(1, t // mask_step))
            if pad_token is not None:
                ids[ids == pad_token] = pad_token + 1
                ids[mask == 0] = pad_token
            inputs.append(('attention_mask', mask))
        cases.append(({'batch': b, 'seq': t}, inputs))
    return cases


@model
def make_gpt2():
    c = {'vocab_size': 64, 'n_positions': 128, 'n_embd': 32, 'n_layer': 2, 'n_head': 4, 'n_inner': None,
         'activation_function': 'gelu_new', 'layer_norm_epsilon': 1e-5}
    return fixture('gpt2', 'GPT2LMHeadModel (no cache): Conv1D by addmm, split heads by view + permute, the bool tril buffer '
                   'sliced to the length under torch.where(mask, w, finfo.min), gelu_new, lm_head tied to wte',
                   c, GPT2LMHeadModel(c), {'input_ids': ['batch', 'seq']}, token_cases(c['vocab_size']), ['logits'])


@model
def make_bert():
    c = {'vocab_size': 64, 'hidden_size': 32, 'num_hidden_layers': 2, 'num_attention_heads': 4, 'intermediate_size': 64,
         'hidden_act': 'gelu', 'max_position_embeddings': 128, 'type_vocab_size': 2, 'layer_norm_eps': 1e-12, 'pad_token_id': 0}
    return fixture('bert', 'BertModel (eager attention): word + token type (the zeros buffer) + position (the position_ids buffer) '
                   'embeddings, LayerNorm; the padding mask made additive ((1 - mask) * finfo.min); post-norm layers with exact gelu; '
                   'pooler tanh(dense(h[:, 0])); outputs last_hidden_state and pooler_output',
                   c, BertModel(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   token_cases(c['vocab_size'], mask_step=3), ['last_hidden_state', 'pooler_output'])


@model
def make_llama():
    c = {'vocab_size': 64, 'hidden_size': 32, 'intermediate_size': 64, 'num_hidden_layers': 2, 'num_attention_heads': 4,
         'num_key_value_heads': 2, 'hidden_act': 'silu', 'rms_norm_eps': 1e-6, 'rope_theta': 10000.0,
         'max_position_embeddings': 2048, 'tie_word_embeddings': False}
    return fixture('llama', 'LlamaForCausalLM (no cache): RMSNorm, rotary cos/sin computed from arange positions and the '
                   'non-persistent inv_freq, rotate_half, grouped-query attention (4 heads, 2 key-value heads, repeat_kv), '
                   'the causal mask full(min).triu(1) *= arange > positions, SiLU-gated MLP, lm_head',
                   c, LlamaForCausalLM(c), {'input_ids': ['batch', 'seq']}, token_cases(c['vocab_size']), ['logits'])


@model
def make_roberta():
    c = {'vocab_size': 64, 'hidden_size': 32, 'num_hidden_layers': 2, 'num_attention_heads': 4, 'intermediate_size': 64,
         'hidden_act': 'gelu', 'max_position_embeddings': 130, 'type_vocab_size': 1, 'layer_norm_eps': 1e-5, 'pad_token_id': 1}
    return fixture('roberta', 'RobertaModel (eager attention): BERT\'s encoder and pooler; position ids from the input ids '
                   '(cumsum of input_ids != padding_idx, times that mask, plus padding_idx: the padded tokens take padding_idx), '
                   'the position embedding with padding_idx; padded positions hold pad_token_id',
                   c, RobertaModel(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   token_cases(c['vocab_size'], mask_step=3, pad_token=c['pad_token_id']), ['last_hidden_state', 'pooler_output'])


@model
def make_mistral():
    c = {'vocab_size': 64, 'hidden_size': 32, 'intermediate_size': 64, 'num_hidden_layers': 2, 'num_attention_heads': 4,
         'num_key_value_heads': 2, 'hidden_act': 'silu', 'rms_norm_eps': 1e-6, 'rope_theta': 10000.0,
         'max_position_embeddings': 2048, 'tie_word_embeddings': False, 'sliding_window': 5}
    return fixture('mistral', 'MistralForCausalLM (no cache, eager): LLaMA\'s layers (grouped-query attention: 4 heads, 2 '
                   'key-value heads); the causal mask with a sliding window of 5 (arange > positions, bitwise_or_ arange <= '
                   'positions - window) and the padding mask written into it by slice assignment',
                   c, MistralForCausalLM(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   token_cases(c['vocab_size'], mask_step=3), ['logits'])


@model
def make_t5():
    c = {'vocab_size': 64, 'd_model': 32, 'd_kv': 8, 'd_ff': 64, 'num_layers': 2, 'num_heads': 4,
         'relative_attention_num_buckets': 16, 'relative_attention_max_distance': 24, 'layer_norm_epsilon': 1e-6,
         'feed_forward_proj': 'relu'}
    return fixture('t5', 'T5EncoderModel: shared embedding (also encoder.embed_tokens), pre-norm T5LayerNorm blocks, unscaled '
                   'attention with the relative position bias of block 0 (bidirectional buckets: abs, log, minimum with '
                   'num_buckets - 1, where; 16 buckets, max_distance 24) plus the padding mask, reused by block 1; ReLU MLP',
                   c, T5EncoderModel(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   token_cases(c['vocab_size'], mask_step=3), ['last_hidden_state'])


@model
def make_whisper():
    c = {'num_mel_bins': 8, 'd_model': 32, 'encoder_layers': 2, 'encoder_attention_heads': 4, 'encoder_ffn_dim': 64,
         'max_source_positions': 64, 'activation_function': 'gelu'}
    # frames: the traced 12 (6 positions), then 1, odd counts, 5x (61) and the most (128: all 64 positions)
    cases = [({'batch': b, 'frames': n}, [('input_features', torch.randn(b, c['num_mel_bins'], n))])
             for b, n in [(2, 12), (1, 1), (3, 13), (1, 61), (2, 128)]]
    return fixture('whisper', 'WhisperEncoder: gelu(Conv1d(8, 32, 3, padding 1)), gelu(Conv1d(32, 32, 3, stride 2, padding 1)), '
                   'permute, the sinusoidal embed_positions table\'s first T rows added, pre-norm layers (q_proj scaled, bmm '
                   'attention over batch * heads), layer_norm',
                   c, WhisperEncoder(c), {'input_features': ['batch', None, 'frames']}, cases, ['last_hidden_state'],
                   keep={'embed_positions.weight'})


@model
def make_phi():
    c = {'vocab_size': 64, 'hidden_size': 32, 'intermediate_size': 64, 'num_hidden_layers': 2, 'num_attention_heads': 4,
         'num_key_value_heads': 4, 'hidden_act': 'gelu_new', 'max_position_embeddings': 128, 'layer_norm_eps': 1e-5,
         'rope_theta': 10000.0, 'partial_rotary_factor': 0.5, 'qk_layernorm': False}
    return fixture('phi', 'PhiForCausalLM (no cache, eager): partial rotary (the first 4 of 8 channels per head) from the '
                   'non-persistent cos/sin tables indexed by position_ids, q/k/v/dense with bias, parallel attention and '
                   'gelu_new MLP on one LayerNorm, _prepare_4d_causal_attention_mask with a padding mask, lm_head with bias',
                   c, PhiForCausalLM(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   token_cases(c['vocab_size'], mask_step=3), ['logits'])


@model
def make_gemma():
    c = {'vocab_size': 64, 'hidden_size': 32, 'intermediate_size': 64, 'num_hidden_layers': 2, 'num_attention_heads': 4,
         'num_key_value_heads': 1, 'head_dim': 16, 'hidden_activation': 'gelu_pytorch_tanh', 'rms_norm_eps': 1e-6,
         'rope_theta': 10000.0, 'attention_bias': False, 'pad_token_id': 0, 'tie_word_embeddings': True}
    return fixture('gemma', 'GemmaForCausalLM (no cache, eager): embeddings times sqrt(hidden_size), RMSNorm by (1 + weight), '
                   'multi-query attention (4 heads, 1 key-value head) of head_dim 16 on hidden 32, rotary from positions, '
                   'GeGLU MLP with tanh gelu, the causal mask with the padding mask written in by slice assignment '
                   '(eq(0) * eq(0): bool times bool), lm_head tied to embed_tokens',
                   c, GemmaForCausalLM(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   token_cases(c['vocab_size'], mask_step=3), ['logits'])


@model
def make_clip_text():
    c = {'vocab_size': 64, 'hidden_size': 32, 'intermediate_size': 64, 'num_hidden_layers': 2, 'num_attention_heads': 4,
         'max_position_embeddings': 128, 'hidden_act': 'quick_gelu', 'layer_norm_eps': 1e-5,
         'pad_token_id': 1, 'bos_token_id': 0, 'eos_token_id': 2}
    # CLIP's tokenizer ends each text with the end-of-text token, the vocabulary's last id (the legacy
    # eos_token_id 2 configs pool at the argmax of the ids); the padding after it holds pad_token_id
    cases = []
    for sizes, inputs in token_cases(c['vocab_size'] - 1, mask_step=3, pad_token=c['pad_token_id']):
        ids, mask = (t for _, t in inputs)
        ids[torch.arange(ids.shape[0]), mask.sum(-1) - 1] = c['vocab_size'] - 1
        cases.append((sizes, inputs))
    return fixture('clip_text', 'CLIPTextModel: token + position (the non-persistent position_ids buffer) embeddings, the '
                   'causal mask made by empty, fill_(finfo.min), triu_(1), the padding mask, q_proj scaled, bmm attention '
                   'over batch * heads, quick_gelu MLP, pre-norm layers, final_layer_norm; pooler_output the hidden state at '
                   'each row\'s argmax of input_ids (the end-of-text token)',
                   c, CLIPTextModel(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   cases, ['last_hidden_state', 'pooler_output'])


@model
def make_whisper_decoder():
    c = {'vocab_size': 64, 'd_model': 32, 'decoder_layers': 2, 'decoder_attention_heads': 4, 'decoder_ffn_dim': 64,
         'max_target_positions': 64, 'pad_token_id': 0, 'activation_function': 'gelu'}
    # (batch, decoder length, encoder length): the traced (3, 6, 10), then 1, odd, the decoder longer
    # than the encoder and shorter, and far above the traced lengths
    cases = [({'batch': b, 'dec': t, 'enc': s}, [('input_ids', torch.randint(0, c['vocab_size'], (b, t))),
                                                 ('encoder_hidden_states', torch.randn(b, s, c['d_model']))])
             for b, t, s in [(3, 6, 10), (1, 1, 1), (2, 7, 13), (2, 13, 5), (1, 30, 3), (1, 64, 150)]]
    return fixture('whisper_decoder', 'WhisperDecoder (no cache, eager): token + learned position embeddings, pre-norm layers of '
                   'causal self-attention (the mask of _prepare_4d_causal_attention_mask), cross-attention over '
                   'encoder_hidden_states (k_proj without bias, bmm over batch * heads) and a gelu MLP, layer_norm',
                   c, WhisperDecoder(c), {'input_ids': ['batch', 'dec'], 'encoder_hidden_states': ['batch', 'enc', None]},
                   cases, ['last_hidden_state'])


@model
def make_qwen2():
    c = {'vocab_size': 64, 'hidden_size': 32, 'intermediate_size': 64, 'num_hidden_layers': 2, 'num_attention_heads': 4,
         'num_key_value_heads': 2, 'hidden_act': 'silu', 'rms_norm_eps': 1e-6, 'rope_theta': 1000000.0,
         'max_position_embeddings': 2048, 'tie_word_embeddings': True, 'use_sliding_window': False, 'sliding_window': 4,
         'max_window_layers': 2}
    return fixture('qwen2', 'Qwen2ForCausalLM (no cache, eager): LLaMA\'s layers with biases on q_proj, k_proj and v_proj (not '
                   'o_proj), grouped-query attention (4 heads, 2 key-value heads) scaled by head_dim ** -0.5, rotary from positions '
                   '(rope_theta 1e6), Mistral\'s causal mask with the padding mask written in by slice assignment; the config\'s '
                   'sliding_window 4 is off (use_sliding_window false: Qwen2Config makes it None), lm_head tied to embed_tokens',
                   c, Qwen2ForCausalLM(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   token_cases(c['vocab_size'], mask_step=3), ['logits'])


@model
def make_distilbert():
    c = {'vocab_size': 64, 'max_position_embeddings': 128, 'sinusoidal_pos_embds': True, 'n_layers': 2, 'n_heads': 4,
         'dim': 32, 'hidden_dim': 64, 'dropout': 0.1, 'attention_dropout': 0.1, 'activation': 'gelu', 'pad_token_id': 0}
    return fixture('distilbert', 'DistilBertModel (eager attention): word + position embeddings (the sinusoidal table '
                   'create_sinusoidal_embeddings writes, the position_ids buffer), LayerNorm; MultiHeadSelfAttention with q '
                   'divided by sqrt(dim_per_head), the padding mask (mask == 0).view(bs, 1, 1, k).expand_as(scores) under '
                   'masked_fill(finfo.min); post-norm blocks, gelu FFN; outputs last_hidden_state',
                   c, DistilBertModel(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   token_cases(c['vocab_size'], mask_step=3), ['last_hidden_state'], keep={'embeddings.position_embeddings.weight'})


@model
def make_albert():
    c = {'vocab_size': 64, 'embedding_size': 16, 'hidden_size': 32, 'num_hidden_layers': 3, 'num_hidden_groups': 1,
         'num_attention_heads': 4, 'intermediate_size': 64, 'inner_group_num': 1, 'hidden_act': 'gelu_new',
         'max_position_embeddings': 128, 'type_vocab_size': 2, 'layer_norm_eps': 1e-12, 'pad_token_id': 0}
    return fixture('albert', 'AlbertModel (eager attention): BERT\'s embeddings of embedding_size 16, mapped to hidden_size 32 '
                   'by embedding_hidden_mapping_in; ONE layer group (one AlbertLayer) applied num_hidden_layers = 3 times with '
                   'the same weights; the padding mask made additive; post-norm attention (dense, LayerNorm of the sum) and '
                   'gelu_new FFN (ffn, ffn_output, full_layer_layer_norm); pooler tanh(pooler(h[:, 0])); outputs '
                   'last_hidden_state and pooler_output',
                   c, AlbertModel(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   token_cases(c['vocab_size'], mask_step=3), ['last_hidden_state', 'pooler_output'])


@model
def make_bloom():
    c = {'vocab_size': 64, 'hidden_size': 24, 'n_layer': 2, 'n_head': 6, 'layer_norm_epsilon': 1e-5,
         'apply_residual_connection_post_layernorm': False, 'pretraining_tp': 1, 'slow_but_exact': False,
         'tie_word_embeddings': True}
    return fixture('bloom', 'BloomForCausalLM (no cache, eager): word embeddings and their LayerNorm; ALiBi from the padding mask '
                   '(6 heads: 4 slopes of base 1/4 and 2 of base 1/2 at odd powers, times (cumsum(mask) - 1) * mask); the fused '
                   'query_key_value viewed [b, s, heads, 3, head_dim], alibi.baddbmm(q, k^T) scaled by 1/sqrt(head_dim), GPT-J\'s '
                   'causal mask with the padding mask written in by slice assignment, bloom_gelu MLP, dropout_add residuals, '
                   'lm_head tied to word_embeddings',
                   c, BloomForCausalLM(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   token_cases(c['vocab_size'], mask_step=3), ['logits'])


# Wav2Vec2's samples: the traced 400, then the least the four convolutions take (60: one frame),
# one more, the last length of one frame (99) and the first of two (100) at the total stride 40,
# an odd count, and about 10x the traced one.
WAV2VEC2_SAMPLES = [(2, 400), (1, 60), (3, 61), (1, 99), (2, 100), (1, 137), (1, 3999)]


@model
def make_wav2vec2():
    c = {'hidden_size': 32, 'num_hidden_layers': 2, 'num_attention_heads': 4, 'intermediate_size': 64,
         'hidden_act': 'gelu', 'feat_extract_activation': 'gelu', 'feat_extract_norm': 'group', 'layer_norm_eps': 1e-5,
         'conv_dim': [16, 16, 16, 16], 'conv_stride': [5, 2, 2, 2], 'conv_kernel': [10, 3, 3, 2], 'conv_bias': False,
         'num_conv_pos_embeddings': 8, 'num_conv_pos_embedding_groups': 4, 'do_stable_layer_norm': False,
         'mask_time_prob': 0.05, 'mask_feature_prob': 0.0}
    cases = [({'batch': b, 'samples': n}, [image_input('input_values', [b, n], seed)])
             for seed, (b, n) in enumerate(WAV2VEC2_SAMPLES, start=1)]
    return fixture('wav2vec2', 'Wav2Vec2Model (eval, no mask): the feature encoder (Conv1d kernels 10, 3, 3, 2 at strides 5, 2, 2, 2 '
                   'without bias, GroupNorm of one channel per group after the first, gelu), the feature projection (LayerNorm, '
                   'Linear), the positional conv embedding (weight-normed grouped Conv1d, kernel 8, padding 4, 4 groups, the '
                   'trailing pad removed as the kernel is even, gelu) added, LayerNorm, 2 post-norm encoder layers (bmm '
                   'attention over batch * heads, gelu feed-forward); outputs last_hidden_state and extract_features',
                   c, Wav2Vec2Model(c), {'input_values': ['batch', 'samples']}, cases, ['last_hidden_state', 'extract_features'])


def randomize_batch_norms(net):
    """Running statistics that matter in eval mode (BatchNorm's start at 0 and 1)."""
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.normal_(0, 0.5)
                m.running_var.uniform_(0.5, 2)


# SegFormer's images: the traced 2 x 3 x 64 x 48, then the least the spatial reductions take (29: an
# 8 x 8 first stage for the 8 x 8 reduction), one more, odd sizes across the strides (4 and 2)
# the other way round, and far above the traced one.
SEGFORMER_SIZES = [(2, 64, 48), (1, 29, 29), (1, 30, 33), (2, 37, 61), (1, 45, 44), (1, 200, 161)]


@model
def make_segformer():
    c = {'num_channels': 3, 'num_encoder_blocks': 4, 'depths': [1, 1, 1, 1], 'sr_ratios': [8, 4, 2, 1],
         'hidden_sizes': [8, 16, 24, 32], 'patch_sizes': [7, 3, 3, 3], 'strides': [4, 2, 2, 2],
         'num_attention_heads': [1, 2, 3, 4], 'mlp_ratios': [2, 2, 2, 2], 'hidden_act': 'gelu',
         'decoder_hidden_size': 16, 'num_labels': 2, 'reshape_last_stage': True, 'layer_norm_eps': 1e-6}
    net = SegformerForSemanticSegmentation(c)
    randomize_batch_norms(net)
    cases = [({'batch': b, 'height': h, 'width': w}, [image_input('pixel_values', [b, 3, h, w], seed)])
             for seed, (b, h, w) in enumerate(SEGFORMER_SIZES, start=1)]
    return fixture('segformer', 'SegformerForSemanticSegmentation (eval): 4 stages of overlapping patch embeddings (Conv2d 7/4, '
                   '3/2, 3/2, 3/2 with padding k // 2, LayerNorm), efficient self-attention with spatial-reduction convs 8, 4 '
                   'and 2 (the tokens reshaped to [b, c, h, w] from the stage\'s height and width), Mix-FFN (depthwise 3 x 3 '
                   'conv, gelu), each stage reshaped back to [b, c, h, w]; the all-MLP decode head (Linear per stage, bilinear '
                   'interpolate to the first stage\'s size, concatenated in reverse, 1 x 1 conv, BatchNorm, ReLU, classifier)',
                   c, net, {'pixel_values': ['batch', None, 'height', 'width']}, cases, ['logits'])


# ViT's images: a size the table does not fit (traced), then the native 16 x 16, the native grid at
# other pixel counts (19 x 17, not square), one patch, a 1 x 8 grid, odd sizes and far above.
VIT_SIZES = [(2, 24, 20), (1, 16, 16), (1, 19, 17), (2, 4, 4), (1, 7, 33), (1, 27, 23), (1, 64, 52)]


@model
def make_vit_embeddings():
    c = {'image_size': 16, 'patch_size': 4, 'num_channels': 3, 'hidden_size': 16}
    cases = [({'batch': b, 'height': h, 'width': w}, [image_input('pixel_values', [b, 3, h, w], seed)])
             for seed, (b, h, w) in enumerate(VIT_SIZES, start=1)]
    return fixture('vit_embeddings', 'ViTEmbeddings with interpolate_pos_encoding=True: the patch projection (Conv2d 4/4), the '
                   'class token, and the 4 x 4 position table (with its class row) bicubic-interpolated to the image\'s patch '
                   'grid, or the table itself where the grid is the table\'s and the image square',
                   c, ViTEmbeddings(c), {'pixel_values': ['batch', None, 'height', 'width']}, cases, ['embeddings'],
                   keep={'cls_token', 'position_embeddings'})


# DINOv2's images (patch 7, a 5 x 5 table for image_size 35): traced at 56 x 49 (an 8 x 7 grid), then
# the native 35 x 35 (the table itself upstream), the native grid not square in pixels (35 x 41), one
# patch, sizes that are no multiple of the patch (a remainder cut off by the conv), a grid below the
# table's, and far above the traced one (the classifier's logits to a 32 x 29 grid; the model's every
# token, kept smaller in the file, to 17 x 14).
DINOV2_SIZES = [(2, 56, 49), (1, 35, 35), (1, 35, 41), (2, 7, 7), (3, 13, 50), (1, 27, 34), (1, 20, 90)]


def dinov2_config(**kw):
    return {'image_size': 35, 'patch_size': 7, 'num_channels': 3, 'hidden_size': 32, 'num_hidden_layers': 2,
            'num_attention_heads': 4, 'mlp_ratio': 4, 'hidden_act': 'gelu', 'layer_norm_eps': 1e-6, 'layerscale_value': 1.0,
            'qkv_bias': True, 'use_swiglu_ffn': False, 'drop_path_rate': 0.0, **kw}


def dinov2_cases(far):
    return [({'batch': b, 'height': h, 'width': w}, [image_input('pixel_values', [b, 3, h, w], seed)])
            for seed, (b, h, w) in enumerate(DINOV2_SIZES + [far], start=1)]


@model
def make_dinov2():
    c = dinov2_config()
    return fixture('dinov2', 'Dinov2Model (eval, eager attention): ViT\'s embeddings with a mask_token (unused without '
                   'bool_masked_pos) and the 5 x 5 position table bicubic-interpolated to the image\'s patch grid (size=, '
                   'not scale_factor), pre-norm layers with layer scale (lambda1) on attention and the gelu MLP, the final '
                   'layernorm; outputs last_hidden_state and pooler_output (the CLS token)',
                   c, Dinov2Model(c), {'pixel_values': ['batch', None, 'height', 'width']}, dinov2_cases((1, 120, 100)),
                   ['last_hidden_state', 'pooler_output'], keep={'embeddings.cls_token', 'embeddings.position_embeddings'})


@model
def make_dinov2_swiglu():
    c = dinov2_config(use_swiglu_ffn=True, num_labels=5)
    return fixture('dinov2_swiglu', 'Dinov2ForImageClassification (eval) with use_swiglu_ffn (weights_in to 2 x 88, '
                   'silu(x1) * x2, weights_out; giant\'s FFN): the classifier over the CLS token concatenated with the '
                   'mean of the patch tokens',
                   c, Dinov2ForImageClassification(c), {'pixel_values': ['batch', None, 'height', 'width']}, dinov2_cases((1, 230, 203)),
                   ['logits'], keep={'dinov2.embeddings.cls_token', 'dinov2.embeddings.position_embeddings'})


@model
def make_opt():
    c = {'vocab_size': 64, 'hidden_size': 32, 'num_hidden_layers': 2, 'ffn_dim': 64, 'num_attention_heads': 4,
         'max_position_embeddings': 128, 'do_layer_norm_before': True, '_remove_final_layer_norm': False,
         'word_embed_proj_dim': 32, 'activation_function': 'relu', 'enable_bias': True,
         'layer_norm_elementwise_affine': True, 'pad_token_id': 1}
    return fixture('opt', 'OPTForCausalLM (no cache, eager), the 125m layout: learned positions cumsum(mask) * mask - 1 read '
                   'at offset 2, pre-norm layers (do_layer_norm_before), q scaled by head_dim ** -0.5 before the product, '
                   'GPT-J\'s causal mask with the padding mask written in by slice assignment, ReLU MLP on [batch * seq, '
                   'hidden], final_layer_norm, lm_head tied to embed_tokens',
                   c, OPTForCausalLM(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   token_cases(c['vocab_size'], mask_step=3), ['logits'])


@model
def make_opt_350m():
    c = {'vocab_size': 64, 'hidden_size': 32, 'num_hidden_layers': 2, 'ffn_dim': 64, 'num_attention_heads': 4,
         'max_position_embeddings': 128, 'do_layer_norm_before': False, '_remove_final_layer_norm': False,
         'word_embed_proj_dim': 16, 'activation_function': 'relu', 'enable_bias': True,
         'layer_norm_elementwise_affine': True, 'pad_token_id': 1}
    return fixture('opt_350m', 'OPTForCausalLM (no cache, eager), the 350m layout: post-norm layers (do_layer_norm_before '
                   'false, so no final_layer_norm), token embeddings of word_embed_proj_dim 16 brought to hidden 32 by '
                   'project_in and back by project_out, learned positions at offset 2 from the padding mask',
                   c, OPTForCausalLM(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   token_cases(c['vocab_size'], mask_step=3, sizes=[(3, 6), (1, 1), (2, 7), (1, 45), (1, 128)]), ['logits'])


# GPT-Neo's lengths around its window of 5: the traced 6, then 1, below (4), at (5) and past it,
# and far above; each row of a batch padded by one more token (1, 2, 3: fewer than the window, so
# every padded query still sees a kept key in the local layer, as upstream needs to stay finite).
GPT_NEO_SIZES = [(3, 6), (1, 1), (2, 4), (1, 5), (3, 7), (2, 13), (1, 120)]


@model
def make_gpt_neo():
    c = {'vocab_size': 64, 'hidden_size': 32, 'num_layers': 2, 'num_heads': 4, 'intermediate_size': 64,
         'max_position_embeddings': 128, 'window_size': 5, 'attention_types': [[['global', 'local'], 1]],
         'activation_function': 'gelu_new', 'layer_norm_epsilon': 1e-5}
    cases = []
    for b, t in GPT_NEO_SIZES:
        cases.append(({'batch': b, 'seq': t}, [('input_ids', torch.randint(0, c['vocab_size'], (b, t))),
                                               ('attention_mask', padding_mask(b, t, 1))]))
    return fixture('gpt_neo', 'GPTNeoForCausalLM (no cache, eager): learned positions, a global then a local layer (the '
                   'bool buffer tril(ones) ^ tril(ones, -window_size) for window 5, sliced to the length under '
                   'torch.where(mask, w, finfo.min)), unscaled scores, GPT-J\'s causal mask with the padding mask added, '
                   'gelu_new MLP, lm_head tied to wte',
                   c, GPTNeoForCausalLM(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   cases, ['logits'])


# DeBERTa-v2's lengths around its buckets (position_buckets 8: relative positions below 4 kept, from
# 4 on log buckets up to max_relative_positions 64): the traced 6, then 1, 4 and 5 (no log bucket
# yet), odd lengths, and 120 (past max_relative_positions, where the buckets pass the table and clamp).
DEBERTA_SIZES = [(3, 6), (1, 1), (2, 4), (1, 5), (2, 7), (2, 13), (1, 30), (1, 120)]


@model
def make_deberta_v2():
    c = {'vocab_size': 64, 'hidden_size': 32, 'num_hidden_layers': 2, 'num_attention_heads': 4, 'intermediate_size': 64,
         'hidden_act': 'gelu', 'max_position_embeddings': 64, 'type_vocab_size': 0, 'layer_norm_eps': 1e-7,
         'relative_attention': True, 'max_relative_positions': -1, 'position_buckets': 8, 'pos_att_type': ['p2c', 'c2p'],
         'share_att_key': True, 'norm_rel_ebd': 'layer_norm', 'position_biased_input': False, 'pad_token_id': 0}
    return fixture('deberta_v2', 'DebertaV2Model (eager), the deberta-v3 layout: word embeddings only (position_biased_input '
                   'false, no token types), LayerNorm, times the mask; relative positions q - k in log buckets '
                   '(make_log_bucket_position: sign, abs, log, ceil; 8 buckets, max_relative_positions 64); disentangled '
                   'attention with shared keys: content-to-position and position-to-content scores gathered at the clamped '
                   'bucket, the LayerNorm-ed rel_embeddings through query_proj/key_proj repeated per batch, scale '
                   'sqrt(head_dim * 3), XSoftmax over the pair mask; post-norm layers with gelu',
                   c, DebertaV2Model(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   token_cases(c['vocab_size'], mask_step=3, sizes=DEBERTA_SIZES), ['last_hidden_state'])


# Longformer's lengths around its window of 6 (padded to a multiple of 6, the output sliced back):
# the traced 7, then 1, every residue of 6 (2 to 6, 8, 11, 12, 13), and 10x and past 17x the traced
# length; each row of a batch padded by a different amount.
LONGFORMER_SIZES = [(3, 7), (1, 1), (2, 2), (1, 3), (2, 4), (1, 5), (2, 6), (1, 8), (2, 11), (1, 12), (2, 13), (1, 70), (1, 120)]
LONGFORMER_CONFIG = {'vocab_size': 64, 'hidden_size': 32, 'num_hidden_layers': 2, 'num_attention_heads': 4,
                     'intermediate_size': 64, 'hidden_act': 'gelu', 'max_position_embeddings': 130, 'type_vocab_size': 1,
                     'layer_norm_eps': 1e-5, 'pad_token_id': 1, 'attention_window': 6}
LONGFORMER_DESCRIPTION = ('LongformerModel (eval): RoBERTa\'s embeddings (positions from the ids), input padded to a multiple '
                          'of attention_window 6 by _pad_to_window_size and the output sliced back; sliding-window attention '
                          'over chunks made with as_strided (_chunk, _pad_and_transpose_last_two_dims, _pad_and_diagonalize, '
                          '_mask_invalid_locations), the padding as a diagonal mask of finfo.min, masked rows zeroed after '
                          'the softmax; pooler')


@model
def make_longformer():
    c = LONGFORMER_CONFIG
    return fixture('longformer', LONGFORMER_DESCRIPTION + '; local attention only (no global_attention_mask)',
                   c, LongformerModel(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   token_cases(c['vocab_size'], mask_step=3, sizes=LONGFORMER_SIZES), ['last_hidden_state', 'pooler_output'])


@model
def make_longformer_global():
    c = LONGFORMER_CONFIG
    cases = token_cases(c['vocab_size'], mask_step=3, sizes=LONGFORMER_SIZES)
    for sizes, inputs in cases:
        # global attention on the first token (<s>, as for classification), and on the third of the
        # first row when it has one (rows with different numbers of global tokens)
        g = torch.zeros(sizes['batch'], sizes['seq'], dtype=torch.long)
        g[:, 0] = 1
        if sizes['seq'] > 2:
            g[0, 2] = 1
        inputs.append(('global_attention_mask', g))
    return fixture('longformer_global', LONGFORMER_DESCRIPTION + '; global attention on the first token of each row and '
                   'the third of the first (query_global, key_global, value_global; nonzero indices)',
                   c, LongformerModel(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq'],
                                            'global_attention_mask': ['batch', 'seq']},
                   cases, ['last_hidden_state', 'pooler_output'])


@model
def make_longformer_windows():
    # a window per layer (4 then 8): padded to a multiple of 8, chunks of 2 and 4 tokens
    c = {**LONGFORMER_CONFIG, 'attention_window': [4, 8]}
    return fixture('longformer_windows', LONGFORMER_DESCRIPTION.replace('attention_window 6', 'attention_window [4, 8] (one per '
                   'layer; the largest pads)') + '; local attention only',
                   c, LongformerModel(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   token_cases(c['vocab_size'], mask_step=3, sizes=[(2, 9), (1, 1), (2, 4), (1, 8), (2, 15), (1, 17), (1, 90)]),
                   ['last_hidden_state', 'pooler_output'])



# BigBird's lengths around its threshold (5 + 2 * num_random_blocks) * block_size: full attention
# up to it, block-sparse (padded to a multiple of block_size) above; the trace case first, then 1,
# odd lengths, the threshold - 1, itself, + 1, + 2, + 3, and far above; then batch 5 at the threshold and
# one above for block_size 2 (a symbolic batch's trace checked at batch 1, 2 and 5 on both sides).
BIG_BIRD_CONFIG = {'vocab_size': 64, 'hidden_size': 32, 'num_hidden_layers': 2, 'num_attention_heads': 2,
                   'intermediate_size': 64, 'hidden_act': 'gelu_new', 'max_position_embeddings': 128, 'type_vocab_size': 2,
                   'layer_norm_eps': 1e-12, 'pad_token_id': 0, 'attention_type': 'block_sparse', 'use_bias': True,
                   'rescale_embeddings': False, 'block_size': 2, 'num_random_blocks': 1}
BIG_BIRD_DESCRIPTION = ('BigBirdModel (eval): BERT\'s embeddings; attention_type block_sparse with block_size {bs} and '
                        'num_random_blocks {r}: at seq_length <= (5 + 2 * r) * bs = {t} it switches to original_full (BERT\'s '
                        'attention, additive finfo.min mask); above, _pad_to_block_size pads ids and mask to a multiple of '
                        'bs, create_masks_for_block_sparse_attn makes the band, from and to masks, and bigbird_block_sparse_attention '
                        'computes its five parts (global first and last query blocks; the second and second-last against global, '
                        'sliding and random keys; the middle blocks by shifted key blocks), the random blocks all block 0 as eval '
                        'mode makes them (torch_gather_b2, _create_rand_mask_from_inputs), -10000 penalties; gelu_new; pooler '
                        'tanh(pooler(h[:, 0])); the output sliced back to the input length')


def big_bird_fixture(name, config, sizes):
    c = {**BIG_BIRD_CONFIG, **config}
    t = (5 + 2 * c['num_random_blocks']) * c['block_size']
    return fixture(name, BIG_BIRD_DESCRIPTION.format(bs=c['block_size'], r=c['num_random_blocks'], t=t), c, BigBirdModel(c),
                   {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   token_cases(c['vocab_size'], mask_step=3, sizes=sizes), ['last_hidden_state', 'pooler_output'])


@model
def make_big_bird():
    # block_size 2, one random block: the threshold is 14; traced at 31 (block-sparse, padded to 32)
    return big_bird_fixture('big_bird', {}, [(2, 31), (1, 1), (2, 5), (1, 12), (2, 13), (1, 14), (2, 15), (1, 16), (2, 17),
                                             (1, 64), (1, 100), (5, 14), (5, 15)])


@model
def make_big_bird_b4():
    # block_size 4, two random blocks: the threshold is 36; traced at 13 (original_full)
    return big_bird_fixture('big_bird_b4', {'block_size': 4, 'num_random_blocks': 2},
                            [(2, 13), (1, 1), (2, 7), (1, 35), (2, 36), (1, 37), (2, 38), (1, 41), (1, 100)])


def swin_config(**kw):
    return {'image_size': 32, 'patch_size': 2, 'num_channels': 3, 'embed_dim': 16, 'depths': [2, 2], 'num_heads': [2, 4],
            'window_size': 3, 'mlp_ratio': 2.0, 'qkv_bias': True, 'hidden_act': 'gelu', 'drop_path_rate': 0.0,
            'use_absolute_embeddings': False, 'layer_norm_eps': 1e-5, **kw}


def swin_cases(sizes):
    return [({'batch': b, 'height': h, 'width': w}, [image_input('pixel_values', [b, 3, h, w], seed)])
            for seed, (b, h, w) in enumerate(sizes, start=1)]


# Swin, patch 2, window 3: the second stage's side is ceil(ceil(H / 2) / 2); eagerly it needs 3
# (a side below the window fails at the bias), so H, W >= 9; it is one unshifted window where its
# smaller side is 3 (min(H, W) 9 to 12) and shifted from 13. Traced at 26 x 21 (both stages shifted,
# odd width: every pad), then the least size, the unshifted second stage by either side, each side of
# 12/13, odd sizes (every patch, window and merge pad) and far above; last, 9 x 27 (the unshifted
# second stage where every pad and the slice back are made: where that side's trace is made).
SWIN_SIZES = [(2, 26, 21), (1, 9, 9), (1, 10, 30), (2, 12, 13), (1, 13, 12), (1, 13, 13), (1, 17, 40), (3, 14, 15), (1, 64, 50), (2, 9, 27)]
# The classifier, patch 3, window 5: the second stage needs 5 (H, W >= 25), unshifted up to 30 and
# shifted from 31; traced at 70 x 47, run to 301 x 257; last, 28 x 97 (unshifted, every pad made).
SWIN_CLS_SIZES = [(2, 70, 47), (1, 25, 25), (1, 26, 31), (2, 30, 100), (1, 31, 31), (1, 33, 64), (2, 40, 29), (1, 301, 257), (2, 28, 97)]


@model
def make_swin():
    c = swin_config()
    return fixture('swin', 'SwinModel (eval): patch embeddings (Conv2d 2/2 after maybe_pad to whole patches, LayerNorm), 2 stages '
                   'of 2 blocks (window 3, the second block shifted by 1 with the mask made in place, maybe_pad to whole windows, '
                   'set_shift_and_window_size: a stage whose smaller side is at most the window is one unshifted window), patch '
                   'merging (odd sides padded), layernorm, AdaptiveAvgPool1d; outputs last_hidden_state and pooler_output',
                   c, SwinModel(c), {'pixel_values': ['batch', None, 'height', 'width']}, swin_cases(SWIN_SIZES),
                   ['last_hidden_state', 'pooler_output'], fresh=True)


@model
def make_swin_cls():
    c = swin_config(patch_size=3, window_size=5, num_labels=5)
    return fixture('swin_cls', 'SwinForImageClassification (eval): SwinModel at patch 3, window 5 (shift 2), the classifier over '
                   'pooler_output', c, SwinForImageClassification(c), {'pixel_values': ['batch', None, 'height', 'width']},
                   swin_cases(SWIN_CLS_SIZES), ['logits'], fresh=True)


def pixel_mask(b, h, w):
    """[b, h, w] int64: row i of the batch keeps its top-left max(1, h - 2i) x max(1, w - 3i) pixels (DETR's
    padding of smaller images to the batch's size), 0 elsewhere."""
    m = torch.zeros(b, h, w, dtype=torch.long)
    for i in range(b):
        m[i, :max(1, h - 2 * i), :max(1, w - 3 * i)] = 1
    return m


def detr_cases(sizes):
    return [({'batch': b, 'height': h, 'width': w}, [image_input('pixel_values', [b, 2, h, w], seed), ('pixel_mask', pixel_mask(b, h, w))])
            for seed, (b, h, w) in enumerate(sizes, start=1)]


@model
def make_detr_sine():
    # DETR's own: embedding_dim d_model // 2, normalize; traced at 5 x 7, run at 1 x 1, a row or a
    # column, every batch row padded by another amount, and 5x the traced size
    c = {'embedding_dim': 8, 'temperature': 10000, 'normalize': True, 'scale': None}
    net = DetrSinePositionEmbedding(c['embedding_dim'], c['temperature'], c['normalize'], c['scale'])
    return fixture('detr_sine', 'DetrSinePositionEmbedding(8, normalize=True): cumsum of the pixel mask down and across, '
                   'normalized by the last row / column (+ 1e-6) times 2 pi, divided by 10000 ** (2 * floor(i / 2) / 8), '
                   'sin / cos interleaved, y then x, [batch, 16, height, width]', c, net,
                   {'pixel_values': ['batch', None, 'height', 'width'], 'pixel_mask': ['batch', 'height', 'width']},
                   detr_cases([(2, 5, 7), (1, 1, 1), (2, 1, 9), (3, 6, 4), (2, 13, 2), (1, 19, 24)]), ['position_embeddings'])


@model
def make_detr_sine_small():
    # other constants: 2 channels a side, temperature 20, scale 1.5; far above the traced size
    c = {'embedding_dim': 2, 'temperature': 20, 'normalize': True, 'scale': 1.5}
    net = DetrSinePositionEmbedding(c['embedding_dim'], c['temperature'], c['normalize'], c['scale'])
    return fixture('detr_sine_small', 'DetrSinePositionEmbedding(2, temperature=20, normalize=True, scale=1.5)', c, net,
                   {'pixel_values': ['batch', None, 'height', 'width'], 'pixel_mask': ['batch', 'height', 'width']},
                   detr_cases([(2, 6, 5), (1, 1, 1), (3, 2, 1), (1, 41, 37)]), ['position_embeddings'])


def mobilevit_config(**kw):
    return {'num_channels': 3, 'image_size': 64, 'patch_size': 2, 'hidden_sizes': [8, 16, 16], 'neck_hidden_sizes': [8, 8, 8, 16, 16, 24, 32],
            'num_attention_heads': 2, 'mlp_ratio': 2.0, 'expand_ratio': 2.0, 'hidden_act': 'silu', 'conv_kernel_size': 3,
            'output_stride': 32, 'qkv_bias': True, 'layer_norm_eps': 1e-5, **kw}


# MobileViT's blocks see ceil(H / 8), ceil(H / 16) and ceil(H / 32) (each conv of stride 2 gives
# ceil(side / 2)); a block resizes a side that is no multiple of the patch 2 to the next one and back.
# Traced at 70 x 45 (blocks at 9 x 6, 5 x 3, 3 x 2: every block resizes), then 1 x 1 (every block
# resizes 1 to 2), sizes where every block's sides are even (64 x 128) or only some, odd sizes and far above.
MOBILEVIT_SIZES = [(2, 70, 45), (1, 1, 1), (1, 64, 128), (2, 33, 16), (1, 17, 100), (3, 8, 9), (1, 200, 171)]


@model
def make_mobilevit():
    c = mobilevit_config(num_labels=3)
    net = MobileViTForImageClassification(c)
    randomize_batch_norms(net)
    cases = [({'batch': b, 'height': h, 'width': w}, [image_input('pixel_values', [b, 3, h, w], seed)])
             for seed, (b, h, w) in enumerate(MOBILEVIT_SIZES, start=1)]
    return fixture('mobilevit', 'MobileViTForImageClassification (eval): conv stem (3 x 3 / 2, BatchNorm, silu), MobileNetV2 '
                   'inverted residuals (expand 2), three MobileViT blocks (2, 4, 3 transformer layers over 2 x 2 patches; '
                   'unfolding bilinear-resizes a side that is no multiple of 2 to the next multiple, folding resizes back), '
                   '1 x 1 expansion, mean pool, classifier', c, net, {'pixel_values': ['batch', None, 'height', 'width']},
                   cases, ['logits'])



def convnextv2_config(**kw):
    return {'num_channels': 3, 'patch_size': 4, 'hidden_sizes': [8, 16], 'depths': [1, 2], 'hidden_act': 'gelu',
            'layer_norm_eps': 1e-12, 'drop_path_rate': 0.0, 'num_labels': 3, **kw}


# ConvNeXt V2, patch 4 then one 2 x 2 / 2 downsampling: eagerly H, W >= 8 (one pixel in the second
# stage). Traced at 40 x 36, then the least size, odd sizes (each conv drops the remainder), one side
# long, a 1 x 1 second stage beside a long side, and far above (GRN's norm over every position).
CONVNEXTV2_SIZES = [(2, 40, 36), (1, 8, 8), (3, 11, 9), (1, 15, 64), (2, 8, 23), (1, 17, 17), (1, 131, 97)]


@model
def make_convnextv2():
    c = convnextv2_config()
    cases = [({'batch': b, 'height': h, 'width': w}, [image_input('pixel_values', [b, 3, h, w], seed)])
             for seed, (b, h, w) in enumerate(CONVNEXTV2_SIZES, start=1)]
    return fixture('convnextv2', 'ConvNextV2ForImageClassification (eval): 4 x 4 / 4 patch conv and channels-first LayerNorm, '
                   'stages of depthwise 7 x 7 conv, channels-last LayerNorm, pwconv1 (Linear), gelu, GRN (the 2-norm over '
                   'height and width divided by its mean over channels + 1e-6, weight, bias, residual), pwconv2; the second '
                   'stage downsampled by LayerNorm and a 2 x 2 / 2 conv; mean pool, LayerNorm, classifier',
                   c, ConvNextV2ForImageClassification(c), {'pixel_values': ['batch', None, 'height', 'width']}, cases, ['logits'])


def beit_config(**kw):
    return {'image_size': 16, 'patch_size': 4, 'num_channels': 3, 'hidden_size': 32, 'num_hidden_layers': 2,
            'num_attention_heads': 4, 'intermediate_size': 64, 'hidden_act': 'gelu', 'layer_norm_eps': 1e-12,
            'use_mask_token': False, 'use_absolute_position_embeddings': False, 'use_relative_position_bias': True,
            'use_shared_relative_position_bias': False, 'layer_scale_init_value': 0.1, 'drop_path_rate': 0.0,
            'use_mean_pooling': True, 'num_labels': 3, **kw}


def beit_cases(sizes):
    return [({'batch': b, 'height': h, 'width': w}, [image_input('pixel_values', [b, 3, h, w], seed)])
            for seed, (b, h, w) in enumerate(sizes, start=1)]


# BEiT, patch 4, a 4 x 4 native window (image_size 16): the relative position table (7 x 7 + 3 rows)
# bilinear-interpolated to (2 h - 1) x (2 w - 1) for the image's h x w patches and indexed by the
# index made for that window. Traced at 28 x 20 (7 x 5 patches), then one patch (4 x 4), the native
# grid, sizes no multiple of the patch, a one-patch side beside a long one, and far above.
BEIT_SIZES = [(2, 28, 20), (1, 4, 4), (1, 16, 16), (3, 9, 14), (1, 4, 37), (2, 23, 7), (1, 61, 50)]


@model
def make_beit():
    c = beit_config()
    return fixture('beit', 'BeitForImageClassification (eval): patch conv, CLS token, no absolute positions; pre-norm layers '
                   'with a relative position bias per layer (the table bilinear-interpolated to the image\'s window, the '
                   'index from meshgrid/arange written in place), layer scale (lambda_1, lambda_2); mean pooling of the '
                   'patch tokens, LayerNorm, classifier',
                   c, BeitForImageClassification(c), {'pixel_values': ['batch', None, 'height', 'width']}, beit_cases(BEIT_SIZES),
                   ['logits'], fresh=True)


@model
def make_beit_shared():
    c = beit_config(use_absolute_position_embeddings=True, use_relative_position_bias=False,
                    use_shared_relative_position_bias=True, layer_scale_init_value=0.0, use_mean_pooling=False)
    return fixture('beit_shared', 'BeitForImageClassification (eval): absolute positions (the patch table bicubic-interpolated '
                   'to the patch grid, the CLS row added to the CLS token), one relative position bias shared by the '
                   'layers (the encoder\'s), no layer scale; the final LayerNorm\'s CLS row as the pooled output',
                   c, BeitForImageClassification(c), {'pixel_values': ['batch', None, 'height', 'width']}, beit_cases(BEIT_SIZES),
                   ['logits'], fresh=True)


def falcon_config(**kw):
    c = {'vocab_size': 32, 'hidden_size': 32, 'num_hidden_layers': 2, 'num_attention_heads': 4, 'num_kv_heads': 2,
         'num_ln_in_parallel_attn': 2, 'layer_norm_epsilon': 1e-5, 'alibi': False, 'new_decoder_architecture': True,
         'multi_query': True, 'parallel_attn': True, 'bias': False, 'max_position_embeddings': 2048, 'rope_theta': 10000.0,
         'activation': 'gelu', 'ffn_hidden_size': None, 'tie_word_embeddings': True, **kw}
    return c


def falcon_fixture(name, description, c, sizes=TOKEN_SIZES):
    ref = {**c, 'ffn_hidden_size': c['ffn_hidden_size'] or 4 * c['hidden_size']}
    return fixture(name, description, c, FalconForCausalLM(ref), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   token_cases(c['vocab_size'], mask_step=3, sizes=sizes), ['logits'])


@model
def make_falcon():
    return falcon_fixture('falcon', 'FalconForCausalLM (eager, no cache), the new decoder architecture (falcon-40b\'s): '
                          'grouped key-value heads (4 query heads, 2 key-value groups: the fused projection viewed [b, s, '
                          'groups, 2 + 2, head_dim], key and value broadcast to the queries), rotary (LLaMA\'s), parallel '
                          'attention and MLP with their own LayerNorms (ln_attn, ln_mlp), GPT-J\'s causal mask with the '
                          'padding mask written in, no biases, lm_head tied', falcon_config())


@model
def make_falcon_7b():
    return falcon_fixture('falcon_7b', 'FalconForCausalLM (eager, no cache), falcon-7b\'s layout: multi-query (one key-value '
                          'head: the fused projection viewed [b, s, heads + 2, head_dim]), rotary, parallel attention and MLP '
                          'on one input_layernorm, lm_head tied',
                          falcon_config(new_decoder_architecture=False, num_kv_heads=None, num_ln_in_parallel_attn=None))


@model
def make_falcon_alibi():
    return falcon_fixture('falcon_alibi', 'FalconForCausalLM (eager, no cache), falcon-rw\'s layout: ALiBi (6 heads; the '
                          'slopes and the positions in bfloat16), the alibi scaled into the causal mask and added to the '
                          'scores again, as upstream does; no multi-query (the fused projection viewed [b, s, heads, 3, '
                          'head_dim]), sequential attention then MLP (post_attention_layernorm), biases, lm_head tied',
                          falcon_config(vocab_size=16, hidden_size=24, num_attention_heads=6, num_kv_heads=6, alibi=True, bias=True,
                                        new_decoder_architecture=False, multi_query=False, parallel_attn=False,
                                        num_ln_in_parallel_attn=None),
                          # and 300 tokens: past 256, where bfloat16 rounds the positions
                          TOKEN_SIZES[:-1] + [(1, 300)])


# ViT and DeiT whole (patch 4, a 4 x 4 table for image_size 16): VIT_SIZES and far above the traced
# 24 x 20 (a 37 x 25 grid).
def vit_config(**kw):
    return {'image_size': 16, 'patch_size': 4, 'num_channels': 3, 'hidden_size': 32, 'num_hidden_layers': 2,
            'num_attention_heads': 2, 'intermediate_size': 64, 'hidden_act': 'gelu', 'layer_norm_eps': 1e-12,
            'qkv_bias': True, 'num_labels': 5, **kw}


def vit_cases(more=()):
    return [({'batch': b, 'height': h, 'width': w}, [image_input('pixel_values', [b, 3, h, w], seed)])
            for seed, (b, h, w) in enumerate(VIT_SIZES + [(1, 150, 101), *more], start=1)]


@model
def make_vit():
    c = vit_config()
    return fixture('vit', 'ViTForImageClassification (eval) with interpolate_pos_encoding=True as transformers writes it '
                   'today: the 4 x 4 table bicubic to size=(height // 4, width // 4), the table itself at the native square '
                   'grid; 2 layers, 2 heads of 16, gelu, the classifier over the CLS row',
                   c, ViTForImageClassification(c), {'pixel_values': ['batch', None, 'height', 'width']}, vit_cases(), ['logits'],
                   keep={'vit.embeddings.cls_token', 'vit.embeddings.position_embeddings'})


@model
def make_vit_scale_factor():
    c = vit_config()
    return fixture('vit_scale_factor', 'ViTForImageClassification (eval) with interpolate_pos_encoding=True as transformers '
                   'first wrote it (DINO\'s code): the table bicubic by scale_factor ((h0 + 0.1) / 4, (w0 + 0.1) / 4), the '
                   'table itself at the native square grid',
                   c, ViTForImageClassification(c, ViTEmbeddingsScaleFactor), {'pixel_values': ['batch', None, 'height', 'width']},
                   vit_cases(), ['logits'], keep={'vit.embeddings.cls_token', 'vit.embeddings.position_embeddings'})


@model
def make_deit():
    c = vit_config()
    net = DeiTForImageClassificationWithTeacher(c)
    with torch.no_grad():  # upstream makes them zeros until trained
        for p in (net.deit.embeddings.cls_token, net.deit.embeddings.distillation_token, net.deit.embeddings.position_embeddings):
            p.normal_(0, 1)
    return fixture('deit', 'DeiTForImageClassificationWithTeacher (eval) with interpolate_pos_encoding=True: the class and '
                   'distillation tokens, the 4 x 4 table\'s patch rows bicubic to size=(height // 4, width // 4) (its two '
                   'token rows kept), ViT\'s layers, the two heads averaged; and a batch of 2 at the native size, to trace there',
                   c, net, {'pixel_values': ['batch', None, 'height', 'width']}, vit_cases([(2, 16, 16)]), ['logits'],
                   keep={'deit.embeddings.cls_token', 'deit.embeddings.distillation_token', 'deit.embeddings.position_embeddings'})


# CvT: traced at 61 x 45; the least size (3: one token in every stage), one side 3, odd sizes, far above.
CVT_SIZES = [(2, 61, 45), (1, 3, 3), (1, 3, 50), (2, 17, 16), (1, 33, 34), (3, 8, 9), (1, 200, 143)]


@model
def make_cvt():
    c = {'num_channels': 3, 'patch_sizes': [7, 3, 3], 'patch_stride': [4, 2, 2], 'patch_padding': [2, 1, 1],
         'embed_dim': [16, 24, 32], 'num_heads': [1, 2, 4], 'depth': [1, 1, 2], 'mlp_ratio': [4.0, 4.0, 4.0],
         'qkv_bias': [True, True, True], 'cls_token': [False, False, True], 'qkv_projection_method': ['dw_bn', 'dw_bn', 'dw_bn'],
         'kernel_qkv': [3, 3, 3], 'padding_kv': [1, 1, 1], 'stride_kv': [2, 2, 2], 'padding_q': [1, 1, 1], 'stride_q': [1, 1, 1],
         'drop_path_rate': [0.0, 0.0, 0.0], 'num_labels': 5}
    net = CvtForImageClassification(c)
    with torch.no_grad():  # running statistics that matter
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.normal_(0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    cases = [({'batch': b, 'height': h, 'width': w}, [image_input('pixel_values', [b, 3, h, w], seed)])
             for seed, (b, h, w) in enumerate(CVT_SIZES, start=1)]
    return fixture('cvt', 'CvtForImageClassification (eval): convolutional token embeddings (7/4, 3/2, 3/2) with a '
                   'LayerNorm over the tokens, attention whose q, k, v are depthwise conv + BatchNorm projections of the '
                   'tokens reshaped to [b, c, h, w] (k and v strided 2), einsum scores, a class token in the last stage '
                   'split off by torch.split([1, h * w]); the classifier over its LayerNorm',
                   c, net, {'pixel_values': ['batch', None, 'height', 'width']}, cases, ['logits'],
                   keep={'cvt.encoder.stages.2.cls_token'})


# PVT v2: traced at 61 x 45; the least size (13: the first stage's 4 x 4 reduction needs a 4 x 4 grid;
# 1 with linear attention: one token in every stage), one side that small, odd sizes, a first-stage grid
# below and above the linear attention's 7 x 7 pool, far above.
PVT_V2_SIZES = [(2, 61, 45), (1, 13, 13), (1, 13, 50), (2, 17, 16), (1, 27, 30), (3, 16, 17), (1, 200, 143)]
PVT_V2_LINEAR_SIZES = [(2, 61, 45), (1, 1, 1), (1, 1, 50), (2, 17, 16), (1, 27, 30), (3, 8, 9), (1, 200, 143)]


def pvt_v2_fixture(name, description, sizes=PVT_V2_SIZES, **kw):
    c = {'num_channels': 3, 'num_encoder_blocks': 3, 'depths': [1, 1, 1], 'sr_ratios': [4, 2, 1], 'hidden_sizes': [16, 24, 32],
         'patch_sizes': [7, 3, 3], 'strides': [4, 2, 2], 'num_attention_heads': [1, 2, 2], 'mlp_ratios': [4, 4, 4],
         'hidden_act': 'gelu', 'layer_norm_eps': 1e-6, 'qkv_bias': True, 'linear_attention': False, 'num_labels': 5, **kw}
    cases = [({'batch': b, 'height': h, 'width': w}, [image_input('pixel_values', [b, 3, h, w], seed)])
             for seed, (b, h, w) in enumerate(sizes, start=1)]
    return fixture(name, description, c, PvtV2ForImageClassification(c), {'pixel_values': ['batch', None, 'height', 'width']},
                   cases, ['logits'])


@model
def make_pvt_v2():
    return pvt_v2_fixture('pvt_v2', 'PvtV2ForImageClassification (eval): overlapping patch embeddings (7/4, 3/2, 3/2), '
                          'spatial-reduction attention (keys and values from the tokens reshaped to [b, c, h, w] and reduced '
                          'by a strided conv of sr_ratio 4, 2; none at 1), the depthwise-conv FFN, each stage\'s tokens '
                          'reshaped to [b, c, h, w]; the classifier over the mean of the last stage\'s tokens')


@model
def make_pvt_v2_linear():
    return pvt_v2_fixture('pvt_v2_linear', 'PvtV2ForImageClassification (eval) with linear_attention (pvt_v2_b2_linear\'s): '
                          'keys and values from the tokens as [b, c, h, w] adaptive-average-pooled to 7 x 7, a 1 x 1 conv, '
                          'LayerNorm and gelu; a ReLU before the FFN\'s depthwise conv', PVT_V2_LINEAR_SIZES, linear_attention=True)


@model
def make_gptj():
    c = {'vocab_size': 64, 'n_positions': 128, 'n_embd': 32, 'n_layer': 2, 'n_head': 4, 'rotary_dim': 4, 'n_inner': None,
         'activation_function': 'gelu_new', 'layer_norm_epsilon': 1e-5, 'tie_word_embeddings': False}
    return fixture('gptj', 'GPTJForCausalLM (eager, no cache): rotary on the first rotary_dim 4 of each head\'s 8 channels, '
                   'interleaved (rotate_every_two: stack((-x2, x1), -1).flatten(-2); sin and cos repeat_interleave\'d), '
                   'read from the sin/cos table by gather at the position ids, scores divided by sqrt(head_dim), GPT-J\'s '
                   'causal mask with the padding mask written in, attention and gelu_new MLP in parallel on ln_1, an '
                   'lm_head of its own with a bias',
                   c, GPTJForCausalLM(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   token_cases(c['vocab_size'], mask_step=3), ['logits'])


# M2M100's lengths around its position table: max_position_embeddings 16 makes 16 + 2 + 2 = 20 rows;
# a length T needs padding_idx + 1 + T = T + 2 of them, so from 19 on forward makes the table again,
# longer (18 the last length without).
M2M100_SIZES = [(3, 6), (1, 1), (2, 7), (2, 13), (1, 18), (2, 19), (1, 30), (1, 120)]


@model
def make_m2m100():
    c = {'vocab_size': 64, 'd_model': 32, 'encoder_layers': 2, 'encoder_attention_heads': 4, 'encoder_ffn_dim': 64,
         'max_position_embeddings': 16, 'scale_embedding': True, 'pad_token_id': 1, 'activation_function': 'relu'}
    return fixture('m2m100', 'M2M100Encoder (eager): token embeddings times sqrt(d_model), sinusoidal positions read at '
                   'create_position_ids_from_input_ids (a cumsum of input_ids != pad, padding_idx at the padding) from a '
                   'table of max_position_embeddings + 4 rows made again, longer, when a sequence needs more (from 19 '
                   'tokens here), pre-norm layers (BartAttention with the expanded padding mask, relu FFN), layer_norm',
                   c, M2M100Encoder(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq']},
                   token_cases(c['vocab_size'], mask_step=3, pad_token=c['pad_token_id'], sizes=M2M100_SIZES),
                   ['last_hidden_state'])


# Speech2Text's frames: two stride-2 convs make T -> (T - 1) // 2 + 1 twice (1 -> 1, 5 -> 2, 8 -> 2,
# 9 -> 3, 13 -> 4, 72 -> 18, 73 -> 19); the position table holds 16 + 4 = 20 rows, and T' frames
# need T' + 2 of them, so from 73 frames (19 out) forward makes it again, longer.
SPEECH2TEXT_SIZES = [(3, 24), (1, 1), (2, 5), (1, 8), (2, 9), (2, 13), (1, 72), (2, 73), (1, 200)]


@model
def make_speech2text():
    c = {'d_model': 32, 'encoder_layers': 2, 'encoder_attention_heads': 4, 'encoder_ffn_dim': 64, 'max_source_positions': 16,
         'scale_embedding': True, 'pad_token_id': 1, 'num_conv_layers': 2, 'conv_kernel_sizes': [5, 5], 'conv_channels': 16,
         'input_feat_per_channel': 8, 'input_channels': 1, 'activation_function': 'relu'}
    cases = []
    for i, (b, t) in enumerate(SPEECH2TEXT_SIZES):
        cases.append(({'batch': b, 'frames': t}, [image_input('input_features', (b, t, 8), 300 + i),
                                                  ('attention_mask', padding_mask(b, t, max(1, t // 3)))]))
    return fixture('speech2text', 'Speech2TextEncoder (eager): Conv1dSubsampler (two Conv1d of kernel 5, stride 2, padding 2, '
                   'each followed by a GLU over the channels), times sqrt(d_model); the frames\' attention mask made from '
                   'the input mask\'s lengths ((L - 1) // 2 + 1 per conv) by writing a 1 at each row\'s last frame into '
                   'zeros (index assignment) and flip/cumsum/flip; sinusoidal positions of attention_mask.ne(1) (so the '
                   'padded frames read the padding row, zeros) from a table of max_source_positions + 4 rows made again, '
                   'longer, when needed (from 73 frames here); M2M100\'s pre-norm layers, layer_norm',
                   c, Speech2TextEncoder(c), {'input_features': ['batch', 'frames', None], 'attention_mask': ['batch', 'frames']},
                   cases, ['last_hidden_state'])


# Funnel's lengths: three blocks of one layer, each after the first pooling (separate_cls and
# truncate_seq: T -> ceil(T / 2), the last token dropped and the CLS kept) when the sequence holds more
# than 2 tokens; below 5 upstream itself fails (the position vectors are made for three blocks). The
# traced 11 (11 -> 6 -> 3), the least 5 (5 -> 3 -> 2), then every parity at each block: 6 (3, 2),
# 7 (4, 2), 8 (4, 2), 9 (5, 3), 10 (5, 3), 13 (7, 4), 30 (15, 8) and 120 (60, 30).
FUNNEL_SIZES = [(3, 11), (1, 5), (2, 6), (2, 7), (1, 8), (2, 9), (1, 10), (2, 13), (1, 30), (1, 120)]


def funnel_token_types(b, t):
    """[b, t] int64: the CLS token's type 2 at position 0, then segment 0 and, from the middle (row i
    moved by i), segment 1, as a tokenized pair of sentences."""
    types = torch.zeros((b, t), dtype=torch.long)
    for i in range(b):
        types[i, max(1, t // 2 + i):] = 1
    types[:, 0] = 2
    return types


@model
def make_funnel():
    c = {'vocab_size': 64, 'd_model': 32, 'n_head': 4, 'd_head': 8, 'd_inner': 64, 'block_sizes': [1, 1, 1], 'block_repeats': None,
         'layer_norm_eps': 1e-9, 'separate_cls': True, 'truncate_seq': True, 'pool_q_only': True, 'pooling_type': 'mean',
         'pad_token_id': 0, 'attention_type': 'relative_shift', 'hidden_act': 'gelu_new'}
    cases = []
    for b, t in FUNNEL_SIZES:
        mask = padding_mask(b, t, max(1, t // 4))
        cases.append(({'batch': b, 'seq': t}, [('input_ids', torch.randint(1, c['vocab_size'], (b, t)) * mask),
                                               ('attention_mask', mask), ('token_type_ids', funnel_token_types(b, t))]))
    return fixture('funnel', 'FunnelBaseModel (eval): embeddings and LayerNorm, three blocks of one layer; before blocks 1 and 2 '
                   'the sequence is mean-pooled by 2 (avg_pool2d, ceil_mode) keeping the CLS token apart and dropping the last '
                   'token (separate_cls, truncate_seq), queries only (pool_q_only), the token-type matrix, cls mask and mask '
                   'pooled after; relative_shift attention: the position vectors R of every block computed at the run\'s '
                   'length (gather from a sinusoid table at arange(max_dist, min_dist - 1, -stride)), the positional scores '
                   'shifted by reshape/slice (_relative_shift_gather), token-type scores by where, the mask as - 1e6',
                   c, FunnelBaseModel(c), {'input_ids': ['batch', 'seq'], 'attention_mask': ['batch', 'seq'], 'token_type_ids': ['batch', 'seq']},
                   cases, ['last_hidden_state'])


if __name__ == '__main__':
    main(sys.argv[1:], {name: (make, OUT_DIR) for name, make in MODELS.items()})
