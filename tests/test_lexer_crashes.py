"""Where Puppet's lexer fails without an issue (an internal exception) and ours reports one, the float Puppet
accepts and then fails on, and byte order marks (raw bytes, lexed by Puppet from files): Puppet's exception
or issue from the oracle, our issue checked against it.

Apart from the case table (tests/test_lexer_cases.py), which holds only sources Puppet lexes cleanly or
rejects with an issue.
"""

from __future__ import annotations

import pytest

from puppet_xpp.grammar.lexer import Lexer
from tests.lexer_helpers import compare

# --------------------------------------------------------------------------------------------------
# Puppet crashes on these; we report an issue instead (decisions documented in grammar/lexer.py)

CRASHES = [
    # (source, Puppet's exception class, our expected error code or None for "no error", check)
    ("::", "NoMethodError", "ILLEGAL_FULLY_QUALIFIED_NAME"),
    ("a::", "NoMethodError", "ILLEGAL_FULLY_QUALIFIED_NAME"),
    ("$a::", "NoMethodError", "ILLEGAL_FULLY_QUALIFIED_NAME"),
    ("::A::", "RangeError", "ILLEGAL_FULLY_QUALIFIED_CLASS_REFERENCE"),
    ("$x::y::", "NoMethodError", "ILLEGAL_FULLY_QUALIFIED_NAME"),
    ("$::", "NoMethodError", "ILLEGAL_FULLY_QUALIFIED_NAME"),
    # any heredoc inside a heredoc: Puppet's eager end-of-file error cannot compute its column
    ('$a = @("A")\n  ${@(B)}\n  | A\n  b\n  | B\n', "NoMethodError", "HEREDOC_WITHOUT_END_TAGGED_LINE"),
    ('$a = @("A")\n${@(B)\nb\nB\n}\nA\n', "NoMethodError", None),
    ('$x = "\\u{D800}"', "ArgumentError", "ILLEGAL_UNICODE_ESCAPE"),
    ('$x = "\\u{110000}"', "ArgumentError", "ILLEGAL_UNICODE_ESCAPE"),
    ('@("END")\n  ab${"x}\n  | END\n', "NoMethodError", "UNCLOSED_QUOTE"),
    ("@(END/u)\n  ab\\uZZ\n  | END\n", "NoMethodError", None),
    ('@("END")\n  ab\n  ${3g}\n  | END\n', "NoMethodError", "ILLEGAL_NUMBER"),
    ('$a = @("END"/$)\n  a\\\n  -END\n', "NoMethodError", None),
]


@pytest.fixture(scope="module")
def crashed(oracle):
    return oracle.call_many("lex", [{"source": s} for s, _, _ in CRASHES])


@pytest.mark.parametrize("i", range(len(CRASHES)), ids=[repr(c[0])[:40] for c in CRASHES])
def test_puppet_crash_cases(crashed, i):
    src, cls, code = CRASHES[i]
    err = crashed[i]["error"]
    assert err is not None and err.get("class") == cls and not err.get("issue_code"), err
    lx = Lexer(src)
    lx.tokens()
    if code is None:
        assert lx.error is None
    else:
        assert lx.error is not None and lx.error.code == code


def test_crash_case_positions():
    # '::' at the end: the error is where Puppet reports it for ':: ' (after the '::')
    lx = Lexer("$a::")
    lx.tokens()
    assert (lx.error.offset, [t.type for t in lx.tokens()]) == (4, ["VARIABLE"])
    # a warning inside a heredoc is placed at the mapped global offset of the end of its text part
    lx = Lexer("@(END/u)\n  ab\\uZZ\n  | END\n")
    lx.tokens()
    assert [(d.code, d.offset, d.severity) for d in lx.diagnostics] == [
        ("ILLEGAL_UNICODE_ESCAPE", 18, "warning")
    ]
    lx = Lexer('$a = "${true}" "${false.x}"')
    assert [(t.type, t.value) for t in lx.tokens()][3:4] == [("VARIABLE", "true")]
    assert [(t.type, t.value) for t in lx.tokens()][6:7] == [("VARIABLE", "false")]


def test_float_overflow(oracle):
    # Puppet's lexer accepts 1e400 and its parser then fails with an internal error; we report it.
    res = oracle.call("lex", source="$a = 1e400")
    assert res["error"] is None and res["tokens"][-1][:2] == ["NUMBER", "1e400"]
    crash = oracle.request("parse", source="$a = 1e400")
    assert not crash["ok"] and "NUMBER token does not contain a valid number" in crash["error"]
    lx = Lexer("$a = 1e400")
    lx.tokens()
    assert (lx.error.code, lx.error.offset, lx.error.message) == (
        "INVALID_DECIMAL_NUMBER",
        5,
        "Not a valid decimal number 1e400",
    )


# --------------------------------------------------------------------------------------------------
# byte order marks (raw bytes, so through files)

BOMS = [
    b"\xef\xbb\xbf",
    b"\xfe\xff",
    b"\xff\xfe",
    b"\x00\x00\xfe\xff",
    b"\xff\xfe\x00\x00",
    b"\xf7\x64\x4c",
    b"\xdd\x73\x66\x73",
    b"\x0e\xfe\xff",
    b"\xfb\xee\x28",
    b"\x84\x31\x95\x33",
    b"\xef\xbb",
    b"\xfe",
]


@pytest.mark.parametrize("bom", BOMS, ids=[b.hex() for b in BOMS])
def test_bom(oracle, bom, tmp_path):
    data = bom + b"$x = 1\n"
    path = tmp_path / "bom.pp"
    path.write_bytes(data)
    res = oracle.call("lex", file=str(path))
    lx = Lexer(data.decode("utf-8", "surrogateescape"))
    lx.tokens()
    err = res["error"]
    if err is not None and not err.get("issue_code"):
        # not a byte order mark, but invalid UTF-8: Puppet fails with an ArgumentError before lexing;
        # we lex the bytes (as OTHER tokens, which the parser rejects)
        assert err["class"] == "ArgumentError" and "invalid byte sequence" in err["message"]
        assert lx.error is None and "OTHER" in [t.type for t in lx.tokens()]
    elif err is None:
        assert lx.error is None
        assert compare(data.decode("utf-8", "surrogateescape"), res) == []
    else:
        assert lx.error is not None and lx.error.offset is None
        assert (lx.error.code, lx.error.message) == (err["issue_code"], err["message"])
        assert lx.error.args["format_name"] == err["arguments"]["format_name"]
        assert lx.error.args["bytes"] == err["arguments"]["bytes"]
