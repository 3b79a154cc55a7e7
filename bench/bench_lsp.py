#!/usr/bin/env python3
"""Language-server latency and memory, measured through the real protocol (stdio JSON-RPC).

    python3 bench/bench_lsp.py [--file PATH ...] [--edits N] [--lines N] [--corpus DIR] [--no-memory]
                               [--no-big] [--lint on|off]

For FILE (apache's vhost.pp by default) and for a ~300 KB one-class manifest built from the corpus's
class bodies (``--no-big`` leaves it out):

* keystroke -> published diagnostics, p50/p95/max, per scenario: ``middle``: N one-character edits
  (insert, then delete again) in the middle of the file (by byte offset); ``code``: the same at code
  lines in the middle of its last top-level statement (for vhost.pp the body of the one `define`);
  ``break``: a `(` typed at such a line (the statement breaks: a syntax error inside the body) and
  deleted again (repaired); ``typing``: a new statement typed there character by character (broken
  until it is complete) and deleted again character by character; ``spread``: the same statement
  typed at the end of five lines spread over the whole file (the non-blank line nearest to each
  sixth: comments, headers, the top level, bodies); ``lines``: the same at N lines (``--lines``,
  20 by default) drawn at random (a fixed seed) from all the file's lines, the "any line" figure;
  ``header``: one-character edits on the lines of the last top-level statement's parameter list
  (reparsed as a whole);
* the in-process full parse (+ validation) time of the same file, for comparison;
* process start -> first diagnostics of FILE;
* start-up (``--startup N``, 5 by default; ``--only-startup``): medians of N cold starts through the
  start-up front (server/lsp/startup.py) and, the anchor, of the server started without it:
  exec -> ``initialize`` answered, ``didOpen`` -> first diagnostics, exec -> the server loaded; and
  ``python -X importtime`` figures of the server's imports (the package's bytecode compiled first, as
  an installed package has it);
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
from collections.abc import Callable
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
DEFAULT_FILE = "/usr/share/puppet/modules/apache/manifests/vhost.pp"
LINT: bool | None = None  # --lint on|off; None: the server's default
LINES = 20  # --lines: random lines of the "lines" scenario (0: left out)
SERVER = [sys.executable, "-c", "import sys; from puppet_xpp.server.cli.main import main; sys.exit(main())"]

Msg = dict[str, Any]  # a JSON-RPC message or a JSON object


class Client:
    def __init__(self, root: str | None = None) -> None:
        self.t_start = time.perf_counter()
        self.proc = subprocess.Popen(
            SERVER,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(os.environ, PYTHONPATH=REPO),
        )
        self.lock = threading.Condition()
        self.msgs: list[Msg] = []
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        caps = {"window": {"workDoneProgress": True}, "textDocument": {"publishDiagnostics": {}}}
        params: Msg = {"processId": os.getpid(), "capabilities": caps}
        if LINT is not None:  # puppet-lint diagnostics (on by default in the server) turned on or off
            params["initializationOptions"] = {"puppet": {"lint": {"enabled": LINT}}}
        if root:
            params["rootUri"] = "file://" + root
            params["workspaceFolders"] = [{"uri": "file://" + root, "name": "ws"}]
        self.request("initialize", params)
        self.notify("initialized", {})

    def _read(self) -> None:
        f = self.proc.stdout
        assert f is not None
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

    def _send(self, obj: Msg) -> None:
        body = json.dumps(obj).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any, timeout: float = 120) -> Msg:
        self.next_id += 1
        rid = self.next_id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == rid and "method" not in m, timeout)

    def wait(self, pred: Callable[[Msg], bool], timeout: float = 120) -> Msg:
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

    def diags(self, uri: str, version: int, timeout: float = 120) -> Msg:
        return self.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and m["params"].get("version") == version
            ),
            timeout,
        )

    def close(self) -> None:
        try:
            self.request("shutdown", None, 10)
            self.notify("exit", None)
            self.proc.wait(5)
        except Exception:
            self.proc.kill()
            self.proc.wait()

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, int(round(p / 100 * (len(xs) - 1)))))
    return xs[k]


def keystrokes(
    c: Client, uri: str, text: str, positions: list[tuple[int, int]], version: int, piece: str = "x"
) -> tuple[list[float], int]:
    """One-character insert + delete at each (line, col); returns (latencies in ms, next version)."""
    lat: list[float] = []
    for line, col in positions:
        for change in (
            {"range": _r(line, col, line, col), "text": piece},
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


def typing(
    c: Client, uri: str, positions: list[tuple[int, int]], version: int, piece: str
) -> tuple[list[float], int]:
    """Type piece character by character at each (line, col), then delete it character by character."""
    lat: list[float] = []
    for line, col in positions:
        at = col
        ln = line
        for ch in piece:
            version += 1
            change = {"range": _r(ln, at, ln, at), "text": ch}
            t0 = time.perf_counter()
            c.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
            )
            m = c.diags(uri, version)
            lat.append((m["_t"] - t0) * 1000)
            if ch == "\n":
                ln, at = ln + 1, 0
            else:
                at += 1
        for ch in reversed(piece):
            version += 1
            if ch == "\n":
                change = {"range": _r(ln - 1, 10**6, ln, 0), "text": ""}
                ln -= 1
                at = col  # (the end of the line the piece was typed at)
            else:
                change = {"range": _r(ln, at - 1, ln, at), "text": ""}
                at -= 1
            t0 = time.perf_counter()
            c.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
            )
            m = c.diags(uri, version)
            lat.append((m["_t"] - t0) * 1000)
    return lat, version


def build_one_class_manifest(corpus: str, target: int = 300_000) -> str:
    """A ~target-byte manifest with one class, its body made of the corpus's class bodies (classes
    without nested definitions, from files that parse without errors)."""
    import glob

    from puppet_xpp.grammar.parser import parse

    parts: list[str] = []
    size = 0
    for f in sorted(glob.glob(os.path.join(corpus, "*/manifests/**/*.pp"), recursive=True)):
        try:
            with open(f, encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError):
            continue
        r = parse(text, f)
        if r.errors or r.program is None:
            continue
        body = r.program.body  # type: ignore[attr-defined]
        data = text.encode()
        for st in getattr(body, "statements", [body]):
            if type(st).__name__ != "HostClassDefinition" or st.body is None or not st.body.statements:
                continue
            seg = data[st.body.statements[0].offset : st.offset + st.length - 1].decode().rstrip()
            if "class " in seg or "define " in seg:
                continue
            parts.append("  " + seg + "\n")
            size += len(seg) + 3
            if size >= target:
                return "class big {\n" + "".join(parts) + "}\n"
    return "class big {\n" + "".join(parts) + "}\n"


def _r(l0: int, c0: int, l1: int, c1: int) -> Msg:
    return {"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}}


def bench_file(path: str, text: str, edits: int) -> Msg:
    """All figures for one file (see the module docstring)."""
    lines = text.splitlines()
    out: Msg = {"file": path, "bytes": len(text.encode()), "lines": len(lines)}

    # full in-process reparse (+ validation), for comparison
    from puppet_xpp.grammar.parser import parse
    from puppet_xpp.grammar.validator import validate

    parse(text, path)
    ts = []
    for _ in range(10):
        t0 = time.perf_counter()
        r = parse(text, path)
        validate(r.program, file=path)
        ts.append((time.perf_counter() - t0) * 1000)
    out["full_parse_validate_ms_median"] = round(statistics.median(ts), 2)

    # start -> first diagnostics
    t0 = time.perf_counter()
    c = Client()
    uri = "file://" + path
    c.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "puppet", "version": 1, "text": text}},
    )
    c.diags(uri, 1)
    out["start_to_first_diagnostics_ms"] = round((time.perf_counter() - t0) * 1000, 1)

    # keystrokes in the middle of the file (by bytes) ...
    mid_line = len(text[: len(text) // 2].splitlines())
    pos_mid = [(mid_line + (k % 40) - 20, 0) for k in range(edits)]
    lats: dict[str, list[float]] = {}
    lats["middle"], v = keystrokes(c, uri, text, pos_mid, 1)
    # ... on code lines in the middle of the last top-level statement (the define's / class's body)
    starts = [i for i, l in enumerate(lines) if l[:1].isalpha()]
    last = starts[-1] if starts else 0
    opened = next((i for i in range(last, len(lines)) if lines[i].rstrip().endswith("{")), last)
    code_lines = [i for i, l in enumerate(lines) if l.strip() and not l.strip().startswith("#")]
    body = [i for i in code_lines if opened < i < len(lines) - 1]
    mid_body = body[len(body) // 2 - 20 : len(body) // 2 + 20] or body
    pos_code = [
        (mid_body[k % len(mid_body)], _indent(lines[mid_body[k % len(mid_body)]])) for k in range(edits)
    ]
    lats["code"], v = keystrokes(c, uri, text, pos_code, v)
    lats["break"], v = keystrokes(c, uri, text, pos_code, v, piece="(")
    n_typed = max(1, edits // 20)
    pos_type = [(line, len(lines[line])) for line, _ in pos_code[:n_typed]]
    piece = "\n  notice('x', [1, {a => 2}])"
    lats["typing"], v = typing(c, uri, pos_type, v, piece)
    # ... and at lines spread over the whole file (any line: comments, headers, the top level, bodies)
    spread: list[tuple[int, int]] = []
    for k in range(1, 6):
        i = len(lines) * k // 6
        while i < len(lines) - 1 and not lines[i].strip():
            i += 1
        spread.append((i, len(lines[i])))
    lats["spread"], v = typing(c, uri, spread, v, piece)
    if LINES:  # ... and at random lines (any line of the file)
        import random

        rnd = random.Random(20261127)
        picked = sorted(rnd.sample(range(len(lines)), min(LINES, len(lines))))
        lats["lines"], v = typing(c, uri, [(i, len(lines[i])) for i in picked], v, piece)
    header = [i for i in code_lines if last < i < opened]
    if header:
        pos_head = [(header[k % len(header)], _indent(lines[header[k % len(header)]])) for k in range(edits)]
        lats["header"], v = keystrokes(c, uri, text, pos_head, v)
    c.close()
    for name, lat in lats.items():
        out[f"keystroke_{name}_ms"] = {
            "n": len(lat),
            "p50": round(pct(lat, 50), 2),
            "p95": round(pct(lat, 95), 2),
            "max": round(max(lat), 2),
        }
    return out


# the server as pygls runs it, without the start-up front (server/lsp/startup.py): the anchor
DIRECT = [
    sys.executable,
    "-c",
    "import sys; from puppet_xpp.server.lsp.server import serve; sys.exit(serve())",
]


def start_once(cmd: list[str], path: str, text: str, env: dict[str, str]) -> tuple[float, float, float]:
    """One cold start of ``cmd``: (exec -> initialize answered, didOpen -> first diagnostics, exec ->
    the server loaded: a hover sent with the didOpen answered), in ms."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    c = Client.__new__(Client)
    c.proc, c.lock, c.msgs, c.next_id, c.t_start = proc, threading.Condition(), [], 0, t0
    threading.Thread(target=c._read, daemon=True).start()
    caps = {"window": {"workDoneProgress": True}, "textDocument": {"publishDiagnostics": {}}}
    m = c.request("initialize", {"processId": os.getpid(), "capabilities": caps})
    t_init = m["_t"] - t0
    c.notify("initialized", {})
    uri = "file://" + path
    t1 = time.perf_counter()
    c.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "puppet", "version": 1, "text": text}},
    )
    c.next_id += 1
    hid = c.next_id
    c._send(
        {
            "jsonrpc": "2.0",
            "id": hid,
            "method": "textDocument/hover",
            "params": {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}},
        }
    )
    got: dict[str, float] = {}

    def both(x: Msg) -> bool:
        if x.get("id") == hid and "method" not in x:
            got.setdefault("hover", x["_t"])
        elif x.get("method") == "textDocument/publishDiagnostics" and x["params"].get("version") == 1:
            got.setdefault("diagnostics", x["_t"])
        return len(got) == 2

    c.wait(both)
    c.close()
    return t_init * 1000, (got["diagnostics"] - t1) * 1000, (got["hover"] - t0) * 1000


