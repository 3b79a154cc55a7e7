"""The module-location rules: the namespace a file of a module may define names in (Puppet's rule,
reproduced exactly), for ILLEGAL_DEFINITION_LOCATION and ILLEGAL_TOP_CONSTRUCT_LOCATION.  The language
server's rename (``server/analysis/rename.py``) asks the same rule where a renamed module's files go.
"""

from __future__ import annotations

import os
from typing import Any

NO_NAMESPACE = "<no namespace>"
BAD_MODULE_FILE = "<bad module file>"
_MODULE_DIRS = frozenset({"manifests", "functions", "types", "plans"})


def _expand(path: str) -> str:
    return os.path.abspath(os.path.expanduser(path))


def namespace_for_file(file: Any, modulepath: Any = (), manifest: Any = None) -> str:
    """The namespace a module file may define names in (Puppet's rule, reproduced exactly).

    Returns NO_NAMESPACE when no location rule applies (no file, not a ``.pp`` file, the environment's
    manifest, outside every module-path directory), BAD_MODULE_FILE for a file of a module that is not in
    ``manifests``/``functions``/``types``/``plans``, else ``module[::dir...][::file]`` (downcased; a
    module's top ``init.pp`` gives just ``module``).
    """
    if not file:
        return NO_NAMESPACE
    if os.path.splitext(file)[1] != ".pp":
        return NO_NAMESPACE
    path = _expand(file)
    if manifest:
        m = _expand(manifest)
        if path == m or path.startswith(m):
            return NO_NAMESPACE
    rel = None
    for d in modulepath or ():
        parent = os.path.normpath(_expand(str(d))) + os.sep
        if path.startswith(parent):
            rel = path[len(parent) :]
            break
    if rel is None:
        return NO_NAMESPACE
    comps = rel.lower().split(os.sep)
    while comps and comps[-1] == "":
        comps.pop()
    if len(comps) < 2 or comps[1] not in _MODULE_DIRS:
        return BAD_MODULE_FILE
    names = [comps[0]] + comps[2:-1]
    filename = comps[-1]
    if not (len(comps) == 3 and filename == "init.pp"):
        names.append(filename[:-3])
    return "::".join(names)
