"""Checks on comments, documentation, strings, variables and whitespace (puppet-lint's check_comments,
check_documentation, check_strings, check_variables, check_whitespace groups), with their fixes."""

from __future__ import annotations

import re

from puppet_xpp.lint.core import (
    NoFix,
    Problem,
    check,
    delete,
    fixer,
    index_of,
    insert,
    problem,
    remove,
)
from puppet_xpp.lint.data import Manifest, prev_of
from puppet_xpp.lint.tokens import Tok


@check("slash_comments")
def slash_comments(m: Manifest) -> list[Problem]:
    return [problem("slash_comments", "warning", "// comment found", t) for t in m.of_type("SLASH_COMMENT")]


@fixer("slash_comments")
def _fix_slash_comments(m: Manifest, p: Problem) -> None:
    p.data["token"].type = "COMMENT"


@check("star_comments")
def star_comments(m: Manifest) -> list[Problem]:
    return [problem("star_comments", "warning", "/* */ comment found", t) for t in m.of_type("MLCOMMENT")]


@fixer("star_comments")
def _fix_star_comments(m: Manifest, p: Problem) -> None:
    tok: Tok = p.data["token"]
    lines = [s.strip() for s in _ruby_lines(tok.value.strip())]
    first = lines.pop(0) if lines else None
    tok.type = "COMMENT"
    tok.value = f" {first or ''}"
    toks = m.editable()
    i = index_of(toks, tok.next)
    index = 1 if i is None else i
    for line in reversed(lines):
        indent = None if tok.prev is None else tok.prev.value
        insert(toks, index, Tok("COMMENT", f" {line}"))
        if indent is not None:
            insert(toks, index, Tok("INDENT", indent))
        insert(toks, index, Tok("NEWLINE", "\n"))


def _ruby_lines(s: str) -> list[str]:
    """``str.split("\\n")`` as Ruby does it (trailing empty pieces dropped)."""
    parts = s.split("\n")
    while parts and parts[-1] == "":
        parts.pop()
    return parts


_WS_TYPES = ("WHITESPACE", "NEWLINE", "INDENT")
_COMMENT_TYPES = ("COMMENT", "MLCOMMENT", "SLASH_COMMENT")


@check("documentation")
def documentation(m: Manifest) -> list[Problem]:
    out = []
    for d in m.classes + m.defines:
        first = d.tokens[0]
        newlines = 0
        prev = first.prev
        while prev is not None and prev.type in _WS_TYPES:
            if prev.type == "NEWLINE":
                newlines += 1
            if newlines > 1:
                break
            prev = prev.prev
        if prev is not None and prev.type in _COMMENT_TYPES:
            continue
        word = "class" if first.type == "CLASS" else "defined type"
        out.append(problem("documentation", "warning", f"{word} not documented", first))
    return out


_ESCAPES = re.compile(r"(\\\$|\\\"|\\'|'|\r|\t|\\t|\\s|\n|\\n|\\\\)")


@check("double_quoted_strings")
def double_quoted_strings(m: Manifest) -> list[Problem]:
    return [
        problem("double_quoted_strings", "warning", "double quoted string containing no variables", t)
        for t in m.of_type("STRING")
        if not _ESCAPES.search(t.value.replace(" " * t.column, "\n"))
    ]


@fixer("double_quoted_strings")
def _fix_double_quoted_strings(m: Manifest, p: Problem) -> None:
    """Single-quote the string, unless it holds ``\\r`` or ``\\u``: escapes that double quotes interpret
    and single quotes do not (puppet-lint converts those too, changing the string's value)."""
    tok: Tok = p.data["token"]
    if re.search(r"\\[ru]", tok.value):
        raise NoFix
    tok.type = "SSTRING"


