"""The ``puppet-xpp`` command line: one argument parser, one module per mode.

``main`` is the console script's entry point (``puppet_xpp.server.cli:main``)."""

from puppet_xpp.server.cli.main import main

__all__ = ["main"]
