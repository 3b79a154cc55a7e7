"""Indexing benchmark: every .pp and Ruby API file (functions, types, facts) under the given module
directories (default: the Debian module corpus) indexed as the language server does at start, with
the wall time, the entry counts and the process's peak RSS.

    python3 bench/bench_index.py [DIR ...]            in process (the index alone)
    python3 bench/bench_index.py --server [--runs N] [DIR ...]
        the language server (stdio) with DIR as its workspace folder (default: issue 31's workspace,
        built in a temporary directory: the corpus's modules copied, more copies up to 80 modules and
        a ~292 KB one-class manifest): N starts (5) each cold with the serial index (the anchor),
        cold with the worker processes (server/analysis/index_pool.py) and second (the index cache,
        server/analysis/index_cache.py); medians of the time to the "indexed" log message, from exec
        and from the answer to initialize, and the memory of the server and its children (the lint
        worker) after indexing and a completion, side by side with the load average.  The package's
        bytecode is compiled first, and the start-up cache is the run's own, filled by its first start
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

import proctree

from puppet_xpp.server.analysis import builtins
from puppet_xpp.server.analysis.index import WorkspaceIndex, index_file, workspace_files

CORPUS = "/usr/share/puppet/modules"


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


def build_workspace(tmp: str, corpus: str = CORPUS, modules: int = 80) -> str:
    """The workspace of issue 31's figures: the corpus's modules copied (``cp -rL``: its entries are
    links), more copies of the largest under other names up to ``modules`` modules, and a module
    ``site`` whose one class is a ~292 KB manifest built from the corpus's class bodies
    (bench/bench_lsp.py's generator).  Returns the modules directory."""
    import shutil

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_lsp import build_one_class_manifest

    root = os.path.join(tmp, "modules")
    subprocess.run(["cp", "-rL", corpus, root], check=True)
    names = sorted(os.listdir(root))
    sizes = sorted(names, key=lambda n: -sum(len(fs) for _d, _s, fs in os.walk(os.path.join(root, n))))
    for k, name in enumerate(sizes[: max(0, modules - 1 - len(names))]):
        shutil.copytree(os.path.join(root, name), os.path.join(root, f"copy{k}_{name}"), symlinks=True)
    os.makedirs(os.path.join(root, "site", "manifests"))
    with open(os.path.join(root, "site", "manifests", "init.pp"), "w", encoding="utf-8") as f:
        f.write(build_one_class_manifest(corpus, 292_000).replace("class big {", "class site {", 1))
    return root


def _tree_memory(pid: int) -> tuple[float, float, list[float]]:
    """(RSS, PSS) in MB of ``pid`` and all its descendants (the lint worker), and each one's RSS."""
    rss = pss = 0.0
    each = []
    for p in proctree.tree(pid):
        try:
            each.append(proctree.rss_mb(p)[0])
            pss += proctree.pss_mb(p)
        except OSError:
            pass
    rss = sum(each)
    return rss, pss, each


def _cpu_s(pid: int) -> tuple[float, float]:
    """(CPU seconds of ``pid`` itself, of its children: those it reaped -- the indexing workers -- and
    the live ones -- the lint worker)."""
    own, children = proctree.cpu_seconds(pid)
    for p in proctree.tree(pid)[1:]:
        try:
            cpu, reaped = proctree.cpu_seconds(p)
            children += cpu + reaped
        except OSError:
            pass
    return own, children


def server_bench(roots: list[str], runs: int = 5) -> int:
    """Starts of the server on ``roots`` (default: :func:`build_workspace`): cold with the serial index
    (``PUPPET_XPP_INDEX_WORKERS=0``, the anchor: the indexing before the worker processes), cold with
    the worker processes, and second starts (the index cache): ``runs`` each, medians."""
    import shutil
    import statistics

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_lsp import compile_bytecode

    compile_bytecode()
    tmp = tempfile.mkdtemp(prefix="bench-index-")
    try:
        if not roots:
            roots = [build_workspace(tmp)]
        files = workspace_files(roots)
        mods = len([d for d in os.listdir(roots[0]) if os.path.isdir(os.path.join(roots[0], d))])
        pp = sum(1 for f in files if f.endswith(".pp"))
        print(f"workspace {roots[0]}: {mods} modules, {pp} manifests, {len(files) - pp} Ruby files indexed")
        rows: dict[str, list[tuple[float, float, float, float, float, float, str]]] = {}
        cache = os.path.join(tmp, "cache")
        # the start-up cache (initialize's answer, the code cache: server/lsp/startup.py, compiled.py) of
        # this run, filled by its first start, as a user's is by the server's last start
        os.environ["PUPPET_XPP_STARTUP_CACHE"] = os.path.join(tmp, "startup")
        os.mkdir(os.path.join(tmp, "empty"))
        print("(a start on an empty workspace first: it fills the run's start-up cache)")
        server_start([os.path.join(tmp, "empty")], _env(os.path.join(tmp, "cache-empty"), None))
        for label, workers, fresh in (
            ("cold, serial index (anchor)", "0", True),
            ("cold, worker processes", None, True),
            ("second start (index cache)", None, False),
        ):
            for k in range(runs):
                if fresh or not os.path.isdir(cache):
                    shutil.rmtree(cache, ignore_errors=True)
                    os.mkdir(cache)
                    if not fresh:  # (a second start: the cache written by one cold start first)
                        server_start(roots, _env(cache, workers))
                env = _env(cache, workers)
                load = _load()
                t_init, t_idx, rss, pss, cpu = server_start(roots, env)
                print(f"  {label} #{k + 1}: ready {t_idx:.2f} s after exec (load average {load})")
                rows.setdefault(label, []).append((t_init, t_idx, t_idx - t_init, rss, pss, cpu, load))
        print()
        print("index ready (the 'indexed' log message), medians of", runs, "starts, the same run:")
        print(
            "  what                              exec->ready  initialize->ready  CPU to ready"
            "  RSS+children  PSS   load (1/5/15)"
        )
        for label, rs in rows.items():
            med = [statistics.median(r[i] for r in rs) for i in range(6)]
            print(
                f"  {label:33} {med[1]:8.2f} s  {med[2]:12.2f} s  {med[5]:9.2f} s"
                f"  {med[3]:9.0f} MB  {med[4]:4.0f} MB   {rs[-1][6]}"
            )
        print("  (CPU to ready: the server's and its children's -- the indexing workers' -- until 'indexed')")
        print("targets (issue 31 item 2): cold <= 2 s, second start <= 0.5 s, whole server <= 150 MB")
        print("command: python3 bench/bench_index.py --server")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _env(cache: str, workers: str | None) -> dict[str, str]:
    env = dict(os.environ, PUPPET_XPP_INDEX_CACHE=cache)
    env.pop("PUPPET_XPP_INDEX_WORKERS", None)
    if workers is not None:
        env["PUPPET_XPP_INDEX_WORKERS"] = workers
    return env


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def server_start(roots: list[str], env: dict[str, str]) -> tuple[float, float, float, float, float]:
    """One start of the server: the seconds from exec to the answer to ``initialize`` and to the
    "indexed" log message, the memory (RSS, PSS) of the server and its children after indexing and a
    completion (the lint worker started by the document opened), and the CPU seconds of the server and
    its children (the indexing workers) until the "indexed" message."""
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
        rpc.send("initialized", {}, notify=True)
        msg = rpc.until(
            lambda m: m.get("method") == "window/logMessage" and "indexed" in m["params"]["message"]
        )
        t_idx = time.perf_counter() - t0
        cpu_server, cpu_children = _cpu_s(p.pid)
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
        time.sleep(1.0)  # (the lint worker started by the document: in the figure)
        rss, pss, each = _tree_memory(p.pid)
        print(
            f"server: initialize {t_init:.2f} s; {msg['params']['message']} (ready {t_idx:.2f} s after exec,"
            f" CPU {cpu_server:.2f} s server + {cpu_children:.2f} s children);"
            f" completion after `stdlib::`: {n} items in {t_comp * 1000:.0f} ms;"
            f" memory {rss:.0f} MB RSS ({' + '.join(f'{x:.0f}' for x in each)}: server first), {pss:.0f} MB PSS"
            f" ({len(each)} processes)"
        )
        s = rpc.send("shutdown", None)
        rpc.until(lambda m: m.get("id") == s)
        rpc.send("exit", None, notify=True)
    finally:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
    return t_init, t_idx, rss, pss, cpu_server + cpu_children


def main(argv: list[str]) -> int:
    if argv[:1] == ["--server"]:
        runs = 5
        if argv[1:2] == ["--runs"]:
            runs, argv = int(argv[2]), argv[:1] + argv[3:]
        return server_bench(argv[1:], runs)
    roots = argv or [CORPUS]
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
