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
* **Lexing.**  Only a window of lines around the edit is re-lexed, from a line where the lexer is in
  its initial state to one after the edit (*anchors*: tokens first on their line, outside strings,
  whose lexing does not depend on the previous token); a window that cannot be lexed on its own
  (a string or comment running past it) grows to the next anchor, 4 times further each time, up to
  the end of the text; one starting with a token whose type depends on the one before, or with
  comments and regexes that are not local, falls back to a full parse.
  Tokens outside the changed middle keep their identity (the records refer to them).
* **Parsing.**  The innermost list around the changed tokens is resumed, with the same driver, from
  the last statement boundary before them with the stack a full parse has there, and stopped at the
  first later boundary of that list where the old parse had one on the same (unchanged) lookahead
  token, or at the list's end.  The statements after it are reused; the list is transformed again
  and spliced into the AST in place.  Syntax errors inside bodies recover exactly as in a full parse
  (the same driver).  When the run leaves the list (a brace changed) or a node around it ends inside
  the reparsed statements, the enclosing list reparses the statement holding it instead.  A `{`
  after the change whose body did not change (same LR state after it) is not reparsed: its old
  statements are pushed whole (an edit in a class's parameter list reparses the header only).
* **Broken text.**  Statements that a syntax error swallowed (recovery skipped to the list's end) are
  set aside and found again by the edit that repairs it.  A syntax error at the top level keeps the
  incremental state as it was and shows a plain parse of the current tokens; the next edit reparses
  from that state over both edits.  That plain parse is *resumed*: when the innermost list's run
  does not come back to its boundaries, the same driver runs on, unwatched, from the LR configuration
  the state recorded at the list's last boundary before the change (the tokens before it are
  unchanged, so a plain parse from the first token reaches exactly that configuration), and
  grammar.parser.recover_top does the top-level recovery from there; the diagnostics before the
  change are the state's.  If that run meets an old boundary of a list around the change again, the
  text is not broken at the top level and the lists are tried as before.  Its Program is validated
  with the state's cache (the statements it kept are the state's units).  A hard lexer error (an
  unclosed quote) also keeps the state: the tokens before the lexing window are the state's, the
  window's complete them up to the error, and a plain parse of those is shown.  Too deep nesting, a
  window that cannot be lexed on its own and EPP use a full parse.
