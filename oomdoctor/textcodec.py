"""How the bytes of a text input are encoded, found once for every reader (logs, configs, the patch).

UTF-16 and UTF-32 are found by their byte-order mark, or without one by where the NUL bytes fall: ASCII
text in UTF-16-LE has a NUL in every odd byte, in UTF-32-BE in three of every four (the Unicode Standard,
chapter 3.10, "Unicode Encoding Schemes"; Windows PowerShell's `>` writes UTF-16-LE with a BOM). A file
whose lines end in a bare CR (classic Mac OS, some serial consoles) has its CRs read as line ends.
Everything else is read as UTF-8, as before.
"""
from __future__ import annotations

import codecs
from typing import Callable

# Longest first: the UTF-32-LE mark starts with the UTF-16-LE one.
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
SNIFF_BYTES = 4096          # the bytes looked at for the NUL pattern
_MIN_UNITS = 8              # code units that must show the pattern before it counts
_SHARE = 0.9                # ... and this share of the UTF-32 units that are not all NUL
_SIDE_SHARE = 0.75          # UTF-16: this share of the units holding a NUL hold it in the high byte ...
_TEXT_SHARE = 0.125         # ... and those are this share of all units (a log is mostly ASCII)


def sniff(head: bytes) -> str | None:
    """"utf-16-le", "utf-16-be", "utf-32-le" or "utf-32-be" for a UTF-16/32 text (by its BOM, else by
    its NUL pattern), None for anything else (UTF-8, Latin-1, binary). `head` is the start of the file."""
    for bom, codec in _BOMS:
        if head.startswith(bom):
            return codec
    sample = head[:SNIFF_BYTES]
    if b"\0" not in sample:      # UTF-16/32 text of any script has NUL bytes; most logs have none
        return None
    # UTF-32: every code unit is at most 0x10FFFF, so its top byte is NUL and the next at most 0x10,
    # whatever the script. Counted a byte column at a time (_columns): a Python step per unit cost 7 ms a sample.
    b0, b1, b2, b3 = _columns(sample, 4)
    empty = _nul_in_all(b0, b1, b2, b3)                          # a NUL run (a crash-time flush) says nothing
    units = len(b0) - empty
    for codec, top, next_ in (("utf-32-le", b3, b2), ("utf-32-be", b0, b1)):
        fit = _nul_in_all(top, next_.translate(_AT_MOST_0X10)) - empty
        if units >= _MIN_UNITS and fit >= _SHARE * units and _reads_as_text(sample, codec, 4):
            return codec
    # UTF-16: a character below U+0100 (ASCII: digits, spaces, line ends) has a NUL high byte; most
    # above it have none, but U+xx00 ones (box drawing's U+2500 "─", rich's frames) have a NUL low byte.
    # So most NUL bytes fall on the high side, on enough units that the text is not UTF-8 holding a stray
    # UTF-16 fragment; stray NULs in UTF-8 fall on either side alike.
    even, odd = _columns(sample, 2)
    empty = _nul_in_all(even, odd)
    units = len(even) - empty
    with_nul = even.count(0) + odd.count(0) - 2 * empty         # units with one NUL byte of two
    for codec, high in (("utf-16-le", odd), ("utf-16-be", even)):
        fit = high.count(0) - empty
        if (fit >= _MIN_UNITS and fit >= _SIDE_SHARE * with_nul and fit >= _TEXT_SHARE * units
                and _reads_as_text(sample, codec, 2)):
            return codec
    return _wide_by_text(sample)


# byte -> 0 for a byte at most 0x10, 1 above: a UTF-32 unit's second byte that a code point allows reads as NUL
_AT_MOST_0X10 = bytes(0 if b <= 0x10 else 1 for b in range(256))


def _columns(sample: bytes, width: int) -> list[bytes]:
    """Byte k of every whole code unit of `width` bytes, for each k."""
    whole = len(sample) // width * width
    return [sample[k:whole:width] for k in range(width)]


