"""`oomdoctor run [options] -- <command ...>`: launch a training run, watch it, diagnose it the moment it ends.

    oomdoctor run -- llamafactory-cli train qwen_lora.yaml
    oomdoctor run --gpus 4 -- torchrun --nproc_per_node 4 train.py --deepspeed ds.json ...

Order of events: the command line is recorded (`<logs>/<time>-<name>.command.sh`) and read with the launch-command
reader (configs/shell.py, configs/entrypoints.py) to find the config (`--config` overrides); a one-line
pre-flight on stderr (the estimate against the GPUs NVML sees, other processes, what earlier runs measured
here); `--check` stops there. The command runs in its own process group (run/runner.py), its output unchanged
on our stdout/stderr and in `<time>-<name>.log`; an NVML sampler (run/sampler.py) writes
`<time>-<name>.timeline.jsonl`. When the command fails, the usual report, built from the captured log and the
config, follows on stderr with what the watcher saw; when it succeeds, its measured peak goes to the history
(run/history.py). oomdoctor exits with the command's exit code (128 + signal when a signal ended it).

Everything oomdoctor itself says goes to stderr: stdout carries the command's own output, byte for byte.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import re
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from typing import IO, Any

from oomdoctor.errors import ExitCode, InputError
from oomdoctor.facts import GIB, Msg, msg
from oomdoctor.lazyre import lazy_re
from oomdoctor.words import say

DEFAULT_LOGS = "oomdoctor-runs"
_STOP_SIGNALS = (1, 2, 15)      # SIGHUP, SIGINT, SIGTERM: how a run is stopped on purpose
_NAME_CHARS = lazy_re(r"[^A-Za-z0-9._-]+")


def _err(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def _say(lang: str, key: str, **values: Any) -> None:
    _err(say("cli.progress", lang, message=msg(key, **values)))


def split_command(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """(options, command): the words before the first `--` and after it."""
    argv = list(argv)
    if "--" not in argv:
        raise InputError(msg("watch.no_command"))
    i = argv.index("--")
    command = argv[i + 1:]
    if not command:
        raise InputError(msg("watch.no_command"))
    return argv[:i], command


def build_parser(lang: str, kit: Any) -> argparse.ArgumentParser:
    """`kit`: the CLI's (parser class, help formatter, argparse-language context) — handed down by the CLI,
    which this package sits below (tests/test_layers.py), so both speak argparse the same way."""
    _Parser, _Formatter, argparse_speaks = kit

    def h(key: str) -> str:
        return say(f"watch.help.{key}", lang)

    with argparse_speaks(lang):
        p = _Parser(prog="oomdoctor run", usage=say("watch.usage", lang), description=say("watch.description", lang),
                    formatter_class=_Formatter, lang=lang)
    p.add_argument("--config", metavar="FILE", help=h("config"))
    p.add_argument("--logs", metavar="DIR", default=DEFAULT_LOGS, help=h("logs"))
    p.add_argument("--check", action="store_true", help=h("check"))
    p.add_argument("--interval", metavar="S", default="0.5", help=h("interval"))
    p.add_argument("--retry", action="store_true", help=h("retry"))
    p.add_argument("--yes", action="store_true", help=h("yes"))
    p.add_argument("--markdown", action="store_true", help=h("markdown"))
    p.add_argument("--tui", action="store_true", help=h("tui"))
    p.add_argument("--no-history", action="store_true", help=h("no_history"))
    p.add_argument("--gpu", help=say("cli.help.gpu", lang))
    p.add_argument("--gpus", metavar="N", help=say("cli.help.gpus", lang))
    p.add_argument("--model", help=say("cli.help.model", lang))
    p.add_argument("--headroom", default="0.10", metavar="FRACTION", help=say("cli.help.headroom", lang))
    p.add_argument("--lang", choices=("en", "zh"), help=say("cli.help.lang", lang))
    return p


def _numbers(args: argparse.Namespace) -> None:
    from oomdoctor.values import BadValue, as_float, as_int

    try:
        args.interval = as_float(args.interval, "--interval", minimum=0.05, maximum=3600.0)
        args.headroom = as_float(args.headroom, "--headroom", minimum=0.0, maximum=0.89)
        if args.gpus is not None:
            args.gpus = as_int(args.gpus, "--gpus", minimum=1, maximum=4096)
    except BadValue as err:
        raise InputError(err.message) from None


def run_name(command: Sequence[str], config: str | None) -> str:
    """A file-name-safe name for the run: the config's stem, else the script's, else the program's."""
    pick = config
    if pick is None:
        pick = next((w for w in command[1:] if w.lower().endswith((".py", ".sh", ".yaml", ".yml", ".json"))),
                    command[0])
    stem = os.path.splitext(os.path.basename(pick.rstrip("/")))[0] or "run"
    return _NAME_CHARS.sub("_", stem)[:60] or "run"


