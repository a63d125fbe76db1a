// The torchvision ports added third (examples/torchvision/: AlexNet, MobileNetV2) and Swin V2's
// blocks at another window (7; torchvision-ports.test.mjs checks V2 at 8) against torchvision 0.14
// itself, checked as the first ports are (tests/js/torchvision-ports.mjs): torchvision's classes
// narrowed the way tools/torchvision_ports.py narrows them, each port loading PyTorch's state dict
// strictly, matching it eagerly at every fixture size, and traced with every axis the architecture
// allows symbolic (AlexNet's H and W from 63, where PyTorch fails below; Swin V2's H and W declared
// from 60, where its second stage shifts), agreeing in onnxruntime-web and the Session with PyTorch
// at sizes the trace never saw. Then the builders' state-dict keys and the configuration errors.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, withTraced } from './helpers.mjs';
import { suggestedDims } from './random/runner.mjs';
import { AlexNet } from '../../examples/torchvision/alexnet.mjs';
import { MobileNetV2, InvertedResidual, mobilenet_v2 } from '../../examples/torchvision/mobilenetv2.mjs';
import { SwinTransformer, SwinTransformerBlockV2, PatchMergingV2 } from '../../examples/torchvision/swin_transformer.mjs';
import { CONV, describePorts, describeBuilders } from './torchvision-ports.mjs';

memoryHooks();
const nn = om.nn;

/**
 * tools/torchvision_ports.py's NarrowAlexNet: the port's AlexNet with its convolutions' widths
 * divided by div and its classifier from widths[4] * 6 * 6 through hidden (built in place of
 * torchvision's, whose classifier alone is 58.6M weights).
 */
const narrowAlexNet = (div, hidden) => class NarrowAlexNet extends AlexNet {
  makeFeatures() {
    const features = super.makeFeatures();
    const widths = [64, 192, 384, 256, 256].map((c) => c / div);
    [0, 3, 6, 8, 10].forEach((i, k) => {
      const { kernelSize, stride, padding } = features[i];
      features[i].dispose();
      features[i] = new nn.Conv2d(k ? widths[k - 1] : 3, widths[k], kernelSize, { stride, padding });
    });
    return features;
  }

  makeClassifier(numClasses, dropout) {
    return new nn.Sequential(new nn.Dropout({ p: dropout }), new nn.Linear(256 / div * 6 * 6, hidden), new nn.ReLU(true),
      new nn.Dropout({ p: dropout }), new nn.Linear(hidden, hidden), new nn.ReLU(true), new nn.Linear(hidden, numClasses));
  }
};

/** tools/torchvision_ports.py's NarrowMobileNetV2: the port's MobileNetV2 with its last 1x1 convolution at `last` channels. */
class NarrowMobileNetV2 extends MobileNetV2 {
  constructor(last, options) {
    super(options);
    const { features, classifier } = this;
    const inChannels = features.at(-1).at(0).inChannels;
    features.at(-1).dispose();
    features[features.length - 1] = new nn.Conv2dNormActivation(inChannels, last, 1, { activationLayer: nn.ReLU6 });
    this.lastChannel = last;
    const numClasses = classifier[1].outFeatures;
    classifier[1].dispose();
    classifier[1] = new nn.Linear(last, numClasses);
  }
}

const MOBILENET_V2_SETTING = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 2, 2], [6, 64, 1, 2], [4, 96, 1, 1]];

/**
 * Where Swin V2 at window 7 traced at 64 x 64 holds: its second stage shifts its windows along
 * both sides (8 tokens padded to 14) from 60 on. The undeclared trace's refusal names h from 60
 * and w from 4 (below: an If on w), and describePorts traces with this against PyTorch in both
 * engines.
 */
const SWIN_V2_W7_FROM = { h: 60, w: 60 };

/** Each fixture's model and its traces (see describePorts). */
const MODELS = {
  // PyTorch fails below 63 (an empty map after the third pool); the 6 x 6 adaptive pool from any map size.
  alexnet: [() => new (narrowAlexNet(16, 16))({ numClasses: 10 }), [[2, 3, 100, 100], ['batch', null, 'h', 'w'], { h: 63, w: 63 }]],
  mobilenet_v2: [() => new NarrowMobileNetV2(64, { widthMult: 0.35, invertedResidualSetting: MOBILENET_V2_SETTING, numClasses: 10 }), CONV],
  // Swin V2 at window 7: the batch alone at 64x64; then batch, H and W with H and W declared from 60,
  // where the second stage shifts its windows (8 tokens padded to 14).
  swin_v2_w7: [() => new SwinTransformer([4, 4], 12, [2, 2], [3, 6], [7, 7], {
    stochasticDepthProb: 0.2, numClasses: 10, block: SwinTransformerBlockV2, downsampleLayer: PatchMergingV2,
  }), [[2, 3, 64, 64], ['batch', null, null, null]],
  [[2, 3, 76, 92], ['batch', null, ...['h', 'w'].map((a) => om.Dim(a, { min: SWIN_V2_W7_FROM[a] }))], SWIN_V2_W7_FROM]],
};

/** AlexNet pools its features to 6 x 6 adaptively (one Shape read each of height and width); Swin V2 pads to whole windows (as V1, 3). */
const SHAPES = { alexnet: 2, swin_v2_w7: 3 };

