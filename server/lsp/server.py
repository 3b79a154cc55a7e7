"""The Puppet language server (pygls 2): thin handlers over server/analysis*.py.

    puppet-xpp [--stdio]            serve on stdin/stdout (default)
    puppet-xpp --tcp HOST:PORT      serve on a TCP socket

Concurrency: all parsing and analysis runs on ONE worker thread, in order; the asyncio loop only
queues edits and answers.  After a change, diagnostics are computed at once if the worker is idle;
edits that arrive while it works are coalesced into the next run.  Diagnostics carry the document
version and are never published for a version that is no longer current.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor

from lsprotocol import types as L
from pygls.lsp.server import LanguageServer

from puppet_xpp.grammar import ast as A
from puppet_xpp.server.analysis import features as F
from puppet_xpp.server.analysis.document import (
    Document,
    doc_config_for,
    full_collect,
    gc_due,
    path_of_uri,
    to_lsp_diagnostics,
    uri_of_path,
)
from puppet_xpp.server.analysis.index import WorkspaceIndex, index_file, symbols_of, workspace_files
from puppet_xpp.server.analysis.workspace import Settings, file_context
from puppet_xpp.server.lsp import guard as G
from puppet_xpp.server.lsp import lint as LL  # puppet-lint diagnostics, formatting, code actions
from puppet_xpp.server.lsp import text as T
from puppet_xpp.server.lsp import world as W  # Ruby/built-in/Hiera knowledge

VERSION = "0.1.0"
log = logging.getLogger("puppet-xpp.lsp")


class DocState:
    def __init__(self, uri, doc):
        self.uri = uri
        self.doc = doc  # owned by the worker thread
        self.pending: list = []  # [(range or None, text)] not yet applied (guarded by lock)
        self.version = doc.version  # latest version received
        self.lock = threading.Lock()
        self.job = None  # asyncio task computing diagnostics
        self.published = None
        self.last_good = None  # the last analysis that succeeded (features use it after an internal error)
        self.refused: str | None = None  # why our copy may differ from the client's (until reopened)


class PuppetServer(LanguageServer):
    def __init__(self):
        super().__init__(
            "puppet-xpp",
            VERSION,
            text_document_sync_kind=L.TextDocumentSyncKind.Incremental,
            protocol_cls=G.GuardedProtocol,
        )
        self.docs: dict[str, DocState] = {}
        self.settings = Settings()
        self.index = WorkspaceIndex()
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="puppet-analysis")
        self.roots: list[str] = []
        self.indexing = None
        self.client_caps = None
        self.timings: list = []
        self.idle_gc: asyncio.Future | None = None  # a full collection waiting for a pause (_idle_gc)

    # -- helpers -----------------------------------------------------------------------------------

    @property
    def encoding(self) -> str:
        enc = getattr(self.workspace, "position_encoding", None) if self._workspace_ready() else None
        v = getattr(enc, "value", enc) or "utf-16"
        return {"utf-8": "utf-8", "utf-32": "utf-32"}.get(str(v), "utf-16")

    def _workspace_ready(self) -> bool:
        try:
            _ = self.workspace
            return True
        except Exception:
            return False

    async def on_worker(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self.worker, fn, *args)

    def log(self, msg: str, typ=L.MessageType.Info):
        try:
            self.window_log_message(L.LogMessageParams(type=typ, message=msg))
        except Exception:  # pragma: no cover - no client
            pass

    def config_for(self, uri: str):
        return doc_config_for(path_of_uri(uri), self.settings, self.roots)

    # -- transport (server.lsp.guard) ---------------------------------------------------------------

    def start_io(self, stdin=None, stdout=None):
        """stdio with bounded header lines and pygls' reader replaced by :func:`lsp_guard.read_messages`."""
        from pygls.io_ import StdinAsyncReader, StdoutWriter

        class Bounded(StdinAsyncReader):
            def readline(self):
                return self.loop.run_in_executor(self.executor, self.stdin.readline, G.MAX_HEADER_LINE)

        self._stop_event = threading.Event()
        reader = Bounded(stdin or sys.stdin.buffer, self.thread_pool)
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))

        async def serve() -> None:
            try:
                await G.read_messages(self._stop_event, reader, self.protocol, log, self.report_server_error)
            finally:  # before asyncio.run and pygls' shutdown wait for their executors' threads
                _exit_watchdog(self.protocol)

        try:
            asyncio.run(serve())
        except BrokenPipeError:
            log.error("connection to the client lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def start_tcp(self, host: str, port: int) -> None:
        import pygls.server

        pygls.server.run_async = G.read_messages  # type: ignore[assignment]  # the same loop for TCP
        super().start_tcp(host, port)

    def refuse_document(self, uri: str, why: str) -> None:
        """A change to ``uri`` could not be applied: our copy would drift from the client's, so the
        document is not analysed until it is opened again, and its diagnostics say so."""
        st = self.docs.get(uri)
        if st is None:
            return
        st.refused = why
        self.text_document_publish_diagnostics(
            L.PublishDiagnosticsParams(
                uri=uri,
                diagnostics=[
                    L.Diagnostic(
                        range=L.Range(
                            start=L.Position(line=0, character=0), end=L.Position(line=0, character=0)
                        ),
                        severity=L.DiagnosticSeverity.Error,
                        code="DOCUMENT_OUT_OF_SYNC",
                        source="puppet-xpp",
                        message="puppet-xpp could not apply a change to this document (the client sent a "
                        f"malformed change: {why.splitlines()[0][:200] if why else '?'}); close and reopen it",
                    )
                ],
            )
        )


server = None  # the instance created by create_server()


def _rng(r):
    return ((r.start.line, r.start.character), (r.end.line, r.end.character))


def _range(lines, off, length):
    (l0, c0), (l1, c1) = lines.range(off or 0, max(0, length or 0))
    return L.Range(start=L.Position(line=l0, character=c0), end=L.Position(line=l1, character=c1))


def _prange(r):
    (l0, c0), (l1, c1) = r
    return L.Range(start=L.Position(line=l0, character=c0), end=L.Position(line=l1, character=c1))


def _sync_state(st: DocState):
    """Worker thread: apply queued edits; returns the version they bring the document to."""
    with st.lock:
        changes, st.pending = st.pending, []
        version = st.version
    doc = st.doc
    for rng, text in changes:
        LL.note_change(st, rng, text)  # (the lint diagnostics carried over follow it)
        _apply_change(doc, rng, text)
    doc.version = version
    return version


def _apply_change(doc, rng, text: str) -> None:
    """One content change, with LSP's line rule when the document holds a lone CR (server.lsp.text)."""
    text = T.clean_surrogates(text)
    if rng is not None and T.has_lone_cr_bytes(doc.data):
        full = doc.text
        li = doc.line_index()
        ends = []
        for line, col in rng:
            i = T.lsp_offset(full, line, col, doc.encoding)
            ends.append(li.position(len(full[:i].encode("utf-8", "surrogateescape"))))
        rng = (ends[0], ends[1])
    doc.apply_change(rng, text)


class _Diag:
    """A diagnostic of the server itself (same fields as server.analysis.document.LspDiagnostic)."""

    def __init__(self, start, end, severity, code, message):
        self.start, self.end, self.severity, self.code, self.message = start, end, severity, code, message
        self.deprecated = False


def _analyze(st: DocState):
    """Worker: (version, diagnostics) of the current text.  Binary content is reported once and not
    analysed; an internal failure becomes one INTERNAL_ERROR (the traceback goes to the log) and the
    last good analysis stays for the features; at most lsp_text.MAX_DIAGNOSTICS are published."""
    version = _sync_state(st)
    doc = st.doc
    binary = T.binary_reason(doc.data)
    if binary is not None:
        why, off = binary
        pos = doc.line_index().position(off)
        return version, [_Diag(pos, pos, 1, "BINARY_CONTENT", f"binary content ({why}): not analysed")]
    try:
        an = doc.analysis()
        diags = to_lsp_diagnostics(an)
    except Exception as e:
        from puppet_xpp.xpp.sources import format_traceback, internal_error

        log.error("analysis failed for %s:\n%s", st.uri, format_traceback(e))
        d = internal_error(e, st.uri)
        return version, [_Diag((0, 0), (0, 0), 1, d.code, d.message)]
    st.last_good = an
    if T.has_lone_cr_bytes(doc.data):  # positions in LSP's line rule, not Puppet's (server.lsp.text)
        li, data, enc = an.lines, doc.data, doc.encoding
        for d in diags:
            d.start = T.lsp_position(data, li.offset(*d.start), enc)
            d.end = T.lsp_position(data, li.offset(*d.end), enc)
    diags = LL.with_lint(st, version, diags, len(an.lines.starts))  # + the last lint result, carried over
    return version, _capped(diags)


def _capped(diags):
    """At most lsp_text.MAX_DIAGNOSTICS of ``diags``, then one "and N more" where the next one starts."""
    shown, more = T.cap(diags)
    if more:
        d = diags[len(shown)]
        shown = [*shown, _Diag(d.start, d.end, 3, "TOO_MANY_DIAGNOSTICS", f"and {more} more")]
    return shown


def create_server() -> PuppetServer:
    ls = PuppetServer()

    # -- lifecycle -----------------------------------------------------------------------------------

    @ls.feature(L.INITIALIZE)
    def initialize(ls: PuppetServer, params: L.InitializeParams):
        ls.client_caps = params.capabilities
        roots = []
        for f in params.workspace_folders or []:
            p = path_of_uri(f.uri)
            if p:
                roots.append(p)
        if not roots and params.root_uri:
            p = path_of_uri(params.root_uri)
            if p:
                roots.append(p)
        ls.roots = roots
        ls.settings = Settings.from_dict(
            params.initialization_options or {}, ls.settings, roots[0] if roots else None
        )
        LL.configure(params.initialization_options)

    @ls.feature(L.INITIALIZED)
    async def initialized(ls: PuppetServer, params):
        if await _pull_configuration(ls):
            await _reconfigure_documents(ls)
        await W.after_initialized(ls)
        if W.index_roots(ls):
            ls.indexing = asyncio.ensure_future(_index_workspace(ls))

    @ls.feature(L.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: PuppetServer, params: L.DidChangeConfigurationParams):
        if params.settings:
            ls.settings = Settings.from_dict(params.settings, ls.settings, ls.roots[0] if ls.roots else None)
            if LL.configure(params.settings):
                for uri in list(ls.docs):
                    _schedule(ls, uri)  # lint diagnostics on or off
        await _pull_configuration(ls)
        await _reconfigure_documents(ls)

    # -- documents -------------------------------------------------------------------------------

    @ls.feature(L.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: PuppetServer, params: L.DidOpenTextDocumentParams):
        td = params.text_document
        doc = Document(td.uri, T.clean_surrogates(td.text), td.version, ls.config_for(td.uri), ls.encoding)
        ls.docs[td.uri] = DocState(td.uri, doc)
        _schedule(ls, td.uri)

    @ls.feature(L.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: PuppetServer, params: L.DidChangeTextDocumentParams):
        st = ls.docs.get(params.text_document.uri)
        if st is None:
            return
        with st.lock:
            for ch in params.content_changes:
                rng = getattr(ch, "range", None)
                if rng is None:
                    st.refused = None  # the whole text: in sync again
                elif st.refused is not None:
                    continue
                st.pending.append((_rng(rng) if rng is not None else None, ch.text))
            st.version = params.text_document.version
        if st.refused is None:
            _schedule(ls, st.uri)

    @ls.feature(L.TEXT_DOCUMENT_DID_SAVE, L.SaveOptions(include_text=False))
    async def did_save(ls: PuppetServer, params: L.DidSaveTextDocumentParams):
        st = ls.docs.get(params.text_document.uri)
        if st is None or not ls.settings.xpp_on_save:
            return
        try:
            msg = await ls.on_worker(_write_xpp, ls, st)
        except Exception as e:  # never die on a save
            ls.log(f"puppet-xpp: .xpp not written for {params.text_document.uri}: {e}", L.MessageType.Error)
            return
        if msg:
            ls.log(msg)
        path = path_of_uri(st.uri)
        if path and path.endswith(".pp"):
            an = await ls.on_worker(lambda: st.doc.analysis())
            ls.index.set_file(path, symbols_of(an, path))

    @ls.feature(L.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: PuppetServer, params: L.DidCloseTextDocumentParams):
        uri = params.text_document.uri
        st = ls.docs.pop(uri, None)
        if st is not None and st.job is not None:
            st.job.cancel()
        ls.text_document_publish_diagnostics(L.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        path = path_of_uri(uri)
        if path and path.endswith(".pp") and ls.roots:
            asyncio.ensure_future(_reindex_file(ls, path))

    # -- features --------------------------------------------------------------------------------

    @ls.feature(L.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def document_symbol(ls: PuppetServer, params: L.DocumentSymbolParams):
        return await _with_analysis(ls, params.text_document.uri, _document_symbols, None)

    @ls.feature(L.TEXT_DOCUMENT_FOLDING_RANGE)
    async def folding_range(ls: PuppetServer, params: L.FoldingRangeParams):
        return await _with_analysis(ls, params.text_document.uri, _folding, None)

    @ls.feature(
        L.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL,
        L.SemanticTokensLegend(token_types=F.TOKEN_TYPES, token_modifiers=F.TOKEN_MODIFIERS),
    )
    async def semantic_tokens(ls: PuppetServer, params: L.SemanticTokensParams):
        return await _with_analysis(
            ls, params.text_document.uri, lambda an: L.SemanticTokens(data=F.semantic_tokens(an)), None
        )

    @ls.feature(L.TEXT_DOCUMENT_HOVER)
    async def hover(ls: PuppetServer, params: L.HoverParams):
        pos = params.position
        uri = params.text_document.uri
        return await _with_analysis(
            ls, uri, lambda an: W.hover(ls, uri, an, pos) or _hover(ls, an, pos), None
        )

    @ls.feature(L.TEXT_DOCUMENT_DEFINITION)
    async def definition(ls: PuppetServer, params: L.DefinitionParams):
        pos = params.position
        uri = params.text_document.uri
        return await _with_analysis(
            ls, uri, lambda an: W.definition(ls, uri, an, pos) or _definition(ls, uri, an, pos), None
        )

    @ls.feature(L.WORKSPACE_SYMBOL)
    async def workspace_symbol(ls: PuppetServer, params: L.WorkspaceSymbolParams):
        out = []
        for s in ls.index.search(params.query):
            out.append(
                L.WorkspaceSymbol(
                    name=s.name,
                    kind=_kind_of(s.kind),
                    container_name=s.kind,
                    location=L.Location(uri=uri_of_path(s.path), range=_prange(s.selection)),
                )
            )
        return out

    @ls.feature(
        L.TEXT_DOCUMENT_COMPLETION,
        L.CompletionOptions(trigger_characters=["$", ":", ">"], resolve_provider=True),
    )
    async def completion(ls: PuppetServer, params: L.CompletionParams):
        pos = params.position
        uri = params.text_document.uri
        return await _with_analysis(ls, uri, lambda an: W.completion(ls, uri, an, pos, _completion), None)

    W.register(ls, _with_analysis)
    from puppet_xpp.server.lsp import (
        references as lsp_references,  # references, highlight, rename, call hierarchy
    )

    lsp_references.register(ls)
    LL.register(ls)
    return ls


# ----------------------------------------------------------------------------------------------- diagnostics


def _schedule(ls: PuppetServer, uri: str):
    st = ls.docs.get(uri)
    if st is None:
        return
    if st.job is None or st.job.done():
        st.job = asyncio.ensure_future(_diagnostics_loop(ls, st))


async def _diagnostics_loop(ls: PuppetServer, st: DocState):
    while True:
        t0 = time.perf_counter()
        try:
            version, diags = await ls.on_worker(_analyze, st)
        except Exception as e:  # pragma: no cover - analysis never raises, but never die
            ls.log(f"puppet-xpp: analysis failed for {st.uri}: {e}", L.MessageType.Error)
            return
        if ls.docs.get(st.uri) is not st or st.refused is not None:
            return  # closed meanwhile, or refused (lsp_guard: a change that could not be applied)
        if version == st.version:
            ls.timings.append(time.perf_counter() - t0)
            del ls.timings[:-1000]
            _publish(ls, st, version, diags)
            st.published = version
            LL.after_publish(ls, st)  # lint this text when typing pauses (server.lsp.lint)
            if gc_due() and ls.idle_gc is None:
                ls.idle_gc = asyncio.ensure_future(_idle_gc(ls))
            return
        # edits arrived while we worked: go again with all of them (never publish a stale version)


# seconds without any document's analysis before a due full collection runs (server.analysis.document.gc_due)
GC_IDLE_SECONDS = 2.0


async def _idle_gc(ls: PuppetServer) -> None:
    """Run the due full collection once no document has been analysed for GC_IDLE_SECONDS (a pause
    in typing): the 100-250 ms it takes on a large file then land on no keystroke."""
    try:
        while gc_due():
            seen = [(st, st.version) for st in ls.docs.values()]
            await asyncio.sleep(GC_IDLE_SECONDS)
            busy = any(st.job is not None and not st.job.done() for st in ls.docs.values())
            if busy or seen != [(st, st.version) for st in ls.docs.values()]:
                continue
            await ls.on_worker(full_collect)
    finally:
        ls.idle_gc = None


# per document: the lsprotocol form of each diagnostic of its last publish, by the fields it is made of
_converted: weakref.WeakKeyDictionary[DocState, dict[tuple, L.Diagnostic]] = weakref.WeakKeyDictionary()


def _publish(ls: PuppetServer, st: DocState, version: int, diags: list) -> None:
    """Event loop: publish ``diags`` (capped: _capped) as ``version`` of ``st``. A diagnostic published
    last time (the lint diagnostics carried over, most parse diagnostics) reuses its lsprotocol form:
    building those is most of the cost of a publish of a file with many diagnostics (pygls then
    unstructures and encodes them; same JSON either way)."""
    old = _converted.get(st) or {}
    new = {}
    out = []
    for d in diags:
        key = (
            *d.start,
            *d.end,
            d.severity,
            d.code,
            getattr(d, "source", "puppet-xpp"),
            d.message,
            d.deprecated,
        )
        c = new.get(key) or old.get(key) or _diag(d)
        new[key] = c
        out.append(c)
    _converted[st] = new
    ls.text_document_publish_diagnostics(
        L.PublishDiagnosticsParams(uri=st.uri, version=version, diagnostics=out)
    )


def _diag(d):
    return L.Diagnostic(
        range=L.Range(
            start=L.Position(line=d.start[0], character=d.start[1]),
            end=L.Position(line=d.end[0], character=d.end[1]),
        ),
        severity=L.DiagnosticSeverity(d.severity),
        code=d.code,
        source=getattr(d, "source", "puppet-xpp"),
        message=d.message,
        tags=[L.DiagnosticTag.Deprecated] if d.deprecated else None,
    )


async def _with_analysis(ls, uri, fn, default):
    st = ls.docs.get(uri)
    if st is None:
        return default

    def run():
        _sync_state(st)
        if st.refused is not None or T.binary_reason(st.doc.data) is not None:
            return default
        try:
            an = st.doc.analysis()
        except Exception:  # an internal failure: the last good parse answers (see _analyze)
            an = st.last_good
            if an is None:
                return default
        return fn(an)

    try:
        return await ls.on_worker(run)
    except Exception as e:
        ls.log(f"puppet-xpp: request failed for {uri}: {e!r}", L.MessageType.Error)
        return default


# ----------------------------------------------------------------------------------------------- features


def _kind_of(kind: str):
    return {
        "class": L.SymbolKind.Class,
        "define": L.SymbolKind.Struct,
        "function": L.SymbolKind.Function,
        "plan": L.SymbolKind.Method,
        "type": L.SymbolKind.TypeParameter,
        "node": L.SymbolKind.Module,
    }.get(kind, L.SymbolKind.Object)


def _document_symbols(an):
    def conv(s):
        rng = _range(an.lines, *s["range"])
        sel = _range(an.lines, *s["selection"])
        if not _within(sel, rng):
            sel = rng
        return L.DocumentSymbol(
            name=s["name"] or "?",
            detail=s["detail"] or None,
            kind=L.SymbolKind(s["kind"]),
            range=rng,
            selection_range=sel,
            children=[conv(c) for c in s["children"]],
        )

    return [conv(s) for s in F.document_symbols(an)]


def _within(a, b):
    return (b.start.line, b.start.character) <= (a.start.line, a.start.character) and (
        a.end.line,
        a.end.character,
    ) <= (b.end.line, b.end.character)


def _folding(an):
    out = []
    for a, b, kind in F.folding_ranges(an):
        k = {"comment": L.FoldingRangeKind.Comment, "region": L.FoldingRangeKind.Region}.get(kind)
        out.append(L.FoldingRange(start_line=a, end_line=b, kind=k))
    return out


def _offset(an, pos):
    return an.lines.offset(pos.line, pos.character)


def _hover(ls, an, pos):
    off = _offset(an, pos)
    ref = F.reference_at(an, off)
    if ref is None:
        return None
    kind, name, node = ref
    text = None
    if kind == "variable":
        d = F.local_definition(an, ref, off)
        if d is not None and type(d) is A.Parameter:
            typ = F.src(an, d.type_expr)
            dflt = F.src(an, d.value)
            text = f"```puppet\n{(typ + ' ') if typ else ''}${d.name}{(' = ' + dflt) if dflt else ''}\n```\n(parameter)"
            owner = _owner_doc(an, d)
            if owner:
                pd = F.param_docs(owner).get(d.name)
                if pd:
                    text += "\n\n" + pd
        elif d is not None:
            text = (
                f"```puppet\n${name}\n```\n(variable, assigned at line {an.lines.position(d.offset)[0] + 1})"
            )
        elif "::" in name:
            cls, _, var = name.lstrip(":").rpartition("::")
            for s in ls.index.lookup(cls, ("class",)):
                for p in s.params:
                    if p.name == var:
                        text = (
                            f"```puppet\n{p.type + ' ' if p.type else ''}${name}"
                            f"{' = ' + p.default if p.default else ''}\n```\n(parameter of class {s.name})"
                            + (f"\n\n{p.doc}" if p.doc else "")
                        )
    elif kind == "function" and name in F.D.FUNCTIONS and not ls.index.lookup(name, ("function",)):
        text = f"```puppet\n{F.D.FUNCTIONS[name]}\n```\n(built-in function)"
    else:
        syms = _lookup(ls, kind, name)
        if syms:
            s = syms[0]
            text = f"```puppet\n{s.signature}\n```"
            if s.doc:
                text += "\n\n" + F.doc_markdown(s.doc)
        elif name.lower() in F.D.RESOURCE_TYPES:
            desc, attrs = F.D.RESOURCE_TYPES[name.lower()]
            text = f"**{name.lower()}** (core resource type)\n\n{desc}\n\nAttributes: " + ", ".join(attrs)
        elif kind == "type" and name in F.D.DATA_TYPES:
            text = f"```puppet\n{name}\n```\n(built-in data type)"
    if text is None:
        return None
    rng = _range(an.lines, node.offset, node.length)
    return L.Hover(contents=L.MarkupContent(kind=L.MarkupKind.Markdown, value=text), range=rng)


def _owner_doc(an, param):
    for d in an.program.definitions if an.program is not None else ():
        if param in (getattr(d, "parameters", None) or []):
            return F.leading_comment(an.data, d.offset)
    return None


def _lookup(ls, kind, name):
    kinds = {
        "class": ("class",),
        "define": ("define",),
        "class_or_define": ("class", "define"),
        "function": ("function", "plan"),
        "type": ("type", "define", "class"),
    }.get(kind)
    syms = ls.index.lookup(name, kinds)
    if not syms and kind == "type":
        syms = ls.index.lookup(name, ("type", "define", "class"))
    return syms


def _definition(ls, uri, an, pos):
    off = _offset(an, pos)
    ref = F.reference_at(an, off)
    if ref is None:
        return None
    kind, name, _node = ref
    if kind == "variable":
        d = F.local_definition(an, ref, off)
        if d is not None:
            return [L.Location(uri=uri, range=_range(an.lines, d.offset, d.length))]
        if "::" in name:
            cls = name.lstrip(":").rpartition("::")[0]
            return [
                L.Location(uri=uri_of_path(s.path), range=_prange(s.selection))
                for s in ls.index.lookup(cls, ("class",))
            ] or None
        return None
    # the current document first (it may not be saved yet)
    locs = []
    if an.program is not None:
        for d in an.program.definitions:
            if getattr(d, "name", "").lower().lstrip(":") == name.lower() and (
                kind in ("class_or_define", "type")
                or F.kind_name(d) == kind
                or (kind == "function" and F.kind_name(d) == "plan")
            ):
                so, sl = F.name_span(an, d)
                locs.append(L.Location(uri=uri, range=_range(an.lines, so, sl)))
    if locs:
        return locs
    path = path_of_uri(uri)
    return [
        L.Location(uri=uri_of_path(s.path), range=_prange(s.selection))
        for s in _lookup(ls, kind, name)
        if s.path != path
    ] or None


def _completion(ls, an, pos):
    off = _offset(an, pos)
    ctx, prefix, rtype = F.completion_context(an, off)
    items = []
    CK = L.CompletionItemKind
    if ctx == "variable":
        seen = set()
        for name, node in F.visible_variables(an, off).items():
            seen.add(name)
            items.append(
                L.CompletionItem(
                    label="$" + name,
                    insert_text=name,
                    filter_text=name,
                    kind=CK.Variable,
                    detail="parameter" if type(node) is A.Parameter else "variable",
                )
            )
        for name in ("facts", "trusted", "server_facts", "title", "name", "module_name", "environment"):
            if name not in seen:
                items.append(
                    L.CompletionItem(
                        label="$" + name,
                        insert_text=name,
                        filter_text=name,
                        kind=CK.Variable,
                        detail="built-in",
                    )
                )
        if "::" in prefix:
            cls = prefix.lstrip(":").rpartition("::")[0]
            for s in ls.index.lookup(cls, ("class",)):
                for p in s.params:
                    full = f"{cls}::{p.name}"
                    items.append(
                        L.CompletionItem(
                            label="$" + full,
                            insert_text=full,
                            filter_text=full,
                            kind=CK.Field,
                            detail=p.type or "parameter",
                        )
                    )
        return L.CompletionList(is_incomplete=False, items=items)
    if ctx == "attribute":
        attrs = []
        if rtype in F.D.RESOURCE_TYPES:
            attrs = [(a, F.D.RESOURCE_TYPES[rtype][0]) for a in F.D.RESOURCE_TYPES[rtype][1]]
        else:
            for s in ls.index.lookup(rtype, ("define", "class")):
                attrs = [(p.name, (p.type + " " if p.type else "") + (p.doc or "")) for p in s.params]
                break
        for a, detail in attrs:
            items.append(
                L.CompletionItem(
                    label=a, kind=CK.Property, detail=detail.strip() or None, insert_text=f"{a} => "
                )
            )
        for a in F.D.META_PARAMETERS:
            items.append(
                L.CompletionItem(
                    label=a,
                    kind=CK.Property,
                    detail="metaparameter",
                    insert_text=f"{a} => ",
                    sort_text="~" + a,
                )
            )
        return L.CompletionList(is_incomplete=False, items=items)
    for k in F.D.KEYWORDS:
        items.append(L.CompletionItem(label=k, kind=CK.Keyword))
    for t, (desc, _attrs) in F.D.RESOURCE_TYPES.items():
        items.append(L.CompletionItem(label=t, kind=CK.Class, detail="resource type", documentation=desc))
    for f, sig in F.D.FUNCTIONS.items():
        items.append(L.CompletionItem(label=f, kind=CK.Function, detail=sig))
    for t in F.D.DATA_TYPES:
        items.append(L.CompletionItem(label=t, kind=CK.TypeParameter, detail="data type"))
    seen = set()
    for s in ls.index.all() + _local_syms(an):
        key = (s.kind, s.name)
        if key in seen or s.kind == "node":
            continue
        seen.add(key)
        kind = {
            "class": CK.Class,
            "define": CK.Struct,
            "function": CK.Function,
            "plan": CK.Method,
            "type": CK.TypeParameter,
        }.get(s.kind, CK.Text)
        items.append(
            L.CompletionItem(
                label=s.name, kind=kind, detail=s.kind, documentation=F.summary_of(s.doc) or None
            )
        )
    return L.CompletionList(is_incomplete=False, items=items)


def _local_syms(an):
    try:
        return symbols_of(an, "")
    except Exception:
        return []


# ----------------------------------------------------------------------------------------------- .xpp on save


def _write_xpp(ls: PuppetServer, st: DocState):
    """Worker: write the saved file's .xpp into its environment's .xpp tree, exactly as
    ``puppet-xpp --compile ENVDIR`` does (its planning decides whether and where); returns a log line."""
    from puppet_xpp.xpp import compile as C

    _sync_state(st)
    path = path_of_uri(st.uri)
    if not path or not path.endswith(".pp"):
        return None
    ctx = file_context(path, ls.settings, ls.roots)
    env_root = ctx.env.root if ctx.env is not None else W.owning_environment(ls, path)
    if env_root is None:
        return None
    try:
        out = C.compile_saved(env_root, path, level=ls.settings.puppet_version, strict=ls.settings.strict)
    except C.CompileError as e:
        return f"puppet-xpp: no .xpp for {path}: {e}"
    if out is None:
        return None  # not a file --compile writes (outside the module directories)
    try:
        ls.protocol.notify("puppet/xppWritten", {"uri": st.uri, "xpp": uri_of_path(out)})
    except Exception:  # pragma: no cover
        pass
    return f"puppet-xpp: wrote {out}"


# ----------------------------------------------------------------------------------------------- settings, index


async def _pull_configuration(ls: PuppetServer) -> bool:
    caps = ls.client_caps
    ws = getattr(caps, "workspace", None) if caps is not None else None
    if not getattr(ws, "configuration", False):
        return False
    try:
        res = await asyncio.wait_for(
            ls.workspace_configuration_async(
                L.ConfigurationParams(items=[L.ConfigurationItem(section="puppet")])
            ),
            5,
        )
    except Exception:
        return False
    if res and isinstance(res[0], dict):
        ls.settings = Settings.from_dict(res[0], ls.settings, ls.roots[0] if ls.roots else None)
        LL.configure(res[0])
        return True
    return False


async def _reconfigure_documents(ls: PuppetServer):
    for uri in list(ls.docs):
        st = ls.docs.get(uri)
        if st is None:
            continue
        cfg = ls.config_for(uri)
        if cfg == st.doc.config:
            continue  # unchanged: no second analysis and publish of the same version
        await ls.on_worker(st.doc.set_config, cfg)
        st.doc._analysis = None
        _schedule(ls, uri)


async def _reindex_file(ls, path):
    syms = await ls.on_worker(index_file, path)
    ls.index.set_file(path, syms)


async def _index_workspace(ls: PuppetServer):
    loop = asyncio.get_running_loop()
    files = await loop.run_in_executor(None, workspace_files, W.index_roots(ls))
    token = None
    caps = ls.client_caps
    window = getattr(caps, "window", None) if caps is not None else None
    if getattr(window, "work_done_progress", False):
        token = f"puppet-xpp-index-{id(ls)}"
        try:
            await ls.work_done_progress.create_async(token)
            ls.work_done_progress.begin(
                token,
                L.WorkDoneProgressBegin(
                    title="Indexing Puppet workspace",
                    message=f"0/{len(files)} files",
                    percentage=0,
                    cancellable=False,
                ),
            )
        except Exception:
            token = None
    t0 = time.perf_counter()
    last = 0.0
    for k, path in enumerate(files):
        if path_of_uri(uri_of_path(path)) in {path_of_uri(u) for u in ls.docs}:
            continue
        syms = await ls.on_worker(index_file, path)
        ls.index.set_file(path, syms)
        now = time.perf_counter()
        if token and now - last > 0.2:
            last = now
            ls.work_done_progress.report(
                token,
                L.WorkDoneProgressReport(
                    message=f"{k + 1}/{len(files)} files", percentage=int(100 * (k + 1) / max(1, len(files)))
                ),
            )
    if token:
        ls.work_done_progress.end(
            token,
            L.WorkDoneProgressEnd(message=f"Indexed {len(files)} files in {time.perf_counter() - t0:.1f}s"),
        )
    ls.log(f"puppet-xpp: indexed {len(files)} files in {time.perf_counter() - t0:.1f}s")


# ----------------------------------------------------------------------------------------------- main


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    tcp = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--stdio":
            pass
        elif a == "--tcp" or a.startswith("--tcp="):
            v = a.split("=", 1)[1] if "=" in a else (argv[i + 1] if i + 1 < len(argv) else "")
            if "=" not in a:
                i += 1
            host, _, port = v.rpartition(":")
            try:
                tcp = (host or "127.0.0.1", int(port))
            except ValueError:
                print(f"puppet-xpp: --tcp expects HOST:PORT, not {v!r}", file=sys.stderr)
                return 2
        elif a in ("-v", "--verbose"):
            logging.basicConfig(level=logging.DEBUG)
        else:
            print(
                f"puppet-xpp: unknown option {a!r} (language server: --stdio | --tcp HOST:PORT)",
                file=sys.stderr,
            )
            return 2
        i += 1
    global server
    server = create_server()
    try:
        if tcp is not None:
            server.start_tcp(*tcp)
        else:
            server.start_io()
    finally:
        server.worker.shutdown(wait=False, cancel_futures=True)
    code = getattr(server.protocol, "exit_code", None)
    return 0 if code is None else code  # LSP: exit without shutdown is 1


EXIT_GRACE = 5.0  # seconds the work in flight gets once the client's stream has ended


def _exit_watchdog(protocol) -> None:
    """The client's stdio stream has ended, so nothing more can reach it. Work in flight (an .xpp being
    written on save) gets EXIT_GRACE seconds to finish while the server shuts down; after that the
    process ends anyway. Why: work that never returns (a bug; seen once, an orphaned server spinning
    after its Neovim had quit, its main thread waiting for a thread at shutdown, cause not found) must
    not keep a server alive without a client."""

    def leave() -> None:
        log.error("work still running %.0f s after the client's stream ended: exiting", EXIT_GRACE)
        logging.shutdown()
        code = getattr(protocol, "exit_code", None)
        os._exit(0 if code is None else code)

    timer = threading.Timer(EXIT_GRACE, leave)
    timer.daemon = True
    timer.start()


if __name__ == "__main__":
    sys.exit(main())
