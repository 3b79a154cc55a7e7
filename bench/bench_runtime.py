"""Benchmark of the XPP runtime (runtime/xpp) on the corpus, on Puppet 7.23 and OpenVox 8 (issue 14).

In one Ruby process per Puppet (``bench/bench_runtime.rb``), over every corpus manifest without errors
(``/usr/share/puppet/modules``), from memory: Puppet's parse + validate (``EvaluatingParser#parse_string``),
what the runtime does instead (the fast loader, its usability check and the replay of the recorded
diagnostics), and Puppet's stock Pcore Deserializer reading the same ``.xpp`` payloads.  Every loaded Program
is first checked equal to Puppet's own parse.  Then ``--rounds`` interleaved rounds (each side once per
round, in rotating order; the Deserializer, ~35x slower than the loader, only in the first two), a full GC before each timed pass and GC running as usual inside it, CPU time of
the Ruby process; reported as MB/s of *source*, best and median pass, and the median of the per-round
ratios.  Then a first catalog compile of ``examples/production`` and of the corpus with and without
``--xpp`` (a fresh process each, so every file is loaded once): CPU time of the whole compile and inside
the parser.  The ``.xpp`` trees are compiled at each Puppet's level and cached under ``.cache/runtime/``
(shared with tests/runtime).  The machine's load average is printed before and after each Puppet's run.

    python bench/bench_runtime.py [--rounds 7] [--puppet 7.23 --puppet 8] [--no-compile]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from puppet_xpp.xpp import compile as xcompile  # noqa: E402
from puppet_xpp.xpp.result import read_document  # noqa: E402
from tests.conformance.puppets import missing_reason, ruby_command  # noqa: E402
from tests.runtime.test_puppet_runtime import LEVEL, RUNTIME_LIB, compile_tree, corpus_env, run  # noqa: E402


def usable_pairs(env: str) -> list:
    """[source, xpp] of every file whose .xpp holds a Program and no error (what Puppet would load)."""
    jobs, _ = xcompile.plan(xcompile.detect_environment(env))
    pairs = []
    for j in jobs:
        with open(j.out, "rb") as f:
            doc = read_document(f.read())
        if doc.program is not None and not any(d.get("severity") == "error" for d in doc.diagnostics):
            pairs.append([j.src, j.out])
    return pairs


def bench_loader(puppet: str, rounds: int) -> dict:
    env = corpus_env(puppet)
    with tempfile.TemporaryDirectory() as tmp:
        req = {"runtime_lib": RUNTIME_LIB, "dir": tmp, "strict": LEVEL[puppet][1], "rounds": rounds}
        req["pairs"] = usable_pairs(env)
        path = os.path.join(tmp, "req.json")
        with open(path, "w") as f:
            json.dump(req, f)
        out = subprocess.run(
            ruby_command(puppet) + [os.path.join(REPO, "bench", "bench_runtime.rb"), path],
            capture_output=True,
            text=True,
        )
    if out.returncode != 0:
        raise SystemExit(f"bench_runtime.rb failed on Puppet {puppet}:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_compile(puppet: str, rounds: int) -> dict:
    """First compiles (a fresh process each time, so every file is loaded once) with and without --xpp:
    CPU seconds of the whole compile and inside the parser's entry points (parse + validate, or the
    runtime's loading); best of ``rounds``.  ``production``: the example environment's catalog;
    ``corpus``: one catalog per corpus module's main class, all in one process."""
    import pathlib

    from tests.runtime.test_puppet_runtime import corpus_classes

    with tempfile.TemporaryDirectory() as tmp:
        t = pathlib.Path(tmp)
        envdir = t / "envs" / "production"
        shutil.copytree(
            os.path.join(REPO, "examples", "production"), envdir, ignore=shutil.ignore_patterns(".xpp")
        )
        compile_tree(str(envdir), puppet)
        cases = {
            "production": (str(envdir), {}),
            "corpus": (corpus_env(puppet), {"classes": corpus_classes()}),
        }
        best: dict = {}
        for _ in range(rounds):
            for case, (env, extra) in cases.items():
                for xpp in (False, True):
                    res = run(puppet, env, t, xpp, **extra)
                    for what in ("compile_cpu", "parse_cpu", "loaded"):
                        key = (case, xpp, what)
                        best[key] = min(best.get(key, res[what]), res[what])
        return best


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--puppet", action="append", choices=["7.23", "8"])
    ap.add_argument("--no-compile", action="store_true", help="only the loader comparison")
    a = ap.parse_args()
    print(f"cores: {os.cpu_count()}")
    for puppet in a.puppet or ["7.23", "8"]:
        why = missing_reason(puppet)
        if why:
            print(f"Puppet {puppet}: skipped ({why})")
            continue
        before = load()
        r = bench_loader(puppet, a.rounds)
        mb = r["bytes"] / 1e6
        print(
            f"Puppet {puppet}: {r['files']} corpus files, {mb:.2f} MB of source; {r['same_programs']} loaded "
            f"Programs == Puppet's parse; {r['rounds']} interleaved rounds, CPU s ({before})"
        )
        for key, label in (
            ("parse", "parse + validate"),
            ("loader", "xpp loader"),
            ("deserializer", "stock Deserializer"),
        ):
            if key not in r:
                continue
            t = r[key]
            print(
                f"  {label:20s} best {t['best']:7.3f} s {mb / t['best']:6.1f} MB/s   median {t['median']:7.3f} s"
                f"   GC runs {t['gc_runs']}"
            )
        print(
            f"  loader vs parse + validate: {r['ratio_best']:.2f}x (best passes), {r['ratio_median']:.2f}x "
            f"(median of per-round ratios); vs Deserializer: {r['deserializer']['best'] / r['loader']['best']:.1f}x"
            f"  ({load()})"
        )
        if a.no_compile:
            continue
        c = bench_compile(puppet, min(a.rounds, 3))
        for case in ("production", "corpus"):
            print(
                f"  first compile, {case} ({c[(case, False, 'loaded')]} files loaded), CPU s whole compile / "
                f"inside the parser: without --xpp {c[(case, False, 'compile_cpu')]:.3f} / "
                f"{c[(case, False, 'parse_cpu')]:.3f}, with {c[(case, True, 'compile_cpu')]:.3f} / "
                f"{c[(case, True, 'parse_cpu')]:.3f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
