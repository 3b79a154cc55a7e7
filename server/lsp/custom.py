"""puppet-vscode's own messages, with puppet-editor-services' names and shapes (docs/messages.md), so that
the extension's status bar, facts view, "Puppet Resource" command, node graph preview, Puppetfile view and
Format Document work against this server as against the incumbent.

The handlers are thin: the child processes of Puppet and Facter are server/analysis/puppet_tools.py (never
blocking the event loop, bounded in time), the facts are server/analysis/facts.py's (the facts file the
user set, else a facter run), the Puppetfile is read by server/analysis/puppetfile.py, the lint fixes
are our lint's (in the lint process).  A failure is an answer with an ``error`` (the incumbent's
``error`` fields), never a JSON-RPC error the extension would not show.

JSON-RPC lets a request without parameters leave ``params`` out, and puppet-vscode's parameterless
requests (``RequestType0``: getVersion, getFacts) do; pygls' generic request type for a method lsprotocol
does not know requires it, and drops such a message unanswered.  :func:`register_message_types` gives
these methods a request type of their own (``params`` optional, taken as the JSON sent: :func:`param`
reads it), in the table through which pygls finds a method's types.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import time
from typing import Any

import attrs
from lsprotocol import types

from puppet_xpp import __version__
from puppet_xpp.server.analysis import filekinds, puppet_tools, puppetfile
from puppet_xpp.server.analysis import lint as analysis_lint
from puppet_xpp.server.analysis.document import path_of_uri
from puppet_xpp.server.analysis.facts import FactValues
from puppet_xpp.server.analysis.workspace import file_context
from puppet_xpp.server.lsp import sync
from puppet_xpp.server.lsp.language_server import PuppetServer
from puppet_xpp.xpp.sources import read_source

log = logging.getLogger("puppet-xpp.lsp")

GET_VERSION = "puppet/getVersion"
GET_FACTS = "puppet/getFacts"
GET_RESOURCE = "puppet/getResource"
COMPILE_NODE_GRAPH = "puppet/compileNodeGraph"
FIX_DIAGNOSTIC_ERRORS = "puppet/fixDiagnosticErrors"
GET_DEPENDENCIES = "puppetfile/getDependencies"

METHODS = (GET_VERSION, GET_FACTS, GET_RESOURCE, COMPILE_NODE_GRAPH, FIX_DIAGNOSTIC_ERRORS, GET_DEPENDENCIES)


@attrs.define
class CustomRequestMessage:
    """A request of one of :data:`METHODS`, its ``params`` optional and kept as sent (a JSON object, or
    None when left out): a bad parameter is answered by the handler, never a message dropped."""

    id: int | str
    method: str
    jsonrpc: str
    params: Any = None


def register_message_types() -> None:
    """Make pygls structure our methods' requests with :class:`CustomRequestMessage` (lsprotocol's
    METHOD_TO_TYPES is where pygls looks a method's types up: request, result, params, registration
    options); a method lsprotocol already knows is left alone."""
    for method in METHODS:
        types.METHOD_TO_TYPES.setdefault(method, (CustomRequestMessage, None, None, None))


# a facter run younger than this answers puppet/getFacts again; an older one is run again (the facts
# view's refresh button sends puppet/getFacts: the facts of now, not of the server's start)
FACTS_FRESH = 10.0  # seconds


def tools_of(ls: PuppetServer) -> puppet_tools.ToolState:
    """What these messages keep for the server ``ls`` (its session's :class:`puppet_tools.ToolState`)."""
    return ls.session.tools


def param(params: Any, name: str) -> Any:
    """The parameter ``name`` of a request's ``params`` (a JSON object, or anything else sent), or None."""
    if isinstance(params, dict):
        return params.get(name)
    return getattr(params, name, None)


def facter_run(ls: PuppetServer, max_age: float) -> asyncio.Future[FactValues]:
    """The facter run in progress, else the last one when it ended less than ``max_age`` seconds ago,
    else a new run (facts.FactSource.run_facter on a thread: it keeps its facts for the hover too)."""
    tools = tools_of(ls)
    fut = tools.facter
    if fut is not None and (not fut.done() or time.monotonic() - tools.facter_ended < max_age):
        return fut

    async def run() -> FactValues:
        try:
            return await asyncio.to_thread(ls.session.facts.run_facter)
        finally:
            tools.facter_ended = time.monotonic()

    tools.facter = asyncio.ensure_future(run())
    return tools.facter


async def user_facts(ls: PuppetServer, max_age: float) -> FactValues:
    """The facts of the facts file the user set (read again when it changed), else of a facter run no
    older than ``max_age`` seconds (``inf``: any facter run, the ``puppet-xpp.runFacter`` command's too)."""
    source = ls.session.facts
    if source.file is not None:
        known = await asyncio.to_thread(source.current)
        if known is not None:
            return known
    if max_age == math.inf and source.ran is not None:
        return source.ran
    return await asyncio.shield(facter_run(ls, max_age))


async def document_text(ls: PuppetServer, uri: str) -> str | None:
    """The text of the document ``uri``: the editor's (with every edit received), else the file's on
    disk; None when neither can be read."""
    st = ls.session.documents.get(uri)
    if st is not None and st.refused is None:

        def current() -> str:
            sync.sync_state(st)
            return st.doc.text

        return await ls.on_worker(current)
    path = path_of_uri(uri)
    if not path:
        return None
    src = await asyncio.to_thread(read_source, path)
    return src.text if src.ok else None


# ----------------------------------------------------------------------------------------------- the messages


async def get_version(ls: PuppetServer, params: Any = None) -> dict[str, Any]:
    """``puppet/getVersion``: the versions and what is loaded (puppet-vscode's status bar polls it until
    everything is).  Built-in functions and types are our shipped data, always there; classes are the
    workspace index's, loaded when it is complete; facts are loaded once the user's facts are known.
    puppet-vscode asks this first: when no facts file is set and facter has not run, facter starts now
    in the background, as the incumbent loads facts at its start, so that its facts view can open."""
    tools = tools_of(ls)
    puppet, facter = await asyncio.gather(tools.versions.of("puppet"), tools.versions.of("facter"))
    source = ls.session.facts
    known = await asyncio.to_thread(source.current) if source.file is not None else source.ran
    facts_loaded = known is not None and not known.error
    if not facts_loaded and source.file is None:
        facter_run(ls, math.inf)
    return {
        "languageServerVersion": __version__,
        "puppetVersion": puppet,
        "facterVersion": facter,
        "factsLoaded": facts_loaded,
        "functionsLoaded": True,
        "typesLoaded": True,
        "classesLoaded": ls.session.index_state.complete(),
    }


async def get_facts(ls: PuppetServer, params: Any = None) -> dict[str, Any]:
    """``puppet/getFacts``: ``{facts}`` (facter's facts as one object), with ``error`` saying why there
    are none."""
    known = await user_facts(ls, FACTS_FRESH)
    if known.error:
        return {"facts": {}, "error": f"{known.source}: {known.error}"}
    return {"facts": known.values}


async def get_resource(ls: PuppetServer, params: Any) -> dict[str, Any]:
    """``puppet/getResource`` ``{typename, title?}``: ``{data}``, the manifest text ``puppet resource``
    prints for the server's machine, or ``{error}``."""
    typename, title = param(params, "typename"), param(params, "title")
    if not isinstance(typename, str) or not typename:
        return {"error": "puppet/getResource needs a resource type name (typename)"}
    try:
        data = await puppet_tools.puppet_resource(typename, title if isinstance(title, str) else None)
    except puppet_tools.ToolError as e:
        return {"error": str(e)}
    return {"data": data}


def _is_manifest(uri: str) -> bool:
    """A Puppet manifest (not EPP, a Puppetfile or metadata.json: server/analysis/filekinds.py)."""
    return filekinds.kind_of(uri, None) == filekinds.PUPPET


async def compile_node_graph(ls: PuppetServer, params: Any) -> dict[str, Any]:
    """``puppet/compileNodeGraph`` ``{external: uri}``: ``{vertices: [{label}], edges: [{source, target}]}``
    of the manifest's catalog (the editor's text) compiled by Puppet with the file's module path (the
    environment model, plus the editor's module path setting) and the user's facts; else ``{error}``."""
    uri = param(params, "external")
    if not isinstance(uri, str) or not _is_manifest(uri):
        return {"error": "A node graph is made from a Puppet manifest (.pp) only"}
    code = await document_text(ls, uri)
    if code is None:
        return {"error": f"{uri} cannot be read"}
    context = file_context(path_of_uri(uri), ls.session.settings)
    known = await user_facts(ls, math.inf)
    graph = await puppet_tools.node_graph(code, context.modulepath, {} if known.error else known.values)
    if graph.error is not None:
        return {"error": graph.error}
    return {"vertices": graph.vertices, "edges": graph.edges}


async def fix_diagnostic_errors(ls: PuppetServer, params: Any) -> dict[str, Any]:
    """``puppet/fixDiagnosticErrors`` ``{documentUri, alwaysReturnContent}`` (puppet-vscode's Format
    Document): ``{documentUri, fixesApplied, newContent?}`` -- every puppet-lint fix of our lint, the new
    text given when something was fixed or it is asked for always."""
    uri = param(params, "documentUri")
    always = bool(param(params, "alwaysReturnContent"))
    if not isinstance(uri, str):
        return {"documentUri": uri, "fixesApplied": 0}
    text = await document_text(ls, uri)
    if text is None:
        return {"documentUri": uri, "fixesApplied": 0}
    fixed, new = 0, text
    if _is_manifest(uri):
        try:
            fixed, new = await ls.session.lint_pool.run(
                analysis_lint.fix_all, text, path_of_uri(uri), ls.session.settings.lint
            )
        except Exception as e:  # the answer is "nothing fixed"; the log says why
            log.exception("fixDiagnosticErrors failed for %s", uri)
            ls.log(f"puppet-xpp: fixing {uri} failed: {e!r}", types.MessageType.Error)
    out: dict[str, Any] = {"documentUri": uri, "fixesApplied": fixed}
    if fixed > 0 or always:
        out["newContent"] = new
    return out


async def get_dependencies(ls: PuppetServer, params: Any) -> dict[str, Any]:
    """``puppetfile/getDependencies`` ``{uri}``: ``{dependencies}``, one per Forge module of the Puppetfile
    (``name``, ``title`` as written, ``owner``, ``version`` -- ``=1.2.3`` or ``latest`` --, the 0-based
    ``start_line``/``end_line`` of its ``mod``; also as ``startLine``/``endLine``, the names puppet-vscode's
    view reads), or ``{error}``."""
    uri = param(params, "uri")
    if not isinstance(uri, str) or filekinds.kind_of(uri, None) != filekinds.PUPPETFILE:
        return {"error": "Dependencies are read from a Puppetfile only"}
    text = await document_text(ls, uri)
    if text is None:
        return {"error": f"{uri} cannot be read"}
    path = path_of_uri(uri)
    parsed = await asyncio.to_thread(puppetfile.parse, text, os.path.dirname(path) if path else None)
    out: dict[str, Any] = {"dependencies": puppetfile_dependencies(parsed)}
    errors = [p for p in parsed.problems if p.severity == "error"]
    if errors:  # the incumbent refuses an invalid Puppetfile; the modules read are given with the reason
        first = errors[0]
        out["error"] = f"The Puppetfile is not valid: line {first.extent.line + 1}: {first.message}"
    return out


def puppetfile_dependencies(parsed: puppetfile.Puppetfile) -> list[dict[str, Any]]:
    """The Forge modules of a parsed Puppetfile in puppet-editor-services' shape."""
    out: list[dict[str, Any]] = []
    for module in parsed.modules:
        if module.kind != "forge":
            continue
        start, end = module.extent.line, module.extent.end_line
        out.append(
            {
                "name": module.short_name,
                "title": module.name,
                "owner": module.owner,
                "version": "latest" if module.version in (None, "latest") else f"={module.version}",
                "start_line": start,
                "end_line": end,
                "startLine": start,
                "endLine": end,
            }
        )
    return out
