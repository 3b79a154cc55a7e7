"""The module-location error under ``--compile --runtime-root`` (issue 26 item 11).

ILLEGAL_DEFINITION_LOCATION names the file ("unacceptable in file '...'").  Compiled in a staging directory
for another runtime root, the ``.xpp`` records the runtime path there too (the recorded name, where Puppet
reads the file), not the staging path: the same environment compiled in two directories for one runtime
root gives byte-identical ``.xpp`` files, and Puppet 7.23 / OpenVox 8, running the environment where the
runtime root says, replay the error Puppet's own parse gives there.
"""

from __future__ import annotations

import io
import os
import shutil

import pytest

from puppet_xpp.server.cli.main import main as cli
from tests.runtime.test_puppet_runtime import LEVEL, PUPPETS, REPO, run, xpp_warnings

BAD = (
    "\nclass base_misplaced { }\n"  # a class named outside module base's namespace, in base/manifests/user.pp
)


def _staged(root, name: str) -> str:
    """A copy of examples/production under ``root/name/production`` with the misplaced class."""
    d = os.path.join(str(root), name, "production")
    shutil.copytree(os.path.join(REPO, "examples", "production"), d, ignore=shutil.ignore_patterns(".xpp"))
    with open(os.path.join(d, "modules", "base", "manifests", "user.pp"), "a", encoding="utf-8") as f:
        f.write(BAD)
    return d


def _compile(envdir: str, runtime_root: str, puppet: str = "7.23") -> str:
    level, strict = LEVEL[puppet]
    out, err = io.StringIO(), io.StringIO()
    argv = [
        "--compile",
        envdir,
        "--runtime-root",
        runtime_root,
        "--puppet-version",
        level,
        "--strict",
        strict,
    ]
    assert cli(argv, out=out, err=err) == 1, out.getvalue() + err.getvalue()
    return out.getvalue()


def _xpps(envdir: str) -> dict[str, bytes]:
    base = os.path.join(envdir, ".xpp", "modules")
    found = {}
    for top, _dirs, files in os.walk(base):
        for f in files:
            if f.endswith(".xpp"):
                path = os.path.join(top, f)
                with open(path, "rb") as fh:
                    found[os.path.relpath(path, base)] = fh.read()
    return found


def test_two_staging_directories_give_the_same_bytes(tmp_path):
    runtime = "/etc/puppetlabs/code/environments/production"
    one, two = _staged(tmp_path, "one"), _staged(tmp_path / "elsewhere", "two")
    printed = _compile(one, runtime)
    _compile(two, runtime)
    a, b = _xpps(one), _xpps(two)
    assert a and a == b
    user = a[os.path.join("base", "manifests", "user.xpp")]
    assert f"unacceptable in file '{runtime}/modules/base/manifests/user.pp'".encode() in user
    assert str(tmp_path).encode() not in user
    assert f"unacceptable in file '{runtime}/modules/base/manifests/user.pp'" in printed


@pytest.mark.parametrize("puppet", PUPPETS)
def test_the_runtime_replays_the_runtime_path(puppet, tmp_path):
    """Compiled in a staging directory, copied to the runtime root, run there: Puppet's own error."""
    runtime = os.path.join(str(tmp_path), "envs", "production")
    staging = _staged(tmp_path, "staging")
    _compile(staging, runtime, puppet)
    shutil.copytree(staging, runtime)
    plain = run(puppet, runtime, tmp_path, False)
    fast = run(puppet, runtime, tmp_path, True)
    assert "Unacceptable location" in plain["error"]["message"], plain
    assert f"'{runtime}/modules/base/manifests/user.pp'" in plain["error"]["message"]
    assert fast["error"] == plain["error"]
    assert not xpp_warnings(fast) and fast["served"] == fast["loaded"] == plain["loaded"]
