"""The Neovim plugin's commands over the server's puppet-vscode messages (issue 29 item 4), in a real
headless Neovim (0.7 with ``setup()``, 0.11 with ``vim.lsp.enable('puppet_xpp')``) against the real server,
each checked against the real tool: ``:PuppetNodeGraph``'s DOT (of the buffer's text, an unsaved line
included) against the relationship graph Puppet writes itself (``puppet apply --noop --graph``), ``:PuppetResource user root`` against ``puppet resource
user root``, ``:PuppetFacts`` against ``facter --json --show-legacy``, ``:PuppetFixAll`` against
``puppet-lint --fix``; and the client attaching to a ``Puppetfile`` (filetype ``puppetfile``) and a
module's ``metadata.json`` (its diagnostics name the dependency ``puppet module list`` says is missing),
not to other JSON."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.editors import REPO, editor_tool_missing, nvim_binaries, run_nvim_script, server_wrapper
from tests.lsp.test_custom_messages import LINTED, dot_graph
from tests.lsp.test_puppetfile import r10k_check, r10k_message

SCRIPT = Path(__file__).with_name("nvim_issue29.lua")

# an explicit chain, an autorequire (the parent directory), a subscribe, the facts reaching the compile
GRAPH = """\
$out = '@OUT@'
file { $out:
  ensure => directory,
}
file { "${out}/motd":
  ensure  => file,
  content => "hello\\n",
}
exec { 'demo refresh':
  command     => '/bin/true',
  refreshonly => true,
  subscribe   => File["${out}/motd"],
}
notify { "family ${facts['os']['family']}": }
notify { 'first': }
-> notify { 'second': }
"""
# a line added in the editor and not saved: the node graph is of the editor's text
UNSAVED = "notify { 'unsaved': }"
# evaluated, it fails: Puppet's own error message is what the editor shows
BROKEN = "notify { 'before': }\nfail('puppet-xpp: this catalog does not compile')\n"
# the last line repeats a module: `r10k puppetfile check` refuses it
PUPPETFILE = """\
forge 'https://forge.puppet.com'

