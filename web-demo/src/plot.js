// The training view's loss plot: an SVG line of the loss per step on a linear x and a log-or-linear
// y axis (log when the losses span more than a decade), redrawn at most once per frame.
const SVG = 'http://www.w3.org/2000/svg';
const W = 640, H = 320, M = { left: 64, right: 16, top: 16, bottom: 36 };
const MAX_VERTICES = 1500;

function el(name, attrs, parent) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  parent.append(e);
  return e;
}

const fmt = (v) => (Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(1) : Number(v.toPrecision(3)).toString());

/**
 * Round values to mark on an axis from lo to hi, in order: 1, 2 and 5 times powers of ten, about
 * four of them (log: every decade, with its 2 and 5 when it spans at most one and a half), at
 * least `unit` apart (the step axis: whole steps).
 */
export function ticks(lo, hi, log, unit = 0) {
  const out = [];
  if (log) {
    const mults = Math.log10(hi / lo) <= 1.5 ? [1, 2, 5] : [1];
    for (let k = Math.floor(Math.log10(lo)); k <= Math.ceil(Math.log10(hi)); k++) {
      for (const m of mults) if (m * 10 ** k >= lo && m * 10 ** k <= hi) out.push(Number((m * 10 ** k).toPrecision(1)));
    }
    return out;
  }
  const raw = (hi - lo) / 4, p = 10 ** Math.floor(Math.log10(raw));
  const step = Math.max(unit, [1, 2, 5, 10].map((m) => m * p).find((v) => v >= raw * (1 - 1e-9)));
  for (let k = Math.ceil(lo / step); k * step <= hi * (1 + 1e-9) + 1e-12; k++) out.push(Number((k * step).toPrecision(12)));
  return out;
}

export class LossPlot {
  constructor(host) {
    this.svg = document.createElementNS(SVG, 'svg');
    this.svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    this.svg.setAttribute('class', 'plot');
    this.svg.setAttribute('role', 'img');
    this.svg.setAttribute('aria-label', 'training loss per step');
    host.append(this.svg);
    this.points = [];
    this.total = 0;
    this.stoppedAt = null;
    this.pending = false;
    this.draw();
  }

  /** Starts a new run of `total` steps (the x axis runs from 0 to total). */
  reset(total) {
    this.points = [];
    this.total = total;
    this.stoppedAt = null;
    this.draw();
  }

  /**
   * Marks where a run was stopped (after `steps` steps): a dashed line and its label, at the end
   * of an x axis that now spans the steps done (5 of 100000 would be a sliver at its left).
   */
  markStop(steps) {
    this.stoppedAt = steps;
    this.total = steps;
    this.draw();
  }

  /** The loss after `done` steps (1, 2, ...). */
  add(done, loss) {
    this.points.push([done, loss]);
    if (!this.pending) {
      this.pending = true;
      this.frame = requestAnimationFrame(() => this.draw());
    }
  }

  /**
   * Draws the points added since the last frame now: a run's end must show its last steps even
   * where the page's next frame comes late (a busy machine, a background tab), and not after
   * the page says the run is done.
   */
  flush() {
    if (this.pending) this.draw();
  }

  draw() {
    if (this.pending) cancelAnimationFrame(this.frame);
    this.pending = false;
    this.svg.replaceChildren();
    this.svg.dataset.points = String(this.points.length);
    if (this.stoppedAt === null) delete this.svg.dataset.stoppedAt;
    else this.svg.dataset.stoppedAt = String(this.stoppedAt);
    const pw = W - M.left - M.right, ph = H - M.top - M.bottom;
    el('rect', { x: M.left, y: M.top, width: pw, height: ph, class: 'frame' }, this.svg);
    if (!this.points.length) {
      el('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'empty' }, this.svg).textContent =
        'Train the model to see its loss here';
      return;
    }
    let lo = Infinity, hi = -Infinity;
    for (const [, v] of this.points) if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    if (lo > hi) lo = hi = 0;   // no finite loss yet
    const log = lo > 0 && hi / lo > 10;
    const f = log ? Math.log10 : (v) => v;
    if (hi === lo) { hi += Math.abs(hi) * 0.1 || 1; lo -= Math.abs(lo) * 0.1 || 1; }
    // a margin above and below the extremes, so that the line never runs along the frame (where
    // a person reads it as cut off) and the labels in its corners stay clear of the top and bottom
    const margin = (f(hi) - f(lo)) * 0.08;
    const [a, b] = [f(lo) - margin, f(hi) + margin];
    const xMax = Math.max(this.total, this.points[this.points.length - 1][0], 1);
    const sx = (s) => M.left + (s / xMax) * pw;
    const sy = (v) => M.top + ph - ((f(v) - a) / (b - a)) * ph;
    for (const v of ticks(lo, hi, log)) {
      const y = sy(v);
      el('line', { x1: M.left, x2: M.left + pw, y1: y, y2: y, class: 'grid' }, this.svg);
      el('text', { x: M.left - 6, y: y + 4, 'text-anchor': 'end', class: 'tick y' }, this.svg).textContent = fmt(v);
    }
    for (const s of ticks(0, xMax, false, 1)) {
      el('text', { x: sx(s), y: H - M.bottom + 16, 'text-anchor': 'middle', class: 'tick x' }, this.svg).textContent = String(s);
    }
    el('text', { x: M.left + pw / 2, y: H - 4, 'text-anchor': 'middle', class: 'axis' }, this.svg).textContent = 'steps done';
    el('text', { x: 14, y: M.top + ph / 2, 'text-anchor': 'middle', class: 'axis', transform: `rotate(-90 14 ${M.top + ph / 2})` }, this.svg)
      .textContent = log ? 'loss (log)' : 'loss';
    // At most ~MAX_VERTICES vertices (every k-th point, and the last), so a long run stays cheap to draw.
    const stride = Math.ceil(this.points.length / MAX_VERTICES);
    const shown = this.points.filter((p, i) => Number.isFinite(p[1]) && (i % stride === 0 || i === this.points.length - 1));
    const d = shown.map(([s, v], i) => `${i ? 'L' : 'M'}${sx(s).toFixed(1)},${sy(v).toFixed(1)}`).join('');
    el('path', { d, class: 'line' }, this.svg);
    if (this.stoppedAt !== null) {
      const x = sx(this.stoppedAt);
      el('line', { x1: x, x2: x, y1: M.top, y2: M.top + ph, class: 'stop' }, this.svg);
      el('text', { x: x - 4, y: M.top + ph - 6, 'text-anchor': 'end', class: 'stop-label' }, this.svg).textContent = `stopped at ${this.stoppedAt}`;
    }
    const [ls, lv] = this.points[this.points.length - 1];
    el('text', { x: M.left + pw - 6, y: M.top + 16, 'text-anchor': 'end', class: 'last' }, this.svg).textContent =
      `after ${ls} steps: ${fmt(lv)}`;
  }
}
