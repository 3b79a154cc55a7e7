"""grammar/ast.py and the Ruby loader's runtime/xpp/.../ast_types.rb are generated from the table in
grammar/ast_table.py (grammar/ast_gen.py, grammar/ast_ruby_gen.py) and checked in: each must be what its
generator writes now, and the generator must see a change of the table."""

from __future__ import annotations

import subprocess
import sys

import pytest

from puppet_xpp.grammar import ast, ast_gen, ast_ruby_gen, ast_table

GENERATORS = [ast_gen, ast_ruby_gen]  # every file generated from the AST table and checked in


@pytest.mark.parametrize("generator", GENERATORS, ids=lambda g: g.__name__.rsplit(".", 1)[-1])
def test_checked_in_file_is_current(generator):
    assert generator.TARGET.read_text(encoding="utf-8") == generator.generate(), (
        f"{generator.TARGET.name} is stale: run python -m {generator.__name__}"
    )


@pytest.mark.parametrize("generator", GENERATORS, ids=lambda g: g.__name__.rsplit(".", 1)[-1])
def test_check_command(generator):
    r = subprocess.run([sys.executable, "-m", generator.__name__, "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_a_table_change_makes_the_module_stale(monkeypatch):
    table = list(ast_table.TABLE)
    k = next(i for i, row in enumerate(table) if row[0] == "Nop")
    table[k] = ("Nop", "Expression", (("comment", "Optional[String]", None),), False)
    monkeypatch.setattr(ast_table, "TABLE", tuple(table))
    text = ast_gen.generate()
    assert text != ast_gen.TARGET.read_text(encoding="utf-8")
    assert "comment: str | None = None" in text
    assert ast_gen.main(["--check"]) == 1


def test_classes_carry_the_table():
    """Every type of the table is a class with the derived attributes the table gives."""
    infos = ast_table.describe()
    assert list(ast.TYPES) == [row[0] for row in ast_table.TABLE] and len(infos) == 84
    for name, info in infos.items():
        cls = ast.TYPES[name]
        assert getattr(ast, name) is cls and cls._name == name
        assert cls._pcore_name == ast_table.PCORE_PREFIX + name
        assert (cls._fields, cls._wire, cls._min, cls._defaults, cls._types) == (
            info.fields,
            info.wire,
            info.min,
            info.defaults,
            info.types,
        )
        assert (cls._child_fields, cls._ref_fields, cls._abstract) == (
            info.child_fields,
            info.ref_fields,
            info.abstract,
        )
        bases = [b for b in cls.__bases__ if b is ast.Node or b.__name__ in ast.TYPES]
        assert bases == [ast.TYPES[info.parent] if info.parent else ast.Node]


def test_constructor_defaults():
    loc = ast.make_locator("[1]\n", "/x.pp")
    a, b = ast.LiteralList(loc, 0, 3), ast.LiteralList(loc, 0, 3)
    assert a.values == [] and a.values is not b.values  # a new list per node
    assert ast.LiteralInteger(loc, 1, 1, 1).radix == 10
    assert ast.QualifiedReference(loc, 0, 3, "Foo::Bar").value == "foo::bar"
    assert loc.line_index == [0, 4] and (loc.line_for_offset(1), loc.pos_on_line(1)) == (1, 2)
    assert ast.LiteralList(loc, 0, 3, [ast.LiteralInteger(loc, 1, 1, 1)]).line == 1
