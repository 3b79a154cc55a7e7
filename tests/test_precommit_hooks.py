"""``.pre-commit-hooks.yaml`` through the real pre-commit: ``pre-commit try-repo`` in a scratch git
repository holding Puppet manifests.

pre-commit installs a hook repository from a commit, so the hooks are tried from a snapshot of this
working tree (tracked and untracked, ignored files left out) committed in a temporary repository; its
``language: python`` environment is built once for the module (``PRE_COMMIT_HOME`` in a temporary
directory: pip fetches the dependencies from PyPI).  Expected diagnostics come from Puppet (the oracle)
and from puppet-lint 3.0.1, never from puppet-xpp itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conformance import puppet_lint

ROOT = Path(__file__).resolve().parents[1]
HOOKS = {"puppet-xpp-validate", "puppet-xpp-lint", "puppet-xpp-lint-fix"}

GOOD = "# the good class\nclass good {\n  notice('hello')\n}\n"
BAD = "class bad {\n  notice($x\n}\n"
# a control repository's modules (each class where the autoloader looks for it)
GOOD_PATH = "site-modules/good/manifests/init.pp"
BAD_PATH = "site-modules/bad/manifests/init.pp"
# puppet-lint fixes: double quotes without variables, trailing whitespace, arrow alignment, a quoted mode
FIXABLE = (
    "# doc\nclass fixme {\n  file { '/tmp/a':\n    ensure => file,  \n"
    '    mode => "644",\n    content => "plain",\n  }\n}\n'
)

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None and not os.environ.get("CI"), reason="git not installed"
)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=test",
            "-c",
            "user.email=test@example.invalid",
            "-c",
            "init.defaultBranch=main",
            *args,
        ],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def test_hook_definitions() -> None:
    """What pre-commit reads: the three hooks, on Puppet files, installed from this repository."""
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert {h["id"] for h in hooks} == HOOKS
    for hook in hooks:
        assert hook["language"] == "python" and hook["types"] == ["puppet"]
        assert hook["entry"].split()[0] == "puppet-xpp"


def snapshot_working_tree(repo: Path) -> Path:
    """A git repository at ``repo`` whose one commit is this working tree as it is (tracked and untracked
    files, ignored ones left out, links kept): what an installer that reads a commit (pre-commit) or a
    checkout (the GitHub Action, a container build) gets."""
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, listing.split("\0")):
        source = ROOT / name
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the working tree, not yet in the index
        target = repo / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, target)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "snapshot of the working tree")
    return repo


@pytest.fixture(scope="module")
def hook_repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A commit of this working tree, which pre-commit installs from."""
    pytest.importorskip("pre_commit", reason="pre-commit not installed (pip install -e '.[test]')")
    return snapshot_working_tree(tmp_path_factory.mktemp("hooks"))


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def try_repo(
    project: Path, hooks: Path, home: Path, hook: str, *files: str
) -> subprocess.CompletedProcess[str]:
    """``pre-commit try-repo HOOKS HOOK`` in ``project`` (on ``files``, else ``--all-files``)."""
    selection = ["--files", *files] if files else ["--all-files"]
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), hook, "--verbose", *selection],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def write_tree(directory: Path, files: dict[str, str]) -> Path:
    """``directory`` holding ``files`` (relative name: text)."""
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return directory


def project_with(tmp_path: Path, files: dict[str, str]) -> Path:
    project = write_tree(tmp_path / "project", files)
    git(project, "init", "-q")
    git(project, "add", "-A")
    return project


def test_validate_hook(tmp_path: Path, hook_repository: Path, pre_commit_home: Path, oracle) -> None:
    project = project_with(tmp_path, {GOOD_PATH: GOOD, BAD_PATH: BAD, "README.md": "x"})
    proc = try_repo(project, hook_repository, pre_commit_home, "puppet-xpp-validate")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    modulepath = str(project / "site-modules")
    [want] = oracle.call("validate", file=str(project / BAD_PATH), modulepath=[modulepath])
    line = f"Error: {want['message']} (file: {BAD_PATH}, line: {want['line']}, column: {want['pos']})"
    assert line in proc.stdout.splitlines(), proc.stdout
    assert oracle.call("validate", file=str(project / GOOD_PATH), modulepath=[modulepath]) == []
    assert GOOD_PATH not in proc.stdout
    passed = try_repo(project, hook_repository, pre_commit_home, "puppet-xpp-validate", GOOD_PATH)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout


needs_puppet_lint = pytest.mark.skipif(
    not puppet_lint.available() and not os.environ.get("CI"), reason="puppet-lint not installed"
)


@needs_puppet_lint
def test_lint_hook(tmp_path: Path, hook_repository: Path, pre_commit_home: Path) -> None:
    files = {"manifests/fixme.pp": FIXABLE}
    theirs = puppet_lint.run_puppet_lint(files, ["manifests/fixme.pp"])
    assert theirs["stdout"]  # the file has problems puppet-lint reports
    project = project_with(tmp_path, files)
    proc = try_repo(project, hook_repository, pre_commit_home, "puppet-xpp-lint")
    assert (proc.returncode != 0) == (theirs["status"] != 0)
    shown = proc.stdout.splitlines()
    for line in theirs["stdout"].splitlines():
        assert line in shown, proc.stdout
    assert (project / "manifests/fixme.pp").read_text() == FIXABLE  # lint alone never rewrites


@needs_puppet_lint
def test_lint_fix_hook_rewrites_as_puppet_lint(
    tmp_path: Path, hook_repository: Path, pre_commit_home: Path
) -> None:
    files = {"manifests/fixme.pp": FIXABLE, "manifests/good.pp": GOOD}
    theirs = puppet_lint.run_puppet_lint(files, ["--fix", "manifests/fixme.pp", "manifests/good.pp"])
    assert theirs["files"]["manifests/fixme.pp"] != FIXABLE  # puppet-lint --fix changes it
    project = project_with(tmp_path, files)
    proc = try_repo(project, hook_repository, pre_commit_home, "puppet-xpp-lint-fix")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # pre-commit fails a hook that rewrote files
    assert "files were modified by this hook" in proc.stdout
    for name in files:
        assert (project / name).read_text() == theirs["files"][name], name
    again = try_repo(project, hook_repository, pre_commit_home, "puppet-xpp-lint-fix")
    assert "files were modified by this hook" not in again.stdout
