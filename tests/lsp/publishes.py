"""Race-free waiting for publishDiagnostics in pytest-lsp tests, and the other pieces every such test
needs (an edit sent as one didChange, a module-scoped client on a fresh workspace).

`LanguageClient.wait_for_notification` only sees notifications that arrive after it is called, and
two publishes read from the server in one chunk resolve at most one waiter: the other is lost and the
test would wait forever.  Here every publish is recorded as it arrives, and waiting scans the record.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = [sys.executable, "-c", "import sys; from puppet_xpp.server.cli.main import main; sys.exit(main())"]


def workspace_client(prefix: str, attr: str) -> Any:
    """A module-scoped pytest-lsp client fixture: the server on a fresh workspace folder (named after
    `prefix`, its path kept on the client as `attr`), initialised as Neovim 0.7, default settings."""

    @pytest_lsp.fixture(
        config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": REPO}), scope="module"
    )
    async def client(lsp_client: LanguageClient, tmp_path_factory: Any) -> Any:  # (injected by its type)
        root = str(tmp_path_factory.mktemp(prefix))
        await lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=pytest_lsp.client_capabilities("neovim@v0.7.0"), root_uri="file://" + root
            )
        )
        setattr(lsp_client, attr, root)
        yield
        await lsp_client.shutdown_session()

    return client


def send_edit(client, uri: str, version: int, start: tuple, end: tuple, text: str) -> None:
    """One didChange of `uri` to `version`: the range start..end ((line, character) pairs) becomes text."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=start[0], character=start[1]),
                        end=types.Position(line=end[0], character=end[1]),
                    ),
                    text=text,
                )
            ],
        )
    )


def open_file(client, root: str, rel: str, text: str) -> str:
    """Write ``text`` to ``root/rel`` and open it in the client (didOpen, version 1); its URI."""
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    uri = "file://" + path
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="puppet", version=1, text=text)
        )
    )
    return uri


def published(client) -> list:
    """All publishDiagnostics params received so far (recording starts on the first call)."""
    rec = getattr(client, "_puppet_xpp_published", None)
    if rec is None:
        rec = client._puppet_xpp_published = []
        features = client.protocol.fm.features
        default = features[
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS
        ]  # pytest-lsp's (records client.diagnostics)

        def on_publish(params, *args):
            rec.append(params)
            return default(params, *args)

        features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = on_publish
    return rec


def mark(client) -> int:
    """Where to start looking for a publish caused by what the test does next."""
    return len(published(client))


async def wait_publish(
    client, uri, version=None, after=0, timeout=60.0, where=None
) -> types.PublishDiagnosticsParams:
    """The first publish for uri (and version, if given; and that ``where(publish)`` accepts, if given)
    recorded at index >= after."""
    rec = published(client)
    deadline = time.monotonic() + timeout
    i = after
    while True:
        while i < len(rec):
            p = rec[i]
            i += 1
            if p.uri == uri and (version is None or p.version == version) and (where is None or where(p)):
                return p
        if time.monotonic() > deadline:
            raise AssertionError(f"no diagnostics published for {uri} version {version} in {timeout} s")
        await asyncio.sleep(0.005)
