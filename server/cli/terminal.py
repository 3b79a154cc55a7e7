"""What the commands do differently on a terminal: colour, the source line with a caret under an error,
and a progress line that fits the terminal.

On a pipe or a file nothing changes: Puppet's one-line diagnostics (``puppet parser validate``'s words,
:mod:`server.cli.output`), no escape sequence, no redrawn line, so logs and the tools that parse them see
what they always saw.  Colour follows the common conventions: ``NO_COLOR`` (set and not empty) turns it
off, ``FORCE_COLOR`` (set, not empty, not ``0``) turns it on even off a terminal, ``TERM=dumb`` means no
colour; ``PUPPET_XPP_TTY=1`` makes a stream count as a terminal (for tests and wrappers that hold a pty's
output in a pipe).
"""

from __future__ import annotations

import os
import shutil
from typing import TextIO

__all__ = ["Style", "caret_lines", "fit", "is_terminal", "terminal_width", "use_colour"]

RESET = "\033[0m"
_CODES = {"error": "\033[1;31m", "warning": "\033[1;33m", "caret": "\033[1;32m", "dim": "\033[2m"}


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (or is to be treated as one: ``PUPPET_XPP_TTY=1``)."""
    if os.environ.get("PUPPET_XPP_TTY") == "1":
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


def use_colour(stream: TextIO) -> bool:
    """Whether to colour what goes to ``stream`` (NO_COLOR wins over FORCE_COLOR)."""
    if os.environ.get("NO_COLOR", ""):
        return False
    force = os.environ.get("FORCE_COLOR", "")
    if force and force != "0":
        return True
    return is_terminal(stream) and os.environ.get("TERM", "") != "dumb"


def terminal_width(stream: TextIO) -> int:
    """The columns of the terminal ``stream`` writes to (``COLUMNS`` when set, as
    :func:`shutil.get_terminal_size` reads it; 80 when unknown)."""
    if not os.environ.get("COLUMNS"):
        try:
            return max(os.get_terminal_size(stream.fileno()).columns, 1) if hasattr(stream, "fileno") else 80
        except (OSError, ValueError, AttributeError):
            pass
    return max(shutil.get_terminal_size((80, 24)).columns, 1)


def fit(text: str, width: int) -> str:
    """``text`` cut to fewer than ``width`` columns (the last column stays free: a line that fills the
    terminal exactly wraps on some terminals), the cut marked with ``...`` at the front."""
    room = max(width - 1, 1)
    if len(text) <= room:
        return text
    return "..." + text[len(text) - room + 3 :] if room > 3 else text[:room]


class Style:
    """Colours for one stream, or none."""

    def __init__(self, on: bool) -> None:
        self.on = on

    def paint(self, text: str, role: str) -> str:
        return f"{_CODES[role]}{text}{RESET}" if self.on else text

    def diagnostic(self, line: str) -> str:
        """A ``Warning: ...`` / ``Error: ...`` line with its first word coloured."""
        for word, role in (("Error:", "error"), ("Warning:", "warning")):
            if line.startswith(word):
                return self.paint(word, role) + line[len(word) :]
        return line


def caret_lines(source_line: str, column: int, style: Style, width: int | None = None) -> list[str]:
    """The source line and a caret under ``column`` (1-based, in characters); tabs are kept in the
    caret's indent so that the caret stands under the character on any tab width.  With ``width``,
    a long line is shown around the column, within the terminal."""
    text = source_line.rstrip("\r\n")
    column = max(column, 1)
    if width is not None and len(text) + 2 >= width:
        room = max(width - 6, 10)
        start = max(0, min(column - 1 - room // 2, len(text) - room))
        shown_text = text[start : start + room]
        lead = "..." if start > 0 else ""
        text, column = lead + shown_text, column - start + len(lead)
    indent = "".join("\t" if c == "\t" else " " for c in text[: column - 1])
    return [f"  {text}", f"  {indent}{style.paint('^', 'caret')}"]
