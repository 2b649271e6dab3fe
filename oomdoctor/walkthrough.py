"""A guided walkthrough of one OOM for someone meeting it for the first time, in English or Chinese.

Pure content: pages built from a Report (every sentence quotes the user's own numbers), the few
questions only the user can answer, and `apply_answers`, which re-plans with those answers.
The TUI (oomdoctor/tui/walkthrough.py) and the plain document (`render_plain`) only render the pages.
No textual and no rich here.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Callable, Literal, Mapping

from oomdoctor.facts import COMPONENTS, GIB, Change, Estimate, Report, Skipped, Step, TrainingSetup
from oomdoctor.i18n import lookup, pick
from oomdoctor.shellsafe import export_line
from oomdoctor.views.bars import GLYPHS
from oomdoctor.views.bars import bar_cells as _bar_cells

# ================================================================ answers and questions


@dataclass(frozen=True)
class Answers:
    """What only the user knows. None for n_gpus means "as many as the report says"."""

    n_gpus: int | None = None
    keep_effective_batch: bool = True
    allow_method_change: bool = False
    prefer: Literal["memory", "speed"] = "memory"


@dataclass(frozen=True)
class Question:
    key: str                                  # the Answers field it sets
    kind: str                                 # "choice" | "bool"
    prompt: str
    help: str                                 # one or two sentences: why it matters, with their numbers
    default: Any
    choices: tuple[tuple[Any, str], ...] = ()  # (value, label) for "choice"


def default_answers(report: Report) -> Answers:
    """The answers the walkthrough starts from: the GPU count the report knows, everything else conservative."""
    return Answers(n_gpus=_n_gpus(report))


def _n_gpus(report: Report) -> int:
    if report.setup is not None and report.setup.n_gpus:
        return max(1, report.setup.n_gpus)
    if report.hardware is not None:
        return max(1, report.hardware.n_gpus)
    return 1


def questions(report: Report, lang: str) -> list[Question]:
    """Only what the tool cannot know from the config and the log, each with a default from the report."""
    s = report.setup
    if s is None:
        return []
    n = _n_gpus(report)
    gpu = report.hardware.gpu if report.hardware else "GPU"
    counts = sorted({1, 2, 4, 8, n})
    eb = s.effective_batch
    qs = [
        Question(
            "n_gpus", "choice",
            _tr("q_gpus", lang, gpu=gpu),
            _tr("q_gpus_help", lang, n=n),
            n, tuple((c, _tr("n_gpus_label", lang, n=c)) for c in counts)),
        Question(
            "keep_effective_batch", "bool",
            _tr("q_batch", lang, eb=eb),
            _tr("q_batch_help", lang, eb=eb, mb=s.micro_batch, ga=s.grad_accum, n=max(1, s.n_gpus)),
            True),
        Question(
            "allow_method_change", "bool",
            _tr("q_method", lang, method=_method_name(s.method, lang)),
            _tr("q_method_help", lang, method=_method_name(s.method, lang)),
            False),
        Question(
            "prefer", "choice",
            _tr("q_prefer", lang),
            _tr("q_prefer_help", lang),
            "memory", (("memory", _tr("prefer_memory", lang)), ("speed", _tr("prefer_speed", lang)))),
    ]
    return qs


# ================================================================ re-planning with the answers

# Why a rule is left out because of an answer; pages() recognises these and says it in the user's language.
ANSWER_SKIP_REASONS: Mapping[str, str] = {
    "method": "left out: it changes the experiment, which you asked to keep (walkthrough answer)",
    "batch": "left out: it changes the effective batch, which you asked to keep (walkthrough answer)",
    "speed": "left out: it slows training and you prefer speed; the plan fits without it (walkthrough answer)",
}
_METHOD_FIELDS = ("method", "quant_bits", "use_dora")


def _is_method_change(step: Step) -> bool:
    return step.applicability == "needs-consent" or any(c.field in _METHOD_FIELDS for c in step.changes)


def apply_answers(report: Report, opts: Any, answers: Answers) -> Report:
    """Re-plan `report` as the answers ask; `opts` is the pipeline.Options the report was built with."""
    from oomdoctor import pipeline

    if report.setup is None or report.shape is None or report.hardware is None:
        return report
    n = max(1, answers.n_gpus or _n_gpus(report))
    base = replace(report, setup=replace(report.setup, n_gpus=n), hardware=replace(report.hardware, n_gpus=n))
    opts = replace(opts, gpus=n)
    user_skip = tuple(opts.skip)
    skip: dict[str, str] = {}     # rule id -> why (a key of ANSWER_SKIP_REASONS)
    if not answers.allow_method_change:
        skip.update({rid: "method" for rid in _consent_rule_ids(opts)})

    def run(extra: Mapping[str, str]) -> Report:
        return pipeline.plan_report(base, replace(opts, skip=user_skip + tuple(extra)))

    out = run(skip)
    # The rules' metadata cannot say everything (a custom rule may change the method or the batch):
    # look at what the plan really did and leave out the offending rungs until none is left.
    for _ in range(8):
        found: dict[str, str] = {}
        before = base.setup
        for step in out.plan.steps:
            if not answers.allow_method_change and _is_method_change(step):
                found[step.rule] = "method"
            elif answers.keep_effective_batch and step.setup.effective_batch != before.effective_batch:
                found[step.rule] = "batch"
            before = step.setup
        if not found:
            break
        skip.update(found)
        out = run(skip)

    if answers.prefer == "speed" and _fits(out):
        # Accept a trial only when it is slower in nothing: less throughput cost and no more quality cost
        # (a repeated small rung may well be cheaper than one medium one, so weigh, do not count).
        cost = _cost_meter(opts)

        def faster(trial: Report, than: Report) -> bool:
            (tq, tt), (cq, ct) = cost(trial), cost(than)
            return _fits(trial) and tq <= cq and tt < ct

        slow = list(dict.fromkeys(st.rule for st in out.plan.steps if "throughput" in st.costs))
        if slow:
            trial = run({**skip, **{r: "speed" for r in slow}})
            if faster(trial, out):
                skip.update({r: "speed" for r in slow})
                out = trial
            else:
                for rule in reversed(slow):     # one at a time, the last rungs first
                    trial = run({**skip, rule: "speed"})
                    if faster(trial, out):
                        skip[rule] = "speed"
                        out = trial

    if skip:
        skipped = [Skipped(sk.rule, ANSWER_SKIP_REASONS[skip[sk.rule]]) if sk.rule in skip else sk
                   for sk in out.plan.skipped]
        listed = {sk.rule for sk in skipped}
        skipped += [Skipped(r, ANSWER_SKIP_REASONS[why]) for r, why in skip.items() if r not in listed and _rule_known(r)]
        out = replace(out, plan=replace(out.plan, skipped=tuple(skipped)))
    return out


def _cost_meter(opts: Any) -> Callable[[Report], tuple[float, float]]:
    """(quality, throughput) cost of a report's plan, weighed like the rule engine weighs its rungs."""
    weights: Mapping[tuple[str, str], float] = {}
    book: Any = None
    try:
        from oomdoctor.planner import load_rules
        from oomdoctor.planner.engine import COST_WEIGHTS

        weights, book = COST_WEIGHTS, load_rules(tuple(getattr(opts, "rules_dirs", ()) or ()))
    except Exception:  # noqa: BLE001 - without the engine's weights, every slow rung counts one
        pass

    def meter(report: Report) -> tuple[float, float]:
        quality = throughput = 0.0
        for step in report.plan.steps:
            rule = book.get(step.rule) if book is not None else None
            kinds = [(c.kind, c.size) for c in rule.costs] if rule is not None else [(k, "medium") for k in step.costs]
            for kind, size in kinds:
                w = weights.get((kind, size), 1.0)
                if kind == "quality":
                    quality += w
                elif kind == "throughput":
                    throughput += w
        return quality, throughput

    return meter


def _fits(report: Report) -> bool:
    return bool(report.plan.fits or (report.estimate is not None and report.estimate.fits))


def _consent_rule_ids(opts: Any) -> list[str]:
    return [r["id"] for r in _rule_table(tuple(getattr(opts, "rules_dirs", ()) or ())).values()
            if r.get("applicability") == "needs-consent" and r.get("id")]


def _rule_known(rule_id: str) -> bool:
    return rule_id in _rule_table(())


# ================================================================ rule texts in both languages


@lru_cache(maxsize=8)
def _rule_table(rules_dirs: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """rule id -> {id, slug, applicability, title: {en, zh}, why: {en, zh}, costs: {en, zh}}.

    From the rule engine when it loads; else straight from the default rule files, so that a broken
    rule engine never takes the walkthrough down with it.
    """
    table: dict[str, dict[str, Any]] = {}
    try:
        from oomdoctor.planner import load_rules

        book = load_rules(rules_dirs)
        for rule in _iter_rules(book):
            rid = str(getattr(rule, "id", ""))
            entry: dict[str, Any] = {"id": rid, "slug": getattr(rule, "slug", rid),
                                     "applicability": getattr(rule, "applicability", "safe")}
            for fld in ("title", "why", "costs"):
                entry[fld] = {lang: _rule_text(rule, fld, lang) for lang in ("en", "zh")}
            table[rid] = entry
        if table:
            return table
    except Exception:  # noqa: BLE001 - the walkthrough still explains from the plan's own texts
        pass
    for entry in load_rule_files(default_rules_dir()):
        table[str(entry.get("id"))] = entry
    return table


def _iter_rules(book: Any) -> list[Any]:
    if isinstance(book, Mapping):
        return list(book.values())
    for name in ("rules", "ordered", "ladder"):
        inner = getattr(book, name, None)
        if inner is not None and not callable(inner):
            return list(inner.values()) if isinstance(inner, Mapping) else list(inner)
    return list(book)


def _rule_text(rule: Any, fld: str, lang: str) -> str:
    text = getattr(rule, "text", None)
    if callable(text):
        for name in ((fld, "cost") if fld == "costs" else (fld,)):
            try:
                value = text(name, lang)
            except Exception:  # noqa: BLE001 - field named differently in this version of the engine
                continue
            if value:
                return str(value)
    return pick(_cost_text(getattr(rule, fld, None)) if fld == "costs" else getattr(rule, fld, None), lang)


def default_rules_dir() -> str:
    """rules/ at the top of a checkout, or oomdoctor/rules/ inside an installed wheel."""
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "rules"), os.path.join(os.path.dirname(here), "rules")):
        if os.path.isdir(cand):
            return cand
    return os.path.join(os.path.dirname(here), "rules")


