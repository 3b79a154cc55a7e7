"""Generate ``runtime/xpp/lib/puppet_x/xpp/ast_types.rb`` (the attribute types the runtime's Ruby loader
checks) from the table in ``grammar/ast_table.py``.

    python -m puppet_xpp.grammar.ast_ruby_gen           # rewrite ast_types.rb
    python -m puppet_xpp.grammar.ast_ruby_gen --check   # exit 1 when the checked-in file is stale

Why generated: the Ruby loader must accept exactly what the complete Python reader accepts
(:mod:`xpp.pcore.nodes` compiles its checks from the same table), so the Ruby side's types come from the
one table too, never from a second hand-written list.  The file holds, per concrete type, the attributes
in Pcore wire order with their Pcore type and a Ruby test of a value ``%<v>s`` (a ``format`` template the
loader compiles into its constructors), the minimum attribute count, the reference attribute's slot, and
the Enum sets.  A Pcore type name of the table maps to the Ruby class of Puppet's model
(``Puppet::Pops::Model::<name>``), except ``Locator``, whose instances are Puppet's parser Locators.
"""

from __future__ import annotations

import keyword
import re
import sys
from pathlib import Path

from .ast_gen import generator_main, write_generated
from .ast_table import PCORE_PREFIX, REFERENCES, TABLE, describe

TARGET = Path(__file__).resolve().parents[1] / "runtime" / "xpp" / "lib" / "puppet_x" / "xpp" / "ast_types.rb"

#: the Ruby class of a table type whose instances are not ``Puppet::Pops::Model`` objects
RUBY_CLASS = {"Locator": "::Puppet::Pops::Parser::Locator::AbstractLocator"}
_SCALAR = {
    "String": "%<v>s.is_a?(::String)",
    "Integer": "%<v>s.is_a?(::Integer)",
    "Float": "%<v>s.is_a?(::Float)",
    "Boolean": "(true.equal?(%<v>s) || false.equal?(%<v>s))",
    # only LiteralRegularExpression.value is typed Any: the reader (as the Python one) wants a Regexp there
    "Any": "%<v>s.is_a?(::Regexp)",
}


class _Enums:
    """The Enum sets met while generating, each one constant ``ENUM_<n>`` (a frozen Hash: value => true)."""

    def __init__(self) -> None:
        self.sets: list[tuple[str, ...]] = []

    def name(self, values: tuple[str, ...]) -> str:
        if values not in self.sets:
            self.sets.append(values)
        return f"::PuppetX::Xpp::AstTypes::ENUM_{self.sets.index(values)}"


def ruby_test(pcore_type: str, enums: _Enums, var: str = "%<v>s") -> str:
    """A Ruby expression testing ``var`` against a Pcore type string of the table (as
    ``xpp.pcore.nodes.check_expr`` does for the Python reader)."""
    t = pcore_type.strip()
    if t in _SCALAR:
        return _SCALAR[t].replace("%<v>s", var)
    m = re.fullmatch(r"Optional\[(.*)\]", t)
    if m:
        return f"({var}.nil? || {ruby_test(m.group(1), enums, var)})"
    m = re.fullmatch(r"Enum\[(.*)\]", t)
    if m:
        values = tuple(v.strip().strip("'\"") for v in m.group(1).split(","))
        return f"{enums.name(values)}.key?({var})"
    m = re.fullmatch(r"Array\[(.*?)(?:,\s*(\d+))?\]", t)
    if m:
        size = f" && {var}.size >= {int(m.group(2))}" if m.group(2) else ""
        inner = ruby_test(m.group(1), enums, "e")
        k = re.fullmatch(r"e\.is_a\?\(([\w:]+)\)", inner)
        # a class: Enumerable#all?(pattern) tests `pattern === e` without a block call per element
        each = f"{var}.all?({k.group(1)})" if k else f"{var}.all? {{ |e| {inner} }}"
        return f"({var}.is_a?(::Array){size} && {each})"
    names = {row[0] for row in TABLE}
    if t not in names:
        raise ValueError(f"grammar.ast type {t!r} has no Ruby test")
    return f"{var}.is_a?({RUBY_CLASS.get(t, f'::Puppet::Pops::Model::{t}')})"


def ruby_name(attr: str) -> str:
    """The Pcore (and Ruby) name of a grammar.ast attribute (:func:`grammar.ast_table.pyname` undone)."""
    return attr[:-1] if attr.endswith("_") and keyword.iskeyword(attr[:-1]) else attr


def _rb(s: str) -> str:
    """A single-quoted Ruby string literal."""
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


HEADER = """\
# frozen_string_literal: true

# GENERATED from grammar/ast_table.py by grammar/ast_ruby_gen.py: do not edit.  Regenerate with
# `python -m puppet_xpp.grammar.ast_ruby_gen` after changing the table (tests/test_loader_types.py fails
# while this file is stale).
#
# The attribute types of every concrete type of Puppet's AST, as the complete Python reader checks them
# (xpp/pcore/nodes.py, from the same table): the loader (loader.rb) compiles the tests into its
# constructors and refuses a value of another type.
module PuppetX
  module Xpp
    module AstTypes
"""


def generate() -> str:
    infos = describe()
    enums = _Enums()
    rows: list[str] = []
    refs: list[str] = []
    for name, info in infos.items():
        if info.abstract:
            continue
        slots = []
        for w in info.wire:
            t = info.types[w]
            slots.append(f"          [{_rb(ruby_name(w))}, {_rb(t)}, {_rb(ruby_test(t, enums))}],")
        rows.append(f"        {_rb(PCORE_PREFIX + name)} => [{info.min}, [")
        rows += slots
        rows.append("        ]],")
        for tname, attr in sorted(REFERENCES):
            if tname == name:
                refs.append(f"        {_rb(PCORE_PREFIX + name)} => {info.wire.index(attr)},")
    out = [HEADER]
    for k, values in enumerate(enums.sets):
        items = ", ".join(f"{_rb(v)} => true" for v in values)
        out.append(f"      ENUM_{k} = {{ {items} }}.freeze\n")
    out.append(
        "\n      # Pcore type name => [minimum attribute count, [[attribute, Pcore type, Ruby test of %<v>s], ...]]\n"
        "      # (attributes in Pcore wire order)\n"
        "      TYPES = {\n"
    )
    out.append("\n".join(rows) + "\n      }.freeze\n")
    out.append(
        "\n      # Pcore type name => wire slot of its reference attribute (nodes contained elsewhere, written as\n"
        "      # back-references)\n"
        "      REFERENCES = {\n"
    )
    out.append("\n".join(refs) + "\n      }.freeze\n    end\n  end\nend\n")
    return "".join(out)


def write(path: Path = TARGET) -> None:
    write_generated(path, generate())


def main(argv: list[str] | None = None) -> int:
    return generator_main(argv, TARGET, generate, "puppet_xpp.grammar.ast_ruby_gen")


if __name__ == "__main__":
    sys.exit(main())
