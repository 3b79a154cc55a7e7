#!/usr/bin/env python3
"""Loading an .xpp next to parsing + validating the same .pp, in puppet-xpp, and the .xpp/.pp size ratio.

    python bench/bench_xpp.py [--rounds N] [--format msgpack|json|both] [PATH...]

PATH: files or directories (recursive *.pp / *.epp); default: the Debian module corpus with its module path.
For every file the .xpp document is made first (not timed: parse + validate + ``write_xpp``, as
``--compile`` writes it).  Then, N rounds (default 5, the best round counts; the two sides alternate within
a round so that machine load hits both alike):

* parse + validate: ``grammar.parser.parse`` + ``grammar.validator.validate`` of the source text;
* load: ``xpp.result.read_xpp`` of the .xpp bytes (envelope, Pcore payload, AST objects, diagnostics).
  For msgpack, ``xpp.pcore.loads`` uses the C reader ``xpp._fastload`` when it is built (the line says which
  reader ran); when it is, the Python reader is timed too, on a line of its own.

Both sides start from bytes in memory (decoding the source text is counted on the parse side).  Printed:
seconds per round, MB/s of source, the speed-up, and the sizes: the .xpp documents and the bare Program
serializations (byte-identical to Puppet's own serializer output, see tests/test_pcore_puppet.py) over the
sources.
CPU time (``time.process_time``) is measured, not wall time, as the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from puppet_xpp.grammar.parser import parse  # noqa: E402
from puppet_xpp.grammar.validator import validate  # noqa: E402
from puppet_xpp.xpp import pcore  # noqa: E402
from puppet_xpp.xpp.result import read_xpp, write_xpp  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--format", choices=("msgpack", "json", "both"), default="both")
    ap.add_argument("--modulepath", default=None)
    ns = ap.parse_args(argv)
    if ns.paths:
        from puppet_xpp.server.cli.validate import collect_files

        files = collect_files(ns.paths)
        modulepath = [d for d in (ns.modulepath or "").split(os.pathsep) if d]
    else:
        from tests.conformance.corpus import corpus_files, corpus_modulepath

        files = corpus_files("pp") + corpus_files("epp")
        modulepath = corpus_modulepath()
    if not files:
        print("no files", file=sys.stderr)
        return 2
    fmts = ("msgpack", "json") if ns.format == "both" else (ns.format,)

    sources, docs = [], {f: [] for f in fmts}
    bare = {f: 0 for f in fmts}
    for path in files:
        with open(path, "rb") as fh:
            data = fh.read()
        text = data.decode("utf-8", "surrogateescape")
        r = parse(text, path)
        diags = list(r.diagnostics)
        if r.program is not None:
            diags += validate(r.program, file=path, modulepath=modulepath)
        program = None if any(d.severity == "error" for d in diags) else r.program
        sources.append((path, data))
        for f in fmts:
            docs[f].append(write_xpp(program, diags, f, locator=r.locator))
            if r.program is not None:
                bare[f] += len(pcore.dumps(r.program, f))
    src_bytes = sum(len(d) for _, d in sources)

    def parse_validate():
        for path, data in sources:
            r = parse(data.decode("utf-8", "surrogateescape"), path)
            if r.program is not None:
                validate(r.program, file=path, modulepath=modulepath)

    def loader(ds, python_only=False):
        def load():
            saved = pcore.C_LOAD
            if python_only:
                pcore.C_LOAD = None
            try:
                for d in ds:
                    read_xpp(d)
            finally:
                pcore.C_LOAD = saved

        return load

    sides = {"parse+validate .pp": parse_validate}
    for f in fmts:
        if f == "msgpack":
            which = "C" if pcore.C_LOAD is not None else "Python"
            sides[f"load .xpp (msgpack, {which} reader)"] = loader(docs[f])
            if pcore.C_LOAD is not None:
                sides["load .xpp (msgpack, Python reader)"] = loader(docs[f], python_only=True)
        else:
            sides[f"load .xpp ({f}, Python reader)"] = loader(docs[f])
    best = {k: float("inf") for k in sides}
    for _ in range(ns.rounds):
        for name, fn in sides.items():
            t = time.process_time()
            fn()
            best[name] = min(best[name], time.process_time() - t)

    print(
        f"{len(files)} files, {src_bytes / 1e6:.2f} MB of source, best of {ns.rounds} rounds (CPU time); "
        f"msgpack reader: {pcore.MSGPACK_LOADER}"
    )
    base = best["parse+validate .pp"]
    for name, sec in best.items():
        speed = f"  {base / sec:5.1f}x faster" if name != "parse+validate .pp" else ""
        print(f"  {name:<36} {sec:7.3f} s  {src_bytes / sec / 1e6:6.2f} MB/s{speed}")
    print("sizes (over the .pp/.epp sources):")
    for f in fmts:
        total = sum(len(d) for d in docs[f])
        print(
            f"  .xpp {f:<8} {total / 1e6:6.2f} MB  {total / src_bytes:4.2f}x   bare Program "
            f"(= Puppet's serializer) {bare[f] / src_bytes:4.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