def _cost_text(costs: Any) -> Any:
    """The rule files' `costs` may be {en, zh}, {text: {en, zh}, ...} or a list of those (joined per language)."""
    if isinstance(costs, (list, tuple)):
        parts = [_as_langs(_cost_text(c)) for c in costs]
        langs = {lang for part in parts for lang in part}
        return {lang: " ".join(part[lang] for part in parts if lang in part) for lang in sorted(langs)} or None
    if isinstance(costs, Mapping):
        if "en" in costs or "zh" in costs:
            return costs
        for key in ("text", "explain", "explanation", "note", "why"):
            if key in costs:
                return costs[key]
    return None


def load_rule_files(directory: str) -> list[dict[str, Any]]:
    """Read the rule files directly: [{id, slug, applicability, title, why, costs, file}], texts as {en, zh}."""
    import glob

    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out: list[dict[str, Any]] = []
    for path in sorted(glob.glob(os.path.join(directory, "*.yaml")) + glob.glob(os.path.join(directory, "*.yml"))):
        with open(path, encoding="utf-8") as fh:
            doc = yaml.load(fh, Loader=loader)
        items = doc.get("rules", [doc]) if isinstance(doc, Mapping) else (doc or [])
        for item in items:
            if not isinstance(item, Mapping) or "id" not in item:
                continue
            out.append({"id": str(item["id"]), "slug": item.get("slug", item["id"]), "file": path,
                        "applicability": item.get("applicability", "safe"),
                        "title": _as_langs(item.get("title")), "why": _as_langs(item.get("why")),
                        "costs": _as_langs(_cost_text(item.get("costs")) or _cost_text(item.get("cost")))})
    return out


def _as_langs(value: Any) -> dict[str, str]:
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items() if v}
    if isinstance(value, str):
        return {"en": value}
    return {}


def rule_texts(step: Step, lang: str) -> tuple[str, str, str]:
    """(title, why, cost text) of the step's rule in `lang`, falling back to the plan's own texts."""
    entry = _rule_table(()).get(step.rule, {})
    title = pick(entry.get("title"), lang) if entry.get("title", {}).get(lang) else ""
    why = pick(entry.get("why"), lang) if entry.get("why", {}).get(lang) else ""
    cost = pick(entry.get("costs"), lang) if entry.get("costs", {}).get(lang) else ""
    return title or step.title, why or step.why, cost


# ================================================================ pages


@dataclass(frozen=True)
class Bar:
    """One stacked memory bar: GiB per component against one GPU's capacity."""

    label: str
    segments: tuple[tuple[str, str, float], ...]   # (component, localized name, GiB)
    peak_gib: float
    capacity_gib: float
    fits: bool
    short: str = ""                                # a label of a few cells, for narrow screens


@dataclass(frozen=True)
class Page:
    key: str                                 # error | memory | questions | plan | step-N | apply | watch | nofit
    title: str
    paragraphs: tuple[str, ...]
    bars: tuple[Bar, ...] = ()
    code: str = ""                           # commands or a diff, shown verbatim

    @property
    def bar(self) -> Bar | None:
        return self.bars[0] if self.bars else None


def pages(report: Report, answers: Answers, lang: str) -> list[Page]:
    """The walkthrough, page by page, for `report` (already re-planned with `answers` when it should be)."""
    lang = "zh" if lang == "zh" else "en"
    w = _Writer(report, answers, lang)
    out = [w.error_page()]
    if report.estimate is None or report.setup is None:
        out.append(w.no_config_page())
        return out
    out.append(w.memory_page())
    out.append(w.questions_page())
    out.append(w.plan_page())
    steps = report.plan.steps
    for i, step in enumerate(steps):
        out.append(w.step_page(i, step))
    if steps:
        out.append(w.apply_page())
    out.append(w.watch_page())
    return out


def render_plain(report: Report, answers: Answers, lang: str, width: int = 78) -> str:
    """The same walkthrough as a text document (for `--walkthrough --plain` and pipes)."""
    lines: list[str] = []
    all_pages = pages(report, answers, lang)
    for n, page in enumerate(all_pages, 1):
        head = f"{n}/{len(all_pages)}  {page.title}"
        lines += [head, "=" * min(width, cell_width(head)), ""]
        for para in page.paragraphs:
            indent = "  " if para.startswith(("• ", "  ")) else ""
            lines += wrap_cells(para, width, indent)
            lines.append("")
        for bar in page.bars:
            lines += text_bar(bar, width)
            lines.append("")
        if page.code:
            lines += [("    " + ln).rstrip() for ln in page.code.rstrip("\n").splitlines()]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def cell_width(text: str) -> int:
    """Terminal cells: CJK characters and full-width punctuation take two."""
    return sum(2 if _wide(ch) else 1 for ch in text)


def _wide(ch: str) -> bool:
    o = ord(ch)
    return 0x2E80 <= o <= 0xA4CF or 0xAC00 <= o <= 0xD7A3 or 0xF900 <= o <= 0xFAFF or 0xFE30 <= o <= 0xFE4F \
        or 0xFF00 <= o <= 0xFF60 or 0xFFE0 <= o <= 0xFFE6


_NO_LINE_START = set("，。、；：？！）》」』,.;:?!)")


def wrap_cells(text: str, width: int, indent: str = "") -> list[str]:
    """Wrap by terminal cells: English breaks at spaces, Chinese between any two characters."""
    import re

    tokens = re.findall(r"\s+|[\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffe6]|[^\s\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffe6]+", text)
    lines: list[str] = []
    cur, cur_w = "", 0
    for tok in tokens:
        w = cell_width(tok)
        if cur_w + w > width and cur.strip() and not tok.isspace():
            carry = ""
            if tok in _NO_LINE_START:
                # punctuation may not start a line: take the character (or the English word) before it along
                rest = cur
                while rest and (not carry or carry[0] in _NO_LINE_START):
                    tail = re.search(r"[^\s\u2e80-\uffff]+$", rest)
                    piece = rest[-1] if _wide(rest[-1]) else (tail.group() if tail else "")
                    if not piece:
                        break
                    carry, rest = piece + carry, rest[:-len(piece)]
                if len(rest) <= len(indent) or not rest.strip():
                    carry, rest = "", cur
                cur = rest
            lines.append(cur.rstrip())
            cur, cur_w = indent + carry, len(indent) + cell_width(carry)
        if tok.isspace() and cur_w == len(indent) and lines:
            continue
        cur += tok
        cur_w += w
    if cur.strip() or not lines:
        lines.append(cur.rstrip())
    return lines


def bar_cells(bar: Bar, cells: int) -> list[tuple[str, int]]:
    """Split `cells` character cells among the segments (scale: the larger of peak and capacity); the rest is "free"."""
    scale = max(bar.peak_gib, bar.capacity_gib, 1e-9)
    out = _bar_cells([(comp, gib) for comp, _name, gib in bar.segments], scale, cells)
    out.append(("free", cells - sum(n for _, n in out)))
    return out


def text_bar(bar: Bar, width: int = 78) -> list[str]:
    cells = max(10, width - 2)
    scale = max(bar.peak_gib, bar.capacity_gib, 1e-9)
    body = "".join(GLYPHS.get(comp, "#") * n if comp != "free" else " " * n for comp, n in bar_cells(bar, cells))
    cap_at = min(cells - 1, int(round(bar.capacity_gib / scale * cells)) - 1) if bar.capacity_gib else cells - 1
    body = body[:cap_at] + "|" + body[cap_at + 1:] if bar.peak_gib > bar.capacity_gib else body
    items = [f"{GLYPHS.get(c, '#')} {name} {gib:.1f}" for c, name, gib in bar.segments if gib >= 0.05]
    legend = [""]
    for item in items:
        joined = f"{legend[-1]}  {item}" if legend[-1] else item
        if cell_width(joined) > width and legend[-1]:
            legend.append(item)
        else:
            legend[-1] = joined
    return [bar.label, "[" + body + "]", *legend]


# ================================================================ the texts

_COMPONENT_NAMES = {
    "weights": {"en": "weights", "zh": "模型权重"},
    "gradients": {"en": "gradients", "zh": "梯度"},
    "optimizer": {"en": "optimizer states", "zh": "优化器状态"},
    "activations": {"en": "activations", "zh": "激活值"},
    "logits": {"en": "logits", "zh": "logits"},
    "overhead": {"en": "overhead", "zh": "固定开销"},
}

