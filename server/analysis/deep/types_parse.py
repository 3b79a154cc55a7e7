"""From source to the type model: a type expression (its text, or the grammar's AST node) to a
:class:`~.types_model.PType` as Puppet's TypeParser builds it, and a literal expression to its value.
Anything else -- a variable, a call, an interpolation, a type whose parameters Puppet would refuse --
is ``None`` or :class:`~.types_model.UnknownT`: no finding can rest on it."""

from __future__ import annotations

from puppet_xpp.grammar import ast
from puppet_xpp.server.analysis.deep import types_model
from puppet_xpp.server.analysis.deep.types_normal import maybe_create


class _Refused(Exception):
    """Parameters Puppet's TypeParser would refuse (or we do not model): the type is unknown."""


_NOT_A_VALUE = object()

# types without parameters, by lower-case name
_PLAIN: dict[str, types_model.PType] = {
    "any": types_model.AnyT(),
    "undef": types_model.UndefT(),
    "default": types_model.DefaultT(),
    "unit": types_model.UnitT(),
    "scalar": types_model.ScalarT(),
    "scalardata": types_model.ScalarDataT(),
    "numeric": types_model.NumericT(),
    "integer": types_model.IntegerT(),
    "float": types_model.FloatT(),
    "string": types_model.StringT(),
    "boolean": types_model.BooleanT(),
    "enum": types_model.EnumT(),
    "pattern": types_model.PatternT(),
    "regexp": types_model.RegexpT(),
    "optional": types_model.OptionalT(),
    "notundef": types_model.NotUndefT(),
    "variant": types_model.VariantT(),
    "array": types_model.ArrayT(),
    "tuple": types_model.TupleT(),
    "hash": types_model.HashT(),
    "struct": types_model.StructT(),
    "collection": types_model.CollectionT(),
    "type": types_model.TypeT(),
    "data": types_model.AliasT("Data"),
    "richdata": types_model.AliasT("RichData"),
    "richdatakey": types_model.AliasT("RichDataKey"),
}
# Puppet's other types: known names no literal can be proven against
_OPAQUE = {
    "typeset": "TypeSet",
    "init": "Init",
    "iterator": "Iterator",
    "typereference": "TypeReference",
    "notundefined": "NotUndefined",
}
# types no literal is an instance of (types_model.RuntimeT), by lower-case name
_RUNTIME = {
    "sensitive": "Sensitive",
    "timespan": "Timespan",
    "timestamp": "Timestamp",
    "semver": "SemVer",
    "semverrange": "SemVerRange",
    "callable": "Callable",
    "runtime": "Runtime",
    "binary": "Binary",
    "uri": "URI",
    "resource": "Resource",
    "class": "Class",
    "object": "Object",
    "catalogentry": "CatalogEntry",
    "error": "Error",
    "deferred": "Deferred",
}


def parse_text(text: str) -> types_model.PType | None:
    """The type a parameter's type text declares (None: not a type expression)."""
    from puppet_xpp.grammar.check import parse

    text = text.strip()
    if not text:
        return None
    res = parse(text)
    program = res.program
    if any(d.severity == "error" for d in res.diagnostics) or not isinstance(program, ast.Program):
        return None
    body = program.body
    if body is None or isinstance(body, ast.BlockExpression):
        return None
    return from_node(body)


def from_node(node: ast.Node) -> types_model.PType | None:
    """The type a type expression node declares (None: not a type expression)."""
    try:
        return _type(node)
    except _Refused:
        return types_model.UnknownT(_name_of(node))
    except (types_model.Unprovable, RecursionError):
        return None


def _name_of(node: ast.Node) -> str:
    if isinstance(node, ast.AccessExpression):
        return _name_of(node.left_expr)
    if isinstance(node, ast.QualifiedReference):
        return node.cased_value
    return "Any"


def _type(node: ast.Node) -> types_model.PType:
    if isinstance(node, ast.QualifiedReference):
        key = node.cased_value.lower()
        if key in _PLAIN:
            return _PLAIN[key]
        if key in _OPAQUE:
            return types_model.UnknownT(_OPAQUE[key])
        if key in _RUNTIME:
            return types_model.RuntimeT(_RUNTIME[key])
        if key == "iterable":
            return types_model.IterableT()
        return types_model.AliasT(node.cased_value)
    if isinstance(node, ast.AccessExpression) and isinstance(node.left_expr, ast.QualifiedReference):
        return _access(node.left_expr.cased_value, node.keys)
    if isinstance(node, ast.LiteralString):  # Optional['a'], Struct keys
        return types_model.StringT(value=node.value)
    raise types_model.Unprovable("not a type")


def _num(node: ast.Node, allow_default: bool = True) -> int | float | None:
    v = value_of(node)
    if v is types_model.DEFAULT_VALUE and allow_default:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _Refused
    return v


