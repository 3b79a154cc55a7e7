"""Malformed input of any kind makes the readers (msgpack, JSON, envelope) raise only XppFormatError, with no
hang and bounded memory: a table of specific malformed streams, a mutation fuzz over valid documents (the
pure-Python msgpack tokenizer agreeing with the default one), and a structure-aware fuzz of random token
streams.

Apart because these are robustness properties checked by generated input, not comparisons with Puppet.
"""

from __future__ import annotations

import random
import time

import pytest

from puppet_xpp.grammar import ast
from puppet_xpp.xpp import envelope, pcore, result
from puppet_xpp.xpp.pcore import XppFormatError, XppWriteError
from tests.pcore_helpers import CASES, DIAGS, FORMATS

# ------------------------------------------------------------------------------------------------------
# malformed input: only XppFormatError, no hang, bounded memory


def test_specific_malformed_inputs():
    cases = [
        b"\xd4\x10\x7f",  # array of 127 with nothing after it
        b"\xc7\x09\x10\xcf" + (1 << 62).to_bytes(8, "big"),  # huge array count
        b"\xc7\x09\x11\xcf" + (1 << 62).to_bytes(8, "big"),  # huge map count
        b"\xd4\x01\x05",  # tabulation out of range
        b"\xd4\x00\x05",  # inner tabulation out of range
        b"\xd4\x10\x01\xd4\x01\x00",  # array containing itself
        b"\xc7\x0b\x12\x03\xa6Puppet\xa3AST\xa3Foo\x00",  # unknown type (payload too short, too)
        b"\x91\x01",  # native msgpack array
        b"\xc4\x01a",  # bin
        b"\xc1",  # never-used byte
        b"\xd4\x20\x00",  # DEFAULT with a payload byte
        b"\xd5\x33\x01\x02",  # TIME: unsupported
        b"\xd4\x30\x01",  # regexp with an int source
        b"\xc0\xc0",  # trailing data
        b"",  # empty
        b"\xcf\xff\xff\xff\xff\xff\xff\xff\xff",  # uint64 beyond int64
        b"\xdd\xff\xff\xff\xff\xc0",  # native array32 claiming 4G elements
        b"\xdf\xff\xff\xff\xff\xc0",  # native map32 claiming 4G entries
        b"\xdb\xff\xff\xff\xffabc",  # str32 claiming 4 GB
        b"\xc9\xff\xff\xff\xff\x10\x01",  # ext32 claiming 4 GB
        b"\xc7\x02\x10\x01\x01",  # ARRAY_START with two payload values
        b"\xd4\xff\x00",  # ext -1 (msgpack timestamp)
    ]
    for data in cases:
        with pytest.raises(XppFormatError):
            pcore.loads(data)
    for text in (
        b"",
        b"{}",
        b"[",
        b"[[]]",
        b"[[99]]",
        b"[[16,2,1]]",
        b"[NaN]",
        b'[{"a":1}]',
        b"[[18,1,2,0]]",
        b"[[1,0]]",
        b"[99999999999999999999]",
        b"\xff",
        b"[" * 100000,
    ):
        with pytest.raises(XppFormatError):
            pcore.loads(text, "json")


def _mutate(rng: random.Random, data: bytes, pool: list) -> bytes:
    b = bytearray(data)
    op = rng.randrange(8)
    if op == 0 and b:  # truncation
        return bytes(b[: rng.randrange(len(b))])
    if op == 1 and b:  # bit flips
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        return bytes(b)
    if op == 2 and b:  # random bytes overwritten
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if op == 3:  # splice from another document
        other = rng.choice(pool)
        i, j = rng.randrange(len(b) + 1), rng.randrange(len(other) + 1)
        k = rng.randrange(j, len(other) + 1)
        return bytes(b[:i]) + other[j:k] + bytes(b[rng.randrange(i, len(b) + 1) :])
    if op == 4 and b:  # delete a range
        i = rng.randrange(len(b))
        return bytes(b[:i] + b[i + rng.randint(1, 16) :])
    if op == 5 and b:  # duplicate a range
        i = rng.randrange(len(b))
        j = min(len(b), i + rng.randint(1, 32))
        return bytes(b[:j] + b[i:j] + b[j:])
    if op == 6:  # insert interesting bytes
        i = rng.randrange(len(b) + 1)
        ins = rng.choice(
            [
                b"\xd4\x01\x00",
                b"\xd4\x00\x00",
                b"\xd4\x10\x7f",
                b"\xcf\xff",
                b"]",
                b"[",
                b",",
                b"[16,",
                b"[1,0]",
                b"\n\n",
                b"\xc7\xff\x12",
                b"\xdb\xff\xff\xff\xff",
                b"\x00",
            ]
        )
        return bytes(b[:i]) + ins + bytes(b[i:])
    return bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))


