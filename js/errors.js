// The error classes of the onemodel package. Every failure crosses the C/JS boundary as one of
// these, with a `kind` taken from src/core/errors.def (C errors) or one of the same names for
// failures found in JS (InvalidArgument, Disposed, IndexOutOfRange, OutOfMemory), or 'Load': the
// WebAssembly module could not be loaded (js/load.js), so there is no C library to name it.

/** Any failure of the library: `kind` names what went wrong ('ShapeMismatch', 'Disposed', ...). */
export class OmError extends Error {
  /**
   * @param {string} kind
   * @param {string} message
   */
  constructor(kind, message) {
    super(message);
    this.name = 'OmError';
    /** @type {string} */
    this.kind = kind;
  }
}

/** A tracer failure (kinds UnsupportedOperation, DataDependent, InPlaceMutation, NoGradInTrace,
 *  SymbolicShape, InvalidUsage). */
export class TraceError extends OmError {
  constructor(kind, message) {
    super(kind, message);
    this.name = 'TraceError';
  }
}

/** An OmError of kind InvalidArgument. */
export function invalid(message) {
  return new OmError('InvalidArgument', message);
}

/** C op names that JS spells otherwise; the others only go from snake_case to camelCase. */
const JS_NAMES = {
  cast: 'to',
  max_dim: 'max',
  min_dim: 'min',
  lstm_layer: 'nn.LSTM',
  gru_layer: 'nn.GRU',
  from_data: 'om.tensor',
  full: 'om.full (om.zeros, om.ones)',
};

/** The JS name of a C op name (leaky_relu -> leakyRelu, cast -> to). */
export const jsName = (op) => JS_NAMES[op] ?? op.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

/**
 * A message from C in the terms of the JS API: the ops a trace message says the model calls
 * ("calls leaky_relu here", "full (call 6)") by their JS names, and hints that name C's cast by
 * the JS methods. isOp(name) tells the op names (others, like "here", stay as they are). The
 * name a message starts with stays C's (docs/api.md#errors).
 */
export function inJsTerms(message, isOp) {
  const js = (name) => (isOp(name) ? jsName(name) : name);
  return message
    .replace('(convert one with cast)', "(convert one with .to(dtype), e.g. .float())")
    .replace(': cast first)', ': convert first with .float())')
    .replace(/\bcalls ([a-z][a-z0-9_]*)/g, (_, op) => `calls ${js(op)}`)
    .replace(/\b([a-z][a-z0-9_]*) \(call (\d+)\)/g, (_, op, n) => `${js(op)} (call ${n})`);
}
