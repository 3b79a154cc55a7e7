"""A bug inside the deep checks: it must not cost the file's other findings, and must not vanish.

The type model and the readers of a module's own files answer "not provable" by raising
:class:`~server.analysis.deep.types_model.Unprovable` (or running out of recursion), and their callers
take that as "no finding".  Anything else they raise is a bug of ours, not a property of the code
checked: the places that must keep it from costing other findings (a type judged inside a resource's
check, a Hiera file read while asking for a key) hand it to :func:`swallowed` instead of dropping it,
and every check the walk calls per node (:func:`guarded`: a function call's, a resource's) turns what
was swallowed while it ran -- or what it raised itself -- into one ``DEEP_INTERNAL_ERROR`` finding at
the node it was checking, with the exception's type and first line and its traceback in
``data["traceback"]``.

What its consumers do with it (it is never shown as a diagnostic of the code): ``--validate --deep``
reports it as the file's ``INTERNAL_ERROR`` at that position (the traceback with ``--debug``), as it
reports any internal error; the language server writes it to its log once (``window/logMessage``, the
traceback to its stderr) and publishes the other findings (server/lsp/deep.py).
"""

from __future__ import annotations

import functools
import logging
import traceback
from collections.abc import Callable
from contextvars import ContextVar
from typing import TypeVar

from puppet_xpp.grammar import ast
from puppet_xpp.server.analysis.deep.context import Place
from puppet_xpp.server.analysis.deep.finding import Finding, make
from puppet_xpp.server.analysis.deep.world import Answers

__all__ = ["INTERNAL_CODE", "guarded", "is_internal", "swallowed"]

log = logging.getLogger("puppet-xpp.deep")

INTERNAL_CODE = "DEEP_INTERNAL_ERROR"

# the exceptions swallowed while the innermost guarded check runs (None: no check is running)
_SINK: ContextVar[list[BaseException] | None] = ContextVar("puppet_xpp_deep_swallowed", default=None)

# what a guarded check is called on, by the kind of node (the words of the finding's message)
_WHAT = {
    ast.CallNamedFunctionExpression: "function call",
    ast.CallMethodExpression: "method call",
    ast.ResourceExpression: "resource",
}

NodeT = TypeVar("NodeT", bound=ast.Positioned)


def swallowed(exc: BaseException) -> None:
    """A catch-all kept ``exc`` (not an "unprovable" answer: a bug) from costing other findings: noted
    for the check that is running, which reports it (:func:`guarded`); outside a check (a quick fix
    asking the type model), logged with its traceback."""
    sink = _SINK.get()
    if sink is not None:
        sink.append(exc)
    else:
        log.error("internal error in the deep checks' type model", exc_info=exc)


def guarded(
    check: Callable[[NodeT, Place, Answers], list[Finding]],
) -> Callable[[NodeT, Place, Answers], list[Finding]]:
    """``check`` (a per-node check of the walk), its bugs reported as ``DEEP_INTERNAL_ERROR`` findings at
    the node instead of raised (the walk's other findings stay) or dropped."""

    @functools.wraps(check)
    def run(node: NodeT, place: Place, answers: Answers) -> list[Finding]:
        sink: list[BaseException] = []
        token = _SINK.set(sink)
        try:
            found = check(node, place, answers)
        except Exception as e:  # a bug in this check: the node's other findings are lost, not the file's
            found = []
            sink.append(e)
        finally:
            _SINK.reset(token)
        if sink:  # (one finding per distinct exception: a failing type asked about ten times is one bug)
            seen = {(type(e), str(e)): e for e in reversed(sink)}
            found = found + [internal_finding(e, node, place) for e in reversed(seen.values())]
        return found

    return run


def internal_finding(exc: BaseException, node: ast.Positioned, place: Place) -> Finding:
    """The ``DEEP_INTERNAL_ERROR`` finding of ``exc``, raised while checking ``node``."""
    reason = (str(exc).strip().splitlines() or [""])[0][:300] or repr(exc)
    return make(
        INTERNAL_CODE,
        place.path,
        node.offset,
        node.length,
        {
            "type": type(exc).__name__,
            "reason": reason,
            "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
        },
        type=type(exc).__name__,
        what=_WHAT.get(type(node), "statement"),
        reason=reason,
    )


def is_internal(finding: Finding) -> bool:
    return finding.code == INTERNAL_CODE
