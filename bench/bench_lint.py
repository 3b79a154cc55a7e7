#!/usr/bin/env python3
"""Lint throughput: puppet-xpp's lint (lint) next to puppet-lint 3.0.1's, on the same files.

    python bench/bench_lint.py [--rounds N] [--no-puppet-lint] [--cli] [PATH...]

PATH: files or directories (recursive *.pp); default: the Debian module corpus. Both sides read every file
first (not timed), then lint all of them N rounds (default 3) with the default checks, and N rounds with
``--fix`` semantics (checks + fixes + the fixed text); the best round counts. puppet-lint runs in-process
in one Ruby process (the script below: ``PuppetLint#run`` per file, as its command line does, without
printing). Times are CPU seconds of each process (the machine may be shared), one core on each side;
process start-up is counted on neither side. Prints one line per side and mode, and the ratios (ours /
puppet-lint's files per second), with the load average before and after.

``--cli`` also times both command lines on the same files (``python -m puppet_xpp --lint FILES`` and
``puppet-lint FILES``, output discarded; with ``--fix`` on fresh copies of the files): CPU seconds (user +
system) of each child process, start-up, reading, printing and writing included on both sides.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from puppet_xpp.lint.run import lint  # noqa: E402

RUBY = r"""
require 'json'
require 'puppet-lint'
rounds = Integer(ARGV.shift)
files = File.readlines(ARGV.shift, chomp: true).reject(&:empty?)
codes = files.map { |f| File.read(f, mode: 'rb:UTF-8') }
c = PuppetLint.configuration
out = {}
[false, true].each do |fix|
  c.fix = fix
  times = []
  rounds.times do
    t = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
    files.each_with_index do |f, i|
      l = PuppetLint.new
      l.code = codes[i]
      l.path = f
      l.run
      l.manifest if fix
    end
    times << Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - t
  end
  out[fix ? 'fix' : 'lint'] = times.min
end
puts JSON.generate(out)
"""


def _files(paths: list[str]) -> list[str]:
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            for d, dirs, names in os.walk(p):
                dirs.sort()
                out.extend(os.path.join(d, n) for n in sorted(names) if n.endswith(".pp"))
        else:
            out.append(p)
    return out


def _ours(files: list[str], texts: list[str], rounds: int, fix: bool) -> float:
    best = float("inf")
    for _ in range(rounds):
        gc.collect()
        t = time.process_time()
        for f, text in zip(files, texts):
            lint(text, path=f, fix=fix)
        best = min(best, time.process_time() - t)
    return best


def _puppet_lint(files: list[str], rounds: int) -> dict[str, float]:
    with tempfile.NamedTemporaryFile("w", suffix=".list", delete=False) as lst:
        lst.write("\n".join(files))
    try:
        proc = subprocess.run(
            ["ruby", "-e", RUBY, str(rounds), lst.name], capture_output=True, text=True, check=True
        )
    finally:
        os.unlink(lst.name)
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _child_cpu(cmd: list[str], cwd: str | None = None) -> float:
    """CPU seconds (user + system) of one child process run to completion, output discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _cli(files: list[str], rounds: int) -> None:
    """Both command lines, lint and --fix (on fresh copies in a scratch tree), best of ``rounds``."""
    ours = [sys.executable, "-m", "puppet_xpp", "--lint"]
    theirs = ["puppet-lint"]
    for mode in ("lint", "fix"):
        best: dict[str, float] = {}
        for _ in range(rounds):
            for side, cmd in (("puppet-xpp ", ours), ("puppet-lint", theirs)):
                with tempfile.TemporaryDirectory() as tmp:
                    if mode == "fix":
                        targets = []
                        for f in files:  # the same relative layout under the scratch directory
                            dst = os.path.join(tmp, f.lstrip(os.sep))
                            os.makedirs(os.path.dirname(dst), exist_ok=True)
                            shutil.copyfile(f, dst)
                            targets.append(dst)
                        args = [*cmd, "--fix", *targets]
                    else:
                        args = [*cmd, *files]
                    s = _child_cpu(args, cwd=tmp)
                best[side] = min(best.get(side, s), s)
        for side, s in best.items():
            print(f"cli {side} {mode:4}: {s:7.3f} s  {len(files) / s:8.0f} files/s")
        print(
            f"cli ratio {mode}: {best['puppet-lint'] / best['puppet-xpp ']:.1f}x (start-up included on both sides)"
        )


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-puppet-lint", action="store_true", help="only time our lint")
    ap.add_argument("--cli", action="store_true", help="also time both command lines (start-up included)")
    ns = ap.parse_args(argv)
    if ns.paths:
        files = _files(ns.paths)
    else:
        from tests.conformance.corpus import corpus_files

        files = corpus_files("pp")
    if not files:
        print("no files", file=sys.stderr)
        return 2
    texts = [open(f, encoding="utf-8", errors="surrogateescape").read() for f in files]
    size = sum(len(t.encode("utf-8", "surrogateescape")) for t in texts)
    print(f"{len(files)} files, {size / 1e6:.2f} MB, best of {ns.rounds} rounds; {_load()}")
    print(
        "in-process, CPU seconds of each process on one core; start-up and file reading not counted on either side"
    )
    ours = {"lint": _ours(files, texts, ns.rounds, False), "fix": _ours(files, texts, ns.rounds, True)}
    for mode, s in ours.items():
        print(f"puppet-xpp  {mode:4}: {s:7.3f} s  {len(files) / s:8.0f} files/s")
    if ns.no_puppet_lint:
        return 0
    theirs = _puppet_lint(files, ns.rounds)
    for mode, s in theirs.items():
        print(f"puppet-lint {mode:4}: {s:7.3f} s  {len(files) / s:8.0f} files/s")
    for mode in ("lint", "fix"):
        print(f"ratio {mode}: {theirs[mode] / ours[mode]:.1f}x (ours / puppet-lint's throughput)")
    if ns.cli:
        _cli(files, ns.rounds)
    print(_load())
    return 0


if __name__ == "__main__":
    sys.exit(main())
