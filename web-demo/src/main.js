// The page: the model picker and editor, the input shapes form, the buttons, and the views of
// what the worker returns (graph, summary, loss plot, verification). Nothing here runs the
// model: every job goes to the worker (worker.js) through jobs.js, one at a time.
import { CodeEditor } from './editor.js';
import { GraphView } from './graph.js';
import { inspectorContent } from './inspector.js';
import { defaultSizes } from './feeds.js';
import { CancelledError, Jobs } from './jobs.js';
import { LossPlot } from './plot.js';
import { h, shapeNode } from './dom.js';

const $ = (sel, root = document) => root.querySelector(sel);

/** The editor's text for "Your own model": a complete, small model file to start from. */
const STARTER = `import * as om from 'onemodel';
await om.ready();

// A model file: default-export { title, model, inputs, outputNames?, train? } (docs/demo.md).
class Net extends om.nn.Module {
  constructor() {
    super();
    this.fc1 = new om.nn.Linear(4, 16);
    this.fc2 = new om.nn.Linear(16, 3);
  }

  forward(x) {
    return this.fc2.forward(this.fc1.forward(x).relu());
  }
}

export default {
  title: 'My model',
  model: new Net(),
  inputs: { x: [om.randn([8, 4], { seed: 1 }), ['batch', null]] },
  outputNames: ['logits'],
  train: {
    steps: 50,
    optimizer: (params) => new om.optim.Adam(params, { lr: 1e-2 }),
    batch: (step) => {
      const x = om.randn([32, 4], { seed: step });
      return { inputs: [x], target: x.slice(1, 0, 3).argmax(1) };
    },
    loss: (logits, target) => om.nn.functional.crossEntropy(logits, target),
  },
};
`;
const OWN = '(own)';   // the picker's value for the user's own model
/** The localStorage key of the editor's model: { model (the picker's value), text }, kept across reloads. */
const SAVED = 'onemodel-demo:editor';
const TRAIN_INFO = "Training runs the file's train section (its generated data and loss) in the worker; Trace afterwards exports the trained weights.";

// ---- formatting -------------------------------------------------------------------------------

