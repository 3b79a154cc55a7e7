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

from __future__ import annotations

import sys

MODES = ("--dump", "--validate", "--compile", "--verify", "--lint", "--references")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    mode = next((a for a in argv if a in MODES), None)
    if mode is not None:
        argv.remove(mode)
    try:
        if mode == "--dump":
            from puppet_xpp.server.cli import dump as cmd_dump

            return cmd_dump.main(argv)
        if mode == "--validate":
            from puppet_xpp.server.cli import validate as cmd_validate

            return cmd_validate.main(argv)
        if mode == "--compile":
            from puppet_xpp.server.cli import compile as cmd_compile

            return cmd_compile.main(argv)
        if mode == "--verify":
            from puppet_xpp.server.cli import verify as cmd_verify

            return cmd_verify.main(argv)
        if mode == "--lint":
            from puppet_xpp.server.cli import lint as cmd_lint

            return cmd_lint.main(argv)
        if mode == "--references":
            from puppet_xpp.server.cli import references as cmd_references

            return cmd_references.main(argv)
        if argv and argv[0] in ("-h", "--help"):
            from puppet_xpp.grammar.levels import DEFAULT_LEVEL, LEVELS

            print(__doc__.strip())
            print(
                "\nLanguage levels (--puppet-version on --validate, --compile, --dump; setting puppetVersion):"
            )
            for lv in LEVELS.values():
                default = " (default)" if lv.name == DEFAULT_LEVEL else ""
                checks = "newer checks" if lv.newer_checker else "older checks"
                print(f"    {lv.name:5} {lv.puppets}{default}: strict={lv.strict}, {checks}")
            return 0
        if argv and argv[0] == "--version":
            from puppet_xpp import __version__

            print(f"puppet-xpp {__version__}")
            return 0
        from puppet_xpp.server.lsp import server as lsp

        return lsp.main(argv)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # the last guard: a one-line report, never a traceback (unless --debug)
        if mode is None:
            raise  # the language server logs its own failures
        from puppet_xpp.xpp.sources import format_traceback, internal_error

        if "--debug" in argv:
            sys.stderr.write(format_traceback(e))
        print(f"puppet-xpp {mode}: {internal_error(e, '').message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
