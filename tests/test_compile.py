"""`puppet-xpp --compile` (xpp/compile/, server/cli/compile.py): end to end on temporary environments.

Layout and safety rules come from PRFC-23 and issue 5 (output under ENVDIR/.xpp/modules/<module>/, the
reserved module `environment`, first module of a name wins, nothing written outside ENVDIR/.xpp); what is
*in* each .xpp is checked against real Puppet: its Deserializer reads the file and the Program equals
Puppet's own parse of the source (oracle op `pcore_read`), and printed diagnostics equal Puppet's
(oracle op `validate`).
"""

from __future__ import annotations

import base64
import io
import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from puppet_xpp.server.cli import compile as cmd_compile
from puppet_xpp.xpp.compile import layout
from puppet_xpp.xpp.result import read_xpp

ROOT = str(Path(__file__).resolve().parents[1])


def write(base, files: dict):
    for rel, text in files.items():
        p = Path(base) / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def compile_(*argv, cwd=None):
    """Run --compile in this process: (exit status, stdout, stderr).  DUPLICATE_KEY stays a warning (the
    fixture has one) unless a test chooses --strict or a language level itself."""
    if not any(a.startswith(("--strict", "--puppet-version")) for a in argv) and "-o" not in argv:
        argv = (*argv, "--strict", "warning")
    if not any(a.startswith("--puppet-version") for a in argv):  # not auto: the puppet on PATH
        argv = (*argv, "--puppet-version", "8")
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    if cwd:
        os.chdir(cwd)
    try:
        rc = cmd_compile.main(list(argv), out=out, err=err)
    finally:
        os.chdir(old)
    return rc, out.getvalue(), err.getvalue()


def run_cli(*argv, cwd=None, **kw):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run(
        [sys.executable, "-m", "puppet_xpp", *argv],
        cwd=cwd or ROOT,
        env=env,
        capture_output=True,
        text=True,
        **kw,
    )


