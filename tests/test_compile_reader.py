"""The fast .xpp reader path (xpp/pcore/fast.py ``fast_build``, used by every load) against the complete
iterative reader (``_build``): on valid documents (Puppet's own bytes for corpus files) both give equal
values, and on damaged ones the fast path never accepts what the complete reader rejects, nor gives a
different value.  ``loads`` raises only XppFormatError either way.
"""

from __future__ import annotations

import base64
import random

import pytest

from puppet_xpp.xpp import pcore
from puppet_xpp.xpp.pcore import XppFormatError
from tests.conformance.corpus import corpus_files
from tests.conformance.oracle import OracleError


def _tokens(data, fmt):
    return pcore.tokens.mp_tokens(data) if fmt == "msgpack" else pcore.json.json_tokens(data)


@pytest.fixture(scope="module")
def puppet_payloads(oracle):
    files = (corpus_files("pp") + corpus_files("epp"))[::20]
    if not files:
        pytest.skip("corpus not installed")
    out = []
    for fmt in ("msgpack", "json"):
        for what in ("program", "parse_result"):
            answers = oracle.call_many(
                "pcore_write",
                [
                    {
                        "file": f,
                        "format": fmt,
                        "what": what,
                        "diagnostics": [{"severity": "warning", "message": "m"}],
                    }
                    for f in files
                ],
            )
            out.extend((fmt, base64.b64decode(a["bytes"])) for a in answers if not isinstance(a, OracleError))
    return out


def test_fast_and_complete_readers_agree_on_puppet_bytes(puppet_payloads):
    for fmt, data in puppet_payloads:
        toks = _tokens(data, fmt)
        fast = pcore.fast.fast_build(toks)
        full = pcore.read.build(toks)
        assert full == [fast]


def test_fast_path_is_not_more_lenient(puppet_payloads):
    rnd = random.Random(2024)
    accepted = 0
    for i in range(6000):
        fmt, data = rnd.choice(puppet_payloads)
        b = bytearray(data)
        kind = i % 4
        if kind == 0:
            b = b[: rnd.randrange(len(b))]
        elif kind == 1:
            for _ in range(rnd.randint(1, 3)):
                b[rnd.randrange(len(b))] ^= 1 << rnd.randrange(8)
        elif kind == 2:
            _, other = rnd.choice([p for p in puppet_payloads if p[0] == fmt])
            b = b[: rnd.randrange(len(b))] + other[rnd.randrange(len(other)) :]
        else:
            b[rnd.randrange(len(b))] = rnd.randrange(256)
        b = bytes(b)
        try:
            toks = _tokens(b, fmt)
        except XppFormatError:
            continue
        try:
            fast = pcore.fast.fast_build(toks)
        except Exception:
            fast = None
            ok = False
        else:
            ok = True
        if ok:
            accepted += 1
            full = pcore.read.build(toks)  # must not raise
            assert full == [fast]
        try:
            pcore.loads(b, fmt)
        except XppFormatError:
            pass
    assert accepted > 100


def test_json_one_pass_tokens_equal_the_general_tokenizer(puppet_payloads):
    """``_json_doc_tokens`` (used for every JSON load) gives the tokens of flatten + group, or declines."""
    import json

    rnd = random.Random(77)
    docs = [d for fmt, d in puppet_payloads if fmt == "json"]
    same = 0
    for _i in range(5000):
        b = bytearray(rnd.choice(docs))
        for _ in range(rnd.randint(0, 3)):
            b[rnd.randrange(len(b))] = rnd.choice(b'[],0123456789"-')
        try:
            doc = json.loads(bytes(b).decode("utf-8", "replace"))
        except ValueError:
            continue
        try:
            want = pcore.json.json_group(pcore.json.json_flat_doc(doc))
        except XppFormatError:
            want = None
        try:
            got = pcore.json.json_doc_tokens(doc)
        except pcore.base.Reject:
            continue
        assert got == want
        same += 1
    assert same > 1000
