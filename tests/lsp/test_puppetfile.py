"""A Puppetfile in the editor (issue 29, item 2) through a real LSP client (pytest-lsp): r10k's
documented forms give no diagnostic; each line r10k rejects or warns about gets its diagnostic on that
line; one symbol per module; hover says what the declaration pins and where the module resolves on the
module path; definition goes into the module's directory; completion offers r10k's option keys.  The
Puppetfile is never parsed as Puppet, never linted, never compiled to .xpp.

Truth: r10k itself (``r10k puppetfile check``, Debian's r10k package) judges every Puppetfile used here
-- valid or not, its message, and for a syntax error Ruby's line; the option keys are read from the
installed r10k's own module types (``lib/r10k/module/git.rb``'s ``setopts``); versions and directories
from the corpus modules' metadata.json (/usr/share/puppet/modules, on the test environment's module
path).  Without r10k the cases still run against r10k's rules as cited beside each case.
"""

from __future__ import annotations

import json
import os
import pathlib
import random
import re
import shutil
import subprocess
import tempfile

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from puppet_xpp.server.analysis import puppetfile
from tests.lsp.publishes import REPO, SERVER, mark, send_edit, wait_publish

R10K = shutil.which("r10k")
CORPUS = "/usr/share/puppet/modules"
pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(
        not os.path.isdir(os.path.join(CORPUS, "stdlib")), reason="the corpus is not installed"
    ),
]

# r10k's documented forms (r10k's doc/puppetfile.mkd): forge and moduledir, Forge modules without and
# with a version and with :latest, Git modules with :tag, :branch, :ref, :commit, a local module, the
# standard :type/:version interface, and comments
VALID = """\
# the control repository's modules
forge "https://forgeapi.puppet.com"
moduledir 'thirdparty'

mod 'puppetlabs/stdlib', '8.5.0'
mod 'puppetlabs-concat'
mod 'puppetlabs/ntp', :latest
mod 'apache',
  :git => 'https://github.com/puppetlabs/puppetlabs-apache.git',
  :tag => '0.9.0'
mod 'firewall', :git => 'https://github.com/puppetlabs/puppetlabs-firewall.git', :branch => 'main'
mod 'inifile', :git => 'https://github.com/puppetlabs/puppetlabs-inifile.git', :ref => 'v6.0.0'
mod 'vcsrepo',
  git: 'https://github.com/puppetlabs/puppetlabs-vcsrepo.git',
  commit: '0123456789abcdef0123456789abcdef01234567'
mod 'site_local', :local => true
mod 'puppetlabs-motd', type: 'forge', version: '7.0.0'
"""

