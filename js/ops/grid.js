// Sampling grids: F.affine_grid and F.grid_sample, written with the library's ops (affine_grid:
// linspace, meshgrid, stack, matmul; grid_sample: elementwise math and a gather per corner), so
// their gradients (to theta; to the input and the grid) and their traces (a MatMul of the base
// grid by theta transposed, the linspaces computed from the sizes where they are symbolic; the
// sampler's composition) come from those ops.
//
//   const grid = om.nn.functional.affineGrid(theta /* [N, 2, 3] */, [N, C, H, W], { alignCorners: false });  // [N, H, W, 2]
import { invalid } from '../errors.js';
import { requireReady } from '../runtime.js';
import { describe, toI64 } from '../convert.js';
import { handle, optionsArg, tidy, stack, meshgrid, ones, where } from '../tensor.js';
import { linspace } from './arith.js';

/** PyTorch's linspace_from_neg_one: n points over [-1, 1] (align corners), else the same scaled by (n - 1) / n; one point: 0. */
function fromNegOne(n, alignCorners) {
  if (n <= 1) return linspace(0, 0, n);
  const r = linspace(-1, 1, n);
  return alignCorners ? r : r.mul(n - 1).div(n);
}

/**
 * F.affine_grid(theta [N, 2, 3] (or [N, 3, 4]), size [N, C, H, W] (or [N, C, D, H, W]), { alignCorners = false }):
 * the sampling grid [N, H, W, 2] ([N, D, H, W, 3]) of each affine matrix, PyTorch's: the base grid
 * (x along W, y along H, z along D, then 1) times theta transposed.
 */
export function affineGrid(theta, size, options = undefined) {
  const who = 'affineGrid';
  requireReady(who);
  handle(theta, who, 'theta');
  const o = optionsArg(options, who, ['alignCorners']);
  const alignCorners = o.alignCorners ?? false;
  if (typeof alignCorners !== 'boolean') throw invalid(`${who}: alignCorners must be a boolean, got ${describe(alignCorners)}`);
  if (!Array.isArray(size) || (size.length !== 4 && size.length !== 5)) {
    throw invalid(`${who}: affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. Got size ${describe(size)}`);
  }
  const sz = size.map((v, i) => Number(toI64(v, who, `size[${i}]`)));
  if (sz.some((v) => v <= 0)) throw invalid(`${who}: expected non-zero, positive output size. Got [${sz}]`);
  const k = sz.length - 2, [n] = sz;
  if (theta.dtype !== 'float32' || theta.ndim !== 3 || theta.shape[0] !== n || theta.shape[1] !== k || theta.shape[2] !== k + 1) {
    throw invalid(`${who}: expected a batch of ${k}D affine matrices of shape Nx${k}x${k + 1} for size [${sz}]. Got [${theta.shape}] ${theta.dtype}`);
  }
  const spatial = sz.slice(2); // [H, W] or [D, H, W]
  return tidy(() => {
    // the axes' coordinates on the spatial grid ('ij': D, H, W), then x (W) first, a column of ones last
    const axes = meshgrid(spatial.map((s) => fromNegOne(s, alignCorners)), { indexing: 'ij' });
    const base = stack([...axes.reverse(), ones(spatial)], -1); // [..., k + 1]
    const points = spatial.reduce((a, b) => a * b, 1);
    return base.reshape([1, points, k + 1]).matmul(theta.transpose(1, 2)).reshape([n, ...spatial, k]);
  });
}

/** PyTorch's reflect_coordinates: c reflected into [twiceLow / 2, twiceHigh / 2] (0 where the range is a point). */
function reflect(c, twiceLow, twiceHigh) {
  if (twiceLow === twiceHigh) return c.mul(0);
  const min = twiceLow / 2, span = (twiceHigh - twiceLow) / 2;
  const a = c.sub(min).abs(), extra = a.fmod(span), even = a.div(span).floor().fmod(2).eq(0);
  return where(even, extra.add(min), extra.neg().add(span).add(min));
}

/** The source coordinate of normalized grid values g along an axis of `size`: PyTorch's unnormalize, then its padding rule. */
function sourceCoordinate(g, size, alignCorners, paddingMode) {
  const c = alignCorners ? g.add(1).div(2).mul(size - 1) : g.add(1).mul(size).sub(1).div(2);
  // minimum, not clamp's max: a bound computed from a symbolic size traces as an operand, not as a float argument
  if (paddingMode === 'border') return c.clamp(0).minimum(size - 1);
  if (paddingMode !== 'reflection') return c;
  return alignCorners ? reflect(c, 0, 2 * (size - 1)) : reflect(c, -1, 2 * size - 1).clamp(0).minimum(size - 1);
}

