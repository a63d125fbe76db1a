#!/usr/bin/env python3
"""safetensors fixtures for tests/js/safetensors.test.mjs, written and checked by PyTorch.

The Python `safetensors` library is not available on the machine that makes the fixtures (Debian 12
has no package of it and the Python package index is not reachable), so this tool implements the
format itself, from its specification (the README of huggingface/safetensors and the rules its
reference implementation enforces), with Python's struct and json only:

    8 bytes   N, the header length, unsigned little-endian
    N bytes   UTF-8 JSON object: { "<name>": { "dtype": "F32", "shape": [2, 3],
              "data_offsets": [begin, end] }, ..., optional "__metadata__": { str: str } }
    the rest  the data: each tensor's bytes, row-major, little-endian, at [begin, end) of it

read() refuses what the reference refuses: a header over 100,000,000 bytes or past the end,
non-UTF-8 or invalid JSON, duplicate keys, an entry whose byte count is not numel * dtype size,
and offsets that do not cover the data exactly (sorted, each tensor starts where the previous
ended, the last ends at the end of the file). write() lays files out as the reference's
serialize() does: tensors sorted by dtype (in the reference's enum order, last first) then by
name, data contiguous in that order, compact JSON with "__metadata__" first, padded with spaces
to a multiple of 8 bytes. A state dict's tied tensors (one storage under two names, e.g. GPT's
lm_head.weight and wte.weight) are written once per name, as save_file does after a clone.

It never imports onemodel's code (only tools/pytorch_reference.py, for the model definitions).

    python3 tools/safetensors_fixtures.py generate
        writes tests/js/fixtures/safetensors/: resnet.safetensors (F32, num_batches_tracked I64)
        and gpt_f16.safetensors (F16, tied head) with PyTorch's outputs on fixed inputs in
        <name>.json; dtypes.safetensors with what PyTorch widens each value to in dtypes.json;
        roundtrip.json, a state dict for onemodel to save.
    node tools/safetensors_fixtures.mjs
        (onemodel's side) saves roundtrip.json with om.safetensors.save to
        saved_by_onemodel.safetensors.
    python3 tools/safetensors_fixtures.py verify FILE.safetensors EXPECTED.json
        reads FILE (e.g. saved_by_onemodel.safetensors) into PyTorch tensors and checks every
        tensor's dtype, shape and bits and the metadata against EXPECTED (roundtrip.json), and
        that FILE is byte for byte what write() makes of the same tensors.

(python3 being one that imports torch: Debian's python3-torch 1.13.1 on /usr/bin/python3.)
"""
import json
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_reference import (GPT, ResNet, family_fixture, randomize_norms,  # noqa: E402
                               randomize_weights, token_cases)

OUT_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'js', 'fixtures', 'safetensors'))
MAX_HEADER = 100_000_000

# The reference's dtypes in its enum order (write() puts later ones first) with their byte sizes.
SIZES = {'BOOL': 1, 'U8': 1, 'I8': 1, 'F8_E5M2': 1, 'F8_E4M3': 1, 'I16': 2, 'U16': 2, 'F16': 2, 'BF16': 2,
         'I32': 4, 'U32': 4, 'F32': 4, 'F64': 8, 'I64': 8, 'U64': 8}
RANK = {k: i for i, k in enumerate(SIZES)}
TORCH = {'BOOL': torch.bool, 'U8': torch.uint8, 'I8': torch.int8, 'I16': torch.int16, 'F16': torch.float16,
         'BF16': torch.bfloat16, 'I32': torch.int32, 'F32': torch.float32, 'F64': torch.float64, 'I64': torch.int64}
DTYPE_OF = {v: k for k, v in TORCH.items()}
STRUCT = {'U16': '<H', 'U32': '<I', 'U64': '<Q'}  # dtypes PyTorch 1.13 has no tensor type for


class FormatError(Exception):
    pass


