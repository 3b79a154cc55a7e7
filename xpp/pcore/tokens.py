"""Reader step 1 (msgpack): bytes -> a flat token list.

A token is a primitive (None, bool, int, float, str) or a tuple for an extension:
``(0, i) (1, i) (0x10, n) (0x11, n) (0x13, n) (0x30, source) (0x12, segments_tuple, count)``.
The msgpack C extension decodes the primitives; extension payloads are decoded (and checked) here.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

try:
    import msgpack  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - msgpack is a declared dependency
    msgpack = None

from puppet_xpp.xpp.pcore.base import (
    EXT_NAMES,
    INT_PAYLOAD,
    MAX_INT,
    OBJECT_START,
    PCORE_OBJECT_START,
    REGEXP,
    Buffer,
    XppFormatError,
    fail,
)

_UNPACK_F32 = struct.Struct(">f").unpack_from
_UNPACK_F64 = struct.Struct(">d").unpack_from


def _mp_prims(data: Buffer, i: int, end: int, out: list[Any], in_payload: bool) -> int:
    """Decode msgpack values in data[i:end] into ``out``; extensions only when not in a payload."""
    app = out.append
    while i < end:
        b = data[i]
        i += 1
        if b < 0x80:
            app(b)
        elif b >= 0xE0:
            app(b - 256)
        elif 0xA0 <= b <= 0xBF:
            n = b & 0x1F
            j = i + n
            if j > end:
                fail("truncated string")
            app(data[i:j].decode("utf-8", "surrogateescape"))
            i = j
        elif b == 0xC0:
            app(None)
        elif b == 0xC2:
            app(False)
        elif b == 0xC3:
            app(True)
        elif 0xCC <= b <= 0xD3:
            size = (1, 2, 4, 8, 1, 2, 4, 8)[b - 0xCC]
            j = i + size
            if j > end:
                fail("truncated integer")
            v = int.from_bytes(data[i:j], "big", signed=b >= 0xD0)
            if v > MAX_INT:
                fail("integer out of 64-bit signed range")
            app(v)
            i = j
        elif b == 0xCB:
            if i + 8 > end:
                fail("truncated float")
            app(_UNPACK_F64(data, i)[0])
            i += 8
        elif b == 0xCA:
            if i + 4 > end:
                fail("truncated float")
            app(_UNPACK_F32(data, i)[0])
            i += 4
        elif 0xD9 <= b <= 0xDB:
            size = (1, 2, 4)[b - 0xD9]
            if i + size > end:
                fail("truncated string header")
            n = int.from_bytes(data[i : i + size], "big")
            i += size
            j = i + n
            if j > end:
                fail("truncated string")
            app(data[i:j].decode("utf-8", "surrogateescape"))
            i = j
        elif 0xD4 <= b <= 0xD8 or 0xC7 <= b <= 0xC9:
            if in_payload:
                fail("extension inside an extension payload")
            if b >= 0xD4:
                n = (1, 2, 4, 8, 16)[b - 0xD4]
            else:
                size = (1, 2, 4)[b - 0xC7]
                if i + size > end:
                    fail("truncated extension header")
                n = int.from_bytes(data[i : i + size], "big")
                i += size
            if i + 1 + n > end:
                fail("truncated extension")
            code = data[i]
            i += 1
            j = i + n
            if n == 1 and code in INT_PAYLOAD:
                p = data[i]
                if p >= 0x80:
                    fail(f"bad {EXT_NAMES.get(code, code)} payload")
                app((code, p))
            else:
                app(_mp_ext_token(code, data, i, j))
            i = j
        elif 0x80 <= b <= 0x9F or 0xDC <= b <= 0xDF:
            fail("native msgpack array/map (Pcore writes arrays and maps as extensions)")
        elif 0xC4 <= b <= 0xC6:
            fail("msgpack bin value (not used by Pcore text serialization)")
        else:
            fail(f"invalid msgpack byte 0x{b:02x}")
    return i


def _mp_ext_token(code: int, data: Buffer, i: int, j: int) -> Any:
    items: list[Any] = []
    _mp_prims(data, i, j, items, True)
    return ext_token(code, items, 0, len(items), True)


def ext_token(code: int, items: list[Any], k: int, end: int, exact: bool) -> Any:
    """Build the token for extension ``code`` from payload ``items[k:end]``; returns the token (and, when
    not ``exact``, the index after the payload as a pair)."""
    name = EXT_NAMES.get(code)
    if name is None:
        fail(f"invalid extension number {code}")

    def take() -> Any:
        nonlocal k
        if k >= end:
            fail(f"truncated {name} payload")
        v = items[k]
        k += 1
        return v

    if code in INT_PAYLOAD:
        n = take()
        if type(n) is not int or n < 0 or (code == OBJECT_START and n < 1):
            fail(f"bad {name} payload")
        tok: tuple[Any, ...] = (code, n)
    elif code == PCORE_OBJECT_START:
        nseg = take()
        if type(nseg) is not int or nseg < 1 or nseg > end - k:
            fail("bad PCORE_OBJECT_START segment count")
        segs = []
        for _ in range(nseg):
            s = take()
            if type(s) is int:
                if s < 0:
                    fail("bad PCORE_OBJECT_START segment index")
            elif type(s) is not str:
                fail("bad PCORE_OBJECT_START segment")
            segs.append(s)
        n = take()
        if type(n) is not int or n < 0:
            fail("bad PCORE_OBJECT_START attribute count")
        tok = (code, tuple(segs), n)
    elif code == REGEXP:
        s = take()
        if type(s) is not str:
            fail("bad REGEXP payload")
        tok = (code, s)
    else:
        fail(f"unsupported extension {name}")
    if exact:
        if k != end:
            fail(f"extra data in {name} payload")
        return tok
    return tok, k


def mp_tokens_py(data: Buffer) -> list[Any]:
    """Pure-Python tokenizer (reference implementation; also used when the msgpack module is missing)."""
    toks: list[Any] = []
    _mp_prims(data, 0, len(data), toks, False)
    return toks


# Decoded extension tokens by extension number, then payload bytes, shared by all reads (tokens are
# immutable tuples).
_EXT_MEMOS: list[dict[bytes, Any]] = [{} for _ in range(256)]
_EXT_MEMO_MAX = 50_000


def mp_tokens(data: Buffer) -> list[Any]:
    """Tokens of a msgpack stream, decoded by the msgpack C extension.  Extension payloads are decoded by
    :func:`ext_token` (memoized: most extensions are repeated small tabulations).  Primitive tokens that
    Pcore does not use (native arrays/maps, bin, out-of-range integers) are rejected by :func:`xpp.pcore.read.build`."""
    if msgpack is None:
        return mp_tokens_py(data)
    unpacker = _mp_unpacker(data, _EXT_HOOK)
    try:
        unpacker.feed(data)
        toks: list[Any] = list(unpacker)
    except XppFormatError:
        raise
    except msgpack.FormatError as e:
        raise XppFormatError(f"invalid msgpack data at byte {unpacker.tell()}: {e}") from None
    except Exception as e:  # the extension's other errors: StackError, ValueError (limits), ...
        raise XppFormatError(f"invalid msgpack data: {e}") from None
    if _mp_pending(unpacker):
        raise XppFormatError("truncated msgpack data")
    return toks


def _mp_unpacker(data: Buffer, ext_hook: Callable[[int, bytes], Any]) -> Any:
    # No native arrays/maps/bin (Pcore never writes them), so every value is atomic.  The unpacker stops at
    # the end of the last complete value; a truncated last value is still pending then (see _mp_pending).
    return msgpack.Unpacker(
        None,
        raw=False,
        ext_hook=ext_hook,
        max_buffer_size=max(len(data), 1),
        max_array_len=0,
        max_map_len=0,
        max_bin_len=0,
        unicode_errors="surrogateescape",
        strict_map_key=False,
        use_list=True,
    )


def _mp_pending(unpacker: Any) -> bool:
    """Are there bytes the unpacker could not turn into a complete value?"""
    try:
        return bool(unpacker.read_bytes(1))
    except ValueError:  # "Cannot switch unpacking methods while an object is incomplete"
        return True


def _mp_ext_hook() -> Callable[[int, bytes], Any]:
    memos = _EXT_MEMOS

    def ext_hook(code: int, payload: bytes) -> Any:
        memo = memos[code]
        tok = memo.get(payload)
        if tok is None:
            tok = _mp_ext_token(code, payload, 0, len(payload))
            if len(memo) < _EXT_MEMO_MAX:
                memo[payload] = tok
        return tok

    return ext_hook


_EXT_HOOK = _mp_ext_hook()
