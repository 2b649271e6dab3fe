"""The HF `TrainingArguments` every HF-based framework inherits (LLaMA-Factory, TRL, plain HF scripts,
Firefly, Qwen, FastChat, ...): one reader and one key table they all share. It imports no framework
module, so LLaMA-Factory and HF read through it without importing each other.

Defaults of transformers 4.57 training_args.py (reference config-formats.md §3): batch 8 for train and
eval, no gradient checkpointing, no AMP, optimizer adamw_torch (adamw_torch_fused with torch >= 2.8:
the same memory).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oomdoctor.configs._doc import Builder, Doc
from oomdoctor.configs._keys import Key, found, prequantized, read_int, table
from oomdoctor.facts import Msg, Source, msg
from oomdoctor.records import record

HF_VERSION = "4.57"

KEYS = table(
    Key("micro_batch", "per_device_train_batch_size", after="gradient_accumulation_steps", minimum=1,
        aliases=("per_gpu_train_batch_size",)),
    Key("grad_accum", "gradient_accumulation_steps", after="per_device_train_batch_size", minimum=1),
    Key("eval_batch", "per_device_eval_batch_size", after="per_device_train_batch_size", minimum=1,
        aliases=("per_gpu_eval_batch_size",)),
    Key("eval_accum", "eval_accumulation_steps", after="per_device_eval_batch_size", minimum=1),
    Key("optimizer", "optim", after="learning_rate"),
    Key("precision", "bf16", after="learning_rate"),
    Key("grad_ckpt", "gradient_checkpointing", after="per_device_train_batch_size",
        aliases=("activation_checkpointing",)),     # transformers 5 renamed it
    Key("fused_ce", "use_liger_kernel", after="bf16", aliases=("use_liger",)),
    Key("zero_stage", "deepspeed", after="output_dir"),
    Key("fsdp", "fsdp", after="output_dir"),
)

# TrainingArguments names (transformers 4.x/5.x) that bear on memory or say "this is a training run".
# A script oomdoctor does not know is read only through these names: its other flags are its own.
NAMES = frozenset("""
per_device_train_batch_size per_device_eval_batch_size per_gpu_train_batch_size per_gpu_eval_batch_size
gradient_accumulation_steps eval_accumulation_steps bf16 fp16 tf32 bf16_full_eval fp16_full_eval optim adafactor
gradient_checkpointing gradient_checkpointing_kwargs activation_checkpointing deepspeed fsdp fsdp_config
use_liger_kernel torch_compile do_train do_eval eval_strategy evaluation_strategy eval_steps max_steps
num_train_epochs output_dir auto_find_batch_size group_by_length torch_empty_cache_steps learning_rate
save_steps save_strategy logging_steps lr_scheduler_type warmup_ratio warmup_steps weight_decay seed
report_to dataloader_num_workers remove_unused_columns ddp_find_unused_parameters overwrite_output_dir
""".split())

_FSDP_MODES = ("full_shard", "shard_grad_op", "hybrid_shard", "hybrid_shard_zero2")


def read_trainer_args(b: Builder, doc: Doc) -> dict[str, Any]:
    """Batch, precision, optimizer, checkpointing, evaluation and FSDP from TrainingArguments keys.
    Returns the values DeepSpeed "auto" entries take (micro_batch, grad_accum, bf16, fp16)."""
    if not read_int(b, doc, KEYS["micro_batch"]):
        b.default("micro_batch", 8, "per_device_train_batch_size")
    if not read_int(b, doc, KEYS["grad_accum"]):
        b.default("grad_accum", 1)
    if not read_int(b, doc, KEYS["eval_batch"]):
        b.default("eval_batch", 8, "per_device_eval_batch_size")
    read_int(b, doc, KEYS["eval_accum"])
    optim = doc.str_("optim")
    if optim:
        b.set("optimizer", optim.lower(), doc.src("optim"))
    elif doc.bool_("adafactor"):
        b.set("optimizer", "adafactor", doc.src("adafactor"))
    else:
        b.default("optimizer", "adamw_torch", msg("config.default.hf_fused_adamw"))
    bf16, fp16 = doc.bool_("bf16"), doc.bool_("fp16")
    if bf16:
        b.set("precision", "bf16", doc.src("bf16"))
    elif fp16:
        b.set("precision", "fp16", doc.src("fp16"))
    gc_key = next((n for n in ("gradient_checkpointing", "activation_checkpointing") if doc.has(n)), None)
    if gc_key:
        b.from_doc("grad_ckpt", doc, gc_key, doc.bool_(gc_key))
    liger = found(doc, KEYS["fused_ce"])
    if liger:
        b.from_doc("fused_ce", doc, liger, doc.bool_(liger))
        if doc.bool_(liger):
            # the Trainer's use_liger_kernel patches the whole model (trainer.py _apply_liger_kernel_to_instance
            # with Liger's defaults): its norms and MLP products too, which the memory model reads (Mechanisms)
            b.extras["use_liger_kernel"] = True
            b.values["loss_kernel"] = "liger"     # fused in training only (memory/estimate.py _fused_in_eval)
    if doc.bool_("do_eval") is not None:
        b.set("do_eval", bool(doc.bool_("do_eval")), doc.src("do_eval"))
    skey = next((n for n in ("eval_strategy", "evaluation_strategy") if doc.has(n)), None)
    strategy = doc.str_(skey) if skey else None
    if skey and strategy and strategy.lower() != "no":
        b.set("do_eval", True, doc.src(skey))
    _read_fsdp(b, doc)
    b.keep(doc, ("num_train_epochs", "max_steps", "eval_strategy", "evaluation_strategy", "eval_steps", "save_steps",
                 "torch_compile", "auto_find_batch_size", "gradient_checkpointing_kwargs", "output_dir",
                 "bf16_full_eval", "fp16_full_eval", "torch_empty_cache_steps", "group_by_length", "fsdp_config"))
    return {"micro_batch": b.values["micro_batch"], "grad_accum": b.values["grad_accum"], "bf16": bool(bf16),
            "fp16": bool(fp16)}


def _read_fsdp(b: Builder, doc: Doc) -> None:
    fsdp = doc.get("fsdp")
    if fsdp and fsdp is not False:
        words = fsdp if isinstance(fsdp, list) else str(fsdp).replace(",", " ").split()
        words = [str(w).lower() for w in words]
        mode = next((w for w in words if w in _FSDP_MODES), None)
        if mode or words in (["true"], ["1"]):
            b.set("fsdp", (mode or "full_shard").replace("hybrid_shard_zero2", "hybrid_shard"), doc.src("fsdp"))
        if "offload" in words:
            b.set("offload_params", True, doc.src("fsdp"))
            b.set("offload_optimizer", True, doc.src("fsdp"))
    fcfg = doc.get("fsdp_config")
    if isinstance(fcfg, dict):
        for key in ("offload_params", "fsdp_offload_params", "cpu_offload"):
            if fcfg.get(key) is not None:
                on = doc.bool_(f"fsdp_config.{key}")
                if on is not None:
                    b.set("offload_params", on, doc.src(f"fsdp_config.{key}"))
                    b.set("offload_optimizer", on, doc.src(f"fsdp_config.{key}"))
        for key in ("activation_checkpointing", "fsdp_activation_checkpointing"):
            if fcfg.get(key) is not None and doc.bool_(f"fsdp_config.{key}"):
                # FSDP wraps each layer in a checkpoint itself: checkpointing whatever the trainer flag says.
                b.set("grad_ckpt", True, doc.src(f"fsdp_config.{key}"))


# ---------------------------------------------------------------- other projects' own argument names

# How a flag of a script's own dataclasses maps onto the setup. Kinds:
#   seq (an int length), rank, alpha, targets, use_lora (bool: LoRA), q_lora (bool: 4-bit QLoRA),
#   full (bool: full fine-tune), bits (4/8 quantised, 16/32 not), load4/load8 (bool), train_type (a word:
#   full/lora/qlora/...), dtype (load dtype), flash (bool: FlashAttention-2), attn (attn_implementation),
#   packing (bool: sequences packed to the length), zero (DeepSpeed ZeRO stage), offload (bool: ZeRO
#   offload of optimizer and, at stage 3, parameters to CPU), precision (the mixed-precision dtype word),
#   prompt / answer (a sample is as long as the two together: MedicalGPT's source and target lengths),
#   prefix (P-tuning v2 prefix length: a frozen base with a small trained prefix encoder), stage (the
#   training kind as a word: dpo, kto, orpo, cpo, simpo, rm, ppo; grpo and gkd train one sequence: sft),
#   backend (the library that wraps the model: unsloth), galore (bool: GaLore optimizer), dora (bool: DoRA
#   adapters).


@record
class Entry:
    """A training entry point oomdoctor knows: how to find it in a command line, which reader reads its
    flags, its own flag table (read and patch), and the defaults of its own dataclasses."""

    name: str                                   # "qwen", "fastchat", ...
    label: str | Msg                            # "Qwen finetune.py" (words when not a program's name): said in
                                                # reasons and provenance
    reader: str = "hf"                          # registry name of the reader its flags go through
    scripts: tuple[str, ...] = ()               # script paths it is run as (matched on their ends)
    modules: tuple[str, ...] = ()               # `python -m` modules
    commands: tuple[tuple[str, ...], ...] = ()  # CLI words: ("llamafactory-cli", "train")
    flags: dict[str, str] | None = None         # its own flags -> kinds (None: the conventions)
    defaults: tuple[tuple[str, Any], ...] = ()  # its dataclasses' defaults, by setup field
    rank_implies_lora: bool = False             # a LoRA rank flag alone means LoRA (no separate switch)
    attention: str | None = None                # the attention it patches in (FastChat's train_mem.py)
    trl: bool = False                           # TRL's trainers: their defaults
    config_flag: str | None = None              # a flag naming a config file it reads (--train_args_file)
    config_positional: bool = False             # a lone positional YAML/JSON is its config
    model_positional: int | None = None         # the positional word (0-based) that names the model
    overrides: bool = False                     # `key=value` words after the config override it
    version_hint: tuple[str, str] | None = None # (release, why): the entry point only exists up to it
    seq_flag: str | None = None                 # the flag its sequence length is written as
    precision_from_dtype: bool = False          # no --bf16/--fp16: autocast in the load dtype (ms-swift), bf16 unset
    trainer_fields: tuple[str, ...] | None = None   # TrainingArguments fields its own (argparse) parser takes
                                                # under the same names (None: all, an HfArgumentParser)
    needs_flags: tuple[str, ...] = ()           # a common script name (train.py) is this one only with one of these
    prints_hparams: bool = False                # it prints its hyperparameters as a dict before training: a paste
                                                # that shows them has the run's own values (over its constants)
    own_flags: tuple[str, ...] = ()             # flags no other entry point takes: a paste of flags alone with one
                                                # of them is this entry point's (its script named or not)
    framework: str | None = None                # the framework it is reported as (ms-swift, openrlhf); None: hf / trl
    dotted_defaults: tuple[tuple[str, Any], ...] = ()   # defaults of its dotted-option release (`--ds.zero_stage`)

    def defaults_for(self, data: Any) -> tuple[tuple[str, Any], ...]:
        """Its defaults for these flags: a release that writes its options in dotted groups has its own."""
        if self.dotted_defaults and any("." in str(k) and not str(k).startswith("__") for k in data):
            return self.defaults + self.dotted_defaults
        return self.defaults

    def flag_for(self, kind: str) -> str | None:
        """The flag of this kind to write when the script does not have one yet."""
        table_ = self.flags if self.flags is not None else CONVENTIONS
        if kind == "seq" and self.seq_flag:
            return self.seq_flag
        return next((name for name, k in table_.items() if k == kind), None)

# Names the HF-based scripts of many projects share (HF examples, QLoRA, Alpaca-LoRA descendants,
# Firefly, Chinese-LLaMA-Alpaca, Qwen, FastChat). A script oomdoctor does not know is read through
# TrainingArguments names and these, each one read this way said in a note.
CONVENTIONS = {
    "max_seq_length": "seq", "model_max_length": "seq", "max_length": "seq", "block_size": "seq",
    "sequence_length": "seq",   # accelerate's examples (torch_native_parallelism/nd_parallel_trainer.py --sequence-length)
    "cutoff_len": "seq", "max_seq_len": "seq", "seq_length": "seq", "max_len": "seq",
    "lora_r": "rank", "lora_rank": "rank", "lora_dim": "rank", "lora_alpha": "alpha",
    "lora_target_modules": "targets", "use_lora": "use_lora", "use_peft": "use_lora", "q_lora": "q_lora",
    "lora": "use_lora",         # Tevatron's ModelArguments `lora: bool` ("do parameter-efficient fine-tuning with lora")
    "qlora": "q_lora", "full_finetune": "full", "full_finetuning": "full", "bits": "bits", "load_in_bits": "bits",
    "load_in_kbits": "bits", "quantization_bit": "bits", "quant_bits": "bits", "load_in_4bit": "load4",
    "load_in_8bit": "load8", "train_mode": "train_type", "train_type": "train_type", "sft_type": "train_type",
    "finetuning_type": "train_type", "tuner_type": "train_type", "torch_dtype": "dtype",
    "use_flash_attn": "flash", "flash_attn": "flash", "use_flash_attention_2": "flash",
    "attn_implementation": "attn",
    # TRL's SFTConfig field, taken by every script that parses SFTConfig (trl/trainer/sft_config.py `packing`).
    "packing": "packing",
    # peft's examples/sft/train.py ModelArguments, copied by the scripts built on it.
    "use_peft_lora": "use_lora", "use_4bit_quantization": "load4", "use_8bit_quantization": "load8",
    # An argparse script's own batch flag, handed to TrainingArguments' per_device_train_batch_size (peft's
    # examples/road_finetuning, lora_finetuning_transformer_engine); beside a --micro_batch_size it is the total
    # (Alpaca-LoRA's grammar, tloen/alpaca-lora finetune.py), see read_conventions.
    "micro_batch_size": "micro", "batch_size": "micro",
    # TrainingArguments' per-process batch name less its "train_" (a script's own argparse flag it hands to
    # per_device_train_batch_size: TRL issue 5138's sft.py --per_device_batch_size)
    "per_device_batch_size": "micro",
}
MODEL_FLAGS = ("model_name_or_path", "model", "model_id", "base_model", "model_path", "pretrained_model_name_or_path",
               "model_id_or_path", "model_name", "base_model_name_or_path")     # the last: peft's examples' argparse
_TRAIN_TYPES = {"custom_qlora": "qlora", "custom_lora": "lora", "hqq_lora": "qlora", "hqq_dora": "qlora",
                "bnb_dora": "qlora", "bnb_llama_pro": "freeze", "hqq_llama_pro": "freeze",     # fsdp_qlora train.py
                "full": "full", "lora": "lora", "qlora": "qlora", "dora": "lora", "freeze": "freeze",
                "longlora": "lora", "adalora": "lora", "lora_llm": "lora", "qalora": "qlora", "loraplus": "lora",
                "vera": "lora", "pissa": "lora", "olora": "lora", "rslora": "lora", "llamapro": "freeze"}
# Train types read as LoRA whose adapters are laid out otherwise (AdaLoRA's rank-masked SVD triplets, VeRA's shared
# frozen matrices with trained vectors): said to be estimated as plain LoRA. PiSSA, OLoRA, rsLoRA, LoRA+ and
# DoRA are LoRA's own layers (an initialisation, a scale, a learning rate, use_dora).
_OWN_LAYOUT = ("adalora", "vera")
_STAGE_WORDS = {"dpo": "dpo", "kto": "kto", "orpo": "orpo", "cpo": "orpo", "simpo": "simpo", "rm": "rm", "ppo": "ppo",
                "reward": "rm",
                "grpo": "sft", "gkd": "sft", "sft": "sft", "pt": "pt"}
_DTYPES = {"bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16", "half": "fp16",
           "float32": "fp32", "fp32": "fp32", "float": "fp32"}
# Lightning Fabric precision plugins (lightning/fabric/connector.py): `-true` keeps the weights in that dtype,
# `-mixed` autocasts and keeps them in fp32. Value: (mixed-precision dtype, weight dtype).
_LIGHTNING_PRECISION = {"bf16-true": ("bf16", "bf16"), "bf16-mixed": ("bf16", "fp32"), "16-true": ("fp16", "fp16"),
                        "16-mixed": ("fp16", "fp32"), "32-true": ("fp32", "fp32"), "32": ("fp32", "fp32"),
                        "bf16": ("bf16", "fp32"), "16": ("fp16", "fp32")}
# Answer.AI fsdp_qlora train.py --precision (train.py fsdp_main): `bf16` and `bf16_buffers_autocast` load the
# weights in bf16, the `*_autocast` others keep them in fp32 under autocast. Value: (mixed dtype, weight dtype).
_FSDP_QLORA_PRECISION = {"bf16": ("bf16", "bf16"), "fp32": ("fp32", "fp32"), "fp16_autocast": ("fp16", "fp32"),
                         "bf16_autocast": ("bf16", "fp32"), "bf16_buffers_autocast": ("bf16", "bf16")}
# Its --sharding_strategy choices, as FSDP's ShardingStrategy; `ddp` shards nothing ("").
_SHARDING_WORDS = {"full_shard": "full_shard", "shard_grad_op": "shard_grad_op", "hybrid_full_shard": "hybrid_shard",
                   "hybrid_shard_grad_op": "hybrid_shard", "hybrid_shard": "hybrid_shard", "ddp": "", "no_shard": ""}
# lit-gpt's --quantize choices (lit_gpt/utils.py quantization()): bitsandbytes 4-bit NF4/FP4 (-dq: double
# quantisation) and int8.
_QUANTIZE_WORDS = {"bnb.nf4": 4, "bnb.nf4-dq": 4, "bnb.fp4": 4, "bnb.fp4-dq": 4, "bnb.int8": 8,
                   "bnb.int8-training": 8, "gptq.int4": 4}


def stage_word(word: str) -> str | None:
    """The stage a subcommand or script name says (`pt`, `dpo`, …), None for any other word."""
    return _STAGE_WORDS.get(word.lower())


Signals = dict[str, tuple[Any, str]]       # kind -> (value, the flag that gave it)


def read_conventions(b: Builder, doc: Doc, ctx: Any) -> None:
    """A script's (or an argument file's) own flags for length, LoRA, quantisation, dtype and attention:
    its entry point's table when oomdoctor knows the script, else the conventions above."""
    entry = ctx.entry if ctx is not None else None
    flags = entry.flags if entry is not None and entry.flags is not None else CONVENTIONS
    assumed = entry is None or entry.flags is None
    if entry is not None and entry.name == "script":
        entry = None            # the generic entry: conventions, no defaults of its own
    if "model" not in b.values:
        # (a name its own table gives another meaning is not the model: Megatron-SWIFT's --model_name is the
        # self-cognition name, swift/megatron/arguments/megatron_base_args.py via BaseArguments)
        key = next((k for k in MODEL_FLAGS if doc.get(k) is not None and k in doc.data
                    and (entry is None or entry.flags is None or flags.get(k, "model") == "model")), None)
        if key and doc.str_(key):
            b.set("model", doc.str_(key), doc.src(key))
    signals = _signals(b, doc, flags, assumed)
    if assumed and signals.get("micro", (None, ""))[1] in ("micro_batch_size", "batch_size"):
        if b.sources.get("micro_batch") is not None and b.sources["micro_batch"].file:
            signals.pop("micro")        # the script's TrainingArguments flag says it already
        elif signals["micro"][1] == "micro_batch_size" and doc.get("batch_size") is not None:
            total = _conv_value(doc, "batch_size", "total")
            if total is not None:
                signals.setdefault("total", (total, "batch_size"))
    defaults = dict(entry.defaults_for(doc.data)) if entry is not None else {}
    label = entry.label if entry is not None else None
    if "model" in signals and "model" not in b.values and signals["model"][0]:
        b.set("model", signals["model"][0], doc.src(signals["model"][1]))
    _conv_batch(b, doc, signals, defaults, label)
    _conv_length(b, doc, signals, defaults, entry)
    _method(b, doc, signals, defaults, entry)
    _conv_parallel(b, doc, signals, defaults, label)
    _conv_megatron(b, doc, signals, defaults, label)
    _conv_features(b, doc, signals, defaults, entry)
    _conv_precision(b, doc, signals, defaults, label)


