"""metadata.json in the editor (issue 29, item 3) through a real LSP client (pytest-lsp).

* Every corpus module's metadata.json (/usr/share/puppet/modules/*/metadata.json), opened as JSON where
  it lies: no error-level diagnostic except on a file real Puppet also refuses (Puppet 7.23 asked: its
  module tool's validation, Puppet::ModuleTool::Metadata#update, and loading the module,
  Puppet::Module.new -- tests/test_metadata_json.py's PUPPET_METADATA); never a Puppet or lint
  diagnostic (the file is not Puppet code).
* A damaged copy of one (in an environment whose module path ends with the corpus) gets each diagnostic
  on the key or value it is about; an edit that breaks the JSON gets the syntax error on its line, and
  the fix clears it.
* Hover on a dependency of a corpus module gives the installed version and directory (read from the
  dependency's own metadata.json) and whether it satisfies the range; definition goes to that module's
  metadata.json.
"""

from __future__ import annotations

import glob
import json
import os
from typing import Any

import pytest
from lsprotocol import types

from tests.lsp.publishes import mark, send_edit, wait_publish, workspace_client
from tests.test_metadata_json import PUPPET_METADATA, PUPPET_UNMET, ask_puppet

CORPUS = "/usr/share/puppet/modules"
SOURCE = "puppet-xpp.metadata"
pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(
        not os.path.isdir(os.path.join(CORPUS, "stdlib")), reason="the corpus is not installed"
    ),
]


client = workspace_client("metadata", "md_root")


def environment(client: Any) -> str:
    """An environment in the client's workspace whose module path ends with the corpus."""
    env = os.path.join(client.md_root, "control")
    os.makedirs(os.path.join(env, "modules"), exist_ok=True)
    with open(os.path.join(env, "environment.conf"), "w", encoding="utf-8") as f:
        f.write(f"modulepath = modules:{CORPUS}\n")
    return env


