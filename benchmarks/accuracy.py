"""Proof 1: oomdoctor's estimate against published, measured peaks.

    python benchmarks/accuracy.py [--by-source] [--set original|peft-methods|fresh-2026-12|fresh-2026-12b|...|fresh-2026-12h|all]

Runs every case of tests/data/reference/measured_peaks.yaml with reliability high or medium and a measured
figure (plus every `oom: true` case), converts it into a TrainingSetup + ModelShape with the small generic
converter below, and compares allocated_gib with cases that measured torch allocated/active memory and the
reserved-memory figure (allocated + allocator reserve) with reserved cases; nvidia-smi / unstated tools are
compared with peak_gib. Prints the table, the median and 90th-percentile absolute error.
Cases the inputs cannot express (encoder-decoder models, naive pipeline splits) are listed and skipped.
--by-source groups the rows by the publication they come from (repository and file): each source's median
and worst error, and every row's components (weights, gradients, optimizer, activations, logits, allocator
reserve, GiB per GPU) beside the figure the source reports and what it counted.
--configs scores only the rows that name their own config file (`config`, under tests/data/reference/) and
reads each as `oomdoctor CONFIG --gpus N` does: oomdoctor's config reader, model catalog and --gpus rule, with
no converter between (the fresh-2026-12b axolotl rows).
--code DIR imports oomdoctor from another checkout (the untouched commit, for a first-sight figure) and scores
it on this checkout's rows and converter: with --configs, exactly what that checkout's CLI gives on the files.
--set original keeps the rows that carry no `calibration_set` (the 74 rows scored before PEFT's method comparison
was added), --set peft-methods only those of that set; the default, all, prints the original rows' summary
under the summary of all rows.
Where a row is read otherwise than its first sight (the quantity or unit its tool really reports), the
reason is printed under the table; nothing is excluded for being off.
"""
from __future__ import annotations

import os
import re
import statistics
import sys
from dataclasses import replace

import yaml


def _code_dir(argv: list) -> str:
    """`--code DIR`: score another checkout's oomdoctor (its reader and memory model) on this checkout's rows,
    e.g. the untouched commit for a first-sight figure; this checkout's own package otherwise."""
    for i, arg in enumerate(argv):
        if arg == "--code" and i + 1 < len(argv):
            return os.path.abspath(argv[i + 1])
        if arg.startswith("--code="):
            return os.path.abspath(arg.split("=", 1)[1])
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


sys.path.insert(0, _code_dir(sys.argv[1:]) if __name__ == "__main__" else os.path.join(os.path.dirname(__file__), ".."))

from oomdoctor.facts import GIB, Hardware, ModelShape, TrainingSetup  # noqa: E402
from oomdoctor.memory import estimate  # noqa: E402

