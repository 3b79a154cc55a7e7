"""The lifecycle handlers: initialize, configuration, the open documents (open, change, save, close)
and their diagnostics.

After a change, diagnostics are computed at once if the worker is idle; edits that arrive while it
works are coalesced into the next run.  Diagnostics carry the document version and are never
published for a version that is no longer current.  Lint diagnostics follow (server/lsp/lint.py).
"""

from __future__ import annotations

import asyncio
import time

from lsprotocol import types

from puppet_xpp.server.analysis import filekinds
from puppet_xpp.server.analysis.document import Document, path_of_uri, uri_of_path, workspace_roots
from puppet_xpp.server.analysis.index import symbols_of
from puppet_xpp.server.analysis.workspace import Settings, file_context
from puppet_xpp.server.lsp import convert, indexing, language, lint, publish, sync, text
from puppet_xpp.server.lsp.language_server import PuppetServer
from puppet_xpp.server.lsp.session import FILE, LINT, PARSE, DocState, Session

# seconds without any document's analysis before a due full collection runs (GcPacer.due)
GC_IDLE_SECONDS = 2.0

# -- lifecycle -----------------------------------------------------------------------------------


def initialize(ls: PuppetServer, params: types.InitializeParams) -> None:
    session = ls.session
    session.client_caps = params.capabilities
    session.roots = workspace_roots((f.uri for f in params.workspace_folders or []), params.root_uri)
    session.settings = session.settings_from(params.initialization_options or {})
    language.withhold_formatting_capabilities(ls, params.capabilities)


async def initialized(ls: PuppetServer, params: types.InitializedParams) -> None:
    if await _pull_configuration(ls):
        await _reconfigure_documents(ls)
    await indexing.watch_files(ls)
    await language.register_formatting(ls)
    roots = ls.session.index_roots()
    if roots:
        ls.session.indexing = asyncio.ensure_future(indexing.index_paths(ls, roots))


async def did_change_configuration(ls: PuppetServer, params: types.DidChangeConfigurationParams) -> None:
    session = ls.session
    if params.settings:
        was = session.settings.lint
        session.settings = session.settings_from(params.settings)
        if session.settings.lint != was:
            for uri in list(session.documents):
                schedule(ls, uri)  # lint diagnostics on or off
    await _pull_configuration(ls)
    await _reconfigure_documents(ls)


async def _pull_configuration(ls: PuppetServer) -> bool:
    session = ls.session
    caps = session.client_caps
    ws = caps.workspace if caps is not None else None
    if not getattr(ws, "configuration", False):
        return False
    try:
        res = await asyncio.wait_for(
            ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="puppet")])
            ),
            5,
        )
    except Exception:
        return False
    if res and isinstance(res[0], dict):
        session.settings = session.settings_from(res[0])
        return True
    return False


async def _reconfigure_documents(ls: PuppetServer) -> None:
    session = ls.session
    for uri in list(session.documents):
        st = session.documents.get(uri)
        if st is None:
            continue
        cfg = session.config_for(uri)
        if cfg == st.doc.config:
            continue  # unchanged: no second analysis and publish of the same version
        await ls.on_worker(st.doc.set_config, cfg)
        schedule(ls, uri)


# -- documents -------------------------------------------------------------------------------


def did_open(ls: PuppetServer, params: types.DidOpenTextDocumentParams) -> None:
    session = ls.session
    td = params.text_document
    doc = Document(
        td.uri,
        text.clean_surrogates(td.text),
        td.version,
        session.config_for(td.uri),
        ls.encoding,
        session.gc_pacer,
    )
    # how it is analysed: a Puppetfile or a module's metadata.json by its own analysis, Hiera's YAML and
    # JSON (read by the deep checks) by none, never as Puppet
    kind = filekinds.kind_of(td.uri, td.language_id)
    session.documents[td.uri] = DocState(td.uri, doc, kind=kind)
    schedule(ls, td.uri)
    data_changed(ls, td.uri)
    problem = session.project_problem(td.uri) if kind in (filekinds.PUPPET, filekinds.EPP) else None
    if problem is not None:  # its settings are not used: say so, once, with where and what
        ls.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Warning,
                message=f"puppet-xpp: {problem} (the project configuration is not used until it is fixed)",
            )
        )


