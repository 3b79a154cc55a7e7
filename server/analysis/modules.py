"""The modules a file sees: the modules on its environment's module path, by name (no pygls here).

Which directories form a file's module path is the environment model's rule (:mod:`xpp.environment`:
``file_context`` -- the file's environment, else the module inferred from its location, plus the
editor's or project's module path); this module only lists what lies on that path, as Puppet's
``Puppet::Node::Environment#modules`` does: each module-path directory in order, each entry of it that is
a directory with a valid module name (``environment.MODULE_NAME``); the first module of a name wins.

A module whose metadata.json lacks a key Puppet needs to load it (``LOAD_REQUIRED_KEYS``) is listed with
that :attr:`ModuleInfo.problem`: Puppet drops it (and still looks no further for its name), and an editor
should say so rather than pretend it is not there.

For each module it reads the installed ``metadata.json`` (through :func:`xpp.sources.read_source`, so a
FIFO or a huge file is never read): its ``version`` and its full ``name`` (``puppetlabs-stdlib``: author,
then module name).  A dependency of a metadata.json or a Puppetfile names a module by that full name;
:func:`find_module` finds it the way Puppet's ``module_by_forge_name`` does (the module of that name on
the path, which is the dependency only when its metadata's full name is the same).

Reads are kept per ``metadata.json`` by modification time and size, so hover and diagnostics on every
keystroke re-read nothing that has not changed.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass

from puppet_xpp.server.analysis.workspace import Settings
from puppet_xpp.server.analysis.workspace import file_context as workspace_file_context
from puppet_xpp.xpp import environment
from puppet_xpp.xpp.sources import read_source

__all__ = [
    "ModuleInfo",
    "METADATA_FILE",
    "split_full_name",
    "modulepath_for",
    "modules_on_path",
    "find_module",
    "find_by_forge_name",
    "module_info",
]

METADATA_FILE = "metadata.json"
_SEPARATOR = re.compile(r"[-/]")


@dataclass(frozen=True)
class ModuleInfo:
    """One module on a module path."""

    name: str  # the module's name on the path: its directory's name (Puppet's rule)
    directory: str  # absolute path of the module's directory
    version: str | None  # metadata.json's ``version`` (None: no metadata.json, or no string there)
    full_name: (
        str | None
    )  # metadata.json's ``name`` as written (``puppetlabs-stdlib`` or ``puppetlabs/stdlib``)
    # why Puppet does not load this module (a key its metadata.json lacks...), None when it does: such a
    # module still holds its name on the path (Puppet looks no further), but gives no classes or version
    problem: str | None = None

    @property
    def author(self) -> str | None:
        """The author part of the full name (``puppetlabs``), None without a namespaced full name."""
        parts = split_full_name(self.full_name) if self.full_name else None
        return parts[0] if parts else None

    @property
    def forge_name(self) -> str | None:
        """The full name with a dash (``puppetlabs-stdlib``), as the Forge and dependencies spell it."""
        parts = split_full_name(self.full_name) if self.full_name else None
        return f"{parts[0]}-{parts[1]}" if parts else None

    @property
    def metadata_file(self) -> str | None:
        """The module's ``metadata.json`` when it has one."""
        path = os.path.join(self.directory, METADATA_FILE)
        return path if os.path.isfile(path) else None

    @property
    def entry_file(self) -> str:
        """Where a jump to the module lands: its metadata.json, else ``manifests/init.pp``, else the
        directory itself."""
        init = os.path.join(self.directory, "manifests", "init.pp")
        return self.metadata_file or (init if os.path.isfile(init) else self.directory)


def split_full_name(full: str) -> tuple[str, str] | None:
    """``puppetlabs-stdlib`` / ``puppetlabs/stdlib`` -> (author, module name): split at the first ``-``
    or ``/`` as Puppet splits a metadata name; None when there is no separator."""
    parts = _SEPARATOR.split(full, maxsplit=1)
    return (parts[0], parts[1]) if len(parts) == 2 else None


def modulepath_for(path: str | None, settings: Settings | None = None) -> tuple[str, ...]:
    """The module path of the file at ``path`` by the environment model (with the editor's ``settings``
    when given: its module path is added, as for the file's other analyses)."""
    if settings is not None:
        return workspace_file_context(path, settings).modulepath
    return environment.file_context(path).modulepath


# ------------------------------------------------------------------------------------------------ metadata

