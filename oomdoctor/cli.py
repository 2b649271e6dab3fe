"""Command line: `oomdoctor [run.log] [config.yaml] [options]`.

Decides plain / JSON / TUI *before* importing Textual; stdout carries data, stderr diagnostics.
Every word it prints is in the chosen language (`--lang`, else LC_ALL / LC_MESSAGES / LANG), argparse's
own words included. Exit codes (errors.ExitCode): 0 fits as is, 1 a plan was proposed, 2 bad input or
usage, 3 nothing fits, 4 internal error, 130 interrupted.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oomdoctor import __version__
from oomdoctor.errors import ExitCode, InputError, exit_code
from oomdoctor.facts import Msg, Report, msg
from oomdoctor.words import LANGS, env_language, say, wrap_cells

if TYPE_CHECKING:                      # the pipeline is imported only once the command line is read
    from oomdoctor.session import Session

DEMO_DIR = Path(__file__).parent / "data" / "demo"

# argparse's own words (its gettext msgids, Python 3.9-3.13) -> words/cli.py codes.
_ARGPARSE_WORDS = {
    "usage: ": "cli.argparse.usage",
    "positional arguments": "cli.argparse.positionals",
    "options": "cli.argparse.options",
    "optional arguments": "cli.argparse.options",
    "show this help message and exit": "cli.argparse.help",
    "%(heading)s:": "cli.argparse.heading",
    "%(prog)s: error: %(message)s\n": "cli.argparse.error",
    "expected one argument": "cli.argparse.expected_one",
    "expected at most one argument": "cli.argparse.expected_at_most_one",
    "expected at least one argument": "cli.argparse.expected_at_least_one",
    "ambiguous option: %(option)s could match %(matches)s": "cli.argparse.ambiguous",
    "invalid %(type)s value: %(value)r": "cli.argparse.invalid_value",
    "invalid choice: %(value)r (choose from %(choices)s)": "cli.argparse.invalid_choice",
    "not allowed with argument %s": "cli.argparse.not_allowed",
    "the following arguments are required: %s": "cli.argparse.required",
    "unrecognized arguments: %s": "cli.argparse.unrecognized",
    "ignored explicit argument %r": "cli.argparse.ignored",
    "argument %(argument_name)s: %(message)s": "cli.argparse.argument",
}


@contextlib.contextmanager
def argparse_speaks(lang: str) -> Iterator[None]:
    """argparse looks its words up through gettext at the moment it prints them: answer in `lang`."""
    if lang == "en":
        yield
        return
    saved = argparse._  # type: ignore[attr-defined]
    argparse._ = lambda text: say(_ARGPARSE_WORDS[text], lang) if text in _ARGPARSE_WORDS else text  # type: ignore
    try:
        yield
    finally:
        argparse._ = saved  # type: ignore[attr-defined]


class _Formatter(argparse.HelpFormatter):
    """argparse's layout, wrapped by terminal cells so Chinese help lines keep to the width."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return wrap_cells(" ".join(text.split()), width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        # Line by line, so the epilog's examples and the prices file keep their shape; a wrapped line
        # hangs under its own text.
        out: list[str] = []
        for line in text.split("\n"):
            lead = line[:len(line) - len(line.lstrip())]
            body = line.strip()
            hang = lead + "    " if lead else "  "
            out += [indent + ln for ln in wrap_cells(body, width - len(indent), indent=hang, initial=lead)] if body \
                else [""]
        return "\n".join(out)


class _Parser(argparse.ArgumentParser):
    """argparse in the user's language; a usage error is one line and exit 2."""

    def __init__(self, *args: Any, lang: str = "en", **kwargs: Any) -> None:
        self.lang = lang
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        if self.lang == "zh" and message.startswith("argument "):     # 3.9-3.11 print this word untranslated
            name, _, rest = message[len("argument "):].partition(": ")
            message = say("cli.argparse.argument", "zh") % {"argument_name": name, "message": rest}
        raise InputError(msg("cli.usage_error", message=message))

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        with argparse_speaks(self.lang):
            return super().parse_args(args, namespace)

    def format_help(self) -> str:
        with argparse_speaks(self.lang):
            text = super().format_help()
        if self.lang == "zh":           # before 3.13 argparse writes a section's colon itself: make it full-width
            for group in self._action_groups:
                text = text.replace(f"\n{group.title}:\n", f"\n{group.title}：\n")
        return text

    def format_usage(self) -> str:
        with argparse_speaks(self.lang):
            return super().format_usage()