@check("only_variable_string")
def only_variable_string(m: Manifest) -> list[Problem]:
    toks = m.tokens
    out = []
    for start in m.of_type("DQPRE"):
        if start.value != "":
            continue
        i = m.pos(start)
        var = start.next
        if var is None or var.type not in ("VARIABLE", "UNENC_VARIABLE"):
            continue
        k = i + 2
        while k < len(toks):
            eos = toks[k]
            if eos.type == "LBRACK":
                k += 3
                continue
            if eos.type == "DQPOST" and eos.value == "":
                if eos.next_code is not None and eos.next_code.type == "FARROW":
                    break
                out.append(
                    problem(
                        "only_variable_string",
                        "warning",
                        "string containing only a variable",
                        var,
                        start_token=start,
                        end_token=eos,
                    )
                )
            break
    return out


@fixer("only_variable_string")
def _fix_only_variable_string(m: Manifest, p: Problem) -> None:
    """Replace the string by the variable. Not when the variable puppet-lint sees holds a dash
    (``"$a-b"``, ``"${a-b}"``): Puppet reads ``$a`` followed by text or a subtraction there, and
    puppet-lint's fix drops the text or turns it into code."""
    if "-" in p.data["token"].value:
        raise NoFix
    delete(m.editable(), p.data["start_token"])
    delete(m.editable(), p.data["end_token"])
    p.data["token"].type = "VARIABLE"


_URL_PATH = re.compile(r"puppet://.*?/(.+)")


@check("puppet_url_without_modules")
def puppet_url_without_modules(m: Manifest) -> list[Problem]:
    out: list[Problem] = []
    if m.text is not None and "puppet://" not in m.text:
        return out
    for t in m.of_type("SSTRING", "STRING", "DQPRE"):
        if not t.value.startswith("puppet://"):
            continue
        mt = _URL_PATH.search(t.value)
        if mt and mt.group(1).startswith("modules/"):
            continue
        out.append(
            problem("puppet_url_without_modules", "warning", "puppet:// URL without modules/ found", t)
        )
    return out


@fixer("puppet_url_without_modules")
def _fix_puppet_url_without_modules(m: Manifest, p: Problem) -> None:
    tok: Tok = p.data["token"]
    tok.value = re.sub(r"(puppet://.*?/)", r"\1modules/", tok.value)


@check("quoted_booleans", enabled=False)
def quoted_booleans(m: Manifest) -> list[Problem]:
    return [
        problem("quoted_booleans", "warning", "quoted boolean value found", t)
        for t in m.of_type("STRING", "SSTRING")
        if t.value in ("true", "false")
    ]


@fixer("quoted_booleans")
def _fix_quoted_booleans(m: Manifest, p: Problem) -> None:
    tok: Tok = p.data["token"]
    tok.type = tok.value.upper()


@check("single_quote_string_with_variables")
def single_quote_string_with_variables(m: Manifest) -> list[Problem]:
    out: list[Problem] = []
    if m.text is not None and "${" not in m.text:
        return out
    for t in m.of_type("SSTRING"):
        if "${" not in t.value:
            continue
        before = t.prev.prev if t.prev is not None else None
        if before is not None and re.search(r"inline_(epp|template)", before.value):
            continue
        out.append(
            problem(
                "single_quote_string_with_variables",
                "error",
                "single quoted string containing a variable found",
                t,
            )
        )
    return out


@check("variables_not_enclosed")
def variables_not_enclosed(m: Manifest) -> list[Problem]:
    return [
        problem("variables_not_enclosed", "warning", "variable not enclosed in {}", t)
        for t in m.of_type("UNENC_VARIABLE")
    ]


@fixer("variables_not_enclosed")
def _fix_variables_not_enclosed(m: Manifest, p: Problem) -> None:
    """Brace the variable: ``"$a"`` -> ``"${a}"``, ``"$a-b"`` -> ``"${a}-b"``. Brackets after it stay
    text (``"$a[1]"`` -> ``"${a}[1]"``): Puppet reads them as text, and puppet-lint's moving them into
    the braces (``"${a[1]}"``) would make them an index."""
    tok: Tok = p.data["token"]
    tok.type = "VARIABLE"
    if "-" in tok.value:
        name, _, text = tok.value.partition("-")
        tok.value = name
        after = tok.next
        if after is not None:
            after.value = f"-{text}{after.value}"


