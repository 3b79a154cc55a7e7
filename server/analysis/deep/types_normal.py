"""The parts of Puppet's type algebra the mismatch words depend on: a Variant's normal form (what
Puppet's ``normalize`` merges), the type inferred from a literal (``infer_set``), its generalization, and
whether one type is assignable to another -- decided exactly where the assigned type is a literal's
(by the literal itself), for the few general forms the describer asks about, and otherwise
:class:`Unprovable`."""

from __future__ import annotations

import dataclasses

from puppet_xpp.server.analysis.deep.types_model import (
    DEFAULT_VALUE,
    INF,
    AliasT,
    AnyT,
    ArrayT,
    BooleanT,
    CollectionT,
    DefaultT,
    EnumT,
    FloatT,
    HashT,
    IntegerT,
    IterableT,
    NotUndefT,
    NumericT,
    OptionalT,
    PatternT,
    PType,
    RegexpT,
    RegexpValue,
    RuntimeT,
    ScalarDataT,
    ScalarT,
    StringT,
    StructElement,
    StructT,
    TupleT,
    TypeT,
    TypeValue,
    UndefT,
    UnitT,
    Unprovable,
    Value,
    VariantT,
    any_true,
    is_int,
)


def flatten(types: list[PType]) -> list[PType]:
    out: list[PType] = []
    for t in types:
        out.extend(t.types if isinstance(t, VariantT) else [t])
    return out


def uniq(types: list[PType]) -> list[PType]:
    out: list[PType] = []
    for t in types:
        if not any(_same(t, o) for o in out):
            out.append(t)
    return out


def _same(a: PType, b: PType) -> bool:
    return a == b


def maybe_create(types: list[PType]) -> PType:
    ts = uniq(flatten(types))
    return ts[0] if len(ts) == 1 else VariantT(tuple(ts))


def normalize_variant(v: VariantT) -> PType:
    if not v.types:
        return v
    types = [t.normalize() for t in v.types]
    if len(types) == 1:
        return types[0]
    if any(isinstance(t, (UndefT, OptionalT)) for t in types):
        inner = [t.type if isinstance(t, OptionalT) and t.type is not None else t for t in types]
        rest = [t for t in inner if not isinstance(t, UndefT)]
        if not rest:
            return OptionalT(UndefT()).normalize()
        return OptionalT(maybe_create(rest)).normalize()
    types = flatten(types)
    before = len(types)
    types = _merge_not_undefs(types)
    types = _merge_enums(types)
    types = _merge_patterns(types)
    types = _merge_numbers(IntegerT, types)
    types = _merge_numbers(FloatT, types)
    if len(types) == 1:
        return types[0]
    if len(types) != before or tuple(types) != v.types:
        return maybe_create(types)
    return v


def _merge_not_undefs(types: list[PType]) -> list[PType]:
    nus = [t for t in types if isinstance(t, NotUndefT)]
    if len(nus) > 1:
        others = [t for t in types if not isinstance(t, NotUndefT)]
        inner = maybe_create([t.type or AnyT() for t in nus]).normalize()
        return [*others, NotUndefT(inner)]
    return types


def _merge_enums(types: list[PType]) -> list[PType]:
    def cs(t: PType) -> bool:
        return (
            isinstance(t, EnumT)
            and bool(t.values)
            and not t.ci
            or isinstance(t, StringT)
            and t.value is not None
        )

    if len(types) > 1:
        enums = [t for t in types if cs(t)]
        if len(enums) > 1:
            values: list[str] = []
            for t in enums:
                values.extend(
                    [t.value] if isinstance(t, StringT) and t.value is not None else getattr(t, "values", ())
                )
            types = [t for t in types if not cs(t)] + [EnumT(tuple(sorted(set(values))))]
    if len(types) > 1:
        cis = [t for t in types if isinstance(t, EnumT) and t.values and t.ci]
        if len(cis) > 1:
            vals: list[str] = []
            for t in cis:
                assert isinstance(t, EnumT)
                for x in t.values:
                    if x.lower() not in vals:
                        vals.append(x.lower())
            types = [t for t in types if t not in cis] + [EnumT(tuple(sorted(set(vals))), True)]
    return types


def _merge_patterns(types: list[PType]) -> list[PType]:
    pats = [t for t in types if isinstance(t, PatternT)]
    if len(types) > 1 and len(pats) > 1:
        ps: list[str] = []
        for t in pats:
            assert isinstance(t, PatternT)
            ps.extend(p for p in t.patterns if p not in ps)
        return [t for t in types if not isinstance(t, PatternT)] + [PatternT(tuple(ps))]
    return types


