// js/index.d.ts against the package as it runs: every declared value (function, class, const,
// namespace) exists, and every public export, Tensor method or property, and method of an
// exported class is declared, both ways, recursively through om.nn, om.nn.functional, om.optim
// and om.safetensors. The declarations are read with the TypeScript compiler (its checker merges
// the namespace blocks and inherited members as a user's editor does). Needs no wasm: the exports
// and the installed Tensor methods exist once the module is imported.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import * as om from '../../js/index.js';

const DTS = fileURLToPath(new URL('../../js/index.d.ts', import.meta.url));

/** The module symbol of a declaration file, with its checker. */
function declarations(file) {
  const program = ts.createProgram([file], { noEmit: true, types: [], lib: ['lib.es2022.d.ts'] });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  return { checker, symbol: checker.getSymbolAtLocation(source) };
}

const isValue = (s) => (s.flags & ts.SymbolFlags.Value) !== 0;
const isNamespace = (s) => (s.flags & ts.SymbolFlags.ValueModule) !== 0;
const isClass = (s) => (s.flags & ts.SymbolFlags.Class) !== 0;

const BUILTIN = new Set([Object.prototype, Error.prototype]);

/** Public names along a class's prototype chain up to a built-in one (Error's are the lib's
 *  business): methods and accessors, no symbols, no #private. */
function runtimeMembers(cls) {
  const names = new Set();
  for (let p = cls.prototype; p && !BUILTIN.has(p); p = Object.getPrototypeOf(p)) {
    for (const k of Object.getOwnPropertyNames(p)) if (k !== 'constructor' && !k.startsWith('_')) names.add(k);
  }
  return names;
}

/**
 * Where the declarations and the runtime disagree, one line each: "om.x is declared but does not
 * exist", "om.y exists but is not declared", and the same for members ("om.Tensor#z"). Instance
 * fields (declared properties set by constructors, not on the prototype) are checked only one
 * way for classes other than Tensor, whose state is all accessors.
 */
export function drift(file, runtime, prefix = 'om') {
  const { checker, symbol } = declarations(file);
  const out = [];
  const walk = (sym, value, where) => {
    // an export under another name (`export { variance as var }`: var is a reserved word) is an alias
    const resolved = (s) => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s);
    const declared = new Map(checker.getExportsOfModule(sym).map((s) => [s.name, resolved(s)]).filter(([, s]) => isValue(s)));
    const real = Object.keys(value).filter((k) => k !== 'default');
    for (const name of declared.keys()) if (!(name in value)) out.push(`${where}.${name} is declared but does not exist`);
    for (const name of real) if (!declared.has(name)) out.push(`${where}.${name} exists but is not declared`);
    for (const [name, s] of declared) {
      const v = value[name];
      if (v === undefined) continue;
      if (isNamespace(s) && !isClass(s)) walk(s, v, `${where}.${name}`);
      else if (isClass(s) && typeof v === 'function') members(s, v, `${where}.${name}`);
    }
  };
  const members = (s, cls, where) => {
    const type = checker.getDeclaredTypeOfSymbol(s);
    const declared = new Map(checker.getPropertiesOfType(type)
      .filter((p) => !p.name.startsWith('__@') && !p.name.startsWith('#'))
      .map((p) => [p.name, p]));
    const real = runtimeMembers(cls);
    const strict = cls === runtime.Tensor;
    for (const [name, p] of declared) {
      const isMethod = (p.flags & ts.SymbolFlags.Method) !== 0;
      if (!real.has(name) && (strict || isMethod)) out.push(`${where}#${name} is declared but does not exist`);
    }
    for (const name of real) if (!declared.has(name)) out.push(`${where}#${name} exists but is not declared`);
  };
  walk(symbol, runtime, prefix);
  return out;
}

test('index.d.ts declares exactly the exports, the Tensor members and the classes\' methods', () => {
  assert.deepEqual(drift(DTS, om), []);
});

test('a drift is reported both ways, naming the export, the namespace member and the method', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'om-surface-'));
  const file = path.join(dir, 'index.d.ts');
  try {
    fs.writeFileSync(file, [
      'export type Kept = number;', // types are not values: never compared
      'export function both(): void;',
      'export function ghost(): void;',
      'export class Tensor { add(): Tensor; phantom(): Tensor; readonly shape: number[]; }',
      'export namespace nn { export class Linear { forward(): void; missing(): void; } }',
    ].join('\n'));
    class Tensor { add() {} get shape() { return []; } sub() {} }
    class Linear { forward() {} extra() {} }
    const fake = { both() {}, undeclared() {}, Tensor, nn: { Linear, Hidden: class {} } };
    assert.deepEqual(drift(file, fake).sort(), [
      'om.Tensor#phantom is declared but does not exist',
      'om.Tensor#sub exists but is not declared',
      'om.ghost is declared but does not exist',
      'om.nn.Hidden exists but is not declared',
      'om.nn.Linear#extra exists but is not declared',
      'om.nn.Linear#missing is declared but does not exist',
      'om.undeclared exists but is not declared',
    ]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
