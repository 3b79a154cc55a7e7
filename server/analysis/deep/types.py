"""Puppet's type system for literal values: can a literal be proven to violate a declared type, and with
what words would Puppet reject it (issue 30, the "literal of the wrong type" deep check).

The API the deep checks call (keep it stable)::

    literal_mismatch(type_spec, value, resolve_alias) -> str | None
        type_spec: a type's source text (``Param.type``: ``Optional[String[1]]``) or a grammar AST type
            expression node; value: the literal's AST node; resolve_alias(name) -> the alias's definition
            (the ``ast.TypeAlias`` node of ``type Stdlib::Port = Integer[0, 65535]``), or a pair (the
            name as declared, its type text or type expression node), or its type text or node alone, or
            None when unknown.  The first two are best: Puppet's words name the alias as it is declared
            (``Stdlib::IP::Address`` however a parameter spells it).  It is called with the name as
            written (``"Stdlib::Port"``): match it without case.
        Returns Puppet's words relative to the parameter -- ``expects an Integer value, got String``,
        ``entry 'x' expects ...``, ``index 0 expects ...``, ``expects size to be at least 1, got 0`` --
        or None when the value matches or nothing can be proven (a variable, a call, an interpolation,
        an unknown type or alias, Sensitive/Timestamp/..., a regexp we cannot run as Ruby does).
        When Puppet reports several mismatches for one value (two Struct entries), they are joined by
        "\\n", in Puppet's order: :func:`literal_mismatches` gives them as a list.
        The same words serve a class's or define's parameter (given or defaulted: Puppet checks the
        resource's whole hash, defaults included, with TypeMismatchDescriber.validate_parameters), a
        Puppet-language function's (the same, its subject the function) and a Ruby 4.x function's
        argument (describe_signatures: ``'f' parameter 'p' <words>`` for one signature and one
        mismatch; checked against one-parameter signatures by the tests).  Mind what the caller knows
        and this module does not: ``undef`` given to a class or define parameter that has a default
        gives it the default (the default is what is checked; without a default, undef is), and a
        function with several signatures words its error differently.
    parameter_error(subject, name, phrases) -> str
        Puppet's whole error for one class/define parameter (``Class[Foo]: parameter 'x' expects ...``;
        several mismatches each on its own line, as Puppet prints them).
    parse_type(text) -> PuppetType | None      (cached by text)
    matches(type, value, resolve_alias=None) -> bool | None   (None: cannot be proven either way)

Checked against Puppet 7.23 and OpenVox 8 by tests/test_deep_types.py (the ``types`` oracle op).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from puppet_xpp.grammar import ast
from puppet_xpp.server.analysis.deep import types_parse
from puppet_xpp.server.analysis.deep.types_describe import describe
from puppet_xpp.server.analysis.deep.types_model import ALIAS_RESOLVER, PType, Unprovable
from puppet_xpp.server.analysis.deep.types_normal import infer

__all__ = [
    "AliasResolver",
    "PuppetType",
    "literal_mismatch",
    "literal_mismatches",
    "matches",
    "parameter_error",
    "parse_type",
]

PuppetType = PType
# name as written -> the alias's TypeAlias node, (name as declared, type text or node), type text or node
AliasResolver = Callable[[str], "str | ast.Node | tuple[str, str | ast.Node] | None"]

# Puppet's own aliases (Puppet::Pops::Loader::StaticLoader's BUILTIN_ALIASES)
_BUILTIN_ALIAS_TEXT = {
    "data": "Variant[ScalarData, Undef, Hash[String, Data], Array[Data]]",
    "richdatakey": "Variant[String, Numeric]",
    "richdata": "Variant[Scalar, SemVerRange, Binary, Sensitive, Type, TypeSet, URI, Object, Undef, Default, "
    "Hash[RichDataKey, RichData], Array[RichData]]",
}


@functools.lru_cache(maxsize=4096)
def parse_type(text: str) -> PType | None:
    """The type a type's source text declares; None when the text is not a type expression."""
    return types_parse.parse_text(text)