REF = os.environ.get("OOMDOCTOR_REFERENCE", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "reference"))
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Shapes of models the reference catalog lacks (public config.json values). Qwen-1 lists the MLP width
# doubled in config.json (w1/w2 each intermediate_size/2); stored here per projection.
EXTRA_SHAPES = {
    "microsoft/phi-1_5": dict(model_type="phi", hidden_size=2048, intermediate_size=8192, num_layers=24, num_heads=32,
                              num_kv_heads=32, vocab_size=51200, gated_mlp=False, attention_bias=True, mlp_bias=True,
                              params_total=1_418_270_720),
    "microsoft/phi-2": dict(model_type="phi", hidden_size=2560, intermediate_size=10240, num_layers=32, num_heads=32,
                            num_kv_heads=32, vocab_size=51200, gated_mlp=False, attention_bias=True, mlp_bias=True,
                            params_total=2_779_683_840),
    "stabilityai/stablelm-base-alpha-3b": dict(model_type="gpt_neox", hidden_size=4096, intermediate_size=16384,
                                               num_layers=16, num_heads=32, num_kv_heads=32, vocab_size=50688,
                                               gated_mlp=False, attention_bias=True, mlp_bias=True),
    "TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T": dict(hidden_size=2048, intermediate_size=5632, num_layers=22,
                                                                num_heads=32, num_kv_heads=4, vocab_size=32000),
    # Llama-2-7b with the Chinese-LLaMA-2 tokenizer: embeddings resized to 55,296 rows (hfl/chinese-llama-2-7b
    # config.json vocab_size 55296; the other figures are Llama-2-7b's)
    # OpenBuddy's Mistral-7B fine-tune extends the tokenizer: 36,608 embedding and output rows (config.json
    # vocab_size 36608, as TheBloke/openbuddy-zephyr-7B-v14.1-GPTQ republishes it); the rest is Mistral-7B-v0.1's
    "OpenBuddy/openbuddy-zephyr-7b-v14.1": dict(model_type="mistral", hidden_size=4096, intermediate_size=14336,
                                                num_layers=32, num_heads=32, num_kv_heads=8, vocab_size=36608,
                                                params_total=7_279_480_832),
    "hfl/chinese-llama-2-7b": dict(hidden_size=4096, intermediate_size=11008, num_layers=32, num_heads=32, num_kv_heads=32,
                                   vocab_size=55296, params_total=6_929_256_448),
    "Qwen/Qwen-1_8B": dict(model_type="qwen", hidden_size=2048, intermediate_size=5504, num_layers=24, num_heads=16,
                           num_kv_heads=16, vocab_size=151936, attention_bias=True, params_total=1_836_828_672),
    "Qwen/Qwen-7B": dict(model_type="qwen", hidden_size=4096, intermediate_size=11008, num_layers=32, num_heads=32,
                         num_kv_heads=32, vocab_size=151936, attention_bias=True, params_total=7_721_324_544),
    "Qwen/Qwen-14B": dict(model_type="qwen", hidden_size=5120, intermediate_size=13696, num_layers=40, num_heads=40,
                          num_kv_heads=40, vocab_size=152064, attention_bias=True, params_total=14_167_290_880),
    "Qwen/Qwen-72B": dict(model_type="qwen", hidden_size=8192, intermediate_size=24576, num_layers=80, num_heads=64,
                          num_kv_heads=64, vocab_size=152064, attention_bias=True, params_total=72_287_920_128),
}
# Longest sample of datasets named in the cases, tokens.
#   alpaca      LitGPT resource tables: the longest Alpaca sample is 1304 tokens with Llama 2's tokenizer.
#   metamathqa  PEFT's method comparison keeps samples of at most CHAR_LIMIT = 1300 characters (query + " " +
#               response; method_comparison/MetaMathQA/data.py) in the template "Question: {query} Think step by
#               step.\nAnswer:" (36 more). Its own runs tokenise 4,198,051 tokens for 20,000 samples (210 per sample,
#               13 of them template, BOS and EOS; results/*.json "train total tokens"), and a MetaMathQA sample
#               holds about 660 characters of query and response (MetaMathQA-dedup's card: 362,742,057 bytes for
#               387,802 rows of type, query, original question and response) - 3.35 characters per token, so
#               the longest sample is about 1336 / 3.35 + 2 = 401 tokens. Its `max_seq_length` 768 is only the
#               truncation bound the character limit was chosen under.
DATASET_LONGEST = {"alpaca": 1304, "metamathqa": 768}
_DTYPE = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}


def _reference_shapes() -> dict:
    with open(os.path.join(REF, "model-shapes.yaml")) as fh:
        data = yaml.load(fh, Loader=_Loader)
    return {m["id"]: m for m in data["models"]}


def _shape_from_ref(m: dict) -> ModelShape:
    moe = m.get("moe") or {}
    return ModelShape(
        name=m["id"], model_type=m.get("model_type", "llama"), hidden_size=int(m["hidden_size"]),
        intermediate_size=int(m.get("intermediate_size") or 4 * int(m["hidden_size"])),
        num_layers=int(m["num_hidden_layers"]), num_heads=int(m["num_attention_heads"]),
        num_kv_heads=int(m.get("num_key_value_heads") or m["num_attention_heads"]),
        head_dim=int(m["head_dim"]) if m.get("head_dim") else None, vocab_size=int(m["vocab_size"]),
        tie_word_embeddings=bool(m.get("tie_word_embeddings", False)),
        attention_bias=bool(m.get("attention_bias", False)),
        torch_dtype=_DTYPE.get(str(m.get("torch_dtype", "bfloat16")), "bf16"),
        num_experts=int(moe.get("num_experts") or moe.get("num_local_experts") or moe.get("n_routed_experts") or 0),
        experts_per_token=int(moe.get("num_experts_per_tok") or 0),
        moe_intermediate_size=moe.get("moe_intermediate_size"),
        params_total=int(m["official_params"]) if m.get("official_params") else None,
        source="reference",
    )


def resolve_shape(name: str, ref: dict) -> ModelShape | None:
    try:   # the catalog engineer's resolver, when present
        from oomdoctor.models import resolve_model  # type: ignore
        found = resolve_model(name)
        if found.name != name.split(" ")[0] and name.split(" ")[0] in EXTRA_SHAPES:
            # the catalog stood another model in for this one (its nearest family); the row's own config wins
            return ModelShape(name=name.split(" ")[0], **EXTRA_SHAPES[name.split(" ")[0]])
        return found
    except Exception:
        pass
    base = name.split(" ")[0]
    for key in (base, base.replace("-Chat", "").replace("-Instruct", ""),
                re.sub(r"-Chat(-Int\d)?$", "", base), re.sub(r"-Instruct$", "", base).replace("Meta-Llama", "Llama"),
                base.replace("Llama-3.1-", "Llama-3.1-").replace("-Instruct", "")):
        if key in ref:
            return _shape_from_ref(ref[key])
        if key in EXTRA_SHAPES:
            return ModelShape(name=key, **EXTRA_SHAPES[key])
    if "Mistral-7B" in name or "mistral-7b" in name.lower() or "zephyr-7b" in name.lower():
        return _shape_from_ref(ref["mistralai/Mistral-7B-v0.1"])
    return None


