"""The optional C reader ``xpp._fastload`` is built, configured and what ``xpp.pcore.loads`` uses for msgpack
bytes (non-bytes input behaves as without it; PUPPET_XPP_PURE_PYTHON=1 turns it off), and the strict
equality ``same`` the other C reader tests rely on sees sharing and exact types.

Apart from the reader's rules (tests/test_fastload_rules.py) and the corpus and fuzz comparisons
(tests/test_fastload_corpus.py): this is the wiring, not what the reader reads.
"""

from __future__ import annotations

import os
import subprocess
import sys

from puppet_xpp.grammar import ast
from puppet_xpp.xpp import pcore
from tests.fastload_helpers import require_extension, same

require_extension()


def test_same_sees_sharing_and_exact_types():
    loc = ast.make_locator("$a", "x.pp")
    a = ast.Program(loc, ast.Nop(loc, 0, 1), [])
    b = ast.Program(loc, ast.Nop(ast.make_locator("$a", "x.pp"), 0, 1), [])
    assert a == b and same(a, a) and not same(a, b)
    nan = float("nan")
    assert not same([1], [True]) and not same([nan], [-nan]) and same([nan, nan], [nan, nan])
    shared = []
    assert not same([shared, shared], [[], []]) and not same({"a": 1, "b": 2}, {"b": 2, "a": 1})


# ------------------------------------------------------------------------------------------------------
# the extension is what loads() uses


def test_loads_uses_the_extension():
    assert pcore.MSGPACK_LOADER.startswith("C")
    program = ast.Program(ast.make_locator("$a", "x.pp"), None, [])
    data = pcore.dumps(program)
    calls = []
    real = pcore.C_LOAD

    def spy(d, budget):
        calls.append(d)
        assert budget == pcore.base.work_budget(len(d))
        return real(d, budget)

    old = pcore.C_LOAD
    pcore.C_LOAD = spy
    try:
        assert pcore.loads(data) == program
    finally:
        pcore.C_LOAD = old
    assert calls == [data]


def test_non_bytes_input_behaves_as_without_the_extension():
    def outcome(x):
        try:
            return ("value", pcore.loads(x))
        except Exception as e:
            return (type(e).__name__, str(e))

    for x in (
        "abc",
        b"\xc0",
        bytearray(b"\xa1a"),
        memoryview(b"\xc0\xc2")[::2],
        memoryview(b"\xc3"),
        12,
        None,
    ):
        with_c = outcome(x)
        old = pcore.C_LOAD
        pcore.C_LOAD = None
        try:
            without = outcome(x)
        finally:
            pcore.C_LOAD = old
        assert with_c == without, x


def test_pure_python_switch():
    code = (
        "from puppet_xpp.xpp import pcore\n"
        "from puppet_xpp.grammar import ast\n"
        "p = ast.Program(ast.make_locator('$a', 'x.pp'), None, [])\n"
        "assert pcore.loads(pcore.dumps(p)) == p\n"
        "print(pcore.MSGPACK_LOADER, pcore.C_LOAD)"
    )
    for env, want in (({"PUPPET_XPP_PURE_PYTHON": "1"}, "Python None"), ({}, "C (xpp._fastload)")):
        e = {k: v for k, v in os.environ.items() if k != "PUPPET_XPP_PURE_PYTHON"}
        e.update(env)
        out = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, check=True)
        assert out.stdout.startswith(want), out.stdout
