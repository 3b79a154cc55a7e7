"""The language server's analysis core (no pygls imports): documents, positions, diagnostics.

A :class:`Document` holds the text of one open file and its current :class:`Analysis` (tokens, the
Program, parse and validation diagnostics).  Edits arrive as LSP content changes (ranges in the
client's position encoding, UTF-16 by default) and are applied to the document's text; the analysis
is brought up to date by :mod:`grammar.incremental` (reparsing only the statements an edit touches,
at any depth, with validation cached per statement).

Positions: the AST and the diagnostics use UTF-8 byte offsets; LSP uses 0-based lines and columns in
UTF-16 code units (or UTF-8 / UTF-32 when negotiated).  :class:`LineIndex` converts both ways, and
:class:`LspDiagnostic` is a diagnostic in those terms (whoever found it).  :class:`GcPacer` keeps the
cyclic GC's full passes off keystrokes.
"""

from __future__ import annotations

import bisect
import gc
import os
import queue
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from puppet_xpp.grammar.check import CheckConfig
from puppet_xpp.grammar.gcpause import paused
from puppet_xpp.grammar.issues import Diagnostic

if TYPE_CHECKING:
    from puppet_xpp.server.analysis.features import NodeLocator

SEVERITY_ERROR, SEVERITY_WARNING, SEVERITY_INFO, SEVERITY_HINT = 1, 2, 3, 4
SOURCE = "puppet-xpp"  # the ``source`` of the server's own diagnostics
Pos = tuple[int, int]  # an LSP position: 0-based line, column in the negotiated encoding
Span = tuple[Pos, Pos]  # (start, end)


# ----------------------------------------------------------------------------------------------- positions