def _paths(logs: str, name: str) -> str:
    """`<logs>/<time>-<name>`, unique (a second run in the same second gets -2, -3 ...)."""
    try:
        os.makedirs(logs, exist_ok=True)
    except OSError as err:
        raise InputError(msg("watch.logs_unwritable", reason=err.strerror or str(err)), logs) from None
    base = os.path.join(logs, time.strftime("%Y%m%d-%H%M%S") + "-" + name)
    stem, n = base, 1
    while os.path.exists(stem + ".log"):
        n += 1
        stem = f"{base}-{n}"
    return stem


def _options(args: argparse.Namespace, files: Sequence[str]) -> Any:
    from oomdoctor.pipeline import Options

    return Options(files=tuple(files), gpu=args.gpu, gpus=args.gpus, model=args.model, headroom=args.headroom,
                   cwd=os.getcwd())


def _session(args: argparse.Namespace, files: Sequence[str], lang: str) -> Any:
    from oomdoctor.session import open_session

    return open_session(_options(args, files), lang)


def main(argv: Sequence[str], lang: str, kit: Any) -> int:
    """`oomdoctor run ...` (argv without the word `run`); `kit` as for build_parser."""
    head = list(argv[:list(argv).index("--")] if "--" in argv else argv)
    if "-h" in head or "--help" in head:
        build_parser(lang, kit).parse_args(["--help"])
    opts, command = split_command(argv)
    args = build_parser(lang, kit).parse_args(opts)
    _numbers(args)
    return watch(command, args, lang)