def xpps(env) -> dict:
    """{path relative to ENVDIR/.xpp/modules: bytes} of every .xpp file."""
    base = Path(env) / ".xpp" / "modules"
    return (
        {str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*.xpp"))}
        if base.is_dir()
        else {}
    )


def snapshot(env) -> dict:
    base = Path(env) / ".xpp" / "modules"
    return {str(p): (p.stat().st_ino, p.stat().st_mtime_ns) for p in base.rglob("*.xpp")}


MODULE_FILES = {
    "modules/apache/manifests/init.pp": "class apache($port = 80) {\n  apache::vhost { 'x': port => $port }\n}\n",
    "modules/apache/manifests/vhost.pp": 'define apache::vhost(Integer $port) {\n  notice("${title}:${port}")\n}\n',
    "modules/apache/manifests/mod/ssl.pp": "class apache::mod::ssl { include apache }\n",
    "modules/apache/functions/port.pp": "function apache::port() >> Integer { 443 }\n",
    "modules/apache/types/port.pp": "type Apache::Port = Integer[1, 65535]\n",
    "modules/apache/plans/deploy.pp": "plan apache::deploy(TargetSpec $t) {\n  apply($t) { include apache }\n}\n",
    "modules/apache/templates/vhost.epp": "<%= $x %>\n",
    "modules/apache/lib/puppet/functions/x.rb": "# ruby\n",
    "modules/apache/examples/init.pp": "include apache\n",
    "site/profile/manifests/web.pp": "class profile::web {\n  include apache\n  $a = {k => 1, k => 2}\n}\n",
    "manifests/site.pp": "node default {\n  include profile::web\n}\n",
    "manifests/nodes/db.pp": "node 'db' { }\n",
    "functions/hello.pp": "function environment::hello() { 'hi' }\n",
    "types/name.pp": "type Environment::Name = String[1]\n",
    "plans/run.pp": "plan environment::run() { run_command('ls', 'localhost') }\n",
    "environment.conf": "modulepath = site:modules:$basemodulepath\n",
}

EXPECTED = {
    "apache/manifests/init.xpp": ("modules/apache/manifests/init.pp", False),
    "apache/manifests/vhost.xpp": ("modules/apache/manifests/vhost.pp", False),
    "apache/manifests/mod/ssl.xpp": ("modules/apache/manifests/mod/ssl.pp", False),
    "apache/functions/port.xpp": ("modules/apache/functions/port.pp", False),
    "apache/types/port.xpp": ("modules/apache/types/port.pp", False),
    "apache/plans/deploy.xpp": ("modules/apache/plans/deploy.pp", True),
    "profile/manifests/web.xpp": ("site/profile/manifests/web.pp", False),
    "environment/manifests/site.xpp": ("manifests/site.pp", False),
    "environment/manifests/nodes/db.xpp": ("manifests/nodes/db.pp", False),
    "environment/functions/hello.xpp": ("functions/hello.pp", False),
    "environment/types/name.xpp": ("types/name.pp", False),
    "environment/plans/run.xpp": ("plans/run.pp", True),
}


@pytest.fixture
def env(tmp_path):
    e = tmp_path / "production"
    write(e, MODULE_FILES)
    return e


def recorded_name(data: bytes):
    program, diags = read_xpp(data)
    if program is not None:
        return program.locator.file
    return diags[0]["file"] if diags else None


def puppet_reads(oracle, data: bytes, source: str, path: str, fmt="msgpack", tasks=False):
    return oracle.call(
        "pcore_read",
        data=base64.b64encode(data).decode(),
        format=fmt,
        envelope=True,
        source=source,
        path=path,
        tasks=tasks,
    )


# ------------------------------------------------------------------------------------------------------
# layout, recorded names, Puppet reads the files


def test_environment_layout_and_recorded_names(env, oracle):
    rc, out, err = compile_(str(env))
    assert rc == 0, out + err
    got = xpps(env)
    assert sorted(got) == sorted(EXPECTED)
    for rel, (src, tasks) in EXPECTED.items():
        data = got[rel]
        assert recorded_name(data) == src
        ans = puppet_reads(oracle, data, (env / src).read_text(), src, tasks=tasks)
        assert ans["equal"] is True, rel
        assert ans["locator_shared"] and ans["definitions_in_body"], rel
    # the plans were compiled in tasks mode (Puppet parses `plan` only there)
    program, _ = read_xpp(got["apache/plans/deploy.xpp"])
    assert type(program.body).__name__ == "PlanDefinition"
    # nothing written anywhere else
    written = {str(p.relative_to(env)) for p in env.rglob("*") if p.is_file()}
    assert written - set(MODULE_FILES) == {f".xpp/modules/{r}" for r in EXPECTED} | {
        ".xpp/compile-state.json",
        ".xpp/compile.lock",
    }
    assert "compiled 12, up to date 0, removed 0, with errors 0" in out


def test_default_directory_is_cwd_and_json_format(env, oracle):
    rc, out, err = compile_("--format", "json", cwd=env)
    assert rc == 0, err
    data = xpps(env)["apache/manifests/init.xpp"]
    assert data.startswith(b"application/vnd.puppet.pcore+json; document-type=xpp; version=1;")
    src = "modules/apache/manifests/init.pp"
    assert puppet_reads(oracle, data, (env / src).read_text(), src, fmt="json")["equal"] is True
    # switching the format recompiles everything
    rc, out, _ = compile_("--format", "msgpack", cwd=env)
    assert "compiled 12," in out
    assert xpps(env)["apache/manifests/init.xpp"].startswith(b"application/vnd.puppet.pcore+msgpack;")


def test_duplicate_module_first_wins(tmp_path):
    e = tmp_path / "env"
    write(
        e,
        {
            "environment.conf": "modulepath = modules:other\n",
            "modules/apache/manifests/init.pp": "class apache { }\n",
            "other/apache/manifests/init.pp": "class apache { notice(2) }\n",
            "other/apache/manifests/extra.pp": "class apache::extra { }\n",
            "other/stdlib/manifests/init.pp": "class stdlib { }\n",
        },
    )
    rc, out, err = compile_(str(e), "--report", str(tmp_path / "r.json"))
    assert rc == 0
    got = xpps(e)
    assert sorted(got) == ["apache/manifests/init.xpp", "stdlib/manifests/init.xpp"]
    assert recorded_name(got["apache/manifests/init.xpp"]) == "modules/apache/manifests/init.pp"
    assert "duplicate module 'apache'" in err and str(e / "other" / "apache") in err
    rep = json.loads((tmp_path / "r.json").read_text())
    skipped = rep["environments"][0]["skipped"]
    assert [s["path"] for s in skipped] == [str(e / "other" / "apache")]


def test_nested_modulepath_entries(tmp_path, oracle):
    """``modulepath = mods:mods/inner``: a module of the inner directory gets its .xpp under its own name
    (where a runtime loading that module looks), and Puppet's location error (Puppet resolves the file
    against the first entry) instead of a crash."""
    e = tmp_path / "env"
    src = "class mod { notice(1) }\n"
    write(
        e,
        {
            "environment.conf": "modulepath = mods:mods/inner\n",
            "manifests/site.pp": "include mod\n",
            "mods/inner/mod/manifests/init.pp": src,
        },
    )
    rc, out, err = compile_(str(e))
    assert rc == 1, err
    assert sorted(xpps(e)) == ["environment/manifests/site.xpp", "mod/manifests/init.xpp"]
    f = str(e / "mods/inner/mod/manifests/init.pp")
    want = oracle.call("validate", file=f, modulepath=[str(e / "mods"), str(e / "mods/inner")])
    assert [d["code"] for d in want] == ["ILLEGAL_DEFINITION_LOCATION"]
    assert "Unacceptable location. The name 'mod' is unacceptable" in out


def test_module_outside_the_environment_is_recorded_absolute(tmp_path, oracle):
    e = tmp_path / "env"
    base = tmp_path / "base"
    write(
        e,
        {
            "environment.conf": "modulepath = modules:$basemodulepath\n",
            "modules/apache/manifests/init.pp": "class apache { }\n",
        },
    )
    write(
        base,
        {
            "stdlib/manifests/init.pp": "class stdlib { }\n",
            "stdlib/functions/f.pp": "function stdlib::f() { 1 }\n",
        },
    )
    rc, out, err = compile_(str(e), "--basemodulepath", str(base))
    assert rc == 0, err
    got = xpps(e)
    assert sorted(got) == ["apache/manifests/init.xpp", "stdlib/functions/f.xpp", "stdlib/manifests/init.xpp"]
    src = str(base / "stdlib" / "manifests" / "init.pp")
    assert recorded_name(got["stdlib/manifests/init.xpp"]) == src
    assert puppet_reads(oracle, got["stdlib/manifests/init.xpp"], Path(src).read_text(), src)["equal"] is True
    assert not list(base.rglob("*.xpp")) and not (base / ".xpp").exists()  # nothing written in modules
    # without --basemodulepath the base modules are not compiled (and removed), with a notice
    rc, out, err = compile_(str(e))
    assert sorted(xpps(e)) == ["apache/manifests/init.xpp"]
    assert "removed 2" in out and "$basemodulepath" in err


def test_modulepath_override_and_default_modulepath(tmp_path):
    e = tmp_path / "env"
    write(
        e,
        {
            "modules/a/manifests/init.pp": "class a { }\n",
            "mods2/b/manifests/init.pp": "class b { }\n",
            "manifests/site.pp": "include a\n",
        },
    )
    rc, _, _ = compile_(str(e))  # no environment.conf: modulepath = modules (+ $basemodulepath)
    assert rc == 0 and sorted(xpps(e)) == ["a/manifests/init.xpp", "environment/manifests/site.xpp"]
    rc, _, _ = compile_(str(e), "--modulepath", str(e / "mods2"))
    assert rc == 0 and sorted(xpps(e)) == ["b/manifests/init.xpp", "environment/manifests/site.xpp"]


def test_manifest_setting_file_and_outside(tmp_path):
    e = tmp_path / "env"
    outside = tmp_path / "main.pp"
    outside.write_text("node default { }\n")
    write(
        e,
        {
            "environment.conf": f"manifest = {outside}\n",
            "manifests/ignored.pp": "$x = 1\n",
            "modules/a/manifests/init.pp": "class a { }\n",
        },
    )
    rc, _, err = compile_(str(e))
    assert rc == 0, err
    got = xpps(e)
    assert sorted(got) == ["a/manifests/init.xpp", "environment/manifests/main.xpp"]
    assert recorded_name(got["environment/manifests/main.xpp"]) == str(outside)


def test_runtime_root(env):
    rc, _, err = compile_(str(env), "--runtime-root", "/etc/puppetlabs/code/environments/production")
    assert rc == 0, err
    got = xpps(env)
    assert (
        recorded_name(got["apache/manifests/init.xpp"])
        == "/etc/puppetlabs/code/environments/production/modules/apache/manifests/init.pp"
    )
    assert compile_(str(env), "--runtime-root", "relative/dir")[0] == 2


def test_reserved_module_name_and_invalid_module_names(tmp_path):
    e = tmp_path / "env"
    write(
        e,
        {
            "modules/environment/manifests/init.pp": "class environment { }\n",
            "modules/Bad-Name/manifests/init.pp": "class bad { }\n",
            "modules/ok/manifests/init.pp": "class ok { }\n",
        },
    )
    rc, _, err = compile_(str(e))
    assert rc == 0
    assert sorted(xpps(e)) == ["ok/manifests/init.xpp"]
    assert "reserved" in err


# ------------------------------------------------------------------------------------------------------
# errors in sources, diagnostics, report, exit status


def test_errors_give_diagnostics_only_xpp_and_exit_1(env, oracle):
    bad = env / "modules/apache/manifests/broken.pp"
    bad.write_text("class apache::broken {\n  $x = \n}\n")
    rc, out, err = compile_(str(env), "--report", str(env.parent / "r.json"))
    assert rc == 1
    data = xpps(env)["apache/manifests/broken.xpp"]
    program, diags = read_xpp(data)
    assert program is None and diags and diags[0]["issue_code"] == "SYNTAX_ERROR"
    assert diags[0]["file"] == "modules/apache/manifests/broken.pp"
    ans = oracle.call("pcore_read", data=base64.b64encode(data).decode(), format="msgpack", envelope=True)
    assert ans["program"] is None and ans["diagnostics"] == diags
    # printed diagnostics: the --validate text format, with Puppet's message and position
    display = str(bad)
    for f, _rel in (
        (bad, "modules/apache/manifests/broken.pp"),
        (env / "site/profile/manifests/web.pp", None),
    ):
        want = oracle.call(
            "validate",
            file=str(f),
            modulepath=[str(env / "site"), str(env / "modules")],
            manifest=str(env / "manifests"),
        )
        assert want
        for d in want:
            kind = "Error" if d["severity"] == "error" else "Warning"
            line = f"{kind}: {d['message']} (file: {f}, line: {d['line']}, column: {d['pos']})"
            assert line in out.splitlines(), (line, out)
    assert "with errors 1" in out
    rep = json.loads((env.parent / "r.json").read_text())
    assert rep["exit_code"] == 1 and rep["summary"]["with_errors"] == 1
    files = {f["source"]: f for f in rep["environments"][0]["files"]}
    assert files[display]["errors"] == 1 and files[display]["status"] == "compiled"
    assert files[str(env / "site/profile/manifests/web.pp")]["warnings"] == 1
    # an unchanged error file stays an error on the next (incremental) run, with its diagnostics
    rc2, out2, _ = compile_(str(env))
    assert rc2 == 1 and "compiled 0," in out2 and "with errors 1" in out2
    assert [x for x in out2.splitlines() if x.startswith("Error")] == [
        x for x in out.splitlines() if x.startswith("Error")
    ]


@pytest.mark.parametrize(
    "args", [["--bogus"], ["/nonexistent/dir"], ["--mode", "999"], ["--jobs", "-1"], ["--format", "yaml"]]
)
def test_usage_errors_exit_2(args, tmp_path):
    assert compile_(*args, cwd=tmp_path)[0] == 2


def test_not_an_environment_exit_2(tmp_path):
    (tmp_path / "x.pp").write_text("$a = 1\n")
    rc, out, err = compile_(str(tmp_path))
    assert rc == 2 and "not a Puppet environment" in err
    assert not (tmp_path / ".xpp").exists()


def test_summary_and_no_progress_off_a_terminal(tmp_path):
    e = tmp_path / "env"
    write(e, {f"modules/m/manifests/c{i}.pp": f"class m::c{i} {{ }}\n" for i in range(60)})
    p = run_cli("--compile", str(e), "-j", "2")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1].startswith(f"{e}: compiled 60, up to date 0, removed 0, with errors 0 (")
    assert p.stderr == ""  # off a terminal no progress at all: the one summary line (issue 28)


