// Mamba (Hugging Face transformers' MambaForCausalLM, modeling_mamba.py) ported to onemodel as a user
// ports it: MambaMixer's slow_forward (the path a whole sequence takes without the CUDA kernels), no
// cache. The same modules and names, so a checkpoint's state dict (`backbone.embeddings.weight`,
// `backbone.layers.0.mixer.in_proj.weight`, `...mixer.A_log`, `...mixer.D`, `backbone.norm_f.weight`,
// `lm_head.weight` tied to the embeddings) loads with a strict loadStateDict. The selective scan is
// upstream's loop over the sequence (`for i in range(seq_len)`), each step's output collected and
// stacked. It traces with a symbolic batch at a fixed length (the scan unrolled), and with a
// symbolic length too (one ONNX Loop per layer; docs/tracing.md, "Mamba").
// input_ids [batch, seq] (int64) -> logits [batch, seq, vocab_size].
import * as om from 'onemodel';
import { RMSNorm, portConfig } from './modeling_utils.mjs';

const nn = om.nn;

/** MambaConfig's defaults (mamba-130m's shape) for the fields this port reads. */
export const MAMBA_DEFAULTS = {
  vocab_size: 50280, hidden_size: 768, state_size: 16, num_hidden_layers: 32, layer_norm_epsilon: 1e-5, expand: 2,
  conv_kernel: 4, use_bias: false, use_conv_bias: true, hidden_act: 'silu', time_step_rank: 'auto',
  residual_in_fp32: true, tie_word_embeddings: true, intermediate_size: null,
};

/** A parameter (nn.Parameter) of the given values. */
function parameter(t) {
  t.requiresGrad = true;
  return t;
}

/**
 * MambaMixer: the gated projection, the depthwise causal conv, the input-dependent dt, B and C, and
 * the selective scan y <- SSM(A, B, C)(x) with A = -exp(A_log) and the D skip.
 */
export class MambaMixer extends nn.Module {
  constructor(config, layerIdx) {
    super();
    this.hidden_size = config.hidden_size;
    this.ssm_state_size = config.state_size;
    this.conv_kernel_size = config.conv_kernel;
    this.intermediate_size = config.intermediate_size;
    this.time_step_rank = config.time_step_rank;
    this.layer_idx = layerIdx;
    this.conv1d = new nn.Conv1d(this.intermediate_size, this.intermediate_size, config.conv_kernel, {
      bias: config.use_conv_bias, groups: this.intermediate_size, padding: config.conv_kernel - 1,
    });
    this.in_proj = new nn.Linear(this.hidden_size, this.intermediate_size * 2, { bias: config.use_bias });
    // selective projection used to make dt, B and C input dependent
    this.x_proj = new nn.Linear(this.intermediate_size, this.time_step_rank + this.ssm_state_size * 2, { bias: false });
    // time step projection (discretization)
    this.dt_proj = new nn.Linear(this.time_step_rank, this.intermediate_size, { bias: true });
    // S4D real initialization: A_log = log(1..state_size) on every channel (a checkpoint overwrites it)
    this.A_log = parameter(om.tidy(() => om.arange(1, this.ssm_state_size + 1).unsqueeze(0)
      .expand(this.intermediate_size, -1).contiguous().log()));
    this.D = parameter(om.ones([this.intermediate_size]));
    this.out_proj = new nn.Linear(this.intermediate_size, this.hidden_size, { bias: config.use_bias });
  }

  /**
   * The conv's first seq_len outputs, as upstream writes it (`self.conv1d(hidden_states)[..., :seq_len]`):
   * with padding conv_kernel - 1 on both sides, the causal ones. The crop's end is the length
   * beside the scan's loop, written as the length in the traced graph (docs/tracing.md, "Mamba").
   */
  causalConv(hiddenStates, seqLen) {
    return this.conv1d.forward(hiddenStates).slice(-1, 0, seqLen);
  }

