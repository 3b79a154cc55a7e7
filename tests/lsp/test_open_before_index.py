"""A manifest opened before the workspace indexing ends is in the index once it ends, with the text of
its open document, through a real client (pytest-lsp, Neovim 0.7 profile) -- as an editor that reopens
the last session's files at start does.

The indexing does not read an open manifest from disk (the editor's text is the file's, saved or not);
such a file used to be neither read nor filed from its document, so a reference to its class from
another file had no hover and no definition until it was saved.  Here the class's file is opened at
once after ``initialize``, the file using it next, and when the indexing is done the use's hover and
definition answer with the class's documentation and location -- those of the open text when it was
edited and not saved.  Each start writes the persistent index cache (``PUPPET_XPP_INDEX_CACHE``): a
second start, whose cache holds every file, answers the same, and the cache holds the file on disk,
never the unsaved text."""

from __future__ import annotations

import asyncio
import os
import sys
import time

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from puppet_xpp.server.analysis.document import uri_of_path
from tests.lsp.test_index_cache import greet_function, write_files

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = [sys.executable, "-c", "import sys; from puppet_xpp.server.cli.main import main; sys.exit(main())"]
pytestmark = pytest.mark.asyncio

CLASS_FILE = "modules/foo/manifests/bar.pp"
USE_FILE = "manifests/site.pp"
ON_DISK = (
    "# @summary Configures bar from disk.\nclass foo::bar (Integer $port = 8080) {\n  notify { 'bar': }\n}\n"
)
# the same file edited in the editor, not saved: another summary, and the class two lines lower
EDITED = (
    "# A line added in the editor.\n"
    "\n"
    "# @summary Configures bar as edited.\n"
    "class foo::bar (Integer $port = 8080) {\n"
    "  notify { 'bar': }\n"
    "}\n"
)
FILES = {
    "environment.conf": "modulepath = modules\n",
    CLASS_FILE: ON_DISK,
    "modules/foo/manifests/init.pp": "class foo {\n}\n",
    USE_FILE: "node default {\n  include foo::bar\n}\n",
}
USE = FILES[USE_FILE]


@pytest.fixture
def workspace(tmp_path):
    """The environment (its files modified an hour ago: their cached entries are trusted by stat) and
    the index cache's directory."""
    env = str(tmp_path / "production")
    write_files(env, FILES, age=3600)
    return env, str(tmp_path / "cache" / "index")


async def start(env: str, cache: str, opened: dict[str, str]) -> LanguageClient:
    """The server on ``env``, the files of ``opened`` (path: text) opened in that order before the
    indexing begins (returns once it is done).  The server asks for the configuration at
    ``initialized`` and indexes after the answer: the client opens the files before it answers, as an
    editor reopening its last session does at once, so they are open when the indexing looks."""
    config = ClientServerConfig(
        server_command=SERVER,
        server_env={"PYTHONPATH": REPO, "PUPPET_XPP_INDEX_CACHE": cache, "PUPPET_XPP_INDEX_WORKERS": "0"},
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)

    async def configuration(params: types.ConfigurationParams) -> list[object]:
        for rel, text in opened.items():
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    text_document=types.TextDocumentItem(
                        uri=uri_of_path(os.path.join(env, rel)), language_id="puppet", version=1, text=text
                    )
                )
            )
        return [{"xppOnSave": False} for _ in params.items]

    client.protocol.fm.features[types.WORKSPACE_CONFIGURATION] = configuration
    capabilities = pytest_lsp.client_capabilities("neovim@v0.7.0")
    assert capabilities.workspace is not None
    capabilities.workspace.configuration = True
    uri = uri_of_path(env)
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=uri,
            workspace_folders=[types.WorkspaceFolder(uri=uri, name="production")],
            initialization_options={"puppet": {"xppOnSave": False}},
        )
    )
    deadline = time.monotonic() + 60
    while not any(m.message.startswith("puppet-xpp: indexed ") for m in client.log_messages):
        assert time.monotonic() < deadline, [m.message for m in client.log_messages]
        await asyncio.sleep(0.05)
    return client


def logs(client: LanguageClient) -> list[str]:
    return [m.message for m in client.log_messages]


def opened_first(client: LanguageClient, env: str) -> bool:
    """The class's file was open when the indexing began: its module was indexed first (the indexing
    orders the files of the open documents' modules first, and logs them)."""
    module = os.path.join(env, "modules", "foo")
    return any(m.startswith("puppet-xpp: indexing first: ") and module in m for m in logs(client))


