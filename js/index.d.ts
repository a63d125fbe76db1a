/**
 * onemodel: tensors with autograd, computed by a C library compiled to WebAssembly.
 *
 * ```js
 * import * as om from 'onemodel';
 * await om.ready();                          // once; everything after is synchronous
 * const w = om.randn([2, 1], { seed: 1 });
 * w.requiresGrad = true;
 * const loss = om.tidy(() => om.tensor([[1, 2]]).matmul(w).pow(2).sum());
 * loss.backward();                           // w.grad now holds d loss / d w
 * console.log(w.grad!.toArray());
 * loss.dispose(); w.dispose();               // or let an om.tidy() scope do it
 * ```
 *
 * Memory: every tensor is a handle to C memory that JavaScript's garbage collector does not
 * free. Call `dispose()` or make tensors inside `om.tidy()`. `om.memory()` shows what is live.
 *
 * Errors: every failure is an {@link OmError} (or {@link TraceError}) whose `kind` names it; a
 * module that cannot be loaded makes {@link ready} reject with kind 'Load'.
 *
 * Semantics follow PyTorch: broadcasting, negative dims counted from the end, views sharing
 * storage with their input.
 */

/** The element types. `int64` values come back as `bigint` from `toArray()`. `float64` holds a
 * Session's DOUBLE values; the ops docs/graph-runtime.md lists compute it, others refuse it. */
export type DType = 'float32' | 'int64' | 'bool' | 'float64';

/** Names of the error kinds (src/core/errors.def). */
export type ErrorKind =
  | 'InvalidArgument'
  | 'ShapeMismatch'
  | 'DtypeMismatch'
  | 'IndexOutOfRange'
  | 'OutOfMemory'
  | 'Autograd'
  | 'Format'
  | 'Unsupported'
  | 'Disposed'
  | 'Load'
  | TraceErrorKind;

/** The tracer's error kinds, raised as {@link TraceError}. */
export type TraceErrorKind =
  | 'UnsupportedOperation'
  | 'DataDependent'
  | 'InPlaceMutation'
  | 'NoGradInTrace'
  | 'SymbolicShape'
  | 'InvalidUsage';

/** A number given where a tensor may be: booleans count as 0/1, bigints are converted. */
export type Scalar = number | boolean | bigint;

/** A tensor operand: a Tensor, or a scalar turned into a 0-d tensor of the other operand's dtype. */
export type TensorLike = Tensor | Scalar;

/** Nested arrays of scalars, typed arrays, or a single scalar (array-likes that are neither
 *  an Array nor a typed array are refused). */
export type TensorData =
  | Scalar
  | Float32Array
  | Float64Array
  | Int32Array
  | Uint8Array
  | BigInt64Array
  | BigUint64Array
  | ReadonlyArray<TensorData>;

/** A shape: an array of sizes, or one size for a 1-D tensor. */
export type Shape = number | readonly number[];

/** A dim argument of a reduction: one dim, several, or none (all dims). */
export type Dims = number | readonly number[];
/** PyTorch's keyword arguments dim and keepdim of a reduction (x.sum(dim=-1, keepdim=True) is x.sum({ dim: -1, keepdim: true })). */
export interface DimKeywords { dim?: Dims | null; keepdim?: boolean }
/** keepdim by name after a positional dim (x.sum(-1, { keepdim: true })). */
export interface KeepdimKeyword { keepdim?: boolean }
/** torch.finfo's fields (see {@link finfo}). */
export interface FloatInfo { readonly bits: number; readonly eps: number; readonly max: number; readonly min: number; readonly tiny: number; readonly smallestNormal: number; readonly resolution: number; readonly dtype: 'float32' | 'float64' }
/** torch.iinfo's fields (see {@link iinfo}). */
export interface IntInfo { readonly bits: 64; readonly min: bigint; readonly max: bigint; readonly dtype: 'int64' }
/** torch.finfo(dtype): the limits of float32 (the default) or float64; torch.finfo(dtype).min is `finfo().min`. */
export function finfo(dtype?: 'float32' | 'float64'): FloatInfo;
/** torch.iinfo(torch.int64): its bits, min and max (BigInt). */
export function iinfo(dtype: 'int64'): IntInfo;

/**
 * The error type of the package. `kind` tells what went wrong; the message names the function
 * and the values involved (e.g. `matmul: shapes [2,3] and [4,5] do not match (3 != 4)`).
 * After any OmError the library stays usable.
 */
export class OmError extends Error {
  readonly kind: ErrorKind;
  constructor(kind: ErrorKind, message: string);
}

/** A tracer failure; its `kind` is one of the tracer's kinds. */
export class TraceError extends OmError {
  readonly kind: TraceErrorKind;
  constructor(kind: TraceErrorKind, message: string);
}

/** The package version, e.g. "0.1.0". */
export const version: string;

/** Where {@link ready} finds the package's files (for a CDN, or a bundler that put them elsewhere). */
export interface ReadyOptions {
  /**
   * The URL (a string, or a URL object) of the single-thread build's `onemodel.wasm` (selects that
   * build; browsers only). Relative URLs resolve against the page.
   */
  wasmUrl?: string | { readonly href: string };
  /**
   * Places every file the load fetches: called with the file's name (`onemodel.wasm`,
   * `onemodel-mt.wasm`, `onemodel-mt.worker.js`) and the directory of the glue that asks for it;
   * returns its URL (in Node.js, a path or a file: URL). Not together with wasmUrl.
   */
  locateFile?: (file: string, directory: string) => string;
  /**
   * true: the threaded build, or a 'Load' error where shared memory is not allowed (a page that is
   * not cross-origin isolated) or its files are missing; false: the single-thread build. Default:
   * threads where allowed, except in a bundle (which holds only the single-thread build unless the
   * page copied the threaded one: docs/install.md).
   */
  threads?: boolean;
}

/**
 * Loads the WebAssembly module. Call once and await it before anything else (which throws an
 * OmError until then). Idempotent and safe to call concurrently: every call shares one load (the
 * options of the call that starts it count). In Node.js the .wasm is read from disk; in browsers
 * it is fetched from beside the glue, or where `options` say. Node.js and cross-origin-isolated
 * pages load the threaded build (onemodel-mt.*, see {@link setNumThreads}); other pages, or where
 * its files are missing, the single-thread one. Rejects with an OmError of kind 'Load' naming the
 * URL tried, what the server sent (HTTP status, content type, first bytes) and the fix for the
 * situation recognised (Vite's dev-server pre-bundling, a bundle without the .wasm beside it, a
 * page not cross-origin isolated asking for threads, a Content-Security-Policy without
 * 'wasm-unsafe-eval', a .wasm of another version); a later call tries again. Bad options,
 * and an option it does not have (a typo such as wasmURL): kind 'InvalidArgument'.
 */
export function ready(options?: ReadyOptions): Promise<void>;

/** Options of {@link Tensor.backward}. */
export interface BackwardOptions {
  /** Keep the graph for another backward (PyTorch's retain_graph; default false). */
  retainGraph?: boolean;
}

/** What is alive in C memory. */
export interface MemoryInfo {
  /** Live C tensor handles (views and tensors held by autograd graphs count too). */
  tensors: number;
  /** Bytes of live storage. */
  bytes: number;
  /**
   * Tensors, traced models and sessions that were garbage-collected without dispose(). A
   * tensor's C memory is released then (a FinalizationRegistry; its callbacks run between tasks,
   * never inside a synchronous loop); a model's or session's is not (a leak alarm).
   */
  leaked: number;
  /** The size of WebAssembly memory in bytes: it grows, never shrinks (the high-water mark). */
  heapBytes: number;
}

/** Live tensors and bytes in C memory (use it to check that a computation frees what it makes). */
export function memory(): MemoryInfo;

/**
 * Sets how many threads the kernels (matrix products, convolutions, recurrent layers) use, this
 * one included, and returns the count now in effect: at most the cores available and 4, and 1
 * where the single-thread build loaded (a page that is not cross-origin isolated). Results are
 * the same bits for any count. OmError InvalidArgument unless n is an integer of at least 1.
 */
export function setNumThreads(n: number): number;

/** How many threads the kernels use: by default the cores available, up to 4 (1 in the single-thread build). */
export function numThreads(): number;

/** Options of {@link tensor}. */
export interface TensorOptions {
  /**
   * The dtype; inferred when omitted: numbers and Float32Array/Float64Array give float32,
   * bigints and integer typed arrays (Int32Array, BigInt64Array, ...) give int64, booleans give bool.
   */
  dtype?: DType;
  /** The shape; inferred from the nesting when omitted. Its element count must match the data's. */
  shape?: readonly number[];
  /** torch's requires_grad=True: the new leaf records for autograd (float32 only: int64 and bool are DtypeMismatch). */
  requiresGrad?: boolean;
}

/** Options of the creation functions (an unknown key is InvalidArgument: a misspelt one would otherwise be ignored). */
export interface CreationOptions {
  /** float32 by default (bool / int64 for {@link full} with a boolean / bigint value). */
  dtype?: DType;
  /** torch's requires_grad=True: the new leaf records for autograd (float32 only: int64 and bool are DtypeMismatch). */
  requiresGrad?: boolean;
}

/** Options of {@link rand} and {@link randn}. */
export interface RandomOptions {
  /**
   * With a seed, element i depends only on (seed, i): the same numbers every time, natively and
   * in WebAssembly. Without, the default generator ({@link manualSeed}) is used and advanced.
   */
  seed?: number | bigint;
  /** Only 'float32'. */
  dtype?: 'float32';
  /** torch's requires_grad=True: the new leaf records for autograd (float32 only: int64 and bool are DtypeMismatch). */
  requiresGrad?: boolean;
}

/**
 * A tensor from data: a scalar (0-d), nested arrays (shape from the nesting), or a typed array
 * (1-D unless `shape` is given). Ragged arrays, entries that are not numbers/bigints/booleans, a
 * `shape` whose element count differs from the data's, and negative or fractional sizes throw
 * an OmError of kind InvalidArgument.
 */
export function tensor(data: TensorData, options?: TensorOptions): Tensor;
/** A tensor of zeros (float32 by default). */
export function zeros(shape: Shape, options?: CreationOptions): Tensor;
/** A tensor of ones (float32 by default). */
export function ones(shape: Shape, options?: CreationOptions): Tensor;
/** torch.empty: zeros here (memory is always initialised; float32 by default). */
export function empty(shape: Shape, options?: CreationOptions): Tensor;
/** A tensor filled with value (dtype from the value's type unless given). */
export function full(shape: Shape, value: Scalar, options?: CreationOptions): Tensor;
/**
 * A 1-D tensor `start, start + step, ...` below `end` (above it for a negative step).
 * `arange(end)` starts at 0. int64 when every argument is an integer (a bigint or an integer-valued
 * number, as torch.arange of Python ints), float32 when one is fractional, or the dtype given.
 */
export function arange(end: number | bigint, options?: CreationOptions): Tensor;
export function arange(start: number | bigint, end: number | bigint, options?: CreationOptions): Tensor;
export function arange(start: number | bigint, end: number | bigint, step: number | bigint, options?: CreationOptions): Tensor;
/** Uniform float32 values in [0, 1). */
export function rand(shape: Shape, options?: RandomOptions): Tensor;
/** Standard normal float32 values (mean 0, standard deviation 1). */
export function randn(shape: Shape, options?: RandomOptions): Tensor;
/** Resets the default generator used by rand/randn without a seed. */
export function manualSeed(seed: number | bigint): void;
/**
 * torch.zeros_like and its kin: a new tensor of input's shape and dtype (`options.dtype` another).
 * Traced, input's symbolic sizes stay symbolic (as `om.zeros(x.shape)`); randLike/randnLike are
 * refused at a size that changes (SymbolicShape), as rand/randn.
 */
export function zerosLike(input: Tensor, options?: CreationOptions): Tensor;
export function onesLike(input: Tensor, options?: CreationOptions): Tensor;
/** fillValue converted to input's dtype (or `options.dtype`). */
export function fullLike(input: Tensor, fillValue: Scalar, options?: CreationOptions): Tensor;
/** Zeros here: memory is always initialised. */
export function emptyLike(input: Tensor, options?: CreationOptions): Tensor;
/** Uniform in [0, 1); float32 only (another dtype is InvalidArgument). */
export function randLike(input: Tensor, options?: RandomOptions): Tensor;
/** Standard normal; float32 only. */
export function randnLike(input: Tensor, options?: RandomOptions): Tensor;

/** Joins tensors along an existing dim (default 0). */
export function cat(tensors: readonly Tensor[], dim?: number): Tensor;
export function cat(tensors: readonly Tensor[], options: { dim?: number }): Tensor;
/** Stacks tensors of one shape along a new dim (default 0). */
export function stack(tensors: readonly Tensor[], dim?: number): Tensor;
export function stack(tensors: readonly Tensor[], options: { dim?: number }): Tensor;
/** torch.roll: a copy with each dims[k] rotated by shifts[k] (elements past the end come back at
 *  the start; any shift, negative or beyond the size); without dims, the flattened tensor rotated
 *  by one shift and reshaped back. Differentiable. */
export function roll(input: Tensor, shifts: number | readonly number[], dims?: number | readonly number[]): Tensor;
export function roll(input: Tensor, options: { shifts: number | readonly number[]; dims?: number | readonly number[] }): Tensor;
/** torch.meshgrid: for 0-d or 1-D tensors of one dtype, one tensor per input of the grid's shape
 *  (their sizes in order; indexing 'xy': the first two swapped), each its input's values along its
 *  dim (views of the inputs). Differentiable. */
export function meshgrid(tensors: readonly Tensor[], options?: { indexing?: 'ij' | 'xy' }): Tensor[];
/** PyTorch's advanced-indexing read `x[i, j, ...]`: int64 index tensors for input's first dims,
 *  broadcast together to B; the result is B + input's other dims. Negative indices count from the
 *  end; each in [-size, size). `x[torch.arange(b), idx]` is
 *  `x.index([om.arange(b), idx])`. One bool tensor of input's leading sizes is `x[mask]`: the
 *  rows at its true places, [count, ...input's other dims] (count decided by the values: a mask
 *  computed from a traced input is DataDependent). Differentiable in input. */
export function index(input: Tensor, indices: Tensor | readonly Tensor[]): Tensor;
/** torch.index_put: a copy of input with values (a Tensor of input's dtype, or a number) written
 *  (accumulate: added; bool: or-ed) at the positions the int64 index tensors, broadcast
 *  together, pick in input's first dims; each index in [-size, size). PyTorch's `x[i, j] = v` is
 *  `x.indexPut_([i, j], v)`; one bool index of input's leading sizes is `x[mask] = v`. Differentiable
 *  in input and values. */
export function indexPut(input: Tensor, indices: Tensor | readonly Tensor[], values: Tensor | Scalar, accumulate?: boolean): Tensor;
/** torch.masked_scatter: a copy of input whose places where mask (bool, broadcast with input) is
 *  true take source's elements in row-major order (source: input's dtype, at least as many
 *  elements as true places). Differentiable in input and source. */
export function maskedScatter(input: Tensor, mask: Tensor, source: Tensor): Tensor;
/** torch.nonzero: the int64 index tuples [count, ndim] of input's nonzero elements (NaN too),
 *  row-major; asTuple: one int64 [count] tensor per dim. count is decided by the values: a traced
 *  input is TraceError DataDependent. */
export function nonzero(input: Tensor): Tensor;
export function nonzero(input: Tensor, options: { asTuple: true }): Tensor[];
export function nonzero(input: Tensor, options?: { asTuple?: boolean }): Tensor | Tensor[];
/** torch.argwhere: {@link nonzero}'s [count, ndim]. */
export function argwhere(input: Tensor): Tensor;
/** torch.masked_select: input's elements where mask (bool, broadcast with input) is true, 1-D in
 *  row-major order. Differentiable in input; a mask computed from a traced input is DataDependent. */
export function maskedSelect(input: Tensor, mask: Tensor): Tensor;
/** torch.einsum: letters name dims, '...' the dims no letter names (broadcast), '->' the output
 *  (omitted: the labels used once, alphabetically, after '...'); labels missing from the output
 *  are summed, one repeated in an operand takes its diagonal. Differentiable. */
export function einsum(equation: string, ...operands: Tensor[]): Tensor;
export function einsum(equation: string, operands: readonly Tensor[]): Tensor;
/** torch.cdist: the p-norm distance of every row pair of x1 [..., P, M] and x2 [..., R, M] ->
 *  [..., P, R] (float32; p >= 0 or Infinity, default 2). computeMode as PyTorch's: by default p = 2
 *  uses the matmul form when P or R exceeds 25. A zero distance has a zero gradient. */
export function cdist(x1: Tensor, x2: Tensor, p?: number, options?: {
  computeMode?: 'use_mm_for_euclid_dist_if_necessary' | 'use_mm_for_euclid_dist' | 'donot_use_mm_for_euclid_dist';
}): Tensor;
/** torch.square(x): x * x. */
export function square(input: Tensor): Tensor;
/** torch.isnan / isinf / isfinite: where input is NaN / +-inf / neither, as bool. */
export function isnan(input: Tensor): Tensor;
export function isinf(input: Tensor): Tensor;
export function isfinite(input: Tensor): Tensor;
/** Options of var and std: PyTorch's correction (default 1: divide by N - 1), or its keyword unbiased (true: 1, false: 0), not both; and keepdim. */
export interface VarOptions { correction?: number; unbiased?: boolean; keepdim?: boolean }
/** torch.var(input, dim, unbiased = true, keepdim = false) or torch.var(input, dim, { correction, keepdim }) (float32). */
declare function variance(input: Tensor, dim?: Dims | null, unbiased?: boolean | VarOptions, keepdim?: boolean): Tensor;
export { variance as var };
/** torch.std: the square root of var, with var's arguments. */
export function std(input: Tensor, dim?: Dims | null, unbiased?: boolean | VarOptions, keepdim?: boolean): Tensor;
/** torch.all / torch.any over dim (all dims when none), as bool: every (any) element nonzero. */
export function all(input: Tensor, dim?: Dims | null, keepdim?: boolean): Tensor;
export function all(input: Tensor, options: DimKeywords): Tensor;
export function all(input: Tensor, dim: Dims | null, options: KeepdimKeyword): Tensor;
export function any(input: Tensor, dim?: Dims | null, keepdim?: boolean): Tensor;
export function any(input: Tensor, options: DimKeywords): Tensor;
export function any(input: Tensor, dim: Dims | null, options: KeepdimKeyword): Tensor;
/** torch.logsumexp(input, dim, keepdim): log(sum(exp(input))) over dim, computed shifted by the max. */
export function logsumexp(input: Tensor, dim: Dims, keepdim?: boolean): Tensor;
export function logsumexp(input: Tensor, options: DimKeywords): Tensor;
export function logsumexp(input: Tensor, dim: Dims | null, options: KeepdimKeyword): Tensor;
/** torch.bmm: [B, n, m] @ [B, m, p], both 3-D with one batch size (no broadcast). */
export function bmm(input: Tensor, mat2: Tensor): Tensor;
/** torch.outer(a [n], b [m]) -> [n, m]. */
export function outer(input: Tensor, vec2: Tensor): Tensor;
/** torch.dot(a [n], b [n]) -> 0-d. */
export function dot(input: Tensor, other: Tensor): Tensor;
/** torch.norm(input, p = 'fro', dim, keepdim): 2/'fro', 1, Infinity, -Infinity, 0 or any p > 0 (float32); a zero norm has a zero gradient. */
export function norm(input: Tensor, p?: number | 'fro', dim?: Dims | null, keepdim?: boolean): Tensor;
export function norm(input: Tensor, options: { p?: number | 'fro'; dim?: Dims | null; keepdim?: boolean }): Tensor;
/** `condition ? input : other` elementwise with broadcasting; condition is a bool tensor. */
export function where(condition: Tensor, input: TensorLike, other: TensorLike): Tensor;
/** torch.where(condition) alone: {@link nonzero}(condition, { asTuple: true }). */
export function where(condition: Tensor): Tensor[];
/** Matrix product with PyTorch's rules (1-D operands, broadcast batch dims). */
export function matmul(input: Tensor, other: Tensor): Tensor;

// ---- elementwise math as functions (torch.sin(x), ...; the Tensor methods of the same names) ----
/** Sine (integers promoted to float32, as every function here). */
export function sin(input: Tensor): Tensor;
/** Cosine. */
export function cos(input: Tensor): Tensor;
/** Tangent. */
export function tan(input: Tensor): Tensor;
/** Arcsine (NaN outside [-1, 1]). */
export function asin(input: Tensor): Tensor;
/** Arccosine (NaN outside [-1, 1]). */
export function acos(input: Tensor): Tensor;
/** Arctangent. */
export function atan(input: Tensor): Tensor;
/** Hyperbolic sine. */
export function sinh(input: Tensor): Tensor;
/** Hyperbolic cosine. */
export function cosh(input: Tensor): Tensor;
/** Inverse hyperbolic sine. */
export function asinh(input: Tensor): Tensor;
/** Inverse hyperbolic cosine (NaN below 1). */
export function acosh(input: Tensor): Tensor;
/** Inverse hyperbolic tangent (NaN outside [-1, 1]). */
export function atanh(input: Tensor): Tensor;
/** torch.atan2(input, other): the angle of the point (other, input) in [-pi, pi] (float32). */
export function atan2(input: TensorLike, other: TensorLike): Tensor;
/** NumPy's names, which PyTorch also takes: {@link asin}, {@link acos}, {@link atan}, {@link asinh}, {@link acosh}, {@link atanh}, {@link atan2}. */
export function arcsin(input: Tensor): Tensor;
export function arccos(input: Tensor): Tensor;
export function arctan(input: Tensor): Tensor;
export function arcsinh(input: Tensor): Tensor;
export function arccosh(input: Tensor): Tensor;
export function arctanh(input: Tensor): Tensor;
export function arctan2(input: TensorLike, other: TensorLike): Tensor;
/** Elementwise minimum; NaN where either is NaN. */
export function minimum(input: TensorLike, other: TensorLike): Tensor;
/** Elementwise maximum; NaN where either is NaN. */
export function maximum(input: TensorLike, other: TensorLike): Tensor;
/** input - trunc(input / other) * other: the sign of input (float32, int64; an integer divisor of 0 is InvalidArgument, as PyTorch raises). */
export function fmod(input: TensorLike, other: TensorLike): Tensor;
/** input - floor(input / other) * other: the sign of other, Python's % (float32, int64). */
export function remainder(input: TensorLike, other: TensorLike): Tensor;
/** The largest integer <= input (float32, float64; int64 is kept, as PyTorch). */
export function floor(input: Tensor): Tensor;
/** The smallest integer >= input (float32, float64; int64 is kept). */
export function ceil(input: Tensor): Tensor;
/** The nearest integer, halves to even as torch.round (float32, float64; int64 is kept). */
export function round(input: Tensor): Tensor;
/** Both true (nonzero, of any dtype), as bool. */
export function logicalAnd(input: TensorLike, other: TensorLike): Tensor;
/** Either true, as bool. */
export function logicalOr(input: TensorLike, other: TensorLike): Tensor;
/** Exactly one true, as bool. */
export function logicalXor(input: TensorLike, other: TensorLike): Tensor;
/** input == 0, as bool (NaN is true). */
export function logicalNot(input: Tensor): Tensor;
/** input & other (int64, bool; float32 is DtypeMismatch). */
export function bitwiseAnd(input: TensorLike, other: TensorLike): Tensor;
/** input | other (int64, bool). */
export function bitwiseOr(input: TensorLike, other: TensorLike): Tensor;
/** input ^ other (int64, bool). */
export function bitwiseXor(input: TensorLike, other: TensorLike): Tensor;
/** ~input (int64; bool: logical not). */
export function bitwiseNot(input: Tensor): Tensor;
/** PyTorch's (values, indices) named tuple: `const [v, i] = x.topk(3)`, or `x.topk(3).values`. */
export type ValuesIndices = [values: Tensor, indices: Tensor] & { readonly values: Tensor; readonly indices: Tensor };

/** Options of {@link topk}, given positionally after k or as this object. */
export interface TopkOptions {
  /** Default -1. */
  dim?: number;
  /** The largest (default) or the smallest. */
  largest?: boolean;
  /** Always sorted (false allows that order too). */
  sorted?: boolean;
}
/** Options of {@link sort} and {@link argsort}, given positionally or as this object. */
export interface SortOptions {
  /** Default -1. */
  dim?: number;
  /** Largest first (default false). */
  descending?: boolean;
  /** Always stable (false allows that order too). */
  stable?: boolean;
}
/** torch.topk: `[values, indices]` (int64) of the k largest (or smallest) along dim, sorted; a NaN
 *  ranks above every number, equal values in index order. The values' gradient goes back to where
 *  they came from. */
export function topk(input: Tensor, k: number | bigint, dim?: number, largest?: boolean, sorted?: boolean): ValuesIndices;
export function topk(input: Tensor, k: number | bigint, options: TopkOptions): ValuesIndices;
/** torch.multinomial's keyword arguments: replacement (default false) and seed (a torch.Generator's; default: om.manualSeed's stream). */
export interface MultinomialOptions { replacement?: boolean; seed?: number | bigint }
/**
 * torch.multinomial: numSamples int64 category indices per row of input (1-D or 2-D non-negative
 * float32 weights), each drawn with probability proportional to its weight; without replacement
 * each index at most once, in draw order. PyTorch's distribution from om.rand's stream (not
 * PyTorch's numbers); eager only (a traced input is TraceError UnsupportedOperation).
 */
export function multinomial(input: Tensor, numSamples: number | bigint, replacement?: boolean): Tensor;
export function multinomial(input: Tensor, numSamples: number | bigint, options: MultinomialOptions): Tensor;
/** torch.sort (stable): `[values, indices]` along dim (default -1), ascending unless descending. */
export function sort(input: Tensor, dim?: number, descending?: boolean): ValuesIndices;
export function sort(input: Tensor, options: SortOptions): ValuesIndices;
/** torch.argsort (stable): the int64 indices of {@link sort}. */
export function argsort(input: Tensor, dim?: number, descending?: boolean): Tensor;
export function argsort(input: Tensor, options: SortOptions): Tensor;
/** torch.searchsorted: int64, for each value the index in sortedSequence (1-D, or the values'
 *  leading dims and one more) where it goes; after its equals with right or side 'right'. */
export function searchsorted(sortedSequence: Tensor, values: Tensor, options?: { right?: boolean; side?: 'left' | 'right'; outInt32?: false }): Tensor;
/**
 * torch.bucketize: searchsorted(boundaries, input) with 1-D boundaries; input a number for a 0-d
 * result. outInt32: true is DtypeMismatch (the library has no int32), false keeps int64.
 */
export function bucketize(input: Tensor | number | bigint, boundaries: Tensor, options?: { right?: boolean; outInt32?: false }): Tensor;
/** torch.repeat_interleave: each element along dim repeated (a count, or an int64 tensor of one
 *  count per element); without dim, of the flattened input. Differentiable. */
