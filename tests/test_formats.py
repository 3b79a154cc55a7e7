"""The shared output formats (server/cli/formats: SARIF, JUnit, GitHub annotations, Code Climate) on
``--validate``, ``--lint`` and ``--compile``: each document is checked for its format's structure (SARIF
against the official 2.1.0 schema, JUnit parsed as CI servers parse it, GitHub's workflow command syntax,
the Code Climate fields GitLab reads), and its content against what the real tools report for the same
files -- Puppet (the oracle's ``validate`` op) and puppet-lint (its ``--json``)."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest

from puppet_xpp.grammar.issues import ISSUES
from puppet_xpp.server import cli
from puppet_xpp.server.cli.findings import Finding
from puppet_xpp.server.cli.formats import github
from tests.conformance import puppet_lint

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"

FILES = {
    "modules/aaa/manifests/init.pp": "class aaa {\n  $x = {a => 1, a => 2}\n  notify { $x: }\n}\n",
    "modules/aaa/manifests/bad.pp": "class zzz { 1 }\ninclude aaa\n",
    "modules/aaa/manifests/good.pp": "class aaa::good {\n  notify { 'x': }\n}\n",
    "modules/aaa/manifests/broken.pp": "class aaa::broken {\n  $x = [1,\n}\n",
    "modules/aaa/manifests/pct.pp": "class aaa::pct {\n  $a = 'x' 'y'\n  $b = \"100%\\q\"\n}\n",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def ours(*argv: str, cwd: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        rc = cli.main(list(argv), out, err)
    finally:
        os.chdir(here)
    return rc, out.getvalue()


def puppet_says(oracle: Any, tree: Path) -> set[tuple[str, int | None, int | None, str, str, str]]:
    """(file, line, column, severity, code, message) of every diagnostic Puppet 7.23 gives the files."""
    want = set()
    for rel in FILES:
        for d in oracle.call("validate", file=str(tree / rel), modulepath=[str(tree / "modules")]):
            severity = "error" if d["severity"] == "error" else "warning"
            # the oracle was given the absolute path, we the relative one: a message quoting it differs there
            message = d["message"].replace(f"{tree}/", "")
            want.add((rel, d["line"], d["pos"], severity, d["code"], message))
    return want


VALIDATE = ("--validate", "modules", "--modulepath", "modules", "--puppet-version", "7.23")


def test_sarif_valid_and_equal_to_puppet(tree: Path, oracle: Any) -> None:
    import jsonschema

    rc, text = ours(*VALIDATE, "--format", "sarif", cwd=tree)
    assert rc == 1
    document = json.loads(text)
    jsonschema.Draft4Validator(json.loads(SCHEMA.read_text())).validate(document)
    (run,) = document["runs"]
    rules = run["tool"]["driver"]["rules"]
    got = set()
    for r in run["results"]:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        loc = r["locations"][0]["physicalLocation"]
        region = loc.get("region", {})
        severity = r["level"]
        got.add(
            (
                loc["artifactLocation"]["uri"],
                region.get("startLine"),
                region.get("startColumn"),
                severity,
                r["ruleId"],
                r["message"]["text"],
            )
        )
    assert got == puppet_says(oracle, tree)
    # rule ids are Puppet's issue codes, with the issue table's template as their help text
    for rule in rules:
        assert rule["id"] in ISSUES and ISSUES[rule["id"]].template in rule["help"]["text"]


def test_junit_equal_to_puppet(tree: Path, oracle: Any) -> None:
    rc, text = ours(*VALIDATE, "--format", "junit", cwd=tree)
    assert rc == 1
    root = ElementTree.fromstring(text.encode("utf-8"))
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert sorted(c.get("name") for c in cases) == sorted(FILES)  # a clean file is a passed test case
    assert int(suite.get("tests", "")) == len(cases) == int(root.get("tests", ""))
    failures = [(c.get("name"), f) for c in cases for f in c.findall("failure")]
    assert int(suite.get("failures", "")) == len(failures)
    got = set()
    for name, f in failures:
        severity, code = (f.get("type") or "").split(": ")
        where = re.search(r" at (\S+?):(\d+):(\d+)$", f.text or "")
        assert where is not None and where.group(1) == name
        got.add((name, int(where.group(2)), int(where.group(3)), severity, code, f.get("message")))
    assert got == puppet_says(oracle, tree)
    assert not [c for c in cases if c.get("name") == "modules/aaa/manifests/good.pp"][0].findall("failure")


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    m = re.fullmatch(r"::(error|warning|notice) ([^:]*)::(.*)", line)
    assert m is not None, line
    props = dict(p.split("=", 1) for p in m.group(2).split(","))

    def unescape(text: str) -> str:
        return (
            text.replace("%0A", "\n")
            .replace("%0D", "\r")
            .replace("%3A", ":")
            .replace("%2C", ",")
            .replace("%25", "%")
        )

    return m.group(1), {k: unescape(v) for k, v in props.items()}, unescape(m.group(3))


def test_github_equal_to_puppet(tree: Path, oracle: Any) -> None:
    rc, text = ours(*VALIDATE, "--format", "github", cwd=tree)
    assert rc == 1
    got = set()
    for line in text.splitlines():
        command, props, message = parse_command(line)
        code = props["title"].split(": ", 1)[1]
        got.add((props["file"], int(props["line"]), int(props["col"]), command, code, message))
    assert got == puppet_says(oracle, tree)


def test_github_escaping() -> None:
    """GitHub's rule: %, CR, LF escaped in the message; ':' and ',' in properties too."""
    f = Finding("a,b:c%.pp", 3, 4, "warning", "X", "100% sure\r\nnext: line, here", "puppet-xpp")
    assert github.line_of(f) == (
        "::warning file=a%2Cb%3Ac%25.pp,line=3,col=4,title=puppet-xpp%3A X::100%25 sure%0D%0Anext: line, here"
    )