def _range(
    keys: list[ast.Expression], cls: type[types_model.IntegerT] | type[types_model.FloatT]
) -> types_model.IntegerT | types_model.FloatT:
    if len(keys) > 2:
        raise _Refused
    lo = _num(keys[0])
    hi = _num(keys[1]) if len(keys) > 1 else None
    if cls is types_model.IntegerT and any(isinstance(x, float) for x in (lo, hi)):
        raise _Refused
    lo_v = -types_model.INF if lo is None else lo
    hi_v = types_model.INF if hi is None else hi
    if lo_v > hi_v:
        raise _Refused
    return cls(lo_v, hi_v)


def _size(keys: list[ast.Expression]) -> types_model.IntegerT | None:
    if not keys:
        return None
    r = _range(keys, types_model.IntegerT)
    assert isinstance(r, types_model.IntegerT)
    return r


def _access(name: str, keys: list[ast.Expression]) -> types_model.PType:
    key = name.lower()
    if not keys:
        raise _Refused
    if key == "integer":
        return _range(keys, types_model.IntegerT)
    if key == "float":
        r = _range(keys, types_model.FloatT)
        return types_model.FloatT(
            float(r.lo) if r.lo not in (types_model.INF, -types_model.INF) else r.lo,
            float(r.hi) if r.hi not in (types_model.INF, -types_model.INF) else r.hi,
        )
    if key == "string":
        size = _size(keys)
        return types_model.StringT(size if size is not None and not size.unbounded() else None)
    if key == "boolean":
        v = value_of(keys[0]) if len(keys) == 1 else None
        if not isinstance(v, bool):
            raise _Refused
        return types_model.BooleanT(v)
    if key == "enum":
        values: list[str] = []
        ci = False
        for i, k in enumerate(keys):
            v = value_of(k)
            if isinstance(v, bool) and i == len(keys) - 1 and i > 0:
                ci = v
            elif isinstance(v, str):
                values.append(v)
            elif isinstance(v, list) and all(isinstance(x, str) for x in v):
                values.extend(v)
            else:
                raise _Refused
        return types_model.EnumT(tuple(sorted(set(values))), ci)
    if key == "pattern":
        pats: list[str] = []
        for k in keys:
            v = value_of(k)
            if isinstance(v, types_model.RegexpValue):
                pats.append(v.source)
            elif isinstance(v, str):
                pats.append(v)
            elif isinstance(v, types_model.TypeValue) and isinstance(
                v.type, (types_model.RegexpT, types_model.PatternT)
            ):
                if isinstance(v.type, types_model.RegexpT) and v.type.pattern is not None:
                    pats.append(v.type.pattern)
                elif isinstance(v.type, types_model.PatternT):
                    pats.extend(v.type.patterns)
                else:
                    raise _Refused
            else:
                raise _Refused
        return types_model.PatternT(tuple(dict.fromkeys(pats)))
    if key == "regexp":
        v = value_of(keys[0]) if len(keys) == 1 else None
        if isinstance(v, types_model.RegexpValue):
            return types_model.RegexpT(v.source)
        if isinstance(v, str):
            return types_model.RegexpT(v)
        raise _Refused
    if key in ("optional", "notundef"):
        if len(keys) != 1:
            raise _Refused
        inner = _type_param(keys[0], strings=True)
        return types_model.OptionalT(inner) if key == "optional" else types_model.NotUndefT(inner)
    if key == "variant":  # (as Puppet's TypeFactory makes it: nested Variants flattened, repeats dropped)
        return maybe_create([_type_param(k) for k in keys])
    if key == "array":
        first = _type_param_or_none(keys[0])
        if first is None:
            return types_model.ArrayT(types_model.AnyT(), _size(keys))
        return types_model.ArrayT(first, _size(keys[1:]))
    if key == "hash":
        first = _type_param_or_none(keys[0])
        if first is None:
            return types_model.HashT(types_model.AnyT(), types_model.AnyT(), _size(keys))
        if len(keys) < 2:
            raise _Refused
        return types_model.HashT(first, _type_param(keys[1]), _size(keys[2:]))
    if key == "tuple":
        types: list[types_model.PType] = []
        i = 0
        while i < len(keys):
            t = _type_param_or_none(keys[i])
            if t is None:
                break
            types.append(t)
            i += 1
        size = _size(keys[i:]) if i < len(keys) else None
        return types_model.TupleT(tuple(types), size)
    if key == "struct":
        if len(keys) != 1 or not isinstance(keys[0], ast.LiteralHash):
            raise _Refused
        return _struct(keys[0])
    if key == "collection":
        return types_model.CollectionT(_size(keys))
    if key == "type":
        if len(keys) != 1:
            raise _Refused
        return types_model.TypeT(_type_param(keys[0]))
    if key == "sensitive" and len(keys) == 1:
        return types_model.RuntimeT("Sensitive", _type_param(keys[0]))
    if key == "iterable" and len(keys) == 1:
        return types_model.IterableT(_type_param(keys[0]))
    if key in _RUNTIME:
        return types_model.RuntimeT(_RUNTIME[key], has_params=True)
    if key in _OPAQUE or key in _PLAIN:
        raise _Refused
    raise _Refused  # an alias or resource type with parameters: nothing a literal can be proven against


