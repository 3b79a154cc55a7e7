"""What a check knows of the place it looks at: the file, the enclosing definition and whether the
code is guarded by a ``defined()`` test (then a name that does not exist is expected, not an error)."""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = ["Place"]


@dataclass(frozen=True)
class Place:
    """``path``: the file as the caller names it; ``tasks``: a Bolt plan (its functions are Bolt's,
    not the catalog's: no unknown-function finding); ``guarded``: inside the branches of a test that
    calls ``defined()``; ``definition``: the kind of the enclosing definition (class, define,
    function, plan, node, or '' at top scope); ``complete``: the world's index is complete."""

    path: str
    tasks: bool = False
    guarded: bool = False
    definition: str = ""
    complete: bool = True

    def inside(self, definition: str) -> Place:
        return replace(self, definition=definition)

    def guard(self) -> Place:
        return self if self.guarded else replace(self, guarded=True)
