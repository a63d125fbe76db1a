// The layers of src/ point one way (docs/architecture.md, "Layers"): the core, the tensors, the
// ops and autograd, the graph IR with its ONNX reader and writer, and the tracer sit below the
// runtime (src/runtime/: sessions, plans, the ONNX op table, passes), which uses them and is used
// by none of them. Where a lower layer needs the runtime (a plan capturing the ops' calls, the
// tracer checking a rolled Loop), it defines a seam (om_capture_hook, om_graph_runner in
// src/internal.h) that the runtime fills in. This test reads the sources: a lower file that
// includes a runtime header, or names anything the runtime defines (a function, a type, a macro)
// outside comments and strings, fails it with the file, line and name.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RUNTIME = 'src/runtime';
// Every folder below the runtime, and the internal header they all include. src/onemodel.h is the
// public face of the whole library (it declares the Session's API beside the tracer's) and no layer.
const BELOW = ['src/core', 'src/tensor', 'src/ops', 'src/autograd', 'src/ir', 'src/onnx', 'src/trace'];
const sources = (dir) => readdirSync(join(ROOT, dir)).filter((f) => /\.(c|h|def)$/.test(f)).map((f) => `${dir}/${f}`);

/** C text with its comments and string and character literals blanked (newlines kept, so lines still count). */
export function code(text) {
  return text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/g,
    (m) => (m.startsWith('"') && /^"[\w/.-]+\.h"$/.test(m) ? m : m.replace(/[^\n]/g, ' ')));
}

/** The names a runtime file makes for others: functions defined without static, and the types and
 *  macros its headers declare. */
export function definedNames(file, text) {
  const c = code(text), names = new Set();
  for (const m of c.matchAll(/^(?!static\b)[A-Za-z_][\w \t*]*?\b((?:om|OM)_\w+)\s*\([^;{]*\)\s*\{/gm)) names.add(m[1]);
  if (file.endsWith('.h')) {
    for (const m of c.matchAll(/^#define\s+(OM_\w+)/gm)) names.add(m[1]);
    for (const m of c.matchAll(/\}\s*(om_\w+)\s*;/g)) names.add(m[1]);
    for (const m of c.matchAll(/^typedef\b[^;]*?\b(om_\w+)\s*;/gm)) names.add(m[1]);
  }
  return names;
}

/** Where text (a lower file) reaches the runtime: [line, what] for each runtime include and each use of a name in names. */
export function reaches(text, names) {
  const found = [], lines = code(text).split('\n');
  lines.forEach((line, i) => {
    const inc = line.match(/^\s*#\s*include\s+"(runtime\/[^"]+)"/);
    if (inc) found.push([i + 1, `#include "${inc[1]}"`]);
    for (const m of line.matchAll(/\b(?:om|OM)_\w+/g)) if (names.has(m[0])) found.push([i + 1, m[0]]);
  });
  return found;
}

const runtimeNames = () => {
  const names = new Set();
  for (const f of sources(RUNTIME)) for (const n of definedNames(f, readFileSync(join(ROOT, f), 'utf8'))) names.add(n);
  return names;
};

test('the scanner sees what the runtime defines, and a lower file that reaches it', () => {
  const names = runtimeNames();
  // the Session's public functions are defined in src/runtime/session.c, its rules' types in onnx_ops.h
  for (const n of ['om_session_create', 'om_session_run', 'om_session_release', 'om_onnx_rule', 'om_plan']) assert.ok(names.has(n), `${n} not found among the runtime's names`);
  assert.ok(!names.has('om__apply') && !names.has('om_add'), 'names of the ops taken for the runtime\'s');
  const bad = '#include "internal.h"\n#include "runtime/plan.h"\n/* om_session_run in a comment */\nstatic int f(void) {\n  const char *s = "om_session_run";\n  return om_session_run(0, 0, 0, 0, 0);\n}\n';
  assert.deepEqual(reaches(bad, names), [[2, '#include "runtime/plan.h"'], [6, 'om_session_run']]);
});

test('no file below the runtime includes a runtime header or names what the runtime defines', () => {
  const names = runtimeNames();
  const files = [...BELOW.flatMap(sources), 'src/internal.h'];
  assert.ok(files.length > 40, `${files.length} files read`);
  const found = files.flatMap((f) => reaches(readFileSync(join(ROOT, f), 'utf8'), names).map(([line, what]) => `${f}:${line}: ${what}`));
  assert.deepEqual(found, [], `files below src/runtime/ that reach it:\n${found.join('\n')}`);
});
