"""Hover on a definition's own name, through a real LSP client (pytest-lsp, Neovim 0.7 profile): the
name in ``class foo::bar (``, ``define``, ``function``, ``type Foo::T =``, ``plan`` answers what a
reference to that definition answers (its signature and documentation), over the name's range (where
puppet-editor-services answers nothing: its hover knows no definition node); a node's names and a
resource's title still answer nothing.

The module is written by the tests; each definition is in the file Puppet's autoloader reads it from,
and each reference in another file, so the reference's hover comes from the workspace index and the
definition's from its own document."""

from __future__ import annotations

import asyncio
import os
import textwrap
from collections.abc import AsyncIterator

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from puppet_xpp.server.analysis.document import uri_of_path
from tests.lsp.publishes import REPO, SERVER, mark, wait_publish
from tests.lsp.test_references import write_files

pytestmark = pytest.mark.asyncio(loop_scope="module")

FILES = {
    "environment.conf": "modulepath = modules\n",
    "modules/foo/manifests/bar.pp": """\
        # @summary Configures bar.
        # @param port the port bar listens on
        class foo::bar (Integer $port = 8080) {
          notify { 'bar title': }
        }
        """,
    "modules/foo/manifests/baz.pp": """\
        # @summary One baz per site.
        define foo::baz (String $owner) {
        }
        """,
    "modules/foo/functions/f.pp": """\
        # @summary Doubles a number.
        function foo::f(Integer $n) >> Integer {
          $n * 2
        }
        """,
    "modules/foo/types/t.pp": "# @summary A port or a name.\ntype Foo::T = Variant[Integer, String]\n",
    "modules/foo/plans/p.pp": """\
        # @summary Deploys the site.
        plan foo::p (String $target) {
        }
        """,
    "modules/foo/plans/q.pp": "plan foo::q () {\n  foo::p('web')\n}\n",
    "manifests/site.pp": """\
        node 'www.example.com' {
          include foo::bar
          foo::baz { 'site': owner => 'root' }
          $twice = foo::f(2)
          $kind = Foo::T
        }
        """,
}

# kind: (file of the definition, its name as written there, file of a reference, the reference's text)
KINDS = {
    "class": ("modules/foo/manifests/bar.pp", "foo::bar", "manifests/site.pp", "include foo::bar"),
    "define": ("modules/foo/manifests/baz.pp", "foo::baz", "manifests/site.pp", "foo::baz { 'site'"),
    "function": ("modules/foo/functions/f.pp", "foo::f", "manifests/site.pp", "foo::f(2)"),
    "type": ("modules/foo/types/t.pp", "Foo::T", "manifests/site.pp", "Foo::T\n"),
    "plan": ("modules/foo/plans/p.pp", "foo::p", "modules/foo/plans/q.pp", "foo::p('web')"),
}
# what the documentation of each says (written above): the hover shows it
SUMMARIES = {
    "class": "Configures bar.",
    "define": "One baz per site.",
    "function": "Doubles a number.",
    "type": "A port or a name.",
    "plan": "Deploys the site.",
}


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The environment, written before the server starts (the references' hover is the index's)."""
    root = str(tmp_path_factory.mktemp("definition_hover") / "production")
    write_files(root, {rel: textwrap.dedent(text) for rel, text in FILES.items()})
    return root


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": REPO}), scope="module"
)
async def client(lsp_client: LanguageClient, env: str) -> AsyncIterator[None]:
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("neovim@v0.7.0"),
            root_uri=uri_of_path(env),
            workspace_folders=[types.WorkspaceFolder(uri=uri_of_path(env), name="production")],
            initialization_options={"puppet": {"xppOnSave": False}},
        )
    )
    lsp_client.env = env  # type: ignore[attr-defined]
    for _ in range(600):  # (a reference's hover answers from the index: wait for it to be made)
        if any("indexed" in m.message for m in lsp_client.log_messages):
            break
        await asyncio.sleep(0.05)
    yield
    await lsp_client.shutdown_session()


OPENED: dict[str, tuple[str, str]] = {}


async def _open(client: LanguageClient, rel: str) -> tuple[str, str]:
    """Open the environment's file ``rel``, once; (uri, text) once it is analysed."""
    if rel in OPENED:
        return OPENED[rel]
    text = textwrap.dedent(FILES[rel])
    m = mark(client)
    uri = uri_of_path(os.path.join(client.env, rel))  # type: ignore[attr-defined]
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="puppet", version=1, text=text)
        )
    )
    await wait_publish(client, uri, 1, after=m)
    OPENED[rel] = (uri, text)
    return uri, text


def _pos(text: str, index: int) -> types.Position:
    line = text.count("\n", 0, index)
    return types.Position(line=line, character=index - (text.rfind("\n", 0, index) + 1))


def _name_range(text: str, needle: str, name: str) -> types.Range:
    """The range of ``name`` where it starts ``needle`` in ``text`` (one line, ASCII)."""
    i = text.index(needle) + needle.index(name)
    return types.Range(start=_pos(text, i), end=_pos(text, i + len(name)))


async def _hover(client: LanguageClient, uri: str, pos: types.Position) -> types.Hover | None:
    return await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=pos)
    )


@pytest.mark.parametrize("kind", list(KINDS))
async def test_the_name_of_a_definition_hovers_as_a_reference_to_it(client: LanguageClient, kind: str):
    def_rel, name, ref_rel, ref_text = KINDS[kind]
    ref_uri, ref_file = await _open(client, ref_rel)
    ref_range = _name_range(ref_file, ref_text, name)
    used = await _hover(client, ref_uri, ref_range.start)
    assert used is not None and SUMMARIES[kind] in used.contents.value  # the reference's hover, as before

    def_uri, def_file = await _open(client, def_rel)
    name_range = _name_range(def_file, f"{kind} {name}", name)
    for pos in (
        name_range.start,
        types.Position(line=name_range.start.line, character=name_range.start.character + len(name) // 2),
        name_range.end,  # an identifier's end counts, as for a reference
    ):
        own = await _hover(client, def_uri, pos)
        assert own is not None, (kind, pos)
        assert own.contents.value == used.contents.value
        assert own.range == name_range
    # the keyword before the name is not the name
    keyword = await _hover(client, def_uri, types.Position(line=name_range.start.line, character=1))
    assert keyword is None


async def test_a_node_name_and_a_resource_title_still_answer_nothing(client: LanguageClient):
    site_uri, site = await _open(client, "manifests/site.pp")
    assert await _hover(client, site_uri, _pos(site, site.index("www.example.com") + 3)) is None
    bar_uri, bar = await _open(client, "modules/foo/manifests/bar.pp")
    assert await _hover(client, bar_uri, _pos(bar, bar.index("bar title") + 2)) is None
    # the resource type before the title still answers as the core type
    notify = await _hover(client, bar_uri, _pos(bar, bar.index("notify") + 2))
    assert notify is not None and "notify" in notify.contents.value
