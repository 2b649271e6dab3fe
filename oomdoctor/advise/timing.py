"""Step time and run time from the work a step does: an estimate, with every assumption named.

Work per token (matmul FLOPs, Kaplan et al. 2020 §2.1 "C = 6N"): forward 2N, backward 4N (gradients of
the activations 2N and of the weights 2N). LoRA: the frozen weights need only the activation gradients
(2N); the adapters cost 6 per adapter parameter. Gradient checkpointing runs the forward once more.
Causal attention adds 2 * seq * q_dim per token and layer forward (QK^T and AV, half the square masked).
Time = work / (dense bf16 peak * MFU), with data-parallel scaling and offload traffic on top.
"""
from __future__ import annotations

from dataclasses import dataclass

from oomdoctor.facts import ModelShape, Msg, TrainingSetup, msg

# Model FLOPs utilisation assumed for a fine-tune with HF-style kernels: 35-45% is what well-tuned
# LLaMA-Factory / DeepSpeed runs report on A100/H100; smaller batches and consumer cards do worse.
MFU = 0.40
# fp32 matmuls without TF32 (PyTorch's default since 1.12) run far below the tensor-core bf16 rate.
FP32_SPEED_FRACTION = 1 / 8
# Data-parallel efficiency: DDP/ZeRO-1/2 move the gradients once (2x params per step, overlapped with
# backward); ZeRO-3/FSDP move 1.5x that (parameters gathered again in backward; ZeRO paper §7.2.2).
DP_EFFICIENCY = {"nvlink": (0.95, 0.85), "pcie": (0.85, 0.65)}     # (DDP/ZeRO-1/2, ZeRO-3/FSDP)
# DeepSpeed CPU-Adam updates about this many parameters per second on a many-core server (all ranks of a
# node share the cores). Derived from the one measured A/B in docs/reference/remedy-costs.md §1 (chenyaofo
# gist: LLaMA-7B full fine-tune, 8xA800, seq 4096, ZeRO-2 micro-batch 1: optimizer offload 2.2-2.3x the
# step time): at this model's own compute time for that run (1.4 s), 2.3x leaves ~1.7 s for 6.7e9 updates.
CPU_ADAM_PARAMS_PER_S = 4.0e9
# Small micro-batches leave the GPU partly idle (remedy-costs.md §2.1: bs 4 -> 1x4 cost 1.14x on BERT-L,
# seq 512; at >= ~4k tokens a micro-batch saturates the card). Utilisation t / (t + SATURATION_TOKENS),
# relative to a 4096-token micro-batch: 1.14x between 2048 and 512 tokens gives ~100; rounded up to 128.
SATURATION_TOKENS = 128
SATURATED_TOKENS = 4096
# Naive model parallel hands activations from card to card; the transfer is small next to the idle time.
NAIVE_MP_TRANSFER_FACTOR = 0.97


def utilisation(micro_tokens: float) -> float:
    """The share of MFU a micro-batch of `micro_tokens` reaches, 1.0 from SATURATED_TOKENS on."""
    full = SATURATED_TOKENS / (SATURATED_TOKENS + SATURATION_TOKENS)
    t = max(1.0, float(micro_tokens))
    return min(1.0, t / (t + SATURATION_TOKENS) / full)


@dataclass(frozen=True)
class Work:
    """FLOPs per trained token (a DPO pair counts its chosen and rejected tokens)."""

    forward: float
    backward: float
    recompute: float

    @property
    def total(self) -> float:
        return self.forward + self.backward + self.recompute


def _matmul_params(shape: ModelShape) -> tuple[float, float, int]:
    """(active matmul parameters per token incl. lm_head, q_dim * layers, layers)."""
    from oomdoctor.memory import count_params

    counts = count_params(shape)
    n_mm = float(counts.linear_total or counts.total)
    if shape.num_experts and counts.experts:
        # only experts_per_token of the routed experts work on a token
        routed_frac = max(0, shape.experts_per_token) / max(1, shape.num_experts)
        n_mm -= counts.experts * (1.0 - routed_frac)
    q_dim = shape.num_heads * shape.head_dim_
    return n_mm, float(q_dim * shape.num_layers), shape.num_layers


def work_per_token(setup: TrainingSetup, shape: ModelShape) -> Work:
    from oomdoctor.memory import trainable_params

    n_mm, q_layers, layers = _matmul_params(shape)
    attn_fwd = 2.0 * setup.seq_len * q_layers            # causal: QK^T and AV, 2 FLOPs per MAC, half masked
    fwd_base = 2.0 * n_mm + attn_fwd
    method = setup.method
    if method in ("lora", "qlora"):
        adapters = float(trainable_params(setup, shape))
        forward = fwd_base + 2.0 * adapters
        backward = 2.0 * n_mm + 2.0 * attn_fwd + 4.0 * adapters
        recompute = forward if setup.grad_ckpt else 0.0
    elif method == "freeze":
        frac = min(abs(setup.freeze_trainable_layers), layers) / max(1, layers)
        forward = fwd_base
        backward = frac * 2.0 * fwd_base                  # only the trained layers run backward
        recompute = frac * fwd_base if setup.grad_ckpt else 0.0
    else:
        forward = fwd_base
        backward = 2.0 * fwd_base
        recompute = fwd_base if setup.grad_ckpt else 0.0
    if setup.stage in ("dpo", "kto") and not setup.mechanisms.ref_log_probs_precomputed:
        forward += fwd_base                               # the reference model's forward on the same tokens
    return Work(forward=forward, backward=backward, recompute=recompute)


