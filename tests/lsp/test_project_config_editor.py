"""A project configuration file the editor cannot use (xpp.project: ``.puppet-xpp.toml`` or
``[tool.puppet-xpp]``) is shown to the user through a real client (pytest-lsp): one warning naming the
file and the line, once however many files are opened, while the documents are still analysed with the
defaults.  Before, the server used its defaults without a word."""

from __future__ import annotations

import asyncio
import os

import pytest
from lsprotocol import types

from tests.lsp.publishes import mark, open_file, published, workspace_client

pytestmark = pytest.mark.asyncio(loop_scope="module")

client = workspace_client("projcfg", "projcfg_root")

BROKEN = 'level = "7.23"\nexclude = ["spec/**"]\nstrict = error\n'  # a bare word: invalid TOML on line 3


def _open(client, rel: str, text: str) -> str:
    return open_file(client, client.projcfg_root, rel, text)


async def test_a_broken_project_configuration_is_shown_once_with_its_line(client):
    config = os.path.join(client.projcfg_root, ".puppet-xpp.toml")
    with open(config, "w", encoding="utf-8") as f:
        f.write(BROKEN)
    start = mark(client)
    uris = [
        _open(client, "modules/demo/manifests/init.pp", "class demo {\n  $x = }\n"),
        _open(client, "modules/demo/manifests/other.pp", "class demo::other {}\n"),
    ]
    for _ in range(400):  # both analysed (with the defaults: the syntax error is still reported) and the
        # warning shown (the start-up front may publish a document's first diagnostics before the server,
        # which shows the warning, has read the didOpen)
        done = {p.uri for p in published(client)[start:]}
        told = any(config in m.message for m in client.messages)
        if set(uris) <= done and told:
            break
        await asyncio.sleep(0.05)
    first = [p for p in published(client)[start:] if p.uri == uris[0]][-1]
    assert any(d.code == "SYNTAX_ERROR" for d in first.diagnostics)
    warnings = [m.message for m in client.messages if m.type == types.MessageType.Warning]
    shown = [m for m in warnings if config in m]
    assert len(shown) == 1, warnings
    assert f"{config}:3:" in shown[0] and "not used" in shown[0], shown[0]
