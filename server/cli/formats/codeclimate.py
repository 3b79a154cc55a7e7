"""Code Climate issues (a JSON array), the format of GitLab's Code Quality report.

GitLab reads ``description``, ``check_name``, ``fingerprint``, ``severity`` (info, minor, major,
critical, blocker) and ``location.path`` / ``location.lines.begin``.  The fingerprint identifies an
issue across runs (GitLab compares the merge request's report with the target branch's): a digest of
the tool, the rule, the file, the message and the line, so that the same problem on the same line keeps
its fingerprint while a moved or changed one does not."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, TextIO

from puppet_xpp.server.cli.findings import LINT_TOOL, Finding
from puppet_xpp.xpp.sources import shown

__all__ = ["SEVERITY", "issues", "write"]

SEVERITY = {"error": "major", "warning": "minor", "note": "info"}


def issues(findings: Sequence[Finding]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for f in findings:
        path = shown(f.file)
        while path.startswith("./"):
            path = path[2:]
        key = "\0".join([f.tool, f.rule, path, shown(f.message), str(f.line)])
        out.append(
            {
                "type": "issue",
                "check_name": f"{f.tool}/{f.rule}",
                "description": shown(f.message),
                "categories": ["Style"] if f.tool == LINT_TOOL else ["Bug Risk"],
                "location": {"path": path, "lines": {"begin": f.line if f.line is not None else 1}},
                "severity": SEVERITY.get(f.severity, "info"),
                "fingerprint": hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest(),
            }
        )
    return out


def write(findings: Sequence[Finding], files: Sequence[str], out: TextIO) -> None:
    del files
    out.write(json.dumps(issues(findings), indent=2, ensure_ascii=False) + "\n")