_PHASES = {
    "load": {"en": "while the model was being loaded, before training started",
             "zh": "在加载模型时（训练还没开始）"},
    "forward": {"en": "in the forward pass", "zh": "在前向传播中"},
    "loss": {"en": "while computing the loss", "zh": "在计算损失（loss）时"},
    "backward": {"en": "in the backward pass", "zh": "在反向传播中"},
    "optimizer": {"en": "at the optimizer step", "zh": "在优化器更新（optimizer.step）时"},
    "zero_init": {"en": "while DeepSpeed ZeRO set up its partitions", "zh": "在 DeepSpeed ZeRO 初始化分片时"},
    "eval": {"en": "during evaluation", "zh": "在评估（eval）时"},
    "save": {"en": "while saving a checkpoint", "zh": "在保存检查点时"},
    "generate": {"en": "while generating text", "zh": "在生成文本时"},
}

_PHASE_MEANING = {
    "load": {"en": "So the weights alone did not fit: no training setting that acts later (batch, sequence length) can help; what helps is fewer bytes per weight or more GPUs sharing them.",
             "zh": "也就是说，光是模型权重就放不下：批大小、序列长度这类训练时才起作用的设置帮不上忙，有用的是让每个权重占更少字节，或让更多 GPU 分摊。"},
    "forward": {"en": "During the forward pass each layer stores values (activations) that the backward pass will need; they pile up layer after layer until the last one.",
                "zh": "前向传播时，每一层都要保存反向传播需要用到的中间结果（激活值），它们一层一层累积，直到最后一层。"},
    "loss": {"en": "To compute the loss the model scores every word of its vocabulary at every token; this table (the logits) is kept in fp32 and is often the single largest tensor.",
             "zh": "计算损失时，模型要在每个 token 位置为词表中的每个词打分；这张表（logits）以 fp32 保存，常常是最大的单个张量。"},
    "backward": {"en": "In the backward pass gradients are created while most activations are still held, which is why this is often the highest point of a step.",
                 "zh": "反向传播时，梯度在不断生成，而大部分激活值还没释放，所以这里常常是一步训练中显存最高的时刻。"},
    "optimizer": {"en": "At the first optimizer step the optimizer creates its states (for AdamW, two numbers per trained parameter) on top of the weights and gradients already there. A crash here means the model states alone (weights + gradients + optimizer) do not fit; shrinking the batch helps little.",
                  "zh": "第一次优化器更新时，优化器要在已有的权重和梯度之外再创建它的状态（AdamW 为每个可训练参数保存两个数）。在这里崩溃，说明仅模型状态（权重 + 梯度 + 优化器状态）就放不下；减小批大小帮助不大。"},
    "zero_init": {"en": "DeepSpeed briefly needs full copies of some tensors while it splits them across GPUs.",
                  "zh": "DeepSpeed 在把张量切分到各张 GPU 时，需要短暂地持有部分完整副本。"},
    "eval": {"en": "Evaluation runs with its own batch size and may keep every prediction on the GPU until the end.",
             "zh": "评估使用单独的批大小，而且可能把所有预测结果都留在 GPU 上直到评估结束。"},
    "save": {"en": "Saving gathers the full model state in one place, if only for a moment.",
             "zh": "保存检查点时，需要把完整的模型状态短暂地汇总到一处。"},
    "generate": {"en": "Generation keeps a growing cache of keys and values for every token produced.",
                 "zh": "生成时，每产生一个 token，键值缓存（KV cache）都会变大。"},
}

_DIAGNOSES = {
    "fragmentation": {"en": "A lot of memory was reserved by PyTorch but not in use ({ru}): the memory is fragmented. Setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True often recovers it.",
                      "zh": "PyTorch 预留但未使用的显存很多（{ru}）：显存碎片化了。设置 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True 通常能收回这部分。"},
    "other_process": {"en": "Other processes held {other} on the same GPU: close them or pick another card.",
                      "zh": "同一张卡上的其他进程占用了 {other}：关掉它们，或换一张卡。"},
    "eval": {"en": "The crash happened during evaluation: the evaluation batch and the predictions kept for metrics are the usual culprits.",
             "zh": "崩溃发生在评估阶段：评估批大小和为计算指标而保留的预测结果是常见原因。"},
    "long_samples": {"en": "The crash came after many good steps, on a longer batch ({seq} tokens): a few long samples need much more memory than the average one.",
                     "zh": "崩溃发生在许多正常的训练步之后，遇到了更长的批（{seq} 个 token）：少数长样本需要的显存远多于平均样本。"},
    "host_ram": {"en": "The machine's own RAM (not the GPU's) ran out.", "zh": "耗尽的是主机内存（不是显存）。"},
    "save": {"en": "The crash happened while saving a checkpoint.", "zh": "崩溃发生在保存检查点时。"},
}

_FIELD_LABELS = {
    "micro_batch": {"en": "micro-batch per GPU", "zh": "每卡微批大小"},
    "grad_accum": {"en": "gradient accumulation steps", "zh": "梯度累积步数"},
    "seq_len": {"en": "maximum sequence length", "zh": "最大序列长度"},
    "method": {"en": "fine-tuning method", "zh": "微调方法"},
    "lora_rank": {"en": "LoRA rank", "zh": "LoRA 秩"},
    "lora_targets": {"en": "LoRA target modules", "zh": "LoRA 目标模块"},
    "quant_bits": {"en": "quantization bits", "zh": "量化位数"},
    "precision": {"en": "compute precision", "zh": "计算精度"},
    "pure_bf16": {"en": "pure bf16", "zh": "纯 bf16"},
    "optimizer": {"en": "optimizer", "zh": "优化器"},
    "grad_ckpt": {"en": "gradient checkpointing", "zh": "梯度检查点"},
    "attention": {"en": "attention kernel", "zh": "注意力实现"},
    "fused_ce": {"en": "fused cross-entropy", "zh": "融合交叉熵"},
    "zero_stage": {"en": "DeepSpeed ZeRO stage", "zh": "DeepSpeed ZeRO 阶段"},
    "offload_optimizer": {"en": "optimizer offload to CPU", "zh": "优化器卸载到 CPU"},
    "offload_params": {"en": "parameter offload to CPU", "zh": "参数卸载到 CPU"},
    "fsdp": {"en": "FSDP", "zh": "FSDP"},
    "packing": {"en": "sequence packing", "zh": "序列打包"},
    "eval_batch": {"en": "evaluation batch per GPU", "zh": "每卡评估批大小"},
    "eval_accum": {"en": "evaluation accumulation steps", "zh": "评估累积步数"},
    "n_gpus": {"en": "GPUs", "zh": "GPU 数量"},
    "use_unsloth": {"en": "Unsloth", "zh": "Unsloth"},
    "do_eval": {"en": "evaluation", "zh": "评估"},
}

# LLaMA-Factory key of each field, used when the config did not name it (the value was a default).
_LF_KEYS = {
    "micro_batch": "per_device_train_batch_size", "grad_accum": "gradient_accumulation_steps",
    "seq_len": "cutoff_len", "method": "finetuning_type", "lora_rank": "lora_rank", "lora_targets": "lora_target",
    "quant_bits": "quantization_bit", "pure_bf16": "pure_bf16", "optimizer": "optim",
    "grad_ckpt": "disable_gradient_checkpointing", "attention": "flash_attn", "fused_ce": "enable_liger_kernel",
    "packing": "packing", "eval_batch": "per_device_eval_batch_size", "eval_accum": "eval_accumulation_steps",
    "zero_stage": "deepspeed", "use_unsloth": "use_unsloth",
}

_COSTS = {
    "throughput": {"en": "Training gets slower: the same work is done in more, smaller pieces or with extra computation.",
                   "zh": "训练会变慢：同样的计算被拆成更多更小的块，或需要额外计算。"},
    "quality": {"en": "It changes what is trained, so results can differ from your original run.",
                "zh": "它改变了训练的内容，结果可能与原来的设置不同。"},
    "none": {"en": "No cost to speed or results.", "zh": "对速度和效果都没有影响。"},
}

