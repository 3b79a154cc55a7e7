"""Find references, document highlight, rename and call hierarchy end to end (pytest-lsp, VS Code's
capabilities) on a small environment written by the tests.

Expected references are read off the workspace text by the tests themselves (every place the name is
written), and after a rename Puppet itself judges the result: ``puppet apply --noop --strict_variables``
compiles the environment's catalog (every include, resource type, function, type alias, qualified
variable and Hiera key must resolve) and our validator, whose module-location rules equal Puppet's,
reports no location error.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import time

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = [sys.executable, "-c", "import sys; from puppet_xpp.server.cli.main import main; sys.exit(main())"]
pytestmark = pytest.mark.asyncio(loop_scope="module")

FILES = {
    "environment.conf": "modulepath = modules:$basemodulepath\n",
    "hiera.yaml": "---\nversion: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n",
    "data/common.yaml": "---\nmymod::app::port: 8080\n'mymod::app::user': deploy\nother::x: 1\n",
    "manifests/site.pp": (
        "node default {\n"
        "  class { 'mymod::app': port => 8080 }\n"
        "  include 'mymod::app', mymod::db\n"
        "  include other\n"
        "}\n"
        "Class['mymod::app'] -> Class['mymod::db']\n"
    ),
    "modules/mymod/manifests/init.pp": "class mymod {\n  contain [mymod::app, 'mymod::db']\n}\n",
    "modules/mymod/manifests/app.pp": (
        "# @param port the port\n"
        "class mymod::app (\n"
        "  Mymod::Port $port = 80,\n"
        "  String $user = 'app',\n"
        ") inherits mymod::params {\n"
        '  $url = "http://localhost:${port}/"\n'
        "  mymod::vhost { 'main': port => $port, docroot => $url }\n"
        "  Mymod::Vhost['main'] -> File['/tmp/x']\n"
        "  $n = mymod::double($port)\n"
        "  $m = $port.mymod::double\n"
        "  Mymod::Vhost <| |>\n"
        "  file { '/tmp/x': content => $user }\n"
        "}\n"
    ),
    "modules/mymod/manifests/params.pp": "class mymod::params {\n  $base = '/srv'\n}\n",
    "modules/mymod/manifests/db.pp": (
        "class mymod::db {\n"
        "  require mymod::app\n"
        '  notice("port=${mymod::app::port} user=${::mymod::app::user}")\n'
        "}\n"
    ),
    "modules/mymod/manifests/vhost.pp": (
        "define mymod::vhost (\n"
        "  Mymod::Port $port,\n"
        "  String $docroot = '/',\n"
        ") {\n"
        '  file { "/etc/${title}": content => "${docroot}:${port}" }\n'
        "}\n"
    ),
    "modules/mymod/functions/double.pp": "function mymod::double(Integer $x) >> Integer {\n  $x * 2\n}\n",
    "modules/mymod/types/port.pp": "type Mymod::Port = Integer[1, 65535]\n",
    "modules/mymod/lib/puppet/functions/mymod/rfn.rb": (
        "Puppet::Functions.create_function(:'mymod::rfn') do\n"
        "  dispatch :rfn do\n    param 'Integer', :x\n  end\n\n  def rfn(x)\n    x + 1\n  end\nend\n"
    ),
    "modules/mymod/manifests/util.pp": "class mymod::util {\n  $v = mymod::rfn(1)\n  notice(mymod::rfn(2))\n}\n",
    "modules/other/manifests/init.pp": "class other {\n  include mymod::app\n  contain mymod\n}\n",
}


def write_files(env: str, files: dict[str, str]) -> None:
    """Write ``files`` (relative path -> text) under ``env``."""
    for rel, text in files.items():
        p = os.path.join(env, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)


def build_workspace(root) -> str:
    env = os.path.join(str(root), "production")
    write_files(env, FILES)
    return env


def _uri(path):
    return "file://" + path


def _path(uri):
    return uri[len("file://") :]


def source_files(env) -> list:
    out = []
    for d, _dirs, files in os.walk(env):
        out.extend(os.path.join(d, f) for f in files if f.endswith((".pp", ".yaml")) and f != "hiera.yaml")
    return sorted(out)


def occurrences(env, pattern) -> set:
    """(relative path, line, column) of every match of ``pattern`` (group 1 = the name) in the sources."""
    out = set()
    for p in source_files(env):
        with open(p, encoding="utf-8") as f:
            for i, line in enumerate(f.read().splitlines()):
                for m in re.finditer(pattern, line):
                    out.add((os.path.relpath(p, env), i, m.start(1)))
    return out


def name_pattern(name: str) -> str:
    """A class/type/function name written anywhere (bare, quoted, capitalised), not as a longer name's part
    and not as the prefix of a qualified variable or Hiera key."""
    return r"(?<![\w:])(?:::)?(" + re.escape(name) + r")(?![\w]|::)"


def locs(env, result) -> set:
    return {
        (os.path.relpath(_path(x.uri), env), x.range.start.line, x.range.start.character)
        for x in result or []
    }


# ----------------------------------------------------------------------------------------------- Puppet


def puppet_compile(env) -> str:
    """Compile the environment's catalog with Puppet (noop; unknown variables are errors); returns the
    output, and fails the test on an evaluation error."""
    puppet = shutil.which("puppet")
    if puppet is None:
        if os.environ.get("CI"):
            pytest.fail("puppet is not installed (bash .ci/install)")
        pytest.skip("puppet is not installed")
    base = os.path.dirname(env)
    cmd = [
        puppet,
        "apply",
        "--noop",
        "--strict_variables",
        "--color=false",
        f"--confdir={base}/conf",
        f"--vardir={base}/var",
        f"--codedir={base}/code",
        f"--hiera_config={base}/conf/hiera.yaml",
        f"--environmentpath={base}",
        "--environment=production",
        os.path.join(env, "manifests", "site.pp"),
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    out = "\n".join(x for x in (p.stdout + p.stderr).splitlines() if "Facter:" not in x)
    assert p.returncode == 0 and "Error:" not in out, out
    return out


def location_errors(env) -> list:
    """Module-location diagnostics of our validator (its rules are Puppet's) for every manifest."""
    from puppet_xpp.grammar.parser import parse
    from puppet_xpp.grammar.validator import validate

    mp = (os.path.join(env, "modules"),)
    out = []
    for p in source_files(env):
        if not p.endswith(".pp"):
            continue
        res = parse(open(p, encoding="utf-8").read(), p)
        assert res.program is not None and not res.diagnostics, (p, res.diagnostics)
        for d in validate(res.program, file=p, modulepath=mp, manifest=os.path.join(env, "manifests")):
            if "LOCATION" in d.code:
                out.append((p, d.code, d.message))
    return out


# ----------------------------------------------------------------------------------------------- client


def apply_edit(edit: types.WorkspaceEdit) -> tuple:
    """Apply a WorkspaceEdit to disk as an editor does (edits, then file renames, in order); returns
    (edited paths, [(old, new)])."""
    edited, moved = [], []
    for ch in edit.document_changes or []:
        if isinstance(ch, types.RenameFile):
            old, new = _path(ch.old_uri), _path(ch.new_uri)
            assert not os.path.exists(new)
            os.makedirs(os.path.dirname(new), exist_ok=True)
            os.rename(old, new)
            moved.append((old, new))
            continue
        assert isinstance(ch, types.TextDocumentEdit), ch
        p = _path(ch.text_document.uri)
        lines = open(p, encoding="utf-8").read().split("\n")
        for e in sorted(ch.edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
            s, t = e.range.start, e.range.end
            assert s.line == t.line
            ln = lines[s.line]
            lines[s.line] = ln[: s.character] + e.new_text + ln[t.character :]
        with open(p, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        edited.append(p)
    return edited, moved


async def until(fn, timeout=60.0):
    deadline = time.monotonic() + timeout
    while True:
        v = await fn()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.05)


async def start(client: LanguageClient, env: str):
    await client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual_studio_code"),
            root_uri=_uri(env),
            workspace_folders=[types.WorkspaceFolder(uri=_uri(env), name="production")],
        )
    )

    async def indexed():
        r = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=""))
        names = {"mymod", "other", "mymod::app", "mymod::db", "mymod::vhost", "mymod::double", "Mymod::Port"}
        return r and names <= {s.name for s in r}

    await until(indexed)


