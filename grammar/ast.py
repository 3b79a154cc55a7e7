"""The Puppet::AST node classes.  GENERATED from grammar/ast_table.py by grammar/ast_gen.py: do not edit.

Regenerate with ``python -m puppet_xpp.grammar.ast_gen`` after changing the table (tests/test_ast_gen.py
fails while this file is stale).  Each class's ``__init__`` takes the attributes in Pcore wire order
(required ones first); optional ones may be omitted.  ``TYPES`` maps every type name to its class,
``CONCRETE`` the non-abstract ones.
"""

from __future__ import annotations

from typing import Any, ClassVar

from .ast_base import DEFAULT, LocatorMixin, Node, PositionedMixin, Regexp, line_starts, walk
from .ast_table import PCORE_PREFIX, REFERENCES, REQ, TABLE, pyname

__all__ = [
    "CONCRETE",
    "DEFAULT",
    "PCORE_PREFIX",
    "REFERENCES",
    "REQ",
    "TABLE",
    "TYPES",
    "Node",
    "Regexp",
    "make_locator",
    "pyname",
    "walk",
    "Locator",
    "PopsObject",
    "Positioned",
    "Expression",
    "Nop",
    "BinaryExpression",
    "UnaryExpression",
    "ParenthesizedExpression",
    "NotExpression",
    "UnaryMinusExpression",
    "UnfoldExpression",
    "AssignmentExpression",
    "ArithmeticExpression",
    "RelationshipExpression",
    "AccessExpression",
    "ComparisonExpression",
    "MatchExpression",
    "InExpression",
    "BooleanExpression",
    "AndExpression",
    "OrExpression",
    "LiteralList",
    "KeyedEntry",
    "LiteralHash",
    "BlockExpression",
    "ApplyBlockExpression",
    "CaseOption",
    "CaseExpression",
    "QueryExpression",
    "ExportedQuery",
    "VirtualQuery",
    "AbstractAttributeOperation",
    "AttributeOperation",
    "AttributesOperation",
    "CollectExpression",
    "Parameter",
    "Definition",
    "NamedDefinition",
    "FunctionDefinition",
    "ResourceTypeDefinition",
    "QRefDefinition",
    "TypeAlias",
    "TypeMapping",
    "TypeDefinition",
    "NodeDefinition",
    "HeredocExpression",
    "HostClassDefinition",
    "PlanDefinition",
    "LambdaExpression",
    "ApplyExpression",
    "IfExpression",
    "UnlessExpression",
    "CallExpression",
    "CallFunctionExpression",
    "CallNamedFunctionExpression",
    "CallMethodExpression",
    "Literal",
    "LiteralValue",
    "LiteralRegularExpression",
    "LiteralString",
    "LiteralNumber",
    "LiteralInteger",
    "LiteralFloat",
    "LiteralUndef",
    "LiteralDefault",
    "LiteralBoolean",
    "TextExpression",
    "ConcatenatedString",
    "QualifiedName",
    "ReservedWord",
    "QualifiedReference",
    "VariableExpression",
    "EppExpression",
    "RenderStringExpression",
    "RenderExpression",
    "ResourceBody",
    "AbstractResource",
    "ResourceExpression",
    "ResourceDefaultsExpression",
    "ResourceOverrideExpression",
    "SelectorEntry",
    "SelectorExpression",
    "NamedAccessExpression",
    "Program",
]


class Locator(LocatorMixin, Node):
    __slots__ = ("string", "file", "line_index", "_b")
    _name = "Locator"
    _pcore_name = "Puppet::AST::Locator"
    _fields: ClassVar[tuple[str, ...]] = ("string", "file", "line_index")
    _wire: ClassVar[tuple[str, ...]] = ("string", "file", "line_index")
    _defaults: ClassVar[dict[str, Any]] = {"line_index": None}
    _types: ClassVar[dict[str, str]] = {
        "string": "String",
        "file": "String",
        "line_index": "Optional[Array[Integer]]",
    }
    _min = 2
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    string: str
    file: str
    line_index: list[int] | None

    def __init__(self, string: str, file: str, line_index: list[int] | None = None) -> None:
        self.string = string
        self.file = file
        self.line_index = line_index


class PopsObject(Node):
    __slots__ = ()
    _name = "PopsObject"
    _pcore_name = "Puppet::AST::PopsObject"
    _fields: ClassVar[tuple[str, ...]] = ()
    _wire: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {}
    _min = 0
    _abstract = True
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        pass


class Positioned(PositionedMixin, PopsObject):
    __slots__ = ("locator", "offset", "length")
    _name = "Positioned"
    _pcore_name = "Puppet::AST::Positioned"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {"locator": "Locator", "offset": "Integer", "length": "Integer"}
    _min = 3
    _abstract = True
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    locator: Locator
    offset: int
    length: int

    def __init__(self, locator: Locator, offset: int, length: int) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length


class Expression(Positioned):
    __slots__ = ()
    _name = "Expression"
    _pcore_name = "Puppet::AST::Expression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {"locator": "Locator", "offset": "Integer", "length": "Integer"}
    _min = 3
    _abstract = True
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, locator: Locator, offset: int, length: int) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length


class Nop(Expression):
    __slots__ = ()
    _name = "Nop"
    _pcore_name = "Puppet::AST::Nop"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {"locator": "Locator", "offset": "Integer", "length": "Integer"}
    _min = 3
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, locator: Locator, offset: int, length: int) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length


class BinaryExpression(Expression):
    __slots__ = ("left_expr", "right_expr")
    _name = "BinaryExpression"
    _pcore_name = "Puppet::AST::BinaryExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "right_expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "right_expr")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "left_expr": "Expression",
        "right_expr": "Expression",
    }
    _min = 5
    _abstract = True
    _child_fields: ClassVar[tuple[str, ...]] = ("left_expr", "right_expr")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    left_expr: Expression
    right_expr: Expression

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        left_expr: Expression,
        right_expr: Expression,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.left_expr = left_expr
        self.right_expr = right_expr