export function repeatInterleave(input: Tensor, repeats: number | bigint | Tensor, dim?: number | null): Tensor;
export function repeatInterleave(input: Tensor, options: { repeats: number | bigint | Tensor; dim?: number | null }): Tensor;
/** torch.repeat_interleave(repeats): a 1-D int64 tensor of counts -> int64, index i repeated repeats[i] times. */
export function repeatInterleave(repeats: Tensor): Tensor;
/** torch.tril_indices: int64 [2, n], the rows and columns of the lower triangle, row by row. */
export function trilIndices(row: number | bigint, col: number | bigint, offset?: number | bigint): Tensor;
/** torch.triu_indices: int64 [2, n], the rows and columns of the upper triangle, row by row. */
export function triuIndices(row: number | bigint, col: number | bigint, offset?: number | bigint): Tensor;
/** torch.pixel_shuffle (also om.nn.functional.pixelShuffle): [..., C r^2, H, W] -> [..., C, H r, W r]. */
export function pixelShuffle(input: Tensor, upscaleFactor: number | bigint): Tensor;
/** torch.pixel_unshuffle: [..., C, H r, W r] -> [..., C r^2, H, W]. */
export function pixelUnshuffle(input: Tensor, downscaleFactor: number | bigint): Tensor;
/** torch.slice_scatter(input, src, dim, start, end, step): see {@link Tensor.sliceScatter}. */
export function sliceScatter(input: Tensor, src: Tensor, dim?: number, start?: number | null, end?: number | null, step?: number): Tensor;
/** torch.select_scatter(input, src, dim, index): see {@link Tensor.selectScatter}. */
export function selectScatter(input: Tensor, src: Tensor, dim: number, index: number): Tensor;
/** torch.addmm: beta * input + alpha * (mat1 @ mat2) for matrices (defaults 1, 1; beta 0 ignores input). */
export function addmm(input: Tensor, mat1: Tensor, mat2: Tensor, options?: { beta?: number; alpha?: number }): Tensor;
/** torch.split: {@link Tensor.split} as a function. */
export function split(input: Tensor, splitSizeOrSections: number | bigint | readonly (number | bigint)[], dim?: number): Tensor[];
export function split(input: Tensor, splitSizeOrSections: number | bigint | readonly (number | bigint)[], options: { dim?: number }): Tensor[];
/** torch.chunk: {@link Tensor.chunk} as a function. */
export function chunk(input: Tensor, chunks: number | bigint, dim?: number): Tensor[];
export function chunk(input: Tensor, chunks: number | bigint, options: { dim?: number }): Tensor[];
/** torch.unbind: {@link Tensor.unbind} as a function. */
export function unbind(input: Tensor, dim?: number): Tensor[];
/** torch.tril: {@link Tensor.tril} as a function. */
export function tril(input: Tensor, k?: number): Tensor;
export function tril(input: Tensor, options: { diagonal?: number }): Tensor;
/** torch.triu: {@link Tensor.triu} as a function. */
export function triu(input: Tensor, k?: number): Tensor;
export function triu(input: Tensor, options: { diagonal?: number }): Tensor;
/** torch.flatten: {@link Tensor.flatten} as a function. */
export function flatten(input: Tensor, startDim?: number, endDim?: number): Tensor;
export function flatten(input: Tensor, options: { startDim?: number; endDim?: number }): Tensor;
/** torch.permute: {@link Tensor.permute} as a function. */
export function permute(input: Tensor, ...dims: number[]): Tensor;
export function permute(input: Tensor, dims: readonly number[]): Tensor;
/** torch.transpose: {@link Tensor.transpose} as a function. */
export function transpose(input: Tensor, dim0: number, dim1: number): Tensor;
export function transpose(input: Tensor, options: { dim0: number; dim1: number }): Tensor;
/** torch.swapaxes: {@link Tensor.transpose} under NumPy's name. */
export function swapaxes(input: Tensor, dim0: number, dim1: number): Tensor;
/** torch.swapdims: {@link Tensor.transpose} under another name. */
export function swapdims(input: Tensor, dim0: number, dim1: number): Tensor;
/** torch.unsqueeze: {@link Tensor.unsqueeze} as a function. */
export function unsqueeze(input: Tensor, dim: number): Tensor;
export function unsqueeze(input: Tensor, options: { dim: number }): Tensor;

/**
 * Runs fn with autograd recording off and returns its result; the previous mode is restored
 * even when fn throws. Use it for parameter updates. While a trace records it throws
 * {@link TraceError} NoGradInTrace (and the trace ends): results computed inside would be
 * frozen into the graph.
 */
export function noGrad<T>(fn: () => T): T;

/**
 * Runs fn and disposes every tensor created inside it except those in its result (a Tensor, or
 * arrays / plain objects holding tensors, searched deeply). Kept tensors move to the enclosing
 * scope (a tidy or a Module's forward call), if any. fn must be synchronous. Tensors made before
 * the call are not touched.
 */
export function tidy<T>(fn: () => T): T;

/**
 * Takes t out of every scope (om.tidy, Module forward calls): none disposes it when it ends; from
 * then on dispose() or the garbage collector frees it. Returns t.
 */
export function keep<T extends Tensor>(t: T): T;

/** Disposes a Tensor, or every Tensor found in an array or plain object (deeply). */
export function dispose(tensors: Tensor | readonly unknown[] | Record<string, unknown>): void;

/**
 * A handle to a tensor in C memory. Make tensors with {@link tensor}, {@link zeros}, ... (the
 * constructor is private). Free them with {@link Tensor.dispose} or inside {@link tidy}. Every
 * method returns a new Tensor (views share storage with their input) except the in-place ones,
 * whose names end in `_` and which return `this`. After dispose(), any use throws an OmError of
 * kind 'Disposed' naming the method.
 */
export class Tensor {
  private constructor();

  /** The sizes of the dims (a fresh array). */
  readonly shape: number[];
  /** The element type. */
  readonly dtype: DType;
  /** Number of dims. */
  readonly ndim: number;
  /** PyTorch's x.T: the dims reversed (a matrix's transpose), a view. */
  readonly T: Tensor;
  /** PyTorch's x.mT: the last two dims swapped, a view (fewer than 2 dims: ShapeMismatch). */
  readonly mT: Tensor;
  /** PyTorch's x.data: detach(), sharing storage (x.data.normal_(...) writes a parameter outside autograd). */
  readonly data: Tensor;
  /**
   * PyTorch's size(): the shape (a fresh array); size(dim): one dim's size (negative counts from
   * the end; out of range: IndexOutOfRange). Not a number: arithmetic on `x.size` throws (numel()
   * is the element count).
   */
  readonly size: { (): number[]; (dim: number): number };
  /** True once dispose() ran. Never throws. */
  readonly isDisposed: boolean;
  /** True when no recorded op made this tensor. */
  readonly isLeaf: boolean;
  /** The storage's version counter: every in-place change bumps it. */
  readonly version: number;

  /**
   * Whether autograd tracks this tensor. Setting it is allowed only on leaves (kind
   * InvalidArgument otherwise) of dtype float32 (kind DtypeMismatch otherwise).
   */
  requiresGrad: boolean;

  /**
   * The accumulated gradient (after backward()), or null.
   *
   * Ownership: the returned Tensor belongs to this tensor; do not dispose it. Reading `grad`
   * again returns the same object while C holds the same gradient; when the gradient is
   * replaced, the old wrapper is disposed and a new one returned. zeroGrad() and dispose()
   * dispose it. It is not tracked by {@link tidy}. Keep the values beyond that with clone().
   */
  readonly grad: Tensor | null;

  /** A fresh copy of the elements in row-major order (never a view into WebAssembly memory). */
  toArray(): Float32Array | BigInt64Array | Uint8Array | Float64Array;
  /** The value of a one-element tensor (int64 as a number; bool as 0 or 1). */
  item(): number;
  /** PyTorch's x.tolist(): nested arrays of the shape (0-d: the value); numbers (an int64 past 2^53 is InvalidArgument), booleans for bool. */
  tolist(): unknown;
  /** Tensor.normal_(mean = 0, std = 1) in place (float32; as copy_ writes, so a leaf that requires grad is refused outside om.noGrad). */
  normal_(mean?: number, std?: number): this;
  normal_(options: { mean?: number; std?: number }): this;
  /** Tensor.uniform_(from = 0, to = 1) in place, values in [from, to) (float32; as normal_). */
  uniform_(from?: number, to?: number): this;
  uniform_(options: { from?: number; to?: number }): this;
  /** PyTorch-like text, e.g. `tensor([[1., 2.]], dtype=float32)`. Does not throw when disposed. */
  toString(): string;

  // ---- elementwise (broadcasting; dtypes promote as PyTorch's torch.result_type: bool < int64 <
  // float32. A number is a float beside float32, and beside int64 or bool an int when it is an
  // integer (x.add(1) keeps int64), else a float; a bigint is an int, a boolean a bool) ----
  /** this + other. */
  add(other: TensorLike): Tensor;
  /** this - other. */
  sub(other: TensorLike): Tensor;
  /** this * other. */
  mul(other: TensorLike): Tensor;
  /** this / other: true division, float32 (integers too); with roundingMode 'trunc' or 'floor' rounded (integers stay int64). See {@link div}. */
  div(other: TensorLike, options?: DivOptions): Tensor;
  /** this ** exponent (float32; int64 ** int64 is int64). */
  pow(exponent: TensorLike): Tensor;
  /** -this. */
  neg(): Tensor;
  /** |this|. */
  abs(): Tensor;
  /** -1, 0 or 1. */
  sign(): Tensor;
  /** The largest integer <= this (float32; int64 is kept), and {@link floor}'s kin. */
  floor(): Tensor;
  /** The smallest integer >= this. */
  ceil(): Tensor;
  /** The nearest integer, halves to even (torch.round). */
  round(): Tensor;
  /** e ** this (float32; int64 and bool are promoted to float32). */
  exp(): Tensor;
  /** Natural logarithm (float32; int64 and bool are promoted to float32). */
  log(): Tensor;
  /** Square root (float32; int64 and bool are promoted to float32). */
  sqrt(): Tensor;
  /** 1 / sqrt(this) (float32; int64 and bool are promoted to float32). */
  rsqrt(): Tensor;
  /** max(this, 0). */
  relu(): Tensor;
  /** 1 / (1 + e ** -this) (float32; int64 and bool are promoted to float32). */
  sigmoid(): Tensor;
  /** Hyperbolic tangent (float32; int64 and bool are promoted to float32). */
  tanh(): Tensor;
  /** this == other, as bool. */
  eq(other: TensorLike): Tensor;
  /** torch.logical_not (`~mask`): this == 0, as bool. */
  logicalNot(): Tensor;
  logicalNot_(): this;
  /** Sine (float32; integers promoted), and the rest of the functions of {@link sin} and its kin. */
  sin(): Tensor;
  cos(): Tensor;
  tan(): Tensor;
  asin(): Tensor;
  acos(): Tensor;
  atan(): Tensor;
  sinh(): Tensor;
  cosh(): Tensor;
  asinh(): Tensor;
  acosh(): Tensor;
  atanh(): Tensor;
  arcsin(): Tensor;
  arccos(): Tensor;
  arctan(): Tensor;
  arcsinh(): Tensor;
  arccosh(): Tensor;
  arctanh(): Tensor;
  /**
   * In place (x.sin_(), ...): the result written into this tensor, which must hold its dtype
   * (an int64 tensor's sin_ is DtypeMismatch, as PyTorch's).
   */
  sin_(): this;
  cos_(): this;
  tan_(): this;
  asin_(): this;
  acos_(): this;
  atan_(): this;
  sinh_(): this;
  cosh_(): this;
  asinh_(): this;
  acosh_(): this;
  atanh_(): this;
  arcsin_(): this;
  arccos_(): this;
  arctan_(): this;
  arcsinh_(): this;
  arccosh_(): this;
  arctanh_(): this;
  /**
   * More in-place forms ports write (x.relu_(), x.clamp_(min=0), x.mul_(...) is mul_): the result
   * written into this tensor, which must hold its dtype (int64's sqrt_ is DtypeMismatch).
   */
  neg_(): this;
  negative_(): this;
  abs_(): this;
  absolute_(): this;
  sign_(): this;
  sgn_(): this;
  floor_(): this;
  ceil_(): this;
  round_(): this;
  exp_(): this;
  log_(): this;
  sqrt_(): this;
  rsqrt_(): this;
  relu_(): this;
  sigmoid_(): this;
  tanh_(): this;
  erf_(): this;
  square_(): this;
  reciprocal_(): this;
  pow_(exponent: TensorLike): this;
  clamp_(min?: number | bigint | Tensor | null, max?: number | bigint | Tensor | null): this;
  clamp_(options: ClampOptions): this;
  clip_(min?: number | bigint | Tensor | null, max?: number | bigint | Tensor | null): this;
  clip_(options: ClampOptions): this;
  clampMin_(min: number | bigint | Tensor): this;
  clampMax_(max: number | bigint | Tensor): this;
  /** torch.atan2(this, other). */
  atan2(other: TensorLike): Tensor;
  arctan2(other: TensorLike): Tensor;
  atan2_(other: TensorLike): this;
  arctan2_(other: TensorLike): this;
  minimum(other: TensorLike): Tensor;
  maximum(other: TensorLike): Tensor;
  /** C's fmod: the sign of this. */
  fmod(other: TensorLike): Tensor;
  fmod_(other: TensorLike): this;
  /** Python's %: the sign of other. */
  remainder(other: TensorLike): Tensor;
  remainder_(other: TensorLike): this;
  /** torch.where(condition, this, other), PyTorch's method order. */
  where(condition: Tensor, other: TensorLike): Tensor;
  logicalAnd(other: TensorLike): Tensor;
  logicalOr(other: TensorLike): Tensor;
  logicalXor(other: TensorLike): Tensor;
  /** this & other (int64, bool). */
  bitwiseAnd(other: TensorLike): Tensor;
  bitwiseOr(other: TensorLike): Tensor;
  bitwiseXor(other: TensorLike): Tensor;
  bitwiseNot(): Tensor;
  bitwiseNot_(): this;
  /** this != other, as bool. */
  ne(other: TensorLike): Tensor;
  /** this < other, as bool. */
  lt(other: TensorLike): Tensor;
  /** this <= other, as bool. */
  le(other: TensorLike): Tensor;
  /** this > other, as bool. */
  gt(other: TensorLike): Tensor;
  /** this >= other, as bool. */
  ge(other: TensorLike): Tensor;

  // ---- dtype ----
  /** A converted copy (a new handle to the same tensor when the dtype already matches). */
  to(dtype: DType): Tensor;
  /** to('float32'). */
  float(): Tensor;
  /** to('int64'). */
  long(): Tensor;
  /** to('bool'). */
  bool(): Tensor;
  /** to('float64'). */
  double(): Tensor;

  // ---- shapes and views ----
  /** The same elements in a new shape (one size may be -1); a view when possible, else a copy. */
  reshape(...shape: number[]): Tensor;
  reshape(shape: readonly number[]): Tensor;
  /** Same as reshape() (it copies when the strides do not allow a view). */
  view(...shape: number[]): Tensor;
  view(shape: readonly number[]): Tensor;
  /** A view with the dims reordered: result dim i is dim dims[i]. */
  permute(...dims: number[]): Tensor;
  permute(dims: readonly number[]): Tensor;
  /** A view with two dims swapped. */
  transpose(dim0: number, dim1: number): Tensor;
  transpose(options: { dim0: number; dim1: number }): Tensor;
  /** torch's swapaxes: transpose(dim0, dim1). */
  swapaxes(dim0: number, dim1: number): Tensor;
  /** torch's swapdims: transpose(dim0, dim1). */
  swapdims(dim0: number, dim1: number): Tensor;
  /** A broadcast view (size-1 dims stretch, -1 keeps a size, new dims lead). */
  expand(...shape: number[]): Tensor;
  expand(shape: readonly number[]): Tensor;
  /**
   * A view of `this[start:end:step]` along dim. Defaults: start 0, end the dim's size (any
   * larger end, e.g. Infinity, clamps), step 1. Negative start/end count from the end.
   */
  slice(dim: number, start?: number | null, end?: number | null, step?: number): Tensor;
  /** `this.slice(dim, start, start + length)`, as PyTorch's narrow: start may count from the end,
   *  start + length must not pass the dim's size. */
  narrow(dim: number, start: number, length: number): Tensor;
  narrow(options: { dim: number; start: number; length: number }): Tensor;
  /** A view of index `index` along dim, which drops that dim. */
  select(dim: number, index: number): Tensor;
  select(options: { dim: number; index: number }): Tensor;
  /** torch.Tensor.unfold: a view of every window of `size` elements along `dimension`, `step`
   *  apart, as a new last dim; `dimension` becomes the windows' count, (n - size) / step + 1
   *  (not nn.functional.unfold, which is im2col). */
  unfold(dimension: number, size: number, step: number): Tensor;
  /**
   * torch.slice_scatter: a copy of this tensor with src written into `this[start:end:step]`
   * along dim (bounds as slice takes them; src has that slice's shape and this dtype). The
   * in-place form is `this.slice(dim, start, end, step).copy_(src)`.
   */
  sliceScatter(src: Tensor, dim?: number, start?: number | null, end?: number | null, step?: number): Tensor;
  /** torch.select_scatter: a copy with src (select(dim, index)'s shape) written at index along
   *  dim. In place: `this.select(dim, index).copy_(src)`. */
  selectScatter(src: Tensor, dim: number, index: number): Tensor;
  /** torch.roll: see {@link roll}. */
  roll(shifts: number | readonly number[], dims?: number | readonly number[]): Tensor;
  roll(options: { shifts: number | readonly number[]; dims?: number | readonly number[] }): Tensor;
  /** A view without the given size-1 dims (all of them when dims is omitted). */
  squeeze(dims?: Dims): Tensor;
  squeeze(options: { dim?: Dims }): Tensor;
  /** A view with a new size-1 dim at dim. */
  unsqueeze(dim: number): Tensor;
  unsqueeze(options: { dim: number }): Tensor;
  /** This tensor's data in row-major order (a new handle to it when already contiguous). */
  contiguous(): Tensor;
  /** A contiguous copy that autograd tracks. */
  clone(): Tensor;
  /** Picks along dim by a 1-D int64 index (torch.index_select); indices outside [0, size) throw IndexOutOfRange. */
  indexSelect(dim: number, index: Tensor): Tensor;
  indexSelect(options: { dim: number; index: Tensor }): Tensor;
  /** out[p] = this[p with p[dim] = index[p]] (torch.gather; index int64 of this rank). */
  gather(dim: number, index: Tensor): Tensor;
  gather(options: { dim: number; index: Tensor }): Tensor;
  gather(dim: number, options: { index: Tensor }): Tensor;
  /** A copy with source's slices added at index along dim (torch.index_add; float32). */
  indexAdd(dim: number, index: Tensor, source: Tensor): Tensor;
  indexAdd(options: { dim: number; index: Tensor; source: Tensor }): Tensor;
  /** A copy with src[p] added at p with p[dim] = index[p] (torch.scatter_add; float32, src has index's shape). */
  scatterAdd(dim: number, index: Tensor, src: Tensor): Tensor;
  scatterAdd(options: { dim: number; index: Tensor; src: Tensor }): Tensor;
  /** torch.Tensor.scatter: see {@link scatter}. */
  scatter(dim: number, index: Tensor, src: Tensor | Scalar, options?: { reduce?: 'add' | null }): Tensor;
  /** torch.Tensor.index_fill: see {@link indexFill}. */
  indexFill(dim: number, index: Tensor, value: Scalar | Tensor): Tensor;
  indexFill(options: { dim: number; index: Tensor; value: Scalar | Tensor }): Tensor;
  /** `this.copy_(this.indexFill(...))`. */
  indexFill_(dim: number, index: Tensor, value: Scalar | Tensor): this;
  indexFill_(options: { dim: number; index: Tensor; value: Scalar | Tensor }): this;
  /** torch.Tensor.index_copy: see {@link indexCopy}. */
  indexCopy(dim: number, index: Tensor, source: Tensor): Tensor;
  indexCopy(options: { dim: number; index: Tensor; source: Tensor }): Tensor;
  /** `this.copy_(this.indexCopy(...))`. */
  indexCopy_(dim: number, index: Tensor, source: Tensor): this;
  indexCopy_(options: { dim: number; index: Tensor; source: Tensor }): this;
  /** In place: this.copy_(this.scatter(...)). */
  scatter_(dim: number, index: Tensor, src: Tensor | Scalar, options?: { reduce?: 'add' | null }): this;
  /** torch.Tensor.scatter_reduce: see {@link scatterReduce}. */
  scatterReduce(dim: number, index: Tensor, src: Tensor, reduce: ScatterReduction, options?: { includeSelf?: boolean }): Tensor;
  scatterReduce(dim: number, index: Tensor, src: Tensor, options: { reduce: ScatterReduction; includeSelf?: boolean }): Tensor;
  scatterReduce(options: ScatterReduceOptions): Tensor;
  /** In place: this.copy_(this.scatterReduce(...)). */
  scatterReduce_(dim: number, index: Tensor, src: Tensor, reduce: ScatterReduction, options?: { includeSelf?: boolean }): this;
  scatterReduce_(dim: number, index: Tensor, src: Tensor, options: { reduce: ScatterReduction; includeSelf?: boolean }): this;
  scatterReduce_(options: ScatterReduceOptions): this;
  /** PyTorch's advanced-indexing read `x[i, j, ...]`: see {@link index}. */
  index(indices: Tensor | readonly Tensor[]): Tensor;
  /** torch.index_put: see {@link indexPut}. */
  indexPut(indices: Tensor | readonly Tensor[], values: Tensor | Scalar, accumulate?: boolean): Tensor;
  /** torch.masked_scatter: see {@link maskedScatter}. */
  maskedScatter(mask: Tensor, source: Tensor): Tensor;
  /** torch.nonzero: see {@link nonzero}. */
  nonzero(): Tensor;
  nonzero(options: { asTuple: true }): Tensor[];
  nonzero(options?: { asTuple?: boolean }): Tensor | Tensor[];
  /** torch.argwhere: see {@link argwhere}. */
  argwhere(): Tensor;
  /** torch.masked_select: see {@link maskedSelect}. */
  maskedSelect(mask: Tensor): Tensor;
  /**
   * A tensor sharing this storage that autograd does not track. While a trace records, detaching
   * a traced tensor returns a new handle to the same tensor (it stays traced); dispose each
   * handle as usual.
   */
  detach(): Tensor;
  /** The transpose of a 2-D tensor (a view); a 0-d or 1-D tensor gives a new handle to itself. */
  t(): Tensor;
  /** Merges dims startDim..endDim (inclusive; default all) into one. A 0-d tensor gives shape [1]. */
  flatten(startDim?: number, endDim?: number): Tensor;
  flatten(options: { startDim?: number; endDim?: number }): Tensor;
  /**
   * torch.split: pieces of splitSize along dim (default 0), the last may be smaller; or, given a
   * list, pieces of those sizes (non-negative, summing to the dim's size). Views.
   */
  split(splitSizeOrSections: number | bigint | readonly (number | bigint)[], dim?: number): Tensor[];
  split(splitSizeOrSections: number | bigint | readonly (number | bigint)[], options: { dim?: number }): Tensor[];
  /** torch.chunk: pieces of ceil(size / chunks) along dim (possibly fewer than chunks); an empty dim gives chunks empty pieces. */
  chunk(chunks: number | bigint, dim?: number): Tensor[];
  chunk(chunks: number | bigint, options: { dim?: number }): Tensor[];
  /** torch.unbind: the slices along dim (default 0), each without that dim. */
  unbind(dim?: number): Tensor[];
  /** Zeros above diagonal k of the last two dims. */
  tril(k?: number): Tensor;
  tril(options: { diagonal?: number }): Tensor;
  /** Zeros below diagonal k of the last two dims. */
  triu(k?: number): Tensor;
  triu(options: { diagonal?: number }): Tensor;
  /** `this.copy_(this.tril(k))`: PyTorch's in-place tril_. */
  tril_(k?: number): this;
  /** `this.copy_(this.triu(k))`: PyTorch's in-place triu_ (CLIP's causal mask: `mask.fill_(min); mask.triu_(1)`). */
  triu_(k?: number): this;

  // ---- reductions (dim omitted: all dims; keepdim default false) ----
  /** Sum over dims. */
  sum(dim?: Dims | null, keepdim?: boolean): Tensor;
  sum(options: DimKeywords): Tensor;
  sum(dim: Dims | null, options: KeepdimKeyword): Tensor;
  /** Mean over dims (float32). */
  mean(dim?: Dims | null, keepdim?: boolean): Tensor;
  mean(options: DimKeywords): Tensor;
  mean(dim: Dims | null, options: KeepdimKeyword): Tensor;
  /** Maximum over dims (gradient shared between ties). */
  amax(dim?: Dims | null, keepdim?: boolean): Tensor;
  amax(options: DimKeywords): Tensor;
  amax(dim: Dims | null, options: KeepdimKeyword): Tensor;
  /** Minimum over dims (gradient shared between ties). */
  amin(dim?: Dims | null, keepdim?: boolean): Tensor;
  amin(options: DimKeywords): Tensor;
  amin(dim: Dims | null, options: KeepdimKeyword): Tensor;
  /** Without a dim: the maximum of all elements (0-d, like amax()). */
  max(): Tensor;
  /**
   * With a dim: `[values, indices]` along it (indices: int64, the first maximum). PyTorch
   * returns a named tuple (values, indices); here it is an array to destructure.
   */
  max(dim: number, keepdim?: boolean): ValuesIndices;
  max(options: { dim: number; keepdim?: boolean }): ValuesIndices;
  max(dim: number, options: KeepdimKeyword): ValuesIndices;
  /** With a tensor: the elementwise maximum (torch.max(input, other), see {@link maximum}). */
  max(other: Tensor): Tensor;
  /** Without a dim: the minimum of all elements (0-d, like amin()). */
  min(): Tensor;
  /** With a dim: `[values, indices]` of the minimum along it (see max). */
  min(dim: number, keepdim?: boolean): ValuesIndices;
  min(options: { dim: number; keepdim?: boolean }): ValuesIndices;
  min(dim: number, options: KeepdimKeyword): ValuesIndices;
  /** With a tensor: the elementwise minimum (see {@link minimum}). */
  min(other: Tensor): Tensor;
  /** torch.topk: see {@link topk}. */
  topk(k: number | bigint, dim?: number, largest?: boolean, sorted?: boolean): ValuesIndices;
  topk(k: number | bigint, options: TopkOptions): ValuesIndices;
  /** torch.Tensor.multinomial: see {@link multinomial}. */
  multinomial(numSamples: number | bigint, replacement?: boolean): Tensor;
  multinomial(numSamples: number | bigint, options: MultinomialOptions): Tensor;
  /** torch.sort (stable): see {@link sort}. */
  sort(dim?: number, descending?: boolean): ValuesIndices;
  sort(options: SortOptions): ValuesIndices;
  /** torch.argsort (stable): see {@link argsort}. */
  argsort(dim?: number, descending?: boolean): Tensor;
  argsort(options: SortOptions): Tensor;
  /** torch.repeat_interleave: see {@link repeatInterleave}. */
  repeatInterleave(repeats: number | bigint | Tensor, dim?: number | null): Tensor;
  repeatInterleave(options: { repeats: number | bigint | Tensor; dim?: number | null }): Tensor;
  /** torch.Tensor.repeat_interleave() of a 1-D int64 tensor of counts: index i repeated this[i] times. */
  repeatInterleave(): Tensor;
  /** int64 indices of the first maximum along dim; without dim, the index into the flattened tensor. */
  argmax(dim?: number | null, keepdim?: boolean): Tensor;
  argmax(options: DimKeywords): Tensor;
  argmax(dim: Dims | null, options: KeepdimKeyword): Tensor;
  /** int64 indices of the first minimum along dim; without dim, the index into the flattened tensor. */
  argmin(dim?: number | null, keepdim?: boolean): Tensor;
  argmin(options: DimKeywords): Tensor;
  argmin(dim: Dims | null, options: KeepdimKeyword): Tensor;
  /** torch.Tensor.var / std (see om.var). */
  var(dim?: Dims | null, unbiased?: boolean | VarOptions, keepdim?: boolean): Tensor;
  std(dim?: Dims | null, unbiased?: boolean | VarOptions, keepdim?: boolean): Tensor;
  /** Whether every (any) element over dim is nonzero, as bool. */
  all(dim?: Dims | null, keepdim?: boolean): Tensor;
  all(options: DimKeywords): Tensor;
  all(dim: Dims | null, options: KeepdimKeyword): Tensor;
  any(dim?: Dims | null, keepdim?: boolean): Tensor;
  any(options: DimKeywords): Tensor;
  any(dim: Dims | null, options: KeepdimKeyword): Tensor;
  /** log(sum(exp(this))) over dim. */
  logsumexp(dim: Dims, keepdim?: boolean): Tensor;
  logsumexp(options: DimKeywords): Tensor;
  logsumexp(dim: Dims | null, options: KeepdimKeyword): Tensor;
  /** The p-norm over dim (see om.norm). */
  norm(p?: number | 'fro', dim?: Dims | null, keepdim?: boolean): Tensor;
  norm(options: { p?: number | 'fro'; dim?: Dims | null; keepdim?: boolean }): Tensor;
  /** this * this. */
  square(): Tensor;
  /** Where this is NaN / +-inf / finite, as bool. */
  isnan(): Tensor;
  isinf(): Tensor;
  isfinite(): Tensor;
  /** torch.bmm, outer and dot with this first. */
  bmm(mat2: Tensor): Tensor;
  outer(vec2: Tensor): Tensor;
  dot(other: Tensor): Tensor;
  /** Expanded, viewed or reshaped to other's shape; cast to other's dtype (PyTorch's expand_as, view_as, reshape_as, type_as). */
  expandAs(other: Tensor): Tensor;
  viewAs(other: Tensor): Tensor;
  reshapeAs(other: Tensor): Tensor;
  typeAs(other: Tensor): Tensor;
  /** New tensors of this one's dtype (unless options say another): PyTorch's new_zeros, new_ones, new_full, new_tensor. */
  newZeros(shape: Shape, options?: CreationOptions): Tensor;
  newOnes(shape: Shape, options?: CreationOptions): Tensor;
  /** torch.Tensor.new_empty: zeros here, of this tensor's dtype unless options say another. */
  newEmpty(shape: Shape, options?: CreationOptions): Tensor;
  newFull(shape: Shape, value: Scalar, options?: CreationOptions): Tensor;
  newTensor(data: TensorData, options?: CreationOptions): Tensor;
  /** PyTorch's x.dim() and x.numel(): the number of dims (ndim) and of elements. */
  dim(): number;
  numel(): number;

