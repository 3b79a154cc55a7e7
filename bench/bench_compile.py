#!/usr/bin/env python3
"""``puppet-xpp --compile`` of a whole environment next to ``puppet parser validate`` of the same files.

    python bench/bench_compile.py [--rounds N] [--jobs N] [--modulepath DIR] [--manifests N | --copies N]
                                  [--no-puppet] [--in-tree]

Builds a temporary environment whose ``environment.conf`` puts the module corpus (default
/usr/share/puppet/modules) on the modulepath, plus a ``manifests/site.pp``, and renamed copies of its
modules, ``<module>_copyK`` (their classes keep their names, so both tools report the same unacceptable
locations in them): by default, whole modules of the corpus copied in turn (its second copy, then a third)
until the environment holds ``--manifests`` (default 1,900: the size of issue 31's environment, ~80
modules and ~1,900 manifests); with ``--copies N``, N - 1 copies of every module (the corpus twice is
~1,650 manifests, three times ~2,470).  Then, in each of N rounds
(default 3), one after the other so that every round sees the same machine (the first two in
alternate order from round to round):

* in-process work: in one process, after its imports, the parser tables and the GC settings of
  ``--compile`` (so that only the work is timed), read + parse + validate + encode + write every planned
  file, with the functions ``--compile`` uses, into the same tree of directories (beside ``ENV/.xpp``),
  each file written as ``--compile`` must write it (temporary file + rename, mode set);
* cold compile: ``puppet-xpp --compile ENV`` of a new environment directory (no ``.xpp`` tree), a whole process: wall clock, and CPU
  (user + sys) of the process and its worker processes;
* ``puppet parser validate`` of exactly the files the compile read, in that environment
  (``--environmentpath``/``--environment``, so the module-location checks are the same).

The cold compile's CPU over the in-process work is its overhead (interpreter start-up, imports, parser
tables, planning, workers, state file; target <= 1.3x, issue 12 item 6); each round prints its own
ratio (the two measured at the same moment), and the summary their median (with their range, and the
ratio of the best figures, which may come from different moments), and the same ratio of user CPU only
(the system CPU of both sides is mostly the file system's, and swings from round to round with what
else on the machine creates and deletes files: the user ratio tells a change of ours from that).  Then: ``--compile`` again with nothing changed
(target <= 0.5 s), and with one file changed.  The 1-minute load average is printed beside each figure:
on a shared machine, only figures taken at a low load mean much.

Every process of the bench (the compiles and the in-process work) runs on a Python that starts as an
installed puppet-xpp does (:func:`installed_python`): a virtual environment without the system's site
packages, whose site-packages names this checkout and the directories of its dependencies as plain path
lines.  So no ``.pth`` hook runs at a start: neither this checkout's editable-install finder nor what the
machine's own site-packages runs at every start of its interpreter (on the machines of this project a
sandbox's certificate hook: ~20 ms of CPU per start, a sixth of the compiling process's own CPU), which a
``pipx install`` or a virtual environment of puppet-xpp never loads.  ``--in-tree``: this interpreter as it
is, with the checkout on ``PYTHONPATH``.

The package's bytecode is compiled first (``compileall``), as an installed package has it: with
``PYTHONDONTWRITEBYTECODE`` set, a module edited since its ``.pyc`` was written would otherwise be
compiled again by every cold process.  Exit status 0.
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
# The in-process work writes its tree beside ENV/.xpp, in a new environment directory each round, and
# nothing is deleted before the end: ext4 gives a new file an inode near its directory's and skips, one by
# one, the inodes deleted in the last minutes (recently_deleted), so creating 823 files costs 0.05-1 s of
# sys CPU depending on what was deleted nearby just before.  Both sides must meet the same conditions, and
# the bench must not make them worse by deleting its own trees between measurements.
INPROC_DIR = ".xpp-in-process"


def load() -> float:
    return os.getloadavg()[0]


def manifests_of(module: str) -> int:
    """The ``.pp`` files of a module's source directories (what a compile of it plans, near enough)."""
    from puppet_xpp.xpp.environment import SOURCE_DIRS

    count = 0
    for sub in SOURCE_DIRS:
        for _base, _dirs, files in os.walk(os.path.join(module, sub)):
            count += sum(1 for f in files if f.endswith(".pp"))
    return count


