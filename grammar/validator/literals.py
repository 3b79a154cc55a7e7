"""Puppet's literal evaluation, as the checker uses it for DUPLICATE_KEY and (the newer checker of
levels 7 and 8) for class parameter types, and the Ruby renderings of its values in messages.

Puppet 7.23's LiteralEvaluator takes strings, names, numbers, booleans, undef, default, regexes, arrays and
hashes; the newer checker (Puppet 7.29+ and 8, ``newer=True``) also evaluates type references, ``X[...]``
and unary minus, where Ruby's ``-@`` may be missing (``-true``): :class:`RubyError`.  Keys compare with
Ruby's ``eql?`` (:func:`literal_key`); messages show values as Ruby's ``to_s``/``inspect`` would.
"""

from __future__ import annotations

from typing import Any

from puppet_xpp.grammar.ruby import escape_slash, float_to_s
from puppet_xpp.grammar.validator.labels import article
from puppet_xpp.grammar.validator.model import (
    AccessExpression,
    ConcatenatedString,
    LiteralBoolean,
    LiteralDefault,
    LiteralFloat,
    LiteralHash,
    LiteralInteger,
    LiteralList,
    LiteralRegularExpression,
    LiteralString,
    LiteralUndef,
    QualifiedName,
    QualifiedReference,
    UnaryMinusExpression,
)


class NotLiteral(Exception):
    """Not a literal: Puppet's literal evaluation gives up on the expression."""


class LiteralFailed(NotLiteral):
    """Not literal because Puppet's own evaluation fails (already reported as LITERAL_NEGATION_FAILS)."""


class _DefaultValue:
    """Ruby's :default (the literal value of ``default``)."""

    __slots__ = ()


DEFAULT = _DefaultValue()


class RubyRegexp:
    __slots__ = ("source",)

    def __init__(self, source: Any) -> None:
        self.source = source


class RubyHash:
    """A Ruby Hash built from literal entries: ordered (key, value) pairs, later values win."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: Any) -> None:
        self.pairs = pairs


class RubyError(Exception):
    """The newer checker's literal evaluation calls a Ruby method the value lacks (``-true``): Puppet 8
    fails with a Ruby ``NoMethodError`` there, so no Puppet diagnostic exists for it."""

    def __init__(self, node: Any, value: Any) -> None:
        super().__init__(value)
        self.node = node
        self.value = value


def _negate(node: Any, v: Any) -> Any:
    """Ruby's unary minus of a literal value: numbers negate, strings stay (``String#-@``), the rest fail."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return -v
    if isinstance(v, str):
        return v
    raise RubyError(node, v)


def literal_value(o: Any, newer: bool = False) -> Any:
    """The literal value of an expression as Puppet's LiteralEvaluator computes it.

    Strings (and names, and double-quoted strings without interpolation) → str, numbers → int/float,
    booleans → bool, undef → None, default → DEFAULT, regexes → RubyRegexp, arrays → list, hashes →
    RubyHash.  Puppet 7.23 (``newer`` False) raises NotLiteral for anything else; the newer checker
    (Puppet 7.29+, 8) also evaluates type references (their downcased name), ``X[...]`` (the list of its
    literal keys, whatever ``X`` is, except a single list key) and unary minus (RubyError where Ruby has
    no such method).
    """
    if isinstance(o, (LiteralString, QualifiedName)):
        return o.value
    if isinstance(o, LiteralBoolean):
        return bool(o.value)
    if isinstance(o, (LiteralInteger, LiteralFloat)):
        return o.value
    if isinstance(o, LiteralUndef):
        return None
    if isinstance(o, LiteralDefault):
        return DEFAULT
    if isinstance(o, LiteralRegularExpression):
        v = o.value
        return RubyRegexp(getattr(v, "source", v))
    if isinstance(o, ConcatenatedString):
        segs = o.segments
        if len(segs) == 1 and isinstance(segs[0], LiteralString):
            return segs[0].value
        raise NotLiteral
    if isinstance(o, LiteralList):
        return [literal_value(v, newer) for v in o.values]
    if isinstance(o, LiteralHash):
        out: dict[Any, Any] = {}
        for e in o.entries:
            k = literal_value(e.key, newer)
            v = literal_value(e.value, newer)
            ek = literal_key(k)
            out[ek] = (out[ek][0], v) if ek in out else (k, v)
        return RubyHash(list(out.values()))
    if newer:
        if isinstance(o, QualifiedReference):
            return o.value
        if isinstance(o, AccessExpression):
            if len(o.keys) == 1 and isinstance(o.keys[0], LiteralList):
                raise NotLiteral
            return [literal_value(k, newer) for k in o.keys]
        if isinstance(o, UnaryMinusExpression):
            return _negate(o, literal_value(o.expr, newer))
    raise NotLiteral


