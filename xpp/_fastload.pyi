"""Type stub of the optional C reader xpp/_fastload.c (configured by xpp/pcore/c.py)."""

from collections.abc import Callable
from typing import Any

def configure(
    classes: tuple[tuple[Any, ...], ...],
    by_name: dict[str, int],
    declined: object,
    regexp: type,
    ptype: type,
    pobject: type,
    object_params: Callable[[Any], Any],
    finish_pobject: Callable[..., None],
    line_index: Callable[[str, str], list[int]],
    /,
) -> None: ...
def load(data: object, budget: int = -1, /) -> Any: ...
def check(pcore_name: str, index: int, value: object, /) -> bool: ...
