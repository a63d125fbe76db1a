// The graph view's blocks: each node's module (a state-dict prefix such as 'h.3.attn'), so that a
// module's nodes can be drawn as one box and expanded one level at a time. A node that reads
// weights belongs to the module that holds them ('h.3.attn.c_proj.weight' -> 'h.3.attn.c_proj');
// one that reads none, to the module its name's scope says where it has one (torch.onnx.export's
// '/h.3/attn/Reshape'), else (a Relu, a Reshape, a Softmax) to the deepest module both what feeds it
// and what it feeds lie in (the Reshape between h.3.attn.c_attn and h.3.attn.c_proj is h.3.attn's;
// a mask computed from the inputs alone, the deepest module all its users lie in).
// A block must be one step of the graph: a node outside a module that runs between two of its
// nodes (the residual Add between a block's attention and its MLP) joins it, or a collapsed
// block would feed a node that feeds it back; and one without weights that reads only values of
// one module, two or more of them (the residual Add that ends the block), joins it too.
//
//   const groups = groupByModule(graph);     // graph: readGraph()'s
//   groups.module[i]                         // node i's module, '' at the top
//   groups.names.get(`${i}:${slot}`)         // the state-dict name node i reads a weight as at input slot
//   groups.blocks                            // Map path -> { path, parent, size (nodes inside) }
//   visibleId(groups, i, expanded)           // 'op:i', or 'group:<path>' of the collapsed block showing it
//   autoExpand(groups)                       // the expanded set a graph opens with
const SEP = '.';
/** Ops that apply an activation to one value (Clip: ReLU6's). */
const ACTIVATIONS = new Set(['Relu', 'LeakyRelu', 'PRelu', 'Gelu', 'Sigmoid', 'HardSigmoid', 'HardSwish', 'Tanh', 'Elu', 'Selu', 'Celu',
  'Mish', 'Softplus', 'Softsign', 'ThresholdedRelu', 'Clip']);
/** A graph opens with its blocks expanded while it draws no more boxes than this. */
export const OPEN_BOXES = 30;

/**
 * The module holding a state-dict name ('layer1.0.conv1.weight' -> 'layer1.0.conv1'; a view the
 * tracer named '<name>.view_<n>' is its tensor's), null without a dot.
 */
export function moduleOfName(name) {
  name = name.replace(/\.view_\d+$/, '');
  const at = name.lastIndexOf(SEP);
  return at > 0 ? name.slice(0, at) : null;
}

// The last part of the state-dict name an op's input slot reads, where the op's inputs are a
// module's named state: a fresh BatchNorm holds ones in weight and running_var and zeros in bias
// and running_mean, which the tracer stores once each (one initializer, the other names aliases).
const SLOT_NAMES = { BatchNormalization: [null, 'weight', 'bias', 'running_mean', 'running_var'] };

/**
 * The state-dict name each read of an initializer is, where its names say it: Map 'i:slot' (node
 * i's input slot) -> name. An initializer's names (its own, then its aliases) are in the order
 * the traced run first read them, so when its reads of one kind (a slot SLOT_NAMES names: names
 * ending in that part; any other: all its names) are as many as its names of that kind, the k-th
 * read is the k-th name (twelve LayerNorms' equal weights, a fresh ResNet's BatchNorms).
 */
function readNames(graph) {
  const reads = new Map();   // initializer -> [[key, slot kind]]
  const inits = new Map(graph.initializers.map((w) => [w.name, w]));
  graph.nodes.forEach((n, i) => n.inputs.forEach((v, slot) => {
    if (!inits.has(v)) return;
    if (!reads.has(v)) reads.set(v, []);
    reads.get(v).push([`${i}:${slot}`, SLOT_NAMES[n.opType]?.[slot] ?? null]);
  }));
  const named = new Map();
  for (const [v, rs] of reads) {
    const names = [v, ...inits.get(v).aliases];
    for (const kind of new Set(rs.map(([, k]) => k))) {
      const mine = rs.filter(([, k]) => k === kind), of = kind ? names.filter((n) => n.endsWith(SEP + kind)) : names;
      if (mine.length === of.length) mine.forEach(([key], k) => named.set(key, of[k]));
    }
  }
  return named;
}

/**
 * The name node i (of module, groups.module[i], and opType) reads initializer init ({ name,
 * aliases }) as at input slot, where readNames could not tell: of init's names, the one in that
 * module ending in the slot's part, else one in the module, else init's own name.
 */
function nameAt(init, module, opType, slot) {
  const last = SLOT_NAMES[opType]?.[slot];
  const own = [init.name, ...init.aliases].filter((n) => moduleOfName(n) === module);
  return own.find((n) => last && n.endsWith(SEP + last)) ?? own[0] ?? init.name;
}

