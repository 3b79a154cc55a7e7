"""`puppet-xpp --dump` prints what `puppet parser dump` prints (whole processes, byte for byte)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conformance.corpus import corpus_files

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = [os.path.join(ROOT, "examples", "production", "manifests", "site.pp")]


def _files():
    files = corpus_files("pp")
    return EXAMPLES + files[:: max(1, len(files) // 25)]


def ours(*args):
    return subprocess.run(
        [sys.executable, "-m", "puppet_xpp", "--dump", *args], cwd=ROOT, capture_output=True, text=True
    )


def puppet_dump(*args, tmp):
    env = dict(os.environ)
    cmd = [
        "puppet",
        "parser",
        "dump",
        "--confdir",
        str(tmp / "c"),
        "--vardir",
        str(tmp / "v"),
        "--codedir",
        str(tmp / "code"),
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


needs_puppet = pytest.mark.skipif(
    shutil.which("puppet") is None and not os.environ.get("CI"), reason="puppet not installed"
)


@needs_puppet
@pytest.mark.parametrize("fmt", [["--format", "json"], ["--format", "pn"], ["--format", "pn", "--pretty"]])
def test_dump_equals_puppet_parser_dump(fmt, tmp_path):
    files = _files()
    want = puppet_dump(*fmt, *files, tmp=tmp_path)
    got = ours(*fmt, *files)
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout


@needs_puppet
def test_dump_pretty_json_byte_for_byte(tmp_path):
    """--pretty JSON is Ruby's pretty_generate: floats in Ruby's notation (1.0e+20), integers of any
    length (Python's json refuses over 4,300 digits), empty arrays and hashes, non-ASCII kept."""
    numbers = tmp_path / "numbers.pp"
    numbers.write_text(
        '$x = [1e20, 0.1, 1.5e-7, [], {}, "\\u00e9\\u{1F600} \u00e9", {"k" => [2.5]}]\n$y = '
        + "7" * 5000
        + "\n",
        encoding="utf-8",
    )
    files = [*EXAMPLES, str(numbers)]
    want = puppet_dump("--format", "json", "--pretty", *files, tmp=tmp_path)
    got = ours("--format", "json", "--pretty", *files)
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout


def test_dump_jsonl_lines(tmp_path, oracle):
    bad = tmp_path / "bad.pp"
    bad.write_text("class a {\n  $x = [1, 2\n}\n$y = )\n")
    good = EXAMPLES[0]
    got = ours("--format", "jsonl", good, str(bad))
    assert got.returncode == 1
    recs = [json.loads(line) for line in got.stdout.splitlines()]
    assert [r["file"] for r in recs] == [good, str(bad)]
    with open(good, encoding="utf-8") as f:
        assert recs[0]["pn"] == oracle.call("pn", source=f.read())
    assert recs[0]["diagnostics"] == []
    first = recs[1]["diagnostics"][0]
    want = oracle.request("pn", source=bad.read_text())
    assert (first["code"], first["line"], first["column"]) == (want["issue_code"], want["line"], want["pos"])
    assert first["message"] == want["error"]
    assert len(recs[1]["diagnostics"]) == 2  # the second, independent error is reported too
    assert set(first) == {"severity", "code", "message", "line", "column", "offset", "length"}


def test_dump_jsonl_integers_of_any_length(tmp_path, oracle):
    """A literal over Python's 4,300-digit limit is printed in full, as the PN Puppet gives."""
    big = tmp_path / "big.pp"
    big.write_text("$y = " + "7" * 5000 + "\n$z = 1e20\n")
    got = ours("--format", "jsonl", str(big))
    assert got.returncode == 0, got.stderr
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # to read the answer back (the oracle's JSON too)
    try:
        record = json.loads(got.stdout)
        assert record["diagnostics"] == []
        assert record["pn"] == oracle.call("pn", source=big.read_text())
    finally:
        sys.set_int_max_str_digits(limit)


def test_dump_errors_go_to_stderr_with_position(tmp_path):
    bad = tmp_path / "bad.pp"
    bad.write_text("notice(1,,)\n")
    got = ours("--format", "json", str(bad))
    assert got.returncode == 1 and got.stdout == ""
    assert f"(file: {bad}, line: 1, column: 10)" in got.stderr


@needs_puppet
def test_dump_stdin_equals_puppet_parser_dump_of_the_file(tmp_path):
    """``-`` reads standard input; ``--stdin-filename`` names it in the dump as Puppet names the file."""
    f = EXAMPLES[0]
    want = puppet_dump("--format", "pn", f, tmp=tmp_path)
    with open(f, "rb") as stdin:
        got = subprocess.run(
            [sys.executable, "-m", "puppet_xpp", "--dump", "-", "--format", "pn", "--stdin-filename", f],
            stdin=stdin,
            capture_output=True,
            text=True,
        )
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout


def test_dump_stdin_plan_rule_and_bad_encoding(tmp_path, oracle):
    """The plan rule applies as for the path named (tasks mode in a module's plans/); bytes that are not
    UTF-8 get Puppet's words."""
    source = "plan m::p() {\n  $a = 1\n}\n"
    got = subprocess.run(
        [
            sys.executable,
            "-m",
            "puppet_xpp",
            "--dump",
            "-",
            "--format",
            "jsonl",
            "--stdin-filename",
            "m/plans/p.pp",
        ],
        input=source.encode(),
        capture_output=True,
    )
    assert got.returncode == 0, got.stderr
    record = json.loads(got.stdout)
    assert record["file"] == "m/plans/p.pp" and record["pn"] == oracle.call("pn", source=source, tasks=True)
    bad = tmp_path / "bad.pp"
    bad.write_bytes(b"$a = '\xff'\n")
    want = oracle.request("validate", file=str(bad))
    got = subprocess.run(
        [sys.executable, "-m", "puppet_xpp", "--dump", "-"], input=bad.read_bytes(), capture_output=True
    )
    assert got.returncode == 1
    message = want["error"] if "error" in want else want["result"][0]["message"]
    assert got.stderr.decode() == f"Error: {message} (file: <stdin>)\n"
