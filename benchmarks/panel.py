"""Score oomdoctor on the panel of real OOM threads in tests/data/plans/.

    python benchmarks/panel.py                  # score every case with this checkout
    python benchmarks/panel.py --code DIR       # score with another checkout's oomdoctor (first sight)
    python benchmarks/panel.py --only ID ...    # some cases only

Each case folder holds what a user of that thread would give oomdoctor (a crash-log excerpt and the config
files) and `case.yaml`: the thread's URL, the GPU and GPU count, and the fix that made the run work in the
thread, as `fix: {kind: ...}` (or `{kinds: [...]}` when it took several). A case passes when

- the crash is not answered "fits as is" (exit 0), and
- for a fix of the config: the plan fits (exit 1) with at least one step, and none of its steps costs more than
  the fix that worked,
  by the remedy cost order of docs/reference/remedy-costs.md (section 3.3), or it answers exit 3 and names
  the fix among the steps that need a yes;
- for `kind: beyond_config` (the config was not the cause): the JSON says `cause: beyond_config`.

What a plan holds is read from the fields its steps change (and the environment they set), not from rule ids,
so a planner that finds other steps is scored by what they do.

Each case also records its first sight: `first_sight: {result: PASS|FAIL, detail: ...}`, the result of the code
before anything was changed for that case (`--code` on an untouched checkout). The totals print both.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
PANEL = ROOT / "tests" / "data" / "plans"

# The cost tiers of docs/reference/remedy-costs.md section 3.3 (cheapest first). One tier for each remedy kind.
#   1 free and exact, config only; 2 exact, a new dependency; 3 exact, 1.0-1.3x time;
#   4 exact, 1.3-2.5x time and host RAM (offload); 5 changes the experiment (needs the user's yes).
TIERS = {
    "fragmentation": 1, "eval_batch": 1, "attention": 1, "precision": 1,
    "fused_ce": 2, "packing": 2,
    "batch": 3, "checkpointing": 3, "optimizer8bit": 3, "zero3": 3, "sharding": 3,
    "offload": 4,
    "lora": 5, "qlora": 5, "length": 5, "rank": 5,
}
# Kinds that are not a remedy of the config: the finding must say so.
FINDINGS = ("beyond_config",)

# A step's kind, from the setup field it changes.
FIELD_KIND = {
    "micro_batch": "batch", "grad_accum": "batch",
    "seq_len": "length", "packing": "length",
    "method": "lora", "quant_bits": "qlora",
    "precision": "precision", "pure_bf16": "precision", "load_dtype": "precision",
    "grad_ckpt": "checkpointing",
    "attention": "attention",
    "fused_ce": "fused_ce",
    "optimizer": "optimizer8bit",
    "eval_batch": "eval_batch", "eval_accum": "eval_batch", "do_eval": "eval_batch",
    "zero_stage": "zero3", "fsdp": "zero3", "n_gpus": "zero3",
    "offload_optimizer": "offload", "offload_params": "offload",
    "lora_rank": "rank",
}


def step_kinds(step: dict[str, Any]) -> set[str]:
    """What one JSON plan step does, as remedy kinds (a step may do two things, e.g. ZeRO-3 + offload)."""
    kinds = set()
    for change in step.get("changes") or ():
        key = str(change.get("key") or "")
        kind = FIELD_KIND.get(key)
        if key == "method" and str(change.get("to")) == "qlora":
            kind = "qlora"
        if key in ("offload_optimizer", "offload_params") and not change.get("to"):
            kind = None      # giving memory back to the GPU is not an offload
        if key == "zero_stage" and (change.get("to") or 0) <= (change.get("from") or 0):
            kind = None
        if kind:
            kinds.add(kind)
    if "PYTORCH_CUDA_ALLOC_CONF" in (step.get("env") or {}):
        kinds.add("fragmentation")
    if "offload" in kinds:
        kinds.discard("zero3")    # ZeRO-2/3 set up only to carry the offload: the step costs what offload costs
    return kinds


@dataclass
class Case:
    id: str
    folder: Path
    source: str
    gpu: str | None
    gpus: int | None
    fix: tuple[str, ...]
    flags: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    first_sight: str | None = None        # PASS | FAIL: the result before anything was changed for this case
    first_detail: str = ""
    known_gap: str = ""                   # why the case still fails (`known_gap:` in case.yaml); empty when it passes


@dataclass
class Result:
    case: Case
    exit: int
    ok: bool
    why: str
    plan_kinds: tuple[str, ...] = ()
    proposed_kinds: tuple[str, ...] = ()
    cause: str | None = None
    fits: bool | None = None
    raw: dict[str, Any] = field(default_factory=dict)


def load_case(folder: Path) -> Case:
    # libyaml's safe loader where PyYAML has it (the same values; the pure-Python one is most of collecting the tests)
    meta = yaml.load((folder / "case.yaml").read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    fix = meta["fix"]
    kinds = tuple(fix.get("kinds") or (fix["kind"],))
    for k in kinds:
        if k not in TIERS and k not in FINDINGS:
            raise ValueError(f"{folder}/case.yaml: unknown fix kind {k!r}")
    files = tuple(meta.get("files") or sorted(p.name for p in folder.iterdir()
                                              if p.is_file() and p.name not in ("case.yaml", "NOTES.md")))
    first = meta.get("first_sight") or {}
    result = str(first.get("result")).upper() if first.get("result") is not None else None
    if result not in (None, "PASS", "FAIL"):
        raise ValueError(f"{folder}/case.yaml: first_sight.result is {result!r}, not PASS or FAIL")
    return Case(id=folder.name, folder=folder, source=meta["source"], gpu=meta.get("gpu"), gpus=meta.get("gpus"),
                fix=kinds, flags=tuple(str(f) for f in meta.get("flags") or ()), files=files,
                first_sight=result, first_detail=str(first.get("detail") or ""),
                known_gap=str(meta.get("known_gap") or ""))


def load_panel(panel: Path = PANEL, only: Iterable[str] = ()) -> list[Case]:
    wanted = set(only)
    return [load_case(p) for p in sorted(panel.iterdir())
            if p.is_dir() and (p / "case.yaml").exists() and (not wanted or p.name in wanted)]


def case_argv(case: Case) -> list[str]:
    """oomdoctor's arguments for `case`, run in the case's folder with COLUMNS=100 (run_case; the panel's tests run
    them through cli.main in their own process)."""
    argv = ["--json", "--lang", "en"]
    if case.gpu:
        argv += ["--gpu", str(case.gpu)]
    if case.gpus:
        argv += ["--gpus", str(case.gpus)]
    return argv + list(case.flags) + list(case.files)


def run_case(case: Case, code: Path = ROOT, timeout: float = 120.0) -> Result:
    cmd = [sys.executable, "-m", "oomdoctor", *case_argv(case)]
    env = dict(os.environ, PYTHONPATH=str(code), COLUMNS="100")
    proc = subprocess.run(cmd, cwd=case.folder, env=env, capture_output=True, text=True, timeout=timeout)
    try:
        data = json.loads(proc.stdout) if proc.stdout.strip() else {}
    except json.JSONDecodeError:
        data = {}
    return judge(case, proc.returncode, data, proc.stderr)


def judge(case: Case, code: int, data: dict[str, Any], stderr: str = "") -> Result:
    plan = data.get("plan") or {}
    kinds: set[str] = set()
    for step in plan.get("steps") or ():
        kinds |= step_kinds(step)
    proposed: set[str] = set()
    for step in plan.get("proposed") or ():
        proposed |= step_kinds(step)
    cause_field = data.get("cause")
    cause = cause_field.get("kind") if isinstance(cause_field, dict) else cause_field
    fits = plan.get("fits")
    res = dict(case=case, exit=code, plan_kinds=tuple(sorted(kinds)), proposed_kinds=tuple(sorted(proposed)),
               cause=cause, fits=fits, raw=data)
    if code == 0:
        return Result(ok=False, why="exit 0: a crash answered 'fits as is'", **res)
    if code not in (1, 3):
        return Result(ok=False, why=f"exit {code}: {stderr.strip().splitlines()[-1] if stderr.strip() else ''}",
                      **res)
    if any(k in FINDINGS for k in case.fix):
        if cause == "beyond_config":
            return Result(ok=True, why="finding: beyond the config", **res)
        return Result(ok=False, why=f"cause is {cause!r}, the thread's cause was not the config", **res)
    limit = max(TIERS[k] for k in case.fix)
    if code == 1 and not plan.get("steps"):
        # a plan without a step leaves the run as it crashed: that is "fits as is" under another exit code
        return Result(ok=False, why="exit 1 without a step: the crash is answered with the run as it stands", **res)
    if code == 1 and fits:
        costly = sorted(k for k in kinds if TIERS.get(k, 0) > limit)
        if costly:
            return Result(ok=False, why=f"costlier than the fix ({'/'.join(case.fix)}): {', '.join(costly)}", **res)
        held = [k for k in case.fix if k in kinds]
        return Result(ok=True, why="holds the fix" if held else "no costlier plan that fits", **res)
    if code == 3 and set(case.fix) & proposed:
        return Result(ok=True, why="exit 3 names the fix among the steps that need a yes", **res)
    return Result(ok=False, why=f"exit {code}, plan fits={fits}, steps {sorted(kinds)}, proposed {sorted(proposed)}",
                  **res)


def score(cases: list[Case], code: Path = ROOT, workers: int = 2) -> list[Result]:
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda c: run_case(c, code), cases))


def summary(results: list[Result]) -> dict[str, Any]:
    n = len(results)
    ok = sum(r.ok for r in results)
    zero = [r.case.id for r in results if r.exit == 0]
    seen = [r.case for r in results if r.case.first_sight]
    first_ok = sum(c.first_sight == "PASS" for c in seen)
    return {"cases": n, "passed": ok, "rate": (ok / n if n else 0.0), "exit0": zero,
            "first_sight": {"cases": len(seen), "passed": first_ok, "rate": (first_ok / len(seen) if seen else 0.0)}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--code", type=Path, default=ROOT, help="checkout whose oomdoctor runs the cases")
    ap.add_argument("--only", nargs="*", default=())
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    results = score(load_panel(only=args.only), code=args.code.resolve(), workers=args.workers)
    for r in results:
        print(f"{'PASS' if r.ok else 'FAIL'}  {r.case.id:<44} exit {r.exit}  fix {'/'.join(r.case.fix):<14} "
              f"plan {','.join(r.plan_kinds) or '-':<28} cause {r.cause or '-':<13} first {r.case.first_sight or '-':<4} "
              f"{r.why}")
    s = summary(results)
    f = s["first_sight"]
    print(f"\nfirst sight: {f['passed']}/{f['cases']} pass ({100 * f['rate']:.0f}%), recorded in each case.yaml")
    print(f"after:       {s['passed']}/{s['cases']} pass ({100 * s['rate']:.0f}%); exit 0 on a crash: {len(s['exit0'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