const GRID_MODES = ['bilinear', 'nearest'], GRID_PADDING = ['zeros', 'border', 'reflection'];

/**
 * F.grid_sample(input [N, C, H, W], grid [N, Ho, Wo, 2], { mode = 'bilinear', paddingMode = 'zeros',
 * alignCorners = false }): input sampled at the grid's points (x along W first, in [-1, 1]) ->
 * [N, C, Ho, Wo], PyTorch's: its unnormalize and padding rules (border clamps, reflection
 * reflects), its four bilinear weights summed in its order, nearest rounding half to even, a
 * point outside the input 0 with zeros padding. Written with the library's ops (a gather of the
 * flattened planes per corner): the gradients to the input and the grid are theirs, as PyTorch's
 * (the grid's is 0 in nearest mode), and the trace is their composition.
 */
export function gridSample(input, grid, options = undefined) {
  const who = 'gridSample';
  requireReady(who);
  handle(input, who, 'input');
  handle(grid, who, 'grid');
  const o = optionsArg(options, who, ['mode', 'paddingMode', 'alignCorners']);
  const mode = o.mode ?? 'bilinear', paddingMode = o.paddingMode ?? 'zeros', alignCorners = o.alignCorners ?? false;
  if (!GRID_MODES.includes(mode)) throw invalid(`${who}: mode must be 'bilinear' or 'nearest' ('bicubic' is not supported), got ${describe(mode)}`);
  if (!GRID_PADDING.includes(paddingMode)) throw invalid(`${who}: paddingMode must be 'zeros', 'border' or 'reflection', got ${describe(paddingMode)}`);
  if (typeof alignCorners !== 'boolean') throw invalid(`${who}: alignCorners must be a boolean, got ${describe(alignCorners)}`);
  if (input.ndim !== 4 || grid.ndim !== 4 || grid.shape[3] !== 2 || grid.shape[0] !== input.shape[0] || input.dtype !== 'float32' || grid.dtype !== 'float32') {
    throw invalid(`${who}: takes float32 input [N, C, H, W] and grid [N, Ho, Wo, 2] (4-D input only), got [${input.shape}] ${input.dtype} and [${grid.shape}] ${grid.dtype}`);
  }
  const [n, c, h, w] = input.shape, [, ho, wo] = grid.shape;
  return tidy(() => {
    const ix = sourceCoordinate(grid.select(-1, 0), w, alignCorners, paddingMode);
    const iy = sourceCoordinate(grid.select(-1, 1), h, alignCorners, paddingMode);
    const planes = input.reshape([n, c, h * w]);
    // the input at integral coordinates (x, y) [N, Ho, Wo], 0 where the point lies outside, times
    // weight: as PyTorch's, the value is masked before the product, so a non-finite coordinate's NaN
    // weight gives NaN (0 * NaN), not 0. The clamps' upper bounds are minimum's operands (see sourceCoordinate).
    const tap = (x, y, weight) => {
      const inside = x.ge(0).logicalAnd(x.le(w - 1)).logicalAnd(y.ge(0)).logicalAnd(y.le(h - 1)).unsqueeze(1);
      const at = y.clamp(0).minimum(h - 1).mul(w).add(x.clamp(0).minimum(w - 1)).to('int64').reshape([n, 1, ho * wo]).expand([n, c, ho * wo]);
      const v = where(inside, planes.gather(2, at).reshape([n, c, ho, wo]), 0);
      return weight ? v.mul(weight.unsqueeze(1)) : v;
    };
    if (mode === 'nearest') return tap(ix.round(), iy.round(), null);
    const x0 = ix.floor(), y0 = iy.floor(), x1 = x0.add(1), y1 = y0.add(1);
    const [dx0, dx1, dy0, dy1] = [ix.sub(x0), x1.sub(ix), iy.sub(y0), y1.sub(iy)];
    return tap(x0, y0, dx1.mul(dy1)).add(tap(x1, y0, dx0.mul(dy1))).add(tap(x0, y1, dx1.mul(dy0))).add(tap(x1, y1, dx0.mul(dy0)));
  });
}
