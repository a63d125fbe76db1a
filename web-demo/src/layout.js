// The graph view's layout, computed with dagre in a worker of its own (layout-worker.js) so that
// a large graph never blocks the page and a job running in the main worker never delays a click
// on a block: one box per graph input, per node or collapsed block (groups.js), and per graph
// output; an expanded block is a frame around its boxes; edges along the values between boxes,
// each labelled with its shape. A node lists the initializers it reads (the state-dict name it reads
// each as: groups.js's names, and shape) and the constants it reads (their values where short)
// inside its box, so weights and shape arguments are visible without a box each. Text is
// monospace, so box sizes follow from lengths.
import { Graph, layout } from '@dagrejs/dagre';
import { blocksAbove, moduleOfName, visibleId } from './groups.js';

const CHAR_W = 7.2;   // px per character of the 12px monospace font the view uses
const LINE_H = 16;    // px per text line
const PAD_X = 12, PAD_Y = 8;
const MAX_INIT_LINES = 4;    // initializers and constants listed per node before "+N more"
const MAX_CONSTANT_ELEMENTS = 6;   // a constant's elements shown in its line, else its shape
const MAX_OP_KINDS = 3;      // op types a collapsed block's box names

/**
 * A shape as text segments: symbolic dims marked ({ text, sym: true }) so the view can colour
 * them. [ 'batch', 4 ] -> '[', batch*, ', 4]'.
 */
export function shapeSegments(shape) {
  const segs = [{ text: '[' }];
  shape.forEach((d, i) => {
    if (i) segs.push({ text: ', ' });
    segs.push(typeof d === 'string' ? { text: d, sym: true } : { text: String(d) });
  });
  segs.push({ text: ']' });
  return segs;
}

const segLength = (segs) => segs.reduce((n, s) => n + s.text.length, 0);

/** A box: title, text lines (each a list of segments), and its size for those. */
function box(id, kind, title, lines, extra = {}) {
  const chars = Math.max(title.length, ...lines.map(segLength));
  return {
    id, kind, title, lines, ...extra,
    width: Math.ceil(chars * CHAR_W + 2 * PAD_X),
    height: (1 + lines.length) * LINE_H + 2 * PAD_Y,
  };
}

/** "Conv ×3, Relu ×2, +2 more": the op types of nodes, most frequent first. */
function opKinds(nodes) {
  const count = new Map();
  for (const n of nodes) count.set(n.opType, (count.get(n.opType) ?? 0) + 1);
  const kinds = [...count].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const named = kinds.slice(0, MAX_OP_KINDS).map(([op, k]) => (k > 1 ? `${op} ×${k}` : op));
  return kinds.length > MAX_OP_KINDS ? [...named, `+${kinds.length - MAX_OP_KINDS} more`].join(', ') : named.join(', ');
}

/**
 * Lays out a graph (graphfile.js's readGraph) with its blocks (groups.js's groupByModule) and
 * the set of expanded block paths: { width, height, lineHeight, padX, padY (the text metrics the
 * sizes assume), nodes: [{ id ('input:<name>', 'op:<index>', 'group:<path>', 'output:<name>'),
 * kind ('input' | 'op' | 'group' | 'output'), title, lines, tip (a tooltip), x, y, width, height,
 * op? }], frames: [{ path, x, y, width, height }] (the expanded blocks), edges: [{ from, to,
 * value, label, points, labelAt }] }. x, y are centres; points run from box to box; an edge's
 * label is its value's shape (symbolic dims marked) where the file gives it.
 */
/** x in at most 4 significant digits, without trailing zeros after a point. */
function numberText(x) {
  if (Number.isInteger(x)) return String(x);
  const s = x.toPrecision(4);
  return /\.\d*$/.test(s) ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}

/** A box's line for a Constant it reads: its value where short ('= [1, -1, 64]'), else its shape. */
function constantLine({ shape, values }) {
  const count = shape.reduce((a, b) => a * b, 1);
  if (values && count <= MAX_CONSTANT_ELEMENTS) {
    const text = values.map(numberText).join(', ');
    return [{ text: `= ${shape.length ? `[${text}]` : text}` }];
  }
  return [{ text: 'constant ' }, ...shapeSegments(shape)];
}

