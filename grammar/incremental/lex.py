"""The lexing window of the incremental parser (grammar.incremental): which lines around an edit
are lexed again and how the new tokens are spliced into the token list (Relexer, held by the
IncrementalParser).  Separate from parsing: it only needs the tokens, the text and the state kept
while the text is broken (grammar.incremental.broken's BrokenText, read here).
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any, NamedTuple

from puppet_xpp.grammar.incremental.plain import Shadow
from puppet_xpp.grammar.incremental.state import (
    BLANK,
    CONTEXT_FIRST,
    NOT_ANCHOR,
    SCAN,
    Fallback,
    LexBroken,
    dq_flags,
    overlapping,
    same_token,
    shift_token,
    token_start,
)
from puppet_xpp.grammar.lexer import Lexer, MappedToken
from puppet_xpp.grammar.lexer_text import NO_REGEX

if TYPE_CHECKING:
    from puppet_xpp.grammar.incremental.reparser import IncrementalParser


class Splice(NamedTuple):
    """What Relexer.relex changed: tokens [c, ce) of the new list replaced old tokens [c, m1_old)
    (dT more); ``adjacent``: the first changed token touched the one before it (before the edit);
    ``lexed``: tokens lexed in the window [window[0], window[1]) of the new text."""

    c: int
    ce: int
    dT: int
    m1_old: int
    adjacent: bool
    lexed: int
    window: tuple[int, int]


class Relexer:
    """The IncrementalParser's lexing window, with the state it keeps about the token list (``parser``:
    its tokens, text and configuration, and the broken-text state it reads).

    *Lexing.*  Only a window of lines around the edit is re-lexed, from a line where the lexer is in its
    initial state to one after the edit (*anchors*: tokens first on their line, outside strings, whose lexing
    does not depend on the previous token); a window that cannot be lexed on its own (a string or comment
    running past it) grows to the next anchor, 4 times further each time, up to the end of the text; one
    starting with a token whose type depends on the one before, or with comments and regexes that are not
    local, falls back to a full parse.  Tokens outside the changed middle keep their identity (the records
    refer to them).
    """

    def __init__(self, parser: IncrementalParser) -> None:
        self.parser = parser
        self.inside: list[bool] | None = None  # per token: inside a string or heredoc text
        self.nesting: list[int] = []  # ... and the string nesting after it (_splice_inside)
        self.rdiv_clean = 0  # tokens[:k] hold no DIV lexed where a regex could start (_regex_div_before)
        self.mapped = False  # a token has derived positions (lexer.MappedToken)
        # the last splice: (m0, len(middle), removed tokens, ds, de_old, delta, inside, nesting)
        self.last_splice: tuple[Any, ...] = ()
        self._lex_fail: tuple[Any, ...] | None = None  # _lex_window's last hard error

    # -- lexing window

    def relex(self, ds: int, de: int, delta: int) -> Splice:
        """Re-lex a window around the edit and splice the tokens that changed (the tokens after them
        and the lexer warnings move by delta); raises Fallback when the window cannot be lexed on its
        own, LexBroken on a hard lexer error."""
        p = self.parser
        broken = p.broken_text
        data = p.data
        toks = p.tokens
        n_old = len(toks)
        ds_old, de_old = ds, de - delta
        inside = self._inside_flags()
        # window start: the last anchor whose line starts at or before ds
        a_idx = None
        a_line = 0
        k0 = bisect.bisect_right(toks, ds_old, key=token_start) - 1
        for idx in range(min(k0, n_old - 1), max(-1, k0 - SCAN), -1):
            t = toks[idx]
            if t.start_pos > ds_old or inside[idx]:
                continue
            ls = self._anchor_line(idx, data, 0)
            if ls is not None and ls <= ds:
                a_idx, a_line = idx, ls
                break
        if a_idx is None:
            a_idx, a_line = 0, 0
        # window end: the first anchor after the damage (checked in the new text)
        b_idx = n_old
        b_line_new = len(data)
        k1 = max(a_idx + 1, bisect.bisect_left(toks, de_old, key=token_start))
        for idx in range(k1, min(n_old, k1 + SCAN)):
            t = toks[idx]
            if t.start_pos < de_old or inside[idx]:
                continue
            ls = self._anchor_line(idx, data, delta, False)
            if ls is not None and ls - delta > de_old:
                b_idx, b_line_new = idx, ls
                break
        # `/*` lexes as a comment only when a `*/` follows, anywhere later; a `/` where a regex may
        # start lexes as DIV only when no `/` follows: such windows are not local
        # a window that does not lex on its own grows (4 times more tokens each time) to the next
        # anchor, up to the end of the text: a quote typed in the middle of a file makes a string that
        # ends further down, the tokens after it are lexed anew until old and new lexing meet again
        step = 256
        regex_before: bool | None = None
        self._lex_fail = None
        tail: Any = None
        if broken.state_toks is not None:
            tail = self._state_tail(a_idx, a_line, de_old, delta, only_lost=True)
            if tail:
                new_toks, lex_diags, b_idx, b_line_new = tail[0], tail[1], tail[2], tail[3]
        while not tail:
            win = data[a_line:b_line_new]
            if b"*/" in win and self._div_star(data, 0, a_line, toks, 0):
                raise Fallback()
            if b"/" in win:
                if regex_before is None:
                    regex_before = self._regex_div_before(a_idx)
                if regex_before:
                    raise Fallback()
            new_toks, lex_diags = self._lex_window(a_line, b_line_new)
            if (
                new_toks is not None
                and b_idx < n_old
                and b"/*" in win
                and data.find(b"*/", b_line_new) != -1
                and self._div_star(data, a_line, b_line_new, new_toks, 0)
            ):
                b_idx, b_line_new = n_old, len(data)  # (a comment may run past the window)
                continue
            if (
                new_toks is not None
                and b_idx < n_old
                and self._regex_div(new_toks, 0, len(new_toks), toks, a_idx)
                and data.find(b"/", b_line_new) != -1
            ):
                new_toks = None
            if new_toks is not None or b_idx >= n_old:
                break
            if tail is None:  # (once) the state's lexing may end the window sooner (_state_tail)
                tail = self._state_tail(a_idx, a_line, de_old, delta) or False
                if tail:
                    new_toks, lex_diags, b_idx, b_line_new = tail[0], tail[1], tail[2], tail[3]
                    break
            nxt = self._anchor_from(b_idx + step, de_old, delta, inside)
            step *= 4
            b_idx, b_line_new = nxt if nxt is not None else (n_old, len(data))
        if new_toks is None:
            f = self._lex_fail
            if f is not None and f[0] == a_line and f[1] == len(data):
                # a hard lexer error: what a full parse of the text is given, without the state's
                keep = [d for d in p.lex_diags if d.offset is None or d.offset < a_line]
                raise LexBroken(toks[:a_idx] + f[2], keep + f[3], f[4])
            raise Fallback()
        assert lex_diags is not None
        if overlapping(new_toks) or overlapping(toks[a_idx:b_idx]):
            raise Fallback()  # (see overlapping)
        nw = len(new_toks)
        old_win = toks[a_idx:b_idx]
        # common prefix (tokens before the edit, equal) and suffix (after it, equal once moved)
        pre = 0
        lim = min(nw, len(old_win))
        while pre < lim:
            x, y = new_toks[pre], old_win[pre]
            if x.start_pos >= ds or not same_token(x, y, 0):
                break
            pre += 1
        suf = 0
        while not tail and suf < lim - pre:
            x, y = new_toks[nw - 1 - suf], old_win[len(old_win) - 1 - suf]
            if x.start_pos < ds + (de - ds) or not same_token(x, y, delta):
                break
            suf += 1
        m0 = a_idx + pre  # first changed token
        m1_old = b_idx - suf  # first unchanged old token after them
        middle = new_toks[pre : nw - suf]
        dT = len(middle) - (m1_old - m0)
        removed = toks[m0:m1_old]
        if tail:
            back = {id(t) for t in tail[4]}
            removed = [t for t in removed if id(t) not in back]
        self.rdiv_clean = min(self.rdiv_clean, m0)
        sh = broken.shadow
        if sh is None and p.ghost is not None:
            sh = broken.shadow = Shadow()
        if sh is not None:  # (records refer to lost tokens: lexed again, they take their objects back)
            sh.add(removed, ds, de_old, delta)
            sh.take_back(middle)
            if len(sh.toks) > sh.LIMIT:
                sh.toks.clear()
        self.last_splice = (m0, len(middle), removed, ds, de_old, delta, self.inside, self.nesting)
        toks[m0:m1_old] = middle
        p.scan_memo.spliced(toks, m0, m1_old, len(middle) - (m1_old - m0))
        ce = m0 + len(middle)
        if delta:
            for t in toks[ce:]:
                t.start_pos += delta
                t.end_pos += delta
            if self.mapped:
                for t in toks[ce:]:
                    if type(t) is MappedToken:
                        if t.concat_end_pos is not None:
                            t.concat_end_pos += delta
                        if t.name_start_pos is not None:
                            t.name_start_pos += delta
        if not self.mapped:
            self.mapped = any(type(t) is MappedToken for t in middle)
        known = None
        if tail and len(tail[0]) - len(tail[4]) >= pre:
            known = (len(tail[0]) - len(tail[4]) - pre, tail[5], tail[6])
        self._splice_inside(m0, m1_old, len(middle), known)
        # lexer warnings
        b_old_line = b_line_new - delta
        keep = []
        for d in p.lex_diags:
            o = d.offset
            if o is None or o < a_line:
                keep.append(d)
            elif o >= b_old_line:
                d.offset = o + delta
                keep.append(d)
        keep.extend(lex_diags)
        p.lex_diags = keep
        adjacent = 0 < m0 < len(toks) and toks[m0 - 1].end_pos == toks[m0].start_pos - delta
        return Splice(m0, ce, dT, m1_old, adjacent, nw, (a_line, b_line_new))

    def _state_tail(
        self, a_idx: int, a_line: int, de_old: int, delta: int, only_lost: bool = False
    ) -> tuple[Any, ...] | None:
        """While broken: a window from a_line to the first line after every edit since the state where
        the state's lexing is in its initial state (an anchor of the state's tokens), when the window
        lexes on its own there.  The text from that line on is the state's, lexed from the same
        initial state: its tokens are the state's, taken back (the current ones there are the
        interim tokens of an open quote, lexed anew when it was typed, which the window would
        otherwise have to grow over until the two lexings meet).  Returns (window tokens + the state's
        tokens, lexer warnings, first current token kept, its line start in the new text, the state's
        tokens taken back) or None."""
        p = self.parser
        broken = p.broken_text
        st, flags, sh = broken.state_toks, broken.state_inside, broken.shadow
        if (
            st is None
            or flags is None
            or sh is None
            or broken.state_lexw
            or len(flags) != len(st)
            or len(broken.state_nesting) != len(st)
        ):
            return None
        data = p.data
        toks = p.tokens
        index = p.index
        lim = max(de_old, broken.broken_de)  # (previous text's coordinates, as the state's tokens)
        have = sh.toks

        def placed(x: Any) -> bool:
            """Is x's position the current one (a token of the list or of the shadow)?  (The
            state's tokens lost inside an edit keep an old one.)"""
            return have.get(x.start_pos) is x or index(x) >= 0

        # the state's tokens from the first one that is placed at or after lim on lie in text that
        # no edit since the state touched: all of them are placed
        ns = len(st)
        j0 = bisect.bisect_left(st, lim, key=token_start)
        stop = min(ns, j0 + 4 * SCAN)
        while j0 < stop and not (st[j0].start_pos >= lim and placed(st[j0])):
            j0 += 1
        if j0 >= stop:
            return None
        for j in range(j0 + 1, min(ns, j0 + SCAN)):
            t = st[j]
            if flags[j] or t.type in NOT_ANCHOR or t.value.startswith("/"):
                continue
            p = t.start_pos + delta
            ls = data.rfind(b"\n", 0, p) + 1
            if data[ls:p].strip(BLANK) or st[j - 1].end_pos > ls - delta or ls - delta < lim:
                continue
            break
        else:
            return None
        if only_lost and index(st[j]) >= 0:
            return None  # (the current tokens there are the state's: the usual window is as short)
        win = data[a_line:ls]
        if b"/*" in win or b"*/" in win:
            return None
        new_toks, lex_diags = self._lex_window(a_line, ls)
        if new_toks is None or (
            b"/" in win
            and (
                self._regex_div_before(a_idx)
                or (self._regex_div(new_toks, 0, len(new_toks), toks, a_idx) and data.find(b"/", ls) != -1)
            )
        ):
            return None
        # where the current tokens are the state's again (from the end)
        r, e = len(toks), ns
        while r > a_idx and e > j and toks[r - 1] is st[e - 1]:
            r -= 1
            e -= 1
        back: list[Any] = st[j:e]
        here = {id(x) for x in toks[a_idx:r]}
        if not all(id(x) in here or have.get(x.start_pos) is x for x in back):
            return None  # (one of them lost its place: the shadow keeps one token a position)
        for bt in back:
            at = bt.start_pos
            if have.get(at) is bt:
                del have[at]
            shift_token(bt, delta)
        b_line = toks[r].start_pos + delta if r < len(toks) else len(data)
        if r < len(toks):
            b_line = data.rfind(b"\n", 0, b_line) + 1
        return (new_toks + back, lex_diags, r, b_line, back, flags[j:e], broken.state_nesting[j:e])

    def _inside_flags(self) -> list[bool]:
        """For each token: does it lie inside a string or heredoc text (no lexer anchor there)?
        (``self.nesting[k]``: the string nesting after token k, kept up to date by _splice_inside.)"""
        if self.inside is None:
            toks = self.parser.tokens
            self.inside, self.nesting = dq_flags(toks, 0, len(toks), 0)
        return self.inside

    def _splice_inside(self, m0: int, m1_old: int, m_new: int, known: tuple[Any, ...] | None = None) -> None:
        """Flags of the spliced tokens, then of the ones after them until the nesting is the old one.
        known: (k, flags, nesting) of the spliced tokens from the k-th on (the state's, _state_tail)."""
        if self.inside is None:
            return
        toks = self.parser.tokens
        n = len(toks)
        old_f, old_lv = self.inside, self.nesting
        lv0 = old_lv[m0 - 1] if m0 else 0
        k = m0 + m_new
        if known is not None and known[0] > 0:
            f, lv = dq_flags(toks, m0, m0 + known[0], lv0)
            if (lv[-1] if lv else lv0) != 0:
                f, lv = dq_flags(toks, m0, k, lv0)  # (a nesting that does not meet: computed)
            else:
                f.extend(known[1])
                lv.extend(known[2])
        else:
            f, lv = dq_flags(toks, m0, k, lv0)
        level = lv[-1] if lv else lv0
        j = m1_old  # old index of toks[k]
        while k < n:
            ty = toks[k].type
            cur = level + 1 if ty == "DQPRE" else level
            f.append(cur > 0 or (k > 0 and toks[k - 1].type == "HEREDOC"))
            level = cur - 1 if ty == "DQPOST" and cur else cur
            lv.append(level)
            k += 1
            j += 1
            if level == old_lv[j - 1]:
                break  # the same nesting after the same token: the rest is unchanged
        self.inside = old_f[:m0] + f + old_f[j:]
        self.nesting = old_lv[:m0] + lv + old_lv[j:]

    @staticmethod
    def _div_star(data: bytes, a: int, b: int, toks: list[Any], lo: int) -> bool:
        """Is a `/*` in data[a:b] lexed as a division in toks (sorted by position from lo)?  The lexer
        makes `/*` a comment only when a `*/` follows somewhere: a `*/` added later in the text turns
        such a division into a comment, while a `/*` inside a string (a path with a glob) stays."""
        i = data.find(b"/*", a, b)
        while i != -1:
            k = bisect.bisect_left(toks, i, lo, key=token_start)
            # (around a heredoc the tokens are not in text order: look at the neighbours too)
            if any(t.start_pos == i and t.type == "DIV" for t in toks[max(lo, k - 8) : k + 8]):
                return True
            i = data.find(b"/*", i + 2, b)
        return False

    def _regex_div_before(self, k: int) -> bool:
        """_regex_div over tokens[:k], scanning only what was not scanned clean before (a splice
        makes the tokens from its first changed one unscanned again): not O(file) per keystroke."""
        k0 = self.rdiv_clean
        if k0 >= k:
            return False
        if self._regex_div(self.parser.tokens, k0, k):
            return True
        self.rdiv_clean = k
        return False

    @staticmethod
    def _regex_div(
        toks: list[Any], i: int, n: int, before: list[Any] | None = None, before_n: int = 0
    ) -> bool:
        """Is one of toks[i:n] a DIV lexed where a regex could start (no closing `/` was found)?"""
        for k in range(i, n):
            if toks[k].type == "DIV":
                if k > 0:
                    prev = toks[k - 1].type
                elif before is not None and before_n > 0:
                    prev = before[before_n - 1].type
                else:
                    prev = None
                if prev not in NO_REGEX:  # (the lexer's rule: after `}` a regex may start)
                    return True
        return False

    def _anchor_line(self, idx: int, data: bytes, delta: int, check_prev: bool = True) -> int | None:
        """Line start of token idx if it is a lexing anchor in `data` (token positions + delta)."""
        toks = self.parser.tokens
        t = toks[idx]
        if t.type in NOT_ANCHOR or t.value.startswith("/"):
            return None
        p = t.start_pos + delta
        if p > len(data):
            return None
        ls = data.rfind(b"\n", 0, p) + 1
        if data[ls:p].strip(BLANK):
            return None
        if check_prev and idx > 0 and toks[idx - 1].end_pos > ls:
            return None
        return ls

    def _brace_first(self, first: Any, a: int) -> None:
        """The type of a window's first token lexed without the token before it: a `{` is a
        selector's after `?` (the lexer's rule), else a plain one, so it is typed here from the
        token before the window (before the edit: unchanged).  A brace typed as a line's first token
        in a big body took a full parse (150-400 ms in a 300 KB class).  A `/` (division or regex)
        is not decided so: the fallback, a full parse."""
        toks = self.parser.tokens
        k = bisect.bisect_left(toks, a, key=token_start) - 1
        if first.type not in ("LBRACE", "SELBRACE") or k < 0 or toks[k].end_pos > a:
            raise Fallback()
        first.type = "SELBRACE" if toks[k].type == "QMARK" else "LBRACE"

    def _lex_window(self, a: int, b: int) -> tuple[list[Any] | None, list[Any] | None]:
        """Tokens + warnings of data[a:b] at their global positions, or (None, None) on a hard error."""
        window = self.parser.data[a:b].decode("utf-8", "surrogateescape")
        lx = Lexer(window, epp=False, tasks=self.parser.config.tasks)
        toks = lx.tokens()
        if a and toks and toks[0].type in CONTEXT_FIRST:
            self._brace_first(toks[0], a)  # (lexed without the token before it, which decides its type)
        if a:
            for t in toks:
                t.start_pos += a
                t.end_pos += a
                ce = getattr(t, "concat_end_pos", None)
                if ce is not None:
                    t.concat_end_pos = ce + a
                ns = getattr(t, "name_start_pos", None)
                if ns is not None:
                    t.name_start_pos = ns + a
            for d in lx.diagnostics:
                if d.offset is not None:
                    d.offset += a
        if lx.error is not None:
            self._lex_fail = (a, b, toks, list[Any](lx.diagnostics), lx.error)
            return None, None
        return toks, list[Any](lx.diagnostics)

    def _anchor_from(self, idx: int, de_old: int, delta: int, inside: list[Any]) -> tuple[int, int] | None:
        """The first window end (token index, line start in the new text) at or after token idx."""
        toks = self.parser.tokens
        data = self.parser.data
        for k in range(idx, min(len(toks), idx + SCAN)):
            if inside[k] or toks[k].start_pos < de_old:
                continue
            ls = self._anchor_line(k, data, delta, False)
            if ls is not None and ls - delta > de_old:
                return k, ls
        return None
