"""Standard output and error that cannot be written (issue 26 item 9): every command exits 2.

A deploy reads exit 1 as "problems in the sources"; a log that could not be written (a full disk, here the
real /dev/full) is an operational failure: 2, whatever the command found, with Python's output buffered or
not (a buffered write fails only when flushed, possibly at the interpreter's exit, which would make it 120).
The command's work is still done (``--compile`` writes its ``.xpp`` files).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")

BAD = 'class foo($x, $x) {\n  $y = "a"   \n}\n'


@pytest.fixture()
def env(tmp_path):
    d = tmp_path / "production"
    (d / "manifests").mkdir(parents=True)
    (d / "manifests" / "site.pp").write_text(BAD)
    (d / "modules" / "m" / "manifests").mkdir(parents=True)
    (d / "modules" / "m" / "manifests" / "init.pp").write_text("class m { notice(1) }\n")
    return d


def _commands(env, tmp_path):
    site = str(env / "manifests" / "site.pp")
    xpp = str(tmp_path / "site.xpp")
    return {
        "compile ENVDIR": ["--compile", str(env)],
        "compile FILE -o": ["--compile", site, "-o", xpp],
        "compile FILE -o -": ["--compile", site, "-o", "-"],
        "validate": ["--validate", site],
        "lint": ["--lint", site],
        "dump": ["--dump", site],
        "verify": ["--verify", xpp],
        "references": ["--references", "m", str(env)],
        "version": ["--version"],
        "help": ["--help"],
        "runtime-path": ["runtime-path"],
    }


def _run(argv, stdout, stderr, buffered):
    environ = dict(os.environ, PYTHONPATH=ROOT)
    environ.pop("PYTHONUNBUFFERED", None)
    if not buffered:
        environ["PYTHONUNBUFFERED"] = "1"
    with open(stdout, "w") as out, open(stderr, "w") as err:
        done = subprocess.run(
            [sys.executable, "-m", "puppet_xpp", *argv], stdout=out, stderr=err, env=environ, timeout=120
        )
    return done.returncode


@pytest.mark.parametrize("buffered", [False, True], ids=["unbuffered", "buffered"])
def test_every_command_exits_2_when_its_output_cannot_be_written(env, tmp_path, buffered):
    commands = _commands(env, tmp_path)
    # the .xpp that verify reads, and what each command gives with its output written
    assert _run(commands["compile FILE -o"], os.devnull, os.devnull, buffered) == 1
    written = {name: _run(argv, os.devnull, os.devnull, buffered) for name, argv in commands.items()}
    found = dict.fromkeys(("compile ENVDIR", "compile FILE -o", "compile FILE -o -", "validate", "lint"), 1)
    assert written == {**dict.fromkeys(commands, 0), **found}  # problems in the sources: 1
    full = {name: _run(argv, "/dev/full", "/dev/full", buffered) for name, argv in commands.items()}
    assert full == dict.fromkeys(commands, 2)


def test_the_work_is_done_and_stderr_says_why(env, tmp_path):
    """Standard output full, standard error writable: the one line saying why; the .xpp tree is written."""
    err = tmp_path / "err.txt"
    assert _run(["--compile", str(env)], "/dev/full", str(err), True) == 2
    assert err.read_text() == "puppet-xpp: cannot write the standard output: No space left on device\n"
    assert (env / ".xpp" / "modules" / "environment" / "manifests" / "site.xpp").is_file()
    assert (env / ".xpp" / "modules" / "m" / "manifests" / "init.xpp").is_file()


def test_a_command_with_nothing_to_write_keeps_its_status(env, tmp_path):
    clean = tmp_path / "clean.pp"
    clean.write_text("notice(1)\n")
    assert _run(["--validate", str(clean)], "/dev/full", "/dev/full", True) == 0
