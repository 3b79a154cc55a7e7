"""The comparison of our lexer (grammar.lexer.Lexer) with Puppet's answer to the oracle op ``lex``, shared by
the lexer conformance modules (tests/test_lexer_*.py): one definition of "identical" for the case table,
the generated sources, the byte order marks and the corpus.

For tokens lexed inside a heredoc, Puppet's offsets are relative to its SubLocator; the ``lex`` op maps them
with ``SubLocator#to_global`` (the mapping Puppet's parser applies to the nodes built from them), and those
global spans are what our tokens must carry.  Puppet's internal SUBLOCATE token has no counterpart in our
stream.
"""

from __future__ import annotations

from puppet_xpp.grammar.lexer import Lexer

# --------------------------------------------------------------------------------------------------
# comparison


def _linecol(data: bytes, off: int):
    line = data.count(b"\n", 0, off) + 1
    ls = data.rfind(b"\n", 0, off) + 1
    return line, len(data[ls:off].decode("utf-8", "surrogateescape")) + 1


def _ours(src: str, epp: bool, tasks: bool):
    lx = Lexer(src, epp=epp, tasks=tasks)
    toks = [(t.type, t.value, t.start_pos, t.end_pos) for t in lx.tokens()]
    return lx, toks


def _theirs(result):
    return [
        (t[0], t[1], t[4][0], t[4][0] + t[4][1]) if t[4] else (t[0], t[1], t[2], t[2] + t[3])
        for t in result["tokens"]
        if t[0] != "SUBLOCATE"
    ]


def compare(src: str, result: dict, epp: bool = False, tasks: bool = False) -> list[str]:
    """Differences between our lexer and Puppet's answer (empty: identical)."""
    data = src.encode("utf-8", "surrogateescape")
    lx, ours = _ours(src, epp, tasks)
    theirs = _theirs(result)
    problems = []
    err = result["error"]
    if err is None:
        if lx.error is not None:
            problems.append(f"we fail with {lx.error.code} at {lx.error.offset}, Puppet does not")
        if ours != theirs:
            for i, (a, b) in enumerate(zip(ours, theirs)):
                if a != b:
                    problems.append(f"token {i}: ours {a} Puppet {b}")
                    break
            else:
                problems.append(f"token count: ours {len(ours)} Puppet {len(theirs)}")
    else:
        assert err.get("issue_code"), f"Puppet crashed: {err}"  # crash cases are tested separately
        if lx.error is None:
            problems.append(f"Puppet fails with {err['issue_code']}, we do not")
        else:
            line, col = _linecol(data, lx.error.offset) if lx.error.offset is not None else (None, None)
            mine = (lx.error.code, line, col, lx.error.message)
            want = (err["issue_code"], err["line"], err["pos"], err["message"])
            if mine != want:
                problems.append(f"error: ours {mine} Puppet {want}")
        # Puppet yields tokens lazily; ours are computed eagerly, so Puppet's are a prefix of ours
        if ours[: len(theirs)] != theirs:
            problems.append(f"tokens before the error differ: ours {ours[: len(theirs)]} Puppet {theirs}")
    warnings = [
        (d.code, *_linecol(data, d.offset), d.message) for d in lx.diagnostics if d.severity == "warning"
    ]
    want_w = [tuple(w) for w in result["warnings"]]
    if warnings != want_w:
        problems.append(f"warnings: ours {warnings} Puppet {want_w}")
    return problems
