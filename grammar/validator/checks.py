"""Puppet's Checker4_0: the check of each node kind (``check_<Class>``, found by the walk for the nearest
model class that has one), at the settings of the language level (``self.newer``: the newer checker of
levels 7 and 8, which also evaluates class parameter types and more keys as literals).
"""

from __future__ import annotations

import re
from typing import Any

from puppet_xpp.grammar import levels
from puppet_xpp.grammar.numbers import MAX_INTEGER, MIN_INTEGER
from puppet_xpp.grammar.validator.labels import a_an, a_an_uc, label
from puppet_xpp.grammar.validator.literals import (
    LiteralFailed,
    NotLiteral,
    RubyError,
    literal_key,
    literal_value,
    ruby_class,
    ruby_inspect,
    ruby_model_class,
    ruby_to_s,
)
from puppet_xpp.grammar.validator.model import (
    AbstractResource,
    AccessExpression,
    AttributesOperation,
    CollectExpression,
    LambdaExpression,
    LiteralDefault,
    LiteralInteger,
    LiteralList,
    LiteralRegularExpression,
    LiteralString,
    QualifiedName,
    QualifiedReference,
    RenderStringExpression,
    ResourceOverrideExpression,
    idem,
)
from puppet_xpp.grammar.validator.rules import NUMERIC_VAR_NAME, Rules

# Puppet's name patterns (Ruby's \w is ASCII-only, hence re.ASCII); used with fullmatch (\A...\z).
_CLASSREF_DECL = re.compile(r"[a-z]\w*(?:::[a-z]\w*)*", re.ASCII)
_CLASSREF_EXT_DECL = re.compile(r"[A-Z]\w*(?:::[A-Z]\w*)*", re.ASCII)
_CLASSREF_EXT = re.compile(r"(?:(?:::)?[A-Z]\w*)+", re.ASCII)
_VAR_NAME = re.compile(r"(?:::)?(?:[a-z]\w*::)*[a-z_]\w*", re.ASCII)
_PARAM_NAME = re.compile(r"[a-z_]\w*", re.ASCII)
_NUMERIC_PARAM = re.compile(r"(?:0x)?[0-9]+")