def _nul_in_all(*columns: bytes) -> int:
    """How many positions are NUL in every column (the columns' bitwise OR, done on big integers, is NUL there)."""
    merged = 0
    for column in columns:
        merged |= int.from_bytes(column, "big")
    return merged.to_bytes(len(columns[0]), "big").count(0)


_ASCII_SHARE = 0.5          # of the characters a UTF-16/32 reading must give, for it to be the text's
_CONTROL_SHARE = 0.1        # at most, of C0 controls (but tab and line ends) and undecodable units in a text
_ASCII_CONTROLS = tuple(chr(c) for c in range(32) if chr(c) not in "\t\r\n") + ("\x7f",)
_NOT_TEXT = _ASCII_CONTROLS[:-1] + ("\ufffd",)


def _reads_as_text(sample: bytes, codec: str, width: int) -> bool:
    """A NUL pattern fits binary data too (00 01 02 03 repeated is a valid UTF-32 code point each time): a text,
    in any script, has spaces or line ends and almost no C0 controls or undecodable units."""
    text = sample[:len(sample) // width * width].decode(codec, errors="replace").strip("\0")
    if not text or not any(ch in text for ch in " \t\r\n"):
        return False
    bad = sum(text.count(ch) for ch in _NOT_TEXT)
    return bad <= _CONTROL_SHARE * len(text)


def _wide_by_text(sample: bytes) -> str | None:
    """UTF-16/32 whose NUL pattern is blurred by characters with a NUL byte of their own (a rich box's
    `─` is U+2500): the encoding in which the sample reads as mostly ASCII text, if one does (a wrong
    width or byte order gives NUL characters or CJK, not ASCII)."""
    for codec, width in (("utf-32-le", 4), ("utf-32-be", 4), ("utf-16-le", 2), ("utf-16-be", 2)):
        text = sample[:len(sample) // width * width].decode(codec, errors="replace")
        ascii_text = len(text.encode("ascii", "ignore")) - sum(text.count(ch) for ch in _ASCII_CONTROLS)
        if text and ascii_text >= _ASCII_SHARE * len(text) and "\0" not in text.strip("\0"):
            return codec
    return None


def bom_length(head: bytes, codec: str | None) -> int:
    """Bytes of a byte-order mark at the start of `head` (UTF-8's included), 0 when there is none."""
    if head.startswith(codecs.BOM_UTF8) and codec is None:
        return len(codecs.BOM_UTF8)
    for bom, name in _BOMS:
        if name == codec and head.startswith(bom):
            return len(bom)
    return 0


def cr_only(text_head: bytes) -> bool:
    """True when the start of a text has CRs and not one LF: its lines may end in a bare CR (the reader
    then checks that no LF follows anywhere: a tqdm log glues its redraws with CRs between LF lines)."""
    return b"\r" in text_head and b"\n" not in text_head


def decode(data: bytes) -> bytes:
    """`data` as UTF-8 bytes: a UTF-16/32 text transcoded (its BOM dropped), anything else as it is."""
    codec = sniff(data)
    if codec is None:
        return data
    body = data[bom_length(data, codec):]
    return body.decode(codec, errors="replace").encode("utf-8")


def transcoder(codec: str | None, cr: bool) -> Callable[[bytes, bool], bytes]:
    """A function turning successive chunks of a stream into UTF-8 (NUL bytes kept), with bare CRs made
    LFs when `cr`; call it with final=True on the last chunk. Chunks may split a character anywhere."""
    dec = codecs.getincrementaldecoder(codec)(errors="replace") if codec else None
    started = [False]

    def step(chunk: bytes, final: bool = False) -> bytes:
        if dec is not None:
            if not started[0] and chunk:
                chunk = chunk[bom_length(chunk, codec):]
                started[0] = True
            out = dec.decode(chunk, final).encode("utf-8")
        else:
            out = chunk
        return out.replace(b"\r", b"\n") if cr else out

    return step
