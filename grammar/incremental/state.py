"""What the parts of the incremental parser (grammar.incremental) share: the records of a parse
(Level, Ghost, Recorder, Positions), the exceptions that change its path (Fallback, LexBroken,
Escalate) and the small helpers and constants on nodes and tokens.  Kept apart so that every module
of the package imports them from one place, none of them importing grammar.incremental.reparser at
run time.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable
from typing import Any

from puppet_xpp.grammar import ast, parser
from puppet_xpp.grammar.build import Builder
from puppet_xpp.grammar.lexer import MappedToken

Node = ast.Node
BlockExpression = ast.BlockExpression
Program = ast.Program
Nop = ast.Nop

DEF_TYPES = frozenset(
    (
        ast.ResourceTypeDefinition,
        ast.HostClassDefinition,
        ast.PlanDefinition,
        ast.FunctionDefinition,
        ast.NodeDefinition,
        ast.TypeAlias,
        ast.TypeDefinition,
    )
)
NOT_ANCHOR = frozenset(("LBRACE", "SELBRACE", "DIV", "REGEX", "HEREDOC", "DQPRE", "DQMID", "DQPOST"))
BLANK = b" \t\r\x0b\x0c"
# token types whose lexing depends on the token before them (`/` after a value is a division,
# `{` after `?` a selector's): a window whose first token is one of them is not lexed on its own
CONTEXT_FIRST = frozenset(("LBRACE", "SELBRACE", "DIV", "REGEX"))
_IF = ast.IfExpression
SCAN = 2000  # tokens scanned for a window anchor on each side of an edit
# a top-level syntax error this many tokens after the change makes the next edit try the plain parse
# first (the program's list would run over all of them only to meet it again)
FAR = 200


def node_end(n: Any) -> int:
    return int(n.offset + n.length)


def def_order(n: Any) -> tuple[int, int]:
    """Program.definitions' order: by end (a nested definition before the one holding it)."""
    return (int(n.offset + n.length), int(n.offset))


def definitions_in(roots: list[Any], skip: set[int] | frozenset[int] = frozenset()) -> list[Any]:
    """The definitions in these trees (not below the nodes in skip)."""
    out = []
    stack = [x for x in roots if id(x) not in skip]
    pop, push, node, defs = stack.pop, stack.append, Node, DEF_TYPES
    while stack:
        n = pop()
        if type(n) in defs:
            out.append(n)
        for f in n._child_fields:  # (inline: a definition may be anywhere in a Program of 30,000 nodes)
            v = getattr(n, f)
            if type(v) is list:
                for y in v:
                    if isinstance(y, node) and id(y) not in skip:
                        push(y)
            elif v is not None and id(v) not in skip and isinstance(v, node):
                push(v)
    return out


def patch_definitions(
    defs: list[Any], replaced: list[Any], made: list[Any], kept: set[int], dropped: list[list[Any]]
) -> list[Any]:
    """The state's definitions after a list's reparse: those in the raw statements ``replaced`` go,
    those in the ones ``made`` come; the bodies kept whole (their statements: ``kept``) keep theirs,
    unless recovery dropped the statement that held them (``dropped``: their statement lists).  Work
    in proportion to the statements reparsed, not a walk of the tree."""
    gone = {id(x) for x in definitions_in(nodes_of(replaced), kept)}
    for lst in dropped:
        gone.update(id(x) for x in definitions_in(lst))
    new = definitions_in(nodes_of(made), kept)
    if not gone and not new:
        return defs
    return [x for x in defs if id(x) not in gone] + new


def token_start(t: Any) -> int:
    return int(t.start_pos)


def bound_pos(t: Any) -> float:
    return float("inf") if t is None else float(t.start_pos)


class Fallback(Exception):
    """The incremental path cannot be used for this edit: do a full parse."""


