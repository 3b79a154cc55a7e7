"""End-to-end tests of the language server with a real LSP client (pytest-lsp), in the Neovim 0.7
and VS Code capability profiles: diagnostics while typing, .xpp on save, navigation features."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.publishes import mark, published, send_edit, wait_publish

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(REPO, "examples", "production")
pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER = [sys.executable, "-c", "import sys; from puppet_xpp.server.cli.main import main; sys.exit(main())"]


@pytest.fixture(scope="module")
def env_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("ws") / "production"
    shutil.copytree(EXAMPLE, d, ignore=shutil.ignore_patterns(".xpp"))
    return str(d)


def _uri(path):
    return "file://" + path


async def open_document(client, path, text=None, version=1):
    if text is None:
        text = open(path, encoding="utf-8").read()
    uri = _uri(path)
    client._puppet_xpp_mark = mark(client)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="puppet", version=version, text=text)
        )
    )
    return uri


async def wait_diagnostics(client, uri, version=None):
    """Diagnostics published for uri (and version) since the test's last open_document/_change/_close."""
    p = await wait_publish(client, uri, version, after=getattr(client, "_puppet_xpp_mark", 0))
    client._puppet_xpp_mark = published(client).index(p) + 1
    return list(p.diagnostics)


def _change(client, uri, version, line, col, text, end=None):
    end = end or (line, col)
    if not hasattr(client, "_puppet_xpp_mark"):
        client._puppet_xpp_mark = mark(client)
    send_edit(client, uri, version, (line, col), end, text)


def make_fixture(profile):
    @pytest_lsp.fixture(
        config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": REPO}), scope="module"
    )
    async def client(lsp_client: LanguageClient, env_dir):
        await lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=pytest_lsp.client_capabilities(profile),
                root_uri=_uri(env_dir),
                workspace_folders=[types.WorkspaceFolder(uri=_uri(env_dir), name="production")],
                initialization_options={"puppet": {"strict": "warning"}},
            )
        )
        yield
        await lsp_client.shutdown_session()

    return client


client = make_fixture("neovim@v0.7.0")


async def test_syntax_error_appears_and_clears(client: LanguageClient, env_dir):
    path = os.path.join(env_dir, "manifests", "scratch.pp")
    uri = await open_document(client, path, "file { '/srv/x' ensure => file }\n")
    diags = await wait_diagnostics(client, uri, 1)
    assert [d.code for d in diags] == ["SYNTAX_ERROR"]
    d = diags[0]
    assert d.range.start.line == 0 and d.range.start.character == 16  # at 'ensure'
    assert d.range.end.character == 22
    _change(client, uri, 2, 0, 15, ":")
    diags = await wait_diagnostics(client, uri, 2)
    assert diags == []
    # a validation error (not a syntax error), then fixed again
    _change(client, uri, 3, 1, 0, "$x = 1\n$x = 2\nclass a { class b {} }\ndefine c { class d {} }\n")
    diags = await wait_diagnostics(client, uri, 3)
    assert "NOT_TOP_LEVEL" in [d.code for d in diags]
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    diags = await wait_diagnostics(client, uri)
    assert diags == []


async def test_several_errors_and_utf16_positions(client: LanguageClient, env_dir):
    path = os.path.join(env_dir, "manifests", "utf.pp")
    text = "$a = '😀é' => 1\n$b = 2\n$c = 3 )\n"
    uri = await open_document(client, path, text)
    diags = await wait_diagnostics(client, uri, 1)
    errs = [d for d in diags if d.code == "SYNTAX_ERROR"]
    assert len(errs) == 2  # every error, not just the first
    # '=>' follows a string holding an astral character: 2 UTF-16 units for 😀
    assert (errs[0].range.start.line, errs[0].range.start.character, errs[0].range.end.character) == (
        0,
        11,
        13,
    )
    assert (errs[1].range.start.line, errs[1].range.start.character) == (2, 7)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    await wait_diagnostics(client, uri)


async def test_rapid_edits_publish_only_the_latest_version(client: LanguageClient, env_dir):
    path = os.path.join(env_dir, "manifests", "rapid.pp")
    uri = await open_document(client, path, "notice('a')\n")
    await wait_diagnostics(client, uri, 1)
    text = "notice('a')\n"
    for v in range(2, 60):
        _change(client, uri, v, 1, 0, "x")
        text += "x"
    _change(client, uri, 60, 1, 0, "$")  # '$xxx...' is a variable: valid
    start = client._puppet_xpp_mark
    await wait_publish(client, uri, 60, after=start)
    versions = [p.version for p in published(client)[start:] if p.uri == uri]
    assert versions == sorted(versions) and versions[-1] == 60
    assert client.diagnostics[uri] == [] or len(client.diagnostics[uri]) == 0
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    await wait_diagnostics(client, uri)


