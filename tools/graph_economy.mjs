// How many nodes the tracer writes for conv nets with symbolic height and width and for a
// GPT-2-small-size decoder with symbolic batch and sequence, and how many of them compute shapes
// (docs/symbolic-axes.md, "What each op writes"; tests/js/graph-economy.test.mjs holds the counts):
//   node tools/graph_economy.mjs            every model, GPT-2 small at its full size (124M parameters)
//   node tools/graph_economy.mjs --small    GPT-2 small's 12 layers and 12 heads at d 96 (the same graph)
import * as om from 'onemodel';
import { GPT2, GPT2_SMALL } from './gpt2_model.mjs';
import { UNet } from '../examples/zoo/unet.mjs';
import { ResNet } from '../examples/zoo/resnet.mjs';
import { GPT2LMHeadModel } from '../examples/transformers/gpt2.mjs';

await om.ready();
const nn = om.nn;

/**
 * The shape computations of a traced graph (tm.graph()): Shape nodes, and the nodes that read only
 * such nodes' outputs and constants (at least one of the former): Gather, Slice, Concat,
 * Unsqueeze, Range, Mul, ... on sizes, and what they compute at the run's sizes (a causal mask, a
 * slice of the position table). A constant is an initializer or what nodes compute from
 * initializers alone (an Unsqueeze of a weight): no size and no input in it.
 */
export function shapeNodes(graph) {
  const constant = new Set(graph.initializers.map((i) => i.name));
  const shape = new Set();
  const nodes = [];
  for (const n of graph.nodes) {
    const ins = n.inputs.filter((v) => v !== '');
    if (n.opType !== 'Shape' && ins.every((v) => constant.has(v))) {
      for (const v of n.outputs) constant.add(v);
      continue;
    }
    const fromShapes = n.opType === 'Shape'
      || (ins.some((v) => shape.has(v)) && ins.every((v) => shape.has(v) || constant.has(v)));
    if (!fromShapes) continue;
    nodes.push(n);
    for (const v of n.outputs) shape.add(v);
  }
  return nodes;
}

/** { nodes, shapeNodes, ops: 'Shape,Gather,...' of the shape computations } of a traced model. */
export function economy(tm) {
  const g = tm.graph();
  const s = shapeNodes(g);
  return { nodes: g.nodes.length, shapeNodes: s.length, ops: s.map((n) => n.opType).join(',') };
}

/** A UNet of widths.length - 1 levels: a conv-pool level down per width but the last (the
 *  bottleneck's), then a nearest (or bilinear) upsample by 2 per level, each concatenated with its
 *  skip; [N, 3, H, W] -> [N, 2, H, W] for H and W multiples of 2^levels. widths [8, 16, 32]: two levels. */
export class UNetN extends nn.Module {
  constructor(mode = 'nearest', widths = [8, 16, 32]) {
    super();
    const conv = (a, b) => new nn.Sequential(new nn.Conv2d(a, b, 3, { padding: 1 }), new nn.BatchNorm2d(b), new nn.ReLU());
    this.levels = widths.length - 1;
    this.enc = new nn.ModuleList(widths.slice(0, -1).map((w, i) => conv(i ? widths[i - 1] : 3, w)));
    this.mid = conv(widths[this.levels - 1], widths[this.levels]);
    this.pool = new nn.MaxPool2d(2);
    this.up = new nn.Upsample({ scaleFactor: 2, mode });
    this.dec = new nn.ModuleList(widths.slice(0, -1).map((w, i) => conv(widths[i + 1] + w, w)));
    this.head = new nn.Conv2d(widths[0], 2, 1);
  }

  forward(x) {
    return om.tidy(() => {
      const skips = [];
      for (let i = 0; i < this.levels; i++) skips.push(x = this.enc.at(i).forward(i ? this.pool.forward(x) : x));
      x = this.mid.forward(this.pool.forward(x));
      for (let i = this.levels - 1; i >= 0; i--) x = this.dec.at(i).forward(om.cat([this.up.forward(x), skips[i]], 1));
      return this.head.forward(x);
    });
  }
}

/** GPT-2 small's graph: 12 blocks of 12 heads, its vocabulary and context; d 768, or 96 with small. */
export function gpt2(small = false) {
  return new GPT2(small ? { ...GPT2_SMALL, vocab: 512, d: 96 } : GPT2_SMALL, 12);
}

/** examples/transformers/gpt2.mjs's port of GPT2LMHeadModel (Conv1D's view / addmm / view, positions
 *  wpe(arange(T).unsqueeze(0)), a causal-mask buffer per layer) at GPT-2 small's size: 12 layers,
 *  12 heads, d 768, a context of 1024; with small, a vocabulary of 512 (the same graph). */
export function gpt2Port(small = false) {
  return new GPT2LMHeadModel({ vocab_size: small ? 512 : 50257, n_positions: 1024, n_embd: 768, n_layer: 12, n_head: 12 });
}

/** The models measured: [name, make() -> nn.Module, inputs() -> inputs as om.trace takes them]. */
export function models(small = false) {
  const conv = (shape, m = 1) => () => ({
    x: [om.randn(shape, { seed: 1 }), ['batch', null, om.Dim('h', { multipleOf: m }), om.Dim('w', { multipleOf: m })]],
  });
  const ids = (t) => () => ({ ids: [om.tidy(() => om.rand([2, t], { seed: 1 }).mul(500).long()), ['batch', 'seq']] });
  return [
    ['zoo UNet', () => new UNet(), conv([2, 2, 8, 12], 2)],
    ['zoo ResNet', () => new ResNet(), conv([3, 3, 12, 12])],
    ['two-level UNet, nearest', () => new UNetN('nearest'), conv([2, 3, 16, 20], 4)],
    ['two-level UNet, bilinear', () => new UNetN('bilinear'), conv([2, 3, 16, 20], 4)],
    ['three-level UNet, nearest, h and w undeclared', () => new UNetN('nearest', [6, 12, 24, 48]), conv([2, 3, 16, 24])],
    [`GPT-2 small${small ? ' (d 96)' : ''}`, () => gpt2(small), ids(32)],
    [`GPT-2 small, transformers' port${small ? ' (vocabulary 512)' : ''}`, () => gpt2Port(small), ids(small ? 8 : 32)],
    ['GPT-2, 6 blocks of 12 heads (d 96)', () => new GPT2({ ...GPT2_SMALL, vocab: 512, d: 96 }, 6), ids(32)],
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const small = process.argv.includes('--small');
  console.log('| model | nodes | shape-computation nodes |\n|---|---|---|');
  for (const [name, make, makeInputs] of models(small)) {
    const model = make().eval();
    const inputs = makeInputs();
    const tm = om.trace(model, inputs);
    const e = economy(tm);
    console.log(`| ${name} | ${e.nodes} | ${e.shapeNodes}${e.ops ? ` (${e.ops})` : ''} |`);
    tm.dispose();
    model.dispose();
    for (const v of Object.values(inputs)) v[0].dispose();
  }
}
