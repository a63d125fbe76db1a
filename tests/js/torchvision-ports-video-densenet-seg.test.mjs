// The torchvision ports of video ResNets (R3D, R(2+1)D: Conv3d, BatchNorm3d, AdaptiveAvgPool3d),
// SqueezeNet and the DeepLabV3 and FCN segmentation models (examples/torchvision/) against
// torchvision 0.14 itself, checked as tests/js/torchvision-ports.test.mjs checks the first ports
// (tests/js/torchvision-ports.mjs): each loads PyTorch's state dict strictly, matches it eagerly at
// every fixture size, and is traced with symbolic batch, H and W (the video nets' frame count
// too) and agrees in onnxruntime-web and the Session at sizes the trace never saw. Then
// DenseNet's old-checkpoint keys, the full-size builders' state-dict keys, the configuration errors.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, withTraced, checkPyTorchCase, gradcheck, throwsKind, vals, near } from './helpers.mjs';
import { narrowResNet } from './narrow-resnet.mjs';
import { Bottleneck as ResNetBottleneck } from '../../examples/torchvision/resnet.mjs';
import { MobileNetV3, mobilenetV3Conf } from '../../examples/torchvision/mobilenetv3.mjs';
import * as video from '../../examples/torchvision/video_resnet.mjs';
import { SqueezeNet, Fire, squeezenet1_0, squeezenet1_1 } from '../../examples/torchvision/squeezenet.mjs';
import { DenseNet, legacyStateDict, densenet121 } from '../../examples/torchvision/densenet.mjs';
import * as seg from '../../examples/torchvision/segmentation.mjs';
import { IntermediateLayerGetter } from '../../examples/torchvision/_utils.mjs';
import { DIR, CONV, image, describePorts, describeBuilders } from './torchvision-ports.mjs';

memoryHooks();
const nn = om.nn;
const F = () => nn.functional;

// ---- the 3-D ops the video nets need: conv3d, conv_transpose3d and the 3-D pools (op rows;
// adaptive_avg_pool3d two 2-D adaptive pools) ----

const OPS = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/conv_pools_3d.json', import.meta.url), 'utf8'));

/** A conv_pools_3d.json case's call (tools/pytorch_composites.py's conv_pools_3d). */
function call3d(c, xs) {
  const { kernelSize, outputSize, bias, ...o } = c.args;
  if (c.op === 'conv3d' || c.op === 'convTranspose3d') return F()[c.op](xs[0], xs[1], bias ? xs[2] : null, o);
  if (c.op === 'adaptiveAvgPool3d') return F().adaptiveAvgPool3d(xs[0], outputSize);
  return F()[c.op](xs[0], kernelSize, Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null)));
}

