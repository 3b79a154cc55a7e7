"""Our TextMate grammar (editors/vscode/syntaxes) against Puppet's own lexer.

Every file is tokenized twice: by vscode-textmate with our grammar (the engine VS Code uses), and by
Puppet 7's Lexer2 through the oracle (op ``lex``). Then, token by token, the scopes must agree with
what Puppet lexed: a REGEX is ``string.regexp``, a DIV is an arithmetic operator (regex versus
division), variables, numbers, strings, type references, heredoc openings and keywords get their
scopes, names are never keywords, comments are exactly the text Puppet skips, and the heredoc region
(the ``@(`` line, the body and the end line) is ``meta.heredoc.puppet`` and nothing after it is.

Inputs: the grammar test cases and every manifest and template of the Debian Puppet module corpus. In
EPP files, template text must not be scoped as Puppet code.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from bisect import bisect_right
from pathlib import Path

import pytest

from tests.conformance.corpus import corpus_files
from tests.editors import VSCODE, editor_tool_missing

KEYWORD_TOKENS = {
    "IF",
    "ELSIF",
    "ELSE",
    "UNLESS",
    "CASE",
    "DEFAULT",
    "CLASS",
    "DEFINE",
    "NODE",
    "INHERITS",
    "UNDEF",
    "BOOLEAN",
    "FUNCTION",
    "TYPE",
    "AND",
    "OR",
    "IN",
    "ATTR",
    "PRIVATE",
}
KEYWORD_SCOPES = (
    "keyword.",
    "storage.",
    "constant.language.",
    "entity.other.attribute-name.",
    "entity.name.type.resource.",
    "support.function.",
    "entity.name.function.",
)
NOT_FOR_NAMES = ("keyword.control.", "keyword.operator.word.", "storage.type.", "constant.language.")


def _tokenize(files: list[Path]) -> dict:
    if shutil.which("node") is None:
        editor_tool_missing("node")
    if not (VSCODE / "node_modules" / "vscode-textmate").exists():
        editor_tool_missing("the npm packages of editors/vscode")
    out = {}
    for i in range(0, len(files), 200):
        chunk = [str(f) for f in files[i : i + 200]]
        p = subprocess.run(
            ["node", str(VSCODE / "scripts" / "tokenize.js"), *chunk],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=600,
        )
        assert p.returncode == 0, p.stderr.decode(errors="replace")
        out.update(json.loads(p.stdout))
    return out


class ScopeMap:
    """Scopes at a byte offset of a file, from vscode-textmate's (line, UTF-16 column) tokens."""

    def __init__(self, data: bytes, toks: list):
        self.data = data
        self.line_starts = [0] + [i + 1 for i, b in enumerate(data) if b == 0x0A]
        self.lines: dict[int, list] = {}
        for line, start, end, scopes in toks:
            self.lines.setdefault(line, []).append((start, end, scopes))

    def line_col(self, off: int) -> tuple[int, int]:
        line = bisect_right(self.line_starts, off) - 1
        prefix = self.data[self.line_starts[line] : off].decode("utf-8", "replace")
        return line, len(prefix.encode("utf-16-le")) // 2

    def at(self, off: int) -> list:
        line, col = self.line_col(off)
        for start, end, scopes in self.lines.get(line, ()):
            if start <= col < end:
                return scopes
        return []

    def line_end(self, off: int) -> int:
        """Offset just after the line holding ``off`` (its newline included)."""
        line = bisect_right(self.line_starts, off) - 1
        return self.line_starts[line + 1] if line + 1 < len(self.line_starts) else len(self.data)


def _has(scopes, *prefixes) -> bool:
    return any(s.startswith(prefixes) for s in scopes)


