"""axolotl YAML. Defaults of axolotl 0.18 (schemas/config.py, peft.py, training.py; reference config-formats.md §2):
micro_batch_size 1, sequence_len 512, gradient_checkpointing off, optimizer adamw_torch_fused, bf16 auto."""
from __future__ import annotations

from oomdoctor.configs._doc import Builder, Doc
from oomdoctor.facts import TrainingSetup

AXOLOTL_VERSION = "0.18"

_ATTN = {"eager": "eager", "sdpa": "sdpa", "flash_attention_2": "fa2", "flash_attention_3": "fa2",
         "flex_attention": "sdpa", "xformers": "sdpa", "sage": "sdpa", "fp8": "fa2"}


def load_axolotl(doc: Doc, framework_version: str | None) -> TrainingSetup:
    from oomdoctor.configs import deepspeed as ds

    version = framework_version or AXOLOTL_VERSION
    b = Builder("axolotl", version, f"axolotl {version}")
    model = doc.str_("base_model")
    if not model:
        raise doc.fail("base_model", "base_model is empty")
    b.set("model", model, doc.src("base_model"))
    if doc.str_("rl"):
        b.set("stage", doc.str_("rl").lower(), doc.src("rl"))
    else:
        b.default("stage", "sft")

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
        b.set("method", "freeze", doc.src("unfrozen_parameters"))
    else:
        b.default("method", "full", "no adapter")
    if adapter:
        b.from_doc("lora_rank", doc, "lora_r", doc.int_("lora_r")) or \
            b.default("lora_rank", 8, "lora_r has no default in axolotl; assumed 8")
        b.from_doc("lora_alpha", doc, "lora_alpha", doc.int_("lora_alpha"))
        if doc.bool_("lora_target_linear"):
            b.set("lora_targets", ("all",), doc.src("lora_target_linear"))
        elif isinstance(doc.get("lora_target_modules"), list):
            b.set("lora_targets", tuple(str(t) for t in doc.get("lora_target_modules")), doc.src("lora_target_modules"))
        b.from_doc("use_dora", doc, "peft_use_dora", doc.bool_("peft_use_dora"))

    b.from_doc("micro_batch", doc, "micro_batch_size", doc.int_("micro_batch_size")) or b.default("micro_batch", 1)
    b.from_doc("grad_accum", doc, "gradient_accumulation_steps", doc.int_("gradient_accumulation_steps")) or \
        b.default("grad_accum", 1)
    if not b.from_doc("eval_batch", doc, "eval_batch_size", doc.int_("eval_batch_size")):
        b.set("eval_batch", b.values["micro_batch"], b.sources["micro_batch"])
    b.from_doc("eval_accum", doc, "eval_accumulation_steps", doc.int_("eval_accumulation_steps"))
    b.from_doc("seq_len", doc, "sequence_len", doc.int_("sequence_len")) or b.default("seq_len", 512, "sequence_len")
    b.from_doc("packing", doc, "sample_packing", doc.bool_("sample_packing")) or b.default("packing", False)

    # Precision: bf16 auto -> bf16 when the GPU supports it (config/__init__.py); load dtype follows it.
    bf16_raw = doc.get("bf16")
    fp16 = doc.bool_("fp16")
    if isinstance(bf16_raw, str) and bf16_raw.lower() == "auto":
        b.set("precision", "bf16", doc.src("bf16"))
        b.extras["bf16_auto"] = True
    elif doc.bool_("bf16"):
        b.set("precision", "bf16", doc.src("bf16"))
    elif fp16:
        b.set("precision", "fp16", doc.src("fp16"))
    elif doc.bool_("bfloat16"):
        b.set("precision", "bf16", doc.src("bfloat16"))
        b.set("pure_bf16", True, doc.src("bfloat16"))
    elif bf16_raw is None:
        b.default("precision", "bf16", "bf16: auto")
        b.extras["bf16_auto"] = True
    else:
        b.set("precision", "fp32", doc.src("bf16"))
    load = "fp16" if (in8 or b.values["precision"] == "fp16") else b.values["precision"]
    b.set("load_dtype", load, b.sources["precision"])

    gc = doc.get("gradient_checkpointing")
    if gc is not None and gc != "":
        on = gc is True or str(gc).lower() in ("true", "offload", "offload_disk")
        if not on and str(gc).lower() not in ("false",):
            raise doc.fail("gradient_checkpointing", f"gradient_checkpointing must be true, false, offload or "
                           f"offload_disk, got {gc!r}")
        b.set("grad_ckpt", on, doc.src("gradient_checkpointing"))
        if str(gc).lower().startswith("offload"):
            b.extras["gradient_checkpointing"] = str(gc).lower()
    else:
        b.default("grad_ckpt", False, "gradient_checkpointing")

    attn = doc.str_("attn_implementation")
    if attn:
        b.set("attention", _ATTN.get(attn.lower(), "sdpa"), doc.src("attn_implementation"))
    elif doc.bool_("flash_attention"):
        b.set("attention", "fa2", doc.src("flash_attention"))
    elif doc.bool_("sdp_attention") or doc.bool_("xformers_attention") or doc.bool_("flex_attention"):
        key = next(k for k in ("sdp_attention", "xformers_attention", "flex_attention") if doc.bool_(k))
        b.set("attention", "sdpa", doc.src(key))
    else:
        b.default("attention", "sdpa", "transformers' default attention")

    if doc.bool_("chunked_cross_entropy"):
        b.set("fused_ce", True, doc.src("chunked_cross_entropy"))
    elif doc.bool_("liger_fused_linear_cross_entropy") or doc.bool_("cut_cross_entropy"):
        key = "liger_fused_linear_cross_entropy" if doc.bool_("liger_fused_linear_cross_entropy") else "cut_cross_entropy"
        b.set("fused_ce", True, doc.src(key))

    opt = doc.str_("optimizer")
    b.from_doc("optimizer", doc, "optimizer", opt.lower() if opt else None) or \
        b.default("optimizer", "adamw_torch_fused", "optimizer")

    val = doc.float_("val_set_size")
    if val:
        b.set("do_eval", True, doc.src("val_set_size"))
    # FSDP: the legacy list (`fsdp: [full_shard, auto_wrap]`) or fsdp_config with fsdp_version.
    fsdp = doc.get("fsdp")
    fcfg = doc.get("fsdp_config") if isinstance(doc.get("fsdp_config"), dict) else {}
    if isinstance(fsdp, list) and fsdp:
        words = [str(w).lower() for w in fsdp]
        mode = next((w for w in words if w in ("full_shard", "shard_grad_op", "hybrid_shard")), "full_shard")
        b.set("fsdp", mode, doc.src("fsdp"))
        if "offload" in words:
            b.set("offload_params", True, doc.src("fsdp"))
            b.set("offload_optimizer", True, doc.src("fsdp"))
    elif fcfg and (doc.get("fsdp_version") is not None or any(k.startswith("fsdp_") for k in fcfg) or fcfg):
        strategy = str(fcfg.get("fsdp_sharding_strategy") or fcfg.get("sharding_strategy") or "")
        reshard = fcfg.get("reshard_after_forward", fcfg.get("fsdp_reshard_after_forward", True))
        mode = strategy.lower() if strategy.lower() in ("full_shard", "shard_grad_op", "hybrid_shard") else (
            "full_shard" if reshard not in (False, "false") else "shard_grad_op")
        b.set("fsdp", mode, doc.src("fsdp_config"))
    for key in ("fsdp_offload_params", "offload_params"):
        if key in fcfg and doc.bool_(f"fsdp_config.{key}") is not None:
            on = bool(doc.bool_(f"fsdp_config.{key}"))
            b.set("offload_params", on, doc.src(f"fsdp_config.{key}"))
            b.set("offload_optimizer", on, doc.src(f"fsdp_config.{key}"))

    b.keep(doc, ("num_epochs", "max_steps", "val_set_size", "lora_dropout", "lora_modules_to_save",
                 "activation_offloading", "layer_offloading", "lora_mlp_kernel", "lora_qkv_kernel", "lora_o_kernel",
                 "tiled_mlp", "context_parallel_size", "tensor_parallel_size", "expert_parallel_size",
                 "pad_to_sequence_len", "torch_compile", "unfrozen_parameters", "fsdp_version", "plugins",
                 "gradient_checkpointing_kwargs", "peft_autocast_adapter_dtype"))
    fields = {"config_file": doc.path}
    ref = doc.get("deepspeed")
    if isinstance(ref, str) and ref.strip():
        path, shipped = ds.find_deepspeed(ref.strip(), doc, "deepspeed")
        hf = {"micro_batch": b.values["micro_batch"], "grad_accum": b.values["grad_accum"],
              "bf16": b.values["precision"] == "bf16", "fp16": b.values["precision"] == "fp16"}
        ds.apply_deepspeed(b, path, shipped, doc.src("deepspeed"), hf, model)
        fields["deepspeed_file"] = path
    return b.build(**fields)
