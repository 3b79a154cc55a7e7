"""One deep finding: what the deep checks report, in the terms every consumer needs.

Positions are UTF-8 byte offsets into the checked text, as a validation diagnostic's are
(:class:`grammar.issues.Diagnostic`): the CLI turns them into Puppet's 1-based line and column with the
parse's locator (:meth:`Finding.line_col`, the same rule as a diagnostic's), the language server into
0-based UTF-16 ranges with the analysis' line index (:meth:`Finding.lsp_range`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from puppet_xpp.server.analysis.deep.codes import CODES

__all__ = ["Finding", "make"]


class Lines(Protocol):
    """What :meth:`Finding.lsp_range` asks of a line index (server.analysis.document.LineIndex)."""

    def range(self, offset: int, length: int) -> tuple[tuple[int, int], tuple[int, int]]: ...


class PuppetLocator(Protocol):
    """What :meth:`Finding.line_col` asks of a parse's locator (grammar.ast.Locator)."""

    def line_for_offset(self, offset: int) -> int: ...
    def pos_on_line(self, offset: int) -> int: ...


@dataclass(frozen=True)
class Finding:
    """A deep finding.  ``code`` is a key of :data:`server.analysis.deep.codes.CODES`; ``args`` the
    values its template was filled with; ``data`` what a quick fix needs: ``suggestions`` (names that
    exist, closest first: did-you-mean), ``missing`` (parameter names to add), ``module`` (a missing
    module's name).  ``path`` is the file's path as the caller gave it."""

    code: str
    message: str
    path: str
    offset: int
    length: int
    severity: str
    args: tuple[tuple[str, str], ...] = ()
    data: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    # does Puppet's report of this error carry a column (else the line only: a define's or a Ruby
    # type's parameter errors, a duplicate declaration's "cannot redeclare")
    column_reported: bool = True

    def line_col(self, locator: PuppetLocator) -> tuple[int, int]:
        """Puppet's 1-based line and column of the finding (the validator's rule)."""
        return locator.line_for_offset(self.offset), locator.pos_on_line(self.offset)

    def lsp_range(self, lines: Lines) -> tuple[tuple[int, int], tuple[int, int]]:
        """0-based (line, column) start and end in the line index's encoding (UTF-16 by default)."""
        return lines.range(self.offset, self.length)

    def moved(self, delta: int) -> Finding:
        """The same finding ``delta`` bytes later (a cached statement's findings after an edit above)."""
        data = dict(self.data)
        for key in ("first", "offset"):  # (the data's byte offsets move too)
            if isinstance(data.get(key), int):
                data[key] += delta
        return Finding(
            self.code,
            self.message,
            self.path,
            self.offset + delta,
            self.length,
            self.severity,
            self.args,
            data,
            self.column_reported,
        )


def make(
    code: str,
    path: str,
    offset: int,
    length: int,
    data: dict[str, Any] | None = None,
    column: bool | None = None,
    **args: str,
) -> Finding:
    """A finding of ``code`` with its message filled from the one table (``column``: whether Puppet
    reports a column, when it differs from the code's rule)."""
    entry = CODES[code]
    return Finding(
        code,
        entry.template.format(**args),
        path,
        offset,
        max(0, length),
        entry.severity,
        tuple(sorted(args.items())),
        data or {},
        entry.column if column is None else column,
    )
