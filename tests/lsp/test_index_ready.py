"""Nothing partial given as complete (issue 24, item 3), through a real client (pytest-lsp):

on a workspace large enough that indexing takes measurable time (the small environment of
test_references plus a copy of every corpus module, ~900 manifests), a references or rename request sent
right after ``initialized`` is either the complete answer (equal to the answer once indexing has ended)
or refused with a message that says why: ``ContentModified`` for references and call hierarchy, a
rename refusal "the workspace is still being indexed".  The indexing's ``window/workDoneProgress``
arrives in order (begin, reports, end) with counts of files.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.lsp.test_references import (
    CONFIG,
    _uri,
    build_workspace,
    locs,
    open_doc,
    pos_of,
    until,
    write_files,
)

pytestmark = pytest.mark.asyncio
T = TypeVar("T")

CORPUS = "/usr/share/puppet/modules"
# a module sorting after every corpus module: its uses of mymod::app are indexed last
LATE = {
    f"modules/zzz/manifests/use{k}.pp": f"class zzz::use{k} {{\n  include mymod::app\n  Class['mymod::app'] -> Class['zzz']\n}}\n"
    for k in range(6)
}
LATE["modules/zzz/manifests/init.pp"] = "class zzz {\n  contain 'mymod::app'\n}\n"


@pytest.fixture
def big_env(tmp_path):
    if not os.path.isdir(CORPUS):
        pytest.skip("the corpus modules are not installed")
    env = build_workspace(tmp_path)
    for name in sorted(os.listdir(CORPUS)):
        if re.fullmatch(r"[a-z][a-z0-9_]*", name) and name not in ("mymod", "other", "zzz"):
            shutil.copytree(os.path.join(CORPUS, name), os.path.join(env, "modules", name), symlinks=False)
    write_files(env, LATE)
    return env


async def start_cold(client: LanguageClient, env: str) -> None:
    """Initialize a server on ``env`` as VS Code does (it takes the file watchers), not waiting for the
    indexing."""

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        return None

    await client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual_studio_code"),
            root_uri=_uri(env),
            workspace_folders=[types.WorkspaceFolder(uri=_uri(env), name="production")],
        )
    )


@pytest_lsp.fixture(config=CONFIG)
async def cold(lsp_client: LanguageClient, big_env):
    """A server initialized on the big workspace, not waited for."""
    await start_cold(lsp_client, big_env)
    yield
    await lsp_client.shutdown_session()


def ended_progress(client: LanguageClient) -> list:
    return [v for v in client.progress_reports.values() if v and isinstance(v[-1], types.WorkDoneProgressEnd)]


async def indexing_ended(client: LanguageClient) -> None:
    async def ended():
        return bool(ended_progress(client))

    await until(ended, timeout=300)


async def early_then_complete(client: LanguageClient, ask: Callable[[], Awaitable[T]]) -> tuple:
    """(answer right away or None, its refusal or None, answer once the indexing has ended)."""
    try:
        early, refused = await ask(), None
    except JsonRpcException as e:
        early, refused = None, e
    await indexing_ended(client)
    return early, refused, await ask()


def open_site(client: LanguageClient, env: str) -> tuple[types.TextDocumentIdentifier, types.Position]:
    """Open site.pp; the document and the position of its first ``mymod::app``."""
    site = os.path.join(env, "manifests/site.pp")
    open_doc(client, site)
    return types.TextDocumentIdentifier(uri=_uri(site)), pos_of(site, "mymod::app")


def _edits(edit: types.WorkspaceEdit | None) -> set:
    out = set()
    for ch in (edit.document_changes or []) if edit is not None else []:
        if isinstance(ch, types.TextDocumentEdit):
            for e in ch.edits:
                out.add((ch.text_document.uri, e.range.start.line, e.range.start.character, e.new_text))
        else:
            out.add((type(ch).__name__, ch.old_uri, ch.new_uri))
    return out


async def test_rename_right_after_start_is_complete_or_refused(cold: LanguageClient, big_env):
    env = big_env
    document, position = open_site(cold, env)
    params = types.RenameParams(text_document=document, position=position, new_name="mymod::web")
    early, refused, complete = await early_then_complete(
        cold, lambda: cold.text_document_rename_async(params)
    )
    early, complete = _edits(early), _edits(complete)
    # every use, the late module's included (its seven files)
    assert {u for u, *_ in complete} >= {_uri(os.path.join(env, rel)) for rel in LATE}
    if refused is not None:
        assert "the workspace is still being indexed" in refused.message, refused
    else:
        assert early == complete


async def test_references_right_after_start_are_complete_or_content_modified(cold: LanguageClient, big_env):
    env = big_env
    document, position = open_site(cold, env)
    params = types.ReferenceParams(
        text_document=document, position=position, context=types.ReferenceContext(include_declaration=True)
    )
    early, refused, complete = await early_then_complete(
        cold, lambda: cold.text_document_references_async(params)
    )
    early, complete = locs(env, early), locs(env, complete)
    assert {p for p, *_ in complete} >= set(LATE)
    if refused is not None:
        assert refused.code == -32801, refused
        assert "still being indexed" in refused.message
    else:
        assert early == complete


async def test_indexing_progress_in_order_with_counts(cold: LanguageClient, big_env):
    await indexing_ended(cold)
    (seq,) = ended_progress(cold)
    begin, *reports, end = seq
    assert isinstance(begin, types.WorkDoneProgressBegin)
    assert isinstance(end, types.WorkDoneProgressEnd)
    assert all(isinstance(r, types.WorkDoneProgressReport) for r in reports)
    total = int(re.fullmatch(r"0/(\d+) files", begin.message or "").group(1))
    assert total > 900
    counts = [int(re.fullmatch(rf"(\d+)/{total} files", r.message or "").group(1)) for r in reports]
    assert reports, "a workspace this size reports progress between begin and end"
    assert counts == sorted(counts) and counts[-1] <= total
    percentages = [r.percentage for r in reports]
    assert percentages == sorted(percentages)
    assert f"Indexed {total} files" in (end.message or "")


async def test_open_documents_module_and_what_it_names_are_indexed_first(cold: LanguageClient, big_env):
    """zzz sorts after every corpus module; with one of its files open at start, its own module and the
    module it names (mymod) are indexed before the corpus: the server says which directories it indexed
    first (its log), and a definition in that file then answers (no waiting for the whole index: an
    empty answer before the index is complete is refused, never given -- the tests below)."""
    use = os.path.join(big_env, "modules/zzz/manifests/use0.pp")
    open_doc(cold, use)
    await indexing_ended(cold)
    (first,) = [m.message for m in cold.log_messages if m.message.startswith("puppet-xpp: indexing first: ")]
    dirs = first.split(": ", 2)[2].split(", ")
    assert dirs == [os.path.join(big_env, "modules", name) for name in ("zzz", "mymod")], dirs
    r = await cold.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=_uri(use)), position=pos_of(use, "mymod::app")
        )
    )
    assert _uri(os.path.join(big_env, "modules/mymod/manifests/app.pp")) in {loc.uri for loc in r or []}


async def test_workspace_symbols_right_after_start_are_complete_or_content_modified(cold: LanguageClient):
    """A workspace search is never a partial list: the late module's classes are in the answer, or the
    request is refused with ContentModified saying why."""
    params = types.WorkspaceSymbolParams(query="zzz::use")
    early, refused, complete = await early_then_complete(cold, lambda: cold.workspace_symbol_async(params))
    names = sorted(s.name for s in complete or [])
    assert names == [f"zzz::use{k}" for k in range(6)]
    if refused is not None:
        assert refused.code == -32801, refused
        assert "still being indexed" in refused.message
    else:
        assert sorted(s.name for s in early or []) == names


async def test_definition_right_after_start_is_found_or_content_modified(cold: LanguageClient, big_env):
    """Go to definition of a class the index learns late: the answer, or ContentModified saying why --
    never a silent null while the index is incomplete."""
    document, position = open_site(cold, big_env)
    params = types.DefinitionParams(text_document=document, position=position)
    early, refused, complete = await early_then_complete(
        cold, lambda: cold.text_document_definition_async(params)
    )
    assert complete, "the definition is found once indexed"
    if refused is not None:
        assert refused.code == -32801, refused
        assert "still being indexed" in refused.message
    else:
        assert early == complete