def open_doc(client, path):
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=_uri(path), language_id="puppet", version=1, text=open(path, encoding="utf-8").read()
            )
        )
    )


def close_doc(client, path):
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=_uri(path)))
    )


def pos_of(path, needle, nth=0, delta=0) -> types.Position:
    lines = open(path, encoding="utf-8").read().splitlines()
    k = 0
    for i, line in enumerate(lines):
        j = line.find(needle)
        while j >= 0:
            if k == nth:
                return types.Position(line=i, character=j + delta)
            k += 1
            j = line.find(needle, j + 1)
    raise AssertionError(f"{needle!r} not in {path}")


async def references(client, path, needle, nth=0, delta=0, decl=True):
    return await client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=_uri(path)),
            position=pos_of(path, needle, nth, delta),
            context=types.ReferenceContext(include_declaration=decl),
        )
    )


async def rename(client, path, needle, new, nth=0, delta=0):
    return await client.text_document_rename_async(
        types.RenameParams(
            text_document=types.TextDocumentIdentifier(uri=_uri(path)),
            position=pos_of(path, needle, nth, delta),
            new_name=new,
        )
    )


def tell_server(client, edited, moved):
    """What an editor reports after applying an edit: renamed files, changed files on disk."""
    if moved:
        client.workspace_did_rename_files(
            types.RenameFilesParams(
                files=[types.FileRename(old_uri=_uri(o), new_uri=_uri(n)) for o, n in moved]
            )
        )
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(uri=_uri(p), type=types.FileChangeType.Changed)
                for p in edited
                if os.path.exists(p)
            ]
            + [types.FileEvent(uri=_uri(n), type=types.FileChangeType.Created) for _o, n in moved]
        )
    )


