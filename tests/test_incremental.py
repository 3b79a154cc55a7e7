"""The incremental parser (grammar/incremental/) must give exactly what a full parse gives:
same Program (PN, every node position, the definitions list), same parse diagnostics, same validation
diagnostics -- after any sequence of edits.  The reference is grammar.parser.parse + grammar.validator."""

from __future__ import annotations

import os
import random

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from puppet_xpp.grammar import ast, pn
from puppet_xpp.grammar.check import CheckConfig, check
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


def _char_start(data: bytes, i: int) -> int:
    """The first offset >= i that is not inside a UTF-8 sequence (edits land on character boundaries)."""
    while i < len(data) and (data[i] & 0xC0) == 0x80:
        i += 1
    return i


def _vhost() -> tuple[str, CheckConfig, IncrementalParser]:
    """apache's vhost.pp (one define with a long parameter list), parsed (skips without the corpus)."""
    if not os.path.exists(CORPUS):
        pytest.skip("corpus not installed")
    text = open(CORPUS, encoding="utf-8").read()
    config = CheckConfig(file=CORPUS, modulepath=("/usr/share/puppet/modules",))
    p = IncrementalParser(text, config)
    p.update()
    return text, config, p


def _one_class(target: int, file: str = "big.pp") -> tuple[str, CheckConfig, IncrementalParser]:
    """A one-class manifest of about target bytes (tests/test_incremental.one_class_manifest), parsed
    (skips without the corpus)."""
    text = one_class_manifest(target)
    if len(text) < target // 2:
        pytest.skip("corpus not installed")
    config = CheckConfig(file=file)
    p = IncrementalParser(text, config)
    p.update()
    return text, config, p


def _statement_end(text: str, frac: float) -> int:
    """The byte offset of the end of the first body statement closed by a `  }` line from the given
    fraction of a one-class manifest's lines on (where a new statement can be typed)."""
    lines = text.splitlines(keepends=True)
    k = int(len(lines) * frac)
    while not lines[k].startswith("  }"):
        k += 1
    return sum(len(x.encode()) for x in lines[: k + 1]) - 1


def signature(program):
    if program is None:
        return None
    nodes = [(n._name, getattr(n, "offset", None), getattr(n, "length", None)) for n in ast.walk(program)]
    return (
        pn.to_data(pn.transform(program)),
        nodes,
        [(d._name, d.offset, d.length) for d in program.definitions],
    )


def dsig(ds):
    return sorted((d.code, d.offset, d.length, d.severity, d.message) for d in ds)


def check_same(p: IncrementalParser, config: CheckConfig):
    p.update()
    assert "crash" not in p.stats, p.stats  # (an internal error, hidden by the full parse it falls back to)
    assert "seed_error" not in p.stats, (
        p.stats
    )  # (the same of grammar.incremental.tail, hidden by a plain parse)
    text = p.data.decode("utf-8", "surrogateescape")
    try:
        checked = check(text, config)
        ref, vref = checked.parse, checked.validation
    except Exception:  # a parser bug (reported to the parser owner): nothing to compare with
        assert p.stats["mode"] == "crashed"
        return
    # (in the language server's order: the diagnostics first, the Program, whose positions are
    # brought up to date on first use, when a feature asks for it)
    parse_diags, validation_diags = p.parse_diagnostics(), p.validation_diagnostics()
    assert signature(p.program) == signature(ref.program)
    assert dsig(parse_diags) == dsig(ref.diagnostics)
    assert dsig(validation_diags) == dsig(vref)


edit = st.tuples(st.floats(0, 1), st.integers(0, 12), st.sampled_from(PIECES))


