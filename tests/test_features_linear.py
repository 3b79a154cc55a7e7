"""``features.expr_text`` (a parameter's type and default, a type alias's value, a return type as the
index shows them) is linear in the file: it took a slice of the rest of the file's tokens on every
call, so the index entries of a manifest of 5,000 classes took seconds of CPU and 20,000 minutes.

* its texts are those written in the manifest (an expectation written here by hand, brackets closed
  after the last child included);
* on a generated manifest every entry equals what a reference gives: the function's rule said another
  way (the slicing version gave the same 6,000 entries of ``generated(3000)`` when this was made);
* the entries of 4,000 classes take well under the 16 times the CPU of 1,000 a quadratic cost gives.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator

import pytest

from puppet_xpp.grammar import ast
from puppet_xpp.server.analysis import features
from puppet_xpp.server.analysis.document import Analysis
from puppet_xpp.server.analysis.index import index_data, symbols_of
from puppet_xpp.server.analysis.symbols import Param, Signature, Sym

PATH = "/nowhere/modules/foo/manifests/init.pp"


def analysis_of(text: str) -> Analysis:
    """The analysis the indexing makes of ``text`` (its parse hook's)."""
    got: list[Analysis] = []
    index_data(PATH, text.encode(), False, [lambda path, an: got.append(an)])
    assert len(got) == 1
    return got[0]


OPENS = {"LBRACK", "LISTSTART", "LBRACE", "SELBRACE", "LPAREN", "WSLPAREN"}
CLOSES = {"RBRACK", "RBRACE", "RPAREN"}


def subtree(node: ast.Node) -> Iterator[ast.Node]:
    yield node
    for child in node.children():
        yield from subtree(child)


def reference_expr_text(an: features.Analysed, node: ast.Positioned | None) -> str:
    """What ``features.expr_text`` gives, said another way (the reference for its output): from the
    first byte any node of the subtree covers to its last, and past it up to the bracket that closes
    the last one opened inside, looking at the file's tokens from the first (no bisection)."""
    if node is None:
        return ""
    covered = [
        (n.offset, n.offset + n.length) for n in subtree(node) if n.offset is not None and n.length > 0
    ]
    if not covered:
        return features.src(an, node)
    first, last = min(a for a, _ in covered), max(b for _, b in covered)
    stop, nesting = last, 0
    inside = (t for t in an.tokens if t.start_pos >= first)
    for token in inside:
        if nesting <= 0 and token.start_pos >= last:
            break
        nesting += (token.type in OPENS) - (token.type in CLOSES)
        stop = max(stop, token.end_pos)
    return an.data[first:stop].decode("utf-8", "replace")


SMALL = """\
# @summary A thing.
# @param port the port it listens on
class foo (
  Integer[1, 65535] $port = 8080,
  Hash[String, Array[Integer]] $map = { 'a' => [1, 2] },
  Optional[String] $label = undef,
  Variant[Integer, Enum['a', 'b']] $v = 'a',
  $untyped = [1, [2, 3]],
  $picked = $facts['os'] ? { 'Debian' => 'apt', default => 'yum' },
) {
}
type Foo::T = Variant[Integer, Hash[String, Tuple[Integer, 2, 2]]]
function foo::f(Integer $n, String *$rest) >> Array[Integer] {
  [$n]
}
"""


def test_the_texts_are_those_written():
    syms = {s.name: s for s in symbols_of(analysis_of(SMALL), PATH)}
    assert [(p.name, p.type, p.default, p.kind) for p in syms["foo"].params] == [
        ("port", "Integer[1, 65535]", "8080", "optional"),
        ("map", "Hash[String, Array[Integer]]", "{ 'a' => [1, 2] }", "optional"),
        ("label", "Optional[String]", "undef", "optional"),
        ("v", "Variant[Integer, Enum['a', 'b']]", "'a'", "optional"),
        ("untyped", "", "[1, [2, 3]]", "optional"),
        ("picked", "", "$facts['os'] ? { 'Debian' => 'apt', default => 'yum' }", "optional"),
    ]
    assert syms["foo"].params[0].doc == "the port it listens on"
    assert syms["Foo::T"].signature == "type Foo::T = Variant[Integer, Hash[String, Tuple[Integer, 2, 2]]]"
    f = syms["foo::f"]
    assert [(p.name, p.type, p.default, p.kind) for p in f.params] == [
        ("n", "Integer", "", "required"),
        ("rest", "String", "", "repeated"),
    ]
    assert f.signatures == [Signature(f.params, "Array[Integer]")]


def generated(n: int) -> str:
    """``n`` classes (every other one with a type alias and a function after it) whose parameters'
    types and defaults nest brackets, braces and a selector."""
    out = []
    for i in range(n):
        out.append(
            f"# @summary Class {i}.\n"
            f"# @param a the a of {i}\n"
            f"class m{i} (\n"
            f"  Integer[0, {i + 1}] $a = {i},\n"
            f"  Array[Variant[String, Integer]] $b = ['x', [{i}, 'y']],\n"
            f"  Hash[String, Integer] $h = {{'k{i}' => {i}}},\n"
            f"  Optional[Enum['p', 'q']] $o = undef,\n"
            f"  $s = $facts['n'] ? {{ {i} => 'one', default => 'other' }},\n"
            f") {{\n"
            f"  notify {{ 'n{i}': }}\n"
            f"}}\n"
        )
        if i % 2:
            out.append(f"type M{i}::T = Variant[Integer[{i}], Tuple[String, 1, {i + 1}]]\n")
            out.append(f"function m{i}::f(Integer $x = {i}) >> Hash[String, Array[Integer]] {{\n  {{}}\n}}\n")
    return "".join(out)


def test_the_entries_of_a_generated_manifest_are_those_of_the_reference(monkeypatch: pytest.MonkeyPatch):
    an = analysis_of(generated(200))
    now = symbols_of(an, PATH)
    with monkeypatch.context() as patched:
        patched.setattr(features, "expr_text", reference_expr_text)
        before = symbols_of(an, PATH)
    assert len(now) == 200 + 2 * 100
    assert now == before
    # and they are the manifest's own text (not both empty or both wrong)
    m7: Sym = next(s for s in now if s.name == "m7")
    assert m7.params[1] == Param("b", "Array[Variant[String, Integer]]", "['x', [7, 'y']]", "", "optional")
    assert m7.params[4].default == "$facts['n'] ? { 7 => 'one', default => 'other' }"
    alias = next(s for s in now if s.name == "M7::T")
    assert alias.signature == "type M7::T = Variant[Integer[7], Tuple[String, 1, 8]]"


def cpu_of_symbols(an: Analysis) -> float:
    """The CPU time of one indexing of ``an``'s entries (the collector held off: the time is the
    function's own)."""
    gc.disable()
    try:
        t0 = time.process_time()
        symbols_of(an, PATH)
        return time.process_time() - t0
    finally:
        gc.enable()


def test_the_entries_take_cpu_linear_in_the_classes():
    small, big = analysis_of(generated(1000)), analysis_of(generated(4000))
    one = min(cpu_of_symbols(small) for _ in range(3))
    # linear: about 4 times; quadratic (the slicing version): 16 times and more.  A try slowed by
    # the machine is tried again (at most three), a clearly quadratic one is not.
    tries: list[float] = []
    for _ in range(3):
        tries.append(cpu_of_symbols(big))
        if tries[-1] < 8 * one or tries[-1] > 24 * one:
            break
    assert min(tries) < 8 * one, (one, tries)
