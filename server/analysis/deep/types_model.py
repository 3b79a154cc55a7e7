"""Puppet's types as far as literal values go: the type objects, the literal values, instance checks and
the type's text as Puppet's TypeFormatter writes it.

Why a model of its own: the deep checks (issue 30) must say whether a literal given to a parameter can be
proven to violate its declared type, in Puppet's words.  Those words come from Puppet's type objects (their
normal form, their text, the type inferred from the value), so the objects here mirror Puppet's type
classes one for one, and every answer is three-valued: a check that depends on what a literal cannot
decide (a ``Sensitive``, a ``Timestamp``, an unresolvable alias, a Ruby regular expression we do not
translate) raises :class:`Unprovable` instead of guessing.
"""

from __future__ import annotations

import contextvars
import dataclasses
import decimal
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

INF = math.inf


class Unprovable(Exception):
    """What a literal cannot decide: the caller reports nothing."""


class _DefaultValue:
    """Puppet's ``default`` as a value."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "default"


DEFAULT_VALUE = _DefaultValue()


@dataclass(frozen=True, slots=True)
class RegexpValue:
    """A regular expression value: its source as Ruby holds it (``\\/`` already unescaped)."""

    source: str


@dataclass(frozen=True, slots=True)
class TypeValue:
    """A type used as a value (``String``, ``Integer[1]``)."""

    type: PType


# A literal value: str, int, float, bool, None (undef), DEFAULT_VALUE, list, dict, RegexpValue, TypeValue
Value = Any


class PType:
    """Base of the types.  ``name`` is what Puppet's ``short_name`` prints."""

    __slots__ = ()
    name = "Any"

    def instance(self, value: Value, depth: int = 0) -> bool:
        raise Unprovable(self.name)

    def fmt(self, expanded: bool) -> str:
        return self.name

    def __str__(self) -> str:
        return self.fmt(False)

    def normalize(self) -> PType:
        return self

    def accepts_undef(self) -> bool:
        return self.instance(None)


def any_true(items: Iterable[Any], test: Callable[[Any], bool]) -> bool:
    """Three-valued "any": True when one item passes, False when every item is proven to fail,
    :class:`Unprovable` otherwise."""
    unsure = False
    for item in items:
        try:
            if test(item):
                return True
        except Unprovable:
            unsure = True
    if unsure:
        raise Unprovable("any")
    return False


def _check_depth(depth: int) -> int:
    if depth > 60:  # a self-recursive alias met through the value's own depth: Puppet rejects such aliases
        raise Unprovable("recursion")
    return depth + 1


@dataclass(frozen=True, slots=True, eq=True)
class AnyT(PType):
    name = "Any"

    def instance(self, value: Value, depth: int = 0) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class UnitT(PType):
    name = "Unit"

    def instance(self, value: Value, depth: int = 0) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class UndefT(PType):
    name = "Undef"

    def instance(self, value: Value, depth: int = 0) -> bool:
        return value is None


@dataclass(frozen=True, slots=True)
class DefaultT(PType):
    name = "Default"

    def instance(self, value: Value, depth: int = 0) -> bool:
        return value is DEFAULT_VALUE


def is_int(v: Value) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v: Value) -> bool:
    return (isinstance(v, (int, float))) and not isinstance(v, bool)


@dataclass(frozen=True, slots=True)
class ScalarT(PType):
    name = "Scalar"

    def instance(self, value: Value, depth: int = 0) -> bool:
        return isinstance(value, (str, int, float, bool, RegexpValue))


@dataclass(frozen=True, slots=True)
class ScalarDataT(PType):
    name = "ScalarData"

    def instance(self, value: Value, depth: int = 0) -> bool:
        return isinstance(value, (str, int, float, bool))


@dataclass(frozen=True, slots=True)
class NumericT(PType):
    name = "Numeric"

    def instance(self, value: Value, depth: int = 0) -> bool:
        return is_number(value)


@dataclass(frozen=True, slots=True)
class BooleanT(PType):
    value: bool | None = None
    name = "Boolean"

    def instance(self, value: Value, depth: int = 0) -> bool:
        return isinstance(value, bool) and (self.value is None or value is self.value)

    def fmt(self, expanded: bool) -> str:
        return "Boolean" if self.value is None else f"Boolean[{'true' if self.value else 'false'}]"


