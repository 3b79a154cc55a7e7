"""Lint in the language server (no pygls here): puppet-lint diagnostics, Format Document / Selection,
formatting while typing, and quick fixes, over one document's text.

Positions are LSP's: 0-based lines, columns in the negotiated encoding (``utf-16`` by default). The lint
core reports 1-based character columns; ``_col`` converts. Settings (section ``puppet``):
``lint.enabled`` (diagnostics and quick fixes; on unless set to false) and ``lint.rcPath`` (a
``.puppet-lint.rc`` to use; default: the nearest ``.puppet-lint.rc`` in the file's directory or above,
plus ``/etc`` and ``~`` as puppet-lint reads them): server.analysis.workspace.LintSettings.

The functions here run in the lint child process (server/analysis/lint_pool.py): plain data in and
out.  The parsed rc files are cached in that process (by path and modification time).
"""

from __future__ import annotations

import difflib
import functools
import os
from dataclasses import dataclass

from puppet_xpp.lint.config import LintConfig, UsageError, load_config
from puppet_xpp.lint.core import CHECKS, Problem
from puppet_xpp.lint.format import format_manifest, indent_widths
from puppet_xpp.lint.run import lint
from puppet_xpp.lint.tokens import Tok, link, tokenise
from puppet_xpp.server.analysis.document import LspDiagnostic
from puppet_xpp.server.analysis.workspace import LintSettings
from puppet_xpp.xpp.sources import read_text

Pos = tuple[int, int]
Edit = tuple[Pos, Pos, str]  # (start, end, new text)
SOURCE = "puppet-lint"


@dataclass
class Action:
    title: str
    kind: str  # "quickfix" or "source.fixAll"
    edits: list[Edit]
    diagnostic: LspDiagnostic | None = None


def _rc_for(path: str | None, settings: LintSettings) -> str | None:
    if settings.rc_path:
        return settings.rc_path
    d = os.path.dirname(os.path.abspath(path)) if path else None
    while d:
        rc = os.path.join(d, ".puppet-lint.rc")
        if os.path.isfile(rc):
            return rc
        parent = os.path.dirname(d)
        d = None if parent == d else parent
    return None


def config_for(path: str | None, settings: LintSettings) -> LintConfig:
    """puppet-lint's configuration for a file (read once per rc file and modification time): the rc
    file, then the project configuration's ``[lint]`` options (xpp.project), as ``--lint`` reads them."""
    from puppet_xpp.xpp.project import project_for

    rc = _rc_for(path, settings)
    try:
        mtime = os.stat(rc).st_mtime if rc else 0.0
    except OSError:
        mtime = -1.0
    options = tuple(project_for(path).lint.arguments()) if path else ()
    return _read_config(rc, mtime, options)


def read_rc(path: str) -> str | None:
    """An rc file, by the one reading rule (a FIFO or a device named ``.puppet-lint.rc`` is not read):
    how both the command line and the language server read puppet-lint's rc files."""
    return read_text(path, errors="replace")


@functools.lru_cache(maxsize=64)
def _read_config(rc: str | None, mtime: float, options: tuple[str, ...] = ()) -> LintConfig:
    """The configuration of rc file ``rc`` (None: puppet-lint's defaults) as it was at ``mtime``, with
    ``options`` (puppet-lint's command-line options) applied after it."""
    try:
        if rc is None:
            return load_config(list(options), cwd="/nonexistent")[0]
        return load_config(list(options), rc=rc, read=read_rc)[0]
    except UsageError:
        return LintConfig()


# -- positions --------------------------------------------------------------------------------------------


def _col(line_text: str, chars: int, encoding: str) -> int:
    """Column in ``encoding`` units of the first ``chars`` characters of a line."""
    head = line_text[:chars]
    if encoding == "utf-32" or head.isascii():
        return len(head)
    if encoding == "utf-8":
        return len(head.encode("utf-8", "surrogatepass"))
    return len(head.encode("utf-16-le", "surrogatepass")) // 2


def _chars(line_text: str, col: int, encoding: str) -> int:
    """Characters of a line before column ``col`` in ``encoding`` units."""
    if encoding == "utf-32" or line_text.isascii():
        return min(col, len(line_text))
    n = 0
    for i, ch in enumerate(line_text):
        if n >= col:
            return i
        n += len(ch.encode("utf-8")) if encoding == "utf-8" else (2 if ord(ch) > 0xFFFF else 1)
    return len(line_text)


def _lines(text: str) -> list[str]:
    return text.split("\n")


# -- diagnostics --------------------------------------------------------------------------------------------


def _span(p: Problem, lines: list[str]) -> tuple[int, int, int]:
    """(0-based line, first char, end char) a problem covers: its token, or the rest of the line."""
    li = max(p.line - 1, 0)
    text = lines[li] if li < len(lines) else ""
    start = min(max(p.column - 1, 0), len(text))
    tok = p.data.get("token")
    if isinstance(tok, Tok):
        width = len(tok.render().split("\n", 1)[0])
        return li, start, min(start + max(width, 1), len(text))
    return li, start, len(text) if start < len(text) else start