def data_changed(ls: PuppetServer, uri: str) -> None:
    """The editor's text of a YAML or JSON document (Hiera's data, maybe) was opened, edited, saved or
    closed: what reads Hiera follows (``HieraCache``'s listeners: the deep checks of the open
    manifests, server/lsp/deep.py, read these buffers)."""
    st = ls.session.documents.get(uri)
    if (st is None or not st.is_puppet) and filekinds.is_data_file(uri):
        ls.session.hiera.invalidate()


def did_change(ls: PuppetServer, params: types.DidChangeTextDocumentParams) -> None:
    st = ls.session.documents.get(params.text_document.uri)
    if st is None:
        return
    with st.lock:
        for ch in params.content_changes:
            rng = getattr(ch, "range", None)
            if rng is None:
                st.refused = None  # the whole text: in sync again
            elif st.refused is not None:
                continue
            st.pending.append((convert.span_of(rng) if rng is not None else None, ch.text))
        st.version = params.text_document.version
    if st.refused is None:
        schedule(ls, st.uri)
    data_changed(ls, st.uri)


SAVE_OPTIONS = types.SaveOptions(include_text=False)


async def did_save(ls: PuppetServer, params: types.DidSaveTextDocumentParams) -> None:
    session = ls.session
    uri = params.text_document.uri
    st = session.documents.get(uri)
    data_changed(ls, uri)
    if st is None or not st.is_puppet or not session.settings.xpp_on_save:
        return  # (a Puppetfile or a metadata.json has no .xpp)
    path = path_of_uri(uri)
    if path and path.endswith(".pp") and "puppet_version" not in session.settings.explicit:
        # the level --compile would choose may be the installed Puppet's: asked once per process (and
        # cached on disk), off the worker -- ``puppet --version`` takes a second or more
        from puppet_xpp.xpp.compile.installed import detect

        await asyncio.to_thread(detect)

    def run() -> tuple[str | None, str | None]:
        sync.sync_state(st)
        return write_xpp(session, path) if path and path.endswith(".pp") else (None, None)

    try:
        msg, out = await ls.on_worker(run)
    except Exception as e:  # never die on a save
        ls.log(f"puppet-xpp: .xpp not written for {uri}: {e}", types.MessageType.Error)
        return
    if out is not None:
        try:
            ls.protocol.notify("puppet/xppWritten", {"uri": uri, "xpp": uri_of_path(out)})
        except Exception:  # pragma: no cover
            pass
    if msg:
        ls.log(msg)
    if path and path.endswith(".pp"):
        an = await ls.on_worker(st.doc.analysis)
        session.index.set_file(path, symbols_of(an, path))


def xpp_level(settings: Settings, env_root: str) -> tuple[str, str | None]:
    """The language level and ``strict`` of the ``.xpp`` written on save: those ``puppet-xpp --compile
    ENVDIR`` chooses -- the editor's explicit settings standing for its command line's options, else the
    environment's project configuration, else (the level) the ``puppet`` on PATH's
    (:func:`xpp.compile.installed.detect`, compile's own detection: a Puppet 7.23 loads the file
    instead of parsing the manifest again) -- never the editor's default level."""
    from puppet_xpp.xpp.compile.installed import detect
    from puppet_xpp.xpp.project import project_for

    project = project_for(env_root)
    level = settings.puppet_version if "puppet_version" in settings.explicit else project.level
    strict = settings.strict if "strict" in settings.explicit else project.strict
    return (level if level is not None else detect().level), strict


