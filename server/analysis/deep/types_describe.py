"""Puppet's words for a literal its parameter's type rejects: the mismatches Puppet's
TypeMismatchDescriber finds between a declared type and the type inferred from the value, and the text
each one prints -- written after its behaviour (which mismatch each kind of type yields, how the
alternatives of a Variant are merged, when the types are printed in full), so that a finding reads as
Puppet's own error for the same value."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from puppet_xpp.server.analysis.deep import types_model
from puppet_xpp.server.analysis.deep.types_normal import assignable, generalize, maybe_create

# a path element: (kind, key); kinds: parameter, entry, key, index, variant
Path = tuple[tuple[str, str | int], ...]


_ELEMENT_TEXT = {
    "parameter": "parameter '{}'",
    "entry": "entry '{}'",
    "key": "key of entry '{}'",
    "index": "index {}",
    "variant": "variant {}",
}


def _element_text(kind: str, key: str | int) -> str:
    return _ELEMENT_TEXT[kind].format(key)


@dataclass(eq=False)
class Mismatch:
    path: Path

    def canonical(self) -> Path:
        return tuple(p for p in self.path if p[0] != "variant")

    def chop(self, index: int) -> Mismatch:
        """This mismatch without the path element at ``index`` (a merged Variant's position)."""
        if index >= len(self.path):
            return self
        return dataclasses.replace(self, path=self.path[:index] + self.path[index + 1 :])

    def position(self) -> str:
        return (" " + " ".join(_element_text(k, v) for k, v in self.path)) if self.path else ""

    def text(self) -> str:
        raise NotImplementedError


@dataclass(eq=False)
class KeyMismatch(Mismatch):
    """A Struct's key missing (``expects a value for key 'x'``) or not declared (``unrecognized key``)."""

    key: str = ""
    words: str = "expects a value for key"

    def text(self) -> str:
        return f"{self.position()} {self.words} '{self.key}'"


@dataclass(eq=False)
class SizeMismatch(Mismatch):
    expected: types_model.IntegerT = field(default_factory=types_model.IntegerT)
    actual: types_model.IntegerT = field(default_factory=types_model.IntegerT)

    def merge(self, path: Path, o: Mismatch) -> Mismatch:
        assert isinstance(o, SizeMismatch)
        lo = min(self.expected.lo, o.expected.lo)
        hi = max(self.expected.hi, o.expected.hi)
        return SizeMismatch(path, types_model.IntegerT(lo if lo != -types_model.INF else 0, hi), self.actual)

    def text(self) -> str:
        return f"{self.position()} expects size to be {_range_text(self.expected)}, got {_range_text(self.actual)}"


def _range_text(r: types_model.IntegerT) -> str:
    lo = 0 if r.lo == -types_model.INF else r.lo
    hi = r.hi
    if lo == hi:
        return "0" if lo == 0 else str(lo)
    if lo == 0:
        return "unlimited" if hi == types_model.INF else f"at most {hi}"
    if hi == types_model.INF:
        return f"at least {lo}"
    return f"between {lo} and {hi}"


@dataclass(eq=False)
class TypeMismatch(Mismatch):
    expected: types_model.PType = field(default_factory=types_model.AnyT)
    actual: types_model.PType = field(default_factory=types_model.AnyT)

    def __post_init__(self) -> None:
        self.expected = self.expected.normalize()
        self.actual = self.actual.normalize()

    def merge(self, path: Path, o: Mismatch) -> Mismatch:
        assert isinstance(o, TypeMismatch)
        merged = [self.expected] if self.expected == o.expected else [self.expected, o.expected]
        return type(self)(path, maybe_create(merged), self.actual)

    def text(self) -> str:
        e: types_model.PType | list[types_model.PType] = self.expected
        a = self.actual
        optional = False
        multi = False
        if isinstance(e, types_model.OptionalT):
            if e.type is None:
                raise types_model.Unprovable("Optional")
            e = e.type
            optional = True
        if isinstance(e, types_model.VariantT):
            e = list(e.types)
        if isinstance(e, list):
            if _report_detailed(e, a):
                a_text = _detailed_actual(e, a)
                names = [t.fmt(True) for t in e]
            else:
                names = list(dict.fromkeys(_short_name(t) for t in e))
                a_text = _short_name(a)
            if optional:
                names.insert(0, "Undef")
            if len(names) == 1:
                e_text = names[0]
            elif len(names) == 2:
                e_text = f"{names[0]} or {names[1]}"
                multi = True
            else:
                e_text = f"{', '.join(names[:-1])}, or {names[-1]}"
                multi = True
        else:
            if _report_detailed(e, a):
                a_text = _detailed_actual(e, a)
                e_text = e.fmt(True)
            else:
                e_text = _short_name(e)
                a_text = _short_name(a)
            if optional:
                e_text = f"Undef or {e_text}"
                multi = True
        if multi:
            return f"{self.position()} expects a value of type {e_text}, got {a_text}"
        return f"{self.position()} expects {_a_an(e_text)} value, got {a_text}"


@dataclass(eq=False)
class PatternMismatch(TypeMismatch):
    def text(self) -> str:
        e = self.expected
        prefix = ""
        if isinstance(e, types_model.OptionalT):
            if e.type is None:
                raise types_model.Unprovable("Optional")
            e = e.type
            prefix = "an undef value or "
        a = self.actual
        # (the value between single quotes as it is: Puppet does not escape it here)
        got = f"'{a.value}'" if isinstance(a, types_model.StringT) and a.value is not None else _short_name(a)
        return f"{self.position()} expects {prefix}a match for {e.fmt(True)}, got {got}"


def _a_an(text: str) -> str:
    c = text[:1]
    if c in ("'", '"'):
        c = text[1:2]
    return ("an " if c.lower() in "aeiouy" and c else "a ") + text


_CONTAINERS = (types_model.OptionalT, types_model.NotUndefT, types_model.TypeT)


def _short_name(t: types_model.PType) -> str:
    if isinstance(t, types_model.UnknownT):
        raise types_model.Unprovable(t.text)
    if (
        isinstance(t, types_model.RuntimeT)
        and t.param is not None
        and not isinstance(t.param, types_model.AnyT)
    ):
        return f"{t.kind}[{t.param.name}]"
    if (
        isinstance(t, types_model.IterableT)
        and t.elem is not None
        and not isinstance(t.elem, types_model.AnyT)
    ):
        return f"Iterable[{t.elem.name}]"
    if isinstance(t, _CONTAINERS) and t.type is not None and not isinstance(t.type, types_model.AnyT):
        inner = t.type
        if isinstance(inner, types_model.UnknownT):
            raise types_model.Unprovable(inner.text)
        return f"{t.name}[{inner.name}]"
    return t.name


def _specialization(e: types_model.PType, a: types_model.PType) -> bool:
    if isinstance(e, types_model.StructT):
        return isinstance(a, types_model.HashT)
    if isinstance(e, types_model.TupleT):
        return isinstance(a, types_model.ArrayT)
    return False


def _always_detailed(e: types_model.PType | list[types_model.PType], a: types_model.PType) -> bool:
    if isinstance(e, list):
        return any(_always_detailed(t, a) for t in e)
    return (
        type(e) is type(a)
        or isinstance(e, types_model.AliasT)
        or isinstance(a, types_model.AliasT)
        or _specialization(e, a)
    )


def _any_assignable(e: types_model.PType | list[types_model.PType], a: types_model.PType) -> bool:
    if isinstance(e, list):
        return any(assignable(t, a) for t in e)
    return assignable(e, a)


_DEFAULTS: dict[type, types_model.PType] = {
    types_model.AnyT: types_model.AnyT(),
    types_model.UnitT: types_model.UnitT(),
    types_model.UndefT: types_model.UndefT(),
    types_model.DefaultT: types_model.DefaultT(),
    types_model.ScalarT: types_model.ScalarT(),
    types_model.ScalarDataT: types_model.ScalarDataT(),
    types_model.NumericT: types_model.NumericT(),
    types_model.BooleanT: types_model.BooleanT(),
    types_model.IntegerT: types_model.IntegerT(),
    types_model.FloatT: types_model.FloatT(),
    types_model.StringT: types_model.StringT(),
    types_model.EnumT: types_model.EnumT(),
    types_model.PatternT: types_model.PatternT(),
    types_model.RegexpT: types_model.RegexpT(),
    types_model.OptionalT: types_model.OptionalT(),
    types_model.NotUndefT: types_model.NotUndefT(),
    types_model.VariantT: types_model.VariantT(),
    types_model.ArrayT: types_model.ArrayT(),
    types_model.TupleT: types_model.TupleT(),
    types_model.HashT: types_model.HashT(),
    types_model.StructT: types_model.StructT(),
    types_model.CollectionT: types_model.CollectionT(),
    types_model.TypeT: types_model.TypeT(),
}


def _assignable_to_default(e: types_model.PType | list[types_model.PType], a: types_model.PType) -> bool:
    if isinstance(e, list):
        return any(_assignable_to_default(t, a) for t in e)
    if isinstance(e, types_model.AliasT):
        e = e.resolved()
    if isinstance(e, types_model.RuntimeT):  # (its default is no more a literal's than it is)
        return False
    if isinstance(e, types_model.IterableT):
        e = types_model.IterableT()
    default = _DEFAULTS.get(type(e), e if isinstance(e, types_model.IterableT) else None)
    if default is None:
        raise types_model.Unprovable("default")
    if isinstance(default, types_model.VariantT):  # the empty Variant: assignable from everything but Undef
        return not isinstance(a, types_model.UndefT)
    if isinstance(default, (types_model.EnumT, types_model.PatternT)):
        return isinstance(a, (types_model.StringT, types_model.EnumT, types_model.PatternT))
    if isinstance(default, types_model.TupleT):
        return isinstance(a, (types_model.TupleT,)) or isinstance(a, types_model.ArrayT)
    if isinstance(default, types_model.StructT):
        return isinstance(a, (types_model.StructT, types_model.HashT))
    return assignable(default, a)


def _report_detailed(e: types_model.PType | list[types_model.PType], a: types_model.PType) -> bool:
    return _always_detailed(e, a) or _assignable_to_default(e, a)


def _all_resolved(
    e: types_model.PType | list[types_model.PType],
) -> types_model.PType | list[types_model.PType]:
    if isinstance(e, list):
        return [_resolved(t) for t in e]
    return _resolved(e)


def _resolved(t: types_model.PType) -> types_model.PType:
    seen = 0
    while isinstance(t, types_model.AliasT):
        t = t.resolved()
        seen += 1
        if seen > 50:
            raise types_model.Unprovable("alias loop")
    return t


def _detailed_actual(e: types_model.PType | list[types_model.PType], a: types_model.PType) -> str:
    e = _all_resolved(e)
    if _always_detailed(e, a):
        return a.fmt(True)
    return a.fmt(True) if _any_assignable(e, generalize(a)) else a.name


# ----------------------------------------------------------------------------------- the describer


def describe(expected: types_model.PType, actual: types_model.PType, path: Path) -> list[Mismatch]:
    if isinstance(expected, types_model.UnknownT):
        raise types_model.Unprovable(expected.text)
    _check_resolved(expected)
    return _internal(expected.normalize(), expected, actual, path)


def _check_resolved(t: types_model.PType) -> None:
    """Puppet reports a type naming an alias it cannot resolve (``references an unresolved type``) before
    any mismatch: such a type proves nothing here."""
    seen: set[str] = set()
    stack = [t]
    while stack:
        x = stack.pop()
        if isinstance(x, types_model.AliasT):
            if x.alias_name in seen:
                continue
            seen.add(x.alias_name)
            stack.append(x.resolved())  # (raises Unprovable when it does not resolve)
        else:
            stack.extend(types_model.children(x))


def _internal(
    expected: types_model.PType, original: types_model.PType, actual: types_model.PType, path: Path
) -> list[Mismatch]:
    if len(path) > 40:
        raise types_model.Unprovable("depth")
    if isinstance(expected, types_model.UnknownT):
        raise types_model.Unprovable(expected.text)
    if isinstance(expected, types_model.VariantT):
        return _variant(expected, original, actual, path)
    if isinstance(expected, types_model.StructT):
        return _struct(expected, original, actual, path)
    if isinstance(expected, types_model.HashT):
        return _hash(expected, original, actual, path)
    if isinstance(expected, types_model.TupleT):
        return _tuple(expected, original, actual, path)
    if isinstance(expected, types_model.ArrayT):
        return _array(expected, original, actual, path)
    if isinstance(expected, types_model.OptionalT):
        if isinstance(actual, types_model.UndefT) or expected.type is None:
            return []
        return _internal(
            expected.type, original if isinstance(original, types_model.AliasT) else expected, actual, path
        )
    if isinstance(expected, (types_model.PatternT, types_model.EnumT)):
        return [PatternMismatch(path, original, actual)]
    if isinstance(expected, types_model.AliasT):
        return _internal(expected.resolved().normalize(), expected, actual, path)
    return [] if assignable(expected, actual) else [TypeMismatch(path, original, actual)]


def _variant(
    expected: types_model.VariantT, original: types_model.PType, actual: types_model.PType, path: Path
) -> list[Mismatch]:
    found: list[list[Mismatch]] = []
    types = list(expected.types)
    if isinstance(original, types_model.OptionalT):
        types = [types_model.UndefT(), *types]
    unsure = False
    for i, t in enumerate(types):
        try:
            d = describe(t, actual, (*path, ("variant", i)))
        except types_model.Unprovable:
            unsure = True
            continue
        if not d:
            return []
        found.append(d)
    if unsure:
        raise types_model.Unprovable("variant")
    result = merge_descriptions(len(path), found)
    if isinstance(original, types_model.AliasT) and len(result) == 1:
        return [TypeMismatch(path, original, actual)]
    return result


def merge_descriptions(position: int, found: list[list[Mismatch]]) -> list[Mismatch]:
    flat = [m for d in found for m in d]
    for cls in (SizeMismatch, TypeMismatch):
        same = [m for m in flat if isinstance(m, cls)]
        if len(same) == len(found):
            generic: Mismatch | None = same[0]
            for cur in same[1:]:
                assert generic is not None
                if generic.canonical() != cur.canonical():
                    generic = None
                    break
                generic = generic.merge(generic.path, cur)  # type: ignore[attr-defined]
            if generic is not None:
                flat = [generic]
                break
    return [flat[0].chop(position)] if len(flat) == 1 else flat


def _array(
    expected: types_model.ArrayT, original: types_model.PType, actual: types_model.PType, path: Path
) -> list[Mismatch]:
    elem = expected.elem or types_model.AnyT()
    if isinstance(actual, types_model.TupleT):
        esize = expected.size or types_model.IntegerT(0, types_model.INF)
        asize = actual.size_range()
        if not esize.contains(asize):
            return [SizeMismatch(path, esize, asize)]
        out: list[Mismatch] = []
        for i, t in enumerate(actual.types):
            if not assignable(elem, t):
                out.extend(describe(elem, t, (*path, ("index", i))))
        return out
    if isinstance(actual, types_model.ArrayT):  # the empty array
        asize = actual.size or types_model.IntegerT(0, types_model.INF)
        if expected.size is None or expected.size.contains(asize):
            return [TypeMismatch(path, original, types_model.ArrayT(actual.elem))]
        return [SizeMismatch(path, expected.size, asize)]
    return [TypeMismatch(path, original, actual)]


def _hash(
    expected: types_model.HashT, original: types_model.PType, actual: types_model.PType, path: Path
) -> list[Mismatch]:
    key = expected.key or types_model.AnyT()
    value = expected.value or types_model.AnyT()
    if isinstance(actual, types_model.StructT):
        esize = expected.size or types_model.IntegerT(0, types_model.INF)
        n = len(actual.elements)
        asize = types_model.IntegerT(sum(1 for e in actual.elements if not e.key.accepts_undef()), n)
        if not esize.contains(asize):
            return [SizeMismatch(path, esize, asize)]
        out: list[Mismatch] = []
        for e in actual.elements:
            if not assignable(key, e.key):
                out.extend(describe(key, e.key, (*path, ("key", e.name))))
            if not assignable(value, e.value):
                out.extend(describe(value, e.value, (*path, ("entry", e.name))))
        return out
    if isinstance(actual, types_model.HashT):
        asize = actual.size or types_model.IntegerT(0, types_model.INF)
        if expected.size is None or expected.size.contains(asize):
            return [TypeMismatch(path, original, types_model.HashT(actual.key, actual.value))]
        return [SizeMismatch(path, expected.size, asize)]
    return [TypeMismatch(path, original, actual)]


def _struct(
    expected: types_model.StructT, original: types_model.PType, actual: types_model.PType, path: Path
) -> list[Mismatch]:
    if isinstance(actual, types_model.StructT):
        given = {e.name: e for e in actual.elements}
        out: list[Mismatch] = []
        for e1 in expected.elements:
            e2 = given.pop(e1.name, None)
            if e2 is None:
                if not e1.key.accepts_undef():
                    out.append(KeyMismatch(path, e1.name))
            else:
                if not assignable(e1.key, e2.key):
                    out.extend(describe(e1.key, e2.key, (*path, ("key", e1.name))))
                if not assignable(e1.value, e2.value):
                    out.extend(describe(e1.value, e2.value, (*path, ("entry", e1.name))))
        out.extend(KeyMismatch(path, k, "unrecognized key") for k in given)
        return out
    if (
        isinstance(actual, types_model.HashT)
        and not actual.empty_range()
        and _struct_takes_hash(expected, actual)
    ):
        # a hash with keys other than strings: a function call judges it by the Struct's type-level
        # assignability first, and where that passes (a class parameter's check still fails) it
        # describes nothing -- its words and a class's would differ
        raise types_model.Unprovable("hash for a struct")
    if isinstance(actual, types_model.HashT):
        asize = actual.size or types_model.IntegerT(0, types_model.INF)
        n = len(expected.elements)
        esize = types_model.IntegerT(sum(1 for e in expected.elements if not e.key.accepts_undef()), n)
        if esize.contains(asize):
            return [TypeMismatch(path, original, types_model.HashT(actual.key, actual.value))]
        return [SizeMismatch(path, esize, asize)]
    return [TypeMismatch(path, original, actual)]


def _struct_takes_hash(expected: types_model.StructT, actual: types_model.HashT) -> bool:
    """Puppet's type-level ``Struct.assignable?(Hash)``: every required entry's value type takes the
    hash's value type and its key's general type the hash's key type, and the size fits."""
    required = 0
    for e in expected.elements:
        if e.key.accepts_undef():
            continue
        required += 1
        if not assignable(e.value, actual.value or types_model.AnyT()):
            return False
        if not assignable(types_model.StringT(), actual.key or types_model.AnyT()):
            return False
    size = actual.size or types_model.IntegerT(0, types_model.INF)
    return types_model.IntegerT(required, len(expected.elements)).contains(size)


def _tuple(
    expected: types_model.TupleT, original: types_model.PType, actual: types_model.PType, path: Path
) -> list[Mismatch]:
    if expected == actual or (not expected.types and isinstance(actual, types_model.ArrayT)):
        return []
    esize = expected.size_range()
    if isinstance(actual, types_model.TupleT):
        asize = actual.size_range()
        if not esize.contains(asize):
            return [SizeMismatch(path, esize, asize)]
        out: list[Mismatch] = []
        if expected.types:
            for i, t in enumerate(actual.types):
                j = min(i, len(expected.types) - 1)
                out.extend(describe(expected.types[j], t, (*path, ("index", j))))
        return out
    if isinstance(actual, types_model.ArrayT):
        if actual.elem is None:
            return [TypeMismatch(path, original, actual)]
        asize = actual.size or types_model.IntegerT(0, types_model.INF)
        if not esize.contains(asize):
            return [SizeMismatch(path, esize, asize)]
        out = []
        for i, t in enumerate(expected.types):
            out.extend(describe(t, actual.elem, (*path, ("index", i))))
        return out
    return [TypeMismatch(path, original, actual)]
