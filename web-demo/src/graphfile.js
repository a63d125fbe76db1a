// Reads a model file's graph for the graph view: an .onnx (a ModelProto, protobuf's wire format,
// read from onnx.proto's field numbers) or an .om (the library format v1 to v3, docs/format.md;
// v2 adds initializers' aliases, v3 symbols' branches).
// Only the structure is read (nodes, attributes, values' names, dtypes and shapes, initializers'
// shapes and aliases), never the weights; a small tensor attribute (a Constant's value) keeps its
// first elements.
//
//   readGraph(bytes) -> { format: 'onnx' | 'om', inputs: [{ name, dtype, shape, example? (an .om's:
//     the traced sizes) }], outputs, initializers: [{ name, dtype, shape, aliases (the other
//     state-dict names it holds: tied weights, equal contents the tracer stored once) }],
//     values: { name: { dtype, shape } } (every value whose shape the file gives: all of an .om's,
//     an .onnx's inputs, outputs, initializers and value_info), nodes: [{ name, opType, domain,
//     inputs (names, '' for an omitted input), outputs, attributes: [{ name, value }] }],
//     constants: { name: { dtype, shape, values (its first elements, null when not read), node (the
//     Constant node's name) } } }
//
// An .onnx's Constant nodes (what torch.onnx.export writes for every shape argument: GPT-2's block
// has over a hundred) are read as constants, not nodes: the view lists them inside the box that
// reads them, as it lists weights, instead of drawing a box each. A Constant whose value is a graph
// output stays a node (an output needs a box to come from).
//
// A shape lists sizes, a symbolic dim as its name ('batch', 'floor((h+1)/2)'), an unknown one as '?'.
// Bytes that are neither format, or that end inside an item, throw OmError Format; so does an .om
// the library's reader refuses for its structure (a value defined twice or read before it is
// defined, a state-dict name held twice, an empty alias, a NUL in a name, bytes after the last item),
// so that the page never shows a graph the Session will not open, and an .onnx whose
// onemodel.alias.* metadata entries (docs/tracing.md) break the same rules for aliases or name no
// initializer (the Session ignores those entries; the page would show the weights by wrong names).
import { OmError } from 'onemodel';

const ONNX_DTYPES = { 1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64', 8: 'string', 9: 'bool', 10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64', 16: 'bfloat16' };
const OM_DTYPES = ['float32', 'int64', 'bool'];
const PREVIEW = 16;   // elements of a tensor attribute kept for the inspector
const utf8 = new TextDecoder();

function damaged(what) {
  return new OmError('Format', `open: the file is damaged or not a model (${what})`);
}

// ---- protobuf's wire format ---------------------------------------------------------------------

/**
 * Reads the fields of the message in bytes[start, end): fn(field, wireType, reader) per field.
 * A field read as another wire type than its own is Format (as protobuf-c refuses it), not read
 * across the fields after it.
 */
class Pb {
  constructor(bytes, start = 0, end = bytes.length) {
    this.b = bytes;
    this.at = start;
    this.end = end;
    this.wire = null;   // the wire type of the field each() is at; null: a bare value (a packed list's)
  }

  /** Throws Format unless the field being read is of wire type w. */
  as(w) {
    if (this.wire !== null && this.wire !== w) throw damaged(`a field of wire type ${this.wire} read as wire type ${w}`);
  }

  /** A varint as a BigInt (int64 fields: a negative value is ten bytes). */
  big() {
    this.as(0);
    let v = 0n, shift = 0n;
    for (;;) {
      if (this.at >= this.end || shift > 63n) throw damaged('a varint runs past its message');
      const byte = this.b[this.at++];
      v |= BigInt(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return BigInt.asIntN(64, v);
      shift += 7n;
    }
  }

  /** A varint that is a size, a tag or an enum: a safe integer. */
  num() {
    const v = this.big();
    if (v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER)) throw damaged('a size out of range');
    return Number(v);
  }

  /** A length-delimited field's bounds, checked against the message's. */
  span() {
    this.as(2);
    this.wire = null;   // its length is a bare varint
    const n = this.num();
    if (n > this.end - this.at) throw damaged('a field runs past its message');
    const start = this.at;
    this.at += n;
    return [start, this.at];
  }

  sub() { const [s, e] = this.span(); return new Pb(this.b, s, e); }
  str() { const [s, e] = this.span(); return utf8.decode(this.b.subarray(s, e)); }

  f32() {
    this.as(5);
    if (this.end - this.at < 4) throw damaged('a float runs past its message');
    const v = new DataView(this.b.buffer, this.b.byteOffset + this.at, 4).getFloat32(0, true);
    this.at += 4;
    return v;
  }

  skip(wire) {
    this.wire = wire;
    if (wire === 0) this.big();
    else if (wire === 1) this.at += 8;
    else if (wire === 2) this.span();
    else if (wire === 5) this.at += 4;
    else throw damaged(`wire type ${wire}`);
    if (this.at > this.end) throw damaged('a field runs past its message');
    this.wire = null;
  }

  /** Calls fn(field, wire) for each field; fn reads the value or returns false to skip it. */
  each(fn) {
    while (this.at < this.end) {
      this.wire = null;
      const tag = this.num(), field = Math.floor(tag / 8), wire = tag & 7;
      this.wire = wire;
      if (fn(field, wire) === false) this.skip(wire);
    }
    this.wire = null;
  }

  /** A repeated scalar field, packed (wire 2) or one value (read). */
  repeated(wire, read, into) {
    if (wire !== 2) return into.push(read(this));
    const p = this.sub();
    while (p.at < p.end) into.push(read(p));
  }
}

const int64 = (p) => Number(p.big());
const float = (p) => p.f32();