  /** Matrix product with PyTorch's rules (1-D operands, broadcast batch dims). */
  matmul(other: Tensor): Tensor;
  /** softmax along dim (exp(x - max) / sum; row sums in double). */
  /** PyTorch's dtype argument casts this first (F.softmax(x, dim=-1, dtype=torch.float32)). */
  softmax(dim: number, dtype?: DType): Tensor;
  softmax(options: { dim: number; dtype?: DType }): Tensor;
  /** log_softmax along dim ((x - max) - log(sum(exp(x - max)))). */
  logSoftmax(dim: number, dtype?: DType): Tensor;
  logSoftmax(options: { dim: number; dtype?: DType }): Tensor;

  // ---- autograd ----
  /**
   * Back-propagates from this tensor; gradients accumulate into the leaves' `grad`. `grad` is
   * required unless this tensor has one element (kind 'Autograd' otherwise) and must have this
   * tensor's shape. Then the graph is freed (its saved values), as PyTorch does: another
   * backward through it throws 'Autograd', unless this one had `retainGraph: true`.
   */
  backward(grad?: Tensor | null, options?: BackwardOptions): void;
  backward(options: BackwardOptions): void;
  /** Drops the accumulated gradient (and disposes the `grad` wrapper). */
  zeroGrad(): void;

  // ---- in place (bump the version; return this). Into a view they write the viewed tensor
  // (`m.slice(0, a, b).fill_(v)` is PyTorch's `m[a:b] = v`); while tracing they are recorded
  // (docs/tracing.md, "Writes into tensors"). ----
  /** Every element becomes value. */
  fill_(value: Scalar): this;
  /** Every element becomes 0. */
  zero_(): this;
  /** src is broadcast and converted into this tensor (a number fills it). */
  copy_(src: Tensor | Scalar): this;
  /** The element at index (one integer in [0, size) per dim) becomes value. */
  set_(index: readonly number[], value: Scalar): this;
  /** `this.copy_(this.add(other))`: PyTorch's `+=` (`x.select(1, 0).add_(y)` is `x[:, 0] += y`). */
  add_(other: Tensor | Scalar): this;
  /** `this.copy_(this.sub(other))`. */
  sub_(other: Tensor | Scalar): this;
  /** `this.copy_(this.mul(other))`. */
  mul_(other: Tensor | Scalar): this;
  /** `this.copy_(this.div(other))`. */
  div_(other: Tensor | Scalar, options?: DivOptions): this;
  /** `this.copy_(this.logicalAnd(other))`, and the same for the other logical and bitwise ops
   * (`mask.bitwiseOr_(other)` is PyTorch's `mask |= other`). */
  logicalAnd_(other: TensorLike): this;
  logicalOr_(other: TensorLike): this;
  logicalXor_(other: TensorLike): this;
  bitwiseAnd_(other: TensorLike): this;
  bitwiseOr_(other: TensorLike): this;
  bitwiseXor_(other: TensorLike): this;
  /** `this.copy_(this.maskedFill(mask, value))`. */
  maskedFill_(mask: Tensor, value: number | bigint | boolean | Tensor): this;
  maskedFill_(options: { mask: Tensor; value: number | bigint | boolean | Tensor }): this;
  /** `this.copy_(this.maskedScatter(mask, source))`. */
  maskedScatter_(mask: Tensor, source: Tensor): this;
  /** `this.copy_(this.indexPut(indices, values, accumulate))`: PyTorch's `x[i, j] = v` (and `+=` with accumulate). */
  indexPut_(indices: Tensor | readonly Tensor[], values: Tensor | Scalar, accumulate?: boolean): this;

  /** Frees the C tensor (and its grad wrapper). Idempotent. */
  dispose(): void;
}

// ---- tracing to ONNX ---------------------------------------------------------------------------

/** Options of {@link Dim}: the sizes a symbolic axis takes (default: any size from 1). */
export interface DimOptions {
  /** Every size is a multiple of this (default 1): what a UNet's pools and upsamplings need. */
  multipleOf?: number;
  /** The smallest size (default 1). */
  min?: number;
  /** The largest size (default Infinity). */
  max?: number;
}

/** A symbolic axis with its sizes declared; make it with {@link Dim}. */
export interface SymbolicDim {
  readonly name: string;
  readonly multipleOf: number;
  readonly min: number;
  readonly max: number;
}

/**
 * A symbolic axis whose sizes are declared, for an input's axis names:
 * `['batch', null, om.Dim('h', { multipleOf: 4 }), om.Dim('w', { multipleOf: 4 })]`.
 * The example's size must be one of them. Works with or without `new`.
 */
export const Dim: {
  (name: string, options?: DimOptions): SymbolicDim;
  new (name: string, options?: DimOptions): SymbolicDim;
};

/**
 * Names of a traced input's axes, one per dim: a string (any size from 1) or a {@link Dim}
 * makes the axis symbolic (an ONNX dim_param, so the graph accepts other sizes there), null
 * keeps it fixed.
 */
export type AxisNames = readonly (string | SymbolicDim | null)[];

/** A symbolic axis of a traced model and the sizes its graph holds for ({@link TracedModel.symbols}). */
export interface TracedSymbol {
  name: string;
  multipleOf: number;
  min: number;
  /** Infinity when unbounded. */
  max: number;
  /** The call that needed a narrower range than declared (e.g. "slice (call 12)"), else null. */
  narrowedBy: string | null;
  /**
   * The sizes the tracer checked the graph over, shape only: the whole range, up to max or, with
   * no max, to 32768 (or 4 times the example).
   */
  checked: { min: number; max: number };
  /**
   * Present where the model does another thing from some size of this symbol on and the graph
   * is an ONNX If on its size: the pieces of its range in order, each traced on its own
   * (e.g. [{ min: 1, max: 320 }, { min: 321, max: Infinity }]). Pieces may leave sizes out
   * between them, where the model fails: a symbol broadcast against a constant 7 answers at
   * [{ min: 1, max: 1 }, { min: 7, max: 7 }] only, the sizes admitted.
   */
  branches?: { min: number; max: number }[];
}

/** A traced input or output, or an initializer: a symbolic axis appears as its name. */
export interface ValueInfo {
  name: string;
  dtype: DType;
  shape: (number | string)[];
}

/** One ONNX node of a traced graph, in execution order. */
export interface GraphNode {
  /** The ONNX operator ("MatMul", "Add", ...). */
  opType: string;
  /** Value names it reads ("" for an omitted optional input). */
  inputs: string[];
  /** Value names it writes. */
  outputs: string[];
}

/** What a traced model holds, for inspection. */
export interface GraphInfo {
  nodes: GraphNode[];
  /**
   * The constants (weights, buffers, captured tensors), with fixed shapes; aliases: the other
   * state-dict names one holds (tied weights, equal contents stored once).
   */
  initializers: { name: string; dtype: DType; shape: number[]; aliases: string[] }[];
}

/**
 * One recording of an eager run into an ONNX graph. See docs/tracing.md.
 *
 * ```js
 * const tracer = om.Tracer.begin();
 * const x = tracer.input('x', example, ['batch', null]);
 * tracer.parameter('fc.weight', w);
 * const traced = tracer.finish({ logits: x.matmul(w.t()) });
 * ```
 *
 * Every op with a traced input becomes ONNX nodes; tensors that do not depend on an input
 * become initializers. The first trace error ({@link TraceError}) ends the recording, and
 * finish() then reports it again.
 */
export class Tracer {
  private constructor();
  /** Starts recording on this thread. TraceError InvalidUsage when one already records (that one ends too). */
  static begin(): Tracer;
  /** True while a trace records. */
  static readonly active: boolean;
  /** True while this tracer's recording is on. */
  readonly recording: boolean;
  /**
   * Declares graph input `name` with example's values and shape; returns the traced tensor to
   * run the model on (it shares example's storage; dispose it, or let a tidy scope do so).
   */
  input(name: string, example: Tensor, axisNames?: AxisNames | null): Tensor;
  /**
   * Names a constant (weight, buffer) in the graph. A view of it with other strides is named
   * `<name>.view_<n>`; a second name for the same tensor (tied weights) is kept as an alias of
   * the first, which names the one initializer.
   */
  parameter(name: string, tensor: Tensor): void;
  /**
   * Runs model on the traced inputs (positionally, in declaration order) as om.trace does: at
   * four other sizes of the symbols first (shape only), then recording; the sizes it computes
   * are written as what they are. Call it once, after the inputs and parameters; symbolic axes
   * record only this way. Returns the outputs by name (a Tensor is 'output', an array
   * 'output_0', ...; outputNames overrides), ready for finish().
   */
  run(model: (...inputs: Tensor[]) => TraceResult, outputNames?: readonly string[] | null): Record<string, Tensor>;
  /**
   * Ends the recording: the outputs are the given tensors, named by the keys, in that order.
   * Throws the trace's first error if one ended it. Calling it twice throws InvalidUsage.
   */
  finish(outputs: Readonly<Record<string, Tensor>>): TracedModel;
  /** Ends the recording without a model (nothing happens when it has already ended). */
  abort(): void;
}

/**
 * A finished trace: an ONNX graph (opset 20, IR version 9) whose constants live in C memory.
 * Free it with dispose(); after that every use throws OmError kind 'Disposed'.
 */
export class TracedModel {
  private constructor();
  /** Graph inputs in declaration order. */
  readonly inputs: ValueInfo[];
  /** Graph outputs in the order given to finish(). */
  readonly outputs: ValueInfo[];
  /** The symbolic axes and the sizes the graph holds for (narrowed where the model needs it). */
  readonly symbols: TracedSymbol[];
  /** True once dispose() ran. Never throws. */
  readonly isDisposed: boolean;
  /** The nodes and initializers, for inspection. */
  graph(): GraphInfo;
  /** The .onnx bytes: deterministic (equal graphs give equal bytes), copied once, chunk by chunk. */
  toOnnx(options?: ExportOptions): Uint8Array;
  /**
   * The .onnx as a Blob (application/octet-stream) for a download link: each piece goes from
   * WebAssembly memory into a Blob part (through a copy of that chunk in the threaded build,
   * whose memory is shared), so no copy of the file is held in JS memory.
   */
  toBlob(options?: ExportOptions): Blob;
  /**
   * Node.js only (an OmError in browsers): streams the .onnx into the file at path, chunk by
   * chunk from WebAssembly memory. Returns the number of bytes written.
   */
  saveOnnx(path: string, options?: ExportOptions): number;
  /** The library format v3 bytes (docs/format.md): deterministic, weights 64-byte aligned; InferenceSession.create() runs them. */
  save(): Uint8Array;
  /** A Session running this graph on the library's kernels; it keeps its own copy of the graph. */
  session(options?: SessionOptions): InferenceSession;
  /** Frees the model. Idempotent. */
  dispose(): void;
}

/** Options of {@link InferenceSession.create}: onnxruntime-web's session options are accepted and mean nothing here. */
export interface SessionOptions {
  /** 'fast' (the default) or 'exact' (the same bits natively and in WASM on any machine; today both modes are). */
  mode?: 'fast' | 'exact';
  executionProviders?: readonly unknown[];
  graphOptimizationLevel?: string;
  logSeverityLevel?: number;
  logVerbosityLevel?: number;
  intraOpNumThreads?: number;
  interOpNumThreads?: number;
  enableCpuMemArena?: boolean;
  enableMemPattern?: boolean;
  executionMode?: string;
}

/** ONNX element types a Session takes and gives (docs/graph-runtime.md, "Element types"). */
export type ElementType = DType | 'int8' | 'uint8' | 'int16' | 'uint16' | 'int32' | 'uint32' | 'uint64' | 'float16' | 'bfloat16'
  | 'float8e4m3fn' | 'float8e4m3fnuz' | 'float8e5m2' | 'float8e5m2fnuz';

/** Data of an element type as onnxruntime-web's Tensors hold it: float16 and bfloat16 as their bits (Uint16Array), the float8 types as theirs (Uint8Array). */
export type ElementData = Float32Array | Float64Array | BigInt64Array | Uint8Array | Int8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | BigUint64Array;

/** A feed of {@link InferenceSession.run}: a Tensor (in the dtype that holds the input's type), or
 * typed-array data with dims and its type (an onnxruntime-web Tensor has that shape; the type may
 * be left out for Float32Array, Float64Array, BigInt64Array, Int8Array, Int16Array, Int32Array, Uint32Array and BigUint64Array). */
export type SessionFeed = Tensor | { readonly data: ElementData; readonly dims: readonly number[]; readonly type?: ElementType } | StringTensor;

/** A tensor of strings (ONNX's STRING element type, which no Tensor holds): what a string input
 * is fed and a string output gives, as onnxruntime-web's string Tensors hold it. */
export interface StringTensor { readonly type: 'string'; readonly dims: readonly number[]; readonly data: readonly string[] }

/** What a graph input is fed: a tensor's feed, a sequence's (an array of feeds), or an optional's
 * (either, or null for nothing). */
export type SessionInput = SessionFeed | readonly SessionFeed[] | null;

/** What {@link InferenceSession.run} gives for an output: a Tensor, a sequence's Tensors, or null
 * (an optional holding nothing). */
export type SessionOutput = Tensor | Tensor[] | StringTensor | null;

/** An output of {@link InferenceSession.runData}: its element type's typed array with dims and type. */
export interface SessionData { type: ElementType; dims: number[]; data: ElementData }

/** What {@link InferenceSession.runData} gives for an output: as {@link SessionOutput}, with SessionData for Tensors. */
export type SessionDataOutput = SessionData | SessionData[] | StringTensor | null;

/** An input of a session: its dtype (what holds its values) and its ONNX element type. */
export interface SessionValueInfo extends ValueInfo {
  type: ElementType | 'string';
  /** Set on an input with a default, an initializer the file also lists as a graph input (ONNX IR 4 on): run() uses it where the feeds leave the input out. */
  hasDefault?: true;
}

/** Runs a traced or imported ONNX graph with the library's kernels, shaped like onnxruntime-web's InferenceSession. */
export class InferenceSession {
  private constructor();
  /** A session on ONNX bytes (IR 3 to 9, opset 1 to 20), library format bytes (traced.save()) or a traced model. */
  static create(source: Uint8Array | ArrayBuffer | TracedModel, options?: SessionOptions): Promise<InferenceSession>;
  /** The inputs a run needs, as onnxruntime-web lists them (not those with a default). */
  readonly inputNames: string[];
  readonly outputNames: string[];
  /** The graph inputs (those with a default too); a named axis as its name ('?' when unnamed). */
  readonly inputs: SessionValueInfo[];
  /** The outputs' element types by name (null before the first run unless the file declares it). */
  readonly outputTypes: Record<string, ElementType | 'string' | null>;
  /** Bytes of the buffers of the plan it ran last. */
  readonly planBytes: number;
  /** The library ops whose kernels the plan of the last run runs, in order ([] before the first run). */
  readonly planKernels: string[];
  readonly isDisposed: boolean;
  /** Runs the graph on one feed per input (a sequence input: an array of feeds; an optional: null
   * for nothing); returns new Tensors by output name, each in the dtype that holds its element type
   * (a sequence output: an array of them; an optional holding nothing: null). T names what the
   * outputs are (Tensor unless the graph gives sequences or optionals). */
  run<T extends SessionOutput = Tensor>(feeds: Readonly<Record<string, SessionInput>>): Record<string, T>;
  /** The shape and element type of every value of the graph (inputs, initializers, node outputs)
   * at these feeds, as the Session infers them to plan a run: no plan is kept, no buffer allocated,
   * nothing runs. A value that is not one tensor there (a sequence, an optional, strings) is left
   * out. Feeds and errors as run()'s. */
  inferShapes(feeds: Readonly<Record<string, SessionInput>>): Record<string, { type: ElementType | null; dims: number[] }>;
  /** Runs the graph; returns each output as its element type's typed array with dims and type (a
   * sequence as an array of those, an optional holding nothing as null). */
  runData<T extends SessionDataOutput = SessionData>(feeds: Readonly<Record<string, SessionInput>>): Record<string, T>;
  /** Frees the session. Idempotent. */
  dispose(): void;
  /** onnxruntime-web's name for dispose(). */
  release(): Promise<void>;
}

/** An input of {@link trace}: an example tensor, or [example, axisNames]. */
export type TraceInput = Tensor | readonly [Tensor] | readonly [Tensor, AxisNames | null | undefined];

/** What a traced model may return. */
export type TraceResult = Tensor | readonly Tensor[] | Readonly<Record<string, Tensor>>;

/** Options of {@link trace}. */
export interface TraceOptions {
  /**
   * Output names when the model returns a Tensor (default 'output') or an array (default
   * 'output_0', 'output_1', ...). An object's keys name its outputs.
   */
  outputNames?: readonly string[];
  /**
   * Progress of the recording run: { done: 0, total } as it starts, then after each hundredth
   * of total, and { done: total, total } at the end. A step is one return of a submodule's
   * forward; total is the calls a run at other sizes made, else the number of submodules.
   */
  onProgress?: (progress: TraceProgress) => void;
}

/** What {@link TraceOptions.onProgress} gets. */
export interface TraceProgress {
  done: number;
  total: number;
}

declare global {
  /** The platform's Blob (lib "dom", or Node.js's types); empty where neither is in scope. */
  interface Blob {}
}

/** Options of {@link TracedModel.toOnnx}, {@link TracedModel.toBlob} and {@link TracedModel.saveOnnx}. */
export interface ExportOptions {
  /** Called with the bytes written so far, after each hundredth of the total and once at the end (written === total). */
  onProgress?: (progress: ExportProgress) => void;
}

/** What {@link ExportOptions.onProgress} gets. */
export interface ExportProgress {
  written: number;
  total: number;
}

/** Something {@link trace} can run: an nn.Module-like object with forward(). */
export interface Forwardable {
  forward(...inputs: Tensor[]): TraceResult;
  /** When present (nn.Module), every entry is named by its path in the graph. */
  stateDict?(): Record<string, Tensor>;
}

/**
 * Traces one run of model (a function or an nn.Module) on the example inputs, called
 * positionally in the key order of `inputs`. Every tensor made on the way is freed and the
 * recording never outlives the call (also when the model throws). With an nn.Module, every
 * parameter and buffer is named by its state-dict path.
 *
 * ```js
 * const traced = om.trace(net, { x: [om.randn([8, 4]), ['batch', null]] });
 * const bytes = traced.toOnnx();
 * traced.dispose();
 * ```
 */
export function trace(
  model: ((...inputs: Tensor[]) => TraceResult) | Forwardable,
  inputs: Readonly<Record<string, TraceInput>>,
  options?: TraceOptions,
): TracedModel;

// ---- safetensors (js/safetensors.js) -------------------------------------------------------------

/**
 * Reads and writes safetensors files, the weights format of Hugging Face and PyTorch users
 * (docs/api.md#safetensors). F16 and BF16 load widened to float32 exactly, I8 to U32 as int64;
 * F64, U64 and F8 are refused (DtypeMismatch). Every problem of an untrusted file is an OmError of
 * kind 'Format' naming it.
 *
 * ```js
 * const { tensors, metadata } = om.safetensors.load(bytes);
 * net.loadStateDict(tensors);
 * om.dispose(tensors);
 * const file = om.safetensors.save(net.stateDict(), { metadata: { format: 'pt' } });
 * ```
 */
export namespace safetensors {
  /** What {@link load} and {@link loadFile} return. */
  export interface Loaded {
    /** New Tensors by name, in header order; the caller owns (disposes) them. */
    tensors: Record<string, Tensor>;
    /** The file's __metadata__ ({} when it has none). */
    metadata: Record<string, string>;
  }
  /** Options of {@link save}. */
  export interface SaveOptions {
    /** Written as the header's __metadata__ (strings only); none when absent or null. */
    metadata?: Readonly<Record<string, string>> | null;
  }
  /** The tensors of a .safetensors file held in memory (each tensor's bytes copied once, into its storage). */
  export function load(bytes: Uint8Array | ArrayBuffer): Loaded;
  /** Node.js only: load() of the file at path (a file: URL works too), read straight into the tensors (the file is never held in memory). */
  export function loadFile(path: string): Loaded;
  /**
   * The bytes of a .safetensors file of stateDict (float32 as F32, int64 as I64, bool as BOOL), laid
   * out as the reference implementation writes: sorted by dtype then name, header padded to 8 bytes.
   * A Tensor under two names (tied weights) is written under each.
   */
  export function save(stateDict: Readonly<Record<string, Tensor>>, options?: SaveOptions): Uint8Array;
}

// ---- nn -----------------------------------------------------------------------------------------

/**
 * What every reduction loss module of om.nn shares (js/nn/loss.js builds most of them from one
 * factory): constructed from its options O, `reduction` as given, forward(...inputs) -> the loss
 * (input and target unless Inputs names others). Not exported: the file's `export { ... }` keeps
 * its unexported declarations to itself, and the package has no such class.
 */
interface ReductionLossModule<Inputs extends Tensor[]> extends nn.Module {
  readonly reduction: nn.Reduction;
  forward(...inputs: Inputs): Tensor;
}
declare const ReductionLoss: new <O, Inputs extends Tensor[] = [input: Tensor, target: Tensor]>(options?: O) => ReductionLossModule<Inputs>;

/** Modules in PyTorch's shape: Module, Linear, LSTM, GRU, the norms, Softmax / LogSoftmax, MultiheadAttention, convolutions and pools. */
export namespace nn {
  /**
   * The base class of layers and models. Parameters are the Tensor-valued fields, found by
   * walking the module's own fields in order (submodules, and arrays of them as `layers.0.weight`).
   * Buffers are Tensors registered with registerBuffer(): in stateDict() (unless not persistent)
   * but not parameters(). forward runs in a scope: the tensors it makes are freed when it returns,
   * except those in its result, in the module's fields, or taken by om.keep.
   */
  export class Module {
    /** Training (true, the default) or evaluation mode. */
    training: boolean;
    constructor();
    /** The computation; subclasses implement it. */
    forward(...inputs: any[]): any;
    /**
     * Sets field `name` to tensor (or null) as a buffer: not a parameter; in stateDict() and named
     * when traced unless `persistent: false` (PyTorch's register_buffer). Returns it.
     */
    registerBuffer<T extends Tensor | null>(name: string, tensor: T, options?: { persistent?: boolean }): T;
    /** Sets field `name` to module (or null), PyTorch's add_module. Returns it. */
    addModule<T extends Module | null>(name: string, module: T): T;
    /** [path, parameter] pairs in field order; a tensor reachable twice is listed once. */
    namedParameters(): [string, Tensor][];
    /** The parameters, each once. */
    parameters(): Tensor[];
    /** [path, buffer] pairs in field order (persistent or not). */
    namedBuffers(): [string, Tensor][];
    /** The buffers, each once. */
    buffers(): Tensor[];
    /** path -> Tensor of every parameter and persistent buffer, in field order (tied tensors under each path). */
    stateDict(): Record<string, Tensor>;
    /** [path, module] for this module ('') and every submodule (each once), depth first. */
    namedModules(): [string, Module][];
    /** This module and every submodule, depth first. */
    modules(): Module[];
    /** [name, module] for each direct submodule (a module in an array field as `name.i`; one under two names once). */
    namedChildren(): [string, Module][];
    /** The direct submodules. */
    children(): Module[];
    /** Calls fn on every submodule, children first, then on this. Returns this. */
    apply(fn: (module: Module) => void): this;
    /** Sets training mode on the whole tree. Returns this. */
    train(mode?: boolean): this;
    /** train(false). Returns this. */
    eval(): this;
    /** Drops every parameter's gradient. */
    zeroGrad(): void;
    /** Disposes every parameter and buffer, and the tensors its modules hold in other fields (arrays, plain objects, Maps, Sets: state a forward stored). Idempotent. */
    dispose(): void;
  }

  /** Options of {@link Linear}. */
  export interface LinearOptions {
    /** Add a learned bias (default true). */
    bias?: boolean;
  }

  /**
   * y = x W^T + b, as PyTorch's nn.Linear: weight [outFeatures, inFeatures], bias [outFeatures],
   * both uniform in ±1/sqrt(inFeatures) from the default generator ({@link manualSeed}).
   */
  export class Linear extends Module {
    constructor(inFeatures: number, outFeatures: number, options?: LinearOptions);
    readonly inFeatures: number;
    readonly outFeatures: number;
    weight: Tensor;
    bias: Tensor | null;
    forward(x: Tensor): Tensor;
  }

  /** Options of {@link LSTM} and {@link GRU} (PyTorch's keyword arguments, camelCased). */
  export interface RNNOptions {
    /** Stacked layers (default 1). */
    numLayers?: number;
    /** Learned biases b_ih and b_hh (default true). */
    bias?: boolean;
    /** Input and output as [N, T, features] instead of [T, N, features] (default false; states stay [L*D, N, H]). */
    batchFirst?: boolean;
    /** Dropout between layers: only 0 is supported (anything else throws). */
    dropout?: number;
    /** A second, reverse direction per layer, concatenated on the feature axis (default false). */
    bidirectional?: boolean;
  }

  /**
   * Shared by LSTM and GRU: parameters weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}
   * (and *_reverse), in PyTorch's order, uniform in ±1/sqrt(hiddenSize). Abstract: `instanceof`
   * only (constructing it throws InvalidArgument).
   */
  export abstract class RNNBase extends Module {
    readonly inputSize: number;
    readonly hiddenSize: number;
    readonly numLayers: number;
    readonly bias: boolean;
    readonly batchFirst: boolean;
    readonly dropout: number;
    readonly bidirectional: boolean;
    [param: `weight_${string}` | `bias_${string}`]: Tensor;
  }

