"""Type stub of the optional C driver loop grammar/_accel.c (built by setup.py, used by grammar/parser.py)."""

from typing import Any

ACCEPTED: int
SYNTAX_ERROR: int
TOO_DEEP: int

class Machine:
    def __init__(
        self,
        *,
        nstates: int,
        nterms: int,
        nnonterms: int,
        actions: list[int | None],
        gotos: list[int | None],
        default_reduce: list[int | None],
        only_reduce: list[int | None],
        sizes: list[int],
        origins: list[int],
        unit: list[int],
        watched: list[int],
        lbrace: int,
        end_state: int,
        term_ids: dict[str, int],
        callbacks: tuple[Any, ...],
    ) -> None: ...
    def run(
        self,
        builder: object,
        tokens: list[Any],
        i: int,
        n: int,
        end_token: object,
        stack: list[int],
        values: list[Any],
        cut: bool,
        release: bool,
        max_stack: int,
        watch: Any = None,
        floor: int = 0,
        /,
    ) -> tuple[int, Any, int]: ...

def configure_lexer(token: type, types: tuple[str, ...], ops: dict[str, str], /) -> None: ...
def scan(
    text: str,
    pos: int,
    toks: list[Any],
    values: dict[str, str],
    keywords: dict[str, str],
    after: str | None,
    /,
) -> int: ...
def fix_positions(
    root: object, node: type, limit: int, skip: set[int] | frozenset[int] | None = None, /
) -> Any: ...

WALK_STOP: int
FIX_SKIP: int
