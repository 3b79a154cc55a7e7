"""``puppet-xpp COMMAND ...``: the subcommands, the ``--COMMAND`` aliases and the help screens.

Every command is run as a whole process, both ways (``puppet-xpp validate`` and ``puppet-xpp --validate``),
and held to the real tool where there is one: Puppet's diagnostics (the oracle), ``puppet parser dump``,
puppet-lint 3.0.1, a language-server handshake over stdio and TCP.  The names of the commands are the
issue's (28), written here, not read from the code under test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conformance import puppet_lint

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ["validate", "lint", "compile", "dump", "verify", "references", "runtime-path", "serve"]
FLAG_COMMANDS = [c for c in COMMANDS if c != "serve"]


def run(*args: str, cwd: Path | None = None, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """``puppet-xpp ARGS`` as a process (this checkout's, with this Python)."""
    return subprocess.run(
        [sys.executable, "-m", "puppet_xpp", *args],
        cwd=cwd or ROOT,
        capture_output=True,
        text=True,
        input=None if stdin is None else stdin.decode(),
        timeout=300,
    )


# ---------------------------------------------------------------------------------------------- help


def test_overview_lists_every_command() -> None:
    proc = run("--help")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert text.startswith("usage: puppet-xpp ")
    listed = re.findall(r"^    (\S+)\s", text.split("\ncommands:\n", 1)[1], re.MULTILINE)
    assert set(COMMANDS) <= set(listed)
    # the language server's options stay on the command-less line
    assert "--stdio" in text and "--tcp HOST:PORT" in text


@pytest.mark.parametrize(
    "argv",
    [[c, "--help"] for c in COMMANDS] + [[f"--{c}", "--help"] for c in FLAG_COMMANDS] + [["lint", "-h"]],
    ids=lambda argv: " ".join(argv),
)
def test_every_help_in_one_plain_style(argv: list[str]) -> None:
    """Each help is argparse's (usage line, options, the command's group) with no reStructuredText
    markup (``--lint --help`` printed its docstring's ``literals`` and :mod:`roles`)."""
    proc = run(*argv)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert text.startswith(f"usage: puppet-xpp {argv[0]} ")
    assert "\noptions:\n  -h, --help" in text
    assert "`" not in text  # no ``literal``, `interpreted` or :role:`target`
    assert not re.search(r"\S::$", text, re.MULTILINE)  # no literal-block marker


def test_unknown_command_and_command_not_first() -> None:
    proc = run("valdate", "x.pp")
    assert proc.returncode == 2
    assert "invalid choice: 'valdate'" in proc.stderr and "'validate'" in proc.stderr
    proc = run("-v", "validate", "x.pp")
    assert proc.returncode == 2 and "the command comes first" in proc.stderr


# ------------------------------------------------------------------------------------------ commands

GOOD = "class good {\n  notice('hello')\n}\n"
BAD = "class bad {\n  $x = {'a' => 1, 'a' => 2}\n  notice($x\n}\n"


def test_validate_both_ways_as_puppet(tmp_path: Path, oracle) -> None:
    good, bad = tmp_path / "good.pp", tmp_path / "bad.pp"
    good.write_text(GOOD)
    bad.write_text(BAD)
    sub = run("validate", "--format", "json", "--puppet-version", "7.23", str(bad), str(good))
    flag = run("--validate", str(bad), "--format", "json", "--puppet-version", "7.23", str(good))
    assert (sub.returncode, sub.stdout, sub.stderr) == (flag.returncode, flag.stdout, flag.stderr)
    assert sub.returncode == 1
    items = [json.loads(line) for line in sub.stdout.splitlines()]
    assert [Path(i["file"]).name for i in items] == ["bad.pp", "good.pp"]
    want = oracle.request("validate", file=str(bad))["result"]
    got = [(d["severity"], d["code"], d["line"], d["column"]) for d in items[0]["diagnostics"]]
    assert got[0] == (want[0]["severity"], want[0]["code"], want[0]["line"], want[0]["pos"])
    assert items[1]["diagnostics"] == []


@pytest.mark.skipif(
    not puppet_lint.available() and not os.environ.get("CI"), reason="puppet-lint not installed"
)
@pytest.mark.parametrize("args", [["foo"], ["--fix", "foo"], ["--only-checks", "trailing_whitespace", "foo"]])
def test_lint_both_ways_as_puppet_lint(args: list[str]) -> None:
    files = {
        "foo/manifests/init.pp": 'class foo {\n  $x = "a"  \n  file { bar:\n    mode => 644,\n  }\n}\n',
        "foo/manifests/clean.pp": "# doc\nclass foo::clean {\n  notice('hello')\n}\n",
    }
    theirs = puppet_lint.run_puppet_lint(files, args)
    for command in ("lint", "--lint"):
        ours = puppet_lint.run_in_scratch(files, [sys.executable, "-m", "puppet_xpp", command, *args])
        assert (ours["status"], ours["stdout"], ours["stderr"]) == (
            theirs["status"],
            theirs["stdout"],
            theirs["stderr"],
        )
        assert ours["files"] == theirs["files"]


@pytest.mark.skipif(
    shutil.which("puppet") is None and not os.environ.get("CI"), reason="puppet not installed"
)
def test_dump_both_ways_as_puppet_parser_dump(tmp_path: Path) -> None:
    from tests.test_cli_dump import puppet_dump

    source = tmp_path / "site.pp"
    source.write_text(GOOD + "include good\n")
    theirs = puppet_dump("--format", "pn", str(source), tmp=tmp_path)
    for command in ("dump", "--dump"):
        ours = run(command, "--format", "pn", str(source))
        assert (ours.returncode, ours.stdout) == (theirs.returncode, theirs.stdout)


def test_compile_and_verify_both_ways(tmp_path: Path) -> None:
    source = tmp_path / "init.pp"
    source.write_text(GOOD)
    outputs = []
    for command in ("compile", "--compile"):
        out = tmp_path / f"{command.strip('-')}.xpp"
        proc = run(command, str(source), "-o", str(out), "--puppet-version", "7.23")
        assert proc.returncode == 0, proc.stderr
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    for command in ("verify", "--verify"):
        proc = run(command, str(tmp_path / "compile.xpp"))
        assert proc.returncode == 0 and proc.stdout.startswith(f"{tmp_path / 'compile.xpp'}: OK")
    broken = tmp_path / "broken.xpp"
    broken.write_bytes(outputs[0][:-10])
    for command in ("verify", "--verify"):
        assert run(command, str(broken)).returncode == 1


def test_references_both_ways(tmp_path: Path) -> None:
    manifests = tmp_path / "modules" / "good" / "manifests"
    manifests.mkdir(parents=True)
    (manifests / "init.pp").write_text(GOOD)
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "site.pp").write_text("node default {\n  include good\n}\n")
    sub = run("references", "good", str(tmp_path), "--callers")
    flag = run("--references", "good", "--callers", str(tmp_path))
    assert (sub.returncode, sub.stdout) == (flag.returncode, flag.stdout)
    assert sub.returncode == 0
    assert re.search(r"manifests/site\.pp:2:11: ", sub.stdout), sub.stdout  # `good` after `include `


