"""The workspace index (no pygls imports): every class, defined type, function, plan, type alias and
node of the workspace's ``.pp`` files, and what the modules' Ruby files define, with locations, docs
and parameters.  A manifest open in the editor has the entries of its document's analysis from its
save on, and from the end of an indexing that found it open (the indexing does not read an open
manifest from disk: server/lsp/indexing.py); else those of the file on disk.

:func:`index_file` parses a file once for every index: its ``hooks`` (the language server's session
passes the reference index's) get the same parse."""

from __future__ import annotations

import bisect
import gc
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence

from puppet_xpp.grammar import ast
from puppet_xpp.grammar.gcpause import paused
from puppet_xpp.server.analysis import features
from puppet_xpp.server.analysis.document import Analysis, LineIndex, Pos
from puppet_xpp.server.analysis.symbols import Attr, Param, Signature, Sym  # noqa: F401  (re-exported: the index's entries)

# what else is done with each manifest index_file parses: hook(path, analysis)
ParsedHook = Callable[[str, Analysis], None]


def symbols_of(an: Analysis, path: str) -> list[Sym]:
    """Index entries of one analysed file (its top-level and nested definitions)."""
    return list(iter_symbols(an, path))


def iter_symbols(an: Analysis, path: str) -> Iterator[Sym]:
    """:func:`symbols_of` one entry at a time: the language server's deep checks take a big document's
    (tens of thousands of classes in a 5 MB manifest: about a second) in slices between the requests
    on other documents (server/lsp/deep.py ``check_steps``)."""
    prog = an.program
    if prog is None:
        return
    lines = an.lines
    for d in prog.definitions:
        if type(d) is ast.NodeDefinition:
            name = " ".join(features.src(an, h) for h in d.host_matches)
        else:
            name = getattr(d, "name", "")
        doc = features.leading_comment(an.data, d.offset)
        pdocs = features.param_docs(doc)
        params = [
            Param(
                p.name,
                features.expr_text(an, p.type_expr),
                features.expr_text(an, p.value),
                pdocs.get(p.name, ""),
                "repeated" if p.captures_rest else "optional" if p.value is not None else "required",
            )
            for p in (getattr(d, "parameters", None) or [])
        ]
        so, sl = features.name_span(an, d)
        kind = features.kind_name(d)
        sig = _signature(an, d, kind, name, params)
        sigs = []
        if kind in ("function", "plan"):  # one signature (signature help), its return type as written
            rt = getattr(d, "return_type", None)
            sigs = [Signature(params, features.expr_text(an, rt) if rt is not None else "")]
        yield Sym(
            name, kind, path, lines.range(d.offset, d.length), lines.range(so, sl), doc, params, sig, sigs
        )


def _signature(an: Analysis, d: ast.Node, kind: str, name: str, params: list[Param]) -> str:
    if kind == "type":
        return f"type {name} = {features.expr_text(an, getattr(d, 'type_expr', None))}"
    ps = []
    for p in params:
        s = (p.type + " " if p.type else "") + "$" + p.name + (" = " + p.default if p.default else "")
        ps.append(s)
    ret = ""
    rt = getattr(d, "return_type", None)
    if rt is not None:
        ret = " >> " + features.src(an, rt)
    if not ps:
        return f"{kind} {name}{'()' if kind in ('function', 'plan') else ''}{ret}"
    if len(ps) <= 3 and sum(len(x) for x in ps) < 70:
        return f"{kind} {name}({', '.join(ps)}){ret}"
    return f"{kind} {name}(\n  " + ",\n  ".join(ps) + f",\n){ret}"


class WorkspaceIndex:
    """The index entries by file and by name (lower case, no leading ``::``); the event loop and the
    analysis worker both use it (a lock)."""

    def __init__(self) -> None:
        self.by_path: dict[str, list[Sym]] = {}
        self.by_key: dict[str, list[Sym]] = {}
        self.lock = threading.Lock()

    def set_file(self, path: str, syms: list[Sym]) -> None:
        with self.lock:
            for s in self.by_path.get(path, ()):
                lst = self.by_key.get(s.key)
                if lst is not None:
                    try:
                        lst.remove(s)
                    except ValueError:
                        pass
            self.by_path[path] = syms
            for s in syms:
                self.by_key.setdefault(s.key, []).append(s)

    def remove_file(self, path: str) -> None:
        self.set_file(path, [])
        with self.lock:
            self.by_path.pop(path, None)

    def lookup(self, name: str, kinds: Iterable[str] | None = None) -> list[Sym]:
        with self.lock:
            out = list(self.by_key.get(name.lower().lstrip(":"), ()))
        if kinds:
            wanted = tuple(kinds)
            out = [s for s in out if s.kind in wanted]
        return out

    def all(self) -> list[Sym]:
        with self.lock:
            return [s for syms in self.by_path.values() for s in syms]

    def search(self, query: str, limit: int = 500) -> list[Sym]:
        q = query.lower()
        out = []
        for s in self.all():
            if not q or q in s.name.lower():
                out.append(s)
                if len(out) >= limit:
                    break
        return out


