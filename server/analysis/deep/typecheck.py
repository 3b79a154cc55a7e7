"""The wrong-type check's bridge to the one type system of the deep checks (D1's
:mod:`server.analysis.deep.types`: ``literal_mismatch(type_spec, value_node, resolve_alias)``, Puppet's
mismatch phrase or None).  This module only supplies the world's type aliases to it and keeps a
missing or failing type model from costing any other finding."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from puppet_xpp.server.analysis.deep.world import Answers

__all__ = ["mismatch"]


def _literal_mismatch() -> Callable[..., str | None] | None:
    try:
        module = importlib.import_module("puppet_xpp.server.analysis.deep.types")
    except ImportError:  # (the type model not there yet: no wrong-type findings)
        return None
    found = getattr(module, "literal_mismatch", None)
    return found if callable(found) else None


def alias_resolver(answers: Answers) -> Callable[[str], str | None]:
    """name -> the type expression a workspace type alias stands for (as written), or None."""

    def resolve(name: str) -> str | None:
        sym = answers.find_type_alias(name)
        if sym is None:
            return None
        sig = sym.signature
        _, sep, text = sig.partition(" = ")
        return text if sep else None

    return resolve


def mismatch(type_text: str, value: Any, answers: Answers) -> str | None:
    """Puppet's phrase (``expects an Integer value, got String``) when the literal ``value`` (an AST
    node) provably does not match the type written ``type_text``; None when it matches or nothing
    can be proven."""
    if not type_text:
        return None
    check = _literal_mismatch()
    if check is None:
        return None
    try:
        return check(type_text, value, alias_resolver(answers))
    except Exception:  # the type model's failure proves nothing (and costs no other finding)
        return None
