"""The ``.xpp`` the language server writes on save is at the level ``puppet-xpp --compile`` chooses
(server/lsp/documents.py ``xpp_level``): with no level set in the editor, the level of the ``puppet`` on
PATH (here Debian's Puppet 7.23), not the editor's default 8 -- so that Puppet loads it instead of parsing
the manifest again.  Through a real client (pytest-lsp) and the real ``puppet``: the file written on save
is byte-identical to the one ``puppet-xpp --compile ENVDIR`` writes, and a Puppet 7.23 catalog compile
with the runtime (tests/runtime's helper) serves every manifest from its ``.xpp``, that one included.

The manifest saved holds a duplicate hash key: its ``.xpp`` records the level and ``strict`` it was
validated at (the result depends on them), so a file written at level 8 is not one Puppet 7.23 uses."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.conformance.puppets import missing_reason
from tests.lsp.publishes import REPO, SERVER, wait_publish

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(shutil.which("puppet") is None, reason="no puppet on PATH"),
    pytest.mark.skipif(missing_reason("7.23") is not None, reason=str(missing_reason("7.23"))),
]

DUP = "class base::dup {\n  $h = {a => 1, a => 2}\n  notice($h)\n}\n"
DUP_XPP = os.path.join(".xpp", "modules", "base", "manifests", "dup.xpp")


def compile_env(env: str) -> subprocess.CompletedProcess[str]:
    """``puppet-xpp --compile ENVDIR`` with its defaults (``--puppet-version auto``)."""
    return subprocess.run(
        [*SERVER, "--compile", env],
        env=dict(os.environ, PYTHONPATH=REPO),
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def env_dir(tmp_path_factory: Any) -> str:
    root = tmp_path_factory.mktemp("savelevel")
    env = os.path.join(str(root), "envs", "production")
    shutil.copytree(os.path.join(REPO, "examples", "production"), env, ignore=shutil.ignore_patterns(".xpp"))
    with open(os.path.join(env, "modules", "base", "manifests", "dup.pp"), "w", encoding="utf-8") as f:
        f.write(DUP)
    with open(os.path.join(env, "manifests", "site.pp"), "a", encoding="utf-8") as f:
        f.write("\ninclude base::dup\n")
    return env


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": REPO}), scope="module"
)
async def client(lsp_client: LanguageClient, env_dir: str) -> Any:
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("neovim@v0.7.0"),
            root_uri="file://" + env_dir,
            workspace_folders=[types.WorkspaceFolder(uri="file://" + env_dir, name="production")],
        )
    )
    yield
    await lsp_client.shutdown_session()


async def saved(client: LanguageClient, path: str, out: str) -> bytes:
    """Open ``path``, save it, and the bytes of the ``.xpp`` the server writes at ``out``."""
    uri = "file://" + path
    with open(path, encoding="utf-8") as f:
        text = f.read()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="puppet", version=1, text=text)
        )
    )
    await wait_publish(client, uri, 1)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    for _ in range(1200):  # (polled: the notification of the write may be missed)
        if os.path.exists(out):
            break
        await asyncio.sleep(0.05)
    with open(out, "rb") as f:
        return f.read()


async def test_the_xpp_written_on_save_is_the_compiles_and_puppet_loads_it(
    client: LanguageClient, env_dir: str, tmp_path: Any
) -> None:
    from tests.runtime.test_puppet_runtime import run

    done = compile_env(env_dir)
    assert done.returncode == 0, done.stderr
    out = os.path.join(env_dir, DUP_XPP)
    with open(out, "rb") as f:
        compiled = f.read()
    os.unlink(out)
    written = await saved(client, os.path.join(env_dir, "modules", "base", "manifests", "dup.pp"), out)
    assert written == compiled
    # Puppet 7.23 (the puppet on PATH) serves every manifest from its .xpp, the saved one included
    fast = run("7.23", env_dir, tmp_path, True)
    plain = run("7.23", env_dir, tmp_path, False)
    assert fast["catalog"] == plain["catalog"]
    assert fast["parsed"] == 0 and fast["served"] == plain["loaded"], fast
