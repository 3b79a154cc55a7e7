"""The persistent workspace index cache (issue 31, item 2; server/analysis/index_cache.py) through a
real client (pytest-lsp): each test starts the language server twice on one workspace and one cache
directory (``PUPPET_XPP_INDEX_CACHE``), as a user restarting the editor does.

* the second start answers workspace symbols, the hover of a module's Ruby function and the references
  of a class from the cache, and its log line says every file came from it;
* a manifest edited on disk between the starts is indexed again: its new class is found, its old one
  gone (by size and modification time, and by digest when those are kept);
* a damaged, truncated or foreign-version cache is ignored (a log line says why) and the answers are
  those of a cold start; the cache is rewritten whole, 0600 in a 0700 directory, never through a link.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import time

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from bench.proctree import children

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = [sys.executable, "-c", "import sys; from puppet_xpp.server.cli.main import main; sys.exit(main())"]
pytestmark = pytest.mark.asyncio


def greet_function(module: str) -> str:
    """A Ruby function ``<module>::greet`` with its documentation (the index reads it with tree-sitter)."""
    return (
        "# Greets whoever is named, politely.\n"
        f"Puppet::Functions.create_function(:'{module}::greet') do\n"
        "  dispatch :greet do\n"
        "    param 'String', :who\n"
        "  end\n"
        "\n"
        "  def greet(who)\n"
        '    "hello #{who}"\n'
        "  end\n"
        "end\n"
    )


FILES = {
    "modules/mymod/manifests/init.pp": "class mymod {\n  include mymod::old\n}\n",
    "modules/mymod/manifests/old.pp": "class mymod::old {\n  notify { 'old': }\n}\n",
    "modules/mymod/lib/puppet/functions/mymod/greet.rb": greet_function("mymod"),
    "modules/other/manifests/init.pp": "class other {\n  $x = mymod::greet('you')\n  include mymod::old\n}\n",
}
FILE_COUNT = len(FILES)


def write_files(env: str, files: dict[str, str], age: float = 0.0) -> None:
    """Write ``files`` under ``env``, modified ``age`` seconds ago."""
    for rel, text in files.items():
        p = os.path.join(env, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)
        if age:
            then = time.time() - age
            os.utime(p, (then, then))


@pytest.fixture
def workspace(tmp_path):
    """The workspace, its files modified an hour ago (their entries are trusted by size and time), and
    the cache directory."""
    env = str(tmp_path / "production")
    write_files(env, FILES, age=3600)
    cache = str(tmp_path / "cache" / "index")
    return env, cache


class Started:
    """One server started on the workspace, its index complete; ``logs``: its log messages."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client

    @property
    def logs(self) -> list[str]:
        return [m.message for m in self.client.log_messages]

    def indexed_line(self) -> str:
        return next(m for m in self.logs if m.startswith("puppet-xpp: indexed "))

    def from_cache(self) -> int:
        m = re.search(r"\((\d+) from the index cache\)", self.indexed_line())
        assert m, self.indexed_line()
        return int(m.group(1))

    async def stop(self) -> None:
        await self.client.shutdown_session()


async def start(env: str, cache: str, configuration: dict | None = None) -> Started:
    """``configuration``: the settings the client gives when the server asks (it says it can)."""
    import asyncio

    config = ClientServerConfig(
        server_command=SERVER, server_env={"PYTHONPATH": REPO, "PUPPET_XPP_INDEX_CACHE": cache}
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    capabilities = types.ClientCapabilities()
    if configuration is not None:

        async def answer(params):
            return [configuration for _ in params.items]

        client.protocol.fm.features[types.WORKSPACE_CONFIGURATION] = answer
        capabilities = types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(configuration=True)
        )

    uri = "file://" + env
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=uri,
            workspace_folders=[types.WorkspaceFolder(uri=uri, name="production")],
        )
    )
    s = Started(client)
    deadline = time.monotonic() + 60
    while not any(m.startswith("puppet-xpp: indexed ") for m in s.logs):
        assert time.monotonic() < deadline, s.logs
        await asyncio.sleep(0.05)
    return s


async def wait_saved(cache: str) -> str:
    import asyncio

    deadline = time.monotonic() + 30
    while True:
        names = [n for n in os.listdir(cache) if n.endswith(".json")] if os.path.isdir(cache) else []
        if names:
            return os.path.join(cache, names[0])
        assert time.monotonic() < deadline, "no cache written"
        await asyncio.sleep(0.05)


async def symbols(s: Started, query: str) -> list[str]:
    res = await s.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    return sorted(x.name for x in res or [])


