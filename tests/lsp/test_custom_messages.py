"""puppet-vscode's own messages (issue 29 item 1), sent over ``--tcp`` exactly as puppet-vscode sends them
(its src/messages.ts, src/views/facts.ts, src/views/puppetfile.ts, src/feature/PuppetNodeGraphFeature.ts,
PuppetResourceFeature.ts and FormatDocumentFeature.ts: the method names and the parameters' shapes), and
checked against the real tools: ``puppet --version``/``facter --version``, facter's own facts, ``puppet
resource`` run by the test, the relationship graph Puppet itself writes (``puppet apply --noop --graph``)
for the node graph, puppet-lint ``--fix`` for Format Document, and the Puppetfile's text read by the
incumbent's rules (puppetfile-resolver's R10KEval parser) for the dependencies.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from puppet_xpp.server.analysis import puppet_tools
from tests.lsp.test_lsp_e2e import REPO, SERVER

HAVE_PUPPET = shutil.which("puppet") is not None and shutil.which("facter") is not None
needs_puppet = pytest.mark.skipif(not HAVE_PUPPET, reason="Puppet and Facter are not installed")
needs_puppet_lint = pytest.mark.skipif(
    shutil.which("puppet-lint") is None, reason="puppet-lint is not installed"
)
CORPUS = "/usr/share/puppet/modules"


class Client:
    """A JSON-RPC client on a TCP socket, as puppet-vscode's ``tcp`` connection is: it answers the
    server's own requests (configuration, registrations, progress) with null, keeps notifications."""

    def __init__(self, port: int) -> None:
        for _ in range(200):
            try:
                self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("the server did not listen")
        self.buf = b""
        self.next_id = 0
        self.responses: dict[int, dict[str, Any]] = {}
        self.order: list[int] = []  # the ids of the responses, in the order they came

    def send(self, msg: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def start(self, method: str, params: Any = None) -> int:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method}
        if params is not None:  # RequestType0: puppet-vscode sends no params at all
            msg["params"] = params
        self.send(msg)
        return self.next_id

    def _read(self, deadline: float) -> None:
        while b"\r\n\r\n" not in self.buf:
            self._recv(deadline)
        head, _, rest = self.buf.partition(b"\r\n\r\n")
        length = int(re.search(rb"Content-Length: *(\d+)", head, re.I).group(1))  # type: ignore[union-attr]
        while len(rest) < length:
            self.buf = head + b"\r\n\r\n" + rest
            self._recv(deadline)
            head, _, rest = self.buf.partition(b"\r\n\r\n")
        body, self.buf = rest[:length], rest[length:]
        msg = json.loads(body)
        if "method" in msg and "id" in msg:  # the server asks: answered as a client with nothing to say
            self.send({"id": msg["id"], "result": None})
        elif "id" in msg:
            self.responses[msg["id"]] = msg
            self.order.append(msg["id"])

    def _recv(self, deadline: float) -> None:
        self.sock.settimeout(max(0.1, deadline - time.time()))
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self.buf += chunk

    def wait(self, rid: int, timeout: float = 60) -> dict[str, Any]:
        deadline = time.time() + timeout
        while rid not in self.responses:
            if time.time() > deadline:
                pytest.fail(f"no answer to request {rid} within {timeout} s")
            self._read(deadline)
        return self.responses[rid]

    def request(self, method: str, params: Any = None, timeout: float = 60) -> Any:
        msg = self.wait(self.start(method, params), timeout)
        assert "error" not in msg, msg
        return msg["result"]


