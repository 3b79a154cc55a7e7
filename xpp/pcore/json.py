"""Pcore's JSON base encoding: the writer transcodes a msgpack token stream to JSON text with the nesting
rules of Puppet's JSON::Packer; the reader turns JSON text back into the same tokens as the msgpack
tokenizer (the json module when it can, an iterative scanner for nesting deeper than it handles).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from itertools import islice
from json.encoder import encode_basestring as _json_str
from typing import Any, NoReturn

from puppet_xpp.grammar.ruby import float_to_s
from puppet_xpp.xpp.pcore.base import (
    ARRAY_START,
    INT_PAYLOAD,
    MAP_START,
    MAX_INT,
    MIN_INT,
    OBJECT_START,
    PCORE_OBJECT_START,
    Buffer,
    Reject,
    XppFormatError,
    XppWriteError,
)
from puppet_xpp.xpp.pcore.tokens import ext_token


def ruby_float_repr(f: float) -> str:
    """``Float#to_s`` of Ruby (what Puppet's JSON writer prints); NaN and infinities have no JSON form."""
    if f != f or f in (math.inf, -math.inf):
        raise XppWriteError(f"{f} cannot be written as JSON")
    return float_to_s(f)


def _json_scalar(v: Any) -> str:
    t = type(v)
    if t is str:
        return _json_str(v)
    if t is int:
        return str(v)
    if v is None:
        return "null"
    if t is bool:
        return "true" if v else "false"
    if t is float:
        return ruby_float_repr(v)
    raise AssertionError(t)


def tokens_to_json(toks: list[Any]) -> bytes:
    """JSON text for a token stream, with the nesting rules of Puppet's JSON::Packer (note §3.8): an
    extension is ``[number, payload...`` and a sequence start with count > 0 stays open for that many values."""
    out = ["["]
    app = out.append
    stack: list[int] = []  # remaining element counts of open sequence arrays

    def delim() -> None:
        while stack and stack[-1] == 1:
            app("]")
            stack.pop()
        if stack:
            stack[-1] -= 1
        app(",")

    for t in toks:
        if type(t) is not tuple:
            app(_json_scalar(t))
            delim()
            continue
        code = t[0]
        if code == PCORE_OBJECT_START:
            segs, count = t[1], t[2]
            app("[18," + ",".join([str(len(segs))] + [_json_scalar(s) for s in segs] + [str(count)]))
            seq = count
        else:
            app("[" + ",".join([str(code)] + [_json_scalar(x) for x in t[1:]]))
            seq = t[1] if code in (ARRAY_START, OBJECT_START) else (2 * t[1] if code == MAP_START else 0)
        if seq > 0:
            app(",")
            stack.append(seq)
        else:
            app("]")
            delim()
    if len(out) > 1:
        out.pop()  # the last ","
    app("]")
    text = "".join(out)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise XppWriteError(f"string is not valid Unicode, cannot be written as JSON: {e}") from None


class _ExtNo(int):
    """An extension number (first element of a JSON array) in the flattened JSON stream."""

    __slots__ = ()


def no_constant(name: str) -> NoReturn:
    raise XppFormatError(f"invalid JSON number {name}")


def json_tokens(data: Buffer) -> list[Any]:
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        raise XppFormatError(f"JSON payload is not UTF-8: {e}") from None
    try:
        doc = json.loads(text, parse_constant=no_constant)
    except RecursionError:  # deeper than the json module goes: scan it iteratively
        flat = json_flat_scan(text)
    except ValueError as e:  # JSONDecodeError
        raise XppFormatError(f"invalid JSON: {e}") from None
    else:
        try:
            return json_doc_tokens(doc)
        except Reject:  # an unusual shape (e.g. a payload running past its array): the general way
            flat = json_flat_doc(doc)
    return json_group(flat)


def json_doc_tokens(doc: Any) -> list[Any]:
    """Tokens of a parsed JSON stream in one pass, for streams whose extension payloads lie inside their
    array (what writers produce).  Gives the same tokens as flattening + grouping; raises Reject for
    anything else (the general way then decides)."""
    if type(doc) is not list:
        raise Reject
    toks: list[Any] = []
    app = toks.append
    int_payload = INT_PAYLOAD
    stack = [iter(doc)]
    while stack:
        for v in stack[-1]:
            t = v.__class__
            if t is list:
                n = len(v)
                code = v[0] if n else None
                if code.__class__ is not int:
                    raise Reject
                if code in int_payload:
                    if n < 2:
                        raise Reject
                    k = v[1]
                    if k.__class__ is not int or k < 0 or (code == OBJECT_START and k < 1):
                        raise Reject
                    app((code, k))
                    if n > 2:
                        stack.append(islice(v, 2, None))
                        break
                    continue
                try:
                    tok, k = ext_token(code, v, 1, n, False)
                except XppFormatError:
                    raise Reject from None
                app(tok)
                if k < n:
                    stack.append(islice(v, k, None))
                    break
                continue
            if t is dict or t is _ExtNo:
                raise Reject
            if t is int and not (MIN_INT <= v <= MAX_INT):
                raise Reject
            app(v)
        else:
            stack.pop()
    return toks


