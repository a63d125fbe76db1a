// Misuse table: every row must throw an om.OmError of the expected kind with a message naming
// the problem — never a WASM abort, a RangeError/TypeError or a hang — and afterwards the
// library must still work and hold no extra memory.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import * as om from 'onemodel';
import { inJsTerms, jsName } from '../../js/errors.js';
import { vals, memoryHooks } from './helpers.mjs';

memoryHooks();

const f = (data) => om.tensor(data);
/** misuse(tracer, x) on a Tracer begun for it (x: a [2, 3] tensor); then the recording is aborted. */
const tracerMisuse = (misuse) => om.tidy(() => {
  const tr = om.Tracer.begin();
  try {
    misuse(tr, om.ones([2, 3]));
  } finally {
    tr.abort();
  }
});
const disposed = () => { const t = om.tensor([1, 2]); t.dispose(); return t; };

// [name, function, kind, message regex]
const rows = [
  // shapes
  ['add [2,3] + [4]', () => om.zeros([2, 3]).add(om.zeros([4])), 'ShapeMismatch', /add.*\[2, ?3\].*\[4\]/],
  ['matmul [2,3] @ [4,5]', () => om.zeros([2, 3]).matmul(om.zeros([4, 5])), 'ShapeMismatch', /matmul.*\[2, ?3\].*\[4, ?5\]/],
  ['om.matmul of two 0-d', () => om.matmul(f(1), f(2)), 'InvalidArgument', /^matmul: both operands need at least 1 dim, got 0 and 0/],
  ['matmul of vectors [3] @ [4]: the shapes given', () => om.ones([3]).matmul(om.ones([4])), 'ShapeMismatch', /^matmul: shapes \[3\] and \[4\] do not match \(3 != 4\)$/],
  ['matmul [2,3] @ [4]', () => om.ones([2, 3]).matmul(om.ones([4])), 'ShapeMismatch', /^matmul: shapes \[2,3\] and \[4\] do not match \(3 != 4\)$/],
  ['reshape 6 elements to [4]', () => om.zeros([2, 3]).reshape(4), 'ShapeMismatch', /reshape/],
  ['reshape with two -1', () => om.zeros([2, 3]).reshape(-1, -1), 'ShapeMismatch', /^reshape: cannot reshape \[2,3\] to \[-1,-1\]/],
  ['expand [2] to [3]', () => om.zeros([2]).expand(3), 'ShapeMismatch', /expand/],
  ['cat [2,2] and [3]', () => om.cat([om.zeros([2, 2]), om.zeros([3])]), 'ShapeMismatch', /^cat: input 1 has shape \[3\], input 0 has \[2,2\]/],
  ['stack [2] and [3]', () => om.stack([om.zeros([2]), om.zeros([3])]), 'ShapeMismatch', /^stack: input 1 has shape/],
  ['where with mismatched shapes', () => om.where(om.zeros([2], { dtype: 'bool' }), om.zeros([3]), 0), 'ShapeMismatch', /where/],
  ['copy_ [3] into [2]', () => om.zeros([2]).copy_(om.zeros([3])), 'ShapeMismatch', /copy/],
  // dtypes
  ['bool - bool', () => f([true]).sub(f([false])), 'DtypeMismatch',
    /^sub: subtraction with a bool tensor is not supported \(use logicalXor\(\), or logicalNot\(\) to invert a mask\)$/],
  ['float - true', () => f([1.5]).sub(true), 'DtypeMismatch', /^sub: subtraction with a bool tensor/],
  ['indexPut with a float32 index', () => om.zeros([3]).indexPut([f([0])], f([1])), 'DtypeMismatch',
    /^indexPut: index 0 is float32; indices must be int64 \(for a bool mask use maskedFill or maskedScatter\)$/],
  ['a float64 tensor into an op that takes none', () => om.tensor([1, 2], { dtype: 'float64' }).softmax(0), 'DtypeMismatch',
    /^softmax: takes no float64 \(input 0; onemodel\/docs\/graph-runtime\.md lists the ops computed in double\)$/],
  ['backward of a tensor without grad', () => f([1, 2]).sum().backward(), 'Autograd',
    /^backward: the tensor does not require grad \(no input was marked requiresGrad\)$/],
  ['pixelShuffle of 3 channels by 2', () => om.nn.functional.pixelShuffle(om.zeros([1, 3, 2, 2]), 2), 'ShapeMismatch',
    /^pixelShuffle expects its input's 'channel' dimension to be divisible by the square of upscaleFactor, but input\.shape\.at\(-3\)=3 is not divisible by 2\^2$/],
  ['scaledDotProductAttention with a mask of another shape', () => om.nn.functional.scaledDotProductAttention(om.zeros([1, 3, 4]), om.zeros([1, 5, 4]),
    om.zeros([1, 5, 4]), { attnMask: om.zeros([3, 4]) }), 'ShapeMismatch', /^scaledDotProductAttention: mask \[3,4\] does not broadcast to the scores' \[3, 5\]$/],
  // a Tracer used out of order: the hints name its methods, not C's functions
  ['Tracer: finish inside run', () => tracerMisuse((tr, x) => { tr.input('x', x); tr.run((t) => { tr.finish({ y: t }); return t; }); }), 'InvalidUsage',
    /^finish: called while tracer\.run\(\) runs the model; tracer\.run\(\) hands back the outputs to finish with$/],
  ['Tracer: input inside run', () => tracerMisuse((tr, x) => { tr.input('x', x); tr.run((t) => { tr.input('z', x); return t; }); }), 'InvalidUsage',
    /^input: 'z' is declared while tracer\.run\(\) runs the model$/],
  ['Tracer: a Dim after run', () => tracerMisuse((tr, x) => { tr.input('x', x); tr.run((t) => t.neg()); tr.input('z', x, [om.Dim('n'), null]); }),
    'InvalidUsage', /^Dim: 'n' is declared after the model ran; declare symbols before tracer\.run\(\)$/],
  ['Tracer: run with no input', () => tracerMisuse((tr, x) => tr.run(() => x.neg())), 'InvalidUsage', /^trace: 0 inputs declared \(tracer\.input\(\); 1 to 64\)$/],
  ['Tracer: an op on a symbolic input outside run', () => tracerMisuse((tr, x) => tr.input('x', x, ['n', null]).neg()), 'InvalidUsage',
    /^neg: a trace with symbolic axes records only inside om\.trace or tracer\.run\(\), which runs the model again/],
  ['bitwise and of float32', () => f([1, 2]).bitwiseAnd(f([1n, 2n])), 'DtypeMismatch', /^bitwiseAnd: takes int64 or bool, not float32/],
  ['bitwise not of float32', () => om.bitwiseNot(f([1])), 'DtypeMismatch', /^bitwiseNot: takes int64 or bool, not float32/],
  ['remainder of bool', () => f([true]).remainder(true), 'DtypeMismatch', /^remainder: takes float32, int64 or float64, not bool/],
  ['mean of int64', () => f([1n]).mean(), 'DtypeMismatch', /mean: takes float32 or float64, not int64/],
  ['where with a float condition', () => om.where(f([1, 0]), f([1, 2]), f([3, 4])), 'DtypeMismatch', /where/],
  ['matmul of bool', () => om.matmul(f([[true]]), f([[true]])), 'DtypeMismatch', /matmul/],
  ['unknown dtype name', () => f([1]).to('float16'), 'InvalidArgument', /to: unknown dtype "float16"/],
  ['rand with dtype int64', () => om.rand([2], { dtype: 'int64' }), 'InvalidArgument', /rand: dtype/],
  // disposed tensors
  ['method on a disposed tensor', () => disposed().add(1), 'Disposed', /^add: .*disposed/],
  ['property of a disposed tensor', () => disposed().shape, 'Disposed', /^shape: .*disposed/],
  ['toArray of a disposed tensor', () => disposed().toArray(), 'Disposed', /^toArray: .*disposed/],
  ['disposed tensor as an argument', () => f([1, 2]).add(disposed()), 'Disposed', /^add: other was disposed/],
  ['disposed tensor in cat', () => om.cat([f([1]), disposed()]), 'Disposed', /^cat: tensors\[1\] was disposed/],
  ['disposed grad for backward', () => { const x = f([1]); x.requiresGrad = true; x.mul(2).backward(disposed()); }, 'Disposed', /backward: grad/],
  // non-numeric data and bad arguments
  ['tensor of strings', () => om.tensor(['a', 'b']), 'InvalidArgument', /tensor: element \[0\] is a string/],
  ['tensor of a string', () => om.tensor('abc'), 'InvalidArgument', /tensor: data must be/],
  ['tensor with an object entry', () => om.tensor([[1, 2], [3, {}]]), 'InvalidArgument', /element \[1\]\[1\] is an object/],
  ['tensor with undefined', () => om.tensor([1, undefined]), 'InvalidArgument', /element \[1\] is undefined/],
  ['tensor of null', () => om.tensor(null), 'InvalidArgument', /tensor: data must be/],
  ['tensor of a Tensor', () => om.tensor(f([1])), 'InvalidArgument', /already a Tensor/],
  ['ragged: short row', () => om.tensor([[1, 2], [3]]), 'InvalidArgument', /ragged.*\[1\].*length 1.*2/],
  ['ragged: scalar among rows', () => om.tensor([[1, 2], 3]), 'InvalidArgument', /ragged/],
  ['ragged: row among scalars', () => om.tensor([1, [2]]), 'InvalidArgument', /ragged|element \[1\]/],
  ['data length vs shape', () => om.tensor([1, 2, 3], { shape: [2, 2] }), 'InvalidArgument', /3 elements.*\[2, 2\].*4/],
  ['negative size in shape option', () => om.tensor([], { shape: [-1] }), 'InvalidArgument', /negative/],
  ['fractional size in shape option', () => om.tensor([1], { shape: [1.5] }), 'InvalidArgument', /shape\[0\].*integer/],
  ['NaN in int64 data', () => om.tensor([NaN], { dtype: 'int64' }), 'InvalidArgument', /int64/],
  ['bigint beyond int64', () => om.tensor([2n ** 70n]), 'InvalidArgument', /int64/],
  ['zeros with a negative size', () => om.zeros([2, -1]), 'InvalidArgument', /-1|negative/],
  ['zeros with NaN size', () => om.zeros([NaN]), 'InvalidArgument', /zeros: shape\[0\] must be an integer, got NaN/],
  ['zeros with a string size', () => om.zeros(['3']), 'InvalidArgument', /zeros: shape\[0\]/],
  ['zeros with a string shape', () => om.zeros('abc'), 'InvalidArgument', /zeros: shape must be/],
  ['zeros with 9 dims', () => om.zeros([1, 1, 1, 1, 1, 1, 1, 1, 1]), 'InvalidArgument', /dims|ndim|9/],
  ['full with a string value', () => om.full([2], 'x'), 'InvalidArgument', /full: value/],
  ['add a string', () => f([1]).add('1'), 'InvalidArgument', /add: other must be a Tensor or a number, got a string/],
  ['add an object', () => f([1]).add({}), 'InvalidArgument', /add: other/],
  ['matmul with a number', () => f([1]).matmul(2), 'InvalidArgument', /matmul: other must be a Tensor/],
  ['cat of a non-array', () => om.cat('ab'), 'InvalidArgument', /cat: expected an array/],
  ['cat of nothing', () => om.cat([]), 'InvalidArgument', /^cat: needs at least one tensor/],
  ['where with a string', () => om.where('x', f([1]), f([2])), 'InvalidArgument', /where: condition/],
  ['arange with step 0', () => om.arange(0, 1, 0), 'InvalidArgument', /arange/],
  ['arange to Infinity', () => om.arange(0, Infinity), 'InvalidArgument', /arange: start 0, end inf, step 1 do not make a range/],
  ['arange of NaN', () => om.arange(NaN), 'InvalidArgument', /arange/],
  ['arange of a string', () => om.arange('5'), 'InvalidArgument', /arange: argument 0/],
  ['noGrad of a non-function', () => om.noGrad(5), 'InvalidArgument', /noGrad: expected a function/],
  ['tidy of a non-function', () => om.tidy('x'), 'InvalidArgument', /tidy: expected a function/],
  ['tidy of an async function', () => om.tidy(async () => 1), 'InvalidArgument', /tidy: .*Promise/],
  ['new Tensor()', () => new om.Tensor(), 'InvalidArgument', /use om\.tensor/],
  ['requiresGrad set to a string', () => { f([1]).requiresGrad = 'yes'; }, 'InvalidArgument', /requiresGrad/],
  ['manualSeed(1.5)', () => om.manualSeed(1.5), 'InvalidArgument', /manualSeed: seed/],
  ['rand with a string seed', () => om.rand([2], { seed: 'x' }), 'InvalidArgument', /rand: seed/],
  ['set_ with a short index', () => om.zeros([2, 2]).set_([0], 1), 'InvalidArgument', /set_: index has 1/],
  ['sum with keepdim "yes"', () => f([1]).sum(0, 'yes'), 'InvalidArgument', /sum: keepdim/],
  ['split of size 0', () => f([1, 2]).split(0), 'InvalidArgument', /split/],
  ['split of size 1.5', () => f([1, 2]).split(1.5), 'InvalidArgument', /split: splitSize/],
  ['split by sizes summing to 1, not 2', () => f([1, 2]).split([1, 0]), 'ShapeMismatch', /^split: the sizes sum to 1, not 2 \(the size of dim 0\)/],
  ['split by sizes summing past the dim', () => f([1, 2]).split([1, 2 ** 62]), 'ShapeMismatch', /^split: the sizes sum to more than 2 \(the size of dim 0\)/],
  ['split by a negative size', () => f([1, 2]).split([3, -1]), 'InvalidArgument', /^split: size -1 \(at 1\) must not be negative/],
  ['split by no sizes', () => f([1, 2]).split([]), 'InvalidArgument', /^split: needs at least one size/],
  ['split by a size 0.5', () => f([1, 2]).split([0.5, 1.5]), 'InvalidArgument', /^split: sizes\[0\] must be an integer/],
  ['split by sizes along dim 1 of a 1-D tensor', () => f([1, 2]).split([1, 1], 1), 'IndexOutOfRange', /^split: dim 1 is out of range/],
  ['chunk into 0', () => f([1, 2]).chunk(0), 'InvalidArgument', /^chunk: chunks 0 must be positive/],
  ['chunk into 1.5', () => f([1, 2]).chunk(1.5), 'InvalidArgument', /^chunk: chunks must be an integer, got 1.5/],
  ['chunk along dim 2 of a 1-D tensor', () => f([1, 2]).chunk(2, 2), 'IndexOutOfRange', /^chunk: dim 2 is out of range/],
  ['unbind of a 0-d tensor', () => om.tensor(1).unbind(), 'IndexOutOfRange', /^unbind: dim 0 is out of range for a tensor of 0 dims/],
  ['om.split of a number', () => om.split(3, 1), 'InvalidArgument', /^split: input must be a Tensor/],
  ['slice with step 0', () => f([1, 2]).slice(0, 0, 2, 0), 'InvalidArgument', /slice/],
  ['permute with too few dims', () => om.zeros([2, 3]).permute(0), 'InvalidArgument', /permute/],
  ['permute with a repeated dim', () => om.zeros([2, 3]).permute(0, 0), 'InvalidArgument', /permute/],
  ['item of 2 elements', () => f([1, 2]).item(), 'InvalidArgument', /^item: tensor of shape \[2\] has 2 elements, not 1/],
  // dims and indices
  ['sum(5) on a 2-D tensor', () => om.zeros([2, 3]).sum(5), 'IndexOutOfRange', /sum.*5/],
  ['transpose with dim 2 of 2-D', () => om.zeros([2, 3]).transpose(0, 2), 'IndexOutOfRange', /transpose|permute/],
  ['transpose with a huge dim', () => om.zeros([2, 3]).transpose(0, 2 ** 40), 'InvalidArgument', /transpose: dim1/],
  ['unsqueeze(3) on 1-D', () => f([1]).unsqueeze(3), 'IndexOutOfRange', /unsqueeze/],
  ['max along dim 2 of 1-D', () => f([1]).max(2), 'IndexOutOfRange', /max/],
  ['argmax along dim 1.5', () => f([1]).argmax(1.5), 'InvalidArgument', /argmax: dim/],
  ['flatten(3) on 2-D', () => om.zeros([2, 2]).flatten(3), 'IndexOutOfRange', /flatten: dim 3/],
  ['select index out of range', () => om.zeros([2, 3]).select(0, 5), 'IndexOutOfRange', /select.*5/],
  ['select index -3 of size 2', () => om.zeros([2, 3]).select(0, -3), 'IndexOutOfRange', /select/],
  ['set_ index out of range', () => om.zeros([2, 2]).set_([0, 2], 1), 'IndexOutOfRange', /set/],
  // autograd
  ['backward on non-scalar without grad', () => { const x = f([1, 2]); x.requiresGrad = true; x.mul(2).backward(); }, 'Autograd', /backward/],
  ['backward with a grad of the wrong shape', () => { const x = f([1, 2]); x.requiresGrad = true; x.mul(2).backward(f([1, 2, 3])); }, 'ShapeMismatch', /backward.*\[3\].*\[2\]|backward.*\[2\].*\[3\]/],
  ['backward of a tensor that needs no grad', () => f([1]).sum().backward(), 'Autograd', /backward/],
  ['requiresGrad on int64', () => { f([1n]).requiresGrad = true; }, 'DtypeMismatch', /float32.*int64/],
  ['requiresGrad on a non-leaf', () => { const x = f([1]); x.requiresGrad = true; x.mul(2).requiresGrad = false; }, 'InvalidArgument', /leaf/],
  // out of memory
  ['zeros of 3 GB', () => om.zeros([(3 * 2 ** 30) / 4]), 'OutOfMemory', /zeros|full|bytes|memory/i],
  ['zeros of 8 GB (beyond 4 GB)', () => om.zeros([2 ** 31]), 'OutOfMemory', /zeros|full|bytes|memory/i],
  ['ones of 4 TB', () => om.ones([2 ** 20, 2 ** 20]), 'OutOfMemory', /ones|full|bytes|memory/i],
  ['randn of 6 GB', () => om.randn([3, 2 ** 29], { seed: 1 }), 'OutOfMemory', /randn|bytes|memory/i],
  ['expand then contiguous of 16 GB', () => f([1]).expand(2 ** 32).contiguous(), 'OutOfMemory', /contiguous|bytes|memory/i],
  ['toArray of an 8 GB broadcast view', () => om.ones([1]).expand(2 ** 31).toArray(), 'OutOfMemory', /toArray: .*bytes/],
  ['matmul result of 4 GB', () => om.zeros([2 ** 15, 1]).matmul(om.zeros([1, 2 ** 15])), 'OutOfMemory', /matmul|bytes|memory/i],
];

describe('misuse table', () => {
  for (const [name, fn, kind, re] of rows) {
    test(name, () => {
      om.tidy(() => {
        let caught;
        try {
          fn();
        } catch (e) {
          caught = e;
        }
        assert.ok(caught !== undefined, `${name}: did not throw`);
        assert.ok(caught instanceof om.OmError,
          `${name}: expected an OmError, got ${caught?.constructor?.name}: ${caught?.message}`);
        assert.equal(caught.kind, kind, `${name}: kind (message: ${caught.message})`);
        assert.match(caught.message, re, `${name}: message`);
      });
      // the library still works afterwards
      om.tidy(() => {
        assert.deepEqual(vals(om.tensor([1, 2]).add(1)), [2, 3]);
        assert.deepEqual(vals(om.zeros([2, 2]).matmul(om.ones([2, 1])).sum(0)), [0]);
      });
    });
  }
});

describe('error classes', () => {
  test('OmError and TraceError', () => {
    const e = new om.OmError('ShapeMismatch', 'x');
    assert.ok(e instanceof Error);
    assert.equal(e.kind, 'ShapeMismatch');
    assert.equal(e.name, 'OmError');
    const t = new om.TraceError('DataDependent', 'y');
    assert.ok(t instanceof om.OmError);
    assert.equal(t.name, 'TraceError');
    assert.equal(t.kind, 'DataDependent');
  });

  test('after an out-of-memory error, large allocations still work', () => {
    assert.throws(() => om.zeros([(3 * 2 ** 30) / 4]), { kind: 'OutOfMemory' });
    om.tidy(() => {
      const t = om.ones([4_000_000]);
      assert.equal(t.sum().item(), 4_000_000);
    });
  });

  test('messages from C name the JS methods: the call a message starts with, op names in what a trace says the model calls, hints', () => {
    const ops = new Set(['leaky_relu', 'relu', 'cast', 'max_dim', 'full', 'from_data', 'neg', 'index_select']);
    const isOp = (name) => ops.has(name);
    assert.deepEqual(['leaky_relu', 'max_dim', 'cast', 'full', 'from_data', 'log_softmax', 'relu'].map(jsName),
      ['leakyRelu', 'max', 'to', 'om.full (om.zeros, om.ones)', 'om.tensor', 'logSoftmax', 'relu']);
    assert.equal(inJsTerms('neg: the model takes another path at other sizes: at batch=9 it calls leaky_relu here (call 1)', isOp),
      'neg: the model takes another path at other sizes: at batch=9 it calls leakyRelu here (call 1)');
    assert.equal(inJsTerms('trace_run: goes on after its last call here (call 6) and calls full', isOp),
      'trace: goes on after its last call here (call 6) and calls om.full (om.zeros, om.ones)');
    assert.equal(inJsTerms('max_dim (call 2): at batch=1 the model fails (x)', isOp), 'max (call 2): at batch=1 the model fails (x)');
    assert.equal(inJsTerms('calls a random tensor here; calls nothing_known', isOp), 'calls a random tensor here; calls nothing_known', 'only op names change');
    // the name a message starts with, and a nested message's, as JS names the call
    for (const [c, js] of [['trace_run', 'trace'], ['trace_finish', 'finish'], ['trace_input', 'input'], ['trace_dim', 'Dim'],
      ['session_run', 'run'], ['session_open', 'InferenceSession.create'], ['session_create', 'session'], ['session_plan_kernels', 'InferenceSession'],
      ['traced_save', 'save'], ['traced_write_onnx', 'toOnnx'], ['traced_symbol_count', 'TracedModel'], ['from_data', 'tensor'], ['copy_from', 'copy_'],
      ['set_requires_grad', 'requiresGrad'], ['full', 'full'], ['max_dim', 'max'], ['cast', 'to'], ['lstm_layer', 'nn.LSTM'], ['select_scatter', 'selectScatter'],
      ['relu', 'relu']]) {
      assert.equal(inJsTerms(`${c}: went wrong`, isOp), `${js}: went wrong`, c);
    }
    assert.equal(inJsTerms('trace_run: at batch=2 the model fails at index_select (call 2): index_select: index 50 is out of range', isOp),
      'trace: at batch=2 the model fails at indexSelect (call 2): indexSelect: index 50 is out of range');
    assert.equal(inJsTerms('relu: see docs/x_y: here', isOp), 'relu: see docs/x_y: here', 'only the leading name');
    assert.equal(inJsTerms("neg: declare om.Dim('n', { min: 2 }) (om_trace_dim in C)", isOp), "neg: declare om.Dim('n', { min: 2 })");
    // C's hints to cast name the JS methods (each of C's three wordings)
    assert.equal(inJsTerms('add: dtypes int64 and float32 differ (convert one with cast)', isOp),
      'add: dtypes int64 and float32 differ (convert one with .to(dtype), e.g. .float())');
    assert.equal(inJsTerms('div: takes float32, not int64 (true division of integers gives floats: cast first)', isOp),
      'div: takes float32, not int64 (true division of integers gives floats: convert first with .float())');
    // end to end: a model that calls leakyRelu at other sizes, neg at the traced one (a threshold
    // on a product of two sizes: refused, where one size's is an If)
    const x = om.randn([4, 3], { seed: 1 });
    try {
      assert.throws(() => om.trace((t) => (t.shape[0] * t.shape[1] > 12 ? om.nn.functional.leakyRelu(t) : t.neg()), { x: [x, ['batch', 'w']] }),
        (e) => e.kind === 'SymbolicShape' && /^leakyRelu: the model changes at a size threshold: at batch=\d+, w=\d+ it calls leakyRelu here \(call 1\), where the trace calls neg;/.test(e.message));
    } finally {
      x.dispose();
    }
  });

  // Every message the C sources can set (the literal text of each om__fail, om__trace_fail and
  // format.c's BAD call, %s and all), in JS terms: none names a C function (om_trace_run, ...),
  // PyTorch's operators (the `-` operator) or a doc by its path in the repository rather than in
  // the package, and every op named in snake_case is gone.
  test('no message from C names a C function, a PyTorch operator or a snake_case op once in JS terms', () => {
    const root = new URL('../../src/', import.meta.url);
    const ops = new Set([...readFileSync(new URL('ops/ops.def', root), 'utf8').matchAll(/^OM_OP\((\w+)/gm)].map((m) => m[1]));
    const messages = [];
    for (const file of readdirSync(root, { recursive: true }).filter((p) => /\.[ch]$/.test(p))) {
      const text = readFileSync(new URL(file, root), 'utf8');
      for (const call of text.matchAll(/\b(?:om__fail|om__trace_fail|BAD)\(/g)) {
        let literal = '';
        for (let i = call.index + call[0].length, depth = 1; depth > 0; i++) {   // to the call's closing parenthesis
          const c = text[i];
          if (c === '"' || c === "'") {   // a string (the message's pieces) or a character literal, escapes and all
            let j = i + 1;
            while (text[j] !== c) j += text[j] === '\\' ? 2 : 1;
            if (c === '"') literal += text.slice(i + 1, j);
            i = j;
          } else if ('([{'.includes(c)) depth++;
          else if (')]}'.includes(c)) depth--;
        }
        messages.push({ where: `${file}:${text.slice(0, call.index).split('\n').length}`, literal });
      }
    }
    assert.ok(messages.length > 500, `${messages.length} messages`);
    assert.ok(messages.some((m) => m.literal.includes('om_trace_run')), 'the scan sees the hints that name C functions');
    // the JS API's names: a snake_case word that is one in camelCase (masked_scatter) is a C name too
    const api = new Set([om, om.nn.functional, om.Tensor.prototype].flatMap((o) => Object.getOwnPropertyNames(o)));
    const cName = (w) => ops.has(w) || api.has(jsName(w));
    const bad = messages.map(({ where, literal }) => ({ where, js: inJsTerms(literal, (n) => ops.has(n)) }))
      .filter(({ js }) => /\bom_[a-z]|`[-^~]`|(?<!onemodel\/)docs\//.test(js) || (js.replace(/'[^']*'/g, '').match(/\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g) ?? []).some(cName));
    assert.deepEqual(bad, []);
  });

  // A trace's messages name the op a call reached (jsName of the C op): that name must be one the
  // JS API has, else the message names a function the user cannot find. The ops only an imported
  // ONNX graph reaches (the Session's kernels, named by the node) are the exceptions.
  test("every C op's name in a message is a function or module of the JS API", () => {
    const ops = [...readFileSync(new URL('../../src/ops/ops.def', import.meta.url), 'utf8').matchAll(/^OM_OP\((\w+)/gm)].map((m) => m[1]);
    assert.ok(ops.length > 100, `${ops.length} ops`);
    const api = new Set([om, om.nn, om.nn.functional, om.Tensor.prototype].flatMap((o) => Object.getOwnPropertyNames(o)));
    const sessionOnly = ['rms_norm', 'dft', 'det'];
    const missing = ops.filter((op) => !sessionOnly.includes(op) && !api.has(jsName(op).split(' ')[0].replace(/^(om|nn)\./, '')));
    assert.deepEqual(missing, []);
    assert.equal(jsName('max_unpool'), 'maxUnpool2d (1d, 3d)');
  });

  test('calling anything before ready() throws an OmError', () => {
    const script = `
      import * as om from 'onemodel';
      const out = {};
      for (const [k, fn] of Object.entries({ zeros: () => om.zeros([1]), tensor: () => om.tensor([1]), memory: () => om.memory() })) {
        try { fn(); out[k] = 'no error'; } catch (e) { out[k] = [e instanceof om.OmError, e.kind, e.message]; }
      }
      await Promise.all([om.ready(), om.ready()]);
      out.after = om.zeros([2]).numel();
      console.log(JSON.stringify(out));
    `;
    const res = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: new URL('../..', import.meta.url) }));
    for (const k of ['zeros', 'tensor', 'memory']) {
      assert.equal(res[k][0], true, `${k}: ${res[k]}`);
      assert.equal(res[k][1], 'InvalidArgument');
      assert.match(res[k][2], new RegExp(`^${k}: .*await om\\.ready\\(\\)`));
    }
    assert.equal(res.after, 2);
  });
});