export function layoutGraph(graph, groups, expanded) {
  const inits = new Map(graph.initializers.map((i) => [i.name, i]));
  const shown = graph.nodes.map((_, i) => visibleId(groups, i, expanded));
  const maker = new Map();   // value name -> the box it comes from
  for (const v of graph.inputs) maker.set(v.name, `input:${v.name}`);
  graph.nodes.forEach((n, i) => n.outputs.forEach((v) => v && maker.set(v, shown[i])));

  const edges = [];
  const seen = new Set();
  const edge = (from, to, value) => {
    const key = `${from}\n${to}\n${value}`;
    if (from === to || seen.has(key)) return;
    seen.add(key);
    const shape = graph.values[value]?.shape;
    edges.push({ from, to, value, label: shape ? shapeSegments(shape) : null });
  };
  graph.nodes.forEach((n, i) => n.inputs.forEach((v) => maker.has(v) && edge(maker.get(v), shown[i], v)));
  for (const v of graph.outputs) if (maker.has(v.name)) edge(maker.get(v.name), `output:${v.name}`, v.name);

  const boxes = [];
  const io = (kind, v) => box(`${kind}:${v.name}`, kind, v.name, [shapeSegments(v.shape), [{ text: v.dtype }]],
    { tip: `${kind} ${v.name}: ${v.dtype} [${v.shape.join(', ')}]` });
  for (const v of graph.inputs) boxes.push(io('input', v));
  const members = new Map();   // group id -> its nodes
  graph.nodes.forEach((n, i) => {
    const id = shown[i];
    if (id.startsWith('group:')) {
      if (!members.has(id)) members.set(id, []);
      members.get(id).push(n);
      return;
    }
    const all = n.inputs.flatMap((v, slot) => (inits.has(v) ? [[{ text: `${groups.names.get(`${i}:${slot}`)} ` }, ...shapeSegments(inits.get(v).shape)]]
      : graph.constants?.[v] ? [constantLine(graph.constants[v])] : []));
    const lines = all.slice(0, MAX_INIT_LINES);
    if (all.length > MAX_INIT_LINES) lines.push([{ text: `+${all.length - MAX_INIT_LINES} more` }]);
    const tip = `${n.opType}\ninputs: ${n.inputs.map((v) => v || '(none)').join(', ')}\noutputs: ${n.outputs.join(', ')}`;
    boxes.push(box(id, 'op', n.opType, lines, { op: n.opType, tip }));
  });
  for (const [id, nodes] of members) {
    const path = id.slice('group:'.length);
    const weights = new Set(nodes.flatMap((n) => n.inputs.filter((v) => inits.has(v) && moduleOfName(v) !== null)));
    boxes.push(box(id, 'group', `${path} ▸`, [[{ text: `${nodes.length} nodes · ${weights.size} weights` }], [{ text: opKinds(nodes) }]],
      { path, tip: `${path}: ${nodes.length} nodes (double-click to expand)` }));
  }
  for (const v of graph.outputs) boxes.push(io('output', v));

  const g = new Graph({ multigraph: true, compound: true });
  g.setGraph({ rankdir: 'TB', nodesep: 24, ranksep: 36, edgesep: 12, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const b of boxes) g.setNode(b.id, { width: b.width, height: b.height });
  // an expanded block whose outer blocks are expanded too is a frame around its boxes
  const open = (path) => expanded.has(path) && blocksAbove(groups, path).every((p) => expanded.has(p));
  const frames = [...groups.blocks.keys()].filter(open);
  const frameOf = (module) => [module, ...blocksAbove(groups, module).reverse()].find((p) => groups.blocks.has(p) && open(p));
  for (const path of frames) g.setNode(`frame:${path}`, {});
  for (const path of frames) {
    const parent = frameOf(groups.blocks.get(path).parent);
    if (parent) g.setParent(`frame:${path}`, `frame:${parent}`);
  }
  for (const b of boxes) {
    const i = b.id.startsWith('op:') ? Number(b.id.slice(3)) : -1;
    const frame = b.kind === 'group' ? frameOf(groups.blocks.get(b.path).parent) : i >= 0 ? frameOf(groups.module[i]) : null;
    if (frame) g.setParent(b.id, `frame:${frame}`);
  }
  edges.forEach((e, i) => {
    const label = e.label ? { width: segLength(e.label) * CHAR_W, height: LINE_H, labelpos: 'c' } : {};
    g.setEdge(e.from, e.to, label, `e${i}`);
  });
  layout(g);

  const { width, height } = g.graph();
  return {
    width,
    height,
    lineHeight: LINE_H,
    padX: PAD_X,
    padY: PAD_Y,
    nodes: boxes.map((b) => ({ ...b, x: g.node(b.id).x, y: g.node(b.id).y })),
    frames: frames.map((path) => {
      const { x, y, width: w, height: h } = g.node(`frame:${path}`);
      return { path, x, y, width: w, height: h };
    }),
    edges: edges.map((e, i) => {
      const laid = g.edge(e.from, e.to, `e${i}`);
      return { ...e, points: laid.points, labelAt: e.label ? { x: laid.x, y: laid.y } : null };
    }),
  };
}
