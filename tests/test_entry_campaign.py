"""Seeded, time-bounded mutation campaign over the command-line entry points (issue 10 item 9, the
entry-point part; the parser/validator/incremental campaign is tests/test_parser_robustness.py's).

Corpus ``.pp`` and ``.epp`` files are damaged (deletions, inserted brackets/quotes/``<%``/``%>``/heredoc
markers, truncation, byte flips, invalid UTF-8, NUL, CR and CRLF line ends, a byte order mark), put into
an environment, and run through ``--validate`` (text and JSON), ``--dump`` and ``--compile`` in both
encodings, whose every ``.xpp`` is read back.  Checked: no exception escapes (no traceback, no
``INTERNAL_ERROR``), exit statuses are 0 or 1, every output line is valid (JSON parses, ``.xpp`` reads),
and no input takes longer than the per-input bound.  Where Puppet's parser reports an error for the
damaged file (read by Ruby as Puppet reads it: the oracle), ``--validate``'s first diagnostic for it is
that error, at its position: the command line's own reading of bytes (BOM, CR, NUL, invalid UTF-8) is
compared with Puppet's too.  ``PUPPET_XPP_CAMPAIGN_SECONDS`` (default 40) bounds the whole run;
``PUPPET_XPP_CAMPAIGN_SEED`` picks the seed (default: fixed, so CI is reproducible).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import signal
import time
from pathlib import Path

import pytest

from puppet_xpp.server.cli import compile as cmd_compile
from puppet_xpp.server.cli import dump as cmd_dump
from puppet_xpp.server.cli import validate as cmd_validate
from puppet_xpp.xpp.result import read_xpp
from tests.conformance.corpus import corpus_files
from tests.conformance.oracle import Oracle, ruby_available

SECONDS = float(os.environ.get("PUPPET_XPP_CAMPAIGN_SECONDS", "40"))
SEED = int(os.environ.get("PUPPET_XPP_CAMPAIGN_SEED", "20261124"))
PER_INPUT = 10.0  # seconds: a bound no sane input gets near (the corpus' largest file takes < 0.5 s)
BATCH = 12

INSERTS = [
    b"{",
    b"}",
    b"(",
    b")",
    b"[",
    b"]",
    b"'",
    b'"',
    b"<%",
    b"%>",
    b"<%=",
    b"-%>",
    b"@(END)",
    b"\nEND\n",
    b'@("X":epp)',
    b"${",
    b"$",
    b"|",
    b"=>",
    b"\\",
    b"/*",
    b"#",
]


def _corpus():
    pp = [Path(p) for p in corpus_files("pp") if os.path.getsize(p) < 40_000]
    epp = [Path(p) for p in corpus_files("epp") if os.path.getsize(p) < 40_000]
    if not pp:
        pytest.skip("the Debian module corpus is not installed")
    return pp, epp


def mutate(data: bytes, rnd: random.Random) -> bytes:
    kind = rnd.randrange(11)
    n = len(data)
    i = rnd.randrange(n + 1) if n else 0
    if kind == 0 and n:  # deletion
        return data[:i] + data[i + rnd.randrange(1, 40) :]
    if kind == 1:
        return data[:i] + rnd.choice(INSERTS) + data[i:]
    if kind == 2:  # truncation
        return data[:i]
    if kind == 3 and n:  # byte flips
        b = bytearray(data)
        for _ in range(rnd.randrange(1, 4)):
            b[rnd.randrange(n)] = rnd.randrange(256)
        return bytes(b)
    if kind == 4:  # invalid UTF-8
        return (
            data[:i]
            + rnd.choice([b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf8\x88\x80\x80"])
            + data[i:]
        )
    if kind == 5:
        return data[:i] + b"\x00" + data[i:]
    if kind == 6:
        return data.replace(b"\n", b"\r")
    if kind == 7:
        return data.replace(b"\n", b"\r\n")
    if kind == 8:
        return rnd.choice([b"\xef\xbb\xbf", b"\xfe\xff", b"\xff\xfe\x00\x00"]) + data
    if kind == 9 and n:  # a random slice repeated
        j = min(n, i + rnd.randrange(1, 200))
        return data[:j] + data[i:j] * rnd.randrange(2, 5) + data[j:]
    return data[:i] + bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 8))) + data[i:]


@contextlib.contextmanager
def bounded(seconds: float, what: str):
    def hit(_sig, _frame):
        raise TimeoutError(f"{what}: over {seconds} s")

    old = signal.signal(signal.SIGALRM, hit)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _no_failure(text: str, where: str) -> None:
    assert "Traceback" not in text, where
    assert "INTERNAL_ERROR" not in text and "Internal error (" not in text, f"{where}:\n{text[-2000:]}"


def _run_batch(env: Path, files: list[Path], epps: list[Path], capsys) -> dict[str, list]:
    """Runs the entry points; returns --validate's JSON diagnostics by file."""
    names = ", ".join(p.name for p in files + epps)
    n = len(files) + len(epps)
    paths = [str(p) for p in files + epps]
    with bounded(PER_INPUT * n, f"--validate of {names}"):
        out = io.StringIO()
        rc = cmd_validate.main([*paths, "--format", "json"], out=out)
    assert rc in (0, 1), out.getvalue()
    found = {}
    for line in out.getvalue().splitlines():
        row = json.loads(line)
        found[row["file"]] = row["diagnostics"]
    _no_failure(out.getvalue(), "--validate --format json")
    with bounded(PER_INPUT * n, f"--validate (text) of {names}"):
        out = io.StringIO()
        rc = cmd_validate.main(paths, out=out)
    assert rc in (0, 1)
    out.getvalue().encode("utf-8")  # valid UTF-8 text
    with bounded(PER_INPUT * n, f"--dump of {names}"):
        rc = cmd_dump.main([str(p) for p in files] + ["--format", "jsonl"])
    got = capsys.readouterr()
    assert rc in (0, 1), got.err
    _no_failure(got.out + got.err, "--dump")
    for line in got.out.splitlines():
        json.loads(line)
    for fmt in ("msgpack", "json"):
        with bounded(PER_INPUT * n, f"--compile --format {fmt} of {names}"):
            out, err = io.StringIO(), io.StringIO()
            rc = cmd_compile.main(
                [str(env), "--format", fmt, "-j1", "-q", "--strict", "warning"], out=out, err=err
            )
        assert rc in (0, 1), out.getvalue() + err.getvalue()
        _no_failure(out.getvalue() + err.getvalue(), f"--compile {fmt}")
        xpps = list((env / ".xpp").rglob("*.xpp"))
        assert len(xpps) == len(files), (len(xpps), len(files))
        for x in xpps:
            with bounded(PER_INPUT, f"reading {x}"):
                data = x.read_bytes()
                assert data.startswith(f"application/vnd.puppet.pcore+{fmt};".encode()), x
                read_xpp(data)
    return found


