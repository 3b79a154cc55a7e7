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
import sys


def _files(paths):
    for p in paths:
        if os.path.isdir(p):
            found: list[str] = []
            for root, dirs, files in os.walk(p):
                dirs.sort()
                found.extend(os.path.join(root, f) for f in files if f.endswith(".xpp"))
            yield from sorted(found)
        else:
            yield p


def main(argv=None, out=None) -> int:
    from puppet_xpp.xpp.verify import Summary, verify_file

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "--verify":
        argv = argv[1:]
    out = out or sys.stdout
    ap = argparse.ArgumentParser(prog="puppet-xpp --verify", description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", metavar="FILE.xpp")
    ap.add_argument("-q", "--quiet", action="store_true", help="print problems only")
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    status = 0
    for path in _files(a.files):
        summary = Summary()
        problems = verify_file(path, summary)
        if problems:
            unreadable = problems[0].startswith("cannot read")
            status = max(status, 2 if unreadable else 1)
            for p in problems:
                out.write(f"{path}: error: {p}\n")
        elif not a.quiet:
            out.write(f"{path}: OK ({summary})\n")
    out.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
