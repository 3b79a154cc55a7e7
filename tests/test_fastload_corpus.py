"""The C reader ``xpp._fastload`` on real and mutated documents, all drawn from the parsed corpus (one module
fixture, parsed once):

* every corpus file: our parse -> our writer -> the C reader gives a Program ``==`` our parse, with one
  Locator object and ``definitions`` pointing into the body; Puppet's own bytes for corpus files read the
  same through both readers;
* differential fuzz (>= 20,000 mutated documents: truncations, bit flips, splices, item-level edits): the
  C reader accepts exactly what the complete reader accepts and gives the same value (types, floats by
  bits, and which objects are shared), and ``loads`` raises only XppFormatError;
* no leak on repeated loads.
"""

from __future__ import annotations

import base64
import random
import struct
import tracemalloc

import pytest

from puppet_xpp.grammar import ast
from puppet_xpp.xpp import pcore, result
from puppet_xpp.xpp.pcore import XppFormatError
from tests.conformance.corpus import corpus_files, corpus_modulepath
from tests.conformance.oracle import OracleError
from tests.fastload_helpers import (
    REJECT,
    agree,
    array,
    c_load,
    complete,
    hmap,
    i,
    marker,
    require_extension,
    s,
    same,
)
from tests.pcore_helpers import check_identity

_fastload = require_extension()


# ------------------------------------------------------------------------------------------------------
# corpus round trip and Puppet's bytes


@pytest.fixture(scope="module")
def corpus_docs():
    from puppet_xpp.grammar.parser import parse
    from puppet_xpp.grammar.validator import validate

    files = corpus_files("pp") + corpus_files("epp")
    if not files:
        pytest.skip("corpus not installed")
    modulepath = corpus_modulepath()
    out = []
    for path in files:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8", "surrogateescape")
        r = parse(text, path)
        diags = list(r.diagnostics)
        if r.program is not None:
            diags += validate(r.program, file=path, modulepath=modulepath)
        out.append((path, r, diags))
    return out


def test_corpus_round_trip(corpus_docs):
    """Every corpus file: our writer -> the C reader -> == our parse (and the diagnostics)."""
    programs = 0
    for path, r, diags in corpus_docs:
        doc = result.write_xpp(r.program, diags, "msgpack", locator=r.locator)
        payload = doc[doc.index(b"\n\n") + 2 :]
        value = c_load(payload)
        assert value is not REJECT, path
        assert isinstance(value, pcore.PObject) and value.type_name == result.TYPE_NAME
        prog, records = result.read_xpp(doc)
        assert records == [result.diagnostic_record(d, r.locator) for d in diags]
        if r.program is None:
            assert prog is None
            continue
        programs += 1
        assert prog == r.program, path
        check_identity(prog)
        assert prog.locator.line_index == r.program.locator.line_index
        bare = c_load(pcore.dumps(r.program))
        assert bare == r.program, path
        check_identity(bare)
        assert same(bare, complete(pcore.dumps(r.program)))
    assert programs > 800


@pytest.fixture(scope="module")
def puppet_payloads(oracle):
    files = (corpus_files("pp") + corpus_files("epp"))[::15]
    if not files:
        pytest.skip("corpus not installed")
    out = []
    for what in ("program", "parse_result"):
        answers = oracle.call_many(
            "pcore_write",
            [
                {
                    "file": f,
                    "format": "msgpack",
                    "what": what,
                    "diagnostics": [
                        {"severity": "warning", "message": "m", "arguments": {"a": [1, 2.5, None]}}
                    ],
                }
                for f in files
            ],
        )
        out.extend(base64.b64decode(a["bytes"]) for a in answers if not isinstance(a, OracleError))
    return out


def test_puppet_bytes(puppet_payloads):
    """Pcore msgpack written by Puppet's own serializer reads the same through both readers."""
    assert len(puppet_payloads) > 100
    for data in puppet_payloads:
        v = agree(data)
        assert v is not REJECT
        prog = v if isinstance(v, ast.Program) else v.attrs["program"]
        check_identity(prog)