def compare(data: bytes, lexed: dict, toks: list) -> list[str]:
    """Disagreements between Puppet's tokens and our scopes (empty when they agree)."""
    sm = ScopeMap(data, toks)
    problems = []
    tokens = lexed["tokens"]
    if lexed.get("error"):  # only the part Puppet lexed before its error
        end = max((t[2] + t[3] for t in tokens if t[4] is None), default=0)
        data = data[:end]

    def bad(kind, off, what):
        line, col = sm.line_col(off)
        problems.append(f"{kind} at {line + 1}:{col + 1}: {what} {sm.at(off)[1:]}")

    # heredoc regions: from `@(` to the end of the end-tag line
    regions, bodies, covered = [], [], []
    heredoc_lines = {}
    for i, (typ, _value, off, _length, glob) in enumerate(tokens):
        if typ == "HEREDOC" and glob is None:
            line = sm.line_col(off)[0]
            heredoc_lines[line] = heredoc_lines.get(line, 0) + 1
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if nxt and nxt[0] == "SUBLOCATE":
                body_end = nxt[2] + nxt[3]
                end = sm.line_end(body_end) if body_end < len(sm.data) else len(sm.data)
                regions.append((off, end))
                bodies.append((nxt[2], end))
    several = any(n > 1 for n in heredoc_lines.values())  # known limit: not checked

    def in_regions(off, spans):
        return any(a <= off < b for a, b in spans)

    text_spans = []  # EPP template text
    for typ, value, off, length, glob in tokens:
        if typ == "RENDER_STRING":
            text_spans.append((off, off + length))
            continue
        if typ in ("SUBLOCATE", "EPP_START", "RENDER_EXPR"):
            continue
        o = glob[0] if glob else off
        n = glob[1] if glob else length
        covered.append((o, o + n))
        if o >= len(data):
            continue
        sc = sm.at(o)
        if typ == "REGEX" and "string.regexp.puppet" not in sc:
            bad("regex", o, "Puppet lexes a regex here; we have")
        elif typ == "DIV" and (
            "keyword.operator.arithmetic.puppet" not in sc or "string.regexp.puppet" in sc
        ):
            bad("division", o, "Puppet lexes a division here; we have")
        elif typ == "VARIABLE" and not any(_has(sm.at(x), "variable.") for x in range(o, o + max(n, 1))):
            bad("variable", o, f"variable {value!r}; we have")
        elif typ == "NUMBER" and not _has(sc, "constant.numeric."):
            bad("number", o, f"number {value!r}; we have")
        elif typ in ("STRING", "DQPRE") and not _has(sc, "string.", "entity.name.section."):
            bad("string", o, "a string; we have")
        elif typ == "CLASSREF" and not _has(
            sc, "entity.name.type.", "support.type.", "entity.other.inherited-class."
        ):
            bad("type", o, f"type reference {value!r}; we have")
        elif typ == "HEREDOC" and not several and "punctuation.definition.heredoc.begin.puppet" not in sc:
            bad("heredoc", o, "a heredoc opening; we have")
        elif typ in KEYWORD_TOKENS and not glob and not _has(sc, *KEYWORD_SCOPES):
            bad("keyword", o, f"keyword {value!r}; we have")
        elif typ in ("NAME", "WORD") and value not in ("plan", "apply") and _has(sc, *NOT_FOR_NAMES):
            bad("name", o, f"the name {value!r} (not a keyword); we have")
        # heredoc extent: inside a region exactly when Puppet's token is
        if not glob and not several and typ != "HEREDOC":
            if in_regions(o, regions) != ("meta.heredoc.puppet" in sc):
                bad(
                    "heredoc-extent",
                    o,
                    f"{typ} {'inside' if in_regions(o, regions) else 'outside'} a heredoc; we have",
                )

    # comments: text we scope as a comment is outside every token and heredoc body, and every `#` or
    # `/*` outside them starts a comment
    covered.extend(bodies)
    covered.sort()
    starts = [a for a, _ in covered]

    def in_token(off):
        i = bisect_right(starts, off) - 1
        while i >= 0 and off - starts[i] < 200_000:
            if covered[i][0] <= off < covered[i][1]:
                return True
            i -= 1
        return False

    in_comment = False
    for off in range(len(data)):
        ch = data[off : off + 1]
        if ch == b"\n":
            in_comment = False
        if ch in (b" ", b"\t", b"\r", b"\n"):
            continue
        sc = sm.at(off)
        is_comment = _has(sc, "comment.")
        if in_regions(off, text_spans):
            if "source.puppet" in sc and not is_comment:
                bad("epp-text", off, "template text; we have")
            in_comment = False
            continue
        if in_token(off):
            if is_comment and not several:
                bad("comment", off, "text Puppet lexes as code; we have")
            in_comment = False
        elif not in_comment and (ch == b"#" or data[off : off + 2] == b"/*"):
            if not is_comment:
                bad("comment", off, "a comment start; we have")
            in_comment = True
    return problems


def _check(files: list[Path], oracle) -> tuple[int, list]:
    toks = _tokenize(files)
    lexed = oracle.call_many("lex", [{"file": str(f)} for f in files])
    failures = []
    for f, lx in zip(files, lexed):
        if isinstance(lx, Exception):
            continue
        probs = compare(f.read_bytes(), lx, toks[str(f)])
        if probs:
            failures.append((str(f), probs[:5], len(probs)))
    return len(files), failures


def test_grammar_cases_agree_with_puppets_lexer(oracle):
    files = sorted((VSCODE / "test" / "grammar").glob("*.test.pp")) + sorted(
        (VSCODE / "test" / "grammar").glob("*.test.epp")
    )
    n, failures = _check(files, oracle)
    assert n >= 7 and failures == [], json.dumps(failures, indent=1)


@pytest.mark.corpus
def test_corpus_agrees_with_puppets_lexer(oracle):
    files = [Path(f) for f in corpus_files("pp") + corpus_files("epp")]
    if not files:
        pytest.skip("the Debian Puppet module corpus is not installed")
    n, failures = _check(files, oracle)
    assert failures == [], f"{len(failures)} of {n} files disagree:\n" + json.dumps(failures[:20], indent=1)
