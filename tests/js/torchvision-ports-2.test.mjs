// The torchvision ports added second (examples/torchvision/: GoogLeNet, Inception v3, MNASNet,
// MaxViT, VGG) against torchvision 0.14 itself, checked as tests/js/torchvision-ports.test.mjs
// checks the first (tests/js/torchvision-ports.mjs): torchvision's classes narrowed the way
// tools/torchvision_ports.py narrows them, each port loading PyTorch's state dict strictly,
// matching it eagerly at every fixture size, and traced with symbolic batch, H and W (MaxViT's
// batch alone: it runs at the grids of the size it is built for) and agreeing in onnxruntime-web
// and the Session at sizes the trace never saw. Then the ports' configuration errors.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced } from './helpers.mjs';
import { GoogLeNet, BasicConv2d, Inception, InceptionAux } from '../../examples/torchvision/googlenet.mjs';
import * as inception from '../../examples/torchvision/inception.mjs';
import { MNASNet, InvertedResidual as MnasUnit, stack, roundToMultipleOf, getDepths } from '../../examples/torchvision/mnasnet.mjs';
import { MaxVit, MaxVitBlock, PartitionAttentionLayer, RelativePositionalMultiHeadAttention } from '../../examples/torchvision/maxvit.mjs';
import { VGG, makeLayers } from '../../examples/torchvision/vgg.mjs';
import { CONV, describePorts } from './torchvision-ports.mjs';

memoryHooks();
const nn = om.nn;

/**
 * tools/torchvision_ports.py's NarrowBasicConv2d (GoogLeNet's, div 16) and NarrowInceptionConv2d
 * (Inception v3's, div 32; the same BasicConv2d): the conv block with every width but the image's
 * divided by div (floored).
 */
const narrowBasicConv2d = (div) => class NarrowBasicConv2d extends BasicConv2d {
  constructor(inChannels, outChannels, options) {
    super(inChannels === 3 ? 3 : Math.floor(inChannels / div), Math.floor(outChannels / div), options);
  }
};
const NarrowBasicConv2d = narrowBasicConv2d(16);
const NarrowInceptionConv2d = narrowBasicConv2d(32);

/** tools/torchvision_ports.py's NarrowMNASNet: the port's MNASNet with its 1280-wide head made again at `last`. */
class NarrowMNASNet extends MNASNet {
  constructor(alpha, last, options) {
    super(alpha, options);
    const { layers, classifier } = this;
    const inChannels = layers[14].inChannels, momentum = layers[15].momentum;
    for (const m of [layers[14], layers[15], classifier[1]]) m.dispose();
    layers[14] = new nn.Conv2d(inChannels, last, 1, { padding: 0, stride: 1, bias: false });
    layers[15] = new nn.BatchNorm2d(last, { momentum });
    classifier[1] = new nn.Linear(last, this.numClasses);
  }
}

/**
 * tools/torchvision_ports.py's NarrowVGG: the port's VGG with its classifier from width * 7 * 7
 * features through hidden (built in its place, where the tool replaces torchvision's 102M-weight one).
 */
const narrowVGG = (width, hidden) => class NarrowVGG extends VGG {
  makeClassifier(numClasses, dropout) {
    return new nn.Sequential(new nn.Linear(width * 7 * 7, hidden), new nn.ReLU(true), new nn.Dropout({ p: dropout }),
      new nn.Linear(hidden, hidden), new nn.ReLU(true), new nn.Dropout({ p: dropout }), new nn.Linear(hidden, numClasses));
  }
};

/** Each fixture's model and its traces (see describePorts). */
const MODELS = {
  googlenet: [() => {
    const net = new GoogLeNet({
      numClasses: 10, auxLogits: false, transformInput: true, initWeights: false,
      blocks: [NarrowBasicConv2d, (...args) => new Inception(...args, NarrowBasicConv2d), InceptionAux],
    });
    net.fc.dispose();
    net.fc = new nn.Linear(1024 / 16, 10);
    return net;
  }, [...CONV, { h: 15, w: 15 }]],
  inception_v3: [() => {
    const { InceptionA, InceptionB, InceptionC, InceptionD, InceptionE, InceptionAux } = inception;
    const blocks = [InceptionA, InceptionB, InceptionC, InceptionD, InceptionE, InceptionAux]
      .map((B) => (...args) => new B(...args, NarrowInceptionConv2d)); // functools.partial(B, conv_block=NarrowInceptionConv2d)
    const net = new inception.Inception3({
      numClasses: 10, auxLogits: false, transformInput: true, initWeights: false, inceptionBlocks: [NarrowInceptionConv2d, ...blocks],
    });
    net.fc.dispose();
    net.fc = new nn.Linear(2048 / 32, 10);
    return net;
  }, [[2, 3, 75, 75], ['batch', null, 'h', 'w'], { h: 75, w: 75 }]],
  mnasnet: [() => new NarrowMNASNet(0.05, 64, { numClasses: 10 }), CONV],
  maxvit: [() => new MaxVit([64, 64], 8, 4, [8, 16], [1, 2], 4, 0.2, { numClasses: 10 }), [[2, 3, 64, 64], ['batch', null, null, null]]],
  vgg: [() => new (narrowVGG(32, 16))(makeLayers([4, 'M', 8, 'M', 16, 16, 'M', 32, 32, 'M', 32, 32, 'M'], true), { numClasses: 10, initWeights: false }),
    [...CONV, { h: 32, w: 32 }]],
};

