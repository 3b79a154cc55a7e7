"""Hover on facts (issue 24, item 5) through a real LSP client (pytest-lsp): the fact's type and
description are Facter's own schema's (read here from the installed Facter, not from our generated
data), and the value is the one the installed facter reports -- from a facts file set in the settings
(``facter --json`` output, or Puppet's facts YAML as ``puppet facts find`` writes it) or from one
facter run on request (the ``puppet-xpp.runFacter`` command).  Without either, no value and no facter
run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import pytest_lsp
import yaml
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = [sys.executable, "-c", "import sys; from puppet_xpp.server.cli.main import main; sys.exit(main())"]
FACTER = shutil.which("facter")
pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(FACTER is None, reason="facter is not installed"),
]

MANIFEST = """class probe(String $os_name = 'x') {
  $a = $facts['os']['family']
  $b = $::osfamily
  $c = $facts.dig('os', 'release', 'full')
  $d = $::os['name']
  notify { "${facts['kernel']}": }
}
class shadow(String $os = 'mine') {
  $e = $os
  $f = $os_free
}
$g = $os
$h = $facts['no_such_fact']
"""


def schema_entry(path: list[str]) -> tuple[str, str]:
    """(type, description) of the fact at key ``path`` in Facter's own schema, found next to the
    installed facter's library (not our generated data)."""
    out = subprocess.run(
        ["ruby", "-rfacter", "-e", "puts $LOAD_PATH.map { |d| File.join(d, 'schema', 'facter.yaml') }"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    with open(next(p for p in out if os.path.isfile(p)), encoding="utf-8") as f:
        entry = {"elements": yaml.safe_load(f)}
    for key in path:
        entry = entry["elements"][key]
    return entry["type"], entry["description"].strip()


@pytest.fixture(scope="module")
def machine(tmp_path_factory) -> dict:
    """This machine's facts as facter reports them, and the facts files made of them."""
    d = tmp_path_factory.mktemp("facts")
    run = subprocess.run(  # (facter exits 1 after a fact it may not read, e.g. in a container)
        [FACTER, "--json", "--show-legacy"], capture_output=True, text=True, timeout=300, check=False
    )
    values = json.loads(run.stdout)
    json_file = d / "facter.json"
    json_file.write_text(run.stdout, encoding="utf-8")
    return {"values": values, "json": str(json_file), "dir": str(d)}


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": REPO}), scope="module"
)
async def client(lsp_client: LanguageClient, machine):
    root = os.path.join(machine["dir"], "ws")
    os.makedirs(root, exist_ok=True)
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("neovim@v0.7.0"),
            root_uri="file://" + root,
            initialization_options={"puppet": {"lint": {"enabled": False}}},
        )
    )
    lsp_client.facts_root = root
    yield
    await lsp_client.shutdown_session()


def _position(text: str, needle: str, into: int = 1) -> types.Position:
    k = text.index(needle) + into
    head = text[:k]
    return types.Position(line=head.count("\n"), character=len(head) - (head.rfind("\n") + 1))


async def _hover(client, needle: str, into: int = 1) -> str | None:
    path = os.path.join(client.facts_root, "probe.pp")
    uri = "file://" + path
    if not getattr(client, "facts_opened", False):
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="puppet", version=1, text=MANIFEST)
            )
        )
        client.facts_opened = True
    res = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=_position(MANIFEST, needle, into)
        )
    )
    if res is None:
        return None
    contents = res.contents
    return contents.value if isinstance(contents, types.MarkupContent) else str(contents)


def _configure(client, facts: dict) -> None:
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"puppet": {"facts": facts}})
    )


# the facts each test hovers: (text to find, offset into it, key path)
PLACES = [
    ("'family'", 2, ["os", "family"]),
    ("'os']['family']", 2, ["os"]),
    ("$::osfamily", 4, ["osfamily"]),
    ("'release'", 2, ["os", "release"]),
    ("'full'", 2, ["os", "release", "full"]),
    ("$::os[", 4, ["os"]),
    ("'name'", 2, ["os", "name"]),
    ("facts['kernel']", 8, ["kernel"]),
    ("$g = $os", 6, ["os"]),
]