def _seq_len(case: dict) -> int | None:
    text = f"{case.get('seq_len')}"
    m = re.search(r"longest[^0-9]*?(\d[\d,]*)\s*tokens", text)
    if m:
        return int(m.group(1).replace(",", ""))
    if isinstance(case.get("seq_len"), int):
        return case["seq_len"]
    low = text.lower()
    # a dataset of DATASET_LONGEST by its own name: LongAlpaca-12k and alpaca-gpt4 are other datasets
    # (other samples, other tokenizers) that only contain the word
    named = [ds for ds in DATASET_LONGEST if re.search(rf"(?<![a-z]){ds}(?![a-z0-9-])", low)]
    for ds in named:
        if "max" not in low.split(ds)[0]:
            return DATASET_LONGEST[ds]
    nums = [int(x) for x in re.findall(r"\d{3,7}", text)]     # 512000-token runs have six digits
    if nums:
        found = [DATASET_LONGEST[ds] for ds in named]
        if found:
            return min(max(nums), max(found))
        return max(nums)
    return None


def _framework(fw: str) -> tuple[str, dict]:
    low = fw.lower()
    extras: dict = {}
    if "litgpt" in low or "lit-gpt" in low:
        extras["loss"] = "chunked"     # LitGPT chunked cross-entropy: bf16 logits, fp32 per 128-token chunk
        return "litgpt", extras
    if "torchtune" in low:
        if "chunked_ce=false" not in low.replace(" ", "").lower():
            extras["loss"] = "chunked"
        if "compile=true" in low.replace(" ", ""):
            extras["compile"] = True
        return "torchtune", extras
    if "fsdp_qlora" in low:
        # train.py @7242daa (2024-03-21) ran on the transformers of its day (4.38/4.39): LlamaForCausalLM.forward
        # still called logits.float() and shifted a contiguous copy
        extras["transformers_version"] = "4.38"
        return "fsdp_qlora", extras
    if "axolotl" in low:
        # axolotl's own defaults (oomdoctor's framework "axolotl": reentrant checkpointing unless the config says
        # otherwise, memory/estimate.py _reentrant; fp32 embeddings of full runs, regime.py)
        return "axolotl", extras
    if "llama-factory" in low or "llamafactory" in low:
        # LLaMA-Factory's own loader and defaults (oomdoctor's framework "llamafactory": the model loaded in the
        # compute dtype, trainable parameters cast to fp32, reentrant checkpointing, double quantization)
        return "llamafactory", extras
    if "trl" in low:
        return "trl", extras
    if "swift v1" in low:
        # ms-swift v1.5 (the benchmark's commits 97e4d198b/4312aeb28 are first tagged v1.5.1) on the transformers
        # of its day (early 2024): the framework names itself, the transformers release is kept beside it
        extras["transformers_version"] = "4.36"
        return "ms-swift", extras
    if "ms-swift 3" in low or "ms-swift 4" in low:
        # `swift sft` / `swift rlhf` scripts, read as oomdoctor's own swift reader reads them (configs/entries.py
        # _SWIFT, framework "ms-swift"): 3.x checkpoints reentrant unless the script says otherwise, transformers
        # 4.x's default that ms-swift pins by patching torch's checkpoint (swift/trainers/arguments.py
        # _fix_gradient_checkpointing, from 6c541820b), which the "hf" reading of a transformers-5 run is not
        return "ms-swift", extras
    if "swift" in low or "qwen finetune" in low or "hf trainer" in low:
        return "hf", extras
    if "peft" in low:
        return "hf", extras
    return "hf", extras


def _grad_accum(case: dict, framework: str) -> int:
    """Gradient accumulation steps the source states; LitGPT's finetune scripts accumulate by default
    (lit-gpt finetune/lora.py batch_size 128 over micro_batch_size; litgpt TrainArgs global_batch_size)."""
    if case.get("grad_accum"):
        return max(1, int(case["grad_accum"]))    # the config's own gradient_accumulation_steps
    text = " ".join(str(case.get(k) or "") for k in ("quote", "notes", "framework", "measure_kind")).lower()
    if "without gradient accumulation" in text:
        return 1
    m = re.search(r"gradient[_ ]accumulation(?:[_ ]steps|[_ ]iters)?(?: of)?[\s:=]*(\d+)", text)
    if m:
        return max(1, int(m.group(1)))
    return 2 if framework == "litgpt" else 1


