"""Validation by units for the incremental parser (grammar.incremental): UnitValidation validates a
Program statement by statement, reusing the cached diagnostics of the units an edit did not touch.
Separate from parsing: the parser only hands it the positions, the units, the caches and a way to
make the validator.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from puppet_xpp.grammar.incremental.state import Positions, mark_of

if TYPE_CHECKING:
    from puppet_xpp.grammar.validator import Checker


class UnitValidation:
    """One validation of a Program by units.  ``pos``: the parser's node positions; ``stats``: where
    the count of units validated goes; ``make_checker``: a validator for one unit (or the program).
    (A class, not a closure that calls itself: that is a reference cycle holding the old cache,
    freed only by the cyclic GC, whose full passes pause a keystroke for 100-250 ms.)"""

    def __init__(
        self,
        pos: Positions,
        stats: dict[str, Any],
        make_checker: Callable[[], Checker],
        units: set[int],
        old: dict[int, Any],
        base: dict[int, Any] | None,
    ) -> None:
        self.pos = pos
        self.stats = stats
        self.make_checker = make_checker
        self.units = units
        self.old = old
        self.base = base
        self.cache: dict[int, tuple[Any, ...]] = {}

    def unit(self, node: Any, path: list[Any]) -> tuple[Any, ...]:
        """(logged, diagnostics, abort) of a unit and everything below it."""
        pos = self.pos
        hit = self.old.get(id(node))
        base = self.base
        if base is not None and (hit is None or hit[0] is not node):
            hit = base.get(id(node))
            if hit is not None and hit[0] is node:
                now = node.offset + mark_of(pos, node)
                if hit[1] != now:  # (moved: the state's diagnostics stay; copies move here)
                    hit = moved(hit, now)
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
        self.stats["statements_validated"] += 1
        pos.flush(node, self.units)
        logged, diags, abort, stopped = self.make_checker().validate_part(node, path, self.units)
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
        self.pos.flush(prog.body, units)
        ck = self.make_checker()
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


def moved(hit: tuple[Any, ...], now: int) -> tuple[Any, ...]:
    """A cache entry of the incremental state's (node, offset, logged, diagnostics, abort) for its
    node at ``now``: copies of its diagnostics, moved (the state's own stay where the state has them,
    for the text it parsed).  A plain parse shows the state's statements after a change when
    grammar.incremental.tail lends them."""
    d = now - hit[1]

    def at(x: Any) -> Any:
        y = copy.copy(x)
        if y.offset is not None:
            y.offset += d
        return y

    return (
        hit[0],
        now,
        [at(x) for x in hit[2]],
        [at(x) for x in hit[3]],
        None if hit[4] is None else at(hit[4]),
    )