def build_parser(lang: str = "en") -> argparse.ArgumentParser:
    def h(key: str) -> str:
        return say(f"cli.help.{key}", lang)

    with argparse_speaks(lang):     # the group titles and -h's help are looked up when the parser is built
        p = _Parser(prog="oomdoctor", description=say("cli.description", lang),
                    epilog=say("cli.epilog", lang) + "\n\n" + say("cli.epilog_commands", lang),
                    formatter_class=_Formatter, lang=lang)
    p.add_argument("files", nargs="*", metavar="FILE", help=h("files"))
    p.add_argument("--demo", action="store_true", help=h("demo"))
    hw = p.add_argument_group(say("cli.group.hardware", lang))
    hw.add_argument("--gpu", help=h("gpu"))
    hw.add_argument("--gpus", metavar="N", help=h("gpus"))
    hw.add_argument("--model", help=h("model"))
    hw.add_argument("--framework-version", metavar="V", help=h("framework_version"))
    plan = p.add_argument_group(say("cli.group.plan", lang))
    plan.add_argument("--headroom", default="0.10", metavar="FRACTION", help=h("headroom"))
    plan.add_argument("--rules", action="append", default=[], metavar="DIR", help=h("rules"))
    plan.add_argument("--skip", action="append", default=[], metavar="RULE", help=h("skip"))
    plan.add_argument("--accept", action="append", default=[], metavar="RULES", help=h("accept"))
    plan.add_argument("--list-rules", action="store_true", help=h("list_rules"))
    plan.add_argument("--explain", metavar="RULE", help=h("explain"))
    out = p.add_argument_group(say("cli.group.output", lang))
    out.add_argument("--plain", action="store_true", help=h("plain"))
    out.add_argument("--json", action="store_true", help=h("json"))
    out.add_argument("--markdown", action="store_true", help=h("markdown"))
    out.add_argument("--lang", choices=LANGS, help=h("lang"))
    out.add_argument("--walkthrough", action="store_true", help=h("walkthrough"))
    out.add_argument("--simulate", action="store_true", help=h("simulate"))
    out.add_argument("--verify", action="store_true", help=h("verify"))
    out.add_argument("--verify-seconds", metavar="S", help=h("verify_seconds"))
    out.add_argument("--advise", action="store_true", help=h("advise"))
    out.add_argument("--prices", metavar="FILE", help=h("prices"))
    out.add_argument("--tokens", metavar="N", help=h("tokens"))
    out.add_argument("--host-ram", metavar="GIB", help=h("host_ram"))
    fix = p.add_argument_group(say("cli.group.patch", lang))
    fix.add_argument("--export", metavar="FILE", help=h("export"))
    fix.add_argument("--write", metavar="DIR", help=h("write"))
    fix.add_argument("--apply", action="store_true", help=h("apply"))
    fix.add_argument("--yes", action="store_true", help=h("yes"))
    p.add_argument("--version", action="version", version=f"oomdoctor {__version__}", help=h("version"))
    return p


def language(argv: Sequence[str], environ: Any = None) -> str:
    """The language asked for: `--lang X` (read before argparse, so --help and usage errors speak it),
    else the locale. A value argparse will refuse counts as not given."""
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        value = arg[len("--lang="):] if arg.startswith("--lang=") else (
            argv[i + 1] if arg == "--lang" and i + 1 < len(argv) else None)
        if value is not None and value.strip().lower() in LANGS:
            return value.strip().lower()
    return env_language(environ)


def use_tui(args: argparse.Namespace) -> bool:
    if args.plain or args.json or args.markdown or args.export == "-":
        return False
    if os.environ.get("TERM", "") in ("dumb", "unknown", ""):
        return False
    return sys.stdin.isatty() and sys.stdout.isatty()