def open_other(s: Started, env: str) -> str:
    path = os.path.join(env, "modules/other/manifests/init.pp")
    s.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri="file://" + path,
                language_id="puppet",
                version=1,
                text=FILES["modules/other/manifests/init.pp"],
            )
        )
    )
    return path


async def hover_greet(s: Started, env: str) -> str:
    path = open_other(s, env)
    res = await s.client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri="file://" + path),
            position=types.Position(line=1, character=10),
        )
    )
    assert res is not None
    contents = res.contents
    return contents.value if isinstance(contents, types.MarkupContent) else str(contents)


async def references_of_old(s: Started, env: str) -> list[tuple[str, int]]:
    path = os.path.join(env, "modules/mymod/manifests/old.pp")
    res = await s.client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri="file://" + path),
            position=types.Position(line=0, character=9),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    return sorted((os.path.relpath(r.uri[len("file://") :], env), r.range.start.line) for r in res or [])


async def cold_then_second(env: str, cache: str) -> tuple[list[str], str, list[tuple[str, int]]]:
    """A first start (nothing cached) and its answers, the cache written."""
    first = await start(env, cache)
    try:
        assert first.from_cache() == 0
        answers = (
            await symbols(first, "mymod"),
            await hover_greet(first, env),
            await references_of_old(first, env),
        )
    finally:
        await first.stop()
    await wait_saved(cache)
    return answers


async def test_second_start_answers_from_the_cache(workspace):
    env, cache = workspace
    cold_symbols, cold_hover, cold_refs = await cold_then_second(env, cache)
    assert "mymod::greet" in cold_symbols and "Greets whoever" in cold_hover
    assert ("modules/other/manifests/init.pp", 2) in cold_refs
    st = os.stat(cache)
    assert stat.S_IMODE(st.st_mode) == 0o700
    (name,) = os.listdir(cache)
    assert stat.S_IMODE(os.stat(os.path.join(cache, name)).st_mode) == 0o600

    second = await start(env, cache)
    try:
        assert second.from_cache() == FILE_COUNT
        assert not any("index cache ignored" in m for m in second.logs)
        assert await symbols(second, "mymod") == cold_symbols
        assert await references_of_old(second, env) == cold_refs
        hover = await hover_greet(second, env)
        assert hover == cold_hover
    finally:
        await second.stop()


async def test_a_second_start_with_nothing_changed_does_not_write_the_cache_again(workspace):
    """Every entry found by its stat: the cache file is kept as it is (the same file, not a new one
    renamed over it), only marked in use (its modification time, which the pruning reads)."""
    import asyncio

    env, cache = workspace
    await cold_then_second(env, cache)
    path = await wait_saved(cache)
    then = time.time() - 3600
    os.utime(path, (then, then))
    before = os.stat(path)
    second = await start(env, cache)
    try:
        assert second.from_cache() == FILE_COUNT
        for _ in range(200):  # (the save runs after the index is complete)
            after = os.stat(path)
            if after.st_mtime_ns != before.st_mtime_ns or after.st_ino != before.st_ino:
                break
            await asyncio.sleep(0.05)
    finally:
        await second.stop()
    assert after.st_mtime > time.time() - 600, "not marked in use"
    assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size), "written again"


async def test_an_edited_file_is_indexed_again(workspace):
    env, cache = workspace
    await cold_then_second(env, cache)
    write_files(env, {"modules/mymod/manifests/old.pp": "class mymod::fresh {\n}\n"})
    second = await start(env, cache)
    try:
        assert second.from_cache() == FILE_COUNT - 1
        names = await symbols(second, "mymod")
        assert "mymod::fresh" in names and "mymod::old" not in names
    finally:
        await second.stop()


async def test_same_size_and_time_edit_found_by_digest(workspace):
    """A rewrite that keeps the size and the modification time (within the timestamp granularity, or
    put back by a tool) of a file indexed no later than 2 s after its modification time: its entry was
    recorded racy, so its digest is checked at the next start.  (The file's time is set a minute ahead
    -- a clock skew, as on a network file system -- so that the indexing however late under load is
    within the window.)"""
    env, cache = workspace
    path = os.path.join(env, "modules/mymod/manifests/old.pp")
    ahead = time.time() + 60
    os.utime(path, (ahead, ahead))
    await cold_then_second(env, cache)
    before = os.stat(path)
    text = FILES["modules/mymod/manifests/old.pp"].replace("mymod::old", "mymod::new")
    write_files(env, {"modules/mymod/manifests/old.pp": text})
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_size == before.st_size
    second = await start(env, cache)
    try:
        names = await symbols(second, "mymod")
        assert "mymod::new" in names and "mymod::old" not in names
    finally:
        await second.stop()


