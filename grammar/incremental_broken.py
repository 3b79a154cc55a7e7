"""Broken text for the incremental parser (grammar.incremental): while a syntax error at the top
level or a hard lexer error keeps the incremental state, a plain parse resumed at the last boundary
before the change is shown (BrokenText, a mixin of IncrementalParser), and the tokens and work that
an open quote would make it redo are taken back (_Shadow, _PlainRun, _Chunks).  Separate from the
path that reparses statement lists, which only calls into it.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any

from puppet_xpp.grammar import ast as A
from puppet_xpp.grammar import parser as P
from puppet_xpp.grammar.build import Builder
from puppet_xpp.grammar.incremental_bodies import Bodies
from puppet_xpp.grammar.incremental_state import (
    _FAR,
    BlockExpression,
    Node,
    _bound_pos,
    _end,
    _Level,
    _LexBroken,
    _no_visit,
    _nodes_of,
    _roots,
    _same,
    _shift,
    _start,
)
from puppet_xpp.grammar.issues import Diagnostic
from puppet_xpp.grammar.recovery import CLOSERS, OPENERS

if TYPE_CHECKING:
    from puppet_xpp.grammar.incremental import IncrementalParser


class _Shadow:
    """Tokens that the current token list lost while records may still refer to them -- the state's,
    while the text is broken at the top level, or a _Ghost's (a quote typed makes the rest of a file
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
                _shift(t, delta)
                moved[p + delta] = t
            elif p < ds:
                moved[p] = t
        for t in removed:
            p = t.start_pos
            if p >= de_old:
                p += delta
                if p not in moved:
                    _shift(t, delta)
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
            if y is not None and _same(x, y, 0):
                middle[k] = y
                del have[x.start_pos]


# errors that a reduction made after a statement boundary reports before it (at a node that began
# before the boundary): a plain parse resumed at that boundary would not find them in the state
_AROUND = frozenset(
    (
        "SYNTAX_ERROR",
        "PARSE_VIRTUAL_NOT_RESOURCE",
        "PARSE_EXPORTED_NOT_RESOURCE",
        "PARSE_RESOURCE_WITHOUT_TITLE_PLUS",
        "PARSE_NOT_A_RESOURCE",
    )
)


class _ListBuilder(Builder):
    """A Builder that keeps the statement lists it makes (the units of a resumed plain parse)."""

    def __init__(self, locator: Any, file: str) -> None:
        super().__init__(locator, file)
        self.lists: list[list[Any]] = []

    def statements(self, raw: list[Any]) -> list[Any]:
        out = super().statements(raw)
        self.lists.append(out)
        return out


class _Sync:
    """The ``watch`` of IncrementalParser._resume_plain's run: stops it where a list around the change
    reaches a boundary (or its end) that the old parse had on the same unchanged token, at that list's
    stack height -- from there the parse is the old one, so the text is not broken at the top level."""

    def __init__(self, tokens: list[Any], n: int, ce: int, lists: dict[int, _Level]) -> None:
        self.tokens = tokens
        self.n = n
        self.ce = ce
        self.lists = lists  # stack height of a list's statements -> the list
        self.ghost: tuple[int, set[int]] | None = None  # (height, ids of the _Ghost's boundaries)
        # where the run resumed after errors inside bodies (_PlainRun), and the last run's (when the
        # tokens from `unchanged` on are the ones it parsed): meeting one of its configurations again
        # stops the run with `reused` set
        self.builder: Any = None
        self.resumes: list[tuple[Any, ...]] = []
        self.last: _PlainRun | None = None
        self.unchanged = 0
        self.lim = 0  # the first byte the edit changed (before it, both runs' texts are the same)
        self.reused: int | None = None
        self.scan = (0, 0)  # the run's first token and the bracket depth before it (recover_top's scan)
        self.bodies: Bodies | None = None  # the run's bodies (grammar.incremental_bodies)

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
        k = bisect.bisect_left(bounds, tok.start_pos, key=_bound_pos)
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


