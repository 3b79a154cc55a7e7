"""The deep checks in the language server (issue 30): what only a catalog compile caught so far (unknown
classes, resource types, functions and parameters, missing required parameters, wrong arity and literal
types, duplicate resources, unknown variables), found by server/analysis/deep from the workspace index
and published as diagnostics of their own source (``DEEP_SOURCE``) beside Puppet's and lint's, with
quick fixes (server/analysis/fixes.py).

When they run.  They need the workspace index: until it is complete a document's diagnostics go out
without them, and once it is (``IndexState.on_complete``) every open document is checked.  After that a
new version's diagnostics are held by the publisher (:func:`holds`, server/lsp/publish.py) until its deep
findings are in -- at most ``HOLD`` (a few milliseconds): a keystroke usually gives one publish holding
all three sources.  A check that takes longer lets the publish go with the last findings carried over to
the new text (:func:`carried`: the one the edit touched left out, the others moved), and publishes again
when done; and a document whose checks are slow (edits inside a statement of thousands of lines that is
not a class or define body, which is checked whole) is checked once typing pauses (:func:`pause`: ten times as long as the check
takes), not at every keystroke, where it would hold up the next keystroke's analysis on the worker.  Never a publish without the deep findings
and then one with them (no flicker), never a finding at a stale place.  When the index changes
(a file saved, created or deleted on disk, a folder added: ``ObservedIndex``'s listeners), Hiera's
data does (a YAML or JSON document opened, edited, saved or closed in the editor -- its buffer is what
the checks read, :func:`hiera_buffers` -- or a watched data file changed on disk: ``HieraCache``'s
listeners) or the setting (``deepChecks.enabled``) does, the open documents are checked again and
published when their findings changed (only the statements whose answers changed are checked).  A bug
of the checks themselves is logged once, never published (:func:`note_internal`).  Names are said not to exist only when the index is complete and holds the file's
module path (:func:`indexed`).

What a keystroke costs.  The findings are kept per top-level statement (:class:`DeepCache`, on the
worker thread like the analysis): a statement whose text is unchanged keeps its findings, moved with it,
while the answers to every question its checks asked of the world (``World.answer_key``: what a class,
type or function name resolves to, a Hiera key, a module) are the same -- so an edit checks again the
statement it touched, and an index change only the statements that asked about a name whose answer
changed.  A long class or define (a file that is one big class) is kept one body statement at a
time the same way (:class:`~server.analysis.deep.BodyMemo`, carried in :attr:`DeepCache.parts`):
an edit inside it checks again the body statement it touched, and what needs the whole body (its
duplicates, its unknown variables) is a cheap pass over what its statements keep.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeVar, cast

from lsprotocol import types

from puppet_xpp.grammar.gcpause import paused
from puppet_xpp.server.analysis import fixes
from puppet_xpp.server.analysis.deep import (
    DEEP_SOURCE,
    Asked,
    BodyMemo,
    Finding,
    Part,
    PartKey,
    Parts,
    Place,
    StatementResult,
    World,
    checked_statement,
    file_findings,
    top_statements,
)
from puppet_xpp.server.analysis.deep.internal import is_internal
from puppet_xpp.server.analysis.document import (
    SEVERITY_ERROR,
    SEVERITY_INFO,
    SEVERITY_WARNING,
    Analysis,
    LineIndex,
    LspDiagnostic,
    Span,
    brisk_switching,
    path_of_uri,
)
from puppet_xpp.server.analysis.hiera import Reader
from puppet_xpp.server.analysis.index import iter_symbols
from puppet_xpp.server.analysis.symbols import Sym
from puppet_xpp.server.analysis.workspace import file_context
from puppet_xpp.server.lsp import convert, text
from puppet_xpp.server.lsp.session import DEEP, DocState, ObservedIndex, Session

if TYPE_CHECKING:
    from puppet_xpp.server.lsp.language_server import PuppetServer

log = logging.getLogger("puppet-xpp.lsp")

SEVERITIES = {"error": SEVERITY_ERROR, "warning": SEVERITY_WARNING, "note": SEVERITY_INFO}

# seconds a version's publish waits for its deep findings (the rest of a keystroke's analysis is a few
# milliseconds: issue 30 item 6 allows the deep checks 10 ms of a keystroke at p95); a check that takes
# longer (a statement of thousands of lines edited) is published when done, the last findings shown
# meanwhile
HOLD = 0.005
FIRST_HOLD = 1.0  # ... and a document's first version (at most)
# a document whose last check took longer than FAST seconds is checked once typing pauses for PAUSE
# seconds (as lint is: server/lsp/lint.py), or ten times as long as the check takes (at most
# MAX_PAUSE), not at every keystroke
FAST = 0.004
COST_DECAY = 0.8  # what is left of a check's cost at each later check
PAUSE = 0.15
MAX_PAUSE = 5.0

# seconds of the worker a slice of a check takes (about: a statement is not cut) before the requests that
# arrived meanwhile are answered (:func:`sliced`)
SLICE = 0.02

T = TypeVar("T")

# seconds after an index change (a burst of them: a checkout, a folder added) before the open documents
# are checked again
INDEX_SETTLE = 0.1


# ----------------------------------------------------------------------------------------------- the cache


@dataclass(eq=False)
class DeepCache:
    """One document's deep checks.  Worker thread: the world it is checked against (re-made when the
    index or the settings change) and the findings of its last check (for the code actions).  Event
    loop: the job that checks and publishes, and whether a check is due although the version is
    unchanged (the index or the setting changed)."""

    world: World | None = None
    world_for: tuple[object, ...] = ()  # what the world was made for (index generation, settings, path)
    level: str | None = None  # the document's language level (its CheckConfig's)
    entries: dict[bytes, list[Entry]] = field(default_factory=dict)  # by statement text
    parts: Parts = field(default_factory=dict)  # long definitions' (BodyMemo)
    judged: dict[tuple[str, int, int], Finding] = field(default_factory=dict)  # (BodyMemo)
    checked: int = 0  # statements checked (not taken from the cache) so far: the tests' measure
    parts_checked: int = 0  # ... and body statements of long definitions
    findings: list[Finding] = field(default_factory=list)  # of the last check
    # ... as published: their positions in the lines of ``data`` (what :func:`carried` moves)
    published: list[LspDiagnostic] = field(default_factory=list)
    # the last check's internal errors (a bug of the deep checks: logged, never published) and the
    # log lines of those not seen in the check before it, for the event loop to send (once each)
    internal: list[Finding] = field(default_factory=list)
    to_log: list[str] = field(default_factory=list)
    data: bytes = b""  # the text they are of
    held: int | None = None  # the version whose publish waits for its findings (event loop)
    cost: float = 0.0  # seconds the recent checks took (the slowest, slowly forgotten; worker)
    timer: asyncio.TimerHandle | None = field(default=None, repr=False)  # a check once typing pauses
    version: int | None = None  # the version the findings are of
    job: asyncio.Future[None] | None = field(default=None, repr=False)
    due: bool = False  # check again even when the store holds this version's findings


def cache_of(st: DocState) -> DeepCache:
    cache = st.deep
    if cache is None:
        cache = st.deep = DeepCache()
    return cache


# ----------------------------------------------------------------------------------------------- publishing


def holds(ls: PuppetServer, st: DocState) -> bool:
    """Event loop, from the publisher: whether the publish of ``st``'s current version waits for its
    deep findings (the deep job then publishes it, and is started here if it is not running) -- at
    most ``HOLD`` seconds: then it goes out with the last findings carried over (:func:`release`) and
    the deep job publishes again with the new ones.  Not held when the deep checks are off for it,
    the index is incomplete (nothing to check against yet: they follow once it is), or the store
    already holds this version's findings."""
    session = ls.session
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # (not on the event loop: nothing can be scheduled; published as it is)
        return False
    install(ls)
    if not session.deep_active(st.uri) or not index_ready(session):
        return False
    store = st.diagnostics
    if DEEP in store.by_source:
        return False
    cache = cache_of(st)
    if cache.cost <= FAST:
        schedule(ls, st)
        cache.held = store.version
        # (a document's first check: no findings to carry over yet, so its diagnostics wait for them)
        loop.call_later(HOLD if cache.version is not None else FIRST_HOLD, release, ls, st, store.version)
        return True
    # a slow check (the edits are inside a long statement): not on every keystroke, where it would hold
    # up the next keystroke's analysis on the worker, but once typing pauses; meanwhile the last
    # findings, carried over
    store.by_source[DEEP] = carried(st)
    if cache.timer is not None:
        cache.timer.cancel()
    cache.timer = loop.call_later(pause(cache.cost), schedule, ls, st, True)
    return False