async def hover_and_definition(
    client: LanguageClient, env: str
) -> tuple[types.Hover | None, list[types.Location]]:
    """The hover and the definition of ``foo::bar`` in ``include foo::bar`` of the use's file (opened
    already); a few tries while the index may still be filed (an answer missing for good stays so)."""
    uri = uri_of_path(os.path.join(env, USE_FILE))
    at = USE.index("foo::bar") + 3
    pos = types.Position(line=USE.count("\n", 0, at), character=at - (USE.rfind("\n", 0, at) + 1))
    doc = types.TextDocumentIdentifier(uri=uri)
    hover, locations = None, []
    for _ in range(20):
        hover = await client.text_document_hover_async(types.HoverParams(text_document=doc, position=pos))
        found = await client.text_document_definition_async(
            types.DefinitionParams(text_document=doc, position=pos)
        )
        if found is None:
            locations = []
        elif isinstance(found, list):
            locations = [
                x if isinstance(x, types.Location) else types.Location(x.target_uri, x.target_range)
                for x in found
            ]
        else:
            locations = [found]
        if hover is not None and locations:
            break
        await asyncio.sleep(0.1)
    return hover, locations


def class_line(text: str) -> int:
    return text[: text.index("class foo::bar")].count("\n")


async def check_answers(client: LanguageClient, env: str, text: str, summary: str) -> None:
    """The use's hover shows ``summary``, its definition is the class in ``text``, and the class
    name is completed after ``include foo::``."""
    hover, locations = await hover_and_definition(client, env)
    assert hover is not None, logs(client)
    assert isinstance(hover.contents, types.MarkupContent)
    assert summary in hover.contents.value
    assert [(loc.uri, loc.range.start.line) for loc in locations] == [
        (uri_of_path(os.path.join(env, CLASS_FILE)), class_line(text))
    ]
    at = USE.index("foo::bar") + len("foo::")
    found = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri_of_path(os.path.join(env, USE_FILE))),
            position=types.Position(line=1, character=at - (USE.index("\n") + 1)),
        )
    )
    items = found.items if isinstance(found, types.CompletionList) else found or []
    assert "foo::bar" in [item.label for item in items], [item.label for item in items]


@pytest.mark.parametrize("text", [ON_DISK, EDITED], ids=["as-on-disk", "edited-unsaved"])
async def test_a_class_opened_before_the_indexing_answers_from_another_file(workspace, text):
    env, cache = workspace
    summary = "Configures bar from disk." if text is ON_DISK else "Configures bar as edited."
    client = await start(env, cache, {CLASS_FILE: text, USE_FILE: USE})
    try:
        assert opened_first(client, env), logs(client)
        await check_answers(client, env, text, summary)
    finally:
        await client.shutdown_session()


async def test_the_second_start_from_the_index_cache_answers_the_same(workspace):
    env, cache = workspace
    first = await start(env, cache, {CLASS_FILE: EDITED, USE_FILE: USE})
    try:
        assert opened_first(first, env)
        await check_answers(first, env, EDITED, "Configures bar as edited.")
    finally:
        await first.shutdown_session()
    deadline = time.monotonic() + 30
    while not (os.path.isdir(cache) and any(n.endswith(".json") for n in os.listdir(cache))):
        assert time.monotonic() < deadline, "no index cache written"
        await asyncio.sleep(0.05)

    # the second start: the edited text still unsaved, the class's file opened at once again
    second = await start(env, cache, {CLASS_FILE: EDITED, USE_FILE: USE})
    try:
        assert opened_first(second, env)
        assert any(
            m.startswith("puppet-xpp: workspace files and index cache read") for m in logs(second)
        ) or any("from the index cache)" in m and "(0 from" not in m for m in logs(second)), logs(second)
        await check_answers(second, env, EDITED, "Configures bar as edited.")
    finally:
        await second.shutdown_session()

    # a start where the class's file is not open: the index (and its cache) hold the file on disk
    third = await start(env, cache, {USE_FILE: USE})
    try:
        await check_answers(third, env, ON_DISK, "Configures bar from disk.")
    finally:
        await third.shutdown_session()


RUBY_FILE = "modules/foo/lib/puppet/functions/foo/greet.rb"
RUBY = greet_function("foo")
CALL = "node default {\n  $x = foo::greet('you')\n}\n"


async def test_a_ruby_function_opened_before_the_indexing_is_read_from_disk(workspace):
    """An open Ruby file's text is not analysed: the indexing reads it from disk, as its save does."""
    env, cache = workspace
    write_files(env, {RUBY_FILE: RUBY, USE_FILE: CALL}, age=3600)
    client = await start(env, cache, {RUBY_FILE: RUBY, USE_FILE: CALL})
    try:
        assert opened_first(client, env), logs(client)
        uri = uri_of_path(os.path.join(env, USE_FILE))
        at = CALL.index("foo::greet") + 3
        pos = types.Position(line=1, character=at - (CALL.index("\n") + 1))
        hover = await client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=pos)
        )
        assert hover is not None, logs(client)
        assert isinstance(hover.contents, types.MarkupContent)
        assert "Greets whoever is named, politely." in hover.contents.value
    finally:
        await client.shutdown_session()
