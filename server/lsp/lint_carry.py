"""The last lint result of a document, carried over to its newer texts (no pygls here).

Lint diagnostics never delay the parse and validator diagnostics of a keystroke: those are published
at once, with the last lint result carried over (:func:`with_lint`: kept on the lines the edits since
the lint did not touch, shifted below them); server/lsp/lint.py then lints the published text in the
lint process once typing pauses and publishes the same version again with the fresh lint diagnostics.

Carrying costs O(edits x lint diagnostics), not O(file), on every keystroke: the worker reports each
content change it applies (:func:`note_change`, as lines replaced and line breaks inserted), and the
carried diagnostics follow those changes (the ones that do not move stay the same objects; changes on
lines that meet are followed as one), and the publisher reuses the converted form of each diagnostic
it published before.  A change that cannot be followed that way (a whole-text replacement, a document
with a lone CR, whose LSP lines are not its ``\\n`` lines, a line count not known) falls back to
comparing the linted text with the current one line by line (:func:`shifted`).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import NamedTuple

from puppet_xpp.server.analysis.document import LspDiagnostic, Span
from puppet_xpp.server.lsp.text import has_lone_cr_bytes


class LintResult(NamedTuple):
    """A lint result: the text linted, its diagnostics, and how many content changes the worker had
    applied when it analysed that text (the changes after that one are the ones to carry it through)."""

    text: str | None
    diags: list[LspDiagnostic]
    seq: int = 0


class Snapshot(NamedTuple):
    """A text the worker analysed: its version, text, path, position encoding, and the content
    changes applied before it."""

    version: int | None
    text: str
    path: str | None
    encoding: str
    seq: int


NO_RESULT = LintResult(None, [])
LOST = -1  # the ``first`` line of a change that cannot be followed line by line
MAX_CHANGES = 32  # more changes to follow than this at once: comparing the texts is cheaper
MAX_KEPT = 1000  # changes kept for a lint result still to come (more: that result is compared instead)

# a content change as lines: (seq, first, last, breaks): the text's lines first..last (0-based, before
# the change) replaced by text with ``breaks`` line breaks
Change = tuple[int, int, int, int]


@dataclass
class LintState:
    """One open document's lint state. ``snap`` and ``result`` are shared by the worker thread and the
    event loop (each replaced whole, never changed in place); the fields after ``linted_at`` belong to
    the worker thread."""

    snap: Snapshot | None = None  # the text last analysed (None: never analysed)
    result: LintResult = NO_RESULT
    job: asyncio.Future[None] | None = field(default=None, repr=False)
    analysed_at: float = 0.0  # time.monotonic() of the last analysis (snap)
    linted_at: float = 0.0  # ... and of the last lint result
    seq: int = 0  # content changes applied so far
    lines: int | None = None  # line count of the current text (None: not known)
    changes: list[Change] = field(default_factory=list)  # the changes after result.seq
    # (the result carried, the seq it was carried to, its diagnostics on the text after that change)
    carried: tuple[LintResult, int, list[LspDiagnostic]] = (NO_RESULT, 0, [])


def moved(d: LspDiagnostic, delta: int) -> LspDiagnostic:
    if delta == 0:
        return d
    (l0, c0), (l1, c1) = d.start, d.end
    return LspDiagnostic(
        (l0 + delta, c0), (l1 + delta, c1), d.severity, d.code, d.message, d.source, d.deprecated
    )


def shifted(old: str | None, diags: list[LspDiagnostic], new: str) -> list[LspDiagnostic]:
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
        d if d.start[0] < top else moved(d, delta)
        for d in diags
        if d.start[0] < top or d.start[0] >= len(a) - bottom
    ]


def merged(changes: list[Change]) -> list[Change]:
    """``changes`` with each one whose lines meet the lines the one before produced folded into it
    (typing: a burst of changes on a few lines becomes one): the same lines dropped, the same moved."""
    out: list[Change] = []
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


def through(diags: list[LspDiagnostic], changes: list[Change]) -> list[LspDiagnostic] | None:
    """``diags`` carried through ``changes`` (see LintState.changes): dropped on the lines a change
    replaced, moved below them; None if a change cannot be followed."""
    changes = merged(changes)
    if len(changes) > MAX_CHANGES:
        return None
    for _seq, first, last, breaks in changes:
        if first == LOST:
            return None
        delta = breaks - (last - first)
        diags = [
            d if d.start[0] < first else moved(d, delta)
            for d in diags
            if d.start[0] < first or d.start[0] > last
        ]
    return diags


def note_change(lt: LintState, rng: Span | None, text: str, data: bytes) -> None:
    """Worker thread (server.lsp.sync), before it applies a content change (``rng`` in LSP positions of
    the current text ``data``, None for the whole text): the change as lines, for :func:`with_lint`."""
    if lt.snap is None:
        return  # never analysed: no lint result to carry yet
    if rng is not None and rng[0] == rng[1] and not text:
        return  # changes nothing
    lt.seq += 1
    if rng is None or lt.lines is None or has_lone_cr_bytes(data):
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


def with_lint(lt: LintState, snap: Snapshot, active: bool, lines: int | None) -> list[LspDiagnostic]:
    """Worker thread (server.lsp.sync.analyze): the last lint result carried over to the text of
    ``snap`` (``lines`` lines, None: not known; ``active``: lint is on for the document); records the
    text for the next lint."""
    lt.lines = lines
    lt.snap = snap
    lt.analysed_at = time.monotonic()
    if not active:
        lt.result = NO_RESULT
        lt.carried = (NO_RESULT, lt.seq, [])
        lt.changes = []
        return []
    res = lt.result
    was, since, carried = lt.carried
    if was is not res:  # a new lint result: carry it from its own text
        since, carried = res.seq, res.diags
        lt.changes = [c for c in lt.changes if c[0] > res.seq]
    kept = through(carried, [c for c in lt.changes if c[0] > since])
    if kept is None:
        kept = shifted(res.text, res.diags, snap.text)
    lt.carried = (res, lt.seq, kept)
    if len(lt.changes) > MAX_KEPT:  # (a lint still to come is compared instead)
        lt.changes = [(lt.seq, LOST, 0, 0)]
    return kept
