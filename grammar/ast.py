"""The Puppet::AST model: one table, and the node classes generated from it.

TABLE lists every type of Puppet 7's ``Puppet::AST`` TypeSet in declaration order with its parent and
its *own* attributes (name, Pcore type, default).  ``REQ`` marks an attribute without a default.
Derived attributes are not listed (they are never serialized).  From this table we compute, per type:

* ``_fields``: all attributes, parents first, each in declaration order;
* ``_wire``: the Pcore serialization order (required attributes first, then optional ones);
* ``_min``: how many values a serialized instance must carry.

The serializer, the reader, the PN transform and the verifier all use these, never a list of their own.
"""

from __future__ import annotations

import keyword

REQ = object()  # marker: attribute has no default value

E = "Expression"
OE = "Optional[Expression]"
AE = "Array[Expression]"

# (type name, parent, ((attribute, pcore type, default), ...), abstract?)
TABLE = (
    (
        "Locator",
        None,
        (
            ("string", "String", REQ),
            ("file", "String", REQ),
            ("line_index", "Optional[Array[Integer]]", None),
        ),
        False,
    ),
    ("PopsObject", None, (), True),
    (
        "Positioned",
        "PopsObject",
        (("locator", "Locator", REQ), ("offset", "Integer", REQ), ("length", "Integer", REQ)),
        True,
    ),
    ("Expression", "Positioned", (), True),
    ("Nop", "Expression", (), False),
    ("BinaryExpression", "Expression", (("left_expr", E, REQ), ("right_expr", E, REQ)), True),
    ("UnaryExpression", "Expression", (("expr", E, REQ),), True),
    ("ParenthesizedExpression", "UnaryExpression", (), False),
    ("NotExpression", "UnaryExpression", (), False),
    ("UnaryMinusExpression", "UnaryExpression", (), False),
    ("UnfoldExpression", "UnaryExpression", (), False),
    ("AssignmentExpression", "BinaryExpression", (("operator", "Enum['+=', '-=', '=']", REQ),), False),
    (
        "ArithmeticExpression",
        "BinaryExpression",
        (("operator", "Enum['%', '*', '+', '-', '/', '<<', '>>']", REQ),),
        False,
    ),
    (
        "RelationshipExpression",
        "BinaryExpression",
        (("operator", "Enum['->', '<-', '<~', '~>']", REQ),),
        False,
    ),
    ("AccessExpression", "Expression", (("left_expr", E, REQ), ("keys", AE, [])), False),
    (
        "ComparisonExpression",
        "BinaryExpression",
        (("operator", "Enum['!=', '<', '<=', '==', '>', '>=']", REQ),),
        False,
    ),
    ("MatchExpression", "BinaryExpression", (("operator", "Enum['!~', '=~']", REQ),), False),
    ("InExpression", "BinaryExpression", (), False),
    ("BooleanExpression", "BinaryExpression", (), True),
    ("AndExpression", "BooleanExpression", (), False),
    ("OrExpression", "BooleanExpression", (), False),
    ("LiteralList", "Expression", (("values", AE, []),), False),
    ("KeyedEntry", "Positioned", (("key", E, REQ), ("value", E, REQ)), False),
    ("LiteralHash", "Expression", (("entries", "Array[KeyedEntry]", []),), False),
    ("BlockExpression", "Expression", (("statements", AE, []),), False),
    ("ApplyBlockExpression", "BlockExpression", (), False),
    ("CaseOption", "Expression", (("values", "Array[Expression, 1]", REQ), ("then_expr", OE, None)), False),
    ("CaseExpression", "Expression", (("test", E, REQ), ("options", "Array[CaseOption]", [])), False),
    ("QueryExpression", "Expression", (("expr", OE, None),), True),
    ("ExportedQuery", "QueryExpression", (), False),
    ("VirtualQuery", "QueryExpression", (), False),
    ("AbstractAttributeOperation", "Positioned", (), True),
    (
        "AttributeOperation",
        "AbstractAttributeOperation",
        (("attribute_name", "String", REQ), ("operator", "Enum['+>', '=>']", REQ), ("value_expr", E, REQ)),
        False,
    ),
    ("AttributesOperation", "AbstractAttributeOperation", (("expr", E, REQ),), False),
    (
        "CollectExpression",
        "Expression",
        (
            ("type_expr", E, REQ),
            ("query", "QueryExpression", REQ),
            ("operations", "Array[AbstractAttributeOperation]", []),
        ),
        False,
    ),
    (
        "Parameter",
        "Positioned",
        (
            ("name", "String", REQ),
            ("value", OE, None),
            ("type_expr", OE, None),
            ("captures_rest", "Optional[Boolean]", None),
        ),
        False,
    ),
    ("Definition", "Expression", (), True),
    (
        "NamedDefinition",
        "Definition",
        (("name", "String", REQ), ("parameters", "Array[Parameter]", []), ("body", OE, None)),
        True,
    ),
    ("FunctionDefinition", "NamedDefinition", (("return_type", OE, None),), False),
    ("ResourceTypeDefinition", "NamedDefinition", (), False),
    ("QRefDefinition", "Definition", (("name", "String", REQ),), True),
    ("TypeAlias", "QRefDefinition", (("type_expr", OE, None),), False),
    ("TypeMapping", "Definition", (("type_expr", OE, None), ("mapping_expr", OE, None)), False),
    ("TypeDefinition", "QRefDefinition", (("parent", "Optional[String]", None), ("body", OE, None)), False),
    (
        "NodeDefinition",
        "Definition",
        (("parent", OE, None), ("host_matches", "Array[Expression, 1]", REQ), ("body", OE, None)),
        False,
    ),
    ("HeredocExpression", "Expression", (("syntax", "Optional[String]", None), ("text_expr", E, REQ)), False),
    ("HostClassDefinition", "NamedDefinition", (("parent_class", "Optional[String]", None),), False),
    ("PlanDefinition", "FunctionDefinition", (), False),
    (
        "LambdaExpression",
        "Expression",
        (("parameters", "Array[Parameter]", []), ("body", OE, None), ("return_type", OE, None)),
        False,
    ),
    ("ApplyExpression", "Expression", (("arguments", AE, []), ("body", OE, None)), False),
    (
        "IfExpression",
        "Expression",
        (("test", E, REQ), ("then_expr", OE, None), ("else_expr", OE, None)),
        False,
    ),
    ("UnlessExpression", "IfExpression", (), False),
    (
        "CallExpression",
        "Expression",
        (
            ("rval_required", "Boolean", False),
            ("functor_expr", E, REQ),
            ("arguments", AE, []),
            ("lambda", OE, None),
        ),
        True,
    ),
    ("CallFunctionExpression", "CallExpression", (), False),
    ("CallNamedFunctionExpression", "CallExpression", (), False),
    ("CallMethodExpression", "CallExpression", (), False),
    ("Literal", "Expression", (), True),
    ("LiteralValue", "Literal", (), True),
    # Pcore types `value` as Any (which admits undef) but Ruby's constructor order puts it first and
    # `pattern` has no default, so both are always written: we mark both required.
    ("LiteralRegularExpression", "LiteralValue", (("value", "Any", REQ), ("pattern", "String", REQ)), False),
    ("LiteralString", "LiteralValue", (("value", "String", REQ),), False),
    ("LiteralNumber", "LiteralValue", (), True),
    ("LiteralInteger", "LiteralNumber", (("radix", "Integer", 10), ("value", "Integer", REQ)), False),
    ("LiteralFloat", "LiteralNumber", (("value", "Float", REQ),), False),
    ("LiteralUndef", "Literal", (), False),
    ("LiteralDefault", "Literal", (), False),
    ("LiteralBoolean", "LiteralValue", (("value", "Boolean", REQ),), False),
    ("TextExpression", "UnaryExpression", (), False),
    ("ConcatenatedString", "Expression", (("segments", AE, []),), False),
    ("QualifiedName", "LiteralValue", (("value", "String", REQ),), False),
    ("ReservedWord", "LiteralValue", (("word", "String", REQ), ("future", "Optional[Boolean]", None)), False),
    ("QualifiedReference", "LiteralValue", (("cased_value", "String", REQ),), False),
    ("VariableExpression", "UnaryExpression", (), False),
    (
        "EppExpression",
        "Expression",
        (("parameters_specified", "Optional[Boolean]", None), ("body", OE, None)),
        False,
    ),
    ("RenderStringExpression", "LiteralString", (), False),
    ("RenderExpression", "UnaryExpression", (), False),
    (
        "ResourceBody",
        "Positioned",
        (("title", OE, None), ("operations", "Array[AbstractAttributeOperation]", [])),
        False,
    ),
    (
        "AbstractResource",
        "Expression",
        (("form", "Enum['exported', 'regular', 'virtual']", "regular"),),
        True,
    ),
    (
        "ResourceExpression",
        "AbstractResource",
        (("type_name", E, REQ), ("bodies", "Array[ResourceBody]", [])),
        False,
    ),
    (
        "ResourceDefaultsExpression",
        "AbstractResource",
        (("type_ref", OE, None), ("operations", "Array[AbstractAttributeOperation]", [])),
        False,
    ),
    (
        "ResourceOverrideExpression",
        "AbstractResource",
        (("resources", E, REQ), ("operations", "Array[AbstractAttributeOperation]", [])),
        False,
    ),
    ("SelectorEntry", "Positioned", (("matching_expr", E, REQ), ("value_expr", E, REQ)), False),
    (
        "SelectorExpression",
        "Expression",
        (("left_expr", E, REQ), ("selectors", "Array[SelectorEntry]", [])),
        False,
    ),
    ("NamedAccessExpression", "BinaryExpression", (), False),
    (
        "Program",
        "PopsObject",
        (("body", OE, None), ("definitions", "Array[Definition]", []), ("locator", "Locator", REQ)),
        False,
    ),
)

