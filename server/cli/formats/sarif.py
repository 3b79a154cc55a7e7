"""SARIF 2.1.0 (OASIS): what code-scanning services (GitHub, GitLab, Azure DevOps) import.

One run per tool that found something (the validator, puppet-lint), each with its rules (the Puppet issue
codes or check names used, with their help text) and its results.  Locations are the files as given,
relative ones as relative URIs (resolved against the working directory, ``%SRCROOT%``) and absolute ones
as ``file://`` URIs; a finding without a position (an unreadable file) has no region.
"""

from __future__ import annotations

import json
import os
import urllib.parse
from collections.abc import Sequence
from typing import Any, TextIO

from puppet_xpp import __version__
from puppet_xpp.server.cli.findings import LINT_TOOL, VALIDATE_TOOL, Finding
from puppet_xpp.xpp.sources import shown

__all__ = ["SCHEMA", "document", "uri_of", "write"]

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

_INFORMATION = "https://github.com/puppetlabs/puppet-lint"
_LEVEL = {"error": "error", "warning": "warning", "note": "note"}


def uri_of(path: str) -> tuple[str, str | None]:
    """(uri, uriBaseId) of a file as given: relative to the source root, or an absolute file URI."""
    text = shown(path).replace(os.sep, "/")
    if os.path.isabs(path):
        return "file://" + urllib.parse.quote(text), None
    while text.startswith("./"):
        text = text[2:]
    return urllib.parse.quote(text), "%SRCROOT%"


def _run(tool: str, findings: list[Finding]) -> dict[str, Any]:
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    results: list[dict[str, Any]] = []
    for f in findings:
        if f.rule not in index:
            index[f.rule] = len(rules)
            rule: dict[str, Any] = {
                "id": f.rule,
                "shortDescription": {"text": f.help.split(". ")[0].rstrip(".") + "."},
                "fullDescription": {"text": f.help},
                "help": {"text": f.help},
            }
            if f.help_uri:
                rule["helpUri"] = f.help_uri
            rules.append(rule)
        uri, base = uri_of(f.file)
        artifact: dict[str, Any] = {"uri": uri}
        if base is not None:
            artifact["uriBaseId"] = base
        physical: dict[str, Any] = {"artifactLocation": artifact}
        if f.line is not None and f.line >= 1:
            region: dict[str, int] = {"startLine": f.line}
            if f.column is not None and f.column >= 1:
                region["startColumn"] = f.column
            physical["region"] = region
        results.append(
            {
                "ruleId": f.rule,
                "ruleIndex": index[f.rule],
                "level": _LEVEL.get(f.severity, "note"),
                "message": {"text": shown(f.message)},
                "locations": [{"physicalLocation": physical}],
            }
        )
    driver: dict[str, Any] = {"name": tool, "version": __version__, "rules": rules}
    if tool == LINT_TOOL:
        driver["informationUri"] = _INFORMATION
    return {"tool": {"driver": driver}, "columnKind": "unicodeCodePoints", "results": results}


def document(findings: Sequence[Finding]) -> dict[str, Any]:
    """The SARIF log of ``findings``: one run per tool (the validator's run even when clean)."""
    tools = [VALIDATE_TOOL] if not findings else []
    for f in findings:
        if f.tool not in tools:
            tools.append(f.tool)
    runs = [_run(tool, [f for f in findings if f.tool == tool]) for tool in tools]
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": runs}


def write(findings: Sequence[Finding], files: Sequence[str], out: TextIO) -> None:
    del files  # SARIF lists results, not the files that had none
    out.write(json.dumps(document(findings), indent=2, ensure_ascii=False) + "\n")
