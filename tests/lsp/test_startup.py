"""The language server's start-up (issue 31 item 1; server/lsp/startup.py): the front that answers while
the server loads, through the real stdio transport.

The server's load is held back by a gate (a file the test creates) on ``lsprotocol.types``, so "while
the server is loading" is a fact of each test, not a matter of timing.  What the front answers is
checked against what pygls answers for the same client (its ``initialize`` result, its first publish
of the same document): the real server is the reference.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from puppet_xpp.server.lsp import startup
from tests.lsp.test_hostile_clients import REPO, SERVER, Raw

# the server's modules cannot load until the gate file exists (lsprotocol.types waits for it)
GATE_PRELUDE = """
import importlib.abc, importlib.machinery, os, sys, time
class _Gate(importlib.abc.MetaPathFinder):
    # the module's code runs once the gate file exists (its own lock held meanwhile, not the import
    # system's: the rest of the process imports on)
    def find_spec(self, name, path, target=None):
        if name != "lsprotocol.types":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module
        def exec_module(module):
            while not os.path.exists(os.environ["TEST_GATE"]):
                time.sleep(0.01)
            run(module)
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, _Gate())
"""

CAPS: dict[str, Any] = {
    "general": {"positionEncodings": ["utf-8", "utf-16"]},
    "textDocument": {"publishDiagnostics": {"versionSupport": True}, "rename": {"prepareSupport": True}},
    "window": {"workDoneProgress": True},
}

# a manifest with an error, a warning and a deprecation, after non-ASCII text (positions in UTF-8), and
# lint's warnings (a double-quoted string without variables)
DOC = '# žluťoučký kůň\nclass demo {\n  $a = {x => 1, x => 2}\n  $b = $::osfamily\n  $c = "plain"\n  notice(\n}\n'


class Client(Raw):
    """Raw's client with the gate and the start-up cache of the test (environment of the server)."""

    count = 0

    def __init__(self, tmp: Any, gated: bool = True, cache: str | None = None) -> None:
        Client.count += 1
        self.gate = str(tmp / f"gate-{Client.count}")
        env = dict(
            os.environ,
            PYTHONPATH=REPO,
            TEST_GATE=self.gate,
            PUPPET_XPP_STARTUP_CACHE=cache or str(tmp / "cache"),
            PUPPET_XPP_INDEX_CACHE="off",
        )
        if not gated:
            open(self.gate, "w").close()
        cmd = [*SERVER[:2], GATE_PRELUDE + "\n" + SERVER[2]]
        self.p = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        self.buf = b""
        self.next_id = 1
        self.seen: list[Any] = []

    def open_gate(self) -> None:
        open(self.gate, "w").close()

    def drain(self) -> list[Any]:
        """Every message seen and not taken, and what is left on the server's output."""
        out = list(self.seen)
        while (m := self._read_one(time.monotonic() + 2)) is not None:
            out.append(m)
        return out

    def close(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()
        for f in (self.p.stdin, self.p.stdout):
            if f is not None:
                f.close()

    def init(self, caps: dict[str, Any] = CAPS, timeout: float = 60) -> Any:
        i = self.request(
            "initialize",
            {"processId": os.getpid(), "rootUri": None, "capabilities": caps, "initializationOptions": {}},
        )
        return self.response(i, timeout)


def learn(tmp: Any, caps: dict[str, Any] = CAPS) -> dict[str, Any]:
    """One ungated start: pygls answers ``initialize`` and the cache keeps its answer (returned)."""
    c = Client(tmp, gated=False)
    try:
        r = c.init(caps)
        assert r is not None and "result" in r
        c.notify("initialized", {})
        s = c.request("shutdown")
        assert c.response(s) is not None
        c.notify("exit", None)
        assert c.p.wait(20) == 0
        return r["result"]  # type: ignore[no-any-return]
    finally:
        c.close()


@pytest.fixture
def tmp(tmp_path: Any) -> Any:
    return tmp_path


@contextlib.contextmanager
def gated(tmp: Any, learned: bool = True, initialized: bool = False) -> Iterator[Client]:
    """A server started with the gate closed (after a start that taught the cache this client's
    ``initialize`` answer, when ``learned``; then answered early when ``initialized``)."""
    if learned:
        learn(tmp)
    c = Client(tmp)
    try:
        if initialized:
            assert c.init(timeout=20) is not None
        yield c
    finally:
        c.close()


def test_initialize_answered_while_loading_is_pygls_answer(tmp: Any) -> None:
    pygls_result = learn(tmp)
    assert pygls_result["capabilities"]["positionEncoding"] == "utf-8"
    with gated(tmp, learned=False) as c:
        r = c.init(timeout=20)  # the gate is closed: only the front can answer
        assert r is not None and r.get("result") == pygls_result
        assert c.p.poll() is None
        c.notify("initialized", {})
        c.open_gate()
        h = c.request("workspace/symbol", {"query": "x"})
        assert c.response(h, timeout=60) is not None  # the server runs
        s = c.request("shutdown")
        assert c.response(s) == {"jsonrpc": "2.0", "id": s, "result": None}
        c.notify("exit", None)
        # the server's own answer to initialize was dropped: one answer per request
        assert [m for m in c.drain() if m.get("id") == r["id"]] == []
        assert c.p.wait(20) == 0


def test_unknown_client_waits_for_the_server(tmp: Any) -> None:
    """Capabilities never answered by this build: no early answer; pygls answers once loaded."""
    with gated(tmp, learned=False) as c:
        i = c.request("initialize", {"processId": None, "rootUri": None, "capabilities": {"x": 1}})
        assert c.response(i, timeout=1.5) is None
        c.open_gate()
        r = c.response(i, timeout=60)
        assert r is not None and "capabilities" in r["result"]
    # and the next start of the same client is answered early, with that answer
    with gated(tmp, learned=False) as d:
        j = d.request("initialize", {"processId": None, "rootUri": None, "capabilities": {"x": 1}})
        assert d.response(j, timeout=20) == r | {"id": j}


def test_a_request_sent_while_loading_is_the_servers(tmp: Any) -> None:
    """What the front does not answer waits for the server, which handles it once loaded, in order; the
    document's first diagnostics come from the front meanwhile (tests/lsp/test_startup_publish.py)."""
    with gated(tmp, initialized=True) as c:
        c.notify("initialized", {})
        uri = "file:///tmp/startup-demo.pp"
        c.open(uri, DOC)
        h = c.request(
            "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 2, "character": 3}}
        )
        pub = c.publish(uri, 1, timeout=30)  # the front's, the gate closed
        assert pub is not None
        codes = {d["code"] for d in pub["params"]["diagnostics"]}
        assert "DUPLICATE_KEY" in codes and "SYNTAX_ERROR" in codes
        assert c.response(h, timeout=1.5) is None  # waits for the server ...
        c.open_gate()
        assert c.response(h, timeout=60) is not None  # ... which answers it once loaded


def test_a_document_changed_before_the_front_reads_on_is_the_servers(tmp: Any) -> None:
    """didOpen and didChange read together: the front publishes nothing of the first version (the
    server's rule: never a publish of a version already replaced); the server publishes the second."""
    with gated(tmp, initialized=True) as c:
        uri = "file:///tmp/startup-demo.pp"
        frames = b""
        for msg in (
            {"method": "initialized", "params": {}},
            {
                "method": "textDocument/didOpen",
                "params": {"textDocument": {"uri": uri, "languageId": "puppet", "version": 1, "text": DOC}},
            },
            {
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": uri, "version": 2},
                    "contentChanges": [{"text": "$x = 1\n"}],
                },
            },
        ):
            body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
            frames += b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        assert len(frames) < 4096  # (one write to the pipe, read at once)
        c.raw(frames)
        assert c.publish(uri, 1, timeout=1.5) is None  # (the gate closed: nothing from the front)
        c.open_gate()
        order: list[Any] = []  # the server's publishes, in order (it may publish the first version too)

        def publish_of_2(m: Any) -> bool:
            if m.get("method") == "textDocument/publishDiagnostics":
                order.append(m["params"]["version"])
                return bool(m["params"]["version"] == 2)
            return False

        pub = c.wait(publish_of_2, timeout=60)
        assert pub is not None and pub["params"]["diagnostics"] == []
        assert order == sorted(order)


