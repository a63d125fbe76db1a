// The torchvision ports of examples/torchvision/ against torchvision 0.14 itself: each loads the
// state dict PyTorch wrote (tests/js/fixtures/torchvision/, from tools/torchvision_ports.py) with a
// strict loadStateDict, matches PyTorch's outputs eagerly at every fixture size (odd sizes, 1, far
// above the example; Swin's across its window boundaries), and is traced with every axis the
// library traces for it symbolic: batch, H and W for the conv nets and LRASPP; the batch for ViT,
// whose size torchvision asserts; for Swin the batch, and in a second trace the batch with H and W
// declared from 60 (the declaration its refusal names holds too). Each .onnx run in
// onnxruntime-web and each graph in the Session agree with PyTorch at every fixture size the graph
// takes (none of them the traced example) and with the eager port at three more.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, withTraced } from './helpers.mjs';
import { narrowResNet } from './narrow-resnet.mjs';
import { ResNet, BasicBlock, Bottleneck, resnet18 } from '../../examples/torchvision/resnet.mjs';
import { MobileNetV3, InvertedResidual, mobilenetV3Conf, mobilenet_v3_large, mobilenet_v3_small } from '../../examples/torchvision/mobilenetv3.mjs';
import { EfficientNet, MBConv, FusedMBConv, efficientnetConf, MBConvConfig, FusedMBConvConfig, efficientnet_b0 } from '../../examples/torchvision/efficientnet.mjs';
import { ConvNeXt, CNBlockConfig, convnext_tiny } from '../../examples/torchvision/convnext.mjs';
import { SwinTransformer, ShiftedWindowAttention, swin_t } from '../../examples/torchvision/swin_transformer.mjs';
import { VisionTransformer } from '../../examples/torchvision/vision_transformer.mjs';
import { ShuffleNetV2, InvertedResidual as ShuffleUnit, shufflenet_v2_x1_0 } from '../../examples/torchvision/shufflenetv2.mjs';
import { LRASPPHead, lrasppMobilenetV3, lraspp_mobilenet_v3_large } from '../../examples/torchvision/lraspp.mjs';
import { IntermediateLayerGetter, makeDivisible } from '../../examples/torchvision/_utils.mjs';
import * as regnet from '../../examples/torchvision/regnet.mjs';
import { GoogLeNet, BasicConv2d, Inception, InceptionAux, googlenet } from '../../examples/torchvision/googlenet.mjs';
import { MNASNet, InvertedResidual as MnasUnit, stack, roundToMultipleOf, getDepths, mnasnet0_5 } from '../../examples/torchvision/mnasnet.mjs';
import {
  MaxVit, MaxVitBlock, PartitionAttentionLayer, RelativePositionalMultiHeadAttention, maxvit_t,
} from '../../examples/torchvision/maxvit.mjs';
import { VGG, makeLayers } from '../../examples/torchvision/vgg.mjs';
import * as inception from '../../examples/torchvision/inception.mjs';
import { DenseNet } from './no-tidy-models.mjs';

memoryHooks();
const nn = om.nn;
const DIR = new URL('./fixtures/torchvision/', import.meta.url);

/** max |ours - PyTorch| <= TOL * max(1, max |PyTorch|), eagerly and in both engines (the oracle's rule). */
const TOL = 1e-5;

/**
 * tools/torchvision_ports.py's image(shape, seed): element i is
 * ((i * 2654435761 + seed * 40503) mod 2^32 >> 8) / 2^22 - 2, exact in float32.
 */
function image(shape, seed) {
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = (((Math.imul(i, 2654435761 | 0) + seed * 40503) >>> 0) >>> 8) / 2 ** 22 - 2;
  return om.tensor(data, { shape });
}

/** The fixture's expected output as a Tensor. */
const expected = (c) => om.tensor(Float32Array.from(c.output.data), { shape: c.output.shape });

/** The example a conv net is traced at (not a fixture input: fixture seeds start at 1), and its symbolic axes. */
const CONV = [[2, 3, 32, 32], ['batch', null, 'h', 'w']];

/** tools/torchvision_ports.py's NarrowBasicConv2d: GoogLeNet's conv block with every width but the image's divided by 16. */
class NarrowBasicConv2d extends BasicConv2d {
  constructor(inChannels, outChannels, options) {
    super(inChannels === 3 ? 3 : Math.floor(inChannels / 16), Math.floor(outChannels / 16), options);
  }
}