def _value_text(value) -> str:
    """What the hover must show of ``value``: a string as it is, else the first member's line of its
    JSON (the hover shows a structured value as JSON)."""
    if isinstance(value, str):
        return value
    lines = json.dumps(value, indent=2, sort_keys=True).splitlines()
    return lines[1].strip() if len(lines) > 1 else lines[0]


async def test_description_and_type_without_values(client, machine):
    """No facts file, no facter run: Facter's schema only, and facter is never run unasked."""
    for needle, into, path in PLACES:
        text = await _hover(client, needle, into)
        assert text is not None, needle
        typ, desc = schema_entry(path)
        assert f"**{'.'.join(path)}**: {typ}" in text, text
        assert desc in text, (needle, text)
        assert "value" not in text, text  # nothing known of this machine yet
    assert "legacy" in (await _hover(client, "$::osfamily", 4) or "")


async def test_not_facts(client):
    assert await _hover(client, "$e = $os", 6) is not None  # the class parameter $os
    assert "fact" not in (await _hover(client, "$e = $os", 6) or "")
    assert await _hover(client, "$os_free", 2) is None  # no fact of that name
    assert await _hover(client, "no_such_fact", 1) is None


async def test_values_from_a_facter_json_file(client, machine):
    _configure(client, {"file": machine["json"]})
    for needle, into, path in PLACES:
        value = machine["values"]
        for key in path:
            value = value[key]
        text = await _hover(client, needle, into)
        assert text is not None and f"value ({machine['json']})" in text, (needle, text)
        assert _value_text(value) in text, (needle, value, text)


async def test_values_from_puppet_facts_yaml(client, machine):
    """``puppet facts find`` YAML (a Puppet::Node::Facts object): its values."""
    run = subprocess.run(
        ["puppet", "facts", "find", "probe", "--render-as", "yaml"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if "Puppet::Node::Facts" not in run.stdout:
        pytest.skip(f"puppet facts find gave no facts: {run.stderr[-300:]}")
    path = os.path.join(machine["dir"], "probe.yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(run.stdout)
    _configure(client, {"file": path})
    family = machine["values"]["os"]["family"]
    text = await _hover(client, "'family'", 2)
    assert text is not None and f"value ({path}): `{family}`" in text, text
    text = await _hover(client, "$::osfamily", 4)
    assert text is not None and f"`{family}`" in text, text


async def test_a_broken_facts_file_says_why(client, machine):
    path = os.path.join(machine["dir"], "broken.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"os": ')
    _configure(client, {"file": path})
    text = await _hover(client, "'family'", 2)
    assert text is not None and "not valid JSON" in text and path in text, text
    _configure(client, {"file": os.path.join(machine["dir"], "missing.json")})
    text = await _hover(client, "'family'", 2)
    assert text is not None and "cannot be read" in text, text


async def test_facter_run_on_request(client, machine):
    _configure(client, {"file": None})
    assert "value" not in (await _hover(client, "'family'", 2) or "")
    res = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="puppet-xpp.runFacter")
    )
    assert res["facts"] >= len(machine["values"]) // 2 and "error" not in res, res
    text = await _hover(client, "'family'", 2)
    assert text is not None and f"`{machine['values']['os']['family']}`" in text, text
    text = await _hover(client, "$::osfamily", 4)
    assert text is not None and f"`{machine['values']['osfamily']}`" in text, text


async def test_facts_data_is_what_the_generator_makes():
    """server/analysis/data/facts.json is gen_facts.rb's output for the installed Facter, untouched."""
    with open(os.path.join(REPO, "server", "analysis", "data", "facts.json"), encoding="utf-8") as f:
        shipped = json.load(f)
    run = subprocess.run(
        ["ruby", os.path.join(REPO, "server", "analysis", "gen_facts.rb")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    generated = json.loads(run.stdout)
    if generated["generated_from"] != shipped["generated_from"]:
        pytest.skip(f"another Facter installed: {generated['generated_from']}")
    assert generated == shipped
