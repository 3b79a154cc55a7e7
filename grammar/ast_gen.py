"""Generate ``grammar/ast.py`` (the AST node classes) from the table in ``grammar/ast_table.py``.

    python -m puppet_xpp.grammar.ast_gen           # rewrite grammar/ast.py
    python -m puppet_xpp.grammar.ast_gen --check   # exit 1 when the checked-in file is stale

Like Puppet's ``ast.rb`` generated from ``ast.pp``: the classes are plain Python source with type
annotations, so type checkers and IDEs see them, while the table stays the one description of the model.
Every class carries what the serializer, the readers, the PN transform and the verifier need
(``_fields``, ``_wire``, ``_defaults``, ``_types``, ``_min``, ``_child_fields``, ``_ref_fields``...), written
out from :func:`grammar.ast_table.describe`.  The output is already in ``ruff format`` style.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .ast_table import DERIVED, PCORE_PREFIX, TypeInfo, describe

TARGET = Path(__file__).resolve().with_name("ast.py")
WIDTH = 110  # pyproject.toml [tool.ruff] line-length

# hand-written behaviour mixed into a generated class (grammar/ast_base.py)
MIXINS = {"Locator": "LocatorMixin", "Positioned": "PositionedMixin"}
EXTRA_SLOTS = {"Locator": ("_b",)}  # the source bytes, computed once (LocatorMixin.source_bytes)

_SIMPLE = {"String": "str", "Integer": "int", "Float": "float", "Boolean": "bool", "Any": "Regexp"}


def annotation(pcore_type: str) -> str:
    """The Python annotation of a Pcore type string of the table."""
    t = pcore_type.strip()
    if t in _SIMPLE:
        return _SIMPLE[t]
    m = re.fullmatch(r"Optional\[(.*)\]", t)
    if m:
        return f"{annotation(m.group(1))} | None"
    if t.startswith("Enum["):
        return "str"
    m = re.fullmatch(r"Array\[(.*?)(?:,\s*\d+)?\]", t)
    if m:
        return f"list[{annotation(m.group(1))}]"
    if re.fullmatch(r"[A-Z]\w*", t):
        return t
    raise ValueError(f"Pcore type {t!r} has no Python annotation")


def _seq(head: str, items: list[str], tail: str, indent: str) -> list[str]:
    """``head item, item tail`` on one line when it fits, else one item per line (magic trailing comma)."""
    one = f"{indent}{head}{', '.join(items)}{tail}"
    if len(one) <= WIDTH and not (len(items) == 1 and head.endswith("(") and tail == ")"):
        return [one]
    if len(items) == 1 and len(one) + 1 <= WIDTH and head.endswith("("):  # a 1-tuple keeps its comma
        return [f"{indent}{head}{items[0]},{tail}"]
    return [f"{indent}{head}"] + [f"{indent}    {x}," for x in items] + [f"{indent}{tail.lstrip()}"]


def _tuple(
    name: str, items: tuple[str, ...], indent: str, ann: str = ": ClassVar[tuple[str, ...]]"
) -> list[str]:
    if not items:
        return [f"{indent}{name}{ann} = ()"]
    return _seq(f"{name}{ann} = (", [_py(x) for x in items], ")", indent)


def _dict(name: str, items: dict[str, Any], ann: str, indent: str) -> list[str]:
    if not items:
        return [f"{indent}{name}: ClassVar[{ann}] = {{}}"]
    return _seq(
        f"{name}: ClassVar[{ann}] = {{", [f"{_py(k)}: {_py(v)}" for k, v in items.items()], "}", indent
    )


def _py(v: Any) -> str:
    """A literal as ruff format writes it (strings in double quotes)."""
    if isinstance(v, str) and '"' not in v and "\\" not in v:
        return f'"{v}"'
    return repr(v)


def _class(info: TypeInfo) -> list[str]:
    n = info.name
    bases = ([MIXINS[n]] if n in MIXINS else []) + [info.parent or "Node"]
    ind = "    "
    L = [f"class {n}({', '.join(bases)}):"]
    slots = info.own + EXTRA_SLOTS.get(n, ())
    L += _tuple("__slots__", slots, ind, "") if slots else [f"{ind}__slots__ = ()"]
    L.append(f'{ind}_name = "{n}"')
    L.append(f'{ind}_pcore_name = "{PCORE_PREFIX}{n}"')
    L += _tuple("_fields", info.fields, ind)
    L += _tuple("_wire", info.wire, ind)
    L += _dict("_defaults", info.defaults, "dict[str, Any]", ind)
    L += _dict("_types", info.types, "dict[str, str]", ind)
    L.append(f"{ind}_min = {info.min}")
    L.append(f"{ind}_abstract = {info.abstract}")
    L += _tuple("_child_fields", info.child_fields, ind)
    L += _tuple("_ref_fields", info.ref_fields, ind)
    if info.own:
        L.append("")
        for a in info.own:
            L.append(f"{ind}{a}: {annotation(info.types[a])}")
    L.append("")
    params = []
    for a in info.wire:
        ann = annotation(info.types[a])
        if a not in info.defaults:
            params.append(f"{a}: {ann}")
        elif isinstance(info.defaults[a], list):
            params.append(f"{a}: {ann} = DEFAULT")
        else:
            params.append(f"{a}: {ann} = {_py(info.defaults[a])}")
    L += _seq("def __init__(", ["self"] + params, ") -> None:", ind)
    for a in info.wire:
        if isinstance(info.defaults.get(a), list):
            L.append(f"{ind}    self.{a} = [] if {a} is DEFAULT else {a}")
        else:
            L.append(f"{ind}    self.{a} = {a}")
    if not info.wire:
        L.append(f"{ind}    pass")
    for tname, attr, ptype, expr in DERIVED:
        if tname == n:
            L += [
                "",
                f"{ind}@property",
                f"{ind}def {attr}(self) -> {annotation(ptype)}:",
                f"{ind}    return {expr}",
            ]
    return L


HEADER = '''\
"""The Puppet::AST node classes.  GENERATED from grammar/ast_table.py by grammar/ast_gen.py: do not edit.

