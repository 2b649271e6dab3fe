"""What a plan costs, in one explicit model: quality, time and setup, added up in one unit.

The unit is one percent of step time. Time cost is the modelled step time of the planned setup over the
configured one (advise.timing.step_time, the same model the fit matrix times its rows with, so offload has
one speed everywhere), minus 1, in percent: a plan that makes steps faster costs less than nothing there.
Setup cost counts what the user must add before the patched run starts: a package, a new file (a DeepSpeed
JSON), a new launcher (more processes than the run had). Quality cost is the rules' own quality sizes,
weighted so that a step which changes the experiment outweighs any time and setup a plan can pile up: the
search takes one only when nothing without it fits (a yes is permission, not preference).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from oomdoctor.facts import Hardware, ModelShape, TrainingSetup
from oomdoctor.records import record

if TYPE_CHECKING:
    from oomdoctor.gpus import GpuSpec

# A quality step outweighs any pile of time and setup cost (remedy-costs.md §3.3: quality-changing remedies
# come last, after offload at 2-2.5x).
QUALITY_COST = {"small": 1000.0, "medium": 2000.0, "large": 4000.0}
# What one setup item weighs, in percent of step time: installing a package is a few minutes once; a new
# config file and a new launch command are things a user has to read and can get wrong.
SETUP_COST = {"dependency": 5.0, "file": 5.0, "launcher": 10.0}
# On top of its size, a length or rank cut costs this much times the share it takes away (18000 -> 1280 tokens
# loses 93% of each sample, 18000 -> 9216 half).
QUALITY_LOSS = 2000.0
LOSSY_FIELDS = ("seq_len", "lora_rank")


@record
class Cost:
    """A plan's cost split by kind; `total` is what the search minimises."""

    quality: float
    time_factor: float              # modelled step time after / before (1.0: unchanged; None-safe: 1.0)
    setup: tuple[tuple[str, str], ...]  # (kind, what): ("dependency", "deepspeed"), ("file", "deepspeed config")

    @property
    def time(self) -> float:
        return 100.0 * (self.time_factor - 1.0)

    @property
    def setup_cost(self) -> float:
        return sum(SETUP_COST[kind] for kind, _ in self.setup)

    @property
    def total(self) -> float:
        return self.quality + self.time + self.setup_cost

    def as_dict(self) -> dict[str, Any]:
        return {"total": round(self.total, 2), "quality": round(self.quality, 2),
                "time_factor": round(self.time_factor, 3),
                "setup": [{"kind": kind, "what": what} for kind, what in self.setup]}


def new_packages(before: TrainingSetup, after: TrainingSetup) -> list[str]:
    """Packages the change needs that a plain HF/LLaMA-Factory install lacks (views.describe.install_commands
    says the same as pip lines)."""
    out: list[str] = []
    if after.fused_ce and not before.fused_ce:
        out.append("liger-kernel")
    if ("8bit" in after.optimizer and "8bit" not in before.optimizer) or (
            after.method == "qlora" and before.method != "qlora"):
        out.append("bitsandbytes")
    if _deepspeed(after) and not _deepspeed(before):
        out.append("deepspeed")
    if after.attention == "fa2" and before.attention != "fa2":
        out.append("flash-attn")
    return out


def _deepspeed(setup: TrainingSetup) -> bool:
    return not setup.fsdp and bool(setup.zero_stage or setup.offload_optimizer or setup.offload_params)


def setup_items(before: TrainingSetup, after: TrainingSetup) -> tuple[tuple[str, str], ...]:
    items = [("dependency", p) for p in new_packages(before, after)]
    if _deepspeed(after) and (not _deepspeed(before) or after.zero_stage != before.zero_stage
                              or after.offload_params != before.offload_params
                              or after.offload_optimizer != before.offload_optimizer):
        items.append(("file", "deepspeed config"))
    if max(1, after.n_gpus) > max(1, before.n_gpus):
        items.append(("launcher", str(after.n_gpus)))
    return tuple(items)


def _spec(hw: Hardware) -> GpuSpec | None:
    """The card's catalog entry; an unnamed card is timed as the catalog card closest in memory (the ratio
    of two step times depends on the card's speed only through the offload traffic)."""
    from oomdoctor import gpus
    from oomdoctor.advise.cards import spec_of

    spec = spec_of(hw.gpu) if hw.gpu and hw.gpu not in ("", "unknown") else None
    if spec is not None and spec.bf16_tflops:
        return spec
    timed = [s for s in gpus.catalog() if s.bf16_tflops]
    return min(timed, key=lambda s: (abs(s.usable_gib - hw.gpu_gib), s.name)) if timed else None


def time_factor(before: TrainingSetup, after: TrainingSetup, shape: ModelShape, hw: Hardware) -> float:
    """Step time of `after` over `before` at the same effective batch, by advise.timing.step_time."""
    from oomdoctor.advise.timing import step_time

    spec = _spec(hw)
    a = step_time(before, shape, spec, max(1, before.n_gpus))
    b = step_time(after, shape, spec, max(1, after.n_gpus))
    if a is None or b is None or a.step_s <= 0:
        return 1.0
    # per token, so a plan that changes the tokens per step (an effective batch not kept exactly) compares fairly
    return (b.step_s / max(1.0, b.tokens_per_step)) / (a.step_s / max(1.0, a.tokens_per_step))


def _lost_share(step: Any) -> float:
    """What a length or rank cut takes away, as a share of the configured value (0 for other steps)."""
    lost = 0.0
    for c in getattr(step, "changes", ()):
        if c.field in LOSSY_FIELDS and isinstance(c.before, int) and isinstance(c.after, int) and c.before > 0:
            lost = max(lost, 1.0 - c.after / c.before)
    return lost


def quality_cost(pairs: Sequence[tuple[Any, Any]]) -> float:
    """The quality sizes of the rules of a plan's steps (a repeated rung counts each time it fires), each
    length or rank cut also weighed by how much of the configured value it takes away: of two plans that
    change the experiment, the one that keeps more of each sample wins."""
    total = 0.0
    for rule, step in pairs:
        size = sum(QUALITY_COST[c.size] for c in rule.costs if c.kind == "quality")
        if size:
            total += size + QUALITY_LOSS * _lost_share(step)
    return total


def cost_of(before: TrainingSetup, after: TrainingSetup, pairs: Sequence[tuple[Any, Any]], shape: ModelShape,
            hw: Hardware) -> Cost:
    """The cost of going from `before` to `after` through the steps of `pairs` ((rule, step) each)."""
    return Cost(quality=quality_cost(pairs), time_factor=time_factor(before, after, shape, hw),
                setup=setup_items(before, after))
