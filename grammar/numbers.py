"""Puppet's number literals: their conversion, the Integer range, and how an integer outside it is stored.

Puppet's lexer turns a number literal into a Ruby Integer of any size (or a Float); its validator then
reports NUMERIC_OVERFLOW for an Integer outside the 64-bit range of Puppet's Integer type, with the value
in hexadecimal.  So the conversion here is exact whatever the literal's length: a decimal literal beyond
CPython's digit limit for ``int(str)`` (4,300 digits, a guard against quadratic conversion) is converted by
halves (:func:`decimal_int`, subquadratic through Python's Karatsuba multiplication) instead of failing.

Such a value cannot be stored as is: the Pcore type of ``LiteralInteger.value`` is Puppet's Integer, which
the ``.xpp`` stream (msgpack) and both of its readers hold to 64 bits.  A manifest holding one always has a
NUMERIC_OVERFLOW error, so Puppet never evaluates it; its ``.xpp`` keeps the AST (the runtime replays every
diagnostic as Puppet's validator reports them, which needs the Program) with the literal's value
saturated at the bound it crosses (:func:`saturate_literals`).  The recorded error carries the exact
value, and the literal's text stays in the source the Locator holds.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["MAX_INTEGER", "MIN_INTEGER", "to_number", "decimal_int", "saturate_literals"]

#: Puppet's Integer range (a Ruby Integer outside it is NUMERIC_OVERFLOW)
MAX_INTEGER = (1 << 63) - 1
MIN_INTEGER = -(1 << 63)

#: decimal digits converted by one ``int()`` call (below CPython's default limit of 4,300)
_DIGITS_AT_ONCE = 3000


def to_number(text: str) -> tuple[int | float, int]:
    """Puppet's conversion of a number token: (value, radix); floats have radix 10."""
    if text[:2] in ("0x", "0X"):
        return int(text[2:], 16), 16
    if "." in text or "e" in text or "E" in text:
        return float(text), 10
    if len(text) > 1 and text[0] == "0":
        return int(text, 8), 8
    return decimal_int(text), 10


@functools.lru_cache(maxsize=64)
def _pow5(n: int) -> int:
    power: int = 5**n
    return power


def decimal_int(digits: str) -> int:
    """The int of a string of decimal digits, of any length: ``int()`` below the digit limit, else the
    high part times 10**k plus the low k digits (k a power of two, so the powers are shared between
    calls; 10**k is 5**k shifted by k bits)."""
    n = len(digits)
    if n <= _DIGITS_AT_ONCE:
        return int(digits)
    k = 1 << ((n - 1).bit_length() - 1)
    return (decimal_int(digits[:-k]) * _pow5(k) << k) + decimal_int(digits[-k:])


def decimal_text(value: int) -> str:
    """The decimal digits of an int of any size (``str()`` stops at CPython's digit limit): the inverse of
    :func:`decimal_int`, splitting at the same powers of ten (``--dump`` prints a literal of any length,
    as Puppet's ``parser dump`` does)."""
    if value < 0:
        return "-" + decimal_text(-value)
    digits = value.bit_length() * 30103 // 100000 + 1  # an upper bound of the digit count
    if digits <= _DIGITS_AT_ONCE:
        return str(value)
    k = 1 << ((digits - 1).bit_length() - 1)
    high, low = divmod(value, _pow5(k) << k)
    while not high:  # the bound overestimated: split at a lower power
        k >>= 1
        high, low = divmod(value, _pow5(k) << k)
    return decimal_text(high) + decimal_text(low).rjust(k, "0")


def saturate_literals(program: Any) -> int:
    """Set every ``LiteralInteger`` of ``program`` whose value is outside Puppet's Integer range to the
    bound it crosses, so that the Program can be written (see the module's docstring); returns how many
    were changed.  Only for a program whose NUMERIC_OVERFLOW errors are already recorded."""
    from puppet_xpp.grammar import ast
    from puppet_xpp.grammar.ast_base import walk

    changed = 0
    for node in walk(program):
        if type(node) is ast.LiteralInteger:
            v = node.value
            if v > MAX_INTEGER:
                node.value = MAX_INTEGER
                changed += 1
            elif v < MIN_INTEGER:
                node.value = MIN_INTEGER
                changed += 1
    return changed
