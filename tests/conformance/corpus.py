"""The real-world corpus: Puppet manifests and templates shipped by Debian's puppet-module-* packages.

``corpus_files("pp")`` / ``corpus_files("epp")`` list the files under ``/usr/share/puppet/modules``
(module directories there are symlinks, which are followed). Each file appears once even when reachable
through several paths (e.g. a module's spec fixtures linking back to the module); the path kept is the
one a sorted top-down walk reaches first, in its ``/usr/share/puppet/modules/<module>/...`` form, so that
module-relative checks see the module path. The list is empty when the corpus is not installed.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

CORPUS_ROOT = Path(os.environ.get("PUPPET_XPP_CORPUS", "/usr/share/puppet/modules"))


@cache
def _scan(root: str) -> dict[str, tuple[str, ...]]:
    by_real: dict[str, str] = {}
    seen_dirs: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        real_dir = os.path.realpath(dirpath)
        if real_dir in seen_dirs:  # symlink cycle or a directory reached twice
            dirnames[:] = []
            continue
        seen_dirs.add(real_dir)
        dirnames.sort()
        for name in filenames:
            if name.endswith((".pp", ".epp")):
                path = os.path.join(dirpath, name)
                if not os.path.isfile(path):
                    continue
                real = os.path.realpath(path)
                if real not in by_real or path < by_real[real]:
                    by_real[real] = path
    paths = sorted(by_real.values())
    return {
        "pp": tuple(p for p in paths if p.endswith(".pp")),
        "epp": tuple(p for p in paths if p.endswith(".epp")),
    }


def corpus_files(kind: str = "pp") -> list[str]:
    """Sorted paths of the corpus files of one kind ('pp' or 'epp'); [] when the corpus is absent."""
    if kind not in ("pp", "epp"):
        raise ValueError(f"kind must be 'pp' or 'epp', not {kind!r}")
    if not CORPUS_ROOT.is_dir():
        return []
    return list(_scan(str(CORPUS_ROOT))[kind])


def corpus_modulepath() -> list[str]:
    """The module path under which the corpus files are module files ([] when absent)."""
    return [str(CORPUS_ROOT)] if CORPUS_ROOT.is_dir() else []
