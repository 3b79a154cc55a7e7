"""End-to-end tests (pytest-lsp, Neovim 0.7 and VS Code profiles) of what the server knows beyond the
open file: Ruby functions (4.x, 3.x) and types (native, Resource API) of modules on the module path,
Puppet's built-ins, facts and Hiera.  The workspace is a stdlib-like layout written by the tests."""

from __future__ import annotations

import os
import sys
import textwrap

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.publishes import mark, wait_publish

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER = [sys.executable, "-c", "import sys; from puppet_xpp.server.cli.main import main; sys.exit(main())"]

FILES = {
    # the environment (control repository) and its Hiera layer
    "production/environment.conf": "modulepath = site-modules:modules\n",
    "production/manifests/site.pp": "node default {\n  include profile::web\n}\n",
    "production/hiera.yaml": """\
        version: 5
        defaults:
          datadir: data
        hierarchy:
          - name: per os
            path: "os/%{facts.os.family}.yaml"
          - name: common
            path: common.yaml
        """,
    "production/data/common.yaml": "---\nprofile::web::port: 8080\napp::greeting: 'hello'\n",
    "production/data/os/Debian.yaml": "---\nprofile::web::port: 8081\n",
    "production/site-modules/profile/manifests/web.pp": """\
        # @summary A web profile
        # @param port the port
        class profile::web (Integer $port = 80, String $docroot = '/srv') {
          $g = lookup('app::greeting')
        }
        """,
    "production/site-modules/profile/manifests/vhost.pp": "define profile::vhost (String $servername, Integer $weight = 1) {\n}\n",
    # a stdlib-like module outside the environment, on the configured module path
    "shared/stdlib/metadata.json": '{"name": "puppetlabs-stdlib", "version": "9.0.0"}\n',
    "shared/stdlib/hiera.yaml": "version: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n",
    "shared/stdlib/data/common.yaml": "stdlib::colour: blue\n",
    "shared/stdlib/lib/puppet/functions/stdlib/merge_all.rb": """\
        # frozen_string_literal: true

        # @summary
        #   Merges hashes.
        Puppet::Functions.create_function(:'stdlib::merge_all') do
          # @param hashes the hashes to merge
          dispatch :merge_hashes do
            repeated_param 'Hash', :hashes
            return_type 'Hash'
          end

          # @param base the first hash
          # @param extra the other one
          dispatch :merge_two do
            param 'Hash', :base
            optional_param 'Variant[Hash, Undef]', :extra
            block_param 'Callable[2,2]', :block
          end
        end
        """,
    "shared/stdlib/lib/puppet/functions/stdlib/shout.rb": """\
        # @summary Upper-cases a string.
        Puppet::Functions.create_function(:'stdlib::shout') do
          def shout(text, times = 1)
            text.upcase * times
          end
        end
        """,
    "shared/stdlib/lib/puppet/parser/functions/old_join.rb": """\
        module Puppet::Parser::Functions
          newfunction(:old_join, :type => :rvalue, :arity => 2, :doc => <<-DOC
            @summary Joins an array (legacy API).
          DOC
          ) do |args|
            args[0].join(args[1])
          end
        end
        """,
    "shared/stdlib/lib/puppet/type/file_line.rb": """\
        Puppet::Type.newtype(:file_line) do
          desc 'Ensures a line is in a file.'
          ensurable do
            defaultvalues
            newvalue(:present)
            newvalue(:absent)
          end
          newparam(:name, namevar: true) do
            desc 'An arbitrary name.'
          end
          newparam(:replace) do
            desc 'Replace a matching line.'
            newvalues(true, false)
            defaultto true
          end
          newproperty(:line) do
            desc 'The line.'
          end
        end
        """,
    "shared/stdlib/lib/puppet/type/api_thing.rb": """\
        require 'puppet/resource_api'
        Puppet::ResourceApi.register_type(
          name: 'api_thing',
          docs: <<-EOS,
            @summary A Resource API type.
          EOS
          attributes: {
            ensure: { type: 'Enum[present, absent]', desc: 'Whether it exists.', default: 'present' },
            name: { type: 'String', desc: 'The name.', behaviour: :namevar },
            colour: { type: 'Enum[red, green]', desc: 'Its colour.' },
          },
        )
        """,
    "shared/stdlib/lib/puppet/functions/length.rb": """\
        Puppet::Functions.create_function(:length) do
          dispatch :length do
            param 'Variant[String,Array,Hash]', :value
          end
        end
        """,
    "shared/stdlib/lib/facter/site_role.rb": "Facter.add(:site_role) do\n  setcode { 'web' }\nend\n",
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    root = tmp_path_factory.mktemp("world")
    for rel, text in FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return str(root)


def _uri(path):
    return "file://" + path


def make_fixture(profile):
    @pytest_lsp.fixture(
        config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": REPO}), scope="module"
    )
    async def client(lsp_client: LanguageClient, ws):
        env = os.path.join(ws, "production")
        lsp_client._init = await lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=pytest_lsp.client_capabilities(profile),
                root_uri=_uri(env),
                workspace_folders=[types.WorkspaceFolder(uri=_uri(env), name="production")],
                initialization_options={
                    "puppet": {"modulepath": [os.path.join(ws, "shared")], "xppOnSave": False}
                },
            )
        )
        await _indexed(lsp_client)
        yield
        await lsp_client.shutdown_session()

    return client