def _merge_numbers(cls: type[IntegerT] | type[FloatT], types: list[PType]) -> list[PType]:
    ranges = [t for t in types if type(t) is cls]
    if len(types) <= 1 or len(ranges) <= 1:
        return types
    result: list[PType] = []
    pending: list[IntegerT | FloatT] = [t for t in ranges if isinstance(t, (IntegerT, FloatT))]
    while pending:
        unmerged: list[IntegerT | FloatT] = []
        memo = pending.pop()
        for y in pending:
            merged = _merge_range(memo, y)
            if merged is None:
                unmerged.append(y)
            else:
                memo = merged
        result.append(memo)
        pending = unmerged
    return result + [t for t in types if type(t) is not cls]


def _merge_range(a: IntegerT | FloatT, b: IntegerT | FloatT) -> IntegerT | FloatT | None:
    intersect = not (a.hi < b.lo or b.hi < a.lo)
    if intersect and isinstance(a, FloatT) and (b.lo == -INF or b.hi == INF):
        # Puppet's Float merge compares with the other range's open bound (nil) and fails: its error
        # is not a type mismatch
        raise Unprovable("Float merge")
    adjacent = isinstance(a, IntegerT) and (a.hi + 1 == b.lo or b.hi + 1 == a.lo)
    if intersect or adjacent:
        return type(a)(min(a.lo, b.lo), max(a.hi, b.hi))
    return None


# ----------------------------------------------------------------------------------- inference


def infer(value: Value) -> PType:
    """Puppet's ``infer_set``: the most specific type of a literal."""
    if value is None:
        return UndefT()
    if value is DEFAULT_VALUE:
        return DefaultT()
    if isinstance(value, bool):
        return BooleanT(value)
    if is_int(value):
        return IntegerT(value, value)
    if isinstance(value, float):
        return FloatT(value, value)
    if isinstance(value, str):
        return StringT(value=value)
    if isinstance(value, RegexpValue):
        return RegexpT(value.source)
    if isinstance(value, TypeValue):
        return TypeT(value.type)
    if isinstance(value, list):
        if not value:
            return ArrayT(UnitT(), IntegerT(0, 0))
        return TupleT(tuple(infer(v) for v in value))
    if isinstance(value, dict):
        if not value:
            return HashT(UnitT(), UnitT(), IntegerT(0, 0))
        if all(isinstance(k, str) and k for k in value):
            return StructT(tuple(StructElement(k, StringT(value=k), infer(v)) for k, v in value.items()))
        return HashT(
            maybe_create([infer(k) for k in value]),
            maybe_create([infer(v) for v in value.values()]),
            IntegerT(len(value), len(value)),
        )
    raise Unprovable("value")


_NO_VALUE = object()


def literal_of(t: PType) -> Value:
    """The literal an inferred type was inferred from (``_NO_VALUE`` when it holds more than one)."""
    if isinstance(t, UndefT):
        return None
    if isinstance(t, DefaultT):
        return DEFAULT_VALUE
    if isinstance(t, BooleanT) and t.value is not None:
        return t.value
    if isinstance(t, IntegerT) and t.lo == t.hi and t.lo not in (INF, -INF):
        return int(t.lo)
    if isinstance(t, FloatT) and t.lo == t.hi and isinstance(t.lo, float) and t.lo not in (INF, -INF):
        return t.lo
    if isinstance(t, StringT) and t.value is not None:
        return t.value
    if isinstance(t, RegexpT) and t.pattern is not None:
        return RegexpValue(t.pattern)
    if isinstance(t, TypeT) and t.type is not None:
        return TypeValue(t.type)
    if isinstance(t, ArrayT) and t.size == IntegerT(0, 0):
        return []
    if isinstance(t, HashT) and t.size == IntegerT(0, 0):
        return {}
    if isinstance(t, TupleT) and t.size is None and t.types:
        items = [literal_of(x) for x in t.types]
        return _NO_VALUE if any(x is _NO_VALUE for x in items) else items
    if (
        isinstance(t, StructT)
        and t.elements
        and all(isinstance(e.key, StringT) and e.key.value == e.name for e in t.elements)
    ):
        vals = {e.name: literal_of(e.value) for e in t.elements}
        return _NO_VALUE if any(x is _NO_VALUE for x in vals.values()) else vals
    return _NO_VALUE


