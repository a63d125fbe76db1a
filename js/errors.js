// The error classes of the onemodel package. Every failure crosses the C/JS boundary as one of
// these, with a `kind` taken from src/core/errors.def (C errors) or one of the same names for
// failures found in JS (InvalidArgument, Disposed, IndexOutOfRange, OutOfMemory).

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