def json_flat_doc(doc: Any) -> list[Any]:
    """Flatten a parsed JSON stream.  Puppet's JSON::Unpacker reads the arrays as one flat stream: an array
    starts an extension, its first element is the extension number."""
    if type(doc) is not list:
        raise XppFormatError("JSON stream is not an array")
    flat: list[Any] = []
    app = flat.append
    stack = [iter(doc)]
    while stack:
        for v in stack[-1]:
            t = type(v)
            if t is list:
                if not v or type(v[0]) is not int:
                    raise XppFormatError("JSON extension array without an extension number")
                if not (MIN_INT <= v[0] <= MAX_INT):
                    raise XppFormatError("integer out of 64-bit signed range")
                app(_ExtNo(v[0]))
                stack.append(islice(v, 1, None))
                break
            if t is dict:
                raise XppFormatError("JSON object in a Pcore stream (maps are MAP_START extensions)")
            if t is int and not (MIN_INT <= v <= MAX_INT):
                raise XppFormatError("integer out of 64-bit signed range")
            app(v)
        else:
            stack.pop()
    return flat


_JSON_TOKEN = re.compile(
    r'[ \t\n\r]*(?:(?P<p>[\[\],])|(?P<s>")|(?P<n>-?(?:0|[1-9][0-9]*)(?P<f>(?:\.[0-9]+)?'
    r"(?:[eE][+-]?[0-9]+)?))|(?P<l>true|false|null))"
)
_JSON_WS = re.compile(r"[ \t\n\r]*")
_LITERALS = {"true": True, "false": False, "null": None}


def _ws_end(text: str, i: int) -> int:
    """Index after the JSON whitespace at ``text[i:]``."""
    m = _JSON_WS.match(text, i)
    return m.end() if m is not None else i


def json_flat_scan(text: str) -> list[Any]:
    """The same flat stream as ``json_flat_doc(json.loads(text))``, scanned without recursion (for
    nesting deeper than the json module handles).  Accepts the same JSON subset: arrays and scalars."""
    scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
    flat: list[Any] = []
    app = flat.append
    i = _ws_end(text, 0)
    if text[i : i + 1] != "[":
        raise XppFormatError("JSON stream is not an array")
    i += 1
    depth = 1
    need = "first"  # "first": a value or "]"; "value": a value; "sep": "," or "]"
    match = _JSON_TOKEN.match
    n = len(text)
    while True:
        m = match(text, i)
        if m is None:
            raise XppFormatError(f"invalid JSON at character {i}")
        i = m.end()
        kind = m.lastgroup
        if kind == "p":
            c = m.group("p")
            if c == "[":
                if need == "sep" or need == "ext":
                    raise XppFormatError(f"invalid JSON at character {i - 1}")
                depth += 1
                need = "ext"
                continue
            if c == "]":
                if need == "ext":
                    raise XppFormatError("JSON extension array without an extension number")
                if need == "value" or (need == "first" and depth > 1):
                    raise XppFormatError(f"invalid JSON at character {i - 1}")
                depth -= 1
                need = "sep"
                if depth == 0:
                    if _ws_end(text, i) != n:
                        raise XppFormatError("invalid JSON: extra data")
                    return flat
                continue
            if need != "sep":
                raise XppFormatError(f"invalid JSON at character {i - 1}")
            need = "value"
            continue
        if need == "sep":
            raise XppFormatError(f"invalid JSON at character {m.start(kind or 0)}")
        v: Any
        if kind == "s":
            try:
                v, i = scanstring(text, i, True)
            except ValueError as e:
                raise XppFormatError(f"invalid JSON: {e}") from None
        elif kind == "n":
            if m.group("f"):
                v = float(m.group("n"))
            else:
                try:
                    v = int(m.group("n"))
                except ValueError:  # more digits than int() converts
                    raise XppFormatError("integer out of 64-bit signed range") from None
                if not (MIN_INT <= v <= MAX_INT):
                    raise XppFormatError("integer out of 64-bit signed range")
        else:
            v = _LITERALS[m.group("l")]
        if need == "ext":
            if type(v) is not int:
                raise XppFormatError("JSON extension array without an extension number")
            v = _ExtNo(v)
        app(v)
        need = "sep"


def json_group(flat: list[Any]) -> list[Any]:
    # Group each extension number with its payload values (plain values that follow it in the flat
    # stream; an extension number inside a payload fails the payload's type checks).
    toks: list[Any] = []
    tapp = toks.append
    k = 0
    n = len(flat)
    while k < n:
        v = flat[k]
        k += 1
        if type(v) is _ExtNo:
            tok, k = ext_token(int(v), flat, k, n, False)
            tapp(tok)
        else:
            tapp(v)
    return toks