PCORE_PREFIX = "Puppet::AST::"

# Reference attributes (not containment): their values are nodes contained elsewhere in the same tree.
# With the one Locator, these are the only objects Puppet's model shares, so the only ones a Pcore
# stream may write as a back-reference (TABULATION).
REFERENCES = frozenset({("Program", "definitions")})


class Regexp:
    """The value of a LiteralRegularExpression (Pcore Regexp): only its source is carried."""

    __slots__ = ("source",)

    def __init__(self, source: str):
        self.source = source

    def __eq__(self, other):
        return isinstance(other, Regexp) and other.source == self.source

    def __hash__(self):
        return hash(("re", self.source))

    def __repr__(self):
        return f"Regexp({self.source!r})"


class Node:
    """Base of all generated AST classes."""

    __slots__ = ()
    _name = "Node"
    _fields: tuple = ()
    _wire: tuple = ()
    _defaults: dict = {}
    _types: dict = {}
    _min = 0
    _abstract = True
    _child_fields: tuple = ()
    _ref_fields: tuple = ()

    def __eq__(self, other):
        if type(self) is not type(other):
            return False
        for f in self._fields:
            a, b = getattr(self, f), getattr(other, f)
            if f == "locator":
                if a is not b and a != b:
                    return False
            elif a != b:
                return False
        return True

    __hash__ = object.__hash__

    def __repr__(self):
        parts = []
        for f in self._fields:
            if f == "locator":
                continue
            v = getattr(self, f)
            if v != self._defaults.get(f, REQ):
                parts.append(f"{f}={v!r}")
        return f"{self._name}({', '.join(parts)})"

    def children(self):
        """Contained nodes in attribute order (Program.definitions, a reference, is not containment)."""
        for f in self._child_fields:
            v = getattr(self, f)
            if isinstance(v, Node):
                yield v
            elif isinstance(v, list):
                for x in v:
                    if isinstance(x, Node):
                        yield x

    # derived attributes of Positioned
    @property
    def file(self):
        return self.locator.file

    @property
    def line(self):
        return self.locator.line_for_offset(self.offset)

    @property
    def pos(self):
        return self.locator.pos_on_line(self.offset)