FIRST = "mod 'puppetlabs/stdlib'\n"
# (id, line 2, severity): a Puppetfile of a valid line 1 (FIRST) and a line 2 with one problem, or (its
# first line differing) the whole Puppetfile.  The rule each follows in r10k (lib/r10k/...):
CASES = [
    # Ruby's syntax (the Puppetfile is instance_eval'ed: module_loader/puppetfile.rb)
    ("syntax", "mod 'x' 'y',,", "error"),
    ("keyword", "module 'puppetlabs/apache'", "error"),
    ("trailing-comma", "mod 'puppetlabs/stdlib',\nmod 'puppetlabs/ntp'", "error"),  # (line 1 differs)
    # DSL#method_missing: "unrecognized declaration"
    ("unknown-method", "modules 'puppetlabs/apache'", "error"),
    ("bare-word", "foo", "error"),
    ("called-argument", "mod 'puppetlabs/ntp', latest", "error"),
    # Ruby 3's rightward pattern match: an option on a line of its own (NoMatchingPatternError)
    ("missing-comma", "mod 'apache', :git => 'https://x/y.git'\n  :tag => 'v1'", "error"),  # (line 1 differs)
    # a call without parentheses among another's arguments, in an array: Ruby's syntax
    ("nested-command", "[mod 'puppetlabs/ntp']", "error"),
    # DSL#mod(name, args = nil), DSL#forge(location): Ruby's ArgumentError
    ("mod-3-args", "mod 'puppetlabs/ntp', '1.0.0', :git => 'x'", "error"),
    ("mod-no-args", "mod", "error"),
    ("forge-no-args", "forge", "error"),
    # Module::Forge#parse_title, Module::Base#parse_title, Module::Forge#valid_version?
    ("forge-no-owner", "mod 'ntp'", "error"),
    ("bad-name", "mod 'a-b-c', :local => true", "error"),
    ("forge-version", "mod 'puppetlabs/ntp', '1.0'", "error"),
    # Module.with_implementation: no type takes the arguments
    ("no-type", "mod 'puppetlabs/ntp', :ref => 'x'", "error"),
    # Util::Setopts: an option the type does not take (a warning; Module::Tarball raises)
    ("git-option", "mod 'apache', :git => 'https://x/y.git', :tag => 't', :foo => 1", "warning"),
    ("forge-option", "mod 'puppetlabs/ntp', type: 'forge', version: '1.0.0', ref: 'x'", "warning"),
    ("tarball-option", "mod 'puppetlabs-ntp', type: 'tarball', source: 'https://x/y.tgz', foo: 1", "error"),
    ("conflict", "mod 'apache', :git => 'https://x/y.git', :tag => 't', :branch => 'b'", "warning"),
    # ModuleLoader::Puppetfile#validate_no_duplicate_names (by module name, whatever the owner or type)
    ("duplicate", "mod 'stdlib', :git => 'https://x/y.git', :ref => 'main'", "error"),
    # ModuleLoader::Puppetfile#validate_install_path
    ("install-path", "mod 'apache', :local => true, :install_path => '/opt/elsewhere'", "error"),
]
SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning}


def r10k_check(text: str) -> tuple[bool, str]:
    """(r10k accepts it, what it said) for a Puppetfile, by ``r10k puppetfile check`` in its directory."""
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "Puppetfile"), "w", encoding="utf-8") as f:
            f.write(text)
        run = subprocess.run(
            [R10K, "puppetfile", "check"], cwd=d, capture_output=True, text=True, timeout=120, check=False
        )
    said = (run.stdout + run.stderr).replace(d, "<dir>")
    return run.returncode == 0 and "WARN" not in said, said


def r10k_message(said: str) -> tuple[str, int | None]:
    """r10k's message for the one problem of a Puppetfile (its WARN line, else the exception's first
    line), made comparable (the args of "doesn't have an implementation" are Ruby's inspect of the
    hash: left out), and the line Ruby gave, if any."""
    lines = [s.strip() for s in said.splitlines() if s.strip()]
    warn = [s.split("->", 1)[1].strip() for s in lines if s.startswith("WARN")]
    if warn:
        return warn[0], None
    if "Original exception:" in lines:
        lines = lines[lines.index("Original exception:") + 1 :]
    first = lines[0]
    where = re.match(r"<dir>/Puppetfile:(\d+): (.*)", first)
    if where:
        return where.group(2).split(",")[0], int(where.group(1))
    return re.sub(r" with args \{.*\} doesn't", " with args {} doesn't", first), None


def _position(text: str, needle: str, into: int = 1) -> types.Position:
    k = text.index(needle) + into
    head = text[:k]
    return types.Position(line=head.count("\n"), character=len(head) - (head.rfind("\n") + 1))


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": REPO}), scope="module"
)
async def client(lsp_client: LanguageClient, tmp_path_factory):
    """The server on a workspace holding an environment whose module path ends with the corpus
    (environment.conf), lint on (the default): a Puppetfile must still never be linted."""
    root = str(tmp_path_factory.mktemp("puppetfile"))
    env = os.path.join(root, "control")
    os.makedirs(os.path.join(env, "modules"))
    with open(os.path.join(env, "environment.conf"), "w", encoding="utf-8") as f:
        f.write(f"modulepath = modules:{CORPUS}\n")
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("neovim@v0.7.0"), root_uri="file://" + root
        )
    )
    lsp_client.pf_env = env
    lsp_client.pf_root = root
    yield
    await lsp_client.shutdown_session()


