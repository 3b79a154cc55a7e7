"""Per-class tables of the AST for the Pcore writer and readers, derived from grammar.ast (the generated
classes of the one table): wire order, defaults, attribute counts, and the type checks of every attribute
(as Puppet's ObjectReader asserts them), compiled once.
"""

from __future__ import annotations

import re

from puppet_xpp.grammar import ast as _ast


class _NodeInfo:
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


def _node_infos() -> dict:
    import operator

    infos = {}
    for _name, cls in _ast.CONCRETE.items():
        i = _NodeInfo()
        i.cls = cls
        i.name = cls._pcore_name
        i.wire = tuple(cls._wire)
        g = operator.attrgetter(*i.wire) if i.wire else (lambda o: ())
        i.getter = g if len(i.wire) != 1 else (lambda o, _g=g: (_g(o),))
        i.defaults = tuple(cls._defaults.get(a, _ast.REQ) for a in i.wire)
        i.min = cls._min
        i.max = len(i.wire)
        i.checks = None  # compiled below
        i.positioned = i.wire[:3] == ("locator", "offset", "length")
        # the wire slots that may hold a back-reference: the Locator, and one list of references
        i.locslot = i.wire.index("locator") if "locator" in i.wire else -1
        refs = [i.wire.index(a) for a in cls._ref_fields]
        if len(refs) > 1:
            raise ValueError(f"{cls._name}: more than one reference attribute")
        i.refslot = refs[0] if refs else -1
        infos[cls] = i
    return infos


_INFO = _node_infos()
_INFO_BY_NAME = {i.name: i for i in _INFO.values()}
_REGEXP = _ast.Regexp
_NODE = _ast.Node

_LOCATOR = _ast.Locator


def _check_expr(tstr: str, env: dict, lenient: bool = False) -> str:
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
        env["Regexp"] = _REGEXP
        return "type(x) is Regexp"
    m = re.fullmatch(r"Optional\[(.*)\]", tstr)
    if m:
        return f"(x is None or {_check_expr(m.group(1), env, lenient)})"
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
        if inner in _ast.TYPES:
            env[inner] = _ast.TYPES[inner]
            return f"(type(x) is list{size} and all([isinstance(x, {inner}) for x in x]))"
        return f"(type(x) is list{size} and all([{_check_expr(inner, env, lenient)} for x in x]))"
    if tstr not in _ast.TYPES:
        raise ValueError(f"grammar.ast type {tstr!r} not understood by the Pcore reader")
    env[tstr] = _ast.TYPES[tstr]
    return f"isinstance(x, {tstr})"


def _compile_checker(info: _NodeInfo, lenient: bool = False):
    """``check(vals) -> index of the first ill-typed value, or -1`` for one class, generated from
    ``cls._types`` (type assertions as Puppet's ObjectReader makes them).  ``lenient``: the writer's variant,
    which also admits subclasses of str/int/float."""
    env: dict = {}
    lines = ["def check(vals):", "    n = len(vals)"]
    for k, attr in enumerate(info.wire):
        if k >= info.min:
            lines.append(f"    if n <= {k}: return -1")
        lines.append(f"    x = vals[{k}]")
        lines.append(f"    if not ({_check_expr(info.cls._types[attr], env, lenient)}): return {k}")
    lines.append("    return -1")
    exec("\n".join(lines), env)
    return env["check"]


for _i in _INFO.values():
    _i.checks = _compile_checker(_i)
    _i.wchecks = _compile_checker(_i, lenient=True)


def _describe(v) -> str:
    if isinstance(v, _NODE):
        return v._name
    if v is None:
        return "Undef"
    return type(v).__name__
