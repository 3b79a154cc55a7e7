"""The layering contract (``.importlinter``) holds, sees every module, and fails on a violation.

``lint-imports`` (import-linter) checks the contract on the import graph grimp builds from the package's
files. The package's subfolders are links (``puppet_xpp/grammar -> ../grammar``): the graph must hold every
module reached through them, else the contract would pass over what it cannot see. And a contract that
cannot fail proves nothing: a copy of the tree with one forbidden import must make ``lint-imports`` fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / ".importlinter"
SUBPACKAGES = ("grammar", "lint", "xpp", "server")

LINT_IMPORTS = shutil.which(
    "lint-imports", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
)


def lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports on the package ``puppet_xpp`` found first on the path from ``cwd``."""
    env = dict(os.environ, PYTHONPATH=str(cwd), COLUMNS="200")
    return subprocess.run(
        [LINT_IMPORTS or "lint-imports", "--no-cache", "--no-logo", str(CONFIG)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )


def package_modules(root: Path) -> set[str]:
    """The modules of the package under ``root``, walking through its links."""
    out = set()
    for folder, dirs, files in os.walk(root, followlinks=True):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel = Path(folder).relative_to(root.parent)
        for f in files:
            if f.endswith(".py"):
                parts = rel.parts if f == "__init__.py" else (*rel.parts, f[:-3])
                out.add(".".join(parts))
    return out


def test_contract_kept() -> None:
    p = lint_imports(REPO)
    assert p.returncode == 0, p.stdout + p.stderr
    assert " 0 broken" in p.stdout


def test_graph_holds_every_module_behind_the_links() -> None:
    for name in SUBPACKAGES:
        assert (REPO / "puppet_xpp" / name).is_symlink()
    graph = grimp.build_graph("puppet_xpp", cache_dir=None)
    expected = package_modules(REPO / "puppet_xpp")
    assert {m for m in expected if m.count(".") >= 2}, "modules below the links"
    assert set(graph.modules) == expected


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository's package laid out as the repository's: folders beside a ``puppet_xpp``
    that links to them."""
    root = tmp_path_factory.mktemp("layering")
    pkg = root / "pkg" / "puppet_xpp"
    pkg.mkdir(parents=True)
    shutil.copy(REPO / "puppet_xpp" / "__init__.py", pkg / "__init__.py")
    for name in SUBPACKAGES:
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        (pkg / name).symlink_to(Path("..", "..", name), target_is_directory=True)
    return root


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("server/analysis/probe.py", "import pygls", "no pygls or lsprotocol"),
        ("server/analysis/probe.py", "from lsprotocol import types", "no pygls or lsprotocol"),
        ("grammar/probe.py", "import puppet_xpp.xpp.sources", "then grammar"),
        ("grammar/probe.py", "from puppet_xpp.lint import core", "then grammar"),
        ("lint/probe.py", "from puppet_xpp.xpp import environment", "then grammar"),
        ("xpp/probe.py", "from puppet_xpp.lint import run", "then grammar"),
        ("xpp/probe.py", "from puppet_xpp.server.analysis import document", "then grammar"),
    ],
)
def test_a_violation_breaks_the_contract(tree: Path, module: str, line: str, contract: str) -> None:
    probe = tree / module
    assert lint_imports(tree / "pkg").returncode == 0
    probe.write_text(f"def f() -> None:\n    {line}\n")
    try:
        p = lint_imports(tree / "pkg")
    finally:
        probe.unlink()
    assert p.returncode == 1, p.stdout + p.stderr
    dotted = "puppet_xpp." + module[:-3].replace("/", ".")
    assert dotted in p.stdout
    broken = [ln for ln in p.stdout.splitlines() if ln.endswith(" BROKEN")]
    assert len(broken) == 1 and contract in broken[0], p.stdout
