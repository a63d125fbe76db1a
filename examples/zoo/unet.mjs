// UNet-style net: conv, max-pool down, conv, bilinear upsample, concatenation with the skip,
// conv, 1x1 conv: [N, 2, H, W] -> [N, 3, H, W]. A model file (docs/demo.md).
// Training data: noise images; the target's channels are x0 * x1, x0 + x1 and relu(x0).
import * as om from 'onemodel';

await om.ready();
om.manualSeed(3);
const nn = om.nn;
const F = om.nn.functional;

export class UNet extends nn.Module {
  constructor() {
    super();
    this.enc1 = new nn.Conv2d(2, 8, 3, { padding: 1 });
    this.enc2 = new nn.Conv2d(8, 16, 3, { padding: 1 });
    this.pool = new nn.MaxPool2d(2);
    this.dec = new nn.Conv2d(16 + 8, 8, 3, { padding: 1 });
    this.out = new nn.Conv2d(8, 3, 1);
  }

  forward(x) {
    return om.tidy(() => {
      const e1 = this.enc1.forward(x).relu(); // [N, 8, H, W]
      const e2 = this.enc2.forward(this.pool.forward(e1)).relu(); // [N, 16, H/2, W/2]
      const up = F.interpolate(e2, { scaleFactor: 2, mode: 'bilinear', alignCorners: false });
      return this.out.forward(this.dec.forward(om.cat([up, e1], 1)).relu());
    });
  }
}

/** 8 noise images [8, 2, 8, 12] and their targets [8, 3, 8, 12]. */
function batch(step) {
  const x = om.randn([8, 2, 8, 12], { seed: step });
  const [x0, x1] = x.split(1, 1);
  return { inputs: [x], target: om.cat([x0.mul(x1), x0.add(x1), x0.relu()], 1) };
}

export default {
  title: 'UNet-style segmenter',
  model: new UNet(),
  inputs: { x: [om.randn([2, 2, 8, 12], { seed: 1 }), ['batch', null, null, null]] },
  outputNames: ['y'],
  train: {
    steps: 50,
    optimizer: (params) => new om.optim.Adam(params, { lr: 1e-2 }),
    batch,
    loss: (y, target) => F.mseLoss(y, target),
  },
};