def watch(command: list[str], args: argparse.Namespace, lang: str, *, retried: bool = False,
          env: dict | None = None) -> int:
    if args.check:
        return _check(command, args, lang)
    stem = _paths(args.logs, run_name(command, args.config))
    script = stem + ".command.sh"
    with open(script, "w", encoding="utf-8") as fh:
        fh.write(shlex.join(command) + "\n")
    config_files = [args.config] if args.config else [script]
    report = _preflight_or_none(args, config_files, lang)

    from oomdoctor.run import sampler

    nvml, watcher, timeline = _sampler(stem, args, lang)

    def started(pid: int) -> None:
        if watcher is not None:
            watcher.pids = sampler.RunPids(pid)
            watcher.start()
        # what the diagnosis needs, imported while the run runs, so the report follows its exit at once
        import threading

        threading.Thread(target=_warm_up, args=(args.markdown,), name="oomdoctor-warm-up", daemon=True).start()

    log_path = stem + ".log"
    _say(lang, "watch.launching", log=log_path)
    try:
        outcome = _launch(command, log_path, started, env)
    finally:
        if watcher is not None:
            watcher.stop()
            with contextlib.suppress(Exception):
                nvml.nvmlShutdown()
        if timeline is not None:
            timeline.close()
    seconds = outcome.ended - outcome.started
    facts = _watch_facts(watcher)
    if outcome.exit_code == 0:
        _say(lang, "watch.finished", seconds=seconds)
        for line in _watch_lines(facts, lang):
            _err(line)
        if watcher is not None and report is not None and not args.no_history and facts:
            _remember(report, facts, command, log_path, lang)
        return outcome.exit_code
    stopped_by = outcome.forwarded if outcome.forwarded is not None else (
        outcome.signal if outcome.signal in _STOP_SIGNALS else None)
    if stopped_by is not None:
        # the user stopped it (a signal to oomdoctor, or Ctrl-C typed into the run's terminal): not a crash
        _say(lang, "watch.stopped", signal=_signame(stopped_by), status=outcome.exit_code)
        return outcome.exit_code
    _say(lang, "watch.failed", status=outcome.exit_code, seconds=seconds)
    try:
        crash_report = _diagnose(args, log_path, report, config_files, facts, stem, lang)
    except (Exception, KeyboardInterrupt) as err:    # the command's exit code comes back whatever happens here
        if os.environ.get("OOMDOCTOR_DEBUG"):
            raise
        _say(lang, "watch.internal", stage=say("watch.stage.diagnosis", lang), error=f"{type(err).__name__}: {err}")
        crash_report = None
    if outcome.signal == 9:
        _say(lang, "watch.killed")
    if timeline is not None:
        _say(lang, "watch.timeline_file", path=stem + ".timeline.jsonl")
    if args.retry and not retried and crash_report is not None:
        again = _retry(command, args, crash_report, lang)
        return outcome.exit_code if again is None else again
    return outcome.exit_code


def _launch(command: list[str], log_path: str, started: Callable[[int], None], env: dict | None) -> Any:
    """Run the command to its end, its output copied to log_path; an InputError when it cannot be started (and
    no log is left)."""
    from oomdoctor.run import runner

    with open(log_path, "wb") as log:
        try:
            return runner.run(command, log, on_start=started, env=env)
        except (FileNotFoundError, PermissionError) as err:
            log.close()
            with contextlib.suppress(OSError):
                os.unlink(log_path)
            raise InputError(msg("watch.cannot_start", command=command[0], reason=err.strerror or str(err))) \
                from None


def _preflight_or_none(args: argparse.Namespace, config_files: list[str], lang: str) -> Any:
    """The pre-flight report, or None after saying what of ours went wrong: a bug of ours must not stand
    between the user and the training run."""
    try:
        report, _problem = _preflight(args, config_files, lang)
    except Exception as err:
        if os.environ.get("OOMDOCTOR_DEBUG"):
            raise
        _say(lang, "watch.internal", stage=say("watch.stage.preflight", lang), error=f"{type(err).__name__}: {err}")
        return None
    return report


def _sampler(stem: str, args: argparse.Namespace, lang: str) -> tuple[Any, Any, IO[str] | None]:
    """(NVML, the Sampler writing stem.timeline.jsonl, that file), or Nones after saying why there is no timeline."""
    from oomdoctor.run import sampler

    nvml, why = sampler.load_nvml()
    if nvml is None:
        _say(lang, "watch.no_timeline", why=why)
        return None, None, None
    timeline = open(stem + ".timeline.jsonl", "w", encoding="utf-8")
    return nvml, sampler.Sampler(nvml, interval_s=args.interval, timeline=timeline), timeline


def _remember(report: Any, facts: dict, command: list[str], log_path: str, lang: str) -> None:
    """A run that finished goes into the history: its peak beside the estimate."""
    from oomdoctor.run import history

    peak = max(g["peak_gib"] for g in facts["gpus"])
    torch_peak = torch_reported_peak(log_path)
    try:
        path = history.add(_history_entry(report, peak, facts, torch_peak, command, log_path))
    except OSError as err:
        _say(lang, "watch.history_unwritable", path=history.history_path(), reason=err.strerror or str(err))
    else:
        _say(lang, "watch.history_written", gib=peak, path=path)


