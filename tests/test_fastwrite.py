"""The C Pcore writer (xpp/_fastwrite.c) writes the same bytes as the Python writer
(xpp/pcore/write.py ``dumps_msgpack_python``), or leaves the value to it: on every corpus file, on
mutated sources, on shared and cyclic ASTs, ill-typed attributes and unusual values.  (What both write is
compared with Puppet's own serializer by tests/test_pcore_*.py, which go through ``dumps``: the C writer
when it is built.)"""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from typing import Any

import pytest

from puppet_xpp.grammar import ast
from puppet_xpp.grammar.parser import parse
from puppet_xpp.xpp.pcore import IncludedObject, PType, XppWriteError, write
from tests.conformance.corpus import corpus_files
from tests.pcore_helpers import build_class, build_regexp, build_two

pytestmark = pytest.mark.skipif(write._fast_dumps is None, reason="xpp._fastwrite is not built")


def _outcome(fn: Any, value: Any, check: bool) -> tuple[str, Any]:
    try:
        return ("bytes", fn(value, check))
    except XppWriteError as e:
        return ("error", str(e))


def assert_same(value: Any) -> None:
    """Both writers, checked and unchecked: the same bytes, or the same error."""
    for check in (True, False):
        python = _outcome(write.dumps_msgpack_python, value, check)
        fast = write._fast_dumps(value, check)  # type: ignore[misc]
        if fast is write.FAST_DECLINED:
            assert _outcome(write.dumps_msgpack, value, check) == python
        else:
            assert ("bytes", fast) == python
        assert _outcome(write.dumps_msgpack, value, check) == python


def _programs(paths: list[str]) -> list[Any]:
    out = []
    for path in paths:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            res = parse(f.read(), path)
        if res.program is not None:
            out.append(res.program)
    return out


@pytest.mark.timeout(600)
def test_every_corpus_file_is_written_the_same_by_the_c_writer() -> None:
    paths = corpus_files("pp")
    if not paths:
        pytest.skip("no corpus")
    programs = _programs(paths)
    assert len(programs) > 500
    taken = 0
    for program in programs:
        for check in (True, False):
            fast = write._fast_dumps(program, check)  # type: ignore[misc]
            assert fast is not write.FAST_DECLINED  # the parser's ASTs are the C writer's own work
            assert fast == write.dumps_msgpack_python(program, check), program.locator.file
            taken += 1
    assert taken == 2 * len(programs)


@pytest.mark.timeout(600)
def test_mutated_sources_are_written_the_same() -> None:
    paths = corpus_files("pp")
    if not paths:
        pytest.skip("no corpus")
    rng = random.Random(31)
    alphabet = "{}()[]$'\"\\,;=>|<-:%/\n \t#a1.\u00e9\udcff"
    written = 0
    for path in rng.sample(paths, min(150, len(paths))):
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
        for _ in range(4):
            chars = list(text)
            for _ in range(rng.randint(1, 6)):
                i = rng.randrange(len(chars) + 1)
                op = rng.random()
                if op < 0.4 and i < len(chars):
                    del chars[i]
                elif op < 0.8:
                    chars.insert(i, rng.choice(alphabet))
                elif i < len(chars):
                    chars[i] = rng.choice(alphabet)
            res = parse("".join(chars), path)
            if res.program is not None:
                assert_same(res.program)
                written += 1
    assert written > 100


def _retyped(program: Any, mutate: Any) -> Any:
    mutate(program)
    return program


def _first(program: Any, cls: type) -> Any:
    stack = [program]
    while stack:
        v = stack.pop()
        if isinstance(v, cls):
            return v
        if isinstance(v, ast.Node):
            stack.extend(getattr(v, a) for a in type(v)._wire)
        elif isinstance(v, list):
            stack.extend(v)
    raise AssertionError(f"no {cls.__name__}")


def _set(cls: type, attr: str, value: Any) -> Any:
    return lambda p: setattr(_first(p, cls), attr, value)


