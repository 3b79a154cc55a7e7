#!/usr/bin/env python3
"""``puppet-xpp --compile`` of a whole environment next to ``puppet parser validate`` of the same files.

    python bench/bench_compile.py [--rounds N] [--jobs N] [--modulepath DIR] [--no-puppet]

Builds a temporary environment whose ``environment.conf`` puts the module corpus (default
/usr/share/puppet/modules) on the modulepath, plus a ``manifests/site.pp``.  Then, as whole processes in the
same run (best of N rounds, default 3):

* cold compile: ``puppet-xpp --compile ENV`` with no ``.xpp`` tree (removed before each round);
* ``puppet parser validate`` of exactly the files the compile read, in that environment
  (``--environmentpath``/``--environment``, so the module-location checks are the same);
* incremental run: ``puppet-xpp --compile ENV`` again with nothing changed (target: <= 0.5 s);
* one changed file: a source rewritten with new content, then ``--compile`` (that file is recompiled);
* the in-process work of a cold compile: in one already warm process (imports done, parser tables
  loaded), read + parse + validate + encode + write every planned file (into the same tree of
  directories) with the functions ``--compile`` uses, one after the other, Python's default settings.  The cold compile's CPU over this is its overhead (process start-up,
  imports, workers, bookkeeping; target <= 1.3x, issue 12 item 6).

Wall-clock seconds are printed, and the CPU seconds (user + sys) of each process.  Exit status 0.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd, **kw):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p, wall, cpu


def in_process_work(env_dir: str, out_dir: str) -> tuple[int, float, dict]:
    """(files, CPU seconds, split) of the work a cold compile does, in this (warmed-up) process."""
    from puppet_xpp.grammar.parser import parse, tables
    from puppet_xpp.grammar.validator import validate
    from puppet_xpp.xpp import compile as C
    from puppet_xpp.xpp import layout
    from puppet_xpp.xpp.sources import read_source

    tables()
    env = C.detect_environment(env_dir)
    jobs, _ = C.plan(env)
    level, strict = C._level(C.Options())
    split = {"read": 0.0, "parse": 0.0, "validate": 0.0, "write": 0.0}
    clock = time.process_time
    made: set = set()
    t0 = clock()
    for job in jobs:
        a = clock()
        src = read_source(job.src)
        b = clock()
        res = parse(src.text, job.recorded, tasks=job.tasks)
        c = clock()
        diags = list(res.diagnostics)
        if res.program is not None:
            diags += validate(
                res.program,
                strict=strict,
                tasks=job.tasks,
                file=job.src,
                modulepath=env.modulepath,
                manifest=env.manifest,
                level=level,
            )
        d = clock()
        program = None if any(x.severity == "error" for x in res.diagnostics) else res.program
        settings = {"puppet_version": level, "strict": strict, "tasks": job.tasks}
        data = layout.write_program(
            program, diags, res.locator, job.recorded, settings=settings, source=src.text
        )
        out = os.path.join(out_dir, job.rel)  # the same tree of directories and files
        folder = os.path.dirname(out)
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        with open(out, "wb") as f:
            f.write(data)
        e = clock()
        split["read"] += b - a
        split["parse"] += c - b
        split["validate"] += d - c
        split["write"] += e - d
    return len(jobs), clock() - t0, split


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=0, help="--jobs for the compile (default: cores)")
    ap.add_argument("--modulepath", default="/usr/share/puppet/modules")
    ap.add_argument("--no-puppet", action="store_true")
    ap.add_argument("--in-process", metavar="ENV", help=argparse.SUPPRESS)  # (the helper run below)
    ns = ap.parse_args(argv)
    if ns.in_process:
        out = tempfile.mkdtemp(prefix="bench-inproc-")
        try:
            n, cpu, split = in_process_work(ns.in_process, out)
        finally:
            shutil.rmtree(out, ignore_errors=True)
        print(json.dumps({"files": n, "cpu": cpu, "split": split}))
        return 0
    if not os.path.isdir(ns.modulepath):
        print(f"no module directory {ns.modulepath}", file=sys.stderr)
        return 2

    work = tempfile.mkdtemp(prefix="bench-compile-")
    try:
        env = os.path.join(work, "benchenv")
        os.makedirs(os.path.join(env, "manifests"))
        with open(os.path.join(env, "environment.conf"), "w") as f:
            f.write(f"modulepath = {ns.modulepath}\n")
        with open(os.path.join(env, "manifests", "site.pp"), "w") as f:
            f.write("node default {\n  include apache\n}\n")
        pyenv = dict(os.environ, PYTHONPATH=REPO)
        ours = [sys.executable, "-m", "puppet_xpp", "--compile", env, "-q"]
        if ns.jobs:
            ours += ["--jobs", str(ns.jobs)]
        report = os.path.join(work, "report.json")

        # the file list (and a warm-up of the parser-table cache)
        p = subprocess.run(ours + ["--report", report], env=pyenv, capture_output=True, text=True)
        with open(report) as f:
            files = [x["path"] for x in json.load(f)["environments"][0]["files"]]
        nbytes = sum(os.path.getsize(x) for x in files)
        listfile = os.path.join(work, "files.txt")
        with open(listfile, "w") as f:
            f.write("\n".join(files) + "\n")

        cold, puppet, warm, one, inproc = [], [], [], [], []
        for _ in range(ns.rounds):
            p = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--in-process", env],
                env=pyenv,
                capture_output=True,
                text=True,
            )
            assert p.returncode == 0, p.stderr
            inproc.append(json.loads(p.stdout))
            shutil.rmtree(os.path.join(env, ".xpp"), ignore_errors=True)
            p, wall, cpu = timed(ours, env=pyenv)
            assert p.returncode in (0, 1), p.stderr
            cold.append((wall, cpu))
            p, wall, cpu = timed(ours, env=pyenv)
            warm.append((wall, cpu))
            assert p.returncode in (0, 1), p.stderr
            if not ns.no_puppet:
                cmd = [
                    "puppet",
                    "parser",
                    "validate",
                    "--environmentpath",
                    work,
                    "--environment",
                    "benchenv",
                    *files,
                ]
                p, wall, cpu = timed(cmd, cwd=work)
                puppet.append((wall, cpu, p.returncode))

        # one changed file (a copy of the environment's own manifest, which we may modify)
        site = os.path.join(env, "manifests", "site.pp")
        for k in range(ns.rounds):
            with open(site, "a") as f:
                f.write(f"# change {k}\n")
            p, wall, cpu = timed(ours, env=pyenv)
            one.append((wall, cpu))

        def best(xs):
            w = min(x[0] for x in xs)
            c = min(x[1] for x in xs)
            return f"{w:6.2f} s wall  {c:6.2f} s CPU"

        print(
            f"environment: {len(files)} manifests ({nbytes / 1e6:.2f} MB) on the modulepath {ns.modulepath}; "
            f"{os.cpu_count()} cores; best of {ns.rounds}"
        )
        print(f"  puppet-xpp --compile, cold          {best(cold)}")
        if puppet:
            print(f"  puppet parser validate (same files) {best(puppet)}   (exit {puppet[0][2]})")
            print(
                f"  cold compile vs puppet parser validate: {min(x[0] for x in puppet) / min(x[0] for x in cold):.1f}x "
                "faster (wall)"
            )
        work_cpu = min(x["cpu"] for x in inproc)
        split = min(inproc, key=lambda x: x["cpu"])["split"]
        cold_cpu = min(x[1] for x in cold)
        print(
            f"  in-process work (read+parse+validate+write, one warm process) {work_cpu:6.2f} s CPU   ("
            + ", ".join(f"{k} {v:.2f}" for k, v in split.items())
            + ")"
        )
        print(f"  cold compile CPU / in-process work: {cold_cpu / work_cpu:.2f}x   (target <= 1.3x)")
        print(f"  puppet-xpp --compile, nothing changed {best(warm)}   (target <= 0.5 s)")
        print(f"  puppet-xpp --compile, one file changed {best(one)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
