"""A command of the command line run as the program (server/cli/main.py ``_as_program``): it keeps the
code dataclasses generate for its command's classes in the start-up cache (server/startup_cache.py:
``keep_for_process``, ``cli-<command>-code.marshal``), and its collector runs at a batch's thresholds from
the start.

Checked against the program itself (``python -m puppet_xpp``, a process of its own): a first run writes
the command's file, a second run compiles nothing new (the file is not written again) and prints what a
run without the cache prints; a damaged file is not used and is written again; ``off`` writes nothing;
the methods of the classes made with the kept code are those Python's own ``exec`` makes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE = "class demo {\n  $other::x = 1\n  notify { 'x': }\n}\n"  # (a validation error: exit 1)


def run(cache: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PUPPET_XPP_STARTUP_CACHE=cache, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "puppet_xpp", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_second_run_uses_the_kept_code_and_answers_the_same(tmp_path: Path) -> None:
    (tmp_path / "init.pp").write_text(SOURCE)
    cache = tmp_path / "cache"
    plain = run("off", "--validate", "init.pp", cwd=tmp_path)
    assert not cache.exists()
    first = run(str(cache), "--validate", "init.pp", cwd=tmp_path)
    kept = cache / "cli-validate-code.marshal"
    assert kept.is_file(), first.stderr
    assert oct(kept.stat().st_mode & 0o777) == "0o600"
    before = kept.stat()
    second = run(str(cache), "--validate", "init.pp", cwd=tmp_path)
    after = kept.stat()
    # nothing new compiled: the file is not replaced (same inode, same modification time)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    for r in (first, second):
        assert (r.returncode, r.stdout, r.stderr) == (plain.returncode, plain.stdout, plain.stderr)
    assert (
        plain.returncode == 1
        and "Cannot assign to variables in other namespaces" in plain.stdout + plain.stderr
    )


def test_each_command_has_its_own_file(tmp_path: Path) -> None:
    (tmp_path / "init.pp").write_text(SOURCE)
    cache = tmp_path / "cache"
    run(str(cache), "--validate", "init.pp", cwd=tmp_path)
    run(str(cache), "--dump", "init.pp", cwd=tmp_path)
    assert sorted(p.name for p in cache.iterdir()) == ["cli-dump-code.marshal", "cli-validate-code.marshal"]


def test_a_damaged_file_is_not_used_and_is_written_again(tmp_path: Path) -> None:
    (tmp_path / "init.pp").write_text(SOURCE)
    cache = tmp_path / "cache"
    plain = run("off", "--validate", "init.pp", cwd=tmp_path)
    run(str(cache), "--validate", "init.pp", cwd=tmp_path)
    kept = cache / "cli-validate-code.marshal"
    data = bytearray(kept.read_bytes())
    data[-40:] = bytes(40)  # (a code object's bytes changed: the body's digest no longer matches)
    kept.write_bytes(bytes(data))
    r = run(str(cache), "--validate", "init.pp", cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (plain.returncode, plain.stdout, plain.stderr)
    assert kept.read_bytes() != bytes(data)  # written again, whole


def test_the_kept_methods_are_those_python_makes(tmp_path: Path) -> None:
    """The dataclasses of the compile's model, made through a warm cache, have the very code a plain
    import gives (compared by each method's code object)."""
    probe = r"""
import sys, types
from puppet_xpp.server.startup_cache import keep_for_process
if sys.argv[1] == "kept":
    keep_for_process("cli-probe-code.marshal")
import dataclasses
import puppet_xpp.xpp.compile.model as model
def describe(code):
    parts = [code.co_code.hex(), repr(code.co_names), repr(code.co_varnames), code.co_qualname,
             repr([describe(c) if isinstance(c, types.CodeType) else repr(c) for c in code.co_consts])]
    return "|".join(parts)
for name in sorted(vars(model)):
    cls = getattr(model, name)
    if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == model.__name__:
        for attr in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__"):
            fn = cls.__dict__.get(attr)
            if isinstance(fn, types.FunctionType):
                print(name, attr, describe(fn.__code__))
"""
    cache = tmp_path / "cache"
    env = dict(os.environ, PUPPET_XPP_STARTUP_CACHE=str(cache), PYTHONPATH=str(REPO))

    def describe(mode: str) -> str:
        return subprocess.run(
            [sys.executable, "-c", probe, mode], env=env, capture_output=True, text=True, check=True
        ).stdout

    plain = describe("plain")
    assert plain.count("__init__") >= 5  # (Options, Validation, Job, FileResult, EnvResult, ...)
    first = describe("kept")  # (compiled, and written at exit)
    assert (cache / "cli-probe-code.marshal").is_file()
    assert describe("kept") == first == plain  # (from the cache)


def test_off_writes_nothing_and_a_program_run_in_process_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "init.pp").write_text(SOURCE)
    r = run("off", "--validate", "init.pp", cwd=tmp_path)
    assert r.returncode == 1
    assert not (tmp_path / "off").exists()
    # main() called with an argument list (a test, an editor plugin) patches nothing in its process
    import dataclasses

    from puppet_xpp.server.cli.main import main

    assert (
        main(["--validate", str(tmp_path / "init.pp")], out=open(os.devnull, "w"), err=open(os.devnull, "w"))
        == 1
    )
    assert "exec" not in vars(dataclasses)


# runs the program as ``python -m puppet_xpp`` does (main of the process's own command line), counting the
# cyclic collector's collections by generation
COUNTING = r"""
import atexit, gc, runpy, sys
made = [0, 0, 0]
gc.callbacks.append(lambda phase, info: phase == "stop" and made.__setitem__(info["generation"], made[info["generation"]] + 1))
atexit.register(lambda: sys.stderr.write("collections %d %d %d\n" % tuple(made)))
sys.argv = ["puppet-xpp", *sys.argv[1:]]
runpy.run_module("puppet_xpp", run_name="__main__")
"""


def test_a_command_runs_few_collections(tmp_path: Path) -> None:
    """Its imports and a small file's work make no full collection and a few young ones (the default
    thresholds made ~26-40 young and 2-4 older ones, over objects that live as long as the process)."""
    (tmp_path / "init.pp").write_text(SOURCE)
    env = dict(os.environ, PUPPET_XPP_STARTUP_CACHE="off", PYTHONPATH=str(REPO))
    r = subprocess.run(
        [sys.executable, "-c", COUNTING, "--validate", "init.pp"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 1, r.stderr
    line = [x for x in r.stderr.splitlines() if x.startswith("collections ")][-1]
    young, _middle, full = map(int, line.split()[1:])
    # (the command line's own module is imported at the default thresholds, before main runs: a few young
    # collections and at most an older one there; ~26-40 young ones in all without the change)
    assert young <= 15 and full == 0, line