* **Quotes.**  A quote typed mid-file makes the rest of the text lexed anew (one long string, then
  code where strings were).  The tokens that records still refer to (the state's while broken, a
  _Ghost's) are kept in a _Shadow, moved with later edits, and equal tokens lexed again at the same
  place take the old objects back; while broken, a window may end at the first line after the edits
  where the state's lexing is in its initial state (_state_tail), and the state's tokens from there
  on are taken back without lexing them; the next keystroke's plain parse takes the last one's
  Program and diagnostics from the first configuration (after an error inside a body) that both
  runs reach (_PlainRun).  So only the keystrokes that open or close the quote's string over the
  rest of the file cost a pass over it.
* **Positions.**  Nodes after an edit move lazily: the statements after it are marked (O(statements),
  not O(nodes)) and the marks are applied when the AST is handed out (``program``); the nodes around
  the edit grow.  Puppet's locations are not always nested (an operator stands after its left
  operand, a call's lambda and an if's else lie after the node's end): the walk goes by where
  subtrees start.
* **Validation** (:meth:`IncrementalParser.validation_diagnostics`): every statement of every list is
  a unit whose diagnostics (with those below it) are cached until an edit replaces it or happens
  inside it (grammar.validator's ``Checker.validate_part`` validates a unit in its context, stopping
  at the units below it); the program-level checks run each time.

Public API (the language server's)::

    p = IncrementalParser(text, config)       # config: server.analysis.DocConfig
    p.edit(start_byte, end_byte, new_text)    # any number of edits, then
    p.update()                                # -> reparses what changed
    p.program, p.tokens, p.locator, p.parse_diagnostics(), p.validation_diagnostics()
    p.stats                                   # what the last update did (for tests and the benchmark)
"""

from __future__ import annotations

import bisect
from collections import Counter
from typing import Any

from puppet_xpp.grammar import ast as A
from puppet_xpp.grammar import parser as P
from puppet_xpp.grammar.ast_base import line_starts
from puppet_xpp.grammar.build import Builder
from puppet_xpp.grammar.incremental_bodies import Bodies
from puppet_xpp.grammar.issues import Diagnostic
from puppet_xpp.grammar.lexer import Lexer, MappedToken
from puppet_xpp.grammar.lexer_text import NO_REGEX
from puppet_xpp.grammar.recovery import CLOSERS, OPENERS, ScanMemo

Node = A.Node
BlockExpression = A.BlockExpression
Program = A.Program
Nop = A.Nop

_DEF_TYPES = frozenset(
    (
        A.ResourceTypeDefinition,
        A.HostClassDefinition,
        A.PlanDefinition,
        A.FunctionDefinition,
        A.NodeDefinition,
        A.TypeAlias,
        A.TypeDefinition,
    )
)
_NOT_ANCHOR = frozenset(("LBRACE", "SELBRACE", "DIV", "REGEX", "HEREDOC", "DQPRE", "DQMID", "DQPOST"))
_BLANK = b" \t\r\x0b\x0c"
# token types whose lexing depends on the token before them (`/` after a value is a division,
# `{` after `?` a selector's): a window whose first token is one of them is not lexed on its own
_CONTEXT_FIRST = frozenset(("LBRACE", "SELBRACE", "DIV", "REGEX"))
_IF = A.IfExpression
_SCAN = 2000  # tokens scanned for a window anchor on each side of an edit
# a top-level syntax error this many tokens after the change makes the next edit try the plain parse
# first (the program's list would run over all of them only to meet it again)
_FAR = 200


def _end(n: Any) -> int:
    return int(n.offset + n.length)


def _start(t: Any) -> int:
    return int(t.start_pos)


def _bound_pos(t: Any) -> float:
    return float("inf") if t is None else float(t.start_pos)


class _Fallback(Exception):
    """The incremental path cannot be used for this edit: do a full parse."""


class _LexBroken(_Fallback):
    """The text has a hard lexer error after the edit: the state stays as it was (the next update
    reparses from it over all edits since), and a plain parse of these tokens is shown."""

    def __init__(self, tokens: list[Any], diags: list[Any], error: Any) -> None:
        super().__init__()
        self.tokens = tokens
        self.diags = diags
        self.error = error


class _Escalate(Exception):
    """The statement list cannot take this edit on its own: reparse in the enclosing list.

    ``hard``: the list's run met a syntax error it could not recover from (the top level's kind).  A
    run in any enclosing list reaches the same LR configuration at this list's boundary (the tokens
    before it are unchanged) and, never popping below this list's stack, meets the same error: each
    of them would escalate too, so the text is broken at the top level without trying them."""

    def __init__(self, hard: bool = False, synced: bool = False) -> None:
        super().__init__()
        self.hard = hard
        self.synced = synced  # the run came back to the list's boundaries (the text parses there)


class _Level:
    """One statement list of the current parse (the program's or a `{ }` body's)."""

    __slots__ = ("opener", "closer", "states", "values", "raw", "bounds", "out", "xdiags", "first", "stale")

    def __init__(self, opener: Any, states: tuple[Any, ...], values: list[Any], raw: list[Any]):
        self.opener = opener  # the `{` token (None: the program)
        self.closer: Any = None  # the `}` token (None: end of input); set when the list is complete
        self.states = states  # LR stack below the list
        self.values = values  # the values of that stack
        self.raw = raw  # raw statements (before the call transform)
        self.bounds: list[Any] = []  # lookahead token after each raw statement (None: end of input)
        self.out: list[Any] | None = None  # the transformed list, the one the AST holds
        self.xdiags: list[Any] = []  # diagnostics of the call transform of this list
        self.first: Any = None  # the first token of the first statement, when known (the program's)
        # the LR stack below the list (states/values) may hold objects of an older parse: a body kept
        # whole while its header was reparsed (see _Recorder._open), or a list inside it
        self.stale = False


class _Ghost:
    """Statements of a list that a syntax error swallowed (recovery skipped them to the list's end):
    kept aside with their diagnostics, lists and cached validation, so that the edit repairing the
    error finds them again (same tokens) instead of reparsing the rest of the list."""

    __slots__ = ("level", "raw", "bounds", "start", "diags", "levels", "vcache", "calls", "delta")

    def __init__(self, level: _Level, raw: list[Any], bounds: list[Any], start: Any) -> None:
        self.level = level
        self.raw = raw  # the statements
        self.bounds = bounds  # bounds[k]: lookahead token after raw[k]
        self.start = start  # the first token of raw[0]
        self.diags: list[Any] = []  # their parse diagnostics
        self.levels: dict[int, _Level] = {}  # their statement lists
        self.vcache: dict[int, tuple[Any, ...]] = {}
        # the calls the list's transform made of them (`include x`): id(functor) -> (call, its cache
        # entry); the transform makes them anew when they are restored, the validation stays
        self.calls: dict[int, tuple[Any, Any]] = {}
        self.delta = 0  # bytes added before them since they were set aside


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


def _shift(t: Any, delta: int) -> None:
    t.start_pos += delta
    t.end_pos += delta
    if type(t) is MappedToken:
        if t.concat_end_pos is not None:
            t.concat_end_pos += delta
        if t.name_start_pos is not None:
            t.name_start_pos += delta


def _transform(raw: list[Any], locator: Any, file: str) -> tuple[list[Any], list[Any]]:
    b = Builder(locator, file)
    out = b.statements(raw)
    return out, b.diagnostics


class _Recorder:
    """The ``watch`` of grammar.parser.Driver.run: records statement lists; in a resumed run, also
    says where to stop (see IncrementalParser._reparse_level)."""

    def __init__(self, tokens: list[Any], n: int, locator: Any, file: str):
        self.tokens = tokens
        self.n = n
        self.locator = locator
        self.file = file
        self.levels: dict[int, _Level] = {}  # id(opener) (0: the program) -> level
        self.top_done = False
        # resumed run: the list it runs in
        self.target: _Level | None = None
        self.depth = 0  # stack height of that list's statements
        self.sync: dict[int, int] = {}  # id(old lookahead token) -> old statement index
        self.gsync: dict[int, int] = {}  # the same for the statements of a _Ghost
        self.ce = 0  # first token after the changed ones
        self.run_bounds: list[Any] = []
        self.stop: tuple[Any, ...] | None = None  # ('sync', old index) | ('end',)
        self.old_levels: dict[int, _Level] = {}  # bodies that may be kept whole (event "open")
        self.jumped: list[_Level] = []
        self.jstacks: list[tuple[tuple[Any, ...], list[Any]]] = []  # the run's LR stack at each jump
        self.tables: Any = None
        self.parser: Any = None

    def _open(self, i: int, stack: list[Any], values: list[Any]) -> Any:
        """A `{` after the changed tokens whose body is unchanged: push the old body's statements and
        go on at its `}` (same LR state after the brace, same enclosing class names)."""
        if i - 1 < self.ce or not self.old_levels:
            return None
        lv = self.old_levels.get(id(values[-1]))
        if lv is None or lv.out is None or lv.closer is None or lv.states[-1] != stack[-1]:
            return None
        t = self.tables
        if P.open_class_names(t, stack, values) != P.open_class_names(t, list[Any](lv.states), lv.values):
            return None
        k = self.parser._index(lv.closer)
        if k <= i:
            return None
        g = t.gotos[stack[-1]].get("statements")
        if g is None:
            return None
        self.jstacks.append((tuple[Any, ...](stack), list(values)))
        stack.append(g)
        values.append(lv.out)
        self.jumped.append(lv)
        return k

    def __call__(self, event: str, i: int, stack: list[Any], values: list[Any]) -> Any:
        if event == "open":
            return self._open(i, stack, values)
        if event == "resume":
            return False
        tgt = self.target
        if tgt is not None and len(stack) == self.depth:
            if event == "item":
                tok = self.tokens[i] if i < self.n else None
                self.run_bounds.append(tok)
                if i >= self.ce:
                    j = self.sync.get(id(tok))
                    if j is not None:
                        self.stop = ("sync", j)
                        return True
                    j = self.gsync.get(id(tok))
                    if j is not None:
                        self.stop = ("ghost", j)
                        return True
                return False
            if event == "end":
                tok = self.tokens[i] if i < self.n else None
                if tok is not tgt.closer:
                    raise _Escalate()
                self.stop = ("end",)
                return True
            return False
        if len(stack) == 2:
            key, opener = 0, None
        else:
            opener = values[-2]
            if getattr(opener, "type", None) != "LBRACE":
                return False  # a template's statements
            key = id(opener)
        lvl = self.levels.get(key)
        if event == "item":
            if lvl is None or lvl.raw is not values[-1]:
                lvl = _Level(opener, tuple[Any, ...](stack[:-1]), values[:-1], values[-1])
                self.levels[key] = lvl
            lvl.bounds.append(self.tokens[i] if i < self.n else None)
        elif lvl is not None and (event == "list" or lvl.raw is values[-1]):
            if event == "end":
                tok = self.tokens[i] if i < self.n else None
                if (tok is None) != (key == 0) or (tok is not None and tok.type != "RBRACE"):
                    del self.levels[key]  # (an LALR reduction before an error: not the list's end)
                    return False
                lvl.closer = tok
                lvl.xdiags = _transform(list(values[-1]), self.locator, self.file)[1]
            else:  # "list"
                lvl.out = values[-1]
                if key == 0:
                    self.top_done = True
        return False


def _noop() -> None:
    pass


def _roots(values: list[Any]) -> set[int]:
    """ids of the nodes among values and in the lists among them (one level, comma lists too)."""
    out = set()
    for v in values:
        if isinstance(v, Node):
            out.add(id(v))
        elif isinstance(v, list):
            for x in v:
                if isinstance(x, Node):
                    out.add(id(x))
                elif isinstance(x, list):
                    out.update(id(y) for y in x if isinstance(y, Node))
    return out


def _mark(pos: _Positions, n: Any) -> int:
    e = pos.pending.get(id(n))
    return int(e[1]) if e is not None else 0


def _no_visit(n: Any) -> bool:
    return False


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


def _remove_values(diags: list[Any], remove: list[Any]) -> list[Any]:
    """diags without one occurrence of each diagnostic in remove (compared by value)."""
    if not remove:
        return diags
    c = Counter((d.code, d.offset, d.length, d.message) for d in remove)
    out = []
    for d in diags:
        k = (d.code, d.offset, d.length, d.message)
        if c.get(k):
            c[k] -= 1
        else:
            out.append(d)
    return out


def _first_child(n: Any) -> Any:
    for f in n._child_fields:
        v = getattr(n, f)
        if v is None:
            continue
        if type(v) is list:
            for x in v:
                if isinstance(x, Node):
                    return x
            continue
        if isinstance(v, Node):
            return v
    return None


def _children(n: Any) -> list[Any]:
    out: list[Any] = []
    for f in n._child_fields:
        v = getattr(n, f)
        if v is None:
            continue
        if type(v) is list:
            out.extend(x for x in v if isinstance(x, Node))
        elif isinstance(v, Node):
            out.append(v)
    return out


class _Positions:
    """Node offsets moved lazily: ``pending[id(n)] = [n, d]`` means that every node of n's subtree is
    d bytes further than its ``offset`` says.  An edit marks the statements after it (O(statements)
    instead of O(nodes)); :meth:`flush` applies the marks (when the AST is handed out), :meth:`push`
    applies one node's mark and hands it down to its children."""

    def __init__(self) -> None:
        self.pending: dict[int, list[Any]] = {}
        self.touched: list[Any] = []  # nodes around the edits seen by move()
        self._delta = 0

    def mark(self, n: Any, d: int) -> None:
        e = self.pending.get(id(n))
        if e is None:
            self.pending[id(n)] = [n, d]
        else:
            e[1] += d

    def push(self, n: Any) -> None:
        e = self.pending.pop(id(n), None)
        if e is not None and e[1]:
            d = e[1]
            n.offset += d
            pending = self.pending
            for c in _children(n):
                f = pending.get(id(c))
                if f is None:
                    pending[id(c)] = [c, d]
                else:
                    f[1] += d

    def unpush(self, n: Any, d: int) -> None:
        """Undo mark(n, d) and push(n): n moves back, its children's marks lose d (and go at 0)."""
        n.offset -= d
        pending = self.pending
        for c in _children(n):
            e = pending.get(id(c))
            if e is None:
                pending[id(c)] = [c, -d]
            else:
                e[1] -= d
                if not e[1]:
                    del pending[id(c)]

    def flush(self, root: Any, skip: set[int] | frozenset[int] = frozenset()) -> None:
        """Apply every mark in root's subtree (not below the nodes in skip, which keep theirs)."""
        if not self.pending:
            return
        pending = self.pending
        stack = [(root, 0)]
        pop = stack.pop
        push = stack.append
        while stack:
            n, d = pop()
            e = pending.pop(id(n), None)
            if e is not None:
                d += e[1]
            if id(n) in skip:
                if d:
                    pending[id(n)] = [n, d]
                continue
            if d:
                n.offset += d
            for f in n._child_fields:
                v = getattr(n, f)
                if v is None:
                    continue
                if type(v) is list:
                    for x in v:
                        if isinstance(x, Node):
                            push((x, d))
                elif isinstance(v, Node):
                    push((v, d))

    def _lo(self, n: Any) -> int:
        """Where n's subtree starts (an operator node stands after its left operand): the smallest
        offset along the first children."""
        pending = self.pending
        d = 0
        lo = None
        while n is not None:
            e = pending.get(id(n))
            if e is not None:
                d += e[1]
            o = n.offset + d
            if lo is None or o < lo:
                lo = o
            n = _first_child(n)
        return int(lo) if lo is not None else 0

    def _spine(self, root: Any, a: int, b: int, visit: Any) -> None:
        """Walk the nodes that may lie around [a, b): calls visit(node, true offset) for each such
        node (after pushing its mark); marks subtrees that start at or after b (with delta, see move).
        In a list only the last element that starts before b can reach it (source order)."""
        stack = [root]
        lo_of = self._lo
        while stack:
            n = stack.pop()
            if id(n) in self.pending:
                self.push(n)
            if visit(n):
                continue
            for f in n._child_fields:
                v = getattr(n, f)
                if v is None:
                    continue
                if type(v) is list:
                    nodes = [x for x in v if isinstance(x, Node)]
                    m = bisect.bisect_left(nodes, b, key=lo_of)  # (starts are in source order)
                    for x in nodes[m:]:
                        self._after(x)
                    if m:
                        stack.append(nodes[m - 1])
                elif isinstance(v, Node):
                    if lo_of(v) >= b:
                        self._after(v)
                    else:
                        stack.append(v)

    def _after(self, n: Any) -> None:
        if self._delta:
            self.mark(n, self._delta)

    def ends_inside(self, root: Any, a: int, b: int, ignore: set[int]) -> bool:
        """Does a node around [a, b) end inside it?  (Its end was derived from a statement that is
        reparsed: only its builder knows the new one.)  The list's own statements (ignore) do not
        count: they are replaced, calls made by the transform included."""
        found = []

        def visit(n: Any) -> bool:
            o = n.offset
            if id(n) in ignore:
                return False
            if o < a < o + n.length < b:
                found.append(n)
            return bool(found)

        self._delta = 0
        self._spine(root, a, b, visit)
        return bool(found)

    def move(self, root: Any, a: int, b: int, delta: int) -> None:
        """An edit replaced bytes [a, b) (old coordinates) by delta more: nodes at or after b move
        (their subtrees marked), nodes around [a, b) grow."""
        touched = self.touched

        pending = self.pending

        def visit(n: Any) -> bool:
            o = n.offset
            e = o + n.length
            lo, hi = o, e
            if type(n) is _IF and n.test is not None:
                # an `if`'s length is the span from its test to the end of its else part (or `}`),
                # while it starts at the keyword: that span decides whether it grows
                m = pending.get(id(n.test))
                lo = n.test.offset + (m[1] if m is not None else 0)
                hi = lo + n.length
            if o >= b:
                n.offset = o + delta  # (an operator after the edit, its left operand before it)
                if self._lo(n) < a:  # (... around the edit: validated again)
                    touched.append(n)
            if lo < a and hi > a:
                if hi >= b:
                    n.length += delta  # around the edit
                touched.append(n)
            elif o < a and e > a:
                touched.append(n)
            return False

        self._delta = delta
        self._spine(root, a, b, visit)


def _held_lists(roots: list[Any], skip: set[int] | frozenset[int] = frozenset()) -> set[int]:
    """ids of the statement lists that nodes of these trees hold (a body's BlockExpression...), not
    looking below the nodes in skip."""
    held = set()
    stack = list(roots)
    while stack:
        y = stack.pop()
        if id(y) in skip:
            continue
        st = getattr(y, "statements", None)
        if type(st) is list:
            held.add(id(st))
        stack.extend(_children(y))
    return held


def _nodes_of(items: list[Any]) -> list[Any]:
    """The Node roots of raw statements (a statement may be a comma list of them)."""
    out = []
    for v in items:
        if isinstance(v, Node):
            out.append(v)
        else:
            out.extend(x for x in v if isinstance(x, Node))
    return out


class IncrementalParser:
    """Parse state of one document, kept up to date edit by edit."""

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

    def _set_broken(self, c: int, ce: int, total: int, ds: int, de: int) -> None:
        """The text is broken at the top level; the state stays (see the module docstring).  When it
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

    def _end_broken(self) -> None:
        self._broken = None
        self._broken_top = False
        self._state_toks = None
        if self._ghost is None:
            self._shadow = None

    def _state_suffix(self, c: int, ce: int, de: int) -> int:
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

    def _resume_plain(self, lvl: _Level, c: int, ce: int, ds: int) -> bool:
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

    def _place_before(self, bpos: int, lists: list[tuple[_Level, int]], values: list[Any]) -> None:
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

    def _bodies(self, b: Builder, n: int) -> Bodies:
        """The Bodies watch of a plain run: the last keystroke's run's bodies may be taken whole."""
        last = self._last_plain
        prev = None
        if last is not None and self._edit is not None and self._cut is None:
            prev = last.bodies
        delta = self._edit[2] if self._edit is not None else 0
        return Bodies(self, b, prev, self._edit_ce, delta, n)

    def _chunks(self, b: Builder) -> _Chunks:
        last = self._last_plain
        prev = last.chunks if last is not None and self._edit is not None and self._cut is None else None
        return _Chunks(self, b, prev, self._edit_ce)

    def _resume_top(self, c: int, ds: int) -> bool:
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

    def _plain_finish(
        self,
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

    def _reuse_plain(self, watch: _Sync, b: Builder, lim: int, chain: list[_Level]) -> bool:
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

    def _plain_diags(
        self, lex: list[Any], lim: int, chain: list[_Level], run: list[Any], b: Builder
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

    def _show_resumed(self, prog: Any, units: set[int], recovered: bool, diags: list[Any]) -> None:
        """Show a resumed plain parse's Program (its positions and definitions brought up to date on
        first use, its lists the units of its validation)."""
        self._plain_units = units
        self._plain_lazy = True
        self._program = prog
        self.block_recovery = recovered
        self.full_diags = diags
        self.stats["mode"] = "plain"
        self.stats["resumed"] = True

    def _show_lex_broken(self, e: _LexBroken, pending: tuple[int, int, int]) -> None:
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

    def _resume_cut(self, e: _LexBroken, pending: tuple[int, int, int]) -> bool:
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

    def _show_plain(self) -> None:
        """grammar.parser on the current tokens (the text has a syntax error at the top level)."""
        res = P.parse_lexed(self.locator, self.tokens, self.lex_diags)
        self._program = res.program
        self._plain_units = None
        self.block_recovery = res.block_recovery
        self.full_diags = list(res.diagnostics)
        self.stats["mode"] = "plain"
        self.stats["tokens_parsed"] = len(self.tokens)

    # -- lexing window

    def _relex(self, ds: int, de: int, delta: int) -> tuple[int, int, int, int] | None:
        """Re-lex a window around the edit and splice the tokens that changed; returns (first changed
        token, first unchanged token after them, token count delta) in the new token list, or None
        when no token changed (positions are then moved here)."""
        data = self.data
        toks = self.tokens
        n_old = len(toks)
        ds_old, de_old = ds, de - delta
        inside = self._inside_flags()
        # window start: the last anchor whose line starts at or before ds
        a_idx = None
        a_line = 0
        k0 = bisect.bisect_right(toks, ds_old, key=_start) - 1
        for idx in range(min(k0, n_old - 1), max(-1, k0 - _SCAN), -1):
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
        k1 = max(a_idx + 1, bisect.bisect_left(toks, de_old, key=_start))
        for idx in range(k1, min(n_old, k1 + _SCAN)):
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
        if self._state_toks is not None:
            tail = self._state_tail(a_idx, a_line, de_old, delta, only_lost=True)
            if tail:
                new_toks, lex_diags, b_idx, b_line_new = tail[0], tail[1], tail[2], tail[3]
        while not tail:
            win = data[a_line:b_line_new]
            if b"*/" in win and self._div_star(data, 0, a_line, toks, 0):
                raise _Fallback()
            if b"/" in win:
                if regex_before is None:
                    regex_before = self._regex_div_before(a_idx)
                if regex_before:
                    raise _Fallback()
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
                keep = [d for d in self.lex_diags if d.offset is None or d.offset < a_line]
                raise _LexBroken(toks[:a_idx] + f[2], keep + f[3], f[4])
            raise _Fallback()
        assert lex_diags is not None
        if _overlapping(new_toks) or _overlapping(toks[a_idx:b_idx]):
            raise _Fallback()  # (see _overlapping)
        nw = len(new_toks)
        old_win = toks[a_idx:b_idx]
        # common prefix (tokens before the edit, equal) and suffix (after it, equal once moved)
        pre = 0
        lim = min(nw, len(old_win))
        while pre < lim:
            x, y = new_toks[pre], old_win[pre]
            if x.start_pos >= ds or not _same(x, y, 0):
                break
            pre += 1
        suf = 0
        while not tail and suf < lim - pre:
            x, y = new_toks[nw - 1 - suf], old_win[len(old_win) - 1 - suf]
            if x.start_pos < ds + (de - ds) or not _same(x, y, delta):
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
        self._rdiv_clean = min(self._rdiv_clean, m0)
        sh = self._shadow
        if sh is None and self._ghost is not None:
            sh = self._shadow = _Shadow()
        if sh is not None:  # (records refer to lost tokens: lexed again, they take their objects back)
            sh.add(removed, ds, de_old, delta)
            sh.take_back(middle)
            if len(sh.toks) > sh.LIMIT:
                sh.toks.clear()
        self._last_splice = (m0, len(middle), removed, ds, de_old, delta, self._inside, self._levels_dq)
        toks[m0:m1_old] = middle
        self._scan_memo.spliced(toks, m0, m1_old, len(middle) - (m1_old - m0))
        ce = m0 + len(middle)
        if delta:
            for t in toks[ce:]:
                t.start_pos += delta
                t.end_pos += delta
            if self._mapped:
                for t in toks[ce:]:
                    if type(t) is MappedToken:
                        if t.concat_end_pos is not None:
                            t.concat_end_pos += delta
                        if t.name_start_pos is not None:
                            t.name_start_pos += delta
        if not self._mapped:
            self._mapped = any(type(t) is MappedToken for t in middle)
        known = None
        if tail and len(tail[0]) - len(tail[4]) >= pre:
            known = (len(tail[0]) - len(tail[4]) - pre, tail[5], tail[6])
        self._splice_inside(m0, m1_old, len(middle), known)
        # lexer warnings
        b_old_line = b_line_new - delta
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
        self.stats = {"mode": "incremental", "tokens_lexed": nw, "window": (a_line, b_line_new)}
        adjacent = 0 < m0 < len(toks) and toks[m0 - 1].end_pos == toks[m0].start_pos - delta
        if not middle and m1_old == m0 and self._broken is None and not adjacent and not self._recovered():
            # only blanks or comments changed: move what follows (not between two tokens that
            # touched: a node of length 0 there may belong to either; their statement is reparsed)
            self.stats["mode"] = "shift"
            self.stats["tokens_parsed"] = 0
            g = self._ghost
            if g is not None:
                if ds < g.start.start_pos:
                    g.delta += delta
                else:
                    self._ghost = None
            # nodes start and end at tokens: the edit is taken as made just before the first token
            # after it (it may also have replaced characters of a token by the same ones, a quote by
            # a quote); a node of length 0 at the end of the token before stays where it is
            if m0 < len(toks) and (m0 == 0 or toks[m0 - 1].end_pos <= toks[m0].start_pos - delta):
                g0 = toks[m0].start_pos - delta
                self._move_all(g0, g0, delta)
            else:
                self._move_all(ds, de - delta, delta)
            self._finish([], [])
            return None
        return m0, ce, dT, m1_old

    def _recovered(self) -> bool:
        """Did the parse recover from a syntax error?  Where it resumes depends on line breaks and
        first columns (grammar.parser.next_resume), so blanks changed then are not just moved."""
        return any(d.code == "SYNTAX_ERROR" for d in self.full_diags)

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
        st, flags, sh = self._state_toks, self._state_inside, self._shadow
        if (
            st is None
            or flags is None
            or sh is None
            or self._state_lexw
            or len(flags) != len(st)
            or len(self._state_nesting) != len(st)
        ):
            return None
        data = self.data
        toks = self.tokens
        lim = max(de_old, self._broken_de)  # (previous text's coordinates, as the state's tokens)
        have = sh.toks

        def placed(x: Any) -> bool:
            """Is x's position the current one (a token of the list or of the shadow)?  (The
            state's tokens lost inside an edit keep an old one.)"""
            return have.get(x.start_pos) is x or self._index(x) >= 0

        # the state's tokens from the first one that is placed at or after lim on lie in text that
        # no edit since the state touched: all of them are placed
        ns = len(st)
        j0 = bisect.bisect_left(st, lim, key=_start)
        stop = min(ns, j0 + 4 * _SCAN)
        while j0 < stop and not (st[j0].start_pos >= lim and placed(st[j0])):
            j0 += 1
        if j0 >= stop:
            return None
        for j in range(j0 + 1, min(ns, j0 + _SCAN)):
            t = st[j]
            if flags[j] or t.type in _NOT_ANCHOR or t.value.startswith("/"):
                continue
            p = t.start_pos + delta
            ls = data.rfind(b"\n", 0, p) + 1
            if data[ls:p].strip(_BLANK) or st[j - 1].end_pos > ls - delta or ls - delta < lim:
                continue
            break
        else:
            return None
        if only_lost and self._index(st[j]) >= 0:
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
            _shift(bt, delta)
        b_line = toks[r].start_pos + delta if r < len(toks) else len(data)
        if r < len(toks):
            b_line = data.rfind(b"\n", 0, b_line) + 1
        return (new_toks + back, lex_diags, r, b_line, back, flags[j:e], self._state_nesting[j:e])

    def _inside_flags(self) -> list[Any]:
        """For each token: does it lie inside a string or heredoc text (no lexer anchor there)?
        (``self._levels_dq[k]``: the string nesting after token k, kept up to date by _splice_inside.)"""
        if self._inside is None:
            self._inside, self._levels_dq = _dq_flags(self.tokens, 0, len(self.tokens), 0)
        return self._inside

    def _splice_inside(self, m0: int, m1_old: int, m_new: int, known: tuple[Any, ...] | None = None) -> None:
        """Flags of the spliced tokens, then of the ones after them until the nesting is the old one.
        known: (k, flags, nesting) of the spliced tokens from the k-th on (the state's, _state_tail)."""
        if self._inside is None:
            return
        toks = self.tokens
        n = len(toks)
        old_f, old_lv = self._inside, self._levels_dq
        lv0 = old_lv[m0 - 1] if m0 else 0
        k = m0 + m_new
        if known is not None and known[0] > 0:
            f, lv = _dq_flags(toks, m0, m0 + known[0], lv0)
            if (lv[-1] if lv else lv0) != 0:
                f, lv = _dq_flags(toks, m0, k, lv0)  # (a nesting that does not meet: computed)
            else:
                f.extend(known[1])
                lv.extend(known[2])
        else:
            f, lv = _dq_flags(toks, m0, k, lv0)
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
        self._inside = old_f[:m0] + f + old_f[j:]
        self._levels_dq = old_lv[:m0] + lv + old_lv[j:]

    @staticmethod
    def _div_star(data: bytes, a: int, b: int, toks: list[Any], lo: int) -> bool:
        """Is a `/*` in data[a:b] lexed as a division in toks (sorted by position from lo)?  The lexer
        makes `/*` a comment only when a `*/` follows somewhere: a `*/` added later in the text turns
        such a division into a comment, while a `/*` inside a string (a path with a glob) stays."""
        i = data.find(b"/*", a, b)
        while i != -1:
            k = bisect.bisect_left(toks, i, lo, key=_start)
            # (around a heredoc the tokens are not in text order: look at the neighbours too)
            if any(t.start_pos == i and t.type == "DIV" for t in toks[max(lo, k - 8) : k + 8]):
                return True
            i = data.find(b"/*", i + 2, b)
        return False

    def _regex_div_before(self, k: int) -> bool:
        """_regex_div over tokens[:k], scanning only what was not scanned clean before (a splice
        makes the tokens from its first changed one unscanned again): not O(file) per keystroke."""
        k0 = self._rdiv_clean
        if k0 >= k:
            return False
        if self._regex_div(self.tokens, k0, k):
            return True
        self._rdiv_clean = k
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

    def _lex_window(self, a: int, b: int) -> tuple[list[Any] | None, list[Any] | None]:
        """Tokens + warnings of data[a:b] at their global positions, or (None, None) on a hard error."""
        window = self.data[a:b].decode("utf-8", "surrogateescape")
        lx = Lexer(window, epp=False, tasks=self.config.tasks)
        toks = lx.tokens()
        if a and toks and toks[0].type in _CONTEXT_FIRST:
            raise _Fallback()  # (lexed without the token before it, which decides its type)
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
        toks = self.tokens
        data = self.data
        for k in range(idx, min(len(toks), idx + _SCAN)):
            if inside[k] or toks[k].start_pos < de_old:
                continue
            ls = self._anchor_line(k, data, delta, False)
            if ls is not None and ls - delta > de_old:
                return k, ls
        return None

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
                    new_ghost.diags = [
                        # (an error at the list's `}` ends its last statement: the ghost's too)
                        d
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
        kept_diags = [d for d in self.base_diags if gone(d) and in_jumped(d.offset + delta)]
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
            for d in ghost.diags:
                if d.offset + gd >= at:
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
        return cls(
            strict=cfg.strict,
            file=cfg.file or None,
            modulepath=cfg.modulepath,
            manifest=cfg.manifest,
            level=getattr(cfg, "level", None),
        )

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


class _UnitValidation:
    """One validation of a Program by units (IncrementalParser._validate_units).  (A class, not a
    closure that calls itself: that is a reference cycle holding the old cache, freed only by the
    cyclic GC, whose full passes pause a keystroke for 100-250 ms.)"""

    def __init__(
        self, parser: IncrementalParser, units: set[int], old: dict[int, Any], base: dict[int, Any] | None
    ) -> None:
        self.parser = parser
        self.units = units
        self.old = old
        self.base = base
        self.cache: dict[int, tuple[Any, ...]] = {}

    def unit(self, node: Any, path: list[Any]) -> tuple[Any, ...]:
        """(logged, diagnostics, abort) of a unit and everything below it."""
        pos = self.parser.pos
        hit = self.old.get(id(node))
        base = self.base
        if base is not None and (hit is None or hit[0] is not node):
            hit = base.get(id(node))
            if hit is not None and hit[0] is node and hit[1] != node.offset + _mark(pos, node):
                hit = None  # (moved: its diagnostics are the state's, not to be moved here)
        if hit is not None and hit[0] is node:
            e = pos.pending.get(id(node))
            now = node.offset + (e[1] if e is not None else 0)
            dlt = now - hit[1]
            if dlt:
                for d in hit[2] + hit[3] + ([hit[4]] if hit[4] is not None else []):
                    if d.offset is not None:
                        d.offset += dlt
                hit = (node, now, hit[2], hit[3], hit[4])
            self.cache[id(node)] = hit
            return hit[2], hit[3], hit[4]
        self.parser.stats["statements_validated"] += 1
        pos.flush(node, self.units)
        logged, diags, abort, stopped = self.parser._checker().validate_part(node, path, self.units)
        logged, diags = list(logged), list[Any](diags)
        abort = self._below(stopped, logged, diags, abort)
        self.cache[id(node)] = (node, node.offset, logged, diags, abort)
        return logged, diags, abort

    def _below(self, stopped: list[Any], logged: list[Any], diags: list[Any], abort: Any) -> Any:
        """Adds the units below (where the walk stopped) to logged and diags; returns the first abort."""
        for child, cpath in stopped:
            cl, cd, ca = self.unit(child, cpath)
            logged.extend(cl)
            diags.extend(cd)
            if ca is not None and (abort is None or ca.offset < abort.offset):
                abort = ca
        return abort

    def run(self, prog: Any) -> tuple[list[Any], dict[int, Any]]:
        units = self.units
        self.parser.pos.flush(prog.body, units)
        ck = self.parser._checker()
        logged, diags, abort, stopped = ck.validate_part(prog, [], units)
        logged, diags = list(logged), list[Any](diags)
        ck.diagnostics = []
        ck.check_top_construct_in_module(prog)
        diags.extend(ck.diagnostics)
        abort = self._below(stopped, logged, diags, abort)
        cache = self.cache
        if abort is not None:  # validation stops there (as validate() does)
            return [d for d in logged if d.offset is None or d.offset < abort.offset] + [abort], cache
        return logged + diags, cache


def _dq_flags(toks: list[Any], i: int, n: int, level: int) -> tuple[list[Any], list[Any]]:
    """Inside-string flags of toks[i:n] and the nesting after each, from nesting `level` before."""
    flags = []
    lvs = []
    prev = toks[i - 1].type if i else None
    for k in range(i, n):
        ty = toks[k].type
        if ty == "DQPRE":
            level += 1
        flags.append(level > 0 or prev == "HEREDOC")
        if ty == "DQPOST" and level:
            level -= 1
        lvs.append(level)
        prev = ty
    return flags, lvs


def gone_tok(tok: Any, a: int, b: int) -> bool:
    return bool(a <= tok.start_pos < b)


def _reuse_calls(out: list[Any], raw: list[Any], old_out: list[Any]) -> list[Any]:
    """The calls the transform made again, equal to ones it made before, are the old objects (their
    validation stays cached)."""
    call = A.CallNamedFunctionExpression
    raw_ids = {id(x) for x in raw}
    old = {id(x.functor_expr): x for x in old_out if type(x) is call and id(x) not in raw_ids}
    if not old:
        return out
    res = []
    for x in out:
        if type(x) is call and id(x) not in raw_ids:
            o = old.get(id(x.functor_expr))
            if (
                o is not None
                and o.offset == x.offset
                and o.length == x.length
                and len(o.arguments) == len(x.arguments)
                and all(p is q for p, q in zip(o.arguments, x.arguments))
            ):
                x = o
        res.append(x)
    return res


def _out_len(raw: list[Any]) -> int:
    """How many statements Puppet's call transform makes of a raw list (without building them)."""
    from puppet_xpp.grammar.build import STATEMENT_CALLS

    n = 0
    prev = None
    for expr in raw:
        if isinstance(prev, A.QualifiedName) and prev.value in STATEMENT_CALLS:
            prev = None  # merged into a call
            continue
        if isinstance(expr, Node):
            n += 1
            prev = expr
        else:
            n += len(expr)
            prev = expr[-1] if len(expr) else None
    return n


def _overlapping(toks: list[Any]) -> bool:
    """Do two of these tokens overlap?  A heredoc's text tokens follow its tag in the list although
    the rest of the tag's line comes first in the text; a string opened on that line after the tag
    runs across the heredoc's text, over its tokens.  Windows, anchors and the splice all assume
    tokens that do not overlap: such a text is parsed in full."""
    if not any(t.type == "HEREDOC" for t in toks):
        return False
    end = -1
    for a, b in sorted((t.start_pos, t.end_pos) for t in toks):
        if a < end:
            return True
        end = max(end, b)
    return False


def _same(x: Any, y: Any, delta: int) -> bool:
    """Are two tokens equal, y moved by delta?"""
    if (
        x.type != y.type
        or x.value != y.value
        or x.start_pos != y.start_pos + delta
        or x.end_pos != y.end_pos + delta
    ):
        return False
    if type(x) is not MappedToken and type(y) is not MappedToken:
        return True
    return _opt(x, "concat_end_pos") == _opt(y, "concat_end_pos", delta) and _opt(
        x, "name_start_pos"
    ) == _opt(y, "name_start_pos", delta)


def _opt(t: Any, name: str, delta: int = 0) -> int | None:
    v = getattr(t, name, None)
    return None if v is None else int(v) + delta
