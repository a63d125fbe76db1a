// The random-model differential test of the tracer, as a command (docs/tracing.md, "Random
// models"): generates models (generator.mjs), traces each with symbolic axes, runs the .onnx in
// onnxruntime-web against the eager model at the traced sizes and at other sizes of every
// symbol (runner.mjs), and prints progress (stderr) and the report (stdout). Exits 1 when a model
// is wrong, crashes or is invalid, 2 on a usage error, else 0.
//
//   npm run fuzz -- SEED COUNT [--from I] [--jobs N] [--timeout S] [--shrink [N]] [--show N] [--without RULE,...] [--check-suggestions]
//   node tests/js/random/fuzz.mjs --case SEED:INDEX [--shrink] [--without RULE,...]   one model: print, run, shrink
//   node tests/js/random/fuzz.mjs --file model.js                 run a model's source (as printed, or edited)
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { generate, render, RULES } from './generator.mjs';
import { Pool } from './pool.mjs';
import { runBatch, formatReport, shrinkRecord, suggestionText, CLASSES, FAILING } from './batch.mjs';

const USAGE = `usage: npm run fuzz -- SEED COUNT [options]     models 0..COUNT-1 of SEED (integers >= 0)
       node tests/js/random/fuzz.mjs --case SEED:INDEX [--shrink] [--without RULE,...]
       node tests/js/random/fuzz.mjs --file model.js
options:
  --from I        start at model I (default 0)
  --jobs N        worker threads (default 1)
  --timeout S     seconds one model may take before it counts as a crash (hang) (default 60)
  --shrink [N]    shrink the first N failing models (default: all) to smaller ones that fail the same way
  --show N        print at most N failing models in the report (default: all)
  --without R,... generate without these rules (to see past a dominant failure or refusal):
                  ${RULES.join(', ')}
  --check-suggestions  trace each model refused with SymbolicShape again with the declaration its
                  message suggests, and report how many of those hold`;

function parseArgs(argv) {
  const o = { jobs: 1, timeout: 60, from: 0, shrink: 0, show: Infinity, without: [], positional: [] };
  const int = (v, what) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${what} must be a non-negative integer, got ${JSON.stringify(v)}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => { if (i + 1 >= argv.length) throw new Error(`${a} needs a value`); return argv[++i]; };
    if (a === '--from') o.from = int(next(), '--from');
    else if (a === '--jobs') o.jobs = Math.max(1, int(next(), '--jobs'));
    else if (a === '--timeout') o.timeout = int(next(), '--timeout');
    else if (a === '--show') o.show = int(next(), '--show');
    else if (a === '--shrink') o.shrink = /^\d+$/.test(argv[i + 1] ?? '') ? int(next(), '--shrink') : Infinity;
    else if (a === '--case') o.case = next();
    else if (a === '--without') o.without = next().split(',').filter(Boolean);
    else if (a === '--file') o.file = next();
    else if (a === '--check-suggestions') o.checkSuggestions = true;
    else if (a === '-h' || a === '--help') o.help = true;
    else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else o.positional.push(int(a, o.positional.length ? 'COUNT' : 'SEED'));
  }
  if (!o.help && !o.case && !o.file && o.positional.length !== 2) throw new Error('expected SEED and COUNT');
  const unknown = o.without.filter((n) => !RULES.includes(n));
  if (unknown.length) throw new Error(`--without: no rule ${unknown.join(', ')}`);
  return o;
}

const recordText = (r) => `${r.id ?? ''} ${r.class}${r.kind ? ` ${r.kind}` : ''}${r.at ? ` at ${r.at}` : ''}${r.message ? `: ${r.message}` : ''}`
  + ` (${r.checked} assignments checked, ${r.skipped} skipped, ${r.ms} ms)${r.suggestion ? `\n${suggestionText(r.suggestion)}` : ''}`
  // the batch report's "narrowed where eager answers" line, for one model too (an agreeing model may have it)
  + (r.narrowedAnswers?.length ? `\n  narrowed where eager answers: ${r.narrowedAnswers.join('; ')}` : '')
  + (r.unexplained?.length ? `\n  narrowed with no reason: ${r.unexplained.join('; ')}` : '');

/** One model: a generated case (--case) or a source file (--file); prints it and its record. */
async function runOne(o, pool) {
  let source, c = null;
  if (o.file) source = readFileSync(o.file, 'utf8');
  else {
    const m = /^(\d+):(\d+)$/.exec(o.case);
    if (!m) throw new Error(`--case takes SEED:INDEX, got ${JSON.stringify(o.case)}`);
    c = generate(Number(m[1]), Number(m[2]), { without: o.without });
    source = render(c);
  }
  console.log(source);
  const r = await pool.run(source, c ? { id: c.id, family: c.family, tags: c.tags } : { id: o.file, file: pathToFileURL(resolve(o.file)).href });
  console.log(recordText(r));
  if (r.failures?.length > 1) console.log(`  fails at: ${r.failures.join('; ')}`);
  if (c && o.shrink && FAILING.includes(r.class) && r.class !== 'invalid') {
    const s = await shrinkRecord(r, pool, { without: o.without });
    console.log(`\nshrunk (${s.evals} runs):\n${s.source}\n${recordText(s.record)}`);
  }
  return FAILING.includes(r.class) ? 1 : 0;
}

async function main(argv) {
  let o;
  try {
    o = parseArgs(argv);
  } catch (e) {
    console.error(`fuzz: ${e.message}\n${USAGE}`);
    return 2;
  }
  if (o.help) { console.log(USAGE); return 0; }
  const pool = new Pool({ workers: o.jobs, timeoutMs: o.timeout * 1000, caseOptions: { checkSuggestions: !!o.checkSuggestions } });
  try {
    if (o.case || o.file) return await runOne(o, pool);
    const [seed, count] = o.positional;
    const every = Math.max(1, Math.floor(count / 20));
    const tally = Object.fromEntries(CLASSES.map((k) => [k, 0]));
    const t0 = performance.now();
    const options = { without: o.without };
    const { records, ms } = await runBatch({
      seed, from: o.from, count, pool, options,
      onRecord: (r, done) => {
        tally[r.class]++;
        if (done % every === 0 || done === count) {
          const per = (performance.now() - t0) / done;
          console.error(`[${String(done).padStart(String(count).length)}/${count}] ${CLASSES.map((k) => `${k} ${tally[k]}`).join('  ')}  (${per.toFixed(1)} ms/model)`);
        }
      },
    });
    const shrunk = new Map();
    const failing = records.filter((r) => r.class === 'wrong' || r.class === 'crash').slice(0, o.shrink);
    for (const [k, r] of failing.entries()) {
      console.error(`shrinking ${r.id} (${k + 1}/${failing.length})`);
      shrunk.set(r.id, await shrinkRecord(r, pool, options));
    }
    console.log(formatReport({ seed, from: o.from, count, records, ms, workers: o.jobs, options, shrunk, maxFailures: o.show }));
    return records.some((r) => FAILING.includes(r.class)) ? 1 : 0;
  } finally {
    await pool.close();
  }
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (e) => {
  console.error(`fuzz: ${e?.stack ?? e}`);
  process.exitCode = 1;
});
