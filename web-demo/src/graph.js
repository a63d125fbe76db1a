// The graph view: draws a laid-out graph (src/layout.js, computed in the worker) as SVG and lets
// a person pan (drag, or the arrow keys when it has focus), zoom (wheel, about the pointer; + and
// -, or the buttons) and fit it to the view (0, a double click, or the Fit button).
const SVG = 'http://www.w3.org/2000/svg';
const MIN_SCALE = 0.05, MAX_SCALE = 4;
const READABLE = 0.85;  // the smallest scale a new graph is first shown at (the Fit button goes below)
const KEY_STEP = 60;    // px an arrow key pans

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

export class GraphView {
  /** host: the element the <svg> fills. */
  constructor(host) {
    this.host = host;
    this.svg = el('svg', { class: 'graph', role: 'img', tabindex: 0, 'aria-label': 'traced graph: arrow keys pan, + and - zoom, 0 fits' });
    const defs = el('defs', {}, this.svg);
    const marker = el('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, defs);
    el('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow' }, marker);
    this.viewport = el('g', { class: 'viewport' }, this.svg);
    host.append(this.svg);
    this.size = { width: 0, height: 0 };
    this.view = { x: 0, y: 0, k: 1 };
    this.fitted = null;   // the minScale of the last fit, null once the person moved the view
    this.#interact();
  }

  /** Draws a layout (replacing what was there) and shows it readable: fitted, or its top at a legible scale. */
  show(layout) {
    this.viewport.replaceChildren();
    this.size = { width: layout.width, height: layout.height };
    const edges = el('g', { class: 'edges' }, this.viewport);
    const nodes = el('g', { class: 'nodes' }, this.viewport);
    for (const e of layout.edges) {
      el('path', { d: edgePath(e.points), class: 'edge', 'marker-end': 'url(#arrow)' }, edges);
      if (e.label) {
        const t = textLine(edges, e.label, e.labelAt.x, e.labelAt.y + 4, 'edge-label');
        t.setAttribute('text-anchor', 'middle');
      }
    }
    for (const n of layout.nodes) {
      const g = el('g', { class: `node ${n.kind}`, transform: `translate(${n.x - n.width / 2},${n.y - n.height / 2})` }, nodes);
      g.dataset.id = n.id;
      if (n.op) g.dataset.op = n.op;
      el('rect', { width: n.width, height: n.height, rx: n.kind === 'op' ? 6 : n.height / 2 }, g);
      el('title', {}, g).textContent = n.tip;
      const x = n.kind === 'op' ? layout.padX : n.width / 2;
      const anchor = n.kind === 'op' ? 'start' : 'middle';
      const baseline = (i) => layout.padY + (i + 1) * layout.lineHeight - 4;
      textLine(g, [{ text: n.title }], x, baseline(0), 'title').setAttribute('text-anchor', anchor);
      n.lines.forEach((segs, i) => textLine(g, segs, x, baseline(i + 1), 'detail').setAttribute('text-anchor', anchor));
    }
    this.fit(READABLE);
  }

  clear() {
    this.viewport.replaceChildren();
    this.size = { width: 0, height: 0 };
  }

  /**
   * Scales and centres the whole graph in the view (never above 1:1, so small graphs stay
   * crisp). With minScale, a graph that would need less is shown at minScale from its top.
   */
  fit(minScale = MIN_SCALE) {
    this.fitted = minScale;
    const { width: vw, height: vh } = this.svg.getBoundingClientRect();
    const { width, height } = this.size;
    if (!width || !height || !vw || !vh) return;
    const whole = Math.min(1, (vw - 16) / width, (vh - 16) / height);
    const k = Math.max(minScale, whole);
    this.#set({ k, x: (vw - width * k) / 2, y: k > whole ? 8 : (vh - height * k) / 2 });
  }

  /** Fits again as last time (the view was resized), unless the person has panned or zoomed since. */
  refit() {
    if (this.fitted !== null) this.fit(this.fitted);
  }

  /** Zooms by factor about a point of the view (its centre by default). */
  zoom(factor, at = null) {
    const r = this.svg.getBoundingClientRect();
    const px = at ? at.x : r.width / 2, py = at ? at.y : r.height / 2;
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
    let drag = null;
    this.svg.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return;
      drag = { id: e.pointerId, x: e.clientX - this.view.x, y: e.clientY - this.view.y };
      this.svg.setPointerCapture(e.pointerId);
      this.svg.classList.add('dragging');
    });
    this.svg.addEventListener('pointermove', (e) => {
      if (drag?.id !== e.pointerId) return;
      this.fitted = null;
      this.#set({ ...this.view, x: e.clientX - drag.x, y: e.clientY - drag.y });
    });
    const end = (e) => {
      if (drag?.id !== e.pointerId) return;
      drag = null;
      this.svg.classList.remove('dragging');
    };
    this.svg.addEventListener('pointerup', end);
    this.svg.addEventListener('pointercancel', end);
    this.svg.addEventListener('wheel', (e) => {
      e.preventDefault();
      const r = this.svg.getBoundingClientRect();
      this.zoom(Math.exp(-e.deltaY * 0.0015), { x: e.clientX - r.left, y: e.clientY - r.top });
    }, { passive: false });
    this.svg.addEventListener('dblclick', () => this.fit());
    this.svg.addEventListener('keydown', (e) => {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const pan = { ArrowLeft: [1, 0], ArrowRight: [-1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] }[e.key];
      if (pan) {
        this.fitted = null;
        this.#set({ ...this.view, x: this.view.x + pan[0] * KEY_STEP, y: this.view.y + pan[1] * KEY_STEP });
      } else if (e.key === '+' || e.key === '=') this.zoom(1.25);
      else if (e.key === '-') this.zoom(0.8);
      else if (e.key === '0') this.fit();
      else return;
      e.preventDefault();
    });
  }
}
