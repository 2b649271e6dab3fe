"""xtuner's training configs (InternLM/xtuner xtuner/configs/**/*.py at b934f462): mmengine Python configs, read without
running them: the module's top-level assignments, each value a literal, an earlier name, or `dict(type=…, …)`, the
way mmengine's Config reads them (a name it cannot evaluate is kept as its text). What a key means, from the source:
- `model = dict(type=SupervisedFinetune, llm=dict(pretrained_model_name_or_path=…, quantization_config=dict(
  load_in_4bit=…)), lora=dict(r=…, lora_alpha=…))`: LoRA when `lora` is there, on a bnb-quantized base when the
  quantization_config loads it in 4 or 8 bits; SupervisedFinetune(use_activation_checkpointing=True)
  (xtuner/model/sft.py:90);
- `max_length`, `pack_to_max_length`, `batch_size` (per device; train_dataloader.batch_size), `accumulative_counts`
  (optim_wrapper.accumulative_counts), `optim_wrapper = dict(type=AmpOptimWrapper, dtype='float16')`;
- `xtuner train CONFIG --deepspeed deepspeed_zeroN`: its shipped xtuner/configs/deepspeed/deepspeed_zeroN.json,
  NPROC_PER_NODE processes (xtuner/entry_point.py:307).
"""
from __future__ import annotations

import ast
import re
from typing import Any

from oomdoctor.configs._doc import Builder, Context, Doc
from oomdoctor.configs._edit import Out
from oomdoctor.configs._keys import Key, table, version_chooser
from oomdoctor.configs._literal import Walk, literal
from oomdoctor.facts import Change, Framework, Msg, Source, TrainingSetup, msg

NAME = "xtuner"
FRAMEWORK: Framework = "hf"             # a transformers model under mmengine's runner: the HF regime's memory
LABEL = "xtuner"
PACKAGE = "xtuner"
DEFAULT_VERSION = "0.2.0"

KEYS = table(
    Key("micro_batch", "batch_size", minimum=1),
    Key("grad_accum", "accumulative_counts", minimum=1),
    Key("seq_len", "max_length", minimum=1),
)
_DTYPES = {"float16": "fp16", "fp16": "fp16", "bfloat16": "bf16", "bf16": "bf16", "float32": "fp32"}
_ASSIGN = re.compile(r"^[A-Za-z_]\w*\s*(?:[*+]?=)")
_XTUNER_TRAIN = re.compile(r"\bxtuner\s+(?:train|dist_train)\s+(\S+)(.*)$")
_DS_STAGE = re.compile(r"--deepspeed[= ]\s*(?:\S*/)?deepspeed_zero([0-3])(_offload)?\b")


def python_config(text: str) -> tuple[dict[str, Any], dict[str, int], int, bool] | None:
    """(the config's top-level names and values, the line of each, its first line, whether the paste cut it) of the
    Python config in `text` (a file, or the part of a paste from its first assignment on), or None."""
    rows = text.split("\n")
    starts = [i for i, row in enumerate(rows) if _ASSIGN.match(row)]
    tree = None
    cut = False
    first = 0
    for first in starts[:12]:       # the config may follow a line of prose or a command (`NPROC_PER_NODE=8 xtuner …`)
        body = rows[first:]
        for drop in range(min(len(body), 60)):
            try:
                tree = ast.parse("\n" * first + "\n".join(body[:len(body) - drop]))
            except SyntaxError:
                continue
            cut = drop > 0
            break
        if tree is not None and sum(isinstance(n, ast.Assign) for n in tree.body) >= 3:
            break
        tree = None
    if tree is None:
        return None
    env: dict[str, Any] = {}
    lines: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            env[node.targets[0].id] = _value(node.value, env)
            lines[node.targets[0].id] = node.lineno
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            left, right = env.get(node.target.id), _value(node.value, env)
            if isinstance(left, int) and isinstance(right, int) and isinstance(node.op, ast.Mult):
                env[node.target.id] = left * right
    return (env, lines, first + 1, cut) if len(env) >= 3 else None


def _value(node: ast.AST, env: dict[str, Any]) -> Any:
    """A value of the config as mmengine reads it: a name is what the module assigned it (a name it did not, an
    imported class, is its own name), `a.b` the dotted name, a call `dict(k=v)` or `Cls(k=v)` a mapping with the
    class as its `type` (mmengine/config/config.py builds objects from `type=`); dict displays are not read."""
    return literal(node, names=lambda name: env.get(name, name), attribute=_dotted, call=_typed,
                   operators=(ast.Mult,), dicts=False, lenient=True)


def _dotted(node: ast.Attribute, part: Walk) -> str:
    return f"{part(node.value)}.{node.attr}"


def _typed(node: ast.Call, part: Walk) -> dict[str, Any]:
    out = {kw.arg: part(kw.value) for kw in node.keywords if kw.arg}
    func = part(node.func)
    if func != "dict":
        out.setdefault("type", func)
    return out


