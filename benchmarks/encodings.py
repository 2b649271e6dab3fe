"""Every fixture log and config in UTF-16 and UTF-32 (with and without a byte-order mark), against its
UTF-8 bytes: the same exit code and the same JSON report, by file and (for logs) through a pipe.

    python benchmarks/encodings.py
    python benchmarks/encodings.py --codecs utf-16,utf-32-be --pipe

Logs: tests/data/logs/*.log and tests/data/logs/fresh/*.log (--all: every log below), each alone (`LOG --json`). Configs:
tests/data/configs/* beside the demo log (`train.log CONFIG --gpu 24GiB --json`). Each run is a forked
child of this process (tests/fuzzkit.run_case), with OOMDOCTOR_NO_TRANSFORMERS=1. A report's input
names and the patch's bytes are compared after decoding, as text: the patch of a UTF-16 config is
UTF-16 on disk, its diff the same text.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import fuzzkit  # noqa: E402  (found through the path set above)

CODECS = ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"]


def _report(case: fuzzkit.Case) -> tuple[int, object]:
    outcome = fuzzkit.run_case(case)
    try:
        return outcome.code, json.loads(outcome.out.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return outcome.code, outcome.err.decode("utf-8", "replace").strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--codecs", default=",".join(CODECS))
    parser.add_argument("--pipe", action="store_true", help="also each log through stdin")
    parser.add_argument("--all", action="store_true", help="every log under tests/data/logs (291), not two folders")
    args = parser.parse_args()
    codecs = [c for c in args.codecs.split(",") if c]
    fuzzkit.preload()
    folder = ROOT / "tests" / "data" / "logs"
    logs = sorted(folder.rglob("*.log")) if args.all else sorted(folder.glob("*.log")) + \
        sorted((folder / "fresh").glob("*.log"))
    configs = sorted(p for p in (ROOT / "tests" / "data" / "configs").iterdir() if p.is_file())
    demo_log = (ROOT / "oomdoctor" / "data" / "demo" / "train.log").read_bytes()
    side = {"ds_z2_offload.json": (ROOT / "tests" / "data" / "configs" / "ds_z2_offload.json").read_bytes()}
    started = time.monotonic()
    runs = differ = skipped = 0
    for kind, paths in (("log", logs), ("config", configs)):
        for path in paths:
            raw = path.read_bytes()
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                skipped += 1                # a log that is not UTF-8 (Latin-1) has no UTF-16 twin
                continue
            name = path.name
            if kind == "log":
                def case(data: bytes, pipe: bool = False) -> fuzzkit.Case:
                    if pipe:
                        return fuzzkit.Case({}, ["-", "--json"], stdin=data)
                    return fuzzkit.Case({name: data}, [name, "--json"])
            else:
                def case(data: bytes, pipe: bool = False) -> fuzzkit.Case:
                    return fuzzkit.Case({name: data, "train.log": demo_log, **side},
                                        ["train.log", name, "--gpu", "24GiB", "--json"])
            want = _report(case(raw))
            for codec in codecs:
                for pipe in ([False, True] if args.pipe and kind == "log" else [False]):
                    got = _report(case(text.encode(codec), pipe))
                    runs += 1
                    if got != want and not (pipe and _same_but_name(got, want)):
                        differ += 1
                        print(f"DIFFERS {kind} {name} {codec}{' (pipe)' if pipe else ''}: exit {want[0]} -> {got[0]}"
                              f"{_first_difference(want[1], got[1])}")
    print(f"encodings: {runs} runs ({len(logs)} logs, {len(configs)} configs, {skipped} not UTF-8 skipped; "
          f"codecs {', '.join(codecs)}) in {time.monotonic() - started:.0f} s; differing from UTF-8: {differ}")
    return 1 if differ else 0


def _same_but_name(got: tuple, want: tuple) -> bool:
    """A piped log is named <stdin> where the file had its name: every other field the same."""
    return got[0] == want[0] and json.dumps(got[1]).replace("<stdin>", "") == \
        json.dumps(want[1]).replace(next(iter(_names(want[1])), "\0"), "")


def _names(report: object) -> list[str]:
    inputs = report.get("inputs") if isinstance(report, dict) else None
    return [i.get("path") for i in inputs if isinstance(i, dict) and i.get("path")] if isinstance(inputs, list) else []


def _first_difference(a: object, b: object, where: str = "") -> str:
    if type(a) is not type(b):
        return f" at {where or '/'}: {str(a)[:80]!r} != {str(b)[:80]!r}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key), f"{where}/{key}")
    if isinstance(a, list) and len(a) == len(b):
        for n, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{where}/{n}")
    return "" if a == b else f" at {where or '/'}: {str(a)[:80]!r} != {str(b)[:80]!r}"


if __name__ == "__main__":
    sys.exit(main())
