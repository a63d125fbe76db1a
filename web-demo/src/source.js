// The user's model code as the worker runs it: checked with acorn (so a syntax error has a line
// and column, which a failed dynamic import does not give), its `'onemodel'` imports pointed at
// the URL of the onemodel module the worker itself uses (one instance, one wasm memory), the
// modules a zoo file imports by relative URL linked the same way (each from a Blob URL of its
// own), and an error's position in it read back from the error's stack.
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

/** True for a specifier the module loader resolves against the importing module's URL ('./x', '../x', '/x'). */
const isRelative = (specifier) => /^\.{0,2}\//.test(specifier);

/** Every node of an acorn tree, depth first (the tree's own objects; `loc` has no type and is skipped). */
function* walk(node) {
  yield node;
  for (const value of Object.values(node)) {
    for (const child of Array.isArray(value) ? value : [value]) {
      if (child && typeof child.type === 'string') yield* walk(child);
    }
  }
}

/** The code parsed as a module; a syntax error is a SourceError with the parser's place. */
function parseModule(code) {
  try {
    return parse(code, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
  } catch (e) {
    if (!(e instanceof SyntaxError) || !e.loc) throw e;
    throw new SourceError('SyntaxError', e.message.replace(/ \(\d+:\d+\)$/, ''), e.loc.line, e.loc.column + 1);
  }
}

/** The string literals of a module's static `import`/`export ... from` (each an acorn Literal node), with their statements. */
const moduleSources = (program) => program.body.filter((node) => node.source).map((node) => ({ node, src: node.source }));

/**
 * The modules the code imports by a relative specifier, each { url (resolved against `base`,
 * the URL the code is served from), line, column } (1-based, the specifier's place): what the
 * page must load before the code can run from a Blob URL. Throws SourceError 'SyntaxError'.
 */
export function relativeImports(code, base) {
  return moduleSources(parseModule(code)).filter(({ src }) => isRelative(src.value))
    .map(({ src }) => ({ url: new URL(src.value, base).href, line: src.loc.start.line, column: src.loc.start.column + 1 }));
}

/**
 * The code with every static `import`/`export ... from 'onemodel'` specifier replaced by
 * JSON.stringify(url). Only string literals change, so line numbers stay as the user wrote
 * them. Throws SourceError: kind 'SyntaxError' (with the parser's place) or 'ImportError' for any
 * other module specifier or for a name that onemodel does not export (`exports`: a Set of the
 * names it does), which the module loader would report without a place and under the rewritten URL.
 *
 * Code served from a URL (`base`: a zoo file's, examples/zoo/<name>.mjs) may also import modules
 * by relative specifiers, each replaced by the URL `linked` maps its resolved URL to (the Blob URL
 * of that module, linked the same way), and its `import.meta.url` becomes `base`, so that
 * `new URL('./weights.bin', import.meta.url)` means the file beside it, as where it is served.
 * Without a base (code typed in the page: a Blob URL has nothing to resolve against) only
 * 'onemodel' is allowed.
 */
export function pointImportsAt(code, url, exports, { base = null, linked = new Map() } = {}) {
  const program = parseModule(code);
  const edits = [];
  for (const { node, src } of moduleSources(program)) {
    if (base !== null && isRelative(src.value)) {
      edits.push({ at: src, text: JSON.stringify(linked.get(new URL(src.value, base).href)) });
      continue;
    }
    if (src.value !== 'onemodel') {
      throw new SourceError('ImportError',
        base === null ? `a model file may import only 'onemodel' (import * as om from 'onemodel'), not ${JSON.stringify(src.value)}`
          : `a model file may import only 'onemodel' and modules by a relative URL ('./x.mjs', '../x.mjs'), not ${JSON.stringify(src.value)}`,
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
    edits.push({ at: src, text: JSON.stringify(url) });
  }
  if (base !== null) {
    for (const node of walk(program)) {
      const meta = node.type === 'MemberExpression' && !node.computed && node.object.type === 'MetaProperty' && node.property.name === 'url';
      if (meta && node.object.meta.name === 'import') edits.push({ at: node, text: JSON.stringify(base) });
    }
  }
  let out = code;
  for (const { at, text } of edits.sort((a, b) => b.at.start - a.at.start)) out = out.slice(0, at.start) + text + out.slice(at.end);
  return out;
}

/**
 * A model file's code served from `base`, made ready to import from a Blob URL with the modules
 * it imports by relative URLs: each of those is fetched (`fetchText(url)` -> its text), linked
 * the same way (its own relative imports first, each module once) and given a URL by
 * `moduleUrl(code, url)` (the page: a Blob URL). Resolves to { code (pointImportsAt's), modules
 * ([url, the URL moduleUrl gave], dependencies first) }. Without a base, pointImportsAt alone.
 * A module that cannot be fetched or linked, or an import cycle, is a SourceError 'ImportError'
 * at the import in the file that names it, its message naming the module (and its own place).
 */
export async function linkModelCode(code, { url, exports, base = null, fetchText, moduleUrl }) {
  const linked = new Map();   // module URL -> the URL it is imported from, once linked
  const linking = new Set();  // the modules being linked (a cycle comes back to one)
  const modules = [];
  async function link(text, at) {
    if (at !== null) {
      for (const dep of relativeImports(text, at)) {
        if (linked.has(dep.url)) continue;
        const fail = (message) => new SourceError('ImportError', `cannot import ${dep.url}: ${message}`, dep.line, dep.column);
        if (linking.has(dep.url)) throw fail('an import cycle (a model file\'s modules must import each other in one direction)');
        linking.add(dep.url);
        let depText;
        try {
          depText = await fetchText(dep.url);
        } catch (e) {
          throw fail(e?.message ?? String(e));
        }
        let depCode;
        try {
          depCode = await link(depText, dep.url);
        } catch (e) {
          if (!(e instanceof SourceError)) throw e;
          throw fail(`${e.kind}: ${e.message}${e.line ? ` (${dep.url}:${e.line}:${e.column})` : ''}`);
        }
        const depUrl = moduleUrl(depCode, dep.url);
        linked.set(dep.url, depUrl);
        modules.push([dep.url, depUrl]);
      }
    }
    return pointImportsAt(text, url, exports, { base: at, linked });
  }
  return { code: await link(code, base), modules };
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
