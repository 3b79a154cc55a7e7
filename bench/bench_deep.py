#!/usr/bin/env python3
"""What the deep checks (issue 30: server/lsp/deep.py) add to a keystroke, measured through the real
protocol (stdio JSON-RPC) as bench/bench_lsp.py measures the analysis.

    python3 bench/bench_deep.py [--file PATH ...] [--edits N] [--rounds N] [--corpus DIR] [--no-big]

One server on the corpus as its workspace (so that the deep checks have the whole index: every module
the file names), for FILE (apache's vhost.pp by default) and the ~300 KB one-class manifest bench_lsp.py
builds (``--no-big`` leaves it out).  The deep checks are turned on and off by the setting
(``workspace/didChangeConfiguration``, ``deepChecks.enabled``) in alternating rounds of the same edits,
so that both figures come from the same run, the same server and the same load:

* keystroke -> published diagnostics, p50/p95/max, with and without the deep checks, for one-character
  edits (insert, then delete again) at code lines in the middle of the file's last top-level statement
  (``code``), and a statement typed at the end of such a line character by character and deleted again
  (``typing``): ``first``, the first publish of the keystroke's version (what the editor shows at once:
  with the deep checks on it waits for the version's deep findings at most server/lsp/deep.py's
  ``HOLD``, else carries the last ones over), and ``deep_in``, its last publish (its own deep findings
  in: no other publish of the version for ``--settle`` seconds, 0.25 by default);
* the difference of the p50s and of the p95s (what the deep checks add);
* the load average at the start and the end (the machine may be shared).

Prints a human summary and one JSON line.

``--in-process``: no server; the same edits (``code`` and ``typing``) applied to the language server's
incremental parser in this process, and for each keystroke the CPU time of its parts: the update, the
validation, the Program's upkeep (``program``: positions and definitions brought up to date, what the
deep checks' first read costs) and the deep engine's check (server/analysis/deep/engine.py with the
memo carried from keystroke to keystroke, as server/lsp/deep.py runs it), p50/p95/max; CPU time, so
that a loaded machine changes the figures less than it changes latencies.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_lsp  # noqa: E402  (the protocol client and the edits of the analysis' benchmark)
from bench_lsp import Client, build_one_class_manifest, pct  # noqa: E402

Msg = dict[str, Any]


def set_deep(c: Client, on: bool) -> None:
    c.notify("workspace/didChangeConfiguration", {"settings": {"puppet": {"deepChecks": {"enabled": on}}}})


def positions(text: str, count: int) -> list[tuple[int, int]]:
    """(line, indentation) of ``count`` code lines inside a body (indented, not a comment), taken in turn
    from the 40 around the middle of the file's such lines: where bench_lsp.py's ``code`` edits are in
    vhost.pp and the one-class manifest, whose bodies are one statement's."""
    lines = text.splitlines()
    inside = [
        (i, len(line) - len(line.lstrip()))
        for i, line in enumerate(lines)
        if line[:1] in (" ", "\t") and line.strip() and not line.lstrip().startswith("#")
    ]
    middle = inside[max(0, len(inside) // 2 - 20) : len(inside) // 2 + 20]
    return [middle[k % len(middle)] for k in range(count)]


def edits(
    c: Client, uri: str, changes: list[Msg], after: int, settle: float
) -> tuple[list[float], list[float], int]:
    """Each change sent as one didChange; for each, the time to the first publish of its version (what
    the editor shows at once) and to the last one (its deep findings in: no other publish of it for
    ``settle`` seconds); in ms, and the last version sent."""
    first: list[float] = []
    last: list[float] = []
    version = after
    for version, change in enumerate(changes, after + 1):
        sent = time.perf_counter()
        document = {"uri": uri, "version": version}
        c.notify("textDocument/didChange", {"textDocument": document, "contentChanges": [change]})
        times = [c.diags(uri, version)["_t"]]
        while True:  # (its other publishes: the last has its deep findings)
            try:
                times.append(c.diags(uri, version, timeout=settle)["_t"])
            except TimeoutError:
                break
        first.append((times[0] - sent) * 1000)
        last.append((times[-1] - sent) * 1000)
    return first, last, version


def one_char(at: list[tuple[int, int]]) -> list[Msg]:
    """An "x" typed and deleted again at each (line, column)."""
    out: list[Msg] = []
    for line, col in at:
        out.append({"range": span(line, col, line, col), "text": "x"})
        out.append({"range": span(line, col, line, col + 1), "text": ""})
    return out


def typed(line: int, col: int, piece: str) -> list[Msg]:
    """``piece`` typed at (line, col) character by character, then deleted character by character."""
    out: list[Msg] = []
    ln, at = line, col
    for ch in piece:
        out.append({"range": span(ln, at, ln, at), "text": ch})
        ln, at = (ln + 1, 0) if ch == "\n" else (ln, at + 1)
    for ch in reversed(piece):
        if ch == "\n":
            out.append({"range": span(ln - 1, 10**6, ln, 0), "text": ""})
            ln, at = ln - 1, col
        else:
            out.append({"range": span(ln, at - 1, ln, at), "text": ""})
            at -= 1
    return out


def span(l0: int, c0: int, l1: int, c1: int) -> Msg:
    return {"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}}


def bench_file(c: Client, path: str, text: str, count: int, rounds: int, settle: float) -> Msg:
    uri = "file://" + path
    c.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "puppet", "version": 1, "text": text}},
    )
    opened = c.diags(uri, 1)
    deep_seen = [d for d in opened["params"]["diagnostics"] if d.get("source") == "puppet-xpp-deep"]
    at = positions(text, count)
    per_round = max(1, count // rounds)
    lines = text.splitlines()
    lats: dict[str, dict[bool, list[float]]] = {
        f"{scenario}_{when}": {True: [], False: []}
        for scenario in ("code", "typing")
        for when in ("first", "deep_in")
    }
    version = 1
    piece = "\n  notice('x', [1, {a => 2}])"
    for r in range(rounds):
        for on in (r % 2 == 0, r % 2 != 0):  # (alternating which goes first)
            set_deep(c, on)
            time.sleep(0.5)  # (the re-publish of the open document the setting causes)
            while True:  # (drained)
                try:
                    c.diags(uri, version, timeout=0.2)
                except TimeoutError:
                    break
            chunk = at[r * per_round : (r + 1) * per_round] or at[:per_round]
            first, last, version = edits(c, uri, one_char(chunk), version, settle)
            lats["code_first"][on] += first
            lats["code_deep_in"][on] += last
            line = chunk[0][0]
            first, last, version = edits(c, uri, typed(line, len(lines[line]), piece), version, settle)
            lats["typing_first"][on] += first
            lats["typing_deep_in"][on] += last
    c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    out: Msg = {"file": path, "bytes": len(text.encode()), "deep_findings_at_open": len(deep_seen)}
    for name, by in lats.items():
        row: Msg = {}
        for on, lat in by.items():
            row["with_deep" if on else "without_deep"] = {
                "n": len(lat),
                "p50": round(pct(lat, 50), 2),
                "p95": round(pct(lat, 95), 2),
                "max": round(max(lat), 2),
            }
        row["added_p50"] = round(row["with_deep"]["p50"] - row["without_deep"]["p50"], 2)
        row["added_p95"] = round(row["with_deep"]["p95"] - row["without_deep"]["p95"], 2)
        out[f"keystroke_{name}_ms"] = row
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--file", action="append")
    ap.add_argument(
        "--edits", type=int, default=100, help="one-character edits per mode (each: insert + delete)"
    )
    ap.add_argument("--rounds", type=int, default=10, help="alternations of the setting")
    ap.add_argument("--corpus", default="/usr/share/puppet/modules")
    ap.add_argument(
        "--settle", type=float, default=0.25, help="seconds without a publish of a version: its last publish"
    )
    ap.add_argument("--no-big", action="store_true", help="skip the ~300 KB one-class manifest")
    ap.add_argument(
        "--in-process", action="store_true", help="CPU time of each part of a keystroke, no server"
    )
    a = ap.parse_args(argv)
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-deep-") as tmp:
        files = [pathlib.Path(f) for f in (a.file or [bench_lsp.DEFAULT_FILE])]
        if not a.no_big and os.path.isdir(a.corpus):  # (bench_lsp.py's second file)
            files.append(pathlib.Path(tmp, "big.pp"))
            files[-1].write_text(build_one_class_manifest(a.corpus), encoding="utf-8")
        results = [in_process(f, a) for f in files] if a.in_process else run(files, a)
    print(f"  load average (1/5/15 min): at start {load_start}, at end {os.getloadavg()}")
    print(json.dumps({"files": results, "loadavg_start": load_start, "loadavg": os.getloadavg()}))
    return 0


def run(files: list[pathlib.Path], a: argparse.Namespace) -> list[Msg]:
    """The figures of each file, from one server on the corpus."""
    results = []
    c = Client(root=a.corpus)
    try:
        t0 = time.perf_counter()
        c.wait(lambda m: m.get("method") == "window/logMessage" and "indexed" in m["params"]["message"], 900)
        print(f"corpus indexed in {time.perf_counter() - t0:.1f} s (load {os.getloadavg()[0]:.1f})")
        for file in files:
            out = bench_file(c, str(file), file.read_text(encoding="utf-8"), a.edits, a.rounds, a.settle)
            out["loadavg"] = os.getloadavg()
            results.append(out)
            report(out)
    finally:
        c.close()
    return results


def in_process(file: pathlib.Path, a: argparse.Namespace) -> Msg:
    """The CPU time of each part of a keystroke in this process (see the module docstring)."""
    from puppet_xpp.grammar.check import CheckConfig
    from puppet_xpp.grammar.incremental import IncrementalParser
    from puppet_xpp.server.analysis.deep import (
        BodyMemo,
        Place,
        file_findings,
        statement_findings,
        top_statements,
    )
    from puppet_xpp.server.analysis.deep.worlds import WorldCache
    from puppet_xpp.xpp.environment import FileContext

    text = file.read_text(encoding="utf-8")
    # (the one-class manifest is checked as a module's of the corpus, as the server sees it there)
    big = file.name == "big.pp" and file.parent.name.startswith("bench-deep-")
    path = os.path.join(a.corpus, "big", "manifests", "init.pp") if big else str(file)
    world = WorldCache().world_for(FileContext(path, modulepath=(a.corpus,)))
    parser = IncrementalParser(text, CheckConfig(file=path))
    kept: dict[str, Any] = {"parts": {}, "judged": {}}

    def deep() -> None:
        program = parser.program
        memo = BodyMemo(parser.data, ("stamp",), kept["parts"])
        memo.judged_before = kept["judged"]
        place = Place(path, complete=world.complete)
        results = [statement_findings(s, place, world, memo) for s in top_statements(program)]
        kept["parts"], kept["judged"] = memo.used, memo.judged
        file_findings(results, program, path, program.locator.line_for_offset)

    parser.update()
    parser.validation_diagnostics()
    deep()
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line.encode()) + 1)
    cpu: dict[str, list[float]] = {
        "update": [],
        "validate": [],
        "program": [],
        "deep": [],
        "program+deep": [],
    }
    lines = text.splitlines()
    at = positions(text, a.edits)
    changes = one_char(at) + typed(at[0][0], len(lines[at[0][0]]), "\n  notice('x', [1, {a => 2}])")
    for change in changes:
        (l0, c0), (l1, c1) = (
            (r["line"], r["character"]) for r in (change["range"]["start"], change["range"]["end"])
        )
        lo = min(starts[l0] + c0, starts[l0 + 1] - 1)
        hi = min(starts[l1] + c1, starts[l1 + 1] - 1) if l1 + 1 < len(starts) else starts[l1] + c1
        parser.edit(lo, hi, change["text"])
        t0 = time.process_time()
        parser.update()
        t1 = time.process_time()
        parser.validation_diagnostics()
        t2 = time.process_time()
        parser.program  # noqa: B018  (its upkeep: what the deep checks' first read of it costs)
        t3 = time.process_time()
        deep()
        t4 = time.process_time()
        for name, ms in zip(cpu, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t2)):
            cpu[name].append(ms * 1000)
        starts = [0]
        for line in parser.data.decode("utf-8", "surrogateescape").split("\n"):
            starts.append(starts[-1] + len(line.encode("utf-8", "surrogateescape")) + 1)
    out: Msg = {
        "file": str(file),
        "bytes": len(text.encode()),
        "keystrokes": len(changes),
        "loadavg": os.getloadavg(),
    }
    print(
        f"{file}: {out['bytes']} bytes, {len(changes)} keystrokes in process (CPU ms; load {out['loadavg'][0]:.1f})"
    )
    for name, xs in cpu.items():
        row = {"p50": round(pct(xs, 50), 2), "p95": round(pct(xs, 95), 2), "max": round(max(xs), 2)}
        out[f"cpu_{name}_ms"] = row
        print(f"  {name:13s} p50 {row['p50']} / p95 {row['p95']} / max {row['max']} ms")
    return out


def report(out: Msg) -> None:
    print(f"{out['file']}: {out['bytes']} bytes, {out['deep_findings_at_open']} deep findings at open")
    for key, row in out.items():
        if key.startswith("keystroke_"):
            name = key[len("keystroke_") : -len("_ms")]
            on, off = row["with_deep"], row["without_deep"]
            print(
                f"  keystroke -> diagnostics, {name + ':':15s} with deep p50 {on['p50']} / p95 {on['p95']} ms,"
                f" without p50 {off['p50']} / p95 {off['p95']} ms: added p50 {row['added_p50']} ms,"
                f" p95 {row['added_p95']} ms (n={on['n']}+{off['n']}; load {out['loadavg'][0]:.1f})"
            )


if __name__ == "__main__":
    sys.exit(main())