/** A TensorProto: { name, dtype, shape, values? (its first elements) }. */
function onnxTensor(p) {
  const t = { name: '', dtype: 'float32', shape: [], values: null };
  let raw = null;
  const data = [];
  p.each((f, w) => {
    if (f === 1) p.repeated(w, int64, t.shape);
    else if (f === 2) t.dtype = ONNX_DTYPES[p.num()] ?? 'unknown';
    else if (f === 8) t.name = p.str();
    else if (f === 9) raw = p.span();
    else if (f === 4 && data.length < PREVIEW) p.repeated(w, float, data);
    else if ((f === 5 || f === 7) && data.length < PREVIEW) p.repeated(w, int64, data);
    else return false;
  });
  const count = t.shape.reduce((a, b) => a * b, 1);
  if (count <= PREVIEW) t.values = raw ? rawValues(p.b, raw, t.dtype, count) : data.length ? data.slice(0, count) : null;
  return t;
}

/** The elements of a small raw_data (float32, int64, int32 and bool), else null. */
function rawValues(bytes, [start, end], dtype, count) {
  const size = { float32: 4, int64: 8, int32: 4, bool: 1 }[dtype];
  if (!size || end - start !== size * count) return null;
  const v = new DataView(bytes.buffer, bytes.byteOffset + start, end - start);
  return Array.from({ length: count }, (_, i) => (dtype === 'float32' ? v.getFloat32(i * 4, true)
    : dtype === 'int64' ? Number(v.getBigInt64(i * 8, true)) : dtype === 'int32' ? v.getInt32(i * 4, true) : v.getUint8(i)));
}

/** A ValueInfoProto: { name, dtype, shape } (shape null when the file gives none). */
function onnxValueInfo(p) {
  const v = { name: '', dtype: 'unknown', shape: null };
  p.each((f) => {
    if (f === 1) return void (v.name = p.str());
    if (f !== 2) return false;
    const type = p.sub();   // TypeProto: tensor_type (1) is TypeProto.Tensor
    type.each((tf) => {
      if (tf !== 1) return false;
      const tt = type.sub();
      tt.each((ef) => {
        if (ef === 1) v.dtype = ONNX_DTYPES[tt.num()] ?? 'unknown';
        else if (ef === 2) v.shape = onnxShape(tt.sub());
        else return false;
      });
    });
  });
  return v;
}

/** A TensorShapeProto: each dim's size, its name, or '?'. */
function onnxShape(p) {
  const shape = [];
  p.each((f) => {
    if (f !== 1) return false;
    const dim = p.sub();
    let d = '?';
    dim.each((df) => {
      if (df === 1) d = int64(dim);
      else if (df === 2) d = dim.str() || '?';
      else return false;
    });
    shape.push(d);
  });
  return shape;
}

/** An AttributeProto: { name, value } (a number, string, array, or a tensor's { dtype, shape, values }). */
function onnxAttribute(p) {
  const a = { name: '', value: null };
  const list = [];
  p.each((f, w) => {
    if (f === 1) a.name = p.str();
    else if (f === 2) a.value = p.f32();
    else if (f === 3) a.value = int64(p);
    else if (f === 4) a.value = p.str();
    else if (f === 5) a.value = onnxTensor(p.sub());
    else if (f === 6) { p.span(); a.value = 'a graph'; }
    else if (f === 7) p.repeated(w, float, list);
    else if (f === 8) p.repeated(w, int64, list);
    else if (f === 9) list.push(p.str());
    else return false;
  });
  if (a.value === null) a.value = list;
  return a;
}

function onnxNode(p) {
  const n = { name: '', opType: '', domain: '', inputs: [], outputs: [], attributes: [] };
  p.each((f) => {
    if (f === 1) n.inputs.push(p.str());
    else if (f === 2) n.outputs.push(p.str());
    else if (f === 3) n.name = p.str();
    else if (f === 4) n.opType = p.str();
    else if (f === 5) n.attributes.push(onnxAttribute(p.sub()));
    else if (f === 7) n.domain = p.str();
    else return false;
  });
  return n;
}

/** A StringStringEntryProto: [key, value]. */
function onnxEntry(p) {
  const e = ['', ''];
  p.each((f) => {
    if (f === 1 || f === 2) e[f - 1] = p.str();
    else return false;
  });
  return e;
}

const ALIAS = 'onemodel.alias.';   // metadata_props key of a second name an initializer holds

function readOnnx(bytes) {
  const model = new Pb(bytes);
  let graph = null;
  const aliases = [];   // [the alias, the initializer's name] per onemodel.alias.* entry, in the file's order
  model.each((f, w) => {
    if (f === 14 && w === 2) {
      const [key, value] = onnxEntry(model.sub());
      if (key.startsWith(ALIAS)) aliases.push([key.slice(ALIAS.length), value]);
      return;
    }
    if (f !== 7 || w !== 2) return false;
    graph = model.sub();
  });
  if (!graph) throw damaged('no graph: neither an .onnx nor an .om');
  const g = { format: 'onnx', inputs: [], outputs: [], initializers: [], values: {}, nodes: [] };
  const infos = [];
  graph.each((f) => {
    if (f === 1) g.nodes.push(onnxNode(graph.sub()));
    else if (f === 5) {
      const { name, dtype, shape } = onnxTensor(graph.sub());
      g.initializers.push({ name, dtype, shape, aliases: [] });
    } else if (f === 11) g.inputs.push(onnxValueInfo(graph.sub()));
    else if (f === 12) g.outputs.push(onnxValueInfo(graph.sub()));
    else if (f === 13) infos.push(onnxValueInfo(graph.sub()));
    else return false;
  });
  // the aliases go to their initializers, checked as the .om's are: the page shows each weight
  // under its module's name, so a name held twice, empty or naming nothing would mislead
  const holders = new Map(g.initializers.map((i) => [i.name, i]));
  for (const [alias, holder] of aliases) {
    if (alias.includes('\0')) throw damaged(`the alias of '${holder}' in metadata key '${ALIAS}${alias.replaceAll('\0', '\\0')}' holds a NUL`);
    if (!holders.has(holder)) throw damaged(`metadata key '${ALIAS}${alias}' names '${holder}', which is no initializer`);
    holders.get(holder).aliases.push(alias);
  }
  heldOnce(g.initializers);
  // an initializer listed among the inputs (IR < 4 files) is a weight, not an input to feed
  const inits = new Set(holders.keys());
  g.inputs = g.inputs.filter((v) => !inits.has(v.name));
  for (const v of [...g.inputs, ...g.outputs, ...infos]) if (v.shape) g.values[v.name] = { dtype: v.dtype, shape: v.shape };
  for (const i of g.initializers) g.values[i.name] = { dtype: i.dtype, shape: i.shape };
  for (const v of [...g.inputs, ...g.outputs]) v.shape ??= [];
  foldConstants(g);
  return g;
}