def serve(env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [*SERVER, "--tcp", f"127.0.0.1:{port}"],
        env=dict(env if env is not None else os.environ, PYTHONPATH=REPO),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return proc, port


def initialize(client: Client, root: Path) -> None:
    client.request(
        "initialize",
        {"processId": None, "rootUri": root.as_uri(), "capabilities": {}, "workspaceFolders": None},
    )
    client.notify("initialized", {})


# an environment: its own module (demo), the corpus on its module path (concat: a module with Ruby types)
DEMO = """class demo (String $dir) {
  file { $dir: ensure => directory }
  file { "${dir}/motd": ensure => file, content => "hello\\n" }
  -> exec { 'demo refresh': command => '/bin/true', refreshonly => true }
}
"""
GRAPH = """class { 'demo': dir => '@OUT@' }
notify { "family ${facts['os']['family']}": require => Class['demo'] }
concat { '@OUT@/conf': ensure => present }
concat::fragment { 'head': target => '@OUT@/conf', content => "x\\n", order => '01' }
service { 'puppet-xpp-no-such-service': ensure => running, subscribe => File['@OUT@/motd'] }
Notify["family ${facts['os']['family']}"] -> Service['puppet-xpp-no-such-service']
"""
# r10k's documented forms (a Forge module with and without a version, :latest, Git, local)
PUPPETFILE = """forge 'https://forge.puppet.com'

mod 'puppetlabs/stdlib', '9.4.1'
mod 'puppetlabs-concat'
mod 'puppetlabs/apt', :latest
mod 'ntp',
  :git => 'https://github.com/example/puppet-ntp.git',
  :tag => 'v1.0.0'
mod 'site', :local => true
mod 'puppetlabs-inifile',
  '6.1.0'
"""
# problems puppet-lint fixes: double-quoted strings, arrow alignment, a trailing space, an unquoted mode
LINTED = """class demo::lint {
  file { "/tmp/puppet-xpp-lint":
    ensure => file,
    mode => '0644',
    content => "plain",
  }@SPACES@
}
""".replace("@SPACES@", "  ")


@pytest.fixture(scope="module")
def env_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("custom-env")
    (root / "environment.conf").write_text(f"modulepath = modules:{CORPUS}\n")
    (root / "modules/demo/manifests").mkdir(parents=True)
    (root / "modules/demo/manifests/init.pp").write_text(DEMO)
    (root / "manifests").mkdir()
    (root / "manifests/graph.pp").write_text(GRAPH.replace("@OUT@", str(root / "out")))
    (root / "modules/demo/manifests/lint.pp").write_text(LINTED)
    (root / "Puppetfile").write_text(PUPPETFILE)
    return root


@pytest.fixture(scope="module")
def client(env_root: Path) -> Iterator[Client]:
    proc, port = serve()
    try:
        c = Client(port)
        initialize(c, env_root)
        yield c
        c.sock.close()
    finally:
        proc.kill()
        proc.wait()


def did_open(client: Client, path: Path, language_id: str, text: str | None = None) -> str:
    uri = path.as_uri()
    doc = {"uri": uri, "languageId": language_id, "version": 1, "text": text or path.read_text()}
    client.notify("textDocument/didOpen", {"textDocument": doc})
    return uri


def run(argv: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False, **kw)


# ----------------------------------------------------------------------------------------------- getVersion


@needs_puppet
def test_get_version_is_the_installed_tools_and_facts_load(client: Client) -> None:
    from importlib.metadata import version

    first = client.request("puppet/getVersion")
    assert set(first) == {
        "languageServerVersion",
        "puppetVersion",
        "facterVersion",
        "factsLoaded",
        "functionsLoaded",
        "typesLoaded",
        "classesLoaded",
    }
    assert first["puppetVersion"] == run(["puppet", "--version"]).stdout.strip()
    assert first["facterVersion"] == run(["facter", "--version"]).stdout.strip()
    assert first["languageServerVersion"] == version("puppet-xpp")
    assert first["functionsLoaded"] is True and first["typesLoaded"] is True
    # puppet-vscode polls every second until everything is loaded (handler.ts: 30 tries)
    for _ in range(120):
        details = client.request("puppet/getVersion")
        if all(details[k] for k in ("factsLoaded", "functionsLoaded", "typesLoaded", "classesLoaded")):
            break
        time.sleep(0.5)
    else:
        pytest.fail(f"not everything loaded within 60 s: {details}")


# ----------------------------------------------------------------------------------------------- getFacts


@needs_puppet
def test_get_facts_is_facters_own(client: Client) -> None:
    answer = client.request("puppet/getFacts", timeout=180)
    assert set(answer) == {"facts"}
    facts = answer["facts"]
    own = json.loads(run(["facter", "--json", "--show-legacy"]).stdout)
    assert set(facts) == set(own)  # every fact, the legacy ones too (the incumbent's Facter.to_hash)
    for stable in ("os", "kernel", "kernelrelease", "hostname", "architecture", "osfamily", "processorcount"):
        assert facts[stable] == own[stable], stable


# ----------------------------------------------------------------------------------------------- getResource


@needs_puppet
def test_get_resource_is_what_puppet_resource_prints(client: Client) -> None:
    # PuppetResourceFeature.ts sends {typename} (the title is in PuppetResourceRequestParams, never set)
    for params, argv in (
        ({"typename": "user"}, ["puppet", "resource", "user"]),
        ({"typename": "user", "title": "root"}, ["puppet", "resource", "user", "root"]),
    ):
        answer = client.request("puppet/getResource", params)
        printed = run(argv)
        assert printed.returncode == 0
        assert answer == {"data": printed.stdout}, params
        assert printed.stdout.startswith(f"{params['typename']} {{ '")
    bad = client.request("puppet/getResource", {"typename": "puppet_xpp_no_such_type"})
    own = run(["puppet", "resource", "puppet_xpp_no_such_type"])
    assert own.returncode != 0
    said = re.sub(r"\x1b\[[0-9;]*m", "", own.stderr).strip().splitlines()[-1]  # Puppet's colours
    assert said.startswith("Error: ") and set(bad) == {"error"} and said in bad["error"]
    assert client.request("puppet/getResource", {}) == {
        "error": "puppet/getResource needs a resource type name (typename)"
    }


# ----------------------------------------------------------------------------------------------- compileNodeGraph


def dot_graph(path: Path) -> tuple[set[str], set[tuple[str, str]]]:
    """Vertices and edges of a graph Puppet wrote (``--graph``), less the vertices Puppet adds to every
    catalog (the containers' anchors ``Whit[...]``, the default schedules and filebucket) with their
    edges: the incumbent's node graph removes exactly those (puppet_parser_helper.rb)."""
    text = path.read_text()
    vertices = set(re.findall(r'^\s*"((?:[^"\\]|\\.)*)" \[', text, re.M))
    edges = set(re.findall(r'^\s*"((?:[^"\\]|\\.)*)" -> "((?:[^"\\]|\\.)*)" \[', text, re.M))

    def kept(v: str) -> bool:
        return not v.startswith(("Whit[", "Schedule[", "Filebucket["))

    return {v for v in vertices if kept(v)}, {(a, b) for a, b in edges if kept(a) and kept(b)}


@needs_puppet
def test_compile_node_graph_is_puppets_relationship_graph(
    client: Client, env_root: Path, tmp_path: Path
) -> None:
    manifest = env_root / "manifests/graph.pp"
    uri = did_open(client, manifest, "puppet")
    # PuppetNodeGraphFeature.ts: sendRequest(PuppetNodeGraphRequest.type, {external: uri})
    rid = client.start("puppet/compileNodeGraph", {"external": uri})
    # the compile runs in a child process: the server answers other requests meanwhile
    other = client.start("puppet/getVersion")
    client.wait(rid, timeout=120)
    assert client.order.index(other) < client.order.index(rid), "the compile blocked the server"
    answer = client.responses[rid]["result"]
    assert "error" not in answer, answer
    assert set(answer) == {"vertices", "edges"}
    got_vertices = {v["label"] for v in answer["vertices"]}
    got_edges = {(e["source"], e["target"]) for e in answer["edges"]}
    assert all(set(v) == {"label"} for v in answer["vertices"])
    assert all(set(e) == {"source", "target"} for e in answer["edges"])

    # the same manifest, module path and machine: Puppet's own expanded relationship graph
    graphs = tmp_path / "graphs"
    state = tmp_path / "state"
    settings = {"confdir": state, "vardir": state / "var", "codedir": state, "logdir": state, "rundir": state}
    argv = ["puppet", "apply", "--noop", "--graph", "--graphdir", str(graphs)]
    argv += [f"--{name}={value}" for name, value in settings.items()]
    done = run([*argv, "--modulepath", f"{env_root / 'modules'}:{CORPUS}", str(manifest)])
    assert done.returncode in (0, 2), done.stderr
    vertices, edges = dot_graph(graphs / "expanded_relationships.dot")
    assert got_vertices == vertices
    assert got_edges == edges
    out = env_root / "out"
    # what the graph must show: an explicit chain, an autorequire (the parent directory), a subscribe, a
    # relationship to a class (expanded to its resources), and a module type from the corpus (concat)
    assert (f"File[{out}/motd]", "Exec[demo refresh]") in got_edges
    assert (f"File[{out}]", f"File[{out}/motd]") in got_edges
    assert (f"File[{out}/motd]", "Service[puppet-xpp-no-such-service]") in got_edges
    assert (f"Concat_file[{out}/conf]", f"File[{out}/conf]") in got_edges
    family = json.loads(run(["facter", "--json", "os.family"]).stdout)["os.family"]
    assert f"Notify[family {family}]" in got_vertices  # the facts reached the compile


@needs_puppet
def test_compile_node_graph_is_of_the_editors_text(client: Client, env_root: Path) -> None:
    path = env_root / "manifests/unsaved.pp"
    path.write_text("class only_a_definition {}\n")
    uri = did_open(client, path, "puppet", "notify { 'typed, not saved': }\n")
    answer = client.request("puppet/compileNodeGraph", {"external": uri}, 120)
    assert answer == {"vertices": [{"label": "Notify[typed, not saved]"}], "edges": []}


@needs_puppet
def test_compile_node_graph_errors(client: Client, env_root: Path) -> None:
    bad = env_root / "manifests/bad.pp"
    bad.write_text("class {\n")
    answer = client.request("puppet/compileNodeGraph", {"external": did_open(client, bad, "puppet")}, 120)
    own = run(["puppet", "parser", "validate", str(bad)])
    assert set(answer) == {"error"} and "Syntax error" in answer["error"] and "Syntax error" in own.stderr
    empty = env_root / "manifests/empty.pp"
    empty.write_text("class nothing_declared {}\n")
    answer = client.request("puppet/compileNodeGraph", {"external": did_open(client, empty, "puppet")}, 120)
    assert answer == {"error": puppet_tools.NO_RESOURCES}
    answer = client.request("puppet/compileNodeGraph", {"external": (env_root / "Puppetfile").as_uri()})
    assert set(answer) == {"error"}


# ----------------------------------------------------------------------------------------------- getDependencies


def test_get_dependencies_of_the_puppetfile(client: Client, env_root: Path) -> None:
    # views/puppetfile.ts: opens the workspace's Puppetfile, then sends {uri}
    uri = did_open(client, env_root / "Puppetfile", "puppetfile")
    answer = client.request("puppetfile/getDependencies", {"uri": uri})
    # the Forge modules only (puppetfile-resolver: module_type == :forge), name/owner from the title,
    # version "=X" for a version, "latest" for none or :latest, the 0-based line of each `mod`
    expected = [
        ("stdlib", "puppetlabs/stdlib", "puppetlabs", "=9.4.1", 2, 2),
        ("concat", "puppetlabs-concat", "puppetlabs", "latest", 3, 3),
        ("apt", "puppetlabs/apt", "puppetlabs", "latest", 4, 4),
        ("inifile", "puppetlabs-inifile", "puppetlabs", "=6.1.0", 9, 10),
    ]
    assert answer == {
        "dependencies": [
            {
                "name": name,
                "title": title,
                "owner": owner,
                "version": version,
                "start_line": start,
                "end_line": end,
                "startLine": start,
                "endLine": end,
            }
            for name, title, owner, version, start, end in expected
        ]
    }
    lines = PUPPETFILE.splitlines()
    for _name, title, _owner, _version, start, _end in expected:
        assert lines[start].startswith(f"mod '{title}'")
    manifest = (env_root / "manifests/graph.pp").as_uri()
    assert set(client.request("puppetfile/getDependencies", {"uri": manifest})) == {"error"}


# ----------------------------------------------------------------------------------------------- fixDiagnosticErrors


@needs_puppet_lint
def test_fix_diagnostic_errors_is_puppet_lint_fix(client: Client, env_root: Path, tmp_path: Path) -> None:
    path = env_root / "modules/demo/manifests/lint.pp"
    uri = did_open(client, path, "puppet")
    # FormatDocumentFeature.ts: {documentUri, alwaysReturnContent: false}
    answer = client.request("puppet/fixDiagnosticErrors", {"documentUri": uri, "alwaysReturnContent": False})
    copy = tmp_path / "modules/demo/manifests/lint.pp"
    copy.parent.mkdir(parents=True)
    copy.write_text(LINTED)
    done = run(["puppet-lint", "--fix", "modules/demo/manifests/lint.pp"], cwd=tmp_path)
    fixed = len(re.findall(r"^FIXED: ", done.stdout, re.M))
    assert fixed > 0 and copy.read_text() != LINTED
    assert answer == {"documentUri": uri, "fixesApplied": fixed, "newContent": copy.read_text()}

    clean = env_root / "modules/demo/manifests/clean.pp"
    clean.write_text(copy.read_text().replace("class demo::lint", "class demo::clean"))
    curi = did_open(client, clean, "puppet")
    assert client.request(
        "puppet/fixDiagnosticErrors", {"documentUri": curi, "alwaysReturnContent": False}
    ) == {
        "documentUri": curi,
        "fixesApplied": 0,
    }
    assert client.request(
        "puppet/fixDiagnosticErrors", {"documentUri": curi, "alwaysReturnContent": True}
    ) == {
        "documentUri": curi,
        "fixesApplied": 0,
        "newContent": clean.read_text(),
    }


# ----------------------------------------------------------------------------------------------- others


def test_unknown_puppet_message_is_method_not_found(client: Client) -> None:
    msg = client.wait(client.start("puppet/noSuchMessage", {}))
    assert msg["error"]["code"] == -32601


@needs_puppet  # (facter, run by the test, writes the facts file)
def test_without_puppet_each_message_says_why(env_root: Path, tmp_path: Path) -> None:
    """A machine without Puppet and Facter: clear values and errors, never a crash or a hang."""
    env = dict(os.environ, PATH=str(tmp_path))  # nothing to run there
    proc, port = serve(env)
    try:
        c = Client(port)
        initialize(c, env_root)
        details = c.request("puppet/getVersion")
        assert details["puppetVersion"] == "unavailable: puppet is not installed (not found on PATH)"
        assert details["facterVersion"] == "unavailable: facter is not installed (not found on PATH)"
        assert details["factsLoaded"] is False
        facts = c.request("puppet/getFacts")
        assert facts["facts"] == {} and "facter" in facts["error"]
        # the facts file the user sets (facter's output, made elsewhere) answers without facter
        own = run(["facter", "--json"]).stdout
        (tmp_path / "node.json").write_text(own)
        settings = {"puppet": {"facts": {"file": str(tmp_path / "node.json")}}}
        c.notify("workspace/didChangeConfiguration", {"settings": settings})
        assert c.request("puppet/getFacts") == {"facts": json.loads(own)}
        assert c.request("puppet/getVersion")["factsLoaded"] is True
        assert c.request("puppet/getResource", {"typename": "user"}) == {
            "error": "puppet is not installed (not found on PATH)"
        }
        uri = did_open(c, env_root / "manifests/graph.pp", "puppet")
        graph = c.request("puppet/compileNodeGraph", {"external": uri})
        assert set(graph) == {"error"} and "not installed" in graph["error"]
        c.sock.close()
    finally:
        proc.kill()
        proc.wait()


@needs_puppet
def test_a_compile_past_its_time_is_stopped(tmp_path: Path) -> None:
    """The child process is killed at the deadline (with its children) and the answer says so."""
    started = time.monotonic()
    graph = asyncio.run(puppet_tools.node_graph("notify { 'x': }", [], {}, timeout=0.5))
    assert time.monotonic() - started < 5
    assert graph.error is not None and "did not finish within 0.5 s" in graph.error
    assert run(["pgrep", "-f", "Puppet::Graph::RelationshipGraph"]).stdout == ""
