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

__all__ = [
    "LINT_HELP",
    "LINT_HELP_URI",
    "LINT_TOOL",
    "VALIDATE_TOOL",
    "Finding",
    "issue_help",
    "lint_help",
    "severity_of",
]

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


# What each puppet-lint check looks for (our words), the help text of its rule in the reports.
LINT_HELP: dict[str, str] = {
    "arrow_on_right_operand_line": "A chaining arrow (-> ~>) ends a line instead of starting the next one.",
    "autoloader_layout": "A class or defined type is not in the file the autoloader looks in for its name.",
    "class_inherits_from_params_class": "A class inherits from a params class (off by default).",
    "code_on_top_scope": "Code stands outside any class or defined type (off by default).",
    "inherits_across_namespaces": "A class inherits from a class of another module.",
    "names_containing_dash": "A class or defined type name contains a dash.",
    "names_containing_uppercase": "A class or defined type name contains an uppercase letter.",
    "nested_classes_or_defines": "A class or defined type is defined inside a class.",
    "parameter_order": "A parameter with a default comes before one without.",
    "right_to_left_relationship": "A relationship uses a right-to-left arrow (<- <~).",
    "variable_scope": "A variable of another scope is used without its namespace.",
    "slash_comments": "A comment starts with //.",
    "star_comments": "A comment is a /* */ block.",
    "case_without_default": "A case statement has no default case.",
    "selector_inside_resource": "A selector (?) is used inside a resource's attributes.",
    "documentation": "A class or defined type has no comment above it.",
    "unquoted_node_name": "A node name is not quoted.",
    "duplicate_params": "A resource sets the same attribute twice.",
    "ensure_first_param": "A resource's ensure attribute is not its first.",
    "ensure_not_symlink_target": "A file resource gives a symbolic link's target as ensure (use target).",
    "file_mode": "A file mode is neither four octal digits nor a symbolic mode.",
    "unquoted_file_mode": "A file mode is not a quoted string.",
    "unquoted_resource_title": "A resource title is not quoted.",
    "double_quoted_strings": "A double-quoted string has no variable or escape in it.",
    "only_variable_string": "A string holds nothing but one variable.",
    "puppet_url_without_modules": "A puppet:// URL's path does not start with modules/.",
    "quoted_booleans": "A boolean is written as a quoted string (off by default).",
    "single_quote_string_with_variables": "A single-quoted string contains a variable (not interpolated).",
    "variables_not_enclosed": "A variable in a string is not enclosed in braces.",
    "variable_contains_dash": "A variable name contains a dash.",
    "variable_is_lowercase": "A variable name contains an uppercase letter.",
    "140chars": "A line is longer than 140 characters.",
    "80chars": "A line is longer than 80 characters (off by default).",
    "2sp_soft_tabs": "Indentation is not made of two-space steps.",
    "arrow_alignment": "The => arrows of a block are not aligned.",
    "hard_tabs": "A tab character is used.",
    "trailing_whitespace": "A line ends with whitespace.",
    "syntax": "The manifest could not be read by puppet-lint's lexer (run `puppet parser validate`).",
    "io": "The file could not be read.",
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
    """The help text of a Puppet issue: its message template in the one issue table -- the validator's
    (:mod:`grammar.issues`) or the deep checks' (:data:`server.analysis.deep.codes.CODES`)."""
    from puppet_xpp.grammar.issues import ISSUES
    from puppet_xpp.server.analysis.deep.codes import CODES

    known = ISSUES.get(code)
    if known is not None:
        return f"{code} ({known.severity}): {known.template}"
    deep = CODES.get(code)
    if deep is not None:
        return f"{code} ({deep.severity}): {deep.template}"
    return code


def lint_help(check: str) -> str:
    """The help text of a puppet-lint check: what it is and where puppet-lint's documentation is."""
    uri = LINT_HELP_URI.get(check)
    where = f" See {uri}" if uri else ""
    return LINT_HELP.get(check, f"puppet-lint's {check} check.") + where


def display_files(files: Iterable[str]) -> list[str]:
    """The file names of a run as the formats print them (the one escaping rule for file names)."""
    return [shown(f) for f in files]