def convert(case: dict, ref: dict):
    """(setup, shape, hardware) or a reason why the case cannot be expressed."""
    model = str(case["model"])
    fw_text = str(case.get("framework") or "")
    if "T0" in model or "t5" in model.lower():
        return "encoder-decoder (T5) model: not a decoder-only shape"
    if "naive model parallel" in str(case.get("sharding") or ""):
        return "naive model parallelism (layers split across GPUs in one process)"
    shape = resolve_shape(model, ref)
    if shape is None:
        return f"no shape for {model}"
    seq = _seq_len(case)
    if not seq:
        return "sequence length unknown"
    framework, extras = _framework(fw_text)
    prec_text = str(case.get("precision") or "").lower()
    precision = "fp32" if prec_text.startswith("fp32") else ("fp16" if prec_text.startswith("fp16") else "bf16")
    pure = "pure" in prec_text or "bf16-true" in prec_text
    load = None
    if "weights bf16" in prec_text or "model loaded bf16" in prec_text or pure:
        load = "bf16"
    if precision == "fp16":
        load = "fp16"
    if "bf16-mixed" in prec_text:
        load, pure = "fp32", False
    method = str(case.get("method") or "full")
    quant = case.get("quant_bits")
    if quant and "gptq" in (prec_text + str(case.get("notes") or "")).lower():
        extras["quant_method"] = "gptq"
    if quant and method == "lora":
        method = "qlora"
    if method == "qlora" and not quant:
        quant = 4
    targets_text = str(case.get("lora_targets") or "all").split(";")[0]
    targets = tuple(t.strip() for t in re.split(r"[,\s]+", targets_text.split("(")[0]) if t.strip()) or ("all",)
    sharding = str(case.get("sharding") or "none").lower()
    offload = str(case.get("offload") or "none").lower()
    zero = 0
    m = re.search(r"zero-?(\d)", sharding)
    if m:
        zero = int(m.group(1))
    fsdp = None
    if "fsdp" in sharding and "no_shard" not in sharding and "'ddp'" not in sharding:
        fsdp = "full_shard"
        if "fsdp2" in sharding or "fsdp_version 2" in sharding:
            extras["fsdp_version"] = 2     # the key axolotl's and accelerate's configs name torch's fully_shard by
    # the optimizer the row names; a parenthesis holds the curator's guess (tt-31: the README's "8-bit AdamW"
    # row names AdamW8bit, whose states torch's allocator counts, not the paged variant)
    opt_text = str(case.get("optimizer") or "adamw").lower()
    optimizer = "adamw_torch"
    if "8bit" in opt_text.replace("-", "").replace(" ", "") or "adamw8bit" in opt_text:
        optimizer = "paged_adamw_8bit" if "paged" in opt_text.split("(")[0] else "adamw_8bit"
    elif "lora-fa" in opt_text.split("(")[0]:
        optimizer = "lora-fa"      # PEFT's LoRA-FA (method comparison optimizer_type "lora-fa"): lora_A frozen
    elif "fused" in opt_text:
        optimizer = "adamw_torch_fused"
    elif "sgd" in opt_text:
        optimizer = "sgd"
    attn_text = str(case.get("attn") or "sdpa").lower()
    attention = "eager" if attn_text.startswith("eager") else ("fa2" if "flash" in attn_text else "sdpa")
    if "activation offl" in offload:
        extras["activation_offloading"] = True       # the key torchtune's and TRL's readers keep
    if "optimizer_in_bwd=true" in str(case.get("optimizer") or "").lower().replace(" ", ""):
        extras["optimizer_in_bwd"] = True
    for kind in ("galore", "apollo"):
        rank = re.search(r"rank (\d+)", opt_text)
        if case.get(kind) and rank:
            # the projection rank the row's command states (GaLore --rank, LLaMA-Factory galore_rank /
            # apollo_rank): the key LLaMA-Factory's reader keeps it under
            extras[f"{kind}_rank"] = int(rank.group(1))
    if framework == "litgpt" and quant:
        # lit-gpt finetune/lora.py --quantize bnb.nf4 | bnb.nf4-dq (double quantization): the resource table's
        # quantization column (the quote) names it, the precision and notes columns rarely do
        said = " ".join(str(case.get(k) or "") for k in ("precision", "notes", "quote")).lower()
        extras["quantize"] = "bnb.nf4-dq" if "nf4-dq" in said else "bnb.nf4"
    said_quant = " ".join(str(case.get(k) or "") for k in ("precision", "notes", "quote")).lower()
    if quant and ("use_nested_quant" in said_quant or "double quant" in said_quant):
        # the row states 4-bit double quantization (PEFT's examples/sft/utils.py:110
        # `bnb_4bit_use_double_quant=args.use_nested_quant`): the key oomdoctor's readers keep
        extras["bnb_4bit_use_double_quant"] = True
    if method == "lora" and "qwen finetune" in fw_text.lower() and "chat" not in model.lower():
        extras["modules_to_save"] = ("embed_tokens", "lm_head")   # finetune.py trains wte/lm_head on base models
    version = ""
    drop = re.search(r"dropout\s*([0-9.]+)", str(case.get("lora_targets") or ""))
    if drop:
        extras["lora_dropout"] = float(drop.group(1))
    elif framework == "litgpt" and method in ("lora", "qlora"):
        extras["lora_dropout"] = 0.05      # LitGPT's default lora_dropout
    elif framework == "fsdp_qlora" and method in ("lora", "qlora"):
        extras["lora_dropout"] = 0.1       # fsdp_qlora train.py main(lora_dropout=0.1)
    if re.search(r"--reentrant_checkpointing\s+true|gradient_checkpointing \(reentrant\)", str(case.get("quote") or "").lower()):
        extras["gradient_checkpointing_kwargs"] = {"use_reentrant": True}
    if case.get("use_reentrant") is not None:
        # the config's own gradient_checkpointing_kwargs.use_reentrant (axolotl examples state it)
        extras["gradient_checkpointing_kwargs"] = {"use_reentrant": bool(case["use_reentrant"])}
    if "colossalai" in fw_text.lower() and zero:
        # ColossalAI's LowLevelZeroPlugin, as the row's plugin builds it (booster/plugin/low_level_zero_plugin.py
        # __init__: reduce_bucket_size_in_m=12, overlap_communication=True): 12M-element reduce buckets, doubled
        # while overlapping; the updated working parameters are all-gathered through a bucket of the same size
        # (zero/low_level/low_level_optim.py step, `TensorBucket(self._bucket_store.reduce_bucket_size)`); each
        # parameter's reduced gradient is kept on its own in the GradientStore and freed at the step
        # (`reset_grads_by_group_id`), never in one contiguous partition buffer
        extras.update(reduce_bucket_size=12 * 1024 * 1024, allgather_bucket_size=12 * 1024 * 1024,
                      overlap_comm=True, contiguous_gradients=False)
    if "coati" in fw_text.lower():
        # ColossalChat's coati trainers hold the model's outputs in loop variables through backward and the step
        # (coati/trainer/sft.py `outputs = self.model(...)`, dpo.py `actor_all_logits`, `ref_all_logits`)
        extras["keeps_model_outputs"] = True
    if case.get("transformers_version"):
        # the transformers release the row ran on, where the source pins it (axolotl requirements.txt at the
        # commit that wrote the figure): before 4.46 the causal-LM forward upcasts and shifts the logits itself
        extras["transformers_version"] = str(case["transformers_version"])
    if case.get("bitsandbytes_version"):
        # the bitsandbytes release the row ran on, where the source pins it (axolotl requirements.txt at the commit
        # that wrote the figure): from 0.43.2 a 4-bit matmul keeps no input (memory/activations.py bnb_keeps_input)
        extras["bitsandbytes_version"] = str(case["bitsandbytes_version"])
    if case.get("framework_version"):
        # the framework's release at the commit that wrote the figure, where the row states it (setup.py)
        version = str(case["framework_version"])
    if framework == "ms-swift" and "swift v1" in fw_text.lower():
        # the benchmark's commits 97e4d198b/4312aeb28 (2024-01-02/04) follow v1.5.0 (2024-01-01) and precede
        # f52dfd35c ("fix bnb qwen bug", 2024-01-06), which v1.5.1 includes: the code that ran is v1.5.0's
        version = "1.5.0"
    if "swift v1" in fw_text.lower() or "qwen finetune" in fw_text.lower():
        # PEFT 0.6.0 (2023-11-02) to 0.11 created the adapters in the base layer's dtype (tuners/lora/layer.py
        # update_layer `self.to(weight.device, dtype=weight.dtype)`); 0.5.0, current before, left them in torch's
        # default fp32 and cast each input to them (tuners/lora.py update_layer `self.to(self.weight.device)`,
        # Linear.forward `x = x.to(self.lora_A[...].weight.dtype)`), as PEFT >= 0.12's upcast does
        if str(case.get("published") or "9999") >= "2023-11-02":
            extras["adapter_dtype"] = "bf16"
    # the PEFT type the run's config names, and its own keys (PeftConfig peft_type, num_virtual_tokens,
    # feedforward_modules); LoRA's options: use_dora
    for key in ("peft_type", "num_virtual_tokens", "feedforward_modules"):
        if case.get(key):
            extras[key] = case[key]
    packed_text = str(case.get("packed")).lower()
    if "fixed length" in packed_text or "padded to model_max_length" in packed_text:
        extras["fixed_length"] = True      # every batch has the same length: cached blocks are reused exactly
    m = re.search(r"empty_cache every (\d+) steps", str(case.get("measure_kind") or ""))
    if m:
        extras["torch_empty_cache_steps"] = int(m.group(1))   # the loop releases idle segments that often
    # the flags a script states that oomdoctor's command-line reader turns into fields and mechanisms
    # (configs/entries.py _SWIFT: use_liger_kernel -> fused_ce, rlhf_type -> stage, sequence_parallel_size ->
    # seq_parallel; modules_to_save, quant_method and PYTORCH_CUDA_ALLOC_CONF kept as mechanisms; axolotl's
    # quantize_moe_experts, kept by configs/axolotl.py)
    # torchtitan's activation_checkpoint selective_ac_option, as its TOML names it
    for key in ("modules_to_save", "quant_method", "expandable_segments", "quantize_moe_experts", "loss_scale",
                "selective_ac_option"):
        if case.get(key):
            extras[key] = case[key]
    if case.get("liger"):
        # the script's Liger switch is the whole-model patch (HF Trainer / ms-swift use_liger_kernel, Liger's
        # apply_liger_kernel_to_<model>() defaults): the key oomdoctor's readers keep for it
        extras["use_liger_kernel"] = True
    celoss = re.search(r"celoss_parallel_size=(\d+)", str(case.get("quote") or "").lower())
    if celoss and int(celoss.group(1)) > 0 and int(case.get("seq_parallel") or 1) > 1:
        # ms-swift's sequence-parallel loss with CELOSS_PARALLEL_SIZE > 0 (swift/trainers/utils.py
        # per_token_loss_func_sp) runs ChunkedCrossEntropyLoss (swift/sequence_parallel/utils.py:65): the
        # compute-dtype logits are saved once and cross-entropy runs per chunk in that dtype, no fp32 copy;
        # with Liger on too, since the trainer takes the labels away under sequence parallelism
        extras["loss"] = "chunked"
    unsloth = "unsloth" in fw_text.lower()
    if unsloth:
        # an unsloth run (FastLanguageModel): its release as the notebook's banner prints it, and its checkpointing
        # as get_peft_model's use_gradient_checkpointing names it ("unsloth": offloaded), the keys the readers keep
        m = re.search(r"unsloth (\d{4}\.\d+(?:\.\d+)?)", fw_text.lower())
        if m:
            extras["unsloth_version"] = m.group(1)
        if case.get("use_gradient_checkpointing"):
            extras["use_gradient_checkpointing"] = str(case["use_gradient_checkpointing"])
    if case.get("liger") and "loss" not in extras:
        extras["loss"] = "liger"     # Liger's kernel, as the readers name it: fused in training only
    n = int(case.get("n_gpus") or 1)
    setup = TrainingSetup(
        framework=framework, framework_version=version, method=method, lora_rank=int(case.get("lora_rank") or 8), lora_targets=targets,
        grad_accum=_grad_accum(case, framework),
        quant_bits=int(quant) if quant else None, micro_batch=int(case.get("micro_batch") or 1), seq_len=seq,
        precision=precision, pure_bf16=pure and framework not in ("litgpt", "torchtune"), load_dtype=load,
        optimizer=optimizer, grad_ckpt=bool(case.get("grad_ckpt")), attention=attention, zero_stage=zero,
        offload_optimizer="cpu" in offload and zero > 0 or "fsdp cpu offload" in offload,
        offload_params=("param" in offload) or "fsdp cpu offload" in offload,
        fsdp=fsdp, n_gpus=n, packing=packed_text.startswith("true"), loss_kernel=extras.pop("loss", ""),
        # Cut Cross-Entropy: fused into the output projection, as oomdoctor's axolotl reader reads the plugin
        use_dora=bool(case.get("use_dora")), fused_ce=bool(case.get("liger") or case.get("cut_cross_entropy")), stage=str(case.get("stage") or "sft"),
        seq_parallel=int(case.get("seq_parallel") or 1), use_unsloth=unsloth, extras=extras)
    for flag in ("badam", "galore", "apollo"):
        if case.get(flag):
            # the method switches LLaMA-Factory's reader keeps under these names (configs/llamafactory.py
            # use_badam / use_galore / use_apollo): the TrainingSetup fields of the same name
            setup = replace(setup, **{flag: True})
    if case.get("eval_batch"):
        # a row whose run evaluates during training (its framework's default or its flags): the evaluation
        # forward at per_device_eval_batch_size, on batches as long as training's
        setup = replace(setup, do_eval=True, eval_batch=int(case["eval_batch"]))
    if case.get("megatron"):
        # a Megatron-Core run: its parallel sizes, distributed optimizer and recompute as the script states them
        # (TrainingSetup's Megatron fields, by name)
        setup = replace(setup, megatron=True, **dict(case["megatron"]))
    gpu_gib = _gpu_gib(str(case.get("gpu") or ""))
    return setup, shape, Hardware(gpu=str(case.get("gpu")), gpu_gib=gpu_gib, n_gpus=n)


