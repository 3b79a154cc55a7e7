"""Lexer robustness and generated sources: deep nesting is capped, random bytes never raise (spans stay in
the text), and seeded random fragments, heredoc files and EPP templates lex as Puppet lexes them.

Apart because the inputs are generated (seeded, so repeatable), not written by hand.
"""

from __future__ import annotations

import random

import pytest

from puppet_xpp.grammar.lexer import MAX_DEPTH, Lexer
from tests.lexer_helpers import compare

# --------------------------------------------------------------------------------------------------
# robustness


def test_deep_nesting_is_capped():
    src = '"${' * 5000 + "x" + '}"' * 5000
    lx = Lexer(src)
    lx.tokens()
    assert lx.error is not None and lx.error.code == "PARSE_TOO_DEEP"
    ok = '"${' * (MAX_DEPTH - 1) + "x" + '}"' * (MAX_DEPTH - 1)
    lx = Lexer(ok)
    lx.tokens()
    assert lx.error is None


def test_deep_heredoc_nesting_is_capped():
    src = "".join(f'@("E{i}")\n${{' for i in range(300))
    lx = Lexer(src)
    lx.tokens()
    assert lx.error is not None


def test_random_bytes_never_raise():
    rnd = random.Random(1234)
    alphabet = list(b"$\"'{}[]()@/\\*#%<>=-|:;,.?!~\n\r\t 0123456789abcxyzABC_`^&") + list(range(256))
    for _ in range(3000):
        n = rnd.randrange(0, 40)
        data = bytes(rnd.choice(alphabet) for _ in range(n))
        text = data.decode("utf-8", "surrogateescape")
        for epp in (False, True):
            lx = Lexer(text, epp=epp)
            toks = lx.tokens()
            size = len(data)
            for t in toks:
                assert 0 <= t.start_pos <= t.end_pos <= size, (text, t)
            assert (lx.error is None) or lx.diagnostics[-1] is lx.error


def test_random_fragments_match_puppet(oracle):
    """Random splices of Puppet fragments, checked against Puppet (seeded, so repeatable)."""
    rnd = random.Random(99)
    parts = [
        '"',
        "'",
        "${",
        "}",
        "{",
        "$x",
        "$",
        "\\",
        "\\n",
        "/",
        "/*",
        "*/",
        "#",
        "\n",
        " ",
        "@(E)",
        "E",
        "| E",
        "-",
        "%>",
        "<%",
        "<%=",
        "a",
        "A",
        "::",
        "1",
        "0x",
        ".",
        "[",
        "(",
        "?",
        "=>",
        "é",
        "\t",
        "\\u0041",
        "\\u{",
        '@("E")',
        "|",
        "e5",
        "->",
    ]
    srcs = ["".join(rnd.choice(parts) for _ in range(rnd.randrange(1, 12))) for _ in range(400)]
    cases = [(s, e) for s in srcs for e in (False, True)]
    results = oracle.call_many("lex", [{"source": s, "epp": e} for s, e in cases])
    bad = []
    for (src, epp), res in zip(cases, results):
        if res["error"] is not None and not res["error"].get("issue_code"):
            continue  # Puppet crashed (see CRASHES)
        if any(w for w in res["warnings"]) and "@(" in src:
            continue
        p = compare(src, res, epp)
        if p:
            bad.append((src, epp, p))
    assert bad == []


def _heredoc_source(rnd):
    heads = [
        "@(E)",
        '@("E")',
        "@(E/)",
        '@("E"/)',
        "@(E/L)",
        '@("E"/$)',
        "@(E:json)",
        '@("E":x+y/tn)',
        "@( E )",
        "@(E/u)",
    ]
    body = [
        "a",
        "${x}",
        "$y",
        " ",
        "  ",
        "\t",
        "\\n",
        "\\$",
        "\\\\",
        "\\u0041",
        "\\",
        '${"q"}',
        "${[1]}",
        "${ (1) }",
        "\u00e9",
        "\r",
        "$",
        "${x.y}",
        "${/r/}",
        "${1}",
        "-",
        "|",
        "'",
        '"',
        "#",
        "/*c*/",
        "${ {a=>1} }",
    ]
    ends = ["E", "|E", "| E", "-E", "|-E", " | E", "  |  -  E  ", "\t| E", "xE", "E  ", "E\r"]
    hs = [rnd.choice(heads) for _ in range(rnd.randrange(1, 3))]
    out = ["$a = [" + ", ".join(hs) + rnd.choice(["", " + 1", ' "${z}"', " [1]", " (2)", " /r/"]) + "]\n"]
    for _ in hs:
        margin = rnd.choice(["", " ", "  ", "\t", "    "])
        for _ in range(rnd.randrange(0, 4)):
            out.append(
                rnd.choice([margin, margin, "", " "])
                + "".join(rnd.choice(body) for _ in range(rnd.randrange(0, 6)))
                + rnd.choice(["\n", "\r\n"])
            )
        out.append(margin + rnd.choice(ends) + rnd.choice(["\n", "", "\r\n"]))
    out.append(rnd.choice(["", "$b = 1", "(1)", "[1]", '"${x}"']))
    return "".join(out)


def _epp_source(rnd):
    text = ["a", " ", "  ", "\t", "\n", "\r\n", "%>", "%%>", "<%%", "%", "<", "\u00e9", "-", "#"]
    opens = ["<%", "<%=", "<%-", "<%#", "<%#-", "<%|", "<%-|", "<%%"]
    code = [
        "$x",
        " ",
        "\n",
        "1",
        "+",
        '"${y}"',
        "'s'",
        "{",
        "}",
        "|",
        "[1]",
        "(1)",
        "/r/",
        "# c\n",
        "/* c */",
        "-",
        "%",
        "if",
        "@(E)\nx\nE\n",
    ]
    closes = ["%>", "-%>", "%%>", " -%>", "|%>", "|-%>", ""]
    out = []
    for _ in range(rnd.randrange(1, 5)):
        out.append("".join(rnd.choice(text) for _ in range(rnd.randrange(0, 4))))
        out.append(rnd.choice(opens))
        out.append("".join(rnd.choice(code) for _ in range(rnd.randrange(0, 4))))
        out.append(rnd.choice(closes))
    out.append("".join(rnd.choice(text) for _ in range(rnd.randrange(0, 4))))
    return "".join(out)


@pytest.mark.parametrize("kind", ["heredoc", "epp"])
def test_generated_sources_match_puppet(oracle, kind):
    """Generated heredoc files (margins, escapes, several per line, interpolation) and EPP templates
    (tags, trimming, comments), checked against Puppet (seeded, so repeatable)."""
    rnd = random.Random(7)
    gen, epp = (_heredoc_source, False) if kind == "heredoc" else (_epp_source, True)
    srcs = [gen(rnd) for _ in range(400)]
    results = oracle.call_many("lex", [{"source": s, "epp": epp} for s in srcs])
    bad = []
    for src, res in zip(srcs, results):
        if res["error"] is not None and not res["error"].get("issue_code"):
            continue  # Puppet crashed (lexer issue inside a heredoc text, see CRASHES)
        p = compare(src, res, epp)
        if p:
            bad.append((src, p))
    assert bad == []
