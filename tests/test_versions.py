"""One version, :data:`puppet_xpp.__version__`, everywhere a user or a registry reads one.

``puppet-xpp --version``, the language server's ``serverInfo.version`` (asked through a real LSP client), the
VS Code extension's ``package.json``, the runtime module's ``metadata.json`` (the Forge reads it) and the
newest headings of both changelogs must name it; a release that bumps one and forgets another fails here.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

import puppet_xpp

REPO = Path(__file__).resolve().parents[1]
VERSION = puppet_xpp.__version__


async def initialize_over_stdio(command: Sequence[str]) -> types.InitializeResult:
    """``initialize`` sent to the language server started by ``command`` (stdio); the server's answer, after
    a clean ``shutdown``/``exit``.  The client announces no capabilities, so the server sends no request of
    its own (``workspace/configuration``) that could still be pending at ``shutdown``."""
    client = LanguageClient()
    await client.start_io(command[0], *command[1:])
    try:
        return await asyncio.wait_for(
            client.initialize_session(
                types.InitializeParams(
                    capabilities=types.ClientCapabilities(), process_id=None, root_uri=None
                )
            ),
            timeout=120,
        )
    finally:
        await asyncio.wait_for(client.shutdown_session(), timeout=60)


def newest_heading_version(changelog: Path) -> str:
    """The version of a changelog's first ``## `` heading (``## 0.2.0 (unreleased)`` -> ``0.2.0``)."""
    for line in changelog.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            match = re.match(r"## \[?v?(\d+\.\d+\.\d+[^\s\]]*)", line)
            assert match, f"{changelog}: the newest heading names no version: {line!r}"
            return match.group(1)
    raise AssertionError(f"{changelog}: no '## <version>' heading")


def test_version_is_a_release_number() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION), VERSION


def test_command_line_version() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "puppet_xpp", "--version"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"puppet-xpp {VERSION}\n"


def test_language_server_info_version() -> None:
    result = asyncio.run(initialize_over_stdio([sys.executable, "-m", "puppet_xpp", "--stdio"]))
    assert result.server_info is not None
    assert (result.server_info.name, result.server_info.version) == ("puppet-xpp", VERSION)


def test_vscode_extension_version() -> None:
    package = json.loads((REPO / "editors" / "vscode" / "package.json").read_text(encoding="utf-8"))
    assert package["version"] == VERSION


def test_runtime_module_version() -> None:
    metadata = json.loads((REPO / "runtime" / "xpp" / "metadata.json").read_text(encoding="utf-8"))
    assert metadata["version"] == VERSION


def test_changelogs_newest_heading() -> None:
    assert newest_heading_version(REPO / "CHANGELOG.md") == VERSION
    assert newest_heading_version(REPO / "runtime" / "xpp" / "CHANGELOG.md") == VERSION
