"""Issue 25 items 1-4: what the runtime replays from an ``.xpp`` is what Puppet itself prints, byte for
byte (message, file, line, column, the error class that wraps it), on Puppet 7.23 and OpenVox 8, and
``puppet-xpp --validate`` prints Puppet's text for a syntax error at the end of the input.

The reference is always the same Puppet compiling the same catalog without the runtime's help
(``tests/runtime/catalog.rb``, one ``include`` per class), and for ``--validate`` the oracle.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.runtime.test_puppet_runtime import PUPPETS, REPO, compile_tree, other_logs, run, xpp_warnings

# class name -> source bytes of modules/demo/manifests/<name>.pp
CASES: dict[str, bytes] = {
    # item 1: Puppet's parser raises these with the file only (no line, no column)
    "eoi_class": b'class demo::eoi_class {\n  notify { "x": }\n',
    "eoi_array": b"class demo::eoi_array {\n  $x = [1, 2\n",
    "eoi_call": b"class demo::eoi_call {\n  $x = foo(1,\n",
    "eoi_else": b"class demo::eoi_else {\n  if $a { notice(1) } else {\n",
    # item 2: the message comes from the running Ruby's JSON library (and Oj where Puppet 7 finds it)
    "json": b'class demo::json {\n  $x = @(END:json)\n    { "a": 1,, }\n    | END\n  notice($x)\n}\n',
    # item 2: a pp heredoc logs the warnings of its text without a file, then raises
    "pp": b'class demo::pp {\n  notice("\\q")\n  $x = @(END:pp)\n    $b = "\\q"\n    $c = [1,\n    | END\n}\n',
    # a heredoc that passes its checker: the file is served and evaluates
    "json_ok": b'class demo::json_ok {\n  $x = @(END:json)\n    { "a": [1, 2] }\n    | END\n  notify { $x: }\n}\n',
    # item 3: Puppet raises the byte order mark without a file: the evaluator wraps it at the include
    "bom": b"\xef\xbb\xbfclass demo::bom {\n}\n",
    # item 4: not UTF-8: Ruby's ArgumentError, wrapped by the evaluator too
    "latin1": b'class demo::latin1 {\n  # caf\xe9\n  notify { "y": }\n}\n',
}


@pytest.fixture()
def demo_env(tmp_path):
    d = tmp_path / "envs" / "production"
    manifests = d / "modules" / "demo" / "manifests"
    manifests.mkdir(parents=True)
    (d / "manifests").mkdir()
    (d / "manifests" / "site.pp").write_text("")
    (manifests / "init.pp").write_text('class demo {\n  notify { "demo": }\n}\n')
    for name, data in CASES.items():
        (manifests / f"{name}.pp").write_bytes(data)
    return str(d)


@pytest.mark.parametrize("puppet", PUPPETS)
def test_errors_replayed_as_puppet_raises_them(puppet, demo_env, tmp_path):
    """Every case served from its .xpp (no fallback, no digest warning for the non-UTF-8 source) and
    the same catalog or error (message with its position, class, file, line, column) and the same
    warnings as Puppet's own parse."""
    compile_tree(demo_env, puppet)
    classes = [f"demo::{name}" for name in CASES]
    plain = run(puppet, demo_env, tmp_path, False, classes=classes)
    fast = run(puppet, demo_env, tmp_path, True, classes=classes)
    for c, a, b in zip(classes, plain["catalogs"], fast["catalogs"]):
        assert b == a, c
    errors = {c: a.get("error") for c, a in zip(classes, plain["catalogs"])}
    # the cases are what the issue describes (Puppet's side)
    for name in ("eoi_class", "eoi_array", "eoi_call", "eoi_else"):
        e = errors[f"demo::{name}"]
        assert e["message"].startswith("Syntax error at end of input (file: ") and e["line"] is None, e
    for name in ("bom", "latin1"):
        e = errors[f"demo::{name}"]
        assert "Error while evaluating a Function Call" in e["message"] and e["file"] is None, e
    assert "catalog" in plain["catalogs"][classes.index("demo::json_ok")]
    assert not xpp_warnings(fast), xpp_warnings(fast)
    assert fast["served"] == fast["loaded"] == plain["loaded"] >= len(CASES) and fast["parsed"] == 0
    assert other_logs(fast) == other_logs(plain)


@pytest.mark.parametrize("puppet", PUPPETS)
def test_non_utf8_source_stays_current(puppet, demo_env, tmp_path):
    """Item 4: the .xpp of a source that is not UTF-8 records the digest of its bytes, so the runtime
    (which hashes the bytes it reads) uses it; ``--compile`` run again finds it up to date."""
    compile_tree(demo_env, puppet)
    fast = run(puppet, demo_env, tmp_path, True, classes=["demo::latin1"])
    assert not xpp_warnings(fast) and fast["served"] == fast["loaded"] == 2 and fast["parsed"] == 0
    level = "7.23" if puppet == "7.23" else "8"
    again = [sys.executable, "-m", "puppet_xpp", "--compile", "--puppet-version", level, demo_env]
    subprocess.run(again, cwd=REPO, capture_output=True, text=True)
    out = subprocess.run(again, cwd=REPO, capture_output=True, text=True)
    assert ": compiled 0, up to date " in out.stdout + out.stderr, out.stdout + out.stderr


SOURCES = ['class demo {\n  notify { "x": }\n', "$x = [1, 2\n", "$x = foo(1,\n", "if $a { 1 } else {\n"]


@pytest.mark.parametrize("source", SOURCES)
def test_validate_end_of_input_has_no_position(source, oracle, tmp_path):
    """Item 1, ``--validate``: Puppet's message for a syntax error at the end of the input, with the file
    and no line or column (the oracle's answer has none)."""
    path = tmp_path / "x.pp"
    path.write_text(source)
    (want,) = [d for d in oracle.call("validate", source=source) if d["severity"] == "error"]
    assert want["line"] is None and want["pos"] is None
    out = subprocess.run(
        [sys.executable, "-m", "puppet_xpp", "--validate", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1
    assert out.stdout + out.stderr == f"Error: {want['message']} (file: {path})\n"
    assert os.path.exists(path)