// A Constant's value attribute as a tensor: value (a TensorProto), or value_float(s)/value_int(s)
const CONSTANT_VALUE = {
  value: (a) => a,
  value_float: (a) => ({ dtype: 'float32', shape: [], values: [a] }),
  value_int: (a) => ({ dtype: 'int64', shape: [], values: [a] }),
  value_floats: (a) => ({ dtype: 'float32', shape: [a.length], values: a.slice(0, PREVIEW) }),
  value_ints: (a) => ({ dtype: 'int64', shape: [a.length], values: a.slice(0, PREVIEW) }),
};

/** Moves g's Constant nodes (no inputs, a value attribute, an output no graph output is) to g.constants. */
function foldConstants(g) {
  const outputs = new Set(g.outputs.map((v) => v.name));
  g.constants = {};
  g.nodes = g.nodes.filter((n) => {
    const [a] = n.attributes;
    const read = n.opType === 'Constant' && n.domain === '' && n.attributes.length === 1 && CONSTANT_VALUE[a.name];
    if (!read || n.inputs.length || n.outputs.length !== 1 || outputs.has(n.outputs[0])) return true;
    const { dtype, shape, values } = read(a.value);
    g.constants[n.outputs[0]] = { dtype, shape, values: values ?? null, node: n.name };
    g.values[n.outputs[0]] = { dtype, shape };
    return false;
  });
}

// ---- the library format v1 to v3 (docs/format.md) ---------------------------------------------

/** Little-endian reads of the graph section, each checked against its end. */
class Om {
  constructor(bytes, start, end, version) {
    this.version = version;
    this.v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.b = bytes;
    this.at = start;
    this.end = end;
    // every tensor's place in the data section, at any depth (openOm checks them and moves the
    // ones it keeps): { at (where its offset is in bytes), dtype, shape, init (a top-level
    // initializer's entry, else null) }
    this.places = [];
    this.top = null;   // where the top-level graph's sections are in bytes (omBody)
  }

  need(n, what) {
    if (n > this.end - this.at) throw damaged(`${what} runs past the graph section`);
    const at = this.at;
    this.at += n;
    return at;
  }

  u8(what) { return this.v.getUint8(this.need(1, what)); }
  u32(what) { return this.v.getUint32(this.need(4, what), true); }
  i64(what) { return Number(this.v.getBigInt64(this.need(8, what), true)); }
  f32(what) { return this.v.getFloat32(this.need(4, what), true); }
  str(what) {
    const n = this.u32(what), at = this.need(n, what), bytes = this.b.subarray(at, at + n);
    if (bytes.includes(0)) throw damaged(`${what} holds a NUL`);   // names are C strings to the library
    return utf8.decode(bytes);
  }

  /** A count of items of at least `size` bytes each, checked against the bytes left. */
  count(size, what) {
    const n = this.u32(what);
    if (n * size > this.end - this.at) throw damaged(`${what}: ${n} do not fit in the graph section`);
    return n;
  }

  /** A value id, checked against the value table: its value (null: an omitted input). */
  id(values, what) {
    const id = this.u32(what);
    if (id === 0xffffffff) return null;
    if (id >= values.length) throw damaged(`${what}: value ${id} of ${values.length}`);
    return values[id];
  }

  /** A counted list of value ids: their values (null for an omitted input). */
  ids(values, what) {
    return Array.from({ length: this.count(4, what) }, () => this.id(values, what));
  }
}

function omAttribute(r) {
  const name = r.str('an attribute name');
  const type = r.u8('an attribute type');
  const list = (read) => Array.from({ length: r.count(1, 'an attribute list') }, read);
  switch (type) {
    case 0: return { name, value: r.i64(name) };
    case 1: return { name, value: r.f32(name) };
    case 2: return { name, value: list(() => r.i64(name)) };
    case 3: return { name, value: list(() => r.f32(name)) };
    case 4: return { name, value: r.str(name) };
    case 5: {
      const dtype = OM_DTYPES[r.u8(name)] ?? 'unknown';
      const shape = list(() => r.i64(name));
      r.places.push({ at: r.at, dtype, shape, init: null });
      r.i64(name);
      r.i64(name);
      return { name, value: { dtype, shape, values: null } };
    }
    case 6: return { name, value: null };
    case 7: omBody(r, true); return { name, value: 'a graph' };   // an If's branch: read past, shown as the .onnx's are
    default: throw damaged(`attribute type ${type}`);
  }
}

/**
 * Throws Format unless every state-dict name the initializers hold (names and aliases) is held
 * once and no alias is empty, as the library's .om reader checks (src/ir/format.c, whose messages
 * these are).
 */
function heldOnce(initializers) {
  const holder = new Map();
  for (const { name, aliases } of initializers) {
    for (const [i, held] of [name, ...aliases].entries()) {
      if (i && held === '') throw damaged(`initializer '${name}' has an empty alias`);
      if (holder.get(held) === name) throw damaged(`initializer '${name}' holds the state-dict name '${held}' twice`);
      if (holder.has(held)) throw damaged(`the state-dict name '${held}' is held by initializers '${holder.get(held)}' and '${name}'`);
      holder.set(held, name);
    }
  }
}