class UnaryExpression(Expression):
    __slots__ = ("expr",)
    _name = "UnaryExpression"
    _pcore_name = "Puppet::AST::UnaryExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "expr": "Expression",
    }
    _min = 4
    _abstract = True
    _child_fields: ClassVar[tuple[str, ...]] = ("expr",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    expr: Expression

    def __init__(self, locator: Locator, offset: int, length: int, expr: Expression) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.expr = expr


class ParenthesizedExpression(UnaryExpression):
    __slots__ = ()
    _name = "ParenthesizedExpression"
    _pcore_name = "Puppet::AST::ParenthesizedExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "expr": "Expression",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("expr",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, locator: Locator, offset: int, length: int, expr: Expression) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.expr = expr


class NotExpression(UnaryExpression):
    __slots__ = ()
    _name = "NotExpression"
    _pcore_name = "Puppet::AST::NotExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "expr": "Expression",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("expr",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, locator: Locator, offset: int, length: int, expr: Expression) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.expr = expr


class UnaryMinusExpression(UnaryExpression):
    __slots__ = ()
    _name = "UnaryMinusExpression"
    _pcore_name = "Puppet::AST::UnaryMinusExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "expr": "Expression",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("expr",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, locator: Locator, offset: int, length: int, expr: Expression) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.expr = expr


class UnfoldExpression(UnaryExpression):
    __slots__ = ()
    _name = "UnfoldExpression"
    _pcore_name = "Puppet::AST::UnfoldExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "expr": "Expression",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("expr",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, locator: Locator, offset: int, length: int, expr: Expression) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.expr = expr


class AssignmentExpression(BinaryExpression):
    __slots__ = ("operator",)
    _name = "AssignmentExpression"
    _pcore_name = "Puppet::AST::AssignmentExpression"
    _fields: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "left_expr",
        "right_expr",
        "operator",
    )
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "right_expr", "operator")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "left_expr": "Expression",
        "right_expr": "Expression",
        "operator": "Enum['+=', '-=', '=']",
    }
    _min = 6
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("left_expr", "right_expr")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    operator: str

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        left_expr: Expression,
        right_expr: Expression,
        operator: str,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.left_expr = left_expr
        self.right_expr = right_expr
        self.operator = operator


class ArithmeticExpression(BinaryExpression):
    __slots__ = ("operator",)
    _name = "ArithmeticExpression"
    _pcore_name = "Puppet::AST::ArithmeticExpression"
    _fields: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "left_expr",
        "right_expr",
        "operator",
    )
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "right_expr", "operator")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "left_expr": "Expression",
        "right_expr": "Expression",
        "operator": "Enum['%', '*', '+', '-', '/', '<<', '>>']",
    }
    _min = 6
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("left_expr", "right_expr")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    operator: str

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        left_expr: Expression,
        right_expr: Expression,
        operator: str,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.left_expr = left_expr
        self.right_expr = right_expr
        self.operator = operator


class RelationshipExpression(BinaryExpression):
    __slots__ = ("operator",)
    _name = "RelationshipExpression"
    _pcore_name = "Puppet::AST::RelationshipExpression"
    _fields: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "left_expr",
        "right_expr",
        "operator",
    )
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "right_expr", "operator")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "left_expr": "Expression",
        "right_expr": "Expression",
        "operator": "Enum['->', '<-', '<~', '~>']",
    }
    _min = 6
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("left_expr", "right_expr")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    operator: str

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        left_expr: Expression,
        right_expr: Expression,
        operator: str,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.left_expr = left_expr
        self.right_expr = right_expr
        self.operator = operator


class AccessExpression(Expression):
    __slots__ = ("left_expr", "keys")
    _name = "AccessExpression"
    _pcore_name = "Puppet::AST::AccessExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "keys")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "keys")
    _defaults: ClassVar[dict[str, Any]] = {"keys": []}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "left_expr": "Expression",
        "keys": "Array[Expression]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("left_expr", "keys")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    left_expr: Expression
    keys: list[Expression]

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        left_expr: Expression,
        keys: list[Expression] = DEFAULT,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.left_expr = left_expr
        self.keys = [] if keys is DEFAULT else keys


class ComparisonExpression(BinaryExpression):
    __slots__ = ("operator",)
    _name = "ComparisonExpression"
    _pcore_name = "Puppet::AST::ComparisonExpression"
    _fields: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "left_expr",
        "right_expr",
        "operator",
    )
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "right_expr", "operator")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "left_expr": "Expression",
        "right_expr": "Expression",
        "operator": "Enum['!=', '<', '<=', '==', '>', '>=']",
    }
    _min = 6
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("left_expr", "right_expr")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    operator: str

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        left_expr: Expression,
        right_expr: Expression,
        operator: str,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.left_expr = left_expr
        self.right_expr = right_expr
        self.operator = operator


class MatchExpression(BinaryExpression):
    __slots__ = ("operator",)
    _name = "MatchExpression"
    _pcore_name = "Puppet::AST::MatchExpression"
    _fields: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "left_expr",
        "right_expr",
        "operator",
    )
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "right_expr", "operator")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "left_expr": "Expression",
        "right_expr": "Expression",
        "operator": "Enum['!~', '=~']",
    }
    _min = 6
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("left_expr", "right_expr")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    operator: str

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        left_expr: Expression,
        right_expr: Expression,
        operator: str,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.left_expr = left_expr
        self.right_expr = right_expr
        self.operator = operator


class InExpression(BinaryExpression):
    __slots__ = ()
    _name = "InExpression"
    _pcore_name = "Puppet::AST::InExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "right_expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "right_expr")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "left_expr": "Expression",
        "right_expr": "Expression",
    }
    _min = 5
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("left_expr", "right_expr")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        left_expr: Expression,
        right_expr: Expression,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.left_expr = left_expr
        self.right_expr = right_expr


class BooleanExpression(BinaryExpression):
    __slots__ = ()
    _name = "BooleanExpression"
    _pcore_name = "Puppet::AST::BooleanExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "right_expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "right_expr")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "left_expr": "Expression",
        "right_expr": "Expression",
    }
    _min = 5
    _abstract = True
    _child_fields: ClassVar[tuple[str, ...]] = ("left_expr", "right_expr")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        left_expr: Expression,
        right_expr: Expression,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.left_expr = left_expr
        self.right_expr = right_expr


class AndExpression(BooleanExpression):
    __slots__ = ()
    _name = "AndExpression"
    _pcore_name = "Puppet::AST::AndExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "right_expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "right_expr")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "left_expr": "Expression",
        "right_expr": "Expression",
    }
    _min = 5
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("left_expr", "right_expr")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        left_expr: Expression,
        right_expr: Expression,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.left_expr = left_expr
        self.right_expr = right_expr


class OrExpression(BooleanExpression):
    __slots__ = ()
    _name = "OrExpression"
    _pcore_name = "Puppet::AST::OrExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "right_expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "right_expr")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "left_expr": "Expression",
        "right_expr": "Expression",
    }
    _min = 5
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("left_expr", "right_expr")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        left_expr: Expression,
        right_expr: Expression,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.left_expr = left_expr
        self.right_expr = right_expr


