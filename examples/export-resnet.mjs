// Trains the zoo's Residual CNN (examples/zoo/resnet.mjs) on its generated data, traces it to ONNX,
// writes the file and checks it with onnxruntime-web at several batch sizes.
//
//   node examples/export-resnet.mjs [out.onnx]   (default out/resnet.onnx)
import * as model from './zoo/resnet.mjs';
import { exportScript } from './lib/export.mjs';

await exportScript(model, 'resnet');