# ------------------------------------------------------------------------------------------------------
# incremental


def test_incremental(env):
    assert compile_(str(env))[0] == 0
    before = snapshot(env)
    # second run: nothing compiled, nothing written
    rc, out, _ = compile_(str(env))
    assert rc == 0 and "compiled 0, up to date 12, removed 0" in out
    assert snapshot(env) == before
    # a changed file: just it is recompiled
    f = env / "modules/apache/manifests/vhost.pp"
    f.write_text(f.read_text() + "# changed\n")
    rc, out, _ = compile_(str(env), "-v")
    assert "compiled 1, up to date 11" in out
    after = snapshot(env)
    changed = {k for k in before if before[k] != after[k]}
    assert changed == {str(env / ".xpp/modules/apache/manifests/vhost.xpp")}
    assert read_xpp(xpps(env)["apache/manifests/vhost.xpp"])[0].locator.string == f.read_text()
    # touched, same content: the embedded source decides; nothing is rewritten
    before = snapshot(env)
    os.utime(env / "modules/apache/manifests/init.pp")
    rc, out, _ = compile_(str(env))
    assert "compiled 0, up to date 12" in out and snapshot(env) == before
    # a deleted manifest: its .xpp is removed, and directories left empty
    shutil.rmtree(env / "modules/apache/manifests/mod")
    rc, out, _ = compile_(str(env))
    assert "removed 1" in out
    assert not (env / ".xpp/modules/apache/manifests/mod").exists()
    # --force compiles everything (identical bytes are not rewritten)
    before = snapshot(env)
    rc, out, _ = compile_(str(env), "--force")
    assert "compiled 11, up to date 0" in out and snapshot(env) == before


