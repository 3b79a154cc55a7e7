"""Reader step 2, the complete reader: tokens -> values.  Iterative (nesting depth is not limited by Python's
stack); every value is type-checked against its attribute's Pcore type; back-references are accepted only
where Puppet's model shares objects (see :func:`_check_reference`).  It gives the canonical error message
for any malformed stream.
"""

from __future__ import annotations

from typing import Any

from puppet_xpp.grammar.ast import Locator, Node, Regexp, make_locator
from puppet_xpp.xpp.pcore.base import (
    ARRAY_START,
    INNER_TABULATION,
    MAP_START,
    MAX_INT,
    MIN_INT,
    OBJECT_START,
    PCORE_OBJECT_START,
    REGEXP,
    TABULATION,
    PObject,
    PType,
    fail,
    finish_pobject,
    object_params,
    over_budget,
)
from puppet_xpp.xpp.pcore.nodes import INFO_BY_NAME, describe


class _Frame:
    """An open container: ``left`` values still to come; ``info``: a node's NodeInfo, an included
    object's (names, defaults), or an array's _Refs; ``extra``: the stab slot (OBJECT_START: the count)."""

    __slots__ = ("kind", "obj", "left", "vals", "info", "extra")

    def __init__(
        self, kind: int, obj: Any, left: int, vals: Any = None, info: Any = None, extra: Any = None
    ) -> None:
        self.kind = kind
        self.obj = obj
        self.left = left
        self.vals = vals
        self.info = info
        self.extra = extra


_K_ARRAY, _K_MAP, _K_NODE, _K_PTYPE, _K_OTYPE, _K_POBJ = range(6)


def _finish_node(f: _Frame, bud: list[int]) -> Any:
    info = f.info
    vals = f.vals
    k = info.checks(vals)
    if k >= 0:
        attr = info.wire[k]
        fail(f"{info.name}[{attr}] has wrong type, expects {info.cls._types[attr]}, got {describe(vals[k])}")
    obj = f.obj
    info.cls.__init__(obj, *vals)
    if info.cls is Locator and obj.line_index is None:
        bud[0] -= len(obj.string)
        if bud[0] < 0:
            over_budget()
        obj.line_index = make_locator(obj.string, obj.file).line_index
    return obj


