// What tracing with symbolic axes costs (docs/tracing.md, "What a symbolic trace costs"): for the
// zoo models and some of the ports of real models (examples/transformers/, with their test
// fixtures' weights and trace sizes and the axes their tests declare), one eager forward (noGrad)
// against one om.trace with symbolic axes, and how many times the trace ran the model (the base
// run, the runs at other sizes, the whole-range check's runs, the record run: every call of
// forward while om.trace runs).
//
//   npm run bench:trace                          every model below
//   node tools/trace_cost.mjs [--samples N] [--models beit,gpt2,zoo:mlp]
//
// Each time is the median of N samples (3 unless told) after a warm-up, a forward (the least of
// five in a row) and a trace in turn, in this process; on a shared machine take the ratios to
// within some tens of percent.
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';

const FIXTURES = new URL('../tests/js/fixtures/transformers/', import.meta.url);

/** A port of examples/transformers/ at its fixture (name): the class's module and name, and the axes when its tests declare others than the fixture's. */
const PORTS = [
  ['beit', 'beit.mjs', 'BeitForImageClassification', null, 'unbounded'],
  ['beit_shared', 'beit.mjs', 'BeitForImageClassification', (om) => ['batch', null, om.Dim('height', { max: 64 }), om.Dim('width', { max: 64 })], 'height, width to 64'],
  ['swin', 'swin.mjs', 'SwinModel', (om) => ['batch', null, om.Dim('height', { min: 13 }), om.Dim('width', { min: 13 })], 'height, width from 13'],
  ['gpt2', 'gpt2.mjs', 'GPT2LMHeadModel', null, 'unbounded'],
  ['llama', 'llama.mjs', 'LlamaForCausalLM', null, 'unbounded'],
  ['convnextv2', 'convnextv2.mjs', 'ConvNextV2ForImageClassification', null, 'unbounded'],
];
const ZOO = ['mlp', 'lenet', 'lstm', 'resnet', 'unet', 'gpt', 'vit'];

function args() {
  const a = process.argv.slice(2);
  const opt = { samples: 3, models: null };
  for (let i = 0; i < a.length; i++) {
    if (a[i] === '--samples') opt.samples = Number(a[++i]);
    else if (a[i] === '--models') opt.models = a[++i].split(',');
    else {
      console.error('usage: node tools/trace_cost.mjs [--samples N] [--models beit,gpt2,zoo:mlp,...]');
      process.exit(2);
    }
  }
  if (!Number.isInteger(opt.samples) || opt.samples < 1) {
    console.error('trace_cost: --samples takes a positive integer');
    process.exit(2);
  }
  return opt;
}

/** tools/torchvision_ports.py's image(shape, seed), as the port tests make their images. */
function image(shape, seed) {
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = (((Math.imul(i, 2654435761 | 0) + seed * 40503) >>> 0) >>> 8) / 2 ** 22 - 2;
  return om.tensor(data, { shape });
}

/** A port with its fixture's weights (strict), in eval mode, and its trace case's inputs with the axes. */
async function port([name, file, cls, axes, what]) {
  const fx = JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8'));
  const Model = (await import(`../examples/transformers/${file}`))[cls];
  const model = new Model(fx.config);
  const { tensors } = om.safetensors.loadFile(new URL(fx.file, FIXTURES));
  try {
    const { missingKeys, unexpectedKeys } = model.loadStateDict(tensors, { strict: true });
    if (missingKeys.length || unexpectedKeys.length) throw new Error(`trace_cost: ${name}: the fixture's state dict does not fit the port`);
  } finally {
    om.dispose(tensors);
  }
  const c = fx.cases[fx.trace_case];
  const inputs = Object.fromEntries(c.inputs.map((e) => {
    const t = e.seed !== undefined ? image(e.shape, e.seed)
      : om.tensor(e.dtype === 'int64' ? e.data.map(BigInt) : e.data, { dtype: e.dtype, shape: e.shape });
    return [e.name, [t, axes ? axes(om) : fx.axes[e.name]]];
  }));
  const sizes = Object.entries(c.sizes).map(([k, v]) => `${k} ${v}`).join(', ');
  return { name: `${name} (${cls}), ${sizes}; ${what}`, model: model.eval(), inputs, owned: true };
}

async function zoo(name) {
  const { default: z } = await import(`../examples/zoo/${name}.mjs`);
  const shape = Object.values(z.inputs).map(([t, axes]) => t.shape.map((s, d) => (axes?.[d] ? `${typeof axes[d] === 'string' ? axes[d] : axes[d].name} ${s}` : s)).join(' x ')).join('; ');
  return { name: `zoo ${z.title}, ${shape}`, model: z.model.eval(), inputs: z.inputs, owned: false };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** One eager forward and one symbolic trace of m, alternating (after one warm-up each); and the runs a trace makes. */
function measure(m, samples) {
  const fixed = Object.values(m.inputs).map(([t]) => t);
  let calls = 0;
  const forward = m.model.forward;
  m.model.forward = function counted(...a) {
    calls++;
    return forward.apply(this, a);
  };
  try {
    const timed = (fn) => {
      const t0 = performance.now();
      fn();
      return performance.now() - t0;
    };
    const ms = [[], []], runs = [];
    for (let s = 0; s <= samples; s++) {
      // a forward is quick next to a trace and the machine shared: the least of five in a row
      const f = Math.min(...Array.from({ length: 5 }, () => timed(() => om.tidy(() => { om.noGrad(() => forward.apply(m.model, fixed)); }))));
      calls = 0;
      const t = timed(() => om.trace(m.model, m.inputs).dispose());
      if (s > 0) ms[0].push(f), ms[1].push(t);
      runs.push(calls);
    }
    if (new Set(runs).size !== 1) throw new Error(`trace_cost: ${m.name}: the trace ran the model ${runs.join(', ')} times in turn`);
    return { forward: median(ms[0]), trace: median(ms[1]), runs: runs[0] };
  } finally {
    delete m.model.forward; // the instance's own property; the class's method again
  }
}

const opt = args();
await om.ready();
const all = [...ZOO.map((z) => `zoo:${z}`), ...PORTS.map(([n]) => n)];
for (const n of opt.models ?? []) {
  if (!all.includes(n)) {
    console.error(`trace_cost: no model ${JSON.stringify(n)} (the models: ${all.join(', ')})`);
    process.exit(2);
  }
}
console.log(`| model | runs of the model | one eager forward, ms | om.trace, ms | trace / forward |\n|---|---:|---:|---:|---:|`);
for (const n of opt.models ?? all) {
  const m = n.startsWith('zoo:') ? await zoo(n.slice(4)) : await port(PORTS.find(([p]) => p === n));
  try {
    const r = measure(m, opt.samples);
    const ms = (x) => (x < 10 ? x.toFixed(2) : x.toFixed(0));
    console.log(`| ${m.name} | ${r.runs} | ${ms(r.forward)} | ${ms(r.trace)} | ${(r.trace / r.forward).toFixed(r.trace / r.forward < 10 ? 1 : 0)} |`);
  } finally {
    if (m.owned) {
      m.model.dispose();
      om.dispose(Object.values(m.inputs).map(([t]) => t));
    }
  }
}
