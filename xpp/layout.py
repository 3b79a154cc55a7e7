"""Where an environment's ``.xpp`` files live, and how they are written.

Layout (shared by ``puppet-xpp --compile`` and the language server's write-on-save)::

    <env>/.xpp/modules/<module>/<path inside the module, .pp/.epp -> .xpp>

A file of the environment's own tree that is not inside a module of its module path (its
``manifests/``, for example) belongs to the reserved module ``environment`` with its path relative
to the environment directory: ``<env>/manifests/site.pp`` -> ``<env>/.xpp/modules/environment/manifests/site.xpp``.

The file name recorded inside the ``.xpp`` (the Locator's ``file``, the diagnostics' ``file``) is the
source path relative to the environment directory, with ``/`` separators (absolute for a file outside
the environment, e.g. in a base module directory).  An ``.xpp`` holds the Program whenever the parser made
one (also when validation found errors) plus every diagnostic; after a syntax error, the diagnostics only.
The envelope records the settings the file was validated under (:mod:`xpp.result`).

Writing is atomic: a temporary file in the target directory, then ``os.replace``.

    target = xpp_target(env_root, modulepath, src_path)   # -> XppTarget(out_path, recorded_name) | None
    data = compile_source(text, target.recorded, ...)      # the .xpp bytes
    write_atomic(target.out_path, data)
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

XPP_DIR = ".xpp"
ENV_MODULE = "environment"


@dataclass(frozen=True)
class XppTarget:
    out_path: str  # absolute path of the .xpp file
    recorded: str  # the source path recorded in the .xpp (relative to the environment, '/' separated)
    module: str  # module name (or 'environment')


def _xpp_name(rel: str) -> str:
    base, ext = os.path.splitext(rel)
    return base + ".xpp" if ext in (".pp", ".epp") else rel + ".xpp"


def xpp_target(env_root: str, modulepath: Iterable[str] | None, src: str) -> XppTarget | None:
    """The .xpp location of source file ``src`` in the environment at ``env_root``.

    None when ``src`` is neither in one of the ``modulepath`` directories nor below ``env_root``."""
    return xpp_targets(env_root, modulepath)(src)


def xpp_targets(env_root: str, modulepath: Iterable[str] | None) -> Callable[[str], XppTarget | None]:
    """:func:`xpp_target` for many files of one environment (the environment's paths prepared once)."""
    env_root = os.path.abspath(env_root)
    root_prefix = env_root + os.sep
    out_base = os.path.join(env_root, XPP_DIR, "modules")
    xpp_prefix = os.path.join(env_root, XPP_DIR) + os.sep
    prefixes = [os.path.abspath(d).rstrip(os.sep) + os.sep for d in modulepath or ()]

    def target(src: str) -> XppTarget | None:
        src = os.path.abspath(src)
        if src.startswith(xpp_prefix):
            return None
        # the deepest module directory holding the file wins: with ``mods:mods/inner``, a file of
        # ``mods/inner/m`` belongs to module ``m``, not to a module ``inner`` of ``mods``
        best: list[str] | None = None
        for prefix in prefixes:
            if src.startswith(prefix):
                parts = src[len(prefix) :].split(os.sep)
                if len(parts) >= 2 and (best is None or len(parts) < len(best)):
                    best = parts
        recorded = src[len(root_prefix) :].replace(os.sep, "/") if src.startswith(root_prefix) else src
        if best is not None:
            module = best[0]
            out = out_base + os.sep + module + os.sep + _xpp_name(os.sep.join(best[1:]))
            return XppTarget(out, recorded, module)
        if src.startswith(root_prefix):
            rel = src[len(root_prefix) :]
            return XppTarget(out_base + os.sep + ENV_MODULE + os.sep + _xpp_name(rel), recorded, ENV_MODULE)
        return None

    return target


def _recorded(env_root: str, src: str) -> str:
    if not src.startswith(env_root + os.sep):  # outside the environment (a base module): absolute
        return src
    rel = os.path.relpath(src, env_root)
    return rel.replace(os.sep, "/")


def write_atomic(
    path: str, data: bytes, mode: int | None = None, owner: tuple[int, int] | None = None
) -> None:
    """Write ``data`` to ``path`` atomically (creating directories); raises OSError on failure.
    ``mode`` (e.g. 0o644) and ``owner`` ((uid, gid)) are applied to the temporary file before the rename."""
    d = os.path.dirname(path) or "."
    if not os.path.isdir(d):  # (a failing mkdir costs more than a stat)
        os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if owner is not None:
                os.fchown(f.fileno(), *owner)
            if mode is not None:
                os.fchmod(f.fileno(), mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def compile_source(
    text: str,
    recorded: str,
    *,
    abs_path: str | None = None,
    epp: bool | None = None,
    tasks: bool = False,
    strict: str = "warning",
    modulepath: Iterable[str] = (),
    manifest: str | None = None,
    fmt: str = "msgpack",
    info: dict[str, Any] | None = None,
    puppet_version: str | None = "7.23",
) -> bytes:
    """Parse + validate ``text`` and return the .xpp document.

    The program's locator and every diagnostic record ``recorded`` as file name; the module-location
    rules are evaluated on ``abs_path`` (the real location) against ``modulepath``/``manifest``.
    ``info`` (a dict), when given, receives the ``diagnostics`` and the ``locator``."""
    from puppet_xpp.grammar.parser import parse
    from puppet_xpp.grammar.validator import validate

    if epp is None:
        epp = recorded.endswith(".epp")
    res = parse(text, recorded, epp=epp, tasks=tasks)
    diags = list(res.diagnostics)
    if res.program is not None:
        vd = validate(
            res.program,
            strict=strict,
            tasks=tasks,
            file=abs_path or recorded,
            modulepath=modulepath,
            manifest=manifest,
            level=puppet_version,
        )
        diags.extend(vd)
    # PRFC-23: the AST (when the parser made one, also if validation failed) plus every diagnostic; a
    # runtime raises the recorded errors as Puppet would.  After a syntax error: the diagnostics only.
    syntax_ok = not any(d.severity == "error" for d in res.diagnostics)
    program = res.program if syntax_ok else None
    if info is not None:
        info["diagnostics"], info["locator"] = diags, res.locator
    settings = {"puppet_version": puppet_version, "strict": strict, "tasks": tasks}
    return write_program(program, diags, res.locator, recorded, fmt=fmt, settings=settings, source=text)


def write_program(
    program: Any,
    diagnostics: Iterable[Any],
    locator: Any,
    recorded: str,
    fmt: str = "msgpack",
    *,
    settings: dict[str, Any] | None = None,
    source: str | bytes | None = None,
) -> bytes:
    """The .xpp bytes of an already parsed program (diagnostics re-labelled with ``recorded``)."""
    from puppet_xpp.xpp.result import write_xpp

    ds: list[Any] = []
    for d in diagnostics:
        if getattr(d, "file", recorded) != recorded:
            d = _relabel(d, recorded)
        ds.append(d)
    return write_xpp(program, ds, fmt, locator=locator, settings=settings, source=source)


def _relabel(d: Any, recorded: str) -> Any:
    import dataclasses

    return dataclasses.replace(d, file=recorded)
