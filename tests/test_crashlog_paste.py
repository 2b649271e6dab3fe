"""A paste's marks change nothing the reader finds: every fixture log, wrapped in each mark a terminal,
a viewer, a chat or an issue thread adds (and in combinations of them), written in each encoding a
platform uses (UTF-8 with a BOM, UTF-16/32 with and without one, bare CR line ends), with its failure
lines in bold and under a rank prefix, gives the same events, numbers, phases and line numbers (counted
in the file as given) as the bare log.

The reader is three stages: decode the file (source.py), undo a paste's marks (paste.py), read the cleaned
text (parse._parse), then number the events in the file given (parse._remap). The last reading is a pure
function of the bytes it reads, and most marked copies clean back to the very bytes of the bare log; so each
distinct cleaned text is read once per module (`_read_each_text_once`), while decoding, cleaning and
renumbering, what the marks exercise, run for every copy. A mark left in the cleaned text changes its bytes,
and that copy is read in full.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oomdoctor.crashlog import parse as parse_module
from oomdoctor.crashlog import parse_log
from oomdoctor.crashlog.paste import _unwrap, normalise

LOGS = Path(__file__).parent / "data" / "logs"
FIXTURES = sorted(p for p in LOGS.rglob("*.log"))


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def fenced(data: bytes) -> tuple[bytes, int]:
    return b"```console\n" + data + (b"" if data.endswith(b"\n") else b"\n") + b"```\n", 1


def quoted(data: bytes) -> tuple[bytes, int]:
    return b"\n".join(b"> " + x if x.strip() else b">" for x in _lines(data)), 0


def guttered(data: bytes) -> tuple[bytes, int]:
    return b"\n".join(b"%5d " % (i + 1) + x for i, x in enumerate(_lines(data))), 0


def github_lines(data: bytes) -> tuple[bytes, int]:
    return b"\n".join(b"L%d\t" % (i + 1) + x for i, x in enumerate(_lines(data))), 0


def host_label(data: bytes) -> tuple[bytes, int]:
    return b"\n".join(b"dgx-a07: " + x for x in _lines(data)), 0


def ci_stamp(data: bytes) -> tuple[bytes, int]:
    return b"\n".join(b"[2025-12-13T19:54:%02dZ] " % (i % 60) + x for i, x in enumerate(_lines(data))), 0


def server_stamp(data: bytes) -> tuple[bytes, int]:
    return b"\n".join(b"0.%02d.520.%03d I " % (i % 60, i % 1000) + x for i, x in enumerate(_lines(data))), 0


def coloured(data: bytes) -> tuple[bytes, int]:
    return b"\n".join(b"\x1b[1;31m" + x + b"\x1b[0m" if x.strip() else x for x in _lines(data)), 0


def hard_wrapped(data: bytes, width: int = 97) -> tuple[bytes, int]:
    """A terminal `width` columns wide cuts every longer line, mid-word and mid-number. Not for logs with
    lines of exactly that width already (a terminal would show them the same way: nothing to undo), nor
    where a cut falls after two blanks: that piece looks like a line padded to the width (rich), and
    paste.py keeps padded lines whole."""
    out = []
    for x in data.decode("utf-8").split("\n"):      # a terminal counts characters, not bytes
        while len(x) > width:
            out.append(x[:width])
            x = x[width:]
        out.append(x)
    return "\n".join(out).encode("utf-8"), 0


ARTIFACTS = [fenced, quoted, guttered, github_lines, host_label, ci_stamp, server_stamp, coloured]

# How the file itself may be written: UTF-8 with Notepad's or PowerShell 5's byte-order mark, PowerShell's `>`
# (UTF-16-LE with a BOM), UTF-16/32 without one (found by where the NUL bytes fall, or by which reading
# gives text), classic Mac line ends. Line numbers count in the file as given, so none shift.
ENCODINGS = ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"]


def encoded(data: bytes, codec: str) -> bytes:
    return data.decode("utf-8").encode(codec)


def cr_only(data: bytes) -> tuple[bytes, int]:
    return data.replace(b"\n", b"\r"), 0


_FAILURE_WORDS = re.compile(rb"out of memory|Killed|OutOfMemory|exit ?code|ALLOC_FAILED|[A-Za-z]Error\b", re.I)


def bold_failures(data: bytes) -> tuple[bytes, int]:
    """A reporter puts the failure's own lines in **bold** (`**RuntimeError: CUDA out of memory.**`)."""
    out = []
    for x in _lines(data):
        s = x.rstrip()
        plain = s and not s[:1].isspace() and not any(c in s for c in (b"*", b"\r", b"`"))
        out.append(b"**" + s + b"**" if plain and _FAILURE_WORDS.search(s) else x)
    return b"\n".join(out), 0


