// A batch of random models: run models from..from+count-1 of a seed (generator.mjs) through the
// worker pool (pool.mjs, runner.mjs), count them by class, and write the report. fuzz.mjs (the
// command) and ../random-models.test.mjs use it.
import { generate, render } from './generator.mjs';
import { Pool } from './pool.mjs';
import { shrink } from './shrink.mjs';
import { ORT_KERNELS } from './written-out.mjs';

export const CLASSES = ['agree', 'refused', 'wrong', 'crash', 'invalid'];
/** Classes that fail a batch: the tracer is silently wrong, something crashed, or the generator made an invalid model. */
export const FAILING = ['wrong', 'crash', 'invalid'];

const metaOf = (c) => ({ id: c.id, family: c.family, tags: c.tags });

/**
 * Runs the batch; onRecord(record, done, count) after each model. Resolves to { records (in
 * index order), ms }. pool: an open Pool to use (else one of `workers` threads is made and
 * closed). options: generate's ({ without }).
 */
export async function runBatch({ seed, from = 0, count, workers = 1, timeoutMs = 60000, pool = null, options = {}, onRecord }) {
  const t0 = performance.now();
  const own = pool ?? new Pool({ workers, timeoutMs });
  const records = new Array(count);
  let done = 0;
  try {
    await Promise.all(Array.from({ length: count }, (_, k) => {
      const c = generate(seed, from + k, options);
      return own.run(render(c), metaOf(c)).then((r) => {
        records[k] = r;
        onRecord?.(r, ++done, count);
      });
    }));
  } finally {
    if (!pool) await own.close();
  }
  return { records, ms: performance.now() - t0 };
}

/** The case behind a record id ("seed:index"), made with generate's options. */
export function caseOf(id, options = {}) {
  const [seed, index] = id.split(':').map(Number);
  return generate(seed, index, options);
}

/** Shrinks the failing case behind record (shrink.mjs) on pool; resolves to { source, record, evals }. */
export async function shrinkRecord(record, pool, options = {}) {
  const c = caseOf(record.id, options);
  const out = await shrink(c, record, (cand) => pool.run(render(cand), metaOf(cand)));
  return { source: render({ ...out.case, id: `${c.id}, shrunk`, tags: [] }), record: out.record, evals: out.evals };
}

// ---- the report ------------------------------------------------------------------------------

const pct = (n, total) => `${((100 * n) / Math.max(1, total)).toFixed(1)}%`;
const pad = (s, n) => String(s).padStart(n);

/** A refusal's message with its particulars (numbers, shapes, names) blanked, to group refusals. */
export function refusalGroup(r) {
  const m = r.message.replace(/ \(at [^()]*\)$/, '') // the model's line that made the call
    .replace(/\[[^\]]*\]/g, '[…]').replace(/'[^'\s]*'/g, "'…'").replace(/\b\d+x\d+\b/g, '#x#').replace(/-?\b\d+\b/g, '#')
    .replace(/\b\w+=#(?:,? \w+=#)*/g, '<sizes>');
  return `${r.kind}: ${m.length > 150 ? `${m.slice(0, 150)}…` : m}`;
}

/**
 * Why a refusal is one: 'control flow' (the model makes other calls at other sizes, or from a size
 * threshold on), 'fails'
 * (eager itself fails at other sizes: a constant of the example's size, an odd size halved),
 * both of which the tracer must refuse; else 'expressivity' (a size the graph cannot compute,
 * where a richer tracer might write one), or 'other' for kinds besides SymbolicShape.
 */
export function refusalReason(r) {
  if (r.kind !== 'SymbolicShape') return 'other';
  if (/takes another path at other sizes|makes other calls|returns \d+ outputs at/.test(r.message)) return 'control flow';
  // a threshold where the model calls or reads otherwise (a branch on T > c); one where it passes another
  // number than the graph computes is a size the graph may compute wrongly: expressivity
  if (/changes at a size threshold: at [^;]* it (calls|reads|returns|makes|goes on)/.test(r.message)) return 'control flow';
  if (/the model fails|the call fails|this call fails/.test(r.message)) return 'fails';
  return 'expressivity';
}

function quantile(sorted, q) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN;
}

