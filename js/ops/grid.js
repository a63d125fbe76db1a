// Sampling grids: F.affine_grid and F.grid_sample, written with the library's ops (affine_grid:
// linspace, meshgrid, stack, matmul; grid_sample: elementwise math and a gather per corner or tap), so
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

/** PyTorch's grid_sampler_unnormalize: normalized grid values g ([-1, 1]) as coordinates along an axis of `size`. */
function unnormalize(g, size, alignCorners) {
  return alignCorners ? g.add(1).div(2).mul(size - 1) : g.add(1).mul(size).sub(1).div(2);
}

/** PyTorch's compute_coordinates: coordinates c along an axis of `size` after its padding rule (zeros: as they are). */
function padded(c, size, alignCorners, paddingMode) {
  // minimum, not clamp's max: a bound computed from a symbolic size traces as an operand, not as a float argument
  if (paddingMode === 'border') return c.clamp(0).minimum(size - 1);
  if (paddingMode !== 'reflection') return c;
  return alignCorners ? reflect(c, 0, 2 * (size - 1)) : reflect(c, -1, 2 * size - 1).clamp(0).minimum(size - 1);
}

/**
 * PyTorch's get_cubic_upsample_coefficients (A = -0.75): the weights of the four taps at
 * floor - 1 .. floor + 2 for the fraction t, as tensors of t's shape.
 */
function cubicWeights(t) {
  const A = -0.75;
  const near = (x) => x.mul(A + 2).sub(A + 3).mul(x).mul(x).add(1); // |x| <= 1
  const far = (x) => x.mul(A).sub(5 * A).mul(x).add(8 * A).mul(x).sub(4 * A); // 1 < |x| < 2
  const u = t.neg().add(1);
  return [far(t.add(1)), near(t), near(u), far(u.add(1))];
}

const GRID_MODES = ['bilinear', 'nearest', 'bicubic'], GRID_PADDING = ['zeros', 'border', 'reflection'];

/**
 * F.grid_sample(input [N, C, H, W] or [N, C, D, H, W], grid [N, Ho, Wo, 2] or [N, Do, Ho, Wo, 3],
 * { mode = 'bilinear', paddingMode = 'zeros', alignCorners = false }): input sampled at the grid's
 * points (x along W first, then y along H, z along D; in [-1, 1]) -> [N, C, Ho, Wo] ([N, C, Do,
 * Ho, Wo]), PyTorch's: its unnormalize and padding rules (border clamps, reflection reflects), its
 * bilinear (trilinear on 5-D, which PyTorch also calls 'bilinear') weights summed in its corner
 * order, nearest rounding half to even, bicubic (4-D only, as PyTorch) from the 4 x 4 taps around
 * the point with A = -0.75, each tap padded on its own, a point (tap) outside the input 0 with
 * zeros padding. Written with the library's ops (a gather of the flattened planes per corner or
 * tap): the gradients to the input and the grid are theirs, as PyTorch's (the grid's is 0 in
 * nearest mode), and the trace is their composition in every mode (gathers, no GridSample node).
 */
