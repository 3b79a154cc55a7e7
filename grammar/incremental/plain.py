"""The records of the plain parses shown while the text is broken (grammar.incremental.broken):
the tokens that records still refer to after a quote made them lexed anew (Shadow), the watch that
stops a resumed plain parse where the text parses again (Sync), and what a run made that the next
keystroke's run may take instead of parsing it again (PlainRun, Chunks).
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any

from puppet_xpp.grammar import ast
from puppet_xpp.grammar.build import Builder
from puppet_xpp.grammar.incremental.bodies import Bodies
from puppet_xpp.grammar.incremental.state import (
    Level,
    Node,
    bound_pos,
    node_end,
    nodes_of,
    same_token,
    shift_token,
)
from puppet_xpp.grammar.recovery import CLOSERS, OPENERS

if TYPE_CHECKING:
    from puppet_xpp.grammar.incremental.reparser import IncrementalParser
    from puppet_xpp.grammar.incremental.tail import Tail


class Shadow:
    """Tokens that the current token list lost while records may still refer to them -- the state's,
    while the text is broken at the top level, or a Ghost's (a quote typed makes the rest of a file
    lexed anew) -- moved with every later edit as if they were still in the list.  A token lexed
    again at the same place, equal, takes the old object back, so that those records (which refer to
    tokens by identity) find it again when the quote is closed.  Of two lost tokens at one place, the
    older is kept (records are older than the tokens of the edits since)."""

    __slots__ = ("toks",)
    LIMIT = 200_000  # (a guard: beyond this many, the shadow is dropped, and records fall back)

    def __init__(self) -> None:
        self.toks: dict[int, Any] = {}  # start position -> token

    def add(self, removed: list[Any], ds: int, de_old: int, delta: int) -> None:
        """An edit replaced bytes [ds, de_old) (delta longer) and the tokens `removed` (old positions)."""
        moved: dict[int, Any] = {}
        for p, t in self.toks.items():
            if p >= de_old:
                shift_token(t, delta)
                moved[p + delta] = t
            elif p < ds:
                moved[p] = t
        for t in removed:
            p = t.start_pos
            if p >= de_old:
                p += delta
                if p not in moved:
                    shift_token(t, delta)
                    moved[p] = t
            elif p < ds and t.end_pos <= ds and p not in moved:
                moved[p] = t
        self.toks = moved

    def take_back(self, middle: list[Any]) -> None:
        have = self.toks
        if not have:
            return
        for k, x in enumerate(middle):
            y = have.get(x.start_pos)
            if y is not None and same_token(x, y, 0):
                middle[k] = y
                del have[x.start_pos]


# errors that a reduction made after a statement boundary reports before it (at a node that began
# before the boundary): a plain parse resumed at that boundary would not find them in the state
class ListBuilder(Builder):
    """A Builder that keeps the statement lists it makes (the units of a resumed plain parse)."""

    def __init__(self, locator: Any, file: str) -> None:
        super().__init__(locator, file)
        self.lists: list[list[Any]] = []

    def statements(self, raw: list[Any]) -> list[Any]:
        out = super().statements(raw)
        self.lists.append(out)
        return out


class Sync:
    """The ``watch`` of BrokenText.resume_plain's run: stops it where a list around the change
    reaches a boundary (or its end) that the old parse had on the same unchanged token, at that list's
    stack height -- from there the parse is the old one, so the text is not broken at the top level."""

    def __init__(self, tokens: list[Any], n: int, ce: int, lists: dict[int, Level]) -> None:
        self.tokens = tokens
        self.n = n
        self.ce = ce
        self.lists = lists  # stack height of a list's statements -> the list
        self.ghost: tuple[int, set[int]] | None = None  # (height, ids of the Ghost's boundaries)
        # where the run resumed after errors inside bodies (PlainRun), and the last run's (when the
        # tokens from `unchanged` on are the ones it parsed): meeting one of its configurations again
        # stops the run with `reused` set
        self.builder: Any = None
        self.resumes: list[tuple[Any, ...]] = []
        self.last: PlainRun | None = None
        self.unchanged = 0
        self.lim = 0  # the first byte the edit changed (before it, both runs' texts are the same)
        self.reused: int | None = None
        self.scan = (0, 0)  # the run's first token and the bracket depth before it (recover_top's scan)
        self.bodies: Bodies | None = None  # the run's bodies (grammar.incremental.bodies)

    def __call__(self, event: str, i: int, stack: list[Any], values: list[Any]) -> Any:
        if event == "resume":
            return self._resume(i, stack, values)
        if event == "open" or event == "list":
            return None if self.bodies is None else self.bodies(event, i, stack, values)
        if i < self.ce:
            return None
        lvl = self.lists.get(len(stack))
        if lvl is None:
            return False
        tok = self.tokens[i] if i < self.n else None
        if event == "end":
            return tok is lvl.closer
        if tok is None:
            return False
        bounds = lvl.bounds
        k = bisect.bisect_left(bounds, tok.start_pos, key=bound_pos)
        if k < len(bounds) and bounds[k] is tok:
            return True
        g = self.ghost
        return g is not None and g[0] == len(stack) and id(tok) in g[1]

    def _resume(self, i: int, stack: list[Any], values: list[Any]) -> bool:
        tok = self.tokens[i] if i < self.n else None
        # (after the run, top-level recovery counts brackets from the run's start: an edit that
        # changed that count changes where it resumes)
        d = self.scan[1]
        closers, openers = CLOSERS, OPENERS
        for t in self.tokens[self.scan[0] : i]:
            ty = t.type
            if ty in closers:
                d = max(0, d - 1)
            if ty in openers:
                d += 1
        conf = (tok, tuple[Any, ...](stack), tuple(tuple(v) if type(v) is list else v for v in values), d)
        last = self.last
        if last is not None and i >= self.unchanged:
            j = last.at(conf, self.lim)
            if j is not None:
                self.reused = j
                return True
        self.resumes.append((*conf, len(self.builder.diagnostics)))
        return False


def copy_list(v: Any) -> Any:
    """A copy of a list value of the LR stack (a CommaList keeps its commas), any other value as is."""
    if not isinstance(v, list):
        return v
    c = type(v)(v)
    if hasattr(v, "commas"):
        c.commas = list(v.commas)  # type: ignore[attr-defined]
    return c


def _same_conf(x: tuple[Any, ...], y: tuple[Any, ...], lim: int) -> bool:
    """Two driver configurations (token, LR states, values with lists as tuples) of the same objects,
    or of equal nodes that end before byte lim (the texts of both runs are the same there).

    The run starts at a boundary of the innermost list around the change that the state knows, and
    a body of one statement is no list of its own: a run that resumes inside it after an error has
    the enclosing headers (an `if`'s condition, the statements before the error) on its stack, made
    anew by each run from the same unchanged tokens.  Equal to the last run's, they let its Program
    be reused: it holds its own copies of them."""
    if x[0] is not y[0] or x[1] != y[1] or x[3] != y[3] or len(x[2]) != len(y[2]):
        return False
    for a, b in zip(x[2], y[2]):
        if a is b:
            continue
        if type(a) is tuple:
            if type(b) is not tuple or len(a) != len(b):
                return False
            if not all(p is q or _equal_before(p, q, lim) for p, q in zip(a, b)):
                return False
        elif not _equal_before(a, b, lim):
            return False
    return True


def _equal_before(a: Any, b: Any, lim: int) -> bool:
    """Equal AST nodes (deep, positions included) that end before byte lim.  A call's rval_required
    is not compared: the transform of the statement list that will hold it (in both runs alike, as
    they go on the same from here) cleared the last run's."""
    if type(a) is not type(b) or not isinstance(b, Node) or node_end(b) > lim:
        return False
    if type(a) is ast.CallNamedFunctionExpression:
        call: Any = b
        keep = call.rval_required
        call.rval_required = a.rval_required
        try:
            return bool(a == call)
        finally:
            call.rval_required = keep
    return bool(a == b)


class PlainRun:
    """What a resumed plain parse (BrokenText.resume_plain) made, for the next keystroke: a
    run that resumes after an error inside a body at a token the edit did not change, with the same
    LR states and the same objects below, goes on exactly as this one did -- its Program and its
    diagnostics from there on are this run's, moved by the edit.  (A quote typed mid-file makes the
    rest of the text one string, then code where strings were: each keystroke until it is closed
    would parse all of that again.)  Holds the objects it compares, so their ids stay unique."""

    __slots__ = ("resumes", "diags", "order", "prog", "units", "recovered", "chunks", "far", "bodies")

    def __init__(
        self,
        resumes: list[tuple[Any, ...]],
        diags: list[Any],
        order: dict[int, Any],
        prog: Any,
        units: set[int],
        recovered: bool,
    ) -> None:
        self.resumes = resumes  # (token, states, values, depth, index in diags) where the run resumed
        self.diags = diags  # the run's diagnostics, in the order it made them
        self.order = order  # their sort keys (Builder.diagnostic_order)
        self.prog = prog
        self.units = units
        self.recovered = recovered
        self.chunks: Chunks | None = None  # its runs after errors at the top level
        # its first error at the top level came more than FAR tokens after the change: the next
        # keystroke tries the plain parse first (the innermost list's run would go all that way
        # only to escalate, e.g. after a `{` typed in a body took the `}` of the body)
        self.far = False
        self.bodies: Bodies | None = None  # its bodies, for the next keystroke's run to take whole

    def at(self, conf: tuple[Any, ...], lim: int) -> int | None:
        for j, r in enumerate(self.resumes):
            if r[0] is conf[0] and _same_conf(r, conf, lim):
                return j
        return None


class Chunks:
    """grammar.parser.recover_top's ``chunks``: after a syntax error at the top level, each run starts
    afresh at a statement start (token, bracket depth before it), so what it and every later run make
    depends on the tokens from there on only.  Records where they began (in the top-level statements
    and the diagnostics made so far), and when the last plain parse (``last``) began one at the same
    token, unchanged since (at or after ``unchanged``), with the same depth, takes that parse's
    statements (moved by the edit) and diagnostics from there on instead of running them again."""

    def __init__(
        self,
        owner: IncrementalParser,
        builder: Any,
        last: Chunks | None,
        unchanged: int,
        kept: KeptChunks | None = None,
    ) -> None:
        self.owner = owner  # (its tokens, positions and edit)
        self.builder = builder
        self.last = last
        self.unchanged = unchanged
        self.kept = kept  # an older plain parse's, kept across the updates since (KeptChunks)
        self.records: list[tuple[Any, int, int, int]] = []  # (token, depth, statements, diagnostics)
        self.raw: list[Any] | None = None  # the top-level statements (recover_top's list)
        self.ndiag = 0  # diagnostics of the runs (before the transforms of dropped lists)
        self.dropped: list[int] = []  # where lists dropped by recovery were cut (transform_dropped)
        self.reused = False
        self.reused_at = 0  # (when reused: the token index where the runs taken begin)
        self.taken: KeptChunks | None = None  # the kept parse whose runs were taken (not the last's)
        # the runs seeded with the incremental state's statements (grammar.incremental.tail), if any
        self.tail: Tail | None = None

    def __call__(self, k: int, depth: int, raw: list[Any]) -> list[Any] | None:
        self.raw = raw
        return self.at(k, depth, raw, 0)

    def at(self, k: int, depth: int, raw: list[Any], base: int) -> list[Any] | None:
        """recover_top is about to run from token k; ``raw``: the top-level statements before it,
        after ``base`` others (a seeded run's recover_top holds the statements from that run on)."""
        p = self.owner
        toks = p.tokens
        tok = toks[k] if k < len(toks) else None
        here = base + len(raw)
        if tok is not None and k >= self.unchanged:
            last = self.last
            if last is not None and last.raw is not None:
                assert p.last_edit is not None
                ds, de, delta = p.last_edit
                rest = self._take(last, tok, depth, here, delta, de - delta)
                if rest is not None:
                    self.reused_at = k
                    return rest
            kept = self.kept
            if kept is not None and kept.chunks is not last and kept.chunks.raw is not None:
                # (every edit since it ended before the line of its first run: all of it moves)
                rest = self._take(kept.chunks, tok, depth, here, kept.delta, None)
                if rest is not None:
                    self.reused_at = k
                    self.taken = kept
                    return rest
        self.records.append((tok, depth, here, len(self.builder.diagnostics)))
        tail = self.tail
        if tail is not None and tok is not None:
            rest = tail.run(k, depth, lambda k2, d2, r2: self.at(k2, d2, r2, here))
            if rest is not None:
                return rest
        return None

    def _take(
        self, last: Chunks, tok: Any, depth: int, here: int, delta: int, de_old: int | None
    ) -> list[Any] | None:
        """The statements of ``last``'s runs from the one that began at ``tok`` with ``depth`` on (moved
        by delta bytes: those at or after de_old, all when None), its diagnostics added to this run's;
        None when it began none there.  ``here``: the top-level statements before them."""
        p = self.owner
        b = self.builder
        if last.raw is not None:
            for j, r in enumerate(last.records):
                if r[0] is not tok or r[1] != depth:
                    continue
                if any(off >= tok.start_pos - delta for off in last.dropped):
                    break  # (a list it dropped reports its transform's errors at the end)
                rest = last.raw[r[2] :]
                nodes = nodes_of(rest)
                if delta:
                    for x in nodes:
                        p.pos.mark(x, delta)
                    if nodes:  # (recover_top reads where the first and the last begin and end)
                        p.pos.push(nodes[0])
                        p.pos.push(nodes[-1])
                for d in last.builder.diagnostics[r[3] : last.ndiag]:
                    key = last.builder.order.get(id(d))
                    if delta:
                        if d.offset is not None and (de_old is None or d.offset >= de_old):
                            d.offset += delta
                        if key is not None and (de_old is None or key[0] >= de_old):
                            key = (key[0] + delta, key[1])
                    if key is not None:
                        b.order[id(d)] = key
                    b.diagnostics.append(d)
                b.had_errors = b.had_errors or last.builder.had_errors
                # (its records from there on, as indices into this run's statements and diagnostics)
                n_diag = len(b.diagnostics) - (last.ndiag - r[3])
                self.records.extend(
                    (x[0], x[1], x[2] - r[2] + here, x[3] - r[3] + n_diag) for x in last.records[j:]
                )
                self.reused = True
                return rest
        return None

    def finish(self) -> None:
        """recover_top has returned: the runs' diagnostics end here, then the transforms of the lists
        recovery dropped report theirs (as grammar.parser.parse_lexed does)."""
        b = self.builder
        self.ndiag = len(b.diagnostics)
        self.dropped = [off for _raw, off in b.transform_first.values()]
        b.transform_dropped()


class KeptChunks:
    """The runs after top-level errors of the last plain parse that made any (Chunks), kept while the
    text is repaired and broken again (BrokenText.kept), so that the next break takes them.

    An open quote typed mid-body makes the rest of the file lexed anew up to where the lexer syncs,
    recovery closes the body early and every statement after the first top-level error is parsed and
    validated again (on the 292 KB class of bench/bench_completion.py, the same top-level run from one
    line for every quote typed over the ~250 lines before it).  Deleting the quote again repairs the
    text incrementally, and the last plain parse is gone: the next quote parsed and validated the whole
    tail again.  What those runs make depends on the tokens from their first one on only (Chunks), so
    they are kept as long as every edit since ends before the line of that token (the bytes that decide
    whether recovery may resume on a line are then the same) and it is still in the token list
    (:meth:`carry`); the statements are moved by the bytes added before them (``delta``) when taken,
    and their validation is taken with them (``units``, ``pcache``)."""

    __slots__ = ("chunks", "run", "units", "pcache", "delta")

    def __init__(self, chunks: Chunks, run: PlainRun) -> None:
        self.chunks = chunks
        self.run = run  # (the PlainRun whose validation cache is the one to keep: see BrokenText.validated)
        self.units = run.units
        self.pcache: dict[int, tuple[Any, ...]] = {}
        self.delta = 0  # bytes added before its first run's token since it was made

    def carry(self, owner: IncrementalParser, ds: int, de: int, delta: int) -> bool:
        """An edit replaced bytes [ds, de - delta) by [ds, de) (current coordinates; the tokens not yet
        moved): may the runs still be taken?  (Its delta is added when so.)"""
        first = self.chunks.records[0][0] if self.chunks.records else None
        if first is None or owner.index(first) < 0:
            return False
        at = first.start_pos + delta  # (the token, where it will be)
        if first.start_pos < de - delta or owner.data.find(b"\n", de, at) < 0:
            return False  # (the edit is on its line or after it)
        self.delta += delta
        return True
