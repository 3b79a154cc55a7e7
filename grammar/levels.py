"""Language levels: which Puppet the validator answers like, and that Puppet's default ``strict``.

This is the one place that defines the levels and their defaults; the command line (``--puppet-version``),
the language server (setting ``puppetVersion``), ``--compile``'s settings fingerprint and the validator
all read it from here.

* ``8`` (the default): Puppet 8.6+ and OpenVox 8.  Default ``strict`` is ``error``; the newer checker
  (class parameter types must be literal, ``ILLEGAL_NONLITERAL_PARAMETER_TYPE``; hash keys are also
  compared when they are type references, ``Type[...]`` expressions or negated literals).
* ``7``: Puppet 7.29-7.34 and OpenVox 7: the newer checker with Puppet 7's default ``strict``, ``warning``.
* ``7.23``: Puppet 7.23 (Debian 12's package): the older checker, ``strict`` ``warning``.

Lexer, grammar, AST, positions and ``.xpp`` bytes are the same at every level (measured against both
Puppets); only validation differs.  An explicit ``strict`` always wins over the level's default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "Level",
    "LEVELS",
    "DEFAULT_LEVEL",
    "STRICT_LEVELS",
    "level",
    "resolve_strict",
    "add_cli_arguments",
]

STRICT_LEVELS = ("off", "warning", "error")


@dataclass(frozen=True)
class Level:
    name: str  # the setting's value: "8", "7" or "7.23"
    strict: str  # the default of Puppet's ``strict`` setting at this level
    newer_checker: bool  # Puppet 7.29+'s validator (literal parameter types, wider literal hash keys)
    puppets: str  # which Puppet releases answer like this level (for --help and the docs)


LEVELS: dict[str, Level] = {
    "8": Level("8", "error", True, "Puppet 8.6+ / OpenVox 8"),
    "7": Level("7", "warning", True, "Puppet 7.29-7.34 / OpenVox 7"),
    "7.23": Level("7.23", "warning", False, "Puppet 7.23 (Debian 12)"),
}
DEFAULT_LEVEL = "8"


def level(name: str | None) -> Level:
    """The level named ``name`` (``None``: the default); ValueError for an unknown name."""
    if name is None:
        name = DEFAULT_LEVEL
    lv = LEVELS.get(str(name))
    if lv is None:
        raise ValueError(f"puppet version must be one of {', '.join(LEVELS)}, not {name!r}")
    return lv


def resolve_strict(name: str | None, strict: str | None) -> str:
    """``strict`` when given (validated), else the default of level ``name``."""
    if strict is None:
        return level(name).strict
    if strict not in STRICT_LEVELS:
        raise ValueError(f"strict must be off, warning or error, not {strict!r}")
    return strict


def help_text() -> str:
    """One line per level for ``--help`` texts."""
    return "; ".join(
        f"{lv.name}{' (default)' if lv.name == DEFAULT_LEVEL else ''}: {lv.puppets}, strict={lv.strict}"
        for lv in LEVELS.values()
    )


def add_cli_arguments(parser: Any, *, strict: bool = True) -> None:
    """``--puppet-version`` (and ``--strict``) for an argparse parser: every command takes them alike."""
    parser.add_argument(
        "--puppet-version",
        dest="puppet_version",
        choices=list(LEVELS),
        default=None,
        metavar="|".join(LEVELS),
        help=f"language level: which Puppet to answer like ({help_text()})",
    )
    if strict:
        parser.add_argument(
            "--strict",
            choices=STRICT_LEVELS,
            default=None,
            help="severity of DUPLICATE_KEY: off, warning or error (default: the language level's)",
        )
