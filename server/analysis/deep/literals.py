"""The values the deep checks can know statically: literal names and titles written in the source.

Anything computed (a variable, an interpolation, a function's result) is not literal: the checks then
say nothing (issue 30: never report what cannot be proven)."""

from __future__ import annotations

from puppet_xpp.grammar import ast

__all__ = ["class_names", "literal_string", "literal_strings", "resource_ref"]


def literal_string(node: object) -> str | None:
    """The string a node evaluates to when it is written literally: a quoted string without
    interpolation, a bare word; else None."""
    t = type(node)
    if t is ast.LiteralString or t is ast.QualifiedName:
        value = getattr(node, "value", None)
        return value if isinstance(value, str) else None
    if t is ast.ConcatenatedString:
        parts = []
        for seg in getattr(node, "segments", ()):
            if type(seg) is not ast.LiteralString:
                return None
            parts.append(seg.value)
        return "".join(parts)
    return None


def literal_strings(node: object) -> list[str] | None:
    """A title or a list of titles written literally (an array title: each), else None."""
    if type(node) is ast.LiteralList:
        out = []
        for v in getattr(node, "values", ()):
            s = literal_string(v)
            if s is None:
                return None
            out.append(s)
        return out
    s = literal_string(node)
    return None if s is None else [s]


def class_names(node: object) -> list[tuple[str, object]] | None:
    """The class names an argument of include/contain/require names, with the node naming each:
    a string or bare word, ``Class['x']``, ``Class[x]``, or a list of those.  None: not literal."""
    t = type(node)
    if t is ast.LiteralList:
        out: list[tuple[str, object]] = []
        for v in getattr(node, "values", ()):
            names = class_names(v)
            if names is None:
                return None
            out.extend(names)
        return out
    if isinstance(node, ast.AccessExpression):
        left = node.left_expr
        keys = list(node.keys)
        if type(left) is ast.QualifiedReference and left.value == "class" and len(keys) == 1:
            s = literal_string(keys[0])
            if s is None and type(keys[0]) is ast.QualifiedReference:
                s = keys[0].cased_value
            return None if s is None else [(s, node)]
        return None
    if t is ast.QualifiedReference:  # `include Foo`: the class Foo
        return [(getattr(node, "cased_value", ""), node)]
    s = literal_string(node)
    return None if s is None else [(s, node)]


def capitalized(name: str) -> str:
    """A type or class name as Puppet writes it in a reference: ``foo::bar`` -> ``Foo::Bar``."""
    return "::".join(seg[:1].upper() + seg[1:] for seg in name.lstrip(":").split("::"))


def resource_ref(type_name: str, title: str) -> str:
    """``Type[title]`` as Puppet prints a resource (a class: ``Class[Foo::Bar]``)."""
    if type_name.lower() == "class":
        return f"Class[{capitalized(title.lower())}]"
    return f"{capitalized(type_name.lower())}[{title}]"
