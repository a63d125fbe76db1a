// Helpers the torchvision ports share (torchvision's models/_utils.py and the layer options of
// its constructors). Not a model.
import * as om from 'onemodel';

/** torchvision's ValueError / TypeError for a bad configuration, as an om.OmError (InvalidArgument). */
export function invalidConfig(message) {
  return new om.OmError('InvalidArgument', message);
}

/**
 * The options object of a port's constructor (torchvision's keyword arguments in camelCase):
 * {} for undefined; an unknown key is an error naming it, as Python's for an unexpected keyword.
 */
export function optionsOf(options, who, names) {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw invalidConfig(`${who}: options must be an object`);
  const unknown = Object.keys(options).filter((k) => !names.includes(k));
  if (unknown.length) throw invalidConfig(`${who}: unknown option '${unknown[0]}' (expected ${names.join(', ')})`);
  return options;
}

/** A layer from a layer option (normLayer, block, ...): new f(...args) for a Module class, else f(...args). */
export function makeLayer(f, ...args) {
  return f.prototype instanceof om.nn.Module ? new f(...args) : f(...args);
}

/**
 * torchvision's _make_divisible(v, divisor, min_value): v rounded to the nearest multiple of
 * divisor (at least min_value, default divisor), one divisor more where rounding lost over 10%.
 */
export function makeDivisible(v, divisor, minValue = null) {
  minValue ??= divisor;
  let newV = Math.max(minValue, Math.floor(Math.trunc(v + divisor / 2) / divisor) * divisor);
  if (newV < 0.9 * v) newV += divisor;
  return newV;
}

/**
 * torchvision's IntermediateLayerGetter(model, return_layers): model's children in order up to
 * the last one named in returnLayers ({ childName: outputName }); forward(x) runs them in turn
 * and returns { outputName: that child's output } for the named ones. The children are model's
 * own (shared, not copied); those after the last returned are left to model.
 */
export class IntermediateLayerGetter extends om.nn.ModuleDict {
  constructor(model, returnLayers) {
    const children = model.namedChildren();
    if (!Object.keys(returnLayers).every((k) => children.some(([name]) => name === k))) {
      throw invalidConfig('return_layers are not present in model');
    }
    const remaining = new Set(Object.keys(returnLayers));
    const layers = [];
    for (const [name, module] of children) {
      if (!remaining.size) break;
      layers.push([name, module]);
      remaining.delete(name);
    }
    super(layers);
    this.returnLayers = { ...returnLayers };
  }

  forward(x) {
    const out = {};
    let h = x;
    for (const [name, module] of this.entries()) {
      h = module.forward(h);
      if (name in this.returnLayers) out[this.returnLayers[name]] = h;
    }
    return out;
  }
}