def _check(command: list[str], args: argparse.Namespace, lang: str) -> int:
    """--check: the pre-flight line and the report's exit code; nothing launched, no runs folder made (the
    command line is read from a temporary file, removed before returning)."""
    import tempfile

    from oomdoctor.errors import exit_code

    if args.config:
        files = [args.config]
        report, problem = _preflight(args, files, lang)
    else:
        fd, script = tempfile.mkstemp(prefix="oomdoctor-command-", suffix=".sh")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(shlex.join(command) + "\n")
            report, problem = _preflight(args, [script], lang)
        finally:
            os.unlink(script)
    if report is None:
        raise problem if problem is not None else InputError(msg("watch.no_config"))
    return exit_code(report)


def _warm_up(markdown: bool) -> None:
    import importlib

    names = ["oomdoctor.session", "oomdoctor.crashlog", "oomdoctor.views.markdown" if markdown else "rich.console",
             "oomdoctor.views.plain"]
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:       # the diagnosis will say what is wrong, in its own words
            return


def _signame(signum: int) -> str:
    import signal

    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)


def _preflight(args: argparse.Namespace, files: Sequence[str], lang: str) -> tuple[Any, InputError | None]:
    """The report of the config alone, and its one line on stderr; (None, why) when there is no estimate."""
    from oomdoctor.run import history

    try:
        session = _session(args, files, lang)
    except InputError as err:
        _say(lang, "watch.preflight_none", why=err.render(lang))
        return None, err
    report = session.report
    est, hw = report.estimate, report.hardware
    if est is None or hw is None:
        _say(lang, "watch.preflight_none", why=say("watch.no_config", lang))
        return report, None
    plan = report.plan
    if est.fits:
        verdict: Msg = msg("watch.verdict_fits", spare=est.capacity_gib * (1 - est.headroom) - est.peak_gib)
    elif plan.fits and plan.steps:
        verdict = msg("watch.verdict_plan", steps=len(plan.steps), gib=plan.final_estimate(est).peak_gib)
    else:
        verdict = msg("watch.verdict_no_fit")
    others = msg("watch.others", gib=hw.other_procs_gib) if hw.other_procs_gib >= 0.01 else msg("watch.no_others")
    _say(lang, "watch.preflight", peak=est.peak_gib, n=hw.n_gpus, gpu=hw.gpu, cap=hw.gpu_gib, source=hw.source,
         others=others, verdict=verdict)
    seen = history.measured(history.model_key(report), history.gpu_key(report))
    if seen is not None:
        _say(lang, "watch.measured_here", gib=seen.last_gib, peak=seen.peak_gib, runs=seen.runs)
    return report, None


def _watch_facts(watcher: Any) -> dict | None:
    """What the watcher saw, as plain values (for the report lines, the markdown and the history)."""
    from oomdoctor.run.sampler import growth_mib_per_min

    if watcher is None or not watcher.samples:
        return None
    gpus = []
    for g in watcher.gpus:
        series = [s.run_mib[g.index] if s.run_mib[g.index] is not None else s.used_mib[g.index]
                  for s in watcher.ring]
        gpus.append({"index": g.index, "name": g.name, "total_gib": g.total_mib / 1024,
                     "peak_gib": g.peak_run_mib / 1024, "peak_at_s": g.peak_at_s,
                     "peak_used_gib": g.peak_used_mib / 1024, "other_gib": g.other_peak_mib / 1024,
                     "near_limit_at_s": g.near_limit_at_s, "growth_mib_per_min": growth_mib_per_min(g.run_series),
                     "series_gib": [v / 1024 for v in series]})
    near = [g for g in gpus if g["near_limit_at_s"] is not None]
    first = min(near, key=lambda g: g["near_limit_at_s"]) if near else None
    return {"gpus": gpus, "samples": watcher.samples, "interval_s": watcher.interval_s,
            "first_near_limit": None if first is None else first["index"]}


