"""Integer literals outside Puppet's range (issue 26 item 8).

Puppet's lexer makes a Ruby Integer of any size and its validator reports NUMERIC_OVERFLOW with the value in
hexadecimal.  Ours: the same diagnostic (Puppet 7.23's, asked through the oracle) for a literal of any
length, also beyond CPython's 4,300-digit limit; and a manifest holding one still gets its ``.xpp``
(``--compile FILE -o``, ``--compile ENVDIR``, the language server's save): exit 1, the error recorded, the
literal stored saturated (grammar.numbers).  That the runtime replays the error as Puppet reports it is
tests/runtime/test_numbers_runtime.py.
"""

from __future__ import annotations

import io
import os

import pytest

from puppet_xpp.grammar import numbers
from puppet_xpp.server.cli.main import main as cli_main
from puppet_xpp.xpp import compile as xpp_compile
from puppet_xpp.xpp import verify
from puppet_xpp.xpp.result import read_xpp
from tests.test_validator import assert_same, ours

BIG = {
    "max + 1": "9223372036854775808",
    "2^64 - 1, hex": "0xFFFFFFFFFFFFFFFF",
    "octal": "01777777777777777777777",
    "4301 digits": "9" * 4301,
    "5000 digits": "1234567890" * 500,
    "5000 hex digits": "0x" + "f" * 5000,
}


@pytest.mark.parametrize("name", sorted(BIG))
def test_overflow_is_puppets_diagnostic(oracle, name):
    """Message (the value in hex), position and severity as Puppet 7.23 reports them."""
    src = f"$x = {BIG[name]}\nnotice(-{BIG[name]})\n"
    theirs = oracle.call("validate", source=src)
    assert [d["code"] for d in theirs] == ["NUMERIC_OVERFLOW", "NUMERIC_OVERFLOW"]
    assert_same(ours(src, {}), theirs, name)


def test_decimal_conversion_is_exact_at_every_length():
    import sys

    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        for digits in ("0", "7", "9" * 2999, "9" * 3000, "9" * 3001, "1" + "0" * 4300, "31415926535" * 999):
            assert numbers.decimal_int(digits) == int(digits)
    finally:
        sys.set_int_max_str_digits(old)


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    rc = cli_main(list(argv), out=out, err=err)
    return rc, out.getvalue(), err.getvalue()


def _assert_holds_the_errors(data, values):
    """A well-formed .xpp whose Program keeps every statement (saturated literals) and whose diagnostics are
    the NUMERIC_OVERFLOW errors."""
    assert verify.verify_bytes(data) == []
    program, diagnostics = read_xpp(data)
    assert program is not None
    assert [d["issue_code"] for d in diagnostics] == ["NUMERIC_OVERFLOW"] * len(values)
    got = [s.right_expr.value for s in program.body.statements]
    assert got == [numbers.MAX_INTEGER if v > 0 else numbers.MIN_INTEGER for v in values]


SOURCE = f"$a = 9223372036854775808\n$b = 0xFFFFFFFFFFFFFFFF\n$c = {'9' * 4400}\n"
VALUES = [1 << 63, (1 << 64) - 1, 10**4400 - 1]


def test_compile_file_writes_the_xpp_with_the_errors(tmp_path):
    src = tmp_path / "big.pp"
    src.write_text(SOURCE)
    out = tmp_path / "big.xpp"
    rc, stdout, stderr = _cli("--compile", str(src), "-o", str(out))
    assert rc == 1, stderr
    assert "Internal error" not in stdout + stderr
    assert stdout.count("resulted in a value outside of Puppet Integer max range") == 3
    _assert_holds_the_errors(out.read_bytes(), VALUES)


def test_compile_env_and_save_write_the_xpp_with_the_errors(tmp_path):
    env = tmp_path / "production"
    (env / "manifests").mkdir(parents=True)
    (env / "modules" / "m" / "manifests").mkdir(parents=True)
    site = env / "manifests" / "site.pp"
    site.write_text(SOURCE)
    init = env / "modules" / "m" / "manifests" / "init.pp"
    init.write_text("class m { $a = 9223372036854775808 }\n")
    rc, stdout, stderr = _cli("--compile", str(env))
    assert rc == 1, stdout + stderr
    assert "Internal error" not in stdout + stderr
    xpp = env / ".xpp" / "modules" / "environment" / "manifests" / "site.xpp"
    _assert_holds_the_errors(xpp.read_bytes(), VALUES)
    assert (env / ".xpp" / "modules" / "m" / "manifests" / "init.xpp").is_file()
    # the language server's .xpp on save (the same compile of one file)
    os.remove(xpp)
    out = xpp_compile.compile_saved(str(env), str(site), level=None, strict=None)
    assert out == str(xpp)
    _assert_holds_the_errors(xpp.read_bytes(), VALUES)


@pytest.mark.parametrize("name", ["4301 digits", "5000 digits", "5000 hex digits"])
def test_dump_prints_a_literal_of_any_length(oracle, name, tmp_path):
    """``--dump`` prints the literal's value whatever its length, as Puppet's ``parser dump`` does (it was
    "Internal error (ValueError): Exceeds the limit (4300 digits)"): the default JSON and PN."""
    import json
    import sys

    src = f"$x = {BIG[name]}\n"
    path = tmp_path / "big.pp"
    path.write_text(src)
    rc, out, err = _cli("--dump", str(path))
    assert rc == 0 and err == "", err
    rc_pn, out_pn, err_pn = _cli("--dump", "--format", "pn", str(path))
    assert rc_pn == 0 and err_pn == "", err_pn
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # the test reads both answers back (the oracle's JSON too)
    try:
        theirs = oracle.call("pn", source=src)
        assert json.loads(out) == theirs
        assert f" {int(BIG[name], 0)}" in out_pn  # PN holds the same value in decimal
    finally:
        sys.set_int_max_str_digits(old)