def total_tokens(setup: TrainingSetup, tokens: float | None = None) -> tuple[float | None, Msg]:
    """Tokens the run trains on, and a sentence (words code) saying where the number comes from."""
    if tokens is not None:
        return float(tokens), msg("advise.tokens.flag", n=float(tokens))
    mech = setup.mechanisms
    seq = setup.seq_len
    max_steps = mech.max_steps
    if max_steps and max_steps > 0:
        n = max_steps * setup.effective_batch * seq
        return float(n), msg("advise.tokens.max_steps", n=float(n), steps=max_steps, eb=setup.effective_batch,
                             seq=seq)
    samples = mech.max_samples
    epochs = mech.epochs
    if samples:
        epochs = epochs if epochs is not None else 3.0
        n_tokens = samples * epochs * seq
        code = "advise.tokens.samples_packed" if setup.packing else "advise.tokens.samples"
        return float(n_tokens), msg(code, n=float(n_tokens), samples=samples, epochs=epochs, seq=seq)
    return None, msg("advise.tokens.unknown")


@dataclass(frozen=True)
class StepTime:
    step_s: float                   # one optimizer step (grad_accum micro-batches on every card)
    tokens_per_step: float          # tokens all cards train on in one optimizer step
    compute_s: float
    offload_s: float                # PCIe traffic and CPU Adam not hidden behind compute
    reasons: tuple[Msg, ...]
    recompute_frac: float = 0.0     # extra work of gradient checkpointing, over forward + backward

    @property
    def tokens_per_s(self) -> float:
        return self.tokens_per_step / self.step_s if self.step_s else 0.0


def step_time(setup: TrainingSetup, shape: ModelShape, spec, n_gpus: int, *, naive_mp: bool = False,
              mfu: float = MFU) -> StepTime | None:
    """Seconds per optimizer step on `n_gpus` cards of `spec` (a GpuSpec); None without the card's speed."""
    from oomdoctor.advise.cards import nvlink, pcie_bytes_per_s
    from oomdoctor.memory import count_params, trainable_params

    if spec is None or not getattr(spec, "bf16_tflops", 0):
        return None
    reasons: list[Msg] = []
    flops_per_s = spec.bf16_tflops * 1e12 * mfu
    if setup.precision in ("fp32", "no", "float32"):
        flops_per_s *= FP32_SPEED_FRACTION
        reasons.append(msg("advise.why.fp32", n=round(1 / FP32_SPEED_FRACTION)))
    n = max(1, n_gpus)
    pair = 2 if setup.stage in ("dpo", "kto", "orpo", "simpo") else 1
    micro_tokens = setup.micro_batch * setup.seq_len            # per card per micro-batch
    work = work_per_token(setup, shape)
    compute_s = work.total * pair * micro_tokens * setup.grad_accum / flops_per_s / utilisation(micro_tokens)
    data_cards = 1 if naive_mp else n
    if naive_mp and n > 1:
        compute_s /= NAIVE_MP_TRANSFER_FACTOR
        reasons.append(msg("advise.why.naive_mp", n=n))
    elif n > 1:
        sharded = setup.zero_stage >= 3 or (setup.fsdp or "").lower() in ("full_shard", "hybrid_shard")
        ddp_eff, z3_eff = DP_EFFICIENCY["nvlink" if nvlink(spec) else "pcie"]
        eff = z3_eff if sharded else ddp_eff
        compute_s /= eff
        link = msg("advise.link.nvlink" if nvlink(spec) else "advise.link.pcie")
        reasons.append(msg("advise.why.scaling_gather" if sharded else "advise.why.scaling_reduce", n=n, eff=eff,
                           link=link))
    offload_s = 0.0
    pcie = pcie_bytes_per_s(spec)
    if setup.offload_optimizer and setup.zero_stage >= 1 or (setup.offload_params and setup.fsdp):
        T = float(trainable_params(setup, shape))
        # half-precision gradients out to the host and updated half-precision weights back, per card
        moved = 4.0 * T / n
        cpu_s = T / CPU_ADAM_PARAMS_PER_S
        offload_s += moved / pcie + cpu_s
        reasons.append(msg("advise.why.offload_optimizer", gb=moved / 1e9, bparams=T / 1e9, s=moved / pcie + cpu_s))
    if setup.offload_params and (setup.zero_stage >= 3 or setup.fsdp):
        P = float(count_params(shape).total)
        passes = 2 + (1 if setup.grad_ckpt else 0)          # forward, backward (+ recompute)
        moved = 2.0 * P / n * passes * setup.grad_accum
        offload_s += moved / pcie
        reasons.append(msg("advise.why.offload_params", passes=passes, gb=moved / 1e9, s=moved / pcie))
    step_s = compute_s + offload_s
    tokens_per_step = float(micro_tokens * setup.grad_accum * data_cards)
    return StepTime(step_s=step_s, tokens_per_step=tokens_per_step, compute_s=compute_s, offload_s=offload_s,
                    reasons=tuple(reasons), recompute_frac=work.recompute / (work.forward + work.backward))


def run_hours(total: float | None, st: StepTime | None) -> float | None:
    if total is None or st is None or st.tokens_per_s <= 0:
        return None
    return total / st.tokens_per_s / 3600.0
