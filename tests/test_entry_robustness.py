"""The command-line entry points under bad input, bad luck and attack (issues 10 and 11).

Each test names the item it pins; each failed before the change that made it pass.  The right answer
for a source Puppet rejects comes from the oracle (the real Puppet); the rest are properties of our own
commands (no hang, no escape, no leak, exit status, valid output)."""

from __future__ import annotations

import fcntl
import io
import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from puppet_xpp.server.cli import compile as cmd_compile
from puppet_xpp.server.cli import dump as cmd_dump
from puppet_xpp.server.cli import validate as cmd_validate
from puppet_xpp.xpp.result import read_xpp

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "puppet_xpp"]


def write(base: Path, files: dict) -> None:
    for rel, text in files.items():
        p = base / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text if isinstance(text, bytes) else text.encode())


def run(*argv, timeout=60, env=None, **kw):
    e = dict(os.environ, PYTHONPATH=str(REPO))
    e.update(env or {})
    return subprocess.run(
        [*CLI, *argv], capture_output=True, timeout=timeout, env=e, cwd=kw.get("cwd"), check=False
    )


def compile_(*argv):
    out, err = io.StringIO(), io.StringIO()
    rc = cmd_compile.main(list(argv), out=out, err=err)
    return rc, out.getvalue(), err.getvalue()


def validate(*argv):
    out = io.StringIO()
    rc = cmd_validate.main(list(argv), out=out)
    return rc, out.getvalue()


# ------------------------------------------------------------------------------------------------------
# issue 10 item 3: invalid UTF-8 is Puppet's error, in every mode and encoding

INVALID = {
    "lone.pp": b"'\xff",
    "in_string.pp": b"$x = 1\n$y = 'a\xffb'\n",
    "in_comment.pp": b"notice(1) # caf\xe9\n",
    "truncated.pp": b"notice('\xc3')\n",
}


@pytest.fixture(scope="module")
def puppet_invalid(oracle, tmp_path_factory):
    d = tmp_path_factory.mktemp("invalid")
    write(d, INVALID)
    answers = {}
    for name in INVALID:
        ans = oracle.request("validate", file=str(d / name))
        assert ans["ok"] is False, ans
        answers[name] = ans["error"]
    return d, answers


def test_invalid_utf8_validate_and_dump(puppet_invalid, capsys):
    d, answers = puppet_invalid
    for name, message in answers.items():
        f = str(d / name)
        rc, out = validate(f)
        assert rc == 1
        assert out == f"Error: {message} (file: {f})\n"  # Puppet gives no position
        rc, out = validate(f, "--format", "json")
        (diag,) = json.loads(out)["diagnostics"]
        assert (diag["message"], diag["line"], diag["column"]) == (message, None, None)
        assert cmd_dump.main([f]) == 1
        assert capsys.readouterr().err == f"Error: {message} (file: {f})\n"


@pytest.mark.parametrize("fmt", ["msgpack", "json"])
def test_invalid_utf8_compile_both_encodings(puppet_invalid, tmp_path, fmt):
    d, answers = puppet_invalid
    for name, message in answers.items():
        out = tmp_path / (name + "." + fmt + ".xpp")
        rc, text, err = compile_(str(d / name), "-o", str(out), "--format", fmt)
        assert rc == 1, text + err
        program, records = read_xpp(out.read_bytes())
        assert program is None
        assert [(r["message"], r.get("line")) for r in records] == [(message, None)]


def test_invalid_utf8_does_not_stop_an_environment(puppet_invalid, tmp_path):
    d, answers = puppet_invalid
    env = tmp_path / "env"
    write(
        env,
        {"modules/a/manifests/init.pp": "class a { }\n", "modules/a/manifests/bad.pp": INVALID["lone.pp"]},
    )
    rc, out, err = compile_(str(env), "--format", "json", "-j1")
    assert rc == 1, out + err
    assert f"Error: {answers['lone.pp']}" in out
    assert read_xpp((env / ".xpp/modules/a/manifests/init.xpp").read_bytes())[0] is not None
    assert (env / ".xpp/compile-state.json").exists()


def test_byte_order_mark_first_as_puppet(oracle, tmp_path):
    f = tmp_path / "bom.pp"
    f.write_bytes(b"\xef\xbb\xbf'\xff")
    (want,) = oracle.call("validate", file=str(f))
    rc, out = validate(str(f))
    assert rc == 1 and want["code"] == "ILLEGAL_BOM"
    assert out == f"Error: {want['message']} (file: {f})\n"


# ------------------------------------------------------------------------------------------------------
# issue 10 item 4: an internal failure on one file is that file's INTERNAL_ERROR, the batch goes on


