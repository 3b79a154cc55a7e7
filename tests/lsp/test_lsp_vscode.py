"""The server with the VS Code capability profile: semantic tokens and folding ranges (which Neovim 0.7
does not ask for), settings pulled through workspace/configuration, TCP serving."""

from __future__ import annotations

import os
import socket
import subprocess
import time

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.test_lsp_e2e import REPO, SERVER, open_document, wait_diagnostics


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": REPO}), scope="module"
)
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = str(tmp_path_factory.mktemp("vsc"))
    lsp_client.set_configuration({"strict": "error"}, section="puppet")

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)  # VS Code answers the server's file watchers
    def register_capability(params):
        return None

    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual-studio-code"), root_uri="file://" + root
        )
    )
    yield
    await lsp_client.shutdown_session()


TEXT = """# a comment
# more
class demo(
  String $a = "x${b}y",
) {
  $h = { 'k' => 1, 'k' => 2 }
  file { '/tmp/x':
    ensure => file,
  }
}
"""


@pytest.mark.asyncio(loop_scope="module")
async def test_semantic_tokens_and_folding(client: LanguageClient, tmp_path):
    uri = await open_document(client, str(tmp_path / "s.pp"), TEXT)
    # strict=error pulled from workspace/configuration: DUPLICATE_KEY is an error
    for _ in range(5):
        diags = await wait_diagnostics(client, uri, 1)
        if [(d.code, d.severity) for d in diags] == [("DUPLICATE_KEY", types.DiagnosticSeverity.Error)]:
            break
    assert [(d.code, d.severity) for d in diags] == [("DUPLICATE_KEY", types.DiagnosticSeverity.Error)]
    res = await client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    from puppet_xpp.server.analysis.features import TOKEN_TYPES

    data = res.data
    assert len(data) % 5 == 0
    toks = []
    line = col = 0
    lines = TEXT.splitlines()
    for i in range(0, len(data), 5):
        dl, dc, ln, tt, _m = data[i : i + 5]
        line += dl
        col = dc if dl else col + dc
        toks.append((lines[line][col : col + ln], TOKEN_TYPES[tt]))
    assert ("# a comment", "comment") in toks
    assert ("class", "keyword") in toks and ("demo", "class") in toks
    assert ("$a", "variable") in toks and ("String", "type") in toks
    assert ("ensure", "property") in toks and ("'/tmp/x'", "string") in toks
    folds = await client.text_document_folding_range_async(
        types.FoldingRangeParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    spans = {(f.start_line, f.end_line, f.kind) for f in folds}
    assert (0, 1, types.FoldingRangeKind.Comment) in spans
    assert (4, 8, None) in spans  # the class body
    assert (6, 7, None) in spans  # the resource body


def test_tcp_serving():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        SERVER + ["--tcp", f"127.0.0.1:{port}"],
        env=dict(os.environ, PYTHONPATH=REPO),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                conn = socket.create_connection(("127.0.0.1", port), timeout=5)
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("server did not listen")
        body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}'
        conn.sendall(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        buf = b""
        deadline = time.time() + 20
        while b'"result"' not in buf and time.time() < deadline:
            buf += conn.recv(65536)
        assert b'"textDocumentSync"' in buf and b'"semanticTokensProvider"' in buf
        conn.close()
    finally:
        proc.kill()
        proc.wait()


def test_bad_tcp_argument():
    r = subprocess.run(SERVER + ["--tcp", "nope"], env=dict(os.environ, PYTHONPATH=REPO), capture_output=True)
    assert r.returncode == 2
