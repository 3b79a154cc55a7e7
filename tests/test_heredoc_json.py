"""Issue 25 item 2, ``--validate``'s side: the message of a ``@(END:json)`` heredoc Puppet refuses is the
one the oracle's Puppet prints (7.23 and OpenVox 8 on Debian's Ruby, whose json 2.6.1 names the parser.c
line that raised, 451 in an array, 859 at the top, 225/232/249 for NaN/Infinity/-Infinity, and the text
from where it gave up).  (The Ruby runtime does not use this text: it runs the running Puppet's own
checker again, tests/runtime/test_replay_exact.py.)
"""

from __future__ import annotations

import pytest

from puppet_xpp.grammar.check import CheckConfig, check
from tests.conformance.oracle import Oracle
from tests.conformance.puppets import missing_reason

# JSON texts, valid and not: in arrays, objects, at the top, numbers, NaN/Infinity, comments, trailing text
JSON_TEXTS = [
    '{ "a": 1,, }\n',
    '[1, {"a": 1,, }]',
    "[1,]",
    '{"a" 1}',
    "nul",
    "[1] x",
    '"abc',
    '{"a": [1, 2,]}',
    "  [1 2]",
    '{"a": {"b" 1}}',
    '{"a": [1,]}',
    "[[1,]]",
    '{"a": 1 "b": 2}',
    '[{"a": {"b" 1}}]',
    '{"a": tru}',
    "[tru]",
    "[1, 2",
    '{"a": 1',
    "",
    "  ",
    "[01]",
    "[-]",
    "[NaN]",
    '{"a": NaN}',
    "[1.]",
    "[1e]",
    '{"a":1,}',
    "{,}",
    "[,]",
    '{"a":1}}',
    "[1]]",
    '{"a"',
    '{"a":',
    '["a\\u12"]',
    '["a\nb"]',
    "[1 /* c */ 2]",
    "[1, /* c",
    '{"a": 1} // x',
    "[1] /* x",
    '  {\n  "a": 1,\n  "b": [1, 2,],\n}\n',
    "[true, fals]",
    '{"k": "v", "k2": [1, {"x": }]}',
    '{"x": [1, 2] "y": 3}',
    "[[[]]] ]",
    '"a" "b"',
    "12 13",
    "[1,\n2,\n]\n",
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "[-01]",
    "01",
    "[Infinity]",
    "[-Infinity, 1]",
    "/* x",
    "[1.5.3]",
    '{"a": -}',
    "[0, 00]",
    "[1,2]x",
    '{"a":"b"} ]',
    '["\\x"]',
    "[\t1\r\n]",
    "Infinity",
    '{"a": Infinity}',
    "[1, Infinity]",
    "NaN",
    "[1.5e3.1]",
    "[1e5e]",
    "[1.5-]",
    "[1.5e]",
    "[-5.]",
    "[2.5E+1x]",
    "[1.5]",
    "[1e5]",
    "[-0.5e-3]",
    "1.5",
    "[1-]",
    "[1+]",
    "[1.]",
]


def heredoc(text: str) -> str:
    return f"$x = @(END:json)\n{text}\nEND\nnotice($x)\n"


def json_messages(results: list) -> list:
    return [d["message"] for d in results if d["code"] == "ILLEGAL_JSON"]


@pytest.mark.parametrize("level", ["7.23", "8"])
def test_json_heredoc_messages_are_the_oracles(level, oracle):
    puppet = "7.23" if level == "7.23" else "8"
    if missing_reason(puppet):
        pytest.skip(str(missing_reason(puppet)))
    sources = [heredoc(t) for t in JSON_TEXTS]
    theirs = Oracle.get(puppet).call_many("validate", [{"source": s} for s in sources])
    refused = 0
    for text, source, answer in zip(JSON_TEXTS, sources, theirs):
        assert not isinstance(answer, Exception), answer
        want = json_messages(answer)
        refused += bool(want)
        res = check(source, CheckConfig(level=level))
        mine = [d.message for d in res.diagnostics if d.code == "ILLEGAL_JSON"]
        assert mine == want, text
    assert refused > 50