  /**
   * PyTorch's nn.LSTM (gates i, f, g, o). input [T, N, inputSize] ([N, T, inputSize] with
   * batchFirst, [T, inputSize] unbatched); h0, c0 [numLayers*D, N, hiddenSize] (zeros when
   * omitted). Returns [output [T, N, D*hiddenSize], [hN, cN]].
   */
  export class LSTM extends RNNBase {
    constructor(inputSize: number, hiddenSize: number, options?: RNNOptions);
    forward(input: Tensor, hx?: [Tensor, Tensor] | null): [Tensor, [Tensor, Tensor]];
  }

  /**
   * PyTorch's nn.GRU (gates r, z, n; n = tanh(W_in x + b_in + r * (W_hn h + b_hn))), shaped as
   * {@link LSTM} without the cell state. Returns [output, hN].
   */
  export class GRU extends RNNBase {
    constructor(inputSize: number, hiddenSize: number, options?: RNNOptions);
    forward(input: Tensor, hx?: Tensor | null): [Tensor, Tensor];
  }

  // ---- norm family (js/nn/norm.js, js/nn/attention.js) ----

  /** Options of {@link LayerNorm}. */
  export interface LayerNormOptions {
    /** Added to the variance (default 1e-5). */
    eps?: number;
    /** Learned weight (ones) and bias (zeros) of normalizedShape (default true). */
    elementwiseAffine?: boolean;
    /** With elementwiseAffine, also the bias (default true). */
    bias?: boolean;
  }

  /** nn.LayerNorm: normalises over the trailing dims normalizedShape; weight and bias as in PyTorch. */
  export class LayerNorm extends Module {
    constructor(normalizedShape: number | readonly number[], options?: LayerNormOptions);
    readonly normalizedShape: number[];
    readonly eps: number;
    weight: Tensor | null;
    bias: Tensor | null;
    forward(x: Tensor): Tensor;
  }

  /** Options of {@link GroupNorm}. */
  export interface GroupNormOptions {
    /** Added to the variance (default 1e-5). */
    eps?: number;
    /** Learned per-channel weight (ones) and bias (zeros) (default true). */
    affine?: boolean;
  }

  /** Options of {@link InstanceNorm1d} and {@link InstanceNorm2d}. */
  export interface InstanceNormOptions {
    /** Added to the variance (default 1e-5). */
    eps?: number;
    /** Unused (no running statistics are kept); accepted as PyTorch's. */
    momentum?: number;
    /** Learned per-channel weight (ones) and bias (zeros) (default false). */
    affine?: boolean;
    /** Only false is supported. */
    trackRunningStats?: false;
  }
  /** nn.InstanceNorm1d on [N, C, L] (or [C, L]): each sample's channel normalised over its positions. */
  export class InstanceNorm1d extends Module {
    constructor(numFeatures: number, options?: InstanceNormOptions);
    readonly numFeatures: number;
    weight: Tensor | null;
    bias: Tensor | null;
    forward(x: Tensor): Tensor;
  }
  /** nn.InstanceNorm2d on [N, C, H, W] (or [C, H, W]). */
  export class InstanceNorm2d extends Module {
    constructor(numFeatures: number, options?: InstanceNormOptions);
    readonly numFeatures: number;
    weight: Tensor | null;
    bias: Tensor | null;
    forward(x: Tensor): Tensor;
  }

  /** nn.GroupNorm on [N, C, *]: statistics per sample and group of channels, affine per channel. */
  export class GroupNorm extends Module {
    constructor(numGroups: number, numChannels: number, options?: GroupNormOptions);
    readonly numGroups: number;
    readonly numChannels: number;
    weight: Tensor | null;
    bias: Tensor | null;
    forward(x: Tensor): Tensor;
  }

  /** Options of {@link BatchNorm1d} and {@link BatchNorm2d}. */
  export interface BatchNormOptions {
    /** Added to the variance (default 1e-5). */
    eps?: number;
    /** Running-statistics factor (default 0.1); null: cumulative average (1 / num_batches_tracked). */
    momentum?: number | null;
    /** Learned weight (ones) and bias (zeros) (default true). */
    affine?: boolean;
    /** Keep running_mean / running_var / num_batches_tracked buffers (default true). */
    trackRunningStats?: boolean;
  }

  /**
   * PyTorch's batch norm: training mode normalises with the batch statistics and updates the
   * running ones in place (traces only in eval mode); eval mode uses running_mean / running_var.
   */
  export class BatchNorm2d extends Module {
    constructor(numFeatures: number, options?: BatchNormOptions);
    readonly numFeatures: number;
    momentum: number | null;
    weight: Tensor | null;
    bias: Tensor | null;
    /** [numFeatures] buffer (null without trackRunningStats). */
    running_mean: Tensor | null;
    /** [numFeatures] buffer (null without trackRunningStats). */
    running_var: Tensor | null;
    /** 0-d int64 buffer (null without trackRunningStats). */
    num_batches_tracked: Tensor | null;
    /** x [N, C, H, W]. */
    forward(x: Tensor): Tensor;
  }

  /** {@link BatchNorm2d} on [N, C] or [N, C, L]. */
  export class BatchNorm1d extends BatchNorm2d {}
  /** {@link BatchNorm2d} on [N, C, D, H, W]. */
  export class BatchNorm3d extends BatchNorm2d {}

  /** nn.Softmax(dim). */
  export class Softmax extends Module {
    constructor(dim: number);
    readonly dim: number;
    forward(x: Tensor): Tensor;
  }

  /** nn.LogSoftmax(dim). */
  export class LogSoftmax extends Module {
    constructor(dim: number);
    readonly dim: number;
    forward(x: Tensor): Tensor;
  }

  /** Options of {@link MultiheadAttention}. */
  export interface MultiheadAttentionOptions {
    /** Inputs and output as [N, L, E] instead of [L, N, E] (default false). */
    batchFirst?: boolean;
    /** in_proj_bias and out_proj.bias (default true). */
    bias?: boolean;
    /** The probability of zeroing an attention weight while training (default 0). */
    dropout?: number;
    /** The keys' features (default embedDim); another size gives separate q/k/v projections. */
    kdim?: number;
    /** The values' features (default embedDim). */
    vdim?: number;
    /** PyTorch's add_bias_kv: refused (InvalidArgument) when true. */
    addBiasKV?: false;
    /** PyTorch's add_zero_attn: refused (InvalidArgument) when true. */
    addZeroAttn?: false;
  }

  /** Options of {@link MultiheadAttention.forward}. */
  export interface MultiheadAttentionForwardOptions {
    /** [N, S]: bool (true: ignore that key) or float (added). */
    keyPaddingMask?: Tensor | null;
    /** Return the attention weights (default true). */
    needWeights?: boolean;
    /** [L, S] or [N * numHeads, L, S]: bool (true: not allowed) or float (added). */
    attnMask?: Tensor | null;
    /** Average the weights over the heads (default true). */
    averageAttnWeights?: boolean;
    /** PyTorch's hint: needs attnMask, which is used as given. */
    isCausal?: boolean;
  }

  /** nn.MultiheadAttention: in_proj_weight [3E, E], in_proj_bias [3E], out_proj (Linear). */
  export class MultiheadAttention extends Module {
    constructor(embedDim: number, numHeads: number, options?: MultiheadAttentionOptions);
    readonly embedDim: number;
    readonly numHeads: number;
    /** The attention weights' dropout probability while training. */
    dropout: number;
    batchFirst: boolean;
    readonly kdim: number;
    readonly vdim: number;
    /** [3E, E]; null when kdim or vdim is not embedDim (then q_proj_weight, k_proj_weight, v_proj_weight). */
    in_proj_weight: Tensor | null;
    /** [E, E], when kdim or vdim is not embedDim. */
    q_proj_weight?: Tensor;
    /** [E, kdim], when kdim or vdim is not embedDim. */
    k_proj_weight?: Tensor;
    /** [E, vdim], when kdim or vdim is not embedDim. */
    v_proj_weight?: Tensor;
    in_proj_bias: Tensor | null;
    out_proj: Linear;
    /** [output, attention weights or null]. */
    forward(query: Tensor, key: Tensor, value: Tensor, options?: MultiheadAttentionForwardOptions): [Tensor, Tensor | null];
  }

  // ---- transformer (js/nn/transformer.js) ----

  /** Options of {@link TransformerEncoderLayer}. */
  export interface TransformerEncoderLayerOptions {
    /** The feed-forward width (default 2048). */
    dimFeedforward?: number;
    /** The probability of every dropout, the attention weights' included (default 0.1). */
    dropout?: number;
    /** 'relu' (default), 'gelu' (exact), a function or a Module. */
    activation?: 'relu' | 'gelu' | ((x: Tensor) => Tensor) | Module;
    /** The LayerNorms' eps (default 1e-5). */
    layerNormEps?: number;
    /** Input and output as [N, L, E] instead of [L, N, E] (default false). */
    batchFirst?: boolean;
    /** Pre-norm: x + sa(norm1(x)), x + ff(norm2(x)) (default false: post-norm). */
    normFirst?: boolean;
    /** Biases in the Linears, the attention and the LayerNorms (default true). */
    bias?: boolean;
  }

  /** Options of {@link TransformerEncoderLayer.forward}. */
  export interface TransformerEncoderLayerForwardOptions {
    /** [L, L] or [N * nhead, L, L]: bool (true: not allowed) or float (added). */
    srcMask?: Tensor | null;
    /** [N, L]: bool (true: ignore that key) or float (added). */
    srcKeyPaddingMask?: Tensor | null;
    /** PyTorch's hint that srcMask is causal: needs srcMask, which is used as given. */
    isCausal?: boolean;
  }

  /**
   * nn.TransformerEncoderLayer with PyTorch's submodules and names: self_attn, linear1,
   * dropout, linear2, norm1, norm2, dropout1, dropout2.
   */
  export class TransformerEncoderLayer extends Module {
    constructor(dModel: number, nhead: number, options?: TransformerEncoderLayerOptions);
    self_attn: MultiheadAttention;
    linear1: Linear;
    dropout: Dropout;
    linear2: Linear;
    normFirst: boolean;
    norm1: LayerNorm;
    norm2: LayerNorm;
    dropout1: Dropout;
    dropout2: Dropout;
    activation: 'relu' | 'gelu' | ((x: Tensor) => Tensor) | Module;
    batchFirst: boolean;
    /** src [L, N, E] ([N, L, E] with batchFirst, or unbatched [L, E]) -> the same shape. */
    forward(src: Tensor, options?: TransformerEncoderLayerForwardOptions): Tensor;
  }

  /** Options of {@link TransformerDecoderLayer.forward} and {@link TransformerDecoder.forward}. */
  export interface TransformerDecoderLayerForwardOptions {
    /** [T, T] or [N * nhead, T, T]: bool (true: not allowed) or float (added), for the self-attention. */
    tgtMask?: Tensor | null;
    /** [T, S] or [N * nhead, T, S], for the attention to memory. */
    memoryMask?: Tensor | null;
    /** [N, T]: bool (true: ignore that key) or float (added). */
    tgtKeyPaddingMask?: Tensor | null;
    /** [N, S]. */
    memoryKeyPaddingMask?: Tensor | null;
    /** PyTorch's hint that tgtMask is causal: needs tgtMask, which is used as given. */
    tgtIsCausal?: boolean;
    /** The same for memoryMask. */
    memoryIsCausal?: boolean;
  }

  /**
   * nn.TransformerDecoderLayer with PyTorch's submodules and names: self_attn, multihead_attn,
   * linear1, dropout, linear2, norm1..3, dropout1..3.
   */
  export class TransformerDecoderLayer extends Module {
    constructor(dModel: number, nhead: number, options?: TransformerEncoderLayerOptions);
    self_attn: MultiheadAttention;
    multihead_attn: MultiheadAttention;
    linear1: Linear;
    dropout: Dropout;
    linear2: Linear;
    normFirst: boolean;
    norm1: LayerNorm;
    norm2: LayerNorm;
    norm3: LayerNorm;
    dropout1: Dropout;
    dropout2: Dropout;
    dropout3: Dropout;
    activation: 'relu' | 'gelu' | ((x: Tensor) => Tensor) | Module;
    batchFirst: boolean;
    /** tgt [T, N, E], memory [S, N, E] ([N, T, E], [N, S, E] with batchFirst; unbatched [T, E], [S, E]) -> tgt's shape. */
    forward(tgt: Tensor, memory: Tensor, options?: TransformerDecoderLayerForwardOptions): Tensor;
  }

  /** Options of {@link TransformerEncoder}. */
  export interface TransformerEncoderOptions {
    /** Applied to the last layer's output (default null: none). */
    norm?: Module | null;
    /** PyTorch's fast-path switches, taken for its argument list (the values are computed the same way). */
    enableNestedTensor?: boolean;
    maskCheck?: boolean;
  }

  /** Options of {@link TransformerEncoder.forward}. */
  export interface TransformerEncoderForwardOptions {
    mask?: Tensor | null;
    srcKeyPaddingMask?: Tensor | null;
    isCausal?: boolean;
  }

  /** nn.TransformerEncoder: layers (numLayers copies of the layer, as PyTorch's deep copies) and norm. */
  export class TransformerEncoder extends Module {
    constructor(encoderLayer: TransformerEncoderLayer, numLayers: number, options?: TransformerEncoderOptions);
    layers: ModuleList;
    readonly numLayers: number;
    norm: Module | null;
    forward(src: Tensor, options?: TransformerEncoderForwardOptions): Tensor;
  }

  /** nn.TransformerDecoder: layers (numLayers copies of the layer) and norm. */
  export class TransformerDecoder extends Module {
    constructor(decoderLayer: TransformerDecoderLayer, numLayers: number, options?: { norm?: Module | null });
    layers: ModuleList;
    readonly numLayers: number;
    norm: Module | null;
    forward(tgt: Tensor, memory: Tensor, options?: TransformerDecoderLayerForwardOptions): Tensor;
  }

  /** Options of {@link Transformer}: the layers' options and these. */
  export interface TransformerOptions extends TransformerEncoderLayerOptions {
    /** Default 512. */
    dModel?: number;
    /** Default 8. */
    nhead?: number;
    /** Default 6. */
    numEncoderLayers?: number;
    /** Default 6. */
    numDecoderLayers?: number;
    /** Used instead of the TransformerEncoder it would make. */
    customEncoder?: Module | null;
    /** Used instead of the TransformerDecoder it would make. */
    customDecoder?: Module | null;
  }

  /** Options of {@link Transformer.forward}. */
  export interface TransformerForwardOptions extends TransformerDecoderLayerForwardOptions {
    srcMask?: Tensor | null;
    srcKeyPaddingMask?: Tensor | null;
    srcIsCausal?: boolean;
  }

  /** nn.Transformer: encoder and decoder, each with a final LayerNorm; matrices Xavier-uniform. */
  export class Transformer extends Module {
    constructor(options?: TransformerOptions);
    encoder: Module;
    decoder: Module;
    readonly dModel: number;
    readonly nhead: number;
    readonly batchFirst: boolean;
    /** decoder(tgt, encoder(src)) -> tgt's shape. */
    forward(src: Tensor, tgt: Tensor, options?: TransformerForwardOptions): Tensor;
    /** [sz, sz] float32: -Infinity above the diagonal, 0 elsewhere. */
    static generateSquareSubsequentMask(sz: number): Tensor;
  }

  // ---- indexing and resampling (js/nn/embedding.js, js/ops/index.js) ----

  /** Options of {@link Embedding} and {@link functional.embedding}. */
  export interface EmbeddingOptions {
    /** A row that reads as stored but gets no gradient (zeroed by nn.Embedding); negative counts from the end. */
    paddingIdx?: number | null;
  }

  /**
   * A table of rows read by int64 indices, as PyTorch's nn.Embedding: weight
   * [numEmbeddings, embeddingDim] from the standard normal ({@link manualSeed}), the padding row zeroed.
   */
  export class Embedding extends Module {
    constructor(numEmbeddings: number, embeddingDim: number, options?: EmbeddingOptions);
    readonly numEmbeddings: number;
    readonly embeddingDim: number;
    /** The padding row (non-negative), or null. */
    readonly paddingIdx: number | null;
    weight: Tensor;
    /** int64 indices [...] -> [..., embeddingDim]. */
    forward(input: Tensor): Tensor;
  }

  /** Options of {@link functional.embeddingBag} (and, but perSampleWeights, of {@link EmbeddingBag}). */
  export interface EmbeddingBagOptions {
    /** How a bag's rows combine (default 'mean'). */
    mode?: 'sum' | 'mean' | 'max';
    /** A weight per index (the input's shape), mode 'sum' only. */
    perSampleWeights?: Tensor | null;
    /** offsets has one more element, the end of the last bag (default false). */
    includeLastOffset?: boolean;
    /** Indices equal to it count for nothing (negative counts from the end). */
    paddingIdx?: number | null;
  }

  /** PyTorch's nn.EmbeddingBag: weight as {@link Embedding}'s; forward is {@link functional.embeddingBag}. */
  export class EmbeddingBag extends Module {
    constructor(numEmbeddings: number, embeddingDim: number, options?: Omit<EmbeddingBagOptions, 'perSampleWeights'>);
    readonly numEmbeddings: number;
    readonly embeddingDim: number;
    readonly paddingIdx: number | null;
    readonly mode: 'sum' | 'mean' | 'max';
    readonly includeLastOffset: boolean;
    weight: Tensor;
    /** input [B, N] (offsets null) or [N] with int64 offsets [B] -> [B, embeddingDim]. */
    forward(input: Tensor, offsets?: Tensor | null, perSampleWeights?: Tensor | null): Tensor;
  }

  /** Options of {@link functional.interpolate} and {@link Upsample} (exactly one of size and scaleFactor). */
  export interface InterpolateOptions {
    /** Output (H, W), or one size for both. */
    size?: number | [number, number] | null;
    /** Output floor(in * scale) per spatial axis; the scale drives the sampling coordinates. */
    scaleFactor?: number | [number, number] | null;
    /** 'nearest' (default; PyTorch's legacy nearest), 'bilinear' or 'bicubic' (a = -0.75). */
    mode?: 'nearest' | 'bilinear' | 'bicubic';
    /** Bilinear and bicubic only: corner pixels' centres aligned (default false). */
    alignCorners?: boolean | null;
    /** With scaleFactor: sample as if the resulting size had been given (default false). */
    recomputeScaleFactor?: boolean | null;
  }

  /** interpolate as a module (PyTorch's nn.Upsample). */
  export class Upsample extends Module {
    constructor(options: InterpolateOptions);
    /** input [N, C, H, W] -> resampled. */
    forward(input: Tensor): Tensor;
  }

  /** pixelShuffle as a module (PyTorch's nn.PixelShuffle). */
  export class PixelShuffle extends Module {
    constructor(upscaleFactor: number);
    readonly upscaleFactor: number;
    /** [..., C r^2, H, W] -> [..., C, H r, W r]. */
    forward(input: Tensor): Tensor;
  }
  /** pixelUnshuffle as a module (PyTorch's nn.PixelUnshuffle). */
  export class PixelUnshuffle extends Module {
    constructor(downscaleFactor: number);
    readonly downscaleFactor: number;
    /** [..., C, H r, W r] -> [..., C r^2, H, W]. */
    forward(input: Tensor): Tensor;
  }

  /** The ops as functions, in PyTorch's names (torch.nn.functional). */
  export namespace functional {
    /** input W^T + bias: input [..., in], weight [out, in], bias [out] (or null) -> [..., out]. */
    function linear(input: Tensor, weight: Tensor, bias?: Tensor | null): Tensor;
    /** torch.flatten: dims startDim..endDim (default 0..-1) into one. */
    function flatten(input: Tensor, startDim?: number, endDim?: number): Tensor;
    function flatten(input: Tensor, options: { startDim?: number; endDim?: number }): Tensor;
    /** softmax along dim. */
    function softmax(input: Tensor, dim: number, dtype?: DType): Tensor;
    function softmax(input: Tensor, options: { dim: number; dtype?: DType }): Tensor;
    /** log_softmax along dim. */
    function logSoftmax(input: Tensor, dim: number, dtype?: DType): Tensor;
    function logSoftmax(input: Tensor, options: { dim: number; dtype?: DType }): Tensor;
    /** Optional weight / bias and eps of the norm functions. */
    interface NormOptions {
      weight?: Tensor | null;
      bias?: Tensor | null;
      /** Default 1e-5. */
      eps?: number;
    }
    /** F.normalize: input / max(its p-norm over dim, eps) (p 2, dim 1, eps 1e-12 by default). */
    function normalize(input: Tensor, options?: { p?: number; dim?: number; eps?: number }): Tensor;
    /** F.layer_norm over the trailing dims normalizedShape. */
    function layerNorm(input: Tensor, normalizedShape: number | readonly number[], options?: NormOptions): Tensor;
    /** F.group_norm on [N, C, *]. */
    function groupNorm(input: Tensor, numGroups: number, options?: NormOptions): Tensor;
    /** F.instance_norm on [N, C, *] with each sample's own statistics (no running statistics). */
    function instanceNorm(input: Tensor, options?: NormOptions): Tensor;
    /** Options of {@link batchNorm}. */
    interface BatchNormOptions extends NormOptions {
      /** Batch statistics, updating the running ones in place (default false). */
      training?: boolean;
      /** Default 0.1. */
      momentum?: number;
    }
    /** F.batch_norm on [N, C, *]; the running statistics may be null only in training mode. */
    function batchNorm(input: Tensor, runningMean: Tensor | null, runningVar: Tensor | null, options?: BatchNormOptions): Tensor;
    /** Options of {@link scaledDotProductAttention}. */
    interface ScaledDotProductAttentionOptions {
      /** bool (true takes part) or an additive float mask, broadcast to [..., L, S]. */
      attnMask?: Tensor | null;
      /** Mask above the diagonal (not with attnMask). */
      isCausal?: boolean;
      /** Default 1 / sqrt(E). */
      scale?: number;
    }
    /** softmax(q k^T * scale + mask) v for q [..., L, E], k [..., S, E], v [..., S, Ev] (no dropout). */
    function scaledDotProductAttention(query: Tensor, key: Tensor, value: Tensor, options?: ScaledDotProductAttentionOptions): Tensor;
    /** Rows of weight [num, dim] picked by int64 indices (any shape) -> [..., dim]. */
    function embedding(input: Tensor, weight: Tensor, options?: EmbeddingOptions): Tensor;
    /** F.embedding_bag: each bag's rows of weight summed, averaged or maxed -> [bags, dim]. */
    function embeddingBag(input: Tensor, weight: Tensor, offsets?: Tensor | null, options?: EmbeddingBagOptions): Tensor;
    /** Resamples input [N, C, H, W] (float32) as F.interpolate. */
    function interpolate(input: Tensor, options: InterpolateOptions): Tensor;
    /** F.one_hot: int64 classes in [0, numClasses) -> int64 [..., numClasses] (-1, the default: the largest + 1). */
    function oneHot(tensor: Tensor, numClasses?: number | bigint): Tensor;
    /** F.pixel_shuffle: [..., C r^2, H, W] -> [..., C, H r, W r]. */
    function pixelShuffle(input: Tensor, upscaleFactor: number | bigint): Tensor;
    /** F.pixel_unshuffle: [..., C, H r, W r] -> [..., C r^2, H, W]. */
    function pixelUnshuffle(input: Tensor, downscaleFactor: number | bigint): Tensor;

