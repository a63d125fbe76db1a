// Shrinks a failing random model (a generator.mjs case) to a smaller one that fails the same
// way (the same class, and for wrong the same kind of disagreement), by greedy steps each checked
// by running the candidate:
//
//   - return an earlier value instead (the first value that already fails);
//   - keep one output of several;
//   - bypass a statement: use an earlier value of the same dtype and example shape instead of its
//     result (x for relu(x));
//   - drop a shape-preserving call from a statement (.relu(), .mul(0.5), ...);
//   - make a symbolic axis fixed (what is left symbolic is what the failure needs);
//   - write the model as a function instead of an nn.Module;
//
// with dead statements, declarations and inputs pruned after each step.
//
//   const { case: small, record, evals } = await shrink(c, record, (cand) => pool.run(render(cand)));

/** The kind of failure of a record: 'wrong:values' | 'wrong:shape' | 'wrong:dtype' | 'wrong:run' | 'wrong:load' | 'crash:...'. */
export function failureKind(r) {
  if (r.class === 'wrong') {
    const m = r.message ?? '';
    return `wrong:${/cannot load/.test(m) ? 'load' : /cannot run/.test(m) ? 'run' : /: shape \[/.test(m) ? 'shape' : /: dtype /.test(m) ? 'dtype' : 'values'}`;
  }
  if (r.class === 'crash') return `crash:${r.at === 'hang' ? 'hang' : (r.message ?? '').split(':')[0]}`;
  return r.class;
}

const IDENT = /@?[A-Za-z_$][\w$]*/g;
const identsOf = (code) => code.match(IDENT) ?? [];
/** code with identifier `from` (not a property) renamed to `to`. */
const rename = (code, from, to) => code.replace(new RegExp(`(?<![\\w$.@])${from.replace('$', '\\$')}(?![\\w$])`, 'g'), to);
const resultNames = (c) => (Array.isArray(c.result) ? c.result : Object.values(c.result));
const mapResult = (c, f) => (Array.isArray(c.result) ? c.result.map(f) : Object.fromEntries(Object.entries(c.result).map(([k, v]) => [k, f(v)])));
const copy = (c) => ({ ...c, inputs: c.inputs.map((i) => ({ ...i, axes: [...i.axes] })), body: [...c.body], decls: [...c.decls] });

/** c without statements, declarations and inputs that nothing the result needs uses. */
export function prune(c) {
  const used = new Set(resultNames(c));
  const body = [];
  for (let i = c.body.length - 1; i >= 0; i--) {
    const s = c.body[i];
    if (s.defs.length && !s.defs.some((d) => used.has(d))) continue;
    body.unshift(s);
    for (const id of identsOf(s.code)) used.add(id);
  }
  const inputs = c.inputs.filter((x) => used.has(x.name));
  return { ...c, body, decls: c.decls.filter((d) => used.has(`@${d.name}`)), inputs: inputs.length ? inputs : c.inputs.slice(0, 1) };
}

/** Values the case defines, in order (statement index, name). */
function definedValues(c) {
  return c.body.flatMap((s, i) => s.defs.filter((d) => d in c.types).map((name) => ({ i, name })));
}

function* truncations(c) {
  const current = resultNames(c);
  for (const { name } of definedValues(c)) {
    if (current.length === 1 && current[0] === name) return;
    yield { ...c, result: [name] };
  }
}

function* singleOutputs(c) {
  const names = resultNames(c);
  if (names.length > 1) for (const n of names) yield { ...c, result: [n] };
  else if (!Array.isArray(c.result)) yield { ...c, result: names };
}

function* bypasses(c) {
  const values = definedValues(c);
  for (let k = values.length - 1; k >= 0; k--) {
    const { i, name } = values[k];
    if (c.body[i].defs.length !== 1) continue;
    const type = c.types[name];
    // stand-ins: its own operands first, then any earlier value (inputs included) of its type
    const own = identsOf(c.body[i].code).filter((id) => c.types[id] === type && id !== name);
    const earlier = [...c.inputs.map((x) => x.name), ...values.slice(0, k).map((v) => v.name)].filter((n) => c.types[n] === type).reverse();
    for (const u of [...new Set([...own, ...earlier])].slice(0, 3)) {
      const body = c.body.filter((_, j) => j !== i).map((s, j) => (j >= i ? { ...s, code: rename(s.code, name, u) } : s));
      yield { ...c, body, result: mapResult(c, (n) => (n === name ? u : n)) };
    }
  }
}

/** Calls that keep a value's dtype and shape, so dropping one keeps the model valid. */
const SIMPLE = /\.(?:relu|tanh|sigmoid|abs|neg|exp|erf|contiguous|clone|sign)\(\)|\.(?:mul|add|sub|div)\(-?\d+(?:\.\d+)?\)/g;

function* simplifications(c) {
  for (let i = 0; i < c.body.length; i++) {
    for (const m of c.body[i].code.matchAll(SIMPLE)) {
      const code = c.body[i].code.slice(0, m.index) + c.body[i].code.slice(m.index + m[0].length);
      const body = [...c.body];
      body[i] = { ...body[i], code };
      yield { ...c, body };
    }
  }
}

function* fixedAxes(c) {
  for (let k = 0; k < c.inputs.length; k++) {
    for (let d = 0; d < c.inputs[k].axes.length; d++) {
      if (!c.inputs[k].axes[d]) continue;
      const out = copy(c);
      const symbol = out.inputs[k].axes[d];
      for (const x of out.inputs) x.axes = x.axes.map((a) => (a === symbol ? null : a));
      out.zeroChecks = c.zeroChecks.filter((s) => s !== symbol);
      out.multiples = Object.fromEntries(Object.entries(c.multiples ?? {}).filter(([s]) => s !== symbol));
      out.maxes = Object.fromEntries(Object.entries(c.maxes ?? {}).filter(([s]) => s !== symbol));
      yield out;
    }
  }
}

function* functionForm(c) {
  if (c.form === 'module') yield { ...c, form: 'function' };
}

const STEPS = [truncations, singleOutputs, bypasses, simplifications, fixedAxes, functionForm];

/**
 * Shrinks case c whose run gave record (wrong or crash). evaluate(case) resolves to the record
 * of a candidate. Stops when no step applies or after maxEvals runs. Resolves to { case, record,
 * evals }: the smallest case found that fails as record does, and its record.
 */
export async function shrink(c, record, evaluate, { maxEvals = 250 } = {}) {
  const want = failureKind(record);
  let best = c;
  let bestRecord = record;
  let evals = 0;
  const attempt = async (cand) => {
    if (evals >= maxEvals) return false;
    evals++;
    const r = await evaluate(cand);
    if (failureKind(r) !== want) return false;
    best = cand;
    bestRecord = r;
    return true;
  };
  await attempt(prune(c));
  for (let changed = true; changed && evals < maxEvals;) {
    changed = false;
    for (const step of STEPS) {
      for (const cand of step(best)) {
        if (await attempt(prune(cand))) { changed = true; break; }
        if (evals >= maxEvals) break;
      }
    }
  }
  return { case: best, record: bestRecord, evals };
}
