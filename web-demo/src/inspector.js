// The graph view's inspector: what the selected box is (graph.js's onSelect item) in full. A node:
// its op, name, module, every attribute (kernel_shape, strides, pads, ...), and each input and
// output with its dtype and shape (symbolic dims by name) and, for a weight, the state-dict name
// the node reads it as and the other names the one initializer holds (its aliases: tied weights,
// equal contents the tracer stored once), for a Constant node's output (graphfile.js's constants)
// its value.
// A block: its module path, nodes by op type, its weights with their shapes and element count, and
// Expand / Collapse. A graph input or output: its dtype and shape and the nodes that use it.
import { h, shapeNode } from './dom.js';
import { moduleOfName } from './groups.js';

const MAX_LIST = 200;   // weights or values a block lists before "+N more"
const MAX_ALIASES = 6;  // other names of a weight listed before "+N more"

/** An attribute's value as text: lists in brackets, a tensor as dtype[shape] and its first values. */
export function attributeText(value) {
  if (Array.isArray(value)) return `[${value.map(attributeText).join(', ')}]`;
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(6)));
  if (value && typeof value === 'object') {
    const head = `${value.dtype}[${value.shape.join(', ')}]`;
    return value.values ? `${head} ${attributeText(value.values)}` : head;
  }
  return value === null ? '(not read)' : JSON.stringify(value);
}

/** A state-dict name ('fc1.weight'), not one the tracer gave a constant it made ('const_3'). */
const isWeight = (name) => moduleOfName(name) !== null;

/** A name as code that breaks after a dot when long. */
const nameNode = (name) => h('code', {}, ...name.split(/(?<=\.)/).flatMap((part, i) => (i ? [h('wbr'), part] : [part])));

/**
 * Under a weight shown as shown: the name the file stores it under when another, and the other
 * names the one initializer holds.
 */
function aliasNote(init, shown) {
  const others = init.aliases.filter((n) => n !== shown);
  const listed = others.slice(0, MAX_ALIASES).flatMap((n, i) => (i ? [', ', nameNode(n)] : [nameNode(n)]));
  if (others.length > MAX_ALIASES) listed.push(`, +${others.length - MAX_ALIASES} more`);
  const stored = init.name !== shown ? ['stored as ', nameNode(init.name)] : [];
  if (!stored.length && !listed.length) return null;
  return h('div', { className: 'aliases muted' }, ...stored, stored.length && listed.length ? ' · ' : '', ...(listed.length ? ['also ', ...listed] : []));
}

/** Under a Constant node's output (graphfile.js's constants): its value, and the node it came from. */
function constantNote({ dtype, shape, values, node }) {
  const value = values ? attributeText({ dtype, shape, values }) : `${dtype} [${shape.join(', ')}]`;
  return h('div', { className: 'aliases muted' }, `= ${value}`, node ? ` · from Constant ${node}` : '');
}

/**
 * One value's row: name (a weight marked, shown as `read`: the state-dict name a node reads it as,
 * with its other names), dtype, shape; unknown ones say so.
 */
function valueRow(graph, inits, name, read = name) {
  if (!name) return h('tr', {}, h('td', { className: 'muted', textContent: '(omitted)' }), h('td'), h('td'));
  const v = graph.values[name], init = inits.get(name), constant = graph.constants?.[name];
  const shown = init ? read : name;
  const tag = init || constant ? h('span', { className: 'tag', textContent: init && isWeight(shown) ? 'weight' : 'constant' }) : null;
  const note = init ? aliasNote(init, shown) : constant ? constantNote(constant) : null;
  return h('tr', { dataset: { value: name } },
    h('td', {}, nameNode(shown), tag, note),
    h('td', { textContent: v?.dtype ?? '' }),
    h('td', {}, v ? shapeNode(v.shape) : h('span', { className: 'muted', textContent: 'not in the file' })));
}

const table = (cls, rows) => h('table', { className: cls }, h('tbody', {}, ...rows));

