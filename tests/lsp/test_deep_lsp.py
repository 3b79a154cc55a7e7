"""The deep checks in the language server (issue 30: server/lsp/deep.py) through a real LSP client
(pytest-lsp), on a small environment written by the tests, with real Puppet (7.23's in-process catalog
compile, the oracle's ``catalog`` op) as the judge of what is an error and of what a quick fix gives:

* the findings are published with their own source beside Puppet's diagnostics, with the message Puppet's
  catalog compile stops with, at its line;
* an edit that fixes a name clears its finding in the very publish of the edited version (a version's
  publish waits for its deep findings: never one without them, then one with them);
* a class file added to the workspace (didChangeWatchedFiles) clears an unknown-class finding in another
  open document;
* the setting ``deepChecks.enabled`` turns them off (at start and while running) and on again;
* the quick fixes (did-you-mean, a missing parameter added) give code whose catalog Puppet compiles, that
  puppet-lint finds aligned, and whose findings are gone;
* a statement's findings are kept while it and what it asked of the index are unchanged (in process).
"""

from __future__ import annotations

import asyncio
import os
import pathlib
import shutil
import time
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.conformance.oracle import oracle_for
from tests.lsp.publishes import REPO, SERVER, mark, published, send_edit, wait_publish
from tests.lsp.test_references import write_files
from tests.test_lint_editor import apply

pytestmark = pytest.mark.asyncio(loop_scope="module")

DEEP_SOURCE = "puppet-xpp-deep"

FILES = {
    "environment.conf": "modulepath = modules\n",
    "manifests/site.pp": "include app\n",
    "modules/app/manifests/init.pp": "class app {\n}\n",
    "modules/app/manifests/db.pp": "class app::db (Integer $port = 5432) {\n}\n",
    "modules/app/manifests/vhost.pp": (
        "define app::vhost (\n  String $docroot,\n  Integer[1, 65535] $port = 80,\n) {\n}\n"
    ),
    "modules/app/manifests/web.pp": (
        "class app::web {\n  include app::dbb\n  app::vhost { 'main':\n    port => 8080,\n  }\n}\n"
    ),
    "modules/app/manifests/use.pp": "class app::use {\n  include app::extra\n}\n",
    "modules/app/manifests/fix.pp": (
        "class app::fix {\n"
        "  include app::dbx\n"
        "  app::vhost { 'a':\n"
        "    port => 8080,\n"
        "  }\n"
        "  file { '/tmp/puppet-xpp-deep-fix':\n"
        "    ensur => file,\n"
        "  }\n"
        "}\n"
    ),
}


CONFIG = ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": REPO})


async def start(client: LanguageClient, env: str, options: dict[str, Any] | None = None) -> None:
    await client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("neovim@v0.7.0"),
            root_uri="file://" + env,
            workspace_folders=[types.WorkspaceFolder(uri="file://" + env, name="production")],
            initialization_options=options,
        )
    )
    published(client)  # (the record starts now)


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def client(lsp_client: LanguageClient, tmp_path_factory: Any) -> Any:
    env = os.path.join(str(tmp_path_factory.mktemp("deepws")), "production")
    write_files(env, FILES)
    await start(lsp_client, env)
    lsp_client._env = env  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def off_client(lsp_client: LanguageClient, tmp_path_factory: Any) -> Any:
    env = os.path.join(str(tmp_path_factory.mktemp("deepoff")), "production")
    write_files(env, FILES)
    await start(lsp_client, env, {"deepChecks": {"enabled": False}})
    lsp_client._env = env  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


def open_doc(client: LanguageClient, rel: str) -> tuple[str, str]:
    """Open the environment's file ``rel`` as it is on disk: (uri, text)."""
    path = os.path.join(client._env, rel)  # type: ignore[attr-defined]
    text = open(path, encoding="utf-8").read()
    uri = "file://" + path
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="puppet", version=1, text=text)
        )
    )
    return uri, text


async def until(client: LanguageClient, uri: str, want: Any, after: int = 0, timeout: float = 60) -> Any:
    """The first publish for ``uri`` recorded at index >= ``after`` for which ``want(params)`` holds."""
    rec = published(client)
    deadline = time.monotonic() + timeout
    while True:
        p = await wait_publish(client, uri, after=after, timeout=max(0.1, deadline - time.monotonic()))
        after = rec.index(p, after) + 1
        if want(p):
            return p


def deep_of(p: types.PublishDiagnosticsParams) -> list[tuple[str, int, str]]:
    """(code, 1-based line, message) of the deep diagnostics of a publish."""
    return [
        (str(d.code), d.range.start.line + 1, d.message) for d in p.diagnostics if d.source == DEEP_SOURCE
    ]


def has_deep(p: types.PublishDiagnosticsParams) -> bool:
    return bool(deep_of(p))


def catalog(env: str, code: str) -> dict[str, Any]:
    """Puppet 7.23 compiles a catalog of ``env`` whose main manifest is ``code``: its answer."""
    result: dict[str, Any] = oracle_for("7.23").call("catalog", environment=env, code=code)
    return result


