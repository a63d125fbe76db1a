// The graph view: draws a graph (graphfile.js's readGraph) as SVG, its modules as blocks
// (groups.js) laid out by the layout worker (layout.js), and lets a person select a box (a click:
// the inspector shows it), expand a block (a double click, or Expand in the inspector) and collapse
// it again (a click on its frame's label), search (search(), reveal()), pan (drag, or the arrow keys
// when it has focus), zoom (wheel, about the pointer; + and -, or the buttons, about the selection)
// and fit it to the view (0, a double click on the background, or the Fit button: collapsing the
// deepest blocks open first where the whole would be too small to read). A relayout
// (a block expanded or collapsed) keeps the box it was asked for where it was on screen.
import { autoExpand, blocksAbove, groupByModule } from './groups.js';

const SVG = 'http://www.w3.org/2000/svg';
const MIN_SCALE = 0.05, MAX_SCALE = 4;
const READABLE = 0.85;  // the smallest scale a new graph is first shown at, and a revealed box centred at
const LEGIBLE = 0.5;    // the smallest scale Fit shows a whole graph at while collapsing blocks can make it larger
const KEY_STEP = 60;    // px an arrow key pans
const DRAG = 4;         // px a press moves before it is a drag, not a click

function el(name, attrs = {}, parent = null) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.append(e);
  return e;
}

/** One text line of segments; symbolic dims get class "sym". */
function textLine(parent, segs, x, y, cls) {
  const t = el('text', { x, y, class: cls }, parent);
  for (const s of segs) {
    const span = el('tspan', s.sym ? { class: 'sym' } : {}, t);
    span.textContent = s.text;
  }
  return t;
}

/** Smooth path through dagre's edge points (quadratic segments through the midpoints). */
function edgePath(points) {
  let d = `M${points[0].x},${points[0].y}`;
  for (let i = 1; i < points.length - 1; i++) {
    const p = points[i], q = points[i + 1];
    d += ` Q${p.x},${p.y} ${(p.x + q.x) / 2},${(p.y + q.y) / 2}`;
  }
  const last = points[points.length - 1];
  return `${d} L${last.x},${last.y}`;
}

const lower = (s) => s.toLowerCase();

export class GraphView {
  /**
   * host: the element the <svg> fills; layoutUrl: the layout worker's bundle; onSelect(item)
   * runs when the selection changes (null, or { kind: 'op', index, node, module, reads (the
   * state-dict name it reads each input as, undefined for a non-weight) } | { kind:
   * 'group', path, nodes: [indices], reads (a Map: each weight's stored name -> the name the block reads it as) } | { kind: 'input' | 'output', value }).
   */
  constructor(host, layoutUrl, onSelect = () => {}) {
    this.host = host;
    this.onSelect = onSelect;
    this.svg = el('svg', { class: 'graph', role: 'img', tabindex: 0, 'aria-label': 'graph: click a box to inspect it, double-click a block to expand it; arrow keys pan, + and - zoom, 0 fits' });
    const defs = el('defs', {}, this.svg);
    const marker = el('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, defs);
    el('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow' }, marker);
    this.viewport = el('g', { class: 'viewport' }, this.svg);
    host.append(this.svg);
    this.size = { width: 0, height: 0 };
    this.view = { x: 0, y: 0, k: 1 };
    this.fitted = null;   // the minScale of the last fit, null once the person moved the view
    this.graph = null;    // what is shown: readGraph's
    this.groups = null;
    this.expanded = new Set();
    this.boxes = new Map();   // box id -> its laid-out box
    this.selected = null;     // the selected box's id
    this.layouts = new Worker(layoutUrl, { type: 'module' });
    this.asked = 0;           // the id of the layout asked for last: its answer is the one drawn
    this.#interact();
  }

  /** Shows a graph (replacing what was there): its blocks expanded as far as it stays readable, fitted or its top at a legible scale. */
  async show(graph) {
    this.graph = graph;
    this.groups = groupByModule(graph);
    this.expanded = autoExpand(this.groups);
    this.selected = null;
    this.onSelect(null);
    await this.#relayout(null);
    this.fit(READABLE);
  }