async def _indexed(client):
    import asyncio

    for _ in range(600):
        if any("indexed" in m.message for m in client.log_messages):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the server never finished indexing")


client = make_fixture("neovim@v0.7.0")


async def _open(client, ws, rel, text):
    path = os.path.join(ws, rel)
    uri = _uri(path)
    m = mark(client)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="puppet", version=1, text=text)
        )
    )
    await wait_publish(client, uri, 1, after=m)
    return uri


def _pos(text, needle, delta=0):
    i = text.index(needle) + delta
    line = text.count("\n", 0, i)
    return types.Position(line=line, character=i - (text.rfind("\n", 0, i) + 1))


def _close(client, uri):
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


async def _hover(client, uri, pos):
    h = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=pos)
    )
    return h.contents.value if h is not None else None


async def _definition(client, uri, pos):
    res = await client.text_document_definition_async(
        types.DefinitionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=pos)
    )
    return res or []


async def _complete(client, uri, pos):
    res = await client.text_document_completion_async(
        types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=pos)
    )
    return res.items if hasattr(res, "items") else res


async def test_capabilities(client: LanguageClient):
    caps = client._init.capabilities
    assert caps.completion_provider.resolve_provider
    assert list(caps.signature_help_provider.trigger_characters) == ["(", ","]
    assert caps.workspace.workspace_folders.change_notifications


async def test_ruby_functions_hover_definition_signature_help(client: LanguageClient, ws):
    text = "$h = stdlib::merge_all({}, {}) |$a, $b| { }\n$j = old_join([1], ',')\n$s = stdlib::shout('x')\n"
    uri = await _open(client, ws, "production/manifests/f.pp", text)
    hv = await _hover(client, uri, _pos(text, "merge_all"))
    assert "stdlib::merge_all(Hash *$hashes) >> Hash" in hv and "Merges hashes." in hv
    assert "Callable[2,2] &$block" in hv
    locs = await _definition(client, uri, _pos(text, "merge_all"))
    assert locs[0].uri.endswith("lib/puppet/functions/stdlib/merge_all.rb")
    assert locs[0].range.start.line == 4  # the create_function line
    # 3.x: arity 2, :doc heredoc
    hv = await _hover(client, uri, _pos(text, "old_join"))
    assert "old_join(Any $arg1, Any $arg2) >> Any" in hv and "Joins an array" in hv
    # no dispatch: the method named like the function
    hv = await _hover(client, uri, _pos(text, "shout"))
    assert "Any $text, Any $times" in hv
    # signature help: every dispatch, the active one and its parameter
    sh = await client.text_document_signature_help_async(
        types.SignatureHelpParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=_pos(text, "{})", 2)
        )
    )
    # the second argument still matches the first dispatch's repeated parameter
    assert len(sh.signatures) == 2 and (sh.active_signature, sh.active_parameter) == (0, 0)
    assert (
        sh.signatures[0].label.startswith("stdlib::merge_all(")
        and "Merges hashes." in sh.signatures[0].documentation.value
    )
    # a built-in function: every signature from the installed Puppet's data
    sh = await client.text_document_signature_help_async(
        types.SignatureHelpParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=_pos(text, "[1], ", 5)
        )
    )
    assert sh.signatures[0].label.startswith("old_join(") and sh.active_parameter == 1
    _close(client, uri)


