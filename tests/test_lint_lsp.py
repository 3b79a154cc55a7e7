"""Lint through the language server with a real LSP client (pytest-lsp): puppet-lint diagnostics while
typing (on by default; ``puppet.lint.enabled: false`` turns them off), Format Document, Format
Selection, on-type formatting and code actions; the results are judged by puppet-lint (the oracle op
``lint``)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.publishes import mark, published, wait_publish, workspace_client
from tests.test_lint_editor import apply

pytestmark = pytest.mark.asyncio(loop_scope="module")
TEXT = "class foo {\n  file { 'x':\n    ensure => \"present\",\n    mode => 644,\n  }\n}\n"


client = workspace_client("lintws", "_lint_root")


def _edits(edits: list[types.TextEdit]) -> list[Any]:
    return [
        ((e.range.start.line, e.range.start.character), (e.range.end.line, e.range.end.character), e.new_text)
        for e in edits
    ]


async def _open(client: LanguageClient, name: str, text: str) -> str:
    path = os.path.join(client._lint_root, "foo", "manifests", name)  # type: ignore[attr-defined]
    uri = "file://" + path
    client._mark = mark(client)  # type: ignore[attr-defined]
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="puppet", version=1, text=text)
        )
    )
    return uri


async def wait_lint(
    client: LanguageClient, uri: str, version: int, after: int
) -> types.PublishDiagnosticsParams:
    """The lint publish of a version with lint problems: the server publishes each version's parse and
    validator diagnostics first, then the same version again as more findings come in (the deep checks',
    then, typing paused, lint's): the first of them that holds puppet-lint's."""
    p = await wait_publish(client, uri, version, after=after)
    while not any(d.source == "puppet-lint" for d in p.diagnostics):
        p = await wait_publish(client, uri, version, after=published(client).index(p) + 1)
    return p


async def test_lint_diagnostics_and_features(client: LanguageClient, oracle: Any) -> None:
    uri = await _open(client, "init.pp", TEXT)
    p = await wait_lint(client, uri, 1, client._mark)  # type: ignore[attr-defined]
    lint = [d for d in p.diagnostics if d.source == "puppet-lint"]
    theirs = oracle.call("lint", source=TEXT, path="foo/manifests/init.pp")["problems"]
    assert sorted((d.code, d.range.start.line + 1, d.range.start.character + 1) for d in lint) == sorted(
        (t["check"], t["line"], t["column"]) for t in theirs
    )

    # Format Document: nothing left for puppet-lint's layout and quoting checks
    edits = await client.text_document_formatting_async(
        types.DocumentFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )
    formatted = apply(TEXT, _edits(edits or []))
    left = oracle.call("lint", source=formatted, path="foo/manifests/init.pp")["problems"]
    assert [t["check"] for t in left] == ["documentation"], formatted

    # Format Selection of line 3 only: only that line changes
    edits = await client.text_document_range_formatting_async(
        types.DocumentRangeFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=3, character=0), end=types.Position(line=3, character=5)
            ),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )
    assert edits and all(e.range.start.line <= 3 <= e.range.end.line for e in edits)

    # code actions on line 3: a fix for each fixable problem there, an ignore for each
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=3, character=0), end=types.Position(line=3, character=0)
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    titles = [a.title for a in actions or [] if isinstance(a, types.CodeAction)]
    assert "Ignore file_mode on this line" in titles and any(
        t.startswith("Fix: unquoted file mode") for t in titles
    )
    fix = next(
        a
        for a in actions or []
        if isinstance(a, types.CodeAction) and a.title.startswith("Fix: unquoted file mode")
    )
    assert fix.edit is not None and fix.edit.changes is not None
    after = apply(TEXT, _edits(fix.edit.changes[uri]))
    checks = [t["check"] for t in oracle.call("lint", source=after, path="foo/manifests/init.pp")["problems"]]
    assert "unquoted_file_mode" not in checks

    # on-type formatting after '=>': the block's arrows aligned
    edits = await client.text_document_on_type_formatting_async(
        types.DocumentOnTypeFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=3, character=11),
            ch=">",
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )
    aligned = apply(TEXT, _edits(edits or []))
    checks = [
        t["check"] for t in oracle.call("lint", source=aligned, path="foo/manifests/init.pp")["problems"]
    ]
    assert "arrow_alignment" not in checks and "arrow_alignment" in [t["check"] for t in theirs]
    assert len(published(client)) >= 1


async def test_lint_off_by_setting(client: LanguageClient) -> None:
    uri0 = "file://" + os.path.join(client._lint_root, "foo", "manifests", "init.pp")  # type: ignore[attr-defined]
    before = mark(client)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"puppet": {"lint": {"enabled": False}}})
    )
    p0 = await wait_publish(client, uri0, after=before)  # the open document is published again
    assert [d for d in p0.diagnostics if d.source == "puppet-lint"] == []
    uri = await _open(client, "other.pp", TEXT)
    p = await wait_publish(client, uri, 1, after=client._mark)  # type: ignore[attr-defined]
    assert [d for d in p.diagnostics if d.source == "puppet-lint"] == []
