// Sampling grids: F.affine_grid, written with the library's ops (linspace, meshgrid, stack,
// matmul), so its gradient to theta and its trace (a MatMul of the base grid by theta transposed,
// the linspaces computed from the sizes where they are symbolic) come from those ops; and
// F.grid_sample's options, for the op grid_sample (src/ops/grid.c: one kernel, one GridSample node).
//
//   const grid = om.nn.functional.affineGrid(theta /* [N, 2, 3] */, [N, C, H, W], { alignCorners: false });  // [N, H, W, 2]
import { invalid } from '../errors.js';
import { requireReady } from '../runtime.js';
import { describe, toI64 } from '../convert.js';
import { handle, optionsArg, tidy, stack, meshgrid, ones, applyOp } from '../tensor.js';
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

const GRID_MODES = ['bilinear', 'nearest', 'bicubic'], GRID_PADDING = ['zeros', 'border', 'reflection'];

/**
 * F.grid_sample(input [N, C, H, W] or [N, C, D, H, W], grid [N, Ho, Wo, 2] or [N, Do, Ho, Wo, 3],
 * { mode = 'bilinear', paddingMode = 'zeros', alignCorners = false }): input sampled at the grid's
 * points (x along W first, then y along H, z along D; in [-1, 1]) -> [N, C, Ho, Wo] ([N, C, Do,
 * Ho, Wo]): the op grid_sample (src/ops/grid.c), PyTorch's values in every mode and padding
 * (bilinear is trilinear on 5-D, as PyTorch's; bicubic is 4-D only), its gradients to the input
 * and the grid (nearest: none to the grid), traced as one GridSample node. Installed from the op
 * table's row (js/ops/table.js); this checks the options and gives the C op their codes.
 */
export function gridSample(input, grid, options = undefined) {
  const who = 'gridSample';
  const hs = [handle(input, who, 'input'), handle(grid, who, 'grid')];
  const o = optionsArg(options, who, ['mode', 'paddingMode', 'alignCorners']);
  const mode = o.mode ?? 'bilinear', paddingMode = o.paddingMode ?? 'zeros', alignCorners = o.alignCorners ?? false;
  if (!GRID_MODES.includes(mode)) throw invalid(`${who}: mode must be 'bilinear', 'nearest' or 'bicubic', got ${describe(mode)}`);
  if (!GRID_PADDING.includes(paddingMode)) throw invalid(`${who}: paddingMode must be 'zeros', 'border' or 'reflection', got ${describe(paddingMode)}`);
  if (typeof alignCorners !== 'boolean') throw invalid(`${who}: alignCorners must be a boolean, got ${describe(alignCorners)}`);
  return applyOp(who, 'grid_sample', hs, [BigInt(GRID_MODES.indexOf(mode)), BigInt(GRID_PADDING.indexOf(paddingMode)), alignCorners ? 1n : 0n]);
}
