"""Lint while typing (server/lsp/lint.py) through a real LSP client (pytest-lsp), on the apache module's
vhost.pp (2800 lines): lint is on without any setting; each version's parser/validator diagnostics are
published before its lint diagnostics (lint never holds them up), and once typing stops the lint
diagnostics arrive and are puppet-lint's (the oracle) for the final text.

Run with ``-s`` to see the measured keystroke -> diagnostics times."""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.publishes import mark, published, send_edit, wait_publish, workspace_client

VHOST = "/usr/share/puppet/modules/apache/manifests/vhost.pp"
pytestmark = pytest.mark.asyncio(loop_scope="module")
TYPED = '  $typed_in = "no interpolation"\n  file { $typed_in: mode => 644 }\n'
INTERVAL = 0.05  # seconds between keystrokes


client = workspace_client("typews", "_type_root")


def _arrivals(client: LanguageClient) -> list[tuple[float, types.PublishDiagnosticsParams]]:
    """(arrival time, params) of every publish from now on."""
    published(client)
    rec: list[tuple[float, types.PublishDiagnosticsParams]] = []
    features = client.protocol.fm.features
    inner = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def on_publish(params: Any, *args: Any) -> Any:
        rec.append((time.monotonic(), params))
        return inner(params, *args)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = on_publish
    return rec


def _lint(diags: Any) -> list[tuple[str, int, int]]:
    return sorted(
        (str(d.code), d.range.start.line + 1, d.range.start.character + 1)
        for d in diags
        if d.source == "puppet-lint"
    )


def _theirs(oracle: Any, text: str) -> list[tuple[str, int, int]]:
    problems = oracle.call("lint", source=text, path="apache/manifests/vhost.pp")["problems"]
    return sorted((p["check"], p["line"], p["column"]) for p in problems if p["kind"] in ("warning", "error"))


async def test_typing_with_lint_on_vhost(client: LanguageClient, oracle: Any) -> None:
    if not os.path.isfile(VHOST):
        pytest.skip(f"{VHOST} not installed")
    text = open(VHOST, encoding="utf-8").read()
    path = os.path.join(client._type_root, "apache", "manifests", "vhost.pp")  # type: ignore[attr-defined]
    os.makedirs(os.path.dirname(path))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    uri = "file://" + path
    arrivals = _arrivals(client)
    before = mark(client)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="puppet", version=1, text=text)
        )
    )
    first = await wait_publish(client, uri, 1, after=before)
    opened = await wait_publish(client, uri, 1, after=published(client).index(first) + 1)
    while not _lint(opened.diagnostics):  # (the deep checks' findings may come before lint's)
        opened = await wait_publish(client, uri, 1, after=published(client).index(opened) + 1)
    assert _lint(opened.diagnostics) == _theirs(oracle, text)  # on by default

    # type TYPED character by character at the start of the define's body
    line = text.split("\n").index(") {") + 1
    sent: dict[int, float] = {}
    row, col, version = line, 0, 1
    for ch in TYPED:
        version += 1
        send_edit(client, uri, version, (row, col), (row, col), ch)
        sent[version] = time.monotonic()
        row, col = (row + 1, 0) if ch == "\n" else (row, col + 1)
        await asyncio.sleep(INTERVAL)
    last = version
    lines = text.split("\n")
    final = "\n".join(lines[:line] + TYPED.rstrip("\n").split("\n") + lines[line:])
    p_last = await wait_publish(client, uri, last, after=before)
    theirs = _theirs(oracle, final)
    # the lint diagnostics of the final text are puppet-lint's: in the parse publish of the last
    # version when the carried result was already right, else in the one lint sends after it
    deadline = time.monotonic() + 30
    while _lint(published(client)[-1].diagnostics) != theirs and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await asyncio.sleep(1.0)  # nothing else arrives for the final text
    final_pubs = [p for p in published(client)[published(client).index(p_last) :] if p.uri == uri]
    assert all(p.version == last for p in final_pubs) and _lint(final_pubs[-1].diagnostics) == theirs
    assert {c for c, ln, _ in theirs if line < ln <= line + 2} >= {"double_quoted_strings", "file_mode"}
    # the parser/validator diagnostics did not wait for lint: the same in every publish of the version
    assert all(
        [d for d in p.diagnostics if d.source != "puppet-lint"]
        == [d for d in p_last.diagnostics if d.source != "puppet-lint"]
        for p in final_pubs
    )

    # keystroke -> parse/validator diagnostics, and last keystroke -> the final lint diagnostics
    parse_lat = []
    t_lint = None
    seen: set[int] = set()
    for t, p in arrivals:
        if p.uri != uri or p.version not in sent:
            continue
        if p.version not in seen:
            seen.add(p.version)
            parse_lat.append(t - sent[p.version])
        if p.version == last and t_lint is None and _lint(p.diagnostics) == theirs:
            t_lint = t - sent[last]
    assert t_lint is not None and parse_lat
    print(
        f"\nvhost.pp, {len(TYPED)} keystrokes every {INTERVAL * 1000:.0f} ms, lint on: {len(parse_lat)} versions "
        f"published; keystroke -> parse diagnostics median {statistics.median(parse_lat) * 1000:.0f} ms, "
        f"max {max(parse_lat) * 1000:.0f} ms; last keystroke -> final lint diagnostics {t_lint * 1000:.0f} ms"
    )
    assert t_lint < 20  # bounded: the pause, plus one or two lints (generous for a shared machine)
