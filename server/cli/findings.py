"""One finding, whichever tool found it: the plain record every machine-readable format is written from.

``--validate``, ``--compile`` (and its ``--report``) and ``--lint`` each turn what they found into a list
of :class:`Finding` and hand it to the one writer of the chosen format (:mod:`server.cli.formats`), so a
SARIF file, a JUnit report, GitHub annotations or a Code Climate report says the same thing whichever
command wrote it.  Rule ids are Puppet's issue codes (the one issue table, :mod:`grammar.issues`) or
puppet-lint's check names; the help text of a Puppet issue is its message template from that table.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from puppet_xpp.xpp.sources import shown

__all__ = ["LINT_TOOL", "VALIDATE_TOOL", "Finding", "issue_help", "lint_help", "severity_of"]

VALIDATE_TOOL = "puppet-xpp"  # the validator (Puppet's rules), for --validate and --compile
LINT_TOOL = "puppet-lint"  # puppet-lint's checks, for --lint

# Where puppet-lint 3.0.1 points for each check (a fact of its reports: the helpUri of its SARIF rules).
_STYLE = "https://puppet.com/docs/puppet/latest/style_guide.html#"
LINT_HELP_URI: dict[str, str] = {
    "arrow_on_right_operand_line": _STYLE + "chaining-arrow-syntax",
    "autoloader_layout": _STYLE + "separate-files",
    "inherits_across_namespaces": _STYLE + "class-inheritance",
    "names_containing_uppercase": "https://puppet.com/docs/puppet/latest/modules_fundamentals.html#allowed-module-names",
    "nested_classes_or_defines": _STYLE + "nested-classes-or-defined-types",
    "parameter_order": _STYLE + "display-order-of-parameters",
    "right_to_left_relationship": _STYLE + "chaining-arrow-syntax",
    "variable_scope": _STYLE + "namespacing-variables",
    "slash_comments": _STYLE + "comments",
    "star_comments": _STYLE + "comments",
    "case_without_default": _STYLE + "defaults-for-case-statements-and-selectors",
    "selector_inside_resource": _STYLE + "keep-resource-declarations-simple",
    "documentation": _STYLE + "public-and-private",
    "ensure_first_param": _STYLE + "attribute-ordering",
    "ensure_not_symlink_target": _STYLE + "symbolic-links",
    "file_mode": _STYLE + "file-modes",
    "unquoted_file_mode": _STYLE + "file-modes",
    "unquoted_resource_title": _STYLE + "resource-names",
    "double_quoted_strings": _STYLE + "quoting",
    "only_variable_string": _STYLE + "quoting",
    "single_quote_string_with_variables": _STYLE + "quoting",
    "variables_not_enclosed": _STYLE + "quoting",
    "140chars": _STYLE + "spacing-indentation-and-whitespace",
    "80chars": _STYLE + "spacing-indentation-and-whitespace",
    "2sp_soft_tabs": _STYLE + "spacing-indentation-and-whitespace",
    "arrow_alignment": _STYLE + "spacing-indentation-and-whitespace",
    "hard_tabs": _STYLE + "spacing-indentation-and-whitespace",
    "trailing_whitespace": _STYLE + "spacing-indentation-and-whitespace",
}


@dataclass(frozen=True)
class Finding:
    """One problem in one file.  ``line``/``column`` are 1-based (None: not known, e.g. an unreadable
    file); ``severity`` is ``error``, ``warning`` or ``note``; ``rule`` a Puppet issue code or a
    puppet-lint check name; ``tool`` who found it (:data:`VALIDATE_TOOL`, :data:`LINT_TOOL`)."""

    file: str
    line: int | None
    column: int | None
    severity: str
    rule: str
    message: str
    tool: str

    @property
    def help(self) -> str:
        return lint_help(self.rule) if self.tool == LINT_TOOL else issue_help(self.rule)

    @property
    def help_uri(self) -> str | None:
        return LINT_HELP_URI.get(self.rule) if self.tool == LINT_TOOL else None


def severity_of(level: str) -> str:
    """A Puppet severity (error, warning, deprecation) or a lint kind as a finding's severity."""
    if level == "error":
        return "error"
    if level in ("warning", "deprecation"):
        return "warning"
    return "note"


def issue_help(code: str) -> str:
    """The help text of a Puppet issue: its message template in the one issue table."""
    from puppet_xpp.grammar.issues import ISSUES

    known = ISSUES.get(code)
    if known is None:
        return code
    return f"{code} ({known.severity}): {known.template}"


def lint_help(check: str) -> str:
    """The help text of a puppet-lint check: what it is and where puppet-lint's documentation is."""
    if check == "syntax":
        return "The manifest could not be read by puppet-lint's lexer (run `puppet parser validate`)."
    uri = LINT_HELP_URI.get(check)
    where = f" See {uri}" if uri else ""
    return f"puppet-lint's {check} check.{where}"


def display_files(files: Iterable[str]) -> list[str]:
    """The file names of a run as the formats print them (the one escaping rule for file names)."""
    return [shown(f) for f in files]
