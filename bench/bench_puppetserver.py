"""Benchmark of the XPP runtime inside a real Puppet Server (Debian's puppetserver 7.9.5: JRuby 9.3 running
Puppet 7.23; no msgpack gem there, so the loader's own byte reader is what runs) (issue 25 item 9).

1. Loading, in Puppet Server's own JRuby (``puppetserver ruby``'s entry point: the server's jar, its Ruby
   load path, its vendored gems) running ``bench/bench_runtime.rb`` over every corpus manifest without errors
   (``/usr/share/puppet/modules``), from memory: Puppet's parse + validate (``EvaluatingParser#parse_string``)
   against what the runtime does instead (load the ``.xpp``, check it is usable, replay its diagnostics).
   Every loaded Program is first checked ``==`` to Puppet's parse in that JRuby; then ``--warm-up``
   untimed interleaved rounds (what a server that has run for a while has behind it: JRuby's JIT and the
   JVM's compilers keep speeding both sides up over the first 15-20 passes), then ``--loader-rounds``
   interleaved rounds, CPU time of the timing thread (JRuby's JIT and collector threads excluded alike for
   both sides), best and median pass, and the median of the per-round ratios.
2. Catalogs over HTTPS from one running server (tests/test_puppetserver.py sets it up as
   runtime/xpp/README.md documents): ``examples/production`` whose web node also includes every corpus
   module's main class that compiles (about 120 manifests a catalog), with its ``.xpp`` tree and without
   it (the tree moved aside: every manifest parsed, as before the runtime), after ``--catalog-warm-up``
   rounds of warm-up.
   Every request is the environment's first catalog: ``environment_timeout`` is 0 (Puppet's default; what
   ``DELETE /puppet-admin-api/v1/environment-cache`` does before each request), and the server's log line
   of each request with ``.xpp`` is checked to say that all of the catalog's manifests were loaded from
   ``.xpp`` again.  ``--rounds`` rounds, each asking both ways in a rotating order; wall seconds per
   request (what an agent waits for).

The machine's load average is printed beside every figure.

    python bench/bench_puppetserver.py [--warm-up 16] [--loader-rounds 10] [--catalog-warm-up 8] [--rounds 7] [--no-catalogs] [--no-loader]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from bench.bench_runtime import usable_pairs  # noqa: E402
from tests.runtime.test_jruby_loader import JAR, jruby_command  # noqa: E402
from tests.runtime.test_puppet_runtime import (  # noqa: E402
    CORPUS,
    LEVEL,
    RUNTIME_LIB,
    compile_tree,
    corpus_classes,
    corpus_env,
    run,
)


def run_jruby_bench(pairs: list, rounds: int, warmup: int) -> dict:
    """bench/bench_runtime.rb over ``pairs`` in Puppet Server's JRuby; its JSON result."""
    with tempfile.TemporaryDirectory() as tmp:
        req = {
            "runtime_lib": RUNTIME_LIB,
            "dir": tmp,
            "strict": LEVEL["7.23"][1],
            "rounds": rounds,
            "warmup": warmup,
            "pairs": pairs,
        }
        path = os.path.join(tmp, "req.json")
        with open(path, "w") as f:
            json.dump(req, f)
        out = subprocess.run(
            jruby_command() + [os.path.join(REPO, "bench", "bench_runtime.rb"), path],
            capture_output=True,
            text=True,
            cwd=tmp,
        )
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or not lines or not lines[-1].startswith("{"):
        raise SystemExit(
            f"bench_runtime.rb failed in Puppet Server's JRuby:\n{out.stdout[-2000:]}{out.stderr[-3000:]}"
        )
    return dict(json.loads(lines[-1]))


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def bench_loader(rounds: int, warmup: int) -> None:
    pairs = usable_pairs(corpus_env("7.23"))
    before = load()
    r = run_jruby_bench(pairs, rounds, warmup)
    mb = r["bytes"] / 1e6
    print(
        f"Loading in Puppet Server's JRuby ({r['ruby']}): {r['files']} corpus files, {mb:.2f} MB of source; "
        f"{r['same_programs']} loaded Programs == Puppet's parse; {r['warmup']} interleaved warm-up rounds "
        f"(untimed), then {r['rounds']} interleaved rounds, thread CPU s "
        f"({before})"
    )
    for key, label in (("parse", "parse + validate"), ("loader", "xpp loader")):
        t = r[key]
        print(
            f"  {label:20s} best {t['best']:7.3f} s {mb / t['best']:6.2f} MB/s   median {t['median']:7.3f} s"
            f"   GC runs {t['gc_runs']}"
        )
    print(
        f"  loader vs parse + validate: {r['ratio_best']:.2f}x (best passes), {r['ratio_median']:.2f}x "
        f"(median of per-round ratios)  ({load()})"
    )