def copy_env(client: LanguageClient, tmp_path: Any, changed: dict[str, str]) -> str:
    """A copy of the client's environment with ``changed`` files (a new directory: the oracle caches its
    answers by request)."""
    env = os.path.join(str(tmp_path), f"copy{time.monotonic_ns()}", "production")
    shutil.copytree(client._env, env)  # type: ignore[attr-defined]
    write_files(env, changed)
    return env


# ----------------------------------------------------------------------------------------------- published


async def test_findings_published_with_their_source_as_puppet_reports_them(client: LanguageClient) -> None:
    uri, _text = open_doc(client, "modules/app/manifests/web.pp")
    p = await until(client, uri, has_deep)
    # beside Puppet's (none here) and lint's; Puppet's own diagnostics keep their source
    assert all(d.source in (DEEP_SOURCE, "puppet-xpp", "puppet-lint") for d in p.diagnostics)
    found = deep_of(p)
    assert found == [
        ("DEEP_UNKNOWN_CLASS", 2, "Could not find class ::app::dbb"),
        ("DEEP_MISSING_PARAMETER", 3, "App::Vhost[main]: expects a value for parameter 'docroot'"),
    ]
    # Puppet's catalog compile stops at the first, with those words, at that line
    answer = catalog(client._env, "include app::web")  # type: ignore[attr-defined]
    assert not answer["ok"] and answer["file"].endswith("web.pp") and answer["line"] == 2, answer
    assert found[0][2] in answer["message"], answer
    # ... and once the class exists, at the second
    env = copy_env(
        client, os.path.dirname(client._env), {"modules/app/manifests/dbb.pp": "class app::dbb {\n}\n"}
    )  # type: ignore[attr-defined]
    answer = catalog(env, "include app::web")
    assert not answer["ok"] and answer["line"] == 3 and found[1][2] in answer["message"], answer


async def test_an_edit_that_fixes_the_name_clears_it_without_flicker(client: LanguageClient) -> None:
    """The edit's version is published with deep findings in every publish of it: its own (the
    publish waits for them a few milliseconds), or until they are in, the last ones carried over to the
    new text (the one the edit touched left out, the others moved) -- never without them."""
    uri, text = open_doc(client, "modules/app/manifests/web.pp")
    await until(client, uri, has_deep)
    line = text.splitlines()[1]
    col = line.index("dbb")
    before = mark(client)
    send_edit(client, uri, 2, (1, col), (1, col + 4), "db\n")  # (the lines below move down)
    p = await until(
        client, uri, lambda p: p.version == 2 and "DEEP_UNKNOWN_CLASS" not in str(deep_of(p)), after=before
    )
    assert deep_of(p) == [
        ("DEEP_MISSING_PARAMETER", 4, "App::Vhost[main]: expects a value for parameter 'docroot'")
    ]
    versions = [x for x in published(client)[before:] if x.uri == uri and x.version == 2]
    assert all(deep_of(x) == deep_of(p) for x in versions), versions
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


async def test_a_new_class_file_clears_an_unknown_class_elsewhere(client: LanguageClient) -> None:
    uri, _text = open_doc(client, "modules/app/manifests/use.pp")
    p = await until(client, uri, has_deep)
    assert deep_of(p) == [("DEEP_UNKNOWN_CLASS", 2, "Could not find class ::app::extra")]
    path = os.path.join(client._env, "modules/app/manifests/extra.pp")  # type: ignore[attr-defined]
    with open(path, "w", encoding="utf-8") as f:
        f.write("class app::extra {\n}\n")
    before = mark(client)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri="file://" + path, type=types.FileChangeType.Created)]
        )
    )
    p = await until(client, uri, lambda p: not has_deep(p), after=before)
    assert p.version == 1  # (the same text, published again)
    # and Puppet agrees: the catalog compiles
    answer = catalog(client._env, "include app::use")  # type: ignore[attr-defined]
    assert answer["ok"], answer


# ----------------------------------------------------------------------------------------------- Hiera edits

NEEDS = ("DEEP_MISSING_PARAMETER", 2, "Class[App::Needs]: expects a value for parameter 'port'")
HIERA_FILES = {
    # the environment's layer (Puppet 7.23 and OpenVox 8 read data/common.yaml only when the
    # environment has a hiera.yaml)
    "hiera.yaml": "---\nversion: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n",
    "data/common.yaml": "---\nother::key: 1\n",
    # a class parameter Hiera may give
    "modules/app/manifests/needs.pp": "class app::needs (Integer $port) {\n}\n",
    "modules/app/manifests/uses.pp": "class app::uses {\n  include app::needs\n}\n",
}


def _data_event(client: LanguageClient, path: str) -> None:
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri="file://" + path, type=types.FileChangeType.Changed)]
        )
    )