    // ---- convolution and pooling (js/ops/conv.js) ----
    /** conv2d(x [N, C, H, W], weight [O, C/groups, kH, kW], bias [O] | null, options) -> [N, O, OH, OW]. */
    function conv2d(input: Tensor, weight: Tensor, bias?: Tensor | null, options?: ConvOptions): Tensor;
    function conv2d(input: Tensor, weight: Tensor, options: ConvOptions): Tensor;
    /** conv1d(x [N, C, L], weight [O, C/groups, k], bias [O] | null, options) -> [N, O, OL]. */
    function conv1d(input: Tensor, weight: Tensor, bias?: Tensor | null, options?: Conv1dOptions): Tensor;
    function conv1d(input: Tensor, weight: Tensor, options: Conv1dOptions): Tensor;
    /** affine_grid(theta [N, 2, 3] (or [N, 3, 4]), size [N, C, H, W] (or [N, C, D, H, W])) -> the sampling grid [N, H, W, 2] ([N, D, H, W, 3]). */
    function affineGrid(theta: Tensor, size: readonly number[], options?: { alignCorners?: boolean }): Tensor;
    /**
     * grid_sample(input [N, C, H, W], grid [N, Ho, Wo, 2]) -> [N, C, Ho, Wo], or input [N, C, D, H, W] and grid
     * [N, Do, Ho, Wo, 3] -> [N, C, Do, Ho, Wo]: bilinear (trilinear on 5-D), nearest or bicubic (4-D only); zeros, border or reflection padding.
     */
    function gridSample(input: Tensor, grid: Tensor, options?: { mode?: 'bilinear' | 'nearest' | 'bicubic'; paddingMode?: 'zeros' | 'border' | 'reflection'; alignCorners?: boolean }): Tensor;
    /** conv_transpose1d(x [N, C, L] (or [C, L]), weight [C, O/groups, k], bias [O] | null, options) -> [N, O, OL]: conv_transpose2d over a unit height. */
    function convTranspose1d(input: Tensor, weight: Tensor, bias?: Tensor | null, options?: ConvTranspose1dOptions): Tensor;
    function convTranspose1d(input: Tensor, weight: Tensor, options: ConvTranspose1dOptions): Tensor;
    /** conv_transpose2d(x [N, C, H, W], weight [C, O/groups, kH, kW], bias [O] | null, options) -> [N, O, OH, OW]. */
    function convTranspose2d(input: Tensor, weight: Tensor, bias?: Tensor | null, options?: ConvTransposeOptions): Tensor;
    function convTranspose2d(input: Tensor, weight: Tensor, options: ConvTransposeOptions): Tensor;
    /** max_pool2d on [N, C, H, W]; the gradient goes to each window's first maximum. */
    function maxPool2d(input: Tensor, kernelSize: Size2, options?: MaxPoolOptions & { returnIndices?: false }): Tensor;
    /** With returnIndices: [values, int64 indices into the flattened H x W plane]. */
    function maxPool2d(input: Tensor, kernelSize: Size2, options: MaxPoolOptions & { returnIndices: true }): [Tensor, Tensor];
    /** avg_pool2d on [N, C, H, W]. */
    function avgPool2d(input: Tensor, kernelSize: Size2, options?: AvgPoolOptions): Tensor;
    /** adaptive_avg_pool2d on [N, C, H, W] to outputSize (null keeps that input size). */
    function adaptiveAvgPool2d(input: Tensor, outputSize: number | readonly [number | null, number | null]): Tensor;
    /** max_pool1d on [N, C, L] (or [C, L]): max_pool2d over [N, C, 1, L]. */
    function maxPool1d(input: Tensor, kernelSize: Size1, options?: MaxPool1dOptions & { returnIndices?: false }): Tensor;
    /** With returnIndices: [values, int64 indices along L]. */
    function maxPool1d(input: Tensor, kernelSize: Size1, options: MaxPool1dOptions & { returnIndices: true }): [Tensor, Tensor];
    /** avg_pool1d on [N, C, L] (or [C, L]). */
    function avgPool1d(input: Tensor, kernelSize: Size1, options?: AvgPool1dOptions): Tensor;
    /** adaptive_avg_pool1d on [N, C, L] (or [C, L]) to outputSize (null keeps L). */
    function adaptiveAvgPool1d(input: Tensor, outputSize: number | null): Tensor;
    /** conv3d(x [N, C, D, H, W], weight [O, C/groups, kD, kH, kW], bias [O] | null, options) -> [N, O, OD, OH, OW]. */
    function conv3d(input: Tensor, weight: Tensor, bias?: Tensor | null, options?: Conv3dOptions): Tensor;
    function conv3d(input: Tensor, weight: Tensor, options: Conv3dOptions): Tensor;
    /** conv_transpose3d(x [N, C, D, H, W], weight [C, O/groups, kD, kH, kW], bias [O] | null, options) -> [N, O, OD, OH, OW]. */
    function convTranspose3d(input: Tensor, weight: Tensor, bias?: Tensor | null, options?: ConvTranspose3dOptions): Tensor;
    function convTranspose3d(input: Tensor, weight: Tensor, options: ConvTranspose3dOptions): Tensor;
    /** max_pool3d on [N, C, D, H, W] (or [C, D, H, W]); the gradient goes to each window's first maximum. */
    function maxPool3d(input: Tensor, kernelSize: Size3, options?: MaxPool3dOptions & { returnIndices?: false }): Tensor;
    /** With returnIndices: [values, int64 indices into the flattened D x H x W volume]. */
    function maxPool3d(input: Tensor, kernelSize: Size3, options: MaxPool3dOptions & { returnIndices: true }): [Tensor, Tensor];
    /** max_unpool1d: input [N, C, L] (or [C, L]) and max_pool1d's indices -> zeros with each value at its place. */
    function maxUnpool1d(input: Tensor, indices: Tensor, kernelSize: Size1, options?: MaxUnpoolOptionsOf<Size1>): Tensor;
    /** max_unpool2d: input [N, C, H, W] (or [C, H, W]) and max_pool2d's indices. */
    function maxUnpool2d(input: Tensor, indices: Tensor, kernelSize: Size2, options?: MaxUnpoolOptionsOf<Size2>): Tensor;
    /** max_unpool3d: input [N, C, D, H, W] (or [C, D, H, W]) and max_pool3d's indices. */
    function maxUnpool3d(input: Tensor, indices: Tensor, kernelSize: Size3, options?: MaxUnpoolOptionsOf<Size3>): Tensor;
    /** avg_pool3d on [N, C, D, H, W] (or [C, D, H, W]). */
    function avgPool3d(input: Tensor, kernelSize: Size3, options?: AvgPool3dOptions): Tensor;
    /** adaptive_avg_pool3d on [N, C, D, H, W] (or [C, D, H, W]) to outputSize (null keeps that input size). */
    function adaptiveAvgPool3d(input: Tensor, outputSize: number | null | readonly [number | null, number | null, number | null]): Tensor;
    /** adaptive_max_pool2d on [N, C, H, W] (or [C, H, W]) to outputSize (null keeps that input size). */
    function adaptiveMaxPool2d(input: Tensor, outputSize: number | readonly [number | null, number | null], returnIndices?: false | { returnIndices?: false }): Tensor;
    /** With returnIndices: [values, int64 indices into the flattened H x W plane]. */
    function adaptiveMaxPool2d(input: Tensor, outputSize: number | readonly [number | null, number | null], returnIndices: true | { returnIndices: true }): [Tensor, Tensor];
    /** adaptive_max_pool3d on [N, C, D, H, W] (or [C, D, H, W]) to outputSize (null keeps that input size). */
    function adaptiveMaxPool3d(input: Tensor, outputSize: number | readonly [number | null, number | null, number | null], returnIndices?: false | { returnIndices?: false }): Tensor;
    /** With returnIndices: [values, int64 indices into the flattened D x H x W volume]. */
    function adaptiveMaxPool3d(input: Tensor, outputSize: number | readonly [number | null, number | null, number | null], returnIndices: true | { returnIndices: true }): [Tensor, Tensor];
    /** adaptive_max_pool1d on [N, C, L] (or [C, L]). */
    function adaptiveMaxPool1d(input: Tensor, outputSize: number, returnIndices?: false | { returnIndices?: false }): Tensor;
    /** With returnIndices: [values, int64 indices along L]. */
    function adaptiveMaxPool1d(input: Tensor, outputSize: number, returnIndices: true | { returnIndices: true }): [Tensor, Tensor];
    /** F.unfold (im2col): every kernel-sized block of input [N, C, H, W] (or [C, H, W]) as a column -> [N, C * kH * kW, L]; float32. */
    function unfold(input: Tensor, kernelSize: Size2, options?: UnfoldOptions): Tensor;
    /** F.fold (col2im), unfold's adjoint: columns [N, C * kH * kW, L] (or unbatched) summed back into [N, C, ...outputSize]. */
    function fold(input: Tensor, outputSize: Size2, kernelSize: Size2, options?: UnfoldOptions): Tensor;
  }
}

// ---- losses, containers, state dicts (js/nn/loss.js, js/nn/container.js) ----------------------

export namespace nn {
  /** Options of {@link Module.loadStateDict}. */
  export interface LoadStateDictOptions {
    /** Missing and unexpected keys are an error (default true); without, they are skipped. */
    strict?: boolean;
  }
  /** What {@link Module.loadStateDict} skipped (both empty when strict). */
  export interface LoadStateDictResult {
    missingKeys: string[];
    unexpectedKeys: string[];
  }
  /** A state-dict value: a Tensor, nested arrays, a flat typed array of the parameter's size, or a scalar for a 0-d one. */
  export type StateValue = Tensor | TensorData;

  interface Module {
    /**
     * Copies state[path] into each parameter and persistent buffer in place (PyTorch's
     * load_state_dict), with key, shape and dtype checks made before anything is written. When
     * strict, missing or unexpected keys throw an OmError 'InvalidArgument' that lists both in
     * PyTorch's words (also as its `missingKeys` and `unexpectedKeys` properties); a shape
     * mismatch, strict or not, makes it 'ShapeMismatch' ("size mismatch for fc.weight: ...").
     */
    loadStateDict(state: Readonly<Record<string, StateValue>>, options?: LoadStateDictOptions): LoadStateDictResult;
  }

  /** A container's named items: an object, a Map or [name, item] pairs, in order. */
  export type Named<T> = Readonly<Record<string, T>> | ReadonlyMap<string, T> | readonly (readonly [string, T])[];

  /**
   * nn.Sequential(...modules), modules named '0', '1', ..., or nn.Sequential(named) with the
   * given names (PyTorch's Sequential(OrderedDict(...))); forward chains them.
   */
  export class Sequential extends Module implements Iterable<Module> {
    constructor(...modules: Module[]);
    constructor(named: Named<Module>);
    readonly length: number;
    readonly [name: string]: any;
    /** The module at index i (negative counts from the end). */
    at(i: number): Module;
    /** Replaces the module at index i (negative from the end) under its name (PyTorch's seq[i] = m). Returns this. */
    set(i: number, module: Module): this;
    /**
     * PyTorch's seq[start:stop:step] (Python's bounds: omitted, negative, clamped): a new
     * Sequential sharing the modules, under their names.
     */
    slice(start?: number | null, stop?: number | null, step?: number | null): Sequential;
    /** Adds a module at the end, named by the count before it. Returns this. */
    append(module: Module): this;
    /** Inserts a module before index i (0..length, negative from the end); later ones move up a number. Returns this. */
    insert(i: number, module: Module): this;
    /** Removes the module at index i (default -1) and returns it; the rest are numbered '0', '1', ... again. */
    pop(i?: number): Module;
    /** Appends each module in order (PyTorch's extend); a bad item adds none. Returns this. */
    extend(modules: Iterable<Module>): this;
    [Symbol.iterator](): Iterator<Module>;
    forward(x: any): any;
  }

  /** What ModuleList and ParameterList hold: items named '0', '1', ..., indexable. */
  export interface ListOf<T> extends Iterable<T> {
    readonly length: number;
    readonly [index: number]: T;
    /** The item at index i (negative counts from the end). */
    at(i: number): T;
    /** Replaces the item at index i (negative from the end) under its name (PyTorch's list[i] = item). Returns this. */
    set(i: number, item: T): this;
    /**
     * PyTorch's list[start:stop:step] (Python's bounds: omitted, negative, clamped): a new
     * container of this class sharing the items, numbered from '0'.
     */
    slice(start?: number | null, stop?: number | null, step?: number | null): this;
    /** Adds an item at the end, named by the count before it. Returns this. */
    append(item: T): this;
    /** Inserts an item before index i (0..length, negative from the end); later ones move up a number. Returns this. */
    insert(i: number, item: T): this;
    /** Removes the item at index i (default -1) and returns it; the rest are numbered '0', '1', ... again. */
    pop(i?: number): T;
    /** Appends each item in order (PyTorch's extend); a bad item adds none. Returns this. */
    extend(items: Iterable<T>): this;
    [Symbol.iterator](): Iterator<T>;
  }

  /** What ModuleDict and ParameterDict hold: items by name; iteration gives the names. */
  export interface DictOf<T> extends Iterable<string> {
    readonly length: number;
    readonly [name: string]: any;
    get(key: string): T | undefined;
    /** Sets item key. Returns this. */
    set(key: string, item: T): this;
    has(key: string): boolean;
    /** Removes item key and returns it. */
    pop(key: string): T | undefined;
    keys(): string[];
    values(): T[];
    entries(): [string, T][];
    /** PyTorch's items(): the same as entries(). */
    items(): [string, T][];
    /** Removes every item (the caller owns them). */
    clear(): void;
    /** Sets each named item, overwriting those of the same name (PyTorch's update); a bad entry sets none. Returns this. */
    update(items: Named<T> | DictOf<T>): this;
    [Symbol.iterator](): Iterator<string>;
  }

  /** nn.ModuleList(modules): modules named '0', '1', ..., indexable, no forward. */
  export class ModuleList extends Module {
    constructor(modules?: Module[]);
  }
  export interface ModuleList extends ListOf<Module> {}

  /** nn.ModuleDict(modules): modules by name; iteration gives the names. */
  export class ModuleDict extends Module {
    constructor(modules?: Named<Module>);
  }
  export interface ModuleDict extends DictOf<Module> {}

  /** nn.ParameterList(tensors): parameters '0', '1', ... (a float32 leaf gets requiresGrad). */
  export class ParameterList extends Module {
    constructor(tensors?: Tensor[]);
  }
  export interface ParameterList extends ListOf<Tensor> {}

  /** nn.ParameterDict(tensors): parameters by name (a float32 leaf gets requiresGrad); iteration gives the names. */
  export class ParameterDict extends Module {
    constructor(tensors?: Named<Tensor>);
  }
  export interface ParameterDict extends DictOf<Tensor> {}

  // ---- torchvision's building blocks (js/nn/blocks.js) ----

  /** A layer option: a Module class (constructed with torchvision's arguments) or a function returning a Module. */
  export type LayerFactory = (new (...args: any[]) => Module) | ((...args: any[]) => Module);

  /** Options of {@link Conv2dNormActivation}. */
  export interface Conv2dNormActivationOptions {
    stride?: number | [number, number];
    /** Default (kernelSize - 1) / 2 * dilation, floored, per dim. */
    padding?: number | [number, number] | string | null;
    groups?: number;
    /** Default BatchNorm2d; null for none. */
    normLayer?: LayerFactory | null;
    /** Default ReLU; null for none. */
    activationLayer?: LayerFactory | null;
    dilation?: number | [number, number];
    /** Accepted and ignored. */
    inplace?: boolean | null;
    /** Default: true only without a norm layer. */
    bias?: boolean | null;
  }
  /** torchvision.ops.Conv2dNormActivation: Conv2d '0', then the norm and the activation. */
  export class Conv2dNormActivation extends Sequential {
    constructor(inChannels: number, outChannels: number, kernelSize?: number | [number, number], options?: Conv2dNormActivationOptions);
    readonly outChannels: number;
  }
  /** torchvision.ops.SqueezeExcitation: input * scaleActivation(fc2(activation(fc1(avgpool(input))))). */
  export class SqueezeExcitation extends Module {
    constructor(inputChannels: number, squeezeChannels: number, options?: { activation?: LayerFactory; scaleActivation?: LayerFactory });
    forward(input: Tensor): Tensor;
  }
  /** Options of {@link MLP}. */
  export interface MLPOptions {
    normLayer?: LayerFactory | null;
    activationLayer?: LayerFactory;
    inplace?: boolean | null;
    bias?: boolean;
    dropout?: number;
  }
  /** torchvision.ops.MLP: Linear, [norm], activation, Dropout per hidden size; Linear and Dropout last. */
  export class MLP extends Sequential {
    constructor(inChannels: number, hiddenChannels: number[], options?: MLPOptions);
  }
  /** torchvision.ops.Permute(dims): x.permute(dims). */
  export class Permute extends Module {
    constructor(dims: number[]);
    forward(x: Tensor): Tensor;
  }
  /** torchvision.ops.StochasticDepth(p, mode): in training, rows ('row') or the batch ('batch') dropped with probability p and the rest scaled by 1 / (1 - p); identity in eval. */
  export class StochasticDepth extends Module {
    constructor(p: number, mode: 'row' | 'batch');
    forward(input: Tensor): Tensor;
  }
  /** torchvision's ConvNeXt LayerNorm2d: LayerNorm over the channels of [N, C, H, W]. */
  export class LayerNorm2d extends LayerNorm {}

  export namespace functional {
    /** torchvision.ops.stochastic_depth(input, p, mode, training = true). */
    function stochasticDepth(input: Tensor, p: number, mode: 'row' | 'batch', training?: boolean): Tensor;
  }

  /** How a loss reduces: per element ('none'), the mean (default) or the sum. */
  export type Reduction = 'none' | 'mean' | 'sum';
  export interface ReductionOptions {
    reduction?: Reduction;
  }
  /** Options of nllLoss / NLLLoss (PyTorch's weight, ignore_index, reduction). */
  export interface NLLLossOptions extends ReductionOptions {
    /** One weight per class, [C], or null. */
    weight?: Tensor | null;
    /** Targets equal to it count for nothing (default -100). */
    ignoreIndex?: number | bigint;
  }
  /** Options of crossEntropy / CrossEntropyLoss. */
  export interface CrossEntropyOptions extends NLLLossOptions {
    /** In [0, 1] (default 0). */
    labelSmoothing?: number;
  }
  /** Options of ctcLoss / CTCLoss. */
  export interface CTCLossOptions extends ReductionOptions {
    /** The blank class (default 0). */
    blank?: number | bigint;
    /** Infinite losses (impossible alignments) and their gradients become 0 (default false). */
    zeroInfinity?: boolean;
  }
  /** Lengths for ctcLoss: an int64 Tensor [N] or an array of integers. */
  export type Lengths = Tensor | ReadonlyArray<number | bigint>;

  /** nn.MSELoss: (input - target)^2 reduced; traces to ONNX. */
  export class MSELoss extends ReductionLoss<ReductionOptions> {}
  /** nn.NLLLoss on log-probabilities [N, C, d...] and int64 targets [N, d...]; not traceable. */
  export class NLLLoss extends Module {
    constructor(options?: NLLLossOptions);
    /** A buffer (in stateDict, freed by dispose()), or null. */
    weight: Tensor | null;
    forward(input: Tensor, target: Tensor): Tensor;
  }
  /** nn.CrossEntropyLoss on logits [N, C, d...] and int64 class targets; not traceable. */
  export class CrossEntropyLoss extends Module {
    constructor(options?: CrossEntropyOptions);
    weight: Tensor | null;
    readonly labelSmoothing: number;
    forward(input: Tensor, target: Tensor): Tensor;
  }
  /** nn.CTCLoss on log-probabilities [T, N, C]; not traceable. */
  export class CTCLoss extends Module {
    constructor(options?: CTCLossOptions);
    forward(logProbs: Tensor, targets: Tensor, inputLengths: Lengths, targetLengths: Lengths): Tensor;
  }

  /** Options of smoothL1Loss / SmoothL1Loss. */
  export interface SmoothL1Options extends ReductionOptions {
    /** Where the loss turns from quadratic to linear, >= 0 (default 1; 0: the L1 loss). */
    beta?: number;
  }
  /** Options of huberLoss / HuberLoss. */
  export interface HuberOptions extends ReductionOptions {
    /** Where the loss turns from quadratic to linear, > 0 (default 1). */
    delta?: number;
  }
  /** Options of binaryCrossEntropy / BCELoss. */
  export interface BCEOptions extends ReductionOptions {
    /** Multiplies each element's loss (broadcast), or null. */
    weight?: Tensor | null;
  }
  /** Options of binaryCrossEntropyWithLogits / BCEWithLogitsLoss. */
  export interface BCEWithLogitsOptions extends BCEOptions {
    /** Weight of the positive term per class (broadcast over the last dim), or null. */
    posWeight?: Tensor | null;
  }
  /** Options of klDiv / KLDivLoss. */
  export interface KLDivOptions {
    /** 'mean' (default: every element), 'batchmean' (the sum over the first dim's size), 'sum' or 'none'. */
    reduction?: Reduction | 'batchmean';
    /** The target holds log-probabilities (default false). */
    logTarget?: boolean;
  }
  /** Options of cosineSimilarity / CosineSimilarity. */
  export interface CosineSimilarityOptions {
    /** The dim the vectors run along (default 1). */
    dim?: number;
    /** Each norm's lower bound (default 1e-8). */
    eps?: number;
  }
  /** nn.L1Loss: |input - target| reduced. */
  export class L1Loss extends ReductionLoss<ReductionOptions> {}
  /** nn.SmoothL1Loss. */
  export class SmoothL1Loss extends ReductionLoss<SmoothL1Options> {
    readonly beta: number;
  }
  /** nn.HuberLoss. */
  export class HuberLoss extends ReductionLoss<HuberOptions> {
    readonly delta: number;
  }
  /** nn.BCELoss on probabilities in [0, 1]. */
  export class BCELoss extends ReductionLoss<BCEOptions> {
    /** A buffer (in stateDict, freed by dispose()), or null. */
    weight: Tensor | null;
  }
  /** nn.BCEWithLogitsLoss on logits. */
  export class BCEWithLogitsLoss extends ReductionLoss<BCEWithLogitsOptions> {
    /** Buffers (in stateDict, freed by dispose()), or null. */
    weight: Tensor | null;
    posWeight: Tensor | null;
  }
  /** nn.KLDivLoss on log-probabilities. */
  export class KLDivLoss extends Module {
    constructor(options?: KLDivOptions);
    readonly reduction: Reduction | 'batchmean';
    readonly logTarget: boolean;
    forward(input: Tensor, target: Tensor): Tensor;
  }
  /** nn.CosineSimilarity. */
  export class CosineSimilarity extends Module {
    constructor(options?: CosineSimilarityOptions);
    readonly dim: number;
    readonly eps: number;
    forward(x1: Tensor, x2: Tensor): Tensor;
  }
  /** Options of marginRankingLoss / hingeEmbeddingLoss and their modules. */
  export interface MarginOptions extends ReductionOptions {
    /** The margin (default 0 for marginRankingLoss, 1 for hingeEmbeddingLoss). */
    margin?: number;
  }
  /** nn.MarginRankingLoss: forward(input1, input2, target). */
  export class MarginRankingLoss extends ReductionLoss<MarginOptions, [input1: Tensor, input2: Tensor, target: Tensor]> {
    readonly margin: number;
  }
  /** nn.HingeEmbeddingLoss. */
  export class HingeEmbeddingLoss extends ReductionLoss<MarginOptions> {
    readonly margin: number;
  }
  /** nn.SoftMarginLoss. */
  export class SoftMarginLoss extends ReductionLoss<ReductionOptions> {}
  /** nn.CosineEmbeddingLoss: forward(input1, input2, target). */
  export class CosineEmbeddingLoss extends ReductionLoss<MarginOptions, [input1: Tensor, input2: Tensor, target: Tensor]> {
    readonly margin: number;
  }
  /** Options of tripletMarginLoss / TripletMarginLoss. */
  export interface TripletMarginOptions extends MarginOptions {
    /** The norm's order, > 0 (default 2). */
    p?: number;
    /** Added to each difference before its norm (default 1e-6). */
    eps?: number;
    /** Use the smaller of d(anchor, negative) and d(positive, negative) (default false). */
    swap?: boolean;
  }
  /** nn.TripletMarginLoss: forward(anchor, positive, negative). */
  export class TripletMarginLoss extends ReductionLoss<TripletMarginOptions, [anchor: Tensor, positive: Tensor, negative: Tensor]> {
    readonly margin: number;
    readonly p: number;
    readonly eps: number;
    readonly swap: boolean;
  }
  /** Options of multilabelSoftMarginLoss / MultiLabelSoftMarginLoss. */
  export interface MultiLabelSoftMarginOptions extends ReductionOptions {
    /** A weight per class (broadcast against the loss before its class sum). */
    weight?: Tensor | null;
  }
  /** Options of multiMarginLoss / MultiMarginLoss. */
  export interface MultiMarginOptions extends MarginOptions {
    /** 1 or 2 (default 1). */
    p?: number;
    /** A weight per class, scaling each sample's terms by its target's. */
    weight?: Tensor | null;
  }
  /** Options of poissonNllLoss / PoissonNLLLoss. */
  export interface PoissonNLLOptions extends ReductionOptions {
    /** The input is log(rate) (default true), else the rate. */
    logInput?: boolean;
    /** Add Stirling's term where target > 1 (default false). */
    full?: boolean;
    /** Added to the rate before its log when logInput is false (default 1e-8). */
    eps?: number;
  }
  /** Options of gaussianNllLoss / GaussianNLLLoss. */
  export interface GaussianNLLOptions extends ReductionOptions {
    /** Add 0.5 log(2 pi) (default false). */
    full?: boolean;
    /** The variance's lower clamp (default 1e-6). */
    eps?: number;
  }
  /** nn.MultiLabelSoftMarginLoss. */
  export class MultiLabelSoftMarginLoss extends ReductionLoss<MultiLabelSoftMarginOptions> {}
  /** nn.MultiLabelMarginLoss: forward(input, target (int64 classes ended by -1)). */
  export class MultiLabelMarginLoss extends ReductionLoss<ReductionOptions> {}
  /** nn.MultiMarginLoss: forward(input, target (int64 classes)). */
  export class MultiMarginLoss extends ReductionLoss<MultiMarginOptions> {
    readonly margin: number;
    readonly p: number;
  }
  /** nn.PoissonNLLLoss. */
  export class PoissonNLLLoss extends ReductionLoss<PoissonNLLOptions> {
    readonly logInput: boolean;
    readonly full: boolean;
    readonly eps: number;
  }
  /** nn.GaussianNLLLoss: forward(input, target, var). */
  export class GaussianNLLLoss extends ReductionLoss<GaussianNLLOptions, [input: Tensor, target: Tensor, variance: Tensor]> {
    readonly full: boolean;
    readonly eps: number;
  }

  export namespace functional {
    /** PyTorch's F.multilabel_soft_margin_loss: -(t logsigmoid(x) + (1 - t) logsigmoid(-x)) summed over the classes / C. */
    function multilabelSoftMarginLoss(input: Tensor, target: Tensor, options?: MultiLabelSoftMarginOptions): Tensor;
    /** PyTorch's F.multilabel_margin_loss: target int64 classes of input's shape, ended by -1. */
    function multilabelMarginLoss(input: Tensor, target: Tensor, options?: ReductionOptions): Tensor;
    /** PyTorch's F.multi_margin_loss: sum over i != y of max(0, margin - x[y] + x[i])^p / C. */
    function multiMarginLoss(input: Tensor, target: Tensor, options?: MultiMarginOptions): Tensor;
    /** PyTorch's F.poisson_nll_loss. */
    function poissonNllLoss(input: Tensor, target: Tensor, options?: PoissonNLLOptions): Tensor;
    /** PyTorch's F.gaussian_nll_loss (var of input's shape, without its last dim, or with a last dim of 1). */
    function gaussianNllLoss(input: Tensor, target: Tensor, variance: Tensor, options?: GaussianNLLOptions): Tensor;
    /** PyTorch's F.l1_loss. */
    function l1Loss(input: Tensor, target: Tensor, options?: ReductionOptions): Tensor;
    /** PyTorch's F.smooth_l1_loss. */
    function smoothL1Loss(input: Tensor, target: Tensor, options?: SmoothL1Options): Tensor;
    /** PyTorch's F.huber_loss. */
    function huberLoss(input: Tensor, target: Tensor, options?: HuberOptions): Tensor;
    /** PyTorch's F.binary_cross_entropy (logs clamped at -100). */
    function binaryCrossEntropy(input: Tensor, target: Tensor, options?: BCEOptions): Tensor;
    /** PyTorch's F.binary_cross_entropy_with_logits (its stable form). */
    function binaryCrossEntropyWithLogits(input: Tensor, target: Tensor, options?: BCEWithLogitsOptions): Tensor;
    /** PyTorch's F.kl_div. */
    function klDiv(input: Tensor, target: Tensor, options?: KLDivOptions): Tensor;
    /** PyTorch's F.cosine_similarity. */
    function cosineSimilarity(x1: Tensor, x2: Tensor, options?: CosineSimilarityOptions): Tensor;
    /** PyTorch's F.margin_ranking_loss: max(0, -target * (input1 - input2) + margin); the three of one number of dims. */
    function marginRankingLoss(input1: Tensor, input2: Tensor, target: Tensor, options?: MarginOptions): Tensor;
    /** PyTorch's F.hinge_embedding_loss: max(0, margin - input) where target != 1, plus input where target != -1. */
    function hingeEmbeddingLoss(input: Tensor, target: Tensor, options?: MarginOptions): Tensor;
    /** PyTorch's F.soft_margin_loss: log(1 + exp(-input * target)). */
    function softMarginLoss(input: Tensor, target: Tensor, options?: ReductionOptions): Tensor;
    /** PyTorch's F.cosine_embedding_loss: 1 - cos where target is 1, max(0, cos - margin) where -1; [N, D] inputs with [N] target, or [D] with 0-d. */
    function cosineEmbeddingLoss(input1: Tensor, input2: Tensor, target: Tensor, options?: MarginOptions): Tensor;
    /** PyTorch's F.triplet_margin_loss: max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm of a - b + eps over the last dim. */
    function tripletMarginLoss(anchor: Tensor, positive: Tensor, negative: Tensor, options?: TripletMarginOptions): Tensor;
    /** PyTorch's F.mse_loss. */
    function mseLoss(input: Tensor, target: Tensor, options?: ReductionOptions): Tensor;
    /** PyTorch's F.nll_loss. */
    function nllLoss(input: Tensor, target: Tensor, options?: NLLLossOptions): Tensor;
    /** PyTorch's F.cross_entropy: int64 class-index targets or float32 class probabilities (input's shape). */
    function crossEntropy(input: Tensor, target: Tensor, options?: CrossEntropyOptions): Tensor;
    /** PyTorch's F.ctc_loss. */
    function ctcLoss(logProbs: Tensor, targets: Tensor, inputLengths: Lengths, targetLengths: Lengths, options?: CTCLossOptions): Tensor;
  }
}

// ---- optim (js/optim/) ----------------------------------------------------------------------------