def ruby_float(f: float) -> str:
    """A Float's text as Ruby's ``Float#to_s`` writes it: the shortest digits that read back the same,
    plain while at most 15 digits stand before the point (16 when a fraction follows) or at most 3 zeros
    after it (``1500.0``, ``0.0001``), else in exponent form (``1.0e+15``, ``1.0e-05``)."""
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    if math.isnan(f):
        return "NaN"
    if f == 0:
        return "-0.0" if math.copysign(1.0, f) < 0 else "0.0"
    sign, digit_tuple, exponent = decimal.Decimal(repr(f)).as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    exponent += len("".join(map(str, digit_tuple))) - len(digits)
    point = len(digits) + exponent  # the value is 0.<digits> x 10**point
    minus = "-" if sign else ""
    if 0 < point < 16 or point == 16 and len(digits) > 16:  # (Ruby's rule, checked against it)
        if point >= len(digits):
            return f"{minus}{digits}{'0' * (point - len(digits))}.0"
        return f"{minus}{digits[:point]}.{digits[point:]}"
    if -4 < point <= 0:
        return f"{minus}0.{'0' * -point}{digits}"
    e = point - 1
    return f"{minus}{digits[0]}.{digits[1:] or '0'}e{'+' if e >= 0 else '-'}{abs(e):02d}"


def num_text(n: int | float) -> str:
    return ruby_float(n) if isinstance(n, float) else str(n)


def range_part(lo: int | float, hi: int | float) -> list[str]:
    """A range's parameters as Puppet's formatter writes them (none when unbounded)."""
    if lo == -INF and hi == INF:
        return []
    out = ["default" if lo == -INF else num_text(lo)]
    if hi != INF:
        out.append(num_text(hi))
    return out


@dataclass(frozen=True, slots=True)
class IntegerT(PType):
    lo: int | float = -INF
    hi: int | float = INF
    name = "Integer"

    def instance(self, value: Value, depth: int = 0) -> bool:
        return is_int(value) and self.lo <= value <= self.hi

    def unbounded(self) -> bool:
        return self.lo == -INF and self.hi == INF

    def range_part(self) -> list[str]:
        return range_part(self.lo, self.hi)

    def fmt(self, expanded: bool) -> str:
        part = self.range_part()
        return f"{self.name}[{', '.join(part)}]" if part else self.name

    def contains(self, other: IntegerT) -> bool:
        return self.lo <= other.lo and self.hi >= other.hi


@dataclass(frozen=True, slots=True)
class FloatT(PType):
    lo: int | float = -INF
    hi: int | float = INF
    name = "Float"

    def instance(self, value: Value, depth: int = 0) -> bool:
        return isinstance(value, float) and self.lo <= value <= self.hi

    def fmt(self, expanded: bool) -> str:
        part = range_part(self.lo, self.hi)
        return f"Float[{', '.join(part)}]" if part else "Float"


def size_of(size: IntegerT | None, n: int) -> bool:
    return size is None or size.lo <= n <= size.hi


@dataclass(frozen=True, slots=True)
class StringT(PType):
    size: IntegerT | None = None
    value: str | None = None
    name = "String"

    def instance(self, value: Value, depth: int = 0) -> bool:
        if not isinstance(value, str):
            return False
        if self.value is not None:
            return value == self.value
        return size_of(self.size, len(value))

    def fmt(self, expanded: bool) -> str:
        part = self.size.range_part() if self.size is not None else []
        return f"String[{', '.join(part)}]" if part else "String"


def quote(s: str) -> str:
    """A string as Puppet's formatter quotes it (single quotes; double quotes are not modelled)."""
    if any(ord(c) < 0x20 for c in s):
        raise Unprovable("double-quoted text")
    out = ["'"]
    escaped = False
    for c in s:
        if escaped:
            out.append("\\" + c)
            escaped = False
        elif c == "'":
            out.append("\\'")
        elif c == "\\":
            escaped = True
        else:
            out.append(c)
    if escaped:
        out.append("\\")
    out.append("'")
    return "".join(out)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


@dataclass(frozen=True, slots=True)
class EnumT(PType):
    values: tuple[str, ...] = ()
    ci: bool = False
    name = "Enum"

    def instance(self, value: Value, depth: int = 0) -> bool:
        if not isinstance(value, str):
            return False
        if self.ci:  # (Ruby's casecmp: ASCII letters only)
            folded = value.translate(_ASCII_LOWER)
            return any(v.translate(_ASCII_LOWER) == folded for v in self.values)
        return value in self.values

    def fmt(self, expanded: bool) -> str:
        if not self.values:
            return "Enum"
        return f"Enum[{', '.join(quote(v) for v in self.values)}{', true' if self.ci else ''}]"


