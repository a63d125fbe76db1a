// The JS op table: one row per op that is a Tensor method or an om.* function. A row names the
// op in JS, says how its arguments reach C (or which hand-written function of a family file
// takes them), where it is installed (a Tensor method, an om.* function or both) and its
// in-place form. From it this module builds the functions (`functions`, which js/index.js and
// om.nn.functional export) and installs the methods on Tensor.prototype: a method checks its own
// tensor ("add_: the tensor was disposed") and calls the function with it first, so a method and
// its function share every other check and message.
//
// Argument handling of the generic rows (the hand-written ones say theirs in their family file):
//   unary(op)             one tensor, `input`
//   float(op)             one tensor, `input`; int64 and bool are cast to float32 first (PyTorch's
//                         promotion of exp, log, sqrt, ...; the sin family promotes in C)
//   binary(op, name)      two operands, each a Tensor or a number (boolean, bigint), promoted as
//                         PyTorch's torch.result_type with numbers as weak scalars (tensor.js
//                         elementwise); the second is called `name` (default 'other')
//   attrs(op, signature)  tensors and int attributes, e.g. 'input, dim: int, index': the tensors
//                         are the op's inputs in order, the ints its int attributes in order
//                         ('k: int = 0' gives a default when the argument is undefined)
import { toI64, describe } from '../convert.js';
import { OmError, invalid } from '../errors.js';
import {
  Tensor, self, handle, unaryOp, floatOp, applyOp, elementwise, meshgrid, cat, stack, optionsArg, isOptions,
} from '../tensor.js';
import { requireReady, omw } from '../runtime.js';
import * as shape from './shape.js';
import * as reduce from './reduce.js';
import * as linalg from './linalg.js';
import * as act from './act.js';
import * as norm from './norm.js';
import * as indexing from './index.js';
import * as sorting from './sort.js';
import * as like from './like.js';
import * as arith from './arith.js';
import * as stats from './stats.js';
import * as counting from './counting.js';
import * as grid from './grid.js';

const unary = (op) => ({ build: (name) => unaryOp(name, op) });
const float = (op) => ({ build: (name) => floatOp(name, op) });

const binary = (op, second = 'other') => ({
  promotes: true, // with its second operand (an in-place form checks the cast first)
  build: (name) => {
    const names = ['input', second];
    return (input, other) => elementwise(name, op, names, [input, other]);
  },
});

/**
 * div and floorDivide: torch.div(input, other, rounding_mode=...) as div(input, other,
 * { roundingMode }): undefined or null true division (integers give float32), 'trunc' toward zero,
 * 'floor' down (Python's //); rounded, integers stay int64 (a zero divisor is InvalidArgument, as
 * PyTorch raises) and the gradient is zero. `mode` fixes the rounding (floorDivide's 'floor').
 */
const ROUNDING = { trunc: 1n, floor: 2n };
const division = (mode) => ({
  promotes: true,
  build: (name) => (input, other, options) => {
    let m = mode;
    if (m === undefined) {
      m = optionsArg(options, name, ['roundingMode']).roundingMode ?? null;
      if (m !== null && !(typeof m === 'string' && Object.hasOwn(ROUNDING, m))) {
        throw invalid(`${name}: roundingMode must be 'trunc', 'floor' or null, got ${describe(m)}`);
      }
    }
    return elementwise(name, 'div', ['input', 'other'], [input, other], m === null ? [] : [ROUNDING[m]]);
  },
});

/** pow: PyTorch refuses an integer tensor to a negative integer scalar power (its result is not an integer). */
const power = {
  build: (name) => (input, exponent) => {
    const negativeInt = typeof exponent === 'bigint' ? exponent < 0n : Number.isInteger(exponent) && exponent < 0;
    if (negativeInt && input instanceof Tensor && (input.dtype === 'int64' || input.dtype === 'bool')) {
      throw invalid(`${name}: Integers to negative integer powers are not allowed (got ${exponent} for a ${input.dtype} tensor; call .float() first)`);
    }
    return elementwise(name, 'pow', ['input', 'exponent'], [input, exponent]);
  },
};

