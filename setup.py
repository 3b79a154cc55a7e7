"""Build of the optional C reader ``puppet_xpp.xpp._fastload`` (metadata: pyproject.toml).

The extension is optional: without a C compiler or the Python headers, ``pip install`` still succeeds and
``puppet_xpp.xpp.pcore`` reads with its Python reader only (``puppet_xpp.xpp.pcore.MSGPACK_LOADER`` says which one is used).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
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
