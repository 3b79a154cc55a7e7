"""The worlds of a command-line run (``--validate --deep``, ``--compile``'s report): one
:class:`World` per environment (module path, environment directory, level), its index built once from
every module on the module path, the module a file was found in (a checkout named ``puppet-<name>/``),
the environment's main manifest and its own ``functions/``, ``types/`` and ``lib/`` (``environment::f``)
-- the directories Puppet's loaders read (:data:`AUTOLOADED`), not a module's ``examples/`` or ``tests/`` -- by the one indexer of the language server
(:func:`server.analysis.index.index_file`), each file read once for all the worlds that share it."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from puppet_xpp.grammar import ast
from puppet_xpp.server.analysis.deep.world import World
from puppet_xpp.server.analysis.index import WorkspaceIndex, index_file, workspace_files
from puppet_xpp.server.analysis.ruby_index import kind_of_path
from puppet_xpp.server.analysis.symbols import Sym
from puppet_xpp.xpp.environment import FileContext, infer_module

__all__ = ["AUTOLOADED", "AutoloadIndex", "WorldCache", "autoload_name"]

WorldKey = tuple[tuple[str, ...], str | None, str | None, str | None]


# the directories of a module (and of an environment) Puppet's loaders find definitions in: what lies
# elsewhere (examples/, tests/, files/...) is never loaded, so it defines nothing
AUTOLOADED = (
    "manifests",
    "functions",
    "types",
    "plans",
    os.path.join("lib", "puppet", "functions"),
    os.path.join("lib", "puppet", "parser", "functions"),
    os.path.join("lib", "puppet", "type"),
    os.path.join("lib", "facter"),
)


def autoload_name(path: str) -> str | None:
    """The name Puppet's autoloader finds a Ruby API file by (``lib/puppet/functions/a/b.rb``: ``a::b``;
    ``lib/puppet/parser/functions/f.rb``: ``f``; ``lib/puppet/type/t.rb``: ``t``); None for a fact file
    (named by its ``Facter.add`` call) or any other."""
    p = path.replace(os.sep, "/")
    for marker in ("/lib/puppet/functions/", "/lib/puppet/parser/functions/", "/lib/puppet/type/"):
        i = p.rfind(marker)
        if i >= 0 and p.endswith(".rb"):
            return p[i + len(marker) : -3].replace("/", "::").lower()
    return None


class AutoloadIndex:
    """The index of a command-line world: manifests indexed at once, a Ruby function's or type's file
    read when its name is first asked for -- by the autoloader's rule, the only place Puppet looks
    for it -- and the fact files when a fact is first asked for (their names are in their code).
    ``all()`` (did-you-mean) reads everything.  ``indexed`` is the run's entries by absolute path,
    shared by its worlds."""

    def __init__(self, indexed: dict[str, list[Sym]]) -> None:
        self.index = WorkspaceIndex()
        self.indexed = indexed
        self.by_name: dict[str, list[str]] = {}  # autoload name -> Ruby files not read yet
        self.facts: list[str] = []  # fact files not read yet
        self.rest: list[str] = []  # other API files not read yet (e.g. a misplaced function)

    def add(self, path: str) -> None:
        kind = kind_of_path(path) if path.endswith(".rb") else None
        if kind is None or os.path.abspath(path) in self.indexed:
            self._read(path)
        elif kind == "fact":
            self.facts.append(path)
        else:
            name = autoload_name(path)
            if name is None:
                self.rest.append(path)
            else:
                self.by_name.setdefault(name, []).append(path)

    def _read(self, path: str) -> None:
        key = os.path.abspath(path)
        syms = self.indexed.get(key)
        if syms is None:
            syms = self.indexed[key] = index_file(path)
        self.index.set_file(path, syms)

    def lookup(self, name: str, kinds: Iterable[str] | None = None) -> list[Sym]:
        key = name.lower().lstrip(":")
        for path in self.by_name.pop(key, ()):
            self._read(path)
        wanted = tuple(kinds) if kinds is not None else ()
        if "fact" in wanted or not wanted:
            while self.facts:
                self._read(self.facts.pop())
        return self.index.lookup(key, kinds)

    def all(self) -> list[Sym]:
        for paths in list(self.by_name.values()):
            for path in paths:
                self._read(path)
        self.by_name.clear()
        for path in self.facts + self.rest:
            self._read(path)
        self.facts, self.rest = [], []
        return self.index.all()


class WorldCache:
    """The worlds of one run, by environment; ``level``: the language level of the run."""

    def __init__(self, level: str | None = None) -> None:
        self.level = level
        self.worlds: dict[WorldKey, World] = {}
        self.indexed: dict[str, list[Sym]] = {}  # path -> its entries (shared by the worlds)
        self.programs: dict[
            str, ast.Program
        ] = {}  # path -> its program (an inherited class's scope is read there)

    def add_file(self, path: str, syms: list[Sym], program: ast.Program | None = None) -> None:
        """Record the index entries (and the program) of a file the caller parsed already
        (``--validate --deep`` parses each file once for its validation and its entries)."""
        self.indexed[os.path.abspath(path)] = syms
        if program is not None:
            self.programs[os.path.abspath(path)] = program

    def world_for(self, context: FileContext) -> World:
        """The world of the file ``context`` describes (xpp.environment.file_context)."""
        env_root = context.env.root if context.env is not None else None
        module_root = None
        if context.path is not None and context.env is None:
            inferred = infer_module(context.path)
            module_root = inferred.root if inferred is not None else None
        key: WorldKey = (context.modulepath, env_root, module_root, context.manifest)
        world = self.worlds.get(key)
        if world is None:
            world = self.worlds[key] = self._build(context, env_root, module_root)
        return world

    def _build(self, context: FileContext, env_root: str | None, module_root: str | None) -> World:
        from puppet_xpp.server.analysis.modules import modules_on_path

        modules = {name: m.directory for name, m in modules_on_path(context.modulepath).items()}
        homes = list(modules.values())
        if module_root is not None and module_root not in homes:
            homes.append(module_root)
            inferred = infer_module(os.path.join(module_root, "manifests", "init.pp"))
            if inferred is not None:
                modules.setdefault(inferred.name, module_root)
        if env_root is not None:  # the environment's own functions and types (``environment::f``)
            homes.append(env_root)
            modules.setdefault("environment", env_root)
        roots = [
            os.path.join(home, sub)
            for home in homes
            for sub in AUTOLOADED
            if (sub != "manifests" or home != env_root) and os.path.isdir(os.path.join(home, sub))
        ]
        files = workspace_files(roots)
        manifest = context.manifest
        if manifest is not None:
            files += workspace_files([manifest]) if os.path.isdir(manifest) else [manifest]
        index = AutoloadIndex(self.indexed)
        for f in dict.fromkeys(files):
            index.add(f)
        return World(
            index,
            level=self.level,
            modulepath=context.modulepath,
            env_root=env_root,
            modules=modules,
            manifest=manifest,
            # a file in no environment, module or module path given: what exists is not known
            complete=bool(context.modulepath) or module_root is not None or env_root is not None,
            suggest=False,  # (no quick fixes on a command line: every Ruby file would be read for them)
            memoize=True,  # (the run's index does not change)
            programs=self.programs,
        )

    def worlds_built(self) -> Sequence[World]:
        return list(self.worlds.values())