def _type_of(spec: str | ast.Node) -> PType | None:
    return parse_type(spec) if isinstance(spec, str) else types_parse.from_node(spec)


def _resolver(resolve_alias: AliasResolver | None) -> Callable[[str], tuple[str, PType] | None]:
    memo: dict[str, tuple[str, PType] | None] = {}

    def resolve(name: str) -> tuple[str, PType] | None:
        if name in memo:
            return memo[name]
        memo[name] = None  # (an alias whose text names itself directly resolves to nothing)
        builtin = _BUILTIN_ALIAS_TEXT.get(name.lower())
        target: str | ast.Node | tuple[str, str | ast.Node] | None
        declared = name
        if builtin is not None:
            target = builtin
        else:
            target = resolve_alias(name) if resolve_alias is not None else None
        if isinstance(target, ast.TypeAlias):
            declared, target = target.name, target.type_expr
        elif isinstance(target, tuple):
            declared, target = target
        t = _type_of(target) if target is not None else None
        if t is not None and builtin is None:
            try:  # Puppet keeps an alias's type normalized (its words print that form)
                t = t.normalize()
            except Unprovable:
                t = None
        memo[name] = (declared, t) if t is not None else None
        return memo[name]

    return resolve


def matches(
    type_spec: PType | str | ast.Node, value: ast.Node, resolve_alias: AliasResolver | None = None
) -> bool | None:
    """Whether the literal is an instance of the type (Puppet's ``instance?``); None when that cannot be
    proven (not a literal, an unknown type, an alias that does not resolve)."""
    t = type_spec if isinstance(type_spec, PType) else _type_of(type_spec)
    if t is None:
        return None
    token = ALIAS_RESOLVER.set(_resolver(resolve_alias))
    try:
        return t.instance(types_parse.value_of(value))
    except (Unprovable, RecursionError):
        return None
    finally:
        ALIAS_RESOLVER.reset(token)


def literal_mismatches(
    type_spec: PType | str | ast.Node, value: ast.Node, resolve_alias: AliasResolver | None = None
) -> list[str] | None:
    """Each mismatch Puppet reports for the value, relative to the parameter; None when the value is
    accepted or nothing can be proven."""
    t = type_spec if isinstance(type_spec, PType) else _type_of(type_spec)
    if t is None:
        return None
    token = ALIAS_RESOLVER.set(_resolver(resolve_alias))
    try:
        v = types_parse.value_of(value)
        if t.instance(v):
            return None
        found = describe(t, infer(v), (("parameter", "p"),))
        if not found:  # Puppet's describer finds nothing to say: it raises no error either
            return None
        prefix = " parameter 'p'"
        phrases = []
        for m in found:
            text = m.text()
            if not text.startswith(prefix):
                return None
            phrases.append(text[len(prefix) :].lstrip())
        return phrases
    except (Unprovable, RecursionError):
        return None
    finally:
        ALIAS_RESOLVER.reset(token)


def literal_mismatch(
    type_spec: str | ast.Node, value: ast.Node, resolve_alias: AliasResolver | None = None
) -> str | None:
    """Puppet's words for a literal the type rejects (see the module's docstring); None otherwise."""
    phrases = literal_mismatches(type_spec, value, resolve_alias)
    return "\n".join(phrases) if phrases else None


def parameter_error(subject: str, name: str, phrases: list[str]) -> str:
    """The error Puppet raises for a class or define parameter given a rejected value
    (``TypeMismatchDescriber.validate_parameters``): one mismatch on the subject's line, several each
    on its own indented line."""
    if len(phrases) == 1:
        return f"{subject}: parameter '{name}' {phrases[0]}"
    return f"{subject}:\n" + "\n".join(f"  parameter '{name}' {p}" for p in phrases)
