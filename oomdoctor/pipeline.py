"""The one pure pipeline: inputs -> facts -> estimate -> plan -> Report.

The CLI builds a Report here once; the plain report, the JSON, the diff and the TUI only render it.
Each stage lives in its own package and is imported lazily so that the plain path stays fast.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import field, replace

from oomdoctor.errors import InputError
from oomdoctor.facts import (
    Change,
    CrashReport,
    Estimate,
    Hardware,
    KeyEdit,
    ModelShape,
    Msg,
    Plan,
    Report,
    Step,
    Text,
    TrainingSetup,
    msg,
)
from oomdoctor.records import record


@record
class Options:
    """What the user asked for on the command line (or in the TUI)."""

    files: tuple[str, ...] = ()
    gpu: str | None = None              # --gpu: a card name or a size
    gpus: int | None = None             # --gpus: GPUs per node
    model: str | None = None            # --model: hub id, catalog name or a directory with config.json
    headroom: float = 0.10
    rules_dirs: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()          # rule ids or slugs the user switched off
    accept: tuple[str, ...] = ()        # --accept: rungs that change the experiment the user agreed to (ids, slugs, quality)
    framework_version: str | None = None
    cwd: str | None = None              # diff paths are relative to this
    prices: str | None = None           # --prices: YAML of card -> price per hour, for the fit matrix
    tokens: float | None = None         # --tokens: tokens to train on, for the fit matrix's time and cost
    host_ram: float | None = None       # --host-ram: GiB of host RAM, for the fit matrix (None: per GPU rented)
    need_gpu: bool = True               # False for --advise: a renter has no card yet, the matrix needs none


@record
class Inputs:
    """The positional files, sorted into a training config, a log and a launcher config."""

    config: str | None
    log: str | None
    launcher: str | None = None     # an accelerate / DeepSpeed file laid over the training config
    # A stream named as an input (a FIFO, `<(...)`) can be read only once, and sorting read it: a config's
    # bytes (by the name it was given) and a log's spool file travel here to their readers.
    streamed: Mapping[str, bytes] = field(default_factory=dict)
    log_spool: str | None = None


def sort_inputs(files: Sequence[str]) -> Inputs:
    """Positional files in any order: a training config is a mapping with training keys, anything else a log.

    A stream (a FIFO, `<(cat run.log)`) is read here, once and bounded: sorting must not consume what
    the reader then needs, so what it read travels in the Inputs (a config's bytes, a log's spool)."""
    import stat

    from oomdoctor.bounded import stat_input
    from oomdoctor.configs import classify
    from oomdoctor.crashlog.source import is_stream

    configs: list[str] = []
    log = None
    streamed: dict[str, bytes] = {}
    log_spool = None
    for path in files:
        if path == "-":
            kind = "log"
        elif stat.S_ISDIR(stat_input(path, "crash.input.missing").st_mode):
            raise InputError(msg("crash.input.sort_directory"), path)
        elif is_stream(path):
            kind, data, spooled = _sort_stream(path)
            if data is not None:
                streamed[path] = data
            log_spool = spooled or log_spool
        else:
            kind = classify(path)
        if kind == "config":
            if len(configs) == 2:
                raise InputError(msg("crash.input.sort_three_configs", first=configs[0], second=configs[1]), path)
            configs.append(path)
        else:
            if log is not None:
                raise InputError(msg("crash.input.sort_two_logs", first=log), path)
            log = path
    config = configs[0] if configs else None
    return Inputs(config=config, log=log, launcher=configs[1] if len(configs) == 2 else None, streamed=streamed,
                  log_spool=log_spool)


STREAM_HEAD_BYTES = 64 << 10    # what classify() looks at


def _sort_stream(path: str) -> tuple[str, bytes | None, str | None]:
    """Read a stream given as an input once: ("config", its bytes, None) or ("log", None, the spool file the
    log reader maps). Classified from its first bytes in memory; never waits for a writer that is not there."""
    from oomdoctor import bounded
    from oomdoctor.configs import classify_bytes
    from oomdoctor.crashlog.source import open_stream, spool

    with os.fdopen(open_stream(path), "rb", buffering=0) as fh:
        head = b""
        while len(head) < STREAM_HEAD_BYTES:
            chunk = fh.read(STREAM_HEAD_BYTES - len(head))
            if not chunk:
                break
            head += chunk
        if classify_bytes(path, head) == "config":
            data = head + fh.read(bounded.MAX_FILE_BYTES + 1 - len(head))
            if len(data) > bounded.MAX_FILE_BYTES:
                raise InputError(msg("input.too_big", limit_mib=bounded.MAX_FILE_BYTES >> 20), path)
            return "config", data, None
        return "log", None, spool(fh.read, path, first=head)


def read_crash(log: str | None, spooled: str | None = None) -> CrashReport | None:
    """The crash log's facts; `spooled` is the spool sort_inputs made of a log given as a stream."""
    if log is None:
        return None
    from oomdoctor.crashlog import parse_log

    return parse_log(log, spooled=spooled)


