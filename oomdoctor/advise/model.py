"""The frozen results of the advisor: strategy rows, fit-matrix cells, and the matrix itself."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from oomdoctor.facts import Msg, Text, TrainingSetup


@dataclass(frozen=True)
class StrategyRow:
    key: str                        # single | ddp | naive_mp | zero1 | zero2 | zero3 | zero3_offload_opt | zero3_offload_all | fsdp | zero3_sp
    label: Msg                      # advise.strategy.<key>
    n_gpus: int
    setup: TrainingSetup            # the setup the row was estimated with
    peak_gib: float                 # per GPU (naive model parallel: the fullest card)
    allocated_gib: float
    components: Mapping[str, float]
    fits: bool
    host_ram_gib: float
    speed: float | None             # throughput in units of one card running the whole model alone
    speed_why: tuple[Msg, ...]      # why it is that fast or slow
    step_s: float | None = None
    hours: float | None = None
    cost: float | None = None
    notes: tuple[Msg, ...] = ()


@dataclass(frozen=True)
class PlanStep:
    rule: str
    slug: str
    title: Text
    costs: tuple[str, ...]


@dataclass(frozen=True)
class Cell:
    card: str
    n_gpus: int
    fits_as_configured: bool
    peak_gib: float                 # as configured (with the card's adaptations)
    capacity_gib: float
    steps: tuple[PlanStep, ...] = ()    # the least-cost plan when the configured run does not fit
    fits: bool = False              # as configured, or after the plan
    final_peak_gib: float = 0.0
    final_setup: TrainingSetup | None = None
    quality_steps: int = 0          # plan steps that change the experiment
    host_ram_gib: float = 0.0
    step_s: float | None = None
    hours: float | None = None
    cost: float | None = None
    cheapest: bool = False
    assumed: tuple[Msg, ...] = ()   # what this card made us assume (fp16 for bf16, SDPA for FA2)
    search: str = "least-cost"      # least-cost | ladder (the time budget ran out) | none
    host_budget_gib: float = 0.0    # host RAM the machine of this cell has (--host-ram, else per GPU rented)

    @property
    def host_ram_over(self) -> bool:
        """The plan needs more host RAM (offload) than the machine has."""
        return bool(self.fits and self.host_budget_gib and self.host_ram_gib > self.host_budget_gib)


@dataclass(frozen=True)
class Matrix:
    model: str
    setup: TrainingSetup
    hardware: str                   # the user's card
    n_gpus: int                     # the user's GPU count (strategy rows)
    strategies: tuple[StrategyRow, ...]
    cards: tuple[str, ...]
    counts: tuple[int, ...]
    cells: tuple[Cell, ...]
    tokens: float | None
    tokens_source: Msg
    mfu: float
    currency: str = ""
    priced: bool = False
    assumptions: tuple[Msg | str, ...] = ()
    calibration: Msg | None = None          # the correction's sentence when the log measured a step peak
    calibration_gib: float = 0.0
    measured: tuple[tuple[int, float], ...] = ()
    headroom: float = 0.10
    elapsed_s: float = 0.0
    extra: Mapping[str, object] = field(default_factory=dict)
    host_ram_gib: float | None = None   # --host-ram; None: HOST_RAM_PER_GPU_GIB per GPU of the cell
    specs: tuple = ()                   # the catalog's GpuSpec of every card of the matrix (memory, bandwidth, speed)

    def cell(self, card: str, n_gpus: int) -> Cell | None:
        return next((c for c in self.cells if c.card == card and c.n_gpus == n_gpus), None)

    @property
    def cheapest(self) -> Cell | None:
        return next((c for c in self.cells if c.cheapest), None)