def convert_config(case: dict):
    """(setup, shape, hardware) the way `oomdoctor CONFIG --gpus N` reads the row's own config file
    (`config`, under tests/data/reference/): oomdoctor's reader, catalog and --gpus rule, not the converter."""
    from oomdoctor.configs import load_config
    from oomdoctor.pipeline import resolve_shape as pipeline_shape
    from oomdoctor.pipeline import with_gpus

    setup = load_config(os.path.join(REF, str(case["config"])))
    n = int(case.get("n_gpus") or 1)
    hw = Hardware(gpu=str(case.get("gpu")), gpu_gib=_gpu_gib(str(case.get("gpu") or "")), n_gpus=n)
    setup, hw = with_gpus(setup, hw, n)
    return setup, pipeline_shape(setup, None), hw


def _gpu_gib(text: str) -> float:
    """The card's capacity as PyTorch sees it, from oomdoctor's GPU catalog (an A100 80GB holds 79.15 GiB, not
    80e9 bytes); a card the catalog does not name falls back to its size in GB, or an A100 80GB."""
    from oomdoctor.gpus import hardware_from_flag
    for candidate in (text, text.split("(")[-1], "A100 80GB"):
        try:
            return hardware_from_flag(candidate).gpu_gib
        except Exception:
            continue
    m = re.search(r"(\d+)\s*GB", text)
    return float(m.group(1)) if m else 79.15


