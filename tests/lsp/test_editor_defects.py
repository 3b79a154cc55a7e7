"""Editor defects of issue 24 (item 6), each through a real LSP client (pytest-lsp) on the server as
editors start it: the diagnostic cap, signature help inside a string or hash argument, ``include``
completion, definition on a resource attribute's name.  Each test failed before its fix."""

from __future__ import annotations

import os
import time

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.publishes import REPO, SERVER, mark, open_file, published, workspace_client

pytestmark = pytest.mark.asyncio(loop_scope="module")

client = workspace_client("defects", "defects_root")


def _open(client, rel: str, text: str) -> str:
    return open_file(client, client.defects_root, rel, text)


def _pos(text: str, marker: str = "|") -> tuple[str, types.Position]:
    """``text`` without its one ``marker``, and the marker's LSP position."""
    k = text.index(marker)
    head = text[:k]
    return text[:k] + text[k + len(marker) :], types.Position(
        line=head.count("\n"), character=len(head) - (head.rfind("\n") + 1)
    )


# ----------------------------------------------------------------------------------------------- the cap


async def test_cap_keeps_errors_of_every_source(client):
    """833 lint problems and a syntax error: the syntax error (parse) and lint's own errors are shown,
    each source capped on its own, errors first."""
    lines = ["class caps {"]
    lines += [f'  $v{i} = "plain{i}"' for i in range(830)]
    lines += ["\t$tab = 'x'", "  notify { 'z' }", "}"]
    text = "\n".join(lines) + "\n"
    start = mark(client)
    uri = _open(client, "caps/manifests/init.pp", text)
    deadline = time.monotonic() + 90
    last = None
    while time.monotonic() < deadline:  # the publish that holds lint's diagnostics too
        mine = [p for p in published(client)[start:] if p.uri == uri]
        if mine and any(d.source != "puppet-xpp" for d in mine[-1].diagnostics):
            last = mine[-1]
            break
        await _sleep()
    assert last is not None, "no publish with lint diagnostics"
    diags = last.diagnostics
    syntax = [d for d in diags if d.severity == types.DiagnosticSeverity.Error and d.source == "puppet-xpp"]
    assert syntax and syntax[0].range.start.line == 832, [d.message for d in syntax]
    tabs = [d for d in diags if d.severity == types.DiagnosticSeverity.Error and d.range.start.line == 831]
    assert tabs, "lint's errors on line 832 hidden by its warnings"
    more = [d for d in diags if d.code == "TOO_MANY_DIAGNOSTICS"]
    assert more and all(d.message.startswith("and ") for d in more)
    lint = [d for d in diags if d.source not in ("puppet-xpp",) and d.code != "TOO_MANY_DIAGNOSTICS"]
    assert len(lint) <= 200


async def _sleep() -> None:
    import asyncio

    await asyncio.sleep(0.05)


# ----------------------------------------------------------------------------------------------- include completion

INCLUDES = """class incl::server {}
define incl::vhost() {}
class incl {
  include incl::|
}
"""


async def _labels(client, name: str, source: str) -> set[str]:
    text, pos = _pos(source)
    uri = _open(client, name, text)
    res = await client.text_document_completion_async(
        types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=pos)
    )
    items = res.items if isinstance(res, types.CompletionList) else res or []
    return {it.label for it in items}


async def test_include_completes_classes_only(client):
    labels = await _labels(client, "incl/manifests/init.pp", INCLUDES)
    assert "incl::server" in labels
    assert "incl::vhost" not in labels  # a defined type cannot be included
    for form in ("contain incl::|", "require(incl::|", "include incl::server, incl::|"):
        labels = await _labels(client, "incl/manifests/forms.pp", INCLUDES.replace("include incl::|", form))
        assert "incl::server" in labels and "incl::vhost" not in labels, form


async def test_resource_position_completes_both(client):
    labels = await _labels(client, "incl/manifests/res.pp", INCLUDES.replace("include incl::|", "incl::|"))
    assert {"incl::server", "incl::vhost"} <= labels


# ----------------------------------------------------------------------------------------------- signature help

SIGNATURES = """function sig::pair(String $first, String $second) >> String { "${first}${second}" }
function sig::opts(Hash $options, Integer $count = 1) >> Integer { $count }
class sig {
  $x = |
}
"""


async def _signature(client, name: str, call: str) -> types.SignatureHelp | None:
    text, pos = _pos(SIGNATURES.replace("|", call))
    uri = _open(client, name, text)
    return await client.text_document_signature_help_async(
        types.SignatureHelpParams(text_document=types.TextDocumentIdentifier(uri=uri), position=pos)
    )


