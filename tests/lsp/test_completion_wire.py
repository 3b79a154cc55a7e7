"""The completion list goes out already in its JSON form (server/lsp/convert.py ``Prebuilt``): the same
JSON lsprotocol's own types and converter give, and what a real client (pytest-lsp) reads back; the
edit range given once (``itemDefaults.editRange``) to a client that takes it, and the documentation of
an item that can be resolved left to ``completionItem/resolve`` for a client that resolves it."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient

from puppet_xpp.server.analysis.answers import CompletionItem, Completions
from puppet_xpp.server.lsp import convert
from tests.lsp.publishes import REPO, SERVER, open_file, wait_publish

ITEMS = [
    CompletionItem(
        "file", "Class", "resource type", documentation="Manages files.", data={"k": "type", "n": "file"}
    ),
    CompletionItem("ensure", "Property", "property: present, absent", insert_text="ensure => "),
    CompletionItem("$facts", "Variable", "built-in", insert_text="facts", filter_text="facts"),
    CompletionItem("alias", "Property", "metaparameter", insert_text="alias => ", sort_text="~alias"),
    CompletionItem("lookup", "Function", None, snippet=True, data={"k": "fn", "n": "lookup"}),
    CompletionItem("if", "Keyword"),
]


def _with_edits(items: list[CompletionItem], span: Any) -> list[CompletionItem]:
    for it in items:
        it.edit = (span, "lookup(${1:name})" if it.snippet else (it.insert_text or it.label))
    return items


def test_the_json_is_lsprotocols() -> None:
    """Each item, and the list, as lsprotocol's converter writes them (pygls' own, default_converter)."""
    converter = default_converter()
    items = _with_edits([CompletionItem(**vars(it)) for it in ITEMS], ((3, 2), (3, 4)))
    items.append(CompletionItem("no_edit", "Text", "x", documentation="d"))
    for it in items:
        assert convert.completion_item_json(it) == converter.unstructure(convert.completion_item(it))
    mine = convert.completion_list(Completions(items)).__dict__
    theirs = converter.unstructure(
        types.CompletionList(is_incomplete=False, items=[convert.completion_item(it) for it in items])
    )
    assert mine == theirs


def _client(name: str, caps: str) -> Any:
    @pytest_lsp.fixture(
        config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": REPO}), scope="module"
    )
    async def client(lsp_client: LanguageClient, tmp_path_factory: Any) -> Any:
        root = str(tmp_path_factory.mktemp(name))

        @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)  # (VS Code answers the file watchers)
        def register_capability(params: Any) -> None:
            return None

        await lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=pytest_lsp.client_capabilities(caps), root_uri="file://" + root
            )
        )
        lsp_client._wire_root = root  # type: ignore[attr-defined]
        yield
        await lsp_client.shutdown_session()

    return client


nvim = _client("wire_nvim", "neovim@v0.11.0")  # itemDefaults.editRange; resolves no documentation
vscode = _client("wire_vscode", "visual-studio-code")  # no itemDefaults; resolves documentation

TEXT = "class app {\n  fi\n  file { '/x':\n    ens\n  }\n}\n"


async def _complete(client: LanguageClient, name: str, line: int, character: int) -> types.CompletionList:
    uri = open_file(
        client, client._wire_root, f"app/manifests/{name}.pp", TEXT.replace("app {", f"app::{name} {{")
    )  # type: ignore[attr-defined]
    await wait_publish(client, uri, 1, timeout=60)
    got = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=character),
        )
    )
    assert isinstance(got, types.CompletionList)
    return got


@pytest.mark.asyncio(loop_scope="module")
async def test_edit_range_given_once(nvim: LanguageClient) -> None:
    got = await _complete(nvim, "a", 1, 4)
    expected = types.Range(start=types.Position(line=1, character=2), end=types.Position(line=1, character=4))
    assert got.item_defaults is not None and got.item_defaults.edit_range == expected
    assert all(it.text_edit is None for it in got.items)
    file = next(it for it in got.items if it.label == "file" and it.kind == types.CompletionItemKind.Class)
    assert file.text_edit_text is None  # (the label is the text)
    assert file.documentation  # (this client does not resolve documentation)
    attrs = await _complete(nvim, "b", 3, 7)
    ensure = next(it for it in attrs.items if it.label == "ensure")
    assert ensure.text_edit_text == "ensure => " and ensure.text_edit is None
    assert attrs.item_defaults is not None and attrs.item_defaults.edit_range == types.Range(
        start=types.Position(line=3, character=4), end=types.Position(line=3, character=7)
    )


@pytest.mark.asyncio(loop_scope="module")
async def test_edits_per_item_and_documentation_resolved(vscode: LanguageClient) -> None:
    got = await _complete(vscode, "c", 1, 4)
    assert got.item_defaults is None
    expected = types.Range(start=types.Position(line=1, character=2), end=types.Position(line=1, character=4))
    for it in got.items:
        assert isinstance(it.text_edit, types.TextEdit) and it.text_edit.range == expected, it
    file = next(it for it in got.items if it.label == "file" and it.kind == types.CompletionItemKind.Class)
    assert file.documentation is None and file.data is not None
    resolved = await vscode.completion_item_resolve_async(file)
    assert isinstance(resolved.documentation, types.MarkupContent)
    assert "file" in resolved.documentation.value.lower()
    keyword = next(it for it in got.items if it.label == "unless")
    assert keyword.data is None  # (nothing to resolve: nothing left out)