def read_setup(inputs: Inputs, crash: CrashReport | None, opts: Options) -> TrainingSetup | None:
    from oomdoctor import configs

    setup: TrainingSetup | None = None
    if inputs.config is not None:
        # The version the run really used (the log's banner) sets the defaults and dtypes.
        log_versions = dict(crash.versions or {}) if crash is not None else None
        setup = configs.load_config(inputs.config, framework_version=opts.framework_version, log_versions=log_versions,
                                    model=opts.model, data=inputs.streamed.get(inputs.config))
        if inputs.launcher is not None:
            other = configs.load_config(inputs.launcher, framework_version=opts.framework_version,
                                        data=inputs.streamed.get(inputs.launcher))
            # The one that names a model is the training config; the other decides GPUs and sharding.
            main, launcher = (setup, other) if setup.model or not other.model else (other, setup)
            setup = configs.combine(main, launcher)
        setup = configs.with_log_world_size(setup, crash)
    elif crash is not None:
        setup = configs.setup_from_log(crash)
    if setup is not None and opts.model:
        setup = replace(setup, model=opts.model)
    return setup


def read_hardware(crash: CrashReport | None, setup: TrainingSetup | None, opts: Options) -> Hardware | None:
    """GPU capacity: --gpu first (the user knows best), else the crash log, else NVML on this machine."""
    from oomdoctor import gpus

    n = opts.gpus or (setup.n_gpus if setup else None) or (crash.world_size if crash and crash.world_size else None) or 1
    hw: Hardware | None
    if opts.gpu:
        hw = gpus.hardware_from_flag(opts.gpu, n)
        if crash is not None and crash.host_ram_gib and hw.host_ram_gib is None:
            hw = replace(hw, host_ram_gib=crash.host_ram_gib)      # the host the run had, as its log shows
        return hw
    found = gpus.hardware_from_log(crash, n) if crash is not None else None
    if found is not None:
        return found
    found = gpus.detect_nvml()
    if found is not None:
        return replace(found, n_gpus=opts.gpus or found.n_gpus)
    return None