/** tools/torchvision_ports.py's NarrowInceptionConv2d: Inception v3's conv block with every width but the image's divided by 32. */
class NarrowInceptionConv2d extends inception.BasicConv2d {
  constructor(inChannels, outChannels, options) {
    super(inChannels === 3 ? 3 : Math.floor(inChannels / 32), Math.floor(outChannels / 32), options);
  }
}

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

/**
 * Each fixture's model, built with the port as tools/torchvision_ports.py builds torchvision's,
 * then its traces: the example, the axes (a name or om.Dim for a symbolic one), and the smallest
 * size of a symbol whose range narrows to where PyTorch itself fails or is declared (1 for the others).
 */
const MODELS = {
  resnet: [() => new (narrowResNet(16))(BasicBlock, [1, 1, 1, 1], { numClasses: 10 }), CONV],
  resnext: [() => new (narrowResNet(16))(Bottleneck, [1, 2, 1, 1], {
    groups: 2, widthPerGroup: 32, replaceStrideWithDilation: [false, false, true], numClasses: 10,
  }), CONV],
  mobilenet_v3: [() => new MobileNetV3(...mobilenetV3Conf('mobilenet_v3_small', { widthMult: 0.25, reducedTail: true, dilated: true }),
    { numClasses: 10 }), CONV],
  efficientnet_b: [() => {
    const [setting, lastChannel] = efficientnetConf('efficientnet_b0', { widthMult: 0.125, depthMult: 0.25 });
    return new EfficientNet(setting, 0.2, { stochasticDepthProb: 0.2, numClasses: 10, lastChannel });
  }, CONV],
  efficientnet_v2: [() => new EfficientNet([
    new FusedMBConvConfig(1, 3, 1, 8, 8, 2), new FusedMBConvConfig(4, 3, 2, 8, 16, 1),
    new MBConvConfig(4, 3, 2, 16, 16, 2), new MBConvConfig(6, 5, 1, 16, 24, 1),
  ], 0.2, { numClasses: 10, normLayer: (c) => new nn.BatchNorm2d(c, { eps: 1e-3 }), lastChannel: 64 }), CONV],
  convnext: [() => new ConvNeXt([new CNBlockConfig(8, 16, 2), new CNBlockConfig(16, 32, 1), new CNBlockConfig(32, null, 1)],
    { stochasticDepthProb: 0.1, layerScale: 0.5, numClasses: 10 }), [...CONV, { h: 16, w: 16 }]],
  // Swin: batch, H and W symbolic, declared from 60, where the second stage shifts its windows along both
  // sides (below, torchvision's `if window_size >= pad_H: shift = 0` takes the other path).
  swin: [() => new SwinTransformer([4, 4], 16, [2, 2], [2, 4], [7, 7], { stochasticDepthProb: 0.2, numClasses: 10 }),
    [[2, 3, 64, 64], ['batch', null, null, null]],
    [[2, 3, 64, 64], ['batch', null, om.Dim('h', { min: 60 }), om.Dim('w', { min: 60 })], { h: 60, w: 60 }]],
  vit: [() => new VisionTransformer(32, 8, 2, 2, 32, 64, { representationSize: 16, numClasses: 10 }), [[2, 3, 32, 32], ['batch', null, null, null]]],
  shufflenet_v2: [() => new ShuffleNetV2([2, 2, 1], [8, 16, 32, 64, 128], { numClasses: 10 }), CONV],
  regnet: [() => new regnet.RegNet(regnet.BlockParams.fromInitParams(6, 8, 8, 1.5, 4, { seRatio: 0.25 }), { stemWidth: 8, numClasses: 10 }), CONV],
  densenet: [() => new DenseNet({ growthRate: 8, blockConfig: [2, 3, 2], numInitFeatures: 16, bnSize: 2, numClasses: 10 }), [...CONV, { h: 13, w: 13 }]],
  // GoogLeNet narrowed through its own blocks argument, as the tool narrows torchvision's; its ceil-mode
  // pools make PyTorch fail below 15.
  googlenet: [() => {
    const net = new GoogLeNet({
      numClasses: 10, auxLogits: false, transformInput: true, initWeights: false,
      blocks: [NarrowBasicConv2d, (...args) => new Inception(...args, NarrowBasicConv2d), InceptionAux],
    });
    net.fc.dispose();
    net.fc = new nn.Linear(1024 / 16, 10);
    return net;
  }, [...CONV, { h: 15, w: 15 }]],
  // Inception v3 narrowed through its inceptionBlocks argument; its unpadded stem and reductions make PyTorch fail below 75.
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
  // MaxVit runs at the grids of the input size it is built for: the batch alone is symbolic.
  maxvit: [() => new MaxVit([64, 64], 8, 4, [8, 16], [1, 2], 4, 0.2, { numClasses: 10 }), [[2, 3, 64, 64], ['batch', null, null, null]]],
  // VGG-11-BN's layout at widths / 16: five 2x2 pools, so PyTorch fails below 32; the 7x7 adaptive pool from any size.
  vgg: [() => new (narrowVGG(32, 16))(makeLayers([4, 'M', 8, 'M', 16, 16, 'M', 32, 32, 'M', 32, 32, 'M'], true), { numClasses: 10, initWeights: false }),
    [...CONV, { h: 32, w: 32 }]],
  lraspp: [() => {
    const net = lrasppMobilenetV3(new MobileNetV3(...mobilenetV3Conf('mobilenet_v3_small', { widthMult: 0.25, reducedTail: true, dilated: true })), 2);
    const { low_classifier: low, cbr } = net.classifier;
    const head = new LRASPPHead(low.inChannels, cbr.at(0).inChannels, 2, 16); // inter_channels 16, as the fixture's
    net.classifier.dispose();
    net.classifier = head;
    return net;
  }, CONV],
};

