"""Pcore serialization of Puppet ASTs: writer and reader, msgpack and JSON base encodings.

The stream is what Puppet 7's ``Serializer.new(writer, type_by_reference: true)`` produces (research note
``xpp-format.md`` §3): a flat sequence of primitive values and *extensions* (ext type = extension number),
with two back-reference tables:

* writer-level ("inner") tabulation: every string, every PCORE_OBJECT_START / OBJECT_START marker and every
  regexp value gets the next index in one table keyed by value; a repeat is written as INNER_TABULATION(i).
  The name segments of a PCORE_OBJECT_START share that table and are written as plain integers when repeated.
* serializer-level tabulation by object identity: every list, dict, regexp and object takes the next index
  when first written; writing the same object again gives TABULATION(i).  So the one Locator is written once
  and ``Program.definitions`` is a list of TABULATIONs pointing at nodes of the body.

AST nodes are written *by type name* (``Puppet::AST::<Name>``) with the values of ``cls._wire`` in order,
trailing values equal to their default dropped.  Everything about the AST comes from ``grammar.ast``.

Modules (this package's ``__init__`` is the facade: ``dumps``, ``loads`` and the public names)
-------------------------------------------------------------------------------------------
``base``    extension numbers, errors, generic Pcore objects, the work bound of a read;
``nodes``   per-class tables and type checks derived from grammar.ast;
``write``   the msgpack writer (both tabulation tables);
``json``    JSON: the writer's transcoding and the reader's JSON tokens;
``tokens``  msgpack bytes -> tokens;
``read``    the complete reader (tokens -> values, canonical errors);
``fast``    the fast reader, generated from the AST table at the first read (falls back to the complete one);
``c``       configuration of the optional C reader ``puppet_xpp.xpp._fastload`` (``xpp/_fastload.c``).

API
---
``dumps(value, fmt="msgpack", *, check=True) -> bytes``
                                           serialize one value (normally a ``Program``); fmt 'msgpack'|'json';
                                           ``check`` asserts AST attribute types first (as Puppet's reader will).
``loads(data, fmt="msgpack")``             read one value back; raises :class:`XppFormatError` (and nothing
                                           else) for malformed or unsupported input.
``PType`` / ``PObject`` / ``IncludedObject``  generic Pcore objects (``Pcore::*`` type values, instances of an
                                           included object type) used by :mod:`xpp.result`.

Values the writer accepts: None, bool, int (64-bit), float, str, list, dict, :class:`grammar.ast.Regexp`, AST
nodes (concrete classes of ``grammar.ast``), :class:`PType` and :class:`IncludedObject` (subclasses of
str/int/float are written as their base type).  Anything else, an ill-typed AST attribute, an out-of-range
integer, an object reached twice where the readers accept no back-reference (below; unless ``check=False``,
which writes it as one), or (JSON only) a non-finite float or a string that is not valid Unicode raises
:class:`XppWriteError`.  JSON output is produced by transcoding the msgpack stream, so both encodings carry
the same tabulation by construction.  The writer and the reader are iterative: nesting depth is not bounded
by Python's recursion limit (JSON beyond the json module's limit is read by an iterative scanner).

The reader accepts exactly the extensions an AST / ParseResult document uses (INNER_TABULATION, TABULATION,
ARRAY_START, MAP_START, PCORE_OBJECT_START, OBJECT_START, REGEXP) and rebuilds the objects the parser builds:
every value is type-checked against the attribute's Pcore type (``cls._types``), missing trailing values get
their defaults, and object identity (one Locator, definitions shared with the body) is kept.  Documented
strictness beyond Puppet's: ``LiteralRegularExpression.value`` must be a Regexp; integers must fit 64 bits;
native msgpack arrays/maps/bin, DEFAULT, SENSITIVE and the runtime extensions (time, version, ...) are
rejected; trailing data after the value is rejected; ``Locator.line_index`` given as nil is recomputed from
the text.  A back-reference (TABULATION) is accepted only where Puppet's model shares an object: a node's
``locator`` attribute referring to a Locator, and each entry of ``Program.definitions`` referring (once) to
a node read since that Program started.  Any other repeated or cyclic reference is malformed: the value
read is then always a tree (plus those two kinds of sharing), so anything that walks it is linear in the
size of the input.  Repeated strings and computed line indexes are bounded too: at most
``base.WORK_PER_BYTE`` characters per input byte (plus ``WORK_BASE``), else the input is malformed.
"""