const attrs = (op, signature) => ({
  build: (name) => {
    const params = signature.split(',').map((p) => {
      const [, id, type, dflt] = /^\s*(\w+)(?:\s*:\s*(int))?(?:\s*=\s*(-?\d+))?\s*$/.exec(p);
      return { id, int: type === 'int', dflt: dflt === undefined ? undefined : BigInt(dflt) };
    });
    return (...args) => {
      const hs = [], ints = [];
      params.forEach((p, i) => { if (!p.int) hs.push(handle(args[i], name, p.id)); });
      params.forEach((p, i) => {
        if (p.int) ints.push(args[i] === undefined && p.dflt !== undefined ? p.dflt : toI64(args[i], name, p.id));
      });
      return applyOp(name, op, hs, ints);
    };
  },
});

/** A hand-written function (its family file checks the arguments). */
const impl = (fn) => ({ build: () => fn });

/**
 * PyTorch's keyword arguments for a row whose function takes positional ones after the tensor:
 * names are those parameters in order, and a trailing plain object gives any of them by name, so
 * a port's x.sum(dim=-1, keepdim=True) is x.sum({ dim: -1, keepdim: true }) (or x.sum(-1,
 * { keepdim: true })) and x.split(2, dim=-1) is x.split(2, { dim: -1 }). A name the op lacks, or
 * one given both by position and by name, is InvalidArgument, as PyTorch's TypeError.
 */
const keywords = (names, how) => ({
  ...how,
  build: (name) => {
    const fn = how.build(name);
    return (input, ...args) => {
      if (!args.length || !isOptions(args[args.length - 1])) return fn(input, ...args);
      const all = args.slice(0, -1), given = all.length;
      if (given > names.length) throw invalid(`${name}: takes ${names.join(', ')} after the tensor, got ${given} arguments and options`);
      for (const [k, v] of Object.entries(args[args.length - 1])) {
        const i = names.indexOf(k);
        if (i < 0) throw invalid(`${name}: unknown option '${k}' (expected ${names.join(', ')})`);
        if (i < given) throw invalid(`${name}: got ${k} twice, as argument ${i + 1} after the tensor and as an option`);
        all[i] = v;
      }
      return fn(input, ...all);
    };
  },
});
const DIM_KEEPDIM = ['dim', 'keepdim'];

const M = 'method', F = 'function', MF = 'method, function';