async def test_hiera_data_edited_in_the_editor_or_on_disk_checks_the_open_documents_again(
    client: LanguageClient,
) -> None:
    """A required class parameter that Hiera gives is no finding: when the key is added to
    data/common.yaml -- typed in the editor's buffer (didChange, not saved) or written on disk (a watched
    file changed) -- the open manifest's finding goes, without an edit of the manifest; removed, it
    comes back.  Puppet agrees: with the key the catalog compiles, without it it stops with those words."""
    env = client._env  # type: ignore[attr-defined]
    write_files(env, HIERA_FILES)
    needs = os.path.join(env, "modules/app/manifests/needs.pp")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri="file://" + needs, type=types.FileChangeType.Created)]
        )
    )
    uri, _text = open_doc(client, "modules/app/manifests/uses.pp")
    p = await until(client, uri, lambda p: deep_of(p) == [NEEDS])
    answer = catalog(env, "include app::uses")
    assert not answer["ok"] and answer["line"] == 2 and NEEDS[2] in answer["message"], answer
    with_key = copy_env(client, os.path.dirname(env), {"data/common.yaml": "---\napp::needs::port: 80\n"})
    assert catalog(with_key, "include app::uses")["ok"]

    # the editor's buffer of data/common.yaml (a YAML document: never parsed as Puppet)
    data = os.path.join(env, "data", "common.yaml")
    yaml_uri = "file://" + data
    before = mark(client)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=yaml_uri, language_id="yaml", version=1, text=open(data, encoding="utf-8").read()
            )
        )
    )
    p = await wait_publish(client, yaml_uri, after=before)
    assert list(p.diagnostics) == []
    before = mark(client)
    send_edit(client, yaml_uri, 2, (2, 0), (2, 0), "app::needs::port: 80\n")
    p = await until(client, uri, lambda p: not has_deep(p), after=before)
    assert p.version == 1  # (the manifest unchanged, published again)
    assert open(data, encoding="utf-8").read() == HIERA_FILES["data/common.yaml"]  # (not saved)
    before = mark(client)
    send_edit(client, yaml_uri, 3, (2, 0), (3, 0), "")
    p = await until(client, uri, has_deep, after=before)
    assert deep_of(p) == [NEEDS]
    before = mark(client)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=yaml_uri))
    )

    # on disk: the client's file watcher tells the server
    with open(data, "a", encoding="utf-8") as f:
        f.write("app::needs::port: 80\n")
    before = mark(client)
    _data_event(client, data)
    p = await until(client, uri, lambda p: not has_deep(p), after=before)
    with open(data, "w", encoding="utf-8") as f:
        f.write(HIERA_FILES["data/common.yaml"])
    before = mark(client)
    _data_event(client, data)
    p = await until(client, uri, has_deep, after=before)
    assert deep_of(p) == [NEEDS]
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


# ------------------------------------------------------------------ Hiera's files are never Puppet code

# what the editors now send (editors/vscode's DOCUMENT_SELECTOR, editors/neovim's filetypes): texts that,
# taken for Puppet, would be a syntax error and puppet-lint's trailing whitespace
NOT_PUPPET = {
    "hiera.yaml": ("yaml", "---\nversion: 5\nhierarchy:\n  - name: common   \n    path: common.yaml\n"),
    "data/common.yaml": ("yaml", "---\napp::needs::port: 80   \nlist: [1, 2]\n"),
    "data/common.json": ("json", '{"app::needs::port": 80,   \n "x": [1]}\n'),
}


def _requests(uri: str) -> list[tuple[str, Any]]:
    """Every request the server answers about a document, at a position inside its text."""
    doc = types.TextDocumentIdentifier(uri=uri)
    at = types.Position(line=1, character=3)
    where = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=2, character=0))
    formatting = types.FormattingOptions(tab_size=2, insert_spaces=True)
    return [
        (types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, types.DocumentSymbolParams(text_document=doc)),
        (types.TEXT_DOCUMENT_FOLDING_RANGE, types.FoldingRangeParams(text_document=doc)),
        (types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, types.SemanticTokensParams(text_document=doc)),
        (types.TEXT_DOCUMENT_HOVER, types.HoverParams(text_document=doc, position=at)),
        (types.TEXT_DOCUMENT_DEFINITION, types.DefinitionParams(text_document=doc, position=at)),
        (types.TEXT_DOCUMENT_COMPLETION, types.CompletionParams(text_document=doc, position=at)),
        (types.TEXT_DOCUMENT_SIGNATURE_HELP, types.SignatureHelpParams(text_document=doc, position=at)),
        (
            types.TEXT_DOCUMENT_REFERENCES,
            types.ReferenceParams(
                text_document=doc, position=at, context=types.ReferenceContext(include_declaration=True)
            ),
        ),
        (
            types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT,
            types.DocumentHighlightParams(text_document=doc, position=at),
        ),
        (types.TEXT_DOCUMENT_PREPARE_RENAME, types.PrepareRenameParams(text_document=doc, position=at)),
        (types.TEXT_DOCUMENT_RENAME, types.RenameParams(text_document=doc, position=at, new_name="other")),
        (
            types.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY,
            types.CallHierarchyPrepareParams(text_document=doc, position=at),
        ),
        (
            types.TEXT_DOCUMENT_FORMATTING,
            types.DocumentFormattingParams(text_document=doc, options=formatting),
        ),
        (
            types.TEXT_DOCUMENT_RANGE_FORMATTING,
            types.DocumentRangeFormattingParams(text_document=doc, range=where, options=formatting),
        ),
        (
            types.TEXT_DOCUMENT_ON_TYPE_FORMATTING,
            types.DocumentOnTypeFormattingParams(text_document=doc, position=at, ch="\n", options=formatting),
        ),
        (
            types.TEXT_DOCUMENT_CODE_ACTION,
            types.CodeActionParams(
                text_document=doc, range=where, context=types.CodeActionContext(diagnostics=[])
            ),
        ),
    ]


