"""Issue 25 items 5 and 6, as an operator meets them, with the real Puppets (7.23 and OpenVox 8).

Item 6: the commands of runtime/xpp/README.md and the r10k hook of README.md and docs/compile.md, typed as
written on a fresh environment (only the environment directory, the log directory and Puppet's own
state directories are moved under the test's directory), give a tree the installed Puppet uses: its
``puppet apply --xpp`` parses no file, on Puppet 7.23 with its defaults and on OpenVox 8 with
``strict = warning``.  "The installed Puppet" is the ``puppet`` on ``PATH``: Debian's for 7.23, a
wrapper starting OpenVox's ``lib/`` the way ``/usr/bin/puppet`` does for 8.

Item 5: the environment's main manifest outside the environment (``manifest = /srv/shared/site.pp``, a
file or a directory) is compiled where the runtime looks for it and served from its ``.xpp`` (a catalog
as Puppet Server compiles it, and ``puppet apply`` of that manifest); a file outside the layout
(``puppet apply /tmp/x.pp`` with ``xpp = true`` in ``[main]``) is parsed without a warning.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.conformance.puppets import ruby_command
from tests.runtime.test_puppet_runtime import PUPPETS, REPO, RUNTIME_LIB, run, xpp_warnings

LEVEL_OF = {"7.23": "7.23", "8": "8"}
SUMMARY = re.compile(r"xpp: (\d+) manifests loaded from \.xpp, (\d+) parsed instead")


def _block(path: str, starts: str, fence: str = "```sh") -> str:
    """The first ``fence`` code block of the document at ``path`` whose text starts with ``starts``."""
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
        text = f.read()
    for m in re.finditer(re.escape(fence) + r"\n(.*?)\n```", text, re.S):
        if m.group(1).startswith(starts):
            return m.group(1) + "\n"
    raise AssertionError(f"no {fence} block starting with {starts!r} in {path}")


def _bin(tmp_path, puppet: str) -> str:
    """A directory whose ``puppet`` is the given Puppet (prepended to PATH)."""
    d = tmp_path / f"bin-{puppet}"
    d.mkdir(exist_ok=True)
    if puppet == "7.23":
        os.symlink("/usr/bin/puppet", d / "puppet")
    else:
        start = " ".join(ruby_command(puppet))
        (d / "puppet").write_text(f'#!/bin/sh\nexec {start} /usr/bin/puppet "$@"\n')
        (d / "puppet").chmod(0o755)
    return str(d)


def _shell_env(tmp_path, puppet: str) -> dict[str, str]:
    """The operator's shell: that Puppet first on PATH, puppet-xpp of this checkout, an empty cache."""
    pybin = os.path.dirname(sys.executable)
    path = os.pathsep.join([_bin(tmp_path, puppet), pybin, os.environ.get("PATH", "")])
    env = dict(os.environ, PATH=path, XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONPATH=REPO)
    for name in ("RUBYLIB", "RUBYOPT"):
        env.pop(name, None)
    return env


def _fresh(tmp_path, *names: str) -> str:
    """Environments copied from examples/production (no .xpp) under ``tmp_path/envs``."""
    root = tmp_path / "envs"
    for name in names:
        shutil.copytree(
            os.path.join(REPO, "examples", "production"), root / name, ignore=shutil.ignore_patterns(".xpp")
        )
    return str(root)


def _confdir(tmp_path, puppet: str, main: str = "") -> str:
    """Puppet's confdir for the test: OpenVox 8 runs ``strict = warning`` (the issue's set-up)."""
    d = tmp_path / f"conf-{puppet}"
    d.mkdir(exist_ok=True)
    lines = ["[main]", main]
    if puppet == "8":
        lines.append("strict = warning")
    (d / "puppet.conf").write_text("\n".join(lines) + "\n")
    return str(d)


def _isolated(tmp_path, puppet: str, envpath: str, main: str = "") -> str:
    """Options keeping Puppet's state under the test directory (not the commands' subject)."""
    return (
        f"--environmentpath {envpath} --confdir {_confdir(tmp_path, puppet, main)} "
        f"--vardir {tmp_path}/var --publicdir {tmp_path}/public --noop -v"
    )