def pause(cost: float) -> float:
    """Seconds without a keystroke before a check that takes ``cost`` seconds runs: ``PAUSE``, or ten
    times the check for a longer one, so that a check the next keystroke may have to wait for is rare
    (at most a tenth of the idle time before it)."""
    return min(MAX_PAUSE, max(PAUSE, 10 * cost))


def release(ls: PuppetServer, st: DocState, version: int | None) -> None:
    """Event loop: the publish of ``version`` held longer than ``HOLD`` goes out now, with the deep
    findings of the last check carried over to this text (:func:`carried`), unless its own findings
    were published meanwhile (or a newer version or a close made it moot)."""
    from puppet_xpp.server.lsp import publish

    store = st.diagnostics
    if ls.session.documents.get(st.uri) is not st or store.version != version or DEEP in store.by_source:
        return
    store.by_source[DEEP] = carried(st)
    cache_of(st).held = None
    publish.send(ls, st)


def carried(st: DocState) -> list[LspDiagnostic]:
    """Event loop: the last check's findings (of an older text) on the current text, until its own
    are in: the texts differ in one region (their common start and end kept); a finding before it
    keeps its place, one after it moves by the difference of the lengths, one that meets it is left
    out (it is checked again anyway).  None carried where the text holds a lone CR (LSP's line rule).

    The positions are the published ones moved (their lines by the lines the edit added; a column only
    on the line the edit ends on), not made again from a line index of the whole text
    (:func:`carried_anew`): this runs on the event loop at a keystroke's publish, where on a 300 KB
    manifest with ~1,000 findings making them again took ~5.5 ms of CPU while the next request waited
    to be read (~1 ms now)."""
    cache = st.deep
    if cache is None or not cache.findings:
        return []
    old, new = cache.data, st.doc.data
    if text.has_lone_cr_bytes(new):
        return []
    head = common_head(old, new)
    tail = common_head(old[head:][::-1], new[head:][::-1])
    old_end, new_end = len(old) - tail, len(new) - tail  # (where the common end starts in each)
    published = cache.published
    if len(published) != len(cache.findings) or text.has_lone_cr_bytes(old):
        return carried_anew(st, cache, head, old_end)
    lines = new.count(b"\n", head, new_end) - old.count(b"\n", head, old_end)
    # a place after the region keeps its column when its line starts in the common end: after the
    # first line break there
    line_break = old.find(b"\n", old_end)
    if line_break < 0:
        line_break = len(old)
    kept = []
    index: LineIndex | None = None
    for f, d in zip(cache.findings, published, strict=True):
        if f.offset + f.length <= head:
            kept.append(d)  # (the same place: LspDiagnostic objects are not changed once made)
        elif f.offset > line_break:
            kept.append(
                d
                if lines == 0
                else LspDiagnostic(
                    (d.start[0] + lines, d.start[1]),
                    (d.end[0] + lines, d.end[1]),
                    d.severity,
                    d.code,
                    d.message,
                    d.source,
                    d.deprecated,
                )
            )
        elif f.offset >= old_end:
            ends = []
            for off, (line, col) in ((f.offset, d.start), (f.offset + f.length, d.end)):
                if off > line_break:
                    ends.append((line + lines, col))
                else:
                    if index is None:
                        index = LineIndex(new, encoding=st.doc.encoding)
                    ends.append(index.position(off + len(new) - len(old)))
            kept.append(
                LspDiagnostic(ends[0], ends[1], d.severity, d.code, d.message, d.source, d.deprecated)
            )
    return kept