def _seed_documents() -> list:
    docs = []
    for name in ("assign", "class", "regexp", "heredoc", "floats", "interpolation", "strings"):
        _, program = CASES[name]()
        for fmt in FORMATS:
            docs.append(result.write_xpp(program, DIAGS, fmt))
            docs.append(result.write_xpp(program, [], fmt))
            docs.append(pcore.dumps(program, fmt))
    for fmt in FORMATS:
        docs.append(result.write_xpp(None, DIAGS, fmt))
    return docs


def _read_any(data: bytes):
    if envelope.looks_like_xpp(data):
        return result.read_xpp(data)
    if data[:1] == b"[":
        return pcore.loads(data, "json")
    return pcore.loads(data, "msgpack")


def test_fuzz_only_format_errors():
    rng = random.Random(20240501)
    pool = _seed_documents()
    for d in pool:
        _read_any(d)  # the seeds themselves are valid
    cases = accepted = 0
    slowest = 0.0
    start = time.perf_counter()
    while cases < 12000:
        data = rng.choice(pool)
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            data = _mutate(rng, data, pool)
        if rng.random() < 0.5 and envelope.looks_like_xpp(data):
            # also feed the bare payload to the JSON / msgpack reader
            cut = data.find(b"\n\n")
            data = data[cut + 2 :] if cut >= 0 else data
        t = time.perf_counter()
        try:
            got = _read_any(data)
            accepted += 1
        except XppFormatError:
            got = XppFormatError
        slowest = max(slowest, time.perf_counter() - t)
        if data[:1] not in (b"[", b"a"):
            # the pure-Python msgpack tokenizer (used without the msgpack extension) agrees
            try:
                ref = pcore.read.build(pcore.tokens.mp_tokens_py(data))
                ref = ref[0] if len(ref) == 1 else XppFormatError
            except XppFormatError:
                ref = XppFormatError
            assert ref == got
        cases += 1
    assert cases >= 10000
    assert slowest < 1.0, slowest
    assert time.perf_counter() - start < 120
    assert accepted < cases  # the mutations really do break documents


def test_fuzz_random_token_streams():
    """Structure-aware fuzz: random sequences of extension tokens and primitives, encoded both ways."""
    rng = random.Random(7)
    names = ["Puppet::AST::" + n for n in sorted(ast.CONCRETE)] + [
        "Pcore::ObjectType",
        "Pcore::AnyType",
        "Xpp::ParseResult",
        "Puppet::AST::Nope",
    ]

    def token():
        r = rng.random()
        if r < 0.35:
            code = rng.choice([0, 1, 0x10, 0x11, 0x13])
            return (code, rng.choice([0, 1, 2, 3, rng.randrange(50)]))
        if r < 0.55:
            segs = rng.choice(names).split("::")
            if rng.random() < 0.3:
                segs = [rng.randrange(10) if rng.random() < 0.5 else s for s in segs]
            return (0x12, tuple(segs), rng.randrange(9))
        if r < 0.6:
            return (0x30, rng.choice(["a", "x.*"]))
        return rng.choice([None, True, False, 0, 3, -1, 2.5, "", "a", "=", "regular", "/srv/a.pp"])

    for _ in range(3000):
        toks = []
        for _ in range(rng.randint(1, 40)):
            t = token()
            toks.append(t)
        for fmt in FORMATS:
            try:
                data = _encode_tokens(toks, fmt)
            except (XppWriteError, XppFormatError):
                continue  # not expressible in this encoding
            try:
                pcore.loads(data, fmt)
            except XppFormatError:
                pass


def _encode_tokens(toks, fmt):
    out = bytearray()
    for t in toks:
        if type(t) is tuple:
            code = t[0]
            if code == 0x12:
                payload = pcore.write.mp_uint_body(len(t[1])) + b"".join(
                    pcore.write.mp_uint_body(s) if type(s) is int else pcore.write.mp_str(s) for s in t[1]
                )
                payload += pcore.write.mp_uint_body(t[2])
            elif code == 0x30:
                payload = pcore.write.mp_str(t[1])
            else:
                payload = pcore.write.mp_uint_body(t[1])
            out += pcore.write.mp_ext(code, payload)
        elif t is None:
            out += b"\xc0"
        elif type(t) is bool:
            out += b"\xc3" if t else b"\xc2"
        elif type(t) is int:
            out += pcore.write.mp_int(t)
        elif type(t) is float:
            out += pcore.write.PACK_DOUBLE(0xCB, t)
        else:
            out += pcore.write.mp_str(t)
    data = bytes(out)
    return data if fmt == "msgpack" else pcore.json.tokens_to_json(pcore.tokens.mp_tokens(data))
