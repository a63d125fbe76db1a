// Trigonometric and hyperbolic functions, atan2, minimum, maximum, fmod, remainder, and the
// logical and bitwise ops as functions (torch.sin(x), torch.atan2(y, x), torch.logical_and(a, b));
// the Tensor methods of the same names call these. Binary ones take a Tensor or a number on
// either side and promote dtypes as PyTorch (bool < int64 < float32).
//
//   const angle = om.atan2(y, x);                        // [-pi, pi], C's signed zeros
//   const capped = om.minimum(buckets, 7);                // int64 stays int64
//   const keep = om.logicalAnd(mask, pad.logicalNot());  // bool
import { handle, applyOp, elementwise } from '../tensor.js';

const unary = (name, op) => (input) => applyOp(name, op, [handle(input, name, 'input')]);
const binary = (name, op, names = ['input', 'other']) => (a, b) => elementwise(name, op, names, [a, b]);

/** Elementwise sine (integers are promoted to float32, as every function here). */
export const sin = unary('sin', 'sin');
export const cos = unary('cos', 'cos');
export const tan = unary('tan', 'tan');
/** NaN outside [-1, 1]. */
export const asin = unary('asin', 'asin');
/** NaN outside [-1, 1]. */
export const acos = unary('acos', 'acos');
export const atan = unary('atan', 'atan');
export const sinh = unary('sinh', 'sinh');
export const cosh = unary('cosh', 'cosh');
export const asinh = unary('asinh', 'asinh');
/** NaN below 1. */
export const acosh = unary('acosh', 'acosh');
/** NaN outside [-1, 1], infinite at -1 and 1. */
export const atanh = unary('atanh', 'atanh');

/** torch.atan2(input, other): the angle of the point (other, input) in [-pi, pi]. */
export const atan2 = binary('atan2', 'atan2');
/** Elementwise minimum; NaN where either is NaN. */
export const minimum = binary('minimum', 'minimum');
/** Elementwise maximum; NaN where either is NaN. */
export const maximum = binary('maximum', 'maximum');
/** input - trunc(input / other) * other: the sign of input (C's fmod). Integer x mod 0 is 0. */
export const fmod = binary('fmod', 'fmod');
/** input - floor(input / other) * other: the sign of other (Python's %). Integer x mod 0 is 0. */
export const remainder = binary('remainder', 'remainder');
/** Truth values (nonzero is true, of any dtype) combined, as bool. */
export const logicalAnd = binary('logicalAnd', 'logical_and');
export const logicalOr = binary('logicalOr', 'logical_or');
export const logicalXor = binary('logicalXor', 'logical_xor');
export const logicalNot = unary('logicalNot', 'logical_not');
/** Bits of int64 values, or bool values (and, or, xor, not); float32 is refused (DtypeMismatch). */
export const bitwiseAnd = binary('bitwiseAnd', 'bitwise_and');
export const bitwiseOr = binary('bitwiseOr', 'bitwise_or');
export const bitwiseXor = binary('bitwiseXor', 'bitwise_xor');
export const bitwiseNot = unary('bitwiseNot', 'bitwise_not');
