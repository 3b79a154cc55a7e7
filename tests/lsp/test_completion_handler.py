"""The completion handler as pygls runs it, in process (the real server's protocol and handlers, messages
given as the transport gives them): an answer from the text goes out within the call that handled the
request, before anything else the event loop has ready (issue 31 item 3), and an answer from the
analysis leaves nothing behind in pygls' table of pending requests."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from typing import Any

from puppet_xpp.server.lsp import guard
from puppet_xpp.server.lsp.server import create_server


class Capture:
    """The transport's writer: the messages the server sends, decoded."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        body = data.split(b"\r\n\r\n", 1)[1]
        self.messages.append(json.loads(body))

    def close(self) -> None:
        pass


def _send(protocol: Any, message: dict[str, Any]) -> None:
    guard._dispatch(
        json.dumps({"jsonrpc": "2.0", **message}).encode(), protocol, logging.getLogger("t"), None
    )


async def _until(capture: Capture, found: Any, timeout: float = 60) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        for m in capture.messages:
            if found(m):
                return m
        await asyncio.sleep(0.01)
    raise TimeoutError


TEXT = "class app (String $base) {\n  file { '/x':\n    ens\n  }\n  notify { 'n': message => $b }\n}\n"


def test_answers_from_the_text_at_once_and_from_the_analysis_without_leftovers(tmp_path: Any) -> None:
    async def run() -> None:
        ls = create_server()
        capture = Capture()
        ls.protocol.set_writer(capture)
        protocol = ls.protocol
        root = str(tmp_path)
        _send(
            protocol,
            {"id": 1, "method": "initialize", "params": {"capabilities": {}, "rootUri": "file://" + root}},
        )
        _send(protocol, {"method": "initialized", "params": {}})
        path = os.path.join(root, "init.pp")
        uri = "file://" + path
        doc = {"uri": uri, "languageId": "puppet", "version": 1, "text": TEXT}
        _send(protocol, {"method": "textDocument/didOpen", "params": {"textDocument": doc}})
        await _until(capture, lambda m: m.get("method") == "textDocument/publishDiagnostics")
        where = {"textDocument": {"uri": uri}}
        # the first completion answers from the analysis (the document's own definitions come from it)
        _send(
            protocol,
            {
                "id": 2,
                "method": "textDocument/completion",
                "params": {**where, "position": {"line": 2, "character": 7}},
            },
        )
        await _until(capture, lambda m: m.get("id") == 2)
        # typed: the next one answers from the text, within the handling of the request
        _send(
            protocol,
            {
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": uri, "version": 2},
                    "contentChanges": [
                        {
                            "range": {
                                "start": {"line": 2, "character": 7},
                                "end": {"line": 2, "character": 7},
                            },
                            "text": "u",
                        }
                    ],
                },
            },
        )
        _send(
            protocol,
            {
                "id": 3,
                "method": "textDocument/completion",
                "params": {**where, "position": {"line": 2, "character": 8}},
            },
        )
        answer = next((m for m in capture.messages if m.get("id") == 3), None)
        assert answer is not None, "not answered within the handling of the request"
        assert "ensure" in {it["label"] for it in answer["result"]["items"]}
        # variables read the tree: answered from the analysis, several times
        for k in range(4, 10):
            _send(
                protocol,
                {
                    "id": k,
                    "method": "textDocument/completion",
                    "params": {**where, "position": {"line": 4, "character": 29}},
                },
            )
            got = await _until(capture, lambda m, k=k: m.get("id") == k)
            assert "$base" in {it["label"] for it in got["result"]["items"]}
        await asyncio.sleep(0.05)
        assert not protocol._request_futures, protocol._request_futures
        ls.worker.shutdown(wait=False)

    asyncio.run(run())


def test_a_documents_first_completion_answers_from_the_text(tmp_path: Any) -> None:
    """Once the deep checks have read the document (its first publish waits for them), its own
    definitions are known: the first completion is answered from the text too, its own class among
    the names (before, the first completion waited for an analysis of the latest text)."""

    async def run() -> None:
        ls = create_server()
        capture = Capture()
        ls.protocol.set_writer(capture)
        protocol = ls.protocol
        env = tmp_path / "production"
        (env / "modules/app/manifests").mkdir(parents=True)
        (env / "environment.conf").write_text("modulepath = modules\n")
        (env / "modules/app/manifests/init.pp").write_text("class app {\n}\n")
        init = {"capabilities": {}, "rootUri": "file://" + str(env)}
        _send(protocol, {"id": 1, "method": "initialize", "params": init})
        _send(protocol, {"method": "initialized", "params": {}})
        path = env / "modules/app/manifests/t.pp"
        text = "class app::t {\n  include app::missing\n  include app\n}\n"
        path.write_text(text)
        uri = "file://" + str(path)
        await _until(
            capture, lambda m: m.get("method") == "window/logMessage" and "indexed" in m["params"]["message"]
        )
        doc = {"uri": uri, "languageId": "puppet", "version": 1, "text": text}
        _send(protocol, {"method": "textDocument/didOpen", "params": {"textDocument": doc}})

        def deep_published(m: dict[str, Any]) -> bool:
            diagnostics = m.get("params", {}).get("diagnostics", [])
            return m.get("method") == "textDocument/publishDiagnostics" and any(
                d.get("code") == "DEEP_UNKNOWN_CLASS" for d in diagnostics
            )

        await _until(capture, deep_published)
        where = {"textDocument": {"uri": uri}, "position": {"line": 2, "character": 13}}
        _send(protocol, {"id": 2, "method": "textDocument/completion", "params": where})
        answer = next((m for m in capture.messages if m.get("id") == 2), None)
        assert answer is not None, "not answered within the handling of the request"
        assert "app::t" in {it["label"] for it in answer["result"]["items"]}
        ls.worker.shutdown(wait=False)

    asyncio.run(run())
