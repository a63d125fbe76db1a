// om.nn.LSTM and om.nn.GRU: PyTorch's recurrent layers. Parameters carry PyTorch's names
// (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, then *_reverse and the next layers), in
// PyTorch's order and with its initialisation (every parameter uniform in ±1/sqrt(hiddenSize)),
// so a PyTorch state dict loads as it is. The forward is C's om_lstm / om_gru: one lstm_layer /
// gru_layer op per layer and direction (each traces to one ONNX LSTM / GRU node).
//
//   const rnn = new om.nn.LSTM(8, 16, { numLayers: 2, batchFirst: true });
//   const [out, [hN, cN]] = rnn.forward(x);        // x [N, T, 8] -> out [N, T, 16], hN, cN [2, N, 16]
import { invalid } from '../errors.js';
import { omw, requireReady, marshal, readU32, lastError } from '../runtime.js';
import { Tensor, handle, wrap, rand, tidy, optionsArg } from '../tensor.js';
import { describe, toI32 } from '../convert.js';
import { Module } from './module.js';

/** LSTM's and GRU's base (om.nn.RNNBase, for instanceof): made only through them. */
export class RNNBase extends Module {
  #kind;

  constructor(kind, inputSize, hiddenSize, options) {
    super();
    if (new.target === RNNBase) throw invalid('RNNBase: the base class of LSTM and GRU; construct om.nn.LSTM or om.nn.GRU');
    const who = kind;
    this.#kind = kind;
    const nIn = toI32(inputSize, who, 'inputSize');
    const nH = toI32(hiddenSize, who, 'hiddenSize');
    if (nIn < 1 || nH < 1) throw invalid(`${who}: inputSize and hiddenSize must be positive, got ${nIn} and ${nH}`);
    const { numLayers = 1, bias = true, batchFirst = false, dropout = 0, bidirectional = false, ...rest } = optionsArg(options, who);
    const unknown = Object.keys(rest);
    if (unknown.length) throw invalid(`${who}: unknown option ${unknown[0]} (numLayers, bias, batchFirst, dropout, bidirectional)`);
    const layers = toI32(numLayers, who, 'numLayers');
    if (layers < 1) throw invalid(`${who}: numLayers must be at least 1, got ${layers}`);
    for (const [name, v] of [['bias', bias], ['batchFirst', batchFirst], ['bidirectional', bidirectional]]) {
      if (typeof v !== 'boolean') throw invalid(`${who}: ${name} must be a boolean, got ${describe(v)}`);
    }
    if (dropout !== 0) throw invalid(`${who}: dropout between layers is not supported (only 0), got ${describe(dropout)}`);
    this.inputSize = nIn;
    this.hiddenSize = nH;
    this.numLayers = layers;
    this.bias = bias;
    this.batchFirst = batchFirst;
    this.dropout = 0;
    this.bidirectional = bidirectional;
    const gates = kind === 'LSTM' ? 4 : 3;
    const bound = 1 / Math.sqrt(nH);
    const uniform = (shape) => {
      const t = tidy(() => rand(shape).mul(2 * bound).sub(bound));
      t.requiresGrad = true;
      return t;
    };
    // PyTorch's _flat_weights order, which is also its state-dict and initialisation order
    for (let l = 0; l < layers; l++) {
      for (const suffix of bidirectional ? ['', '_reverse'] : ['']) {
        const inL = l === 0 ? nIn : nH * (bidirectional ? 2 : 1);
        this[`weight_ih_l${l}${suffix}`] = uniform([gates * nH, inL]);
        this[`weight_hh_l${l}${suffix}`] = uniform([gates * nH, nH]);
        if (bias) {
          this[`bias_ih_l${l}${suffix}`] = uniform([gates * nH]);
          this[`bias_hh_l${l}${suffix}`] = uniform([gates * nH]);
        }
      }
    }
  }

  /** The parameters in PyTorch's _flat_weights order. */
  #flat() {
    const out = [];
    for (let l = 0; l < this.numLayers; l++) {
      for (const suffix of this.bidirectional ? ['', '_reverse'] : ['']) {
        for (const n of this.bias ? ['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh'] : ['weight_ih', 'weight_hh']) {
          out.push(handle(this[`${n}_l${l}${suffix}`], this.#kind, `${n}_l${l}${suffix}`));
        }
      }
    }
    return out;
  }

  /**
   * LSTM: forward(input, [h0, c0]?) -> [output, [hN, cN]]; GRU: forward(input, h0?) -> [output, hN].
   * Missing initial states are zeros.
   */
  forward(input, hx = null) {
    const who = this.#kind;
    requireReady(who);
    const lstm = who === 'LSTM';
    let states = lstm ? [null, null] : [null];
    if (hx !== null && hx !== undefined) {
      if (lstm && (!Array.isArray(hx) || hx.length !== 2 || !hx.every((t) => t instanceof Tensor))) {
        throw invalid(`LSTM: hx must be [h0, c0] (two Tensors), got ${describe(hx)}`);
      }
      if (!lstm && !(hx instanceof Tensor)) throw invalid(`GRU: hx must be a Tensor, got ${describe(hx)}`);
      states = lstm ? hx : [hx];
    }
    const hin = handle(input, who, 'input');
    const hs = states.map((s, i) => (s === null ? 0 : handle(s, who, i ? 'c0' : 'h0')));
    const ps = this.#flat();
    const [pp, po] = marshal(['ptr', ps], ['ptr', lstm ? 3 : 2]);
    const flags = [this.numLayers, this.bias ? 1 : 0, this.batchFirst ? 1 : 0, this.bidirectional ? 1 : 0];
    const n = lstm ? omw.lstm(hin, hs[0], hs[1], pp, ps.length, ...flags, po) : omw.gru(hin, hs[0], pp, ps.length, ...flags, po);
    if (n < 0) throw lastError(who);
    const [out, hN, cN] = readU32(po, n).map(wrap);
    return lstm ? [out, [hN, cN]] : [out, hN];
  }
}

/**
 * PyTorch's nn.LSTM (gates i, f, g, o): forward(input, [h0, c0]?) returns [output, [hN, cN]].
 * input [T, N, inputSize] ([N, T, inputSize] with batchFirst, [T, inputSize] unbatched);
 * h0, c0 and hN, cN [numLayers * D, N, hiddenSize] (D = 2 when bidirectional);
 * output [T, N, D * hiddenSize] ([N, T, ...] with batchFirst).
 */
export class LSTM extends RNNBase {
  constructor(inputSize, hiddenSize, options = {}) {
    super('LSTM', inputSize, hiddenSize, options);
  }
}

/**
 * PyTorch's nn.GRU (gates r, z, n; n = tanh(W_in x + b_in + r * (W_hn h + b_hn))):
 * forward(input, h0?) returns [output, hN], shaped as for LSTM.
 */
export class GRU extends RNNBase {
  constructor(inputSize, hiddenSize, options = {}) {
    super('GRU', inputSize, hiddenSize, options);
  }
}