_T: dict[str, dict[str, str]] = {
    # questions
    "q_gpus": {"en": "How many {gpu} GPUs can this run use?", "zh": "这次训练可以用几张 {gpu}？"},
    "q_gpus_help": {"en": "Your run used {n}. With more GPUs, DeepSpeed ZeRO can split weights, gradients and optimizer states among them.",
                    "zh": "你的训练用了 {n} 张。GPU 更多时，DeepSpeed ZeRO 可以把权重、梯度和优化器状态分摊到各张卡上。"},
    "n_gpus_label": {"en": "{n} GPU(s)", "zh": "{n} 张"},
    "q_batch": {"en": "Must the effective batch size stay {eb}?", "zh": "有效批大小必须保持为 {eb} 吗？"},
    "q_batch_help": {"en": "Effective batch = micro-batch {mb} × gradient accumulation {ga} × GPUs {n} = {eb}. Keeping it means the learning rate you tuned still fits.",
                     "zh": "有效批大小 = 微批 {mb} × 梯度累积 {ga} × GPU 数 {n} = {eb}。保持不变，你调好的学习率就依然适用。"},
    "q_method": {"en": "May the plan change the experiment ({method} → LoRA/QLoRA, shorter samples)?",
                 "zh": "可以改变实验本身吗（{method} → LoRA/QLoRA、截短样本）？"},
    "q_method_help": {"en": "LoRA and QLoRA save the most memory, but they train a different set of weights than {method}; a shorter cutoff drops the ends of long samples. Either makes it a different experiment.",
                      "zh": "LoRA 和 QLoRA 最省显存，但训练的参数与{method}不同；截短 cutoff_len 会丢掉长样本的结尾。两者都相当于换了一个实验。"},
    "q_prefer": {"en": "When both work, do you prefer less memory or more speed?",
                 "zh": "当几种办法都可行时，你更看重省显存还是训练速度？"},
    "q_prefer_help": {"en": "Some fixes (gradient checkpointing, offloading, smaller micro-batches) cost speed. Preferring speed leaves them out wherever the plan still fits without them.",
                      "zh": "有些办法（梯度检查点、卸载到 CPU、更小的微批）会降低速度。选择速度优先时，只要不用它们也能放下，就不用。"},
    "prefer_memory": {"en": "memory", "zh": "省显存"},
    "prefer_speed": {"en": "speed", "zh": "速度"},
    # page titles
    "t_error": {"en": "1. What the error means", "zh": "1. 这个报错是什么意思"},
    "t_memory": {"en": "2. Where the memory went", "zh": "2. 显存都用在哪里了"},
    "t_questions": {"en": "3. A few things only you know", "zh": "3. 只有你知道的几件事"},
    "t_plan": {"en": "4. The plan", "zh": "4. 解决方案"},
    "t_step": {"en": "Step {i} of {n}: {title}", "zh": "第 {i}/{n} 步：{title}"},
    "t_apply": {"en": "How to apply it", "zh": "如何应用这些修改"},
    "t_watch": {"en": "What to watch in the next run", "zh": "下次运行时要注意什么"},
    "t_noconfig": {"en": "What oomdoctor needs next", "zh": "oomdoctor 还需要什么"},
    # error page
    "err_lead": {"en": "Your run stopped with “CUDA out of memory” {phase} (line {line} of {log}).",
                 "zh": "你的训练{phase}报了“CUDA out of memory”（显存不足），位置在 {log} 第 {line} 行。"},
    "err_lead_nophase": {"en": "Your run stopped with “CUDA out of memory” (line {line} of {log}).",
                         "zh": "你的训练报了“CUDA out of memory”（显存不足），位置在 {log} 第 {line} 行。"},
    "err_kind": {"en": "Your run stopped with a memory error of kind “{kind}” (line {line} of {log}).",
                 "zh": "你的训练因内存错误“{kind}”而停止，位置在 {log} 第 {line} 行。"},
    "err_numbers": {"en": "PyTorch asked GPU {dev} for {tried} more. The card has {cap} in total, and only {free} was still free.",
                    "zh": "PyTorch 向 GPU {dev} 申请 {tried} 显存。这张卡总共 {cap}，当时只剩 {free} 空闲。"},
    "err_numbers_nofree": {"en": "PyTorch asked GPU {dev} for {tried} more, and the card ({cap} in total) could not give it.",
                           "zh": "PyTorch 向 GPU {dev} 申请 {tried} 显存，而这张卡（共 {cap}）给不出来。"},
    "err_held": {"en": "At that moment your own training process already held {alloc} in tensors{ru}.",
                 "zh": "那一刻，你的训练进程自己已经用张量占了 {alloc}{ru}。"},
    "err_ru": {"en": ", plus {ru} reserved by PyTorch but not in use", "zh": "，另有 {ru} 被 PyTorch 预留但未使用"},
    "err_meaning": {"en": "This is not a bug in your code. A training step simply needs more memory than one GPU has; the fix is to make one of the parts on the next page smaller, or to spread them over more GPUs.",
                    "zh": "这不是代码的 bug。一步训练需要的显存超过了一张 GPU 的容量；解决办法是把下一页中的某些部分变小，或者分摊到更多 GPU 上。"},
    "err_nocrash": {"en": "No crash log was given, so this is a check before launch: oomdoctor estimates that your run needs {peak} at its peak on a {cap} {gpu}.",
                    "zh": "没有提供崩溃日志，所以这是一次启动前的检查：oomdoctor 估计你的训练峰值需要 {peak}，而 {gpu} 只有 {cap}。"},
    "err_nocrash_fits": {"en": "No crash log was given, so this is a check before launch: your run needs about {peak} at its peak, and the {gpu} has {cap}. It should fit.",
                         "zh": "没有提供崩溃日志，所以这是一次启动前的检查：你的训练峰值约需 {peak}，{gpu} 有 {cap}，应该放得下。"},
    "err_step": {"en": "It got through {step} training step(s) before it died.", "zh": "它在崩溃前完成了 {step} 步训练。"},
    "err_step0": {"en": "It died before the first training step finished.", "zh": "它在第一步训练完成前就崩溃了。"},
    # memory page
    "mem_lead": {"en": "oomdoctor rebuilt your run from {config}: {model} ({params} parameters), {method}, {precision}, micro-batch {mb}, sequence length {seq}, optimizer {optim}, on {n} × {gpu}.",
                 "zh": "oomdoctor 根据 {config} 重建了你的训练：{model}（{params}参数），{method}，{precision}，微批 {mb}，序列长度 {seq}，优化器 {optim}，{n} 张 {gpu}。"},
    "mem_weights": {"en": "Weights — {gib}: the model itself. {params} parameters × {bpp} bytes each. Every GPU holds them unless ZeRO-3/FSDP splits them.",
                    "zh": "模型权重 — {gib}：模型本身。{params}参数 × 每个 {bpp} 字节。除非用 ZeRO-3/FSDP 切分，每张卡都要放一份。"},
    "mem_grads": {"en": "Gradients — {gib}: during the backward pass every trained parameter ({trainable}) gets a gradient: how it should change. Frozen parameters get none.",
                  "zh": "梯度 — {gib}：反向传播时，每个可训练参数（{trainable}）都会得到一个梯度，即它该怎样改变。冻结的参数没有梯度。"},
    "mem_optim": {"en": "Optimizer states — {gib}: {optim} remembers extra numbers for every trained parameter (for AdamW a running mean and variance, about {bpp} bytes per parameter). In a full fine-tune this is usually the largest part.",
                  "zh": "优化器状态 — {gib}：{optim} 为每个可训练参数额外记住一些数（AdamW 是梯度的滑动均值和方差，每个参数约 {bpp} 字节）。全参数微调时这通常是最大的一块。"},
    "mem_acts": {"en": "Activations — {gib}: values saved in the forward pass for the backward pass. They grow with tokens per micro-batch ({mb} × {seq} = {tokens} tokens) and with the {layers} layers. Gradient checkpointing is {ckpt}.",
                 "zh": "激活值 — {gib}：前向传播时保存、供反向传播使用的中间结果。它随每个微批的 token 数（{mb} × {seq} = {tokens} 个）和 {layers} 层增长。梯度检查点{ckpt}。"},
    "mem_logits": {"en": "Logits — {gib}: a score for each of the {vocab} vocabulary words at each of the {tokens} tokens, in fp32 for the loss. It grows with micro-batch × sequence length.",
                   "zh": "logits — {gib}：在 {tokens} 个 token 的每个位置上为词表中 {vocab} 个词各打一个分，为计算损失以 fp32 保存。它随微批 × 序列长度增长。"},
    "mem_acts_freed": {"en": "Here activations and logits count 0 GiB: the peak comes at the optimizer step, after the backward pass has freed them. That is why a smaller batch or a shorter cutoff cannot fix this crash.",
                       "zh": "这里激活值和 logits 记为 0 GiB\uff1a峰值出现在优化器更新时\uff0c反向传播已经把它们释放了。所以减小批大小或截短 cutoff_len 都解决不了这次崩溃。"},
    "mem_overhead": {"en": "Overhead — {gib}: the CUDA context, library workspaces and the allocator's reserve. No setting shrinks it.",
                     "zh": "固定开销 — {gib}：CUDA 上下文、库的工作区和分配器预留。任何设置都无法减小它。"},
    "ckpt_on": {"en": "on: only each layer's input is kept and the rest is recomputed", "zh": "已开启：每层只保留输入，其余在反向时重算"},
    "ckpt_off": {"en": "off: every intermediate value of every layer is kept", "zh": "未开启：每一层的所有中间结果都被保存"},
    "mem_total": {"en": "Together: {peak} at the peak, on a GPU where {cap} is usable. To run with {head}% kept free, the peak must come down to {target}: {need} less.",
                  "zh": "合计：峰值 {peak}，而这张卡可用 {cap}。若要留出 {head}% 余量，峰值需降到 {target} 以下，也就是要省下 {need}。"},
    "mem_total_fits": {"en": "Together: {peak} at the peak, on a GPU where {cap} is usable: it fits, with {free} to spare.",
                       "zh": "合计：峰值 {peak}，这张卡可用 {cap}：放得下，还剩 {free}。"},
    "mem_crash_check": {"en": "For comparison, the crash log says your process held {alloc} when it asked for {tried} more, {sum} in all.",
                        "zh": "对比一下：崩溃日志显示，进程已占用 {alloc}，又申请了 {tried}，合计 {sum}。"},
    "bar_now": {"en": "Your run now (per GPU)", "zh": "你当前的训练（每张卡）"},
    "bar_after": {"en": "After this step", "zh": "这一步之后"},
    "bar_before": {"en": "Before this step", "zh": "这一步之前"},
    "bar_final": {"en": "After the whole plan", "zh": "整个方案执行后"},
    "bar_now_short": {"en": "now", "zh": "当前"},
    "bar_before_short": {"en": "before", "zh": "之前"},
    "bar_after_short": {"en": "after", "zh": "之后"},
    "bar_final_short": {"en": "planned", "zh": "方案后"},
    # questions page
    "qp_lead": {"en": "oomdoctor read everything it could from your files. These answers are yours to give; each one changes the plan at once.",
                "zh": "oomdoctor 已经从你的文件里读出了能读的一切。下面这些只能由你来回答；每个回答都会立刻改变方案。"},
    "qp_answer": {"en": "Now: {value}.", "zh": "当前：{value}。"},
    "qp_flag": {"en": "On the command line: {flag}", "zh": "命令行：{flag}"},
    # plan page
    "plan_lead": {"en": "{n} step(s), in order, take the peak from {before} to {after} of {cap} usable per GPU.",
                  "zh": "按顺序执行 {n} 步，每张卡的峰值从 {before} 降到 {after}（可用 {cap}）。"},
    "plan_fits": {"en": "After the last step the run fits, with {free} to spare.", "zh": "最后一步之后，训练放得下，还剩 {free}。"},
    "plan_nofit": {"en": "Even after every step it still does not fit with these answers.", "zh": "按照现在的回答，即使执行完所有步骤也还是放不下。"},
    "plan_fits_as_is": {"en": "With these answers the run fits as it is: peak {peak} of {cap}. Nothing needs to change.",
                        "zh": "按照这些回答，当前配置就能放下：峰值 {peak} / {cap}。无需修改。"},
    "plan_line": {"en": "• {title}: saves {saved} → {peak}", "zh": "• {title}：省下 {saved} → {peak}"},
    "plan_line_more": {"en": "• {title}: uses {more} more → {peak}", "zh": "• {title}：多用 {more} → {peak}"},
    "plan_fits_crashed": {"en": "The estimate fits (peak {peak} of {cap}), yet the run crashed; the log points to {n} step(s):",
                          "zh": "估算放得下（峰值 {peak} / {cap}），但训练还是崩溃了；日志指向下面 {n} 个步骤："},
    "plan_skipped_head": {"en": "Left out of the plan:", "zh": "没有放进方案的办法："},
    "plan_skipped": {"en": "• {title}: {reason}", "zh": "• {title}：{reason}"},
    "skip_method": {"en": "it changes the experiment (method or data), which you asked to keep",
                    "zh": "它会改变实验本身（训练方法或数据），而你要求保持不变"},
    "skip_batch": {"en": "it changes the effective batch, which you asked to keep", "zh": "它会改变有效批大小，而你要求保持不变"},
    "skip_speed": {"en": "it slows training and the plan fits without it", "zh": "它会拖慢训练，而不用它也能放下"},
    "plan_advice_head": {"en": "What would fit instead:", "zh": "可以放下的其他选择："},
    "plan_try_gpus": {"en": "• Answer the GPU question with more GPUs, so ZeRO-3 can split the model states.",
                      "zh": "• 在 GPU 数量问题上选择更多的卡，让 ZeRO-3 分摊模型状态。"},
    "plan_try_method": {"en": "• Allow a method change (LoRA/QLoRA): it removes most gradients and optimizer states.",
                        "zh": "• 允许改变训练方法（LoRA/QLoRA）：这样大部分梯度和优化器状态都不需要了。"},
    # step pages
    "st_change_head": {"en": "What it changes in {file}:", "zh": "它在 {file} 中修改："},
    "st_change_head_nofile": {"en": "What it changes:", "zh": "它修改："},
    "st_change": {"en": "• {label} ({key}): {old} → {new}", "zh": "• {label}（{key}）：{old} → {new}"},
    "st_change_nokey": {"en": "• {label}: {old} → {new}", "zh": "• {label}：{old} → {new}"},
    "st_env": {"en": "• environment: {line}", "zh": "• 环境变量：{line}"},
    "st_why": {"en": "Why it saves memory: {why}", "zh": "为什么省显存：{why}"},
    "st_saves": {"en": "On your run: saves {saved} per GPU, peak {before} → {after} of {cap} usable{verdict}.",
                 "zh": "在你的训练上：每张卡省下 {saved}，峰值 {before} → {after}（可用 {cap}）{verdict}。"},
    "st_verdict_fits": {"en": " — now it fits", "zh": "，现在放得下了"},
    "st_verdict_still": {"en": " — it still fits", "zh": "，仍然放得下"},
    "st_uses": {"en": "On your run: uses {more} more per GPU, peak {before} → {after} of {cap} usable{verdict}.",
                "zh": "在你的训练上：每张卡多用 {more}，峰值 {before} → {after}（可用 {cap}）{verdict}。"},
    "st_verdict_not": {"en": " — not enough yet", "zh": "，还不够"},
    "st_parts": {"en": "Parts that shrink: {parts}.", "zh": "变小的部分：{parts}。"},
    "st_cost": {"en": "What it costs: {cost}", "zh": "代价：{cost}"},
    "st_eb_same": {"en": "Effective batch stays {eb} ({mb} × {ga} × {n} GPUs).", "zh": "有效批大小保持 {eb}（{mb} × {ga} × {n} 张卡）。"},
    "st_eb_changed": {"en": "Effective batch changes from {old} to {new}: consider scaling the learning rate with it.",
                      "zh": "有效批大小从 {old} 变为 {new}：可以考虑相应调整学习率。"},
    "st_consent": {"en": "This step changes the experiment itself. Take it only if that is acceptable; otherwise leave it out with: {flag}",
                   "zh": "这一步改变了实验本身。只有在可以接受时才采用；否则可以用 {flag} 跳过。"},
    "st_notes": {"en": "Launch advice: {note}", "zh": "启动建议：{note}"},
    # apply page
    "ap_lead": {"en": "oomdoctor writes the changes for you as a patch; your files keep their comments and key order.",
                "zh": "oomdoctor 会把这些修改写成补丁；你文件中的注释和键的顺序都会保留。"},
    "ap_export": {"en": "Run the commands below in the folder you launched training from: the first writes the patch, git apply changes your files (patch -p1 < plan.diff works too).",
                  "zh": "在启动训练的目录里运行下面的命令：第一条生成补丁，git apply 修改你的文件（也可以用 patch -p1 < plan.diff）。"},
    "ap_write": {"en": "To leave your files untouched, write edited copies into a folder instead: {cmd}",
                 "zh": "如果不想改动原文件，可以把修改后的副本写到一个目录里：{cmd}"},
    "ap_env": {"en": "The export lines set {names} for the launch: run them in the same shell before you start training.",
               "zh": "export 这几行为启动设置 {names}：在开始训练前，于同一个 shell 中运行。"},
    "ap_notes": {"en": "For the launch command: {note}", "zh": "关于启动命令：{note}"},
    "ap_diff": {"en": "The patch itself is shown last, below the commands.", "zh": "补丁内容附在命令之后。"},
    "ap_nofile": {"en": "No file needs to change; only the launch command does.", "zh": "无需修改文件，只需修改启动命令。"},
    # watch page
    "wa_peak": {"en": "Expect a peak of about {peak} per GPU (PyTorch's max_memory_allocated about {alloc}). Watch it with nvidia-smi, or with the memory lines of your trainer's log.",
                "zh": "预计每张卡峰值约 {peak}（PyTorch 的 max_memory_allocated 约 {alloc}）。可以用 nvidia-smi 或训练日志里的显存信息来观察。"},
    "wa_first_step": {"en": "The first optimizer step is where your run died: once step 1 has passed, the model states are in place and memory stays flat for a full fine-tune.",
                      "zh": "你的训练死在第一次优化器更新：一旦第 1 步顺利通过，模型状态就都已分配好，全参数微调的显存之后基本保持不变。"},
    "wa_first_step_generic": {"en": "The first few steps show the real peak: if steps 1–10 pass, the usual cause of a later OOM is a longer batch.",
                              "zh": "最初几步就能看出真实峰值：如果前 10 步都通过，之后再 OOM 通常是遇到了更长的批。"},
    "wa_seq": {"en": "Samples longer than {seq} tokens are now cut. Check how many of your samples are that long, and whether their endings matter.",
               "zh": "超过 {seq} 个 token 的样本现在会被截断。检查一下有多少样本这么长，以及它们的结尾是否重要。"},
    "wa_lr": {"en": "The effective batch changed ({old} → {new}): watch the loss curve in the first hundred steps.",
              "zh": "有效批大小变了（{old} → {new}）：留意前一百步的 loss 曲线。"},
    "wa_lora": {"en": "You now train LoRA adapters: LoRA usually wants a larger learning rate than a full fine-tune (1e-4 is a common start), and you save adapters, not the whole model.",
                "zh": "现在训练的是 LoRA 适配器：LoRA 通常需要比全参数微调更大的学习率（常从 1e-4 开始），保存的是适配器而不是整个模型。"},
    "wa_speed": {"en": "Some steps cost speed: compare the seconds per step (or tokens per second) with your earlier run.",
                 "zh": "部分步骤会降低速度：把每步耗时（或每秒 token 数）和之前的运行比较一下。"},
    "wa_eval": {"en": "Evaluation is on: its batch size ({eb}) is separate, so watch the first evaluation too.",
                "zh": "评估已开启：它的批大小（{eb}）是单独设置的，所以第一次评估时也要留意。"},
    "wa_host": {"en": "Offloading needs about {host} of CPU RAM: check free -g before you launch.",
                "zh": "卸载到 CPU 需要约 {host} 主机内存：启动前用 free -g 检查一下。"},
    "wa_nofit": {"en": "With these answers nothing fits yet: go back to the questions and allow more GPUs or a method change.",
                 "zh": "按照现在的回答还放不下：回到问题页，允许使用更多 GPU 或改变训练方法。"},
    "wa_again": {"en": "If it still runs out of memory, run oomdoctor again on the new log: it will read the new numbers.",
                 "zh": "如果仍然显存不足，用新的日志再运行一次 oomdoctor：它会读取新的数字。"},
    # no config
    "nc_lead": {"en": "The log alone does not say enough about your training setup to estimate where the memory went.",
                "zh": "仅凭日志还不足以了解你的训练设置，无法估算显存都用在哪里。"},
    "nc_how": {"en": "Run it again with your training config as well:", "zh": "请带上训练配置文件再运行一次："},
}

