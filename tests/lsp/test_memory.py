"""The memory of the whole language server (issue 31 item 2: lint worker included), through a real client
(pytest-lsp): a cold start on the module corpus (1,200 files, indexed in worker processes), a document
opened, completed in and linted; then the summed RSS of the server and every process under it.

The bound has an honest margin over what is measured today (~92 MB server + ~20 MB lint child = ~112 MB,
load 6-9) and is below what the server took before the index's references shared their keys, texts and
positions and multiprocessing's resource tracker was gone (~150 MB: server ~105 MB, tracker ~15 MB,
lint worker ~27 MB).  bench/bench_index.py --server carries the issue's figure (its 80-module workspace).
"""

from __future__ import annotations

import asyncio
import os
import time

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from bench.proctree import cmdline, status, tree
from tests.lsp.test_hostile_clients import REPO, SERVER

pytestmark = pytest.mark.asyncio

CORPUS = "/usr/share/puppet/modules"
LIMIT_MB = 130  # summed RSS of the server's processes after indexing the corpus, a completion and a lint


def server_pid() -> int:
    """The language server among this process's children."""
    found = [p for p in tree(os.getpid())[1:] if "puppet_xpp.server.cli.main" in cmdline(p)]
    assert len(found) == 1, [cmdline(p) for p in tree(os.getpid())[1:]]
    return found[0]


@pytest.mark.skipif(not os.path.isdir(CORPUS), reason="no module corpus")
async def test_the_whole_server_after_indexing_the_corpus(tmp_path):
    config = ClientServerConfig(
        server_command=SERVER,
        server_env={"PYTHONPATH": REPO, "PUPPET_XPP_INDEX_CACHE": str(tmp_path / "cache")},
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    try:
        uri = "file://" + CORPUS
        await client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=uri,
                workspace_folders=[types.WorkspaceFolder(uri=uri, name="corpus")],
                initialization_options={"xppOnSave": False},
            )
        )
        deadline = time.monotonic() + 300
        while not any(m.message.startswith("puppet-xpp: indexed ") for m in client.log_messages):
            assert time.monotonic() < deadline, [m.message for m in client.log_messages]
            await asyncio.sleep(0.05)
        doc = "file://" + str(tmp_path / "probe.pp")
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=doc,
                    language_id="puppet",
                    version=1,
                    text='class probe {\n  $x = "a"\n  include stdlib\n}\n',
                )
            )
        )
        items = await client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=doc),
                position=types.Position(line=2, character=16),
            )
        )
        assert items is not None
        deadline = time.monotonic() + 60
        while not any(d.source == "puppet-lint" for d in client.diagnostics.get(doc, [])):  # (linted)
            assert time.monotonic() < deadline, client.diagnostics.get(doc)
            await asyncio.sleep(0.05)
        pids = tree(server_pid())
        rss = {p: int(status(p)["VmRSS"].split()[0]) / 1024 for p in pids}
        described = ", ".join(f"{cmdline(p)[-60:]!r} {mb:.0f} MB" for p, mb in rss.items())
        assert len(pids) == 2, f"the server and its lint child only: {described}"
        assert sum(rss.values()) <= LIMIT_MB, f"{sum(rss.values()):.0f} MB RSS in all: {described}"
    finally:
        await client.shutdown_session()
