"""Undo what pasting did to a log before any parser reads it.

A crash log reaches us through a terminal, a log viewer, a chat or an issue thread. Each adds its own
marks around the lines the program printed; none of them is part of the log:

- terminal colour and cursor sequences (ANSI CSI and OSC), anywhere in a line; a UTF-8 byte-order mark;
- Markdown: code fences (```console, ~~~), <details>/<summary> tags, `> ` quotes (a reply quoting the
  paste, nested up to three deep), **bold** words (`**Killed**`);
- a viewer's line-number gutter (`  12 text`, GitHub's `L12 text`): numbers that count up by one on most
  lines;
- prefixes a collector puts on every line: a CI or journal timestamp (`[2025-12-13T19:54:35Z] `,
  `Apr 16 21:08:50 host `, `2026-02-08T00:40:07+00:00 host `, `2025-10-27 18:45:39 `), llama-server's elapsed time and level
  (`1.06.520.077 E `), an app's local date and time (`[12.10.2020 14:30:26] `), and a host label repeated on
  most lines (pdsh/clush `gpu-q-13: `);
- a terminal's hard wrap: lines cut at one fixed width, mid-word or mid-number, joined back.

Rank prefixes (`[rank3]:`, `(VllmWorker rank=1 pid=9)`, srun's `3: `) are not removed here: they say
which process printed the line, and formats.clean() reads them per line.

normalise() works on the text of a small log (a paste: up to PASTE_MAX_BYTES) and returns the cleaned
text with, for every line of it, the 1-based line of the original it came from, so that every line
number reported still points into the file the user gave. Bigger logs are files written by the run
itself: they are scanned as they are (formats.clean() still drops colour and prefixes line by line).
"""
from __future__ import annotations

from collections import Counter

from oomdoctor.lazyre import lazy_re

PASTE_MAX_BYTES = 256 << 10      # GitHub caps a comment at 65,536 characters; a bigger log is a run's own file