async def test_hiera_files_get_no_puppet_analysis_and_empty_answers(client: LanguageClient) -> None:
    """hiera.yaml and data files opened as YAML/JSON: no diagnostics (no syntax error, no lint), every
    request answered with nothing (null where a client takes the first provider that answers: folding,
    semantic tokens, highlights; no edits, no actions; rename refused as anywhere it finds no name), no
    symbol of theirs in the workspace, no .xpp written when saved (a manifest saved after them is), and
    puppet-vscode's fix-all and node graph do not take them for a manifest."""
    env = client._env  # type: ignore[attr-defined]
    xpp_tree = os.path.join(env, ".xpp")

    def written() -> set[str]:
        return {os.path.join(d, f) for d, _s, fs in os.walk(xpp_tree) for f in fs}

    xpp_before = written()
    uris = []
    for rel, (language, text) in NOT_PUPPET.items():
        path = os.path.join(env, "nothiera", rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        uri = "file://" + path
        uris.append(uri)
        before = mark(client)
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
            )
        )
        p = await wait_publish(client, uri, after=before)
        assert list(p.diagnostics) == [], (rel, p)
        for method, params in _requests(uri):
            try:
                answer = await client.protocol.send_request_async(method, params)
            except Exception as e:  # (a refusal: the one rename gives wherever it finds no name)
                assert method in (types.TEXT_DOCUMENT_PREPARE_RENAME, types.TEXT_DOCUMENT_RENAME), (
                    rel,
                    method,
                    e,
                )
                assert "nothing to rename here" in str(e), (rel, method, e)
                continue
            assert answer is None or (isinstance(answer, (list, tuple)) and len(answer) == 0), (
                rel,
                method,
                answer,
            )
            if method in (
                types.TEXT_DOCUMENT_FOLDING_RANGE,
                types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL,
                types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT,
                types.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
            ):
                assert answer is None, (rel, method, answer)
        fix = await client.protocol.send_request_async(
            "puppet/fixDiagnosticErrors", {"documentUri": uri, "alwaysReturnContent": False}
        )
        assert (fix.documentUri, fix.fixesApplied, getattr(fix, "newContent", None)) == (uri, 0, None), fix
        graph = await client.protocol.send_request_async("puppet/compileNodeGraph", {"external": uri})
        assert "manifest" in graph.error and not hasattr(graph, "vertices"), (rel, graph)
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
    # a manifest saved after them gets its .xpp: by then their saves were handled
    manifest_uri, _text = open_doc(client, "modules/app/manifests/init.pp")
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=manifest_uri))
    )
    xpp = os.path.join(xpp_tree, "modules", "app", "manifests", "init.xpp")
    for _ in range(600):
        if os.path.exists(xpp):
            break
        await asyncio.sleep(0.05)
    assert written() - xpp_before <= {xpp} and os.path.exists(xpp)
    assert not [m.message for m in client.log_messages if "nothiera" in m.message]
    symbols = await client.protocol.send_request_async(
        types.WORKSPACE_SYMBOL, types.WorkspaceSymbolParams(query="")
    )
    assert symbols and not [s for s in symbols if "nothiera" in str(s.location.uri)]
    for uri in [*uris, manifest_uri]:
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )


# ----------------------------------------------------------------------------------------------- the setting