_CHANGE_TEACH = {
    "micro_batch": {"en": "Each GPU now processes {new} sample(s) at a time instead of {old}: {ot} → {nt} tokens per micro-batch. Activations and logits are proportional to this number.",
                    "zh": "每张卡一次只处理 {new} 条样本（原来 {old} 条）：每个微批从 {ot} 个 token 降到 {nt} 个。激活值和 logits 都与这个数成正比。"},
    "grad_accum": {"en": "Gradients of {new} micro-batches are added up before each optimizer step (was {old}), so every update still learns from {eb} samples.",
                   "zh": "每次优化器更新前累加 {new} 个微批的梯度（原来 {old} 个），所以每次更新仍然基于 {eb} 条样本。"},
    "seq_len": {"en": "Samples are cut to {new} tokens (was {old}): {ot} → {nt} tokens per micro-batch. Text after token {new} of a sample is not trained on.",
                "zh": "样本被截断到 {new} 个 token（原来 {old}）：每个微批从 {ot} 个 token 降到 {nt} 个。样本中第 {new} 个 token 之后的内容不再参与训练。"},
    "lora": {"en": "LoRA freezes all {params} parameters and trains small low-rank adapters (rank {rank}) beside them: gradients and optimizer states are kept only for the adapters.",
             "zh": "LoRA 冻结全部 {params}参数，只在旁边训练秩为 {rank} 的小型低秩适配器：梯度和优化器状态只为适配器保存。"},
    "qlora": {"en": "QLoRA stores the frozen weights in {bits}-bit (about {bytes} byte per parameter instead of 2) and trains LoRA adapters in higher precision.",
              "zh": "QLoRA 把冻结的权重以 {bits} 位保存（每个参数约 {bytes} 字节，而不是 2 字节），LoRA 适配器仍以较高精度训练。"},
    "freeze": {"en": "Only the last layers are trained; the rest are frozen and need no gradients or optimizer states.",
               "zh": "只训练最后几层；其余层被冻结，不需要梯度和优化器状态。"},
    "precision": {"en": "Numbers are computed in {new} (2 bytes) instead of {old} (4 bytes).",
                  "zh": "计算改用 {new}（2 字节），而不是 {old}（4 字节）。"},
    "pure_bf16": {"en": "The trained weights stay in bf16 instead of an fp32 copy: half the bytes for weights, gradients and optimizer states.",
                  "zh": "可训练权重直接以 bf16 保存，不再保留 fp32 副本：权重、梯度和优化器状态的字节数减半。"},
    "optimizer": {"en": "The optimizer changes from {old} to {new}, which stores its states in fewer bytes per parameter.",
                  "zh": "优化器从 {old} 换成 {new}，每个参数的状态占用更少字节。"},
    "grad_ckpt": {"en": "Only the input of each of the {layers} layers is kept in the forward pass; the rest is recomputed during backward.",
                  "zh": "前向传播时 {layers} 层中每层只保留输入，其余在反向传播时重新计算。"},
    "attention": {"en": "The {new} attention kernel never builds the full {seq} × {seq} score matrix per head.",
                  "zh": "{new} 注意力实现不再为每个注意力头构造完整的 {seq} × {seq} 分数矩阵。"},
    "fused_ce": {"en": "The loss is computed in chunks straight from the hidden states, so the full {tokens} × {vocab} fp32 logits table is never built.",
                 "zh": "损失直接从隐藏状态分块计算，不再构造完整的 {tokens} × {vocab} fp32 logits 表。"},
    "zero_stage": {"en": "ZeRO stage {new} splits {what} across your {n} GPUs: each holds about 1/{n}.",
                   "zh": "ZeRO 阶段 {new} 把{what}切分到你的 {n} 张卡上：每张卡只放约 1/{n}。"},
    "offload_optimizer": {"en": "The optimizer states move to CPU RAM; the GPU keeps only weights, gradients and activations.",
                          "zh": "优化器状态被移到主机内存；GPU 上只保留权重、梯度和激活值。"},
    "offload_params": {"en": "The weights wait in CPU RAM and come to the GPU one layer at a time.",
                       "zh": "权重放在主机内存中，每次只把一层搬到 GPU 上。"},
    "lora_rank": {"en": "Adapters of rank {new} instead of {old}: fewer trained parameters, fewer gradients and optimizer states.",
                  "zh": "适配器的秩从 {old} 降到 {new}：可训练参数更少，梯度和优化器状态也更少。"},
    "packing": {"en": "Sequence packing {state}: {seq} tokens per packed row.", "zh": "序列打包{state}：每行 {seq} 个 token。"},
    "eval_batch": {"en": "Evaluation now runs {new} sample(s) at a time instead of {old}.", "zh": "评估时每次处理 {new} 条样本（原来 {old} 条）。"},
    "eval_accum": {"en": "Predictions move to the CPU every {new} evaluation steps instead of piling up on the GPU.",
                   "zh": "评估时每 {new} 步就把预测结果移到 CPU，不再全部堆在 GPU 上。"},
}

