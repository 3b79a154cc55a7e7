"""GitHub Actions workflow commands: ``::error file=F,line=L,col=C,title=T::MESSAGE`` (and
``::warning``, ``::notice``), which GitHub shows as annotations on the pull request's lines.

Escaping is GitHub's rule for workflow commands: in the message ``%``, CR and LF become ``%25``, ``%0D``,
``%0A``; in a property value ``:`` and ``,`` too (``%3A``, ``%2C``), since they delimit properties."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from puppet_xpp.server.cli.findings import Finding
from puppet_xpp.xpp.sources import shown

__all__ = ["escape_data", "escape_property", "line_of", "write"]

_COMMAND = {"error": "error", "warning": "warning", "note": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def line_of(f: Finding) -> str:
    """The workflow command of one finding."""
    props = [f"file={escape_property(shown(f.file))}"]
    if f.line is not None:
        props.append(f"line={f.line}")
        if f.column is not None:
            props.append(f"col={f.column}")
    props.append(f"title={escape_property(f'{f.tool}: {f.rule}')}")
    command = _COMMAND.get(f.severity, "notice")
    return f"::{command} {','.join(props)}::{escape_data(shown(f.message))}"


def write(findings: Sequence[Finding], files: Sequence[str], out: TextIO) -> None:
    del files
    out.writelines(line_of(f) + "\n" for f in findings)