def build(toks: list[Any], budget: int | None = None) -> list[Any]:
    """The values of a token stream; ``budget``: the work bound (:func:`xpp.pcore.base.work_budget`), None: unbounded."""
    bud = [budget if budget is not None else 1 << 62]
    wtab: list[Any] = []  # writer-level table
    stab: list[Any] = []  # serializer-level table
    opened: set[int] = set()  # stab indexes of objects whose values are being read (a reference is a cycle)
    stack: list[_Frame] = []
    results: list[Any] = []
    obj: Any
    v: Any
    ntok = len(toks)
    i = 0
    while i < ntok:
        t = toks[i]
        i += 1
        fresh = True
        if type(t) is tuple and t[0] == INNER_TABULATION:
            k = t[1]
            if k >= len(wtab):
                fail(f"INNER_TABULATION index {k} out of range")
            t = wtab[k]
            fresh = False
            if type(t) is str:
                bud[0] -= len(t)
                if bud[0] < 0:
                    over_budget()
        tt = type(t)
        if tt is not tuple:
            if tt is str:
                if fresh:
                    wtab.append(t)
            elif tt is int:
                if t > MAX_INT or t < MIN_INT:
                    fail("integer out of 64-bit signed range")
            elif not (t is None or tt is bool or tt is float):
                fail(
                    f"unexpected {tt.__name__} value (Pcore writes arrays and maps as extensions, "
                    "and no binary values)"
                )
            v = t
        else:
            code = t[0]
            if code == TABULATION:
                k = t[1]
                if k >= len(stab):
                    fail(f"TABULATION index {k} out of range")
                if k in opened:
                    fail("cyclic reference")
                v = stab[k]
                _check_reference(stack[-1] if stack else None, k, v)
            elif code == PCORE_OBJECT_START:
                if fresh:
                    segs = []
                    for s in t[1]:
                        if type(s) is int:
                            if s >= len(wtab) or type(wtab[s]) is not str:
                                fail("bad PCORE_OBJECT_START segment index")
                            segs.append(wtab[s])
                        else:
                            wtab.append(s)
                            segs.append(s)
                    t = (code, "::".join(segs), t[2])
                    wtab.append(t)
                name, count = t[1], t[2]
                if count > ntok - i:
                    fail(f"{name}: attribute count {count} exceeds the remaining data")
                info = INFO_BY_NAME.get(name)
                if info is not None:
                    if not info.min <= count <= info.max:
                        fail(
                            f"Feature count mismatch for {name}. Expected {info.min} - {info.max}, "
                            f"actual {count}"
                        )
                    obj = info.cls.__new__(info.cls)
                    f = _Frame(_K_NODE, obj, count, [], info, len(stab))
                    stab.append(obj)
                elif name.startswith("Pcore::"):
                    obj = PType(name)
                    f = _Frame(_K_PTYPE, obj, count, obj.values, None, len(stab))
                    stab.append(obj)
                else:
                    fail(f"No implementation mapping found for Puppet Type {name}")
                if count:
                    opened.add(f.extra)
                    stack.append(f)
                    continue
                v = _finish_node(f, bud) if f.kind == _K_NODE else obj
            elif code == ARRAY_START:
                n = t[1]
                v = []
                stab.append(v)
                if n:
                    if n > ntok - i:
                        fail(f"array size {n} exceeds the remaining data")
                    opened.add(len(stab) - 1)
                    stack.append(_Frame(_K_ARRAY, v, n, None, _refs_of(stack), len(stab) - 1))
                    continue
            elif code == MAP_START:
                n = t[1]
                v = {}
                stab.append(v)
                if n:
                    if 2 * n > ntok - i:
                        fail(f"map size {n} exceeds the remaining data")
                    opened.add(len(stab) - 1)
                    stack.append(_Frame(_K_MAP, v, 2 * n, [], None, len(stab) - 1))
                    continue
            elif code == OBJECT_START:
                if fresh:
                    wtab.append(t)
                n = t[1]
                if n > ntok - i:
                    fail(f"object size {n} exceeds the remaining data")
                stack.append(_Frame(_K_OTYPE, None, 1, None, None, n - 1))
                continue
            elif code == REGEXP:
                if fresh:
                    wtab.append(t)
                v = Regexp(t[1])
                stab.append(v)
            else:  # pragma: no cover - tokens are validated when built
                fail(f"unsupported extension {code}")
        # deliver v to the innermost open container, closing every container that becomes complete
        while True:
            if not stack:
                results.append(v)
                break
            f = stack[-1]
            kind = f.kind
            if kind == _K_NODE:
                f.vals.append(v)
            elif kind == _K_ARRAY:
                f.obj.append(v)
            elif kind == _K_PTYPE or kind == _K_POBJ:
                f.vals.append(v)
            elif kind == _K_MAP:
                if len(f.vals):
                    key = f.vals.pop()
                    try:
                        f.obj[key] = v
                    except TypeError:
                        fail("unhashable map key")
                else:
                    f.vals.append(v)
            else:  # _K_OTYPE: v is the type of an included object
                if not (isinstance(v, PType) and v.name == "Pcore::ObjectType" and len(v.values) == 1):
                    fail("OBJECT_START must be followed by a Pcore::ObjectType")
                names, required, defaults = object_params(v.values[0])
                n = f.extra
                if not required <= n <= len(names):
                    fail(
                        f"Feature count mismatch for {v.values[0]['name']}. Expected {required} - "
                        f"{len(names)}, actual {n}"
                    )
                obj = PObject(v.values[0]["name"], {}, v.values[0])
                stab.append(obj)
                stack.pop()
                if n:
                    opened.add(len(stab) - 1)
                    stack.append(_Frame(_K_POBJ, obj, n, [], (names, defaults), len(stab) - 1))
                    break
                finish_pobject(obj, [], names, defaults)
                v = obj
                continue
            f.left -= 1
            if f.left:
                break
            stack.pop()
            obj = f.obj
            opened.discard(f.extra)
            if kind == _K_NODE:
                v = _finish_node(f, bud)
            elif kind == _K_POBJ:
                finish_pobject(obj, f.vals, *f.info)
                v = obj
            else:
                v = obj
    if stack:
        fail("unexpected end of input")
    return results


class _Refs:
    """An array being read as a node's reference attribute (Program.definitions): each element must be a
    back-reference to a node read since that node started (i.e. inside its body), each at most once."""

    __slots__ = ("after", "seen")

    def __init__(self, after: int):
        self.after = after
        self.seen: set[int] = set()


def _refs_of(stack: list[_Frame]) -> _Refs | None:
    """The _Refs of an array starting now, or None when it is not a reference attribute's value."""
    if stack:
        f = stack[-1]
        if f.kind == _K_NODE and f.info.refslot == len(f.vals):
            return _Refs(f.extra)
    return None


def _check_reference(f: _Frame | None, k: int, v: Any) -> None:
    """A TABULATION(k) read inside frame ``f``: accepted only where Puppet's model shares an object (the
    Locator of a node, an entry of Program.definitions); any other repeated reference would turn the tree
    into a DAG whose walk is exponential in the size of the file, so it is malformed."""
    if f is not None:
        if f.kind == _K_NODE:
            if f.info.locslot == len(f.vals) and type(v) is Locator:
                return
        elif f.kind == _K_ARRAY and f.info is not None:
            refs = f.info
            if k > refs.after and k not in refs.seen and isinstance(v, Node):
                refs.seen.add(k)
                return
    fail(
        f"TABULATION {k}: a repeated reference to an already read object (Puppet's model shares only the "
        "Locator and the nodes of Program.definitions)"
    )
