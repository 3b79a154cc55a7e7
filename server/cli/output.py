"""How the commands print a diagnostic: Puppet's wording, shared by ``--validate``, ``--compile`` and
``--dump``.

``puppet parser validate`` prints ``Warning: MESSAGE (file: F, line: L, column: C)``, warnings before
errors; ``--validate`` and ``--compile`` print the same lines, so that a deploy log reads alike whichever
tool wrote it.  A diagnostic logged while a heredoc checker ran (``LoggedDiagnostic``) has a position
relative to the heredoc text and no file: Puppet prints it without the file, and so do we.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from puppet_xpp.xpp.sources import shown

__all__ = ["FAILURE_CODES", "WARNING_SEVERITIES", "Shown", "diagnostic_lines", "location"]

# diagnostics that mean "this file could not be handled" (exit status 2), not "the manifest has errors"
FAILURE_CODES = frozenset({"NO_SUCH_FILE_OR_DIRECTORY", "UNREADABLE_FILE", "INTERNAL_ERROR"})

# printed as "Warning:" (Puppet logs a deprecation as a warning), before the errors
WARNING_SEVERITIES = ("warning", "deprecation")


def location(path: str, line: int | None, column: int | None) -> str:
    """`` (file: F, line: L, column: C)``, or as much of it as is known (nothing for a heredoc's
    diagnostic without a position)."""
    if not path:  # logged while checking a pp/epp heredoc: Puppet gives the heredoc-relative position only
        return f" (line: {line}, column: {column})" if line is not None else ""
    if line is None:
        return f" (file: {path})"
    if column is None:
        return f" (file: {path}, line: {line})"
    return f" (file: {path}, line: {line}, column: {column})"


@dataclass(frozen=True)
class Shown:
    """One diagnostic as a command prints it: its position is resolved already; ``logged``: logged by
    a heredoc checker (printed without the file)."""

    severity: str
    message: str
    line: int | None
    column: int | None
    logged: bool = False


def diagnostic_lines(path: str, diagnostics: Iterable[Shown]) -> list[str]:
    """The lines ``puppet parser validate`` prints for one file: warnings first, then errors."""
    display = shown(path)
    items = list(diagnostics)
    lines = []
    for word, severities in (("Warning", WARNING_SEVERITIES), ("Error", ("error",))):
        for d in items:
            if d.severity in severities:
                where = location("" if d.logged else display, d.line, d.column)
                lines.append(f"{word}: {shown(d.message)}{where}")
    return lines
