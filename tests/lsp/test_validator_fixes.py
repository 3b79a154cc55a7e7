"""Quick fixes for the parser's and validator's findings (server/analysis/fixes.py) through a real LSP
client (pytest-lsp): Puppet (7.23 and OpenVox 8, the oracle) reports an error in each text; the server
publishes it, offers one quick fix attached to that diagnostic, and Puppet finds no error in the text
the fix gives. Where no fix is unambiguous, none is offered."""

from __future__ import annotations

import os
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.conformance.oracle import oracle_for
from tests.lsp.publishes import mark, wait_publish, workspace_client
from tests.test_lint_editor import apply

pytestmark = pytest.mark.asyncio(loop_scope="module")

# name -> (text, the code our server and Puppet give, the fix's title)
CASES = {
    "attributes": ("file { 'x':\n  ensure => present\n  mode   => '0644',\n}\n", "SYNTAX_ERROR", "','"),
    "hash": ("$h = {\n  'a' => 1\n  'b' => 2,\n}\nnotice($h)\n", "SYNTAX_ERROR", "','"),
    "array": ("$a = [\n  'x'\n  'y',\n]\nnotice($a)\n", "SYNTAX_ERROR", "','"),
    "parameters": ("class foo (\n  String $a\n  Integer $b = 1,\n) {}\n", "SYNTAX_ERROR", "','"),
    "arguments": ("notice(1 2)\n", "SYNTAX_ERROR", "','"),
    "resource bodies": (
        "file { 'x': ensure => present 'y': ensure => present }\n",
        "SYNTAX_ERROR",
        "';'",
    ),
    "quoted name": ("class 'foo' {}\n", "PARSE_QUOTED_NAME", "Remove the quotes"),
    "reserved word": ("$a = [private]\nnotice($a)\n", "RESERVED_WORD", "Quote"),
}
NO_FIX = {"dangling operator": "$a = 1 +\n", "else if": "if $a { } else if $b { }\n"}


client = workspace_client("fixws", "_fix_root")


async def _errors(client: LanguageClient, name: str, text: str) -> tuple[str, list[types.Diagnostic]]:
    uri = "file://" + os.path.join(client._fix_root, name.replace(" ", "_") + ".pp")  # type: ignore[attr-defined]
    before = mark(client)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="puppet", version=1, text=text)
        )
    )
    p = await wait_publish(client, uri, 1, after=before)
    return uri, [d for d in p.diagnostics if d.source == "puppet-xpp" and d.severity == 1]


async def _actions(client: LanguageClient, uri: str, d: types.Diagnostic) -> list[types.CodeAction]:
    got = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=d.range,
            context=types.CodeActionContext(diagnostics=[d]),
        )
    )
    return [
        a
        for a in got or []
        if isinstance(a, types.CodeAction) and a.diagnostics and a.diagnostics[0].source != "puppet-lint"
    ]


@pytest.mark.parametrize("puppet", ["7.23", "8"])
@pytest.mark.parametrize("name", list(CASES))
async def test_quick_fix_makes_puppet_accept(client: LanguageClient, name: str, puppet: str) -> None:
    oracle = oracle_for(puppet)
    text, code, title = CASES[name]
    theirs = [d for d in oracle.call("validate", source=text, path="x.pp") if d["severity"] == "error"]
    assert theirs, (name, "Puppet accepts the broken text")
    uri, ours = await _errors(client, name, text)
    assert [(d.code, d.range.start.line + 1) for d in ours] == [
        (d["code"] or code, d["line"]) for d in theirs
    ], name
    actions = await _actions(client, uri, ours[0])
    assert len(actions) == 1, [a.title for a in actions]
    fix = actions[0]
    assert fix.kind == types.CodeActionKind.QuickFix and title in fix.title
    assert list(fix.diagnostics or []) == [ours[0]]  # attached to the published diagnostic
    assert fix.edit is not None and fix.edit.changes is not None
    edits = [
        ((e.range.start.line, e.range.start.character), (e.range.end.line, e.range.end.character), e.new_text)
        for e in fix.edit.changes[uri]
    ]
    fixed = apply(text, edits)
    assert [
        d for d in oracle.call("validate", source=fixed, path="x.pp") if d["severity"] == "error"
    ] == [], fixed


@pytest.mark.parametrize("name", list(NO_FIX))
async def test_no_fix_when_ambiguous(client: LanguageClient, oracle: Any, name: str) -> None:
    text = NO_FIX[name]
    assert [d for d in oracle.call("validate", source=text, path="x.pp") if d["severity"] == "error"]
    uri, ours = await _errors(client, name, text)
    assert ours and await _actions(client, uri, ours[0]) == []