class LiteralList(Expression):
    __slots__ = ("values",)
    _name = "LiteralList"
    _pcore_name = "Puppet::AST::LiteralList"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "values")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "values")
    _defaults: ClassVar[dict[str, Any]] = {"values": []}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "values": "Array[Expression]",
    }
    _min = 3
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("values",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    values: list[Expression]

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        values: list[Expression] = DEFAULT,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.values = [] if values is DEFAULT else values


class KeyedEntry(Positioned):
    __slots__ = ("key", "value")
    _name = "KeyedEntry"
    _pcore_name = "Puppet::AST::KeyedEntry"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "key", "value")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "key", "value")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "key": "Expression",
        "value": "Expression",
    }
    _min = 5
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("key", "value")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    key: Expression
    value: Expression

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        key: Expression,
        value: Expression,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.key = key
        self.value = value


class LiteralHash(Expression):
    __slots__ = ("entries",)
    _name = "LiteralHash"
    _pcore_name = "Puppet::AST::LiteralHash"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "entries")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "entries")
    _defaults: ClassVar[dict[str, Any]] = {"entries": []}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "entries": "Array[KeyedEntry]",
    }
    _min = 3
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("entries",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    entries: list[KeyedEntry]

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        entries: list[KeyedEntry] = DEFAULT,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.entries = [] if entries is DEFAULT else entries


class BlockExpression(Expression):
    __slots__ = ("statements",)
    _name = "BlockExpression"
    _pcore_name = "Puppet::AST::BlockExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "statements")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "statements")
    _defaults: ClassVar[dict[str, Any]] = {"statements": []}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "statements": "Array[Expression]",
    }
    _min = 3
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("statements",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    statements: list[Expression]

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        statements: list[Expression] = DEFAULT,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.statements = [] if statements is DEFAULT else statements


class ApplyBlockExpression(BlockExpression):
    __slots__ = ()
    _name = "ApplyBlockExpression"
    _pcore_name = "Puppet::AST::ApplyBlockExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "statements")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "statements")
    _defaults: ClassVar[dict[str, Any]] = {"statements": []}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "statements": "Array[Expression]",
    }
    _min = 3
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("statements",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        statements: list[Expression] = DEFAULT,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.statements = [] if statements is DEFAULT else statements


class CaseOption(Expression):
    __slots__ = ("values", "then_expr")
    _name = "CaseOption"
    _pcore_name = "Puppet::AST::CaseOption"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "values", "then_expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "values", "then_expr")
    _defaults: ClassVar[dict[str, Any]] = {"then_expr": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "values": "Array[Expression, 1]",
        "then_expr": "Optional[Expression]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("values", "then_expr")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    values: list[Expression]
    then_expr: Expression | None

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        values: list[Expression],
        then_expr: Expression | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.values = values
        self.then_expr = then_expr


class CaseExpression(Expression):
    __slots__ = ("test", "options")
    _name = "CaseExpression"
    _pcore_name = "Puppet::AST::CaseExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "test", "options")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "test", "options")
    _defaults: ClassVar[dict[str, Any]] = {"options": []}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "test": "Expression",
        "options": "Array[CaseOption]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("test", "options")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    test: Expression
    options: list[CaseOption]

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        test: Expression,
        options: list[CaseOption] = DEFAULT,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.test = test
        self.options = [] if options is DEFAULT else options


class QueryExpression(Expression):
    __slots__ = ("expr",)
    _name = "QueryExpression"
    _pcore_name = "Puppet::AST::QueryExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _defaults: ClassVar[dict[str, Any]] = {"expr": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "expr": "Optional[Expression]",
    }
    _min = 3
    _abstract = True
    _child_fields: ClassVar[tuple[str, ...]] = ("expr",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    expr: Expression | None

    def __init__(self, locator: Locator, offset: int, length: int, expr: Expression | None = None) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.expr = expr


class ExportedQuery(QueryExpression):
    __slots__ = ()
    _name = "ExportedQuery"
    _pcore_name = "Puppet::AST::ExportedQuery"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _defaults: ClassVar[dict[str, Any]] = {"expr": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "expr": "Optional[Expression]",
    }
    _min = 3
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("expr",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, locator: Locator, offset: int, length: int, expr: Expression | None = None) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.expr = expr


class VirtualQuery(QueryExpression):
    __slots__ = ()
    _name = "VirtualQuery"
    _pcore_name = "Puppet::AST::VirtualQuery"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _defaults: ClassVar[dict[str, Any]] = {"expr": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "expr": "Optional[Expression]",
    }
    _min = 3
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("expr",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, locator: Locator, offset: int, length: int, expr: Expression | None = None) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.expr = expr


class AbstractAttributeOperation(Positioned):
    __slots__ = ()
    _name = "AbstractAttributeOperation"
    _pcore_name = "Puppet::AST::AbstractAttributeOperation"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {"locator": "Locator", "offset": "Integer", "length": "Integer"}
    _min = 3
    _abstract = True
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, locator: Locator, offset: int, length: int) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length


class AttributeOperation(AbstractAttributeOperation):
    __slots__ = ("attribute_name", "operator", "value_expr")
    _name = "AttributeOperation"
    _pcore_name = "Puppet::AST::AttributeOperation"
    _fields: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "attribute_name",
        "operator",
        "value_expr",
    )
    _wire: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "attribute_name",
        "operator",
        "value_expr",
    )
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "attribute_name": "String",
        "operator": "Enum['+>', '=>']",
        "value_expr": "Expression",
    }
    _min = 6
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("value_expr",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    attribute_name: str
    operator: str
    value_expr: Expression

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        attribute_name: str,
        operator: str,
        value_expr: Expression,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.attribute_name = attribute_name
        self.operator = operator
        self.value_expr = value_expr


class AttributesOperation(AbstractAttributeOperation):
    __slots__ = ("expr",)
    _name = "AttributesOperation"
    _pcore_name = "Puppet::AST::AttributesOperation"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "expr": "Expression",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("expr",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    expr: Expression

    def __init__(self, locator: Locator, offset: int, length: int, expr: Expression) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.expr = expr


class CollectExpression(Expression):
    __slots__ = ("type_expr", "query", "operations")
    _name = "CollectExpression"
    _pcore_name = "Puppet::AST::CollectExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "type_expr", "query", "operations")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "type_expr", "query", "operations")
    _defaults: ClassVar[dict[str, Any]] = {"operations": []}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "type_expr": "Expression",
        "query": "QueryExpression",
        "operations": "Array[AbstractAttributeOperation]",
    }
    _min = 5
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("type_expr", "query", "operations")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    type_expr: Expression
    query: QueryExpression
    operations: list[AbstractAttributeOperation]

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        type_expr: Expression,
        query: QueryExpression,
        operations: list[AbstractAttributeOperation] = DEFAULT,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.type_expr = type_expr
        self.query = query
        self.operations = [] if operations is DEFAULT else operations


class Parameter(Positioned):
    __slots__ = ("name", "value", "type_expr", "captures_rest")
    _name = "Parameter"
    _pcore_name = "Puppet::AST::Parameter"
    _fields: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "name",
        "value",
        "type_expr",
        "captures_rest",
    )
    _wire: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "name",
        "value",
        "type_expr",
        "captures_rest",
    )
    _defaults: ClassVar[dict[str, Any]] = {"value": None, "type_expr": None, "captures_rest": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "name": "String",
        "value": "Optional[Expression]",
        "type_expr": "Optional[Expression]",
        "captures_rest": "Optional[Boolean]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("value", "type_expr")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    name: str
    value: Expression | None
    type_expr: Expression | None
    captures_rest: bool | None

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        name: str,
        value: Expression | None = None,
        type_expr: Expression | None = None,
        captures_rest: bool | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.name = name
        self.value = value
        self.type_expr = type_expr
        self.captures_rest = captures_rest


class Definition(Expression):
    __slots__ = ()
    _name = "Definition"
    _pcore_name = "Puppet::AST::Definition"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {"locator": "Locator", "offset": "Integer", "length": "Integer"}
    _min = 3
    _abstract = True
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, locator: Locator, offset: int, length: int) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length