CONFIG = ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": REPO})


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return build_workspace(tmp_path_factory.mktemp("refs"))


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def client(lsp_client: LanguageClient, env):
    await start(lsp_client, env)
    yield
    await lsp_client.shutdown_session()


# ----------------------------------------------------------------------------------------------- references


@pytest.mark.parametrize(
    "name, file, needle",
    [
        ("mymod::app", "modules/mymod/manifests/db.pp", "mymod::app"),  # from a use
        ("mymod::app", "modules/mymod/manifests/app.pp", "mymod::app"),  # from the definition
        ("mymod::vhost", "modules/mymod/manifests/app.pp", "Mymod::Vhost"),
        ("mymod::port", "modules/mymod/types/port.pp", "Mymod::Port"),
        ("mymod::double", "modules/mymod/manifests/app.pp", "double"),
        ("mymod::db", "manifests/site.pp", "mymod::db"),
        ("mymod::params", "modules/mymod/manifests/app.pp", "mymod::params"),
    ],
)
async def test_references_every_form(client: LanguageClient, env, name, file, needle):
    path = os.path.join(env, file)
    open_doc(client, path)
    try:
        got = await references(client, path, needle)
        want = occurrences(env, "(?i)" + name_pattern(name))
        assert locs(env, got) == want
        # without the declaration: the definition's name is left out
        got = await references(client, path, needle, decl=False)
        defn = occurrences(env, r"(?i)^(?:class|define|function|type) (" + re.escape(name) + r")\b")
        assert len(defn) == 1
        assert locs(env, got) == want - defn
    finally:
        close_doc(client, path)


