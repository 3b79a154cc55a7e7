"""The statements after the first top-level error of a break, taken from the incremental state
(grammar.incremental.broken): the first keystroke that breaks a large body no longer parses and
validates the rest of the file again.

An open quote typed mid-body makes recovery close the body early; grammar.parser.recover_top then
resumes at a statement start of that body and parses every statement after it, to the body's `}`, as
top-level statements.  Those tokens did not change since the incremental state, which parsed them as
the same statements of the body's list (Level): a statement sequence parses the same in a body and at
the top level (the same LR states after each statement start, the same reductions at the same
lookahead) unless a definition among them takes the enclosing class's name.  So the run that recovery
starts at a boundary of that list (``Level.bounds``) is *seeded*: the driver starts at the boundary
before the list's last statement with the LR configuration a top-level run has there (``[start,
stmts]`` holding the state's raw statements from the resume point), parses that last statement and
meets the `}` as the run would have, and recover_top goes on from there.  (On bench_completion's
292 KB class: ~14,600 tokens and ~1,700 statements to parse and validate at the first quote of a
region, ~40 ms, against the ~700 tokens of the break itself.)

The statements seeded are the state's own objects, *lent* to the Program shown: the state is kept in
the coordinates of the text it parsed, so they are marked by the bytes added before them since then
(grammar.incremental.state.Positions) while they are lent, and the marks are taken back when the next
update begins (:meth:`Lent.take_back`), before anything reads the state again.  Their validation is
the state's cache, moved (copied, not changed: grammar.incremental.validate), as a statement's checks
look no further up than its block (no definition among them; not in a tasks file).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from puppet_xpp.grammar import ast, parser
from puppet_xpp.grammar.build import STATEMENT_CALLS
from puppet_xpp.grammar.incremental.state import Level, nodes_of

if TYPE_CHECKING:
    from puppet_xpp.grammar.incremental.reparser import IncrementalParser

# keywords of definitions (a class, define or plan takes the enclosing class's name; a function or
# type alias nested in a class is an error the top level does not have); `class` and `type` only
# when a name follows (`class { 'x': }` declares a class, `type => x` is an attribute)
_DEFINING = frozenset(("DEFINE", "NODE", "FUNCTION", "PLAN", "APPLY"))
_NAMED = frozenset(("CLASS", "TYPE"))
_NAMES = frozenset(("NAME", "CLASSREF", "WORD"))


class Lent:
    """State statements lent to the Program shown, marked by ``shift`` bytes (see the module
    docstring)."""

    __slots__ = ("roots", "shift")

    def __init__(self, roots: list[Any], shift: int) -> None:
        self.roots = roots
        self.shift = shift

    def take_back(self, owner: IncrementalParser) -> None:
        """The state's coordinates again (the Program that held them is not shown any more)."""
        pos = owner.pos
        d = self.shift
        if not d:
            return
        for x in self.roots:
            pos.mark(x, -d)
            if not pos.pending[id(x)][1]:  # (back where the state has it: no mark left)
                del pos.pending[id(x)]
        self.shift = 0  # (once)


