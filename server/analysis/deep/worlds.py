"""The worlds of a command-line run (``--validate --deep``, ``--compile``'s report): one
:class:`World` per environment (module path, environment directory, level), its index built once from
every module on the module path, the module a file was found in (a checkout named ``puppet-<name>/``),
the environment's main manifest and its own ``functions/``, ``types/`` and ``lib/`` (``environment::f``) -- by the one indexer of the language server
(:func:`server.analysis.index.index_file`), each file read once for all the worlds that share it."""

from __future__ import annotations

import os
from collections.abc import Sequence

from puppet_xpp.server.analysis.deep.world import World
from puppet_xpp.server.analysis.index import WorkspaceIndex, index_file, workspace_files
from puppet_xpp.server.analysis.symbols import Sym
from puppet_xpp.xpp.environment import FileContext, infer_module

__all__ = ["WorldCache"]

WorldKey = tuple[tuple[str, ...], str | None, str | None, str | None]


class WorldCache:
    """The worlds of one run, by environment; ``level``: the language level of the run."""

    def __init__(self, level: str | None = None) -> None:
        self.level = level
        self.worlds: dict[WorldKey, World] = {}
        self.indexed: dict[str, list[Sym]] = {}  # path -> its entries (shared by the worlds)

    def add_file(self, path: str, syms: list[Sym]) -> None:
        """Record the index entries of a file the caller parsed already (``--validate --deep`` parses
        each file once for its validation and its entries)."""
        self.indexed[os.path.abspath(path)] = syms

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
        roots = list(modules.values())
        if module_root is not None and module_root not in roots:
            roots.append(module_root)
            inferred = infer_module(os.path.join(module_root, "manifests", "init.pp"))
            if inferred is not None:
                modules.setdefault(inferred.name, module_root)
        if env_root is not None:  # the environment's own functions and types (``environment::f``)
            own = [os.path.join(env_root, d) for d in ("functions", "types", "lib")]
            roots += [d for d in own if os.path.isdir(d)]
            modules.setdefault("environment", env_root)
        files = workspace_files(roots)
        manifest = context.manifest
        if manifest is not None:
            files += workspace_files([manifest]) if os.path.isdir(manifest) else [manifest]
        index = WorkspaceIndex()
        for f in dict.fromkeys(files):
            key = os.path.abspath(f)
            syms = self.indexed.get(key)
            if syms is None:
                syms = self.indexed[key] = index_file(f)
            index.set_file(f, syms)
        return World(
            index,
            level=self.level,
            modulepath=context.modulepath,
            env_root=env_root,
            modules=modules,
            manifest=manifest,
        )

    def worlds_built(self) -> Sequence[World]:
        return list(self.worlds.values())