def test_incremental_without_state_uses_embedded_source(env):
    assert compile_(str(env))[0] == 0
    (env / ".xpp" / "compile-state.json").unlink()
    before = snapshot(env)
    rc, out, _ = compile_(str(env))
    assert "compiled 0, up to date 12" in out and snapshot(env) == before
    # a stale .xpp whose embedded source differs is replaced even when its time stamp is newer
    f = env / "modules/apache/manifests/init.pp"
    x = env / ".xpp/modules/apache/manifests/init.xpp"
    f.write_text("class apache { }\n")
    os.utime(f, (1, 1))
    rc, out, _ = compile_(str(env))
    assert "compiled 1," in out
    assert read_xpp(x.read_bytes())[0].locator.string == "class apache { }\n"


def test_incremental_without_state_checks_the_recorded_settings(env):
    """Without the state file an existing .xpp is kept only when its envelope records this source and
    the settings in effect (xpp.compile.current): one made at another level is recompiled."""
    assert compile_(str(env), "--puppet-version", "7.23")[0] == 0
    (env / ".xpp" / "compile-state.json").unlink()
    rc, out, _ = compile_(str(env), "--puppet-version", "8", "--strict", "warning")
    assert rc == 0 and "compiled 12, up to date 0" in out
    (env / ".xpp" / "compile-state.json").unlink()
    rc, out, _ = compile_(str(env), "--puppet-version", "8", "--strict", "warning")
    assert "compiled 0, up to date 12" in out


def test_corrupt_xpp_is_rebuilt(env):
    assert compile_(str(env))[0] == 0
    x = env / ".xpp/modules/apache/manifests/init.xpp"
    x.write_bytes(x.read_bytes()[:100])
    rc, out, _ = compile_(str(env))
    assert "compiled 1," in out
    read_xpp(x.read_bytes())


def test_settings_change_recompiles(env):
    assert compile_(str(env))[0] == 0
    rc, out, _ = compile_(str(env), "--strict", "error")
    assert rc == 1 and "compiled 12," in out  # DUPLICATE_KEY in profile::web is now an error
    program, diags = read_xpp(xpps(env)["profile/manifests/web.xpp"])
    # PRFC-23 (issue 10 item 7): the Program stays when only validation failed, with its diagnostics
    assert program is not None and diags[0]["issue_code"] == "DUPLICATE_KEY"


def test_leftover_temporary_files_are_removed(env):
    assert compile_(str(env))[0] == 0
    d = env / ".xpp/modules/apache/manifests"
    old = d / ".init.xpp.abc123.tmp"
    new = d / ".vhost.xpp.def456.tmp"
    old.write_bytes(b"partial")
    new.write_bytes(b"partial")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    compile_(str(env))
    # the run holds the environment's lock, so no other writer is running: every one goes (issue 11)
    assert not old.exists() and not new.exists()


# ------------------------------------------------------------------------------------------------------
# the language server's .xpp-on-save writes the same bytes


def test_byte_identical_to_language_server_on_save(env):
    from puppet_xpp.server.analysis.workspace import Settings, file_context
    from puppet_xpp.xpp.compile import compile_saved

    assert compile_(str(env))[0] == 0
    got = xpps(env)
    shutil.rmtree(env / ".xpp")
    n = 0
    for rel, (src, _tasks) in EXPECTED.items():
        path = str(env / src)
        ctx = file_context(path, Settings())
        target = layout.xpp_target(ctx.env.root, ctx.modulepath, path)
        assert target.out_path == str(env / ".xpp/modules" / rel)
        # the language server's one call on save (strict as compile_() runs it)
        out = compile_saved(ctx.env.root, path, level="8", strict="warning")
        assert out == target.out_path
        assert Path(out).read_bytes() == got[rel], rel
        n += 1
    assert n == len(EXPECTED)
    assert xpps(env) == got


# ------------------------------------------------------------------------------------------------------
# files: modes, owner, symlinks, unreadable files


def test_modes(env):
    old = os.umask(0o077)
    try:
        assert compile_(str(env))[0] == 0
    finally:
        os.umask(old)
    for p in (env / ".xpp").rglob("*"):
        want = 0o755 if p.is_dir() else 0o644
        assert stat.S_IMODE(p.stat().st_mode) == want, p
    assert stat.S_IMODE((env / ".xpp").stat().st_mode) == 0o755
    shutil.rmtree(env / ".xpp")
    assert compile_(str(env), "--mode", "0640")[0] == 0
    for p in (env / ".xpp").rglob("*"):
        assert stat.S_IMODE(p.stat().st_mode) == (0o750 if p.is_dir() else 0o640), p


