"""``puppet-xpp --lint`` against ``puppet-lint`` (tests/conformance/puppet_lint.py): the same output, exit
status and files after the run, for the same files, options and rc files."""

from __future__ import annotations

import os
import re
import sys

import pytest

from tests.conformance import puppet_lint

pytestmark = pytest.mark.skipif(
    not puppet_lint.available() and not os.environ.get("CI"), reason="puppet-lint not installed"
)

INIT = 'class foo {\n  $x = "a"  \n  file { bar:\n    mode => 644,\n    ensure => "present",\n  }\n}\n'
OTHER = (
    "# doc\nclass foo::other {\n\tnotice('${x}') # lint:ignore:single_quote_string_with_variables why\n}\n"
)
BROKEN = '# doc\nclass foo::broken {\n  $x = "abc\n}\n'
CLEAN = "# doc\nclass foo::clean {\n  notice('hello')\n}\n"
LONG = "# doc\nclass foo::long {\n  notice('" + "x" * 100 + "')\n}\n"
TREE = {
    "foo/manifests/init.pp": INIT,
    "foo/manifests/other.pp": OTHER,
    "foo/manifests/clean.pp": CLEAN,
    "foo/manifests/long.pp": LONG,
}

SCENARIOS: list[tuple[str, dict[str, str], list[str]]] = [
    ("one_file", TREE, ["foo/manifests/init.pp"]),
    ("directory", TREE, ["foo"]),
    ("two_files", TREE, ["foo/manifests/init.pp", "foo/manifests/other.pp"]),
    ("clean", TREE, ["foo/manifests/clean.pp"]),
    ("fix", TREE, ["--fix", "foo"]),
    ("fix_clean", TREE, ["--fix", "foo/manifests/clean.pp"]),
    ("only_checks", TREE, ["--only-checks", "trailing_whitespace,hard_tabs", "foo"]),
    (
        "no_check",
        TREE,
        ["--no-documentation-check", "--no-trailing_whitespace-check", "foo/manifests/init.pp"],
    ),
    ("chars80", TREE, ["--80chars-check", "--no-140chars-check", "foo/manifests/long.pp"]),
    ("fail_on_warnings", TREE, ["--fail-on-warnings", "foo/manifests/long.pp"]),
    ("warnings_only", TREE, ["--only-checks", "documentation", "foo/manifests/init.pp"]),
    ("error_level", TREE, ["--error-level", "error", "foo/manifests/init.pp"]),
    ("show_ignored", TREE, ["--show-ignored", "foo/manifests/other.pp"]),
    ("with_context", TREE, ["--with-context", "foo/manifests/init.pp"]),
    ("log_format", TREE, ["--log-format", "%{filename}:%{line}:%{column} %{kind} %{check}", "foo"]),
    ("relative", {"manifests/init.pp": "# doc\nclass foo {\n}\n"}, ["--relative", "manifests/init.pp"]),
    ("not_relative", {"manifests/init.pp": "# doc\nclass foo {\n}\n"}, ["manifests/init.pp"]),
    ("rc_file", {**TREE, ".puppet-lint.rc": "--no-documentation-check\n--fail-on-warnings\n"}, ["foo"]),
    ("config_option", {**TREE, "lint.rc": "--only-checks=arrow_alignment\n"}, ["-c", "lint.rc", "foo"]),
    ("no_config", {**TREE, ".puppet-lint.rc": "--no-documentation-check\n"}, ["--no-config", "foo"]),
    ("syntax_error", {"foo/manifests/broken.pp": BROKEN}, ["foo/manifests/broken.pp"]),
    ("syntax_error_fix", {"foo/manifests/broken.pp": BROKEN}, ["--fix", "foo/manifests/broken.pp"]),
    ("bad_option", TREE, ["--no-such-option", "foo"]),
    ("ignore_paths", TREE, ["--ignore-paths", "foo/manifests/init.pp,foo/manifests/other.pp", "foo"]),
]


