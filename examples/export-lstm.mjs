// Trains the zoo's LSTM sequence classifier (examples/zoo/lstm.mjs) on its generated data, traces it to ONNX,
// writes the file and checks it with onnxruntime-web at several batch sizes.
//
//   node examples/export-lstm.mjs [out.onnx]   (default out/lstm.onnx)
import * as model from './zoo/lstm.mjs';
import { exportScript } from './lib/export.mjs';

await exportScript(model, 'lstm');
