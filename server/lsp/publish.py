"""The one publisher of diagnostics: every ``textDocument/publishDiagnostics`` the server sends goes out
from here, made of a document's diagnostics by source (server/lsp/session.py ``DiagnosticsStore``:
parse and validation, lint, the deep checks; for a Puppetfile or a metadata.json, its own analysis's,
whose ``source`` names it: server/analysis/filekinds.py), capped per source (server/lsp/text.py: errors first,
at most ``MAX_DIAGNOSTICS`` of each source, then one "and N more"), so lint never hides a parse error.

A new version of a manifest goes out once its deep findings are in (server/lsp/deep.py ``holds``: when
they are on and the workspace index is complete), so that one publish holds every source of it.

A document opened while the server was loading may have had its first diagnostics published by the
start-up front (server/lsp/startup.py; ``Session.front_published``): the server's first publish of it
is not sent when it holds exactly those (same version, same diagnostics), so the client sees the
publishes it sees without the front -- lint's and the deep checks' follow as they would -- the first
one earlier.  Anything else (another version, the deep findings in, the settings pulled from the client
changed the check) goes out as usual, after the front's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from puppet_xpp.server.analysis.document import SEVERITY_ERROR, SEVERITY_INFO, LspDiagnostic
from puppet_xpp.server.lsp import convert, text
from puppet_xpp.server.lsp.session import SOURCES, DiagnosticKey, DiagnosticsStore, DocState

if TYPE_CHECKING:
    from puppet_xpp.server.lsp.language_server import PuppetServer


def capped(diags: list[LspDiagnostic]) -> list[LspDiagnostic]:
    """At most text.MAX_DIAGNOSTICS of one source's ``diags``: the most severe, in their order, then one
    "and N more" where the first one left out starts."""
    limit = text.MAX_DIAGNOSTICS
    if len(diags) <= limit:
        return diags
    # the usual case (lint's warnings past the first ones): nothing left out is more severe than what
    # the first ``limit`` hold, so those are the most severe in their order, without sorting them all on
    # every keystroke (the same list the sort gives)
    least = max(d.severity for d in diags[:limit])
    if all(d.severity >= least for d in diags[limit:]):
        d = diags[limit]
        note = LspDiagnostic(
            d.start, d.end, SEVERITY_INFO, "TOO_MANY_DIAGNOSTICS", f"and {len(diags) - limit} more"
        )
        return [*diags[:limit], note]
    order = {id(d): k for k, d in enumerate(diags)}
    shown, more = text.cap(diags, severity=lambda d: d.severity)
    if not more:
        return shown
    kept = sorted(shown, key=lambda d: order[id(d)])
    ids = {id(d) for d in kept}
    d = next(d for d in diags if id(d) not in ids)
    note = LspDiagnostic(d.start, d.end, SEVERITY_INFO, "TOO_MANY_DIAGNOSTICS", f"and {more} more")
    return [*kept, note]


def publishable(store: DiagnosticsStore) -> list[LspDiagnostic]:
    """What a publish of ``store`` sends: each source capped on its own (server/lsp/session.py's SOURCES
    order)."""
    return [d for source in SOURCES for d in capped(store.get(source))]


def publish(ls: PuppetServer, st: DocState) -> None:
    """Event loop: publish the diagnostics ``st`` holds, as their version -- unless the deep checks hold
    this version until their findings are in (they publish it then).  The deep checks' modules are
    imported by the first publish (not by the server's start: the first answers do not need them)."""
    from puppet_xpp.server.lsp import deep

    if deep.holds(ls, st):
        return
    send(ls, st)


def send(ls: PuppetServer, st: DocState) -> None:
    """Event loop: publish the diagnostics ``st`` holds, as their version, now (unless the start-up
    front published exactly that: see the module's docstring).  A diagnostic published last time (the
    lint diagnostics carried over, most parse diagnostics) reuses its lsprotocol form: building those
    is most of the cost of a publish of a file with many diagnostics (pygls then unstructures and
    encodes them; same JSON either way)."""
    store = st.diagnostics
    old = store.converted
    new: dict[DiagnosticKey, types.Diagnostic] = {}
    out = []
    shown = publishable(store)
    for d in shown:
        key = (*d.start, *d.end, d.severity, d.code, d.source, d.message, d.deprecated)
        c = new.get(key) or old.get(key) or convert.diagnostic(d)
        new[key] = c
        out.append(c)
    store.converted = new
    early = ls.session.front_published.pop(st.uri, None)
    if early is not None and early == (store.version, shown):
        return  # (the front's publish was this one)
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=st.uri, version=store.version, diagnostics=out)
    )


def clear(ls: PuppetServer, uri: str) -> None:
    """No diagnostics for ``uri`` (closed)."""
    ls.session.front_published.pop(uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def out_of_sync(ls: PuppetServer, uri: str, why: str) -> None:
    """The one diagnostic of a document whose change could not be applied (refused until reopened)."""
    ls.session.front_published.pop(uri, None)
    first = why.splitlines()[0][:200] if why else "?"
    d = LspDiagnostic(
        (0, 0),
        (0, 0),
        SEVERITY_ERROR,
        "DOCUMENT_OUT_OF_SYNC",
        f"puppet-xpp could not apply a change to this document (the client sent a malformed change: {first}); "
        "close and reopen it",
    )
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=[convert.diagnostic(d)])
    )
