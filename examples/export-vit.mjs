// Trains the zoo's Vision Transformer (examples/zoo/vit.mjs) on its generated data, traces it to
// ONNX, writes the file and checks it with onnxruntime-web at several batch sizes.
//
//   node examples/export-vit.mjs [out.onnx]   (default out/vit.onnx)
import * as model from './zoo/vit.mjs';
import { exportScript } from './lib/export.mjs';

await exportScript(model, 'vit');
