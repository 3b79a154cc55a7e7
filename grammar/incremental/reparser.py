"""IncrementalParser: the incremental parser's public API, its full parse, the reparse of the
statement lists an edit touches and the results (see the package docstring, grammar.incremental).

The parser holds its parts as objects, each with its own state: the lexing window (Relexer,
grammar.incremental.lex) and the broken-text paths (BrokenText, grammar.incremental.broken); the
records and helpers they share are in grammar.incremental.state.  What they read of the parser is
its public attributes (tokens, text, configuration, the incremental state's records and results).
"""

from __future__ import annotations

import bisect
import copy
from typing import TYPE_CHECKING, Any, cast

from puppet_xpp.grammar import ast, check, parser
from puppet_xpp.grammar.ast_base import line_starts
from puppet_xpp.grammar.build import Builder
from puppet_xpp.grammar.incremental.broken import BrokenText
from puppet_xpp.grammar.incremental.compact import HUGE_BYTES, CompactTokens
from puppet_xpp.grammar.incremental.lex import Relexer
from puppet_xpp.grammar.incremental.state import (
    FAR,
    BlockExpression,
    Escalate,
    Fallback,
    Ghost,
    Level,
    LexBroken,
    Node,
    Nop,
    Positions,
    Program,
    Recorder,
    bound_pos,
    def_order,
    definitions_in,
    held_lists,
    nodes_of,
    out_len,
    overlapping,
    patch_definitions,
    remove_values,
    reuse_calls,
    token_start,
    transform,
)
from puppet_xpp.grammar.incremental.validate import UnitValidation
from puppet_xpp.grammar.issues import Diagnostic
from puppet_xpp.grammar.lexer import Lexer, MappedToken
from puppet_xpp.grammar.recovery import ScanMemo

if TYPE_CHECKING:
    from puppet_xpp.grammar.validator import Checker