function bytesText(n) {
  if (n < 1024) return `${n} B`;
  const units = ['kB', 'MB', 'GB'];
  let v = n, i = -1;
  do { v /= 1024; i++; } while (v >= 1024 && i < units.length - 1);
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[i]}`;
}

/** "4 shapes", or "the traced shape" when nothing is symbolic (one check). */
const shapesText = (n) => (n === 1 ? 'the traced shape' : `${n} shapes`);

const errorText = (v) => (v === 0 ? '0' : Number.isFinite(v) ? v.toExponential(2) : String(v));

/** An axis entry's symbol: the name, or a declared symbol's ({ name, multipleOf, ... }); null for a fixed axis. */
const symbolName = (a) => (a !== null && typeof a === 'object' ? a.name : a);

/** The sizes of a symbol declared by its name alone (om.Dim's defaults). */
const ANY_SIZE = { multipleOf: 1, min: 1, max: Infinity };

/** The sizes the inputs (describeInputs') declare per symbol: Map symbol -> { multipleOf, min, max } (the first declaration of each). */
function declaredSizes(inputs) {
  const sizes = new Map();
  for (const a of inputs.flatMap((i) => i.axes)) {
    if (a !== null && !sizes.has(symbolName(a))) sizes.set(symbolName(a), typeof a === 'object' ? { multipleOf: a.multipleOf, min: a.min, max: a.max } : ANY_SIZE);
  }
  return sizes;
}

/** The sizes a symbol takes ({ multipleOf, min, max }) in words: "multiples of 4 from 8 to 64", "1 to 32", "any size from 1", "8 only". */
function rangeText({ multipleOf, min, max }) {
  const from = Math.ceil(min / multipleOf) * multipleOf;   // the smallest size taken
  if (from === max) return `${from} only`;
  if (multipleOf !== 1) return `multiples of ${multipleOf} from ${from}${max === Infinity ? '' : ` to ${max}`}`;
  return max === Infinity ? `any size from ${from}` : `${from} to ${max}`;
}

/** A file name from a title: "MLP regression" -> "mlp-regression.onnx". */
function onnxName(title) {
  const slug = title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
  return `${slug || 'model'}.onnx`;
}

// ---- the page ------------------------------------------------------------------------------------

class Page {
  constructor() {
    this.jobs = new Jobs(new URL('worker.js', import.meta.url), () => this.workerRestarted());
    this.editor = new CodeEditor($('#editor'), () => this.edited(), () => { if (!this.jobs.busy) this.runTrace(); });
    this.graph = new GraphView($('#graph'), new URL('layout-worker.js', import.meta.url), (item) => this.showInspector(item));
    this.plot = new LossPlot($('#plot'));
    this.inspected = null;     // { source, title, inputs, trainSteps } of the last inspect
    this.zooTitles = new Map();   // the title each zoo file declares (the picker's text), by its name
    this.trace = null;         // { source, summary, bytes, fileName } of the last trace (source null: not in the worker)
    this.run = null;           // { inputs, outputs } of the last verification's run at the traced shapes
    this.viewing = null;       // what the graph view shows: 'trace', or the name of the file opened
    this.openedGraph = null;   // the opened file's graph (graphfile.js's), for the Run tab
    this.openedFile = null;    // the opened File: what Download saves while it is shown
    this.uploaded = null;      // inputs uploaded for the opened file ({ name: { dims, data } }), null: generated
    this.shownInputs = [];     // the inputs (as the code declares them) the shapes form was made from
    this.codeSizes = new Map();   // the sizes the code declares per symbol (declaredSizes), which the symbols row was made from
    this.shownSteps = null;    // train.steps of the last file loaded (null: no train section), which the steps field was set to
    this.inspectTimer = 0;
    this.wire();
  }

  wire() {
    $('#model-select').addEventListener('change', (e) => this.pick(e.target.value));
    $('#reset').addEventListener('click', () => this.pick($('#model-select').value));
    $('#trace').addEventListener('click', () => this.runTrace());
    $('#train').addEventListener('click', () => this.runTrain());
    $('#verify').addEventListener('click', () => this.runVerify());
    $('#download').addEventListener('click', () => this.download());
    $('#cancel').addEventListener('click', () => this.jobs.cancel());
    $('#stop').addEventListener('click', () => {
      $('#stop').disabled = true;
      this.jobs.stop();
      this.status('Stopping after this step…');
    });
    $('#fit').addEventListener('click', () => this.graph.fitWhole());
    $('#inspector .close').addEventListener('click', () => this.graph.select(null));
    this.wireSearch();
    this.wireOpen();
    $('#zoom-in').addEventListener('click', () => this.graph.zoom(1.25));
    $('#zoom-out').addEventListener('click', () => this.graph.zoom(0.8));
    $('#error .where').addEventListener('click', (e) => {
      const { line, column } = e.currentTarget.dataset;
      if (line) this.editor.markError(Number(line), Number(column || 1));
    });
    $('#error .close').addEventListener('click', () => this.hideError());
    for (const tab of document.querySelectorAll('[role=tab]')) tab.addEventListener('click', () => this.showTab(tab.dataset.tab));
    new ResizeObserver(() => this.graph.refit()).observe($('#graph'));
  }

  // The controls are off in index.html until the zoo is listed and the first model loaded (the
  // pick's job turns them on as it ends): a Reset or a Trace before that had no model to act on.
  async start() {
    try {
      const { zoo, threads } = await this.jobs.run('zoo');
      // more than one where the page is cross-origin isolated (server.mjs sends COOP and COEP)
      $('#threads').textContent = threads === 1 ? '1 thread' : `${threads} threads`;
      const select = $('#model-select');
      const names = zoo.map(({ name }) => name);
      // the title people read, the file it comes from after it (a file without a title: its name)
      for (const { name, title } of zoo) {
        this.zooTitles.set(name, title);
        select.append(h('option', { value: name, textContent: title ? `${title} · ${name}.mjs` : `${name}.mjs`, title: `examples/zoo/${name}.mjs` }));
      }
      select.append(h('option', { value: OWN, textContent: 'Your own model…' }));
      const saved = this.saved();
      if (saved && (saved.model === OWN || names.includes(saved.model))) await this.pick(saved.model, saved.text);
      else await this.pick(names[0]);
    } catch (e) {
      this.busy(false);   // the controls on all the same: Open file, or the pick once more
      this.fail(e);
    }
  }

  // ---- status, progress, errors ----

  status(text) {
    $('#status').textContent = text;
  }


  /** Busy state: buttons off, Cancel on, the progress bar (determinate when total is given). */
  busy(on, label = '') {
    document.body.classList.toggle('busy', on);
    for (const b of ['#trace', '#train', '#verify', '#model-select', '#reset', '#open', '#run-file']) $(b).disabled = on;
    $('#cancel').disabled = !on;
    $('#stop').disabled = true;   // on for a training run only (job())
    const bar = $('#progress');
    bar.hidden = !on;
    bar.classList.add('indeterminate');
    bar.dataset.done = '0';
    if (on) bar.dataset.updates = '0';
    $('.bar', bar).style.width = '';
    if (on) this.status(label);
    else this.refreshButtons();
  }

  progress(done, total) {
    const bar = $('#progress');
    bar.classList.remove('indeterminate');
    bar.dataset.done = String(done);
    bar.dataset.total = String(total);
    bar.dataset.updates = String(Number(bar.dataset.updates) + 1); // since the job began (tests read it)
    $('.bar', bar).style.width = `${(100 * done) / total}%`;
  }

  refreshButtons() {
    const fresh = this.trace && !this.trace.stale && this.trace.source === this.editor.text;
    $('#verify').disabled = !fresh;
    // while an opened file is shown, Download saves that file, never the last trace behind it
    const file = this.viewing !== null && this.viewing !== 'trace' ? this.openedFile : null;
    $('#download').disabled = file ? false : !this.trace || this.trace.stale;
    $('#download').textContent = file ? 'Download file' : 'Download .onnx';   // (the name in the tooltip: the header has no room for a long one)
    $('#download').title = file ? `${file.name}: the file opened, as it was read (not the editor's trace)` : '';
    $('#train').disabled = this.shownSteps === null;   // (kept through a worker restart, unlike this.inspected)
  }

  showError(err) {
    const box = $('#error');
    $('.kind', box).textContent = err.kind ?? err.name;
    $('.name', box).textContent = err.kind && err.kind !== err.name ? err.name : '';
    $('.message', box).textContent = err.message;
    const where = $('.where', box);
    if (err.line) {
      where.hidden = false;
      where.textContent = `line ${err.line}${err.column ? `, column ${err.column}` : ''}`;
      where.dataset.line = String(err.line);
      where.dataset.column = String(err.column ?? 1);
      this.editor.markError(err.line, err.column ?? 1);
    } else {
      where.hidden = true;
      delete where.dataset.line;
    }
    box.hidden = false;
  }

  hideError() {
    $('#error').hidden = true;
    this.editor.clearError();
  }

  /** A fresh worker holds nothing: the next job loads the model again; the last trace cannot be verified (its bytes stay downloadable). */
  workerRestarted() {
    this.inspected = null;
    if (this.trace) this.trace.source = null;
  }

  /** A failed job: cancelled (the worker was restarted) or an error to show. */
  fail(e) {
    if (e instanceof CancelledError) {
      this.status('Cancelled. The worker was restarted; the next run loads the model again (untrained).');
      return;
    }
    this.showError(e);
    this.status(`Failed: ${e.kind ?? e.name}`);
  }

  /**
   * True when none of the number fields is empty; else shows an InvalidArgument naming the first
   * empty one and focuses it. An empty (or unreadable, like "e") number field has the value '',
   * which Number() would silently read as 0.
   */
  filled(fields) {
    const empty = fields.find((f) => f.value.trim() === '');
    if (!empty) return true;
    this.fail({ name: 'InvalidArgument', kind: 'InvalidArgument', message: `${empty.getAttribute('aria-label')}: empty; enter a number` });
    empty.focus();
    return false;
  }

  /** Runs one job with the busy state on; resolves to its result, or null when it failed. */
  async job(type, payload, label, onProgress = () => {}) {
    // The worker holds one model file and its last trace. Every job but an inspect or a verify of
    // the same code drops that trace, even when the job fails (a train changes the weights, a
    // trace replaces it, other code unloads the file): Verify goes off, the bytes stay downloadable.
    const keeps = type === 'open' || type === 'runFile' || ((type === 'inspect' || type === 'verify') && payload.source === this.trace?.source);
    if (this.trace && !keeps) this.trace.source = null;
    this.busy(true, label);
    $('#stop').disabled = type !== 'train';
    try {
      return await this.jobs.run(type, { ...payload, file: this.fileName(), base: this.fileBase() }, onProgress);
    } catch (e) {
      this.fail(e);
      return null;
    } finally {
      this.busy(false);
    }
  }

  /** The name the model's code goes by in messages (its place: mlp.mjs:7:7): the zoo file's, or model.mjs. */
  fileName() {
    const name = $('#model-select').value;
    return name && name !== OWN ? `${name}.mjs` : 'model.mjs';
  }

  /**
   * The URL the model's code is served from, which its relative imports and import.meta.url
   * resolve against (a zoo file's, at the repository's path: server.mjs serves examples/ there),
   * or null for the person's own model.
   */
  fileBase() {
    const name = $('#model-select').value;
    return name && name !== OWN ? new URL(`examples/zoo/${name}.mjs`, document.baseURI).href : null;
  }

  showTab(name) {
    for (const tab of document.querySelectorAll('[role=tab]')) tab.setAttribute('aria-selected', String(tab.dataset.tab === name));
    for (const panel of document.querySelectorAll('.panel')) panel.hidden = panel.dataset.panel !== name;
    if (name === 'graph') this.graph.refit();
  }

  // ---- the graph view: inspector, search, opened files ----

  /** The inspector for the graph view's selection (null: hidden). */
  showInspector(item) {
    const box = $('#inspector');
    box.hidden = item === null;
    if (!item) return;
    $('.content', box).replaceChildren(...inspectorContent(item, this.graph.graph, this.graph.expanded, {
      expand: (path) => this.graph.expand(path),
      collapse: (path) => this.graph.collapse(path),
      reveal: (target) => this.graph.reveal(target),
    }));
  }

  /** Shows a graph in the graph view, the search emptied (its hits were the last graph's). */
  showGraph(graph) {
    this.clearSearch();
    return this.graph.show(graph);
  }

  /** The search box: matches listed as one types; Enter or a click shows one (Enter again: the next). */
  wireSearch() {
    const input = $('#graph-search'), list = $('#search-results');
    let hits = [], at = -1;
    this.clearSearch = () => {
      input.value = '';
      hits = [];
      at = -1;
      list.replaceChildren();
      list.hidden = true;
    };
    const show = (k) => {
      at = k;
      for (const [i, li] of [...list.children].entries()) li.setAttribute('aria-selected', String(i === k));
      if (hits[k]) this.graph.reveal(hits[k].target);
    };
    input.addEventListener('input', () => {
      hits = this.graph.search(input.value);
      at = -1;
      list.replaceChildren(...hits.map((hit, k) => h('li', { role: 'option', dataset: { target: hit.target }, onmousedown: (e) => { e.preventDefault(); show(k); } },
        h('span', { className: 'hit-label', textContent: hit.label }), h('span', { className: 'hit-detail', textContent: hit.detail }))));
      if (input.value.trim() && !hits.length) list.append(h('li', { className: 'muted', textContent: 'no match' }));
      list.hidden = !input.value.trim();
    });
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && hits.length) show((at + 1) % hits.length);
      else if (e.key === 'Escape') this.clearSearch();
      else return;
      e.preventDefault();
    });
    input.addEventListener('blur', () => { list.hidden = true; });
    input.addEventListener('focus', () => { list.hidden = !input.value.trim(); });
  }

  /** Open…, and a file dropped anywhere on the page. */
  wireOpen() {
    $('#open').addEventListener('click', () => $('#open-file').click());
    $('#open-file').addEventListener('change', (e) => {
      const [file] = e.target.files;
      e.target.value = '';
      if (file) this.openFile(file);
    });
    document.addEventListener('dragover', (e) => {
      if (![...e.dataTransfer.types].includes('Files')) return;
      e.preventDefault();
      document.body.classList.add('dropping');
    });
    document.addEventListener('dragleave', (e) => { if (!e.relatedTarget) document.body.classList.remove('dropping'); });
    document.addEventListener('drop', (e) => {
      document.body.classList.remove('dropping');
      const [file] = e.dataTransfer?.files ?? [];
      if (!file) return;
      e.preventDefault();
      if (this.jobs.busy) this.status(`A job is running: drop ${file.name} again once it has ended.`);
      else this.openFile(file);
    });
    $('#run-file').addEventListener('click', () => this.runFile());
    $('#run-upload').addEventListener('click', () => $('#run-upload-file').click());
    $('#run-upload-file').addEventListener('change', async (e) => {
      const [file] = e.target.files;
      e.target.value = '';
      if (!file) return;
      try {
        this.uploaded = JSON.parse(await file.text());
        $('#run-upload-info').textContent = `inputs from ${file.name}: ${Object.keys(this.uploaded).join(', ')}`;
      } catch (err) {
        this.uploaded = null;
        $('#run-upload-info').textContent = 'generated inputs';
        this.fail({ name: 'SyntaxError', kind: 'InvalidArgument', message: `run: ${file.name} is not JSON (${err.message})` });
      }
    });
  }

  /** Views an .onnx or .om file in the graph view and readies the Run tab for it. */
  async openFile(file) {
    // the File itself goes to the worker (no copy here), and the job starts at once: busy from the drop on
    const res = await this.job('open', { name: file.name, blob: file }, `Opening ${file.name}…`);
    if (!res) return;
    this.hideError();
    this.viewing = file.name;
    this.openedGraph = res.graph;
    this.openedFile = file;
    this.uploaded = null;
    this.markStale(this.trace?.stale ?? false);   // the stale note is the trace's, not this file's
    this.showTab('graph');
    await this.showGraph(res.graph);
    const nodes = res.graph.nodes.length, inits = res.graph.initializers.length, constants = Object.keys(res.graph.constants).length;
    $('#graph-info').textContent = `${file.name} · ${nodes} nodes · ${inits} initializers${constants ? ` · ${constants} constants` : ''}`;
    this.renderRunForm(file.name, res.graph);
    const { sizes, error } = res.graph.inferred;
    const at = Object.entries(sizes).map(([s, n]) => `${s} = ${n}`).join(', ');
    this.status(error ? `Opened ${file.name}: ${nodes} nodes; shapes only where the file gives them (${error}).`
      : `Opened ${file.name}: ${nodes} nodes; every shape from the Session${at ? ` (bound at ${at}, then each symbol moved)` : ''}. Run it in the Run a file tab.`);
  }

  /** The Run tab for an opened file: a size per symbol, the buttons, no results yet. */
  renderRunForm(name, graph) {
    $('#run-file-info').replaceChildren(h('code', { textContent: name }), ` (${graph.format === 'om' ? 'the library format: the Session runs it; onnxruntime-web reads .onnx only' : 'ONNX'}): inputs `,
      ...graph.inputs.flatMap((v, i) => [i ? ', ' : '', h('code', { textContent: v.name }), ' ', v.dtype, ' ', shapeNode(v.shape)]));
    const sizes = defaultSizes(graph.inputs);
    $('#run-sizes').replaceChildren(...Object.entries(sizes).map(([sym, n]) => h('label', { className: 'run-size' },
      h('span', { className: 'sym', textContent: sym }), ' = ',
      h('input', { className: 'size', type: 'number', min: '1', step: '1', value: String(n), dataset: { symbol: sym }, 'aria-label': `size of ${sym}` }))));
    $('#run-upload-info').textContent = 'generated inputs';
    $('#run-file').textContent = graph.format === 'om' ? 'Run in the Session' : 'Run in both engines';
    $('#run-form').hidden = false;
    $('#run-summary').textContent = '';
    $('#run-summary').className = 'verify-summary';
    $('#run-results').hidden = true;
  }

  async runFile() {
    const fields = [...document.querySelectorAll('#run-sizes .size')];
    if (!this.filled(fields)) return;
    const sizes = Object.fromEntries(fields.map((f) => [f.dataset.symbol, Number(f.value)]));
    const both = this.openedGraph.format === 'onnx';   // onnxruntime-web reads no .om
    const res = await this.job('runFile', { sizes, uploaded: this.uploaded }, `Running in the Session${both ? ' and onnxruntime-web' : ''}…`);
    if (!res) return;
    const { session, ort } = res.engines;
    const ms = (e) => (!e || e.error ? '' : `${e.ms.toFixed(2)} ms`);
    const names = Object.keys(session.outputs ?? ort?.outputs ?? {});
    $('#run-results tbody').replaceChildren(...names.map((name) => {
      const a = session.outputs?.[name];
      return h('tr', { dataset: { output: name } }, h('td', {}, h('code', { textContent: name })), h('td', {}, shapeNode((a ?? ort?.outputs[name]).dims)),
        h('td', { className: 'num session-ms', textContent: ms(session) }), h('td', { className: 'num ort-ms', textContent: ms(ort) }),
        h('td', { className: 'num diff', textContent: res.diffs ? errorText(res.diffs[name]) : '' }),
        h('td', { className: 'values', textContent: a ? a.data.slice(0, 6).map((v) => Number(v.toPrecision(4))).join(', ') + (a.data.length > 6 ? ', …' : '') : '' }));
    }));
    $('#run-results').hidden = names.length === 0;
    const engine = (label, e) => (e.error ? `${label} failed: ${e.error}` : `${label} ${ms(e)}`);
    const head = $('#run-summary');
    head.className = `verify-summary ${session.error || ort?.error ? 'bad' : 'ok'}`;
    head.dataset.maxDiff = String(res.maxDiff);
    head.textContent = `${engine('Session', session)} · ${ort ? engine('onnxruntime-web', ort) : 'onnxruntime-web not run (it reads .onnx files only)'}${res.maxDiff === null ? '' : ` · max |difference| ${errorText(res.maxDiff)}`} (one run after a warm-up; inputs ${Object.entries(res.inputs).map(([k, v]) => `${k} [${v.dims}]`).join(', ')}).`;
    this.status(head.textContent);
  }

  // ---- the model and its inputs ----

  /** The editor's model kept from an earlier visit ({ model, text }), or null. */
  saved() {
    try {
      const s = JSON.parse(localStorage.getItem(SAVED));
      return typeof s?.model === 'string' && typeof s?.text === 'string' ? s : null;
    } catch {
      return null;   // storage off (a private window's policy) or unreadable: start afresh
    }
  }

  /** Keeps the editor's model (the picker's value and the code) for the next visit. */
  save(text) {
    try {
      localStorage.setItem(SAVED, JSON.stringify({ model: $('#model-select').value, text }));
    } catch {
      // storage full or off: the page works on without it
    }
  }

  /**
   * Shows a model: the zoo file `name` (or the starter for OWN) as it is (a pick, Reset), or
   * `text`, its code as kept from an earlier visit.
   */
  async pick(name, text = null) {
    // an inspect scheduled for the text this replaces must not start while the file is fetched
    // (no job runs then): the pick's own inspect would find it running and fail
    clearTimeout(this.inspectTimer);
    $('#model-select').value = name;
    this.reset();
    if (text !== null) {
      // a person who reloads must see that the editor holds their edit, not the file: the file to
      // compare with is fetched as a pick fetches it (busy, so that no job starts meanwhile)
      let file = STARTER;
      if (name !== OWN) {
        this.busy(true, `Loading ${name}.mjs…`);
        try {
          file = await this.fileText(name);
        } finally {
          this.busy(false);
        }
      }
      this.editor.text = text;
      if (await this.inspect()) this.statusLoaded(text !== file);
      return;
    }
    text = STARTER;
    if (name !== OWN) {
      this.busy(true, `Loading ${name}.mjs…`);
      try {
        const res = await fetch(`zoo/${name}.mjs`);
        if (!res.ok) throw new Error(`could not load zoo/${name}.mjs: HTTP ${res.status}`);
        text = await res.text();
      } catch (e) {
        this.fail(e);
        return;
      } finally {
        this.busy(false);
      }
    }
    this.editor.text = text;   // edited() schedules an inspect; do it now instead (inspect() drops the scheduled one)
    if (await this.inspect()) this.statusLoaded();
  }

  /**
   * Marks the graph, the summary and a verification on screen as the previous trace's (a trace
   * failed since), or as current again; a stale trace cannot be downloaded or verified.
   */
  markStale(stale) {
    if (this.trace) this.trace.stale = stale;
    const shown = stale && this.trace !== null;   // nothing on screen to mark otherwise
    const graph = shown && this.viewing === 'trace';   // (an opened file's graph is no trace's)
    const verified = shown && $('#verify-results tbody').children.length > 0;
    $('#panel-graph').classList.toggle('stale', graph);
    $('#panel-summary').classList.toggle('stale', shown);
    $('#panel-verify').classList.toggle('stale', verified);
    $('#graph-stale').hidden = !graph;
    $('#summary-stale').hidden = !shown;
    $('#verify-stale').hidden = !verified;
    this.refreshButtons();
  }

  /** Empties the views of the last trace, training and verification (a new model was picked). */
  reset() {
    this.trace = null;
    this.inspected = null;    // the pick's inspect shows the file's title, inputs and steps, even when its code is what was loaded
    this.run = null;
    this.shownSteps = null;   // a picked file shows its own default steps
    this.graph.clear();
    this.viewing = null;
    $('#graph-info').textContent = 'Press Trace to see the graph.';
    $('#summary').replaceChildren(h('p', { className: 'muted', textContent: 'Press Trace to see the summary.' }));
    this.plot.reset(0);
    $('#train-info').textContent = TRAIN_INFO;
    this.renderVerify(null);
    this.hideError();
    this.markStale(false);
  }

  /** An edit: its error mark goes, it is kept for the next visit, and the code is loaded in the next pause of the typing. */
  edited() {
    this.save(this.editor.text);
    this.editor.clearError();
    this.refreshButtons();
    this.inspectSoon();
  }

  /**
   * Loads the editor's code in the worker after a pause (its inputs and errors show without a
   * click); while a job runs, once it has ended, so that an edit made meanwhile is not missed.
   */
  inspectSoon() {
    clearTimeout(this.inspectTimer);
    this.inspectTimer = setTimeout(() => {
      if (this.jobs.busy) this.inspectSoon();
      else if (this.inspected?.source !== this.editor.text) this.inspect().then((ok) => ok && this.statusLoaded());
    }, 700);
  }

  /**
   * Loads the editor's code in the worker and shows its inputs; true when it loaded. An inspect
   * scheduled by inspectSoon is dropped: this one loads the same text (an edit made from now on
   * schedules its own). Left pending, it would load the text again on its own once a worker
   * restart forgot it, a job the person did not start: the buttons go off under their pointer (a
   * click on Trace then is lost) and the error that restart showed is cleared.
   */
  async inspect() {
    clearTimeout(this.inspectTimer);
    const source = this.editor.text;
    if (this.inspected?.source === source) return true;
    const info = await this.job('inspect', { source }, 'Loading the model…');
    if (!info) return false;
    this.hideError();
    this.inspected = { source, ...info };
    $('#model-title').textContent = info.title;
    // the picker shows a zoo file's title already: beside it only a title of the code's own (an edit, your model)
    $('#model-title').hidden = info.title === this.zooTitles.get($('#model-select').value);
    // The file's default steps, unless the field already shows what the person typed over them.
    if (info.trainSteps !== null && info.trainSteps !== this.shownSteps) $('#train-steps').value = String(info.trainSteps);
    this.shownSteps = info.trainSteps;
    this.renderInputs(info.inputs);
    this.refreshButtons();
    return true;
  }

  /** The status once a model is loaded; kept: the editor holds an edit kept from an earlier visit. */
  statusLoaded(kept = false) {
    const { title, trainSteps } = this.inspected;
    const what = kept ? `your edit of “${title}”, kept from your last visit (Reset puts the file back)` : `“${title}”`;
    this.status(`Loaded ${what}. Press Trace${trainSteps !== null ? ', or Train first' : ''}.`);
  }

  /** The zoo file `name` as served, or null when it cannot be fetched (then a kept text counts as an edit). */
  async fileText(name) {
    try {
      const res = await fetch(`zoo/${name}.mjs`);
      return res.ok ? await res.text() : null;
    } catch {
      return null;
    }
  }

  /**
   * The shapes form: per input, per dim, a size and a symbol name (empty = fixed), and per symbol
   * the sizes it is declared to take (om.Dim's multipleOf, min, max). An input the code declares
   * as before keeps the person's edits; a new or changed one shows the code's.
   */
  renderInputs(inputs) {
    const host = $('#inputs');
    const edited = new Map(this.readShapes().map((s) => [s.name, s]));
    const before = new Map(this.shownInputs.map((i) => [i.name, JSON.stringify(i)]));
    // per symbol, what the symbols row shows: what was typed there, unless the code now declares the symbol otherwise
    const typed = new Map(this.readSymbols().map((v) => [v.name, v]));
    const code = declaredSizes(inputs);
    const sizes = new Map(typed);
    for (const [sym, v] of code) if (JSON.stringify(this.codeSizes.get(sym)) !== JSON.stringify(v)) sizes.set(sym, v);
    this.codeSizes = code;
    this.shownInputs = inputs;
    host.replaceChildren();
    for (const input of inputs) {
      const prev = edited.get(input.name);
      const keep = prev && before.get(input.name) === JSON.stringify(input);
      const dims = input.shape.map((size, d) => h('div', { className: 'dim', dataset: { dim: String(d) } },
        h('input', { className: 'size', type: 'number', min: '1', step: '1', value: String(keep ? prev.shape[d] : size), title: `size of axis ${d}`, 'aria-label': `${input.name} axis ${d} size` }),
        h('input', { className: 'axis', type: 'text', value: symbolName((keep ? prev.axes : input.axes)[d]) ?? '', placeholder: 'fixed', title: 'symbol name (empty: fixed size)', 'aria-label': `${input.name} axis ${d} symbol`, spellcheck: false, oninput: () => this.renderSymbols() })));
      host.append(h('div', { className: 'input-row', dataset: { input: input.name } },
        h('div', { className: 'input-name' }, h('code', { textContent: input.name }), h('span', { className: 'dtype', textContent: input.dtype })),
        h('div', { className: 'dims' }, ...dims)));
    }
    host.append(h('div', { id: 'symbols', className: 'symbols' }));
    this.renderSymbols(sizes);
  }

  /**
   * The symbols row: per symbol the axis fields name, the sizes it takes (multiple of, min, max:
   * om.Dim's options), as typed there, else as `sizes` (Map symbol -> { multipleOf, min, max })
   * or the code says, else any size from 1. After a trace, a symbol the model narrowed says so.
   */
  renderSymbols(sizes = new Map()) {
    const host = $('#symbols');
    const typed = new Map(this.readSymbols().map((v) => [v.name, v]));
    const names = [...new Set([...document.querySelectorAll('#inputs .axis')].map((i) => i.value.trim()).filter(Boolean))];
    const field = (sym, key, value, label, placeholder = '') => h('label', {}, label, h('input', {
      className: key, type: 'number', min: key === 'min' ? '0' : '1', step: '1', value: value === undefined || value === Infinity ? '' : String(value),
      placeholder, 'aria-label': `${sym} ${label}`, oninput: () => this.showNarrowed(null),
    }));
    host.replaceChildren(h('span', { className: 'symbols-head', textContent: 'symbols' }), h('div', { className: 'symbol-list' }, ...names.map((sym) => {
      const v = typed.get(sym) ?? sizes.get(sym) ?? this.codeSizes.get(sym) ?? ANY_SIZE;
      return h('div', { className: 'symbol', dataset: { symbol: sym } }, h('code', { className: 'sym', textContent: sym }),
        field(sym, 'multiple-of', v.multipleOf, 'multiple of'), field(sym, 'min', v.min, 'min'), field(sym, 'max', v.max, 'max', 'any'),
        h('span', { className: 'narrowed', hidden: true }));
    })));
    host.hidden = !names.length;
  }

  /** The symbols row as om.Dim's options: [{ name, multipleOf, min, max }] (an empty field: its default; max Infinity). */
  readSymbols() {
    const num = (row, key, otherwise) => {
      const v = $(`.${key}`, row).value.trim();
      return v === '' ? otherwise : Number(v);
    };
    return [...document.querySelectorAll('#symbols .symbol')].map((row) => ({
      name: row.dataset.symbol, multipleOf: num(row, 'multiple-of', 1), min: num(row, 'min', 1), max: num(row, 'max', Infinity),
    }));
  }

  /**
   * After a trace, per symbol whose sizes the model narrowed (ranges: the summary's, narrowedBy
   * set), what it narrowed them to, beside the symbol's fields; null clears it (the fields changed).
   */
  showNarrowed(ranges) {
    const by = new Map((ranges ?? []).filter((r) => r.narrowedBy).map((r) => [r.name, r]));
    for (const row of document.querySelectorAll('#symbols .symbol')) {
      const r = by.get(row.dataset.symbol);
      const note = $('.narrowed', row);
      note.hidden = !r;
      note.textContent = r ? `narrowed by the model: ${rangeText(r)}` : '';
      note.title = r ? r.narrowedBy : '';
    }
  }

  /**
   * The form as makeInputs takes it: [{ name, shape, axes }], a symbol with sizes declared in the
   * symbols row as { name, multipleOf, min, max } (om.Dim's options), any other by its name.
   */
  readShapes() {
    const declared = new Map(this.readSymbols().filter((s) => s.multipleOf !== 1 || s.min !== 1 || s.max !== Infinity).map((s) => [s.name, s]));
    return [...document.querySelectorAll('#inputs .input-row')].map((row) => ({
      name: row.dataset.input,
      shape: [...row.querySelectorAll('.size')].map((i) => Number(i.value)),
      axes: [...row.querySelectorAll('.axis')].map((i) => i.value.trim() || null).map((a) => (a && declared.get(a)) || a),
    }));
  }

  // ---- jobs ----

  async runTrain() {
    if (!this.filled([$('#train-steps')]) || !(await this.inspect())) return;
    const steps = Number($('#train-steps').value);
    this.showTab('training');
    this.plot.reset(steps);
    const res = await this.job('train', { source: this.editor.text, steps }, 'Training…', (p) => {
      this.plot.add(p.done, p.loss);
      this.progress(p.done, p.total);
      this.status(`Training… step ${p.done}/${p.total} · loss ${p.loss.toPrecision(4)}`);
    });
    this.plot.flush();
    if (!res) return;
    this.trace = null;
    this.markStale(false);
    this.refreshButtons();
    const loss = res.loss === null ? '' : `, final loss ${res.loss.toPrecision(4)}`;
    if (res.stopped) {
      this.plot.markStop(res.steps);
      $('#train-info').textContent = `Stopped after ${res.steps} of ${steps} steps${loss}; the weights trained so far are kept. Trace now to export them.`;
      this.status(`Stopped after ${res.steps} of ${steps} steps${loss}; the trained weights are kept.`);
      return;
    }
    $('#train-info').textContent = `${res.steps} steps${loss}. Trace now to export the trained weights.`;
    this.status(`Trained ${res.steps} steps${loss}.`);
  }

  async runTrace() {
    if (!this.filled([...document.querySelectorAll('#inputs .size')])) return;
    if (!(await this.inspect())) {   // the code does not load: no trace of it, so what is on screen is stale
      this.markStale(true);
      return;
    }
    const source = this.editor.text;
    const res = await this.job('trace', { source, shapes: this.readShapes() }, 'Tracing…', (p) => {
      this.progress(p.done, p.total); // the bar runs through the trace, then again through the writing
      if (p.stage === 'export') this.status(`Writing the .onnx… ${bytesText(p.done)} of ${bytesText(p.total)}`);
    });
    if (!res) {
      this.markStale(true);
      return;
    }
    this.hideError();
    const title = this.inspected.title;
    this.trace = { source, summary: res.summary, onnx: res.onnx, fileName: onnxName(title) };
    this.viewing = 'trace';
    this.markStale(false);
    this.renderSummary(res.summary);
    this.renderVerify(null);
    this.showTab('graph');
    await this.showGraph(res.graph);
    $('#graph-info').textContent = `${res.summary.nodeCount} nodes · ${res.summary.initializers.length} initializers`;
    this.refreshButtons();
    this.showNarrowed(res.summary.ranges);
    const narrowed = res.summary.ranges.filter((r) => r.narrowedBy).map((r) => `${r.name}: ${rangeText(r)}`);
    this.status(`Traced “${title}”: ${res.summary.nodeCount} nodes, ${bytesText(res.summary.onnxBytes)} of ONNX.`
      + `${narrowed.length ? ` Narrowed by the model: ${narrowed.join('; ')} (see Summary).` : ''}`);
  }

  async runVerify() {
    if (!this.trace) return;
    this.showTab('verify');
    this.renderVerify(null);
    this.run = null;
    const rows = [];
    const res = await this.job('verify', { source: this.editor.text }, 'Verifying with onnxruntime-web and the Session…', (p) => {
      rows.push(p.check);
      this.renderVerifyRows(rows);
      this.progress(p.done, p.total);
      this.status(`Verifying… ${p.done}/${p.total} shapes`);
    });
    if (!res) return;
    const { report, run } = res;
    this.run = run;
    this.renderVerify(report);
    this.renderOutputs(run.outputs);
    this.status(report.ok ? `Verified: onnxruntime-web and the Session agree at ${shapesText(report.checks.length)} (max error ${errorText(report.maxError)}, ${errorText(report.sessionMaxError)}).`
      : 'Verification found a disagreement (see Verify).');
  }

  download() {
    const file = this.viewing !== null && this.viewing !== 'trace' ? this.openedFile : null;
    if (!file && !this.trace) return;
    // the opened File, or the worker's Blob (toBlob): no copy of the bytes here either way
    const url = URL.createObjectURL(file ?? this.trace.onnx);
    const a = h('a', { href: url, download: file ? file.name : this.trace.fileName });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }

  // ---- views ----

  renderSummary(s) {
    const stat = (label, value, note = '') => h('div', { className: 'stat' },
      h('div', { className: 'stat-value', textContent: value }), h('div', { className: 'stat-label', textContent: label }),
      note ? h('div', { className: 'stat-note', textContent: note }) : null);
    const io = (kind, list) => list.map((v) => h('tr', {}, h('td', { textContent: kind }), h('td', {}, h('code', { textContent: v.name })),
      h('td', { textContent: v.dtype }), h('td', {}, shapeNode(v.shape))));
    const maxCount = Math.max(1, ...s.opCounts.map((o) => o.count));
    $('#summary').replaceChildren(
      h('div', { className: 'stats' },
        stat('nodes', String(s.nodeCount)),
        stat('initializers', String(s.initializers.length), bytesText(s.initializerBytes)),
        stat('.onnx file', bytesText(s.onnxBytes), `${s.onnxBytes.toLocaleString('en')} bytes`),
        stat('symbolic dims', s.symbols.length ? s.symbols.join(', ') : 'none')),
      ...(s.ranges.length ? [h('h3', { textContent: 'Sizes the graph holds for' }),
        h('table', { className: 'ranges' }, h('thead', {}, h('tr', {}, ...['symbol', 'sizes', 'set by'].map((t) => h('th', { textContent: t })))),
          h('tbody', {}, ...s.ranges.map((r) => h('tr', { dataset: { symbol: r.name }, className: r.narrowedBy ? 'narrowed' : '' },
            h('td', {}, h('span', { className: 'sym', textContent: r.name })), h('td', { className: 'range', textContent: rangeText(r) }),
            h('td', { className: 'why', textContent: r.narrowedBy ? `the model: ${r.narrowedBy}` : 'the declaration' })))))] : []),
      h('h3', { textContent: 'Inputs and outputs' }),
      h('table', { className: 'io' }, h('thead', {}, h('tr', {}, ...['', 'name', 'dtype', 'shape'].map((t) => h('th', { textContent: t })))),
        h('tbody', {}, ...io('input', s.inputs), ...io('output', s.outputs))),
      h('h3', { textContent: 'Nodes by op type' }),
      h('div', { className: 'ops' }, ...s.opCounts.map((o) => h('div', { className: 'op-row', dataset: { op: o.opType } },
        h('code', { textContent: o.opType }),
        h('div', { className: 'op-bar' }, h('div', { style: `width:${(100 * o.count) / maxCount}%` })),
        h('span', { className: 'op-count', textContent: String(o.count) })))),
      h('h3', { textContent: 'Initializers' }),
      h('table', { className: 'inits' }, h('thead', {}, h('tr', {}, ...['name', 'dtype', 'shape', 'bytes'].map((t) => h('th', { textContent: t })))),
        h('tbody', {}, ...s.initializers.map((i) => h('tr', {}, h('td', {}, h('code', { textContent: i.name })), h('td', { textContent: i.dtype }),
          h('td', {}, shapeNode(i.shape)), h('td', { className: 'num', textContent: bytesText(i.bytes) }))))));
  }

  renderVerifyRows(checks) {
    $('#verify-results tbody').replaceChildren(...checks.map((c) => h('tr', { dataset: { ok: String(c.ok) } },
      h('td', { textContent: Object.entries(c.symbols).map(([k, v]) => `${k} = ${v}`).join(', ') || '(traced shapes)' }),
      h('td', {}, ...Object.entries(c.shapes).map(([n, sh]) => h('div', {}, h('code', { textContent: n }), ' ', shapeNode(sh)))),
      h('td', { className: 'num max-error', textContent: errorText(c.maxError) }),
      h('td', { className: 'num session-max-error', textContent: errorText(c.sessionMaxError) }),
      h('td', { className: c.ok ? 'ok' : 'bad', textContent: c.ok ? 'agrees' : (c.error ?? 'disagrees') }))));
  }

  /** What the .onnx computed on the traced inputs: per output, its shape and first values. */
  renderOutputs(outputs) {
    const PREVIEW = 8;
    const host = $('#run-outputs');
    host.replaceChildren(...(outputs ? [
      h('h3', { textContent: 'Outputs of the .onnx on the traced inputs (onnxruntime-web)' }),
      h('table', {}, h('tbody', {}, ...Object.entries(outputs).map(([name, o]) => h('tr', {},
        h('td', {}, h('code', { textContent: name })), h('td', {}, shapeNode(o.dims)),
        h('td', { className: 'values', textContent: `${o.data.slice(0, PREVIEW).map((v) => Number(v.toPrecision(4))).join(', ')}${o.data.length > PREVIEW ? ', …' : ''}` }))))),
    ] : []));
  }

  /** The verification panel: empty (null) or a finished report. */
  renderVerify(report) {
    const head = $('#verify-summary');
    if (!report) {
      head.textContent = this.trace ? 'Runs the .onnx in onnxruntime-web (WebAssembly) and the graph in onemodel\'s own Session, and compares both with the eager model at the traced shapes and at other sizes of every symbolic axis.' : 'Trace a model first.';
      head.className = 'verify-summary';
      this.renderVerifyRows([]);
      this.renderOutputs(null);
      return;
    }
    this.renderVerifyRows(report.checks);
    head.className = `verify-summary ${report.ok ? 'ok' : 'bad'}`;
    head.dataset.maxError = String(report.maxError);
    head.dataset.sessionMaxError = String(report.sessionMaxError);
    const errors = `max error ${errorText(report.maxError)} (onnxruntime-web), ${errorText(report.sessionMaxError)} (Session)`;
    head.textContent = report.ok
      ? `onnxruntime-web and the Session agree with the eager model at ${report.checks.length === 1 ? '' : 'all '}${shapesText(report.checks.length)}: ${errors}.`
      : `${report.checks.filter((c) => !c.ok).length} of ${report.checks.length} shapes disagree (${errors}).`;
  }
}

const page = new Page();
window.onemodelPage = page;   // for the browser tests and the console
page.showTab('graph');
page.start();