from __future__ import annotations

import gc
import importlib
from typing import Any

from puppet_xpp.xpp.pcore.base import (
    FORMATS,
    Buffer,
    IncludedObject,
    PObject,
    PType,
    XppError,
    XppFormatError,
    XppWriteError,
    work_budget,
)
from puppet_xpp.xpp.pcore.c import DECLINED, c_loader
from puppet_xpp.xpp.pcore.write import dumps_msgpack

# The Python readers and the JSON transcoder (and msgpack, which the token reader uses) are imported when
# first used: a writer -- every ``--compile`` worker -- needs none of them (the C reader, C_LOAD, is the
# one ``loads`` tries first).  ``pcore.read``, ``pcore.json``... stay reachable as attributes.
_LAZY = {"fast", "json", "read", "tokens"}

__all__ = [
    "XppError",
    "XppFormatError",
    "XppWriteError",
    "dumps",
    "loads",
    "PType",
    "PObject",
    "IncludedObject",
    "FORMATS",
    "MSGPACK_LOADER",
    "ruby_float_repr",
]


def dumps(value: Any, fmt: str = "msgpack", *, check: bool = True) -> bytes:
    """Serialize ``value`` (normally a ``Program``) as Puppet's ``Serializer(type_by_reference: true)`` does.
    ``check``: assert every AST attribute value against its Pcore type first (what Puppet's reader will
    assert), so that an ill-formed AST raises XppWriteError instead of giving a document Puppet rejects."""
    data = dumps_msgpack(value, check)
    if fmt == "msgpack":
        return data
    if fmt == "json":
        from puppet_xpp.xpp.pcore.json import tokens_to_json
        from puppet_xpp.xpp.pcore.tokens import mp_tokens

        return tokens_to_json(mp_tokens(data))
    raise ValueError(f"unknown format {fmt!r} (expected one of {FORMATS})")


def loads(data: Buffer, fmt: str = "msgpack") -> Any:
    """Read one Pcore-serialized value (no envelope).  Raises :class:`XppFormatError` on any malformed,
    truncated or unsupported input."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r} (expected one of {FORMATS})")
    # The reader allocates many objects and creates no reference cycles: the cyclic garbage collector
    # would only rescan them (it is paused while reading, which halves the time on a large AST).
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _loads(data, fmt)
    finally:
        if paused:
            gc.enable()


def _loads(data: Buffer, fmt: str) -> Any:
    try:
        budget: int | None = work_budget(len(data))
    except TypeError:  # not sized: the readers reject it
        budget = None
    if fmt == "msgpack" and C_LOAD is not None:
        v = C_LOAD(data, -1 if budget is None else budget)
        if v is not DECLINED:
            return v
    from puppet_xpp.xpp.pcore.fast import fast_build
    from puppet_xpp.xpp.pcore.json import json_tokens
    from puppet_xpp.xpp.pcore.read import build
    from puppet_xpp.xpp.pcore.tokens import mp_tokens

    toks = mp_tokens(data) if fmt == "msgpack" else json_tokens(data)
    if budget is None:
        budget = work_budget(len(toks))
    try:
        return fast_build(toks, budget)
    except Exception:  # malformed, or beyond the fast path: the complete reader decides
        pass
    values = build(toks, budget)
    if len(values) != 1:
        raise XppFormatError("empty stream" if not values else "trailing data after the value")
    return values[0]


#: the C reader (``puppet_xpp.xpp._fastload.load``, configured) or None: not built, or disabled by
#: PUPPET_XPP_PURE_PYTHON=1.  ``loads`` looks it up at every call, so tests and benches may set it to None (the
#: Python readers only) or wrap it.
C_LOAD = c_loader()
#: which msgpack reader ``loads`` tries first: "C (xpp._fastload)" or "Python"
MSGPACK_LOADER = "C (xpp._fastload)" if C_LOAD is not None else "Python"


def __getattr__(name: str) -> Any:
    """The submodules imported on first use (``_LAZY``), and ``ruby_float_repr`` from ``pcore.json``."""
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    if name == "ruby_float_repr":
        from puppet_xpp.xpp.pcore.json import ruby_float_repr

        return ruby_float_repr
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