_ZERO_WHAT = {
    1: {"en": "the optimizer states", "zh": "优化器状态"},
    2: {"en": "the optimizer states and gradients", "zh": "优化器状态和梯度"},
    3: {"en": "the optimizer states, gradients and weights", "zh": "优化器状态、梯度和权重"},
}

_METHODS = {
    "full": {"en": "full fine-tuning", "zh": "全参数微调"},
    "lora": {"en": "LoRA", "zh": "LoRA"},
    "qlora": {"en": "QLoRA", "zh": "QLoRA"},
    "freeze": {"en": "freeze tuning", "zh": "冻结微调"},
}


def _tr(msg: str, lang: str, /, **values: Any) -> str:
    return lookup(_T, msg, lang, **values)


def _method_name(method: str, lang: str) -> str:
    return pick(_METHODS.get(method, {"en": method}), lang)


def _g(gib: float | None) -> str:
    return "?" if gib is None else f"{gib:.1f} GiB"


def _params_text(n: int | None, lang: str) -> str:
    if not n:
        return "?"
    if lang == "zh":
        return f"{n / 1e8:.1f} 亿" if n >= 1e8 else f"{n / 1e4:.0f} 万"
    return f"{n / 1e9:.2f} B" if n >= 1e9 else f"{n / 1e6:.1f} M"


def _value_text(fld: str, value: Any, lang: str) -> str:
    if isinstance(value, bool):
        return ("开启" if value else "关闭") if lang == "zh" else ("on" if value else "off")
    if value is None:
        return "—"
    if fld == "method":
        return _method_name(str(value), lang)
    if isinstance(value, tuple):
        return ",".join(map(str, value))
    return str(value)