def _locator_methods(cls):
    import bisect

    def line_for_offset(self, offset):
        return bisect.bisect_right(self.line_index, offset)

    def pos_on_line(self, offset):
        line_start = self.line_index[bisect.bisect_right(self.line_index, offset) - 1]
        data = self._bytes()
        return len(data[line_start:offset].decode("utf-8", "replace")) + 1

    def _bytes(self):
        b = getattr(self, "_b", None)
        if b is None:
            b = self.string.encode("utf-8", "surrogateescape")
            object.__setattr__(self, "_b", b)
        return b

    cls.line_for_offset = line_for_offset
    cls.pos_on_line = pos_on_line
    cls._bytes = _bytes


TYPES: dict[str, type] = {}

_SCALAR_TYPES = (
    "String",
    "Integer",
    "Boolean",
    "Float",
    "Any",
    "Locator",
    "Enum[",
    "Optional[String]",
    "Optional[Boolean]",
    "Optional[Array[Integer]]",
)


def _holds_nodes(pcore_type: str) -> bool:
    """Does an attribute of this Pcore type hold AST nodes (containment)?"""
    return not pcore_type.startswith(_SCALAR_TYPES)


def pyname(attr: str) -> str:
    """Python attribute name of a Pcore attribute (`lambda` is a Python keyword)."""
    return attr + "_" if keyword.iskeyword(attr) else attr