@pytest.fixture
def parse_fails_on_boom(monkeypatch):
    from puppet_xpp.grammar import check, parser

    real = parser.parse

    def parse(text, *a, **kw):
        if "boom" in text:
            raise AttributeError("'NoneType' object has no attribute 'start_pos'")
        return real(text, *a, **kw)

    monkeypatch.setattr(parser, "parse", parse)
    monkeypatch.setattr(check, "parse", parse)  # the one parse-then-validate entry took its own name
    if hasattr(cmd_dump, "parse"):
        monkeypatch.setattr(cmd_dump, "parse", parse)


def test_internal_error_validate(tmp_path, parse_fails_on_boom):
    write(tmp_path, {"a.pp": "notice(boom)\n", "b.pp": "$x = \n"})
    rc, out = validate(str(tmp_path))
    assert rc == 2
    lines = out.splitlines()
    assert lines[0] == (
        "Error: Internal error (AttributeError): 'NoneType' object has no attribute 'start_pos' "
        f"(file: {tmp_path / 'a.pp'})"
    )
    assert "b.pp" in lines[1] and "Traceback" not in out


def test_internal_error_dump_streams_the_others(tmp_path, parse_fails_on_boom, capsys):
    write(tmp_path, {"a.pp": "notice(1)\n", "b.pp": "notice(boom)\n", "c.pp": "notice(3)\n"})
    rc = cmd_dump.main([str(tmp_path / n) for n in ("a.pp", "b.pp", "c.pp")] + ["--format", "pn"])
    cap = capsys.readouterr()
    assert rc == 2
    assert "--- " + str(tmp_path / "a.pp") in cap.out and "--- " + str(tmp_path / "c.pp") in cap.out
    assert "Internal error (AttributeError)" in cap.err and "Traceback" not in cap.err
    rc = cmd_dump.main([str(tmp_path / "b.pp"), "--debug"])
    assert rc == 2 and "Traceback" in capsys.readouterr().err


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_internal_error_compile_env_goes_on(tmp_path, parse_fails_on_boom, jobs):
    files = {f"modules/a/manifests/f{i}.pp": f"class a::f{i} {{ }}\n" for i in range(8)}
    files["modules/a/manifests/f3.pp"] = "class a::f3 { notice(boom) }\n"
    write(tmp_path, files)
    rc, out, err = compile_(str(tmp_path), "-j", jobs, "--report", str(tmp_path / "r.json"))
    assert rc == 2, out + err
    assert "Internal error (AttributeError)" in out and "Traceback" not in out + err
    written = sorted(p.name for p in (tmp_path / ".xpp/modules/a/manifests").iterdir())
    assert written == [f"f{i}.xpp" for i in range(8) if i != 3]
    assert (tmp_path / ".xpp/compile-state.json").exists()
    assert "compiled 7," in out
    assert json.loads((tmp_path / "r.json").read_text())["exit_code"] == 2


def test_unreadable_is_2_in_every_mode(tmp_path):
    f = str(tmp_path / "missing.pp")
    assert validate(f)[0] == 2
    assert run("--dump", f).returncode == 2
    assert run("--compile", f, "-o", str(tmp_path / "x.xpp")).returncode == 2


# ------------------------------------------------------------------------------------------------------
# issue 10 item 5: -o never replaces what it does not own


def test_output_through_symlink_source_and_directory(tmp_path):
    src = tmp_path / "f.pp"
    src.write_text("notice(1)\n")
    target = tmp_path / "real" / "t.xpp"
    target.parent.mkdir()
    link = tmp_path / "link.xpp"
    link.symlink_to(target)
    rc, out, err = compile_(str(src), "-o", str(link))
    assert rc == 0, err
    assert link.is_symlink() and read_xpp(target.read_bytes())[0] is not None
    # the source itself: refused, untouched
    rc, out, err = compile_(str(src), "-o", str(src))
    assert rc == 2 and "is the source" in err and src.read_text() == "notice(1)\n"
    other = tmp_path / "alias.xpp"
    other.symlink_to(src)
    rc, out, err = compile_(str(src), "-o", str(other))
    assert rc == 2 and src.read_text() == "notice(1)\n"
    rc, out, err = compile_(str(src), "-o", str(tmp_path))
    assert rc == 2 and "is a directory" in err


def test_output_into_fifo_and_stdout(tmp_path):
    src = tmp_path / "f.pp"
    src.write_text("notice(1)\n")
    fifo = tmp_path / "pipe.xpp"
    os.mkfifo(fifo)
    got = []
    t = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    t.start()
    rc, out, err = compile_(str(src), "-o", str(fifo))
    t.join(10)
    assert rc == 0 and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert read_xpp(got[0])[0] is not None
    p = run("--compile", str(src), "-o", "/dev/stdout")
    assert p.returncode == 0 and read_xpp(p.stdout)[0] is not None
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert run("--compile", str(src), "-o", "/dev/null").returncode == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)  # not replaced by a regular file