def _say_err(text: str) -> None:
    try:
        print(text, file=sys.stderr)
    except (OSError, ValueError):
        pass                        # stderr closed too: the exit code is all that is left to say it


class SafeStream:
    """stdout or stderr as every writer of a run sees it: input-derived text can never drive the
    terminal, and a stream whose encoding cannot take a character (PYTHONIOENCODING=ascii) gets an
    escape instead of an exception (words/_safe.py).

    mode "text": controls made visible; "json": controls and what the encoding lacks as \\u escapes;
    "data" (the diff of `--export -`): the bytes as they are, UTF-8 whatever the stream's encoding."""

    def __init__(self, stream: Any, mode: str) -> None:
        import codecs

        self._stream, self._mode = stream, mode
        try:
            self._encoding = codecs.lookup(getattr(stream, "encoding", None) or "utf-8").name
        except LookupError:
            self._encoding = "utf-8"

    def write(self, text: str) -> int:
        from oomdoctor.words._safe import clean, json_escape, unencodable_escaped

        if self._mode == "data":
            buffer = getattr(self._stream, "buffer", None)
            if buffer is not None:
                self._stream.flush()
                buffer.write(text.encode("utf-8", "surrogateescape"))
                return len(text)
            return self._stream.write(text)
        shown = json_escape(text) if self._mode == "json" else clean(text)
        self._stream.write(unencodable_escaped(shown, self._encoding, self._mode == "json"))
        return len(text)

    def __getattr__(self, name: str) -> Any:      # flush, fileno, isatty, encoding, buffer ...
        return getattr(self._stream, name)


_ORIGINAL: list = []                # (stdout, stderr) as main() found them


def _guard_stdout(args: argparse.Namespace) -> None:
    """stdout through SafeStream for this run's kind of output (never for the app, which draws on
    the terminal itself)."""
    if not _ORIGINAL:
        return
    mode = "data" if args.export == "-" else "json" if args.json else "text"
    sys.stdout = SafeStream(_ORIGINAL[-1][0], mode)


def _unguarded() -> None:
    """The streams as they were (before the app starts)."""
    if _ORIGINAL:
        sys.stdout, sys.stderr = _ORIGINAL[-1]


def main(argv: Sequence[str] | None = None) -> int:
    from oomdoctor import interrupts

    args = list(sys.argv[1:] if argv is None else argv)
    lang = language(args)
    _ORIGINAL.append((sys.stdout, sys.stderr))
    sys.stderr = SafeStream(sys.stderr, "text")
    sys.stdout = SafeStream(sys.stdout, "text")     # until the flags say otherwise (usage errors, --help)
    try:
        with interrupts.handled():      # SIGTERM and SIGHUP clean up and exit 130, as Ctrl-C does
            return _guarded(args, lang)
    finally:
        sys.stdout, sys.stderr = _ORIGINAL.pop()


def _guarded(args: list[str], lang: str) -> int:
    try:
        code = _main(args, lang)
        sys.stdout.flush()          # a full disk or a closed pipe shows here, not at interpreter exit
        return code
    except InputError as err:
        _say_err(say("cli.error", lang, message=err.render(lang)))
        return err.exit_code
    except KeyboardInterrupt:
        _say_err(say("cli.interrupted", lang))
        return ExitCode.INTERRUPTED
    except OSError as err:          # a closed pipe (EPIPE) too: a report nobody got is not a success
        if not _is_stdout_error(err):
            return _internal(err, lang)
        _silence_stdout()
        said = "write.stdout_failed_not_applied" if _APPLY_PENDING else "write.stdout_failed"
        _say_err(say("cli.error", lang, message=say(msg(said, reason=err.strerror or str(err)), lang)))
        return ExitCode.BAD_INPUT
    except Exception as err:  # a bug of ours: one line, the traceback on request
        return _internal(err, lang)


def _internal(err: Exception, lang: str) -> int:
    if os.environ.get("OOMDOCTOR_DEBUG"):
        raise err
    _say_err(say("cli.internal_error", lang, error=f"{type(err).__name__}: {err}"))
    return ExitCode.INTERNAL