async def test_the_setting_turns_them_off_and_on(off_client: LanguageClient) -> None:
    client = off_client
    uri, text = open_doc(client, "modules/app/manifests/web.pp")
    # once the index is complete (workspace/symbol waits for it), an edit's publish has no deep findings
    await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="app"))
    before = mark(client)
    send_edit(client, uri, 2, (5, 1), (5, 1), "\n")
    p = await until(client, uri, lambda p: p.version == 2, after=before)
    assert not has_deep(p)
    assert not [d for d in p.diagnostics if d.source == "puppet-xpp"]  # (Puppet finds nothing wrong)
    before = mark(client)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"puppet": {"deepChecks": {"enabled": True}}})
    )
    p = await until(client, uri, has_deep, after=before)
    assert p.version == 2 and [c for c, _l, _m in deep_of(p)] == [
        "DEEP_UNKNOWN_CLASS",
        "DEEP_MISSING_PARAMETER",
    ]
    before = mark(client)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"puppet": {"deepChecks": False}})
    )
    p = await until(client, uri, lambda p: not has_deep(p), after=before)
    assert p.version == 2
    before = mark(client)
    send_edit(client, uri, 3, (6, 0), (6, 0), "\n")
    p = await until(client, uri, lambda p: p.version == 3, after=before)
    assert not has_deep(p)
    del text


# ----------------------------------------------------------------------------------------------- quick fixes


async def _fixes(client: LanguageClient, uri: str, d: types.Diagnostic) -> list[types.CodeAction]:
    """The deep quick fixes offered for the published diagnostic ``d``."""
    context = types.CodeActionContext(diagnostics=[d])
    params = types.CodeActionParams(types.TextDocumentIdentifier(uri), d.range, context)
    got = await client.text_document_code_action_async(params)
    return [a for a in got or [] if isinstance(a, types.CodeAction) and _deep_fix(a)]


def _deep_fix(action: types.CodeAction) -> bool:
    return any(d.source == DEEP_SOURCE for d in action.diagnostics or [])


def _edits(action: types.CodeAction, uri: str) -> list[Any]:
    assert action.edit is not None and action.edit.changes is not None
    return [
        ((e.range.start.line, e.range.start.character), (e.range.end.line, e.range.end.character), e.new_text)
        for e in action.edit.changes[uri]
    ]


async def test_quick_fixes_give_code_puppet_compiles(client: LanguageClient, tmp_path: Any) -> None:
    uri, text = open_doc(client, "modules/app/manifests/fix.pp")
    p = await until(client, uri, has_deep)
    assert [(c, line) for c, line, _m in deep_of(p)] == [
        ("DEEP_UNKNOWN_CLASS", 2),
        ("DEEP_MISSING_PARAMETER", 3),
        ("DEEP_UNKNOWN_ATTRIBUTE", 6),
    ]
    titles = []
    version = 1
    for _ in range(3):  # one fix at a time, each on the text the last one gave
        d = next(d for d in p.diagnostics if d.source == DEEP_SOURCE)
        actions = await _fixes(client, uri, d)
        assert actions, d
        fix = next(a for a in actions if a.is_preferred)
        assert fix.kind == types.CodeActionKind.QuickFix and list(fix.diagnostics or []) == [d]
        titles.append(fix.title)
        text = apply(text, _edits(fix, uri))
        version += 1
        before = mark(client)
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        left = [code for code, _line, _msg in deep_of(p) if code != d.code]
        p = await until(
            client,
            uri,
            lambda p, v=version, left=left: p.version == v and [c for c, _l, _m in deep_of(p)] == left,
            after=before,
        )
    assert titles == [
        "Did you mean 'app::db'?",
        "Add the missing parameter 'docroot' ('TODO')",
        "Did you mean 'ensure'?",
    ]
    assert deep_of(p) == [] and not [d for d in p.diagnostics if d.source == "puppet-xpp"]
    assert text == (
        "class app::fix {\n"
        "  include app::db\n"
        "  app::vhost { 'a':\n"
        "    port    => 8080,\n"
        "    docroot => 'TODO',\n"
        "  }\n"
        "  file { '/tmp/puppet-xpp-deep-fix':\n"
        "    ensure => file,\n"
        "  }\n"
        "}\n"
    )
    # Puppet compiles the catalog of the fixed code; before the fixes it did not
    assert not catalog(client._env, "include app::fix")["ok"]  # type: ignore[attr-defined]
    env = copy_env(client, tmp_path, {"modules/app/manifests/fix.pp": text})
    answer = catalog(env, "include app::fix")
    assert answer["ok"], answer
    # and puppet-lint finds the arrows aligned and nothing else to say of the lines the fixes wrote
    lint = oracle_for("7.23").request("lint", source=text, path="app/manifests/fix.pp")
    assert lint["ok"], lint
    assert [x for x in lint["result"]["problems"] if x.get("check") == "arrow_alignment"] == []


async def test_a_missing_parameter_in_an_empty_body(client: LanguageClient, tmp_path: Any) -> None:
    text = "class app::empty {\n  app::vhost { 'b': }\n}\n"
    path = os.path.join(client._env, "modules/app/manifests/empty.pp")  # type: ignore[attr-defined]
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    uri, _ = open_doc(client, "modules/app/manifests/empty.pp")
    p = await until(client, uri, has_deep)
    d = next(d for d in p.diagnostics if d.source == DEEP_SOURCE)
    assert d.code == "DEEP_MISSING_PARAMETER"
    (fix,) = [a for a in await _fixes(client, uri, d) if a.is_preferred]
    fixed = apply(text, _edits(fix, uri))
    assert fixed == "class app::empty {\n  app::vhost { 'b':\n    docroot => 'TODO',\n  }\n}\n"
    env = copy_env(client, tmp_path, {"modules/app/manifests/empty.pp": fixed})
    assert catalog(env, "include app::empty")["ok"]


