// Trains the zoo's GPT-style decoder (examples/zoo/gpt.mjs) on its generated data, traces it to ONNX,
// writes the file and checks it with onnxruntime-web at several batch sizes.
//
//   node examples/export-gpt.mjs [out.onnx]   (default out/gpt.onnx)
import * as model from './zoo/gpt.mjs';
import { exportScript } from './lib/export.mjs';

await exportScript(model, 'gpt');
