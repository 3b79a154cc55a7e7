"""Build of the optional C extensions (metadata: pyproject.toml): the reader ``puppet_xpp.xpp._fastload``,
the Pcore writer ``puppet_xpp.xpp._fastwrite`` and the parser's LR driver ``puppet_xpp.grammar._accel``.

Two wheels come from the same source tree (or sdist):

- the platform wheel (default): carries the C extensions, tagged for the Python and platform that built it;
  ``auditwheel repair`` makes it a ``manylinux`` wheel.  The extensions are optional: without a C compiler
  or the Python headers the build still succeeds, without them;
- the pure wheel (``PUPPET_XPP_PURE_WHEEL=1`` in the environment of ``python -m build --wheel`` or
  ``pip wheel``): no extensions, tagged ``py3-none-any``, installable on any platform.

Either way ``puppet_xpp.xpp.pcore`` uses the C reader when it is importable and its Python reader
otherwise (``puppet_xpp.xpp.pcore.MSGPACK_LOADER`` says which one is used), and ``puppet_xpp.grammar.parser``
its C driver loop when importable and its Python loop otherwise (``puppet_xpp.grammar.parser.ACCELERATOR``).
PUPPET_XPP_PURE_PYTHON=1 in the environment turns both off at run time.
"""

import os

from setuptools import Extension, setup

PURE = os.environ.get("PUPPET_XPP_PURE_WHEEL", "") not in ("", "0")
WARNINGS = [
    "-Wall",
    "-Wextra",
    "-Wno-unused-parameter",
    "-Wno-missing-field-initializers",
    "-Wno-cast-function-type",
]

setup(
    ext_modules=[]
    if PURE
    else [
        Extension(
            "puppet_xpp.xpp._fastload",
            ["xpp/_fastload.c"],
            depends=["xpp/_ast_classes.h"],
            optional=True,
            extra_compile_args=WARNINGS,
        ),
        Extension(
            "puppet_xpp.xpp._fastwrite",
            ["xpp/_fastwrite.c"],
            depends=["xpp/_ast_classes.h"],
            optional=True,
            extra_compile_args=WARNINGS,
        ),
        Extension(
            "puppet_xpp.grammar._accel", ["grammar/_accel.c"], optional=True, extra_compile_args=WARNINGS
        ),
    ],
)