def unit_reason(case: dict) -> str | None:
    """Why a figure's printed unit is not the one its tool measured in (printed with the table)."""
    unit = str(case.get("unit") or "GB")
    if not unit.startswith("GiB") and "gib = 1024**3" in str(case.get("measure_kind") or "").lower():
        return "the tool divides by 1024**3 (GiB) at this commit; the table's 'GB' is read as GiB"
    return None


def measured_gib(case: dict) -> float:
    value = float(case["measured_peak_gb"])
    unit = str(case.get("unit") or "GB")
    if unit.startswith("GiB") or "MiB-based" in unit or unit_reason(case):
        return value
    return value * 1e9 / GIB


# Why a row is compared with another quantity than its measure_kind names at first sight (printed).
KIND_REASONS = {
    "torchtune-readme": "torchtune's README tables report get_memory_stats' first figure, peak_memory_active "
                        "(the Nov 2024 table names its column so): compared with allocated",
}


def kind_reason(case: dict) -> str | None:
    mk = str(case.get("measure_kind") or "").lower()
    if "get_memory_stats" in mk and "not stated" in mk:
        return "torchtune-readme"
    return None


def kind_of(case: dict) -> str:
    mk = str(case.get("measure_kind") or "").lower()
    if kind_reason(case):
        return "allocated"
    if "reserved" in mk and "allocated" not in mk.split("reserved")[0][-40:]:
        return "reserved"
    if "max_memory_allocated" in mk or "active" in mk or "tracemalloc" in mk:
        return "allocated"
    if "reserved" in mk:
        return "reserved"
    return "device"


