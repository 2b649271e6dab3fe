"""Command line: `oomdoctor [run.log] [config.yaml] [options]`.

Decides plain / JSON / TUI *before* importing Textual; stdout carries data, stderr diagnostics.
Exit codes: 0 fits as is, 1 a plan was proposed, 2 bad input or usage, 3 nothing fits, 4 internal error.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

from oomdoctor import __version__
from oomdoctor.errors import ExitCode, InputError

DEMO_DIR = Path(__file__).parent / "data" / "demo"


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise InputError(f"{message} (see oomdoctor --help)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="oomdoctor",
        description="Explain a CUDA out-of-memory crash of an LLM fine-tuning run and plan the fix that fits.",
        epilog="Exit codes: 0 fits as is, 1 a plan was proposed, 2 bad input, 3 nothing fits.",
    )
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="crash log and/or training config, in any order; '-' reads a log from stdin")
    p.add_argument("--demo", action="store_true", help="run on the bundled LLaMA-Factory config and crash log")
    hw = p.add_argument_group("hardware and model")
    hw.add_argument("--gpu", help="GPU name or size when the log does not say (A100-80GB, H100, RTX4090, 24GiB)")
    hw.add_argument("--gpus", type=int, metavar="N", help="GPUs per node taking part in the run")
    hw.add_argument("--model", help="model hub id, catalog name, or a directory holding config.json")
    hw.add_argument("--framework-version", metavar="V", help="framework version whose defaults apply (e.g. 0.9.3)")
    plan = p.add_argument_group("plan")
    plan.add_argument("--headroom", type=float, default=0.10, metavar="FRACTION",
                      help="fraction of GPU memory kept free when judging fit (default 0.10)")
    plan.add_argument("--rules", action="append", default=[], metavar="DIR", help="add or override rules from DIR")
    plan.add_argument("--skip", action="append", default=[], metavar="RULE", help="leave this rule out of the plan")
    plan.add_argument("--list-rules", action="store_true", help="print the rules in ladder order and exit")
    plan.add_argument("--explain", metavar="RULE", help="print one rule in full and exit")
    out = p.add_argument_group("output")
    out.add_argument("--plain", action="store_true", help="plain text report, no interactive app")
    out.add_argument("--json", action="store_true", help="machine-readable report on stdout")
    out.add_argument("--lang", choices=("en", "zh"), help="language of the report (default: from LANG)")
    out.add_argument("--walkthrough", action="store_true", help="a guided, step-by-step explanation for newcomers")
    out.add_argument("--simulate", action="store_true",
                     help="trace a real training step of the model code on fake tensors (needs oomdoctor[simulate])")
    out.add_argument("--advise", action="store_true", help="which GPUs, how many, which strategy: the fit matrix")
    out.add_argument("--prices", metavar="FILE",
                     help="for the fit matrix (--advise, or m in the app): YAML of card -> price per hour")
    out.add_argument("--tokens", type=float, metavar="N",
                     help="for the fit matrix (--advise, or m in the app): tokens to train on")
    fix = p.add_argument_group("patch")
    fix.add_argument("--export", metavar="FILE", help="write the plan's unified diff to FILE ('-' for stdout)")
    fix.add_argument("--write", metavar="DIR", help="write patched copies of the touched files into DIR")
    fix.add_argument("--apply", action="store_true", help="edit the files in place after showing the diff (backup .orig)")
    fix.add_argument("--yes", action="store_true", help="with --apply: do not ask")
    p.add_argument("--version", action="version", version=f"oomdoctor {__version__}")
    return p


def use_tui(args: argparse.Namespace) -> bool:
    if args.plain or args.json or args.export == "-":
        return False
    if os.environ.get("TERM", "") in ("dumb", "unknown", ""):
        return False
    return sys.stdin.isatty() and sys.stdout.isatty()


def main(argv: Sequence[str] | None = None) -> int:
    from oomdoctor import interrupts

    handlers = interrupts.install()         # SIGTERM and SIGHUP clean up like Ctrl-C
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except InputError as err:
        print(f"oomdoctor: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("oomdoctor: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        return ExitCode.FITS
    except Exception as err:  # a bug of ours: one line, the traceback on request
        if os.environ.get("OOMDOCTOR_DEBUG"):
            raise
        print(f"oomdoctor: internal error: {type(err).__name__}: {err} "
              "(set OOMDOCTOR_DEBUG=1 for the traceback, and please report it)", file=sys.stderr)
        return ExitCode.INTERNAL
    finally:
        interrupts.restore(handlers)


def _main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    from oomdoctor.i18n import choose_language

    lang = choose_language(args.lang)
    if args.list_rules or args.explain:
        return _rules_info(args, lang)
    if not 0.0 <= args.headroom < 0.9:
        raise InputError(f"--headroom must be a fraction between 0 and 0.9, not {args.headroom}")
    if args.gpus is not None and args.gpus < 1:
        raise InputError(f"--gpus must be at least 1, not {args.gpus}")
    files = list(args.files)
    if args.demo:
        files = [str(DEMO_DIR / "train.log"), str(DEMO_DIR / "train.yaml")] + files
    if not files:
        raise InputError("give a crash log, a training config, or both (try: oomdoctor --demo)")

    from oomdoctor.pipeline import Options, build_report

    opts = Options(files=tuple(files), gpu=args.gpu, gpus=args.gpus, model=args.model, headroom=args.headroom,
                   rules_dirs=tuple(args.rules), skip=tuple(args.skip), framework_version=args.framework_version,
                   # The demo's diff names its files as they sit beside each other: a/train.yaml.
                   cwd=str(DEMO_DIR) if args.demo and not args.files else os.getcwd(),
                   prices=args.prices, tokens=args.tokens)
    if args.tokens is not None and not args.tokens > 0:
        raise InputError(f"--tokens must be a positive number of tokens, not {args.tokens:g}")
    if args.prices:
        from oomdoctor.advise.prices import load_prices

        load_prices(args.prices)        # a bad file is a one-line error now, not a message inside the app
    report = build_report(opts)

    if args.simulate:
        return _simulate(report)
    if args.advise:
        return _advise(report, args, opts)
    code = exit_code(report)
    if args.walkthrough and (not use_tui(args)):
        from oomdoctor.walkthrough import apply_answers, default_answers, render_plain

        answers = default_answers(report)
        if report.estimate is not None:
            report = apply_answers(report, opts, answers)
        sys.stdout.write(render_plain(report, answers, lang))
        return exit_code(report)
    if use_tui(args) and not (args.export or args.write or args.apply):
        from oomdoctor.tui import run as run_tui  # the only place textual gets imported

        return run_tui(report, opts, lang=lang, walkthrough=args.walkthrough)
    if args.json:
        from oomdoctor.views import jsonout

        sys.stdout.write(jsonout.render(report) + "\n")
    elif args.export != "-":
        _plain(report, show_patch=not (args.export or args.write or args.apply))
    if args.export or args.write or args.apply:
        _export(report, args, opts)
    return code


def exit_code(report) -> int:
    if report.estimate is None:
        return ExitCode.PLAN if report.crash is not None and report.crash.events else ExitCode.FITS
    if report.estimate.fits:
        return ExitCode.FITS
    return ExitCode.PLAN if report.plan.fits else ExitCode.NO_FIT


def _plain(report, *, show_patch: bool) -> None:
    from oomdoctor.views.plain import print_report

    print_report(report, show_patch=show_patch)


def _export(report, args: argparse.Namespace, opts) -> None:
    from oomdoctor.patch import apply_in_place, build_patch, shell_snippet, write_copies

    snippet = shell_snippet(report.env, report.notes)
    if not report.edits and not snippet:
        print("oomdoctor: nothing to export: the plan changes no file", file=sys.stderr)
        return
    patch = build_patch(report.edits, cwd=opts.cwd)
    if args.export == "-":
        sys.stdout.write(patch.diff)
    elif args.export:
        _write_text(args.export, patch.diff)
        print(f"oomdoctor: wrote the diff to {args.export} (apply with: git apply {args.export})", file=sys.stderr)
    if snippet:
        print(snippet, file=sys.stderr)
    if args.write:
        written = write_copies(patch, args.write)
        print(f"oomdoctor: wrote {len(written)} patched file(s) into {args.write}", file=sys.stderr)
    if args.apply:
        if not patch.diff:
            return
        if not args.yes:
            sys.stderr.write(patch.diff)
            if not sys.stdin.isatty():
                raise InputError("--apply needs a yes: run it in a terminal, or add --yes")
            answer = input("Apply these changes to your files? [y/N] ").strip().lower()
            if answer not in ("y", "yes"):
                print("oomdoctor: nothing changed", file=sys.stderr)
                return
        changed = apply_in_place(patch)
        for path in changed:
            print(f"oomdoctor: updated {path} (backup beside it)", file=sys.stderr)


def _write_text(path: str, text: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as err:
        raise InputError(f"cannot write: {err.strerror}", path) from None


def _rules_info(args: argparse.Namespace, lang: str) -> int:
    from oomdoctor.planner import explain, list_rules, load_rules

    book = load_rules(tuple(args.rules))
    if args.explain:
        sys.stdout.write(explain(book, args.explain, lang=lang) + "\n")
    else:
        sys.stdout.write(list_rules(book, lang=lang) + "\n")
    return ExitCode.FITS


def _simulate(report) -> int:
    from oomdoctor import simulate

    missing = simulate.available()
    if missing:
        raise InputError(missing)
    if report.setup is None or report.shape is None:
        raise InputError("--simulate needs a training config")

    def progress(msg: str) -> None:
        print(f"oomdoctor: {msg}", file=sys.stderr)

    setups = [("as configured", report.setup)]
    if report.plan.steps:
        setups.append(("after the plan", report.plan.steps[-1].setup))
    for label, setup in setups:
        from oomdoctor.memory import estimate

        est = estimate(setup, report.shape, report.hardware, crash=report.crash)
        result = simulate.trace_step(setup, report.shape, progress=progress)
        print(f"== {label}")
        print(simulate.format_result(result, est))
    return exit_code(report)


def _advise(report, args: argparse.Namespace, opts) -> int:
    from oomdoctor import advise

    if report.setup is None or report.shape is None:
        raise InputError("--advise needs a training config")
    matrix = advise.build(report, prices=opts.prices, tokens=opts.tokens)
    sys.stdout.write((advise.to_json(matrix) if args.json else advise.render_plain(matrix)) + "\n")
    return ExitCode.FITS