async def test_references_of_a_class_parameter(client: LanguageClient, env):
    """$port of mymod::app: its uses in the body (also "${port}" and $port.f), the named argument in
    class { 'mymod::app': port => }, $mymod::app::port elsewhere and the Hiera key; not vhost's port."""
    path = os.path.join(env, "modules/mymod/manifests/app.pp")
    open_doc(client, path)
    try:
        got = locs(env, await references(client, path, "$port", delta=1))
        app = "modules/mymod/manifests/app.pp"
        want = {
            (app, 2, 15),  # Mymod::Port $port
            (app, 5, 29),  # ${port}
            (app, 6, 34),  # port => $port (the value)
            (app, 8, 22),  # mymod::double($port)
            (app, 9, 8),  # $port.mymod::double
            ("manifests/site.pp", 1, 24),  # class { 'mymod::app': port => 8080 }
            ("modules/mymod/manifests/db.pp", 2, 17),  # ${mymod::app::port}
            ("data/common.yaml", 1, 0),  # mymod::app::port: 8080
        }
        assert got == want
        # a qualified use in another file finds the same set
        db = os.path.join(env, "modules/mymod/manifests/db.pp")
        assert locs(env, await references(client, db, "port}")) == want
    finally:
        close_doc(client, path)


async def test_references_of_define_parameter_and_local_variable(client: LanguageClient, env):
    vhost = os.path.join(env, "modules/mymod/manifests/vhost.pp")
    app = os.path.join(env, "modules/mymod/manifests/app.pp")
    open_doc(client, vhost)
    try:
        got = locs(env, await references(client, vhost, "$docroot", delta=1))
        assert got == {
            ("modules/mymod/manifests/vhost.pp", 2, 10),
            ("modules/mymod/manifests/vhost.pp", 4, 40),
            ("modules/mymod/manifests/app.pp", 6, 40),  # docroot => $url
        }
        got = locs(env, await references(client, app, "$url", delta=1))
        assert got == {("modules/mymod/manifests/app.pp", 5, 3), ("modules/mymod/manifests/app.pp", 6, 52)}
        fn = os.path.join(env, "modules/mymod/functions/double.pp")
        got = locs(env, await references(client, fn, "$x", delta=1))
        assert got == {
            ("modules/mymod/functions/double.pp", 0, 32),
            ("modules/mymod/functions/double.pp", 1, 3),
        }
    finally:
        close_doc(client, vhost)


async def test_document_highlight(client: LanguageClient, env):
    path = os.path.join(env, "modules/mymod/manifests/app.pp")
    open_doc(client, path)
    try:
        hl = await client.text_document_document_highlight_async(
            types.DocumentHighlightParams(
                text_document=types.TextDocumentIdentifier(uri=_uri(path)),
                position=pos_of(path, "$url", 0, 1),
            )
        )
        got = sorted((h.range.start.line, h.range.start.character, h.kind) for h in hl)
        assert got == [(5, 3, types.DocumentHighlightKind.Write), (6, 52, types.DocumentHighlightKind.Read)]
        hl = await client.text_document_document_highlight_async(
            types.DocumentHighlightParams(
                text_document=types.TextDocumentIdentifier(uri=_uri(path)),
                position=pos_of(path, "Mymod::Vhost"),
            )
        )
        assert sorted(h.range.start.line for h in hl) == [6, 7, 10]  # this file only
    finally:
        close_doc(client, path)


async def test_call_hierarchy(client: LanguageClient, env):
    path = os.path.join(env, "modules/mymod/manifests/app.pp")
    open_doc(client, path)
    try:
        items = await client.text_document_prepare_call_hierarchy_async(
            types.CallHierarchyPrepareParams(
                text_document=types.TextDocumentIdentifier(uri=_uri(path)),
                position=pos_of(path, "mymod::app"),
            )
        )
        assert [i.name for i in items] == ["mymod::app"]
        inc = await client.call_hierarchy_incoming_calls_async(
            types.CallHierarchyIncomingCallsParams(item=items[0])
        )
        callers = {(c.from_.name, len(c.from_ranges)) for c in inc}
        # node default (class {}, include), top level of site.pp (Class[...] ->), db, mymod, other
        assert callers == {("default", 2), ("site.pp", 1), ("mymod::db", 1), ("mymod", 1), ("other", 1)}
        out = await client.call_hierarchy_outgoing_calls_async(
            types.CallHierarchyOutgoingCallsParams(item=items[0])
        )
        assert {(c.to.name, len(c.from_ranges)) for c in out} == {
            ("mymod::params", 1),
            ("Mymod::Port", 1),
            ("mymod::vhost", 3),
            ("mymod::double", 2),
        }
    finally:
        close_doc(client, path)