def _sh(script: str, env: dict[str, str], cwd) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", "-c", script], env=env, cwd=str(cwd), capture_output=True, text=True, timeout=600
    )


def _served(text: str) -> tuple[int, int]:
    m = SUMMARY.search(text)
    assert m, text[-3000:]
    return int(m.group(1)), int(m.group(2))


@pytest.mark.parametrize("puppet", PUPPETS)
def test_runtime_readme_commands_as_written(puppet, tmp_path):
    """runtime/xpp/README.md's "Enabling it": compile, then ``puppet apply --xpp`` of site.pp: every
    Puppet-language file it loads comes from its .xpp, none parsed, no fallback warning."""
    envpath = _fresh(tmp_path, "production")
    script = _block("runtime/xpp/README.md", "env=")
    script = re.sub(r"^env=\S+", f"env={envpath}/production", script, flags=re.M)
    assert script.count("puppet apply --xpp ") == 1
    script = script.replace(
        "puppet apply --xpp ", f"puppet apply --xpp {_isolated(tmp_path, puppet, envpath)} "
    )
    out = _sh(script, _shell_env(tmp_path, puppet), tmp_path)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-3000:]
    served, parsed = _served(text)
    assert served >= 4 and parsed == 0, text[-3000:]
    assert "xpp: not using" not in text and "Notice: --puppet-version auto" not in text


HOOKS = [
    ("docs/compile.md", "#!/bin/sh\n# /usr/local/bin/r10k-xpp"),
    ("README.md", "#!/bin/sh\n# /usr/local/bin/r10k-xpp"),
]