/**
 * The module a node's name places it in, as torch.onnx.export names nodes by the scope of the
 * module that ran them ('/layer1/0/conv1/Conv' -> 'layer1.0.conv1'; a Sequential's child is named
 * from its parent, '/4/down/down.0/Conv' -> '4.down.0'); null for a name with no scope (the
 * tracer's 'Conv_3', torch's '/Add').
 */
export function moduleOfNodeName(name) {
  const scope = /^\/(.+)\/[^/]+$/.exec(name)?.[1];
  if (!scope) return null;
  const path = [];
  for (const part of scope.split('/')) {
    if (path.length && part.startsWith(path.at(-1) + SEP)) path.pop();
    path.push(part);
  }
  return path.join(SEP);
}

/** The deepest module holding both (null: no module known, so the other). */
function common(a, b) {
  if (a === null) return b;
  if (b === null || a === b) return a;
  const x = a.split(SEP), y = b.split(SEP);
  let k = 0;
  while (k < x.length && k < y.length && x[k] === y[k]) k++;
  return x.slice(0, k).join(SEP);
}

/** The module paths holding path, outermost first: 'a.b.c' -> ['a', 'a.b', 'a.b.c']. */
function prefixes(path) {
  if (!path) return [];
  const parts = path.split(SEP);
  return parts.map((_, k) => parts.slice(0, k + 1).join(SEP));
}

/** Whether module lies in path ('' holds every module). */
const within = (module, path) => path === '' || module === path || module.startsWith(path + SEP);

/**
 * Each node's module, the blocks (modules of two or more nodes), and the state-dict name of
 * every read of an initializer (readNames's, else nameAt's), as the top of this file says.
 */
