"""The C accelerator (grammar/_accel.c: the parser's LR loop, the lexer's fast path) against the pure
Python paths (grammar/parser.py Driver.run, grammar/lexer.py Engine.code).

The accelerator is optional, so its truth is the pure path: on every corpus manifest and template, and on
damaged copies of them (truncations, byte flips, inserted tokens; seeded, time-bounded), both give the
same tokens (type, value, span, mapped positions), the same Program (every node's type, attributes,
offset and length, and the definitions), the same diagnostics (code, message, position, arguments), the
same ``block_recovery``; the parse that drops its
tokens (``keep_tokens=False``) and the checked result of ``grammar.check`` (parse + validate) too.  The
pure path itself is held to Puppet's parser by tests/test_parser_conformance.py.

PUPPET_XPP_MUTATION_SECONDS sets the time budget of the mutation test (default 20 s).
"""

from __future__ import annotations

import contextlib
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from puppet_xpp.grammar import ast, lexer, parser
from puppet_xpp.grammar.check import CheckConfig, check
from tests.conformance.corpus import corpus_files

pytestmark = pytest.mark.skipif(parser.ACCELERATOR == "Python", reason="grammar._accel is not built")

CORPUS = corpus_files("pp") + corpus_files("epp")


def _shape(program: Any) -> list[tuple[Any, ...]]:
    """The whole tree as a flat list (iterative: trees nest deeper than Python's recursion limit): per
    node in pre-order, its type and every attribute -- a node by its pre-order index, a list of nodes by
    theirs, any other value as it is; Program.definitions by the indices of the definitions."""
    index: dict[int, int] = {}
    order: list[Any] = []
    todo = [program]
    while todo:
        node = todo.pop()
        index[id(node)] = len(order)
        order.append(node)
        todo.extend(reversed(list(node.children())))

    def ref(v: Any) -> Any:
        if isinstance(v, ast.Node):
            return ("node", index.get(id(v), type(v).__name__))
        if isinstance(v, list):
            return [ref(x) for x in v]
        return v

    return [
        (type(node).__name__,) + tuple(ref(getattr(node, f)) for f in node._fields if f != "locator")
        for node in order
    ]


def _diagnostics(diags: list[Any]) -> list[tuple[Any, ...]]:
    return [(d.code, d.message, d.offset, d.length, d.severity, d.args, d.file) for d in diags]


def _both(monkeypatch: pytest.MonkeyPatch, fn: Any) -> tuple[Any, Any]:
    """fn() with the C paths, then with the pure ones (the lexer's and the parser's)."""
    c = fn()
    with monkeypatch.context() as m:
        m.setattr(parser, "ACCELERATOR", "Python")
        m.setattr(lexer, "SCAN", None)
        p = fn()
    return c, p


def _tokens(tokens: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (
            type(t).__name__,
            t.type,
            t.value,
            t.start_pos,
            t.end_pos,
            getattr(t, "concat_end_pos", None),
            getattr(t, "name_start_pos", None),
        )
        for t in tokens
    ]


def _result(res: parser.ParseResult) -> tuple[Any, ...]:
    program = None if res.program is None else _shape(res.program)
    return (program, _diagnostics(res.diagnostics), res.block_recovery, _tokens(res.tokens))


def _same_parse(monkeypatch: pytest.MonkeyPatch, text: str, file: str, keep_tokens: bool = True) -> None:
    c, p = _both(monkeypatch, lambda: _result(parser.parse(text, file, keep_tokens=keep_tokens)))
    assert c == p, file


def _read(path: str) -> str:
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "surrogateescape")


def test_the_c_loop_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """What is compared below really is two different loops: the C one is used by a plain parse (its
    ``run`` is called), and not once ACCELERATOR is "Python"."""
    calls = []

    class Spy:
        def __init__(self, machine: Any) -> None:
            self.machine = machine

        def run(self, *args: Any) -> Any:
            calls.append(1)
            return self.machine.run(*args)

    plan = parser.rule_plan(parser.Builder)
    object.__setattr__(plan, "machine", Spy(plan.machine))  # (a frozen dataclass)
    try:
        parser.parse("class a { notify { 'x': } }\n")
        assert calls
        calls.clear()
        monkeypatch.setattr(parser, "ACCELERATOR", "Python")
        parser.parse("class a { notify { 'x': } }\n")
        assert not calls
    finally:
        object.__setattr__(plan, "machine", plan.machine.machine)