@pytest.mark.parametrize("doc,start", HOOKS)
@pytest.mark.parametrize("puppet", PUPPETS)
def test_r10k_hook_as_written(puppet, doc, start, tmp_path):
    """The r10k ``postrun`` hook as the docs write it, given ``$modifiedenvs`` as r10k does (one argument,
    space-separated): each environment compiled at the level of the puppet on PATH (asked once: the
    second environment's report says cached), then ``puppet apply --xpp`` in each parses no file."""
    envpath = _fresh(tmp_path, "production", "staging")
    hook = _block(doc, start)
    hook = hook.replace("/etc/puppetlabs/code/environments", envpath)
    hook = hook.replace("/var/log/puppet-xpp", str(tmp_path / "log"))
    assert envpath in hook and str(tmp_path / "log") in hook
    (tmp_path / "r10k-xpp").write_text(hook)
    env = _shell_env(tmp_path, puppet)
    out = subprocess.run(
        ["sh", str(tmp_path / "r10k-xpp"), "production staging"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    chosen = []
    for name in ("production", "staging"):
        with open(tmp_path / "log" / f"{name}.json", encoding="utf-8") as f:
            report = json.load(f)
        assert report["exit_code"] == 0
        chosen.append(report["puppet_version"])
    assert [c["level"] for c in chosen] == [LEVEL_OF[puppet]] * 2
    assert [c["cached"] for c in chosen] == [False, True] and chosen[0]["version"].startswith(
        puppet.split(".")[0]
    )
    for name in ("production", "staging"):
        site = f"{envpath}/{name}/manifests/site.pp"
        apply = (
            f'RUBYLIB="$(puppet-xpp --runtime-path)/lib" RUBYOPT=-rpuppet_x/xpp/boot puppet apply --xpp '
            f"{_isolated(tmp_path, puppet, envpath)} --environment {name} {site}"
        )
        res = _sh(apply, env, tmp_path)
        text = res.stdout + res.stderr
        assert res.returncode == 0, text[-3000:]
        served, parsed = _served(text)
        assert served >= 4 and parsed == 0 and "xpp: not using" not in text, text[-3000:]


def _outside_env(tmp_path, directory: bool) -> tuple[str, str]:
    """An environment whose ``manifest`` lies outside it: (environment directory, manifest path)."""
    envpath = _fresh(tmp_path, "production")
    envdir = os.path.join(envpath, "production")
    shared = tmp_path / "srv" / "shared"
    if directory:
        (shared / "manifests" / "nodes").mkdir(parents=True)
        shutil.move(os.path.join(envdir, "manifests", "site.pp"), shared / "manifests" / "site.pp")
        (shared / "manifests" / "nodes" / "extra.pp").write_text(
            'notify { "from the shared nodes directory": }\n'
        )
        manifest = str(shared / "manifests")
    else:
        shared.mkdir(parents=True)
        shutil.move(os.path.join(envdir, "manifests", "site.pp"), shared / "site.pp")
        manifest = str(shared / "site.pp")
    shutil.rmtree(os.path.join(envdir, "manifests"))
    with open(os.path.join(envdir, "environment.conf"), "w", encoding="utf-8") as f:
        f.write(f"modulepath = modules\nmanifest = {manifest}\n")
    return envdir, manifest


@pytest.mark.parametrize("directory", [False, True], ids=["file", "directory"])
@pytest.mark.parametrize("puppet", PUPPETS)
def test_main_manifest_outside_the_environment_is_served(puppet, directory, tmp_path):
    """``manifest = <outside>``: --compile writes .xpp/modules/environment/manifests/<name>, and a catalog
    compiled as Puppet Server compiles it (the environment's manifest) and ``puppet apply`` of that
    manifest load every file from .xpp, with no warning."""
    envdir, manifest = _outside_env(tmp_path, directory)
    env = _shell_env(tmp_path, puppet)
    out = _sh(f"puppet-xpp --compile {envdir}", env, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    base = os.path.join(envdir, ".xpp", "modules", "environment", "manifests")
    want = ["site.xpp", "nodes/extra.xpp"] if directory else ["site.xpp"]
    assert all(os.path.isfile(os.path.join(base, w)) for w in want)
    plain = run(puppet, envdir, tmp_path, False)
    fast = run(puppet, envdir, tmp_path, True)
    assert fast["catalog"] == plain["catalog"]
    assert fast["served"] == plain["loaded"] >= 4 and fast["parsed"] == 0
    assert not xpp_warnings(fast) and not [lg for lg in fast["logs"] if lg["message"].startswith("xpp: not")]
    if directory:
        assert any("from the shared nodes directory" in json.dumps(r) for r in fast["catalog"]["resources"])
    site = os.path.join(manifest, "site.pp") if directory else manifest
    envpath = os.path.dirname(envdir)
    res = _sh(
        f"RUBYLIB={RUNTIME_LIB} RUBYOPT=-rpuppet_x/xpp/boot puppet apply --xpp {_isolated(tmp_path, puppet, envpath)} {site}",
        env,
        tmp_path,
    )
    text = res.stdout + res.stderr
    assert res.returncode == 0, text[-3000:]
    served, parsed = _served(text)
    assert served >= 4 and parsed == 0 and "xpp: not using" not in text, text[-3000:]


@pytest.mark.parametrize("puppet", PUPPETS)
def test_adhoc_apply_with_xpp_in_main_never_warns(puppet, tmp_path):
    """``xpp = true`` in ``[main]``, a compiled environment, and ``puppet apply /tmp/x.pp``: the file was
    never meant to have an .xpp; it is parsed and applied as without the runtime, with no warning."""
    envpath = _fresh(tmp_path, "production")
    env = _shell_env(tmp_path, puppet)
    assert _sh(f"puppet-xpp --compile {envpath}/production", env, tmp_path).returncode == 0
    adhoc = tmp_path / "x.pp"
    adhoc.write_text('notify { "ad hoc": }\n')
    opts = _isolated(tmp_path, puppet, envpath, main="xpp = true")
    res = _sh(f"RUBYLIB={RUNTIME_LIB} RUBYOPT=-rpuppet_x/xpp/boot puppet apply {opts} {adhoc}", env, tmp_path)
    text = res.stdout + res.stderr
    assert res.returncode == 0, text[-3000:]
    assert "Notify[ad hoc]" in text
    assert _served(text) == (0, 0)
    assert "Warning: xpp" not in text and "xpp: not using" not in text, text[-3000:]
