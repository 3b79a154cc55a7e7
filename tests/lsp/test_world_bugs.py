"""Regression tests for the editor bugs of issue 15 item 8 (each failed before its fix)."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from puppet_xpp.grammar.check import CheckConfig
from puppet_xpp.server.analysis import features
from puppet_xpp.server.analysis.document import Document
from puppet_xpp.server.analysis.index import symbols_of
from tests.lsp.publishes import mark, published, wait_publish

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = [sys.executable, "-c", "import sys; from puppet_xpp.server.cli.main import main; sys.exit(main())"]


def _an(text):
    return Document("file:///t.pp", text, 1, CheckConfig(file="t.pp")).analysis()


def test_type_alias_signature_keeps_its_body():
    # Puppet positions the alias's AccessExpression with length 0 at the alias name
    text = "type Stdlib::Port = Integer[0, 65535]\ntype A::B = Variant[\n  String,\n  Integer,\n]\ntype C = String\n"
    sigs = [s.signature for s in symbols_of(_an(text), "t.pp")]
    assert sigs == [
        "type Stdlib::Port = Integer[0, 65535]",
        "type A::B = Variant[\n  String,\n  Integer,\n]",
        "type C = String",
    ]


def _decode(data, text):
    """Semantic tokens -> [(line text of the token, type name)]."""
    lines = text.split("\n")
    out, line, col = [], 0, 0
    for k in range(0, len(data), 5):
        dl, dc, ln, tt, _m = data[k : k + 5]
        line += dl
        col = dc if dl else col + dc
        out.append((lines[line][col : col + ln], features.TOKEN_TYPES[tt]))
    return out


def test_semantic_tokens_resource_type_named_like_a_function():
    text = "file { '/x': }\n$c = file('m/x')\n"
    toks = _decode(features.semantic_tokens(_an(text)), text)
    assert ("file", "type") in toks and ("file", "function") in toks
    assert toks.index(("file", "type")) < toks.index(("file", "function"))


def test_semantic_tokens_heredoc_text_with_margin():
    text = '$x = @("EOT"/L)\n    hello ${y} world\n      indented $z\n    | EOT\n$w = @(X)\n  plain text\n  | X\n'
    toks = _decode(features.semantic_tokens(_an(text)), text)
    strings = [t for t, k in toks if k == "string"]
    assert strings == ["    hello ", " world", "      indented ", "  plain text"]


def test_node_default_selection_range():
    text = "node default {\n  include foo\n}\n"
    an = _an(text)
    (sym,) = features.document_symbols(an)
    o, n = sym["selection"]
    assert text[o : o + n] == "default"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": REPO}))
async def client(lsp_client: LanguageClient, tmp_path):
    (tmp_path / "manifests").mkdir()
    (tmp_path / "modules").mkdir()

    # an editor that holds settings (VS Code; Neovim with `settings`), answering the server's pull at
    # start a little later than the document is opened
    async def configuration(params):
        await asyncio.sleep(0.3)
        return [{} for _ in params.items]

    lsp_client.protocol.fm.features[types.WORKSPACE_CONFIGURATION] = configuration
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("neovim@v0.7.0"),
            root_uri="file://" + str(tmp_path),
            workspace_folders=[types.WorkspaceFolder(uri="file://" + str(tmp_path), name="ws")],
        )
    )
    lsp_client._ws = str(tmp_path)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_diagnostics_published_once_on_open(client: LanguageClient):
    uri = "file://" + os.path.join(client._ws, "manifests", "site.pp")
    m = mark(client)  # opened at once after `initialized`, as editors do, while settings are pulled
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="puppet", version=1, text="$x = = 1\n")
        )
    )
    # Neovim (lspconfig) sends its `settings` right after opening, here the ones already in force
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    await wait_publish(client, uri, 1, after=m)
    await asyncio.sleep(1.5)  # the server answers settings and indexes meanwhile
    assert len([p for p in published(client)[m:] if p.uri == uri]) == 1


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": REPO}))
async def outside(lsp_client: LanguageClient, tmp_path):
    """An environment whose module path names an absolute directory outside it."""
    shared = tmp_path / "shared"
    (shared / "mymod" / "manifests").mkdir(parents=True)
    (shared / "mymod" / "manifests" / "init.pp").write_text("class mymod {\n  notice('x')\n}\n")
    env = tmp_path / "production"
    (env / "manifests").mkdir(parents=True)
    (env / "manifests" / "site.pp").write_text("include mymod\n")
    (env / "environment.conf").write_text(f"modulepath = modules:{shared}\n")
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("neovim@v0.7.0"),
            root_uri="file://" + str(env),
            workspace_folders=[types.WorkspaceFolder(uri="file://" + str(env), name="production")],
            initialization_options={"puppet": {"strict": "warning"}},
        )
    )
    lsp_client._tmp = tmp_path
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_xpp_on_save_for_a_module_outside_the_environment(outside: LanguageClient):
    import shutil
    import subprocess

    tmp = outside._tmp
    src = tmp / "shared" / "mymod" / "manifests" / "init.pp"
    uri = "file://" + str(src)
    m = mark(outside)
    outside.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="puppet", version=1, text=src.read_text()
            )
        )
    )
    await wait_publish(outside, uri, 1, after=m)
    outside.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    out = tmp / "production" / ".xpp" / "modules" / "mymod" / "manifests" / "init.xpp"
    for _ in range(600):
        if out.exists():
            break
        await asyncio.sleep(0.05)
    assert out.exists()
    # the same bytes as `puppet-xpp --compile ENVDIR` writes for that file
    copy = tmp / "copy"
    shutil.copytree(tmp / "production", copy, ignore=shutil.ignore_patterns(".xpp"))
    subprocess.run(
        SERVER + ["--compile", str(copy), "--strict", "warning"],  # (no level set: both the puppet on PATH's)
        env=dict(os.environ, PYTHONPATH=REPO),
        capture_output=True,
    )
    ref = copy / ".xpp" / "modules" / "mymod" / "manifests" / "init.xpp"
    assert ref.read_bytes() == out.read_bytes()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": REPO}))
async def vscode(lsp_client: LanguageClient, tmp_path):
    lsp_client._registrations = []

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params):
        lsp_client._registrations.extend(params.registrations)

    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
            root_uri="file://" + str(tmp_path),
        )
    )
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_file_watchers_registered(vscode: LanguageClient):
    def watchers() -> list:
        return [r for r in vscode._registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES]

    for _ in range(200):
        if watchers():
            break
        await asyncio.sleep(0.05)
    # (the other registration a VS Code client gets: formatting, for Puppet manifests only)
    (reg,) = watchers()
    globs = {
        w["globPattern"] if isinstance(w, dict) else w.glob_pattern for w in reg.register_options["watchers"]
    }
    assert {"**/*.pp", "**/*.epp", "**/*.rb", "**/hiera.yaml"} <= globs
