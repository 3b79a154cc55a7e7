"""The `puppet-xpp` command line.

    puppet-xpp [--stdio | --tcp HOST:PORT]          language server (default: stdio)
    puppet-xpp --dump FILE... [--format json|pn|jsonl|tree] [--pretty] [--tasks] [--puppet-version V]
    puppet-xpp --validate PATH... [options]          see `puppet-xpp --validate --help`
    puppet-xpp --compile [ENVDIR... | FILE.pp -o OUT.xpp] [options]
    puppet-xpp --verify FILE.xpp...
    puppet-xpp --lint PATH... [--fix] [--format text|json] [--fail-on-warnings]   puppet-lint's checks
    puppet-xpp --references NAME [ENVDIR...] [--callers]   where a class/type/function/$variable is used
    puppet-xpp --version

Exit codes: 0 clean, 1 problems in the sources (Puppet would reject them too), 2 anything else: usage,
I/O failure, a file that could not be handled, an internal error (reported per file as INTERNAL_ERROR
where the command can go on; otherwise one line here, the traceback with --debug).
"""

# How the command line is read.  Every mode is a module of this package with
# ``add_arguments(parser)`` (its options, in an argument group named after the mode) and
# ``run(args, out, err) -> int``; without a mode flag the mode is the language server
# (``language_server``).  :func:`main` finds the mode's flag (the first one given, wherever it
# stands), builds the one parser of the command line -- the flag, the mode's options -- parses the
# whole argument list with it and calls the mode's ``run``.  The parser holds the chosen mode's
# options only: the modes give shared option names their own meanings (``--format`` is text|json,
# json|pn|jsonl|tree or msgpack|json), and an option of another mode is refused, as it always was.

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, TextIO

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

__all__ = ["MODES", "CommandLineParser", "Mode", "ParserExit", "build_parser", "main"]

# the mode flags (each names a module of this package: mode_for)
MODES = ("--dump", "--validate", "--compile", "--verify", "--lint", "--references")

# flags that take the rest of the command line as it is: puppet-lint's options are read by
# lint.config in their order, as puppet-lint reads them (the same code reads its rc files)
TAKES_THE_REST = frozenset({"--lint"})


class Mode(Protocol):
    """What a mode module offers the command line."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace, out: TextIO, err: TextIO) -> int: ...


class ParserExit(Exception):
    """The parser is done (``--help``, ``--version``, a usage error): the exit status."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class CommandLineParser(argparse.ArgumentParser):
    """argparse's parser writing to the command's streams, and raising :class:`ParserExit` instead of
    ending the process (``main`` returns the status; a test calling it keeps running)."""

    def __init__(self, *, out: TextIO, err: TextIO, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.out = out
        self.err = err

    def print_usage(self, file: SupportsWrite[str] | None = None) -> None:
        super().print_usage(self.out if file is None else file)

    def print_help(self, file: SupportsWrite[str] | None = None) -> None:
        super().print_help(self.out if file is None else file)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            self.err.write(message)
        raise ParserExit(status)

    def error(self, message: str) -> NoReturn:
        self.print_usage(self.err)
        self.exit(2, f"{self.prog}: error: {message}\n")


class Overview(argparse.Action):
    """``puppet-xpp --help``: the modes, the exit codes and the language levels."""

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from puppet_xpp.grammar.levels import DEFAULT_LEVEL, LEVELS

        assert isinstance(parser, CommandLineParser)
        lines = [(__doc__ or "").strip(), ""]
        lines.append(
            "Language levels (--puppet-version on --validate, --compile, --dump; setting puppetVersion):"
        )
        for level in LEVELS.values():
            default = " (default)" if level.name == DEFAULT_LEVEL else ""
            checks = "newer checks" if level.newer_checker else "older checks"
            lines.append(f"    {level.name:5} {level.puppets}{default}: strict={level.strict}, {checks}")
        parser.out.write("\n".join(lines) + "\n")
        parser.exit()


class Version(argparse.Action):
    """``puppet-xpp --version``: the one version, :data:`puppet_xpp.__version__`."""

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from puppet_xpp import __version__

        assert isinstance(parser, CommandLineParser)
        parser.out.write(f"puppet-xpp {__version__}\n")
        parser.exit()


def mode_for(flag: str | None) -> Mode:
    """The module of a mode (imported on demand: the language server loads no command's code)."""
    if flag == "--dump":
        from puppet_xpp.server.cli import dump

        return dump
    if flag == "--validate":
        from puppet_xpp.server.cli import validate

        return validate
    if flag == "--compile":
        from puppet_xpp.server.cli import compile as compile_mode  # not to hide the builtin compile

        return compile_mode
    if flag == "--verify":
        from puppet_xpp.server.cli import verify

        return verify
    if flag == "--lint":
        from puppet_xpp.server.cli import lint

        return lint
    if flag == "--references":
        from puppet_xpp.server.cli import references

        return references
    from puppet_xpp.server.cli import language_server

    return language_server


def build_parser(flag: str | None, mode: Mode, out: TextIO, err: TextIO) -> CommandLineParser:
    """The parser of a command line whose mode flag is ``flag`` (None: the language server)."""
    if flag is None:
        parser = CommandLineParser(prog="puppet-xpp", add_help=False, out=out, err=err)
        parser.add_argument("-h", "--help", action=Overview, nargs=0, help="the modes and language levels")
        parser.add_argument("--version", action=Version, nargs=0, help="the version of puppet-xpp")
    else:
        parser = CommandLineParser(
            prog=f"puppet-xpp {flag}", out=out, err=err, formatter_class=argparse.RawDescriptionHelpFormatter
        )
        if flag in TAKES_THE_REST:
            parser.add_argument(flag, dest="rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        else:
            parser.add_argument(
                flag, dest="selected_mode", action="store_const", const=flag, help=argparse.SUPPRESS
            )
    mode.add_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the command line ``argv`` (default: the process's); the exit status.  ``out``/``err``:
    where the command writes (default: the process's streams, as they are at the call)."""
    args = list(sys.argv[1:] if argv is None else argv)
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    flag = next((a for a in args if a in MODES), None)
    if flag is not None:
        # the flag first: what follows it is the mode's, wherever the flag stood
        args.remove(flag)
        args.insert(0, flag)
    try:
        mode = mode_for(flag)
        parser = build_parser(flag, mode, out, err)
        # paths may stand among the options, and the flag may be given again before more paths
        # (``--validate a.pp --strict off --validate b.pp``): positionals are collected wherever they are
        parsed = parser.parse_args(args) if flag in TAKES_THE_REST else parser.parse_intermixed_args(args)
        return mode.run(parsed, out, err)
    except ParserExit as e:
        return e.status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # the last guard: a one-line report, never a traceback (unless --debug)
        if flag is None:
            raise  # the language server logs its own failures
        from puppet_xpp.xpp.sources import format_traceback, internal_error

        if "--debug" in args:
            err.write(format_traceback(e))
        err.write(f"puppet-xpp {flag}: {internal_error(e, '').message}\n")
        return 2
