"""axolotl YAML. One key table reads it and patches it.

Defaults of axolotl 0.18 (schemas/config.py, peft.py, training.py; reference config-formats.md §2), and of
older releases from the tags of axolotl-ai-cloud/axolotl:
- micro_batch_size 1, gradient_checkpointing off, bf16 auto; eval_batch_size = micro_batch_size;
- sequence_len 512 from 0.5 (the pydantic schema); before it the key had no default (examples set it);
- optimizer adamw_hf up to 0.7, adamw_torch_fused from 0.8 (the same memory);
- `batch_size` without gradient_accumulation_steps: accumulation = batch_size // micro_batch_size (utils/config);
- sequence_parallel_degree from 0.8, renamed context_parallel_size in 0.12 (the old name still read);
- the Cut Cross-Entropy plugin turns `cut_cross_entropy` on by default (integrations/cut_cross_entropy/args.py).
"""
from __future__ import annotations

import re
from typing import Any

from oomdoctor.configs import deepspeed as ds
from oomdoctor.configs._doc import Builder, Context, Doc
from oomdoctor.configs._edit import Out, precision, zero
from oomdoctor.configs._keys import Key, Marker, at_most, has_key, read_int, table, value_is, version_chooser
from oomdoctor.facts import Change, Framework, Msg, TrainingSetup, msg

NAME = "axolotl"
FRAMEWORK: Framework = "axolotl"
LABEL = "axolotl"
PACKAGE = "axolotl"
AXOLOTL_VERSION = "0.18"
DEFAULT_VERSION = AXOLOTL_VERSION

KEYS = table(
    Key("micro_batch", "micro_batch_size", after="gradient_accumulation_steps", minimum=1),
    Key("grad_accum", "gradient_accumulation_steps", after="micro_batch_size", minimum=1),
    Key("eval_batch", "eval_batch_size", after="micro_batch_size", minimum=1),
    Key("eval_accum", "eval_accumulation_steps", after="eval_batch_size", minimum=1),
    Key("seq_len", "sequence_len", after="output_dir", minimum=1),
    Key("method", "adapter", after="base_model"),
    Key("lora_rank", "lora_r", after="adapter", minimum=1),
    Key("lora_alpha", "lora_alpha", after="lora_r", minimum=1),
    Key("quant_bits", "load_in_4bit", after="adapter"),
    Key("precision", "bf16", after="gradient_checkpointing"),
    Key("grad_ckpt", "gradient_checkpointing", after="micro_batch_size"),
    Key("attention", "attn_implementation", after="gradient_checkpointing", aliases=("flash_attention",)),
    Key("fused_ce", "chunked_cross_entropy", after="gradient_checkpointing"),
    Key("optimizer", "optimizer", after="learning_rate"),
    Key("zero_stage", "deepspeed", after="gradient_checkpointing"),
    Key("packing", "sample_packing", after="sequence_len"),
    Key("seq_parallel", "context_parallel_size", after="sequence_len", minimum=1,
        until=(("0.11", "sequence_parallel_degree"),)),
)

MARKERS = (
    Marker(value_is("gradient_checkpointing", r"^unsloth$"), "<=", "0.9.1"),
    Marker(has_key("sequence_parallel_degree"), ">=", "0.8"),
    Marker(has_key("context_parallel_size", "attn_implementation"), ">=", "0.12"),
)

_ATTN = {"eager": "eager", "sdpa": "sdpa", "flash_attention_2": "fa2", "flash_attention_3": "fa2",
         "flex_attention": "sdpa", "xformers": "sdpa", "sage": "sdpa", "fp8": "fa2"}
_HF_ATTN = {"eager": "eager", "sdpa": "sdpa", "fa2": "flash_attention_2"}
_CCE_PLUGIN = "cut_cross_entropy"
_LIGER_PLUGIN = "liger"


def detect(data: dict) -> Msg | None:
    if "base_model" in data:
        return msg("config.why.axolotl", keys="base_model")
    return None


version = version_chooser(NAME, DEFAULT_VERSION, PACKAGE, MARKERS)


