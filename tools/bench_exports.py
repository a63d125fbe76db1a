#!/usr/bin/env python3
"""Bench-only files for tools/bench.mjs's exports section (OM_BENCH_EXPORTS_ONLY=1): models at bench
size exported by torch.onnx.export (opset 17, the newest PyTorch 1.13 writes; constant folding on,
eval mode, the batch axis dynamic, and the sequence axis for token models) to <dir>/<name>.onnx,
with the state dict they were exported with in <dir>/<name>.safetensors, so that the bench traces
the port with the same weights and runs both files side by side:

    vit, resnet18   torchvision 0.14's own models (ports: examples/torchvision/)
    bert, llama     Hugging Face-style models: tools/transformers_ports.py's modules (the same module
                    tree, names and operations as transformers' BertModel and LlamaForCausalLM),
                    weights random (transformers_ports.randomize, seed 0) (ports: examples/transformers/)
    lstm            a bidirectional batch-first LSTM(64, 128) over 32 steps, Linear(256, 10) on the last
                    step (torch writes one LSTM node; port: tools/bench.mjs's BiLSTMClassifier)

Not committed: the bench writes them into the cache.

    /usr/bin/python3 tools/bench_exports.py DIR [NAME ...]   (only these models; default all)
"""
import io
import os
import sys

import torch
import torchvision
from torchvision.models.vision_transformer import VisionTransformer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_fixtures import write  # noqa: E402
import transformers_ports as hf  # noqa: E402

# The Hugging Face-style models' configs; tools/bench.mjs builds the ports from the same fields.
BERT = {'vocab_size': 1000, 'hidden_size': 128, 'num_hidden_layers': 4, 'num_attention_heads': 4, 'intermediate_size': 512,
        'hidden_act': 'gelu', 'max_position_embeddings': 128, 'type_vocab_size': 2, 'layer_norm_eps': 1e-12, 'pad_token_id': 0}
LLAMA = {'vocab_size': 1000, 'hidden_size': 128, 'intermediate_size': 512, 'num_hidden_layers': 4, 'num_attention_heads': 4,
         'num_key_value_heads': 2, 'hidden_act': 'silu', 'rms_norm_eps': 1e-6, 'rope_theta': 10000.0,
         'max_position_embeddings': 2048, 'tie_word_embeddings': False}
TOKENS = (2, 32)  # batch, sequence at export


def image():
    return {'x': torch.randn(2, 3, 64, 64)}


def tokens(mask):
    ids = {'input_ids': torch.randint(0, 1000, TOKENS)}
    return {**ids, 'attention_mask': torch.ones(TOKENS, dtype=torch.long)} if mask else ids


class BiLSTMClassifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(64, 128, batch_first=True, bidirectional=True)
        self.fc = torch.nn.Linear(256, 10)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


def sequence():
    return {'x': torch.randn(2, 32, 64)}


def randomized(net):
    hf.randomize(net)
    return net


# name: (builder, example inputs, output names)
MODELS = {
    'vit': (lambda: VisionTransformer(image_size=64, patch_size=8, num_layers=4, num_heads=4, hidden_dim=128, mlp_dim=512, num_classes=10),
            image, ['logits']),
    'resnet18': (lambda: torchvision.models.resnet18(num_classes=10), image, ['logits']),
    'bert': (lambda: randomized(hf.BertModel(BERT)), lambda: tokens(True), ['last_hidden_state', 'pooler_output']),
    'llama': (lambda: randomized(hf.LlamaForCausalLM(LLAMA)), lambda: tokens(False), ['logits']),
    'lstm': (BiLSTMClassifier, sequence, ['logits']),
}


def chosen(tool, out, names, models):
    """The names of models to export into out (made), all where names is empty; one thread, as the
    benches compare one thread each side. Exits naming the first name models does not hold."""
    torch.set_num_threads(1)
    os.makedirs(out, exist_ok=True)
    unknown = [n for n in names if n not in models]
    if unknown:
        sys.exit(f'{tool}: no model {unknown[0]} (the models: {", ".join(models)})')
    return names or list(models)


def main(out, names):
    for name in chosen('bench_exports', out, names, MODELS):
        build, example, outputs = MODELS[name]
        torch.manual_seed(0)
        net = build().eval()
        inputs = example()
        axes = {n: {0: 'batch'} if n == 'x' else {0: 'batch', 1: 'seq'} for n in inputs}
        buf = io.BytesIO()
        torch.onnx.export(net, tuple(inputs.values()), buf, opset_version=17, input_names=list(inputs), output_names=outputs,
                          dynamic_axes={**axes, **{n: {0: 'batch'} for n in outputs}}, do_constant_folding=True)
        with open(os.path.join(out, f'{name}.onnx'), 'wb') as f:
            f.write(buf.getvalue())
        write(os.path.join(out, f'{name}.safetensors'), dict(net.state_dict()), {'format': 'pt'})
        print(f'bench_exports: {name}')


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit('usage: tools/bench_exports.py DIR [NAME ...]')
    main(sys.argv[1], sys.argv[2:])
