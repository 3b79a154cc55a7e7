"""Lint settings: which checks run, and how results are shown; from puppet-lint's options and rc files.

An option list is applied in order, as puppet-lint applies it (``--only-checks a,b`` then ``--no-a-check``
leaves only b). The rc files (``/etc/puppet-lint.rc``, ``~/.puppet-lint.rc``, ``./.puppet-lint.rc``, or
one named by ``-c``/``--config``) hold one option per line; a line that is not an option is ignored.
Used by the command line (``server/cli/lint.py``) and the language server.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from puppet_xpp.lint.run import all_checks, default_enabled

ERROR_LEVELS = ("all", "warning", "error")


class UsageError(ValueError):
    """An option puppet-lint would reject (its message is puppet-lint's wording)."""


@dataclass
class LintConfig:
    enabled: set[str] = field(default_factory=default_enabled)
    fix: bool = False
    relative: bool = False
    fail_on_warnings: bool = False
    with_filename: bool = False
    with_context: bool = False
    show_ignored: bool = False
    error_level: str = "all"
    log_format: str = ""
    ignore_paths: list[str] = field(default_factory=lambda: ["vendor/**/*.pp"])
    json: bool = False
    sarif: bool = False
    version: bool = False  # --version: print the version and stop
    list_checks: bool = False  # --list-checks: print the check names and stop
    stdin_filename: str | None = None  # the path a manifest read from standard input ("-") stands for
    plugins: list[str] = field(default_factory=list)  # -l/--load, --load-from-puppet: Ruby, not loaded
    # how an rc file is read (None: open it); the command line gives the one source-reading rule
    # (xpp.sources.read_text: a FIFO or a device named .puppet-lint.rc is not read), which lint/ cannot import
    read: Callable[[str], str | None] | None = field(default=None, repr=False, compare=False)

    def apply(self, args: list[str], *, base: str | None = None) -> list[str]:
        """Apply options in order; returns the non-option arguments. ``base``: directory that a
        ``--config`` file name is relative to."""
        names = [c.name for c in all_checks()]
        rest: list[str] = []
        i = 0
        while i < len(args):
            a = args[i]
            i += 1

            def value(a: str = a) -> str:
                nonlocal i
                if "=" in a:
                    return a.split("=", 1)[1]
                if i >= len(args):
                    raise UsageError(f"missing argument: {a}")
                i += 1
                return args[i - 1]

            opt = a.split("=", 1)[0]
            if not a.startswith("-") or a == "-":
                rest.append(a)
            elif opt in ("--fix", "-f"):
                self.fix = True
            elif opt == "--relative":
                self.relative = True
            elif opt == "--fail-on-warnings":
                self.fail_on_warnings = True
            elif opt == "--with-filename":
                self.with_filename = True
            elif opt == "--with-context":
                self.with_context = True
            elif opt == "--show-ignored":
                self.show_ignored = True
            elif opt == "--json":
                self.json = True
            elif opt == "--sarif":
                self.sarif = True
            elif opt == "--version":
                self.version = True
            elif opt == "--list-checks":
                self.list_checks = True
            elif opt in ("-l", "--load", "--load-from-puppet"):
                self.plugins.append(value())
            elif opt == "--stdin-filename":
                self.stdin_filename = value()
            elif opt == "--no-config":
                pass
            elif opt == "--error-level":
                level = value()
                if level not in ERROR_LEVELS:
                    raise UsageError(f"invalid argument: --error-level {level}")
                self.error_level = level
            elif opt == "--log-format":
                self.log_format = value()
            elif opt == "--ignore-paths":
                self.ignore_paths = value().split(",")
            elif opt == "--only-checks":
                wanted = set(value().split(","))
                self.enabled = {n for n in names if n in wanted}
            elif opt in ("-c", "--config"):
                f = value()
                self.load(f if base is None else os.path.join(base, f))
            elif opt.startswith("--no-") and opt.endswith("-check") and opt[5:-6] in names:
                self.enabled.discard(opt[5:-6])
            elif opt.startswith("--") and opt.endswith("-check") and opt[2:-6] in names:
                self.enabled.add(opt[2:-6])
            else:
                raise UsageError(f"invalid option: {a}")
        return rest

    def load(self, path: str) -> bool:
        """Apply an rc file (one option per line); False when it does not exist."""
        if self.read is not None:
            text = self.read(path)
            if text is None:
                return False
            lines = text.splitlines()
        else:
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = f.read().splitlines()
            except OSError:
                return False
        self.apply(lines, base=os.path.dirname(path))
        return True


def load_config(
    args: list[str],
    *,
    cwd: str | None = None,
    rc: str | None = None,
    read: Callable[[str], str | None] | None = None,
) -> tuple[LintConfig, list[str]]:
    """puppet-lint's start-up: the rc files (unless ``--no-config``), then ``args``. ``rc``: one rc
    file to use instead of the standard ones (the language server's setting); ``read``: how an rc file
    is read (:attr:`LintConfig.read`)."""
    cfg = LintConfig(read=read)
    if "--no-config" not in args:
        if rc is not None:
            cfg.load(rc)
        else:
            cfg.load("/etc/puppet-lint.rc")
            home = os.environ.get("HOME")
            if home:
                cfg.load(os.path.join(home, ".puppet-lint.rc"))
            cfg.load(os.path.join(cwd or os.getcwd(), ".puppet-lint.rc"))
    rest = cfg.apply(args)
    return cfg, rest