/** A graph body as docs/format.md lays it out (a subgraph's with its captured values): values to nodes. */
function omBody(r, sub) {
  const top = sub ? null : (r.top = { values: r.at });
  const values = Array.from({ length: r.count(6, 'values') }, () => {
    const name = r.str('a value name');
    const dtype = OM_DTYPES[r.u8('a dtype')], rank = r.u8('a rank');
    if (!dtype || rank > 8) throw damaged(`value '${name}' has an unknown dtype or ${rank} dims`);
    const example = [], shape = [];
    for (let d = rank; d > 0; d--) {
      example.push(r.i64('a size'));
      shape.push(r.str('an axis name') || example.at(-1));
    }
    return { name, dtype, shape, example };
  });
  if (top) top.valuesEnd = r.at;
  // what the library's reader checks of the values' definitions: each defined once (a captured
  // value, an input, an initializer or a node's output), and read by a node only after that
  const defined = new Set();
  const define = (v, what) => {
    if (!v || defined.has(v)) throw damaged(`${what} ${v ? `'${v.name}' is defined twice` : 'is omitted'}`);
    defined.add(v);
    return v;
  };
  // The tracer names the dims of each call's outputs, not of the values a call's lowering makes
  // on the way (a Linear's MatMul before its bias, an LSTM's Y before its reshape): those hold the
  // traced run's sizes alone, and a batch traced at 3 would read as a fixed 3. So a value with no
  // symbolic dim made by a node that reads a symbolic one shows each dim of a size some symbolic
  // dim of the graph had in the traced run as unknown ('?'), not as fixed.
  const symbolic = (v) => v.shape.some((d) => typeof d === 'string');
  const tracedSizes = new Set(values.flatMap((v) => v.example.filter((_, k) => typeof v.shape[k] === 'string')));
  const unnamed = (ins, outs) => {
    if (ins.some((v) => v && symbolic(v))) for (const v of outs) if (!symbolic(v)) v.shape = v.shape.map((d) => (tracedSizes.has(d) ? '?' : d));
  };
  if (sub) for (let c = r.count(8, 'captured values'); c > 0; c--) define(r.id(values, 'a captured value'), 'a captured value'), r.u32('a captured value');
  const inputs = r.ids(values, 'inputs').map((v) => define(v, 'an input'));
  const outputs = r.ids(values, 'outputs');
  if (top) top.inits = r.at;
  const index = top && new Map(values.map((v, i) => [v, i]));
  const initializers = Array.from({ length: r.count(r.version === 1 ? 20 : 24, 'initializers') }, () => {
    const start = r.at, v = define(r.id(values, 'an initializer'), 'an initializer');
    const place = { at: r.at, dtype: v.dtype, shape: v.example, init: top && { start, end: 0, value: index.get(v), name: v.name } };
    r.places.push(place);
    r.i64('an initializer offset');
    r.i64('an initializer size');
    const aliases = r.version === 1 ? [] : Array.from({ length: r.count(4, 'aliases') }, () => r.str('an alias'));
    if (place.init) place.init.end = r.at;
    return { ...v, aliases };
  });
  if (top) top.nodes = r.at;
  heldOnce(initializers);
  const nodes = Array.from({ length: r.count(20, 'nodes') }, () => {
    const opType = r.str('an op type'), name = r.str('a node name');
    if (!opType) throw damaged(`node '${name}' has no op type`);
    const ins = r.ids(values, 'node inputs');
    for (const v of ins) if (v && !defined.has(v)) throw damaged(`node '${name}' reads '${v.name}' before anything defines it`);
    const outs = r.ids(values, 'node outputs').map((v) => define(v, `an output of node '${name}'`));
    const attributes = Array.from({ length: r.count(5, 'attributes') }, () => omAttribute(r));
    unnamed(ins, outs);
    return { opType, name, domain: '', inputs: ins.map((v) => v?.name ?? ''), outputs: outs.map((v) => v.name), attributes };
  });
  if (top) top.nodesEnd = r.at;
  for (const v of outputs) if (v && !defined.has(v)) throw damaged(`graph output '${v.name}' is defined by nothing`);
  return { values, inputs, outputs, initializers, nodes };
}

/** The values of ids, none omitted. */
function present(ids, what) {
  if (ids.includes(null)) throw damaged(what);
  return ids;
}

function readOm(bytes) {
  return parseOm(bytes, bytes.length).graph;
}

/**
 * The graph of an .om of `fileSize` bytes whose first bytes (its header and graph section, or
 * less when the file is damaged) are `bytes`: { graph (readOm's), reader (the Om that read it:
 * its places and top) }.
 */
function parseOm(bytes, fileSize) {
  if (fileSize < 64) throw damaged('an .om header is 64 bytes');
  const head = new DataView(bytes.buffer, bytes.byteOffset, 64);
  const version = head.getUint32(8, true);
  if (version < 1 || version > 3) throw new OmError('Unsupported', `open: an .om of version ${version}; this page reads versions 1 to 3`);
  const size = head.getBigUint64(16, true);
  if (size > BigInt(fileSize - 64)) throw damaged('the graph section runs past the file');
  const r = new Om(bytes, 64, 64 + Number(size), version);
  const { values, inputs, outputs, initializers, nodes } = omBody(r, false);
  for (let k = r.count(36, 'symbols'); k > 0; k--) {
    r.str('a symbol name');
    for (const what of ['a multiple', 'a minimum', 'a maximum']) r.i64(what);
    r.str('a reason');
    r.str('a reason');
    if (r.version >= 3) { // the sizes its pieces hold: pairs of a minimum and a maximum
      for (let q = r.count(16, 'branches'); q > 0; q--) for (const what of ['a branch minimum', 'a branch maximum']) r.i64(what);
    }
  }
  if (r.at !== r.end) throw damaged(`${r.end - r.at} bytes after the graph section's last item`);
  const graph = {
    format: 'om',
    inputs,
    outputs: present(outputs, 'an omitted graph output').map(({ name, dtype, shape }) => ({ name, dtype, shape })),
    initializers: initializers.map(({ name, dtype, shape, aliases }) => ({ name, dtype, shape, aliases })),
    values: Object.fromEntries(values.map(({ name, dtype, shape }) => [name, { dtype, shape }])),
    nodes,
    constants: {},
  };
  return { graph, reader: r };
}

// ---- an .onnx without its weights, for the Session's shape inference ----------------------------

const LARGE = 4096;   // bytes of float32 data from which an initializer is a weight the shapes never read