export function gridSample(input, grid, options = undefined) {
  const who = 'gridSample';
  requireReady(who);
  handle(input, who, 'input');
  handle(grid, who, 'grid');
  const o = optionsArg(options, who, ['mode', 'paddingMode', 'alignCorners']);
  const mode = o.mode ?? 'bilinear', paddingMode = o.paddingMode ?? 'zeros', alignCorners = o.alignCorners ?? false;
  if (!GRID_MODES.includes(mode)) throw invalid(`${who}: mode must be 'bilinear', 'nearest' or 'bicubic', got ${describe(mode)}`);
  if (!GRID_PADDING.includes(paddingMode)) throw invalid(`${who}: paddingMode must be 'zeros', 'border' or 'reflection', got ${describe(paddingMode)}`);
  if (typeof alignCorners !== 'boolean') throw invalid(`${who}: alignCorners must be a boolean, got ${describe(alignCorners)}`);
  const k = input.ndim - 2;
  if ((k !== 2 && k !== 3) || grid.ndim !== input.ndim || grid.shape[k + 1] !== k || grid.shape[0] !== input.shape[0] || input.dtype !== 'float32' || grid.dtype !== 'float32') {
    throw invalid(`${who}: takes float32 input [N, C, H, W] and grid [N, Ho, Wo, 2], or input [N, C, D, H, W] and grid [N, Do, Ho, Wo, 3], got [${input.shape}] ${input.dtype} and [${grid.shape}] ${grid.dtype}`);
  }
  if (mode === 'bicubic' && k !== 2) throw invalid(`${who}: bicubic interpolation only supports 4-D input, got [${input.shape}]`);
  const [n, c, ...spatial] = input.shape, out = grid.shape.slice(1, -1), points = out.reduce((a, b) => a * b, 1);
  // per grid component (x, y, z): the axis' size and its stride in the flattened planes
  const sizes = spatial.slice().reverse(), strides = sizes.map((_, a) => sizes.slice(0, a).reduce((p, q) => p * q, 1));
  return tidy(() => {
    const planes = input.reshape([n, c, spatial.reduce((a, b) => a * b, 1)]);
    // the input at integral coordinates xs (one per component, each [N, ...out]), 0 where the point
    // lies outside, times weight: as PyTorch's, the value is masked before the product, so a
    // non-finite coordinate's NaN weight gives NaN (0 * NaN), not 0. The clamps' upper bounds are
    // minimum's operands (see padded).
    const tap = (xs, weight) => {
      const inside = xs.map((x, a) => x.ge(0).logicalAnd(x.le(sizes[a] - 1))).reduce((p, q) => p.logicalAnd(q)).unsqueeze(1);
      const at = xs.map((x, a) => x.clamp(0).minimum(sizes[a] - 1).mul(strides[a])).reduce((p, q) => p.add(q))
        .to('int64').reshape([n, 1, points]).expand([n, c, points]);
      const v = where(inside, planes.gather(2, at).reshape([n, c, ...out]), 0);
      return weight ? v.mul(weight.unsqueeze(1)) : v;
    };
    const g = sizes.map((size, a) => unnormalize(grid.select(-1, a), size, alignCorners));
    if (mode === 'bicubic') { // rows of four taps along x, then those rows weighted along y
      const [fx, fy] = g.map((u) => u.floor()), [wx, wy] = g.map((u, a) => cubicWeights(u.sub([fx, fy][a])));
      const at = (f, d, a) => padded(f.add(d - 1), sizes[a], alignCorners, paddingMode);
      const row = (j) => [0, 1, 2, 3].map((i) => tap([at(fx, i, 0), at(fy, j, 1)], wx[i])).reduce((p, q) => p.add(q));
      return [0, 1, 2, 3].map((j) => row(j).mul(wy[j].unsqueeze(1))).reduce((p, q) => p.add(q));
    }
    const cs = g.map((u, a) => padded(u, sizes[a], alignCorners, paddingMode));
    if (mode === 'nearest') return tap(cs.map((u) => u.round()), null);
    // the 2^k corners, x varying fastest (PyTorch's nw, ne, sw, se; then the same a z further)
    const lo = cs.map((u) => u.floor()), hi = lo.map((f) => f.add(1));
    const corner = (m) => {
      const xs = cs.map((_, a) => ((m >> a) & 1 ? hi[a] : lo[a]));
      const weight = cs.map((u, a) => ((m >> a) & 1 ? u.sub(lo[a]) : hi[a].sub(u))).reduce((p, q) => p.mul(q));
      return tap(xs, weight);
    };
    return Array.from({ length: 2 ** k }, (_, m) => corner(m)).reduce((p, q) => p.add(q));
  });
}
