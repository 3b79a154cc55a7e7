"""The wrong-type check's bridge to the one type system of the deep checks (D1's
:mod:`server.analysis.deep.types`: ``literal_mismatches(type_spec, value_node, resolve_alias)``,
Puppet's mismatch phrases or None).  This module only supplies the world's type aliases to it and keeps
a failing type model from costing any other finding."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from puppet_xpp.server.analysis.deep import types
from puppet_xpp.server.analysis.deep.world import Answers

__all__ = ["alias_resolver", "matches", "mismatch", "mismatches", "parameter_error"]

parameter_error = types.parameter_error


def alias_resolver(answers: Answers) -> Callable[[str], str | None]:
    """name -> the type expression a workspace type alias stands for (as written), or None."""

    def resolve(name: str) -> str | None:
        sym = answers.find_type_alias(name)
        if sym is None:
            return None
        _, sep, text = sym.signature.partition(" = ")
        return text if sep else None

    return resolve


def mismatches(type_text: str, value: Any, answers: Answers) -> list[str] | None:
    """Puppet's phrases (``expects an Integer value, got String``) when the literal ``value`` (an AST
    node) provably does not match the type written ``type_text``; None when it matches or nothing
    can be proven."""
    if not type_text:
        return None
    try:
        return types.literal_mismatches(type_text, value, alias_resolver(answers))
    except Exception:  # the type model's failure proves nothing (and costs no other finding)
        return None


def mismatch(type_text: str, value: Any, answers: Answers) -> str | None:
    """:func:`mismatches` joined by newlines (None: matches or unprovable)."""
    found = mismatches(type_text, value, answers)
    return "\n".join(found) if found else None


def matches(type_text: str, value: Any, answers: Answers) -> bool | None:
    """Is the literal ``value`` an instance of the type written ``type_text``?  None: not provable
    either way (not a literal, an unknown type or alias, the type model's failure)."""
    try:
        return types.matches(type_text, value, alias_resolver(answers))
    except Exception:  # the type model's failure proves nothing
        return None
