"""The model as the checker walks it: the model classes it tests against, each class's contained
attributes in Puppet's order (``CONTAINMENT``, what ``_pcore_contents`` yields), and Puppet's "idem" rule
(an expression known to have no effect).

The model classes are made at run time from the AST table (:mod:`puppet_xpp.grammar.ast`), so they are
typed loosely here; the checks import them by name from this module.
"""

from __future__ import annotations

import re
from typing import Any

from puppet_xpp.grammar import ast

TYPES: dict[str, Any] = ast.TYPES
Program = TYPES["Program"]
Nop = TYPES["Nop"]
BlockExpression = TYPES["BlockExpression"]
ApplyBlockExpression = TYPES["ApplyBlockExpression"]
ApplyExpression = TYPES["ApplyExpression"]
HostClassDefinition = TYPES["HostClassDefinition"]
FunctionDefinition = TYPES["FunctionDefinition"]
NamedDefinition = TYPES["NamedDefinition"]
TypeAlias = TYPES["TypeAlias"]
TypeDefinition = TYPES["TypeDefinition"]
Definition = TYPES["Definition"]
NodeDefinition = TYPES["NodeDefinition"]
LambdaExpression = TYPES["LambdaExpression"]
VariableExpression = TYPES["VariableExpression"]
AccessExpression = TYPES["AccessExpression"]
LiteralList = TYPES["LiteralList"]
LiteralHash = TYPES["LiteralHash"]
QualifiedName = TYPES["QualifiedName"]
QualifiedReference = TYPES["QualifiedReference"]
LiteralInteger = TYPES["LiteralInteger"]
LiteralFloat = TYPES["LiteralFloat"]
LiteralNumber = TYPES["LiteralNumber"]
LiteralString = TYPES["LiteralString"]
LiteralBoolean = TYPES["LiteralBoolean"]
LiteralUndef = TYPES["LiteralUndef"]
LiteralDefault = TYPES["LiteralDefault"]
LiteralValue = TYPES["LiteralValue"]
LiteralRegularExpression = TYPES["LiteralRegularExpression"]
ConcatenatedString = TYPES["ConcatenatedString"]
TextExpression = TYPES["TextExpression"]
CollectExpression = TYPES["CollectExpression"]
RelationshipExpression = TYPES["RelationshipExpression"]
ResourceOverrideExpression = TYPES["ResourceOverrideExpression"]
AbstractResource = TYPES["AbstractResource"]
AttributesOperation = TYPES["AttributesOperation"]
UnaryExpression = TYPES["UnaryExpression"]
UnaryMinusExpression = TYPES["UnaryMinusExpression"]
ParenthesizedExpression = TYPES["ParenthesizedExpression"]
ComparisonExpression = TYPES["ComparisonExpression"]
BooleanExpression = TYPES["BooleanExpression"]
RenderStringExpression = TYPES["RenderStringExpression"]
AssignmentExpression = TYPES["AssignmentExpression"]
VirtualQuery = TYPES["VirtualQuery"]


def _containment(cls: Any) -> tuple[tuple[str, bool], ...]:
    """(attribute, is_list) of the contained attributes of a model class, in Puppet's content order."""
    out = []
    for f in cls._fields:
        if f in ("locator", "offset", "length") or (cls._name == "Program" and f == "definitions"):
            continue
        t = cls._types[f]
        names = re.findall(r"[A-Za-z]\w*", t)
        if any(n in TYPES and n != "Locator" for n in names):
            out.append((f, t.startswith("Array[")))
    return tuple(out)


CONTAINMENT = {cls: _containment(cls) for cls in TYPES.values()}


def contents(node: Any) -> list[Any]:
    """The directly contained nodes of ``node`` in Puppet's order (``_pcore_contents``)."""
    out: list[Any] = []
    for f, is_list in CONTAINMENT.get(type(node), ()):
        v = getattr(node, f)
        if v is None:
            continue
        if is_list:
            out.extend(x for x in v if isinstance(x, ast.Node))
        elif isinstance(v, ast.Node):
            out.append(v)
    return out


def by_class(table: dict[str, Any], default: Any) -> Any:
    """A per-type resolver over a table keyed by model class name (nearest class in the hierarchy wins,
    else ``default``), memoized per class: the idem rule's and the labels' lookup."""
    cache: dict[type, Any] = {}

    def resolve(cls: type) -> Any:
        r = cache.get(cls, cache)
        if r is cache:
            r = default
            for k in cls.__mro__:
                name = k.__dict__.get("_name")
                if name in table:
                    r = table[name]
                    break
            cache[cls] = r
        return r

    return resolve


# ----------------------------------------------------------------------------------------------- idem


def _idem_block(o: Any) -> Any:
    return all(idem(s) for s in o.statements)


def _idem_if(o: Any) -> Any:
    return idem(o.test) and idem(o.then_expr) and idem(o.else_expr)


def _idem_case(o: Any) -> Any:
    return idem(o.test) and all(idem(opt) for opt in o.options)


def _idem_case_option(o: Any) -> Any:
    return all(idem(v) for v in o.values) and idem(o.then_expr)


_IDEM = by_class(
    {
        "Nop": True,
        "Literal": True,
        "LiteralList": True,
        "LiteralHash": True,
        "AccessExpression": True,
        "BinaryExpression": True,
        "MatchExpression": False,
        "RelationshipExpression": False,
        "AssignmentExpression": False,
        "UnaryExpression": True,
        "ParenthesizedExpression": lambda o: idem(o.expr),
        "RenderExpression": False,
        "RenderStringExpression": False,
        "BlockExpression": _idem_block,
        "ConcatenatedString": True,
        "HeredocExpression": True,
        "SelectorExpression": True,
        "ApplyExpression": False,
        "IfExpression": _idem_if,
        "CaseExpression": _idem_case,
        "CaseOption": _idem_case_option,
    },
    False,
)


def idem(o: Any) -> bool:
    """True if evaluating ``o`` is known to have no effect (Puppet's 'idem' rule)."""
    if o is None:
        return True
    r = _IDEM(type(o))
    return bool(r(o) if callable(r) else r)
