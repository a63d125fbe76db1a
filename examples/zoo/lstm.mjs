// LSTM classifier: an LSTM over the sequence, its last step's hidden state, a Linear head:
// [N, T, 6] -> [N, 3], with a symbolic batch and sequence length. A model file (docs/demo.md).
// Training data: noise sequences; the class is which of the first three features sums highest.
import * as om from 'onemodel';

await om.ready();
om.manualSeed(6);

/** A sequence classifier: RNN (kind 'LSTM' or 'GRU') -> last step -> Linear. */
export class Classifier extends om.nn.Module {
  constructor(kind = 'LSTM') {
    super();
    this.rnn = new om.nn[kind](6, 8, { batchFirst: true });
    this.fc = new om.nn.Linear(8, 3);
  }

  forward(x) {
    return om.tidy(() => this.fc.forward(this.rnn.forward(x)[0].select(1, -1)));
  }
}

export default {
  title: 'LSTM sequence classifier',
  model: new Classifier('LSTM'),
  inputs: { x: [om.randn([3, 5, 6], { seed: 1 }), ['batch', 'seq', null]] },
  outputNames: ['logits'],
  train: {
    steps: 50,
    optimizer: (params) => new om.optim.Adam(params, { lr: 2e-2 }),
    batch: (step) => {
      const x = om.randn([32, 5, 6], { seed: step });
      return { inputs: [x], target: x.sum(1).slice(1, 0, 3).argmax(1) };
    },
    loss: (logits, labels) => om.nn.functional.crossEntropy(logits, labels),
  },
};
