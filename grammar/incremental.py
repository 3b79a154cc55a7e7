"""Incremental reparsing (for the language server; no pygls imports), kept next to the parser.

The result of every update equals a full ``grammar.parser.parse`` of the current text (same Program,
same node positions, same definitions, same diagnostics) -- tests/test_incremental.py checks that
with random edit sequences -- but the work done is proportional to the statements an edit touches,
at any depth: an edit inside a class, define, node, ``if``/``case``, lambda or resource body reparses
only the statements of the innermost enclosing statement list that it touches.

* **Statement lists.**  The full parse runs ``grammar.parser``'s own LR driver with a ``watch`` that
  records every statement list (the program's and each ``{ }`` body's): the LR stack below the list
  (states and values), the list of raw statements (before Puppet's call transform), the lookahead
  token after each statement, the closing token, the transformed list the AST holds and the
  diagnostics of that transform.
* **Lexing** (grammar.incremental_lex).  Only a window of lines around the edit is re-lexed, from an
  anchor line where the lexer is in its initial state to one after the edit; tokens outside the
  changed middle keep their identity (the records refer to them).
* **Parsing.**  The innermost list around the changed tokens is resumed, with the same driver, from
  the last statement boundary before them with the stack a full parse has there, and stopped at the
  first later boundary of that list where the old parse had one on the same (unchanged) lookahead
  token, or at the list's end.  The statements after it are reused; the list is transformed again
  and spliced into the AST in place.  Syntax errors inside bodies recover exactly as in a full parse
  (the same driver).  When the run leaves the list (a brace changed) or a node around it ends inside
  the reparsed statements, the enclosing list reparses the statement holding it instead.  A `{`
  after the change whose body did not change (same LR state after it) is not reparsed: its old
  statements are pushed whole (an edit in a class's parameter list reparses the header only).
* **Broken text and quotes** (grammar.incremental_broken, grammar.incremental_bodies).  Statements
  that a syntax error swallowed (recovery skipped to the list's end) are set aside (_Ghost) and found
  again by the edit that repairs it.  A syntax error at the top level or a hard lexer error keeps the
  incremental state as it was and shows a plain parse of the current tokens, resumed at the last
  boundary before the change; the next edit reparses from that state over both edits.  Too deep
  nesting, a window that cannot be lexed on its own and EPP use a full parse.
* **Positions** (grammar.incremental_state's _Positions).  Nodes after an edit move lazily: the
  statements after it are marked (O(statements), not O(nodes)) and the marks are applied when the
  AST is handed out (``program``); the nodes around the edit grow.  Puppet's locations are not always
  nested (an operator stands after its left operand, a call's lambda and an if's else lie after the
  node's end): the walk goes by where subtrees start.
* **Validation** (:meth:`IncrementalParser.validation_diagnostics`, grammar.incremental_validate):
  every statement of every list is a unit whose diagnostics (with those below it) are cached until
  an edit replaces it or happens inside it (grammar.validator's ``Checker.validate_part`` validates a
  unit in its context, stopping at the units below it); the program-level checks run each time.

This module holds IncrementalParser: its public API, the full parse, the edit's reparse of statement
lists and the results.  The records and helpers they share are in grammar.incremental_state; the
broken-text and lexing-window methods come from the mixins BrokenText and Relexer.

Public API (the language server's)::

    p = IncrementalParser(text, config)       # config: server.analysis.document.DocConfig
    p.edit(start_byte, end_byte, new_text)    # any number of edits, then
    p.update()                                # -> reparses what changed
    p.program, p.tokens, p.locator, p.parse_diagnostics(), p.validation_diagnostics()
    p.stats                                   # what the last update did (for tests and the benchmark)
"""

from __future__ import annotations

import bisect
import copy
from typing import Any

