"""Type stub of the optional C Pcore writer xpp/_fastwrite.c (configured by xpp/pcore/write.py)."""

from collections.abc import Callable
from typing import Any

def configure(
    infos: dict[type, tuple[Any, ...]],
    marker: Callable[[str, int, dict[Any, int]], bytes],
    declined: object,
    regexp: type,
    ptype: type,
    included: type,
    /,
) -> None: ...
def dumps(value: object, check: bool, /) -> Any: ...