@pytest.mark.parametrize("jobs", ["1", "2"])  # in this process, and in worker processes
def test_cold_compile_directories_made_by_the_workers(env, monkeypatch, jobs):
    """A cold compile (it creates .xpp/modules) leaves the output directories to the workers, which
    create them in parallel as they write (none is made before they start); one that cannot be created
    fails only the files below it, with the message a warm compile gives for it."""
    import errno

    from puppet_xpp.xpp.compile import tree, writes

    made_first: list[str] = []
    real_ensure = tree.OutputTree.ensure_dir
    monkeypatch.setattr(
        tree.OutputTree, "ensure_dir", lambda self, d: made_first.append(d) or real_ensure(self, d)
    )
    real_open = writes.AnchoredTree._open_child

    def refuse(self, parent_fd, name, *, create, where):
        if name == "mod" and create:
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(self, parent_fd, name, create=create, where=where)

    monkeypatch.setattr(writes.AnchoredTree, "_open_child", refuse)
    rc, out, err = compile_(str(env), "--jobs", jobs)
    assert made_first == [str(env / ".xpp" / "modules")]
    mod = env / ".xpp" / "modules" / "apache" / "manifests" / "mod"
    assert rc == 2, out + err
    assert f"cannot create {mod}: Permission denied" in out + err
    assert set(xpps(env)) == set(EXPECTED) - {"apache/manifests/mod/ssl.xpp"}
    assert stat.S_IMODE((env / ".xpp" / "modules" / "apache").stat().st_mode) == 0o755
    # warm: the directories are made before the workers start, the same message
    made_first.clear()
    rc, out2, err2 = compile_(str(env), "--jobs", jobs)
    assert rc == 2 and str(mod) in made_first
    assert f"cannot create {mod}: Permission denied" in out2 + err2


def test_cold_compile_sweeps_only_after_a_failure(env, monkeypatch):
    """A cold compile that writes every file has nothing to sweep and does not walk the tree for it; one
    with a file not compiled (a FIFO source: its directory was made for it) sweeps, and leaves no empty
    directory; a warm compile always sweeps."""
    from puppet_xpp.xpp.compile import tree

    swept: list[str] = []
    real_sweep = tree.sweep
    monkeypatch.setattr(tree, "sweep", lambda t, e, *a: swept.append(e.root) or real_sweep(t, e, *a))
    assert compile_(str(env))[0] == 0
    assert swept == [] and set(xpps(env)) == set(EXPECTED)
    assert compile_(str(env), "--force")[0] == 0
    assert swept == [str(env)]
    shutil.rmtree(env / ".xpp")
    swept.clear()
    (env / "modules" / "apache" / "manifests" / "extra").mkdir()
    os.mkfifo(env / "modules" / "apache" / "manifests" / "extra" / "pipe.pp")
    assert compile_(str(env))[0] == 2
    assert swept == [str(env)] and set(xpps(env)) == set(EXPECTED)
    assert not (env / ".xpp" / "modules" / "apache" / "manifests" / "extra").exists()


@pytest.fixture
def open_tmp():
    """A temporary directory every user can traverse (pytest's tmp_path is root-only), for tests where
    root compiles an environment owned by someone else."""
    d = tempfile.mkdtemp(prefix="xpp-owner-")
    os.chmod(d, 0o755)
    yield Path(d)
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_root_gives_files_the_owner_of_envdir(open_tmp):
    env = open_tmp / "production"
    write(env, MODULE_FILES)
    os.chown(env, 65534, 65534)
    assert compile_(str(env))[0] == 0
    for p in [env / ".xpp", *(env / ".xpp").rglob("*")]:
        st = p.lstat()
        assert (st.st_uid, st.st_gid) == (65534, 65534), p


def test_symlinks_in_the_sources(tmp_path, oracle):
    e = tmp_path / "env"
    outside = tmp_path / "outside"
    write(e, {"modules/a/manifests/init.pp": "class a { }\n", "shared/x.pp": "class a::x { }\n"})
    write(outside, {"ext/manifests/init.pp": "class ext { }\n"})
    (e / "modules/a/manifests/x.pp").symlink_to("../../../shared/x.pp")  # file link, in the tree
    (e / "modules/ext").symlink_to(outside / "ext")  # module dir link, outside
    (e / "modules/a/manifests/loop").symlink_to("..")  # a cycle
    (e / "modules/a/manifests/dangling.pp").symlink_to("nowhere.pp")
    rc, out, err = compile_(str(e))
    got = xpps(e)
    assert sorted(got) == ["a/manifests/init.xpp", "a/manifests/x.xpp", "ext/manifests/init.xpp"]
    # recorded as reached through the environment (how Puppet names them)
    assert recorded_name(got["ext/manifests/init.xpp"]) == "modules/ext/manifests/init.pp"
    assert recorded_name(got["a/manifests/x.xpp"]) == "modules/a/manifests/x.pp"
    src = "modules/ext/manifests/init.pp"
    assert puppet_reads(oracle, got["ext/manifests/init.xpp"], (e / src).read_text(), src)["equal"] is True
    assert "dangling.pp: broken symbolic link" in err
    assert not list(outside.rglob("*.xpp"))