Regenerate with ``python -m puppet_xpp.grammar.ast_gen`` after changing the table (tests/test_ast_gen.py
fails while this file is stale).  Each class's ``__init__`` takes the attributes in Pcore wire order
(required ones first); optional ones may be omitted.  ``TYPES`` maps every type name to its class,
``CONCRETE`` the non-abstract ones.
"""

from __future__ import annotations

from typing import Any, ClassVar

from .ast_base import DEFAULT, LocatorMixin, Node, PositionedMixin, Regexp, line_starts, walk
from .ast_table import PCORE_PREFIX, REFERENCES, REQ, TABLE, pyname

__all__ = [
    "CONCRETE",
    "DEFAULT",
    "PCORE_PREFIX",
    "REFERENCES",
    "REQ",
    "TABLE",
    "TYPES",
    "Node",
    "Regexp",
    "make_locator",
    "pyname",
    "walk",
{names}
]
'''

FOOTER = '''

TYPES: dict[str, type[Node]] = {{
{types}
}}
CONCRETE: dict[str, type[Node]] = {{n: c for n, c in TYPES.items() if not c._abstract}}


def make_locator(text: str, file: str = "") -> Locator:
    """One Locator per source: its line_index holds the byte offset of every line start."""
    data = text.encode("utf-8", "surrogateescape")
    loc = Locator(text, file, line_starts(data))
    loc.set_source_bytes(data)
    return loc
'''


def generate() -> str:
    infos = describe()
    names = "\n".join(f'    "{n}",' for n in infos)
    out = [HEADER.format(names=names)]
    for info in infos.values():
        out.append("\n\n" + "\n".join(_class(info)) + "\n")
    out.append(FOOTER.format(types="\n".join(f'    "{n}": {n},' for n in infos)))
    return "".join(out)


def write_generated(path: Path, text: str) -> None:
    """Write a generated file atomically (temp file + rename), readable by all like any source file
    (mkstemp makes it 0600).  Every generator of the AST table writes through here."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def generator_main(argv: list[str] | None, target: Path, make: Callable[[], str], module: str) -> int:
    """The command line of a generator: write ``target`` from ``make()``, or with ``--check`` exit 1
    when the checked-in file differs from a fresh generation (CI's stale-file check)."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--check"]:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current != make():
            print(f"{target} is stale: run python -m {module}", file=sys.stderr)
            return 1
        return 0
    if args:
        print(f"usage: python -m {module} [--check]", file=sys.stderr)
        return 2
    write_generated(target, make())
    return 0


def write(path: Path = TARGET) -> None:
    write_generated(path, generate())


def main(argv: list[str] | None = None) -> int:
    return generator_main(argv, TARGET, generate, "puppet_xpp.grammar.ast_gen")


if __name__ == "__main__":
    sys.exit(main())
