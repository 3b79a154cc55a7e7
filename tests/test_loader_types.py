"""The Ruby loader's attribute types (runtime/xpp/lib/puppet_x/xpp/ast_types.rb) are generated from the one
AST table (grammar/ast_ruby_gen.py) and checked in (that it is current: tests/test_ast_gen.py, with ast.py); the
table must describe Puppet's own model (7.23 and OpenVox 8): every type's class with the table's parent and
its constructor taking the table's attributes in wire order, each with the loader's flattened, typed
constructor."""

from __future__ import annotations

import json
import subprocess

import pytest

from puppet_xpp.grammar import ast_ruby_gen, ast_table
from tests.conformance.puppets import missing_reason, ruby_command
from tests.test_loader_fuzz import RUNTIME_LIB


def test_a_table_change_makes_the_file_stale(monkeypatch):
    table = list(ast_table.TABLE)
    k = next(i for i, row in enumerate(table) if row[0] == "Nop")
    table[k] = ("Nop", "Expression", (("comment", "Optional[String]", None),), False)
    monkeypatch.setattr(ast_table, "TABLE", tuple(table))
    monkeypatch.setattr(ast_ruby_gen, "TABLE", tuple(table))
    text = ast_ruby_gen.generate()
    assert "['comment', 'Optional[String]', '(%<v>s.nil? || %<v>s.is_a?(::String))']" in text
    assert ast_ruby_gen.main(["--check"]) == 1


def test_ruby_tests_of_the_pcore_types():
    enums = ast_ruby_gen._Enums()
    assert ast_ruby_gen.ruby_test("Array[Expression, 1]", enums) == (
        "(%<v>s.is_a?(::Array) && %<v>s.size >= 1 && %<v>s.all?(::Puppet::Pops::Model::Expression))"
    )
    assert ast_ruby_gen.ruby_test("Optional[Boolean]", enums) == (
        "(%<v>s.nil? || (true.equal?(%<v>s) || false.equal?(%<v>s)))"
    )
    assert ast_ruby_gen.ruby_test("Enum['!~', '=~']", enums) == "::PuppetX::Xpp::AstTypes::ENUM_0.key?(%<v>s)"
    assert (
        ast_ruby_gen.ruby_test("Locator", enums)
        == "%<v>s.is_a?(::Puppet::Pops::Parser::Locator::AbstractLocator)"
    )
    with pytest.raises(ValueError):
        ast_ruby_gen.ruby_test("Hash[String, Any]", enums)


MODEL_CHECK = r"""
require 'json'
$LOAD_PATH.unshift(ARGV[0])
require 'puppet'
require 'puppet_x/xpp/loader'
table = JSON.parse($stdin.read)
x = PuppetX::Xpp::MsgpackReader
out = {}
table.each do |name, parent, abstract|
  k = (Puppet::Pops::Model.const_get(name, false) rescue nil)
  next out[name] = 'no class' unless k.is_a?(Class)
  sup = k.superclass.name.split('::').last
  next out[name] = "parent #{sup}" unless sup == (parent || 'Object')
  next if abstract
  info = x.table["Puppet::AST::#{name}"]
  next out[name] = 'not in the loader table' unless info
  build = x::Builder.cached(info[0], info[3], info[1], info[4], "Puppet::AST::#{name}")
  out[name] = 'no flattened constructor' unless build
end
puts JSON.generate(out)
"""


@pytest.mark.parametrize("puppet", ["7.23", "8"])
def test_the_table_is_puppets_model(puppet):
    why = missing_reason(puppet)
    if why:
        pytest.skip(why)
    rows = [
        [name, parent, abstract] for name, parent, _attrs, abstract in ast_table.TABLE if name != "Locator"
    ]
    r = subprocess.run(
        ruby_command(puppet) + ["-e", MODEL_CHECK, RUNTIME_LIB],
        input=json.dumps(rows),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    # PopsObject's parent in Puppet is Object (a Pcore object); the table has none
    assert json.loads(r.stdout) == {}
