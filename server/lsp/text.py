"""Keeping our copy of a document equal to the client's, and bounding the work a document can cause.

* **Line ends.**  LSP counts ``\\r\\n``, ``\\n`` *and a lone* ``\\r`` as line breaks; the parser's line
  index (Puppet's) breaks at ``\\n`` only.  For a ``\\r\\n`` document both agree on every position a client
  can send; a lone ``\\r`` makes them differ, so positions of such a document are converted through
  :func:`lsp_offset` (the LSP rule) before the edit is applied.
* **Lone surrogates** (a UTF-16 client can hold them) cannot be encoded as UTF-8; each becomes U+FFFD,
  which has the same length in UTF-16 and UTF-32 positions, so later positions still agree.
* **Binary content** (:func:`binary_reason`): a document with NUL characters or many replacement
  characters (invalid UTF-8 decoded by the client) is reported once and not analysed.
* **Diagnostics per file** are capped per source (:func:`cap`): the most severe first (errors before
  warnings, each kind in document order), at most :data:`MAX_DIAGNOSTICS` of each source, then one "and
  N more" -- so a thousand lint warnings never hide the parse error of the same file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

MAX_DIAGNOSTICS = 200
MAX_REPLACEMENT_CHARS = 32
_BREAK = re.compile(r"\r\n|\r|\n")
_SURROGATE = re.compile("[\ud800-\udfff]")
_REPLACEMENT = "\ufffd".encode()


def lsp_offset(text: str, line: int, character: int, encoding: str) -> int:
    """Index into ``text`` of LSP position (line, character) under LSP's line rules (clamped)."""
    start = 0
    if line > 0:
        n = 0
        for m in _BREAK.finditer(text):
            n += 1
            if n == line:
                start = m.end()
                break
        else:
            return len(text)
    nxt = _BREAK.search(text, start)
    end = nxt.start() if nxt else len(text)
    if encoding == "utf-32":
        return min(start + max(character, 0), end)
    units = 0
    i = start
    while i < end and units < character:
        ch = text[i]
        o = ord(ch)
        if encoding == "utf-8":
            units += 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4
        else:
            units += 2 if o > 0xFFFF else 1
        i += 1
    return i


def lsp_position(data: bytes, off: int, encoding: str) -> tuple[int, int]:
    """LSP position (LSP's line rule) of byte offset ``off`` in document bytes ``data``."""
    off = max(0, min(off, len(data)))
    head = data[:off]
    line = head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n")
    start = max(head.rfind(b"\n"), head.rfind(b"\r")) + 1
    seg = head[start:]
    if encoding == "utf-8" or seg.isascii():
        return line, len(seg)
    txt = seg.decode("utf-8", "surrogateescape")
    if encoding == "utf-32":
        return line, len(txt)
    return line, len(txt) + sum(1 for ch in txt if ord(ch) > 0xFFFF)


def clean_surrogates(text: str) -> str:
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub("\ufffd", text)


def binary_reason(data: bytes) -> tuple[str, int] | None:
    """(why, byte offset) when document bytes ``data`` are binary content (not analysed), else None."""
    i = data.find(b"\x00")
    if i >= 0:
        return "NUL character", i
    if data.count(_REPLACEMENT) > MAX_REPLACEMENT_CHARS:
        return "invalid UTF-8 (replacement characters)", data.find(_REPLACEMENT)
    return None


def has_lone_cr_bytes(data: bytes) -> bool:
    return b"\r" in data and data.count(b"\r") != data.count(b"\r\n")


def cap(
    diags: list[T], limit: int = MAX_DIAGNOSTICS, severity: Callable[[T], int] | None = None
) -> tuple[list[T], int]:
    """(at most ``limit`` of ``diags``, how many more there were).  With ``severity`` (LSP's numbers:
    1 error .. 4 hint) the kept ones are the most severe, in their order: a cap must never drop an
    error to keep a warning."""
    if len(diags) <= limit:
        return diags, 0
    kept = sorted(diags, key=severity)[:limit] if severity is not None else diags[:limit]
    return kept, len(diags) - limit
