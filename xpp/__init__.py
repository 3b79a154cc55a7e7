"""XPP (PRFC-23): Pcore serialization of Puppet parse results, the envelope, and the `.xpp` tree layout."""

from puppet_xpp.xpp.pcore import XppError, XppFormatError, XppWriteError

__all__ = ["XppError", "XppFormatError", "XppWriteError"]