async def test_builtin_function_and_type(client: LanguageClient, ws):
    text = "$x = lookup('app::greeting')\nfile { '/tmp/x':\n  ensure => present,\n}\n$n = length([])\n"
    uri = await _open(client, ws, "production/manifests/b.pp", text)
    # Puppet's own `length` wins over the module's (its loaders look at Puppet's functions first)
    hv = await _hover(client, uri, _pos(text, "length"))
    assert "length(Collection $arg)" in hv and "(built-in function)" in hv
    if os.path.isfile("/usr/lib/ruby/vendor_ruby/puppet/functions/length.rb"):
        locs = await _definition(client, uri, _pos(text, "length"))
        assert [loc.uri for loc in locs] == ["file:///usr/lib/ruby/vendor_ruby/puppet/functions/length.rb"]
    sh = await client.text_document_signature_help_async(
        types.SignatureHelpParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=_pos(text, "'app")
        )
    )
    assert len(sh.signatures) >= 4 and all(s.label.startswith("lookup(") for s in sh.signatures)
    hv = await _hover(client, uri, _pos(text, "ensure"))
    assert "ensure" in hv and "`directory`" in hv and "`link`" in hv
    # lookup('key') -> the Hiera data, the per-OS level first
    locs = await _definition(client, uri, _pos(text, "app::greeting", 2))
    assert [os.path.basename(loc.uri) for loc in locs] == ["common.yaml"]
    assert locs[0].range.start.line == 2
    hv = await _hover(client, uri, _pos(text, "app::greeting", 2))
    assert "'hello'" in hv
    _close(client, uri)


async def test_types_and_attribute_values(client: LanguageClient, ws):
    text = "file_line { 'x':\n  replace => \n}\napi_thing { 'y':\n  colour => \n}\nfile { '/z':\n  ensure => \n}\n"
    uri = await _open(client, ws, "production/manifests/t.pp", text)
    locs = await _definition(client, uri, _pos(text, "file_line"))
    assert locs[0].uri.endswith("lib/puppet/type/file_line.rb") and locs[0].range.start.line == 0
    hv = await _hover(client, uri, _pos(text, "api_thing"))
    assert "namevar: `name`" in hv and "Resource API" in hv
    hv = await _hover(client, uri, _pos(text, "replace"))
    assert "allowed values: `true`, `false`" in hv and "Replace a matching line." in hv
    items = await _complete(client, uri, _pos(text, "replace => ", 11))
    assert {i.label for i in items} == {"true", "false"}
    items = await _complete(client, uri, _pos(text, "colour => ", 10))
    assert {i.label for i in items} == {"red", "green"}
    items = await _complete(client, uri, _pos(text, "ensure => ", 10))
    assert {"file", "directory", "link", "absent"} <= {i.label for i in items}
    _close(client, uri)