def raw(t):
    """A tensor's bytes, row-major little-endian (x86 is little-endian)."""
    return t.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def write(path, tensors, metadata=None):
    """tensors: {name: torch tensor, or (dtype, shape, bytes) for a dtype torch lacks}."""
    items = []
    for name, t in tensors.items():
        dtype, shape, data = (DTYPE_OF[t.dtype], list(t.shape), raw(t)) if isinstance(t, torch.Tensor) else t
        assert len(data) == int(np.prod(shape, dtype=np.int64)) * SIZES[dtype], name
        items.append((name, dtype, shape, data))
    items.sort(key=lambda it: (-RANK[it[1]], it[0].encode('utf-8')))
    header = {} if metadata is None else {'__metadata__': metadata}
    offset = 0
    for name, dtype, shape, data in items:
        header[name] = {'dtype': dtype, 'shape': shape, 'data_offsets': [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(',', ':'), ensure_ascii=False).encode('utf-8')
    text += b' ' * (-len(text) % 8)
    blob = struct.pack('<Q', len(text)) + text + b''.join(it[3] for it in items)
    if path is not None:
        with open(path, 'wb') as f:
            f.write(blob)
    return blob


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise FormatError(f'duplicate key in {keys}')
    return dict(pairs)


def read(blob):
    """-> ({name: (dtype, shape, bytes)} in header order, metadata or None), checked as the reference does."""
    if len(blob) < 8:
        raise FormatError('shorter than the header length')
    (n,) = struct.unpack_from('<Q', blob)
    if n > MAX_HEADER or 8 + n > len(blob):
        raise FormatError(f'header length {n}')
    header = json.loads(blob[8:8 + n].decode('utf-8'), object_pairs_hook=no_duplicates)
    if not isinstance(header, dict):
        raise FormatError('header is not an object')
    metadata = header.pop('__metadata__', None)
    if metadata is not None and not (isinstance(metadata, dict) and all(isinstance(v, str) for v in metadata.values())):
        raise FormatError('__metadata__ is not an object of strings')
    data = blob[8 + n:]
    entries = []
    for name, e in header.items():
        dtype, shape, (begin, end) = e['dtype'], e['shape'], e['data_offsets']
        if not all(isinstance(d, int) and d >= 0 for d in shape) or not 0 <= begin <= end:
            raise FormatError(f'{name}: shape {shape} or offsets {begin, end}')
        if end - begin != int(np.prod(shape, dtype=object)) * SIZES[dtype]:
            raise FormatError(f'{name}: {end - begin} bytes for {dtype} {shape}')
        entries.append((begin, end, name))
    at = 0
    for begin, end, name in sorted(entries):
        if begin != at:
            raise FormatError(f'{name}: starts at {begin}, not {at}')
        at = end
    if at != len(data):
        raise FormatError(f'the tensors cover {at} of {len(data)} data bytes')
    tensors = {name: (header[name]['dtype'], header[name]['shape'], data[b:e]) for b, e, name in entries}
    return {k: tensors[k] for k in header}, metadata


def as_torch(dtype, shape, data):
    return torch.frombuffer(bytearray(data), dtype=TORCH[dtype]).reshape(shape) if data else torch.zeros(shape, dtype=TORCH[dtype])


def load(path):
    """The state dict of a file, as PyTorch tensors, and its metadata."""
    with open(path, 'rb') as f:
        tensors, metadata = read(f.read())
    return {k: as_torch(*v) for k, v in tensors.items()}, metadata


# ---- expected values in JSON: exact bits, as JSON numbers cannot hold NaN payloads or 2^63 ------

def expect(dtype, shape, values):
    """An expected tensor: float32 as its uint32 bits, int64 as decimal strings, bool as booleans."""
    if dtype == 'float32':
        return {'shape': shape, 'dtype': dtype, 'bits': values}
    return {'shape': shape, 'dtype': dtype, 'data': [str(v) for v in values] if dtype == 'int64' else values}


def expect_torch(t):
    """What onemodel must load t as: float dtypes widened to float32 by PyTorch's .float(), ints to int64."""
    shape = list(t.shape)
    if t.dtype == torch.bool:
        return expect('bool', shape, [bool(v) for v in t.reshape(-1).tolist()])
    if t.is_floating_point():
        return expect('float32', shape, [v & 0xffffffff for v in t.float().reshape(-1).view(torch.int32).tolist()])
    return expect('int64', shape, [int(v) for v in t.reshape(-1).tolist()])


def bits_of(values):
    return torch.tensor(np.array(values, dtype=np.uint32).view(np.int32)).view(torch.float32)


# ---- fixtures ------------------------------------------------------------------------------------

def model_fixture(name, net, dtype, case, metadata):
    """Saves net's state dict (cast to dtype) as <name>.safetensors, loads that file back into net
    (load_state_dict widens F16 to the model's float32) and writes PyTorch's outputs on case."""
    path = os.path.join(OUT_DIR, f'{name}.safetensors')
    write(path, {k: v.to(dtype) if v.is_floating_point() else v for k, v in net.state_dict().items()}, metadata)
    state, got = load(path)
    assert got == metadata
    net.load_state_dict(state)
    fx = family_fixture(net.__class__.__name__, net, {}, 0, [case])
    del fx['state_dict'], fx['axes'], fx['trace_case'], fx['failures']  # the weights are in the .safetensors
    fx['file'] = f'{name}.safetensors'
    fx['dtype'] = DTYPE_OF[dtype]
    return fx


def make_resnet():
    net = ResNet()
    randomize_weights(net)
    randomize_norms(net)
    case = ({'batch': 2, 'height': 17, 'width': 23}, [('x', torch.randn(2, 3, 17, 23))], lambda m, x: [('logits', m(x))])
    fx = model_fixture('resnet', net, torch.float32, case, {'format': 'pt'})
    fx['model'] = 'the ResNet of tools/pytorch_reference.py (Conv2d, BatchNorm2d in eval, num_batches_tracked I64), saved as F32'
    return fx


def make_gpt_f16():
    net = GPT()
    randomize_norms(net)
    fx = model_fixture('gpt_f16', net, torch.float16, token_cases(20, [(2, 8)], lambda m, idx: [('logits', m(idx))])[0],
                       {'format': 'pt', 'source': 'tools/safetensors_fixtures.py'})
    fx['model'] = ('the GPT of tools/pytorch_reference.py saved as F16 (lm_head.weight tied to wte.weight, written under both '
                   'names); the outputs are PyTorch\'s after load_state_dict of that file (F16 widened to float32)')
    return fx


F16_SPECIAL = [0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400, 0x3c00, 0xbc00, 0x3555, 0x7bff, 0xfbff,
               0x7c00, 0xfc00, 0x7c01, 0xfc01, 0x7d00, 0x7e00, 0xfe00, 0x7fff, 0xffff]


def make_dtypes():
    """One tensor of each dtype onemodel loads, with edge values, and what each must load as."""
    patterns = sorted(set(range(0, 65536, 37)) | set(range(0, 64)) | set(F16_SPECIAL)
                      | {0x7f80, 0xff80, 0x7f81, 0x7fc0, 0xffc1, 0x0001, 0x807f})
    u16 = np.array(patterns, dtype=np.uint16)
    f16 = torch.from_numpy(u16.view(np.float16).copy())
    bf16 = torch.from_numpy(u16.view(np.int16).copy()).view(torch.bfloat16)
    f32 = bits_of([0x00000000, 0x80000000, 0x00000001, 0x7f7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001,
                   0xffc12345, 0x3eaaaaab])
    ints = [-(2 ** 63), 2 ** 63 - 1, 2 ** 53 + 1, -1, 0, 123456789012345]
    tensors = {
        'f16': f16, 'bf16': bf16.reshape(-1, 1), 'f32': f32.reshape(2, 5), 'i64': torch.tensor(ints).reshape(3, 2),
        'bool': torch.tensor([[True, False], [False, True]]), 'i32': torch.tensor([-2 ** 31, 2 ** 31 - 1, 0, -5], dtype=torch.int32),
        'i16': torch.tensor([-32768, 32767, -1], dtype=torch.int16), 'i8': torch.tensor([-128, 127, -1, 0], dtype=torch.int8),
        'u8': torch.tensor([0, 255, 128], dtype=torch.uint8), 'scalar': torch.tensor(2.5), 'empty': torch.zeros(0, 3),
        'nested.name/with ünïcode 名前': torch.tensor([1.0, -2.0]),
    }
    expected = {k: expect_torch(v) for k, v in tensors.items()}
    for dtype, values in [('U16', [0, 1, 65535, 32768]), ('U32', [0, 1, 2 ** 32 - 1, 2 ** 31])]:
        tensors[dtype.lower()] = (dtype, [len(values)], b''.join(struct.pack(STRUCT[dtype], v) for v in values))
        expected[dtype.lower()] = expect('int64', [len(values)], values)
    metadata = {'format': 'pt', 'note': 'héllo ✓ "quoted" \\ \n'}
    write(os.path.join(OUT_DIR, 'dtypes.safetensors'), tensors, metadata)
    return {'torch_version': torch.__version__, 'metadata': metadata, 'expected': expected}


def make_roundtrip():
    """A state dict for onemodel to save (verify checks the file it wrote): float32 edge values
    by bits, int64 extremes, bool, 0-d, empty, a non-ASCII name and a tied pair."""
    w = bits_of([0x3f800000, 0x80000000, 0x7fc00000, 0x7f800000, 0x00000001, 0x3eaaaaab]).reshape(2, 3)
    state = {
        'layer.weight': w, 'layer.bias': torch.tensor([0.5, -1.25, 3.0]), 'head.weight': w,
        'bn.num_batches_tracked': torch.tensor(7), 'ids': torch.tensor([-(2 ** 63), 2 ** 63 - 1, 0, -2]),
        'mask': torch.tensor([[True, False], [True, True]]), 'empty': torch.zeros(0, 4), 'ünïcode.名前': torch.tensor([1.5]),
    }
    return {'torch_version': torch.__version__, 'metadata': {'format': 'pt', 'saved_by': 'onemodel'},
            'tied': [['head.weight', 'layer.weight']], 'expected': {k: expect_torch(v) for k, v in state.items()}}


def verify(path, expected_path):
    with open(path, 'rb') as f:
        blob = f.read()
    with open(expected_path) as f:
        spec = json.load(f)
    tensors, metadata = read(blob)
    assert metadata == spec['metadata'], f'metadata {metadata} != {spec["metadata"]}'
    assert list(sorted(tensors)) == list(sorted(spec['expected'])), f'names {list(tensors)} != {list(spec["expected"])}'
    state = {}
    for name, exp in spec['expected'].items():
        t = as_torch(*tensors[name])
        state[name] = t
        assert list(t.shape) == exp['shape'], f'{name}: shape {list(t.shape)} != {exp["shape"]}'
        assert expect_torch(t) == exp, f'{name}: values differ'
        assert DTYPE_OF[t.dtype] == {'float32': 'F32', 'int64': 'I64', 'bool': 'BOOL'}[exp['dtype']], f'{name}: dtype {t.dtype}'
    assert write(None, state, metadata) == blob, 'the file is not laid out as the reference writes it'
    print(f'{path}: {len(tensors)} tensors and the metadata read by PyTorch {torch.__version__} equal {expected_path}; '
          'the layout is the reference\'s, byte for byte')


def generate():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    os.makedirs(OUT_DIR, exist_ok=True)
    for name, make in [('resnet', make_resnet), ('gpt_f16', make_gpt_f16), ('dtypes', make_dtypes), ('roundtrip', make_roundtrip)]:
        torch.manual_seed(0)
        fx = make()
        path = os.path.join(OUT_DIR, f'{name}.json')
        with open(path, 'w') as f:
            json.dump(fx, f, separators=(',', ':'), ensure_ascii=False)
            f.write('\n')
        print(f'{path}: {os.path.getsize(path)} bytes')
    for f in sorted(os.listdir(OUT_DIR)):
        if f.endswith('.safetensors'):
            print(f'{os.path.join(OUT_DIR, f)}: {os.path.getsize(os.path.join(OUT_DIR, f))} bytes')


if __name__ == '__main__':
    if sys.argv[1:2] == ['generate'] and len(sys.argv) == 2:
        generate()
    elif sys.argv[1:2] == ['verify'] and len(sys.argv) == 4:
        verify(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