/** A non-negative integer as a protobuf varint. */
function varintBytes(v) {
  const out = [];
  for (; v >= 0x80; v = Math.floor(v / 128)) out.push((v % 128) | 0x80);
  out.push(v);
  return Uint8Array.from(out);
}

/** A protobuf field's bytes: its tag, then a varint (wire 0), or the length and bytes of value (wire 2). */
const field = (number, wire, value) => concat([varintBytes(number * 8 + wire), ...(wire === 0 ? [varintBytes(value)] : [varintBytes(value.length), value])]);

const concat = (parts) => {
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) all.set(p, at), at += p.length;
  return all;
};
const text = (s) => new TextEncoder().encode(s);

/**
 * The .onnx `bytes` with each large float32 initializer (LARGE bytes or more of raw data, not also
 * a graph input) made by an Expand of one zero to its shape instead of stored: the graph the
 * Session plans is the same (every value's dtype and shape; the shapes are never computed from a
 * weight's values, and the small initializers a Reshape or a Slice reads stay), without its
 * weights, so opening a file of hundreds of MB copies them into wasm memory and decodes them
 * there only when the file is run. (An Expand is a view: each plan makes it without allocating
 * the weight, which a ConstantOfShape would fill at every plan.) An .om, or an .onnx with no such initializer, is returned as it
 * is. `graph` is readGraph(bytes), whose names the new values' avoid.
 */
export function withoutWeights(bytes, graph, left = new Map()) {
  if (graph.format !== 'onnx') return bytes;
  const names = new Set([...graph.inputs, ...graph.outputs, ...graph.initializers].map((v) => v.name));
  for (const n of graph.nodes) for (const v of [...n.inputs, ...n.outputs]) names.add(v);
  for (const v of Object.keys(graph.values)) names.add(v);
  const fresh = (base) => {
    let name = base;
    while (names.has(name)) name = `_${name}`;
    names.add(name);
    return name;
  };
  let changed = false;
  const model = fields(new Pb(bytes)).map((mf) => {
    if (mf.f !== 7 || mf.w !== 2) return mf.bytes;
    const kept = [], made = [], all = fields(mf.sub());
    // the file's own inputs (readGraph's leave out an initializer listed among them, IR < 4: a
    // value a feed may replace, which must stay an initializer)
    const inputs = new Set(all.filter((gf) => gf.f === 11 && gf.w === 2).map((gf) => onnxValueInfo(gf.sub()).name));
    let zero = null;   // the float32 scalar every weight is expanded from
    for (const gf of all) {
      const t = gf.f === 5 && gf.w === 2 ? initializerHead(gf.sub()) : null;
      if (!t || t.dtype !== 1 || (t.raw < LARGE && !left.has(t.name)) || inputs.has(t.name)) {
        kept.push(gf.bytes);
        continue;
      }
      if (!zero) {
        zero = fresh('zero');
        made.push(field(5, 2, concat([field(2, 0, 1), field(8, 2, text(zero)), field(9, 2, new Uint8Array(4))])));
      }
      const shape = fresh(`${t.name}.shape`);
      const dims = new Uint8Array(new BigInt64Array(t.dims.map(BigInt)).buffer);
      made.push(field(5, 2, concat([field(1, 0, t.dims.length), field(2, 0, 7), field(8, 2, text(shape)), field(9, 2, dims)])));
      made.push(field(1, 2, concat([field(1, 2, text(zero)), field(1, 2, text(shape)), field(2, 2, text(t.name)),
        field(3, 2, text(fresh(`${t.name}.expand`))), field(4, 2, text('Expand'))])));
    }
    if (!made.length) return mf.bytes;
    changed = true;
    return field(7, 2, concat([...kept, ...made]));   // a node listed after its readers: the Session orders the nodes
  });
  return changed ? concat(model) : bytes;
}

/** The fields of p's message: { f, w, bytes (the whole field, tag included), sub() (a wire-2 field's message) }. */
function fields(p) {
  const out = [];
  while (p.at < p.end) {
    const start = p.at, tag = p.num(), f = Math.floor(tag / 8), w = tag & 7, value = p.at;
    p.skip(w);
    const end = p.at;
    out.push({ f, w, bytes: p.b.subarray(start, end), sub: () => new Pb(p.b, value, end).sub() });
  }
  return out;
}

/** An initializer's name, data type, dims and raw data's length (the data itself not read). */
function initializerHead(tensor) {
  const t = { name: '', dtype: 0, dims: [], raw: 0 };
  tensor.each((f, w) => {
    if (f === 1) tensor.repeated(w, int64, t.dims);
    else if (f === 2) t.dtype = tensor.num();
    else if (f === 8) t.name = tensor.str();
    else if (f === 9) {
      const [a, b] = tensor.span();
      t.raw = b - a;
    } else return false;
  });
  return t;
}

const MAGIC = 'ONEMODEL';
const isOm = (bytes) => bytes.length >= 8 && utf8.decode(bytes.subarray(0, 8)) === MAGIC;

/** The graph of an .onnx or an .om (see the top of this file). bytes: a Uint8Array. */
export function readGraph(bytes) {
  return isOm(bytes) ? readOm(bytes) : readOnnx(bytes);
}

// ---- an .onnx read in pieces: its structure, not its weights' bytes -----------------------------
//
// Reading a 100 MB File into memory was the largest step of opening it, and the view reads none
// of the weights. So the walk below reads the file a piece at a time (Blob.slice) along protobuf's
// framing, down the one path where the weights are (ModelProto.graph -> GraphProto.initializer ->
// TensorProto.raw_data), and makes a skeleton: the file with the raw data of each large float32
// initializer left out (the lengths of the messages around it rewritten), every other field as it
// was. readGraph reads the skeleton as it reads the file (the initializers' names, dtypes and dims
// are all there); withoutWeights makes the Session's weightless copy from it; the whole file is
// read only to run it. Whether a raw_data is left out is known only at its graph's end (a
// TensorProto's data_type, a graph's inputs may come after it): until then it is a hole, read
// after all when it is kept. Any framing the walk does not take, it leaves to readGraph on the
// whole file (openGraph below), so a damaged file is refused with the same error as before.