/** VGG pools its features to 7 x 7 adaptively: each output cell's window comes from the feature map's height and width (one Shape read each). */
const SHAPES = { vgg: 2 };

describePorts(MODELS, SHAPES);

describe('configuration errors are torchvision\'s, as InvalidArgument', () => {
  const invalidArg = (re) => (e) => e instanceof om.OmError && e.kind === 'InvalidArgument' && re.test(e.message);
  test('each port checks its configuration before it makes anything', () => {
    const before = om.memory().tensors;
    assert.throws(() => new GoogLeNet({ blocks: [BasicConv2d, Inception] }), invalidArg(/^blocks length should be 3 instead of 2$/));
    assert.throws(() => new GoogLeNet({ aux_logits: false }), invalidArg(/GoogLeNet: unknown option 'aux_logits' \(expected numClasses, /));
    assert.throws(() => new inception.Inception3({ inceptionBlocks: [inception.BasicConv2d] }),
      invalidArg(/^lenght of inception_blocks should be 7 instead of 1$/)); // torchvision's spelling
    assert.throws(() => new MNASNet(0), invalidArg(/^alpha should be greater than 0.0 instead of 0$/));
    assert.throws(() => new MnasUnit(8, 8, 3, 3, 3), invalidArg(/^stride should be 1 or 2 instead of 3$/));
    assert.throws(() => new MnasUnit(8, 8, 7, 1, 3), invalidArg(/^kernel_size should be 3 or 5 instead of 7$/));
    assert.throws(() => stack(8, 8, 3, 1, 3, 0, 0.1), invalidArg(/^repeats should be >= 1, instead got 0$/));
    assert.throws(() => roundToMultipleOf(10, 8, 1), invalidArg(/^round_up_bias should be greater than 0.0 and smaller than 1.0 instead of 1$/));
    assert.throws(() => new MaxVit([64, 64], 8, 5, [8, 16], [1, 2], 4, 0.2), invalidArg(/^Input size \[16,16\] of block 0 is not divisible by partition size 5\. /));
    assert.throws(() => new RelativePositionalMultiHeadAttention(10, 4, 16), invalidArg(/^feat_dim: 10 must be divisible by head_dim: 4$/));
    assert.throws(() => new PartitionAttentionLayer(8, 4, 4, 'diagonal', [16, 16], 4, nn.GELU, nn.LayerNorm, 0, 0, 0),
      invalidArg(/^partition_type must be either 'grid' or 'window'$/));
    assert.throws(() => new MaxVitBlock(8, 8, 0.25, 4, nn.BatchNorm2d, nn.GELU, 4, 4, 0, 0, 4, [32, 32], 2, [0.1]),
      invalidArg(/^p_stochastic must have length n_layers=2, got p_stochastic=\[0.1\]\.$/));
    assert.equal(om.memory().tensors, before, 'nothing is left made');
  });

  test('MNASNet\'s getDepths is torchvision\'s _get_depths (its _round_to_multiple_of rounding)', () => {
    // alpha -> what torchvision 0.14's _get_depths returns
    for (const [alpha, want] of [[0.05, [8, 8, 8, 8, 8, 8, 16, 16]], [0.5, [16, 8, 16, 24, 40, 48, 96, 160]],
      [0.75, [24, 16, 24, 32, 64, 72, 144, 240]], [1.3, [40, 24, 32, 56, 104, 128, 248, 416]]]) {
      assert.deepEqual(getDepths(alpha), want, `_get_depths(${alpha})`);
    }
  });
});

describe("MaxViT with symbolic H and W: its grid answers where products match, so the trace is refused, and the declaration it names holds", () => {
  test('refused naming 32 x 128 and om.Dim(H/W, { min: 61, max: 64 }); traced so declared, right at 61 x 63 and 64 x 61 in both engines', async () => {
    const net = new MaxVit([64, 64], 8, 4, [8, 16], [1, 2], 4, 0.2, { numClasses: 10 });
    net.eval();
    const x = om.randn([2, 3, 64, 64], { seed: 1 });
    try {
      // torchvision's MaxViT keeps the grid it was built for: at 66 x 64 it fails, at 32 x 128 it
      // answers (windows read in another order), which a graph narrowed to 61..64 would not
      assert.throws(() => om.trace(net, { x: [x, ['batch', null, 'H', 'W']] }), (e) => e instanceof om.TraceError &&
        e.kind === 'SymbolicShape' && /the range of 'H' narrowed there, yet at H=32, W=128 \(with 'W' moved too\) the model answers/.test(e.message) &&
        /om\.Dim\('H', \{ min: 61, max: 64 \}\), om\.Dim\('W', \{ min: 61, max: 64 \}\)/.test(e.message));
      await withTraced((keep) => {
        const tm = om.trace(net, { x: [x, ['batch', null, om.Dim('H', { min: 61, max: 64 }), om.Dim('W', { min: 61, max: 64 })]] });
        keep(tm, { x }, om.noGrad(() => net.forward(x)), 'at the example', net);
        for (const [h, w] of [[61, 63], [64, 61]]) {
          const y = om.randn([1, 3, h, w], { seed: h + w });
          keep(tm, { x: y }, om.noGrad(() => net.forward(y)), `at ${h} x ${w}`);
        }
      });
    } finally {
      net.dispose();
      x.dispose();
    }
  });
});
