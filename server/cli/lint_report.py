"""puppet-lint 3.0.1's own reports, for ``--lint --json`` and ``--lint --sarif`` (a drop-in for its
command line: tools that read puppet-lint's JSON or SARIF read ours unchanged).

``--json`` prints, for every file linted, the array of its problems as puppet-lint holds them: the
keys its check reported (message, line, column, then the check's own: the token, the resource, the
arrow column ...), then kind, check, fullpath, path, filename, the reason of an ignored problem, KIND,
and the context with ``--with-context``; laid out as Ruby's ``JSON.pretty_generate`` lays it out (an
empty array is ``[``, an empty line, ``]``).  A token is shown as Ruby shows an object it cannot turn
into JSON, ``#<PuppetLint::Lexer::Token:0x...>`` with an address of its own (the same token, the same
address).  ``--sarif`` prints puppet-lint's SARIF layout: one run, the rules in order of first use with
the level of that first problem, paths relative to the first PATH's directory (``ROOTPATH``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from puppet_xpp.lint.core import Problem
from puppet_xpp.server.cli.findings import LINT_HELP_URI, lint_help

__all__ = ["FileProblems", "json_report", "problem_record", "ruby_pretty", "sarif_report"]

# the keys each check reports between the column and the kind (puppet-lint 3.0.1's report layout),
# and where our problem keeps each of them
EXTRA_KEYS: dict[str, tuple[str, ...]] = {
    "arrow_on_right_operand_line": ("token",),
    "names_containing_uppercase": ("token",),
    "slash_comments": ("token",),
    "star_comments": ("token",),
    "unquoted_node_name": ("token",),
    "ensure_first_param": ("resource",),
    "ensure_not_symlink_target": ("param_token", "value_token"),
    "file_mode": ("token",),
    "unquoted_file_mode": ("token",),
    "unquoted_resource_title": ("token",),
    "double_quoted_strings": ("token",),
    "only_variable_string": ("start_token", "var_token", "end_token"),
    "puppet_url_without_modules": ("token",),
    "quoted_booleans": ("token",),
    "variables_not_enclosed": ("token",),
    "arrow_alignment": ("token", "arrow_column", "newline", "newline_indent"),
    "hard_tabs": ("token",),
    "trailing_whitespace": ("token",),
}
_STORED_AS = {"value_token": "token", "var_token": "token"}

# puppet-lint's driver in its SARIF (its template's values)
_SARIF_SCHEMA = "https://www.schemastore.org/schemas/json/sarif-2.1.0-rtm.5.json"
_SARIF_VERSION = "0.15.0"


@dataclass
class FileProblems:
    """One file's reported problems (after --error-level, --show-ignored) with its names."""

    path: str
    problems: list[Problem]
    context: list[str] | None = None  # the --with-context line of each problem, when asked


def _token(value: object) -> str:
    return f"#<PuppetLint::Lexer::Token:0x{id(value):016x}>"


def _value(key: str, value: Any) -> Any:
    if key == "resource":
        return {
            "start": value.start,
            "end": value.end,
            "tokens": [_token(t) for t in value.tokens],
            "type": _token(value.type),
            "param_tokens": [_token(t) for t in value.param_tokens],
        }
    if key.endswith("token"):
        return _token(value)
    return value


def problem_record(path: str, p: Problem, context: str | None = None) -> dict[str, Any]:
    """One problem as puppet-lint's ``--json`` shows it, keys in its order."""
    names = {"fullpath": os.path.abspath(path), "path": path, "filename": os.path.basename(path)}
    position = {"message": p.message, "line": p.line, "column": p.column}
    record: dict[str, Any]
    if p.check == "syntax" and p.message.startswith("Syntax error (try"):  # the node name check's
        record = {"check": "syntax", **position, "kind": p.kind, **names}
    elif p.check == "syntax" and p.data.get("origin") == "lexer":
        record = {"kind": p.kind, "check": "syntax", **position, **names}
    elif p.check == "syntax":  # the parse of resources failed
        record = {"kind": p.kind, "check": "syntax", "message": p.message}
        record.update(fullpath=names["fullpath"], filename=names["filename"], path=path)
        record.update(line=p.line, column=p.column)
    else:
        record = dict(position)
        for key in EXTRA_KEYS.get(p.check, ()):
            stored = p.data.get(_STORED_AS.get(key, key))
            record[key] = _value(key, stored) if stored is not None else None
        record.update(kind=p.kind, check=p.check, **names)
    if p.reason is not None:
        record["reason"] = p.reason
    record["KIND"] = p.kind.upper()
    if context is not None:
        record["context"] = context
    return record


def ruby_pretty(value: Any, depth: int = 0) -> str:
    """``value`` as Ruby's ``JSON.pretty_generate`` writes it (two-space indent, ``"key": value``)."""
    pad = "  " * (depth + 1)
    if isinstance(value, dict):
        if not value:
            return "{\n" + "  " * depth + "}"
        items = [
            f"{pad}{json.dumps(k, ensure_ascii=False)}: {ruby_pretty(v, depth + 1)}" for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + "  " * depth + "}"
    if isinstance(value, list):
        if not value:
            return "[\n\n" + "  " * depth + "]"
        return "[\n" + ",\n".join(pad + ruby_pretty(v, depth + 1) for v in value) + "\n" + "  " * depth + "]"
    return json.dumps(value, ensure_ascii=False)


def json_report(files: Sequence[FileProblems]) -> str:
    """What ``puppet-lint --json`` prints for these files."""
    data = [
        [
            problem_record(f.path, p, None if f.context is None else f.context[k])
            for k, p in enumerate(f.problems)
        ]
        for f in files
    ]
    return ruby_pretty(data) + "\n"


def sarif_report(files: Sequence[FileProblems], first_path: str) -> str:
    """What ``puppet-lint --sarif`` prints: paths relative to ``first_path`` (a directory, or a file's
    directory), as puppet-lint makes them."""
    full = os.path.abspath(first_path)
    base = full if os.path.isdir(full) else os.path.dirname(full)
    base_uri = ("file://" if base.startswith("/") else "file:///") + base
    if not base_uri.endswith("/"):
        base_uri += "/"
    rules: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for f in files:
        for p in f.problems:
            index = next((k for k, r in enumerate(rules) if r["id"] == p.check), None)
            if index is None:
                rule: dict[str, Any] = {"id": p.check, "fullDescription": {"text": lint_help(p.check)}}
                if p.kind in ("error", "warning"):
                    rule["defaultConfiguration"] = {"level": p.kind}
                if p.check in LINT_HELP_URI:
                    rule["helpUri"] = LINT_HELP_URI[p.check]
                index = len(rules)
                rules.append(rule)
            location = {
                "physicalLocation": {
                    "artifactLocation": {
                        "uri": os.path.relpath(os.path.abspath(f.path), base),
                        "uriBaseId": "ROOTPATH",
                    },
                    "region": {"startLine": p.line, "startColumn": p.column},
                }
            }
            results.append(
                {
                    "ruleId": p.check,
                    "ruleIndex": index,
                    "message": {"text": p.message},
                    "locations": [location],
                }
            )
    driver = {
        "name": "Puppet Lint",
        "informationUri": "https://github.com/puppetlabs/puppet-lint",
        "version": _SARIF_VERSION,
        "rules": rules,
    }
    run = {
        "tool": {"driver": driver},
        "results": results,
        "columnKind": "utf16CodeUnits",
        "originalUriBaseIds": {"ROOTPATH": {"uri": base_uri}},
    }
    return ruby_pretty({"$schema": _SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}) + "\n"
