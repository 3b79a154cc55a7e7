"""The PRFC-23 envelope of an .xpp file: a MIME type line, a blank line, then the Pcore payload.

Grammar (PRFC-23 "XPP Content / Grammar")::

    Envelope  : MimeType BlankLine
    MimeType  : 'application/vnd.puppet.pcore' '+' BaseEncoding (';' Parameter '=' Value)*
    BaseEncoding : 'msgpack' | 'json'
    Parameter : 'document-type' | 'version' | /[\\w-]+/
    Value     : /[\\w-]+/
    BlankLine : '\\r'? '\\n' '\\r'? '\\n'

The writer emits ``application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1`` + ``\\n\\n`` (``+json``
for JSON).  The reader splits at the first blank line and accepts what the grammar allows with whitespace
(spaces, tabs, single line breaks) around ``;`` and ``=``, parameters in any order and unknown parameters
(ignored).  It requires ``document-type=xpp`` and ``version=1`` and rejects anything else (other MIME type or
encoding, a repeated parameter, no blank line, stray characters) with :class:`XppFormatError`.  Literals
are matched exactly (case-sensitive), as the grammar writes them.

API: ``header(fmt) -> bytes``, ``wrap(payload, fmt) -> bytes``, ``unwrap(data) -> (fmt, params, payload)``,
``looks_like_xpp(data) -> bool``.
"""

from __future__ import annotations

import re

from puppet_xpp.xpp.pcore import FORMATS, XppFormatError

__all__ = ["MIME_PREFIX", "header", "wrap", "unwrap", "looks_like_xpp", "XppFormatError"]

MIME_PREFIX = b"application/vnd.puppet.pcore+"
DOCUMENT_TYPE = "xpp"
VERSION = "1"
_HEADERS = {
    fmt: (f"application/vnd.puppet.pcore+{fmt}; document-type={DOCUMENT_TYPE}; version={VERSION}\n\n").encode(
        "ascii"
    )
    for fmt in FORMATS
}

_BLANK = re.compile(rb"\r?\n\r?\n")
_WS = rb"[ \t\r\n]*"
_TYPE = re.compile(rb"application/vnd\.puppet\.pcore\+(msgpack|json)(?=[ \t\r\n;]|\Z)")
_PARAM = re.compile(_WS + rb";" + _WS + rb"([A-Za-z0-9_-]+)" + _WS + rb"=" + _WS + rb"([A-Za-z0-9_-]+)")
_TAIL = re.compile(_WS + rb"\Z")
# Longest header we look at: the blank line must come before this many bytes.
MAX_HEADER = 4096


def header(fmt: str = "msgpack") -> bytes:
    try:
        return _HEADERS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r} (expected one of {FORMATS})") from None


def wrap(payload: bytes, fmt: str = "msgpack") -> bytes:
    """The envelope for ``fmt`` followed by ``payload``."""
    return header(fmt) + payload


def looks_like_xpp(data: bytes) -> bool:
    """Cheap check: does ``data`` start like a Pcore envelope?"""
    return bytes(data[: len(MIME_PREFIX)]) == MIME_PREFIX


def unwrap(data) -> tuple[str, dict, bytes]:
    """Split an .xpp document into (base encoding, parameters, payload).  Raises XppFormatError unless the
    envelope follows the grammar and says ``document-type=xpp`` and ``version=1``."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError("unwrap() needs bytes")
    data = bytes(data)
    m = _BLANK.search(data, 0, MAX_HEADER + 4)
    if m is None:
        if not looks_like_xpp(data):
            raise XppFormatError("not an XPP document (no 'application/vnd.puppet.pcore+' envelope)")
        raise XppFormatError("XPP envelope is not terminated by a blank line")
    head = data[: m.start()]
    t = _TYPE.match(head)
    if t is None:
        raise XppFormatError(
            "not an XPP document: envelope must start with 'application/vnd.puppet.pcore+msgpack' or '+json'"
        )
    fmt = t.group(1).decode("ascii")
    params: dict = {}
    pos = t.end()
    while True:
        p = _PARAM.match(head, pos)
        if p is None:
            break
        name, value = p.group(1).decode("ascii"), p.group(2).decode("ascii")
        if name in params:
            raise XppFormatError(f"XPP envelope repeats the parameter {name!r}")
        params[name] = value
        pos = p.end()
    if _TAIL.match(head, pos) is None:
        bad = head[pos : pos + 20]
        raise XppFormatError(f"malformed XPP envelope near {bad!r}")
    if params.get("document-type") != DOCUMENT_TYPE:
        raise XppFormatError(f"XPP envelope needs document-type=xpp, got {params.get('document-type')!r}")
    if params.get("version") != VERSION:
        raise XppFormatError(f"unsupported XPP version {params.get('version')!r} (expected version=1)")
    return fmt, params, data[m.end() :]