def installed_python(work: str) -> str:
    """A Python in ``work`` that starts as an installed puppet-xpp does (see the module's docstring): a
    virtual environment (``venv --without-pip``, no system site packages) whose site-packages holds one
    ``.pth`` of plain path lines -- this checkout, then the directories this interpreter imports the
    dependencies from.  Plain lines only add to ``sys.path``: the ``.pth`` files inside those directories
    are not run (only a site directory's are)."""
    import sysconfig

    venv = os.path.join(work, "venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    python = os.path.join(venv, "bin", "python")
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    deps = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    with open(os.path.join(site, "puppet_xpp_bench.pth"), "w") as f:
        f.write("\n".join([REPO, *deps]) + "\n")
    return python


def timed(cmd, **kw):
    """(completed process, wall seconds, CPU seconds of it and its waited-for descendants, of which sys)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    sys_cpu = after.ru_stime - before.ru_stime
    return p, wall, (after.ru_utime - before.ru_utime) + sys_cpu, sys_cpu


def in_process_work(env_dir: str, out_dir: str) -> tuple[int, float, dict]:
    """(files, CPU seconds, split) of the work a cold compile does, in this (warmed-up) process."""
    import gc

    import puppet_xpp.xpp.result  # noqa: F401  (imported by the first write otherwise)
    from puppet_xpp.grammar.check import CheckConfig, checker
    from puppet_xpp.grammar.parser import parse, tables
    from puppet_xpp.xpp import compile as xpp_compile
    from puppet_xpp.xpp.compile import document
    from puppet_xpp.xpp.compile.work import GC_THRESHOLD
    from puppet_xpp.xpp.sources import read_source

    tables()
    env = xpp_compile.detect_environment(env_dir)
    jobs, _ = xpp_compile.plan(env)
    validation = xpp_compile.Options().validation()
    mode = xpp_compile.Options().file_mode
    gc.freeze()  # as --compile does while compiling (xpp.compile.work.run_jobs)
    gc.set_threshold(*GC_THRESHOLD)
    split = {"read": 0.0, "parse": 0.0, "validate": 0.0, "encode": 0.0, "write": 0.0}
    clock = time.process_time
    made: set = set()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
    t0 = clock()
    sys0 = resource.getrusage(resource.RUSAGE_SELF).ru_stime
    for job in jobs:
        # the steps of grammar.check.check and xpp.compile.document.compile_text, timed one by one
        config = CheckConfig(
            file=job.recorded,
            tasks=job.tasks,
            level=validation.level,
            strict=validation.strict,
            modulepath=tuple(env.modulepath),
            manifest=env.manifest,
            location=job.src,
        )
        a = clock()
        src = read_source(job.src)
        b = clock()
        res = parse(src.text, job.recorded, epp=False, tasks=job.tasks)
        c = clock()
        diags = list(res.diagnostics)
        if res.program is not None:
            diags += checker(config).validate(res.program)
        d = clock()
        program = None if any(x.severity == "error" for x in res.diagnostics) else res.program
        settings = {"puppet_version": validation.level, "strict": validation.strict, "tasks": job.tasks}
        data = document.write_program(
            program, diags, res.locator, job.recorded, settings=settings, source=src.text
        )
        e = clock()
        out = os.path.join(out_dir, "modules", job.rel)  # the same tree of directories and files
        folder = os.path.dirname(out)
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        tmp = os.path.join(folder, "." + os.path.basename(out) + ".tmp")
        fd = os.open(tmp, flags, 0o600)
        os.write(fd, data)
        os.fchmod(fd, mode)
        os.close(fd)
        os.replace(tmp, out)
        f = clock()
        split["read"] += b - a
        split["parse"] += c - b
        split["validate"] += d - c
        split["encode"] += e - d
        split["write"] += f - e
    split["sys"] = resource.getrusage(resource.RUSAGE_SELF).ru_stime - sys0  # (of the total)
    return len(jobs), clock() - t0, split


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=0, help="--jobs for the compile (default: cores)")
    ap.add_argument("--modulepath", default="/usr/share/puppet/modules")
    ap.add_argument(
        "--manifests",
        type=int,
        default=1900,
        help="copy modules of the corpus until the environment holds this many manifests (default 1900)",
    )
    ap.add_argument("--copies", type=int, default=0, help="instead: the corpus this many times")
    ap.add_argument("--no-puppet", action="store_true")
    ap.add_argument(
        "--in-tree",
        action="store_true",
        help="run on this interpreter as it is (its .pth hooks included), the checkout on PYTHONPATH",
    )
    ap.add_argument("--in-process", metavar="ENV", help=argparse.SUPPRESS)  # (the helper run below)
    ap.add_argument("--keep", action="store_true", help=argparse.SUPPRESS)  # (its tree stays)
    ns = ap.parse_args(argv)
    if ns.in_process:
        out = os.path.join(ns.in_process, INPROC_DIR)
        try:
            n, cpu, split = in_process_work(ns.in_process, out)
        finally:
            if not ns.keep:
                shutil.rmtree(out, ignore_errors=True)
        print(json.dumps({"files": n, "cpu": cpu, "split": split}))
        return 0
    if not os.path.isdir(ns.modulepath):
        print(f"no module directory {ns.modulepath}", file=sys.stderr)
        return 2
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_lsp import compile_bytecode

    compile_bytecode()

    work = tempfile.mkdtemp(prefix="bench-compile-")
    modulepath = [ns.modulepath]
    copies = os.path.join(work, "copies")
    modulepath.append(copies)
    names = sorted(n for n in os.listdir(ns.modulepath) if os.path.isdir(os.path.join(ns.modulepath, n)))
    if ns.copies:
        wanted = [(name, k) for k in range(2, ns.copies + 1) for name in names]
    else:
        counts = {name: manifests_of(os.path.join(ns.modulepath, name)) for name in names}
        have = sum(counts.values())
        wanted = []
        for k in range(2, 10):
            for name in names:
                if have >= ns.manifests:
                    break
                wanted.append((name, k))
                have += counts[name]
    for name, k in wanted:
        shutil.copytree(
            os.path.join(ns.modulepath, name),
            os.path.join(copies, f"{name}_copy{k}"),
            symlinks=False,
            ignore_dangling_symlinks=True,
        )

    def make_env(name: str) -> str:
        env = os.path.join(work, name)
        os.makedirs(os.path.join(env, "manifests"))
        with open(os.path.join(env, "environment.conf"), "w") as f:
            f.write(f"modulepath = {os.pathsep.join(modulepath)}\n")
        with open(os.path.join(env, "manifests", "site.pp"), "w") as f:
            f.write("node default {\n  include apache\n}\n")
        return env

    if ns.in_tree:
        python, pyenv = sys.executable, dict(os.environ, PYTHONPATH=REPO)
    else:
        python, pyenv = installed_python(work), dict(os.environ)
        pyenv.pop("PYTHONPATH", None)

    def compile_cmd(env: str) -> list[str]:
        return [python, "-m", "puppet_xpp", "--compile", env, "-q"] + (
            ["--jobs", str(ns.jobs)] if ns.jobs else []
        )

    try:
        env = make_env("benchenv")
        ours = compile_cmd(env)
        report = os.path.join(work, "report.json")

        # the file list (and a warm-up of the parser-table cache and of the page cache)
        p = subprocess.run(ours + ["--report", report], env=pyenv, capture_output=True, text=True)
        with open(report) as f:
            files = [x["path"] for x in json.load(f)["environments"][0]["files"]]
        nbytes = sum(os.path.getsize(x) for x in files)
        puppet_cmd = ["puppet", "parser", "validate", "--environmentpath", work, "--environment", "benchenv"]
        print("command: python3 " + " ".join([os.path.relpath(__file__, REPO)] + (argv or sys.argv[1:])))
        print(
            f"environment: {len(files)} manifests ({nbytes / 1e6:.2f} MB) on the modulepath {os.pathsep.join(modulepath)}; "
            f"{os.cpu_count()} cores; --jobs {ns.jobs or 'default (cores)'}; {ns.rounds} rounds"
        )
        from puppet_xpp.grammar.parser import ACCELERATOR
        from puppet_xpp.xpp.pcore.write import MSGPACK_WRITER

        # (the compile's processes have the same environment: PUPPET_XPP_PURE_PYTHON=1 turns both off)
        print(f"parser driver: {ACCELERATOR}; Pcore writer: {MSGPACK_WRITER}")
        print(
            f"python: {python} "
            + (
                "(this interpreter as it is, the checkout on PYTHONPATH)"
                if ns.in_tree
                else "(started as installed: no .pth hook runs; --in-tree: this interpreter as it is)"
            )
        )
        print(
            "round  load | cold compile wall  CPU (sys) | in-process CPU (sys) (load) | ratio (user only) "
            "| puppet validate wall  CPU (load)"
        )
        cold, inproc, puppet = [], [], []

        def in_process(env: str) -> None:
            la = load()
            p = subprocess.run(
                [python, os.path.abspath(__file__), "--in-process", env, "--keep"],
                env=pyenv,
                capture_output=True,
                text=True,
            )
            assert p.returncode == 0, p.stderr
            inproc.append(dict(json.loads(p.stdout), load=la))

        for r in range(ns.rounds):
            # a new environment directory per round, nothing deleted until the end (see INPROC_DIR)
            round_env = make_env(f"round{r}")
            if r % 2 == 0:  # the two in either order, alternately
                in_process(round_env)
            lc = load()
            p, wall, cpu, sys_cpu = timed(compile_cmd(round_env), env=pyenv)
            assert p.returncode in (0, 1), p.stderr
            cold.append((wall, cpu, sys_cpu, lc))
            if r % 2 == 1:
                in_process(round_env)
            ip, la = inproc[-1], inproc[-1]["load"]
            user_ratio = (cpu - sys_cpu) / (ip["cpu"] - ip["split"]["sys"])
            line = (
                f"{r + 1:5} {lc:5.2f} | {wall:12.2f} s {cpu:5.2f} s ({sys_cpu:4.2f}) | {ip['cpu']:10.2f} s "
                f"({ip['split']['sys']:4.2f}) ({la:4.2f}) | {cpu / ip['cpu']:4.2f}x {user_ratio:4.2f}x"
            )
            if not ns.no_puppet:
                lp = load()
                p, wall, cpu, _ = timed(puppet_cmd + files, cwd=work)
                puppet.append((wall, cpu, p.returncode, lp))
                line += f" | {wall:15.2f} s {cpu:5.2f} s ({lp:4.2f})"
            print(line, flush=True)

        warm, one = [], []
        for _ in range(ns.rounds):  # nothing changed
            lw = load()
            p, wall, cpu, _ = timed(ours, env=pyenv)
            assert p.returncode in (0, 1), p.stderr
            warm.append((wall, cpu, lw))
        site = os.path.join(env, "manifests", "site.pp")  # the environment's own manifest: ours to change
        for k in range(ns.rounds):
            with open(site, "a") as f:
                f.write(f"# change {k}\n")
            lo = load()
            p, wall, cpu, _ = timed(ours, env=pyenv)
            one.append((wall, cpu, lo))

        def best(xs):
            w = min(xs, key=lambda x: x[0])
            c = min(xs, key=lambda x: x[1])
            return f"{w[0]:6.2f} s wall (load {w[-1]:.2f})  {c[1]:6.2f} s CPU (load {c[-1]:.2f})"

        work_best = min(inproc, key=lambda x: x["cpu"])
        cold_cpu = min(x[1] for x in cold)
        print(f"best of {ns.rounds}:")
        print(f"  puppet-xpp --compile, cold (CPU incl. workers)   {best(cold)}")
        print(
            f"  in-process work (read+parse+validate+encode+write) {work_best['cpu']:6.2f} s CPU (load "
            f"{work_best['load']:.2f})   ("
            + ", ".join(f"{k} {v:.2f}" for k, v in work_best["split"].items())
            + ")"
        )
        rounds = sorted(c[1] / w["cpu"] for c, w in zip(cold, inproc))
        extra = sorted((c[1] - w["cpu"], c[2] - w["split"]["sys"]) for c, w in zip(cold, inproc))
        print(
            f"  cold compile CPU / in-process work: {rounds[len(rounds) // 2]:.2f}x, median of the rounds' own "
            f"ratios ({rounds[0]:.2f}x to {rounds[-1]:.2f}x; best / best {cold_cpu / work_best['cpu']:.2f}x)   "
            "(target <= 1.3x)"
        )
        users = sorted((c[1] - c[2]) / (w["cpu"] - w["split"]["sys"]) for c, w in zip(cold, inproc))
        print(
            f"  the same of user CPU only: {users[len(users) // 2]:.2f}x ({users[0]:.2f}x to {users[-1]:.2f}x)   "
            "(system CPU is mostly the file system creating the tree's files and directories: it swings "
            "with what else creates and deletes files on the machine, on both sides, not at the same moments)"
        )
        mid = extra[len(extra) // 2]
        print(
            f"  cold compile CPU - in-process work, median of the rounds: {mid[0]:.2f} s (sys {mid[1]:.2f} s)"
        )
        if puppet:
            print(
                f"  puppet parser validate (same files)              {best(puppet)}   (exit {puppet[0][2]})"
            )
            print(
                f"  cold compile vs puppet parser validate: {min(x[0] for x in puppet) / min(x[0] for x in cold):.1f}x "
                f"faster (wall), {min(x[1] for x in puppet) / cold_cpu:.1f}x less CPU"
            )
        print(f"  puppet-xpp --compile, nothing changed           {best(warm)}   (target <= 0.5 s)")
        print(f"  puppet-xpp --compile, one file changed          {best(one)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
