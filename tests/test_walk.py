"""What every directory walk skips (issue 24, item 2): xpp/walk.py, used by --validate, --lint, --compile
and the language server's workspace index.

* a module as PDK leaves it (``spec/fixtures/``, ``pkg/``, ``vendor/``, ``.git/``, ``coverage/``...):
  nothing there is reported by any walk, everything else is;
* ``.gitignore``/``.pdkignore`` patterns mean what git says they mean: the walk's files equal
  ``git ls-files --cached --others --exclude-standard`` on the same tree (nested files, negation,
  anchoring, ``**``, directory-only patterns);
* ``--exclude PATTERN`` (repeatable) and the project configuration's ``exclude``;
* a file named on the command line is never skipped, nor a directory named.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from puppet_xpp.xpp.walk import walk

BROKEN = "class broken {\n"  # a syntax error: any walk that reaches the file reports it
MODULE = {
    "metadata.json": '{"name": "someone-thing", "version": "1.0.0"}',
    "manifests/init.pp": "class thing { }\n",
    "manifests/sub/part.pp": "class thing::sub::part { }\n",
    "examples/init.pp": "include thing\n",
    "templates/t.epp": "<%= 1 %>\n",
    # what PDK skips
    "spec/fixtures/modules/stdlib/manifests/init.pp": BROKEN,
    "spec/fixtures/manifests/site.pp": BROKEN,
    "pkg/someone-thing-1.0.0/manifests/init.pp": BROKEN,
    "vendor/bundle/x.pp": BROKEN,
    ".vendor/x.pp": BROKEN,
    ".bundle/x.pp": BROKEN,
    ".git/hooks/x.pp": BROKEN,
    "coverage/x.pp": BROKEN,
    "log/x.pp": BROKEN,
    "junit/x.pp": BROKEN,
    "tmp/x.pp": BROKEN,
    "manifests/~backup.pp": BROKEN,
    "manifests/.hidden.pp": BROKEN,
}
KEPT = ["examples/init.pp", "manifests/init.pp", "manifests/sub/part.pp"]


def _make(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def _rel(root: Path, paths) -> list[str]:
    return sorted(os.path.relpath(p, root) for p in paths)


@pytest.fixture
def module(tmp_path) -> Path:
    root = tmp_path / "puppet-thing"
    _make(root, MODULE)
    return root


def _validate(args: list[str], cwd: Path) -> tuple[int, list[dict]]:
    from puppet_xpp.server.cli import validate

    old = os.getcwd()
    os.chdir(cwd)
    try:
        buf = io.StringIO()
        status = validate.main([*args, "--format", "json"], out=buf, err=io.StringIO())
    finally:
        os.chdir(old)
    return status, [json.loads(line) for line in buf.getvalue().splitlines()]


def _lint(args: list[str], cwd: Path) -> tuple[int, list[str]]:
    from puppet_xpp.server import cli

    old = os.getcwd()
    os.chdir(cwd)
    try:
        buf = io.StringIO()
        status = cli.main(["--lint", *args, "--format", "json"], buf, io.StringIO())
    finally:
        os.chdir(old)
    return status, sorted(json.loads(line)["file"] for line in buf.getvalue().splitlines())


def test_validate_dot_in_a_module_skips_what_pdk_skips(module):
    status, records = _validate(["."], module)
    assert sorted(r["file"] for r in records) == sorted(f"./{p}" for p in [*KEPT, "templates/t.epp"])
    assert status == 0, records  # nothing broken reached


def test_lint_validate_and_index_walk_alike(module):
    from puppet_xpp.server.analysis.index import workspace_files

    _status, linted = _lint(["."], module)
    assert linted == [f"./{p}" for p in KEPT]
    assert _rel(module, workspace_files([str(module)])) == sorted(
        p for p in KEPT if not p.startswith("spec/")
    )
    assert _rel(module, (f.path for f in walk(str(module), (".pp",)))) == KEPT


def test_compile_skips_what_the_project_excludes(tmp_path):
    """--compile ENVDIR: the project configuration's exclude and a .gitignore in a module; a module
    directory a .gitignore above it names (r10k's /modules/) is compiled all the same."""
    from puppet_xpp.server.cli import compile as cmd_compile

    env = tmp_path / "production"
    _make(
        env,
        {
            "environment.conf": "modulepath = modules:site-modules\n",
            ".gitignore": "/modules/\n",
            ".puppet-xpp.toml": 'exclude = ["/site-modules/role/manifests/old/"]\n',
            "manifests/site.pp": "node default { }\n",
            "modules/m/manifests/init.pp": "class m { }\n",
            "site-modules/role/manifests/init.pp": "class role { }\n",
            "site-modules/role/manifests/old/x.pp": BROKEN,
            "site-modules/role/.gitignore": "/manifests/scratch.pp\n",
            "site-modules/role/manifests/scratch.pp": BROKEN,
        },
    )
    (env / ".git").mkdir()
    report = tmp_path / "report.json"
    status = cmd_compile.main(
        [str(env), "--report", str(report), "-j", "1"], out=io.StringIO(), err=io.StringIO()
    )
    files = json.loads(report.read_text())["environments"][0]["files"]
    assert sorted(os.path.relpath(f["path"], env) for f in files) == [
        "manifests/site.pp",
        "modules/m/manifests/init.pp",
        "site-modules/role/manifests/init.pp",
    ]
    assert status == 0


def test_explicit_files_and_directories_are_never_skipped(module):
    status, records = _validate(["spec/fixtures/manifests/site.pp"], module)
    assert [r["file"] for r in records] == ["spec/fixtures/manifests/site.pp"] and status == 1
    status, records = _validate(["spec/fixtures"], module)
    assert len(records) == 2 and status == 1  # the directory named is walked
    _status, linted = _lint(["pkg/someone-thing-1.0.0/manifests/init.pp"], module)
    assert linted == ["pkg/someone-thing-1.0.0/manifests/init.pp"]


def test_exclude_option_is_repeatable(module):
    _status, records = _validate([".", "--exclude", "examples/", "--exclude", "/manifests/sub/"], module)
    assert sorted(r["file"] for r in records) == ["./manifests/init.pp", "./templates/t.epp"]
    _status, linted = _lint(["--exclude", "examples/", "--exclude", "part.pp", "."], module)
    assert linted == ["./manifests/init.pp"]


def test_pdkignore_is_honoured(module):
    (module / ".pdkignore").write_text("/examples/\n")
    _status, records = _validate(["."], module)
    assert "./examples/init.pp" not in [r["file"] for r in records]
    assert "./manifests/init.pp" in [r["file"] for r in records]


# ------------------------------------------------------------------------------------------------ git's rules

GIT_TREE = {
    ".gitignore": "*.tmp.pp\n/build/\ngenerated/\n!generated/keep.pp\ndocs/**/draft*.pp\n",
    "a.pp": "",
    "x.tmp.pp": "",
    "build/a.pp": "",
    "sub/build/a.pp": "",
    "sub/generated/b.pp": "",
    "sub/generated/keep.pp": "",
    "docs/one/two/draft1.pp": "",
    "docs/one/final.pp": "",
    "nested/.gitignore": "local.pp\n!x.tmp.pp\n/deep/\n",
    "nested/local.pp": "",
    "nested/x.tmp.pp": "",
    "nested/deep/a.pp": "",
    "nested/other/deep/a.pp": "",
    "nested/other/local.pp": "",
    "nested/ok.pp": "",
}


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_gitignore_patterns_mean_what_git_says(tmp_path):
    repo = tmp_path / "repo"
    _make(repo, GIT_TREE)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", "*.pp"],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    ours = _rel(repo, (f.path for f in walk(str(repo), (".pp",))))
    assert ours == sorted(listed)
    assert "nested/x.tmp.pp" in ours and "sub/generated/keep.pp" not in ours  # negation's limits, as git


def test_compile_exclude_option(tmp_path):
    """--compile ENVDIR --exclude PATTERN (relative to ENVDIR, repeatable) skips what it matches, as
    --validate's and --lint's do; an .xpp compiled before for an excluded file is removed."""
    from puppet_xpp.server.cli import compile as cmd_compile

    env = tmp_path / "production"
    _make(
        env,
        {
            "environment.conf": "modulepath = modules\n",
            "manifests/site.pp": "node default { }\n",
            "modules/m/manifests/init.pp": "class m { }\n",
            "modules/m/manifests/old/x.pp": BROKEN,
            "modules/m/manifests/scratch.pp": BROKEN,
        },
    )

    def compiled(*extra: str) -> tuple[int, list[str]]:
        report = tmp_path / "report.json"
        status = cmd_compile.main(
            [str(env), "--report", str(report), "-j", "1", *extra], out=io.StringIO(), err=io.StringIO()
        )
        files = json.loads(report.read_text())["environments"][0]["files"]
        return status, sorted(os.path.relpath(f["path"], env) for f in files)

    assert compiled() == (
        1,
        [
            "manifests/site.pp",
            "modules/m/manifests/init.pp",
            "modules/m/manifests/old/x.pp",
            "modules/m/manifests/scratch.pp",
        ],
    )
    assert (env / ".xpp/modules/m/manifests/scratch.xpp").exists()
    status, files = compiled("--exclude", "/modules/m/manifests/old/", "--exclude", "scratch.pp")
    assert (status, files) == (0, ["manifests/site.pp", "modules/m/manifests/init.pp"])
    assert not (env / ".xpp/modules/m/manifests/scratch.xpp").exists()
