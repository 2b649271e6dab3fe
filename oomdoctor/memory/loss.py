"""The loss: how many bytes per logit (micro-batch x sequence x vocabulary) the model's own loss code holds.

Who computes the cross-entropy, and in which dtype, depends on the model code and the library version:

  hf            transformers >= 4.49 (loss/loss_utils.py ForCausalLMLoss): logits.float(), labels padded and
                shifted instead of the logits; cross_entropy saves its fp32 log-softmax output
  hf_shift      transformers 4.46-4.48: the same loss function, with the fp32 logits shifted by a .contiguous()
                copy (removed by transformers PR #35646)
  legacy        transformers <= 4.45, whose model forward calls logits.float() and shifts a contiguous fp32
                copy; remote code written the same way (InternLM2 modeling_internlm2.py; ChatGLM2/3 and GLM-4
                modeling_chatglm.py, which also casts the fp32 logits back for the output)
  compute       remote code that shifts the compute-dtype logits and calls CrossEntropyLoss on them (Qwen-1
                modeling_qwen.py, Baichuan/Baichuan2 modeling_baichuan.py, InternLM modeling_internlm.py): under
                CUDA autocast cross_entropy's log_softmax keeps the logits' dtype and nll_loss saves an fp32 copy
                of its output; without autocast (DeepSpeed bf16, pure bf16) everything stays in the compute dtype
  fused         Liger's fused linear cross-entropy: logits for one chunk of tokens at a time
  cce           Apple's Cut Cross-Entropy: no logits tensor at all, only the gradient of the hidden states
  chunked       torchtune's CEWithChunkedOutputLoss (compute-dtype logits in 8 chunks, each upcast for its
                loss; compiled, only the chunk's log-sum-exp is kept) and LitGPT's chunked_cross_entropy
                (128-token chunks, cross-entropy in the compute dtype)
  tt_fp32       torchtune without chunking: TransformerDecoder returns `self.output(h).float()`
                (torchtune/modules/transformer.py), so the loss sees fp32 logits
  plain         LitGPT without chunking: cross-entropy on the compute-dtype logits
  verl          verl's PPO actor (workers/actor/dp_actor.py _forward_micro_batch): the compute-dtype logits divided
                in place by the temperature, log-probs by flash-attn's cross entropy (per-row buffers only), its
                backward written into the logits (inplace_backward) unless the entropy is computed too
  logps         ms-swift's DPO: no model loss; each token's log-probability by a log_softmax per sequence on the
                logits as the model returns them (compute dtype when no autocast converts the outputs)
  unsloth       unsloth's own causal-LM forward before its fused losses (unsloth/models/llama.py
                CausalLM_fast_forward @0927c343): `self.lm_head(hidden_states)` in the compute dtype, then the Triton
                fast_cross_entropy_loss (kernels/cross_entropy_loss.py), which keeps one fp32 log-sum-exp per row and
                writes its backward into the logits (`tl.store(logits_ptr + col_offsets, dloss * y)`, line 219)
  unsloth_fused unsloth's chunked fused loss (unsloth_zoo fused_losses/cross_entropy_loss.py UnslothFusedLoss):
                the hidden states' gradient for every token (`grad_inputs = torch.empty_like(hidden_states)`) and, per
                chunk, fp32 logits and their gradient under torch.func.grad_and_value
"""
from __future__ import annotations

from dataclasses import dataclass

from oomdoctor.facts import ModelShape, TrainingSetup
from oomdoctor.memory.regime import Regime, _transformers_version, _version, regime_of

# model_type (config.json) -> the loss its own modelling code computes
_REMOTE_LOSS = {"qwen": "compute", "baichuan": "compute", "internlm": "compute",
                "internlm2": "legacy", "chatglm": "legacy", "glm": "legacy"}
