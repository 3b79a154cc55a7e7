"""Special files where the configuration and ``.xpp`` readers look (issue 26 item 6, the readers that are
not sources): a FIFO named ``environment.conf``, ``.gitignore``, ``.pdkignore``, ``.puppet-xpp.toml`` or a
module's ``metadata.json``, and a FIFO named ``*.xpp`` given to ``--verify`` and ``--dump``.  Each was
opened with a plain ``open()``, which blocks on a FIFO until a writer comes: the command never ended.
Through the one reading rule (xpp/sources.py) each command now ends, says what it could not read where it
reads a file the user named, and still does the rest of its work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "puppet_xpp"]
TIMEOUT = 60  # seconds; each command takes ~1 s on these trees


def run(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [*CLI, *argv], capture_output=True, text=True, timeout=TIMEOUT, cwd=cwd, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"puppet-xpp {' '.join(argv)} did not end within {TIMEOUT} s (blocked on a FIFO?)")


def environment(root: Path) -> Path:
    env = root / "production"
    (env / "manifests").mkdir(parents=True)
    (env / "manifests" / "site.pp").write_text("node default { notify { 'hello': } }\n")
    mod = env / "modules" / "demo" / "manifests"
    mod.mkdir(parents=True)
    (mod / "init.pp").write_text("class demo { file { '/tmp/demo': ensure => file } }\n")
    return env


@pytest.mark.parametrize(
    "fifo",
    ["environment.conf", ".gitignore", ".pdkignore", ".puppet-xpp.toml", "modules/demo/metadata.json"],
)
def test_compile_ends_with_a_fifo_for_a_configuration_file(tmp_path: Path, fifo: str) -> None:
    env = environment(tmp_path)
    os.mkfifo(env / fifo)
    result = run("--compile", str(env), "--puppet-version", "7.23")
    assert result.returncode == 0, result.stderr
    assert (env / ".xpp" / "modules" / "demo" / "manifests" / "init.xpp").is_file()


def test_validate_ends_with_a_fifo_environment_conf(tmp_path: Path) -> None:
    env = environment(tmp_path)
    os.mkfifo(env / "environment.conf")
    result = run("--validate", str(env / "modules" / "demo" / "manifests" / "init.pp"))
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("mode", ["--verify", "--dump"])
def test_xpp_readers_refuse_a_fifo(tmp_path: Path, mode: str) -> None:
    fifo = tmp_path / "x.xpp"
    os.mkfifo(fifo)
    result = run(mode, str(fifo))
    assert result.returncode != 0
    assert "FIFO" in result.stdout + result.stderr, (result.stdout, result.stderr)


def test_language_server_lint_rc_setting_naming_a_fifo(tmp_path: Path) -> None:
    """The server's ``lint.rcPath`` setting naming a FIFO: lint's configuration is read by the one rule
    (puppet-lint's defaults), where a plain ``open()`` blocked the lint of every document."""
    fifo = tmp_path / "lint.rc"
    os.mkfifo(fifo)
    code = (
        "import sys\n"
        "from puppet_xpp.server.analysis.lint import config_for\n"
        "from puppet_xpp.server.analysis.workspace import LintSettings\n"
        "cfg = config_for(sys.argv[1], LintSettings(rc_path=sys.argv[2]))\n"
        "print(sorted(cfg.enabled) == sorted(config_for(None, LintSettings()).enabled))\n"
    )
    try:
        result = subprocess.run(
            [sys.executable, "-c", code, str(tmp_path / "init.pp"), str(fifo)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("reading lint.rcPath that names a FIFO did not end")
    assert result.stdout.strip() == "True", result.stderr


def test_compile_on_a_terminal_ends_with_a_fifo_source(tmp_path: Path) -> None:
    """On a terminal ``--compile`` prints each diagnostic's source line with a caret: it read the source
    for that with a plain ``open()``, which blocked on a FIFO named ``*.pp`` (refused, and so reported,
    by the compile itself). The caret lines now read through the one rule too."""
    import pty

    env = environment(tmp_path)
    os.mkfifo(env / "modules" / "demo" / "manifests" / "pipe.pp")
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            [*CLI, "--compile", str(env), "--puppet-version", "8"],
            stdin=subprocess.DEVNULL,
            stdout=follower,
            stderr=follower,
        )
        os.close(follower)
        output = b""
        try:
            process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            pytest.fail("--compile on a terminal did not end with a FIFO among the sources")
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
    finally:
        os.close(leader)
    assert b"a FIFO, not a regular file" in output, output[-2000:]
