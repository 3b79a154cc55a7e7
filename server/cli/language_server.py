"""``puppet-xpp [serve] [--stdio | --tcp HOST:PORT] [-v]``: the language server (``serve``, and what
runs without a command).

The server itself is :mod:`server.lsp.server`; this module gives the command line's one parser its
options and starts the server with what it read.
"""

from __future__ import annotations

import argparse
from typing import TextIO

__all__ = ["add_arguments", "run", "tcp_address"]


def tcp_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (HOST defaults to 127.0.0.1)."""
    host, _, port = text.rpartition(":")
    try:
        return host or "127.0.0.1", int(port)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects HOST:PORT, not {text!r}") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("language server", "The language server (LSP), on stdio by default.")
    group.add_argument("--stdio", action="store_true", help="serve on stdin/stdout (the default)")
    group.add_argument("--tcp", metavar="HOST:PORT", type=tcp_address, help="serve on a TCP socket")
    group.add_argument("-v", "--verbose", action="store_true", help="log debugging messages on stderr")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Serve with the options this command line read (the server reads no command line of its own).  On
    stdio, the start-up front answers first (server/lsp/startup.py: ``initialize`` within a few tens of
    milliseconds while the server loads)."""
    if args.tcp is None:
        from puppet_xpp.server.lsp import startup

        return startup.serve_stdio(verbose=args.verbose)
    from puppet_xpp.server.lsp import server

    return server.serve(args.tcp, verbose=args.verbose)
