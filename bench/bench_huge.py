#!/usr/bin/env python3
"""Huge documents: time and peak memory of ``puppet-xpp validate|compile|lint`` per input shape, beside
``puppet parser validate`` of the same file in the same run (issue 26 item 12).

    python bench/bench_huge.py [--size MB] [--shapes list,classes,...] [--modes validate,compile,lint,server]
                               [--no-puppet] [--write DIR]

Every shape is valid Puppet throughout (so no parser stops early at a syntax error) and about ``--size`` MB
(default 5): ``list`` is one line ``$x = [0, 1, …]`` (the issue's 4 MB list), ``classes`` many distinct
classes with resources, conditionals and interpolation, ``hash`` a huge hash of strings, ``heredoc`` long
heredocs with interpolation, ``nested`` nesting 60 deep (within Puppet's limits) repeated, ``corpus`` the
Debian corpus' manifests that parse, concatenated (class names repeat: Puppet's validation does not mind).
Each command runs as its own process; wall time, CPU time (user + system: what the wall time means on a
loaded machine) and the child's peak RSS (its own VmHWM, written by the child at its end: see ``_run``)
are printed per shape and mode, with the load average before each run.  Mode ``server`` is the language server's analysis of the document as it is
opened (server.analysis.document.Document: parse, validation, diagnostics) in a process of its own.
``--write DIR`` only writes the inputs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

SHAPES: dict[str, Callable[[int], str]] = {}


def _shape(function: Callable[[int], str]) -> Callable[[int], str]:
    SHAPES[function.__name__.removeprefix("make_")] = function
    return function


def _pieces(size: int, piece: Callable[[int], str], separator: str = "") -> str:
    """piece(0), piece(1), ... joined by ``separator`` until they make ``size`` characters."""
    parts: list[str] = []
    total = 0
    while total < size:
        text = piece(len(parts))
        parts.append(text)
        total += len(text) + len(separator)
    return separator.join(parts)


@_shape
def make_list(size: int) -> str:
    """``$x = [0, 1, …]`` on one line (the issue's command-line case)."""
    return "$x = [" + _pieces(size - 7, str, ", ") + "]\n"


_CLASS = """\
# Class number {n}: a resource, a conditional, a case, interpolation and a call.
class bench::c{n} (
  String $name_{n} = 'value {n}',
  Integer $count = {n},
  Optional[Hash[String, Integer]] $extra = undef,
) {{
  $path = "/srv/app{n}/${{name_{n}}}"
  file {{ "bench-{n}":
    ensure  => file,
    path    => $path,
    content => "count=${{count}} of {n}\\n",
    mode    => '0644',
  }}
  if $count > 10 and $extra =~ Hash {{
    notify {{ "many {n}": message => join(keys($extra), ',') }}
  }} elsif $count == 0 {{
    warning('none')
  }}
  case $facts['os']['family'] {{
    'Debian': {{ $pkg = 'apt' }}
    default: {{ $pkg = undef }}
  }}
  $mapped = [1, 2, 3].map |$v| {{ $v * {n} }}
}}
"""


@_shape
def make_classes(size: int) -> str:
    """Many distinct classes, each with a resource, conditionals, a case, interpolation and a lambda."""
    return _pieces(size, lambda n: _CLASS.format(n=n))


@_shape
def make_hash(size: int) -> str:
    """One huge hash of strings, an entry per line."""
    return "$h = {\n" + _pieces(size - 8, lambda i: f"  'key{i}' => \"value number {i}\",\n") + "}\n"


@_shape
def make_heredoc(size: int) -> str:
    """Long heredocs (about 50 KB each) with interpolation, each assigned and used."""
    body = "".join(
        f"    line {k} of the text with ${{name}} and ${{facts['os']['family']}}\n" for k in range(800)
    )
    return "$name = 'x'\n" + _pieces(
        size, lambda n: f'$doc{n} = @("END{n}"/L)\n{body}    | END{n}\nnotice($doc{n})\n'
    )


@_shape
def make_nested(size: int) -> str:
    """Blocks nested 60 deep (ifs, arrays in hashes, calls), repeated."""
    depth = 60
    opening = "".join(f"{'  ' * d}if $v{d} {{\n" for d in range(depth))
    inner = "  " * depth + "$z = {'a' => [[[[[[1, {'b' => [2, [3]]}]]]]]]}\n"
    closing = "".join(f"{'  ' * d}}}\n" for d in reversed(range(depth)))
    block = opening + inner + closing
    count = max(1, size // len(block))
    return block * count


@_shape
def make_corpus(size: int) -> str:
    """The Debian corpus' manifests our parser accepts without error, concatenated to ``size``."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from puppet_xpp.grammar.parser import parse
    from tests.conformance.corpus import corpus_files

    texts: list[str] = []
    for path in corpus_files("pp"):
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        result = parse(text, path)
        if result.program is not None and not result.errors:
            texts.append(text if text.endswith("\n") else text + "\n")
    if not texts:
        raise SystemExit("no corpus (install it, or leave out the corpus shape)")
    parts: list[str] = []
    total = 0
    while total < size:
        for text in texts:
            parts.append(text)
            total += len(text)
            if total >= size:
                break
    return "".join(parts)


def _run(command: list[str], scratch: str) -> tuple[float, float, float, int]:
    """Wall seconds, CPU seconds (user + system), peak RSS in MB and exit status of one child process.
    The CPU time is the child's own rusage (it says what the wall time means on a loaded machine); the
    peak is the child's own VmHWM, which it writes at its end (``--peak``): wait4's ru_maxrss is no
    measure, Linux carries the forking process's peak across fork + exec."""
    peak_file = os.path.join(scratch, "peak.kb")
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--peak", peak_file, "--", *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _pid, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    with open(peak_file, encoding="ascii") as handle:
        peak_kb = int(handle.read())
    return elapsed, usage.ru_utime + usage.ru_stime, peak_kb / 1024, process.returncode


def _puppet(command: list[str]) -> tuple[float, float, float, int]:
    """Puppet's own run, measured by wait4 (its ru_maxrss: the bench's parent is small, and Ruby's peak
    is far above it)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def peak_child(peak_file: str, command: list[str]) -> int:
    """The child's side of :func:`_run`: the command (``puppet-xpp MODE ...`` or ``--analyse FILE``)
    in this process, then its peak RSS (VmHWM, kB) written to ``peak_file``."""
    try:
        if command[0] == "--analyse":
            code = analyse(command[1])
        else:
            from puppet_xpp.server.cli.main import main as cli_main

            code = cli_main(command)
    finally:
        with open("/proc/self/status", encoding="ascii") as status:
            kb = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
        with open(peak_file, "w", encoding="ascii") as peak:
            peak.write(kb)
    return code


def analyse(path: str) -> int:
    """Mode ``server``: the analysis the language server makes of a document opened with this text."""
    from puppet_xpp.grammar.check import CheckConfig
    from puppet_xpp.server.analysis.document import Document, to_lsp_diagnostics

    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    document = Document("file://" + path, text, 1, CheckConfig(file=path))
    to_lsp_diagnostics(document.analysis())
    return 0


def _commands(mode: str, path: str, scratch: str) -> list[str]:
    """The arguments of one run of :func:`peak_child`."""
    if mode == "server":
        return ["--analyse", path]
    if mode == "compile":
        return ["compile", path, "-o", os.path.join(scratch, os.path.basename(path) + ".xpp")]
    return [mode, path]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--size", type=float, default=5.0, help="megabytes per input (default 5)")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--modes", default="validate,compile,lint,server")
    ap.add_argument("--no-puppet", action="store_true", help="leave out puppet parser validate")
    ap.add_argument("--write", metavar="DIR", help="only write the inputs to DIR")
    ap.add_argument("--analyse", metavar="FILE", help=argparse.SUPPRESS)  # (mode server's child)
    ap.add_argument("--peak", metavar="FILE", help=argparse.SUPPRESS)  # (a measured child: _run)
    ap.add_argument("command", nargs="*", help=argparse.SUPPRESS)
    ns = ap.parse_args(argv)
    if ns.peak:
        return peak_child(ns.peak, ns.command)
    if ns.analyse:
        return analyse(ns.analyse)
    size = int(ns.size * 1_000_000)
    shapes = [s for s in ns.shapes.split(",") if s]
    modes = [m for m in ns.modes.split(",") if m]
    with tempfile.TemporaryDirectory(prefix="bench-huge-") as scratch:
        directory = ns.write or scratch
        os.makedirs(directory, exist_ok=True)
        paths = {}
        for shape in shapes:
            path = os.path.join(directory, f"huge-{shape}.pp")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(SHAPES[shape](size))
            paths[shape] = path
        if ns.write:
            for path in paths.values():
                print(f"{path}  {os.path.getsize(path)} bytes")
            return 0
        print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
        print(
            f"{'shape':9}{'bytes':>10}  {'command':24}{'seconds':>9}{'cpu s':>8}{'peak MB':>9}{'exit':>6}{'load':>7}"
        )
        for shape, path in paths.items():
            nbytes = os.path.getsize(path)
            for mode in modes:
                label = f"puppet-xpp {mode}"
                load = os.getloadavg()[0]
                seconds, cpu, peak, status = _run(_commands(mode, path, scratch), scratch)
                print(
                    f"{shape:9}{nbytes:>10}  {label:24}{seconds:9.2f}{cpu:8.2f}{peak:9.0f}{status:>6}"
                    f"{load:>7.2f}",
                    flush=True,
                )
            if not ns.no_puppet:
                label = "puppet parser validate"
                load = os.getloadavg()[0]
                seconds, cpu, peak, status = _puppet(["puppet", "parser", "validate", path])
                print(
                    f"{shape:9}{nbytes:>10}  {label:24}{seconds:9.2f}{cpu:8.2f}{peak:9.0f}{status:>6}"
                    f"{load:>7.2f}",
                    flush=True,
                )
        print(f"load average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