def regexp_text(source: str) -> str:
    """A regexp as Ruby's ``Regexp#inspect`` writes it: between slashes, a bare ``/`` escaped."""
    out = ["/"]
    i = 0
    while i < len(source):
        c = source[i]
        if c == "\\" and i + 1 < len(source):
            out.append(source[i : i + 2])
            i += 2
            continue
        out.append("\\/" if c == "/" else c)
        i += 1
    out.append("/")
    return "".join(out)


@dataclass(frozen=True, slots=True)
class PatternT(PType):
    patterns: tuple[str, ...] = ()
    name = "Pattern"

    def instance(self, value: Value, depth: int = 0) -> bool:
        if not isinstance(value, str):
            return False
        if not self.patterns:
            return True
        from puppet_xpp.server.analysis.deep.types_regexp import search

        return any_true(self.patterns, lambda p: search(p, value))

    def fmt(self, expanded: bool) -> str:
        if not self.patterns:
            return "Pattern"
        return f"Pattern[{', '.join(regexp_text(p) for p in self.patterns)}]"


@dataclass(frozen=True, slots=True)
class RegexpT(PType):
    pattern: str | None = None
    name = "Regexp"

    def instance(self, value: Value, depth: int = 0) -> bool:
        return isinstance(value, RegexpValue) and (self.pattern is None or self.pattern == value.source)

    def fmt(self, expanded: bool) -> str:
        return "Regexp" if self.pattern is None else f"Regexp[{regexp_text(self.pattern)}]"


def _inner_text(t: PType | None, expanded: bool) -> str:
    if isinstance(t, StringT) and t.value is not None:
        return quote(t.value)
    return t.fmt(expanded) if t is not None else ""


@dataclass(frozen=True, slots=True)
class OptionalT(PType):
    type: PType | None = None
    name = "Optional"

    def instance(self, value: Value, depth: int = 0) -> bool:
        return value is None or self.type is None or self.type.instance(value, _check_depth(depth))

    def fmt(self, expanded: bool) -> str:
        return "Optional" if self.type is None else f"Optional[{_inner_text(self.type, expanded)}]"

    def normalize(self) -> PType:
        if self.type is None:
            return self
        inner = self.type.normalize()
        if isinstance(inner, NotUndefT):
            return OptionalT(inner.type).normalize()
        if inner.accepts_undef():
            return inner
        return OptionalT(inner)


@dataclass(frozen=True, slots=True)
class NotUndefT(PType):
    type: PType | None = None
    name = "NotUndef"

    def instance(self, value: Value, depth: int = 0) -> bool:
        return value is not None and (self.type is None or self.type.instance(value, _check_depth(depth)))

    def fmt(self, expanded: bool) -> str:
        if self.type is None or isinstance(self.type, AnyT):
            return "NotUndef"
        return f"NotUndef[{_inner_text(self.type, expanded)}]"

    def normalize(self) -> PType:
        if self.type is None:
            return self
        inner = self.type.normalize()
        if isinstance(inner, OptionalT):
            return NotUndefT(inner.type).normalize()
        if not inner.accepts_undef():
            return inner
        return NotUndefT(inner)


@dataclass(frozen=True, slots=True)
class VariantT(PType):
    types: tuple[PType, ...] = ()
    name = "Variant"

    def instance(self, value: Value, depth: int = 0) -> bool:
        return any_true(self.types, lambda t: t.instance(value, _check_depth(depth)))

    def fmt(self, expanded: bool) -> str:
        if not self.types:
            return "Variant"
        return f"Variant[{', '.join(t.fmt(expanded) for t in self.types)}]"

    def normalize(self) -> PType:
        from puppet_xpp.server.analysis.deep.types_normal import normalize_variant

        return normalize_variant(self)


