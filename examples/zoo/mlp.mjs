// MLP: 2 -> 32 -> 32 -> 1 with ReLU, fit to y = x0^2 + x0*x1 - 0.5*x1 on points of [-1, 1]^2.
// A model file (docs/demo.md): the demo page, `node tools/trace_oracle.mjs` and
// examples/export-mlp.mjs all read it.
import * as om from 'onemodel';

await om.ready();
om.manualSeed(1);

/** Two hidden layers of ReLU units: inFeatures -> hidden -> hidden -> outFeatures. */
export class MLP extends om.nn.Module {
  constructor(inFeatures = 2, hidden = 32, outFeatures = 1) {
    super();
    this.fc1 = new om.nn.Linear(inFeatures, hidden);
    this.fc2 = new om.nn.Linear(hidden, hidden);
    this.fc3 = new om.nn.Linear(hidden, outFeatures);
  }

  forward(x) {
    return om.tidy(() => this.fc3.forward(this.fc2.forward(this.fc1.forward(x).relu()).relu()));
  }
}

/** 64 points of [-1, 1]^2 and their targets [64, 1]. */
function batch(step) {
  const x = om.rand([64, 2], { seed: step }).mul(2).sub(1);
  const x0 = x.select(1, 0), x1 = x.select(1, 1);
  return { inputs: [x], target: x0.mul(x0).add(x0.mul(x1)).sub(x1.mul(0.5)).unsqueeze(1) };
}

export default {
  title: 'MLP regression',
  model: new MLP(),
  inputs: { x: [om.randn([8, 2], { seed: 7 }), ['batch', null]] },
  outputNames: ['y'],
  train: {
    steps: 50,
    optimizer: (params) => new om.optim.Adam(params, { lr: 1e-2 }),
    batch,
    loss: (y, target) => om.nn.functional.mseLoss(y, target),
  },
};