def rank_prefixed(data: bytes) -> tuple[bytes, int]:
    """torchrun's `[rank0]: ` on every line of a one-process log."""
    return b"\n".join(b"[rank0]: " + x if x.strip() else x for x in _lines(data)), 0


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def events(path: Path, shift: int | None = 0) -> list[tuple]:
    """What the reader finds; line numbers less `shift` (None: without line numbers, for a paste whose
    lines were cut in two and so are numbered differently in the file given)."""
    report = parse_log(str(path))
    return [(e.kind, e.tried_gib, e.capacity_gib, e.free_gib, e.allocated_gib, e.process_gib, e.device, e.rank,
             e.phase, e.confidence) + ((e.line - shift, e.phase_evidence.line - shift if e.phase_evidence else None)
                                       if shift is not None else ())
            for e in report.events]


@pytest.fixture(scope="module", autouse=True)
def _read_each_text_once():
    """parse._parse memoised on the bytes it reads (the module docstring says why this keeps every check)."""
    read = parse_module._parse
    done: dict[bytes, object] = {}

    def read_once(src):
        key = hashlib.sha256(bytes(src.mm)).digest()
        if key not in done:
            done[key] = read(src)
        return done[key]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(parse_module, "_parse", read_once)
        yield


def test_the_memo_reads_a_changed_text_again(tmp_path):
    # a mark the cleaner missed must reach the reader: two texts, two readings
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_text("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n", encoding="utf-8")
    b.write_text("RuntimeError: CUDA out of memory. Tried to allocate 4.00 GiB\n", encoding="utf-8")
    assert parse_log(str(a)).events[0].tried_gib == 2.0 and parse_log(str(b)).events[0].tried_gib == 4.0


@pytest.fixture(scope="module")
def bare(_read_each_text_once) -> dict[Path, list[tuple]]:
    return {p: events(p) for p in FIXTURES}


def _same(tmp_path: Path, fixture: Path, bare: dict, *marks) -> None:
    data = fixture.read_bytes()
    shift = 0
    for mark in marks:
        data, added = mark(data)
        shift += added
    p = tmp_path / fixture.name
    p.write_bytes(data)
    assert events(p, shift) == bare[fixture], (fixture.name, [m.__name__ for m in marks])


@pytest.mark.parametrize("mark", ARTIFACTS, ids=lambda m: m.__name__)
def test_every_fixture_reads_the_same_under_each_mark(tmp_path, bare, mark):
    for fixture in FIXTURES:
        _same(tmp_path, fixture, bare, mark)


@pytest.mark.slow
@pytest.mark.parametrize("codec", ENCODINGS)
def test_every_fixture_reads_the_same_in_each_encoding(tmp_path, bare, codec):
    checked = 0
    for fixture in FIXTURES:
        data = fixture.read_bytes()
        if not _utf8(data):
            continue                   # a Latin-1 fixture has no UTF-16 form to write
        p = tmp_path / fixture.name
        p.write_bytes(encoded(data, codec))
        assert events(p) == bare[fixture], (fixture.name, codec)
        checked += 1
    assert checked >= len(FIXTURES) - 5


@pytest.mark.slow
def test_every_fixture_reads_the_same_with_bare_cr_line_ends(tmp_path, bare):
    for fixture in FIXTURES:
        data = fixture.read_bytes()
        if b"\r" in data:
            continue                   # CRs already inside lines (tqdm, CRLF) make bare CRs ambiguous
        _same(tmp_path, fixture, bare, cr_only)


@pytest.mark.slow
def test_every_fixture_reads_the_same_with_its_failure_lines_in_bold(tmp_path, bare):
    for fixture in FIXTURES:
        text = fixture.read_bytes().decode("utf-8", errors="replace")
        lines = text.split("\n")
        if _unwrap(lines, list(range(len(lines)))) is not None:
            continue                   # a hard-wrapped paste: bold marks would change the cut width
        _same(tmp_path, fixture, bare, bold_failures)


@pytest.mark.slow
def test_every_one_process_fixture_reads_the_same_under_a_rank_prefix(tmp_path, bare):
    checked = 0
    for fixture in FIXTURES:
        data = fixture.read_bytes()
        if not _utf8(data) or b"rank" in data or normalise(data.decode("utf-8")) is not None \
                or any(e[7] is not None for e in bare[fixture]):
            continue                   # ranks of its own, or paste marks a rank prefix would sit inside
        p = tmp_path / fixture.name
        p.write_bytes(rank_prefixed(data)[0])
        assert events(p) == [e[:7] + (0,) + e[8:] for e in bare[fixture]], fixture.name
        checked += 1
    assert checked >= 200