def _is_stdout_error(err: OSError) -> bool:
    """An error writing the report itself (stdout on a full disk, a device that refuses): no file name,
    and stdout cannot take a flush. Errors of our own files carry their name and become InputErrors."""
    import errno

    if err.filename is not None:
        return False
    return err.errno in (errno.ENOSPC, errno.EIO, errno.EPIPE, errno.EDQUOT, errno.EFBIG, errno.EBADF)


def _silence_stdout() -> None:
    # What is still buffered cannot be written either; without this, Python reports it again at exit.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _numbers(args: argparse.Namespace) -> None:
    """--headroom, --gpus and --tokens as numbers, checked once here (values.py ranges)."""
    from oomdoctor.values import BadValue, as_float, as_int

    try:
        args.headroom = as_float(args.headroom, "--headroom", minimum=0.0, maximum=0.9)
        if args.gpus is not None:
            args.gpus = as_int(args.gpus, "--gpus", minimum=1, maximum=4096)
        if args.tokens is not None:
            args.tokens = as_float(args.tokens, "--tokens", minimum=1.0)
        if args.verify_seconds is not None:
            args.verify_seconds = as_float(args.verify_seconds, "--verify-seconds", minimum=1.0, maximum=86400.0)
        if args.host_ram is not None:
            args.host_ram = as_float(args.host_ram, "--host-ram", minimum=1.0, maximum=1 << 20)
    except BadValue as err:
        raise InputError(err.message) from None
    if args.headroom >= 0.9:
        raise InputError(msg("cli.headroom_range", value=args.headroom))


SUBCOMMANDS = ("run", "history")


def subcommand(argv: Sequence[str], exists: Any = os.path.exists) -> str | None:
    """`run` or `history` when the first argument names one. A file of that name in the current directory
    keeps its old meaning (`oomdoctor run` analyses a log called run), unless the words say otherwise: `run`
    with a `--` that introduces a command, `history` followed by its own options."""
    if not argv or argv[0] not in SUBCOMMANDS:
        return None
    name = argv[0]
    if not exists(name):
        return name
    if name == "run":
        return name if "--" in argv[1:] else None
    return name if len(argv) > 1 and argv[1] in ("--clear", "--json") else None


_APPLY_PENDING: list = []           # non-empty while an --apply asked for has not been carried out


def _run_command(argv: list[str], lang: str) -> int:
    from oomdoctor.run import main as run_main

    return run_main(argv, lang, (_Parser, _Formatter, argparse_speaks))


def _history_command(argv: list[str], lang: str) -> int:
    from oomdoctor.run import history_main

    return history_main(argv, lang, (_Parser, _Formatter, argparse_speaks))


# The subcommands by name: each takes the arguments after its name.
COMMANDS: dict[str, Callable[[list[str], str], int]] = {"run": _run_command, "history": _history_command}


def _main(argv: list[str], lang: str) -> int:
    sub = subcommand(argv)
    if sub is not None:
        return COMMANDS[sub](argv[1:], lang)
    args = build_parser(lang).parse_args(argv)
    del _APPLY_PENDING[:]
    if args.apply:
        _APPLY_PENDING.append(True)
    _guard_stdout(args)
    if args.json and args.export == "-":
        raise InputError(msg("write.json_and_stdout_diff"))
    if args.markdown and (args.json or args.export == "-"):
        raise InputError(msg("cli.markdown_alone"))
    if args.list_rules or args.explain:
        return _rules_info(args, lang)
    _numbers(args)
    session = _open(args, lang)
    return _mode(args)(session, args)