class Token(str):
    """A str subclass (as a lexer token might be): written as a plain string."""


class Count(int):
    pass


CASES = {
    "integer too big": lambda: _retyped(build_two()[1], _set(ast.LiteralInteger, "value", 1 << 63)),
    "integer smallest": lambda: _retyped(build_two()[1], _set(ast.LiteralInteger, "value", -(1 << 63))),
    "integer too small": lambda: _retyped(build_two()[1], _set(ast.LiteralInteger, "value", -(1 << 63) - 1)),
    "integer subclass": lambda: _retyped(build_two()[1], _set(ast.LiteralInteger, "value", Count(7))),
    "integer as bool": lambda: _retyped(build_two()[1], _set(ast.LiteralInteger, "value", True)),
    "string for integer": lambda: _retyped(build_two()[1], _set(ast.LiteralInteger, "value", "1")),
    "offset as string": lambda: _retyped(build_two()[1], _set(ast.LiteralInteger, "offset", "5")),
    "negative length": lambda: _retyped(build_two()[1], _set(ast.LiteralInteger, "length", -3)),
    "huge offset": lambda: _retyped(build_two()[1], _set(ast.LiteralInteger, "offset", 1 << 40)),
    "name subclass": lambda: _retyped(build_two()[1], _set(ast.QualifiedName, "value", Token("a"))),
    "lone surrogate": lambda: _retyped(build_two()[1], _set(ast.QualifiedName, "value", "a\ud800")),
    "escaped byte": lambda: _retyped(build_two()[1], _set(ast.QualifiedName, "value", "a\udcff")),
    "none for node": lambda: _retyped(build_two()[1], _set(ast.AssignmentExpression, "left_expr", None)),
    "list for node": lambda: _retyped(build_two()[1], _set(ast.AssignmentExpression, "right_expr", [])),
    "regexp source int": lambda: _retyped(build_regexp()[1], _set(ast.Regexp, "source", 1)),
    "definitions not a list": lambda: _retyped(build_class()[1], lambda p: setattr(p, "definitions", ())),
    "operator not in its enum": lambda: _retyped(
        build_two()[1], _set(ast.AssignmentExpression, "operator", "*=")
    ),
    "operator subclass": lambda: _retyped(
        build_two()[1], _set(ast.AssignmentExpression, "operator", Token("="))
    ),
    "statement not a node": lambda: _retyped(build_two()[1], lambda p: p.body.statements.append("$c")),
    "statement subclass of int": lambda: _retyped(
        build_two()[1], lambda p: p.body.statements.append(Count(1))
    ),
    "line index of strings": lambda: _retyped(
        build_two()[1], lambda p: setattr(p.locator, "line_index", ["0"])
    ),
    "line index none": lambda: _retyped(build_two()[1], lambda p: setattr(p.locator, "line_index", None)),
    "empty case values": lambda: _retyped(
        parse("case $x { 1: {} }", "c.pp").program, _set(ast.CaseOption, "values", [])
    ),
}
for _n in (0, 1, 31, 32, 255, 256, 65535, 65536):
    CASES[f"string of {_n}"] = lambda n=_n: _retyped(
        build_two()[1], _set(ast.QualifiedName, "value", "x" * n)
    )
for _f in (0.0, -0.0, 1.5, math.inf, -math.inf, math.nan, 1e300, 5e-324):
    CASES[f"float {_f}"] = lambda f=_f: _retyped(
        build_two()[1],
        lambda p: setattr(p.body.statements[0], "right_expr", ast.LiteralFloat(p.locator, 5, 1, f)),
    )