def _watch_lines(facts: dict | None, lang: str) -> list[str]:
    from oomdoctor.views.sparkline import sparkline

    if not facts:
        return []
    lines = [say("watch.timeline_heading", lang, samples=facts["samples"], interval=facts["interval_s"])]
    for g in facts["gpus"]:
        lines.append("  " + say("watch.gpu_line", lang, index=g["index"], name=g["name"], peak=g["peak_gib"],
                                at=g["peak_at_s"], total=g["total_gib"]))
        lines.append("    " + sparkline(g["series_gib"], 48, g["total_gib"]) + "  " +
                     say("watch.spark_scale", lang, total=g["total_gib"]))
        if g["other_gib"] >= 0.01:
            lines.append("    " + say("watch.other_line", lang, gib=g["other_gib"]))
        if g["growth_mib_per_min"] is not None and abs(g["growth_mib_per_min"]) >= 1.0:
            lines.append("    " + say("watch.growth_line", lang, rate=g["growth_mib_per_min"]))
    if facts["first_near_limit"] is not None:
        g = facts["gpus"][facts["first_near_limit"]]
        lines.append("  " + say("watch.first_limit", lang, index=g["index"], at=g["near_limit_at_s"]))
    return lines


# compiled on its first use, by re's own cache: only `oomdoctor run` reads a peak (the plain report never does)
_TORCH_PEAK = rb"max[_ ]memory[_ ](?:reserved|allocated)[^0-9\n]{0,40}([0-9]+(?:\.[0-9]+)?)\s*(GiB|GB|MiB|MB)"


def torch_reported_peak(log_path: str) -> float | None:
    """PyTorch's own peak (GiB) when the run printed one (`max_memory_reserved: 21.4 GiB` and the like): the
    largest such figure in the last MiB of the log."""
    try:
        with open(log_path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(log_path) - (1 << 20)))
            tail = fh.read()
    except OSError:
        return None
    best = None
    for m in re.finditer(_TORCH_PEAK, tail, re.I):
        value = float(m.group(1)) / (1024 if m.group(2).upper() in (b"MIB", b"MB") else 1)
        best = value if best is None else max(best, value)
    return best


def _history_entry(report: Any, peak: float, facts: dict, torch_peak: float | None, command: Sequence[str],
                   log_path: str) -> dict:
    from oomdoctor.run import history

    s = report.setup
    return {"model": history.model_key(report), "gpu": history.gpu_key(report),
            "n_gpus": len(facts["gpus"]), "peak_gib": round(peak, 3),
            "peak_per_gpu_gib": [round(g["peak_gib"], 3) for g in facts["gpus"]],
            "torch_peak_gib": torch_peak,
            "estimate_peak_gib": round(report.estimate.peak_gib, 3) if report.estimate is not None else None,
            "method": s.method if s else None, "micro_batch": s.micro_batch if s else None,
            "seq_len": s.seq_len if s else None, "framework": s.framework if s else None,
            "command": shlex.join(command), "log": os.path.abspath(log_path)}


def _diagnose(args: argparse.Namespace, log_path: str, preflight: Any, config_files: Sequence[str],
              facts: dict | None, stem: str, lang: str) -> Any:
    """The usual report from the captured log and the config, then the watcher's lines; on stderr."""
    try:
        session = _session(args, [log_path] + list(config_files), lang)
    except InputError:
        try:
            session = _session(args, [log_path], lang)
        except InputError as err:
            _say(lang, "watch.no_diagnosis", why=err.render(lang))
            return None
    report = session.report
    if args.markdown:
        from oomdoctor.views.markdown import render

        text = render(report, lang, watch=facts)
        with open(stem + ".md", "w", encoding="utf-8") as fh:
            fh.write(text)
        _err(text)
        _say(lang, "watch.markdown_written", path=stem + ".md")
    elif args.tui and facts and sys.stdin.isatty() and sys.stdout.isatty():
        from oomdoctor.tui.timeline import run_with_timeline  # the only place textual gets imported

        run_with_timeline(session, facts)
    else:
        from oomdoctor.views.plain import print_report

        sys.stdout.flush()
        with contextlib.redirect_stdout(sys.stderr):
            print_report(report, lang=lang)
        sys.stderr.flush()
        for line in _watch_lines(facts, lang):
            _err(line)
    return report