def _signals(b: Builder, doc: Doc, flags: Mapping[str, str], assumed: bool) -> Signals:
    """The first flag of each kind that the file sets, with its value; a guessed name is said in a note."""
    signals: Signals = {}
    for name, kind in flags.items():
        if name not in doc.data or doc.get(name) is None:
            continue
        value = _conv_value(doc, name, kind)
        if value is None:
            continue
        signals.setdefault(kind, (value, name))
        if assumed and name not in NAMES:
            b.note(msg("config.flag_assumed", where=doc.where(name), flag=name, field=msg(f"config.kind.{kind}")))
    return signals


def _conv_batch(b: Builder, doc: Doc, signals: Signals, defaults: dict[str, Any], label: Any) -> None:
    if "micro" in signals:
        b.set("micro_batch", signals["micro"][0], doc.src(signals["micro"][1]))
    elif "micro_batch" in defaults and not (b.sources.get("micro_batch") and b.sources["micro_batch"].file):
        b.default("micro_batch", defaults["micro_batch"], label)
    if "grad_accum" in defaults and "total_batch" not in defaults and \
            not (b.sources.get("grad_accum") and b.sources["grad_accum"].file):
        b.default("grad_accum", defaults["grad_accum"], label)      # its own parser's default, not TrainingArguments'
    total = signals.get("total") or ((defaults["total_batch"], None) if "total_batch" in defaults else None)
    if total is not None and not (b.sources.get("grad_accum") and b.sources["grad_accum"].file):
        # A total batch flag: accumulation = total // micro-batch (the launcher's GPUs divide it later).
        accum = max(1, total[0] // b.values.get("micro_batch", 1))
        if total[1] is not None:
            b.set("grad_accum", accum, doc.src(total[1]))
        else:
            b.default("grad_accum", accum, label)
        b.values["total_batch"] = total[0]


def _conv_length(b: Builder, doc: Doc, signals: Signals, defaults: dict[str, Any], entry: Entry | None) -> None:
    if "seq" in signals:
        b.set("seq_len", signals["seq"][0], doc.src(signals["seq"][1]))
    elif "prompt" in signals or "answer" in signals or "prompt_len" in defaults:
        # The prompt and the answer are truncated apart: a sample is as long as both together.
        prompt = signals["prompt"][0] if "prompt" in signals else defaults.get("prompt_len", 0)
        answer = signals["answer"][0] if "answer" in signals else defaults.get("answer_len", 0)
        given = signals.get("prompt") or signals.get("answer")
        if given is not None:
            b.set("seq_len", prompt + answer, doc.src(given[1]))
        else:
            b.default("seq_len", prompt + answer, entry.label if entry is not None else None)
    elif "seq_len" in defaults:
        b.default("seq_len", defaults["seq_len"], entry.seq_flag if entry is not None else None)


def _conv_parallel(b: Builder, doc: Doc, signals: Signals, defaults: dict[str, Any], label: Any) -> None:
    if "zero" in signals:
        b.set("zero_stage", signals["zero"][0], doc.src(signals["zero"][1]))
    elif "zero_stage" in defaults:
        b.default("zero_stage", defaults["zero_stage"], label)
    if "adam_offload" in signals and signals["adam_offload"][0]:
        b.set("offload_optimizer", True, doc.src(signals["adam_offload"][1]))     # the optimizer only
    if "sp" in signals:
        b.set("seq_parallel", signals["sp"][0], doc.src(signals["sp"][1]))
    if "gpus" in signals or "nodes" in signals or "gpus_per_node" in defaults:
        # A program that places its own workers (OpenRLHF's Ray actors): nodes × GPUs per node.
        per = signals["gpus"][0] if "gpus" in signals else defaults.get("gpus_per_node", 1)
        nodes = signals["nodes"][0] if "nodes" in signals else 1
        said = signals.get("gpus") or signals.get("nodes")
        b.extras["own_workers"] = True          # its launcher's process count is not the GPU count
        if said is not None:
            b.set("n_gpus", per * nodes, doc.src(said[1]))
        else:
            b.default("n_gpus", per * nodes, label)
    if "fsdp" in signals:
        b.set("fsdp", signals["fsdp"][0] or None, doc.src(signals["fsdp"][1]))
    if "cpu_offload" in signals:
        # FSDP's CPUOffload(offload_params=True): parameters and gradients on the CPU, so the optimizer steps there
        for field_name in ("offload_params", "offload_optimizer"):
            b.set(field_name, bool(signals["cpu_offload"][0]), doc.src(signals["cpu_offload"][1]))
    if "offload" in signals and signals["offload"][0]:
        b.set("offload_optimizer", True, doc.src(signals["offload"][1]))
        if b.values.get("zero_stage") == 3:
            b.set("offload_params", True, doc.src(signals["offload"][1]))


# Megatron-Core's parallel sizes and switches: kind -> setup field.
_MEGATRON_FIELDS = (("tp", "tensor_parallel"), ("pp", "pipeline_parallel"), ("vpp", "virtual_pipeline"),
                    ("ep", "expert_parallel"), ("cp", "context_parallel"), ("megatron_sp", "sequence_parallel"),
                    ("dist_opt", "distributed_optimizer"), ("recompute", "recompute"),
                    ("recompute_method", "recompute_method"), ("recompute_layers", "recompute_layers"))


def _conv_megatron(b: Builder, doc: Doc, signals: Signals, defaults: dict[str, Any], label: Any) -> None:
    """A Megatron-Core run's parallel sizes, distributed optimizer and recompute, each from its flag or the
    entry point's default; gradient checkpointing is Megatron's recompute (none: off)."""
    if not defaults.get("megatron"):
        return
    b.default("megatron", True, label)
    for kind, field_name in _MEGATRON_FIELDS:
        if kind in signals:
            b.set(field_name, signals[kind][0], doc.src(signals[kind][1]))
        elif field_name in defaults:
            b.default(field_name, defaults[field_name], label)
    if defaults.get("sp_needs_tp") and b.values.get("sequence_parallel") and b.values.get("tensor_parallel", 1) == 1:
        # Megatron turns sequence parallelism off without tensor parallelism (megatron/training/arguments.py
        # validate_args: "Disabling sequence parallelism because tensor model parallelism is disabled")
        src = b.sources.get("sequence_parallel")
        b.set("sequence_parallel", False, Source(file=src.file if src else None, key=src.key if src else None,
                                                 line=src.line if src else None,
                                                 default=msg("config.default.megatron_sp_without_tp")))
    recompute = b.values.get("recompute", "")
    if "recompute" in signals:
        b.set("grad_ckpt", bool(recompute), doc.src(signals["recompute"][1]))
    else:
        b.default("grad_ckpt", bool(recompute), label)


# Signals that set one field to a boolean, in the order they are read.
_FLAG_FIELDS = (("ckpt", "grad_ckpt"), ("liger", "fused_ce"), ("galore", "galore"), ("dora", "use_dora"))


def _conv_features(b: Builder, doc: Doc, signals: Signals, defaults: dict[str, Any], entry: Entry | None) -> None:
    if "stage" in signals:
        b.set("stage", signals["stage"][0], doc.src(signals["stage"][1]))
    for kind, field in _FLAG_FIELDS:
        if kind in signals:
            b.set(field, bool(signals[kind][0]), doc.src(signals[kind][1]))
    if "liger" in signals and signals["liger"][0]:
        b.extras["use_liger_kernel"] = True      # the whole-model patch, as in the YAML reader above
        b.values["loss_kernel"] = "liger"         # fused in training only (memory/estimate.py _fused_in_eval)
    if "backend" in signals and str(signals["backend"][0]).lower() == "unsloth":
        b.set("use_unsloth", True, doc.src(signals["backend"][1]))
    if "packing" in signals:
        b.set("packing", bool(signals["packing"][0]), doc.src(signals["packing"][1]))
    elif "packing" in defaults:
        b.default("packing", defaults["packing"], entry.label if entry is not None else None)
    if "flash" in signals and signals["flash"][0]:
        b.set("attention", "fa2", doc.src(signals["flash"][1]))
    elif "attn" in signals:
        word = str(signals["attn"][0]).lower()
        b.set("attention", "fa2" if "flash" in word else ("eager" if word == "eager" else "sdpa"),
              doc.src(signals["attn"][1]))
    elif entry is not None and entry.attention:
        b.default("attention", entry.attention, entry.label)


def _conv_precision(b: Builder, doc: Doc, signals: Signals, defaults: dict[str, Any], label: Any) -> None:
    if "dtype" in signals and signals["dtype"][0]:
        b.set("load_dtype", signals["dtype"][0], doc.src(signals["dtype"][1]))
    if "bf16" in signals and signals["bf16"][0]:
        b.set("precision", "bf16", doc.src(signals["bf16"][1]))
    if "precision" in signals and signals["precision"][0]:
        b.set("precision", signals["precision"][0], doc.src(signals["precision"][1]))
    for kind in ("lightning_precision", "fsdp_qlora_precision"):     # (mixed dtype, weight dtype) words
        if kind in signals:
            (mixed, weights), name = signals[kind]
            b.set("precision", mixed, doc.src(name))
            b.set("load_dtype", weights, doc.src(name))
        elif kind in defaults:
            mixed, weights = defaults[kind]
            b.default("precision", mixed, label)
            b.default("load_dtype", weights, label)


# Megatron's --recompute-granularity and --recompute-method choices (megatron/training/arguments.py).
_RECOMPUTE_WORDS = {"recompute": ("full", "selective", "none"), "recompute_method": ("uniform", "block")}
_INT_KINDS = ("seq", "rank", "micro", "total", "prompt", "answer", "prefix", "sp", "gpus", "nodes", "tp", "pp", "vpp",
              "ep", "cp", "recompute_layers")
_BOOL_KINDS = ("use_lora", "q_lora", "full", "load4", "load8", "flash", "packing", "offload", "adam_offload", "ckpt",
               "bf16", "liger", "galore", "dora", "cpu_offload", "megatron_sp", "dist_opt")
# Kinds whose value is a word looked up in a table.
_WORD_TABLES: dict[str, Mapping[str, Any]] = {"precision": _DTYPES, "dtype": _DTYPES,
                                              "lightning_precision": _LIGHTNING_PRECISION, "stage": _STAGE_WORDS,
                                              "fsdp_qlora_precision": _FSDP_QLORA_PRECISION, "fsdp": _SHARDING_WORDS}


def _conv_value(doc: Doc, name: str, kind: str) -> Any:
    if kind in _INT_KINDS:
        return doc.int_(name, minimum=1)
    if kind == "ckpt" and (doc.str_(name) or "").lower() == "unsloth":
        return True         # unsloth's use_gradient_checkpointing="unsloth": its offloaded checkpointing, on
    if kind in _BOOL_KINDS:
        return doc.bool_(name)
    if kind in _WORD_TABLES:
        return _WORD_TABLES[kind].get((doc.str_(name) or "").lower())
    if kind == "model" and name == "checkpoint_dir":
        # lit-gpt's scripts/download.py (litgpt download today) writes a hub model to checkpoints/<repo_id>
        path = (doc.str_(name) or "").rstrip("/")
        head, _, rest = path.partition("checkpoints/")
        return rest if not head and rest.count("/") == 1 else (path or None)
    if kind in ("model", "attn", "backend"):
        return doc.str_(name)
    if kind in ("recompute", "recompute_method"):
        word = (doc.str_(name) or "").lower()
        return {"none": ""}.get(word, word) if word in _RECOMPUTE_WORDS[kind] else None
    if kind == "zero":
        return doc.int_(name, minimum=0, maximum=3)
    if kind == "alpha":
        value = doc.float_(name, minimum=0)
        return None if value is None else (int(value) if value == int(value) else value)
    if kind == "bits":
        word = (doc.str_(name) or "").lower()
        if word in _QUANTIZE_WORDS:
            return _QUANTIZE_WORDS[word]
        return doc.int_(name, minimum=1, maximum=64)
    if kind in ("train_type", "bridge_mode"):
        return _method_word(doc, name, kind)
    if kind == "targets":
        return _targets(doc.get(name))
    return None


def _method_word(doc: Doc, name: str, kind: str) -> str | None:
    """The method a train-type word names (a choice of the script's own, refused when it is none), or the mode of a
    Megatron-Bridge recipe run."""
    word = (doc.str_(name) or "").lower()
    if kind == "bridge_mode":
        return _bridge_mode(name, word)
    if word in _TRAIN_TYPES:
        return _TRAIN_TYPES[word]
    doc._bad(name, msg("config.not_a_choice", key=name, value=word, choices=tuple(_TRAIN_TYPES)))
    return None


def _bridge_mode(name: str, word: str) -> str | None:
    """Megatron-Bridge run_recipe.py's training mode: its `--mode pretrain|sft|lora|dora`, else the one a recipe's
    complete name encodes (scripts/training/recipe_metadata.py:214 infer_recipe_mode at 067f987df: `_pretrain_`,
    `_sft_` / `_finetune_` train every weight; `_dora_`, `_peft_` / `_lora_` an adapter, LoRA by default, the
    recipes' peft_scheme="lora")."""
    if name == "mode":
        return {"pretrain": "full", "sft": "full", "lora": "lora", "dora": "lora"}.get(word)
    padded = f"_{word.strip('_')}_"
    for marks, method in ((("_pretrain_",), "full"), (("_sft_", "_finetune_"), "full"),
                          (("_dora_", "_peft_", "_lora_"), "lora")):
        if any(m in padded for m in marks):
            return method
    return None


def _targets(v: Any) -> tuple[str, ...] | None:
    if isinstance(v, list):
        items = [str(t) for t in v]
    else:
        # A list written as one word: python-fire turns `'[q_proj,v_proj]'` into a list (alpaca-lora README's
        # --lora_target_modules), and JSON-minded scripts take `'["q_proj", "v_proj"]'`; brackets and quotes
        # are the list's syntax, not part of a module name.
        items = str(v).strip().strip("[]()").replace(",", " ").split()
    return tuple(t.strip("'\"") for t in items if t.strip("'\"")) or None


def _method(b: Builder, doc: Doc, signals: dict[str, tuple[Any, str]], defaults: dict[str, Any], entry: Any) -> None:
    """Full, LoRA or QLoRA, and the rank, from the strongest signal: an explicit mode word, then
    LoRA/full switches, then a quantised load or a LoRA rank (a script does not take a rank it does
    not use), then what the script does by default."""
    label = entry.label if entry is not None else None
    method, src = _said_method(b, doc, signals)
    bits = _quantised(signals)
    implied = entry is None or entry.rank_implies_lora
    if method is None and bits is not None:
        method, src = "qlora", bits[1]
    if method is None and "rank" in signals and implied:
        method, src = "lora", signals["rank"][1]
    if method is None and "rank" in signals and signals["rank"][0] and entry is not None and \
            entry.name == "deepspeed_chat" and "use_lora" in entry.flags.values():
        # DeepSpeed-Chat adds LoRA layers for --lora_dim but trains every weight unless --only_optimize_lora.
        b.note(msg("config.dschat_lora_full", where=doc.where(signals["rank"][1]), flag=signals["rank"][1]))
    if method is None:
        if "method" not in defaults:
            return
        method = defaults["method"]
        b.default("method", method, label)
    if method == "lora" and bits is not None:
        method, src = "qlora", bits[1]
    prequant = prequantized(str(b.values.get("model") or "")) if method == "lora" and bits is None else None
    if prequant is not None and "model" in b.sources:
        # A GPTQ/AWQ/bnb-4bit checkpoint loads quantised (its config.json's quantization_config): LoRA over it.
        method, src = "qlora", None
        b.set("method", "qlora", b.sources["model"])
        b.set("quant_bits", prequant[0], b.sources["model"])
        b.extras["quantization_method"] = prequant[1]
    if src is not None:
        b.set("method", method, doc.src(src))
    if method == "qlora" and prequant is None:
        if bits is not None:
            b.set("quant_bits", bits[0], doc.src(bits[1]))
        elif src is not None:
            b.set("quant_bits", defaults.get("quant_bits", 4), doc.src(src))
        else:
            b.default("quant_bits", defaults.get("quant_bits", 4), label)
    if method in ("lora", "qlora"):
        _adapter(b, doc, signals, defaults, label)


def _said_method(b: Builder, doc: Doc, signals: dict[str, tuple[Any, str]]) -> tuple[str | None, str | None]:
    """(the method an explicit mode word or a LoRA/full switch says, its flag), or (None, None)."""
    if "train_type" in signals:
        flag = signals["train_type"][1]
        word = (doc.str_(flag) or "").lower()
        if word in _OWN_LAYOUT:
            b.note(msg("config.peft_as_lora", where=doc.where(flag), kind=word))
        return signals["train_type"][0], flag
    if "bridge_mode" in signals:
        return signals["bridge_mode"][0], signals["bridge_mode"][1]
    if "full" in signals and signals["full"][0]:
        return "full", signals["full"][1]
    if "prefix" in signals:
        # P-tuning v2 trains a prefix encoder only: estimated as a small adapter on the frozen base.
        b.note(msg("config.ptuning", where=doc.where(signals["prefix"][1]), flag=signals["prefix"][1]))
        return "lora", signals["prefix"][1]
    if "q_lora" in signals and signals["q_lora"][0]:
        return "qlora", signals["q_lora"][1]
    if "use_lora" in signals:
        return ("lora" if signals["use_lora"][0] else "full"), signals["use_lora"][1]
    if "full" in signals:
        return "lora", signals["full"][1]          # full_finetuning False: the script's LoRA
    return None, None


def _quantised(signals: dict[str, tuple[Any, str]]) -> tuple[int, str] | None:
    """(the bits of a quantised base, the flag that says so), or None."""
    if "bits" in signals and signals["bits"][0] in (2, 3, 4, 8):
        return signals["bits"]
    if "load4" in signals and signals["load4"][0]:
        return 4, signals["load4"][1]
    if "load8" in signals and signals["load8"][0]:
        return 8, signals["load8"][1]
    return None


def _adapter(b: Builder, doc: Doc, signals: dict[str, tuple[Any, str]], defaults: dict[str, Any], label: Any) -> None:
    """The LoRA rank, alpha and targets: a flag's, else the script's own default."""
    for kind, field in (("rank", "lora_rank"), ("alpha", "lora_alpha")):
        if kind in signals:
            b.set(field, signals[kind][0], doc.src(signals[kind][1]))
        elif field in defaults:
            b.default(field, defaults[field], label)
    if "targets" in signals:
        t = signals["targets"][0]
        b.set("lora_targets", ("all",) if t in (("all",), ("all-linear",), ("all_linear",)) else t,
              doc.src(signals["targets"][1]))
    elif "lora_targets" in defaults:
        # a script whose LoRA target list is a constant in its source (Chinese-Vicuna finetune_chat.py)
        b.default("lora_targets", tuple(defaults["lora_targets"]), label)
