"""Parse, then validate at a language level: the one entry point every consumer uses.

Compile (``xpp``), ``--validate``, the language server's documents (through the incremental parser,
which asks :func:`checker` for its validator), the Python runtime helper and the quick fixes all
parse and validate through here, so that the rules they share -- which checker a level uses, what
``strict`` defaults to, which path the module-location rules judge, whether a recovered program is
validated -- are written once.  The defaults come from :mod:`grammar.levels` only.

Where the configuration comes from (an environment, a module, the editor's settings) is the file
model's business (``xpp.environment.FileContext.check_config``): this module knows nothing of files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from puppet_xpp.grammar import levels

if TYPE_CHECKING:  # (the parser is imported by check(): a CheckConfig alone costs no parser import)
    from puppet_xpp.grammar.issues import Diagnostic
    from puppet_xpp.grammar.parser import ParseResult

__all__ = ["CheckConfig", "CheckResult", "check", "checker", "parse"]

# from this many characters, check() parses dropping the tokens as it goes (parser.parse's keep_tokens)
DROP_TOKENS_FROM = 1_000_000


@dataclass(frozen=True)
class CheckConfig:
    """How one text is parsed and validated.

    ``file`` is the name the parse records (locator, diagnostics); ``location`` is where the file
    really lies, for the module-location rules, when that differs (``--compile`` records a name
    relative to the environment but judges the absolute path).  ``namespace``, when given, is the
    namespace the module-location rules judge the file by, as the file model found it where the module
    path cannot say it (a module cloned under another directory name: ``xpp.environment``).  ``level``
    None and ``strict`` None take :mod:`grammar.levels`' defaults."""

    file: str = ""
    epp: bool = False
    tasks: bool = False
    level: str | None = None
    strict: str | None = None
    modulepath: tuple[str, ...] = ()
    manifest: str | None = None
    location: str | None = None
    namespace: str | None = None

    @property
    def level_name(self) -> str:
        """The level's name after defaults (what an ``.xpp`` records)."""
        return levels.level(self.level).name

    @property
    def effective_strict(self) -> str:
        """``strict`` after the level's default (what an ``.xpp`` records)."""
        return levels.resolve_strict(self.level, self.strict)


@dataclass
class CheckResult:
    """A parse and the validation of the program it made (when it made one)."""

    parse: ParseResult
    validation: list[Diagnostic] = field(default_factory=list)

    @property
    def program(self) -> Any:
        return self.parse.program

    @property
    def locator(self) -> Any:
        return self.parse.locator

    @property
    def syntax_ok(self) -> bool:
        """No syntax error: Puppet's parser would have returned this program."""
        return not any(d.severity == "error" for d in self.parse.diagnostics)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Parse diagnostics, then validation diagnostics (Puppet's order)."""
        return [*self.parse.diagnostics, *self.validation]


def parse(
    text: str, file: str = "", *, epp: bool | None = None, tasks: bool = False, keep_tokens: bool = True
) -> ParseResult:
    """:func:`grammar.parser.parse`, imported on the first call: a module that only needs
    :class:`CheckConfig` (the environment model) loads no parser."""
    from puppet_xpp.grammar.parser import parse as parse_text

    return parse_text(text, file, epp=epp, tasks=tasks, keep_tokens=keep_tokens)


def checker(config: CheckConfig) -> Any:
    """The validator for ``config`` (``grammar.validator.Checker`` or its tasks variant)."""
    from puppet_xpp.grammar.validator import Checker, TasksChecker

    cls = TasksChecker if config.tasks else Checker
    validator = cls(
        strict=config.strict,
        file=config.location or config.file or None,
        modulepath=config.modulepath,
        manifest=config.manifest,
        level=config.level,
    )
    if config.namespace is not None:
        validator.file_namespace = config.namespace  # what Rules.namespace would otherwise compute
    return validator


def check(text: str, config: CheckConfig) -> CheckResult:
    """Parse ``text`` and validate the program the parse made.

    A program recovered after a syntax error is validated too (an editor shows both kinds of
    problem); consumers that follow Puppet's own parse (which stops at the first syntax error) look
    at :attr:`CheckResult.syntax_ok`.  The result's ``parse.tokens`` is empty (:func:`parse` keeps
    them)."""
    from puppet_xpp.grammar.gcpause import paused

    with paused():  # (grammar.gcpause: no collection while the tree is being made)
        # the tokens are not kept: no consumer of a check reads them (the editor's features parse()
        # or analyse incrementally).  A big text's are dropped as they are parsed, so that they never
        # coexist with the whole tree (a syntax error then costs a second parse: not for a small text)
        keep = len(text) < DROP_TOKENS_FROM
        res = parse(text, config.file, epp=config.epp, tasks=config.tasks, keep_tokens=keep)
        res.tokens = []
        if res.program is None:
            return CheckResult(res)
        return CheckResult(res, list(checker(config).validate(res.program)))