# ------------------------------------------------------------------------------------------------------
# issue 11 item 2: a dying worker never hangs --compile

_KILLER = r"""
import os, signal, sys
from puppet_xpp.xpp.compile.work import Worker
real = Worker.compile_job
def compile_job(self, job, known=None):
    if job.src.endswith("f5.pp"):
        os.kill(os.getpid(), signal.SIGKILL)
    return real(self, job, known)
Worker.compile_job = compile_job
from puppet_xpp.server.cli import compile as cmd_compile
sys.exit(cmd_compile.main(sys.argv[1:]))
"""


def test_killed_worker_is_reported_and_the_rest_finishes(tmp_path):
    write(tmp_path, {f"modules/a/manifests/f{i}.pp": f"class a::f{i} {{ }}\n" for i in range(40)})
    p = subprocess.run(
        [sys.executable, "-c", _KILLER, str(tmp_path), "-j2"],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        check=False,
    )
    assert p.returncode == 2, p.stdout + p.stderr
    assert "f5.pp: not compiled: the worker process compiling it died (killed by SIGKILL)" in p.stdout
    written = {x.name for x in (tmp_path / ".xpp/modules/a/manifests").iterdir()}
    assert "f5.xpp" not in written and {"f0.xpp", "f39.xpp"} <= written
    assert len(written) >= 30  # only what the dead worker held is lost
    assert (tmp_path / ".xpp/compile-state.json").exists()


# ------------------------------------------------------------------------------------------------------
# issue 11 item 3: no write can be redirected out of ENVDIR/.xpp (the race, run for real)


def test_swapped_directory_never_redirects_writes(tmp_path):
    env = tmp_path / "env"
    outside = tmp_path / "outside"
    outside.mkdir()
    write(env, {f"modules/a/manifests/f{i}.pp": f"class a::f{i} {{ }}\n" for i in range(150)})
    assert compile_(str(env), "-j1")[0] == 0
    d = env / ".xpp/modules/a/manifests"
    aside = env / ".xpp/modules/a/aside"
    stop = threading.Event()

    def swapper():
        while not stop.is_set():
            try:
                os.rename(d, aside)
                os.symlink(outside, d)
                time.sleep(0.0005)
                os.unlink(d)
                os.rename(aside, d)
            except OSError:
                pass

    t = threading.Thread(target=swapper)
    t.start()
    try:
        for _ in range(3):
            compile_(str(env), "-j1", "--force", "-q")
    finally:
        stop.set()
        t.join()
    assert list(outside.iterdir()) == []


# ------------------------------------------------------------------------------------------------------
# issue 11 item 4: no secret leaks through the .xpp


@pytest.fixture
def open_tmp(tmp_path_factory):
    import shutil
    import tempfile

    d = tempfile.mkdtemp(prefix="xpp-owner-")
    os.chmod(d, 0o755)
    yield Path(d)
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_root_compile_reads_as_the_owner(open_tmp):
    secret_dir = open_tmp / "rootonly"
    secret_dir.mkdir(mode=0o700)
    secret = secret_dir / "secret.pp"
    secret.write_text("class a::secret { $password = 'hunter2' }\n")
    env = open_tmp / "env"
    write(
        env, {"modules/a/manifests/init.pp": "class a { }\n", "modules/a/manifests/g.pp": "class a::g { }\n"}
    )
    (env / "modules/a/manifests/secret.pp").symlink_to(secret)
    os.chmod(env / "modules/a/manifests/g.pp", 0o640)
    for p in [env, *env.rglob("*")]:
        os.lchown(p, 65534, 65534)
    rc, out, err = compile_(str(env), "-j1")
    assert rc == 2, out + err
    assert "secret.pp': Permission denied" in out
    xpp = env / ".xpp/modules/a/manifests"
    assert not (xpp / "secret.xpp").exists()
    assert not any(b"hunter2" in p.read_bytes() for p in env.joinpath(".xpp").rglob("*") if p.is_file())
    assert stat.S_IMODE((xpp / "g.xpp").stat().st_mode) == 0o640  # never wider than its source
    assert stat.S_IMODE((xpp / "init.xpp").stat().st_mode) == 0o644


# ------------------------------------------------------------------------------------------------------
# issue 11 item 5: only regular files are sources, with a size limit


