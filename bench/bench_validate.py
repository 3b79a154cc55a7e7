#!/usr/bin/env python3
"""Validation throughput: puppet-xpp's static validator next to Puppet's, on the same files, in one run.

    python bench/bench_validate.py [--rounds N] [--modulepath DIRS] [--no-puppet] [PATH...]

PATH: files or directories (recursive *.pp / *.epp); default: the Debian module corpus with its module path
(/usr/share/puppet/modules), so the module-location checks run too. Both sides first parse every file (not
timed; files either parser rejects are left out of both), then validate all models N rounds (default 5); the
best round counts. Puppet's side is bench/puppet_validate.rb (Checker4_0 in-process, a fresh acceptor per
file). Prints one line per validator and the ratio ours/Puppet's throughput (>= 1.0: we are at least as fast).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from puppet_xpp.grammar.parser import parse  # noqa: E402
from puppet_xpp.grammar.validator import validate  # noqa: E402


def _files(paths):
    from puppet_xpp.server.cli.validate import collect_files

    return collect_files(paths)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--modulepath", default=None)
    ap.add_argument("--no-puppet", action="store_true", help="only time our validator")
    ns = ap.parse_args(argv)

    if ns.paths:
        files = _files(ns.paths)
        modulepath = [d for d in (ns.modulepath or "").split(os.pathsep) if d]
    else:
        from tests.conformance.corpus import corpus_files, corpus_modulepath

        files = corpus_files("pp") + corpus_files("epp")
        modulepath = (
            corpus_modulepath()
            if ns.modulepath is None
            else [d for d in ns.modulepath.split(os.pathsep) if d]
        )
    if not files:
        print("no files", file=sys.stderr)
        return 2

    models = []
    kept = []
    nbytes = 0
    for f in files:
        with open(f, "rb") as fh:
            data = fh.read()
        res = parse(data.decode("utf-8", "surrogateescape"), file=f, epp=f.endswith(".epp"))
        if res.program is None or any(d.severity == "error" for d in res.diagnostics):
            continue
        models.append((f, res.program))
        kept.append(f)
        nbytes += len(data)

    times = []
    count = 0
    for _ in range(ns.rounds):
        gc.collect()
        count = 0
        t0 = time.perf_counter()
        for f, prog in models:
            count += len(validate(prog, file=f, modulepath=modulepath))
        times.append(time.perf_counter() - t0)
    best = min(times)
    ours = {
        "validator": "puppet-xpp",
        "files": len(models),
        "bytes": nbytes,
        "rounds": ns.rounds,
        "diagnostics": count,
        "best_s": round(best, 6),
        "mean_s": round(sum(times) / len(times), 6),
        "files_per_s": round(len(models) / best, 1),
    }
    print(json.dumps(ours))

    if ns.no_puppet:
        return 0
    with tempfile.NamedTemporaryFile("w", suffix=".lst", delete=False) as lst:
        lst.write("\n".join(kept) + "\n")
    try:
        cmd = [
            "ruby",
            os.path.join(REPO, "bench", "puppet_validate.rb"),
            "--rounds",
            str(ns.rounds),
            "--modulepath",
            os.pathsep.join(modulepath),
            "@" + lst.name,
        ]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
    finally:
        os.unlink(lst.name)
    theirs = json.loads(out)
    theirs = {"validator": "puppet 7 (Checker4_0)", **theirs}
    print(json.dumps(theirs))
    ratio = theirs["best_s"] / best if best else float("inf")
    print(
        json.dumps(
            {
                "ratio_ours_over_puppet": round(ratio, 3),
                "target": 1.0,
                "diagnostics_equal": ours["diagnostics"] == theirs["diagnostics"],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