def predicted(est, kind: str) -> float:
    if kind == "allocated":
        return est.allocated_gib
    if kind == "reserved":
        return est.details["reserved_gib"] + est.details.get("paged_states_gib", 0.0)
    return est.peak_gib


ORIGINAL = "original"


def in_set(case: dict, subset: str) -> bool:
    """Whether a row belongs to the calibration set `subset`: "all", "original" (rows with no
    `calibration_set`) or a set's name."""
    return subset == "all" or str(case.get("calibration_set") or ORIGINAL) == subset


def summary(rows: list) -> tuple[float, float]:
    """Median and 90th-percentile absolute error of scored rows."""
    errs = sorted(abs(r[4]) for r in rows)
    if not errs:
        return 0.0, 0.0
    return statistics.median(errs), errs[min(len(errs) - 1, int(round(0.9 * (len(errs) - 1))))]


def run(verbose: bool = True, subset: str = "all", configs: bool = False) -> dict:
    with open(os.path.join(REF, "measured_peaks.yaml")) as fh:
        cases = [c for c in yaml.load(fh, Loader=_Loader) if in_set(c, subset)]
    ref = _reference_shapes()
    rows, skipped, oom_rows = [], [], []
    unreconciled: dict = {}
    parts: dict = {}
    for case in cases:
        if case.get("reliability") not in ("high", "medium"):
            continue
        has_figure = case.get("measured_peak_gb") is not None
        if not has_figure and not case.get("oom"):
            continue
        if configs and not case.get("config"):
            continue
        conv = convert_config(case) if configs else convert(case, ref)
        if isinstance(conv, str):
            skipped.append((case["id"], conv))
            continue
        setup, shape, hw = conv
        est = estimate(setup, shape, hw)
        if case.get("oom"):
            oom_rows.append((case["id"], est.peak_gib, hw.gpu_gib, not est.fits))
            if not has_figure:
                continue
        kind = kind_of(case)
        meas = measured_gib(case)
        floor = est.details["model_states_gib"]
        if meas < 0.98 * floor:
            # The figure is below what the run as described must hold (its weights, gradients and optimizer
            # states alone): it measured something else (another config, devices or step), so it cannot
            # score the model. Printed, never silent.
            skipped.append((case["id"], f"measured {meas:.2f} GiB is below the run's own weights + gradients + "
                                        f"optimizer states ({floor:.2f} GiB): not a measurement of this run"))
            continue
        pred = predicted(est, kind)
        rows.append((case["id"], kind, meas, pred, (pred - meas) / meas))
        if case.get("unreconciled"):
            # a figure no mechanism reconciles with the run it names (the card, unpublished lengths): it stays
            # scored, and its reason is printed with it
            unreconciled[case["id"]] = str(case["unreconciled"])
        parts[case["id"]] = _components(est)
    median, p90 = summary(rows)
    original = [r for r in rows if in_set(next(c for c in cases if c["id"] == r[0]), ORIGINAL)]
    if verbose:
        print(f"{'case':10} {'compared':9} {'measured':>9} {'predicted':>9} {'error':>7}")
        for cid, kind, meas, pred, err in rows:
            print(f"{cid:10} {kind:9} {meas:9.2f} {pred:9.2f} {err:+7.1%}")
        for cid, peak, cap, ok in oom_rows:
            print(f"{cid:10} oom       predicted peak {peak:.1f} GiB on {cap:.1f} GiB: "
                  f"{'does not fit (ok)' if ok else 'FITS (wrong)'}")
        for cid, why in skipped:
            print(f"{cid:10} skipped   {why}")
        for cid in (c["id"] for c in cases if unit_reason(c) and c["id"] in {r[0] for r in rows}):
            print(f"{cid}: {unit_reason(next(c for c in cases if c['id'] == cid))}")
        for cid, why in unreconciled.items():
            print(f"{cid}: scored, not reconciled: {why}")
        for reason, text in KIND_REASONS.items():
            ids = [c["id"] for c in cases if kind_reason(c) == reason and c["id"] in {r[0] for r in rows}]
            if ids:
                print(f"{', '.join(ids)}: {text}")
        print(f"\n{len(rows)} cases: median |error| {median:.1%}, p90 |error| {p90:.1%}; "
              f"oom cases predicted not to fit: {sum(r[3] for r in oom_rows)}/{len(oom_rows)}")
        if subset == "all" and 0 < len(original) < len(rows):
            print(_original_line(original))
    return {"rows": rows, "median": median, "p90": p90, "oom": oom_rows, "skipped": skipped, "parts": parts,
            "sources": {c["id"]: source_name(c) for c in cases}, "original": original,
            "unreconciled": unreconciled}