def test_every_fixture_with_long_lines_reads_the_same_hard_wrapped(tmp_path, bare):
    checked = 0
    for fixture in FIXTURES:
        try:
            lines = fixture.read_text(encoding="utf-8").split("\n")
        except UnicodeDecodeError:
            continue
        data = fixture.read_bytes()
        cut_after_blanks = any(x[k - 2:k] == "  " for x in lines for k in range(97, len(x), 97))
        if cut_after_blanks or any(len(x) == 97 for x in lines) or not any(len(x) > 3 * 97 for x in lines) or b"\r" in data \
                or b"\x1b" in data:            # a terminal wraps what it shows, not the colour codes
            continue
        p = tmp_path / fixture.name
        p.write_bytes(hard_wrapped(data)[0])
        assert events(p, None) == [e[:-2] for e in bare[fixture]], fixture.name
        checked += 1
    assert checked >= 50


# the marks that stack in real pastes: a reply quoting a fenced, coloured log with a collector's stamps
COMBINABLE = [fenced, quoted, guttered, host_label, ci_stamp, coloured]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(FIXTURES), st.lists(st.sampled_from(COMBINABLE), min_size=2, max_size=4, unique=True))
def test_fixtures_read_the_same_under_stacked_marks(tmp_path, bare, fixture, marks):
    order = sorted(marks, key=COMBINABLE.index)     # inner marks first: stamps, then colour, gutter, fence, quote
    inner = [m for m in (ci_stamp, host_label, coloured, guttered, fenced, quoted) if m in order]
    _same(tmp_path, fixture, bare, *inner)


def test_a_bold_killed_under_a_shard_bar_is_the_shells_kill():
    text = "Loading checkpoint shards:  52%|█████▏    | 17/33 [00:40<00:38,  2.41s/it]\n**Killed**\n"
    cleaned, origin = normalise(text)
    assert cleaned.splitlines()[1] == "Killed" and origin[:2] == [1, 2]


def test_python_keyword_arguments_are_not_bold():
    line = '    return self._call_impl(*args, **kwargs)'
    assert normalise(line) is None


def test_a_repeated_function_prefix_is_not_a_host():
    text = "\n".join(f"llama_new_context_with_model: n_ctx = {i}" for i in range(5))
    assert normalise(text) is None


def test_ipython_context_numbers_are_not_a_gutter():
    text = ("/x/xla.py in _execute_compiled(compiled, avals)\n    958           for i, x in enumerate(args)\n"
            "    959           if x is not token))\n--> 960   out_bufs = compiled.execute(input_bufs)\n"
            "    961   check_special(name, out_bufs)\n\nRuntimeError: RESOURCE_EXHAUSTED: Out of memory\n")
    assert normalise(text) is None


def test_a_quoted_frame_after_the_message_is_unquoted_and_read():
    text = ("> Traceback (most recent call last):\n> (...)lots of traceback(...)\n"
            "> torch.OutOfMemoryError: HIP out of memory. Tried to allocate 80.00 MiB. GPU 0 has a total capacity of "
            "15.98 GiB of which 84.00 MiB is free.\n\nIt seems to happen around here:\n\n"
            '>  File "/data/u/app.py", line 72, in infer\n>     pipe.to(device)\n\nMy machine:\n\nOS: Linux\n'
            "GPU: RX6950XT\nCPU: Ryzen 3600\nRAM: 64GB\nmore prose\neven more\n")
    cleaned, origin = normalise(text)
    assert ' File "/data/u/app.py", line 72, in infer' in cleaned.splitlines() and len(origin) == text.count("\n") + 1


def test_a_single_quoted_line_is_left_as_the_log_wrote_it():
    assert normalise("> torch.OutOfMemoryError: CUDA out of memory.\nsome line\nanother line\nand one more\n") is None


