"""Duplicate resources: the same type and the same literal title declared twice in one body (one
statement list that a catalog evaluates as a whole: the file's top level, a class's, a defined type's
or a node's body, a block; the operands of a relationship chain there too), which Puppet stops with ``Duplicate declaration: T[x] is already declared
at (file: F, line: L); cannot redeclare`` at the second declaration.

Only regular resources whose type and title are literal count, and a class/define body's resources
only when their title is literal (a define's own resources differ per title).  Branches of an ``if``
or ``case`` are bodies of their own (only one of them runs).  It needs no world: the engine's walk
checks each body it meets, the file's pass its top level (:mod:`server.analysis.deep.engine`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from puppet_xpp.grammar import ast
from puppet_xpp.server.analysis.deep.finding import Finding, make
from puppet_xpp.server.analysis.deep.literals import literal_string, literal_strings, resource_ref

__all__ = ["Declaration", "declarations", "duplicated", "in_body", "with_lines"]

# byte offset -> Puppet's 1-based line
LineOf = Callable[[int], int]


def _declarations(statements: Iterable[ast.Positioned]) -> Iterator[ast.Positioned]:
    """A body's statements, the operands of a relationship chain each as one (all are evaluated)."""
    for s in statements:
        if isinstance(s, ast.RelationshipExpression):
            yield from _declarations([s.left_expr, s.right_expr])
        else:
            yield s


# (type key, title key, title, offset, length): one declaration of a literal type and title
Declaration = tuple[str, tuple[str, str], str, int, int]


def declarations(statements: Iterable[ast.Positioned]) -> list[Declaration]:
    """What of a body's statements may be a duplicate: each regular resource's literal titles."""
    out = []
    for s in _declarations(statements):
        if type(s) is not ast.ResourceExpression or s.form != "regular":
            continue
        type_name = literal_string(s.type_name)
        if type_name is None:
            continue
        tkey = type_name.lower().lstrip(":")
        for body in s.bodies:
            if type(body.title) is ast.LiteralDefault:
                continue
            for title in literal_strings(body.title) or ():
                k = (tkey, title.lower().lstrip(":") if tkey == "class" else title)
                out.append((tkey, k, title, s.offset, s.length))
    return out


def in_body(statements: Iterable[ast.Positioned], path: str) -> list[Finding]:
    """The duplicate declarations of one body.  The message's line of the first declaration is
    :func:`with_lines`' (the findings of a statement are kept while statements above it move)."""
    return duplicated(declarations(statements), path)


def duplicated(found: Iterable[Declaration], path: str) -> list[Finding]:
    """The duplicates among one body's declarations (:func:`declarations`), in order."""
    first: dict[tuple[str, str], int] = {}
    out: list[Finding] = []
    for tkey, k, title, offset, length in found:
        if k in first:
            ref = resource_ref(tkey, title)
            out.append(
                make(
                    "DEEP_DUPLICATE_RESOURCE",
                    path,
                    offset,
                    length,
                    {"first": first[k]},
                    resource=ref,
                    file=path,
                    line="?",
                )
            )
        else:
            first[k] = offset
    return out


def with_lines(findings: Iterable[Finding], line_of: LineOf) -> list[Finding]:
    """The findings with each duplicate's message naming the line of the first declaration."""
    out = []
    for f in findings:
        if f.code == "DEEP_DUPLICATE_RESOURCE":
            args = dict(f.args)
            args["line"] = str(line_of(int(f.data["first"])))
            fresh = make(f.code, f.path, f.offset, f.length, f.data, f.column_reported, **args)
            f = fresh
        out.append(f)
    return out