class NamedDefinition(Definition):
    __slots__ = ("name", "parameters", "body")
    _name = "NamedDefinition"
    _pcore_name = "Puppet::AST::NamedDefinition"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "name", "parameters", "body")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "name", "parameters", "body")
    _defaults: ClassVar[dict[str, Any]] = {"parameters": [], "body": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "name": "String",
        "parameters": "Array[Parameter]",
        "body": "Optional[Expression]",
    }
    _min = 4
    _abstract = True
    _child_fields: ClassVar[tuple[str, ...]] = ("parameters", "body")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    name: str
    parameters: list[Parameter]
    body: Expression | None

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        name: str,
        parameters: list[Parameter] = DEFAULT,
        body: Expression | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.name = name
        self.parameters = [] if parameters is DEFAULT else parameters
        self.body = body


class FunctionDefinition(NamedDefinition):
    __slots__ = ("return_type",)
    _name = "FunctionDefinition"
    _pcore_name = "Puppet::AST::FunctionDefinition"
    _fields: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "name",
        "parameters",
        "body",
        "return_type",
    )
    _wire: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "name",
        "parameters",
        "body",
        "return_type",
    )
    _defaults: ClassVar[dict[str, Any]] = {"parameters": [], "body": None, "return_type": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "name": "String",
        "parameters": "Array[Parameter]",
        "body": "Optional[Expression]",
        "return_type": "Optional[Expression]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("parameters", "body", "return_type")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    return_type: Expression | None

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        name: str,
        parameters: list[Parameter] = DEFAULT,
        body: Expression | None = None,
        return_type: Expression | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.name = name
        self.parameters = [] if parameters is DEFAULT else parameters
        self.body = body
        self.return_type = return_type


class ResourceTypeDefinition(NamedDefinition):
    __slots__ = ()
    _name = "ResourceTypeDefinition"
    _pcore_name = "Puppet::AST::ResourceTypeDefinition"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "name", "parameters", "body")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "name", "parameters", "body")
    _defaults: ClassVar[dict[str, Any]] = {"parameters": [], "body": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "name": "String",
        "parameters": "Array[Parameter]",
        "body": "Optional[Expression]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("parameters", "body")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        name: str,
        parameters: list[Parameter] = DEFAULT,
        body: Expression | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.name = name
        self.parameters = [] if parameters is DEFAULT else parameters
        self.body = body


class QRefDefinition(Definition):
    __slots__ = ("name",)
    _name = "QRefDefinition"
    _pcore_name = "Puppet::AST::QRefDefinition"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "name")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "name")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "name": "String",
    }
    _min = 4
    _abstract = True
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    name: str

    def __init__(self, locator: Locator, offset: int, length: int, name: str) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.name = name