def generalize(t: PType) -> PType:
    """Puppet's ``generalize`` of an inferred type."""
    if isinstance(t, (IntegerT, FloatT)):
        return type(t)()
    if isinstance(t, StringT):
        return StringT()
    if isinstance(t, BooleanT):
        return BooleanT()
    if isinstance(t, RegexpT):
        return RegexpT()
    if isinstance(t, TupleT):
        return TupleT(tuple(generalize(x) for x in t.types), t.size)
    if isinstance(t, StructT):
        return StructT(tuple(dataclasses.replace(e, value=generalize(e.value)) for e in t.elements))
    if isinstance(t, ArrayT):  # (the empty array's too: Puppet drops the size)
        return ArrayT(t.elem, None)
    if isinstance(t, HashT) and not t.empty_range():
        return HashT(generalize(t.key or AnyT()), generalize(t.value or AnyT()))
    if isinstance(t, VariantT):
        return maybe_create([generalize(x) for x in t.types])
    if isinstance(t, TypeT):
        if t.type is None or isinstance(t.type, (IntegerT, FloatT, StringT, BooleanT, RegexpT)):
            return TypeT(generalize(t.type) if t.type is not None else None)
        raise Unprovable("generalized type")  # (what Puppet generalizes other types to is not modelled)
    return t


# ----------------------------------------------------------------------------------- assignability


# the kinds whose instances are only of their kind: a type of another kind is never assignable to them
_SCALARS = (StringT, IntegerT, FloatT, BooleanT, RegexpT, EnumT, PatternT, UndefT, DefaultT)
_NON_HASH = (ScalarT, ScalarDataT, NumericT, ArrayT, TupleT, TypeT)
_NOT_ARRAY = (ScalarT, ScalarDataT, NumericT, TypeT, HashT, StructT)
_NOT_HASH = _NON_HASH


def assignable(e: PType, a: PType) -> bool:
    """Puppet's ``e.assignable?(a)`` where ``a`` is a literal's type, or one of the general forms the
    describer asks about; :class:`Unprovable` otherwise."""
    v = literal_of(a)
    if v is not _NO_VALUE:
        return e.instance(v)
    if isinstance(e, (AnyT, UnitT)):
        return True
    if isinstance(e, AliasT):
        return assignable(e.resolved(), a)
    if isinstance(a, VariantT):
        return bool(a.types) and all(assignable(e, x) for x in a.types)
    if isinstance(e, VariantT):
        return any_true(e.types, lambda x: assignable(x, a))
    if isinstance(e, OptionalT):
        return isinstance(a, UndefT) or e.type is None or assignable(e.type, a)
    if isinstance(e, NotUndefT):
        return not isinstance(a, UndefT) and (e.type is None or assignable(e.type, a))
    if isinstance(e, RuntimeT):  # (no literal's type is one; a type might be a class or a resource)
        if isinstance(a, TypeT):
            raise Unprovable(e.kind)
        return False
    if isinstance(a, UnitT):
        return True
    scalar = (StringT, IntegerT, FloatT, BooleanT, RegexpT)
    if isinstance(a, scalar):
        return _general_scalar(e, a)
    if isinstance(a, (TupleT, ArrayT)) and isinstance(e, _SCALARS + _NOT_ARRAY):
        return False
    if isinstance(a, StructT) and isinstance(e, _SCALARS + _NOT_HASH):
        return False
    if isinstance(a, HashT):
        if isinstance(e, HashT):
            if e.size is not None and not (a.size is not None and e.size.contains(a.size)):
                return False
            return assignable(e.key or AnyT(), a.key or AnyT()) and assignable(
                e.value or AnyT(), a.value or AnyT()
            )
        if isinstance(e, CollectionT):
            return e.size is None or (a.size is not None and e.size.contains(a.size))
        if isinstance(e, _SCALARS + _NON_HASH):
            return False
    raise Unprovable("assignable")


def _general_scalar(e: PType, a: PType) -> bool:
    """Whether every value of an unbounded scalar type (String, Integer, Float, Boolean, Regexp) is in e."""
    if isinstance(e, ScalarT):
        return True
    if isinstance(e, ScalarDataT):
        return not isinstance(a, RegexpT)
    if isinstance(e, NumericT):
        return isinstance(a, (IntegerT, FloatT))
    if type(e) is type(a):
        if isinstance(e, (IntegerT, FloatT)):
            return e.lo == -INF and e.hi == INF
        if isinstance(e, StringT):
            return e.value is None and (e.size is None or e.size.contains(IntegerT(0, INF)))
        if isinstance(e, BooleanT):
            return e.value is None
        if isinstance(e, RegexpT):
            return e.pattern is None
    if isinstance(e, IterableT):  # (an unbounded Integer is not iterable; what a String yields, unmodelled)
        if not isinstance(a, StringT):
            return False
        if e.elem is None:
            return True
    if isinstance(a, StringT) and isinstance(e, (EnumT, PatternT)):
        return not (e.values if isinstance(e, EnumT) else e.patterns)
    if isinstance(e, _SCALARS + _NON_HASH + (HashT, StructT, CollectionT)):
        return False
    raise Unprovable("assignable")