def literal_key(v: Any) -> Any:
    """A hashable key of a literal value such that keys are equal iff the Ruby values are ``eql?``."""
    if isinstance(v, str):
        return ("S", v)
    if isinstance(v, bool):
        return ("B", v)
    if isinstance(v, int):
        return ("I", v)
    if isinstance(v, float):
        return ("F", v)
    if v is None:
        return ("N",)
    if v is DEFAULT:
        return ("D",)
    if isinstance(v, RubyRegexp):
        return ("R", v.source)
    if isinstance(v, list):
        return ("L", tuple(literal_key(x) for x in v))
    if isinstance(v, RubyHash):
        return ("H", frozenset((literal_key(a), literal_key(b)) for a, b in v.pairs))
    raise TypeError(type(v))


_INSPECT_ESC = {
    "\n": "\\n",
    "\t": "\\t",
    "\r": "\\r",
    "\f": "\\f",
    "\v": "\\v",
    "\b": "\\b",
    "\a": "\\a",
    "\x1b": "\\e",
    '"': '\\"',
    "\\": "\\\\",
}


def _ruby_inspect_str(s: str) -> str:
    out = ['"']
    n = len(s)
    for i, c in enumerate(s):
        e = _INSPECT_ESC.get(c)
        if e is not None:
            out.append(e)
        elif c == "#" and i + 1 < n and s[i + 1] in "{$@":
            out.append("\\#")
        elif ord(c) < 0x20 or c == "\x7f":
            out.append(f"\\u{ord(c):04X}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def ruby_inspect(v: Any) -> str:
    """Ruby's ``inspect`` of a literal value."""
    if isinstance(v, str):
        return _ruby_inspect_str(v)
    if v is None:
        return "nil"
    if v is DEFAULT:
        return ":default"
    if isinstance(v, RubyRegexp):
        return "/" + escape_slash(v.source) + "/"
    if isinstance(v, list):
        return "[" + ", ".join(ruby_inspect(x) for x in v) + "]"
    if isinstance(v, RubyHash):
        return "{" + ", ".join(f"{ruby_inspect(a)}=>{ruby_inspect(b)}" for a, b in v.pairs) + "}"
    return ruby_to_s(v)


def ruby_to_s(v: Any) -> str:
    """Ruby's ``to_s`` of a literal value (what Puppet interpolates into the DUPLICATE_KEY message)."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return float_to_s(v)
    if v is None:
        return ""
    if v is DEFAULT:
        return "default"
    if isinstance(v, RubyRegexp):
        return "(?-mix:" + escape_slash(v.source) + ")"
    return ruby_inspect(v)


_RUBY_CLASS = {True: "TrueClass", False: "FalseClass"}


def ruby_class(v: Any) -> str:
    """The Ruby class of a literal value (for the LITERAL_NEGATION_FAILS message)."""
    if isinstance(v, bool):
        return _RUBY_CLASS[v]
    if v is None:
        return "NilClass"
    if v is DEFAULT:
        return "Symbol"
    if isinstance(v, RubyRegexp):
        return "Regexp"
    if isinstance(v, list):
        return "Array"
    if isinstance(v, RubyHash):
        return "Hash"
    return type(v).__name__


def ruby_model_class(o: Any) -> str:
    """``a_an`` of the Ruby class of a model object, as Puppet's label provider gives it for a Class."""
    name = f"Puppet::Pops::Model::{o._name}"
    return f"{article(name)} {name}"