def carried_anew(st: DocState, cache: DeepCache, head: int, old_end: int) -> list[LspDiagnostic]:
    """:func:`carried` with every position made from the current text: when the published ones are not
    of the checked text's lines (a lone CR in it); tests/lsp/test_completion_carried.py holds
    :func:`carried` equal to it."""
    new = st.doc.data
    moved = len(new) - len(cache.data)
    kept = []
    for f in cache.findings:
        if f.offset + f.length <= head:
            kept.append(f)
        elif f.offset >= old_end:
            kept.append(f.moved(moved))
    if not kept:
        return []
    return to_lsp_lines(LineIndex(new, encoding=st.doc.encoding), kept)


def common_head(a: bytes, b: bytes) -> int:
    """The length of the longest common start of ``a`` and ``b`` (compared by halves: a few slice
    comparisons in C, not one Python step per byte)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def index_ready(session: Session) -> bool:
    """The workspace index is complete, or there is none to wait for (no folder, no module path)."""
    if session.index_state.complete():
        return True
    return session.indexing is None and not session.index_state.running and not session.roots


def schedule(ls: PuppetServer, st: DocState, again: bool = False) -> None:
    """Event loop: check ``st`` (``again``: even when its version's findings are published) and publish."""
    cache = cache_of(st)
    cache.due = cache.due or again
    if cache.job is None or cache.job.done():
        cache.job = asyncio.ensure_future(_run(ls, st))


async def _run(ls: PuppetServer, st: DocState) -> None:
    """Event loop: check the document's published (or held) version on the worker and publish it with
    its findings; again while newer versions or new reasons to check arrive meanwhile."""
    from puppet_xpp.server.lsp import publish

    session = ls.session
    cache = cache_of(st)
    while True:
        store = st.diagnostics
        version = store.version
        if session.documents.get(st.uri) is not st or st.refused is not None:
            return
        if not session.deep_active(st.uri):  # (turned off: what was published goes)
            if store.by_source.pop(DEEP, None) is not None:
                publish.send(ls, st)
            return
        if DEEP in store.by_source and not cache.due:
            return
        cache.due = False
        try:
            found = await sliced(ls, check_steps(session, st, version))
        except Exception as e:  # never cost the other diagnostics: they go out without these
            log.exception("deep checks failed for %s", st.uri)
            ls.log(f"puppet-xpp: deep checks failed for {st.uri}: {e!r}", types.MessageType.Error)
            found = []
        for line in drain_log(cache):
            ls.log(line, types.MessageType.Error)
        if session.documents.get(st.uri) is not st or st.refused is not None:
            return
        if store is not st.diagnostics or store.version != version:
            continue  # a newer version waits for its findings
        if found is None:
            return  # the text moved past this version: its own publish asks for its findings
        had = store.by_source.get(DEEP)
        store.by_source[DEEP] = found
        if cache.held == version or (had or []) != found:  # (held, or what it shows changed)
            cache.held = None
            publish.send(ls, st)


def check(session: Session, st: DocState, version: int | None) -> list[LspDiagnostic] | None:
    """Worker: the deep findings of ``st``'s text of ``version``, as the publisher sends them; None when
    the document's text is no longer that version (its next publish asks again).  In one go (the server
    runs :func:`check_steps` in slices)."""
    steps = check_steps(session, st, version)
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            found: list[LspDiagnostic] | None = stop.value
            return found


# ----------------------------------------------------------------------------------------------- slices


async def sliced(ls: PuppetServer, steps: Generator[None, None, T]) -> T:
    """Event loop: ``steps`` run on the worker about ``SLICE`` seconds at a time until done, so that the
    requests that arrive meanwhile (a hover on another document) are answered between two slices
    instead of after the whole check: the deep check of a 5 MB manifest of thousands of classes takes
    seconds, and the worker answers every document in order (issue 26 item 12: one huge document
    never delays the others' requests by more than 100 ms; tests/lsp/test_huge_document.py).  A slice
    also ends as soon as something else waits for the worker (the worker's queue is not empty): the
    request runs next, instead of after the rest of the slice (up to 20 ms, 35 under load)."""
    queue = ls.worker._work_queue  # (the executor's own queue: what is submitted and not yet running)
    while True:
        done, value = await ls.on_worker(advance, steps, SLICE, queue.qsize)
        if done:
            return cast(T, value)


def advance(
    steps: Generator[None, None, T], budget: float = SLICE, waiting: Callable[[], int] | None = None
) -> tuple[bool, T | None]:
    """Worker: ``steps`` run for about ``budget`` seconds (a step is not cut), or until ``waiting()`` is
    not 0 after a step: (done, its value).

    With the cyclic collector paused, and what the slice made frozen after it, as after an analysis
    (server.analysis.document.GcPacer, whose idle full collections look at it again): a big document's
    check keeps hundreds of thousands of objects (its definitions, the statements' findings and
    answers), and the full collections their allocations set off traversed all of them again, 35-270 ms
    each, in the middle of a slice (the 5 MB manifest of tests/lsp/test_huge_document.py).  And with
    the threads' switch interval short, as an analysis apart has it (``brisk_switching``): a request
    passes the GIL between the transport, the event loop and the worker several times, each time
    waiting up to one interval for the slice to let go of it."""
    end = time.perf_counter() + budget
    try:
        with paused(), brisk_switching():
            while True:
                next(steps)
                if time.perf_counter() >= end or (waiting is not None and waiting()):
                    return False, None
    except StopIteration as stop:
        return True, stop.value
    finally:
        gc.freeze()


def check_steps(
    session: Session, st: DocState, version: int | None
) -> Generator[None, None, list[LspDiagnostic] | None]:
    """Worker: :func:`check` as steps (a top-level statement checked, a definition of the document's
    listed): between two, the worker may have applied an edit, which changes the tree the check walks
    in place -- so the check ends there (None: the new version's publish asks for its own)."""
    doc = st.doc
    if doc.version != version or st.refused is not None:
        return None
    if text.binary_reason(doc.data) is not None:
        return []
    an = doc.analysis()
    cache = cache_of(st)
    cache.level = doc.config.level
    spent = 0.0  # seconds of the worker the check took (the slices', not the requests' between them)
    t0 = time.perf_counter()
    steps = findings_steps(session, cache, an, st.uri)
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            found: list[Finding] = stop.value
            break
        spent += time.perf_counter() - t0
        yield
        if doc.version != version or st.refused is not None:
            return None
        t0 = time.perf_counter()
    spent += time.perf_counter() - t0
    cache.findings = [f for f in found if not is_internal(f)]
    note_internal(cache, [f for f in found if is_internal(f)], an, st.uri)
    # (the slowest of the recent checks, slowly forgotten: a check of a text broken while typing is
    # quick, the one of the text repaired a keystroke later is not)
    cache.cost = max(spent, cache.cost * COST_DECAY)
    cache.version = version
    cache.data = an.data
    if cache.world is not None and an.program is not None and path_of_uri(st.uri):
        # the document's own definitions as the check made them (World.local, of this text): the
        # completion from the text (server/lsp/language.py) takes them, so that even a document's
        # first completion does not wait for an analysis of the latest keystrokes
        doc.local_symbols_memo = list(cache.world.local)
    cache.published = to_lsp(an, cache.findings)
    return list(cache.published)


def note_internal(cache: DeepCache, internal: list[Finding], an: Analysis, uri: str) -> None:
    """Worker: the check's internal errors (server/analysis/deep/internal.py) go to the log -- each
    once: one the check before had too (the same statement kept, or checked again with the same
    failure) is not logged again at every keystroke; the traceback to the server's own log (stderr)."""
    before = {f.message for f in cache.internal}
    cache.internal = internal
    for f in internal:
        if f.message in before:
            continue
        (line, column), _end = f.lsp_range(an.lines)
        where = f"{uri}, line {line + 1}, column {column + 1}"
        text = f"puppet-xpp: deep checks: {f.message} ({where}); the other findings are published"
        log.error("%s\n%s", text, f.data.get("traceback", ""))
        cache.to_log.append(text)


def drain_log(cache: DeepCache) -> list[str]:
    """Event loop: the log lines :func:`note_internal` left to send."""
    lines, cache.to_log = cache.to_log, []
    return lines


def to_lsp(an: Analysis, findings: Sequence[Finding]) -> list[LspDiagnostic]:
    """``findings`` as diagnostics in the analysis' positions."""
    return to_lsp_lines(an.lines, findings)


def to_lsp_lines(li: LineIndex, findings: Sequence[Finding]) -> list[LspDiagnostic]:
    """``findings`` as diagnostics in the positions of the line index ``li`` (LSP's line rule where the
    text holds a lone CR, as the parse diagnostics: server.lsp.text)."""
    out = []
    lone_cr = text.has_lone_cr_bytes(li.data)
    for f in findings:
        start, end = f.lsp_range(li)
        if lone_cr:
            start = text.lsp_position(li.data, li.offset(*start), li.encoding)
            end = text.lsp_position(li.data, li.offset(*end), li.encoding)
        out.append(
            LspDiagnostic(
                start, end, SEVERITIES.get(f.severity, SEVERITY_INFO), f.code, f.message, DEEP_SOURCE
            )
        )
    return out


# ----------------------------------------------------------------------------------------------- the checks


def findings_steps(
    session: Session, cache: DeepCache, an: Analysis, uri: str
) -> Generator[None, None, list[Finding]]:
    """Worker: the deep findings of the analysis, reusing the cached statements' (module docstring); a
    step after each top-level statement (:func:`check_steps`).  Ended between two steps, it leaves the
    cache as it was but for the statements and body parts it took from it (checked again next time)."""
    program = an.program
    if program is None:
        return []
    path = path_of_uri(uri)
    world = yield from world_steps(session, cache, an, path)
    place = Place(path or uri, tasks=an.tasks, complete=world.complete)
    generation = session.index_generation
    local = local_key(world.local)
    data = an.data
    old = cache.entries
    new: dict[bytes, list[Entry]] = {}
    memo = BodyMemo(data, (generation, local), cache.parts)
    memo.judged_before = cache.judged
    kept_parts: list[tuple[PartKey, Part]] = []
    results = []
    for statement in top_statements(program):
        key = data[statement.offset : statement.offset + statement.length]
        kept = old.get(key)
        entry = kept.pop(0) if kept else None
        if entry is not None and not entry.current(world, generation, local):
            entry = None
        if entry is None:
            first = len(memo.log)
            result = checked_statement(statement, place, world, memo)
            entry = Entry(
                statement.offset,
                result.findings,
                result.asked,
                result.answers
                if result.answers is not None
                else tuple((q, world.answer_key(q)) for q in sorted(result.asked)),
                generation,
                local,
                tuple(memo.log[first:]),
            )
            cache.checked += 1
        else:
            kept_parts += entry.parts
        if entry.offset != statement.offset:
            delta = statement.offset - entry.offset
            entry = replace(
                entry, offset=statement.offset, findings=tuple(f.moved(delta) for f in entry.findings)
            )
        new.setdefault(key, []).append(entry)
        results.append(StatementResult(statement, entry.findings, entry.asked))
        yield
    cache.entries = new
    for part_key, part in kept_parts:  # (a definition kept whole keeps its parts for its next edit)
        memo.keep(part_key, part)
    cache.parts = memo.used
    cache.judged = memo.judged
    cache.parts_checked += memo.checked
    return file_findings(results, program, place.path, program.locator.line_for_offset)


@dataclass(frozen=True)
class Entry:
    """One top-level statement's findings (at ``offset``, where it was when they were made or last
    moved) and the answers to the questions they depended on, as of index ``generation`` and the
    document's own definitions ``local``."""

    offset: int
    findings: tuple[Finding, ...]
    asked: frozenset[Asked]
    answers: tuple[tuple[Asked, tuple[object, ...]], ...]
    generation: int
    local: tuple[object, ...]
    parts: tuple[tuple[PartKey, Part], ...] = ()  # a long definition's body statements' (BodyMemo)

    def current(self, world: World, generation: int, local: tuple[object, ...]) -> bool:
        """Its findings still hold: nothing changed that it asked about (checked question by question
        only when the index or the document's definitions changed since)."""
        if generation == self.generation and local == self.local:
            return True
        return all(world.answer_key(q) == key for q, key in self.answers)


def local_key(local: Sequence[Sym]) -> tuple[object, ...]:
    """What the document's own definitions say of themselves (their names, kinds and signatures)."""
    return tuple((s.kind, s.key, s.signature) for s in local)


def indexed(session: Session, modulepath: Sequence[str]) -> bool:
    """The workspace index holds the module path (each of its directories is under a directory the
    index was made of): else a name it lacks may exist there, and the world is not complete."""
    roots = [os.path.join(r, "") for r in session.index_roots()]
    return all(any(os.path.join(d, "").startswith(r) for r in roots) for d in modulepath if os.path.isdir(d))


def world_steps(
    session: Session, cache: DeepCache, an: Analysis, path: str | None
) -> Generator[None, None, World]:
    """Worker: the world the document is checked against: made again (its memo of the modules and Hiera
    dropped, the cached statements checked question by question) when the index, the settings or the
    index's completeness changed; the document's own definitions are its current ones (a step after
    each: :func:`check_steps`)."""
    complete = session.index_state.complete()
    made_for = (session.index_generation, id(session.settings), path, an.tasks, complete, cache.level)
    world = cache.world
    if world is None or cache.world_for != made_for:
        ctx = file_context(path, session.settings)
        env = ctx.env
        env_root = env.root if env is not None else (session.owning_environment(path) if path else None)
        world = World(
            session.index,
            level=cache.level,
            modulepath=ctx.modulepath,
            env_root=env_root,
            complete=complete and indexed(session, ctx.modulepath),
            hiera_read=hiera_buffers(session),
        )
        cache.world, cache.world_for = world, made_for
    local = []
    if path:
        for sym in iter_symbols(an, path):
            local.append(sym)
            yield
    world.local = local
    return world


def hiera_buffers(session: Session) -> Reader | None:
    """The Hiera files open in the editor (YAML and JSON documents: not Puppet code), as a reader of
    their buffers for the world (None: none open).  The world is made again whenever one is opened,
    edited, saved or closed (:func:`install`: ``HieraCache``'s listeners), so the documents it knows
    are the open ones."""
    by_path: dict[str, DocState] = {}
    for uri, st in list(session.documents.items()):
        path = path_of_uri(uri) if not st.is_puppet else None
        if path:
            by_path[os.path.realpath(path)] = st
    if not by_path:
        return None

    def read(path: str) -> str | None:
        from puppet_xpp.server.lsp.sync import text_now

        st = by_path.get(os.path.realpath(path)) if path else None
        data = text_now(st) if st is not None else None
        return data.decode("utf-8", "replace") if data is not None else None

    return read


# ----------------------------------------------------------------------------------------------- upkeep


def install(ls: PuppetServer) -> None:
    """Event loop, once per session: listen to the index (a change may change what a name resolves
    to), to its completion (the deep checks wait for it) and to the setting."""
    session = ls.session
    if session.deep_installed:
        return
    session.deep_installed = True
    loop = asyncio.get_running_loop()
    pending: list[asyncio.TimerHandle] = []

    def settle() -> None:
        pending.clear()
        if index_ready(session):
            refresh(ls)

    def changed(path: str) -> None:  # (any thread)
        def on_loop() -> None:
            session.index_generation += 1
            if pending or not index_ready(session):
                return  # (a burst, or the indexing: checked once it is over)
            pending.append(loop.call_later(INDEX_SETTLE, settle))

        loop.call_soon_threadsafe(on_loop)

    if isinstance(session.index, ObservedIndex):
        session.index.listeners.append(changed)
    # Hiera data changed (a watched file on disk, a YAML buffer edited: server/lsp/documents.py): a
    # class parameter's key may be set or unset now -- the statements that asked are checked again
    session.hiera.listeners.append(lambda: changed(""))
    session.index_state.on_complete.append(lambda: refresh(ls))
    session.deep_hooks.append(lambda: refresh(ls))


def refresh(ls: PuppetServer) -> None:
    """Event loop: check every open document again (the index or the setting changed); each is published
    again when its findings changed (or the setting turned them off)."""
    for st in list(ls.session.documents.values()):
        if st.diagnostics.version is not None or st.published is not None:
            schedule(ls, st, again=True)


# ----------------------------------------------------------------------------------------------- quick fixes


async def code_action(ls: PuppetServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """``textDocument/codeAction``: the deep findings' quick fixes in the range (did-you-mean, a missing
    parameter added: server/analysis/fixes.py), then the parser's, the validator's and lint's
    (server/lsp/lint.py)."""
    from puppet_xpp.server.lsp import lint

    uri = params.text_document.uri
    rng = convert.span_of(params.range)
    try:
        found = await ls.on_worker(deep_actions, ls.session, uri, rng)
    except Exception as e:  # never cost the other actions
        log.exception("deep quick fixes failed for %s", uri)
        ls.log(f"puppet-xpp: deep quick fixes failed for {uri}: {e!r}", types.MessageType.Error)
        found = []
    return found + await lint.code_action(ls, params)


def deep_actions(session: Session, uri: str, rng: Span) -> list[types.CodeAction]:
    """Worker: the code actions of the deep findings published for the document's current text that
    touch ``rng`` (none while its deep findings are of an older text)."""
    st = session.documents.get(uri)
    cache = st.deep if st is not None else None
    if st is None or cache is None or cache.world is None or not session.deep_active(uri):
        return []
    from puppet_xpp.server.lsp.sync import sync_state

    doc = st.doc
    version = sync_state(st)  # (the edits received: the fixes are for the text the client has)
    if st.refused is not None or text.has_lone_cr_bytes(doc.data):
        return []
    if cache.version != version and check(session, st, version) is None:
        return []  # (its findings were of an older text: checked now)
    an = doc.analysis()
    li = an.lines
    start, end = li.offset(*rng[0]), li.offset(*rng[1])
    out = []
    first: set[int] = set()
    for fix in fixes.deep_fixes(an, cache.findings, start, end, cache.world):
        shown = to_lsp(an, [fix.finding])[0]
        edits = [(li.position(a), li.position(b), new) for a, b, new in fix.edits]
        out.append(
            types.CodeAction(
                title=fix.title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[convert.diagnostic(shown)],
                is_preferred=id(fix.finding) not in first,
                edit=types.WorkspaceEdit(changes={uri: convert.text_edits(edits)}),
            )
        )
        first.add(id(fix.finding))
    return out