class LineIndex:
    """Byte offsets <-> (line, column) for one text.  ``encoding``: 'utf-16' (LSP default), 'utf-8', 'utf-32'.

    Each conversion costs O(log n), whatever the length of the line: a line that is not ASCII gets, the
    first time it is asked about, a table of its wide characters (where each starts, how many bytes it
    has beyond the columns it counts).  Slicing the line up to the offset on every call was quadratic on
    one-line documents: the semantic tokens of a 5 MB one-line list took minutes."""

    __slots__ = ("data", "starts", "encoding", "_wide")

    def __init__(self, data: bytes, starts: list[int] | None = None, encoding: str = "utf-16") -> None:
        self.data = data
        if starts is None:
            starts = [0]
            find = data.find
            i = find(b"\n")
            while i >= 0:
                starts.append(i + 1)
                i = find(b"\n", i + 1)
        self.starts = starts
        self.encoding = encoding
        self._wide: dict[int, _WideChars | None] = {}

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1

    def _line_end(self, line: int) -> int:
        return self.starts[line + 1] - 1 if line + 1 < len(self.starts) else len(self.data)

    def line_bytes(self, line: int) -> bytes:
        return self.data[self.starts[line] : self._line_end(line)]

    def _wide_chars(self, line: int) -> _WideChars | None:
        """The line's table of wide characters (None: the line is ASCII, or the encoding counts bytes)."""
        try:
            return self._wide[line]
        except KeyError:
            pass
        table = (
            None
            if self.encoding == "utf-8"
            else _WideChars.of(self.data, self.starts[line], self._line_end(line), self.encoding)
        )
        self._wide[line] = table
        return table

    def position(self, offset: int | None) -> Pos:
        """(line, column) of a byte offset (clamped to the text)."""
        if offset is None or offset < 0:
            return 0, 0
        n = len(self.data)
        if offset > n:
            offset = n
        line = bisect.bisect_right(self.starts, offset) - 1
        s = self.starts[line]
        wide = self._wide_chars(line)
        if wide is None:
            return line, offset - s
        return line, wide.column(s, offset)

    def offset(self, line: int, col: int) -> int:
        """Byte offset of (line, column); columns past the end of the line give the line end."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.data)
        s = self.starts[line]
        if col <= 0:
            return s
        end = self._line_end(line)
        wide = self._wide_chars(line)
        if wide is None:
            return min(s + col, end)
        return min(wide.offset(s, col), end)

    def range(self, offset: int, length: int) -> Span:
        return self.position(offset), self.position(offset + max(0, length))


_NON_ASCII = re.compile(rb"[\x80-\xff]+")


class _WideChars:
    """The characters of one line that take more bytes than columns (UTF-16 or UTF-32 columns):
    ``ends[i]`` the byte just after character i, ``extra[i]`` the bytes beyond columns of characters
    0..i together, ``cols[i]`` the column where character i starts, ``units[i]`` the columns it takes."""

    __slots__ = ("starts", "ends", "extra", "cols", "units")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.extra: list[int] = []
        self.cols: list[int] = []
        self.units: list[int] = []

    @classmethod
    def of(cls, data: bytes, start: int, end: int, encoding: str) -> _WideChars | None:
        table = cls()
        extra = 0
        for run in _NON_ASCII.finditer(data, start, end):
            at = run.start()
            # bytes of 0x80 and more form whole UTF-8 sequences (or stray bytes, one character each)
            for ch in run.group().decode("utf-8", "surrogateescape"):
                code = ord(ch)
                nbytes = 1 if 0xDC80 <= code <= 0xDCFF else len(ch.encode("utf-8"))
                units = 2 if code > 0xFFFF and encoding == "utf-16" else 1
                table.starts.append(at)
                table.cols.append(at - start - extra)
                table.units.append(units)
                extra += nbytes - units
                at += nbytes
                table.ends.append(at)
                table.extra.append(extra)
        return table if table.starts else None

    def column(self, line_start: int, offset: int) -> int:
        """The column of ``offset``; inside a character (never an offset the parser gives), each byte
        of its beginning counts one column, as those bytes decode alone (one escape each)."""
        i = bisect.bisect_right(self.ends, offset)
        if i < len(self.starts) and self.starts[i] < offset:
            return self.cols[i] + offset - self.starts[i]
        return offset - line_start - (self.extra[i - 1] if i else 0)

    def offset(self, line_start: int, col: int) -> int:
        """The byte offset of column ``col`` (a column inside a character gives the character's end)."""
        i = bisect.bisect_left(self.cols, col)  # characters 0..i-1 start before the column
        if i and col < self.cols[i - 1] + self.units[i - 1]:
            return self.ends[i - 1]
        return line_start + col + (self.extra[i - 1] if i else 0)


def _utf16_len(s: str) -> int:
    n = len(s)
    if s.isascii():
        return n
    return n + sum(1 for ch in s if ord(ch) > 0xFFFF)


# ----------------------------------------------------------------------------------------------- analysis


@dataclass
class Analysis:
    """One analysed version of a document (also the shape the workspace indexing fills from a plain
    parse: :func:`server.analysis.index.index_file`)."""

    version: int | None
    text: str | None  # (None: not decoded; ``data`` is the text)
    data: bytes
    # the Program, or a function returning it: the incremental parser moves positions after an edit
    # lazily, so the AST is brought up to date only when a feature asks for it (not per keystroke)
    program_source: Any
    tokens: list[Any]
    locator: Any
    parse_diagnostics: list[Diagnostic]
    validation_diagnostics: list[Diagnostic]
    lines: LineIndex
    epp: bool = False
    tasks: bool = False
    node_locator_memo: NodeLocator | None = field(default=None, repr=False, compare=False)

    @property
    def node_locator(self) -> NodeLocator:
        """The nodes under an offset of this analysis' Program (server.analysis.features.NodeLocator):
        made on the first question and kept with the analysis, so the requests on one version share
        one pass over the tree, and a new version drops it."""
        loc = self.node_locator_memo
        if loc is None:
            from puppet_xpp.server.analysis.features import NodeLocator

            loc = self.node_locator_memo = NodeLocator(self.program)
        return loc

    @property
    def program(self) -> Any:
        p = self.program_source
        if callable(p):
            p = self.program_source = p()
        return p

    @program.setter
    def program(self, value: Any) -> None:
        self.program_source = value

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return list(self.parse_diagnostics) + list(self.validation_diagnostics)


@dataclass
class LspDiagnostic:
    """A diagnostic as the server publishes it, whatever found it (the parser and validator, lint, the
    server itself): LSP positions (0-based line, column in the negotiated encoding) and severity
    (1 error .. 4 hint).  lsp/convert.py turns it into lsprotocol's form; plain data, so the lint child
    process can return it."""

    start: Pos
    end: Pos
    severity: int
    code: str
    message: str
    source: str = SOURCE
    deprecated: bool = False


def to_lsp_diagnostics(an: Analysis) -> list[LspDiagnostic]:
    out = []
    data = an.data
    n = len(data)
    for d in an.diagnostics:
        if d.severity == "ignore":
            continue
        off = d.offset if d.offset is not None else 0
        off = min(max(off, 0), n)
        ln = d.length or 0
        if ln <= 0:
            # a point: show it on the character there (or the token starting there)
            ln = _token_len_at(an, off) or (1 if off < n and data[off : off + 1] not in (b"\n", b"") else 0)
        start, end = an.lines.range(off, min(ln, n - off))
        sev = SEVERITY_ERROR if d.severity == "error" else SEVERITY_WARNING
        out.append(LspDiagnostic(start, end, sev, d.code, d.message, deprecated=d.severity == "deprecation"))
    return out


def _token_len_at(an: Analysis, off: int) -> int:
    toks = an.tokens
    if not toks:
        return 0
    i = bisect.bisect_left(toks, off, key=_start)
    if i < len(toks) and toks[i].start_pos == off:
        t = toks[i]
        if t.end_pos > off and b"\n" not in an.data[off : t.end_pos]:
            return int(t.end_pos - off)
    return 0


def _start(t: Any) -> int:
    return int(t.start_pos)


# ----------------------------------------------------------------------------------------------- the GC


class GcPacer:
    """Keeps the cyclic GC's full passes off keystrokes (one per server: its session holds it).

    An analysis leaves no cyclic garbage (what it replaces is freed by reference counting), but every
    object it keeps (a plain parse of a 300 KB file makes a few hundred thousand) would be traversed
    again by each full pass, 100-250 ms that land on whichever keystroke triggers one.  So what exists
    after an analysis is frozen (gc.freeze: O(1); the collector no longer looks at it, reference
    counting still frees it), and a full collection now and then (:attr:`due`, :meth:`full_collect`,
    run by the server when it is idle) bounds what a cycle made elsewhere keeps."""

    # a full collection is due after this many analyses, and run at once after ten times as many
    # with no idle moment
    FULL_EVERY = 1000

    def __init__(self) -> None:
        self.count = 0  # analyses since the last full collection

    def after_analysis(self) -> None:
        self.count += 1
        if self.count >= 10 * self.FULL_EVERY:
            self.full_collect()  # (it freezes what is left)
        else:
            gc.freeze()

    @property
    def due(self) -> bool:
        return self.count >= self.FULL_EVERY

    def full_collect(self) -> None:
        """A full cyclic collection over everything (frozen objects too), then freeze what is left."""
        self.count = 0
        gc.unfreeze()
        gc.collect()
        gc.freeze()


# ----------------------------------------------------------------------------------------------- documents


# A text of this many bytes or more is analysed apart (Document.analyse_apart): its first analysis
# takes long enough (about 0.5 s per MB) to hold up the requests on every other document.
APART_BYTES = 256 * 1024


class Document:
    """An open document: text + incremental analysis state.  ``config`` is how it is parsed and
    validated (server.analysis.workspace.check_config_for); ``gc`` the server's GC pacer.

    Thread-safety: a Document is used by one thread at a time (the server's analysis worker), except
    that a big document's analysis may run on a thread of its own (:meth:`analyse_apart`): ``lock``
    keeps its edits and analyses one at a time."""

    def __init__(
        self,
        uri: str,
        text: str,
        version: int | None,
        config: CheckConfig,
        encoding: str = "utf-16",
        gc_pacer: GcPacer | None = None,
    ) -> None:
        from puppet_xpp.grammar.incremental import IncrementalParser

        self.uri = uri
        self.config = config
        self.encoding = encoding
        self.version = version
        self.parser = IncrementalParser(text, config)
        self.cached: Analysis | None = None  # the analysis of the current text (None: not made yet)
        self.edits_since_analysis = 0
        self.gc_pacer = gc_pacer if gc_pacer is not None else GcPacer()
        self.lock = threading.RLock()  # edits and analyses, one at a time (analyse_apart)
        self.apart: Future[None] | None = None  # the analysis running apart, if any
        # the text as of the changes applied so far, set with their removal from the server's queue
        # (server.lsp.sync.sync_state): that text plus the changes still queued is the client's text,
        # which a completion reads without waiting for the analysis (server.lsp.sync.text_now)
        self.synced_data: bytes = self.parser.data
        # the document's own definitions (server.analysis.navigation.local_symbols) as of the last
        # analysis a completion read whole: a completion answered from the text alone uses them
        self.local_symbols_memo: list[Any] | None = None

    # -- text

    @property
    def text(self) -> str:
        t = self.parser.text
        return t if t is not None else self.parser.data.decode("utf-8", "surrogateescape")

    @property
    def data(self) -> bytes:
        data: bytes = self.parser.data
        return data

    def line_index(self) -> LineIndex:
        return LineIndex(self.parser.data, self.parser.line_starts(), self.encoding)

    def apply_change(self, rng: Span | None, new_text: str, queued: bool = False) -> None:
        """One LSP content change: ``rng`` is ((line, col), (line, col)) or None for the whole text.
        ``queued``: the change is still in the server's queue (its caller sets :attr:`synced_data`
        when it removes it from there)."""
        with self.lock:
            if rng is None:
                self.parser.replace_all(new_text)
            else:
                li = self.line_index()
                a = li.offset(*rng[0])
                b = li.offset(*rng[1])
                if b < a:
                    a, b = b, a
                self.parser.edit(a, b, new_text)
            if not queued:
                self.synced_data = self.parser.data
            self.cached = None
            self.edits_since_analysis += 1

    def set_config(self, config: CheckConfig) -> None:
        """Parse and validate with ``config`` from now on (the next analysis is a new one)."""
        with self.lock:
            if config != self.config:
                self.config = config
                self.parser.set_config(config)
            self.cached = None

    # -- analysis

    def analysis(self) -> Analysis:
        with self.lock:
            if self.cached is None:
                with paused():  # (grammar.gcpause; the pacer freezes what the analysis keeps)
                    self.cached = self.analyse()
                    self.edits_since_analysis = 0
                    self.gc_pacer.after_analysis()  # (after the validation, whose cache is kept too)
            return self.cached

    def analyse(self) -> Analysis:
        p = self.parser
        p.update()
        return Analysis(
            self.version,
            p.text,
            p.data,
            lambda: p.program,
            p.tokens,
            p.locator,
            p.parse_diagnostics(),
            p.validation_diagnostics(),
            self.line_index(),
            self.config.epp,
            self.config.tasks,
        )

    def analyse_apart(self) -> Future[None] | None:
        """The scheduling rule for big documents (issue 26 item 12: one huge document never delays the
        requests on the others).  The server's one worker thread answers every document in order, so
        the first analysis of a 5 MB text (seconds) would hold up a hover on any other file for as long.
        A text of :data:`APART_BYTES` or more whose current analysis is not made yet is analysed on a
        thread of its own instead: this returns that analysis' future (the one already running, if
        any; None when there is nothing to do) and the caller awaits it before it gives the worker
        anything about this document, which then finds the analysis made.  The worker meanwhile
        answers the other documents: Python switches threads every few milliseconds.  (A failure is
        not reported here: the worker's own ``analysis()`` meets it again and reports it.)"""
        job = self.apart
        if job is not None and not job.done():
            return job
        if self.cached is not None or len(self.parser.data) < APART_BYTES:
            return None
        job = self.apart = Future()
        APART_THREADS.run(lambda: self._analyse_apart(job))
        return job

    def _analyse_apart(self, job: Future[None]) -> None:
        try:
            with brisk_switching():
                self.analysis()
        except Exception:  # (reported by the worker's analysis(), which meets it again)
            pass
        finally:
            job.set_result(None)


class ApartThreads:
    """The threads the analyses of big documents run on (:meth:`Document.analyse_apart`), kept waiting
    for the next one instead of one started per analysis: starting a thread blocks its starter (the
    event loop, at every keystroke in a big document) until the new thread has run, which needs the
    GIL the running analysis or the worker holds -- ~3-9 ms of the event loop a keystroke on a 300 KB
    manifest (cProfile of its thread, load 6-11), while the next request waited to be read.  As many
    threads as analyses run at once (at most one per big document); daemon threads, as before (an
    analysis never holds up the process' exit)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.lock = threading.Lock()
        self.jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self.idle = 0  # threads waiting for a job (or about to)

    def run(self, job: Callable[[], None]) -> None:
        """``job()`` on one of the threads (a new one only when none is idle); it must not raise."""
        with self.lock:
            start = self.idle == 0
            if not start:
                self.idle -= 1
        self.jobs.put(job)
        if start:
            threading.Thread(target=self.serve, name=self.name, daemon=True).start()

    def serve(self) -> None:
        while True:
            job = self.jobs.get()
            try:
                job()
            finally:
                with self.lock:
                    self.idle += 1


APART_THREADS = ApartThreads("puppet-apart")

_switching_lock = threading.Lock()
_switching: list[float] = []  # the interval to restore, while analyses run apart


@contextmanager
def brisk_switching() -> Iterator[None]:
    """Python's thread switch interval at 1 ms while an analysis runs apart (default 5 ms): a request
    on another document passes the GIL between the transport, the event loop and the worker several
    times, each time waiting up to one interval for the analysis' thread to let go of it."""
    with _switching_lock:
        if not _switching:
            _switching.append(sys.getswitchinterval())
            sys.setswitchinterval(min(_switching[0], 0.001))
        else:
            _switching.append(_switching[0])
    try:
        yield
    finally:
        with _switching_lock:
            restore = _switching.pop()
            if not _switching:
                sys.setswitchinterval(restore)


def path_of_uri(uri: str) -> str | None:
    from urllib.parse import unquote, urlparse

    u = urlparse(uri)
    if u.scheme != "file":
        return None
    p = unquote(u.path)
    if os.name == "nt" and p.startswith("/") and len(p) > 2 and p[2] == ":":
        p = p[1:]
    return p


def workspace_roots(folder_uris: Iterable[str], root_uri: str | None) -> list[str]:
    """The workspace's root directories as ``initialize`` gives them: its workspace folders' paths, else
    the root URI's (the one rule of the server and of its start-up front, server/lsp/startup.py)."""
    roots = [p for uri in folder_uris if (p := path_of_uri(uri))]
    if not roots and root_uri:
        p = path_of_uri(root_uri)
        roots = [p] if p else []
    return roots


def uri_of_path(path: str) -> str:
    from urllib.parse import quote

    return "file://" + quote(os.path.abspath(path))
