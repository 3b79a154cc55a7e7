"""``puppet-xpp --lint`` as a drop-in for puppet-lint 3.0.1's command line, byte for byte on the corpus.

For every module of the corpus (tests/conformance/corpus.py), the real ``puppet-lint`` and ours run on the
same copy of the module's manifests (tests/conformance/puppet_lint.py: a scratch directory that is the
working directory and HOME of both) with ``--json`` and with ``--sarif``; the whole standard output, the
standard error and the exit status must be equal.  What is normalised, and why:

* a token's address in ``--json`` (``#<PuppetLint::Lexer::Token:0x...>``): Ruby prints the object's
  memory address, which differs from run to run of puppet-lint itself; it is replaced by the order of
  first appearance, so that the same token must still be the same in both outputs;
* the scratch directory in ``fullpath`` and SARIF's ``ROOTPATH``: each run has its own temporary
  directory (and puppet-lint's answers are cached from an earlier one);
* the SARIF rules' ``fullDescription`` text: puppet-lint's is its own prose, which we do not copy (the
  rules, their order, levels and help URIs are compared).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import pytest

from tests.conformance import puppet_lint
from tests.conformance.corpus import CORPUS_ROOT

pytestmark = pytest.mark.skipif(not puppet_lint.available(), reason="puppet-lint not installed")

OURS = [sys.executable, "-m", "puppet_xpp", "--lint"]


def module_files(module: str) -> dict[str, str]:
    """The manifests puppet-lint would lint in a module directory (``**/*.pp``, no hidden ones)."""
    root = CORPUS_ROOT / module
    files = {}
    for p in sorted(root.rglob("*.pp")):
        rel = p.relative_to(CORPUS_ROOT)
        if any(part.startswith(".") for part in rel.parts) or not p.is_file():
            continue
        files[str(rel)] = p.read_bytes().decode("utf-8", "surrogateescape")
    return files


def modules() -> list[str]:
    if not CORPUS_ROOT.is_dir():
        return []
    return sorted(m.name for m in CORPUS_ROOT.iterdir() if m.is_dir() and module_files(m.name))


SCRATCH = re.compile(r"/[^\"]*?/puppet-xpp-lint-[a-z0-9_]+")


def tokens_numbered(text: str) -> str:
    """The text with token addresses numbered by first appearance and the scratch directory named."""
    text = SCRATCH.sub("<scratch>", text)
    seen: dict[str, str] = {}

    def number(m: re.Match[str]) -> str:
        return seen.setdefault(m.group(0), f"#<PuppetLint::Lexer::Token:{len(seen)}>")

    return re.sub(r"#<PuppetLint::Lexer::Token:0x[0-9a-f]+>", number, text)


def without_descriptions(text: str) -> Any:
    document = json.loads(SCRATCH.sub("<scratch>", text))
    for run in document["runs"]:
        for rule in run["tool"]["driver"]["rules"]:
            rule.get("fullDescription", {}).pop("text", None)
    return document


# --lint DIR skips what PDK skips in a module (xpp.walk, issue 24): puppet-lint is asked to skip the same
# files with its own --ignore-paths (fnmatch, '*' crossing '/')
PDK_SKIPPED = ("spec/fixtures/*", "pkg/*", "vendor/*", "coverage/*", "log/*", "junit/*", "tmp/*")


def both(
    files: dict[str, str], args: list[str], walked: str | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """puppet-lint's run and ours; ``walked``: the directory PATH whose PDK-skipped files puppet-lint
    is told to ignore."""
    theirs_args = args
    if walked is not None:
        skipped = ",".join([f"{walked}/{p}" for p in PDK_SKIPPED] + [f"{walked}/*~*"])
        theirs_args = ["--ignore-paths", skipped, *args]
    return puppet_lint.run_puppet_lint(files, theirs_args), puppet_lint.run_in_scratch(files, [*OURS, *args])


@pytest.mark.corpus
@pytest.mark.parametrize("module", modules())
def test_json_like_puppet_lint(module: str) -> None:
    theirs, ours = both(module_files(module), ["--json", module], walked=module)
    assert (ours["status"], ours["stderr"]) == (theirs["status"], theirs["stderr"])
    assert tokens_numbered(ours["stdout"]) == tokens_numbered(theirs["stdout"])


@pytest.mark.corpus
@pytest.mark.parametrize("module", modules())
def test_sarif_like_puppet_lint(module: str) -> None:
    theirs, ours = both(module_files(module), ["--sarif", module], walked=module)
    assert (ours["status"], ours["stderr"]) == (theirs["status"], theirs["stderr"])
    assert without_descriptions(ours["stdout"]) == without_descriptions(theirs["stdout"])
    # the layout too: the same lines once the descriptions are set aside
    strip = re.compile(r'^(\s*"text": ).*$', re.M)
    assert strip.sub(r"\1", tokens_numbered(ours["stdout"])) == strip.sub(
        r"\1", tokens_numbered(theirs["stdout"])
    )


CLEAN = "# doc\nclass foo::clean {\n  notice('hello')\n}\n"
WARNS = '# doc\nclass foo::warns {\n  notice("hello")\n}\n'
ERRORS = "# doc\nclass foo::errors {\n\tnotice('hello')\n}\n"
BROKEN = '# doc\nclass foo::broken {\n  $x = "abc\n}\n'
TREE = {
    "foo/manifests/clean.pp": CLEAN,
    "foo/manifests/warns.pp": WARNS,
    "foo/manifests/errors.pp": ERRORS,
    "foo/manifests/broken.pp": BROKEN,
    "foo/manifests/empty.pp": "",
}


@pytest.mark.parametrize(
    "args",
    [
        ["--json", "foo/manifests/clean.pp"],
        ["--json", "foo/manifests/warns.pp"],
        ["--json", "--fail-on-warnings", "foo/manifests/warns.pp"],
        ["--json", "foo/manifests/errors.pp"],
        ["--json", "--fail-on-warnings", "foo/manifests/clean.pp"],
        ["--json", "foo/manifests/broken.pp"],
        ["--json", "foo/manifests/empty.pp"],
        ["--json", "foo"],
        ["--json", "--with-context", "foo"],
        ["--json", "--show-ignored", "--error-level", "warning", "foo"],
        ["--json", "--fix", "foo"],
        ["--sarif", "foo/manifests/warns.pp", "foo/manifests/errors.pp"],
        ["--sarif", "--fail-on-warnings", "foo/manifests/warns.pp"],
        ["--json"],
        [],
        ["--json", "foo/manifests/missing.pp"],
        ["foo/manifests/warns.pp", "foo/manifests/missing.pp", "foo/manifests/errors.pp"],
        ["--json", "--no-such-option", "foo"],
        ["--list-checks"],
        ["--load", "plugin.rb", "foo/manifests/clean.pp"],
        ["--load-from-puppet", "modules", "foo/manifests/clean.pp"],
    ],
    ids=lambda args: " ".join(args) or "no-args",
)
def test_command_line_like_puppet_lint(args: list[str]) -> None:
    """Output, exit status and the files after the run, as puppet-lint's (with and without
    --fail-on-warnings, errors, a syntax error, an empty file, no file, a missing file, a bad option)."""
    files = {**TREE, "plugin.rb": "# a puppet-lint plugin\n"}
    theirs, ours = both(files, args)
    assert ours["status"] == theirs["status"]
    assert ours["files"] == theirs["files"]
    if "--sarif" in args:
        assert without_descriptions(ours["stdout"]) == without_descriptions(theirs["stdout"])
    else:
        assert tokens_numbered(ours["stdout"]) == tokens_numbered(theirs["stdout"])
    if "--load" in args or "--load-from-puppet" in args:
        assert "Ruby plugins are not loaded" in ours["stderr"]  # we say what puppet-lint would have done
    else:
        assert ours["stderr"] == theirs["stderr"]