export function groupByModule(graph) {
  const n = graph.nodes.length;
  const inits = new Set(graph.initializers.map((i) => i.name));
  const producer = new Map();
  graph.nodes.forEach((node, i) => node.outputs.forEach((v) => producer.set(v, i)));
  const feeds = graph.nodes.map((node) => [...new Set(node.inputs.filter((v) => producer.has(v)).map((v) => producer.get(v)))]);
  const fedTo = Array.from({ length: n }, () => []);
  const outputs = new Set(graph.outputs.map((v) => v.name));
  feeds.forEach((from, i) => from.forEach((j) => fedTo[j].push(i)));

  // weights first, then what feeds a node (in execution order) and what it feeds (backwards); a
  // weight read by several nodes (tied, or equal weights the tracer wrote once: twelve layers'
  // untrained LayerNorm scales) tells where one of them belongs only by the name that read is
  const readers = new Map();
  for (const node of graph.nodes) for (const v of new Set(node.inputs)) if (inits.has(v)) readers.set(v, (readers.get(v) ?? 0) + 1);
  const names = readNames(graph);
  const own = graph.nodes.map((node, i) => node.inputs.map((v, slot) => names.get(`${i}:${slot}`) ?? (readers.get(v) === 1 ? v : null))
    .filter((v) => v !== null).map(moduleOfName).filter((m) => m !== null).reduce(common, null) ?? moduleOfNodeName(node.name));
  // a weight read through a node that reads weights alone and feeds this node alone (the
  // Transpose of an LM head's weight tied to the token embedding) is read by this node too: the
  // MatMul it feeds is the head's, not a box at the top beside it
  const constant = (v) => v === '' || inits.has(v) || Object.hasOwn(graph.constants ?? {}, v);
  const weightOnly = graph.nodes.map((node) => node.inputs.some((v) => inits.has(v)) && node.inputs.every(constant));
  for (let i = 0; i < n; i++) {
    if (own[i] != null) continue;
    const via = feeds[i].filter((j) => weightOnly[j] && own[j] != null && fedTo[j].length === 1 && !graph.nodes[j].outputs.some((v) => outputs.has(v)));
    if (via.length) own[i] = via.map((j) => own[j]).reduce(common, null);
  }
  const up = new Array(n).fill(null), module = new Array(n).fill('');
  for (let i = 0; i < n; i++) up[i] = own[i] ?? feeds[i].map((j) => up[j]).reduce(common, null);
  for (let i = n - 1; i >= 0; i--) module[i] = own[i] ?? common(up[i], fedTo[i].map((j) => module[j]).reduce(common, null)) ?? '';

  // a block takes in what runs between two of its nodes, outer blocks first
  const paths = [...new Set(module.flatMap(prefixes))].sort((a, b) => a.split(SEP).length - b.split(SEP).length);
  const reach = (starts, next) => {
    const seen = new Uint8Array(n);
    const stack = [...starts];
    for (const s of starts) seen[s] = 1;
    while (stack.length) for (const j of next[stack.pop()]) if (!seen[j]) { seen[j] = 1; stack.push(j); }
    return seen;
  };
  for (const path of paths) {
    const members = [];
    module.forEach((m, i) => { if (within(m, path)) members.push(i); });
    const after = reach(members, fedTo), before = reach(members, feeds);
    for (let i = 0; i < n; i++) if (after[i] && before[i] && within(path, module[i]) && module[i] !== path) module[i] = path;
  }
  // a node without weights that joins two or more values, each made in one module or read there
  // (the module's input), is that module's last step: the residual Add that ends a bottleneck or a
  // decoder layer (its last layer's output and the value the block began with, which its first
  // layer read; torchvision's blocks after the first read that value from the block before), not
  // a box between it and the next (drawn with two edges from the collapsed block into it); all it
  // reads is the module's or came into it, so the block still feeds nothing that feeds it back.
  // The deepest such module holding one of the values' makers wins.
  const madeOrReadIn = (k, i, path) => within(module[k], path) || fedTo[k].some((r) => r !== i && within(module[r], path));
  // The activation applied to that last step, where the module applies one to its sum
  // (torchvision's Bottleneck and BasicBlock end in relu(out + identity)), reads the joining
  // node's value alone, and nothing else does: it is the block's too, not a box between two blocks
  // (the ReLU drawn between two stages, or between two bottlenecks of a stage).
  for (let i = 0; i < n; i++) {
    if (own[i] != null) continue;
    if (feeds[i].length >= 2) {
      const m = feeds[i].flatMap((j) => prefixes(module[j]).reverse())
        .filter((p) => p !== module[i] && within(p, module[i]) && feeds[i].every((k) => madeOrReadIn(k, i, p)))
        .reduce((a, p) => (a === null || p.length > a.length ? p : a), null);
      if (m) module[i] = m;
      continue;
    }
    const [j] = feeds[i];
    if (!ACTIVATIONS.has(graph.nodes[i].opType) || feeds[i].length !== 1 || own[j] != null || feeds[j].length < 2) continue;
    if (fedTo[j].length === 1 && !outputs.has(graph.nodes[j].outputs[0]) && module[j] !== module[i] && within(module[j], module[i])) module[i] = module[j];
  }

  const blocks = new Map();
  for (const m of module) {
    for (const path of prefixes(m)) {
      if (!blocks.has(path)) blocks.set(path, { path, parent: prefixes(path).at(-2) ?? '', size: 0 });
      blocks.get(path).size++;
    }
  }
  for (const [path, b] of blocks) if (b.size < 2) blocks.delete(path);   // one node draws as itself
  for (const b of blocks.values()) while (b.parent && !blocks.has(b.parent)) b.parent = prefixes(b.parent).at(-2) ?? '';
  const byName = new Map(graph.initializers.map((w) => [w.name, w]));
  graph.nodes.forEach((node, i) => node.inputs.forEach((v, slot) => {
    const key = `${i}:${slot}`;
    if (byName.has(v) && !names.has(key)) names.set(key, nameAt(byName.get(v), module[i], node.opType, slot));
  }));
  return { module, blocks, names };
}

/** The box node i is drawn in: its own ('op:i'), or the outermost collapsed block holding it. */
export function visibleId(groups, i, expanded) {
  for (const path of prefixes(groups.module[i])) {
    if (groups.blocks.has(path) && !expanded.has(path)) return `group:${path}`;
  }
  return `op:${i}`;
}

/** How many boxes the nodes draw in with this expanded set. */
export function boxCount(groups, expanded) {
  const ids = new Set();
  for (let i = 0; i < groups.module.length; i++) ids.add(visibleId(groups, i, expanded));
  return ids.size;
}

/**
 * The blocks to open a graph with expanded: a level at a time from the outermost, all blocks of a
 * level together, while the boxes stay within limit (a small graph opens whole; a 12-layer decoder
 * as its 12 layers, a ResNet-50 as its 16 bottlenecks).
 */
export function autoExpand(groups, limit = OPEN_BOXES) {
  const expanded = new Set();
  let level = [...groups.blocks.values()].filter((b) => b.parent === '').map((b) => b.path);
  while (level.length) {
    const more = new Set([...expanded, ...level]);
    if (boxCount(groups, more) > limit) break;
    for (const p of level) expanded.add(p);
    level = [...groups.blocks.values()].filter((b) => level.includes(b.parent)).map((b) => b.path);
  }
  return expanded;
}

/** The blocks holding module path (not itself), outermost first: to expand so that it shows. */
export function blocksAbove(groups, path) {
  return prefixes(path).slice(0, -1).filter((p) => groups.blocks.has(p));
}
