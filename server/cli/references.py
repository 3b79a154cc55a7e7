"""``puppet-xpp --references NAME [ENVDIR...]``: where a class, defined type, type alias, function or
variable is defined and used, from the same reference index the language server answers from.

    puppet-xpp --references mymod::app                 uses of class/type/function mymod::app in .
    puppet-xpp --references '$mymod::app::port' ENV     a class parameter: body uses, named uses, Hiera keys
    puppet-xpp --references mymod::app --callers ENV    who includes/declares/calls it (call hierarchy)

One line per occurrence, ``path:line:column: kind role text`` (1-based line and column; columns
count UTF-16 units, as LSP does), sorted by file and position.  Files are read by the one source-reading
rule (:mod:`xpp.sources`): a FIFO, a device or a file over the size limit is skipped, never read, with a
line on standard error.  Exit codes: 0 found, 1 not found, 2 usage.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from puppet_xpp.server.analysis.references import Ref, RefKey

__all__ = ["KINDS", "add_arguments", "keys_for", "run"]

KINDS = ("class", "type", "function", "plan")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("references", (__doc__ or "").strip())
    group.add_argument("name", metavar="NAME", nargs="?", help="a class, type, function or $variable name")
    group.add_argument("roots", metavar="ENVDIR", nargs="*", help="directories to index (default: .)")
    group.add_argument("--callers", action="store_true", help="who includes, declares or calls it")
    group.add_argument("--debug", action="store_true", help="print the traceback of an internal error")


def keys_for(name: str) -> list[RefKey]:
    """The index keys a command-line name can mean (a leading ``$`` asks for a variable)."""
    from puppet_xpp.server.analysis.references import norm

    if name.startswith("$"):
        n = name[1:]
        return [("var", n if n.startswith("::") and "::" not in n[2:] else norm(n))]
    return [(kind, norm(name)) for kind in KINDS]


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from puppet_xpp.server.analysis.references import build
    from puppet_xpp.server.analysis.rename import incoming

    if args.name is None:
        out.write((__doc__ or "").strip() + "\n")
        return 2
    roots: Sequence[str] = args.roots or ["."]
    for root in roots:
        if not os.path.isdir(root):
            err.write(f"puppet-xpp --references: {root}: not a directory\n")
            return 2
    refused: list[str] = []  # files the one source-reading rule did not read (a FIFO, a device ...)
    _workspace, refs = build([os.path.abspath(root) for root in roots], refused)
    for why in refused:
        err.write(f"puppet-xpp --references: skipped: {why}\n")
    found = 0
    keys = keys_for(args.name)
    # a name defined in the workspace is what it is defined as (defined('x') is filed as a class and a type)
    defined = [key for key in keys if refs.defs(key)]
    for key in defined or keys:
        if args.callers:
            for owner, uses in sorted(incoming(refs, key).items(), key=lambda item: str(item[0])):
                for r in uses:
                    found += 1
                    who = os.path.relpath(owner[1]) if owner[0] == "file" else owner[1]
                    out.write(f"{_where(r)}: {key[0]} {key[1]} used by {owner[0]} {who}\n")
            continue
        for r in refs.refs(key):
            found += 1
            out.write(f"{_where(r)}: {key[0]} {r.role} {r.text}\n")
    if not found:
        err.write(f"puppet-xpp --references: {args.name}: no definition or use found\n")
    return 0 if found else 1


def _where(r: Ref) -> str:
    return f"{os.path.relpath(r.path)}:{r.start[0] + 1}:{r.start[1] + 1}"
