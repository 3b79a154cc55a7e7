"""Incremental reparsing for the language server (no pygls imports).

The result of every update equals a full ``grammar.parser.parse`` of the current text (same Program,
same positions, same diagnostics) -- tests/lsp/test_incremental.py checks that with random edits --
but the work done is proportional to the edited top-level statements, not to the file:

* **Lexing**: only a window of lines is re-lexed, from the line of a top-level statement start before
  the edit to the line of one after it.  Both ends are *anchors*: tokens that start a top-level
  statement, stand first on their line (only blanks before them) and whose lexing does not depend on
  the previous token (not ``{`` or ``/``).  The lexer is in its initial state at such a line start, so a
  window that lexes without a hard error gives exactly the tokens a full lex gives there; otherwise the
  window grows to the end of the text, and a hard lexer error falls back to a full parse.
* **Parsing**: the LR driver (grammar/parser.py's tables and reduce actions) runs from the last
  statement boundary before the first changed token, with the parser stack that a full parse has at
  that boundary (``[start]`` at the start of a recovery segment, ``[start, stmts]`` between
  statements).  After the changed tokens, as soon as it reaches a boundary where the old parse had the
  same stack at the same (shifted) token, the rest of the old parse is reused: its statements are
  shifted, not rebuilt.  Syntax errors are recovered exactly like ``grammar.parser.parse_tokens``
  (resume at the next line-start token at bracket depth 0); a recovery point equal to an old one is a
  sync point too.
* **Assembly**: Puppet's call transform (``include foo`` ...) runs over each segment's raw statements,
  the body and the definitions list are rebuilt from the statements (O(statements), not O(nodes)).
* **Validation** (:meth:`IncrementalParser.validation_diagnostics`): the program-level checks run each
  time; each top-level statement's subtree is validated once and its diagnostics are reused (shifted)
  while the statement object survives.

Public API (the language server's, and the one asked of the parser owner)::

    p = IncrementalParser(text, config)       # config: server.analysis.DocConfig
    p.edit(start_byte, end_byte, new_text)    # any number of edits, then
    p.update()                                # -> reparses what changed
    p.program, p.tokens, p.locator, p.parse_diagnostics(), p.validation_diagnostics()
    p.stats                                   # what the last update did (for tests and the benchmark)

    parse_region(tokens, i, n, data, locator, file)   # statements of tokens[i:n] (a statement run)
"""

from __future__ import annotations

import bisect

from puppet_xpp.grammar import ast as A
from puppet_xpp.grammar import parser as P
from puppet_xpp.grammar.build import Builder
from puppet_xpp.grammar.issues import Diagnostic
from puppet_xpp.grammar.lexer import Lexer

Program = A.TYPES["Program"]
Nop = A.TYPES["Nop"]
BlockExpression = A.TYPES["BlockExpression"]
Node = A.Node

_NOT_ANCHOR = frozenset(("LBRACE", "SELBRACE", "DIV", "REGEX", "HEREDOC", "DQPRE", "DQMID", "DQPOST"))
_BLANK = b" \t\r\x0b\x0c"


try:
    from puppet_xpp.grammar.lexer import _NO_REGEX
except ImportError:  # pragma: no cover - be conservative: every DIV could have been a regex
    _NO_REGEX = frozenset()


def _regex_div(toks, i, n, before=None, before_n=0) -> bool:
    """Is one of toks[i:n] a DIV lexed where a regex could start (the lexer found no closing `/`)?"""
    for k in range(i, n):
        if toks[k].type == "DIV":
            if k > 0:
                prev = toks[k - 1].type
            elif before is not None and before_n > 0:
                prev = before[before_n - 1].type
            else:
                prev = None
            if prev not in _NO_REGEX:
                return True
    return False


def _start(t):
    return t.start_pos


class _Item:
    """One raw top-level statement (before the call transform)."""

    __slots__ = ("lead", "node", "defs", "diags")

    def __init__(self, lead, node, defs, diags):
        self.lead = lead  # token index of the boundary before it (its first token, or the ';' before it)
        self.node = node  # the raw statement value (a Node, or a CommaList of Nodes)
        self.defs = defs  # definitions reduced while parsing it
        self.diags = diags  # parser diagnostics emitted while parsing it