class Checker(Rules):
    """Puppet's Checker4_0."""

    def check_AssignmentExpression(self, o: Any) -> None:
        op = o.operator
        if op == "=":
            self.assign(o.left_expr)
            self.rvalue(o.right_expr)
        elif op in ("+=", "-="):
            self.accept("APPENDS_DELETES_NO_LONGER_SUPPORTED", o, operator=op)
        else:
            self.accept("UNSUPPORTED_OPERATOR", o, operator=op)

    def check_AttributeOperation(self, o: Any) -> None:
        if o.operator == "+>":
            p = self.container()
            if not isinstance(p, (CollectExpression, ResourceOverrideExpression)):
                self.accept("ILLEGAL_ATTRIBUTE_APPEND", o, name=o.attribute_name, parent=a_an(p))
        self.rvalue(o.value_expr)

    def check_AttributesOperation(self, o: Any) -> None:
        p = self.container()
        if not isinstance(p, (AbstractResource, CollectExpression)):
            parent2 = o if p is None else self.container(-2)
            if not isinstance(parent2, AbstractResource):
                self.accept("UNSUPPORTED_OPERATOR_IN_CONTEXT", parent2, operator="* =>", value=a_an(parent2))
        self.rvalue(o.expr)

    def check_BinaryExpression(self, o: Any) -> None:
        self.rvalue(o.left_expr)
        self.rvalue(o.right_expr)

    def check_BlockExpression(self, o: Any) -> None:
        if self.resource_without_title(o):
            self.accept("RESOURCE_WITHOUT_TITLE", o, name=o.statements[0].value)
        else:
            for s in o.statements[:-1]:
                if idem(s):
                    self.accept("IDEM_EXPRESSION_NOT_LAST", s, expression=label(s))
                    break

    def check_CallNamedFunctionExpression(self, o: Any) -> None:
        f = o.functor_expr
        if isinstance(f, QualifiedReference) or (
            isinstance(f, AccessExpression) and isinstance(f.left_expr, QualifiedReference)
        ):
            return
        if isinstance(f, QualifiedName):
            return
        if isinstance(f, RenderStringExpression):
            self.accept("ILLEGAL_EPP_PARAMETERS", o)
        else:
            self.accept(
                "ILLEGAL_EXPRESSION", f, expression=a_an_uc(f), feature="function name", container=a_an(o)
            )

    def check_EppExpression(self, o: Any) -> None:
        p = self.container()
        if isinstance(p, LambdaExpression):
            self.check_no_capture(p, o)
            self.check_parameter_name_uniqueness(p)

    def check_HeredocExpression(self, o: Any) -> None:
        e = o.text_expr
        if isinstance(e, LiteralString):
            self.external_syntax(e.value, o.syntax, e)

    def check_CaseExpression(self, o: Any) -> None:
        self.rvalue(o.test)
        found = False
        for option in o.options:
            for v in option.values:
                if isinstance(v, LiteralDefault):
                    if found:
                        self.accept("DUPLICATE_DEFAULT", v, container=label(o))
                    found = True

    def check_CaseOption(self, o: Any) -> None:
        for v in o.values:
            self.rvalue(v)

    def check_CollectExpression(self, o: Any) -> None:
        if not isinstance(o.type_expr, QualifiedReference):
            self.accept(
                "ILLEGAL_EXPRESSION",
                o.type_expr,
                expression=a_an_uc(o.type_expr),
                feature="type name",
                container=a_an(o),
            )

    def check_NamedAccessExpression(self, o: Any) -> None:
        name = o.right_expr
        if not isinstance(name, QualifiedName):
            self.accept(
                "ILLEGAL_EXPRESSION",
                name,
                expression=a_an_uc(name),
                feature="function name",
                container=a_an(self.container()),
            )

    def check_NamedDefinition(self, o: Any) -> None:
        self.top(o)
        if not _CLASSREF_DECL.fullmatch(o.name):
            self.accept("ILLEGAL_DEFINITION_NAME", o, name=o.name, value=a_an(o))
        self.check_file_namespace(o)
        self.check_reserved_type_name(o, o.name)
        self.check_future_reserved_word(o, o.name)

    def check_TypeAlias(self, o: Any) -> None:
        self.top(o)
        if not _CLASSREF_EXT_DECL.fullmatch(o.name):
            self.accept("ILLEGAL_DEFINITION_NAME", o, name=o.name, value=a_an(o))
        self.check_reserved_type_name(o, o.name)
        self.check_type_ref(o, o.type_expr)

    def check_TypeMapping(self, o: Any) -> None:
        self.top(o)
        lhs = o.type_expr
        kind = 0
        if isinstance(lhs, AccessExpression):
            left = lhs.left_expr
            if isinstance(left, QualifiedReference) and left.cased_value == "Runtime":
                kind = 1
                if len(lhs.keys) == 2 and _pattern_with_replacement(lhs.keys[1]):
                    kind = 2
        if kind == 0:
            self.accept("UNSUPPORTED_EXPRESSION", o, expression=a_an(o))
            return
        rhs = o.mapping_expr
        single = dict(expected="Type", expression=a_an_uc(o))
        regexp = dict(expected="Tuple[Regexp,String]", expression=a_an_uc(o))
        if _pattern_with_replacement(rhs):
            if kind == 1:
                self.accept("ILLEGAL_TYPE_MAPPING", o, **single)
        elif _type_ref(rhs):
            if kind == 2:
                self.accept("ILLEGAL_TYPE_MAPPING", o, **regexp)
        else:
            self.accept("ILLEGAL_TYPE_MAPPING", o, **(single if kind == 1 else regexp))

    def check_TypeDefinition(self, o: Any) -> None:
        self.top(o)
        self.check_reserved_type_name(o, o.name)
        self.accept("UNSUPPORTED_EXPRESSION", o, expression=a_an(o))

    def check_FunctionDefinition(self, o: Any) -> None:
        self.check_NamedDefinition(o)
        self.check_return_type(o)
        self.check_parameter_name_uniqueness(o)

    def check_HostClassDefinition(self, o: Any) -> None:
        self.check_ResourceTypeDefinition(o)
        if self.newer:
            self.check_parameter_type_literal(o)

    def check_ResourceTypeDefinition(self, o: Any) -> None:
        self.check_NamedDefinition(o)
        self.check_no_capture(o)
        self.check_parameter_name_uniqueness(o)
        self.check_reserved_params(o)
        self.check_no_idem_last(o)

    def check_parameter_type_literal(self, o: Any) -> None:
        """The newer checker: a class parameter's type must be a literal (Puppet 7.29+, a deprecation)."""
        for p in o.parameters:
            t = p.type_expr
            if t is None:
                continue
            try:
                value = self.literal(t)
            except LiteralFailed:
                continue  # Puppet stops with a Ruby error here, reported as such
            except NotLiteral:
                value = None
            if value is None:
                self.accept(
                    "ILLEGAL_NONLITERAL_PARAMETER_TYPE", p, name=p.name, type_class=ruby_model_class(t)
                )

    def check_IfExpression(self, o: Any) -> None:
        self.rvalue(o.test)

    def check_KeyedEntry(self, o: Any) -> None:
        self.rvalue(o.key)
        self.rvalue(o.value)

    def check_LambdaExpression(self, o: Any) -> None:
        self.check_capture_last(o)
        self.check_return_type(o)

    def check_LiteralList(self, o: Any) -> None:
        for v in o.values:
            self.rvalue(v)

    def check_LiteralInteger(self, o: Any) -> None:
        v = o.value
        if v < MIN_INTEGER or v > MAX_INTEGER:
            hexv = ("+" if v >= 0 else "-") + hex(abs(v))
            self.accept(
                "NUMERIC_OVERFLOW", o, expression=a_an_uc(o), bound="max" if v > 0 else "min", value=hexv
            )

    def literal(self, o: Any) -> Any:
        """literal_value at this checker's level; a Ruby failure of Puppet's evaluation is reported here
        (Puppet itself stops validating with a Ruby error) and treated as not literal."""
        try:
            return literal_value(o, self.newer)
        except RubyError as e:
            v = e.value
            self.accept(
                "LITERAL_NEGATION_FAILS",
                e.node,
                value=ruby_inspect(v),
                ruby_class=ruby_class(v),
                puppet=levels.level(self.level).puppets,
            )
            raise LiteralFailed from None

    def check_LiteralHash(self, o: Any) -> None:
        seen = set()
        for entry in o.entries:
            try:
                v = self.literal(entry.key)
            except NotLiteral:
                continue
            k = literal_key(v)
            if k in seen:
                self.accept("DUPLICATE_KEY", entry, key=ruby_to_s(v))
            else:
                seen.add(k)

    def check_NodeDefinition(self, o: Any) -> None:
        self.hostname(o.host_matches, o)
        self.top(o)
        self.check_no_idem_last(o)
        if o.parent is not None:
            self.accept("ILLEGAL_NODE_INHERITANCE", o.parent)

    def check_QualifiedName(self, o: Any) -> None:
        pass

    def check_QualifiedReference(self, o: Any) -> None:
        if not _CLASSREF_EXT.fullmatch(o.cased_value):
            self.accept("ILLEGAL_CLASSREF", o, name=o.cased_value)

    def check_QueryExpression(self, o: Any) -> None:
        if o.expr is not None:
            self.query(o.expr)

    def check_RelationshipExpression(self, o: Any) -> None:
        self.relation(o.left_expr)
        self.relation(o.right_expr)

    def check_Parameter(self, o: Any) -> None:
        if _NUMERIC_PARAM.fullmatch(o.name):
            self.accept("ILLEGAL_NUMERIC_PARAMETER", o, name=o.name)
        if not _PARAM_NAME.fullmatch(o.name):
            self.accept("ILLEGAL_PARAM_NAME", o, name=o.name)
        if o.value is not None:
            self.check_illegal_assignment(o.value)

    def check_ResourceExpression(self, o: Any) -> None:
        t = o.type_name
        if o.form and o.form != "regular" and isinstance(t, QualifiedName) and t.value == "class":
            self.accept("CLASS_NOT_VIRTUALIZABLE", o)

    def check_ResourceBody(self, o: Any) -> None:
        seen = False
        for op in o.operations:
            if isinstance(op, AttributesOperation):
                if seen:
                    self.accept("MULTIPLE_ATTRIBUTES_UNFOLD", op)
                else:
                    seen = True

    def check_ResourceDefaultsExpression(self, o: Any) -> None:
        if o.form != "regular":
            self.accept("NOT_VIRTUALIZEABLE", o)

    check_ResourceOverrideExpression = check_ResourceDefaultsExpression

    def check_ReservedWord(self, o: Any) -> None:
        if o.future:
            self.accept("FUTURE_RESERVED_WORD", o, word=o.word)
        else:
            self.accept("RESERVED_WORD", o, word=o.word)

    def check_SelectorExpression(self, o: Any) -> None:
        self.rvalue(o.left_expr)
        defaults = [s for s in o.selectors if isinstance(s.matching_expr, LiteralDefault)]
        if len(defaults) > 1:
            self.accept("DUPLICATE_DEFAULT", defaults[1].matching_expr, container=label(o))

    def check_SelectorEntry(self, o: Any) -> None:
        self.rvalue(o.matching_expr)

    def check_UnaryExpression(self, o: Any) -> None:
        self.rvalue(o.expr)

    check_UnlessExpression = check_IfExpression

    def check_VariableExpression(self, o: Any) -> None:
        e = o.expr
        if isinstance(e, LiteralInteger):
            return
        if not isinstance(e, QualifiedName):
            self.accept("ILLEGAL_EXPRESSION", o, expression=a_an_uc(o), feature="name", container=a_an(o))
            return
        name = e.value
        code = _NAME_VERDICTS.get(name, "")
        if code == "":
            code = _name_verdict(name)
            if len(_NAME_VERDICTS) < 65536:
                _NAME_VERDICTS[name] = code
        if code is not None:
            self.accept(code, o, name=name)


# a variable's name -> the issue its name raises (None: a valid name), as names recur in every file
_NAME_VERDICTS: dict[str, str | None] = {}


def _name_verdict(name: str) -> str | None:
    """The issue a variable's name raises (None: a valid name)."""
    if name[:1].isdigit() and name[:1].isascii():
        return None if NUMERIC_VAR_NAME.fullmatch(name) else "ILLEGAL_NUMERIC_VAR_NAME"
    return None if _VAR_NAME.fullmatch(name) else "ILLEGAL_VAR_NAME"


def _pattern_with_replacement(o: Any) -> bool:
    if isinstance(o, LiteralList):
        v = o.values
        return len(v) == 2 and isinstance(v[0], LiteralRegularExpression) and isinstance(v[1], LiteralString)
    return False


def _type_ref(o: Any) -> bool:
    if isinstance(o, AccessExpression):
        o = o.left_expr
    return isinstance(o, QualifiedReference)