@pytest.mark.parametrize("opened", [False, True], ids=["nothing-open", "after-a-first-publish"])
def test_shutdown_and_exit_while_loading(tmp: Any, opened: bool) -> None:
    with gated(tmp, initialized=True) as c:
        if opened:
            c.notify("initialized", {})
            c.open("file:///tmp/startup-demo.pp", DOC)
            assert c.publish("file:///tmp/startup-demo.pp", 1, timeout=30) is not None
        s = c.request("shutdown")
        assert c.response(s, timeout=20) == {"jsonrpc": "2.0", "id": s, "result": None}
        c.notify("exit", None)
        assert c.p.wait(10) == 0  # with the gate still closed
        assert not os.path.exists(c.gate)


def test_exit_without_shutdown_while_loading_is_status_1(tmp: Any) -> None:
    with gated(tmp, initialized=True) as c:
        c.notify("exit", None)
        assert c.p.wait(10) == 1


def test_exit_with_a_request_pending_is_left_to_the_server(tmp: Any) -> None:
    """A request the front did not answer (no early initialize answer): the server answers it, then
    exits as the lifecycle says (exit without shutdown: 1)."""
    with gated(tmp, learned=False) as c:
        i = c.request("initialize", {"processId": None, "rootUri": None, "capabilities": {"y": 2}})
        c.notify("exit", None)
        time.sleep(0.5)
        assert c.p.poll() is None
        c.open_gate()
        assert c.p.wait(60) == 1
        assert [m for m in c.drain() if m.get("id") == i and "result" in m]