@dataclass(frozen=True, slots=True)
class ArrayT(PType):
    elem: PType | None = None
    size: IntegerT | None = None
    name = "Array"

    def instance(self, value: Value, depth: int = 0) -> bool:
        if not isinstance(value, list):
            return False
        if not size_of(self.size, len(value)):
            return False
        if self.elem is None:
            return True
        return _all(self.elem, value, depth)

    def empty_range(self) -> bool:
        return self.size is not None and self.size.lo == 0 and self.size.hi == 0

    def fmt(self, expanded: bool) -> str:
        if self.empty_range():
            return "Array[0, 0]"
        parts = []
        if self.elem is not None and not (isinstance(self.elem, AnyT) and self.size is None):
            parts.append(self.elem.fmt(expanded))
        elif self.size is not None:
            parts.append("Any")
        if self.size is not None:
            parts.extend(self.size.range_part())
        return f"Array[{', '.join(parts)}]" if parts else "Array"

    def normalize(self) -> PType:
        if self.elem is None or isinstance(self.elem, AnyT):  # (Puppet's: the size goes too)
            return ArrayT()
        return ArrayT(self.elem.normalize(), self.size)


def _all(t: PType, values: list[Value] | Any, depth: int) -> bool:
    """Every value an instance (False as soon as one is proven not to be; unprovable otherwise)."""
    unsure = False
    for v in values:
        try:
            if not t.instance(v, _check_depth(depth)):
                return False
        except Unprovable:
            unsure = True
    if unsure:
        raise Unprovable("element")
    return True


@dataclass(frozen=True, slots=True)
class TupleT(PType):
    types: tuple[PType, ...] = ()
    size: IntegerT | None = None
    name = "Tuple"

    def size_range(self) -> IntegerT:
        if self.size is not None:
            return self.size
        return IntegerT(len(self.types), len(self.types))

    def instance(self, value: Value, depth: int = 0) -> bool:
        if not isinstance(value, list):
            return False
        if not self.types:
            return size_of(self.size, len(value))
        if not size_of(self.size_range(), len(value)):
            return False
        unsure = False
        for i, v in enumerate(value):
            t = self.types[min(i, len(self.types) - 1)]
            try:
                if not t.instance(v, _check_depth(depth)):
                    return False
            except Unprovable:
                unsure = True
        if unsure:
            raise Unprovable("tuple")
        return True

    def fmt(self, expanded: bool) -> str:
        if not self.types:
            return "Tuple"
        parts = [t.fmt(expanded) for t in self.types]
        if self.size is not None:
            parts.extend(self.size.range_part())
        return f"Tuple[{', '.join(parts)}]"

    def normalize(self) -> PType:
        return TupleT(tuple(t.normalize() for t in self.types), self.size)


@dataclass(frozen=True, slots=True)
class HashT(PType):
    key: PType | None = None
    value: PType | None = None
    size: IntegerT | None = None
    name = "Hash"

    def instance(self, value: Value, depth: int = 0) -> bool:
        if not isinstance(value, dict):
            return False
        key = self.key or AnyT()
        val = self.value or AnyT()
        # Puppet checks the keys, then the values, then the size
        if not _all(key, list(value.keys()), depth) or not _all(val, list(value.values()), depth):
            return False
        return size_of(self.size, len(value))

    def empty_range(self) -> bool:
        return self.size is not None and self.size.lo == 0 and self.size.hi == 0

    def is_default(self) -> bool:
        return (
            (self.key is None or isinstance(self.key, AnyT))
            and (self.value is None or isinstance(self.value, AnyT))
            and self.size is None
        )

    def fmt(self, expanded: bool) -> str:
        if self.empty_range():
            return "Hash[0, 0]"
        if self.is_default():
            return "Hash"
        parts = [(self.key or AnyT()).fmt(expanded), (self.value or AnyT()).fmt(expanded)]
        if self.size is not None:
            parts.extend(self.size.range_part())
        return f"Hash[{', '.join(parts)}]"

    def normalize(self) -> PType:
        if self.is_default() or self.empty_range():
            return self
        return HashT((self.key or AnyT()).normalize(), (self.value or AnyT()).normalize(), self.size)


@dataclass(frozen=True, slots=True)
class StructElement:
    """One entry: its name, its key as declared (``String`` of the name, ``Optional[...]`` or
    ``NotUndef[...]`` of it) and its value type.  ``auto``: a plain name, which Puppet makes optional when
    the value type accepts undef -- decided when asked, so that an alias in the value is resolved then."""

    name: str
    declared_key: PType
    value: PType
    auto: bool = False

    @property
    def key(self) -> PType:
        if self.auto and self.value.accepts_undef():
            return OptionalT(self.declared_key)
        return self.declared_key

    def optional(self) -> bool:
        return isinstance(self.key, OptionalT)