/** [JS name, argument handling, installed as, in-place form] */
export const OPS = [
  // elementwise arithmetic and comparisons, promoted as PyTorch
  ['add', binary('add'), MF, 'add_'],
  ['sub', binary('sub'), MF, 'sub_'],
  ['mul', binary('mul'), MF, 'mul_'],
  ['div', division(), MF, 'div_'],
  ['divide', division(), MF, 'divide_'], // torch.divide: div's other name
  ['trueDivide', division(null), MF, 'trueDivide_'],
  ['floorDivide', division('floor'), MF, 'floorDivide_'],
  ['pow', power, MF, 'pow_'],
  ['eq', binary('eq'), MF],
  ['ne', binary('ne'), MF],
  ['lt', binary('lt'), MF],
  ['le', binary('le'), MF],
  ['gt', binary('gt'), MF],
  ['ge', binary('ge'), MF],
  ['atan2', binary('atan2'), MF, 'atan2_'], // the angle of the point (other, input) in [-pi, pi]
  ['minimum', binary('minimum'), MF], // NaN where either is NaN
  ['maximum', binary('maximum'), MF],
  ['fmod', binary('fmod'), MF, 'fmod_'], // the sign of input (C's fmod); integer x mod 0 is 0
  ['remainder', binary('remainder'), MF, 'remainder_'], // the sign of other (Python's %)
  ['logicalAnd', binary('logical_and'), MF, 'logicalAnd_'], // truth values (nonzero is true) combined, as bool
  ['logicalOr', binary('logical_or'), MF, 'logicalOr_'],
  ['logicalXor', binary('logical_xor'), MF, 'logicalXor_'],
  ['bitwiseAnd', binary('bitwise_and'), MF, 'bitwiseAnd_'], // int64 or bool; float32 is DtypeMismatch
  ['bitwiseOr', binary('bitwise_or'), MF, 'bitwiseOr_'],
  ['bitwiseXor', binary('bitwise_xor'), MF, 'bitwiseXor_'],
  // elementwise functions of one tensor (integers promoted to float32 where PyTorch does)
  ['neg', unary('neg'), MF, 'neg_'],
  ['abs', unary('abs'), MF, 'abs_'],
  ['sign', unary('sign'), MF, 'sign_'],
  ['floor', unary('floor'), MF, 'floor_'], // int64 kept, as PyTorch
  ['ceil', unary('ceil'), MF, 'ceil_'],
  ['round', unary('round'), MF, 'round_'], // halves to even (torch.round)
  ['exp', float('exp'), MF, 'exp_'],
  ['log', float('log'), MF, 'log_'],
  ['sqrt', float('sqrt'), MF, 'sqrt_'],
  ['rsqrt', float('rsqrt'), MF, 'rsqrt_'],
  ['sin', unary('sin'), MF, 'sin_'],
  ['cos', unary('cos'), MF, 'cos_'],
  ['tan', unary('tan'), MF, 'tan_'],
  ['asin', unary('asin'), MF, 'asin_'],
  ['acos', unary('acos'), MF, 'acos_'],
  ['atan', unary('atan'), MF, 'atan_'],
  ['sinh', unary('sinh'), MF, 'sinh_'],
  ['cosh', unary('cosh'), MF, 'cosh_'],
  ['asinh', unary('asinh'), MF, 'asinh_'],
  ['acosh', unary('acosh'), MF, 'acosh_'],
  ['atanh', unary('atanh'), MF, 'atanh_'],
  ['logicalNot', unary('logical_not'), MF, 'logicalNot_'], // input == 0 as bool (`~mask`)
  ['bitwiseNot', unary('bitwise_not'), MF, 'bitwiseNot_'],
  ['clone', unary('clone'), MF],
  // activations and the misc ops (js/ops/act.js; om.nn.functional has the functions)
  ['relu', impl(act.relu), MF, 'relu_'],
  ['sigmoid', impl(act.sigmoid), MF, 'sigmoid_'],
  ['tanh', impl(act.tanh), MF, 'tanh_'],
  ['erf', impl(act.erf), MF, 'erf_'],
  ['clamp', impl(act.clamp), MF, 'clamp_'],
  ['clip', impl(act.clamp), MF, 'clip_'],
  ['cumsum', keywords(['dim'], impl(act.cumsum)), MF],
  ['maskedFill', keywords(['mask', 'value'], impl(act.maskedFill)), MF, 'maskedFill_'],
  ['square', impl(act.square), MF, 'square_'],
  ['isnan', impl(act.isnan), MF],
  ['isinf', impl(act.isinf), MF],
  ['isfinite', impl(act.isfinite), MF],
  ['softmax', keywords(['dim', 'dtype'], impl(norm.softmax)), MF],
  ['logSoftmax', keywords(['dim', 'dtype'], impl(norm.logSoftmax)), MF],
  ['selu', impl(act.selu), F], // torch.selu and torch.celu (no Tensor methods in PyTorch)
  ['celu', impl(act.celu), F],
  // dtype
  ['to', impl(shape.to), M],
  ['float', impl((input) => shape.to(input, 'float32')), M],
  ['long', impl((input) => shape.to(input, 'int64')), M],
  ['bool', impl((input) => shape.to(input, 'bool')), M],
  ['double', impl((input) => shape.to(input, 'float64')), M],
  // shape or dtype from another tensor, new tensors of this one's dtype (js/ops/like.js)
  ['expandAs', impl(like.expandAs), M],
  ['normal_', keywords(['mean', 'std'], impl(like.normal_)), M], // in place by itself: no out-of-place form
  ['uniform_', keywords(['from', 'to'], impl(like.uniform_)), M],
  ['viewAs', impl(like.viewAs), M],
  ['reshapeAs', impl(like.reshapeAs), M],
  ['typeAs', impl(like.typeAs), M],
  ['newZeros', impl(like.newZeros), M],
  ['newOnes', impl(like.newOnes), M],
  ['newEmpty', impl(like.newEmpty), M],
  ['newFull', impl(like.newFull), M],
  ['newTensor', impl(like.newTensor), M],
  // views, copies and splits (js/ops/shape.js)
  ['reshape', impl(shape.reshape), MF],
  ['view', impl(shape.view), M],
  ['permute', impl(shape.permute), MF],
  ['transpose', keywords(['dim0', 'dim1'], impl(shape.transpose)), MF],
  ['swapaxes', impl(shape.transpose), MF], // torch.swapaxes and torch.swapdims: transpose's other names
  ['swapdims', impl(shape.transpose), MF],
  ['expand', impl(shape.expand), M],
  ['slice', impl(shape.slice), M],
  ['narrow', keywords(['dim', 'start', 'length'], impl(shape.narrow)), MF],
  ['select', keywords(['dim', 'index'], attrs('select', 'input, dim: int, index: int')), MF],
  ['unfold', attrs('unfold_dim', 'input, dimension: int, size: int, step: int'), M],
  ['sliceScatter', impl(shape.sliceScatter), MF],
  ['selectScatter', impl(shape.selectScatter), MF],
  ['asStrided', impl(shape.asStrided), MF],
  ['asStridedScatter', impl(shape.asStridedScatter), MF],
  ['squeeze', keywords(['dim'], impl(shape.squeeze)), MF],
  ['unsqueeze', keywords(['dim'], attrs('unsqueeze', 'input, dim: int')), MF],
  ['contiguous', impl(shape.contiguous), M],
  ['detach', impl(shape.detach), MF],
  ['t', impl(shape.t), MF],
  ['flatten', keywords(['startDim', 'endDim'], impl(shape.flatten)), MF],
  ['split', keywords(['splitSizeOrSections', 'dim'], impl(shape.split)), MF],
  ['chunk', keywords(['chunks', 'dim'], impl(shape.chunk)), MF],
  ['unbind', impl(shape.unbind), MF],
  ['roll', keywords(['shifts', 'dims'], impl(shape.roll)), MF],
  ['tril', keywords(['diagonal'], attrs('tril', 'input, k: int = 0')), MF, 'tril_'],
  ['triu', keywords(['diagonal'], attrs('triu', 'input, k: int = 0')), MF, 'triu_'],
  ['cat', keywords(['dim'], impl(cat)), F],
  ['stack', keywords(['dim'], impl(stack)), F],
  ['meshgrid', impl(meshgrid), F],
  ['where', impl(indexing.whereOrNonzero), F], // where(condition) alone: nonzero(condition, { asTuple: true })
  // Tensor.where(condition, other): torch.where(condition, this, other), PyTorch's method order
  ['where', impl((input, condition, other) => indexing.whereOrNonzero(condition, input, other)), M],
  // reductions (js/ops/reduce.js)
  ['sum', keywords(DIM_KEEPDIM, impl(reduce.sum)), MF],
  ['mean', keywords(DIM_KEEPDIM, impl(reduce.mean)), MF],
  ['amax', keywords(DIM_KEEPDIM, impl(reduce.amax)), MF],
  ['amin', keywords(DIM_KEEPDIM, impl(reduce.amin)), MF],
  ['max', keywords(DIM_KEEPDIM, impl(reduce.max)), MF],
  ['min', keywords(DIM_KEEPDIM, impl(reduce.min)), MF],
  ['argmax', keywords(DIM_KEEPDIM, impl(reduce.argmax)), MF],
  ['argmin', keywords(DIM_KEEPDIM, impl(reduce.argmin)), MF],
  ['var', impl(reduce.variance), MF],
  ['std', impl(reduce.std), MF],
  ['all', keywords(DIM_KEEPDIM, impl(reduce.all)), MF],
  ['any', keywords(DIM_KEEPDIM, impl(reduce.any)), MF],
  ['logsumexp', keywords(DIM_KEEPDIM, impl(reduce.logsumexp)), MF],
  // indexing (js/ops/index.js)
  ['indexSelect', keywords(['dim', 'index'], attrs('index_select', 'input, dim: int, index')), MF],
  ['gather', keywords(['dim', 'index'], attrs('gather', 'input, dim: int, index')), MF],
  ['indexAdd', keywords(['dim', 'index', 'source'], attrs('index_add', 'input, dim: int, index, source')), MF],
  ['scatterAdd', keywords(['dim', 'index', 'src'], attrs('scatter_add', 'input, dim: int, index, src')), MF],
  ['scatter', impl(indexing.scatter), MF, 'scatter_'],
  ['scatterReduce', keywords(['dim', 'index', 'src', 'reduce', 'includeSelf'], impl(indexing.scatterReduce)), MF, 'scatterReduce_'],
  ['maskedScatter', impl(indexing.maskedScatter), MF, 'maskedScatter_'],
  ['index', impl(indexing.index), MF],
  ['nonzero', impl(indexing.nonzero), MF], // sizes the values decide: DataDependent in a trace
  ['argwhere', impl(indexing.argwhere), MF],
  ['maskedSelect', impl(indexing.maskedSelect), MF],
  ['indexPut', impl(indexing.indexPut), MF, 'indexPut_'],
  ['indexFill', keywords(['dim', 'index', 'value'], impl(indexing.indexFill)), MF, 'indexFill_'],
  ['indexCopy', keywords(['dim', 'index', 'source'], impl(indexing.indexCopy)), MF, 'indexCopy_'],
  // sorting and repeats (js/ops/sort.js)
  ['topk', impl(sorting.topk), MF],
  ['multinomial', impl(sorting.multinomial), MF],
  ['sort', impl(sorting.sort), MF],
  ['argsort', impl(sorting.argsort), MF],
  ['searchsorted', impl(sorting.searchsorted), F],
  ['bucketize', impl(sorting.bucketize), F],
  ['repeatInterleave', keywords(['repeats', 'dim'], impl(sorting.repeatInterleave)), MF],
  ['trilIndices', impl(sorting.trilIndices), F],
  ['triuIndices', impl(sorting.triuIndices), F],
  ['pixelShuffle', impl(sorting.pixelShuffle), F], // torch.pixel_shuffle, also om.nn.functional's
  ['pixelUnshuffle', impl(sorting.pixelUnshuffle), F],
  ['gridSample', impl(grid.gridSample), F], // om.nn.functional.gridSample (the op grid_sample)
  // products (js/ops/linalg.js)
  ['matmul', impl(linalg.matmul), MF],
  ['addmm', impl(linalg.addmm), F],
  ['einsum', impl(linalg.einsum), F],
  ['cdist', impl(linalg.cdist), F],
  ['bmm', impl(linalg.bmm), MF],
  ['outer', impl(linalg.outer), MF],
  ['dot', impl(linalg.dot), MF],
  ['norm', keywords(['p', 'dim', 'keepdim'], impl(linalg.norm)), MF],
  // issue 28's ops PyTorch users expect
  ['log1p', unary('log1p'), MF], // exact near 0 (integers promoted to float32)
  ['expm1', unary('expm1'), MF],
  ['flip', impl(shape.flip), MF],
  ['repeat', impl(shape.repeat), M],
  ['tile', impl(shape.tile), MF],
  ['prod', keywords(DIM_KEEPDIM, impl(reduce.prod)), MF],
  ['cumprod', keywords(['dim'], impl(act.cumprod)), MF],
  ['cummax', keywords(['dim'], impl(act.cummax)), MF], // [values, indices], PyTorch's ties and NaN
  ['cummin', keywords(['dim'], impl(act.cummin)), MF],
  // order statistics (js/ops/stats.js)
  ['median', keywords(DIM_KEEPDIM, impl(stats.median)), MF], // the lower middle; with a dim, [values, indices]
  ['nanmedian', keywords(DIM_KEEPDIM, impl(stats.nanmedian)), MF],
  ['quantile', impl(stats.quantile), MF],
  ['nanquantile', impl(stats.nanquantile), MF],
  // counting and distinct values (js/ops/counting.js): sizes the values decide, DataDependent in a trace
  ['bincount', impl(counting.bincount), MF],
  ['unique', impl(counting.unique), MF],
  ['uniqueConsecutive', impl(counting.uniqueConsecutive), MF],
  ['type', impl(counting.type), M], // PyTorch's type string, or a conversion
  ['diagonal', keywords(['offset', 'dim1', 'dim2'], impl(shape.diagonal)), MF],
  ['diag', impl(shape.diag), MF],
  ['fillDiagonal_', impl(shape.fillDiagonal_), M],
  // PyTorch's other names of ops above (torch.absolute, torch.multiply, ...)
  ['absolute', unary('abs'), MF, 'absolute_'],
  ['negative', unary('neg'), MF, 'negative_'],
  ['sgn', unary('sign'), MF, 'sgn_'], // sign of real numbers
  ['multiply', binary('mul'), MF, 'multiply_'],
  ['subtract', binary('sub'), MF, 'subtract_'],
  ['greater', binary('gt'), MF],
  ['greaterEqual', binary('ge'), MF],
  ['less', binary('lt'), MF],
  ['lessEqual', binary('le'), MF],
  ['notEqual', binary('ne'), MF],
  ['arcsin', unary('asin'), MF, 'arcsin_'], // NumPy's names, which PyTorch also takes
  ['arccos', unary('acos'), MF, 'arccos_'],
  ['arctan', unary('atan'), MF, 'arctan_'],
  ['arcsinh', unary('asinh'), MF, 'arcsinh_'],
  ['arccosh', unary('acosh'), MF, 'arccosh_'],
  ['arctanh', unary('atanh'), MF, 'arctanh_'],
  ['arctan2', binary('atan2'), MF, 'arctan2_'],
  ['moveaxis', keywords(['source', 'destination'], impl(arith.movedim)), MF],
  // compositions PyTorch ports reach for (js/ops/arith.js)
  ['addcmul', impl(arith.addcmul), MF, 'addcmul_'],
  ['addcdiv', impl(arith.addcdiv), MF, 'addcdiv_'],
  ['lerp', impl(arith.lerp), MF, 'lerp_'],
  ['bitwiseLeftShift', impl(arith.bitwiseLeftShift), MF, 'bitwiseLeftShift_'],
  ['bitwiseRightShift', impl(arith.bitwiseRightShift), MF, 'bitwiseRightShift_'],
  ['trunc', impl(arith.trunc), MF, 'trunc_'],
  ['fix', impl(arith.trunc), MF, 'fix_'],
  ['xlogy', impl(arith.xlogy), MF],
  ['nanToNum', impl(arith.nanToNum), MF, 'nanToNum_'],
  ['countNonzero', impl(arith.countNonzero), MF],
  ['aminmax', impl(arith.aminmax), MF],
  ['logcumsumexp', impl(arith.logcumsumexp), MF],
  ['fliplr', impl(arith.fliplr), MF],
  ['flipud', impl(arith.flipud), MF],
  ['rot90', impl(arith.rot90), MF],
  ['movedim', keywords(['source', 'destination'], impl(arith.movedim)), MF],
  ['narrowCopy', impl(arith.narrowCopy), MF],
  ['tensorSplit', impl(arith.tensorSplit), MF],
  ['hsplit', impl(arith.hsplit), MF],
  ['vsplit', impl(arith.vsplit), MF],
  ['dsplit', impl(arith.dsplit), MF],
  ['linspace', impl(arith.linspace), F],
  ['eye', impl(arith.eye), F],
  ['baddbmm', impl(arith.baddbmm), MF],
  ['mm', impl(arith.mm), MF],
  ['mv', impl(arith.mv), MF],
  ['concat', impl(cat), F], // torch.concat and torch.concatenate: cat's other names
  ['concatenate', impl(cat), F],
  ['hstack', impl(arith.hstack), F],
  ['vstack', impl(arith.vstack), F],
  ['exp2', impl(arith.exp2), MF],
  ['log2', impl(arith.log2), MF],
  ['log10', impl(arith.log10), MF],
  ['reciprocal', impl(arith.reciprocal), MF, 'reciprocal_'],
  ['frac', impl(arith.frac), MF],
  ['clampMin', impl(arith.clampMin), MF, 'clampMin_'],
  ['clampMax', impl(arith.clampMax), MF, 'clampMax_'],
  ['hypot', impl(arith.hypot), MF],
  ['logaddexp', impl(arith.logaddexp), MF],
  ['fmax', impl(arith.fmax), MF],
  ['fmin', impl(arith.fmin), MF],
  ['isclose', impl(arith.isclose), MF],
  ['allclose', impl(arith.allclose), MF],
  ['equal', impl(arith.equal), MF],
  ['broadcastTo', impl(arith.broadcastTo), MF],
  ['logit', impl(arith.logit), MF],
  ['deg2rad', impl(arith.deg2rad), MF],
  ['rad2deg', impl(arith.rad2deg), MF],
  ['nansum', impl(arith.nansum), MF],
  ['nanmean', impl(arith.nanmean), MF],
  ['trace', impl(arith.trace), M], // a method only: om.trace is the tracer
  ['diff', keywords(['n', 'dim', 'prepend', 'append'], impl(arith.diff)), MF],
  ['takeAlongDim', keywords(['indices', 'dim'], impl(arith.takeAlongDim)), MF],
];

