"""The analysis worker's side of a document (one thread runs all parsing and analysis, in order):
apply the content changes received (:func:`sync_state`), analyse the current text
(:func:`analyze`), and run a feature over the current analysis (:func:`with_analysis`) -- or, for a
document that is not Puppet code (a Puppetfile, a metadata.json: server/analysis/filekinds.py), over
its own analysis (:func:`with_file`); such a document is never parsed as Puppet."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TypeVar

from lsprotocol import types

from puppet_xpp.grammar.incremental.compact import HUGE_BYTES
from puppet_xpp.server.analysis import filekinds
from puppet_xpp.server.analysis.document import (
    APART_BYTES,
    SEVERITY_ERROR,
    Analysis,
    Document,
    LineIndex,
    LspDiagnostic,
    Span,
    path_of_uri,
    to_lsp_diagnostics,
)
from puppet_xpp.server.lsp import lint_carry, text
from puppet_xpp.server.lsp.language_server import PuppetServer
from puppet_xpp.server.lsp.session import DocState, Session

log = logging.getLogger("puppet-xpp.lsp")
T = TypeVar("T")


def sync_state(st: DocState) -> int | None:
    """Worker thread: apply queued edits; returns the version they bring the document to."""
    with st.lock:
        changes = list(st.pending)
        version = st.version
    doc = st.doc
    for rng, new_text in changes:
        # (the lint diagnostics carried over follow it)
        lint_carry.note_change(st.lint, rng, new_text, doc.data)
        apply_change(doc, rng, new_text, queued=True)
    doc.version = version
    with st.lock:  # (text_now: the changes leave the queue as the text they make becomes synced_data)
        del st.pending[: len(changes)]
        doc.synced_data = doc.data
    return version


def text_now(st: DocState) -> bytes | None:
    """Any thread: the client's current text of the document (the text as of the changes applied
    plus those still queued, applied to a copy), without waiting for the worker; None when that is
    not sure (a document with a lone CR: the worker's line rule applies)."""
    doc = st.doc
    with st.lock:
        data = doc.synced_data
        changes = list(st.pending)
    if text.has_lone_cr_bytes(data):
        return None
    for rng, new_text in changes:
        new = text.clean_surrogates(new_text).encode("utf-8", "surrogateescape")
        if rng is None:
            data = new
        else:
            li = LineIndex(data, None, doc.encoding)
            a, b = li.offset(*rng[0]), li.offset(*rng[1])
            if b < a:
                a, b = b, a
            data = data[:a] + new + data[b:]
        if text.has_lone_cr_bytes(new):
            return None
    return data


def apply_change(doc: Document, rng: Span | None, new_text: str, queued: bool = False) -> None:
    """One content change, with LSP's line rule when the document holds a lone CR (server.lsp.text)."""
    new_text = text.clean_surrogates(new_text)
    if rng is not None and text.has_lone_cr_bytes(doc.data):
        full = doc.text
        li = doc.line_index()
        ends = []
        for line, col in rng:
            i = text.lsp_offset(full, line, col, doc.encoding)
            ends.append(li.position(len(full[:i].encode("utf-8", "surrogateescape"))))
        rng = (ends[0], ends[1])
    doc.apply_change(rng, new_text, queued)


def analyze(session: Session, st: DocState) -> tuple[int | None, list[LspDiagnostic], list[LspDiagnostic]]:
    """Worker: (version, parse and validation diagnostics, lint diagnostics carried over) of the
    current text.  Binary content is reported once and not analysed; an internal failure becomes one
    INTERNAL_ERROR (the traceback goes to the log) and the last good analysis stays for the features."""
    version = sync_state(st)
    doc = st.doc
    binary = text.binary_reason(doc.data)
    if binary is None and not st.is_puppet:
        return version, file_diagnostics(session, st), []
    if binary is not None:
        why, off = binary
        pos = doc.line_index().position(off)
        return (
            version,
            [
                LspDiagnostic(
                    pos, pos, SEVERITY_ERROR, "BINARY_CONTENT", f"binary content ({why}): not analysed"
                )
            ],
            [],
        )
    try:
        an = doc.analysis()
        diags = to_lsp_diagnostics(an)
    except Exception as e:
        from puppet_xpp.xpp.sources import format_traceback, internal_error

        log.error("analysis failed for %s:\n%s", st.uri, format_traceback(e))
        d = internal_error(e, st.uri)
        return version, [LspDiagnostic((0, 0), (0, 0), SEVERITY_ERROR, d.code, d.message)], []
    st.last_good = an
    if text.has_lone_cr_bytes(doc.data):  # positions in LSP's line rule, not Puppet's (server.lsp.text)
        li, data, enc = an.lines, doc.data, doc.encoding
        for found in diags:
            found.start = text.lsp_position(data, li.offset(*found.start), enc)
            found.end = text.lsp_position(data, li.offset(*found.end), enc)
    snap = lint_carry.Snapshot(version, doc.text, path_of_uri(st.uri), doc.encoding, st.lint.seq)
    carried = lint_carry.with_lint(st.lint, snap, session.lint_active(st.uri), len(an.lines.starts))
    return version, diags, carried


def file_diagnostics(session: Session, st: DocState) -> list[LspDiagnostic]:
    """Worker: the diagnostics of a document that is not Puppet code, by its kind's analysis (none when
    its kind has none); an internal failure becomes one INTERNAL_ERROR, as for a manifest."""
    try:
        analysis = filekinds.analysis_for(st.kind)
        return [] if analysis is None else analysis.diagnostics(session.file_text(st))
    except Exception as e:
        from puppet_xpp.xpp.sources import format_traceback, internal_error

        log.error("analysis failed for %s:\n%s", st.uri, format_traceback(e))
        d = internal_error(e, st.uri)
        return [LspDiagnostic((0, 0), (0, 0), SEVERITY_ERROR, d.code, d.message)]


def current(st: DocState) -> Analysis | None:
    """Worker: the analysis of the current text (the last good one after an internal failure), or
    None (refused, binary content, nothing good yet, not Puppet code)."""
    sync_state(st)
    if not st.is_puppet or st.refused is not None or text.binary_reason(st.doc.data) is not None:
        return None
    try:
        return st.doc.analysis()
    except Exception:  # an internal failure: the last good parse answers (see analyze)
        return st.last_good


async def analysed_apart(ls: PuppetServer, st: DocState) -> None:
    """Before the worker is given anything about a big document: its edits applied, then its analysis
    made on a thread of its own (Document.analyse_apart), so that the worker answers the other
    documents meanwhile (issue 26 item 12)."""
    doc = st.doc
    if not st.is_puppet or st.refused is not None or len(doc.data) < APART_BYTES:
        return
    if st.pending:
        await ls.on_worker(sync_state, st)
    if text.binary_reason(doc.data) is not None:
        return  # (not analysed: analyze says why)
    job = doc.analyse_apart()
    if job is not None:
        await asyncio.wrap_future(job)


async def with_analysis(ls: PuppetServer, uri: str, fn: Callable[[Analysis], T | None]) -> T | None:
    """``fn`` over the current analysis of the document ``uri`` on the worker (None when there is none,
    or ``fn`` failed: the log says why)."""
    st = ls.session.documents.get(uri)
    if st is None:
        return None
    await analysed_apart(ls, st)

    def run() -> T | None:
        an = current(st)
        return None if an is None else fn(an)

    try:
        if st.is_puppet and len(st.doc.data) >= HUGE_BYTES:
            made = await ls.on_worker(_made, st)
            if made is None:
                return None
            try:
                return await asyncio.to_thread(fn, made)
            except Exception:  # (met again on the worker, and reported there if it was no race)
                pass
        return await ls.on_worker(run)
    except Exception as e:
        ls.log(f"puppet-xpp: request failed for {uri}: {e!r}", types.MessageType.Error)
        return None


def _made(st: DocState) -> Analysis | None:
    """Worker: :func:`current` with its Program made, for a feature that runs apart.

    A feature over a huge document (grammar.incremental.compact.HUGE_BYTES: folding, symbols, semantic
    tokens over millions of tokens take seconds) runs on a thread of its own, as its analysis did
    (issue 26 item 12): on the worker it would hold up every other document's requests.  That is safe
    for such a document: each of its updates is a full parse making a new tree and token columns, so
    an edit meanwhile never changes what the feature reads (its result is for the version it was asked
    about).  A feature that fails there (it read the session while the worker changed it) is run again
    on the worker."""
    an = current(st)
    if an is not None:
        an.program = an.program  # (the parser's lazy Program, resolved here on the worker)
    return an


async def with_file(
    ls: PuppetServer, st: DocState, fn: Callable[[filekinds.FileAnalysis, filekinds.FileText], T | None]
) -> T | None:
    """``fn`` over the analysis of the non-Puppet document ``st`` and its current text, on the worker
    (None when its kind has no analysis, the document is refused or binary, or ``fn`` failed: the log
    says why)."""
    session = ls.session

    def run() -> T | None:
        sync_state(st)
        analysis = filekinds.analysis_for(st.kind)
        if analysis is None or st.refused is not None or text.binary_reason(st.doc.data) is not None:
            return None
        return fn(analysis, session.file_text(st))

    try:
        return await ls.on_worker(run)
    except Exception as e:
        ls.log(f"puppet-xpp: request failed for {st.uri}: {e!r}", types.MessageType.Error)
        return None
