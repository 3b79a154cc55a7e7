"""Shared material of the C reader tests (tests/test_fastload_*.py): the guard that skips them without the
extension ``xpp._fastload``, the two verdicts compared (the C reader's and the complete Python reader's,
``xpp.pcore.read.build`` over ``xpp.pcore.tokens.mp_tokens``, which is the reference), the strict equality
``same`` (exact types, floats by bits, sharing), and the msgpack / Pcore building blocks of hand-made streams.
"""

from __future__ import annotations

import os
import struct
from types import ModuleType

import pytest

from puppet_xpp.grammar import ast
from puppet_xpp.xpp import pcore
from puppet_xpp.xpp.pcore import XppFormatError

REJECT = "<rejected>"

try:
    from puppet_xpp.xpp import _fastload as extension
except ImportError:  # pragma: no cover - depends on the build
    extension = None


def require_extension() -> ModuleType:
    """The C reader, for the module-level line of each tests/test_fastload_*.py module: skips that module when
    the extension is not built or not configured, and fails it under CI (``.ci/install`` builds it)."""
    if extension is None or pcore.C_LOAD is None:
        if os.environ.get("CI"):
            pytest.fail(
                "xpp._fastload is not built/configured (pip install -e . builds it with a C compiler)",
                pytrace=False,
            )
        pytest.skip("xpp._fastload is not built", allow_module_level=True)
    return extension


def c_load(data):
    v = extension.load(data)
    return REJECT if v is pcore.c.DECLINED else v


def complete(data):
    """The complete Python reader's verdict: the value, or REJECT."""
    try:
        vals = pcore.read.build(pcore.tokens.mp_tokens(data))
    except XppFormatError:
        return REJECT
    return vals[0] if len(vals) == 1 else REJECT


def same(a, b) -> bool:
    """Structural equality, stricter than ==: exact types, floats by bits, dict order, and the same
    sharing (an object met twice on one side is met twice, as one object, on the other)."""
    ids: dict = {}
    rev: dict = {}
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        t = type(x)
        if x is None or t in (bool, int, str):
            if x != y:
                return False
            continue
        if t is float:
            if struct.pack("<d", x) != struct.pack("<d", y):
                return False
            continue
        # containers and objects: identity pattern must match
        if id(x) in ids or id(y) in rev:
            if ids.get(id(x)) != id(y) or rev.get(id(y)) != id(x):
                return False
            continue
        ids[id(x)] = id(y)
        rev[id(y)] = id(x)
        if t is list:
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif t is dict:
            if len(x) != len(y):
                return False
            for (k1, v1), (k2, v2) in zip(x.items(), y.items()):
                stack.append((k1, k2))
                stack.append((v1, v2))
        elif t is ast.Regexp:
            stack.append((x.source, y.source))
        elif t is pcore.PType:
            stack.append((x.name, y.name))
            stack.append((x.values, y.values))
        elif t is pcore.PObject:
            stack.append((x.type_name, y.type_name))
            stack.append((x.attrs, y.attrs))
            stack.append((x.init_hash, y.init_hash))
        elif isinstance(x, ast.Node):
            for f in x._fields:
                stack.append((getattr(x, f), getattr(y, f)))
        else:
            raise AssertionError(f"unexpected value type {t}")
    return True


def agree(data):
    """Assert that the C reader and the complete reader agree on ``data``; return the value (or REJECT)."""
    c = c_load(data)
    ref = complete(data)
    if c is REJECT or ref is REJECT:
        assert c is REJECT and ref is REJECT, (
            data[:80],
            c if c is REJECT else "C accepted",
            ref if ref is REJECT else "Python accepted",
        )
    else:
        assert same(c, ref), data[:80]
    return c


# msgpack / Pcore stream building blocks
def u(n):
    return pcore.write.mp_uint_body(n)


def s(text):
    return pcore.write.mp_str(text)


def ext(code, payload):
    return pcore.write.mp_ext(code, payload)


def marker(segs, count):
    return ext(0x12, u(len(segs)) + b"".join(u(x) if type(x) is int else s(x) for x in segs) + u(count))


def inner(k):
    return ext(0x00, u(k))


def tab(k):
    return ext(0x01, u(k))


def array(n):
    return ext(0x10, u(n))


def hmap(n):
    return ext(0x11, u(n))


def i(n):
    return pcore.write.mp_int(n)


def locator(text="a", file="f.pp", line_index=b"\xd4\x10\x01\x00"):
    return (
        marker(["Puppet", "AST", "Locator"], 3 if line_index else 2) + s(text) + s(file) + (line_index or b"")
    )
