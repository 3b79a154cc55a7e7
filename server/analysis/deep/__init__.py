"""Deep checks: what only a catalog compile catches today (issue 30), proven from the workspace index.

Unknown classes, resource types and functions, unknown and missing parameters, wrong arity, literals of
the wrong type, duplicate declarations and unknown variables -- each reported only when the world (the
file's environment and module path: :class:`World`) proves it, in Puppet's words (the one table:
:mod:`server.analysis.deep.codes`) at the position Puppet reports it.  No pygls here: the language
server (server/lsp/deep.py), ``--validate --deep`` (server/cli/validate.py) and ``--compile``'s report
use this API.

The public API:

* :class:`World` -- the answers of one environment (index, level, module path, Hiera);
* :func:`deep_findings` -- every finding of one parsed file;
* :func:`statement_findings` / :func:`file_findings` / :func:`top_statements` -- the same in steps, for
  a caller that caches per top-level statement: a statement's :class:`StatementResult` holds its
  findings and the questions (:data:`Asked`) they depended on; it stays valid while
  ``world.answer_key(q)`` is unchanged for each of them and the statement itself is unchanged (a
  statement moved by an edit above it: :meth:`Finding.moved`);
* :func:`checked_statement` -- :func:`statement_findings` with a bug of the checks reported as a
  ``DEEP_INTERNAL_ERROR`` finding at the statement (:mod:`server.analysis.deep.internal`), not raised;
* :class:`Finding`, :data:`CODES`, :data:`DEEP_SOURCE`.
"""

from __future__ import annotations

from typing import Any

from puppet_xpp.server.analysis.deep.codes import CODES, DEEP_SOURCE, DeepCode
from puppet_xpp.server.analysis.deep.context import Place
from puppet_xpp.server.analysis.deep.engine import (
    BodyMemo,
    Part,
    PartKey,
    Parts,
    StatementResult,
    file_findings,
    statement_findings,
    top_statements,
)
from puppet_xpp.server.analysis.deep.finding import Finding
from puppet_xpp.server.analysis.deep.internal import internal_finding
from puppet_xpp.server.analysis.deep.world import Asked, World

__all__ = [
    "CODES",
    "DEEP_SOURCE",
    "Asked",
    "BodyMemo",
    "DeepCode",
    "Finding",
    "Part",
    "PartKey",
    "Parts",
    "Place",
    "StatementResult",
    "World",
    "checked_statement",
    "deep_findings",
    "file_findings",
    "statement_findings",
    "top_statements",
]


def checked_statement(
    statement: Any, place: Place, world: World, memo: BodyMemo | None = None
) -> StatementResult:
    """:func:`statement_findings`, a bug in a check the per-node guards do not cover (a scope's
    variables, a body's duplicates: :mod:`server.analysis.deep.internal`) reported as one
    ``DEEP_INTERNAL_ERROR`` at the statement instead of raised: the file's other statements keep
    their findings."""
    try:
        return statement_findings(statement, place, world, memo)
    except Exception as e:
        return StatementResult(statement, (internal_finding(e, statement, place),), frozenset())


def deep_findings(analysis: Any, path: str, world: World, *, tasks: bool = False) -> list[Finding]:
    """Every deep finding of one parsed file: ``analysis`` is anything with a ``program`` (the
    language server's Analysis, a CheckResult); ``path`` names the file in findings; ``tasks``: a
    Bolt plan file (no unknown-function findings: Bolt's functions are not the catalog's)."""
    program = analysis.program
    if program is None:
        return []
    place = Place(path, tasks=tasks, complete=world.complete)
    results = [checked_statement(s, place, world) for s in top_statements(program)]
    locator = program.locator
    return file_findings(results, program, path, locator.line_for_offset)