# ------------------------------------------------------------------------------------------------------
# differential fuzz


def _items(data: bytes) -> list:
    """(start, end) of each top-level msgpack item of a well-formed stream."""
    out = []
    p, n = 0, len(data)
    while p < n:
        b = data[p]
        q = p + 1
        if b < 0x80 or b >= 0xE0 or b in (0xC0, 0xC2, 0xC3):
            pass
        elif 0xA0 <= b <= 0xBF:
            q += b & 0x1F
        elif 0xCC <= b <= 0xD3:
            q += (1, 2, 4, 8)[(b - 0xCC) % 4]
        elif b == 0xCA:
            q += 4
        elif b == 0xCB:
            q += 8
        elif 0xD9 <= b <= 0xDB:
            k = (1, 2, 4)[b - 0xD9]
            q += k + int.from_bytes(data[q : q + k], "big")
        elif 0xD4 <= b <= 0xD8:
            q += 1 + (1, 2, 4, 8, 16)[b - 0xD4]
        elif 0xC7 <= b <= 0xC9:
            k = (1, 2, 4)[b - 0xC7]
            q += k + 1 + int.from_bytes(data[q : q + k], "big")
        else:
            raise ValueError(f"unexpected byte {b:#x}")
        out.append((p, q))
        p = q
    return out


_INSERTS = [
    b"\xc0",
    b"\xc2",
    b"\xc3",
    b"\x00",
    b"\x7f",
    b"\xff",
    b"\xa0",
    b"\xa1=",
    b"\xcb" + struct.pack(">d", 0.5),
    b"\xd4\x10\x00",
    b"\xd4\x10\x01",
    b"\xd4\x11\x00",
    b"\xd4\x01\x00",
    b"\xd4\x01\x01",
    b"\xd4\x00\x00",
    b"\xd4\x00\x03",
    b"\xd4\x13\x01",
    b"\xd4\x30\xa0",
    b"\xcf\xff",
    b"\xdb\xff\xff\xff\xff",
    b"\xc7\xff\x12",
    marker(["Pcore", "AnyType"], 0),
    marker([0, 1, "Nop"], 3),
    marker([0, 1, 2], 1),
]