def test_runtime_path_both_ways() -> None:
    """The runtime module's directory (issue 27), printed alone on its line: its Forge metadata and the
    file Puppet is started with are there."""
    sub, flag = run("runtime-path"), run("--runtime-path")
    assert (sub.returncode, sub.stdout) == (flag.returncode, flag.stdout) == (0, sub.stdout)
    directory = Path(sub.stdout.rstrip("\n"))
    assert json.loads((directory / "metadata.json").read_text())["name"].endswith("-xpp")
    assert (directory / "lib" / "puppet_x" / "xpp" / "boot.rb").is_file()


# ------------------------------------------------------------------------------------- the server


def frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def read_frame(read) -> dict[str, object]:
    """One LSP message from ``read(n)`` (header lines, then the body)."""
    header = b""
    while not header.endswith(b"\r\n\r\n"):
        chunk = read(1)
        assert chunk, f"the server closed the stream (header so far: {header!r})"
        header += chunk
    length = int(re.search(rb"Content-Length: (\d+)", header).group(1))
    body = b""
    while len(body) < length:
        chunk = read(length - len(body))
        assert chunk
        body += chunk
    return json.loads(body)


HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"processId": None, "rootUri": None, "capabilities": {}},
    },
    {"jsonrpc": "2.0", "method": "initialized", "params": {}},
    {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
    {"jsonrpc": "2.0", "method": "exit"},
]


@pytest.mark.parametrize("argv", [[], ["serve"], ["serve", "--stdio"], ["--stdio"]], ids=repr)
def test_language_server_on_stdio(argv: list[str]) -> None:
    """No arguments still start the language server on stdio (editors rely on it), as ``serve`` does."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "puppet_xpp", *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(frame(HANDSHAKE[0]))
        proc.stdin.flush()
        answer = read_frame(proc.stdout.read)
        assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "puppet-xpp"
        for message in HANDSHAKE[1:]:
            proc.stdin.write(frame(message))
        proc.stdin.flush()
        assert read_frame(proc.stdout.read) == {"jsonrpc": "2.0", "id": 2, "result": None}
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_language_server_on_tcp() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "puppet_xpp", "serve", "--tcp", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                connection = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "the server did not listen"
                time.sleep(0.1)
        with connection:
            connection.sendall(frame(HANDSHAKE[0]))
            answer = read_frame(connection.recv)
            assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "puppet-xpp"
            connection.sendall(b"".join(frame(m) for m in HANDSHAKE[1:]))
            assert read_frame(connection.recv)["id"] == 2
    finally:
        proc.kill()
        proc.wait()


def test_in_process_call_of_both_forms(tmp_path: Path) -> None:
    """``main(argv)``: the same status and output whichever way the command is named (callers in the
    tests and scripts use the flag form)."""
    import io

    from puppet_xpp.server.cli.main import main

    bad = tmp_path / "bad.pp"
    bad.write_text(BAD)
    results = []
    for argv in (["validate", str(bad)], ["--validate", str(bad)], [str(bad), "--validate"]):
        out, err = io.StringIO(), io.StringIO()
        results.append((main(argv, out, err), out.getvalue(), err.getvalue()))
    assert results[0] == results[1] == results[2]
    assert results[0][0] == 1 and "bad.pp" in results[0][1]