_ANSI = lazy_re(r"\x1b\[[0-9;?:]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Za-z0-9]|\x1b[=>]", needs=("\x1b",))
_FENCE = lazy_re(r"^\s*(?:`{3,}|~{3,})[\w+.-]*\s*$|^\s*`\s*$|^\s*</?details>\s*$|^\s*<summary>.*</summary>\s*$", needs=("</summary>", "`", "details>", "~"))
_QUOTE = lazy_re(r"^ {0,3}>(?!>>)(?: |$)")
_BOLD = lazy_re(r"(?<![\w*])\*\*(?=\S)([^*\n]+?)(?<=\S)\*\*(?![\w*])", needs=("**",))
_GUTTER = lazy_re(r"^(\s*)(L?)(\d{1,7})(?:[ \t]|[:|│] ?|$)")
_STAMPS = (
    # CI runners (ISO 8601 with its T; loggers' own `[2025-03-04 11:22:21,777]` stays: clean() reads those)
    lazy_re(r"^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\] "),
    lazy_re(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d) [\w.-]+ (?=\S+(?:\[\d+\])?: )"),  # rsyslog ISO + host
    lazy_re(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d [\w.-]+ (?=\S+(?:\[\d+\])?: )"),                # journalctl short
    lazy_re(r"^\d+\.\d\d\.\d{3}\.\d{3} [IWEDT] "),                                                  # llama-server
    # a desktop app's own log writer stamping each line with the local date and time in brackets, day or month
    # first and the year last, as .NET's DateTime.ToString() ("G" pattern) prints them per culture: `[12.10.2020
    # 14:30:26] `, `[10/12/2020 2:30:26 PM] `; the first stamped line may open an inline code span (`` ` ``)
    lazy_re(r"^`?\[\d{1,2}[./-]\d{1,2}[./-]\d{4},? \d{1,2}:\d\d:\d\d(?:[.,]\d+)?(?: ?[AP]M)?\] "),
    # a collector's date and time in ISO order with a space for the T and no fraction, then one space before the
    # program's own text, indent kept (moreutils' `ts "%Y-%m-%d %H:%M:%S"`, a job console's export: `2025-10-27
    # 18:45:39   File "...", line 334, in softmax`); a logger's own record goes on with a separator (`... 07:48:43 -
    # INFO -`, loguru's fraction and `|`) and stays for clean()
    lazy_re(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (?![-|:] )"),
)
# A host label: letters, digits, dots and dashes with at least one digit or dash (not a function name).
_IPY_ARROW = lazy_re(r"^\s*-+>\s*(\d+)\s")
_CARET_FRAME = lazy_re(r"^[ \t]*\^[\^ \t]*(?=File \")")
_HOST = lazy_re(r"^([A-Za-z][A-Za-z0-9.-]*[0-9-][A-Za-z0-9.-]*):(?: |$)")
_NOT_HOSTS = lazy_re(r"(?:Error|Exception|Warning)$|^(?:https?|ERROR|INFO|WARNING|DEBUG)$")
# A line that ends a box, a table, a rule or padding is whole; a line that opens a record is not a continuation.
_WHOLE_LINE = lazy_re(r"(?:[|│┃║╮╯╰╭]|[+=─-]{3,})\s*$|\s\s$|^\s*$")   # a padded line (rich pads to the width) is whole
_NEW_LINE = lazy_re(r"^\s*(?:[│┃║╭╰|+]|Traceback|File \"|\[rank\d+\]|\[default\d+\])")
WRAP_MIN_WIDTH = 60         # a hard wrap narrower than this is not told from ordinary short lines
SHARE = 0.6                 # a mark is the paste's when it is on this share of its non-blank lines


def normalise(text: str) -> tuple[str, list[int]] | None:
    """(cleaned text, origin line of each of its lines) or None when the paste carries none of the marks."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
        changed = True
    else:
        changed = False
    if text[:1] == "\ufeff":          # a UTF-8 byte-order mark: not part of the first line
        text = text[1:]
        changed = True
    lines = text.split("\n")
    origin = list(range(1, len(lines) + 1))
    # fences may sit inside a quote, and under a viewer's gutter or a collector's prefix (they number and
    # stamp the fence lines too), and so may a quote (a reply pasted into a log viewer); prefixes once more after a
    # hard wrap is undone (its second halves have none)
    # (a block quote only after a hard wrap is undone: its marks change the width the wrap is told by)
    for step in (_unfence, _unquote, _unfence, _ungutter, _unprefix, _unquote, _unfence, _unwrap, _unprefix,
                 _unquote_blocks, _unbold, _uncaret, _unwrap_rich_header):
        out = step(lines, origin)
        if out is not None:
            lines, origin = out
            changed = True
    if not changed:
        return None
    return "\n".join(lines), origin


# rich's traceback box (rich/traceback.py _render_stack): each frame's header `path:line in function` is one Text
# wrapped at the box's width, at a space where it has one (`engine.py:1969 in` / `backward`), else folded inside the
# path (`.../transformers/trainer.py:283` / `0 in save_model`); each row is padded and closed by the box's edge.
_BOX_ROW = lazy_re(r"^(\s*[│┃║]\s?)(.*?)\s*([│┃║])\s*$", needs=("│", "┃", "║"))
_RICH_HEADER = lazy_re(r"^\S+\.py:\d+ in [\w<>.]+$")
_RICH_HEADER_IN = lazy_re(r"^\S+\.py:\d+ in$")
_NAME_ROW = lazy_re(r"^[\w<>.]+$")


def _unwrap_rich_header(lines, origin):
    """Join a rich frame header wrapped over two box rows, so that the frame reads as one header."""
    out, orig, done = [], [], False
    i = 0
    while i < len(lines):
        a = _BOX_ROW.search(lines[i])
        b = _BOX_ROW.search(lines[i + 1]) if a and i + 1 < len(lines) else None
        if a and b and not _RICH_HEADER.search(a.group(2)):
            head, tail = a.group(2).strip(), b.group(2).strip()
            joined = None
            if _RICH_HEADER_IN.search(head) and _NAME_ROW.search(tail):
                joined = head + " " + tail
            elif head and " " not in head and ("/" in head or "\\" in head) and _RICH_HEADER.search(head + tail):
                joined = head + tail
            if joined is not None:
                out.append(a.group(1) + joined + " " + a.group(3))
                orig.append(origin[i])
                i += 2
                done = True
                continue
        out.append(lines[i])
        orig.append(origin[i])
        i += 1
    return (out, orig) if done else None


def _body(lines: list[str]) -> list[str]:
    return [x for x in lines if x.strip()]


def _unfence(lines, origin):
    keep = [i for i, x in enumerate(lines) if not _FENCE.search(x)]
    if len(keep) == len(lines):
        return None
    return [lines[i] for i in keep], [origin[i] for i in keep]


def _unquote(lines, origin):
    done = False
    for _ in range(3):
        body = _body(lines)
        quoted = sum(1 for x in body if _QUOTE.search(x))
        if not body or quoted < SHARE * len(body):
            break
        lines = [_QUOTE.sub("", x, count=1) for x in lines]
        done = True
    return (lines, origin) if done else None


def _unquote_blocks(lines, origin):
    """A reply that quotes only part of a paste (a frame it points at, under a sentence of its own) leaves the rest
    as it was: Markdown makes a block quote of consecutive `> ` lines (CommonMark, "Block quotes"), so a run of two
    or more loses its marks even when most of the paste is unquoted. A single `> ` line may be the log's own."""
    out = list(lines)
    i, done = 0, False
    while i < len(out):
        j = i
        while j < len(out) and _QUOTE.search(out[j]) and out[j].strip() != ">":
            j += 1
        if j - i >= 2:
            for k in range(i, j):
                out[k] = _QUOTE.sub("", out[k], count=1)
            done = True
        i = max(j, i + 1)
    return (out, origin) if done else None


def _uncaret(lines, origin):
    """Two processes writing one terminal interleave Python 3.11's caret lines with each other's frames
    (`^^  File "...", line 1143, in convert`, `^ ^ ^^   File ...`): a run of carets and blanks before a frame's
    `File "` is the other process's underline, not the frame's."""
    out, done = list(lines), False
    for i, x in enumerate(lines):
        m = _CARET_FRAME.match(x)
        if m:
            out[i] = "  " + x[m.end():]
            done = True
    return (out, origin) if done else None


def _ungutter(lines, origin):
    """Numbers that count up by one on most lines are a viewer's, not the log's. The gutter ends at one
    blank (or `:`, `|`, `│`); the log's own indentation after it is kept."""
    nums = [(i, int(m.group(3)), m.end()) for i, m in ((i, _GUTTER.match(x)) for i, x in enumerate(lines)) if m]
    # IPython's traceback (ultratb) numbers the source lines around each frame's arrowed line (`--> 619 with ...`):
    # numbers that run on from an arrow's are the file's lines, not a viewer's
    arrows = {int(m.group(1)) for m in map(_IPY_ARROW.match, lines) if m}
    if arrows and any(n - 1 in arrows or n + 1 in arrows for _i, n, _e in nums):
        return None
    body = _body(lines)
    if len(nums) < 3 and not _short_gutter(lines, nums) or len(nums) < SHARE * len(body):
        return None
    steps = sum(1 for (i, a, _e), (j, b, _f) in zip(nums, nums[1:]) if b - a == j - i or b == a + 1)
    if steps < 0.8 * (len(nums) - 1):
        return None
    out = list(lines)
    for i, _n, end in nums:
        out[i] = lines[i][end:]
    return out, origin


def _short_gutter(lines, nums) -> bool:
    """One or two numbered lines are a gutter only when every line has one, counting from 1 and set
    off by a blank (srun's `1: ` label is not)."""
    return bool(nums) and len(nums) == len(_body(lines)) and nums[0][1] == 1 and \
        all(n == k + 1 and lines[i][end - 1:end] in (" ", "\t") for k, (i, n, end) in enumerate(nums))


def _unstamp(lines, origin):
    done = False
    for _ in range(3):                  # stamps stack: a CI runner's over a server's own
        body = _body(lines)
        for rx in _STAMPS:
            hits = sum(1 for x in body if rx.search(x))
            if hits and hits >= SHARE * len(body):
                lines = [rx.sub("", x, count=1) for x in lines]
                done = True
                break
        else:
            break
    return (lines, origin) if done else None


def _unprefix(lines, origin):
    """Stamps and host labels, in whatever order they were stacked (a collector's host over a CI stamp)."""
    done = False
    for _ in range(4):
        out = _unstamp(lines, origin) or _unhost(lines, origin)
        if out is None:
            break
        lines, origin = out
        done = True
    return (lines, origin) if done else None


def _unhost(lines, origin):
    body = _body(lines)
    labels = Counter(m.group(1) for m in map(_HOST.search, body) if m)
    if not labels:
        return None
    label, n = labels.most_common(1)[0]
    if n < 2 or n < SHARE * len(body) or _NOT_HOSTS.search(label):
        return None
    head = label + ":"
    return [x[len(head) + 1:] if x.startswith(head) else x for x in lines], origin


def _unbold(lines, origin):
    if not any("**" in x for x in lines):
        return None
    out = [_BOLD.sub(r"\1", x) if "**" in x else x for x in lines]
    return (out, origin) if out != lines else None


def _cut_run(lines: list[str], width: int, run: int = 3) -> bool:
    """Whether `run` lines in a row are cut at `width` and go on: one long line a terminal wrapped in a paste
    that is mostly short lines (a question, a command, then the message: too few cut lines for a share)."""
    k = 0
    for x, nxt in zip(lines, lines[1:]):
        k = k + 1 if len(x) == width and not _WHOLE_LINE.search(x) and nxt and not _NEW_LINE.search(nxt) else 0
        if k >= run:
            return True
    return False


def _unwrap(lines, origin):
    """A terminal or viewer cuts long lines at one width, mid-word and mid-number: when several lines
    have exactly the same length (at least WRAP_MIN_WIDTH) and the next line goes on, join them back."""
    # distinct lines only: a message repeated word for word (a retry, an issue form's sections) is not a wrap
    widths = Counter(len(x) for x in set(lines) if len(x) >= WRAP_MIN_WIDTH)
    if not widths:
        return None
    width, n = widths.most_common(1)[0]
    # a terminal shows no line longer than its width: the cut lines are the longest ones
    if n < 3 or max(widths) != width:
        return None
    if n < 0.2 * len(_body(lines)) and not _cut_run(lines, width):
        return None
    out: list[str] = []
    orig: list[int] = []
    carry = False
    for x, o in zip(lines, origin):
        if carry and x and not _NEW_LINE.search(x):
            out[-1] += x
            carry = len(x) == width and not _WHOLE_LINE.search(x)
            continue
        out.append(x)
        orig.append(o)
        carry = len(x) == width and not _WHOLE_LINE.search(x)
    if len(out) == len(lines):
        return None
    return out, orig