def test_client_gone_while_loading(tmp: Any) -> None:
    with gated(tmp, initialized=True) as c:
        c.p.stdin.close()
        c.p.stdin = None
        c.open_gate()
        assert c.p.wait(60) == 0


@pytest.mark.parametrize(
    "content",
    [b"not json at all", b'{"format": "puppet-xpp-startup", "schema": 1, "build": "x", "answers": {}}', b""],
)
def test_damaged_or_foreign_cache_is_ignored_and_rewritten(tmp: Any, content: bytes) -> None:
    learn(tmp)
    path = tmp / "cache" / startup.CACHE_NAME
    good = json.loads(path.read_bytes())
    path.write_bytes(content)
    with gated(tmp, learned=False) as c:
        i = c.request("initialize", {"processId": None, "rootUri": None, "capabilities": CAPS})
        assert c.response(i, timeout=1.5) is None  # nothing trusted: the server answers
        c.open_gate()
        r = c.response(i, timeout=60)
        assert r is not None and "capabilities" in r["result"]
        c.notify("initialized", {})
        s = c.request("shutdown")
        assert c.response(s, timeout=20) is not None
    # rewritten whole, by this build (the tree may have changed since learn: then the newer build)
    assert json.loads(path.read_bytes())["build"] in (good["build"], startup.fingerprint())


def test_cache_directory_through_a_link_is_not_used(tmp: Any) -> None:
    target = tmp / "elsewhere"
    target.mkdir()
    (tmp / "link").symlink_to(target)
    c = Client(tmp, gated=False, cache=str(tmp / "link"))
    try:
        assert c.init() is not None
        s = c.request("shutdown")
        assert c.response(s) is not None
    finally:
        c.close()
    assert os.listdir(target) == []


def test_bad_framing_before_initialize_goes_to_the_servers_reader(tmp: Any) -> None:
    """Broken framing: the front stops reading messages; the server's reader (server/lsp/guard.py)
    recovers at the next header, as without the front."""
    with gated(tmp) as c:
        c.raw(b"Content-Length: abc\r\n\r\n{}")
        i = c.request("initialize", {"processId": None, "rootUri": None, "capabilities": CAPS})
        assert c.response(i, timeout=1.5) is None
        c.open_gate()
        r = c.response(i, timeout=60)
        assert r is not None and "capabilities" in r["result"]


def test_replayed_reader_gives_the_bytes_then_the_stream() -> None:
    import io

    r = startup.Replayed(b"Content-Length: 2\r\n\r\n{}Cont", io.BytesIO(b"ent-Length: 3\r\n\r\n[1]"))
    assert r.readline(100) == b"Content-Length: 2\r\n"
    assert r.readline(100) == b"\r\n"
    assert r.read(2) == b"{}"
    assert r.readline(100) == b"Content-Length: 3\r\n"
    assert r.readline(100) == b"\r\n"
    assert r.read(3) == b"[1]"
    assert r.read(3) == b""
    s = startup.Replayed(b"abcdef", io.BytesIO(b"gh\n"))
    assert s.readline(4) == b"abcd"
    assert s.read(3) == b"efg"


def test_initialize_pygls_refuses_is_never_answered_early(tmp: Any) -> None:
    """Params pygls cannot build (processId a string): the front leaves them to the server, whose answer
    is the error a conforming server gives -- never an early success."""
    with gated(tmp) as c:
        i = c.request("initialize", {"processId": "abc", "rootUri": None, "capabilities": CAPS})
        assert c.response(i, timeout=1.5) is None
        c.open_gate()
        r = c.response(i, timeout=60)
        assert r is not None and r.get("error", {}).get("code") == -32602 and "result" not in r


def test_a_big_document_is_left_to_the_server(tmp: Any) -> None:
    """A text the server analyses on a thread of its own (server/analysis/document.py APART_BYTES): the
    front does not analyse it (it would not read a ``shutdown`` meanwhile); the server publishes it."""
    from puppet_xpp.server.analysis.document import APART_BYTES

    big = "".join(f"notice('line {k}')\n" for k in range(APART_BYTES // 16))
    assert len(big) >= APART_BYTES
    with gated(tmp, initialized=True) as c:
        c.notify("initialized", {})
        uri = "file:///tmp/startup-big.pp"
        c.open(uri, big)
        c.open("file:///tmp/startup-demo.pp", DOC)
        assert c.publish("file:///tmp/startup-demo.pp", 1, timeout=30) is not None  # (read, and the next)
        assert c.publish(uri, 1, timeout=0.5) is None
        c.open_gate()
        assert c.publish(uri, 1, timeout=60) is not None
