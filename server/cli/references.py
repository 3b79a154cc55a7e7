"""``puppet-xpp --references NAME [ENVDIR...]``: where a class, defined type, type alias, function or
variable is defined and used, from the same reference index the language server answers from.

    puppet-xpp --references mymod::app                 uses of class/type/function mymod::app in .
    puppet-xpp --references '$mymod::app::port' ENV     a class parameter: body uses, named uses, Hiera keys
    puppet-xpp --references mymod::app --callers ENV    who includes/declares/calls it (call hierarchy)

One line per occurrence, ``path:line:column: kind role text`` (1-based line and column; columns
count UTF-16 units, as LSP does), sorted by file and position.  Exit codes: 0 found, 1 not found, 2 usage.
"""

from __future__ import annotations

import os
import sys

KINDS = ("class", "type", "function", "plan")


def keys_for(name: str) -> list:
    """The index keys a command-line name can mean (a leading ``$`` asks for a variable)."""
    from puppet_xpp.server.analysis.references import norm

    if name.startswith("$"):
        n = name[1:]
        return [("var", n if n.startswith("::") and "::" not in n[2:] else norm(n))]
    return [(k, norm(name)) for k in KINDS]


def main(argv: list[str]) -> int:
    from puppet_xpp.server.analysis import references as R
    from puppet_xpp.server.analysis import rename as RN

    args = [a for a in argv if not a.startswith("--")]
    flags = {a for a in argv if a.startswith("--")}
    if not args or flags - {"--callers", "--debug"} or flags & {"--help"}:
        print(__doc__.strip(), file=sys.stderr if args or flags - {"--help"} else sys.stdout)
        return 0 if "--help" in flags else 2
    name, roots = args[0], args[1:] or ["."]
    for r in roots:
        if not os.path.isdir(r):
            print(f"puppet-xpp --references: {r}: not a directory", file=sys.stderr)
            return 2
    _idx, refs = R.build([os.path.abspath(r) for r in roots])
    found = 0
    for key in keys_for(name):
        if "--callers" in flags:
            for owner, rs in sorted(RN.incoming(refs, key).items(), key=lambda kv: str(kv[0])):
                for r in rs:
                    found += 1
                    who = os.path.relpath(owner[1]) if owner[0] == "file" else owner[1]
                    print(f"{_where(r)}: {key[0]} {key[1]} used by {owner[0]} {who}")
            continue
        for r in refs.refs(key):
            found += 1
            print(f"{_where(r)}: {key[0]} {r.role} {r.text}")
    if not found:
        print(f"puppet-xpp --references: {name}: no definition or use found", file=sys.stderr)
    return 0 if found else 1


def _where(r) -> str:
    return f"{os.path.relpath(r.path)}:{r.start[0] + 1}:{r.start[1] + 1}"
