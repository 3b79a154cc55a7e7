"""XPP (PRFC-23): Pcore serialization of Puppet parse results, the envelope, and the `.xpp` tree layout.

The package's three exception names come from ``xpp.pcore`` when first asked for: importing the package
(as ``xpp.environment`` and ``xpp.sources`` do for the language server's start) does not load the Pcore
reader and writer (~4 ms), which only a compile, a save or a dump needs (issue 31 item 2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from puppet_xpp.xpp.pcore import XppError, XppFormatError, XppWriteError

__all__ = ["XppError", "XppFormatError", "XppWriteError"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from puppet_xpp.xpp import pcore

        value = getattr(pcore, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