def damage_truncate(data: bytes) -> bytes:
    return data[: len(data) // 2]


def damage_flip(data: bytes) -> bytes:
    k = len(data) - 40
    return data[:k] + bytes([data[k] ^ 0x55]) + data[k + 1 :]


def damage_version(data: bytes) -> bytes:
    head, _, body = data.partition(b"\n")
    return re.sub(rb'"fingerprint": "[0-9a-f]+"', b'"fingerprint": "' + b"0" * 64 + b'"', head) + b"\n" + body


def damage_garbage(data: bytes) -> bytes:
    return b"\x00\xff not a cache \n at all"


@pytest.mark.parametrize(
    "damage, why",
    [
        (damage_truncate, "damaged"),
        (damage_flip, "damaged"),
        (damage_version, "another version"),
        (damage_garbage, ""),
    ],
)
async def test_a_damaged_or_foreign_cache_is_ignored(workspace, damage, why):
    env, cache = workspace
    cold_symbols, cold_hover, cold_refs = await cold_then_second(env, cache)
    path = await wait_saved(cache)
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(damage(data))
    second = await start(env, cache)
    try:
        assert second.from_cache() == 0
        ignored = [m for m in second.logs if "index cache ignored" in m]
        assert ignored and why in ignored[0], second.logs
        assert await symbols(second, "mymod") == cold_symbols
        assert await references_of_old(second, env) == cold_refs
        assert await hover_greet(second, env) == cold_hover
    finally:
        await second.stop()


async def test_the_cache_file_is_never_read_or_written_through_a_link(workspace, tmp_path):
    env, cache = workspace
    await cold_then_second(env, cache)
    path = await wait_saved(cache)
    elsewhere = tmp_path / "elsewhere.json"
    os.replace(path, elsewhere)  # a valid cache, reached through a link
    os.symlink(elsewhere, path)
    kept = elsewhere.read_bytes()
    second = await start(env, cache)
    try:
        assert second.from_cache() == 0
    finally:
        await second.stop()
    import asyncio

    for _ in range(100):
        if not os.path.islink(path):
            break
        await asyncio.sleep(0.05)
    assert not os.path.islink(path) and os.path.isfile(path)  # replaced, not written through
    assert elsewhere.read_bytes() == kept


async def test_two_servers_on_one_workspace_leave_one_whole_cache(workspace):
    """Two servers indexing one workspace at once both write the cache (temporary file + rename): the
    last writer's file is whole, and a third start takes every file from it."""
    import asyncio

    env, cache = workspace
    both = await asyncio.gather(start(env, cache), start(env, cache))
    for s in both:  # (one may have read the other's cache: whole, or none yet)
        assert s.from_cache() in (0, FILE_COUNT)
        assert not any("index cache ignored" in m for m in s.logs), s.logs
    await asyncio.gather(*(s.stop() for s in both))
    await wait_saved(cache)
    assert [n for n in os.listdir(cache) if not n.endswith(".json")] == []  # no temporary file left
    third = await start(env, cache)
    try:
        assert third.from_cache() == FILE_COUNT
        assert not any("index cache ignored" in m for m in third.logs)
        assert "mymod::greet" in await symbols(third, "mymod")
    finally:
        await third.stop()


async def test_a_cache_directory_that_is_a_link_is_not_used(workspace, tmp_path):
    env, cache = workspace
    target = tmp_path / "target"
    target.mkdir()
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    os.symlink(target, cache)
    import asyncio

    first = await start(env, cache)
    try:
        for _ in range(200):  # the server says it did not write (after its index was complete)
            if any("index cache not written" in m for m in first.logs):
                break
            await asyncio.sleep(0.05)
        assert any("index cache not written" in m for m in first.logs), first.logs
    finally:
        await first.stop()
    assert os.listdir(target) == []


async def test_the_cache_of_a_workspace_gone_is_removed(workspace, tmp_path):
    """Each save removes the caches of workspaces whose roots are all gone (a test's temporary
    directory): the cache directory does not grow without bound."""
    import shutil

    env, cache = workspace
    gone = str(tmp_path / "gone")
    write_files(gone, FILES, age=3600)
    other = await start(gone, cache)
    await other.stop()
    gone_cache = await wait_saved(cache)
    shutil.rmtree(gone)
    await cold_then_second(env, cache)
    import asyncio

    for _ in range(200):  # (the first server's save, then its pruning, end after its index)
        names = os.listdir(cache)
        if os.path.basename(gone_cache) not in names and len(names) == 1:
            break
        await asyncio.sleep(0.05)
    assert os.path.basename(gone_cache) not in names and len(names) == 1, names


async def test_references_that_do_not_decode_are_read_again_from_the_file(workspace):
    """The references of a cached file are decoded only when a query needs them (a second start files
    the index without building them): one that does not decode then -- a record the cache's digest
    vouches for, yet of another shape -- is no answer, its file is parsed again."""
    import json
    import marshal

    from puppet_xpp.server.analysis.index_cache import digest

    env, cache = workspace
    cold_symbols, cold_hover, cold_refs = await cold_then_second(env, cache)
    assert ("modules/other/manifests/init.pp", 2) in cold_refs
    path = await wait_saved(cache)
    with open(path, "rb") as f:
        head, _, body = f.read().partition(b"\n")
    files = marshal.loads(body)
    other = os.path.join(env, "modules/other/manifests/init.pp")
    assert files[other][6] is not None
    files[other] = (*files[other][:6], b"not the references")
    body = marshal.dumps(files)
    header = json.loads(head)
    header["digest"] = digest(body)
    with open(path, "wb") as f:
        f.write(json.dumps(header).encode() + b"\n" + body)
    second = await start(env, cache)
    try:
        assert second.from_cache() == FILE_COUNT
        assert await references_of_old(second, env) == cold_refs
        assert await symbols(second, "mymod") == cold_symbols
    finally:
        await second.stop()


EARLY = "puppet-xpp: workspace files and index cache read while the server loaded"


async def test_the_second_start_reads_the_cache_while_the_server_loads(workspace):
    """The start-up front reads the workspace's files and the index cache (its file-system part in a
    process of its own) from ``initialize`` on, while the server is imported: the indexing at
    ``initialized`` files what it found, and the answers are the cold start's."""
    env, cache = workspace
    cold_symbols, cold_hover, cold_refs = await cold_then_second(env, cache)
    second = await start(env, cache)
    try:
        early = [m for m in second.logs if m.startswith(EARLY)]
        assert early == [f"{EARLY} ({FILE_COUNT} of {FILE_COUNT} files cached)"], second.logs
        assert second.from_cache() == FILE_COUNT
        assert await symbols(second, "mymod") == cold_symbols
        assert await hover_greet(second, env) == cold_hover
        assert await references_of_old(second, env) == cold_refs
    finally:
        await second.stop()


async def test_a_module_path_the_client_configures_later_is_indexed(workspace, tmp_path):
    """The front reads the workspace of ``initialize``'s settings; a module path the client's
    configuration adds at ``initialized`` makes other index roots: what the front read is not used,
    and the module there is indexed."""
    env, cache = workspace
    extra = str(tmp_path / "extra")
    write_files(
        extra,
        {
            "extramod/lib/puppet/functions/extramod/hi.rb": (
                "Puppet::Functions.create_function(:'extramod::hi') do\n  def hi\n    'hi'\n  end\nend\n"
            )
        },
        age=3600,
    )
    s = await start(env, cache, {"modulepath": [extra]})
    try:
        assert not any(m.startswith(EARLY) for m in s.logs), s.logs
        assert "extramod::hi" in await symbols(s, "extramod")
        assert "mymod::greet" in await symbols(s, "mymod")
    finally:
        await s.stop()


async def test_the_process_that_reads_the_workspace_early_is_gone_once_indexed(workspace):
    """The front's child process (its file-system part of the early reading) ends and is reaped: once
    the workspace is indexed the server has no child left (a workspace this small starts no indexing
    worker, no document is open: no lint worker)."""
    import asyncio

    await asyncio.to_thread(early_is_gone, *workspace)


def early_is_gone(env: str, cache: str) -> None:
    import json
    import subprocess

    proc = subprocess.Popen(
        SERVER,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, PYTHONPATH=REPO, PUPPET_XPP_INDEX_CACHE=cache),
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(msg: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        proc.stdin.flush()

    def read() -> dict:
        length = 0
        while (line := proc.stdout.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        assert length, "the server closed its output"
        return json.loads(proc.stdout.read(length))

    try:
        uri = "file://" + env
        folders = [{"uri": uri, "name": "production"}]
        send({"id": 1, "method": "initialize", "params": {"capabilities": {}, "workspaceFolders": folders}})
        while read().get("id") != 1:
            pass
        send({"method": "initialized", "params": {}})
        while "indexed" not in str(read().get("params", {}).get("message", "")):
            pass
        deadline = time.monotonic() + 10
        while children(proc.pid):  # (reaped by a thread of the server: a moment after)
            assert time.monotonic() < deadline, children(proc.pid)
            time.sleep(0.05)
        send({"id": 2, "method": "shutdown"})
        while read().get("id") != 2:
            pass
        send({"method": "exit"})
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