@settings(
    max_examples=int(os.environ.get("PUPPET_XPP_HYPOTHESIS_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(st.lists(edit, min_size=1, max_size=3), min_size=1, max_size=12))
def test_random_edits_equal_full_parse(batches):
    config = CheckConfig(file="/env/modules/demo/manifests/init.pp", modulepath=("/env/modules",))
    p = IncrementalParser(BASE, config)
    p.update()
    for batch in batches:
        for where, dellen, piece in batch:
            n = len(p.data)
            a = int(where * n)
            # stay on character boundaries
            a = _char_start(p.data, a)
            b = min(n, a + dellen)
            b = _char_start(p.data, b)
            p.edit(a, b, piece)
        check_same(p, config)


def test_typing_a_file_character_by_character():
    """Type BASE from scratch, one character at a time (every prefix is checked every 7 characters)."""
    config = CheckConfig(file="x.pp")
    p = IncrementalParser("", config)
    p.update()
    for k, ch in enumerate(BASE):
        p.edit(len(p.data), len(p.data), ch)
        if k % 7 == 0 or k == len(BASE) - 1:
            check_same(p, config)


def test_edit_reparses_only_the_touched_statements():
    config = CheckConfig(file="x.pp")
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
    config = CheckConfig(file=CORPUS, modulepath=("/usr/share/puppet/modules",))
    p = IncrementalParser(text, config)
    p.update()
    rnd = random.Random(7)
    for _ in range(25):
        n = len(p.data)
        a = rnd.randrange(n)
        a = _char_start(p.data, a)
        p.edit(a, min(n, a + rnd.randrange(3)), rnd.choice(PIECES))
        check_same(p, config)


# --- inside bodies: large one-class manifests, templates ----------------------------------------------
def one_class_manifest(target: int) -> str:
    """A manifest of about `target` bytes with one class whose body is made of the corpus's class
    bodies (classes without nested definitions, from files that parse without errors).  Also what
    bench/bench_lsp.py measures on (with target 300 KB)."""
    from puppet_xpp.grammar.parser import parse
    from tests.conformance.corpus import corpus_files

    parts: list = []
    size = 0
    for f in corpus_files("pp"):
        with open(f, encoding="utf-8", errors="surrogateescape") as fh:
            text = fh.read()
        r = parse(text, f)
        if r.errors or r.program is None:
            continue
        data = text.encode("utf-8", "surrogateescape")
        for s in getattr(r.program.body, "statements", [r.program.body]):
            if type(s) is not ast.HostClassDefinition or s.body is None or not s.body.statements:
                continue
            seg = data[s.body.statements[0].offset : s.offset + s.length - 1].decode().rstrip()
            if "class " in seg or "define " in seg:
                continue
            parts.append("  " + seg + "\n")
            size += len(seg) + 3
            if size >= target:
                return "class big {\n" + "".join(parts) + "}\n"
    return "class big {\n" + "".join(parts) + "}\n"


def _random_edits(p, config, rnd, count, lo=0):
    for _ in range(count):
        n = len(p.data)
        a = rnd.randrange(lo, n)
        a = _char_start(p.data, a)
        b = min(n, a + rnd.randrange(3))
        b = _char_start(p.data, b)
        p.edit(a, b, rnd.choice(PIECES))
        check_same(p, config)


@pytest.mark.corpus
def test_one_class_manifest_random_edits():
    """Random edit sequences inside the body of a large one-class manifest (every edit is checked
    against a full parse + validation; the size grows with PUPPET_XPP_ONE_CLASS_BYTES)."""
    target = int(os.environ.get("PUPPET_XPP_ONE_CLASS_BYTES", "40000"))
    text = one_class_manifest(target)
    if len(text) < target // 2:
        pytest.skip("corpus not installed")
    config = CheckConfig(file="/env/modules/big/manifests/init.pp", modulepath=("/env/modules",))
    for seed in range(3):
        p = IncrementalParser(text, config)
        p.update()
        _random_edits(p, config, random.Random(seed), 25, lo=12)


@pytest.mark.corpus
def test_one_class_manifest_edit_reparses_one_statement():
    """An edit inside the body of a one-class manifest reparses and revalidates a few statements,
    also when it breaks the statement (a syntax error inside the body) and when it repairs it."""
    text, config, p = _one_class(40000)
    p.validation_diagnostics()
    lines = text.splitlines(keepends=True)
    at = sum(len(x.encode()) for x in lines[: len(lines) // 2])
    line = lines[len(lines) // 2]
    at += len(line) - len(line.lstrip())
    for piece in ("x", "("):
        for a, b, t in ((at, at, piece), (at, at + 1, "")):
            p.edit(a, b, t)
            check_same(p, config)
            assert p.stats["mode"] == "incremental", p.stats
            if t != "(":  # (an open `(` makes recovery skip the rest of the body: scanned, set aside)
                assert p.stats["tokens_parsed"] < 300 < len(p.tokens)
            # (the calls `include x` makes are made again after a repair: validated again too)
            assert p.stats["statements_validated"] <= 60


@pytest.mark.corpus
def test_one_class_manifest_typing_a_statement():
    """A statement typed character by character in the middle of a one-class body, then deleted (what
    bench/bench_lsp.py's ``typing`` scenario does): an open `'` or `{` breaks the file at the top
    level on the way.  Every step equals a full parse; a run that meets an error no list recovers
    from goes to the plain parse without trying the enclosing lists again."""
    text, config, p = _one_class(40000)
    at = _statement_end(text, 0.5)
    piece = "\n  notice('x', [1, {a => 2}])"
    tried = []
    for i, ch in enumerate(piece):
        p.edit(at + i, at + i, ch)
        check_same(p, config)
        if p.stats["mode"] == "plain":
            tried.append(p.stats["lists_tried"])
    for i in range(len(piece) - 1, -1, -1):
        p.edit(at + i, at + i + 1, "")
        check_same(p, config)
    assert p.data.decode() == text
    assert 1 in tried, tried


def test_one_class_manifest_quote_closed_again_is_local():
    """A quote typed in the middle of a one-class body makes the rest of the file lexed anew (one long
    string, then code where strings were); when it is closed again, the tokens lexed after it are the
    state's own again, so the statement is reparsed on its own: the last keystroke, which completes
    it, revalidates a few statements, not the rest of the body.  Every step equals a full parse."""
    text, config, p = _one_class(40000)
    at = _statement_end(text, 1 / 3)
    piece = "\n  notice('x', [1, {a => 2}])"
    for i, ch in enumerate(piece):
        p.edit(at + i, at + i, ch)
        check_same(p, config)
    assert p.stats["mode"] == "incremental" and p.stats["statements_validated"] <= 5, p.stats
    for i in range(len(piece) - 1, -1, -1):
        p.edit(at + i, at + i + 1, "")
        check_same(p, config)
    assert p.stats["statements_validated"] <= 5, p.stats
    assert p.data.decode() == text


def test_operator_statement_around_edit_is_validated_again():
    """A statement whose node starts at its operator (an assignment, a relationship) while its left
    operand starts before it: an edit inside that operand leaves the node's own offset after the
    edit, yet its validation (here reported at the operand's start) must not move with it."""
    text = "class c {\n  include a\n  if $a {\n    $b = 1\n  } = 3\n  include b\n}\n"
    config = CheckConfig(file="c.pp")
    p = IncrementalParser(text, config)
    p.update()
    p.validation_diagnostics()  # (cached)
    at = text.index("$b")
    p.edit(at, at, "\n ")
    check_same(p, config)


@pytest.mark.corpus
def test_quote_typed_mid_file_reuses_the_last_plain_parse():
    """A quote typed into a one-class body makes the rest of the file lexed anew; recovery then
    leaves the body and the file is broken at the top level.  While the quote stays open, the next
    keystroke's plain parse meets the last one's configuration where it resumed after the first
    error, and takes that parse's Program and diagnostics from there (stats "reused"): every step
    still equals a full parse."""
    big = one_class_manifest(300000)
    if len(big) < 200000:
        pytest.skip("corpus not installed")
    from puppet_xpp.grammar.parser import parse

    data = big.encode()
    body = parse(big, "big.pp").program.body.body.statements

    def start(n):
        return min(x.offset for x in ast.walk(n) if x.offset is not None)

    cut = next(start(x) for x in body if data[: x.offset].count(b"\n") >= 8300)
    text = "class tail {\n  " + data[cut:].decode()
    config = CheckConfig(file="tail.pp")
    lines = text.splitlines(keepends=True)
    p = IncrementalParser(text, config)
    p.update()
    at = sum(len(x.encode()) for x in lines[:401]) - 1
    seen: set = set()
    _type_and_delete(p, config, at, "\n  notice('x', [1, {a => 2}])", seen)
    assert "reused" in seen, seen
    assert p.data.decode() == text


@pytest.mark.corpus
def test_top_level_typing_before_and_after_a_define():
    """A statement typed at the top level of vhost.pp (in its header comment, before the define,
    and after it), broken until complete: while broken at the top level, the plain parse runs from
    the last top-level boundary (stats "resumed"); every step equals a full parse."""
    text, config, p = _vhost()
    data = text.encode()
    seen: set = set()
    for at in (data.index(b"\n", 2000), len(data.rstrip())):
        _type_and_delete(p, config, at, "\n  notice('x', [1, {a => 2}])", seen)
    assert ("plain", True) in seen and p.data == data, seen


def test_plain_parse_leaves_the_state_lists_alone():
    """A statement typed into a case option's body, broken until complete: the resumed plain parse
    reduces below the body and its builder appends to the lists on the LR stack there (the case's
    options); those are the state's, which must not change (a state that gained an option built for
    the plain parse crashed the next edit, which then fell back to a full parse)."""
    text = (
        "class c {\n  case $x {\n    'a': { $p = 1 }\n    default: {\n      $p = undef\n    }\n  }\n"
        "  include foo\n}\n"
    )
    config = CheckConfig(file="c.pp")
    p = IncrementalParser(text, config)
    p.update()
    at = text.index("undef") + len("undef")
    _type_and_delete(p, config, at, "\n  notice('x', [1, {a => 2}])", set())
    assert p.data.decode() == text


def test_quote_open_to_the_end_resumes_the_plain_parse():
    """A quote typed in a one-class body that no later quote closes (a hard lexer error at the end of
    the text): the tokens up to the failed string are parsed from the last boundary before the change
    (stats "resumed" in mode "lexbroken"), not from the first token; every step equals a full parse."""
    text, config, p = _one_class(40000)
    seen: set = set()
    for frac in (0.6, 0.8):
        _type_and_delete(p, config, _statement_end(text, frac), "\n  notice('x', [1, {a => 2}])", seen)
    assert ("lexbroken", True) in seen, seen
    assert p.data.decode() == text


BREAKING = [
    "\n  notice('x', [1, {a => 2}])",
    "\n  if $a { foo(1, [2",
    "\n  $h = { 'a' => [1, 2], 'b' => \"${x}\" }",
    "\n  file { '/x': content => @(EOT)\n    t\n    | EOT\n  }",
    "\n  [1].each |$v| { notice($v) ",
]


def _type_and_delete(p, config, at, piece, seen):
    """Type piece at byte `at` character by character, then delete it again, checking every step;
    seen collects the modes the incremental parser took ("reused": see grammar.incremental.plain.PlainRun)."""
    for i, ch in enumerate(piece):
        p.edit(at + i, at + i, ch)
        check_same(p, config)
        seen.add((p.stats["mode"], p.stats.get("resumed", False)))
        if p.stats.get("reused"):
            seen.add("reused")
    for i in range(len(piece) - 1, -1, -1):
        p.edit(at + i, at + i + 1, "")
        check_same(p, config)
        seen.add((p.stats["mode"], p.stats.get("resumed", False)))
        if p.stats.get("reused"):
            seen.add("reused")


@pytest.mark.corpus
def test_one_class_manifest_break_and_repair_resumed():
    """Statements typed and deleted character by character, and random breaking edits, at random
    lines of a one-class body: while the text is broken at the top level, the plain parse is resumed
    at the boundary before the change (stats "resumed"), and every step equals a full parse."""
    text = one_class_manifest(30000)
    if len(text) < 15000:
        pytest.skip("corpus not installed")
    config = CheckConfig(file="/env/modules/big/manifests/init.pp", modulepath=("/env/modules",))
    p = IncrementalParser(text, config)
    p.update()
    rnd = random.Random(11)
    lines = text.splitlines(keepends=True)
    seen: set = set()
    for piece in BREAKING:
        k = rnd.randrange(2, len(lines) - 2)
        at = sum(len(x.encode()) for x in lines[:k]) + len(lines[k].rstrip("\n").encode())
        _type_and_delete(p, config, at, piece, seen)
        assert p.data.decode() == text
    # random breaking pieces, never repaired on purpose
    for _ in range(20):
        n = len(p.data)
        a = rnd.randrange(20, n - 20)
        a = _char_start(p.data, a)
        p.edit(a, a + rnd.randrange(2), rnd.choice(["{", "(", "[", "'", '"', "}", "if $x {", "\n"]))
        check_same(p, config)
        seen.add((p.stats["mode"], p.stats.get("resumed", False)))
    assert ("plain", True) in seen, seen


@settings(
    max_examples=int(os.environ.get("PUPPET_XPP_HYPOTHESIS_EXAMPLES", "150")) // 2,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.lists(
        st.tuples(
            st.floats(0, 1), st.integers(0, 3), st.sampled_from(["{", "(", "[", "'", '"', "}", ")", "\n"])
        ),
        min_size=1,
        max_size=8,
    )
)
# a string opened on a heredoc's tag line runs over the heredoc's text (tokens that overlap)
@example(edits=[(0.0, 0, "{"), (0.26171875, 0, '"'), (0.5, 0, '"'), (1.0, 0, '"')])
# a line break added while the parse recovers from an error moves where recovery resumes
@example(edits=[(0.0, 3, "{"), (0.0, 3, "\n"), (0.03515625, 0, "\n")])
# a body kept whole while its header was reparsed, in a statement that recovery dropped
@example(edits=[(0.0, 0, "("), (0.25, 0, ")")])
# an edit after the first of the statements a syntax error swallowed (among them): they are dropped
@example(
    edits=[
        (0.87890625, 0, "{"),
        (0.5, 3, "{"),
        (0.875, 3, "\n"),
        (0.0, 0, "}"),
        (0.875, 2, "["),
        (1.0, 0, "("),
        (0.875, 1, ")"),
    ]
)
# a bracket typed before the point where the last plain parse resumed after an error inside a body
@example(edits=[(0.0, 0, "'"), (0.25, 0, "'"), (0.0, 0, "("), (0.0, 0, "(")])
# statements a syntax error swallowed, the last of them cut by the list's `}` (an error there too)
@example(edits=[(0.0, 0, "}"), (0.0, 0, "{"), (1.0, 0, "("), (0.65625, 0, "(")])
# a body kept whole whose old statement a syntax error also set aside: its diagnostic moved twice
@example(edits=[(0.0, 0, "}"), (0.75, 0, "("), (0.0, 0, "{"), (0.640625, 0, "(")])
# validation before the Program is handed out (the language server's order): a unit validated again
# read the positions of the statements below it before their moves were applied
@example(edits=[(0.0, 0, "'"), (1.0, 0, "'"), (0.5, 0, "{")])
def test_breaking_edits_inside_bodies_equal_full_parse(edits):
    """Unbalanced brackets and quotes inside the bodies of a class (the resumed plain parse), then
    removed again in reverse order: every step equals a full parse."""
    text = "class outer {\n" + BASE.replace("\n", "\n  ") + "\n}\n$after = 1\n"
    config = CheckConfig(file="/env/modules/outer/manifests/init.pp", modulepath=("/env/modules",))
    p = IncrementalParser(text, config)
    p.update()
    lo, hi = len("class outer {\n"), len(text.encode()) - len("\n}\n$after = 1\n")
    done = []
    for where, dellen, piece in edits:
        a = lo + int(where * (hi - lo))
        a = _char_start(p.data, a)
        b = min(len(p.data), a + dellen)
        b = _char_start(p.data, b)
        done.append((a, p.data[a:b].decode("utf-8", "surrogateescape"), piece))
        p.edit(a, b, piece)
        hi += len(piece.encode()) - (b - a)
        check_same(p, config)
    for a, old, piece in reversed(done):
        p.edit(a, a + len(piece.encode()), old)
        check_same(p, config)
    assert p.data.decode() == text


@pytest.mark.corpus
def test_corpus_template_typing_breaks_and_repairs():
    """EPP: a tag and a statement typed into a corpus template character by character and deleted."""
    from tests.conformance.corpus import corpus_files

    files = corpus_files("epp")
    if not files:
        pytest.skip("corpus not installed")
    path = random.Random(3).choice(files)
    text = open(path, encoding="utf-8").read()
    config = CheckConfig(file=path, epp=True)
    p = IncrementalParser(text, config)
    p.update()
    at = len(text.encode()) // 2
    at = _char_start(p.data, at)
    _type_and_delete(p, config, at, "<% if $x { [1, {a => '2'}].each |$v| { %>t<% } } %>", set())


@pytest.mark.corpus
def test_definition_header_edit_keeps_the_body():
    """An edit in a define's parameter list reparses the header and keeps the body (unchanged braces)."""
    text, config, p = _vhost()
    at = text.encode().index(b"$ssl_chain ")
    p.edit(at + 1, at + 1, "y")
    check_same(p, config)
    assert p.stats["mode"] == "incremental" and p.stats["bodies_kept"] == 1
    p.edit(at, at, "x")  # a syntax error at the top level: a plain parse is shown ...
    check_same(p, config)
    assert p.stats["mode"] == "plain"
    p.edit(at, at + 1, "")  # ... and the repair is incremental again
    check_same(p, config)
    assert p.stats["mode"] == "incremental"


@pytest.mark.corpus
def test_kept_body_resumes_after_header_edits():
    """Edits before a define that keep its body whole (a statement typed at the top level and deleted,
    a parameter renamed): a statement typed later into that body, and into an `if` inside it, breaks
    the file at the top level on the way; the plain parse is still resumed at the body's boundary
    (stats "resumed": the kept body's recorded LR stack holds the reparsed header), and every step
    equals a full parse."""
    text, config, p = _vhost()
    data = text.encode()
    at = data.index(b"define apache::vhost")
    p.edit(at, at, "x\n")  # a statement before the define ...
    check_same(p, config)
    p.edit(at, at + 2, "")  # ... deleted again: the body is kept whole both times
    check_same(p, config)
    par = data.index(b"$ssl_chain ")
    p.edit(par + 1, par + 1, "y")
    check_same(p, config)
    assert p.stats["mode"] == "incremental" and p.stats["bodies_kept"] == 1
    p.edit(par + 1, par + 2, "")
    check_same(p, config)
    for needle in (b"  if $fallbackresource {", b"    if $port {"):
        line_end = data.index(b"\n", data.index(needle))
        seen: set = set()
        _type_and_delete(p, config, line_end, "\n  notice('x', [1, {a => 2}])", seen)
        assert ("plain", True) in seen and ("plain", False) not in seen, seen
    assert p.data == data


BASE_EPP = """<%- | String $name, Optional[Integer] $port = undef | -%>
Hello <%= $name %>!
<% if $port { -%>
port <%= $port %>
<% } else { -%>
no port
<% } -%>
<% [1, 2].each |$i| { %><%= $i %> <% } %>
"""


@settings(
    max_examples=int(os.environ.get("PUPPET_XPP_HYPOTHESIS_EXAMPLES", "150")) // 3,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.lists(
        st.tuples(st.floats(0, 1), st.integers(0, 6), st.sampled_from(PIECES + ["<%", "%>", "<%=", "-%>"])),
        min_size=1,
        max_size=10,
    )
)
def test_template_random_edits_equal_full_parse(edits):
    config = CheckConfig(file="t.epp", epp=True)
    p = IncrementalParser(BASE_EPP, config)
    p.update()
    for where, dellen, piece in edits:
        n = len(p.data)
        a = int(where * n)
        a = _char_start(p.data, a)
        b = min(n, a + dellen)
        b = _char_start(p.data, b)
        p.edit(a, b, piece)
        check_same(p, config)


@pytest.mark.corpus
def test_corpus_templates_random_edits():
    from tests.conformance.corpus import corpus_files

    files = corpus_files("epp")
    if not files:
        pytest.skip("corpus not installed")
    rnd = random.Random(5)
    for path in rnd.sample(files, min(6, len(files))):
        text = open(path, encoding="utf-8").read()
        config = CheckConfig(file=path, epp=True)
        p = IncrementalParser(text, config)
        p.update()
        _random_edits(p, config, rnd, 8)


def _steps(p, config, at, piece):
    """Type piece at byte `at` character by character, then delete it again, checking every step
    against a full parse; yields the incremental parser's stats after each step."""
    for i, ch in enumerate(piece):
        p.edit(at + i, at + i, ch)
        check_same(p, config)
        yield dict(p.stats)
    for i in range(len(piece) - 1, -1, -1):
        p.edit(at + i, at + i + 1, "")
        check_same(p, config)
        yield dict(p.stats)


def _resources(n: int) -> str:
    """n file resources of three lines each, indented as a body's statements."""
    return "".join(
        f"  file {{ '/tmp/f{i}':\n    ensure => file,\n    mode   => '0644',\n  }}\n" for i in range(n)
    )


def _nested_one_statement_bodies() -> tuple[str, int]:
    """A class whose first statement nests two bodies of one statement each (no statement list of
    their own), then enough statements that an error at the end of the file lies far after the
    change; and the offset of the end of the innermost statement (where a statement is typed)."""
    rest = _resources(60)
    text = (
        "class c (String $v = '1') {\n  if $a {\n    if (versioncmp($v, '4.0.0') < 0) {\n"
        '      fail("too old: ${v}")\n    }\n  }\n' + rest + "}\n"
    )
    return text, text.index('${v}")') + len('${v}")')


def test_brace_typed_in_a_one_statement_body_reuses_the_plain_parse():
    """`[1, {` typed after the only statement of an `if` nested in another: the hash's `{` takes the
    inner body's `}`, so the text is broken to its end.  The plain parse resumes at the class body's
    boundary before the outer `if` (a body of one statement is no list of its own) and so builds the
    `if` headers anew on every keystroke; equal to the last keystroke's, its Program is reused (stats
    "reused"), and the next keystroke runs the plain parse first instead of the class body's list
    over the rest of the file (stats "lists_tried" 0).  Every step equals a full parse."""
    text, at = _nested_one_statement_bodies()
    config = CheckConfig(file="c.pp")
    p = IncrementalParser(text, config)
    p.update()
    piece = "\n      notice('x', [1, {a => 2}])"
    typed = list(_steps(p, config, at, piece))[: len(piece)]
    plain_first = [stats.get("lists_tried") for stats in typed if stats.get("reused")]
    # reused from `a` to `2` (after `{` typed, before the `}` that closes the hash)
    assert plain_first == [0] * 6, plain_first
    assert p.data.decode() == text


def test_an_analysis_leaves_no_cyclic_garbage():
    """Typing (broken and repaired, at the top level and in bodies) and validating leave nothing
    that only the cyclic GC can free: what an update replaces goes by reference counting (a closure
    that called itself kept each old validation cache and checker in a cycle, and the language
    server's keystrokes paid for the GC's full passes over them)."""
    import gc

    text, at = _nested_one_statement_bodies()
    config = CheckConfig(file="c.pp")
    p = IncrementalParser(text, config)
    p.update()
    p.validation_diagnostics()
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        for where in (at, len(text.encode()) - 2, 0):
            for i, ch in enumerate("\n  notice('x', [1, {a => 2}])"):
                p.edit(where + i, where + i, ch)
                p.update()
                p.validation_diagnostics()
            p.edit(where, where + i + 1, "")
            p.update()
            p.validation_diagnostics()
        assert gc.collect() == 0
    finally:
        if was:
            gc.enable()


def test_recovery_scans_are_remembered_across_keystrokes():
    """A statement typed into a resource body leaves brackets open that no later token closes: each
    keystroke's recovery scans for a resume point from the error to the end of the file.  The scans
    of the next keystroke stop where they reach a token after the edit in a state an earlier scan
    recorded there (grammar.recovery.ScanMemo; hits counted), and every step equals a full parse."""
    text = "class c {\n" + _resources(81) + "}\n"
    config = CheckConfig(file="c.pp")
    p = IncrementalParser(text, config)
    p.update()
    at = text.index("file,") + len("file,")
    seen: set = set()
    _type_and_delete(p, config, at, "\n    notice('x', [1, {a => 2}])", seen)
    assert p.scan_memo.hits >= 40, p.scan_memo.hits
    assert p.data.decode() == text


def test_block_recovery_scans_go_on_from_the_brackets_counted_before():
    """resume_in_block counts the brackets open from the cut statement's start (or the body's `{`)
    to the error before it looks for a resume point: far into a long body, each scan of a keystroke
    walked the same tokens again (a quote mid-body of bench_completion's 292 KB class: 8 scans of
    ~16,000 tokens, 9 ms).  With a ScanMemo, a scan from the same token goes on from the last count
    recorded at or before its error (hits counted), with the same result as a scan without it; after
    tokens were replaced, only the counts recorded before them are taken."""
    from puppet_xpp.grammar.lexer import Lexer
    from puppet_xpp.grammar.recovery import ScanMemo, resume_in_block

    text = "class c {\n" + _resources(300) + "  notice('x', [1, {\n" + _resources(40) + "}\n"
    data = text.encode()
    toks = Lexer(text).tokens()
    n = len(toks)
    lbrace = next(i for i, t in enumerate(toks) if t.type == "LBRACE")
    starts = [i for i, t in enumerate(toks) if t.type == "NAME" and t.value == "file"]
    memo = ScanMemo()
    for err in starts[100::20]:
        assert resume_in_block(toks, data, lbrace, err, n, memo) == resume_in_block(
            toks, data, lbrace, err, n
        )
    assert memo.counts_taken >= len(starts[100::20]) - 1, memo.counts_taken
    # a `[` replaces a `,` at the 150th resource: the counts after it are dropped, the others taken
    at = next(i for i in range(starts[150], n) if toks[i].type == "COMMA")
    text2 = text[: toks[at].start_pos] + "[" + text[toks[at].end_pos :]
    toks2 = Lexer(text2).tokens()
    assert len(toks2) == n
    toks[at] = toks2[at]
    memo.spliced(toks, at, at + 1, 0)
    taken = memo.counts_taken
    for err in starts[100::20]:
        assert resume_in_block(toks, text2.encode(), lbrace, err, n, memo) == resume_in_block(
            toks, text2.encode(), lbrace, err, n
        )
    assert memo.counts_taken > taken


def test_plain_parse_takes_unchanged_bodies_whole():
    """A statement typed at the top level before a define, with a bracket left open, swallows the
    define (its body is parsed inside the unclosed call).  Each keystroke's plain parse meets the
    define body's `{` in the same LR state as the last keystroke's run, so it takes that run's
    statements whole instead of parsing them again (stats "bodies_taken"); every step equals a full
    parse."""
    text = "# a header comment\n# and another line\ndefine d (String $a = 'x') {\n" + _resources(60) + "}\n"
    config = CheckConfig(file="d.pp")
    p = IncrementalParser(text, config)
    p.update()
    at = text.index("\n")
    taken = [
        stats.get("bodies_taken", 0) for stats in _steps(p, config, at, "\n  notice('x', [1, {a => 2}])")
    ]
    assert taken.count(60) >= 20, taken
    assert p.data.decode() == text


@pytest.mark.parametrize("seed", [3, 4])
def test_positions_compacted_on_every_update(monkeypatch, seed):
    """Position marks of nodes no Program holds any more are dropped once there are many (after the
    marks of every node still held are applied): with that done on every update, random breaking
    edits inside bodies and their undoing still equal a full parse at every step."""
    monkeypatch.setattr(IncrementalParser, "COMPACT_AT", 0)
    text = "class outer {\n" + BASE.replace("\n", "\n  ") + "\n}\n$after = 1\n"
    config = CheckConfig(file="/env/modules/outer/manifests/init.pp", modulepath=("/env/modules",))
    p = IncrementalParser(text, config)
    p.update()
    rnd = random.Random(seed)
    compacted = 0
    for _ in range(6):
        at = _char_start(p.data, rnd.randrange(20, len(p.data) - 20))
        piece = rnd.choice(BREAKING + ["{", "(", "'", '"', "[1, {"])
        for stats in _steps(p, config, at, piece):
            compacted += bool(stats.get("positions_compacted"))
        assert p.data.decode() == text
    assert compacted > 50