# ----------------------------------------------------------------------------------------------- the cache


async def test_statements_are_checked_again_only_when_they_or_their_answers_change(tmp_path: Any) -> None:
    """In process (server/lsp/deep.py's per-statement cache, as the server's worker runs it): an edit
    checks the statement it touched again, an edit above them moves the others' findings without
    checking them, and an index change checks only the statements that asked about a name whose
    answer changed."""
    from puppet_xpp.server.analysis.document import Document
    from puppet_xpp.server.analysis.index import index_file, workspace_files
    from puppet_xpp.server.lsp import deep
    from puppet_xpp.server.lsp.session import DocState, Session

    env = os.path.join(str(tmp_path), "production")
    write_files(env, FILES)
    session = Session()
    session.roots = [env]
    for path in workspace_files(session.index_roots()):
        session.index.set_file(path, index_file(path))
    session.index_state.first_done = True
    text = (
        "class app::a {\n  include app::nope\n}\n"
        "class app::b {\n  include app::db\n}\n"
        "class app::c {\n  include app::later\n}\n"
    )
    uri = "file://" + os.path.join(env, "modules/app/manifests/many.pp")
    st = DocState(uri, Document(uri, text, 1, session.config_for(uri)))
    session.documents[uri] = st

    def run(version: int) -> list[tuple[str, int]]:
        st.doc.version = version
        found = deep.check(session, st, version)
        assert found is not None
        return [(d.message, d.start[0]) for d in found]

    assert run(1) == [("Could not find class ::app::nope", 1), ("Could not find class ::app::later", 7)]
    cache = st.deep
    assert cache is not None and cache.checked == 3
    st.doc.apply_change(((4, 2), (4, 2)), "  ")  # inside app::b
    assert run(2) == [("Could not find class ::app::nope", 1), ("Could not find class ::app::later", 7)]
    assert cache.checked == 4
    st.doc.apply_change(((0, 0), (0, 0)), "\n")  # above them all: moved, not checked
    assert run(3) == [("Could not find class ::app::nope", 2), ("Could not find class ::app::later", 8)]
    assert cache.checked == 4
    # the index changes where no statement asked: nothing checked again
    session.index.set_file(
        os.path.join(env, "modules/app/manifests/db.pp"),
        index_file(os.path.join(env, "modules/app/manifests/db.pp")),
    )
    session.index_generation += 1
    assert run(3)[1:] == [("Could not find class ::app::later", 8)]
    assert cache.checked == 4
    # a class app::later appears: app::c is checked again, and its finding goes
    later = os.path.join(env, "modules/app/manifests/later.pp")
    write_files(env, {"modules/app/manifests/later.pp": "class app::later {\n}\n"})
    session.index.set_file(later, index_file(later))
    session.index_generation += 1
    assert run(3) == [("Could not find class ::app::nope", 2)]
    assert cache.checked == 5


async def test_a_long_class_is_checked_again_one_body_statement_at_a_time(tmp_path: Any) -> None:
    """In process: in a class long enough to be kept per body statement (engine.BodyMemo), an edit inside
    one of its statements checks that statement again, not the others; an assignment added in one
    statement makes a use in another known at once; an index change checks again only the statement
    that asked about the name whose answer changed."""
    from puppet_xpp.server.analysis.document import Document
    from puppet_xpp.server.analysis.index import index_file, workspace_files
    from puppet_xpp.server.lsp import deep
    from puppet_xpp.server.lsp.session import DocState, Session

    env = os.path.join(str(tmp_path), "production")
    write_files(env, FILES)
    session = Session()
    session.roots = [env]
    for path in workspace_files(session.index_roots()):
        session.index.set_file(path, index_file(path))
    session.index_state.first_done = True
    body = "".join(f"  file {{ '/tmp/f{i}': ensure => file }}\n" for i in range(200))
    text = "class app::long {\n  include app::later\n  notice($v)\n" + body + "}\n"
    uri = "file://" + os.path.join(env, "modules/app/manifests/long.pp")
    st = DocState(uri, Document(uri, text, 1, session.config_for(uri)))
    session.documents[uri] = st

    def run(version: int) -> list[str]:
        st.doc.version = version
        found = deep.check(session, st, version)
        assert found is not None
        return [d.message for d in found]

    assert run(1) == ["Could not find class ::app::later", "Unknown variable: 'v'."]
    cache = st.deep
    assert cache is not None and cache.parts_checked == 202
    st.doc.apply_change(((100, 17), (100, 17)), "x")  # inside one file resource's title
    assert run(2) == ["Could not find class ::app::later", "Unknown variable: 'v'."]
    assert cache.parts_checked == 203
    st.doc.apply_change(((150, 0), (150, 0)), "  $v = 1\n")  # the use of $v is known now
    assert run(3) == ["Could not find class ::app::later"]
    assert cache.parts_checked <= 206
    checked = cache.parts_checked
    later = os.path.join(env, "modules/app/manifests/later.pp")
    write_files(env, {"modules/app/manifests/later.pp": "class app::later {\n}\n"})
    session.index.set_file(later, index_file(later))
    session.index_generation += 1
    assert run(3) == []
    assert cache.parts_checked == checked + 1