const PIECE = 1 << 12;        // bytes read at first after a jump (an initializer's head is ~100 bytes)
const MAX_PIECE = 1 << 22;    // the largest piece: a long run of nodes reads in a few

/** A Blob's (a File's) bytes on demand: { size, read(start, end) -> Promise<Uint8Array> }. */
export function blobSource(blob) {
  return { size: blob.size, read: async (start, end) => new Uint8Array(await blob.slice(start, end).arrayBuffer()) };
}

/** The same over bytes in memory (tests, the fuzzer). */
export function bytesSource(bytes) {
  return { size: bytes.length, read: async (start, end) => bytes.subarray(start, end) };
}

/** A position in a source, with the piece last read around it; counts what it reads. */
class Walk {
  constructor(source, piece) {
    this.src = source;
    this.first = piece;
    this.at = 0;
    this.from = 0;                      // the piece's first byte in the file
    this.piece = new Uint8Array(0);
    this.size = piece;                  // the next piece's size: doubles while reads follow on, resets at a jump
    this.reads = 0;
    this.bytesRead = 0;
  }

  async read(start, end) {
    this.reads++;
    this.bytesRead += end - start;
    const b = await this.src.read(start, end);
    if (b.length !== end - start) throw damaged('the file changed while it was read');
    return b;
  }

  /** Makes [at, at + n) readable in the piece, n cut at end. */
  async need(n, end) {
    const to = Math.min(this.at + n, end);
    if (this.at >= this.from && to <= this.from + this.piece.length) return;
    const follows = this.at === this.from + this.piece.length;
    this.size = follows ? Math.min(this.size * 2, MAX_PIECE) : this.first;
    this.from = this.at;
    this.piece = await this.read(this.at, Math.max(to, Math.min(this.src.size, this.at + this.size)));
  }

  /** A varint as a BigInt, within end (past it: Format, which readGraph will name). */
  async varint(end) {
    await this.need(10, end);
    let v = 0n, shift = 0n;
    for (;;) {
      if (this.at >= end || shift > 63n) throw damaged('a varint runs past its message');
      const byte = this.piece[this.at++ - this.from];
      v |= BigInt(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return BigInt.asIntN(64, v);
      shift += 7n;
    }
  }

  /** A length or a tag: a safe integer. */
  async num(end) {
    const v = await this.varint(end);
    if (v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER)) throw damaged('a size out of range');
    return Number(v);
  }

  /** The bytes [start, end) of the file, from the piece when it holds them. */
  async bytes(start, end) {
    if (start >= this.from && end <= this.from + this.piece.length) return this.piece.subarray(start - this.from, end - this.from);
    return this.read(start, end);
  }

  /** Moves past a field's value of wire type w (its tag read), within end. */
  async skip(w, end) {
    const n = w === 0 ? null : w === 1 ? 8 : w === 5 ? 4 : w === 2 ? await this.num(end) : -1;
    if (n === null) return void (await this.varint(end));
    if (n < 0) throw damaged(`wire type ${w}`);
    if (n > end - this.at) throw damaged('a field runs past its message');
    this.at += n;
  }
}

/**
 * Walks the message in [walk.at, end): per field, visit(f, w, start (its tag's offset)) either
 * reads the field (to its end) and returns a part, or returns undefined for the field to be
 * copied as it is. The parts, in order: byte arrays, and what visit returned.
 */
async function walkMessage(walk, end, visit) {
  const parts = [];
  while (walk.at < end) {
    const start = walk.at, tag = await walk.num(end), f = Math.floor(tag / 8), w = tag & 7;
    const part = await visit(f, w, start);
    if (part !== undefined) {
      parts.push(part);
      continue;
    }
    await walk.skip(w, end);
    const bytes = await walk.bytes(start, walk.at), last = parts.at(-1);
    // a run of copied fields is one part (a node's fields, a graph's nodes)
    if (last?.copied && last.end === start) last.chunks.push(bytes), last.end = walk.at;
    else parts.push({ copied: true, chunks: [bytes], end: walk.at });
  }
  return parts;
}

/** A submessage field (its tag read at start, wire 2): its tag bytes and [value start, end). */
async function submessage(walk, end, start) {
  const tagEnd = walk.at, n = await walk.num(end);
  if (n > end - walk.at) throw damaged('a field runs past its message');
  return { tag: await walk.bytes(start, tagEnd), end: walk.at + n };
}

/**
 * An initializer's TensorProto: { parts, name, dtype, holes (its raw_data fields of `large` bytes
 * or more: { head (their tag and length), start, length, chunks (null while unread) }) }.
 */
async function walkTensor(walk, end, large) {
  const holes = [];
  const parts = await walkMessage(walk, end, async (f, w, start) => {
    if (f !== 9 || w !== 2) return undefined;
    const length = await walk.num(end);
    if (length > end - walk.at) throw damaged('a field runs past its message');
    const hole = { head: await walk.bytes(start, walk.at), start: walk.at, length, chunks: null };
    walk.at += length;
    if (length >= large) return holes.push(hole), hole;
    return { chunks: [hole.head, await walk.bytes(hole.start, walk.at)] };
  });
  // its name and data type as readGraph reads them (the last of each), from the fields kept
  const { name, dtype } = initializerHead(new Pb(concat(partBytes(parts))));
  return { parts, name, dtype, holes };
}

/** A GraphProto: { parts (its initializers walkTensor's), tensors, inputs (their names) }. */
async function walkGraph(walk, end, large) {
  const g = { tensors: [], inputs: new Set() };
  g.parts = await walkMessage(walk, end, async (f, w, start) => {
    if (w !== 2 || (f !== 5 && f !== 11)) return undefined;
    const { tag, end: e } = await submessage(walk, end, start);
    if (f === 5) {
      const t = await walkTensor(walk, e, large);
      g.tensors.push(t);
      return { tag, message: t };
    }
    const field = await walk.bytes(start, e);
    g.inputs.add(onnxValueInfo(new Pb(field, field.length - (e - walk.at))).name);
    walk.at = e;
    return { chunks: [field] };
  });
  return g;
}

