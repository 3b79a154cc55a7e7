"""Indexing benchmark: every .pp and Ruby API file (functions, types, facts) under the given module
directories (default: the Debian module corpus) indexed as the language server does at start, with
the wall time, the entry counts and the process's peak RSS.

    python3 bench/bench_index.py [DIR ...]            in process (the index alone)
    python3 bench/bench_index.py --server [DIR ...]   the language server (stdio) with DIR as its
                                                     workspace folder, started twice on one fresh index
                                                     cache (server/analysis/index_cache.py): cold, then
                                                     the second start; time to the "indexed" log
                                                     message side by side with the load average, RSS
                                                     after indexing and after a completion
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from puppet_xpp.server.analysis import builtins
from puppet_xpp.server.analysis.index import WorkspaceIndex, index_file, workspace_files


def _rss_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process in MB."""
    vals: dict[str, float] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                vals[k] = int(v.split()[0]) / 1024
    return vals.get("VmRSS", 0.0), vals.get("VmHWM", 0.0)


class Rpc:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.p = proc
        self.n = 0

    def send(self, method: str, params: Any, notify: bool = False) -> int | None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self.n += 1
            msg["id"] = self.n
        body = json.dumps(msg).encode()
        assert self.p.stdin is not None
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()
        rid: int | None = msg.get("id")
        return rid

    def read(self) -> dict[str, Any]:
        assert self.p.stdout is not None
        length = 0
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise EOFError("server exited")
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        msg: dict[str, Any] = json.loads(self.p.stdout.read(length))
        return msg

    def until(self, pred: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            m = self.read()
            if "id" in m and "method" in m:  # a request from the server: answer null
                body = json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": None}).encode()
                assert self.p.stdin is not None
                self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
                self.p.stdin.flush()
            if pred(m):
                return m


def server_bench(roots: list[str]) -> int:
    """Two starts of the server on ``roots`` sharing a new, empty index cache directory."""
    with tempfile.TemporaryDirectory(prefix="bench-index-cache-") as cache:
        env = dict(os.environ, PUPPET_XPP_INDEX_CACHE=cache)
        results = []
        for label in ("cold start", "second start"):
            print(f"-- {label} (load average {_load()})")
            t_init, t_idx = server_start(roots, env)
            results.append((label, t_init, t_idx, _load()))
    print("index ready, the same run (s after exec; s after `initialize` was answered):")
    for label, t_init, t_idx, load in results:
        print(f"  {label:13} {t_idx:6.2f} s  {t_idx - t_init:6.2f} s   (load average after: {load})")
    return 0


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def server_start(roots: list[str], env: dict[str, str]) -> tuple[float, float]:
    """One start of the server: the seconds from exec to the answer to ``initialize`` and to the
    "indexed" log message."""
    root = roots[0]
    cmd = [sys.executable, "-m", "puppet_xpp", "--stdio"]
    t0 = time.perf_counter()
    p = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    rpc = Rpc(p)
    try:
        uri = "file://" + os.path.abspath(root)
        i = rpc.send(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri,
                "capabilities": {},
                "workspaceFolders": [{"uri": uri, "name": "corpus"}],
                "initializationOptions": {"modulepath": roots[1:], "xppOnSave": False},
            },
        )
        rpc.until(lambda m: m.get("id") == i)
        t_init = time.perf_counter() - t0
        rss_start = _rss_mb(p.pid)
        rpc.send("initialized", {}, notify=True)
        msg = rpc.until(
            lambda m: m.get("method") == "window/logMessage" and "indexed" in m["params"]["message"]
        )
        t_idx = time.perf_counter() - t0
        rss_idx = _rss_mb(p.pid)
        doc = "file://" + os.path.join(os.path.abspath(root), "bench_index_probe.pp")
        rpc.send(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": doc,
                    "languageId": "puppet",
                    "version": 1,
                    "text": "$x = stdlib::\nfile_line { 'a':\n  \n}\n",
                }
            },
            notify=True,
        )
        t1 = time.perf_counter()
        c = rpc.send(
            "textDocument/completion",
            {"textDocument": {"uri": doc}, "position": {"line": 0, "character": 13}},
        )
        res = rpc.until(lambda m: m.get("id") == c)
        t_comp = time.perf_counter() - t1
        n = len((res.get("result") or {}).get("items", []))
        rss_end = _rss_mb(p.pid)
        print(
            f"server: initialize {t_init:.2f} s; {msg['params']['message']} (ready {t_idx:.2f} s after start)"
        )
        print(f"completion after `stdlib::`: {n} items in {t_comp * 1000:.0f} ms")
        print(
            f"RSS: {rss_start[0]:.0f} MB at start, {rss_idx[0]:.0f} MB indexed, {rss_end[0]:.0f} MB after a completion (peak {rss_end[1]:.0f} MB)"
        )
        s = rpc.send("shutdown", None)
        rpc.until(lambda m: m.get("id") == s)
        rpc.send("exit", None, notify=True)
    finally:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
    return t_init, t_idx


def main(argv: list[str]) -> int:
    if argv[:1] == ["--server"]:
        return server_bench(argv[1:] or ["/usr/share/puppet/modules"])
    roots = argv or ["/usr/share/puppet/modules"]
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    files = workspace_files(roots)
    idx = WorkspaceIndex()
    for p in files:
        idx.set_file(p, index_file(p))
    dt = time.perf_counter() - t0
    syms = idx.all()
    kinds: dict[str, int] = {}
    for s in syms:
        key = s.kind if s.origin in ("puppet",) else f"{s.kind}/{s.origin}"
        kinds[key] = kinds.get(key, 0) + 1
    rb = sum(1 for p in files if p.endswith(".rb"))
    print(
        f"files: {len(files)} ({len(files) - rb} .pp, {rb} .rb) in {dt:.2f} s ({len(files) / dt:.0f} files/s)"
    )
    print("entries:", ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    print(
        f"built-ins: {len(builtins.functions())} functions, {len(builtins.types())} types, {len(builtins.facts())} facts"
    )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak RSS: {rss / 1024:.0f} MB (before indexing {rss0 / 1024:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