def _build():
    own = {name: (parent, attrs, abstract) for name, parent, attrs, abstract in TABLE}

    def all_attrs(name):
        parent, attrs, _ = own[name]
        return (all_attrs(parent) if parent else ()) + tuple((pyname(a), t, d) for a, t, d in attrs)

    for name, parent, attrs, abstract in TABLE:
        full = all_attrs(name)
        fields = tuple(a for a, _, _ in full)
        required = tuple(a for a, _, d in full if d is REQ)
        optional = tuple(a for a, _, d in full if d is not REQ)
        wire = required + optional
        defaults = {a: d for a, _, d in full if d is not REQ}
        types = {a: t for a, t, _ in full}
        # containment in declaration order: the order Puppet's model walks (and validates) children
        ref_fields = tuple(a for a in fields if (name, a) in REFERENCES)
        child_fields = tuple(a for a in fields if _holds_nodes(types[a]) and a not in ref_fields)
        base = TYPES[parent] if parent else Node
        ns = {
            "__slots__": tuple(pyname(a) for a, _, _ in attrs) + (("_b",) if name == "Locator" else ()),
            "_name": name,
            "_fields": fields,
            "_wire": wire,
            "_defaults": defaults,
            "_types": types,
            "_min": len(required),
            "_abstract": abstract,
            "_child_fields": child_fields,
            "_ref_fields": ref_fields,
            "_pcore_name": PCORE_PREFIX + name,
        }
        # __init__ takes the attributes in wire order; optional ones may be omitted.
        params = ", ".join(list(required) + [f"{a}=_D" for a in optional])
        body = []
        for a in wire:
            d = defaults.get(a, REQ)
            if isinstance(d, list):
                body.append(f"    self.{a} = [] if {a} is _D else {a}")
            elif a in defaults:
                body.append(f"    self.{a} = {d!r} if {a} is _D else {a}")
            else:
                body.append(f"    self.{a} = {a}")
        src = (
            f"def __init__(self{', ' if params else ''}{params}):\n" + ("\n".join(body) or "    pass") + "\n"
        )
        env = {"_D": _D}
        exec(src, env)
        ns["__init__"] = env["__init__"]
        cls = type(name, (base,), ns)
        if name == "Locator":
            _locator_methods(cls)
        if name == "QualifiedReference":
            cls.value = property(lambda self: self.cased_value.lower())
        TYPES[name] = cls


class _Default:
    def __repr__(self):
        return "<default>"


_D = _Default()
_build()
globals().update(TYPES)

CONCRETE = {n: c for n, c in TYPES.items() if not c._abstract}


def make_locator(text: str, file: str = "") -> Locator:  # noqa: F821
    """One Locator per source: its line_index holds the byte offset of every line start."""
    data = text.encode("utf-8", "surrogateescape")
    idx = [0]
    find = data.find
    i = find(b"\n")
    while i >= 0:
        idx.append(i + 1)
        i = find(b"\n", i + 1)
    loc = TYPES["Locator"](text, file, idx)
    object.__setattr__(loc, "_b", data)
    return loc


def walk(node):
    """Pre-order walk over containment (what Puppet's validator visits)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        kids = list(n.children())
        kids.reverse()
        stack.extend(kids)