@pytest.mark.parametrize("where", [".xpp", ".xpp/modules", ".xpp/modules/a"])
def test_symlinks_escaping_the_xpp_tree_are_refused(tmp_path, where):
    e = tmp_path / "env"
    target = tmp_path / "elsewhere"
    target.mkdir()
    write(e, {"modules/a/manifests/init.pp": "class a { }\n", "modules/b/manifests/init.pp": "class b { }\n"})
    link = e / where
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    rc, out, err = compile_(str(e))
    assert rc == 2
    assert "symbolic link" in err + out and str(link) in err + out
    assert list(target.rglob("*")) == []
    if where == ".xpp/modules/a":  # other modules are still compiled
        assert (e / ".xpp/modules/b/manifests/init.xpp").is_file()


def test_xpp_tree_inside_a_module_is_refused(tmp_path):
    # ENVDIR is itself on its modulepath's parent: ENVDIR/.xpp would be inside module 'env'
    e = tmp_path / "env"
    write(e, {"environment.conf": f"modulepath = {tmp_path}\n", "manifests/site.pp": "$a = 1\n"})
    rc, out, err = compile_(str(e))
    assert rc == 2 and "inside the module directory" in err
    assert not (e / ".xpp").exists()


def test_a_module_checked_out_on_its_own_is_not_compiled_as_an_environment(tmp_path):
    """`puppet-xpp --compile .` in a module's checkout (`puppet-ntp/`: metadata.json, manifests/): with its
    manifests/ it passed for an environment, and its .xpp tree went inside the module directory, where
    Puppet never reads it.  Refused, exit 2, nothing written; with an environment.conf it is one."""
    m = tmp_path / "puppet-ntpx"
    write(
        m,
        {
            "metadata.json": '{"name": "acme-ntpx", "version": "1.0.0"}\n',
            "manifests/init.pp": "class ntpx { }\n",
        },
    )
    p = run_cli("--compile", ".", cwd=str(m))
    assert p.returncode == 2 and "a module (metadata.json), not an environment" in p.stderr
    assert not (m / ".xpp").exists()
    write(m, {"environment.conf": "modulepath = modules\n"})
    assert run_cli("--compile", ".", cwd=str(m)).returncode == 0