async def test_rename_refusals(client: LanguageClient, env):
    app = os.path.join(env, "modules/mymod/manifests/app.pp")
    open_doc(client, app)
    try:
        for new, why in [
            ("Mymod::9x", "not a valid"),
            ("mymod::if", "not a valid"),
            ("mymod::db", "already defined"),
            ("nomod::app", "does not exist"),  # another module: only one that exists
        ]:
            with pytest.raises(Exception, match=why):
                await rename(client, app, "mymod::app", new)
        with pytest.raises(Exception, match="already exists"):
            await rename(client, app, "$port", "user", delta=1)
        with pytest.raises(Exception, match="not a valid"):
            await rename(client, app, "$port", "Port", delta=1)
        with pytest.raises(Exception, match="set by Puppet|not defined"):
            await client.text_document_prepare_rename_async(
                types.PrepareRenameParams(
                    text_document=types.TextDocumentIdentifier(uri=_uri(app)), position=pos_of(app, "File[")
                )
            )
        pr = await client.text_document_prepare_rename_async(
            types.PrepareRenameParams(
                text_document=types.TextDocumentIdentifier(uri=_uri(app)),
                position=pos_of(app, "mymod::app", 0, 3),
            )
        )
        assert (pr.range.start.line, pr.range.start.character, pr.range.end.character, pr.placeholder) == (
            1,
            6,
            16,
            "mymod::app",
        )
    finally:
        close_doc(client, app)


async def test_references_of_a_ruby_function(client: LanguageClient, env):
    """A function defined in Ruby (lib/puppet/functions): its uses, and its definition in the .rb file."""
    path = os.path.join(env, "modules/mymod/manifests/util.pp")
    open_doc(client, path)
    try:
        got = await references(client, path, "mymod::rfn")
        # the .rb definition is where the workspace index puts create_function (line 1)
        assert {(p, ln) for p, ln, _c in locs(env, got)} == {
            ("modules/mymod/manifests/util.pp", 1),
            ("modules/mymod/manifests/util.pp", 2),
            ("modules/mymod/lib/puppet/functions/mymod/rfn.rb", 0),
        }
        assert len(got) == 3
        got = await references(client, path, "mymod::rfn", decl=False)
        assert {p for p, _l, _c in locs(env, got)} == {"modules/mymod/manifests/util.pp"}
        with pytest.raises(Exception, match="defined in Ruby"):
            await rename(client, path, "mymod::rfn", "mymod::other_fn")
    finally:
        close_doc(client, path)


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def no_file_ops(lsp_client: LanguageClient, env):
    """A client that cannot rename files (no resource operations in its workspace-edit capabilities)."""
    caps = pytest_lsp.client_capabilities("visual_studio_code")
    caps.workspace.workspace_edit.resource_operations = []
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            root_uri=_uri(env),
            workspace_folders=[types.WorkspaceFolder(uri=_uri(env), name="production")],
        )
    )

    async def indexed():
        r = await lsp_client.workspace_symbol_async(types.WorkspaceSymbolParams(query="mymod::app"))
        return bool(r)

    await until(indexed)
    yield
    await lsp_client.shutdown_session()


async def test_rename_refused_without_file_renames(no_file_ops: LanguageClient, env):
    app = os.path.join(env, "modules/mymod/manifests/app.pp")
    open_doc(no_file_ops, app)
    try:
        with pytest.raises(Exception, match="cannot rename files"):
            await rename(no_file_ops, app, "mymod::app", "mymod::frontend")
        with pytest.raises(Exception, match="out of the module"):
            await rename(no_file_ops, app, "mymod::app", "other::app")
        # a parameter rename moves no file: still offered, as plain edits
        edit = await rename(no_file_ops, app, "$user", "owner", delta=1)
        paths = {os.path.relpath(_path(c.text_document.uri), env) for c in edit.document_changes}
        assert paths == {
            "modules/mymod/manifests/app.pp",
            "modules/mymod/manifests/db.pp",
            "data/common.yaml",
        }
    finally:
        close_doc(no_file_ops, app)