class _Writer:
    """Builds the pages for one report in one language."""

    def __init__(self, report: Report, answers: Answers, lang: str) -> None:
        self.r = report
        self.a = answers
        self.lang = lang
        self.s = report.setup
        self.est = report.estimate
        self.cap = report.estimate.capacity_gib if report.estimate else (report.hardware.gpu_gib if report.hardware else 0.0)
        self.gpu = report.hardware.gpu if report.hardware else "GPU"

    def tr(self, msg: str, /, **values: Any) -> str:
        return _tr(msg, self.lang, **values)

    # ---------------------------------------------------------------- 1. the error

    def error_page(self) -> Page:
        crash, lang = self.r.crash, self.lang
        ev = crash.primary if crash else None
        paras: list[str] = []
        if ev is None:
            if self.est is not None:
                key = "err_nocrash_fits" if self.est.fits else "err_nocrash"
                paras.append(self.tr(key, peak=_g(self.est.peak_gib), cap=_g(self.cap), gpu=self.gpu))
            return Page("error", self.tr("t_error"), tuple(paras))
        log = os.path.basename(crash.file) if crash and crash.file else "log"
        if ev.kind in ("cuda_oom", "hip_oom", "mps_oom", "xla_oom"):
            if ev.phase in _PHASES:
                paras.append(self.tr("err_lead", phase=pick(_PHASES[ev.phase], lang), line=ev.line, log=log))
            else:
                paras.append(self.tr("err_lead_nophase", line=ev.line, log=log))
        else:
            paras.append(self.tr("err_kind", kind=ev.kind, line=ev.line, log=log))
        dev = ev.device if ev.device is not None else 0
        cap = ev.capacity_gib or (self.r.hardware.gpu_gib if self.r.hardware else None)
        cap_text = f"{_g(cap)} ({self.gpu})" if self.gpu and self.gpu != "unknown" else _g(cap)
        if ev.tried_gib is not None:
            if ev.free_gib is not None:
                paras.append(self.tr("err_numbers", dev=dev, tried=_g(ev.tried_gib), cap=cap_text, free=_g(ev.free_gib)))
            else:
                paras.append(self.tr("err_numbers_nofree", dev=dev, tried=_g(ev.tried_gib), cap=cap_text))
        alloc = ev.allocated_gib if ev.allocated_gib is not None else ev.process_gib
        if alloc is not None:
            ru = self.tr("err_ru", ru=_g(ev.reserved_unallocated_gib)) if ev.reserved_unallocated_gib else ""
            paras.append(self.tr("err_held", alloc=_g(alloc), ru=ru))
        if crash and crash.step is not None:
            paras.append(self.tr("err_step", step=crash.step) if crash.step > 0 else self.tr("err_step0"))
        if ev.phase in _PHASE_MEANING:
            paras.append(pick(_PHASE_MEANING[ev.phase], lang))
        for diag in (crash.diagnoses if crash else ()):
            if diag in _DIAGNOSES:
                paras.append(pick(_DIAGNOSES[diag], lang).format(
                    ru=_g(ev.reserved_unallocated_gib), other=_g(ev.other_processes_gib),
                    seq=crash.seq_len_failing or (self.s.seq_len if self.s else "?")))
        paras.append(self.tr("err_meaning"))
        return Page("error", self.tr("t_error"), tuple(paras))

    # ---------------------------------------------------------------- 2. the memory

    def bar(self, est: Estimate, which: str) -> Bar:
        segs = tuple((c, pick(_COMPONENT_NAMES[c], self.lang), float(est.components.get(c, 0.0))) for c in COMPONENTS)
        return Bar(self.tr(which), segs, est.peak_gib, est.capacity_gib, est.fits, short=self.tr(which + "_short"))

    def params_total(self) -> int | None:
        shape = self.r.shape
        if shape is None:
            return self.r.crash.params_total if self.r.crash else None
        try:
            from oomdoctor.memory.params import count_params

            return int(count_params(shape).total)
        except Exception:  # noqa: BLE001 - the memory model is optional for the wording
            return shape.params_total or (self.r.crash.params_total if self.r.crash else None)

    def params_trainable(self, setup: TrainingSetup) -> int | None:
        shape = self.r.shape
        if shape is not None:
            try:
                from oomdoctor.memory.params import trainable_params

                return int(trainable_params(setup, shape))
            except Exception:  # noqa: BLE001
                pass
        if setup.method == "full":
            return self.params_total()
        return self.r.crash.params_trainable if self.r.crash else None

    def memory_page(self) -> Page:
        s, est, lang = self.s, self.est, self.lang
        assert s is not None and est is not None
        comp = est.components
        total = self.params_total()
        trainable = self.params_trainable(s)
        config = os.path.basename(s.config_file) if s.config_file else "config"
        model = s.model or (self.r.shape.name if self.r.shape else "?")
        n = max(1, s.n_gpus)
        tokens = s.micro_batch * s.seq_len
        paras = [self.tr("mem_lead", config=config, model=model, params=_params_text(total, lang),
                         method=_method_name(s.method, lang), precision=s.precision, mb=s.micro_batch,
                         seq=s.seq_len, optim=s.optimizer, n=n, gpu=self.gpu)]
        w = comp.get("weights", 0.0)
        bpp = w * GIB / total if total else 0.0
        if s.zero_stage >= 3 or s.offload_params:
            bpp *= n if s.zero_stage >= 3 else 1
        paras.append(self.tr("mem_weights", gib=_g(w), params=_params_text(total, lang), bpp=f"{bpp:.1f}"))
        paras.append(self.tr("mem_grads", gib=_g(comp.get("gradients", 0.0)), trainable=_params_text(trainable, lang)))
        o = comp.get("optimizer", 0.0)
        obpp = o * GIB / trainable if trainable else 0.0
        if s.zero_stage >= 1 and not s.offload_optimizer:
            obpp *= n
        paras.append(self.tr("mem_optim", gib=_g(o), optim=s.optimizer, bpp=f"{obpp:.1f}"))
        layers = self.r.shape.num_layers if self.r.shape else "?"
        paras.append(self.tr("mem_acts", gib=_g(comp.get("activations", 0.0)), mb=s.micro_batch, seq=s.seq_len,
                             tokens=tokens, layers=layers, ckpt=self.tr("ckpt_on" if s.grad_ckpt else "ckpt_off")))
        if comp.get("activations", 0.0) < 0.05 and comp.get("logits", 0.0) < 0.05:
            paras.append(self.tr("mem_acts_freed"))
        vocab = self.r.shape.vocab_size if self.r.shape else "?"
        paras.append(self.tr("mem_logits", gib=_g(comp.get("logits", 0.0)), vocab=vocab, tokens=tokens))
        paras.append(self.tr("mem_overhead", gib=_g(comp.get("overhead", 0.0))))
        if est.fits:
            paras.append(self.tr("mem_total_fits", peak=_g(est.peak_gib), cap=_g(est.capacity_gib),
                                 free=_g(est.headroom_gib)))
        else:
            target = est.capacity_gib * (1.0 - est.headroom)
            paras.append(self.tr("mem_total", peak=_g(est.peak_gib), cap=_g(est.capacity_gib),
                                 head=round(est.headroom * 100), target=_g(target), need=_g(est.peak_gib - target)))
        ev = self.r.crash.primary if self.r.crash else None
        if ev is not None and ev.allocated_gib is not None and ev.tried_gib is not None:
            paras.append(self.tr("mem_crash_check", alloc=_g(ev.allocated_gib), tried=_g(ev.tried_gib),
                                 sum=_g(ev.allocated_gib + ev.tried_gib)))
        return Page("memory", self.tr("t_memory"), tuple(paras), (self.bar(est, "bar_now"),))

    # ---------------------------------------------------------------- 3. questions

    def questions_page(self) -> Page:
        paras = [self.tr("qp_lead")]
        yes, no = ("是", "否") if self.lang == "zh" else ("yes", "no")
        for q in questions(self.r, self.lang):
            value = getattr(self.a, q.key)
            if q.key == "n_gpus" and value is None:
                value = q.default
            if isinstance(value, bool):
                shown = yes if value else no
            else:
                shown = dict(q.choices).get(value, str(value))
            paras.append(f"• {q.prompt} {self.tr('qp_answer', value=shown)}")
            paras.append(f"  {q.help}")
        return Page("questions", self.tr("t_questions"), tuple(paras))

    # ---------------------------------------------------------------- 4. plan

    def plan_page(self) -> Page:
        est, plan, lang = self.est, self.r.plan, self.lang
        assert est is not None
        paras: list[str] = []
        bars = [self.bar(est, "bar_now")]
        if est.fits and not plan.steps:
            paras.append(self.tr("plan_fits_as_is", peak=_g(est.peak_gib), cap=_g(est.capacity_gib)))
        elif plan.steps:
            final = plan.steps[-1].estimate
            if est.fits:        # the estimate fits, but the log is evidence for some steps
                paras.append(self.tr("plan_fits_crashed", n=len(plan.steps), peak=_g(est.peak_gib),
                                     cap=_g(est.capacity_gib)))
            else:
                paras.append(self.tr("plan_lead", n=len(plan.steps), before=_g(est.peak_gib),
                                     after=_g(final.peak_gib), cap=_g(final.capacity_gib)))
            for st in plan.steps:
                title = rule_texts(st, lang)[0]
                if not st.changes:          # advice or an environment variable: no GiB to quote
                    paras.append(f"• {title}")
                elif st.adds_gib:
                    paras.append(self.tr("plan_line_more", title=title, more=_g(st.adds_gib),
                                         peak=_g(st.estimate.peak_gib)))
                else:
                    paras.append(self.tr("plan_line", title=title, saved=_g(st.saved_gib),
                                         peak=_g(st.estimate.peak_gib)))
            paras.append(self.tr("plan_fits", free=_g(final.headroom_gib)) if plan.fits else self.tr("plan_nofit"))
            bars.append(self.bar(final, "bar_final"))
        else:
            paras.append(self.tr("plan_nofit"))
        if plan.skipped:
            lines = [self.skipped_line(sk) for sk in plan.skipped]
            lines = [ln for ln in lines if ln]
            if lines:
                paras.append(self.tr("plan_skipped_head"))
                paras.extend(lines)
        if not est.fits and not plan.fits:
            paras.append(self.tr("plan_advice_head"))
            paras.extend(f"• {a}" for a in plan.advice)
            if not self.a.allow_method_change:
                paras.append(self.tr("plan_try_method"))
            paras.append(self.tr("plan_try_gpus"))
        return Page("plan", self.tr("t_plan"), tuple(paras), tuple(bars))

    def skipped_line(self, sk: Skipped) -> str:
        entry = _rule_table(()).get(sk.rule, {})
        title = pick(entry.get("title"), self.lang) or sk.rule
        for kind, reason in ANSWER_SKIP_REASONS.items():
            if sk.reason == reason:
                return self.tr("plan_skipped", title=title, reason=self.tr("skip_" + kind))
        if self.lang == "zh":
            return ""   # the engine's own reasons are English sentences; do not mix languages in the list
        return self.tr("plan_skipped", title=title, reason=sk.reason)

    # ---------------------------------------------------------------- 5. each rung

    def step_page(self, i: int, step: Step) -> Page:
        lang = self.lang
        steps = self.r.plan.steps
        prev_setup = steps[i - 1].setup if i else self.s
        prev_est = steps[i - 1].estimate if i else self.est
        assert prev_setup is not None and prev_est is not None
        title, why, cost = rule_texts(step, lang)
        paras: list[str] = []
        src_file = self._file_of(step)
        paras.append(self.tr("st_change_head", file=src_file) if src_file else self.tr("st_change_head_nofile"))
        for ch in step.changes:
            paras.append(self._change_line(ch))
        for name, value in step.env.items():
            paras.append(self.tr("st_env", line=export_line(name, value)))
        if why:
            paras.append(self.tr("st_why", why=why))
        for ch in step.changes:
            teach = self._teach(ch, prev_setup, step.setup)
            if teach:
                paras.append(teach)
        if step.estimate.fits:
            verdict = self.tr("st_verdict_still") if prev_est.fits else self.tr("st_verdict_fits")
        else:
            verdict = self.tr("st_verdict_not")
        numbers = dict(before=_g(prev_est.peak_gib), after=_g(step.estimate.peak_gib),
                       cap=_g(step.estimate.capacity_gib), verdict=verdict)
        if step.adds_gib:
            paras.append(self.tr("st_uses", more=_g(step.adds_gib), **numbers))
        else:
            paras.append(self.tr("st_saves", saved=_g(step.saved_gib), **numbers))
        shrunk = []
        for c in COMPONENTS:
            a, b = prev_est.components.get(c, 0.0), step.estimate.components.get(c, 0.0)
            if a - b >= 0.05:
                shrunk.append(f"{pick(_COMPONENT_NAMES[c], lang)} {a:.1f} → {b:.1f} GiB")
        if shrunk:
            paras.append(self.tr("st_parts", parts=("、" if lang == "zh" else ", ").join(shrunk)))
        cost_text = cost or " ".join(pick(_COSTS[c], lang) for c in step.costs if c in _COSTS)
        if cost_text:
            paras.append(self.tr("st_cost", cost=cost_text))
        old_eb, new_eb = prev_setup.effective_batch, step.setup.effective_batch
        if any(c.field in ("micro_batch", "grad_accum", "n_gpus") for c in step.changes):
            if old_eb == new_eb:
                s2 = step.setup
                paras.append(self.tr("st_eb_same", eb=new_eb, mb=s2.micro_batch, ga=s2.grad_accum, n=max(1, s2.n_gpus)))
            else:
                paras.append(self.tr("st_eb_changed", old=old_eb, new=new_eb))
        if step.applicability == "needs-consent":
            paras.append(self.tr("st_consent", flag=f"--skip {step.rule}"))
        for note in step.notes:
            paras.append(self.tr("st_notes", note=note))
        bars = (self.bar(prev_est, "bar_before"), self.bar(step.estimate, "bar_after"))
        return Page(f"step-{i + 1}", self.tr("t_step", i=i + 1, n=len(steps), title=title), tuple(paras), bars)

    def _file_of(self, step: Step) -> str:
        s = self.s
        assert s is not None
        for ch in step.changes:
            src = s.sources.get(ch.field)
            if src is not None and src.file:
                return os.path.basename(src.file)
        if any(ch.field == "zero_stage" for ch in step.changes) and s.deepspeed_file:
            return os.path.basename(s.deepspeed_file)
        return os.path.basename(s.config_file) if s.config_file and step.changes else ""

    def _change_line(self, ch: Change) -> str:
        s = self.s
        assert s is not None
        label = pick(_FIELD_LABELS.get(ch.field, {"en": ch.field}), self.lang)
        src = s.sources.get(ch.field)
        key = src.key if src is not None and src.key else (_LF_KEYS.get(ch.field) if s.framework == "llamafactory" else None)
        old, new = _value_text(ch.field, ch.before, self.lang), _value_text(ch.field, ch.after, self.lang)
        if key:
            return self.tr("st_change", label=label, key=key, old=old, new=new)
        return self.tr("st_change_nokey", label=label, old=old, new=new)

    def _teach(self, ch: Change, before: TrainingSetup, after: TrainingSetup) -> str:
        lang, f = self.lang, ch.field
        shape = self.r.shape
        vals: dict[str, Any] = {"old": _value_text(f, ch.before, lang), "new": _value_text(f, ch.after, lang)}
        vals.update(ot=before.micro_batch * before.seq_len, nt=after.micro_batch * after.seq_len,
                    eb=after.effective_batch, seq=after.seq_len, tokens=after.micro_batch * after.seq_len,
                    layers=shape.num_layers if shape else "?", vocab=shape.vocab_size if shape else "?",
                    n=max(1, after.n_gpus), rank=after.lora_rank, params=_params_text(self.params_total(), lang))
        if f == "micro_batch" and ch.before != ch.after:
            key = "micro_batch"
        elif f == "grad_accum":
            key = "grad_accum"
        elif f == "seq_len":
            key = "seq_len"
        elif f == "method":
            key = {"lora": "lora", "qlora": "qlora", "freeze": "freeze"}.get(str(ch.after), "")
            if key == "qlora":
                bits = after.quant_bits or 4
                vals.update(bits=bits, bytes=f"{bits / 8:.2g}")
        elif f in ("precision", "pure_bf16", "optimizer", "fused_ce", "offload_optimizer", "offload_params",
                   "lora_rank", "eval_batch", "eval_accum"):
            key = f
        elif f == "grad_ckpt" and ch.after:
            key = "grad_ckpt"
        elif f == "attention" and ch.after in ("sdpa", "fa2"):
            key = "attention"
            vals["new"] = {"sdpa": "SDPA", "fa2": "FlashAttention-2"}[str(ch.after)]
        elif f == "zero_stage" and int(ch.after or 0) in _ZERO_WHAT:
            key = "zero_stage"
            vals["what"] = pick(_ZERO_WHAT[int(ch.after)], lang)
        elif f == "packing":
            key = "packing"
            vals["state"] = ("关闭" if not ch.after else "开启") if lang == "zh" else ("off" if not ch.after else "on")
        else:
            return ""
        if not key:
            return ""
        return pick(_CHANGE_TEACH[key], lang).format(**vals)

    # ---------------------------------------------------------------- 6. apply, 7. watch

    def command(self, extra: str) -> str:
        files = " ".join(_shell_quote(f) for f in self.r.inputs) or "run.log config.yaml"
        flags = []
        n = self.a.n_gpus
        if n is not None and (n > 1 or (self.s is not None and self.s.n_gpus != n)):
            flags.append(f"--gpus {n}")
        for sk in self.r.plan.skipped:
            if sk.reason in ANSWER_SKIP_REASONS.values():
                flags.append(f"--skip {sk.rule}")
        return " ".join(["oomdoctor", files, *flags, extra])

    def apply_page(self) -> Page:
        r = self.r
        paras = [self.tr("ap_lead")]
        code: list[str] = []
        if r.edits or r.patch:
            paras.append(self.tr("ap_export"))
            code += [self.command("--export plan.diff"), "git apply plan.diff"]
        else:
            paras.append(self.tr("ap_nofile"))
        if r.env:
            paras.append(self.tr("ap_env", names=", ".join(r.env)))
            code += [export_line(k, v) for k, v in r.env.items()]
        if r.edits or r.patch:
            paras.append(self.tr("ap_write", cmd=self.command("--write fixed/")))
        for note in r.notes:
            paras.append(self.tr("ap_notes", note=note))
        if r.patch:
            paras.append(self.tr("ap_diff"))
            code += ["", "# plan.diff", *r.patch.rstrip("\n").splitlines()]
        return Page("apply", self.tr("t_apply"), tuple(paras), (), "\n".join(code))

    def watch_page(self) -> Page:
        r, s, est = self.r, self.s, self.est
        assert s is not None and est is not None
        plan = r.plan
        final_setup = plan.final_setup(s)
        final_est = plan.final_estimate(est)
        paras: list[str] = []
        if not (est.fits or plan.fits):
            paras.append(self.tr("wa_nofit"))
        paras.append(self.tr("wa_peak", peak=_g(final_est.peak_gib), alloc=_g(final_est.allocated_gib)))
        ev = r.crash.primary if r.crash else None
        if ev is not None and ev.phase == "optimizer" and final_setup.method == "full":
            paras.append(self.tr("wa_first_step"))
        else:
            paras.append(self.tr("wa_first_step_generic"))
        if final_setup.seq_len < s.seq_len:
            paras.append(self.tr("wa_seq", seq=final_setup.seq_len))
        if final_setup.effective_batch != s.effective_batch:
            paras.append(self.tr("wa_lr", old=s.effective_batch, new=final_setup.effective_batch))
        if s.method == "full" and final_setup.method in ("lora", "qlora"):
            paras.append(self.tr("wa_lora"))
        if any("throughput" in st.costs for st in plan.steps):
            paras.append(self.tr("wa_speed"))
        if final_setup.do_eval:
            paras.append(self.tr("wa_eval", eb=final_setup.eval_batch))
        if final_est.host_ram_gib > 0:
            paras.append(self.tr("wa_host", host=_g(final_est.host_ram_gib)))
        paras.append(self.tr("wa_again"))
        bars = (self.bar(final_est, "bar_final" if plan.steps else "bar_now"),)
        return Page("watch", self.tr("t_watch"), tuple(paras), bars)

    def no_config_page(self) -> Page:
        log = self.r.crash.file if self.r.crash else "run.log"
        return Page("noconfig", self.tr("t_noconfig"), (self.tr("nc_lead"), self.tr("nc_how")),
                    code=f"oomdoctor {_shell_quote(log)} config.yaml --walkthrough")


def _shell_quote(text: str) -> str:
    from oomdoctor.shellsafe import quote

    return quote(text)
