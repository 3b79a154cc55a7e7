"""10,000 rapid edits through the real protocol: the server stays responsive, its memory stays
bounded, and the diagnostics finally published are those of the final text (checked against a full
parse + validation of that text)."""

from __future__ import annotations

import os
import random
import resource

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from puppet_xpp.grammar.check import CheckConfig, check
from puppet_xpp.server.analysis.document import LineIndex
from tests.lsp.publishes import mark, send_edit, wait_publish
from tests.lsp.test_lsp_e2e import REPO, SERVER, open_document

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]

BASE = (
    open(
        os.path.join(REPO, "examples", "production", "modules", "base", "manifests", "init.pp"),
        encoding="utf-8",
    ).read()
    * 3
)
PIECES = ["{", "}", "(", ")", "'", '"', "\n", " ", "$x", ";", ",", "=>", "x", "1", "é", "#", "\n\n"]


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": REPO}), scope="module"
)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=pytest_lsp.client_capabilities("neovim@v0.7.0"))
    )
    yield
    await lsp_client.shutdown_session()


def _server_rss_mb(client) -> float | None:
    pid = getattr(getattr(client, "_server", None), "pid", None)
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


async def test_ten_thousand_rapid_edits(client: LanguageClient, tmp_path):
    path = str(tmp_path / "rapid.pp")
    m = mark(client)
    uri = await open_document(client, path, BASE)
    await wait_publish(client, uri, after=m)
    rnd = random.Random(1234)
    text = BASE
    version = 1
    rss = []
    for k in range(10_000):
        li = LineIndex(text.encode("utf-8"))
        n = len(text)
        a = rnd.randrange(n + 1)
        b = min(n, a + rnd.choice((0, 0, 1, 2)))
        piece = rnd.choice(PIECES)
        (l0, c0), (l1, c1) = li.position(len(text[:a].encode())), li.position(len(text[:b].encode()))
        text = text[:a] + piece + text[b:]
        version += 1
        send_edit(client, uri, version, (l0, c0), (l1, c1), piece)
        if k % 1000 == 999:
            # responsive: a request in the middle of the storm is answered promptly
            res = await client.text_document_document_symbol_async(
                types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
            assert res is not None
            r = _server_rss_mb(client)
            if r is not None:
                rss.append(r)
    # one more (empty) change; every publish is recorded, so the final one cannot slip past the wait
    m = mark(client)
    version += 1
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
                    ),
                    text="",
                )
            ],
        )
    )
    # the final diagnostics are for the final version and equal a full analysis of the final text
    p = await wait_publish(client, uri, version, after=m, timeout=300)
    checked = check(text, CheckConfig(file=path))
    res, vd = checked.parse, checked.validation
    li = LineIndex(text.encode("utf-8"))
    want = sorted(
        (li.position(d.offset or 0), d.code) for d in list(res.diagnostics) + vd if d.severity != "ignore"
    )
    got = sorted(((d.range.start.line, d.range.start.character), d.code) for d in p.diagnostics)
    assert got == want
    if len(rss) >= 3:
        assert max(rss) < 400 and rss[-1] < rss[0] * 2 + 50, rss
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 0