/**
 * The inspector's content for item (null: a hint). graph: readGraph's; actions: { expand(path),
 * collapse(path), reveal(target) } for the buttons and links.
 */
export function inspectorContent(item, graph, expanded, actions) {
  if (!item) return [h('p', { className: 'muted', textContent: 'Click a box to inspect it; double-click a block to expand it.' })];
  const inits = new Map(graph.initializers.map((i) => [i.name, i]));
  if (item.kind === 'op') {
    const n = item.node;
    return [
      h('h3', {}, h('span', { className: 'op-type', textContent: n.opType }), ' ', h('code', { className: 'node-name', textContent: n.name })),
      h('p', { className: 'module' }, 'module ', h('code', { textContent: item.module || '(top level)' })),
      h('h4', { textContent: 'Attributes' }),
      n.attributes.length
        ? table('attrs', n.attributes.map((a) => h('tr', { dataset: { attr: a.name } }, h('td', {}, h('code', { textContent: a.name })), h('td', { className: 'attr-value', textContent: attributeText(a.value) }))))
        : h('p', { className: 'muted', textContent: 'none' }),
      h('h4', { textContent: 'Inputs' }),
      table('values inputs', n.inputs.map((v, slot) => valueRow(graph, inits, v, item.reads[slot]))),
      h('h4', { textContent: 'Outputs' }),
      table('values outputs', n.outputs.map((v) => valueRow(graph, inits, v))),
    ];
  }
  if (item.kind === 'group') {
    const nodes = item.nodes.map((i) => graph.nodes[i]);
    const weights = [...new Set(nodes.flatMap((n) => n.inputs.filter((v) => inits.has(v) && isWeight(v))))];
    const elements = weights.reduce((sum, w) => sum + graph.values[w].shape.reduce((a, b) => a * b, 1), 0);
    const count = new Map();
    for (const n of nodes) count.set(n.opType, (count.get(n.opType) ?? 0) + 1);
    const open = expanded.has(item.path);
    return [
      h('h3', {}, h('span', { className: 'op-type', textContent: 'module' }), ' ', h('code', { className: 'node-name', textContent: item.path })),
      h('p', {}, `${nodes.length} nodes · ${weights.length} weights (${elements.toLocaleString('en')} elements) `,
        h('button', { className: 'toggle', textContent: open ? 'Collapse' : 'Expand', onclick: () => (open ? actions.collapse(item.path) : actions.expand(item.path)) })),
      h('h4', { textContent: 'Nodes by op type' }),
      table('attrs', [...count].sort((a, b) => b[1] - a[1]).map(([op, k]) => h('tr', {}, h('td', {}, h('code', { textContent: op })), h('td', { textContent: String(k) })))),
      h('h4', { textContent: 'Weights' }),
      weights.length ? table('values weights', weights.slice(0, MAX_LIST).map((w) => valueRow(graph, inits, w, item.reads?.get(w) ?? w))) : h('p', { className: 'muted', textContent: 'none' }),
      weights.length > MAX_LIST ? h('p', { className: 'muted', textContent: `+${weights.length - MAX_LIST} more` }) : null,
    ];
  }
  const v = item.value;
  const users = [];
  graph.nodes.forEach((n, i) => { if ((item.kind === 'input' ? n.inputs : n.outputs).includes(v.name)) users.push(i); });
  return [
    h('h3', {}, h('span', { className: 'op-type', textContent: `graph ${item.kind}` }), ' ', h('code', { className: 'node-name', textContent: v.name })),
    table('values', [valueRow(graph, inits, v.name)]),
    h('h4', { textContent: item.kind === 'input' ? 'Read by' : 'Written by' }),
    h('ul', { className: 'users' }, ...users.slice(0, MAX_LIST).map((i) => h('li', {},
      h('button', { className: 'link', textContent: `${graph.nodes[i].opType} ${graph.nodes[i].name}`, onclick: () => actions.reveal(`op:${i}`) })))),
  ];
}
