"""Type stub of the optional C Pcore writer xpp/_fastwrite.c (configured by xpp/pcore/write.py)."""

from typing import Any

def configure(
    classes: tuple[tuple[Any, ...], ...],
    declined: object,
    regexp: type,
    ptype: type,
    included: type,
    /,
) -> None: ...
def dumps(value: object, check: bool, /) -> Any: ...