/** A checked suggestion (runner.mjs checkSuggestion) as text. */
export const suggestionText = (s) => (s.holds ? `HOLDS with ${s.declared}` : `STILL REFUSED with ${s.declared}: ${s.message}`);

/**
 * The report of a batch as text: counts by class, timing, refusals grouped by kind and message,
 * failure rates by tag, and every failing model (id, class, where it failed, the error, its
 * source; and the shrunk source where shrunk has one: id -> { source, record }).
 */
export function formatReport({ seed, from = 0, count, records, ms, workers = 1, options = {}, shrunk = new Map(), maxFailures = Infinity }) {
  const lines = [];
  const by = Object.fromEntries(CLASSES.map((k) => [k, records.filter((r) => r.class === k)]));
  const times = records.map((r) => r.ms ?? 0).sort((a, b) => a - b);
  const without = options.without?.length ? ` without ${options.without.join(', ')},` : '';
  lines.push(`random models: seed ${seed}, models ${from}..${from + count - 1} (${count}),${without} ${workers} worker${workers > 1 ? 's' : ''}, `
    + `${(ms / 1000).toFixed(1)} s (${(ms / count).toFixed(1)} ms per model; per-model time median ${quantile(times, 0.5)} ms, `
    + `p95 ${quantile(times, 0.95)} ms, max ${times[times.length - 1]} ms)`);
  for (const k of CLASSES) lines.push(`  ${k.padEnd(8)} ${pad(by[k].length, 6)}  ${pad(pct(by[k].length, count), 6)}`);
  if (by.refused.length) {
    const n = (why) => by.refused.filter((r) => refusalReason(r) === why).length;
    lines.push(`  of the refused: control flow on a size ${n('control flow')} (${pct(n('control flow'), count)}), the eager model fails at other `
      + `sizes ${n('fails')} (${pct(n('fails'), count)}), sizes the graph cannot compute ${n('expressivity')} (${pct(n('expressivity'), count)}), `
      + `other kinds ${n('other')}`);
  }
  const agree = by.agree;
  if (agree.length) {
    const checked = agree.reduce((s, r) => s + r.checked, 0) / agree.length;
    const skipped = agree.reduce((s, r) => s + r.skipped, 0) / agree.length;
    const margin = Math.max(...agree.map((r) => r.margin));
    lines.push(`  agreeing models: checked at ${checked.toFixed(1)} assignments of their symbols on average (${skipped.toFixed(1)} more `
      + `skipped: eager throws there, or the outputs are too large to compare); the largest error ${margin.toFixed(3)} of the bound`);
  }
  const ortOnly = by.wrong.filter((r) => r.ortOptimizer);
  const byKernel = ORT_KERNELS.map((k) => [k, by.wrong.filter((r) => r[k.key])]);
  const marginal = by.wrong.filter((r) => r.ratio < 10).length;
  if (ortOnly.length || byKernel.some(([, rs]) => rs.length) || marginal) {
    const ids = (rs) => (rs.length ? `: ${rs.slice(0, 10).map((r) => r.id).join(', ')}` : '');
    lines.push(`  of the wrong: ${ortOnly.length} ORT optimizer (right with onnxruntime's graph optimizations disabled: a valid file its `
      + `optimizer gets wrong, still ours to avoid)${ids(ortOnly)}; `
      + byKernel.map(([k, rs]) => `${rs.length} ORT ${k.label} (the Session agrees, and onnxruntime-web with each ${k.label} written out: `
        + `that kernel's error amplified)${ids(rs)}; `).join('')
      + `${marginal} within 10 times the bound (perhaps float32 rounding)`);
  }
  const outside = records.reduce((s, r) => s + (r.outOfRange ?? 0), 0);
  const narrowed = records.filter((r) => r.narrowed && (r.class === 'agree' || r.class === 'wrong'));
  if (outside) lines.push(`  ${outside} assignments were left out: outside the sizes their traced model holds for (traced.symbols; a minimum of 1 leaves size 0 out)`);
  const answering = records.filter((r) => r.narrowedAnswers);
  lines.push(`  narrowed where eager answers: ${answering.length} models${answering.length ? `: ${answering.slice(0, 10).map((r) => `${r.id} at ${r.narrowedAnswers[0]}`).join('; ')}` : ''}`);
  const unexplained = records.filter((r) => r.unexplained);
  lines.push(`  narrowed with no reason (narrowedBy null): ${unexplained.length} models${unexplained.length ? `: ${unexplained.slice(0, 10).map((r) => `${r.id} ${r.unexplained[0]}`).join('; ')}` : ''}`);
  if (narrowed.length) {
    const by = new Map();
    for (const r of narrowed) for (const t of r.narrowed) {
      const call = /\((\S+) \(call \d+\)/.exec(t)?.[1] ?? 'undeclared reason';
      by.set(call, (by.get(call) ?? 0) + 1);
    }
    lines.push(`  narrowed: ${narrowed.length} agreeing or wrong models hold for fewer sizes than their symbols declare, narrowed by `
      + `${[...by].sort((a, b) => b[1] - a[1]).map(([c, n]) => `${c} ${n}`).join(', ')}`);
  }
  const suggested = records.filter((r) => r.suggestion);
  if (records.some((r) => 'suggestion' in r)) {
    const still = suggested.filter((r) => !r.suggestion.holds);
    lines.push(`  suggested declarations (--check-suggestions): ${suggested.length} of ${by.refused.length} refusals suggest one; `
      + `${suggested.length - still.length} hold, ${still.length} still refused${still.length ? `: ${still.slice(0, 10).map((r) => r.id).join(', ')}` : ''}`);
    for (const r of still.slice(0, 10)) lines.push(`    ${r.id} ${suggestionText(r.suggestion)}`);
  }
  const leaks = records.filter((r) => r.leaked);
  if (leaks.length) lines.push(`  ${leaks.length} models left tensors alive after their run (om.memory()): ${leaks.slice(0, 10).map((r) => `${r.id} (+${r.leaked})`).join(', ')}`);

  if (by.refused.length) {
    lines.push('', `refusals by kind and message (${by.refused.length}; particulars blanked):`);
    const groups = new Map();
    for (const r of by.refused) {
      const g = refusalGroup(r);
      if (!groups.has(g)) groups.set(g, []);
      groups.get(g).push(r);
    }
    for (const [g, rs] of [...groups].sort((a, b) => b[1].length - a[1].length)) {
      lines.push(`  ${pad(rs.length, 5)}  ${g}`, `         e.g. ${rs[0].id}: ${rs[0].message}`);
    }
  }

  const tags = new Map();
  for (const r of records) for (const t of r.tags ?? []) {
    if (!tags.has(t)) tags.set(t, Object.fromEntries(CLASSES.map((k) => [k, 0])));
    tags.get(t)[r.class]++;
  }
  if (tags.size) {
    lines.push('', 'by tag (models that use it: agree / refused / wrong / crash):');
    for (const [t, n] of [...tags].sort((a, b) => b[1].wrong + b[1].crash - (a[1].wrong + a[1].crash) || a[0].localeCompare(b[0]))) {
      lines.push(`  ${t.padEnd(24)} ${pad(n.agree, 5)} ${pad(n.refused, 5)} ${pad(n.wrong, 5)} ${pad(n.crash, 5)}`);
    }
  }

  const failing = records.filter((r) => FAILING.includes(r.class));
  if (failing.length) {
    lines.push('', `failing models (${failing.length}${failing.length > maxFailures ? `, the first ${maxFailures} shown` : ''}):`);
    for (const r of failing.slice(0, maxFailures)) {
      const also = r.failures?.length > 1 ? ` (fails at ${r.failures.length} assignments: ${r.failures.slice(0, 6).join('; ')}${r.failures.length > 6 ? '; ...' : ''})` : '';
      const marginal = r.ratio < 10 ? ` (marginal: ${r.ratio.toFixed(1)} times the bound, perhaps float32 rounding)` : '';
      const holds = r.narrowed ? `    the traced model holds for ${r.narrowed.join(', ')}\n` : '';
      lines.push('', `--- ${r.id} ${r.class} at ${r.at ?? '?'}${also}${marginal}`, `${holds}    ${r.message}`, render(caseOf(r.id, options)));
      const s = shrunk.get(r.id);
      if (s) lines.push(`--- ${r.id} shrunk (${s.evals} runs): ${s.record.class} at ${s.record.at}: ${s.record.message}`, s.source);
    }
  }
  return lines.join('\n');
}