@pytest.mark.parametrize(("files", "args"), [s[1:] for s in SCENARIOS], ids=[s[0] for s in SCENARIOS])
def test_cli_like_puppet_lint(files: dict[str, str], args: list[str]) -> None:
    theirs = puppet_lint.run_puppet_lint(files, args)
    ours = puppet_lint.run_in_scratch(files, [sys.executable, "-m", "puppet_xpp", "--lint", *args])
    assert ours["status"] == theirs["status"]
    assert ours["files"] == theirs["files"]
    assert ours["stdout"] == theirs["stdout"]
    assert ours["stderr"] == theirs["stderr"]


def test_json_one_line_per_file() -> None:
    import json

    ours = puppet_lint.run_in_scratch(
        TREE, [sys.executable, "-m", "puppet_xpp", "--lint", "--format", "json", "foo"]
    )
    lines = ours["stdout"].splitlines()
    assert [json.loads(line)["file"] for line in lines] == sorted(f for f in TREE)
    assert ours["status"] == 1


def test_fix_writes_only_when_changed() -> None:
    ours = puppet_lint.run_in_scratch(
        {"foo/manifests/clean.pp": CLEAN},
        [
            "sh",
            "-c",
            f"ls -i foo/manifests/clean.pp; {sys.executable} -m puppet_xpp --lint --fix foo; ls -i foo/manifests/clean.pp",
        ],
    )
    before, after = ours["stdout"].split("\n")[0], ours["stdout"].split("\n")[-2]
    assert before == after  # same inode: not rewritten


@pytest.mark.parametrize("args", [[], ["--json"], ["--relative"]])
def test_stdin_like_puppet_lint_on_the_file(args: list[str]) -> None:
    """``-`` with ``--stdin-filename``: the layout check and the names are that path's, as puppet-lint
    reports the file itself."""
    theirs = puppet_lint.run_puppet_lint(TREE, [*args, "foo/manifests/init.pp"])
    command = (
        f"{sys.executable} -m puppet_xpp --lint {' '.join(args)} - --stdin-filename foo/manifests/init.pp"
    )
    ours = puppet_lint.run_in_scratch(TREE, ["sh", "-c", f"{command} < foo/manifests/init.pp"])
    assert ours["status"] == theirs["status"]
    strip = re.compile(r"#<PuppetLint::Lexer::Token:0x[0-9a-f]+>|/[^\"]*/puppet-xpp-lint-[a-z0-9_]+")
    assert strip.sub("", ours["stdout"]) == strip.sub("", theirs["stdout"])


def test_stdin_fix_prints_the_fixed_manifest() -> None:
    theirs = puppet_lint.run_puppet_lint(TREE, ["--fix", "foo/manifests/init.pp"])
    command = f"{sys.executable} -m puppet_xpp --lint --fix - --stdin-filename foo/manifests/init.pp"
    ours = puppet_lint.run_in_scratch(TREE, ["sh", "-c", f"{command} < foo/manifests/init.pp"])
    assert ours["stdout"] == theirs["files"]["foo/manifests/init.pp"]  # what puppet-lint wrote in the file
    assert ours["stderr"] == theirs["stdout"]  # the report, on standard error
    assert ours["files"] == puppet_lint.run_in_scratch(TREE, ["true"])["files"]  # no file written


def test_github_annotations_like_puppet_lint() -> None:
    """With ``GITHUB_ACTION`` set (in a GitHub workflow), puppet-lint follows each line with an
    annotation: so do we."""
    args = "foo/manifests/init.pp foo/manifests/other.pp"
    theirs = puppet_lint.run_in_scratch(TREE, ["sh", "-c", f"GITHUB_ACTION=run puppet-lint {args}"])
    ours = puppet_lint.run_in_scratch(
        TREE, ["sh", "-c", f"GITHUB_ACTION=run {sys.executable} -m puppet_xpp --lint {args}"]
    )
    assert "::warning file=" in theirs["stdout"]
    assert (ours["stdout"], ours["status"]) == (theirs["stdout"], theirs["status"])
