"""The optional C reader (xpp/_fastload.c, built by setup.py when a compiler is there): the same msgpack
reader over the bytes, building the AST objects directly.  It is configured here with the AST description
(from the same grammar.ast table); it declines (returns ``DECLINED``) on malformed or unusual input,
and the Python reader then decides.  PUPPET_XPP_PURE_PYTHON=1 in the environment disables it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from puppet_xpp.grammar import ast
from puppet_xpp.grammar.ast_base import line_starts
from puppet_xpp.xpp.pcore.base import PObject, PType, finish_pobject, object_params
from puppet_xpp.xpp.pcore.nodes import INFO

DECLINED = object()
_K_STR, _K_INT, _K_FLOAT, _K_BOOL, _K_EXACT, _K_ENUM, _K_INSTANCE, _K_LIST = range(1, 9)


def fast_kind(tstr: str) -> tuple[Any, ...]:
    """The type check of a Pcore type string as (code, optional, arg, min_length, element kind): the same
    test as :func:`xpp.pcore.nodes.check_expr` (reader variant), in a form the C reader and the C writer
    (:mod:`xpp.pcore.write`) take."""
    tstr = tstr.strip()
    simple = {"String": _K_STR, "Integer": _K_INT, "Float": _K_FLOAT, "Boolean": _K_BOOL}
    if tstr in simple:
        return (simple[tstr], False, None, 0, None)
    if tstr == "Any":
        return (_K_EXACT, False, ast.Regexp, 0, None)
    m = re.fullmatch(r"Optional\[(.*)\]", tstr)
    if m:
        k = fast_kind(m.group(1))
        return (k[0], True) + k[2:]
    m = re.fullmatch(r"Enum\[(.*)\]", tstr)
    if m:
        return (_K_ENUM, False, frozenset(v.strip().strip("'\"") for v in m.group(1).split(",")), 0, None)
    m = re.fullmatch(r"Array\[(.*?)(?:,\s*(\d+))?\]", tstr)
    if m:
        inner = m.group(1).strip()
        elem = (_K_INSTANCE, False, ast.TYPES[inner], 0, None) if inner in ast.TYPES else fast_kind(inner)
        return (_K_LIST, False, None, int(m.group(2) or 0), elem)
    if tstr not in ast.TYPES:
        raise ValueError(f"grammar.ast type {tstr!r} not understood by the Pcore reader")
    return (_K_INSTANCE, False, ast.TYPES[tstr], 0, None)


def _line_index(string: str, file: str) -> list[int]:
    return line_starts(string.encode("utf-8", "surrogateescape"))


def c_loader() -> Callable[[object, int], Any] | None:
    """``xpp._fastload.load`` configured with the AST description, or None (not built, disabled, or the
    description is beyond it)."""
    import os

    if os.environ.get("PUPPET_XPP_PURE_PYTHON"):
        return None
    try:
        from puppet_xpp.xpp import _fastload
    except ImportError:
        return None
    classes: list[tuple[Any, ...]] = []
    by_name: dict[str, int] = {}
    for info in INFO.values():
        cls = info.cls
        is_locator = cls is ast.Locator
        if is_locator and info.wire[:3] != ("string", "file", "line_index"):
            return None
        by_name[info.name] = len(classes)
        classes.append(
            (
                info.name,
                cls,
                info.wire,
                info.min,
                tuple(None if d is ast.REQ else d for d in info.defaults),
                tuple(fast_kind(cls._types[a]) for a in info.wire),
                is_locator,
                info.locslot,
                info.refslot,
            )
        )
    try:
        _fastload.configure(
            tuple(classes),
            by_name,
            DECLINED,
            ast.Regexp,
            PType,
            PObject,
            object_params,
            finish_pobject,
            _line_index,
        )
        _fastload.load(b"\xc0", -1)  # a build without the work budget argument is stale too
    except Exception as e:  # e.g. a stale build of the extension: the Python reader does the work
        import warnings

        warnings.warn(f"xpp._fastload not used: {e}", RuntimeWarning, stacklevel=2)
        return None
    return _fastload.load