async def test_xpp_written_on_save(client: LanguageClient, env_dir):
    path = os.path.join(env_dir, "modules", "base", "manifests", "init.pp")
    uri = await open_document(client, path)
    await wait_diagnostics(client, uri, 1)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    out = os.path.join(env_dir, ".xpp", "modules", "base", "manifests", "init.xpp")
    for _ in range(600):  # poll: a notification can be missed by wait_for_notification (publishes.py)
        if os.path.exists(out):
            break
        await asyncio.sleep(0.05)
    assert os.path.exists(out)
    data = open(out, "rb").read()
    assert data.startswith(b"application/vnd.puppet.pcore+msgpack")
    from puppet_xpp.xpp.result import read_xpp

    prog, diags = read_xpp(data)
    assert prog is not None and prog.locator.file == "modules/base/manifests/init.pp"
    # byte-identical to what `puppet-xpp --compile ENVDIR` writes
    import subprocess

    other = os.path.join(os.path.dirname(env_dir), "copy")
    shutil.copytree(env_dir, other, ignore=shutil.ignore_patterns(".xpp"))
    subprocess.run(
        # the client's setting (initialization_options); no level set: both the puppet on PATH's
        SERVER + ["--compile", other, "--strict", "warning"],
        env=dict(os.environ, PYTHONPATH=REPO),
        check=False,
        capture_output=True,
    )
    ref = open(os.path.join(other, ".xpp", "modules", "base", "manifests", "init.xpp"), "rb").read()
    assert data.replace(b"", b"") == ref
    # the environment's own manifest goes to the reserved module 'environment'
    site = os.path.join(env_dir, "manifests", "site.pp")
    suri = await open_document(client, site)
    await wait_diagnostics(client, suri, 1)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=suri))
    )
    out2 = os.path.join(env_dir, ".xpp", "modules", "environment", "manifests", "site.xpp")
    for _ in range(600):
        if os.path.exists(out2):
            break
        await asyncio.sleep(0.05)
    assert os.path.exists(out2)


async def test_document_symbols_hover_definition(client: LanguageClient, env_dir):
    path = os.path.join(env_dir, "modules", "base", "manifests", "init.pp")
    uri = await open_document(client, path, version=1)
    syms = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert syms and syms[0].name == "base" and syms[0].kind == types.SymbolKind.Class
    names = [c.name for c in syms[0].children]
    assert "$admins" in names and "$motd" in names
    assert any(n.startswith("file") for n in names)
    text = open(path, encoding="utf-8").read()
    lines = text.splitlines()
    # hover on $motd in the body: the parameter with its type, default and @param doc
    ln = next(i for i, l in enumerate(lines) if "$banner = $motd" in l)
    col = lines[ln].index("$motd") + 2
    h = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=ln, character=col),
        )
    )
    assert h is not None and "Optional[String[1]]" in h.contents.value and "/etc/motd" in h.contents.value
    # definition of the variable: its parameter
    d = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=ln, character=col),
        )
    )
    assert d and d[0].range.start.line == next(i for i, l in enumerate(lines) if "$motd   = undef" in l)
    # definition across files: base::user (a define in another file of the workspace, from the index)
    ln2 = next(i for i, l in enumerate(lines) if "base::user {" in l)
    col2 = lines[ln2].index("base::user") + 3
    for _ in range(600):
        d2 = await client.text_document_definition_async(
            types.DefinitionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=ln2, character=col2),
            )
        )
        if d2:
            break
        await asyncio.sleep(0.05)
    assert d2 and d2[0].uri.endswith("modules/base/manifests/user.pp")
    # type alias across files: Base::Username
    ln3 = next(i for i, l in enumerate(lines) if "Array[Base::Username]" in l)
    col3 = lines[ln3].index("Base::Username") + 2
    d3 = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=ln3, character=col3),
        )
    )
    assert d3 and d3[0].uri.endswith("modules/base/types/username.pp")
    # hover on a core resource type
    ln4 = next(i for i, l in enumerate(lines) if "file { '/etc/motd'" in l)
    h4 = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=ln4, character=3),
        )
    )
    assert h4 is not None and "core resource type" in h4.contents.value
    # workspace symbols
    ws = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="webapp"))
    assert {s.name for s in ws} >= {"webapp", "webapp::vhost"}


async def test_completion(client: LanguageClient, env_dir):
    path = os.path.join(env_dir, "manifests", "compl.pp")
    text = "class c(String $param_one) {\n  $local_var = 1\n  notice($)\n  file { '/x':\n    \n  }\n}\n"
    uri = await open_document(client, path, text)
    await wait_diagnostics(client, uri, 1)
    res = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=2, character=10)
        )
    )
    labels = {i.label for i in res.items}
    assert {"$param_one", "$local_var", "$facts"} <= labels
    res = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=4, character=4)
        )
    )
    labels = {i.label for i in res.items}
    assert {"ensure", "owner", "mode", "content", "notify"} <= labels
    res = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=6, character=1)
        )
    )
    labels = {i.label for i in res.items}
    assert {"class", "define", "package", "notice", "base::user"} <= labels or {"class", "package"} <= labels
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    await wait_diagnostics(client, uri)


async def test_features_survive_a_syntax_error(client: LanguageClient, env_dir):
    path = os.path.join(env_dir, "manifests", "broken.pp")
    text = "class one {\n  notice(1)\n}\n\n$x = = 2\n\nclass two {\n  file { '/t': ensure => file }\n}\n"
    uri = await open_document(client, path, text)
    diags = await wait_diagnostics(client, uri, 1)
    assert [d.code for d in diags] == ["SYNTAX_ERROR"] and diags[0].range.start.line == 4
    syms = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert [s.name for s in syms] == ["one", "two"]
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    await wait_diagnostics(client, uri)


async def test_indexing_reports_progress(client: LanguageClient):
    # Neovim 0.7 supports window/workDoneProgress: Begin ... End
    for _ in range(1200):
        done = [
            v for v in client.progress_reports.values() if v and isinstance(v[-1], types.WorkDoneProgressEnd)
        ]
        if done:
            break
        await asyncio.sleep(0.05)
    assert done and isinstance(done[0][0], types.WorkDoneProgressBegin)