def _open(args: argparse.Namespace, lang: str) -> Session:
    """The session of the inputs the command line names (the demo's files first with --demo)."""
    files = list(args.files)
    if args.demo:
        files = [str(DEMO_DIR / "train.log"), str(DEMO_DIR / "train.yaml")] + files
    if not files:
        raise InputError(msg("run.no_inputs"))

    from oomdoctor.pipeline import Options
    from oomdoctor.session import open_session

    opts = Options(files=tuple(files), gpu=args.gpu, gpus=args.gpus, model=args.model, headroom=args.headroom,
                   rules_dirs=tuple(args.rules), skip=tuple(args.skip), framework_version=args.framework_version,
                   # The demo's diff names its files as they sit beside each other: a/train.yaml.
                   cwd=str(DEMO_DIR) if args.demo and not args.files else os.getcwd(),
                   prices=args.prices, tokens=args.tokens, accept=_accepted(args.accept, args.rules),
                   host_ram=args.host_ram, need_gpu=not args.advise)
    if args.prices:
        from oomdoctor.advise.prices import load_prices

        load_prices(args.prices)        # a bad file is a one-line error now, not a message inside the app
    return open_session(opts, lang)


def _delivers(args: argparse.Namespace) -> bool:
    """--export, --write or --apply: the patch leaves the program."""
    return bool(args.export or args.write or args.apply)


def _walkthrough_plain(session: Session, args: argparse.Namespace) -> int:
    from oomdoctor.guide import default_answers, options_with_answers, render_plain
    from oomdoctor.views.plain import terminal_width

    answers = default_answers(session.report, session.options)
    choices, report = options_with_answers(session, answers)
    # two columns short of the terminal, as the guide's own margin (78 in a pipe)
    sys.stdout.write(render_plain(report, answers, session.lang, width=max(40, terminal_width() - 2),
                                  rules=session.rules, options=choices))
    return exit_code(report)


def _app(session: Session, args: argparse.Namespace) -> int:
    from oomdoctor.tui import run as run_tui  # the only place textual gets imported

    _unguarded()
    return run_tui(session, walkthrough=args.walkthrough)


def _report(session: Session, args: argparse.Namespace) -> int:
    """The report as text, JSON or Markdown on stdout, then the patch delivered where asked."""
    report, lang = session.report, session.lang
    if args.json:
        from oomdoctor.views import jsonout

        sys.stdout.write(jsonout.render(report, lang) + "\n")
    elif args.markdown:
        from oomdoctor.views.markdown import render as render_markdown

        sys.stdout.write(render_markdown(report, lang))
    elif args.export != "-":
        from oomdoctor.views.plain import print_report

        print_report(report, show_patch=not _delivers(args), lang=lang)
        _measured_here(report, lang)
    if _delivers(args):
        _export(session, args)
    return exit_code(report)


Mode = Callable[["Session", argparse.Namespace], int]


def _mode(args: argparse.Namespace) -> Mode:
    """What the command line asks for, once the session is open: the first entry of this table that applies."""
    modes: tuple[tuple[bool, Mode], ...] = (
        (args.simulate, _simulate),
        (args.verify, _verify),
        (args.advise, _advise),
        (args.walkthrough and not use_tui(args), _walkthrough_plain),
        (use_tui(args) and not _delivers(args), _app),
    )
    return next((mode for asked, mode in modes if asked), _report)


def _measured_here(report: Report, lang: str) -> None:
    """What `oomdoctor run` measured on this machine for the same model and GPU, beside the estimate (stderr)."""
    from oomdoctor.run import history

    if report.estimate is None or not os.path.exists(history.history_path()):
        return
    seen = history.measured(history.model_key(report), history.gpu_key(report))
    if seen is not None:
        _say_err(say("cli.progress", lang, message=msg("watch.measured_here", gib=seen.last_gib, peak=seen.peak_gib,
                                                        runs=seen.runs)))


def _accepted(values: Sequence[str], rules_dirs: Sequence[str]) -> tuple[str, ...]:
    """--accept OOM003,OOM004 (repeatable): rule ids or slugs of the rung book, `quality` or `all`."""
    names = tuple(v.strip() for value in values for v in value.split(",") if v.strip())
    if not names:
        return ()
    from oomdoctor.planner import load_rules
    from oomdoctor.planner.walk import ACCEPT_ALL

    known = {n.lower() for r in load_rules(tuple(rules_dirs)) for n in (r.id, r.slug)} | set(ACCEPT_ALL)
    for name in names:
        if name.lower() not in known:
            raise InputError(msg("cli.accept_unknown", name=name))
    return names


