// Seeds for the reader fuzzer (tools/fuzz_onnx.sh): the zoo models traced as they are exported
// (examples/zoo/), as .onnx and as the library format's .om, an .om whose initializers have aliases, and the session tests' hand-written
// graphs (tools/onnx_bytes.mjs: attributes, initializers, a product of symbolic size, subgraphs), into the
// directory given.
//   node tools/fuzz_seeds.mjs build/fuzz-onnx/corpus
import { writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as om from 'onemodel';
import { onnxBytes, reluChain } from './onnx_bytes.mjs';

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
// initializers with aliases (the .om's version 2 entries): two fresh BatchNorms, whose ones and zeros are stored once under eight names
{
  const { nn } = om;
  const model = new nn.Sequential(new nn.Conv2d(2, 4, 3), new nn.BatchNorm2d(4), new nn.Conv2d(4, 4, 1), new nn.BatchNorm2d(4)).eval();
  const traced = om.trace(model, { x: [om.randn([2, 2, 5, 5], { seed: 1 }), ['n', null, null, null]] });
  writeFileSync(join(out, 'aliases.om'), traced.save());
  console.log('fuzz seeds: aliases.om');
  traced.dispose();
}
const x = { name: 'x', dims: ['n', 2] };
const written = {
  chain: reluChain(8),
  outer: onnxBytes({ nodes: [{ op: 'Transpose', inputs: ['x'], outputs: ['xt'] }, { op: 'MatMul', inputs: ['x', 'xt'], outputs: ['y'] }],
                     inputs: [x], outputs: ['y', 'y'] }),
  div: onnxBytes({ nodes: [{ op: 'Shape', inputs: ['x'], outputs: ['s'] }, { op: 'Div', inputs: ['s', 'z'], outputs: ['y'] }],
                   inputs: [x], outputs: ['y'], inits: [{ name: 'z', dtype: 'int64', dims: [2], values: [1, 2] }] }),
  slice: onnxBytes({ nodes: [{ op: 'Slice', inputs: ['x', 's', 'e', 'a'], outputs: ['y'] }, { op: 'Squeeze', inputs: ['y', 'a'], outputs: ['z'] }],
                     inputs: [x], outputs: ['z'], inits: [['s', 0], ['e', 1], ['a', 1]].map(([name, v]) => ({ name, dtype: 'int64', dims: [1], values: [v] })) }),
  dropout: onnxBytes({ nodes: [{ op: 'Dropout', inputs: ['x', '', 't'], outputs: ['y'], ints: { seed: 1 } }], inputs: [x], outputs: ['y'],
                       inits: [{ name: 't', dtype: 'bool', dims: [], values: [false] }] }),
  // subgraphs reading the outer x: an If on a size, a Loop with a scan output, a Scan
  if: onnxBytes({ nodes: [{ op: 'Shape', inputs: ['x'], outputs: ['s'] }, { op: 'ReduceSum', inputs: ['s'], outputs: ['n'] },
                          { op: 'Greater', inputs: ['n', 'n0'], outputs: ['c'] },
                          { op: 'If', inputs: ['c'], outputs: ['y'], attrs: { then_branch: { graph: { nodes: [{ op: 'Relu', inputs: ['x'], outputs: ['r'] }], outputs: ['r'] } },
                                                                              else_branch: { graph: { nodes: [{ op: 'Neg', inputs: ['x'], outputs: ['m'] }], outputs: ['m'] } } } }],
                  inputs: [x], outputs: ['y'], inits: [{ name: 'n0', dtype: 'int64', dims: [], values: [4] }] }),
  loop: onnxBytes({ nodes: [{ op: 'Loop', inputs: ['m', '', 'x'], outputs: ['y', 'scan'], attrs: { body: { graph: {
                      nodes: [{ op: 'Add', inputs: ['s', 'x'], outputs: ['s2'] }, { op: 'Identity', inputs: ['c'], outputs: ['c2'] }, { op: 'Relu', inputs: ['s2'], outputs: ['o'] }],
                      inputs: [{ name: 'i', dims: [], dtype: 'int64' }, { name: 'c', dims: [], dtype: 'bool' }, { name: 's', dims: null }], outputs: ['c2', 's2', 'o'] } } } }],
                    inputs: [x], outputs: ['y', 'scan'], inits: [{ name: 'm', dtype: 'int64', dims: [], values: [3] }] }),
  scan: onnxBytes({ nodes: [{ op: 'Scan', inputs: ['a', 'x'], outputs: ['b', 'y'], ints: { num_scan_inputs: 1, scan_input_directions: [1] }, attrs: { body: { graph: {
                      nodes: [{ op: 'Add', inputs: ['acc', 'xt'], outputs: ['acc2'] }, { op: 'Identity', inputs: ['acc2'], outputs: ['yt'] }],
                      inputs: [{ name: 'acc', dims: null }, { name: 'xt', dims: null }], outputs: ['acc2', 'yt'] } } } }],
                    inputs: [x], outputs: ['b', 'y'], inits: [{ name: 'a', dtype: 'float32', dims: [2], values: [0, 0] }] }),
  // a Loop body declaring every type it takes and gives (the session checks them against the node's at create), and the rows of
  // src/runtime/shapes.c a symbolic size reaches at create (LayerNormalization, Einsum, GatherElements, ScatterElements): mutated
  // types, sizes, axes and equations reach those checks
  typed: onnxBytes({ nodes: [{ op: 'Loop', inputs: ['m', '', 'x'], outputs: ['t', 'scan'], attrs: { body: { graph: {
                       nodes: [{ op: 'Add', inputs: ['s', 'x'], outputs: ['s2'] }, { op: 'Identity', inputs: ['c'], outputs: ['c2'] }, { op: 'Relu', inputs: ['s2'], outputs: ['o'] }],
                       inputs: [{ name: 'i', dims: [], dtype: 'int64' }, { name: 'c', dims: [], dtype: 'bool' }, { name: 's', dims: null, dtype: 'float32' }],
                       outputs: [{ name: 'c2', dtype: 'bool' }, { name: 's2', dtype: 'float32' }, { name: 'o', dtype: 'float32' }] } } } },
                             { op: 'LayerNormalization', inputs: ['t', 'g', 'b'], outputs: ['l'], ints: { axis: -1 } },
                             { op: 'Einsum', inputs: ['l', 'w'], outputs: ['e'], strings: { equation: 'nj,jk->nk' } },
                             { op: 'GatherElements', inputs: ['e', 'i'], outputs: ['ge'], ints: { axis: 1 } },
                             { op: 'ScatterElements', inputs: ['ge', 'i', 'ge'], outputs: ['y'], ints: { axis: 1 } }],
                     inputs: [x], outputs: [{ name: 'y', dtype: 'float32' }, 'scan'],
                     inits: [{ name: 'm', dtype: 'int64', dims: [], values: [2] }, { name: 'g', dtype: 'float32', dims: [2], values: [1, 2] },
                             { name: 'b', dtype: 'float32', dims: [2], values: [0, 1] }, { name: 'w', dtype: 'float32', dims: [2, 3], values: [1, 2, 3, 4, 5, 6] },
                             { name: 'i', dtype: 'int64', dims: [1, 2], values: [0, 1] }] }),
  // the rows of src/runtime/shapes.c for ConvTranspose, Resize, GroupNormalization, GatherND, ScatterND and LSTM, each reached
  // with a symbolic size: mutated weights, channels, groups, counts of scales, index widths and hidden sizes reach those checks
  rows: onnxBytes({ nodes: [{ op: 'ConvTranspose', inputs: ['x4', 'cw', 'cb'], outputs: ['ct'], ints: { kernel_shape: [2, 2], strides: [2, 2] } },
                            { op: 'Resize', inputs: ['ct', '', 'rs'], outputs: ['rz'] },
                            { op: 'GroupNormalization', inputs: ['rz', 'gs', 'gb'], outputs: ['y4'], ints: { num_groups: 2 } },
                            { op: 'GatherND', inputs: ['x', 'gi'], outputs: ['gn'] },
                            { op: 'ScatterND', inputs: ['x', 'si', 'su'], outputs: ['sn'] },
                            { op: 'LSTM', inputs: ['xs', 'lw', 'lr', 'lb'], outputs: ['ly', 'lh', 'lc'], ints: { hidden_size: 2 } }],
                    inputs: [{ name: 'x4', dims: ['n', 2, 2, 2] }, x, { name: 'xs', dims: ['t', 1, 2] }], outputs: ['y4', 'gn', 'sn', 'ly', 'lh', 'lc'], opset: 18,
                    inits: [{ name: 'cw', dtype: 'float32', dims: [2, 2, 2, 2], values: Array.from({ length: 16 }, (_, k) => k / 8) },
                            { name: 'cb', dtype: 'float32', dims: [2], values: [0.5, -0.5] },
                            { name: 'rs', dtype: 'float32', dims: [4], values: [1, 1, 0.5, 1.5] },
                            { name: 'gs', dtype: 'float32', dims: [2], values: [1, 2] }, { name: 'gb', dtype: 'float32', dims: [2], values: [0, 1] },
                            { name: 'gi', dtype: 'int64', dims: [2, 1], values: [0, 1] },
                            { name: 'si', dtype: 'int64', dims: [1, 1], values: [0] }, { name: 'su', dtype: 'float32', dims: [1, 2], values: [7, 8] },
                            { name: 'lw', dtype: 'float32', dims: [1, 8, 2], values: Array.from({ length: 16 }, (_, k) => k / 16) },
                            { name: 'lr', dtype: 'float32', dims: [1, 8, 2], values: Array.from({ length: 16 }, (_, k) => -k / 16) },
                            { name: 'lb', dtype: 'float32', dims: [1, 16], values: Array.from({ length: 16 }, () => 0.1) }] }),
  // attributes of every type the table's lists check (int, ints, float, floats, string, strings): mutations of their names, types
  // and values reach the session's attribute check and the rules behind it (tests/c/test_session.c's op_table_attributes_mutated
  // goes over every row)
  attributes: onnxBytes({ nodes: [{ op: 'Gemm', inputs: ['x', 'w'], outputs: ['g'], ints: { transB: 1 }, floats: { alpha: 0.5, beta: 2 } },
                                  { op: 'LeakyRelu', inputs: ['g'], outputs: ['l'], floats: { alpha: 0.1 } },
                                  { op: 'Unsqueeze', inputs: ['l', 'u'], outputs: ['l4'] },
                                  { op: 'MaxPool', inputs: ['l4'], outputs: ['p'], ints: { kernel_shape: [1, 1], strides: [1, 1], pads: [0, 0, 0, 0], ceil_mode: 0 }, strings: { auto_pad: 'NOTSET' } },
                                  { op: 'Flatten', inputs: ['p'], outputs: ['f'], ints: { axis: 1 } },
                                  { op: 'Cast', inputs: ['f'], outputs: ['c'], ints: { to: 1, saturate: 1 } },
                                  { op: 'Scaler', domain: 'ai.onnx.ml', inputs: ['c'], outputs: ['s'], floats: { offset: [0.5, 0.5], scale: [2, 2] } },
                                  { op: 'StringNormalizer', inputs: ['k'], outputs: ['kn'], attrs: { case_change_action: 'LOWER', stopwords: { ss: ['a', 'b'] } } }],
                         inputs: [x], outputs: ['s', { name: 'kn', dtype: 'string' }],
                         inits: [{ name: 'w', dtype: 'float32', dims: [2, 2], values: [1, 2, 3, 4] }, { name: 'u', dtype: 'int64', dims: [2], values: [2, 3] },
                                 { name: 'k', dtype: 'string', dims: [2], values: ['A', 'c'] }], imports: [{ domain: 'ai.onnx.ml', version: 3 }] }),
  // strings: an initializer, string ops and rows that move them, a Cast each way
  strings: onnxBytes({ nodes: [{ op: 'StringNormalizer', inputs: ['w'], outputs: ['n'], attrs: { case_change_action: 'UPPER', stopwords: { ss: ['monday'] } } },
                               { op: 'StringSplit', inputs: ['n'], outputs: ['p', 'c'], attrs: { delimiter: '-' } }, { op: 'Reshape', inputs: ['p', 'r'], outputs: ['q'] },
                               { op: 'StringConcat', inputs: ['q', 'k'], outputs: ['y'] }, { op: 'RegexFullMatch', inputs: ['y'], outputs: ['m'], attrs: { pattern: '[A-Z]+(\\d|-)*' } },
                               { op: 'Cast', inputs: ['c'], outputs: ['cs'], ints: { to: 8 } }, { op: 'Cast', inputs: ['cs'], outputs: ['f'], ints: { to: 1 } }],
                       inputs: [{ name: 'w', dims: [1, 'n'], dtype: 'string' }], outputs: [{ name: 'm', dtype: 'bool' }, 'f'],
                       inits: [{ name: 'k', dtype: 'string', dims: [], values: ['é'] }, { name: 'r', dtype: 'int64', dims: [1], values: [-1] }] }),
  // every size fixed: the session plans at create, so a mutated size or attribute that makes a node contradict its input shapes
  // is refused there (Conv's channels and kernel_shape, Squeeze, Gather's constant indices, Concat, MatMul, Split, Reshape)
  fixed: onnxBytes({ nodes: [{ op: 'Conv', inputs: ['x', 'w'], outputs: ['c'], ints: { kernel_shape: [2, 2], pads: [0, 0, 1, 1] } },
                             { op: 'Squeeze', inputs: ['c', 'a0'], outputs: ['s'] }, { op: 'Gather', inputs: ['s', 'i'], outputs: ['g'], ints: { axis: 1 } },
                             { op: 'Concat', inputs: ['g', 'g'], outputs: ['k'], ints: { axis: 0 } }, { op: 'MatMul', inputs: ['k', 'm'], outputs: ['p'] },
                             { op: 'Split', inputs: ['p', 'sp'], outputs: ['p0', 'p1'], ints: { axis: 2 } }, { op: 'Reshape', inputs: ['p0', 'r'], outputs: ['y'] }],
                     inputs: [{ name: 'x', dims: [1, 2, 3, 3] }], outputs: ['y', 'p1'],
                     inits: [{ name: 'w', dtype: 'float32', dims: [1, 2, 2, 2], values: [1, 2, 3, 4, 5, 6, 7, 8] }, { name: 'a0', dtype: 'int64', dims: [1], values: [0] },
                             { name: 'i', dtype: 'int64', dims: [2], values: [0, -1] }, { name: 'm', dtype: 'float32', dims: [3, 3], values: [1, 0, 0, 0, 1, 0, 0, 0, 1] },
                             { name: 'sp', dtype: 'int64', dims: [2], values: [1, 2] }, { name: 'r', dtype: 'int64', dims: [1], values: [-1] }] }),
};
for (const [name, bytes] of Object.entries(written)) {
  writeFileSync(join(out, `${name}.onnx`), bytes);
  console.log(`fuzz seeds: ${name}.onnx (${bytes.length} bytes)`);
}