@dataclass(frozen=True, slots=True)
class StructT(PType):
    elements: tuple[StructElement, ...] = ()
    name = "Struct"

    def instance(self, value: Value, depth: int = 0) -> bool:
        if not isinstance(value, dict):
            return False
        matched = 0
        unsure = False
        for e in self.elements:
            if e.name in value:
                matched += 1
                try:
                    if not e.value.instance(value[e.name], _check_depth(depth)):
                        return False
                except Unprovable:
                    unsure = True
            elif not e.optional():
                return False
        if matched != len(value):
            return False
        if unsure:
            raise Unprovable("struct")
        return True

    def fmt(self, expanded: bool) -> str:
        if not self.elements:
            return "Struct"
        parts = []
        for e in self.elements:
            value_optional = e.value.accepts_undef()
            if isinstance(e.key, OptionalT):
                key = quote(e.name) if value_optional else e.key.fmt(expanded)
            else:
                key = NotUndefT(StringT(value=e.name)).fmt(expanded) if value_optional else quote(e.name)
            parts.append(f"{key} => {e.value.fmt(expanded)}")
        return "Struct[{" + ", ".join(parts) + "}]"

    def normalize(self) -> PType:
        return StructT(tuple(dataclasses.replace(e, value=e.value.normalize()) for e in self.elements))


@dataclass(frozen=True, slots=True)
class CollectionT(PType):
    size: IntegerT | None = None
    name = "Collection"

    def instance(self, value: Value, depth: int = 0) -> bool:
        return isinstance(value, (list, dict)) and size_of(self.size, len(value))

    def fmt(self, expanded: bool) -> str:
        part = self.size.range_part() if self.size is not None else []
        return f"Collection[{', '.join(part)}]" if part else "Collection"

    def normalize(self) -> PType:
        return CollectionT()


@dataclass(frozen=True, slots=True)
class TypeT(PType):
    type: PType | None = None
    name = "Type"

    def instance(self, value: Value, depth: int = 0) -> bool:
        if not isinstance(value, TypeValue):
            return False
        if self.type is None or isinstance(self.type, AnyT):
            return True
        from puppet_xpp.server.analysis.deep.types_normal import assignable

        return assignable(self.type, value.type)

    def fmt(self, expanded: bool) -> str:
        return "Type" if self.type is None else f"Type[{self.type.fmt(expanded)}]"

    def normalize(self) -> PType:
        return self if self.type is None else TypeT(self.type.normalize())


@dataclass(frozen=True, slots=True)
class UnknownT(PType):
    """A type no literal can be proven against (Sensitive, Timestamp, Callable, a resource type, ...)."""

    text: str = "Any"

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.text

    def fmt(self, expanded: bool) -> str:
        raise Unprovable(self.text)


# the run-time kinds a type used as a value might be an instance of (a class or resource reference)
_HOLDS_TYPES = frozenset({"Resource", "Class", "CatalogEntry", "Object", "Runtime"})


@dataclass(frozen=True, slots=True)
class RuntimeT(PType):
    """A type whose instances only exist at run time (Sensitive, Timespan, Timestamp, SemVer, Binary, URI,
    Callable, Deferred, Error, Object, Runtime) or are resources and classes: no literal is one, except
    perhaps a type used as a value (a resource or class reference), which stays unprovable.  ``param``
    is the contained type of ``Sensitive[T]``; other parameters are kept as text we do not write."""

    kind: str = "Sensitive"
    param: PType | None = None
    has_params: bool = False

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.kind

    def instance(self, value: Value, depth: int = 0) -> bool:
        if isinstance(value, TypeValue) and self.kind in _HOLDS_TYPES:
            raise Unprovable(self.kind)
        return False

    def fmt(self, expanded: bool) -> str:
        if self.param is not None:
            return f"{self.kind}[{self.param.fmt(expanded)}]"
        if self.has_params:
            raise Unprovable(self.kind)
        return self.kind