def _retry(command: list[str], args: argparse.Namespace, report: Any, lang: str) -> int | None:
    """Apply the plan's patch and environment (after a yes, or --yes) and launch once more, keeping backups;
    None when there is nothing to apply or the user says no."""
    if not report.edits and not report.env:
        _say(lang, "watch.retry_nothing")
        return None
    if not args.yes:
        if not sys.stdin.isatty():
            _say(lang, "watch.retry_needs_yes")
            return None
        answer = input(say("cli.progress", lang, message=msg(
            "watch.retry_ask", files=len({e.file for e in report.edits}),
            env=" ".join(f"{k}={v}" for k, v in report.env.items()) or "-"))).strip().lower()
        if answer not in ("y", "yes", "是"):
            _say(lang, "watch.retry_declined")
            return None
    if report.edits:
        from oomdoctor.patch.deliver import deliver

        deliver(report, _options(args, report.inputs), export=None, write=None, apply=True, yes=True, lang=lang)
        script = next((f for f in report.inputs if f.endswith(".command.sh")), None)
        if script is not None and any(os.path.abspath(e.file) == os.path.abspath(script) for e in report.edits):
            with open(script, encoding="utf-8") as fh:       # the plan changed the command's own flags
                command = shlex.split(fh.read())
    env = {**os.environ, **report.env} if report.env else None
    _say(lang, "watch.retrying", command=shlex.join(command))
    return watch(command, args, lang, retried=True, env=env)


def history_main(argv: Sequence[str], lang: str, kit: Any) -> int:
    """`oomdoctor history [--clear] [--json]`; `kit` as for build_parser."""
    import json

    from oomdoctor.run import history

    _Parser, _Formatter, argparse_speaks = kit
    with argparse_speaks(lang):
        p = _Parser(prog="oomdoctor history", description=say("watch.history_description", lang),
                    formatter_class=_Formatter, lang=lang)
    p.add_argument("--clear", action="store_true", help=say("watch.help.history_clear", lang))
    p.add_argument("--json", action="store_true", help=say("cli.help.json", lang))
    p.add_argument("--lang", choices=("en", "zh"), help=say("cli.help.lang", lang))
    args = p.parse_args(list(argv))
    if args.clear:
        n = history.clear()
        _err(say("cli.progress", lang, message=msg("watch.history_cleared", n=n, path=history.history_path())))
        return ExitCode.FITS
    items = history.entries()
    if args.json:
        sys.stdout.write(json.dumps({"path": history.history_path(), "runs": items}, ensure_ascii=False, indent=2)
                         + "\n")
        return ExitCode.FITS
    if not items:
        sys.stdout.write(say("watch.history_empty", lang, path=history.history_path()) + "\n")
        return ExitCode.FITS
    sys.stdout.write(say("watch.history_heading", lang, n=len(items), path=history.history_path()) + "\n")
    for e in items:
        sys.stdout.write("  " + say("watch.history_row", lang, time=str(e.get("time", "?")), model=str(e.get("model")),
                                    gpu=str(e.get("gpu")), n=int(e.get("n_gpus") or 1), gib=float(e["peak_gib"]),
                                    batch=str(e.get("micro_batch")), seq=str(e.get("seq_len"))) + "\n")
    return ExitCode.FITS


__all__ = ["main", "history_main", "watch", "split_command", "run_name", "DEFAULT_LOGS", "GIB"]
