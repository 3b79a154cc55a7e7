"""``--compile --puppet-version auto`` (the default; xpp/compile/installed.py): the level of the ``puppet``
on PATH, asked once and cached, recorded in the report; and which settings an ``.xpp`` records
(grammar/levels.py ``depends_on``).

The ``puppet`` on PATH is the real one (Debian's Puppet 7.23, OpenVox 8 started as /usr/bin/puppet
starts it), behind a wrapper that counts how often it is started.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from puppet_xpp.grammar import levels
from puppet_xpp.xpp.result import read_document
from tests.conformance.puppets import missing_reason, ruby_command
from tests.test_levels import env  # noqa: F401  (modules/m/manifests/init.pp: a DUPLICATE_KEY and more)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLAIN = "class m::plain {\n  notice('plain')\n}\n"
PUPPETS = [
    pytest.param(p, marks=pytest.mark.skipif(missing_reason(p) is not None, reason=str(missing_reason(p))))
    for p in ("7.23", "8")
]


def _bin(tmp_path, puppet: str | None) -> str:
    """A PATH directory with this Python and, unless None, a counting wrapper around that Puppet."""
    d = tmp_path / f"bin-{puppet}"
    d.mkdir(exist_ok=True)
    os.symlink(sys.executable, d / "python3")
    if puppet is not None:
        start = "/usr/bin/puppet" if puppet == "7.23" else " ".join(ruby_command(puppet)) + " /usr/bin/puppet"
        (d / "puppet").write_text(f'#!/bin/sh\necho started >> {tmp_path}/count\nexec {start} "$@"\n')
        (d / "puppet").chmod(0o755)
    return str(d)


def _compile(tmp_path, bindir: str, *argv: str, system: bool = True) -> tuple[int, dict, str]:
    """--compile in a process of its own; ``system``: /usr/bin and /bin on PATH too (with Debian's puppet)."""
    report = tmp_path / "report.json"
    envv = dict(
        os.environ,
        PATH=f"{bindir}:/usr/bin:/bin" if system else bindir,
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        PYTHONPATH=REPO,
    )
    out = subprocess.run(
        [
            os.path.join(bindir, "python3"),
            "-m",
            "puppet_xpp",
            "--compile",
            *argv,
            "--report",
            str(report),
            "-j",
            "1",
        ],
        env=envv,
        capture_output=True,
        text=True,
        timeout=600,
    )
    with open(report, encoding="utf-8") as f:
        return out.returncode, json.load(f), out.stderr


def _started(tmp_path) -> int:
    p = tmp_path / "count"
    return len(p.read_text().splitlines()) if p.exists() else 0


def _settings(root, name: str) -> dict:
    return read_document(
        (root / ".xpp" / "modules" / "m" / "manifests" / f"{name}.xpp").read_bytes()
    ).settings


@pytest.mark.parametrize("puppet", PUPPETS)
def test_auto_takes_the_level_of_the_puppet_on_path_once(puppet, env, tmp_path):  # noqa: F811
    bindir = _bin(tmp_path, puppet)
    rc, report, err = _compile(tmp_path, bindir, str(env))
    chosen = report["puppet_version"]
    assert chosen["source"] == "auto" and chosen["level"] == puppet and not chosen["cached"]
    assert chosen["version"].startswith("7.23." if puppet == "7.23" else "8.")
    assert _started(tmp_path) == 1 and "Notice" not in err
    # the file whose result depends on the settings records them; DUPLICATE_KEY is an error at 8
    assert _settings(env, "init") == {
        "puppet_version": puppet,
        "strict": levels.level(puppet).strict,
        "tasks": False,
    }
    assert rc == (1 if puppet == "8" else 0)
    # another process: the cached answer, puppet not started again
    rc, report, _ = _compile(tmp_path, bindir, str(env))
    assert report["puppet_version"]["cached"] and report["puppet_version"]["level"] == puppet
    assert _started(tmp_path) == 1
    # the command replaced (a package upgrade rewrites it): asked again
    wrapper = os.path.join(bindir, "puppet")
    st = os.stat(wrapper)
    os.utime(wrapper, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    _compile(tmp_path, bindir, str(env))
    assert _started(tmp_path) == 2


def test_a_level_given_is_not_asked_for(env, tmp_path):  # noqa: F811
    bindir = _bin(tmp_path, "7.23")
    _rc, report, _ = _compile(tmp_path, bindir, str(env), "--puppet-version", "7")
    assert report["puppet_version"] == {"level": "7", "source": "given"} and _started(tmp_path) == 0
    (env / ".puppet-xpp.toml").write_text('level = "7"\n')  # the project's level wins over auto too
    _rc, report, _ = _compile(tmp_path, bindir, str(env))
    assert report["puppet_version"] == {"level": "7", "source": "given"} and _started(tmp_path) == 0
    assert _settings(env, "init")["puppet_version"] == "7"


def test_no_puppet_on_path_compiles_at_8_with_a_notice(env, tmp_path):  # noqa: F811
    (env / "modules" / "m" / "manifests" / "plain.pp").write_text(PLAIN)
    rc, report, err = _compile(tmp_path, _bin(tmp_path, None), str(env), "--strict", "warning", system=False)
    assert (
        rc == 0 and report["puppet_version"]["level"] == "8" and report["puppet_version"]["command"] is None
    )
    assert "Notice: --puppet-version auto: no puppet on PATH: language level 8" in err
    assert _settings(env, "init") == {"puppet_version": "8", "strict": "warning", "tasks": False}
    # a result that no setting changes records none: every Puppet uses it
    assert _settings(env, "plain") == {"tasks": False}


def test_the_level_of_a_release_is_the_runtimes():
    """grammar.levels.level_of_puppet and runtime/xpp's PuppetX::Xpp::Runtime.level name the same level
    for every Puppet 7 and 8 release shape."""
    versions = ["7.0.0", "7.23.0", "7.28.0", "7.29.0", "7.34.1", "8.0.0", "8.10.0", "8.28.1", "9.0.0"]
    code = (
        "require 'puppet'; require 'puppet_x/xpp/runtime'; "
        "ARGV.each { |v| Puppet.version = v; PuppetX::Xpp::Runtime.instance_variable_set(:@level, nil); "
        "puts PuppetX::Xpp::Runtime.level }"
    )
    lib = os.path.join(REPO, "runtime", "xpp", "lib")
    out = subprocess.run(
        ["ruby", "-I", lib, "-e", code, *versions], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    ruby = out.stdout.split()
    ours = [levels.level_of_puppet(v).name for v in versions]  # type: ignore[union-attr]
    assert ours == ruby
    assert levels.level_of_puppet("6.28.0") is None and levels.level_of_puppet("not a version") is None
