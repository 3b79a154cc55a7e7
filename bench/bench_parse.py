"""Parse throughput: puppet-xpp next to Puppet 7's own parser, on the same files, in the same run.

    python bench/bench_parse.py [--rounds N] [FILE...]      (default: the Debian module corpus)

Prints one table: bytes, best wall time of N rounds, MB/s for each, the ratio ours/Puppet's, and our peak
memory (RSS high-water mark of this process). Puppet is measured in-process by bench/puppet_parse.rb
(parser only, no validation), so process start-up is excluded on both sides.  Ours is measured twice, with
the C accelerator (grammar/_accel.c: the lexer's fast path and the LR loop, when built) and with the pure
Python paths (what PUPPET_XPP_PURE_PYTHON=1 runs), in alternate order from round to round; the command and
the 1-minute load average (before and after) are printed with the figures.  Then where our time goes, for
both paths (CPU, best of N, the collector paused as parse() pauses it): the lexer, the LR driver with its
reductions and fix_positions, fix_positions alone, the Locator (line index), and what a parse() costs
beyond them (the collector's passes when it comes back, the builder, the result).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from puppet_xpp.grammar import lexer, parser  # noqa: E402
from puppet_xpp.grammar.parser import parse, tables  # noqa: E402
from tests.conformance.corpus import corpus_files  # noqa: E402


def ours(files, rounds):
    """(bytes, best seconds with the accelerator, best seconds with the pure paths); the two alternate."""
    texts = []
    for f in files:
        with open(f, "rb") as fh:
            texts.append((f, fh.read().decode("utf-8", "surrogateescape")))
    tables()  # grammar tables are built once per process; not part of the per-file cost
    total = sum(len(t.encode("utf-8", "surrogateescape")) for _, t in texts)
    scan, accelerator = lexer.SCAN, parser.ACCELERATOR
    best = {True: float("inf"), False: float("inf")}
    for r in range(rounds):
        for accelerated in (True, False) if r % 2 == 0 else (False, True):
            lexer.SCAN = scan if accelerated else None
            parser.ACCELERATOR = accelerator if accelerated else "Python"
            gc.collect()
            t0 = time.perf_counter()
            for f, t in texts:
                parse(t, f)
            best[accelerated] = min(best[accelerated], time.perf_counter() - t0)
    lexer.SCAN, parser.ACCELERATOR = scan, accelerator
    return total, best[True], best[False]


def split(files, rounds):
    """{path: {part: best CPU seconds}} for the accelerated and the pure paths (see the module doc)."""
    from puppet_xpp.grammar import ast
    from puppet_xpp.grammar.gcpause import paused

    texts = []
    for f in files:
        with open(f, "rb") as fh:
            texts.append((f, fh.read().decode("utf-8", "surrogateescape")))

    def best(fn):
        b = float("inf")
        for _ in range(rounds):
            gc.collect()
            t0 = time.process_time()
            with paused():
                fn()
            b = min(b, time.process_time() - t0)
        return b

    scan, accelerator, fix = lexer.SCAN, parser.ACCELERATOR, parser.fix_positions
    out = {}
    for accelerated in (True, False):
        lexer.SCAN = scan if accelerated else None
        parser.ACCELERATOR = accelerator if accelerated else "Python"
        locators = [ast.make_locator(t, f) for f, t in texts]
        tokens = [lexer.Lexer(t).tokens() for _, t in texts]

        def lr(locators=locators, tokens=tokens):
            for loc, tk in zip(locators, tokens):
                parser.parse_lexed(loc, tk, [])

        parts = {
            "parse(), all of it": float("nan"),
            "lexer": best(lambda: [lexer.Lexer(t).tokens() for _, t in texts]),  # noqa: B023
            "LR driver + reductions + fix_positions": best(lr),
        }
        parser.fix_positions = lambda *a, **k: None
        parts["  of which fix_positions"] = parts["LR driver + reductions + fix_positions"] - best(lr)
        parser.fix_positions = fix
        parts["Locator (line index)"] = best(lambda: [ast.make_locator(t, f) for f, t in texts])  # noqa: B023
        whole = float("inf")
        for _ in range(rounds):
            gc.collect()
            t0 = time.process_time()
            for f, t in texts:
                parse(t, f)
            whole = min(whole, time.process_time() - t0)
        parts["parse(), all of it"] = whole
        parts["  beyond the parts (collector, builder, result)"] = (
            whole
            - parts["lexer"]
            - parts["LR driver + reductions + fix_positions"]
            - parts["Locator (line index)"]
        )
        out["C" if accelerated else "Python"] = parts
    lexer.SCAN, parser.ACCELERATOR = scan, accelerator
    return out


def puppet(files, rounds):
    listing = os.path.join(ROOT, ".cache", "bench-files.txt")
    os.makedirs(os.path.dirname(listing), exist_ok=True)
    with open(listing, "w") as fh:
        fh.write("\n".join(files) + "\n")
    out = subprocess.run(
        ["ruby", os.path.join(ROOT, "bench", "puppet_parse.rb"), "--rounds", str(rounds), "@" + listing],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    data = json.loads(out.strip().splitlines()[-1])
    return data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    files = a.files or corpus_files("pp")
    if not files:
        sys.exit("no files (install the corpus or pass files)")
    load0 = os.getloadavg()[0]
    nbytes, t_ours, t_pure = ours(files, a.rounds)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    p = puppet(files, a.rounds)
    load1 = os.getloadavg()[0]
    t_p = p["best_s"]
    mbs_p = p["bytes"] / t_p / 1e6
    print("command: python3 " + " ".join(sys.argv))
    print(f"files: {len(files)}   bytes: {nbytes}   rounds: {a.rounds} (best of)")
    print(f"load average (1 min): {load0:.2f} before, {load1:.2f} after")
    print(f"{'':30}{'seconds':>10}{'MB/s':>10}{'x Puppet':>10}")
    rows = [
        (f"puppet-xpp ({parser.ACCELERATOR})", t_ours),
        ("puppet-xpp (Python)", t_pure),
        ("Puppet 7", t_p),
    ]
    for name, t in rows:
        mbs = (nbytes if name != "Puppet 7" else p["bytes"]) / t / 1e6
        print(f"{name:30}{t:10.3f}{mbs:10.2f}{mbs / mbs_p:10.2f}")
    print(f"ratio (ours / Puppet): {nbytes / t_ours / 1e6 / mbs_p:.2f}")
    print(f"peak RSS of the puppet-xpp process: {rss_mb:.0f} MB")
    parts = split(files, a.rounds)
    print(f"where our time goes (CPU s, best of {a.rounds}; load {os.getloadavg()[0]:.2f}):")
    print(f"{'':50}{'C':>10}{'Python':>10}")
    for name in parts["C"]:
        print(f"{name:50}{parts['C'][name]:10.3f}{parts['Python'][name]:10.3f}")


if __name__ == "__main__":
    main()
