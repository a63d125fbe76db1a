// Seeds for the reader fuzzer (tools/fuzz_onnx.sh): the zoo models traced as they are exported
// (examples/zoo/), as .onnx and as the library format's .om, into the directory given.
//   node tools/fuzz_seeds.mjs build/fuzz-onnx/corpus
import { writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as om from 'onemodel';

const out = process.argv[2];
if (!out) throw new Error('usage: node tools/fuzz_seeds.mjs DIR');
await om.ready();
const zoo = new URL('../examples/zoo/', import.meta.url);
for (const file of readdirSync(zoo).filter((f) => f.endsWith('.mjs')).sort()) {
  const { default: m } = await import(new URL(file, zoo));
  const traced = om.trace(m.model.eval(), m.inputs, m.outputNames ? { outputNames: m.outputNames } : {});
  for (const [ext, bytes] of [['.onnx', traced.toOnnx()], ['.om', traced.save()]]) {
    writeFileSync(join(out, file.replace('.mjs', ext)), bytes);
    console.log(`fuzz seeds: ${file.replace('.mjs', ext)} (${bytes.length} bytes)`);
  }
  traced.dispose();
}
