// The torchvision ports of examples/torchvision/ against torchvision 0.14 itself: each loads the
// state dict PyTorch wrote (tests/js/fixtures/torchvision/, from tools/torchvision_ports.py) with a
// strict loadStateDict, matches PyTorch's outputs eagerly at every fixture size (odd sizes, 1, far
// above the example; Swin's across its window boundaries), and is traced with every axis the
// library traces for it symbolic: batch, H and W for the conv nets and LRASPP; the batch for ViT,
// whose size torchvision asserts; for Swin the batch, and in a second trace the batch with H and W
// declared from 60 (the declaration its refusal names holds too). Each .onnx run in
// onnxruntime-web and each graph in the Session agree with PyTorch at every fixture size the graph
// takes (none of them the traced example) and with the eager port at three more. The ports added
// later (GoogLeNet, Inception v3, MNASNet, MaxViT, VGG) are checked the same way in
// torchvision-ports-2.test.mjs (tests/js/torchvision-ports.mjs holds the check).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, withTraced } from './helpers.mjs';
import { suggestedDims } from './random/runner.mjs';
import { narrowResNet } from './narrow-resnet.mjs';
import { ResNet, BasicBlock, Bottleneck, resnet18 } from '../../examples/torchvision/resnet.mjs';
import { MobileNetV3, InvertedResidual, mobilenetV3Conf, mobilenet_v3_large, mobilenet_v3_small } from '../../examples/torchvision/mobilenetv3.mjs';
import { EfficientNet, MBConv, FusedMBConv, efficientnetConf, MBConvConfig, FusedMBConvConfig, efficientnet_b0 } from '../../examples/torchvision/efficientnet.mjs';
import { ConvNeXt, CNBlockConfig, convnext_tiny } from '../../examples/torchvision/convnext.mjs';
import { SwinTransformer, ShiftedWindowAttention, swin_t, SwinTransformerBlockV2, PatchMergingV2, swin_v2_t } from '../../examples/torchvision/swin_transformer.mjs';
import { VisionTransformer } from '../../examples/torchvision/vision_transformer.mjs';
import { ShuffleNetV2, InvertedResidual as ShuffleUnit, shufflenet_v2_x1_0 } from '../../examples/torchvision/shufflenetv2.mjs';
import { LRASPPHead, lrasppMobilenetV3, lraspp_mobilenet_v3_large } from '../../examples/torchvision/lraspp.mjs';
import { IntermediateLayerGetter, makeDivisible } from '../../examples/torchvision/_utils.mjs';
import * as regnet from '../../examples/torchvision/regnet.mjs';
import { googlenet } from '../../examples/torchvision/googlenet.mjs';
import { mnasnet0_5 } from '../../examples/torchvision/mnasnet.mjs';
import { maxvit_t } from '../../examples/torchvision/maxvit.mjs';
import { DenseNet } from '../../examples/torchvision/densenet.mjs';
import { DIR, CONV, image, describePorts, describeBuilders } from './torchvision-ports.mjs';

memoryHooks();
const nn = om.nn;

/**
 * Each fixture's model, built with the port as tools/torchvision_ports.py builds torchvision's,
 * then its traces: the example, the axes (a name or om.Dim for a symbolic one), and the smallest
 * size of a symbol whose range narrows to where PyTorch itself fails or is declared (1 for the others).
 */