class LexBroken(Fallback):
    """The text has a hard lexer error after the edit: the state stays as it was (the next update
    reparses from it over all edits since), and a plain parse of these tokens is shown."""

    def __init__(self, tokens: list[Any], diags: list[Any], error: Any) -> None:
        super().__init__()
        self.tokens = tokens
        self.diags = diags
        self.error = error


class Escalate(Exception):
    """The statement list cannot take this edit on its own: reparse in the enclosing list.

    ``hard``: the list's run met a syntax error it could not recover from (the top level's kind).  A
    run in any enclosing list reaches the same LR configuration at this list's boundary (the tokens
    before it are unchanged) and, never popping below this list's stack, meets the same error: each
    of them would escalate too, so the text is broken at the top level without trying them."""

    def __init__(self, hard: bool = False, synced: bool = False) -> None:
        super().__init__()
        self.hard = hard
        self.synced = synced  # the run came back to the list's boundaries (the text parses there)


class Level:
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
        # whole while its header was reparsed (see Recorder.open_body), or a list inside it
        self.stale = False


class Ghost:
    """Statements of a list that a syntax error swallowed (recovery skipped them to the list's end):
    kept aside with their diagnostics, lists and cached validation, so that the edit repairing the
    error finds them again (same tokens) instead of reparsing the rest of the list."""

    __slots__ = ("level", "raw", "bounds", "start", "diags", "levels", "vcache", "calls", "delta")

    def __init__(self, level: Level, raw: list[Any], bounds: list[Any], start: Any) -> None:
        self.level = level
        self.raw = raw  # the statements
        self.bounds = bounds  # bounds[k]: lookahead token after raw[k]
        self.start = start  # the first token of raw[0]
        self.diags: list[Any] = []  # their parse diagnostics
        self.levels: dict[int, Level] = {}  # their statement lists
        self.vcache: dict[int, tuple[Any, ...]] = {}
        # the calls the list's transform made of them (`include x`): id(functor) -> (call, its cache
        # entry); the transform makes them anew when they are restored, the validation stays
        self.calls: dict[int, tuple[Any, Any]] = {}
        self.delta = 0  # bytes added before them since they were set aside


def shift_token(t: Any, delta: int) -> None:
    t.start_pos += delta
    t.end_pos += delta
    if type(t) is MappedToken:
        if t.concat_end_pos is not None:
            t.concat_end_pos += delta
        if t.name_start_pos is not None:
            t.name_start_pos += delta


def transform(raw: list[Any], locator: Any, file: str) -> tuple[list[Any], list[Any]]:
    b = Builder(locator, file)
    out = b.statements(raw)
    return out, b.diagnostics


class Recorder:
    """The ``watch`` of grammar.parser.Driver.run: records statement lists; in a resumed run, also
    says where to stop (IncrementalParser's reparse of a statement list)."""

    def __init__(self, tokens: list[Any], n: int, locator: Any, file: str):
        self.tokens = tokens
        self.n = n
        self.locator = locator
        self.file = file
        self.levels: dict[int, Level] = {}  # id(opener) (0: the program) -> level
        self.top_done = False
        # resumed run: the list it runs in
        self.target: Level | None = None
        self.depth = 0  # stack height of that list's statements
        self.sync: dict[int, int] = {}  # id(old lookahead token) -> old statement index
        self.gsync: dict[int, int] = {}  # the same for the statements of a Ghost
        self.ce = 0  # first token after the changed ones
        self.run_bounds: list[Any] = []
        self.stop: tuple[Any, ...] | None = None  # ('sync', old index) | ('end',)
        self.old_levels: dict[int, Level] = {}  # bodies that may be kept whole (event "open")
        self.jumped: list[Level] = []
        self.jstacks: list[tuple[tuple[Any, ...], list[Any]]] = []  # the run's LR stack at each jump
        self.tables: Any = None
        self.index: Callable[[Any], int] | None = None  # IncrementalParser.index (a body kept whole)

    def open_body(self, i: int, stack: list[Any], values: list[Any]) -> Any:
        """A `{` after the changed tokens whose body is unchanged: push the old body's statements and
        go on at its `}` (same LR state after the brace, same enclosing class names)."""
        if i - 1 < self.ce or not self.old_levels:
            return None
        lv = self.old_levels.get(id(values[-1]))
        if lv is None or lv.out is None or lv.closer is None or lv.states[-1] != stack[-1]:
            return None
        t = self.tables
        if parser.open_class_names(t, stack, values) != parser.open_class_names(
            t, list[Any](lv.states), lv.values
        ):
            return None
        assert self.index is not None
        k = self.index(lv.closer)
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
            return self.open_body(i, stack, values)
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
                    raise Escalate()
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
                lvl = Level(opener, tuple[Any, ...](stack[:-1]), values[:-1], values[-1])
                self.levels[key] = lvl
            lvl.bounds.append(self.tokens[i] if i < self.n else None)
        elif lvl is not None and (event == "list" or lvl.raw is values[-1]):
            if event == "end":
                tok = self.tokens[i] if i < self.n else None
                if (tok is None) != (key == 0) or (tok is not None and tok.type != "RBRACE"):
                    del self.levels[key]  # (an LALR reduction before an error: not the list's end)
                    return False
                lvl.closer = tok
                lvl.xdiags = transform(list(values[-1]), self.locator, self.file)[1]
            else:  # "list"
                lvl.out = values[-1]
                if key == 0:
                    self.top_done = True
        return False


