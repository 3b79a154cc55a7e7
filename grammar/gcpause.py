"""The cyclic garbage collector held off while a text is lexed, parsed and validated.

A parse makes a few hundred thousand objects per megabyte (tokens, nodes, lists) and frees almost none
of them until it is done: every collection the allocations trigger on the way is wasted, and each full
one traverses everything made so far (a 5 MB one-line list: about a third of the parse's time).  Nothing
in a parse depends on the collector (the objects it drops are freed by reference counting), so the
automatic collections are paused for its duration (:func:`paused`).  When the collector comes back after
a big one, what exists is frozen first (``gc.freeze``, O(1)): else the next allocation would start
collections that traverse everything the parse made, up to three times over as it ages through the
generations (0.5-1 s after a 5 MB parse), to find nothing -- a parse and a validation make no reference
cycles (tests/test_huge_input.py), so reference counting frees all of it when it is dropped.  The language
server's pacing of full collections (it unfreezes and collects when idle) is
:class:`server.analysis.document.GcPacer`.
"""

from __future__ import annotations

import gc
import threading

__all__ = ["paused", "GC_THRESHOLD"]

# The collector's thresholds for a batch run (``--compile``): parsing allocates many objects that are
# freed by reference counting, and the default thresholds make the collector run thousands of times over
# the parser tables (and, after fork, touch their pages: copy-on-write).  What exists when the workers
# start is frozen and the collector runs less often (xpp.compile.work.run_jobs; before that, the
# compiling process's imports, plan and report: server.cli.compile).
GC_THRESHOLD = (50_000, 20, 20)

# allocations during the pause above which what exists is frozen when the collector comes back (a
# parse of about 100 KB; below it, the collections the allocations start are cheap)
FREEZE_ABOVE = 200_000

_lock = threading.Lock()
_holders = 0  # threads inside paused() (the collector is resumed when the last one leaves)
_resume = False  # whether the collector was enabled when the first one came in
_may_freeze = True  # whether every block since then allows the freeze


class paused:
    """Automatic cyclic collections off for the block (re-entrant, and shared by threads: the collector
    comes back, if it was on, when the last block ends).  ``freeze=False`` for work that leaves cyclic
    garbage (lint's doubly linked tokens): frozen, it would never be collected; the collector then finds
    it in one pass over what the block made.  (A class rather than a generator-based context manager:
    entered several times for every file a compile or validation reads.)"""

    __slots__ = ("freeze",)

    def __init__(self, freeze: bool = True) -> None:
        self.freeze = freeze

    def __enter__(self) -> None:
        global _holders, _resume, _may_freeze
        with _lock:
            if _holders == 0:
                _resume = gc.isenabled()
                _may_freeze = True
                gc.disable()
            _holders += 1
            _may_freeze = _may_freeze and self.freeze

    def __exit__(self, *exc: object) -> None:
        global _holders
        with _lock:
            _holders -= 1
            if _holders == 0 and _resume:
                if _may_freeze and gc.get_count()[0] > FREEZE_ABOVE:
                    gc.freeze()
                gc.enable()
