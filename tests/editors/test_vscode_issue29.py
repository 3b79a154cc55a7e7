"""The VS Code extension's commands over the server's puppet-vscode messages (issue 29 item 4): the bundled
extension from the ``.vsix``, activated with a recording stand-in for VS Code's API
(editors/vscode/test/e2e/commands.e2e.ts) and its own language client talking to the real server, runs
"Puppet: Show Node Graph", "Puppet: Resource", "Puppet: Show Facts" and "Puppet: Fix all lint problems";
what the user would see is checked against the real tools: the status bar's Puppet version against
``puppet --version``, the graph of the editor's unsaved text against the relationship graph Puppet writes
(``puppet apply --noop --graph``), the inserted text against ``puppet resource user root``, the facts
document against ``facter --json --show-legacy``, the fixed unsaved text against ``puppet-lint --fix``;
the client sends the server a Puppetfile and metadata.json (whose diagnostic names the dependency ``puppet
module list`` says is missing), not other JSON. The package's contributions
(commands, the ``puppetfile`` language for files named Puppetfile, metadata.json in the document
selector) are read from the ``.vsix``.

VS Code itself cannot run here (no VS Code binary in CI): the editor is the stand-in, the rest is real.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import zipfile
from pathlib import Path

import pytest

import puppet_xpp
from tests.editors import VSCODE, server_wrapper
from tests.editors.test_neovim_issue29 import (
    BROKEN,
    PUPPETFILE,
    UNSAVED,
    check_facts,
    environment_files,
    missing_dependencies,
    puppet_error,
    puppet_graph,
    r10k_refusal,
    run,
)
from tests.editors.test_vscode import built, vsix  # noqa: F401 (the fixtures: tsc, the .vsix)
from tests.lsp.test_custom_messages import LINTED

COMMANDS = {
    "puppetXpp.showNodeGraph": "Show Node Graph",
    "puppetXpp.puppetResource": "Resource",
    "puppetXpp.showFacts": "Show Facts",
    "puppetXpp.fixAll": "Fix all lint problems",
}


def test_vsix_contributes_the_commands_and_puppetfile(vsix: Path) -> None:  # noqa: F811
    with zipfile.ZipFile(vsix) as z:
        manifest = json.loads(z.read("extension/package.json"))
        names = set(z.namelist())
        bundle = z.read("extension/dist/extension.js").decode()
        grammars = {
            g["language"]: (g, json.loads(z.read(f"extension/{g['path'][2:]}")))
            for g in manifest["contributes"]["grammars"]
        }
    contributed = {c["command"]: (c["category"], c["title"]) for c in manifest["contributes"]["commands"]}
    for command, title in COMMANDS.items():
        assert contributed[command] == ("Puppet", title)
    # puppet-vscode's own language id and file name for a Puppetfile, coloured as Ruby
    (puppetfile,) = [lang for lang in manifest["contributes"]["languages"] if lang["id"] == "puppetfile"]
    assert puppetfile["filenames"] == ["Puppetfile"]
    assert f"extension/{puppetfile['configuration'][2:]}" in names
    grammar, text = grammars["puppetfile"]
    assert text["scopeName"] == grammar["scopeName"] and text["patterns"] == [{"include": "source.ruby"}]
    # the client's document selector (minified bundle: the literal values)
    assert re.search(r'language:\s*"puppetfile"', bundle) and re.search(
        r'pattern:\s*"\*\*/metadata\.json"', bundle
    )


def test_commands_against_the_server(built: Path, vsix: Path, tmp_path: Path) -> None:  # noqa: F811
    for tool in ("puppet", "facter", "puppet-lint"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    env = tmp_path / "production"
    files = environment_files(env)
    graph_text = files["manifests/graph.pp"].read_text() + UNSAVED + "\n"
    lint_text = LINTED.replace('"plain"', '"unsaved"')
    spec = {
        "bundle": str(vsix.parent / "unpacked" / "extension" / "dist" / "extension.js"),
        "path": f"{server_wrapper(tmp_path / 'bin').parent}:/usr/bin:/bin",
        "workspace": str(env),
        "storage": str(tmp_path / "storage"),
        "version": puppet_xpp.__version__,
        # the editor's text, not saved: the server has it from didOpen
        "graph": {"file": str(files["manifests/graph.pp"]), "text": graph_text},
        # the cursor on line 1 ("# bottom"): the text goes at the start of that line, as puppet-vscode does
        "graphError": {"file": str(files["manifests/broken.pp"]), "text": BROKEN},
        "resource": {"file": str(files["manifests/resource.pp"]), "line": 1, "inputs": ["user", "root"]},
        "lint": {"file": str(files["modules/demo/manifests/lint.pp"]), "text": lint_text},
        "documents": [
            {"file": str(files["Puppetfile"]), "languageId": "puppetfile"},
            {"file": str(files["modules/demo/metadata.json"]), "languageId": "json"},
            {"file": str(files["data.json"]), "languageId": "json"},
        ],
        "result": str(tmp_path / "result.json"),
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    node = subprocess.Popen(
        ["node", str(VSCODE / "out/test/e2e/commands.e2e.js")],
        cwd=tmp_path,
        env={**os.environ, "PUPPET_XPP_E2E": str(tmp_path / "spec.json")},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # node and the server it starts: one process group, killed below
    )
    try:
        printed, _ = node.communicate(timeout=600)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(node.pid, signal.SIGKILL)
    assert node.returncode == 0, printed[-6000:]
    res = json.loads((tmp_path / "result.json").read_text())
    ctx = json.dumps(res, indent=1)[-6000:]
    assert set(COMMANDS) <= set(res["commands"]), ctx
    # nothing went wrong: the one message is the fixes' count
    assert res["notifications"] == [
        {"kind": "information", "text": f"Puppet XPP: fixed {res['fixes']} lint problems."}
    ], ctx

    # the client sends the Puppetfile and metadata.json (its selector), not another JSON file; metadata.json's
    # diagnostics name the dependency Puppet says is missing
    uris = {name: files[name].as_uri() for name in ("Puppetfile", "modules/demo/metadata.json", "data.json")}
    assert res["didOpen"] == [uris["Puppetfile"], uris["modules/demo/metadata.json"]], ctx
    assert missing_dependencies(env, tmp_path) == {"puppetlabs-stdlib"}
    assert any("stdlib" in d["message"] for d in res["diagnostics"][uris["modules/demo/metadata.json"]]), ctx
    assert uris["data.json"] not in res["diagnostics"], ctx
    refusal = r10k_refusal()  # the Puppetfile repeats a module
    said = [
        (d["line"], d["severity"]) for d in res["diagnostics"][uris["Puppetfile"]] if refusal in d["message"]
    ]
    assert said == [(len(PUPPETFILE.splitlines()) - 1, 0)], (
        ctx
    )  # on the last line, which repeats stdlib; an error

    # the status bar: the installed Puppet's version, the facts view behind it; hidden once stopped
    puppet_version = run(["puppet", "--version"]).stdout.strip()
    assert res["status"]["text"] == f"$(terminal) Puppet {puppet_version}", ctx
    assert f"Facter {run(['facter', '--version']).stdout.strip()}" in res["status"]["tooltip"], ctx
    assert res["status"]["command"] == "puppetXpp.showFacts" and res["statusAfter"] is False, ctx

    # the node graph: Puppet's own relationship graph of the manifest, drawn in a webview without scripts
    answer = res["nodeGraph"]["answer"]
    got_vertices = {v["label"] for v in answer["graph"]["vertices"]}
    got_edges = {(e["source"], e["target"]) for e in answer["graph"]["edges"]}
    unsaved = tmp_path / "unsaved" / "graph.pp"
    unsaved.parent.mkdir()
    unsaved.write_text(graph_text)
    vertices, edges = puppet_graph(env, unsaved, tmp_path)
    assert "Notify[unsaved]" in vertices
    assert (got_vertices, got_edges) == (vertices, edges), ctx
    (panel,) = res["nodeGraph"]["panels"]
    assert panel["title"] == "Node Graph 'graph.pp'" and panel["options"]["enableScripts"] is False, ctx
    html = panel["webview"]["html"]
    assert html == answer["html"] and "<script" not in html, ctx
    for label in vertices:  # every resource is a box of the drawing (labels XML-escaped)
        escaped = label.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
        assert f'<g class="vertex" data-label="{escaped}">' in html, label
    assert html.count('<line class="edge"') == len(edges), ctx

    # a manifest Puppet cannot compile: Puppet's own error, as a message and on the page
    error = res["nodeGraphError"]
    own = puppet_error(env, files["manifests/broken.pp"], tmp_path)
    assert [n["kind"] for n in error["notifications"]] == ["error"], ctx
    assert own in error["notifications"][0]["text"] and own in error["answer"]["graph"]["error"], ctx
    (page,) = error["panels"]
    assert page["title"] == "Node Graph 'broken.pp'" and "<svg" not in page["webview"]["html"], ctx

    # Puppet: Resource, asked "user" then "root": `puppet resource user root`'s text before line 1
    printed = run(["puppet", "resource", "user", "root"])
    assert printed.returncode == 0, printed.stderr
    assert res["prompts"][0] == "Puppet resource type" and res["prompts"][1].startswith(
        "Title of the user"
    ), ctx
    assert res["resourceReturned"] == printed.stdout, ctx
    assert res["resourceText"] == "# top\n" + printed.stdout + "# bottom\n", ctx

    # Puppet: Show Facts: a JSON document of facter's facts beside the editor
    facts = res["facts"]
    assert facts["returned"] and facts["shown"] == "puppet-xpp-facts:/facts.json", ctx
    shown = json.loads(facts["text"])
    check_facts(shown)

    # Puppet: Fix all lint problems: the document is what puppet-lint --fix makes of the file
    copy = tmp_path / "lint" / "modules/demo/manifests/lint.pp"
    copy.parent.mkdir(parents=True)
    copy.write_text(lint_text)
    run(["puppet-lint", "--fix", "modules/demo/manifests/lint.pp"], cwd=tmp_path / "lint")
    assert copy.read_text() != lint_text
    assert res["fixedText"] == copy.read_text(), ctx
    assert res["fixes"] > 0, ctx
