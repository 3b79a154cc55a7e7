"""The workspace index made in worker processes (issue 31 item 2; server/analysis/index_pool.py): the
same entries and references as the serial indexing on the whole corpus, one bad file costing nothing
of the others, and a worker killed in the middle of a server's indexing leaving the same index."""

from __future__ import annotations

import json
import marshal
import os
import signal
import subprocess
import time
from typing import Any

import pytest

from bench import proctree
from puppet_xpp.server.analysis import index_pool
from puppet_xpp.server.analysis.index import workspace_files
from puppet_xpp.server.analysis.index_cache import IndexCache, encode_entry
from puppet_xpp.server.analysis.references import RefIndex, feed
from tests.lsp.test_hostile_clients import REPO, SERVER

CORPUS = "/usr/share/puppet/modules"
needs_corpus = pytest.mark.skipif(not os.path.isdir(CORPUS), reason="no module corpus")


def plain(record: tuple[Any, ...]) -> tuple[Any, ...]:
    """(digest, racy, deps, syms, refs) of an entry's record, the references decoded from their string
    (equal references may marshal to different strings: objects shared or not)."""
    refs = record[6]
    return (*record[2:6], marshal.loads(refs) if refs is not None else None)


def serial(paths: list[str]) -> dict[str, Any]:
    """What the serial indexing records per file (the index cache's records: entries and references)."""
    cache = IndexCache(["/nowhere"], None)
    refs = RefIndex()
    for p in paths:
        cache.index(p, (feed(refs),), refs)
    return {p: plain(encode_entry(e)) for p, e in cache.new.items()}


def parallel(paths: list[str], n: int = 2) -> tuple[dict[str, Any], list[index_pool.Result]]:
    results: list[index_pool.Result] = []
    with index_pool.IndexPool(n) as pool:
        for _chunk, future in pool.submit(paths):
            assert future is not None
            results.extend(future.result(timeout=300))
    return {p: plain(rec) for p, rec, _why, _failed in results if rec is not None}, results


@needs_corpus
def test_parallel_index_equals_the_serial_one_on_the_corpus() -> None:
    paths = workspace_files([CORPUS])
    assert len(paths) > 1000
    want = serial(paths)
    got, results = parallel(paths)
    assert not [r for r in results if r[3]]  # no file failed in a worker
    assert got.keys() == want.keys()
    diff = [p for p in want if got[p] != want[p]]
    assert diff == []
    assert sum(len(rec[3]) for rec in got.values()) > 1000  # entries
    assert sum(len(rec[4] or ()) for rec in got.values()) > 10000  # references


def test_one_bad_file_costs_no_other(tmp_path: Any) -> None:
    good = tmp_path / "m" / "manifests"
    good.mkdir(parents=True)
    (good / "init.pp").write_text("class m { include m::x }\n")
    (good / "broken.pp").write_text("class m::broken {\n  notice(\n")
    (good / "latin1.pp").write_bytes(b"class m::latin1 { notice('\xe9') }\n")
    os.mkfifo(good / "fifo.pp")
    (good / "dir.pp").mkdir()
    paths = [str(good / n) for n in ("init.pp", "broken.pp", "fifo.pp", "dir.pp", "latin1.pp")]
    got, results = parallel(paths, 1)
    by = {r[0]: r for r in results}
    assert {s[0] for s in got[str(good / "init.pp")][3]} == {"m"}
    assert {s[0] for s in got[str(good / "latin1.pp")][3]} == {"m::latin1"}
    assert got[str(good / "broken.pp")][3] == ()  # (what the serial indexing has for it too)
    assert by[str(good / "fifo.pp")][1] is None and by[str(good / "fifo.pp")][2]  # refused, with why
    assert by[str(good / "dir.pp")][1] is None
    assert got == serial([p for p in paths if p in got])


