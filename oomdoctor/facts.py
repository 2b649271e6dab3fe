"""Plain data passed between the pipeline's stages.

inputs (crash log, config files, model shape, GPU) -> facts -> estimate -> plan -> views.
Every stage takes and returns these frozen dataclasses; no stage reads another stage's files.
Sizes are GiB (2**30 bytes) floats unless a name says otherwise.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field, replace
from functools import cached_property
from typing import Any, Literal

from oomdoctor.records import record

GIB = float(1 << 30)

# ---------------------------------------------------------------- closed vocabularies

# The frameworks a setup is read as: the config readers' FRAMEWORK names and their entry points' own
# (configs/entries.py: ms-swift, openrlhf), and the two the accuracy benchmark names from its sources
# (benchmarks/accuracy.py: LitGPT, Answer.AI's fsdp_qlora train.py), whose regimes the memory model knows.
Framework = Literal["llamafactory", "hf", "trl", "axolotl", "torchtune", "ms-swift", "openrlhf", "litgpt",
                    "fsdp_qlora", "verl", "mlx-lm"]
# How the model trains: every weight, the last (or first) layers only, LoRA adapters, LoRA on quantized weights.
Method = Literal["full", "freeze", "lora", "qlora"]
# The mixed-precision compute dtype asked for.
Precision = Literal["bf16", "fp16", "fp32"]
# Where in a run memory ran out (the crash log's phase words, words/crash.py "crash.phase.*"); an estimate's
# peak is "train" or "eval".
Phase = Literal["data", "load", "zero_init", "forward", "loss", "backward", "optimizer", "train", "eval", "save",
                "generate"]
# What ran out, by the message that says so (crashlog/formats.py; words/crash.py "crash.kind.*").
CrashKind = Literal["cuda_oom", "hip_oom", "npu_oom", "xpu_oom", "mps_oom", "mlx_oom", "hpu_oom", "xla_oom", "tf_oom",
                    "cublas_alloc", "cudnn_alloc", "nccl_oom", "bnb_alloc", "vllm_cache", "batch_size_exhausted",
                    "save_clone_oom", "host_oom"]

# ---------------------------------------------------------------- words as data

@record
class Msg:
    """A sentence as data: a code that oomdoctor/words/ renders in the user's language, and the
    values it quotes. Facts carry these, never finished sentences."""

    code: str                                   # "crash.note.big_log": first segment names the table
    args: tuple[tuple[str, Any], ...] = ()      # sorted (name, value) pairs; a value may be a Msg

    @property
    def values(self) -> dict[str, Any]:
        return dict(self.args)


def msg(code: str, **values: Any) -> Msg:
    """`msg("crash.note.big_log", mib=1024)`: a Msg with its values in a stable order."""
    return Msg(code, tuple(sorted(values.items())))


@record
class Text:
    """A text a data file gives in both languages (a rule's title, why, costs, notes); words.say renders it
    like a Msg. Facts built from oomdoctor's own words carry a Msg instead."""

    en: str
    zh: str | None = None       # None: the file gave English only, shown in both languages

    def get(self, lang: str = "en") -> str:
        return (self.zh if lang == "zh" else None) or self.en


# ---------------------------------------------------------------- provenance

@record
class Source:
    """Where one value of the setup came from: a file position, or a framework default."""

    file: str | None = None      # path as the user gave it (or as resolved relative to the config)
    key: str | None = None       # dotted key path inside that file, e.g. "zero_optimization.stage"
    line: int | None = None      # 1-based line of the value, when known
    default: Msg | None = None   # whose default it is, or why the file's value was not taken (words/config.py
                                 # "config.default.*": "default of LLaMA-Factory 0.9.4", ...)

    def describe(self) -> Msg:
        """Where the value came from, as words: "train.yaml:12 (cutoff_len)", "default of axolotl 0.18"."""
        if self.file:
            where = self.file + (f":{self.line}" if self.line else "")
            at = msg("config.source.key", where=where, key=self.key) if self.key else msg("config.source.file",
                                                                                        where=where)
            return msg("config.source.why", where=at, why=self.default) if self.default is not None else at
        return self.default or msg("common.unknown")


# ---------------------------------------------------------------- framework mechanisms

@record
class Mechanisms:
    """The framework mechanisms the memory model reads, typed, from the config keys each framework names them by.

    `mechanisms_of` is the one place that knows those keys; the memory model reads these fields only.
    """

    # PEFT modules_to_save (LLaMA-Factory additional_target, axolotl lora_modules_to_save): modules trained whole
    modules_to_save: tuple[str, ...] = ()
    # 4-bit absmax constants quantized again: LLaMA-Factory double_quantization, axolotl bnb_4bit_use_double_quant,
    # TRL use_bnb_nested_quant, LitGPT quantize "bnb.nf4-dq"; None: the framework's default
    double_quant: bool | None = None
    quant_method: str = "bnb"                 # bnb | bitsandbytes | nf4 | fp4 | gptq | awq ...
    adapter_dtype: str = ""                   # an explicit adapter dtype (bf16, fp16): PEFT's fp32 upcast is off
    lora_dropout: float = 0.0
    use_reentrant: bool | None = None         # gradient_checkpointing_kwargs' use_reentrant, when given
    reentrant_default: bool = True            # LLaMA-Factory use_reentrant_gc (its default for the variant)
    activation_offload: bool = False          # torchtune enable_activation_offloading, TRL/axolotl activation_offloading
    optimizer_in_backward: bool = False       # torchtune optimizer_in_bwd
    compiled: bool = False                    # torchtune compile
    loss: str = ""                            # the loss implementation named by the config (cce, chunked, ...)
    transformers_version: str = ""            # as the inputs state it
    bitsandbytes_version: str = ""            # as the inputs state it (a pin of the framework that ran)
    swift_version: str = ""                   # ms-swift, as the inputs state it
    momentum: float = 0.0                     # SGD momentum
    ref_log_probs_precomputed: bool = False   # TRL precompute_ref_log_probs: no reference model during training
    fixed_length: bool = False                # every batch padded to one length
    expandable_segments: bool = False         # PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
    empty_cache_steps: bool = False           # HF torch_empty_cache_steps
    experts_quantized_on_load: bool = False   # axolotl quantize_moe_experts: 3-D experts dequantized on access
    fsdp_version: int = 1                     # axolotl/accelerate fsdp_version: 2 is torch's fully_shard (FSDP2)
    loss_scale: str = ""                      # ms-swift --loss_scale (hermes, react, last_round+qwen, ...)
    keeps_outputs: bool = False               # the training loop holds the model's outputs through backward and step
    # torch's selective activation checkpointing with torchtitan's op policy (activation_checkpoint mode "selective",
    # selective_ac_option "op"): a checkpointed block also keeps every other matmul's output and the attention's
    selective_ac_op: bool = False
    # Liger-Kernel's RMSNorm and SwiGLU/GeGLU modules in place of the model's (its whole-model patch: HF Trainer and
    # TRL use_liger_kernel, LLaMA-Factory enable_liger_kernel, ms-swift and OpenRLHF use_liger_kernel; axolotl's
    # liger_rms_norm and liger_glu_activation one by one)
    liger_norm: bool = False
    liger_glu: bool = False
    # unsloth (setup.use_unsloth): its release where the inputs state it ("" : today's code), and its offloaded
    # checkpointing, use_gradient_checkpointing="unsloth" (True is torch's reentrant checkpoint:
    # unsloth/models/_utils.py prepare_model_for_kbit_training @0927c343), which LLaMA-Factory's use_unsloth_gc
    # copies for any model (src/llamafactory/model/model_utils/checkpointing.py get_unsloth_gradient_checkpointing_func)
    unsloth_version: str = ""
    unsloth_offload: bool = False
    # DeepSpeed ZeRO buckets (elements); None: DeepSpeed's default
    zero_live_parameters: float = 1e9         # stage3_max_live_parameters
    zero_prefetch_bucket: float | None = None  # stage3_prefetch_bucket_size
    zero_reduce_bucket: float | None = None   # reduce_bucket_size
    zero_allgather_bucket: float | None = None  # allgather_bucket_size
    zero_overlap_comm: bool | None = None     # overlap_comm
    zero_contiguous_grads: bool | None = None  # contiguous_gradients
    weight_decay: float = 0.0
    # the run's length, for the advisor's time and cost: max_steps; max_samples (LLaMA-Factory) or num_examples;
    # num_train_epochs (HF), num_epochs (axolotl) or epochs (torchtune)
    max_steps: int | None = None
    max_samples: int | None = None
    epochs: float | None = None
    # PEFT's adapter type (PeftConfig.peft_type: IA3, VERA, PREFIX_TUNING, PROMPT_TUNING, P_TUNING; "" for LoRA
    # and the types estimated as LoRA), its virtual tokens (num_virtual_tokens, ChatGLM's pre_seq_len) and
    # IA3's feedforward_modules (empty: PEFT's default for the model type)
    peft_type: str = ""
    virtual_tokens: int = 0
    ia3_feedforward: tuple[str, ...] = ()
    # LLaMA-Factory's memory-efficient optimizer switches (hparams/finetuning_args.py): the projection ranks
    # (None: the framework's default), the layer-wise variants, Adam-mini and Muon (memory/optimizers.py)
    galore_rank: int | None = None
    apollo_rank: int | None = None
    galore_layerwise: bool = False
    apollo_layerwise: bool = False
    adam_mini: bool = False
    muon: bool = False
    # verl's hybrid engine (configs/verl.py): the rollout engine colocated on every training GPU in its own process
    rollout_engine: str = ""                  # vllm | sglang ("" or hf: no separate engine on the card)
    rollout_gpu_fraction: float = 0.5         # rollout.gpu_memory_utilization
    rollout_sleeps: bool = True               # rollout.free_cache_engine: weights and KV cache freed after rollout
    phase_offload: bool = False               # verl's actor param/optimizer offload: between phases, not in the update
    log_prob_micro_batch: int = 0             # rollout.log_prob_micro_batch_size_per_gpu (old log-probs, entropy)
    ref_log_prob_micro_batch: int = 0         # ref.log_prob_micro_batch_size_per_gpu
    ref_model_offloaded: bool = False         # a separate reference model, FSDP CPU-offloaded (verl forces it)
    log_prob_fused: bool = False              # model.use_fused_kernels: log-probs and entropy without full logits
    update_entropy: bool = False              # actor.entropy_coeff != 0: the update computes the entropy too
    entropy_eager: bool = False               # actor.use_torch_compile false: the entropy's softmax materialised
    critic: bool = False                      # a critic model trained on the same GPUs (verl adv_estimator gae)
    critic_offload_params: bool = False       # critic.model.fsdp_config.param_offload
    critic_offload_optimizer: bool = False    # critic.model.fsdp_config.optimizer_offload
    # verl's sequence packing (model.use_remove_padding, on by default) and token-budget micro-batches
    # (actor.use_dynamic_bsz): the update's micro-batch holds up to token_budget tokens per GPU
    remove_padding: bool = False              # model.use_remove_padding: only the real tokens reach the model
    dynamic_bsz: bool = False                 # actor.use_dynamic_bsz
    token_budget: int = 0                     # actor.ppo_max_token_len_per_gpu (with dynamic_bsz)
    budget_micro_batch: int = 0               # the micro-batch the file states beside that budget
    log_prob_token_budget: int = 0            # rollout.log_prob_max_token_len_per_gpu when its dynamic bsz is on
    ref_log_prob_token_budget: int = 0        # ref.log_prob_max_token_len_per_gpu when its dynamic bsz is on
    mini_batch_per_rank: int = 0              # sequences of one update's mini-batch on a data-parallel rank
    batch_per_rank: int = 0                   # sequences of the log-prob passes' batch on a data-parallel rank


def _flag_on(value: Any) -> bool:
    """A config flag as written (True, "true", "True", 1)."""
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes", "on")
    return bool(value)


def _number(value: Any, default: float | None) -> float | None:
    """A number as written; an unreadable one (DeepSpeed's "auto") counts as unset."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def _float(value: Any, default: float) -> float:
    number = _number(value, default)
    return default if number is None else number


def _bucket(extras: Mapping[str, Any], key: str) -> float | None:
    if key not in extras:
        return None
    return _number(extras[key] or 0, None)


def _first(extras: Mapping[str, Any], keys: tuple[str, ...], read: Any) -> Any:
    """The first of `keys` the config states, read by `read`; None when none is, or it cannot be read."""
    for key in keys:
        value = extras.get(key)
        if value is not None:
            try:
                return read(value)
            except (TypeError, ValueError):
                return None
    return None


def _whole(value: Any) -> int:
    return int(float(value))


def mechanisms_of(extras: Mapping[str, Any], loss: str = "") -> Mechanisms:
    """The mechanisms a setup's framework keys (kept in `TrainingSetup.extras` by the readers) turn on; `loss`
    is the setup's `loss_kernel`."""
    e = extras or {}
    names = _names(e.get("modules_to_save") or e.get("additional_target") or e.get("lora_modules_to_save"))
    double_quant = None
    for key in ("double_quantization", "bnb_4bit_use_double_quant", "use_bnb_nested_quant"):
        if e.get(key) is not None:
            double_quant = str(e[key]).strip().lower() in ("true", "1", "yes", "on")
            break
    quantize = str(e.get("quantize") or "").lower()
    if double_quant is None and quantize.startswith("bnb."):
        double_quant = quantize.endswith("-dq")
    kwargs = e.get("gradient_checkpointing_kwargs")
    use_reentrant = bool(kwargs["use_reentrant"]) if isinstance(kwargs, dict) and "use_reentrant" in kwargs else None
    adapter_dtype = e.get("adapter_dtype")
    return Mechanisms(
        modules_to_save=names, double_quant=double_quant,
        quant_method=str(e.get("quant_method")) if e.get("quant_method") else "bnb",
        adapter_dtype=adapter_dtype if isinstance(adapter_dtype, str) else "",
        lora_dropout=_float(e.get("lora_dropout", 0) or 0, 0.0),
        use_reentrant=use_reentrant, reentrant_default=bool(e.get("use_reentrant_gc", True)),
        activation_offload=_flag_on(e.get("activation_offloading", False)) or _flag_on(e.get("activation_offload", False)),
        optimizer_in_backward=_flag_on(e.get("optimizer_in_bwd", False)), compiled=_flag_on(e.get("compile", False)),
        loss=loss.lower(), transformers_version=str(e.get("transformers_version") or ""),
        bitsandbytes_version=str(e.get("bitsandbytes_version") or ""),
        swift_version=str(e.get("swift_version") or ""), momentum=_float(e.get("momentum", 0) or 0, 0.0),
        ref_log_probs_precomputed=bool(e.get("precompute_ref_log_probs", False)),
        fixed_length=bool(e.get("fixed_length", False)), expandable_segments=bool(e.get("expandable_segments", False)),
        empty_cache_steps=bool(e.get("torch_empty_cache_steps")),
        experts_quantized_on_load=_flag_on(e.get("quantize_moe_experts", False)),
        fsdp_version=_first(e, ("fsdp_version",), _whole) or 1,
        loss_scale=str(e.get("loss_scale") or "").strip().lower(),
        keeps_outputs=_flag_on(e.get("keeps_model_outputs", False)),
        selective_ac_op=str(e.get("selective_ac_option") or "").strip().lower() == "op",
        liger_norm=_liger(e, "liger_rms_norm"), liger_glu=_liger(e, "liger_glu_activation"),
        unsloth_version=str(e.get("unsloth_version") or ""),
        unsloth_offload=(str(e.get("use_gradient_checkpointing") or "").strip().lower() == "unsloth"
                         or _flag_on(e.get("use_unsloth_gc", False))),
        zero_live_parameters=_float(e.get("stage3_max_live_parameters", 1e9) or 1e9, 1e9),
        zero_prefetch_bucket=_bucket(e, "stage3_prefetch_bucket_size"),
        zero_reduce_bucket=_bucket(e, "reduce_bucket_size"),
        zero_allgather_bucket=_bucket(e, "allgather_bucket_size"),
        zero_overlap_comm=bool(e["overlap_comm"]) if "overlap_comm" in e else None,
        zero_contiguous_grads=bool(e["contiguous_gradients"]) if "contiguous_gradients" in e else None,
        weight_decay=_float(e.get("weight_decay", 0.0) or 0.0, 0.0),
        max_steps=_first(e, ("max_steps",), _whole), max_samples=_first(e, ("max_samples", "num_examples"), _whole),
        epochs=_first(e, ("num_train_epochs", "num_epochs", "epochs"), float),
        peft_type=_peft_type(e.get("peft_type")),
        virtual_tokens=_first(e, ("num_virtual_tokens", "prefix_tokens"), _whole) or 0,
        ia3_feedforward=_names(e.get("feedforward_modules")),
        rollout_engine=str(e.get("rollout_engine") or "").strip().lower(),
        rollout_gpu_fraction=_float(e.get("rollout_gpu_memory_utilization", 0.5), 0.5),
        rollout_sleeps=_flag_on(e.get("verl_free_cache_engine", True)),
        phase_offload=_flag_on(e.get("verl_phase_offload", False)),
        log_prob_micro_batch=_first(e, ("verl_log_prob_micro_batch",), _whole) or 0,
        ref_log_prob_micro_batch=_first(e, ("verl_ref_log_prob_micro_batch",), _whole) or 0,
        ref_model_offloaded=_flag_on(e.get("verl_ref_offloaded", False)),
        log_prob_fused=_flag_on(e.get("verl_use_fused_kernels", False)),
        update_entropy=_flag_on(e.get("verl_update_entropy", False)),
        entropy_eager=_flag_on(e.get("verl_entropy_eager", False)),
        critic=_flag_on(e.get("verl_critic", False)),
        critic_offload_params=_flag_on(e.get("verl_critic_offload_params", False)),
        galore_rank=_first(e, ("galore_rank",), _whole), apollo_rank=_first(e, ("apollo_rank",), _whole),
        galore_layerwise=_flag_on(e.get("galore_layerwise", False)),
        apollo_layerwise=_flag_on(e.get("apollo_layerwise", False)),
        adam_mini=_flag_on(e.get("use_adam_mini", False)), muon=_flag_on(e.get("use_muon", False)),
        critic_offload_optimizer=_flag_on(e.get("verl_critic_offload_optimizer", False)),
        remove_padding=_flag_on(e.get("use_remove_padding", False)),
        dynamic_bsz=_flag_on(e.get("verl_dynamic_bsz", False)),
        token_budget=_first(e, ("max_token_len_per_gpu",), _whole) or 0,
        budget_micro_batch=_first(e, ("verl_budget_micro_batch",), _whole) or 0,
        log_prob_token_budget=_log_prob_budget(e, "verl_log_prob"),
        ref_log_prob_token_budget=_log_prob_budget(e, "verl_ref_log_prob"),
        mini_batch_per_rank=_first(e, ("verl_mini_batch_per_rank",), _whole) or 0,
        batch_per_rank=_first(e, ("verl_batch_per_rank",), _whole) or 0)


# verl's log-prob passes follow the actor's dynamic batching unless told otherwise:
# log_prob_use_dynamic_bsz ${actor.use_dynamic_bsz}, log_prob_max_token_len_per_gpu ${actor.ppo_max_token_len_per_gpu}
# (verl/trainer/config/_generated_ppo_trainer.yaml:134-135, 220-221 @b178a3cd; actor default 16384, :54)
VERL_TOKEN_BUDGET_DEFAULT = 16384


def _log_prob_budget(e: Mapping[str, Any], prefix: str) -> int:
    """Tokens per GPU of a verl log-prob micro-batch under dynamic batching; 0 when it splits by sequences."""
    dynamic = e.get(f"{prefix}_dynamic_bsz", e.get("verl_dynamic_bsz", False))
    if not _flag_on(dynamic):
        return 0
    return (_first(e, (f"{prefix}_max_token_len", "max_token_len_per_gpu"), _whole) or VERL_TOKEN_BUDGET_DEFAULT)


# Frameworks whose fused-loss key (the one the plan sets for fused_ce) is Liger-Kernel's whole-model patch:
# LLaMA-Factory enable_liger_kernel (model/model_utils/liger_kernel.py `apply_liger_kernel(**kwargs)` with Liger's
# defaults: rope, rms_norm, swiglu and the fused linear cross entropy), the HF Trainer's use_liger_kernel (trainer.py _apply_liger_kernel_to_instance)
# that TRL, ms-swift and OpenRLHF pass on; axolotl's fused loss is its own key beside liger_rms_norm/liger_glu_activation
LIGER_WHOLE_MODEL = frozenset({"llamafactory", "hf", "trl", "ms-swift", "openrlhf"})


def _liger(extras: Mapping[str, Any], own_key: str) -> bool:
    """Whether Liger-Kernel replaces one kind of module: its whole-model patch (the frameworks' one switch, which
    applies every default kernel: liger_kernel/transformers/monkey_patch.py apply_liger_kernel_to_llama(rope=True,
    rms_norm=True, swiglu=True, ...)) or the framework's key for that kernel alone (axolotl's)."""
    if _flag_on(extras.get("liger_loss_only", False)):
        return False        # the loss kernel alone (a trace that cannot run Liger's Triton layers: simulate/verify.py)
    return any(_flag_on(extras.get(k, False)) for k in ("use_liger_kernel", "enable_liger_kernel", own_key))


def _peft_type(value: Any) -> str:
    """PEFT's type name, upper case; LoRA (the default every reader assumes) as ""."""
    kind = str(value or "").strip().upper()
    return "" if kind == "LORA" else kind


def _names(value: Any) -> tuple[str, ...]:
    """Module names as a config lists them (a list, or one comma-separated string)."""
    if isinstance(value, str):
        return tuple(x.strip() for x in value.split(",") if x.strip())
    return tuple(str(x) for x in value or ())


# ---------------------------------------------------------------- training setup

@record
class TrainingSetup:
    """One training run, normalised across frameworks.

    Fields hold what the user *asked for*; the dtypes tensors really live in are derived from
    these by the memory model's regime rules (framework + version + flags), not stored here.
    `sources` maps a field name to where its value came from; fields absent from `sources`
    are framework defaults described by `defaults_of`.
    """

    framework: Framework = "llamafactory"
    framework_version: str = ""         # version assumed for defaults, e.g. "0.9.4"
    config_file: str | None = None      # the main config file
    deepspeed_file: str | None = None   # DeepSpeed JSON, when one is used
    model: str = ""                     # hub id or local path as written in the config
    stage: str = "sft"                  # as the framework names it: pt, sft, rm, dpo, kto, ppo, orpo, ...
    method: Method = "full"
    lora_rank: int = 8
    lora_alpha: int | None = None
    lora_targets: tuple[str, ...] = ("all",)   # module names, or ("all",) for every linear but lm_head
    use_dora: bool = False
    freeze_trainable_layers: int = 2    # freeze method: this many last (>0) or first (<0) layers train
    quant_bits: int | None = None       # 4 (bnb NF4) or 8 (bnb int8) for QLoRA, None otherwise
    micro_batch: int = 1                # per-device train batch size
    grad_accum: int = 1
    seq_len: int = 2048                 # cutoff_len / sequence_len / max_length
    packing: bool = False
    precision: Precision = "bf16"       # mixed-precision compute dtype asked for
    pure_bf16: bool = False             # LLaMA-Factory pure_bf16 (no fp32 upcast of trainables)
    load_dtype: str | None = None       # explicit model load dtype (axolotl/torchtune dtype, TRL dtype); None = framework rule
    optimizer: str = "adamw_torch"      # HF optim names: adamw_torch, adamw_torch_fused, adamw_8bit, paged_adamw_8bit, adafactor, sgd, lion_32bit, ...
    grad_ckpt: bool = True
    attention: str = "sdpa"             # eager | sdpa | fa2
    fused_ce: bool = False              # Liger fused linear cross-entropy or chunked CE: no full fp32 logits
    zero_stage: int = 0                 # DeepSpeed ZeRO stage, 0 = none
    offload_optimizer: bool = False     # DeepSpeed/FSDP optimizer offload to CPU
    offload_params: bool = False        # DeepSpeed ZeRO-3/FSDP parameter offload to CPU
    fsdp: str | None = None             # full_shard | shard_grad_op | hybrid_shard | None
    n_gpus: int = 1                     # GPUs taking part (world size)
    seq_parallel: int = 1               # GPUs one sequence is split across (sequence / context parallelism)
    do_eval: bool = False
    eval_batch: int = 8                 # per_device_eval_batch_size
    eval_accum: int | None = None       # eval_accumulation_steps
    galore: bool = False
    badam: bool = False
    apollo: bool = False
    use_unsloth: bool = False
    # Megatron-Core's own parallelism (ms-swift `megatron sft|pt|rlhf`, verl's megatron strategy); defaults are
    # Megatron-LM's (megatron/training/arguments.py: sizes 1, --sequence-parallel and --use-distributed-optimizer
    # off, no recompute); ms-swift's differ (swift/megatron/arguments/megatron_args.py: distributed optimizer on,
    # recompute_granularity selective) and are filled by its reader with their source.
    megatron: bool = False              # the model is Megatron-Core's, split by the sizes below (not DeepSpeed/FSDP)
    tensor_parallel: int = 1            # --tensor_model_parallel_size: every linear weight split over this many GPUs
    pipeline_parallel: int = 1          # --pipeline_model_parallel_size: the layers split into this many stages
    virtual_pipeline: int | None = None  # --virtual_pipeline_model_parallel_size: model chunks per stage (interleaved 1F1B)
    expert_parallel: int = 1            # --expert_model_parallel_size: routed experts split over this many GPUs
    context_parallel: int = 1           # --context_parallel_size: each sequence split over this many GPUs (ring attention)
    sequence_parallel: bool = False     # --sequence_parallel: Megatron's, norms and dropout split over the TP group
    distributed_optimizer: bool = False  # --use_distributed_optimizer: fp32 main weights and Adam states over data parallel
    recompute: str = ""                 # --recompute_granularity: full | selective | "" (none)
    recompute_method: str = ""          # --recompute_method: uniform | block (with full)
    recompute_layers: int | None = None  # --recompute_num_layers: layers per recomputed chunk (uniform) or recomputed (block)
    # What a reader found that no field above holds, typed for the stages after it (`extras` keeps the rest):
    loss_kernel: str = ""               # the loss a config names with fused_ce: linear (fused projection) | chunked
    total_batch: int | None = None      # a global batch flag (OpenRLHF --train_batch_size): split over the GPUs
    no_model: Msg | None = None         # why the config names no model (a script that takes it on its command line)
    model_unresolved: str | None = None  # a script's model reference only the running script would know ($MODEL)
    warnings: tuple[Msg, ...] = ()      # what reading the inputs noted (a Markdown paste, a Python script, ...)
    extras: Mapping[str, Any] = field(default_factory=dict)     # framework keys kept for later stages (bucket sizes, ...)
    sources: Mapping[str, Source] = field(default_factory=dict)
    defaults_of: str = ""               # "LLaMA-Factory 0.9.4": whose defaults filled the unset fields
    framework_reason: Msg | None = None # why the config was read as this framework (its keys, its entry point)
    version_reason: Msg | None = None   # why this framework version was assumed (flag, log banner, file, default)

    @property
    def effective_batch(self) -> int:
        return self.micro_batch * self.grad_accum * self.data_parallel

    @property
    def data_parallel(self) -> int:
        """GPUs that each hold a replica of the model (or of its shard): the world size over Megatron's model
        parallel group, TP x PP x CP (megatron/core/parallel_state.py initialize_model_parallel)."""
        n = max(1, self.n_gpus)
        if not self.megatron:
            return n
        return max(1, n // max(1, self.tensor_parallel * self.pipeline_parallel * self.context_parallel))

    def source_of(self, name: str) -> Source:
        return self.sources.get(name) or Source(default=msg("config.default.of", framework=self.defaults_of)
                                                if self.defaults_of else None)

    def stated(self, name: str) -> bool:
        """The inputs state this value (a file's key, a launcher line, the log's ranks), as opposed to a
        framework default that fills a field no input named (those are in `sources` too, as `default`)."""
        src = self.sources.get(name)
        return src is not None and src.default is None and bool(src.file or src.key)

    def with_changes(self, **values: Any) -> TrainingSetup:
        return replace(self, **values)

    def with_liger_loss_only(self) -> TrainingSetup:
        """This setup with Liger's fused loss but not its layer kernels (RMSNorm, SwiGLU): what a trace that cannot
        run Liger's Triton layers runs (simulate/verify.py)."""
        return replace(self, extras={**self.extras, "liger_loss_only": True})

    @cached_property
    def mechanisms(self) -> Mechanisms:
        """The framework mechanisms `extras` turns on, typed (see `mechanisms_of`); read once per setup (a setup
        is frozen, and every change makes a new one)."""
        extras = self.extras
        if self.fused_ce and self.framework in LIGER_WHOLE_MODEL and not _liger(extras, ""):
            # a plan step that turns the framework's one Liger switch on patches the whole model, as the switch
            # read from a config does (the readers keep it in extras): norms and GLU too, not the loss alone
            extras = {**extras, "use_liger_kernel": True}
        return mechanisms_of(extras, loss=self.loss_kernel)


# ---------------------------------------------------------------- model shape

@record
class Linear:
    """One linear module of a decoder layer, as PEFT sees it (in_features -> out_features)."""

    name: str                   # path inside the layer: "self_attn.q_proj", "mlp.experts.*.w1" (* = expert index)
    in_features: int
    out_features: int
    bias: bool = False
    copies: int = 1             # routed experts: one module per expert
    role: str = ""              # q | k | v | qkv | o | gate | up | gate_up | down | router | other
    peft: bool = True           # an nn.Linear or Conv1D a LoRA target can wrap (False: fused 3-D expert weights)

    @property
    def params(self) -> int:
        return self.copies * (self.in_features * self.out_features + (self.out_features if self.bias else 0))


@record
class ModelShape:
    """The architecture numbers the memory model needs (HF config.json names)."""

    name: str
    model_type: str = "llama"
    hidden_size: int = 4096
    intermediate_size: int = 11008
    num_layers: int = 32
    num_heads: int = 32
    num_kv_heads: int = 32
    head_dim: int | None = None           # None = hidden_size // num_heads
    vocab_size: int = 32000
    tie_word_embeddings: bool = False
    attention_bias: bool = False          # q/k/v biases (Qwen2 has them)
    mlp_bias: bool = False
    gated_mlp: bool = True                # SwiGLU/GeGLU: gate, up, down
    torch_dtype: str = "bf16"             # checkpoint dtype from config.json
    num_experts: int = 0                  # MoE: routed experts per MoE layer (0 = dense)
    experts_per_token: int = 0
    moe_intermediate_size: int | None = None
    shared_experts: int = 0
    shared_expert_intermediate_size: int | None = None
    first_dense_layers: int = 0           # MoE models whose first layers are dense (DeepSeek)
    params_total: int | None = None       # authoritative count when known (checkpoint / official / log); else computed
    source: str = "catalog"               # catalog | config.json path | hf-cache path | log
    # Added for exact shapes. Empty/None keeps the Llama-style derivation from the numbers above.
    dense_linears: tuple[Linear, ...] = ()   # one dense decoder layer's linear modules, with their real names
    moe_linears: tuple[Linear, ...] = ()     # one MoE layer's: attention, router, routed experts (copies), shared experts
    layer_other_params: int | None = None    # norms, attention sinks, ... in one decoder layer: all but the linears (None: 2 x hidden_size)
    final_norm_params: int | None = None     # the final norm (None: hidden_size; 0 for OLMo's non-parametric norm)
    extra_params: int = 0                 # outside layers, embeddings and head: learned positions, embedding norm, head bias, vision tower
    moe_layer_count: int | None = None    # MoE layers (None: num_layers - first_dense_layers when num_experts)
    # Hybrid models (Qwen3-Next, Qwen3.5): `linear_attn_layers` of the layers mix tokens with linear attention
    # (Gated DeltaNet): in them `linear_attn_linears` replace the attention modules (roles q/k/v/o/qkv/kv) of
    # the layer lists above, and `linear_attn_other` replaces layer_other_params (its conv1d, A_log, dt_bias, norm).
    linear_attn_linears: tuple[Linear, ...] = ()
    linear_attn_layers: int = 0
    linear_attn_other: int | None = None
    stored_dtype: str | None = None       # the dtype most parameters are stored in (from a checkpoint's tensors)
    quant_method: str | None = None       # gptq | awq | bitsandbytes | fp8 | mxfp4 | ... (stored quantized)
    quant_bits: int | None = None         # bits per quantized weight (4, 8)
    llama_style_guess: bool = False       # model_type has no builder of its own: read from its config's features
    # exact: a checkpoint's tensors/index or transformers' own model class counted it; derived: the model
    # type's own reading of config.json (or the catalog); guessed: read from features alone, or scaled from a log
    shape_confidence: str = "derived"
    assumptions: tuple[Msg, ...] = ()     # what a guessed shape assumed (shown with its warning)
    unread_keys: tuple[str, ...] = ()     # config keys that look structural but were not read (guessed shapes)
    source_kind: str = "catalog"          # checkpoint | config.json | catalog | log
    source_path: str | None = None        # the file or directory the shape was read from
    notes: tuple[Msg, ...] = ()           # how the shape was read (words/model.py codes)

    @property
    def head_dim_(self) -> int:
        return self.head_dim or self.hidden_size // self.num_heads


# ---------------------------------------------------------------- hardware

@record
class Hardware:
    """The card the run trains on, as the log, --gpu or NVML tells it."""

    gpu: str = "unknown"
    gpu_gib: float = 0.0            # total capacity of one GPU
    n_gpus: int = 1                 # GPUs per node available to the run
    source: str = "flag"            # log | nvml | flag
    bf16: bool = True               # card supports bf16
    flash_attn2: bool = True        # card supports FlashAttention-2
    other_procs_gib: float = 0.0    # memory held by other processes on the card
    host_ram_gib: float | None = None

    @property
    def usable_gib(self) -> float:
        return max(0.0, self.gpu_gib - self.other_procs_gib)


# ---------------------------------------------------------------- crash log

@record
class Evidence:
    """The log line a conclusion was read from."""

    line: int                                   # 1-based line in the log
    text: str                                   # the line, cleaned of prefixes and colour, trimmed
    source: str = "frame"                       # frame (a traceback frame or source line) | progress (a log or progress line before the crash) | message (the failure message itself)


@record
class CrashEvent:
    """One memory failure the log shows, with the numbers its message printed."""

    kind: CrashKind
    line: int                                   # 1-based line in the log
    tried_gib: float | None = None
    capacity_gib: float | None = None
    free_gib: float | None = None
    allocated_gib: float | None = None          # allocated by PyTorch
    reserved_unallocated_gib: float | None = None
    reserved_gib: float | None = None           # reserved in total by PyTorch (1.x form)
    process_gib: float | None = None            # "this process has X memory in use"
    other_processes_gib: float | None = None    # sum of other processes named in the message
    device: int | None = None
    rank: int | None = None
    phase: Phase | None = None
    message: str = ""                           # the message line, trimmed
    phase_evidence: Evidence | None = None      # the line the phase was read from (None when phase is None)
    confidence: str = "certain"                 # certain: the log states the failure | likely: a kill whose cause the log does not state


@record
class MemorySample:
    """A memory reading the log printed before the crash (HF callback, DeepSpeed see_memory_usage, nvidia-smi)."""

    line: int
    allocated_gib: float | None = None
    reserved_gib: float | None = None
    max_allocated_gib: float | None = None
    max_reserved_gib: float | None = None
    label: str = ""
    step: int | None = None


@record
class CrashReport:
    """What one crash log says: its failures, and the facts printed around them."""

    file: str
    events: tuple[CrashEvent, ...] = ()
    versions: Mapping[str, str] = field(default_factory=dict)     # torch, transformers, deepspeed, llamafactory, ...
    gpu_name: str | None = None
    world_size: int | None = None
    params_trainable: int | None = None
    params_total: int | None = None
    train_args: Mapping[str, str] = field(default_factory=dict)   # training arguments the trainer printed / command line flags
    step: int | None = None                                 # last training step seen before the crash
    total_steps: int | None = None
    seq_len_failing: int | None = None
    failed_ranks: tuple[int, ...] = ()
    memory_samples: tuple[MemorySample, ...] = ()
    diagnoses: tuple[str, ...] = ()                         # fragmentation | other_process | eval | save | long_samples | host_ram | ...
    lines_total: int | None = None
    notes: tuple[Msg, ...] = ()                             # how the log was read (hits left out, what a big log's scan covered)
    checks: tuple[Msg, ...] = ()                            # what to look at that the log cannot show (dmesg after a kill, ...)
    host_ram_gib: float | None = None                       # the host's memory, where the log shows it
    host_ram_used_pct: float | None = None                  # how full it was at the last reading

    @property
    def primary(self) -> CrashEvent | None:
        """The event that explains the crash best: the first GPU OOM with numbers, else the first the log states
        (a failure grammar's guess or an unexplained kill comes after it), else the first event."""
        with_numbers = [e for e in self.events if e.capacity_gib is not None]
        if with_numbers:
            return with_numbers[0]
        stated = [e for e in self.events if e.confidence == "certain"]
        return (stated or list(self.events))[0] if self.events else None


# ---------------------------------------------------------------- the crash as a measurement

@record
class Floor:
    """What the crash measured: a lower bound on the peak of the phase that crashed, and how far the
    estimate of that phase was raised to meet it (memory/crashfloor.py)."""

    kind: str                       # gpu (held by PyTorch + asked, per GPU) | host (the machine's RAM at a kill)
    observed_gib: float             # the floor: what that phase needed at least
    estimate_gib: float             # the config's own estimate of that phase, before
    raised_gib: float               # added to that phase's figure in every estimate (0.0: the estimate covers it)
    moment: str                     # the estimate's moment it applies to (forward, layers backward, optimizer, eval, ...)
    line: int                       # the log line it was read from
    message: Msg                    # both numbers, in words

    @property
    def applied(self) -> bool:
        return self.raised_gib > 0.0


@record
class Clue:
    """One thing the log shows that the training config cannot explain, with the lines it was read from."""

    kind: str                       # shared_device | data_parallel | other_process | outside_pytorch | growth | eval | fragmentation | version_bug
    message: Msg                    # what the log shows
    check: Msg                      # what to check before acting on the plan
    evidence: tuple[Evidence, ...] = ()


@record
class Finding:
    """Whether the config explains the crash. beyond_config: the config's own estimate is well below what the
    crash shows, or the log shows memory the config does not hold; `clues` say what else can."""

    cause: str                      # config | beyond_config
    message: Msg
    floor: Floor | None = None
    clues: tuple[Clue, ...] = ()


# ---------------------------------------------------------------- estimate

COMPONENTS = ("weights", "gradients", "optimizer", "activations", "logits", "overhead")


@record
class Estimate:
    """Predicted memory per GPU for one setup, by component, judged against the card."""

    components: Mapping[str, float]        # GiB per COMPONENTS name, per GPU
    allocated_gib: float                   # like torch.cuda.max_memory_allocated()
    peak_gib: float                        # what the device must hold: tensors + context + allocator reserve
    capacity_gib: float                    # usable capacity of one GPU (after other processes)
    headroom: float = 0.10                 # fraction of capacity kept free when judging fit
    phase: str = "train"                   # the phase that sets the peak: "train" or "eval" (a Phase)
    details: Mapping[str, float] = field(default_factory=dict)   # finer terms (GiB), for the curious
    notes: tuple[Msg, ...] = ()            # regime, caveats (words/memory.py codes)
    host_ram_gib: float = 0.0              # host memory the run needs (offload)
    moments: Mapping[str, float] = field(default_factory=dict)   # GiB allocated at each moment of the step (max = allocated_gib)
    peak_moment: str = ""                  # the moment that sets allocated_gib (a key of moments, or "eval")
    # of peak_gib, the terms counted at a padded length when the run packs real lengths the config cannot know
    # (verl use_remove_padding without a token budget): peak_gib is then an upper bound, not a figure
    length_bound_gib: float = 0.0

    @property
    def fits(self) -> bool:
        return self.peak_gib <= self.capacity_gib * (1.0 - self.headroom)

    @property
    def headroom_gib(self) -> float:
        return self.capacity_gib - self.peak_gib


# ---------------------------------------------------------------- plan

@record
class Change:
    """One change to a setup field, as the rule engine decided it."""

    field: str
    before: Any
    after: Any


@record
class Step:
    """One rung of a plan: the rule applied, what it changed, and the estimate after it."""

    rule: str                       # rule id
    slug: str
    title: Text                     # the rule's texts, as its file gives them
    changes: tuple[Change, ...]
    setup: TrainingSetup            # setup after this step
    estimate: Estimate              # estimate after this step
    saved_gib: float
    costs: tuple[str, ...] = ()     # throughput | quality | none
    applicability: str = "safe"     # safe | needs-consent
    why: Text = Text("")
    env: Mapping[str, str] = field(default_factory=dict)    # environment variables to export
    notes: tuple[Text, ...] = ()    # launch-command advice, its ${facts} filled

    @property
    def adds_gib(self) -> float:
        """GPU memory the step adds (one that gives memory back to the host); 0.0 for a step that saves."""
        return -self.saved_gib if self.saved_gib < -0.005 else 0.0


@record
class Skipped:
    """A rule the planner passed over, and why."""

    rule: str
    reason: Msg                     # a words code ("plan.skip.*", "guide.skip.*") and its values


RUNG_STATES = ("applied", "proposed", "dropped", "skipped", "not_reached")


@record
class Rung:
    """One rung of the ladder and what the walk did with it, so a view can show every rung in ladder order.

    applied: its steps are in the plan. proposed: it changes the experiment and had no consent; `steps`
    holds what it would do at that point of the walk (its saving), and the walk went on below it.
    dropped: it was applied, then left out because the plan fits without it. skipped: not applicable, or
    no saving (`reason` says which). not_reached: the plan fit before the walk came to it."""

    rule: str
    state: str                          # one of RUNG_STATES
    steps: tuple[Step, ...] = ()
    reason: Msg | None = None


@record
class Plan:
    """The steps that make a setup fit (in order), the rules skipped, and whether it fits."""

    steps: tuple[Step, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    fits: bool = False
    advice: tuple[Msg, ...] = ()    # what would fit when nothing does (more GPUs, another card)
    rungs: tuple[Rung, ...] = ()    # every rung of the book in ladder order, with its state
    # what the plan costs (planner.costs.Cost.as_dict: total, quality, time_factor, setup); empty when unpriced
    cost: Mapping[str, Any] = field(default_factory=dict)

    def rungs_in(self, state: str) -> tuple[Rung, ...]:
        return tuple(r for r in self.rungs if r.state == state)

    @property
    def proposed(self) -> tuple[Step, ...]:
        """What the steps that need the user's yes would do (one per rung, none of them in `steps`)."""
        return tuple(r.steps[0] for r in self.rungs if r.state == "proposed" and r.steps)

    def final_setup(self, start: TrainingSetup) -> TrainingSetup:
        return self.steps[-1].setup if self.steps else start

    def final_estimate(self, start: Estimate) -> Estimate:
        return self.steps[-1].estimate if self.steps else start


# ---------------------------------------------------------------- patch

@record
class KeyEdit:
    """Set one key of one file to a value. The patch writer splices it into the original text."""

    file: str                       # path of the file to edit (or to create)
    key_path: tuple[str, ...]       # ("per_device_train_batch_size",) or ("zero_optimization", "stage")
    value: Any
    after_key: str | None = None    # when the key is absent: insert it next to this related key
    create: bool = False            # the file does not exist yet: create it with this content (value is the whole text)


# ---------------------------------------------------------------- the one result every view renders

@record
class Report:
    """Everything oomdoctor concluded about one run. Plain report, JSON, diff and TUI only render it."""

    inputs: tuple[str, ...] = ()
    setup: TrainingSetup | None = None
    shape: ModelShape | None = None
    hardware: Hardware | None = None
    crash: CrashReport | None = None
    estimate: Estimate | None = None
    plan: Plan = Plan()
    least_cost: Plan | None = None
    edits: tuple[KeyEdit, ...] = ()
    patch: str = ""                                  # unified diff of the plan's config changes
    env: Mapping[str, str] = field(default_factory=dict)   # environment variables the plan sets
    notes: tuple[Text, ...] = ()                     # launch-command advice of the plan's steps
    warnings: tuple[Msg, ...] = ()                   # things the user should know (assumptions, unreadable parts)
    finding: Finding | None = None                   # the crash measured against the estimate, and its cause