class Tail:
    """Seeds recover_top's runs that resume at a boundary of a state list (see the module
    docstring).  ``since``: (the first token unchanged since the state, bytes added before it)."""

    # tokens a seed spares at least: fewer are parsed again (lent statements make the next keystroke
    # seed again instead of taking the last plain parse's runs, which costs about as much)
    MIN_TOKENS = 256

    def __init__(
        self, owner: IncrementalParser, driver: Any, watch: Any, since: tuple[int, int], n: int
    ) -> None:
        self.owner = owner
        self.driver = driver
        self.watch = watch
        self.ce, self.shift = since
        self.n = n  # the run's token count
        self.lent: Lent | None = None
        self.tokens = 0  # tokens not parsed again
        self.statements = 0  # statements taken
        self.index: dict[int, tuple[Level, int]] | None = None  # (boundary)
        self.ran = False  # a recovery run was run here (run)

    def boundary(self, tok: Any) -> tuple[Level, int] | None:
        """(the state's `{ }` list, j) when tok is the boundary after its statement j, j before the
        list's last two (an index of every list's boundaries, made at the first question)."""
        index = self.index
        if index is None:
            p = self.owner
            assert p.levels is not None
            index = self.index = {}
            for lvl in p.levels.values():
                if lvl.opener is None or lvl.closer is None or lvl.out is None or len(lvl.out) < 2:
                    continue
                bounds = lvl.bounds
                if len(bounds) != len(lvl.raw):
                    continue
                for j in range(len(bounds) - 2):
                    b = bounds[j]
                    if b is not None:
                        index[id(b)] = (lvl, j)
        return index.get(id(tok))

    def clean(self, k: int, i_last: int, lvl: Level) -> bool:
        """No definition among tokens [k, i_last), no parse diagnostic of the state there (the
        statements taken bring none), no call transform of a list inside with diagnostics."""
        p = self.owner
        assert p.levels is not None
        toks = p.tokens
        for i in range(k, i_last):
            ty = toks[i].type
            if ty in _DEFINING or (ty in _NAMED and i + 1 < i_last and toks[i + 1].type in _NAMES):
                return False
        lo, hi = toks[k].start_pos, toks[i_last].start_pos
        lo_old, hi_old = lo - self.shift, hi - self.shift
        for d in p.base_diags:
            if d.offset is not None and lo_old <= d.offset < hi_old:
                return False
        for v in p.levels.values():
            if v is not lvl and v.xdiags and v.opener is not None and lo <= v.opener.start_pos < hi:
                return False
        return True

    def run_seeded(
        self, drv: Any, start: int, end: int, stack: Any = None, values: Any = None, watch: Any = None
    ) -> tuple[Any, int | None]:
        """``drv.run`` over tokens [start, end) with ``watch`` (``stack``/``values``: the configuration
        it resumes, as Driver.run takes them), stopped where it may be seeded (see Seeding), seeded and
        gone on there (as often as it stops so): what the run returns at last."""
        p = self.owner
        seeding = Seeding(self, watch)
        value, err = drv.run(p.tokens, start, end, len(p.data), stack, values, seeding)
        while value is parser.STOPPED and seeding.at is not None:
            try:
                value, err = self._seed(drv, seeding)
            except BaseException:
                self.give_back()
                raise
        return value, err

    def run(self, k: int, depth: int, chunks: Any) -> list[Any] | None:
        """recover_top is about to run from token k (bracket depth ``depth`` before it): the
        statements of that run and the later ones, made here, when the run may be seeded; None when
        nothing was done (recover_top runs it).  ``chunks``: what recover_top calls before each later
        run.  When k is inside a state body, the run parses from k to its first top-level statement
        boundary that is a boundary of a state list, and is seeded there (when it is not, the run and
        the recovery after it are done here all the same, as recover_top would)."""
        p = self.owner
        toks = p.tokens
        n = self.n
        if k < self.ce or k >= n or not self.may_seed() or not self.inside(k):
            return None
        drv = self.driver
        eof = len(p.data)
        self.ran = True
        value, err = self.run_seeded(drv, k, n, watch=self.watch)
        if err is None or value is parser.STOPPED:
            raise RuntimeError("a top-level run ended without the error at its list's end")
        if err <= k:
            return None  # (nothing parsed: recover_top runs it, and reports no error there)
        try:
            prog = parser.recover_top(
                drv, toks, drv.b, eof, p.data, value, err, False, (k, depth), False, chunks, self.watch
            )
        except BaseException:
            self.give_back()
            raise
        body = prog.body
        return list(body.statements) if type(body) is ast.BlockExpression else [body]

    def inside(self, k: int) -> bool:
        """Is token k inside a `{ }` body of the state whose braces are still in the token list (a
        top-level run from k, over tokens unchanged since the state, meets an error at that body's
        `}` at the latest)?"""
        p = self.owner
        assert p.levels is not None
        at = p.tokens[k].start_pos
        for lvl in p.levels.values():
            op, cl = lvl.opener, lvl.closer
            if op is None or cl is None or not (op.start_pos < at < cl.start_pos):
                continue  # (a position, to look up few: a brace replaced may have a stale one)
            if 0 <= p.index(op) < k < p.index(cl):
                return True
        return False

    def may_seed(self) -> bool:
        p = self.owner
        cfg = p.config
        return not (cfg.tasks or cfg.epp or p.ghost is not None or self.lent)

    def give_back(self) -> None:
        """The statements lent, if any, go back to the state's coordinates at once (a run failed)."""
        if self.lent is not None:
            self.lent.take_back(self.owner)
            self.lent = None

    def _seed(self, drv: Any, seeding: Seeding) -> tuple[Any, int | None]:
        """The run stopped at a boundary of a state list (token i, the lookahead after its statement
        j): the state's statements up to the list's last one are lent and pushed, and the run goes on
        at that last one."""
        p = self.owner
        assert seeding.at is not None and seeding.stack is not None and seeding.values is not None
        lvl, j, i, i_last = seeding.at
        seeding.at = None
        seed = lvl.raw[j + 1 : len(lvl.raw) - 1]
        roots = nodes_of(seed)
        pos = p.pos
        shift = self.shift
        if pos.pending:  # (the marks of the nodes around them go down to the statements of the list)
            pos.push_around(p.base.body, p.tokens[i].start_pos - shift)
        # the state's calls of `include x` kind made of these statements: their marks go down to the
        # statements (the transform makes its own call of them)
        ids = {id(x) for x in roots}
        assert lvl.out is not None
        for x in lvl.out:
            if type(x) is ast.CallNamedFunctionExpression and id(x.functor_expr) in ids:
                pos.push(x)
        for x in roots:
            pos.mark(x, shift)
        self.lent = Lent(roots, shift)
        raw = seeding.values[-1]
        # (the transform reads where such a name begins and where its argument ends)
        before = raw[-1] if raw else None
        for a, x in enumerate(seed):
            if type(x) is ast.QualifiedName and x.value in STATEMENT_CALLS:
                pos.push(x)
                if a + 1 < len(seed):
                    nxt = seed[a + 1]
                    pos.push(nxt if isinstance(nxt, ast.Node) else nxt[-1])
        if type(before) is ast.QualifiedName and before.value in STATEMENT_CALLS and seed:
            first = seed[0]
            pos.push(first if isinstance(first, ast.Node) else first[-1])
        raw.extend(seed)
        self.tokens += i_last - i
        self.statements += len(seed)
        value, err = drv.run(p.tokens, i_last, self.n, len(p.data), seeding.stack, seeding.values, seeding)
        return value, err