def read(doc: Doc, ctx: Context) -> TrainingSetup:
    version = ctx.framework_version or AXOLOTL_VERSION
    b = Builder(FRAMEWORK, version, f"axolotl {version}")
    b.framework_reason, b.version_reason = ctx.reason, ctx.version_reason
    model = doc.str_("base_model")
    if not model:
        raise doc.fail("base_model", msg("config.no_model", key="base_model"))
    b.set("model", model, doc.src("base_model"))
    rl = doc.str_("rl")
    if rl:
        b.set("stage", rl.lower(), doc.src("rl"))
    else:
        b.default("stage", "sft")
    adapter = _read_method(b, doc)
    if adapter:
        _read_adapter(b, doc)
    _read_batch(b, doc)
    _read_length(b, doc, version)
    _read_precision(b, doc)
    fcfg = doc.get("fsdp_config") if isinstance(doc.get("fsdp_config"), dict) else {}
    _read_checkpointing(b, doc, fcfg)
    _read_attention(b, doc)
    _fused_loss(b, doc)

    opt = doc.str_("optimizer")
    if not b.from_doc("optimizer", doc, "optimizer", opt.lower() if opt else None):
        b.default("optimizer", "adamw_hf" if at_most(version, "0.7.1") else "adamw_torch_fused", "optimizer")

    val = doc.float_("val_set_size", minimum=0)
    if val:
        b.set("do_eval", True, doc.src("val_set_size"))
    _fsdp(b, doc, fcfg)
    _world(b, doc)

    b.keep(doc, ("num_epochs", "max_steps", "val_set_size", "lora_dropout", "lora_modules_to_save",
                 "activation_offloading", "layer_offloading", "lora_mlp_kernel", "lora_qkv_kernel", "lora_o_kernel",
                 "tiled_mlp", "tensor_parallel_size", "expert_parallel_size",
                 "pad_to_sequence_len", "torch_compile", "unfrozen_parameters", "fsdp_version", "plugins",
                 "gradient_checkpointing_kwargs", "peft_autocast_adapter_dtype", "quantize_moe_experts"))
    if b.extras.get("gradient_checkpointing") in ("offload", "offload_disk", "unsloth"):
        _offloaded_checkpointing(b, version)
    fields: dict[str, Any] = {"config_file": doc.path}
    if isinstance(doc.get("deepspeed"), str) and doc.get("deepspeed").strip():
        hf = {"micro_batch": b.values["micro_batch"], "grad_accum": b.values["grad_accum"],
              "bf16": b.values["precision"] == "bf16", "fp16": b.values["precision"] == "fp16"}
        path = ds.read_ref(b, doc, "deepspeed", hf, model)
        if path:
            fields["deepspeed_file"] = path
    return b.build(doc, **fields)


def _read_method(b: Builder, doc: Doc) -> str:
    """The method the adapter and the base's quantisation say; the adapter word ("" for none)."""
    adapter = (doc.str_("adapter") or "").lower()
    in4, in8 = doc.bool_("load_in_4bit"), doc.bool_("load_in_8bit")
    if adapter == "qlora":
        b.set("method", "qlora", doc.src("adapter"))
        b.set("quant_bits", 4, doc.src("load_in_4bit") if in4 else doc.src("adapter"))
    elif adapter == "lora":
        if in8:
            # bnb int8 base under LoRA (loaders/model.py honours load_in_8bit only with adapter: lora).
            b.set("method", "qlora", doc.src("load_in_8bit"))
            b.set("quant_bits", 8, doc.src("load_in_8bit"))
        else:
            b.set("method", "lora", doc.src("adapter"))
    elif adapter:
        b.set("method", "lora", doc.src("adapter"))
        b.extras["adapter"] = adapter
    elif doc.get("unfrozen_parameters"):
        patterns = doc.get("unfrozen_parameters")
        layers = _unfrozen_layers([patterns] if isinstance(patterns, str) else
                                  [str(p) for p in patterns] if isinstance(patterns, list) else [])
        if layers >= _PROBE_LAYERS:
            # every decoder layer trains: what stays frozen (a vision tower, the embeddings) is small beside it
            b.set("method", "full", doc.src("unfrozen_parameters"))
            b.note(msg("config.axolotl_unfrozen_all", where=f"{doc.path}:{doc.src('unfrozen_parameters').line}"))
        else:
            b.set("method", "freeze", doc.src("unfrozen_parameters"))
            if layers:
                b.set("freeze_trainable_layers", layers, doc.src("unfrozen_parameters"))
    else:
        b.default("method", "full", msg("config.default.no_adapter"))
    return adapter


