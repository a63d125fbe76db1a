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
  unfold_dim: 'unfold',
  min_dim: 'min',
  lstm_layer: 'nn.LSTM',
  gru_layer: 'nn.GRU',
  from_data: 'om.tensor',
  full: 'om.full (om.zeros, om.ones)',
  attention: 'scaledDotProductAttention',
  max_pool2d_indices: 'maxPool2d (returnIndices)',
  max_pool3d_indices: 'maxPool3d (returnIndices)',
  max_unpool: 'maxUnpool2d (1d, 3d)',
};

/**
 * C's names, other than ops', that messages use and JS spells in camelCase: composites, a
 * property, PyTorch's argument names (tests/js/errors.test.mjs finds any that are missing).
 */
const C_WORDS = new Set(['masked_scatter', 'pixel_shuffle', 'pixel_unshuffle', 'requires_grad', 'upscale_factor', 'downscale_factor']);

/** The JS name of a C op name (leaky_relu -> leakyRelu, cast -> to). */
export const jsName = (op) => JS_NAMES[op] ?? op.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

/**
 * C's API functions a message can start with, by the JS call that reaches them, named as the
 * JS package's own messages name it (om.trace's 'trace:', session.run's 'run:'); and full, which
 * JS has by that name.
 */
const JS_CALLS = {
  full: 'full',   // (om.full; "calls full" names zeros and ones too)
  from_data: 'tensor',
  read: 'toArray',   // (om_tensor_read: JS reads a tensor's values only through toArray)
  copy_from: 'copy_',
  set_requires_grad: 'requiresGrad',
  no_grad: 'noGrad',
  om_set_num_threads: 'setNumThreads',
  trace_begin: 'Tracer.begin',
  trace_input: 'input',
  trace_parameter: 'parameter',
  trace_dim: 'Dim',
  trace_run: 'trace',
  trace_finish: 'finish',
  traced_save: 'save',
  traced_save_size: 'save',
  traced_write_onnx: 'toOnnx',
  traced_onnx_size: 'toOnnx',
  session_create: 'session',
  session_open: 'InferenceSession.create',
  session_run: 'run',
  session_plan: 'inferShapes',
};

/**
 * C's functions that hints in a message's text name (om_trace_run), by what a JS user calls there
 * when it is not the name the message would start with (om_trace_run: a message starting with it
 * comes from om.trace, a hint naming it speaks to a Tracer's user); the others go by callName.
 */
const JS_IN_TEXT = {
  trace_begin: 'om.Tracer.begin()',
  trace_input: 'tracer.input()',
  trace_run: 'tracer.run()',
};

/**
 * The JS name of the C function or op a C message starts with: the call's (JS_CALLS), C's other
 * accessors by their object (traced_count: TracedModel), an op's or a composite's by jsName
 * (select_scatter: selectScatter).
 */
function callName(name) {
  if (Object.hasOwn(JS_CALLS, name)) return JS_CALLS[name];
  if (name.startsWith('traced_')) return 'TracedModel';
  if (name.startsWith('session_')) return 'InferenceSession';
  return jsName(name);
}

/**
 * A message from C in the terms of the JS API. The name it starts with, and the one a nested
 * message starts with after "(call 2): ", become the JS call's or op's name (trace_run: ->
 * trace:, session_run: -> run:, from_data: -> tensor:, index_add: -> indexAdd:); the ops a trace
 * message says the model calls ("calls leaky_relu here", "full (call 6)") and any other op named
 * in snake_case outside quotes ("use masked_fill") their JS names; hints name C's cast and
 * PyTorch's operators by the JS methods, a doc by its place in the package (docs/graph-runtime.md
 * -> onemodel/docs/graph-runtime.md), and C's functions (om_trace_run) by the JS calls, where
 * JS has no other name for them (om.Dim's "(om_trace_dim in C)") they go. isOp(name) tells the op
 * names (others, like "here" or a quoted 'running_mean', stay as they are; C_WORDS are C's
 * other names).
 */
export function inJsTerms(message, isOp) {
  const js = (name) => (isOp(name) || C_WORDS.has(name) ? jsName(name) : name);
  return message
    .replace(/^([a-z][a-z0-9_]*): /, (_, name) => `${callName(name)}: `)
    .replace(/(\(call \d+\): )([a-z][a-z0-9_]*): /g, (_, at, name) => `${at}${callName(name)}: `)
    .replaceAll(' (om_trace_dim in C)', '')   // the hint names om.Dim already
    .replace('om_trace_run (in JS, om.trace)', 'om.trace or tracer.run()')
    .replace(/\bom_([a-z][a-z0-9_]*)/g, (_, name) => JS_IN_TEXT[name] ?? callName(name))
    .replace('(convert one with cast)', "(convert one with .to(dtype), e.g. .float())")
    .replace(': cast first)', ': convert first with .float())')
    .replace('subtraction, the `-` operator, with a bool tensor is not supported (use the `^` or logical_xor() operator, or `~` or '
      + 'logical_not() to invert a mask)', 'subtraction with a bool tensor is not supported (use logicalXor(), or logicalNot() to invert a mask)')
    .replace(/(?<![\w/])docs\/(?=[\w-]+\.md)/g, 'onemodel/docs/')   // the page as the package ships it (node_modules/onemodel/docs/)
    .replace(/\binput\.size\((-?\d+)\)/g, 'input.shape.at($1)')   // PyTorch's words as JS code most often reads a size (x.size(d) works too)
    .replace(/\bcalls ([a-z][a-z0-9_]*)/g, (_, op) => `calls ${js(op)}`)
    .replace(/\b([a-z][a-z0-9_]*) \(call (\d+)\)/g, (_, op, n) => `${js(op)} (call ${n})`)
    .replace(/'[^']*'|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g, (w) => (w[0] === "'" ? w : js(w)));
}