  /** slow_forward(input_states) without cache_params or attention_mask: [batch, seq, hidden] -> the same. */
  forward(inputStates) {
    const [batchSize, seqLen] = inputStates.shape;
    // 1. Gated MLP's linear projection
    const projectedStates = this.in_proj.forward(inputStates).transpose(1, 2); // [batch, 2 * intermediate_size, seq_len]
    let [hiddenStates, gate] = projectedStates.chunk(2, 1);
    // 2. Convolution sequence transformation (padding conv_kernel - 1 on both sides: the first seq_len outputs are causal)
    let ssmState = om.zeros([batchSize, this.intermediate_size, this.ssm_state_size]);
    hiddenStates = nn.functional.silu(this.causalConv(hiddenStates, seqLen)); // [batch, intermediate_size, seq_len]
    // 3. State Space Model sequence transformation
    // 3.a. Selection: [batch, seq_len, time_step_rank + state_size * 2]
    const ssmParameters = this.x_proj.forward(hiddenStates.transpose(1, 2));
    const [timeStep, B, C] = ssmParameters.split([this.time_step_rank, this.ssm_state_size, this.ssm_state_size], -1);
    let discreteTimeStep = this.dt_proj.forward(timeStep); // [batch, seq_len, intermediate_size]
    discreteTimeStep = nn.functional.softplus(discreteTimeStep).transpose(1, 2); // [batch, intermediate_size, seq_len]
    // 3.b. Discretization: B and C to [batch, intermediate_size, seq_len, state_size]
    const A = this.A_log.exp().neg(); // [intermediate_size, state_size]
    const dt = discreteTimeStep.unsqueeze(3); // discrete_time_step[:, :, :, None]
    const discreteA = A.unsqueeze(0).unsqueeze(2).mul(dt).exp(); // exp(A[None, :, None, :] * dt)
    const discreteB = dt.mul(B.unsqueeze(1)); // dt * B[:, None, :, :]
    const deltaBU = discreteB.mul(hiddenStates.unsqueeze(3)); // * hidden_states[:, :, :, None]
    // 3.c perform the recurrence y <- SSM(A, B, C)(x)
    const scanOutputs = [];
    for (let i = 0; i < seqLen; i++) {
      ssmState = discreteA.select(2, i).mul(ssmState).add(deltaBU.select(2, i)); // [batch, intermediate_size, state_size]
      const scanOutput = ssmState.matmul(C.select(1, i).unsqueeze(-1)); // [batch, intermediate_size, 1]
      scanOutputs.push(scanOutput.select(2, 0));
    }
    let scanOutput = om.stack(scanOutputs, -1); // [batch, intermediate_size, seq_len]
    scanOutput = scanOutput.add(hiddenStates.mul(this.D.unsqueeze(0).unsqueeze(2)));
    scanOutput = scanOutput.mul(nn.functional.silu(gate));
    // 4. Final linear projection
    return this.out_proj.forward(scanOutput.transpose(1, 2)); // [batch, seq_len, hidden_size]
  }
}

/** MambaRMSNorm: LLaMA's and T5's RMS norm. */
export class MambaRMSNorm extends RMSNorm {}

/** MambaBlock: residual + mixer(norm(hidden_states)) (the residual is float32 already). */
export class MambaBlock extends nn.Module {
  /** The mixer class (a subclass names its own, as LLaMA's layers name their attention). */
  static Mixer = MambaMixer;

  constructor(config, layerIdx) {
    super();
    this.layer_idx = layerIdx;
    this.norm = new MambaRMSNorm(config.hidden_size, config.layer_norm_epsilon);
    this.mixer = new this.constructor.Mixer(config, layerIdx);
  }

  forward(hiddenStates) {
    return hiddenStates.add(this.mixer.forward(this.norm.forward(hiddenStates)));
  }
}

export class MambaModel extends nn.Module {
  /** The block class (a subclass names its own). */
  static Block = MambaBlock;

  constructor(config) {
    super();
    this.embeddings = new nn.Embedding(config.vocab_size, config.hidden_size);
    this.layers = new nn.ModuleList(Array.from({ length: config.num_hidden_layers }, (_, i) => new this.constructor.Block(config, i)));
    this.norm_f = new MambaRMSNorm(config.hidden_size, config.layer_norm_epsilon);
  }

  forward(inputIds) {
    let hiddenStates = this.embeddings.forward(inputIds);
    for (const mixerBlock of this.layers) hiddenStates = mixerBlock.forward(hiddenStates);
    return this.norm_f.forward(hiddenStates);
  }
}

/** MambaForCausalLM: the backbone and a bias-free head tied to the embeddings (logits_to_keep 0: every position). */
export class MambaForCausalLM extends nn.Module {
  /** The backbone class (a subclass names its own). */
  static Model = MambaModel;

  constructor(config = {}) {
    super();
    const c = portConfig('MambaForCausalLM', MAMBA_DEFAULTS, config, 'hidden_act', 'silu');
    // MambaConfig.__init__'s derived fields
    c.intermediate_size ??= c.expand * c.hidden_size;
    if (c.time_step_rank === 'auto') c.time_step_rank = Math.ceil(c.hidden_size / 16);
    this.config = c;
    this.backbone = new this.constructor.Model(c);
    this.lm_head = new nn.Linear(c.hidden_size, c.vocab_size, { bias: false });
    if (c.tie_word_embeddings) {
      this.lm_head.weight.dispose();
      this.lm_head.weight = this.backbone.embeddings.weight; // _tied_weights_keys
    }
  }

  forward(inputIds) {
    return this.lm_head.forward(this.backbone.forward(inputIds));
  }
}
