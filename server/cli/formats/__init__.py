"""The machine-readable output formats, one writer per format, shared by ``--validate``, ``--lint`` and
``--compile`` (its diagnostics and its ``--report``).

Every writer takes the same two things: the findings (:class:`server.cli.findings.Finding`, in the
order found) and the files that were checked (so that a clean file is still a passed test case in
JUnit), and writes the whole document at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TextIO

from puppet_xpp.server.cli.findings import Finding

__all__ = ["FORMATS", "Writer", "writer"]

Writer = Callable[[Sequence[Finding], Sequence[str], TextIO], None]

# the names --format accepts for the findings formats
FORMATS = ("sarif", "junit", "github", "codeclimate")


def writer(name: str) -> Writer:
    """The writer of format ``name`` (one of :data:`FORMATS`)."""
    if name == "sarif":
        from puppet_xpp.server.cli.formats import sarif

        return sarif.write
    if name == "junit":
        from puppet_xpp.server.cli.formats import junit

        return junit.write
    if name == "github":
        from puppet_xpp.server.cli.formats import github

        return github.write
    if name == "codeclimate":
        from puppet_xpp.server.cli.formats import codeclimate

        return codeclimate.write
    raise ValueError(f"unknown format {name!r}")
