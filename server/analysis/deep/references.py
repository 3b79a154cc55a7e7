"""Resource references in relationship metaparameters (``require``, ``before``, ``notify``,
``subscribe``): ``Class['x']`` of a class that exists nowhere can never be in the catalog (Puppet:
``Could not find resource 'Class[X]' in parameter 'require'``, at the parameter's line), and
``T['x']`` of a resource type that exists nowhere stops the evaluation (``Resource type not found: T``,
at the reference).  A reference to a class or resource that exists but is not declared is a catalog
question (not static): no finding."""

from __future__ import annotations

from collections.abc import Iterator

from puppet_xpp.grammar import ast
from puppet_xpp.server.analysis.deep.context import Place
from puppet_xpp.server.analysis.deep.finding import Finding, make
from puppet_xpp.server.analysis.deep.internal import guarded
from puppet_xpp.server.analysis.deep.literals import capitalized, literal_string
from puppet_xpp.server.analysis.deep.names import ALWAYS_CLASSES, missing_module, suggestions
from puppet_xpp.server.analysis.deep.world import Answers, key_of

__all__ = ["RELATIONSHIP_METAPARAMETERS", "check_references"]

RELATIONSHIP_METAPARAMETERS = frozenset({"require", "before", "notify", "subscribe"})


def _references(value: ast.Node) -> Iterator[ast.AccessExpression]:
    if type(value) is ast.LiteralList:
        for v in value.values:
            yield from _references(v)
    elif isinstance(value, ast.AccessExpression) and type(value.left_expr) is ast.QualifiedReference:
        yield value


@guarded
def check_references(expr: ast.ResourceExpression, place: Place, answers: Answers) -> list[Finding]:
    """The findings of the relationship metaparameters of one resource expression (a bug inside: one
    ``DEEP_INTERNAL_ERROR``, :mod:`server.analysis.deep.internal`)."""
    if not place.complete or place.guarded:
        return []
    out: list[Finding] = []
    for body in expr.bodies:
        for op in body.operations:
            if type(op) is not ast.AttributeOperation or op.attribute_name not in RELATIONSHIP_METAPARAMETERS:
                continue
            for ref in _references(op.value_expr):
                found = _reference(ref, op, place, answers)
                if found is not None:
                    out.append(found)
    return out


def _reference(
    ref: ast.AccessExpression, op: ast.AttributeOperation, place: Place, answers: Answers
) -> Finding | None:
    """A reference's finding; a class's is placed at its parameter (Puppet reports that line)."""
    left = ref.left_expr
    assert isinstance(left, ast.QualifiedReference)
    type_key = key_of(left.cased_value)
    if type_key == "class":
        if len(ref.keys) != 1:
            return None
        title = literal_string(ref.keys[0])
        if title is None:
            return None
        cls = key_of(title)
        if not cls or cls in ALWAYS_CLASSES or answers.find_class(cls) is not None:
            return None
        if missing_module(cls, answers) is not None:
            return None  # (the missing module's note comes from where its names are declared)
        return make(
            "DEEP_UNKNOWN_CLASS_REFERENCE",
            place.path,
            op.offset,
            op.length,
            {"suggestions": suggestions(cls, answers.names_of("class")), "name": cls, "offset": ref.offset},
            resource=f"Class[{capitalized(cls)}]",
            param=op.attribute_name,
        )
    if (
        answers.find_define(type_key) is not None
        or answers.find_resource_type(type_key) is not None
        or answers.resource_type_known(type_key)
        or answers.find_class(type_key) is not None
        or answers.find_type_alias(type_key) is not None
    ):
        return None
    if "::" in type_key:
        if missing_module(type_key, answers) is not None:
            return None
    elif answers.missing_dependencies(place.path):
        return None
    near = sorted(set(suggestions(type_key, answers.names_of("resource_type"))) | set(suggestions(type_key, answers.names_of("define"))))  # fmt: skip
    return make(
        "DEEP_UNKNOWN_TYPE_REFERENCE",
        place.path,
        left.offset,
        left.length,
        {"suggestions": near, "name": type_key},
        name=capitalized(type_key),
    )