def test_fifo_and_devices_are_not_read(tmp_path):
    write(tmp_path, {"modules/a/manifests/init.pp": "class a { }\n"})
    m = tmp_path / "modules/a/manifests"
    os.mkfifo(m / "fifo.pp")
    (m / "zero.pp").symlink_to("/dev/zero")
    (m / "random.pp").symlink_to("/dev/urandom")
    p = run("--compile", str(tmp_path), "-j1", timeout=30)
    assert p.returncode == 2
    for name, kind in (("fifo", "a FIFO"), ("zero", "a character device"), ("random", "a character device")):
        assert p.stdout.decode().count(f"{name}.pp': {kind}, not a regular file: not read") == 1
    p = run("--validate", str(m), timeout=30)
    assert p.returncode == 2 and p.stdout.decode().count("not a regular file") == 3
    p = run("--dump", str(m / "fifo.pp"), str(m / "init.pp"), timeout=30)
    assert p.returncode == 2 and p.stdout == b'{"^":["class",{"#":["name","a"]}]}\n'


def test_size_limit(tmp_path):
    write(tmp_path, {"modules/a/manifests/init.pp": "class a { }\n" + "#" * 5000 + "\n"})
    f = str(tmp_path / "modules/a/manifests/init.pp")
    p = run("--validate", f, env={"PUPPET_XPP_MAX_SOURCE_SIZE": "1000"})
    assert p.returncode == 2 and b"larger than the source size limit (1000 bytes)" in p.stdout
    rc, out, err = compile_(str(tmp_path), "--max-source-size", "1000")
    assert rc == 2 and "larger than the source size limit (1000 bytes)" in out
    assert validate(f)[0] == 0  # the default is far above


# ------------------------------------------------------------------------------------------------------
# issue 11 item 6: non-UTF-8 file names never crash output


def test_non_utf8_file_names(tmp_path):
    base = os.fsencode(tmp_path)
    env = base + b"/env"
    os.makedirs(env + b"/modules/a/manifests")
    with open(env + b"/modules/a/manifests/init.pp", "wb") as f:
        f.write(b"class a { }\n")
    with open(env + b"/modules/a/manifests/b\xff.pp", "wb") as f:
        f.write(b"class a::b { 1 }\n")
    strict = {"PYTHONIOENCODING": "utf-8:strict"}
    report = tmp_path / "r.json"
    p = run("--compile", os.fsdecode(env), "--report", str(report), env=strict)
    assert p.returncode == 0 and b"Traceback" not in p.stderr
    assert "b\\xff.pp: its file name is not valid UTF-8" in p.stderr.decode("utf-8")
    data = json.loads(report.read_bytes().decode("utf-8"))  # valid UTF-8 and valid JSON
    assert any(x["path"].endswith("/b\\xff.pp") for x in data["environments"][0]["skipped"])
    p = run("--validate", os.fsdecode(env + b"/modules"), "--format", "json", env=strict)
    assert p.returncode == 1 and b"Traceback" not in p.stderr
    lines = [json.loads(x) for x in p.stdout.decode("utf-8").splitlines()]
    assert any(x["file"].endswith("b\\xff.pp") for x in lines)
    p = run("--validate", os.fsdecode(env + b"/modules"), env=strict)
    assert p.returncode == 1 and "b\\xff.pp" in p.stdout.decode("utf-8")


# ------------------------------------------------------------------------------------------------------
# issue 11 item 7: one compile per environment at a time


def test_lock_no_wait_and_wait(tmp_path):
    write(tmp_path, {"modules/a/manifests/init.pp": "class a { }\n"})
    assert compile_(str(tmp_path))[0] == 0
    stale = tmp_path / ".xpp/modules/a/manifests/.init.xpp.1234abcd.tmp"
    fd = os.open(tmp_path / ".xpp/compile.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        rc, out, err = compile_(str(tmp_path), "--no-wait")
        assert rc == 2 and "another compile of this environment is running" in err
        stale.write_bytes(b"partial")
        p = subprocess.Popen(
            [*CLI, "--compile", str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(os.environ, PYTHONPATH=str(REPO)),
        )
        time.sleep(1.5)
        assert p.poll() is None  # waiting
    finally:
        os.close(fd)
    o, e = p.communicate(timeout=60)
    assert p.returncode == 0 and b"waiting for it" in e
    assert not stale.exists()  # the lock holder removes every leftover temporary file


def test_cli_last_guard_is_one_line_and_2(monkeypatch, capsys):
    from puppet_xpp.server import cli
    from puppet_xpp.server.cli import verify as cmd_verify

    def boom(args, out, err):
        raise KeyError("x")

    monkeypatch.setattr(cmd_verify, "run", boom)
    assert cli.main(["--verify", "f.xpp"]) == 2
    err = capsys.readouterr().err
    assert err == "puppet-xpp --verify: Internal error (KeyError): 'x'\n"
    assert cli.main(["--verify", "f.xpp", "--debug"]) == 2
    assert "Traceback" in capsys.readouterr().err