/**
 * The Shape nodes a conv net writes with symbolic height and width: none, except where a size is
 * computed at run time. LRASPP upsamples to the input's own height and width (read from it: no
 * expression of the feature map's gives it); Swin pads each stage's map up to whole windows and
 * views it as windows: the pads ((7 - H' % 7) % 7) and the window counts are computed from the
 * input's height and width (three Shape reads of x, one per slice of its shape they take).
 * ShuffleNet's channel shuffle ([B, C, H, W] viewed as [B, g, C / g, H, W] and back) is Unsqueeze,
 * Reshape with 0 where H and W stay, Squeeze; ConvNeXt's Linear on [B, H', W', C] is MatMul, its
 * range narrowed to h, w from 16 (where PyTorch fails below) before the graph is written, so no
 * leading axis can be empty. VGG pools its features to 7 x 7 adaptively: each output cell's window
 * is computed from the feature map's height and width (one Shape read for each).
 */
const SHAPES = { lraspp: 2, swin: 3, vgg: 2 };

/** A model's output to compare: the segmentation model's { out }, else the logits. */
const outputOf = (y) => (y instanceof om.Tensor ? y : y.out);

describe('torchvision ports against torchvision 0.14', () => {
  for (const [name, [build, ...traces]] of Object.entries(MODELS)) {
    const fx = JSON.parse(readFileSync(new URL(`${name}.json`, DIR), 'utf8'));
    test(`${name}: ${fx.model}`, (t) => withTraced((keep, trace) => {
      om.manualSeed(0);
      const net = build();
      try {
        const { tensors } = om.safetensors.load(readFileSync(new URL(`${name}.safetensors`, DIR)));
        assert.deepEqual(Object.keys(tensors).sort(), [...fx.keys].sort(), 'the file holds the state dict');
        assert.deepEqual(Object.keys(net.stateDict()), fx.keys, 'state-dict keys, in PyTorch\'s order');
        assert.deepEqual(net.loadStateDict(tensors), { missingKeys: [], unexpectedKeys: [] });
        om.dispose(Object.values(tensors));
        net.eval();
        const errs = fx.cases.map((c) => {
          const y = outputOf(net.forward(image(c.shape, c.seed)));
          const ref = c.output.data;
          assert.deepEqual(y.shape, c.output.shape, `output shape at [${c.shape}]`);
          const a = y.toArray();
          const err = Math.max(...ref.map((v, i) => Math.abs(a[i] - v)));
          const bound = TOL * Math.max(1, ...ref.map(Math.abs));
          assert.ok(err <= bound, `eager at [${c.shape}]: max |ours - PyTorch| = ${err} > ${bound}`);
          return err / bound * TOL;
        });
        t.diagnostic(`eager max |ours - PyTorch| / max(1, max |PyTorch|) per size: ${errs.map((e) => e.toExponential(1)).join(', ')}`);
        for (const [example, axes, mins = {}] of traces) {
          const tm = trace(net, { x: [image(example, 0), axes] });
          const shapes = tm.graph().nodes.filter((n) => n.opType === 'Shape').length;
          t.diagnostic(`traced with axes [${axes.map((a) => a?.name ?? a)}]: ${tm.graph().nodes.length} nodes, ${shapes} Shape`);
          if (axes[2] && axes[3]) assert.equal(shapes, SHAPES[name] ?? 0, 'Shape nodes with symbolic height and width');
          // Every symbol holds from 1, except where PyTorch itself fails below a size (ConvNeXt below 16,
          // DenseNet below 13) or a declaration says (Swin's H).
          const sym = axes.map((a) => (a === null ? null : typeof a === 'string' ? a : a.name)); // each dim's symbol
          assert.deepEqual(Object.fromEntries(tm.symbols.map((s) => [s.name, s.min])),
            Object.fromEntries(sym.filter(Boolean).map((a) => [a, mins[a] ?? 1])), 'the sizes the graph holds from');
          // Every case the graph takes: all of them, unless an axis the trace fixes differs or a size is below its range.
          const fits = (c) => c.shape.every((n, d) => (sym[d] === null ? n === example[d] : n >= (mins[sym[d]] ?? 1)));
          const cases = fx.cases.filter(fits);
          assert.ok(cases.length >= 3, `${cases.length} fixture cases for the trace at [${example}]`);
          for (const c of cases) keep(tm, { x: image(c.shape, c.seed) }, expected(c), `PyTorch at [${c.shape}]`);
        }
      } finally {
        net.dispose();
      }
    }));
  }
});