# ----------------------------------------------------------------------------------------------- --compile --deep


def _compile(*argv: str) -> tuple[int, str, str]:
    import io

    from puppet_xpp.server.cli.compile import main

    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def _xpp_files(env: str) -> dict[str, bytes]:
    """Every .xpp the compile wrote into the environment, with its bytes."""
    root = pathlib.Path(env, ".xpp")
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.xpp"))}


async def test_compile_deep_adds_the_findings_to_the_report_only(tmp_path: Any) -> None:
    """``puppet-xpp --compile --deep``: the deep findings in the text output, the formats and the JSON
    report, as Puppet's catalog compile words and places them; the same .xpp files as without it;
    without it, the report of before."""
    import json

    env = os.path.join(str(tmp_path), "production")
    write_files(env, {k: v for k, v in FILES.items() if not k.endswith(("fix.pp", "use.pp"))})
    status, out, _err = _compile(env, "--force", "-q")
    assert (status, out) == (0, "")
    plain = _xpp_files(env)
    report = os.path.join(str(tmp_path), "report.json")
    status, out, _err = _compile(env, "--force", "-q", "--deep", "--report", report)
    assert status == 1
    web = os.path.join(env, "modules/app/manifests/web.pp")
    assert out.splitlines() == [
        f"Error: Could not find class ::app::dbb (file: {web}, line: 2, column: 3)",
        f"Error: App::Vhost[main]: expects a value for parameter 'docroot' (file: {web}, line: 3)",
    ]
    assert _xpp_files(env) == plain  # (what is written is the same)
    (envreport,) = json.load(open(report))["environments"]
    deep = {
        f["source"]: [(x["code"], x["line"], x["message"]) for x in f["deep"]] for f in envreport["files"]
    }
    assert deep[web] == [
        ("DEEP_UNKNOWN_CLASS", 2, "Could not find class ::app::dbb"),
        ("DEEP_MISSING_PARAMETER", 3, "App::Vhost[main]: expects a value for parameter 'docroot'"),
    ]
    assert all(v == [] for k, v in deep.items() if k != web) and envreport["counts"]["deep_errors"] == 2
    # Puppet's catalog compile stops at the first, with those words, at that line
    answer = catalog(env, "include app::web")
    assert not answer["ok"] and answer["line"] == 2 and deep[web][0][2] in answer["message"], answer
    # the other formats carry them with their tool
    status, out, _err = _compile(env, "-q", "--deep", "--format", "github")
    assert status == 1 and [line.split("::", 2)[1].split(",")[1:3] for line in out.splitlines()] == [
        ["line=2", "col=3"],
        ["line=3", "title=puppet-xpp-deep%3A DEEP_MISSING_PARAMETER"],
    ]
    # without --deep: the report of before (no deep list, no deep count), exit 0
    status, out, _err = _compile(env, "-q", "--report", report)
    (envreport,) = json.load(open(report))["environments"]
    assert (status, out) == (0, "")
    assert "deep_errors" not in envreport["counts"] and all("deep" not in f for f in envreport["files"])


async def test_nothing_is_said_unknown_where_the_index_does_not_hold_the_module_path(tmp_path: Any) -> None:
    """A file opened without a workspace folder (the index holds nothing of its module path) or before
    the indexing ended: no name is said not to exist (in process; with the index, it is)."""
    from puppet_xpp.server.analysis.document import Document
    from puppet_xpp.server.analysis.index import index_file, workspace_files
    from puppet_xpp.server.lsp import deep
    from puppet_xpp.server.lsp.session import DocState, Session

    env = os.path.join(str(tmp_path), "production")
    write_files(env, FILES)
    path = os.path.join(env, "modules/app/manifests/web.pp")
    uri = "file://" + path

    def findings(session: Session) -> list[str]:
        st = DocState(uri, Document(uri, open(path).read(), 1, session.config_for(uri)))
        session.documents[uri] = st
        found = deep.check(session, st, 1)
        return [d.code for d in found or []]

    alone = Session()  # no folder: nothing indexed
    assert deep.index_ready(alone) and findings(alone) == []
    elsewhere = os.path.join(str(tmp_path), "elsewhere")
    os.makedirs(elsewhere)
    other = Session()  # the index of another folder, complete
    other.roots = [elsewhere]
    other.index_state.first_done = True
    assert findings(other) == []
    indexing = Session()
    indexing.roots = [env]
    for p in workspace_files(indexing.index_roots()):
        indexing.index.set_file(p, index_file(p))
    assert "DEEP_UNKNOWN_CLASS" not in findings(indexing)  # (the indexing has not ended)
    indexing.index_state.first_done = True
    assert findings(indexing) == ["DEEP_UNKNOWN_CLASS", "DEEP_MISSING_PARAMETER"]


