#!/usr/bin/env python3
"""Completion while typing, and the keystroke that first breaks a large body, in a big manifest,
measured through the real protocol (stdio JSON-RPC; issue 31 item 3).

    python3 bench/bench_completion.py [--corpus DIR] [--bytes N] [--rounds N]

The manifest is one class of ~N bytes (292 KB by default) built like bench/bench_lsp.py's, but from the
corpus's modules taken last one first, so the text is not the one bench_lsp.py measures.

* ``completion``: a resource typed character by character in the middle of the class body
  (``file { '/tmp/x':`` newline ``ensure => present,`` ...); after each keystroke (didChange) a
  completion request at the cursor is sent at once; the figure is didChange sent -> completion
  answered (the request does not wait for the keystroke's analysis);
* ``first_break``: an open quote or an open brace typed at a code line in the middle of the body (the
  body breaks there), -> its diagnostics published; deleted again after each;
  (``first_break_quote_ms`` / ``first_break_brace_ms``: each kind apart; ``first_break_cpu_ms``: the
  server process's CPU time (its threads' run time, /proc) from the change to its diagnostics, per
  break: mean, p95 and max of each kind, figures that load on the machine barely moves, unlike the
  wall times);
* ``keystroke``: one-character edits at those lines -> diagnostics (the p95 ≤ 16 ms figure);
* the anchor: the in-process full parse + validation of the same text, from the same run;
* ``names_ms`` (``--names``): a completion after ``stdlib::`` in a small manifest of a workspace of the
  corpus's modules (~1,290 items: every name the workspace and the core define; the client filters
  them), asked 20 times, with the bench's client capabilities (no completion capabilities: every item
  carries its edit and documentation) and with a current client's (``itemDefaults.editRange``,
  documentation resolved later, snippets: VS Code, Neovim 0.11); the item count and bytes beside.
Prints p50/p95/max of each, the load average, the command, and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "bench"))
sys.path.insert(0, REPO)

from bench_lsp import Client, Msg, _r, build_one_class_manifest, pct  # noqa: E402

RESOURCE = "file { '/tmp/xpp_bench':\n    ensure => present,\n    owner  => 'root',\n  }\n  "


def build_manifest(corpus: str, target: int) -> str:
    """One class of ~target bytes made like bench_lsp.py's, from the corpus's modules taken last one
    first (a directory of links to them, named in reverse order), so not the text bench_lsp.py
    measures."""
    mods = sorted(m for m in os.listdir(corpus) if os.path.isdir(os.path.join(corpus, m, "manifests")))
    with tempfile.TemporaryDirectory(prefix="xpp-bench-") as tmp:
        for k, m in enumerate(reversed(mods)):
            os.symlink(os.path.join(corpus, m), os.path.join(tmp, f"{k:05d}-{m}"))
        return build_one_class_manifest(tmp, target)


def full_ms(text: str, path: str) -> float:
    """The anchor: one in-process parse + validation of the whole text, in ms."""
    from puppet_xpp.grammar.parser import parse
    from puppet_xpp.grammar.validator import validate

    t0 = time.perf_counter()
    validate(parse(text, path).program, file=path)
    return (time.perf_counter() - t0) * 1000


def cpu_ms(pid: int) -> float:
    """The process' CPU time so far (all its threads), in ms: the sum of its threads' run times from
    /proc/PID/task/*/schedstat (nanoseconds: one break's CPU is ~10 ms, the clock ticks of /proc/PID/stat
    are 10 ms), else user + system from /proc/PID/stat, else 0 (no /proc)."""
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue  # (a thread that ended meanwhile)
        if total:
            return total / 1e6
    except OSError:
        pass
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def stats(xs: list[float]) -> Msg:
    return {
        "n": len(xs),
        "p50": round(pct(xs, 50), 2),
        "p95": round(pct(xs, 95), 2),
        "max": round(max(xs), 2),
    }


def change(c: Client, uri: str, version: int, line: int, col: int, end: tuple[int, int], text: str) -> float:
    t0 = time.perf_counter()
    c.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": _r(line, col, end[0], end[1]), "text": text}],
        },
    )
    return t0


# a current client's completion capabilities (VS Code, Neovim 0.11): the edit range once per list, the
# documentation resolved when an item is selected
CURRENT_CLIENT: Msg = {
    "completion": {
        "completionItem": {"snippetSupport": True, "resolveSupport": {"properties": ["documentation"]}},
        "completionList": {"itemDefaults": ["editRange", "insertTextFormat", "data"]},
    }
}


class NamesClient(Client):
    """The bench's client, with ``extra`` text document capabilities in its initialize."""

    def __init__(self, root: str, extra: Msg) -> None:
        self.extra = extra
        super().__init__(root)

    def request(self, method: str, params: Any, timeout: float = 120) -> Msg:
        if method == "initialize":
            caps = dict(params["capabilities"])
            caps["textDocument"] = {**caps["textDocument"], **self.extra}
            params = dict(params, capabilities=caps)
        return super().request(method, params, timeout)


def names(root: str, extra: Msg, times: int = 20) -> Msg:
    """A completion after ``stdlib::`` in a small manifest of the workspace ``root``, once indexed."""
    c = NamesClient(root, extra)
    c.wait(lambda m: m.get("method") == "window/logMessage" and "indexed" in m["params"]["message"], 600)
    with tempfile.TemporaryDirectory(prefix="xpp-bench-names-") as tmp:
        uri = "file://" + os.path.join(tmp, "names.pp")
        text = "class names {\n  stdlib::\n}\n"
        c.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "puppet", "version": 1, "text": text}},
        )
        c.diags(uri, 1)
        took: list[float] = []
        for _ in range(times):
            t0 = time.perf_counter()
            m = c.request(
                "textDocument/completion",
                {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 10}},
            )
            took.append((m["_t"] - t0) * 1000)
    c.close()
    result = m.get("result") or {}
    items = result.get("items", []) if isinstance(result, dict) else result
    return {**stats(took), "items": len(items), "bytes": len(json.dumps(result))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="/usr/share/puppet/modules")
    ap.add_argument("--bytes", type=int, default=292_000)
    ap.add_argument("--rounds", type=int, default=3, help="resources typed (at different lines)")
    ap.add_argument(
        "--names", action="store_true", help="also the stdlib:: completion in the corpus's workspace"
    )
    args = ap.parse_args(argv)
    text = build_manifest(args.corpus, args.bytes)
    lines = text.splitlines()
    path = "/tmp/xpp_bench_completion/big.pp"
    out: Msg = {"bytes": len(text.encode()), "lines": len(lines), "load_before": os.getloadavg()}

    out["full_parse_validate_ms_median"] = round(statistics.median(full_ms(text, path) for _ in range(5)), 2)

    c, uri = Client(), "file://" + path
    opened = {"uri": uri, "languageId": "puppet", "version": 1, "text": text}
    c.notify("textDocument/didOpen", {"textDocument": opened})
    c.diags(uri, 1)
    v = 1
    # code lines in the middle of the body: statement starts (indented two spaces, a word)
    mid = len(lines) // 2
    starts = [i for i in range(mid - 400, mid + 400) if lines[i].startswith("  ") and lines[i][2:3].isalpha()]
    comp: list[float] = []
    wrong: list[str] = []
    for k in range(args.rounds):
        line = starts[(k * 7) % len(starts)]
        ln, col = line, 2
        for ch in RESOURCE:
            v += 1
            t0 = change(c, uri, v, ln, col, (ln, col), ch)
            if ch == "\n":
                ln, col = ln + 1, 0
            else:
                col += 1
            m = c.request(
                "textDocument/completion",
                {"textDocument": {"uri": uri}, "position": {"line": ln, "character": col}},
            )
            comp.append((m["_t"] - t0) * 1000)
            if ch == "w" and not any(
                it["label"] == "owner" for it in (m.get("result") or {}).get("items", [])
            ):
                wrong.append(f"no 'owner' at {ln}:{col}")
        c.diags(uri, v)
        # delete it again in one change (back to the original text)
        v += 1
        change(c, uri, v, line, 2, (ln, col), "")
        c.diags(uri, v)
    out["completion_ms"] = stats(comp)
    out["completion_wrong"] = wrong
    brk: list[float] = []
    keys: list[float] = []
    kinds: dict[str, list[float]] = {"'": [], "{": []}
    cpu: dict[str, list[float]] = {"'": [], "{": []}
    for i in starts[:30]:
        for piece in ("'", "{", "x"):
            v += 1
            c0 = cpu_ms(c.proc.pid)
            t0 = change(c, uri, v, i, 2, (i, 2), piece)
            m = c.diags(uri, v)
            took = (m["_t"] - t0) * 1000
            (keys if piece == "x" else brk).append(took)
            if piece in kinds:
                kinds[piece].append(took)
                cpu[piece].append(cpu_ms(c.proc.pid) - c0)
            v += 1
            t0 = change(c, uri, v, i, 2, (i, 3), "")
            m = c.diags(uri, v)
            keys.append((m["_t"] - t0) * 1000)
    c.close()
    out["first_break_ms"] = stats(brk)
    out["first_break_quote_ms"] = stats(kinds["'"])
    out["first_break_brace_ms"] = stats(kinds["{"])
    out["first_break_cpu_ms"] = {
        "quote": round(sum(cpu["'"]) / max(1, len(cpu["'"])), 1),
        "brace": round(sum(cpu["{"]) / max(1, len(cpu["{"])), 1),
        # (each break's: the load on the machine barely moves them, unlike the wall times)
        "quote_p95": round(pct(cpu["'"], 95), 1),
        "quote_max": round(max(cpu["'"]), 1),
        "brace_p95": round(pct(cpu["{"], 95), 1),
        "brace_max": round(max(cpu["{"]), 1),
    }
    out["keystroke_ms"] = stats(keys)
    if args.names:
        out["names_ms"] = names(args.corpus, {})
        out["names_current_client_ms"] = names(args.corpus, CURRENT_CLIENT)
    out["load_after"] = os.getloadavg()
    out["command"] = "python3 bench/bench_completion.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    print(
        f"{out['bytes']} bytes, {out['lines']} lines; full parse + validate {out['full_parse_validate_ms_median']} ms (anchor)"
    )
    names_ = (
        "completion_ms",
        "first_break_ms",
        "first_break_quote_ms",
        "first_break_brace_ms",
        "keystroke_ms",
    )
    for name in (*names_, "names_ms", "names_current_client_ms"):
        if name not in out:
            continue
        s = out[name]
        size = f"  {s['items']} items, {s['bytes']} bytes" if "items" in s else ""
        print(f"  {name:20} n={s['n']:4} p50 {s['p50']:7.2f}  p95 {s['p95']:7.2f}  max {s['max']:7.2f}{size}")
    fc = out["first_break_cpu_ms"]
    print(
        f"  first_break_cpu_ms   server CPU per break: quote {fc['quote']} ms, brace {fc['brace']} ms (mean);"
        f" quote p95 {fc['quote_p95']} / max {fc['quote_max']}, brace p95 {fc['brace_p95']} / max {fc['brace_max']}"
    )
    if wrong:
        print("  completion WRONG:", wrong[:5])
    print(f"  load {out['load_before']} -> {out['load_after']}; command: {out['command']}")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