def open_doc(client, rel: str, text: str, language_id: str = "puppetfile") -> str:
    """Write ``text`` to ``rel`` in the environment and open it as ``language_id``; its URI."""
    path = pathlib.Path(client.pf_env, rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    item = types.TextDocumentItem(uri=path.as_uri(), language_id=language_id, version=1, text=text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    return item.uri


async def opened(client, rel: str, text: str, language_id: str = "puppetfile") -> tuple[str, list]:
    at = mark(client)
    uri = open_doc(client, rel, text, language_id)
    return uri, (await wait_publish(client, uri, 1, after=at)).diagnostics


@pytest.mark.skipif(R10K is None, reason="r10k is not installed (Debian package r10k)")
async def test_valid_puppetfile_is_valid_for_r10k() -> None:
    ok, said = r10k_check(VALID)
    assert ok and "Syntax OK" in said, said


@pytest.mark.parametrize("language_id", ["puppetfile", "ruby"])
async def test_valid_puppetfile_no_diagnostics(client, language_id: str) -> None:
    """No diagnostic on r10k's documented forms (the Puppetfile is not parsed as Puppet: as a manifest
    its line 2 is a syntax error); opened as ``puppetfile`` or, named Puppetfile, as anything else."""
    uri, diags = await opened(client, f"{language_id}/Puppetfile", VALID, language_id)
    assert not diags, diags
    # nothing later either: no lint run publishes anything for it
    at = mark(client)
    await never_linted(client, uri)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    with pytest.raises(AssertionError):
        await wait_publish(client, uri, after=at, timeout=1.5)
    assert not os.path.exists(os.path.join(client.pf_env, ".xpp"))


async def never_linted(client, uri: str) -> None:
    """Format Document gives nothing (puppet-lint's fixes are never applied to it)."""
    edits = await client.text_document_formatting_async(
        types.DocumentFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )
    assert not edits


async def test_never_formatted_by_lint(client) -> None:
    """A Puppetfile puppet-lint's lexer takes, with what its fixes would change (a double-quoted
    string without variables, trailing spaces): no lint diagnostic, no formatting edit."""
    text = "forge \"https://forgeapi.puppet.com\"\nmod 'puppetlabs/stdlib', '8.5.0'   \n"
    uri, diags = await opened(client, "plain/Puppetfile", text)
    assert not diags, diags
    at = mark(client)
    await never_linted(client, uri)
    with pytest.raises(AssertionError):
        await wait_publish(client, uri, after=at, timeout=1.5)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
async def test_bad_line_diagnostic(client, case) -> None:
    name, second, severity = case
    text = (second if "\n" in second else FIRST + second) + "\n"
    line = 2
    expected_message = None
    if R10K is not None:
        ok, said = r10k_check(text)
        assert not ok, f"r10k accepts {name}: {said}"
        expected_message, ruby_line = r10k_message(said)
        if ruby_line is not None:
            assert ruby_line == line, said
        if severity == "warning":
            assert "Syntax OK" in said and "WARN" in said, said
        else:
            assert "Syntax OK" not in said, said
    uri, diags = await opened(client, f"cases/{name}/Puppetfile", text)
    if expected_message is not None:  # (r10k ran in a directory of its own)
        expected_message = expected_message.replace("<dir>", os.path.dirname(uri[len("file://") :]))
    at_line = [d for d in diags if d.range.start.line == line - 1]
    assert at_line, f"no diagnostic on line {line}: {diags}"
    assert not [d for d in diags if d.range.start.line != line - 1], diags
    assert any(d.severity == SEVERITY[severity] for d in at_line), at_line
    assert all(d.source == "puppet-xpp.puppetfile" for d in diags)
    if expected_message is not None:
        ours = [re.sub(r" with args \{.*\} doesn't", " with args {} doesn't", d.message) for d in at_line]
        assert any(expected_message in m for m in ours), (expected_message, ours)


async def test_edit_brings_a_duplicate(client) -> None:
    """Edits are applied as to a manifest; the diagnostics follow the text (r10k: duplicate names)."""
    uri, diags = await opened(client, "edited/Puppetfile", "mod 'puppetlabs/stdlib'\nmod 'puppetlabs/ntp'\n")
    assert not diags, diags
    at = mark(client)
    send_edit(client, uri, 2, (1, 16), (1, 19), "stdlib")
    diags = (await wait_publish(client, uri, 2, after=at)).diagnostics
    assert [(d.range.start.line, d.severity) for d in diags] == [(1, types.DiagnosticSeverity.Error)]
    assert "duplicate module names" in diags[0].message and "stdlib" in diags[0].message


async def test_symbols_one_per_module(client) -> None:
    uri, _ = await opened(client, "symbols/Puppetfile", VALID)
    res = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    written = re.findall(r"^mod '([^']+)'", VALID, re.M)
    assert [s.name for s in res] == written
    lines = VALID.splitlines()
    for s in res:
        assert lines[s.selection_range.start.line].startswith(f"mod '{s.name}'")
        assert s.kind == types.SymbolKind.Module
    apache = next(s for s in res if s.name == "apache")
    assert (apache.range.start.line, apache.range.end.line) == (7, 9)  # its three lines


def corpus_version(name: str) -> str:
    with open(os.path.join(CORPUS, name, "metadata.json"), encoding="utf-8") as f:
        return str(json.load(f)["version"])


async def test_hover_version_and_resolution(client) -> None:
    uri, _ = await opened(client, "hover/Puppetfile", VALID)

    async def hover(needle: str) -> str:
        res = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=_position(VALID, needle)
            )
        )
        assert res is not None, needle
        return res.contents.value

    text = await hover("mod 'puppetlabs/stdlib'")
    assert "8.5.0" in text  # the version the declaration pins
    assert f"{CORPUS}/stdlib" in text and corpus_version("stdlib") in text  # where it resolves, installed
    text = await hover("mod 'inifile'")
    assert "v6.0.0" in text and "puppetlabs-inifile.git" in text
    assert f"{CORPUS}/inifile" in text and corpus_version("inifile") in text
    text = await hover("mod 'site_local'")
    assert "not on the module path" in text
    # r10k's moduledir, relative to the Puppetfile's directory
    assert os.path.join(client.pf_env, "hover", "thirdparty", "site_local") in text


