"""What the deep checks read of a module's or an environment's own files, cached by the files' stat so
that a language server sees their changes: can a Hiera layer be read statically, and which modules a
module's metadata.json depends on.

Can a Hiera layer be read statically?  Only when its ``hiera.yaml`` (version 5) names YAML or JSON
data files and nothing else: a ``lookup_key``/``data_hash`` function other than ``yaml_data`` or
``json_data``, a ``data_dig`` backend, a version 3/4 file or a module's data function
(``<module>::data``) can set any key, so a key missing from the files proves nothing."""

from __future__ import annotations

import functools
import os
import re

from puppet_xpp.server.analysis.hiera import Reader, yaml_data
from puppet_xpp.xpp.sources import read_text

__all__ = ["module_dependencies", "stamp", "statically_readable"]

_FILE_BACKENDS = frozenset({"yaml_data", "json_data"})
# an environment.conf setting of the environment's data provider (what Puppet reads without hiera.yaml)
_DATA_PROVIDER = re.compile(r"^[ \t]*environment_data_provider[ \t]*=", re.MULTILINE)


def stamp(*paths: str) -> tuple[tuple[int, int] | None, ...]:
    """(mtime_ns, size) of each path (None: absent): the key a cached reading is valid for."""
    out: list[tuple[int, int] | None] = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            out.append(None)
        else:
            out.append((st.st_mtime_ns, st.st_size))
    return tuple(out)


def statically_readable(root: str, module: str | None = None, read: Reader | None = None) -> bool:
    """Is the Hiera layer rooted at ``root`` (an environment or a module directory) made of data files
    only?  (:func:`_readable`, cached while its files are unchanged; ``read``: the editor's buffers --
    a ``hiera.yaml`` open in one is judged by its text, uncached.)"""
    files = [os.path.join(root, "hiera.yaml")]
    if module is not None:
        files += [
            os.path.join(root, "functions", "data.pp"),
            os.path.join(root, "lib", "puppet", "functions", module, "data.rb"),
        ]
    else:
        files.append(os.path.join(root, "environment.conf"))
    if read is not None and read(files[0]) is not None:
        return _readable(root, module, (), read)
    return _cached_readable(root, module, stamp(*files))


@functools.lru_cache(maxsize=512)
def _cached_readable(root: str, module: str | None, _stamp: tuple[tuple[int, int] | None, ...]) -> bool:
    return _readable(root, module, _stamp)


def _readable(
    root: str, module: str | None, _stamp: tuple[tuple[int, int] | None, ...], read: Reader | None = None
) -> bool:
    """Is the Hiera layer rooted at ``root`` (an environment or a module directory) made of data files
    only?  A root without ``hiera.yaml`` is: it has no data (Puppet 7.23's and OpenVox 8's lookup
    adapter gives an environment or a module without one no data provider), unless a module defines
    its data function or an environment's ``environment.conf`` names a data provider (the deprecated
    ``environment_data_provider``: a function, or Hiera's defaults)."""
    if module is not None:
        for f in (
            os.path.join(root, "functions", "data.pp"),
            os.path.join(root, "lib", "puppet", "functions", module, "data.rb"),
        ):
            if os.path.exists(f):
                return False
    path = os.path.join(root, "hiera.yaml")
    if (read is None or read(path) is None) and not os.path.exists(path):
        if module is None:
            conf = read_text(os.path.join(root, "environment.conf"), errors="replace") or ""
            return _DATA_PROVIDER.search(conf) is None
        return True
    conf = yaml_data(path, read)  # (None: unreadable or not YAML: Puppet fails on it, we prove nothing)
    if not isinstance(conf, dict) or conf.get("version") != 5:
        return False
    given = conf.get("defaults")
    defaults: dict[str, object] = given if isinstance(given, dict) else {}
    levels: list[dict[str, object]] = [defaults]
    levels += [lv for lv in conf.get("hierarchy") or [] if isinstance(lv, dict)]
    for level in levels:
        if "lookup_key" in level or "data_dig" in level:
            return False
        backend = level.get("data_hash")
        if backend is not None and backend not in _FILE_BACKENDS:
            return False
        if "mapped_paths" in level:
            return False
    return True


def module_dependencies(root: str) -> tuple[str, ...]:
    """The short names of the modules a module's metadata.json depends on (``puppetlabs/stdlib``:
    ``stdlib``); () when it has none or cannot be read (cached while the file is unchanged)."""
    return _dependencies(root, stamp(os.path.join(root, "metadata.json")))


@functools.lru_cache(maxsize=512)
def _dependencies(root: str, _stamp: tuple[tuple[int, int] | None, ...]) -> tuple[str, ...]:
    import json

    text = read_text(os.path.join(root, "metadata.json"), errors="replace")
    try:
        meta = json.loads(text) if text is not None else None
    except ValueError:
        return ()
    deps = meta.get("dependencies") if isinstance(meta, dict) else None
    out: list[str] = []
    for dep in deps if isinstance(deps, list) else ():
        name = dep.get("name") if isinstance(dep, dict) else None
        if isinstance(name, str) and name:
            out.append(name.replace("/", "-").split("-")[-1].lower())
    return tuple(out)
