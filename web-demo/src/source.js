// The user's model code as the worker runs it: checked with acorn (so a syntax error has a line
// and column, which a failed dynamic import does not give), its `'onemodel'` imports pointed at
// the URL of the onemodel module the worker itself uses (one instance, one wasm memory), and an
// error's position in it read back from the error's stack.
import { parse } from 'acorn';

/**
 * A problem found in the user's code before it runs, at a place in it: kind (and name)
 * 'SyntaxError' or 'ImportError', message, line and column (1-based).
 */
export class SourceError extends Error {
  constructor(kind, message, line, column) {
    super(message);
    this.name = kind;
    this.kind = kind;
    this.line = line;
    this.column = column;
  }
}

/** The name a specifier of `import ... from` / `export ... from` takes from the module ('default' for a default import; null for a namespace). */
function importedName(spec) {
  if (spec.type === 'ImportDefaultSpecifier') return 'default';
  if (spec.type === 'ImportNamespaceSpecifier') return null;
  const id = spec.type === 'ImportSpecifier' ? spec.imported : spec.local;   // ExportSpecifier: `local` names the module's export
  return id.name ?? id.value;
}

/**
 * The code with every static `import`/`export ... from 'onemodel'` specifier replaced by
 * JSON.stringify(url). Only the string literal changes, so line numbers stay as the user wrote
 * them. Throws SourceError: kind 'SyntaxError' (with the parser's place) or 'ImportError' for any
 * other module specifier (a model file is self-contained: a Blob URL has nothing to resolve
 * relative imports against) or for a name that onemodel does not export (`exports`: a Set of the
 * names it does), which the module loader would report without a place and under the rewritten URL.
 */
export function pointImportsAt(code, url, exports) {
  let program;
  try {
    program = parse(code, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
  } catch (e) {
    if (!(e instanceof SyntaxError) || !e.loc) throw e;
    throw new SourceError('SyntaxError', e.message.replace(/ \(\d+:\d+\)$/, ''), e.loc.line, e.loc.column + 1);
  }
  const edits = [];
  for (const node of program.body) {
    const src = node.source;
    if (!src) continue; // not an import/export-from
    if (src.value !== 'onemodel') {
      throw new SourceError('ImportError',
        `a model file may import only 'onemodel' (import * as om from 'onemodel'), not ${JSON.stringify(src.value)}`,
        src.loc.start.line, src.loc.start.column + 1);
    }
    for (const spec of node.specifiers ?? []) {
      const name = importedName(spec);
      if (name !== null && !exports.has(name)) {
        throw new SourceError('ImportError',
          `'onemodel' has no export named ${JSON.stringify(name)}${name === 'default' ? " (import * as om from 'onemodel')" : ''}`,
          spec.loc.start.line, spec.loc.start.column + 1);
      }
    }
    edits.push(src);
  }
  let out = code;
  for (const src of edits.reverse()) out = out.slice(0, src.start) + JSON.stringify(url) + out.slice(src.end);
  return out;
}

/**
 * The title a model file declares, read from its text without running it: the string that
 * `export default { title: ... }` gives (a quoted string, or a template without substitutions),
 * or null when the file does not say it that way (or does not parse). The picker lists the zoo
 * by these titles; importing each file to ask would build all of its models.
 */
export function declaredTitle(code) {
  let program;
  try {
    program = parse(code, { ecmaVersion: 'latest', sourceType: 'module' });
  } catch {
    return null;
  }
  const spec = program.body.find((node) => node.type === 'ExportDefaultDeclaration')?.declaration;
  if (spec?.type !== 'ObjectExpression') return null;
  // the object's last title, unless a spread after it may replace it (as the object, when it runs)
  const at = spec.properties.findLastIndex((p) => p.type === 'SpreadElement'
    || (p.type === 'Property' && !p.computed && (p.key.name ?? p.key.value) === 'title'));
  const value = spec.properties[at]?.value;
  if (value?.type === 'Literal' && typeof value.value === 'string') return value.value;
  if (value?.type === 'TemplateLiteral' && value.expressions.length === 0) return value.quasis[0].value.cooked;
  return null;
}

/**
 * Where in the module loaded from `moduleUrl` an error was raised: the innermost stack frame in
 * that module, { line, column } (1-based), or null when the error did not pass through it.
 * Reads V8's and SpiderMonkey's/JavaScriptCore's frame formats ("at f (url:L:C)", "f@url:L:C").
 */
export function errorPlace(error, moduleUrl) {
  const stack = typeof error?.stack === 'string' ? error.stack : '';
  const at = stack.indexOf(`${moduleUrl}:`);
  if (at < 0) return null;
  const m = /^:(\d+):(\d+)/.exec(stack.slice(at + moduleUrl.length));
  return m ? { line: Number(m[1]), column: Number(m[2]) } : null;
}
