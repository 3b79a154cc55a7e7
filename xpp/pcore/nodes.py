"""Per-class tables of the AST for the Pcore writer and readers, derived from grammar.ast (the generated
classes of the one table): wire order, defaults, attribute counts, and the type checks of every attribute
(as Puppet's ObjectReader asserts them), compiled once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from puppet_xpp.grammar import ast


class NodeInfo:
    """What the writer and the readers need of one concrete AST class, computed once from grammar.ast."""

    __slots__ = (
        "cls",
        "name",
        "wire",
        "getter",
        "defaults",
        "min",
        "max",
        "checks",
        "wchecks",
        "positioned",
        "locslot",
        "refslot",
    )
    cls: type[ast.Node]
    name: str  # Pcore name
    wire: tuple[str, ...]
    getter: Callable[[Any], tuple[Any, ...]]  # the attribute values in wire order
    defaults: tuple[Any, ...]  # per wire slot (ast.REQ: required)
    min: int
    max: int
    checks: Callable[[Sequence[Any]], int]  # the reader's type checks (see _compile_checker)
    wchecks: Callable[[Sequence[Any]], int]  # the writer's
    positioned: bool
    locslot: int
    refslot: int


def _one(g: Callable[[Any], Any]) -> Callable[[Any], tuple[Any, ...]]:
    """A getter of one attribute, returning it as a 1-tuple (as attrgetter of several names does)."""
    return lambda o: (g(o),)


def _node_infos() -> dict[type[ast.Node], NodeInfo]:
    import operator

    infos: dict[type[ast.Node], NodeInfo] = {}
    for _name, cls in ast.CONCRETE.items():
        i = NodeInfo()
        i.cls = cls
        i.name = cls._pcore_name
        i.wire = tuple(cls._wire)
        g: Callable[[Any], Any] = operator.attrgetter(*i.wire) if i.wire else (lambda o: ())
        i.getter = g if len(i.wire) != 1 else _one(g)
        i.defaults = tuple(cls._defaults.get(a, ast.REQ) for a in i.wire)
        i.min = cls._min
        i.max = len(i.wire)
        i.positioned = i.wire[:3] == ("locator", "offset", "length")
        # the wire slots that may hold a back-reference: the Locator, and one list of references
        i.locslot = i.wire.index("locator") if "locator" in i.wire else -1
        refs = [i.wire.index(a) for a in cls._ref_fields]
        if len(refs) > 1:
            raise ValueError(f"{cls._name}: more than one reference attribute")
        i.refslot = refs[0] if refs else -1
        infos[cls] = i
    return infos


INFO = _node_infos()
INFO_BY_NAME = {i.name: i for i in INFO.values()}


def check_expr(tstr: str, env: dict[str, Any], lenient: bool = False) -> str:
    """A Python expression testing ``x`` against a Pcore type string of the AST table (names it needs are
    put into ``env``)."""
    tstr = tstr.strip()
    simple = {"String": "str", "Integer": "int", "Float": "float", "Boolean": "bool"}
    if tstr in simple:
        if lenient and tstr == "Integer":  # the writer accepts subclasses (it writes them as the base)
            return "(isinstance(x, int) and type(x) is not bool)"
        if lenient and tstr != "Boolean":
            return f"isinstance(x, {simple[tstr]})"
        return f"type(x) is {simple[tstr]}"
    if tstr == "Any":
        # Only LiteralRegularExpression.value is typed Any; the parser always puts a Regexp there.
        env["Regexp"] = ast.Regexp
        return "type(x) is Regexp"
    m = re.fullmatch(r"Optional\[(.*)\]", tstr)
    if m:
        return f"(x is None or {check_expr(m.group(1), env, lenient)})"
    m = re.fullmatch(r"Enum\[(.*)\]", tstr)
    if m:
        name = f"E{len(env)}"
        env[name] = frozenset(v.strip().strip("'\"") for v in m.group(1).split(","))
        return f"({'isinstance(x, str)' if lenient else 'type(x) is str'} and x in {name})"
    m = re.fullmatch(r"Array\[(.*?)(?:,\s*(\d+))?\]", tstr)
    if m:
        inner = m.group(1).strip()
        lo = int(m.group(2) or 0)
        size = f" and len(x) >= {lo}" if lo else ""
        if inner in ast.TYPES:
            env[inner] = ast.TYPES[inner]
            return f"(type(x) is list{size} and all([isinstance(x, {inner}) for x in x]))"
        return f"(type(x) is list{size} and all([{check_expr(inner, env, lenient)} for x in x]))"
    if tstr not in ast.TYPES:
        raise ValueError(f"grammar.ast type {tstr!r} not understood by the Pcore reader")
    env[tstr] = ast.TYPES[tstr]
    return f"isinstance(x, {tstr})"


def _compile_checker(info: NodeInfo, lenient: bool = False) -> Callable[[Sequence[Any]], int]:
    """``check(vals) -> index of the first ill-typed value, or -1`` for one class, generated from
    ``cls._types`` (type assertions as Puppet's ObjectReader makes them).  ``lenient``: the writer's variant,
    which also admits subclasses of str/int/float."""
    env: dict[str, Any] = {}
    lines = ["def check(vals):", "    n = len(vals)"]
    for k, attr in enumerate(info.wire):
        if k >= info.min:
            lines.append(f"    if n <= {k}: return -1")
        lines.append(f"    x = vals[{k}]")
        lines.append(f"    if not ({check_expr(info.cls._types[attr], env, lenient)}): return {k}")
    lines.append("    return -1")
    exec("\n".join(lines), env)
    check: Callable[[Sequence[Any]], int] = env["check"]
    return check


def _deferred_checker(info: NodeInfo, attr: str, lenient: bool) -> Callable[[Sequence[Any]], int]:
    """A checker compiled on its first call, which then takes its place on ``info``.  Compiling the
    ~200 checkers of the AST at import took 15-45 ms of every cold ``--compile`` process (the generated
    source of each is compiled by ``exec``), most of them for classes a run never meets, and all the
    reader's when nothing is read.  A caller that kept the stub still gets the compiled checker (kept in
    the stub) after the first call."""
    compiled: list[Callable[[Sequence[Any]], int]] = []

    def check(vals: Sequence[Any]) -> int:
        if not compiled:
            compiled.append(_compile_checker(info, lenient))
            setattr(info, attr, compiled[0])
        return compiled[0](vals)

    return check


for _i in INFO.values():
    _i.checks = _deferred_checker(_i, "checks", False)
    _i.wchecks = _deferred_checker(_i, "wchecks", True)


def describe(v: Any) -> str:
    """The type of ``v`` as Puppet's type-mismatch messages name it."""
    if isinstance(v, ast.Node):
        return v._name
    if v is None:
        return "Undef"
    return type(v).__name__