mod 'puppetlabs/stdlib', '9.4.1'
mod 'demo', :local => true
mod 'stdlib', :git => 'https://example.invalid/stdlib.git', :ref => 'main'
"""
METADATA = {
    "name": "example-demo",
    "version": "1.0.0",
    "author": "example",
    "summary": "A module for the test.",
    "license": "Apache-2.0",
    "source": "https://example.invalid/demo",
    # not on the module path: Puppet's `puppet module list` warns "Missing dependency 'puppetlabs-stdlib'"
    "dependencies": [{"name": "puppetlabs/stdlib", "version_requirement": ">= 4.0.0 < 10.0.0"}],
}


def run(argv: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False, **kw)


def environment_files(root: Path) -> dict[str, Path]:
    """The test environment below ``root``, by path relative to it."""
    files = {
        "environment.conf": "modulepath = modules\n",
        "manifests/graph.pp": GRAPH.replace("@OUT@", str(root / "out")),
        "manifests/resource.pp": "# top\n# bottom\n",
        "manifests/broken.pp": BROKEN,
        "modules/demo/manifests/lint.pp": LINTED,
        "modules/demo/metadata.json": json.dumps(METADATA, indent=2) + "\n",
        "Puppetfile": PUPPETFILE,
        "data.json": '{"a": 1}\n',
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return {rel: root / rel for rel in files}


def dot_lines(lines: list[str]) -> tuple[set[str], set[tuple[str, str]]]:
    """The vertices and edges of the DOT text in the buffer (Graphviz's quoted IDs, unescaped)."""
    quoted = r'"((?:[^"\\]|\\.)*)"'

    def unescape(s: str) -> str:
        return re.sub(r"\\(.)", r"\1", s)

    vertices = {unescape(m[1]) for line in lines if (m := re.fullmatch(rf"\s*{quoted};", line))}
    edges = {
        (unescape(m[1]), unescape(m[2]))
        for line in lines
        if (m := re.fullmatch(rf"\s*{quoted} -> {quoted};", line))
    }
    return vertices, edges


def puppet_graph(env: Path, manifest: Path, tmp_path: Path) -> tuple[set[str], set[tuple[str, str]]]:
    """The relationship graph Puppet itself writes for ``manifest`` with ``env``'s modules (``puppet apply
    --noop --graph``), as the incumbent's node graph shows it (test_custom_messages.dot_graph)."""
    state = tmp_path / "state"
    argv = ["puppet", "apply", "--noop", "--graph", "--graphdir", str(tmp_path / "graphs")]
    argv += [f"--{k}={state}" for k in ("confdir", "codedir", "logdir", "rundir")]
    argv += [f"--vardir={state / 'var'}", "--modulepath", str(env / "modules"), str(manifest)]
    done = run(argv)
    assert done.returncode in (0, 2), done.stderr
    return dot_graph(tmp_path / "graphs" / "expanded_relationships.dot")


def puppet_error(env: Path, manifest: Path, tmp_path: Path) -> str:
    """The message of the error ``puppet apply --noop`` stops ``manifest`` with (its last ``Error:`` line, up
    to the position Puppet appends)."""
    state = tmp_path / "state-error"
    argv = ["puppet", "apply", "--noop", "--color=false", f"--vardir={state / 'var'}"]
    argv += [f"--{k}={state}" for k in ("confdir", "codedir", "logdir", "rundir")]
    done = run([*argv, "--modulepath", str(env / "modules"), str(manifest)])
    assert done.returncode == 1, done.stdout + done.stderr
    line = [x for x in done.stderr.splitlines() if x.startswith("Error: ")][-1]  # after facter's own
    return line.removeprefix("Error: ").split(" (file: ")[0].split(" on node ")[0]


def r10k_refusal() -> str:
    """What ``r10k puppetfile check`` says of :data:`PUPPETFILE` (it must refuse it)."""
    if shutil.which("r10k") is None:
        pytest.skip("r10k is not installed (Debian package r10k)")
    ok, said = r10k_check(PUPPETFILE)
    assert not ok, said
    return r10k_message(said)[0]


def check_facts(shown: dict[str, Any]) -> None:
    """``shown`` are facter's facts: every fact ``facter --json --show-legacy`` gives, the stable ones equal."""
    own = json.loads(run(["facter", "--json", "--show-legacy"]).stdout)
    assert set(shown) == set(own)
    for stable in ("os", "kernel", "kernelrelease", "hostname", "architecture", "osfamily", "processorcount"):
        assert shown[stable] == own[stable], stable


def missing_dependencies(env: Path, tmp_path: Path) -> set[str]:
    """The dependencies ``puppet module list`` says are missing from ``env``'s modules."""
    state = tmp_path / "module-list"
    listed = run(
        [
            "puppet",
            "module",
            "list",
            "--modulepath",
            str(env / "modules"),
            f"--confdir={state}",
            f"--vardir={state / 'var'}",
            "--color=false",
        ]
    )
    return set(re.findall(r"Missing dependency '([^']+)'", listed.stdout + listed.stderr))


def _need(tool: str) -> str:
    found = shutil.which(tool)
    if found is None:
        pytest.skip(f"{tool} is not installed")
    return found


@pytest.mark.parametrize(("version", "mode"), [("0.7", "setup"), ("0.11", "enable")])
def test_neovim_puppet_commands(version: str, mode: str, tmp_path: Path) -> None:
    nvim = nvim_binaries().get(version)
    if nvim is None:
        editor_tool_missing(f"Neovim {version} (installed by .ci/editors)")
    for tool in ("puppet", "facter", "puppet-lint"):
        _need(tool)
    env = tmp_path / "production"
    files = environment_files(env)
    spec = {
        "plugin_dir": str(REPO / "editors" / "neovim"),
        "mode": mode,
        "cmd": [str(server_wrapper(tmp_path / "bin")), "--stdio"],
        "graph_manifest": str(files["manifests/graph.pp"]),
        "graph_unsaved": UNSAVED,
        "broken_manifest": str(files["manifests/broken.pp"]),
        "resource_manifest": str(files["manifests/resource.pp"]),
        "resource": {"type": "user", "title": "root"},
        "lint_manifest": str(files["modules/demo/manifests/lint.pp"]),
        "puppetfile": str(files["Puppetfile"]),
        "metadata": str(files["modules/demo/metadata.json"]),
        "other_json": str(files["data.json"]),
        "result": str(tmp_path / "result.json"),
        "step_ms": 60000,
    }
    res = run_nvim_script(nvim, SCRIPT, tmp_path, spec, 600)
    out = res.pop("_output")[-4000:]
    ctx = json.dumps(res, indent=1)[-8000:] + "\n" + out
    assert res["nvim"].startswith(version + "."), ctx
    assert "error" not in res, ctx
    assert res["commands"] == {
        c: 2 for c in ("PuppetNodeGraph", "PuppetResource", "PuppetFacts", "PuppetFixAll")
    }
    failed = {name: step for name, step in res["steps"].items() if not step["ok"]}
    assert failed == {}, ctx

    # :PuppetNodeGraph: a DOT scratch buffer with Puppet's own relationship graph of the same manifest
    graph = res["graph"]
    assert graph["filetype"] == "dot" and graph["buftype"] == "nofile" and graph["current"], ctx
    assert graph["lines"][0] == 'digraph "graph.pp" {' and graph["lines"][-1] == "}", ctx
    got_vertices, got_edges = dot_lines(graph["lines"])
    edited = tmp_path / "edited" / "graph.pp"
    edited.parent.mkdir()
    edited.write_text(files["manifests/graph.pp"].read_text() + UNSAVED + "\n")
    vertices, edges = puppet_graph(env, edited, tmp_path)
    assert "Notify[unsaved]" in vertices
    assert got_vertices == vertices, ctx
    assert got_edges == edges, ctx
    motd = f"File[{env / 'out'}/motd]"
    assert {
        (f"File[{env / 'out'}]", motd),
        (motd, "Exec[demo refresh]"),
        ("Notify[first]", "Notify[second]"),
    } <= got_edges
    family = json.loads(run(["facter", "--json", "os.family"]).stdout)["os.family"]
    assert f"Notify[family {family}]" in got_vertices, ctx

    # a manifest Puppet cannot compile: Puppet's own error as an error message, no graph buffer
    own = puppet_error(env, files["manifests/broken.pp"], tmp_path)
    said = res["graph_error"]["notes"]
    assert [n["level"] for n in said] == [4] and own in said[0]["msg"], ctx  # vim.log.levels.ERROR
    assert res["graph_error"]["shown"] is False, ctx

    # :PuppetResource user root: what `puppet resource user root` prints, below the line the cursor was on
    printed = run(["puppet", "resource", "user", "root"])
    assert printed.returncode == 0 and printed.stdout.startswith("user { 'root':"), printed.stderr
    assert res["resource"] == ["# top", *printed.stdout.splitlines(), "# bottom"], ctx

    # :PuppetFacts: facter's facts as JSON
    facts = json.loads("\n".join(res["facts"]["lines"]))
    assert res["facts"]["filetype"] == "json", ctx
    check_facts(facts)

    # :PuppetFixAll: the buffer is what puppet-lint --fix makes of the file
    assert res["lint_diagnostics"] > 0, ctx
    copy = tmp_path / "lint" / "modules/demo/manifests/lint.pp"
    copy.parent.mkdir(parents=True)
    copy.write_text(LINTED)
    fixed = run(["puppet-lint", "--fix", "modules/demo/manifests/lint.pp"], cwd=tmp_path / "lint")
    assert copy.read_text() != LINTED, fixed.stdout
    assert res["fixed"] == copy.read_text().splitlines(), ctx

    # the client serves a Puppetfile and a module's metadata.json, not other JSON
    attach = res["attach"]
    assert attach[str(files["Puppetfile"])] == {"filetype": "puppetfile", "attached": True}, ctx
    assert attach[str(files["modules/demo/metadata.json"])] == {"filetype": "json", "attached": True}, ctx
    assert attach[str(files["data.json"])] == {"filetype": "json", "attached": False}, ctx
    # the Puppetfile's diagnostics reach its buffer: r10k's refusal, as an error
    refusal = r10k_refusal()
    repeated = len(PUPPETFILE.splitlines()) - 1  # the last line repeats stdlib
    said = [(d["lnum"], d["severity"]) for d in res["puppetfile_diagnostics"] if refusal in d["message"]]
    assert said == [(repeated, 1)], ctx
    # metadata.json's diagnostics reach its buffer: the dependency Puppet says is missing is named
    assert missing_dependencies(env, tmp_path) == {"puppetlabs-stdlib"}
    named = [d for d in res["metadata_diagnostics"] if "stdlib" in d["message"]]
    assert named, ctx