/** The bytes of parts (walkMessage's), each submessage's length written anew. */
function partBytes(parts) {
  const out = [];
  for (const p of parts) {
    if (p.message) {
      const inner = concat(partBytes(p.message.parts));
      out.push(p.tag, varintBytes(inner.length), inner);
    } else if (p.head) {
      if (p.chunks) out.push(p.head, ...p.chunks);   // a hole kept: filled
    } else out.push(...p.chunks);
  }
  return out;
}

/**
 * The skeleton of the .onnx in source (see above): { bytes, left (Map: the name of each
 * initializer whose raw data was left out -> where it is in the file, [{ start, length }]), reads,
 * bytesRead }. `large`: raw_data of
 * fewer bytes is kept (the fuzzer leaves out small ones too); `piece`: the bytes read at first after
 * a jump.
 */
export async function scanOnnx(source, { large = LARGE, piece = PIECE } = {}) {
  const walk = new Walk(source, piece), graphs = [];
  const parts = await walkMessage(walk, source.size, async (f, w, start) => {
    if (f !== 7 || w !== 2) return undefined;
    const { tag, end } = await submessage(walk, source.size, start);
    const g = await walkGraph(walk, end, large);
    graphs.push(g);
    return { tag, message: g };
  });
  const left = new Map();
  for (const g of graphs) {
    for (const t of g.tensors) {
      if (!t.holes.length) continue;
      // what withoutWeights replaces (float32, not a graph input) stays out; the rest is read now
      if (t.dtype === 1 && !g.inputs.has(t.name)) left.set(t.name, t.holes.map(({ start, length }) => ({ start, length })));
      else for (const h of t.holes) h.chunks = [await walk.read(h.start, h.start + h.length)];
    }
  }
  return { bytes: concat(partBytes(parts)), left, reads: walk.reads, bytesRead: walk.bytesRead };
}

// ---- an .om read in pieces: its header and graph section, not its data section -----------------
//
// An .om puts its graph first and its weights after it (docs/format.md), so its structure is two
// reads: the 64-byte header, then the graph section. The Session still binds a file to infer the
// shapes, so openOm writes it one as withoutWeights writes an .onnx's: each large float32
// top-level initializer made by an Expand of one zero to its shape (a value table entry and an
// initializer for the zero and for each shape, a node per weight ahead of the others), the other
// tensors' bytes (small weights, int64 and bool tables, tensor attributes, a branch's
// initializers) read one by one and laid out anew, the graph section's hash computed again.
// What the library's reader would refuse before the graph (the header's sizes, the hash, a
// tensor's place) is left to the whole file: the page then reads it whole, so that the Session's
// error is the file's own.

const ALIGN = 64;
const aligned = (n) => Math.ceil(n / ALIGN) * ALIGN;
const OM_SIZES = { float32: 4, int64: 8, bool: 1 };
const OM_CODES = { float32: 0, int64: 1, bool: 2 };

/** FNV-1a, 64-bit, of bytes as the library computes it (docs/format.md): a BigInt. */
export function fnv1a(bytes) {
  // the prime is 2^40 + 0x1b3: h * prime = (h << 40) + h * 0x1b3, on two 32-bit halves
  let hi = 0xcbf29ce4, lo = 0x84222325;
  for (let i = 0; i < bytes.length; i++) {
    lo = (lo ^ bytes[i]) >>> 0;
    const t = lo * 0x1b3, carry = Math.floor(t / 0x100000000);
    hi = (hi * 0x1b3 + carry + ((lo << 8) >>> 0)) % 0x100000000;
    lo = t >>> 0;
  }
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/** Little-endian bytes written in order (an .om's graph section). */
class OmWriter {
  constructor() { this.parts = []; }
  raw(bytes) { this.parts.push(bytes); }
  u8(v) { this.parts.push(Uint8Array.of(v)); }
  u32(v) { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, v, true); this.parts.push(b); }
  i64(v) { const b = new Uint8Array(8); new DataView(b.buffer).setBigInt64(0, BigInt(v), true); this.parts.push(b); }
  str(s) { const b = text(s); this.u32(b.length); this.parts.push(b); }
  bytes() { return concat(this.parts); }
}

/**
 * A tensor place's offset and size (BigInt), or null where the library's reader would refuse it:
 * a size that is not its elements', a dim below 0, an offset not aligned or outside the data
 * section of dataBytes.
 */
function placeOf(head, p, dataBytes) {
  const v = new DataView(head.buffer, head.byteOffset + p.at, 16);
  const offset = v.getBigInt64(0, true), size = v.getBigInt64(8, true);
  if (!OM_SIZES[p.dtype] || p.shape.some((d) => d < 0)) return null;
  const count = p.shape.reduce((a, b) => a * BigInt(b), 1n);
  if (size !== count * BigInt(OM_SIZES[p.dtype])) return null;
  if (offset < 0n || offset % BigInt(ALIGN) || offset > dataBytes || size > dataBytes - offset) return null;
  return { offset: Number(offset), size: Number(size) };
}

/**
 * The .om in source read in pieces: { graph, light (the file the Session binds for the shapes),
 * bytes: null, whole: false, reads, bytesRead }, or null when the library's reader would refuse
 * the file before its graph (read it whole). A graph the page refuses throws readGraph's error.
 */