async def test_definition_into_the_module(client) -> None:
    uri, _ = await opened(client, "definition/Puppetfile", VALID)
    for needle, module in (("mod 'puppetlabs/stdlib'", "stdlib"), ("mod 'apache'", "apache")):
        res = await client.text_document_definition_async(
            types.DefinitionParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=_position(VALID, needle, 6)
            )
        )
        assert res, needle
        target = res[0].uri
        assert target.startswith(f"file://{CORPUS}/{module}/"), target
        assert os.path.exists(target[len("file://") :])
    res = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=_position(VALID, "mod 'site_local'", 6),
        )
    )
    assert not res  # not on the module path, not installed: nowhere to go


def r10k_git_options() -> set[str]:
    """The option keys of r10k's Git module type, read from the installed r10k's own source
    (``setopts`` in lib/r10k/module/git.rb)."""
    found = subprocess.run(
        ["ruby", "-e", "puts Gem.find_files('r10k/module/git.rb')"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    with open(found[0], encoding="utf-8") as f:
        source = f.read()
    block = source[source.index("setopts(") : source.index("}", source.index("setopts("))]
    return set(re.findall(r":(\w+)\s*=>", block))


@pytest.mark.skipif(R10K is None, reason="r10k is not installed (Debian package r10k)")
async def test_completion_of_git_option_keys(client) -> None:
    text = "mod 'puppetlabs/stdlib'\nmod 'apache',\n  :git => 'https://x/y.git',\n  :\n"
    uri, _ = await opened(client, "completion/Puppetfile", text)
    res = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=3, character=3)
        )
    )
    assert res is not None
    labels = {it.label for it in res.items}
    keys = r10k_git_options()
    assert keys - {"git"} <= labels  # each key r10k's Git type takes, but the one given
    assert "git" not in labels
    assert labels <= keys | {"install_path", "exclude_spec"}  # (the loader's and Module::Base's)
    ref = next(it for it in res.items if it.label == "ref")
    assert ref.text_edit is not None and ref.text_edit.new_text == ":ref => "
    # the new-style hash: `key: `
    send_edit(client, uri, 2, (3, 2), (3, 3), "ta")
    res = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=3, character=4)
        )
    )
    assert res is not None and [it.label for it in res.items] == ["tag"]
    assert res.items[0].text_edit.new_text == "tag: "