def _type_param(node: ast.Expression, strings: bool = False) -> types_model.PType:
    t = _type_param_or_none(node, strings)
    if t is None:
        raise _Refused
    return t


def _type_param_or_none(node: ast.Expression, strings: bool = False) -> types_model.PType | None:
    if isinstance(node, (ast.QualifiedReference, ast.AccessExpression)):
        try:
            return _type(node)
        except _Refused:
            return types_model.UnknownT(_name_of(node))
    if strings and isinstance(node, ast.LiteralString):
        return types_model.StringT(value=node.value)
    return None


def _struct(h: ast.LiteralHash) -> types_model.StructT:
    elements: list[types_model.StructElement] = []
    for entry in h.entries:
        vt = _type_param(entry.value)
        k = entry.key
        if isinstance(k, ast.AccessExpression) and isinstance(k.left_expr, ast.QualifiedReference):
            wrapper = k.left_expr.cased_value.lower()
            inner = value_of(k.keys[0]) if len(k.keys) == 1 else None
            if wrapper not in ("optional", "notundef") or not isinstance(inner, str) or not inner:
                raise _Refused
            name = inner
            key: types_model.PType = (
                types_model.OptionalT(types_model.StringT(value=inner))
                if wrapper == "optional"
                else types_model.NotUndefT(types_model.StringT(value=inner))
            )
        else:
            name = value_of(k)
            if not isinstance(name, str) or not name:
                raise _Refused
            key = types_model.StringT(value=name)
        if any(e.name == name for e in elements):
            # a key given twice: Puppet 7 keeps the last value in the first place, Puppet 8 refuses the
            # type (declared more than once): nothing to prove either way
            raise _Refused
        plain = isinstance(key, types_model.StringT)  # (optional or not once aliases resolve)
        elements.append(types_model.StructElement(name, key, vt, auto=plain))
    return types_model.StructT(tuple(elements))


def value_of(node: ast.Node | None) -> types_model.Value:
    """The value of a literal expression; :class:`types_model.Unprovable` for anything that is not one."""
    if isinstance(node, ast.LiteralString):
        return node.value
    if isinstance(node, ast.LiteralBoolean):
        return node.value
    if isinstance(node, (ast.LiteralInteger, ast.LiteralFloat)):
        return node.value
    if isinstance(node, ast.LiteralUndef):
        return None
    if isinstance(node, ast.LiteralDefault):
        return types_model.DEFAULT_VALUE
    if isinstance(node, ast.QualifiedName):  # a bare word is a string
        return node.value
    if isinstance(node, ast.LiteralRegularExpression):
        return types_model.RegexpValue(node.value.source)
    if isinstance(node, ast.UnaryMinusExpression):
        inner = value_of(node.expr)
        if types_model.is_int(inner) or isinstance(inner, float):
            return -inner
        raise types_model.Unprovable("minus")
    if isinstance(node, ast.ConcatenatedString):
        if all(isinstance(s, ast.LiteralString) for s in node.segments):
            return "".join(s.value for s in node.segments)  # type: ignore[attr-defined]
        raise types_model.Unprovable("interpolation")
    if isinstance(node, ast.HeredocExpression):
        return value_of(node.text_expr)
    if isinstance(node, ast.ParenthesizedExpression):
        return value_of(node.expr)
    if isinstance(node, ast.LiteralList):
        return [value_of(v) for v in node.values]
    if isinstance(node, ast.LiteralHash):
        out: dict[types_model.Value, types_model.Value] = {}
        kinds: set[tuple[type, types_model.Value]] = set()
        for e in node.entries:
            k = value_of(e.key)
            if isinstance(k, (list, dict)):
                raise types_model.Unprovable("key")
            if (type(k), k) in kinds:  # (a key given twice: Puppet 7 keeps the last, OpenVox 8 refuses it)
                raise types_model.Unprovable("key twice")
            kinds.add((type(k), k))
            out[k] = value_of(e.value)
        if len(kinds) != len(out):  # keys Ruby tells apart and Python does not (1, 1.0, true)
            raise types_model.Unprovable("key")
        return out
    if isinstance(node, (ast.QualifiedReference, ast.AccessExpression)):
        t = from_node(node)
        if t is None or isinstance(t, types_model.UnknownT):
            raise types_model.Unprovable("type value")
        if isinstance(t, types_model.AliasT) and t.alias_name.lower() not in (
            "data",
            "richdata",
            "richdatakey",
        ):
            raise types_model.Unprovable("resource or alias reference")
        return types_model.TypeValue(t)
    raise types_model.Unprovable(type(node).__name__)
