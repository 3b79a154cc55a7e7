"""Duplicate resources: the same type and the same literal title declared twice in one body (one
statement list that a catalog evaluates as a whole: the file's top level, a class's, a defined type's
or a node's body, a block), which Puppet stops with ``Duplicate declaration: T[x] is already declared
at (file: F, line: L); cannot redeclare`` at the second declaration.

Only regular resources whose type and title are literal count, and a class/define body's resources
only when their title is literal (a define's own resources differ per title).  Branches of an ``if``
or ``case`` are bodies of their own (only one of them runs).  This is a per-file pass (it needs no
world): the language server runs it on the whole file after the per-statement checks."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from puppet_xpp.grammar import ast
from puppet_xpp.server.analysis.deep.finding import Finding, make
from puppet_xpp.server.analysis.deep.literals import literal_string, literal_strings, resource_ref

__all__ = ["duplicate_resources"]

# byte offset -> Puppet's 1-based line
LineOf = Callable[[int], int]

_BLOCKS = (ast.BlockExpression, ast.ApplyBlockExpression)


def _bodies(root: ast.Positioned) -> Iterator[list[ast.Positioned]]:
    """Every statement list under ``root`` (root's own first)."""
    stack: list[ast.Node] = [root]
    while stack:
        n = stack.pop()
        if type(n) in _BLOCKS:
            yield list(getattr(n, "statements", ()))
        elif type(n) is not ast.ResourceExpression and n is root:
            yield [n]  # a body of one statement
        stack.extend(n.children())


def duplicate_resources(program: ast.Program | None, path: str, line_of: LineOf) -> list[Finding]:
    """The duplicate declarations of one file."""
    if program is None or program.body is None:
        return []
    roots: list[ast.Positioned] = [program.body]  # (the definitions' bodies are in it)
    out: list[Finding] = []
    seen_lists: set[int] = set()
    for root in roots:
        for statements in _bodies(root):
            key = id(statements[0]) if statements else 0
            if key in seen_lists:
                continue
            seen_lists.add(key)
            out += _in_body(statements, path, line_of)
    return out


def _in_body(statements: list[ast.Positioned], path: str, line_of: LineOf) -> list[Finding]:
    first: dict[tuple[str, str], int] = {}
    out: list[Finding] = []
    for s in statements:
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
                if k in first:
                    ref = resource_ref(tkey, title)
                    out.append(
                        make(
                            "DEEP_DUPLICATE_RESOURCE",
                            path,
                            s.offset,
                            s.length,
                            {"first": first[k]},
                            resource=ref,
                            file=path,
                            line=str(line_of(first[k])),
                        )
                    )
                else:
                    first[k] = s.offset
    return out