@pytest.mark.parametrize(
    "env,want", [({"PUPPET_XPP_PURE_PYTHON": "1"}, "Python"), ({}, "C (grammar._accel)")]
)
def test_pure_python_by_environment(env: dict[str, str], want: str) -> None:
    environ = {k: v for k, v in os.environ.items() if k != "PUPPET_XPP_PURE_PYTHON"}
    out = subprocess.run(
        [sys.executable, "-c", "from puppet_xpp.grammar import parser; print(parser.ACCELERATOR)"],
        env=dict(environ, **env),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out == want


@pytest.mark.corpus
@pytest.mark.skipif(not CORPUS, reason="corpus not installed")
def test_corpus_same_tree_and_diagnostics(monkeypatch: pytest.MonkeyPatch) -> None:
    for path in CORPUS:
        _same_parse(monkeypatch, _read(path), path)


@pytest.mark.corpus
@pytest.mark.skipif(not CORPUS, reason="corpus not installed")
def test_corpus_checked_and_without_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """grammar.check (the entry of --validate, --compile and the language server's full parse) and the
    parse that drops its tokens, on every fifth corpus file."""
    for path in CORPUS[::5]:
        text = _read(path)
        _same_parse(monkeypatch, text, path, keep_tokens=False)
        config = CheckConfig(file=path, epp=path.endswith(".epp"))
        c, p = _both(monkeypatch, lambda: check(text, config))  # noqa: B023
        assert _diagnostics(c.diagnostics) == _diagnostics(p.diagnostics), path
        assert (c.program is None) == (p.program is None)
        if c.program is not None:
            assert _shape(c.program) == _shape(p.program), path


TOKENS = [
    "{", "}", "(", ")", "[", "]", ",", ";", "=>", "->", "~>", "=", "==", "!", "?", ":", "|", "@@", "<|", "|>",
    "$x", "'s'", '"d${x}"', "1", "class", "define", "if", "else", "case", "default", "node", "function",
    "Foo", "foo::bar", "/re/", "@(END)\ntext\nEND\n", "<%", "%>", "\n", " ", "#c\n", "and", "in", "unless",
    "é", "\u00a0", "\u3000", "日本", "\U0001f600", "\udcff", "'é\\''", '"ü"', "1é", "\u00a0[", "\u2002(",
]  # fmt: skip

# Unicode next to the tokens the C scan lexes: blanks of Ruby's [[:blank:]] before `[` and `(`, a letter
# after a number (no word boundary), non-ASCII string contents, a stray byte (surrogateescape)
UNICODE = [
    "$a = 1\n\u00a0[1, 2]\n",
    "notice\u3000(1)\n\u2002(2)\n",
    "$a = [1é]\n",
    "$s = 'é\\'x\\\\' $t = \"日本\" $u = 'a'\n",
    '$v = "\U0001f600" # \U0001f600 é\n$w = [\u00a0[1]]\n',
    "$x = '\udcff' $y = 1\n",
    "class é { }\n",
    "$z = 0x1é\n",
]


def _mutants(rng: random.Random, text: str) -> Iterator[str]:
    n = len(text)
    if n:
        yield text[: rng.randrange(n)]
        k = rng.randrange(n)
        yield text[:k] + chr(rng.randrange(32, 127)) + text[k + 1 :]
    for _ in range(3):
        k = rng.randrange(n + 1)
        yield text[:k] + rng.choice(TOKENS) + text[k:]
    if n > 2:
        a = rng.randrange(n)
        b = rng.randrange(a, min(n, a + 40) + 1)
        yield text[:a] + text[b:]


def test_mutated_inputs_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """Damaged copies of corpus files (and of a few snippets when the corpus is absent): syntax errors
    at the top level and inside bodies, lexer errors cutting the tokens, unbalanced brackets."""
    budget = float(os.environ.get("PUPPET_XPP_MUTATION_SECONDS", "20"))
    rng = random.Random(31)
    sources = [p for p in CORPUS if os.path.getsize(p) < 20_000] or []
    snippets = [
        "class a ($x = 1) { if $x { notify { 'a': } } else { include b } }\n",
        "$a = [1, 2, { 'k' => $b }]\nnode default { c { 'x': y => z } }\n",
        "<%- | $x | -%>\nhello <%= $x %> <% [1].each |$i| { %>x<% } %>\n",
    ]
    deadline = time.monotonic() + budget
    done = 0
    while time.monotonic() < deadline:
        if sources:
            path = rng.choice(sources)
            text = _read(path)
        else:
            path = rng.choice(["a.pp", "b.pp", "c.epp"])
            text = snippets[["a.pp", "b.pp", "c.epp"].index(path)]
        for mutant in _mutants(rng, text):
            _same_parse(monkeypatch, mutant, path)
            done += 1
    assert done > 50


@pytest.mark.parametrize("keep_tokens", [True, False])
@pytest.mark.parametrize("shape", ["stack", "tree"])
def test_too_deep_same(monkeypatch: pytest.MonkeyPatch, keep_tokens: bool, shape: str) -> None:
    """The LR stack limit (PARSE_TOO_DEEP at the token that passes it) and the tree depth limit (at the
    first node below it, fix_positions' walk order), with and without the tokens."""
    if shape == "stack":
        text = "$a = " + "[" * (parser.MAX_STACK + 10) + "]" * (parser.MAX_STACK + 10) + "\n"
    else:  # a flat operator chain: a shallow LR stack, a tree deeper than MAX_DEPTH
        text = "$a = [" + "1 + " * (parser.MAX_DEPTH + 10) + "1, 2]\nnotice($a)\n"
    _same_parse(monkeypatch, text, "deep.pp", keep_tokens)
    c = parser.parse(text, "deep.pp", keep_tokens=keep_tokens)
    assert [d.code for d in c.diagnostics] == ["PARSE_TOO_DEEP"]


def test_action_exception_propagates(monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception raised by a reduce action leaves the C loop as it leaves the Python loop."""

    class Boom(Exception):
        pass

    def boom(self: Any, c: list[Any]) -> Any:
        raise Boom

    class Failing(parser.Builder):
        pass

    Failing.assign = boom  # type: ignore[method-assign]
    for accelerator in ("C (grammar._accel)", "Python"):
        monkeypatch.setattr(parser, "ACCELERATOR", accelerator)
        locator = ast.make_locator("$a = 1\n", "x.pp")
        from puppet_xpp.grammar.lexer import Lexer

        with pytest.raises(Boom):
            parser.parse_tokens(Lexer("$a = 1\n").tokens(), Failing(locator, "x.pp"), 7, b"$a = 1\n")


def _snippets() -> list[tuple[str, bool, bool]]:
    """(source, epp, tasks) of every source snippet the parser's, lexer's, validator's and robustness
    tests ask Puppet about."""
    from tests import parser_cases, test_lexer_cases, test_parser_robustness, validator_cases

    out = [(s, False, False) for s in parser_cases.CASES + parser_cases.ERROR_CASES]
    out += [(s, False, True) for s in parser_cases.TASK_CASES]
    out += list(test_lexer_cases.CASES)
    out += [(case[0], False, False) for case in validator_cases.CASES]
    out += [(s, False, False) for s in UNICODE]
    robust = test_parser_robustness
    for name in ("GOOD", "BAD", "DEEP", "EPP_BROKEN", "MUTATION_PIECES"):
        for s in getattr(robust, name, []):
            if isinstance(s, str):
                out.append((s, name == "EPP_BROKEN", False))
    return out


def test_snippets_every_prefix_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every snippet, alone, inside a class body and followed by a statement, and cut after each of its
    characters (lexer errors cutting the tokens, unclosed bodies, errors right at the end)."""
    seen = set()
    for source, epp, tasks in _snippets():
        for text in (source, f"class k {{\n{source}\n}}\n$after = 1\n"):
            for k in range(len(text) + 1) if len(text) < 200 else (len(text),):
                cut = text[:k]
                if (cut, epp, tasks) in seen:
                    continue
                seen.add((cut, epp, tasks))
                c, p = _both(
                    monkeypatch,
                    lambda: _result(parser.parse(cut, "s.epp" if epp else "s.pp", tasks=tasks)),  # noqa: B023
                )
                assert c == p, (cut, epp, tasks)
    assert len(seen) > 1000


def _incremental_trace(files: list[str], seed: int) -> list[Any]:
    """What the incremental parser (its runs watched: statement lists recorded, bodies kept whole, runs
    stopped at old boundaries) gives for each file and after each of a few seeded edits: the Program, the
    parse and validation diagnostics, its mode."""
    from puppet_xpp.grammar.incremental import IncrementalParser

    rng = random.Random(seed)
    out: list[Any] = []
    for path in files:
        text = _read(path)
        config = CheckConfig(file=path)
        p = IncrementalParser(text, config)
        for k in range(6):
            if k:
                a = rng.randrange(len(p.data) + 1)
                b = min(len(p.data), a + rng.choice([0, 0, 1, 3]))
                p.edit(a, b, rng.choice(TOKENS))
            p.update()
            program = None if p.program is None else _shape(p.program)
            out.append(
                (
                    path,
                    k,
                    program,
                    _diagnostics(p.parse_diagnostics()),
                    _diagnostics(p.validation_diagnostics()),
                )
            )
            out.append(p.stats.get("mode"))
    return out


@pytest.mark.corpus
@pytest.mark.skipif(not CORPUS, reason="corpus not installed")
def test_incremental_runs_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """The language server's parser: its watched runs go through the C loop too (the watch called at the
    same events with the same stack), on every twentieth corpus manifest and seeded edits of it."""
    files = [p for p in corpus_files("pp")[::20] if os.path.getsize(p) < 30_000]
    c, p = _both(monkeypatch, lambda: _incremental_trace(files, 7))
    assert len(c) == len(p)
    for x, y in zip(c, p):
        assert x == y


@contextlib.contextmanager
def _spied_checker(
    monkeypatch: pytest.MonkeyPatch,
    file: str,
    c_walk: Any,
    index: dict[int, int],
    calls: list[tuple[Any, ...]],
) -> Iterator[Any]:
    """A checker of ``file`` whose walk is ``c_walk`` (None: the Python one) and whose checks log each
    call in ``calls``: the check's name, the node's place (``index``: id -> pre-order place) and the
    places of the path of ancestors it sees."""
    from puppet_xpp.grammar.check import checker
    from puppet_xpp.grammar.validator import walk

    table = walk.Walker._checks.__func__  # type: ignore[attr-defined]

    def logged(cls: Any) -> dict[type, Any]:
        def spy(fn: Any) -> Any:
            def call(self: Any, node: Any) -> None:
                calls.append((fn.__name__, index.get(id(node)), tuple(index.get(id(p)) for p in self.path)))
                fn(self, node)

            return call

        return {t: None if fn is None else spy(fn) for t, fn in table(cls).items()}

    with monkeypatch.context() as m:
        m.setattr(walk, "C_WALK", c_walk)
        m.setattr(walk.Walker, "_checks", classmethod(logged))
        yield checker(CheckConfig(file=file, modulepath=(os.path.dirname(os.path.dirname(file)),)))


def _walk_log(monkeypatch: pytest.MonkeyPatch, text: str, file: str, c_walk: Any) -> tuple[Any, ...]:
    """Every check the validator's walk calls (its name, the node's pre-order place and the path of
    ancestors it sees), then the diagnostics, with ``c_walk`` as the walk (None: the Python one)."""

    res = parser.parse(text, file)
    if res.program is None:
        return ()
    index: dict[int, int] = {}
    todo = [res.program]
    while todo:
        node = todo.pop()
        index[id(node)] = len(index)
        todo.extend(reversed(list(node.children())))
    calls: list[tuple[Any, ...]] = []
    with _spied_checker(monkeypatch, file, c_walk, index, calls) as checker:
        diagnostics = checker.validate(res.program)
    return tuple(calls), _diagnostics(diagnostics)


def test_validator_walk_same_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """grammar/_accel.c's walk makes the Python walk's calls in its order, each seeing the same path of
    ancestors, and gives the same diagnostics: on every corpus manifest and on damaged copies (recovered
    programs), and on a program nested beyond the recursion limit (both fall back to the walk without
    recursion)."""
    from puppet_xpp.grammar.validator import walk

    if walk.C_WALK is None:
        pytest.skip("grammar._accel has no walk")
    rng = random.Random(5)
    sources = [p for p in corpus_files("pp")] or []
    texts = [(_read(p), p) for p in sources]
    for path in rng.sample(sources, min(60, len(sources))):
        texts.extend((m, path) for m in _mutants(rng, _read(path)))
    texts.append(("$a = " + "[" * 600 + "]" * 600 + "\nnotice($a)\n", "/m/deep/manifests/init.pp"))
    texts.append(
        ("class a { $x = 1 $x = 2 }\n$y = $1x\nnotify { 'a': x => 1, x => 2 }\n", "/m/a/manifests/b.pp")
    )
    compared = 0
    for text, path in texts:
        c = _walk_log(monkeypatch, text, path, walk.C_WALK)
        p = _walk_log(monkeypatch, text, path, None)
        assert c == p, path
        compared += bool(c and c[0])
    assert compared > len(sources) // 2


def test_validator_walk_propagates_exceptions(monkeypatch: pytest.MonkeyPatch) -> None:
    """A check that raises (Abort: a heredoc's syntax checker failed) stops the C walk as it stops the
    Python one: the same diagnostics, nothing after it checked."""
    from puppet_xpp.grammar.validator import walk

    if walk.C_WALK is None:
        pytest.skip("grammar._accel has no walk")
    text = "$a = @(END:json)\n  {\n  | END\nnotify { 'x': }\n$b = 1\n"
    assert _walk_log(monkeypatch, text, "/m/a/manifests/init.pp", walk.C_WALK) == _walk_log(
        monkeypatch, text, "/m/a/manifests/init.pp", None
    )


def _part_log(
    monkeypatch: pytest.MonkeyPatch, text: str, file: str, c_walk: Any, seed: int
) -> tuple[Any, ...]:
    """What ``validate_part`` of a node chosen by ``seed`` (with ``stop``: the ids of some nodes below
    it) does with ``c_walk`` as the walk (None: the Python one): every check called (name, the node's
    pre-order place, the path it sees), the diagnostics, the abort, and the nodes stopped at with their
    paths."""
    res = parser.parse(text, file)
    if res.program is None:
        return ()
    index: dict[int, int] = {}
    parents: dict[int, list[Any]] = {id(res.program): []}
    todo = [res.program]
    while todo:
        node = todo.pop()
        index[id(node)] = len(index)
        for child in reversed(list(node.children())):
            parents[id(child)] = [*parents[id(node)], node]
            todo.append(child)
    rng = random.Random(seed)
    nodes = [n for n in _preorder(res.program)]
    top = rng.choice(nodes[: max(1, len(nodes) // 2)])
    below = [n for n in nodes if top in parents[id(n)]]
    stop = {id(n) for n in rng.sample(below, min(len(below), rng.randrange(4)))}
    calls: list[tuple[Any, ...]] = []
    with _spied_checker(monkeypatch, file, c_walk, index, calls) as checker:
        logged_diags, diags, abort, stopped = checker.validate_part(top, parents[id(top)], stop)
    return (
        tuple(calls),
        _diagnostics(logged_diags),
        _diagnostics(diags),
        None if abort is None else _diagnostics([abort]),
        [(index[id(n)], [index[id(p)] for p in path]) for n, path in stopped],
    )


def _preorder(root: Any) -> Iterator[Any]:
    todo = [root]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(reversed(list(node.children())))


def test_validate_part_same_in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Walker.validate_part`` (the incremental parser's validation of new statements) on the C walk with
    ``stop``/``stopped`` makes the Python loop's calls in its order with the same paths, and gives the
    same diagnostics, abort and stopped nodes with their paths: on a part of every tenth corpus manifest
    (and damaged copies), some nodes below it stopped at; the Python loop again beyond the recursion
    limit."""
    from puppet_xpp.grammar.validator import walk

    if walk.C_WALK is None or not walk.C_WALK_STOPS:
        pytest.skip("grammar._accel's walk takes no stop")
    rng = random.Random(11)
    sources = corpus_files("pp")[::10]
    texts = [(_read(p), p) for p in sources]
    for path in rng.sample(sources, min(20, len(sources))):
        texts.extend((m, path) for m in _mutants(rng, _read(path)))
    texts.append(("$a = " + "[" * 600 + "]" * 600 + "\nnotice($a)\n", "/m/deep/manifests/init.pp"))
    texts.append(("$a = @(END:json)\n  {\n  | END\nnotify { 'x': }\n$b = 1\n", "/m/a/manifests/init.pp"))
    stopped = 0
    for k, (text, path) in enumerate(texts):
        for seed in (k, k + 1000):
            c = _part_log(monkeypatch, text, path, walk.C_WALK, seed)
            p = _part_log(monkeypatch, text, path, None, seed)
            assert c == p, (path, seed)
            stopped += bool(c and c[-1])
    assert stopped > len(texts) // 4


def _fixed(monkeypatch: pytest.MonkeyPatch, text: str, seed: int, accelerator: str) -> tuple[Any, ...]:
    """``parser.fix_positions`` with a ``skip`` set on a parse of ``text`` whose nodes chosen by ``seed``
    lost their positions: every node's (class, offset, length) in pre-order after it, and the pre-order
    place of the node it returns (too deep), with the C walk or the Python one."""
    res = parser.parse(text, "x.pp")
    if res.program is None:
        return ()
    nodes = list(_preorder(res.program))
    rng = random.Random(seed)
    for n in rng.sample(nodes[1:], min(len(nodes) - 1, 40)):
        if hasattr(n, "offset"):
            n.offset = None
    skip = {id(n) for n in rng.sample(nodes, min(len(nodes), rng.randrange(1, 6)))}
    with monkeypatch.context() as m:
        m.setattr(parser, "ACCELERATOR", accelerator)
        deep = parser.fix_positions(res.program, skip, limit=rng.choice([parser.MAX_DEPTH, 5, 2]))
    place = {id(n): k for k, n in enumerate(nodes)}
    positions = [(type(n).__name__, getattr(n, "offset", 0), getattr(n, "length", 0)) for n in nodes]
    return tuple(positions), place.get(id(deep))


def test_fix_positions_skip_same_in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    """``fix_positions`` with ``skip`` (the incremental parser's kept statements) in C: the same
    positions given to the same nodes, the same nodes left alone, the same first node too deep as the
    Python walk, on every tenth corpus manifest with nodes' positions taken away at random."""
    if not parser._FIX_SKIP:
        pytest.skip("grammar._accel's fix_positions takes no skip")
    called = []
    real = parser._accel.fix_positions  # type: ignore[union-attr]
    monkeypatch.setattr(parser._accel, "fix_positions", lambda *a: called.append(len(a)) or real(*a))
    compared = 0
    for k, path in enumerate(corpus_files("pp")[::10]):
        text = _read(path)
        c = _fixed(monkeypatch, text, k, "C (grammar._accel)")
        p = _fixed(monkeypatch, text, k, "Python")
        assert c == p, path
        compared += bool(c)
    assert compared and called.count(4) == compared  # (the C walk with a skip set ran each time)
