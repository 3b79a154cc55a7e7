"""Reader step 2, fast path: a recursive reader generated from the AST table (one function per class, the
attributes read and type-checked inline).  It accepts a subset of what the complete reader
(:mod:`xpp.pcore.read`) accepts: the same checks, plus no nesting beyond Python's recursion limit and no
unusual shapes; on *any* exception ``loads`` falls back to the complete reader, which then gives the
result or the canonical error message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from puppet_xpp.grammar import ast
from puppet_xpp.xpp.pcore.base import (
    MAX_INT,
    MIN_INT,
    PObject,
    PType,
    Reject,
    finish_pobject,
    object_params,
)
from puppet_xpp.xpp.pcore.nodes import INFO, check_expr

_PENDING = object()  # serializer-table slot of an object whose attributes are being read


def _fast_source() -> tuple[str, dict[str, Any]]:
    env: dict[str, Any] = {}
    cats = {
        "Integer": "int",
        "Boolean": "raw",
        "Float": "raw",
        "String": "str",
        "Optional[String]": "str",
        "Locator": "loc",
    }
    # A resolved PCORE_OBJECT_START marker is stored in the writer table as a closure reading that many
    # attributes (so a repeated marker, INNER_TABULATION(k), is read by calling wtab[k]).
    L = [
        "def make(nxt, bud):",
        "    wtab = []; wapp = wtab.append; stab = []; sapp = stab.append",
        "    def value(t):",
        "        c = t.__class__",
        "        if c is tuple:",
        "            code = t[0]",
        "            if code == 0:",
        "                w = wtab[t[1]]",
        "                c = w.__class__",
        "                if c is FN: return w()",
        "                if c is str:",
        "                    bud[0] -= len(w)",
        "                    if bud[0] < 0: raise Reject",
        "                    return w",
        "                return special(w)",
        "            if code == 1: raise Reject",
        "            if code == 18: return fresh(t)()",
        "            if code == 16:",
        "                k = len(stab); sapp(PENDING); lst = []; app = lst.append",
        "                for _ in range(t[1]):",
        "                    x = nxt()",
        "                    c = x.__class__",
        "                    if c is tuple and x[0] == 0:",
        "                        w = wtab[x[1]]",
        "                        app(w() if w.__class__ is FN else value(x))",
        "                    elif c is int and MIN_INT <= x <= MAX_INT: app(x)",
        "                    else: app(value(x))",
        "                stab[k] = lst",
        "                return lst",
        "            if code == 17:",
        "                k = len(stab); sapp(PENDING); d = {}",
        "                for _ in range(t[1]):",
        "                    key = value(nxt())",
        "                    d[key] = value(nxt())",
        "                stab[k] = d",
        "                return d",
        "            if code == 19:",
        "                wapp(t)",
        "                return objstart(t[1])",
        "            if code == 48:",
        "                wapp(t); r = Regexp(t[1]); sapp(r)",
        "                return r",
        "            raise Reject",
        "        if c is str:",
        "            wapp(t)",
        "            return t",
        "        if c is int:",
        "            if MIN_INT <= t <= MAX_INT: return t",
        "            raise Reject",
        "        if t is None or c is bool or c is float: return t",
        "        raise Reject",
        "    def special(w):",
        "        code = w[0]",
        "        if code == 48:",
        "            r = Regexp(w[1]); sapp(r)",
        "            return r",
        "        if code == 19: return objstart(w[1])",
        "        raise Reject",
        "    def fresh(t):",
        "        segs = []",
        "        for s in t[1]:",
        "            if s.__class__ is int:",
        "                x = wtab[s]",
        "                if x.__class__ is not str: raise Reject",
        "                segs.append(x)",
        "            else:",
        "                wapp(s); segs.append(s)",
        "        name = '::'.join(segs)",
        "        fn = R.get(name)",
        "        if fn is None:",
        "            if not name.startswith('Pcore::'): raise Reject",
        "            fn = ptype",
        "        m = fn(st, t[2], name)",
        "        wapp(m)",
        "        return m",
        "    def ptype(st, count, name):",
        "        def rp():",
        "            o = PType(name); k = len(stab); sapp(PENDING)",
        "            o.values = [value(nxt()) for _ in range(count)]",
        "            stab[k] = o",
        "            return o",
        "        return rp",
        "    def objstart(n):",
        "        tv = value(nxt())",
        "        if not (tv.__class__ is PType and tv.name == 'Pcore::ObjectType' and len(tv.values) == 1):",
        "            raise Reject",
        "        names, required, defaults = object_params(tv.values[0])",
        "        m = n - 1",
        "        if not required <= m <= len(names): raise Reject",
        "        o = PObject(tv.values[0]['name'], {}, tv.values[0]); k = len(stab); sapp(PENDING)",
        "        vals = [value(nxt()) for _ in range(m)]",
        "        finish_pobject(o, vals, names, defaults)",
        "        stab[k] = o",
        "        return o",
    ]
    L.append("    st = (nxt, value, stab, sapp, wtab, wapp, bud)")
    L.append("    def read():")
    L.append("        v = value(nxt())")
    L.append("        try: nxt()")
    L.append("        except StopIteration: return v")
    L.append("        raise Reject")
    L.append("    return read")
    # one module-level factory per class: called once per PCORE_OBJECT_START marker of a document, it
    # returns the closure reading an instance (the reader state comes in as ``st``)
    names = []
    for info in INFO.values():
        cls = info.cls
        cname = cls._name
        env["C_" + cname] = cls
        fn = "m_" + cname
        names.append((info.name, fn))
        L.append(f"def {fn}(st, count, name):")
        if info.min == info.max:
            L.append(f"    if count != {info.min}: raise Reject")
        else:
            L.append(f"    if not {info.min} <= count <= {info.max}: raise Reject")
        L.append("    nxt, value, stab, sapp, wtab, wapp, bud = st")
        L.append("    def r():")
        L.append("        k = len(stab); sapp(PENDING)")
        checks = []
        for k, attr in enumerate(info.wire):
            tstr = cls._types[attr]
            cat = "enum" if tstr.startswith("Enum[") else cats.get(tstr, "value")
            pad = "        "
            if k >= info.min:
                L.append(f"        if count > {k}:")
                pad = "            "
            if k == info.refslot:
                # only back-references to nodes read since this node started, each once
                L.append(f"{pad}t = nxt()")
                L.append(f"{pad}if t.__class__ is not tuple or t[0] != 16: raise Reject")
                L.append(f"{pad}k2 = len(stab); sapp(PENDING); a{k} = []; seen = set()")
                L.append(f"{pad}for _ in range(t[1]):")
                L.append(f"{pad}    x = nxt()")
                L.append(f"{pad}    if x.__class__ is not tuple or x[0] != 1: raise Reject")
                L.append(f"{pad}    j = x[1]")
                L.append(f"{pad}    if j <= k or j in seen or j >= len(stab): raise Reject")
                L.append(f"{pad}    seen.add(j); a{k}.append(stab[j])")
                L.append(f"{pad}stab[k2] = a{k}")
            elif cat == "loc":
                L.append(f"{pad}t = nxt()")
                L.append(f"{pad}a{k} = stab[t[1]] if t.__class__ is tuple and t[0] == 1 else value(t)")
            elif cat in ("int", "raw"):
                L.append(f"{pad}a{k} = nxt()")
            elif cat in ("str", "enum"):
                L.append(f"{pad}t = nxt()")
                L.append(f"{pad}if t.__class__ is str: wapp(t); a{k} = t")
                L.append(f"{pad}elif t.__class__ is tuple and t[0] == 0:")
                L.append(f"{pad}    a{k} = wtab[t[1]]; bud[0] -= len(a{k})")
                L.append(f"{pad}    if bud[0] < 0: raise Reject")
                L.append(f"{pad}else: a{k} = value(t)")
            else:
                L.append(f"{pad}t = nxt()")
                L.append(f"{pad}if t.__class__ is tuple and t[0] == 0:")
                L.append(f"{pad}    w = wtab[t[1]]")
                L.append(f"{pad}    a{k} = w() if w.__class__ is FN else value(t)")
                L.append(f"{pad}else: a{k} = value(t)")
            expr = check_expr(tstr, env)
            if cat == "int":
                expr = f"{expr} and MIN_INT <= x <= MAX_INT"
            if k >= info.min:
                d = cls._defaults[attr]
                L.append(f"{pad}x = a{k}")
                L.append(f"{pad}if not ({expr}): raise Reject")
                L.append("        else:")
                L.append(f"            a{k} = {'[]' if isinstance(d, list) else repr(d)}")
            else:
                checks.append((k, expr))
        for k, expr in checks:
            L.append(f"        x = a{k}")
            L.append(f"        if not ({expr}): raise Reject")
        L.append(f"        o = NEW(C_{cname})")
        for k, attr in enumerate(info.wire):
            L.append(f"        o.{attr} = a{k}")
        if cls is ast.Locator:
            L.append("        if a2 is None:")
            L.append("            bud[0] -= len(a0)")
            L.append("            if bud[0] < 0: raise Reject")
            L.append("            o.line_index = make_locator(a0, a1).line_index")
        L.append("        stab[k] = o")
        L.append("        return o")
        L.append("    return r")
    L.append("R = {" + ", ".join(f"{n!r}: {f}" for n, f in names) + "}")
    env.update(
        {
            "PENDING": _PENDING,
            "Reject": Reject,
            "MIN_INT": MIN_INT,
            "MAX_INT": MAX_INT,
            "Regexp": ast.Regexp,
            "PType": PType,
            "PObject": PObject,
            "object_params": object_params,
            "finish_pobject": finish_pobject,
            "NEW": object.__new__,
            "make_locator": ast.make_locator,
            "FN": type(lambda: None),
        }
    )
    return "\n".join(L), env


def _compile_fast() -> Callable[[Callable[[], Any], list[int]], Callable[[], Any]]:
    src, env = _fast_source()
    exec(compile(src, "<xpp.pcore fast reader>", "exec"), env)
    make: Callable[[Callable[[], Any], list[int]], Callable[[], Any]] = env["make"]
    return make


# Generated and compiled on the first read, not at import: every process importing xpp.pcore would
# otherwise pay for it (~35 ms), and ``--compile`` writes without reading on a cold run.
_FAST_MAKE: Callable[[Callable[[], Any], list[int]], Callable[[], Any]] | None = None


def prepare() -> None:
    """Generate and compile the reader now (e.g. before forking workers that will all read)."""
    global _FAST_MAKE
    if _FAST_MAKE is None:
        _FAST_MAKE = _compile_fast()


def fast_build(toks: list[Any], budget: int | None = None) -> Any:
    """The single value of ``toks``, or raise (anything) when the fast path cannot read it.  ``budget``:
    the work bound (:func:`xpp.pcore.base.work_budget`), None: unbounded."""
    make = _FAST_MAKE
    if make is None:
        prepare()
        make = _FAST_MAKE
        assert make is not None
    return make(iter(toks).__next__, [budget if budget is not None else 1 << 62])()
