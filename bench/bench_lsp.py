#!/usr/bin/env python3
"""Language-server latency and memory, measured through the real protocol (stdio JSON-RPC).

    python3 bench/bench_lsp.py [--file PATH] [--edits N] [--corpus DIR] [--no-memory]

* keystroke -> published diagnostics: p50/p95/max over N one-character edits (insert, then delete
  again) in the middle of FILE (by byte offset), and separately at code lines in the middle of its
  last top-level statement (for apache's vhost.pp that is the body of the one `define`);
* the in-process full parse (+ validation) time of the same file, for comparison;
* process start -> first diagnostics of FILE;
* resident memory after indexing the whole corpus as the workspace.
Prints a human summary and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
DEFAULT_FILE = "/usr/share/puppet/modules/apache/manifests/vhost.pp"
SERVER = [sys.executable, "-c", "import sys; from puppet_xpp.server.cli import main; sys.exit(main())"]


class Client:
    def __init__(self, root=None):
        self.t_start = time.perf_counter()
        self.proc = subprocess.Popen(
            SERVER,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(os.environ, PYTHONPATH=REPO),
        )
        self.lock = threading.Condition()
        self.msgs = []
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        caps = {"window": {"workDoneProgress": True}, "textDocument": {"publishDiagnostics": {}}}
        params = {"processId": os.getpid(), "capabilities": caps}
        if root:
            params["rootUri"] = "file://" + root
            params["workspaceFolders"] = [{"uri": "file://" + root, "name": "ws"}]
        self.request("initialize", params)
        self.notify("initialized", {})

    def _read(self):
        f = self.proc.stdout
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                c = f.read(1)
                if not c:
                    return
                header += c
            n = int(
                [h for h in header.split(b"\r\n") if h.lower().startswith(b"content-length")][0].split(b":")[
                    1
                ]
            )
            msg = json.loads(f.read(n))
            msg["_t"] = time.perf_counter()
            if "id" in msg and "method" in msg:  # a request from the server: answer null
                self._send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            with self.lock:
                self.msgs.append(msg)
                self.lock.notify_all()

    def _send(self, obj):
        body = json.dumps(obj).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method, params):
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params, timeout=120):
        self.next_id += 1
        rid = self.next_id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == rid and "method" not in m, timeout)

    def wait(self, pred, timeout=120):
        deadline = time.time() + timeout
        with self.lock:
            while True:
                for i, m in enumerate(self.msgs):
                    if pred(m):
                        del self.msgs[: i + 1]
                        return m
                left = deadline - time.time()
                if left <= 0:
                    raise TimeoutError
                self.lock.wait(left)

    def diags(self, uri, version, timeout=120):
        return self.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and m["params"].get("version") == version
            ),
            timeout,
        )

    def close(self):
        try:
            self.request("shutdown", None, 10)
            self.notify("exit", None)
            self.proc.wait(5)
        except Exception:
            self.proc.kill()
            self.proc.wait()

    def rss_mb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return None


def pct(xs, p):
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, int(round(p / 100 * (len(xs) - 1)))))
    return xs[k]


def keystrokes(c, uri, text, positions, version):
    """One-character insert + delete at each (line, col); returns (latencies in ms, next version)."""
    lat = []
    for line, col in positions:
        for change in (
            {"range": _r(line, col, line, col), "text": "x"},
            {"range": _r(line, col, line, col + 1), "text": ""},
        ):
            version += 1
            t0 = time.perf_counter()
            c.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
            )
            m = c.diags(uri, version)
            lat.append((m["_t"] - t0) * 1000)
    return lat, version


def _r(l0, c0, l1, c1):
    return {"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", default=DEFAULT_FILE)
    ap.add_argument("--edits", type=int, default=100)
    ap.add_argument("--corpus", default="/usr/share/puppet/modules")
    ap.add_argument("--no-memory", action="store_true")
    a = ap.parse_args(argv)
    text = open(a.file, encoding="utf-8").read()
    lines = text.splitlines()
    out = {"file": a.file, "bytes": len(text.encode()), "lines": len(lines)}

    # full in-process reparse (+ validation), for comparison
    from puppet_xpp.grammar.parser import parse
    from puppet_xpp.grammar.validator import validate

    parse(text, a.file)
    ts = []
    for _ in range(10):
        t0 = time.perf_counter()
        r = parse(text, a.file)
        validate(r.program, file=a.file)
        ts.append((time.perf_counter() - t0) * 1000)
    out["full_parse_validate_ms_median"] = round(statistics.median(ts), 2)

    # start -> first diagnostics
    t0 = time.perf_counter()
    c = Client()
    uri = "file://" + a.file
    c.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "puppet", "version": 1, "text": text}},
    )
    c.diags(uri, 1)
    out["start_to_first_diagnostics_ms"] = round((time.perf_counter() - t0) * 1000, 1)

    # keystrokes in the middle of the file (by bytes) ...
    mid_line = len(text[: len(text) // 2].splitlines())
    pos_mid = [(mid_line + (k % 40) - 20, 0) for k in range(a.edits)]
    lat_mid, v = keystrokes(c, uri, text, pos_mid, 1)
    # ... and on code lines in the middle of the last top-level statement (the define's body)
    code_lines = [i for i, l in enumerate(lines) if l.strip() and not l.strip().startswith("#")]
    body = [i for i in code_lines if i > len(lines) - (len(lines) - code_lines[0]) and i < len(lines) - 1]
    mid_body = body[len(body) // 2 - 20 : len(body) // 2 + 20] or body
    pos_code = [
        (
            mid_body[k % len(mid_body)],
            len(lines[mid_body[k % len(mid_body)]]) - len(lines[mid_body[k % len(mid_body)]].lstrip()),
        )
        for k in range(a.edits)
    ]
    lat_code, v = keystrokes(c, uri, text, pos_code, v)
    c.close()
    for name, lat in (("middle", lat_mid), ("code", lat_code)):
        out[f"keystroke_{name}_ms"] = {
            "n": len(lat),
            "p50": round(pct(lat, 50), 2),
            "p95": round(pct(lat, 95), 2),
            "max": round(max(lat), 2),
        }

    if not a.no_memory and os.path.isdir(a.corpus):
        t0 = time.perf_counter()
        c = Client(root=a.corpus)
        c.wait(lambda m: m.get("method") == "window/logMessage" and "indexed" in m["params"]["message"], 900)
        out["corpus_index_seconds"] = round(time.perf_counter() - t0, 1)
        out["corpus_rss_mb"] = round(c.rss_mb(), 1)
        c.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "puppet", "version": 1, "text": text}},
        )
        c.diags(uri, 1)
        out["corpus_rss_mb_with_file_open"] = round(c.rss_mb(), 1)
        c.close()

    km, kc = out["keystroke_middle_ms"], out["keystroke_code_ms"]
    print(f"{a.file}: {out['bytes']} bytes, {out['lines']} lines")
    print(f"  full parse+validate (in process): {out['full_parse_validate_ms_median']} ms")
    print(f"  start -> first diagnostics:       {out['start_to_first_diagnostics_ms']} ms")
    print(f"  keystroke -> diagnostics, middle: p50 {km['p50']} ms, p95 {km['p95']} ms, max {km['max']} ms")
    print(f"  keystroke -> diagnostics, code:   p50 {kc['p50']} ms, p95 {kc['p95']} ms, max {kc['max']} ms")
    if "corpus_rss_mb" in out:
        print(
            f"  corpus workspace: indexed in {out['corpus_index_seconds']} s, RSS {out['corpus_rss_mb']} MB "
            f"({out['corpus_rss_mb_with_file_open']} MB with the file open)"
        )
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