def with_gpus(setup: TrainingSetup, hw: Hardware, n: int | None) -> tuple[TrainingSetup, Hardware]:
    """`--gpus N` (and the guide's GPU answer): N GPUs per node for this run.

    When the inputs name how many GPUs the run used (a launcher, the log's ranks) and N is more, the run
    keeps its count and the N GPUs are what it may use: the plan spreads it over them (ZeRO-3) with the
    effective batch kept. Otherwise (a framework default filled the count) the run is taken to use N, as
    launching its files on N GPUs would."""
    if not n:
        return setup, hw
    if setup.stated("n_gpus") and n > setup.n_gpus:
        return setup, replace(hw, n_gpus=n)
    values: dict = {"n_gpus": n}
    total = setup.total_batch
    src = setup.sources.get("grad_accum")
    if total and setup.micro_batch and (src is None or src.key not in ("gradient_accumulation_steps",)):
        # A global batch flag (OpenRLHF --train_batch_size, Alpaca-LoRA --batch_size) is split over the processes.
        # (Megatron's over its data-parallel ranks: TrainingSetup.data_parallel.)
        values["grad_accum"] = max(1, int(total) // setup.micro_batch // replace(setup, n_gpus=n).data_parallel)
    return replace(setup, **values), replace(hw, n_gpus=n)


def resolve_shape(setup: TrainingSetup, crash: CrashReport | None) -> ModelShape:
    from oomdoctor.models import resolve_model

    if not setup.model:
        # accelerate / DeepSpeed / launcher files decide GPUs and sharding but name no model.
        raise InputError(setup.no_model or msg("run.no_model"), setup.config_file)
    hint = crash.params_total if crash else None
    shape = resolve_model(setup.model, params_hint=hint)
    if setup.method in ("lora", "qlora"):
        from oomdoctor.memory.params import unmatched_targets

        missing = unmatched_targets(setup, shape)
        if missing:
            shape = replace(shape, notes=shape.notes + (msg("model.note.lora_unmatched", targets=", ".join(missing)),))
    return shape


def plan_edits(setup: TrainingSetup, steps: Sequence[Step]) -> tuple[KeyEdit, ...]:
    """Config edits that take `setup` to the state after `steps` (net changes only)."""
    from oomdoctor.configs import edits_for
    from oomdoctor.planner.registry import value_of

    if not _patchable(setup):
        return ()
    final = steps[-1].setup if steps else setup
    net = [Change(name, value_of(setup, name), value_of(final, name))
           for name in _changed_fields(steps)
           if value_of(setup, name) != value_of(final, name)]
    return tuple(edits_for(setup, net)) if net else ()


def _patchable(setup: TrainingSetup) -> bool:
    """A setup read from a log's command line, or from a config that came through a pipe or a FIFO,
    has no file of the user's to patch (and a FIFO opened again would wait for a writer forever)."""
    return setup.config_file is not None and os.path.isfile(setup.config_file)


def _changed_fields(steps: Sequence[Step]) -> list[str]:
    seen: list[str] = []
    for step in steps:
        for change in step.changes:
            if change.field not in seen:
                seen.append(change.field)
    return seen


def render_patch(edits: Sequence[KeyEdit], cwd: str | None) -> str:
    if not edits:
        return ""
    from oomdoctor.patch import build_patch

    return build_patch(edits, cwd=cwd).diff


def collect_env(steps: Sequence[Step]) -> tuple[dict[str, str], tuple[Text, ...]]:
    env: dict[str, str] = {}
    notes: list[Text] = []
    for step in steps:
        env.update(step.env)
        notes.extend(n for n in step.notes if n not in notes)
    return env, tuple(notes)


def build_report(opts: Options) -> Report:
    """The whole pipeline in one call: read the inputs, estimate, plan (session.open_session keeps the
    rules and the calibrated estimator it builds for the app, the guide and the advisor)."""
    report = read_report(opts)
    if report.setup is None or report.shape is None:
        return report           # the crash alone, or incomplete (no model shape): nothing to estimate
    try:
        return plan_report(report, opts)
    except InputError as err:
        # a setup read from a log's command line (it has no config file): what the log named is a hint
        if report.setup.config_file is not None or _users_own(err, opts):
            raise
        return _crash_only(opts, report.crash, report.hardware, list(report.warnings), err)


def read_report(opts: Options) -> Report:
    """Inputs to facts: the crash, the setup, the card and the model shape; no estimate and no plan yet."""
    inputs = sort_inputs(opts.files)
    crash = read_crash(inputs.log, inputs.log_spool)
    setup = read_setup(inputs, crash, opts)
    warnings: list[Msg] = list(setup.warnings) if setup is not None else []
    hw = read_hardware(crash, setup, replace(opts, gpus=None))
    if setup is not None and hw is not None:
        setup, hw = with_gpus(setup, hw, opts.gpus)
    elif hw is not None and opts.gpus:
        hw = replace(hw, n_gpus=opts.gpus)
    if setup is None:
        if crash is None:
            raise InputError(msg("run.no_inputs"))
        warnings.append(msg("run.log_only"))
        return Report(inputs=tuple(opts.files), crash=crash, hardware=hw, warnings=tuple(warnings))
    # A setup read from the log's own command line names paths of another machine: they are hints,
    # so what cannot be used there is a note and the crash is still diagnosed (never exit 2).
    from_log = inputs.config is None
    if hw is None:
        if from_log:
            warnings.append(msg("crash.setup.no_gpu"))
            return Report(inputs=tuple(opts.files), crash=crash, warnings=tuple(warnings))
        if opts.need_gpu and not _incomplete_anyway(setup, crash, opts):   # --advise needs no card: a renter has none yet
            where = inputs.log or inputs.config
            raise InputError(msg("run.no_gpu"), where)
    if from_log:
        warnings.append(msg("crash.setup.from_log"))
    elif inputs.config is not None and not os.path.isfile(inputs.config):
        warnings.append(msg("crash.input.config_stream", path=inputs.config))
    return _with_shape(opts, setup, crash, hw, warnings, from_log)


def _with_shape(opts: Options, setup: TrainingSetup, crash: CrashReport | None, hw: Hardware | None,
                warnings: list[Msg], from_log: bool) -> Report:
    """The report with the model's shape; without one, the crash alone (a setup read from the log) or the
    config's facts with the estimate's want said (a config of the user's)."""
    if from_log and not opts.model:
        try:
            shape = resolve_shape(setup, crash)
        except InputError as err:
            if _users_own(err, opts):
                raise
            return _crash_only(opts, crash, hw, warnings, err)
    else:
        try:
            shape = resolve_shape(setup, crash)     # the user's own --model, or a config: its errors are theirs
        except InputError as err:
            if opts.model or not _shape_unknown(err, setup):
                raise           # a --model the user typed that is not found is theirs to fix: one line, exit 2
            # Degrade, do not stop: the crash and the config's facts are still worth showing; say what the
            # estimate needs, and the exit code says the answer is incomplete.
            if not setup.model_unresolved:
                warnings.append(_as_msg(err))      # else the config's own note says which flag is unknown
            warnings.append(msg("run.incomplete"))
            return Report(inputs=tuple(opts.files), setup=setup, hardware=hw, crash=crash, warnings=tuple(warnings))
    return Report(inputs=tuple(opts.files), setup=setup, shape=shape, hardware=hw, crash=crash,
                  warnings=tuple(warnings))


_SHAPE_UNKNOWN = ("model.unknown", "model.none_named")


def _incomplete_anyway(setup: TrainingSetup, crash, opts: Options) -> bool:
    """A card is asked for only to estimate: when the model's shape is nowhere either (exit 5), the crash
    and the config's facts are shown without one instead of stopping at the card (a bare `Killed`, an
    MPS or cuBLAS message names no capacity)."""
    if opts.model:
        return False
    try:
        resolve_shape(setup, crash)
    except InputError as err:
        return _shape_unknown(err, setup)
    return False


def _shape_unknown(err: InputError, setup: TrainingSetup) -> bool:
    """The model's shape is nowhere here: a model named but not a directory, in the catalog or the cache, or
    a script whose model flag only the running script knows (`--model_name_or_path $MODEL`, MODEL unset).
    A file that names no model at all (a launcher or DeepSpeed file, a ChatGLM YAML) is still bad input."""
    code = err.message.code if isinstance(err.message, Msg) else None
    if code in _SHAPE_UNKNOWN:
        return True
    return not setup.model and bool(setup.model_unresolved)


def _as_msg(err: InputError) -> Msg:
    return err.message if isinstance(err.message, Msg) else msg("crash.setup.unusable", reason=str(err.message))


def _crash_only(opts: Options, crash: CrashReport | None, hw: Hardware | None, warnings: list, err: InputError) -> Report:
    """The crash report alone, with why the setup a log's command line gave could not be used."""
    warnings.append(msg("crash.setup.unusable", reason=err.message))
    return Report(inputs=tuple(opts.files), crash=crash, hardware=hw, warnings=tuple(warnings))


def _users_own(err: InputError, opts: Options) -> bool:
    """An error about what the user typed (--model, --rules, --prices), not about what a log named."""
    if err.path is None:
        return False
    mine = [p for p in (opts.model, opts.prices, *opts.rules_dirs) if p]
    return any(err.path == p or str(err.path).startswith(str(p).rstrip("/") + "/") for p in mine)


def calibration(setup: TrainingSetup, shape: ModelShape, hw: Hardware, crash: CrashReport | None):
    """(estimator, correction): the memory model corrected upward by what the log measured before the
    crash (if it did), and that correction (None when the log measured nothing).

    The correction is fixed once from the configured setup, so every re-estimate of the plan carries it.
    """
    from oomdoctor import calibrate
    from oomdoctor.memory import estimate

    if crash is None:
        return estimate, None
    corr = calibrate.correction(estimate(setup, shape, hw, crash=crash), crash) if crash.memory_samples else None
    corrected = calibrate.corrected_estimator(estimate, corr) if corr is not None else estimate
    return floored(corrected, setup, shape, hw, crash), corr


def floored(estimator, setup: TrainingSetup, shape: ModelShape, hw: Hardware, crash: CrashReport | None):
    """The estimator raised to the floor the crash sets under the phase that crashed (memory/crashfloor.py):
    what the failure message printed is a measurement of this run, so every estimate of the plan carries it."""
    if crash is None or not crash.events:
        return estimator
    from oomdoctor.memory import crashfloor

    return crashfloor.floored_estimator(estimator, crashfloor.floor(estimator(setup, shape, hw, crash=crash), crash))


def measured_estimator(setup: TrainingSetup, shape: ModelShape, hw: Hardware, crash: CrashReport | None):
    """The memory model, corrected upward by what the log measured before the crash (if it did)."""
    return calibration(setup, shape, hw, crash)[0]


def plan_report(report: Report, opts: Options, *, rules=None, estimator=None) -> Report:
    """Estimate the setup of `report`, plan, and render the patch. `rules` and `estimator` are the
    session's (loaded and calibrated once per run); built here when not given."""
    from oomdoctor.planner import least_cost_plan, load_rules

    setup, shape, hw, crash = report.setup, report.shape, report.hardware, report.crash
    assert setup is not None and shape is not None and hw is not None
    if estimator is None:
        estimator = measured_estimator(setup, shape, hw, crash)
    est = estimator(setup, shape, hw, crash=crash, headroom=opts.headroom)
    if rules is None:
        rules = load_rules(opts.rules_dirs)
    kw = dict(crash=crash, rules=rules, headroom=opts.headroom, skip=opts.skip, estimator=estimator,
              accept=opts.accept)
    # One plan for every surface (app, guide, plain, JSON, --export, --write, --apply): the least-cost plan
    # the planner searches for, with the ladder as its explanation. When the estimate fits, it is the
    # ladder's evidence rungs only (fragmentation, host RAM, evaluation), as make_plan gives them.
    plan = least_cost_plan(setup, shape, hw, **kw)
    edits = plan_edits(setup, plan.steps)
    env, notes = collect_env(plan.steps)
    return replace(report, estimate=est, plan=plan, least_cost=None, edits=edits,
                   patch=render_patch(edits, opts.cwd), env=env, notes=notes,
                   finding=finding(setup, hw, crash, estimator, est))


def finding(setup: TrainingSetup, hw: Hardware, crash: CrashReport | None, estimator, est: Estimate):
    """Whether the config explains the crash (diagnosis.py), from the floor the estimator carries."""
    if crash is None or not crash.events:
        return None
    from oomdoctor.diagnosis import find

    return find(setup, est, getattr(estimator, "floor", None), crash, hw)


@record
class Selection:
    """The state after applying only some of a plan's steps (the TUI's checkboxes)."""

    setup: TrainingSetup
    estimate: Estimate
    edits: tuple[KeyEdit, ...]
    patch: str
    env: dict[str, str]
    notes: tuple[Text, ...]


def select_steps(report: Report, plan: Plan, keep: Sequence[int], cwd: str | None = None, *,
                 estimator=None) -> Selection:
    """Apply the changes of the plan's steps at indexes `keep` (in plan order) and re-estimate
    (with the session's calibrated `estimator` when given)."""

    assert report.setup is not None and report.shape is not None and report.hardware is not None
    setup = report.setup
    kept = [plan.steps[i] for i in sorted(set(keep)) if 0 <= i < len(plan.steps)]
    for step in kept:
        setup = replace(setup, **{c.field: c.after for c in step.changes})
    headroom = report.estimate.headroom if report.estimate else 0.10
    if estimator is None:
        estimator = measured_estimator(report.setup, report.shape, report.hardware, report.crash)
    est = estimator(setup, report.shape, report.hardware, crash=report.crash, headroom=headroom)
    from oomdoctor.configs import edits_for

    net = [Change(f, getattr(report.setup, f), getattr(setup, f)) for f in _changed_fields(kept)
           if getattr(report.setup, f) != getattr(setup, f)]
    edits = tuple(edits_for(report.setup, net)) if net and _patchable(report.setup) else ()
    env, notes = collect_env(kept)
    return Selection(setup=setup, estimate=est, edits=edits, patch=render_patch(edits, cwd), env=env, notes=notes)