// PyTorch's dtype categories (bool < integer < floating) and names: an in-place op writes its
// result into its tensor only when the result's category is not above the tensor's
// (torch.can_cast), so int64.add_(2.5) fails as in PyTorch instead of truncating.
const CATEGORY = { bool: 0, int64: 1, float32: 2, float64: 2 };
const TORCH_NAME = { bool: 'Bool', int64: 'Long', float32: 'Float', float64: 'Double' };

/**
 * The category of an operand: a Tensor's dtype's, or a scalar's as PyTorch's weak scalars beside
 * t (anything else 0: the op itself reports it).
 */
function category(x, t) {
  if (x instanceof Tensor) return x.isDisposed ? 0 : CATEGORY[x.dtype];
  if (typeof x === 'bigint') return 1;
  if (typeof x === 'number') return Number.isInteger(x) && CATEGORY[t.dtype] < 2 ? 1 : 2;
  return 0;
}

function castError(who, from, to) {
  return new OmError('DtypeMismatch', `${who}: result type ${TORCH_NAME[from]} can't be cast to the desired output type ${TORCH_NAME[to]}`);
}

/** The om.* functions of the table's rows, by JS name. */
export const functions = {};

for (const [name, how, on, inplace] of OPS) {
  const fn = how.build(name);
  if (on.includes(F)) {
    functions[name] = (...args) => { requireReady(name); return fn(...args); };
  }
  if (!on.includes(M)) continue;
  Object.defineProperty(Tensor.prototype, name, {
    value: function (...args) { self(this, name); return fn(this, ...args); },
    writable: true, configurable: true,
  });
  if (inplace) {
    // the op's result copied into this tensor (traced as a write)
    Object.defineProperty(Tensor.prototype, inplace, {
      value: function (...args) {
        self(this, inplace);
        // PyTorch checks the promoted type before the op (so int64.bitwiseAnd_(2.5) names the
        // cast, not float bitwise ops); logical ops give bool, which casts to anything
        const promoted = !how.promotes || name.startsWith('logical') ? 0 : category(args[0], this);
        if (promoted > CATEGORY[this.dtype]) {
          throw castError(inplace, Object.keys(CATEGORY)[promoted], this.dtype);
        }
        // an intermediate autograd needs: the op reads a copy, so its backward keeps the values it
        // saw, as PyTorch saves the original self (y.sin_() then backward; a leaf that requires
        // grad is refused by copy_). A trace records no backward: it writes in place as it is.
        const src = this.requiresGrad && !this.isLeaf && !omw.trace_active() ? this.clone() : this;
        let v;
        try {
          v = src[name](...args);
        } finally {
          if (src !== this) src.dispose();
        }
        try {
          if (CATEGORY[v.dtype] > CATEGORY[this.dtype]) throw castError(inplace, v.dtype, this.dtype); // div_'s float
          const [out, full] = [this.shape, v.shape];
          if (out.length !== full.length || out.some((d, i) => d !== full[i])) { // an operand broadcast this tensor
            throw new OmError('ShapeMismatch', `${inplace}: output with shape [${out}] doesn't match the broadcast shape [${full}]`);
          }
          return this.copy_(v);
        } finally {
          v.dispose();
        }
      },
      writable: true, configurable: true,
    });
  }
}
Object.freeze(functions);
