"""Build of the optional C reader ``puppet_xpp.xpp._fastload`` (metadata: pyproject.toml).

Two wheels come from the same source tree (or sdist):

- the platform wheel (default): carries the C reader, tagged for the Python and platform that built it;
  ``auditwheel repair`` makes it a ``manylinux`` wheel.  The extension is optional: without a C compiler or
  the Python headers the build still succeeds, without it;
- the pure wheel (``PUPPET_XPP_PURE_WHEEL=1`` in the environment of ``python -m build --wheel`` or
  ``pip wheel``): no extension, tagged ``py3-none-any``, installable on any platform.

Either way ``puppet_xpp.xpp.pcore`` uses the C reader when it is importable and its Python reader
otherwise (``puppet_xpp.xpp.pcore.MSGPACK_LOADER`` says which one is used).
"""

import os

from setuptools import Extension, setup

PURE = os.environ.get("PUPPET_XPP_PURE_WHEEL", "") not in ("", "0")

setup(
    ext_modules=[]
    if PURE
    else [
        Extension(
            "puppet_xpp.xpp._fastload",
            ["xpp/_fastload.c"],
            optional=True,
            extra_compile_args=[
                "-Wall",
                "-Wextra",
                "-Wno-unused-parameter",
                "-Wno-missing-field-initializers",
                "-Wno-cast-function-type",
            ],
        ),
    ],
)