def problems(text: str, path: str | None, settings: LintSettings) -> list[Problem]:
    if not settings.enabled or (path is not None and path.endswith(".epp")):
        return []
    cfg = config_for(path, settings)
    return [
        p
        for p in lint(text, path=path, enabled=cfg.enabled, relative=cfg.relative).problems
        if p.kind in ("warning", "error") and p.check != "syntax"
    ]


def diagnostics(
    text: str, path: str | None, settings: LintSettings, encoding: str = "utf-16"
) -> list[LspDiagnostic]:
    """puppet-lint's warnings and errors (not syntax errors: the parser reports those)."""
    lines = _lines(text)
    out = []
    for p in problems(text, path, settings):
        li, a, b = _span(p, lines)
        line_text = lines[li] if li < len(lines) else ""
        out.append(
            LspDiagnostic(
                (li, _col(line_text, a, encoding)),
                (li, _col(line_text, b, encoding)),
                1 if p.kind == "error" else 2,
                p.check,
                p.message,
                SOURCE,
            )
        )
    return out


# -- edits ----------------------------------------------------------------------------------------------------


def _end_pos(lines: list[str], encoding: str) -> Pos:
    return len(lines) - 1, _col(lines[-1], len(lines[-1]), encoding)


def text_edits(
    old: str, new: str, encoding: str = "utf-16", lines: tuple[int, int] | None = None
) -> list[Edit]:
    """Line-level edits turning ``old`` into ``new``; ``lines``: keep only the changes that touch this
    0-based inclusive line range (range formatting)."""
    if old == new:
        return []
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    old_lines = _lines(old)
    out: list[Edit] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if lines is not None and (i2 <= lines[0] and i1 != i2 or i1 > lines[1]):
            continue
        start = (i1, 0) if i1 < len(a) else _end_pos(old_lines, encoding)
        end = (i2, 0) if i2 < len(a) else _end_pos(old_lines, encoding)
        out.append((start, end, "".join(b[j1:j2])))
    return out


def _fixable(cfg: LintConfig) -> set[str]:
    return {n for n in cfg.enabled if CHECKS[n].fix is not None}


def formatting(
    text: str,
    path: str | None,
    settings: LintSettings,
    encoding: str = "utf-16",
    rng: tuple[Pos, Pos] | None = None,
) -> list[Edit]:
    """Format Document (``rng`` None) or Format Selection: every enabled lint fix, indentation, arrow
    alignment. A text the lint lexer rejects is left alone."""
    cfg = config_for(path, settings)
    new = format_manifest(text, path=path, enabled=_fixable(cfg) | {"arrow_alignment"})
    return text_edits(text, new, encoding, None if rng is None else (rng[0][0], rng[1][0]))


def on_type_formatting(
    text: str, path: str | None, settings: LintSettings, pos: Pos, ch: str, encoding: str = "utf-16"
) -> list[Edit]:
    """After ``=>`` (``ch`` ">"): align the arrows of the enclosing block. After a line break
    (``ch`` "\\n"): indent the new line."""
    lines = _lines(text)
    line = pos[0]
    if line >= len(lines):
        return []
    if ch == "\n":
        width = indent_widths(text).get(line + 1)
        if width is None:
            return []
        cur = lines[line]
        blanks = len(cur) - len(cur.lstrip(" \t"))
        if cur[:blanks] == " " * width:
            return []
        return [((line, 0), (line, _col(cur, blanks, encoding)), " " * width)]
    if ch == ">":
        before = lines[line][: _chars(lines[line], pos[1], encoding)]
        if not before.rstrip().endswith("=>"):
            return []
        return text_edits(text, align_block(text, line + 1), encoding)
    return []


def align_block(text: str, line: int) -> str:
    """``text`` with the ``=>`` of the innermost bracket block around 1-based ``line`` aligned: each arrow
    that follows the first code token of its line gets one blank after the longest such key."""
    toks, problem = tokenise(text)
    if problem is not None:
        return text
    # the innermost bracket open before the line's end that is still open there
    stack: list[int] = []
    target: int | None = None
    for i, t in enumerate(toks):
        if t.line > line:
            break
        if t.type in ("LBRACE", "LBRACK", "LPAREN"):
            stack.append(i)
        elif t.type in ("RBRACE", "RBRACK", "RPAREN") and stack:
            stack.pop()
    if not stack:
        return text
    target = stack[-1]
    depth = 0
    arrows: list[Tok] = []
    for t in toks[target + 1 :]:
        if t.type in ("LBRACE", "LBRACK", "LPAREN"):
            depth += 1
        elif t.type in ("RBRACE", "RBRACK", "RPAREN"):
            if depth == 0:
                break
            depth -= 1
        elif t.type == "FARROW" and depth == 0:
            key = t.prev_code
            if key is not None and (key.prev is None or key.prev.type in ("INDENT", "NEWLINE")):
                arrows.append(t)
    if len({a.line for a in arrows}) < 2:
        return text
    col = max(a.prev_code.column + len(a.prev_code.render()) for a in arrows if a.prev_code is not None) + 1
    for a in arrows:
        key = a.prev_code
        assert key is not None
        gap = col - (key.column + len(key.render()))
        if a.prev is not None and a.prev.type == "WHITESPACE":
            a.prev.value = " " * gap
        else:
            ws = Tok("WHITESPACE", " " * gap)
            toks.insert(toks.index(a), ws)
    link(toks)
    return "".join(t.render() for t in toks)