  clear() {
    this.graph = null;
    this.asked++;   // a layout still being computed is not drawn
    this.host.classList.remove('laying-out');
    this.viewport.replaceChildren();
    this.boxes.clear();
    this.size = { width: 0, height: 0 };
    this.select(null);
  }

  /** True while a layout is being computed (the tests wait for it). */
  get busy() {
    return this.host.classList.contains('laying-out');
  }

  // ---- blocks ----

  /** Expands a block (and the blocks holding it), keeping the block's place on screen (and in the inspector, if it was selected). */
  async expand(path) {
    const inspected = this.selected === `group:${path}`;
    for (const p of [...blocksAbove(this.groups, path), path]) this.expanded.add(p);
    await this.#relayout(`group:${path}`, `frame:${path}`);
    if (inspected) this.#selectFrame(path);
  }

  /** Collapses a block into one box, which stays where its frame's top was and is selected. */
  collapse(path) {
    for (const p of [...this.expanded]) if (p === path || p.startsWith(`${path}.`)) this.expanded.delete(p);
    this.selected = `group:${path}`;
    return this.#relayout(`frame:${path}`, `group:${path}`);
  }

  /**
   * Lays the graph out again with the expanded set; the box `after` (an id in the new layout:
   * a block's frame once expanded) has its top where the box `before` had it (its box collapsed),
   * so what the person looked at stays under their eyes.
   */
  async #relayout(before, after = before) {
    const id = ++this.asked;
    this.host.classList.add('laying-out');
    const anchor = before && this.#screenAt(before);
    const answer = await new Promise((resolve) => {
      const listen = ({ data }) => {
        if (data.id !== id) return;
        this.layouts.removeEventListener('message', listen);
        resolve(data);
      };
      this.layouts.addEventListener('message', listen);
      this.layouts.postMessage({ id, graph: this.graph, groups: this.groups, expanded: [...this.expanded] });
    });
    if (id !== this.asked) return;   // a later request (or clear()) replaced this one
    this.host.classList.remove('laying-out');
    if (answer.error) throw new Error(`layout: ${answer.error}`);
    this.#draw(answer.layout);
    if (anchor && this.boxes.has(after)) {
      const b = this.boxes.get(after);
      this.fitted = null;
      this.#set({ ...this.view, x: anchor.x - b.x * this.view.k, y: anchor.y - (b.y - b.height / 2) * this.view.k });
    }
    if (this.selected && !this.boxes.has(this.selected)) this.select(null);
    else this.#mark();
  }

  /** Where a box's top centre is on screen, in the svg's px; null if it is not drawn. */
  #screenAt(id) {
    const b = this.boxes.get(id);
    if (!b) return null;
    return { x: this.view.x + b.x * this.view.k, y: this.view.y + (b.y - b.height / 2) * this.view.k };
  }

  #draw(layout) {
    this.viewport.replaceChildren();
    this.boxes.clear();
    this.size = { width: layout.width, height: layout.height };
    const frames = el('g', { class: 'frames' }, this.viewport);
    const edges = el('g', { class: 'edges' }, this.viewport);
    const nodes = el('g', { class: 'nodes' }, this.viewport);
    for (const f of layout.frames) {
      this.boxes.set(`frame:${f.path}`, f);
      const g = el('g', { class: 'frame', transform: `translate(${f.x - f.width / 2},${f.y - f.height / 2})` }, frames);
      g.dataset.path = f.path;
      el('rect', { width: f.width, height: f.height, rx: 8 }, g);
      const label = textLine(g, [{ text: `▾ ${f.path}` }], 8, 12, 'frame-label');
      label.dataset.collapse = f.path;
      el('title', {}, label).textContent = `${f.path}: click to collapse`;
    }
    for (const e of layout.edges) {
      el('path', { d: edgePath(e.points), class: 'edge', 'marker-end': 'url(#arrow)' }, edges);
      if (e.label) {
        const t = textLine(edges, e.label, e.labelAt.x, e.labelAt.y + 4, 'edge-label');
        t.setAttribute('text-anchor', 'middle');
        t.dataset.value = e.value;
      }
    }
    for (const n of layout.nodes) {
      this.boxes.set(n.id, n);
      const g = el('g', { class: `node ${n.kind}`, transform: `translate(${n.x - n.width / 2},${n.y - n.height / 2})` }, nodes);
      g.dataset.id = n.id;
      if (n.op) g.dataset.op = n.op;
      if (n.path) g.dataset.path = n.path;
      el('rect', { width: n.width, height: n.height, rx: n.kind === 'op' || n.kind === 'group' ? 6 : n.height / 2 }, g);
      el('title', {}, g).textContent = n.tip;
      const x = n.kind === 'op' || n.kind === 'group' ? layout.padX : n.width / 2;
      const anchor = x === layout.padX ? 'start' : 'middle';
      const baseline = (i) => layout.padY + (i + 1) * layout.lineHeight - 4;
      textLine(g, [{ text: n.title }], x, baseline(0), 'title').setAttribute('text-anchor', anchor);
      n.lines.forEach((segs, i) => textLine(g, segs, x, baseline(i + 1), 'detail').setAttribute('text-anchor', anchor));
    }
  }

  // ---- selection and search ----

  /** Selects a box by id (null: none) and tells onSelect what it shows. */
  select(id) {
    this.selected = id && this.boxes.has(id) ? id : null;
    if (this.selected) this.fitted = null;   // the inspector opening narrows the view: the boxes stay where they are
    this.#mark();
    this.onSelect(this.selected && this.#item(this.selected));
  }

  #mark() {
    for (const g of this.viewport.querySelectorAll('.selected')) g.classList.remove('selected');
    if (this.selected) this.viewport.querySelector(`g.node[data-id="${CSS.escape(this.selected)}"]`)?.classList.add('selected');
  }

  #item(id) {
    const [kind, rest] = [id.slice(0, id.indexOf(':')), id.slice(id.indexOf(':') + 1)];
    if (kind === 'op') {
      const index = Number(rest);
      const node = this.graph.nodes[index];
      return { kind, index, node, module: this.groups.module[index], reads: node.inputs.map((_, s) => this.groups.names.get(`${index}:${s}`)) };
    }
    if (kind === 'group') {
      const nodes = [];
      this.groups.module.forEach((m, i) => { if (m === rest || m.startsWith(`${rest}.`)) nodes.push(i); });
      // each weight by the name the block's first read of it gives (h.1's LayerNorm reads a scale
      // the tracer stored once for all twelve layers under h.0's name)
      const reads = new Map();
      for (const i of nodes) this.graph.nodes[i].inputs.forEach((v, s) => { if (!reads.has(v) && this.groups.names.has(`${i}:${s}`)) reads.set(v, this.groups.names.get(`${i}:${s}`)); });
      return { kind, path: rest, nodes, reads };
    }
    return { kind, value: this.graph[`${kind}s`].find((v) => v.name === rest) };
  }

  /**
   * What matches a query (case-insensitive, in part): nodes by op type, name, value names (a
   * weight's as the node reads it too) or module, blocks by path, graph inputs and outputs by name; an exact op type first. Each is
   * { target ('op:<i>', 'block:<path>', 'input:<name>', 'output:<name>'), label, detail }.
   */
  search(query, limit = 50) {
    const q = lower(query.trim());
    if (!q || !this.graph) return [];
    const hits = [];
    for (const path of this.groups.blocks.keys()) if (lower(path).includes(q)) hits.push({ rank: 1, target: `block:${path}`, label: path, detail: 'module' });
    for (const kind of ['input', 'output']) {
      for (const v of this.graph[`${kind}s`]) if (lower(v.name).includes(q)) hits.push({ rank: 1, target: `${kind}:${v.name}`, label: v.name, detail: kind });
    }
    this.graph.nodes.forEach((n, i) => {
      const module = this.groups.module[i];
      const reads = n.inputs.map((_, s) => this.groups.names.get(`${i}:${s}`) ?? '');
      const names = [n.opType, n.name, module, ...n.inputs, ...reads, ...n.outputs];
      const rank = lower(n.opType) === q ? 0 : names.some((s) => lower(s).includes(q)) ? 2 : -1;
      if (rank >= 0) hits.push({ rank, target: `op:${i}`, label: `${n.opType} ${n.name}`, detail: module || '(top level)' });
    });
    return hits.sort((a, b) => a.rank - b.rank).slice(0, limit).map(({ rank, ...hit }) => hit);
  }

  /** Shows a search hit: expands the blocks holding it, selects it and centres it at a readable scale. */
  async reveal(target) {
    const at = target.indexOf(':');
    const kind = target.slice(0, at), rest = target.slice(at + 1);
    const module = kind === 'op' ? this.groups.module[Number(rest)] : kind === 'block' ? rest : '';
    const above = kind === 'op' ? [...blocksAbove(this.groups, module), ...(this.groups.blocks.has(module) ? [module] : [])] : blocksAbove(this.groups, module);
    if (above.some((p) => !this.expanded.has(p))) {
      for (const p of above) this.expanded.add(p);
      await this.#relayout(null);
    }
    const id = kind === 'block' ? (this.boxes.has(`group:${rest}`) ? `group:${rest}` : `frame:${rest}`) : target;
    if (id.startsWith('frame:')) this.#selectFrame(rest);
    else this.select(id);
    this.centre(id);   // after the inspector opened beside the view
  }

  /** A frame (an expanded block) is selected as its block: the inspector shows it; no box is marked. */
  #selectFrame(path) {
    this.selected = null;
    this.#mark();
    this.onSelect(this.#item(`group:${path}`));
  }

  /**
   * Centres a box in the view (a frame: its top near the view's), zoomed in to a readable scale
   * if the view was further out.
   */
  centre(id) {
    const b = this.boxes.get(id);
    const r = this.svg.getBoundingClientRect();
    if (!b || !r.width) return;
    const k = Math.max(this.view.k, READABLE);
    const y = id.startsWith('frame:') ? (b.y - b.height / 2) * k - 40 : b.y * k - r.height / 2;
    this.fitted = null;
    this.#set({ k, x: r.width / 2 - b.x * k, y: -y });
  }

  // ---- the view ----

  /**
   * Scales and centres the whole graph in the view (never above 1:1, so small graphs stay
   * crisp). With minScale, a graph that would need less is shown at minScale from its top, its
   * first box in view.
   */
  fit(minScale = MIN_SCALE) {
    this.fitted = minScale;
    const { width: vw, height: vh } = this.svg.getBoundingClientRect();
    const { width, height } = this.size;
    if (!width || !height || !vw || !vh) return;
    const whole = Math.min(1, (vw - 16) / width, (vh - 16) / height);
    const k = Math.max(minScale, whole);
    if (k <= whole) return this.#set({ k, x: (vw - width * k) / 2, y: (vh - height * k) / 2 });
    // too large to show whole at a readable scale: its top, centred on the first box if it is wider than the view
    const first = [...this.boxes.values()].filter((b) => b.id).reduce((a, b) => (b.y < a.y ? b : a), { y: Infinity, x: width / 2 });
    const x = width * k <= vw ? (vw - width * k) / 2 : Math.min(8, Math.max(vw - width * k - 8, vw / 2 - first.x * k));
    this.#set({ k, x, y: 8 });
  }

  /** The scale that shows the whole graph as laid out (at most 1:1). */
  #wholeScale() {
    const { width: vw, height: vh } = this.svg.getBoundingClientRect();
    const { width, height } = this.size;
    return !width || !height || !vw || !vh ? 1 : Math.min(1, (vw - 16) / width, (vh - 16) / height);
  }

  /**
   * Fit as a person asks for it (the button, 0, a double click on the background): the whole
   * graph, readable. Where the blocks expanded make it too large to read whole (a scale below
   * LEGIBLE), the deepest expanded blocks collapse first, a level at a time, all of a level
   * together, so that it shows as its modules rather than as specks; the blocks holding the
   * selected box stay open, so the selection stays drawn (and selected). A graph that is still too
   * large with every other block collapsed is shown whole all the same.
   */
  async fitWhole() {
    const keep = new Set(this.#holding(this.selected));
    const depth = (path) => blocksAbove(this.groups, path).length;
    while (this.graph && this.#wholeScale() < LEGIBLE) {
      const open = [...this.expanded].filter((p) => !keep.has(p));
      if (!open.length) break;
      const deepest = Math.max(...open.map(depth));
      for (const p of open) if (depth(p) === deepest) this.expanded.delete(p);
      await this.#relayout(null);
    }
    this.fit();
  }

  /** The blocks that must stay expanded for box `id` to be drawn (none for a block's own box or an input). */
  #holding(id) {
    if (!id || !this.groups) return [];
    if (id.startsWith('op:')) {
      const module = this.groups.module[Number(id.slice(3))];
      return [...blocksAbove(this.groups, module), ...(this.groups.blocks.has(module) ? [module] : [])];
    }
    return id.startsWith('group:') ? blocksAbove(this.groups, id.slice(6)) : [];
  }

  /** Fits again as last time (the view was resized), unless the person has panned or zoomed since. */
  refit() {
    if (this.fitted !== null) this.fit(this.fitted);
  }

  /** Zooms by factor about a point of the view: `at`, else the selected box, else the view's centre. */
  zoom(factor, at = null) {
    const r = this.svg.getBoundingClientRect();
    const sel = at ? null : this.selected && this.#screenAt(this.selected);
    const px = at?.x ?? sel?.x ?? r.width / 2, py = at?.y ?? sel?.y ?? r.height / 2;
    const k = Math.min(MAX_SCALE, Math.max(MIN_SCALE, this.view.k * factor));
    const f = k / this.view.k;
    this.fitted = null;
    this.#set({ k, x: px - (px - this.view.x) * f, y: py - (py - this.view.y) * f });
  }

  #set(view) {
    this.view = view;
    this.viewport.setAttribute('transform', `translate(${view.x},${view.y}) scale(${view.k})`);
  }

  #interact() {
    let press = null;   // { id, x, y, dx, dy, dragging, target }
    this.svg.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return;
      press = { id: e.pointerId, x: e.clientX, y: e.clientY, dx: e.clientX - this.view.x, dy: e.clientY - this.view.y, dragging: false, target: e.target };
    });
    this.svg.addEventListener('pointermove', (e) => {
      if (press?.id !== e.pointerId) return;
      if (!press.dragging) {
        if (Math.hypot(e.clientX - press.x, e.clientY - press.y) < DRAG) return;
        press.dragging = true;
        this.svg.setPointerCapture(e.pointerId);
        this.svg.classList.add('dragging');
      }
      this.fitted = null;
      this.#set({ ...this.view, x: e.clientX - press.dx, y: e.clientY - press.dy });
    });
    const end = (e) => {
      if (press?.id !== e.pointerId) return;
      const { dragging, target } = press;
      press = null;
      this.svg.classList.remove('dragging');
      if (dragging || e.type !== 'pointerup') return;
      const collapse = target.closest?.('[data-collapse]')?.dataset.collapse;
      if (collapse) return void this.collapse(collapse);
      this.select(target.closest?.('g.node')?.dataset.id ?? null);
    };
    this.svg.addEventListener('pointerup', end);
    this.svg.addEventListener('pointercancel', end);
    this.svg.addEventListener('wheel', (e) => {
      e.preventDefault();
      const r = this.svg.getBoundingClientRect();
      this.zoom(Math.exp(-e.deltaY * 0.0015), { x: e.clientX - r.left, y: e.clientY - r.top });
    }, { passive: false });
    this.svg.addEventListener('dblclick', (e) => {
      const path = e.target.closest?.('g.node.group')?.dataset.path;
      if (path) this.expand(path);
      else if (!e.target.closest?.('g.node, .frame-label')) this.fitWhole();
    });
    this.svg.addEventListener('keydown', (e) => {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const pan = { ArrowLeft: [1, 0], ArrowRight: [-1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] }[e.key];
      if (pan) {
        this.fitted = null;
        this.#set({ ...this.view, x: this.view.x + pan[0] * KEY_STEP, y: this.view.y + pan[1] * KEY_STEP });
      } else if (e.key === '+' || e.key === '=') this.zoom(1.25);
      else if (e.key === '-') this.zoom(0.8);
      else if (e.key === '0') this.fitWhole();
      else if (e.key === 'Escape') this.select(null);
      else return;
      e.preventDefault();
    });
  }
}