def index_file(
    path: str,
    tasks: bool | None = None,
    hooks: Sequence[ParsedHook] = (),
    refused: list[str] | None = None,
) -> list[Sym]:
    """Parse one file from disk and return its index entries ([] when unreadable): a manifest's
    definitions, or what a module's Ruby file defines (server/analysis/ruby_index.py).  Each of
    ``hooks`` gets the manifest's parse too.  The file is read by the one source-reading rule
    (:func:`xpp.sources.read_bytes`: regular files only, the size limit), so a FIFO or a link to a
    device named ``*.pp`` is skipped, never read; why goes to ``refused`` when given (a log line)."""
    from puppet_xpp.server.analysis.ruby_index import kind_of_path
    from puppet_xpp.xpp.sources import read_bytes

    if path.endswith(".rb") and kind_of_path(path) is None:
        return []  # not an API file: never read
    raw = read_bytes(path)
    if raw.data is None:
        if refused is not None and raw.diagnostic is not None:
            refused.append(raw.diagnostic.message)
        return []
    return index_data(path, raw.data, tasks, hooks)


def index_data(
    path: str, data: bytes, tasks: bool | None = None, hooks: Sequence[ParsedHook] = ()
) -> list[Sym]:
    """The index entries of ``data`` read from the file ``path`` (:func:`index_file` after the read; the
    index cache indexes the very bytes whose digest it records)."""
    if path.endswith(".rb"):
        from puppet_xpp.server.analysis.ruby_index import index_ruby_source, kind_of_path

        kind = kind_of_path(path)
        return index_ruby_source(data, path, kind) if kind is not None else []

    from puppet_xpp.server.analysis.workspace import in_plans_dir

    if tasks is None:
        tasks = in_plans_dir(path)
    # The collector is held off while the file is read (a parse, its references and entries make tens of
    # thousands of objects and no cycles), and what the file left -- its entries and references, kept as
    # long as the index -- is frozen after (gc.freeze, O(1); reference counting still frees it): else
    # each full collection the indexing's allocations start traverses the whole index made so far again
    # (about a third of the indexing's CPU in the server on issue 31's 80-module workspace).  The
    # language server's idle full collection (server.analysis.document.GcPacer) looks at it all again.
    with paused(freeze=False):
        syms = _index_manifest(path, data, tasks, hooks)
    if gc.isenabled():
        gc.freeze()
    return syms


def _index_manifest(path: str, data: bytes, tasks: bool, hooks: Sequence[ParsedHook]) -> list[Sym]:
    from puppet_xpp.grammar.parser import parse

    text = data.decode("utf-8", "surrogateescape")
    try:
        res = parse(text, path, epp=False, tasks=tasks)
    except Exception:  # a parser bug must not stop the indexing
        return []
    if res.program is None:
        return []
    lines = AsciiLineIndex(data) if data.isascii() else LineIndex(data)
    an = Analysis(None, text, data, res.program, res.tokens, res.locator, [], [], lines, tasks=tasks)
    for hook in hooks:  # e.g. the reference index (server/analysis/references.py)
        hook(path, an)
    return symbols_of(an, path)


class AsciiLineIndex(LineIndex):
    """The line index of an ASCII text, whose columns are its byte offsets in every position encoding
    (UTF-16, UTF-8, UTF-32): a position is one bisection, with no look-up of the line's wide characters.
    Most manifests are ASCII, and the indexing converts two positions per reference."""

    __slots__ = ()

    def position(self, offset: int | None) -> Pos:
        if offset is None or offset < 0:
            return 0, 0
        if offset > len(self.data):
            offset = len(self.data)
        line = bisect.bisect_right(self.starts, offset) - 1
        return line, offset - self.starts[line]


def workspace_files(roots: Iterable[str], limit: int = 20000) -> list[str]:
    """The .pp files and the Ruby files of Puppet's extension APIs (functions, types, facts) under the
    workspace roots and module directories, by the one walk every entry point uses
    (:func:`xpp.walk.walk`: symlinks followed once; PDK's default ignores -- ``spec/fixtures/``,
    ``pkg/``, ``vendor/``, hidden directories --, ``.pdkignore``/``.gitignore`` patterns and the
    project configuration's ``exclude`` skipped), ``spec/`` (tests' code defines nothing the workspace
    uses) and ``node_modules/`` (an editor extension's checkout holds no Puppet code).  A file reached
    from two roots (a module directory inside a workspace folder) is listed once."""
    from puppet_xpp.server.analysis.ruby_index import kind_of_path
    from puppet_xpp.xpp.project import project_for
    from puppet_xpp.xpp.walk import walk

    out: list[str] = []
    seen: set[tuple[int, int]] = set()  # directories walked, shared by the roots
    for root in roots:
        excludes = [(root, "node_modules/"), (root, "spec/"), *project_for(root).excludes()]
        for found in walk(root, (".pp", ".rb"), exclude=excludes, seen=seen):
            f = found.path
            if f.endswith(".pp") or kind_of_path(f):
                out.append(f)
                if len(out) >= limit:
                    return out
    return out