def _original_line(original: list) -> str:
    med, p90 = summary(original)
    return f"of which the {len(original)} original cases (--set original): median |error| {med:.1%}, p90 |error| {p90:.1%}"


COMPONENTS = ("weights", "gradients", "optimizer", "activations", "logits", "reserve")


def _components(est) -> dict:
    """GiB per GPU at the estimate's peak moment, and the allocator's reserve above the allocated peak."""
    out = {k: est.components.get(k, 0.0) for k in COMPONENTS[:-1]}
    out["reserve"] = est.details["reserved_gib"] - est.allocated_gib
    return out


def source_name(case: dict) -> str:
    """The publication a row comes from: its repository and file (the source field's first two words)."""
    words = str(case.get("source") or "?").replace("github:", "").replace("'", "").split()
    return " ".join(words[:2]).rstrip(";,")


def by_source(result: dict) -> list[tuple[str, list, float, float]]:
    """(source, its rows, median |error|, worst |error|), worst median first."""
    groups: dict = {}
    for row in result["rows"]:
        groups.setdefault(result["sources"][row[0]], []).append(row)
    out = []
    for name, rows in groups.items():
        errs = [abs(r[4]) for r in rows]
        out.append((name, rows, statistics.median(errs), max(errs)))
    return sorted(out, key=lambda g: -g[2])


def print_by_source(result: dict) -> None:
    head = " ".join(f"{c[:7]:>7}" for c in COMPONENTS)
    for name, rows, median, worst in by_source(result):
        print(f"\n{name}\n  {len(rows)} rows: median |error| {median:.1%}, worst {worst:.1%}")
        print(f"  {'case':9} {'reports':9} {'measured':>8} {'predicted':>9} {'error':>7}  {head}")
        for cid, kind, meas, pred, err in rows:
            comps = " ".join(f"{result['parts'][cid][c]:7.2f}" for c in COMPONENTS)
            print(f"  {cid:9} {kind:9} {meas:8.2f} {pred:9.2f} {err:+7.1%}  {comps}")
            if cid in result["unreconciled"]:
                print(f"  {'':9} not reconciled: {result['unreconciled'][cid]}")
    print(f"\n{len(result['rows'])} cases: median |error| {result['median']:.1%}, p90 |error| {result['p90']:.1%}")
    if 0 < len(result["original"]) < len(result["rows"]):
        print(_original_line(result["original"]))


def _subset(argv: list) -> str:
    for i, arg in enumerate(argv):
        if arg == "--set" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--set="):
            return arg.split("=", 1)[1]
    return "all"


if __name__ == "__main__":
    chosen = _subset(sys.argv[1:])
    from_configs = "--configs" in sys.argv[1:]
    if "--by-source" in sys.argv[1:]:
        print_by_source(run(verbose=False, subset=chosen, configs=from_configs))
    else:
        run(subset=chosen, configs=from_configs)