class Seeding:
    """The ``watch`` of a run that may be seeded: stops it at a top-level statement boundary (after
    the tokens changed since the state) that is a boundary of a state list, before that list's last
    statement, with at least Tail.MIN_TOKENS tokens to spare and nothing in between that a top-level
    parse makes otherwise (Tail.clean), and sets ``at``; every other event goes to ``watch``, the
    run's own (and so does that boundary, when the run may not be seeded there)."""

    __slots__ = ("tail", "watch", "at", "stack", "values", "off")

    def __init__(self, tail: Tail, watch: Any) -> None:
        self.tail = tail
        self.watch = watch
        self.at: tuple[Level, int, int, int] | None = None  # (list, statement, token, its last's token)
        self.stack: list[Any] | None = None
        self.values: list[Any] | None = None
        self.off = False  # (seeded once, or a boundary met that may not be seeded from: no more tries)

    def __call__(self, event: str, i: int, stack: list[Any], values: list[Any]) -> Any:
        tail = self.tail
        if event != "item" or len(stack) != 2 or self.off or i < tail.ce or i >= tail.n or tail.lent:
            return self.watch(event, i, stack, values)
        p = tail.owner
        found = tail.boundary(p.tokens[i])
        if found is None:
            return self.watch(event, i, stack, values)
        lvl, j = found
        i_last = p.index(lvl.bounds[len(lvl.bounds) - 2])  # (the first token of the list's last statement)
        if not (i < i_last < p.index(lvl.closer) < tail.n):
            return self.watch(event, i, stack, values)
        if i_last - i < Tail.MIN_TOKENS or not tail.may_seed() or not tail.clean(i, i_last, lvl):
            self.off = True
            return self.watch(event, i, stack, values)
        self.at = (lvl, j, i, i_last)
        self.stack, self.values = stack, values
        self.off = True
        return True