const MODELS = {  resnet: [() => new (narrowResNet(16))(BasicBlock, [1, 1, 1, 1], { numClasses: 10 }), CONV],
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
  // Swin V2 at window 8: H and W declared from 68, where the second stage shifts (9 tokens padded to 16).
  swin_v2: [() => new SwinTransformer([4, 4], 16, [2, 2], [2, 4], [8, 8], {
    stochasticDepthProb: 0.2, numClasses: 10, block: SwinTransformerBlockV2, downsampleLayer: PatchMergingV2,
  }), [[2, 3, 64, 64], ['batch', null, null, null]],
  [[2, 3, 80, 80], ['batch', null, om.Dim('h', { min: 68 }), om.Dim('w', { min: 68 })], { h: 68, w: 68 }]],
  vit: [() => new VisionTransformer(32, 8, 2, 2, 32, 64, { representationSize: 16, numClasses: 10 }), [[2, 3, 32, 32], ['batch', null, null, null]]],
  shufflenet_v2: [() => new ShuffleNetV2([2, 2, 1], [8, 16, 32, 64, 128], { numClasses: 10 }), CONV],
  regnet: [() => new regnet.RegNet(regnet.BlockParams.fromInitParams(6, 8, 8, 1.5, 4, { seRatio: 0.25 }), { stemWidth: 8, numClasses: 10 }), CONV],
  densenet: [() => new DenseNet({ growthRate: 8, blockConfig: [2, 3, 2], numInitFeatures: 16, bnSize: 2, numClasses: 10 }), [...CONV, { h: 13, w: 13 }]],
  // GoogLeNet narrowed through its own blocks argument, as the tool narrows torchvision's; its ceil-mode
  // pools make PyTorch fail below 15.
  // Inception v3 narrowed through its inceptionBlocks argument; its unpadded stem and reductions make PyTorch fail below 75.
  // MaxVit runs at the grids of the input size it is built for: the batch alone is symbolic.
  // VGG-11-BN's layout at widths / 16: five 2x2 pools, so PyTorch fails below 32; the 7x7 adaptive pool from any size.
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
 * leading axis can be empty.
 */
const SHAPES = { lraspp: 2, swin: 3, swin_v2: 3 };

describePorts(MODELS, SHAPES);

describe('Swin with symbolic H and W undeclared', () => {
  // The trace cuts on one side at 60; the piece below is cut again at each size where the second
  // stage's padded side moves (56, 52, ...) until it is refused as one piece; the piece above, a
  // trace of its own, held with the other side from 60 too (the second stage shifts along both),
  // so the refusal names both, in one round: pasted, the declaration traces, right there.
  test('refused where the shift turns off below the example, naming the whole declaration under which it traces', () => withTraced((keep, trace) => {
    om.manualSeed(0);
    const net = new SwinTransformer([4, 4], 16, [2, 2], [2, 4], [7, 7], { numClasses: 10 }).eval();
    try {
      const x = image([2, 3, 64, 64], 0);
      let dims;
      assert.throws(() => om.trace(net, { x: [x, ['batch', null, 'h', 'w']] }), (e) => {
        assert.ok(e instanceof om.TraceError && e.kind === 'SymbolicShape', String(e));
        assert.match(e.message, /^trace: the model changes at a size threshold of '[hw]' \(at 60\), and the piece below it \(traced at [hw]=59\) is refused: /);
        ({ dims } = suggestedDims(e.message));
        assert.deepEqual(Object.fromEntries([...dims].map(([n, d]) => [n, [d.min, d.max]])), { h: [60, Infinity], w: [60, Infinity] }, e.message);
        return true;
      });
      const axes = () => ['batch', null, dims.get('h'), dims.get('w')];
      const tm = trace(net, { x: [x, axes()] });
      // by name: the order traced.symbols lists them in is not what this test checks
      assert.deepEqual(Object.fromEntries(tm.symbols.map((s) => [s.name, s.min])), { batch: 1, h: 60, w: 60 });
      // the smallest sizes declared, odd ones, and far above
      for (const [shape, seed] of [[[1, 3, 60, 60], 3], [[2, 3, 71, 97], 4], [[1, 3, 130, 65], 5]]) {
        const xi = image(shape, seed);
        keep(tm, { x: xi }, net.forward(xi), `eager at [${shape}]`);
      }
    } finally {
      net.dispose();
    }
  }));
});

describeBuilders('builders.json', {
  resnet18, mobilenet_v3_large, mobilenet_v3_small, efficientnet_b0, shufflenet_v2_x1_0, lraspp_mobilenet_v3_large, convnext_tiny, swin_t,
  regnet_y_400mf: regnet.regnet_y_400mf, regnet_x_400mf: regnet.regnet_x_400mf, googlenet, mnasnet0_5, maxvit_t, swin_v2_t,
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
    assert.throws(() => new SwinTransformerBlockV2(8, 2, [8, 8], [0, 0], { attnlayer: null }), invalidArg(/SwinTransformerBlockV2: unknown option 'attnlayer'/));
    assert.throws(() => new VisionTransformer(30, 8, 1, 1, 8, 8), invalidArg(/Input shape indivisible by patch size!/));
    assert.throws(() => new ShuffleNetV2([1, 1], [8, 16, 32, 64, 128]), invalidArg(/expected stages_repeats as list of 3 positive ints/));
    assert.throws(() => new ShuffleNetV2([1, 1, 1], [8, 16, 32, 64]), invalidArg(/expected stages_out_channels as list of 5 positive ints/));
    assert.throws(() => new ShuffleUnit(8, 8, 4), invalidArg(/illegal stride value/));
    assert.throws(() => new ShuffleUnit(8, 12, 1), invalidArg(/Invalid combination of stride 1, inp 8 and oup 12 values/));
    assert.throws(() => regnet.BlockParams.fromInitParams(6, 12, 8, 1.5, 4), invalidArg(/^Invalid RegNet settings$/));
    assert.throws(() => regnet.BlockParams.fromInitParams(6, 8, 8, 1, 4), invalidArg(/^Invalid RegNet settings$/));
    assert.throws(() => new regnet.RegNet({ widths: [8] }), invalidArg(/RegNet: block_params must be a BlockParams/));
    assert.throws(() => new IntermediateLayerGetter(new nn.Sequential(), { 3: 'out' }), invalidArg(/return_layers are not present in model/));
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

  test('makeDivisible is torchvision\'s _make_divisible', () => {
    // (v, divisor, min_value) -> what torchvision 0.14's _make_divisible returns
    for (const [v, d, m, want] of [[16 * 0.25, 8, null, 8], [60, 8, null, 64], [10, 8, null, 16], [100, 8, null, 104], [3, 8, 1, 9], [37, 4, null, 36]]) {
      assert.equal(makeDivisible(v, d, m), want, `_make_divisible(${v}, ${d}, ${m})`);
    }
  });
});
