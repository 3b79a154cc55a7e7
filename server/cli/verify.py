"""``puppet-xpp --verify FILE.xpp... [--quiet]``: check that ``.xpp`` files are well formed.

Checks (see :mod:`xpp.verify`): the PRFC-23 envelope; the Pcore payload (types, attribute counts); the
Locator's line index against its text; every node's position inside the source and its Locator; the
definitions pointing into the body; the diagnostics.  A directory argument is searched recursively for
``*.xpp`` files.

Output: one line per file, ``FILE: OK (...)`` or ``FILE: error: PROBLEM`` for each problem (``--quiet``:
problems only).  Exit status: 0 all well formed, 1 a problem in some file, 2 usage error or unreadable file.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import TextIO

__all__ = ["add_arguments", "main", "run", "xpp_files"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("verify", (__doc__ or "").split("\n\n")[0])
    group.add_argument("files", nargs="+", metavar="FILE.xpp")
    group.add_argument("-q", "--quiet", action="store_true", help="print problems only")
    group.add_argument("--debug", action="store_true", help="print the traceback of an internal error")


def xpp_files(paths: Iterable[str]) -> Iterator[str]:
    """Files as given; directories searched recursively (sorted) for ``*.xpp``."""
    for p in paths:
        if os.path.isdir(p):
            found: list[str] = []
            for root, dirs, files in os.walk(p):
                dirs.sort()
                found.extend(os.path.join(root, f) for f in files if f.endswith(".xpp"))
            yield from sorted(found)
        else:
            yield p


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from puppet_xpp.xpp.verify import Summary, verify_file

    status = 0
    for path in xpp_files(args.files):
        summary = Summary()
        problems = verify_file(path, summary)
        if problems:
            unreadable = problems[0].startswith("cannot read")
            status = max(status, 2 if unreadable else 1)
            for p in problems:
                out.write(f"{path}: error: {p}\n")
        elif not args.quiet:
            out.write(f"{path}: OK ({summary})\n")
    out.flush()
    return status


def main(argv: Sequence[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    """``puppet-xpp --verify ARGV...`` for a caller holding an argument list (tests, scripts)."""
    from puppet_xpp.server import cli

    return cli.main(["--verify", *argv], out, err)