@dataclass(frozen=True, slots=True)
class IterableT(PType):
    """Iterable: strings, arrays, hashes and non-negative integers are; other scalars are not."""

    elem: PType | None = None
    name = "Iterable"

    def instance(self, value: Value, depth: int = 0) -> bool:
        if value is None or value is DEFAULT_VALUE or isinstance(value, (bool, float, RegexpValue)):
            return False
        if self.elem is None and isinstance(value, (str, list, dict)):
            return True
        if self.elem is None and is_int(value) and value >= 0:
            return True
        if self.elem is not None and isinstance(value, dict) and _rejects_arrays(self.elem):
            return False  # (a Hash yields [key, value] pairs: never an instance of a scalar type)
        if self.elem is not None and isinstance(value, list):
            # Puppet infers the Array's common element type (``[1, 'a']`` is Array[ScalarData]) and asks the
            # element type for that: an element the type rejects proves the whole rejected, but all
            # accepted proves nothing.
            for item in value:
                try:
                    if not self.elem.instance(item, _check_depth(depth)):
                        return False
                except Unprovable:
                    continue
        raise Unprovable("iterable")  # (Puppet: a negative Integer is no instance, yet no mismatch either)

    def fmt(self, expanded: bool) -> str:
        return "Iterable" if self.elem is None else f"Iterable[{self.elem.fmt(expanded)}]"


_SCALAR_ONLY = (
    UndefT,
    ScalarT,
    ScalarDataT,
    NumericT,
    BooleanT,
    IntegerT,
    FloatT,
    StringT,
    EnumT,
    PatternT,
    RegexpT,
)


def _rejects_arrays(t: PType, depth: int = 0) -> bool:
    """Does ``t`` provably accept no Array value at all (a scalar type, or an Optional or Variant of such)?
    An alias is followed; anything else is not known to."""
    if depth > 32:
        return False
    if isinstance(t, _SCALAR_ONLY):
        return True
    if isinstance(t, OptionalT):
        return t.type is not None and _rejects_arrays(t.type, depth + 1)
    if isinstance(t, VariantT):
        return all(_rejects_arrays(x, depth + 1) for x in t.types)
    if isinstance(t, AliasT):
        try:
            return _rejects_arrays(t.resolved(), depth + 1)
        except Unprovable:
            return False
    return False


# the aliases Puppet itself defines: written by name, never expanded
BUILTIN_ALIASES = frozenset({"Data", "RichDataKey", "RichData"})


# what resolves an alias name during one check (set by types.py around each call): the name as written ->
# (the name as the alias declares it, the type it stands for), or None
ALIAS_RESOLVER: contextvars.ContextVar[Callable[[str], tuple[str, PType] | None] | None] = (
    contextvars.ContextVar("puppet_xpp_alias_resolver", default=None)
)


@dataclass(frozen=True, slots=True)
class AliasT(PType):
    """A type alias by name (``Stdlib::Port``).  What it stands for is looked up when needed through
    :data:`ALIAS_RESOLVER`, so that a parsed type can be cached by its text whatever the workspace's
    aliases are, and a recursive alias is a name met again rather than a cycle of objects."""

    alias_name: str

    @property
    def name(self) -> str:  # type: ignore[override]
        """The name as the alias declares it (Puppet prints that, not the reference's spelling)."""
        return self._lookup()[0]

    def _lookup(self) -> tuple[str, PType]:
        resolver = ALIAS_RESOLVER.get()
        found = resolver(self.alias_name) if resolver is not None else None
        if found is None:
            raise Unprovable(self.alias_name)
        return found

    def resolved(self) -> PType:
        return self._lookup()[1]

    def instance(self, value: Value, depth: int = 0) -> bool:
        return self.resolved().instance(value, _check_depth(depth))

    def fmt(self, expanded: bool) -> str:
        name, target = self._lookup()
        expanding = _EXPANDING.get()
        if not expanded or name in BUILTIN_ALIASES or name in expanding:
            return name  # (a recursive alias is written out once: inside itself, by name)
        token = _EXPANDING.set(expanding | {name})
        try:
            return f"{name} = {target.fmt(True)}"
        finally:
            _EXPANDING.reset(token)


# the aliases being written out (their own text names them by name only)
_EXPANDING: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "puppet_xpp_alias_expanding", default=frozenset()
)


def children(t: PType) -> list[PType]:
    """The types a type holds (for walks over a type)."""
    if isinstance(t, (OptionalT, NotUndefT, TypeT)):
        return [t.type] if t.type is not None else []
    if isinstance(t, (VariantT, TupleT)):
        return list(t.types)
    if isinstance(t, ArrayT):
        return [t.elem] if t.elem is not None else []
    if isinstance(t, HashT):
        return [x for x in (t.key, t.value) if x is not None]
    if isinstance(t, StructT):
        return [e.value for e in t.elements]
    if isinstance(t, RuntimeT):
        return [t.param] if t.param is not None else []
    if isinstance(t, IterableT):
        return [t.elem] if t.elem is not None else []
    return []
