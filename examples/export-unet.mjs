// Trains the zoo's UNet-style segmenter (examples/zoo/unet.mjs) on its generated data, traces it to ONNX,
// writes the file and checks it with onnxruntime-web at several batch sizes.
//
//   node examples/export-unet.mjs [out.onnx]   (default out/unet.onnx)
import * as model from './zoo/unet.mjs';
import { exportScript } from './lib/export.mjs';

await exportScript(model, 'unet');
