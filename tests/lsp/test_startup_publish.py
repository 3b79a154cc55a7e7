"""The first diagnostics at a cold start (issue 31 item 1; server/lsp/startup.py): the start-up front
publishes a document's first diagnostics while the server is still loading, and the client sees the same
publishes as without the front -- the first one earlier.

Through a real client (pytest-lsp) over stdio.  "While loading" is a fact of each test, not a matter of
timing: the server's import of ``lsprotocol.types`` waits for a gate file (tests/lsp/test_startup.py's
prelude), so a publish that arrives with the gate closed came from the front.  The reference is the
server without the front (``server.serve()``, as pygls runs it), on the same workspace and text.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types

from tests.lsp.publishes import published
from tests.lsp.test_startup import GATE_PRELUDE, REPO, SERVER

# the server as pygls runs it, without the front (bench/bench_lsp.py's anchor)
DIRECT = "import sys; from puppet_xpp.server.lsp.server import serve; sys.exit(serve())"

CAPS = pytest_lsp.client_capabilities("neovim@v0.7.0")

# a parse error, a validation error, a deprecation and lint's warnings, after non-ASCII text
BROKEN = '# žluťoučký kůň\nclass demo {\n  $a = {x => 1, x => 2}\n  $b = $::osfamily\n  $c = "plain"\n  notice(\n}\n'
# validation and lint only (the program parses)
VALID = 'class demo2 (String $p = "x") {\n  $a = {x => 1, x => 2}\n  notify { "a": message => $p }\n}\n'
# its second version (a didChange while loading)
VALID_2 = VALID.replace("$a = {x => 1, x => 2}", "$a = {x => 1, y => 2}")

Publish = tuple[str, int | None, list[types.Diagnostic]]


class Run:
    """One server started with a pytest-lsp client on ``root``, every publish recorded in order."""

    def __init__(self, tmp: Any, code: str, gated: bool, name: str) -> None:
        self.gate = str(tmp / f"gate-{name}")
        if not gated:
            open(self.gate, "w").close()
        self.env = dict(
            os.environ,
            PYTHONPATH=REPO,
            TEST_GATE=self.gate,
            PUPPET_XPP_STARTUP_CACHE=str(tmp / "startup-cache"),
            PUPPET_XPP_INDEX_CACHE="off",
        )
        self.cmd = [sys.executable, "-c", GATE_PRELUDE + "\n" + code]
        self.client = pytest_lsp.make_test_lsp_client()
        self.record = published(self.client)  # (every publish, in order: tests/lsp/publishes.py)

    async def start(self, root: str | None) -> types.InitializeResult:
        await self.client.start_io(*self.cmd, env=self.env)
        params = types.InitializeParams(
            capabilities=CAPS, root_uri="file://" + root if root else None, process_id=os.getpid()
        )
        return await asyncio.wait_for(self.client.initialize_session(params), 120)

    @property
    def publishes(self) -> list[Publish]:
        return [(p.uri, p.version, list(p.diagnostics)) for p in self.record]

    def open_gate(self) -> None:
        open(self.gate, "w").close()

    def gate_closed(self) -> bool:
        return not os.path.exists(self.gate)

    def open(self, uri: str, text: str) -> None:
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="puppet", version=1, text=text)
            )
        )

    def change(self, uri: str, version: int, text: str) -> None:
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    async def until(self, pred: Callable[[list[Publish]], bool], timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not pred(self.publishes):
            if time.monotonic() > deadline:
                raise AssertionError(f"not seen in {timeout} s; publishes: {self.publishes}")
            await asyncio.sleep(0.01)

    async def settled(self, pred: Callable[[list[Publish]], bool], quiet: float = 1.5) -> list[Publish]:
        """The publishes once ``pred`` holds and nothing more came for ``quiet`` seconds."""
        await self.until(pred)
        seen = -1
        while seen != len(self.publishes):
            seen = len(self.publishes)
            await asyncio.sleep(quiet)
        return list(self.publishes)

    async def stop(self) -> None:
        self.open_gate()
        try:
            await asyncio.wait_for(self.client.shutdown_session(), 120)
        finally:
            await self.client.stop()


def linted(uri: str, version: int) -> Callable[[list[Publish]], bool]:
    """Lint's publish of ``uri`` at ``version`` is in (the last source to come in a fresh workspace)."""

    def seen(pubs: list[Publish]) -> bool:
        return any(
            u == uri and v == version and any(d.source == "puppet-lint" for d in ds) for u, v, ds in pubs
        )

    return seen


async def learn(tmp: Any, root: str) -> None:
    """One start that teaches the start-up cache pygls' answer to these capabilities (the front answers
    ``initialize`` only for capabilities it has seen answered)."""
    run = Run(tmp, SERVER[2], gated=False, name="learn")
    await run.start(root)
    await run.stop()


async def reference(
    tmp: Any, root: str, steps: Callable[[Run], Any], done: Callable[..., bool]
) -> list[Publish]:
    """The publishes of the server without the front for the same client steps."""
    run = Run(tmp, DIRECT, gated=False, name="direct")
    try:
        await run.start(root)
        await steps(run)
        return await run.settled(done)
    finally:
        await run.stop()


