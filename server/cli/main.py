"""The `puppet-xpp` command line.

    puppet-xpp COMMAND [ARGS...]                 a command (the list below; `puppet-xpp COMMAND --help`)
    puppet-xpp --COMMAND [ARGS...]               the same command (the flag form, kept as an alias)
    puppet-xpp [--stdio | --tcp HOST:PORT]       no command: the language server (editors start it so)

Exit codes: 0 clean, 1 problems in the sources (Puppet would reject them too), 2 anything else: usage,
I/O failure (also standard output or error that cannot be written: a full disk), a file that could not be
handled, an internal error (reported per file as INTERNAL_ERROR where the command can go on; otherwise one
line here, the traceback with --debug).
"""

# How the command line is read.  Every command is a module of this package with
# ``add_arguments(parser)`` (its options, in an argument group named after it) and
# ``run(args, out, err) -> int``; :data:`COMMANDS` is the one table of them.  A command is named
# either as the first argument (``puppet-xpp validate a.pp``) or by its flag anywhere
# (``puppet-xpp a.pp --validate``, the form older scripts and the tests use); without either the
# command is the language server (``serve``).  :func:`main` finds the command, builds the one parser
# of that command -- :func:`build_parser`: the flag, the command's options -- parses the whole
# argument list with it and calls the command's ``run``.  Both spellings go through the same parser,
# so they accept the same options and behave alike.  The parser holds the chosen command's options
# only: the commands give shared option names their own meanings (``--format`` is text|json,
# json|pn|jsonl|tree or msgpack|json), and an option of another command is refused.
#
# Output failures: the command writes through :class:`OutputGuard`s, which record a failed write or flush
# (a full disk, /dev/full, an I/O error) instead of raising it into the command, which goes on; ``main``
# then returns 2 whatever the command returned (its report is lost: it cannot say "no problems", nor
# "problems in the sources").  A closed pipe (``| head``) is not a failure: the command stops, status 0.
#
# Help: every ``--help`` is argparse's, formatted by :class:`PlainHelpFormatter`, which shows the
# commands' docstring-derived descriptions as plain text (no reStructuredText markup).  ``puppet-xpp
# --help`` is the overview: the commands, the language server's options, the exit codes and the
# language levels.

from __future__ import annotations

import argparse
import dataclasses
import importlib
import os
import re
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, TextIO, cast

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

__all__ = [
    "COMMANDS",
    "MODES",
    "Command",
    "CommandLineParser",
    "Mode",
    "OutputGuard",
    "ParserExit",
    "PlainHelpFormatter",
    "build_parser",
    "find_command",
    "main",
    "plain_text",
]


@dataclasses.dataclass(frozen=True)
class Command:
    """One command: its name (``puppet-xpp NAME``), the module of this package that implements it, a
    one-line summary for ``puppet-xpp --help``, and whether it has the flag form ``--NAME``."""

    name: str
    module: str
    summary: str
    has_flag: bool = True

    @property
    def flag(self) -> str | None:
        return f"--{self.name}" if self.has_flag else None


# The commands, in the order ``puppet-xpp --help`` lists them.  ``serve`` has no flag: the language
# server is what runs without a command (``puppet-xpp --stdio``).
COMMANDS = (
    Command("validate", "validate", "syntax check and static validation (as `puppet parser validate`)"),
    Command("lint", "lint", "puppet-lint's checks, --fix rewrites (puppet-lint's options)"),
    Command("compile", "compile", "write .xpp files for environments or one manifest"),
    Command("dump", "dump", "print the parse result (as `puppet parser dump`)"),
    Command("verify", "verify", "check that .xpp files are well formed"),
    Command("references", "references", "where a class, type, function or $variable is used"),
    Command(
        "runtime-path", "runtime_path", "print where the Puppet runtime module xpp is installed (for RUBYLIB)"
    ),
    Command("serve", "language_server", "the language server (LSP); also what runs with no command", False),
)

# the flags of the commands (the aliases ``--validate`` ...)
MODES = tuple(c.flag for c in COMMANDS if c.flag is not None)

# flags that take the rest of the command line as it is: puppet-lint's options are read by
# lint.config in their order, as puppet-lint reads them (the same code reads its rc files)
TAKES_THE_REST = frozenset({"--lint"})

SERVE = next(c for c in COMMANDS if c.flag is None)


class Mode(Protocol):
    """What a command's module offers the command line."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace, out: TextIO, err: TextIO) -> int: ...


class ParserExit(Exception):
    """The parser is done (``--help``, ``--version``, a usage error): the exit status."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


# reStructuredText inline markup found in the commands' docstrings, which their help shows:
# :role:`target` (a leading ~ shortens the target), ``literal``, `interpreted`
_INLINE_MARKUP = re.compile(r":[a-z]+:`~?([^`]+)`|``([^`]+)``|`([^`]+)`")
# a paragraph ending in "::" introduces a literal block: the text shows one colon
_LITERAL_BLOCK = re.compile(r"(?<=\S)::$", re.MULTILINE)