class TypeAlias(QRefDefinition):
    __slots__ = ("type_expr",)
    _name = "TypeAlias"
    _pcore_name = "Puppet::AST::TypeAlias"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "name", "type_expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "name", "type_expr")
    _defaults: ClassVar[dict[str, Any]] = {"type_expr": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "name": "String",
        "type_expr": "Optional[Expression]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("type_expr",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    type_expr: Expression | None

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        name: str,
        type_expr: Expression | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.name = name
        self.type_expr = type_expr


class TypeMapping(Definition):
    __slots__ = ("type_expr", "mapping_expr")
    _name = "TypeMapping"
    _pcore_name = "Puppet::AST::TypeMapping"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "type_expr", "mapping_expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "type_expr", "mapping_expr")
    _defaults: ClassVar[dict[str, Any]] = {"type_expr": None, "mapping_expr": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "type_expr": "Optional[Expression]",
        "mapping_expr": "Optional[Expression]",
    }
    _min = 3
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("type_expr", "mapping_expr")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    type_expr: Expression | None
    mapping_expr: Expression | None

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        type_expr: Expression | None = None,
        mapping_expr: Expression | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.type_expr = type_expr
        self.mapping_expr = mapping_expr


class TypeDefinition(QRefDefinition):
    __slots__ = ("parent", "body")
    _name = "TypeDefinition"
    _pcore_name = "Puppet::AST::TypeDefinition"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "name", "parent", "body")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "name", "parent", "body")
    _defaults: ClassVar[dict[str, Any]] = {"parent": None, "body": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "name": "String",
        "parent": "Optional[String]",
        "body": "Optional[Expression]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("body",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    parent: str | None
    body: Expression | None

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        name: str,
        parent: str | None = None,
        body: Expression | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.name = name
        self.parent = parent
        self.body = body


class NodeDefinition(Definition):
    __slots__ = ("parent", "host_matches", "body")
    _name = "NodeDefinition"
    _pcore_name = "Puppet::AST::NodeDefinition"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "parent", "host_matches", "body")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "host_matches", "parent", "body")
    _defaults: ClassVar[dict[str, Any]] = {"parent": None, "body": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "parent": "Optional[Expression]",
        "host_matches": "Array[Expression, 1]",
        "body": "Optional[Expression]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("parent", "host_matches", "body")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    parent: Expression | None
    host_matches: list[Expression]
    body: Expression | None

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        host_matches: list[Expression],
        parent: Expression | None = None,
        body: Expression | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.host_matches = host_matches
        self.parent = parent
        self.body = body


class HeredocExpression(Expression):
    __slots__ = ("syntax", "text_expr")
    _name = "HeredocExpression"
    _pcore_name = "Puppet::AST::HeredocExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "syntax", "text_expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "text_expr", "syntax")
    _defaults: ClassVar[dict[str, Any]] = {"syntax": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "syntax": "Optional[String]",
        "text_expr": "Expression",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("text_expr",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    syntax: str | None
    text_expr: Expression

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        text_expr: Expression,
        syntax: str | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.text_expr = text_expr
        self.syntax = syntax


class HostClassDefinition(NamedDefinition):
    __slots__ = ("parent_class",)
    _name = "HostClassDefinition"
    _pcore_name = "Puppet::AST::HostClassDefinition"
    _fields: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "name",
        "parameters",
        "body",
        "parent_class",
    )
    _wire: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "name",
        "parameters",
        "body",
        "parent_class",
    )
    _defaults: ClassVar[dict[str, Any]] = {"parameters": [], "body": None, "parent_class": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "name": "String",
        "parameters": "Array[Parameter]",
        "body": "Optional[Expression]",
        "parent_class": "Optional[String]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("parameters", "body")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    parent_class: str | None

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        name: str,
        parameters: list[Parameter] = DEFAULT,
        body: Expression | None = None,
        parent_class: str | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.name = name
        self.parameters = [] if parameters is DEFAULT else parameters
        self.body = body
        self.parent_class = parent_class


class PlanDefinition(FunctionDefinition):
    __slots__ = ()
    _name = "PlanDefinition"
    _pcore_name = "Puppet::AST::PlanDefinition"
    _fields: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "name",
        "parameters",
        "body",
        "return_type",
    )
    _wire: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "name",
        "parameters",
        "body",
        "return_type",
    )
    _defaults: ClassVar[dict[str, Any]] = {"parameters": [], "body": None, "return_type": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "name": "String",
        "parameters": "Array[Parameter]",
        "body": "Optional[Expression]",
        "return_type": "Optional[Expression]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("parameters", "body", "return_type")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        name: str,
        parameters: list[Parameter] = DEFAULT,
        body: Expression | None = None,
        return_type: Expression | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.name = name
        self.parameters = [] if parameters is DEFAULT else parameters
        self.body = body
        self.return_type = return_type


class LambdaExpression(Expression):
    __slots__ = ("parameters", "body", "return_type")
    _name = "LambdaExpression"
    _pcore_name = "Puppet::AST::LambdaExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "parameters", "body", "return_type")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "parameters", "body", "return_type")
    _defaults: ClassVar[dict[str, Any]] = {"parameters": [], "body": None, "return_type": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "parameters": "Array[Parameter]",
        "body": "Optional[Expression]",
        "return_type": "Optional[Expression]",
    }
    _min = 3
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("parameters", "body", "return_type")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    parameters: list[Parameter]
    body: Expression | None
    return_type: Expression | None

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        parameters: list[Parameter] = DEFAULT,
        body: Expression | None = None,
        return_type: Expression | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.parameters = [] if parameters is DEFAULT else parameters
        self.body = body
        self.return_type = return_type


class ApplyExpression(Expression):
    __slots__ = ("arguments", "body")
    _name = "ApplyExpression"
    _pcore_name = "Puppet::AST::ApplyExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "arguments", "body")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "arguments", "body")
    _defaults: ClassVar[dict[str, Any]] = {"arguments": [], "body": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "arguments": "Array[Expression]",
        "body": "Optional[Expression]",
    }
    _min = 3
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("arguments", "body")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    arguments: list[Expression]
    body: Expression | None

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        arguments: list[Expression] = DEFAULT,
        body: Expression | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.arguments = [] if arguments is DEFAULT else arguments
        self.body = body


class IfExpression(Expression):
    __slots__ = ("test", "then_expr", "else_expr")
    _name = "IfExpression"
    _pcore_name = "Puppet::AST::IfExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "test", "then_expr", "else_expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "test", "then_expr", "else_expr")
    _defaults: ClassVar[dict[str, Any]] = {"then_expr": None, "else_expr": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "test": "Expression",
        "then_expr": "Optional[Expression]",
        "else_expr": "Optional[Expression]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("test", "then_expr", "else_expr")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    test: Expression
    then_expr: Expression | None
    else_expr: Expression | None

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        test: Expression,
        then_expr: Expression | None = None,
        else_expr: Expression | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.test = test
        self.then_expr = then_expr
        self.else_expr = else_expr


class UnlessExpression(IfExpression):
    __slots__ = ()
    _name = "UnlessExpression"
    _pcore_name = "Puppet::AST::UnlessExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "test", "then_expr", "else_expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "test", "then_expr", "else_expr")
    _defaults: ClassVar[dict[str, Any]] = {"then_expr": None, "else_expr": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "test": "Expression",
        "then_expr": "Optional[Expression]",
        "else_expr": "Optional[Expression]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("test", "then_expr", "else_expr")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        test: Expression,
        then_expr: Expression | None = None,
        else_expr: Expression | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.test = test
        self.then_expr = then_expr
        self.else_expr = else_expr


class CallExpression(Expression):
    __slots__ = ("rval_required", "functor_expr", "arguments", "lambda_")
    _name = "CallExpression"
    _pcore_name = "Puppet::AST::CallExpression"
    _fields: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "rval_required",
        "functor_expr",
        "arguments",
        "lambda_",
    )
    _wire: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "functor_expr",
        "rval_required",
        "arguments",
        "lambda_",
    )
    _defaults: ClassVar[dict[str, Any]] = {"rval_required": False, "arguments": [], "lambda_": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "rval_required": "Boolean",
        "functor_expr": "Expression",
        "arguments": "Array[Expression]",
        "lambda_": "Optional[Expression]",
    }
    _min = 4
    _abstract = True
    _child_fields: ClassVar[tuple[str, ...]] = ("functor_expr", "arguments", "lambda_")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    rval_required: bool
    functor_expr: Expression
    arguments: list[Expression]
    lambda_: Expression | None

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        functor_expr: Expression,
        rval_required: bool = False,
        arguments: list[Expression] = DEFAULT,
        lambda_: Expression | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.functor_expr = functor_expr
        self.rval_required = rval_required
        self.arguments = [] if arguments is DEFAULT else arguments
        self.lambda_ = lambda_