class _Segment:
    """A run of statements parsed in one go: the whole file, or the part between two syntax errors."""

    __slots__ = ("start", "depth", "items", "err", "err_diag", "partial", "tail_diags", "tail_defs", "nop")

    def __init__(self, start, depth=0):
        self.start = start  # token index where the segment starts (parser stack [start])
        self.depth = depth  # bracket depth before its first token
        self.items: list = []  # completed statements
        self.err = None  # token index of the syntax error that ends it (None: end of input)
        self.err_diag = None
        self.partial = None  # _Item completed by the salvage at the error (Puppet keeps it), or None
        self.tail_diags: list = []  # diagnostics of the statement cut by the error
        self.tail_defs: list = []
        self.nop = False


class _TrackingBuilder(Builder):
    pass


def _shift_tree(node, delta):
    """Add delta to the offsets of node and all nodes below it."""
    stack = [node]
    pop = stack.pop
    push = stack.append
    while stack:
        n = pop()
        n.offset += delta
        for f in n._child_fields:
            v = getattr(n, f)
            if v is None:
                continue
            if type(v) is list:
                for x in v:
                    if isinstance(x, Node):
                        push(x)
            elif isinstance(v, Node):
                push(v)


def _shift_value(v, delta):
    if isinstance(v, Node):
        _shift_tree(v, delta)
    else:  # CommaList
        for x in v:
            if isinstance(x, Node):
                _shift_tree(x, delta)


def _fix_value(v):
    if isinstance(v, Node):
        P.fix_positions(v)
    else:
        for x in v:
            if isinstance(x, Node):
                P.fix_positions(x)


def _shift_diags(ds, delta):
    for d in ds:
        if d.offset is not None:
            d.offset += delta


class _Restart(Exception):
    """The incremental path cannot be used: do a full parse."""


class _BlockError(_Restart):
    """A syntax error inside a body: grammar.parser.parse's recovery is needed (plain parse)."""