/** Optimizers with PyTorch's update rules (torch.optim); step() updates parameters in place. */
export namespace optim {
  /** A parameter group: its parameters and every option of its optimizer (PyTorch's param_groups entry). */
  export interface ParamGroup {
    params: Tensor[];
    lr: number;
    /** Set by a scheduler: the lr it started from. */
    initialLr?: number;
    [option: string]: unknown;
  }
  /** A group as given to an optimizer: its parameters, and options overriding the optimizer's. */
  export type ParamGroupInit<O> = { params: Tensor | Iterable<Tensor> } & O;
  /** An optimizer's stateDict(): state by parameter number, and the groups with parameter numbers. */
  export interface OptimizerStateDict {
    state: Record<string, Record<string, Tensor | number>>;
    paramGroups: Array<Record<string, unknown> & { params: number[] }>;
  }
  /** PyTorch's optimizer state_dict() shape: snake_case names (exp_avg, weight_decay, ...); step a number or a 0-dim tensor, an entry null when unset. */
  export interface PyTorchOptimizerStateDict {
    state: Record<string, Record<string, Tensor | number | null>>;
    param_groups: Array<Record<string, unknown> & { params: number[] }>;
  }
  /** The base class: parameter groups, per-parameter state, zeroGrad, stateDict, dispose. */
  export class Optimizer {
    /** Every parameter, group after group (null after dispose()). */
    readonly params: Tensor[] | null;
    /** The parameter groups (null after dispose()); change a group's lr or another option between steps. */
    paramGroups: ParamGroup[] | null;
    /** The options a group that gives none of its own has. */
    readonly defaults: Record<string, unknown>;
    /** The first group's lr; setting it sets every group's. */
    lr: number;
    /** One update of every parameter that has a gradient (under no-grad, temporaries freed). */
    step(): void;
    /** PyTorch's step(closure): calls closure (it zeroes the gradients, computes the loss and
     *  calls backward), then updates; returns what closure returned. */
    step<T>(closure: () => T): T;
    /** Drops every parameter's gradient; { setToNone: false } fills them with zeros instead. */
    zeroGrad(options?: { setToNone?: boolean }): void;
    /** PyTorch's add_param_group: a group, the defaults filling the options it omits. */
    addParamGroup(group: { params: Tensor | Iterable<Tensor>; [option: string]: unknown }): void;
    /** The state (the optimizer's own tensors: do not dispose them) and the groups, parameters by number. */
    stateDict(options?: { format?: 'onemodel' }): OptimizerStateDict;
    /** The same in PyTorch's shape and names ({ state, param_groups }, exp_avg_sq, weight_decay, ...). */
    stateDict(options: { format: 'pytorch' }): PyTorchOptimizerStateDict;
    /** Loads a stateDict() of either format, or PyTorch's (tensors copied); checked first, so a mismatch changes nothing. */
    loadStateDict(state: OptimizerStateDict | PyTorchOptimizerStateDict): void;
    /** Frees the optimizer's state tensors (not the parameters). Idempotent. */
    dispose(): void;
    /** For subclasses: the state of parameter p (made on first use), named tensors and numbers. */
    protected state(p: Tensor): Record<string, Tensor | number>;
    /** For subclasses: a zero tensor shaped like p, owned by the optimizer (freed by dispose()). */
    protected zerosLike(p: Tensor): Tensor;
    /** For subclasses: fn's result made outside every om.tidy scope (a tensor the optimizer owns). */
    protected owned<T>(fn: () => T): T;
  }
  export interface SGDOptions {
    lr?: number;
    momentum?: number;
    dampening?: number;
    weightDecay?: number;
    nesterov?: boolean;
    maximize?: boolean;
  }
  /** torch.optim.SGD (lr default 1e-3). */
  export class SGD extends Optimizer {
    constructor(params: Iterable<Tensor> | Array<ParamGroupInit<SGDOptions>>, options?: SGDOptions);
    /** Refuses nesterov without momentum or with dampening. */
    protected checkGroup(group: ParamGroup, who: string): void;
    /** One parameter's update, step() calls it (under no-grad) for each parameter with a gradient. */
    protected update(p: Tensor, grad: Tensor, state: Record<string, Tensor | number>, group: ParamGroup): void;
  }
  export interface AdamOptions {
    lr?: number;
    betas?: [number, number];
    eps?: number;
    weightDecay?: number;
    amsgrad?: boolean;
    maximize?: boolean;
  }
  /** torch.optim.Adam (lr 1e-3, betas [0.9, 0.999], eps 1e-8, weightDecay 0). */
  export class Adam extends Optimizer {
    constructor(params: Iterable<Tensor> | Array<ParamGroupInit<AdamOptions>>, options?: AdamOptions);
    /** One parameter's update, step() calls it (under no-grad) for each parameter with a gradient. */
    protected update(p: Tensor, grad: Tensor, state: Record<string, Tensor | number>, group: ParamGroup): void;
  }
  /** torch.optim.AdamW: decoupled weight decay (default 0.01). */
  export class AdamW extends Optimizer {
    constructor(params: Iterable<Tensor> | Array<ParamGroupInit<AdamOptions>>, options?: AdamOptions);
    /** One parameter's update, step() calls it (under no-grad) for each parameter with a gradient. */
    protected update(p: Tensor, grad: Tensor, state: Record<string, Tensor | number>, group: ParamGroup): void;
  }
  export interface RMSpropOptions {
    lr?: number;
    alpha?: number;
    eps?: number;
    weightDecay?: number;
    momentum?: number;
    centered?: boolean;
    maximize?: boolean;
  }
  /** torch.optim.RMSprop (lr 1e-2, alpha 0.99, eps 1e-8). */
  export class RMSprop extends Optimizer {
    constructor(params: Iterable<Tensor> | Array<ParamGroupInit<RMSpropOptions>>, options?: RMSpropOptions);
    /** One parameter's update, step() calls it (under no-grad) for each parameter with a gradient. */
    protected update(p: Tensor, grad: Tensor, state: Record<string, Tensor | number>, group: ParamGroup): void;
  }
  export interface AdagradOptions {
    lr?: number;
    lrDecay?: number;
    weightDecay?: number;
    initialAccumulatorValue?: number;
    eps?: number;
    maximize?: boolean;
  }
  /** torch.optim.Adagrad (lr 1e-2, eps 1e-10). */
  export class Adagrad extends Optimizer {
    constructor(params: Iterable<Tensor> | Array<ParamGroupInit<AdagradOptions>>, options?: AdagradOptions);
    /** One parameter's update, step() calls it (under no-grad) for each parameter with a gradient. */
    protected update(p: Tensor, grad: Tensor, state: Record<string, Tensor | number>, group: ParamGroup): void;
  }

  /**
   * torch.optim.lr_scheduler: each scheduler sets its optimizer's groups' lr at construction (epoch 0)
   * and at each step(). Required arguments positionally then an options object, or all in one object.
   */
  export namespace lrScheduler {
    /** The base of the epoch-counting schedulers (PyTorch's _LRScheduler). */
    export class LRScheduler {
      readonly optimizer: Optimizer;
      /** The epoch the last step reached (0 after construction). */
      lastEpoch: number;
      /** Each group's initialLr when the scheduler was made. */
      baseLrs: number[];
      /** How many times step() ran (the construction's counts). */
      stepCount: number;
      /** One epoch on; step(epoch) jumps there (the closed form where the scheduler has one). */
      step(epoch?: number): void;
      /** The lrs the last step set, one per group. */
      getLastLr(): number[];
      /** The scheduler's state as plain data (JSON-safe). */
      stateDict(): Record<string, unknown>;
      loadStateDict(state: Record<string, unknown>): void;
      /** The groups' current lrs (what the chainable rules start from). */
      readonly groupLrs: number[];
      /** For subclasses: PyTorch's _initial_step (the first step, at construction). */
      protected initialStep(): void;
    }
    interface Last { lastEpoch?: number }
    export class StepLR extends LRScheduler {
      constructor(optimizer: Optimizer, stepSize: number, options?: { gamma?: number } & Last);
      constructor(optimizer: Optimizer, options: { stepSize: number; gamma?: number } & Last);
      protected getLr(): number[];
      protected closedFormLr(): number[];
    }
    export class MultiStepLR extends LRScheduler {
      constructor(optimizer: Optimizer, milestones: number[], options?: { gamma?: number } & Last);
      constructor(optimizer: Optimizer, options: { milestones: number[]; gamma?: number } & Last);
      protected getLr(): number[];
      protected closedFormLr(): number[];
    }
    export class ConstantLR extends LRScheduler {
      constructor(optimizer: Optimizer, options?: { factor?: number; totalIters?: number } & Last);
      protected getLr(): number[];
      protected closedFormLr(): number[];
    }
    export class LinearLR extends LRScheduler {
      constructor(optimizer: Optimizer, options?: { startFactor?: number; endFactor?: number; totalIters?: number } & Last);
      protected getLr(): number[];
      protected closedFormLr(): number[];
    }
    export class ExponentialLR extends LRScheduler {
      constructor(optimizer: Optimizer, gamma: number, options?: Last);
      constructor(optimizer: Optimizer, options: { gamma: number } & Last);
      protected getLr(): number[];
      protected closedFormLr(): number[];
    }
    export class PolynomialLR extends LRScheduler {
      constructor(optimizer: Optimizer, options?: { totalIters?: number; power?: number } & Last);
      protected getLr(): number[];
      protected closedFormLr(): number[];
    }
    export class CosineAnnealingLR extends LRScheduler {
      constructor(optimizer: Optimizer, tMax: number, options?: { etaMin?: number } & Last);
      constructor(optimizer: Optimizer, options: { tMax: number; etaMin?: number } & Last);
      protected getLr(): number[];
      protected closedFormLr(): number[];
    }
    type Lambda = (epoch: number) => number;
    export class LambdaLR extends LRScheduler {
      constructor(optimizer: Optimizer, lrLambda: Lambda | Lambda[], options?: Last);
      constructor(optimizer: Optimizer, options: { lrLambda: Lambda | Lambda[] } & Last);
      protected getLr(): number[];
    }
    export class MultiplicativeLR extends LRScheduler {
      constructor(optimizer: Optimizer, lrLambda: Lambda | Lambda[], options?: Last);
      constructor(optimizer: Optimizer, options: { lrLambda: Lambda | Lambda[] } & Last);
      protected getLr(): number[];
    }
    export interface OneCycleLROptions extends Last {
      totalSteps?: number;
      epochs?: number;
      stepsPerEpoch?: number;
      pctStart?: number;
      annealStrategy?: 'cos' | 'linear';
      cycleMomentum?: boolean;
      baseMomentum?: number | number[];
      maxMomentum?: number | number[];
      divFactor?: number;
      finalDivFactor?: number;
      threePhase?: boolean;
    }
    export class OneCycleLR extends LRScheduler {
      constructor(optimizer: Optimizer, maxLr: number | number[], options?: OneCycleLROptions);
      constructor(optimizer: Optimizer, options: { maxLr: number | number[] } & OneCycleLROptions);
      protected getLr(): number[];
    }
    export class CosineAnnealingWarmRestarts extends LRScheduler {
      constructor(optimizer: Optimizer, t0: number, options?: { tMult?: number; etaMin?: number } & Last);
      constructor(optimizer: Optimizer, options: { t0: number; tMult?: number; etaMin?: number } & Last);
      protected getLr(): number[];
    }
    export class SequentialLR extends LRScheduler {
      constructor(optimizer: Optimizer, schedulers: LRScheduler[], milestones: number[], options?: Last);
      constructor(optimizer: Optimizer, options: { schedulers: LRScheduler[]; milestones: number[] } & Last);
    }
    export interface ReduceLROnPlateauOptions {
      mode?: 'min' | 'max';
      factor?: number;
      patience?: number;
      threshold?: number;
      thresholdMode?: 'rel' | 'abs';
      cooldown?: number;
      minLr?: number | number[];
      eps?: number;
    }
    /** Not epoch-driven: step(metric) after each epoch. */
    export class ReduceLROnPlateau {
      constructor(optimizer: Optimizer, options?: ReduceLROnPlateauOptions);
      readonly optimizer: Optimizer;
      /** One epoch's metric: a number or a 1-element Tensor. */
      step(metric: number | Tensor): void;
      getLastLr(): number[];
      stateDict(): Record<string, unknown>;
      loadStateDict(state: Record<string, unknown>): void;
    }
  }
}

// ---- activations, clamp, cumsum, pad, maskedFill, dropout (js/ops/act.js, js/nn/activation.js) ----

/** Bounds of {@link Tensor.clamp}: either may be null/undefined for none (not both). */
export interface ClampOptions {
  min?: number | bigint | Tensor | null;
  max?: number | bigint | Tensor | null;
}

export interface Tensor {
  /** The error function (float32; int64 and bool are promoted to float32). */
  erf(): Tensor;
  /**
   * min(max(this, min), max), NaN kept, promoted as PyTorch's (an int64 or bool tensor with a
   * fractional bound is float32, a bool one with integer bounds int64); Tensor bounds broadcast.
   */
  clamp(min?: number | bigint | Tensor | null, max?: number | bigint | Tensor | null): Tensor;
  clamp(options: ClampOptions): Tensor;
  /** Alias of clamp, as PyTorch's clip. */
  clip(min?: number | bigint | Tensor | null, max?: number | bigint | Tensor | null): Tensor;
  clip(options: ClampOptions): Tensor;
  /** Running sum along dim (float32; int64; bool counts into int64). */
  cumsum(dim: number): Tensor;
  cumsum(options: { dim: number }): Tensor;
  /** mask ? value : this, mask bool and broadcast with this (value, or a 0-d Tensor's, converted to this dtype). */
  maskedFill(mask: Tensor, value: number | bigint | boolean | Tensor): Tensor;
  maskedFill(options: { mask: Tensor; value: number | bigint | boolean | Tensor }): Tensor;
  maskedFill(mask: Tensor, options: { value: number | bigint | boolean | Tensor }): Tensor;
}

export namespace nn {
  export namespace functional {
    function relu(input: Tensor): Tensor;
    function sigmoid(input: Tensor): Tensor;
    function tanh(input: Tensor): Tensor;
    /** input * sigmoid(input). */
    function silu(input: Tensor): Tensor;
    /** input * min(max(input + 3, 0), 6) / 6. */
    function hardswish(input: Tensor): Tensor;
    /** min(max(input + 3, 0), 6) / 6; gradient 1/6 strictly inside (-3, 3). */
    function hardsigmoid(input: Tensor): Tensor;
    /** min(max(input, minVal), maxVal) (defaults -1, 1); gradient 0 at the bounds, as PyTorch's. */
    function hardtanh(input: Tensor, minVal?: number, maxVal?: number): Tensor;
    function hardtanh(input: Tensor, options: { minVal?: number; maxVal?: number }): Tensor;
    /** hardtanh(input, 0, 6). */
    function relu6(input: Tensor): Tensor;
    /** input > 0 ? input : input * negativeSlope (default 0.01). */
    function leakyRelu(input: Tensor, negativeSlope?: number): Tensor;
    function leakyRelu(input: Tensor, options: { negativeSlope?: number }): Tensor;
    /** input > 0 ? input : alpha * (exp(input) - 1) (default alpha 1). */
    function elu(input: Tensor, alpha?: number): Tensor;
    function elu(input: Tensor, options: { alpha?: number }): Tensor;
    /** input * Phi(input), approximate 'none' (default) or 'tanh'. */
    function gelu(input: Tensor, options?: { approximate?: 'none' | 'tanh' }): Tensor;
    /** log(1 + exp(beta input)) / beta; input where beta input > threshold (defaults 1, 20). */
    function softplus(input: Tensor, beta?: number, threshold?: number): Tensor;
    function softplus(input: Tensor, options: { beta?: number; threshold?: number }): Tensor;
    /** PyTorch's F.pad: (before, after) pairs from the last dim backwards. */
    function pad(input: Tensor, pad: readonly (number | bigint)[], mode?: PadMode, value?: number | null): Tensor;
    function pad(input: Tensor, pad: readonly (number | bigint)[], options: { mode?: PadMode; value?: number | null }): Tensor;
    /** PyTorch's F.dropout (p 0.5, training true by default); eval returns a new handle to the input. */
    function dropout(input: Tensor, p?: number, training?: boolean): Tensor;
    function dropout(input: Tensor, options: { p?: number; training?: boolean }): Tensor;
  }

  /** Padding modes of {@link functional.pad}. */
  export type PadMode = 'constant' | 'reflect' | 'replicate';

  export class ReLU extends Module { constructor(inplace?: boolean | { inplace?: boolean }); forward(x: Tensor): Tensor; }
  export class Sigmoid extends Module { forward(x: Tensor): Tensor; }
  export class Tanh extends Module { forward(x: Tensor): Tensor; }
  export class SiLU extends Module { constructor(inplace?: boolean | { inplace?: boolean }); forward(x: Tensor): Tensor; }
  export class Hardswish extends Module { constructor(inplace?: boolean | { inplace?: boolean }); forward(x: Tensor): Tensor; }
  /** min(max(x + 3, 0), 6) / 6. */
  export class Hardsigmoid extends Module { constructor(inplace?: boolean | { inplace?: boolean }); forward(x: Tensor): Tensor; }
  /** min(max(x, 0), 6); traces to Clip. */
  export class ReLU6 extends Module { constructor(inplace?: boolean | { inplace?: boolean }); forward(x: Tensor): Tensor; }
  /** min(max(x, minVal), maxVal) (defaults -1, 1; maxVal must exceed minVal); traces to Clip. */
  export class Hardtanh extends Module {
    constructor(minVal?: number, maxVal?: number, inplace?: boolean);
    constructor(options: { minVal?: number; maxVal?: number; inplace?: boolean });
    minVal: number;
    maxVal: number;
    forward(x: Tensor): Tensor;
  }
  /** x > 0 ? x : negativeSlope * x (default 0.01); traces to LeakyRelu. */
  export class LeakyReLU extends Module {
    constructor(negativeSlope?: number, inplace?: boolean);
    constructor(options: { negativeSlope?: number; inplace?: boolean });
    negativeSlope: number;
    forward(x: Tensor): Tensor;
  }
  /** x > 0 ? x : alpha * (exp(x) - 1) (default alpha 1); traces to Elu. */
  export class ELU extends Module {
    /** The negative branch's scale. */
    constructor(alpha?: number, inplace?: boolean);
    constructor(options: { alpha?: number; inplace?: boolean });
    alpha: number;
    forward(x: Tensor): Tensor;
  }
  /** x * Phi(x), or its tanh approximation; traces to Gelu (opset 20). */
  export class GELU extends Module {
    constructor(approximate?: 'none' | 'tanh');
    constructor(options: { approximate?: 'none' | 'tanh' });
    approximate: 'none' | 'tanh';
    forward(x: Tensor): Tensor;
  }
  /** log(1 + exp(beta x)) / beta, x where beta x > threshold (defaults 1, 20). */
  export class Softplus extends Module {
    constructor(beta?: number, threshold?: number);
    constructor(options: { beta?: number; threshold?: number });
    beta: number;
    threshold: number;
    forward(x: Tensor): Tensor;
  }
  /** Returns its input (a new handle to the same tensor). */
  export class Identity extends Module {
    constructor(...args: unknown[]);
    forward(x: Tensor): Tensor;
  }
  /** nn.Flatten(startDim = 1, endDim = -1): x.flatten(startDim, endDim), keeping the batch dim. */
  export class Flatten extends Module {
    constructor(startDim?: number, endDim?: number);
    constructor(options: { startDim?: number; endDim?: number });
    startDim: number;
    endDim: number;
    forward(x: Tensor): Tensor;
  }
  /** Dropout(p = 0.5): active while training (module.train()), the input itself in eval mode. */
  export class Dropout extends Module {
    /** p: the probability of zeroing an element, in [0, 1]. */
    constructor(p?: number, inplace?: boolean);
    constructor(options: { p?: number; inplace?: boolean });
    p: number;
    forward(x: Tensor): Tensor;
  }
}

// ---- convolution and pooling (js/ops/conv.js, js/nn/conv.js) ----------------------------------

export namespace nn {

  /** A size for each of two spatial dims, or one for both. */
  export type Size2 = number | readonly [number, number];
  /** Options of {@link functional.unfold} and {@link functional.fold}. */
  export interface UnfoldOptions { dilation?: Size2; padding?: Size2; stride?: Size2 }

  /** A 1-D op's size: an integer or a 1-array. */
  export type Size1 = number | readonly [number];
  /** A 3-D op's size: an integer or one per spatial dim (D, H, W). */
  export type Size3 = number | readonly [number, number, number];

  // The options of the convolutions and pools, one shape for every rank: S is Size1, Size2 or Size3.
  /** Keyword arguments of a convolution (PyTorch's defaults: stride 1, padding 0, dilation 1, groups 1). */
  export interface ConvOptionsOf<S> {
    stride?: S;
    /** Integers, 'valid' (0) or 'same' (stride 1; refused when PyTorch would pad unevenly). */
    padding?: S | 'valid' | 'same';
    dilation?: S;
    groups?: number;
  }
  /** Keyword arguments of a transposed convolution (outputPadding < stride or dilation). */
  export interface ConvTransposeOptionsOf<S> {
    stride?: S;
    padding?: S;
    outputPadding?: S;
    dilation?: S;
    groups?: number;
  }
  /** A convolution module's options: the functional options plus bias (default true) and paddingMode ('zeros' only). */
  export interface ModuleOptionsOf {
    bias?: boolean;
    paddingMode?: 'zeros';
  }
  /** Keyword arguments of a max pool (stride defaults to the kernel size). */
  export interface MaxPoolOptionsOf<S> {
    stride?: S | null;
    padding?: S;
    dilation?: S;
    ceilMode?: boolean;
    /** true: [values, indices] (the functions' overloads and the modules' forward). */
    returnIndices?: boolean;
  }
  /** Keyword arguments of a max unpool (stride defaults to the kernel size). */
  export interface MaxUnpoolOptionsOf<S> {
    stride?: S | null;
    padding?: S;
    /** The spatial sizes (or N, C and them); default (in - 1) stride - 2 padding + kernel, each within a stride of that. */
    outputSize?: readonly number[] | null;
  }
  /** Keyword arguments of an average pool (stride defaults to the kernel size). */
  export interface AvgPoolOptionsOf<S> {
    stride?: S | null;
    padding?: S;
    ceilMode?: boolean;
    /** Default true. */
    countIncludePad?: boolean;
    /** Only null is supported. */
    divisorOverride?: null;
  }

  /** Keyword arguments of conv1d / nn.Conv1d. */
  export interface Conv1dOptions extends ConvOptionsOf<Size1> {}
  /** Keyword arguments of conv2d / nn.Conv2d. */
  export interface ConvOptions extends ConvOptionsOf<Size2> {}
  /** Keyword arguments of conv3d / nn.Conv3d. */
  export interface Conv3dOptions extends ConvOptionsOf<Size3> {}
  /** Keyword arguments of convTranspose1d / nn.ConvTranspose1d. */
  export interface ConvTranspose1dOptions extends ConvTransposeOptionsOf<Size1> {}
  export interface ConvTranspose1dModuleOptions extends ConvTranspose1dOptions, ModuleOptionsOf {}
  /** Keyword arguments of convTranspose2d / nn.ConvTranspose2d. */
  export interface ConvTransposeOptions extends ConvTransposeOptionsOf<Size2> {}
  /** Keyword arguments of convTranspose3d / nn.ConvTranspose3d. */
  export interface ConvTranspose3dOptions extends ConvTransposeOptionsOf<Size3> {}
  export interface Conv1dModuleOptions extends Conv1dOptions, ModuleOptionsOf {}
  export interface ConvModuleOptions extends ConvOptions, ModuleOptionsOf {}
  export interface Conv3dModuleOptions extends Conv3dOptions, ModuleOptionsOf {}
  export interface ConvTransposeModuleOptions extends ConvTransposeOptions, ModuleOptionsOf {}
  export interface ConvTranspose3dModuleOptions extends ConvTranspose3dOptions, ModuleOptionsOf {}
  /** Keyword arguments of maxPool1d / nn.MaxPool1d. */
  export interface MaxPool1dOptions extends MaxPoolOptionsOf<Size1> {}
  /** Keyword arguments of maxPool2d / nn.MaxPool2d. */
  export interface MaxPoolOptions extends MaxPoolOptionsOf<Size2> {}
  /** Keyword arguments of maxPool3d / nn.MaxPool3d. */
  export interface MaxPool3dOptions extends MaxPoolOptionsOf<Size3> {}
  /** Keyword arguments of avgPool1d / nn.AvgPool1d. */
  export interface AvgPool1dOptions extends AvgPoolOptionsOf<Size1> {}
  /** Keyword arguments of avgPool2d / nn.AvgPool2d. */
  export interface AvgPoolOptions extends AvgPoolOptionsOf<Size2> {}
  /** Keyword arguments of avgPool3d / nn.AvgPool3d. */
  export interface AvgPool3dOptions extends AvgPoolOptionsOf<Size3> {}

  /** The settings and parameters every convolution module has (PyTorch's _ConvNd). */
  export interface ConvFields {
    readonly inChannels: number;
    readonly outChannels: number;
    readonly kernelSize: number[];
    readonly stride: number[];
    readonly dilation: number[];
    readonly groups: number;
    /** [outChannels, inChannels/groups, ...kernelSize] ([inChannels, outChannels/groups, ...] transposed). */
    weight: Tensor;
    /** [outChannels], or null without bias. */
    bias: Tensor | null;
  }