from puppet_xpp.grammar import ast as A
from puppet_xpp.grammar import parser as P
from puppet_xpp.grammar.ast_base import line_starts
from puppet_xpp.grammar.build import Builder
from puppet_xpp.grammar.incremental_broken import BrokenText, _PlainRun, _Shadow
from puppet_xpp.grammar.incremental_lex import Relexer
from puppet_xpp.grammar.incremental_state import (
    _DEF_TYPES,
    _FAR,
    BlockExpression,
    Node,
    Nop,
    Program,
    _bound_pos,
    _end,
    _Escalate,
    _Fallback,
    _Ghost,
    _held_lists,
    _Level,
    _LexBroken,
    _nodes_of,
    _out_len,
    _overlapping,
    _Positions,
    _Recorder,
    _remove_values,
    _reuse_calls,
    _start,
    _transform,
)
from puppet_xpp.grammar.incremental_validate import _UnitValidation
from puppet_xpp.grammar.issues import Diagnostic
from puppet_xpp.grammar.lexer import Lexer, MappedToken
from puppet_xpp.grammar.recovery import ScanMemo


class IncrementalParser(BrokenText, Relexer):
    """Parse state of one document, kept up to date edit by edit."""

    COMPACT_AT = 20_000  # position marks pending beyond which they are compacted (_compact_positions)

    def __init__(self, text: str, config: Any):
        self.config = config
        self.text: str | None = text
        self.data = text.encode("utf-8", "surrogateescape")
        self.locator = A.make_locator(text, config.file)
        self.tokens: list[Any] = []
        self.levels: dict[int, _Level] | None = None  # None: no incremental state
        self.lex_diags: list[Any] = []
        self.base_diags: list[Any] = []  # parse diagnostics other than the call transforms'
        self.full_diags: list[Any] = []  # all parse diagnostics
        self._program: Any = None  # the Program shown (a plain parse's while the text is broken)
        self._base: Any = None  # the Program of the incremental state
        # (first changed token, first unchanged token, bytes added) since the incremental state, while
        # the text has a syntax error at the top level: the state stays as it was, a plain parse of
        # the current tokens is shown, and the next edit reparses from the state over both edits
        self._broken: tuple[int, int, int] | None = None
        self._broken_ds = 0  # while broken: the first byte changed since the incremental state
        self._broken_de = 0  # ... and the end of the last (current coordinates)
        self._broken_top = False  # ... and the last update found it broken at the top level, far on
        self._top_err = 0  # (the token index of _resume_top's first error)
        # while broken: the state's token list (the tokens its records refer to), and those of its
        # tokens that the current list lost, kept at current positions (_Shadow)
        self._state_toks: list[Any] | None = None
        self._state_inside: list[Any] | None = None  # _inside_flags of _state_toks
        self._state_nesting: list[Any] = []  # ... and the string nesting after each
        self._state_lexw = False  # the state had lexer warnings after the first change
        self._shadow: _Shadow | None = None
        self._last_splice: tuple[Any, ...] = ()  # (m0, len(middle), removed tokens, ds, de_old, delta)
        self._rdiv_clean = 0  # tokens[:k] hold no DIV lexed where a regex could start (_regex_div_before)
        # the last update's resumed plain parse (_PlainRun), this update's, and this update's edit:
        # (first byte, end byte, bytes added) and the first token after the ones it changed
        self._last_plain: _PlainRun | None = None
        self._plain_run: _PlainRun | None = None
        self._edit: tuple[int, int, int] | None = None
        self._edit_ce = 0
        self._span = (0, 0)  # the bytes changed since the state (current coordinates)
        # while _resume_cut runs: (tokens parsed, where the failed lexing unit begins, lexer diagnostics)
        self._cut: tuple[int, int, list[Any]] | None = None
        # while broken, after _resume_plain: the units (statements of its lists) of the Program shown,
        # their validation cache, and whether its positions and definitions are still to be brought
        # up to date (on first use of `program`)
        self._plain_units: set[int] | None = None
        # after a hard lexer error (_show_lex_broken): the state's tokens while the plain parse's are
        # shown, and whether the line index must be made anew at the next update
        self._kept_tokens: list[Any] | None = None
        self._relocate = False
        self._lex_fail: tuple[Any, ...] | None = None  # _lex_window's last hard error
        self._pcache: dict[int, tuple[Any, ...]] = {}
        self._plain_lazy = False
        self._ghost: _Ghost | None = None
        self.block_recovery = False
        self._pending: tuple[int, int, int] | None = None  # damaged range (new coordinates) and delta
        self._dirty = True
        self._vcache: dict[int, tuple[Any, ...]] = {}
        self.pos = _Positions()
        self._defs_stale = False
        self._vdiags: list[Any] | None = None
        self._inside: list[Any] | None = None  # per token: inside a string or heredoc text
        self._levels_dq: list[Any] = []
        self._mapped = False  # a token has derived positions (lexer.MappedToken)
        self.stats: dict[str, Any] = {}
        self.tables = P.tables()
        self._scan_memo = ScanMemo()  # recovery scans of earlier updates (grammar.recovery)

    @property
    def program(self) -> Any:
        """The current Program (positions and definitions brought up to date on first use)."""
        prog = self._program
        if self._broken is not None or self._kept_tokens is not None:
            if prog is not None and self._plain_units is not None and self._plain_lazy:
                self.pos.flush(prog.body)  # (statements from before the boundary may carry marks)
                defs = [x for x in A.walk(prog.body) if type(x) in _DEF_TYPES]
                defs.sort(key=_end)
                prog.definitions = defs
                self._plain_lazy = False
            return prog
        if prog is not None and (self.pos.pending or self._defs_stale):
            self.pos.flush(prog.body)
            if self._defs_stale:
                defs = [x for x in A.walk(prog.body) if type(x) in _DEF_TYPES]
                defs.sort(key=_end)
                prog.definitions = defs
                self._defs_stale = False
        return prog

    # ------------------------------------------------------------------------------------------ edits

    def line_starts(self) -> list[Any]:
        if not self._dirty:
            return list(self.locator.line_index or ())
        data = self.data
        out = [0]
        find = data.find
        i = find(b"\n")
        while i >= 0:
            out.append(i + 1)
            i = find(b"\n", i + 1)
        return out

    def set_config(self, config: Any) -> None:
        self.config = config
        self._dirty = True
        self.levels = None  # file name / modes may change the parse: full
        self._vcache = {}
        self._vdiags = None

    def replace_all(self, text: str) -> None:
        self.text = text
        self.data = text.encode("utf-8", "surrogateescape")
        self._pending = None
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
        if self._pending is None:
            self._pending = (a, a + n, d)
        else:
            ds, de, delta = self._pending

            def fwd(x: int) -> int:
                if x <= a:
                    return x
                if x <= b:
                    return a + n
                return x + d

            self._pending = (min(ds, a), max(fwd(de), a + n), delta + d)
        self._dirty = True

    # ------------------------------------------------------------------------------------------ update

    def update(self) -> None:
        if not self._dirty:
            return
        if self.text is None:
            self.text = self.data.decode("utf-8", "surrogateescape")
        pending, self._pending = self._pending, None
        self._dirty = False
        self._last_plain, self._plain_run = self._plain_run, None
        self._edit = pending
        self._vdiags = None
        if self._kept_tokens is not None:  # (after a hard lexer error: the state's tokens again)
            self.tokens, self._kept_tokens = self._kept_tokens, None
            self._rdiv_clean = 0
        self._set_locator(pending if self.levels is not None and not self._relocate else None)
        self._relocate = False
        try:
            if self.levels is None or pending is None or self.config.epp:
                self._full()
                return
            try:
                self._incremental(*pending)
            except _LexBroken as e:
                self._show_lex_broken(e, pending)
            except _Fallback:
                self._full()
        except Exception as e:  # a parser bug must not take the server down
            self._crashed(e)
        if self._broken is None and self._ghost is None:
            self._shadow = None  # (no record refers to lost tokens any more)
        if len(self.pos.pending) > self.COMPACT_AT:
            self._compact_positions()

    def _compact_positions(self) -> None:
        """Position marks outlive the nodes' use: those of a plain parse's Program stay when the next
        keystroke's replaces it (by 25,000 over 1,160 keystrokes of the 300 KB manifest), and every
        flush walks on while any is left.  Every node still held (the state's Program, the one shown,
        the statements set aside) gets its marks applied, the rest are dropped, and so are the bodies
        recorded for the next keystroke (grammar.incremental_bodies: their marks were among them)."""
        pos = self.pos
        for prog in {id(p): p for p in (self._base, self._program) if p is not None}.values():
            pos.flush(prog.body)  # (once each: the state's Program is often the one shown)
        g = self._ghost
        if g is not None:
            for x in _nodes_of(g.raw):
                pos.flush(x)
        pos.pending.clear()
        if self._plain_run is not None:
            self._plain_run.bodies = None
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
        self._program = self._base = None
        self._end_broken()
        self._plain_units = None
        self.tokens = []
        self._rdiv_clean = 0
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
        object.__setattr__(loc, "_b", data)

    # -- full parse (also the fallback)

    def _full(self, record: bool = True) -> None:
        cfg = self.config
        self._vcache = {}
        lx = Lexer(self.text or "", epp=cfg.epp, tasks=cfg.tasks)
        toks = lx.tokens()
        self.lex_diags = list(lx.diagnostics)
        rec = None
        if record and lx.error is None and not cfg.epp:
            rec = _Recorder(toks, len(toks), self.locator, cfg.file)
        res = P.parse_lexed(self.locator, toks, lx.diagnostics, lx.error, epp=cfg.epp, watch=rec)
        self.tokens = toks
        self._rdiv_clean = 0
        self._mapped = any(type(t) is MappedToken for t in toks)
        self._program = self._base = res.program
        self._end_broken()
        self._plain_units = None
        self._ghost = None
        self.pos = _Positions()
        self._defs_stale = False
        self.block_recovery = res.block_recovery
        self.full_diags = list(res.diagnostics)
        self.stats = {"mode": "full", "tokens_lexed": len(toks), "tokens_parsed": len(toks)}
        self.levels = None
        if rec is None or not rec.top_done or res.program is None or _overlapping(toks):
            return
        held = _held_lists([res.program.body])  # type: ignore[attr-defined]
        levels = {k: v for k, v in rec.levels.items() if v.out is not None and (k == 0 or id(v.out) in held)}
        lex = {id(d) for d in self.lex_diags}
        xd = [d for lv in levels.values() for d in lv.xdiags]
        self.base_diags = _remove_values([d for d in res.diagnostics if id(d) not in lex], xd)
        self.levels = levels
        levels[0].first = toks[0] if toks else None
        self._inside = None

    # -- incremental

    def _incremental(self, ds: int, de: int, delta: int) -> None:
        levels = self.levels
        assert levels is not None
        changed = self._relex(ds, de, delta)
        if changed is None:  # (only blanks or comments changed; the state is shown again)
            self._program = self._base
            self._plain_units = None
            return
        c, ce, dT, m1_old = changed
        self._edit_ce = ce
        total = delta
        de_since = de
        if self._broken is not None:  # the changes since the incremental state, together
            c0, ce0, d0 = self._broken
            mn = ce - c
            c0 = c0 if c0 < c else (c0 + dT if c0 >= m1_old else c)
            ce0 = ce0 if ce0 <= c else (ce0 + dT if ce0 >= m1_old else c + mn)
            c, ce, total = min(c0, c), max(ce0, ce), d0 + delta
            bde = self._broken_de
            bde = bde if bde <= ds else (bde + delta if bde >= de - delta else de)
            de_since = max(bde, de)
            ce = self._state_suffix(c, ce, de_since)
        lvl = self._innermost(c, ce)
        first = lvl
        dmin = ds if self._broken is None else min(ds, self._broken_ds)  # first byte changed since
        self._span = (dmin, de_since)
        if self._broken_top and self._broken is not None and self._resume_top(c, dmin):
            # (still broken at the top level, as after the last edit, where the error came far after
            # the change: the lists' runs would parse all that only to meet it; a repaired text makes
            # _resume_top's run end without an error)
            self.stats["lists_tried"] = 0
            self._set_broken(c, ce, total, dmin, de_since)
            return
        last = self._last_plain
        if (
            last is not None
            and last.far
            and self._broken is not None
            and first.opener is not None
            and self._resume_plain(first, c, ce, dmin)
        ):
            # (still broken as after the last edit, whose plain parse met its first top-level error
            # far after the change: the innermost list's run would go all that way only to escalate)
            self.stats["lists_tried"] = 0
            self._set_broken(c, ce, total, dmin, de_since)
            return
        parsed = 0
        tried = 0
        while True:
            tried += 1
            self.stats["lists_tried"] = tried
            try:
                parsed = self._reparse_level(lvl, c, ce, total)
                break
            except _Escalate as e:
                if (
                    lvl is first
                    and not e.synced
                    and first.opener is not None
                    and self._resume_plain(first, c, ce, dmin)
                ):
                    self._set_broken(c, ce, total, dmin, de_since)
                    self._broken_top = False
                    return
                parent = None if e.hard else self._parent(lvl)
                if parent is None:  # a syntax error at the top level
                    far = False
                    if self._resume_top(c, dmin):
                        far = self._top_err - c > _FAR
                    else:
                        self._show_plain()
                    self._set_broken(c, ce, total, dmin, de_since)
                    self._broken_top = far
                    return
                lvl = parent
        self._end_broken()
        self._plain_units = None
        self._program = self._base
        self.stats["tokens_parsed"] = parsed

    # -- statement lists

    def _index(self, tok: Any) -> int:
        """Token index of a token of the current list (None: end of input)."""
        toks = self.tokens
        if tok is None:
            return len(toks)
        p = tok.start_pos
        k = bisect.bisect_left(toks, p, key=_start)
        while k < len(toks) and toks[k].start_pos == p:
            if toks[k] is tok:
                return k
            k += 1
        return -1  # replaced

    def _lost_or_current(self, tok: Any) -> bool:
        """Is tok a token of the current list, or one it lost that may be lexed again (_Shadow)?"""
        if self._index(tok) >= 0:
            return True
        sh = self._shadow
        return sh is not None and sh.toks.get(tok.start_pos) is tok

    def _innermost(self, c: int, ce: int) -> _Level:
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
            oi = self._index(op)
            if oi < 0 or oi >= c or self._index(cl) < ce:
                continue
            best, best_pos = lvl, op.start_pos
        return best

    def _parent(self, lvl: _Level) -> _Level | None:
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

    def _boundary(self, lvl: _Level, c: int, first: int) -> tuple[int, int]:
        """(s, token index): the last statement boundary of lvl before token c -- statements 0..s-1 end
        before c (their lookahead token is a current token before c); first: the list's first token."""
        toks = self.tokens
        bnd = lvl.bounds
        pos_c = toks[c].start_pos if c < len(toks) else len(self.data)
        s = bisect.bisect_left(bnd, pos_c, key=_bound_pos)
        while s > 0:
            k = self._index(bnd[s - 1])
            if 0 <= k < c:
                break
            s -= 1
        return s, (self._index(bnd[s - 1]) if s else first)

    def _reparse_level(self, lvl: _Level, c: int, ce: int, delta: int) -> int:
        """Reparse the statements of `lvl` around tokens [c, ce) (see the module docstring); returns
        the number of tokens parsed."""
        assert self.levels is not None
        toks = self.tokens
        n = len(toks)
        data = self.data
        cfg = self.config
        t = self.tables
        top = lvl.opener is None
        first = 0 if top else self._index(lvl.opener) + 1
        if not top and first - 1 >= c:
            raise _Escalate(synced=True)
        s, start_i = self._boundary(lvl, c, first)
        stack = list(lvl.states)
        values = list(lvl.values)
        if s:
            stack.append(t.gotos[stack[-1]]["stmts"])
            values.append(lvl.raw[:s])
        b = Builder(self.locator, cfg.file)
        b.namestack[:] = P.open_class_names(t, stack, values)
        rec = _Recorder(toks, n, self.locator, cfg.file)
        rec.target = lvl
        rec.depth = len(lvl.states) + 1
        rec.ce = ce
        rec.sync = {id(bt): j for j, bt in enumerate(lvl.bounds) if bt is not None and j >= s}
        if s == 0 and lvl.first is not None:
            rec.sync[id(lvl.first)] = -1  # statements typed before the first one
        rec.old_levels = self.levels
        rec.tables = t
        rec.parser = self
        g = self._ghost
        if g is not None and g.level is lvl:
            rec.gsync = {id(bt): j for j, bt in enumerate(g.bounds[:-1]) if bt is not None}
            rec.gsync[id(g.start)] = -1
        drv = P.Driver(b, memo=self._scan_memo)
        try:
            value, err = drv.run(toks, start_i, n, len(data), stack, values, rec, len(lvl.states))
        except _Escalate:
            raise
        except Exception:
            raise _Fallback() from None
        if value is not P.STOPPED or rec.stop is None:
            raise _Escalate(value is not P.STOPPED and err is not None)
        raw_run = values[-1] if len(values) == len(lvl.values) + 1 else []
        if not isinstance(raw_run, list):
            raise _Escalate()
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
        ghost = self._ghost
        restore = None
        if rec.stop[0] == "ghost" and ghost is not None:
            k = rec.stop[1]
            restore = ghost.raw[k + 1 :]
            new_raw = raw_run + restore
            new_bounds = lvl.bounds[:s] + rec.run_bounds + ghost.bounds[k + 1 :]
            end_tok = ghost.start if k < 0 else ghost.bounds[k]
        new_items = new_raw[s : len(raw_run)]
        if len(new_bounds) != len(new_raw):
            raise _Fallback()
        if not top and (lvl.out is None or len(lvl.out) < 2 or _out_len(new_raw) < 2):
            raise _Escalate(synced=True)  # a single statement is held directly, not as a list
        # bodies kept whole (see _Recorder._open): their statements are old, after the edit
        jumped = rec.jumped
        jskip = {id(x) for jl in jumped if jl.out is not None for x in jl.out}
        jspans = [(jl.opener.start_pos, jl.closer.start_pos) for jl in jumped]  # current coordinates
        for x in _nodes_of(new_items):
            if P.fix_positions(x, jskip) is not None:
                raise _Fallback()  # too deep: grammar.parser reports it
        # -- commit (positions of what stays are still the old ones until moved below)
        if s:
            r_start = toks[start_i].start_pos
        else:
            r_start = lvl.opener.end_pos if lvl.opener is not None else 0
        r_end_old = r_end_cur - delta
        if not top and self.pos.ends_inside(
            self._base.body, r_start, r_end_old, {id(x) for x in lvl.out or ()}
        ):
            raise _Escalate(synced=True)
        end_idx = (
            self._index(end_tok) if rec.stop[0] == "sync" else (self._index(lvl.closer) if not top else n)
        )

        def in_jumped(o: int) -> bool:
            return any(lo <= o <= hi for lo, hi in jspans)

        def gone(d: Diagnostic) -> bool:
            o = d.offset
            return o is not None and r_start <= o and (o < r_end_old or (inclusive and o == r_end_old))

        # the diagnostics inside bodies kept whole stay (they are the bodies' own, moved with them)
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
                if self._index(bt) >= ce:
                    cl = lvl.closer.start_pos
                    new_ghost = _Ghost(lvl, old_raw[k:], lvl.bounds[k:], bt)
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
                    ids = {id(x) for x in _nodes_of(new_ghost.raw)}
                    new_ghost.vcache = {i: e for i, e in self._vcache.items() if i in ids}
                    new_ghost.calls = {
                        id(x.functor_expr): (x, self._vcache.get(id(x)))
                        for x in lvl.out or ()
                        if type(x) is A.CallNamedFunctionExpression and id(x.functor_expr) in ids
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
            oi = self._index(levels[key].opener)
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
            for x in _nodes_of(restore):
                if gd:
                    self.pos.mark(x, gd)
            # (a diagnostic inside a body kept whole by this run is in base_diags already, moved)
            have = {id(d) for d in self.base_diags}
            for d in ghost.diags:
                if d.offset + gd >= at and id(d) not in have:
                    d.offset += gd
                    self.base_diags.append(d)
            for key, v in ghost.levels.items():
                if v.opener.start_pos >= at and self._index(v.opener) >= 0:
                    for d in v.xdiags:
                        if d.offset is not None:
                            d.offset += gd
                    levels[key] = v
            keep = {id(x) for x in _nodes_of(restore)}
            self._vcache.update((i, e) for i, e in ghost.vcache.items() if i in keep)
            self._ghost = None
        elif new_ghost is not None:
            self._ghost = new_ghost
        elif ghost is not None:
            e0, e1 = self._span  # (the bytes changed, current coordinates)
            gcl = ghost.level.closer
            if not self._lost_or_current(ghost.start):
                self._ghost = None
            elif e1 <= ghost.start.start_pos:
                ghost.delta += delta  # (bytes added before them)
            elif gcl is None or self._index(gcl) < 0 or e0 < gcl.start_pos:
                self._ghost = None  # (an edit among them)
        self._flush_calls(new_raw, lvl.out or [])
        out, xdiags = _transform(new_raw, self.locator, cfg.file)
        out = _reuse_calls(out, new_raw, lvl.out or [])
        if restore is not None and ghost is not None and ghost.calls:
            self._restore_calls(out, ghost.calls)
        held = _held_lists(_nodes_of(new_items), jskip)
        new_levels = {k: v for k, v in rec.levels.items() if v.out is not None and id(v.out) in held}
        run_x = [d for v in new_levels.values() for d in v.xdiags]
        self.base_diags.extend(_remove_values(list(b.diagnostics), run_x))
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
            self._base = Program(loc, body, [])
        else:
            assert lvl.out is not None
            lvl.out[:] = out
        self._defs_stale = True
        self.stats["bodies_kept"] = self.stats.get("bodies_kept", 0) + len(jumped)
        self._finish(old_items, new_items)
        return max(err if err is not None else ce, ce) - start_i

    def _restack(self, jumped: list[_Level], stacks: list[tuple[tuple[Any, ...], list[Any]]]) -> None:
        """Bodies kept whole now sit on the run's LR stack, whose values (the reparsed header) are new
        objects: the levels of each body and of the lists inside it take that stack below their own
        part, so that a later plain parse resumed inside them (_resume_plain) reduces the current
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
            if type(x) is not A.CallNamedFunctionExpression:
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
        if self._base is not None:
            self.pos.move(self._base.body, a, b, delta)
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
            if id(x) in pending and type(x) is A.CallNamedFunctionExpression:
                self.pos.push(x)
        prev = None
        for expr in raw:
            if isinstance(prev, A.QualifiedName) and prev.value in STATEMENT_CALLS:
                self.pos.flush(prev)
                for x in _nodes_of([expr]):
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
        for x in replaced:
            for y in _nodes_of([x]):
                vc.pop(id(y), None)
        for y in self.pos.touched:  # the statements around an edit are validated again
            vc.pop(id(y), None)
        self.pos.touched = []

    # ------------------------------------------------------------------------------------------ results

    def parse_diagnostics(self) -> list[Any]:
        return list(self.full_diags)

    def validation_diagnostics(self) -> list[Any]:
        if self._vdiags is None:
            self._vdiags = self._validate()
        return list(self._vdiags)

    def _checker(self) -> Any:
        from puppet_xpp.grammar import validator as V

        cfg = self.config
        cls = V.TasksChecker if cfg.tasks else V.Checker
        ck = cls(
            strict=cfg.strict,
            file=cfg.file or None,
            modulepath=cfg.modulepath,
            manifest=cfg.manifest,
            level=getattr(cfg, "level", None),
        )
        # (the statements below a unit validated again keep their marks: a check of the unit that
        # reports one of them asks where it is)
        ck.offset_of = self.pos.now
        return ck

    def _validate(self) -> list[Any]:
        """grammar.validator's diagnostics, redone only for the statements that changed: every
        statement of a statement list is a unit whose diagnostics (with those of the statements
        below it) are cached until an edit replaces it or happens inside it."""
        prog = self._program
        if prog is None:
            return []
        if self.levels is None:
            self._vcache = {}
            return list(self._checker().validate(self.program))
        if self._kept_tokens is not None and self._plain_units is None:
            return list(self._checker().validate(self.program))  # (a hard lexer error, parsed in full)
        units: set[int] = set()
        for lvl in self.levels.values():
            if lvl.out is not None:
                units.update(map(id, lvl.out))
        if self._broken is not None or self._kept_tokens is not None:  # (the state's cache stays)
            if self._plain_units is None:
                return list(self._checker().validate(self.program))
            # a resumed plain parse (_resume_plain): the statements it kept from before the boundary
            # are the state's, validated with its cache; its own lists are units cached apart
            units |= self._plain_units
            out, self._pcache = self._validate_units(prog, units, self._pcache, self._vcache)
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
        return _UnitValidation(self, units, old, base).run(prog)