async def test_metadata_json_is_not_puppet(client) -> None:
    """A module's metadata.json (and any other JSON) is never parsed as Puppet: none of the Puppet
    parser's diagnostics (as a manifest, its first ``:`` is a syntax error), whatever its own analysis
    says."""
    meta = json.dumps({"name": "me-thing", "version": "1.0.0", "dependencies": []}, indent=2)
    _, diags = await opened(client, "modules/thing/metadata.json", meta, "json")
    assert not [d for d in diags if d.code == "SYNTAX_ERROR" or d.message.startswith("Syntax error")], diags
    _, diags = await opened(client, "modules/thing/tasks/run.json", '{"description": "x"}', "json")
    assert not diags, diags


# the pieces generated Puppetfiles are made of (names valid and not, option keys of each type, versions
# valid and not, other declarations)
GEN_NAMES = ["'puppetlabs/stdlib'", "'stdlib'", "'puppetlabs-ntp'", "'a-b-c'", "'x1'", ":sym", "'b/c.d'"]
GEN_ARGS = [
    ":git => 'https://x/y.git'",
    ":ref => 'main'",
    ":tag => 'v1'",
    ":branch => 'b'",
    ":local => true",
    "type: 'git'",
    "type: 'forge'",
    "type: 'svn'",
    "type: 'tarball'",
    ":svn => 'https://s/r'",
    ":rev => '12'",
    "version: '1.2.3'",
    "version: '1.2'",
    ":latest",
    "'2.0.0'",
    "'2.0'",
    ":commit => 'abc'",
    ":install_path => 'x'",
    ":install_path => '/etc'",
    ":exclude_spec => true",
    ":foo => 1",
    "'git' => 'u'",
    ":source => 'https://t/x.tgz'",
    ":checksum => 'aa'",
    "nil",
    ":present",
    "x",
]
GEN_OTHER = ["moduledir 'vendor'", "forge 'https://f'", "forge", "foo", "x = 1", "mod", "puts 'hi'"]


def generated(seed: int) -> str:
    pick = random.Random(seed)
    lines = [
        "mod " + ", ".join([pick.choice(GEN_NAMES), *pick.sample(GEN_ARGS, pick.randint(0, 3))])
        for _ in range(pick.randint(1, 4))
    ]
    if pick.random() < 0.5:
        lines.insert(pick.randrange(len(lines) + 1), pick.choice(GEN_OTHER))
    return "\n".join(lines) + "\n"


@pytest.mark.skipif(R10K is None, reason="r10k is not installed (Debian package r10k)")
async def test_generated_puppetfiles_judged_as_r10k_judges_them() -> None:
    """Generated Puppetfiles: an error where ``r10k puppetfile check`` fails, a warning where it warns,
    nothing where it says "Syntax OK" alone."""
    differ = []
    for seed in range(30):
        text = generated(seed)
        ok, said = r10k_check(text)
        problems = puppetfile.parse(text, "/nowhere").problems
        ours = {p.severity for p in problems}
        theirs = {"error"} if "Syntax OK" not in said else {"warning"} if not ok else set()
        if ("error" in ours) != ("error" in theirs) or ("error" not in theirs and ours != theirs):
            differ.append((text, said, [p.message for p in problems]))
    assert not differ, differ