  /**
   * PyTorch's nn.Conv2d: weight [outChannels, inChannels/groups, kH, kW], bias [outChannels], both
   * uniform in ±1/sqrt(fan_in) (kaiming_uniform with a = sqrt(5)), fan_in = inChannels/groups * kH * kW.
   */
  export class Conv2d extends Module {
    constructor(inChannels: number, outChannels: number, kernelSize: Size2, options?: ConvModuleOptions);
    /** kernelSize by name (torchvision's nn.Conv2d(in, out, bias=False, **kwargs)). */
    constructor(inChannels: number, outChannels: number, options: ConvModuleOptions & { kernelSize: Size2 });
    readonly padding: number[] | 'valid' | 'same';
    forward(x: Tensor): Tensor;
  }
  export interface Conv2d extends ConvFields {}
  /** PyTorch's nn.Conv1d: weight [outChannels, inChannels/groups, k], bias [outChannels]. */
  export class Conv1d extends Module {
    constructor(inChannels: number, outChannels: number, kernelSize: number | readonly [number], options?: Conv1dModuleOptions);
    /** kernelSize by name (torchvision's nn.Conv2d(in, out, bias=False, **kwargs)). */
    constructor(inChannels: number, outChannels: number, options: Conv1dModuleOptions & { kernelSize: number | readonly [number] });
    readonly padding: number[] | 'valid' | 'same';
    forward(x: Tensor): Tensor;
  }
  export interface Conv1d extends ConvFields {}
  /** PyTorch's nn.ConvTranspose1d: weight [inChannels, outChannels/groups, k], bias [outChannels] ({@link functional.convTranspose1d}); kernelSize also by name. */
  export class ConvTranspose1d extends Module {
    constructor(inChannels: number, outChannels: number, kernelSize: Size1 | (ConvTranspose1dModuleOptions & { kernelSize: Size1 }), options?: ConvTranspose1dModuleOptions);
    readonly padding: number[];
    readonly outputPadding: number[];
    forward(x: Tensor): Tensor;
  }
  export interface ConvTranspose1d extends ConvFields {}
  /**
   * PyTorch's nn.ConvTranspose2d: weight [inChannels, outChannels/groups, kH, kW], bias
   * [outChannels], uniform in ±1/sqrt(outChannels/groups * kH * kW) (PyTorch's fan_in of that weight).
   */
  export class ConvTranspose2d extends Module {
    constructor(inChannels: number, outChannels: number, kernelSize: Size2, options?: ConvTransposeModuleOptions);
    /** kernelSize by name (torchvision's nn.Conv2d(in, out, bias=False, **kwargs)). */
    constructor(inChannels: number, outChannels: number, options: ConvTransposeModuleOptions & { kernelSize: Size2 });
    readonly padding: number[];
    readonly outputPadding: number[];
    forward(x: Tensor): Tensor;
  }
  export interface ConvTranspose2d extends ConvFields {}
  /** PyTorch's nn.MaxPool2d: forward gives [values, indices] with returnIndices true. */
  export class MaxPool2d<R extends boolean = false> extends Module {
    constructor(kernelSize: Size2, options?: MaxPoolOptions & { returnIndices?: R });
    readonly returnIndices: R;
    forward(x: Tensor): R extends true ? [Tensor, Tensor] : Tensor;
  }
  /** PyTorch's nn.AvgPool2d. */
  export class AvgPool2d extends Module {
    constructor(kernelSize: Size2, options?: AvgPoolOptions);
    forward(x: Tensor): Tensor;
  }
  /** PyTorch's nn.MaxPool1d: forward gives [values, indices] with returnIndices true. */
  export class MaxPool1d<R extends boolean = false> extends Module {
    constructor(kernelSize: Size1, options?: MaxPool1dOptions & { returnIndices?: R });
    readonly returnIndices: R;
    forward(x: Tensor): R extends true ? [Tensor, Tensor] : Tensor;
  }
  /** PyTorch's nn.AvgPool1d. */
  export class AvgPool1d extends Module {
    constructor(kernelSize: Size1, options?: AvgPool1dOptions);
    forward(x: Tensor): Tensor;
  }
  /** PyTorch's nn.AdaptiveAvgPool1d. */
  export class AdaptiveAvgPool1d extends Module {
    constructor(outputSize: number | null);
    forward(x: Tensor): Tensor;
  }
  /** PyTorch's nn.AdaptiveAvgPool2d. */
  export class AdaptiveAvgPool2d extends Module {
    constructor(outputSize: number | readonly [number | null, number | null]);
    forward(x: Tensor): Tensor;
  }
  /** PyTorch's nn.Conv3d: weight [outChannels, inChannels/groups, kD, kH, kW], bias [outChannels] ({@link functional.conv3d}). */
  export class Conv3d extends Module {
    constructor(inChannels: number, outChannels: number, kernelSize: Size3, options?: Conv3dModuleOptions);
    /** kernelSize by name (torchvision's nn.Conv2d(in, out, bias=False, **kwargs)). */
    constructor(inChannels: number, outChannels: number, options: Conv3dModuleOptions & { kernelSize: Size3 });
    readonly padding: number[] | 'valid' | 'same';
    forward(x: Tensor): Tensor;
  }
  export interface Conv3d extends ConvFields {}
  /**
   * PyTorch's nn.ConvTranspose3d: weight [inChannels, outChannels/groups, kD, kH, kW], bias
   * [outChannels] ({@link functional.convTranspose3d}).
   */
  export class ConvTranspose3d extends Module {
    constructor(inChannels: number, outChannels: number, kernelSize: Size3, options?: ConvTranspose3dModuleOptions);
    /** kernelSize by name (torchvision's nn.Conv2d(in, out, bias=False, **kwargs)). */
    constructor(inChannels: number, outChannels: number, options: ConvTranspose3dModuleOptions & { kernelSize: Size3 });
    readonly padding: number[];
    readonly outputPadding: number[];
    forward(x: Tensor): Tensor;
  }
  export interface ConvTranspose3d extends ConvFields {}
  /** PyTorch's nn.MaxPool3d: forward gives [values, indices] with returnIndices true. */
  export class MaxPool3d<R extends boolean = false> extends Module {
    constructor(kernelSize: Size3, options?: MaxPool3dOptions & { returnIndices?: R });
    readonly returnIndices: R;
    forward(x: Tensor): R extends true ? [Tensor, Tensor] : Tensor;
  }
  /** PyTorch's nn.AvgPool3d. */
  export class AvgPool3d extends Module {
    constructor(kernelSize: Size3, options?: AvgPool3dOptions);
    forward(x: Tensor): Tensor;
  }
  /** PyTorch's nn.AdaptiveAvgPool3d. */
  export class AdaptiveAvgPool3d extends Module {
    constructor(outputSize: number | null | readonly [number | null, number | null, number | null]);
    forward(x: Tensor): Tensor;
  }
  /** PyTorch's nn.AdaptiveMaxPool1d: forward gives [values, indices] with returnIndices. */
  export class AdaptiveMaxPool1d extends Module {
    constructor(outputSize: number, returnIndices?: boolean | { returnIndices?: boolean });
    readonly outputSize: number;
    readonly returnIndices: boolean;
    forward(x: Tensor): Tensor | [Tensor, Tensor];
  }
  /** PyTorch's nn.AdaptiveMaxPool2d: forward gives [values, indices] with returnIndices. */
  export class AdaptiveMaxPool2d extends Module {
    constructor(outputSize: number | readonly [number | null, number | null], returnIndices?: boolean | { returnIndices?: boolean });
    readonly outputSize: number | readonly [number | null, number | null];
    readonly returnIndices: boolean;
    forward(x: Tensor): Tensor | [Tensor, Tensor];
  }
  /** PyTorch's nn.AdaptiveMaxPool3d: forward gives [values, indices] with returnIndices. */
  export class AdaptiveMaxPool3d extends Module {
    constructor(outputSize: number | readonly [number | null, number | null, number | null], returnIndices?: boolean | { returnIndices?: boolean });
    readonly outputSize: number | readonly [number | null, number | null, number | null];
    readonly returnIndices: boolean;
    forward(x: Tensor): Tensor | [Tensor, Tensor];
  }
  /** PyTorch's nn.MaxUnpool1d, 2d and 3d (kernelSize, { stride, padding }): forward(input, indices, outputSize?) as {@link functional.maxUnpool2d} at its rank. */
  export class MaxUnpool1d extends Module { constructor(kernelSize: Size1, options?: MaxUnpoolOptionsOf<Size1>); forward(input: Tensor, indices: Tensor, outputSize?: readonly number[] | null): Tensor; }
  export class MaxUnpool2d extends Module { constructor(kernelSize: Size2, options?: MaxUnpoolOptionsOf<Size2>); forward(input: Tensor, indices: Tensor, outputSize?: readonly number[] | null): Tensor; }
  export class MaxUnpool3d extends Module { constructor(kernelSize: Size3, options?: MaxUnpoolOptionsOf<Size3>); forward(input: Tensor, indices: Tensor, outputSize?: readonly number[] | null): Tensor; }
  /** PyTorch's nn.Unfold: {@link functional.unfold} with these settings; no parameters. */
  export class Unfold extends Module {
    constructor(kernelSize: Size2, options?: UnfoldOptions);
    forward(x: Tensor): Tensor;
  }
  /** PyTorch's nn.Fold: {@link functional.fold} with these settings; no parameters. */
  export class Fold extends Module {
    constructor(outputSize: Size2, kernelSize: Size2, options?: UnfoldOptions);
    forward(x: Tensor): Tensor;
  }
}

// ---- initialisers (js/nn/init.js) --------------------------------------------------------------

export namespace nn {
  /**
   * torch.nn.init in camelCase: each writes into its float32 tensor without recording for autograd
   * and returns it; arguments are PyTorch's, positional or as one options object after the tensor.
   */
  export namespace init {
    /** The recommended gain for a nonlinearity (PyTorch's table; leaky_relu's param is its slope, default 0.01). */
    function calculateGain(nonlinearity: string, param?: number | null): number;
    function uniform_(tensor: Tensor, a?: number, b?: number): Tensor;
    function uniform_(tensor: Tensor, options: { a?: number; b?: number }): Tensor;
    function normal_(tensor: Tensor, mean?: number, std?: number): Tensor;
    function normal_(tensor: Tensor, options: { mean?: number; std?: number }): Tensor;
    /** Normal values redrawn until each lies in [a, b]. */
    function truncNormal_(tensor: Tensor, mean?: number, std?: number, a?: number, b?: number): Tensor;
    function truncNormal_(tensor: Tensor, options: { mean?: number; std?: number; a?: number; b?: number }): Tensor;
    function constant_(tensor: Tensor, val: number): Tensor;
    function zeros_(tensor: Tensor): Tensor;
    function ones_(tensor: Tensor): Tensor;
    /** Fan modes of the kaiming initialisers. */
    type FanMode = 'fan_in' | 'fan_out';
    function kaimingUniform_(tensor: Tensor, a?: number, mode?: FanMode, nonlinearity?: string): Tensor;
    function kaimingUniform_(tensor: Tensor, options: { a?: number; mode?: FanMode; nonlinearity?: string }): Tensor;
    function kaimingNormal_(tensor: Tensor, a?: number, mode?: FanMode, nonlinearity?: string): Tensor;
    function kaimingNormal_(tensor: Tensor, options: { a?: number; mode?: FanMode; nonlinearity?: string }): Tensor;
    function xavierUniform_(tensor: Tensor, gain?: number): Tensor;
    function xavierUniform_(tensor: Tensor, options: { gain?: number }): Tensor;
    function xavierNormal_(tensor: Tensor, gain?: number): Tensor;
    function xavierNormal_(tensor: Tensor, options: { gain?: number }): Tensor;
  }
}

// ---- om.nn.utils (js/nn/utils.js) ----

export namespace nn {
  /** torch.nn.utils: gradient clipping and parameter/vector conversions. */
  export namespace utils {
    /**
     * clip_grad_norm_: the normType-norm of all gradients together (Infinity or 'inf': the largest
     * magnitude), every gradient scaled in place by min(1, maxNorm / (total + 1e-6)); returns the
     * total before clipping (0-d float32). errorIfNonfinite: a NaN or infinite total throws.
     */
    function clipGradNorm_(parameters: Tensor | Iterable<Tensor>, maxNorm: number, normType?: number | 'inf', options?: { errorIfNonfinite?: boolean }): Tensor;
    /** clip_grad_value_: every gradient clamped in place to [-clipValue, clipValue]. */
    function clipGradValue_(parameters: Tensor | Iterable<Tensor>, clipValue: number): void;
    /** parameters_to_vector: the parameters' values flattened into one 1-D tensor (a copy). */
    function parametersToVector(parameters: Tensor | Iterable<Tensor>): Tensor;
    /** vector_to_parameters: each parameter's values copied in place from the next slice of vec. */
    function vectorToParameters(vec: Tensor, parameters: Tensor | Iterable<Tensor>): void;
  }
}

// ---- log1p, expm1, flip, repeat and tile, prod, cumprod (js/ops/table.js's last rows) ----

/** log(1 + input), exact near 0 (float32; integers promoted; NaN below -1). */
export function log1p(input: Tensor): Tensor;
/** e ** input - 1, exact near 0 (float32; integers promoted). */
export function expm1(input: Tensor): Tensor;
/** torch.flip: a copy with each of dims read backwards. */
export function flip(input: Tensor, dims: Dims): Tensor;
export function flip(input: Tensor, ...dims: number[]): Tensor;
/** torch.tile: the tensor repeated dims[d] times along each dim (1s in front when dims has fewer than its dims). */
export function tile(input: Tensor, dims: Dims): Tensor;
export function tile(input: Tensor, ...dims: number[]): Tensor;
/** torch.prod over dim (none: all dims; float32 multiplied in double; int64 wraps; bool as int64; 1 of nothing). */
export function prod(input: Tensor, dim?: Dims | null, keepdim?: boolean): Tensor;
export function prod(input: Tensor, options: DimKeywords): Tensor;
export function prod(input: Tensor, dim: Dims | null, options: KeepdimKeyword): Tensor;
/** torch.cumprod: the running product along dim (float32 in double; int64 wraps; bool into int64). */
export function cumprod(input: Tensor, dim: number): Tensor;
export function cumprod(input: Tensor, options: { dim: number }): Tensor;

/** torch.diagonal: the elements [i, i + offset] of dims dim1 and dim2 (defaults 0, 1) as a last dim: a view, as PyTorch's (writes through it reach input). */
export function diagonal(input: Tensor, offset?: number, dim1?: number, dim2?: number): Tensor;
export function diagonal(input: Tensor, options: { offset?: number; dim1?: number; dim2?: number }): Tensor;
/** torch.diag: a 1-D input on diagonal k of a square matrix, or a 2-D input's diagonal k. */
export function diag(input: Tensor, diagonal?: number): Tensor;
/** torch.as_strided: a view of input's storage with size, stride and storageOffset counted in its elements (none: input's own offset); differentiable; traced at fixed sizes only. */
export function asStrided(input: Tensor, size: Dims, stride: Dims, storageOffset?: number | null): Tensor;
/** torch.as_strided_scatter: a copy of input with src (of shape size) written at the elements size, stride and storageOffset (default 0) pick, input's elements counted in row-major order. */
export function asStridedScatter(input: Tensor, src: Tensor, size: Dims, stride: Dims, storageOffset?: number): Tensor;

export interface Tensor {
  /** See {@link diagonal}. */
  diagonal(offset?: number, dim1?: number, dim2?: number): Tensor;
  diagonal(options: { offset?: number; dim1?: number; dim2?: number }): Tensor;
  /** See {@link diag}. */
  diag(diagonal?: number): Tensor;
  /** See {@link asStrided}. */
  asStrided(size: Dims, stride: Dims, storageOffset?: number | null): Tensor;
  /** See {@link asStridedScatter}. */
  asStridedScatter(src: Tensor, size: Dims, stride: Dims, storageOffset?: number): Tensor;
  /** Tensor.fill_diagonal_: the main diagonal set to fillValue in place (all dims one size, but for a matrix; wrap restarts a tall matrix's diagonal). */
  fillDiagonal_(fillValue: Scalar, wrap?: boolean): this;
  /** See {@link log1p}. */
  log1p(): Tensor;
  /** See {@link expm1}. */
  expm1(): Tensor;
  /** See {@link flip}: x.flip(0, 1) or x.flip([0, 1]). */
  flip(dims: Dims): Tensor;
  flip(...dims: number[]): Tensor;
  /** torch.Tensor.repeat: x.repeat(2, 3) copies x 2 x 3 times; more sizes than dims add leading dims. */
  repeat(sizes: readonly number[]): Tensor;
  repeat(...sizes: number[]): Tensor;
  /** See {@link tile}. */
  tile(dims: Dims): Tensor;
  tile(...dims: number[]): Tensor;
  /** See {@link prod}. */
  prod(dim?: Dims | null, keepdim?: boolean): Tensor;
  prod(options: DimKeywords): Tensor;
  prod(dim: Dims | null, options: KeepdimKeyword): Tensor;
  /** See {@link cumprod}. */
  cumprod(dim: number): Tensor;
  cumprod(options: { dim: number }): Tensor;
}

// ---- more activations and the padding modules (js/ops/act.js, js/nn/activation.js, js/nn/padding.js) ----

export namespace nn {
  export namespace functional {
    /** F.glu: the first half of input along dim (default -1) times sigmoid of the second; the size there must be even. */
    function glu(input: Tensor, dim?: number): Tensor;
    /** F.prelu: input > 0 ? input : weight * input, weight of one element or one per channel (dim 1). */
    function prelu(input: Tensor, weight: Tensor): Tensor;
    /** F.mish: input * tanh(softplus(input)). */
    function mish(input: Tensor): Tensor;
    /** F.softsign: input / (1 + |input|). */
    function softsign(input: Tensor): Tensor;
    /** F.tanhshrink: input - tanh(input). */
    function tanhshrink(input: Tensor): Tensor;
    /** F.hardshrink: input where |input| > lambd (default 0.5), else 0. */
    function hardshrink(input: Tensor, lambd?: number): Tensor;
    function hardshrink(input: Tensor, options: { lambd?: number }): Tensor;
    /** F.softshrink: input - lambd above lambd (default 0.5), input + lambd below -lambd, else 0. */
    function softshrink(input: Tensor, lambd?: number): Tensor;
    function softshrink(input: Tensor, options: { lambd?: number }): Tensor;
    /** F.selu: scale * elu(input, alpha) with PyTorch's constants (float32). */
    function selu(input: Tensor): Tensor;
    /** F.celu: max(0, input) + alpha * expm1(min(input, 0) / alpha) (default alpha 1, not 0; float32). */
    function celu(input: Tensor, alpha?: number): Tensor;
    function celu(input: Tensor, options: { alpha?: number }): Tensor;
    /** F.logsigmoid: -softplus(-input) (float32). */
    function logsigmoid(input: Tensor): Tensor;
    /** F.softmin: softmax(-input) along dim (dtype casts -input first). */
    function softmin(input: Tensor, dim: number, dtype?: DType): Tensor;
    function softmin(input: Tensor, options: { dim: number; dtype?: DType }): Tensor;
  }
  /** F.selu (PyTorch's inplace flag is accepted and ignored). */
  export class SELU extends Module {
    constructor(inplace?: boolean);
    constructor(options: { inplace?: boolean });
    forward(x: Tensor): Tensor;
  }
  /** F.celu with alpha (default 1). */
  export class CELU extends Module {
    constructor(alpha?: number, inplace?: boolean);
    constructor(options: { alpha?: number; inplace?: boolean });
    alpha: number;
    forward(x: Tensor): Tensor;
  }
  /** F.logsigmoid. */
  export class LogSigmoid extends Module {
    forward(x: Tensor): Tensor;
  }
  /** nn.Softmin(dim): softmax of -x along dim. */
  export class Softmin extends Module {
    constructor(dim: number);
    readonly dim: number;
    forward(x: Tensor): Tensor;
  }
  /** F.glu along dim (default -1). */
  export class GLU extends Module {
    constructor(dim?: number);
    constructor(options: { dim?: number });
    dim: number;
    forward(x: Tensor): Tensor;
  }
  /** F.prelu with a learned weight ('weight' in the state dict) of numParameters (default 1) elements, each init (default 0.25). */
  export class PReLU extends Module {
    constructor(numParameters?: number, init?: number);
    constructor(options: { numParameters?: number; init?: number });
    numParameters: number;
    weight: Tensor;
    forward(x: Tensor): Tensor;
  }
  /** F.mish. */
  export class Mish extends Module {
    forward(x: Tensor): Tensor;
  }
  /** F.softsign. */
  export class Softsign extends Module {
    forward(x: Tensor): Tensor;
  }
  /** F.tanhshrink. */
  export class Tanhshrink extends Module {
    forward(x: Tensor): Tensor;
  }
  /** F.hardshrink with lambd (default 0.5). */
  export class Hardshrink extends Module {
    constructor(lambd?: number);
    constructor(options: { lambd?: number });
    lambd: number;
    forward(x: Tensor): Tensor;
  }
  /** F.softshrink with lambd (default 0.5). */
  export class Softshrink extends Module {
    constructor(lambd?: number);
    constructor(options: { lambd?: number });
    lambd: number;
    forward(x: Tensor): Tensor;
  }
  /** nn.Unflatten(dim, unflattenedSize): dim reshaped to the sizes (one may be -1). */
  export class Unflatten extends Module {
    constructor(dim: number, unflattenedSize: readonly number[]);
    constructor(options: { dim: number; unflattenedSize: readonly number[] });
    dim: number;
    unflattenedSize: number[];
    forward(x: Tensor): Tensor;
  }
  /* The padding modules: F.pad with their padding, one number for every side or (before, after) pairs from the last dim backwards. */
  /** nn.ZeroPad2d(padding): 4 sides padded with zeros. */
  export class ZeroPad2d extends Module {
    constructor(padding: number | readonly number[]);
    padding: number[];
    value: number;
    forward(x: Tensor): Tensor;
  }
  /** nn.ConstantPad1d(padding, value): the last dim padded with value. */
  export class ConstantPad1d extends Module {
    constructor(padding: number | readonly number[], value: number);
    padding: number[];
    value: number;
    forward(x: Tensor): Tensor;
  }
  /** nn.ConstantPad2d(padding, value): the last 2 dims padded with value. */
  export class ConstantPad2d extends Module {
    constructor(padding: number | readonly number[], value: number);
    padding: number[];
    value: number;
    forward(x: Tensor): Tensor;
  }
  /** nn.ConstantPad3d(padding, value): the last 3 dims padded with value. */
  export class ConstantPad3d extends Module {
    constructor(padding: number | readonly number[], value: number);
    padding: number[];
    value: number;
    forward(x: Tensor): Tensor;
  }
  /** nn.ReflectionPad1d(padding): the last dim mirrored (each pad below its size). */
  export class ReflectionPad1d extends Module {
    constructor(padding: number | readonly number[]);
    padding: number[];
    forward(x: Tensor): Tensor;
  }
  /** nn.ReflectionPad2d(padding): the last 2 dims mirrored. */
  export class ReflectionPad2d extends Module {
    constructor(padding: number | readonly number[]);
    padding: number[];
    forward(x: Tensor): Tensor;
  }
  /** nn.ReplicationPad1d(padding): the last dim's edge values repeated. */
  export class ReplicationPad1d extends Module {
    constructor(padding: number | readonly number[]);
    padding: number[];
    forward(x: Tensor): Tensor;
  }
  /** nn.ReplicationPad2d(padding): the last 2 dims' edge values repeated. */
  export class ReplicationPad2d extends Module {
    constructor(padding: number | readonly number[]);
    padding: number[];
    forward(x: Tensor): Tensor;
  }
}

// ---- torch.* functions of the Tensor methods, PyTorch's other names, and the compositions of
// js/ops/arith.js (js/ops/table.js) ----

/** torch.div's rounding_mode: null (true division), 'trunc' (toward zero) or 'floor' (down, Python's //). */
export interface DivOptions { roundingMode?: 'trunc' | 'floor' | null }

/** input + other (promoted as torch.result_type; numbers are weak scalars). */
export function add(input: TensorLike, other: TensorLike): Tensor;
/** input - other. */
export function sub(input: TensorLike, other: TensorLike): Tensor;
/** input * other. */
export function mul(input: TensorLike, other: TensorLike): Tensor;
/**
 * torch.div: input / other, true division (integers give float32); roundingMode 'trunc' rounds
 * toward zero and 'floor' down (PyTorch's floor division of floats, Python's //), integers staying
 * int64 (a zero integer divisor is InvalidArgument); a rounded quotient's gradient is zero.
 */
export function div(input: TensorLike, other: TensorLike, options?: DivOptions): Tensor;
/** torch.divide: div's other name. */
export function divide(input: TensorLike, other: TensorLike, options?: DivOptions): Tensor;
/** torch.true_divide: div without rounding. */
export function trueDivide(input: TensorLike, other: TensorLike): Tensor;
/** torch.floor_divide: div with roundingMode 'floor'. */
export function floorDivide(input: TensorLike, other: TensorLike): Tensor;
/** input ** exponent. */
export function pow(input: TensorLike, exponent: TensorLike): Tensor;
/** input == other, bool. */
export function eq(input: TensorLike, other: TensorLike): Tensor;
/** input != other, bool. */
export function ne(input: TensorLike, other: TensorLike): Tensor;
/** input < other, bool. */
export function lt(input: TensorLike, other: TensorLike): Tensor;
/** input <= other, bool. */
export function le(input: TensorLike, other: TensorLike): Tensor;
/** input > other, bool. */
export function gt(input: TensorLike, other: TensorLike): Tensor;
/** input >= other, bool. */
export function ge(input: TensorLike, other: TensorLike): Tensor;
/** torch.greater: gt. */
export function greater(input: TensorLike, other: TensorLike): Tensor;
/** torch.greater_equal: ge. */
export function greaterEqual(input: TensorLike, other: TensorLike): Tensor;
/** torch.less: lt. */
export function less(input: TensorLike, other: TensorLike): Tensor;
/** torch.less_equal: le. */
export function lessEqual(input: TensorLike, other: TensorLike): Tensor;
/** torch.not_equal: ne. */
export function notEqual(input: TensorLike, other: TensorLike): Tensor;
/** torch.multiply: mul. */
export function multiply(input: TensorLike, other: TensorLike): Tensor;
/** torch.subtract: sub. */
export function subtract(input: TensorLike, other: TensorLike): Tensor;
/** -input. */
export function neg(input: Tensor): Tensor;
/** torch.negative: neg. */
export function negative(input: Tensor): Tensor;
/** |input|. */
export function abs(input: Tensor): Tensor;
/** torch.absolute: abs. */
export function absolute(input: Tensor): Tensor;
/** -1, 0 or 1 (0 keeps its sign; NaN stays NaN). */
export function sign(input: Tensor): Tensor;
/** torch.sgn: sign (of real numbers). */
export function sgn(input: Tensor): Tensor;
/** e ** input (integers promoted to float32). */
export function exp(input: Tensor): Tensor;
/** The natural logarithm (integers promoted to float32). */
export function log(input: Tensor): Tensor;
/** The square root (integers promoted to float32). */
export function sqrt(input: Tensor): Tensor;
/** 1 / sqrt(input) (integers promoted to float32). */
export function rsqrt(input: Tensor): Tensor;
/** A copy. */
export function clone(input: Tensor): Tensor;
/** max(input, 0). */
export function relu(input: Tensor): Tensor;
/** 1 / (1 + e ** -input). */
export function sigmoid(input: Tensor): Tensor;
/** The hyperbolic tangent. */
export function tanh(input: Tensor): Tensor;
/** The error function. */
export function erf(input: Tensor): Tensor;
/** torch.clamp: min(max(input, min), max). */
export function clamp(input: Tensor, min?: number | bigint | Tensor | null, max?: number | bigint | Tensor | null): Tensor;
export function clamp(input: Tensor, options: ClampOptions): Tensor;
/** torch.clip: clamp. */
export function clip(input: Tensor, min?: number | bigint | Tensor | null, max?: number | bigint | Tensor | null): Tensor;
export function clip(input: Tensor, options: ClampOptions): Tensor;
/** The running sum along dim. */
export function cumsum(input: Tensor, dim: number): Tensor;
export function cumsum(input: Tensor, options: { dim: number }): Tensor;
/** torch.masked_fill: value where mask is true. */
export function maskedFill(input: Tensor, mask: Tensor, value: number | bigint | boolean | Tensor): Tensor;
export function maskedFill(input: Tensor, options: { mask: Tensor; value: number | bigint | boolean | Tensor }): Tensor;
/** torch.softmax along dim. */
export function softmax(input: Tensor, dim: number, dtype?: DType): Tensor;
export function softmax(input: Tensor, options: { dim: number; dtype?: DType }): Tensor;
/** torch.log_softmax along dim. */
export function logSoftmax(input: Tensor, dim: number, dtype?: DType): Tensor;
export function logSoftmax(input: Tensor, options: { dim: number; dtype?: DType }): Tensor;
/** torch.reshape. */
export function reshape(input: Tensor, shape: readonly number[]): Tensor;
export function reshape(input: Tensor, ...shape: number[]): Tensor;
/** torch.narrow: length elements of dim from start (a view). */
export function narrow(input: Tensor, dim: number, start: number, length: number): Tensor;
export function narrow(input: Tensor, options: { dim: number; start: number; length: number }): Tensor;
/** torch.select: index of dim, without that dim (a view). */
export function select(input: Tensor, dim: number, index: number): Tensor;
export function select(input: Tensor, options: { dim: number; index: number }): Tensor;
/** torch.squeeze: size-1 dims removed (all, or those of dims). */
export function squeeze(input: Tensor, dims?: Dims): Tensor;
export function squeeze(input: Tensor, options: { dim?: Dims }): Tensor;
/** torch.t: a matrix transposed (0-D and 1-D as they are). */
export function t(input: Tensor): Tensor;
/** torch.detach: the values without autograd history. */
export function detach(input: Tensor): Tensor;
/** torch.sum over dim (none: all). */
export function sum(input: Tensor, dim?: Dims | null, keepdim?: boolean): Tensor;
export function sum(input: Tensor, options: DimKeywords): Tensor;
export function sum(input: Tensor, dim: Dims | null, options: KeepdimKeyword): Tensor;
/** torch.mean over dim (none: all). */
export function mean(input: Tensor, dim?: Dims | null, keepdim?: boolean): Tensor;
export function mean(input: Tensor, options: DimKeywords): Tensor;
export function mean(input: Tensor, dim: Dims | null, options: KeepdimKeyword): Tensor;
/** torch.amax over dim (none: all). */
export function amax(input: Tensor, dim?: Dims | null, keepdim?: boolean): Tensor;
export function amax(input: Tensor, options: DimKeywords): Tensor;
export function amax(input: Tensor, dim: Dims | null, options: KeepdimKeyword): Tensor;
/** torch.amin over dim (none: all). */
export function amin(input: Tensor, dim?: Dims | null, keepdim?: boolean): Tensor;
export function amin(input: Tensor, options: DimKeywords): Tensor;
export function amin(input: Tensor, dim: Dims | null, options: KeepdimKeyword): Tensor;
/** torch.max: of all elements, [values, indices] along dim, or the elementwise maximum with a tensor. */
export function max(input: Tensor): Tensor;
export function max(input: Tensor, dim: number, keepdim?: boolean): ValuesIndices;
export function max(input: Tensor, options: { dim: number; keepdim?: boolean }): ValuesIndices;
export function max(input: Tensor, dim: number, options: KeepdimKeyword): ValuesIndices;
export function max(input: Tensor, other: Tensor): Tensor;
/** torch.min: of all elements, [values, indices] along dim, or the elementwise minimum with a tensor. */
export function min(input: Tensor): Tensor;
export function min(input: Tensor, dim: number, keepdim?: boolean): ValuesIndices;
export function min(input: Tensor, options: { dim: number; keepdim?: boolean }): ValuesIndices;
export function min(input: Tensor, dim: number, options: KeepdimKeyword): ValuesIndices;
export function min(input: Tensor, other: Tensor): Tensor;
/** torch.argmax along dim (none: of the flattened tensor). */
export function argmax(input: Tensor, dim?: number | null, keepdim?: boolean): Tensor;
export function argmax(input: Tensor, options: DimKeywords): Tensor;
export function argmax(input: Tensor, dim: Dims | null, options: KeepdimKeyword): Tensor;
/** torch.argmin along dim (none: of the flattened tensor). */
export function argmin(input: Tensor, dim?: number | null, keepdim?: boolean): Tensor;
export function argmin(input: Tensor, options: DimKeywords): Tensor;
export function argmin(input: Tensor, dim: Dims | null, options: KeepdimKeyword): Tensor;
/** torch.index_select. */
export function indexSelect(input: Tensor, dim: number, index: Tensor): Tensor;
export function indexSelect(input: Tensor, options: { dim: number; index: Tensor }): Tensor;
/** torch.gather. */
export function gather(input: Tensor, dim: number, index: Tensor): Tensor;
export function gather(input: Tensor, options: { dim: number; index: Tensor }): Tensor;
/** torch.index_add. */
export function indexAdd(input: Tensor, dim: number, index: Tensor, source: Tensor): Tensor;
export function indexAdd(input: Tensor, options: { dim: number; index: Tensor; source: Tensor }): Tensor;
/** torch.index_fill: a copy with the slices at index (int64, at most 1-D; negatives from the end) along dim set to value (a number or a 0-d tensor). */
export function indexFill(input: Tensor, dim: number, index: Tensor, value: Scalar | Tensor): Tensor;
export function indexFill(input: Tensor, options: { dim: number; index: Tensor; value: Scalar | Tensor }): Tensor;
/** torch.index_copy: a copy with slice index[i] along dim replaced by source's slice i (source: input's shape with index's length at dim). */
export function indexCopy(input: Tensor, dim: number, index: Tensor, source: Tensor): Tensor;
export function indexCopy(input: Tensor, options: { dim: number; index: Tensor; source: Tensor }): Tensor;
/** torch.scatter_add. */
export function scatterAdd(input: Tensor, dim: number, index: Tensor, src: Tensor): Tensor;
export function scatterAdd(input: Tensor, options: { dim: number; index: Tensor; src: Tensor }): Tensor;
/**
 * torch.scatter(input, dim, index, src) (src a Tensor of input's dtype, or a number: PyTorch's
 * value; { reduce: 'add' } adds): a copy of input with src[i] written where index[i] replaces
 * position i's coordinate along dim, for every position i of index (input's rank; sizes at most
 * src's and, off dim, input's). Of repeated places the last written stays (PyTorch: undefined);
 * each index in [0, size). One ScatterND when traced.
 */