def _copy_list(v: Any) -> Any:
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
    if type(a) is not type(b) or not isinstance(b, Node) or _end(b) > lim:
        return False
    if type(a) is A.CallNamedFunctionExpression:
        call: Any = b
        keep = call.rval_required
        call.rval_required = a.rval_required
        try:
            return bool(a == call)
        finally:
            call.rval_required = keep
    return bool(a == b)


class _PlainRun:
    """What a resumed plain parse (IncrementalParser._resume_plain) made, for the next keystroke: a
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
        self.chunks: _Chunks | None = None  # its runs after errors at the top level
        # its first error at the top level came more than _FAR tokens after the change: the next
        # keystroke tries the plain parse first (the innermost list's run would go all that way
        # only to escalate, e.g. after a `{` typed in a body took the `}` of the body)
        self.far = False
        self.bodies: Bodies | None = None  # its bodies, for the next keystroke's run to take whole

    def at(self, conf: tuple[Any, ...], lim: int) -> int | None:
        for j, r in enumerate(self.resumes):
            if r[0] is conf[0] and _same_conf(r, conf, lim):
                return j
        return None


class _Chunks:
    """grammar.parser.recover_top's ``chunks``: after a syntax error at the top level, each run starts
    afresh at a statement start (token, bracket depth before it), so what it and every later run make
    depends on the tokens from there on only.  Records where they began (in the top-level statements
    and the diagnostics made so far), and when the last plain parse (``last``) began one at the same
    token, unchanged since (at or after ``unchanged``), with the same depth, takes that parse's
    statements (moved by the edit) and diagnostics from there on instead of running them again."""

    def __init__(self, owner: Any, builder: Any, last: _Chunks | None, unchanged: int) -> None:
        self.owner = owner  # the IncrementalParser (its tokens, positions and edit)
        self.builder = builder
        self.last = last
        self.unchanged = unchanged
        self.records: list[tuple[Any, int, int, int]] = []  # (token, depth, statements, diagnostics)
        self.raw: list[Any] | None = None  # the top-level statements (recover_top's list)
        self.ndiag = 0  # diagnostics of the runs (before the transforms of dropped lists)
        self.dropped: list[int] = []  # where lists dropped by recovery were cut (transform_dropped)
        self.reused = False

    def __call__(self, k: int, depth: int, raw: list[Any]) -> list[Any] | None:
        self.raw = raw
        p = self.owner
        toks = p.tokens
        tok = toks[k] if k < len(toks) else None
        b = self.builder
        last = self.last
        if last is not None and tok is not None and k >= self.unchanged and last.raw is not None:
            assert p._edit is not None
            ds, de, delta = p._edit
            de_old = de - delta
            for j, r in enumerate(last.records):
                if r[0] is not tok or r[1] != depth:
                    continue
                if any(off >= tok.start_pos - delta for off in last.dropped):
                    break  # (a list it dropped reports its transform's errors at the end)
                rest = last.raw[r[2] :]
                nodes = _nodes_of(rest)
                if delta:
                    for x in nodes:
                        p.pos.mark(x, delta)
                    if nodes:  # (recover_top reads where the first and the last begin and end)
                        p.pos.push(nodes[0])
                        p.pos.push(nodes[-1])
                for d in last.builder.diagnostics[r[3] : last.ndiag]:
                    key = last.builder.order.get(id(d))
                    if delta:
                        if d.offset is not None and d.offset >= de_old:
                            d.offset += delta
                        if key is not None and key[0] >= de_old:
                            key = (key[0] + delta, key[1])
                    if key is not None:
                        b.order[id(d)] = key
                    b.diagnostics.append(d)
                b.had_errors = b.had_errors or last.builder.had_errors
                # (its records from there on, as indices into this run's statements and diagnostics)
                n_diag = len(b.diagnostics) - (last.ndiag - r[3])
                self.records.extend(
                    (x[0], x[1], x[2] - r[2] + len(raw), x[3] - r[3] + n_diag) for x in last.records[j:]
                )
                self.reused = True
                return rest
        self.records.append((tok, depth, len(raw), len(b.diagnostics)))
        return None

    def finish(self) -> None:
        """recover_top has returned: the runs' diagnostics end here, then the transforms of the lists
        recovery dropped report theirs (as grammar.parser.parse_lexed does)."""
        b = self.builder
        self.ndiag = len(b.diagnostics)
        self.dropped = [off for _raw, off in b.transform_first.values()]
        b.transform_dropped()


class BrokenText:
    """IncrementalParser's broken-text paths (a mixin: the methods' self is the IncrementalParser).

    *Broken text.*  Statements that a syntax error swallowed (recovery skipped to the list's end) are set
    aside and found again by the edit that repairs it.  A syntax error at the top level keeps the incremental
    state as it was and shows a plain parse of the current tokens; the next edit reparses from that state over
    both edits.  That plain parse is *resumed*: when the innermost list's run does not come back to its
    boundaries, the same driver runs on, unwatched, from the LR configuration the state recorded at the list's
    last boundary before the change (the tokens before it are unchanged, so a plain parse from the first token
    reaches exactly that configuration), and grammar.parser.recover_top does the top-level recovery from
    there; the diagnostics before the change are the state's.  If that run meets an old boundary of a list
    around the change again, the text is not broken at the top level and the lists are tried as before.  Its
    Program is validated with the state's cache (the statements it kept are the state's units).  A hard lexer
    error (an unclosed quote) also keeps the state: the tokens before the lexing window are the state's, the
    window's complete them up to the error, and a plain parse of those is shown.  Too deep nesting, a window
    that cannot be lexed on its own and EPP use a full parse.

    *Quotes.*  A quote typed mid-file makes the rest of the text lexed anew (one long string, then code where
    strings were).  The tokens that records still refer to (the state's while broken, a _Ghost's) are kept in
    a _Shadow, moved with later edits, and equal tokens lexed again at the same place take the old objects
    back; while broken, a window may end at the first line after the edits where the state's lexing is in its
    initial state (_state_tail), and the state's tokens from there on are taken back without lexing them; the
    next keystroke's plain parse takes the last one's Program and diagnostics from the first configuration
    (after an error inside a body) that both runs reach (_PlainRun).  So only the keystrokes that open or
    close the quote's string over the rest of the file cost a pass over it.
    """

    # For mypy only (no runtime effect): the IncrementalParser attributes these methods set, declared with
    # the types its __init__ gives them (mypy takes an attribute set through a mixin method's self for one
    # of the mixin's own); and `type: ignore[misc]` on each method, as mypy wants an explicit self type to
    # be a supertype of the class, not the subclass the mixin serves.
    tokens: list[Any]
    full_diags: list[Any]
    _program: Any
    _broken: tuple[int, int, int] | None
    _broken_ds: int
    _broken_de: int
    _broken_top: bool
    _top_err: int
    _state_toks: list[Any] | None
    _state_inside: list[Any] | None
    _state_nesting: list[Any]
    _state_lexw: bool
    _shadow: _Shadow | None
    _rdiv_clean: int
    _plain_run: _PlainRun | None
    _cut: tuple[int, int, list[Any]] | None
    _plain_units: set[int] | None
    _kept_tokens: list[Any] | None
    _relocate: bool
    _pcache: dict[int, tuple[Any, ...]]
    _plain_lazy: bool
    block_recovery: bool
    _pending: tuple[int, int, int] | None
    stats: dict[str, Any]

    def _set_broken(self: IncrementalParser, c: int, ce: int, total: int, ds: int, de: int) -> None:  # type: ignore[misc]
        """The text is broken at the top level; the state stays (see the class docstring).  When it
        was not broken before, the state's token list is what this update's splice replaced."""
        if self._broken is None:
            m0, mlen, removed, eds, ede_old, edelta, inside, nesting = self._last_splice
            toks = self.tokens
            self._state_toks = toks[:m0] + removed + toks[m0 + mlen :]
            self._state_inside = inside
            self._state_nesting = nesting
            self._state_lexw = any(d.offset is None or d.offset >= eds for d in self.lex_diags)
            if self._shadow is None:  # (else _relex added them already)
                self._shadow = _Shadow()
                self._shadow.add(removed, eds, ede_old, edelta)
        self._broken = (c, ce, total)
        self._broken_ds = ds
        self._broken_de = de

    def _end_broken(self: IncrementalParser) -> None:  # type: ignore[misc]
        self._broken = None
        self._broken_top = False
        self._state_toks = None
        if self._ghost is None:
            self._shadow = None

    def _state_suffix(self: IncrementalParser, c: int, ce: int, de: int) -> int:  # type: ignore[misc]
        """While broken: the changed tokens [c, ce) since the state end earlier when the last of them
        are the state's own again (a quote closed again: the tokens after it were lexed anew and took
        back the state's objects, see _Shadow) and no edit since the state reaches them (de: the end
        of the last edit, current coordinates).  The state's records then sync on them."""
        st = self._state_toks
        if st is None:
            return ce
        toks = self.tokens
        off = len(st) - len(toks)
        while ce > c and ce - 1 + off >= 0:
            t = toks[ce - 1]
            if t.start_pos < de or st[ce - 1 + off] is not t:
                break
            ce -= 1
        return ce

    def _resume_plain(self: IncrementalParser, lvl: _Level, c: int, ce: int, ds: int) -> bool:  # type: ignore[misc]
        """The text may be broken at the top level: run grammar.parser's plain parse from the last
        boundary of lvl (the innermost list around the change) instead of from the first token.

        The tokens before that boundary did not change, so a plain parse reaches the LR configuration
        the state recorded there (lvl's stack, with the statements each enclosing list had by then); the
        run goes on from it with the same driver, unwatched, so it is the plain parse's first run from
        there.  When it fails at the top level, grammar.parser.recover_top does the rest (its bracket
        scan starts at the boundary, with the depth the stack shows), and the diagnostics before the
        boundary are the state's.  Returns False (the caller goes on as before) when the run reaches a
        boundary of lvl or of an enclosing list where the old parse had one on the same unchanged token
        (the text is not broken at the top level), or when the state cannot vouch for the configuration
        (an error recovered before the boundary, a stack holding objects of an older parse)."""
        assert self.levels is not None and self._base is not None
        toks = self.tokens
        n = len(toks)
        data = self.data
        t = self.tables
        oi = self._index(lvl.opener)
        if lvl.stale or oi < 0 or oi >= c:
            return False
        s, start_i = self._boundary(lvl, c, oi + 1)
        bpos = toks[start_i].start_pos if start_i < n else len(data)
        # what lies before lim is the same text in the state's coordinates and in the current ones
        lim = min(bpos, toks[c].start_pos if c < n else len(data), ds)
        op_pos = lvl.opener.start_pos
        around = [
            a
            for a in self.levels.values()
            if a.opener is None
            or (a.opener.start_pos < op_pos and a.closer is not None and a.closer.start_pos > op_pos)
        ]
        if any(a.stale for a in around):
            return False
        around.sort(key=lambda a: -1 if a.opener is None else a.opener.start_pos, reverse=True)
        chain = [lvl] + around
        # what the state knows before the boundary must be a plain parse's: no recovered syntax error
        # (recovery there would change the bracket depth count and the driver's last resume point), no
        # error of a node built around the boundary (reported by a reduction after it)
        for d in self.base_diags:
            if d.offset is not None and d.offset < lim and d.code in _AROUND:
                return False
        # the LR stack at the boundary: each enclosing list holds the statements before the one that
        # holds lvl (the recorded list objects grew since)
        stack = list(lvl.states)
        values = list(lvl.values)
        # ... and the record must have the structure the current text gives: an entry for the
        # statements of each enclosing list exactly when it has some before the one holding lvl
        # (statements typed before an enclosing statement that was not reparsed leave it as it was)
        gotos = t.gotos
        lists = []
        if not values or values[-1] is not lvl.opener:
            return False
        found = 0
        for a in reversed(chain[1:]):  # the program's list first
            k = 0 if a.opener is None else next((j + 1 for j, v in enumerate(values) if v is a.opener), -1)
            if k < 0:
                return False
            m = bisect.bisect_right(a.bounds, op_pos, key=_bound_pos)
            has = k < len(values) and stack[k + 1] == gotos[stack[k]].get("stmts")
            if has != (m > 0):
                return False
            if has:
                values[k] = a.raw[:m]
                lists.append((a, m))
                found += 1
        if found != sum(1 for k in range(len(values)) if stack[k + 1] == gotos[stack[k]].get("stmts")):
            return False
        if s:
            stack.append(gotos[stack[-1]]["stmts"])
            values.append(lvl.raw[:s])
            lists.append((lvl, s))
        self._place_before(bpos, lists, values)
        # the run reduces below the boundary and the builder appends to the lists it finds there
        # (a case's options, a resource's bodies...): those of the state's nodes stay as they are
        values[:] = [_copy_list(v) for v in values]
        depth = sum(1 for v in values if getattr(v, "type", None) in OPENERS)
        watch = _Sync(toks, n, ce, {len(a.states) + 1: a for a in chain})
        g = self._ghost
        if g is not None and g.level in chain:
            watch.ghost = (len(g.level.states) + 1, {id(bt) for bt in g.bounds[:-1]} | {id(g.start)})
        cfg = self.config
        old_ids = _roots(values)
        b = _ListBuilder(self.locator, cfg.file)
        b.namestack[:] = P.open_class_names(t, stack, values)
        watch.builder = b
        watch.scan = (start_i, depth)
        cut = self._cut
        if self._last_plain is not None and self._edit is not None and cut is None:
            watch.last = self._last_plain
            watch.unchanged = self._edit_ce
            watch.lim = self._edit[0]
        chunks = self._chunks(b)
        drv = P.Driver(b, cut=cut is not None, memo=self._scan_memo)
        run_toks = toks if cut is None else toks[: cut[0]]
        bodies = watch.bodies = self._bodies(b, len(run_toks))
        try:
            value, err = drv.run(run_toks, start_i, len(run_toks), len(data), stack, values, watch)
            if watch.reused is not None:
                bodies.undo()
                return self._reuse_plain(watch, b, lim, chain)
            if value is P.STOPPED or err is None:
                bodies.undo()
                return False
            far = err - c > _FAR
            prog = P.recover_top(
                drv, run_toks, b, len(data), data, value, err, False, (start_i, depth), False, chunks, bodies
            )
            chunks.finish()
        except Exception:
            bodies.undo()
            return False
        done = self._plain_finish(b, prog, lim, chain, old_ids, watch.resumes, chunks, n - start_i, bodies)
        if self._plain_run is not None:
            self._plain_run.far = far
        return done

    def _place_before(  # type: ignore[misc]
        self: IncrementalParser, bpos: int, lists: list[tuple[_Level, int]], values: list[Any]
    ) -> None:
        """A plain run resumed at byte bpos: the builder reads the start and end of the values it
        combines, so the nodes before the boundary (the statements the lists hold, the values of the
        LR stack) get their pending position marks applied."""
        pos = self.pos
        if not pos.pending:
            return
        pos._delta = 0
        pos._spine(self._base.body, bpos, bpos, _no_visit)
        pending = pos.pending
        for a, m in lists:
            for x in a.out or ():
                if id(x) in pending and pos._lo(x) < bpos:
                    pos.push(x)
            for x in _nodes_of(a.raw[:m]):
                if id(x) in pending:
                    pos.push(x)
        for v in values:
            for x in _nodes_of([v]) if isinstance(v, list) else ([v] if isinstance(v, Node) else []):
                if id(x) in pending:
                    pos.push(x)

    def _bodies(self: IncrementalParser, b: Builder, n: int) -> Bodies:  # type: ignore[misc]
        """The Bodies watch of a plain run: the last keystroke's run's bodies may be taken whole."""
        last = self._last_plain
        prev = None
        if last is not None and self._edit is not None and self._cut is None:
            prev = last.bodies
        delta = self._edit[2] if self._edit is not None else 0
        return Bodies(self, b, prev, self._edit_ce, delta, n)

    def _chunks(self: IncrementalParser, b: Builder) -> _Chunks:  # type: ignore[misc]
        last = self._last_plain
        prev = last.chunks if last is not None and self._edit is not None and self._cut is None else None
        return _Chunks(self, b, prev, self._edit_ce)

    def _resume_top(self: IncrementalParser, c: int, ds: int) -> bool:  # type: ignore[misc]
        """The text is broken at the top level: grammar.parser's plain parse, run from the last
        boundary of the program's statements before the change (with the LR stack the state recorded
        there; the tokens before it did not change) instead of from the first token, its runs after
        top-level errors taken from the last plain parse where they begin at the same unchanged
        token (_Chunks).  Returns False when the state cannot vouch for that configuration."""
        assert self.levels is not None and self._base is not None
        lvl = self.levels.get(0)
        if lvl is None or lvl.stale:
            return False
        toks = self.tokens
        n = len(toks)
        data = self.data
        t = self.tables
        s, start_i = self._boundary(lvl, c, 0)
        bpos = toks[start_i].start_pos if start_i < n else len(data)
        lim = min(bpos, toks[c].start_pos if c < n else len(data), ds)
        for d in self.base_diags:
            if d.offset is not None and d.offset < lim and d.code in _AROUND:
                return False
        stack = list(lvl.states)
        values = list(lvl.values)
        if s:
            stack.append(t.gotos[stack[-1]]["stmts"])
            values.append(lvl.raw[:s])
        self._place_before(bpos, [(lvl, s)], values)
        old_ids = _roots(values)
        b = _ListBuilder(self.locator, self.config.file)
        chunks = self._chunks(b)
        cut = self._cut
        drv = P.Driver(b, cut=cut is not None, memo=self._scan_memo)
        run_toks = toks if cut is None else toks[: cut[0]]
        bodies = self._bodies(b, len(run_toks))
        try:
            value, err = drv.run(run_toks, start_i, len(run_toks), len(data), stack, values, bodies)
            if err is None:
                bodies.undo()
                return False
            self._top_err = err
            prog = P.recover_top(
                drv, run_toks, b, len(data), data, value, err, False, (start_i, 0), False, chunks, bodies
            )
            chunks.finish()
        except Exception:
            bodies.undo()
            return False
        return self._plain_finish(b, prog, lim, [lvl], old_ids, [], chunks, n - start_i, bodies)

    def _plain_finish(  # type: ignore[misc]
        self: IncrementalParser,
        b: Any,
        prog: Any,
        lim: int,
        chain: list[_Level],
        old_ids: set[int],
        resumes: list[tuple[Any, ...]],
        chunks: _Chunks,
        parsed: int,
        bodies: Bodies,
    ) -> bool:
        """The Program shown while the text is broken at the top level (a resumed plain parse):
        the diagnostics before the boundary are the state's, the rest the run's."""
        assert self.levels is not None
        cfg = self.config
        # the diagnostics: the state's before the boundary, then the plain parse's
        if chunks.reused and chunks.last is not None and chunks.last.raw is not None:
            old_ids = old_ids | {id(x) for x in _nodes_of(chunks.last.raw)}  # (positions fixed)
        chunks.last = None  # (not a chain of every plain parse since the text broke)
        if bodies.jumped:  # (their positions are moved by marks, their lists are the last run's)
            old_ids = old_ids | {id(x) for x in bodies.jumped}
        cut = self._cut
        run_diags = list(b.diagnostics)
        if cut is not None:  # (Puppet never reads a token of the lexing unit that failed)
            run_diags = [d for d in run_diags if d.code != "SYNTAX_ERROR" or d.offset < cut[1]]
        diags = self._plain_diags(self.lex_diags if cut is None else cut[2], lim, chain, run_diags, b)
        deep = P.fix_positions(prog, old_ids)  # (the statements from before the boundary are done)
        if deep is not None:
            diags.append(
                Diagnostic.make(
                    "PARSE_TOO_DEEP", deep.offset, deep.length, {"limit": P.MAX_DEPTH}, file=cfg.file
                )
            )
            prog = None
        units = {id(x) for out in b.lists for x in out} | bodies.units
        if chunks.reused and self._last_plain is not None:
            units |= self._last_plain.units
        if prog is not None:
            body = prog.body
            if type(body) is BlockExpression:
                units.update(id(x) for x in body.statements)
            else:
                units.add(id(body))
        if self._plain_units is None:
            self._pcache = {}
        self._show_resumed(prog, units, b.had_errors, diags)
        self.stats["tokens_parsed"] = parsed
        if chunks.reused:
            self.stats["reused"] = True
        if prog is not None and cut is None:
            order = {id(d): b.order[id(d)] for d in b.diagnostics if id(d) in b.order}
            self._plain_run = _PlainRun(resumes, list(b.diagnostics), order, prog, units, b.had_errors)
            self._plain_run.chunks = chunks
            self._plain_run.bodies = bodies
            self.stats["bodies_taken"] = len(bodies.jumped)
        return True

    def _reuse_plain(  # type: ignore[misc]
        self: IncrementalParser, watch: _Sync, b: Builder, lim: int, chain: list[_Level]
    ) -> bool:
        """The run met a configuration of the last plain parse's (_PlainRun): that parse's Program and
        diagnostics from there on, moved by the edit, complete this one's."""
        last = watch.last
        assert last is not None and self._edit is not None and self.levels is not None
        j = watch.reused
        assert j is not None
        ds, de, delta = self._edit
        de_old = de - delta
        mine = list(b.diagnostics)
        k = last.resumes[j][4]
        after = last.diags[k:]
        order = b.order
        for d in after:
            key = last.order.get(id(d))
            if delta:
                if d.offset is not None and d.offset >= de_old:
                    d.offset += delta
                if key is not None and key[0] >= de_old:
                    key = (key[0] + delta, key[1])
                    last.order[id(d)] = key
            if key is not None:
                order[id(d)] = key
        prog = last.prog
        self.pos.move(prog.body, ds, de_old, delta)
        for y in self.pos.touched:  # (the nodes around the edit grew: validated again)
            self._pcache.pop(id(y), None)
        self.pos.touched = []
        run_diags = mine + after
        diags = self._plain_diags(self.lex_diags, lim, chain, run_diags, b)
        resumes = watch.resumes + [(*r[:4], r[4] - k + len(mine)) for r in last.resumes[j:]]
        self._plain_run = _PlainRun(resumes, run_diags, order, prog, last.units, last.recovered)
        self._plain_run.chunks = last.chunks
        self._plain_run.far = last.far
        self._show_resumed(prog, last.units, last.recovered, diags)
        self.stats["reused"] = True
        return True

    def _plain_diags(  # type: ignore[misc]
        self: IncrementalParser, lex: list[Any], lim: int, chain: list[_Level], run: list[Any], b: Builder
    ) -> list[Any]:
        """A resumed plain parse's diagnostics: the lexer's, the state's before the boundary (lim),
        the call transforms' of the lists closed before it, then the run's, in Puppet's order."""
        assert self.levels is not None
        diags = list(lex)
        diags.extend(d for d in self.base_diags if d.offset is not None and d.offset < lim)
        for v in self.levels.values():
            if v.closer is not None and v.closer.start_pos < lim and v not in chain:
                diags.extend(v.xdiags)
        diags.extend(run)
        diags.sort(key=b.diagnostic_order)
        return diags

    def _show_resumed(  # type: ignore[misc]
        self: IncrementalParser, prog: Any, units: set[int], recovered: bool, diags: list[Any]
    ) -> None:
        """Show a resumed plain parse's Program (its positions and definitions brought up to date on
        first use, its lists the units of its validation)."""
        self._plain_units = units
        self._plain_lazy = True
        self._program = prog
        self.block_recovery = recovered
        self.full_diags = diags
        self.stats["mode"] = "plain"
        self.stats["resumed"] = True

    def _show_lex_broken(self: IncrementalParser, e: _LexBroken, pending: tuple[int, int, int]) -> None:  # type: ignore[misc]
        """grammar.parser on the tokens of a text with a hard lexer error (the tokens before the edit
        window are the state's); the state and the edits since it stay pending."""
        self._pending = pending  # (later edits merge into it: see edit)
        self._relocate = True  # (the line index is the current text's already)
        self._kept_tokens = self.tokens
        self.tokens = e.tokens
        self._rdiv_clean = 0
        if self.levels is not None and self._resume_cut(e, pending):
            return
        res = P.parse_lexed(self.locator, e.tokens, e.diags, e.error)
        self._program = res.program
        self._plain_units = None
        self.block_recovery = res.block_recovery
        self.full_diags = list(res.diagnostics)
        self.stats = {"mode": "lexbroken", "tokens_parsed": len(e.tokens)}

    def _resume_cut(self: IncrementalParser, e: _LexBroken, pending: tuple[int, int, int]) -> bool:  # type: ignore[misc]
        """A hard lexer error after the edit (a quote left open to the end of the text): the plain
        parse of the tokens up to it is resumed at the last boundary before the change of the
        innermost list around it (the tokens before the lexing window are the state's), as
        _resume_plain / _resume_top do, instead of parsing all of them again."""
        assert self.levels is not None
        toks = self.tokens
        limit = min(e.error.offset, P._failed_unit_start(toks))  # (as grammar.parser.parse_lexed)
        n_parsed = bisect.bisect_left(toks, limit, key=_start)
        ds = pending[0] if self._broken is None else min(pending[0], self._broken_ds)
        c = bisect.bisect_left(toks, ds, key=_start)
        if c >= n_parsed:
            return False  # (nothing after the change is parsed: the full path decides)
        best: _Level | None = None
        best_pos = -1
        for lvl in self.levels.values():
            op = lvl.opener
            if op is None or op.start_pos <= best_pos or lvl.closer is None or lvl.closer.start_pos < ds:
                continue
            oi = self._index(op)
            if 0 <= oi < c and toks[oi].end_pos <= ds:
                best, best_pos = lvl, op.start_pos
        self._cut = (n_parsed, limit, e.diags)
        self.stats = {}  # (_relex stopped before making this update's)
        try:
            if best is not None:
                ok = self._resume_plain(best, c, len(toks), ds)
            else:
                ok = self._resume_top(c, ds)
        finally:
            self._cut = None
        if ok:
            self.stats["mode"] = "lexbroken"
        return ok

    def _show_plain(self: IncrementalParser) -> None:  # type: ignore[misc]
        """grammar.parser on the current tokens (the text has a syntax error at the top level)."""
        res = P.parse_lexed(self.locator, self.tokens, self.lex_diags)
        self._program = res.program
        self._plain_units = None
        self.block_recovery = res.block_recovery
        self.full_diags = list(res.diagnostics)
        self.stats["mode"] = "plain"
        self.stats["tokens_parsed"] = len(self.tokens)