_BRACKETS = re.compile(r"\[.+?\]")
_UPPER = re.compile("[A-Z]")


@check("variable_contains_dash")
def variable_contains_dash(m: Manifest) -> list[Problem]:
    value_at = m.value_at
    return [
        problem("variable_contains_dash", "warning", "variable contains a dash", m.tokens[i])
        for i in m.positions_of("VARIABLE", "UNENC_VARIABLE")
        if "-" in (v := value_at(i)) and "-" in _BRACKETS.sub("", v)
    ]


@check("variable_is_lowercase")
def variable_is_lowercase(m: Manifest) -> list[Problem]:
    value_at = m.value_at
    return [
        problem("variable_is_lowercase", "warning", "variable contains an uppercase letter", m.tokens[i])
        for i in m.positions_of("VARIABLE", "UNENC_VARIABLE")
        if not (v := value_at(i)).islower() and _UPPER.search(_BRACKETS.sub("", v))
    ]


def _line_length(name: str, m: Manifest, limit: int) -> list[Problem]:
    return [
        problem(name, "warning", f"line has more than {limit} characters", line=n, column=limit)
        for n, line in enumerate(m.lines, 1)
        if len(line) > limit and "://" not in line and "template(" not in line
    ]


@check("140chars")
def chars140(m: Manifest) -> list[Problem]:
    return _line_length("140chars", m, 140)


@check("2sp_soft_tabs")
def soft_tabs(m: Manifest) -> list[Problem]:
    toks = m.tokens
    value_at = m.value_at
    return [
        problem("2sp_soft_tabs", "error", "two-space soft tabs not used", toks[i])
        for i in m.positions("INDENT")
        if len(value_at(i)) % 2
    ]


@check("80chars", enabled=False)
def chars80(m: Manifest) -> list[Problem]:
    return _line_length("80chars", m, 80)


def _param_length(tok: Tok) -> tuple[int, Tok]:
    """Rendered length of the parameter name before an arrow, and its first token."""
    if tok.type != "DQPOST":
        return len(tok.render()), tok
    n = 0
    it: Tok | None = tok
    while it is not None and it.type != "DQPRE":
        n += len(it.render())
        it = it.prev
    if it is None:
        return n, tok
    return n + len(it.render()), it


@check("arrow_alignment")
def arrow_alignment(m: Manifest) -> list[Problem]:
    out = []
    for r in m.resources:
        # the only token types the walk below acts on (comments, which it skips, are none of them)
        rtoks = m.in_range(r.start - 1, r.end, "FARROW", "LBRACE", "RBRACE", "SEMIC")
        arrows = [t for t in rtoks if t.type == "FARROW"]
        if not arrows or arrows[0].line == arrows[-1].line:
            continue
        arrow_col = [0]
        param_col: list[int | None] = [None]
        level_toks: dict[int, list[Tok]] = {}
        level_lines: dict[int, set[int]] = {}  # the lines of level_toks[level]
        level = 0
        for t in rtoks:
            if t.type == "FARROW":
                param = t.prev_code
                assert param is not None
                plen, first = _param_length(param)
                if param_col[level] is None:
                    param_col[level] = first.column
                mine = level_toks.setdefault(level, [])
                lines = level_lines.setdefault(level, set())
                if t.line in lines:
                    pc = param_col[level]
                    assert pc is not None
                    col = pc + plen + 1
                else:  # the parameter token's own rendered length (what plen is, but for a string's end)
                    col = param.column + (len(param.render()) if param.type == "DQPOST" else plen) + 1
                arrow_col[level] = max(arrow_col[level], col)
                mine.append(t)
                lines.add(t.line)
            elif t.type == "LBRACE":
                level += 1
                arrow_col.append(0)
                level_toks.setdefault(level, [])
                param_col.append(None)
            elif t.type in ("RBRACE", "SEMIC"):
                mine = level_toks.setdefault(level, [])
                lines = level_lines.setdefault(level, set())
                if len(lines) > 1:
                    for a in mine:
                        if a.column == arrow_col[level] or len(mine) == 1:
                            continue
                        same_line = [b for b in mine if b.line == a.line]
                        pc = param_col[level]
                        out.append(
                            problem(
                                "arrow_alignment",
                                "warning",
                                "indentation of => is not properly aligned "
                                f"(expected in column {arrow_col[level]}, but found it in column {a.column})",
                                a,
                                arrow_column=arrow_col[level],
                                newline=same_line[0] is not a,
                                newline_indent=(pc or 1) - 1,
                            )
                        )
                arrow_col[level] = 0
                mine.clear()
                lines.clear()
                param_col[level] = None
                level -= 1
    return out


