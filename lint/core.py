"""The check registry, problems, and the token edits fixes are made of.

A check is a function ``(Manifest) -> list[Problem]``; a fixable check also has a fix
``(Manifest, Problem) -> None`` that edits ``Manifest.tokens`` in place (or raises :class:`NoFix`).
Checks are registered in puppet-lint's order, which is the order their problems are reported in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from puppet_xpp.lint.data import Manifest
from puppet_xpp.lint.tokens import FORMATTING, Tok


@dataclass
class Problem:
    check: str
    kind: str  # "warning", "error", then "fixed" or "ignored"
    message: str
    line: int
    column: int
    reason: str | None = None
    data: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "check": self.check,
            "kind": self.kind,
            "message": self.message,
            "line": self.line,
            "column": self.column,
        }
        if self.reason is not None:
            out["reason"] = self.reason
        return out


class NoFix(Exception):
    """A fix declines: the problem stays as reported."""


CheckFn = Callable[[Manifest], list[Problem]]
FixFn = Callable[[Manifest, Problem], None]


@dataclass(frozen=True)
class Check:
    name: str
    run: CheckFn
    fix: FixFn | None
    enabled: bool  # enabled by default


CHECKS: dict[str, Check] = {}


def check(name: str, *, enabled: bool = True) -> Callable[[CheckFn], CheckFn]:
    """Register a check under puppet-lint's name (decorator)."""

    def deco(fn: CheckFn) -> CheckFn:
        CHECKS[name] = Check(name, fn, None, enabled)
        return fn

    return deco


def fixer(name: str) -> Callable[[FixFn], FixFn]:
    """Register the fix of an already registered check (decorator)."""

    def deco(fn: FixFn) -> FixFn:
        c = CHECKS[name]
        CHECKS[name] = Check(c.name, c.run, fn, c.enabled)
        return fn

    return deco


def problem(name: str, kind: str, message: str, tok: Tok | None = None, **data: Any) -> Problem:
    line = data.pop("line", tok.line if tok else 0)
    column = data.pop("column", tok.column if tok else 0)
    if tok is not None:
        data.setdefault("token", tok)
    return Problem(name, kind, message, line, column, data=data)


# -- token edits (neighbour links kept as puppet-lint keeps them) -----------------------------------------


def index_of(tokens: list[Tok], tok: Tok | None) -> int | None:
    for i, t in enumerate(tokens):
        if t is tok:
            return i
    return None


def insert(tokens: list[Tok], index: int, tok: Tok) -> None:
    """Insert ``tok`` before position ``index`` (after ``tokens[index - 1]``), fixing the links."""
    cur = tokens[index - 1]
    tok.next = cur.next
    tok.prev = cur
    if cur.next is not None:
        cur.next.prev = tok
    if tok.type not in FORMATTING:
        if cur.next is not None:
            cur.next.prev_code = tok
        nxt = next((tokens[k] for k in range(index, len(tokens)) if tokens[k].type not in FORMATTING), None)
        if nxt is not None:
            tok.next_code = nxt
            nxt.prev_code = tok
    if cur.type in FORMATTING:
        prv = next((tokens[k] for k in range(index - 1, -1, -1) if tokens[k].type not in FORMATTING), None)
        if prv is not None:
            tok.prev_code = prv
            prv.next_code = tok
    else:
        tok.prev_code = cur
    cur.next = tok
    if tok.type not in FORMATTING:
        cur.next_code = tok
    tokens.insert(index, tok)


def delete(tokens: list[Tok], tok: Tok) -> None:
    """Remove ``tok``, joining its neighbours."""
    if tok.next is not None:
        tok.next.prev = tok.prev
    if tok.prev is not None:
        tok.prev.next = tok.next
    if tok.type not in FORMATTING:
        if tok.prev_code is not None:
            tok.prev_code.next_code = tok.next_code
        if tok.next_code is not None:
            tok.next_code.prev_code = tok.prev_code
    remove(tokens, tok)


def remove(tokens: list[Tok], tok: Tok) -> None:
    """Drop ``tok`` from the list only (links untouched)."""
    i = index_of(tokens, tok)
    if i is not None:
        del tokens[i]