def write_xpp(session: Session, path: str) -> tuple[str | None, str | None]:
    """Worker: write the saved file's .xpp into its environment's .xpp tree, exactly as
    ``puppet-xpp --compile ENVDIR`` does (its planning decides whether and where, :func:`xpp_level` at
    which level); returns (a log line, the path written)."""
    from puppet_xpp.xpp import compile as xpp_compile

    settings = session.settings
    ctx = file_context(path, settings)
    env_root = ctx.env.root if ctx.env is not None else session.owning_environment(path)
    if env_root is None:
        return None, None
    level, strict = xpp_level(settings, env_root)
    try:
        out = xpp_compile.compile_saved(env_root, path, level=level, strict=strict)
    except xpp_compile.CompileError as e:
        return f"puppet-xpp: no .xpp for {path}: {e}", None
    if out is None:
        return None, None  # not a file --compile writes (outside the module directories)
    return f"puppet-xpp: wrote {out}", out


def did_close(ls: PuppetServer, params: types.DidCloseTextDocumentParams) -> None:
    session = ls.session
    uri = params.text_document.uri
    st = session.documents.pop(uri, None)
    if st is not None and st.job is not None:
        st.job.cancel()
    publish.clear(ls, uri)
    if st is not None and not st.is_puppet:
        data_changed(ls, uri)  # (its file on disk is what counts now)
    path = path_of_uri(uri)
    if path and path.endswith(".pp") and session.roots:
        asyncio.ensure_future(indexing.reindex(ls, path))


# -- diagnostics ---------------------------------------------------------------------------------


def schedule(ls: PuppetServer, uri: str) -> None:
    st = ls.session.documents.get(uri)
    if st is None:
        return
    if st.job is None or st.job.done():
        st.job = asyncio.ensure_future(_diagnostics_loop(ls, st))


async def _diagnostics_loop(ls: PuppetServer, st: DocState) -> None:
    session = ls.session
    while True:
        t0 = time.perf_counter()
        try:
            await sync.analysed_apart(ls, st)  # (a big document: not on the worker)
            version, found, carried = await ls.on_worker(sync.analyze, session, st)
        except Exception as e:  # pragma: no cover - analysis never raises, but never die
            ls.log(f"puppet-xpp: analysis failed for {st.uri}: {e}", types.MessageType.Error)
            return
        if session.documents.get(st.uri) is not st or st.refused is not None:
            return  # closed meanwhile, or refused (server.lsp.guard: a change that could not be applied)
        if version == st.version:
            session.timings.append(time.perf_counter() - t0)
            del session.timings[:-1000]
            if st.is_puppet:
                st.diagnostics.set(version, PARSE, found)
                st.diagnostics.set(version, LINT, carried)
            else:  # a Puppetfile's, a metadata.json's: their own analysis, their own source
                st.diagnostics.set(version, FILE, found)
            publish.publish(ls, st)
            st.published = version
            lint.after_publish(ls, st)  # lint this text when typing pauses (server.lsp.lint)
            if session.gc_pacer.due and session.idle_gc is None:
                session.idle_gc = asyncio.ensure_future(_idle_gc(ls))
            return
        # edits arrived while we worked: go again with all of them (never publish a stale version)


async def _idle_gc(ls: PuppetServer) -> None:
    """Run the due full collection once no document has been analysed for GC_IDLE_SECONDS (a pause
    in typing): the 100-250 ms it takes on a large file then land on no keystroke."""
    session = ls.session
    try:
        while session.gc_pacer.due:
            seen = [(st, st.version) for st in session.documents.values()]
            await asyncio.sleep(GC_IDLE_SECONDS)
            busy = any(st.job is not None and not st.job.done() for st in session.documents.values())
            if busy or seen != [(st, st.version) for st in session.documents.values()]:
                continue
            await ls.on_worker(session.gc_pacer.full_collect)
    finally:
        session.idle_gc = None