def bench_environment(root: pathlib.Path) -> tuple[str, int]:
    """``examples/production`` plus, on its module path, the corpus: its web node (the one asked for) includes every corpus
    module's main class that compiles (Puppet 7.23 on MRI, one catalog each, then together), so a catalog
    loads a hundred-odd manifests.  The ``.xpp`` tree compiled at 7.23; (environment, manifests loaded)."""
    envroot = root / "code" / "environments"
    env = envroot / "production"
    shutil.copytree(os.path.join(REPO, "examples", "production"), env, ignore=shutil.ignore_patterns(".xpp"))
    (env / "environment.conf").write_text(f"modulepath = modules:{CORPUS}\n")
    classes = corpus_classes()
    alone = run("7.23", str(env), root, False, classes=classes)["catalogs"]
    usable = [c for c, r in zip(classes, alone) if "catalog" in r and c not in os.listdir(env / "modules")]
    site = env / "manifests" / "site.pp"
    text = site.read_text()
    cut = text.index("{", text.index("node /^web")) + 1  # (the node the requests name)
    site.write_text(text[:cut] + "".join(f"\n  include {c}" for c in usable) + text[cut:])
    reference = run("7.23", str(env), root, False)
    if "error" in reference:
        raise SystemExit(f"the bench environment does not compile on MRI: {reference['error']}")
    compile_tree(str(env), "7.23")
    return str(env), int(reference["loaded"])


def bench_catalogs(rounds: int, warmup: int) -> None:
    from tests.test_puppetserver import Server

    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        env, loaded = bench_environment(root)
        tree, aside = os.path.join(env, ".xpp"), os.path.join(env, ".xpp-aside")
        server = Server(root, os.path.dirname(env))
        times: dict[bool, list[float]] = {True: [], False: []}
        took: dict[bool, float] = {}
        try:
            for r in range(rounds + warmup):  # (the first `warmup`: not counted)
                for xpp in (True, False) if r % 2 == 0 else (False, True):
                    if not xpp:
                        os.rename(tree, aside)
                    t = time.monotonic()
                    status, cat, lines = server.catalog()
                    took[xpp] = time.monotonic() - t
                    if not xpp:
                        os.rename(aside, tree)
                    assert status == 200, cat
                    want = (
                        f"xpp: {loaded} manifests loaded from .xpp, 0 parsed" if xpp else "not using the .xpp"
                    )
                    assert any(want in ln for ln in lines), (xpp, lines)
                    if r >= warmup:
                        times[xpp].append(took[xpp])
                print(
                    f"  round {r + 1}{' (warm-up)' if r < warmup else ''}: "
                    + ", ".join(f"{'with' if x else 'without'} .xpp {took[x]:.3f} s" for x in (True, False))
                    + f"  ({load()})",
                    flush=True,
                )
        finally:
            server.stop()
    w, wo = times[True], times[False]
    print(
        f"Catalogs over HTTPS, Puppet Server 7.9.5, {loaded} manifests loaded per catalog, each request the "
        f"environment's first (environment_timeout 0, Puppet's default: every request loaded all {loaded} again, "
        f"the server's log says), {rounds} interleaved rounds after {warmup} of warm-up, wall s:"
    )
    print(
        f"  with .xpp    best {min(w):.3f}  median {statistics.median(w):.3f}\n"
        f"  without      best {min(wo):.3f}  median {statistics.median(wo):.3f}\n"
        f"  median of per-round ratios without / with: {statistics.median(b / a for a, b in zip(w, wo)):.2f}x"
        f"  ({load()})"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7, help="catalog rounds")
    ap.add_argument("--loader-rounds", type=int, default=10, help="timed loader rounds (after the warm-up)")
    ap.add_argument(
        "--warm-up",
        type=int,
        default=16,
        help="untimed loader rounds first, both sides interleaved: JRuby's JIT compiles a method after 50 calls "
        "and the JVM's own compilers later still (the loader's hot methods reach C2 after ~10 passes on a "
        "quiet machine, later on a loaded one): both sides keep speeding up over the first 15-20 passes, and "
        "a Puppet Server runs warm for days",
    )
    ap.add_argument(
        "--catalog-warm-up",
        type=int,
        default=8,
        help="untimed catalog rounds first (each request both ways): a fresh server's requests kept getting "
        "faster over the first 7 rounds (15 -> 4 s at load 6), so 2 compared a cold JIT with a warmer one",
    )
    ap.add_argument("--no-loader", action="store_true")
    ap.add_argument("--no-catalogs", action="store_true")
    a = ap.parse_args()
    if not os.path.exists(JAR):
        print("no Puppet Server (bash .ci/install installs Debian's puppetserver): skipped")
        return 0
    print(f"cores: {os.cpu_count()}")
    if not a.no_loader:
        bench_loader(a.loader_rounds, a.warm_up)
    if not a.no_catalogs:
        bench_catalogs(a.rounds, a.catalog_warm_up)
    return 0


if __name__ == "__main__":
    sys.exit(main())
