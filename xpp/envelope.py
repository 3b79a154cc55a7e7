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

Integrity (this project's extension, see docs/xpp-format.md): the writer adds the parameter
``checksum=sha256-<64 lowercase hex digits>``, the SHA-256 of the payload bytes.  A reader that finds it
verifies it and rejects the document on a mismatch (a flipped bit or a truncation can otherwise leave a
well-formed but different AST); a document without it (any other PRFC-23 writer) is read unchecked.  A
``checksum`` with another algorithm is rejected (it cannot be verified).

API: ``header(fmt, checksum=None, params=None)``, ``wrap(payload, fmt, checksum=False, params=None)``,
``unwrap(data) -> (fmt, params, payload)``, ``looks_like_xpp(data) -> bool``.
"""

from __future__ import annotations

import hashlib
import re

from puppet_xpp.xpp.pcore import FORMATS, XppFormatError

__all__ = ["MIME_PREFIX", "header", "wrap", "unwrap", "looks_like_xpp", "payload_checksum", "XppFormatError"]

MIME_PREFIX = b"application/vnd.puppet.pcore+"
DOCUMENT_TYPE = "xpp"
VERSION = "1"
_HEADERS = {
    fmt: (f"application/vnd.puppet.pcore+{fmt}; document-type={DOCUMENT_TYPE}; version={VERSION}\n\n").encode(
        "ascii"
    )
    for fmt in FORMATS
}

CHECKSUM_PARAM = "checksum"
CHECKSUM_ALGO = "sha256"
_CHECKSUM = re.compile(r"sha256-([0-9a-f]{64})\Z")

_TOKEN = re.compile(r"[A-Za-z0-9_-]+\Z")
_BLANK = re.compile(rb"\r?\n\r?\n")
_WS = rb"[ \t\r\n]*"
_TYPE = re.compile(rb"application/vnd\.puppet\.pcore\+(msgpack|json)(?=[ \t\r\n;]|\Z)")
_PARAM = re.compile(_WS + rb";" + _WS + rb"([A-Za-z0-9_-]+)" + _WS + rb"=" + _WS + rb"([A-Za-z0-9_-]+)")
_TAIL = re.compile(_WS + rb"\Z")
# Longest header we look at: the blank line must come before this many bytes.
MAX_HEADER = 4096


def header(fmt: str = "msgpack", checksum: str | None = None, params: dict[str, str] | None = None) -> bytes:
    """The envelope line + blank line.  ``params`` (name -> value, both ``[A-Za-z0-9_-]+``) follow
    ``version``; ``checksum`` (a ``sha256-<hex>`` value) comes last."""
    try:
        h = _HEADERS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r} (expected one of {FORMATS})") from None
    extra = dict(params or {})
    if checksum is not None:
        extra[CHECKSUM_PARAM] = checksum
    if not extra:
        return h
    for k, v in extra.items():
        if k in ("document-type", "version") or not (_TOKEN.match(k) and _TOKEN.match(v)):
            raise ValueError(f"bad envelope parameter {k}={v!r}")
    return h[:-2] + "".join(f"; {k}={v}" for k, v in extra.items()).encode("ascii") + b"\n\n"


def payload_checksum(payload: bytes) -> str:
    """The ``checksum`` parameter value of ``payload``."""
    return f"{CHECKSUM_ALGO}-{hashlib.sha256(payload).hexdigest()}"


def wrap(
    payload: bytes, fmt: str = "msgpack", checksum: bool = False, params: dict[str, str] | None = None
) -> bytes:
    """The envelope for ``fmt`` (extra ``params``; the payload's checksum when ``checksum``) + ``payload``."""
    return header(fmt, payload_checksum(payload) if checksum else None, params) + payload


def looks_like_xpp(data: bytes) -> bool:
    """Cheap check: does ``data`` start like a Pcore envelope?"""
    return bytes(data[: len(MIME_PREFIX)]) == MIME_PREFIX


def unwrap(data: bytes | bytearray | memoryview) -> tuple[str, dict[str, str], bytes]:
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
    params: dict[str, str] = {}
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
    payload = data[m.end() :]
    want = params.get(CHECKSUM_PARAM)
    if want is not None:
        c = _CHECKSUM.match(want)
        if c is None:
            raise XppFormatError(f"unsupported XPP checksum {want[:24]!r} (expected sha256-<64 hex digits>)")
        if hashlib.sha256(payload).hexdigest() != c.group(1):
            raise XppFormatError("XPP payload does not match its checksum (damaged or truncated file)")
    return fmt, params, payload
