"""The real Puppet and Facter, run in child processes for puppet-vscode's own messages (no pygls here;
the handlers are server/lsp/custom.py, the messages docs/messages.md).

puppet-editor-services answers these messages from Puppet loaded into its own Ruby process (or its
"sidecar"); we have no Ruby in the server, so each answer that needs Puppet comes from a child process of
the installed tools, started with asyncio (the server's event loop never waits on it), bounded in time
(the whole process group is killed at the deadline) and answered with a sentence that says what went wrong
when the tool is missing, fails or is too slow -- never a traceback, never a hang:

* :func:`tool_version` -- ``puppet --version`` / ``facter --version``, asked once and kept
  (:class:`Versions`);
* :func:`puppet_resource` -- the manifest text ``puppet resource TYPE [TITLE]`` prints;
* :func:`node_graph` -- a manifest's catalog compiled by Puppet with a module path and facts, turned into
  its relationship graph, as puppet-vscode's node graph preview draws it (:data:`NODE_GRAPH_RUBY`);
(``puppet/fixDiagnosticErrors`` needs no Puppet: server/analysis/lint.py's ``fix_all``.)

Facter itself is run by server/analysis/facts.py (``FactSource.run_facter``, the one place facter is
run); the language server's messages reuse that run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from puppet_xpp.server.analysis.facts import FactValues

VERSION_TIMEOUT = 20.0  # seconds: `puppet --version` loads Puppet's settings, 1-2 s
RESOURCE_TIMEOUT = 60.0  # `puppet resource package` lists every installed package
COMPILE_TIMEOUT = 30.0  # a catalog compile of one manifest with its modules


class ToolError(Exception):
    """A tool could not answer: the message says which tool and why, in a sentence for the user."""


@dataclass(frozen=True)
class Finished:
    """What a child process left: its exit status and its output (decoded as UTF-8, bad bytes kept)."""

    returncode: int
    stdout: str
    stderr: str

    def reason(self) -> str:
        """The last line of standard error (Puppet's ``Error: ...``), else the exit status."""
        lines = [line.strip() for line in self.stderr.splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("Error:")]
        return (errors or lines or [f"exit status {self.returncode}"])[-1]


def _kill(proc: asyncio.subprocess.Process) -> None:
    """The child and everything it started (it leads its own process group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


async def run_tool(
    argv: Sequence[str],
    *,
    timeout: float,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    what: str | None = None,
) -> Finished:
    """Run ``argv`` (its program found on PATH) to its end or ``timeout`` seconds, without blocking the
    event loop; ``what`` names it in messages (default: the start of the command line).  Raises
    ToolError when the program is not installed, cannot start or is too slow (then it and its children
    are killed); a cancelled request kills them too."""
    program = shutil.which(argv[0])
    if program is None:
        raise ToolError(f"{argv[0]} is not installed (not found on PATH)")
    try:
        proc = await asyncio.create_subprocess_exec(
            program,
            *argv[1:],
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,  # a process group of its own: killed whole at the deadline
        )
    except OSError as e:
        raise ToolError(f"could not run {argv[0]}: {e.strerror or e}") from None
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin), timeout)
    except TimeoutError:
        _kill(proc)
        await proc.wait()
        name = what or f"`{' '.join(argv[:3])}`"
        raise ToolError(f"{name} did not finish within {timeout:g} s and was stopped") from None
    except BaseException:  # cancelled: the child must not outlive the request
        _kill(proc)
        raise
    return Finished(
        proc.returncode if proc.returncode is not None else -1,
        out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
    )


# ----------------------------------------------------------------------------------------------- versions


async def tool_version(tool: str, timeout: float = VERSION_TIMEOUT) -> str:
    """``tool --version``'s first line (``7.23.0``); ToolError saying why there is none."""
    done = await run_tool([tool, "--version"], timeout=timeout)
    first = next((line.strip() for line in done.stdout.splitlines() if line.strip()), "")
    if done.returncode != 0 or not first:
        raise ToolError(f"`{tool} --version` failed: {done.reason()}")
    return first


@dataclass(eq=False)
class Versions:
    """The installed tools' versions, each asked once (concurrent askers share the one child process) and
    kept: they do not change under a running server.  An absent or broken tool is kept as its reason."""

    _asked: dict[str, asyncio.Future[str]] = field(default_factory=dict)

    async def of(self, tool: str) -> str:
        """The version of ``tool``, or ``unavailable: <why>`` (a value the status bar can show)."""
        fut = self._asked.get(tool)
        if fut is None:
            fut = self._asked[tool] = asyncio.ensure_future(self._ask(tool))
        return await asyncio.shield(fut)

    @staticmethod
    async def _ask(tool: str) -> str:
        try:
            return await tool_version(tool)
        except ToolError as e:
            return f"unavailable: {e}"


@dataclass(eq=False)
class ToolState:
    """What puppet-vscode's messages keep for one server (its Session holds one): the tools' versions
    (asked once) and the facter run (one at a time; concurrent askers share it)."""

    versions: Versions = field(default_factory=Versions)
    facter: asyncio.Future[FactValues] | None = None
    facter_ended: float = 0.0  # time.monotonic() when the last facter run ended


# ----------------------------------------------------------------------------------------------- puppet resource


async def puppet_resource(typename: str, title: str | None = None, timeout: float = RESOURCE_TIMEOUT) -> str:
    """What ``puppet resource TYPENAME [TITLE]`` prints: the resources of the machine the server runs on,
    as manifest text.  ToolError with Puppet's own error line (an unknown type, a title it cannot find
    ...), or when Puppet is missing or too slow."""
    if not typename or typename.startswith("-"):
        raise ToolError(f"not a resource type name: {typename!r}")
    if title is not None and title.startswith("-"):
        raise ToolError(f"a title starting with '-' cannot be given to puppet resource: {title!r}")
    argv = ["puppet", "resource", typename, *([title] if title else []), "--color=false"]
    done = await run_tool(argv, timeout=timeout)
    if done.returncode != 0:
        raise ToolError(f"puppet resource {typename}: {done.reason()}")
    return done.stdout


# ----------------------------------------------------------------------------------------------- node graph

# Run by Puppet's Ruby with a JSON request on standard input ({code, modulepath, facts, node, dir}); prints
# one JSON object: {vertices: [{label}], edges: [{source, target}]} or {error}.  The catalog is what an
# agent would get (virtual and exported resources left out), made into the resources an agent would
# manage (to_ral, finalize) with the resources their types generate before a run (an agent's transaction
# does the same first: concat's concat_file generates its File), and their relationship graph (explicit
# relationships, autorequires, containment through the classes' anchor "whits") -- the graph an agent
# writes as expanded_relationships.dot with --graph.  The anchors, schedules and filebuckets Puppet adds
# are not the manifest's and are removed with their edges, as puppet-editor-services' node graph does.
# The facts are the node's ($facts) and its top-scope variables, with what an agent adds to facter's
# (clientversion, clientcert ...: modules such as concat read them).
NODE_GRAPH_RUBY = r"""
require 'json'
request = JSON.parse($stdin.read)
begin
  require 'puppet'
  dir = request['dir']
  Puppet.initialize_settings(['--confdir', dir, '--codedir', dir, '--vardir', File.join(dir, 'var'),
                              '--logdir', dir, '--rundir', dir, '--environmentpath', dir])
  Puppet[:code] = request['code']
  env = Puppet::Node::Environment.create(:production, request['modulepath'])
  answer = Puppet.override({environments: Puppet::Environments::Static.new(env), current_environment: env}, 'node graph') do
    facts = Puppet::Node::Facts.new(request['node'], request['facts'])
    facts.add_local_facts  # clientcert, clientversion ...: what an agent adds to facter's facts
    node = Puppet::Node.new(request['node'], environment: env, facts: facts)
    node.merge(facts.values)  # the top-scope variables ($osfamily, $clientversion); $facts is node.facts
    catalog = Puppet::Parser::Compiler.compile(node).filter { |r| r.virtual? }
    ral = catalog.to_ral
    ral.finalize
    prioritizer = Puppet::Graph::SequentialPrioritizer.new
    generator = Puppet::Transaction::AdditionalResourceGenerator.new(ral, nil, prioritizer)
    ral.vertices.each { |resource| generator.generate_additional_resources(resource) }
    graph = Puppet::Graph::RelationshipGraph.new(prioritizer)
    graph.populate_from(ral)
    added = [Puppet::Type::Whit, Puppet::Type::Schedule, Puppet::Type::Filebucket]
    graph.vertices.select { |v| added.any? { |k| v.is_a?(k) } }.each { |v| graph.remove_vertex!(v) }
    {'vertices' => graph.vertices.map { |v| {'label' => v.to_s} },
     'edges' => graph.edges.map { |e| {'source' => e.source.to_s, 'target' => e.target.to_s} }}
  end
rescue Exception => e
  answer = {'error' => e.message.to_s}
end
$stdout.write(JSON.generate(answer))
"""


def puppet_ruby() -> str:
    """The Ruby that runs the installed Puppet: the interpreter named by the ``puppet`` launcher's ``#!``
    line (Debian's ``/usr/bin/ruby``, a gem's), else Puppet's own packaged Ruby, else ``ruby``."""
    launcher = shutil.which("puppet")
    if launcher is not None:
        try:
            with open(launcher, "rb") as f:
                first = f.readline(512).decode("utf-8", "replace").strip()
        except OSError:
            first = ""
        if first.startswith("#!"):
            words = first[2:].split()
            if words and os.path.basename(words[0]).startswith("ruby"):
                return words[0]
            if len(words) > 1 and os.path.basename(words[0]) == "env" and words[1].startswith("ruby"):
                return words[1]
    packaged = "/opt/puppetlabs/puppet/bin/ruby"
    return packaged if os.access(packaged, os.X_OK) else "ruby"


def node_name(facts: Mapping[str, Any]) -> str:
    """The node the catalog is compiled for: the facts' fully qualified name (``networking.fqdn``, the
    legacy ``fqdn``), else ``localhost``."""
    networking = facts.get("networking")
    for name in (networking.get("fqdn") if isinstance(networking, dict) else None, facts.get("fqdn")):
        if isinstance(name, str) and name:
            return name
    return "localhost"


@dataclass(frozen=True)
class NodeGraph:
    """puppet-vscode's node graph: the vertices' labels (``File[/etc/motd]``) and the edges between them,
    or why there is none."""

    vertices: list[dict[str, str]]
    edges: list[dict[str, str]]
    error: str | None = None


NO_RESOURCES = "The catalog has no resources to draw (does the manifest declare or include any?)"


async def node_graph(
    code: str,
    modulepath: Sequence[str],
    facts: Mapping[str, Any],
    timeout: float = COMPILE_TIMEOUT,
) -> NodeGraph:
    """The relationship graph of the catalog Puppet compiles from the manifest text ``code`` with the
    module path ``modulepath`` and the node's ``facts`` (see :data:`NODE_GRAPH_RUBY`).  Compile errors
    are Puppet's own messages (with their line and column); a missing Puppet, a timeout or an answer that
    is not JSON are said as such.  Puppet's settings and state go to a temporary directory, removed after."""
    if shutil.which("puppet") is None:
        return NodeGraph(
            [], [], "Puppet could not compile the catalog: puppet is not installed (not found on PATH)"
        )
    with tempfile.TemporaryDirectory(prefix="puppet-xpp-graph-") as tmp:
        request = {
            "code": code,
            "modulepath": list(modulepath),
            "facts": dict(facts),
            "node": node_name(facts),
            "dir": tmp,
        }
        try:
            done = await run_tool(
                [puppet_ruby(), "-e", NODE_GRAPH_RUBY],
                timeout=timeout,
                stdin=json.dumps(request, default=str).encode(),
                cwd=tmp,
                what="the catalog compile",
            )
        except ToolError as e:
            return NodeGraph([], [], f"Puppet could not compile the catalog: {e}")
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        return NodeGraph([], [], f"Puppet could not compile the catalog: {done.reason()}")
    if not isinstance(answer, dict):
        return NodeGraph([], [], "Puppet's node graph answer was not a JSON object")
    if answer.get("error"):
        return NodeGraph([], [], f"Puppet could not compile the catalog: {answer['error']}")
    vertices = [v for v in answer.get("vertices") or [] if isinstance(v, dict)]
    edges = [e for e in answer.get("edges") or [] if isinstance(e, dict)]
    if not vertices:
        return NodeGraph([], [], NO_RESOURCES)
    return NodeGraph(vertices, edges)


# ----------------------------------------------------------------------------------------------- lint fixes