class CallFunctionExpression(CallExpression):
    __slots__ = ()
    _name = "CallFunctionExpression"
    _pcore_name = "Puppet::AST::CallFunctionExpression"
    _fields: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "rval_required",
        "functor_expr",
        "arguments",
        "lambda_",
    )
    _wire: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "functor_expr",
        "rval_required",
        "arguments",
        "lambda_",
    )
    _defaults: ClassVar[dict[str, Any]] = {"rval_required": False, "arguments": [], "lambda_": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "rval_required": "Boolean",
        "functor_expr": "Expression",
        "arguments": "Array[Expression]",
        "lambda_": "Optional[Expression]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("functor_expr", "arguments", "lambda_")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        functor_expr: Expression,
        rval_required: bool = False,
        arguments: list[Expression] = DEFAULT,
        lambda_: Expression | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.functor_expr = functor_expr
        self.rval_required = rval_required
        self.arguments = [] if arguments is DEFAULT else arguments
        self.lambda_ = lambda_


class CallNamedFunctionExpression(CallExpression):
    __slots__ = ()
    _name = "CallNamedFunctionExpression"
    _pcore_name = "Puppet::AST::CallNamedFunctionExpression"
    _fields: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "rval_required",
        "functor_expr",
        "arguments",
        "lambda_",
    )
    _wire: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "functor_expr",
        "rval_required",
        "arguments",
        "lambda_",
    )
    _defaults: ClassVar[dict[str, Any]] = {"rval_required": False, "arguments": [], "lambda_": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "rval_required": "Boolean",
        "functor_expr": "Expression",
        "arguments": "Array[Expression]",
        "lambda_": "Optional[Expression]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("functor_expr", "arguments", "lambda_")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        functor_expr: Expression,
        rval_required: bool = False,
        arguments: list[Expression] = DEFAULT,
        lambda_: Expression | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.functor_expr = functor_expr
        self.rval_required = rval_required
        self.arguments = [] if arguments is DEFAULT else arguments
        self.lambda_ = lambda_


class CallMethodExpression(CallExpression):
    __slots__ = ()
    _name = "CallMethodExpression"
    _pcore_name = "Puppet::AST::CallMethodExpression"
    _fields: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "rval_required",
        "functor_expr",
        "arguments",
        "lambda_",
    )
    _wire: ClassVar[tuple[str, ...]] = (
        "locator",
        "offset",
        "length",
        "functor_expr",
        "rval_required",
        "arguments",
        "lambda_",
    )
    _defaults: ClassVar[dict[str, Any]] = {"rval_required": False, "arguments": [], "lambda_": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "rval_required": "Boolean",
        "functor_expr": "Expression",
        "arguments": "Array[Expression]",
        "lambda_": "Optional[Expression]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("functor_expr", "arguments", "lambda_")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        functor_expr: Expression,
        rval_required: bool = False,
        arguments: list[Expression] = DEFAULT,
        lambda_: Expression | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.functor_expr = functor_expr
        self.rval_required = rval_required
        self.arguments = [] if arguments is DEFAULT else arguments
        self.lambda_ = lambda_


class Literal(Expression):
    __slots__ = ()
    _name = "Literal"
    _pcore_name = "Puppet::AST::Literal"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {"locator": "Locator", "offset": "Integer", "length": "Integer"}
    _min = 3
    _abstract = True
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, locator: Locator, offset: int, length: int) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length


class LiteralValue(Literal):
    __slots__ = ()
    _name = "LiteralValue"
    _pcore_name = "Puppet::AST::LiteralValue"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {"locator": "Locator", "offset": "Integer", "length": "Integer"}
    _min = 3
    _abstract = True
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, locator: Locator, offset: int, length: int) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length


class LiteralRegularExpression(LiteralValue):
    __slots__ = ("value", "pattern")
    _name = "LiteralRegularExpression"
    _pcore_name = "Puppet::AST::LiteralRegularExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "value", "pattern")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "value", "pattern")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "value": "Any",
        "pattern": "String",
    }
    _min = 5
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    value: Regexp
    pattern: str

    def __init__(self, locator: Locator, offset: int, length: int, value: Regexp, pattern: str) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.value = value
        self.pattern = pattern


class LiteralString(LiteralValue):
    __slots__ = ("value",)
    _name = "LiteralString"
    _pcore_name = "Puppet::AST::LiteralString"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "value")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "value")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "value": "String",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    value: str

    def __init__(self, locator: Locator, offset: int, length: int, value: str) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.value = value


class LiteralNumber(LiteralValue):
    __slots__ = ()
    _name = "LiteralNumber"
    _pcore_name = "Puppet::AST::LiteralNumber"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {"locator": "Locator", "offset": "Integer", "length": "Integer"}
    _min = 3
    _abstract = True
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, locator: Locator, offset: int, length: int) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length


class LiteralInteger(LiteralNumber):
    __slots__ = ("radix", "value")
    _name = "LiteralInteger"
    _pcore_name = "Puppet::AST::LiteralInteger"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "radix", "value")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "value", "radix")
    _defaults: ClassVar[dict[str, Any]] = {"radix": 10}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "radix": "Integer",
        "value": "Integer",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    radix: int
    value: int

    def __init__(self, locator: Locator, offset: int, length: int, value: int, radix: int = 10) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.value = value
        self.radix = radix


class LiteralFloat(LiteralNumber):
    __slots__ = ("value",)
    _name = "LiteralFloat"
    _pcore_name = "Puppet::AST::LiteralFloat"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "value")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "value")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "value": "Float",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    value: float

    def __init__(self, locator: Locator, offset: int, length: int, value: float) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.value = value


class LiteralUndef(Literal):
    __slots__ = ()
    _name = "LiteralUndef"
    _pcore_name = "Puppet::AST::LiteralUndef"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {"locator": "Locator", "offset": "Integer", "length": "Integer"}
    _min = 3
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, locator: Locator, offset: int, length: int) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length


class LiteralDefault(Literal):
    __slots__ = ()
    _name = "LiteralDefault"
    _pcore_name = "Puppet::AST::LiteralDefault"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {"locator": "Locator", "offset": "Integer", "length": "Integer"}
    _min = 3
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, locator: Locator, offset: int, length: int) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length


class LiteralBoolean(LiteralValue):
    __slots__ = ("value",)
    _name = "LiteralBoolean"
    _pcore_name = "Puppet::AST::LiteralBoolean"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "value")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "value")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "value": "Boolean",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    value: bool

    def __init__(self, locator: Locator, offset: int, length: int, value: bool) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.value = value


class TextExpression(UnaryExpression):
    __slots__ = ()
    _name = "TextExpression"
    _pcore_name = "Puppet::AST::TextExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "expr": "Expression",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("expr",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, locator: Locator, offset: int, length: int, expr: Expression) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.expr = expr


class ConcatenatedString(Expression):
    __slots__ = ("segments",)
    _name = "ConcatenatedString"
    _pcore_name = "Puppet::AST::ConcatenatedString"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "segments")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "segments")
    _defaults: ClassVar[dict[str, Any]] = {"segments": []}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "segments": "Array[Expression]",
    }
    _min = 3
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("segments",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    segments: list[Expression]

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        segments: list[Expression] = DEFAULT,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.segments = [] if segments is DEFAULT else segments


class QualifiedName(LiteralValue):
    __slots__ = ("value",)
    _name = "QualifiedName"
    _pcore_name = "Puppet::AST::QualifiedName"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "value")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "value")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "value": "String",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    value: str

    def __init__(self, locator: Locator, offset: int, length: int, value: str) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.value = value