# -- code actions ---------------------------------------------------------------------------------------


def code_actions(
    text: str, path: str | None, settings: LintSettings, rng: tuple[Pos, Pos], encoding: str = "utf-16"
) -> list[Action]:
    """For each lint problem on the lines of ``rng``: its fix (when the check has one) and "ignore this
    check on this line"; plus "fix all" when anything is fixable."""
    found = problems(text, path, settings)
    if not found:
        return []
    cfg = config_for(path, settings)
    lines = _lines(text)
    out: list[Action] = []
    for p in found:
        if not rng[0][0] <= p.line - 1 <= rng[1][0]:
            continue
        li, a, b = _span(p, lines)
        diag = LspDiagnostic(
            (li, _col(lines[li], a, encoding)),
            (li, _col(lines[li], b, encoding)),
            1 if p.kind == "error" else 2,
            p.check,
            p.message,
            SOURCE,
        )
        if CHECKS[p.check].fix is not None:
            key = (p.line, p.column)
            fixed = lint(
                text,
                path=path,
                enabled={p.check},
                relative=cfg.relative,
                fix=True,
                fix_only=lambda q, key=key: (q.line, q.column) == key,  # type: ignore[misc]
            ).fixed
            if fixed is not None and fixed != text:
                out.append(
                    Action(
                        f"Fix: {p.message} ({p.check})", "quickfix", text_edits(text, fixed, encoding), diag
                    )
                )
        out.append(
            Action(
                f"Ignore {p.check} on this line", "quickfix", _ignore_edit(lines, li, p.check, encoding), diag
            )
        )
    fixable = [p for p in found if CHECKS[p.check].fix is not None]
    if fixable:
        fixed = lint(text, path=path, enabled=_fixable(cfg), relative=cfg.relative, fix=True).fixed
        if fixed is not None and fixed != text:
            out.append(
                Action("Fix all puppet-lint problems", "source.fixAll", text_edits(text, fixed, encoding))
            )
    return out


def _ignore_edit(lines: list[str], li: int, check: str, encoding: str) -> list[Edit]:
    """A control comment: at the end of the line, or a ``lint:ignore`` / ``lint:endignore`` pair around
    it when the line already ends in a comment or is (partly) inside a multi-line string, heredoc or
    comment (the pair then encloses those tokens)."""
    toks, _ = tokenise("\n".join(lines))
    target = li + 1
    spans = [(t.line, t.line + t.render().count("\n"), t) for t in toks if t.type != "NEWLINE"]
    # heredoc bodies as one span from the line that opens them (the line before the body)
    start: int | None = None
    for a, b, t in list(spans):
        if start is None and t.type in ("HEREDOC", "HEREDOC_PRE"):
            start = a
        if start is not None and t.type in ("HEREDOC", "HEREDOC_POST"):
            spans.append((start - 1, b, t))
            start = None
    covering = [(a, b, t) for a, b, t in spans if a <= target <= b]
    inside = any(a < target or t.type.startswith("HEREDOC") for a, _b, t in covering)
    has_comment = any(t.type in ("COMMENT", "MLCOMMENT", "SLASH_COMMENT") for _a, _b, t in covering)
    line = lines[li]
    if covering and not inside and not has_comment:
        end = _col(line, len(line.rstrip("\r")), encoding)
        return [((li, end), (li, end), f" # lint:ignore:{check}")]
    first = min([a for a, _b, _t in covering] + [target])
    last = max([b for a, b, _t in spans if first <= a <= target] + [target])
    head = lines[first - 1]
    indent = head[: len(head) - len(head.lstrip(" \t"))]
    return [
        ((first - 1, 0), (first - 1, 0), f"{indent}# lint:ignore:{check}\n"),
        ((last, 0), (last, 0), f"{indent}# lint:endignore\n"),
    ]


def fix_all(text: str, path: str | None, settings: LintSettings) -> tuple[int, str]:
    """(problems fixed, the fixed text) of every enabled puppet-lint check with a fix, configured for the
    file as the language server's lint is (its .puppet-lint.rc, the project's ``[lint]``): the same lint
    call as ``--lint --fix``.  A text the lint lexer rejects is returned unchanged with 0.  Runs in the
    lint process (server/analysis/lint_pool.py); ``settings`` is the session's lint settings."""
    cfg = config_for(path, settings)
    result = lint(text, path=path, enabled=cfg.enabled, relative=cfg.relative, fix=True)
    if result.fixed is None:
        return 0, text
    return sum(1 for p in result.problems if p.kind == "fixed"), result.fixed
