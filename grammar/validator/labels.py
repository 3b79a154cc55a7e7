"""Human labels for AST nodes, as used in validation messages (Puppet 7's model label provider).

``label(node)`` gives the bare label ("Literal Integer", "'+' expression", ...); ``a_an`` / ``a_an_uc``
prefix an indefinite article, ``the`` / ``the_uc`` a definite one.  This is the only place that knows the
label texts; the validator and any other message producer call these functions.
"""

from __future__ import annotations

from typing import Any

from puppet_xpp.grammar import ast
from puppet_xpp.grammar.validator.model import by_class

# Label per model class name; a callable receives the node.  Lookup walks the class hierarchy (most
# specific class first); a model class without an entry of its own or of an ancestor is an "Object".
_LABELS: dict[str, object] = {
    "LiteralInteger": "Literal Integer",
    "LiteralFloat": "Literal Float",
    "ArithmeticExpression": lambda o: f"'{o.operator}' expression",
    "AccessExpression": "'[]' expression",
    "MatchExpression": lambda o: f"'{o.operator}' expression",
    "CollectExpression": lambda o: label(o.query),
    "EppExpression": "Epp Template",
    "ExportedQuery": "Exported Query",
    "VirtualQuery": "Virtual Query",
    "QueryExpression": "Collect Query",
    "ComparisonExpression": lambda o: f"'{o.operator}' expression",
    "AndExpression": "'and' expression",
    "OrExpression": "'or' expression",
    "InExpression": "'in' expression",
    "AssignmentExpression": lambda o: f"'{o.operator}' expression",
    "AttributeOperation": lambda o: f"'{o.operator}' expression",
    "LiteralList": "Array Expression",
    "LiteralHash": "Hash Expression",
    "KeyedEntry": "Hash Entry",
    "LiteralBoolean": "Boolean",
    "LiteralString": "String",
    "LambdaExpression": "Lambda",
    "LiteralDefault": "'default' expression",
    "LiteralUndef": "'undef' expression",
    "LiteralRegularExpression": "Regular Expression",
    "Nop": "Nop Expression",
    "NamedAccessExpression": "'.' expression",
    "NotExpression": "'not' expression",
    "VariableExpression": "Variable",
    "TextExpression": "Expression in Interpolated String",
    "UnaryMinusExpression": "Unary Minus",
    "UnfoldExpression": "Unfold",
    "BlockExpression": "Block Expression",
    "ApplyBlockExpression": "Apply Block Expression",
    "ConcatenatedString": "Double Quoted String",
    "HeredocExpression": lambda o: f"'@({o.syntax or ''})' expression",
    "HostClassDefinition": "Host Class Definition",
    "FunctionDefinition": "Function Definition",
    "PlanDefinition": "Plan Definition",
    "NodeDefinition": "Node Definition",
    "ResourceTypeDefinition": "'define' expression",
    "ResourceOverrideExpression": "Resource Override",
    "Parameter": "Parameter Definition",
    "ParenthesizedExpression": "Parenthesized Expression",
    "IfExpression": "'if' statement",
    "UnlessExpression": "'unless' Statement",
    "CallNamedFunctionExpression": "Function Call",
    "CallMethodExpression": "Method call",
    "ApplyExpression": "'apply' expression",
    "CaseExpression": "'case' statement",
    "CaseOption": "Case Option",
    "RenderStringExpression": "Epp Text",
    "RenderExpression": "Epp Interpolated Expression",
    "RelationshipExpression": lambda o: f"'{o.operator}' expression",
    "ResourceBody": "Resource Instance Definition",
    "ResourceDefaultsExpression": "Resource Defaults Expression",
    "ResourceExpression": "Resource Statement",
    "SelectorExpression": "Selector Expression",
    "SelectorEntry": "Selector Option",
    "QualifiedName": "Name",
    "QualifiedReference": "Type-Name",
    "ReservedWord": lambda o: f"Reserved Word '{o.word}'",
    "TypeAlias": "Type Alias",
    "TypeMapping": "Type Mapping",
    "TypeDefinition": "Type Definition",
}

_resolve = by_class(_LABELS, "Object")


def label(o: Any) -> str:
    """The label of a node (or of a plain value: None → 'Undef Value')."""
    if o is None:
        return "Undef Value"
    if isinstance(o, ast.Node):
        r = _resolve(type(o))
        return str(r(o) if callable(r) else r)
    if isinstance(o, bool):
        return "Boolean"
    if isinstance(o, int):
        return "Integer"
    if isinstance(o, float):
        return "Float"
    if isinstance(o, str):
        return "String"
    if isinstance(o, list):
        return "Array"
    if isinstance(o, dict):
        return "Hash"
    return "Object"


_VOWELS = frozenset("aeiouy")


def article(text: str) -> str:
    """'a' or 'an' for a label: 'an' before a vowel (or y), skipping one leading quote."""
    ch = text[:1]
    if ch in ('"', "'"):
        ch = text[1:2]
    return "an" if ch.lower() in _VOWELS else "a"


def a_an(o: Any) -> str:
    t = label(o)
    return f"{article(t)} {t}"


def a_an_uc(o: Any) -> str:
    t = label(o)
    return f"{article(t).capitalize()} {t}"


def the(o: Any) -> str:
    return f"the {label(o)}"


def the_uc(o: Any) -> str:
    return f"The {label(o)}"