export function scatter(input: Tensor, dim: number, index: Tensor, src: Tensor | Scalar, options?: { reduce?: 'add' | null }): Tensor;
/** scatterReduce's reductions (torch.scatter_reduce's reduce). */
export type ScatterReduction = 'sum' | 'prod' | 'mean' | 'amax' | 'amin';
/** scatterReduce's arguments by name (PyTorch's keywords). */
export interface ScatterReduceOptions {
  dim: number;
  index: Tensor;
  src: Tensor;
  reduce: ScatterReduction;
  includeSelf?: boolean;
}
/**
 * torch.scatter_reduce(input, dim, index, src, reduce, include_self=True) (float32): a copy of
 * input with each src[p] (p a position of index: input's rank, sizes at most src's and, off dim,
 * input's) combined into the place p with p[dim] = index[p] by reduce ('mean': the sum over the
 * count, the input counting as one when included; amax and amin: a NaN wins); includeSelf false
 * leaves the input's value out where a source lands. Gradients as PyTorch's (ties share evenly).
 * Traced: ScatterElements with reduction add, mul, max or min.
 */
export function scatterReduce(input: Tensor, dim: number, index: Tensor, src: Tensor, reduce: ScatterReduction, options?: { includeSelf?: boolean }): Tensor;
export function scatterReduce(input: Tensor, dim: number, index: Tensor, src: Tensor, options: { reduce: ScatterReduction; includeSelf?: boolean }): Tensor;
export function scatterReduce(input: Tensor, options: ScatterReduceOptions): Tensor;
/** torch.movedim: dims moved from source to destination (ints or equal-length lists), the others in order (a view). */
export function movedim(input: Tensor, source: Dims, destination: Dims): Tensor;
export function movedim(input: Tensor, options: { source: Dims; destination: Dims }): Tensor;
/** torch.moveaxis: movedim. */
export function moveaxis(input: Tensor, source: Dims, destination: Dims): Tensor;
export function moveaxis(input: Tensor, options: { source: Dims; destination: Dims }): Tensor;
/** torch.addcmul: input + value * tensor1 * tensor2 (value default 1). */
export function addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, options?: { value?: number }): Tensor;
/** torch.addcdiv: input + value * tensor1 / tensor2 (two integer tensors are DtypeMismatch, as PyTorch). */
export function addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, options?: { value?: number }): Tensor;
/** torch.lerp: input + weight * (end - input) (PyTorch's two exact forms; floating inputs). */
export function lerp(input: Tensor, end: Tensor, weight: number | Tensor): Tensor;
/** torch.bitwise_left_shift of int64 (wraps; shifts outside 0..63 give 0); bool beside an integer counts as 0/1. */
export function bitwiseLeftShift(input: Tensor | number | bigint | boolean, other: Tensor | number | bigint | boolean): Tensor;
/** torch.bitwise_right_shift of int64, arithmetic (the sign kept; shifts outside 0..63 give 0 or -1); bool beside an integer counts as 0/1. */
export function bitwiseRightShift(input: Tensor | number | bigint | boolean, other: Tensor | number | bigint | boolean): Tensor;
/** torch.trunc: toward zero (int64 as it is). */
export function trunc(input: Tensor): Tensor;
/** torch.fix: trunc. */
export function fix(input: Tensor): Tensor;
/** torch.xlogy: input * log(other), 0 where input is 0 (NaN where other is NaN). */
export function xlogy(input: TensorLike, other: TensorLike): Tensor;
/** torch.nan_to_num: NaN to nan (0), infinities to posinf and neginf (the dtype's extremes by default). */
export function nanToNum(input: Tensor, nan?: number | null, posinf?: number | null, neginf?: number | null): Tensor;
export function nanToNum(input: Tensor, options: { nan?: number | null; posinf?: number | null; neginf?: number | null }): Tensor;
/** torch.count_nonzero over dim (none: all), int64. */
export function countNonzero(input: Tensor, dim?: Dims | null): Tensor;
/** torch.aminmax: `[min, max]` over dim (none: all), also `.min` and `.max` (PyTorch's named tuple). */
export function aminmax(input: Tensor, options?: { dim?: number | null; keepdim?: boolean }): [min: Tensor, max: Tensor] & { readonly min: Tensor; readonly max: Tensor };
/** torch.logcumsumexp: log of the running sum of exp along dim. */
export function logcumsumexp(input: Tensor, dim: number): Tensor;
/** torch.fliplr: dim 1 reversed (2 dims or more). */
export function fliplr(input: Tensor): Tensor;
/** torch.flipud: dim 0 reversed. */
export function flipud(input: Tensor): Tensor;
/** torch.rot90: k quarter turns in the plane of dims (default [0, 1]). */
export function rot90(input: Tensor, k?: number, dims?: readonly number[]): Tensor;
/** torch.narrow_copy: narrow as a new tensor. */
export function narrowCopy(input: Tensor, dim: number, start: number, length: number): Tensor;
/** torch.tensor_split: n sections (the first size % n one longer) or pieces cut at indices along dim (views). */
export function tensorSplit(input: Tensor, indicesOrSections: number | readonly number[], dim?: number): Tensor[];
/** torch.hsplit: tensorSplit along dim 1 (dim 0 of a 1-D input); sections must divide the dim. */
export function hsplit(input: Tensor, indicesOrSections: number | readonly number[]): Tensor[];
/** torch.vsplit: tensorSplit along dim 0 (2 dims or more). */
export function vsplit(input: Tensor, indicesOrSections: number | readonly number[]): Tensor[];
/** torch.dsplit: tensorSplit along dim 2 (3 dims or more). */
export function dsplit(input: Tensor, indicesOrSections: number | readonly number[]): Tensor[];

export interface Tensor {
  /** See {@link divide}. */
  divide(other: TensorLike, options?: DivOptions): Tensor;
  divide_(other: TensorLike, options?: DivOptions): this;
  /** See {@link trueDivide}. */
  trueDivide(other: TensorLike): Tensor;
  trueDivide_(other: TensorLike): this;
  /** See {@link floorDivide}. */
  floorDivide(other: TensorLike): Tensor;
  floorDivide_(other: TensorLike): this;
  /** See {@link greater}. */
  greater(other: TensorLike): Tensor;
  /** See {@link greaterEqual}. */
  greaterEqual(other: TensorLike): Tensor;
  /** See {@link less}. */
  less(other: TensorLike): Tensor;
  /** See {@link lessEqual}. */
  lessEqual(other: TensorLike): Tensor;
  /** See {@link notEqual}. */
  notEqual(other: TensorLike): Tensor;
  /** See {@link multiply}. */
  multiply(other: TensorLike): Tensor;
  multiply_(other: TensorLike): this;
  /** See {@link subtract}. */
  subtract(other: TensorLike): Tensor;
  subtract_(other: TensorLike): this;
  /** See {@link negative}. */
  negative(): Tensor;
  /** See {@link absolute}. */
  absolute(): Tensor;
  /** See {@link sgn}. */
  sgn(): Tensor;
  /** See {@link movedim}. */
  movedim(source: Dims, destination: Dims): Tensor;
  movedim(options: { source: Dims; destination: Dims }): Tensor;
  /** See {@link moveaxis}. */
  moveaxis(source: Dims, destination: Dims): Tensor;
  moveaxis(options: { source: Dims; destination: Dims }): Tensor;
  /** See {@link addcmul}. */
  addcmul(tensor1: Tensor, tensor2: Tensor, options?: { value?: number }): Tensor;
  addcmul_(tensor1: Tensor, tensor2: Tensor, options?: { value?: number }): this;
  /** See {@link addcdiv}. */
  addcdiv(tensor1: Tensor, tensor2: Tensor, options?: { value?: number }): Tensor;
  addcdiv_(tensor1: Tensor, tensor2: Tensor, options?: { value?: number }): this;
  /** See {@link lerp}. */
  lerp(end: Tensor, weight: number | Tensor): Tensor;
  lerp_(end: Tensor, weight: number | Tensor): this;
  /** See {@link bitwiseLeftShift}. */
  bitwiseLeftShift(other: Tensor | number | bigint | boolean): Tensor;
  bitwiseLeftShift_(other: Tensor | number | bigint | boolean): this;
  /** See {@link bitwiseRightShift}. */
  bitwiseRightShift(other: Tensor | number | bigint | boolean): Tensor;
  bitwiseRightShift_(other: Tensor | number | bigint | boolean): this;
  /** See {@link trunc}. */
  trunc(): Tensor;
  trunc_(): this;
  /** See {@link fix}. */
  fix(): Tensor;
  fix_(): this;
  /** See {@link xlogy}. */
  xlogy(other: TensorLike): Tensor;
  /** See {@link nanToNum}. */
  nanToNum(nan?: number | null, posinf?: number | null, neginf?: number | null): Tensor;
  nanToNum(options: { nan?: number | null; posinf?: number | null; neginf?: number | null }): Tensor;
  nanToNum_(nan?: number | null, posinf?: number | null, neginf?: number | null): this;
  nanToNum_(options: { nan?: number | null; posinf?: number | null; neginf?: number | null }): this;
  /** See {@link countNonzero}. */
  countNonzero(dim?: Dims | null): Tensor;
  /** See {@link aminmax}. */
  aminmax(options?: { dim?: number | null; keepdim?: boolean }): [min: Tensor, max: Tensor] & { readonly min: Tensor; readonly max: Tensor };
  /** See {@link logcumsumexp}. */
  logcumsumexp(dim: number): Tensor;
  /** See {@link fliplr}. */
  fliplr(): Tensor;
  /** See {@link flipud}. */
  flipud(): Tensor;
  /** See {@link rot90}. */
  rot90(k?: number, dims?: readonly number[]): Tensor;
  /** See {@link narrowCopy}. */
  narrowCopy(dim: number, start: number, length: number): Tensor;
  /** See {@link tensorSplit}. */
  tensorSplit(indicesOrSections: number | readonly number[], dim?: number): Tensor[];
  /** See {@link hsplit}. */
  hsplit(indicesOrSections: number | readonly number[]): Tensor[];
  /** See {@link vsplit}. */
  vsplit(indicesOrSections: number | readonly number[]): Tensor[];
  /** See {@link dsplit}. */
  dsplit(indicesOrSections: number | readonly number[]): Tensor[];
}

// ---- more of torch's functions by name (js/ops/arith.js) ----

/** torch.linspace: steps values from start to end (PyTorch's float32 steps: from start for the first half, from end for the rest). */
export function linspace(start: number, end: number, steps: number, options?: { dtype?: DType }): Tensor;
/** torch.eye: [n, m] (m defaults to n) with ones on the main diagonal. */
export function eye(n: number, m?: number | null, options?: { dtype?: DType }): Tensor;
export function eye(n: number, options: { dtype?: DType }): Tensor;
/** torch.baddbmm: beta * input + alpha * (batch1 @ batch2) (3-D batches; beta 0 ignores input). */
export function baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, options?: { beta?: number; alpha?: number }): Tensor;
/** torch.mm: a matrix product of two 2-D tensors. */
export function mm(input: Tensor, mat2: Tensor): Tensor;
/** torch.mv: a matrix times a vector. */
export function mv(input: Tensor, vec: Tensor): Tensor;
/** torch.concat: cat. */
export function concat(tensors: readonly Tensor[], dim?: number): Tensor;
/** torch.concatenate: cat. */
export function concatenate(tensors: readonly Tensor[], dim?: number): Tensor;
/** torch.hstack: cat along dim 1 (dim 0 of 1-D tensors). */
export function hstack(tensors: readonly Tensor[]): Tensor;
/** torch.vstack: cat along dim 0 of the tensors made at least 2-D. */
export function vstack(tensors: readonly Tensor[]): Tensor;
/** torch.exp2: 2 ** input. */
export function exp2(input: Tensor): Tensor;
/** torch.log2. */
export function log2(input: Tensor): Tensor;
/** torch.log10. */
export function log10(input: Tensor): Tensor;
/** torch.reciprocal: 1 / input (integers to float32). */
export function reciprocal(input: Tensor): Tensor;
/** torch.frac: input - trunc(input). */
export function frac(input: Tensor): Tensor;
/** torch.clamp_min. */
export function clampMin(input: Tensor, min: number | bigint | Tensor): Tensor;
/** torch.clamp_max. */
export function clampMax(input: Tensor, max: number | bigint | Tensor): Tensor;
/** torch.hypot: sqrt(input^2 + other^2) without overflow. */
export function hypot(input: Tensor, other: Tensor): Tensor;
/** torch.logaddexp: log(e^input + e^other). */
export function logaddexp(input: Tensor, other: Tensor): Tensor;
/** torch.fmax: maximum where a NaN loses to a number. */
export function fmax(input: Tensor, other: Tensor): Tensor;
/** torch.fmin: minimum where a NaN loses to a number. */
export function fmin(input: Tensor, other: Tensor): Tensor;
/** torch.isclose: |input - other| <= atol + rtol |other| (or equal), bool. */
export function isclose(input: Tensor, other: Tensor, options?: { rtol?: number; atol?: number; equalNan?: boolean }): Tensor;
/** torch.allclose: isclose everywhere, as a boolean (reads values: not while tracing). */
export function allclose(input: Tensor, other: Tensor, options?: { rtol?: number; atol?: number; equalNan?: boolean }): boolean;
/** torch.equal: same shape and values, as a boolean. */
export function equal(input: Tensor, other: Tensor): boolean;
/** torch.broadcast_to: expand. */
export function broadcastTo(input: Tensor, shape: readonly number[]): Tensor;
/** torch.logit: log(p / (1 - p)), p clamped into [eps, 1 - eps] when eps is given. */
export function logit(input: Tensor, eps?: number | null): Tensor;
/** torch.deg2rad. */
export function deg2rad(input: Tensor): Tensor;
/** torch.rad2deg. */
export function rad2deg(input: Tensor): Tensor;
/** torch.nansum over dim (none: all), NaN skipped. */
export function nansum(input: Tensor, dim?: Dims | null, keepdim?: boolean): Tensor;
/** torch.nanmean over dim (none: all), NaN skipped. */
export function nanmean(input: Tensor, dim?: Dims | null, keepdim?: boolean): Tensor;
/** torch.diff's keywords: the order n (default 1), dim (default -1), tensors joined before and after along dim. */
export interface DiffOptions { n?: number; dim?: number; prepend?: Tensor | null; append?: Tensor | null }
/** torch.diff: the n-th forward difference along dim (bool: !=) after prepend and append are joined there. */
export function diff(input: Tensor, n?: number, dim?: number, prepend?: Tensor | null, append?: Tensor | null): Tensor;
export function diff(input: Tensor, options: DiffOptions): Tensor;
export function diff(input: Tensor, n: number, options: DiffOptions): Tensor;
/** torch.take_along_dim: gather along dim after input and int64 indices broadcast off dim; no dim: of the flattened input. */
export function takeAlongDim(input: Tensor, indices: Tensor, dim?: number | null): Tensor;
export function takeAlongDim(input: Tensor, options: { indices: Tensor; dim?: number | null }): Tensor;
/** torch.selu: see nn.functional.selu. */
export function selu(input: Tensor): Tensor;
/** torch.celu: see nn.functional.celu. */
export function celu(input: Tensor, alpha?: number): Tensor;
export function celu(input: Tensor, options: { alpha?: number }): Tensor;

export interface Tensor {
  /** See {@link baddbmm}. */
  baddbmm(batch1: Tensor, batch2: Tensor, options?: { beta?: number; alpha?: number }): Tensor;
  /** See {@link mm}. */
  mm(mat2: Tensor): Tensor;
  /** See {@link mv}. */
  mv(vec: Tensor): Tensor;
  /** See {@link exp2}. */
  exp2(): Tensor;
  /** See {@link log2}. */
  log2(): Tensor;
  /** See {@link log10}. */
  log10(): Tensor;
  /** See {@link reciprocal}. */
  reciprocal(): Tensor;
  /** See {@link frac}. */
  frac(): Tensor;
  /** See {@link clampMin}. */
  clampMin(min: number | bigint | Tensor): Tensor;
  /** See {@link clampMax}. */
  clampMax(max: number | bigint | Tensor): Tensor;
  /** See {@link hypot}. */
  hypot(other: Tensor): Tensor;
  /** See {@link logaddexp}. */
  logaddexp(other: Tensor): Tensor;
  /** See {@link fmax}. */
  fmax(other: Tensor): Tensor;
  /** See {@link fmin}. */
  fmin(other: Tensor): Tensor;
  /** See {@link isclose}. */
  isclose(other: Tensor, options?: { rtol?: number; atol?: number; equalNan?: boolean }): Tensor;
  /** See {@link allclose}. */
  allclose(other: Tensor, options?: { rtol?: number; atol?: number; equalNan?: boolean }): boolean;
  /** See {@link equal}. */
  equal(other: Tensor): boolean;
  /** See {@link broadcastTo}. */
  broadcastTo(shape: readonly number[]): Tensor;
  /** See {@link logit}. */
  logit(eps?: number | null): Tensor;
  /** See {@link deg2rad}. */
  deg2rad(): Tensor;
  /** See {@link rad2deg}. */
  rad2deg(): Tensor;
  /** See {@link nansum}. */
  nansum(dim?: Dims | null, keepdim?: boolean): Tensor;
  /** See {@link nanmean}. */
  nanmean(dim?: Dims | null, keepdim?: boolean): Tensor;
  /** torch.trace: the sum of a matrix's main diagonal (a method only: om.trace is the tracer). */
  trace(): Tensor;
  /** See {@link diff}. */
  diff(n?: number, dim?: number, prepend?: Tensor | null, append?: Tensor | null): Tensor;
  diff(options: DiffOptions): Tensor;
  diff(n: number, options: DiffOptions): Tensor;
  /** See {@link takeAlongDim}. */
  takeAlongDim(indices: Tensor, dim?: number | null): Tensor;
  takeAlongDim(options: { indices: Tensor; dim?: number | null }): Tensor;
}

// ---- running extremes and order statistics (js/ops/act.js, js/ops/stats.js; issue 28's PyTorch ops) ----

/** torch.cummax: the running maximum along dim and its int64 indices (equal values move the index to the later one; a NaN stays from where it appears, at the last NaN's index). */
export function cummax(input: Tensor, dim: number): ValuesIndices;
export function cummax(input: Tensor, options: { dim: number }): ValuesIndices;
/** torch.cummin: the running minimum, with cummax's rules. */
export function cummin(input: Tensor, dim: number): ValuesIndices;
export function cummin(input: Tensor, options: { dim: number }): ValuesIndices;

/** Options of quantile / nanquantile. */
export interface QuantileOptions {
  dim?: number | null;
  keepdim?: boolean;
  /** How a rank between two elements is read (default 'linear'). */
  interpolation?: 'linear' | 'lower' | 'higher' | 'midpoint' | 'nearest';
}
/** torch.median(input): the lower of the two middle values of all elements (NaN if any is NaN), 0-d. */
export function median(input: Tensor): Tensor;
/** torch.median(input, dim = -1, keepdim = false): the lower middle along dim and its int64 index. */
export function median(input: Tensor, dim: number, keepdim?: boolean): ValuesIndices;
export function median(input: Tensor, options: { dim?: number; keepdim?: boolean }): ValuesIndices;
export function median(input: Tensor, dim: number, options: KeepdimKeyword): ValuesIndices;
/** torch.nanmedian: median of the numbers only (NaN where there are none). */
export function nanmedian(input: Tensor): Tensor;
export function nanmedian(input: Tensor, dim: number, keepdim?: boolean): ValuesIndices;
export function nanmedian(input: Tensor, options: { dim?: number; keepdim?: boolean }): ValuesIndices;
export function nanmedian(input: Tensor, dim: number, options: KeepdimKeyword): ValuesIndices;
/** torch.quantile (float32): q a number or a 0-d or 1-D float32 tensor in [0, 1]; a 1-D q puts its axis first. */
export function quantile(input: Tensor, q: number | Tensor, dim?: number | null, keepdim?: boolean, options?: QuantileOptions): Tensor;
export function quantile(input: Tensor, q: number | Tensor, options: QuantileOptions): Tensor;
/** torch.nanquantile: quantile of the numbers only (NaN where there are none). */
export function nanquantile(input: Tensor, q: number | Tensor, dim?: number | null, keepdim?: boolean, options?: QuantileOptions): Tensor;
export function nanquantile(input: Tensor, q: number | Tensor, options: QuantileOptions): Tensor;

export interface Tensor {
  /** See {@link median}. */
  median(): Tensor;
  median(dim: number, keepdim?: boolean): ValuesIndices;
  median(options: { dim?: number; keepdim?: boolean }): ValuesIndices;
  median(dim: number, options: KeepdimKeyword): ValuesIndices;
  /** See {@link nanmedian}. */
  nanmedian(): Tensor;
  nanmedian(dim: number, keepdim?: boolean): ValuesIndices;
  nanmedian(options: { dim?: number; keepdim?: boolean }): ValuesIndices;
  nanmedian(dim: number, options: KeepdimKeyword): ValuesIndices;
  /** See {@link quantile}. */
  quantile(q: number | Tensor, dim?: number | null, keepdim?: boolean, options?: QuantileOptions): Tensor;
  quantile(q: number | Tensor, options: QuantileOptions): Tensor;
  /** See {@link nanquantile}. */
  nanquantile(q: number | Tensor, dim?: number | null, keepdim?: boolean, options?: QuantileOptions): Tensor;
  nanquantile(q: number | Tensor, options: QuantileOptions): Tensor;
  /** See {@link cummax}. */
  cummax(dim: number): ValuesIndices;
  cummax(options: { dim: number }): ValuesIndices;
  /** See {@link cummin}. */
  cummin(dim: number): ValuesIndices;
  cummin(options: { dim: number }): ValuesIndices;
}

// ---- counting and distinct values, PyTorch's type strings (js/ops/counting.js) ----

/** torch.bincount: the count (or the weights' sum) of each value 0..max of a 1-D non-negative int64 input, at least minlength long; int64, float32 for float32 weights, float64 for others. */
export function bincount(input: Tensor, weights?: Tensor | null, minlength?: number): Tensor;
export function bincount(input: Tensor, options: { weights?: Tensor | null; minlength?: number }): Tensor;
/** Options of unique (sorted is always true in effect). */
export interface UniqueOptions {
  sorted?: boolean;
  returnInverse?: boolean;
  returnCounts?: boolean;
  /** null: the flattened input's values; a dim: the distinct slices along it (rows for 0), compared lexicographically. */
  dim?: number | null;
}
/**
 * torch.unique: the distinct values of the flattened input, ascending (with a dim, the distinct
 * slices along it; the inverse is then [input.shape[dim]]); [values, inverse?, counts?] when asked.
 */
export function unique(input: Tensor, options?: UniqueOptions): Tensor | Tensor[];
/** torch.unique_consecutive: each run of equal neighbours (with a dim, equal slices along it) as one value. */
export function uniqueConsecutive(input: Tensor, options?: Omit<UniqueOptions, 'sorted'>): Tensor | Tensor[];

export interface Tensor {
  /** See {@link bincount}. */
  bincount(weights?: Tensor | null, minlength?: number): Tensor;
  bincount(options: { weights?: Tensor | null; minlength?: number }): Tensor;
  /** See {@link unique}. */
  unique(options?: UniqueOptions): Tensor | Tensor[];
  /** See {@link uniqueConsecutive}. */
  uniqueConsecutive(options?: Omit<UniqueOptions, 'sorted'>): Tensor | Tensor[];
  /** torch.Tensor.type(): 'torch.FloatTensor', 'torch.LongTensor', 'torch.BoolTensor' or 'torch.DoubleTensor'. */
  type(): string;
  /** torch.Tensor.type(dtype): converted to dtype (a dtype name or one of those type strings); itself when it has it. */
  type(dtype: DType | 'torch.FloatTensor' | 'torch.LongTensor' | 'torch.BoolTensor' | 'torch.DoubleTensor'): Tensor;
}
