// Small DOM helpers the page's views share.

/** An element with properties (or attributes), dataset and children (null ones skipped). */
export function h(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k in e) e[k] = v;
    else e.setAttribute(k, v);
  }
  e.append(...children.filter((c) => c !== null && c !== undefined));
  return e;
}

/** A shape as DOM: [batch, 3, 28] with symbolic dims as chips. */
export function shapeNode(shape) {
  const span = document.createElement('span');
  span.className = 'shape';
  span.append('[');
  shape.forEach((d, i) => {
    if (i) span.append(', ');
    if (typeof d === 'string') {
      const chip = document.createElement('span');
      chip.className = 'sym';
      chip.textContent = d;
      span.append(chip);
    } else {
      span.append(String(d));
    }
  });
  span.append(']');
  return span;
}
