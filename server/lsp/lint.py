"""pygls handlers for lint (the logic is server/analysis/lint.py and server/analysis/fixes.py): lint
diagnostics, Format Document / Selection, formatting while typing (after ``=>`` and after a line
break), and code actions (lint quick fixes, "ignore this check on this line", fix all, and quick fixes
for the parser's and validator's findings). ``register(ls)`` adds the handlers; ``configure(settings)``
takes the client's settings (section ``puppet``, key ``lint``).

Lint diagnostics never delay the parse and validator diagnostics of a keystroke: lsp.py publishes
those at once, with the last lint result carried over (:func:`with_lint`: kept on the lines the edits
since the lint did not touch, shifted below them); :func:`after_publish` then lints the published
text in the lint process (server/analysis/lint_pool.py) once typing pauses for ``LINT_DELAY`` (or, while it
goes on, every ``LINT_MAX_WAIT``) and publishes the same version again with the fresh lint
diagnostics (unless they are the ones already carried). Every lint result is therefore a full lint of
a published text, and the last one is that of the final text.

Carrying costs O(edits x lint diagnostics), not O(file), on every keystroke: the worker reports each
content change it applies (:func:`note_change`, as lines replaced and line breaks inserted), and the
carried diagnostics follow those changes (the ones that do not move stay the same objects; changes
on lines that meet are followed as one), and lsp.py reuses the converted form of each diagnostic it
published before. A change that cannot be followed that way (a whole-text replacement, a
document with a lone CR, whose LSP lines are not its ``\n`` lines, a line count not known) falls back
to comparing the linted text with the current one line by line (:func:`shifted`).
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from lsprotocol import types as L

from puppet_xpp.server.analysis import fixes as AF
from puppet_xpp.server.analysis import lint as AL
from puppet_xpp.server.analysis import lint_pool
from puppet_xpp.server.analysis.document import path_of_uri, to_lsp_diagnostics

log = logging.getLogger("puppet-xpp.lsp")

# lint is on by default (puppet-lint's default checks, as the Puppet VS Code extension runs them);
# ``puppet.lint.enabled: false`` turns its diagnostics and quick fixes off; formatting stays available
_settings = AL.LintSettings()
LINT_DELAY = 0.15  # seconds without a new version before the published text is linted
LINT_MAX_WAIT = 1.0  # ... but while typing goes on, at least once in this many seconds


def configure(d: Any) -> bool:
    """Take the lint settings from a client settings object (unknown keys ignored); True if they
    changed (open documents then need new diagnostics)."""
    global _settings
    old = _settings
    _settings = AL.LintSettings.from_dict(d, _settings)
    return _settings != old


def settings() -> AL.LintSettings:
    return _settings


# -- diagnostics ------------------------------------------------------------------------------------------


class _Result(NamedTuple):
    """A lint result: the text linted, its diagnostics, and how many content changes the worker had
    applied when it analysed that text (the changes after that one are the ones to carry it through)."""

    text: str | None
    diags: list[AL.LintDiag]
    seq: int = 0


_NO_RESULT = _Result(None, [])
LOST = -1  # the ``first`` line of a change that cannot be followed line by line
MAX_CHANGES = 32  # more changes to follow than this at once: comparing the texts is cheaper
MAX_KEPT = 1000  # changes kept for a lint result still to come (more: that result is compared instead)


@dataclass
class _Lint:
    """One open document's lint state. ``snap``, ``parse``, ``result`` are shared by the worker thread and
    the event loop (each replaced whole, never changed in place); the fields after ``linted_at`` belong
    to the worker thread."""

    # (version, text, path, encoding, seq) last analysed; seq: content changes applied before it
    snap: tuple[int, str, str | None, str, int] | None = None
    # (version, its parse and validator diagnostics, the lint diagnostics published with them)
    parse: tuple[int, list[Any], list[AL.LintDiag]] = (-1, [], [])
    result: _Result = _NO_RESULT
    job: asyncio.Future[None] | None = field(default=None, repr=False)
    analysed_at: float = 0.0  # time.monotonic() of the last analysis (snap)
    linted_at: float = 0.0  # ... and of the last lint result
    seq: int = 0  # content changes applied so far
    lines: int | None = None  # line count of the current text (None: not known)
    # the changes after result.seq, as (seq, first, last, breaks): the text's lines first..last (0-based,
    # before the change) replaced by text with ``breaks`` line breaks
    changes: list[tuple[int, int, int, int]] = field(default_factory=list)
    # (the result carried, the seq it was carried to, its diagnostics on the text after that change)
    carried: tuple[_Result, int, list[AL.LintDiag]] = (_NO_RESULT, 0, [])


_docs: weakref.WeakKeyDictionary[Any, _Lint] = weakref.WeakKeyDictionary()


def _active(uri: str) -> bool:
    return _settings.enabled and not uri.endswith(".epp")


def _moved(d: AL.LintDiag, delta: int) -> AL.LintDiag:
    if delta == 0:
        return d
    (l0, c0), (l1, c1) = d.start, d.end
    return AL.LintDiag(
        (l0 + delta, c0), (l1 + delta, c1), d.severity, d.code, d.message, d.source, d.deprecated
    )


def shifted(old: str | None, diags: list[AL.LintDiag], new: str) -> list[AL.LintDiag]:
    """The lint diagnostics of ``old`` that still hold in ``new`` as far as lines go: those above the
    first changed line as they were, those below the last changed line moved by the lines added or
    removed; those on changed lines are dropped (the next lint gives them again). O(file): the
    fallback of :func:`with_lint`."""
    if old is None or not diags:
        return []
    if old == new:
        return diags
    a, b = old.split("\n"), new.split("\n")
    n = min(len(a), len(b))
    top = 0
    while top < n and a[top] == b[top]:
        top += 1
    bottom = 0
    while bottom < n - top and a[-1 - bottom] == b[-1 - bottom]:
        bottom += 1
    delta = len(b) - len(a)
    return [
        d if d.start[0] < top else _moved(d, delta)
        for d in diags
        if d.start[0] < top or d.start[0] >= len(a) - bottom
    ]


def _merged(changes: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """``changes`` with each one whose lines meet the lines the one before produced folded into it
    (typing: a burst of changes on a few lines becomes one): the same lines dropped, the same moved."""
    out: list[tuple[int, int, int, int]] = []
    for c in changes:
        seq, fb, lb, bb = c
        if out and fb != LOST:
            _, fa, la, ba = out[-1]
            if fa != LOST and fb <= fa + ba and lb >= fa:
                first = min(fa, fb)
                last = max(la, lb - (ba - (la - fa)))  # (lines of the first change's text or below it)
                out[-1] = (seq, first, last, max(fa + ba, lb) + bb - (lb - fb) - first)
                continue
        out.append(c)
    return out


def _through(diags: list[AL.LintDiag], changes: list[tuple[int, int, int, int]]) -> list[AL.LintDiag] | None:
    """``diags`` carried through ``changes`` (see _Lint.changes): dropped on the lines a change
    replaced, moved below them; None if a change cannot be followed."""
    changes = _merged(changes)
    if len(changes) > MAX_CHANGES:
        return None
    for _seq, first, last, breaks in changes:
        if first == LOST:
            return None
        delta = breaks - (last - first)
        diags = [
            d if d.start[0] < first else _moved(d, delta)
            for d in diags
            if d.start[0] < first or d.start[0] > last
        ]
    return diags


def note_change(st: Any, rng: tuple[tuple[int, int], tuple[int, int]] | None, text: str) -> None:
    """Worker thread (lsp._sync_state), before it applies a content change (``rng`` in LSP positions of
    the current text, None for the whole text): the change as lines, for :func:`with_lint`."""
    from puppet_xpp.server.lsp.text import has_lone_cr_bytes

    lt = _docs.get(st)
    if lt is None:
        return  # never analysed: no lint result to carry yet
    if rng is not None and rng[0] == rng[1] and not text:
        return  # changes nothing
    lt.seq += 1
    if rng is None or lt.lines is None or has_lone_cr_bytes(st.doc.data):
        lt.lines = text.count("\n") + 1 if rng is None else None
        lt.changes.append((lt.seq, LOST, 0, 0))
        return
    # the lines Document.apply_change replaces: positions in order, lines clamped to the text
    (l0, _), (l1, _) = sorted(rng)
    n = lt.lines
    first, last = min(max(l0, 0), n - 1), min(max(l1, 0), n - 1)
    breaks = text.count("\n")
    lt.lines = n - (last - first) + breaks
    lt.changes.append((lt.seq, first, last, breaks))


def with_lint(st: Any, version: int, diags: list[Any], lines: int | None = None) -> list[Any]:
    """Worker thread (lsp._analyze): the parse and validator diagnostics of ``version`` plus the last
    lint result carried over to its text (``lines`` lines, None: not known); records the text for
    the next lint."""
    lt = _docs.get(st)
    if lt is None:
        lt = _docs[st] = _Lint()
    doc = st.doc
    text = doc.text
    lt.lines = lines
    lt.snap = (version, text, path_of_uri(st.uri), doc.encoding, lt.seq)
    lt.analysed_at = time.monotonic()
    if not _active(st.uri):
        lt.parse = (version, list(diags), [])
        lt.result = _NO_RESULT
        lt.carried = (_NO_RESULT, lt.seq, [])
        lt.changes = []
        return diags
    res = lt.result
    was, since, carried = lt.carried
    if was is not res:  # a new lint result: carry it from its own text
        since, carried = res.seq, res.diags
        lt.changes = [c for c in lt.changes if c[0] > res.seq]
    moved = _through(carried, [c for c in lt.changes if c[0] > since])
    if moved is None:
        moved = shifted(res.text, res.diags, text)
    lt.carried = (res, lt.seq, moved)
    if len(lt.changes) > MAX_KEPT:  # (a lint still to come is compared instead)
        lt.changes = [(lt.seq, LOST, 0, 0)]
    lt.parse = (version, list(diags), moved)
    return [*diags, *moved]


def after_publish(ls: Any, st: Any) -> None:
    """Event loop (lsp._diagnostics_loop, after a publish): lint the published text when typing
    pauses, unless a lint is already on its way (it picks the newest text up)."""
    lt = _docs.get(st)
    if lt is None or not _active(st.uri):
        return
    if lt.job is None or lt.job.done():
        lt.job = asyncio.ensure_future(_lint_loop(ls, st, lt))


async def _lint_loop(ls: Any, st: Any, lt: _Lint) -> None:
    while True:
        await asyncio.sleep(LINT_DELAY / 3)
        if ls.docs.get(st.uri) is not st or st.refused is not None or not _active(st.uri):
            return
        snap = lt.snap
        if st.published != st.version:
            continue  # newer edits are being analysed: lint their text once it is published
        now = time.monotonic()
        if now - lt.analysed_at < LINT_DELAY and now - lt.linted_at < LINT_MAX_WAIT:
            continue  # still typing
        if snap is None or snap[0] != st.version:
            return  # published without an analysis (binary content, internal error): nothing to lint
        version, text, path, enc, seq = snap
        res = lt.result
        if res.text != text:
            try:
                found = await lint_pool.run(AL.diagnostics, text, path, _settings, enc)
            except Exception as e:  # lint must never cost the parser's diagnostics
                log.exception("lint failed for %s", st.uri)
                ls.log(f"puppet-xpp: lint failed for {st.uri}: {e!r}", L.MessageType.Error)
                return
            lt.result = _Result(text, found, seq)
            lt.linted_at = time.monotonic()
        elif res.seq != seq:  # the linted text again (an edit undone): carried whole from here
            lt.result = res._replace(seq=seq)
        if ls.docs.get(st.uri) is not st or st.refused is not None or not _active(st.uri):
            return
        if st.version == version and lt.parse[0] == version and st.published == version:
            if lt.result.diags != lt.parse[2]:  # else the carried result was already right
                from puppet_xpp.server.lsp import server as lsp

                lsp._publish(ls, st, version, lsp._capped([*lt.parse[1], *lt.result.diags]))
            return


# -- requests -----------------------------------------------------------------------------------------------


def _edits(edits: list[AL.Edit]) -> list[L.TextEdit]:
    return [
        L.TextEdit(
            range=L.Range(
                start=L.Position(line=a[0], character=a[1]), end=L.Position(line=b[0], character=b[1])
            ),
            new_text=t,
        )
        for a, b, t in edits
    ]


def _lsp_diag(d: Any) -> L.Diagnostic:
    """A diagnostic as lsp.py publishes it (its conversion, so that a code action's diagnostic equals
    the published one)."""
    from puppet_xpp.server.lsp import server as lsp

    conv: Callable[[Any], L.Diagnostic] = lsp._diag
    return conv(d)


async def _snapshot(ls: Any, uri: str, extra: Callable[[Any], Any] | None = None) -> Any:
    """(text, path, encoding, extra(state)) of the document's current text, taken on the worker;
    None for EPP, unknown or refused documents."""
    from puppet_xpp.server.lsp.server import _sync_state

    st = ls.docs.get(uri)
    if st is None or uri.endswith(".epp"):
        return None

    def run() -> Any:
        _sync_state(st)
        if st.refused is not None:
            return None
        return st.doc.text, path_of_uri(uri), st.doc.encoding, extra(st) if extra else None

    return await ls.on_worker(run)


async def _in_lint_process(
    ls: Any, uri: str, fn: Callable[..., Any], before: tuple[Any, ...], after: tuple[Any, ...] = ()
) -> Any:
    """``fn(text, path, settings, *before, encoding, *after)`` in the lint process on the current text."""
    try:
        snap = await _snapshot(ls, uri)
        if snap is None:
            return None
        text, path, enc, _ = snap
        return await lint_pool.run(fn, text, path, _settings, *before, enc, *after)
    except Exception as e:
        log.exception("lint request failed for %s", uri)
        ls.log(f"puppet-xpp: lint request failed for {uri}: {e!r}", L.MessageType.Error)
        return None


def _validator_fixes(st: Any, rng: tuple[tuple[int, int], tuple[int, int]]) -> list[L.CodeAction]:
    """Worker thread: quick fixes for the parser's and validator's diagnostics in ``rng``."""
    from puppet_xpp.server.lsp.text import has_lone_cr_bytes

    doc = st.doc
    if has_lone_cr_bytes(doc.data):  # published positions follow LSP's line rule there, not ours
        return []
    an = doc.analysis()
    li = an.lines
    start, end = li.offset(*rng[0]), li.offset(*rng[1])
    fixes = AF.quick_fixes(an, doc.config, start, end)
    if not fixes:
        return []
    shown = dict(zip([id(d) for d in an.diagnostics if d.severity != "ignore"], to_lsp_diagnostics(an)))
    out = []
    for f in fixes:
        a, b, new = f.edit
        (l0, c0), (l1, c1) = li.position(a), li.position(b)
        d = shown.get(id(f.diagnostic))
        out.append(
            L.CodeAction(
                title=f.title,
                kind=L.CodeActionKind.QuickFix,
                diagnostics=[_lsp_diag(d)] if d is not None else None,
                is_preferred=True,
                edit=L.WorkspaceEdit(changes={st.uri: _edits([((l0, c0), (l1, c1), new)])}),
            )
        )
    return out


def register(ls: Any) -> None:
    feature: Callable[..., Callable[[Callable[..., Any]], Callable[..., Any]]] = ls.feature

    @feature(L.TEXT_DOCUMENT_FORMATTING)
    async def formatting(ls: Any, params: L.DocumentFormattingParams) -> list[L.TextEdit]:
        found = await _in_lint_process(ls, params.text_document.uri, AL.formatting, (), (None,))
        return _edits(found or [])

    @feature(L.TEXT_DOCUMENT_RANGE_FORMATTING)
    async def range_formatting(ls: Any, params: L.DocumentRangeFormattingParams) -> list[L.TextEdit]:
        r = params.range
        rng = ((r.start.line, r.start.character), (r.end.line, r.end.character))
        found = await _in_lint_process(ls, params.text_document.uri, AL.formatting, (), (rng,))
        return _edits(found or [])

    @feature(
        L.TEXT_DOCUMENT_ON_TYPE_FORMATTING,
        L.DocumentOnTypeFormattingOptions(first_trigger_character=">", more_trigger_character=["\n"]),
    )
    async def on_type_formatting(ls: Any, params: L.DocumentOnTypeFormattingParams) -> list[L.TextEdit]:
        pos = (params.position.line, params.position.character)
        found = await _in_lint_process(ls, params.text_document.uri, AL.on_type_formatting, (pos, params.ch))
        return _edits(found or [])

    @feature(
        L.TEXT_DOCUMENT_CODE_ACTION,
        L.CodeActionOptions(code_action_kinds=[L.CodeActionKind.QuickFix, L.CodeActionKind.SourceFixAll]),
    )
    async def code_action(ls: Any, params: L.CodeActionParams) -> list[L.CodeAction]:
        uri = params.text_document.uri
        r = params.range
        rng = ((r.start.line, r.start.character), (r.end.line, r.end.character))
        out: list[L.CodeAction] = []
        try:
            snap = await _snapshot(ls, uri, lambda st: _validator_fixes(st, rng))
        except Exception as e:
            log.exception("code actions failed for %s", uri)
            ls.log(f"puppet-xpp: code actions failed for {uri}: {e!r}", L.MessageType.Error)
            return out
        if snap is None:
            return out
        text, path, enc, fixes = snap
        out.extend(fixes)
        if not _active(uri):
            return out
        try:
            actions = await lint_pool.run(AL.code_actions, text, path, _settings, rng, enc)
        except Exception as e:
            log.exception("lint code actions failed for %s", uri)
            ls.log(f"puppet-xpp: lint code actions failed for {uri}: {e!r}", L.MessageType.Error)
            return out
        for a in actions:
            kind = L.CodeActionKind.QuickFix if a.kind == "quickfix" else L.CodeActionKind.SourceFixAll
            out.append(
                L.CodeAction(
                    title=a.title,
                    kind=kind,
                    diagnostics=[_lsp_diag(a.diagnostic)] if a.diagnostic is not None else None,
                    edit=L.WorkspaceEdit(changes={uri: _edits(a.edits)}),
                )
            )
        return out