def roots(values: list[Any]) -> set[int]:
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


def mark_of(pos: Positions, n: Any) -> int:
    e = pos.pending.get(id(n))
    return int(e[1]) if e is not None else 0


def no_visit(n: Any) -> bool:
    return False


def remove_values(diags: list[Any], remove: list[Any]) -> list[Any]:
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


class Positions:
    """Node offsets moved lazily: ``pending[id(n)] = [n, d]`` means that every node of n's subtree is
    d bytes further than its ``offset`` says.  An edit marks the statements after it (O(statements)
    instead of O(nodes)); :meth:`flush` applies the marks (when the AST is handed out), :meth:`push`
    applies one node's mark and hands it down to its children."""

    # nodes listed in ``flat`` beyond which the lists are all dropped (they outlive replaced nodes)
    FLAT_MAX = 1_000_000

    def __init__(self) -> None:
        self.pending: dict[int, list[Any]] = {}
        self.touched: list[Any] = []  # nodes around the edits seen by move()
        self._delta = 0
        # id(n) -> (n, the nodes of n's subtree, ids of the statement lists in it): the subtrees the
        # marks landed on, listed once (flush_marked); a list is dropped when a statement list in it
        # changes (forget_list) or n is replaced (forget)
        self.flat: dict[int, tuple[Any, list[Any], list[int]]] = {}
        self.flat_by_list: dict[
            int, set[int]
        ] = {}  # id(statement list) -> ids of the flat entries holding it
        self.flat_nodes = 0

    def mark(self, n: Any, d: int) -> None:
        e = self.pending.get(id(n))
        if e is None:
            self.pending[id(n)] = [n, d]
        else:
            e[1] += d

    def now(self, n: Any) -> int:
        """Where n is, its own mark applied (the marks above it are pushed down to it: flush)."""
        e = self.pending.get(id(n))
        return int(n.offset + e[1]) if e is not None else int(n.offset)

    def push(self, n: Any) -> None:
        e = self.pending.pop(id(n), None)
        if e is not None and e[1]:
            self._move_one(n, e[1])

    def unpush(self, n: Any, d: int) -> None:
        """Undo mark(n, d) and push(n): n moves back, its children's marks lose d."""
        self._move_one(n, -d)

    def _move_one(self, n: Any, d: int) -> None:
        """n moves by d now, its children by marks (a mark that comes to 0 goes)."""
        n.offset += d
        pending = self.pending
        for c in _children(n):
            f = pending.get(id(c))
            if f is None:
                pending[id(c)] = [c, d]
            else:
                f[1] += d
                if not f[1]:
                    del pending[id(c)]

    def flush(self, root: Any, skip: set[int] | frozenset[int] = frozenset()) -> None:
        """Apply every mark in root's subtree, not below the nodes in skip other than root (the marks
        above them go down to them: where they are is now())."""
        if not self.pending:
            return
        pending = self.pending
        stack = [(root, 0)]
        pop = stack.pop
        push = stack.append
        while stack:
            n, d = pop()
            if id(n) in skip and n is not root:
                if d:
                    self.mark(n, d)
                continue
            e = pending.pop(id(n), None)
            if e is not None:
                d += e[1]
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

    def flush_marked(self) -> None:
        """Apply every mark (what :meth:`flush` of the trees holding the marked nodes does), walking
        only the marked subtrees: a mark says that every node of its node's subtree is that much
        further, so each is added to its subtree's nodes (nested marks add up).  A subtree is listed
        once and kept (``flat``): the statements after an edit are marked at each keystroke, and
        adding to a list's offsets costs a fraction of walking the tree again.  The marks of nodes no
        longer in a tree are applied too (they say where those nodes are, as before: nobody reads
        them but through their marks)."""
        pending = self.pending
        if not pending:
            return
        flat = self.flat
        for key, (n, d) in pending.items():
            if not d:
                continue
            e = flat.get(key)
            if e is None or e[0] is not n:
                e = self._list_subtree(n)
            for x in e[1]:
                x.offset += d
        pending.clear()

    def _list_subtree(self, n: Any) -> tuple[Any, list[Any], list[int]]:
        """n's subtree as :meth:`flush` walks it (a node met twice is listed twice) and the ids of the
        statement lists in it, kept in ``flat``."""
        nodes: list[Any] = []
        lists: list[int] = []
        stack = [n]
        pop, push, add = stack.pop, stack.append, nodes.append
        while stack:
            x = pop()
            add(x)
            for f in x._child_fields:
                v = getattr(x, f)
                if v is None:
                    continue
                if type(v) is list:
                    if f == "statements":
                        lists.append(id(v))
                    for y in v:
                        if isinstance(y, Node):
                            push(y)
                elif isinstance(v, Node):
                    push(v)
        if self.flat_nodes + len(nodes) > self.FLAT_MAX:
            self.flat.clear()
            self.flat_by_list.clear()
            self.flat_nodes = 0
        self.forget(n)
        e = (n, nodes, lists)
        self.flat[id(n)] = e
        self.flat_nodes += len(nodes)
        by_list = self.flat_by_list
        for lst in lists:
            by_list.setdefault(lst, set()).add(id(n))
        return e

    def forget(self, n: Any) -> None:
        """n's subtree is no longer listed (n was replaced)."""
        e = self.flat.pop(id(n), None)
        if e is None:
            return
        self.flat_nodes -= len(e[1])
        for lst in e[2]:
            held = self.flat_by_list.get(lst)
            if held is not None:
                held.discard(id(n))
                if not held:
                    del self.flat_by_list[lst]

    def forget_list(self, statements: list[Any]) -> None:
        """A statement list is about to change in place: the subtrees holding it are listed anew."""
        for key in list(self.flat_by_list.get(id(statements), ())):
            e = self.flat.get(key)
            if e is not None:
                self.forget(e[0])
        self.flat_by_list.pop(id(statements), None)

    def start_of(self, n: Any) -> int:
        """Where n's subtree starts (an operator node stands after its left operand, a parameter
        after its type): the smallest offset along the earliest children (of each field's first)."""
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
            n = self._earliest_child(n)
        return int(lo) if lo is not None else 0

    def _earliest_child(self, n: Any) -> Any:
        """The child of n that starts first (its own mark applied): the first node of each field
        (a list's are in source order), the one with the smallest offset."""
        pending = self.pending
        best = None
        best_at = 0
        for f in n._child_fields:
            v: Any = getattr(n, f)
            if type(v) is list:
                v = next((x for x in v if isinstance(x, Node)), None)
            if v is None or not isinstance(v, Node):
                continue
            child: Any = v
            e = pending.get(id(child))
            at = child.offset + (e[1] if e is not None else 0)
            if best is None or at < best_at:
                best, best_at = child, at
        return best

    def _spine(self, root: Any, a: int, b: int, visit: Any) -> None:
        """Walk the nodes that may lie around [a, b): calls visit(node, true offset) for each such
        node (after pushing its mark); marks subtrees that start at or after b (with delta, see move).
        In a list only the last element that starts before b can reach it (source order)."""
        stack = [root]
        lo_of = self.start_of
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

    def push_around(self, root: Any, b: int) -> None:
        """Apply the marks of the nodes that may lie around byte b (nothing moves: the subtrees after
        it keep theirs), so that the values a plain run resumed at b combines are where they are."""
        self._delta = 0
        self._spine(root, b, b, no_visit)

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
                if not (lo < a < hi) and else_grows(pending, n, a, b):
                    hi = max(b, a + 1)  # (the growth of its `elsif`'s span is its own)
            if o >= b:
                n.offset = o + delta  # (an operator after the edit, its left operand before it)
                if self.start_of(n) < a:  # (... around the edit: validated again)
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


