"""Indexing benchmark: every .pp and Ruby API file (functions, types, facts) under the given module
directories (default: the Debian module corpus) indexed as the language server does at start, with
the wall time, the entry counts and the process's peak RSS.

    python3 bench/bench_index.py [DIR ...]
"""

from __future__ import annotations

import resource
import sys
import time

from puppet_xpp.server import builtins as B
from puppet_xpp.server.analysis_index import WorkspaceIndex, index_file, workspace_files


def main(argv: list[str]) -> int:
    roots = argv or ["/usr/share/puppet/modules"]
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    files = workspace_files(roots)
    idx = WorkspaceIndex()
    for p in files:
        idx.set_file(p, index_file(p))
    dt = time.perf_counter() - t0
    syms = idx.all()
    kinds: dict = {}
    for s in syms:
        key = s.kind if s.origin in ("puppet",) else f"{s.kind}/{s.origin}"
        kinds[key] = kinds.get(key, 0) + 1
    rb = sum(1 for p in files if p.endswith(".rb"))
    print(
        f"files: {len(files)} ({len(files) - rb} .pp, {rb} .rb) in {dt:.2f} s ({len(files) / dt:.0f} files/s)"
    )
    print("entries:", ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    print(f"built-ins: {len(B.functions())} functions, {len(B.types())} types, {len(B.facts())} facts")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak RSS: {rss / 1024:.0f} MB (before indexing {rss0 / 1024:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