describePorts(MODELS, SHAPES);

// AlexNet's builder is left out: its 61M weights take seconds to make; the narrowed fixture checks its keys, in order.
describeBuilders('builders-3.json', { mobilenet_v2 });

describe('Swin V2 at window 7 with symbolic H and W undeclared', () => {
  // Its shifts switch per stage and side (the first stage's at H = 32, the second's at 60): the
  // trace is cut on h at 60, and the piece from 60 traced alone (cut on w where it must: a cut
  // inside a piece); the piece below, cut again at 59, meets the roll's arange start (3, and 0 at
  // a run at w = 7) fitting more than one form that no further run can tell apart, and is refused
  // at the roll, naming the whole declaration of the piece that held (h from 60, w from 4, where
  // the patch embedding first answers): pasted, it traces in one round (an If on w at 32 and 60),
  // right in both engines; describePorts traces with SWIN_V2_W7_FROM above against PyTorch.
  test('refused at the roll\'s start (SymbolicShape), naming the declaration that holds; pasted, it traces', () => withTraced((keep, trace) => {
    om.manualSeed(0);
    const net = new SwinTransformer([4, 4], 12, [2, 2], [3, 6], [7, 7], {
      numClasses: 10, block: SwinTransformerBlockV2, downsampleLayer: PatchMergingV2,
    }).eval();
    const x = om.randn([2, 3, 64, 64], { seed: 1 });
    try {
      let dims;
      assert.throws(() => om.trace(net, { x: [x, ['batch', null, 'h', 'w']] }), (e) => {
        assert.ok(e instanceof om.TraceError && e.kind === 'SymbolicShape', String(e));
        assert.match(e.message, /^trace: the model changes at a size threshold of 'h' \(at 60\), and the piece below it \(traced at h=59\) is refused: /);
        assert.match(e.message, /arange \(call \d+\): the start is 0 at batch=\d+, h=\d+, w=7, where the model gives an answer that the graph would not/);
        assert.ok(e.message.includes(`declare om.Dim('h', { min: ${SWIN_V2_W7_FROM.h} }), om.Dim('w', { min: 4 }) for the graph from there`), e.message);
        assert.match(e.message, /\(at \S*examples\/torchvision\/swin_transformer\.mjs:92:\d+\)$/, 'the roll\'s source line');
        ({ dims } = suggestedDims(e.message));
        return true;
      });
      const tm = trace(net, { x: [x, ['batch', null, dims.get('h'), dims.get('w')]] });
      assert.deepEqual(Object.fromEntries(tm.symbols.map((s) => [s.name, s.min])), { batch: 1, h: 60, w: 4 });
      for (const [shape, seed] of [[[1, 3, 60, 4], 2], [[1, 3, 61, 33], 3], [[2, 3, 64, 64], 1]]) {
        const xi = om.randn(shape, { seed });
        keep(tm, { x: xi }, net.forward(xi), `eager at [${shape}]`);
      }
    } finally {
      net.dispose();
      x.dispose();
    }
  }));
});

describe('configuration errors and sizes torchvision refuses', () => {
  const invalidArg = (re) => (e) => e instanceof om.OmError && e.kind === 'InvalidArgument' && re.test(e.message);
  test('MobileNetV2\'s checks are torchvision\'s ValueErrors, as InvalidArgument, and nothing is left made', () => {
    const before = om.memory().tensors;
    assert.throws(() => new MobileNetV2({ invertedResidualSetting: [] }),
      invalidArg(/^inverted_residual_setting should be non-empty or a 4-element list, got \[\]$/));
    assert.throws(() => new MobileNetV2({ invertedResidualSetting: [[1, 16, 1]] }),
      invalidArg(/^inverted_residual_setting should be non-empty or a 4-element list, got \[\[1, 16, 1\]\]$/));
    assert.throws(() => new InvertedResidual(8, 8, 3, 6), invalidArg(/^stride should be 1 or 2 insted of 3$/)); // torchvision's spelling
    assert.throws(() => new MobileNetV2({ width_mult: 0.5 }), invalidArg(/^MobileNetV2: unknown option 'width_mult' \(expected numClasses, /));
    assert.equal(om.memory().tensors, before);
  });

  test('AlexNet below 63 fails as PyTorch does (its third pool\'s input under 3 x 3); MobileNetV2 answers at 1 x 1', () => {
    om.manualSeed(0);
    const net = new (narrowAlexNet(16, 16))({ numClasses: 10 }).eval();
    const small = new NarrowMobileNetV2(64, { widthMult: 0.35, invertedResidualSetting: MOBILENET_V2_SETTING, numClasses: 10 }).eval();
    try { // tidy frees the inputs and the results
      om.tidy(() => {
        assert.throws(() => net.forward(om.zeros([1, 3, 62, 80])), (e) => e instanceof om.OmError && e.kind === 'ShapeMismatch'
          && /^maxPool2d: input \[1,16,2,\d+\] is too small for kernel 3x3/.test(e.message));
        assert.deepEqual(net.forward(om.zeros([1, 3, 63, 80])).shape, [1, 10]);
        assert.deepEqual(small.forward(om.zeros([2, 3, 1, 1])).shape, [2, 10]);
      });
    } finally {
      net.dispose();
      small.dispose();
    }
  });
});