describe('Swin with symbolic H and W undeclared', () => {
  test('refused where the shift turns off below the example, with declarations under which it traces', () => withTraced((keep, trace) => {
    om.manualSeed(0);
    const net = new SwinTransformer([4, 4], 16, [2, 2], [2, 4], [7, 7], { numClasses: 10 }).eval();
    try {
      const x = image([2, 3, 64, 64], 0);
      let message = '';
      assert.throws(() => om.trace(net, { x: [x, ['batch', null, 'h', 'w']] }), (e) => e instanceof om.TraceError
        && e.kind === 'SymbolicShape' && /the graph holds for the sizes (om\.Dim\('\w+', \{ min: \d+ \}\)(, )?)+ declares/.test(message = e.message));
      const mins = Object.fromEntries([...message.matchAll(/om\.Dim\('(\w+)', \{ min: (\d+) \}\)/g)].map(([, n, v]) => [n, Number(v)]));
      assert.ok(mins.h > 1 && mins.h <= 64 && mins.w > 1 && mins.w <= 64, message);
      const tm = trace(net, { x: [x, ['batch', null, 'h', 'w'].map((a) => (a && mins[a] ? om.Dim(a, { min: mins[a] }) : a))] });
      assert.deepEqual(tm.symbols.map((s) => [s.name, s.min]), ['batch', 'h', 'w'].map((n) => [n, mins[n] ?? 1]));
      const b = mins.batch ?? 1; // the smallest sizes declared, odd ones, and far above
      for (const [shape, seed] of [[[b, 3, mins.h, mins.w], 3], [[b + 1, 3, 71, 97], 4], [[b, 3, 130, 65], 5]]) {
        const xi = image(shape, seed);
        keep(tm, { x: xi }, net.forward(xi), `eager at [${shape}]`);
      }
    } finally {
      net.dispose();
    }
  }));
});