def _differences(found: dict[str, list], paths: list[Path], oracle: Oracle) -> tuple[int, list[tuple]]:
    """(files compared, those whose first --validate diagnostic is not the error Puppet's parser
    reports for them)."""
    answers = oracle.request_many("parse", [{"file": str(p)} for p in paths])
    out = []
    compared = 0
    for p, want in zip(paths, answers):
        if want.get("ok") or want.get("class") not in ("Puppet::ParseErrorWithIssue", "Puppet::ParseError"):
            continue  # accepted (validation is another test's) or Puppet failed outside its parser
        compared += 1
        diags = found.get(str(p), [])
        first = next((d for d in diags if d["severity"] == "error"), None)
        got = None if first is None else (first["message"], first["line"], first["column"])
        exp = (want["error"], want.get("line"), want.get("pos"))
        if want.get("line") is None and got is not None:
            got = (got[0], None, None)
        if got != exp:
            out.append((p.read_bytes(), got, exp))
    return compared, out


def test_entry_points_on_damaged_corpus(tmp_path, capsys):
    pp, epp = _corpus()
    rnd = random.Random(SEED)
    deadline = time.monotonic() + SECONDS
    oracle = Oracle.get() if ruby_available() else None
    inputs = compared = 0
    differ: list[tuple] = []
    k = 0
    while time.monotonic() < deadline:
        env = tmp_path / f"env{k}"
        man = env / "modules" / "m" / "manifests"
        tpl = env / "modules" / "m" / "templates"
        man.mkdir(parents=True)
        tpl.mkdir(parents=True)
        files, epps = [], []
        for j in range(BATCH):
            src = rnd.choice(pp)
            data = src.read_bytes()
            for _ in range(rnd.randrange(1, 4)):
                data = mutate(data, rnd)
            f = man / f"f{j}.pp"
            f.write_bytes(data)
            files.append(f)
        for j in range(BATCH // 3):
            data = rnd.choice(epp).read_bytes() if epp else b"<%= $x %>\n"
            for _ in range(rnd.randrange(1, 4)):
                data = mutate(data, rnd)
            f = tpl / f"t{j}.epp"
            f.write_bytes(data)
            epps.append(f)
        found = _run_batch(env, files, epps, capsys)
        if oracle is not None:
            n, bad = _differences(found, files + epps, oracle)
            compared += n
            differ.extend(bad)
        inputs += len(files) + len(epps)
        k += 1
    print(
        f"entry-point campaign: seed {SEED}, {inputs} damaged inputs in {k} environments;"
        f" {compared} with a Puppet parse error, first error compared: {len(differ)} differ"
    )
    assert inputs >= BATCH
    assert not differ, differ[:5]
