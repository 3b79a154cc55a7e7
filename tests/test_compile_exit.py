"""How the ``puppet-xpp --compile`` process ends (server/cli/compile.py ``_end_now``, issue 31 item 5).

The command ends as soon as everything it wrote is out, without the interpreter's teardown (a tenth of
the compiling process's CPU): its exit status and every output stay what they were, the atexit handlers
still run, and a program that calls the command in-process (a test, an editor plugin) goes on.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from puppet_xpp.server.cli import compile as cmd_compile

ROOT = str(Path(__file__).resolve().parents[1])

# imported at start-up (sitecustomize): an atexit handler, and an object released by the teardown
PROBE = """
import atexit, os

def _at_exit():
    with open(os.path.join(os.environ["PROBE_DIR"], "atexit"), "w") as f:
        f.write("ran")

atexit.register(_at_exit)


class _Released:
    # (what __del__ uses is bound now: by the time the teardown releases it, builtins are gone)
    def __del__(self, path=os.path.join(os.environ["PROBE_DIR"], "teardown"), os=os):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, b"ran")
        os.close(fd)


kept = _Released()
"""


SOURCES = {
    "manifests/site.pp": "node default {\n  include m\n}\n",
    "modules/m/manifests/init.pp": "class m {\n  notify { 'hi': }\n}\n",
}
BROKEN = {"modules/m/manifests/bad.pp": "class m::bad {\n  notify { 'x': \n"}


def environment(base: Path, broken: bool) -> Path:
    env = base / "env"
    for rel, text in {**SOURCES, **(BROKEN if broken else {})}.items():
        (env / rel).parent.mkdir(parents=True, exist_ok=True)
        (env / rel).write_text(text)
    return env


def run_command(tmp_path: Path, broken: bool, *extra: str) -> subprocess.CompletedProcess[str]:
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "sitecustomize.py").write_text(PROBE)
    env = environment(tmp_path, broken)
    return subprocess.run(
        [sys.executable, "-m", "puppet_xpp", "--compile", str(env), "--puppet-version", "8", *extra],
        env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(probe), ROOT]), PROBE_DIR=str(probe)),
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
    )


def test_the_command_ends_without_the_teardown_and_runs_the_atexit_handlers(tmp_path: Path) -> None:
    p = run_command(tmp_path, broken=False)
    assert p.returncode == 0, p.stderr
    assert "compiled 2" in p.stdout  # the summary line: written and flushed before the end
    assert (tmp_path / "env" / ".xpp" / "modules" / "m" / "manifests" / "init.xpp").is_file()
    assert (tmp_path / "probe" / "atexit").read_text() == "ran"
    assert not (tmp_path / "probe" / "teardown").exists()  # the interpreter's teardown was skipped


def test_the_status_and_the_diagnostics_are_kept(tmp_path: Path) -> None:
    p = run_command(tmp_path, True, "--report", str(tmp_path / "report.json"))
    assert p.returncode == 1, p.stderr
    assert "bad.pp" in p.stdout and "Error:" in p.stdout  # the broken file's diagnostic, then the summary
    assert "with errors 1" in p.stdout
    assert '"exit_code": 1' in (tmp_path / "report.json").read_text()
    assert not (tmp_path / "probe" / "teardown").exists()


def test_a_caller_in_process_goes_on(tmp_path: Path) -> None:
    env = environment(tmp_path, broken=False)
    out, err = io.StringIO(), io.StringIO()
    assert cmd_compile.main([str(env), "--puppet-version", "8"], out=out, err=err) == 0
    assert "compiled 2" in out.getvalue()  # (and this test is still running)