@pytest.mark.parametrize(
    "call, active",
    [
        ("sig::pair('a', 'b|", 1),  # inside the second string
        ("sig::pair('a|", 0),
        ("sig::pair('a, b', '|')", 1),  # a comma inside a string is not a separator
        ("sig::opts({ |", 0),  # inside a hash argument
        ("sig::opts({ 'k' => 'v', |", 0),
        ("sig::opts({ 'k' => ['v', |", 0),
        ("sig::opts({}, |", 1),
    ],
)
async def test_signature_help_inside_string_or_hash(client, call, active):
    res = await _signature(client, "sig/manifests/init.pp", call)
    assert res is not None and res.signatures, call
    label = res.signatures[res.active_signature or 0].label
    assert label.startswith("sig::pair(" if "pair" in call else "sig::opts("), label
    assert res.active_parameter == active, call


# ----------------------------------------------------------------------------------------------- attribute definition

DEFINES = """define defs::site(Integer $port = 80, String $docroot = '/var/www') {}
class defs::db(Integer $port) {}
"""


async def _definition(client, uri: str, pos: types.Position) -> list[types.Location]:
    res = await client.text_document_definition_async(
        types.DefinitionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=pos)
    )
    if res is None:
        return []
    return [res] if isinstance(res, types.Location) else list(res)


def _at(text: str, needle: str) -> types.Position:
    k = text.index(needle)
    head = text[:k]
    return types.Position(line=head.count("\n"), character=len(head) - (head.rfind("\n") + 1))


@pytest.mark.parametrize(
    "use, param_of",
    [
        ("defs::site { 'a': po|rt => 8080 }", "define defs::site"),
        ("defs::site { 'a': docroot| => '/srv' }", "define defs::site"),
        ("class { 'defs::db': |port => 5432 }", "class defs::db"),
    ],
)
async def test_attribute_definition_in_document(client, use, param_of):
    source = DEFINES + "class defs {\n  " + use + "\n}\n"
    text, pos = _pos(source)
    uri = _open(client, "defs/manifests/init.pp", text)
    locs = await _definition(client, uri, pos)
    name = "$docroot" if "docroot" in use else "$port"
    line = text.splitlines()[0 if "define" in param_of else 1]
    assert [(loc.uri, loc.range.start.line, loc.range.start.character) for loc in locs] == [
        (uri, 0 if "define" in param_of else 1, line.index(name))
    ]


async def test_attribute_definition_in_another_file(client):
    path = os.path.join(client.defects_root, "web", "manifests", "vhost.pp")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("# a vhost\ndefine web::vhost(\n  Integer $port,\n) {}\n")
    vhost = _open(client, "web/manifests/vhost.pp", open(path, encoding="utf-8").read())
    client.text_document_did_save(  # (the index learns a file's definitions on save)
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=vhost))
    )
    text = "class web {\n  web::vhost { 'a': port => 80 }\n}\n"
    uri = _open(client, "web/manifests/init.pp", text)
    locs = []
    for _ in range(100):  # (until the index has the opened define)
        locs = await _definition(client, uri, _at(text, "port =>"))
        if locs:
            break
        await _sleep()
    assert [(loc.uri, loc.range.start.line, loc.range.start.character) for loc in locs] == [
        ("file://" + path, 2, 10)
    ]


async def test_attribute_definition_of_a_core_type(client):
    text = "exec { 'x':\n  command => '/bin/true',\n}\n"
    uri = _open(client, "core/manifests/init.pp", text)
    locs = await _definition(client, uri, _at(text, "command"))
    assert len(locs) == 1 and locs[0].uri.endswith("/puppet/type/exec.rb"), locs
    path = locs[0].uri[len("file://") :]
    line = open(path, encoding="utf-8").read().splitlines()[locs[0].range.start.line]
    assert "newparam(:command" in line.replace(" ", ""), line


# a module's Ruby type, known to the index from the workspace at start
RUBY_TYPE = """Puppet::Type.newtype(:webapp) do
  @doc = 'A web application.'
  ensurable
  newparam(:name, namevar: true) do
    desc 'The name.'
  end
  newproperty(:port) do
    desc 'The port.'
  end
end
"""


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": REPO}), scope="module"
)
async def ruby_client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("rubytype")
    path = root / "webapp" / "lib" / "puppet" / "type" / "webapp.rb"
    path.parent.mkdir(parents=True)
    path.write_text(RUBY_TYPE)
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("neovim@v0.7.0"), root_uri="file://" + str(root)
        )
    )
    lsp_client.defects_root = str(root)
    lsp_client.type_file = str(path)
    yield
    await lsp_client.shutdown_session()


async def test_attribute_definition_of_a_module_ruby_type(ruby_client):
    text = "class webapp {\n  webapp { 'shop':\n    port => 8080,\n  }\n}\n"
    uri = _open(ruby_client, "webapp/manifests/init.pp", text)
    locs = []
    for _ in range(200):  # (until the indexing at start has read the type)
        locs = await _definition(ruby_client, uri, _at(text, "port =>"))
        if locs:
            break
        await _sleep()
    line = RUBY_TYPE.splitlines().index("  newproperty(:port) do")
    assert [(loc.uri, loc.range.start.line, loc.range.start.character) for loc in locs] == [
        ("file://" + ruby_client.type_file, line, len("  newproperty(:"))
    ]