def else_grows(pending: dict[int, Any], n: Any, a: int, b: int) -> bool:
    """Does the `if` ``n``'s length grow with an edit of [a, b) (old coordinates) after the start of its
    `elsif` (an IfExpression as its else part, ``n``'s own mark applied)?  Its length ends where that
    `elsif`'s does, at the `elsif` keyword plus the `elsif`'s own length -- counted from its test, so
    that end lies before the real one by the distance from the keyword to the test, and an edit after it
    (a blank line typed before the `else` of an `if`/`elsif`/`else` whose `elsif` test is long) still
    grows both."""
    d = 0
    while True:
        e = n.else_expr
        if type(e) is not _IF or e.test is None:
            return False
        m = pending.get(id(e))
        d += m[1] if m is not None else 0
        if e.offset + d >= a:  # (the edit is before it: the span of ``n`` around the edit decides)
            return False
        t = pending.get(id(e.test))
        lo = e.test.offset + d + (t[1] if t is not None else 0)
        hi = lo + e.length
        if lo < a < hi:
            return hi >= b
        n = e


def held_lists(roots: list[Any], skip: set[int] | frozenset[int] = frozenset()) -> set[int]:
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


def nodes_of(items: list[Any]) -> list[Any]:
    """The Node roots of raw statements (a statement may be a comma list of them)."""
    out = []
    for v in items:
        if isinstance(v, Node):
            out.append(v)
        else:
            out.extend(x for x in v if isinstance(x, Node))
    return out


def dq_flags(toks: list[Any], i: int, n: int, level: int) -> tuple[list[bool], list[int]]:
    """Inside-string flags of toks[i:n] and the nesting after each, from nesting `level` before."""
    flags: list[bool] = []
    lvs: list[int] = []
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


def reuse_calls(out: list[Any], raw: list[Any], old_out: list[Any]) -> list[Any]:
    """The calls the transform made again, equal to ones it made before, are the old objects (their
    validation stays cached)."""
    call = ast.CallNamedFunctionExpression
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


def out_len(raw: list[Any]) -> int:
    """How many statements Puppet's call transform makes of a raw list (without building them)."""
    from puppet_xpp.grammar.build import STATEMENT_CALLS

    n = 0
    prev = None
    for expr in raw:
        if isinstance(prev, ast.QualifiedName) and prev.value in STATEMENT_CALLS:
            prev = None  # merged into a call
            continue
        if isinstance(expr, Node):
            n += 1
            prev = expr
        else:
            n += len(expr)
            prev = expr[-1] if len(expr) else None
    return n


def overlapping(toks: list[Any]) -> bool:
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


def same_token(x: Any, y: Any, delta: int) -> bool:
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
