"""JUnit XML, as CI servers read it (Jenkins, GitLab, Azure, CircleCI): ``testsuites`` > one
``testsuite`` per tool > one ``testcase`` per checked file, with one ``failure`` per error and per warning
(PDK's ``--format junit`` reports warnings as failures too: a CI job shows them).  Written with the
standard library's ElementTree, which escapes what XML needs."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from typing import TextIO

from puppet_xpp.server.cli.findings import VALIDATE_TOOL, Finding
from puppet_xpp.xpp.sources import shown

__all__ = ["document", "write"]


def _where(f: Finding) -> str:
    if f.line is None:
        return shown(f.file)
    if f.column is None:
        return f"{shown(f.file)}:{f.line}"
    return f"{shown(f.file)}:{f.line}:{f.column}"


def document(findings: Sequence[Finding], files: Sequence[str]) -> ElementTree.Element:
    tools = [VALIDATE_TOOL] if not findings else []
    for f in findings:
        if f.tool not in tools:
            tools.append(f.tool)
    root = ElementTree.Element("testsuites", name="puppet-xpp")
    total_tests = total_failures = 0
    for tool in tools:
        mine = [f for f in findings if f.tool == tool]
        names = list(dict.fromkeys([shown(x) for x in files] + [shown(f.file) for f in mine]))
        suite = ElementTree.SubElement(root, "testsuite", name=tool)
        failures = 0
        for name in names:
            case = ElementTree.SubElement(suite, "testcase", name=name, classname=tool, file=name)
            for f in (f for f in mine if shown(f.file) == name):
                if f.severity == "note":
                    continue
                failures += 1
                failure = ElementTree.SubElement(
                    case, "failure", message=shown(f.message), type=f"{f.severity}: {f.rule}"
                )
                failure.text = f"{f.severity.capitalize()}: {shown(f.message)} ({f.rule}) at {_where(f)}"
        suite.set("tests", str(len(names)))
        suite.set("failures", str(failures))
        suite.set("errors", "0")
        suite.set("skipped", "0")
        total_tests += len(names)
        total_failures += failures
    root.set("tests", str(total_tests))
    root.set("failures", str(total_failures))
    root.set("errors", "0")
    return root


def write(findings: Sequence[Finding], files: Sequence[str], out: TextIO) -> None:
    root = document(findings, files)
    ElementTree.indent(root)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ElementTree.tostring(root, encoding="unicode") + "\n")