def _mutate(rng: random.Random, data: bytes, pool: list) -> bytes:
    b = bytearray(data)
    op = rng.randrange(13)
    if op == 0 and b:  # truncation
        return bytes(b[: rng.randrange(len(b))])
    if op == 1 and b:  # bit flips
        for _ in range(rng.randint(1, 3)):
            k = rng.randrange(len(b))
            b[k] ^= 1 << rng.randrange(8)
        return bytes(b)
    if op == 2 and b:  # bytes overwritten
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if op == 3:  # splice with another document
        other = rng.choice(pool)
        k, j = rng.randrange(len(b) + 1), rng.randrange(len(other) + 1)
        return (
            bytes(b[:k])
            + other[j : rng.randrange(j, len(other) + 1)]
            + bytes(b[rng.randrange(k, len(b) + 1) :])
        )
    if op == 4 and b:  # delete / duplicate a byte range
        k = rng.randrange(len(b))
        j = min(len(b), k + rng.randint(1, 24))
        return bytes(b[:k] + b[j:]) if rng.random() < 0.5 else bytes(b[:j] + b[k:j] + b[j:])
    if op == 5:  # insert an interesting item
        k = rng.randrange(len(b) + 1)
        return bytes(b[:k]) + rng.choice(_INSERTS) + bytes(b[k:])
    # item-level edits (on the item boundaries of a well-formed stream)
    try:
        items = _items(data)
    except (ValueError, IndexError):
        items = []
    if len(items) < 2:
        return bytes(b[:-1])
    (s1, e1), (s2, e2) = sorted(rng.sample(items, 2))
    if op == 6:  # delete an item
        return data[:s1] + data[e1:]
    if op == 7:  # duplicate an item
        return data[:e1] + data[s1:e1] + data[e1:]
    if op == 8:  # swap two items
        return data[:s1] + data[s2:e2] + data[e1:s2] + data[s1:e1] + data[e2:]
    if op == 9:  # an item from another document
        other = rng.choice(pool)
        try:
            oi = _items(other)
        except (ValueError, IndexError):
            return data
        a, z = rng.choice(oi)
        return data[:s1] + other[a:z] + data[e1:]
    if op == 10:  # a tabulation/count payload changed
        exts = [(p, q) for p, q in items if data[p] == 0xD4]
        if not exts:
            return data
        p, q = rng.choice(exts)
        return (
            data[: p + 2]
            + bytes([rng.choice((0, 1, 2, 3, 5, 8, 13, 40, 0x7F, rng.randrange(256)))])
            + data[q:]
        )
    if op == 11:  # an integer item replaced
        ints = [(p, q) for p, q in items if data[p] < 0x80 or data[p] >= 0xE0 or 0xCC <= data[p] <= 0xD3]
        p, q = rng.choice(ints or items)
        return (
            data[:p]
            + i(rng.choice((0, 1, -1, 2, 127, 128, -33, 1 << 31, (1 << 63) - 1, -(1 << 63))))
            + data[q:]
        )
    # a string item replaced
    strs = [(p, q) for p, q in items if 0xA0 <= data[p] <= 0xBF or 0xD9 <= data[p] <= 0xDB]
    p, q = rng.choice(strs or items)
    return data[:p] + s(rng.choice(("", "=", "x", "regular", "+>", "Nop", "\udcff\xe9", "a" * 40))) + data[q:]


def _seeds(corpus_docs) -> list:
    pool = []
    rng = random.Random(5)
    small = [x for x in corpus_docs if x[1].program is not None and len(x[1].locator.string) < 1500]
    for _path, r, diags in rng.sample(small, min(120, len(small))):
        pool.append(result.parse_result_payload(r.program, diags, "msgpack", locator=r.locator))
        pool.append(pcore.dumps(r.program))
    for _path, r, diags in corpus_docs:
        if r.program is None and len(pool) < 260:
            pool.append(result.parse_result_payload(None, diags, "msgpack", locator=r.locator))
    return pool


def test_differential_fuzz(corpus_docs):
    rng = random.Random(20240611)
    pool = _seeds(corpus_docs)
    for d in pool:
        assert agree(d) is not REJECT
    cases = accepted = 0
    while cases < 22000:
        data = rng.choice(pool)
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            data = _mutate(rng, data, pool)
        v = agree(data)
        if v is not REJECT:
            accepted += 1
            if rng.random() < 0.05:
                pool.append(data)  # mutate accepted mutants further
        try:
            pcore.loads(data)
        except XppFormatError:
            pass
        cases += 1
    assert cases >= 20000
    # both outcomes are well represented
    print("accepted", accepted, "of", cases)
    assert 2000 < accepted < cases - 2000, accepted


# ------------------------------------------------------------------------------------------------------
# references are not leaked


def test_no_leak_on_repeated_loads(corpus_docs):
    rng = random.Random(3)
    pool = _seeds(corpus_docs)[:40]
    docs = pool + [_mutate(rng, rng.choice(pool), pool) for _ in range(200)]
    docs += [b"\xd4\x10\x05\xc0\xc0", marker(["Pcore", "AnyType"], 0) + b"\xc0", hmap(1) + array(0) + i(1)]

    def run():
        for d in docs:
            _fastload.load(d)

    run()
    tracemalloc.start()
    try:
        run()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(30):
            run()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # ~7,000 loads: a leak of even one small object per load would show as hundreds of KB
    assert grown < 64 * 1024, grown
