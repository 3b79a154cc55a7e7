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

Which Puppet release is which level (:func:`level_of_puppet`, for ``--compile --puppet-version auto``
and the same rule as the runtime's ``PuppetX::Xpp::Runtime.level``), and which validation results do not
depend on the level or ``strict`` at all (:func:`depends_on`: an ``.xpp`` then records neither, and every
Puppet uses it) are decided here too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "AUTO",
    "SETTING_SENSITIVE_CODES",
    "Dependence",
    "depends_on",
    "level_of_puppet",
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
AUTO = "auto"  # --compile --puppet-version auto: the level of the ``puppet`` on PATH (level_of_puppet)

# The issue codes whose presence, severity or text differ between levels or ``strict`` settings, the
# only ones (the validator's level switches: grammar.validator.walk.Walker.accept, checks.Checker):
# DUPLICATE_KEY (severity is ``strict``, absent with ``strict=off``; the newer checker compares more
# keys), ILLEGAL_NONLITERAL_PARAMETER_TYPE and LITERAL_NEGATION_FAILS (the newer checker only; the
# latter names the Puppet release in its message).
SETTING_SENSITIVE_CODES = frozenset(
    {"DUPLICATE_KEY", "ILLEGAL_NONLITERAL_PARAMETER_TYPE", "LITERAL_NEGATION_FAILS"}
)


def level(name: str | None) -> Level:
    """The level named ``name`` (``None``: the default); ValueError for an unknown name."""
    if name is None:
        name = DEFAULT_LEVEL
    lv = LEVELS.get(str(name))
    if lv is None:
        raise ValueError(f"puppet version must be one of {', '.join(LEVELS)}, not {name!r}")
    return lv


def level_of_puppet(version: str) -> Level | None:
    """The level that answers like Puppet (or OpenVox) release ``version`` (``puppet --version``'s
    output): 8 for 8.x and later, 7 for 7.29 and later 7.x, 7.23 for earlier 7.x; None for what is not a
    version or older than Puppet 7 (no level answers like it).  The runtime's rule
    (``PuppetX::Xpp::Runtime.level``) is the same."""
    parts = version.strip().split(".")
    try:
        major, minor = int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        return None
    if major >= 8:
        return LEVELS["8"]
    if major == 7:
        return LEVELS["7" if minor >= 29 else "7.23"]
    return None


@dataclass(frozen=True)
class Dependence:
    """Whether a validation result would differ at another level (``level``) or another ``strict``."""

    level: bool
    strict: bool


def depends_on(name: str, strict: str, codes: Iterable[str]) -> Dependence:
    """Which settings the result of a validation at level ``name`` with ``strict`` depends on, given the
    issue codes of its diagnostics (every diagnostic: errors, warnings, deprecations, logged ones).

    * ``strict``: only DUPLICATE_KEY's severity follows it, so the result depends on it when one was
      reported, or when ``strict`` is ``off`` (duplicates were then not reported at all);
    * the level: the older checker (7.23) checks less than the newer one, so its result never stands
      for the others; the newer checker's result stands for every level when none of
      :data:`SETTING_SENSITIVE_CODES` was reported (the older checker's literal keys are a subset of the
      newer's, so it finds no duplicate either, and it has no other check the newer one lacks)."""
    found = SETTING_SENSITIVE_CODES.intersection(codes)
    return Dependence(
        level=not level(name).newer_checker or bool(found),
        strict=strict == "off" or "DUPLICATE_KEY" in found,
    )


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


def add_cli_arguments(parser: Any, *, strict: bool = True, auto: bool = False) -> None:
    """``--puppet-version`` (and ``--strict``) for an argparse parser: every command takes them alike;
    ``auto`` (``--compile``) also accepts :data:`AUTO`, the level of the ``puppet`` on PATH."""
    names = [*LEVELS, AUTO] if auto else list(LEVELS)
    extra = (
        f"; {AUTO}: the level of the puppet on PATH (the default when there is one, else {DEFAULT_LEVEL})"
        if auto
        else ""
    )
    parser.add_argument(
        "--puppet-version",
        dest="puppet_version",
        choices=names,
        default=None,
        metavar="|".join(names),
        help=f"language level: which Puppet to answer like ({help_text()}{extra})",
    )
    if strict:
        parser.add_argument(
            "--strict",
            choices=STRICT_LEVELS,
            default=None,
            help="severity of DUPLICATE_KEY: off, warning or error (default: the language level's)",
        )
