"""The incremental parser (grammar/incremental.py) must give exactly what a full parse gives:
same Program (PN, every node position, the definitions list), same parse diagnostics, same validation
diagnostics -- after any sequence of edits.  The reference is grammar.parser.parse + grammar.validator."""

from __future__ import annotations

import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from puppet_xpp.grammar import ast as A
from puppet_xpp.grammar import pn
from puppet_xpp.server.analysis import DocConfig, full_analysis
from puppet_xpp.grammar.incremental import IncrementalParser

BASE = """# @summary a class
class demo (
  String $a = 'x',
  Integer $b = 2,
) {
  include foo
  file { "/tmp/${a}":
    ensure  => file,
    content => @(EOT),
      hello ${a}
      | EOT
  }
  $h = { 'k' => 1, 'k2' => [1, 2] }
  if $b > 1 { notice($h) } else { warning('no') }
}

define demo::thing($x = undef) {
  $y = $x ? { undef => 1, default => 2 }
  notify { "n${y}": }
}

node default {
  class { 'demo': a => 'z' }
  Package { ensure => installed }
}

$top = [1, 2, 3].map |$v| { $v * 2 }
function demo::f(Integer $i) >> Integer { $i + 1 }
type Demo::T = Variant[String, Integer]
"""

PIECES = [
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    '"',
    "'",
    "\n",
    " ",
    "$x",
    "include bar",
    ";",
    ",",
    "=>",
    "->",
    "@(END)\ntext\nEND\n",
    "/*",
    "*/",
    "# c\n",
    "class c {",
    "if $a {",
    "}\n",
    "x",
    "=",
    "?",
    ":",
    "/",
    "1",
    "\t",
    "::",
    "notice 1, 2",
    "é",
    "😀",
    "<| |>",
    "case $a { default: {} }",
    "\n\n",
]


def signature(program):
    if program is None:
        return None
    nodes = [(n._name, getattr(n, "offset", None), getattr(n, "length", None)) for n in A.walk(program)]
    return (
        pn.to_data(pn.transform(program)),
        nodes,
        [(d._name, d.offset, d.length) for d in program.definitions],
    )


def dsig(ds):
    return sorted((d.code, d.offset, d.length, d.severity, d.message) for d in ds)


def check_same(p: IncrementalParser, config: DocConfig):
    p.update()
    text = p.data.decode("utf-8", "surrogateescape")
    try:
        ref, vref = full_analysis(text, config)
    except Exception:  # a parser bug (reported to the parser owner): nothing to compare with
        assert p.stats["mode"] == "crashed"
        return
    assert signature(p.program) == signature(ref.program)
    assert dsig(p.parse_diagnostics()) == dsig(ref.diagnostics)
    assert dsig(p.validation_diagnostics()) == dsig(vref)


edit = st.tuples(st.floats(0, 1), st.integers(0, 12), st.sampled_from(PIECES))


@settings(
    max_examples=int(os.environ.get("PUPPET_XPP_HYPOTHESIS_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(st.lists(edit, min_size=1, max_size=3), min_size=1, max_size=12))
def test_random_edits_equal_full_parse(batches):
    config = DocConfig(file="/env/modules/demo/manifests/init.pp", modulepath=("/env/modules",))
    p = IncrementalParser(BASE, config)
    p.update()
    for batch in batches:
        for where, dellen, piece in batch:
            n = len(p.data)
            a = int(where * n)
            # stay on character boundaries
            while a < n and (p.data[a] & 0xC0) == 0x80:
                a += 1
            b = min(n, a + dellen)
            while b < n and (p.data[b] & 0xC0) == 0x80:
                b += 1
            p.edit(a, b, piece)
        check_same(p, config)


def test_typing_a_file_character_by_character():
    """Type BASE from scratch, one character at a time (every prefix is checked every 7 characters)."""
    config = DocConfig(file="x.pp")
    p = IncrementalParser("", config)
    p.update()
    for k, ch in enumerate(BASE):
        p.edit(len(p.data), len(p.data), ch)
        if k % 7 == 0 or k == len(BASE) - 1:
            check_same(p, config)


def test_edit_reparses_only_the_touched_statements():
    config = DocConfig(file="x.pp")
    text = "".join(f"file {{ '/tmp/{i}': ensure => file }}\n" for i in range(400))
    p = IncrementalParser(text, config)
    p.update()
    p.validation_diagnostics()
    n_tokens = len(p.tokens)
    mid = text.index("'/tmp/200'")
    p.edit(mid + 1, mid + 1, "x")
    check_same(p, config)
    assert p.stats["mode"] == "incremental"
    assert p.stats["tokens_parsed"] < 40 < n_tokens
    assert p.stats["tokens_lexed"] < 40
    assert p.stats["statements_validated"] <= 2


CORPUS = "/usr/share/puppet/modules/apache/manifests/vhost.pp"


@pytest.mark.skipif(not os.path.exists(CORPUS), reason="corpus not installed")
def test_corpus_file_random_edits():
    text = open(CORPUS, encoding="utf-8").read()
    config = DocConfig(file=CORPUS, modulepath=("/usr/share/puppet/modules",))
    p = IncrementalParser(text, config)
    p.update()
    rnd = random.Random(7)
    for _ in range(25):
        n = len(p.data)
        a = rnd.randrange(n)
        while a < n and (p.data[a] & 0xC0) == 0x80:
            a += 1
        p.edit(a, min(n, a + rnd.randrange(3)), rnd.choice(PIECES))
        check_same(p, config)
