"""metadata.json and the modules a file sees, against the real Puppet 7.23.

The module-path lookup (``server/analysis/modules.py``) is compared with ``Puppet::Node::Environment#modules``
(names, directories, versions, forge names) on the corpus and on a made-up module path with shadowed,
invalid and broken modules.  Ruby runs once per question batch (``ruby -e``, Puppet's libraries as the
oracle loads them: ``tests/conformance/puppets.py``); nothing is cached from our own output.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from puppet_xpp.server.analysis import modules
from tests.conformance.puppets import missing_reason, ruby_command

CORPUS = Path("/usr/share/puppet/modules")

# Puppet with its settings in a scratch directory; reads a JSON request on stdin, prints a JSON answer.
_RUBY_PRELUDE = r"""
require 'json'
require 'tmpdir'
out = STDOUT.dup
STDOUT.reopen(STDERR)
require 'puppet'
tmp = Dir.mktmpdir('xpp-metadata-')
Puppet.initialize_settings(['--confdir', tmp, '--vardir', tmp, '--codedir', tmp, '--logdir', tmp,
                            '--rundir', tmp])
req = JSON.parse(STDIN.read)
"""


def ask_puppet(body: str, request: Any) -> Any:
    """Run ``body`` (Ruby: reads ``req``, sets ``result``) in a Puppet 7.23 process; its JSON answer."""
    reason = missing_reason("7.23")
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    code = _RUBY_PRELUDE + body + "\nout.write(JSON.generate(result))\n"
    done = subprocess.run(
        [*ruby_command("7.23"), "-e", code],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


_PUPPET_MODULES = r"""
env = Puppet::Node::Environment.create(:xpp, req['modulepath'])
result = env.modules.map do |m|
  [m.name, m.path, m.version, m.forge_name]
end
"""

_PUPPET_BY_FORGE_NAME = r"""
env = Puppet::Node::Environment.create(:xpp, req['modulepath'])
result = req['names'].map do |n|
  m = env.module_by_forge_name(n.tr('-', '/'))
  m && m.path
end
"""


def ours(modulepath: list[str]) -> list[list[Any]]:
    """Our modules as Puppet lists them: the ones it loads (no problem), forge name with a slash."""
    found = modules.modules_on_path(modulepath)
    return [
        [m.name, m.directory, m.version, m.forge_name.replace("-", "/", 1) if m.forge_name else None]
        for m in found.values()
        if m.problem is None
    ]


def puppet_listed(answer: list[list[Any]]) -> list[list[Any]]:
    """Puppet's list with a version that is not a string as None (we keep versions as text only)."""
    return sorted([n, p, v if isinstance(v, str) else None, f] for n, p, v, f in answer)


def test_modules_on_the_corpus_path_are_puppets() -> None:
    if not CORPUS.is_dir():
        pytest.skip("corpus not installed")
    path = [str(CORPUS)]
    expected = ask_puppet(_PUPPET_MODULES, {"modulepath": path})
    assert len(expected) > 40
    assert sorted(ours(path)) == puppet_listed(expected)
    found = modules.modules_on_path(path)
    for m in found.values():
        assert modules.find_module(path, m.name) == m
    # a dependency's module: Puppet's module_by_forge_name, for each full name (with both separators)
    names = sorted({n for m in found.values() if m.full_name for n in (m.full_name, m.forge_name)})
    names += ["puppetlabs-nothere", "someone-stdlib"]
    by_forge = ask_puppet(_PUPPET_BY_FORGE_NAME, {"modulepath": path, "names": names})
    assert any(p is None for p in by_forge) and any(p is not None for p in by_forge)
    for name, puppets in zip(names, by_forge, strict=True):
        module = modules.find_by_forge_name(path, name)
        assert (module.directory if module else None) == puppets, name


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_modules_shadowed_invalid_and_broken_as_puppet(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    _write(
        first / "stdlib" / "metadata.json",
        json.dumps(
            {
                "name": "puppetlabs-stdlib",
                "version": "9.1.0",
                "author": "puppetlabs",
                "license": "Apache-2.0",
                "source": "s",
                "dependencies": [],
            }
        ),
    )
    _write(second / "stdlib" / "metadata.json", json.dumps({"name": "other-stdlib", "version": "1.0.0"}))
    _write(second / "concat" / "metadata.json", json.dumps({"name": "puppetlabs/concat", "version": "7.0.0"}))
    _write(second / "broken" / "metadata.json", '{"name": "a-broken", "version": ')
    _write(second / "bare" / "manifests" / "init.pp", "class bare {}\n")
    _write(second / "Upper" / "manifests" / "init.pp", "class upper {}\n")
    _write(second / "with-dash" / "manifests" / "init.pp", "class x {}\n")
    _write(second / "afile", "not a module\n")
    complete = {"author": "x", "license": "MIT", "source": "s", "dependencies": []}
    _write(
        second / "numbered" / "metadata.json", json.dumps({"name": "x-numbered", "version": 3, **complete})
    )
    _write(
        second / "loaded" / "metadata.json", json.dumps({"name": "x-loaded", "version": "2.0.0", **complete})
    )
    bad_deps = {**complete, "dependencies": {"name": "a-b"}}
    _write(
        second / "baddeps" / "metadata.json",
        json.dumps({"name": "x-baddeps", "version": "1.0.0", **bad_deps}),
    )
    _write(second / "empty" / "metadata.json", "{}")
    path = [str(first), str(tmp_path / "absent"), str(second)]
    expected = ask_puppet(_PUPPET_MODULES, {"modulepath": path})
    assert sorted(ours(path)) == puppet_listed(expected)
    stdlib = modules.find_module(path, "puppetlabs-stdlib")
    assert stdlib is not None and stdlib.version == "9.1.0" and stdlib.author == "puppetlabs"
    assert stdlib.entry_file == str(first / "stdlib" / "metadata.json")
    bare = modules.find_module(path, "bare")
    assert bare is not None and bare.entry_file == str(second / "bare" / "manifests" / "init.pp")
    assert modules.find_module(path, "Upper") is None
    assert modules.find_module(path, "nothere") is None
    # Puppet does not load a module whose metadata.json lacks a key it needs, nor one shadowed by it
    # (the modules we list with a problem are exactly those Puppet drops)
    concat = modules.find_module(path, "concat")
    assert concat is not None and concat.problem == "its metadata.json has no 'source'"
    listed = modules.modules_on_path(path)
    with_problem = sorted(m.name for m in listed.values() if m.problem)
    assert with_problem == ["baddeps", "concat"]
    assert with_problem == sorted(set(listed) - {n for n, *_ in expected})


def test_modulepath_for_a_metadata_file_is_the_environment_models(tmp_path: Path) -> None:
    """A module's own metadata.json sees the modules beside it: an environment's module path, or for a
    module checked out on its own, the directory holding it (xpp.environment.infer_module)."""
    env = tmp_path / "env"
    _write(env / "environment.conf", "modulepath = modules:site\n")
    _write(env / "modules" / "app" / "metadata.json", json.dumps({"name": "me-app", "version": "1.0.0"}))
    _write(env / "site" / "role" / "manifests" / "init.pp", "class role {}\n")
    path = modules.modulepath_for(str(env / "modules" / "app" / "metadata.json"))
    assert path == (str(env / "modules"), str(env / "site"))
    assert sorted(modules.modules_on_path(path)) == ["app", "role"]
    alone = tmp_path / "checkout" / "puppet-app"
    _write(alone / "metadata.json", json.dumps({"name": "me-app", "version": "1.0.0"}))
    assert modules.modulepath_for(str(alone / "metadata.json")) == (str(tmp_path / "checkout"),)
