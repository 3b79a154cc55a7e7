"""The runtime's Ruby loader (runtime/xpp/lib/puppet_x/xpp/loader.rb) accepts exactly what ``puppet-xpp
--verify`` accepts (issue 26, items 3-5): a seeded, time-bounded differential campaign over damaged real
``.xpp`` payloads, and the issue's samples as fixed cases.

The payloads are corpus manifests compiled by our writer (and two with diagnostics), damaged by
tests/runtime/xpp_mutations.py (byte flips, truncation, counts, lengths, extension codes, shared nodes,
cycles, type swaps, positions, operators, definitions, the 8-byte allocation bomb), their checksum
recomputed, removed or kept stale.  Each one is judged in process by ``--verify``'s reader
(:func:`xpp.verify.verify_bytes`) and by the loader in one long-running Ruby process per Puppet (7.23 and
OpenVox 8), with and without the msgpack gem (Puppet Server's JRuby has none): the verdicts (accepted or
refused) must be the same, and the loader must never raise anything but its FormatError.

    PUPPET_XPP_FUZZ_SECONDS=30 PUPPET_XPP_FUZZ_CASES=15000 PUPPET_XPP_FUZZ_SEED=26
        the Python side's time budget, the most documents it makes, the seed
"""

from __future__ import annotations

import os
import random
import resource
import struct
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from puppet_xpp.xpp import envelope
from puppet_xpp.xpp.compile import compile_file
from puppet_xpp.xpp.verify import verify_bytes
from tests.conformance.puppets import missing_reason, ruby_command
from tests.runtime import xpp_mutations as mutations

REPO = Path(__file__).resolve().parents[1]
RUNTIME_LIB = str(REPO / "runtime" / "xpp" / "lib")
DRIVER = str(REPO / "tests" / "runtime" / "loader_driver.rb")
CORPUS = Path("/usr/share/puppet/modules")
SECONDS = float(os.environ.get("PUPPET_XPP_FUZZ_SECONDS", "30"))
CASES = int(os.environ.get("PUPPET_XPP_FUZZ_CASES", "15000"))
SEED = int(os.environ.get("PUPPET_XPP_FUZZ_SEED", "26"))
MEMORY_LIMIT = 3 << 30  # the Ruby process's address space: an allocation bomb fails fast instead of swapping

PUPPETS = [
    pytest.param(p, marks=pytest.mark.skipif(missing_reason(p) is not None, reason=str(missing_reason(p))))
    for p in ("7.23", "8")
]

# two manifests whose documents hold diagnostics (a validation error keeps the program; a warning)
WITH_DIAGNOSTICS = {
    "errors.pp": "class errors {\n  $x = 1\n  $x = 2\n  notice($x)\n}\nclass errors::b inherits errors {}\n"
    "define errors::d($a, $a) {}\n",
    "warnings.pp": 'class warnings {\n  $y = "\\q"\n  notice("é ${y}")\n}\n',
}


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def ruby_verdicts(puppet: str, mode: str, docs: list[bytes]) -> list[str]:
    """The loader's verdict line for each document (see tests/runtime/loader_driver.rb)."""
    stream = b"".join(struct.pack(">I", len(d)) + d for d in docs)
    out = subprocess.run(
        ruby_command(puppet) + [DRIVER, RUNTIME_LIB, mode],
        input=stream,
        capture_output=True,
        timeout=600,
        preexec_fn=_limit_memory,
    )
    assert out.returncode == 0, out.stderr.decode(errors="replace")[-3000:]
    lines = out.stdout.decode("utf-8", "replace").split("\n")[:-1]
    assert len(lines) == len(docs), out.stderr.decode(errors="replace")[-3000:]
    return lines


def corpus_payloads(tmp: Path, count: int = 70, max_size: int = 12_000) -> list[bytes]:
    """Payloads of a seeded sample of corpus manifests, compiled by our writer, and of WITH_DIAGNOSTICS."""
    files = sorted(p for p in CORPUS.glob("*/manifests/**/*.pp") if 0 < p.stat().st_size <= max_size)
    rng = random.Random(SEED)
    chosen = rng.sample(files, min(count, len(files)))
    for name, text in WITH_DIAGNOSTICS.items():
        (tmp / name).write_text(text, encoding="utf-8")
        chosen.append(tmp / name)
    out = []
    for p in chosen:
        data, _rows = compile_file(str(p), str(p), strict="warning", puppet_version="7.23")
        out.append(envelope.unwrap(data)[2])
    return out


def python_accepts(doc: bytes) -> bool:
    return not verify_bytes(doc)


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    """[(what, document, --verify accepts it)]: as many as SECONDS allow, at least 400, at most CASES."""
    payloads = corpus_payloads(tmp_path_factory.mktemp("fuzz"))
    scanned = [(p, mutations.scan(p)) for p in payloads]
    assert any(any(v.code == mutations.MAP_START for v in vals) for _, vals in scanned)  # diagnostics
    rng = random.Random(SEED)
    cases = []
    for p in payloads:  # every original is accepted by both
        cases.append(("original", envelope.wrap(p, "msgpack", checksum=True), True))
    start = time.monotonic()
    while len(cases) < 400 or (time.monotonic() - start < SECONDS and len(cases) < CASES):
        payload, vals = rng.choice(scanned)
        kind, damaged = mutations.mutate(rng, payload, vals)
        doc = mutations.wrap(rng, kind, damaged, payload)
        cases.append((kind, doc, python_accepts(doc)))
    return cases