@fixer("arrow_alignment")
def _fix_arrow_alignment(m: Manifest, p: Problem) -> None:
    toks = m.editable()
    arrow: Tok = p.data["token"]
    param = arrow.prev_code
    if param is None:
        raise NoFix
    if p.data["newline"]:
        before = param.prev
        i = index_of(toks, before)
        if before is None or i is None:
            raise NoFix
        toks.insert(i, Tok("NEWLINE", "\n"))  # list only, as puppet-lint does
        before.type = "INDENT"
        before.value = " " * p.data["newline_indent"]
        end = index_of(toks, param)
        start = index_of(toks, prev_of(arrow, ("INDENT", "NEWLINE")))
        if end is None or start is None:
            raise NoFix
        width = sum(len(t.render()) for t in toks[start : end + 1]) + 1
        new_len = p.data["arrow_column"] - width
    else:
        prev = arrow.prev
        new_len = len(prev.render()) if prev is not None and prev.type == "WHITESPACE" else 0
        new_len += p.data["arrow_column"] - arrow.column
    if new_len < 0:
        raise NoFix
    prev = arrow.prev
    if prev is not None and prev.type == "WHITESPACE":
        prev.value = " " * new_len
    else:
        i = index_of(toks, prev)
        if i is None:
            raise NoFix
        toks.insert(i + 1, Tok("WHITESPACE", " " * new_len))


@check("hard_tabs")
def hard_tabs(m: Manifest) -> list[Problem]:
    if m.text is not None and "\t" not in m.text:
        return []
    return [
        problem("hard_tabs", "error", "tab character found", t)
        for t in m.of_type("INDENT", "WHITESPACE")
        if "\t" in t.value
    ]


@fixer("hard_tabs")
def _fix_hard_tabs(m: Manifest, p: Problem) -> None:
    tok: Tok = p.data["token"]
    tok.value = tok.value.replace("\t", "  ")


_BLANK_TYPES = ("WHITESPACE", "INDENT")


@check("trailing_whitespace")
def trailing_whitespace(m: Manifest) -> list[Problem]:
    # a blank token before a NEWLINE or last: found from the newlines (fewer), in order
    toks = m.tokens
    type_at = m.type_at
    found = [toks[k - 1] for k in m.positions("NEWLINE") if k and type_at(k - 1) in _BLANK_TYPES]
    if toks and toks[-1].type in _BLANK_TYPES:
        found.append(toks[-1])
    return [problem("trailing_whitespace", "error", "trailing whitespace found", t) for t in found]


@fixer("trailing_whitespace")
def _fix_trailing_whitespace(m: Manifest, p: Problem) -> None:
    tok: Tok = p.data["token"]
    if tok.prev is not None:
        tok.prev.next = tok.next
    if tok.next is not None:
        tok.next.prev = tok.prev
    remove(m.editable(), tok)