def _export(session: Session, args: argparse.Namespace) -> None:
    from oomdoctor.patch.deliver import deliver

    deliver(session.report, session.options, export=args.export, write=args.write, apply=args.apply,
            yes=args.yes, lang=session.lang)
    del _APPLY_PENDING[:]


def _rules_info(args: argparse.Namespace, lang: str) -> int:
    from oomdoctor.planner import explain, list_rules, load_rules, rules_json
    from oomdoctor.planner.text import find_rule, rule_json

    book = load_rules(tuple(args.rules))
    if args.json:
        import json

        doc: Any = rule_json(find_rule(book, args.explain), lang) if args.explain else rules_json(book, lang)
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    elif args.explain:
        sys.stdout.write(explain(book, args.explain, lang) + "\n")
    else:
        sys.stdout.write(list_rules(book, lang) + "\n")
    return ExitCode.FITS


def _simulate(session: Session, args: argparse.Namespace) -> int:
    from oomdoctor import simulate

    report, lang = session.report, session.lang
    as_json = args.json
    missing = simulate.available()
    if missing:
        raise InputError(missing)
    if report.setup is None or report.shape is None or report.hardware is None:
        raise InputError(msg("cli.needs_config", flag="--simulate"))

    def progress(message: Msg) -> None:
        _say_err(say("cli.progress", lang, message=message))

    from oomdoctor.memory import estimate

    setups = [(msg("cli.simulate_configured"), report.setup)]
    if report.plan.steps:
        setups.append((msg("cli.simulate_planned"), report.plan.steps[-1].setup))
    runs = []
    for label, setup in setups:
        # the model's own figure, without the log's correction: the trace is compared with the model
        est = estimate(setup, report.shape, report.hardware, crash=report.crash)
        result = simulate.trace_step(setup, report.shape, progress=progress)
        if as_json:
            runs.append({"label": say(label, lang), "label_code": label.code, **simulate.to_dict(result, est, lang)})
        else:
            print(say("cli.simulate_label", lang, label=label))
            print(simulate.format_result(result, est, lang))
    if as_json:
        import json

        from oomdoctor import __version__

        sys.stdout.write(json.dumps({"tool": "oomdoctor", "version": __version__, "lang": lang, "simulations": runs},
                                    ensure_ascii=False, indent=2) + "\n")
    return exit_code(report)


def _verify(session: Session, args: argparse.Namespace) -> int:
    """--verify: the plan's final setup traced on fake tensors, traced versus estimated (simulate/verify.py)."""
    from oomdoctor import simulate
    from oomdoctor.simulate import verify as verifier

    report, lang = session.report, session.lang
    missing = simulate.available()
    if missing:
        raise InputError(msg("verify.missing", **dict(missing.args)))
    if report.setup is None or report.shape is None or report.hardware is None:
        raise InputError(msg("cli.needs_config", flag="--verify"))
    seconds = args.verify_seconds if args.verify_seconds is not None else verifier.DEFAULT_TIME_LIMIT_S
    result = verifier.verify(report, time_limit_s=seconds,
                             progress=lambda message: _say_err(say("cli.progress", lang, message=message)))
    if args.json:
        import json

        doc = {"tool": "oomdoctor", "version": __version__, "lang": lang,
               "verify": verifier.verification_dict(result, lang)}
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(verifier.format_verification(result, lang) + "\n")
    return exit_code(report)


def _advise(session: Session, args: argparse.Namespace) -> int:
    from oomdoctor import advise

    report, lang = session.report, session.lang
    if report.setup is None or report.shape is None:
        raise InputError(msg("cli.needs_config", flag="--advise"))
    matrix = advise.build(report, prices=session.options.prices, tokens=session.options.tokens,
                          estimator=session.estimator, correction=session.correction, rules=session.rules,
                          host_ram_gib=session.options.host_ram, accept=session.options.accept,
                          skip=session.options.skip)
    if args.json:
        sys.stdout.write(advise.to_json(matrix, lang) + "\n")
    else:
        from oomdoctor.views.plain import terminal_width

        sys.stdout.write(advise.render_plain(matrix, lang, width=terminal_width()) + "\n")
    return ExitCode.FITS
