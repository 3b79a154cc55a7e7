"""The Puppet::AST model as data: the one table every other description of the AST derives from.

TABLE lists every type of Puppet 7's ``Puppet::AST`` TypeSet in declaration order with its parent and
its *own* attributes (name, Pcore type, default).  ``REQ`` marks an attribute without a default.
Derived attributes are not listed (they are never serialized).  :func:`describe` computes, per type:

* ``fields``: all attributes, parents first, each in declaration order;
* ``wire``: the Pcore serialization order (required attributes first, then optional ones);
* ``min``: how many values a serialized instance must carry;
* ``child_fields`` / ``ref_fields``: the attributes holding contained nodes / references to nodes.

``grammar/ast_gen.py`` turns this into the node classes of ``grammar/ast.py`` (generated, checked in, like
Puppet's ``ast.rb`` from ``ast.pp``); the serializer, the readers (Python and C), the PN transform and the
verifier read those class attributes, never a list of their own.  To add or change a type: edit TABLE, run
``python -m puppet_xpp.grammar.ast_gen``, commit both files (tests/test_ast_gen.py fails on a stale file).
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from typing import Any

REQ: Any = object()  # marker: attribute has no default value

E = "Expression"
OE = "Optional[Expression]"
AE = "Array[Expression]"

# (type name, parent, ((attribute, pcore type, default), ...), abstract?)
TABLE: tuple[tuple[str, str | None, tuple[tuple[str, str, Any], ...], bool], ...] = (
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

# Derived attributes Puppet computes from others (never serialized): (type, name, Pcore type, expression
# over ``self``).
DERIVED = (("QualifiedReference", "value", "String", "self.cased_value.lower()"),)

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


def holds_nodes(pcore_type: str) -> bool:
    """Does an attribute of this Pcore type hold AST nodes?"""
    return not pcore_type.startswith(_SCALAR_TYPES)


def pyname(attr: str) -> str:
    """Python attribute name of a Pcore attribute (`lambda` is a Python keyword)."""
    return attr + "_" if keyword.iskeyword(attr) else attr


@dataclass(frozen=True)
class TypeInfo:
    """One type of the table with everything derived from it (attribute names are Python names)."""

    name: str
    parent: str | None
    abstract: bool
    own: tuple[str, ...]  # own attributes, declaration order
    fields: tuple[str, ...]
    wire: tuple[str, ...]
    min: int
    defaults: dict[str, Any]
    types: dict[str, str]  # attribute -> Pcore type string
    child_fields: tuple[str, ...]
    ref_fields: tuple[str, ...]


def describe() -> dict[str, TypeInfo]:
    """Every type of TABLE, derived (declaration order: a parent comes before its subtypes)."""
    own = {name: (parent, attrs) for name, parent, attrs, _ in TABLE}

    def all_attrs(name: str) -> tuple[tuple[str, str, Any], ...]:
        parent, attrs = own[name]
        return (all_attrs(parent) if parent else ()) + tuple((pyname(a), t, d) for a, t, d in attrs)

    out: dict[str, TypeInfo] = {}
    for name, parent, attrs, abstract in TABLE:
        full = all_attrs(name)
        fields = tuple(a for a, _, _ in full)
        required = tuple(a for a, _, d in full if d is REQ)
        optional = tuple(a for a, _, d in full if d is not REQ)
        types = {a: t for a, t, _ in full}
        refs = tuple(a for a in fields if (name, a) in REFERENCES)
        out[name] = TypeInfo(
            name=name,
            parent=parent,
            abstract=abstract,
            own=tuple(pyname(a) for a, _, _ in attrs),
            fields=fields,
            wire=required + optional,
            min=len(required),
            defaults={a: d for a, _, d in full if d is not REQ},
            types=types,
            # containment in declaration order: the order Puppet's model walks (and validates) children
            child_fields=tuple(a for a in fields if holds_nodes(types[a]) and a not in refs),
            ref_fields=refs,
        )
    return out