class Server:
    """The language server on a workspace folder, read until its "indexed" log message."""

    def __init__(self, root: str, workers: str = "2") -> None:
        env = dict(
            os.environ, PYTHONPATH=REPO, PUPPET_XPP_INDEX_CACHE="off", PUPPET_XPP_INDEX_WORKERS=workers
        )
        self.p = subprocess.Popen(
            SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        self.n = 0
        self.seen: list[dict[str, Any]] = []
        uri = "file://" + root
        self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": uri,
                "capabilities": {},
                "workspaceFolders": [{"uri": uri, "name": "w"}],
            },
        )
        self.notify("initialized", {})

    def send(self, msg: dict[str, Any]) -> None:
        body = json.dumps(msg).encode()
        assert self.p.stdin is not None
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def read(self) -> dict[str, Any]:
        assert self.p.stdout is not None
        length = 0
        while (line := self.p.stdout.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        msg: dict[str, Any] = json.loads(self.p.stdout.read(length))
        return msg

    def request(self, method: str, params: Any) -> Any:
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        while True:
            m = self.read()
            if m.get("id") == self.n and "method" not in m:
                return m.get("result")
            self.seen.append(m)

    def logs_until_indexed(self) -> list[str]:
        out = []
        while True:
            m = self.read()
            if m.get("method") == "window/logMessage":
                out.append(m["params"]["message"])
                if m["params"]["message"].startswith("puppet-xpp: indexed "):
                    return out

    def symbols(self, queries: list[str]) -> list[Any]:
        return [
            sorted(
                json.dumps(s, sort_keys=True) for s in self.request("workspace/symbol", {"query": q}) or []
            )
            for q in queries
        ]

    def close(self) -> None:
        self.p.kill()
        self.p.wait()


def workers_of(pid: int) -> list[int]:
    """The indexing worker processes (server/analysis/child_process.py's children started with the
    index pool's initializer) among the children of ``pid``."""
    out = []
    for c in proctree.children(pid):
        try:
            if "index_pool:worker_init" in proctree.cmdline(c):
                out.append(c)
        except OSError:  # (it ended)
            continue
    return out


QUERIES = ["apache::", "stdlib", "mysql::server", "concat", "nginx", "ssh", "type", "x"]


@needs_corpus
def test_a_worker_killed_while_indexing_leaves_the_same_index() -> None:
    a = Server(CORPUS)
    try:
        deadline = time.monotonic() + 60
        killed = None
        while killed is None and time.monotonic() < deadline:
            found = workers_of(a.p.pid)
            if found:
                time.sleep(0.2)  # (a few chunks done first)
                killed = found[0]
                os.kill(killed, signal.SIGKILL)
            time.sleep(0.01)
        assert killed is not None, "no indexing worker seen"
        logs = a.logs_until_indexed()
        assert any("an indexing worker stopped" in m for m in logs), logs
        got = a.symbols(QUERIES)
    finally:
        a.close()
    b = Server(CORPUS, workers="0")  # the serial index
    try:
        b.logs_until_indexed()
        want = b.symbols(QUERIES)
    finally:
        b.close()
    assert got == want
    assert sum(len(x) for x in want) > 300


@pytest.fixture
def early_start(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    """An empty index cache directory, one worker, and no indexing begun in this process yet."""
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("PUPPET_XPP_INDEX_CACHE", str(cache))
    monkeypatch.setenv(index_pool.ENV, "1")
    monkeypatch.setattr(index_pool, "pool_made", False)
    monkeypatch.setattr(index_pool, "early_workers", None)
    return str(cache)


@needs_corpus
def test_workers_started_early_give_the_same_index(early_start: str) -> None:
    """Workers started before the server is loaded (index_pool.prestart) index the first files; the
    indexing's pool adopts them and hands each file out once, whatever its chunks, as the serial
    indexing has it."""
    paths = workspace_files([CORPUS])
    early = index_pool.start_early([CORPUS])
    assert early is not None
    first = early.by_path[paths[0]]
    first.result(timeout=120)  # (the first chunk done before the indexing asks)
    results: list[index_pool.Result] = []
    with index_pool.IndexPool(1) as pool:
        assert pool.workers is early.workers and pool.early
        futures = [pool.submit_one(paths[k : k + 8]) for k in range(0, len(paths), 8)]
        assert futures[0] is not None and futures[0].done()  # (from what the early worker did)
        for future in futures:
            assert future is not None
            results.extend(future.result(timeout=300))
    assert sorted(r[0] for r in results) == sorted(paths)  # each file once
    assert {p: plain(rec) for p, rec, _why, _failed in results if rec is not None} == serial(paths)


def test_no_early_start_on_a_second_start(early_start: str, tmp_path: Any) -> None:
    """An index cache naming the folders (a second start) or a small workspace: no early workers."""
    small = tmp_path / "small" / "manifests"
    small.mkdir(parents=True)
    (small / "init.pp").write_text("class small {}\n")
    assert index_pool.start_early([str(tmp_path / "small")]) is None  # (fewer than MIN_FILES files)
    for k in range(index_pool.MIN_FILES):
        (small / f"c{k}.pp").write_text(f"class small::c{k} {{}}\n")
    header = {"format": "x", "roots": [str(tmp_path / "small")]}
    with open(os.path.join(early_start, "0123.json"), "w") as f:
        f.write(json.dumps(header) + "\n")
    assert index_pool.start_early([str(tmp_path / "small")]) is None
    os.unlink(os.path.join(early_start, "0123.json"))
    early = index_pool.start_early([str(tmp_path / "small")])
    assert early is not None
    early.expire()  # (not adopted: stopped)
    assert index_pool.early_workers is None and early.workers.closed