async def test_completion_class_params_define_params_facts(client: LanguageClient, ws):
    text = (
        "class { 'profile::web':\n  \n}\n"
        "profile::vhost { 'v':\n  \n}\n"
        "$a = $facts['os']['\n"
        "$b = $facts.dig('\n"
        "$c = $::osfam\n"
        "$d = stdlib::\n"
        "api_thing { 'q':\n  \n}\n"
    )
    uri = await _open(client, ws, "production/manifests/c.pp", text)
    items = await _complete(client, uri, types.Position(line=1, character=2))
    assert {"port", "docroot"} <= {i.label for i in items}
    items = await _complete(client, uri, types.Position(line=4, character=2))
    assert {"servername", "weight"} <= {i.label for i in items}
    items = await _complete(client, uri, _pos(text, "['os']['", 8))
    assert {"family", "name", "release"} <= {i.label for i in items}
    items = await _complete(client, uri, _pos(text, "dig('", 5))
    labels = {i.label for i in items}
    assert {"os", "networking", "site_role"} <= labels  # core and the module's custom fact
    items = await _complete(client, uri, _pos(text, "$::osfam", 8))
    assert "$::osfamily" in {i.label for i in items}
    items = await _complete(client, uri, _pos(text, "$::", 3))
    assert {"$::site_role", "$::fqdn"} <= {i.label for i in items}  # a module's custom fact too
    # definition of a custom fact: the module's lib/facter file
    text2 = "$r = $facts['site_role']\n$q = $::site_role\n"
    uri2 = await _open(client, ws, "production/manifests/fact.pp", text2)
    for needle in ("site_role']", "site_role\n"):
        locs = await _definition(client, uri2, _pos(text2, needle, 2))
        assert [loc.uri for loc in locs] == [_uri(os.path.join(ws, "shared/stdlib/lib/facter/site_role.rb"))]
    _close(client, uri2)
    items = await _complete(client, uri, _pos(text, "stdlib::", 8))
    names = {i.label for i in items}
    assert {"stdlib::merge_all", "stdlib::shout"} <= names
    # every item replaces the typed prefix, `::` included
    it = next(i for i in items if i.label == "stdlib::shout")
    assert it.text_edit.range.start.character == 5 and it.text_edit.range.end.character == 13
    items = await _complete(client, uri, types.Position(line=11, character=2))
    assert {"ensure", "name", "colour"} <= {i.label for i in items}
    # resolve fills the documentation lazily
    it = next(
        i for i in await _complete(client, uri, _pos(text, "stdlib::", 8)) if i.label == "stdlib::merge_all"
    )
    res = await client.completion_item_resolve_async(it)
    assert "Merges hashes." in res.documentation.value
    _close(client, uri)


async def test_signature_help_puppet_function_references_and_module_hiera(client: LanguageClient, ws):
    text = (
        "function mine::f(String $a, Integer $b = 1) >> String { $a }\n"
        "$r = mine::f('x', )\n"
        "package { ['vim', 'curl']: }\n"
        "service { 's': require => Package['\n"
        "$c = lookup('stdlib::colour')\n"
    )
    uri = await _open(client, ws, "production/manifests/s.pp", text)
    sh = await client.text_document_signature_help_async(
        types.SignatureHelpParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=_pos(text, "'x', ", 5)
        )
    )
    assert sh.signatures[0].label == "mine::f(String $a, Integer $b?) >> String" and sh.active_parameter == 1
    items = await _complete(client, uri, _pos(text, "Package['", 9))
    assert {i.label for i in items} == {"vim", "curl"}
    # Hiera keys inside lookup('…'): the environment's and the modules' data
    items = await _complete(client, uri, _pos(text, "lookup('", 8))
    assert {"profile::web::port", "app::greeting", "stdlib::colour"} <= {i.label for i in items}
    # a key in the module's namespace is found in the module's own Hiera layer
    locs = await _definition(client, uri, _pos(text, "stdlib::colour", 3))
    assert [loc.uri for loc in locs] == [_uri(os.path.join(ws, "shared/stdlib/data/common.yaml"))]
    _close(client, uri)


