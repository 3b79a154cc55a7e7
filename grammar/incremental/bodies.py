"""Bodies a plain parse can take whole from the last keystroke's (grammar.incremental.broken).

While the text is broken, every keystroke's plain parse runs from the last boundary before the change
to the first configuration it shares with the last keystroke's run, which may be far: a statement
typed at the top level before a definition, with a bracket left open, swallows the definition
(`notice('x', [1, {` then `define apache::vhost(...) { ... }`), and each keystroke parsed and
validated its whole body again.

A `{ }` body after the change is parsed from the same tokens as in the last keystroke's run; when the
run shifts its `{` in the same LR state, with the same enclosing class names, it would do exactly what
that run did until the `}`.  So the run pushes that run's statement list instead (the statements keep
their identity, and so their validation) and goes on at the `}` (the Driver's "open" event, as
grammar.incremental.state.Recorder does for the incremental state's bodies), with the diagnostics that run
made inside the body.  Each run records its bodies (event "list") for the next keystroke's; records
live one keystroke, so every record's nodes are in the coordinates of the text before this edit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from puppet_xpp.grammar import parser

if TYPE_CHECKING:
    from puppet_xpp.grammar.incremental.reparser import IncrementalParser


class _Body:
    """A `{ }` body a run parsed (or took whole): what the next keystroke's run needs to take it."""

    __slots__ = ("opener", "state", "names", "out", "closer", "diags", "keys", "units")

    def __init__(
        self,
        opener: Any,
        state: int,
        names: list[str],
        out: list[Any],
        closer: Any,
        diags: list[Any],
        keys: dict[int, Any],
        units: set[int],
    ) -> None:
        self.opener = opener  # the `{` token
        self.state = state  # the LR state after it
        self.names = names  # the enclosing class names there
        self.out = out  # the statement list (after the call transform)
        self.closer = closer  # the `}` token
        self.diags = diags  # the diagnostics made from the `{` to the end of the list
        self.keys = keys  # their sort keys (Builder.diagnostic_order)
        self.units = units  # ids of the statements of every list made inside it (validation units)


class Bodies:
    """The Driver watch of a plain run's bodies (events "open" and "list"; any other event: False).
    ``last``: the last keystroke's run's Bodies (None: record only); ``unchanged``: the first token
    after the ones this edit changed; ``delta``: bytes the edit added; ``n``: the run's token count."""

    def __init__(
        self, owner: IncrementalParser, builder: Any, last: Bodies | None, unchanged: int, delta: int, n: int
    ) -> None:
        self.owner = owner  # (tokens, positions, token index)
        self.builder = builder
        self.last = last
        self.unchanged = unchanged
        self.delta = delta
        self.n = n
        self.made: dict[int, _Body] = {}  # id(opener) -> the body this run made or took
        self._open: dict[int, tuple[int, int]] = {}  # id(`{`) -> (diagnostics, lists) when shifted
        self.jumped: list[Any] = []  # the statements of the bodies taken whole
        self.units: set[int] = set()  # the validation units inside them

    def __call__(self, event: str, i: int, stack: list[Any], values: list[Any]) -> Any:
        if event == "open":
            return self.open(i, stack, values)
        if event == "list":
            self.done(i, stack, values)
        return False

    def open(self, i: int, stack: list[Any], values: list[Any]) -> int | None:
        """A `{` was shifted (tokens[i - 1]): take the last run's body whole, or start recording."""
        tok = values[-1]
        b = self.builder
        last = self.last
        if last is not None and i - 1 >= self.unchanged:
            rec = last.made.get(id(tok))
            if rec is not None and rec.opener is tok and rec.state == stack[-1]:
                k = self._take(rec, i, stack, values)
                if k is not None:
                    return k
        if not b.had_errors:  # (a body is recorded when no syntax error is met inside it)
            self._open[id(tok)] = (len(b.diagnostics), len(b.lists))
        return None

    def _take(self, rec: _Body, i: int, stack: list[Any], values: list[Any]) -> int | None:
        p = self.owner
        t = p.tables
        k = p.index(rec.closer)
        g = t.gotos[stack[-1]].get("statements")
        if k <= i or k >= self.n or g is None:
            return None
        if parser.open_class_names(t, stack, values) != rec.names:
            return None
        d = self.delta
        if d:
            pos = p.pos
            for x in rec.out:  # (the builder reads where the statements begin and end)
                pos.mark(x, d)
                pos.push(x)
            for x in rec.diags:
                if x.offset is not None:
                    x.offset += d
            rec.keys = {j: (key[0] + d, key[1]) for j, key in rec.keys.items()}
        b = self.builder
        b.diagnostics.extend(rec.diags)
        b.order.update(rec.keys)
        stack.append(g)
        values.append(rec.out)
        self.made[id(rec.opener)] = rec
        self.jumped.extend(rec.out)
        self.units |= rec.units
        return k

    def undo(self) -> None:
        """The run's Program is not used: the last keystroke's is, moved by the edit (with the
        statements taken whole, which go back to its coordinates); its diagnostics before the point
        where this run met it are this run's (those taken whole are moved already).  No record is
        left for the next keystroke."""
        d = self.delta
        if d:
            pos = self.owner.pos
            for x in self.jumped:
                pos.unpush(x, d)
        self.made = {}
        self.jumped = []

    def done(self, i: int, stack: list[Any], values: list[Any]) -> None:
        """A statement list is complete (``values[-1]``): record it when it is a body's."""
        if len(stack) < 3:
            return
        opener = values[-2]
        if getattr(opener, "type", None) != "LBRACE":
            return
        at = self._open.pop(id(opener), None)
        p = self.owner
        toks = p.tokens
        closer = toks[i] if i < self.n else None
        b = self.builder
        if at is None or closer is None or closer.type != "RBRACE" or b.had_errors:
            return
        d0, l0 = at
        diags = b.diagnostics[d0:]
        order = b.order
        keys = {id(x): order[id(x)] for x in diags if id(x) in order}
        out = values[-1]
        # the nodes without a position inside take theirs now (grammar.parser.fix_positions; the
        # Program that takes the body whole skips it): not a body nested too deep to tell
        lim = parser.MAX_DEPTH - len(stack)
        if any(x.offset is None or parser.fix_positions(x, limit=lim) is not None for x in out):
            return
        units = {id(x) for lst in b.lists[l0:] for x in lst}
        names = parser.open_class_names(p.tables, stack[:-1], values[:-1])
        self.made[id(opener)] = _Body(opener, stack[-2], names, out, closer, diags, keys, units)