async def open_json(client: Any, path: str, text: str | None = None) -> tuple[str, list[types.Diagnostic]]:
    """Open ``path`` as a JSON document (its text, or ``text`` written there first); the first publish."""
    if text is None:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    else:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    at = mark(client)
    uri = "file://" + path
    item = types.TextDocumentItem(uri=uri, language_id="json", version=1, text=text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    return uri, (await wait_publish(client, uri, 1, after=at)).diagnostics


def covered(text: str, diagnostic: types.Diagnostic) -> str:
    """The text a diagnostic's range covers (positions in UTF-16: the texts here are ASCII)."""
    lines = text.split("\n")
    start, end = diagnostic.range.start, diagnostic.range.end
    if start.line == end.line:
        return lines[start.line][start.character : end.character]
    return "\n".join(
        [
            lines[start.line][start.character :],
            *lines[start.line + 1 : end.line],
            lines[end.line][: end.character],
        ]
    )


async def test_corpus_metadata_has_no_false_error(client: Any) -> None:
    files = sorted(glob.glob(os.path.join(CORPUS, "*", "metadata.json")))
    assert len(files) > 40
    verdicts = ask_puppet(PUPPET_METADATA, {"files": files})
    refused = {path for path, (tool, load) in zip(files, verdicts, strict=True) if tool or load}
    warned = 0
    for path in files:
        _uri, diagnostics = await open_json(client, path)
        assert all(d.source == SOURCE for d in diagnostics), (path, diagnostics)
        errors = [d for d in diagnostics if d.severity == types.DiagnosticSeverity.Error]
        if path not in refused:
            assert not errors, (path, errors)
        warned += bool(diagnostics)
    assert warned > 10  # (the corpus's dependencies are often out of range of the modules beside them)


def damaged_ntp() -> str:
    with open(os.path.join(CORPUS, "ntp", "metadata.json"), encoding="utf-8") as f:
        data = json.load(f)
    data.update(name="puppetlabs-ntp!", version="10", license=None)
    data["dependencies"] = [
        {"name": "puppetlabs/stdlib", "version_requirement": ">= 99.0.0"},
        {"name": "puppetlabs-nothere", "version_requirement": ">= 1.0.0"},
        {"name": "puppetlabs/concat", "version_requirement": ">= 1 <<"},
    ]
    data["operatingsystem_support"] = [{"operatingsystem": "Debian", "operatingsystemrelease": [12]}]
    return json.dumps(data, indent=2) + "\n"


async def test_damaged_copy_gets_each_diagnostic_in_place(client: Any) -> None:
    text = damaged_ntp()
    path = os.path.join(environment(client), "modules", "ntp", "metadata.json")
    uri, diagnostics = await open_json(client, path, text)
    found = {(d.code, covered(text, d), d.severity) for d in diagnostics}
    error, warning = types.DiagnosticSeverity.Error, types.DiagnosticSeverity.Warning
    expected = {
        ("INVALID_NAME", '"puppetlabs-ntp!"', error),
        ("INVALID_VERSION", '"10"', error),
        ("MISSING_KEY", '"license"', error),
        ("DEPENDENCY_UNSATISFIED", '">= 99.0.0"', warning),
        ("DEPENDENCY_MISSING", '"puppetlabs-nothere"', warning),
        ("INVALID_VERSION_RANGE", '">= 1 <<"', error),
        ("INVALID_OS_SUPPORT", "12", error),
    }
    assert expected <= found, sorted(expected - found)
    # an edit that breaks the JSON: the error on the line of the edit; the fix clears it
    line = next(i for i, t in enumerate(text.split("\n")) if '"summary"' in t)
    at = mark(client)
    send_edit(client, uri, 2, (line, 2), (line, 3), "")  # the key's opening quote
    broken = (await wait_publish(client, uri, 2, after=at)).diagnostics
    assert [(d.code, d.range.start.line) for d in broken] == [("JSON_SYNTAX", line)]
    at = mark(client)
    send_edit(client, uri, 3, (line, 2), (line, 2), '"')
    fixed = (await wait_publish(client, uri, 3, after=at)).diagnostics
    assert {(d.code, covered(text, d), d.severity) for d in fixed} == found


def position_of(text: str, needle: str) -> types.Position:
    k = text.index(needle) + 2
    head = text[:k]
    return types.Position(line=head.count("\n"), character=len(head) - (head.rfind("\n") + 1))


async def test_hover_and_definition_on_a_corpus_dependency(client: Any) -> None:
    path = os.path.join(CORPUS, "ntp", "metadata.json")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    uri, _diagnostics = await open_json(client, path)
    dependency = next(d for d in json.loads(text)["dependencies"] if "stdlib" in d["name"])
    with open(os.path.join(CORPUS, "stdlib", "metadata.json"), encoding="utf-8") as f:
        stdlib_version = json.load(f)["version"]
    where = position_of(text, json.dumps(dependency["name"]))
    document = types.TextDocumentIdentifier(uri=uri)
    hover = await client.text_document_hover_async(types.HoverParams(text_document=document, position=where))
    assert hover is not None
    markdown = (
        hover.contents.value if isinstance(hover.contents, types.MarkupContent) else str(hover.contents)
    )
    assert dependency["name"] in markdown and dependency["version_requirement"] in markdown
    assert f"version {stdlib_version}" in markdown and os.path.join(CORPUS, "stdlib") in markdown
    # whether it satisfies the range: as Puppet's unmet_dependencies of the corpus module says
    unmet = ask_puppet(PUPPET_UNMET, {"modulepath": [CORPUS], "module": "ntp"})
    mismatch = [dependency["name"].replace("-", "/"), "version_mismatch"] in unmet
    assert ("does **not** satisfy the range" if mismatch else "satisfies the range") in markdown
    found = await client.text_document_definition_async(
        types.DefinitionParams(text_document=document, position=where)
    )
    locations = found if isinstance(found, list) else [found]
    assert [loc.uri for loc in locations] == ["file://" + os.path.join(CORPUS, "stdlib", "metadata.json")]