# model types whose config defaults to final_logit_softcapping (transformers configuration_gemma2.py 30.0,
# configuration_vaultgemma.py 30.0, configuration_gemma3n.py 30.0, configuration_nanochat.py 15.0): the causal-LM
# forward runs `logits / cap; torch.tanh(logits); logits * cap` (modeling_gemma2.py Gemma2ForCausalLM.forward)
# and tanh saves its output for backward: one more logits-sized tensor in the logits' dtype
FINAL_SOFTCAP = ("gemma2", "vaultgemma", "gemma3n", "gemma3n_text", "nanochat")
# frameworks that train through the HF Trainer, whose model accelerate prepares (native AMP wraps its forward)
_HF_TRAINER = ("hf", "trl", "llamafactory", "axolotl", "swift", "ms-swift")
# frameworks whose DPO is TRL's DPOTrainer (LLaMA-Factory's own casts the logits to fp32 first:
# src/llamafactory/train/dpo/trainer.py:230 concatenated_forward)
_DPO_LOGPS = ("hf", "trl", "axolotl", "swift", "ms-swift")
# torchtune splits the output projection into this many chunks (modules/transformer.py num_output_chunks)
TORCHTUNE_CHUNKS = 8
# model types unsloth trains through its own forward (unsloth/models/loader.py FastLanguageModel.from_pretrained
# dispatches them to FastLlamaModel and its subclasses in llama.py, mistral.py, qwen2.py, qwen3.py, gemma.py,
# gemma2.py, cohere.py, granite.py; Phi-3 is loaded as Llama or Mistral); the others run transformers' forward as
# unsloth_zoo's compiler rewrites it
_UNSLOTH_OWN_FORWARD = frozenset({"llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "cohere", "granite", "phi3"})
# unsloth_zoo compiler.py cross_entropy_replacement_1 (@66c37637) calls unsloth_fused_ce_loss(target_gb = 1): each
# chunk's fp32 logits are sized to 1 GiB (fused_losses/cross_entropy_loss.py get_chunk_size)
_UNSLOTH_COMPILED_CHUNK_BYTES = 1024 ** 3


@dataclass(frozen=True)
class LossBytes:
    """Bytes of the loss per logit element, at the moments they are alive."""

    regime: str
    forward: float      # at the loss (the logits and what the cross-entropy keeps)
    backward: float     # at the start of backward (the log-softmax gradient)
    tokens_term: float  # bytes per token instead of per logit (fused kernels: the hidden-state gradient)


# ms-swift's loss scales whose weights are not all 0 or 1 (swift/loss_scale/config/{hermes,react,qwen,alpha_umi,
# agentflan}.json at 3602360a5; AgentFlanLossScale `is_binary = False`): each sample then carries a `loss_scale`
_SWIFT_WEIGHTED_SCALES = frozenset({"hermes", "react", "qwen", "alpha_umi", "agentflan"})


def swift_own_loss(setup: TrainingSetup) -> bool:
    """ms-swift's SFT trainer takes the labels away from the model and computes a per-token loss on its full
    logits when a batch carries weighted loss scales or the run is sequence parallel (swift/trainers/
    seq2seq_trainer.py compute_loss, `labels = inputs.pop('labels')`, warning that Liger's loss "will not take
    effect"): Liger's patched forward materialises the logits without labels (liger_kernel/transformers/model/
    qwen2.py:100, `skip_logits = self.training and labels is not None`), and per_token_loss_func upcasts them."""
    if setup.stage not in ("sft", "pt", ""):
        return False
    if set(setup.mechanisms.loss_scale.split("+")) & _SWIFT_WEIGHTED_SCALES:
        return True                 # --loss_scale is ms-swift's own flag
    return (setup.framework or "").lower() in ("swift", "ms-swift") and setup.seq_parallel > 1


def loss_regime(setup: TrainingSetup, shape: ModelShape) -> str:
    loss = setup.mechanisms.loss
    if loss in ("cce", "cut_cross_entropy"):
        return "cce"
    if loss == "chunked":
        # torchtune's CEWithChunkedOutputLoss (its reader sets fused_ce too) chunks the output projection rather
        # than fusing it: every chunk's logits exist at once (LinearCrossEntropyLoss is the fused one)
        return "chunked"
    if (setup.fused_ce or loss in ("fused", "liger", "linear")) and not swift_own_loss(setup):
        return "fused"
    if setup.use_unsloth and setup.stage in ("sft", "pt", ""):
        return unsloth_loss(setup, shape)
    if setup.framework == "verl" and setup.stage != "sft":
        # use_fused_kernels: log-probs and entropy from the hidden states, chunk by chunk
        return "fused" if setup.mechanisms.log_prob_fused else "verl"
    if setup.stage == "dpo" and setup.framework in _DPO_LOGPS and not regime_of(setup, shape).autocast:
        # TRL's DPO and ms-swift's over it pass no labels, so the model computes no loss, and take per-token
        # log-probabilities with selective_log_softmax (trl/trainer/dpo_trainer.py concatenated_forward;
        # swift/rlhf_trainers/dpo_trainer.py concatenated_forward, rlhf_mixin.py get_per_token_logps): half
        # logits get one log_softmax per row in their own dtype (trl/trainer/utils.py:514). They stay in the compute dtype unless
        # accelerate's autocast wrapper converts the outputs to fp32 (DeepSpeed and pure half runs have none)
        return "logps"
    if setup.framework == "torchtune":
        return "tt_fp32"
    if setup.framework == "litgpt":
        return "plain"
    remote = _REMOTE_LOSS.get((shape.model_type or "").lower())
    if remote:
        return remote
    ver = _transformers_version(setup)
    if ver and ver < (4, 46):
        return "legacy"
    if ver and ver < (4, 49):
        return "hf_shift"
    return "hf"


def unsloth_loss(setup: TrainingSetup, shape: ModelShape) -> str:
    """The loss unsloth's release computes (its release from the inputs; none stated: today's code).

    Its own forward (llama.py CausalLM_fast_forward) ran fast_cross_entropy_loss on the compute-dtype logits until
    "Cut Cross Entropy" (fa8e59eb, 2024-11-17) made it call Apple's fused_linear_cross_entropy for batches of more
    than 1024 tokens (`if bsz*q_len <= 1024: RETURN_LOGITS = True`, llama.py @6366a476 line 1092; CCE when the
    package imports), and "Nightly (#3148)" (806bee24, 2025-08-13) its own unsloth_fused_ce_loss; from 2025.12 the
    short batches take the fused loss too (llama.py @ad5b2f66 line 1347). Other model types go through unsloth_zoo's
    compiled forward, whose loss is unsloth_fused_ce_loss."""
    ver = _version(setup.mechanisms.unsloth_version)
    if (shape.model_type or "llama").lower() not in _UNSLOTH_OWN_FORWARD:
        return "unsloth_fused"
    if ver and ver < (2024, 11):
        return "unsloth"
    if ver and ver < (2025, 12) and setup.micro_batch * setup.seq_len <= 1024:
        return "unsloth"
    if ver and ver < (2025, 8):
        return "cce"
    return "unsloth_fused"


def unsloth_chunk_tokens(shape: ModelShape, tokens: float) -> float:
    """Tokens in one chunk of unsloth_fused_ce_loss: its own forward passes target_gb=None, half the GPU memory
    free at the first call (cross_entropy_loss.py _get_chunk_multiplier), which the batches here fit in one chunk;
    the compiled forward passes target_gb=1."""
    if (shape.model_type or "llama").lower() in _UNSLOTH_OWN_FORWARD:
        return tokens
    return min(tokens, max(1.0, _UNSLOTH_COMPILED_CHUNK_BYTES / (4.0 * max(1, shape.vocab_size))))


def loss_bytes(setup: TrainingSetup, shape: ModelShape, rg: Regime) -> LossBytes:
    lb = _loss_bytes(setup, shape, rg)
    if lb.regime in ("hf", "hf_shift", "legacy") and (shape.model_type or "").lower() in FINAL_SOFTCAP:
        # the soft-capped logits' tanh output, saved from the forward through the logits' backward
        a = rg.compute_bytes
        return LossBytes(lb.regime, lb.forward + a, lb.backward + a, lb.tokens_term)
    return lb


def _loss_bytes(setup: TrainingSetup, shape: ModelShape, rg: Regime) -> LossBytes:
    a = rg.compute_bytes
    up = 4 if a != 4 else 0                    # an fp32 copy, when the logits are not fp32 already
    regime = loss_regime(setup, shape)
    h = shape.hidden_size
    if regime == "hf":
        return LossBytes(regime, a + up + 4, 12, 0)
    if regime == "hf_shift":
        return LossBytes(regime, a + up + 4 + 4, 12, 0)
    if regime == "legacy":
        # fp32 logits + shifted copy + log-softmax; ChatGLM casts the fp32 logits back for its output
        back = a if (shape.model_type or "").lower() in ("chatglm", "glm") and a != 4 else 0
        return LossBytes(regime, 12 + back, 12, 0)
    if regime == "compute":
        if rg.autocast and a != 4:
            # F.cross_entropy's composite calls log_softmax with the logits' own dtype, which autocast leaves
            # alone (no AutocastCUDA kernel for cross_entropy_loss; log_softmax's fp32_set_opt_dtype policy skips
            # a stated dtype); nll_loss, on autocast's fp32 list, casts the log-probabilities to fp32 and saves
            # that copy (aten/src/ATen/native/LossNLL.cpp cross_entropy_loss_symint, autocast_mode.cpp;
            # tests/test_qwen1_mechanisms.py traces it): logits, shifted copy, log-softmax, fp32 copy. Under the
            # HF Trainer accelerate's native-AMP forward returns its outputs through convert_outputs_to_fp32
            # (accelerate/accelerator.py prepare_model): the logits' fp32 copy joins the saved pair while the
            # compute-dtype logits are still referenced. Backward: the saved pair and nll's fp32 gradient
            forward = 3 * a + 4
            if setup.framework in _HF_TRAINER:
                forward = max(forward, 2 * a + 8)
            return LossBytes(regime, forward, a + 8, 0)
        return LossBytes(regime, 3 * a, 3 * a, 0)
    if regime == "chunked":
        if setup.framework == "torchtune":
            compiled = setup.mechanisms.compiled
            if compiled:
                # compile_loss compiles compute_cross_entropy alone: Inductor fuses the upcast into the
                # log-sum-exp reduction, so each chunk keeps only its compute-dtype logits (and a per-token
                # log-sum-exp); backward's fused kernel writes one chunk's gradient at a time, in the logits'
                # dtype (torchtune training/_compile.py compile_loss, modules/loss/ce_chunked_output_loss.py)
                return LossBytes(regime, a, a + a / TORCHTUNE_CHUNKS, 8)
            # each chunk is upcast and its fp32 log-softmax saved: after the last chunk all of them are
            # alive (4 bytes per logit) beside the compute-dtype chunks
            return LossBytes(regime, a + 4 + 8.0 / TORCHTUNE_CHUNKS, 4 + 12.0 / TORCHTUNE_CHUNKS, 0)
        # LitGPT chunked_cross_entropy: the compute-dtype logits of every 128-token chunk, and each chunk's
        # log-softmax in the same dtype (no upcast); the training loop holds the logits through backward
        return LossBytes(regime, 2 * a, 2 * a, 0)
    if regime == "tt_fp32":
        # the compute-dtype projection is cast and dropped; the fp32 logits stay referenced until the recipe's
        # `del logits` after the loss, beside log_softmax's fp32 output; backward: its gradient and the input
        # gradient beside the saved output (recipes/full_finetune_single_device.py _loss_step)
        return LossBytes(regime, 8, 12, 0)
    if regime in ("plain", "logps"):
        # the framework's own loss on the compute-dtype logits, without an fp32 upcast (DPO: the logits and
        # every row's log-softmax output; backward: that output, its gradient and the logits' gradient); DPO
        # takes the logits as the model returns them, fp32 from a forward that upcasts them itself
        r = returned_logit_bytes(setup, shape, rg) if regime == "logps" else a
        return LossBytes(regime, 2 * r, 3 * r, 0)
    if regime == "verl":
        # utils/torch_functional.py:72 logprobs_from_logits (flash-attn cross entropy, inplace_backward when no
        # entropy is computed); with entropy_coeff != 0 (actor.yaml default 0) the logits' gradient gets its own
        # buffer, and eager entropy_from_logits (:224, use_torch_compile off) saves the softmax and its product
        # with the logits; compiled (dp_actor.py:86-90, the default) Inductor fuses them into the reductions
        mech = setup.mechanisms
        if mech.update_entropy:
            return LossBytes(regime, 3 * a, 4 * a, 0) if mech.entropy_eager else LossBytes(regime, a, 2 * a, 0)
        return LossBytes(regime, a, a, 0)
    kernel = _kernel_loss_bytes(regime, a, h)
    if kernel is not None:
        return kernel
    # fused linear cross-entropy (Liger): per chunk of tokens fp32 logits and their gradient; the gradient of
    # the hidden states for all tokens (liger_kernel/ops/fused_linear_cross_entropy.py, chunk size
    # next_power_of_2(tokens / ceil(vocab / hidden)))
    return LossBytes(regime, 0, 0, 4 * h)


def _kernel_loss_bytes(regime: str, a: int, h: int) -> LossBytes | None:
    """The losses computed by one kernel of their own (Cut Cross-Entropy, unsloth's), or None."""
    if regime == "cce":
        return LossBytes(regime, 0, 0, 4 * h)
    if regime == "unsloth":
        # the compute-dtype logits, saved for the kernel's backward, which overwrites them with their gradient
        return LossBytes(regime, a, a, 0)
    if regime == "unsloth_fused":
        # every token's hidden-state gradient in the hidden states' dtype; the chunks' logits are added by
        # the estimate (unsloth_chunk_tokens)
        return LossBytes(regime, 0, 0, a * h)
    return None


def returned_logit_bytes(setup: TrainingSetup, shape: ModelShape, rg: Regime) -> float:
    """Bytes per element of the logits the causal-LM forward returns: fp32 where the forward calls
    logits.float() itself (transformers <= 4.45, and remote code written the same way: the "legacy" models
    above), the compute dtype otherwise."""
    remote = _REMOTE_LOSS.get((shape.model_type or "").lower())
    if remote:
        return 4.0 if remote == "legacy" else float(rg.compute_bytes)
    ver = _transformers_version(setup)
    return 4.0 if ver and ver < (4, 46) else float(rg.compute_bytes)


def fused_chunk_tokens(tokens: float, shape: ModelShape) -> float:
    """Tokens in one chunk of Liger's fused linear cross-entropy."""
    inc = max(1, -(-shape.vocab_size // max(1, shape.hidden_size)))
    chunk = max(1.0, tokens / inc)
    return min(tokens, float(1 << (int(chunk) - 1).bit_length()))