def _run_restricted(argv):
    """Run the CLI so that file permissions apply (as root: without CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH)."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    cmd = [sys.executable, "-m", "puppet_xpp", *argv]
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("running as root without setpriv: permissions cannot be tested")
        caps = "-dac_override,-dac_read_search"
        cmd = ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}", *cmd]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, cwd="/")


def test_unreadable_files_and_directories():
    base = tempfile.mkdtemp(prefix="xpp-unreadable-")
    try:
        os.chmod(base, 0o755)
        e = Path(base) / "env"
        write(
            e,
            {
                "modules/a/manifests/init.pp": "class a { }\n",
                "modules/a/manifests/secret.pp": "class a::secret { }\n",
                "modules/a/manifests/locked/inner.pp": "class a::locked::inner { }\n",
            },
        )
        # a previous .xpp of the unreadable file must not survive (it cannot be checked)
        assert _run_restricted(["--compile", str(e)]).returncode == 0
        assert (e / ".xpp/modules/a/manifests/secret.xpp").exists()
        os.chmod(e / "modules/a/manifests/secret.pp", 0)
        os.chmod(e / "modules/a/manifests/locked", 0)
        p = _run_restricted(["--compile", str(e)])
        assert p.returncode == 2, p.stdout + p.stderr  # a file not handled: 2 in every mode (issue 10)
        assert (
            f"Error: Could not read file '{e}/modules/a/manifests/secret.pp': Permission denied" in p.stdout
        )
        assert "locked: cannot read directory: Permission denied" in p.stderr
        assert not (e / ".xpp/modules/a/manifests/secret.xpp").exists()
        assert (e / ".xpp/modules/a/manifests/init.xpp").exists()
    finally:
        for dirpath, dirs, _files in os.walk(base):
            for d in dirs:
                os.chmod(os.path.join(dirpath, d), 0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_unwritable_output_is_an_io_failure():
    base = tempfile.mkdtemp(prefix="xpp-unwritable-")
    try:
        os.chmod(base, 0o755)
        e = Path(base) / "env"
        write(e, {"modules/a/manifests/init.pp": "class a { }\n"})
        (e / ".xpp").mkdir()
        os.chmod(e / ".xpp", 0o555)
        p = _run_restricted(["--compile", str(e)])
        assert p.returncode == 2, p.stdout + p.stderr
        assert "Permission denied" in p.stdout + p.stderr
    finally:
        os.chmod(Path(base) / "env" / ".xpp", 0o755)
        shutil.rmtree(base, ignore_errors=True)


# ------------------------------------------------------------------------------------------------------
# killed mid-run


def _kill_env(tmp_path):
    from tests.conformance.corpus import corpus_modulepath

    e = tmp_path / "env"
    mp = corpus_modulepath()
    if mp:
        write(e, {"environment.conf": f"modulepath = {mp[0]}\n", "manifests/site.pp": "node default { }\n"})
    else:  # a synthetic environment of the same order of size
        files = {}
        body = "".join(
            f"  file {{ '/tmp/f{i}': ensure => file, content => \"${{x}} {i}\" }}\n" for i in range(40)
        )
        for m in range(20):
            for c in range(40):
                files[f"modules/m{m}/manifests/c{c}.pp"] = f"class m{m}::c{c}($x = 1) {{\n{body}}}\n"
        write(e, files)
    return e


def test_sigkill_mid_run_leaves_only_complete_files(tmp_path):
    """SIGKILL a compile at random moments: only complete .xpp files exist, no worker survives, and a rerun
    completes.  The format alternates so that every run rewrites every file."""
    from puppet_xpp.xpp.verify import verify_bytes

    e = _kill_env(tmp_path)
    rnd = random.Random(1234)
    env = dict(os.environ, PYTHONPATH=ROOT)
    for k in range(5):
        fmt = ("json", "msgpack")[k % 2]
        proc = subprocess.Popen(
            [sys.executable, "-m", "puppet_xpp", "--compile", str(e), "-j", "2", "-q", "--format", fmt],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rnd.uniform(0.4, 1.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        time.sleep(0.3)  # the workers die with their parent (PR_SET_PDEATHSIG)
        leftover = subprocess.run(
            ["pgrep", "-f", "--", f"--compile {e}"], capture_output=True, text=True
        ).stdout
        assert leftover.strip() == ""
        for p in (e / ".xpp").rglob("*.xpp"):
            assert verify_bytes(p.read_bytes()) == [], p
    p = run_cli("--compile", str(e), "-j", "2")
    assert p.returncode in (0, 1), p.stderr
    files = list((e / ".xpp").rglob("*.xpp"))
    assert len(files) > 100
    for x in files:
        assert x.read_bytes().startswith(b"application/vnd.puppet.pcore+msgpack;")
        read_xpp(x.read_bytes())
    assert not [
        x
        for x in (e / ".xpp").rglob("*")
        if x.name.endswith(".tmp") and time.time() - x.stat().st_mtime > 600
    ]
    p = run_cli("--compile", str(e))
    assert "compiled 0, up to date" in p.stdout and "removed 0" in p.stdout


def _double_or_die(x):
    if x in (13, 14):
        os.kill(os.getpid(), signal.SIGKILL)
    return 2 * x


def test_worker_pool_loses_only_the_item_being_worked_on():
    """xpp.compile.workers: a worker killed while on an item loses that item only; what it held but had not
    started is handed to another worker, every other item is answered once."""
    from puppet_xpp.xpp.compile.workers import run_pool

    got = list(run_pool(_double_or_die, list(range(60)), 2, chunk=4))
    lost = [(item, why) for kind, item, why in got if kind == "lost"]
    done = [(item, value) for kind, item, value in got if kind == "done"]
    reason = "the worker process compiling it died (killed by SIGKILL)"
    assert lost == [(13, reason), (14, reason)]
    assert sorted(done) == [(i, 2 * i) for i in range(60) if i not in (13, 14)]


def _killed_once(x):
    """Item 7 finds its worker killed the first time it is worked on (the OOM killer, a kill -9 from
    outside): not its own fault, so a second try succeeds."""
    marker = os.environ["PUPPET_XPP_TEST_MARKER"]
    if x == 7 and not os.path.exists(marker):
        with open(marker, "w"):
            pass
        os.kill(os.getpid(), signal.SIGKILL)
    return 2 * x


def test_worker_pool_loses_nothing_to_a_worker_killed_from_outside(tmp_path, monkeypatch):
    """The chunk a worker dies on is tried again item by item: an item is lost only when it kills its
    worker again on its own, so a worker killed from outside costs no file (and each item is answered
    once)."""
    from puppet_xpp.xpp.compile.workers import run_pool

    for chunk in (4, 1):  # (a chunk of one item too: a small run's)
        marker = tmp_path / f"killed-{chunk}"
        monkeypatch.setenv("PUPPET_XPP_TEST_MARKER", str(marker))
        got = list(run_pool(_killed_once, list(range(40)), 2, chunk=chunk))
        assert marker.exists()
        assert [kind for kind, _item, _value in got].count("lost") == 0
        assert sorted((item, value) for _kind, item, value in got) == [(i, 2 * i) for i in range(40)]


def _echo_twice(x):
    return x + x


@pytest.mark.timeout(120)
def test_worker_pool_large_items_and_answers_never_block():
    """Chunks and answers far larger than a pipe holds (64 KiB): the parent never waits on a worker that
    waits on it (task pipe written without blocking, answers read while writing)."""
    from puppet_xpp.xpp.compile.workers import run_pool

    items = [f"{i:03d}" + "x" * 50_000 for i in range(48)]
    got = list(run_pool(_echo_twice, items, 2, chunk=8))
    assert sorted((kind, item, value) for kind, item, value in got) == [("done", x, x + x) for x in items]


# ------------------------------------------------------------------------------------------------------
# single file: --compile FILE.pp -o OUT.xpp


def test_single_file(tmp_path, oracle):
    src = tmp_path / "dir" / "x.pp"
    write(tmp_path, {"dir/x.pp": "class x { notice('hi') }\n"})
    for fmt in ("msgpack", "json"):
        out = tmp_path / f"x.{fmt}.xpp"
        p = run_cli("--compile", "dir/x.pp", "-o", str(out), "--format", fmt, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        data = out.read_bytes()
        assert recorded_name(data) == "dir/x.pp"  # FILE as given
        assert stat.S_IMODE(out.stat().st_mode) == 0o644
        assert puppet_reads(oracle, data, src.read_text(), "dir/x.pp", fmt=fmt)["equal"] is True


def test_single_file_errors(tmp_path):
    write(tmp_path, {"bad.pp": "class {\n", "ok.pp": "$a = 1\n"})
    p = run_cli("--compile", "bad.pp", "-o", "bad.xpp", cwd=tmp_path)
    assert p.returncode == 1 and "Error: Syntax error" in p.stdout
    program, diags = read_xpp((tmp_path / "bad.xpp").read_bytes())
    assert program is None and diags[0]["file"] == "bad.pp"
    assert run_cli("--compile", "missing.pp", "-o", "m.xpp", cwd=tmp_path).returncode == 2
    assert run_cli("--compile", "ok.pp", "bad.pp", "-o", "m.xpp", cwd=tmp_path).returncode == 2
    assert run_cli("--compile", "ok.pp", "-o", "/nonexistent-dir/x.xpp", cwd=tmp_path).returncode == 2
    p = subprocess.run(
        [sys.executable, "-m", "puppet_xpp", "--compile", "ok.pp", "-o", "-"],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=ROOT),
        capture_output=True,
    )
    assert p.returncode == 0 and read_xpp(p.stdout)[0].locator.file == "ok.pp"


def test_write_job_for_a_single_file(env, tmp_path):
    """The single-file entry (used for .xpp-on-save) writes what --compile writes, with the same safety."""
    from puppet_xpp.xpp.compile import CompileError, compile_file, detect_environment, plan, write_job

    assert compile_(str(env))[0] == 0
    want = xpps(env)
    shutil.rmtree(env / ".xpp")
    e = detect_environment(str(env))
    jobs, _ = plan(e)
    for job in jobs:
        data, _rows = compile_file(
            job.src,
            job.recorded,
            tasks=job.tasks,
            modulepath=e.modulepath,
            manifest=e.manifest,
            strict="warning",  # as compile_() runs it
        )
        assert write_job(e, job, data) is True
        assert write_job(e, job, data) is False
    assert xpps(env) == want
    for p in (env / ".xpp").rglob("*"):
        assert stat.S_IMODE(p.stat().st_mode) == (0o755 if p.is_dir() else 0o644)
    shutil.rmtree(env / ".xpp/modules/apache")
    (env / ".xpp/modules/apache").symlink_to(tmp_path)
    job = next(j for j in jobs if j.module == "apache")
    with pytest.raises(CompileError, match="symbolic link"):
        write_job(e, job, b"x")
    assert list(tmp_path.glob("*.xpp")) == []


def test_one_file_plan_is_the_whole_plans_answer(env, tmp_path):
    """plan_file (the language server's .xpp on save) gives each file the job plan gives it (target,
    recorded name, module, tasks mode), and None for every file plan does not compile."""
    from puppet_xpp.xpp.compile import detect_environment, plan, plan_file

    write(env, {"modules/apache/manifests/.xpp/hidden.pp": "class hidden { }\n", "elsewhere.pp": "\n"})
    write(tmp_path, {"base/other/manifests/init.pp": "class other { }\n", "base/other/README.pp": "\n"})
    for runtime_root in (None, "/etc/puppetlabs/code/environments/production"):
        e = detect_environment(str(env), basemodulepath=str(tmp_path / "base"))
        jobs, _skipped = plan(e, runtime_root)
        assert len(jobs) == len(EXPECTED) + 1  # the base module's manifest too
        for job in jobs:
            assert plan_file(e, job.src, runtime_root) == job
        planned = {job.src for job in jobs}
        others = {str(p) for p in tmp_path.rglob("*.pp")} - planned
        # examples/, an .xpp directory, the environment's own directory, a module's own directory
        assert {os.path.basename(p) for p in others} == {"init.pp", "hidden.pp", "elsewhere.pp", "README.pp"}
        for path in sorted(others):
            assert plan_file(e, path, runtime_root) is None, path


def test_on_save_plans_only_the_file_saved(env, monkeypatch):
    """compile_saved writes the one file's .xpp without walking the environment: every other source
    may be unreadable (a directory listing or a read of it would fail) and the bytes are still --compile's."""
    from puppet_xpp.xpp.compile import compile_saved, planning

    assert compile_(str(env))[0] == 0
    want = xpps(env)
    shutil.rmtree(env / ".xpp")

    def no_walk(*args, **kwargs):
        raise AssertionError("the environment was walked")

    monkeypatch.setattr(planning, "walk_pp", no_walk)
    monkeypatch.setattr(planning, "plan", no_walk)
    path = env / "modules/apache/manifests/vhost.pp"
    out = compile_saved(str(env), str(path), level="8", strict="warning")
    assert out == str(env / ".xpp/modules/apache/manifests/vhost.xpp")
    assert xpps(env) == {"apache/manifests/vhost.xpp": want["apache/manifests/vhost.xpp"]}
    assert (
        compile_saved(str(env), str(env / "modules/apache/examples/init.pp"), level=None, strict=None) is None
    )