@pytest.mark.parametrize("mode", ["gem", "nogem"])
@pytest.mark.parametrize("puppet", PUPPETS)
def test_the_loader_and_verify_agree_on_damaged_payloads(campaign, puppet, mode):
    verdicts = ruby_verdicts(puppet, mode, [doc for _, doc, _ in campaign])
    differ = []
    seen: Counter[tuple[str, str]] = Counter()
    for (kind, doc, py_ok), line in zip(campaign, verdicts):
        assert not line.startswith("X"), f"{kind}: the loader raised {line[2:]} on {doc[:300].hex()}"
        rb_ok = line == "A"
        seen[(kind, "accepted" if py_ok else "refused")] += 1
        if rb_ok != py_ok:
            differ.append((kind, py_ok, line, verify_bytes(doc)[:2], doc))
    summary = ", ".join(f"{k} {v}: {n}" for (k, v), n in sorted(seen.items()))
    assert not differ, (
        f"{len(differ)} of {len(campaign)} differ, e.g. "
        + "; ".join(
            f"[{k}] --verify {'accepts' if ok else 'refuses'} ({probs}), the loader: {line}"
            for k, ok, line, probs, _ in differ[:6]
        )
        + f"\n(campaign: {summary})"
    )
    # the campaign reaches both verdicts for the kinds of damage the issue names
    for kind in ("dag", "cycle", "typeswap", "position", "count", "nomem", "definitions", "operator"):
        assert seen[(kind, "refused")] > 0, summary
    assert seen[("original", "accepted")] >= 70 and len(campaign) >= 400, summary


# ---------------------------------------------------------------------------------------------------------
# the issue's samples


def _program_payload(tmp: Path, text: str) -> bytes:
    p = tmp / "site.pp"
    p.write_text(text, encoding="utf-8")
    data, _rows = compile_file(str(p), str(p), strict="warning", puppet_version="7.23")
    return envelope.unwrap(data)[2]


def _nodes(vals, name):
    return [v for v in vals if v.name == "Puppet::AST::" + name]


def samples(tmp: Path) -> dict[str, bytes]:
    """The issue's damaged documents (checksums recomputed), each refused by --verify."""
    out = {"8-byte allocation bomb": envelope.wrap(mutations.NOMEM, "msgpack", checksum=True)}
    tab = mutations.TABULATION

    def doc(payload: bytes) -> bytes:
        return envelope.wrap(payload, "msgpack", checksum=True)

    # a shared node: the second element of [[1, 2], [3]] refers to the first (a DAG)
    p = _program_payload(tmp, "$x = [[1, 2], [3]]\nnotice($x)\n")
    vals = mutations.scan(p)
    inner = _nodes(vals, "LiteralList")[1:]
    out["shared node (DAG)"] = doc(
        p[: inner[1].start] + mutations.ext(tab, bytes([inner[0].stab])) + p[inner[1].end :]
    )
    # a node that contains itself
    out["cyclic node"] = doc(
        p[: inner[1].start] + mutations.ext(tab, bytes([inner[1].parent.stab])) + p[inner[1].end :]
    )
    # $x = [1] with the LiteralInteger replaced by a string
    p = _program_payload(tmp, "$x = [1]\nnotice($x)\n")
    vals = mutations.scan(p)
    lit = _nodes(vals, "LiteralInteger")[0]
    out["string in place of a node"] = doc(p[: lit.start] + mutations.mp_str("a") + p[lit.end :])
    # an operator outside its set
    op = next(v for v in vals if v.kind == "str" and v.arg == "=")
    out["operator outside its set"] = doc(p[: op.start] + mutations.mp_str("<>") + p[op.end :])
    # a position outside the source
    length = _nodes(vals, "LiteralInteger")[0].kids[2]
    out["position outside the source"] = doc(p[: length.start] + mutations.mp_int(400) + p[length.end :])
    # an integer in Program.definitions
    p = _program_payload(tmp, "class a {}\nclass b {}\n")
    vals = mutations.scan(p)
    defs = _nodes(vals, "Program")[0].kids[2]
    first = defs.kids[0]
    out["integer in definitions"] = doc(p[: first.start] + mutations.mp_int(1) + p[first.end :])
    out["definition listed twice"] = doc(
        p[: first.start] + p[defs.kids[1].start : defs.kids[1].end] + p[first.end :]
    )
    # a diagnostic argument that contains itself
    p = _program_payload(tmp, "$x = 1\n$x = 2\n")
    vals = mutations.scan(p)
    args = [
        v for v in vals if v.code == mutations.MAP_START and v.parent and v.parent.code == mutations.MAP_START
    ]
    assert args, "no diagnostic arguments"
    a = next(v for v in args if v.kids and v.kids[0].wtab is not None)
    # one more entry: the first key again (a reference to its string), the map itself as its value
    more = mutations.ext(mutations.MAP_START, mutations.mp_int(len(a.kids) // 2 + 1))
    entry = mutations.ext(mutations.INNER_TABULATION, mutations.mp_int(a.kids[0].wtab))
    entry += mutations.ext(tab, mutations.mp_int(a.stab))
    out["cyclic diagnostic argument"] = doc(p[: a.start] + more + p[a.head_end : a.end] + entry + p[a.end :])
    return out


@pytest.mark.parametrize("puppet", PUPPETS)
def test_the_issue_samples_are_refused(tmp_path, puppet):
    cases = samples(tmp_path)
    for what, doc in cases.items():
        assert verify_bytes(doc), f"--verify accepts the {what}"
    for mode in ("gem", "nogem"):
        verdicts = ruby_verdicts(puppet, mode, list(cases.values()))
        for what, line in zip(cases, verdicts):
            assert line.startswith("R "), f"{mode}: the loader gives {line!r} for the {what}"
