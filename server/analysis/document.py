"""The language server's analysis core (no pygls imports): documents, positions, diagnostics.

A :class:`Document` holds the text of one open file and its current :class:`Analysis` (tokens, the
Program, parse and validation diagnostics).  Edits arrive as LSP content changes (ranges in the
client's position encoding, UTF-16 by default) and are applied to the document's text; the analysis
is brought up to date by :mod:`grammar.incremental` (reparsing only the statements an edit touches,
at any depth, with validation cached per statement).

Positions: the AST and the diagnostics use UTF-8 byte offsets; LSP uses 0-based lines and columns in
UTF-16 code units (or UTF-8 / UTF-32 when negotiated).  :class:`LineIndex` converts both ways.
"""

from __future__ import annotations

import bisect
import gc
import os
from dataclasses import dataclass

SEVERITY_ERROR, SEVERITY_WARNING, SEVERITY_INFO, SEVERITY_HINT = 1, 2, 3, 4


# ----------------------------------------------------------------------------------------------- positions


class LineIndex:
    """Byte offsets <-> (line, column) for one text.  ``encoding``: 'utf-16' (LSP default), 'utf-8', 'utf-32'."""

    __slots__ = ("data", "starts", "encoding")

    def __init__(self, data: bytes, starts=None, encoding: str = "utf-16"):
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

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1

    def line_bytes(self, line: int) -> bytes:
        s = self.starts[line]
        e = self.starts[line + 1] - 1 if line + 1 < len(self.starts) else len(self.data)
        return self.data[s:e]

    def position(self, offset: int) -> tuple[int, int]:
        """(line, column) of a byte offset (clamped to the text)."""
        if offset is None or offset < 0:
            return 0, 0
        n = len(self.data)
        if offset > n:
            offset = n
        line = bisect.bisect_right(self.starts, offset) - 1
        s = self.starts[line]
        seg = self.data[s:offset]
        if self.encoding == "utf-8" or seg.isascii():
            return line, len(seg)
        txt = seg.decode("utf-8", "surrogateescape")
        if self.encoding == "utf-32":
            return line, len(txt)
        return line, _utf16_len(txt)

    def offset(self, line: int, col: int) -> int:
        """Byte offset of (line, column); columns past the end of the line give the line end."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.data)
        s = self.starts[line]
        lb = self.line_bytes(line)
        if col <= 0:
            return s
        if self.encoding == "utf-8" or lb.isascii():
            return s + min(col, len(lb))
        txt = lb.decode("utf-8", "surrogateescape")
        units = 0
        nbytes = 0
        for ch in txt:
            if units >= col:
                break
            o = ord(ch)
            units += 2 if (self.encoding == "utf-16" and o > 0xFFFF) else 1
            nbytes += len(ch.encode("utf-8", "surrogateescape"))
        return s + nbytes

    def range(self, offset: int, length: int) -> tuple[tuple[int, int], tuple[int, int]]:
        return self.position(offset), self.position(offset + max(0, length))


def _utf16_len(s: str) -> int:
    n = len(s)
    if s.isascii():
        return n
    return n + sum(1 for ch in s if ord(ch) > 0xFFFF)


# ----------------------------------------------------------------------------------------------- analysis


@dataclass
class Analysis:
    """One analysed version of a document."""

    version: int | None
    text: str
    data: bytes
    # the Program, or a function returning it: the incremental parser moves positions after an edit
    # lazily, so the AST is brought up to date only when a feature asks for it (not per keystroke)
    program_source: object | None
    tokens: list
    locator: object
    parse_diagnostics: list
    validation_diagnostics: list
    lines: LineIndex
    epp: bool = False
    tasks: bool = False

    @property
    def program(self):
        p = self.program_source
        if callable(p):
            p = self.program_source = p()
        return p

    @program.setter
    def program(self, value) -> None:
        self.program_source = value

    @property
    def diagnostics(self) -> list:
        return list(self.parse_diagnostics) + list(self.validation_diagnostics)


@dataclass
class LspDiagnostic:
    """A diagnostic in LSP terms (converted by lsp.py into lsprotocol objects)."""

    start: tuple
    end: tuple
    severity: int
    code: str
    message: str
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
        out.append(LspDiagnostic(start, end, sev, d.code, d.message, d.severity == "deprecation"))
    return out


def _token_len_at(an: Analysis, off: int) -> int:
    toks = an.tokens
    if not toks:
        return 0
    i = bisect.bisect_left(toks, off, key=_start)
    if i < len(toks) and toks[i].start_pos == off:
        t = toks[i]
        if t.end_pos > off and b"\n" not in an.data[off : t.end_pos]:
            return t.end_pos - off
    return 0


def _start(t):
    return t.start_pos


# ----------------------------------------------------------------------------------------------- documents


@dataclass
class DocConfig:
    """How one document is parsed and validated (from server.analysis.workspace.file_context + settings)."""

    file: str = ""  # the file name given to the parser (absolute path, or '' for untitled)
    epp: bool = False
    tasks: bool = False
    strict: str | None = None  # None: the level's default (grammar.levels)
    modulepath: tuple = ()
    manifest: str | None = None
    level: str | None = None  # language level 8 | 7 | 7.23 (None: the default)


class Document:
    """An open document: text + incremental analysis state.

    Thread-safety: a Document is used by one thread at a time (the server's analysis worker)."""

    def __init__(self, uri: str, text: str, version: int | None, config: DocConfig, encoding: str = "utf-16"):
        from puppet_xpp.grammar.incremental import IncrementalParser

        self.uri = uri
        self.config = config
        self.encoding = encoding
        self.version = version
        self.parser = IncrementalParser(text, config)
        self._analysis: Analysis | None = None
        self.edits_since_analysis = 0

    # -- text

    @property
    def text(self) -> str:
        t = self.parser.text
        return t if t is not None else self.parser.data.decode("utf-8", "surrogateescape")

    @property
    def data(self) -> bytes:
        return self.parser.data

    def line_index(self) -> LineIndex:
        return LineIndex(self.parser.data, self.parser.line_starts(), self.encoding)

    def apply_change(self, rng, new_text: str) -> None:
        """One LSP content change: ``rng`` is ((line, col), (line, col)) or None for the whole text."""
        if rng is None:
            self.parser.replace_all(new_text)
        else:
            li = self.line_index()
            a = li.offset(*rng[0])
            b = li.offset(*rng[1])
            if b < a:
                a, b = b, a
            self.parser.edit(a, b, new_text)
        self._analysis = None
        self.edits_since_analysis += 1

    def set_config(self, config: DocConfig) -> None:
        if config != self.config:
            self.config = config
            self.parser.set_config(config)
            self._analysis = None

    # -- analysis

    def analysis(self) -> Analysis:
        if self._analysis is None:
            p = self.parser
            p.update()
            self._analysis = Analysis(
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
            self.edits_since_analysis = 0
            _after_update()  # (after the validation, whose cache is kept too)
        return self._analysis


# a full collection is due after this many analyses (run when the server is idle: lsp._idle_gc), and
# run at once after ten times as many with no idle moment
GC_FULL_EVERY = 1000
_gc_count = 0


def _after_update() -> None:
    """Keep the cyclic GC's full passes off keystrokes.  An analysis leaves no cyclic garbage (what
    it replaces is freed by reference counting), but every object it keeps (a plain parse of a
    300 KB file makes a few hundred thousand) would be traversed again by each full pass, 100-250 ms
    that land on whichever keystroke triggers one.  So what exists after an analysis is frozen
    (gc.freeze: O(1); the collector no longer looks at it, reference counting still frees it), and
    a full collection now and then (gc_due, full_collect) bounds what a cycle made elsewhere keeps."""
    global _gc_count
    _gc_count += 1
    if _gc_count >= 10 * GC_FULL_EVERY:
        full_collect()  # (it freezes what is left)
    else:
        gc.freeze()


def gc_due() -> bool:
    return _gc_count >= GC_FULL_EVERY


def full_collect() -> None:
    """A full cyclic collection over everything (frozen objects too), then freeze what is left."""
    global _gc_count
    _gc_count = 0
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def doc_config_for(path: str | None, settings, roots=()) -> DocConfig:
    from puppet_xpp.server.analysis.workspace import file_context

    ctx = file_context(path, settings, roots)
    return DocConfig(
        file=path or "",
        epp=bool(path and path.endswith(".epp")),
        tasks=ctx.tasks,
        strict=settings.strict,
        modulepath=ctx.modulepath,
        manifest=ctx.manifest,
        level=getattr(settings, "puppet_version", None),
    )


def full_analysis(text: str, config: DocConfig):
    """(ParseResult, validation diagnostics) of a full parse: the reference the incremental path must equal."""
    from puppet_xpp.grammar.parser import parse
    from puppet_xpp.grammar.validator import validate

    res = parse(text, config.file, epp=config.epp, tasks=config.tasks)
    vd = []
    if res.program is not None:
        vd = validate(
            res.program,
            strict=config.strict,
            level=config.level,
            tasks=config.tasks,
            file=config.file or None,
            modulepath=config.modulepath,
            manifest=config.manifest,
        )
    return res, vd


def read_text(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "surrogateescape")
    except OSError:
        return None


def path_of_uri(uri: str) -> str | None:
    from urllib.parse import unquote, urlparse

    u = urlparse(uri)
    if u.scheme != "file":
        return None
    p = unquote(u.path)
    if os.name == "nt" and p.startswith("/") and len(p) > 2 and p[2] == ":":
        p = p[1:]
    return p


def uri_of_path(path: str) -> str:
    from urllib.parse import quote

    return "file://" + quote(os.path.abspath(path))