describe('the builders at full size', () => {
  const builders = JSON.parse(readFileSync(new URL('builders.json', DIR), 'utf8'));
  const BUILDERS = {
    resnet18, mobilenet_v3_large, mobilenet_v3_small, efficientnet_b0, shufflenet_v2_x1_0, lraspp_mobilenet_v3_large, convnext_tiny, swin_t,
    regnet_y_400mf: regnet.regnet_y_400mf, regnet_x_400mf: regnet.regnet_x_400mf, googlenet, mnasnet0_5, maxvit_t,
  };
  for (const [name, keys] of Object.entries(builders)) {
    test(`${name}: torchvision's state-dict keys and shapes, in order`, () => {
      const net = BUILDERS[name]();
      try {
        assert.deepEqual(Object.entries(net.stateDict()).map(([k, t]) => [k, t.shape]), keys);
      } finally {
        net.dispose();
      }
    });
  }
});

test('RegNet: BlockParams.fromInitParams gives torchvision\'s stages for every builder\'s arguments', () => {
  const fx = JSON.parse(readFileSync(new URL('regnet.json', DIR), 'utf8'));
  assert.equal(Object.keys(fx.block_params).length, 15);
  for (const [name, { args: [depth, w0, wA, wM, groupWidth, seRatio], depths, widths, group_widths: groupWidths }] of Object.entries(fx.block_params)) {
    const p = regnet.BlockParams.fromInitParams(depth, w0, wA, wM, groupWidth, { seRatio });
    assert.deepEqual([p.depths, p.widths, p.groupWidths, p.seRatio], [depths, widths, groupWidths, seRatio], name);
  }
});

