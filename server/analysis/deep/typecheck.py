"""The wrong-type check's bridge to the one type system of the deep checks (D1's
:mod:`server.analysis.deep.types`: ``literal_mismatches(type_spec, value_node, resolve_alias)``,
Puppet's mismatch phrases or None).  This module only supplies the world's type aliases to it and keeps
a failing type model from costing any other finding: "not provable" (the model's Unprovable, a
recursion too deep) is no finding; any other exception is a bug, handed to
:func:`server.analysis.deep.internal.swallowed` (reported by the check that asked, never dropped)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from puppet_xpp.server.analysis.deep import types
from puppet_xpp.server.analysis.deep.internal import swallowed
from puppet_xpp.server.analysis.deep.world import Answers

__all__ = ["alias_resolver", "matches", "mismatch", "mismatches", "parameter_error", "signatures_mismatch"]

parameter_error = types.parameter_error


_NO_ALIASES: Mapping[str, str] = {}


def alias_resolver(answers: Answers, local: Mapping[str, str] = _NO_ALIASES) -> Callable[[str], str | None]:
    """name -> the type expression a type alias stands for (as written), or None: ``local`` first (a
    built-in function's own local types, which shadow the workspace's), then the workspace's."""

    def resolve(name: str) -> str | None:
        own = local.get(name)
        if own is not None:
            return own
        sym = answers.find_type_alias(name)
        if sym is None:
            return None
        _, sep, text = sym.signature.partition(" = ")
        return text if sep else None

    return resolve


def mismatches(
    type_text: str, value: Any, answers: Answers, local: Mapping[str, str] = _NO_ALIASES
) -> list[str] | None:
    """Puppet's phrases (``expects an Integer value, got String``) when the literal ``value`` (an AST
    node) provably does not match the type written ``type_text``; None when it matches or nothing
    can be proven."""
    if not type_text:
        return None
    try:
        return types.literal_mismatches(type_text, value, alias_resolver(answers, local))
    except Exception as e:  # a bug of the type model: no finding from it, reported
        swallowed(e)
        return None


def mismatch(type_text: str, value: Any, answers: Answers) -> str | None:
    """:func:`mismatches` joined by newlines (None: matches or unprovable)."""
    found = mismatches(type_text, value, answers)
    return "\n".join(found) if found else None


def matches(
    type_text: str, value: Any, answers: Answers, local: Mapping[str, str] = _NO_ALIASES
) -> bool | None:
    """Is the literal ``value`` an instance of the type written ``type_text``?  None: not provable
    either way (not a literal, an unknown type or alias, the type model's failure)."""
    try:
        return types.matches(type_text, value, alias_resolver(answers, local))
    except Exception as e:  # a bug of the type model: not provable, reported
        swallowed(e)
        return None


def signatures_mismatch(
    entries: list[tuple[str, str]], value: Any, answers: Answers, local: Mapping[str, str] = _NO_ALIASES
) -> str | None:
    """Puppet's words when every signature of a function rejects the same argument ``value``:
    ``entries`` is each signature's (parameter type, parameter name) at that argument.  The type
    model's describer is asked for each signature's mismatch and merges them as Puppet's
    ``describe_signatures`` does (one parameter: ``parameter 'arg' expects a value of type Numeric,
    String, Array, or Hash, got Boolean``); None when they do not merge into one or cannot be proven."""
    from puppet_xpp.server.analysis.deep.types_describe import describe, merge_descriptions
    from puppet_xpp.server.analysis.deep.types_model import ALIAS_RESOLVER, PType, Unprovable
    from puppet_xpp.server.analysis.deep.types_normal import infer
    from puppet_xpp.server.analysis.deep.types_parse import value_of

    aliases = alias_resolver(answers, local)

    def resolve(name: str) -> tuple[str, PType] | None:
        text = aliases(name)
        parsed = types.parse_type(text) if text is not None else None
        return (name, parsed) if parsed is not None else None

    token = ALIAS_RESOLVER.set(resolve)
    try:
        actual = infer(value_of(value))
        found = []
        for index, (type_text, name) in enumerate(entries):
            expected = types.parse_type(type_text or "Any")
            if expected is None:
                return None
            found.append(describe(expected, actual, (("variant", index), ("parameter", name))))
        if not found or any(not f for f in found):
            return None
        merged = merge_descriptions(0, found)
        if len(merged) != 1:
            return None
        return merged[0].text().lstrip()
    except (Unprovable, RecursionError):  # not provable
        return None
    except Exception as e:  # a bug of the type model: no finding from it, reported
        swallowed(e)
        return None
    finally:
        ALIAS_RESOLVER.reset(token)
