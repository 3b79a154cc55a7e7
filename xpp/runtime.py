"""PRFC-23's runtime rule: load a manifest's `.xpp` when it loads, otherwise say why and parse the `.pp`.

    res = load_or_parse("/etc/puppetlabs/code/environments/production/modules/apache/manifests/init.pp",
                        env_dir="/etc/puppetlabs/code/environments/production")
    res.program, res.diagnostics, res.origin ("xpp" | "pp"), res.reason (why the .xpp was not used)

The `.xpp` is found in the environment's tree exactly where `--compile` writes it.  Beyond the PRFC
(which planned no freshness check) the source text embedded in the `.xpp` must equal the `.pp` on disk:
a stale `.xpp` would otherwise serve old code.  Anything wrong with the `.xpp` (missing, unreadable,
malformed, stale) is logged and the `.pp` is parsed and validated instead; nothing raises for it.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

from puppet_xpp.xpp.pcore import XppFormatError
from puppet_xpp.xpp.result import read_xpp, to_diagnostic

log = logging.getLogger("puppet-xpp.runtime")


@dataclass
class Loaded:
    program: object | None  # grammar.ast Program, or None when the source has no AST
    diagnostics: list = field(default_factory=list)  # grammar.issues.Diagnostic
    origin: str = "pp"  # "xpp": read from the .xpp; "pp": parsed from the source
    reason: str | None = None  # why the .xpp was not used (None when it was)
    xpp_path: str | None = None


def xpp_path_for(pp_path: str, env_dir: str) -> str | None:
    """Where `--compile` puts the `.xpp` of `pp_path` in the environment at `env_dir` (None: outside it)."""
    from puppet_xpp.xpp import layout
    from puppet_xpp.xpp.compile import CompileError, detect_environment

    try:
        env = detect_environment(env_dir)
    except CompileError:
        return None
    t = layout.xpp_target(env.root, env.modulepath, pp_path)
    return t.out_path if t is not None else None


def load_or_parse(
    pp_path: str,
    *,
    env_dir: str | None = None,
    xpp_path: str | None = None,
    tasks: bool | None = None,
    strict: str = "warning",
    logger=None,
) -> Loaded:
    """The parse result of `pp_path`: from its `.xpp` (given, or found in `env_dir`'s tree) when that
    loads and is current, else parsed and validated from the source (the reason is logged)."""
    logger = logger or log
    if xpp_path is None and env_dir is not None:
        xpp_path = xpp_path_for(pp_path, env_dir)
    with open(pp_path, "rb") as f:
        source = f.read().decode("utf-8", "surrogateescape")
    reason = _try_reason(xpp_path)
    if reason is None:
        try:
            with open(xpp_path, "rb") as f:
                program, records = read_xpp(f.read())
        except OSError as e:
            reason = f"cannot read {xpp_path}: {e.strerror}"
        except XppFormatError as e:
            reason = f"{xpp_path} is not a valid .xpp: {e}"
        else:
            if program is not None and program.locator.string != source:
                reason = f"{xpp_path} is stale: its source differs from {pp_path}"
            elif program is None and not records:
                reason = f"{xpp_path} holds neither a program nor diagnostics"
            else:
                return Loaded(program, [to_diagnostic(r) for r in records], "xpp", None, xpp_path)
    logger.warning("puppet-xpp: parsing %s instead of loading its .xpp: %s", pp_path, reason)
    return Loaded(*_parse(source, pp_path, env_dir, tasks, strict), "pp", reason, xpp_path)


def _try_reason(xpp_path):
    if xpp_path is None:
        return "the file lies in no environment's .xpp layout"
    if not os.path.exists(xpp_path):
        return f"no {xpp_path}"
    return None


def _parse(source, pp_path, env_dir, tasks, strict):
    from puppet_xpp.grammar.parser import parse
    from puppet_xpp.grammar.validator import validate

    modulepath, manifest = (), None
    if env_dir is not None:
        from puppet_xpp.xpp.compile import CompileError, detect_environment

        try:
            env = detect_environment(env_dir)
            modulepath, manifest = env.modulepath, env.manifest
        except CompileError:
            pass
    if tasks is None:
        tasks = f"{os.sep}plans{os.sep}" in os.path.abspath(pp_path)
    res = parse(source, pp_path, tasks=tasks)
    diags = list(res.diagnostics)
    if res.program is not None:
        diags += validate(
            res.program, strict=strict, tasks=tasks, file=pp_path, modulepath=modulepath, manifest=manifest
        )
    return res.program, diags