@pytest.fixture
def workspace(tmp_path: Any) -> tuple[Any, str]:
    root = tmp_path / "ws"
    (root / "modules" / "demo" / "manifests").mkdir(parents=True)
    return tmp_path, str(root)


@pytest.mark.parametrize("text", [BROKEN, VALID], ids=["syntax-error", "valid"])
def test_first_publish_is_the_fronts_while_loading_and_the_same_as_the_servers(
    workspace: tuple[Any, str], text: str
) -> None:
    tmp, root = workspace
    uri = "file://" + os.path.join(root, "modules", "demo", "manifests", "init.pp")

    async def steps(run: Run) -> None:
        run.open(uri, text)

    async def main() -> None:
        expected = await reference(tmp, root, steps, linted(uri, 1))
        await learn(tmp, root)
        run = Run(tmp, SERVER[2], gated=True, name="front")
        try:
            result = await run.start(root)
            assert result.capabilities.position_encoding is not None  # (answered by the front)
            await steps(run)
            await run.until(lambda pubs: len(pubs) >= 1, timeout=30)
            assert run.gate_closed()  # the server cannot have loaded: the front published it
            assert run.publishes[0] == expected[0]  # what the server publishes first, for that version
            assert any(d.code == "DUPLICATE_KEY" for d in run.publishes[0][2])
            run.open_gate()
            # then the server: lint's (and any deep) publishes follow as without the front, and the server
            # does not publish the front's first diagnostics again
            assert await run.settled(linted(uri, 1)) == expected
        finally:
            await run.stop()

    asyncio.run(main())


def test_a_change_while_loading_ends_as_without_the_front(workspace: tuple[Any, str]) -> None:
    """A didChange after the didOpen, both while loading: the server publishes the new version as it
    would without the front, and no publish goes back to an older version."""
    tmp, root = workspace
    uri = "file://" + os.path.join(root, "modules", "demo", "manifests", "init.pp")

    async def steps(run: Run) -> None:
        run.open(uri, VALID)
        if run.gate_closed():  # (the front's run: its first publish is out before the change)
            await run.until(lambda pubs: len(pubs) >= 1, timeout=30)
        run.change(uri, 2, VALID_2)

    async def main() -> None:
        expected = await reference(tmp, root, steps, linted(uri, 2))
        await learn(tmp, root)
        run = Run(tmp, SERVER[2], gated=True, name="front")
        try:
            await run.start(root)
            await steps(run)
            assert run.gate_closed() and run.publishes[0][1] == 1
            run.open_gate()
            got = await run.settled(linted(uri, 2))
        finally:
            await run.stop()
        versions = [v or 0 for _u, v, _d in got]
        assert versions == sorted(versions)
        assert got[-1] == expected[-1]
        # the first version's publish is the one the server makes of it (when it made one)
        first = next((p for p in expected if p[1] == 1), None)
        assert first is None or got[0] == first
        assert not any(d.code == "DUPLICATE_KEY" for d in got[-1][2])

    asyncio.run(main())


# a duplicate resource: one of the deep checks' findings (server/lsp/deep.py), with a lint warning
DUPLICATED = "class demo3 {\n  notify { 'a': }\n  notify { 'a': }\n  $c = \"plain\"\n}\n"


def test_without_a_workspace_the_deep_findings_follow_the_fronts_publish(tmp_path: Any) -> None:
    """No workspace folder: the server holds a document's first publish until its deep findings are in
    (nothing to index first).  The front cannot have them (the deep checks are the server's): its
    publish holds the parse and validation diagnostics, the server's follows with the deep findings
    added, and the client ends with what it sees without the front; nothing shown is taken back."""
    uri = "file://" + str(tmp_path / "demo3.pp")

    async def steps(run: Run) -> None:
        run.open(uri, DUPLICATED)

    def done(pubs: list[Publish]) -> bool:
        return linted(uri, 1)(pubs) and any(d.source == "puppet-xpp-deep" for _u, _v, ds in pubs for d in ds)

    async def main() -> None:
        direct = Run(tmp_path, DIRECT, gated=False, name="direct")
        try:
            await direct.start(None)
            await steps(direct)
            expected = await direct.settled(done)
        finally:
            await direct.stop()
        teach = Run(tmp_path, SERVER[2], gated=False, name="learn")
        await teach.start(None)
        await teach.stop()
        run = Run(tmp_path, SERVER[2], gated=True, name="front")
        try:
            await run.start(None)
            await steps(run)
            await run.until(lambda pubs: len(pubs) >= 1, timeout=30)
            assert run.gate_closed()
            first = run.publishes[0][2]
            assert first == [d for d in expected[0][2] if d.source != "puppet-xpp-deep"]
            run.open_gate()
            got = await run.settled(done)
        finally:
            await run.stop()
        assert got[-1] == expected[-1]
        assert got[1:] == expected  # the server's publishes, as without the front
        for (_u, _v, before), (_u2, _v2, after) in zip(got, got[1:]):
            assert all(d in after for d in before)  # never taken back

    asyncio.run(main())