_lock = threading.Lock()
_Fields = tuple[str | None, str | None, str | None]  # version, full name, problem
_metadata_cache: dict[str, tuple[tuple[int, int], _Fields]] = {}  # metadata.json -> (mtime_ns, size), fields
_CACHE_LIMIT = 4096
# the keys without which Puppet refuses to load a module whose metadata.json it could parse
# (Puppet::Module#load_metadata raises MissingMetadata; Puppet::Node::Environment#modules drops the module)
LOAD_REQUIRED_KEYS = ("source", "author", "version", "license", "dependencies")


def _metadata_fields(module_dir: str) -> _Fields:
    """(version, full name, problem) of a module's metadata.json.  No metadata.json, or one that cannot
    be read or parsed: no version and no problem (Puppet then loads the module without metadata, with a
    warning for the unparsable file).  ``problem`` says why Puppet refuses to load the module."""
    path = os.path.join(module_dir, METADATA_FILE)
    try:
        st = os.stat(path)
    except OSError:
        return None, None, None
    key = (st.st_mtime_ns, st.st_size)
    with _lock:
        hit = _metadata_cache.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    fields: _Fields = (None, None, None)
    src = read_source(path)
    if src.ok and src.text is not None:
        try:
            data = json.loads(src.text)
        except ValueError:
            data = None
        fields = _fields_of(data)
    with _lock:
        if len(_metadata_cache) >= _CACHE_LIMIT:
            _metadata_cache.clear()
        _metadata_cache[path] = (key, fields)
    return fields


def _fields_of(data: object) -> _Fields:
    """The fields of a parsed metadata.json (see :func:`_metadata_fields`)."""
    if data is None or data == {} or data == []:
        return None, None, None
    if not isinstance(data, dict):
        return None, None, "its metadata.json is not a JSON object"
    version, full = data.get("version"), data.get("name")
    problem = None
    for name in LOAD_REQUIRED_KEYS:
        if data.get(name) is None:
            problem = f"its metadata.json has no '{name}'"
            break
    else:
        deps = data["dependencies"]
        if not isinstance(deps, list):
            problem = "the 'dependencies' of its metadata.json are not an array"
        elif not all(isinstance(d, dict) for d in deps):
            problem = "a dependency in its metadata.json is not an object"
    return (
        version if isinstance(version, str) else None,
        full if isinstance(full, str) else None,
        problem,
    )


def module_info(name: str, directory: str) -> ModuleInfo:
    """The module ``name`` installed at ``directory`` (its metadata read, see :func:`_metadata_fields`)."""
    version, full, problem = _metadata_fields(directory)
    return ModuleInfo(name, os.path.abspath(directory), version, full, problem)


# ------------------------------------------------------------------------------------------------ lookup


def _is_module(parent: str, name: str) -> bool:
    """Puppet's ``is_module_directory?``: a directory whose name is a valid module name."""
    return bool(environment.MODULE_NAME.match(name)) and os.path.isdir(os.path.join(parent, name))


def modules_on_path(modulepath: Iterable[str]) -> dict[str, ModuleInfo]:
    """Every module on the module path, by name, in Puppet's order (path order, then the directory's
    entries sorted); the first module of a name wins."""
    out: dict[str, ModuleInfo] = {}
    for parent in modulepath:
        try:
            names = sorted(os.listdir(parent))
        except OSError:
            continue
        for name in names:
            if name not in out and _is_module(parent, name):
                out[name] = module_info(name, os.path.join(parent, name))
    return out


def find_module(modulepath: Iterable[str], name: str) -> ModuleInfo | None:
    """The module a name designates on the module path: a module name (``stdlib``) or a full name
    (``puppetlabs-stdlib``, ``puppetlabs/stdlib``: the module of its module-name part -- check
    :attr:`ModuleInfo.forge_name` to know whether it is the same author's).  None when absent."""
    parts = split_full_name(name)
    short = parts[1] if parts else name
    if not environment.MODULE_NAME.match(short):
        return None
    for parent in modulepath:
        if _is_module(parent, short):
            return module_info(short, os.path.join(parent, short))
    return None


def find_by_forge_name(modulepath: Iterable[str], full_name: str) -> ModuleInfo | None:
    """The module a dependency names (``puppetlabs-stdlib``), as Puppet's ``module_by_forge_name``
    finds it: the module of that module name on the path, only when its own metadata's full name is
    the same (``-`` and ``/`` alike); else None."""
    found = find_module(modulepath, full_name)
    if found is None or found.full_name is None:
        return None
    return found if found.full_name.replace("/", "-") == full_name.replace("/", "-") else None