class ReservedWord(LiteralValue):
    __slots__ = ("word", "future")
    _name = "ReservedWord"
    _pcore_name = "Puppet::AST::ReservedWord"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "word", "future")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "word", "future")
    _defaults: ClassVar[dict[str, Any]] = {"future": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "word": "String",
        "future": "Optional[Boolean]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    word: str
    future: bool | None

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        word: str,
        future: bool | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.word = word
        self.future = future


class QualifiedReference(LiteralValue):
    __slots__ = ("cased_value",)
    _name = "QualifiedReference"
    _pcore_name = "Puppet::AST::QualifiedReference"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "cased_value")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "cased_value")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "cased_value": "String",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    cased_value: str

    def __init__(self, locator: Locator, offset: int, length: int, cased_value: str) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.cased_value = cased_value

    @property
    def value(self) -> str:
        return self.cased_value.lower()


class VariableExpression(UnaryExpression):
    __slots__ = ()
    _name = "VariableExpression"
    _pcore_name = "Puppet::AST::VariableExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "expr": "Expression",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("expr",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, locator: Locator, offset: int, length: int, expr: Expression) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.expr = expr


class EppExpression(Expression):
    __slots__ = ("parameters_specified", "body")
    _name = "EppExpression"
    _pcore_name = "Puppet::AST::EppExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "parameters_specified", "body")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "parameters_specified", "body")
    _defaults: ClassVar[dict[str, Any]] = {"parameters_specified": None, "body": None}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "parameters_specified": "Optional[Boolean]",
        "body": "Optional[Expression]",
    }
    _min = 3
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("body",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    parameters_specified: bool | None
    body: Expression | None

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        parameters_specified: bool | None = None,
        body: Expression | None = None,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.parameters_specified = parameters_specified
        self.body = body


class RenderStringExpression(LiteralString):
    __slots__ = ()
    _name = "RenderStringExpression"
    _pcore_name = "Puppet::AST::RenderStringExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "value")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "value")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "value": "String",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, locator: Locator, offset: int, length: int, value: str) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.value = value


class RenderExpression(UnaryExpression):
    __slots__ = ()
    _name = "RenderExpression"
    _pcore_name = "Puppet::AST::RenderExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "expr")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "expr": "Expression",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("expr",)
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, locator: Locator, offset: int, length: int, expr: Expression) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.expr = expr


class ResourceBody(Positioned):
    __slots__ = ("title", "operations")
    _name = "ResourceBody"
    _pcore_name = "Puppet::AST::ResourceBody"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "title", "operations")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "title", "operations")
    _defaults: ClassVar[dict[str, Any]] = {"title": None, "operations": []}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "title": "Optional[Expression]",
        "operations": "Array[AbstractAttributeOperation]",
    }
    _min = 3
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("title", "operations")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    title: Expression | None
    operations: list[AbstractAttributeOperation]

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        title: Expression | None = None,
        operations: list[AbstractAttributeOperation] = DEFAULT,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.title = title
        self.operations = [] if operations is DEFAULT else operations


class AbstractResource(Expression):
    __slots__ = ("form",)
    _name = "AbstractResource"
    _pcore_name = "Puppet::AST::AbstractResource"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "form")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "form")
    _defaults: ClassVar[dict[str, Any]] = {"form": "regular"}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "form": "Enum['exported', 'regular', 'virtual']",
    }
    _min = 3
    _abstract = True
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    form: str

    def __init__(self, locator: Locator, offset: int, length: int, form: str = "regular") -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.form = form


class ResourceExpression(AbstractResource):
    __slots__ = ("type_name", "bodies")
    _name = "ResourceExpression"
    _pcore_name = "Puppet::AST::ResourceExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "form", "type_name", "bodies")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "type_name", "form", "bodies")
    _defaults: ClassVar[dict[str, Any]] = {"form": "regular", "bodies": []}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "form": "Enum['exported', 'regular', 'virtual']",
        "type_name": "Expression",
        "bodies": "Array[ResourceBody]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("type_name", "bodies")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    type_name: Expression
    bodies: list[ResourceBody]

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        type_name: Expression,
        form: str = "regular",
        bodies: list[ResourceBody] = DEFAULT,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.type_name = type_name
        self.form = form
        self.bodies = [] if bodies is DEFAULT else bodies


class ResourceDefaultsExpression(AbstractResource):
    __slots__ = ("type_ref", "operations")
    _name = "ResourceDefaultsExpression"
    _pcore_name = "Puppet::AST::ResourceDefaultsExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "form", "type_ref", "operations")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "form", "type_ref", "operations")
    _defaults: ClassVar[dict[str, Any]] = {"form": "regular", "type_ref": None, "operations": []}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "form": "Enum['exported', 'regular', 'virtual']",
        "type_ref": "Optional[Expression]",
        "operations": "Array[AbstractAttributeOperation]",
    }
    _min = 3
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("type_ref", "operations")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    type_ref: Expression | None
    operations: list[AbstractAttributeOperation]

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        form: str = "regular",
        type_ref: Expression | None = None,
        operations: list[AbstractAttributeOperation] = DEFAULT,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.form = form
        self.type_ref = type_ref
        self.operations = [] if operations is DEFAULT else operations


class ResourceOverrideExpression(AbstractResource):
    __slots__ = ("resources", "operations")
    _name = "ResourceOverrideExpression"
    _pcore_name = "Puppet::AST::ResourceOverrideExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "form", "resources", "operations")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "resources", "form", "operations")
    _defaults: ClassVar[dict[str, Any]] = {"form": "regular", "operations": []}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "form": "Enum['exported', 'regular', 'virtual']",
        "resources": "Expression",
        "operations": "Array[AbstractAttributeOperation]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("resources", "operations")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    resources: Expression
    operations: list[AbstractAttributeOperation]

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        resources: Expression,
        form: str = "regular",
        operations: list[AbstractAttributeOperation] = DEFAULT,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.resources = resources
        self.form = form
        self.operations = [] if operations is DEFAULT else operations


class SelectorEntry(Positioned):
    __slots__ = ("matching_expr", "value_expr")
    _name = "SelectorEntry"
    _pcore_name = "Puppet::AST::SelectorEntry"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "matching_expr", "value_expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "matching_expr", "value_expr")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "matching_expr": "Expression",
        "value_expr": "Expression",
    }
    _min = 5
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("matching_expr", "value_expr")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    matching_expr: Expression
    value_expr: Expression

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        matching_expr: Expression,
        value_expr: Expression,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.matching_expr = matching_expr
        self.value_expr = value_expr