VALUES = {
    "ints": lambda: sorted(
        {base + step for base in (0, 127, 255, 4095, 65535, (1 << 32) - 1) for step in (0, 1)}
        | {-step - 1 for step in (0, 31, 32, 127, 128, 32767, 32768, (1 << 31) - 1, 1 << 31)}
        | {(1 << 63) - 1, -(1 << 63)}
    ),
    "dict": lambda: {"a": [1, 2], "b": {"c": None}},
    "ptype": lambda: PType("Pcore::StringType", [None]),
    "bad ptype": lambda: PType("Foo", []),
    "object": lambda: IncludedObject(PType("Pcore::ObjectType", [{"name": "X"}]), [1, "a"]),
    "shared list": lambda: (lambda lst: [lst, lst])([1, "x"]),
    "cycle": lambda: (lambda lst: (lst.append(lst), lst)[1])([1]),
    "strings again": lambda: ["a", "b", "a", "\u00e9" * 40, "\u00e9" * 40, ast.Regexp("x"), ast.Regexp("x")],
    "set": lambda: {1},
    "bytes": lambda: b"x",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_ill_typed_and_edge_asts_give_the_same_bytes_or_error(name: str) -> None:
    assert_same(CASES[name]())


@pytest.mark.parametrize("name", sorted(VALUES))
def test_other_values_give_the_same_bytes_or_error(name: str) -> None:
    assert_same(VALUES[name]())


def test_shared_and_cyclic_asts_give_the_same_error_or_bytes() -> None:
    from tests.test_pcore_shared_nodes import SHARED

    assert len(SHARED) > 6
    for make in SHARED.values():
        assert_same(make())


def test_pure_python_is_selectable() -> None:
    code = "from puppet_xpp.xpp.pcore import write; print(write.MSGPACK_WRITER)"
    env = dict(os.environ, PUPPET_XPP_PURE_PYTHON="1")
    pure = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert pure.stdout.strip() == "python"
    env.pop("PUPPET_XPP_PURE_PYTHON")
    fast = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert fast.stdout.strip() == "c"


def test_the_c_writer_checks_types_in_c() -> None:
    """The C writer checks every attribute's type itself: writing corpus files compiles none of the
    Python writer's checkers (which it called for every node before: a third of its time)."""
    paths = corpus_files("pp")[:40]
    if not paths:
        pytest.skip("no corpus")
    code = (
        "import sys\n"
        "from puppet_xpp.grammar.parser import parse\n"
        "from puppet_xpp.xpp.pcore import write\n"
        "from puppet_xpp.xpp.pcore.nodes import INFO\n"
        "for path in sys.argv[1:]:\n"
        "    program = parse(open(path, encoding='utf-8', errors='surrogateescape').read(), path).program\n"
        "    if program is not None:\n"
        "        assert write._fast_dumps(program, True) is not write.FAST_DECLINED, path\n"
        "print(sum('_deferred_checker' not in i.wchecks.__qualname__ for i in INFO.values()))\n"
    )
    run = subprocess.run([sys.executable, "-c", code, *paths], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "0"


@pytest.mark.timeout(600)
def test_whole_xpp_documents_are_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """What --compile writes (envelope, diagnostics, the Program in its IncludedObject) with and without
    the C writer, on every corpus file -- the C writer taking the whole document."""
    from puppet_xpp.xpp.compile import document

    paths = corpus_files("pp")
    if not paths:
        pytest.skip("no corpus")
    parsed = []
    for path in paths:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
        res = parse(text, path)
        parsed.append((res, path, text))
    fast = [document.write_program(r.program, r.diagnostics, r.locator, p, source=t) for r, p, t in parsed]
    declined = []
    real = write._fast_dumps

    def spy(value: Any, check: bool) -> Any:
        out = real(value, check)  # type: ignore[misc]
        if out is write.FAST_DECLINED:
            declined.append(value)
        return out

    monkeypatch.setattr(write, "_fast_dumps", spy)
    for r, p, t in parsed[:50]:
        document.write_program(r.program, r.diagnostics, r.locator, p, source=t)
    assert declined == []
    monkeypatch.setattr(write, "_fast_dumps", None)
    pure = [document.write_program(r.program, r.diagnostics, r.locator, p, source=t) for r, p, t in parsed]
    assert len(fast) == len(pure) > 500
    for (_, path, _), a, b in zip(parsed, fast, pure):
        assert a == b, path
