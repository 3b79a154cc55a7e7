"""``-`` as a PATH: a manifest read from standard input, standing for the file ``--stdin-filename``
names (editors and pre-commit style tools pipe the buffer; the location rules -- the module the file is
in, a plan, the environment, lint's layout check -- and the diagnostics' file name are that path's).

The bytes go through the one reading rule's parts (:mod:`xpp.sources`): the size limit in force
(``max_bytes``) and the decoding with Puppet's invalid-UTF-8 error (``decode``); a stream over the limit
is refused with the same ``UNREADABLE_FILE`` diagnostic as a file over it.
"""

from __future__ import annotations

import sys
from typing import BinaryIO

from puppet_xpp.grammar.issues import Diagnostic
from puppet_xpp.xpp.sources import Source, decode, max_bytes, shown

__all__ = ["STDIN", "STDIN_DISPLAY", "read_stdin"]

STDIN = "-"
STDIN_DISPLAY = "<stdin>"  # the name when no --stdin-filename is given


def read_stdin(display: str, stream: BinaryIO | None = None, limit: int | None = None) -> Source:
    """Standard input (or ``stream``) as a source named ``display``; never raises for the stream's own
    problems (they become the source's one diagnostic)."""
    stream = sys.stdin.buffer if stream is None else stream
    name = shown(display)
    limit = max_bytes(limit)
    try:
        data = stream.read(limit + 1)
    except OSError as e:
        reason = e.strerror or str(e)
        return Source(
            None, Diagnostic.make("UNREADABLE_FILE", None, 0, {"file": name, "reason": reason}, file=name)
        )
    if len(data) > limit:
        reason = f"larger than the source size limit ({limit} bytes): not read"
        return Source(
            None, Diagnostic.make("UNREADABLE_FILE", None, 0, {"file": name, "reason": reason}, file=name)
        )
    return decode(data, name)