def plain_text(text: str) -> str:
    """``text`` without reStructuredText inline markup: what a help screen shows of a docstring."""
    text = _INLINE_MARKUP.sub(lambda m: next(g for g in m.groups() if g is not None), text)
    return _LITERAL_BLOCK.sub(":", text)


class PlainHelpFormatter(argparse.RawDescriptionHelpFormatter):
    """The one help style of every command: argparse's layout; descriptions keep their line breaks
    (usage examples stay aligned) and, like every option's help, show as plain text."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return super()._fill_text(plain_text(text), width, indent)

    def _split_lines(self, text: str, width: int) -> list[str]:
        return super()._split_lines(plain_text(text), width)


class CommandLineParser(argparse.ArgumentParser):
    """argparse's parser writing to the command's streams, and raising :class:`ParserExit` instead of
    ending the process (``main`` returns the status; a test calling it keeps running)."""

    def __init__(self, *, out: TextIO, err: TextIO, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", PlainHelpFormatter)
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


def overview_epilog() -> str:
    """The end of ``puppet-xpp --help``: the aliases, the exit codes and the language levels."""
    from puppet_xpp.grammar.levels import DEFAULT_LEVEL, LEVELS

    doc = (__doc__ or "").strip().split("\n\n")
    lines = [
        "Every command but serve has a flag form: puppet-xpp --validate PATH... is puppet-xpp validate PATH...",
        "(same options, same behaviour).  puppet-xpp COMMAND --help lists a command's options.",
        "",
        doc[-1],
        "",
        "Language levels (--puppet-version on validate, compile, dump; the language server's puppetVersion):",
    ]
    for level in LEVELS.values():
        default = " (default)" if level.name == DEFAULT_LEVEL else ""
        checks = "newer checks" if level.newer_checker else "older checks"
        lines.append(f"  {level.name:5} {level.puppets}{default}: strict={level.strict}, {checks}")
    return "\n".join(lines)


class Overview(argparse.Action):
    """``puppet-xpp --help``: argparse's help of the command-less parser, the epilog computed then (the
    language levels are read only when asked for)."""

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        assert isinstance(parser, CommandLineParser)
        parser.epilog = overview_epilog()
        parser.print_help()
        parser.exit()


class Version(argparse.Action):
    """``puppet-xpp --version``: the one version, :data:`puppet_xpp.__version__`."""

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from puppet_xpp import __version__

        assert isinstance(parser, CommandLineParser)
        parser.out.write(f"puppet-xpp {__version__}\n")
        parser.exit()


def mode_for(command: Command) -> Mode:
    """The module of a command, imported on demand (the language server loads no command's code)."""
    return cast(Mode, importlib.import_module(f"{__package__}.{command.module}"))


def find_command(args: list[str]) -> tuple[Command, str]:
    """The command of an argument list and how it was named: its name as the first argument, else its
    flag (the first one given, wherever it stands), else the language server (named ``""``)."""
    if args:
        for command in COMMANDS:
            if args[0] == command.name:
                return command, command.name
    for arg in args:
        for command in COMMANDS:
            if arg == command.flag:
                return command, arg
    return SERVE, ""


def build_parser(
    command: Command, mode: Mode, out: TextIO, err: TextIO, named: str = ""
) -> CommandLineParser:
    """The one parser of ``command`` (whichever way it was ``named``: its name, its flag, or ``""`` for
    the language server started without a command).  The argument list it parses starts with the
    command's flag (:func:`main` puts it there)."""
    if not named:
        parser = overview_parser(out, err)
    else:
        parser = CommandLineParser(prog=f"puppet-xpp {named}", description=command.summary, out=out, err=err)
    flag = command.flag
    if flag in TAKES_THE_REST:
        # its options and paths are the command's to read, in their order (its group's text says which)
        parser.usage = "%(prog)s [-h] [OPTION | PATH]..."
        parser.add_argument(flag, dest="rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    elif flag is not None:
        # the flag may be given again before more paths (--validate a.pp --validate b.pp)
        parser.add_argument(
            flag, dest="selected_mode", action="store_const", const=flag, help=argparse.SUPPRESS
        )
    mode.add_arguments(parser)
    return parser


def overview_parser(out: TextIO, err: TextIO) -> CommandLineParser:
    """The parser of a command line without a command: the language server's options, ``--help`` (the
    overview, listing the commands) and ``--version``."""
    parser = CommandLineParser(
        prog="puppet-xpp",
        usage="%(prog)s [-h] [--version] COMMAND [ARGS...]\n       %(prog)s [--stdio | --tcp HOST:PORT] [-v]",
        description=(
            "Parser, validator, linter, .xpp compiler and language server for the Puppet language.\n"
            "Without a command it is the language server on stdio (what editors start)."
        ),
        add_help=False,
        out=out,
        err=err,
    )
    # the commands, for the overview and for the error on an unknown one: a command is found before
    # this parser runs (find_command), so what reaches it here is a name that is not a command
    commands = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND")
    for command in COMMANDS:
        commands.add_parser(command.name, help=command.summary, add_help=False, out=out, err=err)
    parser.add_argument("-h", "--help", action=Overview, nargs=0, help="this overview")
    parser.add_argument("--version", action=Version, nargs=0, help="the version of puppet-xpp")
    return parser


class OutputGuard:
    """A command's output stream: what it writes goes to ``stream``; a write or flush that fails (not a
    closed pipe, which stops the command) is recorded in ``failure`` and the rest is dropped, so that the
    command ends as it would and :func:`main` exits 2.  Everything else is the stream's."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.failure: OSError | None = None

    def write(self, text: str) -> int:
        if self.failure is None:
            try:
                return self.stream.write(text)
            except BrokenPipeError:
                raise
            except OSError as e:
                self.failure = e
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self.failure is None:
            try:
                self.stream.flush()
            except BrokenPipeError:
                raise
            except OSError as e:
                self.failure = e
            except ValueError:  # closed (the language server closes its streams): nothing left to write
                pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _discard(guard: OutputGuard) -> None:
    """After a failed write to one of the process's streams (or a closed pipe): its descriptor goes to
    /dev/null, so that what is still buffered does not fail again when the interpreter exits (which would
    turn the status into 120)."""
    stream = guard.stream
    if stream is not sys.stdout and stream is not sys.stderr:
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, stream.fileno())
        finally:
            os.close(null)
        stream.flush()
    except (OSError, ValueError):
        pass


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the command line ``argv`` (default: the process's); the exit status.  ``out``/``err``:
    where the command writes (default: the process's streams, as they are at the call)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if argv is None:
        _as_program(args)
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    guards = (OutputGuard(out), OutputGuard(err))
    status = _main(args, cast(TextIO, guards[0]), cast(TextIO, guards[1]))
    for guard in guards:
        try:
            guard.flush()
        except BrokenPipeError:  # the reader is gone (| head): what is left is dropped
            guard.failure = None
            _discard(guard)
    e = guards[0].failure or guards[1].failure
    if e is None:
        return status
    guards[1].write(f"puppet-xpp: cannot write the standard output: {e.strerror or e}\n")
    guards[1].flush()  # (when only the standard error failed, this is dropped too)
    for guard in guards:
        if guard.failure is not None:
            _discard(guard)
    return 2


def _as_program(args: list[str]) -> None:
    """This process is the program, run for its own command line, and a command is a batch that ends
    with it (not the language server, which keeps its code in a window of its own and paces its own
    collections: server/lsp/startup.py, server.analysis.document.GcPacer):

    * the code dataclasses generate for the classes its command imports (~40 for ``--compile``: ~12 ms
      of every start) comes from the start-up code cache from now on
      (:func:`puppet_xpp.server.startup_cache.keep_for_process`, a file per command), and what is new is
      kept when it exits;
    * the cyclic collector runs at a batch's thresholds (:data:`grammar.gcpause.GC_THRESHOLD`) from the
      start: the imports alone made ~40 young collections with the default ones (~6 ms of a cold
      ``--compile``), over modules, classes and tables that live as long as the process."""
    command, _named = find_command(args)
    if command is SERVE:
        return
    import gc

    from puppet_xpp.grammar.gcpause import GC_THRESHOLD
    from puppet_xpp.server.startup_cache import keep_for_process

    gc.set_threshold(*GC_THRESHOLD)
    keep_for_process(f"cli-{command.name}-code.marshal")


def _main(args: list[str], out: TextIO, err: TextIO) -> int:
    command, named = find_command(args)
    flag = command.flag
    if named == command.name:
        del args[0]
        if flag is not None:
            args.insert(0, flag)
    elif flag is not None:
        # the flag first: what follows it is the command's, wherever the flag stood
        args.remove(flag)
        args.insert(0, flag)
    try:
        mode = mode_for(command)
        parser = build_parser(command, mode, out, err, named)
        if flag in TAKES_THE_REST:
            # the rest as it is, ``--`` included (argparse would take it as its own separator)
            parsed = parser.parse_args(args[:1])
            parsed.rest = args[1:]
            if any(a in ("-h", "--help") for a in parsed.rest[: _end_of_options(parsed.rest)]):
                parser.print_help()
                return 0
        elif flag is None:
            parsed, unknown = parser.parse_known_args(args)
            if getattr(parsed, "command", None) is not None:
                parser.error(f"the command comes first: puppet-xpp {parsed.command} ...")
            if unknown:
                parser.error(f"unrecognized arguments: {' '.join(unknown)}")
        else:
            # paths may stand among the options, and the flag may be given again before more paths
            # (``--validate a.pp --strict off --validate b.pp``): positionals are collected wherever they are
            parsed = parser.parse_intermixed_args(args)
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
        err.write(f"puppet-xpp {named}: {internal_error(e, '').message}\n")
        return 2


def _end_of_options(rest: list[str]) -> int:
    """Where the options of a rest-taking command end (``--``: what follows are paths)."""
    return rest.index("--") if "--" in rest else len(rest)
