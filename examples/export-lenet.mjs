// Trains the zoo's LeNet-style CNN (BatchNorm) (examples/zoo/lenet.mjs) on its generated data, traces it to ONNX,
// writes the file and checks it with onnxruntime-web at several batch sizes.
//
//   node examples/export-lenet.mjs [out.onnx]   (default out/lenet.onnx)
import * as model from './zoo/lenet.mjs';
import { exportScript } from './lib/export.mjs';

await exportScript(model, 'lenet');