class SelectorExpression(Expression):
    __slots__ = ("left_expr", "selectors")
    _name = "SelectorExpression"
    _pcore_name = "Puppet::AST::SelectorExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "selectors")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "selectors")
    _defaults: ClassVar[dict[str, Any]] = {"selectors": []}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "left_expr": "Expression",
        "selectors": "Array[SelectorEntry]",
    }
    _min = 4
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("left_expr", "selectors")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    left_expr: Expression
    selectors: list[SelectorEntry]

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        left_expr: Expression,
        selectors: list[SelectorEntry] = DEFAULT,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.left_expr = left_expr
        self.selectors = [] if selectors is DEFAULT else selectors


class NamedAccessExpression(BinaryExpression):
    __slots__ = ()
    _name = "NamedAccessExpression"
    _pcore_name = "Puppet::AST::NamedAccessExpression"
    _fields: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "right_expr")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "offset", "length", "left_expr", "right_expr")
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {
        "locator": "Locator",
        "offset": "Integer",
        "length": "Integer",
        "left_expr": "Expression",
        "right_expr": "Expression",
    }
    _min = 5
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("left_expr", "right_expr")
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        locator: Locator,
        offset: int,
        length: int,
        left_expr: Expression,
        right_expr: Expression,
    ) -> None:
        self.locator = locator
        self.offset = offset
        self.length = length
        self.left_expr = left_expr
        self.right_expr = right_expr


class Program(PopsObject):
    __slots__ = ("body", "definitions", "locator")
    _name = "Program"
    _pcore_name = "Puppet::AST::Program"
    _fields: ClassVar[tuple[str, ...]] = ("body", "definitions", "locator")
    _wire: ClassVar[tuple[str, ...]] = ("locator", "body", "definitions")
    _defaults: ClassVar[dict[str, Any]] = {"body": None, "definitions": []}
    _types: ClassVar[dict[str, str]] = {
        "body": "Optional[Expression]",
        "definitions": "Array[Definition]",
        "locator": "Locator",
    }
    _min = 1
    _abstract = False
    _child_fields: ClassVar[tuple[str, ...]] = ("body",)
    _ref_fields: ClassVar[tuple[str, ...]] = ("definitions",)

    body: Expression | None
    definitions: list[Definition]
    locator: Locator

    def __init__(
        self,
        locator: Locator,
        body: Expression | None = None,
        definitions: list[Definition] = DEFAULT,
    ) -> None:
        self.locator = locator
        self.body = body
        self.definitions = [] if definitions is DEFAULT else definitions


TYPES: dict[str, type[Node]] = {
    "Locator": Locator,
    "PopsObject": PopsObject,
    "Positioned": Positioned,
    "Expression": Expression,
    "Nop": Nop,
    "BinaryExpression": BinaryExpression,
    "UnaryExpression": UnaryExpression,
    "ParenthesizedExpression": ParenthesizedExpression,
    "NotExpression": NotExpression,
    "UnaryMinusExpression": UnaryMinusExpression,
    "UnfoldExpression": UnfoldExpression,
    "AssignmentExpression": AssignmentExpression,
    "ArithmeticExpression": ArithmeticExpression,
    "RelationshipExpression": RelationshipExpression,
    "AccessExpression": AccessExpression,
    "ComparisonExpression": ComparisonExpression,
    "MatchExpression": MatchExpression,
    "InExpression": InExpression,
    "BooleanExpression": BooleanExpression,
    "AndExpression": AndExpression,
    "OrExpression": OrExpression,
    "LiteralList": LiteralList,
    "KeyedEntry": KeyedEntry,
    "LiteralHash": LiteralHash,
    "BlockExpression": BlockExpression,
    "ApplyBlockExpression": ApplyBlockExpression,
    "CaseOption": CaseOption,
    "CaseExpression": CaseExpression,
    "QueryExpression": QueryExpression,
    "ExportedQuery": ExportedQuery,
    "VirtualQuery": VirtualQuery,
    "AbstractAttributeOperation": AbstractAttributeOperation,
    "AttributeOperation": AttributeOperation,
    "AttributesOperation": AttributesOperation,
    "CollectExpression": CollectExpression,
    "Parameter": Parameter,
    "Definition": Definition,
    "NamedDefinition": NamedDefinition,
    "FunctionDefinition": FunctionDefinition,
    "ResourceTypeDefinition": ResourceTypeDefinition,
    "QRefDefinition": QRefDefinition,
    "TypeAlias": TypeAlias,
    "TypeMapping": TypeMapping,
    "TypeDefinition": TypeDefinition,
    "NodeDefinition": NodeDefinition,
    "HeredocExpression": HeredocExpression,
    "HostClassDefinition": HostClassDefinition,
    "PlanDefinition": PlanDefinition,
    "LambdaExpression": LambdaExpression,
    "ApplyExpression": ApplyExpression,
    "IfExpression": IfExpression,
    "UnlessExpression": UnlessExpression,
    "CallExpression": CallExpression,
    "CallFunctionExpression": CallFunctionExpression,
    "CallNamedFunctionExpression": CallNamedFunctionExpression,
    "CallMethodExpression": CallMethodExpression,
    "Literal": Literal,
    "LiteralValue": LiteralValue,
    "LiteralRegularExpression": LiteralRegularExpression,
    "LiteralString": LiteralString,
    "LiteralNumber": LiteralNumber,
    "LiteralInteger": LiteralInteger,
    "LiteralFloat": LiteralFloat,
    "LiteralUndef": LiteralUndef,
    "LiteralDefault": LiteralDefault,
    "LiteralBoolean": LiteralBoolean,
    "TextExpression": TextExpression,
    "ConcatenatedString": ConcatenatedString,
    "QualifiedName": QualifiedName,
    "ReservedWord": ReservedWord,
    "QualifiedReference": QualifiedReference,
    "VariableExpression": VariableExpression,
    "EppExpression": EppExpression,
    "RenderStringExpression": RenderStringExpression,
    "RenderExpression": RenderExpression,
    "ResourceBody": ResourceBody,
    "AbstractResource": AbstractResource,
    "ResourceExpression": ResourceExpression,
    "ResourceDefaultsExpression": ResourceDefaultsExpression,
    "ResourceOverrideExpression": ResourceOverrideExpression,
    "SelectorEntry": SelectorEntry,
    "SelectorExpression": SelectorExpression,
    "NamedAccessExpression": NamedAccessExpression,
    "Program": Program,
}
CONCRETE: dict[str, type[Node]] = {n: c for n, c in TYPES.items() if not c._abstract}


def make_locator(text: str, file: str = "") -> Locator:
    """One Locator per source: its line_index holds the byte offset of every line start."""
    data = text.encode("utf-8", "surrogateescape")
    loc = Locator(text, file, line_starts(data))
    loc.set_source_bytes(data)
    return loc
