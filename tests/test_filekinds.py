"""The one rule of a document's kind (server/analysis/filekinds.py ``kind_of``) and the entry points that
ask it: Hiera's files -- ``hiera.yaml`` and the YAML/JSON data under ``data/`` that the editors now send --
are never Puppet code, however the client names them (language id ``yaml``/``json``, or none), while a
Puppetfile, a module's metadata.json, a manifest and a template keep their kinds.

The entry points: the language server's ``didOpen`` (server/lsp/documents.py), the start-up front that
publishes a document's first diagnostics while the server loads (server/lsp/startup.py
``first_diagnostics``), and puppet-vscode's messages that act on a manifest only (server/lsp/custom.py;
through the protocol in tests/lsp/test_deep_lsp.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from puppet_xpp.server.analysis import filekinds
from puppet_xpp.server.lsp import startup

ENV = "file:///srv/code/environments/production"

HIERA = [
    (f"{ENV}/hiera.yaml", "yaml"),
    (f"{ENV}/data/common.yaml", "yaml"),
    (f"{ENV}/data/nodes/web01.example.com.yaml", "yaml"),
    (f"{ENV}/modules/app/data/common.yml", "yaml"),
    (f"{ENV}/data/common.json", "json"),
    (f"{ENV}/modules/app/hiera.yaml", "yaml"),
]


@pytest.mark.parametrize(("uri", "language"), HIERA)
def test_hiera_files_are_other_with_their_language_id_or_none(uri: str, language: str) -> None:
    assert filekinds.kind_of(uri, language) == filekinds.OTHER
    assert filekinds.kind_of(uri, None) == filekinds.OTHER
    assert filekinds.kind_of(uri, language.upper()) == filekinds.OTHER
    assert filekinds.is_data_file(uri)


def test_yaml_is_other_whatever_its_name() -> None:
    """The client says YAML: not Puppet, even for a name that says nothing (an untitled buffer)."""
    assert filekinds.kind_of("untitled:Untitled-1", "yaml") == filekinds.OTHER
    assert filekinds.kind_of(f"{ENV}/data/common", "yaml") == filekinds.OTHER
    assert filekinds.kind_of(f"{ENV}/data/common.yaml?x=1#top", None) == filekinds.OTHER


def test_the_other_kinds_are_kept() -> None:
    assert filekinds.kind_of(f"{ENV}/Puppetfile", None) == filekinds.PUPPETFILE
    assert filekinds.kind_of(f"{ENV}/Puppetfile", "ruby") == filekinds.PUPPETFILE
    assert filekinds.kind_of(f"{ENV}/modules/app/metadata.json", "json") == filekinds.METADATA
    assert filekinds.kind_of(f"{ENV}/modules/app/metadata.json", None) == filekinds.METADATA
    assert filekinds.kind_of(f"{ENV}/node_modules/x/metadata.json", "json") == filekinds.OTHER
    assert filekinds.kind_of(f"{ENV}/manifests/site.pp", "puppet") == filekinds.PUPPET
    assert filekinds.kind_of(f"{ENV}/manifests/site.pp", None) == filekinds.PUPPET
    assert filekinds.kind_of(f"{ENV}/modules/app/templates/a.epp", None) == filekinds.EPP
    # the client's language id decides over a name: a .yaml buffer the user set to Puppet is Puppet
    assert filekinds.kind_of(f"{ENV}/data/odd.yaml", "puppet") == filekinds.PUPPET
    assert not filekinds.is_data_file(f"{ENV}/manifests/site.pp")


def _open(uri: str, text: str, language: str) -> dict[str, object]:
    return {"uri": uri, "text": text, "version": 1, "languageId": language}


def test_the_start_up_front_publishes_nothing_for_hiera_data(tmp_path: Path) -> None:
    """The front (server/lsp/startup.py) analyses a manifest opened while the server loads, and leaves
    a YAML document to the server: as Puppet this text is a syntax error."""
    init = {"rootUri": tmp_path.as_uri(), "capabilities": {}}
    data = "---\napp::needs::port: 80\n"
    got = startup.first_diagnostics(
        _open(f"{tmp_path.as_uri()}/data/common.yaml", data, "yaml"), init, "utf-16"
    )
    assert got is None
    got = startup.first_diagnostics(_open(f"{tmp_path.as_uri()}/hiera.yaml", data, "yaml"), init, "utf-16")
    assert got is None
    # (the same text as a manifest is analysed there: Puppet's syntax error)
    manifest = startup.first_diagnostics(
        _open(f"{tmp_path.as_uri()}/site.pp", data, "puppet"), init, "utf-16"
    )
    assert manifest is not None and manifest[2], manifest
