"""Broken text for the incremental parser (grammar.incremental): while a syntax error at the top
level or a hard lexer error keeps the incremental state, a plain parse resumed at the last boundary
before the change is shown (BrokenText, held by the IncrementalParser), and the tokens and work that
an open quote would make it redo are taken back (grammar.incremental.plain's records).  Separate
from the path that reparses statement lists, which only calls into it.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any

from puppet_xpp.grammar import parser
from puppet_xpp.grammar.build import Builder
from puppet_xpp.grammar.incremental.bodies import Bodies
from puppet_xpp.grammar.incremental.plain import (
    Chunks,
    KeptChunks,
    ListBuilder,
    PlainRun,
    Shadow,
    Sync,
    copy_list,
)
from puppet_xpp.grammar.incremental.state import (
    FAR,
    BlockExpression,
    Level,
    LexBroken,
    Node,
    bound_pos,
    nodes_of,
    roots,
    token_start,
)
from puppet_xpp.grammar.incremental.tail import Lent, Tail
from puppet_xpp.grammar.issues import Diagnostic
from puppet_xpp.grammar.recovery import OPENERS

if TYPE_CHECKING:
    from puppet_xpp.grammar.incremental.reparser import IncrementalParser

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


class BrokenText:
    """The IncrementalParser's broken-text paths, with the state they keep while the text is broken
    (``parser``: the incremental state they resume from and the results they show).

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
    strings were).  The tokens that records still refer to (the state's while broken, a Ghost's) are kept in
    a Shadow, moved with later edits, and equal tokens lexed again at the same place take the old objects
    back; while broken, a window may end at the first line after the edits where the state's lexing is in its
    initial state (_state_tail), and the state's tokens from there on are taken back without lexing them; the
    next keystroke's plain parse takes the last one's Program and diagnostics from the first configuration
    (after an error inside a body) that both runs reach (PlainRun).  So only the keystrokes that open or
    close the quote's string over the rest of the file cost a pass over it.
    """

    def __init__(self, parser: IncrementalParser) -> None:
        self.parser = parser  # (its tokens, records, positions and results)
        # (first changed token, first unchanged token, bytes added) since the incremental state, while
        # the text has a syntax error at the top level: the state stays as it was, a plain parse of
        # the current tokens is shown, and the next edit reparses from the state over both edits
        self.broken: tuple[int, int, int] | None = None
        self.broken_ds = 0  # while broken: the first byte changed since the incremental state
        self.broken_de = 0  # ... and the end of the last (current coordinates)
        self.broken_top = False  # ... and the last update found it broken at the top level, far on
        self.top_err = 0  # (the token index of resume_top's first error)
        # while broken: the state's token list (the tokens its records refer to), and those of its
        # tokens that the current list lost, kept at current positions (Shadow)
        self.state_toks: list[Any] | None = None
        self.state_inside: list[bool] | None = None  # Relexer.inside of state_toks
        self.state_nesting: list[int] = []  # ... and the string nesting after each
        self.state_lexw = False  # the state had lexer warnings after the first change
        self.shadow: Shadow | None = None
        # the last update's resumed plain parse (PlainRun) and this update's
        self.last_plain: PlainRun | None = None
        self.plain_run: PlainRun | None = None
        # the runs after top-level errors of the last plain parse that made any, kept across the
        # updates since (the text repaired and broken again: plain.KeptChunks)
        self.kept: KeptChunks | None = None
        # while _resume_cut runs: (tokens parsed, where the failed lexing unit begins, lexer diagnostics)
        self._cut: tuple[int, int, list[Any]] | None = None
        # while broken, after resume_plain: the units (statements of its lists) of the Program shown,
        # their validation cache, and whether its positions and definitions are still to be brought
        # up to date (on first use of the parser's `program`)
        self.plain_units: set[int] | None = None
        self.pcache: dict[int, tuple[Any, ...]] = {}
        self.plain_lazy = False
        # while an update runs: (the first token unchanged since the state, bytes added before it),
        # for the top-level runs seeded with the state's statements (grammar.incremental.tail); and
        # those statements while the Program shown holds them
        self.since: tuple[int, int] | None = None
        self.lent: Lent | None = None
        # after a hard lexer error (show_lex_broken): the state's tokens while the plain parse's are
        # shown, and whether the line index must be made anew at the next update
        self.kept_tokens: list[Any] | None = None
        self.relocate = False

    def set_broken(self, c: int, ce: int, total: int, ds: int, de: int) -> None:
        """The text is broken at the top level; the state stays (see the class docstring).  When it
        was not broken before, the state's token list is what this update's splice replaced."""
        p = self.parser
        if self.broken is None:
            m0, mlen, removed, eds, ede_old, edelta, inside, nesting = p.relexer.last_splice
            toks = p.tokens
            self.state_toks = toks[:m0] + removed + toks[m0 + mlen :]
            self.state_inside = inside
            self.state_nesting = nesting
            self.state_lexw = any(d.offset is None or d.offset >= eds for d in p.lex_diags)
            if self.shadow is None:  # (else Relexer.relex added them already)
                self.shadow = Shadow()
                self.shadow.add(removed, eds, ede_old, edelta)
        self.broken = (c, ce, total)
        self.broken_ds = ds
        self.broken_de = de

    def end_broken(self) -> None:
        p = self.parser
        self.lent = None  # (taken back when the update began, or the positions are made anew)
        self.broken = None
        self.broken_top = False
        self.state_toks = None
        if p.ghost is None:
            self.shadow = None

    def state_suffix(self, c: int, ce: int, de: int) -> int:
        """While broken: the changed tokens [c, ce) since the state end earlier when the last of them
        are the state's own again (a quote closed again: the tokens after it were lexed anew and took
        back the state's objects, see Shadow) and no edit since the state reaches them (de: the end
        of the last edit, current coordinates).  The state's records then sync on them."""
        p = self.parser
        st = self.state_toks
        if st is None:
            return ce
        toks = p.tokens
        off = len(st) - len(toks)
        while ce > c and ce - 1 + off >= 0:
            t = toks[ce - 1]
            if t.start_pos < de or st[ce - 1 + off] is not t:
                break
            ce -= 1
        return ce

    def resume_plain(self, lvl: Level, c: int, ce: int, ds: int) -> bool:
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
        p = self.parser
        assert p.levels is not None and p.base is not None
        toks = p.tokens
        n = len(toks)
        data = p.data
        t = p.tables
        oi = p.index(lvl.opener)
        if lvl.stale or oi < 0 or oi >= c:
            return False
        s, start_i = p.boundary(lvl, c, oi + 1)
        bpos = toks[start_i].start_pos if start_i < n else len(data)
        # what lies before lim is the same text in the state's coordinates and in the current ones
        lim = min(bpos, toks[c].start_pos if c < n else len(data), ds)
        op_pos = lvl.opener.start_pos
        around = [
            a
            for a in p.levels.values()
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
        for d in p.base_diags:
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
            m = bisect.bisect_right(a.bounds, op_pos, key=bound_pos)
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
        values[:] = [copy_list(v) for v in values]
        depth = sum(1 for v in values if getattr(v, "type", None) in OPENERS)
        watch = Sync(toks, n, ce, {len(a.states) + 1: a for a in chain})
        g = p.ghost
        if g is not None and g.level in chain:
            watch.ghost = (len(g.level.states) + 1, {id(bt) for bt in g.bounds[:-1]} | {id(g.start)})
        cfg = p.config
        old_ids = roots(values)
        b = ListBuilder(p.locator, cfg.file)
        b.namestack[:] = parser.open_class_names(t, stack, values)
        watch.builder = b
        watch.scan = (start_i, depth)
        cut = self._cut
        if self.last_plain is not None and p.last_edit is not None and cut is None:
            watch.last = self.last_plain
            watch.unchanged = p.edit_ce
            watch.lim = p.last_edit[0]
        chunks = self._chunks(b)
        drv = parser.Driver(b, cut=cut is not None, memo=p.scan_memo)
        run_toks = toks if cut is None else toks[: cut[0]]
        bodies = watch.bodies = self._bodies(b, len(run_toks))
        tail = chunks.tail = self._tail(drv, bodies, len(run_toks))
        try:
            if tail is not None:  # (the run may leave the list for the top level, and be seeded there)
                value, err = tail.run_seeded(drv, start_i, len(run_toks), stack, values, watch)
            else:
                value, err = drv.run(run_toks, start_i, len(run_toks), len(data), stack, values, watch)
            if watch.reused is not None:
                bodies.undo()
                return self._reuse_plain(watch, b, lim, chain)
            if value is parser.STOPPED or err is None:
                bodies.undo()
                return False
            far = err - c > FAR
            prog = parser.recover_top(
                drv, run_toks, b, len(data), data, value, err, False, (start_i, depth), False, chunks, bodies
            )
            chunks.finish()
        except Exception:
            bodies.undo()
            if chunks.taken is not None:
                self.kept = None
            self._untail(tail)
            return False
        try:
            done = self._plain_finish(
                b, prog, lim, chain, old_ids, watch.resumes, chunks, n - start_i, bodies
            )
        except BaseException:
            self._untail(tail)
            raise
        if self.plain_run is not None:
            self.plain_run.far = far
        return done

    def _place_before(self, bpos: int, lists: list[tuple[Level, int]], values: list[Any]) -> None:
        """A plain run resumed at byte bpos: the builder reads the start and end of the values it
        combines, so the nodes before the boundary (the statements the lists hold, the values of the
        LR stack) get their pending position marks applied."""
        p = self.parser
        pos = p.pos
        if not pos.pending:
            return
        pos.push_around(p.base.body, bpos)
        pending = pos.pending
        for a, m in lists:
            for x in a.out or ():
                if id(x) in pending and pos.start_of(x) < bpos:
                    pos.push(x)
            for x in nodes_of(a.raw[:m]):
                if id(x) in pending:
                    pos.push(x)
        for v in values:
            for x in nodes_of([v]) if isinstance(v, list) else ([v] if isinstance(v, Node) else []):
                if id(x) in pending:
                    pos.push(x)

    def _bodies(self, b: Builder, n: int) -> Bodies:
        """The Bodies watch of a plain run: the last keystroke's run's bodies may be taken whole."""
        p = self.parser
        last = self.last_plain
        prev = None
        if last is not None and p.last_edit is not None and self._cut is None:
            prev = last.bodies
        delta = p.last_edit[2] if p.last_edit is not None else 0
        return Bodies(p, b, prev, p.edit_ce, delta, n)

    def _tail(self, drv: Any, bodies: Bodies, n: int) -> Tail | None:
        """The seeding of this run's top-level runs with the state's statements (grammar.incremental.tail),
        when the tokens unchanged since the state are known and the run is not cut short."""
        since = self.since
        if since is None or self._cut is not None or self.lent is not None:
            return None
        return Tail(self.parser, drv, bodies, since, n)

    def _untail(self, tail: Tail | None) -> None:
        """A run that seeded, or ran for recovery (grammar.incremental.tail), failed: the statements go
        back at once (and the failure is told to tests: the plain parse that follows hides it)."""
        if tail is not None and (tail.lent is not None or tail.ran):
            self.parser.stats["seed_error"] = True
            tail.give_back()

    def take_back(self) -> None:
        """An update begins: the state's statements lent to the last Program shown go back to the
        state's coordinates, and that Program's runs are not taken by this update's (they hold them)."""
        lent = self.lent
        if lent is None:
            return
        self.lent = None
        lent.take_back(self.parser)
        self.plain_run = None
        self.kept = None

    def _chunks(self, b: Builder) -> Chunks:
        p = self.parser
        last = self.last_plain
        prev = last.chunks if last is not None and p.last_edit is not None and self._cut is None else None
        return Chunks(p, b, prev, p.edit_ce, self.kept if self._cut is None else None)

    def validated(self) -> None:
        """The Program shown was validated (its cache is ``pcache``): a kept run that is that Program's
        keeps that cache, for the statements a later run takes from it."""
        kept = self.kept
        if kept is not None and kept.run is self.plain_run:
            kept.pcache = self.pcache

    def carry_kept(self, pending: tuple[int, int, int] | None) -> None:
        """An update begins, with these edits since the last (before any token moved): the kept runs
        stay only if they ended before their first run's line (plain.KeptChunks.carry)."""
        kept = self.kept
        if kept is not None and (pending is None or not kept.carry(self.parser, *pending)):
            self.kept = None

    def resume_top(self, c: int, ds: int) -> bool:
        """The text is broken at the top level: grammar.parser's plain parse, run from the last
        boundary of the program's statements before the change (with the LR stack the state recorded
        there; the tokens before it did not change) instead of from the first token, its runs after
        top-level errors taken from the last plain parse where they begin at the same unchanged
        token (Chunks).  Returns False when the state cannot vouch for that configuration."""
        p = self.parser
        assert p.levels is not None and p.base is not None
        lvl = p.levels.get(0)
        if lvl is None or lvl.stale:
            return False
        toks = p.tokens
        n = len(toks)
        data = p.data
        t = p.tables
        s, start_i = p.boundary(lvl, c, 0)
        bpos = toks[start_i].start_pos if start_i < n else len(data)
        lim = min(bpos, toks[c].start_pos if c < n else len(data), ds)
        for d in p.base_diags:
            if d.offset is not None and d.offset < lim and d.code in _AROUND:
                return False
        stack = list(lvl.states)
        values = list(lvl.values)
        if s:
            stack.append(t.gotos[stack[-1]]["stmts"])
            values.append(lvl.raw[:s])
        self._place_before(bpos, [(lvl, s)], values)
        old_ids = roots(values)
        b = ListBuilder(p.locator, p.config.file)
        chunks = self._chunks(b)
        cut = self._cut
        drv = parser.Driver(b, cut=cut is not None, memo=p.scan_memo)
        run_toks = toks if cut is None else toks[: cut[0]]
        bodies = self._bodies(b, len(run_toks))
        tail = chunks.tail = self._tail(drv, bodies, len(run_toks))
        try:
            if tail is not None:
                value, err = tail.run_seeded(drv, start_i, len(run_toks), stack, values, bodies)
            else:
                value, err = drv.run(run_toks, start_i, len(run_toks), len(data), stack, values, bodies)
            if err is None:
                bodies.undo()
                return False
            self.top_err = err
            prog = parser.recover_top(
                drv, run_toks, b, len(data), data, value, err, False, (start_i, 0), False, chunks, bodies
            )
            chunks.finish()
        except Exception:
            bodies.undo()
            if chunks.taken is not None:
                self.kept = None
            self._untail(tail)
            return False
        try:
            return self._plain_finish(b, prog, lim, [lvl], old_ids, [], chunks, n - start_i, bodies)
        except BaseException:
            self._untail(tail)
            raise

    def _plain_finish(
        self,
        b: Any,
        prog: Any,
        lim: int,
        chain: list[Level],
        old_ids: set[int],
        resumes: list[tuple[Any, ...]],
        chunks: Chunks,
        parsed: int,
        bodies: Bodies,
    ) -> bool:
        """The Program shown while the text is broken at the top level (a resumed plain parse):
        the diagnostics before the boundary are the state's, the rest the run's."""
        p = self.parser
        assert p.levels is not None
        cfg = p.config
        # the diagnostics: the state's before the boundary, then the plain parse's
        source = chunks.taken.chunks if chunks.taken is not None else chunks.last
        if chunks.reused and source is not None and source.raw is not None:
            old_ids = old_ids | {id(x) for x in nodes_of(source.raw)}  # (positions fixed)
        chunks.last = None  # (not a chain of every plain parse since the text broke)
        chunks.kept = None
        if bodies.jumped:  # (their positions are moved by marks, their lists are the last run's)
            old_ids = old_ids | {id(x) for x in bodies.jumped}
        tail = chunks.tail
        lent = tail.lent if tail is not None else None
        if lent is not None:  # (the state's statements, positioned)
            old_ids = old_ids | {id(x) for x in lent.roots}
        cut = self._cut
        run_diags = list(b.diagnostics)
        if cut is not None:  # (Puppet never reads a token of the lexing unit that failed)
            run_diags = [d for d in run_diags if d.code != "SYNTAX_ERROR" or d.offset < cut[1]]
        diags = self._plain_diags(p.lex_diags if cut is None else cut[2], lim, chain, run_diags, b)
        # (the statements from before the boundary and what the run took are done: not entered, by the
        # C accelerator's walk too, which takes a skip set since d3506c4: on the 292 KB class an open
        # quote that takes the kept top-level runs walks 0.2-0.4 ms instead of 3 ms for the whole tree)
        if chunks.reused:
            parsed -= len(p.tokens) - chunks.reused_at  # (the tokens of the runs taken)
        if tail is not None:
            parsed -= tail.tokens
        deep = parser.fix_positions(prog, old_ids)
        if deep is not None:
            diags.append(
                Diagnostic.make(
                    "PARSE_TOO_DEEP", deep.offset, deep.length, {"limit": parser.MAX_DEPTH}, file=cfg.file
                )
            )
            prog = None
        units = {id(x) for out in b.lists for x in out} | bodies.units
        if chunks.taken is not None:
            units |= chunks.taken.units
        elif chunks.reused and self.last_plain is not None:
            units |= self.last_plain.units
        if prog is not None:
            body = prog.body
            if type(body) is BlockExpression:
                units.update(id(x) for x in body.statements)
            else:
                units.add(id(body))
        if self.plain_units is None:
            self.pcache = {}
        if chunks.taken is not None:  # (their validation, moved when it is read: UnitValidation)
            self.pcache.update(chunks.taken.pcache)
            p.stats["kept_taken"] = True
        self._show_resumed(prog, units, b.had_errors, diags)
        p.stats["tokens_parsed"] = parsed  # (not those of the runs taken)
        if chunks.reused:
            p.stats["reused"] = True
        if lent is not None:
            assert tail is not None
            p.stats["tail_seeded"] = tail.statements
            self.lent = lent
        if prog is not None and cut is None:
            order = {id(d): b.order[id(d)] for d in b.diagnostics if id(d) in b.order}
            self.plain_run = PlainRun(resumes, list(b.diagnostics), order, prog, units, b.had_errors)
            self.plain_run.chunks = chunks
            self.plain_run.bodies = bodies
            p.stats["bodies_taken"] = len(bodies.jumped)
            if lent is not None:
                self.kept = None  # (its statements are lent: taken back at the next update)
            elif chunks.records:
                self.kept = KeptChunks(chunks, self.plain_run)
            elif bodies.jumped:
                self.kept = None  # (the bodies it took may be the kept run's, moved: taken from run to run)
        elif chunks.reused or bodies.jumped or lent is not None:
            self.kept = None  # (what it took was moved, and no run holds it now)
        return True

    def _reuse_plain(self, watch: Sync, b: Builder, lim: int, chain: list[Level]) -> bool:
        """The run met a configuration of the last plain parse's (PlainRun): that parse's Program and
        diagnostics from there on, moved by the edit, complete this one's."""
        p = self.parser
        last = watch.last
        assert last is not None and p.last_edit is not None and p.levels is not None
        j = watch.reused
        assert j is not None
        ds, de, delta = p.last_edit
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
        p.pos.move(prog.body, ds, de_old, delta)
        for y in p.pos.touched:  # (the nodes around the edit grew: validated again)
            self.pcache.pop(id(y), None)
        p.pos.touched = []
        run_diags = mine + after
        diags = self._plain_diags(p.lex_diags, lim, chain, run_diags, b)
        resumes = watch.resumes + [(*r[:4], r[4] - k + len(mine)) for r in last.resumes[j:]]
        self.plain_run = PlainRun(resumes, run_diags, order, prog, last.units, last.recovered)
        self.plain_run.chunks = last.chunks
        self.plain_run.far = last.far
        # (its statements and diagnostics are moved to the current text: kept from here, if at all)
        chunks = last.chunks
        self.kept = KeptChunks(chunks, self.plain_run) if chunks is not None and chunks.records else None
        self._show_resumed(prog, last.units, last.recovered, diags)
        p.stats["reused"] = True
        return True

    def _plain_diags(
        self, lex: list[Any], lim: int, chain: list[Level], run: list[Any], b: Builder
    ) -> list[Any]:
        """A resumed plain parse's diagnostics: the lexer's, the state's before the boundary (lim),
        the call transforms' of the lists closed before it, then the run's, in Puppet's order."""
        p = self.parser
        assert p.levels is not None
        diags = list(lex)
        diags.extend(d for d in p.base_diags if d.offset is not None and d.offset < lim)
        for v in p.levels.values():
            if v.closer is not None and v.closer.start_pos < lim and v not in chain:
                diags.extend(v.xdiags)
        diags.extend(run)
        diags.sort(key=b.diagnostic_order)
        return diags

    def _show_resumed(self, prog: Any, units: set[int], recovered: bool, diags: list[Any]) -> None:
        """Show a resumed plain parse's Program (its positions and definitions brought up to date on
        first use, its lists the units of its validation)."""
        p = self.parser
        self.plain_units = units
        self.plain_lazy = True
        p.program_shown = prog
        p.block_recovery = recovered
        p.full_diags = diags
        p.stats["mode"] = "plain"
        p.stats["resumed"] = True

    def show_lex_broken(self, e: LexBroken, pending: tuple[int, int, int]) -> None:
        """grammar.parser on the tokens of a text with a hard lexer error (the tokens before the edit
        window are the state's); the state and the edits since it stay pending."""
        p = self.parser
        p.pending = pending  # (later edits merge into it: see edit)
        self.kept = None  # (its delta counted these edits, which the next update counts again)
        self.relocate = True  # (the line index is the current text's already)
        self.kept_tokens = p.tokens
        p.tokens = e.tokens
        p.relexer.rdiv_clean = 0
        if p.levels is not None and self._resume_cut(e, pending):
            return
        res = parser.parse_lexed(p.locator, e.tokens, e.diags, e.error)
        p.program_shown = res.program
        self.plain_units = None
        p.block_recovery = res.block_recovery
        p.full_diags = list(res.diagnostics)
        p.stats = {"mode": "lexbroken", "tokens_parsed": len(e.tokens)}

    def _resume_cut(self, e: LexBroken, pending: tuple[int, int, int]) -> bool:
        """A hard lexer error after the edit (a quote left open to the end of the text): the plain
        parse of the tokens up to it is resumed at the last boundary before the change of the
        innermost list around it (the tokens before the lexing window are the state's), as
        resume_plain / resume_top do, instead of parsing all of them again."""
        p = self.parser
        assert p.levels is not None
        toks = p.tokens
        limit = min(e.error.offset, parser.failed_unit_start(toks))  # (as grammar.parser.parse_lexed)
        n_parsed = bisect.bisect_left(toks, limit, key=token_start)
        ds = pending[0] if self.broken is None else min(pending[0], self.broken_ds)
        c = bisect.bisect_left(toks, ds, key=token_start)
        if c >= n_parsed:
            return False  # (nothing after the change is parsed: the full path decides)
        best: Level | None = None
        best_pos = -1
        for lvl in p.levels.values():
            op = lvl.opener
            if op is None or op.start_pos <= best_pos or lvl.closer is None or lvl.closer.start_pos < ds:
                continue
            oi = p.index(op)
            if 0 <= oi < c and toks[oi].end_pos <= ds:
                best, best_pos = lvl, op.start_pos
        self._cut = (n_parsed, limit, e.diags)
        p.stats = {}  # (Relexer.relex stopped before making this update's)
        try:
            if best is not None:
                ok = self.resume_plain(best, c, len(toks), ds)
            else:
                ok = self.resume_top(c, ds)
        finally:
            self._cut = None
        if ok:
            p.stats["mode"] = "lexbroken"
        return ok

    def show_plain(self) -> None:
        """grammar.parser on the current tokens (the text has a syntax error at the top level)."""
        p = self.parser
        res = parser.parse_lexed(p.locator, p.tokens, p.lex_diags)
        p.program_shown = res.program
        self.plain_units = None
        p.block_recovery = res.block_recovery
        p.full_diags = list(res.diagnostics)
        p.stats["mode"] = "plain"
        p.stats["tokens_parsed"] = len(p.tokens)