def test_codeclimate_equal_to_puppet(tree: Path, oracle: Any) -> None:
    rc, text = ours(*VALIDATE, "--format", "codeclimate", cwd=tree)
    assert rc == 1
    issues = json.loads(text)
    got = set()
    for i in issues:
        assert i["type"] == "issue" and i["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert re.fullmatch(r"[0-9a-f]{64}", i["fingerprint"])
        severity = "error" if i["severity"] == "major" else "warning"
        got.add(
            (
                i["location"]["path"],
                i["location"]["lines"]["begin"],
                None,
                severity,
                i["check_name"].split("/")[1],
                i["description"],
            )
        )
    want = {(f, line, None, s, c, m) for f, line, _col, s, c, m in puppet_says(oracle, tree)}
    assert got == want
    assert len({i["fingerprint"] for i in issues}) == len(issues)


# --- --lint: the same writers, the content puppet-lint reports


LINT_FILES = {
    "foo/manifests/init.pp": 'class foo {\n  $x = "a"  \n  file { bar:\n    mode => 644,\n    ensure => "present",\n  }\n}\n',
    "foo/manifests/clean.pp": "# doc\nclass foo::clean {\n  notice('hello')\n}\n",
}


def lint_says() -> set[tuple[str, int, int, str, str, str]]:
    answer = puppet_lint.run_puppet_lint(LINT_FILES, ["--json", "foo"])
    return {
        (p["path"], p["line"], p["column"], p["kind"], p["check"], p["message"])
        for problems in json.loads(answer["stdout"])
        for p in problems
    }


@pytest.mark.skipif(not puppet_lint.available(), reason="puppet-lint not installed")
@pytest.mark.parametrize("fmt", ["sarif", "junit", "github", "codeclimate"])
def test_lint_formats_equal_to_puppet_lint(fmt: str) -> None:
    answer = puppet_lint.run_in_scratch(
        LINT_FILES, [sys.executable, "-m", "puppet_xpp", "--lint", "--format", fmt, "foo"]
    )
    assert answer["status"] == 1
    text = answer["stdout"]
    got: set[tuple[str, int, int, str, str, str]] = set()
    if fmt == "sarif":
        import jsonschema

        document = json.loads(text)
        jsonschema.Draft4Validator(json.loads(SCHEMA.read_text())).validate(document)
        (run,) = document["runs"]
        assert run["tool"]["driver"]["name"] == "puppet-lint"
        for r in run["results"]:
            loc = r["locations"][0]["physicalLocation"]
            region = loc["region"]
            got.add(
                (
                    loc["artifactLocation"]["uri"],
                    region["startLine"],
                    region["startColumn"],
                    r["level"],
                    r["ruleId"],
                    r["message"]["text"],
                )
            )
        assert all(
            rule["helpUri"].startswith("https://puppet.com/")
            for rule in run["tool"]["driver"]["rules"]
            if "helpUri" in rule
        )
    elif fmt == "junit":
        root = ElementTree.fromstring(text.encode("utf-8"))
        (suite,) = root.findall("testsuite")
        assert sorted(c.get("name") for c in suite.findall("testcase")) == sorted(LINT_FILES)
        for case in suite.findall("testcase"):
            for f in case.findall("failure"):
                kind, check = (f.get("type") or "").split(": ")
                where = re.search(r":(\d+):(\d+)$", f.text or "")
                assert where is not None
                got.add(
                    (
                        case.get("name") or "",
                        int(where.group(1)),
                        int(where.group(2)),
                        kind,
                        check,
                        f.get("message") or "",
                    )
                )
    elif fmt == "github":
        for line in text.splitlines():
            command, props, message = parse_command(line)
            got.add(
                (
                    props["file"],
                    int(props["line"]),
                    int(props["col"]),
                    command,
                    props["title"].split(": ")[1],
                    message,
                )
            )
    else:
        want = {(f, line, k, c, m) for f, line, _col, k, c, m in lint_says()}
        issues = json.loads(text)
        assert {
            (
                i["location"]["path"],
                i["location"]["lines"]["begin"],
                "error" if i["severity"] == "major" else "warning",
                i["check_name"].split("/")[1],
                i["description"],
            )
            for i in issues
        } == want
        return
    assert got == lint_says()


# --- --compile: its diagnostics and its --report through the same writers


def test_compile_formats_and_report(tree: Path, oracle: Any) -> None:
    (tree / "manifests").mkdir()
    (tree / "manifests" / "site.pp").write_text("include aaa\n")
    (tree / "environment.conf").write_text("modulepath = modules\n")
    env = [sys.executable, "-m", "puppet_xpp", "--compile", ".", "--puppet-version", "7.23", "-j", "1"]
    p = subprocess.run(
        [*env, "--format", "sarif", "--report", "r.xml", "--report-format", "junit"],
        cwd=tree,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 1, p.stderr
    import jsonschema

    document = json.loads(p.stdout)  # the summary went to stderr: stdout is the SARIF document alone
    jsonschema.Draft4Validator(json.loads(SCHEMA.read_text())).validate(document)
    got = set()
    for r in document["runs"][0]["results"]:
        loc = r["locations"][0]["physicalLocation"]
        got.add(
            (
                loc["artifactLocation"]["uri"],
                loc["region"]["startLine"],
                loc["region"]["startColumn"],
                r["level"],
                r["ruleId"],
                r["message"]["text"].replace(f"{tree}/", ""),  # compile records the absolute name
            )
        )
    assert got == puppet_says(oracle, tree)
    assert "compiled 6" in p.stderr
    root = ElementTree.parse(tree / "r.xml").getroot()
    (suite,) = root.findall("testsuite")
    assert int(suite.get("failures", "")) == len(got)
    assert sorted(c.get("name") for c in suite.findall("testcase")) == sorted([*FILES, "manifests/site.pp"])


@pytest.mark.skipif(not puppet_lint.available(), reason="puppet-lint not installed")
def test_every_puppet_lint_check_has_help_text() -> None:
    """Every check puppet-lint 3.0.1 lists has a help text (and puppet-lint's help page where it has
    one) for the rules of our reports."""
    from puppet_xpp.server.cli.findings import LINT_HELP

    listed = puppet_lint.run_puppet_lint({}, ["--list-checks"])["stdout"].split()
    assert listed and all(LINT_HELP.get(name) for name in [*listed, "syntax"])