async def test_findings_carried_over_an_edit_until_the_new_ones_are_in(tmp_path: Any) -> None:
    """In process (server/lsp/deep.py ``carried``): the last check's findings on the edited text: those
    before and after the edited region in their places (moved by the lines and bytes it added), the one
    it touched left out."""
    from puppet_xpp.server.analysis.document import Document
    from puppet_xpp.server.lsp import deep
    from puppet_xpp.server.lsp.session import DocState, Session

    env = os.path.join(str(tmp_path), "production")
    write_files(env, FILES)
    session = Session()
    session.roots = [env]
    text = "class app::t {\n  include app::one\n  include app::two\n  include app::three\n}\n"
    uri = "file://" + os.path.join(env, "modules/app/manifests/t.pp")
    st = DocState(uri, Document(uri, text, 1, session.config_for(uri)))
    session.documents[uri] = st
    session.index_state.first_done = True
    found = deep.check(session, st, 1)
    assert [(d.message, d.start) for d in found or []] == [
        ("Could not find class ::app::one", (1, 2)),
        ("Could not find class ::app::two", (2, 2)),
        ("Could not find class ::app::three", (3, 2)),
    ]
    st.doc.apply_change(((2, 15), (2, 18)), "TWO\n\n")  # the second one edited, two lines added
    assert [(d.message, d.start, d.end) for d in deep.carried(st)] == [
        ("Could not find class ::app::one", (1, 2), (1, 18)),
        ("Could not find class ::app::three", (5, 2), (5, 20)),
    ]


# ----------------------------------------------------------------------------------------------- a bug inside

# the server with a failing type model (a test double: the subject is how the failure is reported)
BROKEN_SERVER = [
    SERVER[0],
    "-c",
    "import sys\n"
    "from puppet_xpp.server.analysis.deep import types\n"
    "def failing(*args, **kwargs):\n"
    "    raise ZeroDivisionError('injected failure of the type model')\n"
    "types.literal_mismatches = failing\n"
    "from puppet_xpp.server.cli.main import main\n"
    "sys.exit(main())\n",
]
BROKEN = (
    "class app::broken {\n"
    "  include app::nosuch\n"
    "  app::vhost { 'main':\n"
    "    docroot => '/srv',\n"
    "    port    => 'eighty',\n"
    "  }\n"
    "  include app::other_nosuch\n"
    "}\n"
)


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=BROKEN_SERVER, server_env={"PYTHONPATH": REPO}), scope="module"
)
async def broken_client(lsp_client: LanguageClient, tmp_path_factory: Any) -> Any:
    env = os.path.join(str(tmp_path_factory.mktemp("deepbroken")), "production")
    write_files(env, {**FILES, "modules/app/manifests/broken.pp": BROKEN})
    await start(lsp_client, env)
    lsp_client._env = env  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


def internal_logs(client: LanguageClient) -> list[str]:
    return [m.message for m in client.log_messages if "Internal error" in m.message]


async def test_a_bug_of_the_deep_checks_is_logged_once_and_costs_no_other_finding(
    broken_client: LanguageClient,
) -> None:
    """A failing type model: the resource whose check asked it gets no finding, the log one line naming
    the file, the statement's position and the exception (not a diagnostic: nothing of it is shown on
    the code), and the file's other findings are published as always; an edit checks the statement
    again, and the same failure is not logged again."""
    client = broken_client
    uri, _text = open_doc(client, "modules/app/manifests/broken.pp")
    p = await until(client, uri, has_deep)
    assert deep_of(p) == [
        ("DEEP_UNKNOWN_CLASS", 2, "Could not find class ::app::nosuch"),
        ("DEEP_UNKNOWN_CLASS", 7, "Could not find class ::app::other_nosuch"),
    ]
    assert not [d for d in p.diagnostics if "Internal error" in d.message]
    for _ in range(200):
        if internal_logs(client):
            break
        await asyncio.sleep(0.05)
    assert internal_logs(client) == [
        "puppet-xpp: deep checks: Internal error (ZeroDivisionError) in the deep check of this resource: "
        f"injected failure of the type model ({uri}, line 3, column 3); the other findings are published"
    ]
    before = mark(client)
    send_edit(client, uri, 2, (4, 20), (4, 20), "-")  # inside the failing resource: checked again
    p = await until(client, uri, lambda p: p.version == 2 and has_deep(p), after=before)
    assert [c for c, _l, _m in deep_of(p)] == ["DEEP_UNKNOWN_CLASS", "DEEP_UNKNOWN_CLASS"]
    assert len(internal_logs(client)) == 1