# axolotl utils/freeze.py freeze_layers_except: every parameter is frozen but those a pattern matches; a pattern is
# `re.match`ed from the name's start, each `.` not followed by `+` taken literally, a trailing `[a:b]` range cut off
# (LayerNamePattern). A decoder layer trains when its attention and MLP weights match, under the parameter names of
# transformers' model families (decoder, multimodal language model, GPT-2/Falcon, GPT-NeoX, OPT); probed up to
# _PROBE_LAYERS layers (more than any released decoder: Llama-3.1-405B has 126), all of them meaning "every layer".
_LAYER_PREFIXES = ("model.layers.{i}", "model.language_model.layers.{i}", "language_model.model.layers.{i}",
                   "transformer.h.{i}", "gpt_neox.layers.{i}", "model.decoder.layers.{i}")
_LAYER_BULK = (("self_attn.q_proj.weight", "mlp.down_proj.weight"),
               ("self_attention.query_key_value.weight", "mlp.dense_4h_to_h.weight"),
               ("attention.query_key_value.weight", "mlp.dense_4h_to_h.weight"),
               ("attn.c_attn.weight", "mlp.c_proj.weight"),
               ("self_attn.q_proj.weight", "fc2.weight"))
_PROBE_LAYERS = 128


def _unfrozen_layers(patterns: list[str]) -> int:
    """How many of the first _PROBE_LAYERS decoder layers `unfrozen_parameters` leaves trainable."""
    compiled = []
    for pattern in patterns:
        ranged = re.match(r"^(.+)\[([0-9]*)(?::([0-9]*))?\]$", pattern)
        try:
            compiled.append(re.compile(re.sub(r"\.(?!\+)", r"\\.", ranged.group(1) if ranged else pattern)))
        except re.error:
            continue

    def trains(name: str) -> bool:
        return any(c.match(name) for c in compiled)

    return sum(1 for i in range(_PROBE_LAYERS)
               if any(all(trains(f"{prefix.format(i=i)}.{part}") for part in bulk)
                      for prefix in _LAYER_PREFIXES for bulk in _LAYER_BULK))


def _read_adapter(b: Builder, doc: Doc) -> None:
    if not read_int(b, doc, KEYS["lora_rank"]):
        b.default("lora_rank", 8, msg("config.default.axolotl_lora_r", rank=8))
    read_int(b, doc, KEYS["lora_alpha"])
    if doc.bool_("lora_target_linear"):
        b.set("lora_targets", ("all",), doc.src("lora_target_linear"))
    elif isinstance(doc.get("lora_target_modules"), list):
        b.set("lora_targets", tuple(str(t) for t in doc.get("lora_target_modules")), doc.src("lora_target_modules"))
    b.from_doc("use_dora", doc, "peft_use_dora", doc.bool_("peft_use_dora"))