class IncrementalParser:
    """Parse state of one document, kept up to date edit by edit."""

    def __init__(self, text: str, config):
        self.config = config
        self.text = text
        self.data = text.encode("utf-8", "surrogateescape")
        self.locator = A.make_locator(text, config.file)
        self.tokens: list = []
        self.segments: list | None = None  # None: no incremental state (EPP, lexer error, too deep)
        self.lex_diags: list = []
        self.full_diags: list = []  # diagnostics when segments is None
        self.program = None
        self._vcache: dict = {}
        self._vdiags = None
        self._pending = None  # (ds, de, delta): damaged range in new text coordinates
        self.block_recovery = False  # the last plain parse recovered from an error inside a body
        self._dirty = True
        self.stats = {}
        self.tables = P.tables()
        self._rule_program = self._rule_index("program")
        self._rule_empty = self._rule_index("empty_program")

    def _rule_index(self, name):
        for k, (alias, _size, _origin) in enumerate(self.tables.rules):
            if alias == name:
                return k
        return None

    # ------------------------------------------------------------------------------------------ edits

    def line_starts(self) -> list:
        if not self._dirty:
            return self.locator.line_index
        data = self.data
        out = [0]
        find = data.find
        i = find(b"\n")
        while i >= 0:
            out.append(i + 1)
            i = find(b"\n", i + 1)
        return out

    def set_config(self, config):
        self.config = config
        self._dirty = True
        self.segments = None  # file name / modes may change the parse: full
        self._vcache = {}
        self._vdiags = None

    def replace_all(self, text: str):
        self.text = text
        self.data = text.encode("utf-8", "surrogateescape")
        self._pending = None
        self.segments = None
        self._dirty = True

    def edit(self, a: int, b: int, new_text: str):
        """Replace bytes [a, b) of the current text by new_text."""
        data = self.data
        a = max(0, min(a, len(data)))
        b = max(a, min(b, len(data)))
        nb = new_text.encode("utf-8", "surrogateescape")
        # keep edits on character boundaries (a column inside a character is clamped by LineIndex)
        self.data = data[:a] + nb + data[b:]
        self.text = None
        n = len(nb)
        d = n - (b - a)
        if self._pending is None:
            self._pending = (a, a + n, d)
        else:
            ds, de, delta = self._pending

            def fwd(x):
                if x <= a:
                    return x
                if x <= b:
                    return a + n
                return x + d

            self._pending = (min(ds, a), max(fwd(de), a + n), delta + d)
        self._dirty = True

    # ------------------------------------------------------------------------------------------ update

    def update(self):
        if not self._dirty:
            return
        if self.text is None:
            self.text = self.data.decode("utf-8", "surrogateescape")
        pending, self._pending = self._pending, None
        self._dirty = False
        self._vdiags = None
        self._set_locator()
        try:
            if self.segments is None or pending is None or self.config.epp:
                self._full()
                return
            try:
                self._incremental(*pending)
            except _BlockError:
                self._plain_parse(relex=False)
            except _Restart:
                self._full()
        except Exception as e:  # a parser bug must not take the server down
            self._crashed(e)

    def _crashed(self, e):
        import traceback

        try:
            self._plain_parse()
            return
        except Exception:
            pass
        self.segments = None
        self.program = None
        self.tokens = []
        tb = traceback.format_exception_only(type(e), e)[-1].strip()
        self.full_diags = [
            Diagnostic(
                "INTERNAL_ERROR", f"Internal error in the parser: {tb}", 0, 0, "error", {}, self.config.file
            )
        ]
        self.stats = {"mode": "crashed"}

    def _set_locator(self):
        loc = self.locator
        fresh = A.make_locator(self.text, self.config.file)
        loc.string = fresh.string
        loc.file = self.config.file
        loc.line_index = fresh.line_index
        object.__setattr__(loc, "_b", self.data)

    # -- full parse (also the fallback)

    def _full(self):
        cfg = self.config
        self.stats = {"mode": "full", "tokens_lexed": 0, "tokens_parsed": 0}
        self._vcache = {}
        if cfg.epp:
            return self._plain_parse()
        lx = Lexer(self.text, epp=False, tasks=cfg.tasks)
        toks = lx.tokens()
        if lx.error is not None:
            return self._plain_parse()
        self.tokens = toks
        self.lex_diags = list(lx.diagnostics)
        self.stats["tokens_lexed"] = len(toks)
        try:
            segs, _ = self._parse_from(0, "seg", None, None, None, None)
        except _BlockError:
            return self._plain_parse(relex=False)
        except _Restart:
            return self._plain_parse()
        self.segments = segs
        self._assemble()

    def _plain_parse(self, relex=True):
        """grammar.parser itself (EPP, lexer errors, too deep nesting, errors inside bodies): no
        incremental state.  relex=False: the current tokens are those of the current text."""
        cfg = self.config
        if relex:
            res = P.parse(self.text, cfg.file, epp=cfg.epp, tasks=cfg.tasks)
            self.locator = res.locator  # nodes point at the parse's own locator: make it ours
        else:
            res = P.parse_lexed(self.locator, self.tokens, self.lex_diags, epp=cfg.epp)
        self.segments = None
        self.block_recovery = res.block_recovery
        self.tokens = res.tokens
        self.program = res.program
        self.full_diags = list(res.diagnostics)
        n = len(res.tokens) if relex else 0
        self.stats = {"mode": "plain", "tokens_lexed": n, "tokens_parsed": len(res.tokens)}

    # -- incremental

    def _incremental(self, ds, de, delta):
        data = self.data
        toks = self.tokens
        n_old = len(toks)
        ds_old, de_old = ds, de - delta
        syncs = self._sync_points()  # [(token index, kind, seg index, item index)]
        inside = self._inside_flags()
        # -- window start: the last anchor (a token first on its line, outside strings) whose line
        # starts at or before ds; any such line start is a clean lexer state
        a_idx = None
        a_line = 0
        k0 = bisect.bisect_right(toks, ds_old, key=_start) - 1
        for idx in range(min(k0, n_old - 1), max(-1, k0 - 2000), -1):
            t = toks[idx]
            if t.start_pos > ds_old or inside[idx]:
                continue
            ls = self._anchor_line(idx, data, 0)
            if ls is not None and ls <= ds:
                a_idx, a_line = idx, ls
                break
        if a_idx is None:
            a_idx, a_line = 0, 0
        # -- window end: the first anchor after the damage (checked in the new text)
        b_idx = n_old
        b_line_new = len(data)
        k1 = max(a_idx + 1, bisect.bisect_left(toks, de_old, key=_start))
        for idx in range(k1, min(n_old, k1 + 2000)):
            t = toks[idx]
            if t.start_pos < de_old or inside[idx]:
                continue
            ls = self._anchor_line(idx, data, delta, False)
            # its line start (the newline before it) must lie after the damage: unchanged text
            if ls is not None and ls - delta > de_old:
                b_idx, b_line_new = idx, ls
                break
        # `/*` lexes as a comment only when a `*/` follows, anywhere later: a window that adds a `*/`
        # after an earlier `/*`, or holds a `/*` with a `*/` after it, cannot be lexed on its own
        win = data[a_line:b_line_new]
        if b"*/" in win and data.rfind(b"/*", 0, a_line) != -1:
            raise _Restart()
        if b_idx < n_old and b"/*" in win and data.find(b"*/", b_line_new) != -1:
            b_idx, b_line_new = n_old, len(data)
        # a `/` where a regex may start lexes as DIV only when no `/` follows anywhere later: a window
        # holding a `/` after such a DIV, or such a DIV with a `/` after the window, is not local either
        if b"/" in win and _regex_div(toks, 0, a_idx):
            raise _Restart()
        new_toks, lex_diags = self._lex_window(a_line, b_line_new)
        if (
            new_toks is not None
            and b_idx < n_old
            and _regex_div(new_toks, 0, len(new_toks), toks, a_idx)
            and data.find(b"/", b_line_new) != -1
        ):
            new_toks = None
        if new_toks is None and b_idx < n_old:
            b_idx, b_line_new = n_old, len(data)
            new_toks, lex_diags = self._lex_window(a_line, b_line_new)
        if new_toks is None:
            raise _Restart()
        nw = len(new_toks)
        dT = nw - (b_idx - a_idx)
        # first token that differs
        c = a_idx
        old_win = toks[a_idx:b_idx]
        for k in range(min(nw, len(old_win))):
            x, y = new_toks[k], old_win[k]
            if (
                x.type != y.type
                or x.value != y.value
                or x.start_pos != y.start_pos
                or x.end_pos != y.end_pos
                or x.start_pos >= ds
            ):
                break
            c += 1
        # only whitespace or comments changed: the same tokens, the later ones shifted
        same_tokens = nw == len(old_win) and all(
            x.type == y.type
            and x.value == y.value
            and x.end_pos - x.start_pos == y.end_pos - y.start_pos
            and x.start_pos == (y.start_pos if y.start_pos < ds else y.start_pos + delta)
            for x, y in zip(new_toks, old_win)
        )
        # splice tokens, shift the rest
        b_old_line = b_line_new - delta
        toks[a_idx:b_idx] = new_toks
        if delta:
            for t in toks[a_idx + nw :]:
                t.start_pos += delta
                t.end_pos += delta
                ce = getattr(t, "concat_end_pos", None)
                if ce is not None:
                    t.concat_end_pos = ce + delta
        # lexer warnings
        keep = []
        for d in self.lex_diags:
            o = d.offset
            if o is None or o < a_line:
                keep.append(d)
            elif o >= b_old_line:
                d.offset = o + delta
                keep.append(d)
        keep.extend(lex_diags)
        self.lex_diags = keep
        if same_tokens and all(seg.err is None for seg in self.segments):
            # nothing to reparse (recovery, which depends on line layout, is not involved)
            self._shift_after(ds, delta)
            self.stats = {
                "mode": "shift",
                "tokens_lexed": nw,
                "window": (a_line, b_line_new),
                "tokens_parsed": 0,
            }
            self._assemble()
            return
        # -- reparse from the last boundary before the first changed token
        start = None
        for sp in syncs:
            if sp[0] < c:
                start = sp
            else:
                break
        if start is None:
            start = (0, "seg", 0, 0)
        self.stats = {"mode": "incremental", "tokens_lexed": nw, "window": (a_line, b_line_new)}
        segs, parsed = self._parse_from(start[0], start[1], start, a_idx + nw, dT, delta)
        self.stats["tokens_parsed"] = parsed
        self.segments = segs
        self._assemble()

    def _inside_flags(self) -> list:
        """For each token: does it lie inside a string or heredoc text (no lexer anchor there)?"""
        out = []
        level = 0
        prev = None
        for t in self.tokens:
            ty = t.type
            if ty == "DQPRE":
                level += 1
            out.append(level > 0 or prev == "HEREDOC")
            if ty == "DQPOST" and level:
                level -= 1
            prev = ty
        return out

    def _string_context(self, wanted) -> set:
        """Which of the token indices in `wanted` lie inside a string or heredoc text (the parser's
        recovery may resume there; the lexer cannot start there)."""
        out = set()
        level = 0
        prev = None
        for k, t in enumerate(self.tokens):
            ty = t.type
            if ty == "DQPRE":
                level += 1
            inside = level > 0 or prev == "HEREDOC"
            if ty == "DQPOST":
                level = max(0, level - 1)
            if k in wanted and inside:
                out.add(k)
            prev = ty
        return out

    def _anchor_line(self, idx, data, delta, check_prev=True):
        """Line start of token idx if it is a lexing anchor in the text `data` (token positions + delta)."""
        toks = self.tokens
        t = toks[idx]
        if t.type in _NOT_ANCHOR or t.value.startswith("/"):
            return None
        p = t.start_pos + delta
        if p > len(data):
            return None
        ls = data.rfind(b"\n", 0, p) + 1
        if data[ls:p].strip(_BLANK):
            return None
        if check_prev and idx > 0 and toks[idx - 1].end_pos > ls:
            return None
        return ls

    def _lex_window(self, a: int, b: int):
        """Tokens + warnings of data[a:b] at their global positions, or (None, None) on a hard error."""
        window = self.data[a:b].decode("utf-8", "surrogateescape")
        lx = Lexer(window, epp=False, tasks=self.config.tasks)
        toks = lx.tokens()
        if lx.error is not None:
            return None, None
        if a:
            for t in toks:
                t.start_pos += a
                t.end_pos += a
                ce = getattr(t, "concat_end_pos", None)
                if ce is not None:
                    t.concat_end_pos = ce + a
            for d in lx.diagnostics:
                if d.offset is not None:
                    d.offset += a
        return toks, list(lx.diagnostics)

    def _sync_points(self):
        out = []
        for si, seg in enumerate(self.segments):
            out.append((seg.start, "seg", si, 0))
            for ii, it in enumerate(seg.items):
                if ii:
                    out.append((it.lead, "mid", si, ii))
            if seg.partial is not None and seg.items:
                out.append((seg.partial.lead, "mid", si, len(seg.items)))
        out.sort(key=lambda x: x[0])
        return out

    # ------------------------------------------------------------------------------------------ driver

    def _parse_from(self, i, kind, start, changed_end, dT, delta):
        """Parse from token i (a boundary of kind 'seg' or 'mid') to the end, or until the parse
        reaches a boundary of the old parse after changed_end.  Returns (segments, tokens parsed)."""
        toks = self.tokens
        n = len(toks)
        data = self.data
        old = self.segments if start is not None else None
        b = _TrackingBuilder(self.locator, self.config.file)
        t = self.tables
        actions = t.actions
        drv = P.Driver(b)
        S0, S_stmts = t.start, t.goto_stmts
        r_program, r_empty = self._rule_program, self._rule_empty
        default_reduce = t.default_reduce
        eof_pos = len(data)
        end_tok = P._End(eof_pos)

        # old boundaries after the change, by their old token index
        old_mid = {}
        old_seg = {}
        if old is not None:
            limit = changed_end - dT
            for si, seg in enumerate(old):
                if seg.start >= limit:
                    old_seg[seg.start] = si
                for ii, it in enumerate(seg.items):
                    if ii and it.lead >= limit:
                        old_mid[it.lead] = (si, ii)
                if seg.partial is not None and seg.items and seg.partial.lead >= limit:
                    old_mid[seg.partial.lead] = (si, len(seg.items))

        # the segments before the restart point are kept as they are
        if old is not None:
            si0 = start[2]
            segs = old[:si0]
            if kind == "mid":
                cur = _Segment(old[si0].start, old[si0].depth)
                cur.items = old[si0].items[: start[3]]
            else:
                cur = _Segment(i, old[si0].depth if si0 < len(old) else 0)
        else:
            segs = []
            cur = _Segment(0)
        first = i
        reuse = None  # ('mid', si, ii, j) or ('seg', si, j)

        while True:
            # ---- one segment (or the rest of one) from token i
            scan_from = i
            if kind == "seg":
                stack = [S0]
                values = []
            else:
                stack = [S0, S_stmts]
                values = [[None] * len(cur.items)]
            raw = None
            lead = i
            nd0 = 0
            nf0 = 0
            b.diagnostics = []
            b.definitions = []
            b.namestack.clear()
            at_boundary = -1
            defaults = 0
            err = None
            if True:
                while True:
                    if len(stack) == 2 and stack[1] == S_stmts and at_boundary != i:
                        at_boundary = i
                        raw = values[0]
                        # a statement was completed: record it
                        if len(raw) > len(cur.items):
                            _fix_value(raw[-1])
                            cur.items.append(_Item(lead, raw[-1], b.definitions[nf0:], b.diagnostics[nd0:]))
                            nf0 = len(b.definitions)
                            nd0 = len(b.diagnostics)
                            lead = i
                            if (
                                old is not None
                                and i >= changed_end
                                and (i - dT) in old_mid
                                and old[old_mid[i - dT][0]].depth == cur.depth
                            ):
                                si, ii = old_mid[i - dT]
                                reuse = ("mid", si, ii, i)
                                break
                        if i >= n:
                            break  # end of input after a complete statement list
                    tok = toks[i] if i < n else end_tok
                    act = actions[stack[-1]].get(tok.type)
                    if act is None:
                        # racc's default reductions (grammar.parser.Driver.run), except at a statement
                        # boundary, where they would only finish the program before the same error
                        if default_reduce is None or at_boundary == i and len(stack) == 2:
                            err = i
                            break
                        act = default_reduce[stack[-1]]
                        defaults += 1
                        if act is None or defaults > 1000:
                            err = i
                            break
                    else:
                        defaults = 0
                        if act < 0 and at_boundary == i and len(stack) == 2:
                            # `}` after a complete program: finishing it cannot shift this token either
                            err = i
                            break
                    if act >= 0:
                        stack.append(act)
                        values.append(tok)
                        i += 1
                        if len(stack) > P.MAX_STACK:
                            raise _Restart()
                        continue
                    k = -act - 1
                    if k == r_program:
                        break  # (not reached: handled at the boundary above)
                    drv.reduce(stack, values, k)
                    if k == r_empty:
                        break  # no tokens at all
            if reuse is not None:
                break
            if err is None:
                # end of input: the segment ends normally
                cur.err = None
                segs.append(cur)
                break
            # ---- a syntax error at token err
            if err < n and P.block_context(self.tables, stack, values) is not None:
                # inside a body: grammar.parser recovers there (recover_in_block); a plain parse does it
                raise _BlockError()
            etok = toks[err] if err < n else end_tok
            cur.err = err
            report = cur.start == 0 or err > cur.start
            cur.err_diag = (
                Diagnostic.make(
                    "SYNTAX_ERROR",
                    etok.start_pos,
                    etok.end_pos - etok.start_pos,
                    {"where": P._where(etok)},
                    file=self.config.file,
                )
                if report
                else None
            )
            cur.partial = None
            completed = drv.salvage(stack, values)
            if completed is not None:
                kind_c, val = completed
                if kind_c == "stmts" and len(val) > len(cur.items):
                    cur.partial = _Item(lead, val[-1], [], [])
                elif kind_c == "nop":
                    cur.partial = _Item(lead, val, [], [])
                    cur.nop = True  # the end-of-input Nop of an empty program
            cur.tail_diags = b.diagnostics[nd0:]
            cur.tail_defs = b.definitions[nf0:]
            if cur.partial is not None:
                _fix_value(cur.partial.node)
                cur.partial.defs = cur.tail_defs
                cur.partial.diags = cur.tail_diags
                cur.tail_defs = []
                cur.tail_diags = []
            segs.append(cur)
            if err >= n:
                break
            # next line-start token at depth 0 after err (depth 0 at the segment start)
            k, kd = self._resume(scan_from, cur.depth, cur.start, err, toks, data)
            if k is None:
                break
            if (
                old is not None
                and k >= changed_end
                and (k - dT) in old_seg
                and old[old_seg[k - dT]].depth == kd
            ):
                reuse = ("seg", old_seg[k - dT], k)
                break
            i = k
            kind = "seg"
            cur = _Segment(k, kd)

        parsed = i - first
        if reuse is not None:
            if reuse[0] == "mid":
                _, si, ii, j = reuse
                o = old[si]
                for it in o.items[ii:]:
                    self._shift_item(it, dT, delta)
                cur.items.extend(o.items[ii:])
                cur.err = o.err + dT if o.err is not None else None
                if o.err_diag is not None and delta:
                    o.err_diag.offset += delta
                cur.err_diag = o.err_diag
                cur.partial = o.partial
                cur.nop = o.nop
                if o.partial is not None and o.partial.lead >= j - dT:
                    self._shift_item(o.partial, dT, delta)
                cur.tail_diags = o.tail_diags
                _shift_diags(cur.tail_diags, delta)
                cur.tail_defs = o.tail_defs
                segs.append(cur)
                rest = old[si + 1 :]
            else:
                _, si, j = reuse
                rest = old[si:]
            for seg in rest:
                self._shift_segment(seg, dT, delta)
            segs.extend(rest)
        return segs, parsed

    def _shift_after(self, ds, delta):
        """Positions after ds move by delta; nodes spanning ds grow by delta (token indices unchanged)."""
        if not delta:
            return
        for seg in self.segments:
            items = list(seg.items) + ([seg.partial] if seg.partial is not None else [])
            for it in items:
                nodes = (
                    [it.node] if isinstance(it.node, Node) else [x for x in it.node if isinstance(x, Node)]
                )
                for root in nodes:
                    if root.offset >= ds:
                        _shift_tree(root, delta)
                    else:
                        if self._stretch(root, ds, delta):
                            self._vcache.pop(id(root), None)
                for d in it.diags:
                    if d.offset is not None and d.offset >= ds:
                        d.offset += delta
            for d in seg.tail_diags:
                if d.offset is not None and d.offset >= ds:
                    d.offset += delta
        # statements made by the call transform hold shifted nodes: revalidate them
        self._vcache = {k: v for k, v in self._vcache.items() if v[0].offset < ds or v[1] >= ds}

    @staticmethod
    def _stretch(root, ds, delta) -> bool:
        """Shift the nodes of root's subtree that start at/after ds, stretch those spanning it."""
        touched = False
        stack = [root]
        while stack:
            n = stack.pop()
            o = n.offset
            if o >= ds:
                _shift_tree(n, delta)
                touched = True
                continue
            if o + n.length > ds:
                n.length += delta
                touched = True
            for c in n.children():
                stack.append(c)
        return touched

    def _shift_item(self, it, dT, delta):
        it.lead += dT
        if delta:
            _shift_value(it.node, delta)
            _shift_diags(it.diags, delta)

    def _shift_segment(self, seg, dT, delta):
        seg.start += dT
        for it in seg.items:
            self._shift_item(it, dT, delta)
        if seg.partial is not None:
            self._shift_item(seg.partial, dT, delta)
        if seg.err is not None:
            seg.err += dT
        if delta:
            if seg.err_diag is not None:
                seg.err_diag.offset += delta
            _shift_diags(seg.tail_diags, delta)

    @staticmethod
    def _resume(scan_from, depth, seg_start, err, toks, data):
        """The token where recovery resumes after an error at err, with the bracket depth before it
        (grammar.parser's rule); scanning starts at a boundary whose depth is `depth`."""
        return P.next_resume(toks, data, scan_from, depth, err, seg_start)

    # ------------------------------------------------------------------------------------------ assembly

    def _assemble(self):
        """Program + diagnostics from the segments (Puppet's transform per segment)."""
        segs = self.segments
        b = Builder(self.locator, self.config.file)
        stmts: list = []
        defs: list = []
        diags: list = []
        errors = False
        for seg in segs:
            raw = [it.node for it in seg.items]
            for it in seg.items:
                defs.extend(it.defs)
                diags.extend(it.diags)
            if seg.partial is not None:
                if not seg.nop:  # an empty program's Nop is no statement
                    raw.append(seg.partial.node)
                defs.extend(seg.partial.defs)
                diags.extend(seg.partial.diags)
            diags.extend(seg.tail_diags)
            if seg.err is not None:
                errors = True
                if seg.err_diag is not None:
                    diags.append(seg.err_diag)
            b.diagnostics = []
            if seg.err is not None and seg.partial is None and not seg.items:
                continue
            out = b.statements(raw) if raw else []
            diags.extend(b.diagnostics)
            stmts.extend(out)
        loc = self.locator
        if not stmts:
            prog = Program(loc, Nop(loc, len(self.data), 0), [])
        else:
            prog = Program(loc, Builder.block_or_expression(stmts, loc=loc), [] if errors else defs)
            if errors:
                prog.definitions = defs
        self.program = prog
        d = list(self.lex_diags) + diags
        d.sort(key=lambda x: (x.severity != "error", x.offset if x.offset is not None else -1))
        self.full_diags = d

    # ------------------------------------------------------------------------------------------ results

    def parse_diagnostics(self) -> list:
        return list(self.full_diags)

    def validation_diagnostics(self) -> list:
        if self._vdiags is None:
            self._vdiags = self._validate()
        return list(self._vdiags)

    def _validate(self) -> list:
        from puppet_xpp.grammar import validator as V

        prog = self.program
        if prog is None:
            return []
        cfg = self.config
        kw = dict(strict=cfg.strict, file=cfg.file or None, modulepath=cfg.modulepath, manifest=cfg.manifest)
        kw["level"] = getattr(cfg, "level", None)
        cls = V.TasksChecker if cfg.tasks else V.Checker
        body = prog.body
        if self.segments is None or type(body) is not BlockExpression:
            self._vcache = {}
            return cls(**kw).validate(prog)
        # program-level checks (cheap), then each statement (cached)
        ck = cls(**kw)
        ck.diagnostics = []
        ck.path = []
        try:
            ck.check(prog)
            ck.check_top_construct_in_module(prog)
            ck.path = [prog]
            ck.check(body)
        except V._Abort as e:  # pragma: no cover - program-level checks do not abort
            return [e.diagnostic]
        out = list(ck.diagnostics)
        cache = {}
        old = self._vcache
        validated = 0
        for s in body.statements:
            hit = old.get(id(s))
            if hit is not None and hit[0] is s:
                _s, off0, ds, abort = hit
                dlt = s.offset - off0
                if dlt:
                    for d in ds:
                        if d.offset is not None:
                            d.offset += dlt
                    if abort is not None and abort.offset is not None:
                        abort.offset += dlt
                cache[id(s)] = (s, s.offset, ds, abort)
            else:
                validated += 1
                ck = cls(**kw)
                ck.diagnostics = []
                ck.path = [prog, body]
                abort = None
                try:
                    try:
                        ck.check(s)
                        ck._walk(s)
                    except RecursionError:
                        ck.diagnostics = []
                        ck.path = [prog, body]
                        ck.check(s)
                        ck._walk_iteratively(s)
                except V._Abort as e:
                    abort = e.diagnostic
                ds = list(ck.diagnostics)
                cache[id(s)] = (s, s.offset, ds, abort)
        self._vcache = cache
        self.stats["statements_validated"] = validated
        for s in body.statements:
            _s, _o, ds, abort = cache[id(s)]
            if abort is not None:
                return [abort]
            out.extend(ds)
        return out


def parse_region(tokens, i: int, n: int, data: bytes, locator, file: str = ""):
    """Parse tokens[i:n] (a run of whole top-level statements) on its own.

    Returns (raw statements, definitions, diagnostics, error token index or None).  This is the
    statement-run API the language server builds on; grammar/parser.py's Driver does the work."""
    b = Builder(locator, file)
    drv = P.Driver(b)
    end = tokens[n].start_pos if n < len(tokens) else len(data)
    value, err = drv.run(tokens, i, n, end)
    if err is None:
        prog = value
        body = prog.body
        stmts = body.statements if type(body) is BlockExpression else [body]
        for s in stmts:
            P.fix_positions(s)
        return stmts, list(b.definitions), list(b.diagnostics), None
    return [], list(b.definitions), list(b.diagnostics), err