def importtime(code: str) -> list[tuple[int, int, str]]:
    """``python -X importtime -c code``: (self us, cumulative us, module) of every import, slowest first."""
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=REPO),
    )
    rows = []
    for line in r.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[0].startswith("import time:") and parts[1].strip().isdigit():
            rows.append((int(parts[0].split(":")[1]), int(parts[1]), parts[2].strip()))
    return sorted(rows, key=lambda x: -x[1])


def compile_bytecode() -> None:
    """The package's bytecode compiled first, as an installed package has it (bench_compile.py and
    bench_index.py call it too): with ``PYTHONDONTWRITEBYTECODE`` set, a module edited since its ``.pyc`` was written
    would otherwise be compiled again by every start measured."""
    import compileall

    compileall.compile_dir(os.path.join(REPO, "puppet_xpp"), quiet=1)  # (its links: grammar, server, ...)


def startup_bench(path: str, text: str, runs: int) -> Msg:
    """Medians of ``runs`` cold starts through the front (the default) and without it (the anchor), one
    after the other, on a start-up cache of this run (filled by one start first), and the imports."""
    import tempfile

    compile_bytecode()
    out: Msg = {}
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as cache:
        env = dict(os.environ, PYTHONPATH=REPO, PUPPET_XPP_STARTUP_CACHE=cache, PUPPET_XPP_INDEX_CACHE="off")
        first = start_once(SERVER, path, text, env)  # (fills the start-up cache: initialize's answer)
        print(
            f"start-up, {os.path.basename(path)} ({len(text.encode())} bytes), medians of {runs} cold starts:"
        )
        print(f"  first start after an install (start-up cache empty): initialize {first[0]:.0f} ms")
        rows: dict[str, list[tuple[float, float, float]]] = {"front": [], "direct": []}
        for _ in range(runs):
            rows["front"].append(start_once(SERVER, path, text, env))
            rows["direct"].append(start_once(DIRECT, path, text, env))
        for name, label in (("direct", "without the front (anchor)"), ("front", "puppet-xpp (front)")):
            med = [statistics.median(r[i] for r in rows[name]) for i in range(3)]
            out[f"startup_{name}_ms"] = {
                "initialize": round(med[0]),
                "didopen_to_diagnostics": round(med[1]),
                "server_loaded": round(med[2]),
            }
            print(
                f"  {label:27} exec->initialize {med[0]:5.0f} ms   didOpen->diagnostics {med[1]:5.0f} ms"
                f"   exec->server loaded {med[2]:5.0f} ms   (load {' '.join(f'{x:.2f}' for x in os.getloadavg())})"
            )
    print("  targets (issue 31 item 1): initialize <= 300 ms, didOpen -> first diagnostics <= 150 ms")
    from puppet_xpp.server.lsp.startup import FRONT_MODULES

    server = importtime("import puppet_xpp.server.lsp.server")
    front = importtime("import puppet_xpp.server.cli.main, puppet_xpp.server.lsp.startup")
    # what the front's first diagnostics need on top (the loader imports them first: part of the server's)
    analysis = importtime(
        "import puppet_xpp.server.cli.main, puppet_xpp.server.lsp.startup; import " + ", ".join(FRONT_MODULES)
    )
    total = {m: c for _s, c, m in server}
    print(
        "  python -X importtime (cumulative ms):",
        ", ".join(
            f"{m} {total[m] / 1000:.0f}"
            for m in ("puppet_xpp.server.lsp.server", "lsprotocol.types", "pygls.lsp.server")
            if m in total
        ),
    )
    print(
        f"  the front's imports before it answers: {sum(c for _s, c, m in front if m in ('puppet_xpp.server.cli.main', 'puppet_xpp.server.lsp.startup')) / 1000:.0f} ms;"
        f" slowest of the server's: {', '.join(f'{m} {s / 1000:.0f}' for s, _c, m in sorted(server, key=lambda x: -x[0])[:6])} (self ms)"
    )
    tops = {m: c for _s, c, m in analysis if m in FRONT_MODULES}
    print(
        f"  the front's imports before its first diagnostics, on top: {sum(tops.values()) / 1000:.0f} ms"
        f" ({', '.join(f'{m.rsplit(chr(46), 1)[1]} {c / 1000:.0f}' for m, c in tops.items())})"
    )
    out["importtime_ms"] = {m: round(c / 1000, 1) for _s, c, m in server[:15]}
    out["front_analysis_imports_ms"] = round(sum(tops.values()) / 1000, 1)
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--file", action="append")
    ap.add_argument("--edits", type=int, default=100)
    ap.add_argument(
        "--lines", type=int, default=20, help="random lines typed at in the 'lines' scenario (0: none)"
    )
    ap.add_argument("--corpus", default="/usr/share/puppet/modules")
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--startup", type=int, default=5, help="cold starts per start-up figure (0: none)")
    ap.add_argument("--only-startup", action="store_true", help="the start-up figures alone")
    ap.add_argument("--no-big", action="store_true", help="skip the ~300 KB one-class manifest")
    ap.add_argument(
        "--lint", choices=["on", "off"], help="lint diagnostics on or off (default: the server's default, on)"
    )
    a = ap.parse_args(argv)
    global LINT, LINES
    LINT = None if a.lint is None else a.lint == "on"
    LINES = a.lines
    print(f"lint diagnostics: {a.lint or 'server default (on)'}")
    load_start = os.getloadavg()  # (the machine may be shared: the load is reported with the figures)
    files = [(f, open(f, encoding="utf-8").read()) for f in (a.file or [DEFAULT_FILE])]
    start: Msg = {}
    if a.startup:
        start = startup_bench(files[0][0], files[0][1], a.startup)
        if a.only_startup:
            print(json.dumps({**start, "loadavg_start": load_start, "loadavg": os.getloadavg()}))
            return 0
    tmp = None
    if not a.no_big and os.path.isdir(a.corpus):
        import tempfile

        tmp = tempfile.mkdtemp(prefix="bench-lsp-")
        big = os.path.join(tmp, "big.pp")
        text = build_one_class_manifest(a.corpus)
        with open(big, "w", encoding="utf-8") as f:
            f.write(text)
        files.append((big, text))
    results = []
    try:
        for path, text in files:
            out = bench_file(path, text, a.edits)
            results.append(out)
            print(f"{path}: {out['bytes']} bytes, {out['lines']} lines")
            print(f"  full parse+validate (in process): {out['full_parse_validate_ms_median']} ms")
            print(f"  start -> first diagnostics:       {out['start_to_first_diagnostics_ms']} ms")
            for k, v in out.items():
                if k.startswith("keystroke_"):
                    name = k[len("keystroke_") : -len("_ms")]
                    print(
                        f"  keystroke -> diagnostics, {name + ':':8s} p50 {v['p50']} ms, p95 {v['p95']} ms, "
                        f"max {v['max']} ms (n={v['n']})"
                    )
    finally:
        if tmp:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)

    mem: Msg = {}
    if not a.no_memory and os.path.isdir(a.corpus):
        path, text = files[0]
        uri = "file://" + path
        t0 = time.perf_counter()
        c = Client(root=a.corpus)
        c.wait(lambda m: m.get("method") == "window/logMessage" and "indexed" in m["params"]["message"], 900)
        mem["corpus_index_seconds"] = round(time.perf_counter() - t0, 1)
        mem["corpus_rss_mb"] = round(c.rss_mb(), 1)
        c.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "puppet", "version": 1, "text": text}},
        )
        c.diags(uri, 1)
        mem["corpus_rss_mb_with_file_open"] = round(c.rss_mb(), 1)
        c.close()
        print(
            f"  corpus workspace: indexed in {mem['corpus_index_seconds']} s, RSS {mem['corpus_rss_mb']} MB "
            f"({mem['corpus_rss_mb_with_file_open']} MB with {os.path.basename(path)} open)"
        )
    print(f"  load average (1/5/15 min): at start {load_start}, at end {os.getloadavg()}")
    print(
        json.dumps(
            {"files": results, **start, **mem, "loadavg_start": load_start, "loadavg": os.getloadavg()}
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