def detect(data: dict) -> Msg | None:
    model = data.get("model")
    if isinstance(model, dict) and isinstance(model.get("llm"), dict):
        return msg("config.why.xtuner", keys="model.llm")
    if "pretrained_model_name_or_path" in data and "accumulative_counts" in data:
        return msg("config.why.xtuner", keys=("pretrained_model_name_or_path", "accumulative_counts"))
    return None


version = version_chooser(NAME, DEFAULT_VERSION, PACKAGE)


def read(doc: Doc, ctx: Context) -> TrainingSetup:
    version = ctx.framework_version or DEFAULT_VERSION
    b = Builder.over(FRAMEWORK, LABEL, version, ctx)
    model_key = next((k for k in ("model.llm.pretrained_model_name_or_path", "pretrained_model_name_or_path")
                      if isinstance(doc.get(k), str)), None)
    if model_key:
        b.set("model", doc.str_(model_key) or "", doc.src(model_key))
    lora = doc.get("model.lora")
    quant = doc.get("model.llm.quantization_config")
    bits = 4 if isinstance(quant, dict) and quant.get("load_in_4bit") is True else \
        8 if isinstance(quant, dict) and quant.get("load_in_8bit") is True else None
    if isinstance(lora, dict):
        b.set("method", "qlora" if bits else "lora", doc.src("model.lora"))
        if bits:
            b.set("quant_bits", bits, doc.src("model.llm.quantization_config"))
        for field, key, default in (("lora_rank", "model.lora.r", 8), ("lora_alpha", "model.lora.lora_alpha", 8)):
            value = doc.get(key)
            if isinstance(value, int) and value > 0:
                b.set(field, value, doc.src("model.lora"))
            else:
                b.default(field, default, "peft LoraConfig")
    elif doc.has("model"):
        b.set("method", "full", doc.src("model"))
    for field, keys, default in (("micro_batch", ("train_dataloader.batch_size", "batch_size"), 1),
                                 ("grad_accum", ("optim_wrapper.accumulative_counts", "accumulative_counts"), 1),
                                 ("seq_len", ("max_length",), 2048)):
        found = next((k for k in keys if isinstance(doc.get(k), int) and not isinstance(doc.get(k), bool)), None)
        if found is not None:
            b.set(field, int(doc.get(found)), doc.src(found.split(".")[0]))
        else:
            b.default(field, default, LABEL)
    packing = doc.get("pack_to_max_length")
    if isinstance(packing, bool):
        b.set("packing", packing, doc.src("pack_to_max_length"))
    dtype = doc.get("optim_wrapper.dtype")
    if isinstance(dtype, str) and _DTYPES.get(dtype):
        b.set("precision", _DTYPES[dtype], doc.src("optim_wrapper"))
    ckpt = doc.get("model.use_activation_checkpointing")
    if isinstance(ckpt, bool):
        b.set("grad_ckpt", ckpt, doc.src("model"))
    else:
        b.default("grad_ckpt", True, "SupervisedFinetune use_activation_checkpointing")
    sp = doc.get("sequence_parallel_size")
    if isinstance(sp, int) and sp > 1:
        b.set("seq_parallel", sp, doc.src("sequence_parallel_size"))
    return b.build(doc, config_file=doc.path)


def python_doc(path: str, text: str) -> Doc | None:
    """The Doc of the xtuner config a file or a paste holds; None when none is there."""
    found = python_config(text)
    if found is None or detect(found[0]) is None:
        return None
    data, lines, first, cut = found
    notes = [msg("config.xtuner_python", where=f"{path}:{first}")]
    if cut:
        notes.append(msg("config.printed_cut", where=path))
    return Doc(path, data, lines, "yaml", notes=notes)


def launch_over(setup: TrainingSetup, path: str, text: str) -> TrainingSetup:
    """The paste's `[NPROC_PER_NODE=N] xtuner train CONFIG [--deepspeed deepspeed_zeroN[_offload]]` line laid over
    the config: its processes and the ZeRO stage of the DeepSpeed config xtuner ships under that name."""
    from dataclasses import replace

    for number, row in enumerate(text.split("\n"), 1):
        m = _XTUNER_TRAIN.search(row)
        if m is None:
            continue
        changes: dict[str, Any] = {}
        sources = dict(setup.sources)
        nproc = re.search(r"\bNPROC_PER_NODE=(\d+)", row)
        if nproc and 0 < int(nproc.group(1)) < 1 << 12:
            changes["n_gpus"] = int(nproc.group(1))
            sources["n_gpus"] = Source(file=path, key="NPROC_PER_NODE", line=number)
        ds = _DS_STAGE.search(row)
        if ds:
            stage, offload = int(ds.group(1)), bool(ds.group(2))
            changes.update(zero_stage=stage, offload_optimizer=offload, offload_params=offload and stage == 3)
            for field in ("zero_stage", "offload_optimizer", "offload_params"):
                sources[field] = Source(file=path, key="--deepspeed", line=number)
        return replace(setup, **changes, sources=sources) if changes else setup
    return setup


def edit(out: Out, c: Change, final: dict[str, Any]) -> None:
    return None         # a Python config is shown, not patched
