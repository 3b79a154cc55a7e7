"""Where an environment's ``.xpp`` files live.

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

Writing is :mod:`xpp.compile.writes`' business.

    target = xpp_target(env_root, modulepath, src_path)   # -> XppTarget(out_path, recorded, module) | None
    data, rows = document.compile_text(text, config, fmt)  # the .xpp bytes (xpp.compile.document)
    writes.write_atomic(target.out_path, data)             # or AnchoredTree (xpp.compile.writes)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

XPP_DIR = ".xpp"
ENV_MODULE = "environment"


@dataclass(frozen=True)
class XppTarget:
    out_path: str  # absolute path of the .xpp file
    recorded: str  # the source path recorded in the .xpp (relative to the environment, '/' separated)
    module: str  # module name (or 'environment')


def xpp_name(rel: str) -> str:
    base, ext = os.path.splitext(rel)
    return base + ".xpp" if ext in (".pp", ".epp") else rel + ".xpp"


def xpp_target(env_root: str, modulepath: Iterable[str] | None, src: str) -> XppTarget | None:
    """The .xpp location of source file ``src`` in the environment at ``env_root``.

    None when ``src`` is neither in one of the ``modulepath`` directories nor below ``env_root``."""
    return xpp_targets(env_root, modulepath)(src)


def xpp_targets(
    env_root: str, modulepath: Iterable[str] | None, *, normalized: bool = False
) -> Callable[[str], XppTarget | None]:
    """:func:`xpp_target` for many files of one environment (the environment's paths prepared once).
    ``normalized``: every ``src`` given is absolute and normalized already (a walk's paths: its top made
    absolute, then entry names joined), so it is not made so again (a sixth of ``--compile``'s plan);
    the ``.xpp`` path made from it is normalized too."""
    env_root = os.path.abspath(env_root)
    root_prefix = env_root + os.sep
    out_base = os.path.join(env_root, XPP_DIR, "modules")
    xpp_prefix = os.path.join(env_root, XPP_DIR) + os.sep
    prefixes = [os.path.abspath(d).rstrip(os.sep) + os.sep for d in modulepath or ()]

    def target(src: str) -> XppTarget | None:
        if not normalized:
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
            out = out_base + os.sep + module + os.sep + xpp_name(os.sep.join(best[1:]))
            return XppTarget(out, recorded, module)
        if src.startswith(root_prefix):
            rel = src[len(root_prefix) :]
            return XppTarget(out_base + os.sep + ENV_MODULE + os.sep + xpp_name(rel), recorded, ENV_MODULE)
        return None

    return target


def recorded_name(env_root: str, src: str) -> str:
    """The name recorded for ``src`` when no module holds it: relative to the environment, else absolute."""
    if not src.startswith(env_root + os.sep):  # outside the environment (a base module): absolute
        return src
    rel = os.path.relpath(src, env_root)
    return rel.replace(os.sep, "/")
