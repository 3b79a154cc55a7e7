"""Lint in the language server (the logic is server/analysis/lint.py and server/analysis/fixes.py; the
carried lint diagnostics are server/lsp/lint_carry.py): lint diagnostics, Format Document / Selection,
formatting while typing (after ``=>`` and after a line break), and code actions (lint quick fixes,
"ignore this check on this line", fix all, and quick fixes for the parser's and validator's findings).

After each publish (:func:`after_publish`) the published text is linted in the lint process
(server/analysis/lint_pool.py) once typing pauses for ``LINT_DELAY`` (or, while it goes on, every
``LINT_MAX_WAIT``) and the same version is published again with the fresh lint diagnostics (unless
they are the ones already carried). Every lint result is therefore a full lint of a published text, and
the last one is that of the final text.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from lsprotocol import types

from puppet_xpp.server.analysis import fixes, lint
from puppet_xpp.server.analysis.document import Span, path_of_uri, to_lsp_diagnostics
from puppet_xpp.server.lsp import convert, lint_carry, publish, sync, text
from puppet_xpp.server.lsp.language_server import PuppetServer
from puppet_xpp.server.lsp.session import LINT, DocState

log = logging.getLogger("puppet-xpp.lsp")
T = TypeVar("T")

LINT_DELAY = 0.15  # seconds without a new version before the published text is linted
LINT_MAX_WAIT = 1.0  # ... but while typing goes on, at least once in this many seconds


# -- diagnostics ------------------------------------------------------------------------------------------


def after_publish(ls: PuppetServer, st: DocState) -> None:
    """Event loop (after a publish): lint the published text when typing pauses, unless a lint is
    already on its way (it picks the newest text up)."""
    lt = st.lint
    if lt.snap is None or not ls.session.lint_active(st.uri):
        return
    if lt.job is None or lt.job.done():
        lt.job = asyncio.ensure_future(lint_loop(ls, st))


def _current(ls: PuppetServer, st: DocState) -> bool:
    return ls.session.documents.get(st.uri) is st and st.refused is None and ls.session.lint_active(st.uri)


async def lint_loop(ls: PuppetServer, st: DocState) -> None:
    lt = st.lint
    while True:
        await asyncio.sleep(LINT_DELAY / 3)
        if not _current(ls, st):
            return
        snap = lt.snap
        if st.published != st.version:
            continue  # newer edits are being analysed: lint their text once it is published
        now = time.monotonic()
        if now - lt.analysed_at < LINT_DELAY and now - lt.linted_at < LINT_MAX_WAIT:
            continue  # still typing
        if snap is None or snap.version != st.version:
            return  # published without an analysis (binary content, internal error): nothing to lint
        res = lt.result
        if res.text != snap.text:
            try:
                found = await ls.session.lint_pool.run(
                    lint.diagnostics, snap.text, snap.path, ls.session.settings.lint, snap.encoding
                )
            except Exception as e:  # lint must never cost the parser's diagnostics
                log.exception("lint failed for %s", st.uri)
                ls.log(f"puppet-xpp: lint failed for {st.uri}: {e!r}", types.MessageType.Error)
                return
            lt.result = lint_carry.LintResult(snap.text, found, snap.seq)
            lt.linted_at = time.monotonic()
        elif res.seq != snap.seq:  # the linted text again (an edit undone): carried whole from here
            lt.result = res._replace(seq=snap.seq)
        if not _current(ls, st):
            return
        store = st.diagnostics
        if st.version == snap.version and store.version == snap.version and st.published == snap.version:
            if lt.result.diags != store.get(LINT):  # else the carried result was already right
                store.set(snap.version, LINT, lt.result.diags)
                publish.publish(ls, st)
            return


# -- requests -----------------------------------------------------------------------------------------------


async def _snapshot(
    ls: PuppetServer, uri: str, extra: Callable[[DocState], T]
) -> tuple[str, str | None, str, T] | None:
    """(text, path, encoding, extra(state)) of the document's current text, taken on the worker;
    None for EPP, unknown or refused documents, and documents that are not Puppet code."""
    st = ls.session.documents.get(uri)
    if st is None or uri.endswith(".epp") or not st.is_puppet:
        return None

    def run() -> tuple[str, str | None, str, T] | None:
        sync.sync_state(st)
        if st.refused is not None:
            return None
        return st.doc.text, path_of_uri(uri), st.doc.encoding, extra(st)

    return await ls.on_worker(run)


async def _in_lint_process(
    ls: PuppetServer,
    uri: str,
    fn: Callable[..., list[lint.Edit]],
    before: tuple[Any, ...],
    after: tuple[Any, ...] = (),
) -> list[lint.Edit]:
    """``fn(text, path, settings, *before, encoding, *after)`` in the lint process on the current text."""
    try:
        snap = await _snapshot(ls, uri, lambda st: None)
        if snap is None:
            return []
        doc_text, path, enc, _ = snap
        return await ls.session.lint_pool.run(
            fn, doc_text, path, ls.session.settings.lint, *before, enc, *after
        )
    except Exception as e:
        log.exception("lint request failed for %s", uri)
        ls.log(f"puppet-xpp: lint request failed for {uri}: {e!r}", types.MessageType.Error)
        return []


def validator_fixes(st: DocState, rng: Span) -> list[types.CodeAction]:
    """Worker thread: quick fixes for the parser's and validator's diagnostics in ``rng``."""
    doc = st.doc
    if text.has_lone_cr_bytes(doc.data):  # published positions follow LSP's line rule there, not ours
        return []
    an = doc.analysis()
    li = an.lines
    start, end = li.offset(*rng[0]), li.offset(*rng[1])
    found = fixes.quick_fixes(an, doc.config, start, end)
    if not found:
        return []
    shown = dict(zip([id(d) for d in an.diagnostics if d.severity != "ignore"], to_lsp_diagnostics(an)))
    out = []
    for f in found:
        a, b, new = f.edit
        d = shown.get(id(f.diagnostic))
        out.append(
            types.CodeAction(
                title=f.title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[convert.diagnostic(d)] if d is not None else None,
                is_preferred=True,
                edit=types.WorkspaceEdit(
                    changes={st.uri: convert.text_edits([(li.position(a), li.position(b), new)])}
                ),
            )
        )
    return out


async def formatting(ls: PuppetServer, params: types.DocumentFormattingParams) -> list[types.TextEdit]:
    found = await _in_lint_process(ls, params.text_document.uri, lint.formatting, (), (None,))
    return convert.text_edits(found)


async def range_formatting(
    ls: PuppetServer, params: types.DocumentRangeFormattingParams
) -> list[types.TextEdit]:
    rng = convert.span_of(params.range)
    found = await _in_lint_process(ls, params.text_document.uri, lint.formatting, (), (rng,))
    return convert.text_edits(found)


ON_TYPE_FORMATTING = types.DocumentOnTypeFormattingOptions(
    first_trigger_character=">", more_trigger_character=["\n"]
)


async def on_type_formatting(
    ls: PuppetServer, params: types.DocumentOnTypeFormattingParams
) -> list[types.TextEdit]:
    pos = convert.pos_of(params.position)
    found = await _in_lint_process(ls, params.text_document.uri, lint.on_type_formatting, (pos, params.ch))
    return convert.text_edits(found)


CODE_ACTIONS = types.CodeActionOptions(
    code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll]
)


async def code_action(ls: PuppetServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    rng = convert.span_of(params.range)
    out: list[types.CodeAction] = []
    try:
        snap = await _snapshot(ls, uri, lambda st: validator_fixes(st, rng))
    except Exception as e:
        log.exception("code actions failed for %s", uri)
        ls.log(f"puppet-xpp: code actions failed for {uri}: {e!r}", types.MessageType.Error)
        return out
    if snap is None:
        return out
    doc_text, path, enc, found = snap
    out.extend(found)
    if not ls.session.lint_active(uri):
        return out
    try:
        actions = await ls.session.lint_pool.run(
            lint.code_actions, doc_text, path, ls.session.settings.lint, rng, enc
        )
    except Exception as e:
        log.exception("lint code actions failed for %s", uri)
        ls.log(f"puppet-xpp: lint code actions failed for {uri}: {e!r}", types.MessageType.Error)
        return out
    for a in actions:
        kind = types.CodeActionKind.QuickFix if a.kind == "quickfix" else types.CodeActionKind.SourceFixAll
        out.append(
            types.CodeAction(
                title=a.title,
                kind=kind,
                diagnostics=[convert.diagnostic(a.diagnostic)] if a.diagnostic is not None else None,
                edit=types.WorkspaceEdit(changes={uri: convert.text_edits(a.edits)}),
            )
        )
    return out
