// Trains the zoo's MLP regression (examples/zoo/mlp.mjs) on its generated data, traces it to ONNX,
// writes the file and checks it with onnxruntime-web at several batch sizes.
//
//   node examples/export-mlp.mjs [out.onnx]   (default out/mlp.onnx)
import * as model from './zoo/mlp.mjs';
import { exportScript } from './lib/export.mjs';

await exportScript(model, 'mlp');