class IncrementalParser:
    """Parse state of one document, kept up to date edit by edit."""

    COMPACT_AT = 20_000  # position marks pending beyond which they are compacted (_compact_positions)

    def __init__(self, text: str, config: check.CheckConfig):
        self.config = config
        self.text: str | None = text
        self.data = text.encode("utf-8", "surrogateescape")
        self.locator = ast.make_locator(text, config.file)
        self.tokens: list[Any] = []
        self.levels: dict[int, Level] | None = None  # None: no incremental state
        self.lex_diags: list[Diagnostic] = []
        self.base_diags: list[Any] = []  # parse diagnostics other than the call transforms'
        self.full_diags: list[Diagnostic] = []  # all parse diagnostics
        self.program_shown: Any = None  # the Program shown (a plain parse's while the text is broken)
        self.base: Any = None  # the Program of the incremental state
        # this update's edit: (first byte, end byte, bytes added) and the first token after the ones
        # it changed
        self.last_edit: tuple[int, int, int] | None = None
        self.edit_ce = 0
        self._span = (0, 0)  # the bytes changed since the state (current coordinates)
        self.ghost: Ghost | None = None
        self.block_recovery = False
        self.pending: tuple[int, int, int] | None = None  # damaged range (new coordinates) and delta
        self._dirty = True
        self._vcache: dict[int, tuple[Any, ...]] = {}
        self._checker_for: tuple[check.CheckConfig, Checker] | None = None
        self.pos = Positions()
        self._defs_stale = False
        # the definitions of the state's Program (kept up to date edit by edit; in source order by end
        # once the Program is handed out)
        self.defs_now: list[Any] = []
        self._vdiags: list[Diagnostic] | None = None
        self.stats: dict[str, Any] = {}
        self.tables = parser.tables()
        self.scan_memo = ScanMemo()  # recovery scans of earlier updates (grammar.recovery)
        self.relexer = Relexer(self)  # the lexing window and what it keeps about the tokens
        self.broken_text = BrokenText(self)  # the state kept, and what is shown, while the text is broken

    @property
    def program(self) -> Any:
        """The current Program (positions and definitions brought up to date on first use)."""
        prog = self.program_shown
        bt = self.broken_text
        if bt.broken is not None or bt.kept_tokens is not None:
            if prog is not None and bt.plain_units is not None and bt.plain_lazy:
                self.pos.flush(prog.body)  # (statements from before the boundary may carry marks)
                prog.definitions = sorted(definitions_in([prog.body]), key=def_order)
                bt.plain_lazy = False
            return prog
        if prog is not None and (self.pos.pending or self._defs_stale):
            # (the marked subtrees only, and the definitions as the edits left them: not a walk of the
            # whole tree at every keystroke that asks for the Program)
            self.pos.flush_marked()
            if self._defs_stale:
                prog.definitions = sorted(self.defs_now, key=def_order)
                self._defs_stale = False
        return prog

    # ------------------------------------------------------------------------------------------ edits

    def line_starts(self) -> list[int]:
        if not self._dirty:
            return list(self.locator.line_index or ())
        return line_starts(self.data)

    def set_config(self, config: check.CheckConfig) -> None:
        self.config = config
        self._dirty = True
        self.levels = None  # file name / modes may change the parse: full
        self._vcache = {}
        self._vdiags = None

    def replace_all(self, text: str) -> None:
        self.text = text
        self.data = text.encode("utf-8", "surrogateescape")
        self.pending = None
        self.levels = None
        self._dirty = True

    def edit(self, a: int, b: int, new_text: str) -> None:
        """Replace bytes [a, b) of the current text by new_text."""
        data = self.data
        a = max(0, min(a, len(data)))
        b = max(a, min(b, len(data)))
        nb = new_text.encode("utf-8", "surrogateescape")
        self.data = data[:a] + nb + data[b:]
        self.text = None
        n = len(nb)
        d = n - (b - a)
        if self.pending is None:
            self.pending = (a, a + n, d)
        else:
            ds, de, delta = self.pending

            def fwd(x: int) -> int:
                if x <= a:
                    return x
                if x <= b:
                    return a + n
                return x + d

            self.pending = (min(ds, a), max(fwd(de), a + n), delta + d)
        self._dirty = True

    # ------------------------------------------------------------------------------------------ update

    def update(self) -> None:
        if not self._dirty:
            return
        if self.text is None:
            self.text = self.data.decode("utf-8", "surrogateescape")
        pending, self.pending = self.pending, None
        self._dirty = False
        bt = self.broken_text
        bt.take_back()  # (the state's statements lent to the last Program shown: grammar.incremental.tail)
        bt.since = None
        bt.last_plain, bt.plain_run = bt.plain_run, None
        self.last_edit = pending
        self._vdiags = None
        if bt.kept_tokens is not None:  # (after a hard lexer error: the state's tokens again)
            self.tokens, bt.kept_tokens = bt.kept_tokens, None
            self.relexer.rdiv_clean = 0
        self._set_locator(pending if self.levels is not None and not bt.relocate else None)
        bt.relocate = False
        bt.carry_kept(pending if self.levels is not None else None)
        try:
            if self.levels is None or pending is None or self.config.epp or len(self.data) >= HUGE_BYTES:
                self._full()  # (a huge text: always, with no incremental state; grammar.incremental.compact)
                return
            try:
                self._incremental(*pending)
            except LexBroken as e:
                bt.show_lex_broken(e, pending)
            except Fallback:
                self._full()
        except Exception as e:  # a parser bug must not take the server down
            self._crashed(e)
        if bt.broken is None and self.ghost is None:
            bt.shadow = None  # (no record refers to lost tokens any more)
        bt.since = None
        if len(self.pos.pending) > self.COMPACT_AT and bt.lent is None:  # (not while lent: next time)
            self._compact_positions()

    def _compact_positions(self) -> None:
        """Position marks outlive the nodes' use: those of a plain parse's Program stay when the next
        keystroke's replaces it (by 25,000 over 1,160 keystrokes of the 300 KB manifest), and every
        flush walks on while any is left.  Every node still held (the state's Program, the one shown,
        the statements set aside) gets its marks applied, the rest are dropped, and so are the bodies
        recorded for the next keystroke (grammar.incremental.bodies: their marks were among them)."""
        pos = self.pos
        for prog in {id(p): p for p in (self.base, self.program_shown) if p is not None}.values():
            pos.flush(prog.body)  # (once each: the state's Program is often the one shown)
        g = self.ghost
        if g is not None:
            for x in nodes_of(g.raw):
                pos.flush(x)
        pos.pending.clear()
        run = self.broken_text.plain_run
        if run is not None:
            run.bodies = None
        self.broken_text.kept = None  # (its statements' marks were among them)
        self.stats["positions_compacted"] = True

    def _crashed(self, e: Exception) -> None:
        import traceback

        try:
            self._full(record=False)
            self.stats["crash"] = repr(e)  # (a parser bug: tests fail on it, users get a full parse)
            return
        except Exception:
            pass
        self.levels = None
        self.program_shown = self.base = None
        self.broken_text.end_broken()
        self.broken_text.plain_units = None
        self.tokens = []
        self.relexer.rdiv_clean = 0
        tb = traceback.format_exception_only(type(e), e)[-1].strip()
        self.full_diags = [
            Diagnostic(
                "INTERNAL_ERROR", f"Internal error in the parser: {tb}", 0, 0, "error", {}, self.config.file
            )
        ]
        self.stats = {"mode": "crashed"}

    def _set_locator(self, pending: tuple[int, int, int] | None) -> None:
        """The locator (nodes refer to it) takes the new text; its line index is updated around the
        edited range when there is one."""
        loc = self.locator
        data = self.data
        old = loc.line_index
        if pending is not None and old is not None:
            ds, de, delta = pending
            de_old = de - delta
            k = bisect.bisect_right(old, ds)
            j = bisect.bisect_left(old, de_old + 1)
            mid = []
            p = data.find(b"\n", ds, de)
            while p >= 0:
                mid.append(p + 1)
                p = data.find(b"\n", p + 1, de)
            idx = old[:k] + mid + ([x + delta for x in old[j:]] if delta else old[j:])
        else:
            idx = line_starts(data)
        loc.string = self.text or ""
        loc.file = self.config.file
        loc.line_index = idx
        loc.set_source_bytes(data)

    # -- full parse (also the fallback)

    def _full(self, record: bool = True) -> None:
        cfg = self.config
        self._vcache = {}
        lx = Lexer(self.text or "", epp=cfg.epp, tasks=cfg.tasks)
        toks = lx.tokens()
        mapped = any(type(t) is MappedToken for t in toks)
        huge = None
        if len(self.data) >= HUGE_BYTES:
            record = False  # (nor after a syntax error: the tree a feature reads apart is never edited)
        if len(self.data) >= HUGE_BYTES and toks and lx.error is None and not cfg.epp:
            huge = self._huge(lx)
            if huge is None:
                lx = Lexer(self.text or "", epp=cfg.epp, tasks=cfg.tasks)  # (that parse dropped the tokens)
                toks = lx.tokens()
        self.lex_diags = list(lx.diagnostics)
        rec = None
        if huge is not None:
            res, kept = huge
        else:
            if record and lx.error is None and not cfg.epp:
                rec = Recorder(toks, len(toks), self.locator, cfg.file)
            res = parser.parse_lexed(self.locator, toks, lx.diagnostics, lx.error, epp=cfg.epp, watch=rec)
            kept = toks
        self.tokens = kept
        self.relexer.rdiv_clean = 0
        self.relexer.mapped = mapped
        self.program_shown = self.base = res.program
        self.broken_text.end_broken()
        self.broken_text.plain_units = None
        self.broken_text.kept = None
        self.ghost = None
        self.pos = Positions()
        self._defs_stale = False
        self.defs_now = list(getattr(res.program, "definitions", None) or ())
        self.block_recovery = res.block_recovery
        self.full_diags = list(res.diagnostics)
        self.stats = {
            "mode": "full",
            "tokens_lexed": len(kept),
            "tokens_parsed": len(kept),
            "huge": huge is not None,
        }
        self.levels = None
        if rec is None or not rec.top_done or res.program is None or overlapping(toks):
            return
        held = held_lists([res.program.body])  # type: ignore[attr-defined]
        levels = {k: v for k, v in rec.levels.items() if v.out is not None and (k == 0 or id(v.out) in held)}
        lex = {id(d) for d in self.lex_diags}
        xd = [d for lv in levels.values() for d in lv.xdiags]
        self.base_diags = remove_values([d for d in res.diagnostics if id(d) not in lex], xd)
        self.levels = levels
        levels[0].first = toks[0] if toks else None
        self.relexer.inside = None

    def _huge(self, lx: Lexer) -> tuple[parser.ParseResult, list[Any]] | None:
        """The full parse of a huge text (grammar.incremental.compact) and the tokens to keep: in
        columns, dropped from the lexer's list as they are parsed; no incremental state is recorded.
        None when that parse needs its tokens again (a syntax error's recovery, nesting too deep) or
        fails: the caller lexes and parses again keeping them (as grammar.parser.parse does; a parser
        bug meets it again and is reported as such)."""
        toks = lx.tokens()
        compact = CompactTokens(toks, self.data)
        try:
            res = parser.parse_lexed(self.locator, toks, lx.diagnostics, None, release=True)
        except Exception:  # (grammar.parser's own "parse again keeping the tokens", or a bug)
            return None
        # (the features read them as a Sequence; nothing edits the tokens of a state-less full parse)
        return res, cast(list[Any], compact)

    # -- incremental

    def _incremental(self, ds: int, de: int, delta: int) -> None:
        levels = self.levels
        assert levels is not None
        bt = self.broken_text
        changed = self.relexer.relex(ds, de, delta)
        self.stats = {"mode": "incremental", "tokens_lexed": changed.lexed, "window": changed.window}
        c, ce, dT, m1_old = changed.c, changed.ce, changed.dT, changed.m1_old
        if ce == c and not dT and bt.broken is None and not changed.adjacent and not self._recovered():
            # only blanks or comments changed: move what follows (not between two tokens that
            # touched: a node of length 0 there may belong to either; their statement is reparsed)
            self._shift(c, ds, de, delta)
            self.program_shown = self.base  # (the state is shown again)
            bt.plain_units = None
            return
        self.edit_ce = ce
        total = delta
        de_since = de
        if bt.broken is not None:  # the changes since the incremental state, together
            c0, ce0, d0 = bt.broken
            mn = ce - c
            c0 = c0 if c0 < c else (c0 + dT if c0 >= m1_old else c)
            ce0 = ce0 if ce0 <= c else (ce0 + dT if ce0 >= m1_old else c + mn)
            c, ce, total = min(c0, c), max(ce0, ce), d0 + delta
            bde = bt.broken_de
            bde = bde if bde <= ds else (bde + delta if bde >= de - delta else de)
            de_since = max(bde, de)
            ce = bt.state_suffix(c, ce, de_since)
        bt.since = (ce, total)  # (the tokens from ce on are the state's, total bytes further)
        lvl = self._innermost(c, ce)
        first = lvl
        dmin = ds if bt.broken is None else min(ds, bt.broken_ds)  # first byte changed since
        self._span = (dmin, de_since)
        if bt.broken_top and bt.broken is not None and bt.resume_top(c, dmin):
            # (still broken at the top level, as after the last edit, where the error came far after
            # the change: the lists' runs would parse all that only to meet it; a repaired text makes
            # resume_top's run end without an error)
            self.stats["lists_tried"] = 0
            bt.set_broken(c, ce, total, dmin, de_since)
            return
        last = bt.last_plain
        if (
            last is not None
            and last.far
            and bt.broken is not None
            and first.opener is not None
            and bt.resume_plain(first, c, ce, dmin)
        ):
            # (still broken as after the last edit, whose plain parse met its first top-level error
            # far after the change: the innermost list's run would go all that way only to escalate)
            self.stats["lists_tried"] = 0
            bt.set_broken(c, ce, total, dmin, de_since)
            return
        parsed = 0
        tried = 0
        while True:
            tried += 1
            self.stats["lists_tried"] = tried
            try:
                parsed = self._reparse_level(lvl, c, ce, total)
                break
            except Escalate as e:
                if (
                    lvl is first
                    and not e.synced
                    and first.opener is not None
                    and bt.resume_plain(first, c, ce, dmin)
                ):
                    bt.set_broken(c, ce, total, dmin, de_since)
                    bt.broken_top = False
                    return
                parent = None if e.hard else self._parent(lvl)
                if parent is None:  # a syntax error at the top level
                    far = False
                    if bt.resume_top(c, dmin):
                        far = bt.top_err - c > FAR
                    else:
                        bt.show_plain()
                    bt.set_broken(c, ce, total, dmin, de_since)
                    bt.broken_top = far
                    return
                lvl = parent
        bt.end_broken()
        bt.plain_units = None
        self.program_shown = self.base
        self.stats["tokens_parsed"] = parsed

    def _shift(self, m0: int, ds: int, de: int, delta: int) -> None:
        """No token changed (Relexer.relex spliced none in at token m0): what follows moves."""
        self.stats["mode"] = "shift"
        self.stats["tokens_parsed"] = 0
        toks = self.tokens
        g = self.ghost
        if g is not None:
            if ds < g.start.start_pos:
                g.delta += delta
            else:
                self.ghost = None
        # nodes start and end at tokens: the edit is taken as made just before the first token
        # after it (it may also have replaced characters of a token by the same ones, a quote by
        # a quote); a node of length 0 at the end of the token before stays where it is
        if m0 < len(toks) and (m0 == 0 or toks[m0 - 1].end_pos <= toks[m0].start_pos - delta):
            g0 = toks[m0].start_pos - delta
            self._move_all(g0, g0, delta)
        else:
            self._move_all(ds, de - delta, delta)
        self._finish([], [])

    def _recovered(self) -> bool:
        """Did the parse recover from a syntax error?  Where it resumes depends on line breaks and
        first columns (grammar.parser.next_resume), so blanks changed then are not just moved."""
        return any(d.code == "SYNTAX_ERROR" for d in self.full_diags)

    # -- statement lists

    def index(self, tok: Any) -> int:
        """Token index of a token of the current list (None: end of input)."""
        toks = self.tokens
        if tok is None:
            return len(toks)
        p = tok.start_pos
        k = bisect.bisect_left(toks, p, key=token_start)
        while k < len(toks) and toks[k].start_pos == p:
            if toks[k] is tok:
                return k
            k += 1
        return -1  # replaced

    def _lost_or_current(self, tok: Any) -> bool:
        """Is tok a token of the current list, or one it lost that may be lexed again (Shadow)?"""
        if self.index(tok) >= 0:
            return True
        sh = self.broken_text.shadow
        return sh is not None and sh.toks.get(tok.start_pos) is tok

    def _innermost(self, c: int, ce: int) -> Level:
        """The innermost statement list whose braces enclose tokens [c, ce) and did not change."""
        assert self.levels is not None
        toks = self.tokens
        lo = toks[c].start_pos if c < len(toks) else len(self.data)
        hi = toks[ce].start_pos if ce < len(toks) else len(self.data) + 1
        best = self.levels[0]
        best_pos = -1
        for lvl in self.levels.values():
            op = lvl.opener
            if op is None or op.start_pos >= lo or op.start_pos <= best_pos:
                continue
            cl = lvl.closer
            if cl is None or cl.start_pos < hi:
                continue
            # both braces are current tokens outside the changed middle
            oi = self.index(op)
            if oi < 0 or oi >= c or self.index(cl) < ce:
                continue
            best, best_pos = lvl, op.start_pos
        return best

    def _parent(self, lvl: Level) -> Level | None:
        if lvl.opener is None:
            return None
        assert self.levels is not None
        pos = lvl.opener.start_pos
        best = self.levels[0]
        best_pos = -1
        for other in self.levels.values():
            op = other.opener
            if op is None or op.start_pos >= pos or op.start_pos <= best_pos:
                continue
            cl = other.closer
            if cl is None or cl.start_pos <= pos:
                continue
            best, best_pos = other, op.start_pos
        return best

    def boundary(self, lvl: Level, c: int, first: int) -> tuple[int, int]:
        """(s, token index): the last statement boundary of lvl before token c -- statements 0..s-1 end
        before c (their lookahead token is a current token before c); first: the list's first token."""
        toks = self.tokens
        bnd = lvl.bounds
        pos_c = toks[c].start_pos if c < len(toks) else len(self.data)
        s = bisect.bisect_left(bnd, pos_c, key=bound_pos)
        while s > 0:
            k = self.index(bnd[s - 1])
            if 0 <= k < c:
                break
            s -= 1
        return s, (self.index(bnd[s - 1]) if s else first)

    def _reparse_level(self, lvl: Level, c: int, ce: int, delta: int) -> int:
        """Reparse the statements of `lvl` around tokens [c, ce) (see the module docstring); returns
        the number of tokens parsed."""
        assert self.levels is not None
        toks = self.tokens
        n = len(toks)
        data = self.data
        cfg = self.config
        t = self.tables
        top = lvl.opener is None
        first = 0 if top else self.index(lvl.opener) + 1
        if not top and first - 1 >= c:
            raise Escalate(synced=True)
        s, start_i = self.boundary(lvl, c, first)
        stack = list(lvl.states)
        values = list(lvl.values)
        if s:
            stack.append(t.gotos[stack[-1]]["stmts"])
            values.append(lvl.raw[:s])
        b = Builder(self.locator, cfg.file)
        b.namestack[:] = parser.open_class_names(t, stack, values)
        rec = Recorder(toks, n, self.locator, cfg.file)
        rec.target = lvl
        rec.depth = len(lvl.states) + 1
        rec.ce = ce
        rec.sync = {id(bt): j for j, bt in enumerate(lvl.bounds) if bt is not None and j >= s}
        if s == 0 and lvl.first is not None:
            rec.sync[id(lvl.first)] = -1  # statements typed before the first one
        rec.old_levels = self.levels
        rec.tables = t
        rec.index = self.index
        g = self.ghost
        if g is not None and g.level is lvl:
            rec.gsync = {id(bt): j for j, bt in enumerate(g.bounds[:-1]) if bt is not None}
            rec.gsync[id(g.start)] = -1
        drv = parser.Driver(b, memo=self.scan_memo)
        try:
            value, err = drv.run(toks, start_i, n, len(data), stack, values, rec, len(lvl.states))
        except Escalate:
            raise
        except Exception:
            raise Fallback() from None
        if value is not parser.STOPPED or rec.stop is None:
            raise Escalate(value is not parser.STOPPED and err is not None)
        raw_run = values[-1] if len(values) == len(lvl.values) + 1 else []
        if not isinstance(raw_run, list):
            raise Escalate()
        old_raw = lvl.raw
        if rec.stop[0] == "sync":
            j = rec.stop[1]
            new_raw = raw_run + old_raw[j + 1 :]
            new_bounds = lvl.bounds[:s] + rec.run_bounds + lvl.bounds[j + 1 :]
            end_tok = lvl.first if j < 0 else lvl.bounds[j]
            r_end_cur = end_tok.start_pos
            inclusive = False
            old_items = old_raw[s : j + 1]
        else:
            new_raw = raw_run
            new_bounds = lvl.bounds[:s] + rec.run_bounds
            r_end_cur = lvl.closer.start_pos if lvl.closer is not None else len(data)
            inclusive = True
            old_items = old_raw[s:]
        ghost = self.ghost
        restore = None
        if rec.stop[0] == "ghost" and ghost is not None:
            k = rec.stop[1]
            restore = ghost.raw[k + 1 :]
            new_raw = raw_run + restore
            new_bounds = lvl.bounds[:s] + rec.run_bounds + ghost.bounds[k + 1 :]
            end_tok = ghost.start if k < 0 else ghost.bounds[k]
        new_items = new_raw[s : len(raw_run)]
        if len(new_bounds) != len(new_raw):
            raise Fallback()
        if not top and (lvl.out is None or len(lvl.out) < 2 or out_len(new_raw) < 2):
            raise Escalate(synced=True)  # a single statement is held directly, not as a list
        # bodies kept whole (see Recorder.open_body): their statements are old, after the edit
        jumped = rec.jumped
        jskip = {id(x) for jl in jumped if jl.out is not None for x in jl.out}
        jspans = [(jl.opener.start_pos, jl.closer.start_pos) for jl in jumped]  # current coordinates
        for x in nodes_of(new_items):
            if parser.fix_positions(x, jskip) is not None:
                raise Fallback()  # too deep: grammar.parser reports it
        # -- commit (positions of what stays are still the old ones until moved below)
        if s:
            r_start = toks[start_i].start_pos
        else:
            r_start = lvl.opener.end_pos if lvl.opener is not None else 0
        r_end_old = r_end_cur - delta
        if not top and self.pos.ends_inside(
            self.base.body, r_start, r_end_old, {id(x) for x in lvl.out or ()}
        ):
            raise Escalate(synced=True)
        end_idx = self.index(end_tok) if rec.stop[0] == "sync" else (self.index(lvl.closer) if not top else n)

        def in_jumped(o: int) -> bool:
            return any(lo <= o <= hi for lo, hi in jspans)

        def gone(d: Diagnostic) -> bool:
            o = d.offset
            return o is not None and r_start <= o and (o < r_end_old or (inclusive and o == r_end_old))

        # the diagnostics inside bodies kept whole stay (the bodies are the run's, moved with them)
        kept_diags = [d for d in self.base_diags if gone(d) and in_jumped(d.offset + delta)]
        # statements after the change that a syntax error swallowed: set aside for the repair
        new_ghost = None
        if (
            rec.stop[0] == "end"
            and not top
            and lvl.closer is not None
            and (ghost is None or ghost.level is not lvl)
        ):
            for k in range(max(s, 1), len(old_raw) - 1):
                bt = lvl.bounds[k - 1]
                if bt is None or bt.type == "RBRACE":
                    break
                if self.index(bt) >= ce:
                    cl = lvl.closer.start_pos
                    new_ghost = Ghost(lvl, old_raw[k:], lvl.bounds[k:], bt)
                    lo_old, hi_old = bt.start_pos - delta, cl - delta
                    kept = {id(d) for d in kept_diags}
                    new_ghost.diags = [
                        # (an error at the list's `}` ends its last statement: the ghost's too; one in
                        # a body kept whole, which the old statements set aside share, is copied: the
                        # kept one moves with the current parse, the copy with the ghost)
                        copy.copy(d) if id(d) in kept else d
                        for d in self.base_diags
                        if d.offset is not None and lo_old <= d.offset <= hi_old
                    ]
                    new_ghost.levels = {
                        key: v
                        for key, v in self.levels.items()
                        if v.opener is not None and bt.start_pos <= v.opener.start_pos < cl
                    }
                    ids = {id(x) for x in nodes_of(new_ghost.raw)}
                    new_ghost.vcache = {i: e for i, e in self._vcache.items() if i in ids}
                    new_ghost.calls = {
                        id(x.functor_expr): (x, self._vcache.get(id(x)))
                        for x in lvl.out or ()
                        if type(x) is ast.CallNamedFunctionExpression and id(x.functor_expr) in ids
                    }
                    new_ghost.delta = delta
                    break
        if jumped:
            self._restack(jumped, rec.jstacks)
        self.base_diags = [d for d in self.base_diags if not gone(d)]
        levels = self.levels
        hi = max(r_end_cur, r_end_old)
        for key in [
            k
            for k, v in levels.items()
            if v is not lvl and v.opener is not None and r_start <= v.opener.start_pos <= hi
        ]:
            oi = self.index(levels[key].opener)
            if (oi < 0 or start_i <= oi < end_idx) and not (
                oi >= 0 and in_jumped(levels[key].opener.start_pos)
            ):
                del levels[key]
        self._move_all(r_start, r_end_old, delta)
        if jumped and delta:
            for d in kept_diags:
                d.offset += delta
            for v in levels.values():
                if v.opener is not None and in_jumped(v.opener.start_pos):
                    for d in v.xdiags:
                        if d.offset is not None:
                            d.offset += delta
            for jl in jumped:
                if new_ghost is not None and new_ghost.start.start_pos <= jl.opener.start_pos:
                    continue  # (set aside with the swallowed statements: moved when restored)
                for x in jl.out or ():
                    self.pos.mark(x, delta)
        self.base_diags.extend(kept_diags)
        if restore is not None and ghost is not None:
            ghost.delta += delta
            gd = ghost.delta
            at = end_tok.start_pos
            for x in nodes_of(restore):
                if gd:
                    self.pos.mark(x, gd)
            # (a diagnostic inside a body kept whole by this run is in base_diags already, moved)
            have = {id(d) for d in self.base_diags}
            for d in ghost.diags:
                if d.offset + gd >= at and id(d) not in have:
                    d.offset += gd
                    self.base_diags.append(d)
            for key, v in ghost.levels.items():
                if v.opener.start_pos >= at and self.index(v.opener) >= 0:
                    for d in v.xdiags:
                        if d.offset is not None:
                            d.offset += gd
                    levels[key] = v
            keep = {id(x) for x in nodes_of(restore)}
            self._vcache.update((i, e) for i, e in ghost.vcache.items() if i in keep)
            self.ghost = None
        elif new_ghost is not None:
            self.ghost = new_ghost
        elif ghost is not None:
            e0, e1 = self._span  # (the bytes changed, current coordinates)
            gcl = ghost.level.closer
            if not self._lost_or_current(ghost.start):
                self.ghost = None
            elif e1 <= ghost.start.start_pos:
                ghost.delta += delta  # (bytes added before them)
            elif gcl is None or self.index(gcl) < 0 or e0 < gcl.start_pos:
                self.ghost = None  # (an edit among them)
        self._flush_calls(new_raw, lvl.out or [])
        out, xdiags = transform(new_raw, self.locator, cfg.file)
        out = reuse_calls(out, new_raw, lvl.out or [])
        if restore is not None and ghost is not None and ghost.calls:
            self._restore_calls(out, ghost.calls)
        held = held_lists(nodes_of(new_items), jskip)
        new_levels = {k: v for k, v in rec.levels.items() if v.out is not None and id(v.out) in held}
        run_x = [d for v in new_levels.values() for d in v.xdiags]
        self.base_diags.extend(remove_values(list(b.diagnostics), run_x))
        levels.update(new_levels)
        for jl in jumped:
            if jl.out is None or id(jl.out) not in held:
                # a body kept whole, but in a statement that recovery then dropped: its lists are no
                # longer the AST's (their transforms' errors were reported all the same)
                lo, hi = jl.opener.start_pos, jl.closer.start_pos
                for key in [
                    k for k, v in levels.items() if v.opener is not None and lo <= v.opener.start_pos <= hi
                ]:
                    self.base_diags.extend(levels[key].xdiags)
                    del levels[key]
        lvl.raw = new_raw
        lvl.bounds = new_bounds
        lvl.xdiags = xdiags
        if top:
            lvl.first = toks[0] if toks else None
            lvl.out = out
            loc = self.locator
            if out:
                self.pos.push(out[0])
                self.pos.push(out[-1])
            body = Builder.block_or_expression(out, loc=loc) if out else Nop(loc, len(data), 0)
            self.base = Program(loc, body, [])
        else:
            assert lvl.out is not None
            self.pos.forget_list(lvl.out)  # (the subtrees listed for the marks change)
            lvl.out[:] = out
        dropped = [jl.out or [] for jl in jumped if jl.out is None or id(jl.out) not in held]
        back = restore if restore is not None and ghost is not None else []
        self.defs_now = patch_definitions(self.defs_now, old_items, new_items + back, jskip, dropped)
        self._defs_stale = True
        self.stats["bodies_kept"] = self.stats.get("bodies_kept", 0) + len(jumped)
        self._finish(old_items, new_items)
        return max(err if err is not None else ce, ce) - start_i

    def _restack(self, jumped: list[Level], stacks: list[tuple[tuple[Any, ...], list[Any]]]) -> None:
        """Bodies kept whole now sit on the run's LR stack, whose values (the reparsed header) are new
        objects: the levels of each body and of the lists inside it take that stack below their own
        part, so that a later plain parse resumed inside them (BrokenText.resume_plain) reduces the current
        header.  A list whose recorded stack does not start with its body's is marked stale instead."""
        assert self.levels is not None
        for jl, (states, values) in zip(jumped, stacks):
            old_s, old_v = jl.states, jl.values
            ns, nv = len(old_s), len(old_v)
            lo, hi = jl.opener.start_pos, jl.closer.start_pos
            for v in self.levels.values():
                if v is jl or v.opener is None or not lo < v.opener.start_pos < hi:
                    continue
                if v.states[:ns] == old_s and all(x is y for x, y in zip(v.values[:nv], old_v)):
                    v.states = states + v.states[ns:]
                    v.values = values + v.values[nv:]
                else:
                    v.stale = True
            jl.states, jl.values = states, values

    def _restore_calls(self, out: list[Any], calls: dict[int, tuple[Any, Any]]) -> None:
        """The calls made anew of restored statements (same function name and arguments, the same
        objects) take the validation cached for the calls made of them before."""
        for x in out:
            if type(x) is not ast.CallNamedFunctionExpression:
                continue
            old = calls.get(id(x.functor_expr))
            if old is None:
                continue
            o, hit = old
            if hit is None or hit[0] is not o or len(o.arguments) != len(x.arguments):
                continue
            if all(p is q for p, q in zip(o.arguments, x.arguments)):
                self._vcache[id(x)] = (x, *hit[1:])

    def _move_all(self, a: int, b: int, delta: int) -> None:
        """Parse diagnostics and the AST after bytes [a, b) (old coordinates) became delta longer."""
        if self.base is not None:
            self.pos.move(self.base.body, a, b, delta)
        if not delta:
            return
        for d in self.base_diags:
            if d.offset is not None and d.offset >= b:
                d.offset += delta
        assert self.levels is not None
        for lvl in self.levels.values():
            for d in lvl.xdiags:
                if d.offset is not None and d.offset >= b:
                    d.offset += delta

    def _flush_calls(self, raw: list[Any], old_out: list[Any]) -> None:
        """The statements the call transform will combine into calls (it reads their positions); the
        marks of the calls it made before go down to the statements they hold."""
        from puppet_xpp.grammar.build import STATEMENT_CALLS

        pending = self.pos.pending
        if not pending:
            return
        for x in old_out:
            if id(x) in pending and type(x) is ast.CallNamedFunctionExpression:
                self.pos.push(x)
        prev = None
        for expr in raw:
            if isinstance(prev, ast.QualifiedName) and prev.value in STATEMENT_CALLS:
                self.pos.flush(prev)
                for x in nodes_of([expr]):
                    self.pos.flush(x)
                prev = None
                continue
            prev = expr if isinstance(expr, Node) else (expr[-1] if len(expr) else None)

    def _finish(self, replaced: list[Any], new: list[Any]) -> None:
        """Parse diagnostics of the current state (sorted as grammar.parser sorts them)."""
        assert self.levels is not None
        d = list(self.lex_diags) + list(self.base_diags)
        for lvl in self.levels.values():
            d.extend(lvl.xdiags)
        d.sort(key=lambda x: (x.severity != "error", x.offset if x.offset is not None else -1))
        self.full_diags = d
        vc = self._vcache
        forget = self.pos.forget
        for x in replaced:
            for y in nodes_of([x]):
                vc.pop(id(y), None)
                forget(y)
        for y in self.pos.touched:  # the statements around an edit are validated again
            vc.pop(id(y), None)
        self.pos.touched = []

    # ------------------------------------------------------------------------------------------ results

    def parse_diagnostics(self) -> list[Diagnostic]:
        return list(self.full_diags)

    def validation_diagnostics(self) -> list[Diagnostic]:
        if self._vdiags is None:
            self._vdiags = self._validate()
        return list(self._vdiags)

    def _checker(self) -> Checker:
        """grammar.check's validator for this document: one for its configuration, reused unit after
        unit (each validation of a unit starts with no diagnostics, logs or path of its own; making
        one per unit was a fifth of validating the ~1,700 statements a quote typed mid-file leaves
        to validate again)."""
        held = self._checker_for
        if held is None or held[0] is not self.config:
            held = self._checker_for = (self.config, check.checker(self.config))
        ck: Checker = held[1]
        # (the statements below a unit validated again keep their marks: a check of the unit that
        # reports one of them asks where it is)
        ck.offset_of = self.pos.now
        return ck

    def _validate(self) -> list[Any]:
        """grammar.validator's diagnostics, redone only for the statements that changed: every
        statement of a statement list is a unit whose diagnostics (with those of the statements
        below it) are cached until an edit replaces it or happens inside it."""
        prog = self.program_shown
        if prog is None:
            return []
        if self.levels is None:
            self._vcache = {}
            return list(self._checker().validate(self.program))
        bt = self.broken_text
        if bt.kept_tokens is not None and bt.plain_units is None:
            return list(self._checker().validate(self.program))  # (a hard lexer error, parsed in full)
        units: set[int] = set()
        for lvl in self.levels.values():
            if lvl.out is not None:
                units.update(map(id, lvl.out))
        if bt.broken is not None or bt.kept_tokens is not None:  # (the state's cache stays)
            if bt.plain_units is None:
                return list(self._checker().validate(self.program))
            # a resumed plain parse (BrokenText.resume_plain): the statements it kept from before the boundary
            # are the state's, validated with its cache; its own lists are units cached apart
            units |= bt.plain_units
            out, bt.pcache = self._validate_units(prog, units, bt.pcache, self._vcache)
            bt.validated()
            return out
        if type(prog.body) is not BlockExpression:
            units.add(id(prog.body))
        out, self._vcache = self._validate_units(prog, units, self._vcache)
        return out

    def _validate_units(
        self, prog: Any, units: set[int], old: dict[int, Any], base: dict[int, Any] | None = None
    ) -> tuple[list[Any], dict[int, Any]]:
        """Validation diagnostics of prog and the new cache: units found in old (or unmoved in base,
        which is only read) are not validated again."""
        self.stats["statements_validated"] = 0
        return UnitValidation(self.pos, self.stats, self._checker, units, old, base).run(prog)