describe('conv3d, conv_transpose3d and the 3-D pools against PyTorch', () => {
  for (const [k, c] of OPS.cases.entries()) {
    test(`${c.op} ${JSON.stringify(c.args)} on [${c.inputs[0].shape}] (case ${k})`, () => om.tidy(() => checkPyTorchCase(c, (xs) => call3d(c, xs))));
  }

  test('backward by central differences: conv3d (input, weight, bias; strided, padded, dilated, grouped) and the pools', () => om.tidy(() => {
    const x = om.randn([1, 2, 3, 4, 3], { seed: 11 }), w = om.randn([2, 1, 2, 3, 2], { seed: 12 }), b = om.randn([2], { seed: 13 });
    gradcheck((a, ww, bb) => F().conv3d(a, ww, bb, { stride: [2, 1, 1], padding: [1, 1, 0], dilation: [1, 1, 2], groups: 2 }), x, w, b);
    const xt = om.randn([1, 2, 2, 3, 2], { seed: 15 }), wt = om.randn([2, 2, 2, 2, 3], { seed: 16 }), bt = om.randn([4], { seed: 17 });
    gradcheck((a, ww, bb) => F().convTranspose3d(a, ww, bb, { stride: [2, 1, 2], padding: [1, 0, 1], outputPadding: [1, 0, 1], dilation: [1, 2, 1], groups: 2 }),
      xt, wt, bt);
    const y = () => om.randn([1, 2, 3, 4, 5], { seed: 14 }); // a new leaf each: gradcheck accumulates into .grad
    gradcheck((a) => F().maxPool3d(a, [2, 3, 2], { stride: [1, 2, 2], padding: [1, 1, 0], ceilMode: true }), y());
    gradcheck((a) => F().avgPool3d(a, 2, { stride: [1, 2, 2], padding: 1, countIncludePad: false }), y());
    gradcheck((a) => F().adaptiveAvgPool3d(a, [2, null, 3]), y());
  }));

  test('the same bits as natively: the hash tests/c/test_conv.c pins for the same calls', () => om.tidy(() => {
    const x = om.randn([1, 3, 5, 6, 7], { seed: 41 }), w = om.randn([4, 3, 3, 2, 3], { seed: 42 });
    const b = om.randn([4], { seed: 43 }), wt = om.randn([3, 2, 2, 3, 2], { seed: 44 });
    const ys = [
      F().conv3d(x, w, b, { stride: [1, 2, 1], padding: [1, 0, 1], dilation: [2, 1, 1] }),
      F().convTranspose3d(x, wt, null, { stride: [2, 1, 2], padding: [0, 1, 1], outputPadding: [1, 0, 1] }),
      F().maxPool3d(x, [2, 3, 3], { stride: [1, 2, 2], padding: 1, ceilMode: true }),
      F().avgPool3d(x, [3, 2, 3], { stride: [2, 1, 2], padding: 1, ceilMode: true, countIncludePad: false }),
      F().adaptiveAvgPool3d(x, [3, 4, 5]),
    ];
    let h = 0xcbf29ce484222325n;
    for (const y of ys) for (const v of new Uint8Array(y.toArray().buffer)) h = ((h ^ BigInt(v)) * 0x100000001b3n) & 0xffffffffffffffffn;
    assert.equal(h.toString(16), 'c701fa7068087a87');
  }));

  test('modules: Conv3d, BatchNorm3d, MaxPool3d, AvgPool3d, AdaptiveAvgPool3d are the functions with their parameters and options', () => om.tidy(() => {
    om.manualSeed(3);
    const x = om.randn([2, 4, 5, 6, 7], { seed: 1 });
    const same = (a, b) => near(vals(a), vals(b), 0, 'module');
    const tconv = new nn.ConvTranspose3d(4, 2, [2, 3, 1], { stride: [2, 1, 1], outputPadding: [1, 0, 0], bias: false });
    try {
      assert.deepEqual(Object.entries(tconv.stateDict()).map(([k, t]) => [k, t.shape]), [['weight', [4, 2, 2, 3, 1]]]);
      same(tconv.forward(x), F().convTranspose3d(x, tconv.weight, null, { stride: [2, 1, 1], outputPadding: [1, 0, 0] }));
      assert.deepEqual(tconv.forward(x).shape, [2, 2, 11, 8, 7]);
    } finally {
      tconv.dispose();
    }
    const conv = new nn.Conv3d(4, 6, [3, 1, 3], { stride: [1, 2, 1], padding: [1, 0, 'same'.length - 3], groups: 2 });
    try {
      assert.deepEqual(Object.entries(conv.stateDict()).map(([k, t]) => [k, t.shape]), [['weight', [6, 2, 3, 1, 3]], ['bias', [6]]]);
      same(conv.forward(x), F().conv3d(x, conv.weight, conv.bias, { stride: [1, 2, 1], padding: [1, 0, 1], groups: 2 }));
    } finally {
      conv.dispose();
    }
    const bn = new nn.BatchNorm3d(4).eval();
    try {
      assert.deepEqual(Object.keys(bn.stateDict()), ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']);
      same(bn.forward(x), F().batchNorm(x, bn.running_mean, bn.running_var, { weight: bn.weight, bias: bn.bias }));
      throwsKind(() => bn.forward(om.ones([2, 4, 3, 3])), 'InvalidArgument', /BatchNorm3d: expected 5D input \(got 4D input\)/);
    } finally {
      bn.dispose();
    }
    same(new nn.MaxPool3d(3, { stride: 2, padding: 1, ceilMode: true }).forward(x), F().maxPool3d(x, 3, { stride: 2, padding: 1, ceilMode: true }));
    same(new nn.AvgPool3d([2, 3, 2], { countIncludePad: false, padding: [1, 1, 0] }).forward(x),
      F().avgPool3d(x, [2, 3, 2], { countIncludePad: false, padding: [1, 1, 0] }));
    near(vals(new nn.AdaptiveAvgPool3d([1, 1, 1]).forward(x)), vals(x.mean([2, 3, 4], true)), 1e-6, 'the mean (summed in another order)');
    same(new nn.AdaptiveAvgPool3d([null, 2, null]).forward(x), F().adaptiveAvgPool3d(x, [5, 2, 7]));
    assert.deepEqual(F().maxPool3d(om.randn([4, 5, 6, 7], { seed: 2 }), 2).shape, [4, 2, 3, 3]); // unbatched
  }));

  test('argument errors name the op and the values', () => om.tidy(() => {
    const x = om.randn([1, 2, 3, 4, 4], { seed: 1 }), w = om.randn([3, 2, 3, 3, 3], { seed: 2 });
    throwsKind(() => F().conv3d(x, om.ones([3, 2, 3, 3])), 'ShapeMismatch', /^conv3d: weight \[3,2,3,3\] must have 5 dims$/);
    throwsKind(() => F().conv3d(om.ones([2, 3, 4]), w), 'ShapeMismatch',
      /^conv3d: input \[2,3,4\] must have 5 dims \(\[N, C, D, H, W\]; the functions also take it without N\)$/);
    throwsKind(() => F().conv3d(x, om.ones([3, 2, 5, 3, 3])), 'ShapeMismatch',
      /^conv3d: kernel size \[3,2,5,3,3\] \(dilated 5x3x3\) is larger than the padded input \[1,2,3,4,4\] \(padding 0, 0, 0\)$/);
    throwsKind(() => F().conv3d(x, w, null, { stride: [1, 0, 1] }), 'InvalidArgument', /^conv3d: stride must be positive, got 0$/);
    throwsKind(() => F().conv3d(x, w, null, { dilation: [1, 1, 0] }), 'InvalidArgument', /^conv3d: dilation must be positive, got 0$/);
    throwsKind(() => F().conv3d(x, w, null, { padding: [0, -1, 0] }), 'InvalidArgument', /^conv3d: padding must be non-negative, got -1$/);
    throwsKind(() => F().conv3d(x, w, null, { padding: [1, 1] }), 'InvalidArgument', /conv3d: padding must be an integer or 3 integers, got 2/);
    throwsKind(() => F().conv3d(x, w, null, { padding: 'same', stride: 2 }), 'InvalidArgument', /^conv3d: padding 'same' needs stride 1, got stride \[2,2,2\]$/);
    throwsKind(() => F().conv3d(x, w, null, { groups: 2 }), 'InvalidArgument', /^conv3d: groups 2 does not divide the 3 output channels of weight \[3,2,3,3,3\]$/);
    throwsKind(() => F().conv3d(x, om.ones([4, 1, 3, 3, 3])), 'ShapeMismatch',
      /^conv3d: input \[1,2,3,4,4\] has 2 channels, weight \[4,1,3,3,3\] expects 1 \(weight.shape\[1\] \* groups\)$/);
    throwsKind(() => F().conv3d(x, w, om.ones([2])), 'ShapeMismatch', /^conv3d: bias \[2\] must be \[3\]$/);
    throwsKind(() => F().convTranspose3d(x, om.ones([2, 3, 2, 2, 2]), null, { stride: 2, outputPadding: [0, 2, 0] }), 'InvalidArgument',
      /^convTranspose3d: output_padding 2 must be smaller than either stride \(2\) or dilation \(1\)$/);
    throwsKind(() => F().convTranspose3d(x, om.ones([3, 3, 2, 2, 2])), 'ShapeMismatch',
      /^convTranspose3d: input \[1,2,3,4,4\] has 2 channels, weight \[3,3,2,2,2\] expects 3 \(weight.shape\[0\]\)$/);
    throwsKind(() => F().convTranspose3d(x, om.ones([2, 3, 1, 1, 1]), null, { padding: [2, 0, 0] }), 'ShapeMismatch',
      /^convTranspose3d: input \[1,2,3,4,4\] with weight \[2,3,1,1,1\] and padding \(2, 0, 0\) gives an empty output \(-1x4x4\)$/);
    throwsKind(() => F().maxPool3d(om.ones([2, 3, 4]), 2), 'ShapeMismatch',
      /^maxPool3d: input \[2,3,4\] must have 5 dims \(\[N, C, D, H, W\]; the functions also take it without N\)$/);
    throwsKind(() => F().maxPool3d(x, 4), 'ShapeMismatch',
      /^maxPool3d: input \[1,2,3,4,4\] is too small for kernel 4x4x4 \(dilation 1, 1, 1, padding 0, 0, 0\): the output would be empty$/);
    throwsKind(() => F().avgPool3d(x, 2, { padding: [0, 2, 0] }), 'InvalidArgument', /^avgPool3d: padding 2 must be between 0 and half the kernel size 2$/);
    throwsKind(() => F().avgPool3d(om.ones([1, 2, 0, 4, 4]), 2), 'ShapeMismatch',
      /^avgPool3d: input \[1,2,0,4,4\] has an empty channel, depth, height or width dim \(only the batch may be 0, as PyTorch\)$/);
    throwsKind(() => F().maxPool3d(om.ones([1, 2, 3, 4, 4], { dtype: 'int64' }), 2), 'DtypeMismatch', /^maxPool3d: takes float32, not int64$/);
    throwsKind(() => F().maxPool3d(x, 2, { returnIndices: 1 }), 'InvalidArgument', /^maxPool3d: returnIndices must be a boolean, got 1$/);
    throwsKind(() => F().avgPool3d(x, 2, { divisorOverride: 3 }), 'InvalidArgument', /^avgPool3d: divisorOverride is not supported$/);
    throwsKind(() => F().avgPool3d(x, [2, 2]), 'InvalidArgument', /avgPool3d: kernelSize must be an integer or 3 integers, got 2/);
    throwsKind(() => F().adaptiveAvgPool3d(x, [2, 2]), 'InvalidArgument', /^adaptiveAvgPool3d: outputSize must be an integer or 3 of them, got 2$/);
    throwsKind(() => F().adaptiveAvgPool3d(x.flatten(2), 2), 'ShapeMismatch',
      /^adaptiveAvgPool3d: input \[1,2,48\] must have 5 dims \(\[N, C, D, H, W\]; the functions also take it without N\)$/);
    throwsKind(() => F().adaptiveAvgPool3d(om.ones([1, 2, 3, 0, 4]), 2), 'ShapeMismatch',
      /^adaptiveAvgPool3d: input \[1,2,3,0,4\] has an empty channel, depth, height or width dim \(only the batch may be 0, as PyTorch\)$/);
    throwsKind(() => F().adaptiveAvgPool3d(om.ones([1, 2, 3, 4, 4], { dtype: 'int64' }), 2), 'DtypeMismatch', /^adaptiveAvgPool3d: takes float32, not int64$/);
    throwsKind(() => new nn.AdaptiveAvgPool3d([1, 0, 1]), 'InvalidArgument', /^AdaptiveAvgPool3d: outputSize must be a positive integer or 3 of them \(null keeps the input's\), got /);
    throwsKind(() => new nn.MaxPool3d(2, { ceilMode: 1 }), 'InvalidArgument', /^MaxPool3d: ceilMode must be a boolean, got 1$/);
    throwsKind(() => new nn.Conv3d(4, 6, [3, 3]), 'InvalidArgument', /Conv3d: kernelSize must be an integer or 3 integers, got 2/);
  }));

  test('traced with symbolic batch, frames, H and W: one Conv, ConvTranspose, MaxPool, AveragePool node each, agreeing in onnxruntime-web and the Session at other sizes', () => withTraced((keep, trace) => {
    om.manualSeed(5);
    const conv = new nn.Conv3d(2, 4, [3, 3, 3], { stride: [2, 1, 2], padding: 1 }), bn = new nn.BatchNorm3d(4).eval();
    const up = new nn.ConvTranspose3d(4, 3, [2, 3, 2], { stride: [2, 1, 2], padding: [0, 1, 1], outputPadding: [1, 0, 1] });
    try {
      const fn = (x) => F().adaptiveAvgPool3d(F().avgPool3d(up.forward(F().maxPool3d(bn.forward(conv.forward(x)).relu(), 3, { stride: 2, padding: 1, ceilMode: true })),
        [1, 2, 2], { ceilMode: true, countIncludePad: false }), [2, 1, 3]);
      const tm = trace(fn, { x: [om.randn([2, 2, 5, 9, 8], { seed: 4 }), ['B', null, 'T', 'H', 'W']] });
      const count = (op) => tm.graph().nodes.filter((n) => n.opType === op).length;
      assert.deepEqual(['Conv', 'ConvTranspose', 'MaxPool', 'AveragePool'].map(count), [1, 1, 1, 1]);
    } finally {
      conv.dispose();
      bn.dispose();
      up.dispose();
    }
  }));
});

describe('adaptive_avg_pool3d: one node where ONNX has one, traced and run in onnxruntime-web and the Session', () => {
  const ops = (tm) => tm.graph().nodes.map((n) => n.opType);
  test('1x1x1: one GlobalAveragePool; sizes that divide: one AveragePool; at other batch sizes', () => withTraced((keep, trace) => {
    assert.deepEqual(ops(trace((x) => F().adaptiveAvgPool3d(x, 1), { x: [om.randn([2, 3, 4, 6, 5], { seed: 21 }), ['B', null, 'D', 'H', 'W']] })),
      ['GlobalAveragePool']);
    assert.deepEqual(ops(trace((x) => F().adaptiveAvgPool3d(x, [2, 3, 1]), { x: [om.randn([2, 3, 4, 6, 5], { seed: 22 }), ['B', null, null, null, null]] })),
      ['AveragePool']);
    assert.deepEqual(ops(trace((x) => F().adaptiveAvgPool3d(x, [null, 3, 5]), { x: [om.randn([2, 3, 4, 6, 5], { seed: 23 }), ['B', null, 'D', null, null]] })),
      ['AveragePool'], 'a kept symbolic depth divides at every size');
  }));
  test('uneven cells (PyTorch\'s overlapping ones): MatMul by 0/1 cell matrices, fixed and computed from a symbolic size', () => withTraced((keep, trace) => {
    const tm = trace((x) => F().adaptiveAvgPool3d(x, [2, 4, 3]), { x: [om.randn([2, 2, 5, 7, 4], { seed: 24 }), ['B', null, null, null, null]] });
    assert.equal(ops(tm).filter((o) => o === 'MatMul').length, 3);
    assert.ok(!ops(tm).includes('AveragePool'));
    trace((x) => F().adaptiveAvgPool3d(x, [3, null, 2]), { x: [om.randn([2, 2, 5, 3, 7], { seed: 25 }), ['B', null, 'D', 'H', 'W']] });
    trace((x) => F().adaptiveAvgPool3d(x, [2, 2, 2]), { x: [om.randn([3, 2, 4, 5], { seed: 26 }), [null, 'D', 'H', null]] }); // unbatched
  }));
});

/**
 * tools/torchvision_ports.py's NarrowSqueezeNet: the port's SqueezeNet with each Conv2d and Fire of
 * its features made again at every width but the image's divided by div, and its final convolution.
 */
class NarrowSqueezeNet extends SqueezeNet {
  constructor(version, div, numClasses) {
    super(version, { numClasses });
    const narrow = (m) => {
      if (m instanceof nn.Conv2d) return new nn.Conv2d(m.inChannels, m.outChannels / div, m.kernelSize, { stride: m.stride });
      if (m instanceof Fire) {
        return new Fire(m.inplanes / div, m.squeeze.outChannels / div, m.expand1x1.outChannels / div, m.expand3x3.outChannels / div);
      }
      return m;
    };
    const layers = [...this.features].map(narrow);
    for (const m of this.features) if (!layers.includes(m)) m.dispose();
    this.features = new nn.Sequential(...layers);
    this.classifier[1].dispose();
    this.classifier[1] = new nn.Conv2d(512 / div, numClasses, 1);
  }
}

/**
 * tools/torchvision_ports.py's NarrowVideoResNet: the port's VideoResNet with every width (the
 * stem's and the stages' 64..512 planes) divided by div; the blocks and convolution builders are
 * the port's own, made by its _makeLayer.
 */
const narrowVideoResNet = (div) => class NarrowVideoResNet extends video.VideoResNet {
  constructor(block, convMakers, layers, stem, options) {
    super(block, convMakers, layers, stem, options);
    const narrow = (m) => {
      if (m instanceof nn.Conv3d) {
        const { inChannels, outChannels, kernelSize, stride, padding } = m;
        return new nn.Conv3d(inChannels === 3 ? 3 : Math.floor(inChannels / div), Math.floor(outChannels / div), kernelSize, { stride, padding, bias: false });
      }
      return m instanceof nn.BatchNorm3d ? new nn.BatchNorm3d(Math.floor(m.numFeatures / div)) : m;
    };
    const stemLayers = [...this.stem].map(narrow);
    for (const m of this.stem) if (!stemLayers.includes(m)) m.dispose(); // the ReLUs are kept
    this.stem = new nn.Sequential(...stemLayers);
    this.fc.dispose();
    this.fc = new nn.Linear(512 / div * block.expansion, options.numClasses);
  }

  _makeLayer(block, convBuilder, planes, blocks, stride) {
    if (planes === 64) this.inplanes = 64 / div; // the narrowed stem's width
    return super._makeLayer(block, convBuilder, planes / div, blocks, stride);
  }
};

/** tools/torchvision_ports.py's NarrowDeepLabHead: DeepLabHead at `width` channels where torchvision fixes 256. */
const narrowDeepLabHead = (inChannels, numClasses, width) => new nn.Sequential(new seg.ASPP(inChannels, [12, 24, 36], width),
  new nn.Conv2d(width, width, 3, { padding: 1, bias: false }), new nn.BatchNorm2d(width), new nn.ReLU(), new nn.Conv2d(width, numClasses, 1));

/** The video nets' example clip (not a fixture input) with batch, frames, H and W symbolic. */
const CLIP = [[2, 3, 4, 12, 12], ['batch', null, 't', 'h', 'w']];

const MODELS = {
  squeezenet: [() => new NarrowSqueezeNet('1_1', 8, 10), [...CONV, { h: 17, w: 17 }]],
  r3d: [() => new (narrowVideoResNet(16))(video.BasicBlock, Array(4).fill(video.Conv3DSimple), [1, 1, 1, 1], video.BasicStem, { numClasses: 10 }), CLIP],
  r2plus1d: [() => new (narrowVideoResNet(16))(video.BasicBlock, Array(4).fill(video.Conv2Plus1D), [1, 1, 1, 1], video.R2Plus1dStem,
    { numClasses: 10 }), CLIP],
  deeplabv3: [() => {
    const net = seg.deeplabv3MobilenetV3(new MobileNetV3(...mobilenetV3Conf('mobilenet_v3_small', { widthMult: 0.25, reducedTail: true, dilated: true })), 2, true);
    const inChannels = net.classifier.at(0).convs.at(0).at(0).inChannels;
    net.classifier.dispose();
    net.classifier = narrowDeepLabHead(inChannels, 2, 4);
    return net;
  }, [[2, 3, 20, 20], ['batch', null, 'h', 'w']]],
  fcn: [() => {
    const resnet = new (narrowResNet(32))(ResNetBottleneck, [1, 1, 1, 1], { replaceStrideWithDilation: [false, true, true], numClasses: 1000 });
    const backbone = new IntermediateLayerGetter(resnet, { layer4: 'out', layer3: 'aux' });
    resnet.fc.dispose(); // not in the getter: Python's collector frees it
    return new seg.FCN(backbone, new seg.FCNHead(64, 2), new seg.FCNHead(32, 2));
  }, [[2, 3, 20, 20], ['batch', null, 'h', 'w']]],
};

/**
 * Shape nodes with symbolic sizes: the segmentation models upsample to sizes read from tensors
 * (DeepLabV3's ASPP pooled branch to the feature map's, each head's output to the input's: one
 * read of each). The video nets read none: each conv3d is one 3-D Conv (checked: ONE_CONV below).
 */
const SHAPES = { deeplabv3: 2, fcn: 2 };

describePorts(MODELS, SHAPES, ['r3d', 'r2plus1d']);

describe('DenseNet\'s old checkpoints', () => {
  test('legacyStateDict renames torchvision\'s old keys (norm.1, conv.2, ...) as its _load_state_dict does; the rest are kept', () => {
    const fx = JSON.parse(readFileSync(new URL('densenet.json', DIR), 'utf8'));
    const { tensors } = om.safetensors.load(readFileSync(new URL('densenet.safetensors', DIR)));
    const net = new DenseNet({ growthRate: 8, blockConfig: [2, 3, 2], numInitFeatures: 16, bnSize: 2, numClasses: 10 }).eval();
    try {
      // the file as torchvision's old checkpoints spell it: 'features.denseblock1.denselayer1.norm.1.weight'
      const old = Object.fromEntries(Object.entries(tensors).map(([k, t]) => [
        k.replace(/(denselayer\d+\.(?:norm|relu|conv))([12])\.(weight|bias|running_mean|running_var)$/, '$1.$2.$3'), t]));
      assert.ok(Object.keys(old).includes('features.denseblock1.denselayer1.norm.1.running_var'));
      const report = net.loadStateDict(old, { strict: false });
      assert.ok(report.missingKeys.includes('features.denseblock1.denselayer1.norm1.weight'), 'old keys do not load as they are');
      assert.ok(report.unexpectedKeys.includes('features.denseblock1.denselayer1.conv.2.weight'));
      const renamed = legacyStateDict(old);
      assert.deepEqual(Object.keys(renamed).sort(), [...fx.keys].sort());
      assert.equal(renamed['features.denseblock2.denselayer3.conv2.weight'], tensors['features.denseblock2.denselayer3.conv2.weight'], 'the same tensors');
      // torchvision's pattern renames weights, biases and running statistics only (its old files predate num_batches_tracked)
      const nbt = 'features.denseblock1.denselayer1.norm.1.num_batches_tracked';
      assert.deepEqual(Object.keys(legacyStateDict({ [nbt]: renamed['features.norm0.weight'] })), [nbt]);
      assert.deepEqual(net.loadStateDict(renamed), { missingKeys: [], unexpectedKeys: [] });
      const c = fx.cases[0];
      near(om.tidy(() => vals(net.forward(image(c.shape, c.seed)))), c.output.data, 1e-5 * Math.max(1, ...c.output.data.map(Math.abs)), 'PyTorch\'s output');
    } finally {
      net.dispose();
      om.dispose(Object.values(tensors));
    }
  });
});

describeBuilders('builders-2.json', {
  squeezenet1_0, squeezenet1_1, densenet121, r3d_18: video.r3d_18, mc3_18: video.mc3_18, r2plus1d_18: video.r2plus1d_18,
  deeplabv3_mobilenet_v3_large: seg.deeplabv3_mobilenet_v3_large, deeplabv3_resnet50: seg.deeplabv3_resnet50, fcn_resnet50: seg.fcn_resnet50,
});

test('the segmentation builders\' aux classifier (auxLoss) is torchvision\'s FCNHead on C2 (40 channels in MobileNetV3-Large)', () => {
  const net = seg.deeplabv3_mobilenet_v3_large({ numClasses: 3, auxLoss: true });
  try {
    assert.deepEqual(Object.entries(net.aux_classifier.stateDict()).map(([k, t]) => [k, t.shape]).slice(0, 2), [['0.weight', [10, 40, 3, 3]], ['1.weight', [10]]]);
  } finally {
    net.dispose();
  }
});

describe('configuration errors are torchvision\'s, as InvalidArgument', () => {
  const invalidArg = (re) => (e) => e instanceof om.OmError && e.kind === 'InvalidArgument' && re.test(e.message);
  test('each port checks its configuration before it makes anything', () => {
    const before = om.memory().tensors;
    assert.throws(() => new SqueezeNet('1_2'), invalidArg(/^Unsupported SqueezeNet version 1_2: 1_0 or 1_1 expected$/));
    assert.throws(() => squeezenet1_1({ num_classes: 3 }), invalidArg(/^SqueezeNet: unknown option 'num_classes' \(expected numClasses, dropout\)$/));
    assert.throws(() => new DenseNet({ growth: 8 }), invalidArg(/^DenseNet: unknown option 'growth' \(expected growthRate, /));
    assert.throws(() => densenet121({ growthRate: 8 }), invalidArg(/^densenet121: unknown option 'growthRate' \(expected numClasses, dropRate, memoryEfficient, bnSize\)$/));
    assert.throws(() => new video.VideoResNet(video.Bottleneck, Array(4).fill(video.Conv3DSimple), [1, 1, 1, 1], video.BasicStem, { zeroInitResidual: true }),
      invalidArg(/^'Bottleneck' object has no attribute 'bn3'$/));
    assert.throws(() => video.r3d_18({ classes: 3 }), invalidArg(/^VideoResNet: unknown option 'classes'/));
    assert.throws(() => seg.fcn_resnet50({ aux: true }), invalidArg(/^fcn_resnet50: unknown option 'aux' \(expected numClasses, auxLoss\)$/));
    assert.equal(om.memory().tensors, before, 'nothing is left made');
  });
});