def test_a_bug_of_the_deep_checks_is_an_internal_error_at_its_statement(tmp_path, monkeypatch):
    """--compile --deep: a deep check that raises is an INTERNAL_ERROR at the statement whose check
    failed (the line and column --validate --deep gives), in the text output and the report's ``deep``
    list, and exit status 2 (from E8's proposal, brief e8 item 3)."""
    import importlib

    from puppet_xpp.server.analysis.deep import types
    from tests.test_deep_checks_internal import failing, write_env

    cli = importlib.import_module("puppet_xpp.server.cli.main")
    manifest = write_env(tmp_path / "production")
    env = tmp_path / "production"
    monkeypatch.setattr(types, "literal_mismatches", failing)
    monkeypatch.setattr(types, "matches", failing)
    out, err = io.StringIO(), io.StringIO()
    status = cli.main(["--compile", str(env), "--deep", "--report", str(tmp_path / "r.json")], out, err)
    assert status == 2, (out.getvalue(), err.getvalue())
    assert (
        "Error: Internal error (ZeroDivisionError): in the deep check of this resource: injected failure "
        f"of the type model (file: {manifest}, line: 3, column: 3)"
    ) in out.getvalue().splitlines()
    report = json.loads((tmp_path / "r.json").read_text())
    deep = [d for e in report["environments"] for f in e["files"] for d in f["deep"]]
    internal = [(d["line"], d["column"]) for d in deep if d["code"] == "INTERNAL_ERROR"]
    assert internal == [(2, 3), (3, 3), (6, 8), (7, 3)]  # (as --validate --deep: test_deep_checks_internal)
    assert [d["code"] for d in deep if d["code"] != "INTERNAL_ERROR"] == ["DEEP_UNKNOWN_CLASS"] * 2
