"""The ``.xpp`` bytes of one source: parse and validate through :func:`grammar.check.check`, then write.

Every ``.xpp`` this project makes comes from here (``--compile ENVDIR`` in its workers, ``--compile FILE
-o OUT``, the language server's ``.xpp`` on save), so the bytes are the same whichever made them.  How a
file is parsed and validated is the :class:`grammar.check.CheckConfig` the caller gives (``file`` the
recorded name, ``location`` the real path for the module-location rules, the level and ``strict``
already resolved): this module has no defaults of its own.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from puppet_xpp.grammar import levels
from puppet_xpp.grammar.check import CheckConfig, check
from puppet_xpp.grammar.numbers import saturate_literals
from puppet_xpp.xpp.compile.model import DiagnosticRow, SourceRefused, Validation

if TYPE_CHECKING:
    from puppet_xpp.grammar.issues import Diagnostic
    from puppet_xpp.xpp.sources import Source

__all__ = [
    "compile_text",
    "runtime_named",
    "source_document",
    "compile_file",
    "write_program",
    "diagnostic_rows",
    "record_rows",
]


def compile_text(text: str, config: CheckConfig, fmt: str = "msgpack") -> tuple[bytes, list[DiagnosticRow]]:
    """(``.xpp`` bytes, diagnostic rows) of ``text`` parsed and validated under ``config``.

    PRFC-23: the AST whenever the parser made one (also if validation failed) plus every diagnostic; a
    runtime raises the recorded errors as Puppet would.  After a syntax error: the diagnostics only.  An
    integer literal outside Puppet's range (NUMERIC_OVERFLOW) is stored saturated at the bound it crosses.
    The envelope records the tasks mode the text was validated under, and the level and ``strict`` when
    the result depends on them (:func:`grammar.levels.depends_on`)."""
    result = check(text, config)
    diagnostics = runtime_named(result.diagnostics, config)
    program = result.program if result.syntax_ok else None
    if program is not None and any(d.code == "NUMERIC_OVERFLOW" for d in diagnostics):
        # an integer beyond Puppet's range cannot be written (grammar.numbers): the error recorded, the
        # literal is stored saturated
        saturate_literals(program)
    # a setting the result does not depend on is not recorded: any Puppet uses the file (grammar.levels)
    codes = [d.code for d in diagnostics]
    dependence = levels.depends_on(config.level_name, config.effective_strict, codes)
    settings: dict[str, Any] = {
        "puppet_version": config.level_name if dependence.level else None,
        "strict": config.effective_strict if dependence.strict else None,
        "tasks": config.tasks,
    }
    data = write_program(
        program, diagnostics, result.locator, config.file, fmt=fmt, settings=settings, source=text
    )
    return data, diagnostic_rows(diagnostics, result.locator)


def runtime_named(diagnostics: list[Diagnostic], config: CheckConfig) -> list[Diagnostic]:
    """``diagnostics`` with the file a message names (ILLEGAL_DEFINITION_LOCATION: "unacceptable in file
    '...'") being the recorded name when that is where Puppet will read the file: an absolute name other
    than the validated location (``--compile --runtime-root``), which is what Puppet says at run time.
    Else the validated location stays (compiled in place, it is the file Puppet reads), and the same
    environment compiled in two directories for one runtime root gives the same bytes."""
    recorded, location = config.file, config.location
    if not location or recorded == location or not os.path.isabs(recorded):
        return diagnostics
    from puppet_xpp.grammar.issues import format_message

    named: list[Diagnostic] = []
    for d in diagnostics:
        if d.args.get("file") == location:
            args = {**d.args, "file": recorded}
            d = dataclasses.replace(d, args=args, message=format_message(d.code, args))
        named.append(d)
    return named


def source_document(source: Source, config: CheckConfig, fmt: str) -> tuple[bytes, list[DiagnosticRow]]:
    """(``.xpp`` bytes, diagnostic rows) of a source read by :func:`xpp.sources.read_source` whose text
    may be used (an INVALID_ENCODING source gets an ``.xpp`` holding only that diagnostic, as Puppet
    rejects it)."""
    if source.diagnostic is not None:
        from puppet_xpp.grammar.ast import make_locator

        locator = make_locator("", config.file)
        # the digest of the bytes read (the text keeps undecodable bytes as surrogates), so that the
        # runtime, which hashes the file's bytes, finds this .xpp current
        data = write_program(None, [source.diagnostic], locator, config.file, fmt=fmt, source=source.text)
        return data, diagnostic_rows([source.diagnostic], locator)
    assert source.text is not None  # the callers compile only a source that was read
    return compile_text(source.text, config, fmt)


def compile_file(
    src: str,
    recorded: str,
    *,
    fmt: str = "msgpack",
    tasks: bool = False,
    strict: str | None = None,
    modulepath: Iterable[str] = (),
    manifest: str | None = None,
    max_bytes: int | None = None,
    puppet_version: str | None = None,
    namespace: str | None = None,
) -> tuple[bytes, list[DiagnosticRow]]:
    """(``.xpp`` bytes, diagnostic rows) of one file, recorded as ``recorded``; :class:`SourceRefused`
    (an OSError) when it is not read (missing, unreadable, not a regular file, over the size limit).
    ``puppet_version``/``strict`` None: the defaults of :mod:`grammar.levels`; ``namespace``: the
    file model's (``xpp.environment.FileContext.namespace``: a module no environment claims)."""
    from puppet_xpp.xpp.sources import read_source

    source = read_source(src, limit=max_bytes)
    if source.text is None:
        assert source.diagnostic is not None  # a source not read has the diagnostic saying why
        raise SourceRefused(source.diagnostic)
    validation = Validation.of(puppet_version, strict)
    config = CheckConfig(
        file=recorded,
        tasks=tasks,
        level=validation.level,
        strict=validation.strict,
        modulepath=tuple(modulepath),
        manifest=manifest,
        location=os.path.abspath(src),
        namespace=namespace,
    )
    return source_document(source, config, fmt)


def write_program(
    program: Any,
    diagnostics: Iterable[Diagnostic],
    locator: Any,
    recorded: str,
    fmt: str = "msgpack",
    *,
    settings: dict[str, Any] | None = None,
    source: str | bytes | None = None,
) -> bytes:
    """The ``.xpp`` bytes of an already parsed program (diagnostics re-labelled with ``recorded``: the
    validator names the real location, the ``.xpp`` the recorded name)."""
    from puppet_xpp.xpp.result import write_xpp

    relabelled = [d if d.file == recorded else dataclasses.replace(d, file=recorded) for d in diagnostics]
    return write_xpp(program, relabelled, fmt, locator=locator, settings=settings, source=source)


def diagnostic_rows(diagnostics: Iterable[Diagnostic], locator: Any) -> list[DiagnosticRow]:
    """The rows of ``diagnostics`` (line and column from ``locator``; none without one)."""
    from puppet_xpp.grammar.validator.syntax import LoggedDiagnostic

    rows: list[DiagnosticRow] = []
    for d in diagnostics:
        line, column = d.line_col(locator) if locator is not None else (None, None)
        rows.append(
            DiagnosticRow(d.severity, d.code, d.message, line, column, isinstance(d, LoggedDiagnostic))
        )
    return rows


def record_rows(records: Iterable[dict[str, Any]]) -> list[DiagnosticRow]:
    """The rows of the diagnostic records an ``.xpp`` holds (:mod:`xpp.result`)."""
    rows: list[DiagnosticRow] = []
    for r in records:
        logged = r.get("offset") is None and r.get("line") is not None
        rows.append(
            DiagnosticRow(
                r.get("severity") or "error",
                r.get("issue_code") or "",
                r.get("message") or "",
                r.get("line"),
                r.get("pos"),
                logged,
            )
        )
    return rows