def test_another_processs_carets_before_a_frame_are_dropped(tmp_path):
    text = ('^^  File "/env/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1143, in convert\n'
            ' ^^    ^^ module._apply(fn)\n'
            '^ ^ ^ ^ ^ ^  File "/env/lib/python3.11/site-packages/torch/nn/modules/module.py", line 797, in _apply\n'
            '^^^^^^^^^^^^^^\n'
            'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 96.00 MiB (GPU 1; 31.75 GiB total '
            'capacity; 30.97 GiB already allocated; 61.50 MiB free; 30.99 GiB reserved in total by PyTorch)\n')
    cleaned, _origin = normalise(text)
    assert cleaned.splitlines()[2].startswith('  File "') and cleaned.splitlines()[3] == "^^^^^^^^^^^^^^"
    p = tmp_path / "run.log"
    p.write_text(text, encoding="utf-8")
    ev = parse_log(str(p)).primary
    assert ev.phase == "load" and ev.phase_evidence is not None and ev.phase_evidence.line == 3


def test_ipython_numbers_around_an_arrow_are_not_a_gutter_even_on_most_lines():
    text = ("File ~/venv/lib/python3.10/site-packages/ludwig/api.py:619, in LudwigModel.train(self, dataset)\n"
            "    616     detected_learning_rate = get_auto_learning_rate(self.config_obj)\n"
            "    617     self.config_obj.trainer.learning_rate = detected_learning_rate\n"
            "--> 619 with self.backend.create_trainer(\n    620     model=self.model,\n"
            "    621     config=self.config_obj.trainer,\n    622     resume=model_resume_path is not None,\n"
            "    623     skip_save_model=skip_save_model,\n")
    assert normalise(text) is None


@pytest.mark.parametrize("stamp", ["[12.10.2020 14:30:26] ", "[10/12/2020 2:30:26 PM] "])
def test_an_apps_local_date_stamp_on_every_line_is_dropped_and_its_frames_read(tmp_path, stamp):
    # a desktop app's log writer stamps each line with the culture's date and time (.NET DateTime.ToString "G"); the
    # first stamped line opens an inline code span in the issue
    frames = ['Traceback (most recent call last):', '  File "IEU_test.py", line 119, in <module>',
              '    output = model(img_LR).data.squeeze(0).float().cpu().clamp_(0, 1).numpy()',
              '  File "/env/lib/python3.8/site-packages/torch/nn/modules/module.py", line 722, in _call_impl',
              '    result = self.forward(*input, **kwargs)',
              'RuntimeError: CUDA out of memory. Tried to allocate 494.00 MiB (GPU 0; 6.00 GiB total capacity; 3.72 GiB '
              'already allocated; 24.75 MiB free; 4.15 GiB reserved in total by PyTorch)']
    text = "`" + "\n".join(stamp + x for x in frames) + "\n"
    cleaned, _origin = normalise(text)
    assert cleaned.splitlines()[1] == frames[1]
    p = tmp_path / "run.log"
    p.write_text(text, encoding="utf-8")
    ev = parse_log(str(p)).primary
    assert ev.phase == "forward" and ev.phase_evidence is not None and ev.phase_evidence.line == 5


def test_a_bracketed_iso_logger_stamp_is_left_to_the_line_reader():
    # DeepSpeed's logger (`[2025-03-04 11:22:21,777] [INFO] ...`) is read by formats.clean(), year first: not this mark
    text = "\n".join("[2025-03-04 11:22:%02d,777] [INFO] [logging.py:96:log_dist] step=%d" % (i, 10 ** i) for i in range(5))
    assert normalise(text) is None


def _box(rows: list[str]) -> list[str]:
    return [f"│ {r:<60} │" for r in rows]


def test_a_rich_frame_header_wrapped_at_its_space_reads_as_one_frame(tmp_path):
    # rich/traceback.py wraps `path:line in name` at the box's width: the function name alone on the next row
    rows = _box(["/venv/lib/python3.10/site-packages/deepspeed/runtime/engine.py:1969 in", "backward", "",
                 "❱ 1969 │   self.optimizer.backward(loss)"])
    text, _ = normalise("\n".join(rows))
    assert "engine.py:1969 in backward" in text.splitlines()[0]
    log = tmp_path / "rich.log"
    log.write_text("\n".join(["# OutOfMemoryError: CUDA out of memory.", "", *rows]), encoding="utf-8")
    assert parse_log(str(log)).primary.phase == "backward"


def test_a_rich_frame_header_folded_inside_its_path_reads_as_one_frame():
    rows = _box(["/venv/lib/python3.10/site-packages/transformers/trainer.py:283", "0 in save_model"])
    text, origin = normalise("\n".join(rows))
    assert "transformers/trainer.py:2830 in save_model" in text and origin == [1]


def test_two_box_rows_that_make_no_frame_header_stay_apart():
    rows = _box(["/data/run/output_dir", "checkpoint-500"])
    assert normalise("\n".join(rows)) is None