def _read_batch(b: Builder, doc: Doc) -> None:
    if not read_int(b, doc, KEYS["micro_batch"]):
        b.default("micro_batch", 1)
    if not read_int(b, doc, KEYS["grad_accum"]):
        total = doc.int_("batch_size", minimum=1)
        if total is not None:
            # Old configs give the total batch: accumulation = batch_size // micro_batch_size (utils/config).
            b.set("grad_accum", max(1, total // b.values["micro_batch"]), doc.src("batch_size"))
        else:
            b.default("grad_accum", 1)
    if not read_int(b, doc, KEYS["eval_batch"]):
        b.set("eval_batch", b.values["micro_batch"], b.sources["micro_batch"])
    read_int(b, doc, KEYS["eval_accum"])


def _read_length(b: Builder, doc: Doc, version: str) -> None:
    if not read_int(b, doc, KEYS["seq_len"]):
        if at_most(version, "0.4.0"):
            b.default("seq_len", 2048, msg("config.default.axolotl_seq_old", tokens=2048))
        else:
            b.default("seq_len", 512, "sequence_len")
    if not b.from_doc("packing", doc, "sample_packing", doc.bool_("sample_packing")):
        b.default("packing", False)
    read_int(b, doc, KEYS["seq_parallel"], version)


def _read_precision(b: Builder, doc: Doc) -> None:
    # Precision: bf16 auto -> bf16 when the GPU supports it (config/__init__.py); load dtype follows it.
    bf16_raw = doc.get("bf16")
    fp16 = doc.bool_("fp16")
    if isinstance(bf16_raw, str) and bf16_raw.strip().lower() == "auto":
        b.set("precision", "bf16", doc.src("bf16"))
        b.extras["bf16_auto"] = True
    elif doc.bool_("bf16"):
        b.set("precision", "bf16", doc.src("bf16"))
    elif fp16:
        b.set("precision", "fp16", doc.src("fp16"))
    elif doc.bool_("bfloat16"):
        b.set("precision", "bf16", doc.src("bfloat16"))
        b.set("pure_bf16", True, doc.src("bfloat16"))
    elif doc.bool_("float16") and bf16_raw is not None:      # bf16 unset is "auto" (on where supported)
        # `float16: true` with bf16 and fp16 off loads the weights in fp16 and trains them without autocast
        # (utils/config/__init__.py: torch_dtype float16 for `cfg.float16`), so fp16 is the compute dtype.
        b.set("precision", "fp16", doc.src("float16"))
    elif bf16_raw is None:
        b.default("precision", "bf16", "bf16: auto")
        b.extras["bf16_auto"] = True
    else:
        b.set("precision", "fp32", doc.src("bf16"))
    load = "fp16" if (doc.bool_("load_in_8bit") or b.values["precision"] == "fp16") else b.values["precision"]
    b.set("load_dtype", load, b.sources["precision"])


_CKPT_WORDS = ("true", "false", "offload", "offload_disk", "unsloth")


def _offloaded_checkpointing(b: Builder, version: str) -> None:
    """`gradient_checkpointing: offload` keeps the checkpointed layers' inputs in host memory. From 0.12 (99187cd20)
    it turns activation_offloading on (utils/schemas/validation.py check_gradient_checkpointing_w_offload); before,
    it swapped in hf_grad_checkpoint_offload_wrapper, an autograd.Function that copies each layer's input to the
    host and runs the layer under no_grad, whatever use_reentrant says (utils/gradient_checkpointing/unsloth.py
    Unsloth_Offloaded_Gradient_Checkpointer)."""
    b.extras["activation_offloading"] = True
    if b.extras.get("gradient_checkpointing") == "unsloth" or at_most(version, "0.11.99"):
        b.extras["gradient_checkpointing_kwargs"] = {"use_reentrant": True}


def _read_checkpointing(b: Builder, doc: Doc, fcfg: dict) -> None:
    gc = doc.get("gradient_checkpointing")
    if gc is not None and gc != "":
        word = str(gc).strip().lower()
        if gc is not True and gc is not False and word not in _CKPT_WORDS:
            doc._bad("gradient_checkpointing", msg("config.not_a_choice", key="gradient_checkpointing",
                                                    value=str(gc), choices=("true", "false", "offload", "offload_disk")))
        else:
            on = gc is True or word in ("true", "offload", "offload_disk", "unsloth")
            b.set("grad_ckpt", on, doc.src("gradient_checkpointing"))
            if word in ("offload", "offload_disk", "unsloth"):
                b.extras["gradient_checkpointing"] = word
    for key in ("activation_checkpointing", "fsdp_activation_checkpointing"):
        if fcfg.get(key) is not None and doc.bool_(f"fsdp_config.{key}"):
            # FSDP checkpoints every wrapped layer itself (axolotl validation.py refuses both at once).
            b.set("grad_ckpt", True, doc.src(f"fsdp_config.{key}"))
            # non-reentrant: accelerate wraps each layer with torch's checkpoint_wrapper, CheckpointImpl.NO_REENTRANT
            # (accelerator.py FSDP1 apply_activation_checkpointing; utils/fsdp_utils.py FSDP2 checkpoint_wrapper)
            b.extras.setdefault("gradient_checkpointing_kwargs", {"use_reentrant": False})
    if "grad_ckpt" not in b.values:
        b.default("grad_ckpt", False, "gradient_checkpointing")


def _read_attention(b: Builder, doc: Doc) -> None:
    attn = doc.str_("attn_implementation")
    if attn:
        # A hub kernel (kernels-community/vllm-flash-attn3, …/flash-attn3) is a FlashAttention too.
        word = attn.lower()
        b.set("attention", _ATTN.get(word, "fa2" if "flash" in word else "sdpa"), doc.src("attn_implementation"))
    elif doc.bool_("flash_attention"):
        b.set("attention", "fa2", doc.src("flash_attention"))
    elif doc.bool_("sdp_attention") or doc.bool_("xformers_attention") or doc.bool_("flex_attention"):
        key = next(k for k in ("sdp_attention", "xformers_attention", "flex_attention") if doc.bool_(k))
        b.set("attention", "sdpa", doc.src(key))
    else:
        b.default("attention", "sdpa", msg("config.default.transformers_attention"))


_PARALLEL = ("dp_shard_size", "dp_replicate_size", "tensor_parallel_size", "context_parallel_size",
             "sequence_parallel_degree", "expert_parallel_size")


def _world(b: Builder, doc: Doc) -> None:
    """The GPUs the N-D parallel sizes take: axolotl fills the world with tensor × context × expert ×
    FSDP-shard × replicate groups (utils/distributed.py _get_parallel_config_kwargs) and refuses a world
    they do not fit, so their product is the least world size the config runs on (exactly it when
    dp_shard_size is set)."""
    sizes = {k: doc.int_(k, minimum=1) for k in _PARALLEL if doc.get(k) is not None}
    if sizes.get("context_parallel_size") and sizes.get("sequence_parallel_degree"):
        sizes.pop("sequence_parallel_degree")        # the old name of the same size
    product = 1
    for size in sizes.values():
        product *= size or 1
    if product > 1:
        key = next(k for k in _PARALLEL if (sizes.get(k) or 1) > 1)
        b.set("n_gpus", product, doc.src(key))


def _fused_loss(b: Builder, doc: Doc) -> None:
    """Chunked cross-entropy, or a plugin that fuses the loss into the last projection (Cut
    Cross-Entropy, Liger's fused linear cross-entropy): no full fp32 logits either way."""
    plugins = doc.get("plugins")
    names = [str(p).lower() for p in plugins] if isinstance(plugins, list) else []
    if doc.bool_("chunked_cross_entropy"):
        b.set("fused_ce", True, doc.src("chunked_cross_entropy"))
    elif any(_CCE_PLUGIN in p for p in names) and doc.bool_("cut_cross_entropy") is not False:
        key = "cut_cross_entropy" if doc.has("cut_cross_entropy") else "plugins"
        b.set("fused_ce", True, doc.src(key))
    elif doc.bool_("liger_fused_linear_cross_entropy"):
        b.set("fused_ce", True, doc.src("liger_fused_linear_cross_entropy"))
        b.values["loss_kernel"] = "liger"         # fused in training only (memory/estimate.py _fused_in_eval)
    if any(_LIGER_PLUGIN in p for p in names):
        # the Liger plugin's own switches for its norm and MLP-product kernels (axolotl integrations/liger
        # args.py; liger_swiglu its older name of liger_glu_activation), which the memory model reads one by one
        # (Mechanisms.liger_norm, liger_glu)
        for key, kept in (("liger_rms_norm", "liger_rms_norm"), ("liger_glu_activation", "liger_glu_activation"),
                          ("liger_swiglu", "liger_glu_activation")):
            if doc.bool_(key):
                b.extras[kept] = True


def _fsdp(b: Builder, doc: Doc, fcfg: dict) -> None:
    """The legacy list (`fsdp: [full_shard, auto_wrap]`) or fsdp_config with fsdp_version."""
    fsdp = doc.get("fsdp")
    if isinstance(fsdp, list) and fsdp:
        words = [str(w).lower() for w in fsdp]
        mode = next((w for w in words if w in ("full_shard", "shard_grad_op", "hybrid_shard")), "full_shard")
        b.set("fsdp", mode, doc.src("fsdp"))
        if "offload" in words:
            b.set("offload_params", True, doc.src("fsdp"))
            b.set("offload_optimizer", True, doc.src("fsdp"))
    elif fcfg:
        strategy = str(fcfg.get("fsdp_sharding_strategy") or fcfg.get("sharding_strategy") or "")
        reshard = fcfg.get("reshard_after_forward", fcfg.get("fsdp_reshard_after_forward", True))
        mode = strategy.lower() if strategy.lower() in ("full_shard", "shard_grad_op", "hybrid_shard") else (
            "full_shard" if reshard not in (False, "false") else "shard_grad_op")
        b.set("fsdp", mode, doc.src("fsdp_config"))
    if doc.get("fsdp_version") is None and fcfg.get("fsdp_version") is not None:
        # axolotl takes fsdp_version at the top level or inside fsdp_config and copies the latter up
        # (utils/schemas/validation.py:1114-1115 at 067b021c8); the memory model reads it from the extras
        b.extras["fsdp_version"] = fcfg.get("fsdp_version")
    for key in ("fsdp_offload_params", "offload_params", "cpu_offload"):
        if key in fcfg and doc.bool_(f"fsdp_config.{key}") is not None:
            on = bool(doc.bool_(f"fsdp_config.{key}"))
            b.set("offload_params", on, doc.src(f"fsdp_config.{key}"))
            b.set("offload_optimizer", on, doc.src(f"fsdp_config.{key}"))


def _edit_method(out: Out, v: Any, final: dict[str, Any]) -> None:
    if v not in ("lora", "qlora"):
        out.put("adapter", None, after="base_model")
        return
    out.put("adapter", v, after="base_model")
    bits = final.get("quant_bits") or 4
    if v == "qlora":
        out.put("load_in_4bit" if bits == 4 else "load_in_8bit", True, after="adapter")
    if not out.has_key("lora_r") and out.setup.sources.get("lora_rank", None) is not None \
            and not out.setup.sources["lora_rank"].file:
        out.put("lora_r", 8, after="adapter")
        out.put("lora_alpha", 16, after="lora_r")
    if not out.has_key("lora_target_linear") and not out.has_key("lora_target_modules"):
        out.put("lora_target_linear", True, after="adapter")


def _edit_attention(out: Out, v: Any) -> None:
    _, key = out.field_key("attention")
    if key == "flash_attention" or (v == "fa2" and key in (None, "flash_attention")):
        if v == "fa2":
            out.put("flash_attention", True, after="gradient_checkpointing")
            return
        out.put("flash_attention", False)
    out.put("attn_implementation", _HF_ATTN.get(v, v), after="gradient_checkpointing")


def edit(out: Out, c: Change, final: dict[str, Any]) -> None:
    v, f = c.after, c.field
    if f in ("micro_batch", "grad_accum", "seq_len", "lora_rank", "eval_batch", "seq_parallel"):
        out.put_key(KEYS[f], int(v))
    elif f == "method":
        _edit_method(out, v, final)
    elif f == "quant_bits":
        out.put("load_in_4bit", v == 4, after="adapter")
        if v == 8 or out.has_key("load_in_8bit"):
            out.put("load_in_8bit", v == 8, after="adapter")
    elif f == "precision":
        precision(out, v, after="gradient_checkpointing")
    elif f in ("grad_ckpt", "packing"):
        out.put_key(KEYS[f], bool(v))
    elif f == "attention":
        _edit_attention(out, v)
    elif f == "fused_ce":
        out.put_key(KEYS["fused_ce"], bool(v))
    elif f == "optimizer":
        out.put_key(KEYS["optimizer"], v)
    elif f in ("zero_stage", "offload_optimizer", "offload_params"):
        zero(out, c, final, "deepspeed", "gradient_checkpointing")