async def test_hiera_from_class_parameter(client: LanguageClient, ws):
    path = os.path.join(ws, "production/site-modules/profile/manifests/web.pp")
    text = open(path).read()
    uri = await _open(client, ws, "production/site-modules/profile/manifests/web.pp", text)
    locs = await _definition(client, uri, _pos(text, "$port", 1))
    assert sorted(os.path.basename(loc.uri) for loc in locs) == ["Debian.yaml", "common.yaml"]
    hv = await _hover(client, uri, _pos(text, "$port", 1))
    assert "8080" in hv and "8081" in hv and "Integer $port = 80" in hv
    _close(client, uri)


async def test_watched_files_and_folders_update_the_index(client: LanguageClient, ws):
    new = os.path.join(ws, "shared/stdlib/lib/puppet/functions/stdlib/fresh.rb")
    with open(new, "w") as f:
        f.write(
            "Puppet::Functions.create_function(:'stdlib::fresh') do\n  dispatch :f do\n    param 'Integer', :n\n  end\nend\n"
        )
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=_uri(new), type=types.FileChangeType.Created)]
        )
    )
    text = "$f = stdlib::fresh(1)\n"
    uri = await _open(client, ws, "production/manifests/w.pp", text)
    assert "Integer $n" in (await _hover(client, uri, _pos(text, "fresh")) or "")
    # a new workspace folder holding a module: indexed, with progress
    extra = os.path.join(ws, "extra")
    os.makedirs(os.path.join(extra, "lib/puppet/type"))
    with open(os.path.join(extra, "lib/puppet/type/extra_thing.rb"), "w") as f:
        f.write("Puppet::Type.newtype(:extra_thing) do\n  newparam(:name) do\n  end\nend\n")
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=_uri(extra), name="extra")], removed=[]
            )
        )
    )
    import asyncio

    for _ in range(200):
        locs = await _definition(client, uri, types.Position(line=0, character=0))
        text2 = "extra_thing { 'a': }\n"
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text2)],
            )
        )
        locs = await _definition(client, uri, types.Position(line=0, character=3))
        if locs:
            break
        await asyncio.sleep(0.05)
    assert locs and locs[0].uri.endswith("extra_thing.rb")
    # removing the folder takes its definitions out of the index
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[], removed=[types.WorkspaceFolder(uri=_uri(extra), name="extra")]
            )
        )
    )
    for _ in range(200):
        locs = await _definition(client, uri, types.Position(line=0, character=3))
        if not locs:
            break
        await asyncio.sleep(0.05)
    assert not locs
    # a deleted Ruby file leaves the index
    os.remove(new)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=_uri(new), type=types.FileChangeType.Deleted)]
        )
    )
    for _ in range(200):
        items = await _complete(client, uri, types.Position(line=0, character=0))
        if "stdlib::fresh" not in {i.label for i in items}:
            break
        await asyncio.sleep(0.05)
    assert "stdlib::fresh" not in {i.label for i in items}
    _close(client, uri)


async def test_builtins_follow_the_language_level(client: LanguageClient, ws):
    """OpenVox 8's max() also takes SemVer values, Puppet 7.23's does not (setting puppetVersion)."""
    text = "$m = max(1, 2)\n"
    uri = await _open(client, ws, "production/manifests/lv.pp", text)

    async def labels():
        sh = await client.text_document_signature_help_async(
            types.SignatureHelpParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=_pos(text, "1,")
            )
        )
        return [s.label for s in sh.signatures]

    assert any("SemVer" in lb for lb in await labels())  # the default level, 8
    for version, semver in (("7.23", False), ("8", True)):
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"puppet": {"puppetVersion": version}})
        )
        import asyncio

        for _ in range(100):
            got = await labels()
            if any("SemVer" in lb for lb in got) is semver:
                break
            await asyncio.sleep(0.05)
        assert any("SemVer" in lb for lb in got) is semver, (version, got)
    _close(client, uri)