async function openOm(source, large) {
  let reads = 0, bytesRead = 0;
  const read = async (start, end) => {
    reads++;
    bytesRead += end - start;
    const b = await source.read(start, end);
    if (b.length !== end - start) throw damaged('the file changed while it was read');
    return b;
  };
  const size = source.size;
  if (size < 64) return null;
  const header = await read(0, 64), hv = new DataView(header.buffer, header.byteOffset, 64);
  const g = hv.getBigUint64(16, true);
  // the header and graph section (or the header alone, for parseOm to refuse the size as readGraph does)
  const head = g <= BigInt(size - 64) ? concat([header, await read(64, 64 + Number(g))]) : header;
  const { graph, reader: r } = parseOm(head, size);
  const graphEnd = 64 + Number(g), d = hv.getBigUint64(24, true), dataBytes = hv.getBigUint64(32, true);
  if (hv.getUint32(12, true) !== 64 || d !== BigInt(aligned(graphEnd)) || d > BigInt(size) || dataBytes !== BigInt(size) - d) return null;
  if (fnv1a(head.subarray(64, graphEnd)) !== hv.getBigUint64(40, true)) return null;
  const places = r.places.map((p) => ({ ...p, place: placeOf(head, p, dataBytes) }));
  if (places.some((p) => !p.place)) return null;

  const top = r.top, section = head.slice(64, graphEnd), sv = new DataView(section.buffer);
  const left = places.filter((p) => p.init && p.dtype === 'float32' && p.place.size >= large);
  const leftOut = new Set(left.map((p) => p.init));
  // the kept tensors' bytes, each read and placed anew (its offset rewritten in the section)
  const data = [];
  let dataSize = 0;
  const put = (bytes) => {
    const offset = aligned(dataSize);
    if (offset > dataSize) data.push(new Uint8Array(offset - dataSize));
    data.push(bytes);
    dataSize = offset + bytes.length;
    return offset;
  };
  for (const p of places) {
    if (leftOut.has(p.init)) continue;
    const at = Number(d) + p.place.offset, bytes = p.place.size ? await read(at, at + p.place.size) : new Uint8Array(0);
    sv.setBigInt64(p.at - 64, BigInt(put(bytes)), true);
  }
  // names no value or node has
  const names = new Set([...Object.keys(graph.values), ...graph.nodes.map((n) => n.name)]);
  const fresh = (base) => {
    let name = base;
    while (names.has(name)) name = `_${name}`;
    names.add(name);
    return name;
  };
  const rel = (at) => at - 64;   // a position in head as one in section
  const valueCount = sv.getUint32(rel(top.values), true);
  let added = 0, zero = null;
  const values = new OmWriter(), inits = new OmWriter(), nodes = new OmWriter();
  /** A new value, initializer and tensor of dtype, shape and bytes: its id. */
  const constant = (name, dtype, shape, bytes) => {
    const id = valueCount + added++;
    values.str(name);
    values.u8(OM_CODES[dtype]);
    values.u8(shape.length);
    for (const n of shape) values.i64(n), values.u32(0);
    inits.u32(id);
    inits.i64(put(bytes));
    inits.i64(bytes.length);
    if (r.version >= 2) inits.u32(0);
    return id;
  };
  for (const p of left) {
    zero ??= constant(fresh('zero'), 'float32', [], new Uint8Array(4));
    const dims = new Uint8Array(new BigInt64Array(p.shape.map(BigInt)).buffer);
    const shape = constant(fresh(`${p.init.name}.shape`), 'int64', [p.shape.length], dims);
    nodes.str('Expand');
    nodes.str(fresh(`${p.init.name}.expand`));
    nodes.u32(2), nodes.u32(zero), nodes.u32(shape);
    nodes.u32(1), nodes.u32(p.init.value);
    nodes.u32(0);
  }
  const initCount = sv.getUint32(rel(top.inits), true) - left.length + added;
  const out = new OmWriter();
  out.u32(valueCount + added);
  out.raw(section.subarray(rel(top.values) + 4, rel(top.valuesEnd)));
  out.raw(values.bytes());
  out.raw(section.subarray(rel(top.valuesEnd), rel(top.inits)));
  out.u32(initCount);
  for (const p of places) if (p.init && !leftOut.has(p.init)) out.raw(section.subarray(rel(p.init.start), rel(p.init.end)));
  out.raw(inits.bytes());
  out.u32(sv.getUint32(rel(top.nodes), true) + left.length);
  out.raw(nodes.bytes());
  out.raw(section.subarray(rel(top.nodes) + 4));   // the nodes, then the symbols
  const graphSection = out.bytes(), dataStart = aligned(64 + graphSection.length);
  const file = new Uint8Array(dataStart + aligned(dataSize)), fv = new DataView(file.buffer);
  file.set(header.subarray(0, 16));
  fv.setBigUint64(16, BigInt(graphSection.length), true);
  fv.setBigUint64(24, BigInt(dataStart), true);
  fv.setBigUint64(32, BigInt(aligned(dataSize)), true);
  fv.setBigUint64(40, fnv1a(graphSection), true);
  file.set(graphSection, 64);
  let at = dataStart;
  for (const b of data) file.set(b, at), at += b.length;
  return { graph, light: file, bytes: null, whole: false, reads, bytesRead };
}

/**
 * Opens a model file to view it: { graph (readGraph's), light (the bytes the Session binds to
 * infer its shapes: withoutWeights'), bytes (the whole file; null while its weights are unread:
 * read the source to run it), whole (whether it was read whole), reads, bytesRead }. source:
 * blobSource(file) or bytesSource(bytes); large as scanOnnx's; piece: the bytes read at first.
 * An .onnx is read in pieces (scanOnnx), an .om as its header and graph section (openOm); a file
 * the walk cannot take (damaged: the error is then readGraph's, or the Session's, on the whole
 * file, as it was) is read whole.
 */
export async function openGraph(source, { large = LARGE, piece = PIECE } = {}) {
  const head = await source.read(0, Math.min(8, source.size));
  if (isOm(head)) {
    const opened = await openOm(source, large);
    if (opened) return opened;
  } else {
    try {
      const { bytes, left, reads, bytesRead } = await scanOnnx(source, { large, piece });
      const graph = readGraph(bytes);
      return { graph, light: withoutWeights(bytes, graph, left), bytes: left.size ? null : bytes, whole: false, reads, bytesRead };
    } catch (e) {
      if (!(e instanceof OmError)) throw e;
    }
  }
  const bytes = await source.read(0, source.size), graph = readGraph(bytes);
  return { graph, light: withoutWeights(bytes, graph), bytes, whole: true, reads: 1, bytesRead: bytes.length };
}
