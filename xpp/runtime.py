"""PRFC-23's runtime rule: load a manifest's `.xpp` when it loads, otherwise say why and parse the `.pp`.

    res = load_or_parse("/etc/puppetlabs/code/environments/production/modules/apache/manifests/init.pp",
                        env_dir="/etc/puppetlabs/code/environments/production")
    res.program, res.diagnostics, res.origin ("xpp" | "pp"), res.reason (why the .xpp was not used)
    res.refused        True when the result holds an error: Puppet would not evaluate this file
    res.raise_errors() raises ParseRefused (the first error, as Puppet raises it) when refused

The `.xpp` is found in the environment's tree exactly where `--compile` writes it.  It is used only when

* it loads (envelope, checksum, payload: any damage is an XppFormatError),
* it was made from the current source and validated under the settings asked for here (language level,
  ``strict``, tasks mode, when it records them: other settings can give other diagnostics) -- the one
  rule of :mod:`xpp.compile.current`, shared with ``--compile``: the ``source-sha256`` its envelope
  records is the digest of the `.pp` on disk (the PRFC planned no freshness check; a stale `.xpp` would
  otherwise serve old code).  A file without that digest (another writer) is compared by the source text
  its Program embeds; one with neither is not used.

Otherwise the reason is logged and the `.pp` is parsed and validated instead; nothing raises for it.

An `.xpp` can hold a Program *and* errors (validation failed, PRFC-23 keeps the AST).  Such a result is
``refused``: Puppet raises the (first) error instead of evaluating the file, so a caller that evaluates
must call :meth:`Loaded.raise_errors` (or check ``refused``) before using ``program``.  The Ruby runtime
(runtime/xpp) does the same through Puppet's own IssueReporter.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any

from puppet_xpp.grammar.check import CheckConfig, check
from puppet_xpp.xpp.compile.current import currency
from puppet_xpp.xpp.result import XppDocument, XppFormatError, read_document, to_diagnostic

log = logging.getLogger("puppet-xpp.runtime")


class ParseRefused(Exception):
    """Puppet would refuse this file: its first error diagnostic (``.diagnostic``)."""

    def __init__(self, diagnostic: Any) -> None:
        self.diagnostic = diagnostic
        super().__init__(diagnostic.message)


@dataclass
class Loaded:
    program: object | None  # grammar.ast Program, or None when the source has no AST
    diagnostics: list[Any] = field(default_factory=list)  # grammar.issues.Diagnostic
    origin: str = "pp"  # "xpp": read from the .xpp; "pp": parsed from the source
    reason: str | None = None  # why the .xpp was not used (None when it was)
    xpp_path: str | None = None

    @property
    def refused(self) -> bool:
        """Puppet would raise instead of evaluating: an error was found (parse or validation)."""
        return any(d.severity == "error" for d in self.diagnostics)

    def raise_errors(self) -> None:
        for d in self.diagnostics:
            if d.severity == "error":
                raise ParseRefused(d)


def xpp_path_for(pp_path: str, env_dir: str) -> str | None:
    """Where `--compile` puts the `.xpp` of `pp_path` in the environment at `env_dir` (None: `--compile`
    writes none for it).  The plan's own answer for one file (:func:`xpp.compile.planning.plan_file`), so
    the main manifest configured outside the environment is found where `--compile` put it
    (``.xpp/modules/environment/manifests/<name>``) and a file `--compile` skips has none."""
    from puppet_xpp.xpp.compile import CompileError, detect_environment
    from puppet_xpp.xpp.compile.planning import plan_file

    try:
        env = detect_environment(env_dir)
    except CompileError:
        return None
    job = plan_file(env, pp_path)
    return job.out if job is not None else None


def load_or_parse(
    pp_path: str,
    *,
    env_dir: str | None = None,
    xpp_path: str | None = None,
    tasks: bool | None = None,
    strict: str | None = None,
    puppet_version: str | None = None,
    logger: logging.Logger | None = None,
) -> Loaded:
    """The parse result of `pp_path`: from its `.xpp` (given, or found in `env_dir`'s tree) when that
    loads, is current and was validated under these settings, else parsed and validated from the source
    (the reason is logged).  ``puppet_version``/``strict`` None: any recorded value is accepted (a parse
    then uses the default level and that level's strict, grammar.levels)."""
    logger = logger or log
    if xpp_path is None and env_dir is not None:
        xpp_path = xpp_path_for(pp_path, env_dir)
    with open(pp_path, "rb") as f:
        raw = f.read()
    source = raw.decode("utf-8", "surrogateescape")
    if tasks is None:  # the one plan rule (xpp.environment)
        from puppet_xpp.xpp.environment import file_context

        tasks = file_context(pp_path).tasks
    reason = _try_reason(xpp_path)
    if reason is None and xpp_path is not None:
        try:
            with open(xpp_path, "rb") as f:
                doc = read_document(f.read())
        except OSError as e:
            reason = f"cannot read {xpp_path}: {e.strerror}"
        except XppFormatError as e:
            reason = f"{xpp_path} is not a valid .xpp: {e}"
        else:
            want = {"puppet_version": puppet_version, "strict": strict, "tasks": tasks}
            reason = _stale_reason(doc, raw, source, want, xpp_path, pp_path)
            if reason is None:
                diags = [to_diagnostic(r) for r in doc.diagnostics]
                return Loaded(doc.program, diags, "xpp", None, xpp_path)
    logger.warning("puppet-xpp: parsing %s instead of loading its .xpp: %s", pp_path, reason)
    return Loaded(*_parse(source, pp_path, env_dir, tasks, strict, puppet_version), "pp", reason, xpp_path)


def _stale_reason(
    doc: XppDocument, raw: bytes, source: str, want: dict[str, Any], xpp_path: str, pp_path: str
) -> str | None:
    """Why the document cannot stand for the source (None: it can), by the one rule of
    :mod:`xpp.compile.current`; a file without a source digest (another writer) is compared by the
    source its Program embeds."""
    state = currency(doc.params, raw, want)
    if state.digest == "differs":
        return f"{xpp_path} is stale: its source digest differs from {pp_path}"
    if state.digest == "missing":
        if doc.program is None:
            return f"{xpp_path} has neither a program nor a source digest: cannot tell whether it is current"
        if doc.program.locator.string != source:
            return f"{xpp_path} is stale: its source differs from {pp_path}"
    if doc.program is None and not doc.diagnostics:
        return f"{xpp_path} holds neither a program nor diagnostics"
    if state.other_settings:
        got = ", ".join(f"{k}={doc.settings[k]} (running: {want[k]})" for k in state.other_settings)
        return f"{xpp_path} was validated under other settings: {got}"
    return None


def _try_reason(xpp_path: str | None) -> str | None:
    if xpp_path is None:
        return "the file lies in no environment's .xpp layout"
    if not os.path.exists(xpp_path):
        return f"no {xpp_path}"
    return None


def _parse(
    source: str,
    pp_path: str,
    env_dir: str | None,
    tasks: bool,
    strict: str | None,
    puppet_version: str | None = None,
) -> tuple[Any, list[Any]]:
    """(program, diagnostics) as Puppet's parser gives them: after a syntax error, no program and only
    the parse's diagnostics."""
    modulepath: tuple[str, ...] = ()
    manifest: str | None = None
    if env_dir is not None:
        from puppet_xpp.xpp.compile import CompileError, detect_environment

        try:
            env = detect_environment(env_dir)
            modulepath, manifest = tuple(env.modulepath), env.manifest
        except CompileError:
            pass
    config = CheckConfig(
        file=pp_path,
        epp=pp_path.endswith(".epp"),
        tasks=tasks,
        level=puppet_version,
        strict=strict,
        modulepath=modulepath,
        manifest=manifest,
    )
    result = check(source, config)
    if not result.syntax_ok:
        return None, list(result.parse.diagnostics)
    return result.program, result.diagnostics
