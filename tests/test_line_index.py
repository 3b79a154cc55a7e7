"""server.analysis.document.LineIndex: byte offsets <-> LSP positions, checked against the definition
(a column is the number of UTF-16 code units / code points / bytes of the line's text before the offset)
on random texts, and its cost per call independent of the line's length."""

from __future__ import annotations

import random
import time

import pytest

from puppet_xpp.server.analysis.document import LineIndex

ALPHABET = ["a", " ", "\n", "é", "€", "😀", "\U0001f600x", "\t", "\x80", "\xff"]


def _text(rng: random.Random) -> bytes:
    parts: list[bytes] = []
    for _ in range(rng.randrange(0, 60)):
        piece = rng.choice(ALPHABET)
        if piece in ("\x80", "\xff"):
            parts.append(piece.encode("latin-1"))  # a stray byte: not UTF-8
        else:
            parts.append(piece.encode("utf-8"))
    return b"".join(parts)


def _units(prefix: bytes, encoding: str) -> int:
    if encoding == "utf-8":
        return len(prefix)
    text = prefix.decode("utf-8", "surrogateescape")
    if encoding == "utf-32":
        return len(text)
    return sum(2 if ord(ch) > 0xFFFF else 1 for ch in text)


def _boundaries(data: bytes) -> list[int]:
    """Offsets at character starts (and the end): what the parser and the client use."""
    out = [0]
    i = 0
    for ch in data.decode("utf-8", "surrogateescape"):
        code = ord(ch)
        i += 1 if 0xDC80 <= code <= 0xDCFF else len(ch.encode("utf-8"))
        out.append(i)
    return out


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32", "utf-8"])
def test_conversions_equal_the_definition(encoding: str) -> None:
    rng = random.Random(20261128)
    for _ in range(600):
        data = _text(rng)
        index = LineIndex(data, encoding=encoding)
        starts = [0] + [i + 1 for i, b in enumerate(data) if b == 0x0A]
        boundaries = set(_boundaries(data))
        for offset in range(len(data) + 1):  # character starts, and inside characters too
            line = max(i for i, s in enumerate(starts) if s <= offset)
            want = (line, _units(data[starts[line] : offset], encoding))
            assert index.position(offset) == want, (data, offset)
            if offset in boundaries:
                assert index.offset(*want) == offset, (data, want)
        # columns past a line's end give the line's end; a column inside a surrogate pair the char's end
        for line, s in enumerate(starts):
            end = starts[line + 1] - 1 if line + 1 < len(starts) else len(data)
            assert index.offset(line, 10_000) == end
            width = _units(data[s:end], encoding)
            for col in range(width + 1):
                got = index.offset(line, col)
                assert s <= got <= end
                assert _units(data[s:got], encoding) >= col


def test_cost_per_call_does_not_grow_with_the_line() -> None:
    """A 4 MB one-line document: 20,000 conversions near its end take well under a second (slicing
    the line on every call took minutes)."""
    data = ("$x = [" + "'é', 1, " * 500_000 + "]").encode("utf-8")
    index = LineIndex(data)
    offsets = [len(data) - 1 - i * 7 for i in range(20_000)]
    index.position(offsets[0])  # the line's table, once
    began = time.process_time()
    columns = [index.position(o)[1] for o in offsets]
    spent = time.process_time() - began
    assert columns[0] == len(data.decode("utf-8")) - 1
    assert spent < 1.0, spent