describe('configuration errors are torchvision\'s, as InvalidArgument', () => {
  const invalidArg = (re) => (e) => e instanceof om.OmError && e.kind === 'InvalidArgument' && re.test(e.message);
  test('each port checks its configuration before it makes anything', () => {
    const before = om.memory().tensors;
    assert.throws(() => new ResNet(BasicBlock, [1, 1, 1, 1], { numClass: 10 }), invalidArg(/ResNet: unknown option 'numClass' \(expected numClasses, /));
    assert.throws(() => new ResNet(BasicBlock, [1, 1, 1, 1], { replaceStrideWithDilation: [false] }),
      invalidArg(/replace_stride_with_dilation should be None or a 3-element tuple, got false/));
    assert.throws(() => new BasicBlock(8, 8, 1, null, 2), invalidArg(/BasicBlock only supports groups=1 and base_width=64/));
    assert.throws(() => new BasicBlock(8, 8, 1, null, 1, 64, 2), invalidArg(/Dilation > 1 not supported in BasicBlock/));
    assert.throws(() => new MobileNetV3([], 16), invalidArg(/The inverted_residual_setting should not be empty/));
    assert.throws(() => new MobileNetV3([{}], 16), invalidArg(/should be List\[InvertedResidualConfig\]/));
    const [setting] = mobilenetV3Conf('mobilenet_v3_small', { widthMult: 0.25 });
    assert.throws(() => new InvertedResidual(Object.assign(setting[0], { stride: 3 }), nn.BatchNorm2d), invalidArg(/illegal stride value/));
    assert.throws(() => mobilenetV3Conf('mobilenet_v3_medium'), invalidArg(/Unsupported model type mobilenet_v3_medium/));
    assert.throws(() => mobilenetV3Conf('mobilenet_v3_small', { width: 1 }), invalidArg(/mobilenetV3Conf: unknown option 'width'/));
    assert.throws(() => new EfficientNet([], 0.2), invalidArg(/The inverted_residual_setting should not be empty/));
    assert.throws(() => new EfficientNet([new CNBlockConfig(8, null, 1)], 0.2), invalidArg(/should be List\[MBConvConfig\]/));
    assert.throws(() => new MBConv(new MBConvConfig(1, 3, 3, 8, 8, 1), 0, nn.BatchNorm2d), invalidArg(/illegal stride value/));
    assert.throws(() => new FusedMBConv(new FusedMBConvConfig(1, 3, 0, 8, 8, 1), 0, nn.BatchNorm2d), invalidArg(/illegal stride value/));
    assert.throws(() => efficientnetConf('efficientnet_c0'), invalidArg(/Unsupported model type efficientnet_c0/));
    assert.throws(() => new ConvNeXt([]), invalidArg(/The block_setting should not be empty/));
    assert.throws(() => new ConvNeXt([new MBConvConfig(1, 3, 1, 8, 8, 1)]), invalidArg(/should be List\[CNBlockConfig\]/));
    assert.throws(() => new ShiftedWindowAttention(8, [7], [0, 0], 2), invalidArg(/window_size and shift_size must be of length 2/));
    assert.throws(() => new SwinTransformer([4, 4], 8, [1], [1], [7, 7], 'options'), invalidArg(/SwinTransformer: options must be an object/));
    assert.throws(() => new VisionTransformer(30, 8, 1, 1, 8, 8), invalidArg(/Input shape indivisible by patch size!/));
    assert.throws(() => new ShuffleNetV2([1, 1], [8, 16, 32, 64, 128]), invalidArg(/expected stages_repeats as list of 3 positive ints/));
    assert.throws(() => new ShuffleNetV2([1, 1, 1], [8, 16, 32, 64]), invalidArg(/expected stages_out_channels as list of 5 positive ints/));
    assert.throws(() => new ShuffleUnit(8, 8, 4), invalidArg(/illegal stride value/));
    assert.throws(() => new ShuffleUnit(8, 12, 1), invalidArg(/Invalid combination of stride 1, inp 8 and oup 12 values/));
    assert.throws(() => regnet.BlockParams.fromInitParams(6, 12, 8, 1.5, 4), invalidArg(/^Invalid RegNet settings$/));
    assert.throws(() => regnet.BlockParams.fromInitParams(6, 8, 8, 1, 4), invalidArg(/^Invalid RegNet settings$/));
    assert.throws(() => new regnet.RegNet({ widths: [8] }), invalidArg(/RegNet: block_params must be a BlockParams/));
    assert.throws(() => new IntermediateLayerGetter(new nn.Sequential(), { 3: 'out' }), invalidArg(/return_layers are not present in model/));
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

  test('ViT refuses other image sizes (torchvision asserts them); traced with a symbolic height, it holds at 16 alone', () => om.tidy(() => {
    const net = new VisionTransformer(16, 8, 1, 1, 8, 8, { numClasses: 2 }).eval();
    try {
      assert.throws(() => net.forward(om.zeros([1, 3, 16, 24])), invalidArg(/Wrong image width! Expected 16 but got 24!/));
      assert.throws(() => net.forward(om.zeros([1, 3, 8, 16])), invalidArg(/Wrong image height! Expected 16 but got 8!/));
      assert.throws(() => net.encoder.forward(om.zeros([5, 8])), invalidArg(/Expected \(batch_size, seq_length, hidden_dim\) got \[5,8\]/));
      assert.throws(() => net.encoder.layers.encoder_layer_0.forward(om.zeros([5, 8])), invalidArg(/Expected \(batch_size, seq_length, hidden_dim\) got \[5,8\]/));
      const tm = om.trace(net, { x: [om.zeros([2, 3, 16, 16]), [null, null, 'h', null]] });
      assert.deepEqual([tm.symbols[0].min, tm.symbols[0].max], [16, 16]);
      assert.match(tm.symbols[0].narrowedBy, /the model fails \(Wrong image height! Expected 16 but got \d+!\)$/);
      tm.dispose();
    } finally {
      net.dispose();
    }
  }));

  test('MNASNet\'s getDepths is torchvision\'s _get_depths (its _round_to_multiple_of rounding)', () => {
    // alpha -> what torchvision 0.14's _get_depths returns
    for (const [alpha, want] of [[0.05, [8, 8, 8, 8, 8, 8, 16, 16]], [0.5, [16, 8, 16, 24, 40, 48, 96, 160]],
      [0.75, [24, 16, 24, 32, 64, 72, 144, 240]], [1.3, [40, 24, 32, 56, 104, 128, 248, 416]]]) {
      assert.deepEqual(getDepths(alpha), want, `_get_depths(${alpha})`);
    }
  });

  test('makeDivisible is torchvision\'s _make_divisible', () => {
    // (v, divisor, min_value) -> what torchvision 0.14's _make_divisible returns
    for (const [v, d, m, want] of [[16 * 0.25, 8, null, 8], [60, 8, null, 64], [10, 8, null, 16], [100, 8, null, 104], [3, 8, 1, 9], [37, 4, null, 36]]) {
      assert.equal(makeDivisible(v, d, m), want, `_make_divisible(${v}, ${d}, ${m})`);
    }
  });
});
