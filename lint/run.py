"""Lint one manifest: tokens -> control comments -> every enabled check (all on the original tokens)
-> optionally every fix, check by check, problem by problem -> the fixed text.

The order of the result is puppet-lint's: a lexer "Syntax error" first, then each check's problems in
check order. A manifest whose resources cannot be delimited gives only "Syntax error" problems.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from puppet_xpp.grammar.gcpause import paused
from puppet_xpp.lint import checks_code, checks_text, control
from puppet_xpp.lint.columns import tokenise_columns
from puppet_xpp.lint.core import CHECKS, Check, NoFix, Problem
from puppet_xpp.lint.data import LintSyntaxError, Manifest
from puppet_xpp.lint.tokens import LexProblem, Tok, tokenise_indexed, unlink

# puppet-lint 3.0.1's check order (the order it loads its plugins)
ORDER = (
    "arrow_on_right_operand_line autoloader_layout class_inherits_from_params_class code_on_top_scope "
    "inherits_across_namespaces names_containing_dash names_containing_uppercase nested_classes_or_defines "
    "parameter_order right_to_left_relationship variable_scope slash_comments star_comments "
    "case_without_default selector_inside_resource documentation unquoted_node_name duplicate_params "
    "ensure_first_param ensure_not_symlink_target file_mode unquoted_file_mode unquoted_resource_title "
    "double_quoted_strings only_variable_string puppet_url_without_modules quoted_booleans "
    "single_quote_string_with_variables variables_not_enclosed variable_contains_dash variable_is_lowercase "
    "140chars 2sp_soft_tabs 80chars arrow_alignment hard_tabs trailing_whitespace"
).split()
assert checks_code and checks_text and sorted(ORDER) == sorted(CHECKS), "check modules and ORDER disagree"


def all_checks() -> list[Check]:
    return [CHECKS[n] for n in ORDER]


def default_enabled() -> set[str]:
    return {c.name for c in all_checks() if c.enabled}


# the size from which lint keeps a text's tokens in columns (lint.columns): a token object each would
# take about 200 bytes a token, 40 times the text (a 1 MB manifest: some 40 MB of objects)
COLUMNS_FROM = 1 << 20

# the registry is complete once the check modules are imported (above); lint() reads these per call
_ALL = tuple(all_checks())
_DEFAULT = frozenset(default_enabled())


@dataclass
class LintResult:
    problems: list[Problem]
    fixed: str | None = None  # the fixed text (``fix=True`` and no syntax error), else None
    warnings: list[str] = field(default_factory=list)  # control-comment warnings (puppet-lint: stderr)

    @property
    def syntax_error(self) -> bool:
        return any(p.check == "syntax" for p in self.problems)


def lint(
    text: str,
    *,
    path: str | None = None,
    enabled: set[str] | None = None,
    fix: bool = False,
    relative: bool = False,
    fix_only: Callable[[Problem], bool] | None = None,
    columns: bool | None = None,
) -> LintResult:
    """Run the ``enabled`` checks (default: puppet-lint's defaults) on ``text``; ``path`` is the file
    name the layout check compares against (relative to the working directory). With ``fix``, every
    fixable problem is fixed, or only those ``fix_only`` accepts (the editor's "fix this one").
    ``columns``: keep the tokens in columns (lint.columns), as a text of COLUMNS_FROM characters or
    more is when not fixed (None: by size); the problems are the same either way."""
    if not text:
        return LintResult([], text if fix else None)
    if not fix and (len(text) >= COLUMNS_FROM if columns is None else columns):
        with paused(freeze=False):  # (views hold no cycles: nothing to unlink)
            held, lex_problem = tokenise_columns(text)
            return _lint(text, held, lex_problem, held.by_type, path, enabled, fix, relative, fix_only)
    # grammar.gcpause: no collection while the tokens are made.  They are linked both ways: unlinked
    # after, reference counting frees them (else a collection would traverse them all to find their
    # cycles: seconds for a 5 MB manifest); not frozen (a token a fix removed keeps its links)
    with paused(freeze=False):
        toks, lex_problem, index = tokenise_indexed(text)
        result = None
        try:
            result = _lint(text, toks, lex_problem, index, path, enabled, fix, relative, fix_only)
            return result
        finally:
            unlink(toks, _held(result))


def _held(result: LintResult | None) -> set[int]:
    """The ids of the tokens the problems hold (their neighbour links are read after: a token's
    rendering looks at them)."""
    held: set[int] = set()
    for p in result.problems if result is not None else ():
        for value in p.data.values():
            group = getattr(value, "tokens", None)  # (a resource)
            for t in (value, *(value if isinstance(value, list | tuple) else ()), *(group or ())):
                if isinstance(t, Tok):
                    held.add(id(t))
            for name in ("type", "param_tokens"):
                inner = getattr(value, name, None)
                for t in inner if isinstance(inner, list) else (inner,):
                    if isinstance(t, Tok):
                        held.add(id(t))
    return held


def _lint(
    text: str,
    toks: Sequence[Tok],
    lex_problem: LexProblem | None,
    index: Mapping[str, Sequence[int]],
    path: str | None,
    enabled: set[str] | None,
    fix: bool,
    relative: bool,
    fix_only: Callable[[Problem], bool] | None,
) -> LintResult:
    on = _DEFAULT if enabled is None else enabled
    problems: list[Problem] = []
    if lex_problem is not None:
        msg = "Syntax error" if lex_problem.reason is None else f"Syntax error ({lex_problem.reason})"
        # origin: puppet-lint reports a lexer's syntax error with its own layout (server.cli.lint_report)
        lexed = Problem(
            "syntax", "error", msg, lex_problem.line, lex_problem.column, data={"origin": "lexer"}
        )
        problems.append(lexed)
    m = Manifest(
        toks,
        path=path,
        fullpath=os.path.abspath(path) if path else None,
        filename=os.path.basename(path) if path else None,
        lines=text.split("\n"),
        relative=relative,
        text=text,
        index=index,
    )
    # (control comments are comments: only those tokens are read)
    overrides = control.parse(m.of_type(*control.COMMENTS)) if "lint:" in text else control.Overrides()
    per_check: list[tuple[Check, list[Problem]]] = []
    try:
        for c in _ALL:
            if c.name not in on:
                continue
            found = c.run(m)
            if overrides.lines:
                for p in found:
                    if p.check == "syntax":
                        continue
                    why = overrides.reason(p.check, p.line)
                    if why is not None:
                        p.kind = "ignored"
                        p.reason = why
            per_check.append((c, found))
    except LintSyntaxError as e:
        problems.append(Problem("syntax", "error", "Syntax error", e.token.line, e.token.column))
        return LintResult(problems, None, overrides.warnings)
    attempted = False  # whether any fix ran (one that declines may still have edited tokens)
    for c, found in per_check:
        if fix and c.fix is not None:
            for p in found:
                if p.kind == "ignored" or p.check == "syntax" or (fix_only is not None and not fix_only(p)):
                    continue
                attempted = True
                try:
                    c.fix(m, p)
                    p.kind = "fixed"
                except NoFix:
                    pass
        problems.extend(found)
    result = LintResult(problems, None, overrides.warnings)
    if fix and not result.syntax_error:
        untouched = "\r" not in text and not m.of_type("SLASH_COMMENT")
        if untouched and not attempted:
            result.fixed = text  # the tokens render back to the text exactly
        else:
            result.fixed = "".join(t.render() for t in m.tokens)
    return result
