"""Operator precedence for the reduce actions: grammar/puppet.lark keeps binary operators as a flat
``operand (op operand | ?{…})*`` sequence (one LALR rule instead of egrammar's precedence-annotated
rules), and :func:`resolve_precedence` builds the tree racc would build from egrammar's precedence table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from puppet_xpp.grammar import ast

# Binary operator precedence (higher binds tighter), from egrammar's precedence table; all left-assoc.
PREC = {
    "IN": 10,
    "MATCH": 9,
    "NOMATCH": 9,
    "TIMES": 8,
    "DIV": 8,
    "MODULO": 8,
    "MINUS": 7,
    "PLUS": 7,
    "LSHIFT": 6,
    "RSHIFT": 6,
    "NOTEQUAL": 5,
    "ISEQUAL": 5,
    "GREATEREQUAL": 4,
    "GREATERTHAN": 4,
    "LESSTHAN": 4,
    "LESSEQUAL": 4,
    "QMARK": 3,
    "AND": 2,
    "OR": 1,
}
ARITH = {"TIMES": "*", "DIV": "/", "MODULO": "%", "MINUS": "-", "PLUS": "+", "LSHIFT": "<<", "RSHIFT": ">>"}
COMPARE = {
    "NOTEQUAL": "!=",
    "ISEQUAL": "==",
    "GREATEREQUAL": ">=",
    "GREATERTHAN": ">",
    "LESSTHAN": "<",
    "LESSEQUAL": "<=",
}
MATCH = {"MATCH": "=~", "NOMATCH": "!~"}


def binary(loc: ast.Locator, op: Any, left: Any, right: Any) -> Any:
    """The node of one binary operator (its token) applied to two operands."""
    t = op.type
    o, ln = op.start_pos, op.end_pos - op.start_pos
    if t in ARITH:
        return ast.ArithmeticExpression(loc, o, ln, left, right, ARITH[t])
    if t in COMPARE:
        return ast.ComparisonExpression(loc, o, ln, left, right, COMPARE[t])
    if t in MATCH:
        return ast.MatchExpression(loc, o, ln, left, right, MATCH[t])
    if t == "IN":
        return ast.InExpression(loc, o, ln, left, right)
    if t == "AND":
        return ast.AndExpression(loc, o, ln, left, right)
    return ast.OrExpression(loc, o, ln, left, right)


def selector(loc: ast.Locator, left: Any, entries: list[Any]) -> Any:
    return ast.SelectorExpression(loc, left.offset, left.length, left, entries)


def resolve_precedence(
    loc: ast.Locator, items: list[Any], final_entry: Any, apply_postfix: Callable[[Any, Any], Any]
) -> Any:
    """Operator-precedence resolution of `operand (op operand | ?{…})* [? m => v]`.

    Equivalent to racc's resolution with egrammar's precedence table: an operator reduces the
    pending operators that bind at least as tight (all binary operators are left-assoc); a selector
    `? …` acts as a postfix operator at QMARK precedence and its result is an operand again (then
    ``apply_postfix``, the builder's, applies the postfixes that follow its braces).
    """
    operands = [items[0]]
    ops: list[Any] = []
    for item in items[1:]:
        if type(item) is tuple:  # braced selector (+ postfixes)
            while ops and PREC[ops[-1].type] >= 3:
                r = operands.pop()
                operands.append(binary(loc, ops.pop(), operands.pop(), r))
            node = selector(loc, operands.pop(), item[1])
            for pf in item[2]:
                node = apply_postfix(node, pf)
            operands.append(node)
        else:
            op, operand = item
            p = PREC[op.type]
            while ops and PREC[ops[-1].type] >= p:
                r = operands.pop()
                operands.append(binary(loc, ops.pop(), operands.pop(), r))
            ops.append(op)
            operands.append(operand)
    if final_entry is not None:
        while ops and PREC[ops[-1].type] >= 3:
            r = operands.pop()
            operands.append(binary(loc, ops.pop(), operands.pop(), r))
        operands.append(selector(loc, operands.pop(), [final_entry]))
    while ops:
        r = operands.pop()
        operands.append(binary(loc, ops.pop(), operands.pop(), r))
    return operands[0]
