// The graph view's layout, computed in the worker with dagre so that a large graph never blocks
// the page: one box per graph input, per node and per graph output, edges along the values
// between them. A node lists the initializers it reads (name and shape) inside its box, so the
// weights are visible without a box each. Text is monospace, so box sizes follow from lengths.
import { Graph, layout } from '@dagrejs/dagre';

const CHAR_W = 7.2;   // px per character of the 12px monospace font the view uses
const LINE_H = 16;    // px per text line
const PAD_X = 12, PAD_Y = 8;
const MAX_INIT_LINES = 4;    // initializers listed per node before "+N more"

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

/**
 * Lays out a summary's graph ({ nodes, edges } as the workflow library's summarizeTraced gives
 * it) for the graph view: { width, height, lineHeight, padX, padY (the text metrics the sizes
 * assume), nodes: [{ id, kind ('input' | 'op' | 'output'), title, lines, tip (a tooltip: the
 * value names), x, y, width, height, op? }], edges: [{ from, to, value, label, points, labelAt }] }.
 * Initializers are folded into the boxes of the ops that read them. x, y are box centres; points
 * run from the source box to the target box; an edge out of a graph input is labelled with its
 * shape (symbolic dims marked).
 */
export function layoutGraph(graph) {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const weights = new Map();   // op id -> initializer nodes it reads
  const edges = [];
  for (const e of graph.edges) {
    const from = byId.get(e.from);
    if (from.kind === 'initializer') {
      if (!weights.has(e.to)) weights.set(e.to, []);
      weights.get(e.to).push(from);
    } else {
      edges.push({ from: e.from, to: e.to, value: e.value, label: from.kind === 'input' ? shapeSegments(from.shape) : null });
    }
  }
  const boxes = [];
  for (const n of graph.nodes) {
    if (n.kind === 'initializer') continue;
    if (n.kind === 'op') {
      const ws = weights.get(n.id) ?? [];
      const lines = ws.slice(0, MAX_INIT_LINES).map((w) => [{ text: `${w.name} ` }, ...shapeSegments(w.shape)]);
      if (ws.length > MAX_INIT_LINES) lines.push([{ text: `+${ws.length - MAX_INIT_LINES} more` }]);
      const tip = `${n.opType}\ninputs: ${n.inputs.map((v) => v || '(none)').join(', ')}\noutputs: ${n.outputs.join(', ')}`;
      boxes.push(box(n.id, 'op', n.opType, lines, { op: n.opType, tip }));
    } else {
      const tip = `${n.kind} ${n.name}: ${n.dtype} [${n.shape.join(', ')}]`;
      boxes.push(box(n.id, n.kind, n.name, [shapeSegments(n.shape), [{ text: n.dtype }]], { tip }));
    }
  }

  const g = new Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 24, ranksep: 36, edgesep: 12, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const b of boxes) g.setNode(b.id, { width: b.width, height: b.height });
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
    edges: edges.map((e, i) => {
      const laid = g.edge(e.from, e.to, `e${i}`);
      return { ...e, points: laid.points, labelAt: e.label ? { x: laid.x, y: laid.y } : null };
    }),
  };
}
